"""Parsing whole simple-protocol messages into Python structures (JSON via orjson, Avro via
fastavro).  Used by the reference twin for everything and by the Cython path for the rare
control messages (BOOTSTRAP, DDL, WATERMARK) and held rows."""
from __future__ import annotations

import base64
import io
import re
import json
from importlib import resources

import fastavro
import orjson

from .._json_fallback import stdlib_loads
from ..errors import DecodeError

DML_TYPES = ("INSERT", "UPDATE", "DELETE")
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")
AVRO_MESSAGE_BRANCH = 11  # index of com.pingcap.simple.avro.Message in the top-level union

_PARSED = None


def avro_schema():
    global _PARSED
    if _PARSED is None:
        text = resources.files("ticdc_fast.simple").joinpath("simple_protocol.avsc").read_text()
        _PARSED = fastavro.parse_schema(json.loads(text))
    return _PARSED


class Msg:
    """One decoded message: kind is DML, WATERMARK, BOOTSTRAP or DDL."""
    __slots__ = ("kind", "type", "database", "table", "table_id", "commit_ts", "build_ts",
                 "schema_version", "sql", "data", "old", "table_schema", "pre_table_schema",
                 "handle_key_only", "claim_check_location", "checksum")

    def __init__(self):
        for s in self.__slots__:
            setattr(self, s, None)


def _need(cond, reason, i, off=0):
    if not cond:
        raise DecodeError(reason, i, off, part="value")


def _raise_constant(name):
    raise ValueError(f"invalid JSON literal {name}")


def _fallback_json(value: bytes, exc, i: int):
    """orjson refuses valid JSON numbers beyond the double range (1e999); they only matter where
    a value is used, so parse those documents with the standard library instead."""
    if "infinity" in exc.msg:
        try:
            return stdlib_loads(value.decode("utf-8"), parse_constant=_raise_constant)
        except (UnicodeDecodeError, ValueError) as exc2:
            raise DecodeError(f"malformed JSON: {exc2}", i, getattr(exc2, "pos", 0) or 0,
                              part="value") from None
    raise DecodeError(f"malformed JSON: {exc.msg}", i, exc.pos, part="value") from None


def _load_json(value: bytes, i: int):
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        return _fallback_json(value, exc, i)


def canonical_json(value: bytes, i: int) -> bytes | None:
    """The same JSON document in the plain form TiCDC writes: member names and strings without
    needless escapes, each key once (the last copy's value, at the first copy's place — what the
    twin and Go's decoder read).  The core reads this form; it declines the rare others.
    ``None`` when the document cannot be written back (nesting beyond what the encoders take)."""
    try:
        return orjson.dumps(orjson.loads(value))
    except (orjson.JSONDecodeError, TypeError):
        pass   # numbers beyond double range or 64 bits, parsed by the standard library, or depth
    # the standard library writes exactly what it read: big integers as they were, and a number
    # beyond the double range as Infinity, which the core then rejects as the twin does
    doc = _load_json(value, i)
    try:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (RecursionError, ValueError):
        return None


