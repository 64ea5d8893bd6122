"""Parsing whole simple-protocol messages into Python structures (JSON via orjson, Avro with the
strict reader of ``ticdc_fast._avro_binary``).  Used by the reference twin for everything and by the Cython path for the rare
control messages (BOOTSTRAP, DDL, WATERMARK) and held rows."""
from __future__ import annotations

import base64
import itertools
import json
import math
import os
import re

import orjson

from .._avro_binary import AvroError, Reader
from .._json_fallback import stdlib_loads
from ..errors import DecodeError
from .._json_where import JSONSyntax, locate, object_syntax, skip_ws

DML_TYPES = ("INSERT", "UPDATE", "DELETE")
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")
AVRO_MESSAGE_BRANCH = 11  # index of com.pingcap.simple.avro.Message in the top-level union

class Msg:
    """One decoded message: kind is DML, WATERMARK, BOOTSTRAP or DDL."""
    __slots__ = ("kind", "type", "database", "table", "table_id", "commit_ts", "build_ts",
                 "schema_version", "sql", "data", "old", "table_schema", "pre_table_schema",
                 "handle_key_only", "claim_check_location", "checksum", "data_at", "old_at",
                 "claim_check_bad_utf8_at", "json_doc", "field_at")

    def __init__(self):
        for s in self.__slots__:
            setattr(self, s, None)


def _need(cond, reason, i, off=0):
    if not cond:
        raise DecodeError(reason, i, off, part="value")


def field_at(m: Msg, path) -> int:
    """Byte offset of a value of the message (an envelope member, or a path such as
    ``("checksum", "current")``): recorded by the Avro reader, found in the JSON text (the last
    copy of a repeated member, the one read).  0 when the message does not have it.  Only for
    errors: a JSON message is walked again each time."""
    if m.field_at is not None:
        return m.field_at.get(path, 0)
    found = locate(m.json_doc, (path,) if type(path) is str else path)
    return 0 if found is None else found


def nearest_at(m: Msg, path) -> int:
    """``field_at`` of ``path``, or where the message does not have it (a member left out), of
    the nearest enclosing value it has; 0 when it has none of them."""
    path = tuple(path)
    while path:
        at = field_at(m, path[0] if len(path) == 1 else path)
        if at:
            return at
        path = path[:-1]
    return 0


def _need_member(cond, reason, i, m: Msg, path):
    """``_need`` for a JSON envelope member: the error names the offset of its value."""
    if not cond:
        raise DecodeError(reason, i, field_at(m, path), part="value")


def _first_member(m: Msg, names) -> int:
    """The offset of whichever of ``names`` comes first in the message (0: none of them)."""
    return min((at for at in (field_at(m, name) for name in names) if at), default=0)


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
        _core_syntax_error(value, i)
        return _fallback_json(value, exc, i)


def _core_syntax_error(value: bytes, i: int) -> None:
    """Raise what the core's DML reader (src_cython/simple/decode.pxi) reports for a document
    orjson refuses, when it reports it: invalid UTF-8 anywhere, then the first grammar error of an
    object (orjson leaves some to the standard parser, which takes a lone surrogate escape).
    Every message passes that reader first, so the twin says the same."""
    try:
        value.decode("utf-8")
    except UnicodeDecodeError as exc:
        # at the first byte of the first ill-formed sequence, as the core's utf8_first_invalid
        raise DecodeError("malformed JSON: invalid UTF-8", i, exc.start, part="value") from None
    start = skip_ws(value, 0)
    if start >= len(value) or value[start] != 0x7B:
        return          # not an object: the core hands it to this module
    try:
        object_syntax(value)
    except JSONSyntax as exc:
        raise DecodeError(exc.reason, i, exc.offset, part="value") from None


def canonical_json(value: bytes, i: int) -> bytes | None:
    """The same JSON document in the plain form TiCDC writes: member names and strings without
    needless escapes, each key once (the last copy's value, at the first copy's place — what the
    twin and Go's decoder read).  The core reads this form; it declines the rare others.
    ``None`` when the document cannot be written back (nesting beyond what the encoders take)."""
    try:
        return orjson.dumps(orjson.loads(value))
    except (orjson.JSONDecodeError, TypeError):
        pass   # numbers beyond double range or 64 bits, parsed by the standard library, or depth
    # the standard library writes exactly what it read: big integers as they were; a number
    # beyond the double range is written back as it was sent (as Infinity the core would read a
    # syntax error where the twin reads a number), through a marked string no message can hold
    _load_json(value, i)            # the errors of a document that does not parse
    mark = "\ue000" + os.urandom(8).hex()
    try:
        doc = stdlib_loads(value.decode("utf-8"), parse_constant=_raise_constant,
                           parse_float=lambda text: float(text) if math.isfinite(float(text))
                           else f"{mark}{text}{mark}")
        out = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    except (RecursionError, ValueError):
        return None
    if mark in out:
        out = re.sub(f'"{mark}([-+.0-9eE]+){mark}"', r"\1", out)
    return out.encode("utf-8", "surrogatepass")


