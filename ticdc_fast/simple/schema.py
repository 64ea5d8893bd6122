"""Simple-protocol table schemas (TableSchema from BOOTSTRAP and DDL messages).

Each column's ``mysqlType`` maps onto the open protocol's type code and flags, so both
protocols share one set of value rules (``ticdc_fast.values`` and ``ticdc_fast.convert``).
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


class TableSchemaError(ValueError):
    """A TableSchema field has the wrong JSON type or an out-of-range value.  ``path`` is where
    the value at fault is in the TableSchema object: member names and array indexes
    (``("columns", 2, "dataType", "elements", 0)``; ``()``: the object itself), a member that is
    not there included; ``field`` the same path as the error words it
    (``columns[2] ('a').dataType.elements[0]``); ``column`` the column it belongs to, if any."""

    def __init__(self, path, problem: str, column: str | None = None, *, field: str | None = None):
        self.path, self.problem, self.column = tuple(path), problem, column
        self.field = _field_text(self.path, column) if field is None else field
        super().__init__(f"{self.field}: {problem}")


def _field_text(path: tuple, column: str | None) -> str:
    """``("columns", 2, "dataType", "length")`` of column 'a' as ``columns[2] ('a').dataType.length``;
    ``()`` as ``tableSchema``."""
    if not path:
        return "tableSchema"
    out = []
    for depth, key in enumerate(path):
        out.append(f"[{key}]" if type(key) is int else ("." if out else "") + key)
        if depth == 1 and path[0] == "columns" and len(path) > 2 and column is not None:
            out.append(f" ({column!r})")
    return "".join(out)


_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64 = (0, (1 << 64) - 1)
# TiCDC's Go structs type every field (TableSchema.TableID int64, Version uint64, dataType.Length
# and Decimal int, Elements []string, ...): anything else fails its json.Unmarshal.  A JSON null
# leaves Go's zero value, so null is accepted wherever the field is optional.  tableID may also
# come as the uint64 reinterpretation of an Avro long; its output range is checked where used.
_TABLE_ID_RANGE = (_INT64[0], _UINT64[1])


def _kind(v) -> str:
    return "null" if v is None else {dict: "object", list: "array", str: "string", bool: "boolean",
                                     int: "integer", float: "number"}.get(type(v), type(v).__name__)


def _text(v, path, column=None, *, optional=False) -> str | None:
    if v is None and optional:
        return None
    if type(v) is not str:
        raise TableSchemaError(path, f"expected a string, got {_kind(v)}", column)
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise TableSchemaError(path, "string is not valid Unicode (lone surrogate)", column) from None
    return v


def _integer(v, path, bounds, column=None, *, optional=True) -> int | None:
    if v is None and optional:
        return None
    if type(v) is not int:
        raise TableSchemaError(path, f"expected an integer, got {_kind(v)}", column)
    if not bounds[0] <= v <= bounds[1]:
        raise TableSchemaError(path, f"{v} out of range [{bounds[0]}, {bounds[1]}]", column)
    return v


def _flag(v, path, column=None) -> bool:
    if v is None:
        return False
    if type(v) is not bool:
        raise TableSchemaError(path, f"expected a boolean, got {_kind(v)}", column)
    return v


def _array(v, path, column=None) -> list:
    if v is None:
        return []
    if type(v) is not list:
        raise TableSchemaError(path, f"expected an array, got {_kind(v)}", column)
    return v


def _object(v, path, column=None) -> dict:
    if type(v) is not dict:
        raise TableSchemaError(path, f"expected an object, got {_kind(v)}", column)
    return v


def _column(d, at: tuple) -> SimpleColumn:
    d = _object(d, at)
    name = _text(d.get("name"), at + ("name",))
    at_type = at + ("dataType",)
    dt = _object(d.get("dataType"), at_type, name)
    mysql_type = _text(dt.get("mysqlType"), at_type + ("mysqlType",), name).lower()
    charset = _text(dt.get("charset"), at_type + ("charset",), name, optional=True) or ""
    _text(dt.get("collate"), at_type + ("collate",), name, optional=True)
    length = _integer(dt.get("length"), at_type + ("length",), _INT64, name)
    decimal = _integer(dt.get("decimal"), at_type + ("decimal",), _INT64, name)
    unsigned = _flag(dt.get("unsigned"), at_type + ("unsigned",), name)
    _flag(dt.get("zerofill"), at_type + ("zerofill",), name)
    nullable = d.get("nullable", True)
    nullable = True if nullable is None else _flag(nullable, at + ("nullable",), name)
    elements = tuple(_text(e, at_type + ("elements", k), name)
                     for k, e in enumerate(_array(dt.get("elements"), at_type + ("elements",), name)))
    if mysql_type.startswith("vector"):
        code = C.T_VECTOR
    else:
        code = _TYPE_CODES.get(mysql_type)
    if code is None:
        raise TableSchemaError(at_type + ("mysqlType",), f"unsupported mysqlType {mysql_type!r}", name)
    flags = C.FLAG_UNSIGNED if unsigned else 0
    if mysql_type in _STRING_TYPES and (charset == "binary" or code == C.T_BLOB):
        code, flags = C.T_BLOB, flags | C.FLAG_BINARY   # binary values travel as base64 / Avro bytes
    return SimpleColumn(
        name=name, mysql_type=mysql_type, charset=charset, unsigned=unsigned, nullable=nullable,
        elements=elements or None, decimal=decimal, length=length, type_code=code, flags=flags)


def _index(d, at: tuple) -> dict:
    d = _object(d, at)
    _text(d.get("name"), at + ("name",), optional=True)
    for flag in ("unique", "primary", "nullable"):
        _flag(d.get(flag), at + (flag,))
    for k, c in enumerate(_array(d.get("columns"), at + ("columns",))):
        _text(c, at + ("columns", k))
    return d


# TiCDC sends every table's BOOTSTRAP again and again (every 120 s and every 10,000 messages by
# default) with the same TableSchema, and a DDL's preTableSchema is one already announced.  Reading
# one checks every column in Python (a millisecond for 100 columns); a schema seen before is
# taken from here.  Its key is the object's JSON text, which tells true, 1 and 1.0 apart; a hit
# also needs the objects equal, and an object whose text reads back as another (a NaN, written
# as null) is never kept, so nothing that reads differently can share an entry.  Schemas that
# fail are not kept: they fail every time.
_SEEN_SCHEMAS: dict = {}
_SEEN_SCHEMAS_MAX = 256


def table_schema_from_dict(d: dict) -> TableSchema:
    """From the JSON (``schema`` key) or Avro (``database`` key) TableSchema object.  Every field
    is checked for its type and range (``TableSchemaError``, a ValueError, names the field)."""
    try:
        key = orjson.dumps(d)
    except TypeError:           # not JSON-representable: checked (and refused) the long way
        return _read_table_schema(d)
    seen = _SEEN_SCHEMAS.get(key)
    if seen is not None and seen[0] == d:
        return seen[1]
    ts = _read_table_schema(d)
    kept = orjson.loads(key)        # a copy: the caller's object may change later
    if kept == d:                   # else the JSON text lost something (a NaN): not kept
        if len(_SEEN_SCHEMAS) >= _SEEN_SCHEMAS_MAX:
            _SEEN_SCHEMAS.clear()
        _SEEN_SCHEMAS[key] = (kept, ts)
    return ts


def _read_table_schema(d: dict) -> TableSchema:
    d = _object(d, ())
    if "schema" in d or "database" not in d:
        database = _text(d.get("schema"), ("schema",))
    else:
        database = _text(d.get("database"), ("database",))
    table = _text(d.get("table"), ("table",))
    table_id = _integer(d.get("tableID"), ("tableID",), _TABLE_ID_RANGE) or 0
    version = _integer(d.get("version"), ("version",), _UINT64) or 0
    cols = tuple(_column(c, ("columns", k)) for k, c in enumerate(_array(d.get("columns"), ("columns",))))
    seen = set()
    for k, c in enumerate(cols):
        if c.name in seen:
            # the second copy's name is the value at fault
            raise TableSchemaError(("columns", k, "name"), f"column {c.name!r} appears twice", c.name,
                                   field="columns")
        seen.add(c.name)
    indexes = tuple(_index(x, ("indexes", k)) for k, x in enumerate(_array(d.get("indexes"), ("indexes",))))
    norm = dict(d)
    if "database" in norm and "schema" not in norm:
        norm = {"schema": norm.pop("database"), **norm}
    try:
        text = orjson.dumps(norm).decode()
    except TypeError as exc:   # e.g. a column default beyond 64-bit integers (stdlib-parsed JSON)
        raise TableSchemaError((), f"cannot be represented as JSON: {exc}") from None
    return TableSchema(database, table, table_id, version, cols, indexes, text)


def arrow_schema(ts: TableSchema, *, spark: bool = False) -> pa.Schema:
    """Default Arrow schema of a table (ENUM/SET as their names: string), or its Spark variant."""
    fields = []
    for k, c in enumerate(ts.columns):
        if c.type_code in (C.T_ENUM, C.T_SET):
            t = pa.string()
        elif c.type_code == C.T_NEWDECIMAL and c.length and c.length > 0:
            scale = c.decimal or 0
            if not (c.length <= 76 and 0 <= scale <= c.length):
                raise TableSchemaError(("columns", k, "dataType", "length"),
                                       f"DECIMAL({c.length},{scale}) has no Arrow type", c.name,
                                       field=f"column {c.name!r}")
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
