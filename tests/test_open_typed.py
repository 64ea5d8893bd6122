"""Open protocol, typed mode: ``OpenDecoder(table="db.tbl", schema=pa.schema([...]))`` converts
every value exactly to the requested Arrow type (or raises DecodeError), and
``infer_open_schema`` picks the default (and Spark-accepted) types."""
from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import ddl_event, frame, resolved_event, row_event

UTC = dt.timezone.utc
PNG8 = bytes.fromhex("89504e470d0a1a0a")
TRAILER = {"_ddl": None, "_handle_key_only": False, "_claim_check_location": None,
           "_before_incomplete": False}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def typed_value(decoder_factory, col, arrow_type, *, timezone="UTC", op="u"):
    """Decode one row event holding column ``c`` into ``arrow_type``; return the value."""
    key, value = frame([row_event({"c": col}, op=op)])
    dec = decoder_factory(table="db.t", schema=pa.schema([("c", arrow_type)]), timezone=timezone)
    batch = dec.decode([key], [value])
    assert batch.schema.field("c").type == arrow_type
    (row,) = batch.to_pylist()
    return row["c"]


def typed_error(decoder_factory, col, arrow_type, *, timezone="UTC"):
    key, value = frame([row_event({"ok": {"t": 3, "v": 1}}), row_event({"c": col})])
    dec = decoder_factory(table="db.t", schema=pa.schema([("ok", pa.int32()), ("c", arrow_type)]),
                          timezone=timezone)
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode([key, key], [value, value])
    err = info.value
    assert err.message_index == 0
    assert err.column == "c"
    assert err.part == "value"
    assert err.byte_offset is not None and 0 <= err.byte_offset <= len(value)
    return err


# ----------------------------------------------------------------------------- integers
INT_CASES = [
    ({"t": 1, "v": -128}, pa.int8(), -128),
    ({"t": 1, "v": 127}, pa.int8(), 127),
    ({"t": 1, "f": 128, "v": 255}, pa.uint8(), 255),
    ({"t": 2, "v": -32768}, pa.int16(), -32768),
    ({"t": 2, "f": 128, "v": 65535}, pa.uint16(), 65535),
    ({"t": 9, "v": -8388608}, pa.int32(), -8388608),
    ({"t": 9, "f": 128, "v": 16777215}, pa.uint32(), 16777215),
    ({"t": 3, "v": -2147483648}, pa.int32(), -2147483648),
    ({"t": 3, "f": 128, "v": 4294967295}, pa.uint32(), 4294967295),
    ({"t": 8, "v": -9223372036854775808}, pa.int64(), -9223372036854775808),
    ({"t": 8, "v": 9223372036854775807}, pa.int64(), 9223372036854775807),
    ({"t": 8, "f": 128, "v": 18446744073709551615}, pa.uint64(), 18446744073709551615),
    ({"t": 8, "f": 128, "v": 18446744073709551615}, pa.decimal128(20, 0), Decimal(18446744073709551615)),
    ({"t": 8, "f": 128, "v": 18446744073709551615}, pa.decimal256(65, 0), Decimal(18446744073709551615)),
    ({"t": 8, "f": 128, "v": 18446744073709551615}, pa.string(), "18446744073709551615"),
    ({"t": 3, "v": 7}, pa.decimal128(5, 2), Decimal("7.00")),
    ({"t": 1, "v": -1}, pa.int64(), -1),                       # widening
    ({"t": 3, "f": 128, "v": 4294967295}, pa.int64(), 4294967295),
    ({"t": 1, "f": 128, "v": 200}, pa.int16(), 200),
    ({"t": 8, "v": 9007199254740992}, pa.float64(), 9007199254740992.0),
    ({"t": 3, "v": 16777216}, pa.float32(), 16777216.0),
    ({"t": 13, "v": 2155}, pa.int16(), 2155),
    ({"t": 13, "v": 0}, pa.int16(), 0),
    ({"t": 16, "v": 81}, pa.uint64(), 81),
    ({"t": 16, "v": 18446744073709551615}, pa.uint64(), 18446744073709551615),
    ({"t": 247, "v": 1}, pa.uint16(), 1),
    ({"t": 248, "v": 3}, pa.uint64(), 3),
    ({"t": 1, "v": 0}, pa.bool_(), False),
    ({"t": 1, "v": 1}, pa.bool_(), True),
    ({"t": 16, "v": 1}, pa.bool_(), True),
    ({"t": 246, "v": "12.000"}, pa.int64(), 12),
    ({"t": 3, "v": None}, pa.int32(), None),
]


