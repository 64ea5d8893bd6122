"""Simple-protocol typed mode (``table="db.t", schema=pa.schema(...)``): values are converted by
each row's own TableSchema version; ENUM/SET names; table filtering; the default schema from a
seeded TableSchema; the Spark variant; and differential checks against the reference twin."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.simple import arrow_schema, table_schema_from_dict
from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML, SimpleEncoder,
                                SimpleTable, SimpleWatermark, make_tso, orders_table, simple_changefeed)

ENCODINGS = ("json", "avro")
T0 = 1_714_521_600_000
UTC = dt.timezone.utc

differential = pytest.mark.skipif(_impl.PURE_FORCED,
                                  reason="TICDC_FAST_PURE=1: differential core-vs-twin test")


def _values(encoding, events, **kw):
    return [v for _, v in SimpleEncoder(encoding, **kw).encode(events)]


def _typed(encoding, impl, schema, table="db.t", **kw):
    return ticdc_fast.SimpleDecoder(encoding, table=table, schema=schema, implementation=impl, **kw)


BASE = SimpleTable("db", "t", 50, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("n", "int", unsigned=True),
    SimpleColumn("flag", "tinyint", length=1), SimpleColumn("name", "varchar", length=20),
    SimpleColumn("e", "enum", elements=["lo", "mid", "hi"]), SimpleColumn("s", "set", elements=["r", "w", "x"]),
    SimpleColumn("ts", "timestamp", decimal=6), SimpleColumn("d", "date"), SimpleColumn("dtm", "datetime", decimal=3),
    SimpleColumn("j", "json"), SimpleColumn("dbl", "double"), SimpleColumn("amt", "decimal", length=10, decimal=2)])
OTHER = SimpleTable("db", "other", 51, make_tso(T0 - 10_000), [SimpleColumn("id", "int", nullable=False)])

ROW = {"id": 1, "n": 4294967295, "flag": 1, "name": "héllo", "e": "hi", "s": "r,x",
       "ts": ("Europe/Paris", "2024-07-14 12:00:00.123456"), "d": "2024-02-29",
       "dtm": "2024-07-14 12:00:00.500", "j": '{"k": [1]}', "dbl": 0.5, "amt": "-12.30"}


# --------------------------------------------------------------------------- output layout
def test_output_schema_layout(impl):
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    dec = _typed("json", impl, schema)
    out = dec.output_schema(partitions=True, offsets=True)
    assert out.names == ["_op", "_commit_ts", "id", "name", "_ddl", "_ddl_type", "_schema_version",
                         "_handle_key_only", "_claim_check_location", "_undecodable", "_raw",
                         "_partition", "_offset"]
    assert out.field("id").type == pa.int64() and out.field("_raw").type == pa.binary()
    batch = dec.decode(None, _values("json", [SimpleBootstrap(BASE), SimpleDML(BASE, "INSERT", make_tso(T0), data=ROW)]),
                       partitions=[1, 1], offsets=[5, 6])
    assert batch.schema.equals(out)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_basic_values(encoding, impl):
    schema = pa.schema([("id", pa.int64()), ("n", pa.uint32()), ("flag", pa.bool_()), ("name", pa.string()),
                        ("e", pa.string()), ("s", pa.string()), ("ts", pa.timestamp("us", tz="UTC")),
                        ("d", pa.date32()), ("dtm", pa.timestamp("us")), ("j", pa.string()),
                        ("dbl", pa.float32()), ("amt", pa.decimal128(10, 2))])
    evs = [SimpleBootstrap(BASE), SimpleDML(BASE, "INSERT", make_tso(T0), data=ROW)]
    r = _typed(encoding, impl, schema).decode(None, _values(encoding, evs)).to_pylist()[1]
    assert r["id"] == 1 and r["n"] == 4294967295 and r["flag"] is True
    assert r["name"] == "héllo" and r["e"] == "hi" and r["s"] == "r,x"
    assert r["ts"] == dt.datetime(2024, 7, 14, 10, 0, 0, 123456, tzinfo=UTC)      # CEST = UTC+2
    assert r["d"] == dt.date(2024, 2, 29)
    assert r["dtm"] == dt.datetime(2024, 7, 14, 12, 0, 0, 500000)                  # DATETIME: no zone
    assert r["j"] == '{"k": [1]}' and r["dbl"] == 0.5 and r["amt"] == Decimal("-12.30")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_alternative_targets(encoding, impl):
    schema = pa.schema([("id", pa.float64()), ("n", pa.int64()), ("e", pa.uint16()), ("s", pa.uint64()),
                        ("ts", pa.string()), ("name", pa.binary()), ("j", pa.binary()),
                        ("amt", pa.decimal256(40, 5)), ("flag", pa.int8()), ("dbl", pa.float64()),
                        ("d", pa.timestamp("us")), ("ts2", pa.int32())])
    evs = [SimpleBootstrap(BASE), SimpleDML(BASE, "INSERT", make_tso(T0), data=ROW)]
    r = _typed(encoding, impl, schema).decode(None, _values(encoding, evs)).to_pylist()[1]
    assert r["id"] == 1.0 and r["n"] == 4294967295
    assert r["e"] == 3 and r["s"] == 0b101
    assert r["ts"] == "2024-07-14 10:00:00.123456Z"
    assert r["name"] == "héllo".encode() and r["j"] == b'{"k": [1]}'
    assert r["amt"] == Decimal("-12.30000") and r["flag"] == 1 and r["dbl"] == 0.5
    assert r["d"] == dt.datetime(2024, 2, 29)
    assert r["ts2"] is None                    # not a column of the table: always null


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_update_and_delete_images(encoding, impl):
    new = dict(ROW, name="after", e="lo", amt="1.00")
    evs = [SimpleBootstrap(BASE), SimpleDML(BASE, "UPDATE", make_tso(T0 + 1), data=new, old=ROW),
           SimpleDML(BASE, "DELETE", make_tso(T0 + 2), old=new)]
    schema = pa.schema([("name", pa.string()), ("e", pa.string()), ("amt", pa.decimal128(10, 2))])
    rows = _typed(encoding, impl, schema).decode(None, _values(encoding, evs)).to_pylist()
    assert [(r["_op"], r["name"], r["e"], r["amt"]) for r in rows] == [
        ("BOOTSTRAP", None, None, None), ("UPDATE", "after", "lo", Decimal("1.00")),
        ("DELETE", "after", "lo", Decimal("1.00"))]
    assert [r["_commit_ts"] for r in rows[1:]] == [make_tso(T0 + 1), make_tso(T0 + 2)]


# --------------------------------------------------------------------------- table filtering
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_table_filter_and_control_events(encoding, impl):
    evs = [SimpleBootstrap(OTHER), SimpleBootstrap(BASE),
           SimpleDML(OTHER, "INSERT", make_tso(T0), data={"id": 9}),
           SimpleDML(BASE, "INSERT", make_tso(T0 + 1), data={"id": 1}),
           SimpleDDL("TRUNCATE", "TRUNCATE TABLE other", make_tso(T0 + 2), OTHER, OTHER),
           SimpleDDL("ALTER", "ALTER TABLE t COMMENT 'x'", make_tso(T0 + 3), BASE, BASE),
           SimpleWatermark(make_tso(T0 + 4))]
    values = _values(encoding, evs)
    schema = pa.schema([("id", pa.int64())])
    rows = _typed(encoding, impl, schema).decode(None, values, offsets=list(range(len(values)))).to_pylist()
    assert [(r["_op"], r["_offset"], r["id"]) for r in rows] == [
        ("BOOTSTRAP", 1, None), ("INSERT", 3, 1), ("DDL", 5, None), ("RESOLVED", 6, None)]
    assert rows[2]["_ddl"] == "ALTER TABLE t COMMENT 'x'" and rows[2]["_ddl_type"] == "ALTER"
    assert rows[0]["_ddl_type"] == "BOOTSTRAP" and rows[0]["_schema_version"] == BASE.version
    quiet = _typed(encoding, impl, schema, control_events=False).decode(None, values).to_pylist()
    assert [(r["_op"], r["id"]) for r in quiet] == [("INSERT", 1)]


def test_generic_mode_keeps_every_table(impl):
    evs = [SimpleBootstrap(OTHER), SimpleBootstrap(BASE), SimpleDML(OTHER, "INSERT", make_tso(T0), data={"id": 9}),
           SimpleDML(BASE, "INSERT", make_tso(T0 + 1), data={"id": 1})]
    rows = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, _values("json", evs)).to_pylist()
    # control_events only applies to typed mode: given to a generic decoder it is an error, not ignored
    with pytest.raises(ValueError, match="control_events=False is for typed mode"):
        ticdc_fast.SimpleDecoder("json", implementation=impl, control_events=False)
    assert [(r["_op"], r["_table"]) for r in rows] == [("BOOTSTRAP", "other"), ("BOOTSTRAP", "t"),
                                                         ("INSERT", "other"), ("INSERT", "t")]


# --------------------------------------------------------------------------- default schema
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_default_schema_from_seed(encoding, impl):
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", schemas=[BASE.table_schema_json()], implementation=impl)
    out = dec.output_schema()
    default = arrow_schema(table_schema_from_dict(BASE.table_schema_json()))
    assert out.names[2:2 + len(default)] == default.names
    for f in default:
        assert out.field(f.name).type == f.type
    r = dec.decode(None, _values(encoding, [SimpleDML(BASE, "INSERT", make_tso(T0), data=ROW)])).to_pylist()[0]
    assert r["n"] == 4294967295 and r["e"] == "hi" and r["s"] == "r,x" and r["amt"] == Decimal("-12.30")
    assert r["flag"] == 1 and r["ts"] == dt.datetime(2024, 7, 14, 10, 0, 0, 123456, tzinfo=UTC)


def test_typed_default_schema_uses_latest_version(impl):
    v2 = SimpleTable("db", "t", 50, make_tso(T0 - 5_000), BASE.columns + [SimpleColumn("late", "smallint")])
    dec = ticdc_fast.SimpleDecoder("json", table="db.t", implementation=impl,
                                   schemas=[v2.table_schema_json(), BASE.table_schema_json()])
    assert dec.output_schema().field("late").type == pa.int16()


def test_typed_without_schema_or_seed(impl):
    dec = ticdc_fast.SimpleDecoder("json", table="db.t", implementation=impl)
    with pytest.raises(ValueError, match="schema"):
        dec.decode(None, _values("json", [SimpleBootstrap(BASE)]))


def test_typed_rejects_unsupported_target():
    with pytest.raises(TypeError):
        ticdc_fast.SimpleDecoder("json", table="db.t", schema=pa.schema([("id", pa.list_(pa.int32()))]))


# --------------------------------------------------------------------------- per-version types
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_converts_by_each_rows_own_version(encoding, impl):
    """MODIFY COLUMN: ``c`` is INT in v1 and VARCHAR in v2; ``e`` gets its elements reordered.
    Rows of each version are read with that version's types and elements."""
    v1 = SimpleTable("db", "m", 60, make_tso(T0 - 9_000), [
        SimpleColumn("id", "int", nullable=False), SimpleColumn("c", "int"),
        SimpleColumn("e", "enum", elements=["a", "b"]), SimpleColumn("s", "set", elements=["p", "q"])])
    v2 = SimpleTable("db", "m", 60, make_tso(T0 - 4_000), [
        SimpleColumn("id", "int", nullable=False), SimpleColumn("c", "varchar", length=10),
        SimpleColumn("e", "enum", elements=["b", "c", "a"]), SimpleColumn("s", "set", elements=["q", "p", "z"])])
    evs = [SimpleBootstrap(v1), SimpleDML(v1, "INSERT", make_tso(T0), data={"id": 1, "c": -5, "e": 2, "s": 1}),
           SimpleDDL("ALTER", "ALTER TABLE m MODIFY c varchar(10), MODIFY e enum('b','c','a'), "
                     "MODIFY s set('q','p','z')", make_tso(T0 + 1), v2, v1),
           SimpleDML(v2, "INSERT", make_tso(T0 + 2), data={"id": 2, "c": "abc", "e": 2, "s": 5}),
           SimpleDML(v1, "UPDATE", make_tso(T0 + 3), data={"id": 1, "c": 7, "e": 1, "s": 3},
                     old={"id": 1, "c": -5, "e": 2, "s": 1})]
    values = _values(encoding, evs)
    schema = pa.schema([("id", pa.int32()), ("c", pa.string()), ("e", pa.string()), ("s", pa.string())])
    rows = _typed(encoding, impl, schema, table="db.m").decode(None, values).to_pylist()
    assert [(r["_op"], r["id"], r["c"], r["e"], r["s"]) for r in rows] == [
        ("BOOTSTRAP", None, None, None, None),
        ("INSERT", 1, "-5", "b", "p"),
        ("DDL", None, None, None, None),
        ("INSERT", 2, "abc", "c", "q,z"),
        ("UPDATE", 1, "7", "a", "p,q")]
    assert [r["_schema_version"] for r in rows] == [v1.version, v1.version, v2.version, v2.version, v1.version]
    # an integer target accepts the INT rows and refuses the VARCHAR row
    ints = _typed(encoding, impl, pa.schema([("c", pa.int64())]), table="db.m")
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        ints.decode(None, values)
    assert ei.value.message_index == 3 and ei.value.column == "c"
    ok = _typed(encoding, impl, pa.schema([("c", pa.int64())]), table="db.m").decode(None, values[:3])
    assert ok.column("c").to_pylist() == [None, -5, None]


