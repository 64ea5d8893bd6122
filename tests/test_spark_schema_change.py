"""A typed Spark query over a real broker topic with an ADD COLUMN in the middle:
``on_schema_change="fail"`` stops naming the table and the column, ``"ignore"`` goes on without
the new column and counts the change; the generic changelog is unaffected."""
from __future__ import annotations

import itertools

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
