#!/usr/bin/env bash
# Builds everything (host crate, examples, benches) and runs the tests; checks
# that the shipped kernel images are what the kernel source gives; builds and
# runs tests/downstream, a crate outside this workspace, on stable Rust. Every kernel test runs under the CPU emulator; without a
# GPU, the GPU half of each test prints that it was skipped.
source "$(dirname "$0")/env.sh"
# Every test (or GPU half) that skips writes a line here (tests/common's `skipped`).
export REDUCE_TEST_SKIP_LOG="$REPO_ROOT/target/skipped-tests.txt"
rm -f "$REDUCE_TEST_SKIP_LOG"
# The shipped kernels (reduce-host/kernels/) rebuilt from source with the
# pinned nightly and ptxas: the tests below run the source on the emulator and
# the shipped images on the GPU, so they must be the same kernels. First, as
# it installs ptxas (.ptxas/), which the user operators' unit tests assemble
# their PTX with.
bash scripts/build_kernels.sh --check
cargo build --workspace --all-targets --release
cargo test --workspace --release "$@"
# The cudarc interop (feature `cudarc`): its example, its GPU tests (skipped
# without a GPU) and its doc examples (compiled; they need a GPU to run).
cargo build --release --features cudarc --example cudarc
cargo test -p reduce-host --release --features cudarc --test cudarc "$@"
cargo test -p reduce-host --release --features cudarc --doc "$@" -- cudarc
# The library's unit tests without cust, with cudarc: the configuration that
# builds with no CUDA, so built with no CUDA variable and no stub library.
env -u CUDA_LIBRARY_PATH -u LD_LIBRARY_PATH cargo test -p reduce-host --lib --release --no-default-features \
  --features cudarc "$@"
# The host crate's tests again in a debug build: overflow checks and debug
# assertions on, in the emulated kernels too (the workspace's Cargo.toml).
cargo test -p reduce-host "$@"
# The exact reductions again with every part summed by its kernel's exact
# fallback, which only some values reach otherwise (wide exponent ranges,
# heavy cancellation): `--cfg reduce_exact_fallback_always`, on the emulator,
# in a target folder of its own (the flag rebuilds every crate).
RUSTFLAGS="--cfg reduce_exact_fallback_always" CARGO_TARGET_DIR="$REPO_ROOT/target/exact-fallback" \
  cargo test -p reduce-host --release --test suite "$@" exact
# The kernel crate's own unit tests (the emulator's pieces), on the host.
(cd kernels-gpu && cargo test --release --locked "$@")
# A user's crate: stable Rust, against the repository and the packaged crates.
bash scripts/downstream.sh
# The runner counts a test whose GPU half skipped as passed: say what was not run.
if [[ -s $REDUCE_TEST_SKIP_LOG ]]; then
  echo "SKIPPED (counted as passed above): $(wc -l < "$REDUCE_TEST_SKIP_LOG") tests or GPU halves; list in $REDUCE_TEST_SKIP_LOG"
  cut -d' ' -f2- "$REDUCE_TEST_SKIP_LOG" | sort | uniq -c
fi