# --------------------------------------------------------------------------- conversion limits
LIMITS = [
    ("n", 4294967295, pa.int32(), None),          # uint32 max into int32
    ("n", 4294967295, pa.uint32(), 4294967295),
    ("n", 4294967295, pa.int64(), 4294967295),
    ("flag", 2, pa.bool_(), None),
    ("flag", 0, pa.bool_(), False),
    ("id", (1 << 53) + 1, pa.float64(), None),   # not exact as a double
    ("id", 1 << 53, pa.float64(), float(1 << 53)),
    ("id", -(1 << 63), pa.int64(), -(1 << 63)),
    ("id", -1, pa.uint64(), None),
    ("dbl", 0.1, pa.float32(), None),             # not exact as float32
    ("dbl", 0.1, pa.float64(), 0.1),
    ("dbl", 1e300, pa.float32(), None),
    ("amt", "12345678.99", pa.decimal128(9, 2), None),   # 10 digits into precision 9
    ("amt", "12345678.99", pa.decimal128(10, 2), Decimal("12345678.99")),
    ("amt", "1.25", pa.decimal128(10, 1), None),          # would lose a digit
    ("amt", "1.20", pa.decimal128(10, 1), Decimal("1.2")),
    ("amt", "-3.00", pa.int8(), -3),
    ("amt", "-3.50", pa.int8(), None),
    ("e", "mid", pa.uint8(), 2),
    ("s", "w,x", pa.uint8(), 6),
    ("name", "x", pa.int32(), None),
    ("d", "2024-02-30", pa.date32(), None),
    ("d", "2024-02-29", pa.string(), "2024-02-29"),
    ("dtm", "2024-07-14 12:00:00.500", pa.date32(), None),
    ("j", "[1]", pa.int32(), None),
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("col,value,target,want", LIMITS,
                         ids=[f"{c}-{v}-{t}" for c, v, t, _ in LIMITS])
def test_typed_conversion_limits(col, value, target, want, encoding, impl):
    evs = [SimpleBootstrap(BASE), SimpleDML(BASE, "INSERT", make_tso(T0), data={"id": 7, col: value})
           if col != "id" else SimpleDML(BASE, "INSERT", make_tso(T0), data={"id": value})]
    dec = _typed(encoding, impl, pa.schema([(col, target)]))
    values = _values(encoding, evs)
    if want is None:
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode(None, values)
        assert ei.value.message_index == 1 and ei.value.column == col
    else:
        got = dec.decode(None, values).column(col).to_pylist()[1]
        assert got == want and type(got) is type(want)


# --------------------------------------------------------------------------- timestamps
ZONES = [("UTC", "2024-01-01 00:00:00.000001", dt.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC)),
         ("Asia/Shanghai", "2024-01-01 08:00:00.000000", dt.datetime(2024, 1, 1, tzinfo=UTC)),
         ("America/New_York", "2024-11-03 01:30:00.000000", dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC)),
         ("America/New_York", "2024-11-03 01:59:59.999999", dt.datetime(2024, 11, 3, 5, 59, 59, 999999, tzinfo=UTC)),
         ("America/New_York", "2024-11-03 02:00:00.000000", dt.datetime(2024, 11, 3, 7, 0, tzinfo=UTC)),
         ("America/New_York", "2024-03-10 02:30:00.000000", dt.datetime(2024, 3, 10, 7, 30, tzinfo=UTC)),
         ("America/New_York", "2024-03-10 03:00:00.000000", dt.datetime(2024, 3, 10, 7, 0, tzinfo=UTC)),
         ("Europe/Dublin", "2024-10-27 01:30:00.000000", dt.datetime(2024, 10, 27, 0, 30, tzinfo=UTC)),
         ("Australia/Lord_Howe", "2024-04-07 01:45:00.000000", dt.datetime(2024, 4, 6, 14, 45, tzinfo=UTC)),
         ("Pacific/Chatham", "2024-01-01 12:45:00.000000", dt.datetime(2023, 12, 31, 23, 0, tzinfo=UTC)),
         ("Asia/Kathmandu", "1986-01-01 00:10:00.000000", dt.datetime(1985, 12, 31, 18, 40, tzinfo=UTC)),
         ("America/Sao_Paulo", "2018-11-04 00:30:00.000000", dt.datetime(2018, 11, 4, 3, 30, tzinfo=UTC)),
         ("+05:30", "2024-01-01 05:30:00.000000", dt.datetime(2024, 1, 1, tzinfo=UTC)),
         ("Asia/Tokyo", "1970-01-01 09:00:01.000000", dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
         ("Europe/London", "2038-01-19 03:14:07.999999", dt.datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=UTC))]


