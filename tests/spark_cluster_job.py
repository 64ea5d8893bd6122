"""The Spark jobs of tests/test_spark_cluster.py, and the driver program that runs them on
Spark's ``local-cluster`` master (a standalone master and workers inside the driver's JVM, each
executor a JVM of its own started through ``bin/spark-class``, as on a real cluster).

The test runs this file in a subprocess — one JVM holds one SparkContext, and the test session
already has its local one — and builds the same DataFrames with ``jobs`` in its own local
session, so both sides decode the same topics with the same calls.

    python spark_cluster_job.py SPEC.json RESULT.pickle
"""
from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

from ticdc_fast import spark as tfs


STREAM_TRIGGER = 20      # Kafka messages per micro-batch at most (the open topic has 40)


def _kafka(reader, spec, topic, source="ticdc_kafka"):
    return (reader.format(source).option("kafka.bootstrap.servers", spec["bootstrap"])
            .option("subscribe", topic).option("startingOffsets", "earliest"))


def jobs(spark, spec, impl):
    """name → DataFrame: the decodes compared between the cluster and local mode."""
    topics = spec["topics"]
    open_raw = _kafka(spark.read, spec, topics["open"]).load()
    return {
        # the Kafka source's reader and the mapInArrow decode both run on the executors
        "open": tfs.decode(open_raw, "open", implementation=impl),
        "open-typed": tfs.decode(open_raw, "open", table="shop.orders", schema=spec["orders_ddl"],
                                 old_image=True, implementation=impl),
        "simple-avro": tfs.decode(_kafka(spark.read, spec, topics["simple"]).load(), "simple-avro",
                                  implementation=impl),
        # decoding inside the data source's reader: format("ticdc")
        "ticdc-source": (_kafka(spark.read, spec, topics["open"], "ticdc")
                         .option("protocol", "open").option("table", "shop.orders")
                         .option("schema", spec["orders_ddl"]).option("implementation", impl).load()),
    }


def rows(df):
    """The DataFrame's rows as dicts in Kafka order; a message's rows keep the order the decoder
    gave them (the sort is stable and one Kafka partition is one Spark partition)."""
    return sorted((r.asDict(recursive=True) for r in df.collect()),
                  key=lambda r: (r["_partition"], r["_offset"]))


def streamed_rows(spark, spec, out_dir):
    """The open topic decoded by a streaming query (micro-batches of STREAM_TRIGGER messages, a
    file sink with a checkpoint) on the executors: (micro-batches that read messages, the rows)."""
    stream = (_kafka(spark.readStream, spec, spec["topics"]["open"])
              .option("maxOffsetsPerTrigger", str(STREAM_TRIGGER)).load())
    query = (tfs.decode(stream, "open").writeStream.format("parquet")
             .option("path", f"{out_dir}/out").option("checkpointLocation", f"{out_dir}/checkpoint")
             .trigger(availableNow=True).start())
    try:
        if not query.awaitTermination(180):
            raise TimeoutError("the availableNow query did not finish in 180 s")
    finally:
        if query.isActive:
            query.stop()
    if query.exception() is not None:
        raise RuntimeError(f"the streaming query failed: {query.exception()}")
    batches = sum(1 for p in query.recentProgress if p["numInputRows"] > 0)
    return batches, rows(spark.read.parquet(f"{out_dir}/out"))


def _executor_process(batches):
    """For each task: the Python worker's pid and the JVM it was started by (its nearest ``java``
    ancestor) with that JVM's main class."""
    import pyarrow as pa

    def parent_and_name(pid):
        stat = Path(f"/proc/{pid}/stat").read_text()
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        return int(stat[stat.rindex(")") + 2:].split()[1]), name

    pid = os.getpid()
    ancestor, name = parent_and_name(pid)[0], None
    while ancestor > 1:
        up, name = parent_and_name(ancestor)
        if name == "java":
            break
        ancestor = up
    cmdline = Path(f"/proc/{ancestor}/cmdline").read_bytes().split(b"\0")
    main_class = next((a.decode() for a in cmdline if a.startswith(b"org.apache.spark.")), "")
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"python_pid": [pid], "jvm_pid": [ancestor], "jvm_main": [main_class]})


def main(spec_path: str, result_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    started = time.monotonic()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(spec["master"]).appName("ticdc_fast-cluster-test")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             # the session starts once both executors have registered, so each one gets tasks
             .config("spark.cores.max", "2").config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
             .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s")
             .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    tfs.register_kafka_source(spark)
    result = {"app_id": spark.sparkContext.applicationId,
              "seconds": {"session": time.monotonic() - started},
              "driver_python_pid": os.getpid(),
              "driver_jvm_pid": spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid(),
              "executor_ids": sorted(spark.sparkContext._jsc.sc().getExecutorIds().mkString(",").split(",")),
              "executor_processes": [r.asDict() for r in spark.range(0, 4, 1, 4).mapInArrow(
                  _executor_process, "python_pid bigint, jvm_pid bigint, jvm_main string").collect()],
              "worker_implementations": tfs.worker_implementations(spark, partitions=4),
              "rows": {}}
    result["seconds"]["probes"] = time.monotonic() - started - result["seconds"]["session"]
    for impl in spec["implementations"]:
        for name, df in jobs(spark, spec, impl).items():
            began = time.monotonic()
            result["rows"][name, impl] = rows(df)
            result["seconds"][name, impl] = time.monotonic() - began
    began = time.monotonic()
    result["stream_batches"], result["rows"]["stream"] = streamed_rows(spark, spec,
                                                                       f"{spec['scratch']}/stream")
    result["seconds"]["stream"] = time.monotonic() - began
    result["seconds"]["total"] = time.monotonic() - started
    spark.stop()
    Path(result_path).write_bytes(pickle.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:])
