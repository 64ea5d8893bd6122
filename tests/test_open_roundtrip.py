"""Round trips through the package's own encoder: every type and edge value, both flavours,
every compression, both implementations — and the implementations agree bit for bit."""
from __future__ import annotations

import base64
import struct
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast import _impl
from ticdc_fast.testing import Col, DDL, OpenEncoder, Resolved, RowChange, realistic_changefeed
from ticdc_fast.values import format_float, to_float32

FLAVORS = ("tiflow", "ticdc")
differential = pytest.mark.skipif(_impl.PURE_FORCED,
                                  reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _f32(x):
    return to_float32(x)


_INT_TYPES = [  # (type code, flags, lo, hi)
    (C.T_TINY, 1, -128, 127), (C.T_TINY, 129, 0, 255),
    (C.T_SHORT, 1, -32768, 32767), (C.T_SHORT, 129, 0, 65535),
    (C.T_INT24, 1, -(1 << 23), (1 << 23) - 1), (C.T_INT24, 129, 0, (1 << 24) - 1),
    (C.T_LONG, 1, -(1 << 31), (1 << 31) - 1), (C.T_LONG, 129, 0, (1 << 32) - 1),
    (C.T_LONGLONG, 1, -(1 << 63), (1 << 63) - 1), (C.T_LONGLONG, 129, 0, (1 << 64) - 1),
    (C.T_YEAR, 1, 0, 2155), (C.T_BIT, 1, 0, (1 << 64) - 1), (C.T_SET, 1, 0, (1 << 64) - 1),
    (C.T_ENUM, 1, 0, 65535),
]


def _int_col(draw):
    t, f, lo, hi = draw(st.sampled_from(_INT_TYPES))
    v = draw(st.one_of(st.sampled_from([lo, hi, 0, 1, -1 if lo < 0 else 2]), st.integers(lo, hi)))
    return t, f, v, str(v)


def _float_col(draw):
    if draw(st.booleans()):
        x = _f32(draw(st.floats(width=32, allow_nan=False, allow_infinity=False)))
        x = draw(st.sampled_from([x, 153.123, 1e-7, -0.0, 3.4028234663852886e38, 1.401298464324817e-45]))
        x = _f32(x)
        return C.T_FLOAT, 1, x, format_float(x, 32)
    x = draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                       st.sampled_from([0.1 + 0.2, 1e-7, 1e21, 1e20, -0.0, 5e-324, 1.7976931348623157e308])))
    return C.T_DOUBLE, 1, x, format_float(x, 64)


def _decimal_col(draw):
    scale = draw(st.integers(0, 30))
    digits = draw(st.integers(1, 65 - scale)) if scale < 65 else 1
    intpart = draw(st.integers(0, 10 ** digits - 1))
    frac = draw(st.integers(0, 10 ** scale - 1)) if scale else 0
    neg = draw(st.booleans()) and (intpart or frac)
    text = ("-" if neg else "") + str(intpart) + (("." + str(frac).zfill(scale)) if scale else "")
    return C.T_NEWDECIMAL, 1, text, text


def _temporal_col(draw):
    kind = draw(st.sampled_from(["date", "datetime", "timestamp", "time", "zero"]))
    if kind == "zero":
        return C.T_DATETIME, 1, "0000-00-00 00:00:00", "0000-00-00 00:00:00"
    if kind == "time":
        h = draw(st.integers(0, 838))
        fsp = draw(st.integers(0, 6))
        text = f"{'-' if draw(st.booleans()) else ''}{h:02d}:{draw(st.integers(0, 59)):02d}:{draw(st.integers(0, 59)):02d}"
        if fsp:
            text += "." + str(draw(st.integers(0, 10 ** fsp - 1))).zfill(fsp)
        return C.T_DURATION, 1, text, text
    d = draw(st.dates())
    if kind == "date":
        return C.T_DATE, 1, d.isoformat(), d.isoformat()
    text = f"{d.isoformat()} {draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:{draw(st.integers(0, 59)):02d}"
    fsp = draw(st.integers(0, 6))
    if fsp:
        text += "." + str(draw(st.integers(0, 10 ** fsp - 1))).zfill(fsp)
    return (C.T_TIMESTAMP if kind == "timestamp" else C.T_DATETIME), 1, text, text


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20) | st.sampled_from(
    ["", "\u2028\u2029", "<a&b>", 'q"uote\\', "\x00\x01\x7f", "测试", "😀", "\ufeff"])
