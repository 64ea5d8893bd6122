"""Claim-check resolution (protocols.md §0, §A.6, §B.5): the Open and Simple decoders replace a
claim-check event by the full event read from its file, through ``fsspec_resolver`` from local
files and from an S3-compatible server (moto, started here on 127.0.0.1)."""
from __future__ import annotations

import base64
import logging
import pickle
import random
import socket

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast import _impl
from ticdc_fast.claim_check import _ByteLRU, file_name
from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable
from ticdc_fast.testing.open_encoder import DDL, Col, OpenEncoder, Resolved, RowChange, claim_check_file, make_tso

from conftest import frame, plain_rows, row_event

FLAVORS = ("tiflow", "ticdc")
COMPRESSIONS = ("none", "snappy", "lz4")
T0 = 1_700_000_000_000
LIMIT = 1500                       # max-message-bytes: a 1 KiB random BLOB goes to a claim-check file
KEY = Col("id", C.T_LONGLONG, 0, C.FLAG_HANDLE_KEY | C.FLAG_PRIMARY_KEY | C.FLAG_BINARY)
TYPED_SCHEMA = pa.schema([("id", pa.int64()), ("b", pa.binary()), ("n", pa.string())])


def _row(i: int, big: bool, rnd: random.Random) -> list:
    blob = rnd.randbytes(1024 if big else 8)     # random: still too large once compressed
    return [Col("id", C.T_LONGLONG, i, KEY.flags), Col("b", C.T_BLOB, blob, C.FLAG_BINARY | C.FLAG_NULLABLE),
            Col("n", C.T_VARCHAR, f"row {i}", C.FLAG_NULLABLE)]


def _events():
    """Small and large rows (insert, update, delete) mixed with a DDL and a resolved event."""
    rnd = random.Random(7)
    ts = iter(make_tso(T0 + k) for k in range(100))
    return [RowChange("db", "t", next(ts), after=_row(1, False, rnd), row_id=1),
            RowChange("db", "t", next(ts), after=_row(2, True, rnd), row_id=2),
            RowChange("db", "t", next(ts), after=_row(3, False, rnd), row_id=3),
            RowChange("db", "t", next(ts), after=_row(2, True, rnd), before=_row(2, True, rnd), row_id=2),
            RowChange("db", "other", next(ts), after=_row(9, True, rnd), row_id=9),
            DDL("db", "t", next(ts), "ALTER TABLE t ADD COLUMN z INT", 5),
            RowChange("db", "t", next(ts), before=_row(3, True, rnd), row_id=3),
            Resolved(next(ts)),
            RowChange("db", "t", next(ts), after=_row(4, False, rnd), row_id=4)]


def _encode(flavor, compression, uri="s3://bucket/cc"):
    enc = OpenEncoder(flavor, max_batch_size=4, max_message_bytes=LIMIT, compression=compression,
                      large_message_handle="claim-check", claim_check_storage_uri=uri)
    msgs = enc.encode(_events())
    assert len(enc.claim_check_files) == 4
    return [k for k, _ in msgs], [v for _, v in msgs], enc.claim_check_files


def _expected(flavor, compression, impl, **kw):
    """What the events decode to when no message is too large (no claim-check at all)."""
    msgs = OpenEncoder(flavor, max_batch_size=4, compression=compression).encode(_events())
    return ticdc_fast.OpenDecoder(compression=compression, implementation=impl, **kw).decode(
        [k for k, _ in msgs], [v for _, v in msgs])


def _write(files, directory):
    for name, content in files.items():
        (directory / name).write_bytes(content)


def _other(impl):
    return "python" if impl == "cython" else "cython"


class CountingResolver:
    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __call__(self, location):
        self.calls.append(location)
        return self.inner(location)


