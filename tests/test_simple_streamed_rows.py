"""Typed simple-protocol rows are converted while their data/old map is read, straight into the
target columns, in whatever order the columns come (JSON: sorted keys; Avro: Go map order, random).
A repeated column or a value that fails reads the message again (Avro: through the row image;
JSON: the last-wins reading), whose answer is the twin's; a message that fails after its map
leaves no row.  The Avro rows here are built entry by entry so that each case happens inside one
map; the JSON ones are edited as text."""
from __future__ import annotations

import functools

import pyarrow as pa
import pytest

import ticdc_fast
from twin_errors import same_error_as_twin
from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable, make_tso

T0 = 1_714_521_600_000
TABLE = SimpleTable("db", "t", 70, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("name", "varchar", length=20),
    SimpleColumn("n", "int"), SimpleColumn("ts", "timestamp", decimal=3)])
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("n", pa.int8()), ("ts", pa.timestamp("us", "UTC"))])


def _message(data, op="INSERT", old=None):
    events = [SimpleDML(TABLE, op, make_tso(T0), data=data, old=old)]
    return SimpleEncoder("avro").encode(events)[0][1]


@functools.cache
def _frame():
    """The bytes of an INSERT before and after its data map (an empty map is the one byte 0)."""
    empty, one = _message({}), _message({"id": 1})
    at = next(i for i, (a, b) in enumerate(zip(empty, one)) if a != b)
    assert empty[at] == 0 and one[at] == 2
    return empty[:at], empty[at + 1:]


def _entry(column, value):
    """One map entry (key, union branch, value) as the encoder writes it."""
    head, tail = _frame()
    m = _message({column: value})
    return m[len(head) + 1:len(m) - len(tail) - 1]


def _insert(entries, trailing=b""):
    head, tail = _frame()
    return head + bytes([2 * len(entries)]) + b"".join(entries) + b"\x00" + tail + trailing


def _decode(impl, values, encoding="avro", **kw):
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=SCHEMA, implementation=impl, **kw)
    boot = SimpleEncoder(encoding).encode([SimpleBootstrap(TABLE)])[0][1]
    return dec, dec.decode(None, [boot] + values)


def _read_again(dec):
    """Rows the core streamed and then read again (the twin streams nothing)."""
    return getattr(dec._rows, "rows_read_again", 0)


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_rows_in_any_column_order_stream_without_a_second_reading(impl, encoding):
    """JSON data comes in sorted key order and Avro maps in random order, neither the target
    order: every row still streams once."""
    events = [SimpleBootstrap(TABLE)]
    for i in range(200):
        row = {"id": i, "name": None if i % 7 == 0 else f"名{i}", "n": (i % 250) - 125}
        if i % 3:
            row["ts"] = ("Asia/Shanghai", f"2024-05-01 08:00:{i % 60:02d}.{i % 1000:03d}")
        op = "INSERT" if i % 5 else "DELETE"
        events.append(SimpleDML(TABLE, op, make_tso(T0 + i), data=None if op == "DELETE" else row,
                                old=row if op == "DELETE" else None))
    values = SimpleEncoder(encoding, avro_map_order="random", seed=5).encode(events)
    values = [v for _, v in values]
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=SCHEMA, implementation=impl)
    got = dec.decode(None, values)
    want = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=SCHEMA, implementation="python").decode(None, values)
    assert got.equals(want)
    assert got.column("n").to_pylist()[1:4] == [-125, -124, -123]
    # JSON: the first TIMESTAMP naming a zone the core has not loaded stops the message for the
    # front end (once per zone), which reads it again after loading the zone
    assert _read_again(dec) == (1 if impl == "cython" and encoding == "json" else 0)


def _rows(batch):
    return [(r["_op"], r["id"], r["name"], r["n"]) for r in batch.to_pylist()][1:]


def test_in_order_rows_with_missing_and_null_columns(impl):
    rows = [_insert([_entry("id", 1), _entry("name", "a"), _entry("n", 5)]),
            _insert([_entry("id", 2), _entry("n", None)]),                 # name missing, n null
            _insert([_entry("id", 3)]),
            _insert([_entry("id", 4), _entry("name", "日本"), _entry("n", -128), _entry("ts", ("UTC", "2024-05-01 00:00:01.250"))])]
    _, got = _decode(impl, rows)
    assert _rows(got) == [("INSERT", 1, "a", 5), ("INSERT", 2, None, None), ("INSERT", 3, None, None),
                          ("INSERT", 4, "日本", -128)]
    assert got.column("ts").to_pylist()[-1].isoformat() == "2024-05-01T00:00:01.250000+00:00"
    _, want = _decode("python", rows)
    assert got.equals(want)


