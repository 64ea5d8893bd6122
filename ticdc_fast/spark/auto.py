"""``schema="auto"`` for Spark: a typed query needs its schema before it starts, so the driver
resolves it once — simple protocol: the table's latest BOOTSTRAP/DDL in the topic, read from the
earliest offset up to now with the package's Kafka reader; Avro protocol: the registry's latest
value schema of the topic.  Workers then decode with that schema and its version (DDLs and
schema ids up to it are history, later ones a schema change)."""
from __future__ import annotations

import pyarrow as pa


def _one_topic(opts) -> str:
    if opts.mode != "subscribe" or len(opts.topics) != 1:
        raise ValueError("schema='auto' for the Avro protocol needs the Kafka option 'subscribe' "
                         "with one topic (the registry subject is '<topic>-value')")
    return opts.topics[0]


def resolve_auto_schema(protocol: str, table: str, kafka: dict, options: dict) -> tuple[pa.Schema, dict]:
    """(Arrow schema, decoder options that fix its version: ``schema_version``; open protocol:
    none, its schema is inferred from the table's first rows)
    of ``table`` for ``schema="auto"``.  ``kafka``: the options of the Kafka source the query
    reads (``kafka.bootstrap.servers``, ``subscribe``/``subscribePattern``/``assign``, other
    ``kafka.*``); ``options``: the decoder options (``compression``, ``registry``)."""
    from .kafka_source import _Options
    opts = _Options(kafka)
    if protocol in ("simple-json", "simple-avro"):
        ts = _latest_in_topics(opts, table, protocol.split("-")[1], options.get("compression", "none"))
        from ..simple import arrow_schema
        return arrow_schema(ts), {"schema_version": ts.version}
    if protocol == "avro":
        from ..avro import latest_value_schema
        schema_id, arrow = latest_value_schema(options.get("registry"), _one_topic(opts), table)
        return arrow, {"schema_version": schema_id}
    if protocol == "open":
        return _inferred_from_topics(opts, table, options.get("compression", "none")), {}
    raise ValueError(f"schema='auto': unknown protocol {protocol!r}")


def _partition_bounds(opts):
    """The subscribed partitions, their earliest offsets and their ends now."""
    from .kafka_source import _OffsetProbe
    probe = _OffsetProbe(opts)
    try:
        tps = probe.topic_partitions(strict=True)
        return tps, probe.earliest(tps), probe.latest(tps)
    finally:
        probe.close()


def _inferred_from_topics(opts, table: str, compression: str) -> pa.Schema:
    """Open protocol (messages carry column types, not a table schema): the schema inferred
    (``infer_open_schema``) from the table's first rows in the subscribed partitions, read from
    their earliest offset; the driver logs what it inferred."""
    import logging

    from ..arrow_types import infer_open_schema
    from .kafka_source import KAFKA_SCHEMA, read_range
    tps, starts, ends = _partition_bounds(opts)
    for topic, partition in tps:
        for batch in read_range(opts, KAFKA_SCHEMA, topic, partition, starts[(topic, partition)],
                                ends[(topic, partition)]):
            try:
                schema = infer_open_schema(batch.column("key").to_pylist(), batch.column("value").to_pylist(),
                                           table, compression=compression)
            except ValueError:
                continue                     # no row of the table in this batch
            logging.getLogger("ticdc_fast").warning(
                "schema='auto': the schema of %s inferred from its first rows in %s/%d: %s", table, topic,
                partition, ", ".join(f"{f.name} {f.type}" for f in schema))
            return schema
    raise ValueError(f"schema='auto': no row of {table} in {', '.join(f'{t}/{p}' for t, p in tps) or 'no partition'} "
                     "to infer its schema from (open-protocol messages carry no table schema)")


def _latest_in_topics(opts, table: str, encoding: str, compression: str):
    """The table's latest TableSchema in the subscribed partitions, from their earliest offset
    to their end now (only BOOTSTRAP/DDL messages are parsed)."""
    from ..simple import latest_table_schema
    from .kafka_source import KAFKA_SCHEMA, read_range
    tps, starts, ends = _partition_bounds(opts)
    best = None
    for topic, partition in tps:
        for batch in read_range(opts, KAFKA_SCHEMA, topic, partition, starts[(topic, partition)],
                                ends[(topic, partition)]):
            ts = latest_table_schema(batch.column("value").to_pylist(), table, encoding=encoding,
                                     compression=compression)
            if ts is not None and (best is None or ts.version > best.version):
                best = ts
    if best is None:
        where = ", ".join(f"{t}/{p}" for t, p in tps) or "no partition"
        raise ValueError(f"schema='auto': no BOOTSTRAP or DDL of {table} in {where} (read from the "
                         "earliest offset to the end); TiCDC sends a BOOTSTRAP when the changefeed "
                         "starts and every send-bootstrap-interval-in-sec")
    return best
