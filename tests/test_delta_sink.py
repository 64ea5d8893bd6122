"""The Delta sink (ticdc_fast.delta_sink, delta_sync) with real Delta tables (deltalake) on disk and
on an S3 server (moto on 127.0.0.1), the decoders of both implementations, and a real broker: the
tables read back equal the state folded independently from the whole topic (tests/delta_streams.py),
whatever the chunking, restarts and replays; a second run commits nothing."""
from __future__ import annotations

import socket

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import delta_streams as S
from ticdc_fast.delta_sink import DeltaSink, SchemaChangeStop, ddl_kind, fold_scd1
from ticdc_fast.delta_sync import discover, sync
from ticdc_fast.testing import LocalSchemaRegistry


@pytest.fixture(scope="module")
def registry():
    with LocalSchemaRegistry() as reg:
        yield reg


def _chunks(msgs, n):
    for i in range(0, len(msgs), n):
        part = msgs[i:i + n]
        yield [m[0] for m in part], [m[1] for m in part], [m[2] for m in part], [m[3] for m in part]


def _stream(protocol, registry):
    evs = S.events(raw_key_change=protocol != "avro")      # the Avro protocol carries no old image
    return evs, S.with_offsets(S.encode(protocol, evs, registry.url))


def _run(protocol, msgs, root, registry, impl=None, chunk=7, upto=None, storage_options=None, **kw):
    opts = {} if impl is None else {"implementation": impl}
    if protocol == "avro":
        opts["registry"] = registry.url
    tables, parts = discover(protocol, _chunks(msgs, chunk), opts)
    head = msgs if upto is None else msgs[:upto]
    return sync(protocol, _chunks(head, chunk), root, tables=tables, partitions=[0, 1], topic="tidb",
                decoder_options=opts, storage_options=storage_options, **kw)


def _uri(root, table):
    return f"{root}/{table.replace('.', '/')}"


def _live(root, table, storage_options=None) -> dict:
    rows = DeltaTable(_uri(root, table), storage_options=storage_options).to_pyarrow_table().to_pylist()
    return {r["id"]: {"id": r["id"], "name": r["name"], "note": r.get("note")} for r in rows if not r["_deleted"]}


def _everything(root, table) -> list:
    rows = DeltaTable(_uri(root, table)).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: sorted((k, str(v)) for k, v in r.items()))


def _versions(root):
    return {t: DeltaTable(_uri(root, t)).version() for t in S.TABLES}


@pytest.mark.parametrize("protocol", S.PROTOCOLS)
def test_every_protocol_ends_in_the_folded_state(tmp_path, protocol, impl, registry):
    evs, msgs = _stream(protocol, registry)
    root = str(tmp_path / "lake")
    summary = _run(protocol, msgs, root, registry, impl)
    expected = S.expected_state(evs)
    assert expected["db.t"] == {1: {"id": 1, "name": "a3", "note": "n1"}, 3: {"id": 3, "name": "b", "note": None},
                                4: {"id": 4, "name": "d2", "note": None}}   # the fold itself, spelled out
    for table in S.TABLES:
        assert _live(root, table) == expected[table], table
    assert summary.waiting == 1                                  # INSERT 9 [800]: past the resolved ts
    meta = DeltaTable(_uri(root, "db.t")).history(1)[0]
    assert meta["ticdc_fast.resolved_ts"] == str(S.LAST_RESOLVED)
    # a second run over the same input commits nothing
    before = _versions(root)
    again = _run(protocol, msgs, root, registry, impl)
    assert again.commits == 0 and again.rows_applied == 0
    assert _versions(root) == before


@pytest.mark.parametrize("protocol", ["open", "simple-json"])
def test_a_restart_after_any_step_ends_as_one_run(tmp_path, protocol, registry):
    evs, msgs = _stream(protocol, registry)
    whole = str(tmp_path / "whole")
    _run(protocol, msgs, whole, registry, chunk=3)
    for stop in (4, 10, 17, 25, 31):
        root = str(tmp_path / f"stopped{stop}")
        _run(protocol, msgs, root, registry, chunk=3, upto=stop)       # the run that died there
        _run(protocol, msgs, root, registry, chunk=5)                   # restarted, other chunks
        for table in S.TABLES:
            assert _everything(root, table) == _everything(whole, table), (stop, table)


