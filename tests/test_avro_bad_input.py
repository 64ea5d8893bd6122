"""Avro protocol, bad input: every malformed message is a ``DecodeError`` that names the message
(``message_index``) and the part (``key``/``value``) — never a crash, a hang, a huge allocation
or a silently wrong row — and the decoder stays usable afterwards.

Both implementations are strict alike: varints wider than 64 bits, negative union indexes,
booleans other than 0/1 and out-of-range enum indexes are a DecodeError in the core and in the
twin (its own Avro reader, ``ticdc_fast._avro_binary``), at the same byte offset.
"""
from __future__ import annotations

import json
import struct

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast.testing import AvroColumn, AvroEncoder
from ticdc_fast.testing.open_encoder import Col, RowChange, make_tso


# --------------------------------------------------------------------------- a hand-made schema
def _t(avro, tidb, **params):
    p = {"tidb_type": tidb}
    p.update(params)
    return {"type": avro, "connect.parameters": p}


KEY_SCHEMA = {"type": "record", "name": "t", "namespace": "default.db",
              "fields": [{"name": "id", "type": _t("long", "BIGINT")}]}
VALUE_SCHEMA = {"type": "record", "name": "t", "namespace": "default.db", "fields": [
    {"name": "id", "type": _t("long", "BIGINT")},
    {"default": None, "name": "n", "type": ["null", _t("int", "INT")]},
    {"default": None, "name": "s", "type": ["null", _t("string", "TEXT")]},
    {"default": False, "name": "flag", "type": "boolean"},
    {"default": "x", "name": "kind", "type": {"type": "enum", "name": "kind_t", "symbols": ["x", "y"]}},
    {"default": None, "name": "bits", "type": ["null", _t("bytes", "BIT", length="64")]},
    {"default": "", "name": "_tidb_op", "type": "string"},
    {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
    {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"},
]}
SCHEMAS = {1: json.dumps(KEY_SCHEMA), 2: json.dumps(VALUE_SCHEMA)}
TS = 449451550317215745


def zz(n: int) -> bytes:
    """Avro long: zig-zag varint."""
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def s(b: bytes) -> bytes:
    return zz(len(b)) + b


def key(i=7, sid=1) -> bytes:
    return b"\x00" + struct.pack(">i", sid) + zz(i)


def val(id=b"\x0e", n=b"\x02" + zz(5), st=b"\x02" + s(b"hi"), flag=b"\x01", kind=b"\x02",
        bits=b"\x02" + s(b"\x01\x00"), op=s(b"c"), ts=zz(TS), pt=zz(TS >> 18), sid=2) -> bytes:
    return b"\x00" + struct.pack(">i", sid) + id + n + st + flag + kind + bits + op + ts + pt


GOOD_AFTER = {"id": "7", "n": "5", "s": "hi", "flag": "1", "kind": "y", "bits": "256"}


def _decoder(impl, **kw):
    return ticdc_fast.AvroDecoder(schemas=SCHEMAS, implementation=impl, **kw)


def _assert_good(dec, n=1):
    """The decoder still works, and gives only the good rows (nothing left over from the failure)."""
    out = dec.decode([key()] * n, [val()] * n)
    rows = out.to_pylist()
    assert len(rows) == n
    if "after" in out.schema.names:
        assert [dict(r["after"]) for r in rows] == [GOOD_AFTER] * n
    return rows


def _expect(impl, keys, values, index, part, typed=False, **kw):
    if typed:
        kw.update(table="db.t", schema=pa.schema([("id", pa.int64()), ("s", pa.string())]))
    dec = _decoder(impl, **kw)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(keys, values)
    e = ei.value
    assert (e.message_index, e.part) == (index, part), str(e)
    assert e.byte_offset is None or 0 <= e.byte_offset <= len((keys if part == "key" else values)[index] or b"")
    assert f"message {index}" in str(e)
    _assert_good(dec)
    return e


def test_good_message_decodes(impl):
    rows = _assert_good(_decoder(impl), 2)
    assert rows[0]["_op"] == "INSERT" and rows[0]["_commit_ts"] == TS and dict(rows[0]["_key"]) == {"id": "7"}


# --------------------------------------------------------------------------- framing
@pytest.mark.parametrize("first", [0x04, 0x10, 0x7F, 0xFF])
def test_wrong_magic_byte_value(impl, first):
    bad = bytes([first]) + val()[1:]
    e = _expect(impl, [key(), key()], [val(), bad], 1, "value")
    assert e.byte_offset == 0


@pytest.mark.parametrize("first", [0x01, 0x02, 0x03, 0xFF])
def test_wrong_magic_byte_key(impl, first):
    bad = bytes([first]) + key()[1:]
    _expect(impl, [key(), bad], [val(), val()], 1, "key")
    _expect(impl, [key(), bad], [val(), None], 1, "key")         # tombstone with a bad key


@pytest.mark.parametrize("part", ["key", "value"])
@pytest.mark.parametrize("sid", [0, 3, 99, -1, 2 ** 31 - 1])
def test_unknown_schema_id(impl, part, sid):
    keys, values = [key(), key()], [val(), val()]
    if part == "key":
        keys[1] = key(sid=sid)
    else:
        values[1] = val(sid=sid)
    e = _expect(impl, keys, values, 1, part)
    assert f"schema id {sid}" in str(e)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_truncated_header(impl, n):
    _expect(impl, [key(), key()], [val(), val()[:n]], 1, "value")
    _expect(impl, [key(), key()[:n]], [val(), val()], 1, "key")
    _expect(impl, [key(), key()[:n]], [val(), None], 1, "key")


def _realistic_message():
    cols = [AvroColumn("id", C.T_LONGLONG, 11), AvroColumn("bu", C.T_LONGLONG, 64 | 128),
            AvroColumn("dec", C.T_NEWDECIMAL, 65, length=65, scale=30), AvroColumn("f", C.T_FLOAT, 64),
            AvroColumn("d", C.T_DOUBLE, 64), AvroColumn("b", C.T_BIT, 64, length=12),
            AvroColumn("e", C.T_ENUM, 64, elements=("a,b", "c")), AvroColumn("note", C.T_VARCHAR, 64, default="n/a"),
            AvroColumn("blob", C.T_BLOB, 65), AvroColumn("ts", C.T_TIMESTAMP, 64), AvroColumn("j", C.T_JSON, 64)]
    vals = {"id": 123456789, "bu": (1 << 64) - 1, "dec": "-12345678901234567890.123456789012345678901234567890",
            "f": 1.5, "d": 0.1, "b": 4095, "e": "a,b", "note": "测试", "blob": b"\xff\x00",
            "ts": "2024-01-01 00:00:00", "j": '{"k": [1]}'}
    enc = AvroEncoder(table_columns={("db", "t"): cols})
    img = [Col(c.name, c.type, vals[c.name], c.flags) for c in cols]
    msgs = enc.encode([RowChange("db", "t", make_tso(1_700_000_000_000, 3), img),
                       RowChange("db", "t", make_tso(1_700_000_000_001), img, img)])
    return {sid: text for _, sid, text in enc.registered}, msgs


def test_truncated_body_at_every_byte(impl):
    schemas, msgs = _realistic_message()
    (k0, v0), (k1, v1) = msgs
    dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl)
    good = dec.decode([k0, k1], [v0, v1])
    assert good.num_rows == 2
    for cut in range(len(v1)):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode([k0, k1, k0], [v0, v1[:cut], v0])
        assert (ei.value.message_index, ei.value.part) == (1, "value"), (cut, str(ei.value))
    for cut in range(len(k1)):
        for v in (v1, None):
            with pytest.raises(ticdc_fast.DecodeError) as ei:
                dec.decode([k0, k1[:cut], k0], [v0, v, v0])
            assert (ei.value.message_index, ei.value.part) == (1, "key"), (cut, str(ei.value))
    assert dec.decode([k0, k1], [v0, v1]).equals(good)               # nothing left over


def test_truncated_body_typed(impl):
    schemas, msgs = _realistic_message()
    (k0, v0), (k1, v1) = msgs
    dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, table="db.t",
                                 schema=pa.schema([("id", pa.int64()), ("dec", pa.decimal256(65, 30))]))
    for cut in range(0, len(v1), 3):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode([k0, k1], [v0, v1[:cut]])
        assert ei.value.message_index == 1
    assert dec.decode([k1], [v1]).column("id").to_pylist() == [123456789]