def test_columns_out_of_target_order(impl):
    rows = [_insert([_entry("n", 7), _entry("name", "b"), _entry("id", 9)]),
            _insert([_entry("id", 10), _entry("n", 1), _entry("name", "c")])]
    _, got = _decode(impl, rows)
    assert _rows(got) == [("INSERT", 9, "b", 7), ("INSERT", 10, "c", 1)]
    _, want = _decode("python", rows)
    assert got.equals(want)


def test_repeated_column_last_copy_wins(impl):
    rows = [_insert([_entry("id", 1), _entry("name", "x"), _entry("n", 5), _entry("n", 7)]),
            _insert([_entry("id", 2), _entry("id", 3), _entry("name", "y")]),
            _insert([_entry("id", 4), _entry("n", 6), _entry("n", None)]),
            _insert([_entry("id", 5), _entry("n", 6)])]
    dec, got = _decode(impl, rows)
    assert _rows(got) == [("INSERT", 1, "x", 7), ("INSERT", 3, "y", None), ("INSERT", 4, None, None),
                          ("INSERT", 5, None, 6)]
    _, want = _decode("python", rows)
    assert got.equals(want)
    assert _read_again(dec) == (3 if impl == "cython" else 0)


def _error(impl, values, **kw):
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _decode(impl, values, **kw)
    e = ei.value
    return e.message_index, e.byte_offset, e.column, e.reason


def test_failing_value_then_trailing_bytes_reports_the_framing_error(impl):
    """The row's map converts with an error (n = 1000 does not fit int8), and the message has a
    trailing byte: the twin reads the whole message before converting, so the framing error is
    the one reported, at the end of the message."""
    bad = _insert([_entry("id", 1), _entry("n", 1000), _entry("name", "z")], trailing=b"\x00")
    got = _error(impl, [bad])
    assert got == _error("python", [bad])
    assert got[0] == 1 and "trailing bytes" in got[3] and got[1] == len(bad) - 1


def test_failing_value_reports_its_column_and_offset(impl):
    bad = _insert([_entry("id", 1), _entry("n", 1000), _entry("name", "z")])
    got = _error(impl, [_insert([_entry("id", 0)]), bad])
    assert got == _error("python", [_insert([_entry("id", 0)]), bad])
    assert got[0] == 2 and got[2] == "n"


def _invalid_text_entry():
    entry = _entry("name", "zz")
    return entry.replace(b"zz", b"z\xff")


def test_replaced_invalid_utf8_counted_once_when_the_row_is_read_again(impl):
    """A streamed text column with invalid UTF-8 is replaced (and counted) before a repeated column
    sends the row through the image, which converts it again: it counts once, as in the twin."""
    again = _insert([_entry("id", 1), _invalid_text_entry(), _entry("n", 1), _entry("n", 2)])
    counts = []
    for which in (impl, "python"):
        dec, out = _decode(which, [again])
        assert _rows(out) == [("INSERT", 1, "z\ufffd", 2)]
        counts.append(dec.invalid_utf8_replaced)
    assert counts == [1, 1]


def test_row_failing_after_its_map_is_skipped_whole(impl):
    """A streamed row whose message fails on a trailing byte leaves nothing behind: the skipped
    message has no row and counts no replaced text, as in the twin."""
    good = _insert([_entry("id", 1), _invalid_text_entry()])
    failing = _insert([_entry("id", 2), _invalid_text_entry(), _entry("n", 3)], trailing=b"\x00")
    counts = []
    for which in (impl, "python"):
        dec, out = _decode(which, [good, failing, good], on_error="skip")
        assert _rows(out) == [("INSERT", 1, "z\ufffd", None), ("INSERT", 1, "z\ufffd", None)]
        counts.append(dec.invalid_utf8_replaced)
    assert counts == [2, 2]


# --------------------------------------------------------------------------- JSON
def _json_insert(data_text, tail=""):
    """An INSERT whose data object is `data_text` (JSON text, any key order, repeats allowed)."""
    doc = SimpleEncoder("json").encode([SimpleDML(TABLE, "INSERT", make_tso(T0), data={"id": 0})])[0][1].decode()
    head = doc[:doc.index('"data":')]
    return (head + '"data":' + data_text + tail + "}").encode()


