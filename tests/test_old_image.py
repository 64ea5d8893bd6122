"""Typed output with ``old_image=True``: a ``_before`` struct of the table's typed fields holds the
old image, converted exactly as the new image is — UPDATE its old row, DELETE the deleted row (the
columns hold it too), null on INSERT, UPSERT and control rows.  Open protocol, simple protocol
(JSON and Avro) and the Avro protocol (``_ticdc_before``, TiCDC's avro-include-before-value), both
implementations, several batches through one decoder."""
from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import confluent_framed, include_before_value_schemas, tidb_typed
from ticdc_fast import _constants as C
from ticdc_fast.testing import (AvroColumn, AvroEncoder, OpenEncoder, SimpleBootstrap, SimpleColumn, SimpleDML,
                                SimpleEncoder, SimpleTable, SimpleWatermark, make_tso)
from ticdc_fast.testing.open_encoder import DDL, Col, Resolved, RowChange

UTC = dt.timezone.utc
U64_MAX = (1 << 64) - 1
T0 = 1_714_521_600_000

# the target every protocol decodes into: exact types beyond float (uint64 above 2^63, decimals,
# instants, binary), plus a column the table does not have (null in both images)
TARGET = pa.schema([("id", pa.int64()), ("u", pa.uint64()), ("amount", pa.decimal128(12, 2)),
                    ("at", pa.timestamp("us", tz="UTC")), ("note", pa.string()), ("raw", pa.binary()),
                    ("absent", pa.int32())])
OLD = {"id": 1, "u": U64_MAX, "amount": "-12345678.90", "at": "2024-02-29 23:59:59.999999",
       "note": "héllo", "raw": b"\x00\xff\x80"}
NEW = {"id": 2, "u": (1 << 63) + 5, "amount": "0.01", "at": None, "note": None, "raw": b""}
# what OLD and NEW decode to (TIMESTAMP rendered in Asia/Shanghai: UTC+8)
OLD_TYPED = {"id": 1, "u": U64_MAX, "amount": Decimal("-12345678.90"),
             "at": dt.datetime(2024, 2, 29, 15, 59, 59, 999999, tzinfo=UTC), "note": "héllo",
             "raw": b"\x00\xff\x80", "absent": None}
NEW_TYPED = {"id": 2, "u": (1 << 63) + 5, "amount": Decimal("0.01"), "at": None, "note": None, "raw": b"",
             "absent": None}
ZONE = "Asia/Shanghai"


def _plain(batch):
    """Rows with timestamps as UTC datetimes (pyarrow gives the zone object of the type)."""
    rows = batch.to_pylist()
    for r in rows:
        for img in (r, r.get("_before") or {}):
            if img.get("at") is not None:
                img["at"] = img["at"].astimezone(UTC)
    return rows


def _typed_part(row):
    return {k: row[k] for k in TARGET.names}


def _check_layout(schema, trailer_start):
    names = schema.names
    assert names[:2] == ["_op", "_commit_ts"] and names[2:2 + len(TARGET)] == TARGET.names
    assert names[2 + len(TARGET)] == "_before" and names[3 + len(TARGET)] == trailer_start
    before = schema.field("_before").type
    assert pa.types.is_struct(before)
    assert [(f.name, f.type) for f in before] == [(f.name, f.type) for f in TARGET]


# =========================================================================== open protocol
OPEN_TYPES = {"id": (C.T_LONGLONG, 11), "u": (C.T_LONGLONG, C.FLAG_UNSIGNED | C.FLAG_NULLABLE),
              "amount": (C.T_NEWDECIMAL, C.FLAG_NULLABLE), "at": (C.T_TIMESTAMP, C.FLAG_NULLABLE),
              "note": (C.T_VARCHAR, C.FLAG_NULLABLE), "raw": (C.T_BLOB, C.FLAG_BINARY | C.FLAG_NULLABLE)}


