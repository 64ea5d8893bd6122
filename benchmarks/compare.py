"""ticdc_fast against what users run today, on the same bytes, one core, one run.

    python benchmarks/compare.py [--rows 200000] [--repeat 3] [--no-spark] [--mem-messages 10000]
    python benchmarks/compare.py --corpus realistic [--rows 200000]
    PYTHONPATH=. python benchmarks/compare.py --ticdc-source [--rows 100000] [--spark-repeat 5]

``--ticdc-source`` runs only the comparison of the two Kafka paths on a real (local Tansu) broker:
``format("ticdc")`` (decoding inside the data source) against ``format("ticdc_kafka")`` +
``ticdc_fast.spark.decode`` (mapInArrow), open protocol, 2 partitions, noop sink, ``local[1]`` and
``local[2]``, the two alternating, warm-up + best of ``--spark-repeat``; not pinned unless
``--cpu`` (``local[2]`` needs both cores).

Needs the extras in ``benchmarks/requirements.txt`` (msgspec, pysimdjson; pyspark, pandas and Java 17
for the Spark part).  The process is pinned to one CPU with ``os.sched_setaffinity`` before anything
starts, so the Spark JVM and its Python workers (children of this process) share that same CPU, and
Spark runs with ``master=local[1]``.  Every ratio is computed inside this run.

Streams (typed output to one table's columns, INSERT/UPDATE/DELETE mixed, ``--rows`` row changes):

* Open protocol: ``testing.realistic_changefeed`` (11 columns: BIGINT, INT UNSIGNED, DECIMAL(12,2),
  DOUBLE, SMALLINT, VARCHAR, TEXT (base64 on the wire), DATETIME(6), TIMESTAMP, VARBINARY (Go
  strconv.Quote on the wire), TINYINT), tiflow flavour, max-batch-size 16 events per Kafka message.
* Simple protocol JSON and Avro: ``testing.simple_changefeed`` (12 columns: the same plus ENUM and
  BIGINT UNSIGNED; TIMESTAMP as {location, value}; one row change per Kafka message).
* Avro protocol: the 10-column TiCDC writer schema of ``bench_avro.py`` (Confluent framing).

Contenders per protocol: the Cython core (typed; generic too), its pure-Python twin (typed), the
straightforward Python decoder a user would write (orjson -> pyarrow; fastavro ``schemaless_reader``
-> ``pa.Table.from_pylist``), raw limits for the same bytes (pysimdjson / msgspec parse that builds no
objects, memcpy), and in Spark: ``ticdc_fast.spark.decode`` (mapInArrow) vs ``from_json`` + casts
(simple JSON) and vs a Python UDF (open), on a cached Kafka-shaped DataFrame, noop sink.

Then the peak memory of a ticdc_fast decode of ``--mem-messages`` messages per protocol, in a fresh
subprocess (VmHWM reset through /proc/self/clear_refs, read from /proc/self/status).
"""
from __future__ import annotations

import argparse
import base64
import codecs
import gc
import io
import json
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import fastavro  # noqa: E402
import orjson  # noqa: E402
import pyarrow as pa  # noqa: E402

import ticdc_fast  # noqa: E402
from ticdc_fast.simple import arrow_schema as simple_table_arrow_schema  # noqa: E402
from ticdc_fast.testing import OpenEncoder, SimpleEncoder, realistic_changefeed, simple_changefeed  # noqa: E402

from _common import best_of, pin_one_core  # noqa: E402
import bench_avro  # noqa: E402

SIMPLE_AVSC = os.path.join(os.path.dirname(ticdc_fast.__file__), "simple", "simple_protocol.avsc")
TABLE = "shop.orders"
AVRO_TYPED = pa.schema([("id", pa.int64()), ("customer_id", pa.int64()), ("amount", pa.decimal128(12, 2)),
                        ("price", pa.float64()), ("qty", pa.int32()), ("status", pa.string()),
                        ("note", pa.string()), ("created_at", pa.timestamp("us")),
                        ("payload", pa.binary()), ("tracking_no", pa.decimal128(20, 0))])
UTC = timezone.utc


# ============================================================================ results
@dataclass
class Result:
    contender: str
    seconds: float
    nbytes: int
    rows: int
    note: str = ""

    @property
    def mbps(self):
        return self.nbytes / self.seconds / 1e6

    @property
    def rps(self):
        return self.rows / self.seconds


@dataclass
class Section:
    title: str
    nbytes: int
    rows: int
    messages: int
    base: str = ""                   # contender every ratio is taken against
    results: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def add(self, name, seconds, note="", rows=None):
        r = Result(name, seconds, self.nbytes, self.rows if rows is None else rows, note)
        self.results[name] = r
        print(f"    {name:<52} {seconds:>8.3f} s", flush=True)
        return r

    def time(self, name, fn, repeat, note=""):
        gc.collect()
        secs, out = best_of(fn, repeat)
        self.add(name, secs, note)
        return out

    def print(self):
        base = self.results.get(self.base)
        print(f"\n## {self.title}: {self.messages:,} messages, {self.rows:,} row changes, "
              f"{self.nbytes / 1e6:.1f} MB in")
        print(f"{'contender':<54} {'seconds':>8} {'MB/s':>9} {'rows/s':>12} {'vs base':>8}")
        for r in self.results.values():
            ratio = f"{base.seconds / r.seconds:>7.2f}x" if base else ""
            print(f"{r.contender:<54} {r.seconds:>8.3f} {r.mbps:>9.1f} {r.rps:>12,.0f} {ratio:>8}"
                  + (f"  [{r.note}]" if r.note else ""))
        if base:
            print(f"(vs base = seconds of '{self.base}' / seconds of the contender; >1 faster)")
        for n in self.notes:
            print(f"  * {n}")


