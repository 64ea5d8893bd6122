"""A decoded batch leaves the core in one piece: its blocks, and the Kafka ``_partition`` and
``_offset`` columns the core takes for each row from its message, travel inside the batch through
the Arrow C data interface and go back to the buffer pool when pyarrow lets the batch go: on any
thread, after the decoder is gone, never while a column of the batch is alive."""
from __future__ import annotations

import gc
import threading

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.testing import avro_table_schema, realistic_stream


def _avro(impl, mode="generic", rows=300, seed=11):
    stream = realistic_stream("avro", rows, seed=seed)
    kw = dict(schemas=stream.schemas)
    if mode == "typed":
        kw.update(table="shop.orders",
                  schema=avro_table_schema({i: t for i, t in stream.schemas.items() if '"orders"' in t}))
    return stream, (lambda: ticdc_fast.AvroDecoder(implementation=impl, **kw))


def _open(impl, mode="generic", rows=300, seed=13):
    stream = realistic_stream("open", rows, seed=seed)
    kw = {}
    if mode == "typed":
        kw = dict(table="shop.orders",
                  schema=ticdc_fast.infer_open_schema(stream.keys, stream.values, table="shop.orders"))
    return stream, (lambda: ticdc_fast.OpenDecoder(implementation=impl, **kw))


def _simple(impl, rows=300, seed=12):
    stream = realistic_stream("simple-json", rows, seed=seed)
    return stream, (lambda: ticdc_fast.SimpleDecoder("json", implementation=impl))


def _positions(n):
    # partitions and offsets that differ per message, so a row taken from the wrong message shows
    return [i % 7 for i in range(n)], [10_000_000_000 + 3 * i for i in range(n)]


