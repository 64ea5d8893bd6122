"""``ticdc_fast.spark.decode(schema=...)`` takes a table schema in the three forms Spark users write:
a pyarrow schema, a ``StructType``, or a DDL string (as ``from_json`` does) — same rows from each."""
from __future__ import annotations

import decimal

import pyarrow as pa
import pytest

from ticdc_fast import spark as tfs
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

TABLE = "shop.orders"


@pytest.fixture(scope="module")
def messages():
    return OpenEncoder().encode(realistic_changefeed(600, seed=11))


@pytest.fixture
def raw(spark, messages):
    return spark.createDataFrame([(k, v, 0, i) for i, (k, v) in enumerate(messages)],
                                 "key binary, value binary, partition int, offset bigint")


def _rows(df):
    return sorted((r.asDict() for r in df.collect()), key=lambda r: (r["_offset"], str(r)))


def test_ddl_struct_and_arrow_schema_give_the_same_rows(spark, raw, messages, impl):
    keys, values = [k for k, _ in messages[:300]], [v for _, v in messages[:300]]
    struct, ddl, arrow = tfs.open_table_schema(keys, values, TABLE)
    assert "`amount` DECIMAL(38,2)" in ddl and "`created_at` TIMESTAMP_NTZ" in ddl
    by_arrow = _rows(tfs.decode(raw, "open", table=TABLE, schema=arrow, implementation=impl))
    by_struct = _rows(tfs.decode(raw, "open", table=TABLE, schema=struct, implementation=impl))
    by_ddl = _rows(tfs.decode(raw, "open", table=TABLE, schema=ddl, implementation=impl))
    assert len(by_arrow) > 100
    assert by_struct == by_arrow
    assert by_ddl == by_arrow
    # real values came through, typed
    inserted = [r for r in by_ddl if r["_op"] == "INSERT"]
    assert inserted and all(isinstance(r["id"], int) for r in inserted)
    assert all(isinstance(r["amount"], decimal.Decimal) for r in inserted if r["amount"] is not None)
    assert any(r["amount"] is not None for r in inserted)


def test_handwritten_ddl_types_each_column(spark, raw, messages, impl):
    ddl = "id BIGINT, qty INT, status STRING"   # qty is SMALLINT in TiDB: widened exactly
    out = tfs.decode(raw, "open", table=TABLE, schema=ddl, implementation=impl)
    assert [(f.name, f.dataType.simpleString()) for f in out.schema.fields if not f.name.startswith("_")] == \
        [("id", "bigint"), ("qty", "int"), ("status", "string")]
    rows = [r for r in _rows(out) if r["_op"] == "INSERT"]
    assert rows and all(isinstance(r["qty"], int) and isinstance(r["status"], str) for r in rows)


@pytest.mark.parametrize("bad", [["id", "bigint"], {"id": "bigint"}, 42, pa.int64()])
def test_other_schema_forms_are_a_type_error_naming_the_three(spark, raw, bad):
    with pytest.raises(TypeError, match="pyarrow.Schema, a pyspark.sql.types.StructType or a DDL string"):
        tfs.decode(raw, "open", table=TABLE, schema=bad)


def test_as_arrow_schema_forms(spark):
    from pyspark.sql.types import DecimalType, LongType, StringType, StructField, StructType, TimestampType
    struct = StructType([StructField("id", LongType()), StructField("price", DecimalType(12, 2)),
                         StructField("name", StringType()), StructField("at", TimestampType())])
    want = pa.schema([("id", pa.int64()), ("price", pa.decimal128(12, 2)), ("name", pa.string()),
                      ("at", pa.timestamp("us", tz="UTC"))])
    assert tfs.as_arrow_schema(struct).equals(want)
    assert tfs.as_arrow_schema("id BIGINT, price DECIMAL(12,2), name STRING, at TIMESTAMP").equals(want)
    assert tfs.as_arrow_schema(want) is want
    with pytest.raises(TypeError, match="not a list of columns"):
        tfs.as_arrow_schema("bigint")
