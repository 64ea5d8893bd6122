"""Changelog helpers for decoded TiCDC streams (spark.md, protocols.md §E.10–12).

TiCDC delivers at least once: after a failover rows are re-sent, and a larger Kafka offset can
carry a smaller commit ts.  Dropping rows below a *high* watermark loses data for good (TiCDC's
own consumer did, ticdc#4051), so nothing here drops a row because of a watermark.  Instead:

* ``drop_duplicates`` removes exact re-deliveries (same key, same commit ts, same operation, and
  for an UPDATE the same old key);
* ``latest_state`` orders every change of a key by commit ts — replays and reordering cannot win
  over newer changes — and, given what is already applied, keeps only changes newer than it;
* ``complete_up_to`` tells up to which commit ts the stream is complete: the minimum over
  *all* the topic's partitions of the highest RESOLVED ts (only then are all changes ≤ it
  present); ``CompletenessTracker`` keeps that per partition across micro-batches.
"""
from __future__ import annotations

import json
import os
import tempfile
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
    (which ``decode`` carries unless given ``old_image=False``).  With
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
    import logging

    from pyspark.sql import functions as F
    olds = _old_key_exprs(rows, keys)
    if olds is None:
        logging.getLogger("ticdc_fast").warning(
            "latest_state: the changelog has no old image (typed output decoded with old_image=False): "
            "an UPDATE that changes the key unsplit keeps its old key; TiCDC splits such updates by default")
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


def complete_up_to(changelog, partitions):
    """The commit ts up to which the stream is complete: the minimum over the topic's Kafka
    partitions of the highest RESOLVED ts seen in each, ``None`` if some partition has none.

    ``partitions``: the topic's partitions, a count ``N`` (partitions ``0..N-1``) or the ids. It is
    required: a partition with no row in ``changelog`` (an idle partition, or one that had no
    message in this micro-batch) must hold completeness back (``None``), where the minimum over the
    partitions present would overstate it (the watermark mistake behind ticdc#4051), and a
    DataFrame cannot tell which partitions it lacks. A row of a partition not in ``partitions`` is
    a ``ValueError`` (the count is wrong).

    In Structured Streaming one micro-batch rarely holds a RESOLVED of every partition: keep the
    per-partition highest across batches with ``CompletenessTracker``."""
    seen = resolved_per_partition(changelog)
    wanted = _partition_ids(partitions, seen)
    return _min_over(wanted, seen)


def resolved_per_partition(changelog) -> dict:
    """``{partition: highest RESOLVED commit ts, or None}`` of the partitions with rows in
    ``changelog`` (one Spark job)."""
    from pyspark.sql import functions as F
    per_part = (changelog.groupBy("_partition")
                .agg(F.max(F.when(F.col("_op") == "RESOLVED", F.col("_commit_ts"))).alias("r")))
    return {r["_partition"]: r["r"] for r in per_part.collect()}


def _partition_ids(partitions, seen) -> list:
    if partitions is None:
        raise TypeError("partitions= is required: the topic's partition count or ids (the partitions "
                        "present in a DataFrame would overstate completeness)")
    if isinstance(partitions, bool):
        raise TypeError("partitions must be a count or partition ids, not a bool")
    if isinstance(partitions, int):
        if partitions <= 0:
            raise ValueError(f"partitions must be a positive count, got {partitions}")
        ids = list(range(partitions))
    else:
        ids = sorted({int(p) for p in partitions})
        if not ids:
            raise ValueError("partitions names no partition")
    stray = sorted((p for p in seen if p not in set(ids)), key=lambda p: (p is None, p))
    if stray:
        raise ValueError(f"the changelog has rows of partitions {stray} that are not among the "
                         f"topic's partitions {ids}")
    return ids


def _min_over(partitions, resolved: dict):
    values = [resolved.get(p) for p in partitions]
    if not values or any(v is None for v in values):
        return None
    return min(values)


class CompletenessTracker:
    """The highest RESOLVED ts of every partition across the micro-batches of a streaming query,
    and from them the commit ts up to which the stream is complete (``complete_up_to``).

    A micro-batch holds some partitions' RESOLVED events only; the tracker keeps the highest
    seen per partition, so an idle partition keeps its last value and holds completeness back
    instead of being ignored. Merging is by maximum, so replaying a micro-batch (Spark re-runs
    the last one after a failure) changes nothing.

    ``path``: a JSON file (next to the sink) the state is saved to after every ``update`` and
    loaded from at construction, so a restarted query does not start from nothing. Call
    ``update`` in ``foreachBatch`` *after* the batch's rows are written (state never ahead of
    the sink)::

        tracker = CompletenessTracker(partitions=3, path="/lake/orders/_completeness.json")

        def write(batch_df, batch_id):
            ...                                   # idempotent write keyed by batch_id
            upto = tracker.update(batch_df, batch_id)
            # DDL with commit ts <= upto can be applied now

    ``partitions``: the topic's partitions (a count or ids); given, it wins over the saved
    file's (partitions added to the topic start with nothing seen)."""

    def __init__(self, partitions=None, path=None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.resolved: dict[int, int] = {}
        self.batch_id = None
        saved_partitions = None
        if self.path is not None and os.path.exists(self.path):
            with open(self.path, "rb") as f:
                state = json.loads(f.read())
            self.resolved = {int(p): int(ts) for p, ts in state.get("resolved", {}).items()}
            self.batch_id = state.get("batch_id")
            saved_partitions = state.get("partitions")
        if partitions is None:
            partitions = saved_partitions
        if partitions is None:
            raise ValueError("CompletenessTracker needs the topic's partitions (a count or ids)")
        self.partitions = _partition_ids(partitions, {})

    @property
    def complete_up_to(self):
        """Minimum over all partitions of the highest RESOLVED ts seen; None while some
        partition has none."""
        return _min_over(self.partitions, self.resolved)

    def observe(self, resolved: dict, batch_id=None):
        """Merge ``{partition: highest RESOLVED ts or None}`` (one micro-batch's); returns
        ``complete_up_to``. A partition outside ``partitions`` is a ``ValueError``."""
        _partition_ids(self.partitions, resolved)
        for p, ts in resolved.items():
            if ts is not None and (p not in self.resolved or ts > self.resolved[p]):
                self.resolved[int(p)] = int(ts)
        if batch_id is not None:
            self.batch_id = batch_id
        return self.complete_up_to

    def update(self, batch_df, batch_id=None):
        """``observe`` a decoded micro-batch (one Spark job), save the state if there is a
        ``path``; returns ``complete_up_to``."""
        out = self.observe(resolved_per_partition(batch_df), batch_id)
        if self.path is not None:
            self.save()
        return out

    def save(self, path=None) -> None:
        """Write the state as JSON, atomically (a crash leaves the old file or the new one)."""
        path = os.fspath(path) if path is not None else self.path
        if path is None:
            raise ValueError("no path to save the completeness state to")
        state = {"partitions": self.partitions, "batch_id": self.batch_id,
                 "resolved": {str(p): ts for p, ts in sorted(self.resolved.items())},
                 "complete_up_to": self.complete_up_to}
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".completeness-", dir=directory)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(state, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def __repr__(self) -> str:
        return (f"CompletenessTracker(partitions={self.partitions}, resolved={self.resolved}, "
                f"complete_up_to={self.complete_up_to})")
