"""The ``ticdc-fast`` command when things go wrong, run as a user runs it (a real process, a real
broker): an unreachable broker or an unknown topic is one line and exit status 1 within a bound
``--kafka-timeout`` sets, with no librdkafka log on the terminal and no output file; a missing
output directory is named before anything is read; Ctrl-C is one line and exit status 130 with no
partial file; outputs follow the umask; ``--on-error skip|dead_letter`` leave malformed capture
lines out, counted, with their line numbers."""
from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

import ticdc_fast
from ticdc_fast.capture import read_capture, write_capture
from ticdc_fast.cli import main
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

CLI = [sys.executable, "-m", "ticdc_fast"]
ENV = dict(os.environ, TICDC_FAST_NO_PROGRESS="1")


@pytest.fixture(scope="module")
def messages():
    return OpenEncoder().encode(realistic_changefeed(300, seed=11))


def _run(args, cwd, timeout=60, umask=None, env=None):
    t0 = time.monotonic()
    res = subprocess.run(CLI + args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                         env=env or ENV, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
    return res, time.monotonic() - t0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _capture(path, messages, lines=None):
    write_capture(path, [(k, v, 0, i) for i, (k, v) in enumerate(messages)], topic="tidb-open")
    return path


@pytest.mark.parametrize("command", ["capture", "decode"])
def test_a_broker_that_refuses_is_one_line_exit_1_no_file(tmp_path, command):
    port = _closed_port()
    args = [command, "--bootstrap", f"127.0.0.1:{port}", "--topic", "tidb-open", "-o", "out.x"]
    if command == "decode":
        args += ["--protocol", "open"]
    res, seconds = _run(args, tmp_path)
    assert res.returncode == 1 and seconds < 15
    assert res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"error: cannot reach Kafka at 127.0.0.1:{port}: ")
    assert "Connection refused" in line and line.endswith("(no output written: out.x not created)")
    assert os.listdir(tmp_path) == []


def test_a_broker_that_never_answers_gives_up_after_kafka_timeout(tmp_path):
    with socket.socket() as silent:     # accepts connections (the kernel does) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        res, seconds = _run(["capture", "--bootstrap", f"127.0.0.1:{port}", "--topic", "t", "-o", "c.jsonl",
                             "--kafka-timeout", "2"], tmp_path)
    assert res.returncode == 1 and 2 <= seconds < 15
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"error: cannot reach Kafka at 127.0.0.1:{port}: ")
    assert os.listdir(tmp_path) == []


def test_kafka_timeout_must_be_a_positive_number(tmp_path):
    res, _ = _run(["capture", "--bootstrap", "127.0.0.1:1", "--topic", "t", "-o", "c", "--kafka-timeout", "0"],
                  tmp_path)
    assert res.returncode == 2 and "--kafka-timeout: must be a positive number of seconds, not '0'" in res.stderr


@pytest.mark.parametrize("command", ["capture", "decode"])
def test_an_unknown_topic_is_one_line_exit_1_no_file(kafka, tmp_path, command):
    args = [command, "--bootstrap", kafka.bootstrap_servers, "--topic", "no-such-topic", "-o", "out.x"]
    if command == "decode":
        args += ["--protocol", "open"]
    res, seconds = _run(args, tmp_path)
    assert res.returncode == 1 and seconds < 15
    assert res.stderr.splitlines() == [f"error: topic 'no-such-topic' not found on {kafka.bootstrap_servers} "
                                       "(no output written: out.x not created)"]
    assert os.listdir(tmp_path) == []


def test_capture_writes_the_topic_with_the_umask_mode(kafka, tmp_path, messages):
    kafka.create_topic("cli-capture-mode", partitions=1)
    kafka.produce("cli-capture-mode", messages[:20])
    res, _ = _run(["capture", "--bootstrap", kafka.bootstrap_servers, "--topic", "cli-capture-mode",
                   "-o", "c.jsonl"], tmp_path, umask=0o027)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "20 messages → c.jsonl\n"
    assert stat.S_IMODE(os.stat(tmp_path / "c.jsonl").st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl"]
    (keys, values, parts, offs), = read_capture(tmp_path / "c.jsonl")
    assert list(zip(keys, values)) == messages[:20] and offs == list(range(20))


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_decode_output_follows_the_umask(tmp_path, messages, umask, mode):
    _capture(tmp_path / "in.jsonl", messages[:50])
    res, _ = _run(["decode", "--protocol", "open", "--input", "in.jsonl", "-o", "out.parquet"], tmp_path,
                  umask=umask)
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "out.parquet").st_mode) == mode


@pytest.mark.parametrize("command", ["capture", "decode"])
def test_a_missing_output_directory_is_named_before_anything_is_read(tmp_path, command):
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)          # opening it to read would block: the check must come first
    out = tmp_path / "missing" / "out.x"
    args = [command, "--bootstrap", "127.0.0.1:1", "--topic", "t"] if command == "capture" else \
        ["decode", "--protocol", "open", "--input", str(fifo)]
    res, seconds = _run(args + ["-o", str(out)], tmp_path, timeout=30)
    assert res.returncode == 1 and seconds < 15
    assert res.stderr.splitlines() == [f"error: the output directory {tmp_path / 'missing'} does not exist "
                                       f"(for {out}); nothing was read"]
    assert os.listdir(tmp_path) == ["never-written"]


