"""Pure-Python reference twin of the simple-protocol row decoder (orjson / the strict Avro reader).

The front end (``decoder.py``) owns the state — schema cache, held rows — and drives an
implementation through a small interface: ``register(TableSchema)``, ``run(values, start)``
(decode consecutive DML messages with known schemas, stop at anything else),
``append_control(...)``, ``finish()``.  This module is that interface in pure Python; the
Cython core implements the same one for speed.
"""
from __future__ import annotations

import base64

import pyarrow as pa

from .. import _constants as C
from .. import values as V
from ..arrow_types import old_image_column
from ..errors import DecodeError
from .._json_where import column_name, locate
from ..convert import convert_typed
from ..timezones import local_table, wall_to_utc_us
from .messages import field_at, parse_message

_MASK64 = (1 << 64) - 1
_EPOCH_US_DAY = 86_400_000_000


def _int_range(col) -> tuple[int, int]:
    code = col.type_code
    if code in (C.T_BIT, C.T_SET):
        return 0, _MASK64
    if code == C.T_ENUM:
        return 0, 65535
    return C.INT_RANGE[code][1 if col.flags & C.FLAG_UNSIGNED else 0]


def _utc_text(ts: dict, problem) -> str:
    """TIMESTAMP {location, value} → the UTC instant as 'YYYY-MM-DD HH:MM:SS[.f]Z' (same fsp)."""
    loc, value = ts.get("location"), ts.get("value")
    if not isinstance(loc, str) or not isinstance(value, str):
        raise problem("TIMESTAMP value must be {location, value} strings")
    raw = value.encode("utf-8", "surrogateescape")   # an Avro text is kept as sent
    try:
        wall = V.parse_datetime_us(raw)
    except V.ValueProblem:
        if raw.startswith(b"0000-00-00"):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                # an Avro text that is not UTF-8 cannot be kept as sent (nor can the core keep it)
                raise V.ValueProblem("zero date has no exact value") from None
            return value  # a zero timestamp has no instant; kept as sent
        raise
    try:
        utc = wall_to_utc_us(loc, wall)
    except ValueError:
        raise problem(_unknown_zone(loc)) from None
    days, us = divmod(utc, _EPOCH_US_DAY)
    y, m, d = _civil(days)
    secs, frac = divmod(us, 1_000_000)
    _, _, f = value.partition(".")
    text = f"{y:04d}-{m:02d}-{d:02d} {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    if f:
        text += "." + f"{frac:06d}"[:len(f)]
    return text + "Z"


def _unknown_zone(loc: str) -> str:
    """The core's words for a TIMESTAMP location that is no zone: the name's bytes, a control
    byte (NUL included) as \\xNN, up to the piece that would pass 200 bytes."""
    shown = bytearray()
    for b in loc.encode("utf-8", "surrogateescape"):
        piece = b"\\x%02x" % b if b < 32 or b == 127 else bytes((b,))
        if len(shown) + len(piece) > 200:
            break
        shown += piece
    return f"unknown time zone '{shown.decode('utf-8', 'replace')}'"


def _civil(days: int) -> tuple[int, int, int]:
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def render_text(col, v) -> str | None:
    """Generic output text of one simple-protocol value (JSON form; Avro values normalised first)."""
    if v is None:
        return None
    code = col.type_code
    kind = C.TYPE_KIND[code]
    if code == C.T_TIMESTAMP and isinstance(v, dict):
        return _utc_text(v, V.ValueProblem)
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string value")
    raw = v.encode("utf-8", "surrogateescape")
    if kind in (C.K_INT, C.K_UINT, C.K_ENUM):
        lo, hi = _int_range(col)
        return str(V.parse_int(raw, lo, hi))
    if kind in (C.K_FLOAT32, C.K_FLOAT64):
        bits = 32 if kind == C.K_FLOAT32 else 64
        return V.format_float_plain(V.parse_float_text(raw, bits), bits)
    if kind == C.K_BLOB:
        V.b64decode_strict(raw)
        return v
    return V.value_text(raw)


