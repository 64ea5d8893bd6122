"""Spark and the Delta sink, with a real SparkSession, a real broker and real Delta tables:
``delta_foreach_batch`` writes a streaming query exactly once (a micro-batch run again commits
nothing), ``auto_cdc_changes`` prepares a changelog for ``create_auto_cdc_flow``, and ``decode``
runs inside a Spark Declarative Pipelines query function (``spark-pipelines run``)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

import delta_streams as S
from ticdc_fast import spark as tfs

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("note", pa.string())])
SCHEMAS = {"db.t": SCHEMA, "db.u": pa.schema([("id", pa.int64()), ("name", pa.string())])}


def _live(root, table):
    rows = DeltaTable(f"{root}/{table.replace('.', '/')}").to_pyarrow_table().to_pylist()
    return {r["id"]: {"id": r["id"], "name": r["name"], "note": r.get("note")} for r in rows if not r["_deleted"]}


def _raw(spark, evs):
    rows = [(k, v, p, o) for k, v, p, o in S.with_offsets(S.encode_open(evs))]
    return spark.createDataFrame(rows, "key binary, value binary, partition int, offset bigint")


def test_foreach_batch_writes_each_micro_batch_once(spark, kafka, tmp_path):
    evs = S.events()
    topic = "delta-spark-open"
    kafka.create_topic(topic, partitions=2)
    kafka.produce(topic, S.encode_open(evs))
    raw = (spark.readStream.format("ticdc_kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
           .option("subscribe", topic).option("startingOffsets", "earliest")
           .option("maxOffsetsPerTrigger", "16").load())
    changes = tfs.decode(raw, "open", tables=SCHEMAS, old_image=True)
    root = str(tmp_path / "lake")
    write = tfs.delta_foreach_batch(root, keys={"db.t": ["id"], "db.u": ["id"]}, partitions=2)
    seen = []

    def step(df, batch_id):
        seen.append(batch_id)
        write(df, batch_id)

    def run():
        q = (changes.writeStream.foreachBatch(step).option("checkpointLocation", str(tmp_path / "chk"))
             .trigger(availableNow=True).start())
        assert q.awaitTermination(180)
        assert q.exception() is None
        return q

    query = run()
    assert len(seen) >= 2                                      # more than one micro-batch
    for table in S.TABLES:
        assert _live(root, table) == S.expected_state(evs, upto=10**6)[table]
    dt = DeltaTable(f"{root}/db/t")
    app = f"ticdc_fast/spark/{query.id}"
    assert dt.transaction_version(app) is not None
    versions = {t: DeltaTable(f"{root}/{t.replace('.', '/')}").version() for t in S.TABLES}
    # Spark runs a micro-batch again after a failure: the same batch_id commits nothing
    last = dt.transaction_version(app)
    again = tfs.delta_foreach_batch(root, keys={"db.t": ["id"], "db.u": ["id"]}, partitions=2, app_id=str(query.id))
    replay = tfs.decode(_raw(spark, evs), "open", tables=SCHEMAS, old_image=True)
    assert again(replay, last).commits == {}
    assert {t: DeltaTable(f"{root}/{t.replace('.', '/')}").version() for t in S.TABLES} == versions
    # restarted from its checkpoint: nothing left to do, nothing committed
    run()
    assert {t: DeltaTable(f"{root}/{t.replace('.', '/')}").version() for t in S.TABLES} == versions


def _auto_cdc_fold(rows, keys):
    """What AUTO CDC (SCD 1) keeps: per key the row of the highest sequence, unless a DELETE."""
    newest = {}
    for r in rows:
        k = tuple(r[c] for c in keys)
        if k not in newest or r["_sequence"] > newest[k]["_sequence"]:
            newest[k] = r
    return {k[0]: r for k, r in newest.items() if r["_op"] != "DELETE"}


@pytest.mark.parametrize("mode", ["typed", "generic"])
def test_auto_cdc_changes_split_key_changes_and_order_deletes_first(spark, impl, mode):
    evs = [e for e in S.events() if e[0] != "row" or e[2] == "db.t"]
    kw = {"table": "db.t", "schema": SCHEMA, "old_image": True} if mode == "typed" else {}
    changes = tfs.decode(_raw(spark, evs), "open", implementation=impl, **kw)
    prepared = tfs.auto_cdc_changes(changes, ["id"]).collect()
    assert {r["_op"] for r in prepared} <= {"INSERT", "UPDATE", "DELETE"}
    by = {(int(r["id"]), r["_op"], int(r["_commit_ts"])): r["_sequence"] for r in prepared}
    assert by[(2, "DELETE", 300)] == 600 and by[(3, "UPDATE", 300)] == 601     # the raw key change, split
    assert sum(1 for r in prepared if int(r["id"]) == 1 and int(r["_commit_ts"]) == 100) == 1   # replay once
    state = _auto_cdc_fold([r.asDict() for r in prepared], ["id"])
    expected = S.expected_state(evs, upto=10**6)["db.t"]
    assert sorted(int(k) for k in state) == sorted(expected)
    if mode == "typed":
        assert {k: (r["name"], r["note"]) for k, r in state.items()} == \
               {k: (v["name"], v["note"]) for k, v in expected.items()}


PIPELINE = """
from pyspark import pipelines as dp
from pyspark.sql import SparkSession
import pyarrow as pa
from ticdc_fast import spark as tfs