def test_json_repeated_column_last_copy_wins(impl):
    rows = [_json_insert('{"id":"1","n":"5","name":"x","n":"7"}'),
            _json_insert('{"id":"2","n":"3"}')]
    dec, got = _decode(impl, rows, "json")
    assert _rows(got) == [("INSERT", 1, "x", 7), ("INSERT", 2, None, 3)]
    _, want = _decode("python", rows, "json")
    assert got.equals(want)
    assert _read_again(dec) == (1 if impl == "cython" else 0)


def test_json_envelope_key_repeated_after_the_streamed_data(impl):
    """"type" again after data: the last copy (UPDATE) stands, with the old image that follows;
    the row streamed under the first copy is gone."""
    rows = [_json_insert('{"id":"1","n":"5"}', ',"old":{"id":"1","n":"4"},"type":"UPDATE"')]
    dec, got = _decode(impl, rows, "json")
    assert _rows(got) == [("UPDATE", 1, None, 5)]
    _, want = _decode("python", rows, "json")
    assert got.equals(want)


def test_json_failing_value_then_malformed_tail_reports_the_syntax_error(impl):
    bad = _json_insert('{"id":"1","n":"1000"}', ',"old":nul')
    with pytest.raises(ticdc_fast.DecodeError) as got:
        _decode(impl, [bad], "json")
    with pytest.raises(ticdc_fast.DecodeError) as want:
        _decode("python", [bad], "json")
    assert (got.value.byte_offset, got.value.reason) == (want.value.byte_offset, want.value.reason)
    assert "malformed JSON" in got.value.reason


def test_json_failing_value_names_its_column(impl):
    bad = _json_insert('{"id":"1","n":"1000","name":"q"}')
    errs = []
    for which in (impl, "python"):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            _decode(which, [bad], "json")
        errs.append((ei.value.message_index, ei.value.byte_offset, ei.value.column, ei.value.reason))
    assert errs[0] == errs[1] and errs[0][2] == "n"


# --------------------------------------------------------------------------- other tables' rows
OTHER = SimpleTable("db", "other", 71, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("d", "double"), SimpleColumn("b", "varbinary", length=8),
    SimpleColumn("u", "bigint", unsigned=True)])


def _other_values(encoding, rows):
    events = [SimpleBootstrap(TABLE), SimpleBootstrap(OTHER)]
    events += [SimpleDML(OTHER, "INSERT", make_tso(T0 + i), data=r) for i, r in enumerate(rows)]
    events.append(SimpleDML(TABLE, "INSERT", make_tso(T0 + 99), data={"id": 7, "n": 3}))
    return [v for _, v in SimpleEncoder(encoding).encode(events)]


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_other_tables_rows_are_dropped_but_still_checked(impl, encoding):
    """A typed decoder reads another table's rows only to check them: they leave no row, and a
    bad value in them is still the twin's error."""
    rows = [{"id": 1, "d": 0.1 + 0.2, "b": b"\x00\xff", "u": 2**64 - 1}, {"id": 2, "d": None, "b": None, "u": 0}]
    values = _other_values(encoding, rows)
    dec = ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=SCHEMA, implementation=impl)
    got = dec.decode(None, values)
    # the other table's BOOTSTRAP is its own too: only this table's rows come out
    assert [(r["_op"], r["id"], r["n"]) for r in got.to_pylist()] == [("BOOTSTRAP", None, None), ("INSERT", 7, 3)]
    bad = _other_values(encoding, [{"id": 3, "d": 0.5, "b": None, "u": 1}])
    if encoding == "avro":     # the double 0.5 made NaN in place
        assert bad[2].count(bytes.fromhex("000000000000e03f")) == 1
        bad[2] = bad[2].replace(bytes.fromhex("000000000000e03f"), bytes.fromhex("000000000000f87f"))
    else:                      # a column the table does not have
        bad[2] = bad[2].replace(b'"u":', b'"zz":')
    errs = []
    for which in (impl, "python"):
        with pytest.raises(ticdc_fast.DecodeError) as ei:
            ticdc_fast.SimpleDecoder(encoding, table="db.t", schema=SCHEMA, implementation=which).decode(None, bad)
        errs.append((ei.value.message_index, ei.value.byte_offset, ei.value.column, ei.value.reason))
    assert errs[0] == errs[1] and errs[0][0] == 2
    assert ("NaN" in errs[0][3]) if encoding == "avro" else (errs[0][2] == "zz")


