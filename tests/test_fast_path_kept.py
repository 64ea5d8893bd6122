"""The fast path is never silently lost.

A regular (non-editable) install run from a checkout is the case that bites: Python started in
the checkout imports ``./ticdc_fast`` (no compiled core) before the installed package, and Spark
starts its Python workers there.  These tests build that situation for real in temporary
directories — an "installed" copy of the package with its core, and a "checkout" holding the bare
source tree — and run the driver and Spark in a subprocess.  This suite's own environment is an
editable install, whose import hook would find the core for any ``ticdc_fast`` package; the
subprocesses drop that hook in a ``sitecustomize`` to behave like a regular install.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from ticdc_fast import _impl

PACKAGE = Path(_impl.__file__).resolve().parent
ROOT = PACKAGE.parent

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="about loading the core; TICDC_FAST_PURE=1 forces the twin")

DROP_EDITABLE_HOOK = textwrap.dedent("""\
    import sys
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                        and "editable" not in getattr(f, "__name__", "").lower()]
    """)


def _source_files(directory, names):
    return [n for n in names if n.endswith((".so", ".pyd", ".c")) or n == "__pycache__"]


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """``site/``: the package as installed, with its core; ``checkout/``: the source tree without
    one (``setup.py`` and ``src_cython/`` beside ``ticdc_fast/``, as in a clone)."""
    if _impl.core is None:
        pytest.fail("the compiled core is not built: " + str(_impl.CORE_PROBLEM))
    base = tmp_path_factory.mktemp("fast_path")
    site = base / "site"
    shutil.copytree(PACKAGE, site / "ticdc_fast", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "sitecustomize.py").write_text(DROP_EDITABLE_HOOK)
    checkout = base / "checkout"
    shutil.copytree(PACKAGE, checkout / "ticdc_fast", ignore=_source_files)
    shutil.copy(ROOT / "setup.py", checkout / "setup.py")
    (checkout / "src_cython").mkdir()
    return site, checkout


def _run(code, *, cwd, site, extra_env=None, timeout=300):
    script = Path(tempfile.mkdtemp()) / "job.py"   # outside the checkout, like a console script
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=str(site), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    env.pop("TICDC_FAST_PURE", None)
    env.pop("PYTHONSAFEPATH", None)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_import_from_source_tree_warns_naming_path_and_fix(layout):
    site, checkout = layout
    res = _run("""\
        import sys, warnings
        sys.path.insert(0, ".")          # what `python -c` / a REPL in the checkout does
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import ticdc_fast
        print(ticdc_fast.IMPLEMENTATION)
        for w in caught:
            print(w.category.__name__, "|", w.message)
        """, cwd=checkout, site=site)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "python"
    warning = next(line for line in lines[1:] if line.startswith("SlowImplementationWarning"))
    assert "source tree" in warning and str(checkout / "ticdc_fast") in warning
    assert "pip install -e ." in warning and "TICDC_FAST_PURE=1" in warning


def _import_warnings(site, cwd, sys_path_first=None) -> tuple[str, str]:
    """(IMPLEMENTATION, the import's warnings joined) of ``import ticdc_fast`` in a fresh Python."""
    res = _run(f"""\
        import sys, warnings
        if {str(sys_path_first)!r} != "None":
            sys.path.insert(0, {str(sys_path_first)!r})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import ticdc_fast
        print(ticdc_fast.IMPLEMENTATION, "|", "; ".join(str(w.message) for w in caught))
        """, cwd=cwd, site=site)
    assert res.returncode == 0, res.stderr
    impl, message = res.stdout.strip().split(" | ", 1)
    return impl, message


def test_import_of_a_build_without_core_warns(layout, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(PACKAGE, bare / "ticdc_fast", ignore=_source_files)   # installed, no core
    (bare / "sitecustomize.py").write_text(DROP_EDITABLE_HOOK)
    impl, message = _import_warnings(bare, tmp_path)
    assert impl == "python"
    assert "installed without its compiled core" in message and str(bare / "ticdc_fast") in message


def test_import_from_a_zip_says_extensions_cannot_load_from_one(layout, tmp_path):
    """Spark's ``--py-files`` with the wheel (or a zip of it): the package imports, its core
    cannot; the warning says why and what to ship instead."""
    import zipfile
    bare = tmp_path / "zipped"
    bare.mkdir()
    (bare / "sitecustomize.py").write_text(DROP_EDITABLE_HOOK)
    archive = tmp_path / "ticdc_fast.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in PACKAGE.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, Path("ticdc_fast") / path.relative_to(PACKAGE))
    impl, message = _import_warnings(bare, tmp_path, sys_path_first=archive)
    assert impl == "python"
    assert str(archive) in message and "cannot load a compiled extension from a zip" in message
    assert "--archives" in message


def test_twin_asked_for_does_not_warn(layout):
    site, checkout = layout
    res = _run("""\
        import sys, warnings
        sys.path.insert(0, ".")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import ticdc_fast
        print(ticdc_fast.IMPLEMENTATION, len(caught))
        """, cwd=checkout, site=site, extra_env={"TICDC_FAST_PURE": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["python", "0"]


SPARK_JOB = """\
    import json, sys
    import pyarrow as pa
    from pyspark.sql import SparkSession
    import ticdc_fast
    from ticdc_fast import spark as tfs
    from ticdc_fast.testing import OpenEncoder, realistic_changefeed

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    msgs = OpenEncoder().encode(realistic_changefeed(300, seed=3))
    df = spark.createDataFrame([(k, v, 0, i) for i, (k, v) in enumerate(msgs)],
                               "key binary, value binary, partition int, offset bigint")

    def plain_probe(batches):            # a user's own UDF: the workers' default import
        import ticdc_fast as t
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"impl": [t.IMPLEMENTATION], "package": [t.__file__]})

    plain = spark.range(1).mapInArrow(plain_probe, "impl string, package string").collect()[0]
    rows = tfs.decode(df, "open").count()
    want = ticdc_fast.OpenDecoder().decode([k for k, _ in msgs], [v for _, v in msgs]).num_rows
    print(json.dumps({"driver": ticdc_fast.IMPLEMENTATION, "driver_package": ticdc_fast.__file__,
                      "plain": plain.asDict(), "workers": tfs.worker_implementations(spark),
                      "rows": rows, "want": want}))
    spark.stop()
    """


def test_spark_workers_decode_with_the_core_from_a_checkout(layout):
    site, checkout = layout
    res = _run(SPARK_JOB, cwd=checkout, site=site)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["driver"] == "cython" and out["driver_package"].startswith(str(site))
    # the situation is real: a worker started in the checkout imports the bare source tree ...
    assert out["plain"]["impl"] == "python" and out["plain"]["package"].startswith(str(checkout))
    # ... but decode's workers run the installed package with its core
    assert out["workers"] and all(w["implementation"] == "cython" for w in out["workers"])
    assert all(w["core"].startswith(str(site / "ticdc_fast")) for w in out["workers"])
    assert out["rows"] == out["want"] > 0


def test_spark_worker_without_core_fails_the_task_saying_why(layout, tmp_path):
    """A worker that cannot load the core, while the driver uses it, fails loudly."""
    site, _ = layout
    bare = tmp_path / "bare"
    shutil.copytree(PACKAGE, bare / "ticdc_fast", ignore=_source_files)
    (bare / "sitecustomize.py").write_text(DROP_EDITABLE_HOOK)
    code = SPARK_JOB.replace('spark = (SparkSession.builder.master("local[1]")',
                             'spark = (SparkSession.builder.master("local[1]")'
                             f'.config("spark.executorEnv.PYTHONPATH", {str(bare)!r})')
    res = _run(code, cwd=tmp_path, site=site)
    assert res.returncode != 0
    assert "cannot load its compiled core" in res.stderr
    assert "implementation='python'" in res.stderr
