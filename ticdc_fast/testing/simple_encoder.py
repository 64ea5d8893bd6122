"""A TiCDC Simple Protocol *encoder* (``protocol=simple``), for tests, benchmarks and demos.

It writes the Kafka message values TiCDC writes, in both encodings:

* ``encoding="json"``: Go ``encoding/json`` of the ``message`` struct (field order and
  ``omitempty`` as in the code; map keys sorted; ``<>&`` and U+2028/U+2029 escaped; invalid
  UTF-8 replaced by ``\\ufffd``).
* ``encoding="avro"``: goavro ``BinaryFromNative`` against the fixed schema
  ``simple_protocol.avsc``: byte 0 is ``0x16`` (top-level union branch 11 = ``Message``).

``flavor`` picks the code base: ``"tiflow"`` (classic TiCDC) or ``"ticdc"`` (new
architecture).  They differ only in Avro: BIT values are ``long`` (tiflow) or ``string``
(ticdc), and the ticdc Avro TableSchema also sets ``decimal`` (the fsp) for TIMESTAMP columns.

The Kafka key is always ``None``.  Values are taken as given (no range checks beyond what the
wire format needs), so tests can forge inputs.  Wire rules: ``shared/spec/protocols.md`` §0, §B.

>>> from ticdc_fast.testing import SimpleEncoder, simple_changefeed
>>> messages = SimpleEncoder("avro").encode(simple_changefeed(1000))
"""
from __future__ import annotations

import base64
import datetime as _dt
import gc
import math
import random
import re
import struct
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal

from ..compression import check_compression, compress
from ..values import format_float_plain
from .open_encoder import make_tso

__all__ = [
    "SimpleColumn", "SimpleTable", "SimpleDML", "SimpleDDL", "SimpleBootstrap", "SimpleWatermark",
    "SimpleEncoder", "simple_changefeed", "orders_table", "claim_check_file", "go_json_string",
    "format_float_f", "DDL_TYPES", "DML_TYPES",
]

ENCODINGS = ("json", "avro")
FLAVORS = ("tiflow", "ticdc")
LARGE_MESSAGE_HANDLES = ("none", "handle-key-only", "claim-check")
AVRO_MAP_ORDERS = ("table", "sorted", "random")
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")
DML_TYPES = ("INSERT", "UPDATE", "DELETE")

# common.MaxRecordOverhead (5 * MaxVarintLen32 + MaxVarintLen64 + 1): Message.Length() adds it.
MAX_RECORD_OVERHEAD = 36


# ============================================================================ column types
# Value kinds (how a column's value is rendered).
K_INT, K_UBIGINT, K_FLOAT, K_DOUBLE, K_DECIMAL, K_TEXT, K_TIMESTAMP, K_ENUM, K_SET, K_BIT, \
    K_BINARY = range(11)

# mysql_type -> (family, kind, default charset is binary, TiDB default Flen or None)
# family groups the names TiDB TypeToStr picks between by charset (text<->blob, char<->binary).
_TYPES = {
    "tinyint": ("tinyint", K_INT, True, 4), "smallint": ("smallint", K_INT, True, 6),
    "mediumint": ("mediumint", K_INT, True, 9), "int": ("int", K_INT, True, 11),
    "bigint": ("bigint", K_INT, True, 20), "year": ("year", K_INT, True, 4),
    "float": ("float", K_FLOAT, True, 12), "double": ("double", K_DOUBLE, True, 22),
    "decimal": ("decimal", K_DECIMAL, True, 10),
    "date": ("date", K_TEXT, True, 10), "datetime": ("datetime", K_TEXT, True, 19),
    "timestamp": ("timestamp", K_TIMESTAMP, True, 19), "time": ("time", K_TEXT, True, 10),
    "bit": ("bit", K_BIT, True, 1), "enum": ("enum", K_ENUM, False, None),
    "set": ("set", K_SET, False, None), "json": ("json", K_TEXT, True, 4294967295),
    "vector": ("vector", K_TEXT, True, -1),
    "char": ("char", K_TEXT, False, 1), "binary": ("char", K_BINARY, True, 1),
    "varchar": ("varchar", K_TEXT, False, None), "varbinary": ("varchar", K_BINARY, True, None),
    "tinytext": ("tinyblob", K_TEXT, False, 255), "tinyblob": ("tinyblob", K_BINARY, True, 255),
    "text": ("blob", K_TEXT, False, 65535), "blob": ("blob", K_BINARY, True, 65535),
    "mediumtext": ("mediumblob", K_TEXT, False, 16777215),
    "mediumblob": ("mediumblob", K_BINARY, True, 16777215),
    "longtext": ("longblob", K_TEXT, False, 4294967295),
    "longblob": ("longblob", K_BINARY, True, 4294967295),
}
# TiDB TypeToStr(tp, charset): (family, charset is binary) -> name.
_TYPE_TO_STR = {
    ("char", False): "char", ("char", True): "binary",
    ("varchar", False): "varchar", ("varchar", True): "varbinary",
    ("tinyblob", False): "tinytext", ("tinyblob", True): "tinyblob",
    ("blob", False): "text", ("blob", True): "blob",
    ("mediumblob", False): "mediumtext", ("mediumblob", True): "mediumblob",
    ("longblob", False): "longtext", ("longblob", True): "longblob",
}
_STRING_FAMILIES = frozenset(f for f, _ in _TYPE_TO_STR)
_INT_FAMILIES = frozenset(("tinyint", "smallint", "mediumint", "int", "bigint", "year"))
# Avro DataType sets unsigned/zerofill for these (TF avro.go newTableSchemaMap), decimal for DECIMAL.
_AVRO_SIGN_FAMILIES = _INT_FAMILIES | {"float", "double", "bit", "decimal"}
# TiDB's default display width of an UNSIGNED integer column is one less (no sign).
_UNSIGNED_FLEN = {"tinyint": 3, "smallint": 5, "mediumint": 8, "int": 10, "bigint": 20}