def _cols(values):
    return [Col(n, OPEN_TYPES[n][0], v, OPEN_TYPES[n][1]) for n, v in values.items()]


def _open_events():
    return [DDL("db", "t", 5, "CREATE TABLE t (...)", 3),
            RowChange("db", "t", 10, after=_cols(OLD)),                       # INSERT id 1
            RowChange("db", "t", 20, after=_cols(NEW), before=_cols(OLD)),    # raw UPDATE id 1 -> 2
            RowChange("db", "other", 20, after=_cols(NEW)),                   # another table: skipped
            Resolved(25),
            RowChange("db", "t", 30, before=_cols(NEW)),                      # DELETE id 2
            RowChange("db", "t", 40, after=_cols(OLD), before=_cols(OLD))]    # UPDATE keeping its key


OPEN_EXPECTED = [("DDL", None, None), ("INSERT", OLD_TYPED, None), ("UPDATE", NEW_TYPED, OLD_TYPED),
                 ("RESOLVED", None, None), ("DELETE", NEW_TYPED, NEW_TYPED), ("UPDATE", OLD_TYPED, OLD_TYPED)]


def _none_typed():
    return {k: None for k in TARGET.names}


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
@pytest.mark.parametrize("per_batch", [100, 1], ids=["one-batch", "batch-per-message"])
def test_open_old_image(impl, flavor, per_batch):
    msgs = OpenEncoder(flavor, max_batch_size=2).encode(_open_events())
    dec = ticdc_fast.OpenDecoder(table="db.t", schema=TARGET, timezone=ZONE, old_image=True,
                                 implementation=impl)
    _check_layout(dec.output_schema(), "_ddl")
    rows = []
    for s in range(0, len(msgs), per_batch):
        chunk = msgs[s:s + per_batch]
        batch = dec.decode([k for k, _ in chunk], [v for _, v in chunk], partitions=[0] * len(chunk))
        assert batch.schema == dec.output_schema(partitions=True)
        rows += _plain(batch)
    got = [(r["_op"], _typed_part(r), r["_before"]) for r in rows]
    assert got == [(op, new or _none_typed(), old) for op, new, old in OPEN_EXPECTED]


def test_open_old_image_is_opt_in(impl):
    msgs = OpenEncoder(max_batch_size=4).encode(_open_events())
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    plain = ticdc_fast.OpenDecoder(table="db.t", schema=TARGET, timezone=ZONE, implementation=impl)
    with_old = ticdc_fast.OpenDecoder(table="db.t", schema=TARGET, timezone=ZONE, old_image=True,
                                      implementation=impl)
    a, b = plain.decode(keys, values), with_old.decode(keys, values)
    assert "_before" not in a.schema.names
    assert b.drop_columns(["_before"]).equals(a)
    with pytest.raises(ValueError, match="typed mode"):
        ticdc_fast.OpenDecoder(old_image=True, implementation=impl)


def test_open_old_image_conversion_error_names_the_column(impl):
    """The old image is converted by the same rules: a value the target cannot hold is a
    DecodeError naming its column, even when the new image is fine."""
    bad = RowChange("db", "t", 20, after=[Col("id", C.T_LONGLONG, 2, 11)], before=[Col("id", C.T_LONGLONG, 1 << 40, 11)])
    (key, value), = OpenEncoder().encode([RowChange("db", "t", 10, after=[Col("id", C.T_LONGLONG, 1, 11)]), bad])
    schema = pa.schema([("id", pa.int32())])
    assert ticdc_fast.OpenDecoder(table="db.t", schema=schema, implementation=impl).decode(
        [key], [value]).column("id").to_pylist() == [1, 2]
    dec = ticdc_fast.OpenDecoder(table="db.t", schema=schema, old_image=True, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode([key], [value])
    assert (info.value.message_index, info.value.column) == (0, "id")
    assert "out of range" in info.value.reason
    # the decoder is usable afterwards (builders reset)
    (k2, v2), = OpenEncoder().encode([RowChange("db", "t", 30, after=[Col("id", C.T_LONGLONG, 3, 11)],
                                                before=[Col("id", C.T_LONGLONG, 2, 11)])])
    assert dec.decode([k2], [v2]).column("_before").to_pylist() == [{"id": 2}]


# =========================================================================== simple protocol
TABLE = SimpleTable("db", "t", 50, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("u", "bigint", unsigned=True),
    SimpleColumn("amount", "decimal", length=12, decimal=2), SimpleColumn("at", "timestamp", decimal=6),
    SimpleColumn("note", "varchar", length=20), SimpleColumn("raw", "varbinary", length=16)])