# --------------------------------------------------------------------------- S3 (moto server)
@pytest.fixture(scope="session")
def s3():
    """An S3-compatible server on 127.0.0.1 and the storage options that reach it."""
    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options = {"key": "testing", "secret": "testing",
               "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}
    import boto3
    import s3fs
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    for bucket in ("bucket", "mirror", "simple"):
        client.create_bucket(Bucket=bucket)
    fs = s3fs.S3FileSystem(**options)
    try:
        yield fs, options
    finally:
        server.stop()


def _upload(fs, files, prefix):
    for name, content in files.items():
        fs.pipe_file(f"{prefix}/{name}", content)


# --------------------------------------------------------------------------- open: round trips
@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_open_generic_round_trip_local(flavor, compression, impl, tmp_path):
    keys, values, files = _encode(flavor, compression, uri=f"file://{tmp_path}")
    _write(files, tmp_path)
    offsets = [100 + i for i in range(len(keys))]
    partitions = [3] * len(keys)

    plain = ticdc_fast.OpenDecoder(compression=compression, implementation=impl).decode(
        keys, values, partitions=partitions, offsets=offsets)
    marked = plain.column("_claim_check_location").to_pylist()
    assert sorted(loc.rsplit("/", 1)[1] for loc in marked if loc) == sorted(files)
    assert all(loc.startswith(f"file://{tmp_path}/") for loc in marked if loc)

    resolver = CountingResolver(ticdc_fast.fsspec_resolver())
    dec = ticdc_fast.OpenDecoder(compression=compression, implementation=impl, claim_check_resolver=resolver)
    got = dec.decode(keys, values, partitions=partitions, offsets=offsets)
    assert sorted(resolver.calls) == sorted(loc for loc in marked if loc)   # only claim-check events
    want = _expected(flavor, compression, impl)
    assert got.drop_columns(["_partition", "_offset"]).equals(want)
    # row for row: each row keeps the Kafka position of the message that carried it
    assert got.column("_offset").equals(plain.column("_offset"))
    assert got.column("_partition").to_pylist() == [3] * got.num_rows
    assert got.column("_claim_check_location").null_count == got.num_rows
    rows = plain_rows(got)
    big = [r for r in rows if r["_op"] in ("INSERT", "UPDATE") and r["_table"] == "t" and r["after"]["id"] == "2"]
    assert len(base64.b64decode(big[0]["after"]["b"])) == 1024

    # Arrow input, and the other implementation, give the same batch
    arrow = dec.decode(pa.array(keys, pa.binary()), pa.array(values, pa.large_binary()),
                       partitions=partitions, offsets=offsets)
    assert arrow.equals(got)
    if not _impl.PURE_FORCED:
        twin = ticdc_fast.OpenDecoder(compression=compression, implementation=_other(impl),
                                      claim_check_resolver=ticdc_fast.fsspec_resolver())
        assert twin.decode(keys, values, partitions=partitions, offsets=offsets).equals(got)


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_open_typed_round_trip_local_path(flavor, compression, impl, tmp_path):
    keys, values, files = _encode(flavor, compression)            # locations: s3://bucket/cc/...
    _write(files, tmp_path)
    kw = dict(table="db.t", schema=TYPED_SCHEMA)
    dec = ticdc_fast.OpenDecoder(implementation=impl, compression=compression,
                                 claim_check_resolver=ticdc_fast.fsspec_resolver(str(tmp_path)), **kw)
    got = dec.decode(keys, values, offsets=list(range(len(keys))))
    want = _expected(flavor, compression, impl, **kw)
    assert got.drop_columns(["_offset"]).equals(want)
    rows = got.to_pylist()
    assert [(r["_op"], r["id"]) for r in rows] == [
        ("INSERT", 1), ("INSERT", 2), ("INSERT", 3), ("UPDATE", 2), ("DDL", None), ("DELETE", 3),
        ("RESOLVED", None), ("INSERT", 4)]
    assert len(rows[1]["b"]) == 1024 and rows[1]["n"] == "row 2"
    assert rows[5]["n"] == "row 3" and len(rows[5]["b"]) == 1024   # a DELETE's values: its old image
    plain = ticdc_fast.OpenDecoder(implementation=impl, compression=compression, **kw).decode(
        keys, values, offsets=list(range(len(keys))))
    assert got.column("_offset").equals(plain.column("_offset"))
    assert [r["b"] for r in plain.to_pylist()][1] is None               # only the handle key without a resolver
    if not _impl.PURE_FORCED:
        twin = ticdc_fast.OpenDecoder(implementation=_other(impl), compression=compression,
                                      claim_check_resolver=ticdc_fast.local_claim_check(tmp_path), **kw)
        assert twin.decode(keys, values, offsets=list(range(len(keys)))).equals(got)


@pytest.mark.parametrize("flavor,compression", [("tiflow", "lz4"), ("ticdc", "snappy"), ("ticdc", "none")])
def test_open_round_trip_s3(flavor, compression, impl, s3):
    fs, options = s3
    keys, values, files = _encode(flavor, compression, uri=f"s3://bucket/{flavor}-{compression}")
    _upload(fs, files, f"bucket/{flavor}-{compression}")
    resolver = ticdc_fast.fsspec_resolver(storage_options=options)
    for kw in ({}, {"table": "db.t", "schema": TYPED_SCHEMA}):
        got = ticdc_fast.OpenDecoder(compression=compression, implementation=impl, claim_check_resolver=resolver,
                                     **kw).decode(keys, values)
        assert got.equals(_expected(flavor, compression, impl, **kw))
    assert len(resolver.cache) == 4


def test_open_base_reroots_locations(impl, s3):
    """``base=``: the file name is read from another storage URI (a mirror bucket)."""
    fs, options = s3
    keys, values, files = _encode("ticdc", "none", uri="s3://production-bucket/claim-check/")
    _upload(fs, files, "mirror/copy")
    resolver = CountingResolver(ticdc_fast.fsspec_resolver("s3://mirror/copy/", storage_options=options))
    got = ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=resolver).decode(keys, values)
    assert got.equals(_expected("ticdc", "none", impl))
    assert all(loc.startswith("s3://production-bucket/claim-check/") for loc in resolver.calls)


