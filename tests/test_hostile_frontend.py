"""Hostile input to the Python front ends (issue 11): TableSchema fields of the wrong type or out of
range, TIMESTAMP locations that are no zone name, the hold queue's cost and failure semantics, a
re-announced schema version, and an Avro checkpoint value that carries a key.  Every test runs
against both implementations and expects only ``DecodeError`` from message content."""
from __future__ import annotations

import json
import sys
import struct
from pathlib import Path

import orjson
import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.simple import hold as hold_module
from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable,
                                SimpleWatermark, make_tso)

sys.path.insert(0, str(Path(__file__).parent))
from test_avro_bad_input import SCHEMAS, TS, key, val  # noqa: E402
from conftest import plain_rows  # noqa: E402

ENCODINGS = ("json", "avro")
T0 = 1_714_521_600_000


def _table(version_ms=T0 - 10_000, elements=("web", "app")):
    cols = [SimpleColumn("id", "int", nullable=False), SimpleColumn("name", "varchar", length=32),
            SimpleColumn("channel", "enum", elements=list(elements)),
            SimpleColumn("ts", "timestamp", decimal=3)]
    return SimpleTable("app", "users", 42, make_tso(version_ms), cols)


V1 = _table()
OTHER = SimpleTable("app", "other", 43, make_tso(T0 - 9_000), [SimpleColumn("k", "int", nullable=False)])


def _ins(table, k, ms=T0 + 1, **extra):
    row = {"id": k, "name": f"user{k}", "channel": 1, "ts": ("Asia/Shanghai", "2024-05-01 08:00:00.%03d" % k)}
    row.update(extra)
    return SimpleDML(table, "INSERT", make_tso(ms), data=row)


def _values(encoding, events):
    return [v for _, v in SimpleEncoder(encoding).encode(events)]


def _dec(encoding, impl, **kw):
    return ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw)


# --------------------------------------------------------------------------- finding 6: TableSchema
def _bootstrap_doc() -> dict:
    return json.loads(_values("json", [SimpleBootstrap(V1)])[0])


def _set(path, value):
    def mutate(doc):
        obj = doc["tableSchema"]
        for p in path[:-1]:
            obj = obj[p]
        obj[path[-1]] = value
    return mutate


def _del(path):
    def mutate(doc):
        obj = doc["tableSchema"]
        for p in path[:-1]:
            obj = obj[p]
        del obj[path[-1]]
    return mutate


def _raw(marker, replacement):
    """Text-level edit, for numbers no JSON library writes (1e309, 2**64)."""
    return (marker, replacement)


