"""The kcat -J capture reader (issue 13): the Cython core's block parser gives exactly the twin's
arrays and error text, for every line a capture or a hostile writer can hold, whatever the block
boundaries; ``decode --jobs 2`` writes what ``--jobs 1`` writes from blocks parsed on threads."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ticdc_fast
from ticdc_fast import _impl, capture
from ticdc_fast.capture import parse_block, read_blocks, read_capture, write_capture
from ticdc_fast.cli import main
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

from conftest import is_utf8

ROOT = Path(ticdc_fast.__file__).resolve().parents[1]
TYPES = [pa.large_binary(), pa.large_binary(), pa.int32(), pa.int64()]


def parsed(block, impl, first_lineno=1, path="cap.jsonl"):
    """(keys, values, partitions, offsets) as Python lists, or the ValueError's text."""
    try:
        cols = parse_block(block, first_lineno, path, impl)
    except ValueError as exc:
        return str(exc)
    assert [c.type for c in cols] == TYPES
    return [c.to_pylist() for c in cols]


def agree(block, impl, first_lineno=1):
    """The implementation under test gives the twin's result; returns it."""
    got = parsed(block, impl, first_lineno)
    assert got == parsed(block, "python", first_lineno)
    return got


# ------------------------------------------------------------------------------------ values
HAND_WRITTEN = [
    # (line, key, value, partition, offset) -- offset None: the line number - 1
    (b'{"key": "k", "payload": "v", "partition": 3, "offset": 7}', b"k", b"v", 3, 7),
    (b'{"key": null, "payload": null}', None, None, 0, None),
    (b'{}', None, None, 0, None),
    (b'{"value": "from value"}', None, b"from value", 0, None),
    (b'{"value": "v", "payload": "p"}', None, b"p", 0, None),          # payload wins anywhere
    (b'{"payload": "p", "value": "v"}', None, b"p", 0, None),
    (b'{"payload": null, "value": "v"}', None, None, 0, None),
    (b'{"key": "a", "key": "bb", "payload": "x", "payload": "yy"}', b"bb", b"yy", 0, None),
    (b'{"key": "a", "key": null}', None, None, 0, None),
    (b'{"k\\u0065y": "escaped name", "p\\u0061yload": "p"}', b"escaped name", b"p", 0, None),
    (b'{"key": "\\u00e9\\u65e5\\ud83d\\ude00", "payload": "\\\\u00e9"}',
     "\u00e9\u65e5\U0001F600".encode(), b"\\u00e9", 0, None),
    (b'{"key": "\xff\x80\xc3\x28", "payload": "\xc3\xa9 \xed\xa0\x80"}', b"\xff\x80\xc3\x28",
     b"\xc3\xa9 \xed\xa0\x80", 0, None),
    (b'{"key": "\xff\\u00e9", "payload": "\xfe\\ud83d\\ude00\\\\\\u00e9\\\\u00e9"}', b"\xff\xc3\xa9",
     b"\xfe\xf0\x9f\x98\x80\\\xc3\xa9\\u00e9", 0, None),
    (b'{"payload": "\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\x7f"}', None, b'"\\/\x08\x0c\n\r\t\x00\x1f\x7f', 0, None),
    (b'{"topic": "t", "ts": 1e300, "x": [1, {"y": [null, true, false, -0.5e-400]}], "headers": {}, '
     b'"payload": "p"}', None, b"p", 0, None),
    (b'{"partition": -2147483648, "offset": -9223372036854775808}', None, None, -(1 << 31), -(1 << 63)),
    (b'{"partition": 2147483647, "offset": 9223372036854775807}', None, None, (1 << 31) - 1, (1 << 63) - 1),
    (b'{"partition": -0, "offset": 0, "n": 123456789012345678901234567890}', None, None, 0, 0),
    (b'  \t{"payload": "ws"} \x0b\x0c\r', None, b"ws", 0, None),
]


def test_hand_written_lines_give_their_bytes(impl):
    lines = [line for line, *_ in HAND_WRITTEN]
    block = b"\n".join(lines) + b"\n"
    got = agree(block, impl, first_lineno=10)
    want = [[k for _, k, *_ in HAND_WRITTEN], [v for _, _, v, *_ in HAND_WRITTEN],
            [p for *_, p, _ in HAND_WRITTEN],
            [9 + i if o is None else o for i, (*_, o) in enumerate(HAND_WRITTEN)]]
    assert got == want


