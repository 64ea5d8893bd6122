"""Deterministic TiCDC corpora for the asv suite (helpers only: no benchmarks in this module).

Four column mixes, one abstract table each, rendered for every protocol with the encoders of
``ticdc_fast.testing`` (their column classes: ``Col``/``AvroColumn``/``SimpleColumn``):

* ``mixed10``: 10 columns of mixed types (BIGINT PK, INT UNSIGNED, DECIMAL(12,2), DOUBLE,
  SMALLINT, VARCHAR(16), TEXT, DATETIME(6), TIMESTAMP, VARBINARY), like ``shop.orders``;
* ``wide50``: 50 columns: the PK, then 49 cycling over every kind below;
* ``strings``: the PK and 9 VARCHAR/TEXT columns (short, medium and long; some escapes and
  non-ASCII text);
* ``numeric``: the PK and 9 numeric columns (INT, INT UNSIGNED, BIGINT, BIGINT UNSIGNED,
  SMALLINT, TINYINT, DOUBLE, FLOAT, DECIMAL).

Two more mixes carry what applications write, which the four above never did (their doubles
have two decimals, their floats are exact binary fractions, their text is mostly ASCII):

* ``realistic5``: TWO tables (``t`` and ``t2``, same columns) interleaved in one topic, small
  rows of 5 columns: the PK, VARCHAR(64) of CJK/emoji/accented text, DOUBLE with its full 16-17
  significant digits (``random() * 10**k``), TIMESTAMP(3), TINYINT;
* ``wide100``: 100 columns: the PK, then 99 cycling over every kind, the full-precision DOUBLE,
  the non-decimal FLOAT, the non-ASCII VARCHAR and the TIMESTAMP(3) included.

Every stream has ``ROWS`` row changes (about 70% INSERT, 20% UPDATE with the old image, 10%
DELETE), in transactions of 1-4 rows sharing a commit TSO, with a resolved-ts/WATERMARK event
every 1,000 rows.  The first ``SMALL_ROWS`` row changes are encoded separately, so the 1,000-row
batch is a prefix of the 10,000-row batch (for the open protocol, whose messages pack up to 16
rows, this is where TiCDC would have flushed anyway).

A corpus is stored *compressed* (zlib, level 1) so that the pickled ``setup_cache`` value, which
asv loads in every benchmark process, stays small and ``peakmem_`` mostly counts the batch
being decoded; ``unpack`` rebuilds the ``pyarrow.BinaryArray`` that a Kafka batch arrives as.

asv versions a benchmark by its own source only, not by this module's: change the data of an
existing mix and old results stop being comparable.  Add mixes rather than edit them.
"""
from __future__ import annotations

import time
import zlib

import pyarrow as pa
import pyarrow.compute as pc

from ticdc_fast import _constants as C

SEED = 20240501
ROWS = 10_000
SMALL_ROWS = 1_000
ROW_COUNTS = (SMALL_ROWS, ROWS)
MIXES = ("mixed10", "wide50", "strings", "numeric", "realistic5", "wide100")
MODES = ("generic", "typed")
PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")
SCHEMA, TABLE = "bench", "t"
QUALIFIED = f"{SCHEMA}.{TABLE}"
RESOLVED_EVERY = 1_000
START_MS = 1_714_521_600_000

# The column kinds, mixes and value generators live in ticdc_fast.testing.realistic (shared with
# the public ``realistic_stream``); the names are kept here for the benchmarks.
from ticdc_fast.testing.realistic import (KINDS, avro_columns, change_stream,  # noqa: E402,F401
                                          mix_columns, mix_tables, table_of)
from ticdc_fast.testing import realistic as _realistic  # noqa: E402


def _split_small(changes: list) -> tuple[list, list]:
    """(changes up to and including the resolved event after row SMALL_ROWS, the rest)."""
    rows = 0
    for i, ch in enumerate(changes):
        if ch[0] == "row":
            rows += 1
        elif rows >= SMALL_ROWS:
            return changes[:i + 1], changes[i + 1:]
    return changes, []


# ============================================================================ protocols
def _open_events(mix: str, changes: list) -> list:
    return _realistic.open_events(mix, changes, SCHEMA)


def simple_table(mix: str, table_name: str = TABLE):
    return _realistic.simple_table(mix, table_name, SCHEMA, START_MS)


def _simple_events(mix: str, tables: dict, changes: list) -> list:
    return _realistic.simple_events(mix, tables, changes)


def pack(items) -> dict:
    """A list of ``bytes | None`` → a compact, picklable, compressed form (see ``unpack``)."""
    arr = pa.array(items, pa.binary())
    nulls, offsets, data = arr.buffers()
    return {
        "n": len(arr), "null_count": arr.null_count,
        "nulls": None if nulls is None else nulls.to_pybytes(),
        "offsets": zlib.compress(offsets.to_pybytes(), 1),
        "data": zlib.compress(data.to_pybytes() if data is not None else b"", 1),
        "nbytes": int(pc.sum(pc.binary_length(arr)).as_py() or 0),
    }


def unpack(p: dict | None, n: int | None = None):
    """``pack``'s output → ``pyarrow.BinaryArray`` (its first ``n`` entries); ``None`` stays."""
    if p is None:
        return None
    bufs = [None if p["nulls"] is None else pa.py_buffer(p["nulls"]),
            pa.py_buffer(zlib.decompress(p["offsets"])), pa.py_buffer(zlib.decompress(p["data"]))]
    arr = pa.Array.from_buffers(pa.binary(), p["n"], bufs, null_count=p["null_count"])
    return arr if n is None or n == len(arr) else arr.slice(0, n)