ENUM_COL = 2
HOSTILE_SCHEMAS = {
    "version-2**64": (_raw('"version":449451547688960000', '"version":18446744073709551616'), "version"),
    "version-2**70": (_raw('"version":449451547688960000', '"version":1180591620717411303424'), "version"),
    "version-negative": (_set(["version"], -1), "version"),
    "version-float": (_set(["version"], 1.5), "version"),
    "version-string": (_set(["version"], "449451547688960000"), "version"),
    "version-bool": (_set(["version"], True), "version"),
    "tableID-1e309": (_raw('"tableID":42', '"tableID":1e309'), "tableID"),
    "tableID-2**64": (_raw('"tableID":42', '"tableID":18446744073709551616'), "tableID"),
    "tableID-float": (_set(["tableID"], 42.0), "tableID"),
    "tableID-object": (_set(["tableID"], {}), "tableID"),
    "schema-int": (_set(["schema"], 7), "schema"),
    "table-null": (_set(["table"], None), "table"),
    "columns-object": (_set(["columns"], {}), "columns"),
    "column-int": (_set(["columns", 0], 5), "columns[0]"),
    "column-name-int": (_set(["columns", 0, "name"], 5), "columns[0].name"),
    "column-name-missing": (_del(["columns", 0, "name"]), "columns[0].name"),
    "dataType-true": (_set(["columns", 1, "dataType"], True), "dataType"),
    "dataType-array": (_set(["columns", 1, "dataType"], []), "dataType"),
    "dataType-missing": (_del(["columns", 1, "dataType"]), "dataType"),
    "mysqlType-int": (_set(["columns", 1, "dataType", "mysqlType"], 3), "mysqlType"),
    "mysqlType-array": (_set(["columns", 1, "dataType", "mysqlType"], ["varchar"]), "mysqlType"),
    "charset-int": (_set(["columns", 1, "dataType", "charset"], 1), "charset"),
    "collate-bool": (_set(["columns", 1, "dataType", "collate"], False), "collate"),
    "length-string": (_set(["columns", 1, "dataType", "length"], "32"), "length"),
    "length-2**64": (_raw('"length":32', '"length":18446744073709551616'), "length"),
    "decimal-bool": (_set(["columns", 3, "dataType", "decimal"], True), "decimal"),
    "decimal-float": (_set(["columns", 3, "dataType", "decimal"], 3.0), "decimal"),
    "unsigned-string": (_set(["columns", 0, "dataType", "unsigned"], "yes"), "unsigned"),
    "zerofill-int": (_set(["columns", 0, "dataType", "zerofill"], 1), "zerofill"),
    "nullable-string": (_set(["columns", 0, "nullable"], "no"), "nullable"),
    "elements-int": (_set(["columns", ENUM_COL, "dataType", "elements"], [1, 2]), "elements[0]"),
    "elements-null-item": (_set(["columns", ENUM_COL, "dataType", "elements"], ["web", None]), "elements[1]"),
    "elements-string": (_set(["columns", ENUM_COL, "dataType", "elements"], "web,app"), "elements"),
    "elements-object": (_set(["columns", ENUM_COL, "dataType", "elements"], {"a": 1}), "elements"),
    "duplicate-column": (_set(["columns", 1, "name"], "id"), "twice"),
    "indexes-int": (_set(["indexes"], 3), "indexes"),
    "index-columns-int": (_set(["indexes", 0, "columns"], [0]), "indexes[0].columns[0]"),
    "index-unique-string": (_set(["indexes", 0, "unique"], "true"), "indexes[0].unique"),
    "tableSchema-array": (None, "tableSchema"),
}


