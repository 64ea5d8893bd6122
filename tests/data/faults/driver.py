"""A streaming driver for tests/test_spark_faults.py, run as its own process (so it can be killed).

    python driver.py BOOTSTRAP TOPIC OUT CHECKPOINT SENTINEL_DIR [SLOW_FROM_OFFSET]

ticdc_kafka -> ticdc_fast.spark.decode("open") -> Parquet file sink with a checkpoint,
``trigger(availableNow=True)``, ``maxOffsetsPerTrigger=120``; with ``TICDC_FAULT_SOURCE=ticdc``
the decoding source ``format("ticdc")`` instead. With SLOW_FROM_OFFSET, a task that meets a
Kafka offset >= it writes ``SENTINEL_DIR/in-flight-<partition>-<offset>`` and then sleeps: the
micro-batch stays in flight until the process is killed."""
import os
import sys
import time

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable

bootstrap, topic, out, ckpt, sentinel_dir = sys.argv[1:6]
slow_from = int(sys.argv[6]) if len(sys.argv) > 6 else None

from pyspark.sql import SparkSession  # noqa: E402

from ticdc_fast import spark as tfs  # noqa: E402

spark = (SparkSession.builder.master("local[1]").appName("ticdc_fast-fault-driver")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "1")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
tfs.register_kafka_source(spark)

source = os.environ.get("TICDC_FAULT_SOURCE", "ticdc_kafka")
reader = (spark.readStream.format(source).option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", topic).option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", "120"))
if source == "ticdc":
    reader = reader.option("protocol", "open")
raw = reader.load()
# the hold runs on the decoded rows (either source): their Kafka position columns
position = ("_partition", "_offset")


def _hold_until_orphaned(limit=900.0):
    """Sleep while the worker's parent lives (the test kills the driver's process group; a
    worker outside it must not outlive it)."""
    parent, deadline = os.getppid(), time.monotonic() + limit
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.2)
    os._exit(1)


def hold_in_flight(batches, _slow_from=slow_from, _dir=sentinel_dir, _position=position):
    for batch in batches:
        offsets = [o for o in batch.column(_position[1]).to_pylist() if o is not None]
        if _slow_from is not None and offsets and max(offsets) >= _slow_from:
            part = batch.column(_position[0])[0].as_py()
            with open(os.path.join(_dir, f"in-flight-{part}-{max(offsets)}"), "w") as f:
                f.write(str(os.getpid()))
            _hold_until_orphaned()
        yield batch


decoded = tfs.decode(raw, "open") if source == "ticdc_kafka" else raw
if slow_from is not None:
    decoded = decoded.mapInArrow(hold_in_flight, decoded.schema)
q = (decoded.writeStream.format("parquet").option("path", out)
     .option("checkpointLocation", ckpt).trigger(availableNow=True).start())
q.awaitTermination()
if q.exception() is not None:
    print("QUERY FAILED:", q.exception(), file=sys.stderr)
    sys.exit(3)
with open(os.path.join(sentinel_dir, "finished"), "w"):
    pass
spark.stop()