@pytest.mark.parametrize("col, arrow_type, expected", INT_CASES,
                         ids=[f"t{c['t']}f{c.get('f', 0)}-{t}" for c, t, _ in INT_CASES])
def test_integer_conversions(decoder_factory, col, arrow_type, expected):
    got = typed_value(decoder_factory, col, arrow_type)
    assert got == expected and type(got) is type(expected)


INT_ERRORS = [
    ({"t": 8, "f": 128, "v": 18446744073709551615}, pa.int64()),
    ({"t": 8, "f": 128, "v": 9223372036854775808}, pa.int64()),
    ({"t": 3, "v": -1}, pa.uint32()),
    ({"t": 8, "v": -1}, pa.uint64()),
    ({"t": 2, "v": 300}, pa.int8()),
    ({"t": 3, "v": 300}, pa.uint8()),
    ({"t": 3, "v": 70000}, pa.int16()),
    ({"t": 3, "v": 70000}, pa.uint16()),
    ({"t": 8, "v": 4294967296}, pa.uint32()),
    ({"t": 8, "v": -2147483649}, pa.int32()),
    ({"t": 16, "v": 18446744073709551615}, pa.int64()),
    ({"t": 1, "v": 2}, pa.bool_()),
    ({"t": 1, "v": -1}, pa.bool_()),
    ({"t": 8, "v": 9223372036854775807}, pa.float64()),        # not exact as a double
    ({"t": 3, "v": 16777217}, pa.float32()),
    ({"t": 8, "f": 128, "v": 18446744073709551615}, pa.decimal128(19, 0)),
    ({"t": 3, "v": 1000}, pa.decimal128(5, 3)),
    ({"t": 246, "v": "12.5"}, pa.int64()),
    ({"t": 1, "v": 300}, pa.int64()),                           # out of range for the source type
    ({"t": 15, "f": 64, "v": "1"}, pa.int32()),                 # no text -> int conversion
    ({"t": 3, "v": 1}, pa.binary()),
    ({"t": 3, "v": 1}, pa.date32()),
    ({"t": 3, "v": 1}, pa.timestamp("us")),
]


@pytest.mark.parametrize("col, arrow_type", INT_ERRORS,
                         ids=[f"t{c['t']}v{c['v']}-{t}" for c, t in INT_ERRORS])
def test_integer_conversion_errors(decoder_factory, col, arrow_type):
    typed_error(decoder_factory, col, arrow_type)


# ----------------------------------------------------------------------------- floats
def test_float32_column(decoder_factory):
    got = typed_value(decoder_factory, {"t": 4, "v": 153.123}, pa.float32())
    assert got == f32(153.123)
    assert struct.pack("<f", got) == struct.pack("<f", 153.123)


def test_double_column(decoder_factory):
    assert typed_value(decoder_factory, {"t": 5, "v": 153.123}, pa.float64()) == 153.123
    assert typed_value(decoder_factory, {"t": 5, "v": 1e21}, pa.float64()) == 1e21
    assert typed_value(decoder_factory, {"t": 5, "v": 5e-324}, pa.float64()) == 5e-324
    neg0 = typed_value(decoder_factory, {"t": 5, "v": -0.0}, pa.float64())
    assert neg0 == 0 and str(neg0) == "-0.0"


def test_float32_to_float64_widens_exactly(decoder_factory):
    assert typed_value(decoder_factory, {"t": 4, "v": 153.123}, pa.float64()) == f32(153.123)


def test_double_to_float32_must_be_exact(decoder_factory):
    assert typed_value(decoder_factory, {"t": 5, "v": 0.5}, pa.float32()) == 0.5
    typed_error(decoder_factory, {"t": 5, "v": 153.123}, pa.float32())


def test_floats_rendered_as_text(decoder_factory):
    assert typed_value(decoder_factory, {"t": 4, "v": 153.123}, pa.string()) == "153.123"
    assert typed_value(decoder_factory, {"t": 5, "v": 1e-7}, pa.string()) == "1e-7"
    assert typed_value(decoder_factory, {"t": 5, "v": 1e20}, pa.string()) == "100000000000000000000"


# ----------------------------------------------------------------------------- decimals
def test_decimal128_exact(decoder_factory):
    got = typed_value(decoder_factory, {"t": 246, "v": "129012.1230000"}, pa.decimal128(14, 7))
    assert got == Decimal("129012.1230000") and str(got) == "129012.1230000"


