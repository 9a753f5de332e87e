#!/usr/bin/env bash
# Builds (here, where Rust is) everything scripts/device_run.sh runs on the GPU
# machine, copies it into .device-bin/ and packs that into .device-bin.tar.xz
# (both git-ignored). Name the tarball in the device tool's `carry`: the
# binaries embed the PTX, and unpacked they are over the tool's 64 MiB;
# device_run.sh and sanitize.sh unpack it.
source "$(dirname "$0")/env.sh"
rm -rf .device-bin && mkdir -p .device-bin/tests
examples="quickstart first_sum bench graph_replay ladder multi_gpu multi_process"
cargo build --release $(printf -- '--example %s ' $examples)
cargo build --release --features cudarc --example cudarc
examples="$examples cudarc"
for e in $examples; do cp "target/release/examples/$e" .device-bin/; done
# With the cudarc feature, so the cudarc tests are among them.
cargo test --workspace --release --features cudarc --no-run --message-format=json 2>/dev/null \
  | python3 scripts/test_executables.py \
  | while read -r exe; do cp "$exe" .device-bin/tests/; done
cp "$REPO_ROOT/benches/cub_reduce.cu" "$REPO_ROOT/benches/cub_reduce_64.cu" "$REPO_ROOT/benches/cub_first_sum.cu" .device-bin/
strip .device-bin/tests/* $(printf -- '.device-bin/%s ' $examples)
du -sh .device-bin; ls .device-bin/tests
# xz, not gzip: the binaries pack 4x smaller (14 MB against 57 MB on
# 2026-11-23), well within the device tool's 64 MiB carry with the tree.
# -9: a 64 MiB window, so the kernel images every binary embeds pack once
# (-6's 8 MiB window let them repeat: 72 MB against 16 MB, 2026-11-24).
tar -cf - .device-bin | xz -T0 -9 > .device-bin.tar.xz
du -sh .device-bin.tar.xz
