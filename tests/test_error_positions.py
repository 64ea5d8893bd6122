"""Every DecodeError names the Kafka partition and offset of its message whenever the decoder was
given them — what a user needs to find the message (issue "real streams" item 1)."""
from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.testing import (AvroEncoder, OpenEncoder, SimpleEncoder, realistic_avro_changefeed,
                                realistic_changefeed, simple_changefeed)


def _stream(protocol):
    """(decoder factory kwargs, keys, values) of a valid stream of the protocol."""
    if protocol == "open":
        msgs = OpenEncoder().encode(realistic_changefeed(60, seed=4))
        return {}, [k for k, _ in msgs], [v for _, v in msgs]
    if protocol.startswith("simple"):
        enc = protocol.split("-")[1]
        msgs = SimpleEncoder(enc).encode(simple_changefeed(60, seed=4))
        return {}, None, [v for _, v in msgs]
    events, cols = realistic_avro_changefeed(60, seed=4)
    enc = AvroEncoder(table_columns=cols)
    msgs = enc.encode(events)
    return ({"schemas": {sid: text for _, sid, text in enc.registered}},
            [k for k, _ in msgs], [v for _, v in msgs])


def _decoder(protocol, impl, **kw):
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation=impl, **kw)
    if protocol.startswith("simple"):
        return ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation=impl, **kw)
    return ticdc_fast.AvroDecoder(implementation=impl, **kw)


PROTOCOLS = ["open", "simple-json", "simple-avro", "avro"]


@pytest.mark.parametrize("arrow", [False, True], ids=["lists", "arrow"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_error_names_partition_and_offset(protocol, impl, arrow):
    kw, keys, values = _stream(protocol)
    bad = len(values) - 3
    values = list(values)
    values[bad] = values[bad][: len(values[bad]) // 2]           # truncated
    parts = [7] * len(values)
    offs = list(range(1000, 1000 + len(values)))
    if arrow:
        parts, offs = pa.array(parts, pa.int32()), pa.array(offs, pa.int64())
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _decoder(protocol, impl, **kw).decode(keys, values, partitions=parts, offsets=offs)
    e = ei.value
    assert e.message_index == bad
    assert (e.partition, e.offset) == (7, 1000 + bad)
    assert f"Kafka partition 7, offset {1000 + bad}" in str(e)
    again = pickle.loads(pickle.dumps(e))                     # as Spark ships it to the driver
    assert (again.partition, again.offset, str(again)) == (7, 1000 + bad, str(e))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_positions_none_are_named(protocol, impl):
    kw, keys, values = _stream(protocol)
    values = list(values)
    values[1] = values[1][:5]
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _decoder(protocol, impl, **kw).decode(keys, values)
    assert (ei.value.partition, ei.value.offset) == (None, None)
    assert "Kafka" not in str(ei.value)


def test_held_message_from_an_earlier_batch_names_its_own_position(impl):
    """A simple-protocol DML held before its BOOTSTRAP fails only when released, in a later
    batch: the error names where that message sits in Kafka, not the releasing one."""
    from ticdc_fast.testing import SimpleBootstrap, SimpleDML
    events = simple_changefeed(30, seed=9)
    boot = next(i for i, ev in enumerate(events) if isinstance(ev, SimpleBootstrap))
    dml = next(i for i, ev in enumerate(events) if isinstance(ev, SimpleDML) and i > boot)
    values = [v for _, v in SimpleEncoder("json").encode([events[dml], events[boot]])]
    bad = values[0].replace(b'"type":"', b'"type":"', 1)
    # a value the core and the twin both reject once the schema is known: an unknown column
    bad = bad.replace(b'"data":{', b'"data":{"no_such_column":"1",', 1)
    assert bad != values[0]
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    assert dec.decode(None, [bad], partitions=[3], offsets=[41]).num_rows == 0   # held
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, [values[1]], partitions=[3], offsets=[42])
    assert (ei.value.partition, ei.value.offset) == (3, 41)
    assert "Kafka partition 3, offset 41" in str(ei.value)


def test_spark_task_error_names_kafka_partition_and_offset(spark, impl):
    from ticdc_fast import spark as tfs
    msgs = OpenEncoder().encode(realistic_changefeed(80, seed=6))
    bad = len(msgs) - 2
    rows = [(k, v if i != bad else v[:9], 5, 7000 + i) for i, (k, v) in enumerate(msgs)]
    df = spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint").coalesce(1)
    with pytest.raises(Exception) as ei:
        tfs.decode(df, "open", implementation=impl).collect()
    text = str(ei.value)
    assert "DecodeError" in text and f"Kafka partition 5, offset {7000 + bad}" in text
