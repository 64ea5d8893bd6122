"""Simple-protocol JSON whose key order and spelling change from message to message.

The core expects each message to repeat the previous one's envelope and data/old key order and
matches keys byte for byte; these streams reorder keys, spell them with escapes, drop and add
members, and must decode exactly like the reference twin."""
from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.testing import SimpleEncoder, simple_changefeed


def _base_messages():
    events = simple_changefeed(40, seed=21, watermark_every=15)
    return [v for _, v in SimpleEncoder("json").encode(events)]


def _escape_first_char(key: str) -> str:
    return "\\u%04x" % ord(key[0]) + key[1:]


def _rewrite(doc: dict, rnd: random.Random) -> bytes:
    """The same message with reordered members and some keys spelled with a \\u escape."""
    def obj(d, depth):
        items = list(d.items())
        if rnd.random() < 0.5:
            rnd.shuffle(items)
        parts = []
        for k, v in items:
            key = _escape_first_char(k) if rnd.random() < 0.15 else k
            if isinstance(v, dict) and depth < 2:
                val = obj(v, depth + 1)
            else:
                val = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
            parts.append('"%s":%s' % (key, val))
        return "{" + ",".join(parts) + "}"
    return obj(doc, 0).encode()


@pytest.mark.parametrize("seed", range(6))
def test_reordered_and_escaped_keys_match_the_twin(impl, seed):
    rnd = random.Random(seed)
    base = _base_messages()
    values = [base[0]]                       # the BOOTSTRAP untouched
    for v in base[1:]:
        values.append(v if rnd.random() < 0.4 else _rewrite(json.loads(v), rnd))
    got = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, pa.array(values, pa.binary()))
    want = ticdc_fast.SimpleDecoder("json", implementation="python").decode(None, values)
    assert got.equals(want)
    plain = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, base)
    assert got.num_rows == plain.num_rows
    as_dicts = lambda b: [None if m is None else dict(m) for m in b.column("after").to_pylist()]  # noqa: E731
    assert as_dicts(got) == as_dicts(plain)              # same values; map order follows the input


def test_key_prefix_of_expected_name_is_another_key(impl):
    """A key that starts like the expected one ("amount" vs "amount2") is not taken for it."""
    base = _base_messages()
    doc = json.loads(base[1])
    doc2 = dict(doc)
    doc2["data"] = {("amount2" if k == "amount" else k): v for k, v in doc["data"].items()}
    values = [base[0], base[1], json.dumps(doc2, separators=(",", ":")).encode()]
    for which in (impl, "python"):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            ticdc_fast.SimpleDecoder("json", implementation=which).decode(None, values)
        assert ei.value.message_index == 2 and ei.value.column == "amount2"


def test_duplicate_timestamp_key_takes_the_last_location(impl):
    """A repeated TIMESTAMP member: the last one wins as a whole (location and value), at the
    first one's position, as in any JSON object."""
    base = _base_messages()
    doc = json.loads(base[1])
    ts = doc["data"]["updated_at"]
    body = json.dumps(doc, separators=(",", ":"))
    first = json.dumps(ts, separators=(",", ":"))
    later = json.dumps({"location": "UTC", "value": "2024-05-01 00:00:00"}, separators=(",", ":"))
    dup = body.replace('"updated_at":' + first, '"updated_at":' + first + ',"updated_at":' + later)
    assert dup != body
    values = [base[0], dup.encode()]
    rows = {}
    for which in (impl, "python"):
        out = ticdc_fast.SimpleDecoder("json", implementation=which).decode(None, values)
        rows[which] = dict(out.column("after").to_pylist()[1])
    assert rows[impl] == rows["python"]
    assert rows[impl]["updated_at"] == "2024-05-01 00:00:00Z"


def _escape_all(text: str) -> str:
    return "".join("\\u%04x" % ord(ch) for ch in text)


@pytest.mark.parametrize("field", ["type", "database", "table"])
def test_escaped_envelope_strings_match_the_twin(impl, field):
    """Valid JSON that spells an envelope string with escapes ("\\u0049\\u004e..." for "INSERT"): the
    core declined such a DML with "a JSON form the Cython core does not decode" (fuzz F2) while
    the twin decoded it; now both read it."""
    base = _base_messages()
    values = list(base)
    changed = 0
    for i, v in enumerate(values):
        doc = json.loads(v)
        if doc.get("type") in ("INSERT", "UPDATE", "DELETE") and field in doc:
            plain = '"%s":%s' % (field, json.dumps(doc[field], ensure_ascii=False))
            assert plain.encode() in v
            values[i] = v.replace(plain.encode(), ('"%s":"%s"' % (field, _escape_all(doc[field]))).encode())
            changed += 1
    assert changed > 10
    got = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, values)
    want = ticdc_fast.SimpleDecoder("json", implementation="python").decode(None, base)
    assert got.to_pylist() == want.to_pylist()


