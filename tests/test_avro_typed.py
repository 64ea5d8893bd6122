"""Avro protocol, typed output (``table=``, ``schema=pa.schema``): columns map by name onto every
writer schema version; exact conversions; tombstones carry the key columns; control events."""
from __future__ import annotations

import datetime as dt
import json
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import confluent_framed, include_before_value_schemas, tidb_typed
from ticdc_fast import _constants as C
from ticdc_fast.testing import AvroColumn, AvroEncoder
from ticdc_fast.testing.open_encoder import DDL, Col, Resolved, RowChange, make_tso

UTC = dt.timezone.utc
N, U, B = C.FLAG_NULLABLE, C.FLAG_UNSIGNED, C.FLAG_BINARY
PK = 11
U64_MAX = (1 << 64) - 1


def _ts(i):
    return make_tso(1_700_000_000_000 + i, 1)


def _schemas(enc):
    return {sid: text for _, sid, text in enc.registered}


def _split(msgs):
    return [k for k, _ in msgs], [v for _, v in msgs]


def _typed(impl, schemas, target, table="db.t", **kw):
    return ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, table=table, schema=target, **kw)


def _row(table_cols, ts, values, before=None, schema="db", table="t"):
    cols = [Col(c.name, c.type, values.get(c.name), c.flags) for c in table_cols if c.name in values]
    old = None if before is None else [Col(c.name, c.type, before.get(c.name), c.flags)
                                       for c in table_cols if c.name in before]
    return RowChange(schema, table, ts, cols, old)


def _delete(table_cols, ts, values, schema="db", table="t"):
    return RowChange(schema, table, ts, None,
                     [Col(c.name, c.type, values.get(c.name), c.flags) for c in table_cols if c.name in values])


# =========================================================================== schema versions
V1 = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("a", C.T_LONG, N), AvroColumn("b", C.T_VARCHAR, N)]
V2 = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("b", C.T_VARCHAR, N), AvroColumn("c", C.T_DOUBLE, N)]
# a comes back as BIGINT (type widening), b is dropped, fields reordered
V3 = [AvroColumn("c", C.T_DOUBLE, N), AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("a", C.T_LONGLONG, N)]


def _versioned_stream(**enc_kw):
    enc = AvroEncoder(table_columns={("db", "t"): V1}, **enc_kw)
    msgs = enc.encode([_row(V1, _ts(0), {"id": 1, "a": -5, "b": "one"}),
                       _row(V1, _ts(1), {"id": 2, "a": None, "b": "two"})])
    enc.table_columns[("db", "t")] = V2
    msgs += enc.encode([_row(V2, _ts(2), {"id": 3, "b": "three", "c": 2.5}),
                        _delete(V2, _ts(3), {"id": 1, "b": "one", "c": None})])
    enc.table_columns[("db", "t")] = V3
    msgs += enc.encode([_row(V3, _ts(4), {"c": -0.25, "id": 4, "a": (1 << 62) + 1}),
                        _row(V3, _ts(5), {"c": 1e300, "id": 2, "a": 7}, before={"c": None, "id": 2, "a": None})])
    value_ids = [sid for s, sid, _ in enc.registered if s.endswith("-value")]
    assert len(value_ids) == 3
    return enc, msgs, value_ids


TARGET = pa.schema([("c", pa.float64()), ("b", pa.string()), ("a", pa.int64()), ("id", pa.int64()),
                    ("never", pa.string())])


def test_mapping_by_name_across_schema_versions(impl):
    enc, msgs, (v1, v2, v3) = _versioned_stream()
    # v2 drops a and v3 drops b (both in the target): schema changes, taken with "ignore"
    dec = _typed(impl, _schemas(enc), TARGET, on_schema_change="ignore")
    batch = dec.decode(*_split(msgs))
    assert dec.stats.schema_changes_ignored == 2
    assert batch.schema.names == ["_op", "_commit_ts", "c", "b", "a", "id", "never", "_ddl", "_value_schema_id"]
    assert batch.to_pylist() == [
        {"_op": "INSERT", "_commit_ts": _ts(0), "c": None, "b": "one", "a": -5, "id": 1, "never": None, "_ddl": None, "_value_schema_id": v1},
        {"_op": "INSERT", "_commit_ts": _ts(1), "c": None, "b": "two", "a": None, "id": 2, "never": None, "_ddl": None, "_value_schema_id": v1},
        {"_op": "INSERT", "_commit_ts": _ts(2), "c": 2.5, "b": "three", "a": None, "id": 3, "never": None, "_ddl": None, "_value_schema_id": v2},
        {"_op": "DELETE", "_commit_ts": None, "c": None, "b": None, "a": None, "id": 1, "never": None, "_ddl": None, "_value_schema_id": None},
        {"_op": "INSERT", "_commit_ts": _ts(4), "c": -0.25, "b": None, "a": (1 << 62) + 1, "id": 4, "never": None, "_ddl": None, "_value_schema_id": v3},
        {"_op": "UPDATE", "_commit_ts": _ts(5), "c": 1e300, "b": None, "a": 7, "id": 2, "never": None, "_ddl": None, "_value_schema_id": v3},
    ]


