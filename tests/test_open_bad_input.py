"""Open protocol: every malformed input raises ``ticdc_fast.DecodeError`` (a ValueError) that says
which message, which part (key/value), where (byte offset inside that part of that message) and,
when a column is involved, which column.  Never a crash, a hang or a huge allocation.

Each bad message is decoded as message 1 of a batch whose message 0 is valid, so the reported
``message_index`` is checked too; the decoder must also keep working after the error.
"""
from __future__ import annotations

import pickle

import cramjam
import pyarrow as pa
import pytest

import ticdc_fast
from conftest import frame, jdump, resolved_event, row_event, u64

ANY = object()

GOOD_EVENTS = [
    row_event({"id": {"t": 3, "h": True, "f": 11, "v": 1}, "val": {"t": 15, "f": 64, "v": "aa"}}, ts=5),
    row_event({"id": {"t": 3, "h": True, "f": 11, "v": 2}, "val": {"t": 15, "f": 64, "v": "bb"}}, ts=5),
]
GOOD_KEY, GOOD_VALUE = frame(GOOD_EVENTS)
GOOD_ROWS = 2

# A valid multi-event message with many value kinds, used for the truncation sweep.
RICH_COLS = {
    "id": {"t": 8, "h": True, "f": 11, "v": 42},
    "u": {"t": 8, "f": 128, "v": 18446744073709551615},
    "s": {"t": 15, "f": 64, "v": "h\u00e9llo \u263a \"q\" \\"},
    "b": {"t": 15, "f": 65, "v": "\\x89PNG\\r\\n\\x1a\\n"},
    "d": {"t": 246, "f": 0, "v": "-129012.1230000"},
    "x": {"t": 252, "f": 1, "v": "5rWL6K+VdGV4dA=="},
    "ts": {"t": 7, "f": 0, "v": "2024-03-10 02:30:00"},
    "n": {"t": 3, "f": 64, "v": None},
}
RICH_EVENTS = [
    row_event(RICH_COLS, ts=7, rid=42),
    row_event(RICH_COLS, ts=8, rid=42, old=RICH_COLS),
    row_event(RICH_COLS, ts=9, op="d", ptn=3),
]
RICH_KEY, RICH_VALUE = frame(RICH_EVENTS)


def regions(buf: bytes, part: str) -> list[tuple[int, int, int]]:
    """(length-prefix start, document start, document end) of each event in a key/value."""
    pos = 8 if part == "key" else 0
    out = []
    while pos + 8 <= len(buf):
        n = int.from_bytes(buf[pos:pos + 8], "big")
        out.append((pos, pos + 8, min(pos + 8 + n, len(buf))))
        pos += 8 + n
    return out


def decode_bad(dec, key, value, *, part, column=None, event=None, message_index=1,
               good_key=GOOD_KEY, good_value=GOOD_VALUE, good_rows=GOOD_ROWS, **kw):
    """Decode [good, bad]; check the DecodeError and that the decoder still works afterwards."""
    keys, values = [good_key, key], [good_value, value]
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode(keys, values, **kw)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.message_index == message_index, err
    parts = (part,) if isinstance(part, str) else tuple(part)
    assert err.part in parts, err
    buf = key if err.part == "key" else value
    assert buf is not None
    assert err.byte_offset is not None, err
    assert 0 <= err.byte_offset <= len(buf), err
    if event is not None:
        lo, _, hi = regions(bytes(buf), err.part)[event]
        assert lo <= err.byte_offset <= hi, (err, (lo, hi))
    if column is not ANY:
        assert err.column == column, err
    assert str(err)
    # The decoder is not left in a broken state.
    assert dec.decode([good_key], [good_value]).num_rows == good_rows
    return err


def bad_value_event(value_doc, *, column=None, ts=5):
    """A message whose second event carries ``value_doc`` (bytes or dict) as its value."""
    key, value = frame([GOOD_EVENTS[0], ({"ts": ts, "scm": "db", "tbl": "t", "t": 1}, value_doc)])
    return key, value


def bad_column(col, name="c"):
    return bad_value_event(b'{"u":{"ok":{"t":3,"f":0,"v":1},"' + name.encode() + b'":' + jdump(col) + b"}}")


@pytest.fixture
def dec(decoder_factory):
    return decoder_factory()


