"""``ticdc-fast broker`` and ``ticdc-fast registry``: a real local broker and schema registry in
the foreground, that serve real clients and leave nothing running after SIGTERM or Ctrl-C; and a
script using ``LocalKafkaBroker`` that is ended by a signal takes its Tansu child with it."""
from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ticdc_fast.kafka_io import consume_all
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "ticdc_fast"]


def _start(args):
    proc = subprocess.Popen(CLI + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + 60
    while True:
        line = proc.stdout.readline()
        assert line, (lines, proc.stderr.read())
        lines.append(line.rstrip("\n"))
        if "stop it with Ctrl-C or SIGTERM" in line:
            return proc, lines
        assert time.monotonic() < deadline


def _processes_with(needle: str) -> list[int]:
    """Pids of the processes whose command line holds ``needle``."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if needle in cmd:
                out.append(int(d.name))
    return out


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return False
    except ConnectionRefusedError:
        return True


def _gone(needle: str, port: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _processes_with(needle) and _refused(port):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_broker_serves_a_produce_and_consume_and_leaves_nothing_after_a_signal(sig):
    proc, lines = _start(["broker", "--port", "0", "--topic", "tidb-open", "--example-rows", "100"])
    try:
        port = int(re.fullmatch(r"Kafka-compatible broker \(Tansu, memory storage\) on 127\.0\.0\.1:(\d+)",
                                lines[0]).group(1))
        bootstrap = f"127.0.0.1:{port}"
        example = OpenEncoder().encode(realistic_changefeed(100, seed=1))
        assert lines[1:] == [
            f"  topic tidb-open: 1 partition, {len(example)} open-protocol messages (100 row changes of "
            "shop.orders and shop.users, partition 0)",
            f"  connect: bootstrap servers {bootstrap} (--bootstrap, kafka.bootstrap.servers, consume_all)",
            "  stop it with Ctrl-C or SIGTERM (memory storage: its topics go with it)"]
        from confluent_kafka import Producer
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        producer.produce("tidb-open", key=b"k", value=b"one more", partition=0)
        assert producer.flush(30) == 0
        del producer
        chunks = list(consume_all(bootstrap, "tidb-open"))
        keys = [k for c in chunks for k in c[0]]
        values = [v for c in chunks for v in c[1]]
        assert list(zip(keys, values)) == example + [(b"k", b"one more")]
        assert len(_processes_with(f"tcp://127.0.0.1:{port}")) == 1     # Tansu, the command's child
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == "broker stopped\n" and err == ""
    assert _gone(f"tcp://127.0.0.1:{port}", port)


def test_registry_serves_a_schema_lookup_and_leaves_nothing_after_sigterm():
    proc, lines = _start(["registry", "--port", "0"])
    try:
        url = re.fullmatch(r"schema registry \(Confluent REST API, in memory\) on (http://127\.0\.0\.1:\d+)",
                           lines[0]).group(1)
        assert lines[1:] == [f"  connect: registry {url} (--registry, AvroDecoder(registry), AvroEncoder(registry))",
                             "  stop it with Ctrl-C or SIGTERM (in memory: its schemas go with it)"]
        schema = {"type": "record", "name": "t", "fields": [{"name": "id", "type": "long"}]}
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
        client = SchemaRegistryClient({"url": url})
        sid = client.register_schema("db-t-value", Schema(json.dumps(schema), "AVRO"))
        with urllib.request.urlopen(f"{url}/schemas/ids/{sid}", timeout=10) as resp:
            assert json.loads(json.loads(resp.read())["schema"]) == schema
        assert client.get_latest_version("db-t-value").schema_id == sid
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and out == "schema registry stopped\n" and err == ""
    assert _refused(int(url.rsplit(":", 1)[1]))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_script_ended_by_a_signal_takes_its_tansu_child_with_it(tmp_path, sig):
    script = tmp_path / "uses_broker.py"
    script.write_text("import time\n"
                      "from ticdc_fast.testing.broker import LocalKafkaBroker\n"
                      "broker = LocalKafkaBroker().start()\n"
                      "print(broker.port, flush=True)\n"
                      "time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        assert len(_processes_with(f"tcp://127.0.0.1:{port}")) == 1 and not _refused(port)
    finally:
        proc.send_signal(sig)
        proc.wait(30)
    assert proc.returncode == -sig
    assert _gone(f"tcp://127.0.0.1:{port}", port)


def test_broker_on_a_port_in_use_is_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        res = subprocess.run(CLI + ["broker", "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: the broker did not start: ")


def test_the_readme_broker_command_runs_as_written():
    """The README's command (on a free port instead of 9092, which may be taken here)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (command,) = re.findall(r"`\.venv/bin/ticdc-fast (broker [^`]*)`", readme)
    assert command == "broker --topic tidb-open --example-rows 1000"
    proc, lines = _start(command.split() + ["--port", "0"])
    try:
        bootstrap = lines[0].rsplit(" ", 1)[1]
        assert lines[1].startswith("  topic tidb-open: 1 partition, ")
        messages = [m for chunk in consume_all(bootstrap, "tidb-open") for m in zip(chunk[0], chunk[1])]
        assert messages == OpenEncoder().encode(realistic_changefeed(1000, seed=1))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
