#!/usr/bin/env bash
# Runs on the GPU machine, over binaries built by scripts/stage_device.sh:
# compute-sanitizer on the kernels, with the tests' emulator halves turned off
# (REDUCE_TEST_BACKENDS=gpu; the sanitizer checks GPU code only).
#   sweep:    tests/kernel_sweep.rs (every kernel, edge sizes) under the tools;
#   suite:    every other GPU test binary under the tools;
#   examples: the quickstart and graph_replay examples under memcheck.
# The tools: SANITIZE_TOOLS (default: memcheck racecheck synccheck initcheck).
# SANITIZE_JOBS runs (default 4) share the GPU at a time; SANITIZE_TIMEOUT
# seconds (default 300) bound each.
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
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
export REDUCE_TEST_BACKENDS=gpu logs SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-300}

# run NAME TOOL COMMAND...: one sanitizer run; its log, and its summary row
# in $logs/NAME-TOOL.row.
run() {
  local name=$1 tool=$2
  shift 2
  local log="$logs/$name-$tool.log" flags=()
  # These binaries fail driver calls on purpose (allocations past the free
  # memory; queries about freed memory and a destroyed context), which the
  # tools would report as errors: only kernel accesses are checked there.
  [[ $name == contexts || $name == reduce_out_of_memory ]] && flags=(--report-api-errors no)
  local start=$SECONDS
  timeout "$SANITIZE_TIMEOUT" compute-sanitizer --tool "$tool" "${flags[@]}" --error-exitcode 99 "$@" > "$log" 2>&1
  local rc=$?
  local summary tests
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1 | sed 's/^========= //')
  # A binary whose tests all skip their GPU work never calls CUDA: nothing to check.
  if grep -q "terminated before first instrumented API call" "$log"; then
    summary="no CUDA call (its tests skipped their GPU work)"
    rc=0
  fi
  tests=$(grep -E "^test result" "$log" | sed 's/test result: //; s/; 0 ignored.*//' | paste -sd' ' -)
  echo "| $name | $tool | $rc | ${summary:-none (timed out?)} | ${tests:--} | $((SECONDS - start)) |" \
    | tee "$logs/$name-$tool.row"
}
export -f run

{
  if [[ $what == *sweep* ]]; then
    for tool in $tools; do echo kernel_sweep "$tool" "$bin"/tests/kernel_sweep-* --test-threads=1; done
  fi
  if [[ $what == *suite* ]]; then
    for t in "$bin"/tests/*; do
      name=$(basename "$t" | sed 's/-[0-9a-f]*$//')
      # The sweep has its own rows; the fault tests, the argument-space test
      # and the unit tests run no GPU code.
      [[ $name == kernel_sweep || $name == emulator_faults || $name == argument_space || $name == reduce ]] && continue
      for tool in $tools; do echo "$name" "$tool" "$t" --test-threads=4; done
    done
  fi
  if [[ $what == *examples* ]]; then
    echo quickstart memcheck "$bin/quickstart"
    echo graph_replay memcheck "$bin/graph_replay"
  fi
} | xargs -P "${SANITIZE_JOBS:-4}" -L 1 bash -c 'run "$@"' _

echo "| program | tool | exit | sanitizer summary | tests | seconds |" > "$out/sanitize.md"
echo "|---|---|---|---|---|---:|" >> "$out/sanitize.md"
sort "$logs"/*.row >> "$out/sanitize.md"
tar -czf "$out/sanitize-logs.tar.gz" -C "$logs" .
# Every row's exit column must be 0.
! cut -d'|' -f4 "$out/sanitize.md" | tail -n +3 | grep -qv '^ 0 $'
