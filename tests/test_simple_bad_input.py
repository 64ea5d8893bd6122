"""Simple-protocol bad input: every malformed message raises ``ticdc_fast.DecodeError`` naming
the message (``message_index``), in both implementations; nothing crashes or decodes silently."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable,
                                SimpleWatermark, make_tso)

T0 = 1_714_521_600_000
ENCODINGS = ("json", "avro")

COLS = [SimpleColumn("id", "int", nullable=False), SimpleColumn("ti", "tinyint"),
        SimpleColumn("u", "bigint", unsigned=True), SimpleColumn("bi", "bigint"),
        SimpleColumn("vb", "varbinary", length=8), SimpleColumn("ts", "timestamp"),
        SimpleColumn("e", "enum", elements=["a"]), SimpleColumn("f", "float"), SimpleColumn("d", "double"),
        SimpleColumn("v", "varchar", length=9)]
TABLE = SimpleTable("db", "t", 10, make_tso(T0 - 1000), COLS)
ONE = SimpleTable("db", "one", 11, make_tso(T0 - 1000), [SimpleColumn("id", "bigint", nullable=False)])


def _enc(encoding, **kw):
    return SimpleEncoder(encoding, **kw)


def _boot(encoding, table=TABLE):
    return _enc(encoding).encode_value(SimpleBootstrap(table))


def _dml(encoding, data, table=TABLE, op="INSERT"):
    return _enc(encoding).encode_value(SimpleDML(table, op, make_tso(T0), data=data,
                                                 old=data if op != "INSERT" else None))


def _json_dml(**data) -> bytes:
    """A JSON INSERT of TABLE whose ``data`` is taken verbatim (values not checked)."""
    doc = json.loads(_dml("json", {"id": 1}))
    doc["data"] = {"id": "1", **data}
    return json.dumps(doc, separators=(",", ":")).encode()


def _raises(impl, encoding, values, index, *, column=None, match=None, **kw):
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, values)
    err = ei.value
    assert err.message_index == index, str(err)
    if column is not None:
        assert err.column == column, str(err)
    if match is not None:
        assert match in str(err), str(err)
    return err


# --------------------------------------------------------------------------- JSON framing
MALFORMED_JSON = {
    "truncated": lambda: _dml("json", {"id": 1})[:-5],
    "empty": lambda: b"",
    "not_utf8": lambda: b"\xff\xfe",
    "not_object": lambda: b"[1,2]",
    "trailing_garbage": lambda: _dml("json", {"id": 1}) + b"x",
    "bom": lambda: b"\xef\xbb\xbf" + _dml("json", {"id": 1}),
    "invalid_utf8_in_string": lambda: _dml("json", {"id": 1}).replace(b'"id":"1"', b'"id":"1","v":"\xff"'),
    "lone_surrogate_escape": lambda: _dml("json", {"id": 1}).replace(b'"id":"1"', b'"id":"1","v":"\\ud800"'),
    "no_type": lambda: b'{"version":1,"commitTs":1}',
    "unknown_type": lambda: b'{"version":1,"type":"NOPE","commitTs":1,"buildTs":1}',
    "no_commit_ts": lambda: b'{"version":1,"type":"WATERMARK","buildTs":1}',
    "negative_commit_ts": lambda: b'{"version":1,"type":"WATERMARK","commitTs":-1,"buildTs":1}',
    "commit_ts_beyond_uint64": lambda: b'{"version":1,"type":"WATERMARK","commitTs":18446744073709551616,"buildTs":1}',
    "commit_ts_beyond_int64": lambda: _dml("json", {"id": 1}).replace(
        b'"commitTs":%d' % make_tso(T0), b'"commitTs":9223372036854775808'),
    "data_not_object": lambda: _dml("json", {"id": 1}).replace(b'"data":{"id":"1"}', b'"data":[1]'),
    "dml_without_table": lambda: _dml("json", {"id": 1}).replace(b'"table":"t",', b""),
    "update_without_old": lambda: _dml("json", {"id": 1}).replace(b'"INSERT"', b'"UPDATE"'),
    "delete_with_data_only": lambda: _dml("json", {"id": 1}).replace(b'"INSERT"', b'"DELETE"'),
    "unknown_dml_type": lambda: _dml("json", {"id": 1}).replace(b'"INSERT"', b'"UPSERT"'),
    "handle_key_only_not_bool": lambda: _dml("json", {"id": 1}).replace(b'"data"', b'"handleKeyOnly":1,"data"'),
    "bootstrap_without_schema": lambda: b'{"version":1,"type":"BOOTSTRAP","commitTs":0,"buildTs":1}',
    "bootstrap_schema_without_table": lambda: b'{"version":1,"type":"BOOTSTRAP","commitTs":0,"buildTs":1,"tableSchema":{"schema":"a"}}',
}


@pytest.mark.parametrize("case", sorted(MALFORMED_JSON))
def test_malformed_json(case, impl):
    bad = MALFORMED_JSON[case]()
    good = _dml("json", {"id": 2})
    _raises(impl, "json", [_boot("json"), good, bad, good], 2)


def test_malformed_json_error_offset(impl):
    bad = _dml("json", {"id": 1})[:-5]
    err = _raises(impl, "json", [_boot("json"), bad], 1, match="malformed JSON")
    assert err.part == "value"
    assert err.byte_offset == len(bad)


@pytest.mark.parametrize("cut", [0, 1, 10, 60, 120, -1])
def test_truncated_json(cut, impl):
    v = _dml("json", {"id": 1, "v": "x"})
    _raises(impl, "json", [_boot("json"), v[:cut]], 1)


# --------------------------------------------------------------------------- schema problems
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_unknown_mysql_type_in_bootstrap(encoding, impl):
    if encoding == "json":
        doc = json.loads(_boot("json"))
        doc["tableSchema"]["columns"][1]["dataType"]["mysqlType"] = "geometry"
        boot = json.dumps(doc).encode()
    else:
        # mysqlType is the first string of the column's DataType: "tinyint" -> "tinyinx"
        boot = _boot("avro").replace(b"\x0etinyint", b"\x0etinyinx")
        assert boot != _boot("avro")
    err = _raises(impl, encoding, [_dml(encoding, {"id": 1}), boot], 1)
    assert "tiny" in str(err) or "geometry" in str(err)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_dml_column_not_in_schema(encoding, impl):
    if encoding == "json":
        bad = _json_dml(zz="1")
    else:
        bad = _dml("avro", {"id": 1}).replace(b"\x04id", b"\x04iX")
    _raises(impl, encoding, [_boot(encoding), bad], 1, column="zz" if encoding == "json" else "iX")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_dml_column_of_older_version(encoding, impl):
    """A column that only the newer version has is rejected in a row of the older version."""
    newer = SimpleTable("db", "t", 10, make_tso(T0 - 500), COLS + [SimpleColumn("late", "int")])
    bad = _dml(encoding, {"id": 1, "late": 5}, table=newer)
    enc = _enc(encoding)
    # re-label the row as the older schema version
    if encoding == "json":
        bad = bad.replace(b'"schemaVersion":%d' % newer.version, b'"schemaVersion":%d' % TABLE.version)
    else:
        from ticdc_fast.testing.simple_encoder import _avro_long
        bad = bad.replace(_avro_long(newer.version), _avro_long(TABLE.version))
    values = [enc.encode_value(SimpleBootstrap(TABLE)), enc.encode_value(SimpleBootstrap(newer)), bad]
    _raises(impl, encoding, values, 2, column="late")


# --------------------------------------------------------------------------- values
JSON_BAD_VALUES = {
    "tinyint_300": ("ti", "300"), "tinyint_-129": ("ti", "-129"),
    "unsigned_negative": ("u", "-1"), "uint64_overflow": ("u", "18446744073709551616"),
    "int64_overflow": ("bi", "9223372036854775808"), "int64_underflow": ("bi", "-9223372036854775809"),
    "int_as_json_number": ("id", 1), "int_leading_zero": ("id", "01"), "int_plus": ("id", "+1"),
    "int_space": ("id", " 1"), "int_empty": ("id", ""), "int_fraction": ("id", "1.0"),
    "enum_beyond_uint16": ("e", "70000"),
    "float_text": ("f", "abc"), "float32_overflow": ("f", "1e39"), "double_overflow": ("d", "1e400"),
    "double_nan": ("d", "NaN"), "double_inf": ("d", "+Inf"),
    "base64_bad_chars": ("vb", "!!!!"), "base64_no_padding": ("vb", "YWI"),
    "base64_nonzero_pad_bits": ("vb", "YWJ="), "base64_urlsafe": ("vb", "-_8="),
    "base64_whitespace": ("vb", "YW I="), "binary_as_number": ("vb", 5),
    "text_as_number": ("v", 5), "text_as_object": ("v", {"a": 1}),
    "timestamp_unknown_location": ("ts", {"location": "Mars/Olympus", "value": "2024-01-01 00:00:00"}),
    "timestamp_location_not_string": ("ts", {"location": 8, "value": "2024-01-01 00:00:00"}),
    "timestamp_without_location": ("ts", {"value": "2024-01-01 00:00:00"}),
    "timestamp_bad_month": ("ts", {"location": "UTC", "value": "2024-13-01 00:00:00"}),
}


@pytest.mark.parametrize("case", sorted(JSON_BAD_VALUES))
def test_json_bad_value(case, impl):
    col, v = JSON_BAD_VALUES[case]
    _raises(impl, "json", [_boot("json"), _json_dml(), _json_dml(**{col: v})], 2)


@pytest.mark.parametrize("case", ["tinyint_300", "uint64_overflow", "base64_nonzero_pad_bits",
                                  "int_leading_zero", "double_nan"])
def test_json_bad_value_names_column(case, impl):
    col, v = JSON_BAD_VALUES[case]
    _raises(impl, "json", [_boot("json"), _json_dml(**{col: v})], 1, column=col)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_int_out_of_range_for_type(encoding, impl):
    # the encoder writes values as given, so a forged 300 for a TINYINT reaches the decoder
    bad = _dml(encoding, {"id": 1, "ti": 300})
    _raises(impl, encoding, [_boot(encoding), bad], 1, column="ti")
    bad = _dml(encoding, {"id": 1, "e": 65536})
    _raises(impl, encoding, [_boot(encoding), bad], 1, column="e")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_timestamp_unknown_location(encoding, impl):
    bad = _dml(encoding, {"id": 1, "ts": ("Mars/Olympus", "2024-01-01 00:00:00")})
    good = _dml(encoding, {"id": 2, "ts": ("Asia/Tokyo", "2024-01-01 09:00:00")})
    err = _raises(impl, encoding, [_boot(encoding), good, bad], 2)
    assert "Mars/Olympus" in str(err)
    # the same message in typed mode
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", implementation=impl,
                                   schema=pa.schema([("ts", pa.timestamp("us", tz="UTC"))]))
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, [_boot(encoding), good, bad])
    assert ei.value.message_index == 2


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_typed_value_does_not_fit_target(encoding, impl):
    vals = [_boot(encoding), _dml(encoding, {"id": 1, "bi": 300})]
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", implementation=impl,
                                   schema=pa.schema([("bi", pa.int8())]))
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode(None, vals)
    assert ei.value.message_index == 1 and ei.value.column == "bi"
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", implementation=impl,
                                   schema=pa.schema([("e", pa.string())]))
    with pytest.raises(ticdc_fast.DecodeError) as ei:   # ENUM index 2 of a 1-element enum
        dec.decode(None, [_boot(encoding), _dml(encoding, {"id": 1, "e": 2})])
    assert ei.value.message_index == 1 and ei.value.column == "e"


# --------------------------------------------------------------------------- Avro framing
def _one_dml() -> bytes:
    v = _dml("avro", {"id": 1}, table=ONE)
    assert v.endswith(b"\x02\x04id\x02\x02\x00\x00")     # data map: 1 entry "id" -> long 1; old null
    return v


def _one_with_entry(entry: bytes) -> bytes:
    """ONE's INSERT with the ``data`` map content replaced by ``entry`` (block count, entries and
    the end-of-map 0x00); ``old`` stays null."""
    v = _one_dml()
    return v[:-len(b"\x02\x04id\x02\x02\x00\x00")] + entry + b"\x00"


def test_avro_entry_helper_builds_valid_messages(impl):
    """The well-formed versions of the forged entries below decode (so each forgery fails for
    the reason it names)."""
    dec = ticdc_fast.SimpleDecoder("avro", implementation=impl)
    good = [_one_with_entry(b"\x02\x04id\x02\x02\x00"),                     # long 1
            _one_with_entry(b"\x02\x04id\x02" + b"\xff" * 9 + b"\x01\x00"),   # 10-byte long: -2**63
            _one_with_entry(b"\x02\x04id\x02" + b"\xfe" + b"\xff" * 8 + b"\x01\x00"),  # 2**63-1
            _one_with_entry(b"\x01\x08\x04id\x02\x02\x00")]                  # negative block count + size
    rows = dec.decode(None, [_boot("avro", ONE)] + good).to_pylist()
    assert [dict(r["after"])["id"] for r in rows[1:]] == ["1", str(-(1 << 63)), str((1 << 63) - 1), "1"]


def _avro_raises(impl, bad, **kw):
    return _raises(impl, "avro", [_boot("avro", ONE), _one_dml(), bad], 2, **kw)


@pytest.mark.parametrize("first", [0x00, 0x02, 0x14, 0x18, 0x7F, 0xFF])
def test_avro_wrong_first_byte(first, impl):
    bad = bytes([first]) + _one_dml()[1:]
    err = _avro_raises(impl, bad)
    assert "0x16" in str(err)


def test_avro_truncated_at_every_byte(impl):
    v = _dml("avro", {"id": 1, "ti": -5, "u": (1 << 64) - 1, "vb": b"\x00\xff", "ts": ("Asia/Tokyo", "2024-01-01 09:00:00"),
                      "e": 1, "f": 1.5, "d": -2.25, "v": "héllo"})
    boot = _boot("avro")
    ok = ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, [boot, v])
    assert ok.num_rows == 2
    for cut in range(len(v)):
        dec = ticdc_fast.SimpleDecoder("avro", implementation=impl)
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            dec.decode(None, [boot, v[:cut]])
        assert ei.value.message_index == 1, (cut, str(ei.value))


def test_avro_truncated_bootstrap_at_every_byte(impl):
    boot = _boot("avro")
    for cut in range(len(boot)):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, [_one_dml(), boot[:cut]])
        assert ei.value.message_index == 1, cut


def test_avro_trailing_bytes(impl):
    _avro_raises(impl, _one_dml() + b"\x00", match="trailing")


@pytest.mark.parametrize("branch", [8, 9, 63])
def test_avro_union_index_out_of_range(branch, impl):
    """The map-value union has 8 branches (null long float double string bytes Timestamp
    UnsignedBigint): index 8 and beyond are invalid."""
    zig = bytes([branch << 1]) if branch < 64 else None
    _avro_raises(impl, _one_with_entry(b"\x02\x04id" + zig + b"\x02\x00"))


@pytest.mark.parametrize("entry,name", [(b"\x02\x04id\x01\x02\x00", "-1"),
                                        (b"\x02\x04id\x05\x02x\x00", "-3")], ids=["minus1", "minus3"])
def test_avro_negative_union_index(entry, name, impl):
    # the core and the twin alike: an index below 0 is no branch (Avro indexes are never negative)
    err = _avro_raises(impl, _one_with_entry(entry))
    assert (err.reason, err.column) == ("Avro union index out of range", "id")


def test_avro_top_level_union_out_of_range(impl):
    _avro_raises(impl, b"\x18" + _one_dml()[1:])


@pytest.mark.parametrize("payload_branch", [b"\x01", b"\x08", b"\x7f"], ids=["minus1", "4", "minus64"])
def test_avro_dml_payload_union_index_out_of_range(payload_branch, impl):
    """Message.payload is a union of the 4 message records: the core names the bad index (fuzz F6:
    it used to stop with "a JSON form the Cython core does not decode")."""
    dml = _one_dml()
    assert dml[:3] == b"\x16\x06\x06"            # Message, type DML, payload branch DML
    err = _avro_raises(impl, dml[:2] + payload_branch + dml[3:])
    assert (err.reason, err.byte_offset) == ("Avro union index out of range", 2)


@pytest.mark.parametrize("op", [b"\x05", b"\x06", b"\x01"], ids=["minus3", "3", "minus1"])
def test_avro_dml_type_enum_out_of_range(op, impl):
    """DML.type is the DMLType enum (3 symbols): the core names the bad index (fuzz: it used to
    stop with "a form the Cython core does not decode")."""
    dml = _one_dml()
    at = 3 + 1 + 1 + len("db") + 1 + len("one")       # Message head, version, database, table
    while dml[at] & 0x80:                              # tableID varint
        at += 1
    at += 1
    assert dml[at] == 0x00                             # INSERT
    err = _avro_raises(impl, dml[:at] + op + dml[at + 1:])
    assert (err.reason, err.byte_offset) == ("Avro enum index out of range", at)


def test_avro_enum_index_out_of_range(impl):
    # Message.type enum has 4 symbols: index 4 (zigzag 0x08) is invalid
    _avro_raises(impl, b"\x16\x08" + _one_dml()[2:])


def test_avro_payload_branch_mismatch(impl):
    # type DML with a DDL payload branch
    _avro_raises(impl, b"\x16\x06\x04" + _one_dml()[3:])


def test_avro_varint_overflow_in_length(impl):
    # map block count encoded with 11 bytes
    v = _one_dml()
    i = v.index(b"\x02\x04id")
    _avro_raises(impl, v[:i] + b"\x82" + b"\x80" * 9 + b"\x02" + v[i + 1:])


@pytest.mark.parametrize("payload,name", [
    (b"\xff" * 10 + b"\x01", "11 bytes"),
    (b"\x80" * 10 + b"\x02", "11 bytes, high bits beyond 64"),
    (b"\xff" * 12, "13 bytes"),
], ids=["11-bytes", "11-bytes-high-bits", "13-bytes"])
def test_avro_varint_overflow_in_value(payload, name, impl):
    err = _avro_raises(impl, _one_with_entry(b"\x02\x04id\x02" + payload + b"\x00"))
    assert err.reason == "Avro varint overflows 64 bits"


@pytest.mark.parametrize("where", ["database", "map_key", "string_value"])
def test_avro_negative_length(where, impl):
    v = _one_dml()
    if where == "database":
        bad = v[:4] + b"\x01" + v[5:]                 # database "db": length 2 -> -1
    elif where == "map_key":
        bad = _one_with_entry(b"\x02\x01id\x02\x02\x00")
    else:
        bad = _one_with_entry(b"\x02\x04id\x08\x03xx\x00")
    _avro_raises(impl, bad)


def test_avro_length_beyond_message(impl):
    _avro_raises(impl, _one_with_entry(b"\x02\xfe\xff\xff\xff\x0fid\x02\x02\x00"))


@pytest.mark.parametrize("entry", [
    b"\x02\x04id\x08\x02x\x00",          # string "x" for a BIGINT
    b"\x02\x04id\x0a\x02x\x00",          # bytes for a BIGINT
    b"\x02\x04id\x0c\x06UTC\x02x\x00",   # Timestamp record for a BIGINT (bad wall clock too)
], ids=["string", "bytes", "timestamp"])
def test_avro_wrong_branch_for_column(entry, impl):
    _avro_raises(impl, _one_with_entry(entry), column="id")


def test_avro_invalid_utf8_text(impl):
    # Avro strings carry raw bytes; with invalid_utf8="error" invalid UTF-8 in a utf8mb4 column
    # is an error (the default replaces it: tests/test_invalid_utf8.py)
    bad = _dml("avro", {"id": 1, "v": b"a\xffb"})
    _raises(impl, "avro", [_boot("avro"), bad], 1, column="v", invalid_utf8="error")


# --------------------------------------------------------------------------- compression
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("sent,configured", [("none", "snappy"), ("none", "lz4"), ("snappy", "none"),
                                             ("snappy", "lz4"), ("lz4", "none"), ("lz4", "snappy")])
def test_wrong_compression_configured(encoding, sent, configured, impl):
    enc = SimpleEncoder(encoding, compression=sent)
    values = [enc.encode_value(SimpleWatermark(make_tso(T0)))]
    _raises(impl, encoding, values, 0, compression=configured)


@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_corrupt_compressed_value(compression, impl):
    enc = SimpleEncoder("json", compression=compression)
    good = enc.encode_value(SimpleWatermark(make_tso(T0)))
    bad = good[: len(good) // 2]
    _raises(impl, "json", [good, bad], 1, compression=compression)


def test_snappy_forged_huge_length(impl):
    # a snappy block declaring 4 GiB of output from a few bytes is refused up front
    _raises(impl, "json", [b"\xff\xff\xff\xff\x0f\x00"], 0, compression="snappy")


def test_null_value_rejected(impl):
    _raises(impl, "json", [_boot("json"), None], 1)


def test_key_count_mismatch(impl):
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode([None, None], [_boot("json")])


def test_bad_options():
    with pytest.raises(ValueError):
        ticdc_fast.SimpleDecoder("xml")
    with pytest.raises(ValueError):
        ticdc_fast.SimpleDecoder("json", on_hold_overflow="drop")
    with pytest.raises(ValueError):
        ticdc_fast.SimpleDecoder("json", compression="gzip")
    with pytest.raises(ValueError):
        ticdc_fast.SimpleDecoder("json", timezone="Mars/Olympus")
    with pytest.raises(ValueError):
        ticdc_fast.SimpleDecoder("json", schema=pa.schema([("a", pa.int32())]))   # no table=


def test_decoder_usable_after_error(impl):
    """A DecodeError leaves the decoder usable for the next batch."""
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, [_boot("json"), b"{"])
    rows = dec.decode(None, [_boot("json"), _dml("json", {"id": 3})]).to_pylist()
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT"]
    assert dict(rows[1]["after"]) == {"id": "3"}


def test_no_stale_rows_after_error_with_offsets(impl):
    wm = _enc("json").encode_value(SimpleWatermark(make_tso(T0)))
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(None, [wm, wm, wm, b"{"], offsets=[1, 2, 3, 4])
    batch = dec.decode(None, [wm], offsets=[9])
    assert batch.column("_offset").to_pylist() == [9]


@pytest.mark.parametrize("text", [b"0000-00-00 00:00:\xff\xff", b"0000-00-00 00:0\xff:00"])
@pytest.mark.parametrize("typed", [False, True])
def test_avro_zero_timestamp_text_not_utf8(text, typed, impl):
    """An Avro TIMESTAMP text that starts like the zero date but is not UTF-8 cannot be kept as
    sent: a DecodeError at the value, naming the column (the twin once raised UnicodeEncodeError)."""
    good = _dml("avro", {"id": 1, "ts": "0000-00-00 00:00:00"})
    bad = good.replace(b"0000-00-00 00:00:00", text)
    assert len(bad) == len(good) and bad != good
    kw = dict(table="db.t", schema=pa.schema([("id", pa.int32()), ("ts", pa.string())])) if typed else {}
    err = _raises(impl, "avro", [_boot("avro"), good, bad], 2, column="ts", match="zero date", **kw)
    assert err.byte_offset == bad.index(text) - 1   # the Timestamp branch's value: its length byte
