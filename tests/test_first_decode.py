"""The first decode of a process costs what a decode costs: the core's path never imports pandas.

pyarrow imports pandas (a quarter of a second here) the first time ``pa.array`` is called, to
check its input for pandas types.  A decode that called it once paid that inside its own time:
the first batch of every CLI run, Spark-free job or benchmark process (``ticdc-fast decode``
counted it as decode time and ran --jobs 2 with it as a serial part).  Each case runs in a fresh
interpreter, so nothing imported by another test can hide the import.

Core only: the pure-Python twin builds its columns with ``pa.array`` by design (it defines
behaviour, not speed), so it is not held to this.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ticdc_fast import _impl

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: a property of the Cython core")

PROGRAM = textwrap.dedent("""
    import sys
    import pyarrow as pa
    import ticdc_fast
    from ticdc_fast.capture import parse_block, write_capture
    from ticdc_fast.testing import avro_table_schema, realistic_stream

    protocol, form, mode, path = sys.argv[1:5]
    s = realistic_stream(protocol, 400, seed=3)
    keys = None if protocol.startswith("simple") else s.keys
    values = s.values
    parts, offs = [i % 3 for i in range(len(values))], list(range(7, 7 + len(values)))   # Python lists
    if form == "arrow":     # the arrays a capture file or the Kafka source hands over
        write_capture(path, [(k, v, 1, i) for i, (k, v) in enumerate(zip(keys or [None] * len(values), values))])
        cols = parse_block(open(path, "rb").read(), 1, path)
        keys = None if keys is None else cols[0]
        values, parts, offs = cols[1:]
    opts = {}
    if mode == "typed":
        table = "shop.orders"
        if protocol == "open":
            schema = ticdc_fast.infer_open_schema(s.keys[:400], s.values[:400], table=table)
        elif protocol == "avro":
            schema = avro_table_schema({i: t for i, t in s.schemas.items() if '"orders"' in t})
        else:
            schema = ticdc_fast.simple_arrow_schema(s.bootstraps[1], encoding=protocol.split("-")[1])
        opts = {"table": table, "schema": schema}
    if protocol == "open":
        decoder = ticdc_fast.OpenDecoder(implementation="cython", **opts)
    elif protocol == "avro":
        decoder = ticdc_fast.AvroDecoder(implementation="cython", schemas=s.schemas, **opts)
    else:
        decoder = ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation="cython",
                                           schemas=s.bootstraps, **opts)
    before = "pandas" in sys.modules
    out = decoder.decode(keys, values, partitions=parts, offsets=offs)
    assert out.column("_offset").null_count == 0 and set(out.column("_partition").to_pylist()) <= {0, 1, 2}
    print(before, "pandas" in sys.modules, out.num_rows)
""")


@pytest.mark.parametrize("mode", ["generic", "typed"])
@pytest.mark.parametrize("form", ["list", "arrow"])
@pytest.mark.parametrize("protocol", ["open", "simple-json", "simple-avro", "avro"])
def test_the_core_decodes_without_importing_pandas(tmp_path, protocol, form, mode):
    res = subprocess.run([sys.executable, "-c", PROGRAM, protocol, form, mode, str(tmp_path / "c.jsonl")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    before, after, rows = res.stdout.split()
    assert int(rows) > 100
    assert (before, after) == ("False", "False"), "the decode imported pandas"


def test_cli_decode_runs_without_importing_pandas(tmp_path):
    code = textwrap.dedent("""
        import sys
        from ticdc_fast.capture import write_capture
        from ticdc_fast.cli import main
        from ticdc_fast.testing import OpenEncoder, realistic_changefeed
        msgs = OpenEncoder().encode(realistic_changefeed(2000, seed=4))
        write_capture("c.jsonl", [(k, v, 0, i) for i, (k, v) in enumerate(msgs)])
        rc = main(["decode", "--protocol", "open", "--input", "c.jsonl", "--output", "out.parquet",
                   "--jobs", "2"])
        print(rc, "pandas" in sys.modules)
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[-2:] == ["0", "False"], res.stdout + res.stderr


@pytest.mark.parametrize("values", [
    [], [0, 1, -5], (3, 4), [2**31 - 1, -2**31], [2**31], [2**63 - 1], [2**63], [None, 1], [True, 2],
    [1.0], [1.5], ["1"],
])
@pytest.mark.parametrize("typ", ["int32", "int64"])
def test_positions_given_as_lists_become_the_arrays_pa_array_makes(values, typ):
    """Lists of partitions, offsets and message indexes skip pa.array where the array module
    takes them, with the values, type and refusals pa.array has."""
    import pyarrow as pa
    from ticdc_fast._frontend import as_array
    t = getattr(pa, typ)()

    def outcome(fn):
        try:
            a = fn(values, t)
            return a.type, a.to_pylist()
        except Exception as exc:                    # noqa: BLE001 -- the refusal is compared
            return type(exc), str(exc)
    assert outcome(as_array) == outcome(pa.array)