def parse_json_message(value: bytes, i: int) -> Msg:
    doc = _load_json(value, i)
    _need(type(doc) is dict, "message is not a JSON object", i)
    m = Msg()
    t = doc.get("type")
    _need(isinstance(t, str), "message has no type", i)
    m.type = t
    for name, attr, kind in (("database", "database", str), ("table", "table", str),
                             ("sql", "sql", str), ("claimCheckLocation", "claim_check_location", str)):
        v = doc.get(name)
        _need(v is None or isinstance(v, kind), f"field {name!r} has an invalid value", i)
        setattr(m, attr, v)
    for name, attr in (("tableID", "table_id"), ("commitTs", "commit_ts"), ("buildTs", "build_ts"),
                       ("schemaVersion", "schema_version")):
        v = doc.get(name)
        _need(v is None or (type(v) is int and 0 <= v < (1 << 64)), f"field {name!r} has an invalid value", i)
        setattr(m, attr, v)
    hko = doc.get("handleKeyOnly")
    _need(hko is None or type(hko) is bool, "field 'handleKeyOnly' has an invalid value", i)
    m.handle_key_only = bool(hko)
    m.checksum = doc.get("checksum")
    _need(m.checksum is None or type(m.checksum) is dict, "field 'checksum' has an invalid value", i)
    m.data, m.old = doc.get("data"), doc.get("old")
    m.table_schema, m.pre_table_schema = doc.get("tableSchema"), doc.get("preTableSchema")
    if m.data is not None or m.old is not None:
        m.kind = "DML"
        _need(t in DML_TYPES, f"unknown DML type {t!r}", i)
        for img in (m.data, m.old):
            _need(img is None or type(img) is dict, "data/old is not a JSON object", i)
        _need(m.database is not None and m.table is not None, "DML without database/table", i)
        # TiCDC never writes these in a DML (tableID is omitted when 0, never null); the core's
        # scanner rejects them, and so does the twin rather than guess
        _need("tableSchema" not in doc and "preTableSchema" not in doc, "DML with a tableSchema", i)
        _need(doc.get("tableID", 0) is not None and doc.get("buildTs", 0) is not None,
              "DML with a null tableID or buildTs", i)
    elif t == "WATERMARK":
        m.kind = "WATERMARK"
    elif t == "BOOTSTRAP":
        m.kind = "BOOTSTRAP"
        _need(type(m.table_schema) is dict, "BOOTSTRAP without tableSchema", i)
    else:
        _need(t in DDL_TYPES, f"unknown message type {t!r}", i)
        m.kind = "DDL"
    _need(m.commit_ts is not None, "message has no commitTs", i)
    return m


def _avro_value(v):
    """Avro map value (fastavro, return_record_name) → the JSON-protocol form."""
    if isinstance(v, tuple):
        name, rec = v
        if name.endswith("UnsignedBigint"):
            return str(rec["value"] & 0xFFFFFFFFFFFFFFFF)
        return {"location": rec["location"], "value": rec["value"]}
    return v


def parse_avro_message(value: bytes, i: int) -> Msg:
    _need(len(value) >= 1, "empty Avro message", i)
    _need(value[0] == 2 * AVRO_MESSAGE_BRANCH, f"Avro union branch byte 0x{value[0]:02x} is not Message (0x16)", i)
    buf = io.BytesIO(value)
    try:
        # invalid UTF-8 comes as surrogate escapes: kept in column values (the invalid_utf8
        # policy applies where they are rendered), refused anywhere else (_check_strings)
        name, rec = fastavro.schemaless_reader(buf, avro_schema(), return_record_name=True,
                                               handle_unicode_errors="surrogateescape")
    except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, ...
        # fastavro's text may name the stream object (its address differs per run): not ours to show
        text = re.sub(r" from <[^>]*>", "", str(exc))
        raise DecodeError(f"invalid Avro message: {type(exc).__name__}: {text}", i, buf.tell(),
                          part="value") from None
    _need(buf.tell() == len(value), f"{len(value) - buf.tell()} trailing bytes after the Avro message",
          i, buf.tell())
    _need(name.endswith(".Message"), "Avro value is not a Message", i)
    _check_longs(rec, i)
    _check_strings(rec, i)
    mtype = rec["type"]
    branch, payload = rec["payload"]
    expect = {"WATERMARK": "Watermark", "BOOTSTRAP": "Bootstrap", "DDL": "DDL", "DML": "DML"}[mtype]
    _need(branch.endswith("." + expect), f"message type {mtype} with a {branch} payload", i)
    m = Msg()
    m.kind = mtype
    m.commit_ts = payload.get("commitTs", 0)
    m.build_ts = payload.get("buildTs")
    if m.build_ts is not None:
        m.build_ts &= 0xFFFFFFFFFFFFFFFF
    if mtype == "DML":
        m.type = payload["type"]
        m.database, m.table = payload["database"], payload["table"]
        m.table_id = payload["tableID"] & 0xFFFFFFFFFFFFFFFF
        m.commit_ts &= 0xFFFFFFFFFFFFFFFF
        m.schema_version = payload["schemaVersion"] & 0xFFFFFFFFFFFFFFFF
        m.claim_check_location = payload.get("claimCheckLocation")
        m.handle_key_only = bool(payload.get("handleKeyOnly"))
        ck = payload.get("checksum")
        m.checksum = ck[1] if isinstance(ck, tuple) else ck
        for src, attr in (("data", "data"), ("old", "old")):
            img = payload.get(src)
            setattr(m, attr, None if img is None else {k: _avro_value(v) for k, v in img.items()})
        if m.data is None and m.old is None:
            raise DecodeError("DML without data or old", i, 0, part="value")
    elif mtype == "WATERMARK":
        m.type = "WATERMARK"
        m.commit_ts &= 0xFFFFFFFFFFFFFFFF
    elif mtype == "BOOTSTRAP":
        m.type = "BOOTSTRAP"
        m.table_schema = _avro_table_schema(payload["tableSchema"])
        m.commit_ts = 0
    else:
        m.type = payload["type"]
        m.sql = payload["sql"]
        m.commit_ts &= 0xFFFFFFFFFFFFFFFF
        m.table_schema = _avro_table_schema(payload.get("tableSchema"))
        m.pre_table_schema = _avro_table_schema(payload.get("preTableSchema"))
    return m


