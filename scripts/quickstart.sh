#!/usr/bin/env bash
# Runs examples/quickstart.rs: 100M random f32 on the GPU, the four
# reductions checked against the CPU. Without a GPU it says so and runs the
# same kernels under the CPU emulator on 1M elements.
source "$(dirname "$0")/env.sh"
cargo run --release --example quickstart "$@"
