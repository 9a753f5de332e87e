#!/usr/bin/env bash
# Runs on the GPU machine, over scripts/stage_device.sh's binaries: the time
# from process start to the first sum's result, with the driver's JIT cache
# disabled (CUDA_CACHE_DISABLE=1), as a new machine or container sees it.
# Each program is started ROUNDS times (default 5), the programs interleaved
# round by round; the wall time of each whole process (start to exit) is
# taken with `date +%s%N` around it. Programs:
#   cub          benches/cub_first_sum.cu (nvcc -arch=native: machine code for this GPU)
#   reduce       examples/first_sum.rs, its shipped machine code
#   reduce_ptx90 the same, REDUCE_PTX_ARCH=sm_90: the driver compiles the module's PTX
#                (what a GPU without shipped machine code gets)
#   reduce_ptx70 the same with the sm_70 PTX
#   quickstart   examples/quickstart.rs (100M f32, four reductions, CPU checks): once
# Writes $OUT/cold-start.csv (program,round,seconds) and $OUT/cold-start.md (medians).
set -uo pipefail
bin=.device-bin
[[ -d $bin ]] || tar -xJf .device-bin.tar.xz || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out"
export CUDA_CACHE_DISABLE=1
nvcc -O3 -arch=native -std=c++17 -o /tmp/cub_first_sum "$bin/cub_first_sum.cu" || exit 1
timed() { # program round command...
  local name=$1 round=$2; shift 2
  local start end
  start=$(date +%s%N)
  "$@" > /tmp/cold-start-output.txt 2>&1 || { echo "$name failed:"; cat /tmp/cold-start-output.txt; }
  end=$(date +%s%N)
  echo "$name,$round,$(python3 -c "print(f'{($end - $start) / 1e9:.3f}')")" >> "$out/cold-start.csv"
}
echo "program,round,seconds" > "$out/cold-start.csv"
for round in $(seq "${ROUNDS:-5}"); do
  timed cub "$round" /tmp/cub_first_sum
  timed reduce "$round" "$bin/first_sum"
  timed reduce_ptx90 "$round" env REDUCE_PTX_ARCH=sm_90 "$bin/first_sum"
  timed reduce_ptx70 "$round" env REDUCE_PTX_ARCH=sm_70 "$bin/first_sum"
done
timed quickstart 1 "$bin/quickstart"
python3 - "$out/cold-start.csv" > "$out/cold-start.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
names = list(dict.fromkeys(r["program"] for r in rows))
cub = statistics.median(float(r["seconds"]) for r in rows if r["program"] == "cub")
print("| program | runs | median s | min s | max s | × CUB |")
print("|---|---|---|---|---|---|")
for name in names:
    times = [float(r["seconds"]) for r in rows if r["program"] == name]
    m = statistics.median(times)
    print(f"| {name} | {len(times)} | {m:.3f} | {min(times):.3f} | {max(times):.3f} | {m / cub:.2f} |")
PY
cat "$out/cold-start.md"