@pytest.mark.parametrize("extra", [b"\x00", b"\x02x", b"\xff" * 20])
def test_trailing_bytes(impl, extra):
    _expect(impl, [key(), key()], [val(), val() + extra], 1, "value")
    _expect(impl, [key(), key() + extra], [val(), val()], 1, "key")
    _expect(impl, [key(), key()], [val(), val() + extra], 1, "value", typed=True)


def test_empty_value(impl):
    _expect(impl, [key(), key()], [val(), b""], 1, "value")


def test_keyless_tombstone_is_a_delete_of_an_unknown_row(impl):
    """ticdc builds the Kafka key from primary-key columns only: a table keyed by a NOT NULL
    unique key only sends its deletes with neither key nor value.  One DELETE row, empty before
    image, nothing else known — not an error (it used to fail the batch: "tombstone without a key")."""
    out = _decoder(impl).decode([key(), None, key()], [val(), None, val()],
                                partitions=[0, 0, 0], offsets=[10, 11, 12])
    rows = out.to_pylist()
    assert [r["_op"] for r in rows] == ["INSERT", "DELETE", "INSERT"]
    gone = rows[1]
    assert gone["before"] == [] and gone["after"] is None
    assert (gone["_commit_ts"], gone["_schema"], gone["_table"], gone["_offset"]) == (None, None, None, 11)
    typed = _decoder(impl, table="db.t", schema=pa.schema([("id", pa.int64()), ("s", pa.string())])).decode(
        [key(), None], [val(), None]).to_pylist()
    assert typed[1]["_op"] == "DELETE" and (typed[1]["id"], typed[1]["s"]) == (None, None)
    assert typed[0]["id"] == 7


