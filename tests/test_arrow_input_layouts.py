"""Open- and Avro-protocol input as Arrow arrays: binary (int32 offsets, what Spark's mapInArrow
and the Kafka source hand over), large_binary, a slice of a binary array and a chunked array all
decode exactly like a list of bytes.  The Cython core reads the offsets of both widths in place,
without a cast, so the layouts and the slice offset are where it can go wrong.  (The simple
protocol's layouts are covered by test_simple_arrow_input.py.)"""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.testing import avro_table_schema, realistic_stream

LAYOUTS = ("binary", "large_binary", "sliced", "chunked")


def _layout(items, layout):
    if layout == "binary":
        return pa.array(items, pa.binary())
    if layout == "large_binary":
        return pa.array(items, pa.large_binary())
    if layout == "sliced":
        # a non-zero array offset, with messages before and after that must not be read
        return pa.array([b"\x00junk"] * 3 + list(items) + [b"\x00tail"], pa.binary()).slice(3, len(items))
    third = len(items) // 3
    return pa.chunked_array([pa.array(items[:third], pa.binary()), pa.array(items[third:], pa.binary())])


def _outcome(decode, keys, values):
    try:
        out = decode(keys, values)
    except ticdc_fast.DecodeError as exc:
        return ("error", exc.message_index, exc.byte_offset, exc.column, str(exc))
    return ("ok", out)


def _same(got, want):
    assert got[0] == want[0]
    if want[0] == "ok":
        assert got[1].num_rows == want[1].num_rows
        assert got[1].equals(want[1])
    else:
        assert got == want


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mode", ["generic", "typed"])
def test_open_arrow_layouts_equal_list_input(impl, layout, mode):
    stream = realistic_stream("open", 400, seed=5)
    kw = {}
    if mode == "typed":
        kw = dict(table="shop.orders",
                  schema=ticdc_fast.infer_open_schema(stream.keys, stream.values, table="shop.orders"))
    want = ticdc_fast.OpenDecoder(implementation=impl, **kw).decode(stream.keys, stream.values)
    got = ticdc_fast.OpenDecoder(implementation=impl, **kw).decode(
        _layout(stream.keys, layout), _layout(stream.values, layout))
    assert want.num_rows > (100 if mode == "typed" else 400)
    assert got.equals(want)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mode", ["generic", "typed"])
def test_avro_arrow_layouts_equal_list_input(impl, layout, mode):
    stream = realistic_stream("avro", 400, seed=6)
    kw = dict(schemas=stream.schemas)
    if mode == "typed":
        kw.update(table="shop.orders",
                  schema=avro_table_schema({i: t for i, t in stream.schemas.items() if '"orders"' in t}))
    want = ticdc_fast.AvroDecoder(implementation=impl, **kw).decode(stream.keys, stream.values)
    got = ticdc_fast.AvroDecoder(implementation=impl, **kw).decode(
        _layout(stream.keys, layout), _layout(stream.values, layout))
    assert want.num_rows >= (100 if mode == "typed" else 400)
    assert got.equals(want)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_avro_arrow_nulls_and_a_bad_message_as_list_input(impl, layout):
    """Null keys and values (key-less messages, tombstones) sit at the same indexes after the
    slice offset, and a truncated value fails at the same message, byte and column."""
    stream = realistic_stream("avro", 120, seed=7)
    keys, values = list(stream.keys), list(stream.values)
    keys[4] = None
    values[9] = None
    for decode_values in (values, values[:60] + [values[60][:-3]] + values[61:]):
        want = _outcome(ticdc_fast.AvroDecoder(implementation=impl, schemas=stream.schemas).decode,
                        keys, decode_values)
        got = _outcome(ticdc_fast.AvroDecoder(implementation=impl, schemas=stream.schemas).decode,
                       _layout(keys, layout), _layout(decode_values, layout))
        _same(got, want)
    assert want[0] == "error" and want[1] == 60
