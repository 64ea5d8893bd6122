"""``on_schema_change``: a typed decoder meeting an ADD/DROP COLUMN of its table after it started.

``fail`` (default) stops with ``SchemaChangedError`` naming the table and the columns, whatever
``on_error`` says; ``ignore`` drops the new columns, nulls the dropped ones and counts each
changed schema version once.  Only a change of what the typed output holds counts: a column of
the target dropped, or a column added to a table the target held whole.  A target that already
has the new column sees nothing; a target that leaves out columns the table had (a projection)
is not stopped by a new column, only by losing one of its own.  Generic output is never
affected."""
from __future__ import annotations

import pickle
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast.testing import (AvroColumn, AvroEncoder, SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML,
                                SimpleEncoder, SimpleTable, make_tso)
from ticdc_fast.testing.open_encoder import Col, RowChange

ENCODINGS = ("json", "avro")
T0 = 1_714_521_600_000


def _table(version_ms, extra=()):
    cols = [SimpleColumn("id", "int", nullable=False), SimpleColumn("name", "varchar", length=32)]
    return SimpleTable("app", "users", 42, make_tso(version_ms), cols + list(extra))


V1 = _table(T0 - 10_000)
V2 = _table(T0 - 5_000, [SimpleColumn("score", "decimal", length=8, decimal=2)])   # ADD COLUMN score
V3 = SimpleTable("app", "users", 42, make_tso(T0 - 1_000),                         # DROP COLUMN name
                 [SimpleColumn("id", "int", nullable=False), SimpleColumn("score", "decimal", length=8, decimal=2)])
TARGET = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _ins(table, k, ms, **row):
    return SimpleDML(table, "INSERT", make_tso(ms), data={"id": k, **row})


def _add_column_stream():
    return [SimpleBootstrap(V1), _ins(V1, 1, T0 + 1, name="a"),
            SimpleDDL("ALTER", "ALTER TABLE users ADD COLUMN score DECIMAL(8,2)", make_tso(T0 + 2), V2, V1),
            _ins(V2, 2, T0 + 3, name="b", score="12.50")]


def _values(encoding, events):
    return [v for _, v in SimpleEncoder(encoding).encode(events)]


def _simple(encoding, impl, **kw):
    return ticdc_fast.SimpleDecoder(encoding, implementation=impl, table="app.users", **kw)


@pytest.mark.parametrize("on_error", ["fail", "skip", "dead_letter"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_add_column_fails_by_default_whatever_on_error(encoding, impl, on_error):
    values = _values(encoding, _add_column_stream())
    dec = _simple(encoding, impl, schema=TARGET, on_error=on_error)
    with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
        dec.decode(None, values, partitions=[0] * 4, offsets=[10, 11, 12, 13])
    e = ei.value
    assert isinstance(e, ticdc_fast.DecodeError)
    assert (e.table, e.added, e.removed) == ("app.users", ("score",), ())
    assert (e.message_index, e.partition, e.offset) == (2, 0, 12)
    text = str(e)
    assert "app.users" in text and "score" in text and "ADD COLUMN score" in text
    assert "schema='auto'" in text and "on_schema_change='ignore'" in text
    assert pickle.loads(pickle.dumps(e)).added == ("score",)
    # all or nothing: nothing was learnt, the same batch fails again
    assert dec.table_schema("app", "users", V2.version) is None
    with pytest.raises(ticdc_fast.SchemaChangedError):
        dec.decode(None, values)
    # the part before the DDL is fine
    assert [r["id"] for r in dec.decode(None, values[:2]).to_pylist() if r["_op"] == "INSERT"] == [1]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_add_column_ignored_is_dropped_and_counted(encoding, impl):
    dec = _simple(encoding, impl, schema=TARGET, on_schema_change="ignore")
    rows = dec.decode(None, _values(encoding, _add_column_stream())).to_pylist()
    assert [(r["_op"], r["id"], r["name"]) for r in rows] == [
        ("BOOTSTRAP", None, None), ("INSERT", 1, "a"), ("DDL", None, None), ("INSERT", 2, "b")]
    assert "score" not in rows[0]
    assert dec.stats.schema_changes_ignored == 1


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_drop_column_fails_or_is_null(encoding, impl):
    events = _add_column_stream() + [
        SimpleDDL("ALTER", "ALTER TABLE users DROP COLUMN name", make_tso(T0 + 4), V3, V2),
        _ins(V3, 3, T0 + 5, score="1.00")]
    target = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.decimal128(8, 2))])
    with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
        _simple(encoding, impl, schema=target).decode(None, _values(encoding, events))
    assert (ei.value.added, ei.value.removed, ei.value.message_index) == ((), ("name",), 4)
    dec = _simple(encoding, impl, schema=target, on_schema_change="ignore")
    rows = [r for r in dec.decode(None, _values(encoding, events)).to_pylist() if r["_op"] == "INSERT"]
    assert [(r["id"], r["name"], r["score"]) for r in rows] == [
        (1, "a", None), (2, "b", Decimal("12.50")), (3, None, Decimal("1.00"))]
    assert dec.stats.schema_changes_ignored == 1


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_no_change_for_the_target(encoding, impl):
    events = _add_column_stream()
    # the target has the new column (the latest schema): history, no change
    with_score = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.decimal128(8, 2))])
    rows = _simple(encoding, impl, schema=with_score).decode(None, _values(encoding, events)).to_pylist()
    assert [r["score"] for r in rows if r["_op"] == "INSERT"] == [None, Decimal("12.50")]
    # with the version the target came from, older DDLs are history whatever the target lacks
    only_id = pa.schema([("id", pa.int64())])
    assert _simple(encoding, impl, schema=only_id, schema_version=V2.version).decode(
        None, _values(encoding, events)).num_rows == 4
    # generic output is never affected
    generic = ticdc_fast.SimpleDecoder(encoding, implementation=impl)
    assert generic.decode(None, _values(encoding, events)).num_rows == 4
    assert generic.stats.schema_changes_ignored == 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_projection_sees_only_its_own_columns(encoding, impl):
    events = _add_column_stream() + [
        SimpleDDL("ALTER", "ALTER TABLE users DROP COLUMN name", make_tso(T0 + 4), V3, V2),
        _ins(V3, 3, T0 + 5, score="1.00")]
    values = _values(encoding, events)
    # [id] leaves out name: the ADD COLUMN adds one more column it does not ask for, and the
    # DROP COLUMN takes none of its own
    only_id = pa.schema([("id", pa.int64())])
    dec = _simple(encoding, impl, schema=only_id)
    rows = dec.decode(None, values).to_pylist()
    assert [r["id"] for r in rows if r["_op"] == "INSERT"] == [1, 2, 3]
    assert dec.stats.schema_changes_ignored == 0
    # [id, score] leaves out name too, and keeps both its columns through both DDLs
    id_score = pa.schema([("id", pa.int64()), ("score", pa.decimal128(8, 2))])
    assert _simple(encoding, impl, schema=id_score).decode(None, values).num_rows == 6
    # [id, name] of the V2 table (a projection without score) loses name at the DROP
    with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
        _simple(encoding, impl, schema=TARGET, schema_version=V2.version).decode(None, values)
    assert (ei.value.added, ei.value.removed, ei.value.message_index) == ((), ("name",), 4)


