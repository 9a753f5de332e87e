"""Reads Nsight Compute's per-instruction SASS table of one kernel
(`ncu --import REPORT --page source --csv --print-source sass > FILE`,
with the SourceCounters section collected).

    python3 scripts/ncu_sass.py FILE            the hottest runs of instructions
    python3 scripts/ncu_sass.py FILE FROM TO    instructions FROM..TO, one per line

A run is a stretch of consecutive instructions executed equally often (a
basic block, roughly); the summary ranks runs by warp instructions executed
and gives the fewest active threads of any of its instructions.
Per instruction: warp instructions executed, average active threads, share
of the stall samples, L2 sectors requested and how many of them are beyond
a fully coalesced access ("excess").
"""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
header, data = rows[1], rows[2:]
column = {name: i for i, name in enumerate(header)}


def value(row, name):
    try:
        return float(row[column[name]])
    except ValueError:
        return 0.0


EXECUTED = "Instructions Executed"
STALLS = "Warp Stall Sampling (All Samples)"
THREADS = "Avg. Threads Executed"
total = sum(value(r, EXECUTED) for r in data)
stalls = sum(value(r, STALLS) for r in data) or 1.0
print(f"{len(data)} instructions, {total / 1e6:.1f}M warp instructions executed")

if len(sys.argv) == 4:
    for i in range(int(sys.argv[2]), int(sys.argv[3])):
        r = data[i]
        if value(r, EXECUTED) == 0:
            continue
        print(
            f"{i:5d} {value(r, EXECUTED) / 1e6:6.2f}M thr {value(r, THREADS):4.1f}"
            f" stall {100 * value(r, STALLS) / stalls:4.1f}%"
            f" sectors {value(r, 'L2 Theoretical Sectors Global') / 1e6:5.2f}M"
            f" excess {value(r, 'L2 Theoretical Sectors Global Excessive') / 1e6:5.2f}M"
            f"  {r[1].strip()[:70]}"
        )
    sys.exit()

runs = []
for i, r in enumerate(data):
    executed = value(r, EXECUTED)
    if executed == 0:
        continue
    if runs and runs[-1]["executed"] == executed and runs[-1]["last"] == i - 1:
        runs[-1]["last"] = i
        runs[-1]["stalls"] += value(r, STALLS)
        runs[-1]["threads"] = min(runs[-1]["threads"], value(r, THREADS))
    else:
        runs.append({"first": i, "last": i, "executed": executed, "stalls": value(r, STALLS),
                     "threads": value(r, THREADS), "text": r[1].strip()[:50]})
runs.sort(key=lambda run: -run["executed"] * (run["last"] - run["first"] + 1))
for run in runs[:25]:
    count = run["last"] - run["first"] + 1
    share = 100 * run["executed"] * count / total
    print(f"{run['first']:5d}-{run['last']:5d} {count:4d} instr x {run['executed'] / 1e6:5.2f}M"
          f" = {share:4.1f}% thr {run['threads']:4.1f} stall {100 * run['stalls'] / stalls:4.1f}%  {run['text']}")