# --------------------------------------------------------------------------- key look-up
def test_avro_key_that_is_no_column_is_named(impl):
    """A map key of a length the table's names have but no name's bytes ("nn", "idd"): the
    one slot its hash picks holds another column or none, and the error names the key."""
    for key in ("nn", "idd", "name_x"):
        entry = _entry("n", 5).replace(b"\x02n", bytes([2 * len(key)]) + key.encode(), 1)
        bad = _insert([_entry("id", 1), entry])
        got = _error(impl, [bad])
        assert got == _error("python", [bad])
        assert got[2] == key and "not in the message's schema" in got[3]


LONG = SimpleTable("db", "t", 72, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("a_column_name_of_thirty_bytes", "varchar", length=20),
    SimpleColumn("n", "int")])


def test_avro_long_column_names_use_the_hash_index(impl):
    """A table with a name longer than 16 bytes has no perfect hash: its keys go to the hash
    index, in any order."""
    events = [SimpleBootstrap(LONG)] + [
        SimpleDML(LONG, "INSERT", make_tso(T0 + i), data={"id": i, "a_column_name_of_thirty_bytes": f"v{i}", "n": i})
        for i in range(30)]
    values = [v for _, v in SimpleEncoder("avro", avro_map_order="random", seed=2).encode(events)]
    schema = pa.schema([("id", pa.int64()), ("a_column_name_of_thirty_bytes", pa.string()), ("n", pa.int8())])
    got = ticdc_fast.SimpleDecoder("avro", table="db.t", schema=schema, implementation=impl).decode(None, values)
    want = ticdc_fast.SimpleDecoder("avro", table="db.t", schema=schema, implementation="python").decode(None, values)
    assert got.equals(want)
    assert got.column("a_column_name_of_thirty_bytes").to_pylist()[1:4] == ["v0", "v1", "v2"]


def test_row_stopped_for_a_zone_counts_its_replaced_text_once(impl):
    """The fuzzer's case (seed 2701, simple-avro 5628): a streamed row replaces invalid UTF-8 in
    a column, then meets a TIMESTAMP whose zone the core has not loaded; the row is dropped, the
    front end loads the zone and the message is decoded again.  Its text counts once."""
    row = _insert([_entry("id", 1), _invalid_text_entry(), _entry("ts", ("Europe/Paris", "2024-05-01 02:00:01.250"))])
    counts = []
    for which in (impl, "python"):
        dec, out = _decode(which, [row])
        assert _rows(out) == [("INSERT", 1, "z\ufffd", None)]
        assert out.column("ts").to_pylist()[1].isoformat() == "2024-05-01T00:00:01.250000+00:00"
        counts.append(dec.invalid_utf8_replaced)
    assert counts == [1, 1]


# --------------------------------------------------------------------------- direct Avro values
NUMS = SimpleTable("db", "t", 73, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("d", "double"), SimpleColumn("f", "float"),
    SimpleColumn("f32", "float"), SimpleColumn("u", "bigint", unsigned=True), SimpleColumn("s", "smallint"),
    SimpleColumn("txt", "text"), SimpleColumn("amount", "decimal", length=12, decimal=2),
    SimpleColumn("at", "datetime", decimal=6)])
NUMS_SCHEMA = pa.schema([("id", pa.int64()), ("d", pa.float64()), ("f", pa.float64()), ("f32", pa.float32()),
                         ("u", pa.decimal128(20, 0)), ("s", pa.int16()), ("txt", pa.string()),
                         ("amount", pa.decimal128(12, 2)), ("at", pa.timestamp("us"))])
NUMS_SCHEMA_U = NUMS_SCHEMA.set(4, pa.field("u", pa.uint64()))


def _nums_values(rows, order="random"):
    events = [SimpleBootstrap(NUMS)] + [SimpleDML(NUMS, "INSERT", make_tso(T0 + i), data=r) for i, r in enumerate(rows)]
    return [v for _, v in SimpleEncoder("avro", avro_map_order=order, seed=3).encode(events)]


