#!/usr/bin/env python3
"""The full PTX of a build (stdin) without the functions that call a user
operator's `user_op_*` (stdout): the library splices those in when it
loads a user module, so `ptxas` rejects them in the PTX as built. What
scripts/ab_stage.sh hands to `ptxas -v` for the registers and spills."""
import re
import sys

lines = sys.stdin.read().split("\n")
out, function, depth, opened = [], [], 0, False
for line in lines:
    starts = re.match(r"(\.visible |\.weak |\.extern )?\.(entry|func) ", line) is not None
    if not function and not starts:
        out.append(line)
        continue
    function.append(line)
    opened = opened or "{" in line
    depth += line.count("{") - line.count("}")
    # A definition ends at its closing brace, a declaration at its `;`.
    if depth == 0 and (opened or line.rstrip().endswith(";")):
        if not any("user_op_" in part for part in function):
            out.extend(function)
        function, opened = [], False
sys.stdout.write("\n".join(out))
