#!/usr/bin/env python3
"""The table of a same-call A/B of `bench exact` (whole inputs): for each
type and length, each exact what ÷ its default (the mean of the rounds'
medians) for the builds OLD and NEW, and the exact what's time (µs).
Usage: python3 scripts/ab_exact.py DIR OLD NEW, reading DIR/exact-NAME-*.csv."""
import collections
import csv
import glob
import sys

directory, old, new = sys.argv[1:4]
times = collections.defaultdict(list)
for name in (old, new):
    for path in sorted(glob.glob(f"{directory}/exact-{name}-*.csv")):
        for row in csv.reader(open(path)):
            if len(row) >= 7 and row[0] == "exact" and row[3] != "values":
                times[(row[1], row[2], int(row[4]), row[3], name)].append(float(row[5]))
pairs = [("exact_sum", "sum"), ("exact_nan_sum", "nan_sum"), ("exact_sum_of_squares", "sum_of_squares"),
         ("exact_var", "var"), ("exact_lse", "lse"), ("exact_dot", "dot")]
mean = lambda xs: sum(xs) / len(xs)
print("| type | data | n | " + " | ".join(f"`{e}` ÷ `{b}`, {old} → {new} (µs)" for e, b in pairs) + " |")
print("|---" * (3 + len(pairs)) + "|")
for t, data, n in sorted({k[:3] for k in times}, key=lambda k: (k[0], k[1], k[2])):
    cells = []
    for e, b in pairs:
        keys = [((t, data, n, e, v), (t, data, n, b, v)) for v in (old, new)]
        if all(times.get(x) and times.get(y) for x, y in keys):
            ratio = [mean(times[x]) / mean(times[y]) for x, y in keys]
            us = [mean(times[x]) for x, _ in keys]
            cells.append(f"{ratio[0]:.3f} → {ratio[1]:.3f} ({us[0]:.1f} → {us[1]:.1f})")
        else:
            cells.append("")
    print(f"| {t} | {data} | {n} | " + " | ".join(cells) + " |")
