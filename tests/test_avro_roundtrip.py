"""Avro protocol round trips: ``AvroEncoder`` (a faithful TiCDC encoder) → ``AvroDecoder``.

Every TiDB type and its edge values, in both TiCDC flavours, both decimal modes and both
BIGINT UNSIGNED modes; extension on/off; the test-only watermark values (0x01 DDL, 0x02
checkpoint, 0x03 delete); a realistic change stream with an ADD COLUMN in the middle, in-process
and over a real HTTP registry.  Generic text and typed values are asserted against values
computed here from the events, and the two implementations are compared with ``.equals``.
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast import _impl
from ticdc_fast.testing import (AvroColumn, AvroEncoder, LocalSchemaRegistry, avro_decimal_bytes,
                                realistic_avro_changefeed)
from ticdc_fast.testing.open_encoder import DDL, Col, Resolved, RowChange, make_tso

UTC = dt.timezone.utc
U64_MAX = (1 << 64) - 1
NULLABLE, UNSIGNED, BINARY, PK = C.FLAG_NULLABLE, C.FLAG_UNSIGNED, C.FLAG_BINARY, 11  # 11 = binary|handle|pk

needs_both = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")


def _decoder(impl, schemas, **kw):
    return ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, **kw)


def _schemas(enc: AvroEncoder) -> dict:
    return {sid: text for _, sid, text in enc.registered}


def _split(msgs):
    return [k for k, _ in msgs], [v for _, v in msgs]


def _maps(row):
    for m in ("after", "before", "_key"):
        if row.get(m) is not None:
            row[m] = dict(row[m])
    return row


# =========================================================================== every TiDB type
ALL_COLUMNS = [
    AvroColumn("id", C.T_LONGLONG, PK),
    AvroColumn("ti", C.T_TINY, NULLABLE), AvroColumn("tiu", C.T_TINY, NULLABLE | UNSIGNED),
    AvroColumn("si", C.T_SHORT, NULLABLE), AvroColumn("mi", C.T_INT24, NULLABLE),
    AvroColumn("i", C.T_LONG, NULLABLE), AvroColumn("iu", C.T_LONG, NULLABLE | UNSIGNED),
    AvroColumn("bi", C.T_LONGLONG, NULLABLE), AvroColumn("bu", C.T_LONGLONG, NULLABLE | UNSIGNED),
    AvroColumn("f", C.T_FLOAT, NULLABLE), AvroColumn("d", C.T_DOUBLE, NULLABLE),
    AvroColumn("dec65", C.T_NEWDECIMAL, NULLABLE | BINARY, length=65, scale=30),
    AvroColumn("dec0", C.T_NEWDECIMAL, NULLABLE | BINARY, length=10, scale=0),
    AvroColumn("dec2", C.T_NEWDECIMAL, BINARY, length=12, scale=2),                  # NOT NULL
    AvroColumn("b1", C.T_BIT, NULLABLE, length=1), AvroColumn("b12", C.T_BIT, NULLABLE, length=12),
    AvroColumn("b64", C.T_BIT, NULLABLE, length=64),
    AvroColumn("e", C.T_ENUM, NULLABLE, elements=("a,b", "c'd", "x")),
    AvroColumn("s", C.T_SET, NULLABLE, elements=("a,b", "c", "d")),
    AvroColumn("note", C.T_VARCHAR, NULLABLE, default="n/a"),         # nullable, non-null default
    AvroColumn("nn", C.T_LONG, 0, default="0"),                         # NOT NULL with a default
    AvroColumn("txt", C.T_BLOB, NULLABLE),                               # TEXT (not binary)
    AvroColumn("bin", C.T_VARCHAR, NULLABLE | BINARY),                   # VARBINARY
    AvroColumn("blob", C.T_BLOB, NULLABLE | BINARY),
    AvroColumn("dtm", C.T_DATETIME, NULLABLE), AvroColumn("ts", C.T_TIMESTAMP, NULLABLE),
    AvroColumn("dte", C.T_DATE, NULLABLE), AvroColumn("tm", C.T_DURATION, NULLABLE),
    AvroColumn("y", C.T_YEAR, NULLABLE), AvroColumn("j", C.T_JSON, NULLABLE),
    AvroColumn("vec", C.T_VECTOR, NULLABLE),
]
_F32_MAX = 3.4028234663852886e38
_F32_1E7 = struct.unpack("<f", struct.pack("<f", 1e-7))[0]      # 1.0000000116860974e-07
_F32_1_1 = struct.unpack("<f", struct.pack("<f", 1.1))[0]       # 1.100000023841858
DEC65_MAX = "9" * 35 + "." + "9" * 30

# (Col values, generic text of the non-null ones that differ from str(value))
ROWS = [
    dict(id=1, ti=-128, tiu=255, si=-32768, mi=-8388608, i=-2147483648, iu=4294967295, bi=-(1 << 63),
         bu=U64_MAX, f=_F32_MAX, d=5e-324, dec65="-" + DEC65_MAX, dec0="-128", dec2="-327.68",
         b1=1, b12=4095, b64=U64_MAX, e="a,b", s="a,b,d", note=None, nn=2147483647,
         txt="测试\u2028<&>", bin=b"\xff\xfe\x00", blob=b"\x80abc", dtm="2024-01-02 03:04:05.123456",
         ts="2024-03-10 02:30:00", dte="0000-00-00", tm="-838:59:59", y=2155,
         j='{"a": [1, 2], "k": "<&>"}', vec="[1,2,3]"),
    dict(id=2, ti=127, tiu=0, si=32767, mi=8388607, i=2147483647, iu=0, bi=(1 << 63) - 1,
         bu=1 << 63, f=-0.0, d=1e21, dec65="0.000000000000000000000000000001", dec0="-32768",
         dec2="0.00", b1=0, b12=5, b64=1 << 63, e="c'd", s="", note="n/a", nn=0, txt="", bin=b"",
         blob=b"", dtm="0000-00-00 00:00:00", ts="1970-01-01 00:00:01", dte="2024-02-29",
         tm="12:34:56.789", y=0, j="null", vec="[]"),
    dict(id=3, dec2="99999.99", nn=-1),                                  # every nullable NULL
    dict(id=4, f=_F32_1E7, d=1e20, dec65=DEC65_MAX, dec0="0", dec2="-0.01", b12=0, b64=0, bu=0,
         e="x", s="c", note="", tm="838:59:59.000000", nn=7),
    dict(id=5, f=_F32_1_1, d=0.1 + 0.2, dec0="9999999999", dec2="1.50", bi=-1, bu=(1 << 63) - 1, nn=-7,
         note="x,y", txt="line\nbreak\t\"q\"", bin=b"\x00", blob=bytes(range(256)),
         ts="2038-01-19 03:14:08", dte="9999-12-31", dtm="9999-12-31 23:59:59.999999", y=1901,
         tm="-00:00:01", j="[]", vec="[1.5,-2.25]"),
]
_FLOAT_TEXT = {_F32_MAX: "3.4028235e+38", 5e-324: "5e-324", -0.0: "-0", 1e21: "1e+21",
               _F32_1E7: "1e-7", 1e20: "100000000000000000000", _F32_1_1: "1.1",
               0.1 + 0.2: "0.30000000000000004"}


def _row_cols(values):
    return [Col(c.name, c.type, values.get(c.name), c.flags) for c in ALL_COLUMNS]


def _generic_text(values):
    out = {}
    for c in ALL_COLUMNS:
        v = values.get(c.name)
        if v is None:
            out[c.name] = None
        elif isinstance(v, bytes):
            out[c.name] = base64.b64encode(v).decode()
        elif isinstance(v, float):
            out[c.name] = _FLOAT_TEXT[v]
        else:
            out[c.name] = str(v)
    return out


def _typed_target(bigint_target):
    return pa.schema([
        ("id", pa.int64()), ("ti", pa.int8()), ("tiu", pa.uint8()), ("si", pa.int16()),
        ("mi", pa.int32()), ("i", pa.int32()), ("iu", pa.uint32()), ("bi", pa.int64()),
        ("bu", bigint_target), ("f", pa.float32()), ("d", pa.float64()),
        ("dec65", pa.decimal256(65, 30)), ("dec0", pa.decimal128(10, 0)), ("dec2", pa.decimal128(12, 2)),
        ("b1", pa.bool_()), ("b12", pa.uint16()), ("b64", pa.uint64()), ("e", pa.string()),
        ("s", pa.string()), ("note", pa.string()), ("nn", pa.int32()), ("txt", pa.string()),
        ("bin", pa.binary()), ("blob", pa.binary()),
        ("dtm", pa.string()), ("ts", pa.timestamp("us", tz="UTC")),   # zero dates: as text
        ("dte", pa.string()), ("tm", pa.duration("us")), ("y", pa.int16()), ("j", pa.string()),
        ("vec", pa.string()),
    ])


def _duration(text):
    neg = text.startswith("-")
    h, m, s = text.lstrip("-").split(":")
    sec, _, frac = s.partition(".")
    us = ((int(h) * 60 + int(m)) * 60 + int(sec)) * 1_000_000 + int((frac + "000000")[:6])
    return dt.timedelta(microseconds=-us if neg else us)


# TIMESTAMP wall clocks in America/New_York (decoder timezone=) → UTC
_NY_TS = {"2024-03-10 02:30:00": dt.datetime(2024, 3, 10, 7, 30, tzinfo=UTC),  # DST gap: fold=0, EST
          "1970-01-01 00:00:01": dt.datetime(1970, 1, 1, 5, 0, 1, tzinfo=UTC),
          "2038-01-19 03:14:08": dt.datetime(2038, 1, 19, 8, 14, 8, tzinfo=UTC)}


def _typed_values(values, bigint_decimal):
    out = {}
    for c in ALL_COLUMNS:
        v = values.get(c.name)
        n = c.name
        if v is None:
            out[n] = None
        elif n in ("dec65", "dec0", "dec2"):
            out[n] = Decimal(v)
        elif n == "bu" and bigint_decimal:
            out[n] = Decimal(v)
        elif n == "b1":
            out[n] = bool(v)
        elif n == "ts":
            out[n] = _NY_TS[v]
        elif n == "tm":
            out[n] = _duration(v)
        else:
            out[n] = v
    return out


def _all_types_stream(flavor, decimal_mode, bigint_mode):
    enc = AvroEncoder(table_columns={("db", "t"): ALL_COLUMNS}, flavor=flavor,
                      decimal_handling_mode=decimal_mode, bigint_unsigned_handling_mode=bigint_mode)
    events = [RowChange("db", "t", make_tso(1_700_000_000_000 + i, i), _row_cols(r))
              for i, r in enumerate(ROWS)]
    events.append(RowChange("db", "t", make_tso(1_700_000_001_000), _row_cols(ROWS[1]), _row_cols(ROWS[0])))
    events.append(RowChange("db", "t", make_tso(1_700_000_002_000), None, _row_cols(ROWS[1])))
    return enc, events, enc.encode(events)


@pytest.mark.parametrize("bigint_mode", ["long", "string"])
@pytest.mark.parametrize("decimal_mode", ["precise", "string"])
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_every_type_generic_text(impl, flavor, decimal_mode, bigint_mode):
    enc, events, msgs = _all_types_stream(flavor, decimal_mode, bigint_mode)
    value_schema = json.loads(enc.registered[0 if flavor == "tiflow" else 1][2])
    fields = {f["name"]: f for f in value_schema["fields"]}
    assert fields["bu"]["type"][1]["type"] == ("long" if bigint_mode == "long" else "string")
    assert fields["dec65"]["type"][1]["type"] == ("bytes" if decimal_mode == "precise" else "string")
    if decimal_mode == "precise":
        assert fields["dec65"]["type"][1]["precision"] == 65 and fields["dec65"]["type"][1]["scale"] == 30

    keys, values = _split(msgs)
    batch = _decoder(impl, _schemas(enc)).decode(keys, values)
    rows = [_maps(r) for r in batch.to_pylist()]
    assert [r["_op"] for r in rows] == ["INSERT"] * len(ROWS) + ["UPDATE", "DELETE"]
    for r, ev in zip(rows, events):
        assert r["_commit_ts"] == (ev.commit_ts if ev.after is not None else None)
        assert (r["_schema"], r["_table"]) == ("db", "t")
        assert r["_key"] == {"id": str(ev.before[0].value if ev.after is None else ev.after[0].value)}
    for r, values_ in zip(rows, ROWS):
        assert r["after"] == _generic_text(values_), values_["id"]
        assert r["before"] is None
    assert rows[len(ROWS)]["after"] == _generic_text(ROWS[1])          # UPDATE: the new image only
    assert rows[-1]["after"] is None and rows[-1]["before"] == {"id": "2"}  # tombstone: key only
    # edge values spelled out
    a = rows[0]["after"]
    assert a["bu"] == "18446744073709551615" and a["b64"] == "18446744073709551615"
    assert a["dec65"] == "-99999999999999999999999999999999999.999999999999999999999999999999"
    assert a["dec0"] == "-128" and a["dec2"] == "-327.68" and rows[1]["after"]["dec0"] == "-32768"
    assert a["e"] == "a,b" and a["s"] == "a,b,d" and rows[1]["after"]["s"] == ""
    assert a["bin"] == "//4A" and a["f"] == "3.4028235e+38" and a["d"] == "5e-324"
    assert rows[1]["after"]["bu"] == "9223372036854775808" and rows[1]["after"]["f"] == "-0"


@pytest.mark.parametrize("bigint_mode", ["long", "string"])
@pytest.mark.parametrize("decimal_mode", ["precise", "string"])
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_every_type_typed(impl, flavor, decimal_mode, bigint_mode):
    enc, events, msgs = _all_types_stream(flavor, decimal_mode, bigint_mode)
    keys, values = _split(msgs)
    for bigint_target, as_decimal in ((pa.uint64(), False), (pa.decimal128(20, 0), True)):
        target = _typed_target(bigint_target)
        dec = _decoder(impl, _schemas(enc), table="db.t", schema=target, timezone="America/New_York")
        batch = dec.decode(keys, values)
        assert batch.schema.names == ["_op", "_commit_ts"] + target.names + ["_ddl", "_value_schema_id"]
        for f in target:
            assert batch.schema.field(f.name).type == f.type
        rows = batch.to_pylist()
        assert len(rows) == len(ROWS) + 2
        for r, values_ in zip(rows, ROWS):
            got = {n: r[n] for n in target.names}
            assert got == _typed_values(values_, as_decimal), values_["id"]
        assert rows[1]["f"] == 0.0 and str(rows[1]["f"]) == "-0.0"       # the sign of -0 is kept
        assert rows[0]["bu"] == (Decimal(U64_MAX) if as_decimal else U64_MAX)
        delete = rows[-1]
        assert delete["_op"] == "DELETE" and delete["id"] == 2 and delete["_commit_ts"] is None
        assert all(delete[n] is None for n in target.names if n != "id")


def test_float_and_double_widths_in_schema():
    enc, _, _ = _all_types_stream("tiflow", "precise", "long")
    fields = {f["name"]: f for f in json.loads(enc.registered[0][2])["fields"]}
    assert fields["f"]["type"] == ["null", {"type": "float", "connect.parameters": {"tidb_type": "FLOAT"}}]
    assert fields["d"]["type"] == ["null", {"type": "double", "connect.parameters": {"tidb_type": "DOUBLE"}}]
    assert fields["iu"]["type"][1]["type"] == "long" and fields["i"]["type"][1]["type"] == "int"
    # nullable with a non-null default: [T, "null"], null is branch 1
    assert fields["note"] == {"default": "n/a", "name": "note",
                              "type": [{"type": "string", "connect.parameters": {"tidb_type": "TEXT"}}, "null"]}
    assert fields["nn"] == {"default": 0, "name": "nn",
                            "type": {"type": "int", "connect.parameters": {"tidb_type": "INT"}}}
    assert fields["e"]["type"][1]["connect.parameters"] == {"allowed": "a\\,b,c'd,x", "tidb_type": "ENUM"}
    assert fields["s"]["type"][1]["connect.parameters"] == {"allowed": "a\\,b,c,d", "tidb_type": "SET"}


def _one_column(flavor, col, value, **enc_kw):
    cols = [AvroColumn("id", C.T_LONGLONG, PK), col]
    enc = AvroEncoder(table_columns={("db", "t"): cols}, flavor=flavor, enable_tidb_extension=False, **enc_kw)
    k, v = enc.encode([RowChange("db", "t", make_tso(1), [Col("id", C.T_LONGLONG, 1, PK),
                                                          Col(col.name, col.type, value, col.flags)])])[0]
    return _schemas(enc), k, v


@pytest.mark.parametrize("flavor,nbits,value,body", [
    ("tiflow", 12, 5, b"\x02\x05"),               # minimal, at least one byte
    ("ticdc", 12, 5, b"\x04\x00\x05"),            # fixed ceil(12/8) = 2 bytes
    ("tiflow", 12, 0, b"\x02\x00"),
    ("ticdc", 64, 1, b"\x10" + b"\x00" * 7 + b"\x01"),
    ("tiflow", 64, U64_MAX, b"\x10" + b"\xff" * 8),
    ("ticdc", 1, 1, b"\x02\x01"),
])
def test_bit_flavours(impl, flavor, nbits, value, body):
    schemas, k, v = _one_column(flavor, AvroColumn("b", C.T_BIT, 0, length=nbits), value)
    assert v[5:] == b"\x02" + body                        # id 1, then the BIT bytes
    batch = _decoder(impl, schemas).decode([k], [v])
    assert dict(batch.to_pylist()[0]["after"]) == {"id": "1", "b": str(value)}
    typed = _decoder(impl, schemas, table="db.t", schema=pa.schema([("b", pa.uint64())])).decode([k], [v])
    assert typed.column("b").to_pylist() == [value]


@pytest.mark.parametrize("text,scale,raw", [
    ("-128", 0, b"\x80"), ("-32768", 0, b"\x80\x00"), ("0", 0, b"\x00"), ("127", 0, b"\x7f"),
    ("128", 0, b"\x00\x80"), ("-1.28", 2, b"\x80"), ("-0.01", 2, b"\xff"),
    ("-" + DEC65_MAX, 30, None), (DEC65_MAX, 30, None),
])
def test_precise_decimal_minimal_twos_complement(impl, text, scale, raw):
    col = AvroColumn("x", C.T_NEWDECIMAL, BINARY, length=65, scale=scale)
    schemas, k, v = _one_column("tiflow", col, text)
    body = avro_decimal_bytes(text, scale)
    if raw is not None:
        assert body == raw
    assert v[6:] == bytes([len(body) * 2]) + body         # after id 1: length, bytes
    batch = _decoder(impl, schemas).decode([k], [v])
    assert dict(batch.to_pylist()[0]["after"])["x"] == text
    typed = _decoder(impl, schemas, table="db.t",
                     schema=pa.schema([("x", pa.decimal256(65, scale))])).decode([k], [v])
    assert typed.column("x").to_pylist() == [Decimal(text)]


@pytest.mark.parametrize("mode", ["long", "string"])
def test_bigint_unsigned_max(impl, mode):
    col = AvroColumn("u", C.T_LONGLONG, UNSIGNED)
    schemas, k, v = _one_column("tiflow", col, U64_MAX, bigint_unsigned_handling_mode=mode)
    assert v[6:] == (b"\x01" if mode == "long" else b"\x28" + b"18446744073709551615")  # long: -1
    assert dict(_decoder(impl, schemas).decode([k], [v]).to_pylist()[0]["after"])["u"] == str(U64_MAX)
    for target, want in ((pa.uint64(), U64_MAX), (pa.decimal128(20, 0), Decimal(U64_MAX))):
        typed = _decoder(impl, schemas, table="db.t", schema=pa.schema([("u", target)]))
        assert typed.decode([k], [v]).column("u").to_pylist() == [want]


@pytest.mark.parametrize("value,branch", [(None, b"\x02"), ("n/a", b"\x00\x06n/a"), ("", b"\x00\x00")])
def test_nullable_column_with_default_union_order(impl, value, branch):
    col = AvroColumn("note", C.T_VARCHAR, NULLABLE, default="n/a")
    schemas, k, v = _one_column("tiflow", col, value)
    assert v[6:] == branch                                 # [T,"null"]: null is index 1
    assert dict(_decoder(impl, schemas).decode([k], [v]).to_pylist()[0]["after"])["note"] == value


# =========================================================================== extension on/off
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
@pytest.mark.parametrize("extension", [True, False])
def test_extension_on_and_off(impl, flavor, extension):
    cols = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("v", C.T_VARCHAR, NULLABLE)]
    enc = AvroEncoder(table_columns={("db", "t"): cols}, flavor=flavor, enable_tidb_extension=extension)

    def img(i, s):
        return [Col("id", C.T_LONGLONG, i, PK), Col("v", C.T_VARCHAR, s, NULLABLE)]

    ts = [make_tso(1_700_000_000_000 + i) for i in range(3)]
    msgs = enc.encode([RowChange("db", "t", ts[0], img(1, "a")),
                       RowChange("db", "t", ts[1], img(1, "b"), img(1, "a")),
                       RowChange("db", "t", ts[2], None, img(1, "b"))])
    value_fields = [f["name"] for f in json.loads(enc.schema_of(int.from_bytes(msgs[0][1][1:5], "big")))["fields"]]
    assert ("_tidb_op" in value_fields) is extension
    rows = [_maps(r) for r in _decoder(impl, _schemas(enc)).decode(*_split(msgs)).to_pylist()]
    if extension:
        assert [(r["_op"], r["_commit_ts"]) for r in rows] == [("INSERT", ts[0]), ("UPDATE", ts[1]), ("DELETE", None)]
    else:
        assert [(r["_op"], r["_commit_ts"]) for r in rows] == [("UPSERT", None), ("UPSERT", None), ("DELETE", None)]
    assert [r["after"] for r in rows] == [{"id": "1", "v": "a"}, {"id": "1", "v": "b"}, None]
    assert rows[2]["before"] == {"id": "1"}
    typed = _decoder(impl, _schemas(enc), table="db.t", schema=pa.schema([("id", pa.int64()), ("v", pa.string())]))
    trows = typed.decode(*_split(msgs)).to_pylist()
    assert [(r["_op"], r["id"], r["v"]) for r in trows] == [
        ("INSERT" if extension else "UPSERT", 1, "a"), ("UPDATE" if extension else "UPSERT", 1, "b"), ("DELETE", 1, None)]


# =========================================================================== watermark values
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_watermark_ddl_checkpoint_delete(impl, flavor):
    cols = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("v", C.T_LONG, NULLABLE)]
    enc = AvroEncoder(table_columns={("db", "t"): cols}, flavor=flavor, enable_watermark=True)
    t = [make_tso(1_700_000_000_000 + i, 3) for i in range(5)]
    query = 'CREATE TABLE `db`.`t` (`id` BIGINT PRIMARY KEY, `v` INT, c VARCHAR(9) DEFAULT "<é>")'
    img = [Col("id", C.T_LONGLONG, 9, PK), Col("v", C.T_LONG, -5, NULLABLE)]
    events = [DDL("db", "t", t[0], query, 3), RowChange("db", "t", t[1], img), Resolved(t[2]),
              RowChange("db", "t", t[3], None, img), DDL("other", "x", t[4], "DROP TABLE `other`.`x`", 4),
              Resolved(t[4])]
    msgs = enc.encode(events)
    keys, values = _split(msgs)
    assert [v[0] if v else None for v in values] == [1, 0, 2, 3 if flavor == "ticdc" else None, 1, 2]
    assert keys[0] is None and keys[2] is None and keys[3] is not None
    assert values[2] == b"\x02" + t[2].to_bytes(8, "big")
    rows = [_maps(r) for r in _decoder(impl, _schemas(enc)).decode(keys, values).to_pylist()]
    assert [r["_op"] for r in rows] == ["DDL", "INSERT", "RESOLVED", "DELETE", "DDL", "RESOLVED"]
    assert rows[0]["_ddl"] == query and rows[0]["_ddl_type"] == 3 and rows[0]["_commit_ts"] == t[0]
    assert (rows[0]["_schema"], rows[0]["_table"]) == ("db", "t")
    assert rows[2]["_commit_ts"] == t[2] and rows[2]["after"] is None and rows[2]["_schema"] is None
    assert rows[3]["before"] == {"id": "9"}
    assert rows[3]["_commit_ts"] == (t[3] if flavor == "ticdc" else None)     # 0x03 carries the ts
    assert (rows[4]["_schema"], rows[4]["_table"], rows[4]["_ddl_type"]) == ("other", "x", 4)

    target = pa.schema([("id", pa.int64()), ("v", pa.int32())])
    trows = _decoder(impl, _schemas(enc), table="db.t", schema=target).decode(keys, values).to_pylist()
    assert [(r["_op"], r["_commit_ts"], r["id"], r["v"], r["_ddl"]) for r in trows] == [
        ("DDL", t[0], None, None, query), ("INSERT", t[1], 9, -5, None), ("RESOLVED", t[2], None, None, None),
        ("DELETE", t[3] if flavor == "ticdc" else None, 9, None, None), ("RESOLVED", t[4], None, None, None)]
    quiet = _decoder(impl, _schemas(enc), table="db.t", schema=target, control_events=False)
    assert quiet.decode(keys, values).column("_op").to_pylist() == ["INSERT", "DELETE"]


def test_watermark_needs_the_extension():
    cols = [AvroColumn("id", C.T_LONGLONG, PK)]
    enc = AvroEncoder(table_columns={("db", "t"): cols}, flavor="ticdc", enable_watermark=True,
                      enable_tidb_extension=False)
    msgs = enc.encode([DDL("db", "t", 5, "CREATE TABLE t (id int)", 3),
                       RowChange("db", "t", 6, None, [Col("id", C.T_LONGLONG, 1, PK)]), Resolved(7)])
    assert len(msgs) == 1 and msgs[0][1] is None                    # only the tombstone


# =========================================================================== realistic stream
def _go_float(x: float) -> str:
    r = repr(float(x))
    assert "e" not in r and "inf" not in r and "nan" not in r, r
    return r[:-2] if r.endswith(".0") else r


def _realistic_expectations(events, table_columns, key_id, value_ids, delete_ts):
    """Expected generic rows and typed rows of a realistic_avro_changefeed stream, computed from
    the events (watermark on: DDL and Resolved become rows; ``delete_ts``: 0x03 delete values)."""
    defs = {c.name: c for c in table_columns[("shop", "orders")]}
    status, tags = defs["status"].elements, defs["tags"].elements

    def text(c):
        v = c.value
        if v is None:
            return None
        if c.name == "status":
            return status[v - 1]
        if c.name == "tags":
            return ",".join(e for i, e in enumerate(tags) if v >> i & 1)
        if isinstance(v, bytes):
            return base64.b64encode(v).decode()
        if isinstance(v, float):
            return _go_float(v)
        return str(v)

    def typed(c):
        v = c.value
        if v is None:
            return None
        if c.name in ("status", "tags"):
            return text(c)
        if c.name == "amount":
            return Decimal(v)
        if c.name == "created_at":
            return dt.datetime.strptime(v, "%Y-%m-%d %H:%M:%S.%f")
        if c.name == "updated_at":
            return dt.datetime.strptime(v, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        return v

    generic, typed_rows = [], []
    names = [c.name for c in table_columns[("shop", "orders")]]
    vid = value_ids[0]
    base = dict(_schema="shop", _table="orders", _ddl=None, _ddl_type=None, _checksum=None,
                _checksum_corrupted=None, _checksum_version=None)
    for ev in events:
        if isinstance(ev, DDL):
            if ev.ddl_type == 5:
                vid = value_ids[1]
            generic.append(dict(base, _op="DDL", _commit_ts=ev.commit_ts, _ddl=ev.query, _ddl_type=ev.ddl_type,
                                after=None, before=None, _key=None, _key_schema_id=None, _value_schema_id=None))
            typed_rows.append(dict({n: None for n in names}, _op="DDL", _commit_ts=ev.commit_ts, _ddl=ev.query,
                                   _value_schema_id=None))
        elif isinstance(ev, Resolved):
            generic.append(dict({k: None for k in base}, _op="RESOLVED", _commit_ts=ev.ts, after=None, before=None,
                                _key=None, _key_schema_id=None, _value_schema_id=None))
            typed_rows.append(dict({n: None for n in names}, _op="RESOLVED", _commit_ts=ev.ts, _ddl=None,
                                   _value_schema_id=None))
        elif ev.after is None:
            key = {"id": str(ev.before[0].value)}
            cts = ev.commit_ts if delete_ts else None
            generic.append(dict(base, _op="DELETE", _commit_ts=cts, after=None, before=key, _key=key,
                                _key_schema_id=key_id, _value_schema_id=None))
            typed_rows.append(dict({n: None for n in names}, _op="DELETE", _commit_ts=cts,
                                   id=ev.before[0].value, _ddl=None, _value_schema_id=None))
        else:
            op = "INSERT" if ev.before is None else "UPDATE"
            generic.append(dict(base, _op=op, _commit_ts=ev.commit_ts, after={c.name: text(c) for c in ev.after},
                                before=None, _key={"id": str(ev.after[0].value)}, _key_schema_id=key_id,
                                _value_schema_id=vid))
            row = {n: None for n in names}
            row.update({c.name: typed(c) for c in ev.after})
            typed_rows.append(dict(row, _op=op, _commit_ts=ev.commit_ts, _ddl=None, _value_schema_id=vid))
    return generic, typed_rows


REALISTIC_TARGET = pa.schema([
    ("id", pa.int64()), ("customer_id", pa.uint32()), ("amount", pa.decimal128(12, 2)),
    ("price", pa.float64()), ("weight", pa.float32()), ("qty", pa.int16()), ("status", pa.string()),
    ("tags", pa.string()), ("note", pa.string()), ("created_at", pa.timestamp("us")),
    ("updated_at", pa.timestamp("us", tz="UTC")), ("payload", pa.binary()),
    ("big_counter", pa.uint64()), ("flags", pa.uint16()), ("attrs", pa.string()), ("region", pa.string()),
])


def _check_realistic(impl, enc, events, tc, msgs, schemas=None, registry=None):
    subjects = [(s, sid) for s, sid, _ in enc.registered]
    key_id = next(sid for s, sid in subjects if s.endswith("-key"))
    value_ids = [sid for s, sid in subjects if s.endswith("-value")]
    assert len(value_ids) == 2 and value_ids[0] != value_ids[1]       # ADD COLUMN: a new id
    want_generic, want_typed = _realistic_expectations(events, tc, key_id, value_ids,
                                                       enc.flavor == "ticdc" and enc.enable_watermark)
    keys, values = _split(msgs)
    src = {"schemas": schemas} if registry is None else {"registry": registry}
    batch = ticdc_fast.AvroDecoder(implementation=impl, **src).decode(keys, values)
    got = [_maps(r) for r in batch.to_pylist()]
    assert len(got) == len(want_generic)
    for i, (g, w) in enumerate(zip(got, want_generic)):
        assert g == w, i
    typed = ticdc_fast.AvroDecoder(implementation=impl, table="shop.orders", schema=REALISTIC_TARGET,
                                   timezone="UTC", **src).decode(keys, values)
    trows = typed.to_pylist()
    for i, (g, w) in enumerate(zip(trows, want_typed)):
        assert g == w, i
    assert len(trows) == len(want_typed)
    ops = [r["_op"] for r in got]
    assert {"INSERT", "UPDATE", "DELETE", "DDL", "RESOLVED"} <= set(ops)
    return batch, typed


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_realistic_changefeed_with_add_column(impl, flavor):
    events, tc = realistic_avro_changefeed(160, seed=11, add_column_at=80, resolved_every=50)
    enc = AvroEncoder(table_columns=tc, flavor=flavor, enable_watermark=True)
    msgs = enc.encode(events)
    _check_realistic(impl, enc, events, tc, msgs, schemas=_schemas(enc))


def test_realistic_changefeed_ticdc_delete_values(impl):
    events, tc = realistic_avro_changefeed(120, seed=5, add_column_at=60)
    enc = AvroEncoder(table_columns=tc, flavor="ticdc", enable_watermark=True)
    msgs = enc.encode(events)
    assert len(msgs) == len(events)                      # watermark on: one message per event
    deletes = [(ev, m) for ev, m in zip(events, msgs) if isinstance(ev, RowChange) and ev.after is None]
    assert deletes and all(m[1] == b"\x03" + ev.commit_ts.to_bytes(8, "big") for ev, m in deletes)
    batch = _decoder(impl, _schemas(enc)).decode(*_split(msgs))
    deleted = [r for r in batch.to_pylist() if r["_op"] == "DELETE"]
    assert len(deleted) == len(deletes)
    for (ev, _), r in zip(deletes, deleted):
        assert r["_commit_ts"] == ev.commit_ts and dict(r["before"]) == {"id": str(ev.before[0].value)}


def test_realistic_changefeed_over_http_registry(impl):
    events, tc = realistic_avro_changefeed(100, seed=2, add_column_at=40, resolved_every=30)
    # a loopback address of its own: the decoder's schema cache is per process, keyed by URL
    with LocalSchemaRegistry(host="127.84.0.1" if impl == "cython" else "127.84.0.2") as reg:
        enc = AvroEncoder(reg.url, table_columns=tc, enable_watermark=True, topic="shop.orders")
        msgs = enc.encode(events)
        assert set(reg.subjects) == {"shop_orders-key", "shop_orders-value"}   # sanitizeTopic
        _check_realistic(impl, enc, events, tc, msgs, registry=reg.url)


# =========================================================================== cython == python
@needs_both
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_implementations_agree(flavor):
    streams = []
    for dm in ("precise", "string"):
        for bm in ("long", "string"):
            enc, _, msgs = _all_types_stream(flavor, dm, bm)
            streams.append((_schemas(enc), msgs, {"table": "db.t", "schema": _typed_target(pa.uint64()),
                                                  "timezone": "America/New_York"}))
    events, tc = realistic_avro_changefeed(300, seed=7, add_column_at=150, resolved_every=40)
    enc = AvroEncoder(table_columns=tc, flavor=flavor, enable_watermark=True)
    msgs = enc.encode(events)
    streams.append((_schemas(enc), msgs, {"table": "shop.orders", "schema": REALISTIC_TARGET,
                                                        "timezone": "Europe/Berlin"}))
    for schemas, msgs, typed_kw in streams:
        keys, values = _split(msgs)
        parts, offs = [i % 3 for i in range(len(keys))], list(range(len(keys)))
        for kw in ({}, typed_kw):
            a = _decoder("cython", schemas, **kw).decode(keys, values, partitions=parts, offsets=offs)
            b = _decoder("python", schemas, **kw).decode(keys, values, partitions=parts, offsets=offs)
            assert a.schema == b.schema
            assert a.equals(b)


# =========================================================================== checksums, inputs
def test_checksum_fields(impl):
    """``[integrity]`` row checksums: _tidb_row_level_checksum / _tidb_corrupted / _tidb_checksum_version."""
    import io

    import fastavro
    fields = [{"name": "id", "type": {"type": "long", "connect.parameters": {"tidb_type": "BIGINT"}}},
              {"default": "", "name": "_tidb_op", "type": "string"},
              {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
              {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"},
              {"default": "", "name": "_tidb_row_level_checksum", "type": "string"},
              {"default": False, "name": "_tidb_corrupted", "type": "boolean"},
              {"default": 0, "name": "_tidb_checksum_version", "type": "int"}]
    schema = {"type": "record", "name": "t", "namespace": "default.db", "fields": fields}
    parsed = fastavro.parse_schema(schema)
    ts = make_tso(1_700_000_000_000)

    def frame(rec):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, rec)
        return b"\x00\x00\x00\x00\x05" + buf.getvalue()

    base = {"_tidb_op": "c", "_tidb_commit_ts": ts, "_tidb_commit_physical_time": ts >> 18}
    values = [frame(dict(base, id=1, _tidb_row_level_checksum="4294967295", _tidb_corrupted=False, _tidb_checksum_version=1)),
              frame(dict(base, id=2, _tidb_row_level_checksum="17", _tidb_corrupted=True, _tidb_checksum_version=1)),
              frame(dict(base, id=3, _tidb_row_level_checksum="", _tidb_corrupted=False, _tidb_checksum_version=0))]
    rows = _decoder(impl, {5: json.dumps(schema)}).decode(None, values).to_pylist()
    assert [(r["_checksum"], r["_checksum_corrupted"], r["_checksum_version"]) for r in rows] == [
        ("4294967295", False, 1), ("17", True, 1), (None, False, 0)]
    assert [dict(r["after"]) for r in rows] == [{"id": "1"}, {"id": "2"}, {"id": "3"}]   # no _tidb_* columns
    assert [r["_key"] for r in rows] == [None] * 3


def test_arrow_and_buffer_inputs(impl):
    enc, _, msgs = _all_types_stream("ticdc", "precise", "long")
    keys, values = _split(msgs)
    dec = _decoder(impl, _schemas(enc))
    want = dec.decode(keys, values)
    as_arrow = dec.decode(pa.chunked_array([pa.array(keys[:3], pa.binary()), pa.array(keys[3:], pa.binary())]),
                          pa.array(values, pa.large_binary()))
    assert as_arrow.equals(want)
    as_buffers = dec.decode([None if k is None else bytearray(k) for k in keys],
                            [None if v is None else memoryview(v) for v in values])
    assert as_buffers.equals(want)
    assert dec.decode([], []).num_rows == 0 and dec.decode([], []).schema == dec.output_schema()


def test_large_batch_equals_small_batches(impl):
    """Buffer growth: one large batch equals the same messages decoded in odd-sized batches."""
    events, tc = realistic_avro_changefeed(6000, seed=13, add_column_at=3000, resolved_every=700)
    enc = AvroEncoder(table_columns=tc, flavor="ticdc", enable_watermark=True)
    keys, values = _split(enc.encode(events))
    n = len(keys)
    target = pa.schema([("id", pa.int64()), ("amount", pa.decimal128(12, 2)), ("note", pa.string()),
                        ("payload", pa.binary()), ("region", pa.string()), ("big_counter", pa.uint64())])
    for kw in ({}, {"table": "shop.orders", "schema": target}):
        dec = _decoder(impl, _schemas(enc), **kw)
        whole = dec.decode(keys, values, offsets=list(range(n)))
        assert whole.num_rows == n
        parts = [dec.decode(keys[i:i + 997], values[i:i + 997], offsets=list(range(i, min(i + 997, n))))
                 for i in range(0, n, 997)]
        assert pa.Table.from_batches(parts).combine_chunks().to_batches()[0].equals(whole)
        assert whole.column("_offset").to_pylist() == list(range(n))
