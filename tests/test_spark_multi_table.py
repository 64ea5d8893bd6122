"""Many tables of one topic in one pass through Spark: ``decode(tables=...)`` + ``split_tables``
give, per table, the DataFrame the single-table decode gives; the ``ticdc`` source takes the
same as options (a real broker)."""
from __future__ import annotations

import json

import pytest

from ticdc_fast import spark as tfs
from ticdc_fast.testing import realistic_stream

TABLES = ("shop.events", "shop.orders", "shop.wide")


@pytest.fixture(scope="module")
def open_topic():
    s = realistic_stream("open", 900, seed=5)
    keys, values = [k for k, _ in s.messages], [v for _, v in s.messages]
    schemas = {t: tfs.open_table_schema(keys, values, t)[1] for t in TABLES}   # DDL strings
    return s.messages, schemas


@pytest.fixture(scope="module")
def simple_topic():
    return realistic_stream("simple-json", 700, seed=6).messages


def _raw(spark, messages, partitions=2):
    rows = [(k, v, i % partitions, i // partitions) for i, (k, v) in enumerate(messages)]
    return spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint").repartition(1)


def _rows(df):
    return sorted(map(repr, df.collect()))


def test_open_three_tables_in_one_pass_equal_three_single_table_decodes(spark, impl, open_topic):
    messages, schemas = open_topic
    raw = _raw(spark, messages)
    stats = tfs.decode_stats(spark)
    stacked = tfs.decode(raw, "open", tables=schemas, implementation=impl, old_image=True, stats=stats)
    assert stacked.columns[:3] == ["_op", "_commit_ts", "_table"]
    assert [c for c in stacked.columns if c in TABLES] == list(TABLES)
    per_table = tfs.split_tables(stacked)
    assert list(per_table) == list(TABLES)
    total = 0
    for t in TABLES:
        single = tfs.decode(raw, "open", table=t, schema=schemas[t], implementation=impl, old_image=True)
        got = per_table[t]
        assert got.columns == single.columns
        assert [f.dataType for f in got.schema.fields] == [f.dataType for f in single.schema.fields]
        want = _rows(single)
        assert len(want) > 50
        assert _rows(got) == want
        total += len(want)
    assert stats.value.unlisted_rows == 0
    # resolved events belong to every table: the stacked frame has them once per table
    assert stacked.count() == total


def test_unlisted_tables_skipped_and_counted_or_kept_generic(spark, impl, open_topic):
    messages, schemas = open_topic
    raw = _raw(spark, messages)
    two = {t: schemas[t] for t in TABLES[:2]}
    stats = tfs.decode_stats(spark)
    skipped = tfs.decode(raw, "open", tables=two, implementation=impl, stats=stats)
    assert set(tfs.split_tables(skipped)) == set(TABLES[:2])
    skipped.count()
    generic = tfs.decode(raw, "open", implementation=impl).where("_table = 'wide' AND _op <> 'RESOLVED'")
    wide_rows = generic.count()
    assert wide_rows > 10
    assert stats.value.unlisted_rows == wide_rows
    kept = tfs.decode(raw, "open", tables=two, unlisted="generic", implementation=impl)
    other = tfs.split_tables(kept)["*"]
    assert _rows(other.where("_op <> 'RESOLVED'")) == _rows(generic)


def test_simple_json_three_tables(spark, impl, simple_topic):
    raw = _raw(spark, simple_topic, partitions=1)
    # the stream starts with one BOOTSTRAP per table
    bootstraps = {f"shop.{json.loads(v)['tableSchema']['table']}": v for _, v in simple_topic[:3]}
    schemas = {t: tfs.simple_table_schema(bootstraps[t])[1] for t in TABLES}     # DDL strings
    stacked = tfs.decode(raw, "simple-json", tables=schemas, implementation=impl)
    per_table = tfs.split_tables(stacked)
    assert list(per_table) == list(TABLES)
    for t in TABLES:
        schema = schemas[t]
        single = tfs.decode(raw, "simple-json", table=t, schema=schema, implementation=impl)
        want = _rows(single)
        assert len(want) > 20
        assert per_table[t].columns == single.columns
        assert _rows(per_table[t]) == want


def test_ticdc_source_tables_option_on_a_real_broker(spark, kafka, impl, open_topic):
    messages, schemas = open_topic
    topic = f"multi-table-src-{impl}"
    kafka.create_topic(topic, partitions=2)
    kafka.produce(topic, [(k, v, i % 2) for i, (k, v) in enumerate(messages)])
    src = (spark.read.format("ticdc").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
           .option("subscribe", topic).option("startingOffsets", "earliest")
           .option("protocol", "open").option("tables", json.dumps(schemas))
           .option("implementation", impl).load())
    via_decode = tfs.decode(spark.read.format("ticdc_kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
                            .option("subscribe", topic).option("startingOffsets", "earliest").load(),
                            "open", tables=schemas, implementation=impl)
    a, b = tfs.split_tables(src), tfs.split_tables(via_decode)
    assert list(a) == list(b) == list(TABLES)
    for t in TABLES:
        assert a[t].columns == b[t].columns
        got = _rows(a[t].drop("_topic", "_timestamp"))
        assert got == _rows(b[t].drop("_topic", "_timestamp")) and len(got) > 50


def test_avro_three_topics_one_pass(spark, impl):
    """The Avro protocol has one topic per table: a query over several topics lists their tables.
    The writer schemas come from a real schema registry over HTTP."""
    from ticdc_fast.testing import LocalSchemaRegistry

    st = realistic_stream("avro", 600, seed=7)
    with LocalSchemaRegistry() as reg:
        ids = {}
        for sid, text in sorted(st.schemas.items()):
            assert reg.register(f"s{sid}", text) == sid
            rec = json.loads(text)
            ids[f"shop.{rec['name']}"] = sid
        assert set(ids) == set(TABLES)
        schemas = {t: tfs.avro_table_schema(reg.url, ids[t])[1] for t in TABLES}
        raw = _raw(spark, st.messages)
        stacked = tfs.decode(raw, "avro", tables=schemas, registry=reg.url, implementation=impl)
        per_table = tfs.split_tables(stacked)
        assert list(per_table) == list(TABLES)
        for t in TABLES:
            single = tfs.decode(raw, "avro", table=t, schema=schemas[t], registry=reg.url, implementation=impl)
            want = _rows(single)
            assert len(want) > 20
            assert per_table[t].columns == single.columns
            assert _rows(per_table[t]) == want


def test_dead_letters_with_tables_as_the_docs_job_does(spark, impl, open_topic):
    """docs/spark.md's multi-table job: on_error="dead_letter", split_dead_letters, then
    split_tables on the good rows."""
    messages, schemas = open_topic
    bad = 7
    broken = list(messages)
    broken[bad] = (broken[bad][0], broken[bad][1][:-9] + b"{{{{{{{{{")
    raw = _raw(spark, broken)
    stacked = tfs.decode(raw, "open", tables=schemas, implementation=impl, on_error="dead_letter")
    good, dead = tfs.split_dead_letters(stacked)
    dead_rows = dead.collect()
    assert len(dead_rows) == 1
    assert (dead_rows[0]["_partition"], dead_rows[0]["_offset"]) == (bad % 2, bad // 2)
    assert dead_rows[0]["_raw_value"] == broken[bad][1]
    per_table = tfs.split_tables(good)
    assert list(per_table) == list(TABLES)
    clean = tfs.split_tables(tfs.decode(raw.where(f"NOT (partition = {bad % 2} AND offset = {bad // 2})"),
                                        "open", tables=schemas, implementation=impl))
    for t in TABLES:
        assert per_table[t].columns == clean[t].columns
        assert _rows(per_table[t]) == _rows(clean[t])
