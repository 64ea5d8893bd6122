"""A TiCDC Avro-protocol *encoder* (``protocol=avro``, Confluent wire format), for tests.

It writes the Kafka keys and values TiCDC writes, and registers the schemas TiCDC registers:

* key   = ``0x00 ‖ int32be(key schema id)   ‖ avro(record of the key columns)``
* value = ``0x00 ‖ int32be(value schema id) ‖ avro(record of the whole row [+ _tidb_* fields])``
  for INSERT/UPDATE; ``None`` (a Kafka tombstone) for DELETE.
* With ``enable_tidb_extension`` *and* ``enable_watermark`` (TiCDC's test-only
  ``avro-enable-watermark``): a DDL becomes value ``0x01 ‖ JSON{"query","type","schema","table",
  "commitTs"}``, a Resolved event ``0x02 ‖ u64be(ts)``, both with key ``None``; with
  ``flavor="ticdc"`` a DELETE value becomes ``0x03 ‖ u64be(commitTs)`` (tiflow keeps the
  tombstone).  Without both options DDL and Resolved events produce no message.

Schemas are built exactly like TiCDC's ``columns2AvroSchema``/``rowToAvroSchema`` (Go
``encoding/json`` text: top level ``type,name,namespace,fields``; field keys sorted
``default,name,type``; ``connect.parameters`` maps sorted; ``<>&`` escaped as ``\\u003c``…) and
registered under ``<topic with . → _>-key`` / ``-value``.  Binary values follow goavro v2.14:
zig-zag varints, little-endian float/double, minimal two's-complement decimal bytes (``0`` →
``00``, ``-128`` → ``80``), unions as ``branch index ‖ value`` where the index follows the
written union order (``["null",T]`` or ``[T,"null"]``).  Wire rules:
``shared/spec/protocols.md`` §C.

Flavours
--------
``"tiflow"`` (classic TiCDC): the key holds the *handle-key* columns (``flags & 2``); BIT values
are minimal big-endian bytes (at least one); namespace ``ns + "." + schema`` always.
``"ticdc"`` (new architecture): the key holds the *primary-key* columns (``flags & 8``), so a
table whose handle is a NOT NULL unique key gets key ``None``; BIT values are ``ceil(n/8)``
bytes; the ``"." + schema`` part is left out when the schema is empty; watermark DELETE values.

Column definitions
------------------
``Col`` (shared with the open encoder) carries a row's values, but an Avro schema needs more of
the table definition than a row holds.  Give it per table with ``table_columns``::

    {("shop", "orders"): [AvroColumn("id", T_LONGLONG, flags=11),
                          AvroColumn("status", T_ENUM, elements=("new", "paid"), default="new"),
                          AvroColumn("amount", T_NEWDECIMAL, flags=1, length=12, scale=2), ...]}

A row's columns are matched to these definitions *by name* (a definition's type and flags win
over the ``Col``'s); the schema holds the row's columns in the row's order (TiCDC: table
order).  A column with no definition is derived from its
``Col`` (``type``, ``flags``; no default, no ENUM/SET elements, BIT(1), DECIMAL(10,0)).  The list
may hold the columns of every table version: after an ``ADD COLUMN`` the rows carry one more
column, which gives a new schema, which is registered and gets a new id (TiCDC re-registers on
every table-version change; identical schema text gets the same id back from the registry).

Values (``Col.value``): ``None`` is SQL NULL (an error for a NOT NULL column, as in goavro);
integers as ``int`` (BIGINT UNSIGNED up to 2^64-1, written as wrapped int64 in ``long`` mode);
FLOAT/DOUBLE as ``float``; DECIMAL as ``str``/``Decimal``/``int``; BIT as ``int`` (or ready
``bytes``); ENUM as the 1-based index or the element name; SET as the bitmask or the
comma-joined names; temporal, JSON and VECTOR values as TiDB's text; CHAR/VARCHAR/TEXT as
``str`` (``bytes`` are written raw); binary columns (``flags & 1``) and BLOBs as ``bytes``.
"""
from __future__ import annotations

import base64
import json
import random
import re
import struct
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from operator import attrgetter
from typing import Callable, Sequence
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from .. import _constants as C
from ._gen import WallClock
from .open_encoder import (DDL, FLAVORS, Col, Resolved, RowChange, _float64_tf, _gc_paused,
                           _json_str_tf, make_tso)
from .registry import CONTENT_TYPE, LocalSchemaRegistry

__all__ = ["AvroColumn", "AvroEncoder", "AvroRegistryError", "realistic_avro_changefeed",
           "sanitize_name", "sanitize_topic", "avro_decimal_bytes", "escape_enum_set_option",
           "AVRO_ORDERS_COLUMNS"]

DECIMAL_MODES = ("precise", "string")
BIGINT_UNSIGNED_MODES = ("long", "string")

MAGIC = b"\x00"
DDL_BYTE = b"\x01"
CHECKPOINT_BYTE = b"\x02"
DELETE_BYTE = b"\x03"

_U64 = struct.Struct(">Q").pack
_I32 = struct.Struct(">i").pack
_F32 = struct.Struct("<f").pack
_F64 = struct.Struct("<d").pack

# MySQL defaults used when a length/scale is unspecified (-1): TiDB GetDefaultFieldLengthAndDecimal.
_BIT_DEFAULT_LEN = 1
_DECIMAL_DEFAULT_PRECISION = 10
_DECIMAL_DEFAULT_SCALE = 0


class AvroRegistryError(RuntimeError):
    """The schema registry refused or failed a request (TiCDC ErrAvroSchemaAPIError)."""


# ============================================================================ column definitions
@dataclass(frozen=True, slots=True)
class AvroColumn:
    """One column of a table definition, as TiCDC's Avro encoder sees TiDB's ``ColumnInfo``.

    ``flags`` are TiCDC column flags, as in ``Col.flags`` (1 binary, 2 handle key, 8 primary
    key, 64 nullable, 128 unsigned).  ``nullable``/``unsigned`` override the matching flag bit
    when not ``None``.  ``default`` is TiDB's stored default value: usually a string (``"0"``,
    ``"abc"``, ``"1.1"``, ``"CURRENT_TIMESTAMP"``), converted per type like TiCDC does;
    ``None`` means no default (or ``DEFAULT NULL``).  ``elements`` lists ENUM/SET members in
    definition order.  ``length`` is BIT(n)'s ``n`` or DECIMAL(P,S)'s ``P`` and ``scale`` is ``S``
    (``-1``: TiDB's default for the type: BIT(1), DECIMAL(10,0)).  ``column_id`` is TiDB's
    column ID; it is informational (TiCDC orders fields by it only with row checksums, which
    this encoder does not produce).
    """
    name: str
    type: int
    flags: int = 0
    default: object = None
    elements: tuple = ()
    length: int = -1
    scale: int = -1
    column_id: int | None = None
    nullable: bool | None = None
    unsigned: bool | None = None

    @property
    def is_nullable(self) -> bool:
        return bool(self.flags & C.FLAG_NULLABLE) if self.nullable is None else self.nullable

    @property
    def is_unsigned(self) -> bool:
        return bool(self.flags & C.FLAG_UNSIGNED) if self.unsigned is None else self.unsigned

    @property
    def is_binary(self) -> bool:
        return bool(self.flags & C.FLAG_BINARY)


