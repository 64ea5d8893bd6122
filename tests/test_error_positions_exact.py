"""Both implementations report the same DecodeError — reason, part, byte offset and column — for
JSON syntax errors, structural errors and values that cannot be converted (issue 13 item 4): a
value error names the byte offset of that value inside the message, as the Cython core does."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from conftest import confluent_framed, frame, include_before_value_schemas, tidb_typed, u64

import ticdc_fast
from ticdc_fast.testing import (AvroEncoder, SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML, SimpleEncoder,
                                SimpleTable, SimpleWatermark, make_tso, realistic_avro_changefeed)


def _error(call) -> tuple:
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        call()
    e = ei.value
    return e.message_index, e.reason, e.part, e.byte_offset, e.column


# --------------------------------------------------------------------------- open protocol
KEY = {"ts": 5, "scm": "db", "tbl": "t", "t": 1}


def _open_value(members: bytes) -> bytes:
    return b'{"u":{"id":{"t":3,"f":11,"v":1},' + members + b"}}"


def _open_error(impl, key, value, **kw):
    k, v = frame([(key, value)])
    return _error(lambda: ticdc_fast.OpenDecoder(implementation=impl, **kw).decode([k], [v]))


def _in_value(value: bytes, token: bytes, skip: int = 0) -> int:
    """Offset in the Kafka value of ``token`` (its last copy) plus ``skip``: after the 8-byte
    length word of the one event."""
    return 8 + value.rindex(token) + skip


def test_open_integer_too_big_for_the_target_names_the_value(impl):
    value = _open_value(b'"n":{"t":3,"f":0,"v":300}')
    got = _open_error(impl, KEY, value, table="db.t", schema=pa.schema([("id", pa.int64()), ("n", pa.int8())]))
    assert got == (0, "integer out of range for the target type", "value", _in_value(value, b"300"), "n")


def test_open_generic_value_out_of_its_type_range_names_the_value(impl):
    value = _open_value(b'"n": {"t": 1, "f": 0, "v": 300}')          # TINYINT, with spaces
    got = _open_error(impl, KEY, value)
    assert got == (0, "integer out of range", "value", _in_value(value, b"300"), "n")


def test_open_repeated_column_fails_at_the_copy_that_counts(impl):
    value = _open_value(b'"n":{"t":1,"f":0,"v":999},"n":{"t":1,"f":0,"v":-129}')
    got = _open_error(impl, KEY, value)
    assert got == (0, "integer out of range", "value", _in_value(value, b"-129"), "n")


def test_open_old_image_value_names_its_own_offset(impl):
    value = (b'{"u":{"id":{"t":3,"f":11,"v":1},"d":{"t":10,"f":0,"v":"2024-01-01"}},'
             b'"p":{"id":{"t":3,"f":11,"v":1},"d":{"t":10,"f":0,"v":"2024-13-01"}}}')
    got = _open_error(impl, KEY, value, table="db.t",
                      schema=pa.schema([("id", pa.int64()), ("d", pa.date32())]), old_image=True)
    assert got == (0, "invalid date", "value", _in_value(value, b'"2024-13-01"'), "d")


@pytest.mark.parametrize("column, fault, reason, token", [
    (b'{"t":"x","f":0,"v":1}', "t", "unknown column type code", b'"x"'),
    (b'{"t":3,"f":-1,"v":1}', "f", "invalid column flags", b"-1"),
    (b'{"t":3,"f":0,"h":1,"v":1}', "h", "invalid handle marker", b'"h":1'),
    (b'[1]', "object", "column value is not a JSON object", b"[1]"),
])
def test_open_column_faults_name_the_member_at_fault(impl, column, fault, reason, token):
    value = _open_value(b'"n":' + column)
    skip = 4 if fault == "h" else 0
    got = _open_error(impl, KEY, value)
    assert got == (0, reason, "value", _in_value(value, token, skip), "n")


@pytest.mark.parametrize("key, reason, token", [
    (b'{"ts":"5","scm":"db","tbl":"t","t":1}', "event key field 'ts' has an invalid value", b'"5"'),
    (b'{"ts":18446744073709551616,"scm":"db","tbl":"t","t":1}', "event key field 'ts' out of range",
     b"18446744073709551616"),
    (b'{"ts":5,"scm":7,"tbl":"t","t":1}', "event key field has an invalid value", b"7"),
    (b'{"ts":5,"scm":"db","tbl":"t","rid":9223372036854775808,"t":1}', "event key field out of int64 range",
     b"9223372036854775808"),
    (b'{"ts":5,"scm":"db","tbl":"t","t":1.5}', "event key field 't' has an invalid value", b"1.5"),
])
def test_open_key_field_errors_name_the_field_value(impl, key, reason, token):
    got = _open_error(impl, key, _open_value(b'"n":{"t":1,"f":0,"v":1}'))
    assert got == (0, reason, "key", 16 + key.index(token), None)


def test_open_key_without_ts_names_the_last_byte_of_the_key_document(impl):
    key = b'{"scm":"db","tbl":"t","t":1} '
    got = _open_error(impl, key, _open_value(b'"n":{"t":1,"f":0,"v":1}'))
    assert got == (0, "event key has no ts", "key", 16 + len(key) - 1, None)


def test_open_ddl_errors_name_the_member(impl):
    key = {"ts": 5, "scm": "db", "tbl": "t", "t": 2}
    value = b'{"q":"CREATE TABLE t (a int)","t":2147483648}'
    assert _open_error(impl, key, value) == (0, "DDL type is not an int32", "value",
                                            _in_value(value, b"2147483648"), None)


@pytest.mark.parametrize("value, reason, at", [
    (b'{"u":{"n":{"t":1,"f":0,"v":1}', "malformed JSON: unexpected end of data", 29),
    (b'{"u":{"n":{"t":1 "f":0,"v":1}}}', "malformed JSON: expected ',' or '}'", 17),
    (b'{"x":[1 2],"u":{}}', "malformed JSON: expected ',' or a closing bracket", 8),
    (b'{"u":{"n":{"t":1,"f":0,"v":"a\\qb"}}}', "malformed JSON: invalid escape", 29),
    (b'{"u":{"n":{"t":1,"f":0,"v":012}}}', "malformed JSON: number with leading zero", 28),
    (b'{"u":{"n":{"t":1,"f":0,"v":"\\ud800"}}}', "malformed JSON: lone high surrogate", 28),
    (b'{"u":{}} x', "malformed JSON: trailing characters", 9),
    (b' [1,2', "row value is not a JSON object", 1),
])
def test_open_json_syntax_errors_are_the_core_scanners(impl, value, reason, at):
    assert _open_error(impl, KEY, value) == (0, reason, "value", 8 + at, None)


def test_open_unsupported_batch_version_is_unsigned(impl):
    k, v = frame([(KEY, _open_value(b'"n":{"t":1,"f":0,"v":1}'))])
    k = u64((1 << 64) - 1) + k[8:]
    got = _error(lambda: ticdc_fast.OpenDecoder(implementation=impl).decode([k], [v]))
    assert got == (0, "unsupported batch version 18446744073709551615", "key", 0, None)


# --------------------------------------------------------------------------- simple protocol, JSON
T0 = 1_714_521_600_000
TABLE = SimpleTable("db", "t", 10, make_tso(T0 - 1000),
                    [SimpleColumn("id", "int", nullable=False), SimpleColumn("ti", "tinyint"),
                     SimpleColumn("ts", "timestamp"), SimpleColumn("d", "date")])


def _simple(data: bytes) -> list[bytes]:
    enc = SimpleEncoder("json")
    boot = enc.encode_value(SimpleBootstrap(TABLE))
    doc = json.loads(enc.encode_value(SimpleDML(TABLE, "INSERT", make_tso(T0), data={"id": 1})))
    doc["data"] = {}
    text = json.dumps(doc, separators=(",", ":")).encode()
    return [boot, text.replace(b'"data":{}', b'"data":' + data)]


def _simple_error(impl, values, **kw):
    return _error(lambda: ticdc_fast.SimpleDecoder("json", implementation=impl, **kw).decode(None, values))


def test_simple_integer_out_of_range_names_the_value(impl):
    values = _simple(b'{"id":"1","ti":"300"}')
    assert _simple_error(impl, values) == (1, "integer out of range", "value",
                                           values[1].index(b'"300"'), "ti")


def test_simple_typed_value_names_the_value(impl):
    values = _simple(b'{"id":"1","d":"2024-02-30"}')
    schema = pa.schema([("id", pa.int64()), ("d", pa.date32())])
    assert _simple_error(impl, values, table="db.t", schema=schema) == (
        1, "invalid date", "value", values[1].index(b'"2024-02-30"'), "d")


def test_simple_timestamp_object_fails_at_its_wall_clock_text(impl):
    values = _simple(b'{"id":"1","ts":{"location":"UTC","value":"2024-01-01 25:00:00"}}')
    assert _simple_error(impl, values) == (1, "invalid time of day", "value",
                                           values[1].index(b'"2024-01-01 25:00:00"'), "ts")


def test_simple_timestamp_object_of_another_shape_fails_at_the_object(impl):
    values = _simple(b'{"id":"1","ti":"999","ts":{"location":"UTC","value":7}}')
    # its shape is judged when the image is read, before any value is converted
    assert _simple_error(impl, values) == (1, "TIMESTAMP value must be {location, value} strings",
                                           "value", values[1].index(b'{"location"'), "ts")


def test_simple_unknown_column_names_its_first_copy(impl):
    values = _simple(b'{"id":"1","nope":null,"ti":"1","nope":null}')
    assert _simple_error(impl, values) == (1, "column is not in the message's schema version", "value",
                                           values[1].index(b'"nope"'), "nope")


def test_simple_escaped_value_fails_at_its_place_in_the_message_as_sent(impl):
    """The core declines escaped text and decodes the message again in its canonical form; the
    error still names the value's offset in the message as Kafka delivered it."""
    values = _simple(b'{"id":"1", "ti":"\\u0033\\u0030\\u0030"}')
    assert _simple_error(impl, values) == (1, "integer out of range", "value",
                                           values[1].index(b'"\\u0033'), "ti")


