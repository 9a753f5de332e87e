#!/usr/bin/env python3
"""Same-call A/B of `bench` variants (scripts/ab_run.sh's r/ folder): for
every row `reduce,<key...>,<us>,<GB/s>` the median time of each variant over
the rounds, and the ratio NEW/BASE. Rows outside +-LIMIT (default 2%) are
flagged. Usage: ab_compare.py DIR BASE NEW [LIMIT]"""
import glob
import statistics
import sys
from collections import defaultdict


def times(folder, name):
    rows = defaultdict(list)
    for path in sorted(glob.glob(f"{folder}/bench-{name}-seg-*.csv")):
        for line in open(path):
            fields = line.strip().split(",")
            if fields[0] != "reduce" or len(fields) < 4:
                continue
            rows[",".join(fields[1:-2])].append(float(fields[-2]))
    return rows


def main():
    folder, base, new = sys.argv[1:4]
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 0.02
    a, b = times(folder, base), times(folder, new)
    print(f"| row | {base} µs | {new} µs | {new}/{base} |")
    print("|---|---:|---:|---:|")
    outside = 0
    ratios = []
    for key in a:
        if key not in b:
            print(f"| {key} | {statistics.median(a[key]):.2f} | – | – |")
            continue
        ma, mb = statistics.median(a[key]), statistics.median(b[key])
        ratio = mb / ma
        ratios.append(ratio)
        flag = ""
        if abs(ratio - 1) > limit:
            flag = " ✗"
            outside += 1
        print(f"| {key} | {ma:.2f} | {mb:.2f} | {ratio:.3f}{flag} |")
    for key in b:
        if key not in a:
            print(f"| {key} | – | {statistics.median(b[key]):.2f} | – |")
    if ratios:
        print(
            f"\n{len(ratios)} rows: ratio median {statistics.median(ratios):.3f}, "
            f"min {min(ratios):.3f}, max {max(ratios):.3f}; {outside} outside ±{limit:.0%}"
        )


if __name__ == "__main__":
    main()