def test_decimal_negative_and_default_type(decoder_factory):
    got = typed_value(decoder_factory, {"t": 246, "v": "-3.140000"}, pa.decimal256(65, 6))
    assert str(got) == "-3.140000"


DEC65 = "9" * 35 + "." + "1" * 30
DEC29 = "123456789012345678901234567.89"


# Regression (both): values.unscaled_to_decimal used to round to the 28-digit default Decimal context.
def test_decimal_65_digits_to_decimal256(decoder_factory):
    got = typed_value(decoder_factory, {"t": 246, "v": DEC65}, pa.decimal256(65, 30))
    assert got == Decimal(DEC65) and str(got) == DEC65


def test_decimal_29_digits_to_decimal128_is_not_rounded(decoder_factory):
    got = typed_value(decoder_factory, {"t": 246, "v": DEC29}, pa.decimal128(38, 2))
    assert str(got) == DEC29


def test_decimal_65_digits_to_string(decoder_factory):
    assert typed_value(decoder_factory, {"t": 246, "v": DEC65}, pa.string()) == DEC65


def test_decimal_scale(decoder_factory):
    # Trailing zeros beyond the target scale are fine ...
    assert str(typed_value(decoder_factory, {"t": 246, "v": "1.50"}, pa.decimal128(5, 1))) == "1.5"
    assert str(typed_value(decoder_factory, {"t": 246, "v": "3.140000"}, pa.decimal128(3, 2))) == "3.14"
    # ... fewer fraction digits are padded ...
    assert str(typed_value(decoder_factory, {"t": 246, "v": "3.1"}, pa.decimal128(10, 4))) == "3.1000"
    # ... but non-zero digits beyond the scale are an error, never rounded.
    typed_error(decoder_factory, {"t": 246, "v": "1.55"}, pa.decimal128(5, 1))
    typed_error(decoder_factory, {"t": 246, "v": "129012.1230001"}, pa.decimal128(20, 6))
    # Too many integer digits for the precision.
    typed_error(decoder_factory, {"t": 246, "v": "123456.1230000"}, pa.decimal128(5, 2))
    typed_error(decoder_factory, {"t": 246, "v": "not a number"}, pa.decimal128(5, 2))
    typed_error(decoder_factory, {"t": 246, "v": "1e5"}, pa.decimal128(10, 0))


# ----------------------------------------------------------------------------- temporal
def test_date(decoder_factory):
    assert typed_value(decoder_factory, {"t": 10, "v": "2000-01-01"}, pa.date32()) == dt.date(2000, 1, 1)
    assert typed_value(decoder_factory, {"t": 14, "v": "1000-01-01"}, pa.date32()) == dt.date(1000, 1, 1)
    assert typed_value(decoder_factory, {"t": 10, "v": "2000-01-01"}, pa.timestamp("us")) == dt.datetime(2000, 1, 1)


def test_zero_date(decoder_factory):
    typed_error(decoder_factory, {"t": 10, "v": "0000-00-00"}, pa.date32())
    typed_error(decoder_factory, {"t": 12, "v": "0000-00-00 00:00:00"}, pa.timestamp("us"))
    typed_error(decoder_factory, {"t": 7, "v": "0000-00-00 00:00:00"}, pa.timestamp("us", tz="UTC"))
    assert typed_value(decoder_factory, {"t": 10, "v": "0000-00-00"}, pa.string()) == "0000-00-00"
    assert typed_value(decoder_factory, {"t": 12, "v": "0000-00-00 00:00:00"}, pa.string()) == "0000-00-00 00:00:00"


def test_invalid_dates(decoder_factory):
    typed_error(decoder_factory, {"t": 10, "v": "2015-02-29"}, pa.date32())
    typed_error(decoder_factory, {"t": 12, "v": "2015-12-20 24:00:00"}, pa.timestamp("us"))
    typed_error(decoder_factory, {"t": 12, "v": "2015-12-20"}, pa.date32())  # DATETIME is not a DATE


def test_datetime6(decoder_factory):
    got = typed_value(decoder_factory, {"t": 12, "v": "2015-12-20 23:58:58.123456"}, pa.timestamp("us"))
    assert got == dt.datetime(2015, 12, 20, 23, 58, 58, 123456)


def test_datetime_is_never_converted(decoder_factory):
    got = typed_value(decoder_factory, {"t": 12, "v": "2015-12-20 23:58:58.123456"}, pa.timestamp("us"),
                      timezone="Asia/Shanghai")
    assert got == dt.datetime(2015, 12, 20, 23, 58, 58, 123456)