# ============================================================================ helpers
def raw_limits(sec: Section, docs, joined_values, repeat, label):
    """Parse-only and memcpy ceilings over exactly the JSON documents the decoders read."""
    if docs is not None:
        import msgspec
        import simdjson
        parser = simdjson.Parser()
        parse = parser.parse

        def simd():
            for d in docs:
                parse(d)          # lazy Object proxy, dropped at once: no Python objects built

        raw = msgspec.json.Decoder(msgspec.Raw).decode

        def msg():
            for d in docs:
                raw(d)            # validates and skips the document; one Raw per doc

        sec.time(f"limit: pysimdjson Parser.parse per {label} (lazy)", simd, repeat)
        sec.time(f"limit: msgspec.json decode(type=Raw) per {label}", msg, repeat)
    buf = pa.py_buffer(joined_values)
    sec.time("limit: memcpy, b''.join(messages)", lambda: b"".join(sec._msgs), repeat)
    sec.time("limit: memcpy, one bytearray copy of the buffer", lambda: bytearray(buf), repeat)


def binary_array(xs):
    return pa.array(xs, pa.binary())


def table_equal_report(ours: pa.RecordBatch, theirs: pa.RecordBatch, skip=()):
    """Column names whose values differ (plus the number of differing rows), ignoring ``skip``."""
    out = []
    assert ours.num_rows == theirs.num_rows, (ours.num_rows, theirs.num_rows)
    for name in theirs.schema.names:
        if name in skip:
            continue
        a, b = ours.column(name), theirs.column(name)
        if a.type != b.type:
            a = a.cast(b.type)
        if not a.equals(b):
            diff = sum(1 for x, y in zip(a.to_pylist(), b.to_pylist()) if x != y)
            out.append(f"{name} ({diff} rows)")
    return out


# ============================================================================ open: user code
_U64 = struct.Struct(">Q").unpack_from
_b64 = base64.b64decode


def go_unquote_simplified(s: str) -> bytes:
    """Go strconv.Quote body -> bytes.  SIMPLIFIED: handles \\xNN, \\a\\b\\f\\n\\r\\t\\v\\\\\\" and raw
    UTF-8, but not \\uNNNN / \\UNNNNNNNN (Go writes those for non-printable runes, e.g. U+0085)."""
    if "\\" not in s:
        return s.encode()
    return codecs.escape_decode(s.encode())[0]


def open_user_plan(schema: pa.Schema, arrow_casts: bool):
    """Per-column converters a user writes knowing the table (faster than dispatching on 't')."""
    ident = None
    if arrow_casts:   # leave strings for Arrow casts after the loop
        conv = {"amount": ident, "created_at": ident, "updated_at": ident}
    else:
        conv = {"amount": Decimal, "created_at": datetime.fromisoformat,
                "updated_at": lambda s: datetime.fromisoformat(s).replace(tzinfo=UTC)}
    conv["note"] = lambda s: _b64(s).decode()             # TEXT: base64 of the UTF-8 bytes
    conv["payload"] = go_unquote_simplified                 # VARBINARY: Go-quoted
    return [(name, conv.get(name)) for name in schema.names]


def orjson_open(keys, values, schema: pa.Schema, arrow_casts=False) -> pa.RecordBatch:
    """What a user writes: walk the framing in Python, orjson.loads every key and value event,
    keep this table's row events, convert each column to the typed Arrow column."""
    plan = open_user_plan(schema, arrow_casts)
    lists = [[] for _ in plan]
    cols = list(zip(plan, lists))
    ops, tss = [], []
    loads = orjson.loads
    for k, v in zip(keys, values):
        km, vm = memoryview(k), memoryview(v)
        kp, vp, kn = 8, 0, len(k)
        while kp < kn:
            (kl,) = _U64(k, kp)
            kp += 8
            key = loads(km[kp:kp + kl])
            kp += kl
            (vl,) = _U64(v, vp)
            vp += 8
            vdoc = vm[vp:vp + vl]
            vp += vl
            if key["t"] != 1 or key.get("tbl") != "orders" or key.get("scm") != "shop":
                continue
            val = loads(vdoc)
            img = val.get("u")
            if img is None:
                img, op = val["d"], "DELETE"
            else:
                op = "UPDATE" if "p" in val else "INSERT"
            ops.append(op)
            tss.append(key["ts"])
            for (name, fn), lst in cols:
                c = img.get(name)
                x = None if c is None else c["v"]
                lst.append(x if x is None or fn is None else fn(x))
    arrays = [pa.array(ops, pa.string()), pa.array(tss, pa.int64())]
    for f, lst in zip(schema, lists):
        if arrow_casts and f.name in ("amount", "created_at", "updated_at"):
            a = pa.array(lst, pa.string())
            if pa.types.is_timestamp(f.type) and f.type.tz is not None:
                a = a.cast(pa.timestamp(f.type.unit)).cast(f.type)   # wall clock in UTC (server tz)
            else:
                a = a.cast(f.type)
            arrays.append(a)
        else:
            arrays.append(pa.array(lst, f.type))
    names = ["_op", "_commit_ts"] + schema.names
    return pa.RecordBatch.from_arrays(arrays, names=names)


def open_event_docs(keys, values):
    """Every key and value JSON document of every event (for the parse-only limits)."""
    docs = []
    for k, v in zip(keys, values):
        kp, vp, kn = 8, 0, len(k)
        while kp < kn:
            (kl,) = _U64(k, kp)
            docs.append(k[kp + 8:kp + 8 + kl])
            kp += 8 + kl
            (vl,) = _U64(v, vp)
            if vl:
                docs.append(v[vp + 8:vp + 8 + vl])
            vp += 8 + vl
    return docs


# ============================================================================ simple: user code
_ZONES: dict = {}


def _zone(name):
    z = _ZONES.get(name)
    if z is None:
        z = _ZONES[name] = ZoneInfo(name)
    return z


