"""latest_state and drop_duplicates on a raw key-changing UPDATE (old and new image in one event,
as TiCDC sends it unsplit): the old key is deleted, not kept forever — in generic output (``before``)
and in typed output with ``old_image=True`` (``_before``), in every protocol that carries old
images, next to the same change split into DELETE + INSERT (real SparkSession)."""
from __future__ import annotations

import io
import json
import struct

import fastavro
import pytest

from ticdc_fast import spark as tfs
from ticdc_fast.testing import OpenEncoder, SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable
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


# =========================================================================== every protocol, typed and generic
# One stream, four independent histories of table db.t (id BIGINT primary key, name VARCHAR), each
# ending in the state {base+2, base+3}:
#   raw:   INSERT base+1, UPDATE base+1 -> base+2 in one event, INSERT base+3
#   split: INSERT base+1, DELETE base+1 + INSERT base+2 (same ts), INSERT base+3
# once with every event in Kafka partition 0, once with the old key's INSERT in partition 1 and the
# change that moves it in partition 0; plus a re-delivery of a raw UPDATE (at-least-once).
def _history(base, split):
    ins, new = {"id": base + 1, "name": "a"}, {"id": base + 2, "name": "a"}
    moved = ([("DELETE", 20, None, ins), ("INSERT", 20, new, None)] if split
             else [("UPDATE", 20, new, ins)])
    return [("INSERT", 10, ins, None)] + moved + [("INSERT", 30, {"id": base + 3, "name": "c"}, None)]


def _layout():
    """[(Kafka partition, event)], in order."""
    out = []
    for base, split in ((0, False), (10, True)):                  # all in partition 0
        out += [(0, ev) for ev in _history(base, split)]
    for base, split in ((100, False), (110, True)):               # the old key's INSERT elsewhere
        h = _history(base, split)
        out += [(1, h[0])] + [(0, ev) for ev in h[1:]]
    out.append((1, _history(100, False)[1]))                      # a re-delivered raw UPDATE
    return out


STATE = [2, 3, 12, 13, 102, 103, 112, 113]
SIMPLE_TABLE = SimpleTable("db", "t", 50, 1 << 18, [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("name", "varchar", length=20)])
AVRO_FIELDS = [{"name": "id", "type": {"type": "long", "connect.parameters": {"tidb_type": "BIGINT"}}},
               {"default": None, "name": "name",
                "type": ["null", {"type": "string", "connect.parameters": {"tidb_type": "VARCHAR"}}]}]