TS_CASES = [
    ("America/New_York", "2024-03-10 02:30:00", dt.datetime(2024, 3, 10, 7, 30)),   # DST gap: EST
    ("America/New_York", "2024-11-03 01:30:00", dt.datetime(2024, 11, 3, 5, 30)),   # fold: EDT (fold=0)
    ("America/New_York", "2024-11-03 02:00:00", dt.datetime(2024, 11, 3, 7, 0)),
    ("America/New_York", "2024-07-01 12:00:00.000001", dt.datetime(2024, 7, 1, 16, 0, 0, 1)),
    ("Asia/Shanghai", "2024-11-03 01:30:00", dt.datetime(2024, 11, 2, 17, 30)),
    ("Asia/Shanghai", "1973-12-30 15:30:00", dt.datetime(1973, 12, 30, 7, 30)),
    ("UTC", "1973-12-30 15:30:00", dt.datetime(1973, 12, 30, 15, 30)),
    ("+05:30", "2024-01-01 00:00:00", dt.datetime(2023, 12, 31, 18, 30)),
    ("-08:00", "2024-01-01 00:00:00", dt.datetime(2024, 1, 1, 8, 0)),
]


@pytest.mark.parametrize("tz, text, utc", TS_CASES, ids=[f"{z}-{t}" for z, t, _ in TS_CASES])
def test_timestamp_to_utc(decoder_factory, tz, text, utc):
    got = typed_value(decoder_factory, {"t": 7, "v": text}, pa.timestamp("us", tz="UTC"), timezone=tz)
    assert got == utc.replace(tzinfo=UTC)


def test_timestamp_target_in_another_zone_keeps_the_instant(decoder_factory):
    key, value = frame([row_event({"c": {"t": 7, "v": "2024-11-03 01:30:00"}})])
    dec = decoder_factory(table="db.t", schema=pa.schema([("c", pa.timestamp("us", tz="Asia/Tokyo"))]),
                          timezone="America/New_York")
    arr = dec.decode([key], [value]).column("c")
    assert arr.cast(pa.int64()).to_pylist() == [
        int((dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC) - dt.datetime(1970, 1, 1, tzinfo=UTC))
            / dt.timedelta(microseconds=1))]


def test_timestamp_as_text_is_the_wall_clock(decoder_factory):
    got = typed_value(decoder_factory, {"t": 7, "v": "2024-03-10 02:30:00"}, pa.string(),
                      timezone="America/New_York")
    assert got == "2024-03-10 02:30:00"


def test_unknown_timezone(decoder_factory):
    with pytest.raises(ValueError):
        decoder_factory(timezone="Mars/Olympus_Mons")


@pytest.mark.parametrize("text, expected", [
    ("-838:59:59.000000", -dt.timedelta(hours=838, minutes=59, seconds=59)),
    ("838:59:59", dt.timedelta(hours=838, minutes=59, seconds=59)),
    ("23:59:59", dt.timedelta(hours=23, minutes=59, seconds=59)),
    ("-00:00:00.000001", -dt.timedelta(microseconds=1)),
])
def test_time_to_duration(decoder_factory, text, expected):
    assert typed_value(decoder_factory, {"t": 11, "v": text}, pa.duration("us")) == expected


def test_time_errors(decoder_factory):
    typed_error(decoder_factory, {"t": 11, "v": "839:00:00"}, pa.duration("us"))
    typed_error(decoder_factory, {"t": 12, "v": "2015-12-20 23:58:58"}, pa.duration("us"))
    assert typed_value(decoder_factory, {"t": 11, "v": "-838:59:59.000000"}, pa.string()) == "-838:59:59.000000"


# ----------------------------------------------------------------------------- strings and bytes
def test_varbinary_go_quoted_to_binary(decoder_factory):
    col = {"t": 15, "f": 65, "v": "\\x89PNG\\r\\n\\x1a\\n"}
    assert typed_value(decoder_factory, col, pa.binary()) == PNG8
    col = {"t": 254, "f": 1, "v": "ab\\x00\\x00"}  # BINARY(4) padding
    assert typed_value(decoder_factory, col, pa.binary()) == b"ab\x00\x00"


def test_binary_to_string_replaces_or_requires_utf8(decoder_factory):
    assert typed_value(decoder_factory, {"t": 15, "f": 65, "v": "\\u263a ok"}, pa.string()) == "\u263a ok"
    # not UTF-8: U+FFFD by default, an error with invalid_utf8="error"
    assert typed_value(decoder_factory, {"t": 15, "f": 65, "v": "\\x89PNG"}, pa.string()) == "\ufffdPNG"
    typed_error(lambda **kw: decoder_factory(invalid_utf8="error", **kw), {"t": 15, "f": 65, "v": "\\x89PNG"},
                pa.string())