# ============================================================================ helpers
def sanitize_name(name: str) -> str:
    """TiCDC ``SanitizeName``: every rune outside ``[A-Za-z0-9_]`` becomes ``_``; a leading
    digit gets a ``_`` in front (``1abc`` → ``_1abc``, ``测试`` → ``__``)."""
    out = []
    for i, ch in enumerate(name):
        if i == 0 and "0" <= ch <= "9":
            out.append("_" + ch)
        elif ch == "_" or "a" <= ch <= "z" or "A" <= ch <= "Z" or "0" <= ch <= "9":
            out.append(ch)
        else:
            out.append("_")
    return "".join(out)


def sanitize_topic(topic: str) -> str:
    """TiCDC ``sanitizeTopic``: ``.`` → ``_`` (only in the subject; the topic is unchanged)."""
    return topic.replace(".", "_")


def escape_enum_set_option(option: str) -> str:
    """TiCDC ``EscapeEnumAndSetOptions`` for the ``allowed`` parameter."""
    return option.replace(",", "\\,").replace("\\'", "'").replace("''", "'")


def _signed_min_bytes(n: int) -> bytes:
    """Minimal two's-complement big-endian bytes (goavro ``toSignedBytes``); 0 → ``00``."""
    if n >= 0:
        return n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True)
    return n.to_bytes(((~n).bit_length() + 8) // 8, "big", signed=True)


def _as_fraction(v) -> Fraction:
    if isinstance(v, Fraction):
        return v
    if isinstance(v, bool):
        raise TypeError("a bool is not a DECIMAL value")
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise ValueError(f"not a finite decimal: {v}")
        return Fraction(v)
    if isinstance(v, (bytes, bytearray)):
        v = bytes(v).decode("ascii")
    if isinstance(v, str):
        try:
            d = Decimal(v.strip())
        except InvalidOperation:
            raise ValueError(f"not a decimal: {v!r}") from None
        if not d.is_finite():
            raise ValueError(f"not a finite decimal: {v!r}")
        return Fraction(d)
    raise TypeError(f"expected a decimal str/Decimal/int, got {type(v).__name__}")


_PLAIN_DECIMAL = re.compile(r"(-?)([0-9]+)(?:\.([0-9]*))?").fullmatch


def avro_decimal_bytes(value, scale: int) -> bytes:
    """The bytes goavro writes for a ``bytes.decimal`` value: ``floor(value * 10**scale)`` as
    minimal two's-complement big-endian (Go ``big.Int.Div`` is Euclidean, i.e. floor here)."""
    m = _PLAIN_DECIMAL(value) if type(value) is str else None
    if m is not None:                                   # fast path for MyDecimal text
        sign, whole, frac = m.groups()
        frac = frac or ""
        if len(frac) <= scale:
            n = int(whole + frac + "0" * (scale - len(frac)))
            return _signed_min_bytes(-n if sign else n)
    f = _as_fraction(value)
    return _signed_min_bytes((f.numerator * 10 ** scale) // f.denominator)


# Varint bytes of every zig-zagged value below 2**14 (one or two bytes).
_VARINT = [bytes((u,)) for u in range(0x80)] + [bytes(((u & 0x7F) | 0x80, u >> 7))
                                               for u in range(0x80, 0x4000)]


def _long(n: int) -> bytes:
    """Avro long: zig-zag + varint (n must be in the int64 range)."""
    u = (n << 1) ^ (n >> 63)
    if u < 0x4000:
        return _VARINT[u]
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _check_int(v, lo: int, hi: int, what: str) -> int:
    if type(v) is not int:
        if isinstance(v, str):
            v = int(v.strip())
        elif isinstance(v, int):          # bool, IntEnum
            v = int(v)
        else:
            raise TypeError(f"{what}: expected an int, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{what}: {v} is out of range [{lo}, {hi}]")
    return v


def _text_bytes(v) -> bytes:
    if type(v) is str:
        return v.encode("utf-8", "surrogateescape")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return str(v).encode("utf-8", "surrogateescape")
    raise TypeError(f"expected str or bytes, got {type(v).__name__}")


def _avro_string(v) -> bytes:
    b = _text_bytes(v)
    return _long(len(b)) + b


def _go_json(v) -> str:
    """Go ``encoding/json`` text for the Go value TiCDC puts in a schema ``default``."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return _float64_tf(v)
    if isinstance(v, (bytes, bytearray, memoryview)):           # []byte → std base64
        return '"' + base64.b64encode(bytes(v)).decode("ascii") + '"'
    if isinstance(v, str):
        return _json_str_tf(v)
    if isinstance(v, Decimal):
        return _json_str_tf(format(v, "f"))
    raise TypeError(f"cannot write {type(v).__name__} as a Go JSON value")


def _bit_bytes(v: int, nbits: int, fixed: bool) -> bytes:
    if fixed:
        size = (nbits + 7) // 8
        return v.to_bytes(size, "big")
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


# ============================================================================ per-column codecs
_INT_TYPES = (C.T_TINY, C.T_SHORT, C.T_INT24)
_STRING_TYPES = (C.T_VARCHAR, C.T_STRING, C.T_VAR_STRING, C.T_TINY_BLOB, C.T_MEDIUM_BLOB,
                 C.T_LONG_BLOB, C.T_BLOB)
_TEXTUAL = {C.T_JSON: "JSON", C.T_DATE: "DATE", C.T_DATETIME: "DATETIME",
            C.T_TIMESTAMP: "TIMESTAMP", C.T_DURATION: "TIME", C.T_VECTOR: "TiDBVECTORFloat32"}
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


class _ColumnCodec:
    """Schema JSON and value writer of one column under one encoder configuration."""
    __slots__ = ("name", "field_json", "write", "nullable", "null_index", "value_index", "col")

    def __init__(self, col: AvroColumn, enc: "AvroEncoder"):
        self.col = col
        self.name = sanitize_name(col.name)
        t = col.type
        unsigned = col.is_unsigned
        params = None
        logical = None                 # (precision, scale) for a precise decimal
        avro_type: str
        tidb_type: str
        write: Callable

        if t in _INT_TYPES or t == C.T_LONG:
            tidb_type = "INT UNSIGNED" if unsigned else "INT"
            if t == C.T_LONG and unsigned:
                avro_type = "long"
                write = self._int_writer(0, (1 << 32) - 1)
            else:
                avro_type = "int"
                if unsigned:
                    hi = {C.T_TINY: 255, C.T_SHORT: 65535, C.T_INT24: (1 << 24) - 1}[t]
                    write = self._int_writer(0, hi)
                else:
                    write = self._int_writer(_I32_MIN, _I32_MAX)
        elif t == C.T_LONGLONG:
            tidb_type = "BIGINT UNSIGNED" if unsigned else "BIGINT"
            if unsigned and enc.bigint_unsigned_handling_mode == "string":
                avro_type = "string"

                def write(v, _what=col.name):
                    return _avro_string(str(_check_int(v, 0, (1 << 64) - 1, _what)))
            elif unsigned:
                avro_type = "long"

                def write(v, _what=col.name):
                    v = _check_int(v, 0, (1 << 64) - 1, _what)
                    return _long(v - (1 << 64) if v > _I64_MAX else v)
            else:
                avro_type = "long"
                write = self._int_writer(_I64_MIN, _I64_MAX)
        elif t == C.T_YEAR:
            tidb_type, avro_type = "YEAR", "int"
            write = self._int_writer(_I32_MIN, _I32_MAX)
        elif t == C.T_FLOAT:
            tidb_type, avro_type = "FLOAT", "float"

            def write(v):
                return _F32(float(v))
        elif t == C.T_DOUBLE:
            tidb_type, avro_type = "DOUBLE", "double"

            def write(v):
                return _F64(float(v))
        elif t == C.T_BIT:
            tidb_type, avro_type = "BIT", "bytes"
            nbits = col.length if col.length != -1 else _BIT_DEFAULT_LEN
            params = {"length": str(nbits)}
            fixed = enc.flavor == "ticdc"

            def write(v, _n=nbits, _fixed=fixed, _what=col.name):
                if isinstance(v, (bytes, bytearray, memoryview)):
                    b = bytes(v)
                else:
                    b = _bit_bytes(_check_int(v, 0, (1 << 64) - 1, _what), _n, _fixed)
                return _long(len(b)) + b
        elif t == C.T_NEWDECIMAL:
            tidb_type = "DECIMAL"
            if enc.decimal_handling_mode == "precise":
                avro_type = "bytes"
                prec = col.length if col.length != -1 else _DECIMAL_DEFAULT_PRECISION
                scale = col.scale if col.scale != -1 else _DECIMAL_DEFAULT_SCALE
                logical = (prec, scale)

                def write(v, _s=scale):
                    b = avro_decimal_bytes(v, _s)
                    return _long(len(b)) + b
            else:
                avro_type = "string"

                def write(v):
                    return _avro_string(format(v, "f") if isinstance(v, Decimal) else v)
        elif t in _STRING_TYPES:
            if col.is_binary:
                tidb_type, avro_type = "BLOB", "bytes"
            else:
                tidb_type, avro_type = "TEXT", "string"
            write = _avro_string
        elif t in (C.T_ENUM, C.T_SET):
            tidb_type, avro_type = ("ENUM" if t == C.T_ENUM else "SET"), "string"
            elems = tuple(col.elements)
            params = {"allowed": ",".join(escape_enum_set_option(e) for e in elems)}
            write = self._enum_writer(elems) if t == C.T_ENUM else self._set_writer(elems)
        elif t in _TEXTUAL:
            tidb_type, avro_type = _TEXTUAL[t], "string"
            write = _avro_string
        else:
            raise ValueError(f"column {col.name!r}: type code {t} is not supported by the "
                             f"TiCDC Avro encoder (unknown mysql type)")

        params_all = {"tidb_type": tidb_type}
        if params:
            params_all.update(params)
        type_json = ('{"type":"' + avro_type + '","connect.parameters":{'
                     + ",".join(_json_str_tf(k) + ":" + _json_str_tf(params_all[k])
                                for k in sorted(params_all)) + "}")
        if logical is not None:
            type_json += ',"logicalType":"decimal","precision":%d,"scale":%d' % logical
        type_json += "}"

        name_json = _json_str_tf(self.name)
        nullable = col.is_nullable
        if logical is not None:            # goavro cannot take logical-type defaults
            if nullable:
                field = ('{"default":null,"name":' + name_json + ',"type":["null",'
                         + type_json + "]}")
                self.null_index, self.value_index = 0, 1
            else:
                field = '{"name":' + name_json + ',"type":' + type_json + "}"
                self.null_index = self.value_index = None
        else:
            default = enc._default_value(col)
            if nullable:
                if default is None:
                    field = ('{"default":null,"name":' + name_json + ',"type":["null",'
                             + type_json + "]}")
                    self.null_index, self.value_index = 0, 1
                else:
                    field = ('{"default":' + _go_json(default) + ',"name":' + name_json
                             + ',"type":[' + type_json + ',"null"]}')
                    self.null_index, self.value_index = 1, 0
            else:
                if default is None:
                    field = '{"name":' + name_json + ',"type":' + type_json + "}"
                else:
                    field = ('{"default":' + _go_json(default) + ',"name":' + name_json
                             + ',"type":' + type_json + "}")
                self.null_index = self.value_index = None
        self.field_json = field
        self.nullable = nullable
        self.write = self._wrap(write, col.name, nullable)

    def _wrap(self, write, name, nullable):
        if not nullable:
            def not_null(v):
                if v is None:
                    raise ValueError(f"column {name!r} is NOT NULL but the value is None")
                return write(v)
            return not_null
        null_b = _long(self.null_index)
        val_b = _long(self.value_index)

        def nullable_write(v):
            if v is None:
                return null_b
            return val_b + write(v)
        return nullable_write

    @staticmethod
    def _int_writer(lo: int, hi: int):
        def write(v):
            if type(v) is int and lo <= v <= hi:
                return _long(v)
            return _long(_check_int(v, lo, hi, "int column"))
        return write

    @staticmethod
    def _enum_writer(elems: tuple):
        def write(v):
            if isinstance(v, (str, bytes, bytearray)):
                return _avro_string(v)
            i = _check_int(v, 1, (1 << 64) - 1, "ENUM")
            if i > len(elems):
                raise ValueError(f"ENUM index {i} is outside [1, {len(elems)}] "
                                 f"(give AvroColumn.elements)")
            return _avro_string(elems[i - 1])
        return write

    @staticmethod
    def _set_writer(elems: tuple):
        def write(v):
            if isinstance(v, (str, bytes, bytearray)):
                return _avro_string(v)
            bits = _check_int(v, 0, (1 << 64) - 1, "SET")
            if bits >> len(elems):
                raise ValueError(f"SET bitmask {bits:#x} has bits beyond the {len(elems)} "
                                 f"elements (give AvroColumn.elements)")
            return _avro_string(",".join(e for i, e in enumerate(elems) if bits >> i & 1))
        return write


# ============================================================================ encoder
@dataclass(slots=True)
class _Plan:
    """One schema of one subject: its text, per-column writers and (once registered, which
    happens at first use, in TiCDC's order) its id and 5-byte header."""
    subject: str
    schema: str
    writers: tuple
    schema_id: int | None = None
    header: bytes | None = None


_COL_SIG = attrgetter("name", "type", "flags")


class AvroEncoder:
    """Encode ``RowChange``/``DDL``/``Resolved`` events into TiCDC Avro (Confluent) messages.

    Parameters
    ----------
    registry_url:
        A Confluent-compatible registry URL (``http://user:pass@host:port`` gives HTTP Basic
        auth, like TiCDC's ``--schema-registry``).  The encoder GETs the root at start-up and
        requires ``{}`` (as TiCDC does), then POSTs ``/subjects/{subject}/versions``.
    registry:
        A ``LocalSchemaRegistry`` to register into in-process (no HTTP; it need not be
        started).  Ignored when ``registry_url`` is given.  With neither, a private
        unstarted ``LocalSchemaRegistry`` is used (``self.registry``).
    topic:
        The Kafka topic.  Subjects are ``sanitize_topic(topic) + "-key"/"-value"``.  It may
        hold ``{schema}``/``{table}`` placeholders (a TiCDC topic dispatcher such as
        ``"tidb_{schema}_{table}"``); see ``encode_records``.
    enable_tidb_extension, decimal_handling_mode, bigint_unsigned_handling_mode,
    enable_watermark:
        TiCDC's ``enable-tidb-extension``, ``avro-decimal-handling-mode`` (``precise`` or
        ``string``), ``avro-bigint-unsigned-handling-mode`` (``long`` or ``string``) and
        ``avro-enable-watermark`` (only effective together with the extension).
    namespace:
        The changefeed namespace (tiflow) / keyspace (ticdc): the Avro namespace is
        ``sanitize_name(namespace) + "." + sanitize_name(schema)``.
    flavor:
        ``"tiflow"`` or ``"ticdc"`` (see the module docstring).
    table_columns:
        ``{(schema, table): [AvroColumn, ...]}`` column definitions (module docstring).  Read
        at every ``encode`` call, so it may be updated between calls.
    registry_retries:
        Retries (with a short back-off) of a registry request that fails with 5xx or a
        connection error; TiCDC retries forever, a test wants an error.
    """

    def __init__(self, registry_url: str | None = None, *,
                 registry: LocalSchemaRegistry | None = None, topic: str = "ticdc-avro",
                 enable_tidb_extension: bool = True, decimal_handling_mode: str = "precise",
                 bigint_unsigned_handling_mode: str = "long", namespace: str = "default",
                 flavor: str = "tiflow", enable_watermark: bool = False,
                 table_columns: dict | None = None, registry_retries: int = 2,
                 registry_timeout: float = 10.0):
        if flavor not in FLAVORS:
            raise ValueError(f"flavor must be one of {FLAVORS}, not {flavor!r}")
        if decimal_handling_mode not in DECIMAL_MODES:
            raise ValueError(f"decimal_handling_mode must be one of {DECIMAL_MODES}")
        if bigint_unsigned_handling_mode not in BIGINT_UNSIGNED_MODES:
            raise ValueError(f"bigint_unsigned_handling_mode must be one of "
                             f"{BIGINT_UNSIGNED_MODES}")
        self.flavor = flavor
        self.topic = topic
        self.enable_tidb_extension = bool(enable_tidb_extension)
        self.decimal_handling_mode = decimal_handling_mode
        self.bigint_unsigned_handling_mode = bigint_unsigned_handling_mode
        self.namespace = namespace
        self.enable_watermark = bool(enable_watermark)
        self.table_columns: dict = table_columns if table_columns is not None else {}
        self.registry_retries = int(registry_retries)
        self.registry_timeout = float(registry_timeout)
        # (subject, schema id, schema text) in registration order
        self.registered: list[tuple[str, int, str]] = []
        self._plans: dict = {}
        self._defs: dict = {}
        self._generation = 0
        self._last_ts = None
        self._last_ts_bytes = b""
        self._topics_seen: dict[str, None] = {}
        self.registry_url: str | None = None
        self._auth_header: str | None = None
        self._opener = urllib.request.build_opener()
        if registry_url is not None:
            self.registry = registry
            self._setup_http(registry_url)
        else:
            self.registry = registry if registry is not None else LocalSchemaRegistry()

    # ------------------------------------------------------------------ registry access
    def _setup_http(self, url: str) -> None:
        parts = urlsplit(url.rstrip("/"))
        if parts.username is not None:
            user, pw = unquote(parts.username), unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{pw}".encode()).decode("ascii")
            self._auth_header = "Basic " + token
            netloc = parts.hostname or ""
            if parts.port is not None:
                netloc += f":{parts.port}"
            parts = parts._replace(netloc=netloc)
        self.registry_url = urlunsplit(parts)
        # Like Go's ProxyFromEnvironment, never send loopback requests through a proxy.
        if (parts.hostname or "") in ("127.0.0.1", "localhost", "::1"):
            self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        status, body = self._http("GET", self.registry_url, None)
        if status != 200 or body.strip() != b"{}":
            raise AvroRegistryError(f"unexpected response from the schema registry root: "
                                    f"{status} {body[:200]!r}")

    def _http(self, method: str, url: str, payload: bytes | None) -> tuple[int, bytes]:
        headers = {"Accept": "application/vnd.schemaregistry.v1+json, "
                             "application/vnd.schemaregistry+json, application/json"}
        if payload is not None:
            headers["Content-Type"] = CONTENT_TYPE
        if self._auth_header:
            headers["Authorization"] = self._auth_header
        last = None
        for attempt in range(self.registry_retries + 1):
            if attempt:
                time.sleep(min(0.05 * 2 ** (attempt - 1), 1.0))
            req = urllib.request.Request(url, data=payload, method=method, headers=headers)
            try:
                with self._opener.open(req, timeout=self.registry_timeout) as resp:
                    return resp.status, resp.read()
            except urllib.error.HTTPError as e:
                body = e.read()
                if e.code < 500:                 # 4xx: not retried (TiCDC httpRetry)
                    return e.code, body
                last = f"HTTP {e.code}: {body[:200]!r}"
            except (urllib.error.URLError, OSError) as e:
                last = repr(e)
        raise AvroRegistryError(f"schema registry request {method} {url} failed: {last}")

    def _register(self, subject: str, schema: str) -> int:
        if self.registry_url is None:
            sid = self.registry.register(subject, schema)
        else:
            url = f"{self.registry_url}/subjects/{quote(subject, safe='')}/versions"
            payload = ('{"schema":' + json.dumps(schema) + "}").encode("utf-8")
            status, body = self._http("POST", url, payload)
            if status != 200:
                raise AvroRegistryError(f"registering subject {subject!r} failed: HTTP {status} "
                                        f"{body[:300]!r}")
            sid = json.loads(body).get("id")
            if not isinstance(sid, int) or sid == 0:
                raise AvroRegistryError(f"illegal schema id from the registry: {body[:200]!r}")
        self.registered.append((subject, sid, schema))
        return sid

    # ------------------------------------------------------------------ schemas
    def _default_value(self, col: AvroColumn):
        """The Go value TiCDC puts in a field's ``default`` (``None``: no default)."""
        d = col.default
        if d is None:
            return None
        t = col.type
        if isinstance(d, (bytes, bytearray)):
            if t == C.T_BIT or (t in _STRING_TYPES and col.is_binary):
                return bytes(d)                                  # []byte: base64 in JSON
            d = bytes(d).decode("utf-8", "surrogateescape")
        elif not isinstance(d, str):        # an already typed value (TiCDC passes it through)
            if t == C.T_FLOAT and isinstance(d, float):
                return struct.unpack("<f", _F32(d))[0]
            if isinstance(d, Decimal):
                return format(d, "f")
            if t == C.T_BIT and isinstance(d, int) and self.flavor == "tiflow":
                return _bit_bytes(d, 0, False)
            if t == C.T_LONGLONG and col.is_unsigned and isinstance(d, int):
                if self.bigint_unsigned_handling_mode == "string":
                    return str(d)
                return d - (1 << 64) if d > _I64_MAX else d
            if t == C.T_ENUM and isinstance(d, int) and col.elements:
                return col.elements[d - 1]
            return d
        if t in _INT_TYPES or t == C.T_YEAR:
            return int(d)
        if t == C.T_LONG:
            return int(d)
        if t == C.T_LONGLONG:
            if col.is_unsigned:
                if self.bigint_unsigned_handling_mode == "string":
                    return d
                n = int(d)
                return n - (1 << 64) if n > _I64_MAX else n
            return int(d)
        if t == C.T_FLOAT:                  # strconv.ParseFloat(v, 32) held in a float64
            return struct.unpack("<f", _F32(float(d)))[0]
        if t == C.T_DOUBLE:
            return float(d)
        if t == C.T_BIT:
            return d.encode("utf-8", "surrogateescape")
        if t in _STRING_TYPES and col.is_binary:
            return d.encode("utf-8", "surrogateescape")
        return d                            # text, ENUM/SET names, JSON, temporal, DECIMAL string

    def _namespace(self, schema: str) -> str:
        ns = sanitize_name(self.namespace)
        s = sanitize_name(schema)
        if self.flavor == "ticdc" and not s:
            return ns
        return ns + "." + s

    def _schema_text(self, schema: str, table: str, codecs: Sequence[_ColumnCodec],
                     value: bool) -> str:
        fields = [c.field_json for c in codecs]
        if value and self.enable_tidb_extension:
            fields += ['{"default":"","name":"_tidb_op","type":"string"}',
                       '{"default":0,"name":"_tidb_commit_ts","type":"long"}',
                       '{"default":0,"name":"_tidb_commit_physical_time","type":"long"}']
        seen = set()
        for c in codecs:
            if c.name in seen:
                raise ValueError(f"two columns of {schema}.{table} sanitize to the same Avro "
                                 f"field name {c.name!r}")
            seen.add(c.name)
        return ('{"type":"record","name":' + _json_str_tf(sanitize_name(table))
                + ',"namespace":' + _json_str_tf(self._namespace(schema))
                + ',"fields":[' + ",".join(fields) + "]}")

    def _definitions(self, schema: str, table: str) -> tuple[int, dict]:
        """(generation, {name: AvroColumn}); the generation changes whenever the table's
        definition list is replaced or changes length."""
        cols = self.table_columns.get((schema, table))
        if cols is None:
            return 0, {}
        cached = self._defs.get((schema, table))
        if cached is not None and cached[0] is cols and cached[1] == len(cols):
            return cached[2], cached[3]
        by_name = {}
        for c in cols:
            if not isinstance(c, AvroColumn):
                raise TypeError(f"table_columns[{(schema, table)!r}] must hold AvroColumn "
                                f"objects, not {type(c).__name__}")
            by_name[c.name] = c
        self._generation += 1
        self._defs[(schema, table)] = (cols, len(cols), self._generation, by_name)
        return self._generation, by_name

    def _plans_for(self, topic: str, ev: RowChange, cols: list):
        """(key plan or None, value plan) for this row shape; registers new schemas."""
        gen, defs = self._definitions(ev.schema, ev.table)
        sig = (topic, ev.schema, ev.table, gen, tuple(map(_COL_SIG, cols)))
        plans = self._plans.get(sig)
        if plans is not None:
            return plans
        defined = []
        for c in cols:
            d = defs.get(c.name)
            defined.append(d if d is not None else AvroColumn(c.name, c.type, c.flags))
        codecs = [_ColumnCodec(d, self) for d in defined]
        key_flag = C.FLAG_HANDLE_KEY if self.flavor == "tiflow" else C.FLAG_PRIMARY_KEY
        key_idx = tuple(i for i, d in enumerate(defined) if d.flags & key_flag)
        subject_base = sanitize_topic(topic)
        value_schema = self._schema_text(ev.schema, ev.table, codecs, True)
        value_plan = self._plan(subject_base + "-value", value_schema,
                                tuple(c.write for c in codecs))
        key_plan = None
        if key_idx:
            key_codecs = [codecs[i] for i in key_idx]
            key_schema = self._schema_text(ev.schema, ev.table, key_codecs, False)
            key_plan = (self._plan(subject_base + "-key", key_schema,
                                   tuple(c.write for c in key_codecs)), key_idx)
        plans = self._plans[sig] = (key_plan, value_plan)
        return plans

    def _plan(self, subject: str, schema: str, writers: tuple) -> _Plan:
        return _Plan(subject, schema, writers)

    def _header(self, plan: _Plan) -> bytes:
        """Register ``plan``'s schema (once per distinct subject + schema text)."""
        cache_key = ("registered", plan.subject, plan.schema)
        sid = self._plans.get(cache_key)
        if sid is None:
            sid = self._plans[cache_key] = self._register(plan.subject, plan.schema)
        plan.schema_id = sid
        plan.header = MAGIC + _I32(sid)
        return plan.header

    # ------------------------------------------------------------------ encoding
    def _topic_for(self, schema: str, table: str) -> str:
        t = self.topic
        if "{" in t:
            t = t.replace("{schema}", schema).replace("{table}", table)
        return t

    def encode_row(self, ev: RowChange,
                   topic: str | None = None) -> tuple[bytes | None, bytes | None]:
        """The (key, value) of one row event."""
        topic = topic if topic is not None else self._topic_for(ev.schema, ev.table)
        is_delete = ev.after is None
        cols = ev.before if is_delete else ev.after
        if cols is None:
            raise ValueError("a RowChange needs 'after' or 'before'")
        key_plan, value_plan = self._plans_for(topic, ev, cols)
        # Registration order follows TiCDC: tiflow encodes the value first, ticdc the key.
        if not is_delete and value_plan.header is None and self.flavor == "tiflow":
            self._header(value_plan)
        key = None
        if key_plan is not None:
            plan, idx = key_plan
            key = ((plan.header or self._header(plan))
                   + b"".join([w(cols[i].value) for w, i in zip(plan.writers, idx)]))
        if is_delete:
            if self.flavor == "ticdc" and self.enable_tidb_extension and self.enable_watermark:
                return key, DELETE_BYTE + _U64(ev.commit_ts)
            return key, None
        parts = [value_plan.header or self._header(value_plan)]
        parts += [w(c.value) for w, c in zip(value_plan.writers, cols)]
        if self.enable_tidb_extension:
            ts = ev.commit_ts
            if ts != self._last_ts:           # rows of one transaction share the TSO
                self._last_ts = ts
                self._last_ts_bytes = (_long(ts - (1 << 64) if ts > _I64_MAX else ts)
                                       + _long(ts >> 18))
            parts.append(b"\x02u" if ev.before is not None else b"\x02c")
            parts.append(self._last_ts_bytes)
        return key, b"".join(parts)

    def encode_ddl(self, ev: DDL) -> bytes | None:
        """The value of a DDL message (``None`` unless extension + watermark are on)."""
        if not (self.enable_tidb_extension and self.enable_watermark):
            return None
        js = _json_str_tf
        text = ('{"query":' + js(ev.query) + ',"type":' + str(int(ev.ddl_type))
                + ',"schema":' + js(ev.schema or "") + ',"table":' + js(ev.table or "")
                + ',"commitTs":' + str(int(ev.commit_ts)) + "}")
        return DDL_BYTE + text.encode("utf-8")

    def encode_checkpoint(self, ts: int) -> bytes | None:
        """The value of a checkpoint message (``None`` unless extension + watermark are on)."""
        if not (self.enable_tidb_extension and self.enable_watermark):
            return None
        return CHECKPOINT_BYTE + _U64(ts)

    def encode_records(self, events) -> list[tuple[str, bytes | None, bytes | None]]:
        """``(topic, key, value)`` per message.  With ``{schema}``/``{table}`` placeholders in
        ``topic``, a Resolved event yields one checkpoint message per topic seen so far (TiCDC
        sends checkpoints to every topic); with a fixed topic, exactly one."""
        out = []
        append = out.append
        templated = "{" in self.topic
        for ev in events:
            if isinstance(ev, RowChange):
                topic = self._topic_for(ev.schema, ev.table) if templated else self.topic
                if templated:
                    self._topics_seen.setdefault(topic)
                k, v = self.encode_row(ev, topic)
                append((topic, k, v))
            elif isinstance(ev, DDL):
                v = self.encode_ddl(ev)
                topic = self._topic_for(ev.schema, ev.table) if templated else self.topic
                if templated:
                    self._topics_seen.setdefault(topic)
                if v is not None:
                    append((topic, None, v))
            elif isinstance(ev, Resolved):
                v = self.encode_checkpoint(ev.ts)
                if v is not None:
                    for topic in (list(self._topics_seen) if templated else [self.topic]):
                        append((topic, None, v))
            else:
                raise TypeError(f"not an event: {type(ev).__name__}")
        return out

    def encode(self, events) -> list[tuple[bytes | None, bytes | None]]:
        """``(key, value)`` per Kafka message, in event order (see ``encode_records``)."""
        if "{" not in self.topic:
            out = []
            append = out.append
            topic = self.topic
            row = self.encode_row
            on = self.enable_tidb_extension and self.enable_watermark
            with _gc_paused():
                for ev in events:
                    if isinstance(ev, RowChange):
                        append(row(ev, topic))
                    elif isinstance(ev, DDL):
                        if on:
                            append((None, self.encode_ddl(ev)))
                    elif isinstance(ev, Resolved):
                        if on:
                            append((None, self.encode_checkpoint(ev.ts)))
                    else:
                        raise TypeError(f"not an event: {type(ev).__name__}")
            return out
        with _gc_paused():
            return [(k, v) for _, k, v in self.encode_records(events)]

    def schema_of(self, schema_id: int) -> str:
        """The schema text registered under ``schema_id`` by this encoder."""
        for _, sid, text in self.registered:
            if sid == schema_id:
                return text
        raise KeyError(schema_id)


# ============================================================================ realistic data
_ORDERS_ELEMS_STATUS = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
_ORDERS_ELEMS_TAGS = ("gift", "express", "fragile", "bulk,pack", "o'clock")

# `shop.orders` for the Avro protocol (CREATE TABLE text in AVRO_ORDERS_DDL).
AVRO_ORDERS_COLUMNS = (
    AvroColumn("id", C.T_LONGLONG, 11, column_id=1),                        # BIGINT PK
    AvroColumn("customer_id", C.T_LONG, 225, column_id=2),                  # INT UNSIGNED NULL
    AvroColumn("amount", C.T_NEWDECIMAL, 1, length=12, scale=2, column_id=3),
    AvroColumn("price", C.T_DOUBLE, 65, column_id=4),                       # NULL
    AvroColumn("weight", C.T_FLOAT, 1, default="0", column_id=5),           # DEFAULT 0
    AvroColumn("qty", C.T_SHORT, 1, default="1", column_id=6),              # DEFAULT 1
    AvroColumn("status", C.T_ENUM, 0, default="pending", elements=_ORDERS_ELEMS_STATUS,
               column_id=7),
    AvroColumn("tags", C.T_SET, 64, elements=_ORDERS_ELEMS_TAGS, column_id=8),
    AvroColumn("note", C.T_VARCHAR, 64, default="n/a", column_id=9),        # NULL DEFAULT 'n/a'
    AvroColumn("created_at", C.T_DATETIME, 1, column_id=10),
    AvroColumn("updated_at", C.T_TIMESTAMP, 1, default="CURRENT_TIMESTAMP", column_id=11),
    AvroColumn("payload", C.T_VARCHAR, 65, column_id=12),                   # VARBINARY NULL
    AvroColumn("big_counter", C.T_LONGLONG, 1 | 64 | 128, column_id=13),    # BIGINT UNSIGNED
    AvroColumn("flags", C.T_BIT, 1, length=10, default="\x00\x00", column_id=14),  # BIT(10)
    AvroColumn("attrs", C.T_JSON, 65, column_id=15),                        # JSON NULL
)
# Added by ALTER TABLE mid-stream (``add_column_at``).
AVRO_ORDERS_ADDED_COLUMN = AvroColumn("region", C.T_VARCHAR, 0, default="eu", column_id=16)

AVRO_ORDERS_DDL = (
    "CREATE TABLE `{schema}`.`{table}` (\n"
    "  `id` BIGINT NOT NULL AUTO_INCREMENT,\n"
    "  `customer_id` INT UNSIGNED DEFAULT NULL,\n"
    "  `amount` DECIMAL(12,2) NOT NULL,\n"
    "  `price` DOUBLE DEFAULT NULL,\n"
    "  `weight` FLOAT NOT NULL DEFAULT 0,\n"
    "  `qty` SMALLINT NOT NULL DEFAULT 1,\n"
    "  `status` ENUM('pending','paid','shipped','delivered','cancelled','refunded') NOT NULL "
    "DEFAULT 'pending',\n"
    "  `tags` SET('gift','express','fragile','bulk,pack','o''clock') DEFAULT NULL,\n"
    "  `note` VARCHAR(64) DEFAULT 'n/a',\n"
    "  `created_at` DATETIME(6) NOT NULL,\n"
    "  `updated_at` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n"
    "  `payload` VARBINARY(64) DEFAULT NULL,\n"
    "  `big_counter` BIGINT UNSIGNED DEFAULT NULL,\n"
    "  `flags` BIT(10) NOT NULL DEFAULT b'0',\n"
    "  `attrs` JSON DEFAULT NULL,\n"
    "  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,\n"
    "  KEY `idx_customer` (`customer_id`)\n"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
)
AVRO_ORDERS_ADD_COLUMN_DDL = ("ALTER TABLE `{schema}`.`{table}` "
                              "ADD COLUMN `region` VARCHAR(16) NOT NULL DEFAULT 'eu'")

_NEXT_STATUS = {1: (2, 5), 2: (3, 6), 3: (4,), 4: (6,), 5: (5,), 6: (6,)}
_NOTES = ("Leave at the front door", "Call before delivery", "請放在門口",
          'Customer said: "ASAP" <urgent> & fragile', "Line one\nLine two\ttabbed", "",
          "Geschenkverpackung bitte 🎁", "null")
_PAYLOADS = (b"", b"\x89PNG\r\n\x1a\n", b"\x00\x01\x02\x03", b"\xff\xfe\xfd", b"plain-bytes")
_ATTRS = ('{"gift": true}', '{"channel": "web", "coupon": null}', "[1, 2, 3]",
          '{"note": "<b>&amp;</b>"}', '"text"')
_REGIONS = ("eu", "us", "apac", "latam")


def realistic_avro_changefeed(n_rows: int, seed: int = 0, *, schema: str = "shop",
                              table: str = "orders", resolved_every: int = 1000,
                              start_ms: int = 1_714_521_600_000, insert_ratio: float = 0.7,
                              update_ratio: float = 0.2, include_ddl: bool = True,
                              add_column_at: int | None = None):
    """A deterministic single-table change stream for the Avro protocol.

    Returns ``(events, table_columns)``: a CREATE TABLE ``DDL`` (when ``include_ddl``), then
    ``n_rows`` row changes (about 70% INSERT, 20% UPDATE, 10% DELETE of live rows) in
    transactions of 1-4 rows sharing a commit TSO, a ``Resolved`` about every
    ``resolved_every`` rows and one at the end; ``table_columns`` is
    ``{(schema, table): [AvroColumn, ...]}`` for ``AvroEncoder(table_columns=...)``.

    The table (``AVRO_ORDERS_DDL``) covers BIGINT PK, INT UNSIGNED, DECIMAL(12,2), DOUBLE,
    FLOAT, SMALLINT, ENUM, SET (with ``,`` and ``'`` in members), a nullable VARCHAR with a
    non-null default (an Avro ``[T,"null"]`` union), DATETIME(6), TIMESTAMP, VARBINARY,
    BIGINT UNSIGNED (values at and above 2^63 included), BIT(10) and JSON.

    ``weight FLOAT NOT NULL DEFAULT 0`` makes TiCDC write ``"default":0`` (a Go-marshalled
    float64) for a ``float`` field: valid for goavro and Java Avro, but ``fastavro.parse_schema``
    (and so confluent-kafka's ``AvroDeserializer``) rejects it unless given
    ``_ignore_default_error=True``.  Decoders must cope; edit ``table_columns`` to avoid it.

    ``add_column_at=i`` inserts, before the ``i``-th row change, a DDL
    ``ALTER TABLE … ADD COLUMN region VARCHAR(16) NOT NULL DEFAULT 'eu'`` (ActionType 5) in a
    transaction of its own; later row images carry the column (existing rows get ``'eu'``),
    so their Avro schema differs and gets a new schema id.  ``table_columns`` then lists the
    added column too.
    """
    with _gc_paused():
        return _avro_changefeed(n_rows, seed, schema, table, resolved_every, start_ms,
                                insert_ratio, update_ratio, include_ddl, add_column_at)


def _avro_changefeed(n_rows, seed, schema, table, resolved_every, start_ms, insert_ratio,
                     update_ratio, include_ddl, add_column_at):
    rng = random.Random(seed)
    rand = rng.random

    def randint(lo: int, hi: int) -> int:
        return lo + int(rand() * (hi - lo + 1))

    def choice(seq):
        return seq[int(rand() * len(seq))]

    defs = AVRO_ORDERS_COLUMNS
    (c_id, c_cust, c_amt, c_price, c_w, c_qty, c_st, c_tags, c_note, c_cr, c_up, c_pl, c_big,
     c_bits, c_attrs) = [(d.name, d.type, d.flags) for d in defs]
    r_name, r_type, r_flags = (AVRO_ORDERS_ADDED_COLUMN.name, AVRO_ORDERS_ADDED_COLUMN.type,
                               AVRO_ORDERS_ADDED_COLUMN.flags)

    def col(spec, value):
        return Col(spec[0], spec[1], value, spec[2])

    events: list = []
    ms = start_ms
    if include_ddl:
        ms += randint(1, 50)
        events.append(DDL(schema, table, make_tso(ms, randint(0, 3)),
                          AVRO_ORDERS_DDL.format(schema=schema, table=table), 3))
    last_ts = events[-1].commit_ts if events else make_tso(ms)

    rows: dict = {}
    live: list = []
    pos: dict = {}
    next_id = 1
    emitted = 0
    since_resolved = 0
    added = False

    wall = WallClock()

    qty_cols = [col(c_qty, q) for q in range(21)]
    status_cols = [None] + [col(c_st, i) for i in range(1, 7)]        # ENUM by 1-based index
    tag_cols = [col(c_tags, None)] + [col(c_tags, m) for m in range(1, 32)]
    note_cols = {n: col(c_note, n) for n in _NOTES + (None,)}
    attrs_cols = [col(c_attrs, None)] + [col(c_attrs, a) for a in _ATTRS]
    bits_cols = {}
    null_price, null_pl, null_cust, null_big = (col(c_price, None), col(c_pl, None),
                                                 col(c_cust, None), col(c_big, None))
    region_cols = {r: Col(r_name, r_type, r, r_flags) for r in _REGIONS}
    region_default = region_cols["eu"]
    weights = [col(c_w, struct.unpack("<f", struct.pack("<f", w / 4))[0]) for w in range(0, 81)]

    def bits_col(v):
        c = bits_cols.get(v)
        if c is None:
            c = bits_cols[v] = col(c_bits, v)
        return c

    def payload():
        r = rand()
        if r < 0.3:
            return null_pl
        if r < 0.6:
            return col(c_pl, rng.getrandbits(8 * 24).to_bytes(24, "little")[:randint(1, 24)])
        return col(c_pl, choice(_PAYLOADS))

    def big():
        r = rand()
        if r < 0.3:
            return null_big
        if r < 0.9:
            return col(c_big, randint(0, 1 << 40))
        return col(c_big, choice(((1 << 63) - 1, 1 << 63, (1 << 64) - 1,
                                  (1 << 63) + randint(0, 1 << 62))))

    while emitted < n_rows:
        if add_column_at is not None and not added and emitted >= add_column_at:
            ms += randint(1, 40)
            ts = make_tso(ms, randint(0, 7))
            last_ts = ts
            events.append(DDL(schema, table, ts,
                              AVRO_ORDERS_ADD_COLUMN_DDL.format(schema=schema, table=table), 5))
            for rid in list(rows):
                rows[rid] = rows[rid] + [region_default]
            added = True
            continue
        ms += randint(1, 40)
        ts = make_tso(ms, randint(0, 7))
        last_ts = ts
        now = wall(ms)
        now_col = col(c_up, now)
        touched = set()
        n_txn = min(randint(1, 4), n_rows - emitted)
        if add_column_at is not None and not added:
            n_txn = max(1, min(n_txn, add_column_at - emitted))
        for _ in range(n_txn):
            r = rand()
            rid = None
            if r >= insert_ratio and live:
                rid = live[randint(0, len(live) - 1)]
                if rid in touched:
                    r = 0.0
            if r < insert_ratio or not live:
                rid = next_id
                next_id += 1
                cents = randint(100, 999_999) if rand() < 0.97 else randint(-99_999, 99_999_999_99)
                price = round(cents / 100 / randint(1, 5), 2) if rand() < 0.9 else None
                sign = "-" if cents < 0 else ""
                cust = randint(1, 50_000) if rand() < 0.98 else choice((None, 4294967295))
                after = [
                    col(c_id, rid),
                    null_cust if cust is None else col(c_cust, cust),
                    col(c_amt, f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"),
                    null_price if price is None else col(c_price, price),
                    weights[randint(0, 80)],
                    qty_cols[randint(1, 20)],
                    status_cols[1],
                    tag_cols[randint(0, 31) if rand() < 0.5 else 0],
                    note_cols[choice(_NOTES) if rand() < 0.4 else None],
                    col(c_cr, f"{now}.{ms % 1000:03d}{randint(0, 999):03d}"),
                    now_col,
                    payload(),
                    big(),
                    bits_col(randint(0, 1023)),
                    attrs_cols[randint(0, len(_ATTRS)) if rand() < 0.5 else 0],
                ]
                if added:
                    after.append(region_cols[choice(_REGIONS)])
                rows[rid] = after
                pos[rid] = len(live)
                live.append(rid)
                touched.add(rid)
                events.append(RowChange(schema, table, ts, after, None))
            elif r < insert_ratio + update_ratio:
                touched.add(rid)
                before = rows[rid]
                after = list(before)
                status = before[6].value
                new_status = choice(_NEXT_STATUS[status])
                after[6] = status_cols[new_status]
                after[10] = now_col
                if rand() < 0.3 or new_status == status:
                    after[5] = qty_cols[before[5].value % 20 + 1]
                if rand() < 0.2:
                    p = before[3].value
                    after[3] = null_price if p is None else col(c_price, round(p * 0.9, 2))
                if rand() < 0.1:
                    after[8] = note_cols[choice(_NOTES)]
                if rand() < 0.1:
                    after[11] = payload()
                if rand() < 0.1:
                    after[13] = bits_col(randint(0, 1023))
                rows[rid] = after
                events.append(RowChange(schema, table, ts, after, before))
            else:
                touched.add(rid)
                before = rows.pop(rid)
                i = pos.pop(rid)
                moved = live.pop()
                if moved != rid:
                    live[i] = moved
                    pos[moved] = i
                events.append(RowChange(schema, table, ts, None, before))
            emitted += 1
            since_resolved += 1
        if since_resolved >= resolved_every:
            events.append(Resolved(ts))
            since_resolved = 0
    if not events or not isinstance(events[-1], Resolved):
        events.append(Resolved(last_ts))
    cols = list(AVRO_ORDERS_COLUMNS)
    if add_column_at is not None:
        cols.append(AVRO_ORDERS_ADDED_COLUMN)
    return events, {(schema, table): cols}


def many_schema_ids_stream(n: int, first_id: int = 1_000) -> tuple[bytes, list[bytes], dict[int, str]]:
    """One row event framed ``n`` times, message i with value-schema id ``first_id + i`` (the same
    writer schema under every id): the key, the values, and the ``{id: schema}`` map that decodes
    them offline.  A stream whose cost must grow linearly with the number of schema ids."""
    events, table_columns = realistic_avro_changefeed(1, seed=11, include_ddl=False)
    enc = AvroEncoder(table_columns=table_columns, topic="ids")
    ((key, value),) = enc.encode(events)
    texts = {sid: text for _, sid, text in enc.registered}
    value_id = int.from_bytes(value[1:5], "big")
    schemas = {sid: text for sid, text in texts.items() if sid != value_id}
    values = []
    for i in range(n):
        schemas[first_id + i] = texts[value_id]
        values.append(b"\x00" + (first_id + i).to_bytes(4, "big") + value[5:])
    return key, values, schemas
