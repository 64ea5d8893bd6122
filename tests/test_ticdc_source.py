"""Kafka metadata on decoded rows (``_topic``, ``_timestamp``, ``_headers``) through
``ticdc_fast.spark.decode`` and ``decode_partition``, and the ``ticdc`` data source (decoding
inside the reader) against a real broker: batch reads, typed output from a DDL option, and a
streaming query restarted from its checkpoint that neither loses nor repeats rows."""
from __future__ import annotations

import datetime as dt
import itertools

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import spark as tfs
from ticdc_fast.spark.decoding import DecodeSpec, decode_partition
from ticdc_fast.spark.ticdc_source import parse_table_schema
from ticdc_fast.testing import (OpenEncoder, SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder,
                                SimpleTable, make_tso, realistic_changefeed)

UTC = dt.timezone.utc
T0 = 1_714_521_600_000
_topics = itertools.count()


def _topic(name):
    return f"src-{name}-{next(_topics)}"


@pytest.fixture(scope="module")
def open_messages():
    return OpenEncoder("ticdc").encode(realistic_changefeed(400, seed=3, flavor="ticdc"))


def _kafka_batch(keys, values, topic, partitions, offsets, stamps_ms):
    return pa.RecordBatch.from_pydict({
        "key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary()),
        "topic": pa.array([topic] * len(values), pa.string()),
        "partition": pa.array(partitions, pa.int32()), "offset": pa.array(offsets, pa.int64()),
        "timestamp": pa.array([s * 1000 for s in stamps_ms], pa.timestamp("us", tz="UTC"))})


META = {"topic": pa.string(), "timestamp": pa.timestamp("us", tz="UTC")}


def _spec(protocol, impl, on_error="fail"):
    from ticdc_fast.spark.decoding import _with_meta_fields, output_arrow_schema
    opts = {"on_error": on_error, "implementation": impl}
    return DecodeSpec(protocol, None, None, opts,
                      _with_meta_fields(output_arrow_schema(protocol, **opts), META), META)


# ------------------------------------------------------------------ metadata without Spark
def test_held_simple_rows_keep_their_own_message_metadata(impl):
    """A simple-protocol DML held for its schema is released in a later batch with the topic and
    timestamp of its own message, not of the batch that released it."""
    table = SimpleTable("app", "users", 42, make_tso(T0 - 10_000),
                        [SimpleColumn("id", "int", nullable=False)])
    events = [SimpleDML(table, "INSERT", make_tso(T0 + 1), data={"id": 1}),
              SimpleDML(table, "INSERT", make_tso(T0 + 2), data={"id": 2}),
              SimpleBootstrap(table), SimpleDML(table, "INSERT", make_tso(T0 + 3), data={"id": 3})]
    values = [v for _, v in SimpleEncoder("json").encode(events)]
    batches = [_kafka_batch([None, None], values[:2], "t1", [0, 1], [10, 20], [T0 + 1, T0 + 2]),
               _kafka_batch([None, None], values[2:], "t1", [0, 0], [11, 12], [T0 + 3, T0 + 4])]
    out = list(decode_partition(iter(batches), _spec("simple-json", impl)))
    rows = [r for b in out for r in b.to_pylist()]
    got = [(r["_op"], r["_partition"], r["_offset"], r["_topic"], r["_timestamp"]) for r in rows]
    ts = [dt.datetime.fromtimestamp((T0 + k) / 1000, UTC) for k in (1, 2, 3, 4)]
    assert got == [("BOOTSTRAP", 0, 11, "t1", ts[2]), ("INSERT", 0, 10, "t1", ts[0]),
                   ("INSERT", 1, 20, "t1", ts[1]), ("INSERT", 0, 12, "t1", ts[3])]


def test_two_topics_in_one_partition_get_their_own_metadata(impl, open_messages):
    msgs = open_messages[:20]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    a = _kafka_batch(keys[:10], values[:10], "a", [0] * 10, range(10), [T0 + i for i in range(10)])
    b = _kafka_batch(keys[10:], values[10:], "b", [0] * 10, range(10), [T0 + 100 + i for i in range(10)])
    mixed = pa.Table.from_batches([a, b]).combine_chunks().to_batches()[0]
    rows = [r for o in decode_partition(iter([mixed]), _spec("open", impl)) for r in o.to_pylist()]
    want_a = ticdc_fast.OpenDecoder(implementation=impl).decode(keys[:10], values[:10], partitions=[0] * 10,
                                                                 offsets=list(range(10)))
    want_b = ticdc_fast.OpenDecoder(implementation=impl).decode(keys[10:], values[10:], partitions=[0] * 10,
                                                                 offsets=list(range(10)))
    assert len(rows) == want_a.num_rows + want_b.num_rows
    for topic, base, want in (("a", 0, want_a), ("b", 100, want_b)):
        got = [r for r in rows if r["_topic"] == topic]
        assert [(r["_offset"], r["_commit_ts"]) for r in got] == \
            [(r["_offset"], r["_commit_ts"]) for r in want.to_pylist()]
        assert all(r["_timestamp"] == dt.datetime.fromtimestamp((T0 + base + r["_offset"]) / 1000, UTC)
                   for r in got)