def test_text_base64_to_string(decoder_factory):
    assert typed_value(decoder_factory, {"t": 252, "f": 64, "v": "5rWL6K+VdGV4dA=="}, pa.string()) == "\u6d4b\u8bd5text"
    assert typed_value(decoder_factory, {"t": 249, "v": ""}, pa.string()) == ""


def test_blob_to_binary(decoder_factory):
    assert typed_value(decoder_factory, {"t": 252, "f": 1, "v": "iVBORw0KGgo="}, pa.binary()) == PNG8
    assert typed_value(decoder_factory, {"t": 251, "f": 65, "v": "AA=="}, pa.binary()) == b"\x00"


def test_varchar_to_string_and_binary(decoder_factory):
    col = {"t": 15, "f": 64, "v": "h\u00e9llo \\x41"}  # no binary flag: taken verbatim
    assert typed_value(decoder_factory, col, pa.string()) == "h\u00e9llo \\x41"
    assert typed_value(decoder_factory, col, pa.binary()) == "h\u00e9llo \\x41".encode()


def test_json_and_vector_to_string(decoder_factory):
    assert typed_value(decoder_factory, {"t": 245, "v": '{"key1": "value1"}'}, pa.string()) == '{"key1": "value1"}'
    assert typed_value(decoder_factory, {"t": 225, "v": "[1,2,3]"}, pa.string()) == "[1,2,3]"


def test_enum_set_bit_as_text(decoder_factory):
    assert typed_value(decoder_factory, {"t": 247, "v": 2}, pa.string()) == "2"
    assert typed_value(decoder_factory, {"t": 16, "v": 81}, pa.string()) == "81"


# ----------------------------------------------------------------------------- event handling
SCHEMA = pa.schema([
    pa.field("id", pa.int64(), metadata={b"k": b"v"}),
    pa.field("val", pa.string()),
    pa.field("missing", pa.float64()),
])


def _stream():
    c = lambda i, v: {"id": {"t": 3, "h": True, "f": 11, "v": i}, "val": {"t": 15, "f": 64, "v": v}}  # noqa: E731
    return [
        frame([ddl_event("CREATE TABLE t(id int primary key, val varchar(16))", ts=1, ddl_type=3)]),
        frame([ddl_event("CREATE TABLE other(x int)", ts=1, tbl="other")]),
        frame([resolved_event(2)]),
        frame([row_event(c(1, "aa"), ts=3),
               row_event({"x": {"t": 3, "v": 9}}, ts=3, tbl="other"),
               row_event(c(1, "a2"), ts=4, old=c(1, "aa")),
               row_event(c(1, "a2"), ts=5, op="d"),
               row_event({"id": {"t": 3, "h": True, "f": 11, "v": 2}}, ts=6, op="d"),  # handle-key-only delete
               row_event(c(3, "cc"), ts=7, scm="db2"),
               row_event({"val": {"t": 15, "f": 64, "v": None}, "id": {"t": 3, "f": 11, "v": 4}}, ts=8)]),
        frame([resolved_event(9)]),
    ]


def test_typed_stream_with_control_events(decoder_factory):
    msgs = _stream()
    dec = decoder_factory(table="db.t", schema=SCHEMA)
    batch = dec.decode([m[0] for m in msgs], [m[1] for m in msgs], partitions=[0, 1, 2, 3, 4],
                       offsets=[10, 11, 12, 13, 14])
    assert batch.schema.names == ["_op", "_commit_ts", "id", "val", "missing", "_ddl",
                                  "_handle_key_only", "_claim_check_location", "_before_incomplete",
                                  "_partition", "_offset"]
    assert batch.schema.field("id").metadata == {b"k": b"v"}
    assert batch.schema == dec.output_schema(partitions=True, offsets=True)

    def r(op, ts, i, v, p, o, ddl=None):
        return {"_op": op, "_commit_ts": ts, "id": i, "val": v, "missing": None, **TRAILER, "_ddl": ddl,
                "_partition": p, "_offset": o}

    assert batch.to_pylist() == [
        r("DDL", 1, None, None, 0, 10, ddl="CREATE TABLE t(id int primary key, val varchar(16))"),
        r("RESOLVED", 2, None, None, 2, 12),
        r("INSERT", 3, 1, "aa", 3, 13),
        r("UPDATE", 4, 1, "a2", 3, 13),      # values from "u"
        r("DELETE", 5, 1, "a2", 3, 13),      # values from "d"
        r("DELETE", 6, 2, None, 3, 13),      # absent columns are null
        r("INSERT", 8, 4, None, 3, 13),
        r("RESOLVED", 9, None, None, 4, 14),
    ]


