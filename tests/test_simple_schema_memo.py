"""A TableSchema seen before is not read again (TiCDC repeats every table's BOOTSTRAP), and no
schema that reads differently can take its place: ``true`` and ``1``, ``20`` and ``20.0``, a NaN
and a null, or an object changed after it was read."""
from __future__ import annotations

import math

import orjson
import pytest

import ticdc_fast
from ticdc_fast.simple import schema as schema_module
from ticdc_fast.simple.schema import TableSchemaError, table_schema_from_dict
from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML, SimpleEncoder, SimpleTable,
                                make_tso)

T0 = 1_714_521_600_000
TABLE = SimpleTable("app", "users", 42, make_tso(T0 - 10_000),
                    [SimpleColumn("id", "int", nullable=False), SimpleColumn("name", "varchar", length=32),
                     SimpleColumn("score", "decimal", length=8, decimal=2)])


@pytest.fixture
def reads(monkeypatch):
    """A fresh memo, and the list of objects actually read (checked column by column)."""
    monkeypatch.setattr(schema_module, "_SEEN_SCHEMAS", {})
    calls = []
    read = schema_module._read_table_schema

    def counted(d):
        calls.append(d)
        return read(d)
    monkeypatch.setattr(schema_module, "_read_table_schema", counted)
    return calls


def _insert(k):
    return SimpleDML(TABLE, "INSERT", make_tso(T0 + k), data={"id": k, "name": f"u{k}", "score": "1.50"})


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_a_repeated_bootstrap_is_read_once_and_decodes_the_same(encoding, impl, reads):
    events = [SimpleBootstrap(TABLE), _insert(1), SimpleBootstrap(TABLE), _insert(2), SimpleBootstrap(TABLE), _insert(3)]
    values = [v for _, v in SimpleEncoder(encoding).encode(events)]
    out = ticdc_fast.SimpleDecoder(encoding, implementation=impl).decode(None, values)
    assert len(reads) == 1
    assert out.column("_op").to_pylist() == ["BOOTSTRAP", "INSERT"] * 3
    assert [dict(a) if a else None for a in out.column("after").to_pylist()] == [
        None, {"id": "1", "name": "u1", "score": "1.50"},
        None, {"id": "2", "name": "u2", "score": "1.50"},
        None, {"id": "3", "name": "u3", "score": "1.50"}]
    schemas = out.column("_table_schema").to_pylist()
    assert schemas[0] == schemas[2] == schemas[4] and orjson.loads(schemas[0])["table"] == "users"


def test_a_bootstrap_that_reads_differently_after_a_good_one_fails_as_it_would_alone(impl, reads):
    good = [v for _, v in SimpleEncoder("json").encode([SimpleBootstrap(TABLE)])][0]
    bad = good.replace(b'"nullable":false', b'"nullable":0', 1)
    assert bad != good
    with pytest.raises(ticdc_fast.DecodeError) as alone:
        ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, [bad])
    with pytest.raises(ticdc_fast.DecodeError) as after:
        ticdc_fast.SimpleDecoder("json", implementation=impl).decode(None, [good, bad])
    assert str(after.value).replace("message 1", "message 0") == str(alone.value)
    assert "nullable" in str(alone.value)


def _outcome(read, d):
    try:
        return read(d)
    except TableSchemaError as exc:
        return ("error", str(exc), exc.path)


def _variants(base):
    def edit(fn):
        d = orjson.loads(orjson.dumps(base))
        fn(d)
        return d
    col = lambda d: d["columns"][0]            # noqa: E731
    return {
        "nullable true → 1": edit(lambda d: col(d).__setitem__("nullable", 1)),
        "nullable → 1.0": edit(lambda d: col(d).__setitem__("nullable", 1.0)),
        "length 11 → 11.0": edit(lambda d: col(d)["dataType"].__setitem__("length", 11.0)),
        "length 11 → True": edit(lambda d: col(d)["dataType"].__setitem__("length", True)),
        "default null → NaN": edit(lambda d: col(d).__setitem__("default", math.nan)),
        "decimal null → NaN": edit(lambda d: col(d)["dataType"].__setitem__("decimal", math.nan)),
        "version → -0.0": edit(lambda d: d.__setitem__("version", -0.0)),
        "a column renamed": edit(lambda d: col(d).__setitem__("name", "renamed")),
    }


def test_schemas_that_read_differently_never_share_an_entry(reads):
    base = orjson.loads([v for _, v in SimpleEncoder("json").encode([SimpleBootstrap(TABLE)])][0])["tableSchema"]
    base["columns"][0]["nullable"] = True
    base["columns"][0]["dataType"]["length"] = 11
    base["columns"][0]["dataType"]["decimal"] = None        # JSON text null, as a NaN's is
    first = table_schema_from_dict(base)
    assert table_schema_from_dict(orjson.loads(orjson.dumps(base))) is first      # the same schema: a hit
    for name, variant in _variants(base).items():
        expected = _outcome(schema_module._read_table_schema, variant)
        assert _outcome(table_schema_from_dict, variant) == expected, name
        assert _outcome(table_schema_from_dict, variant) == expected, name + " (read twice)"
    assert table_schema_from_dict(base) is first