def test_dead_letters_carry_topic_and_timestamp(impl, open_messages):
    msgs = open_messages[:10]
    keys = [k for k, _ in msgs]
    values = [v for _, v in msgs]
    values[4] = b"{not json"
    batch = _kafka_batch(keys, values, "dl", [3] * 10, range(100, 110), [T0 + i for i in range(10)])
    rows = [r for o in decode_partition(iter([batch]), _spec("open", impl, "dead_letter"))
            for r in o.to_pylist()]
    dead = [r for r in rows if r["_op"] == "ERROR"]
    assert [(r["_partition"], r["_offset"], r["_topic"], r["_timestamp"], r["_raw_value"]) for r in dead] == \
        [(3, 104, "dl", dt.datetime.fromtimestamp((T0 + 4) / 1000, UTC), b"{not json")]
    assert all(r["_topic"] == "dl" for r in rows)


def test_schema_option_forms():
    ddl = parse_table_schema("id BIGINT NOT NULL, `odd name` DECIMAL(20, 0) COMMENT 'a, b', s VARCHAR(8), t TIMESTAMP")
    assert ddl.simpleString() == "struct<id:bigint,odd name:decimal(20,0),s:string,t:timestamp>"
    assert [f.nullable for f in ddl.fields] == [False, True, True, True]
    assert parse_table_schema(ddl.json()) == ddl
    with pytest.raises(ValueError, match="cannot read the column"):
        parse_table_schema("id BIGINT, oops")
    with pytest.raises(ValueError, match="cannot read the column"):
        parse_table_schema("a ARRAY<INT>")       # nested: the JSON form
    with pytest.raises(ValueError, match="unsupported type"):
        parse_table_schema("a INTERVAL")


# ------------------------------------------------------------------ Spark: decode
def test_decode_passes_topic_and_timestamp(spark, impl, open_messages):
    msgs = open_messages[:80]
    rows = [(k, v, "orders", i % 2, i // 2, dt.datetime.fromtimestamp((T0 + i) / 1000, UTC))
            for i, (k, v) in enumerate(msgs)]
    df = spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, "
                                     "offset bigint, timestamp timestamp").repartition(2)
    out = tfs.decode(df, "open", implementation=impl)
    assert out.columns[-4:] == ["_partition", "_offset", "_topic", "_timestamp"]
    assert dict(out.dtypes)["_timestamp"] == "timestamp"
    got = out.collect()
    want = ticdc_fast.OpenDecoder(implementation=impl).decode(
        [r[0] for r in rows], [r[1] for r in rows], partitions=[r[3] for r in rows],
        offsets=[r[4] for r in rows])
    assert len(got) == want.num_rows
    stamp = {(r[3], r[4]): r[5] for r in rows}
    for r in got:
        assert r["_topic"] == "orders"
        assert r["_timestamp"].replace(tzinfo=UTC) == stamp[(r["_partition"], r["_offset"])] \
            or r["_timestamp"] == stamp[(r["_partition"], r["_offset"])].replace(tzinfo=None)


# ------------------------------------------------------------------ Spark: format("ticdc")
def _ticdc(spark, kafka, topic, stream=False, **options):
    r = (spark.readStream if stream else spark.read).format("ticdc")
    r = r.option("kafka.bootstrap.servers", kafka.bootstrap_servers).option("subscribe", topic)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def _produce(kafka, topic, msgs):
    """Two partitions, alternating; returns [(partition, offset)] per message."""
    return kafka.produce(topic, [(k, v, i % 2) for i, (k, v) in enumerate(msgs)])


def _want(msgs, produced, impl):
    dec = ticdc_fast.OpenDecoder(implementation=impl)
    out = []
    for p in (0, 1):
        mine = [(m, po) for m, po in zip(msgs, produced) if po[0] == p]
        b = dec.decode([m[0] for m, _ in mine], [m[1] for m, _ in mine],
                       partitions=[po[0] for _, po in mine], offsets=[po[1] for _, po in mine])
        out += b.to_pylist()
    return out


def _key(r):
    after = r["after"]
    after = tuple(sorted(after.items() if isinstance(after, dict) else after)) if after else None
    return (r["_partition"], r["_offset"], r["_op"], r["_commit_ts"], r["_table"], after)