def test_replays_and_reordering_within_one_batch(tmp_path):
    """One step holding everything in another order: the same state (tombstones included)."""
    evs = S.events()
    msgs = S.with_offsets(S.encode_open(evs))
    root = str(tmp_path / "lake")
    _run("open", msgs[::-1], root, None, chunk=len(msgs))
    assert {t: _live(root, t) for t in S.TABLES} == S.expected_state(evs)


def test_fold_orders_a_split_update_delete_first_and_keeps_tombstones():
    rows = pa.table({"_op": ["INSERT", "DELETE", "INSERT", "DELETE"], "_commit_ts": [20, 20, 10, 30],
                     "id": [1, 1, 2, 2], "name": ["new", "old", "b", "b"],
                     "_partition": pa.array([0, 0, 1, 0], pa.int32()), "_offset": [5, 4, 0, 9]})
    out = sorted(fold_scd1(rows, ["id"]).to_pylist(), key=lambda r: r["id"])
    assert out == [{"id": 1, "name": "new", "_commit_ts": 20, "_deleted": False},
                   {"id": 2, "name": "b", "_commit_ts": 30, "_deleted": True}]


def test_scd2_keeps_every_version_once(tmp_path, registry):
    evs, msgs = _stream("open", registry)
    root = str(tmp_path / "lake")
    _run("open", msgs, root, registry, scd=2)
    _run("open", msgs, root, registry, scd=2, chunk=2)           # replayed whole: nothing new
    rows = DeltaTable(_uri(root, "db.t")).to_pyarrow_table().to_pylist()
    hist = sorted((r["id"], r["_valid_from"], r["_valid_to"], r["_current"], r["_deleted"], r["name"])
                  for r in rows)
    assert hist == [(1, 100, 200, False, False, "a"), (1, 200, 460, False, False, "a2"),
                    (1, 460, None, True, False, "a3"),
                    (2, 100, 300, False, False, "b"), (2, 300, None, False, True, "b"),
                    (3, 300, None, True, False, "b"),
                    (4, 450, 650, False, False, "d"), (4, 650, None, True, False, "d2")]
    current = {r["id"] for r in rows if r["_current"]}
    assert current == set(S.expected_state(evs)["db.t"])
    u = DeltaTable(_uri(root, "db.u")).to_pyarrow_table().to_pylist()
    assert [(r["id"], r["_valid_from"], r["_current"]) for r in u] == [(7, 560, True)]   # TRUNCATE [550]


def test_schema_change_fail_stops_at_the_ddl_and_another_mode_goes_on(tmp_path, registry):
    evs, msgs = _stream("simple-json", registry)
    root = str(tmp_path / "lake")
    with pytest.raises(SchemaChangeStop) as info:
        _run("simple-json", msgs, root, registry, schema_change="fail")
    exc = info.value
    assert (exc.table, exc.commit_ts, exc.query) == ("db.t", S.ADD_TS, "ALTER TABLE t ADD COLUMN note VARCHAR(20)")
    assert exc.partition in (0, 1) and exc.offset > 0
    before = S.expected_state(evs, upto=S.ADD_TS - 1)["db.t"]
    assert _live(root, "db.t") == before
    _run("simple-json", msgs, root, registry, schema_change="evolve")
    assert _live(root, "db.t") == S.expected_state(evs)["db.t"]


def test_schema_change_ignore_keeps_the_first_columns(tmp_path, registry):
    evs, msgs = _stream("open", registry)
    root = str(tmp_path / "lake")
    _run("open", msgs, root, registry, schema_change="ignore")
    dt = DeltaTable(_uri(root, "db.t"))
    assert "note" not in pa.schema(dt.schema().to_arrow()).names
    got = {r["id"]: r["name"] for r in dt.to_pyarrow_table().to_pylist() if not r["_deleted"]}
    assert got == {k: v["name"] for k, v in S.expected_state(evs)["db.t"].items()}


def test_as_they_come_applies_past_the_resolved_ts(tmp_path, registry):
    evs, msgs = _stream("open", registry)
    root = str(tmp_path / "lake")
    _run("open", msgs, root, registry, consistent=False, upto=12)           # killed there
    summary = _run("open", msgs, root, registry, consistent=False)
    assert summary.waiting == 0
    for table in S.TABLES:
        assert _live(root, table) == S.expected_state(evs, upto=10**6)[table]   # TRUNCATE too
    assert 9 in _live(root, "db.t")
    with pytest.raises(ValueError, match="as they come"):
        _run("open", msgs, root, registry)