@pytest.mark.parametrize("schema", [NUMS_SCHEMA, NUMS_SCHEMA_U], ids=["u-decimal", "u-uint64"])
def test_avro_values_written_straight_to_their_targets(impl, schema):
    """Doubles of 17 digits, float32 values that are no short decimal (into float64 and float32
    targets), unsigned BIGINT past 2^63, non-ASCII text, decimals and DATETIME(6), in Go map order,
    with nulls: the core writes the numeric, text, decimal and datetime branches straight into
    their targets, the twin converts them from its row model; both give the same batch and the
    exact values."""
    import struct
    f32 = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    rows = [{"id": i, "d": None if i % 5 == 0 else 0.1 * i + 1 / 3, "f": f32 * i, "f32": None if i % 7 == 0 else f32 * i,
             "u": 2**64 - 1 - i, "s": -32768 + i, "txt": None if i % 4 == 0 else f"注文 {i} 🎁",
             "amount": f"{i}.{i % 100:02d}", "at": f"2024-05-01 00:00:{i % 60:02d}.{i:06d}"}
            for i in range(60)]
    values = _nums_values(rows)
    got = ticdc_fast.SimpleDecoder("avro", table="db.t", schema=schema, implementation=impl).decode(None, values)
    want = ticdc_fast.SimpleDecoder("avro", table="db.t", schema=schema, implementation="python").decode(None, values)
    assert got.equals(want)
    out = got.to_pylist()[1:]
    assert [r["d"] for r in out[:3]] == [None, 0.1 + 1 / 3, 0.2 + 1 / 3]
    assert out[3]["f32"] == struct.unpack("<f", struct.pack("<f", f32 * 3))[0] and out[3]["f"] == out[3]["f32"]
    assert int(out[2]["u"]) == 2**64 - 3 and out[2]["s"] == -32766 and out[2]["txt"] == "注文 2 🎁"
    assert str(out[12]["amount"]) == "12.12" and out[12]["at"].microsecond == 12


def _nums_error(which, values, schema=NUMS_SCHEMA):
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        ticdc_fast.SimpleDecoder("avro", table="db.t", schema=schema, implementation=which).decode(None, values)
    e = ei.value
    return e.message_index, e.byte_offset, e.column, e.reason


def test_avro_direct_values_that_fail_or_repeat_are_the_twins(impl):
    """A NaN double, a float32 NaN, an unsigned value into an int16-range target and a repeated
    column, each met by the direct writers: the same error (message, offset, column, reason) or
    the same last-copy-wins row as the twin."""
    values = _nums_values([{"id": 1, "d": 0.5, "f": 0.25, "f32": 0.75, "u": 5, "s": 7}], order="table")
    msg = values[1]
    nan_d = msg.replace(bytes.fromhex("000000000000e03f"), bytes.fromhex("000000000000f87f"), 1)
    nan_f = msg.replace(bytes.fromhex("0000403f"), bytes.fromhex("0000c07f"), 1)
    for bad, column in ((nan_d, "d"), (nan_f, "f32")):
        got = _nums_error(impl, [values[0], bad])
        assert got == _nums_error("python", [values[0], bad])
        assert got[0] == 1 and got[2] == column and "NaN" in got[3]
    # smallint 7 as zig-zag 14: made 40000 (out of SMALLINT range) by splicing a 3-byte varint
    at = msg.index(b"\x02s") + 3
    assert msg[at] == 14
    wide = msg[:at] + bytes([0x80 | (80000 & 0x7F), 0x80 | ((80000 >> 7) & 0x7F), 80000 >> 14]) + msg[at + 1:]
    got = _nums_error(impl, [values[0], wide])
    assert got == _nums_error("python", [values[0], wide])
    assert got[2] == "s" and "range" in got[3]


def test_avro_set_bitmask_past_2_63_into_an_integer_target(impl):
    """A SET of 64 elements with its top bit set: TiCDC writes the uint64 bitmask as a negative
    long, read back as unsigned on the direct path as in the twin."""
    table = SimpleTable("db", "t", 74, make_tso(T0 - 10_000), [
        SimpleColumn("id", "bigint", nullable=False), SimpleColumn("s", "set", elements=[f"e{i}" for i in range(64)])])
    events = [SimpleBootstrap(table)] + [SimpleDML(table, "INSERT", make_tso(T0 + i), data=r)
                                         for i, r in enumerate([{"id": 1, "s": (1 << 63) | 5}, {"id": 2, "s": 3}])]
    values = [v for _, v in SimpleEncoder("avro").encode(events)]
    schema = pa.schema([("id", pa.int64()), ("s", pa.uint64())])
    dec = ticdc_fast.SimpleDecoder("avro", table="db.t", schema=schema, implementation=impl)
    got = dec.decode(None, values)
    assert got.column("s").to_pylist() == [None, (1 << 63) | 5, 3]
    assert _read_again(dec) == 0


# --------------------------------------------------------------------------- JSON value strings
INTS = SimpleTable("db", "t", 75, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("n", "tinyint"),
    SimpleColumn("u", "bigint", unsigned=True), SimpleColumn("m", "mediumint", unsigned=True)])
