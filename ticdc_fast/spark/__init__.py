"""Spark integration: decode TiCDC Kafka messages with ``mapInArrow``, Spark schemas of tables,
changelog helpers, and a Kafka data source that needs no connector jar.

Importing this module does not import pyspark; the functions do when called."""
from .changelog import (CompletenessTracker, complete_up_to, drop_duplicates, latest_state,
                        resolved_per_partition)
from .delta import auto_cdc_changes, delta_foreach_batch
from .decoding import (PROTOCOLS, as_arrow_schema, decode, decode_stats, output_arrow_schema,
                       split_dead_letters, split_tables, worker_implementations, WorkerPythonError)
from .schemas import avro_table_schema, open_table_schema, simple_table_schema, spark_ddl


def register_kafka_source(spark) -> None:
    """Register the ``ticdc_kafka`` data source (Kafka through confluent-kafka) and the ``ticdc``
    source (the same, decoded inside the reader: ``ticdc_source``) with a session.

    Its readers run in Python workers that import the driver's ``ticdc_fast`` (see
    ``decoding._worker_environment``): Spark captures the environment at registration."""
    from .decoding import _worker_environment
    from .kafka_source import register
    from .ticdc_source import register as register_ticdc
    with _worker_environment(spark):
        register(spark)
        register_ticdc(spark)


register_ticdc_source = register_kafka_source


__all__ = ["CompletenessTracker", "PROTOCOLS", "as_arrow_schema", "auto_cdc_changes", "avro_table_schema", "complete_up_to",
           "decode", "decode_stats", "delta_foreach_batch",
           "drop_duplicates", "split_dead_letters", "split_tables",
           "latest_state", "open_table_schema", "output_arrow_schema", "register_kafka_source", "register_ticdc_source",
           "resolved_per_partition",
           "simple_table_schema", "spark_ddl", "worker_implementations", "WorkerPythonError"]