def test_duplicate_envelope_key_last_wins_in_both(impl):
    base = _base_messages()
    values = list(base)
    for i, v in enumerate(values):
        if b'"type":"INSERT"' in v:
            values[i] = v.replace(b'"type":"INSERT"', b'"type":"DELETE","type":"INSERT"', 1)
    got = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, values)
    want = ticdc_fast.SimpleDecoder("json", implementation="python").decode(None, base)
    assert got.to_pylist() == want.to_pylist()


@pytest.mark.parametrize("location,value,want", [
    ("UTC", "2024-05-01 23:59:59", "2024-05-01 23:59:59Z"),
    ("UTC", "2024-05-01 00:00:00.5", "2024-05-01 00:00:00.5Z"),
    ("UTC", "2024-02-29 12:34:56.000100", "2024-02-29 12:34:56.000100Z"),
    ("Europe/London", "2024-01-15 08:00:00.125", "2024-01-15 08:00:00.125Z"),     # GMT: offset zero
    ("Europe/London", "2024-07-15 08:00:00.125", "2024-07-15 07:00:00.125Z"),     # BST: one hour
    ("Asia/Shanghai", "2024-05-01 00:00:00.020", "2024-04-30 16:00:00.020Z"),
    ("UTC", "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999Z"),
    ("UTC", "0001-01-01 00:00:00", "0001-01-01 00:00:00Z"),
])
def test_timestamp_text_in_utc(impl, location, value, want):
    """Generic TIMESTAMP text is the UTC instant; at an offset of zero it is the wall-clock text
    as sent (the core copies it), at any other offset it is computed."""
    base = _base_messages()
    doc = json.loads(base[1])
    doc["data"]["updated_at"] = {"location": location, "value": value}
    values = [base[0], json.dumps(doc, separators=(",", ":")).encode()]
    rows = {}
    for which in (impl, "python"):
        out = ticdc_fast.SimpleDecoder("json", implementation=which).decode(None, values)
        rows[which] = dict(out.column("after").to_pylist()[1])
    assert rows[impl] == rows["python"]
    assert rows[impl]["updated_at"] == want


# The core reads a TIMESTAMP object spelled as TiCDC writes it in one pass and leaves every other
# spelling to the general object walk; each of these must come out as the twin has it, value or
# error (reason, byte offset, column), generic and typed.
TIMESTAMP_SPELLINGS = {
    "as_written": '{"location":"UTC","value":"2024-05-01 00:00:00.5"}',
    "zone_offset": '{"location":"Asia/Shanghai","value":"2024-05-01 00:00:00.020"}',
    "escaped_zone": '{"location":"Asia\\/Shanghai","value":"2024-05-01 00:00:00"}',
    "escaped_value": '{"location":"UTC","value":"2024-05-01 00:00:00\\u002e25"}',
    "space_after_comma": '{"location":"UTC", "value":"2024-05-01 00:00:00"}',
    "space_before_brace": '{"location":"UTC","value":"2024-05-01 00:00:00" }',
    "value_first": '{"value":"2024-05-01 00:00:00","location":"UTC"}',
    "extra_member": '{"location":"UTC","value":"2024-05-01 00:00:00","x":[1,{"y":2}]}',
    "repeated_value": '{"location":"UTC","value":"2024-05-01 00:00:00","value":"2024-05-02 00:00:00"}',
    "repeated_location": '{"location":"UTC","location":"Asia/Tokyo","value":"2024-05-01 09:00:00"}',
    "value_number": '{"location":"UTC","value":1}',
    "location_number": '{"location":8,"value":"2024-05-01 00:00:00"}',
    "no_value": '{"location":"UTC"}',
    "unknown_zone": '{"location":"Mars/Olympus","value":"2024-05-01 00:00:00"}',
    "bad_month": '{"location":"UTC","value":"2024-13-01 00:00:00"}',
    "control_in_location": '{"location":"U\\u0000TC","value":"2024-05-01 00:00:00"}',
    "raw_control_in_value": '{"location":"UTC","value":"2024-05-01\x0100:00:00"}',
    "bad_escape_in_value": '{"location":"UTC","value":"2024-05-01 \\x00:00:00"}',
    "unterminated_value": '{"location":"UTC","value":"2024-05-01 00:00:00}',
    "location_key_escaped": '{"\\u006cocation":"UTC","value":"2024-05-01 00:00:00"}',
    "empty_object": '{}',
    "null": 'null',
}


