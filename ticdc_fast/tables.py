"""Many tables of one topic in one pass: ``tables={"db.t1": schema1, ...}`` on every decoder.

TiCDC's default dispatcher puts many tables in one topic.  A decoder given ``tables=`` reads
every message once and returns a ``TableBatches``: one typed batch per listed table, each with
exactly the columns (and rows) the single-table decode ``table="db.t1", schema=schema1`` gives.
Rows of tables not listed follow ``unlisted``:

- ``"skip"`` (default): left out and counted in ``decoder.stats.unlisted_rows``;
- ``"generic"``: kept, in generic layout, under the key ``OTHER_TABLES`` (``"*"``).

With ``on_error="dead_letter"`` the bad messages come under the key ``DEAD_LETTERS`` as
``ERROR`` rows (``_op``, ``_error``, ``_raw_key``, ``_raw_value`` and the Kafka columns asked for).
"""
from __future__ import annotations

import pyarrow as pa

OTHER_TABLES = "*"
DEAD_LETTERS = "_dead_letters"
UNLISTED = ("skip", "generic")


def split_table(table) -> tuple[str, str]:
    """``"db.table"`` (or a ``(db, table)`` pair) → ``(db, table)``."""
    if isinstance(table, tuple):
        if len(table) != 2 or not all(isinstance(p, str) and p for p in table):
            raise ValueError(f"table must be 'db.table' or (db, table), not {table!r}")
        return table
    schema, dot, name = str(table).partition(".")
    if not dot or not schema or not name:
        raise ValueError(f"table must be 'db.table', not {table!r}")
    return schema, name


def table_key(table) -> str:
    """The key a table has in a ``TableBatches``: ``"db.table"``."""
    return ".".join(split_table(table))


def check_tables(tables, unlisted: str, *, table=None, schema=None,
                 schema_optional: bool = False) -> dict:
    """``tables`` as ``{"db.t": pyarrow.Schema | None}`` in the caller's order.

    A schema may be a pyarrow ``Schema``, a ``pyspark.sql.types.StructType`` or a DDL string;
    ``None`` only where the protocol can find it in the stream (``schema_optional``)."""
    from .arrow_types import as_arrow_schema

    if unlisted not in UNLISTED:
        raise ValueError(f"unlisted must be one of {', '.join(map(repr, UNLISTED))}, not {unlisted!r}")
    if table is not None or schema is not None:
        raise ValueError("give either tables={...} or table=/schema=, not both")
    if not isinstance(tables, dict) or not tables:
        raise ValueError("tables must be a non-empty dict {'db.table': schema}")
    out: dict = {}
    for name, sch in tables.items():
        key = table_key(name)
        if key in out:
            raise ValueError(f"table {key!r} is listed twice")
        if sch is None and not schema_optional:
            raise ValueError(f"table {key!r} needs a schema")
        out[key] = None if sch is None else as_arrow_schema(sch)
    return out


class TableBatches(dict):
    """``{"db.table": pyarrow.RecordBatch}`` from one multi-table decode, in the order the
    tables were listed (then ``OTHER_TABLES`` and ``DEAD_LETTERS`` when present)."""

    @property
    def num_rows(self) -> int:
        """Decoded rows over all tables (dead letters not included)."""
        return sum(b.num_rows for k, b in self.items() if k != DEAD_LETTERS)

    def tables(self) -> list[str]:
        """The listed tables' keys (not ``OTHER_TABLES``/``DEAD_LETTERS``)."""
        return [k for k in self if k not in (OTHER_TABLES, DEAD_LETTERS)]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {b.num_rows} rows" for k, b in self.items())
        return f"TableBatches({{{inner}}})"


# ------------------------------------------------------------------ one batch for Spark
_HEAD = ("_op", "_commit_ts")
_KAFKA = ("_partition", "_offset")
COL_TABLE_KEY = "_table"
_DEAD = ("_error", "_raw_key", "_raw_value")


