#!/usr/bin/env python3
"""Plots time vs n for reduce and CUB from a compare.md (scripts/compare.py).

Usage: plot.py COMPARE_MD OUT_PNG [TITLE]. Needs matplotlib.
One panel per type (f32, i32, f64, i64), sum only: ours and CUB's median time on
log-log axes, with the ratio on a second axis.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def read(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or cells[0] in ("type", "---") or cells[4] == "-":
            continue
        try:
            rows[(cells[0], cells[1], int(cells[2]))] = (float(cells[3]), float(cells[4]))
        except ValueError:
            continue
    return rows


def main():
    rows = read(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) > 3 else "sum: reduce vs NVIDIA CUB"
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.5))
    for ax, typ in zip(axes, ["f32", "i32", "f64", "i64"]):
        keys = sorted(k for k in rows if k[0] == typ and k[1] == "sum")
        n = [k[2] for k in keys]
        ours = [rows[k][0] for k in keys]
        cub = [rows[k][1] for k in keys]
        ax.loglog(n, ours, "o-", label="reduce", color="tab:blue")
        ax.loglog(n, cub, "s--", label="CUB DeviceReduce", color="tab:gray")
        ax.set_xlabel("n (elements)")
        ax.set_ylabel("median time per call (µs)")
        ax.set_title(f"{typ} sum")
        ax.grid(True, which="both", alpha=0.3)
        ratio_ax = ax.twinx()
        ratio_ax.semilogx(n, [o / c for o, c in zip(ours, cub)], "^:", color="tab:red", label="ratio (ours / CUB)")
        ratio_ax.axhline(1.0, color="tab:red", alpha=0.3)
        ratio_ax.set_ylim(0.5, 1.2)
        ratio_ax.set_ylabel("ratio", color="tab:red")
        lines = ax.get_legend_handles_labels()
        rlines = ratio_ax.get_legend_handles_labels()
        ax.legend(lines[0] + rlines[0], lines[1] + rlines[1], loc="upper left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