def test_mapping_by_name_in_batches_of_one(impl):
    """A schema id first seen in a later batch of the same decoder maps just the same."""
    enc, msgs, _ = _versioned_stream()
    dec = _typed(impl, _schemas(enc), TARGET, on_schema_change="ignore")
    whole = _typed(impl, _schemas(enc), TARGET, on_schema_change="ignore").decode(*_split(msgs))
    singles = [dec.decode([k], [v]) for k, v in msgs]
    assert pa.Table.from_batches(singles).combine_chunks().to_batches()[0].equals(whole)


def test_writer_lacks_target_column_is_null(impl):
    enc, msgs, _ = _versioned_stream()
    target = pa.schema([("only_in_target", pa.int64()), ("id", pa.int64())])
    # a projection (it never had a and b): v2 adding c and v3 adding a again change nothing it holds
    rows = _typed(impl, _schemas(enc), target).decode(*_split(msgs)).to_pylist()
    assert [r["only_in_target"] for r in rows] == [None] * 6
    assert [r["id"] for r in rows] == [1, 2, 3, 1, 4, 2]


def test_extra_writer_columns_ignored_by_default(impl):
    enc, msgs, _ = _versioned_stream()
    dec = _typed(impl, _schemas(enc), pa.schema([("id", pa.int64())]))
    rows = dec.decode(*_split(msgs)).to_pylist()
    assert dec.stats.schema_changes_ignored == 0   # a projection: new columns change nothing it holds
    assert [(r["_op"], r["id"]) for r in rows] == [("INSERT", 1), ("INSERT", 2), ("INSERT", 3), ("DELETE", 1),
                                                   ("INSERT", 4), ("UPDATE", 2)]


def test_extra_writer_columns_error(impl):
    enc, msgs, (v1, v2, v3) = _versioned_stream()
    keys, values = _split(msgs)
    # target has every column of v1 and v3 but not v2's "c"... and v3's "c": first hit is message 2
    target = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string())])
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(impl, _schemas(enc), target, extra_columns="error", on_schema_change="ignore").decode(keys, values)
    assert ei.value.message_index == 2 and ei.value.column == "c"
    assert "'c'" in str(ei.value) and ei.value.part == "value"
    # v1 alone is fine (the _tidb_* extension fields never count as extra columns)
    ok = _typed(impl, _schemas(enc), target, extra_columns="error").decode(keys[:2], values[:2])
    assert ok.column("b").to_pylist() == ["one", "two"]
    # with the full set of names, every version decodes (v2 and v3 drop a and b: changes, ignored)
    full = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())])
    assert _typed(impl, _schemas(enc), full, extra_columns="error",
                  on_schema_change="ignore").decode(keys, values).num_rows == 6


def test_extra_columns_argument_is_checked(impl):
    with pytest.raises(ValueError):
        ticdc_fast.AvroDecoder(schemas={}, table="db.t", schema=pa.schema([("id", pa.int64())]),
                               extra_columns="warn", implementation=impl)
    with pytest.raises(ValueError):
        ticdc_fast.AvroDecoder(schemas={}, table="db.t", implementation=impl)
    with pytest.raises(ValueError):
        ticdc_fast.AvroDecoder(schemas={}, table="no_dot", schema=pa.schema([("id", pa.int64())]),
                               implementation=impl)


# =========================================================================== conversions
UCOLS = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("bu", C.T_LONGLONG, N | U)]


@pytest.mark.parametrize("mode", ["long", "string"])
def test_bigint_unsigned_targets(impl, mode):
    enc = AvroEncoder(table_columns={("db", "t"): UCOLS}, bigint_unsigned_handling_mode=mode)
    vals = [0, 1, (1 << 63) - 1, 1 << 63, U64_MAX, None]
    msgs = enc.encode([_row(UCOLS, _ts(i), {"id": i, "bu": v}) for i, v in enumerate(vals)])
    keys, values = _split(msgs)
    s = _schemas(enc)
    assert _typed(impl, s, pa.schema([("bu", pa.uint64())])).decode(keys, values).column("bu").to_pylist() == vals
    dec = _typed(impl, s, pa.schema([("bu", pa.decimal128(20, 0))])).decode(keys, values)
    assert dec.column("bu").to_pylist() == [None if v is None else Decimal(v) for v in vals]
    assert dec.schema.field("bu").type == pa.decimal128(20, 0)
    # int64 holds the first three only: the fourth (2^63) is a DecodeError, never a wrapped value
    i64 = pa.schema([("bu", pa.int64())])
    assert _typed(impl, s, i64).decode(keys[:3], values[:3]).column("bu").to_pylist() == vals[:3]
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(impl, s, i64).decode(keys, values)
    assert (ei.value.message_index, ei.value.column) == (3, "bu")
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(impl, s, pa.schema([("bu", pa.decimal128(19, 0))])).decode(keys, values)
    assert (ei.value.message_index, ei.value.column) == (4, "bu")


DCOLS = [AvroColumn("id", C.T_LONGLONG, PK),
         AvroColumn("d65", C.T_NEWDECIMAL, N | B, length=65, scale=30),
         AvroColumn("d4", C.T_NEWDECIMAL, N | B, length=10, scale=4)]
D65 = ["9" * 35 + "." + "9" * 30, "-" + "9" * 35 + "." + "9" * 30, "0.000000000000000000000000000001",
       "-0.000000000000000000000000000001", "0.000000000000000000000000000000", "-128.000000000000000000000000000000"]


