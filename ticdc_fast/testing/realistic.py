"""Realistic TiCDC change streams: the column mixes and value generators of the benchmark corpora.

The benchmark corpora (``benchmarks/asv_corpora.py``, ``benchmarks/compare.py``) are built from
this module, and so is ``realistic_stream``, a public three-table stream for any protocol:

>>> from ticdc_fast.testing import realistic_stream
>>> s = realistic_stream("open", 1000)
>>> sorted(s.tables)
['shop.events', 'shop.orders', 'shop.wide']
>>> len(s.messages) > 0 and s.rows
1000

A *mix* is a table's columns ``[(name, kind)]`` (``mix_columns``); a *kind* (``KINDS``) fixes the
TiCDC type of the column for every protocol and the distribution of its values.  The older mixes
(``mixed10``, ``wide50``, ``strings``, ``numeric``) have doubles with two decimals, floats that
are exact binary fractions and mostly ASCII text; ``realistic5``, ``wide100`` and ``orders10`` carry
what applications write: DOUBLE with its full 16-17 significant digits, float32 values that are no
short decimal, CJK/emoji/accented text, TIMESTAMP(3).  Every non-key column is NULL about 10% of
the time.

The streams are deterministic (seeded ``random.Random``): the benchmark history depends on the
bytes staying the same, so change a kind's values only by adding a kind.
"""
from __future__ import annotations

import random
import struct
import time
from dataclasses import dataclass, field

from .. import _constants as C

SCHEMA = "bench"
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
_TABLES = {"realistic5": ("t", "t2")}


def mix_tables(mix: str) -> tuple[str, ...]:
    """The table names a mix's stream writes to (all in one schema, all with its columns)."""
    return _TABLES.get(mix, ("t",))


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
    elif mix == "orders10":
        kinds = ["int_u", "decimal", "double_full", "float_full", "smallint", "varchar_intl", "text",
                 "datetime", "timestamp3"]
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


def change_stream(mix: str, n_rows: int = 10_000, seed: int = 20240501, *,
                  resolved_every: int = RESOLVED_EVERY, start_ms: int = START_MS) -> list:
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
    ms = start_ms
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
        if since >= resolved_every:
            out.append(("resolved", ts))
            since = 0
    if out[-1][0] != "resolved":
        out.append(("resolved", ts))
    return out



# ============================================================================ protocols
def open_events(mix: str, changes: list, schema: str = SCHEMA) -> list:
    """``change_stream`` output → open-protocol events (``RowChange``/``Resolved``; also what
    ``AvroEncoder`` takes)."""
    from ticdc_fast.testing import Col, Resolved, RowChange
    specs = _open_specs(mix)

    def image(vals):
        return None if vals is None else [Col(n, t, v, f) for (n, t, f), v in zip(specs, vals)]

    out = []
    for ch in changes:
        if ch[0] == "row":
            _, _, ts, after, before = ch
            rid = (after or before)[0]
            out.append(RowChange(schema, table_of(mix, rid), ts, image(after), image(before),
                                 row_id=rid))
        else:
            out.append(Resolved(ch[1]))
    return out


def avro_columns(mix: str) -> list:
    """The ``AvroColumn`` list of a mix's table (``AvroEncoder(table_columns=...)``)."""
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


def simple_table(mix: str, table_name: str = "t", schema: str = SCHEMA, start_ms: int = START_MS):
    """The ``SimpleTable`` of a mix's table (table id 100, 101, ... in ``mix_tables`` order)."""
    from ticdc_fast.testing import SimpleColumn, SimpleTable
    cols = []
    for name, kind in mix_columns(mix):
        if kind == "pk":
            cols.append(SimpleColumn(name, "bigint", nullable=False))
        else:
            mysql_type, kw = KINDS[kind][2]
            cols.append(SimpleColumn(name, mysql_type, **kw))
    return SimpleTable(schema, table_name, 100 + mix_tables(mix).index(table_name), (start_ms - 60_000) << 18,
                       cols)


def simple_events(mix: str, tables: dict, changes: list) -> list:
    """``change_stream`` output → simple-protocol events; ``tables`` maps table name → ``SimpleTable``."""
    from ticdc_fast.testing import SimpleDML, SimpleWatermark
    names = [c.name for c in next(iter(tables.values())).columns]
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