def parse_json_message(value: bytes, i: int) -> Msg:
    """One JSON message.  A fault of the envelope names the offset of the member's value at
    fault (0 for a member that is not there); a document that is not an object, its first byte."""
    doc = _load_json(value, i)
    if type(doc) is not dict:
        raise DecodeError("message is not a JSON object", i, skip_ws(value, 0), part="value")
    m = Msg()
    m.json_doc = value      # where a value is, should it fail (``_json_where.locate``)
    t = doc.get("type")
    _need_member(isinstance(t, str), "message has no type", i, m, "type")
    m.type = t
    for name, attr, kind in (("database", "database", str), ("table", "table", str),
                             ("sql", "sql", str), ("claimCheckLocation", "claim_check_location", str)):
        v = doc.get(name)
        _need_member(v is None or isinstance(v, kind), f"field {name!r} has an invalid value", i, m, name)
        setattr(m, attr, v)
    for name, attr in (("tableID", "table_id"), ("commitTs", "commit_ts"), ("buildTs", "build_ts"),
                       ("schemaVersion", "schema_version")):
        v = doc.get(name)
        _need_member(v is None or (type(v) is int and 0 <= v < (1 << 64)),
                     f"field {name!r} has an invalid value", i, m, name)
        setattr(m, attr, v)
    hko = doc.get("handleKeyOnly")
    _need_member(hko is None or type(hko) is bool, "field 'handleKeyOnly' has an invalid value", i, m,
                 "handleKeyOnly")
    m.handle_key_only = bool(hko)
    m.checksum = doc.get("checksum")
    _need_member(m.checksum is None or type(m.checksum) is dict, "field 'checksum' has an invalid value", i, m,
                 "checksum")
    m.data, m.old = doc.get("data"), doc.get("old")
    m.table_schema, m.pre_table_schema = doc.get("tableSchema"), doc.get("preTableSchema")
    if m.data is not None or m.old is not None:
        m.kind = "DML"
        _need_member(t in DML_TYPES, f"unknown DML type {t!r}", i, m, "type")
        for img, name in ((m.data, "data"), (m.old, "old")):
            _need_member(img is None or type(img) is dict, "data/old is not a JSON object", i, m, name)
        _need_member(m.database is not None and m.table is not None, "DML without database/table", i, m,
                     "database" if m.database is None else "table")
        # TiCDC never writes these in a DML (tableID is omitted when 0, never null); the core's
        # scanner rejects them, and so does the twin rather than guess
        if "tableSchema" in doc or "preTableSchema" in doc:
            raise DecodeError("DML with a tableSchema", i, _first_member(m, ("tableSchema", "preTableSchema")),
                              part="value")
        if doc.get("tableID", 0) is None or doc.get("buildTs", 0) is None:
            raise DecodeError("DML with a null tableID or buildTs", i, _first_member(
                m, [name for name in ("tableID", "buildTs") if name in doc and doc[name] is None]), part="value")
    elif t == "WATERMARK":
        m.kind = "WATERMARK"
    elif t == "BOOTSTRAP":
        m.kind = "BOOTSTRAP"
        _need_member(type(m.table_schema) is dict, "BOOTSTRAP without tableSchema", i, m, "tableSchema")
    else:
        _need_member(t in DDL_TYPES, f"unknown message type {t!r}", i, m, "type")
        m.kind = "DDL"
    _need_member(m.commit_ts is not None, "message has no commitTs", i, m, "commitTs")
    return m


