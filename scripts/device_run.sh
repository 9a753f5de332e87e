#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there) over binaries built here by
# scripts/stage_device.sh into .device-bin/: the GPU test suite, the
# quickstart, CUB's reference benchmark and ours, in one call.
# Usage (device tool): bash scripts/device_run.sh [tests] [quickstart] [bench] [axes] [statistics] [multi] [candle]
# `candle` runs integrations/candle's program (scripts/candle.sh builds it).
# `multi` runs the multi-GPU examples (tests include the multi-GPU tests).
# TEST_BINARIES (a glob, e.g. 'multi_gpu-*') picks test binaries.
set -uo pipefail
bin=.device-bin
# stage_device.sh packs the binaries; the device tool carries the tarball.
[[ -d $bin ]] || tar -xJf .device-bin.tar.xz || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out"
what=${*:-tests quickstart bench}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
status=0
# NCCL for reduce::multi: the image has pip's wheel (libnccl.so.2, which
# the library opens; the link named libnccl.so serves older builds). NVLink multicast stays off: it can put
# the host's shared GPUs out of service (the device tool's KINDS.md).
export NCCL_NVLS_ENABLE=0
nccl_lib=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0] + "/lib")' 2>/dev/null)
if [[ -f $nccl_lib/libnccl.so.2 ]]; then
  mkdir -p /tmp/nccl-link && ln -sf "$nccl_lib/libnccl.so.2" /tmp/nccl-link/libnccl.so
  export LD_LIBRARY_PATH=/tmp/nccl-link${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export REDUCE_TEST_REQUIRE_NCCL=1
fi
if [[ $what == *tests* ]]; then
  # Full output (seeds, failure messages) in tests.log; the summary on stdout.
  for t in "$bin"/tests/${TEST_BINARIES:-*}; do
    echo "== $(basename "$t")"
    "$t" --test-threads=8 --show-output 2>&1 || status=1
  done > "$out/tests.log" 2>&1
  # (Not "panicked": the emulator's fault tests panic in kernels on purpose.)
  grep -E "^== |test result|skipped" "$out/tests.log"
  grep -q "FAILED" "$out/tests.log" && status=1
fi
if [[ $what == *candle* ]]; then
  # candle's program links cuBLAS, cuRAND, NVRTC and the runtime (cudarc's
  # dynamic-linking): the image's PyTorch wheels hold them.
  cuda_libs=$(dirname "$(find / -name 'libcublas.so.13' -not -path '/proc/*' 2>/dev/null | head -1)")
  curand_lib=$(dirname "$(find / -name 'libcurand.so.10' -not -path '/proc/*' 2>/dev/null | head -1)")
  echo "== candle (libraries from $cuda_libs, $curand_lib)"
  LD_LIBRARY_PATH="$cuda_libs:$curand_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/candle" 2>&1 \
    | tee "$out/candle.log" || status=1
fi
if [[ $what == *quickstart* ]]; then
  echo "== quickstart"; "$bin/quickstart" 2>&1 | tee "$out/quickstart.log" || status=1
  echo "== cudarc example"; "$bin/cudarc" 2>&1 | tee -a "$out/quickstart.log" || status=1
fi
if [[ $what == *bench* ]]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/cub_bench "$bin/cub_reduce.cu" || exit 1
  # The same code for i64 and u64, which cub_reduce.cu does not print.
  nvcc -O3 -arch=sm_90 -std=c++17 -I"$bin" -o /tmp/cub_bench_64 "$bin/cub_reduce_64.cu" || exit 1
  { /tmp/cub_bench && /tmp/cub_bench_64; } > "$out/cub.csv" || status=1
  "$bin/bench" ${BENCH_TYPES:-} > "$out/reduce.csv" || status=1
  python3 scripts/compare.py "$out/cub.csv" "$out/reduce.csv" | tee "$out/compare.md"
  grep -E "^(copy|memcpy)" "$out/cub.csv"
fi
if [[ $what == *axes* ]]; then
  # Axis reductions (issue #32), ours and PyTorch's, in this one call.
  "$bin/bench" axes axes_f64 > "$out/reduce_axes.csv" || status=1
  python3 scripts/torch_axes.py f32 f64 > "$out/torch_axes.csv" || status=1
  python3 scripts/compare_axes.py "$out/reduce_axes.csv" "$out/torch_axes.csv" | tee "$out/axes.md"
fi
if [[ $what == *statistics* ]]; then
  # Statistics (issue #32) beside our sum and PyTorch's, in this one call.
  "$bin/bench" statistics statistics_f64 > "$out/reduce_statistics.csv" || status=1
  python3 scripts/torch_axes.py statistics statistics_f64 > "$out/torch_statistics.csv" || status=1
  python3 scripts/compare_axes.py "$out/reduce_statistics.csv" "$out/torch_statistics.csv" | tee "$out/statistics.md"
fi
if [[ $what == *multi* ]]; then
  echo "== multi_process"; "$bin/multi_process" 2>&1 | tee "$out/multi_process.log" || status=1
  echo "== multi_gpu"; "$bin/multi_gpu" ${MULTI_GIB:-4} 20 2>&1 | tee "$out/multi_gpu.md" || status=1
fi
exit $status
