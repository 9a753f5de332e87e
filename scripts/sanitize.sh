#!/usr/bin/env bash
# Runs on the GPU machine, over binaries built by scripts/stage_device.sh:
# compute-sanitizer on the kernels, with the tests' emulator halves turned off
# (REDUCE_TEST_BACKENDS=gpu; the sanitizer checks GPU code only).
#   sweep:    tests/kernel_sweep.rs (every kernel, edge sizes) under memcheck,
#             racecheck, synccheck and initcheck;
#   suite:    every GPU test binary under memcheck;
#   examples: the quickstart and graph_replay examples under memcheck.
# Writes $OUT/sanitize.md (one row per run) and $OUT/sanitize-logs.tar.gz.
# Usage (device tool): bash scripts/sanitize.sh [sweep] [suite] [examples]
set -uo pipefail
bin=.device-bin
# stage_device.sh packs the binaries; the device tool carries the tarball.
[[ -d $bin ]] || tar -xJf .device-bin.tar.xz || exit 1
out=${OUT:-/tmp/out}
logs=$(mktemp -d)
mkdir -p "$out"
what=${*:-sweep suite examples}
export REDUCE_TEST_BACKENDS=gpu
status=0
echo "| program | tool | exit | sanitizer summary | tests |" > "$out/sanitize.md"
echo "|---|---|---|---|---|" >> "$out/sanitize.md"

# run NAME TOOL COMMAND...: one sanitizer run, its log and its summary row.
run() {
  local name=$1 tool=$2
  shift 2
  local log="$logs/$name-$tool.log"
  timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 99 "$@" > "$log" 2>&1
  local rc=$?
  local summary tests
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1 | sed 's/^========= //')
  # A binary whose tests all skip their GPU work never calls CUDA: nothing to check.
  if grep -q "terminated before first instrumented API call" "$log"; then
    summary="no CUDA call (its tests skipped their GPU work)"
    rc=0
  fi
  [[ $rc -ne 0 ]] && status=1
  tests=$(grep -E "^test result" "$log" | sed 's/test result: //; s/; 0 ignored.*//' | paste -sd' ' -)
  echo "| $name | $tool | $rc | ${summary:-none (timed out?)} | ${tests:--} |" | tee -a "$out/sanitize.md"
}

if [[ $what == *sweep* ]]; then
  for tool in memcheck racecheck synccheck initcheck; do
    run kernel_sweep "$tool" "$bin"/tests/kernel_sweep-* --test-threads=1
  done
fi
if [[ $what == *suite* ]]; then
  for t in "$bin"/tests/*; do
    name=$(basename "$t" | sed 's/-[0-9a-f]*$//')
    # The sweep has its own rows; the fault tests and the unit tests run no GPU
    # code; the out-of-memory test's failed allocations are deliberate (memcheck
    # reports each failing API call).
    [[ $name == kernel_sweep || $name == emulator_faults || $name == reduce || $name == reduce_out_of_memory ]] && continue
    run "$name" memcheck "$t" --test-threads=1
  done
fi
if [[ $what == *examples* ]]; then
  run quickstart memcheck "$bin/quickstart"
  run graph_replay memcheck "$bin/graph_replay"
fi
tar -czf "$out/sanitize-logs.tar.gz" -C "$logs" .
exit $status
