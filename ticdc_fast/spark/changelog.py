"""Changelog helpers for decoded TiCDC streams (spark.md, protocols.md §E.10–12).

TiCDC delivers at least once: after a failover rows are re-sent, and a larger Kafka offset can
carry a smaller commit ts.  Dropping rows below a *high* watermark loses data for good (TiCDC's
own consumer did, ticdc#4051), so nothing here drops a row because of a watermark.  Instead:

* ``drop_duplicates`` removes exact re-deliveries (same key, same commit ts, same operation, and
  for an UPDATE the same old key);
* ``latest_state`` orders every change of a key by commit ts — replays and reordering cannot win
  over newer changes — and, given what is already applied, keeps only changes newer than it;
* ``complete_up_to`` tells up to which commit ts the stream is complete: the minimum over
  partitions of the highest RESOLVED ts (only then are all changes ≤ it present).
"""
from __future__ import annotations

from functools import reduce

_DATA_OPS = ("INSERT", "UPDATE", "UPSERT", "DELETE")
_OLD_IMAGE = "_before"     # typed output with old_image=True: the old image as a struct


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
    (An UPDATE split into DELETE + INSERT keeps both: the operations differ.)  An UPDATE is also
    identified by its old key (generic ``before``, typed ``_before`` with ``old_image=True``): one
    that changes the key deletes the old key and upserts the new one, so it is only a re-delivery
    of a change that does both to the same keys."""
    from pyspark.sql import functions as F
    rows = _with_keys(changelog, keys)
    olds = _old_key_exprs(rows, keys)
    if olds is None:
        return rows.dropDuplicates(list(keys) + ["_commit_ts", "_op"])
    names = [f"__old_{k}" for k in keys]
    for k, name, old in zip(keys, names, olds):
        rows = rows.withColumn(name, F.when(F.col("_op") == "UPDATE", F.coalesce(old, F.col(k))))
    return rows.dropDuplicates(list(keys) + ["_commit_ts", "_op"] + names).drop(*names)


def latest_state(changelog, keys, *, applied=None):
    """The table state the changelog leads to: per key the change with the highest ``_commit_ts``
    wins (at equal ts the non-DELETE — TiCDC sends a split update's DELETE first — then the later
    offset); keys whose last change is a DELETE are removed.  An UPDATE that changes the key
    also deletes the old key: generic output has it in ``before``, typed output in ``_before``
    (decode with ``old_image=True``; without it typed output cannot see the old key).  With
    ``applied`` (the current
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
    it in ``before``, typed output in ``_before`` (``old_image=True``); without one nothing is
    added."""
    from pyspark.sql import functions as F
    olds = _old_key_exprs(rows, keys)
    if olds is None:
        return rows.limit(0)
    if _OLD_IMAGE in rows.columns:
        image, news = F.col(_OLD_IMAGE), [F.col(k) for k in keys]
    else:
        image, news = F.col("before"), [F.col("after").getItem(k) for k in keys]
    # a key column the old image lacks did not change (only-output-updated-columns sends only the
    # changed ones; a primary key is never NULL)
    olds = [F.coalesce(old, new) for old, new in zip(olds, news)]
    changed = reduce(lambda a, b: a | b, [~old.eqNullSafe(new) for old, new in zip(olds, news)])
    deletes = rows.where((F.col("_op") == "UPDATE") & image.isNotNull() & changed)
    for k, old in zip(keys, olds):
        deletes = deletes.withColumn(k, old)
    return deletes.withColumn("_op", F.lit("DELETE"))


def _old_key_exprs(rows, keys):
    """The old image's key values (typed ``_before`` struct, else generic ``before`` map), or None
    when the changelog carries no old image.  A key column the old image lacks is null here."""
    from pyspark.sql import functions as F
    if _OLD_IMAGE in rows.columns:
        return [F.col(_OLD_IMAGE).getField(k) for k in keys]
    if "before" in rows.columns and "after" in rows.columns:
        return [F.col("before").getItem(k) for k in keys]
    return None


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
