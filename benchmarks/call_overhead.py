"""The Python cost of one ``decode()`` call: a one-message batch (one row change of the
``orders10`` mix, list input and Arrow input), per protocol and mode, Cython core.  Each case
is called in rounds of 300 calls; the fastest round's microseconds per call are printed.

    python benchmarks/call_overhead.py [--rounds 40]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.asv_corpora import PROTOCOLS, build, make_decoder, unpack  # noqa: E402

CALLS = 300


def per_call_us(decoder, keys, values, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            decoder.decode(keys, values)
        best = min(best, time.perf_counter() - t0)
    return best / CALLS * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args(argv)
    print(f"{'protocol':12s} {'mode':8s} {'list us':>8s} {'arrow us':>9s}")
    for protocol in PROTOCOLS:
        corpus = build(protocol, "orders10")
        keys_arr, values_arr = unpack(corpus["keys"], 1), unpack(corpus["values"], 1)
        keys_list = None if keys_arr is None else keys_arr.to_pylist()
        if keys_arr is None and protocol.startswith("simple"):
            keys_arr, keys_list = [None], [None]
        for mode in ("generic", "typed"):
            dec = make_decoder(protocol, corpus, mode)
            lst = per_call_us(dec, keys_list, values_arr.to_pylist(), args.rounds)
            arr = per_call_us(dec, keys_arr, values_arr, args.rounds)
            print(f"{protocol:12s} {mode:8s} {lst:8.1f} {arr:9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