def _hostile_bootstrap(case) -> bytes:
    edit, _ = HOSTILE_SCHEMAS[case]
    doc = _bootstrap_doc()
    if edit is None:
        doc["tableSchema"] = [doc["tableSchema"]]
        return json.dumps(doc).encode()
    if isinstance(edit, tuple):
        text = json.dumps(doc, separators=(",", ":"))
        assert edit[0] in text
        return text.replace(edit[0], edit[1], 1).encode()
    edit(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize("case", sorted(HOSTILE_SCHEMAS))
def test_hostile_table_schema_is_a_decode_error_naming_the_field(case, impl):
    good = _values("json", [SimpleWatermark(make_tso(T0))])[0]
    dec = _dec("json", impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, [good, _hostile_bootstrap(case)])
    assert ei.value.message_index == 1, str(ei.value)
    assert HOSTILE_SCHEMAS[case][1] in str(ei.value)
    # the decoder is intact: the real BOOTSTRAP and a row decode afterwards
    rows = plain_rows(dec.decode(None, _values("json", [SimpleBootstrap(V1), _ins(V1, 1)])))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT"]
    assert rows[1]["after"]["name"] == "user1" and rows[1]["after"]["channel"] == "1"


@pytest.mark.parametrize("where", ["tableSchema", "preTableSchema"])
def test_hostile_table_schema_in_a_ddl(where, impl):
    doc = _bootstrap_doc()
    ts = doc["tableSchema"]
    ts["columns"][ENUM_COL]["dataType"]["elements"] = ["web", 7]
    ddl = {"version": 1, "type": "ALTER", "sql": "ALTER TABLE users ADD COLUMN x INT",
           "commitTs": make_tso(T0), "buildTs": T0, "tableSchema": _bootstrap_doc()["tableSchema"]}
    ddl[where] = ts
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _dec("json", impl).decode(None, [json.dumps(ddl).encode()])
    assert ei.value.message_index == 0 and where in str(ei.value) and ei.value.column == "channel"


def test_seeded_table_schema_of_the_wrong_type_is_a_value_error(impl):
    doc = _bootstrap_doc()["tableSchema"]
    doc["version"] = 1 << 64
    with pytest.raises(ValueError, match="version"):
        _dec("json", impl, schemas=[doc])


def test_decimal_precision_without_an_arrow_type_is_a_value_error():
    from ticdc_fast.simple import arrow_schema, table_schema_from_dict
    doc = _bootstrap_doc()["tableSchema"]
    doc["columns"].append({"name": "d", "dataType": {"mysqlType": "decimal", "length": 100, "decimal": 2}})
    with pytest.raises(ValueError, match="DECIMAL"):
        arrow_schema(table_schema_from_dict(doc))


# --------------------------------------------------------------------------- finding 6: zones
BAD_LOCATIONS = {
    "directory": "America",
    "nested-directory": "America/Argentina",
    "parent": "../../../../etc/passwd",
    "dot": ".",
    "absolute": "/etc/localtime",
    "too-long": "Asia/" + "x" * 300,
    "nul": "UTC\x00",
    "tzdata-file": "zone1970.tab",
    "space": "Asia/Shanghai ",
}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("case", sorted(BAD_LOCATIONS))
def test_timestamp_location_that_is_no_zone(case, encoding, impl):
    bad = _ins(V1, 2, ts=(BAD_LOCATIONS[case], "2024-05-01 08:00:00.000"))
    dec = _dec(encoding, impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, _values(encoding, [SimpleBootstrap(V1), bad]))
    assert ei.value.message_index == 1, str(ei.value)
    # the core cannot pass a name longer than its buffer back: it names no column then, and the
    # twins, which read a message in the core's order, fail it the same way
    assert ei.value.column == (None if case == "too-long" else "ts"), str(ei.value)
    assert "unknown time zone" in str(ei.value) and len(str(ei.value)) < 300
    rows = plain_rows(dec.decode(None, _values(encoding, [SimpleBootstrap(V1), _ins(V1, 3)])))
    assert rows[1]["after"]["ts"] == "2024-05-01 00:00:00.003Z"


@pytest.mark.parametrize("raw", [b"Asia/\xff\xfe", b"\xc3(", b"Europe/Berl\xedn"])
def test_timestamp_location_not_utf8(raw, impl):
    ok = _values("avro", [SimpleBootstrap(V1), _ins(V1, 1)])
    assert b"Asia/Shanghai" in ok[1]
    padded = raw + b"~" * (len(b"Asia/Shanghai") - len(raw))
    broken = ok[1].replace(b"Asia/Shanghai", padded)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _dec("avro", impl).decode(None, [ok[0], broken])
    assert ei.value.message_index == 1


def test_zone_names_are_checked_before_the_file_system():
    from ticdc_fast.timezones import get_zone
    for name in list(BAD_LOCATIONS.values()) + ["Asia/Shanghai\n", "+08:00\n", 5, None, "Asia/Ш"]:
        with pytest.raises(ValueError):
            get_zone(name)
    assert get_zone("Etc/GMT+5") is not None and get_zone("America/Argentina/Salta") is not None


# --------------------------------------------------------------------------- finding 4: hold queue
def test_decode_never_walks_the_whole_hold_queue(monkeypatch, impl):
    """Held rows are added, released and rolled back by key and arrival number: nothing iterates
    the queue (the old front end copied it on every decode())."""
    held = _values("json", [_ins(V1, k) for k in range(50)])
    dec = _dec("json", impl)
    for v in held:
        dec.decode(None, [v])
    assert dec.held() == 50

    def walked(self):
        raise AssertionError("the hold queue was walked")
    monkeypatch.setattr(hold_module.HoldQueue, "__iter__", walked)
    dec.decode(None, _values("json", [SimpleBootstrap(OTHER), _ins(V1, 99)]))
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, [b"{"])
    assert dec.held() == 51
    rows = dec.decode(None, _values("json", [SimpleBootstrap(V1)])).to_pylist()
    assert [r["_op"] for r in rows] == ["BOOTSTRAP"] + ["INSERT"] * 51
    assert dec.held() == 0