@dataclass
class SimpleColumn:
    """A column of a :class:`SimpleTable`.

    ``mysql_type`` is TiDB's ``TypeToStr`` name.  A string family is renamed the way TiDB does
    by charset (``varchar`` with ``charset="binary"`` is written ``varbinary``; ``blob`` with a
    text charset is written ``text``).  ``length`` defaults to TiDB's default Flen for the type
    (int 11, int unsigned 10, bigint 20, float 12, double 22, decimal 10, datetime/timestamp 19
    (+1+fsp), time 10 (+1+fsp), text 65535, ...; enum/set from the elements; 0, i.e. absent in
    JSON, for varchar/varbinary).  ``decimal`` is the scale of DECIMAL (default 0) and the fsp
    of DATETIME/TIMESTAMP/TIME; it is never written for FLOAT/DOUBLE.
    ``default``: the column default as TiDB keeps it (a str), a number for BIT, or None.
    """
    name: str
    mysql_type: str
    charset: str | None = None
    collate: str | None = None
    length: int | None = None
    decimal: int | None = None
    elements: list[str] | None = None
    unsigned: bool = False
    zerofill: bool = False
    nullable: bool = True
    default: object = None

    # ---- derived facts (cheap; recomputed on every call)
    def _info(self):
        try:
            return _TYPES[self.mysql_type.lower()]
        except KeyError:
            raise ValueError(f"column {self.name!r}: unsupported mysql_type {self.mysql_type!r}") from None

    @property
    def family(self) -> str:
        return self._info()[0]

    @property
    def effective_charset(self) -> str:
        if self.charset is not None:
            return self.charset
        return "binary" if self._info()[2] else "utf8mb4"

    @property
    def effective_collate(self) -> str:
        if self.collate is not None:
            return self.collate
        cs = self.effective_charset
        return "binary" if cs == "binary" else f"{cs}_bin"

    @property
    def is_binary(self) -> bool:
        """Binary charset on a string or blob type: values travel as base64 / Avro bytes."""
        return self._info()[0] in _STRING_FAMILIES and self.effective_charset == "binary"

    @property
    def kind(self) -> int:
        family, kind, _, _ = self._info()
        if family in _STRING_FAMILIES:
            return K_BINARY if self.effective_charset == "binary" else K_TEXT
        if family == "bigint" and self.unsigned:
            return K_UBIGINT
        return kind

    @property
    def type_name(self) -> str:
        """``mysqlType`` as TiDB TypeToStr writes it."""
        family = self._info()[0]
        if family in _STRING_FAMILIES:
            return _TYPE_TO_STR[(family, self.effective_charset == "binary")]
        return family

    @property
    def effective_decimal(self) -> int:
        if self.decimal is not None:
            return self.decimal
        return -1 if self._info()[0] in ("float", "double") else 0

    @property
    def effective_length(self) -> int:
        if self.length is not None:
            return self.length
        family, _, _, flen = self._info()
        if family in ("enum", "set"):
            elems = self.elements or []
            if not elems:
                return 0
            if family == "enum":
                return max(len(e) for e in elems)
            return sum(len(e) for e in elems) + len(elems) - 1
        if self.unsigned and family in _UNSIGNED_FLEN:
            return _UNSIGNED_FLEN[family]
        if family in ("datetime", "timestamp", "time") and (self.decimal or 0) > 0:
            return flen + 1 + self.decimal
        return flen if flen is not None else 0


def _index_nullable(cols_by_name, names) -> bool:
    for n in names:
        c = cols_by_name.get(n)
        if c is not None and c.nullable:
            return True
    return False


@dataclass
class SimpleTable:
    """A table as the simple protocol describes it (TiCDC ``TableSchema``).

    ``version`` is the table's UpdateTS: the ``schemaVersion`` of its DML and the TableSchema
    ``version``.  ``indexes``: ``[{"name", "unique", "primary", "nullable", "columns": [names]}]``
    (``unique`` defaults to ``primary``, ``primary`` to False, ``nullable`` is computed from the
    columns when absent); ``None`` means a primary key on the first column; ``[]`` means none.
    Treat a table as immutable once it has been encoded (encoders cache per table object).
    """
    schema: str
    table: str
    table_id: int
    version: int
    columns: list[SimpleColumn]
    indexes: list[dict] | None = None

    def __post_init__(self):
        if self.indexes is None:
            first = self.columns[0].name if self.columns else None
            self.indexes = [] if first is None else [
                {"name": "primary", "unique": True, "primary": True, "nullable": False,
                 "columns": [first]}]

    def column(self, name: str) -> SimpleColumn:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def normalized_indexes(self) -> list[dict]:
        """The indexes with every key filled in, in wire order."""
        by_name = {c.name: c for c in self.columns}
        out = []
        for idx in self.indexes:
            cols = list(idx.get("columns", ()))
            primary = bool(idx.get("primary", False))
            nullable = idx.get("nullable")
            out.append({
                "name": idx.get("name", "primary" if primary else ""),
                "unique": bool(idx.get("unique", primary)),
                "primary": primary,
                "nullable": _index_nullable(by_name, cols) if nullable is None else bool(nullable),
                "columns": cols,
            })
        return out

    def handle_key_columns(self) -> list[str]:
        """TiCDC's handle key: the primary key, else the first unique index whose columns are
        all NOT NULL.  Empty when the table has neither."""
        by_name = {c.name: c for c in self.columns}
        idxs = self.normalized_indexes()
        for idx in idxs:
            if idx["primary"]:
                return list(idx["columns"])
        for idx in idxs:
            if idx["unique"] and idx["columns"] and not _index_nullable(by_name, idx["columns"]):
                return list(idx["columns"])
        return []

    def table_schema_json(self) -> dict:
        """The TableSchema JSON object exactly as TiCDC writes it (``omitempty`` applied)."""
        cols = []
        for c in self.columns:
            dt = {"mysqlType": c.type_name, "charset": c.effective_charset,
                  "collate": c.effective_collate}
            if c.effective_length:
                dt["length"] = c.effective_length
            if c.family not in ("float", "double") and c.effective_decimal:
                dt["decimal"] = c.effective_decimal
            if c.elements:
                dt["elements"] = list(c.elements)
            if c.unsigned:
                dt["unsigned"] = True
            if c.zerofill:
                dt["zerofill"] = True
            cols.append({"name": c.name, "dataType": dt, "nullable": bool(c.nullable),
                         "default": _json_default(c)})
        return {"schema": self.schema, "table": self.table, "tableID": self.table_id,
                "version": self.version, "columns": cols, "indexes": self.normalized_indexes()}


def _json_default(c: SimpleColumn):
    d = c.default
    if d is None or isinstance(d, str):
        return d
    if c.family == "bit":
        return _bit_int(d)          # common.MustBinaryLiteralToInt: a JSON number
    return str(d)


def _avro_default(c: SimpleColumn):
    """The Avro ``default`` string: TiDB keeps a BIT default as its binary literal bytes."""
    d = c.default
    if d is None:
        return None
    if c.family == "bit" and not isinstance(d, str):
        v = _bit_int(d)
        return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")
    return d if isinstance(d, str) else str(d)


# ============================================================================ events
@dataclass(slots=True)
class SimpleDML:
    """A row change.  ``data``: the new image (INSERT, UPDATE); ``old``: the old image (UPDATE,
    DELETE; a DELETE's ``old`` is always the full row in TiCDC).  Images map column names to
    Python values:

    * integers, YEAR, BIGINT UNSIGNED: ``int``;  BIT: ``int`` (or big-endian ``bytes``)
    * ENUM: 1-based index ``int`` (or the element ``str``);  SET: bitmask ``int`` (or a
      ``"a,b"`` str, or an iterable of element names)
    * FLOAT/DOUBLE: ``float`` (FLOAT is rounded to float32)
    * DECIMAL: ``str`` as TiDB prints it (or ``Decimal``)
    * DATE/DATETIME/TIME: ``str`` (or ``date``/``datetime``/``time``/``timedelta``)
    * TIMESTAMP: ``(location, text)`` or a plain ``str`` (location = the encoder's, "UTC")
    * JSON/VECTOR/CHAR/VARCHAR/TEXT: ``str`` (text may be ``bytes``; invalid UTF-8 is replaced
      by U+FFFD in JSON, kept raw in Avro)
    * binary charset (BINARY/VARBINARY/BLOB): ``bytes`` (a ``str`` is UTF-8 encoded)

    ``build_ts`` defaults to the commit physical time in ms.  ``table_id`` overrides the
    message ``tableID`` (the physical id of a partition); default ``table.table_id``.
    """
    table: SimpleTable
    op: str
    commit_ts: int
    data: dict | None = None
    old: dict | None = None
    build_ts: int | None = None
    handle_key_only: bool = False
    claim_check_location: str | None = None
    checksum: dict | None = None
    table_id: int | None = None


@dataclass(slots=True)
class SimpleDDL:
    """A DDL.  ``ddl_type`` is the simple-protocol subtype (``DDL_TYPES``); ``table`` is the
    TableSchema after it (None e.g. for DROP DATABASE), ``pre_table`` the one before (None for
    CREATE)."""
    ddl_type: str
    sql: str
    commit_ts: int
    table: SimpleTable | None
    pre_table: SimpleTable | None = None
    build_ts: int | None = None