# ----------------------------------------------------------------------------- truncation
def test_rich_message_is_valid(dec):
    assert dec.decode([RICH_KEY], [RICH_VALUE]).num_rows == 3


def test_truncated_key_at_every_byte(dec):
    for cut in range(len(RICH_KEY)):
        decode_bad(dec, RICH_KEY[:cut], RICH_VALUE, part=("key", "value"))


def test_truncated_value_at_every_byte(dec):
    for cut in range(len(RICH_VALUE)):
        decode_bad(dec, RICH_KEY, RICH_VALUE[:cut], part=("key", "value"))


def test_truncated_both(dec):
    for cut in range(0, min(len(RICH_KEY), len(RICH_VALUE)), 7):
        decode_bad(dec, RICH_KEY[:cut], RICH_VALUE[:cut], part=("key", "value"))


def test_truncated_inside_value_length_prefix(dec):
    err = decode_bad(dec, RICH_KEY, RICH_VALUE[:3], part="value")
    assert err.byte_offset == 0


# ----------------------------------------------------------------------------- framing
@pytest.mark.parametrize("version", [0, 2, 256, 1 << 56, (1 << 64) - 1])
def test_wrong_version(dec, version):
    key = u64(version) + GOOD_KEY[8:]
    err = decode_bad(dec, key, GOOD_VALUE, part="key")
    assert err.byte_offset == 0


@pytest.mark.parametrize("length", [1 << 63, (1 << 64) - 1, (1 << 62) + 3, 1 << 32])
def test_forged_key_event_length(dec, length):
    key = GOOD_KEY[:8] + u64(length) + GOOD_KEY[16:]
    err = decode_bad(dec, key, GOOD_VALUE, part="key")
    assert err.byte_offset == 8


@pytest.mark.parametrize("length", [1 << 63, (1 << 64) - 1, (1 << 62) + 3, 1 << 32])
def test_forged_value_event_length(dec, length):
    value = u64(length) + GOOD_VALUE[8:]
    err = decode_bad(dec, GOOD_KEY, value, part="value")
    assert err.byte_offset == 0


@pytest.mark.parametrize("length", [1 << 63, (1 << 64) - 1])
def test_forged_second_event_lengths(dec, length):
    (_, _, k_end), _ = regions(GOOD_KEY, "key")
    key = GOOD_KEY[:k_end] + u64(length) + GOOD_KEY[k_end + 8:]
    err = decode_bad(dec, key, GOOD_VALUE, part=("key", "value"))
    if err.part == "key":
        assert err.byte_offset == k_end
    (_, _, v_end), _ = regions(GOOD_VALUE, "value")
    value = GOOD_VALUE[:v_end] + u64(length) + GOOD_VALUE[v_end + 8:]
    err = decode_bad(dec, GOOD_KEY, value, part=("key", "value"))
    if err.part == "value":
        assert err.byte_offset == v_end


@pytest.mark.parametrize("n_keys, n_values", [(1, 2), (2, 1), (0, 1), (3, 0)])
def test_key_value_list_count_mismatch(dec, n_keys, n_values):
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode([GOOD_KEY] * n_keys, [GOOD_VALUE] * n_values)
    assert info.value.message_index is None
    assert isinstance(info.value, ValueError)


def test_key_has_more_events_than_value(dec):
    key, value = frame(GOOD_EVENTS)
    one_value = value[:regions(value, "value")[0][2]]
    err = decode_bad(dec, key, one_value, part=("value", "key"))
    if err.part == "value":
        assert err.byte_offset == len(one_value)


def test_value_has_more_events_than_key(dec):
    key, value = frame(GOOD_EVENTS)
    one_key = key[:regions(key, "key")[0][2]]
    decode_bad(dec, one_key, value, part=("value", "key"))
    # A key with no event at all (just the version word) and a non-empty value.
    decode_bad(dec, one_key[:8], value, part=("value", "key"))
    # Resolved-event shape: one key, two empty values.
    k, v = frame([resolved_event(3)])
    decode_bad(dec, k, v + u64(0), part=("value", "key"))


@pytest.mark.parametrize("garbage", [b"\x00", b"\x00\x01", b"xyz" * 3, u64(0), u64(5) + b"abcde", b"\xff" * 8])
def test_trailing_garbage_after_last_key_event(dec, garbage):
    decode_bad(dec, GOOD_KEY + garbage, GOOD_VALUE, part=("key", "value"))


