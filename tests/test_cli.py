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
from ticdc_fast.testing import (AvroEncoder, LocalSchemaRegistry, OpenEncoder, SimpleEncoder,
                                realistic_avro_changefeed, realistic_changefeed, simple_changefeed)


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
    # the images' values (mostly distinct) are written without a dictionary, everything else with
    meta = pq.ParquetFile(out).metadata.row_group(0)
    chunks = {meta.column(i).path_in_schema: meta.column(i).has_dictionary_page for i in range(meta.num_columns)}
    assert chunks["after.key_value.value"] is False and chunks["before.key_value.value"] is False
    assert chunks["after.key_value.key"] and chunks["_op"] and chunks["_table"] and chunks["_offset"]
    # min/max statistics for every column but the images' maps (no reader can skip a page by them)
    stats = {meta.column(i).path_in_schema: meta.column(i).statistics for i in range(meta.num_columns)}
    assert all(stats[p] is None for p in ("after.key_value.key", "after.key_value.value",
                                          "before.key_value.key", "before.key_value.value"))
    assert stats["_commit_ts"].has_min_max and stats["_offset"].min == 0
    assert stats["_offset"].max == len(messages) - 1 and stats["_table"].has_min_max


def test_dictionary_columns_reach_every_leaf_but_the_text_map_values():
    from ticdc_fast.cli import _dictionary_columns
    schema = pa.schema([("a", pa.int64()), ("m", pa.map_(pa.string(), pa.string())),
                        ("n", pa.map_(pa.string(), pa.int32())),
                        ("s", pa.struct([("x", pa.string()), ("l", pa.list_(pa.int8()))]))])
    assert _dictionary_columns(schema) == ["a", "m.key_value.key", "n.key_value.key", "n.key_value.value",
                                           "s.x", "s.l.list.element"]
    table = pa.table({"a": [1], "m": [[("k", "v")]], "n": [[("k", 2)]], "s": [{"x": "y", "l": [3]}]}, schema=schema)
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema, use_dictionary=_dictionary_columns(schema)) as w:
        w.write_table(table)
    meta = pq.ParquetFile(pa.BufferReader(sink.getvalue())).metadata.row_group(0)
    paths = {meta.column(i).path_in_schema: meta.column(i).has_dictionary_page for i in range(meta.num_columns)}
    assert paths == {"a": True, "m.key_value.key": True, "m.key_value.value": False, "n.key_value.key": True,
                     "n.key_value.value": True, "s.x": True, "s.l.list.element": True}


def test_statistics_columns_leave_out_only_the_text_maps():
    from ticdc_fast.cli import _statistics_columns
    schema = pa.schema([("a", pa.int64()), ("m", pa.map_(pa.string(), pa.string())),
                        ("n", pa.map_(pa.string(), pa.int32())),
                        ("s", pa.struct([("x", pa.string()), ("t", pa.map_(pa.string(), pa.large_string()))]))])
    assert _statistics_columns(schema) == ["a", "n.key_value.key", "n.key_value.value", "s.x"]


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


def test_capture_reads_every_byte_and_every_escape_back(tmp_path):
    """Lines that are not UTF-8 are read as Latin-1 (fast), unless they escape a character above
    U+007F, which only the UTF-8 reading gives back as its UTF-8 bytes: both readings, and lines
    mixing binary bytes with escapes, return the exact bytes."""
    rnd = __import__("random").Random(4)
    records = [(bytes(rnd.getrandbits(8) for _ in range(n)), bytes(rnd.getrandbits(8) for _ in range(2 * n)), 0, n)
               for n in range(0, 300, 7)]
    records.append(("日本 \n\t\u0001".encode(), b"\x7f\x80\xff\\u00e9", 0, 999))
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    with open(path, "ab") as fh:        # hand-written kcat lines: escapes kcat or a tool may write
        fh.write(b'{"partition": 1, "offset": 5, "key": "\\\\u00e9 \\u00e9 \xff", "payload": "\\u65e5\\u0001"}\n')
        fh.write(b'{"partition": 1, "offset": 6, "key": "\xff\\\"\\u0007", "payload": "\xc3\xa9\\u0041"}\n')
    (keys, values, parts, offs), = read_capture(path)
    got = list(zip(keys, values, parts, offs))
    assert got[:-2] == records
    assert got[-2] == ("\\u00e9 é ".encode() + b"\xff", "日\x01".encode(), 1, 5)
    assert got[-1] == (b'\xff"\x07', b"\xc3\xa9A", 1, 6)


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


# ------------------------------------------------------------------------------------ --jobs
@pytest.fixture(scope="module")
def many_messages():
    return OpenEncoder().encode(realistic_changefeed(2000, seed=6))     # 129 messages: 13 chunks of 10


def _decode(tmp_path, name, cap, protocol, impl, *extra):
    out = tmp_path / name
    rc = main(["decode", "--protocol", protocol, "--input", str(cap), "-o", str(out),
               "--batch-size", "10", "--implementation", impl, *extra])
    return rc, out