spark = SparkSession.active()
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("note", pa.string())])

@dp.materialized_view
def t_changes():
    raw = spark.read.parquet({raw!r})
    changes = tfs.decode(raw, "open", table="db.t", schema=SCHEMA, old_image=True,
                         columns=["key", "value", "partition", "offset"])
    return tfs.auto_cdc_changes(changes, ["id"]).drop("_before")
"""


@pytest.mark.slow
def test_decode_inside_a_declarative_pipeline(tmp_path):
    import pyspark
    evs = [e for e in S.events() if e[0] != "row" or e[2] == "db.t"]
    msgs = S.with_offsets(S.encode_open(evs))
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"key": [m[0] for m in msgs], "value": [m[1] for m in msgs],
                             "partition": pa.array([m[2] for m in msgs], pa.int32()),
                             "offset": [m[3] for m in msgs]}), raw)
    project = tmp_path / "p"
    (project / "transformations").mkdir(parents=True)
    (project / "spark-pipeline.yml").write_text(textwrap.dedent(f"""\
        name: ticdc
        storage: file://{project}/pipeline-storage
        libraries:
          - glob:
              include: transformations/**
        """))
    (project / "transformations" / "changes.py").write_text(PIPELINE.format(raw=str(raw)))
    env = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent), PYSPARK_PYTHON=sys.executable,
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    out = subprocess.run([str(Path(sys.executable).parent / "spark-pipelines"), "run"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    assert "ATTEMPT_ANALYSIS" not in out.stderr
    files = sorted((project / "spark-warehouse" / "t_changes").glob("*.parquet"))
    rows = pa.concat_tables([pq.read_table(f) for f in files]).to_pylist()
    state = _auto_cdc_fold(rows, ["id"])
    expected = S.expected_state(evs, upto=10**6)["db.t"]
    assert {k: (r["name"], r["note"]) for k, r in state.items()} == \
           {k: (v["name"], v["note"]) for k, v in expected.items()}


def test_decode_with_columns_refuses_what_needs_the_session(spark):
    raw = spark.createDataFrame([], "key binary, value binary, partition int, offset bigint")
    with pytest.raises(ValueError, match="schema='auto' cannot be used"):
        tfs.decode(raw, "simple-json", table="db.t", schema="auto", columns=raw.columns,
                   kafka={"kafka.bootstrap.servers": "h:9092", "subscribe": "t"})
    # a DDL string is read without the session now
    ddl = tfs.decode(raw, "open", table="db.t", schema="id BIGINT", columns=raw.columns)
    assert ddl.columns[:3] == ["_op", "_commit_ts", "id"]
    with pytest.raises(TypeError, match="column names"):
        tfs.decode(raw, "open", columns="key,value")
    out = tfs.decode(raw, "open", table="db.t", schema=SCHEMA, columns=["key", "value", "partition", "offset"])
    assert out.columns == tfs.decode(raw, "open", table="db.t", schema=SCHEMA).columns
