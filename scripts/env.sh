# Sourced by the other scripts: installs what a fresh machine lacks and sets
# the environment the build needs. Safe to source again (each step is skipped
# when already done).
#
# 1. The pinned nightly from rust-toolchain.toml with rust-src (for
#    -Zbuild-std=core) and llvm-tools. rustup does not auto-install here.
# 2. libcuda.so: `cust` links against it. Where an NVIDIA driver is installed,
#    its library is used. Elsewhere (CI, laptops) Debian's non-free `libcuda1`
#    package is unpacked into .cuda-stub/ so the build links and the test
#    binaries start; `cuInit` then reports that there is no device, and the GPU
#    tests say they were skipped.

set -euo pipefail
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLCHAIN=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$REPO_ROOT/rust-toolchain.toml")

if ! rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1 \
   || ! rustup component list --toolchain "$TOOLCHAIN" --installed 2>/dev/null | grep -q '^rust-src'; then
  echo "setup: installing Rust $TOOLCHAIN (rust-src, llvm-tools, clippy, rustfmt)" >&2
  rustup toolchain install "$TOOLCHAIN" --profile minimal -c rust-src -c llvm-tools -c clippy -c rustfmt >&2
fi

driver_libcuda() {
  ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / {print $NF; exit}'
}

if [ -z "${CUDA_LIBRARY_PATH:-}" ]; then
  if libcuda=$(driver_libcuda) && [ -n "$libcuda" ]; then
    # cust_raw looks for $CUDA_LIBRARY_PATH/lib64/libcuda.so; give it the driver's.
    stub="$REPO_ROOT/.cuda-stub/driver"
    mkdir -p "$stub/lib64"
    ln -sf "$libcuda" "$stub/lib64/libcuda.so"
    export CUDA_LIBRARY_PATH="$stub"
  else
    stub="$REPO_ROOT/.cuda-stub/debian"
    if [ ! -e "$stub/lib64/libcuda.so.1" ]; then
      echo "setup: no NVIDIA driver here; fetching Debian's libcuda1 so cust can link" >&2
      apt_dir=$(mktemp -d)
      mkdir -p "$apt_dir/lists/partial" "$apt_dir/deb"
      echo "deb http://deb.debian.org/debian bookworm main contrib non-free" > "$apt_dir/sources.list"
      apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$apt_dir/lists" -o Debug::NoLocking=1)
      apt-get "${apt_opts[@]}" -qq update >&2
      (cd "$apt_dir/deb" && apt-get "${apt_opts[@]}" -qq download libcuda1 >&2 2>/dev/null)
      dpkg -x "$apt_dir"/deb/libcuda1_*.deb "$apt_dir/x"
      mkdir -p "$stub/lib64"
      cp -a "$apt_dir"/x/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so* "$stub/lib64/"
      rm -rf "$apt_dir"
    fi
    export CUDA_LIBRARY_PATH="$stub"
    # Only where no driver exists: the test binaries need *a* libcuda.so.1 to start.
    export LD_LIBRARY_PATH="$stub/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
cd "$REPO_ROOT"
