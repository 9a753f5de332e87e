#!/usr/bin/env python3
"""The exact sum's speed table against CUB, from one device call's CSVs.

Usage: exact_vs_cub.py FOLDER. Reads FOLDER/exact*.csv (`bench exact`),
FOLDER/cub_determinism*.csv (`benches/cub_determinism.cu`) and
FOLDER/cub_reduce.csv (`benches/cub_reduce.cu`: CUB's default sum) and
prints a Markdown table per type: µs (median over the files of each
program's medians) for uniform data, and the ratios against our
`ExactSum`. CUB's determinism levels go through its single-call API, which
allocates its temporary storage in every call; its default sum does not.
"""
import csv, glob, statistics, sys

folder = sys.argv[1]
times = {}  # (impl, type, n) -> [µs]
values = {}  # (impl, type, n) -> result
def rows(pattern):
    for path in sorted(glob.glob(f"{folder}/{pattern}")):
        for row in csv.reader(open(path)):
            if row and not row[0].startswith("#"):
                yield row

for impl, t, data, what, n, us, *rest in rows("exact*.csv"):
    if data == "uniform" and what in ("sum", "exact_sum"):
        times.setdefault((what, t, int(n)), []).append(float(us))
    if data == "uniform" and what == "values":
        values[("exact_sum", t, int(n))] = us  # the exact sum, then Op::Sum's
for impl, t, data, what, n, us, gbps, value, bits in rows("cub_determinism*.csv"):
    if data == "uniform":
        times.setdefault((what, t, int(n)), []).append(float(us))
        values[(what, t, int(n))] = f"{value} ({bits})"
for impl, t, what, n, us, *rest in rows("cub_reduce.csv"):
    if impl == "cub" and what == "sum":
        times.setdefault(("cub_default", t, int(n)), []).append(float(us))

def med(key):
    v = times.get(key)
    return statistics.median(v) if v else None

for t in ("f32", "f64"):
    print(f"\n{t}, uniform values, µs (median of the runs' medians); ratios ÷ our ExactSum\n")
    print("| n | ours Op::Sum | ours ExactSum | exact ÷ sum | CUB default | CUB run_to_run | CUB gpu_to_gpu | CUB gpu_to_gpu ÷ ours exact | CUB gpu_to_gpu result |")
    print("|---|---|---|---|---|---|---|---|---|")
    for e in range(20, 31, 2):
        n = 1 << e
        s, x = med(("sum", t, n)), med(("exact_sum", t, n))
        if s is None or x is None:
            continue
        d, r, g = med(("cub_default", t, n)), med(("run_to_run", t, n)), med(("gpu_to_gpu", t, n))
        f = lambda v: "–" if v is None else f"{v:.1f}"
        ratio = "–" if g is None else f"{g / x:.2f}"
        print(f"| 2^{e} | {f(s)} | {f(x)} | {x / s:.3f} | {f(d)} | {f(r)} | {f(g)} | {ratio} | {values.get(('gpu_to_gpu', t, n), '–')} |")
