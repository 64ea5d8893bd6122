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

import random
import struct
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

# ============================================================================ column kinds
# kind -> (open/avro type code, extra TiCDC flags, simple-protocol (mysql_type, kwargs),
#          avro (length, scale))
_B, _N, _U = C.FLAG_BINARY, C.FLAG_NULLABLE, C.FLAG_UNSIGNED
KINDS = {
    "int":       (C.T_LONG, _B, ("int", {}), (-1, -1)),
    "int_u":     (C.T_LONG, _B | _U, ("int", {"unsigned": True}), (-1, -1)),
    "bigint":    (C.T_LONGLONG, _B, ("bigint", {}), (-1, -1)),
    "bigint_u":  (C.T_LONGLONG, _B | _U, ("bigint", {"unsigned": True}), (-1, -1)),
    "smallint":  (C.T_SHORT, _B, ("smallint", {}), (-1, -1)),
    "tinyint":   (C.T_TINY, _B, ("tinyint", {}), (-1, -1)),
    "double":    (C.T_DOUBLE, _B, ("double", {}), (-1, -1)),
    "float":     (C.T_FLOAT, _B, ("float", {}), (-1, -1)),
    "decimal":   (C.T_NEWDECIMAL, _B, ("decimal", {"length": 12, "decimal": 2}), (12, 2)),
    "varchar16": (C.T_VARCHAR, 0, ("varchar", {"length": 16}), (-1, -1)),
    "varchar64": (C.T_VARCHAR, 0, ("varchar", {"length": 64}), (-1, -1)),
    "text":      (C.T_BLOB, 0, ("text", {}), (-1, -1)),
    "datetime":  (C.T_DATETIME, _B, ("datetime", {"decimal": 6}), (-1, -1)),
    "timestamp": (C.T_TIMESTAMP, _B, ("timestamp", {}), (-1, -1)),
    "date":      (C.T_DATE, _B, ("date", {}), (-1, -1)),
    "varbinary": (C.T_VARCHAR, _B, ("varbinary", {"length": 64}), (-1, -1)),
    # what applications write: doubles from arithmetic, float32 values, text beyond ASCII
    "double_full": (C.T_DOUBLE, _B, ("double", {}), (-1, -1)),
    "float_full":  (C.T_FLOAT, _B, ("float", {}), (-1, -1)),
    "varchar_intl": (C.T_VARCHAR, 0, ("varchar", {"length": 64}), (-1, -1)),
    "timestamp3":  (C.T_TIMESTAMP, _B, ("timestamp", {"decimal": 3}), (-1, -1)),
}
_CYCLE = ("int", "int_u", "bigint", "bigint_u", "smallint", "tinyint", "double", "float",
          "decimal", "varchar16", "varchar64", "text", "datetime", "timestamp", "date",
          "varbinary")
_CYCLE_WIDE = _CYCLE + ("double_full", "float_full", "varchar_intl", "timestamp3")
# mixes whose rows go to several tables of the same columns, in one topic: row id % n picks one
_TABLES = {"realistic5": (TABLE, TABLE + "2")}


def mix_tables(mix: str) -> tuple[str, ...]:
    """The table names a mix's stream writes to (all in ``SCHEMA``, all with its columns)."""
    return _TABLES.get(mix, (TABLE,))


def table_of(mix: str, row_id: int) -> str:
    names = mix_tables(mix)
    return names[row_id % len(names)]


def mix_columns(mix: str) -> list[tuple[str, str]]:
    """``[(column name, kind)]`` of a mix; the first column is the BIGINT NOT NULL PK ``id``."""
    if mix == "mixed10":
        kinds = ["int_u", "decimal", "double", "smallint", "varchar16", "text", "datetime",
                 "timestamp", "varbinary"]
    elif mix == "wide50":
        kinds = [_CYCLE[i % len(_CYCLE)] for i in range(49)]
    elif mix == "strings":
        kinds = ["varchar16", "varchar16", "varchar64", "varchar64", "varchar64", "text", "text",
                 "text", "varchar64"]
    elif mix == "numeric":
        kinds = ["int", "int_u", "bigint", "bigint_u", "smallint", "tinyint", "double", "float",
                 "decimal"]
    elif mix == "realistic5":
        kinds = ["varchar_intl", "double_full", "timestamp3", "tinyint"]
    elif mix == "wide100":
        kinds = [_CYCLE_WIDE[i % len(_CYCLE_WIDE)] for i in range(99)]
    else:
        raise ValueError(f"unknown mix {mix!r}")
    return [("id", "pk")] + [(f"c{i:02d}_{k}", k) for i, k in enumerate(kinds, 1)]


# ============================================================================ values
_WORDS = ("order", "shipped", "customer", "warehouse", "express", "gift", "invoice", "refund",
          "parcel", "delivery", "address", "priority", "return", "payment", "coupon", "north")
_ODD_TEXT = ('Customer said: "ASAP" <urgent> & fragile', "Line one\nLine two\ttabbed",
             "請放在門口", "Geschenkverpackung bitte 🎁", "Entrega después de las 18:00")