def test_open_claim_check_alone_in_a_message_and_inside_a_batch(impl, tmp_path):
    """A tiflow claim-check event may travel alone (older tiflow) or among other events (ticdc,
    tiflow since v7.5): each output row keeps its message's offset."""
    rnd = random.Random(1)
    events = [RowChange("db", "t", make_tso(T0 + i), after=_row(i, i in (1, 2), rnd)) for i in range(4)]
    for flavor, n_messages in (("tiflow", 4), ("ticdc", 1)):
        enc = OpenEncoder(flavor, max_message_bytes=LIMIT, large_message_handle="claim-check")
        msgs = enc.encode(events)
        assert len(msgs) == n_messages
        _write(enc.claim_check_files, tmp_path)
        dec = ticdc_fast.OpenDecoder(implementation=impl,
                                     claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path))
        rows = plain_rows(dec.decode([k for k, _ in msgs], [v for _, v in msgs], offsets=[50 + i for i in range(n_messages)]))
        assert [(r["after"]["id"], r["_offset"]) for r in rows] == [
            (str(i), 50 + (i if n_messages == 4 else 0)) for i in range(4)]
        assert [len(base64.b64decode(r["after"]["b"])) for r in rows] == [8, 1024, 1024, 8]


def test_open_batch_without_claim_check_never_calls_the_resolver(impl):
    msgs = OpenEncoder("ticdc").encode([RowChange("db", "t", 5, after=[Col("id", C.T_LONG, 1, 11)])])
    resolver = CountingResolver(lambda loc: pytest.fail("resolver called"))
    rows = ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=resolver).decode(
        [msgs[0][0]], [msgs[0][1]]).to_pylist()
    assert rows[0]["_op"] == "INSERT" and resolver.calls == []


# --------------------------------------------------------------------------- open: errors
def _one_claim_check(tmp_path, flavor="ticdc"):
    keys, values, files = _encode(flavor, "none", uri=f"file://{tmp_path}")
    return keys, values, files


