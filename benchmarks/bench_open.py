"""Open-protocol throughput: Cython core vs the pure-Python twin, generic and typed output.

    python benchmarks/bench_open.py [--rows 200000] [--repeat 3] [--flavor tiflow]

Decodes one realistic stream (``ticdc_fast.testing.realistic_changefeed``, ~10 mixed-type
columns) on one core and prints MB/s of Kafka key+value bytes and rows/s, best of --repeat.
A benchmark, not a test: numbers depend on the machine.
"""
from __future__ import annotations

import argparse
import platform

import pyarrow as pa

import ticdc_fast

from _common import best_of, pin_one_core
from ticdc_fast.testing import OpenEncoder, realistic_changefeed




def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flavor", default="tiflow", choices=("tiflow", "ticdc"))
    ap.add_argument("--compression", default="none", choices=("none", "snappy", "lz4"))
    args = ap.parse_args(argv)
    pin_one_core()

    events = realistic_changefeed(args.rows, seed=1, flavor=args.flavor)
    msgs = OpenEncoder(flavor=args.flavor, compression=args.compression).encode(events)
    keys = pa.array([k for k, _ in msgs], pa.binary())
    values = pa.array([v for _, v in msgs], pa.binary())
    nbytes = keys.nbytes + values.nbytes
    schema = ticdc_fast.infer_open_schema(keys[:500], values[:500], table="shop.orders",
                                          compression=args.compression)
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"pyarrow {pa.__version__}, one core")
    print(f"# {args.rows:,} row changes, {len(msgs):,} messages, {nbytes / 1e6:.1f} MB, "
          f"flavor={args.flavor}, compression={args.compression}")
    print(f"{'implementation':<10} {'mode':<8} {'rows':>9} {'seconds':>8} {'MB/s':>9} {'rows/s':>12}")
    results = {}
    for mode in ("generic", "typed"):
        for impl in ("cython", "python"):
            kw = {"table": "shop.orders", "schema": schema} if mode == "typed" else {}
            dec = ticdc_fast.OpenDecoder(implementation=impl, compression=args.compression, **kw)
            secs, batch = best_of(lambda: dec.decode(keys, values),
                                args.repeat if impl == "cython" else 1)
            results[(impl, mode)] = (secs, batch)
            print(f"{impl:<10} {mode:<8} {batch.num_rows:>9,} {secs:>8.3f} {nbytes / secs / 1e6:>9.1f} "
                  f"{batch.num_rows / secs:>12,.0f}")
    for mode in ("generic", "typed"):
        c, p = results[("cython", mode)], results[("python", mode)]
        assert c[1].equals(p[1]), f"{mode}: implementations disagree"
        print(f"speed-up {mode}: {p[0] / c[0]:.1f}x (outputs identical)")


if __name__ == "__main__":
    main()
