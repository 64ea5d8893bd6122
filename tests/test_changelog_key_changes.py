"""latest_state on a raw key-changing UPDATE (old and new image in one event, as TiCDC sends it
unsplit): the old key is deleted, not kept forever (generic output, real SparkSession)."""
from __future__ import annotations

import pytest

from ticdc_fast import spark as tfs
from ticdc_fast.testing import OpenEncoder
from ticdc_fast.testing.open_encoder import Col, RowChange

ID = lambda v: Col("id", 8, v, 11)          # noqa: E731 - BIGINT, Binary|Handle|PK
NAME = lambda v: Col("name", 15, v, 64)     # noqa: E731 - VARCHAR, Nullable


def _row(ts, after=None, before=None):
    return RowChange("db", "t", ts, after=after, before=before)


def _changelog(spark, impl, events_by_partition):
    rows = []
    for part, events in events_by_partition.items():
        for i, (k, v) in enumerate(OpenEncoder(max_batch_size=1).encode(events)):
            rows.append((k, v, part, i))
    raw = spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint")
    return tfs.decode(raw, "open", implementation=impl)


@pytest.mark.parametrize("layout", ["one-partition", "old-key-elsewhere"])
def test_raw_key_changing_update_deletes_the_old_key(spark, impl, layout):
    ins1 = _row(10, after=[ID(1), NAME("a")])
    upd = _row(20, after=[ID(2), NAME("a")], before=[ID(1), NAME("a")])
    ins3 = _row(30, after=[ID(3), NAME("c")])
    events = ({0: [ins1, upd, ins3]} if layout == "one-partition" else {1: [ins1], 0: [upd, ins3]})
    changelog = _changelog(spark, impl, events)
    state = tfs.latest_state(tfs.drop_duplicates(changelog, ["id"]), ["id"])
    assert sorted(r["id"] for r in state.collect()) == ["2", "3"]
    # with the target already holding id 1 (applied earlier): the key change still removes it
    applied = spark.createDataFrame([("1", 10)], "id string, _commit_ts bigint")
    later = tfs.latest_state(changelog.where("_commit_ts >= 20"), ["id"], applied=applied)
    assert {(r["id"], r["_op"]) for r in later.collect()} == {("2", "UPDATE"), ("3", "INSERT")}
    deletes = tfs.latest_state(changelog.where("_commit_ts >= 20"), ["id"]).collect()
    assert sorted(r["id"] for r in deletes) == ["2", "3"]


def test_update_keeping_its_key_deletes_nothing(spark, impl):
    events = {0: [_row(10, after=[ID(1), NAME("a")]),
                  _row(20, after=[ID(1), NAME("b")], before=[ID(1), NAME("a")])]}
    state = tfs.latest_state(_changelog(spark, impl, events), ["id"]).collect()
    assert [(r["id"], dict(r["after"])["name"]) for r in state] == [("1", "b")]
