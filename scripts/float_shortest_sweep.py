"""Compare the core's shortest float text with the twin's on millions of values.

    python scripts/float_shortest_sweep.py [--million 4] [--seed 1]

The test (tests/test_float_shortest.py) runs a sample of the same families in seconds."""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from float_sample import float32_sample, float64_sample, pack  # noqa: E402

import ticdc_fast._core as core  # noqa: E402
from ticdc_fast.values import format_float, format_float_plain  # noqa: E402


def sweep(xs, bits, plain):
    twin = format_float_plain if plain else format_float
    got = core._format_floats(pack(xs), bits, plain).decode().split("\n")[:-1]
    bad = [(x, g, twin(x, bits)) for x, g in zip(xs, got) if g != twin(x, bits)]
    return len(xs), bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--million", type=float, default=4.0, help="random float64 bit patterns, in millions")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n = int(args.million * 1_000_000)
    failed = False
    for bits, plain, xs in [(64, False, float64_sample(rng, n)), (64, True, float64_sample(rng, n // 4)),
                            (32, False, float32_sample(rng, n // 8))]:
        t = time.perf_counter()
        count, bad = sweep(xs, bits, plain)
        print(f"float{bits}{' plain' if plain else ''}: {count} values, {len(bad)} mismatches "
              f"({time.perf_counter() - t:.0f} s)")
        for x, g, w in bad[:10]:
            print(f"  {x!r}: core {g} twin {w}")
        failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