def convert_value(target, col, v, tz_default: str):
    """Typed output of one value, converted by the column's own TableSchema type."""
    if v is None:
        return None
    code = col.type_code
    w = target.writer
    if code == C.T_TIMESTAMP and isinstance(v, dict):
        if w == C.W_STRING:
            return _utc_text(v, V.ValueProblem)
        if w != C.W_TIMESTAMP:
            raise V.ValueProblem("cannot convert a TIMESTAMP to this type")
        loc, value = v.get("location"), v.get("value")
        if not isinstance(loc, str) or not isinstance(value, str):
            raise V.ValueProblem("TIMESTAMP value must be {location, value} strings")
        wall = V.parse_datetime_us(value.encode("utf-8", "surrogateescape"))   # an Avro text as sent
        try:
            return wall_to_utc_us(loc, wall)
        except ValueError:
            raise V.ValueProblem(_unknown_zone(loc)) from None
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string value")
    if w == C.W_STRING and code in (C.T_ENUM, C.T_SET) and col.elements is not None:
        lo, hi = _int_range(col)
        try:
            n = V.parse_int(v.encode(), lo, hi)
        except V.ValueProblem:
            raise V.ValueProblem("invalid ENUM/SET value") from None
        if code == C.T_ENUM:
            if n == 0:
                return ""
            if n > len(col.elements):
                raise V.ValueProblem("ENUM index beyond its elements")
            return col.elements[n - 1]
        if n >> len(col.elements):
            raise V.ValueProblem("SET bitmask beyond its elements")
        return ",".join(e for b, e in enumerate(col.elements) if n >> b & 1)
    if w == C.W_STRING and not col.flags & C.FLAG_BINARY:
        return render_text(col, v)
    if code in (C.T_FLOAT, C.T_DOUBLE) and w in (C.W_FLOAT32, C.W_FLOAT64):
        x = V.parse_float_text(v.encode(), 32 if code == C.T_FLOAT else 64)
        if w == C.W_FLOAT32 and V.to_float32(x) != x:
            raise V.ValueProblem("value not exact as float32")
        return x
    return convert_typed(target, code, col.flags, v, tz_default)


def normalise_avro_value(col, v):
    """Avro map values → the JSON protocol's string forms, so one set of rules applies."""
    if v is None or isinstance(v, (str, dict)):
        return v
    if isinstance(v, bool):
        raise V.ValueProblem("unexpected boolean value")
    if isinstance(v, int):
        if col.type_code in (C.T_BIT, C.T_SET) or (col.type_code == C.T_LONGLONG and col.flags & C.FLAG_UNSIGNED):
            v &= _MASK64   # TiCDC casts the uint64 to int64
        return str(v)
    if isinstance(v, float):
        if col.type_code == C.T_FLOAT:
            return V.format_float_plain(V.to_float32(v), 32)
        return V.format_float_plain(v, 64)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(v).decode("ascii")
    raise V.ValueProblem(f"unexpected Avro value {type(v).__name__}")


_TS_SHAPE = "TIMESTAMP value must be {location, value} strings"


def _offset(m, at, name: bool = False, v=None, col=None, first: bool = False) -> int:
    """A byte offset recorded by the Avro reader, or the place of a JSON member found now.  A
    JSON TIMESTAMP {location, value} fails at its "value" member (the core reads the wall-clock
    text there), unless the object itself is not of that shape."""
    if type(at) is int:
        return at
    if type(v) is dict and col is not None and col.type_code == C.T_TIMESTAMP:
        loc, value = v.get("location"), v.get("value")
        if isinstance(loc, str) and isinstance(value, str):
            at = at + ("value",)
    found = locate(m.json_doc, at, name=name, first=first)
    return 0 if found is None else found


_CONTROL_OPS = {"WATERMARK": "RESOLVED", "BOOTSTRAP": "BOOTSTRAP", "DDL": "DDL"}