@pytest.mark.parametrize("garbage", [b"\x00", b"\x00\x01", b"xyz" * 3, u64(0), u64(5) + b"abcde", b"\xff" * 8])
def test_trailing_garbage_after_last_value_event(dec, garbage):
    decode_bad(dec, GOOD_KEY, GOOD_VALUE + garbage, part=("value", "key"))


def test_empty_key_message(dec):
    decode_bad(dec, b"", GOOD_VALUE, part="key")
    decode_bad(dec, b"", b"", part="key")


# ----------------------------------------------------------------------------- null entries
@pytest.mark.parametrize("arrow", [False, True], ids=["list", "arrow"])
@pytest.mark.parametrize("which", ["key", "value"])
def test_null_key_or_value_entry(dec, which, arrow):
    keys = [GOOD_KEY, None if which == "key" else GOOD_KEY, GOOD_KEY]
    values = [GOOD_VALUE, None if which == "value" else GOOD_VALUE, GOOD_VALUE]
    if arrow:
        keys, values = pa.array(keys, pa.binary()), pa.array(values, pa.binary())
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode(keys, values)
    assert info.value.message_index == 1
    assert info.value.part == which
    assert info.value.byte_offset in (None, 0)
    assert dec.decode([GOOD_KEY], [GOOD_VALUE]).num_rows == GOOD_ROWS


# ----------------------------------------------------------------------------- malformed JSON
MALFORMED_VALUES = {
    "unterminated_object": b'{"u":{"a":{"t":3,"v":1}',
    "unterminated_string": b'{"u":{"a":{"t":15,"v":"abc}}}',
    "trailing_content": b'{"u":{"a":{"t":3,"v":1}}}}',
    "trailing_word": b'{"u":{"a":{"t":3,"v":1}}} x',
    "trailing_comma": b'{"u":{"a":{"t":3,"v":1},}}',
    "single_quotes": b"{'u':{}}",
    "leading_zero": b'{"u":{"a":{"t":3,"v":01}}}',
    "nan": b'{"u":{"a":{"t":5,"v":NaN}}}',
    "infinity": b'{"u":{"a":{"t":5,"v":Infinity}}}',
    "bad_exponent": b'{"u":{"a":{"t":5,"v":1e}}}',
    "missing_colon": b'{"u" {}}',
    "bare_word": b'{"u":{"a":{"t":3,"v":one}}}',
    "empty_document": b"",
    "whitespace_only": b"   ",
    "control_char_in_string": b'{"u":{"a":{"t":15,"v":"a\x01b"}}}',
    "raw_newline_in_string": b'{"u":{"a":{"t":15,"v":"a\nb"}}}',
    "comment": b'{"u":{} /* x */}',
    "two_documents": b'{"u":{}}{"u":{}}',
}


@pytest.mark.parametrize("doc", list(MALFORMED_VALUES.values()), ids=list(MALFORMED_VALUES))
def test_malformed_value_json(dec, doc):
    key, value = bad_value_event(doc)
    decode_bad(dec, key, value, part="value", event=1, column=ANY)


MALFORMED_KEYS = {
    "unterminated": b'{"ts":1,',
    "trailing": b'{"ts":1,"t":1}}',
    "trailing_comma": b'{"ts":1,"t":1,}',
    "single_quotes": b"{'ts':1,'t':1}",
    "empty": b"",
    "nan": b'{"ts":1,"t":1,"x":NaN}',
    "garbage": b"\x00\x01\x02",
    "bad_escape": b'{"ts":1,"t":1,"scm":"a\\qb"}',
    "bad_unicode_escape": b'{"ts":1,"t":1,"scm":"\\u12"}',
    "lone_surrogate": b'{"ts":1,"t":1,"scm":"\\ud800"}',
}


@pytest.mark.parametrize("doc", list(MALFORMED_KEYS.values()), ids=list(MALFORMED_KEYS))
def test_malformed_key_json(dec, doc):
    key, value = frame([GOOD_EVENTS[0], (doc, {"u": {"a": {"t": 3, "v": 1}}})])
    decode_bad(dec, key, value, part="key", event=1)


BAD_JSON_ESCAPES = {
    "backslash_q": b'"a\\qb"',
    "backslash_x": b'"\\x41"',
    "short_unicode": b'"\\u12"',
    "bad_hex_unicode": b'"\\u12G4"',
    "lone_high_surrogate": b'"\\ud800"',
    "lone_low_surrogate": b'"\\udc00x"',
    "escape_at_end": b'"abc\\"',
    "single_quote_escape": b'"\\\'"',
}