def test_open_missing_file_is_unavailable(impl, tmp_path):
    keys, values, files = _one_claim_check(tmp_path)
    dec = ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=ticdc_fast.fsspec_resolver())
    with pytest.raises(ticdc_fast.UnavailableError) as ei:
        dec.decode(keys, values, partitions=[0] * len(keys), offsets=[70 + i for i in range(len(keys))])
    exc = ei.value
    assert exc.location.startswith(f"file://{tmp_path}/") and exc.location.endswith(".json")
    assert exc.location in str(exc) and "could not be read" in str(exc)
    assert exc.message_index == 0 and (exc.partition, exc.offset) == (0, 70)
    assert isinstance(exc, ticdc_fast.DecodeError)
    again = pickle.loads(pickle.dumps(exc))
    assert again.location == exc.location and str(again) == str(exc)


def test_open_resolver_failures(impl, tmp_path):
    keys, values, _ = _one_claim_check(tmp_path)

    def refuse(loc):
        raise PermissionError(13, "Access Denied")

    for resolver, kind, text in ((refuse, ticdc_fast.UnavailableError, "PermissionError"),
                                 (lambda loc: None, ticdc_fast.UnavailableError, "not bytes"),
                                 (lambda loc: (_ for _ in ()).throw(TimeoutError("slow")),
                                  ticdc_fast.UnavailableError, "TimeoutError")):
        with pytest.raises(kind) as ei:
            ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=resolver).decode(keys, values)
        assert text in str(ei.value) and ei.value.location.startswith("file://")
        assert ei.value.message_index == 0


def _wrapped_event(key_json: bytes, value_json: bytes) -> bytes:
    u = lambda n: n.to_bytes(8, "big")  # noqa: E731
    return claim_check_file(u(1) + u(len(key_json)) + key_json, u(len(value_json)) + value_json)


def test_open_bad_file_content_is_a_decode_error(impl, tmp_path):
    key, value = frame([row_event({"id": {"t": 8, "h": True, "f": 11, "v": 5}}, ts=9, ohk=True,
                                  ccl="s3://bucket/cc/f.json")])
    good_key = b'{"ts":9,"scm":"db","tbl":"t","t":1}'
    good_value = b'{"u":{"id":{"t":8,"h":true,"f":11,"v":5},"n":{"t":15,"f":64,"v":"full"}}}'
    bad = {
        b"not json at all": "is not JSON",
        b"[1,2]": "is not a JSON object",
        b'{"key":null,"value":null}': "has no event key",
        b'{"key":"@@@","value":"AAAA"}': "not valid base64",
        b'{"key":1,"value":"AAAA"}': "not a base64 string",
        claim_check_file(b"\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\xff{}", b"\0" * 8): "exceeds",
        _wrapped_event(good_key, b'{"u":{"id":{"t":999,"f":11,"v":5}}}'): "unknown column type",
        _wrapped_event(b'{"ts":8,"scm":"db","tbl":"t","t":1}', good_value): "_commit_ts is 8",
        _wrapped_event(b'{"ts":9,"scm":"db","tbl":"u","t":1}', good_value): "_table is 'u'",
        _wrapped_event(b'{"ts":9,"scm":"db","tbl":"t","t":2}', b'{"q":"DROP TABLE t","t":4}'): "DDL event",
        _wrapped_event(b'{"ts":9,"scm":"db","tbl":"t","t":1,"ccl":"s3://x/y.json"}', good_value): "not the full",
    }
    for content, text in bad.items():
        (tmp_path / "f.json").write_bytes(content)
        dec = ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path,
                                                                                                       cache_entries=0))
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode([key], [value], offsets=[44])
        exc = ei.value
        assert not isinstance(exc, ticdc_fast.UnavailableError), content
        assert "s3://bucket/cc/f.json" in str(exc) and text in str(exc), (content, str(exc))
        assert exc.message_index == 0 and exc.offset == 44
    # the good file decodes
    (tmp_path / "f.json").write_bytes(_wrapped_event(good_key, good_value))
    for kw in ({}, {"table": "db.t", "schema": pa.schema([("id", pa.int64()), ("n", pa.string())])}):
        rows = plain_rows(ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=ticdc_fast.fsspec_resolver(
            tmp_path), **kw).decode([key], [value]))
        assert rows[0].get("n", (rows[0].get("after") or {}).get("n")) == "full"