AVRO_VALUE = {"type": "record", "name": "t", "namespace": "default.db", "fields": AVRO_FIELDS + [
    {"default": None, "name": "_ticdc_before", "type": ["null", {"type": "record", "name": "t_before",
                                                                 "fields": AVRO_FIELDS}]},
    {"default": "", "name": "_tidb_op", "type": "string"},
    {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
    {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"}]}
AVRO_KEY = {"type": "record", "name": "t", "namespace": "default.db", "fields": AVRO_FIELDS[:1]}
AVRO_SCHEMAS = {1: json.dumps(AVRO_KEY), 2: json.dumps(AVRO_VALUE)}


def _avro(sid, schema, rec):
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), rec)
    return b"\x00" + struct.pack(">i", sid) + buf.getvalue()


def _encode(protocol, event):
    """One event as one Kafka message (key, value) in ``protocol``."""
    op, ts, new, old = event
    if protocol == "open":
        def cols(img):
            return None if img is None else [ID(img["id"]), NAME(img["name"])]
        (k, v), = OpenEncoder(max_batch_size=1).encode([_row(ts, after=cols(new), before=cols(old))])
        return k, v
    if protocol.startswith("simple"):
        (_, v), = SimpleEncoder(protocol.split("-")[1]).encode([SimpleDML(SIMPLE_TABLE, op, ts, data=new, old=old)])
        return None, v
    # TiCDC's avro-include-before-value: an UPDATE carries _ticdc_before, a DELETE a value of its
    # pre-row (a plain tombstone has no commit ts, so it could not be ordered against the INSERT)
    key = _avro(1, AVRO_KEY, {"id": (new or old)["id"]})
    tidb_op = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}[op]
    return key, _avro(2, AVRO_VALUE, dict(new or old, _ticdc_before=old if op == "UPDATE" else None,
                                           _tidb_op=tidb_op, _tidb_commit_ts=ts, _tidb_commit_physical_time=0))


def _raw_stream(spark, protocol):
    """The Kafka-shaped DataFrame: one Spark partition per Kafka partition, in offset order."""
    parts = {0: [], 1: []}
    if protocol.startswith("simple"):        # each partition learns the schema first
        (_, v), = SimpleEncoder(protocol.split("-")[1]).encode([SimpleBootstrap(SIMPLE_TABLE)])
        for p in parts:
            parts[p].append((None, v))
    for p, ev in _layout():
        parts[p].append(_encode(protocol, ev))
    slices = [[(k, v, p, off) for off, (k, v) in enumerate(msgs)] for p, msgs in parts.items()]
    rdd = spark.sparkContext.parallelize(slices, len(slices)).flatMap(lambda rows: rows)
    return spark.createDataFrame(rdd, "key binary, value binary, partition int, offset bigint")


@pytest.mark.parametrize("batches", ["one-batch", "message-per-batch"])
@pytest.mark.parametrize("protocol", ["open", "simple-json", "simple-avro", "avro"])
def test_key_changes_in_every_protocol(spark, impl, protocol, batches):
    """The acceptance check, typed and generic: after INSERT id=1, raw UPDATE id 1->2, INSERT
    id=3, the state holds 2 and 3 (and likewise for the split and cross-partition histories)."""
    conf = "spark.sql.execution.arrow.maxRecordsPerBatch"
    previous = spark.conf.get(conf)
    spark.conf.set(conf, "1" if batches == "message-per-batch" else previous)
    try:
        raw = _raw_stream(spark, protocol)
        extra = {"schemas": AVRO_SCHEMAS} if protocol == "avro" else {}
        for mode in ("generic", "typed"):
            kw = dict(extra)
            if mode == "typed":
                kw.update(table="db.t", schema="id BIGINT, name STRING")   # no old_image=: carried by default
            changelog = tfs.decode(raw, protocol, implementation=impl, **kw).cache()
            if mode == "typed":
                moved = changelog.where("_op = 'UPDATE' AND id = 2").select("_before").collect()
                assert [r["_before"].asDict() for r in moved] == [{"id": 1, "name": "a"}]
            state = tfs.latest_state(tfs.drop_duplicates(changelog, ["id"]), ["id"]).collect()
            assert sorted(int(r["id"]) for r in state) == STATE, mode
            # the target already holds the first inserts (applied earlier): the key changes still
            # remove them, and only changes newer than the target come back
            first = [(base + 1, 10) for base in (0, 10, 100, 110)]
            if mode == "generic":
                first = [(str(i), ts) for i, ts in first]
            applied = spark.createDataFrame(first, f"id {'bigint' if mode == 'typed' else 'string'}, _commit_ts bigint")
            later = tfs.latest_state(changelog, ["id"], applied=applied).collect()
            assert sorted(int(r["id"]) for r in later) == STATE, mode
            changelog.unpersist()
    finally:
        spark.conf.set(conf, previous)


def test_drop_duplicates_identifies_an_update_by_its_old_key_too(spark, impl):
    """A re-delivered UPDATE is dropped; two UPDATEs that share only the new key, commit ts and
    operation are not re-deliveries of each other (typed _before and generic before)."""
    updates = [("UPDATE", 20, {"id": 2, "name": "a"}, {"id": 1, "name": "a"}),
               ("UPDATE", 20, {"id": 2, "name": "a"}, {"id": 1, "name": "a"}),
               ("UPDATE", 20, {"id": 2, "name": "a"}, {"id": 5, "name": "a"})]
    data = [(*_encode("open", ev), 0, i) for i, ev in enumerate(updates)]
    raw = spark.createDataFrame(data, "key binary, value binary, partition int, offset bigint")
    for kw in ({}, {"table": "db.t", "schema": "id BIGINT, name STRING", "old_image": True}):
        clean = tfs.drop_duplicates(tfs.decode(raw, "open", implementation=impl, **kw), ["id"])
        assert sorted(int(r["_offset"]) for r in clean.collect()) in ([0, 2], [1, 2])


def test_old_image_lacking_key_columns_keeps_them(spark, impl):
    """An old image lacks the columns that did not change when TiCDC sends only the changed ones
    (only-output-updated-columns): a composite key whose first part moved deletes the old key with
    its unchanged second part."""
    part = lambda v: Col("part", 3, v, 11)    # noqa: E731 - INT, second primary-key column
    events = {0: [_row(10, after=[ID(1), part(7), NAME("a")]),
                  _row(20, after=[ID(2), part(7), NAME("a")], before=[ID(1)]),
                  _row(30, after=[ID(2), part(7), NAME("b")], before=[NAME("a")])]}
    state = tfs.latest_state(_changelog(spark, impl, events), ["id", "part"]).collect()
    assert [(r["id"], r["part"], dict(r["after"])["name"]) for r in state] == [("2", "7", "b")]


@pytest.mark.parametrize("protocol", ["open", "simple-json", "simple-avro", "avro"])
def test_typed_and_generic_state_without_old_image_option(spark, impl, protocol):
    """Issue 42's check: INSERT 1, raw UPDATE 1 -> 2, INSERT 3, decoded without old_image=: the
    typed and the generic latest_state hold exactly {2, 3}, as an independent fold of the events."""
    events = _history(0, split=False)
    fold = {}
    for op, _, new, old in events:
        if old is not None:
            fold.pop(old["id"], None)
        if new is not None:
            fold[new["id"]] = new
    msgs = [_encode(protocol, ev) for ev in events]
    if protocol.startswith("simple"):
        (_, v), = SimpleEncoder(protocol.split("-")[1]).encode([SimpleBootstrap(SIMPLE_TABLE)])
        msgs.insert(0, (None, v))
    rows = spark.sparkContext.parallelize([(k, v, 0, i) for i, (k, v) in enumerate(msgs)], 1)
    raw = spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint")
    extra = {"schemas": AVRO_SCHEMAS} if protocol == "avro" else {}
    typed = tfs.decode(raw, protocol, table="db.t", schema="id BIGINT, name STRING", implementation=impl, **extra)
    generic = tfs.decode(raw, protocol, implementation=impl, **extra)
    assert sorted(fold) == [2, 3]
    assert sorted(r["id"] for r in tfs.latest_state(typed, ["id"]).collect()) == sorted(fold)
    assert sorted(int(r["id"]) for r in tfs.latest_state(generic, ["id"]).collect()) == sorted(fold)
    assert {r["id"]: r["name"] for r in tfs.latest_state(typed, ["id"]).collect()} == \
        {k: v["name"] for k, v in fold.items()}


def test_typed_without_old_image_says_latest_state_cannot_see_old_keys(spark, impl, caplog):
    """``old_image=False`` (given on purpose): latest_state cannot delete an unsplit key change's
    old key, and says so instead of keeping it silently."""
    import logging
    msgs = [_encode("open", ev) for ev in _history(0, split=False)]
    rows = spark.sparkContext.parallelize([(k, v, 0, i) for i, (k, v) in enumerate(msgs)], 1)
    raw = spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint")
    typed = tfs.decode(raw, "open", table="db.t", schema="id BIGINT, name STRING", old_image=False,
                       implementation=impl)
    assert "_before" not in typed.columns
    with caplog.at_level(logging.WARNING, logger="ticdc_fast"):
        state = tfs.latest_state(typed, ["id"]).collect()
    assert sorted(r["id"] for r in state) == [1, 2, 3]
    assert "latest_state: the changelog has no old image" in caplog.text