@pytest.mark.parametrize("flags", [64, 65])
@pytest.mark.parametrize("text", list(BAD_JSON_ESCAPES.values()), ids=list(BAD_JSON_ESCAPES))
def test_bad_json_escape_in_value(dec, text, flags):
    key, value = bad_value_event(b'{"u":{"c":{"t":15,"f":' + str(flags).encode() + b',"v":' + text + b"}}}")
    decode_bad(dec, key, value, part="value", event=1, column=ANY)


# ----------------------------------------------------------------------------- value encodings
# JSON text of the "v" string (one JSON unescape later it is the Go-quoted body).
BAD_GO_QUOTES = [r"\\q", r"\\x4", r"\\x", r"\\xZZ", r"\\400", r"\\12", r"\\ud800", r"\\U00110000",
                 r"\\u12", "abc\\\\", r"\"", r"\\'", r"\\e"]


@pytest.mark.parametrize("t", [15, 253, 254])
@pytest.mark.parametrize("text", BAD_GO_QUOTES)
def test_bad_go_quote_escape_in_binary_varchar(dec, t, text):
    key, value = bad_value_event(b'{"u":{"ok":{"t":3,"v":1},"c":{"t":' + str(t).encode()
                                 + b',"f":65,"v":"' + text.encode() + b'"}}}')
    decode_bad(dec, key, value, part="value", event=1, column="c")


def test_go_quote_escapes_are_not_checked_without_binary_flag(dec):
    key, value = frame([row_event({"c": {"t": 15, "f": 64, "v": "\\q"}})])
    (row,) = dec.decode([key], [value]).to_pylist()
    assert row["after"] == [("c", "\\q")]


@pytest.mark.parametrize("flags", [0, 1])
@pytest.mark.parametrize("t", [249, 250, 251, 252])
@pytest.mark.parametrize("text", ["YWE", "YW==", "YQ=", "!!!!", "YWE=\n", "YW E=", "-_8=", "YQ==YQ==", "Y"])
def test_bad_base64_in_blob(dec, t, flags, text):
    decode_bad(dec, *bad_column({"t": t, "f": flags, "v": text}), part="value", event=1, column="c")


@pytest.mark.parametrize("t", [200, 255, 17, 100, 244, -1, 256, "3", 3.0, None, True])
def test_unknown_type_code(dec, t):
    decode_bad(dec, *bad_column({"t": t, "v": 1}), part="value", event=1, column="c")


def test_missing_type_code(dec):
    decode_bad(dec, *bad_column({"f": 0, "v": 1}), part="value", event=1, column="c")


OUT_OF_RANGE = [
    {"t": 1, "v": 300}, {"t": 1, "v": 128}, {"t": 1, "v": -129},
    {"t": 1, "f": 128, "v": 256}, {"t": 1, "f": 129, "v": -1},
    {"t": 2, "v": 32768}, {"t": 2, "f": 128, "v": 65536},
    {"t": 9, "v": 8388608}, {"t": 9, "f": 128, "v": 16777216},
    {"t": 3, "v": 2147483648}, {"t": 3, "f": 128, "v": -1}, {"t": 3, "f": 128, "v": 4294967296},
    {"t": 8, "f": 128, "v": 18446744073709551616}, {"t": 8, "f": 128, "v": -1},
    {"t": 8, "v": 9223372036854775808}, {"t": 8, "v": -9223372036854775809},
    {"t": 8, "v": 1 << 70}, {"t": 13, "v": 2156}, {"t": 13, "v": -1},
    {"t": 16, "v": -1}, {"t": 16, "v": 18446744073709551616}, {"t": 248, "v": -1},
    {"t": 247, "v": 65536}, {"t": 247, "v": -1},
]


@pytest.mark.parametrize("col", OUT_OF_RANGE, ids=[f"t{c['t']}f{c.get('f', 0)}v{c['v']}" for c in OUT_OF_RANGE])
def test_out_of_range_integers(dec, col):
    decode_bad(dec, *bad_column(col), part="value", event=1, column="c")