def _simple_events():
    ts = [make_tso(T0 + i) for i in range(6)]
    return [SimpleBootstrap(TABLE),
            SimpleDML(TABLE, "INSERT", ts[0], data=OLD),
            SimpleDML(TABLE, "UPDATE", ts[1], data=NEW, old=OLD),
            SimpleWatermark(ts[2]),
            SimpleDML(TABLE, "DELETE", ts[3], old=NEW),
            SimpleDML(TABLE, "UPDATE", ts[4], data=OLD, old=OLD)]


SIMPLE_EXPECTED = [("BOOTSTRAP", None, None), ("INSERT", OLD_TYPED, None), ("UPDATE", NEW_TYPED, OLD_TYPED),
                   ("RESOLVED", None, None), ("DELETE", NEW_TYPED, NEW_TYPED), ("UPDATE", OLD_TYPED, OLD_TYPED)]


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("per_batch", [100, 1], ids=["one-batch", "batch-per-message"])
def test_simple_old_image(impl, encoding, per_batch):
    values = [v for _, v in SimpleEncoder(encoding, location=ZONE).encode(_simple_events())]
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=TARGET, timezone=ZONE, old_image=True,
                                   implementation=impl)
    _check_layout(dec.output_schema(), "_ddl")
    rows = []
    for s in range(0, len(values), per_batch):
        batch = dec.decode(None, values[s:s + per_batch])
        assert batch.schema == dec.output_schema()
        rows += _plain(batch)
    got = [(r["_op"], _typed_part(r), r["_before"]) for r in rows]
    assert got == [(op, new or _none_typed(), old) for op, new, old in SIMPLE_EXPECTED]


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_simple_old_image_of_held_and_undecodable_rows(impl, encoding):
    """A DML held until its schema arrives keeps its old image; one emitted undecodable has none."""
    values = [v for _, v in SimpleEncoder(encoding, location=ZONE).encode(_simple_events())]
    dml_first = [values[2], values[0], values[4]]          # UPDATE before the BOOTSTRAP, then a DELETE
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=TARGET, timezone=ZONE, old_image=True,
                                   implementation=impl)
    rows = _plain(dec.decode(None, dml_first))
    assert [(r["_op"], r["_before"]) for r in rows] == [("BOOTSTRAP", None), ("UPDATE", OLD_TYPED),
                                                        ("DELETE", NEW_TYPED)]
    lone = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=TARGET, old_image=True, implementation=impl,
                                    hold_max_rows=0, on_hold_overflow="emit")
    rows = lone.decode(None, [values[2]]).to_pylist()
    assert [(r["_op"], r["_undecodable"], r["_before"]) for r in rows] == [("UPDATE", True, None)]


# =========================================================================== Avro protocol
_FIELDS = [{"name": "id", "type": tidb_typed("long", "BIGINT")},
           {"default": None, "name": "u", "type": ["null", tidb_typed("string", "BIGINT UNSIGNED")]},
           {"default": None, "name": "amount", "type": ["null", tidb_typed("string", "DECIMAL")]},
           {"default": None, "name": "at", "type": ["null", tidb_typed("string", "TIMESTAMP")]},
           {"default": None, "name": "note", "type": ["null", tidb_typed("string", "VARCHAR")]},
           {"default": None, "name": "raw", "type": ["null", tidb_typed("bytes", "VARBINARY")]}]