# ============================================================================ three tables, one topic
# (table, mix, share of the row changes): small event rows, 10-column orders, a 100-column table
REALISTIC_TABLES = (("events", "realistic5", 0.5), ("orders", "orders10", 0.4), ("wide", "wide100", 0.1))


@dataclass
class RealisticStream:
    """What ``realistic_stream`` gives: the Kafka messages of one topic and how to read them.

    ``messages``: ``(key, value)`` pairs in topic order (``key`` is ``None`` for the simple
    protocol); ``tables``: ``{"shop.events": mix, ...}`` (``mix_columns(mix)`` are its columns);
    ``rows``: row changes in the stream.  Simple protocol: ``bootstraps`` holds one BOOTSTRAP
    message value per table, which also open the stream.  Avro protocol: ``schemas`` is
    ``{schema id: schema text}`` (``AvroDecoder(schemas=...)``, or register them).
    """
    protocol: str
    messages: list
    tables: dict
    rows: int
    bootstraps: list = field(default_factory=list)
    schemas: dict = field(default_factory=dict)

    @property
    def keys(self) -> list:
        return [k for k, _ in self.messages]

    @property
    def values(self) -> list:
        return [v for _, v in self.messages]


def interleaved_changes(n_rows: int, seed: int = 0, tables=REALISTIC_TABLES, *,
                        resolved_every: int = RESOLVED_EVERY, start_ms: int = START_MS) -> list:
    """Row changes of several tables in one commit order: ``("row", op, ts, after, before, table)``
    and ``("resolved", ts)``.

    Each table's changes come from ``change_stream`` of its mix (so the same value distributions,
    op mix and 1-4 row transactions); whole transactions are then drawn table by table with the
    given shares and get fresh, increasing commit TSOs, with a resolved event about every
    ``resolved_every`` rows (placed only where the next commit TSO is larger).
    """
    rng = random.Random(seed)
    shares = [share for _, _, share in tables]
    counts = [int(n_rows * share / sum(shares)) for share in shares]
    counts[0] += n_rows - sum(counts)
    queues = []
    for i, ((name, mix, _), count) in enumerate(zip(tables, counts)):
        txns, last_ts = [], None
        for ch in change_stream(mix, count, seed * 31 + i, start_ms=start_ms):
            if ch[0] != "row":
                continue
            if ch[2] != last_ts:
                txns.append([])
                last_ts = ch[2]
            txns[-1].append((ch[1], ch[3], ch[4], name))
        queues.append(txns[::-1])          # popped from the end
    out: list = []
    ms, since, ts = start_ms, 0, start_ms << 18
    live = [i for i, q in enumerate(queues) if q]
    while live:
        weights = [len(queues[i]) for i in live]      # drawn in proportion to what is left: even spread
        i = rng.choices(live, weights)[0]
        ms += 1 + int(rng.random() * 20)
        ts = (ms << 18) | int(rng.random() * 8)
        for op, after, before, name in queues[i].pop():
            out.append(("row", op, ts, after, before, name))
            since += 1
        if not queues[i]:
            live.remove(i)
        if since >= resolved_every:
            out.append(("resolved", ts))
            since = 0
    if not out or out[-1][0] != "resolved":
        out.append(("resolved", ts))
    return out


def _open_specs(mix: str) -> list:
    specs = []
    for name, kind in mix_columns(mix):
        if kind == "pk":
            specs.append((name, C.T_LONGLONG, C.FLAG_BINARY | C.FLAG_HANDLE_KEY | C.FLAG_PRIMARY_KEY))
        else:
            code, flags, _, _ = KINDS[kind]
            specs.append((name, code, flags | C.FLAG_NULLABLE))
    return specs


