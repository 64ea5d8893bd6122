"""Source values → output values, once for every protocol's pure-Python twin.

A source value is what a protocol's reader hands over for a column of a MySQL type code and
flags: the JSON value of the open and simple protocols (int, float, str — text keeps invalid
UTF-8 as surrogate escapes — or ``NEG_ZERO``) or the Avro protocol's value read to the same form.

Each output column gets one decoder, chosen once when a protocol's twin compiles its plan for a
(table, schema version, output layout), as the core compiles its plans: ``typed_decoder`` (the
column's TiDB type and flags into a typed target's value, exactly, or ``ValueProblem``) and
``text_decoder`` (the generic output's text).  A decoder takes a non-null value: a null is the
protocol's null entry.  ``Decoders`` memoises them per (target, type, flags) for the open
protocol, whose wire carries a column's type with every message.  The Cython core makes the
same choices in ``src_cython/values`` and ``plan/``.
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


# ----------------------------------------------------------------------------- source readers
# Each is chosen once for a column and reads its source value as the column's TiDB type has it.

def _int_reader(tcode: int, flags: int):
    """The column's integer: a JSON integer in the type's range, or a string of one."""
    kind = C.TYPE_KIND[tcode]
    if kind == C.K_UINT:
        lo, hi = 0, (1 << 64) - 1
    elif kind == C.K_ENUM:
        lo, hi = 0, 65535
    else:
        lo, hi = C.INT_RANGE[tcode][1 if flags & C.FLAG_UNSIGNED else 0]

    def source_int(v) -> int:
        if type(v) is int or type(v) is NegZero:
            if not lo <= v <= hi:
                raise V.ValueProblem("integer out of range")
            return v
        if isinstance(v, str):
            return V.parse_int(_raw(v), lo, hi)
        raise V.ValueProblem("expected an integer")
    return source_int


def _float_reader(kind: int):
    """The column's float (FLOAT: float32-rounded): a JSON number, or a string of one."""
    bits = 32 if kind == C.K_FLOAT32 else 64

    def source_float(v) -> float:
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
    return source_float


def _bytes_reader(kind: int, flags: int):
    """The raw bytes of a TEXT/BLOB-kind value: base64 (BLOB), Go-quoted (binary) or the text."""
    if kind == C.K_BLOB:
        unpack = V.b64decode_strict
    elif flags & C.FLAG_BINARY:
        unpack = V.go_unquote_body
    else:
        unpack = None

    def source_bytes(v) -> bytes:
        if not isinstance(v, str):
            raise V.ValueProblem("expected a string")
        return _raw(v) if unpack is None else unpack(_raw(v))
    return source_bytes


def _unknown_type(tcode: int):
    def refuse(v):
        return C.TYPE_KIND[tcode]       # a code no table knows: the KeyError of a lookup
    return refuse


def _refuse_with(why: str, text_first: bool = False):
    def refuse(v):
        if text_first:
            _text_of(v)
        raise V.ValueProblem(why)
    return refuse


# ----------------------------------------------------------------------------- generic text
def text_decoder(tcode: int, flags: int):
    """Generic output: the decoder of a column of this type, a value → its text (see
    docs/open-protocol.md)."""
    kind = C.TYPE_KIND.get(tcode)
    if kind is None:
        return _unknown_type(tcode)
    if kind in _INTEGER_KINDS or kind in _FLOAT_KINDS:
        if kind in _INTEGER_KINDS:
            source, text = _int_reader(tcode, flags), str
        else:
            bits = 32 if kind == C.K_FLOAT32 else 64
            source, text = _float_reader(kind), lambda x: V.format_float(x, bits)

        def render_number(v) -> str:
            return _value_text(v) if isinstance(v, str) else text(source(v))
        return render_number
    if kind in (C.K_TEXT, C.K_BLOB):
        source = _bytes_reader(kind, flags)
        if flags & C.FLAG_BINARY:
            return lambda v: base64.b64encode(source(v)).decode("ascii")
        return lambda v: V.value_text(source(v))
    if kind == C.K_NULL:
        return _refuse_with("type NULL with a non-null value")

    def render_string(v) -> str:
        if not isinstance(v, str):
            raise V.ValueProblem("expected a string")
        return _value_text(v)
    return render_string


