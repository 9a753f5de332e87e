#!/usr/bin/env bash
# Formatting and clippy (warnings are errors) for the host workspace and for
# the kernel crate on the host (the emulator) and at both PTX architectures
# (their cfg'd code differs).
source "$(dirname "$0")/env.sh"
cargo fmt --all --check
(cd kernels-gpu && cargo fmt --check)
cargo clippy --workspace --all-targets --release -- -D warnings
(cd kernels-gpu && cargo clippy --release --locked --all-targets -- -D warnings)
for cpu in sm_70 sm_90; do
  (cd kernels-gpu && RUSTFLAGS="-C target-cpu=$cpu" cargo clippy --release --target nvptx64-nvidia-cuda \
     -Zbuild-std=core --target-dir "target/clippy-$cpu" -- -D warnings)
done
