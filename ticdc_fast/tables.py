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