def test_an_object_changed_after_it_was_read_is_read_again(reads):
    d = orjson.loads([v for _, v in SimpleEncoder("json").encode([SimpleBootstrap(TABLE)])][0])["tableSchema"]
    first = table_schema_from_dict(d)
    d["columns"][1]["name"] = "nickname"                 # the caller's object, changed in place
    second = table_schema_from_dict(d)
    assert [c.name for c in first.columns] == ["id", "name", "score"]
    assert [c.name for c in second.columns] == ["id", "nickname", "score"]
    assert len(reads) == 2


def test_the_memo_stays_bounded(reads, monkeypatch):
    monkeypatch.setattr(schema_module, "_SEEN_SCHEMAS_MAX", 4)
    d = orjson.loads([v for _, v in SimpleEncoder("json").encode([SimpleBootstrap(TABLE)])][0])["tableSchema"]
    for version in range(1, 11):
        d["version"] = version
        assert table_schema_from_dict(d).version == version
    assert len(schema_module._SEEN_SCHEMAS) <= 4


# ----------------------------------------------------------------- Avro TableSchema records
@pytest.fixture
def record_reads(monkeypatch):
    """A fresh memo of Avro TableSchema records, and the records actually read value by value."""
    from ticdc_fast.simple import messages
    monkeypatch.setattr(messages, "_SEEN_RECORDS", {})
    monkeypatch.setattr(schema_module, "_SEEN_SCHEMAS", {})
    calls = []
    read = messages._read_table_schema_record

    def counted(r, field_at, name):
        calls.append(name)
        return read(r, field_at, name)
    monkeypatch.setattr(messages, "_read_table_schema_record", counted)
    return calls


def _avro(events):
    return [v for _, v in SimpleEncoder("avro").encode(events)]


def _failure(impl, values):
    with pytest.raises(ticdc_fast.DecodeError) as exc:
        ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, values)
    return str(exc.value)


def test_an_avro_record_read_before_is_not_read_again(impl, record_reads):
    values = _avro([SimpleBootstrap(TABLE), _insert(1), SimpleBootstrap(TABLE, build_ts=T0 + 5), _insert(2)])
    out = ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, values)
    assert record_reads == ["tableSchema"]
    assert out.column("_op").to_pylist() == ["BOOTSTRAP", "INSERT"] * 2
    assert out.column("_build_ts").to_pylist()[2] == T0 + 5
    assert out.column("_table_schema").to_pylist()[0] == out.column("_table_schema").to_pylist()[2]


def test_a_record_that_differs_after_its_first_bytes_or_is_cut_short_is_read_as_it_is(impl, record_reads):
    wider = SimpleTable(TABLE.schema, TABLE.table, TABLE.table_id, TABLE.version,
                        TABLE.columns[:2] + [SimpleColumn("score", "decimal", length=9, decimal=2)])
    good, other = _avro([SimpleBootstrap(TABLE)])[0], _avro([SimpleBootstrap(wider)])[0]
    assert good[:90] == other[:90] and good != other             # the same first 64 bytes of the record
    out = ticdc_fast.SimpleDecoder("avro", implementation=impl).decode(None, [good, other])
    assert [orjson.loads(t)["columns"][2]["dataType"]["length"] for t in out.column("_table_schema").to_pylist()] == [8, 9]
    cut = good[:len(good) - 12]                                   # inside the record's last column
    assert _failure(impl, [good, cut]).replace("message 1", "message 0") == _failure(impl, [cut])


def test_errors_found_after_a_reused_record_name_the_same_bytes(impl, record_reads, monkeypatch):
    """A record that reads but is refused (a mysqlType no one knows) names its byte offset;
    reused at another position (a DDL's records after its SQL text) the offset moves with it."""
    from ticdc_fast.simple import messages
    boot = _avro([SimpleBootstrap(TABLE)])[0]
    ddl = _avro([SimpleDDL("CREATE", "CREATE TABLE users (id int, name varchar(32), score decimal(8,2))",
                           make_tso(T0), TABLE)])[0]
    boot, ddl = (v.replace(b"\x0edecimal", b"\x0ebadtype") for v in (boot, ddl))
    fresh = []
    for value in (boot, ddl):
        monkeypatch.setattr(messages, "_SEEN_RECORDS", {})
        fresh.append(_failure(impl, [value]))
    assert "badtype" in fresh[0] and fresh[0] != fresh[1]
    monkeypatch.setattr(messages, "_SEEN_RECORDS", {})
    before = len(record_reads)
    assert [_failure(impl, [boot]), _failure(impl, [ddl]), _failure(impl, [boot])] == [fresh[0], fresh[1], fresh[0]]
    assert len(record_reads) - before == 1          # the record was read once, then reused twice