@pytest.mark.parametrize("col", [
    {"t": 3, "v": 1.5}, {"t": 3, "v": True}, {"t": 3, "v": [1]}, {"t": 3, "v": {}},
    {"t": 8, "v": 1e3},
    {"t": 4, "v": True}, {"t": 5, "v": [1.0]}, {"t": 4, "v": 1e39},
    {"t": 15, "f": 64, "v": 5}, {"t": 252, "v": 5}, {"t": 246, "v": [1]}, {"t": 7, "v": 20240101},
    {"t": 6, "v": 1}, {"t": 6, "v": "x"},
])
def test_wrong_json_kind_for_type(dec, col):
    decode_bad(dec, *bad_column(col), part="value", event=1, column="c")


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"1" + b"0" * 400])
@pytest.mark.parametrize("t", [4, 5])
def test_float_overflowing_double(dec, t, number):
    doc = b'{"u":{"ok":{"t":3,"v":1},"c":{"t":' + str(t).encode() + b',"v":' + number + b"}}}"
    decode_bad(dec, *bad_value_event(doc), part="value", event=1, column=ANY)


@pytest.mark.parametrize("number", [3.5e39, -1e300])
def test_float_overflowing_float32_is_named(dec, number):
    """A FLOAT value finite as a double but not as a float32: the twin's reason, in both
    implementations (the core said "number out of range", the double's overflow)."""
    err = decode_bad(dec, *bad_column({"t": 4, "v": number}), part="value", event=1, column="c")
    assert err.reason == "float out of float32 range"


def test_integer_type_with_string_value_is_rendered_verbatim(dec):
    # Old encoders (TF java example) wrote "t":1 with a string; generic mode keeps the text.
    key, value = frame([row_event({"c": {"t": 1, "v": "1x"}})])
    assert dec.decode([key], [value]).to_pylist()[0]["after"] == [("c", "1x")]


@pytest.mark.parametrize("col", [
    {"t": 3, "f": -1, "v": 1}, {"t": 3, "f": "1", "v": 1}, {"t": 3, "f": 1 << 32, "v": 1},
    {"t": 3, "f": 1.0, "v": 1}, {"t": 3, "h": 1, "v": 1}, {"t": 3, "h": "true", "v": 1},
])
def test_invalid_column_flags_or_handle(dec, col):
    decode_bad(dec, *bad_column(col), part="value", event=1, column="c")


def test_column_value_not_an_object(dec):
    for col in (1, "x", [1], None, True):
        decode_bad(dec, *bad_column(col), part="value", event=1, column=ANY)