@pytest.mark.parametrize("mode", ["precise", "string"])
def test_decimal_targets_exact(impl, mode):
    enc = AvroEncoder(table_columns={("db", "t"): DCOLS}, decimal_handling_mode=mode)
    d4 = ["1.2300", "-1.2300", "0.0000", "-32768.0000", "123456.0000", None]
    msgs = enc.encode([_row(DCOLS, _ts(i), {"id": i, "d65": a, "d4": b}) for i, (a, b) in enumerate(zip(D65, d4))])
    keys, values = _split(msgs)
    s = _schemas(enc)
    out = _typed(impl, s, pa.schema([("d65", pa.decimal256(65, 30)), ("d4", pa.decimal128(10, 2))])).decode(keys, values)
    assert out.column("d65").to_pylist() == [Decimal(x) for x in D65]
    assert out.column("d4").to_pylist() == [Decimal("1.23"), Decimal("-1.23"), Decimal(0), Decimal("-32768"),
                                            Decimal("123456"), None]
    assert str(out.column("d65")[0].as_py()) == D65[0]               # all 65 digits, no rounding
    # the same column into more scale / into an integer when the fraction is zero
    wide = _typed(impl, s, pa.schema([("d4", pa.decimal128(38, 10)), ("d65", pa.string())])).decode(keys, values)
    assert wide.column("d4").to_pylist()[0] == Decimal("1.2300000000")
    assert wide.column("d65").to_pylist() == D65                       # string target: the text
    ints = _typed(impl, s, pa.schema([("d4", pa.int32())])).decode(keys[2:], values[2:])
    assert ints.column("d4").to_pylist() == [0, -32768, 123456, None]


@pytest.mark.parametrize("target,bad_index", [
    (pa.schema([("d4", pa.decimal128(10, 1))]), 0),       # 1.23 needs two fraction digits
    (pa.schema([("d4", pa.int64())]), 0),                 # not an integer
    (pa.schema([("d65", pa.decimal128(38, 30))]), 0),     # 65 digits do not fit in 38
    (pa.schema([("d4", pa.decimal128(7, 2))]), 4),        # -32768.00 fits, 123456.00 needs 8 digits
])
def test_decimal_targets_inexact_is_decode_error(impl, target, bad_index):
    enc = AvroEncoder(table_columns={("db", "t"): DCOLS})
    d4 = ["1.2300", "-1.0000", "0.0000", "-32768.0000", "123456.0000"]
    msgs = enc.encode([_row(DCOLS, _ts(i), {"id": i, "d65": a, "d4": b}) for i, (a, b) in enumerate(zip(D65, d4))])
    keys, values = _split(msgs)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(impl, _schemas(enc), target).decode(keys, values)
    assert ei.value.message_index == bad_index and ei.value.column == target.names[0]
    assert ei.value.part == "value"


TCOLS = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("ts", C.T_TIMESTAMP, N), AvroColumn("dtm", C.T_DATETIME, N),
         AvroColumn("d", C.T_DATE, N)]
_WALLS = ["2024-01-01 08:00:00", "2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-07-01 12:00:00.000001",
          "1970-01-01 00:00:00"]


@pytest.mark.parametrize("tz,expected", [
    ("UTC", [dt.datetime(2024, 1, 1, 8), dt.datetime(2024, 3, 10, 2, 30), dt.datetime(2024, 11, 3, 1, 30),
             dt.datetime(2024, 7, 1, 12, 0, 0, 1), dt.datetime(1970, 1, 1)]),
    ("Asia/Shanghai", [dt.datetime(2024, 1, 1, 0), dt.datetime(2024, 3, 9, 18, 30), dt.datetime(2024, 11, 2, 17, 30),
                       dt.datetime(2024, 7, 1, 4, 0, 0, 1), dt.datetime(1969, 12, 31, 16)]),
    # DST gap and fold resolve like fold=0: the offset in force before the transition
    ("America/New_York", [dt.datetime(2024, 1, 1, 13), dt.datetime(2024, 3, 10, 7, 30),
                          dt.datetime(2024, 11, 3, 5, 30), dt.datetime(2024, 7, 1, 16, 0, 0, 1),
                          dt.datetime(1970, 1, 1, 5)]),
])
def test_timestamp_with_timezone(impl, tz, expected):
    enc = AvroEncoder(table_columns={("db", "t"): TCOLS})
    msgs = enc.encode([_row(TCOLS, _ts(i), {"id": i, "ts": w, "dtm": w, "d": w[:10]}) for i, w in enumerate(_WALLS)])
    keys, values = _split(msgs)
    target = pa.schema([("ts", pa.timestamp("us", tz="UTC")), ("dtm", pa.timestamp("us")), ("d", pa.date32())])
    out = _typed(impl, _schemas(enc), target, timezone=tz).decode(keys, values)
    assert out.column("ts").to_pylist() == [e.replace(tzinfo=UTC) for e in expected]
    naive = _typed(impl, _schemas(enc), pa.schema([("ts", pa.timestamp("us")), ("dtm", pa.timestamp("us", tz="UTC"))]),
                   timezone=tz).decode(keys, values)
    assert naive.column("ts").to_pylist() == expected                 # UTC, without a zone
    walls = [dt.datetime.fromisoformat(w) for w in _WALLS]
    assert out.column("dtm").to_pylist() == walls                       # DATETIME: never converted
    assert naive.column("dtm").to_pylist() == [w.replace(tzinfo=UTC) for w in walls]
    assert out.column("d").to_pylist() == [w.date() for w in walls]
    # generic output keeps the wall clock text
    g = ticdc_fast.AvroDecoder(schemas=_schemas(enc), implementation=impl, timezone=tz).decode(keys, values)
    assert [dict(a)["ts"] for a in g.column("after").to_pylist()] == _WALLS


