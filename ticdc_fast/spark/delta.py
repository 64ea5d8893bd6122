"""Spark → Delta through the package's sink (``foreachBatch``), and a decoded changelog prepared
for Spark Declarative Pipelines' ``create_auto_cdc_flow`` (docs/lakehouse.md)."""
from __future__ import annotations

from functools import reduce

from ..tables import COL_TABLE_KEY


def delta_foreach_batch(root, *, keys, partitions, table=None, app_id=None, scd=1, schema_change="evolve",
                        storage_options=None):
    """A ``foreachBatch`` function writing each micro-batch of a decoded stream (``decode`` with
    ``table=``/``schema=`` or ``tables=``, ``old_image=True`` for key-changing UPDATEs) into
    ``DeltaSink(root, ...)``, exactly once: the Delta commit of each table carries the
    application transaction ``(app id, batch_id)``, and a micro-batch Spark runs again after a
    failure finds it and commits nothing.  ``app_id``: default the streaming query's id (stable
    across restarts from one checkpoint).

    The micro-batch is collected to the driver as Arrow (``toArrow``) and folded there: fine
    while one micro-batch fits the driver's memory (``maxOffsetsPerTrigger`` bounds it); past
    that, MERGE on the cluster (docs/lakehouse.md).  Changes are applied as they come
    (``consistent=False``): changes held for a later resolved ts would live in the driver and be
    lost with it."""
    from ..delta_sink import DeltaSink
    sink = DeltaSink(root, keys=keys, partitions=partitions, topic="spark", scd=scd, consistent=False,
                     schema_change=schema_change, storage_options=storage_options)

    def write(batch_df, batch_id):
        name = app_id or _query_id(batch_df)
        return sink.write(_collected(batch_df, table), txn=(f"ticdc_fast/spark/{name}", int(batch_id)))

    write.sink = sink
    return write


def _collected(batch_df, table) -> dict:
    """``{"db.table": pyarrow.Table}`` of a micro-batch, on the driver."""
    from .decoding import split_tables
    if COL_TABLE_KEY not in batch_df.columns:
        if table is None:
            raise ValueError("a single-table stream needs table='db.table'")
        return {table: batch_df.toArrow()}
    batch_df = batch_df.persist()
    try:
        return {t: df.toArrow() for t, df in split_tables(batch_df).items() if "." in t}
    finally:
        batch_df.unpersist()


def _query_id(batch_df) -> str:
    got = batch_df.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId")
    if not got:
        raise ValueError("no streaming query id in this foreachBatch call: give app_id=")
    return got


def auto_cdc_changes(changelog, keys, *, sequence="_sequence"):
    """A decoded changelog ready for ``create_auto_cdc_flow``: data rows only (RESOLVED, DDL,
    BOOTSTRAP and the like out), re-deliveries dropped, each key-changing UPDATE (old image in
    ``_before``/``before``) split into a DELETE of its old key and the change, and ``sequence``:
    ``DECIMAL(20,0)`` = 2 × ``_commit_ts`` + (0 for a DELETE, 1 otherwise), so that at equal
    commit ts a DELETE sorts before the INSERT of a split UPDATE.  Feed it with
    ``keys=keys, sequence_by=sequence, apply_as_deletes="_op = 'DELETE'"`` and
    ``except_column_list`` the columns that are not the table's (``_op``, ``_before``...).

    Reads ``changelog.columns`` once (``decode``'s output knows them without analysis), so it
    runs inside a pipeline query function."""
    from pyspark.sql import functions as F

    from .changelog import _DATA_OPS
    names = list(changelog.columns)
    rows = changelog.where(F.col("_op").isin(*_DATA_OPS))
    if all(k in names for k in keys):
        news = [F.col(k) for k in keys]
        image = F.col("_before") if "_before" in names else None
        olds = [image.getField(k) for k in keys] if image is not None else None
    elif "after" in names:
        for k in keys:
            rows = rows.withColumn(k, F.coalesce(F.col("after").getItem(k), F.col("before").getItem(k)))
        news = [F.col(k) for k in keys]
        image, olds = F.col("before"), [F.col("before").getItem(k) for k in keys]
    else:
        raise ValueError(f"key columns {keys} are neither columns nor in after/before")
    tags = [f"__old_{k}" for k in keys]
    if olds is not None:             # a key column the old image lacks did not change
        for tag, old, new in zip(tags, olds, news):
            rows = rows.withColumn(tag, F.when(image.isNotNull(), F.coalesce(old, new)))
    dedupe = list(keys) + ["_commit_ts", "_op"] + (tags if olds is not None else [])
    rows = rows.dropDuplicates(dedupe)
    if olds is not None:
        changed = reduce(lambda a, b: a | b, [~F.col(t).eqNullSafe(n) for t, n in zip(tags, news)])
        moved = rows.where((F.col("_op") == "UPDATE") & F.col(tags[0]).isNotNull() & changed)
        for k, tag in zip(keys, tags):
            moved = moved.withColumn(k, F.col(tag))
        rows = rows.unionByName(moved.withColumn("_op", F.lit("DELETE"))).drop(*tags)
    rank = F.when(F.col("_op") == "DELETE", F.lit(0)).otherwise(F.lit(1))
    seq = (F.col("_commit_ts").cast("decimal(20,0)") * F.lit(2) + rank).cast("decimal(20,0)")
    return rows.withColumn(sequence, seq)
