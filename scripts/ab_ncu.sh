#!/usr/bin/env bash
# Runs on the GPU machine: Nsight Compute on one launch of a segmented
# kernel of a variant staged by scripts/ab_stage.sh, at the larger size
# (`--launch-skip 40`: past the 64 MiB runs and the warm-up, for a layout
# named at both sizes, `segments_mean_*`; a `rows_RxC` layout is one size
# only: SKIP=5). KERNEL_REGEX must name the kernel the host picks
# (`segmented_…` or `segmented_balanced_…`): where none matched, ncu's
# report lists the kernels that ran.
# Usage: [SKIP=N] bash scripts/ab_ncu.sh sass|memory NAME LAYOUT KERNEL_REGEX [TYPE]
#   sass:   the default sections and the per-instruction SASS table
#           ($OUT/n/sass-NAME-LAYOUT.csv; read it here with scripts/ncu_sass.py);
#   memory: memory sections and L1/L2/DRAM sector counters.
# TYPE is `bench`'s argument (default `segmented`). Writes $OUT/n.tgz.
set -uo pipefail
mode=${1:?usage: ab_ncu.sh sass|memory NAME LAYOUT KERNEL_REGEX [TYPE]}
name=${2:?} layout=${3:?} kernel=${4:?} type=${5:-segmented}
[[ -d .device-ab ]] || tar -xJf .device-ab.tgz || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out/n"
ncu=$(ls /usr/local/cuda/bin/ncu 2>/dev/null || command -v ncu)
export CUDA_CACHE_MAXSIZE=4294967296
run=(-k "regex:$kernel" --launch-skip "${SKIP:-40}" --launch-count 1)
report="$out/n/ncu-$name-$layout.txt"
if [[ $mode == sass ]]; then
  REDUCE_BENCH_LAYOUTS=$layout "$ncu" --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section InstructionStats --section SourceCounters "${run[@]}" \
    -o "/tmp/rep-$name-$layout" ".device-ab/bench-$name" "$type" > "$report" 2>&1
  "$ncu" --import "/tmp/rep-$name-$layout.ncu-rep" --page details >> "$report" 2>&1
  "$ncu" --import "/tmp/rep-$name-$layout.ncu-rep" --page source --csv --print-source sass \
    > "$out/n/sass-$name-$layout.csv" 2>&1
else
  REDUCE_BENCH_LAYOUTS=$layout "$ncu" --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --metrics \
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_requests_srcunit_tex_op_read.sum,\
dram__sectors_read.sum,dram__sectors_write.sum \
    "${run[@]}" ".device-ab/bench-$name" "$type" > "$report" 2>&1
fi
(cd "$out" && tar -czf n.tgz n && rm -rf n)