@pytest.mark.parametrize("first", [0x04, 0x05, 0x80])
def test_unknown_leading_byte(impl, first):
    _expect(impl, [key(), None], [val(), bytes([first]) + bytes(8)], 1, "value")


def test_checkpoint_and_delete_values_of_wrong_length(impl):
    for n in (0, 1, 7, 9, 20):
        _expect(impl, [key(), None], [val(), b"\x02" + bytes(n)], 1, "value")
        _expect(impl, [key(), key()], [val(), b"\x03" + bytes(n)], 1, "value")
    e = _expect(impl, [key(), None], [val(), b"\x03" + TS.to_bytes(8, "big")], 1, "key")   # 0x03 needs the key
    assert e.byte_offset == 0


@pytest.mark.parametrize("raw", [b"\xff" * 8, (1 << 63).to_bytes(8, "big")])
def test_commit_ts_out_of_range(impl, raw):
    _expect(impl, [key(), None], [val(), b"\x02" + raw], 1, "value")
    _expect(impl, [key(), key()], [val(), b"\x03" + raw], 1, "value")
    _expect(impl, [key(), key()], [val(), val(ts=zz(-5))], 1, "value")


def test_count_mismatch(impl):
    dec = _decoder(impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([key()], [val(), val()])
    assert ei.value.message_index is None
    with pytest.raises(ValueError):
        dec.decode([key()], [val()], partitions=[0, 1])
    _assert_good(dec)


# --------------------------------------------------------------------------- Avro body
@pytest.mark.parametrize("where", ["id", "ts"])
def test_varint_overflow(impl, where):
    over = b"\xff" * 9 + b"\x7f"                     # 10 groups, 70 bits set
    e = _expect(impl, [key(), key()], [val(), val(**{where: over})], 1, "value")
    assert e.reason == "Avro varint overflows 64 bits"
    # after the 10th group, the first that does not fit; the column is named
    at = 5 if where == "id" else len(val()) - len(zz(TS)) - len(zz(TS >> 18))
    assert (e.byte_offset, e.column) == (at + 10, "id" if where == "id" else "_tidb_commit_ts")


def test_varint_overflow_in_key(impl):
    _expect(impl, [key(), b"\x00" + struct.pack(">i", 1) + b"\x80" * 9 + b"\x02"], [val(), val()], 1, "key")


def test_overlong_varint_with_zero_groups_is_accepted(impl):
    """An overlong but in-range varint (extra zero groups) reads as its value (both agree)."""
    rows = _decoder(impl).decode([key()], [val(id=b"\x8e\x80\x80\x00")]).to_pylist()
    assert dict(rows[0]["after"])["id"] == "7"


def _overlong(b: bytes, extra: int) -> bytes:
    """The same varint with `extra` zero groups appended (the last group gets a continuation bit)."""
    return b[:-1] + bytes([b[-1] | 0x80]) + b"\x80" * (extra - 1) + b"\x00" if extra else b


_WIDTHS = sorted({0, 1, -1, 63, -64, 64, -65} | {s * (1 << k) + d for k in range(6, 63) for s in (1, -1)
                                                 for d in (-1, 0, 1)} | {2 ** 63 - 1, -2 ** 63})


@pytest.mark.parametrize("extra", [0, 1, 3])
def test_varint_every_width(impl, extra):
    """Every encoded width from 1 to 10 bytes, plain and overlong, at the start of the record (many
    bytes left) and as the last field (few left): each reads as its value."""
    values = [v for v in _WIDTHS if len(_overlong(zz(v), extra)) <= 10 or extra == 0]
    dec = _decoder(impl)
    out = dec.decode([key()] * len(values),
                     [val(id=_overlong(zz(v), extra), pt=_overlong(zz(v), extra)) for v in values]).to_pylist()
    assert [dict(r["after"])["id"] for r in out] == [str(v) for v in values]
    assert [r["_commit_ts"] for r in out] == [TS] * len(values)


def test_truncated_varint(impl):
    _expect(impl, [key(), key()], [val(), val()[:5] + b"\x80\x80"], 1, "value")


@pytest.mark.parametrize("field", ["n", "st", "bits"])
@pytest.mark.parametrize("index", [2, 3, 100, 2 ** 40])
def test_union_index_out_of_range(impl, field, index):
    e = _expect(impl, [key(), key()], [val(), val(**{field: zz(index) + b"\x00"})], 1, "value")
    assert e.byte_offset >= 5


@pytest.mark.parametrize("field", ["n", "st"])
def test_negative_union_index(impl, field):
    body = {"n": zz(-1) + zz(5), "st": zz(-1) + s(b"hi")}[field]     # index -1 = the last branch
    e = _expect(impl, [key(), key()], [val(), val(**{field: body})], 1, "value")
    assert e.reason == "Avro union index out of range"
    at = 6 if field == "n" else 6 + len(b"\x02" + zz(5))        # the index's own byte
    assert (e.byte_offset, e.column) == (at, {"n": "n", "st": "s"}[field])


@pytest.mark.parametrize("field", ["st", "bits", "op"])
@pytest.mark.parametrize("length", [-1, -3, -(2 ** 40)])
def test_negative_length(impl, field, length):
    body = zz(length) + b"abc"
    if field != "op":
        body = b"\x02" + body
    _expect(impl, [key(), key()], [val(), val(**{field: body})], 1, "value")


@pytest.mark.parametrize("field", ["st", "bits", "op"])
@pytest.mark.parametrize("length", [2 ** 20, 2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63 - 1])
def test_forged_huge_length(impl, field, length):
    """A length beyond the bytes left is an error before anything is allocated."""
    body = zz(length) + b"abc"
    if field != "op":
        body = b"\x02" + body
    _expect(impl, [key(), key()], [val(), val(**{field: body})], 1, "value")


@pytest.mark.parametrize("b", [2, 3, 0x7F, 0xFF])
def test_boolean_other_than_0_or_1(impl, b):
    e = _expect(impl, [key(), key()], [val(), val(flag=bytes([b]))], 1, "value")
    assert (e.reason, e.column) == ("invalid Avro boolean", "flag")
    assert e.byte_offset == 6 + len(b"\x02" + zz(5)) + len(b"\x02" + s(b"hi"))


def test_boolean_0_and_1(impl):
    rows = _decoder(impl).decode([key(), key()], [val(flag=b"\x00"), val(flag=b"\x01")]).to_pylist()
    assert [dict(r["after"])["flag"] for r in rows] == ["0", "1"]


def test_negative_enum_index(impl):
    e = _expect(impl, [key(), key()], [val(), val(kind=zz(-1))], 1, "value")
    assert (e.reason, e.column) == ("Avro enum index out of range", "kind")
    assert e.byte_offset == 6 + len(b"\x02" + zz(5)) + len(b"\x02" + s(b"hi")) + 1


@pytest.mark.parametrize("index", [2, 3, 2 ** 40])
def test_enum_index_too_large(impl, index):
    _expect(impl, [key(), key()], [val(), val(kind=zz(index))], 1, "value")


@pytest.mark.parametrize("n", [2 ** 31, -(2 ** 31) - 1, 2 ** 62])
def test_avro_int_out_of_32_bit_range(impl, n):
    e = _expect(impl, [key(), key()], [val(), val(n=b"\x02" + zz(n))], 1, "value")
    assert e.column == "n"


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"a\x80"])
def test_invalid_utf8_in_text(impl, raw):
    # a text column: an error with invalid_utf8="error", U+FFFD by default (tests/test_invalid_utf8.py)
    _expect(impl, [key(), key()], [val(), val(st=b"\x02" + s(raw))], 1, "value", invalid_utf8="error")
    dec = _decoder(impl)
    rows = dec.decode([key(), key()], [val(), val(st=b"\x02" + s(raw))]).to_pylist()
    assert dict(rows[1]["after"])["s"] == raw.decode("utf-8", "replace")
    assert dec.invalid_utf8_replaced == 1
    # the _tidb_op extension field is no column: an error either way
    _expect(impl, [key(), key()], [val(), val(op=s(raw))], 1, "value")


