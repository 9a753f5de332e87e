#!/usr/bin/env bash
# Builds the `bench` example of the working tree (as it is, experiments
# included, its kernels built from source: feature build-kernels, so the
# driver compiles them) and adds it to the A/B kit as .device-ab/bench-NAME,
# its sm_90 PTX as .device-ab/NAME.ptx (for `ptxas -v` on the GPU machine;
# without the user-operator kernels),
# and optionally test binaries as .device-ab/TEST-NAME; then packs the kit
# into .device-ab.tgz (both git-ignored) for the device tool's `carry`.
# Usage: bash scripts/ab_stage.sh NAME [TEST...]   (TEST: a file of reduce-host/tests)
# A kit holds a few variants: `rm .device-ab/*-OLD*` what a call no longer needs.
# On the GPU machine: bash scripts/ab_run.sh (same-call A/B) or scripts/ab_ncu.sh.
source "$(dirname "$0")/env.sh"
name=${1:?usage: ab_stage.sh NAME [TEST...]}
shift
mkdir -p .device-ab
cargo build --release --example bench --features reduce/build-kernels
cp target/release/examples/bench ".device-ab/bench-$name"
strip ".device-ab/bench-$name"
# The PTX the build script just wrote (one out/ folder per build-script
# hash), less the user-operator kernels, which ptxas cannot compile unspliced.
ptx=$(ls -t target/release/build/reduce-host-*/out/kernels_sm_90.ptx | head -1)
python3 scripts/ptx_without_user_ops.py < "$ptx" > ".device-ab/$name.ptx"
for test in "$@"; do
  exe=$(cargo test --release -p reduce-host --features build-kernels --test "$test" --no-run --message-format=json 2>/dev/null \
    | python3 scripts/test_executables.py)
  cp "$exe" ".device-ab/$test-$name"
  strip ".device-ab/$test-$name"
done
# CUB's benchmark too, for whole-input A/Bs on a machine that has no .device-bin/.
cp "$REPO_ROOT/benches/cub_reduce.cu" .device-ab/
tar -cf - .device-ab | xz -T0 > .device-ab.tgz
ls -la .device-ab .device-ab.tgz