def orjson_simple(values, schema: pa.Schema, arrow_casts=False) -> pa.RecordBatch:
    """What a user writes for simple-protocol JSON: orjson.loads per message, take ``data`` (or
    ``old`` for DELETE), convert the text values to the typed columns; ENUM elements from the
    BOOTSTRAP/DDL tableSchema."""
    loads = orjson.loads
    elements = {}
    ops, tss = [], []
    names = schema.names
    lists = {n: [] for n in names}
    if arrow_casts:
        def ts_conv(d):   # TIMESTAMP {location, value}: a zone per value, so no columnar cast
            return datetime.fromisoformat(d["value"]).replace(tzinfo=_zone(d["location"]))
        conv = {"id": None, "customer_id": None, "amount": None, "price": None, "qty": None,
                "created_at": None, "tracking_no": None, "updated_at": ts_conv}
    else:
        def ts_conv(d):
            return datetime.fromisoformat(d["value"]).replace(tzinfo=_zone(d["location"]))
        conv = {"id": int, "customer_id": int, "amount": Decimal, "price": float, "qty": int,
                "created_at": datetime.fromisoformat, "tracking_no": int, "updated_at": ts_conv}
    conv["payload"] = _b64
    plan = [(n, conv.get(n), lists[n]) for n in names if n != "channel"]
    chan = lists.get("channel")
    for v in values:
        m = loads(v)
        t = m["type"]
        if t == "INSERT" or t == "UPDATE":
            img = m["data"]
        elif t == "DELETE":
            img = m["old"]
        else:
            if t in ("BOOTSTRAP", "DDL") and m.get("tableSchema"):
                ts = m["tableSchema"]
                if ts["schema"] == "shop" and ts["table"] == "orders":
                    for c in ts["columns"]:
                        if c["dataType"].get("elements"):
                            elements[c["name"]] = c["dataType"]["elements"]
            continue
        if m["table"] != "orders" or m["database"] != "shop":
            continue
        ops.append(t)
        tss.append(m["commitTs"])
        for name, fn, lst in plan:
            x = img.get(name)
            lst.append(x if x is None or fn is None else fn(x))
        if chan is not None:
            x = img.get("channel")
            chan.append(None if x is None else (elements["channel"][int(x) - 1] if x != "0" else ""))
    arrays = [pa.array(ops, pa.string()), pa.array(tss, pa.int64())]
    for f in schema:
        lst = lists[f.name]
        if arrow_casts and f.name in ("id", "customer_id", "amount", "price", "qty", "created_at", "tracking_no"):
            arrays.append(pa.array(lst, pa.string()).cast(f.type))
        else:
            arrays.append(pa.array(lst, f.type))
    return pa.RecordBatch.from_arrays(arrays, names=["_op", "_commit_ts"] + names)


# ============================================================================ avro: user code
def fastavro_simple(values, parsed) -> pa.Table:
    """fastavro schemaless_reader per message, keep DML, flatten, pa.Table.from_pylist."""
    rows = []
    read = fastavro.schemaless_reader
    for v in values:
        rec = read(io.BytesIO(v), parsed)
        if rec["type"] != "DML":
            continue
        p = rec["payload"]
        img = p["old"] if p["type"] == "DELETE" else p["data"]
        row = {"_op": p["type"], "_commit_ts": p["commitTs"]}
        row.update(img)
        rows.append(row)
    return pa.Table.from_pylist(rows)


# ============================================================================ sections
def dml_only(batch: pa.RecordBatch) -> pa.RecordBatch:
    import pyarrow.compute as pc
    return batch.filter(pc.is_in(batch.column("_op"), pa.array(["INSERT", "UPDATE", "DELETE"])))


def run_open(args, S):
    events = realistic_changefeed(args.rows, seed=1, flavor="tiflow")
    msgs = OpenEncoder(flavor="tiflow").encode(events)
    del events
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    karr, varr = binary_array(keys), binary_array(values)
    nbytes = sum(map(len, keys)) + sum(map(len, values))
    schema = ticdc_fast.infer_open_schema(karr[:500], varr[:500], table=TABLE, spark=True)
    sec = Section("Open protocol (tiflow, 16 events/message)", nbytes, args.rows, len(msgs),
                  base="ticdc_fast Cython typed")
    sec._msgs = keys + values
    print(f"# {sec.title}", flush=True)
    typed = dict(table=TABLE, schema=schema, control_events=False)
    out = sec.time("ticdc_fast Cython typed", lambda: ticdc_fast.OpenDecoder(implementation="cython", **typed)
                   .decode(karr, varr), args.repeat)
    sec.time("ticdc_fast Cython generic", lambda: ticdc_fast.OpenDecoder(implementation="cython")
             .decode(karr, varr), args.repeat)
    twin = sec.time("ticdc_fast twin (pure Python) typed",
                    lambda: ticdc_fast.OpenDecoder(implementation="python", **typed).decode(karr, varr), 1)
    warnings.simplefilter("ignore", DeprecationWarning)   # escape_decode on Go's \u escapes
    user = sec.time("orjson -> pyarrow (Decimal/datetime per value)",
                    lambda: orjson_open(keys, values, schema), args.user_repeat)
    user2 = sec.time("orjson -> pyarrow (strings + Arrow casts)",
                     lambda: orjson_open(keys, values, schema, arrow_casts=True), args.user_repeat)
    assert out.num_rows == args.rows, (out.num_rows, args.rows)
    assert out.equals(twin), "Cython and twin disagree"
    for label, b in (("Decimal/datetime", user), ("Arrow casts", user2)):
        bad = table_equal_report(out, b)
        sec.notes.append(f"orjson ({label}) output vs ticdc_fast: "
                         + ("identical" if not bad else "differs in " + ", ".join(bad)))
    sec.notes.append("orjson baselines: VARBINARY Go-unquote SIMPLIFIED (codecs.escape_decode; Go's \\u/\\U "
                     "escapes of non-printable runes are left as text, hence any 'payload' difference above); "
                     "per-column converters hard-coded by column name (no dispatch on the 't' code) and no "
                     "range/exactness checks, so they do less work than ticdc_fast")
    docs = open_event_docs(keys, values)
    raw_limits(sec, docs, b"".join(keys + values), args.repeat, "event doc")
    sec.notes.append(f"parse-only limits parse the {len(docs):,} key+value event documents of the same messages")
    S["open"] = sec
    return dict(keys=keys, values=values, schema=schema)


def simple_corpus(args, encoding):
    events = simple_changefeed(args.rows, seed=1)
    values = [v for _, v in SimpleEncoder(encoding).encode(events)]
    probe = ticdc_fast.SimpleDecoder(encoding, implementation="python")
    probe.decode(None, values[:1])
    return values, simple_table_arrow_schema(probe.table_schema("shop", "orders"))