_SHORT = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
_INTL = ("北京市朝阳区", "東京都渋谷区", "서울특별시", "Zürich Straße", "São Paulo", "Łódź",
         "🎁", "✅", "🚚", "订单已发货", "お届け予定", "Ελλάδα", "Москва", "café", "naïve")


class _Values:
    """Seeded value generators, one per kind (fast: ``rng.random`` only)."""

    def __init__(self, seed: int):
        rng = random.Random(seed)
        self.rng = rng
        self.rand = rng.random
        self._sec: dict = {}

    def randint(self, lo: int, hi: int) -> int:
        return lo + int(self.rand() * (hi - lo + 1))

    def words(self, lo: int, hi: int) -> str:
        n = self.randint(lo, hi)
        r = self.rand
        s = " ".join([_WORDS[int(r() * len(_WORDS))] for _ in range(n)])
        if r() < 0.05:
            s += " " + _ODD_TEXT[int(r() * len(_ODD_TEXT))]
        return s

    def wall(self, ms: int) -> str:
        s = ms // 1000
        txt = self._sec.get(s)
        if txt is None:
            txt = self._sec[s] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s))
        return txt

    def value(self, kind: str, ms: int):
        r = self.rand
        ri = self.randint
        if kind == "int":
            return ri(-2_000_000_000, 2_000_000_000)
        if kind == "int_u":
            return ri(0, 4_294_967_295)
        if kind == "bigint":
            return ri(-(1 << 50), 1 << 50)
        if kind == "bigint_u":
            return ri(0, 1 << 40) if r() < 0.9 else ri(1 << 63, (1 << 64) - 1)
        if kind == "smallint":
            return ri(-32768, 32767)
        if kind == "tinyint":
            return ri(-128, 127)
        if kind == "double":
            return ri(0, 100_000_000) / 100
        if kind == "float":
            return ri(0, 40_000) / 4                     # exact in float32
        if kind == "decimal":
            cents = ri(-99_999_999, 99_999_999_99)
            sign = "-" if cents < 0 else ""
            cents = abs(cents)
            return f"{sign}{cents // 100}.{cents % 100:02d}"
        if kind == "varchar16":
            return _SHORT[int(r() * len(_SHORT))]
        if kind == "varchar64":
            return self.words(1, 6)[:64]
        if kind == "text":
            return self.words(8, 40)
        if kind == "datetime":
            return f"{self.wall(ms)}.{ms % 1000:03d}{ri(0, 999):03d}"
        if kind == "timestamp":
            return self.wall(ms)
        if kind == "date":
            return f"20{ri(10, 29)}-{ri(1, 12):02d}-{ri(1, 28):02d}"
        if kind == "varbinary":
            return self.rng.getrandbits(8 * 24).to_bytes(24, "little")[:ri(0, 24)]
        if kind == "double_full":                        # 16-17 significant digits
            return r() * 10.0 ** ri(0, 6)
        if kind == "float_full":                         # a float32 that is no short decimal
            return struct.unpack("<f", struct.pack("<f", r() * 10.0 ** ri(0, 4)))[0]
        if kind == "varchar_intl":
            return " ".join([_INTL[int(r() * len(_INTL))] for _ in range(ri(1, 4))])
        if kind == "timestamp3":
            return f"{self.wall(ms)}.{ms % 1000:03d}"
        raise ValueError(kind)


def change_stream(mix: str, n_rows: int = ROWS, seed: int = SEED) -> list:
    """Abstract changes: ``("row", op, ts, after tuple | None, before tuple | None)`` and
    ``("resolved", ts)``; values in column order (``mix_columns``)."""
    cols = mix_columns(mix)
    kinds = [k for _, k in cols]
    g = _Values(seed)
    rand, randint = g.rand, g.randint
    out: list = []
    rows: dict = {}
    live: list = []
    pos: dict = {}
    next_id = 1
    emitted = since = 0
    ms = START_MS
    ts = ms << 18
    while emitted < n_rows:
        ms += randint(1, 40)
        ts = (ms << 18) | randint(0, 7)
        touched = set()
        for _ in range(min(randint(1, 4), n_rows - emitted)):
            r = rand()
            rid = None
            if r >= 0.7 and live:
                rid = live[randint(0, len(live) - 1)]
                if rid in touched:
                    r = 0.0
            if r < 0.7 or not live:
                rid = next_id
                next_id += 1
                after = tuple([rid] + [None if rand() < 0.1 else g.value(k, ms) for k in kinds[1:]])
                rows[rid] = after
                pos[rid] = len(live)
                live.append(rid)
                out.append(("row", "INSERT", ts, after, None))
            elif r < 0.9:
                before = rows[rid]
                after = list(before)
                for _ in range(randint(1, 3)):
                    i = randint(1, len(kinds) - 1)
                    after[i] = g.value(kinds[i], ms)
                after = rows[rid] = tuple(after)
                out.append(("row", "UPDATE", ts, after, before))
            else:
                before = rows.pop(rid)
                i = pos.pop(rid)
                moved = live.pop()
                if moved != rid:
                    live[i] = moved
                    pos[moved] = i
                out.append(("row", "DELETE", ts, None, before))
            touched.add(rid)
            emitted += 1
            since += 1
        if since >= RESOLVED_EVERY:
            out.append(("resolved", ts))
            since = 0
    if out[-1][0] != "resolved":
        out.append(("resolved", ts))
    return out


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
    from ticdc_fast.testing import Col, Resolved, RowChange
    specs = []
    for name, kind in mix_columns(mix):
        if kind == "pk":
            specs.append((name, C.T_LONGLONG, C.FLAG_BINARY | C.FLAG_HANDLE_KEY | C.FLAG_PRIMARY_KEY))
        else:
            code, flags, _, _ = KINDS[kind]
            specs.append((name, code, flags | C.FLAG_NULLABLE))

    def image(vals):
        return None if vals is None else [Col(n, t, v, f) for (n, t, f), v in zip(specs, vals)]

    out = []
    for ch in changes:
        if ch[0] == "row":
            _, _, ts, after, before = ch
            rid = (after or before)[0]
            out.append(RowChange(SCHEMA, table_of(mix, rid), ts, image(after), image(before),
                                 row_id=rid))
        else:
            out.append(Resolved(ch[1]))
    return out


