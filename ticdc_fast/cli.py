"""``ticdc-fast`` / ``python -m ticdc_fast``: the command line."""
from __future__ import annotations

import argparse
import sys
import time


def _best_of(n, fn):
    best, out = float("inf"), None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _demo(args) -> int:
    import pyarrow as pa

    import ticdc_fast
    from ticdc_fast.testing import OpenEncoder, realistic_changefeed

    print(f"ticdc_fast {ticdc_fast.__version__} (implementation: {ticdc_fast.IMPLEMENTATION})")
    print(f"generating a realistic open-protocol changefeed: {args.rows:,} row changes ...")
    events = realistic_changefeed(args.rows, seed=args.seed, flavor=args.flavor)
    messages = OpenEncoder(flavor=args.flavor).encode(events)
    keys = pa.array([k for k, _ in messages], pa.binary())
    values = pa.array([v for _, v in messages], pa.binary())
    nbytes = keys.nbytes + values.nbytes
    print(f"{len(messages):,} Kafka messages, {nbytes / 1e6:.1f} MB")

    generic = ticdc_fast.OpenDecoder()
    t_generic, batch = _best_of(3, lambda: generic.decode(keys, values))
    print("\nfirst rows (generic output):")
    for row in batch.slice(0, 4).to_pylist():
        print("  ", row)

    schema = ticdc_fast.infer_open_schema(keys[:2000], values[:2000], table="shop.orders")
    print("\ninferred schema of shop.orders:")
    for f in schema:
        print(f"   {f.name}: {f.type}")
    typed = ticdc_fast.OpenDecoder(table="shop.orders", schema=schema)
    t_typed, tb = _best_of(3, lambda: typed.decode(keys, values))
    print("\nfirst rows (typed output):")
    for row in tb.slice(0, 3).to_pylist():
        print("  ", row)
    print("\nthroughput, best of 3, Kafka key+value bytes:")
    print(f"decoded {batch.num_rows:,} events generic in {t_generic:.3f} s: "
          f"{nbytes / t_generic / 1e6:,.0f} MB/s, {batch.num_rows / t_generic:,.0f} rows/s")
    print(f"decoded {tb.num_rows:,} rows typed   in {t_typed:.3f} s: "
          f"{nbytes / t_typed / 1e6:,.0f} MB/s, {tb.num_rows / t_typed:,.0f} rows/s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ticdc-fast", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="generate an open-protocol changefeed and decode it")
    demo.add_argument("--rows", type=int, default=200_000)
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--flavor", choices=("tiflow", "ticdc"), default="tiflow")
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        if args.command is None:
            args = demo.parse_args([])
        return _demo(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