def run_simple_json(args, S):
    values, schema = simple_corpus(args, "json")
    varr = binary_array(values)
    nbytes = sum(map(len, values))
    sec = Section("Simple protocol, JSON (1 event/message)", nbytes, args.rows, len(values),
                  base="ticdc_fast Cython typed")
    sec._msgs = values
    print(f"# {sec.title}", flush=True)
    typed = dict(table=TABLE, schema=schema, control_events=False)
    out = sec.time("ticdc_fast Cython typed", lambda: ticdc_fast.SimpleDecoder("json", implementation="cython", **typed)
                   .decode(None, varr), args.repeat)
    sec.time("ticdc_fast Cython generic", lambda: ticdc_fast.SimpleDecoder("json", implementation="cython")
             .decode(None, varr), args.repeat)
    twin = sec.time("ticdc_fast twin (pure Python) typed",
                    lambda: ticdc_fast.SimpleDecoder("json", implementation="python", **typed).decode(None, varr), 1)
    user = sec.time("orjson -> pyarrow (Decimal/datetime per value)",
                    lambda: orjson_simple(values, schema), args.user_repeat)
    user2 = sec.time("orjson -> pyarrow (strings + Arrow casts)",
                     lambda: orjson_simple(values, schema, arrow_casts=True), args.user_repeat)
    out = dml_only(out)
    assert out.num_rows == args.rows, (out.num_rows, args.rows)
    assert out.equals(dml_only(twin)), "Cython and twin disagree"
    for label, b in (("Decimal/datetime", user), ("Arrow casts", user2)):
        bad = table_equal_report(out, b)
        sec.notes.append(f"orjson ({label}) output vs ticdc_fast: "
                         + ("identical" if not bad else "differs in " + ", ".join(bad)))
    sec.notes.append("orjson baselines: columns hard-coded by name, no checksum/range checks, no schema-version "
                     "tracking or holding rows until their schema arrives (ticdc_fast does all of that)")
    raw_limits(sec, values, b"".join(values), args.repeat, "message")
    S["simple-json"] = sec
    return dict(values=values, schema=schema)


def run_simple_avro(args, S):
    values, schema = simple_corpus(args, "avro")
    varr = binary_array(values)
    nbytes = sum(map(len, values))
    sec = Section("Simple protocol, Avro (1 event/message)", nbytes, args.rows, len(values),
                  base="ticdc_fast Cython typed")
    sec._msgs = values
    print(f"# {sec.title}", flush=True)
    typed = dict(table=TABLE, schema=schema, control_events=False)
    out = sec.time("ticdc_fast Cython typed", lambda: ticdc_fast.SimpleDecoder("avro", implementation="cython", **typed)
                   .decode(None, varr), args.repeat)
    sec.time("ticdc_fast Cython generic", lambda: ticdc_fast.SimpleDecoder("avro", implementation="cython")
             .decode(None, varr), args.repeat)
    twin = sec.time("ticdc_fast twin (pure Python) typed",
                    lambda: ticdc_fast.SimpleDecoder("avro", implementation="python", **typed).decode(None, varr), 1)
    parsed = fastavro.parse_schema(json.load(open(SIMPLE_AVSC)))
    fa = sec.time("fastavro schemaless_reader -> pa.Table.from_pylist",
                  lambda: fastavro_simple(values, parsed), args.user_repeat)
    assert dml_only(out).num_rows == args.rows
    assert dml_only(out).equals(dml_only(twin)), "Cython and twin disagree"
    assert fa.num_rows == args.rows
    sec.notes.append("fastavro baseline: from_pylist INFERS types (TIMESTAMP stays a {location,value} struct, "
                     "BIGINT UNSIGNED a {value} struct, DECIMAL a string, ENUM an index): it does less "
                     f"than the typed conversion; its schema: {', '.join(f'{f.name}:{f.type}' for f in fa.schema)[:400]}")
    raw_limits(sec, None, b"".join(values), args.repeat, "message")
    S["simple-avro"] = sec


def run_avro(args, S):
    keys, values = bench_avro.corpus(args.rows)
    karr, varr = binary_array(keys), binary_array(values)
    nbytes = sum(map(len, keys)) + sum(map(len, values))
    schemas = {1: json.dumps(bench_avro.KEY_SCHEMA), 2: json.dumps(bench_avro.VALUE_SCHEMA)}
    sec = Section("Avro protocol (Confluent framing, key + value)", nbytes, args.rows, len(values),
                  base="ticdc_fast Cython typed")
    sec._msgs = keys + values
    print(f"# {sec.title}", flush=True)
    typed = dict(table=TABLE, schema=AVRO_TYPED)
    out = sec.time("ticdc_fast Cython typed", lambda: ticdc_fast.AvroDecoder(schemas=schemas, implementation="cython",
                                                                            **typed).decode(karr, varr), args.repeat)
    sec.time("ticdc_fast Cython generic", lambda: ticdc_fast.AvroDecoder(schemas=schemas, implementation="cython")
             .decode(karr, varr), args.repeat)
    twin = sec.time("ticdc_fast twin (fastavro-based) typed",
                    lambda: ticdc_fast.AvroDecoder(schemas=schemas, implementation="python", **typed)
                    .decode(karr, varr), 1)
    fa = sec.time("fastavro schemaless_reader -> pa.Table.from_pylist",
                  lambda: bench_avro.fastavro_to_arrow(keys, values), args.user_repeat)
    assert out.num_rows == args.rows and fa.num_rows == args.rows
    assert out.equals(twin), "Cython and twin disagree"
    sec.notes.append("fastavro baseline decodes the values only (the key repeats the id) and lets from_pylist "
                     "infer types (created_at stays a string, BIGINT UNSIGNED a signed long, no _op mapping); "
                     "MB/s still counts key+value bytes for every contender")
    raw_limits(sec, None, b"".join(keys + values), args.repeat, "message")
    S["avro"] = sec