def test_on_schema_change_argument_is_checked():
    with pytest.raises(ValueError, match="on_schema_change"):
        ticdc_fast.SimpleDecoder("json", table="a.b", schema=TARGET, on_schema_change="warn")
    with pytest.raises(ValueError, match="on_schema_change"):
        ticdc_fast.AvroDecoder(schemas={}, table="a.b", schema=TARGET, on_schema_change="warn")


# =========================================================================== Avro protocol
N, PK = C.FLAG_NULLABLE, 11
A1 = [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("name", C.T_VARCHAR, N)]
A2 = A1 + [AvroColumn("score", C.T_DOUBLE, N)]


def _avro_row(cols, i, values):
    return RowChange("app", "users", make_tso(T0 + i, 1),
                     [Col(c.name, c.type, values.get(c.name), c.flags) for c in cols if c.name in values], None)


def _avro_stream():
    enc = AvroEncoder(table_columns={("app", "users"): A1})
    msgs = enc.encode([_avro_row(A1, 0, {"id": 1, "name": "a"})])
    enc.table_columns[("app", "users")] = A2
    msgs += enc.encode([_avro_row(A2, 1, {"id": 2, "name": "b", "score": 2.5})])
    ids = [sid for s, sid, _ in enc.registered if s.endswith("-value")]
    return {sid: text for _, sid, text in enc.registered}, [k for k, _ in msgs], [v for _, v in msgs], ids


def _avro(impl, schemas, **kw):
    return ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, table="app.users", **kw)


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_avro_add_column_fails_by_default(impl, on_error):
    schemas, keys, values, (v1, v2) = _avro_stream()
    dec = _avro(impl, schemas, schema=TARGET, on_error=on_error)
    with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
        dec.decode(keys, values, partitions=[3, 3], offsets=[7, 8])
    e = ei.value
    assert (e.table, e.added, e.removed, e.message_index, e.offset) == ("app.users", ("score",), (), 1, 8)
    assert f"value schema id {v2}" in str(e)
    with pytest.raises(ticdc_fast.SchemaChangedError):   # checked again: never planned
        dec.decode(keys[1:], values[1:])


def test_avro_add_column_ignored(impl):
    schemas, keys, values, _ = _avro_stream()
    dec = _avro(impl, schemas, schema=TARGET, on_schema_change="ignore")
    rows = dec.decode(keys, values).to_pylist()
    assert [(r["id"], r["name"]) for r in rows] == [(1, "a"), (2, "b")]
    assert dec.stats.schema_changes_ignored == 1


def test_avro_projection_is_not_stopped_by_a_new_column(impl):
    schemas, keys, values, _ = _avro_stream()
    dec = _avro(impl, schemas, schema=pa.schema([("id", pa.int64())]))
    assert [r["id"] for r in dec.decode(keys, values).to_pylist()] == [1, 2]
    assert dec.stats.schema_changes_ignored == 0


def test_avro_schema_id_names_the_baseline(impl):
    schemas, keys, values, (v1, v2) = _avro_stream()
    # a decoder that starts at the new schema sees no change by itself, but one told the id its
    # schema came from does
    assert _avro(impl, schemas, schema=TARGET).decode(keys[1:], values[1:]).num_rows == 1
    with pytest.raises(ticdc_fast.SchemaChangedError):
        _avro(impl, schemas, schema=TARGET, schema_version=v1).decode(keys[1:], values[1:])
    # the target taken from the latest schema: earlier ids are history
    with_score = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())])
    rows = _avro(impl, schemas, schema=with_score, schema_version=v2).decode(keys, values).to_pylist()
    assert [r["score"] for r in rows] == [None, 2.5]
    generic = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl)
    assert generic.decode(keys, values).num_rows == 2