# ----------------------------------------------------------------------------- invalid UTF-8
@pytest.mark.parametrize("raw", [b"\xff", b"a\xc3", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"])
@pytest.mark.parametrize("t", [15, 253, 254, 245, 246, 7])
def test_invalid_utf8_in_text_value(decoder_factory, raw, t):
    dec = decoder_factory(invalid_utf8="error")
    doc = b'{"u":{"ok":{"t":3,"v":1},"c":{"t":' + str(t).encode() + b',"f":64,"v":"x' + raw + b'"}}}'
    decode_bad(dec, *bad_value_event(doc), part="value", event=1, column="c")


@pytest.mark.parametrize("t", [249, 250, 251, 252])
def test_invalid_utf8_after_decoding_a_non_binary_text(decoder_factory, t):
    # base64 of b"\xff\xfe": a TEXT column (no binary flag) must hold UTF-8 with invalid_utf8="error"
    # (the default replaces it: tests/test_invalid_utf8.py)
    dec = decoder_factory(invalid_utf8="error")
    decode_bad(dec, *bad_column({"t": t, "f": 0, "v": "//4="}), part="value", event=1, column="c")


def test_invalid_utf8_in_column_name(dec):
    doc = b'{"u":{"ok":{"t":3,"v":1},"c\xff":{"t":3,"v":1}}}'
    decode_bad(dec, *bad_value_event(doc), part="value", event=1, column=ANY)


@pytest.mark.parametrize("field", ["scm", "tbl"])
def test_invalid_utf8_in_key_field(dec, field):
    kdoc = b'{"ts":1,"' + field.encode() + b'":"a\xffb","t":1}'
    key, value = frame([GOOD_EVENTS[0], (kdoc, {"u": {"a": {"t": 3, "v": 1}}})])
    decode_bad(dec, key, value, part="key", event=1)


def test_invalid_utf8_in_ddl_query(dec):
    key, value = frame([GOOD_EVENTS[0], ({"ts": 2, "scm": "db", "tbl": "t", "t": 2}, b'{"q":"DROP \xff","t":4}')])
    decode_bad(dec, key, value, part="value", event=1)


# ----------------------------------------------------------------------------- event keys
BAD_KEYS = {
    "ts_missing": {"scm": "db", "tbl": "t", "t": 1},
    "ts_null": {"ts": None, "scm": "db", "tbl": "t", "t": 1},
    "ts_negative": {"ts": -1, "scm": "db", "tbl": "t", "t": 1},
    "ts_2_63": {"ts": 1 << 63, "scm": "db", "tbl": "t", "t": 1},
    "ts_2_64_minus_1": {"ts": (1 << 64) - 1, "scm": "db", "tbl": "t", "t": 1},
    "ts_2_64": {"ts": 1 << 64, "scm": "db", "tbl": "t", "t": 1},
    "ts_string": {"ts": "1", "scm": "db", "tbl": "t", "t": 1},
    "ts_float": {"ts": 1.5, "scm": "db", "tbl": "t", "t": 1},
    "ts_bool": {"ts": True, "scm": "db", "tbl": "t", "t": 1},
    "type_9": {"ts": 1, "scm": "db", "tbl": "t", "t": 9},
    "type_0": {"ts": 1, "scm": "db", "tbl": "t", "t": 0},
    "type_missing": {"ts": 1, "scm": "db", "tbl": "t"},
    "type_string": {"ts": 1, "scm": "db", "tbl": "t", "t": "1"},
    "scm_not_string": {"ts": 1, "scm": 5, "tbl": "t", "t": 1},
    "rid_string": {"ts": 1, "scm": "db", "tbl": "t", "rid": "1", "t": 1},
    "ptn_too_big": {"ts": 1, "scm": "db", "tbl": "t", "ptn": 1 << 63, "t": 1},
    "ohk_not_bool": {"ts": 1, "scm": "db", "tbl": "t", "t": 1, "ohk": 1},
    "ccl_not_string": {"ts": 1, "scm": "db", "tbl": "t", "t": 1, "ccl": 7},
    "array": [1, 2],
    "null": None,
    "string": "ts",
    "number": 1,
}


@pytest.mark.parametrize("kdoc", list(BAD_KEYS.values()), ids=list(BAD_KEYS))
def test_bad_event_key(dec, kdoc):
    key, value = frame([GOOD_EVENTS[0], (jdump(kdoc), {"u": {"a": {"t": 3, "v": 1}}})])
    decode_bad(dec, key, value, part="key", event=1)


# ----------------------------------------------------------------------------- row / DDL / resolved values
BAD_ROW_VALUES = {
    "empty_object": b"{}",
    "only_p": b'{"p":{"a":{"t":3,"v":1}}}',
    "other_field": b'{"x":{"a":{"t":3,"v":1}}}',
    "u_null": b'{"u":null}',
    "u_and_d": b'{"u":{"a":{"t":3,"v":1}},"d":{"a":{"t":3,"v":1}}}',
    "u_array": b'{"u":[1]}',
    "d_string": b'{"d":"x"}',
    "array": b"[1]",
    "string": b'"u"',
    "null": b"null",
    "number": b"1",
    # ticdc bug (spec E.15): bare t/f/v written straight into "p"
    "bare_tfv_in_p": b'{"u":{"a":{"t":3,"f":0,"v":1},"b":{"t":3,"f":64,"v":null}},'
                     b'"p":{"a":{"t":3,"f":0,"v":1},"t":3,"f":64,"v":null}}',
    # ... twice (two columns went to NULL): the repeated bare names are rejected too, not merged
    "bare_tfv_twice_in_p": b'{"u":{"a":{"t":3,"f":0,"v":1},"b":{"t":3,"f":64,"v":null},"c":{"t":3,"f":64,"v":null}},'
                           b'"p":{"a":{"t":3,"f":0,"v":1},"t":3,"f":64,"v":null,"t":3,"f":64,"v":null}}',
}


@pytest.mark.parametrize("doc", list(BAD_ROW_VALUES.values()), ids=list(BAD_ROW_VALUES))
def test_bad_row_value(dec, doc):
    decode_bad(dec, *bad_value_event(doc), part="value", event=1, column=ANY)


@pytest.mark.parametrize("doc", [b"[1]", b'{"q":1,"t":3}', b'{"q":"x","t":"3"}', b'{"q":"x","t":2147483648}',
                                 b'{"q":"x","t":1.5}', b"", b"{", b"null"])
def test_bad_ddl_value(dec, doc):
    key, value = frame([GOOD_EVENTS[0], ({"ts": 2, "scm": "db", "tbl": "t", "t": 2}, doc)])
    decode_bad(dec, key, value, part="value", event=1)


@pytest.mark.parametrize("payload", [b"{}", b"x", b'{"u":{}}', b"\x00"])
def test_resolved_event_with_non_empty_value(dec, payload):
    key, value = frame([resolved_event(9)])
    value = u64(len(payload)) + payload
    err = decode_bad(dec, key, value, part="value", event=0)
    assert err.byte_offset in (0, 8)


# ----------------------------------------------------------------------------- compression
@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_wrong_compression_on_uncompressed_data(decoder_factory, compression):
    def pack(value):
        n = int.from_bytes(value[:8], "big")
        first = value[8:8 + n]
        packed = bytes(cramjam.snappy.compress_raw(first) if compression == "snappy"
                       else cramjam.lz4.compress(first))
        return u64(len(packed)) + packed

    good_key, good_value = frame(GOOD_EVENTS[:1])
    dec = decoder_factory(compression=compression)
    decode_bad(dec, GOOD_KEY, GOOD_VALUE, part="value", event=0,
               good_key=good_key, good_value=pack(good_value), good_rows=1)


def test_snappy_forged_declared_length(decoder_factory):
    """A snappy block declaring a huge decompressed length must not allocate it."""
    good_key, good_value = frame(GOOD_EVENTS[:1])
    n = int.from_bytes(good_value[:8], "big")
    packed = bytes(cramjam.snappy.compress_raw(good_value[8:8 + n]))
    forged = b"\xff\xff\xff\xff\x0f" + packed[1:]  # varint 2**32-1
    dec = decoder_factory(compression="snappy")
    decode_bad(dec, good_key, u64(len(forged)) + forged, part="value", event=0,
               good_key=good_key, good_value=u64(len(packed)) + packed, good_rows=1)


# ----------------------------------------------------------------------------- the exception itself
def test_decode_error_attributes_and_pickling(dec):
    err = decode_bad(dec, *bad_column({"t": 1, "v": 300}), part="value", event=1, column="c")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is ticdc_fast.DecodeError
    assert (again.message_index, again.byte_offset, again.column, again.part, str(again)) == \
        (err.message_index, err.byte_offset, err.column, err.part, str(err))
    assert "message 1" in str(err) and "'c'" in str(err)


def test_error_in_later_message_of_a_larger_batch(dec):
    keys = [GOOD_KEY] * 5 + [GOOD_KEY]
    values = [GOOD_VALUE] * 5 + [GOOD_VALUE[:-1]]
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode(keys, values, partitions=[0] * 6, offsets=list(range(6)))
    assert info.value.message_index == 5
    assert info.value.part in ("key", "value")


# ----------------------------------------------------------------------------- numbers beyond double range
IGNORED_HUGE_NUMBER = {
    "unknown_key_field": (b'{"ts":1,"scm":"db","tbl":"t","t":1,"x":1e999}', b'{"u":{"c":{"t":3,"v":1}}}'),
    "unknown_column_field": (b'{"ts":1,"scm":"db","tbl":"t","t":1}', b'{"u":{"c":{"t":3,"v":1,"x":1e999}}}'),
    "unknown_ddl_field": (b'{"ts":1,"scm":"db","tbl":"t","t":2}', b'{"q":"x","t":3,"z":-1e999}'),
}


@pytest.mark.parametrize("kdoc, vdoc", list(IGNORED_HUGE_NUMBER.values()), ids=list(IGNORED_HUGE_NUMBER))
def test_number_beyond_double_range_in_an_ignored_field(decoder_factory, kdoc, vdoc):
    """``1e999`` is valid JSON grammar (RFC 8259); in a field the decoder never reads it must not
    fail the message.  (Where a value *is* read, it is a DecodeError: see test_float_overflowing_double.)"""
    key, value = frame([(kdoc, vdoc)])
    assert decoder_factory().decode([key], [value]).num_rows == 1
    typed = decoder_factory(table="db.t", schema=pa.schema([("c", pa.int64())]))
    assert typed.decode([key], [value]).num_rows == 1