def _state(dec):
    return json.loads(json.dumps(dec.state()))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_failed_decode_restores_released_rows(encoding, impl):
    held = _values(encoding, [_ins(V1, 1), _ins(V1, 2)])
    dec = _dec(encoding, impl, hold_max_rows=3, on_hold_overflow="emit")
    dec.decode(None, held, offsets=[0, 1])
    before = _state(dec)
    batch = _values(encoding, [SimpleBootstrap(V1), _ins(V1, 3)]) + [b"\x00garbage"]
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, batch, offsets=[2, 3, 4])
    assert ei.value.message_index == 2
    assert _state(dec) == before and dec.held() == 2
    # retried without the bad message: exactly the rows of a decoder that never failed
    good = plain_rows(dec.decode(None, batch[:2], offsets=[2, 3]))
    fresh = _dec(encoding, impl, hold_max_rows=3, on_hold_overflow="emit")
    fresh.decode(None, held, offsets=[0, 1])
    assert good == plain_rows(fresh.decode(None, batch[:2], offsets=[2, 3]))
    assert [(r["_op"], r["_offset"]) for r in good] == [("BOOTSTRAP", 2), ("INSERT", 0), ("INSERT", 1),
                                                         ("INSERT", 3)]
    assert dec.held() == 0 and dec.table_schema("app", "users") is not None


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_failed_decode_restores_rows_emitted_at_the_bound(encoding, impl):
    dec = _dec(encoding, impl, hold_max_rows=2, on_hold_overflow="emit")
    dec.decode(None, _values(encoding, [_ins(V1, 1), _ins(V1, 2)]), offsets=[0, 1])
    before = _state(dec)
    batch = _values(encoding, [_ins(V1, 3), _ins(V1, 4)]) + [b"\x00garbage"]
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, batch, offsets=[2, 3, 4])
    assert _state(dec) == before
    rows = dec.decode(None, batch[:2], offsets=[2, 3]).to_pylist()
    assert [(r["_undecodable"], r["_offset"]) for r in rows] == [(True, 0), (True, 1)]
    assert [h["offset"] for h in dec.state()["held"]] == [2, 3]
    rows = dec.decode(None, _values(encoding, [SimpleBootstrap(V1)]), offsets=[5]).to_pylist()
    assert [(r["_op"], r["_offset"]) for r in rows] == [("BOOTSTRAP", 5), ("INSERT", 2), ("INSERT", 3)]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_failed_decode_forgets_schemas_it_announced(encoding, impl):
    dec = _dec(encoding, impl)
    dec.decode(None, _values(encoding, [_ins(V1, 1)]))
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, _values(encoding, [SimpleBootstrap(OTHER), SimpleBootstrap(V1)]) + [b"\x00"])
    assert dec.table_schema("app", "users") is None and dec.table_schema("app", "other") is None
    assert dec.held() == 1 and dec.state()["schemas"] == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hold_order_and_state_survive_interleaved_releases(encoding, impl):
    """Rows of two tables held in turn, one table released, a failure, a state round trip:
    the remaining rows keep their arrival order."""
    other_rows = [SimpleDML(OTHER, "INSERT", make_tso(T0 + k), data={"k": k}) for k in range(3)]
    events = [_ins(V1, 1), other_rows[0], _ins(V1, 2), other_rows[1], other_rows[2], _ins(V1, 3)]
    dec = _dec(encoding, impl)
    for off, v in enumerate(_values(encoding, events)):
        dec.decode(None, [v], offsets=[off])
    rows = dec.decode(None, _values(encoding, [SimpleBootstrap(OTHER)]), offsets=[6]).to_pylist()
    assert [r["_offset"] for r in rows] == [6, 1, 3, 4]
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, _values(encoding, [SimpleBootstrap(V1)]) + [b"\x00"], offsets=[7, 8])
    assert [h["offset"] for h in dec.state()["held"]] == [0, 2, 5]
    resumed = _dec(encoding, impl, state=_state(dec))
    rows = resumed.decode(None, _values(encoding, [SimpleBootstrap(V1)]), offsets=[9]).to_pylist()
    assert [(r["_op"], r["_offset"]) for r in rows] == [("BOOTSTRAP", 9), ("INSERT", 0), ("INSERT", 2),
                                                         ("INSERT", 5)]


