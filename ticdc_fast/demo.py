"""``ticdc-fast demo``: the whole pipeline on one machine.

A local Kafka-compatible broker, a realistic two-table open-protocol changefeed (inserts,
updates, deletes, DDL, resolved events, and re-delivered duplicates as after a TiCDC failover),
read back by Spark through the ``ticdc_kafka`` data source, decoded with ``mapInArrow``,
de-duplicated and folded into table state with ``latest_state``."""
from __future__ import annotations

import time
import zlib

TOPIC = "ticdc-demo-open"
TABLES = ("shop.orders", "shop.refunds")


def _say(msg: str) -> None:
    print(msg, flush=True)


def run_demo(rows: int = 100_000, seed: int = 7) -> int:
    # Spark's Python workers run this interpreter: tfs.register_kafka_source sees to it
    import pyarrow as pa

    import ticdc_fast
    from ticdc_fast.testing import OpenEncoder, realistic_changefeed
    from ticdc_fast.testing.broker import LocalKafkaBroker
    from ticdc_fast.testing.open_encoder import DDL, Resolved, RowChange

    from ._console import best_of, progress

    _say(f"ticdc_fast {ticdc_fast.__version__} (driver: {ticdc_fast.IMPLEMENTATION})")
    _say(f"1/5 generating a changefeed: {rows:,} row changes over {', '.join(TABLES)} ...")
    events = realistic_changefeed(rows, seed=seed, tables=TABLES)
    # TiCDC's default dispatcher: a table's rows go to one partition; DDL and resolved to all
    per_part: dict[int, list] = {0: [], 1: []}
    for ev in events:
        if isinstance(ev, Resolved):
            for evs in per_part.values():
                evs.append(ev)
        else:
            name = f"{ev.schema}.{ev.table}"
            per_part[zlib.crc32(name.encode()) % 2].append(ev)
    enc = OpenEncoder()
    messages = {p: enc.encode(evs) for p, evs in per_part.items()}
    # at-least-once: after a failover TiCDC re-sends a tail of what it had sent
    for p in messages:
        messages[p] += messages[p][-max(1, len(messages[p]) // 50):]
    n_msgs = sum(map(len, messages.values()))
    nbytes = sum(len(k) + len(v) for ms in messages.values() for k, v in ms)
    _say(f"   {n_msgs:,} Kafka messages ({nbytes / 1e6:.1f} MB), 2% re-delivered")

    _say("2/5 starting a local Kafka-compatible broker and producing ...")
    with LocalKafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=2)
        with progress(total=n_msgs, desc="produce") as bar:
            for p, ms in messages.items():
                for i in range(0, len(ms), 5000):
                    broker.produce(TOPIC, ms[i:i + 5000], partition=p)
                    bar.update(len(ms[i:i + 5000]))

        _say("3/5 starting Spark (local[2]) ...")
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        from ticdc_fast import spark as tfs
        spark = (SparkSession.builder.master("local[2]").appName("ticdc-fast-demo")
                 .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
                 .config("spark.sql.shuffle.partitions", "4").config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            tfs.register_kafka_source(spark)
            raw = (spark.read.format("ticdc_kafka").option("kafka.bootstrap.servers", broker.bootstrap_servers)
                   .option("subscribe", TOPIC).option("startingOffsets", "earliest").load()).cache()
            _say(f"   read {raw.count():,} messages from Kafka through the ticdc_kafka data source")

            workers = tfs.worker_implementations(spark)
            _say("   Spark's Python workers decode with: " + ", ".join(sorted(
                {f"{w['implementation']} ({w['core']})" for w in workers})))
            _say("4/5 decoding with mapInArrow ...")
            t0 = time.perf_counter()
            changelog = tfs.decode(raw, "open").cache()
            n_rows = changelog.count()
            t_spark = time.perf_counter() - t0
            _say(f"   {n_rows:,} changelog rows in {t_spark:.1f} s (Spark, local[2])")
            changelog.groupBy("_table", "_op").count().orderBy("_table", "_op").show(truncate=False)
            _say(f"   complete up to commit ts {tfs.complete_up_to(changelog, partitions=2)} (min over partitions of "
                 "the highest RESOLVED ts)")

            _say("5/5 table state (typed, de-duplicated, latest change per key, deletes removed):")
            sample = messages[0][:500] + messages[1][:500]
            keys = [k for k, _ in sample]
            values = [v for _, v in sample]
            for table in TABLES:
                _, ddl, schema = tfs.open_table_schema(keys, values, table)
                typed = tfs.decode(raw, "open", table=table, schema=schema)
                state = tfs.latest_state(tfs.drop_duplicates(typed, ["id"]), ["id"])
                cols = [f.name for f in schema]
                _say(f"\n{table}: {state.count():,} rows  ({ddl[:110]}...)")
                state.select(*cols).orderBy("id").show(5, truncate=24)
        finally:
            spark.stop()

    allk = pa.array([k for ms in messages.values() for k, _ in ms], pa.binary())
    allv = pa.array([v for ms in messages.values() for _, v in ms], pa.binary())
    dec = ticdc_fast.OpenDecoder()
    secs, batch = best_of(3, lambda: dec.decode(allk, allv))
    for line in throughput_lines(nbytes, n_rows, t_spark, batch.num_rows, secs):
        _say(line)
    return 0


def throughput_lines(nbytes: int, spark_rows: int, spark_secs: float, rows: int, secs: float) -> list[str]:
    """The demo's two figures side by side, each with what it measures: the same messages through
    Spark end to end, and through the decoder alone on one core."""
    def rate(r, t):
        return f"{nbytes / t / 1e6:7,.0f} MB/s {r / t:11,.0f} rows/s"
    return [
        f"throughput on these {nbytes / 1e6:.1f} MB of messages (generic output), side by side:",
        f"  Spark end to end   {rate(spark_rows, spark_secs)}  tfs.decode + count in Spark local[2]: two cores "
        "shared by the JVM, the Python workers and the Arrow transfers (the messages read from Kafka and cached "
        "first)",
        f"  decoder alone      {rate(rows, secs)}  ticdc_fast.OpenDecoder on one thread (one core), the "
        "messages in memory, best of 3",
        "  (the README's Performance table is the decoder alone on one core, typed output of one "
        "11/12-column table: benchmarks/compare.py; its Spark rows are local[1] end to end)",
    ]
