#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libFuzzer runs of the tests/fuzz targets, built with clang-16 + ASan + UBSan into build-fuzz/.
#   tools/fuzz.sh list                          the targets
#   tools/fuzz.sh TARGET SECONDS [ARGS...]      builds and fuzzes TARGET for SECONDS from its seed corpus
#                                               (tests/fuzz/corpus/TARGET); new inputs go to
#                                               build-fuzz/corpus/TARGET, crashes to build-fuzz/artifacts/TARGET/
#   tools/fuzz.sh minimize TARGET FILE [SECONDS] shrinks a crash input (-minimize_crash=1), prints the result's path
#   tools/fuzz.sh repro TARGET FILE...           runs the inputs once (what crashes and where)
# Runs in fork mode (-fork=1 -ignore_crashes=1 ...) so that one crash does not end the run: every crash, OOM and
# timeout is saved, and the summary counts them. ARGS go to libFuzzer (e.g. -seed=1).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$root/build-fuzz

targets=(model torch_zip pickle safetensors npy image labels onnx)
# Longest input per target: a little above the largest seed, so mutations explore structure, not size.
declare -A max_len=([model]=32768 [torch_zip]=16384 [pickle]=8192 [safetensors]=8192 [npy]=4096 [image]=32768
                    [labels]=8192 [onnx]=32768)

usage() {
  sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 1
}

[ $# -ge 1 ] || usage
if [ "$1" = list ]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi

mode=run
if [ "$1" = minimize ] || [ "$1" = repro ]; then
  mode=$1
  shift
fi
[ $# -ge 2 ] || usage
target=$1
shift
[ -n "${max_len[$target]:-}" ] || { echo "fuzz: unknown target '$target' (tools/fuzz.sh list)" >&2; exit 1; }

tools/setup.sh --fuzz >/dev/null
if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
    -DVITRT_BUILD_TESTS=OFF -DVITRT_FUZZ=ON -DVITRT_SANITIZE=address,undefined "${launcher[@]}" >/dev/null
fi
# VITRT_FUZZ_NO_BUILD=1 runs the binary as built (e.g. while another build runs in build-fuzz/).
if [ -z "${VITRT_FUZZ_NO_BUILD:-}" ]; then
  cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target "fuzz_$target" >/dev/null
fi
bin=$build/bin/fuzz_$target
artifacts=$build/artifacts/$target
mkdir -p "$artifacts"
# UBSan findings must stop the input like ASan's; leaks count too (LeakSanitizer, where ptrace allows it).
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:silence_unsigned_overflow=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
[ -x /usr/lib/llvm-16/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
common=(-rss_limit_mb=2048 -timeout=10 -max_len="${max_len[$target]}")

case $mode in
  repro)
    exec "$bin" "${common[@]}" -runs=1 "$@"
    ;;
  minimize)
    file=$1
    seconds=${2:-60}
    out=$artifacts/minimized-$(basename "$file")
    "$bin" "${common[@]}" -minimize_crash=1 -max_total_time="$seconds" -exact_artifact_path="$out" "$file" \
      >"$artifacts/minimize.log" 2>&1 || true
    [ -f "$out" ] || { echo "fuzz: minimize made no smaller input (log: $artifacts/minimize.log)" >&2; exit 1; }
    echo "$out ($(stat -c %s "$out") bytes, from $(stat -c %s "$file"))"
    exit 0
    ;;
esac

seconds=$1
shift
corpus=$build/corpus/$target
mkdir -p "$corpus"
log=$build/fuzz-$target.log
before=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \
  -o -name 'leak-*' \) | wc -l)
echo "fuzz: $target for ${seconds}s (log: $log)"
touch "$log.start"
status=0
"$bin" "${common[@]}" -max_total_time="$seconds" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 -print_funcs=0 "$@" "$corpus" "$root/tests/fuzz/corpus/$target" \
  >"$log" 2>&1 || status=$?

# Fork mode's status lines: "#EXECS: cov: C ft: F corp: ... oom/timeout/crash: O/T/C time: ...".
last=$(grep -E '^#[0-9]+: cov: ' "$log" | tail -n 1 || true)
[ -n "$last" ] || last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -n 1 || true)
execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")
cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$last")
ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
after=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \
  -o -name 'leak-*' \) | wc -l)
echo "fuzz: $target: executions ${execs:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus $(ls "$corpus" | wc -l) files"
echo "fuzz: $target: $((after - before)) new crash/oom/timeout/leak inputs in $artifacts (libFuzzer exit $status)"
find "$artifacts" -maxdepth 1 -type f -newer "$log.start" ! -name 'minimize*' | sort | sed 's/^/  /'
exit 0
