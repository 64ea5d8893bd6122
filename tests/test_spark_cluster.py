"""Beyond one machine: the Spark end to end on ``local-cluster[2,1,1024]`` — a standalone master
and two workers, every executor a JVM of its own with its own Python workers, as on a real
cluster — reading a real broker through the ``ticdc_kafka`` and ``ticdc`` sources. Every decode
must give exactly the rows the same call gives in local mode (the session's ``spark``).

The cluster runs in a subprocess (tests/spark_cluster_job.py): a JVM holds one SparkContext.
Its executors import the ``ticdc_fast`` this test imports (``PYTHONPATH``), as executors whose
image has the package installed would."""
from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast import spark as tfs
from ticdc_fast.testing import OpenEncoder, SimpleEncoder, realistic_changefeed, simple_changefeed

import spark_cluster_job

pytestmark = pytest.mark.slow

JOB = Path(spark_cluster_job.__file__)
PACKAGE_ROOT = Path(ticdc_fast.__file__).resolve().parent.parent
EXECUTOR_MAIN = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def _spark_home(home: Path) -> Path:
    """A SPARK_HOME of links to the pyspark package's entries. local-cluster's workers put each
    executor's directory under SPARK_HOME/work (SPARK_WORKER_DIR is only read by a standalone
    worker started on its own): this keeps them out of the installed package."""
    import pyspark

    home.mkdir()
    for entry in Path(pyspark.__file__).parent.iterdir():
        if entry.name != "work":
            (home / entry.name).symlink_to(entry)
    return home


_RUN: dict = {}    # the one cluster run of the session (see ``cluster``)


@pytest.fixture(scope="module")
def cluster(kafka, tmp_path_factory):
    """Topics on the real broker, the jobs' spec, and what the cluster run returned.

    Run once per session: in a whole-suite run pytest may set this module fixture up again when
    the session-wide ``impl`` parameter changes, and the cluster run already covers both."""
    if "result" not in _RUN:
        _RUN["result"] = _run_cluster(kafka, tmp_path_factory)
    return _RUN["result"]


def _run_cluster(kafka, tmp_path_factory):
    scratch = tmp_path_factory.mktemp("cluster")
    open_msgs = OpenEncoder("ticdc").encode(realistic_changefeed(600, seed=14, flavor="ticdc"))
    kafka.create_topic("cluster-open", partitions=2)
    kafka.produce("cluster-open", [(k, v, i % 2) for i, (k, v) in enumerate(open_msgs)])
    kafka.create_topic("cluster-simple", partitions=1)
    simple_msgs = SimpleEncoder("avro").encode(simple_changefeed(400, seed=14, alter_every=150))
    kafka.produce("cluster-simple", simple_msgs)
    _, orders_ddl, _ = tfs.open_table_schema([k for k, _ in open_msgs[:200]], [v for _, v in open_msgs[:200]],
                                         "shop.orders")
    spec = {"master": "local-cluster[2,1,1024]", "bootstrap": kafka.bootstrap_servers,
            "topics": {"open": "cluster-open", "simple": "cluster-simple"},
            "open_messages": len(open_msgs), "orders_ddl": orders_ddl, "scratch": str(scratch),
            "implementations": ["python"] if _impl.PURE_FORCED else ["cython", "python"]}
    (scratch / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_HOME=str(_spark_home(scratch / "spark-home")),
               PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, str(JOB), str(scratch / "spec.json"),
                           str(scratch / "result.pickle")],
                          env=env, cwd=scratch, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"the local-cluster job failed:\n{proc.stderr[-6000:]}"
    result = pickle.loads((scratch / "result.pickle").read_bytes())
    result.update(spec=spec, scratch=scratch)
    print("local-cluster seconds:", {k: round(v, 1) for k, v in result["seconds"].items()})
    return result


def test_executors_are_jvms_of_their_own(cluster):
    assert cluster["executor_ids"] == ["0", "1"]
    # each executor was launched by a worker, in its own directory under our SPARK_HOME
    app_dir = cluster["scratch"] / "spark-home" / "work" / cluster["app_id"]
    assert sorted(p.name for p in app_dir.iterdir()) == ["0", "1"]
    assert all("CoarseGrainedExecutorBackend" in (app_dir / e / "stderr").read_text() for e in ("0", "1"))
    procs = cluster["executor_processes"]
    assert {p["jvm_main"] for p in procs} == {EXECUTOR_MAIN}
    jvms = {p["jvm_pid"] for p in procs}
    assert len(jvms) == 2 and cluster["driver_jvm_pid"] not in jvms
    assert cluster["driver_python_pid"] not in {p["python_pid"] for p in procs}
    # every executor's Python workers run the driver's ticdc_fast and implementation
    workers = cluster["worker_implementations"]
    assert {(w["implementation"], w["package"]) for w in workers} == {
        (_impl.IMPLEMENTATION, str(Path(ticdc_fast.__file__).resolve().parent))}
    assert cluster["driver_python_pid"] not in {w["pid"] for w in workers}


@pytest.mark.parametrize("job", ["open", "open-typed", "simple-avro", "ticdc-source"])
def test_cluster_decodes_exactly_as_local_mode(spark, cluster, impl, job):
    local = spark_cluster_job.rows(spark_cluster_job.jobs(spark, cluster["spec"], impl)[job])
    assert local, "the job decoded nothing"
    assert cluster["rows"][job, impl] == local


def test_streaming_on_the_cluster_decodes_every_message_once(spark, cluster):
    """A streaming query in micro-batches (file sink, checkpoint), decoding with the driver's
    implementation, gives the rows a local batch read gives."""
    spec = cluster["spec"]
    local = spark_cluster_job.rows(spark_cluster_job.jobs(spark, spec, _impl.IMPLEMENTATION)["open"])
    assert cluster["stream_batches"] >= math.ceil(spec["open_messages"] / spark_cluster_job.STREAM_TRIGGER)
    assert cluster["rows"]["stream"] == local