def test_zone_table_is_fold0():
    """The expectations above follow zoneinfo with fold=0 (checked independently here)."""
    for loc, wall, want in ZONES:
        if loc.startswith("+"):
            continue
        naive = dt.datetime.strptime(wall, "%Y-%m-%d %H:%M:%S.%f")
        assert naive.replace(tzinfo=ZoneInfo(loc), fold=0).astimezone(UTC) == want, (loc, wall)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_timestamps_in_many_zones(encoding, impl):
    """Several zones in one batch (the Cython core compiles each zone on first use)."""
    evs = [SimpleBootstrap(BASE)] + [SimpleDML(BASE, "INSERT", make_tso(T0 + k), data={"id": k, "ts": (loc, wall)})
                                     for k, (loc, wall, _) in enumerate(ZONES)]
    values = _values(encoding, evs)
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("ts_text", pa.string())])
    rows = _typed(encoding, impl, schema).decode(None, values).to_pylist()[1:]
    assert [r["ts"] for r in rows] == [want for _, _, want in ZONES]
    text = _typed(encoding, impl, pa.schema([("ts", pa.string())])).decode(None, values).column("ts").to_pylist()[1:]
    assert text == [w.strftime("%Y-%m-%d %H:%M:%S.%fZ") for _, _, w in ZONES]
    generic = ticdc_fast.SimpleDecoder(encoding, implementation=impl).decode(None, values)
    assert [dict(a)["ts"] for a in generic.column("after").to_pylist()[1:]] == text


