"""Prints the test executables that `cargo test --no-run --message-format=json`
(its JSON on standard input) built, one path a line: used by
scripts/stage_device.sh and scripts/ab_stage.sh to copy them for the GPU
machine."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]:
        print(message["executable"])
