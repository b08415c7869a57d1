#!/bin/bash
# bf16 against fp32 as process CPU time, for a loaded machine where wall times are noise: per round, alternating,
# `vitrt bench --precision P` with 1 and with R+1 timed runs (their difference cancels model loading and session
# creation; OMP_WAIT_POLICY=passive so that waiting threads do not count), for fp32 and bf16 of NEW and, when
# given, bf16 of OLD (another build, for before/after). Prints medians over the rounds in ms per run.
#   bench/precision_cpu_time.sh MODEL.vitrt BATCH THREADS ROUNDS R NEW_BUILD [OLD_BUILD]
# e.g. bench/precision_cpu_time.sh build/bench-work/soft_tiny/model.vitrt 8 1 5 4 build-h build-main
# (/usr/bin/time counts in 10 ms steps: choose R so that R runs take a second or more).
set -euo pipefail
model=$1 batch=$2 threads=$3 rounds=$4 repeat=$5 new=$6 old=${7:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpu_ms() {  # BUILD PRECISION RUNS -> user+sys ms of the whole process
  OMP_WAIT_POLICY=passive LD_LIBRARY_PATH="$1/lib" /usr/bin/time -o "$tmp/t" -f "%U %S" "$1/bin/vitrt" bench \
    -m "$model" --batch "$batch" -t "$threads" -r "$3" --warmup 1 --precision "$2" >/dev/null 2>&1
  awk '{printf "%.0f", ($1 + $2) * 1000}' "$tmp/t"
}
variants="new:fp32 new:bf16"
[ -n "$old" ] && variants="$variants old:bf16"
for i in $(seq "$rounds"); do
  for v in $variants; do
    build=$new
    [ "${v%%:*}" = old ] && build=$old
    one=$(cpu_ms "$build" "${v#*:}" 1)
    many=$(cpu_ms "$build" "${v#*:}" $((repeat + 1)))
    echo "$v $(((many - one) / repeat))" >>"$tmp/runs"
  done
done
median() { grep "^$1 " "$tmp/runs" | awk '{print $2}' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
f=$(median new:fp32) b=$(median new:bf16)
line="$(basename "$(dirname "$model")") b$batch t$threads, CPU ms per run (median of $rounds): fp32 $f, bf16 $b ($(awk -v f="$f" -v b="$b" 'BEGIN{printf "%.2f", f / b}')x)"
if [ -n "$old" ]; then
  o=$(median old:bf16)
  line="$line, old bf16 $o ($(awk -v f="$f" -v o="$o" 'BEGIN{printf "%.2f", f / o}')x)"
fi
echo "$line"
