"""Changelog helpers for decoded TiCDC streams (spark.md, protocols.md §E.10–12).

TiCDC delivers at least once: after a failover rows are re-sent, and a larger Kafka offset can
carry a smaller commit ts.  Dropping rows below a *high* watermark loses data for good (TiCDC's
own consumer did, ticdc#4051), so nothing here drops a row because of a watermark.  Instead:

* ``drop_duplicates`` removes exact re-deliveries (same key, same commit ts, same operation);
* ``latest_state`` orders every change of a key by commit ts — replays and reordering cannot win
  over newer changes — and, given what is already applied, keeps only changes newer than it;
* ``complete_up_to`` tells up to which commit ts the stream is complete: the minimum over
  partitions of the highest RESOLVED ts (only then are all changes ≤ it present).
"""
from __future__ import annotations

from functools import reduce

_DATA_OPS = ("INSERT", "UPDATE", "UPSERT", "DELETE")


def _key_columns(changelog, keys):
    """Key expressions: typed output has the columns; generic output keeps them in after/before."""
    from pyspark.sql import functions as F
    exprs = []
    for k in keys:
        if k in changelog.columns:
            exprs.append(F.col(k).alias(k))
        elif "after" in changelog.columns:
            exprs.append(F.coalesce(F.col("after").getItem(k), F.col("before").getItem(k)).alias(k))
        else:
            raise ValueError(f"key column {k!r} is neither a column nor in after/before")
    return exprs


def _with_keys(changelog, keys):
    from pyspark.sql import functions as F
    exprs = _key_columns(changelog, keys)
    out = changelog
    for e, k in zip(exprs, keys):
        if k not in changelog.columns:
            out = out.withColumn(k, e)
    return out


def drop_duplicates(changelog, keys):
    """Remove at-least-once re-deliveries: rows with the same key, commit ts and operation.
    (An UPDATE split into DELETE + INSERT keeps both: the operations differ.)"""
    return _with_keys(changelog, keys).dropDuplicates(list(keys) + ["_commit_ts", "_op"])


def latest_state(changelog, keys, *, applied=None):
    """The table state the changelog leads to: per key the change with the highest ``_commit_ts``
    wins (at equal ts the non-DELETE — TiCDC sends a split update's DELETE first — then the later
    offset); keys whose last change is a DELETE are removed.  An UPDATE that changes the key
    (generic output: its ``before`` holds the old key) also deletes the old key.  With ``applied`` (the current
    table, with ``keys`` and ``_commit_ts``), changes not newer than the applied version are
    dropped — old replays — so the result is ready for MERGE / upsert.  Batch DataFrames (in
    Structured Streaming, call it inside ``foreachBatch``)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = _with_keys(changelog.where(F.col("_op").isin(*_DATA_OPS)), keys)
    rows = rows.unionByName(_old_keys_of_key_changing_updates(rows, keys))
    rank = F.when(F.col("_op") == "DELETE", F.lit(0)).otherwise(F.lit(1))
    order = [F.col("_commit_ts").desc_nulls_last(), rank.desc()]
    if "_offset" in rows.columns:
        order.append(F.col("_offset").desc_nulls_last())
    w = Window.partitionBy(*[F.col(k) for k in keys]).orderBy(*order)
    latest = rows.withColumn("__rn", F.row_number().over(w)).where(F.col("__rn") == 1).drop("__rn")
    if applied is not None:
        a = applied.select(*[F.col(k) for k in keys], F.col("_commit_ts").alias("__applied_ts"))
        latest = latest.join(a, on=list(keys), how="left").where(
            F.col("__applied_ts").isNull() | (F.col("_commit_ts") > F.col("__applied_ts"))).drop("__applied_ts")
    return latest.where(F.col("_op") != "DELETE")


def _old_keys_of_key_changing_updates(rows, keys):
    """A DELETE of the old key for every UPDATE whose old image has another key than its new one.

    TiCDC sends an UPDATE that changes the primary key unsplit (old and new image in one event)
    when it does not split it (``output-raw-change-event=true``, older versions): without this
    the old key's row would stay in the state forever.  Needs the old image: generic output has
    it in ``before``; typed output has no old image, so nothing is added there."""
    from pyspark.sql import functions as F
    if "before" not in rows.columns or "after" not in rows.columns:
        return rows.limit(0)
    changed = reduce(lambda a, b: a | b, [
        ~F.col("before").getItem(k).eqNullSafe(F.col("after").getItem(k)) for k in keys])
    olds = rows.where((F.col("_op") == "UPDATE") & F.col("before").isNotNull() & changed)
    for k in keys:
        olds = olds.withColumn(k, F.col("before").getItem(k))
    return olds.withColumn("_op", F.lit("DELETE"))


def complete_up_to(changelog):
    """The commit ts up to which the stream is complete: the minimum over Kafka partitions of the
    highest RESOLVED ts seen in each (``None`` if some partition has none yet)."""
    from pyspark.sql import functions as F
    per_part = (changelog.groupBy("_partition")
                .agg(F.max(F.when(F.col("_op") == "RESOLVED", F.col("_commit_ts"))).alias("r")))
    rows = per_part.collect()
    if not rows or any(r["r"] is None for r in rows):
        return None
    return reduce(min, (r["r"] for r in rows))