@pytest.mark.parametrize("cut, reason", [
    (b'"ti":"1"}', "malformed JSON: unexpected end of data"),
])
def test_simple_json_syntax_errors_are_the_core_scanners(impl, cut, reason):
    values = _simple(b'{"id":"1","ti":"1"}')
    values[1] = values[1][:-len(cut) - 2]
    assert _simple_error(impl, values) == (1, reason, "value", len(values[1]), None)


@pytest.mark.parametrize("bad", [b"\xff", b"\xe6\x97x", b"\xed\xa0\x80", b"\xc0\xaf"],
                         ids=["byte", "cut-sequence", "surrogate", "overlong"])
def test_simple_invalid_utf8_is_reported_at_its_first_bad_sequence(impl, bad):
    values = _simple(b'{"id":"1","d":"\xc3\xa9t\xc3\xa9","ti":"' + bad + b'"}')
    assert _simple_error(impl, values) == (1, "malformed JSON: invalid UTF-8", "value",
                                           values[1].index(bad), None)


def test_simple_invalid_utf8_cut_at_the_end_is_reported_at_its_lead_byte(impl):
    values = _simple(b'{"id":"1"}')
    at = len(values[1])
    values[1] += b"\xe6\x97"
    assert _simple_error(impl, values) == (1, "malformed JSON: invalid UTF-8", "value", at, None)


# the envelope's own faults name the value at fault
def _member_value(value: bytes, name: bytes) -> int:
    """Offset of the value of the (last) top-level member ``name``."""
    return value.rindex(b'"' + name + b'":') + len(name) + 3


def _simple_dml(**kw) -> list[bytes]:
    enc = SimpleEncoder("json")
    return [enc.encode_value(SimpleBootstrap(TABLE)),
            enc.encode_value(SimpleDML(TABLE, kw.pop("op", "INSERT"), kw.pop("commit_ts", make_tso(T0)), **kw))]


@pytest.mark.parametrize("field, kw", [
    ("commitTs", dict(commit_ts=1 << 63)),
    ("tableID", dict(table_id=(1 << 64) - 1)),
    ("buildTs", dict(build_ts=1 << 63)),
])
def test_simple_envelope_number_beyond_int64_names_its_value(impl, field, kw):
    values = _simple_dml(data={"id": 1}, **kw)
    assert _simple_error(impl, values) == (1, f"{field} out of int64 range", "value",
                                           _member_value(values[1], field.encode()), None)


@pytest.mark.parametrize("kw, reason, field", [
    (dict(commit_ts=1 << 63, data={"id": 1}), "commitTs out of int64 range", b"commitTs"),
    (dict(op="DELETE", old={"id": 1}), "DELETE without the image it needs", b"type"),
])
def test_simple_another_tables_row_in_typed_output_is_judged_as_far_as_the_core_judges_it(impl, kw, reason,
                                                                                      field):
    """Its images and envelope numbers are read before the row is left out, by both."""
    values = _simple_dml(**kw)
    values[1] = values[1].replace(b'"old":', b'"data":')     # a DELETE sent with data only
    schema = pa.schema([("id", pa.int64())])
    assert _simple_error(impl, values, table="db.other", schema=schema) == (
        1, reason, "value", _member_value(values[1], field), None)