# The Avro encoding (simple_protocol.avsc), read field by field.  Strings outside column values
# must be UTF-8; a column's text keeps invalid UTF-8 as surrogate escapes for the invalid_utf8
# policy.  Avro ``int`` fields are read as longs, as the core reads a DML's (TiCDC writes small
# versions there).
_MESSAGE_TYPES = ("WATERMARK", "BOOTSTRAP", "DDL", "DML")
_DML_TYPES = ("INSERT", "UPDATE", "DELETE")
_UTF8_OUTSIDE = "invalid Avro message: invalid UTF-8 outside a column value"
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _text(r: Reader) -> str:
    at = r.pos
    raw = r.raw()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AvroError(_UTF8_OUTSIDE, at) from None


def _utf8_outside(raw: bytes, at: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AvroError(_UTF8_OUTSIDE, at) from None


def _optional(r: Reader, read):
    return read(r) if r.union(2) == 1 else None


def _array(r: Reader, read) -> list:
    out = []
    while True:
        count = r.block_count()
        if count == 0:
            return out
        for _ in range(count):
            out.append(read(r))


def _data_type(r: Reader) -> dict:
    return {"mysqlType": _text(r), "charset": _text(r), "collate": _text(r), "length": r.long(),
            "decimal": _optional(r, Reader.long),
            "elements": _optional(r, lambda r: _array(r, _text)),
            "unsigned": _optional(r, Reader.boolean), "zerofill": _optional(r, Reader.boolean)}


def _column_schemas(r: Reader, field_at: dict, name: str) -> list:
    """A TableSchema's columns, the offsets of each column record, its name and its mysqlType
    (what the TableSchema check can find at fault in an Avro message: an unsupported type, a
    name that appears twice) kept in ``field_at`` under ``(name, "columns", k, ...)``."""
    index = itertools.count()

    def column(r: Reader) -> dict:
        at = (name, "columns", next(index))
        field_at[at] = field_at[at + ("name",)] = r.pos
        column_name = _text(r)
        field_at[at + ("dataType",)] = field_at[at + ("dataType", "mysqlType")] = r.pos
        return {"name": column_name, "dataType": _data_type(r), "nullable": r.boolean(),
                "default": _optional(r, _text)}

    return _array(r, column)


def _index_schema(r: Reader) -> dict:
    return {"name": _text(r), "unique": r.boolean(), "primary": r.boolean(), "nullable": r.boolean(),
            "columns": _array(r, _text)}


# TiCDC repeats every table's BOOTSTRAP with the same TableSchema record, which this module reads
# value by value in Python (~0.4 ms for 100 columns).  A record whose bytes were read before is
# taken from here: the reader is a function of those bytes alone, so the same bytes give the
# same object and offsets.  Entries are found by the record's first 64 bytes (names, table id,
# version) and must then match whole.  The object is shared: callers only read it.
_SEEN_RECORDS: dict = {}
_SEEN_RECORDS_MAX = 256


def _table_schema(r: Reader, field_at: dict, name: str) -> dict:
    """A TableSchema record (``name``: tableSchema or preTableSchema), the offsets of the values
    its errors name kept in ``field_at``: the record under ``name``, its tableID and version
    under ``(name, "tableID")``, ``(name, "version")``, its columns as ``_column_schemas``."""
    start, data = r.pos, r.data
    head = (name, bytes(data[start:start + 64]))
    for record, schema, offsets in _SEEN_RECORDS.get(head, ()):
        end = start + len(record)
        if data[start:end] == record:       # a slice cut by the message end is shorter: no match
            r.pos = end
            for key, off in offsets:
                field_at[key] = start + off
            return schema
    offsets_here: dict = {}
    schema = _read_table_schema_record(r, offsets_here, name)
    field_at.update(offsets_here)
    if len(_SEEN_RECORDS) >= _SEEN_RECORDS_MAX:
        _SEEN_RECORDS.clear()
    entries = _SEEN_RECORDS.setdefault(head, [])      # this list, even if another thread clears the memo
    entries.insert(0, (bytes(data[start:r.pos]), schema,
                       [(key, off - start) for key, off in offsets_here.items()]))
    del entries[4:]
    return schema


def _read_table_schema_record(r: Reader, field_at: dict, name: str) -> dict:
    field_at[name] = r.pos
    database, table = _text(r), _text(r)
    table_id = _long_at(r, field_at, (name, "tableID")) & _MASK64
    version = _long_at(r, field_at, (name, "version")) & _MASK64
    return {"database": database, "table": table, "tableID": table_id, "version": version,
            "columns": _column_schemas(r, field_at, name), "indexes": _array(r, _index_schema)}


class _ColumnProblem(Exception):
    def __init__(self, reason, offset, column):
        self.reason, self.offset, self.column = reason, offset, column


class _ZoneProblem(Exception):
    """A TIMESTAMP location the decoder can never load: reported at the location."""

    def __init__(self, reason, offset):
        super().__init__(reason)
        self.offset = offset


# the core names a column (and asks for a time zone) by at most 255 bytes
_NAME_LIMIT = 255


def _label(raw: bytes) -> str:
    """A column name as the core's errors name it."""
    return raw[:_NAME_LIMIT].decode("utf-8", "replace")


def _plan_column_name(plan, raw: bytes) -> str | None:
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return name if plan.column(name) is not None else None


def _unloadable_zone(raw: bytes) -> str | None:
    """Why the TIMESTAMP location ``raw`` can never be loaded, or None.  The decoder passes the
    core's request as at most 255 bytes read as UTF-8 with replacement: a name that is not UTF-8
    or is longer never matches what was loaded, and the second request fails the message."""
    if len(raw) <= _NAME_LIMIT:
        try:
            raw.decode("utf-8")
            return None
        except UnicodeDecodeError:
            pass
    from ..timezones import local_table
    name = _label(raw)
    try:
        local_table(name)
    except ValueError as exc:
        return f"TIMESTAMP location: {exc}"
    return f"TIMESTAMP location: cannot be passed: {name!r}"


def _image(r: Reader, at: dict, plan=None) -> dict:
    """A DML's data/old map: column name -> value in the JSON protocol's form (long / float /
    str / bytes / {location, value}); ``at`` gets each column's (name, value) byte offsets where
    the core reports them.  With the table's ``plan`` (the schema the core decodes with), each
    name is checked against it as it is read and TIMESTAMP texts are kept as sent, as the core
    reads them."""
    img = {}
    while True:
        count = r.block_count()
        if count == 0:
            return img
        for _ in range(count):
            name_at = r.pos
            if plan is None:
                name = label = _text(r)
            else:
                raw = r.raw()
                label = _label(raw)
                name = _plan_column_name(plan, raw)
                if name is None:
                    raise _ColumnProblem("column is not in the message's schema version", name_at, label)
            value_at = r.pos
            try:
                branch = r.union(8)
            except AvroError as exc:
                exc.column = label         # the core names the column of a bad branch only
                raise
            if branch == 0:
                v = None
            elif branch == 1 or branch == 7:       # long, UnsignedBigint{value: long}
                v = r.long()
                if branch == 7:
                    v = str(v & _MASK64)
            elif branch == 2 or branch == 3:       # float, double
                v = r.float32() if branch == 2 else r.float64()
                if math.isinf(v) or math.isnan(v):
                    raise _ColumnProblem("NaN or infinite float", value_at, label)
            elif branch == 4:
                value_at = r.pos
                v = r.raw().decode("utf-8", "surrogateescape")
            elif branch == 5:
                v = r.raw()
            elif plan is None:                     # Timestamp{location, value}
                loc = _text(r)
                value_at = r.pos
                v = {"location": loc, "value": _text(r)}
            else:
                loc_at = r.pos
                loc_raw = r.raw()
                value_at = r.pos
                # the wall-clock text is judged where it is converted ("invalid datetime")
                v = {"value": r.raw().decode("utf-8", "surrogateescape")}
                problem = _unloadable_zone(loc_raw)
                if problem is not None:
                    raise _ZoneProblem(problem, loc_at)
                v["location"] = loc_raw.decode("utf-8")
            img[name] = v
            at[name] = (name_at, value_at)


def _checksum(r: Reader, field_at: dict) -> dict:
    """The Checksum record, the offset of each member kept under ``("checksum", member)``."""
    out = {}
    for name in ("version", "corrupted", "current", "previous"):
        field_at[("checksum", name)] = r.pos
        out[name] = r.boolean() if name == "corrupted" else r.long()
    return out


def _long_at(r: Reader, field_at: dict, name) -> int:
    """An envelope long, its byte offset kept in ``field_at`` for the errors that name it."""
    field_at[name] = r.pos
    return r.long()


def parse_avro_message(value: bytes, i: int, plans=None, stop_on_claim_check: bool = False) -> Msg:
    """One Avro message.  ``plans`` ((database, table, schema version) -> table schema) reads a
    DML as the core's fast path does: a DML of an unknown schema is only read up to its schema
    version (the caller hands it on), column names are checked as they are read, and the
    claim-check location's UTF-8 is left to the row (``claim_check_bad_utf8_at``)."""
    _need(len(value) >= 1, "empty Avro message", i)
    _need(value[0] == 2 * AVRO_MESSAGE_BRANCH, f"Avro union branch byte 0x{value[0]:02x} is not Message (0x16)", i)
    r = Reader(value, 1)
    m = Msg()
    try:
        mtype = _MESSAGE_TYPES[r.enum(4)]
        branch_at = r.pos
        branch = r.union(4)
        _need(branch == _MESSAGE_TYPES.index(mtype),
              f"message type {mtype} with a {_MESSAGE_TYPES[branch]} payload", i, branch_at)
        m.kind = mtype
        if mtype == "DML":
            r.long()                                   # version
            # the core reads the header through the schema version before it looks at names
            db_at = r.pos
            db_raw = r.raw()
            table_at = r.pos
            table_raw = r.raw()
            m.field_at = at = {}
            m.table_id = _long_at(r, at, "tableID") & _MASK64
            at["type"] = r.pos
            m.type = _DML_TYPES[r.enum(3)]
            m.commit_ts = _long_at(r, at, "commitTs") & _MASK64
            m.build_ts = _long_at(r, at, "buildTs") & _MASK64
            m.schema_version = _long_at(r, at, "schemaVersion") & _MASK64
            m.database = _utf8_outside(db_raw, db_at)
            m.table = _utf8_outside(table_raw, table_at)
            plan = None
            if plans is not None:
                plan = plans.get((m.database, m.table, m.schema_version))
                if plan is None:
                    return m
            if plan is None:
                m.claim_check_location = _optional(r, _text)
            elif r.union(2) == 1:
                ccl_at = r.pos
                raw = r.raw()
                try:
                    m.claim_check_location = raw.decode("utf-8")
                except UnicodeDecodeError:
                    m.claim_check_location = raw.decode("utf-8", "replace")
                    m.claim_check_bad_utf8_at = ccl_at
            m.handle_key_only = bool(_optional(r, Reader.boolean))
            if r.union(2) == 1:
                at["checksum"] = r.pos
                m.checksum = _checksum(r, at)
            if plan is not None and stop_on_claim_check and m.claim_check_location is not None:
                return m
            m.data_at, m.old_at = {}, {}
            m.data = _optional(r, lambda r: _image(r, m.data_at, plan))
            m.old = _optional(r, lambda r: _image(r, m.old_at, plan))
        elif mtype == "WATERMARK":
            m.field_at = at = {}
            r.long()
            m.type = "WATERMARK"
            m.commit_ts = _long_at(r, at, "commitTs") & _MASK64
            m.build_ts = _long_at(r, at, "buildTs") & _MASK64
        elif mtype == "BOOTSTRAP":
            m.field_at = at = {}
            r.long()
            m.type = "BOOTSTRAP"
            m.build_ts = _long_at(r, at, "buildTs") & _MASK64
            m.table_schema = _table_schema(r, at, "tableSchema")
            m.commit_ts = 0
        else:
            m.field_at = at = {}
            r.long()
            m.type = DDL_TYPES[r.enum(len(DDL_TYPES))]
            m.sql = _text(r)
            m.commit_ts = _long_at(r, at, "commitTs") & _MASK64
            m.build_ts = _long_at(r, at, "buildTs") & _MASK64
            m.table_schema = _optional(r, lambda r: _table_schema(r, at, "tableSchema"))
            m.pre_table_schema = _optional(r, lambda r: _table_schema(r, at, "preTableSchema"))
    except AvroError as exc:
        raise DecodeError(exc.reason, i, exc.offset, getattr(exc, "column", None), part="value") from None
    except _ColumnProblem as exc:
        raise DecodeError(exc.reason, i, exc.offset, exc.column, part="value") from None
    except _ZoneProblem as exc:
        raise DecodeError(str(exc), i, exc.offset, part="value") from None
    _need(r.pos == len(value), "trailing bytes after the Avro message", i, r.pos)
    if mtype == "DML" and m.data is None and m.old is None:
        raise DecodeError("DML without data or old", i, r.pos, part="value")
    return m


def parse_message(value: bytes, i: int, encoding: str, plans=None, stop_on_claim_check: bool = False) -> Msg:
    if encoding == "avro":
        return parse_avro_message(value, i, plans, stop_on_claim_check)
    return parse_json_message(value, i)


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")