def run_realistic(args, S):
    """``--corpus realistic``: the asv mix ``realistic5`` (two tables interleaved in one topic,
    5 columns: BIGINT PK, VARCHAR of CJK/emoji text, DOUBLE with 16-17 significant digits,
    TIMESTAMP(3), TINYINT; 10% NULLs) in every protocol, generic and typed (table ``bench.t``)."""
    import asv_corpora as A
    changes = A.change_stream("realistic5", args.rows)
    for protocol in A.PROTOCOLS:
        corpus = A.build(protocol, "realistic5", changes)
        keys, values = A.unpack(corpus["keys"]), A.unpack(corpus["values"])
        nbytes = A.payload_bytes(keys, values)
        sec = Section(f"realistic5 {protocol} (2 tables, 5 columns, full-precision doubles)", nbytes,
                      args.rows, len(values), base="ticdc_fast Cython generic")
        key_list = [] if keys is None else keys.to_pylist()
        sec._msgs = [m for m in key_list + values.to_pylist() if m is not None]
        print(f"# {sec.title}", flush=True)
        generic = A.make_decoder(protocol, corpus, "generic")
        typed = A.make_decoder(protocol, corpus, "typed")
        sec.time("ticdc_fast Cython generic", lambda: generic.decode(keys, values), args.repeat)
        sec.time("ticdc_fast Cython typed (one of the 2 tables)", lambda: typed.decode(keys, values), args.repeat)
        docs = None
        if protocol == "open":
            docs = open_event_docs(keys.to_pylist(), values.to_pylist())
        elif protocol == "simple-json":
            docs = values.to_pylist()
        raw_limits(sec, docs, b"".join(sec._msgs), args.repeat,
                   "event doc" if protocol == "open" else "message")
        S[f"realistic5 {protocol}"] = sec


# ============================================================================ Spark
def spark_session(master="local[1]"):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    pp = os.environ.get("PYTHONPATH", "")
    root = os.path.dirname(HERE)   # the workers import ticdc_fast and this file (as ``compare``)
    parts = [x for x in (root, HERE) if x not in pp.split(os.pathsep)]
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(parts + ([pp] if pp else []))
    from pyspark.sql import SparkSession
    t0 = time.perf_counter()
    spark = (SparkSession.builder.master(master).appName("ticdc_fast-compare")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "1")
             .config("spark.sql.adaptive.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(10).count()
    return spark, time.perf_counter() - t0


def kafka_df(spark, keys, values):
    n = len(values)
    t = pa.table({"key": pa.array(keys, pa.binary()) if keys is not None else pa.nulls(n, pa.binary()),
                  "value": pa.array(values, pa.binary()),
                  "partition": pa.array([0] * n, pa.int32()),
                  "offset": pa.arange(0, n) if hasattr(pa, "arange") else pa.array(range(n), pa.int64())})
    df = spark.createDataFrame(t).coalesce(1).cache()
    df.count()
    return df


def noop(df):
    return lambda: df.write.format("noop").mode("overwrite").save()


def consume_only(df, cols):
    """mapInArrow that reads every input batch and yields nothing: the JVM -> Python transfer floor."""
    def f(it):
        for b in it:
            if b.num_rows < 0:
                yield b
    return df.select(*cols).mapInArrow(f, ", ".join(f"{c} binary" for c in cols))


def spark_time(sec, name, df, repeat, note=""):
    """One warm-up run (JIT, Python worker start), then best of ``repeat``."""
    noop(df)()
    return sec.time(name, noop(df), repeat, note)


def open_udf_schema(schema: pa.Schema):
    from ticdc_fast.arrow_types import spark_schema
    from ticdc_fast.spark.decoding import to_spark_struct
    fields = [pa.field("_op", pa.string()), pa.field("_commit_ts", pa.int64())]
    fields += [pa.field(f.name, f.type) for f in spark_schema(schema)]
    return to_spark_struct(pa.schema(fields))


def run_spark(args, S, open_data, sj_data):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    import ticdc_fast.spark as tfs

    print("# Spark local[1]", flush=True)
    import compare as user_code   # by reference, so the UDFs pickle as imports, not by value
    spark, startup = spark_session()
    try:
        # ---------------------------------------------------------------- simple JSON: from_json
        values, schema = sj_data["values"], sj_data["schema"]
        nbytes = sum(map(len, values))
        sec = Section("Spark local[1], simple JSON: cached Kafka-shaped DataFrame -> noop sink", nbytes,
                      args.rows, len(values), base="ticdc_fast.spark.decode('simple-json') (mapInArrow)")
        df = kafka_df(spark, None, values)
        spark_time(sec, "floor: cached scan only -> noop", df.select("value"), args.spark_repeat)
        spark_time(sec, "floor: mapInArrow consume-only (JVM->Python)", consume_only(df, ["value"]), args.spark_repeat)
        dec = tfs.decode(df, "simple-json", table=TABLE, schema=schema, control_events=False)
        spark_time(sec, "ticdc_fast.spark.decode('simple-json') (mapInArrow)", dec, args.spark_repeat)

        img_fields = [T.StructField(f.name, T.StringType()) for f in schema if f.name != "updated_at"]
        img_fields.insert([f.name for f in schema].index("updated_at"), T.StructField(
            "updated_at", T.StructType([T.StructField("location", T.StringType()),
                                        T.StructField("value", T.StringType())])))
        img = T.StructType(img_fields)
        msg = T.StructType([T.StructField("type", T.StringType()), T.StructField("database", T.StringType()),
                            T.StructField("table", T.StringType()), T.StructField("commitTs", T.LongType()),
                            T.StructField("data", img), T.StructField("old", img)])
        m = F.from_json(F.col("value").cast("string"), msg).alias("m")
        parsed = df.select(m).where(F.col("m.type").isin("INSERT", "UPDATE", "DELETE")
                                    & (F.col("m.database") == "shop") & (F.col("m.table") == "orders"))
        im = F.when(F.col("m.type") == "DELETE", F.col("m.old")).otherwise(F.col("m.data"))
        parsed = parsed.select(F.col("m.type").alias("_op"), F.col("m.commitTs").alias("_commit_ts"), im.alias("r"))
        r = lambda c: F.col("r." + c)  # noqa: E731
        fj = parsed.select(
            "_op", "_commit_ts",
            r("id").cast("long").alias("id"), r("customer_id").cast("long").alias("customer_id"),
            r("amount").cast("decimal(12,2)").alias("amount"), r("price").cast("double").alias("price"),
            r("qty").cast("short").alias("qty"), r("status").alias("status"), r("note").alias("note"),
            r("created_at").cast("timestamp_ntz").alias("created_at"),
            F.to_utc_timestamp(r("updated_at.value").cast("timestamp"), r("updated_at.location")).alias("updated_at"),
            F.unbase64(r("payload")).alias("payload"),
            F.element_at(F.array(F.lit("web"), F.lit("app"), F.lit("store")), r("channel").cast("int")).alias("channel"),
            r("tracking_no").cast("decimal(20,0)").alias("tracking_no"))
        spark_time(sec, "Spark from_json(struct of strings) + casts", fj, args.spark_repeat)
        # same answer?
        a = dec.where(F.col("_op").isin("INSERT", "UPDATE", "DELETE")).select(*fj.columns).exceptAll(fj).count()
        b = fj.exceptAll(dec.select(*fj.columns)).count()
        sec.notes.append(f"from_json pipeline vs ticdc_fast rows: {a} / {b} rows differ (each way)")
        sec.notes.append("ticdc_fast's output also carries its trailer columns (_ddl, _ddl_type, _schema_version, "
                         "_handle_key_only, _claim_check_location, _undecodable, _raw, _partition, _offset) that the "
                         "from_json pipeline does not produce; both are written in full to the noop sink")
        sec.notes.append("from_json: schema, ENUM elements and the TIMESTAMP zone handling hand-written for this one "
                         "table; no schema-version tracking, no checks (bad values become NULL, PERMISSIVE)")
        sec.notes.append(f"SparkSession start + first job: {startup:.1f} s (not in any number)")
        df.unpersist()
        S["spark-simple"] = sec

        # ---------------------------------------------------------------- open: Python UDF
        keys, values, oschema = open_data["keys"], open_data["values"], open_data["schema"]
        nbytes = sum(map(len, keys)) + sum(map(len, values))
        sec = Section("Spark local[1], open protocol: cached Kafka-shaped DataFrame -> noop sink", nbytes,
                      args.rows, len(values), base="ticdc_fast.spark.decode('open') (mapInArrow)")
        df = kafka_df(spark, keys, values)
        spark_time(sec, "floor: cached scan only -> noop", df.select("key", "value"), args.spark_repeat)
        spark_time(sec, "floor: mapInArrow consume-only (JVM->Python)", consume_only(df, ["key", "value"]),
                   args.spark_repeat)
        dec = tfs.decode(df, "open", table=TABLE, schema=oschema, control_events=False)
        spark_time(sec, "ticdc_fast.spark.decode('open') (mapInArrow)", dec, args.spark_repeat)

        out_struct = open_udf_schema(oschema)

        # what a pandas-UDF author writes: the orjson decoder, then a pandas frame from the lists
        def user_map_lists(it, _schema=oschema):
            import pandas as pd
            import warnings as w
            w.simplefilter("ignore", DeprecationWarning)
            for pdf in it:
                yield pd.DataFrame(user_code._open_lists(pdf["key"].tolist(), pdf["value"].tolist(), _schema))

        mp = df.select("key", "value").mapInPandas(user_map_lists, out_struct)
        spark_time(sec, "Python UDF: mapInPandas(orjson per event -> pandas)", mp, args.spark_repeat)

        row_t = T.ArrayType(out_struct)

        @F.udf(returnType=row_t)
        def open_rows(k, v, _schema=oschema):
            import warnings as w
            w.simplefilter("ignore", DeprecationWarning)
            cols = user_code._open_lists([k], [v], _schema)
            return list(zip(*cols.values()))

        ud = df.select(F.explode(open_rows("key", "value")).alias("r")).select("r.*")
        spark_time(sec, "Python UDF: @udf -> array<struct> + explode", ud, args.spark_repeat)
        a = dec.select(*mp.columns).exceptAll(mp).count()
        b = mp.exceptAll(dec.select(*mp.columns)).count()
        sec.notes.append(f"mapInPandas UDF vs ticdc_fast rows: {a} / {b} rows differ (each way; the UDF's Go "
                         "unquote is simplified, see the open section)")
        sec.notes.append("the UDFs use the orjson user decoder of the open section (Decimal/datetime per value); "
                         "@udf is Arrow-optimized by default in Spark 4.3")
        df.unpersist()
        S["spark-open"] = sec
    finally:
        spark.stop()


def _open_lists(keys, values, schema):
    b = orjson_open(keys, values, schema)
    return {n: b.column(i).to_pylist() for i, n in enumerate(b.schema.names)}


# ============================================================================ peak memory
def _status(field_name):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field_name)


