"""Open protocol: a JSON member that repeats counts by its last copy (as in Go's encoding/json,
TiCDC's own decoder), member names may be spelled with escapes, and hostile nesting in a field
is a DecodeError — the same in the Cython core and the twin (issue 11 #7, fuzz F1-F3).

Each case is decoded as message 1 after a valid message 0, so a wrong message index shows too."""
from __future__ import annotations

import pytest

import ticdc_fast
from conftest import frame, generic_row, row_event, u64

GOOD_KEY, GOOD_VALUE = frame([row_event({"id": {"t": 3, "h": True, "f": 11, "v": 1}}, ts=5)])
GOOD_ROW = generic_row(_op="INSERT", _commit_ts=5, _schema="db", _table="t", after=[("id", "1")])

ROW_KEY = b'{"ts":7,"scm":"db","tbl":"t","t":1}'
ROW_VALUE = b'{"u":{"id":{"t":3,"f":11,"v":2}}}'


def message(*events: tuple[bytes, bytes | None]) -> tuple[bytes, bytes]:
    key, value = bytearray(u64(1)), bytearray()
    for k, v in events:
        key += u64(len(k)) + k
        value += u64(len(v or b"")) + (v or b"")
    return bytes(key), bytes(value)


def decode(impl, key: bytes, value: bytes, **kw) -> list[dict]:
    dec = ticdc_fast.OpenDecoder(implementation=impl, **kw)
    rows = dec.decode([GOOD_KEY, key], [GOOD_VALUE, value]).to_pylist()
    assert rows[0] == GOOD_ROW
    return rows[1:]


def decode_error(impl, key: bytes, value: bytes) -> ticdc_fast.DecodeError:
    dec = ticdc_fast.OpenDecoder(implementation=impl)
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        dec.decode([GOOD_KEY, key], [GOOD_VALUE, value])
    # the decoder keeps working after the error
    assert dec.decode([GOOD_KEY], [GOOD_VALUE]).to_pylist() == [GOOD_ROW]
    return ei.value


# --------------------------------------------------------------------------- event key
@pytest.mark.parametrize("key, expect", [
    # an invalid earlier copy does not count
    (b'{"ts":"x","ts":7,"scm":"db","tbl":"t","t":1}', {}),
    (b'{"ts":-1,"ts":7,"scm":"db","tbl":"t","t":1}', {}),
    (b'{"ts":7,"scm":5,"scm":"db","tbl":"t","t":1}', {}),
    (b'{"ts":7,"scm":"db","tbl":[1],"tbl":"t","t":1}', {}),
    (b'{"ts":7,"scm":"db","tbl":"t","t":"row","t":1}', {}),
    (b'{"ts":7,"scm":"db","tbl":"t","rid":"x","rid":42,"t":1}', {"_row_id": 42}),
    (b'{"ts":7,"scm":"db","tbl":"t","ptn":1.5,"ptn":3,"t":1}', {"_physical_table_id": 3}),
    (b'{"ts":7,"scm":"db","tbl":"t","t":1,"ohk":1,"ohk":true}', {"_handle_key_only": True}),
    # TiCDC's claim-check key: "ohk":true then "ohk":false (protocols.md A.2)
    (b'{"ts":7,"scm":"db","tbl":"t","t":1,"ohk":"y","ohk":true,"ohk":false,"ccl":"s3://b/f.json"}',
     {"_claim_check_location": "s3://b/f.json"}),
    (b'{"ts":7,"scm":"db","tbl":"t","t":1,"ccl":7,"ccl":"s3://b/f.json"}',
     {"_claim_check_location": "s3://b/f.json"}),
    # null as the last copy: the field is absent
    (b'{"ts":7,"scm":"db","tbl":"t","t":1,"rid":"x","rid":null}', {}),
])
def test_event_key_repeated_field_last_wins(impl, key, expect):
    rows = decode(impl, *message((key, ROW_VALUE)))
    assert rows == [generic_row(_op="INSERT", _commit_ts=7, _schema="db", _table="t",
                                after=[("id", "2")], **expect)]