# ----------------------------------------------------------------------------- typed targets
# One factory per (column kind, target writer) pair, picked by _factory; each makes the decoder
# of one column from (target, type code, flags, kind, time zone), which then tests only the
# value itself.  Pairs that cannot succeed get their refusal.

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


def _text_of(v) -> bytes:
    """The string a temporal target parses (checked before the column's kind is)."""
    if not isinstance(v, str):
        raise V.ValueProblem("expected a string")
    return _raw(v)


def _in_target(target, source):
    """``source``'s integer, in the range of the target's integer writer."""
    lo, hi = C.INT_WRITER_RANGE[target.writer]

    def to_int(v) -> int:
        i = source(v)
        if not lo <= i <= hi:
            raise V.ValueProblem("integer out of range for the target type")
        return i
    return to_int


def _as_target_float(target, source):
    """``source``'s float, exact as the target's float type."""
    if target.writer != C.W_FLOAT32:
        return source

    def to_float32(v) -> float:
        x = source(v)
        try:
            x32 = V.to_float32(x)
        except V.ValueProblem:
            raise V.ValueProblem("value not exact as float32") from None
        if x32 != x:
            raise V.ValueProblem("value not exact as float32")
        return x32
    return to_float32


def _as_decimal(target, text_of):
    precision, scale = target.precision, target.scale
    return lambda v: V.unscaled_to_decimal(V.decimal_unscaled(text_of(v), precision, scale), scale)


def _exact_float(source):
    def float_of_integer(v) -> float:
        i = source(v)
        x = float(i)
        if int(x) != i:
            raise V.ValueProblem("integer is not exact as a float")
        return x
    return float_of_integer


def _decimal_text(v) -> bytes:
    if not isinstance(v, str):
        raise V.ValueProblem("cannot convert this column type to a decimal")
    return _raw(v)


def _binary_of_json(v) -> bytes:
    if not isinstance(v, str):
        raise V.ValueProblem("cannot convert this column type to binary")
    return _raw(v)


def _string_of_bytes(target, tcode, flags, kind, tz):
    if flags & C.FLAG_BINARY:
        source = _bytes_reader(kind, flags)
        return lambda v: V.value_text(source(v))
    return text_decoder(tcode, flags)


def _timestamp_of_wall(target, tcode, flags, kind, tz):
    if kind == C.K_TIMESTAMP:
        return lambda v: wall_to_utc_us(tz, V.parse_datetime_us(_text_of(v)))
    return lambda v: V.parse_datetime_us(_text_of(v))


def _refusal(why: str, text_first: bool = False):
    refuse = _refuse_with(why, text_first)
    return lambda target, tcode, flags, kind, tz: refuse


def _fixed(fn):
    return lambda target, tcode, flags, kind, tz: fn


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
_FLOAT_KINDS = (C.K_FLOAT32, C.K_FLOAT64)


def _string_rendered(target, tcode, flags, kind, tz):
    return text_decoder(tcode, flags)


def _binary_of_bytes(target, tcode, flags, kind, tz):
    return _bytes_reader(kind, flags)


def _bool_of_integer(target, tcode, flags, kind, tz):
    source = _int_reader(tcode, flags)
    return lambda v: _to_bool(source(v))


def _int_of_integer(target, tcode, flags, kind, tz):
    return _in_target(target, _int_reader(tcode, flags))


def _int_of_decimal(target, tcode, flags, kind, tz):
    return _in_target(target, _integer_of_decimal)


def _float_of_float(target, tcode, flags, kind, tz):
    return _as_target_float(target, _float_reader(kind))


