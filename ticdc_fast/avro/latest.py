"""``schema="auto"`` for the Avro protocol: the registry's latest value schema of a topic
(subject ``<topic>-value``, TiCDC's topic-name strategy) as an Arrow schema."""
from __future__ import annotations

import pyarrow as pa

from ..arrow_types import default_arrow_type
from ..errors import UnavailableError
from .registry import RegistryFailure, SchemaSource
from .schema import WriterSchema, compile_writer_schema


def value_subject(topic: str) -> str:
    """The registry subject of a topic's value schemas: TiCDC writes a ``.`` of the topic as
    ``_`` in the subject (its ``sanitizeTopic``), then ``-value``."""
    return topic.replace(".", "_") + "-value"


def avro_arrow_schema(ws: WriterSchema) -> pa.Schema:
    """The default Arrow schema of a table from its writer schema (TiDB extension fields left
    out; DECIMAL as the decimal of its precision, or string under decimal-handling-mode=string)."""
    fields = []
    for f in ws.column_fields():
        t = default_arrow_type(f.type_code, f.flags, f.scale)
        if f.type_code == 246:
            dec_branch = next((b for b in f.branches if b.decimal is not None), None)
            if dec_branch is not None and dec_branch.decimal[0]:
                p, s = dec_branch.decimal
                t = pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)
            else:
                t = pa.string()   # decimal-handling-mode=string: the text is exact
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


def latest_value_schema(registry, topic: str, table=None, *, timeout: float = 10.0,
                        retries: int = 3) -> tuple[int, pa.Schema]:
    """(schema id, Arrow schema) of the latest value schema the registry holds for ``topic``.
    ``registry``: what ``AvroDecoder`` takes, or a ``SchemaSource``.  ``table`` (``"db.tbl"``):
    the schema must be that table's (a topic that several tables share has one subject, whose
    latest version may be another table's).  A registry out of reach raises
    ``UnavailableError``; a subject it does not know, ``ValueError``."""
    from ..tables import split_table
    source = registry if isinstance(registry, SchemaSource) else SchemaSource(registry, timeout=timeout,
                                                                              retries=retries)
    subject = value_subject(topic)
    try:
        sid, text = source.latest(subject)
    except RegistryFailure as exc:
        if exc.missing:
            raise ValueError(f"schema='auto': no value schema for topic {topic!r}: {exc}") from None
        raise UnavailableError(str(exc), location=source.url) from None
    ws = compile_writer_schema(sid, text)
    if table is not None:
        want = split_table(table)
        if (ws.database, ws.table) != want:
            raise ValueError(f"schema='auto': the latest value schema of subject {subject!r} "
                             f"(id {sid}) is table {ws.database}.{ws.table}, not {'.'.join(want)}")
    return sid, avro_arrow_schema(ws)
