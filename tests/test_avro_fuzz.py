"""Avro protocol: the two implementations agree on a rich writer schema, and on mutated messages
they give the same rows or a DecodeError for the same message — never a crash or a hang."""
from __future__ import annotations

import io
import json
import random
import struct
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ticdc_fast
from ticdc_fast import _impl

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")


def _t(avro, tidb, **extra):
    return {"type": avro, "connect.parameters": {"tidb_type": tidb}, **extra}


_COLS = [
    {"name": "id", "type": _t("long", "BIGINT")},
    {"default": None, "name": "u", "type": ["null", _t("long", "BIGINT UNSIGNED")]},
    {"default": 7, "name": "small", "type": [_t("int", "INT"), "null"]},          # [T, "null"] order
    {"default": None, "name": "amount", "type": ["null", _t("bytes", "DECIMAL", logicalType="decimal", precision=65, scale=30)]},
    {"default": None, "name": "f", "type": ["null", _t("float", "FLOAT")]},
    {"default": None, "name": "d", "type": ["null", _t("double", "DOUBLE")]},
    {"default": None, "name": "bits", "type": ["null", _t("bytes", "BIT", **{"connect.parameters": {"tidb_type": "BIT", "length": "64"}})]},
    {"default": None, "name": "e", "type": ["null", _t("string", "ENUM")]},
    {"default": None, "name": "txt", "type": ["null", _t("string", "TEXT")]},
    {"default": None, "name": "blob", "type": ["null", _t("bytes", "BLOB")]},
    {"default": None, "name": "ts", "type": ["null", _t("string", "TIMESTAMP")]},
    {"default": None, "name": "flag", "type": ["null", "boolean"]},
    {"default": None, "name": "kind", "type": ["null", {"type": "enum", "name": "kind_t", "symbols": ["A", "B", "C"]}]},
]
VALUE = {"type": "record", "name": "t", "namespace": "default.db", "fields": _COLS + [
    {"default": None, "name": "_ticdc_before", "type": ["null", {"type": "record", "name": "t_before",
                                                                 "fields": [dict(c) for c in _COLS[:4]]}]},
    {"default": "", "name": "_tidb_op", "type": "string"},
    {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
    {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"},
    {"default": "", "name": "_tidb_row_level_checksum", "type": "string"},
    {"default": False, "name": "_tidb_corrupted", "type": "boolean"},
    {"default": 0, "name": "_tidb_checksum_version", "type": "int"},
]}
KEY = {"type": "record", "name": "t", "namespace": "default.db", "fields": [_COLS[0]]}
SCHEMAS = {1: json.dumps(KEY), 2: json.dumps(VALUE)}
_PV = fastavro.parse_schema(json.loads(SCHEMAS[2].replace('"logicalType": "decimal", ', '')))
_PK = fastavro.parse_schema(KEY)


def _dec_bytes(unscaled: int) -> bytes:
    n = max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(n, "big", signed=True)


def _row(rnd: random.Random, i: int) -> dict:
    return {
        "id": i, "u": rnd.choice([None, -1, 5, -(1 << 63), (1 << 63) - 1]),
        "small": rnd.choice([None, 0, -(1 << 31), (1 << 31) - 1]),
        "amount": rnd.choice([None, _dec_bytes(0), _dec_bytes(-128), _dec_bytes(10 ** 64 - 1), _dec_bytes(-(10 ** 40) + 7)]),
        "f": rnd.choice([None, 1.5, -0.0, 3.4028234663852886e38, 1e-7]),
        "d": rnd.choice([None, 0.1 + 0.2, 5e-324, -1e300, 2.0 ** -24]),
        "bits": rnd.choice([None, b"\x00", b"\x80\x00\x00\x00\x00\x00\x00\x01", b"\x00\x41"]),
        "e": rnd.choice([None, "a", "b,c", ""]), "txt": rnd.choice([None, "x", "测试\u2028", ""]),
        "blob": rnd.choice([None, b"", b"\xff\x00", bytes(range(20))]),
        "ts": rnd.choice([None, "2024-03-10 02:30:00", "1970-01-01 00:00:00.000001"]),
        "flag": rnd.choice([None, True, False]), "kind": rnd.choice([None, "A", "C"]),
        "_ticdc_before": None if rnd.random() < 0.5 else {"id": i, "u": 1, "small": 2, "amount": _dec_bytes(-1)},
        "_tidb_op": rnd.choice(["c", "u", "d", ""]), "_tidb_commit_ts": 449451550317215745 + i,
        "_tidb_commit_physical_time": 1, "_tidb_row_level_checksum": rnd.choice(["", "12345"]),
        "_tidb_corrupted": rnd.choice([True, False]), "_tidb_checksum_version": 1,
    }


def _frame(sid: int, parsed, rec) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, rec)
    return b"\x00" + struct.pack(">i", sid) + buf.getvalue()


def _corpus(seed: int, n: int = 12):
    rnd = random.Random(seed)
    keys, values = [], []
    for i in range(n):
        r = _row(rnd, i)
        keys.append(_frame(1, _PK, {"id": i}))
        kind = rnd.random()
        if kind < 0.1:
            values.append(None)                                   # tombstone
        elif kind < 0.15:
            values.append(b"\x03" + (449451550317215745 + i).to_bytes(8, "big"))
        elif kind < 0.2:
            keys[-1] = None
            values.append(b"\x02" + (449451550317215745 + i).to_bytes(8, "big"))
        else:
            values.append(_frame(2, _PV, r))
    return keys, values


_TYPED = pa.schema([("id", pa.int64()), ("u", pa.decimal128(20, 0)), ("small", pa.int32()),
                    ("amount", pa.decimal256(65, 30)), ("f", pa.float32()), ("d", pa.float64()),
                    ("bits", pa.uint64()), ("e", pa.string()), ("txt", pa.string()), ("blob", pa.binary()),
                    ("ts", pa.timestamp("us", tz="UTC")), ("flag", pa.bool_()), ("kind", pa.string())])


def _outcome(impl, keys, values, typed, arrow=False):
    """typed: False (generic), True (typed, db.t) or "other" (typed for another table: every
    message is one the output leaves out, read and checked all the same)."""
    kw = {}
    if typed == "other":
        kw = {"table": "db.other", "schema": pa.schema([("id", pa.int64())])}
    elif typed:
        kw = {"table": "db.t", "schema": _TYPED, "timezone": "America/New_York"}
    if arrow:   # the zero-copy input path (nulls through the validity bitmap)
        keys, values = pa.array(keys, pa.binary()), pa.array(values, pa.large_binary())
    try:
        return ticdc_fast.AvroDecoder(schemas=SCHEMAS, implementation=impl, **kw).decode(keys, values)
    except ticdc_fast.DecodeError as exc:
        return ("error", exc.message_index, exc.part, exc.byte_offset, exc.column, exc.reason)


@pytest.mark.parametrize("arrow", [False, True], ids=["lists", "arrow"])
@pytest.mark.parametrize("typed", [False, True, "other"], ids=["generic", "typed", "other-table"])
@pytest.mark.parametrize("seed", range(6))
def test_rich_schema_agrees(seed, typed, arrow):
    keys, values = _corpus(seed)
    a, b = _outcome("cython", keys, values, typed, arrow), _outcome("python", keys, values, typed)
    assert not isinstance(a, tuple), a
    assert a.equals(b)


def test_rich_schema_values():
    keys, values = _corpus(0, 1)
    keys, values = [keys[0]], [_frame(2, _PV, dict(_row(random.Random(0), 0), u=-1, amount=_dec_bytes(-128),
                                                   bits=b"\x80\x00\x00\x00\x00\x00\x00\x01", _tidb_op="u",
                                                   f=-0.0, d=2.0 ** -24))]
    for impl in ("cython", "python"):
        r = ticdc_fast.AvroDecoder(schemas=SCHEMAS, implementation=impl).decode(keys, values).to_pylist()[0]
        after = dict(r["after"])
        assert r["_op"] == "UPDATE" and r["_commit_ts"] == 449451550317215745
        assert after["u"] == "18446744073709551615"                   # long mode wraps: undone
        assert after["amount"] == "-0.000000000000000000000000000128"
        assert after["bits"] == str((1 << 63) + 1)
        assert after["f"] == "-0" and after["d"] == "5.960464477539063e-8"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), typed=st.sampled_from([False, True, "other"]), n=st.integers(1, 3))
@example(seed=4346163, typed=True, n=1)   # invalid UTF-8 in the checksum: typed output must fail too
def test_mutated_avro_messages_agree(seed, typed, n):
    rnd = random.Random(seed)
    keys, values = _corpus(seed % 7)
    i = rnd.randrange(len(values))
    target = values if values[i] is not None and rnd.random() < 0.8 else keys
    if target[i] is None:
        return
    b = bytearray(target[i])
    for _ in range(n):
        pos = rnd.randrange(len(b) + 1)
        op = rnd.randrange(3)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] = rnd.randrange(256)
        elif op == 1:
            b[pos:pos] = rnd.choice([b"\x00", b"\x01", b"\x02", b"\x7f", b"\xff" * 10, b"\x81"])
        else:
            del b[pos:]
    target[i] = bytes(b)
    a, c = _outcome("cython", keys, values, typed, seed % 2 == 0), _outcome("python", keys, values, typed)
    if isinstance(a, tuple) or isinstance(c, tuple):
        # the same message, part, byte offset, column and reason
        assert isinstance(a, tuple) and isinstance(c, tuple) and a == c, (a, c)
    else:
        assert a.equals(c)
