#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command: installs what is missing, builds into build/, runs every test (ctest).
#   tools/test.sh                 Release build in build/, every test
#   tools/test.sh --sanitize [CTEST_ARGS...]
#                                 the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer (and
#                                 LeakSanitizer) in build-sanitize/; any report fails its test. CTEST_ARGS (e.g.
#                                 -R 'unit|hostile') select tests. With VITRT_FIXTURES_FROM=build (a tree whose
#                                 Python reference fixtures are complete, e.g. right after tools/test.sh) those
#                                 fixtures are reused instead of made again: they are data from
#                                 /usr/bin/python3, the same whatever the build flags.
#   tools/test.sh --sanitize-subset [CTEST_ARGS...]
#                                 the same build, a quicker subset of areas (CI runs the whole suite): unit,
#                                 converter, planner, ops, image, hostile, hostile_cli, capi, capi_threads, cli,
#                                 fuzz_regressions (VITRT_SANITIZE_TESTS=REGEX picks others)
#   tools/test.sh --tsan [CTEST_ARGS...]
#                                 ThreadSanitizer build (clang-16, libomp + Archer) in build-tsan/ of what the C
#                                 API tests need, then those tests: capi (tests/capi) and capi_threads (one model,
#                                 a session per thread); VITRT_FIXTURES_FROM as for --sanitize
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
jobs=$(nproc 2>/dev/null || echo 2)
tools/setup.sh

if [ -z "$mode" ]; then
  tools/build.sh -DVITRT_BUILD_TESTS=ON
  cd build
  ctest --output-on-failure -j"$jobs" --timeout 1800
  exit 0
fi

shift
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# With VITRT_FIXTURES_FROM=TREE, $build/fixtures is a link to TREE's Python reference fixtures and ctest is told not
# to make them again (reuse=(...) goes on its command line): neither as setup of the tests that need them nor as
# tests of their own (-E), which would rewrite TREE's files.
reuse=()
reuse_fixtures() {
  if [ -n "${VITRT_FIXTURES_FROM:-}" ]; then
    rm -rf $build/fixtures
    ln -s "$(cd "$VITRT_FIXTURES_FROM" && pwd)/fixtures" $build/fixtures
    reuse=(--fixture-exclude-setup '.*' -E '^fixture_')
  fi
}
# Sanitizer reports end the process with a non-zero status (the test fails) and print a symbolised stack.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
case $mode in
  --sanitize | --sanitize-subset)
    build=build-sanitize
    cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DVITRT_BUILD_TESTS=ON -DVITRT_SANITIZE=address,undefined \
      "${launcher[@]}"
    select=()
    if [ "$mode" = --sanitize-subset ]; then
      cmake --build $build -j"$jobs" --target vitrt_unit_tests vitrt_converter_tests vitrt_planner_tests \
        vitrt_ops_tests vitrt_image_tests vitrt_hostile_tests vitrt_capi_example vitrt_capi_info vitrt_capi_threads \
        vitrt_fuzz_replay vitrt-convert vitrt_cli
      # A quicker check than the whole suite (which CI runs): x86, models, onnx and package are left out.
      # hostile_cli drops its ulimit -v caps when VITRT_SANITIZED is set.
      areas='unit|converter|planner|ops|image|hostile|hostile_cli|capi|capi_threads|cli|fuzz_regressions'
      select=(-R "${VITRT_SANITIZE_TESTS:-^($areas)$}")
    else
      cmake --build $build -j"$jobs"
    fi
    # Python fixtures run the uninstrumented /usr/bin/python3: the sanitizer runtime is not preloaded there.
    # alloc_dealloc_mismatch=0: GCC 12 at -O3 turns the nothrow-new'd buffer of std::stable_sort
    # (std::get_temporary_buffer) into a free(), which ASan reports as a mismatch in every sort; clang builds
    # (tools/fuzz.sh) keep the check. VITRT_SANITIZED tells test scripts that address-space caps (ulimit -v) cannot
    # work here: ASan reserves terabytes of shadow memory at start-up.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:alloc_dealloc_mismatch=0
    export VITRT_SANITIZED=address,undefined
    reuse_fixtures
    cd $build
    ctest --output-on-failure -j"$jobs" --timeout 1800 "${reuse[@]}" "${select[@]}" "$@"
    ;;
  --tsan)
    # clang-16 with LLVM's OpenMP runtime (libomp), whose Archer tool (libarcher.so, loaded through
    # OMP_TOOL_LIBRARIES) tells TSan about OpenMP's barriers and joins. Without it (or with GCC's libgomp, which
    # is not instrumented) every parallel region is reported: a worker's read in softmax_attention.cpp races
    # with the caller's next write in gemm_linear.cpp, though the region's closing barrier orders them.
    # ignore_noninstrumented_modules=1 is what Archer asks for: accesses made inside libomp itself (its own
    # mutexes and task queues, not instrumented) are not reported; every access from vitrt's code still is.
    # No suppression file: with Archer nothing is left to suppress (12 threads x 400 runs, clean).
    # oneDNN (built on libgomp) is left out of this build for the same reason.
    tools/setup.sh --fuzz >/dev/null
    build=build-tsan
    cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
      -DVITRT_BUILD_TESTS=ON -DVITRT_ONEDNN=OFF -DVITRT_SANITIZE=thread "${launcher[@]}"
    cmake --build $build -j"$jobs" --target vitrt-convert vitrt_capi_example vitrt_capi_info vitrt_capi_threads
    export OMP_TOOL_LIBRARIES=/usr/lib/llvm-16/lib/libarcher.so
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1
    reuse_fixtures
    cd $build
    ctest --output-on-failure -j"$jobs" --timeout 1800 "${reuse[@]}" -R '^capi(_threads)?$' "$@"
    ;;
  *)
    echo "usage: tools/test.sh [--sanitize | --sanitize-subset | --tsan] [CTEST_ARGS...]" >&2
    exit 1
    ;;
esac