_BYTES = st.binary(max_size=24) | st.sampled_from([b"\x89PNG\r\n\x1a\n", b"\xff\xfe", b"\x00" * 4, b""])


def _string_col(draw):
    which = draw(st.sampled_from(["varchar", "varbinary", "char", "binary", "text", "blob", "json"]))
    if which in ("varchar", "char"):
        s = draw(_TEXT)
        return (C.T_VARCHAR if which == "varchar" else C.T_STRING), 64, s, s
    if which in ("varbinary", "binary"):
        b = draw(_BYTES)
        return (C.T_VARCHAR if which == "varbinary" else C.T_STRING), 65, b, base64.b64encode(b).decode()
    if which == "text":
        s = draw(_TEXT)
        return draw(st.sampled_from([249, 250, 251, 252])), 64, s, s
    if which == "blob":
        b = draw(_BYTES)
        return draw(st.sampled_from([249, 250, 251, 252])), 65, b, base64.b64encode(b).decode()
    s = draw(st.sampled_from(['{"key1": "value1"}', "[1, 2, 3]", "null", '{"a": "\u2028"}']))
    return C.T_JSON, 1, s, s


@st.composite
def columns(draw):
    n = draw(st.integers(1, 8))
    cols, expected = [], {}
    for i in range(n):
        gen = draw(st.sampled_from([_int_col, _float_col, _decimal_col, _temporal_col, _string_col]))
        t, f, v, text = gen(draw)
        if draw(st.integers(0, 9)) == 0:
            v = text = None
        name = f"c{i}_{draw(st.sampled_from(['', 'é', 'x']))}"
        cols.append(Col(name, t, v, f))
        expected[name] = text
    return cols, expected


@SETTINGS
@given(data=columns(), flavor=st.sampled_from(FLAVORS), compression=st.sampled_from(C.COMPRESSIONS),
       op=st.sampled_from(["INSERT", "UPDATE", "DELETE"]))
def test_every_type_round_trips(decoder_factory, data, flavor, compression, op):
    cols, expected = data
    after = cols if op != "DELETE" else None
    before = cols if op != "INSERT" else None
    events = [RowChange("db", "t", 449451550317215745, after=after, before=before, row_id=7),
              Resolved(449451550317215746)]
    msgs = OpenEncoder(flavor=flavor, compression=compression).encode(events)
    batch = decoder_factory(compression=compression).decode([k for k, _ in msgs], [v for _, v in msgs])
    rows = batch.to_pylist()
    assert rows[0]["_op"] == op
    img = rows[0]["after"] if op != "DELETE" else rows[0]["before"]
    assert dict(img) == expected
    assert rows[-1]["_op"] == "RESOLVED" and rows[-1]["_commit_ts"] == 449451550317215746


@differential
@SETTINGS
@given(data=columns(), flavor=st.sampled_from(FLAVORS))
def test_implementations_agree_generic_and_string_typed(data, flavor):
    cols, expected = data
    msgs = OpenEncoder(flavor=flavor).encode([RowChange("db", "t", 5, after=cols)])
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    out = [ticdc_fast.OpenDecoder(implementation=i).decode(keys, values) for i in ("cython", "python")]
    assert out[0].equals(out[1])
    schema = pa.schema([(c.name, pa.string()) for c in cols])
    a, b = (_typed_or_error(i, schema, keys, values) for i in ("cython", "python"))
    assert a == b if isinstance(a, tuple) or isinstance(b, tuple) else a.equals(b)