BEFORE_KEY, BEFORE_VALUE = include_before_value_schemas(_FIELDS)


def _avro_record(values):
    rec = {k: values[k] for k in ("id", "note", "raw")}
    rec["u"] = None if values["u"] is None else str(values["u"])
    rec["amount"], rec["at"] = values["amount"], values["at"]
    return rec


def test_avro_old_image(impl):
    """TiCDC's avro-include-before-value: an UPDATE carries ``_ticdc_before`` (here a key change),
    a DELETE its pre-row (``_tidb_op`` d) or, as a tombstone, only its key."""
    schemas = {1: json.dumps(BEFORE_KEY), 2: json.dumps(BEFORE_VALUE)}
    ext = {"_tidb_commit_physical_time": 0}

    def value(values, op, ts, before=None):
        return confluent_framed(2, BEFORE_VALUE, dict(_avro_record(values), _ticdc_before=before and _avro_record(before),
                                             _tidb_op=op, _tidb_commit_ts=ts, **ext))
    msgs = [(confluent_framed(1, BEFORE_KEY, {"id": 1}), value(OLD, "c", 10)),
            (confluent_framed(1, BEFORE_KEY, {"id": 2}), value(NEW, "u", 20, before=OLD)),
            (confluent_framed(1, BEFORE_KEY, {"id": 2}), value(NEW, "d", 30)),
            (confluent_framed(1, BEFORE_KEY, {"id": 1}), None),                       # tombstone
            (None, b"\x02" + (40).to_bytes(8, "big"))]                       # checkpoint (test-only)
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    dec = ticdc_fast.AvroDecoder(schemas=schemas, table="db.t", schema=TARGET, timezone=ZONE, old_image=True,
                                 implementation=impl)
    _check_layout(dec.output_schema(), "_ddl")
    rows = []
    for s in (0, 2, 3):       # several batches through one decoder
        end = {0: 2, 2: 3, 3: 5}[s]
        rows += _plain(dec.decode(keys[s:end], values[s:end]))
    key_only = dict(_none_typed(), id=1)
    got = [(r["_op"], _typed_part(r), r["_before"]) for r in rows]
    assert got == [("INSERT", OLD_TYPED, None), ("UPDATE", NEW_TYPED, OLD_TYPED), ("DELETE", NEW_TYPED, NEW_TYPED),
                   ("DELETE", key_only, key_only), ("RESOLVED", _none_typed(), None)]


def test_avro_without_before_value_has_no_old_image(impl):
    """Without avro-include-before-value TiCDC sends no old image: ``_before`` is null on UPDATE
    (TiCDC splits key-changing updates into DELETE + INSERT then, unless output-raw-change-event)."""
    cols = [AvroColumn("id", C.T_LONGLONG, 11), AvroColumn("v", C.T_LONG, C.FLAG_NULLABLE)]
    enc = AvroEncoder(table_columns={("db", "t"): cols})
    msgs = enc.encode([RowChange("db", "t", make_tso(T0), [Col("id", C.T_LONGLONG, 1, 11), Col("v", C.T_LONG, 1)]),
                       RowChange("db", "t", make_tso(T0 + 1), [Col("id", C.T_LONGLONG, 1, 11), Col("v", C.T_LONG, 2)],
                                 [Col("id", C.T_LONGLONG, 1, 11), Col("v", C.T_LONG, 1)])])
    schemas = {sid: text for _, sid, text in enc.registered}
    dec = ticdc_fast.AvroDecoder(schemas=schemas, table="db.t", schema=pa.schema([("id", pa.int64()), ("v", pa.int32())]),
                                 old_image=True, implementation=impl)
    rows = dec.decode([k for k, _ in msgs], [v for _, v in msgs]).to_pylist()
    assert [(r["_op"], r["v"], r["_before"]) for r in rows] == [("INSERT", 1, None), ("UPDATE", 2, None)]