def test_open_typed_file_of_another_table(impl, tmp_path):
    key, value = frame([row_event({"id": {"t": 8, "h": True, "f": 11, "v": 5}}, ts=9, ccl="s3://b/f.json")])
    (tmp_path / "f.json").write_bytes(_wrapped_event(b'{"ts":9,"scm":"db","tbl":"u","t":1}',
                                                     b'{"u":{"id":{"t":8,"f":11,"v":5}}}'))
    dec = ticdc_fast.OpenDecoder(table="db.t", schema=pa.schema([("id", pa.int64())]), implementation=impl,
                                 claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path))
    with pytest.raises(ticdc_fast.DecodeError, match="holds no row event of db.t"):
        dec.decode([key], [value])


def test_open_bad_location_is_a_decode_error(impl, tmp_path):
    key, value = frame([row_event({"id": {"t": 8, "h": True, "f": 11, "v": 5}}, ts=9, ccl="s3://bucket/..")])
    dec = ticdc_fast.OpenDecoder(implementation=impl, claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path))
    with pytest.raises(ticdc_fast.DecodeError, match="names no file") as ei:
        dec.decode([key], [value])
    assert not isinstance(ei.value, ticdc_fast.UnavailableError)


# --------------------------------------------------------------------------- the resolver itself
def test_fsspec_resolver_location_forms(tmp_path):
    (tmp_path / "a.json").write_bytes(b"A")
    read = ticdc_fast.fsspec_resolver()
    assert read(str(tmp_path / "a.json")) == b"A"
    assert read(f"file://{tmp_path}/a.json") == b"A"
    assert read(f"file:///{tmp_path}/a.json") == b"A"        # TiCDC's local storage: "file:///" + base
    rooted = ticdc_fast.fsspec_resolver(f"file://{tmp_path}")
    assert rooted("s3://elsewhere/prefix/a.json") == b"A"
    assert ticdc_fast.local_claim_check(tmp_path)("gcs://x/y/a.json") == b"A"
    with pytest.raises(ticdc_fast.UnavailableError) as ei:
        rooted("s3://elsewhere/prefix/b.json")
    assert ei.value.location == "s3://elsewhere/prefix/b.json" and str(tmp_path / "b.json") in str(ei.value)
    with pytest.raises(ticdc_fast.UnavailableError, match="ftpx"):
        read("ftpx://nowhere/a.json")                         # no such fsspec backend
    for bad in ("", "s3://b/..", "s3://b/."):
        with pytest.raises(ticdc_fast.DecodeError):
            rooted(bad)


def test_fsspec_resolver_cache(tmp_path):
    for name in "abc":
        (tmp_path / f"{name}.json").write_bytes(name.encode() * 10)
    read = ticdc_fast.fsspec_resolver(tmp_path, cache_bytes=25, cache_entries=5)
    assert read("x/a.json") == b"a" * 10
    (tmp_path / "a.json").unlink()
    assert read("x/a.json") == b"a" * 10                       # from the cache
    read("x/b.json")
    read("x/a.json")                                          # a is now the most recent
    read("x/c.json")                                          # 30 bytes > 25: b goes
    assert len(read.cache) == 2 and read.cache.bytes == 20
    (tmp_path / "b.json").unlink()
    with pytest.raises(ticdc_fast.UnavailableError):
        read("x/b.json")
    lru = _ByteLRU(100, 2)
    for k in "xyz":
        lru.put(k, b"1")
    assert lru.get("x") is None and lru.get("z") == b"1" and len(lru) == 2
    lru.put("big", b"1" * 101)                                # larger than the bound: not kept
    assert lru.get("big") is None
    assert file_name("s3://b/p/u.json") == "u.json" and file_name("u.json") == "u.json"


