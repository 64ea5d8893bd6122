"""Value semantics shared by every protocol, in pure Python.

This module *defines* behaviour: the reference twin calls it directly, and the Cython core
re-implements each function over raw bytes; tests run both on the same inputs.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import math
import re
import struct
from decimal import Decimal
from fractions import Fraction

_INT_RE = re.compile(rb"-?(?:0|[1-9][0-9]*)\Z")
_DECIMAL_RE = re.compile(rb"(-?)([0-9]+)(?:\.([0-9]+))?\Z")
_DATE_RE = re.compile(rb"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_DATETIME_RE = re.compile(rb"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?\Z")
_TIME_RE = re.compile(rb"(-?)([0-9]{1,3}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?\Z")
_TIME_HEAD_RE = re.compile(rb"-?([0-9]{1,3}):([0-9]{2}):([0-9]{2})")
_B64_RE = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z")

_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class ValueProblem(Exception):
    """Raised by these helpers; the decoders turn it into DecodeError with position and column."""


# ---------------------------------------------------------------- integers
def parse_int(text: bytes, lo: int, hi: int) -> int:
    if not _INT_RE.match(text):
        raise ValueProblem("invalid integer")
    v = int(text)
    if not lo <= v <= hi:
        raise ValueProblem("integer out of range")
    return v


# ---------------------------------------------------------------- floats
def _go_format(digits: str, exp10: int, negative: bool) -> str:
    """Format shortest ``digits`` (no leading/trailing zeros) with decimal exponent ``exp10``
    (value = 0.d1d2... × 10^exp10) the way Go's encoding/json does: plain notation unless the
    magnitude is < 1e-6 or >= 1e21, then ``d.ddde±X`` without exponent zero padding."""
    sign = "-" if negative else ""
    sci_exp = exp10 - 1  # value = d1.d2... × 10^sci_exp
    if sci_exp < -6 or sci_exp >= 21:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if sci_exp < 0 else '+'}{abs(sci_exp)}"
    if exp10 <= 0:
        return f"{sign}0.{'0' * (-exp10)}{digits}"
    if exp10 >= len(digits):
        return f"{sign}{digits}{'0' * (exp10 - len(digits))}"
    return f"{sign}{digits[:exp10]}.{digits[exp10:]}"


def _reads_back_as_float32(d: Decimal, ax: float) -> bool:
    """Does the decimal ``d`` round to the float32 ``ax`` (> 0) when rounded directly to float32,
    as Go's ParseFloat(s, 32) does?  Reading it as a float64 first can go wrong only when that
    float64 lands exactly on a midpoint between two float32s; then the interval is compared
    exactly."""
    try:
        v = float(d)
        f = to_float32(v)
    except ValueProblem:
        return False
    if f == v:
        return f == ax
    (b,) = struct.unpack("<I", struct.pack("<f", f))
    other = b + 1 if v > f else b - 1
    if other < 0x7F800000 and v != (f + struct.unpack("<f", struct.pack("<I", other))[0]) / 2:
        return f == ax
    (b,) = struct.unpack("<I", struct.pack("<f", ax))
    x = Fraction(ax)
    below = Fraction(struct.unpack("<f", struct.pack("<I", b - 1))[0])
    above = x + (x - below) if b == 0x7F7FFFFF else Fraction(struct.unpack("<f", struct.pack("<I", b + 1))[0])
    lo, hi, q = (below + x) / 2, (x + above) / 2, Fraction(d)
    return lo < q < hi or (b % 2 == 0 and (q == lo or q == hi))   # ties go to the even significand


def _shortest_digits(x: float, bits: int) -> tuple[str, int]:
    """Shortest decimal digits that round-trip ``x`` at ``bits`` width (the closest such digits
    when several have that length), and the exponent such that x = 0.digits × 10^exp.

    At a power of two the rounding interval is wider above than below, so the nearest p-digit
    decimal may miss it while its upper neighbour fits: both are tried, as Go's Ryu does."""
    ax = abs(x)
    if bits == 64:
        mant, _, e = repr(ax).partition("e")   # CPython's repr is the shortest, closest digits
        intpart, _, frac = mant.partition(".")
        digits, exp = intpart + frac, (int(e) if e else 0) + len(intpart)
    else:
        for p in range(1, 10):
            s = f"{ax:.{p - 1}e}"
            cands = [Decimal(s)]
            q = Decimal(1).scaleb(int(s.partition("e")[2]) - p + 1)
            cands += [cands[0] + q, cands[0] - q]
            # the correctly rounded (half-even, as Go) first, then the upper, then the lower neighbour
            ok = [c for c in cands if c > 0 and _reads_back_as_float32(c, ax)]
            if ok:
                best = ok[0]
                t = best.as_tuple()
                digits = "".join(map(str, t.digits))
                exp = t.exponent + len(digits)
                break
    stripped = digits.lstrip("0")
    exp -= len(digits) - len(stripped)
    return stripped.rstrip("0"), exp


