#!/usr/bin/env python3
"""Times PyTorch on the axis reductions `bench axes` / `bench axes_f64` time
(examples/bench.rs, `axes_cases`), the same way: one 2^28-element buffer of
values 1..3, 3 warm-up calls, then CUDA events around each of 30 calls into a
preallocated output (`torch.sum(..., out=)`, `torch.amax(..., out=)`), median.
Rows: `torch,<type>,<shape>,<axes>,<op>,<median_us>,<GB/s>`, as the bench's.
Arguments `statistics` / `statistics_f64` time, as `bench statistics` does,
sum, var and std (correction 1), logsumexp, count_nonzero and
`isnan().any()` over the whole input, the last axis of [2^20, 2^8] and the
first of [2^8, 2^20]: each as a PyTorch user writes it, so the last two
allocate (count_nonzero takes no `out=`; `isnan` makes a bool tensor
before `any`), and their times include that. The argument `views` times the
rows of `bench views` (issue #46): one dense X of shape [512, 1024, 64]
(f32) and its view T = X.transpose(0, 2), sum over every axis, mean and
var over (0, 2), argmax along 2 (X: along 0), sum along 1, max along 0 (X:
along 2), and X[:, :, 1:], X[:, 1:, :] and X[:, :, :32] summed along 2 (and X), each into a preallocated
output, shapes of views written `<shape>@<strides>[+<offset>]` as the bench does."""
import statistics
import sys

import torch


def cases():
    out = []
    for k in (2, 8, 14, 20, 26):
        for axis in (0, 1):
            out.append(((1 << k, 1 << (28 - k)), (axis,)))
    out.append(((64, 1 << 16, 64), (1,)))
    out.append(((1 << 10, 1 << 10, 1 << 8), (0, 2)))
    return out


def statistics_cases():
    return [((1 << 28,), (0,)), ((1 << 20, 1 << 8), (1,)), ((1 << 8, 1 << 20), (0,))]


def time_statistics(name):
    dtype = {"statistics": torch.float32, "statistics_f64": torch.float64}[name]
    n = 1 << 28
    x = torch.randint(1, 4, (n,), device="cuda").to(dtype)
    element = x.element_size()
    for shape, axes in statistics_cases():
        view = x.view(shape)
        kept = [e for a, e in enumerate(shape) if a not in axes]
        out = torch.empty(kept, device="cuda", dtype=dtype)
        calls = (
            ("sum", element, lambda: torch.sum(view, dim=axes, out=out)),
            ("var", element, lambda: torch.var(view, dim=axes, correction=1, out=out)),
            ("std", element, lambda: torch.std(view, dim=axes, correction=1, out=out)),
            ("logsumexp", element, lambda: torch.logsumexp(view, dim=axes, out=out)),
            ("count_nonzero", 8, lambda: torch.count_nonzero(view, dim=axes)),
            ("any_nan", 1, lambda: torch.isnan(view).any(dim=axes[0])),
        )
        for op, result_bytes, call in calls:
            us = median_us(call)
            moved = n * element + out.numel() * result_bytes
            shape_text = "x".join(map(str, shape))
            axes_text = "+".join(map(str, axes))
            print(f"torch,{name_of(dtype)},{shape_text},{axes_text},{op},{us:.2f},{moved / us / 1e3:.1f}", flush=True)
    del x


def time_views():
    x = torch.randint(1, 4, (1 << 25,), device="cuda").to(torch.float32)
    dense = x.view(512, 1024, 64)
    t = dense.transpose(0, 2)
    sliced = dense[:, :, 1:]
    rows = []
    for (axes, x_axes, op) in (((0, 1, 2), (0, 1, 2), "sum"), ((0, 2), (0, 2), "mean"), ((0, 2), (0, 2), "var"),
                               ((2,), (0,), "argmax"), ((1,), (1,), "sum"), ((0,), (2,), "max")):
        rows.append((dense, x_axes, op))
        rows.append((t, axes, op))
    rows.append((dense, (2,), "sum"))
    rows.append((sliced, (2,), "sum"))
    rows.append((dense[:, 1:, :], (2,), "sum"))
    rows.append((dense[:, :, :32], (2,), "sum"))
    for view, axes, op in rows:
        kept = [e for a, e in enumerate(view.shape) if a not in axes]
        dtype = torch.int64 if op == "argmax" else torch.float32
        out = torch.empty(kept, device="cuda", dtype=dtype)
        call = {
            "sum": lambda: torch.sum(view, dim=axes, out=out),
            "mean": lambda: torch.mean(view, dim=axes, out=out),
            "var": lambda: torch.var(view, dim=axes, correction=1, out=out),
            "max": lambda: torch.amax(view, dim=axes, out=out),
            "argmax": lambda: torch.argmax(view, dim=axes[0], out=out),
        }[op]
        us = median_us(call)
        shape_text = "x".join(map(str, view.shape))
        dense_strides = torch.empty(view.shape).stride()
        if view.stride() != dense_strides or view.storage_offset() != 0:
            shape_text += "@" + ":".join(map(str, view.stride()))
        if view.storage_offset() != 0:
            shape_text += f"+{view.storage_offset()}"
        axes_text = "+".join(map(str, axes))
        moved = view.numel() * 4 + out.numel() * out.element_size()
        print(f"torch,f32,{shape_text},{axes_text},{op},{us:.2f},{moved / us / 1e3:.1f}", flush=True)
    del x


def name_of(dtype):
    return {torch.float32: "f32", torch.float64: "f64"}[dtype]


def median_us(call):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(30):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def main():
    names = sys.argv[1:] or ["f32", "f64"]
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    for name in names:
        if name == "views":
            time_views()
            continue
        if name.startswith("statistics"):
            time_statistics(name)
            continue
        dtype = {"f32": torch.float32, "f64": torch.float64}[name]
        n = 1 << 28
        x = torch.randint(1, 4, (n,), device="cuda").to(dtype)
        element = x.element_size()
        whole = torch.empty((), device="cuda", dtype=dtype)
        us = median_us(lambda: torch.sum(x, dim=0, out=whole))
        print(f"torch,{name},{n},all,sum,{us:.2f},{n * element / us / 1e3:.1f}", flush=True)
        for shape, axes in cases():
            view = x.view(shape)
            kept = [e for a, e in enumerate(shape) if a not in axes]
            out = torch.empty(kept, device="cuda", dtype=dtype)
            for op, fn in (("sum", torch.sum), ("max", torch.amax)):
                us = median_us(lambda: fn(view, dim=axes, out=out))
                moved = (n + out.numel()) * element
                shape_text = "x".join(map(str, shape))
                axes_text = "+".join(map(str, axes))
                print(f"torch,{name},{shape_text},{axes_text},{op},{us:.2f},{moved / us / 1e3:.1f}", flush=True)
        del x


if __name__ == "__main__":
    main()