# --------------------------------------------------------------------------- Spark variant
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_spark_schema_target(encoding, impl):
    t = SimpleTable("db", "sp", 70, make_tso(T0 - 1000), [
        SimpleColumn("id", "int", nullable=False), SimpleColumn("u", "bigint", unsigned=True),
        SimpleColumn("tm", "time", decimal=3), SimpleColumn("dec", "decimal", length=65, decimal=4),
        SimpleColumn("iu", "int", unsigned=True), SimpleColumn("su", "smallint", unsigned=True)])
    spark = arrow_schema(table_schema_from_dict(t.table_schema_json()), spark=True)
    assert [spark.field(n).type for n in ("u", "tm", "dec", "iu", "su")] == [
        pa.decimal128(20, 0), pa.string(), pa.decimal128(38, 4), pa.int64(), pa.int32()]
    rows = [{"id": 1, "u": (1 << 64) - 1, "tm": "-838:59:59.000", "dec": "9" * 34 + ".9999", "iu": 4294967295, "su": 65535},
            {"id": 2, "u": 0, "tm": "00:00:00.001", "dec": "-0.0001", "iu": 0, "su": 0}]
    evs = [SimpleBootstrap(t)] + [SimpleDML(t, "INSERT", make_tso(T0), data=r) for r in rows]
    out = _typed(encoding, impl, spark, table="db.sp").decode(None, _values(encoding, evs)).to_pylist()[1:]
    assert out[0]["u"] == Decimal(18446744073709551615) and out[0]["tm"] == "-838:59:59.000"
    assert out[0]["dec"] == Decimal("9" * 34 + ".9999") and out[0]["iu"] == 4294967295 and out[0]["su"] == 65535
    assert out[1]["u"] == Decimal(0) and out[1]["dec"] == Decimal("-0.0001")
    # a DECIMAL(65) value beyond 38 digits cannot go into Spark's decimal128(38)
    big = SimpleDML(t, "INSERT", make_tso(T0), data={"id": 3, "dec": "9" * 40 + ".0000"})
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(encoding, impl, spark, table="db.sp").decode(None, _values(encoding, [SimpleBootstrap(t), big]))
    assert ei.value.message_index == 1 and ei.value.column == "dec"


