#!/usr/bin/env bash
# Builds integrations/candle (candle-core 0.11.1 with `cuda`, as published,
# beside the library in one build) and copies the program into
# .device-bin/candle for the GPU machine (scripts/device_run.sh candle runs it).
#
# candle's `cuda` feature compiles its kernels with nvcc and has cudarc link
# libcuda, cuBLAS, cuRAND, NVRTC and the runtime (`dynamic-linking`), so this
# installs CUDA 13.0's compiler and those libraries from PyPI into
# .candle-cuda/ (git-ignored; about 1.5 GB) and lays them out as a toolkit
# there. The first build takes about 25 minutes on two cores; it is not part
# of the test command (CI builds tests/downstream's `linked` configuration,
# which catches a conflict of cudarc's modes in a minute).
source "$(dirname "$0")/env.sh"
cuda="$REPO_ROOT/.candle-cuda"
if [[ ! -x $cuda/root/bin/nvcc ]]; then
  echo "candle: installing CUDA 13.0's nvcc and libraries from PyPI into $cuda" >&2
  python3 -m venv "$cuda/venv"
  "$cuda/venv/bin/pip" install -q "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-crt==13.0.*" "nvidia-nvvm==13.0.*" \
    "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-cccl==13.0.*" "nvidia-cublas==13.0.*" "nvidia-cuda-nvrtc==13.0.*" \
    "nvidia-curand==10.4.0.*"
  site=$(echo "$cuda"/venv/lib/python3*/site-packages/nvidia/cu13)
  mkdir -p "$cuda/root/lib64"
  for dir in bin include nvvm; do ln -sfn "$site/$dir" "$cuda/root/$dir"; done
  # The unversioned names the linker looks for.
  for lib in cudart.so.13 nvrtc.so.13 curand.so.10 cublasLt.so.13 cublas.so.13; do
    ln -sf "$site/lib/lib$lib" "$cuda/root/lib64/lib$lib"
    ln -sf "$site/lib/lib$lib" "$cuda/root/lib64/lib${lib%%.so*}.so"
  done
fi
STABLE=${REDUCE_STABLE_TOOLCHAIN:-stable}
(cd integrations/candle && rustup run "$STABLE" cargo fetch --locked)
if [[ ! -e $cuda/root/lib64/libcuda.so ]]; then
  # A link stub of the driver API that cudarc's CUDA 13.0 bindings name (the
  # toolkit's stubs/libcuda.so is not on PyPI, and env.sh's Debian libcuda
  # is a 12.2 driver's, without 13.0's symbols such as cuEventElapsedTime_v2):
  # one empty function per name, soname libcuda.so.1, so the program runs
  # with the driver's own library.
  mkdir -p "$cuda/stub"
  grep -ohE "^pub unsafe fn cu[A-Za-z0-9_]+" "$HOME"/.cargo/registry/src/*/cudarc-0.19.*/src/driver/sys/mod.rs \
    | sed 's/pub unsafe fn //' | sort -u | awk '{print "void " $1 "(void) {}"}' > "$cuda/stub/libcuda.c"
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$cuda/stub/libcuda.so.1" "$cuda/stub/libcuda.c"
  ln -sf "$cuda/stub/libcuda.so.1" "$cuda/root/lib64/libcuda.so"
fi
export CUDA_ROOT="$cuda/root" CUDA_PATH="$cuda/root" PATH="$cuda/root/bin:$PATH"
# candle's kernels for Hopper (H100, H200): there is no GPU here to ask.
export CUDA_COMPUTE_CAP=${CUDA_COMPUTE_CAP:-90}
(cd integrations/candle && rustup run "$STABLE" cargo build --release --locked)
mkdir -p .device-bin
cp integrations/candle/target/release/reduce-candle-check .device-bin/candle
strip .device-bin/candle
ls -la .device-bin/candle
