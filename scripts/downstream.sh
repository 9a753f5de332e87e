#!/usr/bin/env bash
# Builds and runs tests/downstream, a crate outside this workspace, as a
# user would: on stable Rust (no nightly, no rust-src, no CUDA toolkit),
# 1. against the repository (a path dependency), then
# 2. against what `cargo package` makes of reduce-host and kernels-gpu (not
#    published: the two .crate files are unpacked, and the kernel crate is
#    patched in for the crates.io dependency the package declares).
# Without a GPU the program runs its reductions under the CPU emulator.
source "$(dirname "$0")/env.sh"
STABLE=${REDUCE_STABLE_TOOLCHAIN:-stable}
rustup run "$STABLE" cargo --version >/dev/null 2>&1 || rustup toolchain install "$STABLE" --profile minimal
target="$REPO_ROOT/target/downstream"
echo "downstream: against the repository, $(rustup run "$STABLE" rustc --version)"
rustup run "$STABLE" cargo run --release --manifest-path tests/downstream/Cargo.toml --target-dir "$target"

echo "downstream: against the packaged crates"
packages="$target/package"
rm -rf "$packages" && mkdir -p "$packages/unpacked"
# The kernel crate is not on crates.io: resolve reduce-host's dependency on it to the repository's.
rustup run "$STABLE" cargo package -p reduce-host --no-verify --allow-dirty --target-dir "$packages/build" \
  --config 'patch.crates-io.kernels-gpu.path="kernels-gpu"'
(cd kernels-gpu && rustup run "$STABLE" cargo package --no-verify --allow-dirty --target-dir "$packages/build")
for crate in "$packages"/build/package/*.crate; do tar -xzf "$crate" -C "$packages/unpacked"; done
cp -r tests/downstream/src "$packages/app-src"
mkdir -p "$packages/app" && mv "$packages/app-src" "$packages/app/src"
cat > "$packages/app/Cargo.toml" <<TOML
[package]
name = "reduce-downstream-packaged"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
reduce = { path = "../unpacked/reduce-host-0.1.0", package = "reduce-host" }
cust = "0.3.2"

[patch.crates-io]
kernels-gpu = { path = "../unpacked/kernels-gpu-0.1.0" }
TOML
rustup run "$STABLE" cargo run --release --manifest-path "$packages/app/Cargo.toml" --target-dir "$target"