def test_unknown_timezone_is_rejected(impl):
    with pytest.raises(ValueError, match="Not/AZone"):
        ticdc_fast.AvroDecoder(schemas={}, timezone="Not/AZone", implementation=impl)


# =========================================================================== tombstones
KCOLS = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("region", C.T_VARCHAR, 2 | 8),   # composite PK
         AvroColumn("v", C.T_LONG, N), AvroColumn("w", C.T_VARCHAR, N)]


@pytest.mark.parametrize("flavor,watermark", [("tiflow", False), ("ticdc", False), ("ticdc", True)])
def test_tombstone_rows_carry_key_columns(impl, flavor, watermark):
    enc = AvroEncoder(table_columns={("db", "t"): KCOLS}, flavor=flavor, enable_watermark=watermark)
    row = {"id": 7, "region": "eu-1", "v": 3, "w": "x"}
    msgs = enc.encode([_row(KCOLS, _ts(0), row), _delete(KCOLS, _ts(1), row)])
    keys, values = _split(msgs)
    assert values[1] == (b"\x03" + _ts(1).to_bytes(8, "big") if watermark else None)
    target = pa.schema([("w", pa.string()), ("region", pa.string()), ("v", pa.int32()), ("id", pa.int64())])
    rows = _typed(impl, _schemas(enc), target).decode(keys, values).to_pylist()
    assert rows[0] == {"_op": "INSERT", "_commit_ts": _ts(0), "w": "x", "region": "eu-1", "v": 3, "id": 7,
                       "_ddl": None, "_value_schema_id": rows[0]["_value_schema_id"]}
    assert rows[1] == {"_op": "DELETE", "_commit_ts": _ts(1) if watermark else None, "w": None,
                       "region": "eu-1", "v": None, "id": 7, "_ddl": None, "_value_schema_id": None}
    # a target without the key columns still gets the DELETE row (all null)
    only_v = _typed(impl, _schemas(enc), pa.schema([("v", pa.int32())])).decode(keys, values).to_pylist()
    assert [(r["_op"], r["v"]) for r in only_v] == [("INSERT", 3), ("DELETE", None)]


# =========================================================================== control events
OCOLS = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("v", C.T_LONG, N)]


def _mixed_stream():
    enc = AvroEncoder(table_columns={("db", "t"): OCOLS, ("db", "other"): OCOLS}, enable_watermark=True)
    events = [DDL("db", "t", _ts(0), "CREATE TABLE `db`.`t` (id BIGINT PRIMARY KEY, v INT)", 3),
              DDL("db", "other", _ts(1), "CREATE TABLE `db`.`other` (id BIGINT PRIMARY KEY, v INT)", 3),
              _row(OCOLS, _ts(2), {"id": 1, "v": 10}),
              _row(OCOLS, _ts(2), {"id": 1, "v": 99}, table="other"),
              Resolved(_ts(3)),
              _delete(OCOLS, _ts(4), {"id": 1, "v": 99}, table="other"),
              _row(OCOLS, _ts(5), {"id": 1, "v": 11}, before={"id": 1, "v": 10}),
              DDL("db", "t", _ts(6), "ALTER TABLE `db`.`t` ADD INDEX i (v)", 7),
              Resolved(_ts(7))]
    return enc, enc.encode(events)


def test_control_events_kept_for_the_table(impl):
    enc, msgs = _mixed_stream()
    keys, values = _split(msgs)
    out = _typed(impl, _schemas(enc), pa.schema([("id", pa.int64()), ("v", pa.int32())])).decode(
        keys, values, partitions=list(range(9)), offsets=[100 + i for i in range(9)])
    rows = out.to_pylist()
    assert [(r["_op"], r["_commit_ts"], r["id"], r["v"], r["_offset"]) for r in rows] == [
        ("DDL", _ts(0), None, None, 100), ("INSERT", _ts(2), 1, 10, 102), ("RESOLVED", _ts(3), None, None, 104),
        ("UPDATE", _ts(5), 1, 11, 106), ("DDL", _ts(6), None, None, 107), ("RESOLVED", _ts(7), None, None, 108)]
    assert [r["_partition"] for r in rows] == [0, 2, 4, 6, 7, 8]
    assert rows[0]["_ddl"].startswith("CREATE TABLE `db`.`t`") and rows[4]["_ddl"].startswith("ALTER TABLE")


def test_control_events_false_drops_resolved_and_ddl(impl):
    enc, msgs = _mixed_stream()
    keys, values = _split(msgs)
    out = _typed(impl, _schemas(enc), pa.schema([("v", pa.int32())]), control_events=False).decode(
        keys, values, offsets=list(range(9)))
    assert [(r["_op"], r["v"], r["_offset"]) for r in out.to_pylist()] == [("INSERT", 10, 2), ("UPDATE", 11, 6)]
    other = _typed(impl, _schemas(enc), pa.schema([("v", pa.int32())]), table="db.other",
                   control_events=False).decode(keys, values)
    assert [(r["_op"], r["v"]) for r in other.to_pylist()] == [("INSERT", 99), ("DELETE", None)]


