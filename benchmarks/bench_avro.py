"""Avro-protocol throughput: the Cython core vs the straightforward fastavro path
(``schemaless_reader`` per message, then ``pyarrow`` from the dicts) and vs the twin.

    python benchmarks/bench_avro.py [--rows 200000] [--repeat 3]

A 10-column TiCDC-style writer schema (connect.parameters, nullable unions, a precise decimal,
a BIGINT UNSIGNED in long mode, the TiDB extension fields), Confluent-framed, one core.
A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import io
import json
import platform
import random
import struct
from decimal import Decimal

import fastavro
import pyarrow as pa

import ticdc_fast

from _common import best_of, pin_one_core


def _col(name, avro, tidb, nullable=True, **extra):
    t = {"type": avro, "connect.parameters": {"tidb_type": tidb}, **extra}
    return {"default": None, "name": name, "type": ["null", t]} if nullable else {"name": name, "type": t}


VALUE_SCHEMA = {
    "type": "record", "name": "orders", "namespace": "default.shop",
    "fields": [
        _col("id", "long", "BIGINT", nullable=False),
        _col("customer_id", "long", "INT UNSIGNED"),
        _col("amount", "bytes", "DECIMAL", logicalType="decimal", precision=12, scale=2),
        _col("price", "double", "DOUBLE"),
        _col("qty", "int", "INT"),
        _col("status", "string", "TEXT"),
        _col("note", "string", "TEXT"),
        _col("created_at", "string", "DATETIME"),
        _col("payload", "bytes", "BLOB"),
        _col("tracking_no", "long", "BIGINT UNSIGNED"),
        {"default": "", "name": "_tidb_op", "type": "string"},
        {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
        {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"},
    ],
}
KEY_SCHEMA = {"type": "record", "name": "orders", "namespace": "default.shop",
              "fields": [_col("id", "long", "BIGINT", nullable=False)]}


def corpus(n, seed=1):
    rnd = random.Random(seed)
    vs = fastavro.parse_schema(VALUE_SCHEMA)
    ks = fastavro.parse_schema(KEY_SCHEMA)
    keys, values = [], []
    statuses = ["pending", "paid", "shipped", "delivered", "cancelled"]
    ts = 449451550317215745
    for i in range(n):
        ts += rnd.randrange(1, 4) << 18
        row = {
            "id": i + 1, "customer_id": rnd.randrange(1, 4_000_000_000),
            "amount": Decimal(rnd.randrange(1, 10 ** 8)).scaleb(-2), "price": rnd.randrange(1, 10 ** 6) / 100,
            "qty": rnd.randrange(1, 50), "status": rnd.choice(statuses),
            "note": None if rnd.random() < 0.7 else "leave at the door, ring twice",
            "created_at": f"2024-05-{1 + i % 28:02d} 12:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000000:06d}",
            "payload": None if rnd.random() < 0.5 else rnd.randbytes(16),
            "tracking_no": rnd.randrange(-(1 << 63), 1 << 63) if rnd.random() < 0.5 else None,
            "_tidb_op": "c" if rnd.random() < 0.8 else "u", "_tidb_commit_ts": ts,
            "_tidb_commit_physical_time": ts >> 18,
        }
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, vs, row)
        values.append(b"\x00" + struct.pack(">i", 2) + buf.getvalue())
        kb = io.BytesIO()
        fastavro.schemaless_writer(kb, ks, {"id": i + 1})
        keys.append(b"\x00" + struct.pack(">i", 1) + kb.getvalue())
    return keys, values


def fastavro_to_arrow(keys, values):
    """What a user would write: one schemaless_reader call per message, then pyarrow."""
    vs = fastavro.parse_schema(VALUE_SCHEMA)
    rows = [fastavro.schemaless_reader(io.BytesIO(v[5:]), vs) for v in values]
    return pa.Table.from_pylist(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    pin_one_core()
    keys, values = corpus(args.rows)
    karr, varr = pa.array(keys, pa.binary()), pa.array(values, pa.binary())
    nbytes = sum(map(len, keys)) + sum(map(len, values))
    schemas = {1: json.dumps(KEY_SCHEMA), 2: json.dumps(VALUE_SCHEMA)}
    typed_schema = pa.schema([("id", pa.int64()), ("customer_id", pa.int64()), ("amount", pa.decimal128(12, 2)),
                              ("price", pa.float64()), ("qty", pa.int32()), ("status", pa.string()),
                              ("note", pa.string()), ("created_at", pa.timestamp("us")),
                              ("payload", pa.binary()), ("tracking_no", pa.decimal128(20, 0))])
    print(f"# {platform.machine()}, Python {platform.python_version()}, pyarrow {pa.__version__}, "
          f"fastavro {fastavro.__version__}, one core; {args.rows:,} rows, {nbytes / 1e6:.1f} MB")
    print(f"{'path':<28} {'seconds':>8} {'MB/s':>8} {'rows/s':>12}")


    results = {}
    runs = [
        ("fastavro -> pyarrow", lambda: fastavro_to_arrow(keys, values), 1),
        ("ticdc_fast cython generic", lambda: ticdc_fast.AvroDecoder(schemas=schemas, implementation="cython").decode(karr, varr), args.repeat),
        ("ticdc_fast cython typed", lambda: ticdc_fast.AvroDecoder(schemas=schemas, table="shop.orders", schema=typed_schema, implementation="cython").decode(karr, varr), args.repeat),
        ("ticdc_fast python generic", lambda: ticdc_fast.AvroDecoder(schemas=schemas, implementation="python").decode(karr, varr), 1),
    ]
    for name, fn, rep in runs:
        secs, out = best_of(fn, rep)
        results[name] = (secs, out)
        print(f"{name:<28} {secs:>8.3f} {nbytes / secs / 1e6:>8.1f} {args.rows / secs:>12,.0f}")
    base = results["fastavro -> pyarrow"][0]
    for name in ("ticdc_fast cython generic", "ticdc_fast cython typed"):
        print(f"speed-up {name} vs fastavro: {base / results[name][0]:.1f}x")
    print(f"speed-up cython generic vs twin: "
          f"{results['ticdc_fast python generic'][0] / results['ticdc_fast cython generic'][0]:.1f}x")


if __name__ == "__main__":
    main()
