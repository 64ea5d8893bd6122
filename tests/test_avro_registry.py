"""Avro protocol against a real Confluent-compatible Schema Registry over HTTP (no mocks).

Messages here are produced by confluent-kafka's own ``AvroSerializer`` through
``SchemaRegistryClient`` — a producer we did not write — with TiCDC-shaped writer schemas
(``connect.parameters.tidb_type``, nullable unions in both branch orders, ``_tidb_op`` /
``_tidb_commit_ts``), and decoded with ``ticdc_fast.AvroDecoder(reg.url)``.

The decoder caches writer schemas per process, keyed by (registry URL, id)
(``ticdc_fast/avro/registry.py``), so every test uses a fresh ``LocalSchemaRegistry`` on a
loopback address of its own (``fresh_registry``), hence a URL no earlier registry had.
"""
from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
from decimal import Decimal

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.testing import LocalSchemaRegistry

_ser = pytest.importorskip("confluent_kafka.serialization")
SerializationContext, MessageField = _ser.SerializationContext, _ser.MessageField
SchemaRegistryClient = pytest.importorskip("confluent_kafka.schema_registry").SchemaRegistryClient
AvroSerializer = pytest.importorskip("confluent_kafka.schema_registry.avro").AvroSerializer

TOPIC = "shop.orders"
UTC = dt.timezone.utc
_HOSTS = itertools.count()


def fresh_registry(**kw) -> LocalSchemaRegistry:
    """A registry at a URL no other registry of this process had.  The decoder caches writer
    schemas per process by (URL, id); a port alone can be reused by the OS once a registry has
    stopped, and a stale cache entry would then decode with another registry's schema.  So each
    registry gets its own loopback address (127.83.x.y)."""
    n = next(_HOSTS)
    return LocalSchemaRegistry(host=f"127.83.{n // 250}.{n % 250 + 1}", **kw)



# --------------------------------------------------------------------------- TiCDC-shaped schemas
def _t(avro, tidb, **params):
    p = {"tidb_type": tidb}
    p.update(params)
    return {"type": avro, "connect.parameters": p}


def _dec(p, s):
    return {"type": "bytes", "connect.parameters": {"tidb_type": "DECIMAL"}, "logicalType": "decimal",
            "precision": p, "scale": s}


