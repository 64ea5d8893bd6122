"""Simple-protocol table schemas (TableSchema from BOOTSTRAP and DDL messages).

Each column's ``mysqlType`` maps onto the open protocol's type code and flags, so both
protocols share one set of value rules (``ticdc_fast.values`` and the open reference twin).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import orjson
import pyarrow as pa

from .. import _constants as C
from ..arrow_types import default_arrow_type, spark_schema

# mysqlType (TiDB TypeToStr) -> open-protocol type code
_TYPE_CODES = {
    "tinyint": C.T_TINY, "smallint": C.T_SHORT, "mediumint": C.T_INT24, "int": C.T_LONG,
    "bigint": C.T_LONGLONG, "year": C.T_YEAR, "float": C.T_FLOAT, "double": C.T_DOUBLE,
    "decimal": C.T_NEWDECIMAL, "date": C.T_DATE, "datetime": C.T_DATETIME,
    "timestamp": C.T_TIMESTAMP, "time": C.T_DURATION, "bit": C.T_BIT, "enum": C.T_ENUM,
    "set": C.T_SET, "json": C.T_JSON,
    "varchar": C.T_VARCHAR, "char": C.T_STRING, "var_string": C.T_VAR_STRING,
    "text": C.T_VARCHAR, "tinytext": C.T_VARCHAR, "mediumtext": C.T_VARCHAR, "longtext": C.T_VARCHAR,
    "varbinary": C.T_BLOB, "binary": C.T_BLOB, "blob": C.T_BLOB, "tinyblob": C.T_BLOB,
    "mediumblob": C.T_BLOB, "longblob": C.T_BLOB,
}
_STRING_TYPES = {"varchar", "char", "var_string", "text", "tinytext", "mediumtext", "longtext",
                 "varbinary", "binary", "blob", "tinyblob", "mediumblob", "longblob"}


@dataclass(frozen=True)
class SimpleColumn:
    name: str
    mysql_type: str
    charset: str
    unsigned: bool
    nullable: bool
    elements: tuple[str, ...] | None
    decimal: int | None
    length: int | None
    type_code: int       # the open-protocol type code this column's values follow
    flags: int           # FLAG_BINARY (base64 values) / FLAG_UNSIGNED


@dataclass(frozen=True)
class TableSchema:
    database: str
    table: str
    table_id: int
    version: int
    columns: tuple[SimpleColumn, ...]
    indexes: tuple = ()
    json: str = field(default="", compare=False)   # canonical JSON text, as carried in output rows

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.database, self.table, self.version)

    def column(self, name: str) -> SimpleColumn | None:
        for c in self.columns:
            if c.name == name:
                return c
        return None


def _column(d: dict) -> SimpleColumn:
    dt = d.get("dataType") or {}
    mysql_type = str(dt.get("mysqlType", "")).lower()
    charset = dt.get("charset") or ""
    if mysql_type.startswith("vector"):
        code = C.T_VECTOR
    else:
        code = _TYPE_CODES.get(mysql_type)
    if code is None:
        raise ValueError(f"column {d.get('name')!r}: unsupported mysqlType {mysql_type!r}")
    flags = 0
    if dt.get("unsigned"):
        flags |= C.FLAG_UNSIGNED
    if mysql_type in _STRING_TYPES and (charset == "binary" or code == C.T_BLOB):
        code, flags = C.T_BLOB, flags | C.FLAG_BINARY   # binary values travel as base64 / Avro bytes
    elements = dt.get("elements")
    return SimpleColumn(
        name=str(d["name"]), mysql_type=mysql_type, charset=charset, unsigned=bool(dt.get("unsigned")),
        nullable=bool(d.get("nullable", True)), elements=tuple(elements) if elements else None,
        decimal=dt.get("decimal"), length=dt.get("length"), type_code=code, flags=flags)


def table_schema_from_dict(d: dict) -> TableSchema:
    """From the JSON (``schema`` key) or Avro (``database`` key) TableSchema object."""
    database = d.get("schema", d.get("database"))
    if not isinstance(database, str) or not isinstance(d.get("table"), str):
        raise ValueError("TableSchema needs schema/database and table")
    cols = tuple(_column(c) for c in d.get("columns") or ())
    norm = dict(d)
    if "database" in norm and "schema" not in norm:
        norm = {"schema": norm.pop("database"), **norm}
    return TableSchema(database, d["table"], int(d.get("tableID") or 0), int(d.get("version") or 0),
                       cols, tuple(d.get("indexes") or ()), orjson.dumps(norm).decode())


def arrow_schema(ts: TableSchema, *, spark: bool = False) -> pa.Schema:
    """Default Arrow schema of a table (ENUM/SET as their names: string), or its Spark variant."""
    fields = []
    for c in ts.columns:
        if c.type_code in (C.T_ENUM, C.T_SET):
            t = pa.string()
        elif c.type_code == C.T_NEWDECIMAL and c.length and c.length > 0:
            scale = c.decimal or 0
            t = pa.decimal128(c.length, scale) if c.length <= 38 else pa.decimal256(c.length, scale)
        else:
            t = default_arrow_type(c.type_code, c.flags)
        fields.append(pa.field(c.name, t, nullable=True,
                               metadata={b"mysql_type": c.mysql_type.encode()}))
    schema = pa.schema(fields)
    return spark_schema(schema) if spark else schema


def simple_arrow_schema(source, *, encoding: str = "json", spark: bool = False) -> pa.Schema:
    """The Arrow schema of a table from a BOOTSTRAP or DDL message value (JSON or Avro bytes), a
    TableSchema JSON object/text, or a ``TableSchema``; ``spark=True`` gives the variant Spark's
    Arrow path accepts (no unsigned integers, decimals ≤ 38 digits, no durations)."""
    if not isinstance(source, TableSchema):
        if isinstance(source, (bytes, bytearray, memoryview)) and encoding == "avro":
            from .messages import parse_avro_message
            source = parse_avro_message(bytes(source), 0).table_schema
        elif isinstance(source, (bytes, bytearray, memoryview, str)):
            source = orjson.loads(bytes(source) if not isinstance(source, str) else source)
        if isinstance(source, dict) and "tableSchema" in source:
            source = source["tableSchema"]
        if source is None:
            raise ValueError("the message carries no TableSchema")
        source = table_schema_from_dict(source)
    return arrow_schema(source, spark=spark)