@dataclass(slots=True)
class SimpleBootstrap:
    """A BOOTSTRAP message (commitTs 0).  ``build_ts`` defaults to ``table.version >> 18``."""
    table: SimpleTable
    build_ts: int | None = None


@dataclass(slots=True)
class SimpleWatermark:
    commit_ts: int
    build_ts: int | None = None


# ============================================================================ Go JSON
_ESC = {cp: f"\\u{cp:04x}" for cp in range(0x20)}
_ESC.update({0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
             0x22: '\\"', 0x5C: "\\\\", 0x3C: "\\u003c", 0x3E: "\\u003e", 0x26: "\\u0026",
             0x2028: "\\u2028", 0x2029: "\\u2029"})
_ESC.update({cp: "\\ufffd" for cp in range(0xD800, 0xE000)})   # invalid UTF-8 / lone surrogate
_NEEDS_ESC = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]').search


def go_json_string(s) -> str:
    """Go ``encoding/json`` string literal (with quotes).  ``bytes`` are read as UTF-8 with
    each invalid byte becoming U+FFFD, as Go does."""
    if s.__class__ is not str:
        if isinstance(s, (bytes, bytearray, memoryview)):
            s = bytes(s).decode("utf-8", "surrogateescape")
        elif isinstance(s, str):
            s = str(s)
        else:
            raise TypeError(f"expected str, got {type(s).__name__}")
    if _NEEDS_ESC(s) is None:
        return '"' + s + '"'
    return '"' + s.translate(_ESC) + '"'


