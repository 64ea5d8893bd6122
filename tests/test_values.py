"""Unit tests of ``ticdc_fast.values``: the value semantics both implementations share."""
from __future__ import annotations

import base64
import datetime as dt
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_fast import values as V
from ticdc_fast.values import ValueProblem

EPOCH = dt.datetime(1970, 1, 1)


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def us_since_epoch(*args) -> int:
    delta = dt.datetime(*args) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# ----------------------------------------------------------------------------- floats
@pytest.mark.parametrize("x, bits, text", [
    (1e-7, 64, "1e-7"),
    (1e21, 64, "1e+21"),
    (1e20, 64, "100000000000000000000"),
    (0.1 + 0.2, 64, "0.30000000000000004"),
    (-0.0, 64, "-0"),
    (0.0, 64, "0"),
    (-0.0, 32, "-0"),
    (1.0, 64, "1"),
    (100.0, 64, "100"),
    (-1.5, 64, "-1.5"),
    (153.123, 64, "153.123"),
    (f32(153.123), 32, "153.123"),
    (f32(0.1), 32, "0.1"),
    (f32(1e-7), 32, "1e-7"),
    (f32(9.999999e-07), 32, "9.999999e-7"),
    (f32(16777216.0), 32, "16777216"),
    (f32(3.4028234663852886e38), 32, "3.4028235e+38"),
    (f32(1.401298464324817e-45), 32, "1e-45"),
    (1e-6, 64, "0.000001"),
    (1.5e-6, 64, "0.0000015"),
    (9.99e-7, 64, "9.99e-7"),
    (123456789.0, 64, "123456789"),
    (1.7976931348623157e308, 64, "1.7976931348623157e+308"),
    (5e-324, 64, "5e-324"),
    (-2.5e-10, 64, "-2.5e-10"),
    (999999999999999900000.0, 64, "999999999999999900000"),
    (12345.678, 64, "12345.678"),
])
def test_format_float_go_style(x, bits, text):
    assert V.format_float(x, bits) == text


@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("bits", [32, 64])
def test_format_float_rejects_non_finite(x, bits):
    with pytest.raises(ValueProblem):
        V.format_float(x, bits)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_float64_round_trips(x):
    s = V.format_float(x, 64)
    assert float(s) == x
    assert math.copysign(1.0, float(s)) == math.copysign(1.0, x)
    # Go style: plain notation exactly when 1e-6 <= |x| < 1e21 (or x == 0).
    plain = x == 0 or 1e-6 <= abs(x) < 1e21
    assert ("e" in s) == (not plain), s
    if "e" in s:
        exp = s.split("e")[1]
        assert exp[0] in "+-" and (exp[1:] == "0" or not exp[1:].startswith("0")), s


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_format_float32_round_trips_shortest(x):
    s = V.format_float(x, 32)
    assert f32(float(s)) == x
    digits = s.lstrip("-").split("e")[0].replace(".", "").strip("0")
    # Shortest: never more than 9 significant digits for a float32.
    assert len(digits) <= 9, s


def test_to_float32():
    assert V.to_float32(153.123) == f32(153.123)
    with pytest.raises(ValueProblem):
        V.to_float32(1e39)


@pytest.mark.parametrize("text, bits, value", [
    (b"1", 64, 1.0), (b"-0.5", 64, -0.5), (b"1e-7", 64, 1e-7), (b"1E+21", 64, 1e21),
    (b"153.123", 32, f32(153.123)),
])
def test_parse_float_text(text, bits, value):
    assert V.parse_float_text(text, bits) == value


@pytest.mark.parametrize("text", [b"", b"+1", b"1.", b".5", b"01", b"NaN", b"inf", b"1e999", b"0x10", b" 1"])
def test_parse_float_text_rejects(text):
    with pytest.raises(ValueProblem):
        V.parse_float_text(text, 64)


# ----------------------------------------------------------------------------- integers
def test_parse_int():
    assert V.parse_int(b"-128", -128, 127) == -128
    assert V.parse_int(b"18446744073709551615", 0, (1 << 64) - 1) == (1 << 64) - 1
    for bad in (b"128", b"-129"):
        with pytest.raises(ValueProblem):
            V.parse_int(bad, -128, 127)
    for bad in (b"", b"01", b"+1", b"1.0", b"1e3", b"-", b" 1", b"-0x1"):
        with pytest.raises(ValueProblem):
            V.parse_int(bad, -(1 << 63), (1 << 63) - 1)


