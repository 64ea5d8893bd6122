"""TiCDC Avro-protocol writer schemas: which TiDB type each field carries.

A writer schema (from the registry) is compiled once per schema id into a ``WriterSchema``: the
record's database/table (namespace and name, spec §C.3), and per field its Avro branches and the
open-protocol type code + flags its values follow (from ``connect.parameters.tidb_type``), so all
protocols share one set of value rules."""
from __future__ import annotations

from dataclasses import dataclass

import orjson

from .. import _constants as C

# tidb_type → (type code, flags)
_TIDB_TYPES = {
    "INT": (C.T_LONG, 0), "INT UNSIGNED": (C.T_LONG, C.FLAG_UNSIGNED),
    "BIGINT": (C.T_LONGLONG, 0), "BIGINT UNSIGNED": (C.T_LONGLONG, C.FLAG_UNSIGNED),
    "FLOAT": (C.T_FLOAT, 0), "DOUBLE": (C.T_DOUBLE, 0), "DECIMAL": (C.T_NEWDECIMAL, 0),
    "TEXT": (C.T_VARCHAR, 0), "BLOB": (C.T_BLOB, C.FLAG_BINARY), "BIT": (C.T_BIT, 0),
    "ENUM": (C.T_VARCHAR, 0), "SET": (C.T_VARCHAR, 0),      # Avro carries the element names
    "DATE": (C.T_DATE, 0), "DATETIME": (C.T_DATETIME, 0), "TIMESTAMP": (C.T_TIMESTAMP, 0),
    "TIME": (C.T_DURATION, 0), "YEAR": (C.T_YEAR, 0), "JSON": (C.T_JSON, 0),
    "TiDBVECTORFloat32": (C.T_VECTOR, 0),
}
# without connect.parameters (old writers): by Avro type
_AVRO_DEFAULTS = {"int": (C.T_LONG, 0), "long": (C.T_LONGLONG, 0), "float": (C.T_FLOAT, 0),
                  "double": (C.T_DOUBLE, 0), "string": (C.T_VARCHAR, 0),
                  "bytes": (C.T_BLOB, C.FLAG_BINARY), "fixed": (C.T_BLOB, C.FLAG_BINARY),
                  "boolean": (C.T_TINY, 0), "enum": (C.T_VARCHAR, 0)}

EXTENSIONS = {"_tidb_op", "_tidb_commit_ts", "_tidb_commit_physical_time", "_tidb_row_level_checksum",
              "_tidb_corrupted", "_tidb_checksum_version", "_ticdc_before"}

# branch kinds (mirrored by the Cython core)
AV_NULL, AV_BOOLEAN, AV_INT, AV_LONG, AV_FLOAT, AV_DOUBLE, AV_BYTES, AV_STRING, AV_FIXED, AV_ENUM, \
    AV_RECORD = range(11)
_PRIMS = {"null": AV_NULL, "boolean": AV_BOOLEAN, "int": AV_INT, "long": AV_LONG, "float": AV_FLOAT,
          "double": AV_DOUBLE, "bytes": AV_BYTES, "string": AV_STRING}