def test_event_key_faults_reported_in_one_order(impl):
    """Two bad fields: both implementations name the same one (ts, scm, tbl, rid, ptn, t, ohk,
    ccl order, whatever the document order), and only after the whole key is read."""
    err = decode_error(impl, *message((b'{"t":"x","scm":"db","tbl":"t","ts":"y","ts":"z"}', ROW_VALUE)))
    assert err.message_index == 1 and "'ts'" in str(err)
    err = decode_error(impl, *message((b'{"ts":7,"t":"x","t":1,"ohk":3,"rid":"q"}', ROW_VALUE)))
    assert err.message_index == 1 and "event key field" in str(err) and "ohk" not in str(err)


# --------------------------------------------------------------------------- column objects
@pytest.mark.parametrize("col", [
    b'{"t":"x","t":3,"f":11,"v":2}',
    b'{"t":3,"t":300,"t":3,"f":11,"v":2}',
    b'{"t":3,"f":-1,"f":11,"v":2}',
    b'{"t":3,"h":5,"h":true,"f":11,"v":2}',
    b'{"f":11,"v":2,"t":[[]],"t":3}',
])
def test_column_object_repeated_member_last_wins(impl, col):
    rows = decode(impl, *message((ROW_KEY, b'{"u":{"id":' + col + b'}}')))
    assert rows[0]["after"] == [("id", "2")]


def test_column_object_faults_judged_in_one_order(impl):
    """Type, flags and handle marker all bad (in another order): the type is reported, as the
    twin judges it first."""
    col = b'{"h":1,"f":"x","t":"y","v":2}'
    err = decode_error(impl, *message((ROW_KEY, b'{"u":{"ok":{"t":3,"f":0,"v":1},"id":' + col + b'}}')))
    assert (err.message_index, err.part, err.column) == (1, "value", "id")
    assert err.reason.startswith("unknown column type code")


def test_escaped_member_names(impl):
    """`"\\u0074"` is `"t"`: escaped spellings of column-object and event-key members mean the
    same members (fuzz F2)."""
    key = b'{"\\u0074s":7,"sc\\u006d":"db","\\u0074bl":"t","\\u0074":1,"r\\u0069d":4}'
    value = (b'{"\\u0075":{"id":{"\\u0074":3,"\\u0068":true,"\\u0066":11,"\\u0076":2},'
             b'"n":{"t":15,"\\u0066":64,"v":"x","\\u0074":253}}}')
    rows = decode(impl, *message((key, value)))
    assert rows == [generic_row(_op="INSERT", _commit_ts=7, _schema="db", _table="t", _row_id=4,
                                after=[("id", "2"), ("n", "x")])]


def test_escaped_member_names_typed(impl):
    import pyarrow as pa
    value = b'{"u":{"id":{"\\u0074":8,"\\u0066":11,"v":2},"n":{"\\u0074":15,"f":64,"v":"x"}}}'
    dec = ticdc_fast.OpenDecoder(implementation=impl, table="db.t",
                                 schema=pa.schema([("id", pa.int64()), ("n", pa.string())]))
    batch = dec.decode(*[[x] for x in message((ROW_KEY, value))])
    assert batch.to_pylist() == [{"_op": "INSERT", "_commit_ts": 7, "id": 2, "n": "x", "_ddl": None,
                                  "_handle_key_only": False, "_claim_check_location": None,
                                  "_before_incomplete": False}]


# --------------------------------------------------------------------------- repeated columns, images
@pytest.mark.parametrize("image", [
    b'{"id":{"t":"bad"},"id":{"t":3,"f":11,"v":2}}',
    b'{"id":5,"id":{"t":3,"f":11,"v":2}}',
    b'{"id":{"t":3,"f":-4,"v":9},"id":{"t":3,"f":11,"v":2}}',
])
def test_repeated_column_judged_by_last_copy(impl, image):
    rows = decode(impl, *message((ROW_KEY, b'{"u":' + image + b'}')))
    assert rows[0]["after"] == [("id", "2")]


