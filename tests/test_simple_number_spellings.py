"""Simple JSON numbers of typed integer and float targets in every spelling, plain (`"123"`,
`"-4.5"`) and odd (leading zeros, "-0", exponents, escapes, bare numbers, 20 digits, beyond the
column's range, beyond float32's): each gives the twin's value, or the twin's error at the twin's
byte offset and column, with the twin's reason."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable, make_tso

T0 = 1_714_521_600_000
TABLE = SimpleTable("db", "q", 80, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("t", "tinyint"),
    SimpleColumn("u", "bigint", unsigned=True), SimpleColumn("d", "double"), SimpleColumn("f", "float"),
    SimpleColumn("s", "smallint")])
SCHEMA = pa.schema([("id", pa.int64()), ("t", pa.int8()), ("u", pa.uint64()), ("d", pa.float64()),
                    ("f", pa.float32()), ("s", pa.int16())])
# the FLOAT column into a float64 target: rounded to float32 first, as the string path does
SCHEMA_F64 = pa.schema([("id", pa.int64()), ("f", pa.float64())])


def _insert(data_text):
    doc = SimpleEncoder("json").encode([SimpleDML(TABLE, "INSERT", make_tso(T0), data={"id": 0})])[0][1].decode()
    return (doc[:doc.index('"data":')] + '"data":' + data_text + "}").encode()


def _decode(impl, values, schema=SCHEMA):
    dec = ticdc_fast.SimpleDecoder("json", table="db.q", schema=schema, implementation=impl)
    boot = SimpleEncoder("json").encode([SimpleBootstrap(TABLE)])[0][1]
    return dec.decode(None, [boot] + values)


def _outcome(impl, values, schema=SCHEMA):
    try:
        return ("rows", _decode(impl, values, schema).to_pylist())
    except ticdc_fast.DecodeError as e:
        return ("error", e.message_index, e.byte_offset, e.column, e.reason)


GOOD = ['"0"', '"7"', '"-128"', '"127"', '"12345678"', '"-9223372036854775808"', '"9223372036854775807"',
        '"18446744073709551615"', '"1234567890123456789"']
FLOATS = ['"0"', '"-0"', '"0.5"', '"-4.25"', '"3.4028235e38"', '"123456789.123456789"',
          '"0.30000000000000004"', '"834025.6979617054"', '"6224.832"', '"1e-7"', '"0.1"',
          '"1.00000000000000000001"', '"12345678901234567890.5"', '"3.5e39"', '"-0.000"']
ODD = ['"007"', '"-0"', '"+1"', '"1.5"', '"1e2"', '" 1"', '"1 "', '"0x10"', '""', '"-"', '"12a"',
       '"\\u0031"', '1', '-3', 'true', 'null', '"128"', '"-129"', '"99999999999999999999"', '"１"']


@pytest.mark.parametrize("value", GOOD + ODD)
@pytest.mark.parametrize("column", ["t", "u", "s", "id"])
def test_integer_spellings_match_the_twin(impl, column, value):
    row = _insert('{"id":"1","%s":%s}' % (column, value) if column != "id" else '{"id":%s}' % value)
    got, want = _outcome(impl, [row]), _outcome("python", [row])
    assert got == want


@pytest.mark.parametrize("value", FLOATS + ODD)
@pytest.mark.parametrize("column", ["d", "f"])
def test_float_spellings_match_the_twin(impl, column, value):
    row = _insert('{"id":"1","%s":%s}' % (column, value))
    got, want = _outcome(impl, [row]), _outcome("python", [row])
    assert got == want


@pytest.mark.parametrize("value", FLOATS)
def test_float_column_into_a_float64_target_is_rounded_to_float32(impl, value):
    row = _insert('{"f":%s,"id":"1"}' % value)
    got, want = _outcome(impl, [row], SCHEMA_F64), _outcome("python", [row], SCHEMA_F64)
    assert got == want


def test_plain_values_of_every_kind(impl):
    """Plain spellings of every kind in one row: exact values."""
    rows = [_insert('{"d":"834025.6979617054","f":"6224.832","id":"1","s":"-18419","t":"-34",'
                    '"u":"18446744073709551615"}'),
            _insert('{"d":"-0.5","f":null,"id":"2","s":"0","t":"127","u":"0"}')]
    got = _decode(impl, rows).to_pylist()[1:]       # after the BOOTSTRAP's row
    assert [(r["id"], r["t"], r["u"], r["d"], r["s"]) for r in got] == [
        (1, -34, 18446744073709551615, 834025.6979617054, -18419), (2, 127, 0, -0.5, 0)]
    assert got[0]["f"] == pytest.approx(6224.832, rel=1e-7) and got[1]["f"] is None
    assert _decode("python", rows).equals(_decode(impl, rows))
