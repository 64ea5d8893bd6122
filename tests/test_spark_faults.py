"""Faults survived, with real parts: a real Kafka-compatible broker (Tansu, LocalKafkaBroker), a
real SparkSession, the ``ticdc_kafka`` source, ``ticdc_fast.spark.decode`` and a Parquet file sink
with a checkpoint. Every test ends by comparing the sink's rows with the topic's contents decoded
directly: every Kafka message's rows exactly once.

* a driver process killed (SIGKILL, its whole process group: Python, JVM, workers) while a
  micro-batch is in flight, then run again from the checkpoint;
* the broker stopped and restarted mid-stream. Tansu 0.6 as shipped has only memory storage
  (``file://``/``sqlite://`` are "UnsupportedStorageUrl"; s3/postgres need servers), so the
  restart is a new broker on the same port with the topic re-created and the same records
  produced again at the same offsets (one record per produce request keeps offsets exact) —
  what a persistent broker gives back after a restart;
* the schema registry down while a new schema id (an ADD COLUMN) arrives, with every error
  policy: the query fails with UnavailableError, the sink has no row of the failed batch, and a
  run after the registry is back completes;
* the query's offsets beyond what the broker holds (its log lost): ``failOnDataLoss`` true fails
  with the documented message, false goes on from the new end. Tansu 0.6 does not implement
  DeleteRecords (the AdminClient call ends in a transport failure) nor retention, so "records
  deleted below the query's offset" (read from the earliest record left) cannot be produced on it;
  and a Fetch past the end gets an empty answer, not OFFSET_OUT_OF_RANGE, so a task's "offsets out
  of range" failure cannot be provoked on it either.

The decoding itself is not what these tests check (other tests run both implementations); the
workers run the default one."""
from __future__ import annotations

import collections
import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ticdc_fast
from ticdc_fast import spark as tfs
from ticdc_fast.testing import (AvroEncoder, LocalSchemaRegistry, OpenEncoder, realistic_avro_changefeed,
                                realistic_changefeed)
from ticdc_fast.testing.broker import LocalKafkaBroker

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
DRIVER = Path(__file__).resolve().parent / "data" / "faults" / "driver.py"
_topics = itertools.count()


def _topic(name):
    return f"faults-{name}-{next(_topics)}"


def _wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def _norm(v):
    """Arrow gives a map as a list of pairs, Spark as a dict."""
    if isinstance(v, dict):
        return tuple(sorted(v.items()))
    if isinstance(v, list) and all(isinstance(x, tuple) and len(x) == 2 for x in v):
        return tuple(sorted(v))
    return v


def _row_counter(rows, columns):
    return collections.Counter(tuple(_norm(r[c]) for c in columns) for r in rows)


def _expected(decoder, msgs, placed):
    """The rows of the topic's messages decoded directly (``placed``: their (partition, offset))."""
    out = decoder.decode([k for k, _ in msgs], [v for _, v in msgs],
                         partitions=[p for p, _ in placed], offsets=[o for _, o in placed])
    return out.schema.names, out.to_pylist()


def _assert_sink_exactly_once(spark, out, columns, expected_rows, n_messages):
    sink = spark.read.parquet(out).select(*columns).collect()
    got = _row_counter([r.asDict() for r in sink], columns)
    want = _row_counter(expected_rows, columns)
    assert sum(got.values()) == sum(want.values())
    assert got == want
    assert len({(r["_partition"], r["_offset"]) for r in sink}) == n_messages   # every message, once


def _run_available_now(df, out, ckpt, timeout=240):
    """Run a Parquet sink to the end of what is there; the query's exception or None."""
    from pyspark.errors import StreamingQueryException

    q = (df.writeStream.format("parquet").option("path", out).option("checkpointLocation", ckpt)
         .trigger(availableNow=True).start())
    try:
        if not q.awaitTermination(timeout):
            q.stop()
            raise AssertionError(f"the query did not finish within {timeout} s")
    except StreamingQueryException as exc:
        return exc
    return q.exception()


def _stream(spark, bootstrap, topic, **options):
    r = (spark.readStream.format("ticdc_kafka").option("kafka.bootstrap.servers", bootstrap)
         .option("subscribe", topic).option("startingOffsets", "earliest"))
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def _committed_batches(ckpt):
    d = Path(ckpt) / "commits"
    return sorted(int(p.name) for p in d.iterdir() if p.name.isdigit()) if d.is_dir() else []


def _planned_batches(ckpt):
    d = Path(ckpt) / "offsets"
    return sorted(int(p.name) for p in d.iterdir() if p.name.isdigit()) if d.is_dir() else []


