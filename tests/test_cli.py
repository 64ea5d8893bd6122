"""The ``ticdc-fast`` command: decode writes a file only when the whole input decoded, help and
errors say what is needed."""
from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute  # noqa: F401
import pyarrow.parquet as pq
import pytest

import ticdc_fast
from ticdc_fast.capture import read_capture, write_capture
from ticdc_fast.cli import main
from ticdc_fast.testing import OpenEncoder, realistic_changefeed


@pytest.fixture(scope="module")
def messages():
    return OpenEncoder().encode(realistic_changefeed(400, seed=5))


def _capture(path, messages, tail=()):
    records = [(k, v, 0, i) for i, (k, v) in enumerate(list(messages) + list(tail))]
    assert write_capture(path, records, topic="tidb-open") == len(records)
    return path


def test_decode_writes_the_whole_capture(tmp_path, messages, impl, capfd):
    cap = _capture(tmp_path / "in.jsonl", messages)
    out = tmp_path / "out.parquet"
    assert main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(out),
                 "--batch-size", "100", "--implementation", impl]) == 0
    got = pq.read_table(out)
    want = ticdc_fast.OpenDecoder(implementation=impl).decode(
        [k for k, _ in messages], [v for _, v in messages], partitions=[0] * len(messages),
        offsets=list(range(len(messages))))
    assert got.num_rows == want.num_rows > 0
    assert got.to_pylist() == want.to_pylist()
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.parquet"]   # no temporary left


def test_decode_failing_on_its_last_message_leaves_no_output_file(tmp_path, messages, impl, capfd):
    cap = _capture(tmp_path / "in.jsonl", messages, tail=[(messages[0][0], b"\x00\x00\x00")])
    out = tmp_path / "out.parquet"
    rc = main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(out),
               "--batch-size", "100", "--implementation", impl])
    assert rc == 1
    err = capfd.readouterr().err
    assert "no output written" in err and str(out) in err
    assert f"offset {len(messages)}" in err                    # names the Kafka position
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]        # neither the file nor a temporary


@pytest.mark.parametrize("policy", ["skip", "dead_letter"])
def test_decode_with_an_error_policy_keeps_going_and_says_how_many(tmp_path, messages, impl, capfd, policy):
    poison = [(messages[0][0], b"\x00\x00\x00"), (b"not a key", messages[1][1])]
    cap = _capture(tmp_path / "in.jsonl", messages[:10] + poison[:1] + messages[10:] + poison[1:])
    out = tmp_path / "out.parquet"
    assert main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(out), "--batch-size", "100",
                 "--implementation", impl, "--on-error", policy]) == 0
    got = pq.read_table(out)
    want = ticdc_fast.OpenDecoder(implementation=impl).decode(
        [k for k, _ in messages], [v for _, v in messages], partitions=[0] * len(messages),
        offsets=[i if i < 10 else i + 1 for i in range(len(messages))])
    good = got.filter(pa.compute.not_equal(got.column("_op"), "ERROR"))
    assert good.select(want.schema.names).to_pylist() == want.to_pylist()
    out_text = capfd.readouterr().out
    if policy == "skip":
        assert got.num_rows == want.num_rows
        assert "bad messages: 2 skipped, 0 dead-lettered" in out_text
    else:
        dead = got.filter(pa.compute.equal(got.column("_op"), "ERROR"))
        assert dead.column("_offset").to_pylist() == [10, len(messages) + 1]
        assert dead.column("_raw_value").to_pylist() == [poison[0][1], poison[1][1]]
        assert "bad messages: 0 skipped, 2 dead-lettered" in out_text


def test_capture_round_trip_keeps_binary_bytes(tmp_path):
    records = [(b"\x00\xff\x80key", b"\xc3\x28 not utf-8 \x00", 3, 17), (None, None, 3, 18),
               (b"k", "h\u00e9llo".encode(), 1, 0)]
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    (keys, values, parts, offs), = read_capture(path)
    assert list(zip(keys, values, parts, offs)) == records


def test_no_arguments_prints_help(capfd):
    assert main([]) == 0
    out = capfd.readouterr().out
    assert out.startswith("usage: ticdc-fast") and "decode" in out and "demo" in out


@pytest.mark.parametrize("command, needle", [
    ("schema", "--table TABLE         (required)"),
    ("decode", "--output OUTPUT, -o OUTPUT"),
])
def test_help_marks_required_options(command, needle, capfd):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capfd.readouterr().out
    assert "(required) the TiCDC protocol" in out
    assert needle in out
    if command == "decode":
        assert "(required) Parquet file to write" in out


def test_schema_without_table_is_a_usage_error(capfd):
    with pytest.raises(SystemExit) as exc:
        main(["schema", "--protocol", "open", "--input", "x.jsonl"])
    assert exc.value.code == 2
    assert "--table" in capfd.readouterr().err


@pytest.mark.parametrize("argv, extra", [
    (["schema", "--protocol", "open", "--input", "x.jsonl", "--table", "a.b"], "spark"),
    (["demo"], "spark"),
])
def test_missing_extra_is_one_line_naming_it(tmp_path, argv, extra):
    """pyspark made unimportable in a real subprocess (``sys.modules[name] = None``)."""
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from ticdc_fast.cli import main\n"
            f"sys.exit(main({argv!r}))")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 3
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert f"pip install 'ticdc_fast[{extra}]'" in lines[0] and "pyspark" in lines[0]


def test_demo_and_cli_do_not_import_each_other():
    """The demo is a subcommand of the CLI; its helpers live in ticdc_fast._console, so importing
    the demo never imports the CLI (no cycle)."""
    import ast
    import inspect

    import ticdc_fast.demo as demo

    imported = {node.module for node in ast.walk(ast.parse(inspect.getsource(demo)))
                if isinstance(node, ast.ImportFrom)}
    assert "cli" not in imported and "ticdc_fast.cli" not in imported
    assert "_console" in imported