def payload_bytes(*arrays) -> int:
    """Kafka key + value bytes of a batch (what MB/s is measured on)."""
    total = 0
    for a in arrays:
        if a is not None:
            total += int(pc.sum(pc.binary_length(a)).as_py() or 0)
    return total


def _entry(keys: list | None, values: list, n_small: int, typed_schema, **extra) -> dict:
    return {"keys": None if keys is None else pack(keys), "values": pack(values),
            "messages": {SMALL_ROWS: n_small, ROWS: len(values)},
            "typed_schema": typed_schema, **extra}


def build_open(mix: str, changes: list | None = None) -> dict:
    import ticdc_fast
    from ticdc_fast.testing import OpenEncoder
    changes = change_stream(mix) if changes is None else changes
    small, rest = _split_small(changes)
    enc = OpenEncoder("tiflow")             # TiCDC's defaults: up to 16 rows a message
    msgs = enc.encode(_open_events(mix, small))
    n_small = len(msgs)
    msgs += enc.encode(_open_events(mix, rest))
    keys = [k for k, _ in msgs]
    values = [v for _, v in msgs]
    schema = ticdc_fast.infer_open_schema(keys[:200], values[:200], table=QUALIFIED)
    return _entry(keys, values, n_small, schema)


def build_simple(mix: str, encoding: str, changes: list | None = None, avro_map_order: str = "table") -> dict:
    """``avro_map_order="random"``: data/old maps in Go map order, as TiCDC writes them (the asv
    mixes keep the table order they were recorded with)."""
    import ticdc_fast
    from ticdc_fast.testing import SimpleBootstrap, SimpleEncoder
    changes = change_stream(mix) if changes is None else changes
    small, _ = _split_small(changes)
    tables = {name: simple_table(mix, name) for name in mix_tables(mix)}
    enc = SimpleEncoder(encoding, avro_map_order=avro_map_order, seed=11)
    bootstraps = [enc.encode_value(SimpleBootstrap(t, build_ts=START_MS)) for t in tables.values()]
    values = [v for _, v in enc.encode(_simple_events(mix, tables, changes))]
    n_small = len(small)                  # one message per event
    schema = ticdc_fast.simple_arrow_schema(bootstraps[0], encoding=encoding)
    return _entry(None, values, n_small, schema, bootstrap=bootstraps[0], bootstraps=bootstraps)


def avro_typed_schema(schemas: dict) -> pa.Schema:
    """The default Arrow schema of the (one) table, from its Avro value writer schema."""
    from ticdc_fast.testing import avro_table_schema
    return avro_table_schema(schemas)


def build_avro(mix: str, changes: list | None = None) -> dict:
    from ticdc_fast.testing import AvroEncoder
    changes = change_stream(mix) if changes is None else changes
    small, _ = _split_small(changes)
    enc = AvroEncoder(table_columns={(SCHEMA, t): avro_columns(mix) for t in mix_tables(mix)}, topic="bench")
    msgs = enc.encode(_open_events(mix, changes))   # resolved events give no message
    n_small = sum(1 for ch in small if ch[0] == "row")
    schemas = {sid: text for _, sid, text in enc.registered}
    return _entry([k for k, _ in msgs], [v for _, v in msgs], n_small,
                  avro_typed_schema(schemas), schemas=schemas)


def build(protocol: str, mix: str, changes: list | None = None, avro_map_order: str = "table") -> dict:
    if protocol == "open":
        return build_open(mix, changes)
    if protocol == "simple-json":
        return build_simple(mix, "json", changes)
    if protocol == "simple-avro":
        return build_simple(mix, "avro", changes, avro_map_order)
    if protocol == "avro":
        return build_avro(mix, changes)
    raise ValueError(f"unknown protocol {protocol!r}")


def build_all(protocol: str, mixes=MIXES) -> dict:
    """``{mix: corpus}`` for one protocol (the ``setup_cache`` value of its class)."""
    return {mix: build(protocol, mix) for mix in mixes}


# ============================================================================ decoders
def make_decoder(protocol: str, corpus: dict, mode: str, implementation: str = "cython", **options):
    import ticdc_fast
    typed = {"table": QUALIFIED, "schema": corpus["typed_schema"]} if mode == "typed" else {}
    typed.update(options)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation=implementation, **typed)
    if protocol in ("simple-json", "simple-avro"):
        return ticdc_fast.SimpleDecoder(protocol.split("-")[1],
                                        schemas=corpus.get("bootstraps", [corpus["bootstrap"]]),
                                        implementation=implementation, **typed)
    if protocol == "avro":
        return ticdc_fast.AvroDecoder(schemas=corpus["schemas"], implementation=implementation,
                                      **typed)
    raise ValueError(f"unknown protocol {protocol!r}")


class Batch:
    """One benchmark case: the Kafka batch (``keys``/``values`` arrays) and its decoder."""

    def __init__(self, protocol: str, corpus: dict, mode: str, rows: int,
                 implementation: str = "cython", **options):
        n = corpus["messages"][rows]
        self.keys = unpack(corpus["keys"], n)
        self.values = unpack(corpus["values"], n)
        self.nbytes = payload_bytes(self.keys, self.values)
        self.decoder = make_decoder(protocol, corpus, mode, implementation, **options)

    def decode(self):
        return self.decoder.decode(self.keys, self.values)


def best_time(fn, min_runs: int = 3, max_runs: int = 50, budget: float = 0.2):
    """(fastest seconds, last result): at least ``min_runs`` calls, more until ``budget`` s."""
    best, out, spent, runs = float("inf"), None, 0.0, 0
    while runs < min_runs or (spent < budget and runs < max_runs):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        spent += dt
        runs += 1
    return best, out