# --------------------------------------------------------------------------- realistic stream
def _expected_orders_row(row: dict) -> dict:
    channel = ["web", "app", "store"]
    out = dict(row)
    out["amount"] = Decimal(row["amount"])
    if row["created_at"] is not None:
        out["created_at"] = dt.datetime.strptime(row["created_at"], "%Y-%m-%d %H:%M:%S.%f")
    loc, wall = row["updated_at"]
    out["updated_at"] = dt.datetime.strptime(wall, "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=ZoneInfo(loc)).astimezone(UTC)
    out["channel"] = None if row["channel"] is None else channel[row["channel"] - 1]
    return out


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_realistic_orders_typed(encoding, impl):
    events = simple_changefeed(200, seed=21, watermark_every=50)
    values = _values(encoding, events, avro_map_order="random")
    dec = ticdc_fast.SimpleDecoder(encoding, table="shop.orders", implementation=impl,
                                   schemas=[orders_table(version=events[0].table.version).table_schema_json()])
    out = dec.decode(None, values, offsets=list(range(len(values)))).to_pylist()
    assert len(out) == len(events)
    names = [c.name for c in orders_table().columns]
    n_checked = 0
    for ev, r in zip(events, out):
        if not isinstance(ev, SimpleDML):
            continue
        assert r["_op"] == ev.op and r["_commit_ts"] == ev.commit_ts
        img = _expected_orders_row(ev.data if ev.op != "DELETE" else ev.old)
        for n in names:
            assert r[n] == img[n], (ev.op, n, r[n], img[n])
        n_checked += 1
    assert n_checked == 200


@differential
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_realistic_typed_implementations_agree(encoding):
    events = simple_changefeed(300, seed=8, start_mid_stream=True, alter_every=100)
    values = _values(encoding, events, compression="lz4")
    boot = next(e for e in events if isinstance(e, SimpleBootstrap))
    schema = arrow_schema(table_schema_from_dict(boot.table.table_schema_json()))
    schema = schema.append(pa.field("extra_1", pa.int64())).append(pa.field("extra_2", pa.string()))
    out = []
    for i in ("cython", "python"):
        dec = ticdc_fast.SimpleDecoder(encoding, table="shop.orders", schema=schema, compression="lz4", implementation=i)
        out.append(dec.decode(None, values, partitions=[0] * len(values), offsets=list(range(len(values)))))
    assert out[0].equals(out[1])
    assert out[0].num_rows == len(events)
    assert out[0].column("extra_1").null_count < out[0].num_rows


@differential
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_realistic_generic_implementations_agree(encoding):
    events = simple_changefeed(300, seed=9, alter_every=120, bootstrap_every=100)
    values = _values(encoding, events, compression="snappy", avro_map_order="random")
    out = [ticdc_fast.SimpleDecoder(encoding, compression="snappy", implementation=i).decode(
        None, values, partitions=[3] * len(values), offsets=list(range(len(values)))) for i in ("cython", "python")]
    assert out[0].equals(out[1])


def test_simple_arrow_schema_from_bootstrap_messages():
    """The BOOTSTRAP → Arrow schema helper, both encodings, default and Spark variant."""
    import pyarrow as pa
    from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleEncoder, SimpleTable

    t = SimpleTable("db", "t", 7, 449451534581760003, [
        SimpleColumn("id", "bigint", unsigned=True, nullable=False),
        SimpleColumn("amount", "decimal", length=65, decimal=30),
        SimpleColumn("price", "decimal", length=12, decimal=2),
        SimpleColumn("ts", "timestamp"), SimpleColumn("d", "time"),
        SimpleColumn("e", "enum", elements=["a", "b"]), SimpleColumn("b", "varbinary", length=8)])
    for encoding in ("json", "avro"):
        value = SimpleEncoder(encoding).encode_value(SimpleBootstrap(t))
        s = ticdc_fast.simple_arrow_schema(value, encoding=encoding)
        assert [f.type for f in s] == [pa.uint64(), pa.decimal256(65, 30), pa.decimal128(12, 2),
                                       pa.timestamp("us", tz="UTC"), pa.duration("us"), pa.string(),
                                       pa.binary()]
        sp = ticdc_fast.simple_arrow_schema(value, encoding=encoding, spark=True)
        assert [f.type for f in sp] == [pa.decimal128(20, 0), pa.decimal128(38, 30), pa.decimal128(12, 2),
                                        pa.timestamp("us", tz="UTC"), pa.string(), pa.string(), pa.binary()]


# --------------------------------------------------------------------------- generic TIMESTAMP text
GENERIC_TS = [("UTC", "2024-01-01 00:00:00", "2024-01-01 00:00:00Z"),
              ("Asia/Shanghai", "2024-01-01 08:00:00.5", "2024-01-01 00:00:00.5Z"),
              ("Asia/Shanghai", "2024-01-01 07:59:59.000001", "2023-12-31 23:59:59.000001Z"),
              ("America/New_York", "2024-11-03 01:30:00.123", "2024-11-03 05:30:00.123Z"),
              ("Asia/Kathmandu", "1986-01-01 00:10:00.12345", "1985-12-31 18:40:00.12345Z"),
              ("Asia/Shanghai", "0001-01-01 00:00:00.000000", "0000-12-31 16:00:00.000000Z"),
              ("UTC", "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999Z")]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_generic_timestamp_text_in_utc(encoding, impl):
    """Generic output renders TIMESTAMP {location, value} as the UTC instant, keeping the
    value's number of fraction digits."""
    evs = [SimpleBootstrap(BASE)] + [SimpleDML(BASE, "INSERT", make_tso(T0 + k), data={"id": k, "ts": (loc, wall)})
                                     for k, (loc, wall, _) in enumerate(GENERIC_TS)]
    values = _values(encoding, evs)
    out = ticdc_fast.SimpleDecoder(encoding, implementation=impl).decode(None, values)
    got = [dict(m)["ts"] for m in out.column("after").to_pylist()[1:]]
    assert got == [want for _, _, want in GENERIC_TS]


# --------------------------------------------------------------------------- integer text
INT_TEXTS = ([str(10 ** k - 1) for k in range(1, 19)] + [str(10 ** k) for k in range(0, 19)]
             + ["-" + str(10 ** k - 1) for k in range(1, 19)] + ["9223372036854775807", "-9223372036854775808",
                                                                 "12345678", "-12345678", "1234567890123456"])
BAD_INT_TEXTS = (["1234567" + c for c in "/:a \x00."] + ["123456789012345" + c for c in "/:a"]
                 + ["12" + c + "45678901" for c in "/:a"] + ["9223372036854775808", "18446744073709551616",
                                                            "01234567890", "--12345678", "+12345678", "1234 5678"])


PLACEHOLDER = 987654321987


def _int_text_messages(texts):
    """Simple JSON carries integers as text: each row's `id` is the given text (the encoder
    writes a placeholder, replaced in the bytes)."""
    import json
    evs = [SimpleBootstrap(BASE), SimpleDML(BASE, "INSERT", make_tso(T0), data={"id": PLACEHOLDER})]
    boot, dml = _values("json", evs)
    mark = b'"%d"' % PLACEHOLDER
    assert dml.count(mark) == 1
    return [boot] + [dml.replace(mark, json.dumps(t).encode()) for t in texts]


def test_integer_text_of_every_length(impl):
    """Each length, 8 digits at a time or one by one, reads exactly."""
    got = _typed("json", impl, pa.schema([("id", pa.int64())])).decode(None, _int_text_messages(INT_TEXTS))
    assert got.column("id").to_pylist()[1:] == [int(t) for t in INT_TEXTS]


@pytest.mark.parametrize("text", BAD_INT_TEXTS)
def test_integer_text_with_a_stray_byte(impl, text):
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed("json", impl, pa.schema([("id", pa.int64())])).decode(None, _int_text_messages([text]))
    assert ei.value.message_index == 1 and ei.value.column == "id"


@pytest.mark.parametrize("text, reason", [
    ("953097925551550328225794,26", "invalid integer"),       # fuzz seed 2122: too long, then a comma
    ("99999999999999999999x", "invalid integer"),
    ("953097925551550328225794", "integer out of range"),
    ("18446744073709551616", "integer out of range"),
    ("-99999999999999999999", "integer out of range")])
@pytest.mark.parametrize("typed", [False, True])
def test_integer_text_is_judged_by_its_syntax_before_its_size(impl, text, reason, typed):
    dec = (_typed("json", impl, pa.schema([("id", pa.int64())])) if typed
           else ticdc_fast.SimpleDecoder("json", implementation=impl))
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, _int_text_messages([text]))
    assert (ei.value.message_index, ei.value.column, ei.value.reason) == (1, "id", reason)