_EXT = [{"default": "", "name": "_tidb_op", "type": "string"},
        {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
        {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"}]

_COLS_V1 = [
    {"name": "id", "type": _t("long", "BIGINT")},
    {"default": None, "name": "customer_id", "type": ["null", _t("long", "INT UNSIGNED")]},
    {"name": "amount", "type": _dec(12, 2)},
    {"default": None, "name": "big", "type": ["null", _t("long", "BIGINT UNSIGNED")]},
    {"default": "n/a", "name": "note", "type": [_t("string", "TEXT"), "null"]},     # [T,"null"]
    {"default": "new", "name": "status", "type": _t("string", "ENUM", allowed="new,paid\\,ok")},
    {"name": "created", "type": _t("string", "DATETIME")},
    {"name": "ts", "type": _t("string", "TIMESTAMP")},
    {"default": None, "name": "payload", "type": ["null", _t("bytes", "BLOB")]},
    {"default": None, "name": "price", "type": ["null", _t("double", "DOUBLE")]},
    {"default": 0.0, "name": "weight", "type": _t("float", "FLOAT")},  # fastavro refuses Go's 0
    {"name": "flags", "type": _t("bytes", "BIT", length="10")},
]
# ALTER TABLE ... ADD COLUMN region VARCHAR(16) NOT NULL DEFAULT 'eu': a new table version, a new
# schema version under the same subject, a new id
_COLS_V2 = _COLS_V1 + [{"default": "eu", "name": "region", "type": _t("string", "TEXT")}]


def _record(fields):
    return {"type": "record", "name": "orders", "namespace": "default.shop", "fields": fields}


VALUE_V1 = json.dumps(_record(_COLS_V1 + _EXT))
VALUE_V2 = json.dumps(_record(_COLS_V2 + _EXT))
KEY = json.dumps(_record([_COLS_V1[0]]))

TS0 = 449451550317215745


def _ts(i):
    return TS0 + (i << 18)


# rows as given to AvroSerializer (Avro values: BIGINT UNSIGNED in long mode is the wrapped int64)
ROW1 = {"id": 1, "customer_id": 4294967295, "amount": Decimal("-1.28"), "big": -1, "note": "hi ✓",
        "status": "paid,ok", "created": "2024-05-01 10:00:00.123456", "ts": "2024-05-01 18:00:00",
        "payload": b"\xff\x00\xfe", "price": 0.1, "weight": 1.5, "flags": b"\x03\xff"}
ROW2 = {"id": 2, "customer_id": None, "amount": Decimal("0.00"), "big": None, "note": None,
        "status": "new", "created": "0000-00-00 00:00:00", "ts": "2024-01-01 08:00:00",
        "payload": None, "price": None, "weight": -0.0, "flags": b"\x00"}
ROW1U = dict(ROW1, amount=Decimal("-327.68"), big=-(1 << 63), note="n/a", price=1e21, weight=3.25)
ROW3 = dict(ROW1, id=3, amount=Decimal("9999999999.99"), big=(1 << 63) - 1, region="apac")
ROW3U = dict(ROW3, region="eu", note="", status="new")


def _ext(row, op, i):
    return dict(row, _tidb_op=op, _tidb_commit_ts=_ts(i), _tidb_commit_physical_time=_ts(i) >> 18)


def _produce(reg_url: str):
    """The stream, encoded by confluent-kafka's AvroSerializer through the HTTP registry:
    inserts and an update with schema v1, a delete (tombstone: key only), ADD COLUMN (schema v2,
    a new id), an insert, a delete, an update.  Returns (keys, values)."""
    client = SchemaRegistryClient({"url": reg_url})
    vctx = SerializationContext(TOPIC, MessageField.VALUE)
    kctx = SerializationContext(TOPIC, MessageField.KEY)
    ks = AvroSerializer(client, KEY, conf={"auto.register.schemas": True})
    v1 = AvroSerializer(client, VALUE_V1, conf={"auto.register.schemas": True})
    v2 = AvroSerializer(client, VALUE_V2, conf={"auto.register.schemas": True})

    def key(i):
        return ks({"id": i}, kctx)

    msgs = [
        (key(1), v1(_ext(ROW1, "c", 0), vctx)),
        (key(2), v1(_ext(ROW2, "c", 0), vctx)),
        (key(1), v1(_ext(ROW1U, "u", 1), vctx)),
        (key(2), None),                                   # DELETE: tombstone
        (key(3), v2(_ext(ROW3, "c", 3), vctx)),           # after ADD COLUMN
        (key(1), None),                                   # DELETE: tombstone
        (key(3), v2(_ext(ROW3U, "u", 4), vctx)),
    ]
    return [k for k, _ in msgs], [v for _, v in msgs]


# --------------------------------------------------------------------------- expectations
def _text(row):
    """Generic text of a row above (what TiCDC's consumer contract says it means)."""
    big = row["big"]
    out = {
        "id": str(row["id"]),
        "customer_id": None if row["customer_id"] is None else str(row["customer_id"]),
        "amount": format(row["amount"], "f"),
        "big": None if big is None else str(big & ((1 << 64) - 1)),
        "note": row["note"], "status": row["status"], "created": row["created"], "ts": row["ts"],
        "payload": None if row["payload"] is None else base64.b64encode(row["payload"]).decode(),
        "price": None if row["price"] is None else {0.1: "0.1", 1e21: "1e+21"}[row["price"]],
        "weight": {1.5: "1.5", 3.25: "3.25"}.get(row["weight"], "-0"),
        "flags": str(int.from_bytes(row["flags"], "big")),
    }
    if "region" in row:
        out["region"] = row["region"]
    return out


def _expected_generic(ids):
    k, v1, v2 = ids
    base = {"_schema": "shop", "_table": "orders", "_ddl": None, "_ddl_type": None, "_checksum": None,
            "_checksum_corrupted": None, "_checksum_version": None, "_key_schema_id": k}
    rows = [
        dict(base, _op="INSERT", _commit_ts=_ts(0), after=_text(ROW1), before=None, _key={"id": "1"}, _value_schema_id=v1),
        dict(base, _op="INSERT", _commit_ts=_ts(0), after=_text(ROW2), before=None, _key={"id": "2"}, _value_schema_id=v1),
        dict(base, _op="UPDATE", _commit_ts=_ts(1), after=_text(ROW1U), before=None, _key={"id": "1"}, _value_schema_id=v1),
        dict(base, _op="DELETE", _commit_ts=None, after=None, before={"id": "2"}, _key={"id": "2"}, _value_schema_id=None),
        dict(base, _op="INSERT", _commit_ts=_ts(3), after=_text(ROW3), before=None, _key={"id": "3"}, _value_schema_id=v2),
        dict(base, _op="DELETE", _commit_ts=None, after=None, before={"id": "1"}, _key={"id": "1"}, _value_schema_id=None),
        dict(base, _op="UPDATE", _commit_ts=_ts(4), after=_text(ROW3U), before=None, _key={"id": "3"}, _value_schema_id=v2),
    ]
    return rows


TARGET = pa.schema([
    ("id", pa.int64()), ("customer_id", pa.uint32()), ("amount", pa.decimal128(12, 2)),
    ("big", pa.uint64()), ("note", pa.string()), ("status", pa.string()),
    ("created", pa.timestamp("us")), ("ts", pa.timestamp("us", tz="UTC")), ("payload", pa.binary()),
    ("price", pa.float64()), ("weight", pa.float32()), ("flags", pa.uint16()), ("region", pa.string()),
])


def _typed(row):
    created = None if row["created"].startswith("0000") else dt.datetime(2024, 5, 1, 10, 0, 0, 123456)
    ts = {"2024-05-01 18:00:00": dt.datetime(2024, 5, 1, 10, 0, tzinfo=UTC),       # Asia/Shanghai
          "2024-01-01 08:00:00": dt.datetime(2024, 1, 1, 0, 0, tzinfo=UTC)}[row["ts"]]
    big = row["big"]
    return {"id": row["id"], "customer_id": row["customer_id"], "amount": row["amount"],
            "big": None if big is None else big & ((1 << 64) - 1), "note": row["note"],
            "status": row["status"], "created": created, "ts": ts, "payload": row["payload"],
            "price": row["price"], "weight": row["weight"], "flags": int.from_bytes(row["flags"], "big"),
            "region": row.get("region")}


_NULLS = {f.name: None for f in TARGET}


def _expected_typed(ids):
    _, v1, v2 = ids
    return [
        dict(_op="INSERT", _commit_ts=_ts(0), **_typed(ROW1), _ddl=None, _value_schema_id=v1),
        dict(_op="UPDATE", _commit_ts=_ts(1), **_typed(ROW1U), _ddl=None, _value_schema_id=v1),
        dict(_op="DELETE", _commit_ts=None, **dict(_NULLS, id=2), _ddl=None, _value_schema_id=None),
        dict(_op="INSERT", _commit_ts=_ts(3), **_typed(ROW3), _ddl=None, _value_schema_id=v2),
        dict(_op="DELETE", _commit_ts=None, **dict(_NULLS, id=1), _ddl=None, _value_schema_id=None),
        dict(_op="UPDATE", _commit_ts=_ts(4), **_typed(ROW3U), _ddl=None, _value_schema_id=v2),
    ]


def _as_dicts(batch):
    rows = batch.to_pylist()
    for r in rows:
        for m in ("after", "before", "_key"):
            if m in r and r[m] is not None:
                r[m] = dict(r[m])
    return rows


def _schema_ids(reg):
    key_ids = reg.subjects[f"{TOPIC}-key"]
    value_ids = reg.subjects[f"{TOPIC}-value"]
    assert len(key_ids) == 1 and len(value_ids) == 2 and len(set(value_ids)) == 2
    return key_ids[0], value_ids[0], value_ids[1]


def _id_fetches(reg):
    counts = {}
    for method, path in reg.requests:
        if method == "GET" and path.startswith("/schemas/ids/"):
            sid = int(path.split("/")[3])
            counts[sid] = counts.get(sid, 0) + 1
    return counts


@pytest.fixture
def reg():
    with fresh_registry() as r:
        yield r


# --------------------------------------------------------------------------- acceptance
def test_confluent_serializer_stream_with_add_column_and_tombstones(reg, impl):
    """THE acceptance test: a stream written by confluent-kafka's AvroSerializer through the HTTP
    registry, with an ADD COLUMN (new schema id) and tombstone deletes in the middle, decodes to
    the right rows, generic and typed."""
    keys, values = _produce(reg.url)
    ids = _schema_ids(reg)
    assert values[1][0] == 0 and int.from_bytes(values[1][1:5], "big") == ids[1]
    assert int.from_bytes(values[4][1:5], "big") == ids[2]
    # fastavro writes -128 / -32768 one byte longer than TiCDC's minimal form (spec §G.4):
    # amount -1.28 → unscaled -128 → ff80 (TiCDC: 80); -327.68 → ff8000 (TiCDC: 8000)
    assert b"\x04\xff\x80\x02" in values[0] and b"\x06\xff\x80\x00\x02" in values[2]

    generic = ticdc_fast.AvroDecoder(reg.url, implementation=impl)
    batch = generic.decode(keys, values, partitions=[0] * 7, offsets=list(range(100, 107)))
    assert batch.schema == generic.output_schema(partitions=True, offsets=True)
    got = _as_dicts(batch)
    want = _expected_generic(ids)
    for i, w in enumerate(want):
        w.update(_partition=0, _offset=100 + i)
    assert got == want

    typed = ticdc_fast.AvroDecoder(reg.url, implementation=impl, table="shop.orders", schema=TARGET,
                                   timezone="Asia/Shanghai")
    # ROW2 carries a zero DATETIME, which a timestamp column cannot hold exactly: drop message 1
    tb = typed.decode(keys[:1] + keys[2:], values[:1] + values[2:])
    assert tb.schema.names == ["_op", "_commit_ts"] + TARGET.names + ["_ddl", "_value_schema_id"]
    assert tb.schema.field("amount").type == pa.decimal128(12, 2)
    assert tb.to_pylist() == _expected_typed(ids)

    # the zero DATETIME is a DecodeError naming the message and column, not a wrong value
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        typed.decode(keys, values)
    assert ei.value.message_index == 1 and ei.value.column == "created"
    # ... and the decoder is reusable after it
    assert typed.decode(keys[3:4], values[3:4]).column("id").to_pylist() == [2]

    # the whole stream typed, with the zero DATETIME read as text
    as_text = TARGET.set(TARGET.get_field_index("created"), pa.field("created", pa.string()))
    whole = ticdc_fast.AvroDecoder(reg.url, implementation=impl, table="shop.orders", schema=as_text,
                                   timezone="Asia/Shanghai").decode(keys, values)
    want = _expected_typed(ids)
    for row, src in zip(want, [ROW1, ROW1U, None, ROW3, None, ROW3U]):
        row["created"] = None if src is None else src["created"]
    row2 = dict(_typed(dict(ROW2, created="2024-05-01 10:00:00.123456")), created="0000-00-00 00:00:00")
    want.insert(1, dict(_op="INSERT", _commit_ts=_ts(0), **row2, _ddl=None, _value_schema_id=ids[1]))
    assert whole.to_pylist() == want


def test_serializer_stream_in_small_batches_matches_one_batch(reg, impl):
    """Batch boundaries (one message per batch; schema change in its own batch) change nothing."""
    keys, values = _produce(reg.url)
    dec = ticdc_fast.AvroDecoder(reg.url, implementation=impl)
    whole = dec.decode(keys, values)
    parts = [dec.decode(keys[i:i + 1], values[i:i + 1]) for i in range(len(keys))]
    assert pa.Table.from_batches(parts).combine_chunks().to_batches()[0].equals(whole)
    assert [r["_op"] for r in whole.to_pylist()] == ["INSERT", "INSERT", "UPDATE", "DELETE", "INSERT",
                                                     "DELETE", "UPDATE"]


def test_implementations_agree_on_serializer_stream(reg):
    if _impl.PURE_FORCED:
        pytest.skip("TICDC_FAST_PURE=1: differential core-vs-twin test")
    keys, values = _produce(reg.url)
    for kw in ({}, {"table": "shop.orders", "schema": TARGET, "timezone": "Asia/Shanghai"}):
        k, v = (keys, values) if not kw else (keys[:1] + keys[2:], values[:1] + values[2:])
        a = ticdc_fast.AvroDecoder(reg.url, implementation="cython", **kw).decode(k, v)
        b = ticdc_fast.AvroDecoder(reg.url, implementation="python", **kw).decode(k, v)
        assert a.equals(b)


def test_serializer_without_extension_fields_is_upsert(reg, impl):
    """A plain Confluent producer (no _tidb_* fields): UPSERT with a null commit ts."""
    client = SchemaRegistryClient({"url": reg.url})
    schema = json.dumps(_record(_COLS_V1))
    ser = AvroSerializer(client, schema)
    kser = AvroSerializer(client, KEY)
    v = ser(ROW1, SerializationContext("plain", MessageField.VALUE))
    k = kser({"id": 1}, SerializationContext("plain", MessageField.KEY))
    row = ticdc_fast.AvroDecoder(reg.url, implementation=impl).decode([k, k], [v, None]).to_pylist()
    assert row[0]["_op"] == "UPSERT" and row[0]["_commit_ts"] is None
    assert dict(row[0]["after"]) == _text(ROW1)
    assert row[1]["_op"] == "DELETE" and dict(row[1]["before"]) == {"id": "1"}


# --------------------------------------------------------------------------- fetching
def test_each_schema_id_fetched_once_per_process(reg, impl):
    keys, values = _produce(reg.url)
    ids = _schema_ids(reg)
    assert _id_fetches(reg) == {}                          # the producer only POSTs
    d1 = ticdc_fast.AvroDecoder(reg.url, implementation=impl)
    for i in range(len(keys)):                             # many batches
        d1.decode(keys[i:], values[i:])
    assert _id_fetches(reg) == {sid: 1 for sid in ids}
    # another decoder (generic and typed) in the same process: no more fetches
    ticdc_fast.AvroDecoder(reg.url, implementation=impl).decode(keys, values)
    ticdc_fast.AvroDecoder({"url": reg.url}, implementation=impl, table="shop.orders",
                           schema=pa.schema([("id", pa.int64())])).decode(keys, values)
    assert _id_fetches(reg) == {sid: 1 for sid in ids}
    # and nothing needs the registry any more
    reg.down = True
    assert ticdc_fast.AvroDecoder(reg.url, implementation=impl).decode(keys, values).num_rows == 7


def test_only_the_ids_used_are_fetched(reg, impl):
    keys, values = _produce(reg.url)
    k, v1, v2 = _schema_ids(reg)
    ticdc_fast.AvroDecoder(reg.url, implementation=impl).decode(keys[:2], values[:2])
    assert _id_fetches(reg) == {k: 1, v1: 1}
    ticdc_fast.AvroDecoder(reg.url, implementation=impl).decode(keys[3:4], values[3:4])  # tombstone
    assert _id_fetches(reg) == {k: 1, v1: 1}


def test_failed_fetch_is_not_cached(reg, impl):
    keys, values = _produce(reg.url)
    dec = ticdc_fast.AvroDecoder({"url": reg.url, "max.retries": 0}, implementation=impl)
    reg.down = True
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(keys, values)
    reg.down = False
    assert [r["_op"] for r in dec.decode(keys, values).to_pylist()][:3] == ["INSERT", "INSERT", "UPDATE"]


def test_transient_5xx_is_retried(reg, impl):
    keys, values = _produce(reg.url)
    reg.fail_next = 1
    dec = ticdc_fast.AvroDecoder({"url": reg.url, "retries.wait.ms": 5, "retries.max.wait.ms": 10},
                                 implementation=impl)
    assert dec.decode(keys[:1], values[:1]).column("_op").to_pylist() == ["INSERT"]
    assert reg.fail_next == 0


# --------------------------------------------------------------------------- auth
def _one_message(reg_obj):
    """(key, value) of one row, registered in-process (the registry may require auth over HTTP)."""
    ks = reg_obj.register(f"{TOPIC}-key", KEY)
    vs = reg_obj.register(f"{TOPIC}-value", json.dumps(_record([_COLS_V1[0], _COLS_V1[4]] + _EXT)))
    key = b"\x00" + ks.to_bytes(4, "big") + b"\x0e"                       # id 7
    value = (b"\x00" + vs.to_bytes(4, "big") + b"\x0e" + b"\x00\x04ok"       # id 7, note "ok"
             + b"\x02c" + b"\x02" + b"\x00")                                 # "c", ts 1, pt 0
    return ks, vs, key, value


def test_basic_auth(impl):
    with fresh_registry(basic_auth=("alice", "s3cr3t-Pa55")) as reg:
        ks, vs, key, value = _one_message(reg)
        conf = {"url": reg.url, "basic.auth.user.info": "alice:s3cr3t-Pa55"}
        row = ticdc_fast.AvroDecoder(conf, implementation=impl).decode([key], [value]).to_pylist()[0]
        assert (row["_op"], row["_commit_ts"], dict(row["after"])) == ("INSERT", 1, {"id": "7", "note": "ok"})
        assert _id_fetches(reg) == {ks: 1, vs: 1}


def test_bearer_auth(impl):
    with fresh_registry(bearer_token="tok-XYZ-123") as reg:
        ks, vs, key, value = _one_message(reg)
        conf = {"url": reg.url, "bearer.auth.credentials.source": "STATIC_TOKEN",
                "bearer.auth.token": "tok-XYZ-123", "bearer.auth.logical.cluster": "lsrc-1"}
        row = ticdc_fast.AvroDecoder(conf, implementation=impl).decode([key], [value]).to_pylist()[0]
        assert dict(row["after"]) == {"id": "7", "note": "ok"} and dict(row["_key"]) == {"id": "7"}


@pytest.mark.parametrize("conf_kind", ["wrong-password", "no-credentials", "password-in-url"])
def test_wrong_credentials_error_names_id_and_url_not_password(impl, conf_kind):
    with fresh_registry(basic_auth=("alice", "s3cr3t-Pa55")) as reg:
        ks, vs, key, value = _one_message(reg)
        conf = {"wrong-password": {"url": reg.url, "basic.auth.user.info": "alice:Wr0ng-Pa55word"},
                "no-credentials": {"url": reg.url},
                "password-in-url": {"url": reg.url.replace("http://", "http://alice:Wr0ng-Pa55word@")},
                }[conf_kind]
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            ticdc_fast.AvroDecoder(conf, implementation=impl).decode([key], [value])
        msg = str(ei.value)
        assert f"schema id {ks}" in msg or f"schema id {vs}" in msg
        assert reg.url in msg and "401" in msg
        assert "Wr0ng" not in msg and "s3cr3t" not in msg and "alice:" not in msg
        assert ei.value.message_index == 0


def test_wrong_bearer_token_error(impl):
    with fresh_registry(bearer_token="tok-XYZ-123") as reg:
        ks, vs, key, value = _one_message(reg)
        conf = {"url": reg.url, "bearer.auth.credentials.source": "STATIC_TOKEN",
                "bearer.auth.token": "tok-bad-999", "bearer.auth.logical.cluster": "lsrc-1",
                "bearer.auth.identity.pool.id": "pool-1"}
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            ticdc_fast.AvroDecoder(conf, implementation=impl).decode([key], [value])
        msg = str(ei.value)
        assert f"schema id {ks}" in msg and reg.url in msg and "tok-bad-999" not in msg


# --------------------------------------------------------------------------- failures
def test_registry_down_is_decode_error_naming_id_and_url(reg, impl):
    ks, vs, key, value = _one_message(reg)
    good_key, good_value = key, value
    reg.down = True
    dec = ticdc_fast.AvroDecoder({"url": reg.url, "max.retries": 0}, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([None, good_key], [b"\x02" + (5).to_bytes(8, "big"), good_value])
    assert ei.value.message_index == 1
    assert f"schema id {ks}" in str(ei.value) and reg.url in str(ei.value)
    assert ("GET", f"/schemas/ids/{ks}") in reg.requests


def test_registry_unreachable_is_decode_error(impl):
    gone = fresh_registry().start()
    url = gone.url
    gone.stop()
    dec = ticdc_fast.AvroDecoder({"url": url, "max.retries": 0, "timeout": 2}, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([None], [b"\x00\x00\x00\x00\x2a\x02"])
    assert "schema id 42" in str(ei.value) and url in str(ei.value)
    assert ei.value.message_index == 0 and ei.value.part == "value"


def test_unknown_schema_id_is_decode_error(reg, impl):
    ks, vs, key, value = _one_message(reg)
    missing = vs + 100
    bad = b"\x00" + missing.to_bytes(4, "big") + value[5:]
    dec = ticdc_fast.AvroDecoder(reg.url, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([key, key], [value, bad])
    assert ei.value.message_index == 1 and ei.value.part == "value"
    assert f"schema id {missing}" in str(ei.value) and reg.url in str(ei.value) and "404" in str(ei.value)
    # the same decoder still decodes what it knows
    assert dec.decode([key], [value]).num_rows == 1


@pytest.mark.parametrize("schema,schema_type", [
    ('"string"', "AVRO"),
    ('{"type": "object", "properties": {"id": {"type": "integer"}}}', "JSON"),
    ('syntax = "proto3"; message M { int64 id = 1; }', "PROTOBUF"),
], ids=["avro-primitive", "json-schema", "protobuf"])
def test_registry_schema_that_is_not_a_record_is_decode_error(reg, impl, schema, schema_type):
    sid = reg.register("weird-value", schema, schema_type=schema_type)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        ticdc_fast.AvroDecoder(reg.url, implementation=impl).decode([None], [b"\x00" + sid.to_bytes(4, "big") + b"\x02x"])
    assert f"schema id {sid}" in str(ei.value) and ei.value.message_index == 0


# --------------------------------------------------------------------------- offline
def test_offline_schemas_need_no_registry(impl):
    with fresh_registry() as tmp:                # only to produce the bytes
        keys, values = _produce(tmp.url)
        ids = _schema_ids(tmp)
        schemas = {ids[0]: KEY, ids[1]: VALUE_V1, ids[2]: json.loads(VALUE_V2)}   # text or dict
    dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl)
    assert _as_dicts(dec.decode(keys, values)) == _expected_generic(ids)


def test_offline_schemas_take_precedence_over_the_registry(reg, impl):
    ks, vs, key, value = _one_message(reg)
    reg.down = True
    dec = ticdc_fast.AvroDecoder({"url": reg.url, "max.retries": 0}, implementation=impl,
                                 schemas={ks: reg.schemas[ks], vs: reg.schemas[vs]})
    assert dict(dec.decode([key], [value]).to_pylist()[0]["after"]) == {"id": "7", "note": "ok"}
    assert _id_fetches(reg) == {}


def test_offline_without_registry_unknown_id(impl):
    dec = ticdc_fast.AvroDecoder(schemas={1: KEY}, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([None], [b"\x00\x00\x00\x00\x02\x02"])
    assert "schema id 2" in str(ei.value) and ei.value.message_index == 0


def test_registry_client_instance(reg, impl):
    """An existing SchemaRegistryClient can be passed instead of a URL or config."""
    keys, values = _produce(reg.url)
    ids = _schema_ids(reg)
    dec = ticdc_fast.AvroDecoder(SchemaRegistryClient({"url": reg.url}), implementation=impl)
    assert _as_dicts(dec.decode(keys, values)) == _expected_generic(ids)
    assert _id_fetches(reg) == {sid: 1 for sid in ids}


def test_comma_separated_registry_urls(reg, impl):
    keys, values = _produce(reg.url)
    gone = fresh_registry().start()
    dead = gone.url
    gone.stop()
    dec = ticdc_fast.AvroDecoder({"url": f"{reg.url},{dead}", "max.retries": 0}, implementation=impl)
    assert _as_dicts(dec.decode(keys, values)) == _expected_generic(_schema_ids(reg))


def test_ipv6_registry_url_is_named_correctly(impl):
    dec = ticdc_fast.AvroDecoder({"url": "http://u:secret@[::1]:1", "max.retries": 0, "timeout": 2},
                                 implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([None], [b"\x00\x00\x00\x00\x2b\x02"])
    assert "schema id 43" in str(ei.value) and "secret" not in str(ei.value)
    assert "http://[::1]:1" in str(ei.value)
