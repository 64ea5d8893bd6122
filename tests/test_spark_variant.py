"""The Spark-accepted schema variant really passes through Spark's Arrow path (mapInArrow),
with a real local SparkSession, and every value arrives exactly."""
from __future__ import annotations

import datetime as dt
import os
import sys
from decimal import Decimal

import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast.testing import Col, OpenEncoder, RowChange


def _messages():
    cols = [
        Col("id", C.T_LONGLONG, 1, 11),
        Col("u64", C.T_LONGLONG, (1 << 64) - 1, 129),
        Col("u32", C.T_LONG, (1 << 32) - 1, 129),
        Col("amount", C.T_NEWDECIMAL, "-12345678901234567890123456.123456", 1),
        Col("ts", C.T_TIMESTAMP, "2024-03-10 10:30:00.123456", 1),
        Col("dt", C.T_DATETIME, "2024-03-10 10:30:00", 1),
        Col("t", C.T_DURATION, "-838:59:59.000000", 1),
        Col("bits", C.T_BIT, 65, 1),
        Col("raw", C.T_VARCHAR, b"\x89PNG\r\n\x1a\n", 65),
        Col("name", C.T_VARCHAR, "测试", 64),
    ]
    return OpenEncoder().encode([RowChange("db", "t", 449451550317215745, after=cols)])


def test_spark_variant_through_map_in_arrow(spark, impl):
    from pyspark.sql.pandas.types import from_arrow_schema

    msgs = _messages()
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    spark_arrow = ticdc_fast.infer_open_schema(keys, values, table="db.t", spark=True)
    out_schema = ticdc_fast.OpenDecoder(table="db.t", schema=spark_arrow).output_schema()
    spark_schema = from_arrow_schema(out_schema)

    def decode(batches, _impl=impl, _schema=spark_arrow):
        import ticdc_fast as tf

        dec = tf.OpenDecoder(table="db.t", schema=_schema, implementation=_impl)
        for b in batches:
            yield dec.decode(b.column("key"), b.column("value"))

    df = spark.createDataFrame(list(zip(keys, values)), "key binary, value binary")
    rows = df.mapInArrow(decode, spark_schema).collect()
    assert len(rows) == 1
    r = rows[0].asDict()
    assert r["_op"] == "INSERT" and r["_commit_ts"] == 449451550317215745
    assert r["u64"] == Decimal(18446744073709551615)
    assert r["u32"] == 4294967295
    assert r["amount"] == Decimal("-12345678901234567890123456.123456")
    assert r["ts"] == dt.datetime(2024, 3, 10, 10, 30, 0, 123456)
    assert r["dt"] == dt.datetime(2024, 3, 10, 10, 30)
    assert r["t"] == "-838:59:59.000000"
    assert r["bits"] == Decimal(65)
    assert r["raw"] == bytearray(b"\x89PNG\r\n\x1a\n")
    assert r["name"] == "测试"
