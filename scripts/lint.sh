#!/usr/bin/env bash
# Formatting, clippy and rustdoc (warnings are errors) for the host workspace
# and for the kernel crate on the host (the emulator) and at both PTX
# architectures (their cfg'd code differs).
source "$(dirname "$0")/env.sh"
cargo fmt --all --check
(cd kernels-gpu && cargo fmt --check)
cargo clippy --workspace --all-targets --release -- -D warnings
# The build script's other half: the kernels built from source.
cargo clippy -p reduce-host --release --features build-kernels -- -D warnings
(cd tests/downstream && cargo fmt --check)
# With the cudarc interop (reduce::cudarc, its tests and example).
cargo clippy --workspace --all-targets --release --features cudarc -- -D warnings
# Without cust (the library; its tests and examples use cust): with cudarc,
# the configuration that builds with no CUDA at all, so built here with no
# CUDA variable and no stub library; and the emulator alone.
for features in "cudarc ladder" cudarc ""; do
  env -u CUDA_LIBRARY_PATH -u LD_LIBRARY_PATH cargo clippy -p reduce-host --lib --release --no-default-features \
    --features "$features" -- -D warnings
done
(cd kernels-gpu && cargo clippy --release --locked --all-targets -- -D warnings)
for cpu in sm_70 sm_90; do
  (cd kernels-gpu && RUSTFLAGS="-C target-cpu=$cpu" cargo clippy --release --target nvptx64-nvidia-cuda \
     -Zbuild-std=core --target-dir "target/clippy-$cpu" -- -D warnings)
done
# Broken doc links: the public API's, and the kernel crate's (written for
# maintainers, so private items included).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --release -p reduce-host
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --release -p reduce-host --features cudarc
env -u CUDA_LIBRARY_PATH -u LD_LIBRARY_PATH RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --release -p reduce-host \
  --no-default-features --features cudarc
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --release -p kernels-gpu --document-private-items
