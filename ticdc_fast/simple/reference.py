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
from .. import convert
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


# ----------------------------------------------------------------------------- column decoders
# One per column of a TableSchema, chosen once when the schema version's plan is compiled for
# this output (_SchemaPlan), from the column's type, the target's writer and the wire: a JSON
# string (an Avro value normalised first), or a TIMESTAMP's {location, value} object.

def _strings(text, timestamp_object=None):
    """A column's decoder from ``text`` (its decoder of a string value) and, for a TIMESTAMP,
    ``timestamp_object`` (of a {location, value} object); any other value is refused."""
    if timestamp_object is None:
        def decode(v):
            if not isinstance(v, str):
                raise V.ValueProblem("expected a string value")
            return text(v)
    else:
        def decode(v):
            if isinstance(v, dict):
                return timestamp_object(v)
            if not isinstance(v, str):
                raise V.ValueProblem("expected a string value")
            return text(v)
    return decode


def _string_text(col):
    """Generic text of a column's string value, by the column's type."""
    kind = C.TYPE_KIND[col.type_code]      # a TableSchema's columns have known types
    if kind in (C.K_INT, C.K_UINT, C.K_ENUM):
        lo, hi = _int_range(col)
        return lambda v: str(V.parse_int(v.encode("utf-8", "surrogateescape"), lo, hi))
    if kind in (C.K_FLOAT32, C.K_FLOAT64):
        bits = 32 if kind == C.K_FLOAT32 else 64
        return lambda v: V.format_float_plain(V.parse_float_text(v.encode("utf-8", "surrogateescape"), bits), bits)
    if kind == C.K_BLOB:
        def blob(v):
            V.b64decode_strict(v.encode("utf-8", "surrogateescape"))
            return v
        return blob
    return lambda v: V.value_text(v.encode("utf-8", "surrogateescape"))


def _utc_object_text(v) -> str:
    return _utc_text(v, V.ValueProblem)


def text_decoder(col):
    """Generic output: the decoder of one column, its value (JSON form; Avro values normalised
    first) → its text."""
    return _strings(_string_text(col), _utc_object_text if col.type_code == C.T_TIMESTAMP else None)


def _timestamp_object(w: int):
    """A TIMESTAMP {location, value} into a target of writer ``w``."""
    if w == C.W_STRING:
        return _utc_object_text
    if w != C.W_TIMESTAMP:
        def refuse(v):
            raise V.ValueProblem("cannot convert a TIMESTAMP to this type")
        return refuse

    def to_utc(v) -> int:
        loc, value = v.get("location"), v.get("value")
        if not isinstance(loc, str) or not isinstance(value, str):
            raise V.ValueProblem("TIMESTAMP value must be {location, value} strings")
        wall = V.parse_datetime_us(value.encode("utf-8", "surrogateescape"))   # an Avro text as sent
        try:
            return wall_to_utc_us(loc, wall)
        except ValueError:
            raise V.ValueProblem(_unknown_zone(loc)) from None
    return to_utc


def _element_text(col):
    """An ENUM index / SET bitmask into its elements' text."""
    lo, hi = _int_range(col)
    elements, enum = col.elements, col.type_code == C.T_ENUM

    def element_text(v) -> str:
        try:
            n = V.parse_int(v.encode(), lo, hi)
        except V.ValueProblem:
            raise V.ValueProblem("invalid ENUM/SET value") from None
        if enum:
            if n == 0:
                return ""
            if n > len(elements):
                raise V.ValueProblem("ENUM index beyond its elements")
            return elements[n - 1]
        if n >> len(elements):
            raise V.ValueProblem("SET bitmask beyond its elements")
        return ",".join(e for b, e in enumerate(elements) if n >> b & 1)
    return element_text


def _float_text(code: int, w: int):
    """A FLOAT/DOUBLE string into a float target, exact."""
    bits = 32 if code == C.T_FLOAT else 64

    def to_float(v) -> float:
        x = V.parse_float_text(v.encode(), bits)
        if w == C.W_FLOAT32 and V.to_float32(x) != x:
            raise V.ValueProblem("value not exact as float32")
        return x
    return to_float


def typed_decoder(target, col, tz_default: str):
    """Typed output: the decoder of one column into ``target``, by the column's own TableSchema
    type (``tz_default``: the server's zone, for what the open protocol's rules convert)."""
    code, w = col.type_code, target.writer
    if w == C.W_STRING and code in (C.T_ENUM, C.T_SET) and col.elements is not None:
        text = _element_text(col)
    elif w == C.W_STRING and not col.flags & C.FLAG_BINARY:
        text = _string_text(col)
    elif code in (C.T_FLOAT, C.T_DOUBLE) and w in (C.W_FLOAT32, C.W_FLOAT64):
        text = _float_text(code, w)
    else:
        text = convert.typed_decoder(target, code, col.flags, tz_default)
    return _strings(text, _timestamp_object(w) if code == C.T_TIMESTAMP else None)