# ----------------------------------------------------------------------------- Go unquote
@pytest.mark.parametrize("body, raw", [
    (b"", b""),
    (b"plain text", b"plain text"),
    (rb"\x89PNG\r\n\x1a\n", bytes.fromhex("89504e470d0a1a0a")),
    (rb"\a\b\f\n\r\t\v\\\"", b"\x07\x08\x0c\x0a\x0d\x09\x0b\\\""),
    (rb"\x00\xff\xAB\xaB", b"\x00\xff\xab\xab"),
    (rb"\101\102\000\377", b"AB\x00\xff"),
    (rb"\u263a", "\u263a".encode()),
    (rb"\u00ad\u200b\ufeff", "\u00ad\u200b\ufeff".encode()),
    (rb"\U0001F600", "\U0001F600".encode()),
    (rb"\U0010ffff", "\U0010ffff".encode()),
    ("caf\u00e9 \u263a".encode(), "caf\u00e9 \u263a".encode()),  # printable UTF-8 passes through
    (b"it's", b"it's"),
    (b"tab\there", b"tab\there"),  # a raw tab is legal inside a Go string literal
    (rb"\x00\x00\x00", b"\x00\x00\x00"),  # BINARY(n) right padding
])
def test_go_unquote_body(body, raw):
    assert V.go_unquote_body(body) == raw


@pytest.mark.parametrize("body", [
    rb"\q", rb"\x4", rb"\x", rb"\xZZ", rb"\x4g", b"\\", b"abc\\",
    rb"\400", rb"\18", rb"\1", rb"\12",
    rb"\u12", rb"\u12G4", rb"\ud800", rb"\udfff", rb"\U00110000", rb"\U0001F60",
    rb"\'", rb"\e", rb"\0",
    b'a"b', b"a\nb",
])
def test_go_unquote_body_rejects(body):
    with pytest.raises(ValueProblem):
        V.go_unquote_body(body)


def _go_quote_body(raw: bytes) -> bytes:
    """A small model of Go strconv.Quote (without the outer quotes) for round-trip checks."""
    out = bytearray()
    text = raw.decode("utf-8", "surrogateescape")
    short = {7: "a", 8: "b", 12: "f", 10: "n", 13: "r", 9: "t", 11: "v"}
    for ch in text:
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:  # an invalid byte
            out += b"\\x%02x" % (cp - 0xDC00)
        elif ch in "\"\\":
            out += b"\\" + ch.encode()
        elif cp in short:
            out += b"\\" + short[cp].encode()
        elif cp < 0x20 or cp == 0x7F:
            out += b"\\x%02x" % cp
        elif not ch.isprintable() and ch != " ":
            out += (b"\\u%04x" % cp) if cp < 0x10000 else (b"\\U%08x" % cp)
        else:
            out += ch.encode()
    return bytes(out)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=20).map(lambda s: s.encode("utf-8")))
def test_go_unquote_inverts_quote(raw):
    assert V.go_unquote_body(_go_quote_body(raw)) == raw


# ----------------------------------------------------------------------------- base64
@pytest.mark.parametrize("text, raw", [
    (b"", b""), (b"YQ==", b"a"), (b"YWE=", b"aa"), (b"YWJj", b"abc"),
    (b"5rWL6K+VdGV4dA==", "\u6d4b\u8bd5text".encode()),
    (b"iVBORw0KGgo=", bytes.fromhex("89504e470d0a1a0a")),
    (b"+/+/", b"\xfb\xff\xbf"),
])
def test_b64decode_strict(text, raw):
    assert V.b64decode_strict(text) == raw


