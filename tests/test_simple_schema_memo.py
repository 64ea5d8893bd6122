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
from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable, make_tso

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