def test_ctrl_c_is_one_line_exit_130_and_no_partial_file(tmp_path, messages):
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.Popen(CLI + ["decode", "--protocol", "open", "--input", "in.jsonl", "-o", "out.parquet",
                                   "--batch-size", "50"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    write_capture(tmp_path / "whole.jsonl", [(k, v, 0, i) for i, (k, v) in enumerate(messages[:100])])
    lines = (tmp_path / "whole.jsonl").read_bytes()
    os.unlink(tmp_path / "whole.jsonl")
    writer = open(fifo, "wb")       # the command reads what is there, then waits for more
    try:
        writer.write(lines)
        writer.flush()
        deadline = time.monotonic() + 60
        while not any(n.endswith(".partial") for n in os.listdir(tmp_path)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        writer.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.splitlines() == ["interrupted: ticdc-fast decode stopped "
                                "(no output written: out.parquet not created)"]
    assert os.listdir(tmp_path) == ["in.jsonl"]


def _with_bad_lines(path, messages, bad_at):
    """A capture whose lines ``bad_at`` (1-based) are not kcat -J records; returns the good messages
    with their offsets."""
    write_capture(path, [(k, v, 0, i) for i, (k, v) in enumerate(messages)])
    records = path.read_bytes().splitlines()
    good, out = [], []
    msgs = iter(zip(enumerate(messages), records))
    lineno = 0
    while True:
        lineno += 1
        if lineno in bad_at:
            out.append(b'{"partition": 0, "offset": "x"}' if lineno % 2 else b'{"key": "k", "payl')
            continue
        try:
            (i, (k, v)), line = next(msgs)
        except StopIteration:
            break
        out.append(line)
        good.append((k, v, i))
    path.write_bytes(b"\n".join(out) + b"\n")
    return good


@pytest.mark.parametrize("policy", ["skip", "dead_letter"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_on_error_leaves_malformed_capture_lines_out_with_their_numbers(tmp_path, messages, impl, capfd,
                                                                       policy, jobs):
    good = _with_bad_lines(tmp_path / "in.jsonl", messages, {1, 3, 4, 12, len(messages) + 4})
    out = tmp_path / "out.parquet"
    assert main(["decode", "--protocol", "open", "--input", str(tmp_path / "in.jsonl"), "-o", str(out),
                 "--implementation", impl, "--on-error", policy, "--jobs", str(jobs), "--batch-size", "64"]) == 0
    want = ticdc_fast.OpenDecoder(implementation=impl, on_error=policy).decode(
        [k for k, _, _ in good], [v for _, v, _ in good], partitions=[0] * len(good), offsets=[o for *_, o in good])
    assert pq.read_table(out).to_pylist() == want.to_pylist()
    stdout = capfd.readouterr().out
    assert (f"malformed capture lines: 5 left out (--on-error {policy}; not Kafka messages, so no rows): "
            f"lines 1, 3, 4, 12, {len(messages) + 4}\n") in stdout
    assert "bad messages: 0 skipped, 0 dead-lettered" in stdout


def test_a_malformed_capture_line_fails_the_default_policy_naming_it(tmp_path, messages, impl, capfd, monkeypatch):
    monkeypatch.setenv("TICDC_FAST_NO_PROGRESS", "1")
    _with_bad_lines(tmp_path / "in.jsonl", messages, {7})
    out = tmp_path / "out.parquet"
    assert main(["decode", "--protocol", "open", "--input", str(tmp_path / "in.jsonl"), "-o", str(out),
                 "--implementation", impl]) == 1
    (line,) = capfd.readouterr().err.splitlines()
    assert line == (f"error: {tmp_path / 'in.jsonl'}:7: not a kcat -J record (offset is not a 64-bit integer) "
                    f"(no output written: {out} not created)")
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_ctrl_c_while_capture_waits_for_a_broker_is_one_line_exit_130_no_file(tmp_path):
    with socket.socket() as silent:     # accepts connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        proc = subprocess.Popen(CLI + ["capture", "--bootstrap", f"127.0.0.1:{port}", "--topic", "t",
                                       "-o", "c.jsonl", "--kafka-timeout", "60"],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        try:
            deadline = time.monotonic() + 60
            while not any(n.endswith(".partial") for n in os.listdir(tmp_path)):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130 and out == ""
    assert err.splitlines() == ["interrupted: ticdc-fast capture stopped (no output written: c.jsonl not created)"]
    assert os.listdir(tmp_path) == []


def test_librdkafka_lines_go_to_the_debug_logger_and_the_error_is_raised_once(caplog):
    import logging

    from ticdc_fast.kafka_io import KafkaUnreachableError, consume_all

    port = _closed_port()
    caplog.set_level(logging.DEBUG, logger="ticdc_fast.kafka")
    t0 = time.monotonic()
    with pytest.raises(KafkaUnreachableError, match=rf"^cannot reach Kafka at 127\.0\.0\.1:{port}: .*Connection refused"):
        list(consume_all(f"127.0.0.1:{port}", "t", timeout=5))
    assert time.monotonic() - t0 < 5
    records = [r for r in caplog.records if r.name == "ticdc_fast.kafka"]
    assert records and {r.levelno for r in records} == {logging.DEBUG}
    assert any("Connection refused" in r.getMessage() for r in records)


def test_an_output_that_is_a_directory_or_cannot_be_written_is_named_first(tmp_path, messages):
    _capture(tmp_path / "in.jsonl", messages[:5])
    (tmp_path / "taken").mkdir()
    res, _ = _run(["decode", "--protocol", "open", "--input", "in.jsonl", "-o", "taken"], tmp_path)
    assert res.returncode == 1
    assert res.stderr.splitlines() == ["error: the output taken is a directory; nothing was read"]
    # /sys: a directory no one can create files in (root neither), as a read-only or foreign one
    res, _ = _run(["decode", "--protocol", "open", "--input", "in.jsonl", "-o", "/sys/out.parquet"], tmp_path)
    assert res.returncode == 1
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: cannot write in the output directory /sys: ") and line.endswith("; nothing was read")
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "taken"]
