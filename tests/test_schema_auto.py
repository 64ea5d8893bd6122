"""``schema="auto"``: typed output whose schema comes from the stream (simple protocol: the
table's latest BOOTSTRAP/DDL) or the registry (Avro protocol: the latest value schema of the
topic's subject, over HTTP).  DDLs and schema ids up to that version are history; a later one
that changes the table is a schema change."""
from __future__ import annotations

import itertools
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.simple import latest_table_schema
from ticdc_fast.testing import AvroEncoder, LocalSchemaRegistry, SimpleDDL, SimpleEncoder, make_tso

from test_schema_change import A1, A2, ENCODINGS, T0, V1, V2, V3, _add_column_stream, _avro_row, _ins, _values

_hosts = itertools.count(1)


def _drop_name_events():
    return [SimpleDDL("ALTER", "ALTER TABLE users DROP COLUMN name", make_tso(T0 + 4), V3, V2),
            _ins(V3, 3, T0 + 5, score="1.00")]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_auto_takes_the_latest_schema_in_the_first_batch(encoding, impl):
    values = _values(encoding, _add_column_stream())
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, table="app.users", schema="auto")
    rows = dec.decode(None, values).to_pylist()
    # the ADD COLUMN is the schema's own history: typed with score, nothing stopped
    assert [(r["_op"], r["id"], r["name"], r["score"]) for r in rows] == [
        ("BOOTSTRAP", None, None, None), ("INSERT", 1, "a", None), ("DDL", None, None, None),
        ("INSERT", 2, "b", Decimal("12.50"))]
    assert dec.output_schema().field("score").type == pa.decimal128(8, 2)
    # a later DDL that drops one of its columns is a change
    with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
        dec.decode(None, _values(encoding, _drop_name_events()))
    assert (ei.value.table, ei.value.removed) == ("app.users", ("name",))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_auto_takes_a_seeded_schema_first(encoding, impl):
    values = _values(encoding, _add_column_stream())
    # seeded with V1 (its BOOTSTRAP value): the stream's ADD COLUMN comes after it
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, table="app.users", schema="auto",
                                   schemas=[values[0]])
    assert dec.output_schema().names[2:4] == ["id", "name"]
    with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
        dec.decode(None, values)
    assert ei.value.added == ("score",)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_simple_auto_without_a_schema_in_sight(encoding, impl):
    values = _values(encoding, _add_column_stream())
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, table="app.users", schema="auto")
    with pytest.raises(ValueError, match="no BOOTSTRAP or DDL of app.users"):
        dec.decode(None, [values[1]])
    with pytest.raises(ValueError, match="needs table="):
        ticdc_fast.SimpleDecoder(encoding, schema="auto")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_latest_table_schema_helper(encoding):
    values = _values(encoding, _add_column_stream() + _drop_name_events())
    assert latest_table_schema(values, "app.users", encoding=encoding).version == V3.version
    assert latest_table_schema(values[:3], "app.users", encoding=encoding).version == V2.version
    assert latest_table_schema(values, "app.other", encoding=encoding) is None
    # bad and null messages are passed over (decoding reports them)
    assert latest_table_schema([b"\x16\x02junk", None, values[0]], "app.users",
                               encoding=encoding).version == V1.version
    compressed = [v for _, v in SimpleEncoder(encoding, compression="lz4").encode(_add_column_stream())]
    assert latest_table_schema(compressed, "app.users", encoding=encoding,
                               compression="lz4").version == V2.version


# =========================================================================== Avro protocol
def _registry():
    n = next(_hosts)
    return LocalSchemaRegistry(host=f"127.85.{n // 250}.{n % 250 + 1}")


def _avro_messages(url, topic):
    enc = AvroEncoder(url, topic=topic, table_columns={("app", "users"): A1})
    msgs = enc.encode([_avro_row(A1, 0, {"id": 1, "name": "a"})])
    enc.table_columns[("app", "users")] = A2
    msgs += enc.encode([_avro_row(A2, 1, {"id": 2, "name": "b", "score": 2.5})])
    ids = [sid for s, sid, _ in enc.registered if s.endswith("-value")]
    return [k for k, _ in msgs], [v for _, v in msgs], ids


def test_avro_auto_takes_the_registrys_latest_value_schema(impl):
    with _registry() as reg:
        keys, values, (v1, v2) = _avro_messages(reg.url, "cdc.users")   # subject cdc_users-value
        dec = ticdc_fast.AvroDecoder(reg.url, implementation=impl, table="app.users", schema="auto",
                                     topic="cdc.users")
        assert dec.output_schema().names[2:5] == ["id", "name", "score"]
        rows = dec.decode(keys, values).to_pylist()
        assert [(r["id"], r["name"], r["score"]) for r in rows] == [(1, "a", None), (2, "b", 2.5)]
        assert dec.stats.schema_changes_ignored == 0
        # a schema registered later that drops a column of it is a change
        enc = AvroEncoder(reg.url, topic="cdc.users", table_columns={("app", "users"): [A2[0], A2[2]]})
        msgs = enc.encode([_avro_row([A2[0], A2[2]], 2, {"id": 3, "score": 1.0})])
        with pytest.raises(ticdc_fast.SchemaChangedError) as ei:
            dec.decode([k for k, _ in msgs], [v for _, v in msgs])
        assert ei.value.removed == ("name",)
        # started now, auto takes that one
        again = ticdc_fast.AvroDecoder(reg.url, implementation=impl, table="app.users", schema="auto",
                                       topic="cdc.users")
        assert again.output_schema().names[2:4] == ["id", "score"]


def test_avro_auto_errors(impl):
    with _registry() as reg:
        _avro_messages(reg.url, "cdc.users")
        with pytest.raises(ValueError, match="is table app.users, not app.orders"):
            ticdc_fast.AvroDecoder(reg.url, table="app.orders", schema="auto", topic="cdc.users")
        with pytest.raises(ValueError, match="no value schema for topic 'nope'"):
            ticdc_fast.AvroDecoder(reg.url, table="app.users", schema="auto", topic="nope")
        with pytest.raises(ValueError, match="needs topic="):
            ticdc_fast.AvroDecoder(reg.url, table="app.users", schema="auto")
        url = reg.url
    with pytest.raises(ticdc_fast.UnavailableError):
        ticdc_fast.AvroDecoder({"url": url, "max.retries": 0}, table="app.users", schema="auto",
                               topic="cdc.users", registry_timeout=2)
