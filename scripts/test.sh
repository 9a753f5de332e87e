#!/usr/bin/env bash
# Builds everything (host crate, PTX for every architecture, examples, benches)
# and runs the tests. Every kernel test runs under the CPU emulator; without a
# GPU, the GPU half of each test prints that it was skipped.
source "$(dirname "$0")/env.sh"
cargo build --workspace --all-targets --release
cargo test --workspace --release "$@"
# The host crate's tests again with overflow checks and debug assertions on.
cargo test -p reduce-host --profile checked "$@"
# The kernel crate's own unit tests (the emulator's pieces), on the host.
(cd kernels-gpu && cargo test --release --locked "$@")