# ====================================================================================== driver
def _driver(args, log, source="ticdc_kafka"):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               TICDC_FAULT_SOURCE=source)
    # its own session: SIGKILL to the group takes the Python driver, the JVM and the workers
    return subprocess.Popen([sys.executable, str(DRIVER), *map(str, args)], cwd=str(ROOT), env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


@pytest.mark.parametrize("source", ["ticdc_kafka", "ticdc"])
def test_driver_killed_mid_micro_batch_then_restarted(spark, kafka, tmp_path, source):
    """ticdc_kafka + decode, and the decoding source format("ticdc")."""
    msgs = OpenEncoder(max_batch_size=1).encode(realistic_changefeed(700, seed=15))
    topic = _topic(f"kill-{source}")
    kafka.create_topic(topic, partitions=2)
    placed = kafka.produce(topic, [(k, v, i % 2) for i, (k, v) in enumerate(msgs)])
    out, ckpt, sentinels = tmp_path / "out", tmp_path / "ckpt", tmp_path / "sentinels"
    sentinels.mkdir()
    per_partition = min(sum(1 for p, _ in placed if p == q) for q in (0, 1))
    # maxOffsetsPerTrigger=120: 60 records of each partition per micro-batch; hold the 3rd
    slow_from = 150
    assert per_partition > slow_from + 60

    with open(tmp_path / "driver-1.log", "wb") as log:
        proc = _driver([kafka.bootstrap_servers, topic, out, ckpt, sentinels, slow_from], log, source)
        try:
            in_flight = _wait_for(lambda: proc.poll() is None and list(sentinels.glob("in-flight-*")),
                                  300, "a micro-batch in flight (driver log: driver-1.log)")
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(60)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "driver-1.log").read_text()[-3000:]
    # killed with a micro-batch planned (in the offset log) but not committed
    committed, planned = _committed_batches(ckpt), _planned_batches(ckpt)
    assert committed and planned[-1] == committed[-1] + 1, (committed, planned, in_flight)
    names, want = _expected(ticdc_fast.OpenDecoder(), msgs, placed)
    partial = spark.read.parquet(str(out)).count()
    assert 0 < partial < len(want)

    with open(tmp_path / "driver-2.log", "wb") as log:
        proc = _driver([kafka.bootstrap_servers, topic, out, ckpt, sentinels], log, source)
        try:
            rc = proc.wait(420)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(60)
    assert rc == 0 and (sentinels / "finished").exists(), (tmp_path / "driver-2.log").read_text()[-3000:]
    _assert_sink_exactly_once(spark, str(out), names, want, len(msgs))