INTS_SCHEMA = pa.schema([("id", pa.int64()), ("n", pa.int8()), ("u", pa.uint64()), ("m", pa.int32())])


def _ints_message(data_text):
    doc = SimpleEncoder("json").encode([SimpleDML(INTS, "INSERT", make_tso(T0), data={"id": 0})])[0][1].decode()
    return (doc[:doc.index('"data":')] + '"data":' + data_text + "}").encode()


def _ints_decode(which, data_texts):
    boot = SimpleEncoder("json").encode([SimpleBootstrap(INTS)])[0][1]
    dec = ticdc_fast.SimpleDecoder("json", table="db.t", schema=INTS_SCHEMA, implementation=which)
    return dec.decode(None, [boot] + [_ints_message(t) for t in data_texts])


def test_json_integer_strings_into_integer_targets(impl):
    """Integer columns' strings streamed into integer targets: every digit count, the ends of
    each range, "-0", 2^64 - 1, in and out of key order, nulls, an escaped digit.  The batch is
    the twin's."""
    texts = ['{"id":"-0","n":"-128","u":"18446744073709551615","m":"16777215"}',
             '{"u":"0","m":"0","n":"127","id":"-9223372036854775808"}',
             '{"id":"9223372036854775807","n":null,"u":null}',
             '{"id":"5","n":"\\u0031","u":"1","m":"7"}']
    texts += ['{"id":"%d","n":"%d","u":"%d","m":"%d"}' % (-(10**k) + 1, k, 10**(k + 1) - 1, 10**min(k, 7))
              for k in range(19)]
    got = _ints_decode(impl, texts)
    assert got.equals(_ints_decode("python", texts))
    rows = got.to_pylist()[1:]
    assert [(r["id"], r["n"], r["u"], r["m"]) for r in rows[:4]] == [
        (0, -128, 2**64 - 1, 16777215), (-2**63, 127, 0, 0), (2**63 - 1, None, None, None), (5, 1, 1, 7)]
    assert rows[4 + 18]["u"] == 10**19 - 1 and rows[4 + 18]["id"] == -(10**18) + 1


@pytest.mark.parametrize("value", ['past', '"-129"', '"007"', '" 1"', '""', '"1.0"', '"-"', '"+1"',
                                   '"123456789012345678901234"', '"1e2"', '5', '"-1\\u0030x"'])
@pytest.mark.parametrize("column", ["n", "u", "m"])
def test_json_integer_strings_that_fail_are_the_twins(impl, value, column):
    """A string that is no integer, one out of the column's or the target's range, or a JSON
    number where the simple protocol writes a string fails with the twin's message, offset,
    column and reason."""
    if value == "past":     # one past the column's range
        value = {"n": '"128"', "u": '"18446744073709551616"', "m": '"16777216"'}[column]
    text = '{"id":"1","%s":%s}' % (column, value)
    g = same_error_as_twin(lambda which: _ints_decode(which, [text]), impl)
    assert g.message_index == 1 and g.column == column


def test_json_integer_string_repeated_last_copy_wins(impl):
    texts = ['{"id":"1","n":"5","u":"2","n":"-7"}', '{"id":"2","n":"3","n":"300","n":"4"}']
    got = _ints_decode(impl, texts)
    assert got.equals(_ints_decode("python", texts))
    assert [(r["id"], r["n"]) for r in got.to_pylist()[1:]] == [(1, -7), (2, 4)]


def _nums_json(data_texts):
    doc = SimpleEncoder("json").encode([SimpleDML(NUMS, "INSERT", make_tso(T0), data={"id": 0})])[0][1].decode()
    boot = SimpleEncoder("json").encode([SimpleBootstrap(NUMS)])[0][1]
    return [boot] + [(doc[:doc.index('"data":')] + '"data":' + t + "}").encode() for t in data_texts]


def _nums_json_decode(which, values, schema=NUMS_SCHEMA):
    return ticdc_fast.SimpleDecoder("json", table="db.t", schema=schema, implementation=which).decode(None, values)


def _nums_json_error(which, values):
    with pytest.raises(ticdc_fast.DecodeError) as ei:
        _nums_json_decode(which, values)
    e = ei.value
    return e.message_index, e.byte_offset, e.column, e.reason


