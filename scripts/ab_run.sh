#!/usr/bin/env bash
# Runs on the GPU machine: a same-call A/B of `bench` variants staged by
# scripts/ab_stage.sh (carry .device-ab.tgz). Each round runs every variant
# once, in the order given, pinned to one CPU core; meanwhile `ptxas -v`
# reports the registers and spills of the variants named in PTX on other
# cores. Writes $OUT/r.tgz: r/bench-NAME-seg-ROUND.csv and r/ptxas-NAME.log.
# Usage: [TYPES="segmented segmented_f64"] [LAYOUTS=a,b] [PTX="NAME..."] \
#          bash scripts/ab_run.sh ROUNDS NAME...
# TYPES are `bench`'s arguments (default: the segmented layouts of f32 and
# f64); LAYOUTS sets REDUCE_BENCH_LAYOUTS. Tables, here:
#   python3 scripts/ab_segmented.py DIR/r bench-BASE bench-NEW
set -uo pipefail
rounds=${1:?usage: ab_run.sh ROUNDS NAME...}
shift
[[ -d .device-ab ]] || tar -xJf .device-ab.tgz || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out/r"
# The driver's JIT cache, large enough for every variant's PTX.
export CUDA_CACHE_MAXSIZE=4294967296
[[ -n ${LAYOUTS:-} ]] && export REDUCE_BENCH_LAYOUTS=$LAYOUTS
for name in ${PTX:-}; do
  taskset -c 8-15 /usr/local/cuda/bin/ptxas -arch=sm_90 -v ".device-ab/$name.ptx" -o /dev/null \
    > "$out/r/ptxas-$name.log" 2>&1 &
done
for round in $(seq 1 "$rounds"); do
  for name in "$@"; do
    taskset -c 5 ".device-ab/bench-$name" ${TYPES:-segmented segmented_f64} \
      > "$out/r/bench-$name-seg-$round.csv" 2>&1
  done
done
wait
(cd "$out" && tar -czf r.tgz r && rm -rf r)
