#!/usr/bin/env bash
# Builds and runs tests/downstream, a crate outside this workspace, as a
# user would: on stable Rust (no nightly, no rust-src, no CUDA toolkit),
# 1. against the repository (a path dependency), then
# 2. against what `cargo package` makes of reduce-host and kernels-gpu (not
#    published: the two .crate files are unpacked, and the kernel crate is
#    patched in for the crates.io dependency the package declares),
# each in three GPU configurations: cust's buffers (the default; cust's build
# script needs a libcuda.so, which env.sh provides); cudarc's alone, built
# and run with no CUDA variable and no stub library: what a machine with no
# CUDA at all gives a user; and cudarc's with cudarc in its `dynamic-linking`
# mode, as candle's `cuda` feature sets it (built against env.sh's libcuda). Without a GPU the program runs its reductions
# under the CPU emulator.
source "$(dirname "$0")/env.sh"
STABLE=${REDUCE_STABLE_TOOLCHAIN:-stable}
rustup run "$STABLE" cargo --version >/dev/null 2>&1 || rustup toolchain install "$STABLE" --profile minimal
target="$REPO_ROOT/target/downstream"
# Runs the crate of manifest $1 in every configuration.
every_configuration() {
  echo "downstream: cust's buffers (default features)"
  rustup run "$STABLE" cargo run --release --manifest-path "$1" --target-dir "$target"
  echo "downstream: cudarc's buffers alone, with no CUDA variable or stub library"
  env -u CUDA_LIBRARY_PATH -u LD_LIBRARY_PATH rustup run "$STABLE" cargo run --release --manifest-path "$1" \
    --target-dir "$target/no-cuda" --no-default-features --features cudarc
  # candle's `cuda` feature asks cudarc for `dynamic-linking`; the library
  # asks for `fallback-dynamic-loading`, so the two build together, cudarc
  # linking libcuda (env.sh's, found through CUDA_ROOT, as a toolkit's would be).
  echo "downstream: cudarc's buffers, cudarc linking libcuda (as beside candle)"
  CUDA_ROOT="$CUDA_LIBRARY_PATH" LD_LIBRARY_PATH="$CUDA_LIBRARY_PATH/lib64:${LD_LIBRARY_PATH:-}" \
    rustup run "$STABLE" cargo run --release --manifest-path "$1" --target-dir "$target/linked" \
    --no-default-features --features linked
}

echo "downstream: against the repository, $(rustup run "$STABLE" rustc --version)"
every_configuration tests/downstream/Cargo.toml

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
# The same manifest, with the packaged crates for the repository's.
sed 's|^reduce = { path = "../../reduce-host"|reduce = { path = "../unpacked/reduce-host-0.1.0"|; s|^name = "reduce-downstream"|name = "reduce-downstream-packaged"|' \
  tests/downstream/Cargo.toml > "$packages/app/Cargo.toml"
grep -q 'unpacked/reduce-host-0.1.0' "$packages/app/Cargo.toml" || { echo "downstream: manifest rewrite failed" >&2; exit 1; }
cat >> "$packages/app/Cargo.toml" <<TOML

[patch.crates-io]
kernels-gpu = { path = "../unpacked/kernels-gpu-0.1.0" }
TOML
every_configuration "$packages/app/Cargo.toml"