class ReferenceRows:
    """Row builder of the twin: the same interface as the Cython core's SimplePlan."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.plans = {}
        self.rows = []
        self.stop_on_claim_check = False

    # -- schema plans
    def register(self, ts) -> None:
        # the first TableSchema of a (database, table, version) stays, as in TiCDC's decoder and
        # the Cython core; a re-announcement with other columns changes nothing
        self.plans.setdefault(ts.key, ts)

    # -- rows
    def run(self, values, start: int, msg_base: int = 0) -> int:
        """Decode DML messages values[start:] while their schema is known; return the index of
        the first message not handled (a control message or an unknown schema)."""
        i = start
        while i < len(values):
            m = parse_message(values[i], msg_base + i, self.cfg.encoding, self.plans, self.stop_on_claim_check)
            if m.kind != "DML" or (m.database, m.table, m.schema_version) not in self.plans \
                    or (self.stop_on_claim_check and m.claim_check_location is not None):
                return i
            self.dml(m, msg_base + i, msg_base + i)
            i += 1
        return i

    def dml(self, m, msg: int, row_msg: int) -> None:
        ts = self.plans[(m.database, m.table, m.schema_version)]
        cfg = self.cfg
        images, faults = [], []
        for img, key, where in ((m.data, "data", m.data_at), (m.old, "old", m.old_at)):
            if img is None:
                images.append(None)
                continue
            try:
                images.append(self._image(m, img, key, where, ts, msg))
            except DecodeError as exc:
                if where is not None:
                    raise
                images.append(None)
                faults.append((key, exc))
        if faults:
            # the core reads the images of a JSON message in document order
            if len(faults) == 2 and (locate(m.json_doc, ("old",)) or 0) < (locate(m.json_doc, ("data",)) or 0):
                raise faults[1][1]
            raise faults[0][1]
        data, old = images
        op = m.type
        if op == "INSERT" and data is None or op == "UPDATE" and (data is None or old is None) \
                or op == "DELETE" and old is None:
            # at the type that asks for the image (the image itself may be absent)
            raise DecodeError(f"{op} without the image it needs", msg, field_at(m, "type"), part="value")
        after = data if op != "DELETE" else None
        before = old if op != "INSERT" else None
        row = {"_op": op, "_commit_ts": _i64(m.commit_ts, "commitTs", msg, m), "_schema": m.database,
               "_table": m.table, "_schema_version": _i64(m.schema_version, "schemaVersion", msg, m),
               "_table_id": _i64(m.table_id, "tableID", msg, m), "_build_ts": _i64(m.build_ts, "buildTs", msg, m),
               "_handle_key_only": bool(m.handle_key_only) and m.claim_check_location is None,
               "_claim_check_location": m.claim_check_location, "_msg": row_msg}
        if cfg.targets is not None and (m.database, m.table) != (cfg.schema_name, cfg.table_name):
            # another table's row in typed output: judged as far as the core judges it (its
            # images read against its schema version, its envelope numbers), then left out
            return
        if m.claim_check_bad_utf8_at is not None:
            raise DecodeError("invalid UTF-8 in a text value", msg, m.claim_check_bad_utf8_at, part="value")
        _checksum(row, m, msg)
        if cfg.targets is None:
            for key, img in (("after", after), ("before", before)):
                if img is None:
                    row[key] = None
                    continue
                entries = []
                for col, v, at in img:
                    try:
                        entries.append((col.name, render_text(col, v)))
                    except V.ValueProblem as exc:
                        raise DecodeError(str(exc), msg, _offset(m, at, v=v, col=col), column_name(col.name),
                                          part="value") from None
                row[key] = entries
        else:
            row["typed"] = dict(zip([t.name for t in cfg.targets],
                                    self._typed_image(after if after is not None else before, msg, m)))
            if cfg.old_image and before is not None:
                row["_before"] = self._typed_image(before, msg, m)
        self.rows.append(row)

    def _image(self, m, img: dict, key: str, where, ts, msg: int) -> list:
        """One image's (column, value, place of the value): every member a column of the schema
        version; a JSON TIMESTAMP object of the {location, value} shape."""
        out = []
        for name, v in img.items():
            # byte offsets of the name and the value: the Avro reader records them; in JSON
            # they are found in the text when an error needs them (``at``: the path there)
            name_at, at = where[name] if where is not None else ((key, name), (key, name))
            col = ts.column(name)
            if col is None:
                raise DecodeError("column is not in the message's schema version", msg,
                                  _offset(m, name_at, name=True, first=True), column_name(name),
                                  part="value")
            if self.cfg.encoding == "avro":
                try:
                    v = normalise_avro_value(col, v)
                except V.ValueProblem as exc:
                    raise DecodeError(str(exc), msg, at, name, part="value") from None
            out.append((col, v, at))
        if where is None:
            # the core checks the shape of TIMESTAMP objects once the image is read, before any
            # value is converted
            for col, v, at in out:
                if col.type_code != C.T_TIMESTAMP or type(v) is not dict:
                    continue
                loc = v.get("location")
                if not (isinstance(loc, str) and isinstance(v.get("value"), str)):
                    raise DecodeError(_TS_SHAPE, msg, _offset(m, at), column_name(col.name), part="value")
                raw = loc.encode("utf-8", "surrogateescape")
                if len(raw) > 255:
                    # the core passes a location by its first 255 bytes: a longer one can never
                    # be loaded, and fails the message as soon as it is read
                    try:
                        local_table(raw[:255].decode("utf-8", "replace"))
                    except ValueError as exc:
                        raise DecodeError(f"TIMESTAMP location: {exc}", msg, _offset(m, at + ("location",)),
                                          part="value") from None
        return out

    def _typed_image(self, image, msg: int, m) -> list:
        """One image as the target columns' values, in target order."""
        img = {c.name: (c, v, at) for c, v, at in image}
        out = []
        for t in self.cfg.targets:
            got = img.get(t.name)
            if got is None:
                out.append(None)
                continue
            try:
                out.append(convert_value(t, got[0], got[1], self.cfg.timezone))
            except V.ValueProblem as exc:
                raise DecodeError(str(exc), msg, _offset(m, got[2], v=got[1], col=got[0]), column_name(t.name),
                                  part="value") from None
        return out

    def append_control(self, row: dict) -> None:
        self.rows.append(row)

    def reset(self) -> None:
        """Drop the rows of a batch that failed."""
        self.rows = []

    def finish(self, fields):
        cols = {f.name: [] for f in fields}
        msg = []
        typed = self.cfg.targets is not None
        for r in self.rows:
            msg.append(r["_msg"])
            t = r.get("typed") or {}
            for f in fields:
                if typed and f.name in t:
                    cols[f.name].append(t[f.name])
                else:
                    v = r.get(f.name)
                    if f.name == C.COL_HANDLE_KEY_ONLY or f.name == C.COL_UNDECODABLE:
                        v = bool(v)
                    cols[f.name].append(v)
        self.rows = []
        return [old_image_column(self.cfg.targets, cols[f.name]) if f.name == C.COL_OLD_IMAGE
                else pa.array(cols[f.name], f.type) for f in fields], msg