def test_ticdc_source_batch_read(spark, kafka, impl, open_messages):
    topic = _topic("batch")
    kafka.create_topic(topic, partitions=2)
    produced = _produce(kafka, topic, open_messages)
    df = _ticdc(spark, kafka, topic, protocol="open", startingOffsets="earliest",
                implementation=impl, arrowBatchSize="97")
    want = _want(open_messages, produced, impl)
    got = [r.asDict() for r in df.collect()]
    assert sorted(map(_key, got)) == sorted(map(_key, want))
    assert {r["_topic"] for r in got} == {topic}
    now = dt.datetime.now(UTC).replace(tzinfo=None)
    assert all(abs((r["_timestamp"].replace(tzinfo=None) - now).total_seconds()) < 600 for r in got)
    assert df.columns == list(tfs.decode(spark.createDataFrame([], "key binary, value binary, topic string, "
                                                                   "partition int, offset bigint, timestamp timestamp"),
                                         "open").columns)


def test_ticdc_source_typed_from_ddl(spark, kafka, impl, open_messages):
    topic = _topic("typed")
    kafka.create_topic(topic, partitions=2)
    _produce(kafka, topic, open_messages)
    keys, values = [k for k, _ in open_messages], [v for _, v in open_messages]
    _, _, schema = tfs.open_table_schema(keys[:200], values[:200], "shop.orders")
    ddl = tfs.spark_ddl(tfs.decoding.to_spark_struct(schema))
    typed = _ticdc(spark, kafka, topic, protocol="open", table="shop.orders", schema=ddl,
                   startingOffsets="earliest", implementation=impl)
    via_decode = tfs.decode(_read_kafka(spark, kafka, topic), "open", table="shop.orders",
                            schema=ddl, implementation=impl)
    assert typed.schema == via_decode.schema
    assert sorted(map(repr, typed.collect())) == sorted(map(repr, via_decode.collect()))