@pytest.mark.parametrize("typed", [False, True])
def test_decode_on_two_threads_writes_what_one_thread_writes(tmp_path, many_messages, impl, capfd, typed):
    cap = _capture(tmp_path / "in.jsonl", many_messages)
    table = ["--table", "shop.orders"] if typed else []
    rc1, one = _decode(tmp_path, "one.parquet", cap, "open", impl, *table)
    rc2, two = _decode(tmp_path, "two.parquet", cap, "open", impl, "--jobs", "2", *table)
    assert rc1 == rc2 == 0
    got, want = pq.read_table(two), pq.read_table(one)
    assert got.num_rows == want.num_rows >= 2000
    assert got.schema == want.schema
    assert got.to_pylist() == want.to_pylist()                     # same rows, in input order
    assert got.column("_offset").to_pylist() == sorted(got.column("_offset").to_pylist())
    out = capfd.readouterr().out
    assert "summed over 2 threads" in out
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "one.parquet", "two.parquet"]


@pytest.mark.parametrize("policy", ["skip", "dead_letter"])
def test_decode_on_two_threads_sums_the_error_counts(tmp_path, many_messages, impl, capfd, policy):
    messages = many_messages
    bad = (messages[0][0], b"\x00\x00\x00")
    # a bad message in the first, a middle and the last chunk (10 messages each)
    stream = messages[:5] + [bad] + messages[5:60] + [bad] + messages[60:] + [bad]
    cap = _capture(tmp_path / "in.jsonl", stream)
    rc1, one = _decode(tmp_path, "one.parquet", cap, "open", impl, "--on-error", policy)
    out1 = capfd.readouterr().out
    rc2, two = _decode(tmp_path, "two.parquet", cap, "open", impl, "--on-error", policy, "-j", "2")
    out2 = capfd.readouterr().out
    assert rc1 == rc2 == 0
    assert pq.read_table(two).to_pylist() == pq.read_table(one).to_pylist()
    counts = "3 skipped, 0 dead-lettered" if policy == "skip" else "0 skipped, 3 dead-lettered"
    assert f"bad messages: {counts}" in out1
    assert f"bad messages: {counts}" in out2


def test_decode_on_two_threads_stops_at_the_first_bad_message_in_input_order(tmp_path, many_messages, impl, capfd):
    messages = many_messages
    bad = (messages[0][0], b"\x00\x00\x00")
    # the second bad message is in the chunk after the first's, decoded at the same time
    stream = messages[:74] + [bad] + messages[74:81] + [(b"not a key", messages[1][1])] + messages[81:]
    cap = _capture(tmp_path / "in.jsonl", stream)
    rc, out = _decode(tmp_path, "out.parquet", cap, "open", impl, "--jobs", "2")
    assert rc == 1
    err = capfd.readouterr().err
    assert "no output written" in err and "offset 74," in err and "offset 82," not in err
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_decode_simple_protocol_says_it_runs_on_one_thread(tmp_path, impl, capfd):
    simple = SimpleEncoder("json").encode(simple_changefeed(300, seed=3))
    cap = _capture(tmp_path / "in.jsonl", simple)
    rc1, one = _decode(tmp_path, "one.parquet", cap, "simple-json", impl)
    rc2, two = _decode(tmp_path, "two.parquet", cap, "simple-json", impl, "--jobs", "2")
    assert rc1 == rc2 == 0
    got = pq.read_table(two)
    assert got.num_rows > 300 and got.to_pylist() == pq.read_table(one).to_pylist()
    captured = capfd.readouterr()
    assert "--jobs 2 ignored: the simple protocol carries schemas" in captured.err
    assert "summed over" not in captured.out


def test_decode_avro_on_two_threads_writes_what_one_thread_writes(tmp_path, impl, capfd):
    events, table_columns = realistic_avro_changefeed(300, seed=4)
    with LocalSchemaRegistry() as reg:
        avro = AvroEncoder(reg.url, table_columns=table_columns).encode(events)
        cap = _capture(tmp_path / "in.jsonl", avro)
        rc1, one = _decode(tmp_path, "one.parquet", cap, "avro", impl, "--registry", reg.url)
        rc2, two = _decode(tmp_path, "two.parquet", cap, "avro", impl, "--registry", reg.url, "-j", "2")
    assert rc1 == rc2 == 0
    got = pq.read_table(two)
    assert got.num_rows == 300
    assert got.to_pylist() == pq.read_table(one).to_pylist()


def test_decode_jobs_must_be_positive(tmp_path, messages):
    cap = _capture(tmp_path / "in.jsonl", messages[:3])
    with pytest.raises(SystemExit, match="--jobs must be at least 1"):
        main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(tmp_path / "o.parquet"),
              "--jobs", "0"])


def test_decode_takes_any_decoder_option_by_its_name(tmp_path, messages, impl, capfd):
    """``--option NAME=VALUE``: the vocabulary's names (snake_case or camelCase) reach the decoder;
    an unknown name, or one the protocol's decoder does not take, is an error naming it."""
    cap = _capture(tmp_path / "in.jsonl", messages)
    out = tmp_path / "out.parquet"
    assert main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(out), "--implementation", impl,
                 "--table", "shop.orders", "--option", "control_events=false", "--option", "oldImage=true"]) == 0
    got = pq.read_table(out)
    assert set(got.column("_op").to_pylist()) <= {"INSERT", "UPDATE", "DELETE"}
    assert "_before" in got.column_names
    for bad, said in ((["--option", "onErorr=skip"], "unknown option 'onErorr'"),
                      (["--option", "verify_checksum=true"], "'verifyChecksum' is for the simple protocol"),
                      (["--option", "on_error=skip"], "use --on-error")):
        with pytest.raises(SystemExit, match=said):
            main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(out), *bad])