_I64 = (-(1 << 63), (1 << 63) - 1)


def _check_longs(obj, i) -> None:
    """fastavro decodes varints of any length; TiCDC's are 64-bit (the core rejects wider ones)."""
    if type(obj) is int:
        if not _I64[0] <= obj <= _I64[1]:
            raise DecodeError("Avro varint overflows 64 bits", i, 0, part="value")
    elif isinstance(obj, dict):
        for v in obj.values():
            _check_longs(v, i)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _check_longs(v, i)


def _check_strings(rec, i) -> None:
    """Every string of a message but a DML's plain text column values must be UTF-8."""
    payload = rec.get("payload")
    if not (isinstance(payload, tuple) and len(payload) == 2 and isinstance(payload[1], dict)):
        _utf8_strings(rec, i)
        return
    payload = payload[1]
    for name, v in rec.items():
        if name != "payload":
            _utf8_strings(v, i)
    for name, v in payload.items():
        if name in ("data", "old") and isinstance(v, dict):
            for col, value in v.items():
                _utf8_strings(col, i)
                if not isinstance(value, str):
                    _utf8_strings(value, i)
        else:
            _utf8_strings(v, i)


def _utf8_strings(obj, i) -> None:
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            raise DecodeError("invalid Avro message: invalid UTF-8 outside a column value", i, 0,
                              part="value") from None
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _utf8_strings(k, i)
            _utf8_strings(v, i)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _utf8_strings(v, i)


def _avro_table_schema(ts):
    if ts is None:
        return None
    if isinstance(ts, tuple):
        ts = ts[1]
    out = dict(ts)
    out["tableID"] = out["tableID"] & 0xFFFFFFFFFFFFFFFF
    out["version"] = out["version"] & 0xFFFFFFFFFFFFFFFF
    cols = []
    for c in out.get("columns") or ():
        c = dict(c[1] if isinstance(c, tuple) else c)
        dt = c.get("dataType")
        c["dataType"] = dict(dt[1] if isinstance(dt, tuple) else dt)
        cols.append(c)
    out["columns"] = cols
    out["indexes"] = [dict(x[1] if isinstance(x, tuple) else x) for x in out.get("indexes") or ()]
    return out


def parse_message(value: bytes, i: int, encoding: str) -> Msg:
    return parse_avro_message(value, i) if encoding == "avro" else parse_json_message(value, i)


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")
