#!/usr/bin/env python3
"""Joins `bench axes` rows (ours) with `scripts/torch_axes.py` rows (PyTorch)
into the markdown table of issue #32: per type, shape, axes and op, both
median times, ours / PyTorch, our TB/s, and where the output is at most 1/64
of the input our bandwidth as a share of our whole-input sum's; for every
op but sum, our time over our sum's on the same shape and axes. Rows of
views (`bench views`: a shape written `<shape>@<strides>[+<offset>]`) get a
second table: each view's time over that of the dense row of the same op
printed just before it (issue #46: within 5%).
Usage: compare_axes.py reduce.csv torch.csv"""
import sys


def rows(path):
    table = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        impl, dtype, shape, axes, op, us, gbps = line.strip().split(",")
        table[(dtype, shape, axes, op)] = (float(us), float(gbps))
    return table


def main():
    ours, torch = rows(sys.argv[1]), rows(sys.argv[2])
    print("| type | shape | axes | op | ours µs | PyTorch µs | ours / PyTorch | ours TB/s | of our sum's bandwidth "
          "| ours / our sum |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for key, (us, gbps) in ours.items():
        dtype, shape, axes, op = key
        theirs = torch.get(key)
        ratio = us / theirs[0] if theirs else float("nan")
        worst = max(worst, ratio) if theirs else worst
        # A view's shape is written `<shape>@<strides>[+<offset>]`.
        extents = [int(e) for e in shape.split("@")[0].split("x")]
        share = ""
        if axes != "all":
            reduced = 1
            for a in map(int, axes.split("+")):
                reduced *= extents[a]
            whole = ours.get((dtype, str(1 << 28), "all", "sum"))
            if reduced >= 64 and whole and "@" not in shape:
                share = f"{gbps / whole[1]:.0%}"
        sum_here = ours.get((dtype, shape, axes, "sum"))
        over_sum = f"{us / sum_here[0]:.2f}" if sum_here and op != "sum" else ""
        print(f"| {dtype} | {shape} | {axes} | {op} | {us:.1f} | {theirs[0] if theirs else float('nan'):.1f} | "
              f"{ratio:.2f} | {gbps / 1e3:.2f} | {share} | {over_sum} |")
    print(f"\nworst ours / PyTorch: {worst:.2f}")
    views = []
    dense = {}
    for (dtype, shape, axes, op), (us, _) in ours.items():
        if "@" not in shape:
            dense[(dtype, op)] = (shape, axes, us)
        elif (dtype, op) in dense:
            views.append((dtype, shape, axes, op, us, dense[(dtype, op)]))
    if views:
        print("\n| type | view | axes | op | µs | dense | axes | µs | view / dense |")
        print("|---|---|---|---|---:|---|---|---:|---:|")
        for dtype, shape, axes, op, us, (d_shape, d_axes, d_us) in views:
            print(f"| {dtype} | {shape} | {axes} | {op} | {us:.1f} | {d_shape} | {d_axes} | {d_us:.1f} | {us / d_us:.3f} |")


if __name__ == "__main__":
    main()