def stacked_schema(schemas: dict) -> pa.Schema:
    """The one-batch layout of a multi-table result (what ``ticdc_fast.spark.decode`` gives with
    ``tables=``): ``_op``, ``_commit_ts``, ``_table`` (the key of the struct holding the row),
    one nullable struct column per key of ``schemas`` (``"db.table"`` or ``OTHER_TABLES``:
    that table's columns but the head and Kafka ones), then the dead-letter columns when
    ``schemas`` has ``DEAD_LETTERS``, then ``_partition``/``_offset`` when the tables have them.
    ``schemas``: ``{key: pyarrow.Schema}`` as ``output_schemas()`` gives them."""
    tables = {k: s for k, s in schemas.items() if k != DEAD_LETTERS}
    first = next(iter(tables.values()))
    dead = DEAD_LETTERS in schemas
    head = [first.field(n) for n in _HEAD]
    if dead:
        head = [head[0], head[1].with_nullable(True)]
    fields = head + [pa.field(COL_TABLE_KEY, pa.string())]
    for key, s in tables.items():
        body = [f for f in s if f.name not in _HEAD and f.name not in _KAFKA]
        fields.append(pa.field(key, pa.struct(body)))
    if dead:
        fields += [schemas[DEAD_LETTERS].field(n) for n in _DEAD]
    fields += [first.field(n) for n in _KAFKA if first.get_field_index(n) >= 0]
    return pa.schema(fields)


def stack_batches(batches: TableBatches, schema: pa.Schema) -> pa.RecordBatch:
    """``batches`` as one batch of ``stacked_schema``: the tables' rows one table after the
    other (each table's rows in message order), each row's own table in its struct column and
    the other struct columns null."""
    keys = [k for k in batches if k != DEAD_LETTERS]
    dead = batches.get(DEAD_LETTERS)
    blocks = [(k, batches[k]) for k in keys] + ([(DEAD_LETTERS, dead)] if dead is not None else [])
    cols = []
    for f in schema:
        if f.name == COL_TABLE_KEY:
            cols.append(pa.concat_arrays([pa.repeat(pa.scalar(k if k != DEAD_LETTERS else None, pa.string()),
                                                    b.num_rows) for k, b in blocks])
                        if blocks else pa.nulls(0, pa.string()))
        elif pa.types.is_struct(f.type) and f.name in batches:
            cols.append(_struct_block(batches, blocks, f))
        else:
            parts = [b.column(f.name) if b.schema.get_field_index(f.name) >= 0 else pa.nulls(b.num_rows, f.type)
                     for _, b in blocks]
            cols.append(pa.concat_arrays([p.cast(f.type) if p.type != f.type else p for p in parts])
                        if parts else pa.nulls(0, f.type))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _struct_block(batches: TableBatches, blocks, f: pa.Field) -> pa.Array:
    before = after = 0
    mine = None
    for k, b in blocks:
        if k == f.name:
            mine = b
        elif mine is None:
            before += b.num_rows
        else:
            after += b.num_rows
    children = [mine.column(c.name) for c in f.type]
    own = pa.StructArray.from_arrays(children, fields=list(f.type))
    parts = [p for p in (pa.nulls(before, f.type), own, pa.nulls(after, f.type)) if len(p)]
    return pa.concat_arrays(parts) if parts else pa.nulls(0, f.type)


# ------------------------------------------------------------------ routing: one pass over many tables
# Every message of the simple and Avro protocols is about one table, so a decoder given tables=
# routes each message to one typed decoder per table ("parts", the single-table decoders
# themselves) and decodes it there, once.  A protocol gives the route of each message:
ROUTE_ALL = -1        # every part (a WATERMARK/checkpoint; a message whose table cannot be read)
ROUTE_UNLISTED = -2   # a table not listed: the generic part, or skipped and counted


