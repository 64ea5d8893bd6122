"""``ticdc_fast.spark.decode``: TiCDC messages in a Kafka-shaped DataFrame → a decoded changelog,
through ``mapInArrow`` (one decoder per partition iterator, so simple-protocol schema caches and
held rows live across the iterator's batches)."""
from __future__ import annotations

import pyarrow as pa

from .. import _constants as C
from ..arrow_types import spark_schema

PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")


def make_decoder(protocol: str, table=None, schema: pa.Schema | None = None, **options):
    """The decoder for one protocol (typed when ``schema`` is given, its Spark-accepted variant)."""
    import ticdc_fast

    kw = dict(options)
    if schema is not None:
        kw.update(table=table, schema=spark_schema(schema))
    if protocol == "open":
        return ticdc_fast.OpenDecoder(**kw)
    if protocol in ("simple-json", "simple-avro"):
        return ticdc_fast.SimpleDecoder(protocol.split("-")[1], **kw)
    if protocol == "avro":
        return ticdc_fast.AvroDecoder(**kw)
    raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")


def output_arrow_schema(protocol: str, table=None, schema: pa.Schema | None = None, **options) -> pa.Schema:
    dec = make_decoder(protocol, table, schema, **options)
    out = dec.output_schema(partitions=True, offsets=True)
    # Spark's Arrow path: no unsigned ints, no durations, decimals <= 38 (generic columns already are)
    return spark_schema(out)


def to_spark_struct(arrow_schema: pa.Schema):
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(arrow_schema)


def decode(df, protocol: str, *, table=None, schema: pa.Schema | None = None, **options):
    """Decode a DataFrame shaped like Spark's Kafka source (``key``, ``value`` binary, ``partition``,
    ``offset``; other columns ignored) with ``mapInArrow``.

    ``protocol``: ``"open"``, ``"simple-json"``, ``"simple-avro"`` or ``"avro"``.  Without
    ``schema`` the output is the generic changelog; with ``table="db.tbl"`` and an Arrow ``schema``
    it is typed, in the Spark-accepted variant of that schema (uint64 → decimal(20,0), DECIMAL(>38)
    → decimal(38,s), TIME → string).  ``options`` go to the decoder (``timezone``, ``compression``,
    ``registry``...).  Works for batch and streaming DataFrames; ``_partition``/``_offset`` are kept.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
    if (table is None) != (schema is None):
        raise ValueError("typed output needs both table= and schema=")
    out_schema = output_arrow_schema(protocol, table, schema, **options)
    spark_struct = to_spark_struct(out_schema)
    columns = [c for c in ("key", "value", "partition", "offset") if c in df.columns]
    if "value" not in columns:
        raise ValueError("the DataFrame needs a 'value' column (and usually 'key', 'partition', 'offset')")
    args = (protocol, table, schema, options, out_schema)

    def run(batches, _args=args):
        proto, tbl, sch, opts, target = _args
        dec = make_decoder(proto, tbl, sch, **opts)
        for b in batches:
            if b.num_rows == 0:
                continue
            names = b.schema.names
            keys = b.column(names.index("key")) if "key" in names else None
            values = b.column(names.index("value"))
            parts = b.column(names.index("partition")) if "partition" in names else pa.nulls(b.num_rows, pa.int32())
            offs = b.column(names.index("offset")) if "offset" in names else pa.nulls(b.num_rows, pa.int64())
            if keys is None and proto == "open":
                raise ValueError("the open protocol needs the Kafka key")
            out = dec.decode(keys if keys is not None else [None] * b.num_rows, values,
                             partitions=parts, offsets=offs)
            yield _conform(out, target)

    return df.select(*columns).mapInArrow(run, spark_struct)


def _conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """Cast columns whose Arrow type differs from the declared Spark-accepted type (no-op mostly)."""
    if batch.schema.equals(target, check_metadata=False):
        return batch
    cols = []
    for i, f in enumerate(target):
        col = batch.column(i)
        cols.append(col if col.type == f.type else col.cast(f.type))
    return pa.RecordBatch.from_arrays(cols, schema=target)