def test_hold_queue_undo_log_model():
    """The queue against a plain list, through random appends, releases, bound pops and rollbacks."""
    import random
    rnd = random.Random(11)
    q = hold_module.HoldQueue()
    model: list = []
    for step in range(4000):
        q.begin()
        saved = list(model)
        for _ in range(rnd.randint(1, 6)):
            op = rnd.random()
            if op < 0.55:
                h = hold_module.Held(bytes(rnd.randint(0, 9)), (rnd.randint(0, 5),), "INSERT", step, None, None)
                q.append(h)
                model.append(h)
            elif op < 0.8 and model:
                assert q.oldest() is model[0]
                assert q.pop_oldest() is model.pop(0)
            else:
                k = (rnd.randint(0, 5),)
                assert q.take(k) == [h for h in model if h.key == k]
                model = [h for h in model if h.key != k]
        if rnd.random() < 0.3:
            q.rollback()
            model = saved
        else:
            q.commit()
        assert list(q) == model and len(q) == len(model)
        assert q.bytes == sum(len(h.value) for h in model)
        assert len(q._heap) <= 2 * len(model) + 1024 + 6 * 8


# --------------------------------------------------------------------------- finding 7a: re-announced version
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_reannounced_version_keeps_the_first_schema(encoding, impl):
    """TiCDC's decoder (memoryTableInfoProvider.Write) stores the first TableSchema of a
    (schema, table, version) and ignores later ones; so do both implementations."""
    renamed = _table(elements=("x1", "x2"))
    assert renamed.version == V1.version
    events = [SimpleBootstrap(V1), SimpleBootstrap(renamed), _ins(V1, 1, channel=1)]
    typed = dict(table="app.users", schema=pa.schema([("id", pa.int32()), ("channel", pa.string())]))
    out = _dec(encoding, impl, **typed).decode(None, _values(encoding, events))
    assert out.column("channel").to_pylist() == [None, None, "web"]
    dec = _dec(encoding, impl)
    rows = plain_rows(dec.decode(None, _values(encoding, events)))
    # each BOOTSTRAP row shows what its message sent; decoding used the first
    assert '"x1"' in rows[1]["_table_schema"] and '"web"' in rows[0]["_table_schema"]
    assert [e for c in dec.state()["schemas"][0]["columns"] for e in c["dataType"].get("elements") or ()] \
        == ["web", "app"]
    assert dec.table_schema("app", "users").column("channel").elements == ("web", "app")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_reannounced_version_after_a_failed_decode(encoding, impl):
    """A version announced in a decode() that failed is forgotten by the cache, but a later
    re-announcement with other columns still does not replace it in one place and not the other."""
    renamed = _table(elements=("x1", "x2"))
    typed = dict(table="app.users", schema=pa.schema([("id", pa.int32()), ("channel", pa.string())]))
    dec = _dec(encoding, impl, **typed)
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, _values(encoding, [SimpleBootstrap(V1)]) + [b"\x00"])
    assert dec.table_schema("app", "users") is None
    out = dec.decode(None, _values(encoding, [SimpleBootstrap(renamed), _ins(V1, 1, channel=2)]))
    channel = out.column("channel").to_pylist()[-1]
    assert channel == dec.table_schema("app", "users").column("channel").elements[1]
    resumed = _dec(encoding, impl, state=_state(dec), **typed)
    again = resumed.decode(None, _values(encoding, [_ins(V1, 2, channel=2)]))
    assert again.column("channel").to_pylist() == [channel]


def test_add_schema_returns_the_cached_first(impl):
    dec = _dec("json", impl)
    first = dec.add_schema(V1.table_schema_json())
    again = dec.add_schema(_table(elements=("x1", "x2")).table_schema_json())
    assert again is first and again.column("channel").elements == ("web", "app")