class TableRouter:
    """``decode`` over the parts of a multi-table decoder, with the single-table guarantees.

    ``parts``: ``{"db.table": decoder}`` (typed, ``on_error="fail"``), ``other``: the generic
    decoder of ``unlisted="generic"`` or None; ``route(keys, values)`` → the route of each message
    (a numpy int32 array: the index of its table in ``parts``, ``ROUTE_ALL`` or ``ROUTE_UNLISTED``).

    A part offers: ``_decode_batch(keys, values, partitions, offsets)`` (all or nothing),
    ``_part_begin()``, ``_part_mark()``, ``_part_rollback(mark)`` (``None``: to the begin),
    ``_part_commit()``, ``_core_text_counter()``, ``_batch_schema(partitions, offsets)`` and,
    optionally, ``_set_aside_held(exc)`` (see ``ErrorPolicy``).

    One ``decode`` is all or nothing over every part; the error of a failed stretch is the one
    about its first bad message in message order, at its index in the batch (a part sees only
    its own messages: their indexes are mapped back); the error policy runs once, here."""

    def __init__(self, owner, parts: dict, other, route, on_error: str):
        from .policy import ErrorPolicy
        self.owner = owner
        self.parts = dict(parts)
        self.other = other
        self._subs = list(self.parts.values()) + ([other] if other is not None else [])
        self._route = route
        self.policy = ErrorPolicy(on_error, owner.stats, self._unattributed)
        self._unlisted_in_call = 0

    # ------------------------------------------------------------------ decoding
    def decode(self, keys, values, partitions, offsets) -> TableBatches:
        """Runs inside the owner's ``decode`` (its locking, Kafka positions and invalid-UTF-8
        counting)."""
        self._unlisted_in_call = 0
        begun = []
        try:
            for sub in self._subs:
                sub._part_begin()
                begun.append(sub)
            out = self.policy.run(self._counted, keys, values, partitions, offsets)
        except BaseException:
            for sub in begun:
                sub._part_rollback(None)
            raise
        for sub in self._subs:
            sub._part_commit()
        self.owner.stats.unlisted_rows += self._unlisted_in_call
        return out

    def _text_count(self) -> int:
        return self.owner._text_policy.replaced + sum(s._core_text_counter() for s in self._subs)

    def _counted(self, keys, values, partitions, offsets) -> TableBatches:
        mark = self._text_count()
        out, unlisted = self._stretch(keys, values, partitions, offsets)
        self.owner._replaced_in_call += self._text_count() - mark
        self._unlisted_in_call += unlisted
        return out

    def _stretch(self, keys, values, partitions, offsets):
        import numpy as np
        from .errors import DecodeError

        n = len(values)
        if keys is not None and len(keys) != n:
            raise DecodeError(f"{len(keys)} keys but {n} values")
        for name, extra in (("partitions", partitions), ("offsets", offsets)):
            if extra is not None and len(extra) != n:
                raise ValueError(f"{name} has {len(extra)} entries for {n} messages")
        keys, values, partitions, offsets = (_one_chunk(s) for s in (keys, values, partitions, offsets))
        codes = self._route(keys, values) if n else np.zeros(0, np.int32)
        everywhere = codes == ROUTE_ALL
        marks = [sub._part_mark() for sub in self._subs]
        outs, failures, limit = [], [], n
        try:
            for k, sub in enumerate(self._subs):
                mine = codes == (k if k < len(self.parts) else ROUTE_UNLISTED)
                idx = np.flatnonzero(mine | everywhere)
                if limit < n:     # a message before the first bad one seen so far decides
                    idx = idx[idx < limit]
                try:
                    outs.append(sub._decode_batch(*(_take(s, idx, n) for s in (keys, values, partitions, offsets))))
                except DecodeError as exc:
                    j = exc.message_index
                    if j is not None and 0 <= j < len(idx):
                        exc.message_index = int(idx[j])
                        exc.args = (exc._text(),)
                        limit = min(limit, exc.message_index)
                        failures.append((exc.message_index, exc))
                    else:         # about no message of this batch (a held one, a bound)
                        failures.append((n, exc))
                    outs.append(None)
            if failures:
                raise min(failures, key=lambda f: f[0])[1]
        except BaseException:
            for sub, mark in zip(self._subs, marks):
                sub._part_rollback(mark)
            raise
        out = TableBatches(zip(self.parts, outs))
        if self.other is not None:
            out[OTHER_TABLES] = outs[-1]
        unlisted = int(np.count_nonzero(codes == ROUTE_UNLISTED)) if self.other is None else 0
        return out, unlisted

    def _unattributed(self, exc):
        for sub in self._subs:
            aside = getattr(sub, "_set_aside_held", None)
            bad = aside(exc) if aside is not None else None
            if bad is not None:
                return bad
        return None

    # ------------------------------------------------------------------ schemas
    def output_schemas(self, partitions: bool = False, offsets: bool = False) -> dict:
        """``{"db.table": schema, ...}`` of the batches ``decode`` gives (``OTHER_TABLES`` and
        ``DEAD_LETTERS`` included when they come)."""
        out = {key: sub._batch_schema(partitions, offsets) for key, sub in self.parts.items()}
        if self.other is not None:
            out[OTHER_TABLES] = self.other._batch_schema(partitions, offsets)
        return self.policy.output_schemas(out)


def _one_chunk(seq):
    if isinstance(seq, pa.ChunkedArray):
        return seq.combine_chunks()
    return seq


def _take(seq, idx, n: int):
    """The messages ``idx`` of one stretch's keys, values, partitions or offsets."""
    if seq is None or len(idx) == n:
        return seq
    if isinstance(seq, pa.Array):
        return seq.take(pa.array(idx, pa.int64()))
    return [seq[i] for i in idx.tolist()]
