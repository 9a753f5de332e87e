#!/usr/bin/env bash
# Runs on the GPU machine, over binaries built by scripts/stage_device.sh:
# compute-sanitizer on the kernels, with the tests' emulator halves turned off
# (REDUCE_TEST_BACKENDS=gpu; the sanitizer checks GPU code only).
#   sweep:    tests/suite/kernel_sweep.rs (every kernel, edge sizes) under the tools;
#   suite:    every other GPU test under the tools: each module of the suite
#             binary (tests/suite/, a program here) and each other test binary;
#   examples: the quickstart and graph_replay examples under memcheck.
# The tools: SANITIZE_TOOLS (default: memcheck racecheck synccheck initcheck);
# the programs: SANITIZE_PROGRAMS (default: all, e.g. "axes statistics"; the
# suite binary's modules and the other test binaries by name).
# Each test runs in a process of its own (one test thread: racecheck loses
# track of launches made from several threads at once), SANITIZE_JOBS
# (default 12) at a time, each bounded by SANITIZE_TIMEOUT seconds (default
# 300); the tests that measure the GPU's free memory run afterwards, alone.
# Writes $OUT/sanitize.md (a row per binary and tool), $OUT/sanitize-runs.md
# (a row per run; $OUT/runs-so-far.md as they end) and $OUT/sanitize-logs.tar.gz.
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
export REDUCE_TEST_BACKENDS=gpu logs out SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-300}

# run PROGRAM TOOL TEST COMMAND...: one sanitizer run of COMMAND (TEST of
# PROGRAM, or `-` for a whole program); its log, and its row in a .row file.
run() {
  local program=$1 tool=$2 test=$3
  shift 3
  local log="$logs/$program--$test--$tool.log" flags=()
  # These fail driver calls on purpose (allocations past the free memory;
  # queries about freed memory and a destroyed context), or NCCL does inside
  # its initialisation (cudaFuncGetAttributes on kernels its wheel lacks for
  # this GPU: error 209, 12 per run): the tools would report those calls, so
  # only kernel accesses are checked there.
  [[ $program == contexts || $program == reduce_out_of_memory || $program == multi_gpu ]] \
    && flags=(--report-api-errors no)
  local start=$SECONDS
  timeout "$SANITIZE_TIMEOUT" compute-sanitizer --tool "$tool" "${flags[@]}" --error-exitcode 99 "$@" > "$log" 2>&1
  local rc=$?
  local summary
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1 | sed 's/^========= //')
  # A test that skips its GPU work never calls CUDA: nothing to check.
  if grep -q "terminated before first instrumented API call" "$log"; then
    summary="no CUDA call (GPU work skipped)"
    rc=0
  fi
  [[ $rc -eq 124 ]] && summary="timed out after ${SANITIZE_TIMEOUT}s"
  # Also to $out as each run ends, so that a call cut short keeps its rows.
  echo "| $program | $test | $tool | $rc | ${summary:-none} | $((SECONDS - start)) |" \
    | tee "$logs/$program--$test--$tool.row" >> "$out/runs-so-far.md"
}
export -f run

# runs PROGRAM EXECUTABLE [MODULE]: a line of `run`'s arguments per test and
# tool (not the emulator-only tests: they make no CUDA call for minutes, and
# the sanitizer gives up on them); with MODULE, only the tests MODULE::*
# (the suite binary's tests of one of its modules).
runs() {
  "$2" --list --format terse 2>/dev/null | sed -n 's/: test$//p' | grep -v on_the_emulator \
    | grep "^${3:+$3::}" | while read -r test; do
    for tool in $tools; do echo "$1" "$tool" "$test" "$2" --exact "$test" --test-threads=1; done
  done
}

# The tests that measure the GPU's free memory must have it to themselves.
alone="scope reduce_out_of_memory"
# Most tests are modules of one binary, the suite (tests/suite/main.rs).
suite=$(ls "$bin"/tests/suite-*)
{
  [[ $what == *sweep* ]] && runs kernel_sweep "$suite" kernel_sweep
  if [[ $what == *suite* ]]; then
    # The suite's modules, then the other test binaries.
    modules=$("$suite" --list --format terse 2>/dev/null | sed -n 's/::.*: test$//p' | sort -u | tr '\n' ' ')
    for name in $modules $(ls "$bin"/tests | grep -v '^suite-' | sed 's/-[0-9a-f]*$//'); do
      # The sweep has its own rows; the fault tests, the argument-space test
      # and the unit tests run no GPU code.
      [[ " kernel_sweep emulator_faults argument_space reduce $alone " == *" $name "* ]] && continue
      # SANITIZE_PROGRAMS="axes statistics": only those.
      [[ -n ${SANITIZE_PROGRAMS:-} && " $SANITIZE_PROGRAMS " != *" $name "* ]] && continue
      if [[ " $modules " == *" "$name" "* ]]; then
        runs "$name" "$suite" "$name"
      else
        runs "$name" "$bin"/tests/"$name"-*
      fi
    done
  fi
  if [[ $what == *examples* ]]; then
    echo quickstart memcheck - "$bin/quickstart"
    echo graph_replay memcheck - "$bin/graph_replay"
  fi
} | xargs -P "${SANITIZE_JOBS:-12}" -L 1 bash -c 'run "$@"' _
if [[ $what == *suite* ]]; then
  for name in $alone; do
    [[ -n ${SANITIZE_PROGRAMS:-} && " $SANITIZE_PROGRAMS " != *" $name "* ]] || runs "$name" "$bin"/tests/"$name"-*
  done | xargs -r -P 1 -L 1 bash -c 'run "$@"' _
fi

sort "$logs"/*.row > "$logs/runs"
{
  echo "| program | test | tool | exit | sanitizer summary | seconds |"
  echo "|---|---|---|---:|---|---:|"
  cat "$logs/runs"
} > "$out/sanitize-runs.md"
# A row per program and tool: its runs, and the ones not clean (exit not 0).
{
  echo "| program | tool | runs | not clean | sanitizer summaries (runs) | seconds |"
  echo "|---|---|---:|---:|---|---:|"
  awk -F' [|] ' '{ key = substr($1, 3) " | " $3; runs[key]++; if ($4 != 0) bad[key]++;
                   sum[key, $5]++; seconds[key] += $6; if (!((key, $5) in seen)) { seen[key, $5]; kinds[key] = kinds[key] ";" $5 } }
       END { for (k in runs) { split(substr(kinds[k], 2), ks, ";"); text = "";
               for (i in ks) text = text (text ? "; " : "") ks[i] " (" sum[k, ks[i]] ")";
               printf "| %s | %d | %d | %s | %d |\n", k, runs[k], bad[k], text, seconds[k] } }' "$logs/runs" | sort
} | tee "$out/sanitize.md"
tar -czf "$out/sanitize-logs.tar.gz" -C "$logs" .
# Every run must be clean.
! cut -d'|' -f5 "$logs/runs" | grep -qv '^ 0 $'
