"""Simple-protocol decoder state: the TableSchema cache, DML held until its schema arrives,
save/restore through ``state()``, seeding with ``schemas=``, the hold bound, and ``flush()``."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import plain_rows
from ticdc_fast import _impl
from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML, SimpleEncoder,
                                SimpleTable, SimpleWatermark, make_tso, orders_table, simple_changefeed)

ENCODINGS = ("json", "avro")
T0 = 1_714_521_600_000

differential = pytest.mark.skipif(_impl.PURE_FORCED,
                                  reason="TICDC_FAST_PURE=1: differential core-vs-twin test")


def _t(version_ms=T0 - 10_000, extra=()):
    cols = [SimpleColumn("id", "int", nullable=False), SimpleColumn("name", "varchar", length=32),
            SimpleColumn("ts", "timestamp", decimal=3)]
    return SimpleTable("app", "users", 42, make_tso(version_ms), cols + list(extra))


V1 = _t()
V2 = _t(T0 - 5_000, [SimpleColumn("score", "decimal", length=8, decimal=2)])   # ALTER ADD COLUMN
OTHER = SimpleTable("app", "other", 43, make_tso(T0 - 9_000),
                    [SimpleColumn("k", "bigint", unsigned=True, nullable=False)])


def _ins(table, k, ms, **extra):
    row = {"id": k, "name": f"user{k}", "ts": ("Asia/Shanghai", "2024-05-01 08:00:00.%03d" % k)}
    row.update(extra)
    return SimpleDML(table, "INSERT", make_tso(ms), data=row)


def _after_text(k, **extra):
    d = {"id": str(k), "name": f"user{k}", "ts": "2024-05-01 00:00:00.%03dZ" % k}
    d.update(extra)
    return d


def _values(encoding, events, compression="none"):
    return [v for _, v in SimpleEncoder(encoding, compression=compression).encode(events)]


def _dec(encoding, impl, **kw):
    return ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw)


# --------------------------------------------------------------------------- mid-stream start
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_mid_stream_rows_held_until_bootstrap_across_calls(encoding, impl):
    events = [_ins(V1, 1, T0 + 1), _ins(V1, 2, T0 + 2), _ins(V1, 3, T0 + 3),
              SimpleWatermark(make_tso(T0 + 4)),
              SimpleBootstrap(V1), _ins(V1, 4, T0 + 5)]
    values = _values(encoding, events)
    dec = _dec(encoding, impl)
    first = plain_rows(dec.decode(None, values[:4], partitions=[0, 0, 1, 0], offsets=[10, 11, 12, 13]))
    assert [r["_op"] for r in first] == ["RESOLVED"]       # DML without a schema is held
    assert dec.held() == 3
    second = plain_rows(dec.decode(None, values[4:], partitions=[0, 0], offsets=[14, 15]))
    assert dec.held() == 0
    assert [r["_op"] for r in second] == ["BOOTSTRAP", "INSERT", "INSERT", "INSERT", "INSERT"]
    # held rows keep their own partition/offset/commit ts and come right after the BOOTSTRAP
    assert [(r["_partition"], r["_offset"]) for r in second] == [(0, 14), (0, 10), (0, 11), (1, 12), (0, 15)]
    assert [r["_commit_ts"] for r in second[1:]] == [make_tso(T0 + k) for k in (1, 2, 3, 5)]
    assert [r["after"] for r in second[1:]] == [_after_text(k) for k in (1, 2, 3, 4)]
    assert not any(r["_undecodable"] for r in second)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_realistic_mid_stream_changefeed(encoding, impl):
    """simple_changefeed(start_mid_stream=True): once the BOOTSTRAP arrives everything decodes,
    and the rows equal those of a decoder seeded with the schema up front (order aside)."""
    events = simple_changefeed(120, seed=5, start_mid_stream=True, watermark_every=40)
    n_dml = sum(isinstance(e, SimpleDML) for e in events)
    first_boot = next(i for i, e in enumerate(events) if isinstance(e, SimpleBootstrap))
    assert first_boot > 0
    values = _values(encoding, events)
    cut = first_boot // 2 + 1
    dec = _dec(encoding, impl)
    a = dec.decode(None, values[:cut], offsets=list(range(cut)))
    assert a.num_rows == 0 and dec.held() == cut
    b = dec.decode(None, values[cut:], offsets=list(range(cut, len(values))))
    assert dec.held() == 0
    rows = plain_rows(b)
    dml = [r for r in rows if r["_op"] in ("INSERT", "UPDATE", "DELETE")]
    assert len(dml) == n_dml
    assert not any(r["_undecodable"] for r in rows)
    assert sorted(r["_offset"] for r in rows) == list(range(len(values)))
    # the rows of the held messages come right after the first BOOTSTRAP row
    assert [r["_offset"] for r in rows[:first_boot + 2]] == [first_boot] + list(range(first_boot)) + [first_boot + 1]

    seeded = _dec(encoding, impl, schemas=[orders_table(version=events[first_boot].table.version).table_schema_json()])
    ref = plain_rows(seeded.decode(None, values, offsets=list(range(len(values)))))
    assert sorted(rows, key=lambda r: r["_offset"]) == sorted(ref, key=lambda r: r["_offset"])


# --------------------------------------------------------------------------- ALTER mid-stream
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_alter_add_column_mid_stream(encoding, impl):
    events = [SimpleBootstrap(V1), _ins(V1, 1, T0 + 1),
              SimpleDDL("ALTER", "ALTER TABLE users ADD COLUMN score DECIMAL(8,2)", make_tso(T0 + 2), V2, V1),
              _ins(V2, 2, T0 + 3, score="12.50"), _ins(V2, 3, T0 + 4, score=None),
              SimpleDML(V2, "UPDATE", make_tso(T0 + 5), data={"id": 1, "name": "x", "ts": None, "score": "-1.00"},
                        old={"id": 1, "name": "user1", "ts": None, "score": None}),
              # a late row still written with the old version decodes with the old schema
              _ins(V1, 4, T0 + 6)]
    rows = plain_rows(_dec(encoding, impl).decode(None, _values(encoding, events)))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT", "DDL", "INSERT", "INSERT", "UPDATE", "INSERT"]
    assert rows[1]["after"] == _after_text(1)                     # no score key at all
    assert rows[1]["_schema_version"] == V1.version
    assert rows[2]["_schema_version"] == V2.version and rows[2]["_ddl_type"] == "ALTER"
    assert rows[3]["after"] == _after_text(2, score="12.50") and rows[3]["_schema_version"] == V2.version
    assert rows[4]["after"] == _after_text(3, score=None)
    assert rows[5]["after"] == {"id": "1", "name": "x", "ts": None, "score": "-1.00"}
    assert rows[5]["before"] == {"id": "1", "name": "user1", "ts": None, "score": None}
    assert rows[6]["after"] == _after_text(4) and rows[6]["_schema_version"] == V1.version


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_alter_add_column_typed(encoding, impl):
    events = [SimpleBootstrap(V1), _ins(V1, 1, T0 + 1),
              SimpleDDL("ALTER", "ALTER TABLE users ADD COLUMN score DECIMAL(8,2)", make_tso(T0 + 2), V2, V1),
              _ins(V2, 2, T0 + 3, score="12.50")]
    schema = pa.schema([("id", pa.int64()), ("score", pa.decimal128(8, 2)), ("name", pa.string())])
    rows = _dec(encoding, impl, table="app.users", schema=schema).decode(None, _values(encoding, events)).to_pylist()
    from decimal import Decimal
    assert [(r["_op"], r["id"], r["score"], r["name"]) for r in rows] == [
        ("BOOTSTRAP", None, None, None), ("INSERT", 1, None, "user1"), ("DDL", None, None, None),
        ("INSERT", 2, Decimal("12.50"), "user2")]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_realistic_alter_changefeed(encoding, impl):
    events = simple_changefeed(90, seed=11, alter_every=30, watermark_every=0, bootstrap_every=None)
    rows = plain_rows(_dec(encoding, impl).decode(None, _values(encoding, events)))
    n_ddl = sum(isinstance(e, SimpleDDL) for e in events)
    assert n_ddl >= 2
    assert sum(r["_op"] == "DDL" for r in rows) == n_ddl
    seen_ddl = 0
    for ev, r in zip(events, rows):
        if isinstance(ev, SimpleDDL):
            seen_ddl += 1
            assert r["_op"] == "DDL" and r["_schema_version"] == ev.table.version
            continue
        if isinstance(ev, SimpleDML):
            img = r["after"] if r["after"] is not None else r["before"]
            extras = {k for k in img if k.startswith("extra_")}
            # a DML carries exactly the columns added so far (an old image may predate them)
            assert extras == {f"extra_{k}" for k in range(1, seen_ddl + 1)}
            assert r["_schema_version"] == ev.table.version
            assert img["id"] == str((ev.data or ev.old)["id"])


# --------------------------------------------------------------------------- state save/restore
@pytest.mark.parametrize("compression", ["none", "lz4"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_state_round_trip_with_heldplain_rows(encoding, compression, impl):
    events = [SimpleBootstrap(OTHER), _ins(V1, 1, T0 + 1), _ins(V1, 2, T0 + 2),
              SimpleDML(OTHER, "INSERT", make_tso(T0 + 3), data={"k": (1 << 64) - 1}),
              SimpleBootstrap(V1), _ins(V1, 3, T0 + 4)]
    values = _values(encoding, events, compression)
    dec = _dec(encoding, impl, compression=compression)
    first = plain_rows(dec.decode(None, values[:4], partitions=[2] * 4, offsets=[100, 101, 102, 103]))
    assert [r["_op"] for r in first] == ["BOOTSTRAP", "INSERT"]
    assert first[1]["after"] == {"k": "18446744073709551615"}
    assert dec.held() == 2
    saved = json.dumps(dec.state())                      # must be plain JSON
    restored = _dec(encoding, impl, compression=compression, state=json.loads(saved))
    assert restored.held() == 2
    assert restored.table_schema("app", "other").version == OTHER.version
    assert restored.table_schema("app", "users") is None
    rows = plain_rows(restored.decode(None, values[4:], partitions=[2, 2], offsets=[104, 105]))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT", "INSERT", "INSERT"]
    assert [(r["_partition"], r["_offset"]) for r in rows] == [(2, 104), (2, 101), (2, 102), (2, 105)]
    assert [r["after"] for r in rows[1:]] == [_after_text(1), _after_text(2), _after_text(3)]
    assert restored.held() == 0
    # the restored decoder still knows the other table
    more = plain_rows(restored.decode(None, _values(encoding, [SimpleDML(OTHER, "DELETE", make_tso(T0 + 9), old={"k": 5})],
                                               compression)))
    assert more[0]["before"] == {"k": "5"}


def test_state_encoding_mismatch(impl):
    dec = _dec("json", impl, schemas=[V1.table_schema_json()])
    with pytest.raises(ValueError):
        ticdc_fast.SimpleDecoder("avro", state=dec.state(), implementation=impl)


@differential
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_state_is_implementation_independent(encoding):
    values = _values(encoding, [_ins(V1, 1, T0 + 1), SimpleBootstrap(OTHER), SimpleBootstrap(V1)])
    cy = ticdc_fast.SimpleDecoder(encoding, implementation="cython")
    cy.decode(None, values[:2])
    py = ticdc_fast.SimpleDecoder(encoding, implementation="python", state=json.loads(json.dumps(cy.state())))
    a = py.decode(None, values[2:])
    cy2 = ticdc_fast.SimpleDecoder(encoding, implementation="cython", state=cy.state())
    b = cy2.decode(None, values[2:])
    assert a.equals(b)
    assert plain_rows(a)[1]["after"] == _after_text(1)


# --------------------------------------------------------------------------- seeding
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_seed_schemas_in_every_form(encoding, impl):
    enc = SimpleEncoder(encoding)
    dml = _values(encoding, [_ins(V1, 1, T0 + 1)])
    seeds = {
        "dict": V1.table_schema_json(),
        "json_text": json.dumps(V1.table_schema_json()),
        "json_bytes": json.dumps(V1.table_schema_json()).encode(),
        "bootstrap_message": enc.encode_value(SimpleBootstrap(V1)),
        "ddl_message": enc.encode_value(SimpleDDL("CREATE", "CREATE TABLE users (...)", make_tso(T0), V1)),
    }
    for name, seed in seeds.items():
        dec = _dec(encoding, impl, schemas=[seed])
        assert dec.table_schema("app", "users").version == V1.version, name
        rows = plain_rows(dec.decode(None, dml))
        assert [r["after"] for r in rows] == [_after_text(1)], name
        assert dec.held() == 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_add_schema_after_construction(encoding, impl):
    dec = _dec(encoding, impl)
    ts = dec.add_schema(V2.table_schema_json())
    assert ts.key == ("app", "users", V2.version)
    assert [c.name for c in dec.table_schema("app", "users").columns] == ["id", "name", "ts", "score"]
    rows = plain_rows(dec.decode(None, _values(encoding, [_ins(V2, 5, T0, score="0.10")])))
    assert rows[0]["after"] == _after_text(5, score="0.10")


def test_table_schema_versions(impl):
    dec = _dec("json", impl, schemas=[V1.table_schema_json(), V2.table_schema_json()])
    assert dec.table_schema("app", "users").version == V2.version                 # the latest
    assert dec.table_schema("app", "users", V1.version).version == V1.version
    assert dec.table_schema("app", "users", 12345) is None


# --------------------------------------------------------------------------- hold bound
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hold_bound_rows_raise(encoding, impl):
    values = _values(encoding, [_ins(V1, k, T0 + k) for k in range(1, 5)])
    dec = _dec(encoding, impl, hold_max_rows=3)
    assert dec.decode(None, values[:3]).num_rows == 0
    assert dec.held() == 3
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, values[3:])
    msg = str(ei.value)
    assert "app.users" in msg and str(V1.version) in msg


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hold_bound_raise_leaves_bound_intact(encoding, impl):
    values = _values(encoding, [_ins(V1, k, T0 + k) for k in range(1, 5)])
    dec = _dec(encoding, impl, hold_max_rows=3)
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, values)
    assert dec.held() <= 3


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hold_bound_bytes_raise(encoding, impl):
    values = _values(encoding, [_ins(V1, k, T0 + k) for k in range(1, 5)])
    limit = len(values[0]) + len(values[1])
    dec = _dec(encoding, impl, hold_max_bytes=limit)
    dec.decode(None, values[:2])
    assert dec.held() == 2
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, values[2:3])


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hold_bound_emit(encoding, impl):
    events = [_ins(V1, k, T0 + k) for k in range(1, 6)] + [SimpleBootstrap(V1)]
    values = _values(encoding, events)
    dec = _dec(encoding, impl, hold_max_rows=2, on_hold_overflow="emit")
    rows = plain_rows(dec.decode(None, values, partitions=[7] * 6, offsets=list(range(20, 26))))
    # rows 1..3 overflowed (oldest first) and come out undecodable with their raw value
    ops = [(r["_op"], r["_undecodable"]) for r in rows]
    assert ops == [("INSERT", True)] * 3 + [("BOOTSTRAP", False), ("INSERT", False), ("INSERT", False)]
    for k, r in enumerate(rows[:3]):
        assert r["_raw"] == values[k]
        assert r["_commit_ts"] == make_tso(T0 + k + 1)
        assert (r["_schema"], r["_table"], r["_schema_version"]) == ("app", "users", V1.version)
        assert r["after"] is None and r["before"] is None
        assert (r["_partition"], r["_offset"]) == (7, 20 + k)
    assert [r["after"] for r in rows[4:]] == [_after_text(4), _after_text(5)]
    assert [r["_offset"] for r in rows[3:]] == [25, 23, 24]
    assert all(r["_raw"] is None for r in rows[3:])
    assert dec.held() == 0


@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_hold_bound_emit_raw_with_compression(compression, impl):
    """With compression the held value is the decompressed message (what the decoder keeps)."""
    events = [_ins(V1, k, T0 + k) for k in range(1, 4)]
    plain = _values("json", events)
    dec = _dec("json", impl, compression=compression, hold_max_rows=1, on_hold_overflow="emit")
    rows = plain_rows(dec.decode(None, _values("json", events, compression)))
    assert [r["_undecodable"] for r in rows] == [True, True]
    assert [r["_raw"] for r in rows] == plain[:2]


# --------------------------------------------------------------------------- flush
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_flush_emits_heldplain_rows(encoding, impl):
    events = [_ins(V1, 1, T0 + 1), SimpleDML(V2, "DELETE", make_tso(T0 + 2),
                                              old={"id": 9, "name": None, "ts": None, "score": None})]
    values = _values(encoding, events)
    dec = _dec(encoding, impl)
    assert dec.decode(None, values).num_rows == 0
    assert dec.held() == 2
    out = plain_rows(dec.flush(partitions=True, offsets=True))
    assert [(r["_op"], r["_undecodable"], r["_schema_version"]) for r in out] == [
        ("INSERT", True, V1.version), ("DELETE", True, V2.version)]
    assert [r["_raw"] for r in out] == values
    assert [r["_commit_ts"] for r in out] == [make_tso(T0 + 1), make_tso(T0 + 2)]
    assert dec.held() == 0
    assert dec.flush().num_rows == 0
    # a later BOOTSTRAP no longer releases anything
    rows = plain_rows(dec.decode(None, _values(encoding, [SimpleBootstrap(V1)])))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP"]


def test_flush_keeps_meta(impl):
    values = _values("json", [_ins(V1, 1, T0 + 1), _ins(V1, 2, T0 + 2)])
    dec = _dec("json", impl)
    dec.decode(None, values, partitions=[4, 5], offsets=[40, 50])
    out = plain_rows(dec.flush(partitions=True, offsets=True))
    assert [(r["_partition"], r["_offset"]) for r in out] == [(4, 40), (5, 50)]


def test_flush_typed(impl):
    values = _values("json", [_ins(V1, 1, T0 + 1)])
    dec = _dec("json", impl, table="app.users", schema=pa.schema([("id", pa.int32())]))
    dec.decode(None, values)
    assert dec.held() == 1
    out = dec.flush().to_pylist()
    assert len(out) == 1
    assert out[0]["_op"] == "INSERT" and out[0]["_undecodable"] is True and out[0]["id"] is None
    assert out[0]["_raw"] == values[0]


# --------------------------------------------------------------------------- typed-mode holding
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_mode_holds_only_its_table(encoding, impl):
    events = [_ins(V1, 1, T0 + 1), SimpleDML(OTHER, "INSERT", make_tso(T0 + 2), data={"k": 3}),
              SimpleBootstrap(OTHER), SimpleBootstrap(V1)]
    dec = _dec(encoding, impl, table="app.users", schema=pa.schema([("id", pa.int32()), ("name", pa.string())]))
    rows = dec.decode(None, _values(encoding, events)).to_pylist()
    assert [(r["_op"], r["id"], r["name"]) for r in rows] == [("BOOTSTRAP", None, None), ("INSERT", 1, "user1")]
    assert dec.held() == 0


# --------------------------------------------------------------------------- held rows + large messages
def _big_insert_before_bootstrap(encoding, tmp_path):
    import random
    big = SimpleTable("app", "big", 44, make_tso(T0 - 8_000), [
        SimpleColumn("id", "int", nullable=False), SimpleColumn("v", "varchar", length=5000)])
    text = random.Random(0).randbytes(1500).hex()
    enc = SimpleEncoder(encoding, max_message_bytes=1000, large_message_handle="claim-check")
    values = [v for _, v in enc.encode([SimpleDML(big, "INSERT", make_tso(T0), data={"id": 1, "v": text}),
                                        SimpleBootstrap(big)])]
    for name, content in enc.claim_check_files.items():
        (tmp_path / name).write_bytes(content)
    return values, text


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_held_claim_check_row_without_resolver(encoding, impl, tmp_path):
    values, _ = _big_insert_before_bootstrap(encoding, tmp_path)
    rows = plain_rows(_dec(encoding, impl).decode(None, values))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT"]
    assert rows[1]["after"] == {"id": "1"} and rows[1]["_claim_check_location"].endswith(".json")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_held_claim_check_row_resolved_on_release(encoding, impl, tmp_path):
    values, text = _big_insert_before_bootstrap(encoding, tmp_path)
    dec = _dec(encoding, impl, claim_check_resolver=ticdc_fast.local_claim_check(tmp_path))
    rows = plain_rows(dec.decode(None, values))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT"]
    assert rows[1]["after"] == {"id": "1", "v": text}
    assert rows[1]["_claim_check_location"] is None


@pytest.mark.parametrize("same_batch", [True, False], ids=["same-batch", "next-batch"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_held_row_error_points_into_the_batch(encoding, same_batch, impl):
    enc = SimpleEncoder(encoding)
    t = SimpleTable("app", "tiny", 45, make_tso(T0 - 7_000), [SimpleColumn("id", "int", nullable=False),
                                                              SimpleColumn("ti", "tinyint")])
    bad = enc.encode_value(SimpleDML(t, "INSERT", make_tso(T0), data={"id": 1, "ti": 300}))
    rest = [enc.encode_value(SimpleWatermark(make_tso(T0))), enc.encode_value(SimpleBootstrap(t))]
    dec = _dec(encoding, impl)
    if same_batch:
        batch = [bad] + rest
    else:
        dec.decode(None, [bad])
        batch = rest
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, batch)
    assert ei.value.column == "ti"
    assert ei.value.message_index is None or 0 <= ei.value.message_index < len(batch)


# --------------------------------------------------------------------------- several versions held
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_rows_of_two_versions_released_by_their_own_announcements(encoding, impl):
    events = [_ins(V2, 1, T0 + 1, score="1.00"), _ins(V1, 2, T0 + 2), _ins(V2, 3, T0 + 3, score=None),
              SimpleBootstrap(V1),
              SimpleDDL("ALTER", "ALTER TABLE users ADD COLUMN score DECIMAL(8,2)", make_tso(T0 + 4), V2, V1)]
    rows = plain_rows(_dec(encoding, impl).decode(None, _values(encoding, events), offsets=[0, 1, 2, 3, 4]))
    assert [(r["_op"], r["_offset"]) for r in rows] == [
        ("BOOTSTRAP", 3), ("INSERT", 1), ("DDL", 4), ("INSERT", 0), ("INSERT", 2)]
    assert rows[1]["after"] == _after_text(2)
    assert rows[3]["after"] == _after_text(1, score="1.00") and rows[4]["after"] == _after_text(3, score=None)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_repeated_bootstrap_does_not_duplicate(encoding, impl):
    events = [_ins(V1, 1, T0 + 1), SimpleBootstrap(V1), SimpleBootstrap(V1), _ins(V1, 2, T0 + 2)]
    rows = plain_rows(_dec(encoding, impl).decode(None, _values(encoding, events)))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT", "BOOTSTRAP", "INSERT"]
    assert [r["after"] for r in rows if r["_op"] == "INSERT"] == [_after_text(1), _after_text(2)]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_state_round_trip_and_emit(encoding, impl):
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    values = _values(encoding, [_ins(V1, k, T0 + k) for k in range(1, 4)] + [SimpleBootstrap(V1)])
    dec = _dec(encoding, impl, table="app.users", schema=schema, hold_max_rows=2, on_hold_overflow="emit")
    first = dec.decode(None, values[:3]).to_pylist()
    assert [(r["_op"], r["_undecodable"], r["id"]) for r in first] == [("INSERT", True, None)]
    assert first[0]["_raw"] == values[0]
    restored = _dec(encoding, impl, table="app.users", schema=schema, state=json.loads(json.dumps(dec.state())))
    rows = restored.decode(None, values[3:]).to_pylist()
    assert [(r["_op"], r["id"], r["name"], r["_undecodable"]) for r in rows] == [
        ("BOOTSTRAP", None, None, False), ("INSERT", 2, "user2", False), ("INSERT", 3, "user3", False)]


# --------------------------------------------------------------------------- unknown zones
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_unknown_zone_fails_only_where_converted(encoding, impl):
    """A TIMESTAMP location that is no zone fails the value where it is converted, naming its
    column: in generic output (both images are rendered) and in a typed row's own image, but not
    in the old image of a typed UPDATE, which typed output does not use."""
    bad = {"ts": ("Mars/Olympus_Mons", "2024-05-01 08:00:00.000")}
    upd = SimpleDML(V1, "UPDATE", make_tso(T0 + 2), data={"id": 1, "name": "x", "ts": ("UTC", "2024-05-01 00:00:00.000")},
                    old={"id": 1, "name": "y", **bad})
    values = _values(encoding, [SimpleBootstrap(V1), upd])
    typed = dict(table="app.users", schema=pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC"))]),
                 control_events=False)
    out = _dec(encoding, impl, **typed).decode(None, values)
    assert out.column("id").to_pylist() == [1]
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _dec(encoding, impl).decode(None, values)
    assert (ei.value.message_index, ei.value.column) == (1, "ts") and "Mars/Olympus_Mons" in str(ei.value)
    ins = _values(encoding, [SimpleBootstrap(V1), SimpleDML(V1, "INSERT", make_tso(T0 + 3),
                                                            data={"id": 2, "name": "z", **bad})])
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _dec(encoding, impl, **typed).decode(None, ins)
    assert (ei.value.message_index, ei.value.column) == (1, "ts")


def test_zone_name_that_is_not_utf8_is_an_error_not_a_loop(impl):
    ok = _values("avro", [SimpleBootstrap(V1), _ins(V1, 1, T0 + 1)])
    assert b"Asia/Shanghai" in ok[1]
    broken = ok[1].replace(b"Asia/Shanghai", b"Asia/Shangha\xff")
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _dec("avro", impl).decode(None, [ok[0], broken])
    assert ei.value.message_index == 1
