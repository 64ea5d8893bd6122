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


def convert_typed(target, tcode: int, flags: int, v, tz: str):
    """Typed output: the value converted exactly to ``target.writer`` or ValueProblem."""
    if v is None:
        return None
    kind = C.TYPE_KIND[tcode]
    w = target.writer
    if kind == C.K_NULL:
        raise V.ValueProblem("type NULL with a non-null value")
    if w == C.W_STRING:
        if kind in (C.K_TEXT, C.K_BLOB) and flags & C.FLAG_BINARY:
            return V.value_text(_source_bytes(kind, flags, v))
        return render_text(tcode, flags, v)
    if w == C.W_BINARY:
        if kind in (C.K_TEXT, C.K_BLOB):
            return _source_bytes(kind, flags, v)
        if kind == C.K_JSONDOC and isinstance(v, str):
            return _raw(v)
        raise V.ValueProblem("cannot convert this column type to binary")
    if w in C.INT_WRITER_RANGE or w == C.W_BOOL:
        if kind in (C.K_INT, C.K_UINT, C.K_ENUM):
            i = _source_int(tcode, flags, v)
        elif kind == C.K_DECIMAL and isinstance(v, str):
            sign, digits, frac = V.parse_decimal(_raw(v))
            if digits % (10 ** frac):
                raise V.ValueProblem("decimal is not an integer")
            i = sign * (digits // 10 ** frac)
        else:
            raise V.ValueProblem("cannot convert this column type to an integer")
        if w == C.W_BOOL:
            if i not in (0, 1):
                raise V.ValueProblem("integer is not a boolean (0 or 1)")
            return bool(i)
        lo, hi = C.INT_WRITER_RANGE[w]
        if not lo <= i <= hi:
            raise V.ValueProblem("integer out of range for the target type")
        return i
    if w in (C.W_FLOAT32, C.W_FLOAT64):
        if kind in (C.K_FLOAT32, C.K_FLOAT64):
            x = _source_float(kind, v)
        elif kind in (C.K_INT, C.K_UINT, C.K_ENUM):
            i = _source_int(tcode, flags, v)
            x = float(i)
            if int(x) != i:
                raise V.ValueProblem("integer is not exact as a float")
        else:
            raise V.ValueProblem("cannot convert this column type to a float")
        if w == C.W_FLOAT32:
            try:
                x32 = V.to_float32(x)
            except V.ValueProblem:
                raise V.ValueProblem("value not exact as float32") from None
            if x32 != x:
                raise V.ValueProblem("value not exact as float32")
            return x32
        return x
    if w in (C.W_DECIMAL128, C.W_DECIMAL256):
        if kind in (C.K_INT, C.K_UINT, C.K_ENUM):
            text = str(_source_int(tcode, flags, v)).encode()
        elif kind == C.K_DECIMAL and isinstance(v, str):
            text = _raw(v)
        else:
            raise V.ValueProblem("cannot convert this column type to a decimal")
        return V.unscaled_to_decimal(V.decimal_unscaled(text, target.precision, target.scale),
                                     target.scale)
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string")
    if w == C.W_DATE32:
        if kind != C.K_DATE:
            raise V.ValueProblem("cannot convert this column type to a date")
        return V.parse_date_days(_raw(v))
    if w == C.W_TIMESTAMP:
        if kind in (C.K_DATE, C.K_DATETIME):
            return V.parse_datetime_us(_raw(v))
        if kind == C.K_TIMESTAMP:
            return wall_to_utc_us(tz, V.parse_datetime_us(_raw(v)))
        raise V.ValueProblem("cannot convert this column type to a timestamp")
    if w == C.W_DURATION:
        if kind != C.K_TIME:
            raise V.ValueProblem("cannot convert this column type to a duration")
        return V.parse_time_us(_raw(v))
    raise V.ValueProblem("unsupported target type")