def test_blank_lines_and_crlf_count_for_the_line_numbers(impl):
    block = b'\n{"payload": "a"}\r\n \t\r\n\n{"payload": "b"}\r\n\x0c\n{"payload": "c"}'
    assert agree(block, impl, first_lineno=5) == [[None] * 3, [b"a", b"b", b"c"], [0] * 3, [5, 8, 10]]
    assert agree(b"", impl) == [[], [], [], []]
    assert agree(b"\n \n\r\n", impl) == [[], [], [], []]


def _random_bytes(rnd, n):
    return bytes(rnd.getrandbits(8) for _ in range(n))


def _generated_records(seed):
    rnd = random.Random(seed)
    messages = OpenEncoder().encode(realistic_changefeed(120, seed=seed))     # binary open framing
    records = [(k, v, rnd.randrange(0, 4), i) for i, (k, v) in enumerate(messages)]
    for i in range(60):
        key = None if i % 7 == 0 else _random_bytes(rnd, rnd.randrange(0, 40))
        value = None if i % 5 == 0 else _random_bytes(rnd, rnd.randrange(0, 300))
        records.append((key, value, rnd.randrange(-5, 1 << 31), rnd.randrange(-(1 << 63), 1 << 63)))
    records.append(("日本 \u00e9 \U0001F600 \n\t\x01".encode(), b"\xc3\x28\xed\xa0\x80\xf4\x90\x80\x80", 1, 2))
    return records


def test_generated_capture_gives_its_records_back(tmp_path, impl):
    records = _generated_records(3)
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    block = path.read_bytes()
    got = agree(block, impl)
    assert list(zip(*got)) == records


def _escaped_variant(line: bytes, rnd) -> bytes:
    """The same record as a tool other than kcat may write it: members reordered, unknown ones
    added, characters escaped as \\uXXXX (UTF-8 read back) and missing partition/offset."""
    doc = json.loads(line.decode("utf-8", "surrogateescape"))
    if rnd.random() < 0.3:
        doc.pop("partition")
    if rnd.random() < 0.3:
        doc.pop("offset")
    if rnd.random() < 0.3 and "payload" in doc:
        doc["value"] = doc.pop("payload")
    doc["extra"] = [{"n": rnd.random(), "s": "\u00e9"}, None]
    items = list(doc.items())
    rnd.shuffle(items)
    out = "{" + ", ".join(json.dumps(k) + ": " + json.dumps(v, ensure_ascii=rnd.random() < 0.5) for k, v in items) + "}"
    return out.encode("utf-8", "surrogateescape")


def test_escaped_and_reordered_lines_agree(tmp_path, impl):
    records = [r for r in _generated_records(4) if all(b is None or is_utf8(b) for b in r[:2])]
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    rnd = random.Random(9)
    lines = [_escaped_variant(line, rnd) for line in path.read_bytes().splitlines()]
    got = agree(b"\r\n".join(lines), impl)
    assert len(got[0]) == len(records)
    assert got[1] == [v for _, v, _, _ in records]