def test_empty_and_skipped_batches_have_the_typed_schema(impl):
    enc, msgs = _mixed_stream()
    keys, values = _split(msgs)
    target = pa.schema([("id", pa.int64())])
    dec = _typed(impl, _schemas(enc), target, table="db.nothing", control_events=False)
    for k, v in ((keys, values), ([], [])):
        out = dec.decode(k, v, partitions=[0] * len(k))
        assert out.num_rows == 0 and out.schema == dec.output_schema(partitions=True)


# =========================================================================== TC include-before-value
_FIELDS = [{"name": "id", "type": tidb_typed("long", "BIGINT")},
           {"default": None, "name": "v", "type": ["null", tidb_typed("string", "TEXT")]}]
BEFORE_KEY, BEFORE_VALUE = include_before_value_schemas(_FIELDS)


def test_include_before_value_delete_and_update(impl):
    schemas = {1: json.dumps(BEFORE_KEY), 2: json.dumps(BEFORE_VALUE)}
    key = confluent_framed(1, BEFORE_KEY, {"id": 5})
    ext = {"_tidb_commit_physical_time": 0}
    ins = confluent_framed(2, BEFORE_VALUE, dict(id=5, v="new", _ticdc_before=None, _tidb_op="c", _tidb_commit_ts=_ts(0), **ext))
    upd = confluent_framed(2, BEFORE_VALUE, dict(id=5, v="newer", _ticdc_before={"id": 5, "v": "new"}, _tidb_op="u",
                                        _tidb_commit_ts=_ts(1), **ext))
    dele = confluent_framed(2, BEFORE_VALUE, dict(id=5, v="newer", _ticdc_before=None, _tidb_op="d", _tidb_commit_ts=_ts(2), **ext))
    keys, values = [key] * 3, [ins, upd, dele]
    g = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl).decode(keys, values).to_pylist()
    assert [(r["_op"], r["_commit_ts"]) for r in g] == [("INSERT", _ts(0)), ("UPDATE", _ts(1)), ("DELETE", _ts(2))]
    assert dict(g[1]["before"]) == {"id": "5", "v": "new"} and dict(g[1]["after"]) == {"id": "5", "v": "newer"}
    assert g[2]["after"] is None and dict(g[2]["before"]) == {"id": "5", "v": "newer"}
    t = _typed(impl, schemas, pa.schema([("v", pa.string()), ("id", pa.int64())])).decode(keys, values).to_pylist()
    assert [(r["_op"], r["_commit_ts"], r["id"], r["v"]) for r in t] == [
        ("INSERT", _ts(0), 5, "new"), ("UPDATE", _ts(1), 5, "newer"), ("DELETE", _ts(2), 5, "newer")]


# =========================================================================== other conversions
def test_string_and_binary_targets(impl):
    cols = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("n", C.T_LONG, N), AvroColumn("txt", C.T_VARCHAR, N),
            AvroColumn("blob", C.T_BLOB, N | B), AvroColumn("j", C.T_JSON, N), AvroColumn("f", C.T_FLOAT, N)]
    enc = AvroEncoder(table_columns={("db", "t"): cols})
    msgs = enc.encode([_row(cols, _ts(0), {"id": 1, "n": -3, "txt": "héllo", "blob": b"ok", "j": '{"a": 1}', "f": 0.5}),
                       _row(cols, _ts(1), {"id": 2, "n": None, "txt": None, "blob": b"\xff", "j": None, "f": None})])
    keys, values = _split(msgs)
    as_text = pa.schema([("n", pa.string()), ("txt", pa.string()), ("j", pa.string()), ("f", pa.string()),
                         ("id", pa.string())])
    rows = _typed(impl, _schemas(enc), as_text).decode(keys, values).to_pylist()
    assert [(r["id"], r["n"], r["txt"], r["j"], r["f"]) for r in rows] == [
        ("1", "-3", "héllo", '{"a": 1}', "0.5"), ("2", None, None, None, None)]
    as_bin = pa.schema([("txt", pa.binary()), ("blob", pa.binary()), ("j", pa.binary())])
    rows = _typed(impl, _schemas(enc), as_bin).decode(keys, values).to_pylist()
    assert [(r["txt"], r["blob"], r["j"]) for r in rows] == [("héllo".encode(), b"ok", b'{"a": 1}'), (None, b"\xff", None)]
    # a binary column holding invalid UTF-8 as a string: U+FFFD by default (counted), or a
    # DecodeError with invalid_utf8="error"
    dec = _typed(impl, _schemas(enc), pa.schema([("blob", pa.string())]))
    assert dec.decode(keys, values).column("blob").to_pylist() == ["ok", "\ufffd"]
    assert dec.invalid_utf8_replaced == 1
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(impl, _schemas(enc), pa.schema([("blob", pa.string())]), invalid_utf8="error").decode(keys, values)
    assert (ei.value.message_index, ei.value.column) == (1, "blob")
    assert _typed(impl, _schemas(enc), pa.schema([("blob", pa.string())])).decode(keys[:1], values[:1]).column(
        "blob").to_pylist() == ["ok"]