def _i64(v, name, msg, m):
    if v is not None and v > (1 << 63) - 1:
        raise DecodeError(f"{name} out of int64 range", msg, field_at(m, name), part="value")
    return v


def _checksum(row, m, msg):
    ck = m.checksum
    if ck is None:
        return
    if m.field_at is None:
        # TiCDC's checksum struct (version int, corrupted bool, current/previous uint32): an
        # absent field is its zero value, any other type is an error (as in the core's scanner,
        # which also keeps the low 32 bits of a current/previous up to 2^64-1); the first member
        # of a wrong form, in struct order, fails the row at its value
        def bad(name):
            return DecodeError(f"invalid checksum object ({name})", msg, field_at(m, ("checksum", name)),
                               part="value")

        def number(name, top):
            v = ck.get(name, 0)
            if type(v) is not int or not 0 <= v <= top:
                raise bad(name)
            return v
        row["_checksum_version"] = number("version", (1 << 31) - 1)
        corrupted = ck.get("corrupted", False)
        if type(corrupted) is not bool:
            raise bad("corrupted")
        row["_checksum_corrupted"] = corrupted
        row["_checksum_current"] = number("current", _MASK64) & 0xFFFFFFFF
        row["_checksum_previous"] = number("previous", _MASK64) & 0xFFFFFFFF
        return
    try:
        row["_checksum_version"] = int(ck["version"])
        row["_checksum_corrupted"] = bool(ck["corrupted"])
        row["_checksum_current"] = int(ck["current"]) & 0xFFFFFFFF
        row["_checksum_previous"] = int(ck["previous"]) & 0xFFFFFFFF
    except (KeyError, TypeError, ValueError):
        raise DecodeError("invalid checksum object", msg, field_at(m, "checksum"), part="value") from None