@pytest.mark.parametrize("value, op, after, before", [
    (b'{"u":5,"u":{"id":{"t":3,"f":11,"v":2}}}', "INSERT", [("id", "2")], None),
    (b'{"u":{"id":{"t":"?"}},"u":{"id":{"t":3,"f":11,"v":2}}}', "INSERT", [("id", "2")], None),
    (b'{"u":{"id":{"t":3,"f":11,"v":2}},"p":[1],"p":{"id":{"t":3,"f":11,"v":1}}}', "UPDATE",
     [("id", "2")], [("id", "1")]),
    (b'{"d":{"id":{"t":3,"f":"?","v":1}},"d":null,"u":{"id":{"t":3,"f":11,"v":2}}}', "INSERT",
     [("id", "2")], None),
])
def test_row_value_repeated_image_last_wins(impl, value, op, after, before):
    rows = decode(impl, *message((ROW_KEY, value)))
    assert rows == [generic_row(_op=op, _commit_ts=7, _schema="db", _table="t", after=after, before=before)]


def test_row_value_first_fault_in_u_p_d_order(impl):
    """Faults in several images: the one in u is reported, whatever the document order."""
    value = b'{"p":{"a":{"t":3,"f":"bad","v":1}},"u":{"b":{"t":"bad","f":0,"v":1}}}'
    err = decode_error(impl, *message((ROW_KEY, value)))
    assert (err.message_index, err.column) == (1, "b")
    assert err.reason.startswith("unknown column type code")


# --------------------------------------------------------------------------- DDL value
@pytest.mark.parametrize("value, query, ddl_type", [
    (b'{"q":5,"q":"CREATE TABLE t (a INT)","t":3}', "CREATE TABLE t (a INT)", 3),
    (b'{"q":"DROP TABLE t","t":"x","t":4}', "DROP TABLE t", 4),
    (b'{"q":"DROP TABLE t","t":4294967296,"t":4}', "DROP TABLE t", 4),
])
def test_ddl_value_repeated_field_last_wins(impl, value, query, ddl_type):
    rows = decode(impl, *message((b'{"ts":7,"scm":"db","tbl":"t","t":2}', value)))
    assert rows == [generic_row(_op="DDL", _commit_ts=7, _schema="db", _table="t", _ddl=query,
                                _ddl_type=ddl_type)]


# --------------------------------------------------------------------------- hostile nesting (F1, F3)
DEEP = b"[" * 1000 + b"]" * 1000


def test_deeply_nested_key_value_is_a_decode_error(impl):
    """The twin formatted the value into its message with repr(): RecursionError (fuzz F1)."""
    err = decode_error(impl, *message((b'{"ts":7,"scm":"db","tbl":"t","t":' + DEEP + b'}', ROW_VALUE)))
    assert err.message_index == 1 and err.part == "key" and len(str(err)) < 300


@pytest.mark.parametrize("member", [b"t", b"f"])
def test_deeply_nested_column_member_is_a_decode_error(impl, member):
    col = b'{"t":3,"f":0,"v":1,"' + member + b'":' + DEEP + b"}"
    err = decode_error(impl, *message((ROW_KEY, b'{"u":{"id":' + col + b'}}')))
    assert (err.message_index, err.column) == (1, "id") and len(str(err)) < 300


def test_huge_number_beside_deep_nesting_decodes_alike(impl):
    """orjson refuses 1e309, so the twin parses with the standard library, which recurses: a
    document within the 1024-level limit must decode as in the core (fuzz F3)."""
    value = b'{"x":1e309,"y":' + DEEP + b',"u":{"id":{"t":3,"f":11,"v":2}}}'
    rows = decode(impl, *message((ROW_KEY, value)))
    assert rows[0]["after"] == [("id", "2")]
    key = b'{"ts":7,"scm":"db","tbl":"t","t":1,"x":-1e309,"y":' + DEEP + b"}"
    assert decode(impl, *message((key, ROW_VALUE)))[0]["after"] == [("id", "2")]


@pytest.mark.parametrize("depth", [1025, 5000])
def test_huge_number_beside_too_deep_nesting_is_a_decode_error(impl, depth):
    value = b'{"x":1e309,"y":' + b"[" * depth + b"]" * depth + b',"u":{"id":{"t":3,"f":11,"v":2}}}'
    err = decode_error(impl, *message((ROW_KEY, value)))
    assert err.message_index == 1 and "nesting" in str(err)

