"""Simple-protocol throughput: Cython core vs the pure-Python twin, JSON and Avro encodings,
generic and typed output.

    python benchmarks/bench_simple.py [--rows 200000] [--repeat 3]

One realistic stream (``ticdc_fast.testing.simple_changefeed``: BOOTSTRAP, ~11 mixed columns,
INSERT/UPDATE/DELETE, WATERMARKs) decoded on one core; MB/s of Kafka value bytes and rows/s,
best of --repeat.  A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import platform

import pyarrow as pa

import ticdc_fast

from _common import best_of, pin_one_core
from ticdc_fast.simple import arrow_schema
from ticdc_fast.testing import SimpleEncoder, simple_changefeed




def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    pin_one_core()

    events = simple_changefeed(args.rows, seed=1)
    print(f"# {platform.machine()}, Python {platform.python_version()}, pyarrow {pa.__version__}, one core")
    print(f"{'encoding':<8} {'impl':<8} {'mode':<8} {'rows':>9} {'seconds':>8} {'MB/s':>8} {'rows/s':>11}")
    for encoding in ("json", "avro"):
        values = [v for _, v in SimpleEncoder(encoding).encode(events)]
        nbytes = sum(map(len, values))
        arr = pa.array(values, pa.binary())
        probe = ticdc_fast.SimpleDecoder(encoding, implementation="python")
        probe.decode(None, values[:1])
        ts = probe.table_schema("shop", "orders")
        results = {}
        for mode in ("generic", "typed"):
            for impl in ("cython", "python"):
                kw = {"table": "shop.orders", "schema": arrow_schema(ts)} if mode == "typed" else {}

                def run():  # a fresh decoder each time: the stream starts with its BOOTSTRAP
                    return ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw).decode(None, arr)
                secs, batch = best_of(run, args.repeat if impl == "cython" else 1)
                results[(impl, mode)] = (secs, batch)
                print(f"{encoding:<8} {impl:<8} {mode:<8} {batch.num_rows:>9,} {secs:>8.3f} "
                      f"{nbytes / secs / 1e6:>8.1f} {batch.num_rows / secs:>11,.0f}")
        for mode in ("generic", "typed"):
            c, p = results[("cython", mode)], results[("python", mode)]
            assert c[1].equals(p[1]), f"{encoding}/{mode}: implementations disagree"
            print(f"speed-up {encoding} {mode}: {p[0] / c[0]:.1f}x (outputs identical)")


if __name__ == "__main__":
    main()