def test_generic_output_of_a_mixed_stream(impl):
    """The same two-table stream in generic mode: every row, each with its own table and schema id."""
    enc, msgs = _mixed_stream()
    keys, values = _split(msgs)
    rows = ticdc_fast.AvroDecoder(schemas=_schemas(enc), implementation=impl).decode(keys, values).to_pylist()
    got = [(r["_op"], r["_table"], r["_commit_ts"], r["after"] and dict(r["after"]), r["before"] and dict(r["before"]))
           for r in rows]
    assert got == [
        ("DDL", "t", _ts(0), None, None), ("DDL", "other", _ts(1), None, None),
        ("INSERT", "t", _ts(2), {"id": "1", "v": "10"}, None), ("INSERT", "other", _ts(2), {"id": "1", "v": "99"}, None),
        ("RESOLVED", None, _ts(3), None, None), ("DELETE", "other", None, None, {"id": "1"}),
        ("UPDATE", "t", _ts(5), {"id": "1", "v": "11"}, None), ("DDL", "t", _ts(6), None, None),
        ("RESOLVED", None, _ts(7), None, None)]
    vids = [r["_value_schema_id"] for r in rows]
    assert vids[2] == vids[6] and vids[2] != vids[3] and vids[5] is None


SAME_SCALE = [AvroColumn("id", C.T_LONGLONG, PK),
              AvroColumn("d4", C.T_NEWDECIMAL, N | B, length=10, scale=4),
              AvroColumn("d0", C.T_NEWDECIMAL, N | B, length=65, scale=0)]
_D4 = ["999999.9999", "-999999.9999", "0.0000", "-32768.0000", "0.0001", "-0.0001", "1.0000"]
_D0 = ["9" * 38, "-" + "9" * 38, "0", "-128", "127", "-32768", "18446744073709551616"]


@pytest.mark.parametrize("mode", ["precise", "string"])
def test_decimal_same_scale_targets_exact(impl, mode):
    """Target scale equal to the column's: the core moves the two's complement bytes straight into
    decimal128 limbs; every byte width up to 16 and both signs must come out exact."""
    enc = AvroEncoder(table_columns={("db", "t"): SAME_SCALE}, decimal_handling_mode=mode)
    msgs = enc.encode([_row(SAME_SCALE, _ts(i), {"id": i, "d4": a, "d0": b})
                       for i, (a, b) in enumerate(zip(_D4, _D0))])
    keys, values = _split(msgs)
    out = _typed(impl, _schemas(enc), pa.schema([("d4", pa.decimal128(10, 4)), ("d0", pa.decimal128(38, 0))])
                 ).decode(keys, values)
    assert out.column("d4").to_pylist() == [Decimal(x) for x in _D4]
    assert out.column("d0").to_pylist() == [Decimal(x) for x in _D0]


@pytest.mark.parametrize("target,rows,bad_index", [
    (pa.schema([("d4", pa.decimal128(9, 4))]), (["1.0000", "-999999.9999"], ["1", "1"]), 1),
    (pa.schema([("d0", pa.decimal128(38, 0))]), (["1.0000", "1.0000"], ["1" + "0" * 38, "1"]), 0),
    (pa.schema([("d0", pa.decimal128(38, 0))]),                            # -2^127: 16 bytes, 39 digits
     (["1.0000", "1.0000"], ["1", "-170141183460469231731687303715884105728"]), 1),
])
def test_decimal_same_scale_over_precision_is_decode_error(impl, target, rows, bad_index):
    enc = AvroEncoder(table_columns={("db", "t"): SAME_SCALE})
    msgs = enc.encode([_row(SAME_SCALE, _ts(i), {"id": i, "d4": a, "d0": b})
                       for i, (a, b) in enumerate(zip(*rows))])
    keys, values = _split(msgs)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _typed(impl, _schemas(enc), target).decode(keys, values)
    assert ei.value.message_index == bad_index and ei.value.column == target.names[0]
    assert "precision" in str(ei.value)


ICOLS = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("i", C.T_LONGLONG, N)]


@pytest.mark.parametrize("target,vals,bad_index", [
    (pa.decimal128(21, 2), [0, -1, (1 << 63) - 1, -(1 << 63)], None),       # 19 digits + scale 2
    (pa.decimal128(38, 19), [1, -(1 << 63), (1 << 63) - 1], None),          # 10^19 * 2^63 still < 10^38
    (pa.decimal128(20, 2), [5, -(1 << 63)], 1),                           # 19 + 2 digits > 20
    (pa.decimal128(3, 2), [9, -9, 10], 2),
    (pa.decimal128(1, 0), [0, 9, -9, 10], 3),
])
def test_bigint_into_scaled_decimal(impl, target, vals, bad_index):
    """Integers go straight into decimal128 limbs, scaled; over precision is a DecodeError."""
    enc = AvroEncoder(table_columns={("db", "t"): ICOLS})
    keys, values = _split(enc.encode([_row(ICOLS, _ts(k), {"id": k, "i": v}) for k, v in enumerate(vals)]))
    dec = _typed(impl, _schemas(enc), pa.schema([("i", target)]))
    if bad_index is None:
        assert dec.decode(keys, values).column("i").to_pylist() == [Decimal(v) for v in vals]
    else:
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode(keys, values)
        assert (ei.value.message_index, ei.value.column) == (bad_index, "i")


# Integer, DOUBLE/FLOAT and BLOB columns of the target table are written to their Arrow columns
# while the record is read; everything else (and tombstone deletes, which carry only the key)
# goes through the span path.  Both must give the twin's values, nulls and errors.
DIRECT = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("i", C.T_LONG, N), AvroColumn("ti", C.T_TINY, N),
          AvroColumn("u", C.T_LONG, N | U), AvroColumn("d", C.T_DOUBLE, N), AvroColumn("fl", C.T_FLOAT, N),
          AvroColumn("blob", C.T_BLOB, N | B), AvroColumn("s", C.T_VARCHAR, N)]