def test_simple_repeated_envelope_member_fails_at_its_last_copy(impl):
    values = _simple_dml(data={"id": 1})
    values[1] = values[1][:-1] + b',"buildTs":9223372036854775808}'
    assert _simple_error(impl, values) == (1, "buildTs out of int64 range", "value",
                                           _member_value(values[1], b"buildTs"), None)


@pytest.mark.parametrize("op, image, other", [("INSERT", b"data", b"old"), ("UPDATE", b"old", b"data"),
                                               ("DELETE", b"old", b"data")])
def test_simple_dml_without_its_image_fails_at_its_type(impl, op, image, other):
    values = _simple_dml(op=op, data={"id": 1}, old={"id": 1})
    values[1] = values[1].replace(b'"' + image + b'":', b'"' + other + b'":')   # the encoder writes both
    assert _simple_error(impl, values) == (1, f"{op} without the image it needs", "value",
                                           _member_value(values[1], b"type"), None)


@pytest.mark.parametrize("checksum, member, token", [
    (b'{"version":"1"}', "version", b'"1"'),
    (b'{"version":2147483648,"corrupted":1}', "version", b"2147483648"),
    (b'{"version":1,"corrupted":1,"current":-1}', "corrupted", b'1,"current"'),
    (b'{"current":1.5}', "current", b"1.5"),
    (b'{"previous":null,"current":18446744073709551615}', "previous", b"null"),
    (b'{"current":true,"current":7,"previous":[1]}', "previous", b"[1]"),
])
def test_simple_checksum_member_of_a_wrong_form_names_its_value(impl, checksum, member, token):
    values = _simple_dml(data={"id": 1})
    values[1] = values[1][:-1] + b',"checksum":' + checksum + b"}"
    at = values[1].rindex(b'"checksum":') + len(b'"checksum":') + checksum.index(token)
    assert _simple_error(impl, values) == (1, f"invalid checksum object ({member})", "value", at, None)


def test_simple_checksum_minus_zero_is_zero(impl):
    values = _simple_dml(data={"id": 1})
    values[1] = values[1][:-1] + b',"checksum":{"version":-0,"current":-0}}'
    row = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, values).to_pylist()[-1]
    assert (row["_checksum_version"], row["_checksum_current"]) == (0, 0)


def test_simple_timestamp_location_too_long_to_load_names_the_location(impl):
    location = "Zone/" + "x" * 300
    ts = json.dumps({"location": location, "value": "2024-01-01 00:00:00"}).encode()
    values = _simple(b'{"id":"1","ts":' + ts + b"}")
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, values)
    e = ei.value
    assert e.reason.startswith("TIMESTAMP location: ")
    assert (e.message_index, e.part, e.byte_offset, e.column) == (1, "value", values[1].index(b'"Zone/'), None)


# --------------------------------------------------------------------------- simple protocol, Avro
def _first_difference(a: bytes, b: bytes) -> int:
    return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)


def _simple_avro(table=TABLE, **kw) -> tuple[list[bytes], bytes]:
    """A BOOTSTRAP and a DML of the Avro encoding, and a twin DML whose bytes first differ from it
    at the value under test (each keyword a pair: this message's value, the twin's)."""
    enc = SimpleEncoder("avro")
    this = {k: v[0] for k, v in kw.items()}
    other = {k: v[1] for k, v in kw.items()}
    base = dict(op="INSERT", commit_ts=make_tso(T0), build_ts=T0, data={"id": 1})

    def dml(over):
        args = {**base, **over}
        return enc.encode_value(SimpleDML(table, args.pop("op"), args.pop("commit_ts"), **args))
    return [enc.encode_value(SimpleBootstrap(table)), dml(this)], dml(other)


def _simple_avro_error(impl, values):
    return _error(lambda: ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, values))


@pytest.mark.parametrize("field, kw", [
    ("commitTs", dict(commit_ts=((1 << 64) - 1, (1 << 64) - 2))),
    ("tableID", dict(table_id=(-1, -2))),       # uint64 values written as Go's int64
    ("buildTs", dict(build_ts=(-1, -2))),
])
def test_simple_avro_envelope_long_beyond_int64_names_its_value(impl, field, kw):
    values, other = _simple_avro(**kw)
    assert _simple_avro_error(impl, values) == (1, f"{field} out of int64 range", "value",
                                                _first_difference(values[1], other), None)


def test_simple_avro_dml_without_its_image_fails_at_its_type(impl):
    values, other = _simple_avro(op=("INSERT", "UPDATE"), old=(None, {"id": 1}))
    # the INSERT ends with data = 0x02 + map, old = 0x00; the UPDATE with both maps
    image = values[1][-(len(other) - len(values[1])) - 1:-1]
    assert other.endswith(b"\x02" + image + b"\x02" + image)
    values[1] = values[1][:-len(image) - 2] + b"\x00\x02" + image          # sent as old, not data
    assert _simple_avro_error(impl, values) == (1, "INSERT without the image it needs", "value",
                                                _first_difference(values[1], other), None)


@pytest.mark.parametrize("location", [b"UT\xff", b"Zone/" + b"x" * 300], ids=["not-utf8", "too-long"])
def test_simple_avro_timestamp_location_that_cannot_load_names_the_location(impl, location):
    values, _ = _simple_avro(data=({"id": 1, "ts": ("UTC", "2024-01-01 00:00:00")},) * 2)
    at = values[1].index(b"\x06UTC")            # the location's length, then its bytes
    values[1] = values[1][:at] + _zigzag_long(len(location)) + location + values[1][at + 4:]
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, values)
    e = ei.value
    assert e.reason.startswith("TIMESTAMP location: ")
    assert (e.message_index, e.part, e.byte_offset, e.column) == (1, "value", at, None)


def _zigzag_long(n: int) -> bytes:
    z, out = (n << 1) ^ (n >> 63), bytearray()
    while z > 0x7F:
        out.append(z & 0x7F | 0x80)
        z >>= 7
    return bytes(out + bytes([z]))