def test_json_float_strings_into_float_targets(impl):
    """DOUBLE and FLOAT strings as the encoder writes them (17-digit doubles, float32 values that
    are no short decimal, into float64 and float32 targets, nulls) and as other writers might
    (an exponent, "-0", a text past 32 bytes, an escaped digit): the batch is the twin's."""
    import struct
    f32 = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    rows = [{"id": i, "d": None if i % 5 == 0 else 0.1 * i + 1 / 3, "f": f32 * i, "f32": None if i % 7 == 0 else f32 * i}
            for i in range(40)]
    events = [SimpleBootstrap(NUMS)] + [SimpleDML(NUMS, "INSERT", make_tso(T0 + i), data=r) for i, r in enumerate(rows)]
    values = [v for _, v in SimpleEncoder("json").encode(events)]
    values += _nums_json(['{"id":"1","d":"1e308","f":"-0","f32":"3.4028234663852886e38"}',
                          '{"id":"2","d":"0.1000000000000000055511151231257827021181583404541015625","f":"1E-45"}',
                          '{"id":"3","d":"\\u0031.5","f32":"-0.0","f":"16777217"}'])[1:]
    got = _nums_json_decode(impl, values)
    assert got.equals(_nums_json_decode("python", values))
    out = got.to_pylist()[1:]
    assert [r["d"] for r in out[:3]] == [None, 0.1 + 1 / 3, 0.2 + 1 / 3]
    assert out[3]["f32"] == struct.unpack("<f", struct.pack("<f", f32 * 3))[0] and out[3]["f"] == out[3]["f32"]
    assert [out[40]["d"], out[41]["d"], out[42]["d"]] == [1e308, 0.1, 1.5]
    assert struct.pack("<d", out[40]["f"]) == struct.pack("<d", -0.0) and out[42]["f"] == 16777216.0
    assert out[40]["f32"] == struct.unpack("<f", struct.pack("<f", 3.4028234663852886e38))[0]


@pytest.mark.parametrize("value", ['"1e400"', 'past', '"abc"', '"1."', '".5"', '"01"', '"NaN"', '""',
                                   '" 1"', '"1 "', '1.5', '"1.5\\u0000"'])
@pytest.mark.parametrize("column", ["d", "f", "f32"])
def test_json_float_strings_that_fail_are_the_twins(impl, value, column):
    """A number past the column's range, a string that is no JSON number, or a JSON number where
    the simple protocol writes a string: the twin's message, offset, column and reason."""
    if value == "past":
        value = '"-1.8e308"' if column == "d" else '"3.5e38"'
    values = _nums_json(['{"id":"1","%s":%s}' % (column, value)])
    got = _nums_json_error(impl, values)
    assert got == _nums_json_error("python", values) and got[2] == column


def test_json_decimal_and_datetime_strings_into_their_targets(impl):
    """DECIMAL(12,2) and DATETIME(6) strings streamed into their targets: fewer or more (zero)
    fraction digits than the scale, the ends of the precision, a date alone, every fraction
    length, nulls, an escaped digit: the batch is the twin's."""
    texts = ['{"id":"1","amount":"-0.50","at":"2024-05-01 00:00:00"}',
             '{"id":"2","amount":"9999999999.99","at":"2024-05-01"}',
             '{"id":"3","amount":"1.5","at":"1970-01-01 00:00:00.1"}',
             '{"id":"4","amount":"1.500","at":"9999-12-31 23:59:59.999999"}',
             '{"id":"5","amount":null,"at":null}',
             '{"id":"6","amount":"\\u0037","at":"2024-05-01 00:00:0\\u0031"}']
    texts += ['{"id":"%d","amount":"%s","at":"2024-05-01 12:34:56.%s"}' % (10 + k, "7" * k + ".25", "9" * k)
              for k in range(1, 7)]
    values = _nums_json(texts)
    got = _nums_json_decode(impl, values)
    assert got.equals(_nums_json_decode("python", values))
    out = got.to_pylist()[1:]
    assert [str(r["amount"]) for r in out[:4]] == ["-0.50", "9999999999.99", "1.50", "1.50"]
    assert out[5]["amount"] == 7 and out[5]["at"].second == 1 and out[4]["amount"] is None
    assert out[3]["at"].microsecond == 999999 and out[2]["at"].microsecond == 100000
    assert out[11]["at"].microsecond == 999999 and str(out[11]["amount"]) == "777777.25"


@pytest.mark.parametrize("value", ['"1.234"', '"12345678901.00"', '"abc"', '"1e2"', '"."', '"-"', '""',
                                   '"2024-02-30 00:00:00"', '"2024-05-01T00:00:00"', '"0000-00-00 00:00:00"',
                                   '"2024-05-01 24:00:00"', '"2024-05-01 00:00:00.1234567"', '7'])