def test_typed_stream_without_control_events(decoder_factory):
    msgs = _stream()
    dec = decoder_factory(table="db.t", schema=SCHEMA, control_events=False)
    rows = dec.decode([m[0] for m in msgs], [m[1] for m in msgs]).to_pylist()
    assert [(r["_op"], r["_commit_ts"], r["id"], r["val"]) for r in rows] == [
        ("INSERT", 3, 1, "aa"), ("UPDATE", 4, 1, "a2"), ("DELETE", 5, 1, "a2"), ("DELETE", 6, 2, None),
        ("INSERT", 8, 4, None)]
    assert all(r["_ddl"] is None and r["missing"] is None for r in rows)


def test_update_takes_after_image_even_if_before_differs_in_columns(decoder_factory):
    after = {"id": {"t": 3, "v": 1}}
    before = {"id": {"t": 3, "v": 0}, "val": {"t": 15, "f": 64, "v": "old"}}
    key, value = frame([row_event(after, old=before)])
    (row,) = decoder_factory(table="db.t", schema=SCHEMA).decode([key], [value]).to_pylist()
    assert (row["_op"], row["id"], row["val"]) == ("UPDATE", 1, None)


def test_bad_values_of_other_tables_are_not_converted(decoder_factory):
    # A column of another table that would not fit the target type is never looked at.
    key, value = frame([row_event({"id": {"t": 8, "f": 128, "v": 18446744073709551615}}, tbl="other"),
                        row_event({"id": {"t": 3, "v": 5}})])
    rows = decoder_factory(table="db.t", schema=pa.schema([("id", pa.int8())])).decode([key], [value]).to_pylist()
    assert [r["id"] for r in rows] == [5]


def test_handle_key_only_and_claim_check_in_typed_mode(decoder_factory):
    key, value = frame([
        row_event({"id": {"t": 3, "h": True, "f": 11, "v": 1}}, ohk=True),
        (b'{"ts":1,"scm":"db","tbl":"t","t":1,"ohk":true,"ohk":false,"ccl":"s3://x/1.json"}',
         {"u": {"id": {"t": 3, "h": True, "f": 11, "v": 2}}}),
    ])
    rows = decoder_factory(table="db.t", schema=SCHEMA).decode([key], [value]).to_pylist()
    assert [(r["id"], r["_handle_key_only"], r["_claim_check_location"]) for r in rows] == [
        (1, True, None), (2, False, "s3://x/1.json")]


def test_table_given_as_tuple(decoder_factory):
    key, value = frame([row_event({"id": {"t": 3, "v": 5}}, scm="my.db", tbl="t")])
    dec = decoder_factory(table=("my.db", "t"), schema=pa.schema([("id", pa.int32())]))
    assert dec.decode([key], [value]).column("id").to_pylist() == [5]


@pytest.mark.parametrize("kw", [
    dict(table="db.t"), dict(schema=pa.schema([("a", pa.int8())])),
    dict(table="dbt", schema=pa.schema([("a", pa.int8())])),
    dict(table="db.t", schema=pa.schema([("a", pa.int8()), ("a", pa.int16())])),
])
def test_bad_typed_configuration(decoder_factory, kw):
    with pytest.raises(ValueError):
        decoder_factory(**kw)


@pytest.mark.parametrize("arrow_type", [pa.timestamp("ms"), pa.list_(pa.int8()), pa.large_string(), pa.null()])
def test_unsupported_target_type(decoder_factory, arrow_type):
    with pytest.raises(TypeError):
        decoder_factory(table="db.t", schema=pa.schema([("a", arrow_type)]))


def test_type_null_column(decoder_factory):
    assert typed_value(decoder_factory, {"t": 6, "v": None}, pa.string()) is None
    typed_error(decoder_factory, {"t": 6, "v": 1}, pa.string())


