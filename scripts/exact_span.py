#!/usr/bin/env python3
"""Whether the exact sum's fast path can hold a sum of squares: a CPU model
of its bound (kernels-gpu/src/expansion.rs, `Expansion::is_exact`:
`len_bits + largest <= finest + 52`, in f64 exponent fields), for N(0, 1)
f32 values and for their squares rounded to f32 (what `map::Square` gives).
`largest` is taken as the final sum's exponent (the running partial sums
of squares only grow; of the values, about so). Where the bound fails, the
exact kernels sum the part again in the slow exact pass.
`len_bits` here is the whole input's length, as the bound counted it until
2d029f7; it now counts one thread's additions (`Expansion::adds`, about 11
bits for 2^30 elements on an H200), so read "need" less the difference.
Sums of squares now take the three-f64 `Wide` accumulator (kernels-gpu/src/wide.rs).

Usage: python3 scripts/exact_span.py [LOG2_N ...]   (default 16 20 22 24;
pure Python: 2^24 takes a few minutes)
"""
import random
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def field(x):
    """The f64 exponent field of |x|."""
    return (struct.unpack("Q", struct.pack("d", abs(x)))[0] >> 52) & 0x7FF


def last_bit_field(v):
    """The f32 `v`'s last bit as the field of an f64 with that ulp (ulp 2^(k - 1075))."""
    bits = struct.unpack("I", struct.pack("f", v))[0] & 0x7FFFFFFF
    return None if bits == 0 else max(bits >> 23, 1) + 1075 - 150


random.seed(1)
for e in map(int, sys.argv[1:] or [16, 20, 22, 24]):
    n = 1 << e
    finest = {"values": 10**9, "squares": 10**9}
    total = {"values": 0.0, "squares": 0.0}
    for _ in range(n):
        x = f32(random.gauss(0, 1))
        for name, v in (("values", x), ("squares", f32(x * x))):
            finest[name] = min(finest[name], last_bit_field(v) or 10**9)
            total[name] += v
    len_bits = (n - 1).bit_length()
    for name in ("values", "squares"):
        need = len_bits + field(total[name]) - finest[name]
        print(f"n = 2^{e}, {name}: len_bits + largest - finest = {need} ({'fast path' if need <= 52 else 'exact pass'})")