@pytest.mark.parametrize("text", [
    b"YQ", b"YQ=", b"YWE", b"Y===", b"Y", b"YR==", b"YWF=", b"YW E=", b"YWE=\n", b"\nYWE=",
    b"-_==", b"YQ==YQ==", b"YQ==\x00", b"=YWE", b"YW=E", b"\xff\xff\xff\xff",
])
def test_b64decode_strict_rejects(text):
    with pytest.raises(ValueProblem):
        V.b64decode_strict(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_b64decode_strict_round_trip(raw):
    assert V.b64decode_strict(base64.b64encode(raw)) == raw


# ----------------------------------------------------------------------------- temporal
@pytest.mark.parametrize("text, expected", [
    (b"1970-01-01 00:00:00", 0),
    (b"2015-12-20 23:58:58", us_since_epoch(2015, 12, 20, 23, 58, 58)),
    (b"2015-12-20 23:58:58.123456", us_since_epoch(2015, 12, 20, 23, 58, 58, 123456)),
    (b"2015-12-20 23:58:58.1", us_since_epoch(2015, 12, 20, 23, 58, 58, 100000)),
    (b"2015-12-20 23:58:58.000", us_since_epoch(2015, 12, 20, 23, 58, 58)),
    (b"1969-12-31 23:59:59.5", -500_000),
    (b"1973-12-30 15:30:00", us_since_epoch(1973, 12, 30, 15, 30)),
    (b"2000-01-01", us_since_epoch(2000, 1, 1)),
    (b"2016-02-29 12:00:00", us_since_epoch(2016, 2, 29, 12)),
    (b"2000-02-29 00:00:00", us_since_epoch(2000, 2, 29)),
    (b"0001-01-01 00:00:00", us_since_epoch(1, 1, 1)),
    (b"9999-12-31 23:59:59.999999", us_since_epoch(9999, 12, 31, 23, 59, 59, 999999)),
])
def test_parse_datetime_us(text, expected):
    assert V.parse_datetime_us(text) == expected


@pytest.mark.parametrize("text", [
    b"0000-00-00 00:00:00", b"0000-00-00", b"2015-00-10 00:00:00", b"2015-01-00 00:00:00",
    b"2015-02-29 00:00:00", b"1900-02-29 00:00:00", b"2015-13-01 00:00:00", b"2015-04-31",
    b"2015-12-20 24:00:00", b"2015-12-20 23:60:00", b"2015-12-20 23:59:60",
    b"2015-12-20T23:58:58", b"2015-12-20 23:58:58.1234567", b"2015-12-20 23:58:58.",
    b"2015-12-20 23:58", b"15-12-20 23:58:58", b"", b"2015-12-20 23:58:58Z",
])
def test_parse_datetime_us_rejects(text):
    with pytest.raises(ValueProblem):
        V.parse_datetime_us(text)


def test_parse_date_days():
    assert V.parse_date_days(b"1970-01-01") == 0
    assert V.parse_date_days(b"2000-01-01") == (dt.date(2000, 1, 1) - dt.date(1970, 1, 1)).days
    assert V.parse_date_days(b"1000-01-01") == (dt.date(1000, 1, 1) - dt.date(1970, 1, 1)).days
    for bad in (b"0000-00-00", b"2000-1-01", b"2000-02-30", b"2000-01-01 00:00:00"):
        with pytest.raises(ValueProblem):
            V.parse_date_days(bad)


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59, 999999)))
def test_parse_datetime_us_matches_datetime(when):
    text = (f"{when.year:04d}-{when.month:02d}-{when.day:02d} "
            f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}.{when.microsecond:06d}")
    expected = us_since_epoch(when.year, when.month, when.day, when.hour, when.minute,
                              when.second, when.microsecond)
    assert V.parse_datetime_us(text.encode()) == expected


H = 3_600_000_000
M = 60_000_000
S = 1_000_000


@pytest.mark.parametrize("text, expected", [
    (b"00:00:00", 0),
    (b"23:59:59", 23 * H + 59 * M + 59 * S),
    (b"-838:59:59.000000", -(838 * H + 59 * M + 59 * S)),
    (b"838:59:59", 838 * H + 59 * M + 59 * S),
    (b"-00:00:00.5", -500_000),
    (b"1:02:03", H + 2 * M + 3 * S),
    (b"100:00:00.000001", 100 * H + 1),
    (b"12:34:56.123456", 12 * H + 34 * M + 56 * S + 123456),
])
def test_parse_time_us(text, expected):
    assert V.parse_time_us(text) == expected