def _outcome(which, values, typed):
    kw = {"table": "shop.orders", "schema": pa.schema([("updated_at", pa.timestamp("us", tz="UTC"))])} if typed else {}
    try:
        out = ticdc_fast.SimpleDecoder("json", implementation=which, **kw).decode(None, values)
    except ticdc_fast.DecodeError as e:
        return ("error", e.message_index, e.reason, e.byte_offset, e.column, e.part)
    return ("rows", out.to_pylist())


@pytest.mark.parametrize("spelling", sorted(TIMESTAMP_SPELLINGS))
@pytest.mark.parametrize("typed", [False, True], ids=["generic", "typed"])
def test_timestamp_object_spellings_match_the_twin(impl, spelling, typed):
    base = _base_messages()
    doc = json.loads(base[1])
    assert doc["database"] == "shop" and doc["table"] == "orders"
    body = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    first = '"updated_at":' + json.dumps(doc["data"]["updated_at"], separators=(",", ":"))
    assert body.count(first) == 1
    changed = body.replace(first, '"updated_at":' + TIMESTAMP_SPELLINGS[spelling]).encode()
    # the row twice, so the second copy is read with the first one's key order learned
    values = [base[0], changed, changed]
    got = _outcome(impl, values, typed)
    assert got == _outcome("python", values, typed)
    if spelling in ("as_written", "escaped_value", "repeated_value"):
        assert got[0] == "rows"


def test_envelopes_that_start_alike_decode_as_the_twin(impl):
    """Messages whose envelopes start alike ({"version":..,"database":..,"table":..,"tableID":..,)
    with six tableIDs taking turns, shifted by leading spaces, cut short after that head, or
    repeating a member of it later: each decodes as the twin decodes it, with its own tableID
    and its errors at its own byte offsets."""
    base = _base_messages()
    doc = json.loads(next(v for v in base if b'"type":"INSERT"' in v))
    assert list(doc)[:4] == ["version", "database", "table", "tableID"]

    def msg(table_id, prefix=b"", **changes):
        d = dict(doc, tableID=table_id, **changes)
        return prefix + json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()

    values = [base[0]]
    ids = [112, 112, 7, 8, 9, 10, 11, 112, 7, 2**63, 112, 2**63, 11]   # six heads: more than kept
    for k, tid in enumerate(ids):
        values.append(msg(tid, b" " * (k % 3)))
    values.append(msg(112, b"\n", type="DELETE"))           # an error after the head: no old image
    values.append(msg(112)[:63])                             # the head and a byte, then the end
    values.append(msg(112)[:75])                             # the end inside the next member
    values.append(msg(112, data=[1]))                        # not an object where data belongs
    # a member of the head repeated after it: the last copy wins ("orders" has no schema here)
    values.append(msg(112).replace(b'"type":', b'"table":"orders2","type":', 1))
    outs = {}
    for which in (impl, "python"):
        dec = ticdc_fast.SimpleDecoder("json", implementation=which, on_error="dead_letter")
        outs[which] = dec.decode(None, values).to_pylist()
    assert outs[impl] == outs["python"]
    assert outs[impl][-1]["_error"] is not None or outs[impl][-1]["_table"] == "orders2"
    rows = outs[impl][1:]
    assert [r["_table_id"] for r in rows[:len(ids)] if r["_error"] is None] == [t for t in ids if t < 2**63]
    bad = [(r["_error"]["message_index"], r["_error"]["byte_offset"], r["_error"]["reason"]) for r in rows if r["_error"]]
    head_at = len(b'{"version":1,"database":"shop","table":"orders","tableID":')
    assert bad[:2] == [(10, head_at, "tableID out of int64 range"), (12, head_at + 2, "tableID out of int64 range")]
    assert [b[0] for b in bad[2:]] == [len(ids) + 1, len(ids) + 2, len(ids) + 3, len(ids) + 4]


def test_error_after_a_shifted_envelope_names_its_own_offset(impl):
    """One decoder, one message per call, the same envelope shifted by leading whitespace: the
    error found after reading (a tableID past int64) names the byte where each message has it."""
    base = _base_messages()
    doc = dict(json.loads(next(v for v in base if b'"type":"INSERT"' in v)), tableID=2**63)
    bad = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    at = bad.index(b"9223372036854775808")
    for which in (impl, "python"):
        dec = ticdc_fast.SimpleDecoder("json", implementation=which)
        dec.decode(None, [base[0]])
        for prefix in (b"", b"  ", b"\n\t\t"):
            with pytest.raises(ticdc_fast.DecodeError) as ei:
                dec.decode(None, [prefix + bad])
            assert (ei.value.byte_offset, ei.value.reason) == (at + len(prefix), "tableID out of int64 range")