def test_ddl_kinds():
    assert ddl_kind("TRUNCATE TABLE `u`") == "truncate"
    assert ddl_kind("ALTER TABLE t ADD COLUMN c INT") == "columns"
    assert ddl_kind("alter table t drop c") == "columns"
    assert ddl_kind("ALTER TABLE t MODIFY COLUMN c BIGINT") == "columns"
    assert ddl_kind("ALTER TABLE t ADD INDEX i (c)") == "other"
    assert ddl_kind("CREATE TABLE t (id INT)") == "other"


def test_options_not_understood_are_errors(tmp_path):
    with pytest.raises(ValueError, match="scd"):
        DeltaSink(str(tmp_path), keys={"db.t": ["id"]}, partitions=1, scd=3)
    with pytest.raises(ValueError, match="schema_change"):
        DeltaSink(str(tmp_path), keys={"db.t": ["id"]}, partitions=1, schema_change="merge")
    sink = DeltaSink(str(tmp_path), keys={"db.t": ["id"]}, partitions=1)
    batch = pa.table({"_op": ["INSERT"], "_commit_ts": [1], "id": [1]})
    with pytest.raises(ValueError, match="_partition"):
        sink.write({"db.t": batch}, offsets={0: 1})
    with pytest.raises(ValueError, match="outside"):
        sink.write({}, offsets={5: 1})
    with pytest.raises(ValueError, match="no key"):
        sink.write({"db.x": batch.append_column("_partition", pa.array([0], pa.int32()))
                    .append_column("_offset", pa.array([0]))}, offsets={0: 1})


# --------------------------------------------------------------------------- S3 (moto server)
@pytest.fixture(scope="module")
def s3_delta():
    """moto's S3 server in a process of its own: delta-rs holds the GIL while it waits for the
    server, so a server thread in this process could not answer."""
    import subprocess
    import sys
    import time
    import urllib.request
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto's S3 server did not start")
                time.sleep(0.1)
        import boto3
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                     aws_secret_access_key="testing").create_bucket(Bucket="lake")
        yield {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true", "AWS_CONDITIONAL_PUT": "etag"}
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_tables_on_s3(s3_delta, registry):
    evs, msgs = _stream("simple-avro", registry)
    root = "s3://lake/tidb"
    _run("simple-avro", msgs, root, registry, chunk=9, upto=20, storage_options=s3_delta)
    _run("simple-avro", msgs, root, registry, chunk=9, storage_options=s3_delta)
    for table in S.TABLES:
        assert _live(root, table, s3_delta) == S.expected_state(evs)[table]
    version = DeltaTable(_uri(root, "db.t"), storage_options=s3_delta).version()
    assert _run("simple-avro", msgs, root, registry, storage_options=s3_delta).commits == 0
    assert DeltaTable(_uri(root, "db.t"), storage_options=s3_delta).version() == version


# --------------------------------------------------------------------------- a real broker
def test_from_a_real_broker(kafka, tmp_path, registry):
    from ticdc_fast.kafka_io import consume_all
    evs, msgs = _stream("avro", registry)
    topic = "delta-sink-avro"
    kafka.create_topic(topic, partitions=2)
    kafka.produce(topic, [(k, v, p) for k, v, p, _ in msgs])
    opts = {"registry": registry.url}
    tables, parts = discover("avro", consume_all(kafka.bootstrap_servers, topic, chunk=8), opts)
    root = str(tmp_path / "lake")
    sync("avro", consume_all(kafka.bootstrap_servers, topic, chunk=8), root, tables=tables, partitions=parts,
         topic=topic, decoder_options=opts)
    for table in S.TABLES:
        assert _live(root, table) == S.expected_state(evs)[table]


def test_read_back_with_duckdb(tmp_path, registry):
    """The docs' DuckDB form: the table's Arrow dataset, live rows only."""
    import duckdb
    evs, msgs = _stream("open", registry)
    root = str(tmp_path / "lake")
    _run("open", msgs, root, registry)
    orders = DeltaTable(_uri(root, "db.t")).to_pyarrow_dataset()      # noqa: F841 - read by duckdb
    got = duckdb.sql("SELECT id, name, note FROM orders WHERE NOT _deleted ORDER BY id").fetchall()
    assert got == [(k, v["name"], v["note"]) for k, v in sorted(S.expected_state(evs)["db.t"].items())]