def test_bit_longer_than_64_bits(impl):
    _expect(impl, [key(), key()], [val(), val(bits=b"\x02" + s(b"\x01" + bytes(8)))], 1, "value")
    # leading zero bytes are fine
    rows = _decoder(impl).decode([key()], [val(bits=b"\x02" + s(bytes(3) + b"\xff" * 8))]).to_pylist()
    assert dict(rows[0]["after"])["bits"] == str((1 << 64) - 1)


@pytest.mark.parametrize("op", [b"x", b"C", b"insert", b"cc"])
def test_unknown_tidb_op(impl, op):
    _expect(impl, [key(), key()], [val(), val(op=s(op))], 1, "value")


# --------------------------------------------------------------------------- DDL values
@pytest.mark.parametrize("body", [
    b"", b"{", b"{bad", b'{"query": "x", "commitTs": 1', b"[1, 2]", b"null", b"42", b'"s"',
    b'{"commitTs": -1}', b'{"commitTs": "5"}', b'{"commitTs": 1.5}', b'{"commitTs": 18446744073709551615}',
    b'{"query": "x"}', b'{"commitTs": 1, "type": "3"}', b'{"commitTs": 1} trailing',
    b'{"query": "\xff\xfe", "commitTs": 1}',
    # fuzz F4: Go string and ActionType fields of other JSON types or out of range
    b'{"query": 5, "commitTs": 1}', b'{"query": ["x"], "commitTs": 1}', b'{"schema": {}, "commitTs": 1}',
    b'{"table": true, "commitTs": 1}', b'{"schema": 1.5, "table": "t", "commitTs": 1}',
    b'{"commitTs": 1, "type": 2147483648}', b'{"commitTs": 1, "type": -2147483649}',
    b'{"commitTs": 1, "type": 18446744073709551616}', b'{"commitTs": 1, "type": true}',
], ids=lambda b: repr(b)[:40])
def test_malformed_ddl_value(impl, body):
    e = _expect(impl, [key(), None], [val(), b"\x01" + body], 1, "value")
    assert e.byte_offset is not None and 0 <= e.byte_offset <= len(body) + 1
    _expect(impl, [key(), None], [val(), b"\x01" + body], 1, "value", typed=True)


