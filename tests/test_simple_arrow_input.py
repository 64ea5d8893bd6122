"""Simple-protocol input as Arrow arrays (what ``mapInArrow`` hands over): binary, large_binary,
sliced and chunked arrays decode exactly like a list of bytes, across batches with held rows,
schema changes and errors.  The Cython core reads Arrow buffers in place, so these layouts are
where it can go wrong."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.testing import SimpleEncoder, simple_changefeed

ENCODINGS = ("json", "avro")


def _values(encoding, **kw):
    events = simple_changefeed(300, seed=11, watermark_every=50, alter_every=120, **kw)
    return [v for _, v in SimpleEncoder(encoding).encode(events)]


def _layouts(values):
    """The same messages in every Arrow layout a caller may pass."""
    padded = pa.array([b"x"] + values + [b"y"], pa.binary())
    half = len(values) // 2
    return {
        "binary": pa.array(values, pa.binary()),
        "large_binary": pa.array(values, pa.large_binary()),
        "sliced": padded.slice(1, len(values)),
        "chunked": pa.chunked_array([pa.array(values[:half], pa.binary()),
                                     pa.array(values[half:], pa.binary())]),
    }


def _decode_in_batches(encoding, impl, batches, **kw):
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw)
    out = [dec.decode(None, b, offsets=list(range(k * 1000, k * 1000 + len(b))))
           for k, b in enumerate(batches)]
    return out, dec.held()


@pytest.mark.parametrize("layout", ["binary", "large_binary", "sliced", "chunked"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_arrow_layouts_equal_list_input_mid_stream(encoding, impl, layout):
    """Starting mid-stream (rows held until the BOOTSTRAP), with ALTERs adding columns: every
    batch equals the list-input result row for row, offsets included."""
    values = _values(encoding, start_mid_stream=True)
    cuts = [0, 37, 120, 121, len(values)]
    lists = [values[a:b] for a, b in zip(cuts, cuts[1:])]
    arrows = [_layouts(chunk)[layout] for chunk in lists]
    want, want_held = _decode_in_batches(encoding, impl, lists)
    got, got_held = _decode_in_batches(encoding, impl, arrows)
    assert got_held == want_held
    assert sum(b.num_rows for b in want) > 300
    for w, g in zip(want, got):
        assert g.equals(w)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_arrow_input_typed(encoding, impl):
    values = _values(encoding)
    probe = ticdc_fast.SimpleDecoder(encoding, implementation="python")
    probe.decode(None, values[:1])
    schema = ticdc_fast.simple_arrow_schema(probe.table_schema("shop", "orders"))
    # the schema is the first BOOTSTRAP's whole table and the stream's ALTERs add columns: a
    # real schema change, decoded on with the new columns dropped
    kw = dict(table="shop.orders", schema=schema, control_events=False, on_schema_change="ignore")
    want = ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw).decode(None, values)
    for layout, arr in _layouts(values).items():
        got = ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw).decode(None, arr)
        assert got.equals(want), layout
    assert want.column("id").null_count == 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_arrow_null_value_names_the_message(encoding, impl):
    values = _values(encoding)[:20]
    arr = pa.array(values[:7] + [None] + values[8:], pa.binary())
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, arr.slice(2))
    assert ei.value.message_index == 5
    assert "null value" in str(ei.value)
    # nothing was consumed: the decoder still works on good input
    assert dec.decode(None, pa.array(values, pa.binary())).num_rows > 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_arrow_bad_message_error_matches_list_input(encoding, impl):
    values = _values(encoding)[:40]
    bad = bytearray(values[25])
    del bad[len(bad) // 2:]
    values[25] = bytes(bad)
    errors = []
    for batch in (values, pa.array(values, pa.large_binary())):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            ticdc_fast.SimpleDecoder(encoding, implementation=impl).decode(None, batch)
        errors.append((ei.value.message_index, ei.value.byte_offset, ei.value.column, str(ei.value)))
    assert errors[0] == errors[1]
    assert errors[0][0] == 25
