"""Column builders reserve what the last batch wrote: a batch like the one before needs no buffer
growth (a growth reallocates into fresh pages), and a batch unlike it still decodes exactly."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.testing import avro_table_schema, realistic_stream

pytestmark = pytest.mark.skipif(_impl.core is None, reason="TICDC_FAST_PURE=1: the builders are in the Cython core")

PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")


def _decoder(protocol, stream, mode, implementation="cython"):
    kw = {}
    if protocol == "avro":
        kw["schemas"] = stream.schemas
    if mode == "typed":
        kw["table"] = "shop.orders"
        if protocol == "open":
            kw["schema"] = ticdc_fast.infer_open_schema(stream.keys, stream.values, table="shop.orders")
        elif protocol == "avro":
            kw["schema"] = avro_table_schema({i: t for i, t in stream.schemas.items() if '"orders"' in t})
        else:
            kw["schema"] = ticdc_fast.simple_arrow_schema(stream.bootstraps[1], encoding=protocol.split("-")[1])
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation=implementation, **kw)
    if protocol == "avro":
        return ticdc_fast.AvroDecoder(implementation=implementation, **kw)
    return ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation=implementation, **kw)


def _arrays(stream, a=0, b=None):
    values = stream.values[a:b]
    keys = None if stream.protocol.startswith("simple") else stream.keys[a:b]
    return (None if keys is None else pa.array(keys, pa.binary())), pa.array(values, pa.binary())


@pytest.mark.parametrize("mode", ["generic", "typed"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_batch_like_the_last_needs_no_growth(protocol, mode):
    """Three tables, one of 100 columns (generic: 100 map entries a row), 10 % NULLs."""
    stream = realistic_stream(protocol, 1500, seed=11)
    keys, values = _arrays(stream)
    dec = _decoder(protocol, stream, mode)
    first = dec.decode(keys, values)
    before = _impl.core._builder_growths()
    again = [dec.decode(keys, values) for _ in range(2)]
    assert _impl.core._builder_growths() == before
    assert first.num_rows > 500 if mode == "typed" else first.num_rows >= 1500
    for batch in again:
        assert batch.equals(first)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_batches_larger_and_smaller_than_the_last_decode_exactly(protocol):
    """A small batch of the narrow table after a large one reserves little; the large batch after
    it outgrows that reserve and must still equal the twin's output."""
    stream = realistic_stream(protocol, 900, seed=12)
    whole = _arrays(stream)
    head = _arrays(stream, 0, 40)
    core = _decoder(protocol, stream, "generic")
    twin = _decoder(protocol, stream, "generic", implementation="python")
    for keys, values in (whole, head, whole, head):
        got = core.decode(keys, values)
        want = twin.decode(keys, values)
        assert got.equals(want)
        assert got.num_rows > 0
