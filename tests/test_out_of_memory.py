"""Memory running out inside the core's decode loops.  The core's test hook refuses every
allocation after the first n; for each n up to the number of allocations one decode makes, the
decode must either succeed with the output of a decode without the hook, or raise MemoryError:
never DecodeError (an allocation failure is no fault of the input), another exception or a
crash.  The decoder must then decode the same messages normally."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.avro import avro_arrow_schema, compile_writer_schema
from ticdc_fast.testing import realistic_stream

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: the core's allocator")

PROTOCOLS = ["open", "simple-json", "simple-avro", "avro"]
TABLE = "shop.orders"
# far above the allocations of one decode of the stream below; reaching it means the walk never
# got to a decode in which nothing was refused
MAX_ALLOCATIONS = 5000


def _core():
    from ticdc_fast import _core
    return _core


def _table_schema(protocol, stream, table):
    if protocol == "open":
        return ticdc_fast.infer_open_schema(stream.keys, stream.values, table=table)
    if protocol.startswith("simple"):
        return ticdc_fast.simple_arrow_schema(stream.bootstraps[list(stream.tables).index(table)],
                                              encoding=protocol.split("-")[1])
    name = f'"{table.split(".")[1]}"'
    value_schemas = [compile_writer_schema(i, t) for i, t in stream.schemas.items() if name in t]
    return avro_arrow_schema(max(value_schemas, key=lambda w: len(w.fields)))


def _decoder_factory(protocol, stream, mode):
    if mode.startswith("typed"):
        opts = {"table": TABLE, "schema": _table_schema(protocol, stream, TABLE)}
    elif mode == "tables":
        # one pass, a typed batch per table (routed to each table's plan)
        opts = {"tables": {t: _table_schema(protocol, stream, t) for t in stream.tables}}
    else:
        opts = {}
    if mode == "typed-old-image":
        opts["old_image"] = True
    if mode == "generic-skip":
        # a refused allocation taken for a bad message would be skipped here: a row lost
        opts["on_error"] = "skip"
    if protocol == "open":
        return lambda: ticdc_fast.OpenDecoder(implementation="cython", **opts)
    if protocol == "avro":
        return lambda: ticdc_fast.AvroDecoder(schemas=stream.schemas, implementation="cython", **opts)
    return lambda: ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation="cython", **opts)


@pytest.fixture
def no_buffer_pool():
    # released output blocks are kept for reuse: a decode then allocates nothing for its columns
    core = _core()
    old = core.set_buffer_pool_limit(0)
    try:
        yield core
    finally:
        core._fail_allocations_after(-1)
        core.set_buffer_pool_limit(old)


def _same(a, b):
    if isinstance(a, pa.RecordBatch):
        return a.equals(b)
    return list(a) == list(b) and all(a[t].equals(b[t]) for t in a)     # a batch per table


def _walk(core, make, keys, values):
    """Refuse the allocations of one decode in turn; the number of allocations it makes."""
    reference = make().decode(keys, values)
    for n in range(MAX_ALLOCATIONS):
        decoder = make()         # a fresh one: its first decode makes the most allocations
        core._fail_allocations_after(n)
        try:
            out = decoder.decode(keys, values)
        except MemoryError:
            out = None
        finally:
            refused = core._fail_allocations_after(-1)
        if out is not None:
            assert _same(out, reference), f"allocation {n} refused: the output differs"
        if refused == 0:
            assert out is not None
            return n
        assert _same(decoder.decode(keys, values), reference), f"allocation {n} refused: the next decode differs"
    pytest.fail(f"one decode still made allocations after {MAX_ALLOCATIONS}")


def _with_long_texts(monkeypatch):
    """The orders' TEXT column (escapes, markup, non-ASCII) made ~60 KB long in every other
    row: more than the share of the batch's reservation its column gets, so its builders grow
    while values are written (the converters' and renderers' own allocation paths)."""
    from ticdc_fast.testing import realistic
    changes = realistic.interleaved_changes
    text = realistic.mix_columns("orders10").index(("c07_text", "text"))

    def lengthened(image, k):
        if image is None or image[text] is None or k % 2:
            return image
        return image[:text] + ((image[text] + ' "é" <€> & 🎁\n') * 600,) + image[text + 1:]

    def long_texts(*args, **kwargs):
        out = []
        for k, ch in enumerate(changes(*args, **kwargs)):
            if ch[0] == "row" and ch[5] == "orders":
                ch = ch[:3] + (lengthened(ch[3], k), lengthened(ch[4], k)) + ch[5:]
            out.append(ch)
        return out

    monkeypatch.setattr(realistic, "interleaved_changes", long_texts)


# (decoder mode, text values); a batch per table builds three typed plans, whose long-text walk
# adds little to the single-table one's and costs most of this file's time
CASES = [(mode, texts) for mode in ["generic", "generic-skip", "typed", "typed-old-image", "tables"]
         for texts in ["realistic", "long"] if (mode, texts) != ("tables", "long")]


@pytest.mark.parametrize(("mode", "texts"), CASES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_refused_allocation_is_a_memory_error(protocol, mode, texts, no_buffer_pool, monkeypatch):
    if texts == "long":
        _with_long_texts(monkeypatch)
    stream = realistic_stream(protocol, 40, seed=5)
    keys = None if protocol.startswith("simple") else stream.keys
    allocations = _walk(no_buffer_pool, _decoder_factory(protocol, stream, mode), keys, stream.values)
    # every output column reserves its buffers: the hook was reached
    assert allocations > 20


def test_the_memory_error_names_the_batch(no_buffer_pool):
    stream = realistic_stream("open", 10, seed=5)
    decoder = ticdc_fast.OpenDecoder(implementation="cython")
    reference = ticdc_fast.OpenDecoder(implementation="cython").decode(stream.keys, stream.values)
    no_buffer_pool._fail_allocations_after(0)
    try:
        with pytest.raises(MemoryError, match="out of memory"):
            decoder.decode(stream.keys, stream.values)
    finally:
        assert no_buffer_pool._fail_allocations_after(-1) > 0
    assert decoder.decode(stream.keys, stream.values).equals(reference)
