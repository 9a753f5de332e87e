"""Same-call A/B of `bench segmented` CSVs: python3 scripts/ab_segmented.py DIR BASE NEW reads DIR/{BASE,NEW}-seg-*.csv (one per round) and prints, per layout, the mean time of each, NEW/BASE, and each time over the whole-input sum of the same run ("–" where the run has none: `bench wide`'s rows, or layouts timed without it)."""
import sys, glob, collections, statistics
d, base, new = sys.argv[1:4]
def load(name):
    rows = collections.defaultdict(list)
    for f in sorted(glob.glob(f"{d}/{name}-seg-*.csv")):
        for line in open(f):
            p = line.strip().split(",")
            if len(p) == 6 and p[0] == "reduce":
                rows[(p[1], p[2], int(p[3]))].append(float(p[4]))
    return {k: statistics.mean(v) for k, v in rows.items()}
b, n = load(base), load(new)
print("| layout | op | n | base µs | new µs | new/base | base × sum | new × sum |")
print("|---|---|---|---|---|---|---|---|")
for k in n:
    if k not in b: continue
    t, op, size = k
    elem = t.split("_")[0]; sb = b.get((elem, "sum", size)); sn = n.get((elem, "sum", size))
    over = lambda time, whole: f"{time / whole:.2f}" if whole else "–"
    print(f"| {t} | {op} | {size} | {b[k]:.1f} | {n[k]:.1f} | {n[k]/b[k]:.3f} | {over(b[k], sb)} | {over(n[k], sn)} |")