def avro_value_decoder(col):
    """The Avro encoding's wire decoder of one column: its map value → the JSON protocol's
    string form, so one set of rules applies."""
    wrap = col.type_code in (C.T_BIT, C.T_SET) or (col.type_code == C.T_LONGLONG and col.flags & C.FLAG_UNSIGNED)
    bits = 32 if col.type_code == C.T_FLOAT else 64

    def normalise(v):
        if v is None or isinstance(v, (str, dict)):
            return v
        if isinstance(v, bool):
            raise V.ValueProblem("unexpected boolean value")
        if isinstance(v, int):
            return str(v & _MASK64 if wrap else v)   # TiCDC casts the uint64 to int64
        if isinstance(v, float):
            return V.format_float_plain(V.to_float32(v) if bits == 32 else v, bits)
        if isinstance(v, (bytes, bytearray)):
            return base64.b64encode(v).decode("ascii")
        raise V.ValueProblem(f"unexpected Avro value {type(v).__name__}")
    return normalise


def normalise_avro_value(col, v):
    """Avro map values → the JSON protocol's string forms (one value; see avro_value_decoder)."""
    return avro_value_decoder(col)(v)


class _SchemaPlan:
    """The decoders of one TableSchema for one output, compiled once: per column name its
    column (the first of that name) and wire decoder (the Avro encoding: avro_value_decoder;
    JSON: None), and per column the output's decoder: the text decoder (generic), or per
    target (in target order) the decoder of its column (None: the schema has none)."""
    __slots__ = ("columns", "text", "typed")

    def __init__(self, ts, cfg):
        avro = cfg.encoding == "avro"
        self.columns = {}
        for col in ts.columns:
            self.columns.setdefault(col.name, (col, avro_value_decoder(col) if avro else None))
        self.text = self.typed = None
        if cfg.targets is None:
            self.text = {name: text_decoder(col) for name, (col, _) in self.columns.items()}
        else:
            self.typed = [None if t.name not in self.columns else
                          typed_decoder(t, self.columns[t.name][0], cfg.timezone) for t in cfg.targets]


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
        self.plans = {}         # (database, table, version) -> TableSchema
        self.compiled = {}      # (database, table, version) -> its _SchemaPlan for this output
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
        plan = self._plan((m.database, m.table, m.schema_version))
        cfg = self.cfg
        images, faults = [], []
        for img, key, where in ((m.data, "data", m.data_at), (m.old, "old", m.old_at)):
            if img is None:
                images.append(None)
                continue
            try:
                images.append(self._image(m, img, key, where, plan, msg))
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
                row[key] = None if img is None else _entries(img, plan, msg, m)
        else:
            row["typed"] = dict(zip([t.name for t in cfg.targets],
                                    self._typed_image(after if after is not None else before, plan, msg, m)))
            if cfg.old_image and before is not None:
                row["_before"] = self._typed_image(before, plan, msg, m)
        self.rows.append(row)

    def _plan(self, key):
        """The compiled plan of a registered schema version (compiled when first used)."""
        plan = self.compiled.get(key)
        if plan is None:
            plan = self.compiled[key] = _SchemaPlan(self.plans[key], self.cfg)
        return plan

    def _image(self, m, img: dict, key: str, where, plan, msg: int) -> list:
        """One image's (column, value, place of the value): every member a column of the schema
        version (its wire value through the column's wire decoder); a JSON TIMESTAMP object of
        the {location, value} shape."""
        out = []
        columns = plan.columns
        for name, v in img.items():
            # byte offsets of the name and the value: the Avro reader records them; in JSON
            # they are found in the text when an error needs them (``at``: the path there)
            name_at, at = where[name] if where is not None else ((key, name), (key, name))
            got = columns.get(name)
            if got is None:
                raise DecodeError("column is not in the message's schema version", msg,
                                  _offset(m, name_at, name=True, first=True), column_name(name),
                                  part="value")
            col, wire = got
            if wire is not None:
                try:
                    v = wire(v)
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

    def _typed_image(self, image, plan, msg: int, m) -> list:
        """One image as the target columns' values, in target order, each through the decoder
        of its target's column."""
        img = {c.name: (c, v, at) for c, v, at in image}
        out = []
        for t, decode in zip(self.cfg.targets, plan.typed):
            got = img.get(t.name)
            if got is None or got[1] is None:
                out.append(None)
                continue
            try:
                out.append(decode(got[1]))
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
        return [old_image_column(self.cfg.targets, cols[f.name]) if f.name == C.COL_BEFORE_ROW
                else pa.array(cols[f.name], f.type) for f in fields], msg


def _entries(img, plan, msg: int, m) -> list:
    """Generic output: one image's (name, text) map entries, each value through its column's
    text decoder."""
    entries, text = [], plan.text
    for col, v, at in img:
        try:
            entries.append((col.name, None if v is None else text[col.name](v)))
        except V.ValueProblem as exc:
            raise DecodeError(str(exc), msg, _offset(m, at, v=v, col=col), column_name(col.name),
                              part="value") from None
    return entries


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