# ------------------------------------------------------------------------------------ hostile
HOSTILE = [
    (b'{"payload": "abc', "malformed JSON"),
    (b'{"payload": "abc"', "malformed JSON"),
    (b'{"payload": "a\\"}', "malformed JSON"),
    (b'{"payload": "\\x"}', "malformed JSON"),
    (b'{"payload": "\\u12"}', "malformed JSON"),
    (b'{"payload": "\\u12g4"}', "malformed JSON"),
    (b'{"payload": "\\ud800"}', "malformed JSON"),
    (b'{"payload": "\\ud800\\u0041"}', "malformed JSON"),
    (b'{"payload": "\\udc80"}', "malformed JSON"),
    (b'{"payload": "\xff\\udcff"}', "malformed JSON"),
    (b'{"payload": "tab\there"}', "malformed JSON"),
    (b'{"payload": "a"} x', "malformed JSON"),
    (b'{"payload": "a"}{}', "malformed JSON"),
    (b'{"payload": "a",}', "malformed JSON"),
    (b'{"payload" "a"}', "malformed JSON"),
    (b'{payload: "a"}', "malformed JSON"),
    (b"{'payload': 'a'}", "malformed JSON"),
    (b'{"a": 1e400}', "malformed JSON"),
    (b'{"a": -1' + b"0" * 400 + b"}", "malformed JSON"),
    (b'{"a": [1, 2e999]}', "malformed JSON"),
    (b'{"a": NaN}', "malformed JSON"),
    (b'{"a": Infinity}', "malformed JSON"),
    (b'{"a": 01}', "malformed JSON"),
    (b'{"a": 1.}', "malformed JSON"),
    (b'{"a": .5}', "malformed JSON"),
    (b'{"a": +1}', "malformed JSON"),
    (b'{"a": tru}', "malformed JSON"),
    (b'{"a": [}', "malformed JSON"),
    (b'{"a": [1,]}', "malformed JSON"),
    (b'{"a": {"b"}}', "malformed JSON"),
    (b'{"a": ' + b"[" * 1024 + b"]" * 1024 + b"}", "malformed JSON"),     # depth 1025
    (b"[" * 5000, "malformed JSON"),
    (b"{" * 5000, "malformed JSON"),
    (b'\xef\xbb\xbf{"payload": "bom"}', "malformed JSON"),
    (b"\x00", "malformed JSON"),
    (b"}", "malformed JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'"payload"', "not a JSON object"),
    (b"null", "not a JSON object"),
    (b"12", "not a JSON object"),
    (b'{"key": 1}', "key is not a string or null"),
    (b'{"key": ["k"]}', "key is not a string or null"),
    (b'{"key": {}, "payload": 3}', "key is not a string or null"),
    (b'{"payload": true}', "payload is not a string or null"),
    (b'{"value": 1.5}', "value is not a string or null"),
    (b'{"value": "v", "payload": {}}', "payload is not a string or null"),
    (b'{"partition": "1"}', "partition is not a 32-bit integer"),
    (b'{"partition": 1.0}', "partition is not a 32-bit integer"),
    (b'{"partition": true}', "partition is not a 32-bit integer"),
    (b'{"partition": null}', "partition is not a 32-bit integer"),
    (b'{"partition": 2147483648}', "partition is not a 32-bit integer"),
    (b'{"partition": -2147483649}', "partition is not a 32-bit integer"),
    (b'{"offset": 9223372036854775808}', "offset is not a 64-bit integer"),
    (b'{"offset": 18446744073709551616}', "offset is not a 64-bit integer"),
    (b'{"offset": 1e3}', "offset is not a 64-bit integer"),
    (b'{"offset": [1]}', "offset is not a 64-bit integer"),
]


@pytest.mark.parametrize("line, why", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_line_is_named_with_the_same_words(impl, line, why):
    block = b'{"payload": "fine"}\n\n' + line + b'\n{"payload": "never read"}\n'
    assert agree(block, impl, first_lineno=41) == f"cap.jsonl:43: not a kcat -J record ({why})"


def test_deepest_nesting_orjson_takes_is_taken(impl):
    line = b'{"a": ' + b"[" * 1023 + b"]" * 1023 + b', "payload": "deep"}'
    assert agree(line, impl) == [[None], [b"deep"], [0], [0]]


# ------------------------------------------------------------------------------------ blocks
@pytest.mark.parametrize("block_bytes", [1, 7, 100, 4096, None])
def test_blocks_end_at_line_ends_and_number_lines_right(tmp_path, block_bytes):
    records = _generated_records(5)
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    with open(path, "ab") as fh:
        fh.write(b"\n\r\n" + b'{"payload": "last", "offset": 5}')        # no final line end
    blocks = list(read_blocks(path, block_bytes))
    assert b"".join(bytes(b) for _, b in blocks) == path.read_bytes()
    assert all(bytes(b).endswith(b"\n") for _, b in blocks[:-1])
    assert [n for n, _ in blocks] == [1 + sum(bytes(b).count(b"\n") for _, b in blocks[:i]) for i in range(len(blocks))]
    (keys, values, parts, offs), = read_capture(path, chunk=10 ** 9)
    assert list(zip(keys, values, parts, offs)) == records + [(None, b"last", 0, 5)]


@pytest.mark.parametrize("block_bytes", [1, 7, 100, 4096])
def test_blocks_given_back_are_filled_again_with_the_right_lines(tmp_path, block_bytes):
    """With ``spare``, the reader refills the blocks the caller gave back (longer ones cut back,
    shorter ones grown: a block that took the rest of a long line, or the file's last one) and
    cuts, numbers and returns the same lines as without."""
    import queue
    records = _generated_records(7)
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    with open(path, "ab") as fh:
        fh.write(b'{"payload": "' + b"x" * 300 + b'"}\n\n{"payload": "y"}\n')
    expected = [(n, bytes(b)) for n, b in read_blocks(path, block_bytes)]
    spare = queue.SimpleQueue()
    got, seen = [], set()
    for n, block in read_blocks(path, block_bytes, spare=spare):
        got.append((n, bytes(block)))
        seen.add(id(block))
        spare.put(block)            # parsed: the reader may fill it again
    assert got == expected
    assert len(expected) > 2 and len(seen) == 1      # one block, reused for every read


def test_blocks_parsed_into_reused_buffers_keep_their_values(tmp_path, impl):
    """The core parses a block's payloads into a buffer an earlier block's arrays gave back: the
    arrays of a parsed block never change when later blocks are parsed, and each block gives its
    own records whatever it reused."""
    records = _generated_records(8)
    write_capture(tmp_path / "big.jsonl", records)
    write_capture(tmp_path / "small.jsonl", [(b"k", b"short", 1, 2)])
    big, small = (tmp_path / "big.jsonl").read_bytes(), (tmp_path / "small.jsonl").read_bytes()
    first = parse_block(bytearray(big), 1, "c.jsonl", impl)
    kept = [c.to_pylist() for c in first]
    del first                                           # its payload buffer goes back to the pool
    for block, want in ((small, [[b"k"], [b"short"], [1], [2]]), (big, kept), (small + big, None)):
        cols = parse_block(bytearray(block), 1, "c.jsonl", impl)
        got = [c.to_pylist() for c in cols]
        if want is None:
            want = [[b"k"] + kept[0], [b"short"] + kept[1], [1] + kept[2], [2] + kept[3]]
        assert got == want
        again = parse_block(bytearray(small), 9, "c.jsonl", impl)    # while `cols` is alive
        assert [c.to_pylist() for c in cols] == want
        assert [c.to_pylist() for c in again] == [[b"k"], [b"short"], [1], [2]]


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_read_capture_chunks_hold_chunk_messages(tmp_path, impl, chunk, monkeypatch):
    monkeypatch.setattr(capture, "BLOCK_BYTES", 3000)
    records = _generated_records(6)
    path = tmp_path / "c.jsonl"
    write_capture(path, records)
    chunks = list(read_capture(path, chunk, implementation=impl))
    assert [len(c[1]) for c in chunks[:-1]] == [chunk] * (len(chunks) - 1) and 0 < len(chunks[-1][1]) <= chunk
    assert [r for c in chunks for r in zip(*c)] == records
    arrow = list(read_capture(path, chunk, arrow=True, implementation=impl))
    assert [[a.to_pylist() for a in c] for c in arrow] == [list(c) for c in chunks]
    assert [a.type for a in arrow[0]] == TYPES


def test_a_bad_line_in_a_later_block_names_its_line(tmp_path, impl, monkeypatch):
    monkeypatch.setattr(capture, "BLOCK_BYTES", 500)
    lines = [json.dumps({"payload": "x" * 80, "offset": i}).encode() for i in range(40)]
    lines[33] = b'{"payload": "unterminated}'
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ValueError) as info:
        for _ in read_capture(path, 5, implementation=impl):
            pass
    assert str(info.value) == f"{path}:34: not a kcat -J record (malformed JSON)"


# ------------------------------------------------------------------------------------ CLI
@pytest.fixture(scope="module")
def open_messages():
    return OpenEncoder().encode(realistic_changefeed(1500, seed=8))


@pytest.mark.parametrize("batch_size", ["3", "50000"])
@pytest.mark.parametrize("typed", [False, True])
def test_cli_two_threads_write_what_one_thread_writes_from_many_blocks(tmp_path, impl, open_messages,
                                                                       monkeypatch, capfd, batch_size, typed):
    monkeypatch.setattr(capture, "BLOCK_BYTES", 2000)          # a block of a few lines each
    cap = tmp_path / "in.jsonl"
    write_capture(cap, [(k, v, 2, 100 + i) for i, (k, v) in enumerate(open_messages)], topic="t")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"{jobs}.parquet"
        table = ["--table", "shop.orders"] if typed else []
        assert main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(out), "--jobs", jobs,
                     "--batch-size", batch_size, "--implementation", impl, *table]) == 0
        outs.append(pq.read_table(out))
    one, two = outs
    assert two.equals(one)
    assert one.num_rows >= 1500
    if typed:           # the schema of the first --batch-size messages, whatever the blocks
        from ticdc_fast.arrow_types import infer_open_schema
        head = open_messages[:int(batch_size)]
        want = infer_open_schema([k for k, _ in head], [v for _, v in head], table="shop.orders",
                                 compression="none", spark=True)
        assert [f for f in one.schema if not f.name.startswith("_")] == list(want)
        return
    want = ticdc_fast.OpenDecoder().decode([k for k, _ in open_messages], [v for _, v in open_messages],
                                           partitions=[2] * len(open_messages),
                                           offsets=list(range(100, 100 + len(open_messages))))
    assert one.to_pylist() == pa.Table.from_batches([want]).to_pylist()
    out = capfd.readouterr().out
    assert f"{len(open_messages):,} messages" in out and "summed over 2 threads" in out


