"""Source values → output values, once for every protocol's pure-Python twin.

A source value is what a protocol's reader hands over with its MySQL type code and flags: the
JSON value of the open and simple protocols (int, float, str — text keeps invalid UTF-8 as
surrogate escapes — or ``NEG_ZERO``) or the Avro protocol's value rendered to the same form.
``convert_typed`` turns it into a typed column's value exactly (``ValueProblem`` otherwise),
``render_text`` into the generic output's text.  The Cython core makes the same choices in
``src_cython/values``.
"""
from __future__ import annotations

import base64

from . import _constants as C
from . import values as V
from .timezones import wall_to_utc_us


class NegZero(int):
    """The JSON integer token ``-0``: 0 for integer columns, -0.0 for FLOAT/DOUBLE (Go writes
    a negative zero float as ``-0``; orjson would read it as plain 0)."""


NEG_ZERO = NegZero(0)


def _raw(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _value_text(s: str) -> str:
    """A column's text value (invalid UTF-8 kept as surrogate escapes) under the invalid_utf8
    policy."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        pass
    try:
        raw = _raw(s)
    except UnicodeEncodeError:   # a lone surrogate escape, not a byte: never UTF-8
        raise V.ValueProblem("invalid UTF-8 in a text value") from None
    return V.value_text(raw)


def _is_int(v) -> bool:
    return type(v) is int or type(v) is NegZero


# ----------------------------------------------------------------------------- values
def _int_range(tcode: int, flags: int) -> tuple[int, int]:
    kind = C.TYPE_KIND[tcode]
    if kind == C.K_UINT:
        return 0, (1 << 64) - 1
    if kind == C.K_ENUM:
        return 0, 65535
    return C.INT_RANGE[tcode][1 if flags & C.FLAG_UNSIGNED else 0]


def _source_int(tcode: int, flags: int, v) -> int:
    lo, hi = _int_range(tcode, flags)
    if _is_int(v):
        if not lo <= v <= hi:
            raise V.ValueProblem("integer out of range")
        return v
    if isinstance(v, str):
        return V.parse_int(_raw(v), lo, hi)
    raise V.ValueProblem("expected an integer")


def _source_float(kind: int, v) -> float:
    bits = 32 if kind == C.K_FLOAT32 else 64
    if isinstance(v, str):
        return V.parse_float_text(_raw(v), bits)
    if _is_int(v) or type(v) is float:
        try:
            x = -0.0 if type(v) is NegZero else float(v)
        except OverflowError:
            raise V.ValueProblem("number out of range") from None
        if x != x or x in (float("inf"), float("-inf")):
            raise V.ValueProblem("number out of range")
        return V.to_float32(x) if bits == 32 else x
    raise V.ValueProblem("expected a number")


def _source_bytes(kind: int, flags: int, v) -> bytes:
    """The raw bytes of a TEXT/BLOB-kind value."""
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string")
    if kind == C.K_BLOB:
        return V.b64decode_strict(_raw(v))
    if flags & C.FLAG_BINARY:
        return V.go_unquote_body(_raw(v))
    return _raw(v)


def render_text(tcode: int, flags: int, v) -> str | None:
    """Generic output: the value as text (see docs/open-protocol.md)."""
    if v is None:
        return None
    kind = C.TYPE_KIND[tcode]
    if kind in (C.K_INT, C.K_UINT, C.K_ENUM):
        if isinstance(v, str):
            return _value_text(v)
        return str(_source_int(tcode, flags, v))
    if kind in (C.K_FLOAT32, C.K_FLOAT64):
        if isinstance(v, str):
            return _value_text(v)
        return V.format_float(_source_float(kind, v), 32 if kind == C.K_FLOAT32 else 64)
    if kind in (C.K_TEXT, C.K_BLOB):
        b = _source_bytes(kind, flags, v)
        if flags & C.FLAG_BINARY:
            return base64.b64encode(b).decode("ascii")
        return V.value_text(b)
    if kind == C.K_NULL:
        raise V.ValueProblem("type NULL with a non-null value")
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string")
    return _value_text(v)


# ----------------------------------------------------------------------------- converters
# One per (column kind, target writer) pair, picked once per pair (pick_converter), as the core
# fills its table per target when a plan is compiled; each takes (target, tcode, flags, v, tz)
# and tests only the value itself.  Pairs that cannot succeed get their refusal.

def _integer_of_decimal(v) -> int:
    if not isinstance(v, str):
        raise V.ValueProblem("cannot convert this column type to an integer")
    sign, digits, frac = V.parse_decimal(_raw(v))
    if digits % (10 ** frac):
        raise V.ValueProblem("decimal is not an integer")
    return sign * (digits // 10 ** frac)


def _to_bool(i: int) -> bool:
    if i not in (0, 1):
        raise V.ValueProblem("integer is not a boolean (0 or 1)")
    return bool(i)


def _to_int(target, i: int) -> int:
    lo, hi = C.INT_WRITER_RANGE[target.writer]
    if not lo <= i <= hi:
        raise V.ValueProblem("integer out of range for the target type")
    return i


def _to_float(target, x: float) -> float:
    if target.writer == C.W_FLOAT32:
        try:
            x32 = V.to_float32(x)
        except V.ValueProblem:
            raise V.ValueProblem("value not exact as float32") from None
        if x32 != x:
            raise V.ValueProblem("value not exact as float32")
        return x32
    return x


def _float_of_integer(tcode, flags, v) -> float:
    i = _source_int(tcode, flags, v)
    x = float(i)
    if int(x) != i:
        raise V.ValueProblem("integer is not exact as a float")
    return x


def _to_decimal(target, text: bytes):
    return V.unscaled_to_decimal(V.decimal_unscaled(text, target.precision, target.scale), target.scale)


def _text_of(v) -> bytes:
    """The string a temporal target parses (checked before the column's kind is)."""
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string")
    return _raw(v)


def _string_from_bytes(target, tcode, flags, v, tz):
    if flags & C.FLAG_BINARY:
        return V.value_text(_source_bytes(C.TYPE_KIND[tcode], flags, v))
    return render_text(tcode, flags, v)


def _string_rendered(target, tcode, flags, v, tz):
    return render_text(tcode, flags, v)


def _binary_from_bytes(target, tcode, flags, v, tz):
    return _source_bytes(C.TYPE_KIND[tcode], flags, v)


def _binary_from_json(target, tcode, flags, v, tz):
    if not isinstance(v, str):
        raise V.ValueProblem("cannot convert this column type to binary")
    return _raw(v)


def _bool_from_integer(target, tcode, flags, v, tz):
    return _to_bool(_source_int(tcode, flags, v))


def _bool_from_decimal(target, tcode, flags, v, tz):
    return _to_bool(_integer_of_decimal(v))


def _int_from_integer(target, tcode, flags, v, tz):
    return _to_int(target, _source_int(tcode, flags, v))


def _int_from_decimal(target, tcode, flags, v, tz):
    return _to_int(target, _integer_of_decimal(v))


def _float_from_float(target, tcode, flags, v, tz):
    return _to_float(target, _source_float(C.TYPE_KIND[tcode], v))


def _float_from_integer(target, tcode, flags, v, tz):
    return _to_float(target, _float_of_integer(tcode, flags, v))


def _decimal_from_integer(target, tcode, flags, v, tz):
    return _to_decimal(target, str(_source_int(tcode, flags, v)).encode())


def _decimal_from_decimal(target, tcode, flags, v, tz):
    if not isinstance(v, str):
        raise V.ValueProblem("cannot convert this column type to a decimal")
    return _to_decimal(target, _raw(v))


def _date_from_date(target, tcode, flags, v, tz):
    return V.parse_date_days(_text_of(v))


def _timestamp_from_wall(target, tcode, flags, v, tz):
    wall = V.parse_datetime_us(_text_of(v))
    return wall_to_utc_us(tz, wall) if C.TYPE_KIND[tcode] == C.K_TIMESTAMP else wall


def _duration_from_time(target, tcode, flags, v, tz):
    return V.parse_time_us(_text_of(v))


def _refusal(why: str, text_first: bool = False):
    def refuse(target, tcode, flags, v, tz):
        if text_first:
            _text_of(v)
        raise V.ValueProblem(why)
    return refuse


_REFUSE_NULL = _refusal("type NULL with a non-null value")
_REFUSE_BINARY = _refusal("cannot convert this column type to binary")
_REFUSE_INT = _refusal("cannot convert this column type to an integer")
_REFUSE_FLOAT = _refusal("cannot convert this column type to a float")
_REFUSE_DECIMAL = _refusal("cannot convert this column type to a decimal")
_REFUSE_DATE = _refusal("cannot convert this column type to a date", text_first=True)
_REFUSE_TIMESTAMP = _refusal("cannot convert this column type to a timestamp", text_first=True)
_REFUSE_DURATION = _refusal("cannot convert this column type to a duration", text_first=True)
_UNSUPPORTED = _refusal("unsupported target type", text_first=True)

_INTEGER_KINDS = (C.K_INT, C.K_UINT, C.K_ENUM)


def pick_converter(w: int, kind: int):
    """The converter of a column of this kind into a target of this writer."""
    integer = kind in _INTEGER_KINDS
    raw = kind in (C.K_TEXT, C.K_BLOB)
    if kind == C.K_NULL:
        return _REFUSE_NULL
    if w == C.W_STRING:
        return _string_from_bytes if raw else _string_rendered
    if w == C.W_BINARY:
        return _binary_from_bytes if raw else (_binary_from_json if kind == C.K_JSONDOC else _REFUSE_BINARY)
    if w == C.W_BOOL:
        return _bool_from_integer if integer else (_bool_from_decimal if kind == C.K_DECIMAL else _REFUSE_INT)
    if w in C.INT_WRITER_RANGE:
        return _int_from_integer if integer else (_int_from_decimal if kind == C.K_DECIMAL else _REFUSE_INT)
    if w in (C.W_FLOAT32, C.W_FLOAT64):
        if kind in (C.K_FLOAT32, C.K_FLOAT64):
            return _float_from_float
        return _float_from_integer if integer else _REFUSE_FLOAT
    if w in (C.W_DECIMAL128, C.W_DECIMAL256):
        return _decimal_from_integer if integer else (_decimal_from_decimal if kind == C.K_DECIMAL else _REFUSE_DECIMAL)
    if w == C.W_DATE32:
        return _date_from_date if kind == C.K_DATE else _REFUSE_DATE
    if w == C.W_TIMESTAMP:
        return _timestamp_from_wall if kind in (C.K_DATE, C.K_DATETIME, C.K_TIMESTAMP) else _REFUSE_TIMESTAMP
    if w == C.W_DURATION:
        return _duration_from_time if kind == C.K_TIME else _REFUSE_DURATION
    return _UNSUPPORTED


# every (writer, kind) pair, picked once at import: kinds 0 (unknown code) .. K_ENUM
_CONVERTERS = {(w, kind): pick_converter(w, kind)
               for w in range(0, C.W_BINARY + 2) for kind in range(0, C.K_ENUM + 1)}


def convert_typed(target, tcode: int, flags: int, v, tz: str):
    """Typed output: the value converted exactly to ``target.writer`` or ValueProblem."""
    if v is None:
        return None
    w, kind = target.writer, C.TYPE_KIND[tcode]
    fn = _CONVERTERS.get((w, kind)) or pick_converter(w, kind)
    return fn(target, tcode, flags, v, tz)