def mem_child(protocol, path):
    """Runs in a fresh interpreter: decode the file's messages once, report the RSS high-water mark."""
    pin_one_core()
    with pa.OSFile(path) as f:
        batch = pa.ipc.open_file(f).get_batch(0)
    keys, values = batch.column("key"), batch.column("value")
    if protocol == "open":
        schema = ticdc_fast.infer_open_schema(keys[:500], values[:500], table=TABLE, spark=True)

        def make():
            return ticdc_fast.OpenDecoder(implementation="cython", table=TABLE, schema=schema)
    elif protocol in ("simple-json", "simple-avro"):
        enc = protocol.split("-")[1]
        probe = ticdc_fast.SimpleDecoder(enc, implementation="python")
        probe.decode(None, values[:1].to_pylist())
        schema = simple_table_arrow_schema(probe.table_schema("shop", "orders"))
        keys = None

        def make():
            return ticdc_fast.SimpleDecoder(enc, implementation="cython", table=TABLE, schema=schema)
    else:
        schemas = {1: json.dumps(bench_avro.KEY_SCHEMA), 2: json.dumps(bench_avro.VALUE_SCHEMA)}

        def make():
            return ticdc_fast.AvroDecoder(schemas=schemas, implementation="cython", table=TABLE, schema=AVRO_TYPED)
    # warm-up on a few messages (imports, plans, zone tables), then forget it
    make().decode(keys[:50] if keys is not None else None, values[:50])
    dec = make()
    gc.collect()
    reset = True
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")                     # reset VmHWM to the current RSS
    except OSError:
        reset = False
    rss0, hwm0 = _status("VmRSS"), _status("VmHWM")
    t0 = time.perf_counter()
    out = dec.decode(keys, values)
    secs = time.perf_counter() - t0
    hwm1, rss1 = _status("VmHWM"), _status("VmRSS")
    inp = values.nbytes + (keys.nbytes if keys is not None else 0)
    print(json.dumps(dict(protocol=protocol, messages=len(values), rows=out.num_rows, input=inp,
                          output=out.nbytes, rss0=rss0, hwm0=hwm0, hwm1=hwm1, rss1=rss1, reset=reset,
                          seconds=secs)))