def realistic_stream(protocol: str, n_rows: int = 10_000, seed: int = 0, *, schema: str = "shop",
                     tables=REALISTIC_TABLES, encoding_options: dict | None = None) -> RealisticStream:
    """A deterministic topic of three tables interleaved, encoded for ``protocol`` (``"open"``,
    ``"simple-json"``, ``"simple-avro"`` or ``"avro"``).

    ``shop.events`` (half of the rows; ``realistic5``: BIGINT PK, VARCHAR of CJK/emoji/accented
    text, full-precision DOUBLE, TIMESTAMP(3), TINYINT), ``shop.orders`` (40%; ``orders10``: 10
    columns with DECIMAL(12,2), full-precision DOUBLE, a float32 FLOAT that is no short decimal,
    non-ASCII VARCHAR, TEXT, DATETIME(6), TIMESTAMP(3)) and ``shop.wide`` (10%; ``wide100``: 100
    columns over every kind).  About 70% INSERT, 20% UPDATE (with the old image), 10% DELETE;
    every non-key value is NULL about 10% of the time; a resolved-ts (open) / WATERMARK (simple)
    event about every 1,000 rows.  ``encoding_options`` go to the protocol's encoder
    (``OpenEncoder``, ``SimpleEncoder``, ``AvroEncoder``).
    """
    from .avro_encoder import AvroColumn, AvroEncoder
    from .open_encoder import Col, OpenEncoder, Resolved, RowChange
    from .simple_encoder import SimpleBootstrap, SimpleDML, SimpleEncoder, SimpleWatermark

    opts = dict(encoding_options or {})
    changes = interleaved_changes(n_rows, seed, tables)
    mixes = {name: mix for name, mix, _ in tables}
    qualified = {f"{schema}.{name}": mix for name, mix in mixes.items()}
    rows = sum(1 for ch in changes if ch[0] == "row")
    if protocol in ("open", "avro"):
        specs = {name: _open_specs(mix) for name, mix in mixes.items()}
        events = []
        for ch in changes:
            if ch[0] == "row":
                _, _, ts, after, before, name = ch
                sp = specs[name]
                events.append(RowChange(
                    schema, name, ts,
                    None if after is None else [Col(n, t, v, f) for (n, t, f), v in zip(sp, after)],
                    None if before is None else [Col(n, t, v, f) for (n, t, f), v in zip(sp, before)],
                    row_id=(after or before)[0]))
            else:
                events.append(Resolved(ch[1]))
        if protocol == "open":
            opts.setdefault("flavor", "tiflow")
            return RealisticStream(protocol, OpenEncoder(**opts).encode(events), qualified, rows)
        cols = {}
        for name, mix in mixes.items():
            cols[(schema, name)] = [
                AvroColumn(n, t, f, column_id=i, length=KINDS[k][3][0] if k != "pk" else -1,
                           scale=KINDS[k][3][1] if k != "pk" else -1)
                for i, ((n, t, f), (_, k)) in enumerate(zip(specs[name], mix_columns(mix)), 1)]
        opts.setdefault("topic", "realistic")
        enc = AvroEncoder(table_columns=cols, **opts)
        msgs = enc.encode(events)
        return RealisticStream(protocol, msgs, qualified, rows,
                               schemas={sid: text for _, sid, text in enc.registered})
    if protocol not in ("simple-json", "simple-avro"):
        raise ValueError(f"protocol must be open, simple-json, simple-avro or avro, not {protocol!r}")
    if protocol == "simple-avro":
        # TiCDC writes a data/old map in Go map order, which differs from row to row
        opts.setdefault("avro_map_order", "random")
        opts.setdefault("seed", seed)
    enc = SimpleEncoder(protocol.split("-")[1], **opts)
    from .simple_encoder import SimpleTable
    stables = {name: SimpleTable(schema, name, tid, (START_MS - 60_000) << 18, simple_table(mix).columns)
               for tid, (name, mix) in enumerate(mixes.items(), 100)}
    names = {name: [c.name for c in st.columns] for name, st in stables.items()}
    events = [SimpleBootstrap(st, build_ts=START_MS) for st in stables.values()]
    for ch in changes:
        if ch[0] == "row":
            _, op, ts, after, before, name = ch
            events.append(SimpleDML(stables[name], op, ts,
                                    data=None if after is None else dict(zip(names[name], after)),
                                    old=None if before is None else dict(zip(names[name], before))))
        else:
            events.append(SimpleWatermark(ch[1]))
    msgs = enc.encode(events)
    return RealisticStream(protocol, msgs, qualified, rows,
                           bootstraps=[v for _, v in msgs[:len(stables)]])


def avro_table_schema(schemas: dict):
    """The default Arrow schema of one table from its Avro writer schemas (``{schema id: text}``,
    key and value: the value schema is the one with more fields), as a typed ``AvroDecoder``
    wants it: DECIMAL at its declared precision (decimal256 above 38), string when TiCDC sends
    none."""
    import pyarrow as pa

    from ..arrow_types import default_arrow_type
    from ..avro import compile_writer_schema
    from ..avro.schema import EXTENSIONS
    ws = max((compile_writer_schema(i, t) for i, t in schemas.items()), key=lambda w: len(w.fields))
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