class SchemaProblem(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Branch:
    kind: int
    decimal: tuple[int, int] | None = None     # (precision, scale) for bytes/fixed decimals
    size: int = 0                               # fixed
    symbols: tuple[str, ...] = ()               # enum
    fields: tuple = ()                          # record (the _ticdc_before image)
    tidb_type: str | None = None


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    branches: tuple[Branch, ...]
    is_union: bool
    type_code: int
    flags: int
    scale: int


@dataclass(frozen=True, slots=True)
class WriterSchema:
    schema_id: int
    database: str | None
    table: str
    fields: tuple[Field, ...]
    text: str

    def column_fields(self):
        return [f for f in self.fields if f.name not in EXTENSIONS]


def _same(same: dict, obj):
    """The equal object compiled before (schemas are immutable values): the schema versions of
    a table, each under its own id, then share their fields, and a decoder that meets thousands
    of ids holds (and the garbage collector walks) a few objects per id, not dozens."""
    if isinstance(obj, Branch) and not (all(type(x) is str for x in obj.symbols)
                                        and (obj.tidb_type is None or type(obj.tidb_type) is str)):
        return obj      # a value that is equal but not the same (True == 1) must not stand in
    try:
        return same.setdefault(obj, obj)
    except TypeError:   # a part that cannot be hashed (an unusual schema): kept as it is
        return obj


def _branch(t, named: dict, same: dict) -> Branch:
    if isinstance(t, str):
        if t in _PRIMS:
            return _same(same, Branch(_PRIMS[t]))
        if t in named:
            return named[t]
        raise SchemaProblem(f"unsupported Avro type {t!r}")
    if isinstance(t, list):
        raise SchemaProblem("nested unions are not supported")
    if not isinstance(t, dict):
        raise SchemaProblem(f"bad Avro type {t!r:.60}")
    kind = t.get("type")
    params = t.get("connect.parameters") or {}
    tidb_type = params.get("tidb_type") if isinstance(params, dict) else None
    dec = None
    if t.get("logicalType") == "decimal":
        dec = (int(t.get("precision", 0)), int(t.get("scale", 0) or 0))
    if kind in _PRIMS:
        return _same(same, Branch(_PRIMS[kind], decimal=dec, tidb_type=tidb_type))
    if kind == "fixed":
        b = Branch(AV_FIXED, decimal=dec, size=int(t["size"]), tidb_type=tidb_type)
    elif kind == "enum":
        b = Branch(AV_ENUM, symbols=tuple(t["symbols"]), tidb_type=tidb_type)
    elif kind == "record":
        b = Branch(AV_RECORD, fields=tuple(_field(f, named, same) for f in t.get("fields", ())), tidb_type=tidb_type)
    elif isinstance(kind, dict) or isinstance(kind, list):
        return _branch(kind, named, same)
    else:
        raise SchemaProblem(f"unsupported Avro type {kind!r}")
    b = _same(same, b)
    if "name" in t:
        named[t["name"]] = b
        if t.get("namespace"):
            named[f"{t['namespace']}.{t['name']}"] = b
    return b


def _field(f: dict, named: dict, same: dict) -> Field:
    t = f["type"]
    branches = tuple(_branch(x, named, same) for x in t) if isinstance(t, list) else (_branch(t, named, same),)
    real = [b for b in branches if b.kind != AV_NULL]
    code, flags, scale = C.T_NULL, 0, 0
    if real:
        b = real[0]
        if b.tidb_type in _TIDB_TYPES:
            code, flags = _TIDB_TYPES[b.tidb_type]
        elif b.decimal is not None:
            code = C.T_NEWDECIMAL
        else:
            kind_name = {v: k for k, v in _PRIMS.items()}.get(b.kind) or ("fixed" if b.kind == AV_FIXED else
                                                                          "enum" if b.kind == AV_ENUM else "")
            code, flags = _AVRO_DEFAULTS.get(kind_name, (C.T_VARCHAR, 0))
        if b.decimal is not None:
            code, scale = C.T_NEWDECIMAL, b.decimal[1]
    return _same(same, Field(str(f["name"]), _same(same, branches), isinstance(t, list), code, flags, scale))


def compile_writer_schema(schema_id: int, text: str, same: dict | None = None) -> WriterSchema:
    """``same``: the parts compiled before, shared by equal parts of this one (a dict the caller
    keeps with the schemas it compiled; a new one when None)."""
    if same is None:
        same = {}
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise SchemaProblem(f"schema id {schema_id} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("type") != "record":
        raise SchemaProblem(f"schema id {schema_id} is not an Avro record")
    try:
        named: dict = {}
        fields = doc.get("fields", ())
        if not isinstance(fields, list):
            raise SchemaProblem("'fields' is not a list")
        # the fields compile to what their JSON says alone (the record's name is not theirs to
        # name): fields written the same way as a schema compiled before are its fields
        key = ("fields", orjson.dumps(fields))
        compiled = same.get(key)
        if compiled is None:
            compiled = same[key] = _same(same, tuple(_field(f, named, same) for f in fields))
        fields = compiled
        ns = doc.get("namespace") or ""
        _, dot, database = str(ns).partition(".")
        return WriterSchema(schema_id, database if dot else None, str(doc["name"]), fields, text)
    except SchemaProblem as exc:
        raise SchemaProblem(f"schema id {schema_id}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SchemaProblem(f"schema id {schema_id} is not a valid Avro record schema "
                            f"({type(exc).__name__}: {exc})") from None
