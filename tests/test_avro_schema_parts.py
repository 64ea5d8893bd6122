"""Compiled Avro writer schemas share their equal parts (a decoder meeting thousands of schema
ids holds a few objects per id), and a part that is equal but not the same never stands in."""
from __future__ import annotations

import json

import pytest

import ticdc_fast
from ticdc_fast.avro.schema import SchemaProblem, compile_writer_schema


def _schema(name="orders", extra=()):
    fields = [{"name": "id", "type": {"type": "long", "connect.parameters": {"tidb_type": "BIGINT"}}},
              {"name": "note", "type": ["null", {"type": "string", "connect.parameters": {"tidb_type": "TEXT"}}],
               "default": None}, *extra]
    return json.dumps({"type": "record", "name": name, "namespace": "default.shop", "fields": fields})


def test_versions_of_a_table_share_their_fields():
    same: dict = {}
    a = compile_writer_schema(1, _schema(), same)
    b = compile_writer_schema(2, _schema(), same)
    c = compile_writer_schema(3, _schema("refunds"), same)
    assert (a.schema_id, b.schema_id, c.schema_id) == (1, 2, 3) and c.table == "refunds"
    assert a.fields is b.fields is c.fields
    assert a == compile_writer_schema(1, _schema())            # the same values, shared or not
    assert a.fields[1].branches[1] is b.fields[1].branches[1]


def test_an_equal_but_different_symbol_is_not_shared():
    enum = lambda symbols: {"name": "e", "type": {"type": "enum", "name": "E", "symbols": symbols}}  # noqa: E731
    same: dict = {}
    strs = compile_writer_schema(1, _schema(extra=[enum(["1", "0"])]), same)
    nums = compile_writer_schema(2, _schema(extra=[enum([True, False])]), same)
    assert strs.fields[2].branches[0].symbols == ("1", "0")
    assert nums.fields[2].branches[0].symbols == (True, False)
    assert type(nums.fields[2].branches[0].symbols[0]) is bool
    with pytest.raises(SchemaProblem):     # unhashable parts are refused as before, not a crash
        compile_writer_schema(3, _schema(extra=[{"name": "x", "type": {"type": "long",
                                                 "connect.parameters": {"tidb_type": ["INT"]}}}]), same)


def test_many_ids_of_one_schema_decode_as_one(impl):
    from ticdc_fast.testing import many_schema_ids_stream
    key, values, schemas = many_schema_ids_stream(200, 5_000)
    dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl)
    got = dec.decode([key] * 200, values)
    one = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl).decode([key], values[:1])
    assert got.column("_value_schema_id").to_pylist() == list(range(5_000, 5_200))
    assert got.drop_columns(["_value_schema_id"]).to_pylist() == \
        one.drop_columns(["_value_schema_id"]).to_pylist() * 200
    parts = {id(ws.fields) for ws in (dec.writer_schema(5_000 + i) for i in range(200))}
    assert len(parts) == 1
