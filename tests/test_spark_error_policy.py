"""Error policies in Spark: ``ticdc_fast.spark.decode(..., on_error=...)`` on a real SparkSession,
and a streaming query over a real broker topic with poison messages that runs to the end with
``"dead_letter"``, its dead letters equal to the injected messages with their partitions and
offsets."""
from __future__ import annotations

import pytest

import ticdc_fast
from ticdc_fast import spark as tfs
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

POISON = [b"\x00\x00\x00", b"{not json", b"\x00" * 8 + b"\xff" * 8]


@pytest.fixture(scope="module")
def messages():
    return OpenEncoder("ticdc").encode(realistic_changefeed(300, seed=11, flavor="ticdc"))


def _kafka_rows(messages, poison_at):
    """(key, value, partition, offset) with poison values at the given positions (partitions 0/1)."""
    rows, poison = [], iter(POISON)
    out_pos = {0: 0, 1: 0}
    for i, (k, v) in enumerate(messages):
        if i in poison_at:
            p = i % 2
            rows.append((k, next(poison), p, out_pos[p]))
            out_pos[p] += 1
        p = i % 2
        rows.append((k, v, p, out_pos[p]))
        out_pos[p] += 1
    return rows


def _df(spark, rows, slices=3):
    return spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint").repartition(slices)


def _expected_rows(messages, rows, impl):
    good = [r for r in rows if r[1] not in POISON]
    dec = ticdc_fast.OpenDecoder(implementation=impl)
    out = dec.decode([r[0] for r in good], [r[1] for r in good], partitions=[r[2] for r in good],
                     offsets=[r[3] for r in good])
    return out.num_rows, {(r["_partition"], r["_offset"], r["_op"], r["_commit_ts"]) for r in out.to_pylist()}


@pytest.mark.parametrize("policy", ["skip", "dead_letter"])
def test_batch_decode_with_a_policy(spark, messages, impl, policy):
    rows = _kafka_rows(messages, {3, 10, 17})
    acc = tfs.decode_stats(spark)
    out = tfs.decode(_df(spark, rows), "open", on_error=policy, stats=acc, implementation=impl)
    good, dead = tfs.split_dead_letters(out) if policy == "dead_letter" else (out, None)
    got = good.collect()
    n_rows, keys = _expected_rows(messages, rows, impl)
    assert len(got) == n_rows
    assert {(r["_partition"], r["_offset"], r["_op"], r["_commit_ts"]) for r in got} == keys
    stats = acc.value
    assert stats.messages == len(rows)
    assert stats.rows == n_rows
    if policy == "skip":
        assert (stats.skipped, stats.dead_lettered) == (3, 0)
        return
    assert (stats.skipped, stats.dead_lettered) == (0, 3)
    bad = sorted((r["_partition"], r["_offset"], r["_raw_value"], r["_error"]["offset"]) for r in dead.collect())
    want = sorted((p, o, v, o) for k, v, p, o in rows if v in POISON)
    assert bad == want
    assert "_error" not in good.columns and "_raw_value" in dead.columns


def test_fail_names_the_kafka_position_in_the_task_error(spark, messages, impl):
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException
    rows = _kafka_rows(messages, {10})
    bad = next(r for r in rows if r[1] in POISON)
    with pytest.raises((PySparkException, Py4JJavaError)) as info:
        tfs.decode(_df(spark, rows, 1), "open", implementation=impl).collect()
    assert f"Kafka partition {bad[2]}, offset {bad[3]}" in str(info.value)


def test_bad_policy_is_refused_in_the_driver(spark, messages):
    with pytest.raises(ValueError, match="on_error"):
        tfs.decode(_df(spark, _kafka_rows(messages, set())), "open", on_error="permissive")


# --------------------------------------------------------------------------- streaming, real broker
def test_streaming_query_with_poison_messages_runs_to_the_end(spark, kafka, messages, tmp_path):
    topic = "poison_stream"
    kafka.create_topic(topic, partitions=2)
    poison_at = {2, 9, 20}
    produced_poison = []
    to_send = []
    for i, (k, v) in enumerate(messages):
        if i in poison_at:
            to_send.append((k, POISON[len(produced_poison)], i % 2))
            produced_poison.append(len(to_send) - 1)
        to_send.append((k, v, i % 2))
    positions = kafka.produce(topic, to_send)      # [(partition, offset)] per message
    injected = sorted((positions[j][0], positions[j][1], to_send[j][1]) for j in produced_poison)

    acc = tfs.decode_stats(spark)
    good_rows, dead_rows = [], []

    def sink(df, batch_id):
        df.persist()     # decoded once, though read twice (and the accumulator counts it once)
        try:
            good, dead = tfs.split_dead_letters(df)
            good_rows.extend(good.collect())
            dead_rows.extend(dead.collect())
        finally:
            df.unpersist()

    source = (spark.readStream.format("ticdc_kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
              .option("subscribe", topic).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", 7).load())
    decoded = tfs.decode(source, "open", on_error="dead_letter", stats=acc)
    q = (decoded.writeStream.foreachBatch(sink).option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(180), "the availableNow query did not finish"
    finally:
        if q.isActive:
            q.stop()
    assert q.exception() is None
    # the dead letters are exactly the injected messages, with their Kafka positions
    assert sorted((r["_partition"], r["_offset"], r["_raw_value"]) for r in dead_rows) == injected
    for r in dead_rows:
        assert (r["_error"]["partition"], r["_error"]["offset"]) == (r["_partition"], r["_offset"])
        assert r["_error"]["reason"]
    # the good rows are those of the clean messages, each once
    good_positions = [(p, o) for j, (p, o) in enumerate(positions) if j not in produced_poison]
    dec = ticdc_fast.OpenDecoder()
    clean = [to_send[j] for j in range(len(to_send)) if j not in produced_poison]
    want = dec.decode([m[0] for m in clean], [m[1] for m in clean],
                      partitions=[p for p, _ in good_positions], offsets=[o for _, o in good_positions])
    assert sorted((r["_partition"], r["_offset"], r["_op"], r["_commit_ts"]) for r in good_rows) == \
        sorted((r["_partition"], r["_offset"], r["_op"], r["_commit_ts"]) for r in want.to_pylist())
    assert acc.value.dead_lettered == len(injected)
    assert acc.value.messages == len(to_send)