@pytest.mark.parametrize("column", ["amount", "at"])
def test_json_decimal_and_datetime_strings_that_fail_are_the_twins(impl, value, column):
    values = _nums_json(['{"id":"1","%s":%s}' % (column, value)])
    got = _nums_json_error(impl, values)
    assert got == _nums_json_error("python", values) and got[2] == column


@pytest.mark.parametrize("column,good,bad", [("amount", "12.50", "12.505"),
                                             ("at", "2024-05-01 00:00:07.250000", "2024-05-01 00:00:60")])
def test_avro_decimal_and_datetime_strings_that_fail_are_the_twins(impl, column, good, bad):
    """A decimal past its scale and a datetime past its minute, met by the direct writers of
    streamed Avro strings: the twin's error."""
    values = _nums_values([{"id": 1, column: good}], order="table")
    assert good.encode() in values[1]
    bad_msg = values[1].replace(bytes([2 * len(good)]) + good.encode(), bytes([2 * len(bad)]) + bad.encode())
    got = _nums_error(impl, [values[0], bad_msg])
    assert got == _nums_error("python", [values[0], bad_msg])
    assert got[0] == 1 and got[2] == column


# 150 names of at most 16 bytes (sharing prefixes, lengths 1-16): too many for a perfect hash to
# be found, so keys in Go map order go to the hash index
WIDE_NAMES = ["id"] + [f"c{i}" for i in range(60)] + [f"col_{i:03d}_x" for i in range(60)] + \
    [("k" * (1 + i % 16))[:-1] + chr(97 + i // 16) for i in range(29)]
WIDE = SimpleTable("db", "t", 74, make_tso(T0 - 10_000), [SimpleColumn("id", "bigint", nullable=False)] + [
    SimpleColumn(n, "int") for n in WIDE_NAMES[1:]])


def _wide_values(rows):
    events = [SimpleBootstrap(WIDE)] + [SimpleDML(WIDE, "INSERT", make_tso(T0 + i), data=r) for i, r in enumerate(rows)]
    return [v for _, v in SimpleEncoder("avro", avro_map_order="random", seed=4).encode(events)]


@pytest.mark.parametrize("typed", [False, True], ids=["generic", "typed"])
def test_avro_wide_table_keys_in_any_order(impl, typed):
    assert len(set(WIDE_NAMES)) == 150 and max(map(len, WIDE_NAMES)) == 16 and "kz" not in WIDE_NAMES
    rows = [{n: (None if (i + j) % 11 == 0 and j else i * 1000 + j) for j, n in enumerate(WIDE_NAMES)} for i in range(40)]
    values = _wide_values(rows)
    kw = {"table": "db.t", "schema": pa.schema([(n, pa.int64()) for n in WIDE_NAMES])} if typed else {}
    got = ticdc_fast.SimpleDecoder("avro", implementation=impl, **kw).decode(None, values)
    want = ticdc_fast.SimpleDecoder("avro", implementation="python", **kw).decode(None, values)
    assert got.equals(want)
    if typed:
        out = got.to_pylist()[1:]
        assert [out[5][n] for n in WIDE_NAMES] == [rows[5][n] for n in WIDE_NAMES]
    else:
        out = [dict(m) for m in got.column("after").to_pylist()[1:]]
        assert out[5] == {n: (None if v is None else str(v)) for n, v in rows[5].items()}


def test_avro_wide_table_key_that_is_no_column_is_named(impl):
    """Keys of the table's name lengths that are no name, in a table without a perfect hash: the
    error names the key."""
    for key in ("c60", "c1_", "col_060_x", "kkkkkkkkkkkkkkkz", "kz", "i"):
        values = _wide_values([{"id": 1, "c0": 5}])
        assert values[1].count(b"\x04c0") == 1
        values[1] = values[1].replace(b"\x04c0", bytes([2 * len(key)]) + key.encode(), 1)
        errs = []
        for which in (impl, "python"):
            with pytest.raises(ticdc_fast.DecodeError) as ei:
                ticdc_fast.SimpleDecoder("avro", implementation=which).decode(None, values)
            errs.append((ei.value.message_index, ei.value.byte_offset, ei.value.column, ei.value.reason))
        assert errs[0] == errs[1]
        assert errs[0][0] == 1 and errs[0][2] == key and "not in the message's schema" in errs[0][3]