def _typed_or_error(impl, schema, keys, values, tz="UTC"):
    try:
        return ticdc_fast.OpenDecoder(table="db.t", schema=schema, implementation=impl,
                                      timezone=tz).decode(keys, values)
    except ticdc_fast.DecodeError as exc:
        return ("error", exc.message_index, exc.column)


@differential
@SETTINGS
@given(data=columns(), flavor=st.sampled_from(FLAVORS), tz=st.sampled_from(["UTC", "Asia/Shanghai"]))
def test_implementations_agree_inferred_types(data, flavor, tz):
    cols, _ = data
    msgs = OpenEncoder(flavor=flavor).encode([RowChange("db", "t", 5, after=cols)])
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    schema = ticdc_fast.infer_open_schema(keys, values, table="db.t")
    for s in (schema, ticdc_fast.spark_schema(schema)):
        a = _typed_or_error("cython", s, keys, values)
        b = _typed_or_error("python", s, keys, values)
        if isinstance(a, tuple) or isinstance(b, tuple):
            assert a == b
        else:
            assert a.equals(b)


def test_realistic_stream_both_flavours_all_compressions(decoder_factory):
    events = realistic_changefeed(3000, seed=3)
    schema = None
    for flavor in FLAVORS:
        for compression in C.COMPRESSIONS:
            msgs = OpenEncoder(flavor=flavor, compression=compression).encode(
                realistic_changefeed(3000, seed=3, flavor=flavor))
            keys = pa.array([k for k, _ in msgs], pa.binary())
            values = pa.array([v for _, v in msgs], pa.binary())
            batch = decoder_factory(compression=compression).decode(keys, values)
            n_rows = sum(isinstance(e, RowChange) for e in events)
            assert sum(op in ("INSERT", "UPDATE", "DELETE") for op in batch.column("_op").to_pylist()) == n_rows
            if schema is None:
                schema = ticdc_fast.infer_open_schema(keys, values, table="shop.orders",
                                                      compression=compression)
            typed = decoder_factory(table="shop.orders", schema=schema,
                                    compression=compression).decode(keys, values)
            assert typed.num_rows == batch.num_rows - sum(
                1 for op, tb in zip(batch.column("_op").to_pylist(), batch.column("_table").to_pylist())
                if op == "DDL" and tb != "orders")


def test_batched_control_events_legacy(decoder_factory):
    events = [RowChange("db", "t", 10, after=[Col("id", C.T_LONG, 1, 11)]),
              DDL("db", "t", 11, "ALTER TABLE t ADD c INT", 5), Resolved(12),
              RowChange("db", "t", 13, after=[Col("id", C.T_LONG, 2, 11)])]
    msgs = OpenEncoder(batch_control_events=True).encode(events)
    assert len(msgs) == 1
    rows = decoder_factory().decode([msgs[0][0]], [msgs[0][1]]).to_pylist()
    assert [r["_op"] for r in rows] == ["INSERT", "DDL", "RESOLVED", "INSERT"]
    assert rows[1]["_ddl"] == "ALTER TABLE t ADD c INT" and rows[1]["_ddl_type"] == 5
    assert rows[2]["_commit_ts"] == 12


def test_large_message_markers(decoder_factory):
    pk = [Col("id", C.T_LONGLONG, 42, 11)]
    for flavor in FLAVORS:
        events = [RowChange("db", "t", 10, after=pk, handle_key_only=True),
                  RowChange("db", "t", 11, after=pk, claim_check_location="s3://b/x/5f1c.json")]
        msgs = OpenEncoder(flavor=flavor, max_batch_size=1).encode(events)
        rows = decoder_factory().decode([k for k, _ in msgs], [v for _, v in msgs]).to_pylist()
        assert rows[0]["_handle_key_only"] is True and rows[0]["_claim_check_location"] is None
        assert rows[1]["_handle_key_only"] is False
        assert rows[1]["_claim_check_location"] == "s3://b/x/5f1c.json"
        assert dict(rows[0]["after"]) == {"id": "42"}
