"""Spark's Python workers and data-source planners run an interpreter that has ``ticdc_fast``,
whether or not a venv is activated or ``PYSPARK_PYTHON`` is set: the README's Spark snippet runs
with the venv's interpreter by path, ``PYSPARK_PYTHON`` unset and a ``python3`` on ``PATH``
that lacks the package; an interpreter set on purpose that lacks it is one line, at once."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ticdc_fast.testing import OpenEncoder, realistic_changefeed

import test_readme

pytestmark = pytest.mark.slow

VENV_BIN = str(Path(sys.executable).parent)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> Path:
    """A directory whose ``python3`` is this machine's base interpreter, which cannot import
    ``ticdc_fast`` (checked here, from a directory without a checkout in it)."""
    d = tmp_path_factory.mktemp("bare-bin")
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert base.is_file(), base
    (d / "python3").symlink_to(base)
    (d / "python").symlink_to(base)
    res = subprocess.run([str(d / "python3"), "-c", "import ticdc_fast"], cwd=d, capture_output=True,
                         text=True, env=_bare_env(d))
    assert res.returncode == 1 and "No module named 'ticdc_fast'" in res.stderr
    return d


def _bare_env(bare: Path, **extra) -> dict:
    """The environment of a user who did not activate the venv: no PYSPARK_* variables, no
    VIRTUAL_ENV, and ``PATH`` without the venv's ``bin`` (the bare ``python3`` first)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH")}
    rest = [p for p in env.get("PATH", "").split(os.pathsep) if p and os.path.abspath(p) != VENV_BIN]
    env["PATH"] = os.pathsep.join([str(bare)] + rest)
    env.update(extra)
    return env


def _spark_snippet() -> str:
    (snippet,) = [s for s in test_readme.use_snippets() if "tfs.decode" in s]
    return snippet


def test_the_readme_spark_snippet_runs_with_the_venv_python_by_path(kafka, bare_python, tmp_path):
    topic = "tidb-open-worker-python"
    kafka.create_topic(topic, partitions=1)
    kafka.produce(topic, OpenEncoder().encode(realistic_changefeed(300, seed=1)))
    snippet = _spark_snippet()
    assert '"localhost:9092"' in snippet and '"tidb-open"' in snippet
    script = tmp_path / "snippet.py"
    script.write_text(snippet.replace('"localhost:9092"', repr(kafka.bootstrap_servers))
                      .replace('"tidb-open"', repr(topic))
                      + '\nprint("STATE ROWS", state.count())\n'
                      + 'print("WORKERS", sorted({w["implementation"] for w in tfs.worker_implementations(spark)}))\n')
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_bare_env(bare_python),
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    rows = int(res.stdout.split("STATE ROWS ")[1].split()[0])
    assert rows > 0
    from ticdc_fast import _impl
    assert f"WORKERS ['{_impl.IMPLEMENTATION}']" in res.stdout


def test_an_interpreter_set_on_purpose_without_the_package_is_one_line_at_once(bare_python, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        "import time\n"
        "from pyspark.sql import SparkSession\n"
        "from ticdc_fast import spark as tfs\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    tfs.register_kafka_source(spark)\n"
        "except tfs.WorkerPythonError as exc:\n"
        "    print('SECONDS', time.monotonic() - t0)\n"
        "    print('ERROR', exc)\n")
    python3 = bare_python / "python3"
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         env=_bare_env(bare_python, PYSPARK_PYTHON=str(python3)), timeout=300)
    assert res.returncode == 0, res.stderr[-4000:]
    seconds = float(res.stdout.split("SECONDS ")[1].split()[0])
    assert seconds < 15 and time.monotonic() - t0 < 120
    (line,) = [ln for ln in res.stdout.splitlines() if ln.startswith("ERROR ")]
    assert line == (f"ERROR Spark's Python workers would run {python3} (PYSPARK_PYTHON={python3}), which "
                    "cannot import ticdc_fast (ModuleNotFoundError: No module named 'ticdc_fast'): set "
                    "spark.pyspark.python (or PYSPARK_PYTHON) to an interpreter that has it, such as this "
                    f"driver's {sys.executable}")