def test_cli_bad_capture_line_stops_both_ways_with_its_line_number(tmp_path, impl, open_messages,
                                                                  monkeypatch, capfd):
    monkeypatch.setattr(capture, "BLOCK_BYTES", 2000)
    cap = tmp_path / "in.jsonl"
    write_capture(cap, [(k, v, 0, i) for i, (k, v) in enumerate(open_messages)], topic="t")
    lines = cap.read_bytes().splitlines(keepends=True)
    lines[70] = b'{"payload": 12}\n'
    cap.write_bytes(b"".join(lines))
    for jobs in ("1", "2"):
        rc = main(["decode", "--protocol", "open", "--input", str(cap), "-o", str(tmp_path / "o.parquet"),
                   "--jobs", jobs, "--implementation", impl])
        assert rc == 1
        err = capfd.readouterr().err
        assert f"{cap}:71: not a kcat -J record (payload is not a string or null)" in err
        assert "no output written" in err
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


# ------------------------------------------------------------------------------------ fuzz
FUZZ_SCRIPT = r"""
import random, sys
from ticdc_fast.capture import parse_block
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

def result(block, impl):
    try:
        return [c.to_pylist() for c in parse_block(block, 1, "f", impl)]
    except ValueError as exc:
        return str(exc)

rnd = random.Random(int(sys.argv[1]))
seeds = [b'{"topic": "t", "partition": 1, "offset": 2, "key": "\\u00e9\xff", "payload": "a\\"b\\\\c\\ud83d\\ude00", "x": [1, -2.5e3, {"y": null}]}',
         b'{"value": "\\u0000\\u001f", "key": null, "partition": -3}']
msgs = OpenEncoder().encode(realistic_changefeed(20, seed=1))
import json
for k, v in msgs[:3]:
    seeds.append(json.dumps({"key": k.decode("latin-1"), "payload": v.decode("latin-1")}, ensure_ascii=False).encode("latin-1"))
alphabet = b'{}[]",:\\u0123456789abcdefABCDEF.eE+-ntrfl \t\r\x00\x1f\x7f\x80\xc3\xa9\xed\xff'
for i in range(int(sys.argv[2])):
    line = bytearray(rnd.choice(seeds))
    for _ in range(rnd.randrange(1, 6)):
        op = rnd.randrange(4)
        at = rnd.randrange(len(line) + 1)
        if op == 0 and line:
            del line[at:at + rnd.randrange(1, 4)]
        elif op == 1:
            line[at:at] = bytes(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 4)))
        elif op == 2:
            del line[at:]
        else:
            line[at:at] = rnd.choice([b"\\u", b"\\ud800", b"\\udc00", b"[" * 30, b"1e999", b'"', b"\\"])
    block = bytes(line)
    a, b = result(block, "cython"), result(block, "python")
    if a != b:
        print("MISMATCH", repr(block), a, b)
        sys.exit(1)
print("ok")
"""


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_block_parser_fuzz_agrees_with_the_twin_and_never_crashes():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", FUZZ_SCRIPT, "13", "4000"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("number, finite", [
    ("1.797693134862315807e308", True), ("1.797693134862315808e308", False),
    ("17976931348623158" + "0" * 292, True), ("17976931348623159" + "0" * 292, False),
    ("1" + "0" * 308, True), ("2" + "0" * 308, False), ("0.00000001e316", True), ("-1e-99999", True)])
def test_numbers_at_the_edge_of_double_are_judged_as_orjson_judges_them(impl, number, finite):
    got = agree(b'{"ts": %s, "payload": "p"}' % number.encode(), impl)
    assert got == ([[None], [b"p"], [0], [0]] if finite else "cap.jsonl:1: not a kcat -J record (malformed JSON)")