# ----------------------------------------------------------------------------- schema inference
def _sample():
    cols = {
        "i": {"t": 3, "f": 128, "v": 1},
        "big": {"t": 8, "v": -1},
        "dec": {"t": 246, "v": "3.140000"},
        "vb": {"t": 15, "f": 65, "v": "\\x00"},
        "vc": {"t": 15, "f": 64, "v": "x"},
        "ts": {"t": 7, "v": "2020-01-01 00:00:00"},
        "u64": {"t": 8, "f": 128, "v": 18446744073709551615},
        "tm": {"t": 11, "v": "01:00:00"},
        "d": {"t": 10, "v": "2020-01-01"},
        "dtm": {"t": 12, "v": "2020-01-01 00:00:00.5"},
        "ti": {"t": 1, "v": 1},
        "tu": {"t": 1, "f": 128, "v": 1},
        "sm": {"t": 2, "f": 128, "v": 1},
        "md": {"t": 9, "v": 1},
        "yr": {"t": 13, "v": 2020},
        "fl": {"t": 4, "v": 1.5},
        "db": {"t": 5, "v": 1.5},
        "bit": {"t": 16, "v": 1},
        "en": {"t": 247, "v": 1},
        "st": {"t": 248, "v": 1},
        "js": {"t": 245, "v": "{}"},
        "tx": {"t": 252, "f": 64, "v": "eA=="},
        "bl": {"t": 252, "f": 65, "v": "eA=="},
    }
    return [
        frame([resolved_event(1)]),
        frame([row_event({"zz": {"t": 3, "v": 1}}, tbl="other"), row_event(cols, ts=2)]),
        frame([row_event({"dec": {"t": 246, "v": "3.1"}, "late": {"t": 6, "v": None}}, ts=3)]),
    ]


DEFAULT_TYPES = {
    "i": pa.uint32(), "big": pa.int64(), "dec": pa.decimal256(65, 6), "vb": pa.binary(), "vc": pa.string(),
    "ts": pa.timestamp("us", tz="UTC"), "u64": pa.uint64(), "tm": pa.duration("us"), "d": pa.date32(),
    "dtm": pa.timestamp("us"), "ti": pa.int8(), "tu": pa.uint8(), "sm": pa.uint16(), "md": pa.int32(),
    "yr": pa.int16(), "fl": pa.float32(), "db": pa.float64(), "bit": pa.uint64(), "en": pa.uint16(),
    "st": pa.uint64(), "js": pa.string(), "tx": pa.string(), "bl": pa.binary(), "late": pa.string(),
}
SPARK_TYPES = {**DEFAULT_TYPES, "i": pa.int64(), "u64": pa.decimal128(20, 0), "dec": pa.decimal128(38, 6),
               "tm": pa.string(), "tu": pa.int16(), "sm": pa.int32(), "en": pa.int32(), "bit": pa.decimal128(20, 0),
               "st": pa.decimal128(20, 0), "late": pa.string()}


def test_infer_open_schema_defaults():
    msgs = _sample()
    schema = ticdc_fast.infer_open_schema([m[0] for m in msgs], [m[1] for m in msgs], table="db.t")
    assert {f.name: f.type for f in schema} == DEFAULT_TYPES
    assert schema.names == list(DEFAULT_TYPES)  # order of first appearance
    assert schema.field("i").metadata == {b"tidb_type_code": b"3", b"ticdc_flags": b"128"}
    assert all(f.nullable for f in schema)


def test_infer_open_schema_spark():
    msgs = _sample()
    schema = ticdc_fast.infer_open_schema([m[0] for m in msgs], [m[1] for m in msgs], table="db.t", spark=True)
    assert {f.name: f.type for f in schema} == SPARK_TYPES
    assert not any(pa.types.is_unsigned_integer(f.type) or pa.types.is_duration(f.type) for f in schema)
    assert ticdc_fast.spark_schema(
        ticdc_fast.infer_open_schema([m[0] for m in msgs], [m[1] for m in msgs], table="db.t")) == schema


def test_infer_open_schema_needs_rows_of_the_table():
    msgs = _sample()
    with pytest.raises(ValueError):
        ticdc_fast.infer_open_schema([m[0] for m in msgs], [m[1] for m in msgs], table="db.nope")


def test_inferred_spark_schema_decodes_the_sample(decoder_factory):
    msgs = _sample()
    keys, values = [m[0] for m in msgs], [m[1] for m in msgs]
    schema = ticdc_fast.infer_open_schema(keys, values, table="db.t", spark=True)
    batch = decoder_factory(table="db.t", schema=schema).decode(keys, values)
    rows = batch.to_pylist()
    assert [r["_op"] for r in rows] == ["RESOLVED", "INSERT", "INSERT"]
    full = rows[1]
    assert full["u64"] == Decimal(18446744073709551615)
    assert full["dec"] == Decimal("3.14") and full["tm"] == "01:00:00" and full["vb"] == b"\x00"
    assert full["ts"] == dt.datetime(2020, 1, 1, tzinfo=UTC) and full["bl"] == b"x" and full["tx"] == "x"
    assert rows[2]["dec"] == Decimal("3.1") and rows[2]["late"] is None


