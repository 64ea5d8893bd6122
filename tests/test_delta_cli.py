"""``ticdc-fast sync``: real processes into real Delta tables.  Killed with SIGKILL at several points
and started again, it ends with the tables of one uninterrupted run; Ctrl-C stops it cleanly; a
second run over the same input commits nothing (no table's version moves)."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from deltalake import DeltaTable

import delta_streams as S
from ticdc_fast import _impl
from ticdc_fast.capture import write_capture
from ticdc_fast.testing import OpenEncoder, realistic_changefeed
from ticdc_fast.testing.open_encoder import DDL, Resolved

TABLES = ("shop.orders", "shop.users", "shop.items")
PARTITIONS = 3


def _capture(path, n_rows=8_000 if _impl.PURE_FORCED else 40_000, seed=5):
    """A three-table changefeed on three partitions (a table per partition, as TiCDC's default
    dispatcher; RESOLVED and DDL broadcast to all), one event per message."""
    events = realistic_changefeed(n_rows, seed=seed, tables=TABLES, resolved_every=400)
    enc = OpenEncoder(max_batch_size=1)
    offsets = [0] * PARTITIONS
    records = []
    for ev in events:
        parts = range(PARTITIONS) if isinstance(ev, (Resolved, DDL)) else [TABLES.index(f"{ev.schema}.{ev.table}")]
        (k, v), = enc.encode([ev])
        for p in parts:
            records.append((k, v, p, offsets[p]))
            offsets[p] += 1
    write_capture(str(path), records, topic="tidb-shop")
    return path


def _sync_cmd(capture, root, *more):
    return [sys.executable, "-m", "ticdc_fast", "sync", "--protocol", "open", "--input", str(capture),
            "--topic", "tidb-shop", "--delta", str(root), "--batch-size", "700", *more]


def _run(capture, root, *more):
    out = subprocess.run(_sync_cmd(capture, root, *more), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _tables(root):
    out = {}
    for t in TABLES:
        rows = DeltaTable(f"{root}/{t.replace('.', '/')}").to_pyarrow_table().to_pylist()
        out[t] = sorted(rows, key=lambda r: r["id"])
    return out


def _versions(root):
    return {t: DeltaTable(f"{root}/{t.replace('.', '/')}").version() for t in TABLES}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    base = tmp_path_factory.mktemp("shop")
    capture = _capture(base / "capture.jsonl")
    whole = base / "whole"
    summary = _run(capture, whole)
    assert summary["commits"] > 10 and summary["waiting"] == 0
    return capture, whole


def _commits(root):
    """Commits in every table's Delta log so far."""
    return sum(len(list((root / t.replace(".", "/") / "_delta_log").glob("*.json"))) for t in TABLES)


def _kill_point(proc, root, first, rnd):
    """Wait for the moment to kill a run: the first run a random moment into its start (the
    first pass, the first commits); later ones a random moment after their first new commit
    (inside the next step's decode, fold or commit), so a faster build or machine cannot finish
    every run before it is killed."""
    if first:
        time.sleep(rnd.uniform(0.5, 2.0))
        return
    start, deadline = _commits(root), time.monotonic() + 120
    while proc.poll() is None and _commits(root) <= start and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(rnd.uniform(0.0, 0.4))


@pytest.mark.slow
def test_sigkill_at_several_points_then_restart_equals_one_run(shop, tmp_path):
    capture, whole = shop
    root = tmp_path / "killed"
    rnd = random.Random(41)
    kills = 0
    for attempt in range(8):
        if kills >= 4:
            break
        proc = subprocess.Popen(_sync_cmd(capture, root, "--quiet"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _kill_point(proc, root, attempt == 0, rnd)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
    assert kills >= 3, "the runs ended before they could be killed: give them more work"
    _run(capture, root)
    assert _tables(root) == _tables(whole)
    before = _versions(root)
    again = _run(capture, root)
    assert again["commits"] == 0 and again["rows_applied"] == 0
    assert _versions(root) == before


@pytest.mark.slow
def test_ctrl_c_stops_between_steps_and_a_rerun_goes_on(shop, tmp_path):
    capture, whole = shop
    root = tmp_path / "stopped"
    proc = subprocess.Popen(_sync_cmd(capture, root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(root / "shop" / "orders" / "_delta_log") and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run ended before Ctrl-C reached it")   # pragma: no cover - timing
    assert proc.returncode == 130, err[-2000:]
    assert "stopped by Ctrl-C" in out and json.loads(out.strip().splitlines()[-1])["stopped"] is True
    _run(capture, root)
    assert _tables(root) == _tables(whole)


def test_second_run_commits_nothing_and_says_so(shop):
    capture, whole = shop
    before = _versions(whole)
    out = subprocess.run(_sync_cmd(capture, whole), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "0 changes applied in 0 commits" in out.stdout
    assert "sync:" in out.stderr                       # progress lines
    assert _versions(whole) == before


def test_scd2_and_a_key_given_on_the_command_line(tmp_path):
    evs = S.events()
    records = S.with_offsets(S.encode_open(evs))
    capture = tmp_path / "c.jsonl"
    write_capture(str(capture), records, topic="t")
    root = tmp_path / "lake"
    cmd = [sys.executable, "-m", "ticdc_fast", "sync", "--protocol", "open", "--input", str(capture),
           "--delta", str(root), "--scd", "2", "--key", "db.t=id", "--table", "db.t", "-q"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = DeltaTable(f"{root}/db/t").to_pyarrow_table().to_pylist()
    assert {r["id"] for r in rows if r["_current"]} == set(S.expected_state(evs)["db.t"])
    assert not (root / "db" / "u").exists()


def test_schema_change_fail_exits_4_naming_the_ddl(tmp_path):
    records = S.with_offsets(S.encode_open(S.events()))
    capture = tmp_path / "c.jsonl"
    write_capture(str(capture), records, topic="t")
    cmd = [sys.executable, "-m", "ticdc_fast", "sync", "--protocol", "open", "--input", str(capture),
           "--delta", str(tmp_path / "lake"), "--schema-change", "fail", "-q"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 4
    assert "ADD COLUMN note" in out.stderr and "commit ts 400" in out.stderr


def test_bad_options_are_usage_errors(tmp_path):
    for extra in (["--scd", "3"], ["--schema-change", "merge"], ["--apply", "later"]):
        out = subprocess.run([sys.executable, "-m", "ticdc_fast", "sync", "--protocol", "open", "--input", "x",
                              "--delta", str(tmp_path), *extra], capture_output=True, text=True)
        assert out.returncode == 2 and "invalid choice" in out.stderr
    out = subprocess.run([sys.executable, "-m", "ticdc_fast", "sync", "--protocol", "open",
                          "--delta", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode != 0 and "--input" in out.stderr


def test_sync_from_a_real_broker(kafka, tmp_path):
    evs = S.events()
    topic = "delta-cli-open"
    kafka.create_topic(topic, partitions=2)
    kafka.produce(topic, S.encode_open(evs))
    root = tmp_path / "lake"
    cmd = [sys.executable, "-m", "ticdc_fast", "sync", "--protocol", "open", "--bootstrap", kafka.bootstrap_servers,
           "--topic", topic, "--delta", str(root), "--partitions", "2", "--batch-size", "6", "-q"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    for table in S.TABLES:
        rows = DeltaTable(f"{root}/{table.replace('.', '/')}").to_pyarrow_table().to_pylist()
        got = {r["id"]: {"id": r["id"], "name": r["name"], "note": r.get("note")} for r in rows if not r["_deleted"]}
        assert got == S.expected_state(evs)[table]
