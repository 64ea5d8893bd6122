"""``schema="auto"`` for the simple protocol: the table's latest TableSchema in a stream, from
its BOOTSTRAP and DDL messages (the only messages that carry one)."""
from __future__ import annotations

from ..compression import DEFAULT_MAX_MESSAGE_BYTES, check_compression, decompress
from .messages import AVRO_MESSAGE_BRANCH, parse_message
from .schema import TableSchema, table_schema_from_dict

# the Avro encoding's message-type enum (second byte): BOOTSTRAP 1, DDL 2, zigzag-encoded
_AVRO_SCHEMA_TYPES = (2, 4)


def _may_carry_schema(value: bytes, encoding: str) -> bool:
    """A cheap test that leaves out DML and WATERMARK messages without parsing them: a stream
    is mostly rows, and only BOOTSTRAP/DDL messages carry a TableSchema."""
    if encoding == "avro":
        return len(value) > 1 and value[0] == 2 * AVRO_MESSAGE_BRANCH and value[1] in _AVRO_SCHEMA_TYPES
    return b"tableSchema" in value


def latest_table_schema(values, table, *, encoding: str = "json", compression: str = "none",
                        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> TableSchema | None:
    """The TableSchema of ``table`` (``"db.tbl"`` or ``(db, tbl)``) with the highest version
    among the BOOTSTRAP and DDL messages in ``values`` (message values: bytes, or ``None``),
    or ``None`` when no message carries one.  What ``schema="auto"`` types a table with.

    Messages that do not decode are passed over: this only looks for the schema; decoding the
    stream reports them.  A DDL that drops the table carries no ``tableSchema`` and changes
    nothing here."""
    from ..tables import split_table
    want = split_table(table) if not isinstance(table, tuple) else table
    if encoding not in ("json", "avro"):
        raise ValueError("encoding must be 'json' or 'avro'")
    compression = check_compression(compression)
    best = None
    for i, v in enumerate(values):
        if v is None:
            continue
        v = bytes(v)
        try:
            if compression != "none":
                v = decompress(v, compression, max_message_bytes)
            if not _may_carry_schema(v, encoding):
                continue
            m = parse_message(v, i, encoding)
            if m.kind not in ("BOOTSTRAP", "DDL") or not isinstance(m.table_schema, dict):
                continue
            ts = table_schema_from_dict(m.table_schema)
        except ValueError:   # DecodeError, TableSchemaError, a bad compressed frame
            continue
        if (ts.database, ts.table) == want and (best is None or ts.version > best.version):
            best = ts
    return best
