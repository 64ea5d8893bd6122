"""Compare the core's decimal-to-double parse with Python's float() on millions of texts.

    python scripts/float_parse_sweep.py [--million 1] [--seed 1]

Families: the tests' float64 sample (random bit patterns, full-precision values, edges) written as repr, %.17g, %.16g and %.19e; random mantissas
of 1-19 digits at exponents -350..320 (both signs); exact halfway points between neighbouring
doubles.  The test (tests/test_float_parse.py) runs a sample of the same families in seconds."""
from __future__ import annotations

import argparse
import math
import random
import struct
import sys
import time
from decimal import Decimal, getcontext

from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from float_sample import float64_sample  # noqa: E402

import ticdc_fast._core as core  # noqa: E402


def texts(rnd, n):
    out = []
    for x in float64_sample(rnd, n // 12):
        out += [repr(x).encode(), b"%.17g" % x, b"%.16g" % x, b"%.19e" % x]
    for _ in range(n // 5):
        nd = rnd.randint(1, 19)
        m = rnd.randrange(10 ** (nd - 1), 10 ** nd)
        e = rnd.randint(-350, 320)
        out += [b"%de%d" % (m, e), b"-%de%d" % (m, e)]
    getcontext().prec = 800
    for x in float64_sample(rnd, n // 30):
        x = abs(x)
        y = math.nextafter(x, math.inf)
        if x and math.isfinite(y):
            out.append(format((Decimal(x) + Decimal(y)) / 2, "e").encode())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--million", type=float, default=1.0, help="texts, in millions (about)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    t0 = time.time()
    sample = texts(rnd, int(args.million * 1e6))
    got = core._parse_doubles(sample)
    bad = fast = 0
    for t, (v, f) in zip(sample, got):
        ref = float(t)
        fast += f
        ok = v is None if math.isinf(ref) else (v is not None and struct.pack("<d", v) == struct.pack("<d", ref))
        if not ok:
            bad += 1
            if bad <= 10:
                print("MISMATCH", t, v, ref, file=sys.stderr)
    print(f"{len(sample)} texts, {bad} mismatches, {fast} on the fast paths, {time.time() - t0:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