def test_good_ddl_value(impl):
    ddl = b'\x01{"query":"ALTER TABLE t ADD c INT","type":5,"schema":"db","table":"t","commitTs":%d}' % TS
    rows = _decoder(impl).decode([None, key()], [ddl, val()]).to_pylist()
    assert (rows[0]["_op"], rows[0]["_ddl"], rows[0]["_ddl_type"], rows[0]["_commit_ts"]) == (
        "DDL", "ALTER TABLE t ADD c INT", 5, TS)


# --------------------------------------------------------------------------- no crash at all
def test_single_byte_mutations_never_crash(impl):
    """Every byte of a message replaced by a few values: a batch or a DecodeError, nothing else."""
    k, v = key(), val()
    dec = _decoder(impl)
    outcomes = set()
    for target in ("key", "value"):
        data = k if target == "key" else v
        for pos in range(len(data)):
            for b in (0x00, 0x01, 0x80, 0xFF):
                m = bytearray(data)
                m[pos] = b
                keys, values = ([bytes(m)], [v]) if target == "key" else ([k], [bytes(m)])
                try:
                    out = dec.decode(keys, values)
                    outcomes.add("ok")
                    assert out.num_rows == 1
                except ticdc_fast.DecodeError as e:
                    outcomes.add("error")
                    assert e.message_index == 0
    assert outcomes == {"ok", "error"}
    _assert_good(dec)


