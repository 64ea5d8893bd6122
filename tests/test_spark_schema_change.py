"""A typed Spark query over a real broker topic with an ADD COLUMN in the middle:
``on_schema_change="fail"`` stops naming the table and the column, ``"ignore"`` goes on without
the new column and counts the change; the generic changelog is unaffected."""
from __future__ import annotations

import itertools
from decimal import Decimal

import pyarrow as pa
import pytest

from ticdc_fast import spark as tfs
from ticdc_fast.testing import AvroEncoder, LocalSchemaRegistry, SimpleEncoder

from test_schema_change import A1, A2, TARGET, _add_column_stream, _avro_row

_topics = itertools.count()


def _read(spark, kafka, topic):
    return (spark.read.format("ticdc_kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .option("subscribe", topic).option("startingOffsets", "earliest").load())


def _produce(kafka, name, msgs):
    topic = f"schema-change-{name}-{next(_topics)}"
    kafka.create_topic(topic, partitions=1)
    kafka.produce(topic, msgs)
    return topic


def _check(spark, raw, protocol, **options):
    with pytest.raises(Exception) as ei:
        tfs.decode(raw, protocol, table="app.users", schema=TARGET, **options).collect()
    text = str(ei.value)
    assert "SchemaChangedError" in text and "app.users" in text and "score" in text
    assert "on_schema_change='ignore'" in text
    stats = tfs.decode_stats(spark)
    rows = tfs.decode(raw, protocol, table="app.users", schema=TARGET, on_schema_change="ignore",
                      stats=stats, **options).collect()
    assert [(r["id"], r["name"]) for r in rows if r["_op"] == "INSERT"] == [(1, "a"), (2, "b")]
    assert "score" not in rows[0].asDict()
    assert stats.value.schema_changes_ignored == 1
    generic = tfs.decode(raw, protocol, **options).collect()
    return generic


def test_simple_add_column_mid_topic(spark, kafka):
    msgs = SimpleEncoder("json").encode(_add_column_stream())
    raw = _read(spark, kafka, _produce(kafka, "simple", msgs))
    generic = _check(spark, raw, "simple-json")
    assert [r["_op"] for r in generic] == ["BOOTSTRAP", "INSERT", "DDL", "INSERT"]
    assert dict(generic[3]["after"])["score"] == "12.50"


def test_avro_add_column_mid_topic(spark, kafka):
    with LocalSchemaRegistry(host="127.0.0.78") as reg:
        enc = AvroEncoder(reg.url, table_columns={("app", "users"): A1})
        msgs = enc.encode([_avro_row(A1, 0, {"id": 1, "name": "a"})])
        enc.table_columns[("app", "users")] = A2
        msgs += enc.encode([_avro_row(A2, 1, {"id": 2, "name": "b", "score": 2.5})])
        raw = _read(spark, kafka, _produce(kafka, "avro", msgs))
        generic = _check(spark, raw, "avro", registry=reg.url)
        assert [r["_op"] for r in generic] == ["INSERT", "INSERT"]


# =========================================================================== schema="auto"
def _kafka_options(kafka, topic):
    return {"kafka.bootstrap.servers": kafka.bootstrap_servers, "subscribe": topic,
            "startingOffsets": "earliest"}


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_simple_auto_reads_the_latest_ddl_of_the_topic(spark, kafka, encoding):
    from test_schema_auto import _drop_name_events
    enc = SimpleEncoder(encoding)
    topic = _produce(kafka, f"auto-{encoding}", enc.encode(_add_column_stream()))
    opts = _kafka_options(kafka, topic)
    protocol = f"simple-{encoding}"

    def auto():
        raw = spark.read.format("ticdc_kafka").options(**opts).load()   # read when collected
        return tfs.decode(raw, protocol, table="app.users", schema="auto", kafka=opts)

    typed = auto()
    assert typed.columns[2:5] == ["id", "name", "score"]
    rows = [r for r in typed.collect() if r["_op"] == "INSERT"]
    assert [(r["id"], r["name"], r["score"]) for r in rows] == [(1, "a", None), (2, "b", Decimal("12.50"))]
    # DROP COLUMN name in the middle of the topic: a query planned before it stops, naming the
    # table, the column and the restart; planned again, auto takes the new schema
    planned = auto()
    kafka.produce(topic, enc.encode(_drop_name_events()))
    with pytest.raises(Exception) as ei:
        planned.collect()
    text = str(ei.value)
    assert "SchemaChangedError" in text and "app.users" in text and "name" in text
    assert "schema='auto'" in text
    again = auto()
    assert again.columns[2:4] == ["id", "score"]
    assert [r["id"] for r in again.collect() if r["_op"] == "INSERT"] == [1, 2, 3]
    # the ticdc source resolves it the same way
    src = (spark.read.format("ticdc").options(**opts).option("protocol", protocol)
           .option("table", "app.users").option("schema", "auto").load())
    assert src.columns[2:4] == ["id", "score"]
    assert [r["id"] for r in src.collect() if r["_op"] == "INSERT"] == [1, 2, 3]


def test_avro_auto_asks_the_registry(spark, kafka):
    topic = f"schema-change-avro-auto-{next(_topics)}"
    with LocalSchemaRegistry(host="127.0.0.79") as reg:
        # the subject is the topic's, as TiCDC registers it
        enc = AvroEncoder(reg.url, topic=topic, table_columns={("app", "users"): A1})
        msgs = enc.encode([_avro_row(A1, 0, {"id": 1, "name": "a"})])
        enc.table_columns[("app", "users")] = A2
        msgs += enc.encode([_avro_row(A2, 1, {"id": 2, "name": "b", "score": 2.5})])
        kafka.create_topic(topic, partitions=1)
        kafka.produce(topic, msgs)
        opts = _kafka_options(kafka, topic)
        raw = spark.read.format("ticdc_kafka").options(**opts).load()
        typed = tfs.decode(raw, "avro", table="app.users", schema="auto", kafka=opts, registry=reg.url)
        assert typed.columns[2:5] == ["id", "name", "score"]
        assert [(r["id"], r["name"], r["score"]) for r in typed.collect()] == [(1, "a", None), (2, "b", 2.5)]
        src = (spark.read.format("ticdc").options(**opts).option("protocol", "avro")
               .option("registry", reg.url).option("table", "app.users").option("schema", "auto").load())
        assert [(r["id"], r["score"]) for r in src.collect()] == [(1, None), (2, 2.5)]