# --------------------------------------------------------------------------- Avro protocol
@pytest.mark.parametrize("arrow", [False, True], ids=["lists", "arrow"])
def test_avro_empty_key_has_no_magic_byte(impl, arrow):
    """The core read the byte after an empty key (another message's) to judge the magic byte."""
    events, cols = realistic_avro_changefeed(12, seed=4)
    enc = AvroEncoder(table_columns=cols)
    msgs = enc.encode(events)
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    bad = next(i for i, k in enumerate(keys) if k is not None and i + 1 < len(keys) and keys[i + 1])
    keys[bad] = b""
    if arrow:
        keys, values = pa.array(keys, pa.binary()), pa.array(values, pa.binary())
    dec = ticdc_fast.AvroDecoder(schemas={sid: text for _, sid, text in enc.registered}, implementation=impl)
    assert _error(lambda: dec.decode(keys, values)) == (
        bad, "key does not start with the Confluent magic byte 0x00", "key", 0, None)


def test_open_whitespace_after_the_colon_of_v_is_json(impl):
    """The core's fast read of a column object took `"v": 1` for a syntax error."""
    value = _open_value(b'"n":{"t":1,"f":0,"v": 2},"m":{"t":1,"f":0,"v": 300}')
    k, v = frame([(KEY, value)])
    got = _error(lambda: ticdc_fast.OpenDecoder(implementation=impl).decode([k], [v]))
    assert got == (0, "integer out of range", "value", _in_value(value, b"300"), "m")
    value = _open_value(b'"n":{"t":1,"f":0,"v":\t2}')
    k, v = frame([(KEY, value)])
    assert dict(ticdc_fast.OpenDecoder(implementation=impl).decode([k], [v]).column("after")[0].as_py()) \
        == {"id": "1", "n": "2"}


def test_open_integer_beyond_64_bits_is_out_of_range(impl):
    value = _open_value(b'"n":{"t":8,"f":0,"v":18446744073709551616}')
    assert _open_error(impl, KEY, value) == (0, "integer out of range", "value",
                                            _in_value(value, b"18446744073709551616"), "n")


def test_open_go_escape_error_is_worded_alike(impl):
    value = _open_value(b'"n":{"t":15,"f":1,"v":"a\\\\qb"}')        # binary VARCHAR, Go \q
    assert _open_error(impl, KEY, value) == (0, "invalid Go escape", "value", _in_value(value, b'"a\\\\q'), "n")


@pytest.mark.parametrize("location, shown", [
    ("b'101'", "b'101'"), ("UTC\x00x", "UTC\\x00x"), ("-24:00", "-24:00"), ("Asia/\x7f\tX", "Asia/\\x7f\\x09X"),
    # shown up to 200 bytes, never half an escape: the one that would pass 200 ends it
    ("A" * 198 + "\x01B", "A" * 198), ("A" * 150 + "\x1f" + "B" * 60, "A" * 150 + "\\x1f" + "B" * 46),
    ("東" * 70, "東" * 66 + "\ufffd")])
def test_simple_unknown_zone_is_worded_alike(impl, location, shown):
    ts = json.dumps({"location": location, "value": "2024-01-01 00:00:00"}).encode()
    values = _simple(b'{"id":"1","ts":' + ts + b"}")
    assert _simple_error(impl, values) == (1, f"unknown time zone '{shown}'", "value",
                                           values[1].index(b'"2024-01-01 00:00:00"'), "ts")


@pytest.mark.parametrize("typed", [False, True], ids=["generic", "typed"])
def test_open_bare_group_value_fails_at_its_bare_v(impl, typed):
    """A column that went to NULL written as a bare t,f,v group of "p" (protocols.md E.15): its
    old value fails at the bare "v" member that holds it."""
    value = (b'{"u":{"id":{"t":3,"f":11,"v":1},"n":{"t":1,"f":0,"v":null}},'
             b'"p":{"id":{"t":3,"f":11,"v":1},"t":1,"f":0,"v":300}}')
    kw = dict(table="db.t", schema=pa.schema([("id", pa.int64()), ("n", pa.int8())]), old_image=True) \
        if typed else {}
    assert _open_error(impl, KEY, value, **kw) == (0, "integer out of range", "value",
                                                  _in_value(value, b"300"), "n")


# Strings whose non-ASCII text comes before the byte that ends the run: the scanner's fast loop
# skips UTF-8 text once a string is known to be non-ASCII, and must still stop exactly at a
# control character, a backslash or the closing quote wherever it falls in a 16- or 8-byte window.
_TEXT_HEADS = ["é", "日本語", "😀", "aé" * 7, "日" * 11 + "x"]