# --------------------------------------------------------------------------- bad writer schemas
@pytest.mark.parametrize("schema", [
    '"string"', "{not json", "[1]", '{"type": "enum", "name": "e", "symbols": ["a"]}',
    json.dumps({"type": "record", "name": "t", "fields": [{"name": "m", "type": {"type": "map", "values": "int"}}]}),
    json.dumps({"type": "record", "name": "t", "fields": [{"name": "a", "type": {"type": "array", "items": "int"}}]}),
], ids=["primitive", "not-json", "list", "enum", "map-field", "array-field"])
def test_unusable_writer_schema_is_decode_error(impl, schema):
    dec = ticdc_fast.AvroDecoder(schemas=dict(SCHEMAS, **{"9": schema}), implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([key(), None], [val(), b"\x00\x00\x00\x00\x09\x02"])
    assert ei.value.message_index == 1 and ei.value.part == "value"
    assert "schema id 9" in str(ei.value) or "unsupported Avro type" in str(ei.value)
    _assert_good(dec)


@pytest.mark.parametrize("schema", [
    {"type": "record", "name": "t", "fields": [{"name": "id"}]},                       # field without a type
    {"type": "record", "fields": [{"name": "id", "type": "long"}]},                    # record without a name
    {"type": "record", "name": "t", "fields": [{"name": "f", "type": {"type": "fixed", "name": "F"}}]},  # no size
    {"type": "record", "name": "t", "fields": [{"type": "long"}]},                     # field without a name
    {"type": "record", "name": "t", "fields": 5},                                      # fields not a list
], ids=["no-field-type", "no-record-name", "fixed-no-size", "no-field-name", "fields-not-list"])
def test_malformed_writer_schema_is_decode_error(impl, schema):
    dec = ticdc_fast.AvroDecoder(schemas={9: json.dumps(schema)}, implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([None], [b"\x00\x00\x00\x00\x09\x02"])
    assert ei.value.message_index == 0 and "schema id 9" in str(ei.value)


@pytest.mark.skipif(ticdc_fast._impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: the core's own entry points")
def test_core_refuses_keys_and_values_of_different_lengths():
    """The front end pairs keys with values; the core checks it again before pointing at them."""
    dec = _decoder("cython")
    with pytest.raises(ValueError, match="1 keys but 2 values"):
        dec._rows.run([key()], [val(), val()], 0)
    with pytest.raises(ValueError, match="1 keys but 2 values"):
        dec._rows.prepare_arrow(pa.array([key()], pa.large_binary()), pa.array([val(), val()], pa.large_binary()))
    dec._rows.reset()
    _assert_good(dec)


# --------------------------------------------------------------------------- another table's message
BAD_VALUES = {
    "boolean": val(flag=b"\x02"),
    "enum": val(kind=zz(2)),
    "union": val(n=zz(3) + b"\x00"),
    "int32": val(n=b"\x02" + zz(2 ** 31)),
    "bit": val(bits=b"\x02" + s(b"\x01" + bytes(8))),
    "trailing": val() + b"\x02x",
    "truncated": val()[:-3],
    "op": val(op=s(b"x")),
}


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_another_tables_message_is_checked_as_in_generic(impl, case):
    # a typed decode reads the messages of tables it leaves out with the same checks as a generic
    # decode (the core walks them without filling a row image): the same error, same position
    def error(dec):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode([key(), key()], [val(), BAD_VALUES[case]])
        e = ei.value
        return (e.message_index, e.part, e.byte_offset, e.column, e.reason)

    other = _decoder(impl, table="db.other", schema=pa.schema([("id", pa.int64())]))
    assert error(other) == error(_decoder(impl))
    # nothing of db.t reaches the other table's output, before or after the failure
    assert other.decode([key(), key()], [val(), val(kind=b"\x00", bits=b"\x02" + s(b"\xff"))]).num_rows == 0


BAD_KEYS = {
    "overflow": b"\x00" + struct.pack(">i", 1) + b"\x80" * 9 + b"\x02",
    "truncated": b"\x00" + struct.pack(">i", 1) + b"\x80",
    "trailing": key() + b"\x02",
    "empty record": b"\x00" + struct.pack(">i", 1),
}


@pytest.mark.parametrize("value", ["record", "tombstone"])
@pytest.mark.parametrize("case", sorted(BAD_KEYS))
def test_typed_decode_checks_keys_as_generic(impl, case, value):
    # typed output takes the key's fields only for a delete without a value record; the core reads
    # every other key without filling a row image: the same error at the same byte either way
    def error(dec):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode([key(), BAD_KEYS[case]], [val(), val() if value == "record" else None])
        e = ei.value
        return (e.message_index, e.part, e.byte_offset, e.column, e.reason)

    typed = _decoder(impl, table="db.t", schema=pa.schema([("id", pa.int64()), ("s", pa.string())]))
    got = error(typed)
    assert got == error(_decoder(impl))
    assert got[:2] == (1, "key")
    # the failure leaves the typed decoder as it was: both keys' rows come out of a good batch
    out = typed.decode([key(3), key(4)], [val(), None]).to_pylist()
    assert [(r["_op"], r["id"]) for r in out] == [("INSERT", 7), ("DELETE", 4)]
