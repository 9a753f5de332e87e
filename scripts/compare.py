#!/usr/bin/env python3
"""Joins `examples/bench.rs` and `benches/cub_reduce.cu` (plus
`benches/cub_reduce_64.cu`) CSV output.

Usage: compare.py CUB_CSV REDUCE_CSV  -> a Markdown table on stdout:
type, op, n, our median time, CUB's, ratio (ours / CUB: below 1 is faster),
our TB/s and its share of the H200's 4.8 TB/s datasheet bandwidth.
Rows CUB has no number for (u32, and the ops CUB lacks) show '-' for CUB
and the ratio.
"""
import csv
import sys

DATASHEET_TBPS = 4.8


def read(path):
    rows = {}
    with open(path) as f:
        for row in csv.reader(f):
            if not row or row[0].startswith("#") or len(row) != 6:
                continue
            impl, typ, op, n, us, gbps = row
            if impl in ("cub", "reduce"):
                rows[(typ, op, int(n))] = (float(us), float(gbps))
    return rows


def main():
    cub, ours = read(sys.argv[1]), read(sys.argv[2])
    print("| type | op | n | reduce (µs) | CUB (µs) | ratio | reduce TB/s | % of 4.8 TB/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    op_order = ["sum", "max", "min", "product", "nan_sum", "nan_max", "nan_min", "sum_of_squares", "max_abs"]
    for key in sorted(ours, key=lambda k: (k[0], op_order.index(k[1]) if k[1] in op_order else len(op_order), k[2])):
        typ, op, n = key
        us, gbps = ours[key]
        c = cub.get(key)
        cub_us = f"{c[0]:.2f}" if c else "-"
        ratio = f"{us / c[0]:.3f}" if c else "-"
        print(f"| {typ} | {op} | {n} | {us:.2f} | {cub_us} | {ratio} | {gbps / 1e3:.3f} | {100 * gbps / 1e3 / DATASHEET_TBPS:.1f} |")


if __name__ == "__main__":
    main()
