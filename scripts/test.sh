#!/usr/bin/env bash
# Builds everything (host crate, PTX for every architecture, examples, benches)
# and runs the tests. Without a GPU, the GPU tests print that they were skipped.
source "$(dirname "$0")/env.sh"
cargo build --workspace --all-targets --release
cargo test --workspace --release "$@"