def _branch_tables(declared, sent):
    """One table declared with ``declared`` (BOOTSTRAP) and the same table whose DML is encoded
    as ``sent``: the Avro map value goes in the other type's union branch."""
    def table(t):
        return SimpleTable("db", "fb", 52, make_tso(T0 - 10_000),
                           [SimpleColumn("id", "int", nullable=False), SimpleColumn("x", t)])
    return table(declared), table(sent)


@pytest.mark.parametrize("declared, sent, text, typed_target, typed_value", [
    # a float branch in a DOUBLE column: the float32 widened, exactly (fuzz case 9945)
    ("double", "float", "3.440000057220459", pa.float64(), float(pa.scalar(3.44, pa.float32()).as_py())),
    # a double branch in a FLOAT column (pre-v7.0 TiCDC): rounded to float32
    ("float", "double", "3.44", pa.float32(), pa.scalar(3.44, pa.float32()).as_py()),
])
def test_avro_float_branch_is_rendered_by_the_column_type(declared, sent, text, typed_target, typed_value, impl):
    decl, sent_as = _branch_tables(declared, sent)
    boot = _values("avro", [SimpleBootstrap(decl)])
    dml = _values("avro", [SimpleDML(sent_as, "DELETE", make_tso(T0), old={"id": 1, "x": 3.44})])
    for values in (boot + dml, dml + boot):      # also buffered until its schema arrives
        dec = ticdc_fast.SimpleDecoder("avro", implementation=impl)
        rows = [r for r in dec.decode(None, values).to_pylist() if r["_op"] == "DELETE"]
        assert dict(rows[0]["before"])["x"] == text
    schema = pa.schema([("id", pa.int32()), ("x", typed_target)])
    r = _typed("avro", impl, schema, table="db.fb").decode(None, boot + dml).to_pylist()[-1]
    assert r["x"] == typed_value