@pytest.mark.parametrize("text", [
    b"839:00:00", b"-839:00:00", b"1000:00:00", b"00:60:00", b"00:00:60", b"12:00",
    b"12:00:00.1234567", b"12:00:00.", b"+12:00:00", b"", b"1:2:3", b"12:00:00 ",
])
def test_parse_time_us_rejects(text):
    with pytest.raises(ValueProblem):
        V.parse_time_us(text)


# ----------------------------------------------------------------------------- decimals
@pytest.mark.parametrize("text, precision, scale, unscaled", [
    (b"129012.1230000", 14, 7, 1290121230000),
    (b"3.140000", 65, 6, 3140000),
    (b"3.140000", 3, 2, 314),
    (b"3.14", 10, 4, 31400),
    (b"-0.5", 2, 1, -5),
    (b"-0.000", 5, 2, 0),
    (b"0", 1, 0, 0),
    (b"99999", 5, 0, 99999),
    (b"18446744073709551615", 20, 0, 18446744073709551615),
    (b"12.000", 2, 0, 12),
    (b"9" * 35 + b"." + b"1" * 30, 65, 30, int("9" * 35 + "1" * 30)),
    (b"-" + b"9" * 65, 65, 0, -int("9" * 65)),
])
def test_decimal_unscaled(text, precision, scale, unscaled):
    assert V.decimal_unscaled(text, precision, scale) == unscaled


@pytest.mark.parametrize("text, precision, scale", [
    (b"3.1401", 5, 2),       # more fraction digits than the scale, not zero
    (b"12.5", 10, 0),
    (b"100000", 5, 0),       # exceeds the precision
    (b"1.00", 3, 3),         # 1000 needs 4 digits
    (b"9" * 66, 65, 0),
    (b"1e5", 10, 0), (b"+1", 10, 0), (b"1.", 10, 0), (b".5", 10, 1), (b"", 10, 0),
    (b"1,5", 10, 1), (b"--1", 10, 0), (b" 1", 10, 0), (b"NaN", 10, 0),
])
def test_decimal_unscaled_rejects(text, precision, scale):
    with pytest.raises(ValueProblem):
        V.decimal_unscaled(text, precision, scale)


def test_parse_decimal():
    assert V.parse_decimal(b"-12.340") == (-1, 12340, 3)
    assert V.parse_decimal(b"7") == (1, 7, 0)


@pytest.mark.parametrize("unscaled, scale, text", [
    (1290121230000, 7, "129012.1230000"),
    (-5, 1, "-0.5"),
    (18446744073709551615, 0, "18446744073709551615"),
    (314, 2, "3.14"),
])
def test_unscaled_to_decimal(unscaled, scale, text):
    d = V.unscaled_to_decimal(unscaled, scale)
    assert d == Decimal(text)
    assert d.as_tuple().exponent == -scale


# Regression: unscaled_to_decimal once used Decimal.scaleb, which rounds to the default 28-digit
# context (123456789012345678901234567.89 became ...567.90).
@pytest.mark.parametrize("unscaled, scale, text", [
    (12345678901234567890123456789, 2, "123456789012345678901234567.89"),
    (int("9" * 35 + "1" * 30), 30, "9" * 35 + "." + "1" * 30),
])
def test_unscaled_to_decimal_wide(unscaled, scale, text):
    d = V.unscaled_to_decimal(unscaled, scale)
    assert d == Decimal(text)
    assert d.as_tuple().exponent == -scale


def test_value_text_outside_a_decode_call_is_strict():
    assert V.value_text("\u263a".encode()) == "\u263a"
    with pytest.raises(ValueProblem):
        V.value_text(b"\xff")
    with pytest.raises(ValueProblem):
        V.value_text(b"\xed\xa0\x80")  # an encoded surrogate is not UTF-8


def test_value_text_under_a_policy():
    with V.text_policy(V.TextPolicy("replace")) as policy:
        assert V.value_text(b"a\xffb") == "a\ufffdb"
        assert V.value_text(b"\xed\xa0\x80") == "\ufffd\ufffd\ufffd"
        assert V.value_text("\u263a".encode()) == "\u263a"
    assert policy.replaced == 2
    with V.text_policy(V.TextPolicy("error")), pytest.raises(ValueProblem):
        V.value_text(b"\xff")
    with pytest.raises(ValueError):
        V.TextPolicy("ignore")