def _float_of_integer(target, tcode, flags, kind, tz):
    return _as_target_float(target, _exact_float(_int_reader(tcode, flags)))


def _decimal_of_integer(target, tcode, flags, kind, tz):
    source = _int_reader(tcode, flags)
    return _as_decimal(target, lambda v: str(source(v)).encode())


def _decimal_of_decimal(target, tcode, flags, kind, tz):
    return _as_decimal(target, _decimal_text)


def _factory(w: int, kind: int):
    """The decoder factory of a column of this kind into a target of this writer."""
    integer = kind in _INTEGER_KINDS
    raw = kind in (C.K_TEXT, C.K_BLOB)
    if kind == C.K_NULL:
        return _REFUSE_NULL
    if w == C.W_STRING:
        return _string_of_bytes if raw else _string_rendered
    if w == C.W_BINARY:
        return _binary_of_bytes if raw else (_fixed(_binary_of_json) if kind == C.K_JSONDOC else _REFUSE_BINARY)
    if w == C.W_BOOL:
        return _bool_of_integer if integer else (
            _fixed(lambda v: _to_bool(_integer_of_decimal(v))) if kind == C.K_DECIMAL else _REFUSE_INT)
    if w in C.INT_WRITER_RANGE:
        return _int_of_integer if integer else (_int_of_decimal if kind == C.K_DECIMAL else _REFUSE_INT)
    if w in (C.W_FLOAT32, C.W_FLOAT64):
        if kind in _FLOAT_KINDS:
            return _float_of_float
        return _float_of_integer if integer else _REFUSE_FLOAT
    if w in (C.W_DECIMAL128, C.W_DECIMAL256):
        return _decimal_of_integer if integer else (_decimal_of_decimal if kind == C.K_DECIMAL else _REFUSE_DECIMAL)
    if w == C.W_DATE32:
        return _fixed(lambda v: V.parse_date_days(_text_of(v))) if kind == C.K_DATE else _REFUSE_DATE
    if w == C.W_TIMESTAMP:
        return _timestamp_of_wall if kind in (C.K_DATE, C.K_DATETIME, C.K_TIMESTAMP) else _REFUSE_TIMESTAMP
    if w == C.W_DURATION:
        return _fixed(lambda v: V.parse_time_us(_text_of(v))) if kind == C.K_TIME else _REFUSE_DURATION
    return _UNSUPPORTED


def typed_decoder(target, tcode: int, flags: int, tz: str):
    """Typed output: the decoder of a column of this type into ``target`` (a value → the
    target's value, exactly, or ValueProblem); ``tz``: the TiCDC server's time zone, for
    TIMESTAMP columns."""
    kind = C.TYPE_KIND.get(tcode)
    if kind is None:
        return _unknown_type(tcode)
    return _factory(target.writer, kind)(target, tcode, flags, kind, tz)


class Decoders:
    """The column decoders of one output layout for a protocol whose wire carries a column's
    type with each message (the open protocol): a decoder is chosen the first time its
    (target, type code, flags) is met, then reused."""
    __slots__ = ("targets", "names", "tz", "typed", "text")

    def __init__(self, targets, tz: str):
        self.targets, self.tz = targets, tz
        self.names = frozenset(t.name for t in targets or ())     # the targets' column names
        self.typed, self.text = {}, {}

    def typed_for(self, j: int, tcode: int, flags: int):
        """The decoder of target ``j`` for a column of this type."""
        key = (j, tcode, flags)
        dec = self.typed.get(key)
        if dec is None:
            dec = self.typed[key] = typed_decoder(self.targets[j], tcode, flags, self.tz)
        return dec

    def text_for(self, tcode: int, flags: int):
        """The generic text decoder of a column of this type."""
        key = (tcode, flags)
        dec = self.text.get(key)
        if dec is None:
            dec = self.text[key] = text_decoder(tcode, flags)
        return dec
