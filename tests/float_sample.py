"""Float values that stress shortest round-trip formatting, shared by
tests/test_float_shortest.py and scripts/float_shortest_sweep.py."""
from __future__ import annotations

import math
import random
import struct


def _from_bits64(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def _from_bits32(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def _finite(xs):
    return [x for x in xs if math.isfinite(x)]


def float64_sample(rng: random.Random, n_random: int) -> list[float]:
    """Random bit patterns (every exponent, subnormals, both signs), the full-precision values
    applications produce, and the edges: zeros, powers of two and ten and their neighbours,
    the smallest and largest magnitudes."""
    xs = _finite(_from_bits64(rng.getrandbits(64)) for _ in range(n_random))
    xs += [rng.random() * 10.0 ** rng.randint(-8, 15) for _ in range(n_random // 2)]
    xs += _finite(_from_bits64(rng.getrandbits(52)) for _ in range(n_random // 8))          # subnormals
    edges = [0.0, -0.0, 5e-324, 2.2250738585072009e-308, 2.2250738585072014e-308,
             1.7976931348623157e308, 9007199254740993.0, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1e21, 1e22, 1e23]
    edges += [math.ldexp(1.0, e) for e in range(-1074, 1024)]
    edges += [float(f"1e{e}") for e in range(-323, 309)]
    for x in list(edges):
        if x > 0:
            (b,) = struct.unpack("<Q", struct.pack("<d", x))
            edges += _finite([_from_bits64(b - 1), _from_bits64(b + 1)])
    xs += edges
    return xs + [-x for x in xs[: len(xs) // 4]]


def float32_sample(rng: random.Random, n_random: int) -> list[float]:
    """The same families for float32 values (each exactly a float32, carried as a Python float)."""
    xs = _finite(_from_bits32(rng.getrandbits(32)) for _ in range(n_random))
    xs += [struct.unpack("<f", struct.pack("<f", rng.random() * 10.0 ** rng.randint(-6, 8)))[0]
           for _ in range(n_random // 2)]
    xs += [_from_bits32(rng.getrandbits(23)) for _ in range(n_random // 8)]                  # subnormals
    edges = [0.0, -0.0, 1.401298464324817e-45, 1.1754942106924411e-38, 1.1754943508222875e-38,
             3.4028234663852886e38, 16777216.0, 16777218.0]
    edges += [math.ldexp(1.0, e) for e in range(-149, 128)]
    for e in range(-45, 39):
        try:
            edges.append(struct.unpack("<f", struct.pack("<f", float(f"1e{e}")))[0])
        except OverflowError:
            pass
    for x in list(edges):
        if x > 0:
            (b,) = struct.unpack("<I", struct.pack("<f", x))
            edges += _finite([_from_bits32(b - 1), _from_bits32(b + 1)])
    xs += [x for x in edges if x == 0 or x >= 1.401298464324817e-45]
    return xs + [-x for x in xs[: len(xs) // 4]]


def pack(xs: list[float]) -> bytes:
    return struct.pack(f"<{len(xs)}d", *xs)