# ====================================================================================== broker
def test_broker_restarted_mid_stream(spark, tmp_path):
    msgs = OpenEncoder(max_batch_size=4).encode(realistic_changefeed(1400, seed=16))
    first, second = msgs[:len(msgs) * 2 // 3], msgs[len(msgs) * 2 // 3:]
    topic = _topic("restart")
    out, ckpt = str(tmp_path / "out"), str(tmp_path / "ckpt")
    broker = LocalKafkaBroker().start()
    port = broker.port
    try:
        broker.create_topic(topic, partitions=2)
        placed = broker.produce(topic, [(k, v, i % 2) for i, (k, v) in enumerate(first)])
        df = tfs.decode(_stream(spark, broker.bootstrap_servers, topic, maxOffsetsPerTrigger="100",
                                **{"kafkaConsumer.pollTimeoutMs": "60000"}), "open")
        q = (df.writeStream.format("parquet").option("path", out).option("checkpointLocation", ckpt)
             .trigger(processingTime="500 milliseconds").start())
        try:
            _wait_for(lambda: q.exception() is not None or _committed_batches(ckpt), 180,
                      "a first committed micro-batch")
            assert q.exception() is None
            assert len(_committed_batches(ckpt)) * 100 < len(first)       # still mid-stream
            broker.stop()                                                   # the broker goes away
            broker = LocalKafkaBroker(port=port).start()                    # and comes back
            broker.create_topic(topic, partitions=2)
            assert broker.produce(topic, [(k, v, i % 2) for i, (k, v) in enumerate(first)]) == placed
            placed += broker.produce(topic, [(k, v, (len(first) + i) % 2) for i, (k, v) in enumerate(second)])
            ends = {f"{topic}/{p}": 1 + max(o for pp, o in placed if pp == p) for p in (0, 1)}

            def caught_up():
                if q.exception() is not None:
                    return True
                last = q.lastProgress
                return (last is not None and last["sources"][0]["endOffset"] is not None
                        and {k: int(v) for k, v in _offsets(last["sources"][0]["endOffset"]).items()} == ends)

            _wait_for(caught_up, 300, "the query to catch up or fail")
            failure = q.exception()
        finally:
            q.stop()
        print("query after the broker restart:", "failed: " + str(failure)[:300] if failure else "went on")
        if failure is not None:     # failed loudly (data not back yet when it looked): restart
            exc = _run_available_now(df, out, ckpt)
            assert exc is None, exc
        names, want = _expected(ticdc_fast.OpenDecoder(), first + second, placed)
        _assert_sink_exactly_once(spark, out, names, want, len(placed))
    finally:
        broker.stop()


def _offsets(value):
    import json
    return json.loads(value) if isinstance(value, str) else value


# ====================================================================================== registry
def _schema_ids(msg):
    return {b[1:5] for b in msg if b is not None and len(b) >= 5 and b[0] == 0}


@pytest.mark.parametrize("policy", ["fail", "skip", "dead_letter"])
def test_registry_down_fails_loudly_and_a_restart_completes(spark, kafka, tmp_path, policy):
    host = {"fail": "127.0.15.1", "skip": "127.0.15.2", "dead_letter": "127.0.15.3"}[policy]
    with LocalSchemaRegistry(host=host) as reg:
        events, cols = realistic_avro_changefeed(240, seed=7, add_column_at=120)
        msgs = AvroEncoder(reg.url, table_columns=cols).encode(events)
        # the first message carrying a schema id not seen before it: the ADD COLUMN's new schema
        seen, split = set(), None
        for i, m in enumerate(msgs):
            ids = _schema_ids(m)
            if i > 10 and ids - seen:
                split = i
                break
            seen |= ids
        assert split is not None
        topic = _topic(f"registry-{policy}")
        kafka.create_topic(topic, partitions=1)
        placed = kafka.produce(topic, msgs[:split])
        out, ckpt = str(tmp_path / "out"), str(tmp_path / "ckpt")
        registry = {"url": reg.url, "max.retries": 0, "timeout": 5}

        def decoded():
            return tfs.decode(_stream(spark, kafka.bootstrap_servers, topic), "avro",
                              registry=registry, on_error=policy)

        assert _run_available_now(decoded(), out, ckpt) is None          # known schema ids cached
        before = spark.read.parquet(out).collect()
        committed = _committed_batches(ckpt)

        reg.down = True                                                  # 503 for every request
        placed += kafka.produce(topic, msgs[split:])
        exc = _run_available_now(decoded(), out, ckpt)
        assert exc is not None, "an unreachable registry must fail the query, whatever on_error says"
        assert "UnavailableError" in str(exc) and "503" in str(exc), str(exc)[:2000]
        assert _committed_batches(ckpt) == committed                    # the batch is not committed
        columns = spark.read.parquet(out).columns
        assert _row_counter([r.asDict() for r in spark.read.parquet(out).collect()], columns) == \
            _row_counter([r.asDict() for r in before], columns)          # and no row of it is in the sink

        reg.down = False
        assert _run_available_now(decoded(), out, ckpt) is None
        names, want = _expected(ticdc_fast.AvroDecoder(reg.url), msgs, placed)
        _assert_sink_exactly_once(spark, out, names, want, len(msgs))
        if policy == "dead_letter":
            assert tfs.split_dead_letters(spark.read.parquet(out))[1].count() == 0


# ====================================================================================== data loss
def test_offsets_beyond_the_broker_log_fail_on_data_loss_true_and_go_on_when_false(spark, tmp_path):
    msgs = OpenEncoder(max_batch_size=2).encode(realistic_changefeed(200, seed=17))
    old, lost, new = msgs[:40], msgs[40:50], msgs[50:55]
    topic = _topic("loss")
    out, ckpt = str(tmp_path / "out"), str(tmp_path / "ckpt")
    broker = LocalKafkaBroker().start()
    try:
        broker.create_topic(topic, partitions=1)
        placed = broker.produce(topic, old)

        def decoded(fail_on_data_loss):
            return tfs.decode(_stream(spark, broker.bootstrap_servers, topic,
                                      failOnDataLoss=fail_on_data_loss), "open")

        assert _run_available_now(decoded("true"), out, ckpt) is None
        # the broker loses its log: a new one on the same port, the topic holds fewer records
        port = broker.port
        broker.stop()
        broker = LocalKafkaBroker(port=port).start()
        broker.create_topic(topic, partitions=1)
        assert broker.produce(topic, lost) == [(0, o) for o in range(len(lost))]

        exc = _run_available_now(decoded("true"), out, ckpt)
        assert exc is not None and f"now ends at {len(lost)}, before the query's offset {len(old)}" in str(exc)
        assert spark.read.parquet(out).select("_offset").distinct().count() == len(old)

        # false: go on from the new end; the records below it are not read (documented)
        assert _run_available_now(decoded("false"), out, ckpt) is None
        placed += broker.produce(topic, new)
        assert placed[-len(new):] == [(0, len(lost) + i) for i in range(len(new))]
        assert _run_available_now(decoded("false"), out, ckpt) is None
        names, want = _expected(ticdc_fast.OpenDecoder(), old + new, placed[:len(old)] + placed[-len(new):])
        # the new records reuse offsets 10..14 of the lost log: (partition, offset) pairs are not
        # unique across the two logs, the rows (with their values) are
        _assert_sink_exactly_once(spark, out, names, want, len(old))
    finally:
        broker.stop()
