"""Same-call A/B of `bench exact_parts` CSVs: python3 scripts/ab_exact_parts.py DIR BASE NEW reads
DIR/bench-{BASE,NEW}-seg-*.csv (one per round, from scripts/ab_run.sh with TYPES=exact_parts) and
prints, per type, layout and what, the median time of each, NEW/BASE, and each exact what's time
over its default's (the same place, the same build: `exact_sum` and `exact_mean` over `sum`,
`exact_var` over `var`, ...)."""
import collections, glob, statistics, sys

d, old, new = sys.argv[1:4]
times = collections.defaultdict(lambda: collections.defaultdict(list))
for name in (old, new):
    for f in glob.glob(f"{d}/bench-{name}-seg-*.csv"):
        for line in open(f):
            p = line.strip().split(",")
            if len(p) >= 7 and p[0] == "exact_parts":
                times[(p[1], p[2], p[3])][name].append(float(p[5]))
default = {"exact_sum": "sum", "exact_mean": "sum", "exact_nan_sum": "nan_sum",
           "exact_sum_of_squares": "sum_of_squares", "exact_var": "var", "exact_lse": "lse"}
for key in sorted(times):
    runs = times[key]
    if old not in runs or new not in runs:
        continue
    a, b = statistics.median(runs[old]), statistics.median(runs[new])
    line = f"{key[0]} {key[1]:34s} {key[2]:22s} {a:8.1f} -> {b:8.1f}  {b / a:.3f}"
    base = times.get((key[0], key[1], default.get(key[2], "")))
    if base and old in base and new in base:
        line += f"  ÷ default {a / statistics.median(base[old]):.3f} -> {b / statistics.median(base[new]):.3f}"
    print(line)