# --------------------------------------------------------------------------- finding 7b: Avro checkpoint with a key
@pytest.mark.parametrize("first", [0x01, 0x02])
def test_avro_checkpoint_or_ddl_value_with_a_key_is_an_error(first, impl):
    """TiCDC's Avro decoder (HasNext) takes any message with a key for a row, and a row value
    must start with the magic byte 0x00: a 0x02 checkpoint or 0x01 DDL value with a key fails."""
    if first == 0x02:
        bad = b"\x02" + TS.to_bytes(8, "big")
    else:
        bad = b"\x01" + orjson.dumps({"query": "CREATE TABLE t (id INT)", "type": 3, "schema": "db",
                                      "table": "t", "commitTs": TS})
    dec = ticdc_fast.AvroDecoder(schemas=SCHEMAS, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([key(), key()], [val(), bad])
    assert (ei.value.message_index, ei.value.part) == (1, "key")
    rows = dec.decode([key(), None], [val(), bad]).to_pylist()
    assert [r["_op"] for r in rows] == ["INSERT", "RESOLVED" if first == 0x02 else "DDL"]
    assert rows[1]["_key"] is None


def test_avro_checkpoint_with_a_key_in_arrow_input(impl):
    dec = ticdc_fast.AvroDecoder(schemas=SCHEMAS, implementation=impl)
    keys = pa.array([key(), key()], pa.binary())
    values = pa.array([val(), b"\x02" + TS.to_bytes(8, "big")], pa.binary())
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(keys, values)
    assert ei.value.message_index == 1
    assert struct.unpack(">q", values[1].as_py()[1:])[0] == TS


# --------------------------------------------------------------------------- DML checksum object (JSON)
CHECKSUMS = {
    "full": ({"version": 0, "corrupted": False, "current": 5, "previous": 6}, (0, False, 5, 6)),
    "partial": ({"version": 0, "current": 5}, (0, False, 5, 0)),       # absent: Go's zero value
    "empty": ({}, (0, False, 0, 0)),
    "current-beyond-32-bits": ({"current": 2 ** 33 + 7}, (0, False, 7, 0)),
    "version-string": ({"version": "1"}, None),
    "version-float": ({"version": 1.5}, None),
    "current-1e309": ("1e309", None),
    "current-negative": ({"current": -1}, None),
    "current-2**64": ({"current": 2 ** 64}, None),
    "corrupted-int": ({"corrupted": 1}, None),
    "current-null": ({"current": None}, None),
}


@pytest.mark.parametrize("case", sorted(CHECKSUMS))
def test_checksum_object_fields(case, impl):
    checksum, want = CHECKSUMS[case]
    boot, ins = _values("json", [SimpleBootstrap(V1), _ins(V1, 1)])
    doc = json.loads(ins)
    doc["checksum"] = {"current": 0} if checksum == "1e309" else checksum
    raw = json.dumps(doc).encode()
    if checksum == "1e309":
        raw = raw.replace(b'"current": 0', b'"current": 1e309')
    dec = _dec("json", impl)
    if want is None:
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode(None, [boot, raw])
        assert ei.value.message_index == 1
        return
    row = dec.decode(None, [boot, raw]).to_pylist()[1]
    assert (row["_checksum_version"], row["_checksum_corrupted"], row["_checksum_current"],
            row["_checksum_previous"]) == want


@pytest.mark.parametrize("value", ["abc", "1" * 5000, 7])
def test_verify_checksum_of_a_held_row_with_a_bad_value(value, impl):
    """A held row's checksum is verified before the row is decoded: a value no checksum can be
    computed for is a DecodeError, not whatever int()/base64 raise."""
    boot, ins = _values("json", [SimpleBootstrap(V1), _ins(V1, 1)])
    doc = json.loads(ins)
    doc["data"]["id"] = value
    doc["checksum"] = {"version": 0, "corrupted": False, "current": 1, "previous": 0}
    dec = _dec("json", impl, verify_checksum=True)
    dec.decode(None, [json.dumps(doc).encode()])
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, [boot])
    assert dec.held() == 1


@pytest.mark.parametrize("escaped,ok", [(b"UTC\\u0000x", False), (b"Asia/Shanghai\\u0000x", False),
                                        (b"\\u0000", False), (b"Asia\\/Shanghai", True),
                                        (b"Asia/Shangha\\u0069", True)])
def test_timestamp_location_with_json_escapes(escaped, ok, impl):
    """A NUL escaped into a location is no zone (not the zone before it); other escapes decode."""
    boot, ins = _values("json", [SimpleBootstrap(V1), _ins(V1, 1)])
    bad = ins.replace(b"Asia/Shanghai", escaped)
    dec = _dec("json", impl)
    if ok:
        rows = plain_rows(dec.decode(None, [boot, bad]))
        assert rows[1]["after"]["ts"] == "2024-05-01 00:00:00.001Z"
        return
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, [boot, bad])
    assert (ei.value.message_index, ei.value.column) == (1, "ts")


# --------------------------------------------------------------------------- every TableSchema field, every JSON type
_SWAPS = [None, True, 1, -1, 1.5, "x", [], {}, 2 ** 64 - 1, 2 ** 64, [1], ["a"], {"a": 1}]
_TYPED = dict(table="app.users", schema=pa.schema([("id", pa.int64()), ("channel", pa.string()),
                                                    ("ts", pa.timestamp("us", tz="UTC"))]))


