"""``complete_up_to`` over all the topic's partitions and ``CompletenessTracker`` across
micro-batches: a partition without a row (idle, or no message in this micro-batch) holds
completeness back instead of being ignored (the overstated watermark behind ticdc#4051).

Changelogs are real: open-protocol messages decoded by ``ticdc_fast.spark.decode`` on a real
SparkSession, with both implementations."""
from __future__ import annotations

import json

import pytest

from ticdc_fast import spark as tfs
from ticdc_fast.testing import OpenEncoder, realistic_changefeed
from ticdc_fast.testing.open_encoder import Resolved

_ROWS = [e for e in realistic_changefeed(24, seed=5, include_ddl=False) if not isinstance(e, Resolved)]


def _changelog(spark, impl, resolved_by_partition: dict, rows_without_resolved=()):
    """A decoded micro-batch: in partition p a few row changes then RESOLVED ts (for each
    ``{p: ts}``), and in each partition of ``rows_without_resolved`` row changes only."""
    enc = OpenEncoder(max_batch_size=1)
    records = []
    for p in sorted(set(resolved_by_partition) | set(rows_without_resolved)):
        events = list(_ROWS[3 * p:3 * p + 3])
        if p in resolved_by_partition:
            events.append(Resolved(resolved_by_partition[p]))
        for offset, (k, v) in enumerate(enc.encode(events)):
            records.append((k, v, p, offset))
    raw = spark.createDataFrame(records, "key binary, value binary, partition int, offset bigint")
    return tfs.decode(raw, "open", implementation=impl)


def _old_complete_up_to(changelog):
    """The computation before issue #15: the minimum over the partitions *present*."""
    from pyspark.sql import functions as F
    rows = (changelog.groupBy("_partition")
            .agg(F.max(F.when(F.col("_op") == "RESOLVED", F.col("_commit_ts"))).alias("r")).collect())
    if not rows or any(r["r"] is None for r in rows):
        return None
    return min(r["r"] for r in rows)


def test_a_partition_missing_from_the_batch_holds_completeness_back(spark, impl):
    batch = _changelog(spark, impl, {0: 1000, 1: 1500})          # partition 2: no message
    assert _old_complete_up_to(batch) == 1000                    # overstated: p2 may lag
    assert tfs.complete_up_to(batch, partitions=3) is None
    assert tfs.complete_up_to(batch, partitions=[0, 1, 2]) is None
    assert tfs.complete_up_to(batch, partitions=2) == 1000       # the topic has 2 partitions
    with pytest.raises(TypeError, match="partitions= is required"):
        tfs.complete_up_to(batch, None)                          # no way back to the overstated value
    with pytest.raises(ValueError, match=r"partitions \[1\]"):
        tfs.complete_up_to(batch, partitions=[0, 2])


def test_a_partition_with_rows_but_no_resolved_holds_completeness_back(spark, impl):
    batch = _changelog(spark, impl, {0: 1000, 1: 1500}, rows_without_resolved=[2])
    assert tfs.complete_up_to(batch, partitions=3) is None


def test_tracker_across_micro_batches_gives_the_lower_correct_value(spark, impl, tmp_path):
    path = tmp_path / "sink" / "_completeness.json"
    tracker = tfs.CompletenessTracker(partitions=3, path=path)
    assert tracker.complete_up_to is None
    first = _changelog(spark, impl, {0: 100, 1: 150})
    assert tracker.update(first, 0) is None                      # p2 has no RESOLVED yet
    second = _changelog(spark, impl, {0: 200, 2: 90})
    assert tracker.update(second, 1) == 90
    third = _changelog(spark, impl, {0: 300, 1: 350})            # p2 idle in this batch
    assert _old_complete_up_to(third) == 300                     # the old answer: overstated
    assert tfs.complete_up_to(third, partitions=3) is None       # this batch alone: unknown
    assert tracker.update(third, 2) == 90                        # across batches: p2 is at 90
    assert tracker.update(third, 2) == 90                        # a replayed batch changes nothing
    assert tracker.resolved == {0: 300, 1: 350, 2: 90}

    saved = json.loads(path.read_text())
    assert saved == {"partitions": [0, 1, 2], "batch_id": 2,
                     "resolved": {"0": 300, "1": 350, "2": 90}, "complete_up_to": 90}
    restored = tfs.CompletenessTracker(path=path)                # after a restart
    assert (restored.partitions, restored.resolved, restored.batch_id) == ([0, 1, 2], tracker.resolved, 2)
    assert restored.observe({2: 400}) == 300
    # partitions added to the topic: a new one has nothing yet
    grown = tfs.CompletenessTracker(partitions=4, path=path)
    assert grown.complete_up_to is None and grown.observe({3: 500}) == 90
    with pytest.raises(ValueError, match="not among"):
        grown.observe({7: 1})


def test_tracker_needs_partitions():
    with pytest.raises(ValueError, match="partitions"):
        tfs.CompletenessTracker()
    with pytest.raises(ValueError, match="positive"):
        tfs.CompletenessTracker(partitions=0)
    t = tfs.CompletenessTracker(partitions=[2, 0])
    assert t.partitions == [0, 2] and t.observe({0: 5, 2: None}) is None and t.observe({2: 7}) == 5
