#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there) over binaries built here by
# scripts/stage_device.sh into .device-bin/: the GPU test suite, the
# quickstart, CUB's reference benchmark and ours, in one call.
# Usage (device tool): bash scripts/device_run.sh [tests] [quickstart] [bench]
set -uo pipefail
bin=.device-bin
out=${OUT:-/tmp/out}
mkdir -p "$out"
what=${*:-tests quickstart bench}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
status=0
if [[ $what == *tests* ]]; then
  # Full output (seeds, failure messages) in tests.log; the summary on stdout.
  for t in "$bin"/tests/*; do
    echo "== $(basename "$t")"
    "$t" --test-threads=8 --show-output 2>&1 || status=1
  done > "$out/tests.log" 2>&1
  # (Not "panicked": the emulator's fault tests panic in kernels on purpose.)
  grep -E "^== |test result|skipped" "$out/tests.log"
  grep -q "FAILED" "$out/tests.log" && status=1
fi
if [[ $what == *quickstart* ]]; then
  echo "== quickstart"; "$bin/quickstart" 2>&1 | tee "$out/quickstart.log" || status=1
fi
if [[ $what == *bench* ]]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/cub_bench "$bin/cub_reduce.cu" || exit 1
  /tmp/cub_bench > "$out/cub.csv" || status=1
  "$bin/bench" ${BENCH_TYPES:-} > "$out/reduce.csv" || status=1
  python3 scripts/compare.py "$out/cub.csv" "$out/reduce.csv" | tee "$out/compare.md"
  grep -E "^(copy|memcpy)" "$out/cub.csv"
fi
exit $status