def run_memory(args, corpora):
    print(f"# peak memory, {args.mem_messages:,} messages per protocol, fresh subprocess each", flush=True)
    res = []
    with tempfile.TemporaryDirectory() as tmp:
        for proto, (keys, values) in corpora.items():
            keys, values = keys[:args.mem_messages] if keys is not None else None, values[:args.mem_messages]
            n = len(values)
            t = pa.record_batch({"key": pa.array(keys, pa.binary()) if keys is not None else pa.nulls(n, pa.binary()),
                                 "value": pa.array(values, pa.binary())})
            path = os.path.join(tmp, proto + ".arrow")
            with pa.OSFile(path, "wb") as f, pa.ipc.new_file(f, t.schema) as w:
                w.write_batch(t)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), HERE,
                                                                 os.environ.get("PYTHONPATH", "")]))
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--_mem", proto, path],
                               capture_output=True, text=True, env=env, timeout=600)
            if p.returncode != 0:
                print(p.stderr[-3000:])
                continue
            res.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return res


def print_memory(res):
    print("\n## Peak memory of one ticdc_fast Cython typed decode (fresh subprocess per protocol)")
    print(f"{'protocol':<12} {'msgs':>7} {'rows':>8} {'input MB':>9} {'output MB':>10} {'HWM growth MB':>14} "
          f"{'peak/(in+out)':>14} {'growth/out':>11}")
    for r in res:
        growth = max(0, r["hwm1"] - r["rss0"])
        io_ = r["input"] + r["output"]
        r["ratio"] = (r["input"] + growth) / io_
        print(f"{r['protocol']:<12} {r['messages']:>7,} {r['rows']:>8,} {r['input'] / 1e6:>9.2f} "
              f"{r['output'] / 1e6:>10.2f} {growth / 1e6:>14.2f} {r['ratio']:>13.2f}x "
              f"{growth / max(1, r['output']):>10.2f}x" + ("" if r["reset"] else "  (VmHWM not reset: upper bound)"))
    print("  * peak = input bytes (already resident) + growth of VmHWM during the decode call; "
          "ratio = peak / (input bytes + output Arrow bytes); VmHWM reset via /proc/self/clear_refs after a "
          "warm-up decode; RSS is page-granular and includes allocator slack")


# ============================================================================ summary
def summary(S, mem):
    def r(sec, name):
        return S[sec].results[name] if sec in S and name in S[sec].results else None

    lines = []

    def goal(text, ok, detail):
        lines.append(f"  [{'met' if ok else 'GAP'}] {text}: {detail}")

    cy = "ticdc_fast Cython typed"
    for key, label in (("open", "open"), ("simple-json", "simple JSON")):
        c = r(key, cy)
        if not c:
            continue
        goal(f"{label} >= 500 MB/s", c.mbps >= 500, f"{c.mbps:.0f} MB/s ({c.rps / 1e6:.2f} M rows/s)")
        u1 = r(key, "orjson -> pyarrow (Decimal/datetime per value)")
        u2 = r(key, "orjson -> pyarrow (strings + Arrow casts)")
        x1, x2 = u1.seconds / c.seconds, u2.seconds / c.seconds
        goal(f"{label} >= 10x orjson->pyarrow", x1 >= 10,
             f"{x1:.2f}x vs the per-value baseline ({u1.mbps:.0f} MB/s); {x2:.2f}x vs the Arrow-cast "
             f"variant ({u2.mbps:.0f} MB/s)")
    for key, label in (("simple-avro", "simple Avro"), ("avro", "Avro protocol")):
        c = r(key, cy)
        if not c:
            continue
        goal(f"{label} >= 5 M rows/s", c.rps >= 5e6, f"{c.rps / 1e6:.2f} M rows/s ({c.mbps:.0f} MB/s)")
        fa = r(key, "fastavro schemaless_reader -> pa.Table.from_pylist")
        x = fa.seconds / c.seconds
        goal(f"{label} >= 20x fastavro", x >= 20, f"{x:.2f}x ({fa.rps / 1e3:.0f} k rows/s for fastavro)")
    t = r("spark-simple", "ticdc_fast.spark.decode('simple-json') (mapInArrow)")
    if t:
        fj = r("spark-simple", "Spark from_json(struct of strings) + casts")
        x = fj.seconds / t.seconds
        goal("Spark >= 2x from_json (simple JSON)", x >= 2,
             f"{x:.2f}x ({t.rps / 1e3:.0f} k vs {fj.rps / 1e3:.0f} k rows/s)")
    t = r("spark-open", "ticdc_fast.spark.decode('open') (mapInArrow)")
    if t:
        cands = [x for x in (r("spark-open", "Python UDF: mapInPandas(orjson per event -> pandas)"),
                             r("spark-open", "Python UDF: @udf -> array<struct> + explode")) if x]
        best = min(cands, key=lambda z: z.seconds)
        x = best.seconds / t.seconds
        fl = r("spark-open", "floor: mapInArrow consume-only (JVM->Python)")
        goal("Spark >= 10x Python UDF (open)", x >= 10,
             f"{x:.2f}x vs the faster UDF ({best.contender}: {best.rps / 1e3:.0f} k rows/s; "
             f"ticdc_fast {t.rps / 1e3:.0f} k rows/s)"
             + "".join(f"; {c.seconds / t.seconds:.2f}x vs {c.contender.split(':')[1].strip()}" for c in cands)
             + (f"; even a zero-cost decoder behind mapInArrow (consume-only floor, {fl.seconds:.3f} s) "
                f"would be {best.seconds / fl.seconds:.1f}x" if fl else ""))
    for m in mem:
        goal(f"peak memory <= 2x (input + output), {m['protocol']}", m["ratio"] <= 2, f"{m['ratio']:.2f}x")
    print("\n## Goals (issue 6)")
    print("\n".join(lines))