def _read_kafka(spark, kafka, topic):
    return (spark.read.format("ticdc_kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .option("subscribe", topic).option("startingOffsets", "earliest").load())


def _available_now(spark, kafka, topic, ckpt, impl):
    got = []

    def collect(df, batch_id):
        got.extend(r.asDict() for r in df.collect())

    q = (_ticdc(spark, kafka, topic, stream=True, protocol="open", startingOffsets="earliest",
                implementation=impl, maxOffsetsPerTrigger="150")
         .writeStream.foreachBatch(collect).option("checkpointLocation", str(ckpt))
         .trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(120), "the availableNow query did not finish"
    finally:
        if q.isActive:
            q.stop()
    assert q.exception() is None
    return got


def test_ticdc_source_streaming_restart_no_loss_no_duplicates(spark, kafka, impl, tmp_path):
    msgs = OpenEncoder("ticdc").encode(realistic_changefeed(500, seed=8, flavor="ticdc"))
    half = len(msgs) // 2
    topic = _topic("stream")
    kafka.create_topic(topic, partitions=2)
    produced = _produce(kafka, topic, msgs[:half])
    run1 = _available_now(spark, kafka, topic, tmp_path / "ckpt", impl)
    produced += _produce(kafka, topic, msgs[half:])
    run2 = _available_now(spark, kafka, topic, tmp_path / "ckpt", impl)
    assert run1 and run2
    assert not {(r["_partition"], r["_offset"]) for r in run1} & {(r["_partition"], r["_offset"]) for r in run2}
    # each Kafka partition is one open-protocol stream: decode them whole, compare row for row
    assert sorted(map(_key, run1 + run2)) == sorted(map(_key, _want(msgs, produced, impl)))
    assert _available_now(spark, kafka, topic, tmp_path / "ckpt", impl) == []


def test_ticdc_source_options_validation(spark, kafka):
    with pytest.raises(Exception, match="protocol"):
        _ticdc(spark, kafka, "x", protocol="nope").schema
    with pytest.raises(Exception, match="both options 'table' and 'schema'"):
        _ticdc(spark, kafka, "x", protocol="open", table="a.b").schema
    with pytest.raises(Exception, match="option 'tables' is not a JSON object"):
        _ticdc(spark, kafka, "x", protocol="open", tables="a.b,c.d").schema
    with pytest.raises(Exception, match="either option 'tables' or 'table' and 'schema'"):
        _ticdc(spark, kafka, "x", protocol="open", table="a.b", schema="id BIGINT", tables='{"a.b": "id BIGINT"}').schema


def test_headers_pass_through(impl, open_messages):
    from ticdc_fast.spark.decoding import _with_meta_fields, output_arrow_schema
    msgs = open_messages[:4]
    headers_type = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
    batch = _kafka_batch([k for k, _ in msgs], [v for _, v in msgs], "h", [0] * 4, range(4), [T0] * 4)
    headers = [[{"key": "trace", "value": b"%d" % i}] if i % 2 else None for i in range(4)]
    batch = batch.append_column("headers", pa.array(headers, headers_type))
    meta = dict(META, headers=headers_type)
    opts = {"on_error": "fail", "implementation": impl}
    spec = DecodeSpec("open", None, None, opts, _with_meta_fields(output_arrow_schema("open", **opts), meta), meta)
    rows = [r for o in decode_partition(iter([batch]), spec) for r in o.to_pylist()]
    assert rows and all(r["_headers"] == headers[r["_offset"]] for r in rows)
    assert {r["_offset"] for r in rows} == {0, 1, 2, 3}


def test_metadata_history_is_only_as_large_as_the_hold_queue():
    """The metadata kept for held simple-protocol rows is that of the held messages only: a task
    decoding a long partition does not keep (and re-join over) every message it has seen."""
    from ticdc_fast.spark.kafka_metadata import KafkaMetadataJoin
    join = KafkaMetadataJoin(["topic", "timestamp"], keep_history=True)
    held = []
    for start in range(0, 50, 10):
        join.add(_kafka_batch([None] * 10, [b"v"] * 10, "t", [0] * 10, range(start, start + 10),
                              [T0 + i for i in range(start, start + 10)]))
        held.append((0, start + 3))              # one message of each batch stays held
        join.retain(held)
    assert {p: sum(len(o) for o, _ in chunks) for p, chunks in join._chunks.items()} == {0: 5}
    join.retain([])
    assert join._chunks == {}


# ------------------------------------------------------------------ option names
@pytest.mark.parametrize("name", ["onError", "on_error", "ONERROR"])
def test_ticdc_source_on_error_in_every_spelling(spark, kafka, impl, open_messages, name):
    """``onError`` and ``on_error`` both reach the decoder: the bad message is skipped."""
    topic = _topic("onerror")
    kafka.create_topic(topic, partitions=1)
    msgs = list(open_messages) + [(open_messages[0][0], b"{not json")]
    bad = len(msgs) - 1
    kafka.produce(topic, [(k, v, 0) for k, v in msgs])
    df = _ticdc(spark, kafka, topic, protocol="open", startingOffsets="earliest",
                implementation=impl, **{name: "skip"})
    got = df.collect()
    want = ticdc_fast.OpenDecoder(implementation=impl).decode([k for k, _ in msgs[:bad]], [v for _, v in msgs[:bad]])
    assert len(got) == want.num_rows
    assert sorted({r["_offset"] for r in got}) == list(range(bad))


def test_ticdc_source_misspelt_option_fails_naming_it(spark, kafka):
    with pytest.raises(Exception, match=r"(?i)unknown option 'onErorr'; the options are .*onError.*subscribe"):
        _ticdc(spark, kafka, "x", protocol="open", onErorr="skip").schema


def test_ticdc_source_option_for_another_protocol_fails(spark, kafka):
    with pytest.raises(Exception, match=r"'verifyChecksum' is for the simple protocol, not 'open'"):
        _ticdc(spark, kafka, "x", protocol="open", verifyChecksum="true").schema
    with pytest.raises(Exception, match=r"'oldImage' is for typed output"):
        _ticdc(spark, kafka, "x", protocol="open", old_image="true").schema


def test_ticdc_source_reaches_every_decoder_option():
    """Each decoder option, in either spelling, becomes the decoder's keyword with its type."""
    from ticdc_fast.spark.ticdc_source import _DecodeOptions
    base = {"kafka.bootstrap.servers": "h:9092", "subscribe": "t"}
    opts = _DecodeOptions(dict(base, protocol="simple-json", table="db.t", schema="id BIGINT",
                               invalidUtf8="error", control_events="false", maxMessageBytes="1000",
                               hold_max_rows="5", holdMaxBytes="600", onHoldOverflow="emit",
                               verify_checksum="true", onSchemaChange="ignore", schemaVersion="3",
                               timezone="Asia/Shanghai", compression="lz4", implementation="python"))
    assert opts.decoder_options == {
        "on_error": "fail", "implementation": "python", "invalid_utf8": "error", "control_events": False,
        "max_message_bytes": 1000, "hold_max_rows": 5, "hold_max_bytes": 600, "on_hold_overflow": "emit",
        "verify_checksum": True, "on_schema_change": "ignore", "schema_version": 3,
        "timezone": "Asia/Shanghai", "compression": "lz4", "old_image": True}
    avro = _DecodeOptions(dict(base, protocol="avro", table="db.t", schema="id BIGINT", registry="http://r",
                               extra_columns="error", registryTimeout="2.5", registry_retries="1",
                               schema_id="7", implementation="python"))
    assert avro.decoder_options == {"on_error": "fail", "implementation": "python", "registry": "http://r",
                                    "extra_columns": "error", "registry_timeout": 2.5,
                                    "registry_retries": 1, "schema_version": 7, "old_image": True}
    assert avro.output_schema().names[:3] == ["_op", "_commit_ts", "id"]