def _paths(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for k, v in enumerate(obj):
            yield from _paths(v, path + (k,))


def _swapped_bootstraps():
    doc = _bootstrap_doc()
    for path in _paths(doc["tableSchema"]):
        for value in _SWAPS:
            d = json.loads(json.dumps(doc))
            if not path:
                d["tableSchema"] = value
            else:
                obj = d["tableSchema"]
                for p in path[:-1]:
                    obj = obj[p]
                obj[path[-1]] = value
            yield path, value, json.dumps(d).encode()


def _outcome(impl, typed, raw, ins):
    try:
        return ticdc_fast.SimpleDecoder("json", implementation=impl, **(_TYPED if typed else {})) \
            .decode(None, [raw, ins]).to_pylist()
    except ticdc_fast.DecodeError:
        return "DecodeError"


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_every_table_schema_field_with_every_json_type():
    """Each field of a BOOTSTRAP's TableSchema replaced by each JSON type (and 2^64): only
    DecodeError or rows, the same in the core and the twin, generic and typed (before issue 11:
    111 of these 702 cases raised AttributeError/OverflowError/ArrowTypeError or disagreed)."""
    ins = _values("json", [_ins(V1, 1)])[0]
    cases = 0
    for path, value, raw in _swapped_bootstraps():
        for typed in (False, True):
            core, twin = _outcome("cython", typed, raw, ins), _outcome("python", typed, raw, ins)
            assert core == twin, (path, value, typed)
        cases += 1
    assert cases > 600


@pytest.mark.parametrize("depth", [2000, 200_000])
def test_deep_nesting_after_a_huge_number(depth, impl):
    """orjson refuses 1e999, so the document is parsed again by the standard library, whose
    recursion limit must surface as a DecodeError too."""
    raw = b'{"type":"QUERY","x":1e999,"y":' + b"[" * depth + b"]" * depth + b',"commitTs":1}'
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _dec("json", impl).decode(None, [raw])
    assert ei.value.message_index == 0 and "nesting" in str(ei.value)


_ENVELOPE_SWAPS = [None, True, 1, -1, 1.5, "x", [], {}, 2 ** 64 - 1, 2 ** 64, 2 ** 63, [1], {"a": 1}, "INSERT",
                   "WATERMARK", "BOOTSTRAP", "QUERY"]


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_every_envelope_field_with_every_json_type():
    """Each top-level field of a BOOTSTRAP, DDL, WATERMARK, INSERT and UPDATE (and the optional
    ones they lack) replaced by each JSON type: only DecodeError or rows, the same in the core
    and the twin, generic and typed."""
    from ticdc_fast.testing import SimpleDDL
    boot, ins, wm = _values("json", [SimpleBootstrap(V1), _ins(V1, 1), SimpleWatermark(make_tso(T0))])
    ddl = _values("json", [SimpleDDL("ALTER", "ALTER TABLE users ADD c INT", make_tso(T0 + 4), V1, V1)])[0]
    upd = _values("json", [SimpleDML(V1, "UPDATE", make_tso(T0 + 2), old={"id": 1, "name": "b"},
                                     data={"id": 1, "name": "a", "channel": 1,
                                           "ts": ("UTC", "2024-05-01 00:00:00.000")})])[0]
    extra = ["checksum", "handleKeyOnly", "claimCheckLocation", "preTableSchema", "tableSchema", "data", "old"]
    cases = 0
    for msg, before in ((boot, []), (ins, [boot]), (wm, []), (ddl, []), (upd, [boot])):
        doc = json.loads(msg)
        for field in list(doc) + [k for k in extra if k not in doc]:
            for value in _ENVELOPE_SWAPS:
                raw = json.dumps({**doc, field: value}).encode()
                for typed in (False, True):
                    outcomes = []
                    for impl in ("cython", "python"):
                        try:
                            outcomes.append(_dec("json", impl, **(_TYPED if typed else {}))
                                            .decode(None, before + [raw]).to_pylist())
                        except ticdc_fast.DecodeError:
                            outcomes.append("DecodeError")
                    assert outcomes[0] == outcomes[1], (field, value, typed)
                cases += 1
    assert cases > 1000