def test_fsspec_resolver_pickles_for_spark(tmp_path):
    from pyspark import cloudpickle   # what Spark ships the decode options to workers with
    (tmp_path / "a.json").write_bytes(b"A")
    read = ticdc_fast.fsspec_resolver(tmp_path, storage_options={"auto_mkdir": False}, cache_bytes=10)
    read("x/a.json")
    for dumps in (pickle.dumps, cloudpickle.dumps):
        copy = pickle.loads(dumps(read))
        assert copy("y/a.json") == b"A" and copy.base == str(tmp_path) and copy.cache.max_bytes == 10
        assert copy.storage_options == {"auto_mkdir": False}
    dec = ticdc_fast.OpenDecoder(claim_check_resolver=read)
    assert pickle.loads(cloudpickle.dumps(dec.claim_check_resolver))("z/a.json") == b"A"


# --------------------------------------------------------------------------- simple protocol
def _simple_claim_check(uri):
    rnd = random.Random(3)
    t = SimpleTable("db", "big", 12, make_tso(T0 - 1000), [
        SimpleColumn("id", "bigint", nullable=False), SimpleColumn("v", "varchar", length=5000)])
    r1, r2 = {"id": 7, "v": rnd.randbytes(1500).hex()}, {"id": 7, "v": rnd.randbytes(1500).hex()}
    events = [SimpleBootstrap(t), SimpleDML(t, "INSERT", make_tso(T0 + 1), data=r1),
              SimpleDML(t, "UPDATE", make_tso(T0 + 2), data=r2, old=r1),
              SimpleDML(t, "DELETE", make_tso(T0 + 3), old=r2),
              SimpleDML(t, "INSERT", make_tso(T0 + 4), data={"id": 8, "v": "small"})]
    enc = SimpleEncoder("json", "ticdc", "none", max_message_bytes=1200, large_message_handle="claim-check",
                        claim_check_storage_uri=uri)
    values = [v for _, v in enc.encode(events)]
    assert len(enc.claim_check_files) == 3
    return values, enc.claim_check_files, r1


def test_simple_round_trip_s3(impl, s3):
    fs, options = s3
    values, files, r1 = _simple_claim_check("s3://simple/cc")
    _upload(fs, files, "simple/cc")
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl,
                                   claim_check_resolver=ticdc_fast.fsspec_resolver(storage_options=options))
    rows = plain_rows(dec.decode(None, values, offsets=list(range(len(values)))))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT", "UPDATE", "DELETE", "INSERT"]
    assert [r["_offset"] for r in rows] == [0, 1, 2, 3, 4]
    assert all(r["_claim_check_location"] is None for r in rows)
    assert rows[1]["after"]["v"] == r1["v"]


def test_simple_missing_and_bad_files(impl, tmp_path):
    values, files, _ = _simple_claim_check("s3://simple/cc")
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl,
                                   claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path, cache_entries=0))
    with pytest.raises(ticdc_fast.UnavailableError) as ei:
        dec.decode(None, values, partitions=[2] * len(values), offsets=[10, 11, 12, 13, 14])
    assert ei.value.message_index == 1 and (ei.value.partition, ei.value.offset) == (2, 11)
    assert ei.value.location.startswith("s3://simple/cc/") and ei.value.location in str(ei.value)
    for name in files:
        (tmp_path / name).write_bytes(b'{"key":null,"value":"bm90IGEgbWVzc2FnZQ=="}')   # "not a message"
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl,
                                   claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path, cache_entries=0))
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, values)
    assert not isinstance(ei.value, ticdc_fast.UnavailableError)
    assert "s3://simple/cc/" in str(ei.value) and ei.value.message_index == 1


def test_simple_dml_in_file_of_wrong_kind(impl, tmp_path):
    values, files, _ = _simple_claim_check("s3://simple/cc")
    bootstrap = values[0]
    for name in files:
        (tmp_path / name).write_bytes(claim_check_file(None, bootstrap))
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl,
                                   claim_check_resolver=ticdc_fast.fsspec_resolver(tmp_path))
    with pytest.raises(ticdc_fast.DecodeError, match="does not hold the full DML event"):
        dec.decode(None, values)