def float_text(x: float, bits: int, plain: bool = False) -> str:
    """The shortest text that reads back as x at this width (a float32 value when bits == 32):
    Go's strconv form (an exponent for very large or small values), or plain, never an exponent;
    a negative zero is "-0".  The core's ``float_text``."""
    if math.isnan(x) or math.isinf(x):
        raise ValueProblem("NaN or infinite float")
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    digits, exp = _shortest_digits(x, bits)
    if not plain:
        return _go_format(digits, exp, x < 0)
    sign = "-" if x < 0 else ""
    if exp <= 0:
        return f"{sign}0.{'0' * (-exp)}{digits}"
    if exp >= len(digits):
        return f"{sign}{digits}{'0' * (exp - len(digits))}"
    return f"{sign}{digits[:exp]}.{digits[exp:]}"


def format_float(x: float, bits: int) -> str:
    """Shortest round-trip text for a float32 (bits=32) or float64 value, Go encoding/json style."""
    return float_text(x, bits)


def format_float_plain(x: float, bits: int) -> str:
    """Go ``strconv.FormatFloat(x, 'f', -1, bits)``: shortest round-trip digits, never an exponent
    (the simple protocol's float text)."""
    return float_text(x, bits, plain=True)


def to_float32(x: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        raise ValueProblem("float out of float32 range") from None


_JSON_NUMBER_RE = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def parse_float_text(text: bytes, bits: int) -> float:
    """Parse a numeric string the way the core does (JSON number grammar)."""
    if not _JSON_NUMBER_RE.match(text):
        raise ValueProblem("invalid number")
    v = float(text)
    if math.isinf(v):
        raise ValueProblem("number out of range")
    return to_float32(v) if bits == 32 else v


# ---------------------------------------------------------------- decimals
def parse_decimal(text: bytes) -> tuple[int, int, int]:
    """MyDecimal text → (sign, digits-as-int, number of fraction digits)."""
    m = _DECIMAL_RE.match(text)
    if not m:
        raise ValueProblem("invalid decimal")
    neg, ip, fp = m.group(1), m.group(2), m.group(3) or b""
    return (-1 if neg else 1), int(ip + fp), len(fp)


def decimal_unscaled(text: bytes, precision: int, scale: int) -> int:
    sign, digits, frac = parse_decimal(text)
    if frac > scale:
        drop = 10 ** (frac - scale)
        if digits % drop:
            raise ValueProblem("decimal does not fit the target scale exactly")
        digits //= drop
    else:
        digits *= 10 ** (scale - frac)
    if digits >= 10 ** precision:
        raise ValueProblem("decimal exceeds the target precision")
    return sign * digits


def unscaled_to_decimal(unscaled: int, scale: int) -> Decimal:
    # Built from its digits: Decimal arithmetic would round to the context's 28 digits.
    sign = 1 if unscaled < 0 else 0
    return Decimal((sign, tuple(int(d) for d in str(abs(unscaled))), -scale))


# ---------------------------------------------------------------- temporal
def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _check_date(y: int, m: int, d: int, text: bytes) -> None:
    if y == 0 or m == 0 or d == 0:
        raise ValueProblem("zero date has no exact value")
    if m > 12:
        raise ValueProblem("invalid date")
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if d > _DAYS_IN_MONTH[m - 1] + (1 if m == 2 and leap else 0):
        raise ValueProblem("invalid date")


def _frac_us(f: bytes | None) -> int:
    return int((f or b"").ljust(6, b"0"))


def parse_date_days(text: bytes) -> int:
    m = _DATE_RE.match(text)
    if not m:
        raise ValueProblem("invalid date")
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    _check_date(y, mo, d, text)
    return _days_from_civil(y, mo, d)


def _two(text: bytes, at: int) -> int:
    """Two ASCII digits at ``at`` as a number, -1 if they are not."""
    a, b = text[at:at + 1], text[at + 1:at + 2]
    return int(a + b) if a.isdigit() and b.isdigit() else -1


def parse_datetime_us(text: bytes) -> int:
    """'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' → µs since 1970-01-01 on the same (naive) clock.  The
    checks run in the core's order, so a bad value gets the core's reason."""
    if len(text) == 10:
        return parse_date_days(text) * 86_400_000_000
    if len(text) < 19 or text[10:11] != b" " or text[13:14] != b":" or text[16:17] != b":":
        raise ValueProblem("invalid datetime")
    days = parse_date_days(text[:10])
    hh, mi, ss = _two(text, 11), _two(text, 14), _two(text, 17)
    if hh < 0 or mi < 0 or ss < 0:
        raise ValueProblem("invalid datetime")
    if hh > 23 or mi > 59 or ss > 59:
        raise ValueProblem("invalid time of day")
    frac = text[19:]
    if frac and not re.fullmatch(rb"\.[0-9]{1,6}", frac):
        raise ValueProblem("invalid datetime")
    return (days * 86400 + hh * 3600 + mi * 60 + ss) * 1_000_000 + _frac_us(frac[1:] or None)


def parse_time_us(text: bytes) -> int:
    m = _TIME_RE.match(text)
    if not m:
        head = _TIME_HEAD_RE.match(text)       # the core judges the range before the fraction
        if head and (int(head.group(1)) > 838 or int(head.group(2)) > 59 or int(head.group(3)) > 59):
            raise ValueProblem("time out of range")
        raise ValueProblem("invalid time")
    hh, mi, ss = int(m.group(2)), int(m.group(3)), int(m.group(4))
    if hh > 838 or mi > 59 or ss > 59:
        raise ValueProblem("time out of range")
    us = (hh * 3600 + mi * 60 + ss) * 1_000_000 + _frac_us(m.group(5))
    return -us if m.group(1) else us


# ---------------------------------------------------------------- bytes
def b64decode_strict(text: bytes) -> bytes:
    """Standard base64 with padding, canonical (zero pad bits) — what Go's []byte marshalling emits."""
    if not _B64_RE.match(text):
        raise ValueProblem("invalid base64")
    out = binascii.a2b_base64(text)
    if base64.b64encode(out) != text:
        raise ValueProblem("invalid base64 (non-zero padding bits)")
    return out


_SIMPLE_ESC = {ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13,
               ord("t"): 9, ord("v"): 11, ord("\\"): 92, ord('"'): 34}
_HEX = b"0123456789abcdefABCDEF"


def go_unquote_body(s: bytes) -> bytes:
    """Invert Go ``strconv.Quote`` (without the surrounding quotes) to the original bytes."""
    if b"\\" not in s:
        if b'"' in s or b"\n" in s:
            raise ValueProblem("invalid Go-quoted string (raw quote or newline)")
        return s
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != 0x5C:
            if c == 0x22 or c == 0x0A:
                raise ValueProblem("invalid Go-quoted string (raw quote or newline)")
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueProblem("invalid Go escape at end of string")
        e = s[i + 1]
        if e in _SIMPLE_ESC:
            out.append(_SIMPLE_ESC[e])
            i += 2
        elif e == 0x78:  # \xHH
            h = s[i + 2:i + 4]
            if len(h) != 2 or any(ch not in _HEX for ch in h):
                raise ValueProblem("invalid \\x escape")
            out.append(int(h, 16))
            i += 4
        elif 0x30 <= e <= 0x37:  # \NNN octal
            o = s[i + 1:i + 4]
            if len(o) != 3 or any(not 0x30 <= ch <= 0x37 for ch in o) or int(o, 8) > 255:
                raise ValueProblem("invalid octal escape")
            out.append(int(o, 8))
            i += 4
        elif e in (0x75, 0x55):  # \uHHHH, \UHHHHHHHH
            width = 4 if e == 0x75 else 8
            h = s[i + 2:i + 2 + width]
            if len(h) != width or any(ch not in _HEX for ch in h):
                raise ValueProblem("invalid \\u escape")
            cp = int(h, 16)
            if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                raise ValueProblem("invalid rune in \\u escape")
            out += chr(cp).encode("utf-8")
            i += 2 + width
        else:
            raise ValueProblem("invalid Go escape")
    return bytes(out)


# ---------------------------------------------------------------- text of a column
INVALID_UTF8_CHOICES = ("replace", "error")


def check_invalid_utf8(choice: str) -> str:
    if choice not in INVALID_UTF8_CHOICES:
        raise ValueError(f"invalid_utf8 must be 'replace' or 'error', not {choice!r}")
    return choice


class TextPolicy:
    """A decoder's ``invalid_utf8`` choice and the number of text values it replaced so far.

    TiDB stores invalid UTF-8 in utf8mb4 columns when its UTF-8 check is off, and TiCDC forwards
    the bytes; ``replace`` makes each maximal ill-formed subpart U+FFFD (Python's
    ``errors="replace"``), ``error`` raises."""
    __slots__ = ("strict", "replaced")

    def __init__(self, choice: str = "replace"):
        self.strict = check_invalid_utf8(choice) == "error"
        self.replaced = 0


# The policy of the decode() call running in this context (front ends set it around the twin);
# without one, text must be UTF-8.
_current_policy: contextvars.ContextVar[TextPolicy] = contextvars.ContextVar(
    "ticdc_fast_text_policy", default=TextPolicy("error"))


def enter_text_policy(policy: TextPolicy) -> contextvars.Token:
    """Make ``policy`` the current one; give the token to ``leave_text_policy`` (the plain pair
    is what a decode call uses: a context manager's generator costs more on every batch)."""
    return _current_policy.set(policy)


def leave_text_policy(token: contextvars.Token) -> None:
    _current_policy.reset(token)


@contextlib.contextmanager
def text_policy(policy: TextPolicy):
    token = enter_text_policy(policy)
    try:
        yield policy
    finally:
        leave_text_policy(token)


def value_text(b: bytes) -> str:
    """The bytes of a column's text value as a string, under the current ``invalid_utf8`` policy."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        policy = _current_policy.get()
        if policy.strict:
            raise ValueProblem("invalid UTF-8 in a text value") from None
        policy.replaced += 1
        return b.decode("utf-8", "replace")