def _go_json(obj) -> str:
    """Go encoding/json of plain data (dicts keep their insertion order = struct field order)."""
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, str):
        return go_json_string(obj)
    if isinstance(obj, int):
        return str(int(obj))
    if isinstance(obj, dict):
        return "{" + ",".join(go_json_string(k) + ":" + _go_json(v) for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(_go_json(v) for v in obj) + "]"
    raise TypeError(f"cannot JSON-encode {type(obj).__name__}")


# ============================================================================ floats
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def _to_f32(x: float) -> float:
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        raise ValueError(f"{x!r} is outside the float32 range") from None


def format_float_f(x: float, bits: int = 64) -> str:
    """Go ``strconv.FormatFloat(x, 'f', -1, bits)``: the shortest digits that round-trip at
    ``bits`` width, in plain notation (never an exponent); Go's spellings of NaN and infinities."""
    if x != x or x in (math.inf, -math.inf):
        return "NaN" if x != x else ("+Inf" if x > 0 else "-Inf")
    return format_float_plain(_to_f32(x) if bits == 32 else x, bits)


# ============================================================================ value rendering
def _as_int(v) -> int:
    if v.__class__ is int:
        return v
    if isinstance(v, int):                 # bool, IntEnum
        return int(v)
    raise TypeError(f"expected an int, got {type(v).__name__}")


def _bit_int(v) -> int:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return int.from_bytes(bytes(v), "big")
    return _as_int(v)


def _to_bytes(v) -> bytes:
    if v.__class__ is bytes:
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    raise TypeError(f"expected bytes, got {type(v).__name__}")


def _text_bytes(s: str) -> bytes:
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def _float_val(v) -> float:
    if v.__class__ is float:
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise TypeError(f"expected a float, got {type(v).__name__}")


def _fix_nonfinite(x: float, tiflow: bool) -> float:
    if x != x or x in (math.inf, -math.inf):
        if tiflow:
            return 0.0                       # TF mounter turns NaN/Inf into 0
        raise ValueError("ticdc cannot encode a NaN or infinite float")
    return x


def _temporal_text(v, col: SimpleColumn) -> str:
    if v.__class__ is str:
        return v
    if isinstance(v, str):
        return str(v)
    fsp = max(col.effective_decimal, 0)
    if isinstance(v, _dt.datetime):
        s = v.strftime("%Y-%m-%d %H:%M:%S")
        if fsp:
            s += "." + f"{v.microsecond:06d}"[:fsp]
        return s
    if isinstance(v, _dt.date):
        return v.strftime("%Y-%m-%d")
    if isinstance(v, _dt.time):
        s = v.strftime("%H:%M:%S")
        if fsp:
            s += "." + f"{v.microsecond:06d}"[:fsp]
        return s
    if isinstance(v, _dt.timedelta):
        us = (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
        sign = "-" if us < 0 else ""
        us = abs(us)
        secs, frac = divmod(us, 1_000_000)
        s = f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        if fsp:
            s += "." + f"{frac:06d}"[:fsp]
        return s
    raise TypeError(f"column {col.name!r}: expected a str, got {type(v).__name__}")


def _decimal_text(v) -> str:
    if v.__class__ is str:
        return v
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, str):
        return str(v)
    raise TypeError(f"expected a decimal str, got {type(v).__name__}")


def _enum_index(v, col: SimpleColumn) -> int:
    if isinstance(v, str):
        try:
            return (col.elements or []).index(v) + 1
        except ValueError:
            raise ValueError(f"column {col.name!r}: {v!r} is not an ENUM element") from None
    return _as_int(v)


def _set_mask(v, col: SimpleColumn) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return int(v)
    names = ([p for p in v.split(",") if p] if isinstance(v, str) else list(v))
    elems = col.elements or []
    mask = 0
    for n in names:
        try:
            mask |= 1 << elems.index(n)
        except ValueError:
            raise ValueError(f"column {col.name!r}: {n!r} is not a SET element") from None
    return mask


def _wrap64(v: int) -> int:
    """uint64 bits reinterpreted as int64 (Go ``int64(uint64)``)."""
    v &= 0xFFFFFFFFFFFFFFFF
    return v - 0x10000000000000000 if v >= 0x8000000000000000 else v


# ---- Avro primitives
def _zigzag(n: int) -> bytes:
    if not -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        raise ValueError(f"{n} does not fit an Avro long")
    z = (n << 1) ^ (n >> 63)
    if z < 0x4000:
        return _VARINT_END[z]
    parts = []
    while z >= 0x4000:                    # 14 bits -> two continuation bytes
        parts.append(_VARINT_MID[z & 0x3FFF])
        z >>= 14
    parts.append(_VARINT_END[z])
    return b"".join(parts)


# Varint tables: the last 1-2 bytes of a varint, and two continuation bytes (14 bits).
_VARINT_END = [bytes([z]) if z < 0x80 else bytes(((z & 0x7F) | 0x80, z >> 7))
               for z in range(0x4000)]
_VARINT_MID = [bytes(((z & 0x7F) | 0x80, (z >> 7) | 0x80)) for z in range(0x4000)]
_ZZ_CACHE: dict = {}


def _avro_long(n: int) -> bytes:
    b = _ZZ_CACHE.get(n)
    if b is None:
        b = _zigzag(n)
        if -1024 <= n <= 4096:
            _ZZ_CACHE[n] = b
    return b


def _avro_str(s) -> bytes:
    b = _text_bytes(s) if isinstance(s, str) else _to_bytes(s)
    return _avro_long(len(b)) + b


def _avro_bytes(b: bytes) -> bytes:
    return _avro_long(len(b)) + b


# Union branch bytes of the DML map values: null long float double string bytes Timestamp UBigint
_U_NULL, _U_LONG, _U_FLOAT, _U_DOUBLE, _U_STRING, _U_BYTES, _U_TS, _U_UBIG = (
    bytes([i << 1]) for i in range(8))


class _Renderers:
    """Per-encoder value renderers for a column: JSON text and Avro union bytes."""

    def __init__(self, flavor: str, location: str):
        self.tiflow = flavor == "tiflow"
        self.location = location

    def json(self, col: SimpleColumn):
        kind = col.kind
        tiflow = self.tiflow
        js = go_json_string
        if kind in (K_INT, K_UBIGINT):
            return lambda v: '"' + (str(v) if v.__class__ is int else str(_as_int(v))) + '"'
        if kind == K_BIT:
            return lambda v: '"' + str(_bit_int(v)) + '"'
        if kind == K_FLOAT:
            return lambda v: '"' + format_float_f(_fix_nonfinite(_float_val(v), tiflow), 32) + '"'
        if kind == K_DOUBLE:
            return lambda v: '"' + format_float_f(_fix_nonfinite(_float_val(v), tiflow), 64) + '"'
        if kind == K_DECIMAL:
            return lambda v: js(_decimal_text(v))
        if kind == K_ENUM:
            return lambda v: '"' + str(_enum_index(v, col)) + '"'
        if kind == K_SET:
            return lambda v: '"' + str(_set_mask(v, col)) + '"'
        if kind == K_BINARY:
            b64 = base64.b64encode
            return lambda v: '"' + b64(_to_bytes(v)).decode("ascii") + '"'
        if kind == K_TIMESTAMP:
            loc = js(self.location)

            def ts(v):
                if isinstance(v, tuple):
                    lo, text = v
                    return '{"location":' + js(lo) + ',"value":' + js(_temporal_text(text, col)) + "}"
                return '{"location":' + loc + ',"value":' + js(_temporal_text(v, col)) + "}"
            return ts
        if col.family in ("date", "datetime", "time"):
            return lambda v: js(_temporal_text(v, col))
        return js                                            # text, json, vector

    def avro(self, col: SimpleColumn):
        kind = col.kind
        tiflow = self.tiflow
        lng = _avro_long
        if kind == K_INT:
            return lambda v: _U_LONG + lng(v if v.__class__ is int else _as_int(v))
        if kind == K_UBIGINT:
            return lambda v: _U_UBIG + lng(_wrap64(_as_int(v)))
        if kind == K_BIT:
            if tiflow:
                return lambda v: _U_LONG + lng(_wrap64(_bit_int(v)))
            return lambda v: _U_STRING + _avro_str(str(_bit_int(v)))
        if kind == K_ENUM:
            return lambda v: _U_LONG + lng(_enum_index(v, col))
        if kind == K_SET:
            return lambda v: _U_LONG + lng(_wrap64(_set_mask(v, col)))
        if kind == K_FLOAT:
            pack = _F32.pack
            return lambda v: _U_FLOAT + pack(_to_f32(_fix_nonfinite(_float_val(v), tiflow)))
        if kind == K_DOUBLE:
            pack = _F64.pack
            return lambda v: _U_DOUBLE + pack(_fix_nonfinite(_float_val(v), tiflow))
        if kind == K_DECIMAL:
            return lambda v: _U_STRING + _avro_str(_decimal_text(v))
        if kind == K_BINARY:
            return lambda v: _U_BYTES + _avro_bytes(_to_bytes(v))
        if kind == K_TIMESTAMP:
            loc = _avro_str(self.location)

            def ts(v):
                if isinstance(v, tuple):
                    lo, text = v
                    return _U_TS + _avro_str(lo) + _avro_str(_temporal_text(text, col))
                return _U_TS + loc + _avro_str(_temporal_text(v, col))
            return ts
        if col.family in ("date", "datetime", "time"):
            return lambda v: _U_STRING + _avro_str(_temporal_text(v, col))

        def text(v):
            if v.__class__ is str:
                try:
                    b = v.encode("utf-8")
                except UnicodeEncodeError:
                    b = _text_bytes(v)
            elif isinstance(v, (bytes, bytearray, memoryview)):
                b = bytes(v)                # goavro writes string(v): raw bytes
            elif isinstance(v, str):
                b = _text_bytes(str(v))
            else:
                raise TypeError(f"column {col.name!r}: expected a str, got {type(v).__name__}")
            return _U_STRING + lng(len(b)) + b
        return text


_MISSING = object()


class _TablePlan:
    """Everything an encoder derives once per table object."""
    __slots__ = ("table", "json_cols", "avro_cols", "names", "handle", "schema_json",
                 "schema_avro", "head_json", "head_avro", "version", "json_full", "avro_full",
                 "ncols", "tid_avro", "version_avro")

    def __init__(self, table: SimpleTable, r: _Renderers, map_order: str):
        self.table = table
        cols = table.columns
        seen = set()
        for c in cols:
            if c.name in seen:
                raise ValueError(f"table {table.schema}.{table.table}: duplicate column {c.name!r}")
            seen.add(c.name)
        self.names = frozenset(seen)
        self.ncols = len(cols)
        # JSON: Go map -> keys sorted by their UTF-8 bytes.
        jorder = sorted(cols, key=lambda c: _text_bytes(c.name))
        self.json_cols = [(c.name, go_json_string(c.name) + ":", r.json(c)) for c in jorder]
        aorder = jorder if map_order == "sorted" else cols
        self.avro_cols = [(c.name, _avro_str(c.name), r.avro(c)) for c in aorder]
        self.json_full = _compile_json_row(jorder, self.json_cols) if cols else None
        self.avro_full = _compile_avro_row(aorder, self.avro_cols) if cols else None
        self.handle = table.handle_key_columns()
        self.version = table.version
        self.schema_json = None
        self.schema_avro = None
        # DML heads: everything from "database" to "tableID" (JSON), database..tableID (Avro)
        js = go_json_string
        self.head_json = ((',"database":' + js(table.schema) if table.schema else "")
                          + (',"table":' + js(table.table) if table.table else ""))
        self.head_avro = _avro_str(table.schema) + _avro_str(table.table)
        self.tid_avro = _avro_long(table.table_id)
        self.version_avro = _avro_long(_wrap64(table.version))


def _compile_json_row(cols, plan):
    """A generated function rendering a row dict holding exactly the table's columns (it
    raises KeyError otherwise; the caller then takes the generic path)."""
    env = {"str": str, "NEEDS": _NEEDS_ESC, "b64": base64.b64encode}
    lines, pieces = [], []
    sep = "{"
    for k, (c, (name, prefix, fn)) in enumerate(zip(cols, plan)):
        env[f"R{k}"] = fn
        env[f"N{k}"] = name
        lines.append(f"    v{k} = row[N{k}]")
        kind = c.kind
        if kind in (K_INT, K_UBIGINT):
            expr = (f"'null' if v{k} is None else '\"' + str(v{k}) + '\"' "
                    f"if v{k}.__class__ is int else R{k}(v{k})")
        elif kind in (K_TEXT, K_DECIMAL):
            expr = (f"'null' if v{k} is None else '\"' + v{k} + '\"' "
                    f"if v{k}.__class__ is str and NEEDS(v{k}) is None else R{k}(v{k})")
        elif kind == K_BINARY:
            expr = (f"'null' if v{k} is None else '\"' + b64(v{k}).decode() + '\"' "
                    f"if v{k}.__class__ is bytes else R{k}(v{k})")
        else:
            expr = f"'null' if v{k} is None else R{k}(v{k})"
        pieces.append(repr(sep + prefix))
        pieces.append(f"({expr})")
        sep = ","
    pieces.append("'}'")
    src = ("def render(row):\n" + "\n".join(lines)
           + "\n    return ''.join((" + ", ".join(pieces) + "))\n")
    exec(src, env)
    return env["render"]


def _compile_avro_row(cols, plan):
    """The Avro twin of :func:`_compile_json_row` (map entries in ``cols`` order)."""
    env = {"lng": _avro_long, "LONG": _U_LONG, "NULL": _U_NULL, "STRING": _U_STRING,
           "BYTES": _U_BYTES, "len": len}
    lines, pieces = [], [repr(_avro_long(len(cols)))]
    for k, (c, (name, key, fn)) in enumerate(zip(cols, plan)):
        env[f"R{k}"] = fn
        env[f"N{k}"] = name
        lines.append(f"    v{k} = row[N{k}]")
        kind = c.kind
        if kind == K_INT:
            expr = (f"NULL if v{k} is None else LONG + lng(v{k}) "
                    f"if v{k}.__class__ is int else R{k}(v{k})")
        elif kind == K_BINARY:
            expr = (f"NULL if v{k} is None else BYTES + lng(len(v{k})) + v{k} "
                    f"if v{k}.__class__ is bytes else R{k}(v{k})")
        else:
            expr = f"NULL if v{k} is None else R{k}(v{k})"
        pieces.append(repr(key))
        pieces.append(f"({expr})")
    pieces.append("b'\\x00'")
    src = ("def render(row):\n" + "\n".join(lines)
           + "\n    return b''.join((" + ", ".join(pieces) + "))\n")
    exec(src, env)
    return env["render"]


def _avro_table_schema(table: SimpleTable, tiflow: bool) -> bytes:
    out = [_avro_str(table.schema), _avro_str(table.table), _avro_long(table.table_id),
           _avro_long(_wrap64(table.version))]
    cols = table.columns
    if cols:
        out.append(_avro_long(len(cols)))
        for c in cols:
            family = c.family
            out.append(_avro_str(c.name))
            out.append(_avro_str(c.type_name) + _avro_str(c.effective_charset)
                       + _avro_str(c.effective_collate) + _avro_long(c.effective_length))
            if family == "decimal" or (not tiflow and family == "timestamp"):
                out.append(b"\x02" + _avro_long(c.effective_decimal))
            else:
                out.append(b"\x00")
            if family in ("enum", "set"):
                elems = list(c.elements or [])
                out.append(b"\x02" + _avro_array([_avro_str(e) for e in elems]))
            else:
                out.append(b"\x00")
            if family in _AVRO_SIGN_FAMILIES:
                out.append(b"\x02" + (b"\x01" if c.unsigned else b"\x00")
                           + b"\x02" + (b"\x01" if c.zerofill else b"\x00"))
            else:
                out.append(b"\x00\x00")
            out.append(b"\x01" if c.nullable else b"\x00")
            d = _avro_default(c)
            out.append(b"\x00" if d is None else b"\x02" + _avro_str(d))
    out.append(b"\x00")
    idxs = table.normalized_indexes()
    if idxs:
        out.append(_avro_long(len(idxs)))
        for idx in idxs:
            out.append(_avro_str(idx["name"]) + (b"\x01" if idx["unique"] else b"\x00")
                       + (b"\x01" if idx["primary"] else b"\x00")
                       + (b"\x01" if idx["nullable"] else b"\x00")
                       + _avro_array([_avro_str(n) for n in idx["columns"]]))
    out.append(b"\x00")
    return b"".join(out)


def _avro_array(items: list) -> bytes:
    if not items:
        return b"\x00"
    return _avro_long(len(items)) + b"".join(items) + b"\x00"


def _checksum_json(ck: dict) -> str:
    return ('{"version":' + str(_as_int(ck.get("version", 0)))
            + ',"corrupted":' + ("true" if ck.get("corrupted") else "false")
            + ',"current":' + str(_as_int(ck.get("current", 0)) & 0xFFFFFFFF)
            + ',"previous":' + str(_as_int(ck.get("previous", 0)) & 0xFFFFFFFF) + "}")


def _checksum_avro(ck: dict) -> bytes:
    return (_avro_long(_as_int(ck.get("version", 0)))
            + (b"\x01" if ck.get("corrupted") else b"\x00")
            + _avro_long(_as_int(ck.get("current", 0)) & 0xFFFFFFFF)
            + _avro_long(_as_int(ck.get("previous", 0)) & 0xFFFFFFFF))


def claim_check_file(value: bytes, raw: bool = False) -> bytes:
    """The claim-check file content for a simple-protocol message: Go JSON
    ``{"key":null,"value":"<base64>"}`` (the key is always nil), or, with
    ``claim-check-raw-value=true`` (``raw=True``), the value bytes themselves."""
    if raw:
        return bytes(value)
    return b'{"key":null,"value":"' + base64.b64encode(value) + b'"}'


@contextmanager
def _gc_paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# ============================================================================ encoder
class SimpleEncoder:
    """Encode simple-protocol events into Kafka message values.

    Parameters
    ----------
    encoding:
        ``"json"`` or ``"avro"`` (``encoding-format``).
    flavor:
        ``"tiflow"`` or ``"ticdc"`` (Avro BIT branch and TIMESTAMP ``decimal``; see the module doc).
    compression:
        ``large-message-handle-compression``: ``none``, ``snappy`` (raw block) or ``lz4``
        (frame); applied to every message value.
    location:
        The TiCDC server time zone written for TIMESTAMP values given as a plain str.
    max_message_bytes:
        With a limit, a DML whose ``len(value) + 36`` exceeds it is handled per
        ``large_message_handle``: ``"none"`` raises ``ValueError`` (ErrMessageTooLarge);
        ``"handle-key-only"`` re-encodes it with only the handle-key columns and
        ``handleKeyOnly``; ``"claim-check"`` also stores the original (compressed) value in
        ``self.claim_check_files`` (file name -> content, see :func:`claim_check_file`) and sets
        ``claimCheckLocation`` = ``<claim_check_storage_uri>/<uuid4>.json``.
    avro_map_order:
        Order of the Avro ``data``/``old`` map entries (Go map order is random in TiCDC):
        ``"table"`` (column order), ``"sorted"``, or ``"random"`` (seeded by ``seed``).
    """

    def __init__(self, encoding: str = "json", flavor: str = "tiflow", compression: str = "none",
                 *, location: str = "UTC", max_message_bytes: int | None = None,
                 large_message_handle: str = "none",
                 claim_check_storage_uri: str = "file:///tmp/ticdc-claim-check",
                 claim_check_raw_value: bool = False, avro_map_order: str = "table",
                 seed: int = 0):
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, not {encoding!r}")
        if flavor not in FLAVORS:
            raise ValueError(f"flavor must be one of {FLAVORS}, not {flavor!r}")
        if large_message_handle not in LARGE_MESSAGE_HANDLES:
            raise ValueError(f"large_message_handle must be one of {LARGE_MESSAGE_HANDLES}")
        if avro_map_order not in AVRO_MAP_ORDERS:
            raise ValueError(f"avro_map_order must be one of {AVRO_MAP_ORDERS}")
        self.encoding = encoding
        self.flavor = flavor
        self.compression = check_compression(compression)
        self.location = location
        self.max_message_bytes = max_message_bytes
        self.large_message_handle = large_message_handle
        self.claim_check_storage_uri = claim_check_storage_uri.rstrip("/")
        self.claim_check_raw_value = bool(claim_check_raw_value)
        self.claim_check_files: dict[str, bytes] = {}
        self.avro_map_order = avro_map_order
        self._rng = random.Random(seed)
        self._avro = encoding == "avro"
        self._tiflow = flavor == "tiflow"
        self._r = _Renderers(flavor, location)
        self._plans: dict = {}

    # ------------------------------------------------------------------ plans
    def _plan(self, table: SimpleTable) -> _TablePlan:
        p = self._plans.get(id(table))
        if p is None or p.table is not table:
            if len(self._plans) > 4096:
                self._plans.clear()
            p = self._plans[id(table)] = _TablePlan(table, self._r, self.avro_map_order)
        return p

    def _schema_json(self, table: SimpleTable) -> str:
        p = self._plan(table)
        if p.schema_json is None:
            p.schema_json = _go_json(table.table_schema_json())
        return p.schema_json

    def _schema_avro(self, table: SimpleTable) -> bytes:
        p = self._plan(table)
        if p.schema_avro is None:
            p.schema_avro = _avro_table_schema(table, self._tiflow)
        return p.schema_avro

    # ------------------------------------------------------------------ public
    def encode_value(self, event) -> bytes:
        """One message value (compressed when configured); large-message handling not applied."""
        v = self._raw_value(event)
        return compress(v, self.compression) if self.compression != "none" else v

    def encode_value_uncompressed(self, event) -> bytes:
        return self._raw_value(event)

    def encode(self, events) -> list[tuple[None, bytes]]:
        """Kafka messages ``(None, value)``, one per event, in order."""
        with _gc_paused():
            return self._encode(events)

    def _encode(self, events):
        out = []
        append = out.append
        raw = self._raw_value
        comp = self.compression
        limit = self.max_message_bytes
        for ev in events:
            v = raw(ev)
            if comp != "none":
                v = compress(v, comp)
            if limit is not None and len(v) + MAX_RECORD_OVERHEAD > limit:
                if not isinstance(ev, SimpleDML):
                    raise ValueError(f"{type(ev).__name__} message of {len(v)} bytes exceeds "
                                     f"max_message_bytes={limit} (ErrMessageTooLarge)")
                v = self._large(ev, v)
            append((None, v))
        return out

    def _large(self, ev: SimpleDML, v: bytes) -> bytes:
        limit = self.max_message_bytes
        mode = self.large_message_handle
        if mode == "none":
            raise ValueError(f"DML message of {len(v) + MAX_RECORD_OVERHEAD} bytes exceeds "
                             f"max_message_bytes={limit} (ErrMessageTooLarge)")
        location = None
        if mode == "claim-check":
            name = str(uuid.UUID(int=self._rng.getrandbits(128), version=4)) + ".json"
            self.claim_check_files[name] = claim_check_file(v, self.claim_check_raw_value)
            location = f"{self.claim_check_storage_uri}/{name}"
        small = SimpleDML(ev.table, ev.op, ev.commit_ts, ev.data, ev.old, ev.build_ts, True,
                          location, ev.checksum, ev.table_id)
        v = self.encode_value(small)
        if len(v) + MAX_RECORD_OVERHEAD > limit:
            raise ValueError("DML exceeds max_message_bytes even with only the handle-key "
                             "columns (ErrMessageTooLarge)")
        return v

    # ------------------------------------------------------------------ messages
    def _raw_value(self, ev) -> bytes:
        cls = ev.__class__
        if cls is SimpleDML:
            return self._dml_avro(ev) if self._avro else self._dml_json(ev).encode("utf-8")
        if cls is SimpleWatermark:
            bts = ev.build_ts if ev.build_ts is not None else ev.commit_ts >> 18
            if self._avro:
                return (b"\x16\x00\x00\x02" + _avro_long(_wrap64(ev.commit_ts))
                        + _avro_long(bts))
            return ('{"version":1,"type":"WATERMARK","commitTs":' + str(ev.commit_ts)
                    + ',"buildTs":' + str(bts) + "}").encode("utf-8")
        if cls is SimpleBootstrap:
            bts = ev.build_ts if ev.build_ts is not None else ev.table.version >> 18
            if self._avro:
                return b"\x16\x02\x02\x02" + _avro_long(bts) + self._schema_avro(ev.table)
            return ('{"version":1,"type":"BOOTSTRAP","commitTs":0,"buildTs":' + str(bts)
                    + ',"tableSchema":' + self._schema_json(ev.table) + "}").encode("utf-8")
        if cls is SimpleDDL:
            return self._ddl(ev)
        if isinstance(ev, (SimpleDML, SimpleWatermark, SimpleBootstrap, SimpleDDL)):
            raise TypeError("subclasses of the simple events are not supported")
        raise TypeError(f"not a simple-protocol event: {type(ev).__name__}")

    def _ddl(self, ev: SimpleDDL) -> bytes:
        if ev.ddl_type not in DDL_TYPES:
            raise ValueError(f"ddl_type must be one of {DDL_TYPES}, not {ev.ddl_type!r}")
        bts = ev.build_ts if ev.build_ts is not None else ev.commit_ts >> 18
        if self._avro:
            out = [b"\x16\x04\x04\x02", _avro_long(DDL_TYPES.index(ev.ddl_type)),
                   _avro_str(ev.sql), _avro_long(_wrap64(ev.commit_ts)), _avro_long(bts)]
            for t in (ev.table, ev.pre_table):
                out.append(b"\x00" if t is None else b"\x02" + self._schema_avro(t))
            return b"".join(out)
        s = ('{"version":1,"type":"' + ev.ddl_type + '"'
             + (',"sql":' + go_json_string(ev.sql) if ev.sql else "")
             + ',"commitTs":' + str(ev.commit_ts) + ',"buildTs":' + str(bts))
        if ev.table is not None:
            s += ',"tableSchema":' + self._schema_json(ev.table)
        if ev.pre_table is not None:
            s += ',"preTableSchema":' + self._schema_json(ev.pre_table)
        return (s + "}").encode("utf-8")

    def _images(self, ev: SimpleDML, p: _TablePlan):
        op = ev.op
        data, old = ev.data, ev.old
        if op == "INSERT":
            if data is None:
                raise ValueError("an INSERT needs data")
            old = None
        elif op == "UPDATE":
            if data is None or old is None:
                raise ValueError("an UPDATE needs data and old")
        elif op == "DELETE":
            if old is None:
                raise ValueError("a DELETE needs old")
            data = None
        else:
            raise ValueError(f"op must be one of {DML_TYPES}, not {op!r}")
        if ev.handle_key_only or ev.claim_check_location:
            keys = p.handle
            if not keys:
                raise ValueError(f"table {ev.table.schema}.{ev.table.table} has no handle key")
            if data is not None:
                data = {k: data[k] for k in keys if k in data}
            if old is not None:
                old = {k: old[k] for k in keys if k in old}
        return data, old

    def _dml_json(self, ev: SimpleDML) -> str:
        table = ev.table
        p = self._plan(table)
        data, old = self._images(ev, p)
        tid = ev.table_id if ev.table_id is not None else table.table_id
        bts = ev.build_ts if ev.build_ts is not None else ev.commit_ts >> 18
        parts = ['{"version":1', p.head_json]
        if tid:
            parts.append(',"tableID":' + str(tid))
        parts.append(',"type":"' + ev.op + '","commitTs":' + str(ev.commit_ts)
                     + ',"buildTs":' + str(bts))
        if p.version:
            parts.append(',"schemaVersion":' + str(p.version))
        if ev.claim_check_location:
            parts.append(',"claimCheckLocation":' + go_json_string(ev.claim_check_location))
        if ev.handle_key_only or ev.claim_check_location:
            parts.append(',"handleKeyOnly":true')
        if ev.checksum is not None:
            parts.append(',"checksum":' + _checksum_json(ev.checksum))
        if data:
            parts.append(',"data":' + self._json_row(p, data))
        if old:
            parts.append(',"old":' + self._json_row(p, old))
        parts.append("}")
        return "".join(parts)

    @staticmethod
    def _json_row(p: _TablePlan, row: dict) -> str:
        if len(row) == p.ncols:
            try:
                return p.json_full(row)
            except KeyError:
                pass
        out = []
        get = row.get
        for name, prefix, fn in p.json_cols:
            v = get(name, _MISSING)
            if v is _MISSING:
                continue
            out.append(prefix + ("null" if v is None else fn(v)))
        if len(out) != len(row):
            unknown = sorted(set(row) - p.names)
            raise ValueError(f"columns not in table {p.table.schema}.{p.table.table}: {unknown}")
        return "{" + ",".join(out) + "}"

    def _avro_row(self, p: _TablePlan, row: dict) -> bytes:
        if len(row) == p.ncols and self.avro_map_order != "random":
            try:
                return p.avro_full(row)
            except KeyError:
                pass
        out = []
        get = row.get
        for name, key, fn in p.avro_cols:
            v = get(name, _MISSING)
            if v is _MISSING:
                continue
            out.append(key + (_U_NULL if v is None else fn(v)))
        if len(out) != len(row):
            unknown = sorted(set(row) - p.names)
            raise ValueError(f"columns not in table {p.table.schema}.{p.table.table}: {unknown}")
        if not out:
            return b"\x00"
        if self.avro_map_order == "random":
            self._rng.shuffle(out)
        return _avro_long(len(out)) + b"".join(out) + b"\x00"

    def _dml_avro(self, ev: SimpleDML) -> bytes:
        table = ev.table
        p = self._plan(table)
        data, old = self._images(ev, p)
        tid = ev.table_id if ev.table_id is not None else table.table_id
        bts = ev.build_ts if ev.build_ts is not None else ev.commit_ts >> 18
        op = ev.op
        out = [b"\x16\x06\x06\x02", p.head_avro,
               p.tid_avro if ev.table_id is None else _avro_long(tid),
               b"\x00" if op == "INSERT" else b"\x02" if op == "UPDATE" else b"\x04",
               _avro_long(_wrap64(ev.commit_ts)), _avro_long(bts), p.version_avro]
        loc = ev.claim_check_location
        out.append(b"\x02" + _avro_str(loc) if loc else b"\x00")
        out.append(b"\x02\x01" if ev.handle_key_only or loc else b"\x00")
        out.append(b"\x00" if ev.checksum is None else b"\x02" + _checksum_avro(ev.checksum))
        out.append(b"\x00" if data is None else b"\x02" + self._avro_row(p, data))
        out.append(b"\x00" if old is None else b"\x02" + self._avro_row(p, old))
        return b"".join(out)


# ============================================================================ realistic data
def orders_table(schema: str = "shop", table: str = "orders", table_id: int = 112,
                 version: int = make_tso(1_714_521_600_000 - 60_000, 3)) -> SimpleTable:
    """``shop.orders`` as TiDB describes it (12 columns, PK ``id``, KEY ``idx_customer``)."""
    cols = [
        SimpleColumn("id", "bigint", nullable=False),
        SimpleColumn("customer_id", "int", unsigned=True),
        SimpleColumn("amount", "decimal", length=12, decimal=2, nullable=False),
        SimpleColumn("price", "double"),
        SimpleColumn("qty", "smallint", nullable=False, default="1"),
        SimpleColumn("status", "varchar", length=16, default="pending"),
        SimpleColumn("note", "text"),
        SimpleColumn("created_at", "datetime", decimal=6, nullable=False),
        SimpleColumn("updated_at", "timestamp", nullable=False, default="CURRENT_TIMESTAMP"),
        SimpleColumn("payload", "varbinary", length=64),
        SimpleColumn("channel", "enum", elements=["web", "app", "store"], default="web"),
        SimpleColumn("tracking_no", "bigint", unsigned=True),
    ]
    idx = [{"name": "idx_customer", "unique": False, "primary": False, "columns": ["customer_id"]},
           {"name": "primary", "unique": True, "primary": True, "columns": ["id"]}]
    return SimpleTable(schema, table, table_id, version, cols, idx)


_STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
_NEXT_STATUS = {"pending": ("paid", "cancelled"), "paid": ("shipped", "refunded"),
                "shipped": ("delivered",), "delivered": ("refunded",),
                "cancelled": ("cancelled",), "refunded": ("refunded",)}
_NOTES = (
    "Leave at the front door", "Call before delivery", "Gift wrap, no invoice",
    "請放在門口", "Geschenkverpackung bitte 🎁", 'Customer said: "ASAP" <urgent> & fragile',
    "Line one\nLine two\ttabbed", "Entrega después de las 18:00", "", "sep\u2028arator",
)
_PAYLOADS = (b"", b"\x89PNG\r\n\x1a\n", b"{\"v\":1}", b"\x00\x01\x02\x03", "caf\u00e9".encode(),
             b"\xff\xfe\xfd", b"plain-ascii-bytes")

# Columns that ALTER TABLE ADD COLUMN cycles through: (column factory, value generator).
_ALTER_KINDS = (
    (lambda n: SimpleColumn(n, "int"), lambda rng: rng.randint(-1000, 1000)),
    (lambda n: SimpleColumn(n, "varchar", length=32), lambda rng: f"v{rng.randint(0, 99999)}"),
    (lambda n: SimpleColumn(n, "decimal", length=10, decimal=3),
     lambda rng: f"{rng.randint(-99999, 99999) / 1000:.3f}"),
    (lambda n: SimpleColumn(n, "float"), lambda rng: rng.randint(0, 10000) / 8),
    (lambda n: SimpleColumn(n, "json"), lambda rng: '{"k": %d}' % rng.randint(0, 99)),
    (lambda n: SimpleColumn(n, "bit", length=8, default=0), lambda rng: rng.randint(0, 255)),
    (lambda n: SimpleColumn(n, "set", elements=["a", "b", "c"]), lambda rng: rng.randint(0, 7)),
    (lambda n: SimpleColumn(n, "date"),
     lambda rng: f"20{rng.randint(10, 29)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"),
)

_SHANGHAI_OFFSET_S = 8 * 3600


def simple_changefeed(n_rows: int, seed: int = 0, *, start_mid_stream: bool = False,
                      alter_every: int | None = None, watermark_every: int = 1000,
                      bootstrap_every: int | None = 10_000, location: str = "Asia/Shanghai",
                      schema: str = "shop", table: str = "orders",
                      start_ms: int = 1_714_521_600_000, insert_ratio: float = 0.7,
                      update_ratio: float = 0.2) -> list:
    """A deterministic, realistic simple-protocol event stream for ``shop.orders``.

    A BOOTSTRAP (see :func:`orders_table`), then ``n_rows`` DML (about 70% INSERT, 20%
    UPDATE, 10% DELETE of live rows) in transactions of 1-4 rows sharing a commit TSO, a
    WATERMARK about every ``watermark_every`` rows and one at the end, and a repeated
    BOOTSTRAP every ``bootstrap_every`` rows (TiCDC ``send-bootstrap-in-msg-count``; None
    disables).  TIMESTAMP values are ``(location, wall-clock text)`` in ``location``
    (only ``"Asia/Shanghai"`` (UTC+8) and ``"UTC"`` are computed exactly; other names get UTC
    wall clocks).

    ``start_mid_stream=True``: the stream starts with a few DML before the first BOOTSTRAP, as
    a consumer joining mid-stream sees it (a decoder must buffer them).
    ``alter_every=N``: every N rows an ``ALTER TABLE ... ADD COLUMN`` DDL (new version, with
    ``tableSchema`` and ``preTableSchema``); later rows carry the new column (NULL for rows
    written before it).  Row dicts are shared between events; treat them as immutable.
    """
    with _gc_paused():
        return _changefeed(n_rows, seed, start_mid_stream, alter_every, watermark_every,
                           bootstrap_every, location, schema, table, start_ms, insert_ratio,
                           update_ratio)


def _changefeed(n_rows, seed, start_mid_stream, alter_every, watermark_every, bootstrap_every,
                location, schema, table_name, start_ms, insert_ratio, update_ratio):
    rng = random.Random(seed)
    rand = rng.random

    def randint(lo, hi):
        return lo + int(rand() * (hi - lo + 1))

    def choice(seq):
        return seq[int(rand() * len(seq))]

    ms = start_ms
    table = orders_table(schema, table_name, version=make_tso(start_ms - 60_000, 3))
    events: list = []
    offset = _SHANGHAI_OFFSET_S if location == "Asia/Shanghai" else 0
    gmtime, strftime = time.gmtime, time.strftime
    sec_cache: dict = {}

    def wall(ms_):
        s = ms_ // 1000
        txt = sec_cache.get(s)
        if txt is None:
            if len(sec_cache) > 100_000:
                sec_cache.clear()
            txt = sec_cache[s] = (strftime("%Y-%m-%d %H:%M:%S", gmtime(s)),
                                  strftime("%Y-%m-%d %H:%M:%S", gmtime(s + offset)))
        return txt

    def payload():
        r = rand()
        if r < 0.3:
            return None
        if r < 0.6:
            return rng.getrandbits(8 * 24).to_bytes(24, "little")[:randint(1, 24)]
        return choice(_PAYLOADS)

    mid_stream_left = randint(3, 20) if start_mid_stream else 0
    if not mid_stream_left:
        events.append(SimpleBootstrap(table, build_ts=ms))

    rows: dict = {}
    live: list = []
    pos: dict = {}
    next_id = 1
    extra: list = []                    # (name, generator) of added columns
    emitted = since_wm = since_boot = since_alter = 0
    last_ts = make_tso(ms)
    ts_cache: dict = {}
    n_alter = 0

    def full(row):
        """An old image with every current column (added columns read as NULL)."""
        if extra and len(row) != len(table.columns):
            row = dict(row)
            for n, _ in extra:
                row.setdefault(n, None)
        return row

    while emitted < n_rows:
        ms += randint(1, 40)
        ts = make_tso(ms, randint(0, 7))
        last_ts = ts
        utc_txt, loc_txt = wall(ms)
        ts_val = ts_cache.get(loc_txt)
        if ts_val is None:
            ts_cache.clear()
            ts_val = ts_cache[loc_txt] = (location, loc_txt)
        touched = set()
        bts = ms + randint(0, 3)
        for _ in range(min(randint(1, 4), n_rows - emitted)):
            r = rand()
            rid = None
            if r >= insert_ratio and live:
                rid = live[randint(0, len(live) - 1)]
                if rid in touched:
                    r = 0.0
            if r < insert_ratio or not live:
                rid = next_id
                next_id += 1
                cents = randint(100, 9_999_99) if rand() < 0.97 else randint(0, 99_999_999_99)
                price = round(cents / 100 / randint(1, 5), 2) if rand() < 0.9 else None
                cust = randint(1, 50_000) if rand() < 0.98 else choice((None, 4294967295))
                trk = (None if rand() < 0.2 else randint(1, 10**12) if rand() < 0.9
                       else randint(2**63, 2**64 - 1))
                row = {
                    "id": rid, "customer_id": cust,
                    "amount": f"{cents // 100}.{cents % 100:02d}", "price": price,
                    "qty": randint(1, 20), "status": "pending",
                    "note": choice(_NOTES) if rand() < 0.4 else None,
                    "created_at": f"{utc_txt}.{ms % 1000:03d}{randint(0, 999):03d}",
                    "updated_at": ts_val, "payload": payload(),
                    "channel": randint(1, 3), "tracking_no": trk,
                }
                for n, gen in extra:
                    row[n] = gen(rng) if rand() < 0.8 else None
                rows[rid] = row
                pos[rid] = len(live)
                live.append(rid)
                touched.add(rid)
                events.append(SimpleDML(table, "INSERT", ts, data=row, build_ts=bts))
            elif r < insert_ratio + update_ratio:
                touched.add(rid)
                before = full(rows[rid])
                after = dict(before)
                status = before["status"] or "pending"
                new_status = choice(_NEXT_STATUS[status])
                after["status"] = new_status
                after["updated_at"] = ts_val
                if rand() < 0.3 or new_status == status:
                    after["qty"] = before["qty"] % 20 + 1
                if rand() < 0.2 and before["price"] is not None:
                    after["price"] = round(before["price"] * 0.9, 2)
                if rand() < 0.1:
                    after["note"] = choice(_NOTES)
                if rand() < 0.1:
                    after["payload"] = payload()
                for n, gen in extra:
                    if rand() < 0.2:
                        after[n] = gen(rng)
                rows[rid] = after
                events.append(SimpleDML(table, "UPDATE", ts, data=after, old=before, build_ts=bts))
            else:
                touched.add(rid)
                before = full(rows.pop(rid))
                i = pos.pop(rid)
                moved = live.pop()
                if moved != rid:
                    live[i] = moved
                    pos[moved] = i
                events.append(SimpleDML(table, "DELETE", ts, old=before, build_ts=bts))
            emitted += 1
            since_wm += 1
            since_boot += 1
            since_alter += 1
            if mid_stream_left:
                mid_stream_left -= 1
                if not mid_stream_left:
                    events.append(SimpleBootstrap(table, build_ts=bts))
                    since_boot = 0
        if watermark_every and since_wm >= watermark_every:
            events.append(SimpleWatermark(ts, build_ts=bts))
            since_wm = 0
        if bootstrap_every and since_boot >= bootstrap_every:
            events.append(SimpleBootstrap(table, build_ts=bts))
            since_boot = 0
        if alter_every and since_alter >= alter_every and emitted < n_rows:
            since_alter = 0
            make_col, gen = _ALTER_KINDS[n_alter % len(_ALTER_KINDS)]
            n_alter += 1
            col = make_col(f"extra_{n_alter}")
            ms += randint(1, 40)
            ddl_ts = make_tso(ms, randint(4, 9))
            new_table = SimpleTable(table.schema, table.table, table.table_id, ddl_ts - 4,
                                    table.columns + [col], [dict(i) for i in table.indexes])
            sql = (f"ALTER TABLE `{schema}`.`{table_name}` ADD COLUMN `{col.name}` "
                   f"{_column_sql(col)}")
            events.append(SimpleDDL("ALTER", sql, ddl_ts, new_table, table, build_ts=ms + 1))
            table = new_table
            extra.append((col.name, gen))
            last_ts = ddl_ts
            # later DML carries the new version's table object
    if not events or not isinstance(events[-1], SimpleWatermark):
        events.append(SimpleWatermark(last_ts, build_ts=(last_ts >> 18) + 1))
    return events


def _column_sql(c: SimpleColumn) -> str:
    t = c.type_name.upper()
    if c.family == "decimal":
        t += f"({c.effective_length},{c.effective_decimal})"
    elif c.family in ("varchar", "bit") and c.length:
        t += f"({c.length})"
    elif c.family in ("enum", "set"):
        t += "(" + ",".join("'" + e.replace("'", "''") + "'" for e in c.elements or []) + ")"
    if c.default is not None:
        t += f" DEFAULT {c.default!r}" if isinstance(c.default, str) else f" DEFAULT {c.default}"
    return t