DIRECT_TARGET = pa.schema([("id", pa.int64()), ("i", pa.int32()), ("ti", pa.int8()), ("u", pa.uint32()),
                           ("d", pa.float64()), ("fl", pa.float64()), ("blob", pa.binary()), ("s", pa.string())])
DIRECT_ROWS = [
    {"id": 1, "i": -2147483648, "ti": -128, "u": 4294967295, "d": -0.0, "fl": 0.1, "blob": b"\x00\xff", "s": "a"},
    {"id": 2, "i": None, "ti": None, "u": None, "d": None, "fl": None, "blob": None, "s": None},
    {"id": 3, "i": 2147483647, "ti": 127, "u": 0, "d": 5e-324, "fl": 3.4028234663852886e38, "blob": b"", "s": ""},
]


@pytest.mark.parametrize("tombstones", [False, True])
def test_direct_columns_exact_with_nulls_and_deletes(impl, tombstones):
    enc = AvroEncoder(table_columns={("db", "t"): DIRECT}, enable_tidb_extension=not tombstones)
    events = [_row(DIRECT, _ts(k), r) for k, r in enumerate(DIRECT_ROWS)]
    events.append(_delete(DIRECT, _ts(9), DIRECT_ROWS[0]))
    keys, values = _split(enc.encode(events))
    out = _typed(impl, _schemas(enc), DIRECT_TARGET).decode(keys, values)
    twin = _typed("python", _schemas(enc), DIRECT_TARGET).decode(keys, values)
    assert out.equals(twin)
    got = out.to_pylist()
    f32 = struct.unpack("f", struct.pack("f", 0.1))[0]
    want0 = dict(DIRECT_ROWS[0], fl=f32)
    for k, want in enumerate([want0, DIRECT_ROWS[1], DIRECT_ROWS[2]]):
        assert {c: got[k][c] for c in want} == want, k
    assert str(got[0]["d"]) == "-0.0"
    # a delete carries the key only (a tombstone, or 0x03 + commit ts): the other columns are null
    assert got[3]["id"] == 1 and got[3]["i"] is None and got[3]["_op"] == "DELETE"


def test_direct_column_out_of_target_range_names_message_and_column(impl):
    enc = AvroEncoder(table_columns={("db", "t"): DIRECT})
    rows = [dict(DIRECT_ROWS[2], id=k, i=-k) for k in range(3)] + [dict(DIRECT_ROWS[2], id=3, i=70000)]
    keys, values = _split(enc.encode([_row(DIRECT, _ts(k), r) for k, r in enumerate(rows)]))
    target = pa.schema([("i", pa.int16())])
    for which in (impl, "python"):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            _typed(which, _schemas(enc), target).decode(keys, values)
        assert (ei.value.message_index, ei.value.column) == (3, "i")
        assert "out of range" in str(ei.value)


# The typed core writes FLOAT, DECIMAL and DATETIME/TIMESTAMP fields straight into their target
# columns while it reads the record; values and errors must be the twin's, error by error.
READ_WRITE_COLS = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("f", C.T_FLOAT, N), AvroColumn("dtm", C.T_DATETIME, N),
         AvroColumn("ts", C.T_TIMESTAMP, N), AvroColumn("dec", C.T_NEWDECIMAL, N | B, length=10, scale=2)]
READ_WRITE_TARGET = pa.schema([("ts", pa.timestamp("us", tz="UTC")), ("f", pa.float32()), ("dtm", pa.timestamp("us")),
                     ("dec", pa.decimal128(10, 2)), ("id", pa.int64())])
_F32 = [3.4028234663852886e38, -1.401298464324817e-45, -0.0, 0.10000000149011612, 16777216.0, 1.1754943508222875e-38]


def _direct_rows(bad=None):
    rows = []
    for i, f in enumerate(_F32):
        vals = {"id": i, "f": f, "dtm": f"2024-0{1 + i}-0{1 + i} 1{i}:3{i}:0{i}.{i:06d}",
                "ts": f"2023-12-31 23:59:5{i}.{i:03d}", "dec": f"{'-' if i % 2 else ''}{i * 1111}.{i:02d}"}
        if bad and i == 3:
            vals.update(bad)
        rows.append(vals)
    rows.insert(2, {"id": 99, "f": None, "dtm": None, "ts": None, "dec": None})
    return rows


@pytest.mark.parametrize("tz", ["UTC", "Asia/Shanghai"])
def test_direct_float_decimal_and_wall_fields(impl, tz):
    enc = AvroEncoder(table_columns={("db", "t"): READ_WRITE_COLS})
    rows = _direct_rows()
    keys, values = _split(enc.encode([_row(READ_WRITE_COLS, _ts(i), r) for i, r in enumerate(rows)]))
    out = _typed(impl, _schemas(enc), READ_WRITE_TARGET, timezone=tz).decode(keys, values)
    assert out.equals(_typed("python", _schemas(enc), READ_WRITE_TARGET, timezone=tz).decode(keys, values))
    want_f = [None if r["f"] is None else struct.unpack("<f", struct.pack("<f", r["f"]))[0] for r in rows]
    got_f = out.column("f").to_pylist()
    assert got_f == want_f
    assert got_f[:2] == [3.4028234663852886e38, -1.401298464324817e-45] and got_f[2] is None
    assert str(got_f[3]) == "-0.0"                                       # the sign of zero kept
    assert out.column("dec").to_pylist() == [None if r["dec"] is None else Decimal(r["dec"]) for r in rows]
    shift = dt.timedelta(hours=8 if tz == "Asia/Shanghai" else 0)
    assert out.column("ts").to_pylist() == [
        None if r["ts"] is None else (dt.datetime.fromisoformat(r["ts"]) - shift).replace(tzinfo=UTC) for r in rows]
    assert out.column("dtm").to_pylist() == [
        None if r["dtm"] is None else dt.datetime.fromisoformat(r["dtm"]) for r in rows]


