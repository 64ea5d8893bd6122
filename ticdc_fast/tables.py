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
    total = sum(b.num_rows for _, b in blocks)
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