@pytest.mark.parametrize("make", ["avro-generic", "avro-typed", "simple-json", "open-generic", "open-typed"])
@pytest.mark.parametrize("given", ["list", "array", "sliced", "int64-partitions"])
def test_kafka_columns_follow_each_row_to_its_message(impl, make, given):
    if make == "simple-json":
        stream, new = _simple(impl)
        keys = None
    elif make.startswith("open"):
        stream, new = _open(impl, mode=make.split("-")[1])
        keys = stream.keys
    else:
        stream, new = _avro(impl, mode=make.split("-")[1])
        keys = stream.keys
    n = len(stream.values)
    parts, offs = _positions(n)
    # the message index of each row, read back through offsets that are the index itself
    index = new().decode(keys, stream.values, partitions=[0] * n, offsets=list(range(n)))
    msg = index.column("_offset").to_pylist()
    assert len(msg) > 100 and msg == sorted(msg) and 0 <= msg[0] and msg[-1] < n
    if given == "list":
        p, o = parts, offs
    elif given == "array":
        p, o = pa.array(parts, pa.int32()), pa.array(offs, pa.int64())
    elif given == "sliced":
        p = pa.array([99] * 5 + parts + [98], pa.int32()).slice(5, n)
        o = pa.array([-1] * 3 + offs, pa.int64()).slice(3, n)
    else:
        p, o = pa.array(parts, pa.int64()), pa.chunked_array([pa.array(offs[:n // 2], pa.int64()),
                                                             pa.array(offs[n // 2:], pa.int64())])
    out = new().decode(keys, stream.values, partitions=p, offsets=o)
    assert out.schema.names[-2:] == ["_partition", "_offset"]
    assert out.schema.field("_partition").type == pa.int32()
    assert out.schema.field("_offset").type == pa.int64()
    assert out.column("_partition").to_pylist() == [parts[m] for m in msg]
    assert out.column("_offset").to_pylist() == [offs[m] for m in msg]
    plain = new().decode(keys, stream.values)
    assert out.select(plain.schema.names).equals(plain)


def test_null_kafka_positions_are_kept_as_nulls(impl):
    """A partition given as None (pyarrow nulls) is a null in each of its message's rows, in the
    core as in the twin (the core hands such columns to pyarrow's `take`)."""
    stream, new = _avro(impl)
    n = len(stream.values)
    parts = [None if i % 5 == 0 else i % 3 for i in range(n)]
    out = new().decode(stream.keys, stream.values, partitions=parts, offsets=list(range(n)))
    msg = out.column("_offset").to_pylist()
    assert out.column("_partition").to_pylist() == [parts[m] for m in msg]
    assert out.column("_partition").null_count > 0


core_only = pytest.mark.skipif(_impl.core is None, reason="TICDC_FAST_PURE=1: the pool is in the Cython core")


@core_only
def test_a_batch_outlives_its_decoder_and_returns_its_blocks_when_released():
    stream, new = _avro("cython", mode="typed")
    want = new().decode(stream.keys, stream.values).to_pylist()
    old = ticdc_fast.set_buffer_pool_limit(0)
    try:
        ticdc_fast.set_buffer_pool_limit(256 << 20)
        dec = new()
        n = len(stream.values)
        batch = dec.decode(stream.keys, stream.values, partitions=[1] * n, offsets=list(range(n)))
        del dec
        gc.collect()
        before = _impl.core.buffer_pool_bytes()
        assert batch.drop_columns(["_partition", "_offset"]).to_pylist() == want
        column = batch.column(3)
        del batch
        gc.collect()
        assert _impl.core.buffer_pool_bytes() == before      # a column keeps the whole batch
        del column
        gc.collect()
        assert _impl.core.buffer_pool_bytes() > before
        # the decoder is gone: its blocks are anyone's
        assert all(owner == 0 for _, owner in _impl.core._buffer_pool_blocks())
    finally:
        ticdc_fast.set_buffer_pool_limit(old)


@core_only
def test_a_batch_released_on_another_thread_returns_its_blocks():
    stream, new = _simple("cython")
    dec = new()
    n = len(stream.values)
    batches = [dec.decode(None, stream.values, partitions=[2] * n, offsets=list(range(n))) for _ in range(4)]
    want = new().decode(None, stream.values, partitions=[2] * n, offsets=list(range(n)))
    assert all(b.equals(want) for b in batches)
    old = ticdc_fast.set_buffer_pool_limit(0)
    try:
        ticdc_fast.set_buffer_pool_limit(256 << 20)
        done = []

        def drop():
            while batches:
                batches.pop()
            done.append(_impl.core.buffer_pool_bytes())

        t = threading.Thread(target=drop)
        t.start()
        t.join()
        assert done and done[0] > 0
        again = dec.decode(None, stream.values, partitions=[2] * n, offsets=list(range(n)))
        assert again.equals(want)
    finally:
        ticdc_fast.set_buffer_pool_limit(old)


_GROWING_BATCHES = r"""
import pyarrow as pa
import ticdc_fast
from ticdc_fast.testing import realistic_stream

stream = realistic_stream("avro", 8000, seed=14)
keys, values = stream.keys, stream.values
dec = ticdc_fast.AvroDecoder(implementation="cython", schemas=stream.schemas)
twin = ticdc_fast.AvroDecoder(implementation="python", schemas=stream.schemas)
start, size = 0, 1200       # past 4 KiB a column: pooled blocks
while start + size <= len(values):
    # each batch a little larger than the last: within the eighth by which a column takes back
    # its own pooled block although it is short of the new batch
    k, v = keys[start:start + size], values[start:start + size]
    parts, offs = [7] * size, list(range(start, start + size))
    got = dec.decode(k, v, partitions=parts, offsets=offs)
    assert got.equals(twin.decode(k, v, partitions=parts, offsets=offs)), start
    del got
    start += size
    size += size // 10
print("ok", start)
"""


@core_only
def test_kafka_columns_of_a_growing_batch_fit_their_block():
    """Found by benchmarks/threads.py ('corrupted size vs. prev_size'): the Kafka columns were
    written into their column's pooled block, which may be up to an eighth short of the batch
    (appends grow a short block; the gather did not).  In a subprocess, with glibc's heap
    checks on, so that an overrun ends the child, not the test run."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, MALLOC_CHECK_="3", MALLOC_PERTURB_="165")
    out = subprocess.run([sys.executable, "-c", _GROWING_BATCHES], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok")