def _error_of(which, enc, keys, values):
    """(message index, byte offset, column, reason) of the DecodeError a typed decode raises."""
    with pytest.raises(ticdc_fast.DecodeError) as info:
        _typed(which, _schemas(enc), READ_WRITE_TARGET).decode(keys, values)
    e = info.value
    return e.message_index, e.byte_offset, e.column, e.reason


@pytest.mark.parametrize("bad", [
    {"dtm": "2024-02-30 00:00:00"}, {"ts": "2024-01-01 24:00:00"}, {"ts": "not a time"},
    {"dtm": "2024-01-01 00:00:00", "ts": "2024-13-01 00:00:00"},
    {"dtm": "2024-99-01 00:00:00", "ts": "2024-13-01 00:00:00"},          # ts is the earlier target
    {"dec": "123456789.00"},                                               # 11 digits: over precision 10
    {"dec": "123456789.00", "dtm": "2024-02-30 00:00:00"},
])
def test_direct_field_errors_are_the_twins(impl, bad):
    enc = AvroEncoder(table_columns={("db", "t"): READ_WRITE_COLS})
    keys, values = _split(enc.encode([_row(READ_WRITE_COLS, _ts(i), r) for i, r in enumerate(_direct_rows(bad))]))
    got = _error_of(impl, enc, keys, values)
    assert got == _error_of("python", enc, keys, values)
    assert got[0] == 4 and got[1] > 0
    first = [n for n in READ_WRITE_TARGET.names if n in bad][0]
    assert got[2] == first


def test_direct_float_nan_is_the_twins_error(impl):
    enc = AvroEncoder(table_columns={("db", "t"): READ_WRITE_COLS})
    keys, values = _split(enc.encode([_row(READ_WRITE_COLS, _ts(0), {"id": 1, "f": 1.5}),
                                      _row(READ_WRITE_COLS, _ts(1), {"id": 2, "f": float("nan")})]))
    got = _error_of(impl, enc, keys, values)
    assert got == _error_of("python", enc, keys, values)
    assert got[0] == 1 and got[2] == "f" and "NaN" in got[3]


# Integer fields of the target table are written with one range test when the value fits both
# the column's type and the target (the bounds are compiled with the plan); every other value
# takes the checked path.  At and around every bound, values and errors are the twin's.
_INT_COLUMNS = [(C.T_TINY, 0, -128, 127), (C.T_TINY, U, 0, 255), (C.T_SHORT, 0, -32768, 32767),
                (C.T_INT24, U, 0, 16777215), (C.T_LONG, 0, -2**31, 2**31 - 1), (C.T_LONG, U, 0, 2**32 - 1),
                (C.T_LONGLONG, 0, -2**63, 2**63 - 1), (C.T_LONGLONG, U, 0, 2**64 - 1)]
_INT_TARGETS = {pa.int8(): (-128, 127), pa.int16(): (-2**15, 2**15 - 1), pa.int32(): (-2**31, 2**31 - 1),
                pa.int64(): (-2**63, 2**63 - 1), pa.uint8(): (0, 255), pa.uint16(): (0, 2**16 - 1),
                pa.uint32(): (0, 2**32 - 1), pa.uint64(): (0, 2**64 - 1)}


def _outcome(which, enc, keys, values, target):
    try:
        return _typed(which, _schemas(enc), target).decode(keys, values).column("v").to_pylist()
    except ticdc_fast.DecodeError as e:
        return e.message_index, e.byte_offset, e.column, e.reason


@pytest.mark.parametrize("code,flags,lo,hi", _INT_COLUMNS)
def test_direct_integers_at_every_bound_are_the_twins(impl, code, flags, lo, hi):
    cols = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("v", code, N | flags)]
    enc = AvroEncoder(table_columns={("db", "t"): cols})
    checked = 0
    for arrow_type, (tlo, thi) in _INT_TARGETS.items():
        target = pa.schema([("v", arrow_type)])
        for v in sorted({lo, lo + 1, hi - 1, hi, tlo - 1, tlo, thi, thi + 1, -1, 0, 1}):
            if not lo <= v <= hi:
                continue                                    # TiCDC writes a column's own range only
            keys, values = _split(enc.encode([_row(cols, _ts(0), {"id": 1, "v": 7}),
                                              _row(cols, _ts(1), {"id": 2, "v": v})]))
            got = _outcome(impl, enc, keys, values, target)
            assert got == _outcome("python", enc, keys, values, target), (arrow_type, v)
            if tlo <= v <= thi:
                assert got == [7, v], (arrow_type, v)
            else:
                assert got[0] == 1 and got[2] == "v" and "out of range" in got[3], (arrow_type, v)
            checked += 1
    assert checked >= 4 * len(_INT_TARGETS)
