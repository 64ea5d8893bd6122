"""``ticdc-fast`` / ``python -m ticdc_fast``: demo, decode, schema, capture."""
from __future__ import annotations

import argparse
import os
import sys
import time


def _best_of(n, fn):
    best, out = float("inf"), None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _progress(total=None, unit="msg", desc=""):
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, file=sys.stderr,
                disable=os.environ.get("TICDC_FAST_NO_PROGRESS") == "1")


# ------------------------------------------------------------------------------------ decode
def _make_decoder(args, table=None, schema=None):
    from .spark.decoding import make_decoder
    opts = {}
    if args.timezone and args.protocol != "avro":
        opts["timezone"] = args.timezone
    if args.compression and args.protocol in ("open", "simple-json", "simple-avro"):
        opts["compression"] = args.compression
    if args.protocol == "avro":
        opts["registry"] = args.registry
        if args.timezone:
            opts["timezone"] = args.timezone
    kw = {}
    if schema is not None:
        kw = {"table": table, "schema": schema}
    return make_decoder(args.protocol, **kw, **opts)


def _typed_schema(args, keys, values):
    """The table's Arrow schema (Spark-accepted variant) from the first chunk of messages."""
    from .arrow_types import infer_open_schema, spark_schema
    if args.protocol == "open":
        return infer_open_schema(keys, values, table=args.table, compression=args.compression or "none", spark=True)
    if args.protocol.startswith("simple"):
        import ticdc_fast
        probe = ticdc_fast.SimpleDecoder(args.protocol.split("-")[1], compression=args.compression or "none")
        probe.decode(None, values)
        db, tb = args.table.split(".", 1)
        ts = probe.table_schema(db, tb)
        if ts is None:
            raise SystemExit(f"error: no BOOTSTRAP/DDL for {args.table} in the first messages")
        from .simple import arrow_schema
        return arrow_schema(ts, spark=True)
    from .spark.schemas import avro_table_schema
    for v in values:
        if v and v[0] == 0 and len(v) >= 5:
            return avro_table_schema(args.registry, int.from_bytes(v[1:5], "big"))[2]
    raise SystemExit("error: no Avro row in the first messages to take the schema from")


def _chunks_from_topic(args):
    from .kafka_io import consume_all
    yield from consume_all(args.bootstrap, args.topic, chunk=args.batch_size)


def _cmd_decode(args) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .capture import read_capture
    from .errors import DecodeError

    if bool(args.input) == bool(args.topic):
        raise SystemExit("error: give --input FILE (kcat -J capture) or --bootstrap/--topic")
    if args.protocol == "avro" and not args.registry:
        raise SystemExit("error: the avro protocol needs --registry URL")
    total = os.path.getsize(args.input) if args.input else None
    bar = _progress(total=total, unit="B" if total else "msg", desc="decode")
    chunks = (read_capture(args.input, args.batch_size, progress=bar.update) if args.input
              else _chunks_from_topic(args))
    writer = None
    decoder = None
    rows = msgs = 0
    t_decode = 0.0
    try:
        for keys, values, parts, offs in chunks:
            if decoder is None:
                schema = _typed_schema(args, keys, values) if args.table else None
                decoder = _make_decoder(args, args.table, schema)
            t0 = time.perf_counter()
            try:
                batch = decoder.decode(keys, values, partitions=parts, offsets=offs)
            except DecodeError as exc:
                if exc.message_index is not None:
                    exc.args = (f"{exc.args[0]} [Kafka partition {parts[exc.message_index]}, offset "
                                f"{offs[exc.message_index]}]",)
                raise
            t_decode += time.perf_counter() - t0
            if writer is None:
                writer = pq.ParquetWriter(args.output, batch.schema)
            writer.write_batch(batch)
            rows += batch.num_rows
            msgs += len(values)
            if not total:
                bar.update(len(values))
    finally:
        bar.close()
        if writer is not None:
            writer.close()
    if writer is None:
        print("no messages: nothing written", file=sys.stderr)
        return 1
    print(f"{msgs:,} messages → {rows:,} rows in {args.output} "
          f"(decode {t_decode:.2f} s, {msgs / max(t_decode, 1e-9):,.0f} msg/s)")
    return 0


def _cmd_capture(args) -> int:
    from .capture import write_capture
    from .kafka_io import consume_all

    def records():
        for keys, values, parts, offs in consume_all(args.bootstrap, args.topic):
            yield from zip(keys, values, parts, offs)
    n = write_capture(args.output, records(), topic=args.topic)
    print(f"{n:,} messages → {args.output}")
    return 0


# ------------------------------------------------------------------------------------ schema
def _cmd_schema(args) -> int:
    from .capture import read_capture
    from .spark.schemas import spark_ddl

    if not args.table:
        raise SystemExit("error: --table db.tbl is required")
    chunk = next(read_capture(args.input, args.sample)) if args.input else next(_chunks_from_topic(args))
    keys, values, _, _ = chunk
    arrow = _typed_schema(args, keys, values)
    from pyspark.sql.pandas.types import from_arrow_schema
    print("Arrow schema (Spark-accepted variant):")
    for f in arrow:
        print(f"  {f.name}: {f.type}")
    print("\nSpark DDL:")
    print("  " + spark_ddl(from_arrow_schema(arrow)))
    return 0


# ------------------------------------------------------------------------------------ demo
def _cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(rows=args.rows, seed=args.seed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ticdc-fast", description="TiCDC Kafka messages → Arrow / Spark")
    sub = parser.add_subparsers(dest="command")

    demo = sub.add_parser("demo", help="local broker + changefeed + Spark pipeline (the README's main command)")
    demo.add_argument("--rows", type=int, default=100_000)
    demo.add_argument("--seed", type=int, default=7)

    def common(p, typed=True):
        p.add_argument("--protocol", required=True, choices=("open", "simple-json", "simple-avro", "avro"))
        p.add_argument("--input", help="a capture file (kcat -C -J output, one JSON record per line)")
        p.add_argument("--bootstrap", help="Kafka bootstrap servers (instead of --input)")
        p.add_argument("--topic", help="Kafka topic (with --bootstrap)")
        p.add_argument("--registry", help="schema registry URL (avro protocol)")
        p.add_argument("--timezone", default="UTC", help="TiCDC server time zone (TIMESTAMP values)")
        p.add_argument("--compression", choices=("none", "snappy", "lz4"), default="none")
        p.add_argument("--table", help="db.tbl: typed output of that table (schema inferred from the input)")

    dec = sub.add_parser("decode", help="messages (capture file or topic) → Parquet")
    common(dec)
    dec.add_argument("--output", "-o", required=True, help="Parquet file to write")
    dec.add_argument("--batch-size", type=int, default=50_000)

    sch = sub.add_parser("schema", help="print the Spark DDL and Arrow schema of a table")
    common(sch)
    sch.add_argument("--sample", type=int, default=20_000, help="messages to look at")
    sch.set_defaults(batch_size=20_000)

    cap = sub.add_parser("capture", help="a topic → capture file (kcat -J format)")
    cap.add_argument("--bootstrap", required=True)
    cap.add_argument("--topic", required=True)
    cap.add_argument("--output", "-o", required=True)

    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        if args.command is None:
            args = demo.parse_args([])
        return _cmd_demo(args)
    try:
        return {"decode": _cmd_decode, "schema": _cmd_schema, "capture": _cmd_capture}[args.command](args)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:   # DecodeError is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