# ============================================================================ main
def run_ticdc_source(args):
    """``format("ticdc")`` (decode in the source) vs ``format("ticdc_kafka")`` + ``spark.decode``
    (mapInArrow) on one real-broker topic of open-protocol messages (2 partitions), end to end to a
    noop sink, ``local[1]`` and ``local[2]``, the two paths alternating, warm-up + best of N."""
    from confluent_kafka import Producer

    from ticdc_fast import spark as tfs
    from ticdc_fast.testing import OpenEncoder, realistic_changefeed
    from ticdc_fast.testing.broker import LocalKafkaBroker

    msgs = OpenEncoder().encode(realistic_changefeed(args.rows, seed=1))
    with LocalKafkaBroker() as broker:
        topic = "compare-ticdc-source"
        broker.create_topic(topic, partitions=2)
        prod = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 20})
        for i, (k, v) in enumerate(msgs):
            while True:
                try:
                    prod.produce(topic, value=v, key=k, partition=i % 2)
                    break
                except BufferError:
                    prod.poll(0.1)
        prod.flush(60)
        results = {}
        for master in ("local[1]", "local[2]"):
            spark, _ = spark_session(master)
            tfs.register_kafka_source(spark)

            def reader(fmt):
                return (spark.read.format(fmt).option("kafka.bootstrap.servers", broker.bootstrap_servers)
                        .option("subscribe", topic).option("startingOffsets", "earliest"))

            source = reader("ticdc").option("protocol", "open").load()
            via_map = tfs.decode(reader("ticdc_kafka").load(), "open")
            rows = source.count()
            assert rows == via_map.count(), "the two paths disagree on the row count"
            noop(source)()
            noop(via_map)()
            best = {"ticdc": float("inf"), "ticdc_kafka + decode": float("inf")}
            for _ in range(args.spark_repeat):
                for name, df in (("ticdc", source), ("ticdc_kafka + decode", via_map)):
                    t0 = time.perf_counter()
                    noop(df)()
                    best[name] = min(best[name], time.perf_counter() - t0)
            results[master] = (rows, best)
            spark.stop()
    print(f"\n## format('ticdc') vs format('ticdc_kafka') + decode: {len(msgs):,} open-protocol "
          f"messages, 2 partitions, noop sink, best of {args.spark_repeat}")
    for master, (rows, best) in results.items():
        a, b = best["ticdc"], best["ticdc_kafka + decode"]
        print(f"{master}: ticdc {a:.2f} s ({rows / a / 1e3:.0f} k rows/s); ticdc_kafka + decode "
              f"{b:.2f} s ({rows / b / 1e3:.0f} k rows/s); ratio {b / a:.2f}x")
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000, help="row changes per stream (default 200000)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N for ticdc_fast Cython and the limits")
    ap.add_argument("--user-repeat", type=int, default=2, help="best of N for the orjson/fastavro baselines")
    ap.add_argument("--spark-repeat", type=int, default=3, help="best of N for Spark jobs (after a warm-up)")
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark comparisons")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    ap.add_argument("--mem-messages", type=int, default=10_000)
    ap.add_argument("--cpu", type=int, default=None, help="the CPU to pin to (default: the first allowed)")
    ap.add_argument("--corpus", choices=("orders", "realistic"), default="orders",
                    help="orders: the streams described above (default); realistic: only the asv mix "
                         "realistic5 (two tables, non-ASCII text, full-precision doubles) in every "
                         "protocol, Cython generic/typed and the parse-only limits; no Spark, no memory")
    ap.add_argument("--ticdc-source", action="store_true",
                    help="only format('ticdc') vs format('ticdc_kafka') + decode on a real broker "
                         "(local[1] and local[2]; not pinned unless --cpu)")
    ap.add_argument("--_mem", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._mem:
        return mem_child(*args._mem)
    if args.ticdc_source:
        if args.cpu is not None:
            os.sched_setaffinity(0, {args.cpu})
        print(f"# {os.cpu_count()} CPUs, allowed {sorted(os.sched_getaffinity(0))}; load average "
              f"{os.getloadavg()[0]:.2f}; ticdc_fast {ticdc_fast.__version__} ({ticdc_fast.IMPLEMENTATION})")
        run_ticdc_source(args)
        print(f"# load average at the end: {os.getloadavg()[0]:.2f}")
        return
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    else:
        pin_one_core()
    cpu = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    t_start = time.perf_counter()
    import msgspec
    from importlib.metadata import version as _version
    print(f"# {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, pinned to CPU {cpu}; "
          f"Python {platform.python_version()}, pyarrow {pa.__version__}, orjson {orjson.__version__}, "
          f"fastavro {fastavro.__version__}, msgspec {msgspec.__version__}, pysimdjson "
          f"{_version('pysimdjson')}, ticdc_fast {ticdc_fast.__version__} "
          f"({ticdc_fast.IMPLEMENTATION})")
    print(f"# load average at the start: {os.getloadavg()[0]:.2f}")
    print(f"# rows={args.rows:,}; best of {args.repeat} (Cython, limits), {args.user_repeat} (user baselines), "
          f"1 (twin), warm-up + best of {args.spark_repeat} (Spark)", flush=True)
    S = {}
    if args.corpus == "realistic":
        run_realistic(args, S)
        for sec in S.values():
            sec.print()
        print(f"\n# total wall time {time.perf_counter() - t_start:.0f} s")
        return
    open_data = run_open(args, S)
    sj = run_simple_json(args, S)
    run_simple_avro(args, S)
    run_avro(args, S)
    if not args.no_spark:
        run_spark(args, S, open_data, sj)
    mem = []
    if not args.no_memory:
        corpora = {"open": (open_data["keys"], open_data["values"]), "simple-json": (None, sj["values"]),
                   "simple-avro": (None, simple_corpus(argparse.Namespace(rows=args.mem_messages + 100), "avro")[0]),
                   "avro": bench_avro.corpus(args.mem_messages)}
        mem = run_memory(args, corpora)
    print(f"# load average at the end: {os.getloadavg()[0]:.2f} (other processes on the machine share the CPUs)")
    for sec in S.values():
        sec.print()
    if mem:
        print_memory(mem)
    summary(S, mem)
    print(f"\n# total wall time {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
