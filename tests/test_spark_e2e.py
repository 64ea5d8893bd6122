"""End to end, all real: TiCDC messages of each protocol produced to a real Kafka-compatible broker,
read by Spark through the ticdc_kafka data source, decoded with ticdc_fast.spark.decode, folded
with latest_state — and a streaming query stopped and restarted from its checkpoint."""
from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import spark as tfs
from ticdc_fast.testing import (AvroEncoder, LocalSchemaRegistry, OpenEncoder, SimpleEncoder,
                                realistic_avro_changefeed, realistic_changefeed, simple_changefeed)
from ticdc_fast.testing.open_encoder import Resolved, RowChange

_topics = itertools.count()


def _topic(name):
    return f"e2e-{name}-{next(_topics)}"


def _read(spark, kafka, topic):
    return (spark.read.format("ticdc_kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .option("subscribe", topic).option("startingOffsets", "earliest").load())


def _expected_state(events):
    """Apply row events in order: the table as TiDB has it at the end (by id)."""
    state = {}
    for ev in events:
        if not isinstance(ev, RowChange):
            continue
        img = ev.after if ev.after is not None else ev.before
        key = next(c.value for c in img if c.name == "id")
        if ev.after is None:
            state.pop(key, None)
        else:
            state[key] = {c.name: c.value for c in ev.after}
    return state


def _rows_by_position(df):
    """Spark rows as dicts in Kafka order (stable: a message's rows keep their order)."""
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["_partition"], r["_offset"]))


def _arrow_rows(batch):
    """pyarrow gives maps as lists of pairs; Spark as dicts."""
    return [{k: (dict(v) if isinstance(v, list) else v) for k, v in r.items()} for r in batch.to_pylist()]


def test_open_protocol_end_to_end(spark, kafka):
    events = realistic_changefeed(3000, seed=21)
    msgs = OpenEncoder().encode(events)
    msgs += msgs[-20:]                                   # at-least-once re-delivery
    topic = _topic("open")
    kafka.create_topic(topic, partitions=1)
    kafka.produce(topic, msgs)
    raw = _read(spark, kafka, topic).cache()
    assert raw.count() == len(msgs)
    changelog = tfs.decode(raw, "open")
    got = _rows_by_position(changelog)
    want = ticdc_fast.OpenDecoder().decode([k for k, _ in msgs], [v for _, v in msgs],
                                           partitions=[0] * len(msgs), offsets=list(range(len(msgs))))
    assert got == _arrow_rows(want)
    # typed + latest_state equals the table TiDB ends with
    _, _, schema = tfs.open_table_schema([k for k, _ in msgs[:300]], [v for _, v in msgs[:300]], "shop.orders")
    typed = tfs.decode(raw, "open", table="shop.orders", schema=schema)
    state = {r["id"]: r for r in tfs.latest_state(tfs.drop_duplicates(typed, ["id"]), ["id"]).collect()}
    expected = _expected_state(events)
    assert set(state) == set(expected)
    for k, row in expected.items():
        assert state[k]["qty"] == row["qty"] and state[k]["status"] == row["status"]
    assert tfs.complete_up_to(changelog, partitions=1) == max(e.ts for e in events if isinstance(e, Resolved))


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_simple_protocol_end_to_end(spark, kafka, encoding):
    events = simple_changefeed(2000, seed=5, alter_every=700)
    msgs = SimpleEncoder(encoding).encode(events)
    topic = _topic(f"simple-{encoding}")
    kafka.create_topic(topic, partitions=1)
    kafka.produce(topic, msgs)
    raw = _read(spark, kafka, topic)
    changelog = tfs.decode(raw, f"simple-{encoding}")
    got = _rows_by_position(changelog)
    want = ticdc_fast.SimpleDecoder(encoding).decode(None, [v for _, v in msgs],
                                                     partitions=[0] * len(msgs), offsets=list(range(len(msgs))))
    assert len(got) == want.num_rows
    assert got == _arrow_rows(want)
    state = tfs.latest_state(changelog, ["id"])
    live = {}
    for r in want.to_pylist():
        if r["_op"] in ("INSERT", "UPDATE"):
            live[dict(r["after"])["id"]] = r
        elif r["_op"] == "DELETE":
            live.pop(dict(r["before"])["id"], None)
    assert sorted(r["id"] for r in state.collect()) == sorted(live)


def test_avro_protocol_end_to_end(spark, kafka):
    with LocalSchemaRegistry(host="127.0.0.77") as reg:
        events, cols = realistic_avro_changefeed(2000, seed=3, add_column_at=1000)
        msgs = AvroEncoder(reg.url, table_columns=cols).encode(events)
        topic = _topic("avro")
        kafka.create_topic(topic, partitions=1)
        kafka.produce(topic, msgs)
        raw = _read(spark, kafka, topic)
        changelog = tfs.decode(raw, "avro", registry=reg.url)
        got = _rows_by_position(changelog)
        want = ticdc_fast.AvroDecoder(reg.url).decode([k for k, _ in msgs], [v for _, v in msgs],
                                                      partitions=[0] * len(msgs), offsets=list(range(len(msgs))))
        assert got == _arrow_rows(want)
        assert {r["_op"] for r in got} == {"INSERT", "UPDATE", "DELETE"}
        state = tfs.latest_state(changelog, ["id"]).collect()
        assert len({r["id"] for r in state}) == len(state) and state


def test_streaming_restart_from_checkpoint_no_loss_no_duplicates(spark, kafka, tmp_path):
    """A streaming decode stopped mid-stream and restarted from its checkpoint: every changelog
    row exactly once."""
    events = realistic_changefeed(2400, seed=8)
    msgs = OpenEncoder(max_batch_size=4).encode(events)
    topic = _topic("stream")
    kafka.create_topic(topic, partitions=2)
    half = len(msgs) // 2
    kafka.produce(topic, [(k, v, i % 2) for i, (k, v) in enumerate(msgs[:half])])
    out, ckpt = str(tmp_path / "out"), str(tmp_path / "ckpt")

    def run_once():
        stream = (spark.readStream.format("ticdc_kafka")
                  .option("kafka.bootstrap.servers", kafka.bootstrap_servers).option("subscribe", topic)
                  .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "150").load())
        q = (tfs.decode(stream, "open").writeStream.format("parquet").option("path", out)
             .option("checkpointLocation", ckpt).trigger(availableNow=True).start())
        q.awaitTermination(180)
        assert q.exception() is None

    run_once()
    first = spark.read.parquet(out).count()
    assert 0 < first
    kafka.produce(topic, [(k, v, (half + i) % 2) for i, (k, v) in enumerate(msgs[half:])])
    run_once()
    rows = spark.read.parquet(out).select("_partition", "_offset", "_op", "_commit_ts").collect()
    expected = ticdc_fast.OpenDecoder().decode([k for k, _ in msgs], [v for _, v in msgs]).num_rows
    assert len(rows) == expected
    per_message = {}
    for r in rows:
        per_message[(r["_partition"], r["_offset"])] = per_message.get((r["_partition"], r["_offset"]), 0) + 1
    assert len(per_message) == len(msgs)            # every Kafka message, none twice