@pytest.mark.parametrize("head", _TEXT_HEADS)
@pytest.mark.parametrize("gap", [0, 1, 7, 8, 9, 15, 16, 17, 31])
def test_control_character_after_non_ascii_text_is_found_at_its_byte(impl, head, gap):
    text = head.encode() + "ü".encode() * (gap // 2) + b"a" * (gap % 2)
    value = _open_value(b'"s":{"t":15,"f":0,"v":"' + text + b'\x01tail"}')
    got = _open_error(impl, KEY, value)
    assert got[:4] == (0, "malformed JSON: control character in string", "value",
                       _in_value(value, b"\x01"))


@pytest.mark.parametrize("head", _TEXT_HEADS)
@pytest.mark.parametrize("gap", [0, 1, 8, 15, 16, 17])
def test_escapes_and_quote_after_non_ascii_text_decode_exactly(impl, head, gap):
    text = head + "ü" * (gap // 2) + "a" * (gap % 2) + '"\\/\n' + "終" * gap
    value = _open_value(b'"s":{"t":15,"f":0,"v":' + json.dumps(text, ensure_ascii=False).encode() + b"}")
    k, v = frame([(KEY, value)])
    batch = ticdc_fast.OpenDecoder(implementation=impl).decode([k], [v])
    assert dict(batch.column("after")[0].as_py())["s"] == text


# Long digit runs (the scanner skips digits 8 at a time): a bad byte anywhere in or after the
# run, in the integer, fraction or exponent part, is reported at the same byte by both.
_NUMBER_TAILS = [b"x", b"a}", b".", b".x", b"e", b"e+", b"E-x", b"-", b"/", b":", b"\x00"]


@pytest.mark.parametrize("digits", [7, 8, 9, 15, 16, 17, 24])
@pytest.mark.parametrize("tail", _NUMBER_TAILS)
def test_bad_byte_after_a_long_digit_run_is_found_at_its_byte(impl, digits, tail):
    number = b"1" + b"234567890" * 3
    for body in (number[:digits], b"0." + number[:digits], b"1e" + number[:min(digits, 3)],
                 b"-" + number[:digits] + b"." + number[:digits]):
        value = _open_value(b'"d":{"t":5,"f":0,"v":' + body + tail + b"}")
        got = _open_error(impl, KEY, value)
        assert got[3] >= _in_value(value, body) + len(body) - 1
        if impl == "cython":                 # the twin defines the reason and the byte
            k, v = frame([(KEY, value)])
            assert got == _error(lambda: ticdc_fast.OpenDecoder(implementation="python").decode([k], [v]))


_AVRO_FIELDS = [{"name": "id", "type": tidb_typed("long", "BIGINT")},
                {"default": None, "name": "v", "type": ["null", tidb_typed("string", "TEXT")]}]
_AVRO_KEY, _AVRO_VALUE = include_before_value_schemas(_AVRO_FIELDS)
_AVRO_SCHEMAS = {1: json.dumps(_AVRO_KEY), 2: json.dumps(_AVRO_VALUE)}


def _avro_row(**kw) -> bytes:
    record = dict(id=5, v="new", _ticdc_before=None, _tidb_op="c", _tidb_commit_ts=make_tso(T0),
                  _tidb_commit_physical_time=0)
    return confluent_framed(2, _AVRO_VALUE, {**record, **kw})


def _avro_error(impl, keys, values, **kw):
    dec = ticdc_fast.AvroDecoder(schemas=_AVRO_SCHEMAS, implementation=impl, **kw)
    return _error(lambda: dec.decode(keys, values))


def test_avro_negative_commit_ts_names_its_value(impl):
    value = _avro_row(_tidb_commit_ts=-1)
    at = _first_difference(value, _avro_row(_tidb_commit_ts=-2))
    key = confluent_framed(1, _AVRO_KEY, {"id": 5})
    assert _avro_error(impl, [key], [value]) == (0, "commit ts out of range", "value", at, None)


@pytest.mark.parametrize("kind", [b"\x02", b"\x03"], ids=["checkpoint", "delete"])
def test_avro_control_commit_ts_beyond_int64_names_its_8_bytes(impl, kind):
    key = confluent_framed(1, _AVRO_KEY, {"id": 5}) if kind == b"\x03" else None
    value = kind + (1 << 63).to_bytes(8, "big")
    assert _avro_error(impl, [key], [value]) == (0, "commit ts out of range", "value", 1, None)


@pytest.mark.parametrize("v", ["extra", None], ids=["value", "null"])
def test_avro_column_not_in_the_target_names_its_value(impl, v):
    key = confluent_framed(1, _AVRO_KEY, {"id": 5})
    value = _avro_row(v=v)
    # the value, after its union index (the byte that differs between a null and a string)
    at = _first_difference(value, _avro_row(v=None if v else "x")) + 1
    got = _avro_error(impl, [key], [value], table="db.t", schema=pa.schema([("id", pa.int64())]),
                      extra_columns="error")
    assert got == (0, "column is not in the target schema", "value", at, "v")


# --------------------------------------------------------------------------- simple protocol: the
# front end's faults (envelope, control messages, checksums, time zones) name the value at fault
def _spaced(doc: dict) -> bytes:
    """A JSON message with a space after each ':' and ',', so that a member's value and its name
    are at different offsets from the ones a compact encoding would give."""
    return json.dumps(doc, separators=(", ", ": ")).encode()


def _value_in(value: bytes, name: str) -> int:
    """Offset of the value of the (last) member ``name`` of a ``_spaced`` message."""
    token = b'"' + name.encode() + b'": '
    return value.rindex(token) + len(token)


def _dml_doc(**change) -> dict:
    """The encoder's INSERT of TABLE as a dict; ``change``: members to set (None: remove)."""
    doc = json.loads(SimpleEncoder("json").encode_value(SimpleDML(TABLE, "INSERT", make_tso(T0),
                                                                  data={"id": 1})))
    for name, v in change.items():
        if v is None:
            doc.pop(name, None)
        else:
            doc[name] = v
    return doc


def _with(doc: dict, **change) -> dict:
    """``doc`` with members set (None: sent as JSON null)."""
    doc.update(change)
    return doc


_WATERMARK = {"version": 1, "type": "WATERMARK", "commitTs": make_tso(T0), "buildTs": T0}


@pytest.mark.parametrize("doc, reason, member", [
    (_with(_dml_doc(), type=5), "message has no type", "type"),
    (_with(_dml_doc(), database=5), "field 'database' has an invalid value", "database"),
    (_with(_dml_doc(), table=["t"]), "field 'table' has an invalid value", "table"),
    (_with(dict(_WATERMARK), sql=1), "field 'sql' has an invalid value", "sql"),
    (_with(_dml_doc(), claimCheckLocation=True), "field 'claimCheckLocation' has an invalid value",
     "claimCheckLocation"),
    (_with(_dml_doc(), tableID="7"), "field 'tableID' has an invalid value", "tableID"),
    (_with(_dml_doc(), commitTs=-1), "field 'commitTs' has an invalid value", "commitTs"),
    (_with(_dml_doc(), buildTs=1.5), "field 'buildTs' has an invalid value", "buildTs"),
    (_with(_dml_doc(), schemaVersion=1 << 64), "field 'schemaVersion' has an invalid value", "schemaVersion"),
    (_with(_dml_doc(), handleKeyOnly=1), "field 'handleKeyOnly' has an invalid value", "handleKeyOnly"),
    (_with(_dml_doc(), checksum=[1]), "field 'checksum' has an invalid value", "checksum"),
    (_with(_dml_doc(), type="UPSERT"), "unknown DML type 'UPSERT'", "type"),
    (_with(_dml_doc(), data=[1]), "data/old is not a JSON object", "data"),
    (_with(_dml_doc(), old="x"), "data/old is not a JSON object", "old"),
    (_with(_dml_doc(), table=None), "DML without database/table", "table"),
    (_with(_dml_doc(), database=None, table=None), "DML without database/table", "database"),
    (_with(_dml_doc(), tableSchema={}), "DML with a tableSchema", "tableSchema"),
    (_with(_dml_doc(), preTableSchema=None), "DML with a tableSchema", "preTableSchema"),
    (_with(_dml_doc(), buildTs=None), "DML with a null tableID or buildTs", "buildTs"),
    (_with(_dml_doc(), tableID=None, buildTs=None), "DML with a null tableID or buildTs", "tableID"),
    ({"version": 1, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": 1, "tableSchema": [1]},
     "BOOTSTRAP without tableSchema", "tableSchema"),
    (_with(dict(_WATERMARK), type="NOPE"), "unknown message type 'NOPE'", "type"),
    (_with(dict(_WATERMARK), commitTs=None), "message has no commitTs", "commitTs"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_simple_envelope_fault_names_the_member_value(impl, doc, reason, member):
    value = _spaced(doc)
    assert _simple_error(impl, [value]) == (0, reason, "value", _value_in(value, member), None)


def test_simple_envelope_fault_names_the_last_copy_of_a_repeated_member(impl):
    value = _spaced(_dml_doc())[:-1] + b', "type": "UPSERT"}'
    assert _simple_error(impl, [value]) == (0, "unknown DML type 'UPSERT'", "value",
                                            _value_in(value, "type"), None)


@pytest.mark.parametrize("doc, reason", [
    (_dml_doc(type=None), "message has no type"),
    (_dml_doc(database=None), "DML without database/table"),
    ({"version": 1, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": 1}, "BOOTSTRAP without tableSchema"),
    ({"version": 1, "type": "WATERMARK", "buildTs": 1}, "message has no commitTs"),
])
def test_simple_envelope_member_that_is_not_there_is_reported_at_byte_0(impl, doc, reason):
    assert _simple_error(impl, [_spaced(doc)]) == (0, reason, "value", 0, None)


@pytest.mark.parametrize("value, at", [(b'  [1, 2]', 2), (b'"x"', 0), (b'\n7', 1)])
def test_simple_message_that_is_not_an_object_is_reported_at_its_first_byte(impl, value, at):
    assert _simple_error(impl, [value]) == (0, "message is not a JSON object", "value", at, None)


# BOOTSTRAP, DDL and WATERMARK numbers beyond int64 (read by the front end, for both)
_BIG = 1 << 63


def _control_json(kind: str, **change) -> bytes:
    """A control message of TABLE; ``change``: top-level members to set, or the TableSchema's
    ``tableID``/``version``."""
    enc = SimpleEncoder("json")
    in_schema = {name: change.pop(name) for name in ("tableID", "version") if name in change}
    table = SimpleTable("db", "t", 10, make_tso(T0 - 1000), TABLE.columns)
    if kind == "BOOTSTRAP":
        doc = json.loads(enc.encode_value(SimpleBootstrap(table)))
    elif kind == "WATERMARK":
        doc = json.loads(enc.encode_value(SimpleWatermark(make_tso(T0))))
    else:
        doc = json.loads(enc.encode_value(SimpleDDL("ERASE", "DROP TABLE t", make_tso(T0), None, table)))
    doc.update(change)
    doc.get("tableSchema", doc.get("preTableSchema", {})).update(in_schema)
    return _spaced(doc)


def _schema_member(value: bytes, schema: str, name: str) -> int:
    """Offset of the value of ``name`` in the message's TableSchema ``schema``."""
    start = value.index(b'"' + schema.encode() + b'": ')
    token = b'"' + name.encode() + b'": '
    return value.index(token, start) + len(token)


@pytest.mark.parametrize("kind, change, reason, where", [
    ("WATERMARK", dict(commitTs=_BIG), "commitTs out of int64 range", "commitTs"),
    ("WATERMARK", dict(buildTs=(1 << 64) - 1), "buildTs out of int64 range", "buildTs"),
    ("BOOTSTRAP", dict(buildTs=_BIG), "buildTs out of int64 range", "buildTs"),
    ("BOOTSTRAP", dict(version=_BIG), "version out of int64 range", ("tableSchema", "version")),
    ("BOOTSTRAP", dict(tableID=-1), "tableID out of int64 range", ("tableSchema", "tableID")),
    ("BOOTSTRAP", dict(tableID=(1 << 64) - 1), "tableID out of int64 range", ("tableSchema", "tableID")),
    ("DDL", dict(commitTs=_BIG + 5), "commitTs out of int64 range", "commitTs"),
    ("DDL", dict(version=_BIG), "version out of int64 range", ("preTableSchema", "version")),
])
def test_simple_control_number_beyond_int64_names_its_value(impl, kind, change, reason, where):
    value = _control_json(kind, **change)
    at = _value_in(value, where) if type(where) is str else _schema_member(value, *where)
    assert _simple_error(impl, [value]) == (0, reason, "value", at, None)


def _simple_avro_control(make) -> tuple[bytes, bytes]:
    """An Avro control message and its twin, whose bytes first differ at the value under test:
    ``make(this)`` builds the event, ``this`` True for the message, False for the twin."""
    enc = SimpleEncoder("avro")
    return enc.encode_value(make(True)), enc.encode_value(make(False))


def _avro_table(table_id=10, version=make_tso(T0 - 1000)) -> SimpleTable:
    return SimpleTable("db", "t", table_id, version, TABLE.columns)


@pytest.mark.parametrize("reason, make", [
    ("commitTs out of int64 range", lambda this: SimpleWatermark(-1 if this else -2, build_ts=T0)),
    ("buildTs out of int64 range", lambda this: SimpleWatermark(make_tso(T0), build_ts=-1 if this else -2)),
    ("buildTs out of int64 range", lambda this: SimpleBootstrap(_avro_table(), build_ts=-1 if this else -2)),
    ("version out of int64 range",
     lambda this: SimpleBootstrap(_avro_table(version=_BIG if this else _BIG + 1), build_ts=T0)),
    ("tableID out of int64 range",
     lambda this: SimpleBootstrap(_avro_table(table_id=-1 if this else -2), build_ts=T0)),
    ("commitTs out of int64 range",
     lambda this: SimpleDDL("ERASE", "DROP TABLE t", -1 if this else -2, None, _avro_table(), build_ts=T0)),
    ("version out of int64 range",
     lambda this: SimpleDDL("ERASE", "DROP TABLE t", make_tso(T0), None,
                            _avro_table(version=_BIG if this else _BIG + 1), build_ts=T0)),
    ("tableID out of int64 range",
     lambda this: SimpleDDL("ALTER", "ALTER TABLE t", make_tso(T0), _avro_table(table_id=-1 if this else -2),
                            _avro_table(), build_ts=T0)),
], ids=["watermark-commitTs", "watermark-buildTs", "bootstrap-buildTs", "bootstrap-version",
        "bootstrap-tableID", "ddl-commitTs", "ddl-preTableSchema-version", "ddl-tableSchema-tableID"])
def test_simple_avro_control_number_beyond_int64_names_its_value(impl, reason, make):
    value, other = _simple_avro_control(make)
    assert _simple_avro_error(impl, [value]) == (0, reason, "value", _first_difference(value, other), None)


# row checksums (verify_checksum=True): at the checksum member the error is about
def _checksum_of(image: dict) -> int:
    from ticdc_fast.simple.checksum import row_checksum
    from ticdc_fast.simple.schema import table_schema_from_dict
    return row_checksum(table_schema_from_dict(TABLE.table_schema_json()), image)


_ROW = {"id": 1, "ti": 2}
_ROW_TEXT = {"id": "1", "ti": "2"}


def _checked_error(impl, encoding, values):
    return _error(lambda: ticdc_fast.SimpleDecoder(encoding, implementation=impl, verify_checksum=True)
                  .decode(None, values))


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("fault", ["current", "previous", "corrupted"])
def test_simple_checksum_fault_names_the_checksum_member(impl, encoding, fault):
    right = {"version": 1, "corrupted": False, "current": _checksum_of(_ROW_TEXT),
             "previous": _checksum_of(_ROW_TEXT)}
    wrong = {"current": right["current"] ^ 1, "previous": right["previous"] ^ 1, "corrupted": True}[fault]
    enc = SimpleEncoder(encoding)

    def update(checksum):
        return enc.encode_value(SimpleDML(TABLE, "UPDATE", make_tso(T0), data=_ROW, old=_ROW,
                                          build_ts=T0, checksum=checksum))
    this, other = update({**right, fault: wrong}), update(right)
    values = [enc.encode_value(SimpleBootstrap(TABLE)), this]
    if encoding == "json":
        at = _member_value(this, fault.encode())
    else:
        at = _first_difference(this, other)
    reason = {"current": f"row checksum mismatch (current: sent {wrong}, computed {right['current']})",
              "previous": f"row checksum mismatch (previous: sent {wrong}, computed {right['previous']})",
              "corrupted": "TiCDC flagged the row as corrupted (checksum.corrupted)"}[fault]
    assert _checked_error(impl, encoding, values) == (1, reason, "value", at, None)


def test_simple_checksum_member_not_sent_is_reported_at_the_checksum_object(impl):
    """A JSON checksum may leave out a member whose value is zero: a row whose checksum is not
    zero then fails at the object."""
    values = _simple_dml(data=_ROW, build_ts=T0)
    values[1] = values[1][:-1] + b',"checksum":{"version":1}}'
    at = _member_value(values[1], b"checksum")
    assert _checked_error(impl, "json", values) == (
        1, f"row checksum mismatch (current: sent 0, computed {_checksum_of(_ROW_TEXT)})", "value", at, None)


def test_simple_checksum_that_cannot_be_computed_names_the_checksum_member(impl):
    """A held row is checked when its schema comes, before it is decoded: a value that cannot be
    hashed fails at the checksum that could not be checked."""
    values = _simple_dml(data=_ROW, build_ts=T0, checksum={"current": 5})
    values[1] = values[1].replace(b'"ti":"2"', b'"ti":"x"')
    values.reverse()            # held: its BOOTSTRAP comes after it
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        ticdc_fast.SimpleDecoder("json", implementation=impl, verify_checksum=True).decode(None, values)
    e = ei.value
    assert e.reason.startswith("row checksum cannot be computed (current): ")
    assert (e.message_index, e.part, e.byte_offset, e.column) == (
        0, "value", values[0].index(b'"current":') + len(b'"current":'), None)


# more zones that are no zone than the core remembers: the Cython core fails at the location that
# is one too many; the twin keeps no zone table (docs/simple-protocol.md)
_MANY_TS = SimpleTable("db", "z", 11, make_tso(T0 - 1000),
                       [SimpleColumn("id", "int", nullable=False)]
                       + [SimpleColumn(f"ts{k}", "timestamp") for k in range(257)])


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_simple_one_location_too_many_is_reported_at_that_location(impl, encoding):
    enc = SimpleEncoder(encoding)
    row = {"id": 1, **{f"ts{k}": (f"No/Zone{k}", "2024-01-01 00:00:00") for k in range(257)}}
    values = [enc.encode_value(SimpleBootstrap(_MANY_TS)),
              enc.encode_value(SimpleDML(_MANY_TS, "INSERT", make_tso(T0), data=row))]
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, table="db.z",
                                   schema=pa.schema([("id", pa.int64())]))
    if impl == "python":
        assert dec.decode(None, values).column("id").to_pylist() == [None, 1]
        return
    # the 257th location in the order the message sends them, the last: at its opening quote
    # (JSON) or its one-byte length (Avro)
    at = values[1].rindex(b"No/Zone") - 1
    assert _error(lambda: dec.decode(None, values)) == (
        1, "more than 256 distinct TIMESTAMP locations that are no time zone in one message", "value", at, None)


# --------------------------------------------------------------------------- simple protocol: an
# invalid TableSchema (BOOTSTRAP, DDL) names the value at fault; a member left out, the object
# that lacks it
def _schema_doc(kind: str = "BOOTSTRAP") -> dict:
    enc = SimpleEncoder("json")
    event = SimpleBootstrap(TABLE) if kind == "BOOTSTRAP" else SimpleDDL("ALTER", "ALTER TABLE t", make_tso(T0),
                                                                         TABLE, TABLE)
    return json.loads(enc.encode_value(event))


def _unique_at(value: bytes, token: bytes, skip: int = 0) -> int:
    """Offset of ``token`` (found once in ``value``) plus ``skip``."""
    assert value.count(token) == 1, token
    return value.index(token) + skip


def _column_of(schema: dict, k: int) -> dict:
    return schema["columns"][k]


def _set_type(k, name, v):
    def change(schema):
        _column_of(schema, k)["dataType"][name] = v
    return change


def _drop(k, *path):
    def change(schema):
        obj = _column_of(schema, k)
        for name in path[:-1]:
            obj = obj[name]
        del obj[path[-1]]
    return change


def _set_column(k, name, v):
    def change(schema):
        _column_of(schema, k)[name] = v
    return change


def _set_index(name, v):
    def change(schema):
        schema["indexes"][0][name] = v
    return change


def _set_schema(name, v):
    def change(schema):
        if v is _DROP:
            del schema[name]
        else:
            schema[name] = v
    return change


_DROP = object()
_INT64_TEXT = "[-9223372036854775808, 9223372036854775807]"


@pytest.mark.parametrize("change, field, problem, column, token, skip", [
    # a value of the wrong type or range: at that value
    (_set_type(1, "mysqlType", "nope"), "columns[1] ('ti').dataType.mysqlType", "unsupported mysqlType 'nope'",
     "ti", b'"nope"', 0),
    (_set_type(2, "length", "19"), "columns[2] ('ts').dataType.length", "expected an integer, got string",
     "ts", b'"19"', 0),
    (_set_type(0, "decimal", 1 << 63), "columns[0] ('id').dataType.decimal",
     f"9223372036854775808 out of range {_INT64_TEXT}", "id", b"9223372036854775808", 0),
    (_set_type(3, "unsigned", "yes"), "columns[3] ('d').dataType.unsigned", "expected a boolean, got string",
     "d", b'"yes"', 0),
    (_set_type(1, "elements", ["a", 7777]), "columns[1] ('ti').dataType.elements[1]",
     "expected a string, got integer", "ti", b"7777", 0),
    (_set_type(1, "elements", "a,b"), "columns[1] ('ti').dataType.elements", "expected an array, got string",
     "ti", b'"a,b"', 0),
    (_set_column(2, "nullable", 1), "columns[2] ('ts').nullable", "expected a boolean, got integer", "ts",
     b'"nullable": 1', len('"nullable": ')),
    (_set_column(2, "name", None), "columns[2].name", "expected a string, got null", None,
     b'{"name": null', len('{"name": ')),
    (_set_column(3, "name", "ti"), "columns", "column 'ti' appears twice", "ti",
     b'"ti", "dataType": {"mysqlType": "date"', 0),
    (_set_column(1, "dataType", [1]), "columns[1] ('ti').dataType", "expected an object, got array", "ti",
     b"[1]", 0),
    (_set_index("columns", [5]), "indexes[0].columns[0]", "expected a string, got integer", None,
     b'"columns": [5]', len('"columns": [')),
    (_set_index("unique", "y"), "indexes[0].unique", "expected a boolean, got string", None, b'"y"', 0),
    (_set_schema("columns", {"a": 1}), "columns", "expected an array, got object", None, b'{"a": 1}', 0),
    (_set_schema("tableID", "10"), "tableID", "expected an integer, got string", None, b'"10"', 0),
    (_set_schema("table", 7), "table", "expected a string, got integer", None, b'"table": 7', len('"table": ')),
    # a member left out: at the object that lacks it
    (_drop(3, "name"), "columns[3].name", "expected a string, got null", None,
     b'{"dataType": {"mysqlType": "date"', 0),
    (_drop(1, "dataType"), "columns[1] ('ti').dataType", "expected an object, got null", "ti",
     b'{"name": "ti"', 0),
    (_drop(0, "dataType", "mysqlType"), "columns[0] ('id').dataType.mysqlType", "expected a string, got null",
     "id", b'{"charset": "binary", "collate": "binary", "length": 11}', 0),
    (_set_schema("schema", _DROP), "schema", "expected a string, got null", None,
     b'"tableSchema": {', len('"tableSchema": ')),
], ids=["mysqlType-unsupported", "length-string", "decimal-beyond-int64", "unsigned-string", "element-integer",
        "elements-string", "nullable-integer", "name-null", "name-twice", "dataType-array",
        "index-column-integer", "index-unique-string", "columns-object", "tableID-string", "table-integer",
        "name-left-out", "dataType-left-out", "mysqlType-left-out", "schema-left-out"])
def test_simple_invalid_table_schema_names_the_value_at_fault(impl, change, field, problem, column, token, skip):
    doc = _schema_doc()
    change(doc["tableSchema"])
    value = _spaced(doc)
    assert _simple_error(impl, [value]) == (0, f"invalid TableSchema: tableSchema.{field}: {problem}", "value",
                                            _unique_at(value, token, skip), column)


def test_simple_invalid_table_schema_names_the_last_copy_of_a_repeated_member(impl):
    value = _spaced(_schema_doc()).replace(b'"mysqlType": "tinyint"', b'"mysqlType": "x", "mysqlType": "nope"')
    assert _simple_error(impl, [value]) == (
        0, "invalid TableSchema: tableSchema.columns[1] ('ti').dataType.mysqlType: unsupported mysqlType 'nope'",
        "value", _unique_at(value, b'"nope"'), "ti")


@pytest.mark.parametrize("where", ["tableSchema", "preTableSchema"])
def test_simple_invalid_table_schema_of_a_ddl_names_the_value_in_that_schema(impl, where):
    doc = _schema_doc("DDL")
    _set_type(2, "mysqlType", "nope")(doc[where])
    value = _spaced(doc)
    assert _simple_error(impl, [value]) == (
        0, f"invalid TableSchema: {where}.columns[2] ('ts').dataType.mysqlType: unsupported mysqlType 'nope'",
        "value", _unique_at(value, b'"nope"'), "ts")


@pytest.mark.parametrize("where", ["tableSchema", "preTableSchema"])
def test_simple_ddl_table_schema_that_is_not_an_object_names_it(impl, where):
    doc = _schema_doc("DDL")
    doc[where] = [1]
    value = _spaced(doc)
    assert _simple_error(impl, [value]) == (0, f"invalid TableSchema: {where}: expected an object, got array",
                                            "value", _value_in(value, where), None)


# Avro: the schema types every field, so what the check can find at fault is an unsupported
# mysqlType and a column name that appears twice; at the string's length, as for any Avro text
def _patched(value: bytes, old: bytes, new: bytes, last: bool) -> tuple[bytes, int]:
    """``value`` with the first (or ``last``) copy of ``old`` replaced by ``new``, and where it was."""
    at = value.rindex(old) if last else value.index(old)
    return value[:at] + new + value[at + len(old):], at


@pytest.mark.parametrize("kind, where, fault", [
    ("BOOTSTRAP", "tableSchema", "mysqlType"), ("BOOTSTRAP", "tableSchema", "name"),
    ("DDL", "tableSchema", "mysqlType"), ("DDL", "preTableSchema", "mysqlType"),
    ("DDL", "tableSchema", "name"), ("DDL", "preTableSchema", "name"),
])
def test_simple_avro_invalid_table_schema_names_the_value_at_fault(impl, kind, where, fault):
    enc = SimpleEncoder("avro")
    event = SimpleBootstrap(TABLE) if kind == "BOOTSTRAP" else SimpleDDL("ALTER", "ALTER TABLE t", make_tso(T0),
                                                                         TABLE, TABLE)
    # the reader takes tableSchema first, then preTableSchema: the last copy is preTableSchema's
    last = where == "preTableSchema"
    if fault == "mysqlType":
        value, at = _patched(enc.encode_value(event), b"\x08date", b"\x08dute", last)
        reason = f"{where}.columns[3] ('d').dataType.mysqlType: unsupported mysqlType 'dute'"
        column = "d"
    else:       # the fourth column renamed after the second: the second copy is at fault
        value, at = _patched(enc.encode_value(event), b"\x02d\x08date", b"\x04ti\x08date", last)
        reason = f"{where}.columns: column 'ti' appears twice"
        column = "ti"
    assert _simple_avro_error(impl, [value]) == (0, f"invalid TableSchema: {reason}", "value", at, column)
