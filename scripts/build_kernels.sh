#!/usr/bin/env bash
# Regenerates the kernel images the library ships (reduce-host/kernels/), or
# checks that the shipped ones are what the source gives.
#
#   bash scripts/build_kernels.sh           # rebuild and replace reduce-host/kernels/
#   bash scripts/build_kernels.sh --check   # rebuild into a temporary folder; exit 1 if they differ
#
# 1. The PTX of every tuning row, split into modules, from kernels-gpu with
#    the pinned nightly (reduce-host's build script with the feature build-kernels).
# 2. Machine code for every architecture in scripts/kernel_images.py, from
#    that PTX, by `ptxas` of PyPI's nvidia-cuda-nvcc-cu12 (pinned there),
#    installed into .ptxas/ (a Python virtual environment) on first use.
# 3. Every image xz-compressed, one file per module and architecture.
# Both steps are deterministic: the check compares decompressed contents.
source "$(dirname "$0")/env.sh"
set +e

out_dir=$(cargo build -p reduce-host --release --features build-kernels --message-format=json \
  | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "build-script-executed" and "reduce-host" in message["package_id"]:
        print(message["out_dir"])')
[[ -d $out_dir/kernels ]] || { echo "build_kernels: the source build left no PTX modules" >&2; exit 1; }
exec python3 scripts/kernel_images.py "$out_dir/kernels" reduce-host/kernels "$@"