def avro_columns(mix: str) -> list:
    from ticdc_fast.testing import AvroColumn
    out = []
    for i, (name, kind) in enumerate(mix_columns(mix), 1):
        if kind == "pk":
            out.append(AvroColumn(name, C.T_LONGLONG, C.FLAG_BINARY | C.FLAG_HANDLE_KEY
                                  | C.FLAG_PRIMARY_KEY, column_id=i))
        else:
            code, flags, _, (length, scale) = KINDS[kind]
            out.append(AvroColumn(name, code, flags | C.FLAG_NULLABLE, length=length, scale=scale,
                                  column_id=i))
    return out


def simple_table(mix: str, table_name: str = TABLE):
    from ticdc_fast.testing import SimpleColumn, SimpleTable
    cols = []
    for name, kind in mix_columns(mix):
        if kind == "pk":
            cols.append(SimpleColumn(name, "bigint", nullable=False))
        else:
            mysql_type, kw = KINDS[kind][2]
            cols.append(SimpleColumn(name, mysql_type, **kw))
    return SimpleTable(SCHEMA, table_name, 100 + mix_tables(mix).index(table_name), (START_MS - 60_000) << 18,
                       cols)


def _simple_events(mix: str, tables: dict, changes: list) -> list:
    from ticdc_fast.testing import SimpleDML, SimpleWatermark
    names = [c.name for c in tables[TABLE].columns]
    out = []
    for ch in changes:
        if ch[0] == "row":
            _, op, ts, after, before = ch
            out.append(SimpleDML(tables[table_of(mix, (after or before)[0])], op, ts,
                                 data=None if after is None else dict(zip(names, after)),
                                 old=None if before is None else dict(zip(names, before))))
        else:
            out.append(SimpleWatermark(ch[1]))
    return out


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


def build_simple(mix: str, encoding: str, changes: list | None = None) -> dict:
    import ticdc_fast
    from ticdc_fast.testing import SimpleBootstrap, SimpleEncoder
    changes = change_stream(mix) if changes is None else changes
    small, _ = _split_small(changes)
    tables = {name: simple_table(mix, name) for name in mix_tables(mix)}
    enc = SimpleEncoder(encoding)
    bootstraps = [enc.encode_value(SimpleBootstrap(t, build_ts=START_MS)) for t in tables.values()]
    values = [v for _, v in enc.encode(_simple_events(mix, tables, changes))]
    n_small = len(small)                  # one message per event
    schema = ticdc_fast.simple_arrow_schema(bootstraps[0], encoding=encoding)
    return _entry(None, values, n_small, schema, bootstrap=bootstraps[0], bootstraps=bootstraps)


def avro_typed_schema(schemas: dict) -> pa.Schema:
    """The default Arrow schema of the (one) table, from its Avro value writer schema."""
    from ticdc_fast.arrow_types import default_arrow_type
    from ticdc_fast.avro import compile_writer_schema
    from ticdc_fast.avro.schema import EXTENSIONS
    ws = max((compile_writer_schema(i, t) for i, t in schemas.items()),   # the value schema
             key=lambda w: len(w.fields))
    fields = []
    for f in ws.fields:
        if f.name in EXTENSIONS:
            continue
        t = default_arrow_type(f.type_code, f.flags, f.scale)
        if f.type_code == C.T_NEWDECIMAL:
            dec = next((b.decimal for b in f.branches if b.decimal is not None), None)
            if dec is not None and dec[0]:
                t = pa.decimal128(*dec) if dec[0] <= 38 else pa.decimal256(*dec)
            else:
                t = pa.string()
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


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


def build(protocol: str, mix: str, changes: list | None = None) -> dict:
    if protocol == "open":
        return build_open(mix, changes)
    if protocol == "simple-json":
        return build_simple(mix, "json", changes)
    if protocol == "simple-avro":
        return build_simple(mix, "avro", changes)
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