def test_inferred_default_schema_is_a_valid_target(decoder_factory):
    # Regression: a type-NULL (t=6) column used to infer pa.null(), which is not a typed target.
    msgs = _sample()
    keys, values = [m[0] for m in msgs], [m[1] for m in msgs]
    schema = ticdc_fast.infer_open_schema(keys, values, table="db.t")
    rows = decoder_factory(table="db.t", schema=schema).decode(keys, values).to_pylist()
    assert [r["_op"] for r in rows] == ["RESOLVED", "INSERT", "INSERT"]
    full = rows[1]
    assert (full["i"], full["big"], full["u64"], full["tu"]) == (1, -1, 18446744073709551615, 1)
    assert full["dec"] == Decimal("3.140000") and full["tm"] == dt.timedelta(hours=1)
    assert full["d"] == dt.date(2020, 1, 1) and full["dtm"] == dt.datetime(2020, 1, 1, 0, 0, 0, 500000)
    assert full["fl"] == 1.5 and full["yr"] == 2020 and full["js"] == "{}" and full["late"] is None


def test_default_and_spark_type_helpers():
    assert ticdc_fast.default_arrow_type(3, 128) == pa.uint32()
    assert ticdc_fast.default_arrow_type(246, 0, 6) == pa.decimal256(65, 6)
    assert ticdc_fast.default_arrow_type(15, 65) == pa.binary()
    assert ticdc_fast.default_arrow_type(15, 64) == pa.string()
    assert ticdc_fast.default_arrow_type(7) == pa.timestamp("us", tz="UTC")
    assert ticdc_fast.spark_arrow_type(pa.uint64()) == pa.decimal128(20, 0)
    assert ticdc_fast.spark_arrow_type(pa.decimal256(65, 6)) == pa.decimal128(38, 6)
    assert ticdc_fast.spark_arrow_type(pa.duration("us")) == pa.string()
    with pytest.raises(ValueError):
        ticdc_fast.default_arrow_type(200)


# Values of a stream share their minute: the core reads a repeated "YYYY-MM-DD HH:MM" once, and
# must give what a fresh parse gives, values and refusals alike.
SAME_MINUTE = ["2024-05-06 07:08:09", "2024-05-06 07:08:10.5", "2024-05-06 07:08:59.999999",
               "2024-05-06 07:08:00", "1969-12-31 23:59:01.25", "1969-12-31 23:59:59.000001",
               "1969-12-31 23:59:00", "0001-01-01 00:00:01", "0001-01-01 00:00:02.1",
               "9999-12-31 23:59:59.999999", "9999-12-31 23:59:00.000001", "2024-05-06 07:09:09",
               "2024-05-06", "2024-05-06 07:09:09"]


def test_datetimes_sharing_their_minute(decoder_factory):
    key, value = frame([row_event({"c": {"t": 12, "v": t}}) for t in SAME_MINUTE])
    dec = decoder_factory(table="db.t", schema=pa.schema([("c", pa.timestamp("us"))]))
    got = dec.decode([key], [value]).column("c").to_pylist()
    assert got == [dt.datetime.fromisoformat(t) for t in SAME_MINUTE]


@pytest.mark.parametrize("bad", ["2024-05-06 07:08:60", "2024-05-06 07:08:6x", "2024-05-06 07:08x09",
                                 "2024-05-06 07:08:09.", "2024-05-06 07:08:09.1234567",
                                 "2024-05-06 07:08:09x1", "2024-05-06 07:08:0", "2024-05-06 07:08:09.12a"])
def test_bad_seconds_after_a_value_of_the_same_minute(decoder_factory, bad):
    schema = pa.schema([("c", pa.timestamp("us"))])
    key, value = frame([row_event({"c": {"t": 12, "v": "2024-05-06 07:08:09"}}),
                        row_event({"c": {"t": 12, "v": bad}})])
    with pytest.raises(ticdc_fast.DecodeError) as after_good:
        decoder_factory(table="db.t", schema=schema).decode([key], [value])
    key, value = frame([row_event({"c": {"t": 12, "v": bad}})])
    with pytest.raises(ticdc_fast.DecodeError) as alone:
        decoder_factory(table="db.t", schema=schema).decode([key], [value])
    assert after_good.value.reason == alone.value.reason
    assert after_good.value.reason in ("invalid datetime", "invalid time of day")
    assert after_good.value.column == "c"
