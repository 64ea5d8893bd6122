"""Spark schemas (StructType and DDL) of a table: from sample open-protocol messages, from a
simple-protocol BOOTSTRAP/DDL message, or from an Avro writer schema (registry)."""
from __future__ import annotations

import pyarrow as pa

from ..arrow_types import infer_open_schema, spark_schema


def spark_ddl(struct) -> str:
    """``StructType`` → the DDL string Spark accepts (``id BIGINT, name STRING``)."""
    return ", ".join(f"`{f.name}` {f.dataType.simpleString().upper()}" for f in struct.fields)


def _both(arrow: pa.Schema):
    from pyspark.sql.pandas.types import from_arrow_schema
    st = from_arrow_schema(spark_schema(arrow))
    return st, spark_ddl(st)


def open_table_schema(keys, values, table: str, **kw):
    """(StructType, DDL, Spark-variant Arrow schema) of an open-protocol table from sample messages."""
    arrow = infer_open_schema(keys, values, table=table, **kw)
    st, ddl = _both(arrow)
    return st, ddl, spark_schema(arrow)


def simple_table_schema(message, encoding: str = "json"):
    """... of a table from a simple-protocol BOOTSTRAP or DDL message (or TableSchema)."""
    from ..simple import simple_arrow_schema
    arrow = simple_arrow_schema(message, encoding=encoding)
    st, ddl = _both(arrow)
    return st, ddl, spark_schema(arrow)


def avro_table_schema(registry=None, schema_id: int | None = None, *, schemas=None):
    """... of a table from its Avro writer schema (fetched from the registry by id)."""
    from ..avro import AvroDecoder, avro_arrow_schema
    arrow = avro_arrow_schema(AvroDecoder(registry, schemas=schemas).writer_schema(schema_id))
    st, ddl = _both(arrow)
    return st, ddl, spark_schema(arrow)
