"""Open protocol: every stored vector decodes to exactly the expected rows (both implementations).

Vectors (see tests/data/vectors/README.md):
* derived/open_{ticdc,tiflow}_*.bin: hand-built current-format messages (+ manifest.json);
* open/docs/open_protocol_doc_example.jsonl: the docs' 14-event stream (TiCDC <= v4.0.4: VARCHAR is
  base64 text without "f", so it is rendered verbatim);
* open/java-example/{key,value}/*: captured TF test data (batched DDL/resolved, empty batches);
* open/docs/column_type_examples.tsv: one column JSON per MySQL type.
"""
from __future__ import annotations

import base64
import csv
import datetime as dt
import json
import struct
from decimal import Decimal

import cramjam
import pyarrow as pa
import pytest

import ticdc_fast
from conftest import VECTORS, frame, generic_row, resolved_event, row_event, u64

DERIVED = VECTORS / "derived"
JAVA = VECTORS / "open" / "java-example"
DOCS = VECTORS / "open" / "docs"

PNG8 = bytes.fromhex("89504e470d0a1a0a")
PNG8_B64 = "iVBORw0KGgo="
CREATE_T1 = "CREATE TABLE test.t1(id int primary key, val varchar(16))"

MANIFEST = json.loads((DERIVED / "manifest.json").read_text())
OPEN_ENTRIES = {e["name"]: e for e in MANIFEST if e["name"].startswith("open_")}


def derived_message(name):
    key = (DERIVED / f"{name}.key.bin").read_bytes()
    value = (DERIVED / f"{name}.value.bin").read_bytes()
    return key, value


def java_message(kind, i):
    return ((JAVA / "key" / f"{kind}_key_{i}").read_bytes(),
            (JAVA / "value" / f"{kind}_value_{i}").read_bytes())


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ----------------------------------------------------------------------------- derived vectors
def _expected_derived(flavour: str, kind: str) -> list[dict]:
    tiflow = flavour == "tiflow"
    rid = (lambda n: n) if tiflow else (lambda n: None)
    if kind == "ddl":
        return [generic_row(_op="DDL", _commit_ts=415508856908021766, _schema="test", _table="t1",
                            _ddl=CREATE_T1, _ddl_type=3)]
    if kind == "resolved":
        return [generic_row(_op="RESOLVED", _commit_ts=415508856908021766)]
    if kind == "insert_batch2":
        return [generic_row(_op="INSERT", _commit_ts=415508878783938562, _schema="test", _table="t1",
                            after=[("id", "1"), ("val", "aa")], _row_id=rid(1)),
                generic_row(_op="INSERT", _commit_ts=415508878783938562, _schema="test", _table="t1",
                            after=[("id", "3"), ("val", "cc")], _row_id=rid(3))]
    if kind == "update":
        return [generic_row(_op="UPDATE", _commit_ts=415508881418485761, _schema="test", _table="t1",
                            after=[("id", "3"), ("val", "dd")], before=[("id", "3"), ("val", "cc")],
                            _row_id=rid(3))]
    if kind == "delete":
        return [generic_row(_op="DELETE", _commit_ts=415508881418485761, _schema="test", _table="t1",
                            before=[("id", "1"), ("val", "aa")], _row_id=rid(1))]
    if kind == "varbinary":
        # tiflow sorts column names; ticdc keeps table order.
        after = [("b", PNG8_B64), ("id", "1")] if tiflow else [("id", "1"), ("b", PNG8_B64)]
        return [generic_row(_op="INSERT", _commit_ts=415508881418485761, _schema="test", _table="t2",
                            after=after, _row_id=rid(1))]
    raise AssertionError(kind)


DERIVED_CASES = [(fl, kind) for fl in ("ticdc", "tiflow")
                 for kind in ("ddl", "resolved", "insert_batch2", "update", "delete", "varbinary")]


def test_every_open_vector_in_the_manifest_is_covered():
    assert set(OPEN_ENTRIES) == {f"open_{fl}_{kind}" for fl, kind in DERIVED_CASES}


@pytest.mark.parametrize("flavour, kind", DERIVED_CASES, ids=[f"{a}_{b}" for a, b in DERIVED_CASES])
def test_derived_vector(decoder_factory, flavour, kind):
    name = f"open_{flavour}_{kind}"
    key, value = derived_message(name)
    entry = OPEN_ENTRIES[name]
    assert key.hex() == entry["key_hex"] and value.hex() == entry["value_hex"]
    batch = decoder_factory().decode([key], [value])
    assert batch.schema == decoder_factory().output_schema()
    rows = batch.to_pylist()
    assert rows == _expected_derived(flavour, kind)
    if entry.get("expect"):
        after = dict(rows[0]["after"])
        for col, hexval in entry["expect"].items():
            assert base64.b64decode(after[col]) == bytes.fromhex(hexval)


@pytest.mark.parametrize("flavour", ["ticdc", "tiflow"])
def test_derived_vectors_in_one_batch(decoder_factory, flavour):
    kinds = ["ddl", "resolved", "insert_batch2", "update", "delete", "varbinary"]
    msgs = [derived_message(f"open_{flavour}_{k}") for k in kinds]
    keys, values = [m[0] for m in msgs], [m[1] for m in msgs]
    partitions = [0, 1, 2, 3, 4, 5]
    offsets = [10, 11, 12, 13, 14, 1 << 40]
    batch = decoder_factory().decode(keys, values, partitions=partitions, offsets=offsets)
    assert batch.schema.field("_partition").type == pa.int32()
    assert batch.schema.field("_offset").type == pa.int64()
    assert batch.schema.names[-2:] == ["_partition", "_offset"]
    expected = []
    for i, k in enumerate(kinds):
        for r in _expected_derived(flavour, k):
            expected.append({**r, "_partition": partitions[i], "_offset": offsets[i]})
    assert batch.to_pylist() == expected


@pytest.mark.parametrize("flavour", ["ticdc", "tiflow"])
def test_varbinary_vector_typed(decoder_factory, flavour):
    key, value = derived_message(f"open_{flavour}_varbinary")
    schema = pa.schema([("id", pa.int32()), ("b", pa.binary())])
    batch = decoder_factory(table="test.t2", schema=schema).decode([key], [value])
    assert batch.to_pylist() == [{"_op": "INSERT", "_commit_ts": 415508881418485761, "id": 1, "b": PNG8,
                                  "_ddl": None, "_handle_key_only": False, "_claim_check_location": None,
                                  "_before_incomplete": False}]


# ----------------------------------------------------------------------------- docs stream
def _docs_stream():
    events = [json.loads(line) for line in (DOCS / "open_protocol_doc_example.jsonl").read_text().splitlines()
              if line.strip()]
    assert len(events) == 14
    keys, values, partitions, offsets = [], [], [], []
    for ev in events:
        k = ev["event_key"].encode()
        v = ev["event_value"].encode()
        keys.append(u64(1) + u64(len(k)) + k)
        values.append(u64(len(v)) + v)  # an empty value is u64be(0)
        partitions.append(ev["partition"])
        offsets.append(ev["log"])
    return keys, values, partitions, offsets


def _docs_expected():
    t1 = dict(_schema="test", _table="t1")
    ddl = generic_row(_op="DDL", _commit_ts=415508856908021766, _ddl=CREATE_T1, _ddl_type=3, **t1)
    res1 = generic_row(_op="RESOLVED", _commit_ts=415508856908021766)

    def ins(ts, i, text):  # the old encoder's base64 VARCHAR, no "f": rendered verbatim
        return generic_row(_op="INSERT", _commit_ts=ts, after=[("id", str(i)), ("val", text)], **t1)

    def dele(ts, i):
        return generic_row(_op="DELETE", _commit_ts=ts, before=[("id", str(i))], **t1)

    ts2, ts3 = 415508878783938562, 415508881418485761
    res2 = generic_row(_op="RESOLVED", _commit_ts=415508881038376963)
    return [ddl, res1, ddl, res1, ins(ts2, 1, "YWE="), ins(ts2, 2, "YmI="), ins(ts2, 3, "Y2M="),
            ins(ts2, 3, "Y2M="), dele(ts3, 1), dele(ts3, 2), ins(ts3, 3, "ZGQ="), ins(ts3, 4, "ZWU="),
            res2, res2]


def test_docs_example_stream(decoder_factory):
    keys, values, partitions, offsets = _docs_stream()
    batch = decoder_factory().decode(keys, values, partitions=partitions, offsets=offsets)
    expected = [{**r, "_partition": p, "_offset": o}
                for r, p, o in zip(_docs_expected(), partitions, offsets)]
    assert batch.to_pylist() == expected


def test_docs_example_stream_message_by_message(decoder_factory):
    keys, values, _, _ = _docs_stream()
    dec = decoder_factory()
    rows = []
    for k, v in zip(keys, values):
        rows += dec.decode([k], [v]).to_pylist()
    assert rows == _docs_expected()


def test_docs_example_typed(decoder_factory):
    keys, values, _, _ = _docs_stream()
    schema = pa.schema([("id", pa.int32()), ("val", pa.string())])
    batch = decoder_factory(table="test.t1", schema=schema).decode(keys, values)
    got = [(r["_op"], r["id"], r["val"], r["_ddl"]) for r in batch.to_pylist()]
    assert got == [
        ("DDL", None, None, CREATE_T1), ("RESOLVED", None, None, None),
        ("DDL", None, None, CREATE_T1), ("RESOLVED", None, None, None),
        ("INSERT", 1, "YWE=", None), ("INSERT", 2, "YmI=", None), ("INSERT", 3, "Y2M=", None),
        ("INSERT", 3, "Y2M=", None), ("DELETE", 1, None, None), ("DELETE", 2, None, None),
        ("INSERT", 3, "ZGQ=", None), ("INSERT", 4, "ZWU=", None),
        ("RESOLVED", None, None, None), ("RESOLVED", None, None, None),
    ]


# ----------------------------------------------------------------------------- java example
def _java_expected(kind, i):
    ab = dict(_schema="a", _table="b")
    if i == 2:
        return []
    if kind == "ddl":
        rows = [generic_row(_op="DDL", _commit_ts=n, _ddl=f"create table {c}", _ddl_type=n, **ab)
                for n, c in ((1, "a"), (2, "b"), (3, "c"))]
    elif kind == "rts":
        rows = [generic_row(_op="RESOLVED", _commit_ts=n) for n in (1, 2, 3)]
    else:
        rows = [generic_row(_op="INSERT", _commit_ts=1, after=[("col1", "aa")], **ab),
                generic_row(_op="INSERT", _commit_ts=2, after=[("col1", "bb")], **ab),
                generic_row(_op="INSERT", _commit_ts=3, after=[("col1", "bb")], **ab),
                generic_row(_op="INSERT", _commit_ts=4, _schema="a", _table="c", after=[("col1", "cc")],
                            _physical_table_id=6)]
    return rows[:1] if i == 0 else rows


JAVA_CASES = [(k, i) for k in ("ddl", "row", "rts") for i in range(3)]


@pytest.mark.parametrize("kind, i", JAVA_CASES, ids=[f"{k}_{i}" for k, i in JAVA_CASES])
def test_java_example(decoder_factory, kind, i):
    key, value = java_message(kind, i)
    assert decoder_factory().decode([key], [value]).to_pylist() == _java_expected(kind, i)


def test_java_example_all_in_one_batch(decoder_factory):
    msgs = [java_message(k, i) for k, i in JAVA_CASES]
    partitions = list(range(len(msgs)))
    offsets = [100 + n for n in range(len(msgs))]
    batch = decoder_factory().decode([m[0] for m in msgs], [m[1] for m in msgs],
                                     partitions=partitions, offsets=offsets)
    expected = [{**r, "_partition": n, "_offset": 100 + n}
                for n, (k, i) in enumerate(JAVA_CASES) for r in _java_expected(k, i)]
    assert batch.to_pylist() == expected


def test_empty_batch_has_the_full_schema(decoder_factory):
    key, value = java_message("row", 2)
    dec = decoder_factory()
    batch = dec.decode([key], [value], partitions=[7], offsets=[8])
    assert batch.num_rows == 0
    assert batch.schema == dec.output_schema(partitions=True, offsets=True)
    assert dec.decode([], []).num_rows == 0


# ----------------------------------------------------------------------------- column type table
def _column_examples():
    with open(DOCS / "column_type_examples.tsv", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    out = []
    for r in rows:
        for code in r["code"].split("/"):
            col = r["column_json_as_on_wire"]
            first = r["code"].split("/")[0]
            col = col.replace(f'{{"t":{first},', f'{{"t":{code},', 1)
            assert f'"t":{code},' in col
            out.append((r["sql_type"], int(code), col))
    return out


COLUMN_EXAMPLES = _column_examples()
PNG_RAW_TEXT = r"\x89PNG\r\n\x1a\n"  # what the wire string is after one JSON unescape
TEXT_BLOB = "\u6d4b\u8bd5text"        # base64 5rWL6K+VdGV4dA== decoded

# Generic rendering of each example as given (no "f": flags 0, so nothing is binary).
COLUMN_TEXT = {
    "TINYINT/BOOLEAN": "1", "SMALLINT": "1", "INT": "123", "FLOAT": "153.123", "DOUBLE": "153.123",
    "NULL": None, "TIMESTAMP": "1973-12-30 15:30:00", "BIGINT": "123", "MEDIUMINT": "123",
    "DATE": "2000-01-01", "TIME": "23:59:59", "DATETIME": "2015-12-20 23:58:58", "YEAR": "1970",
    "VARCHAR": "test", "VARBINARY": PNG_RAW_TEXT, "BIT": "81", "JSON": '{"key1": "value1"}',
    "DECIMAL": "129012.1230000", "ENUM": "1", "SET": "3", "TINYTEXT/TINYBLOB": TEXT_BLOB,
    "MEDIUMTEXT/MEDIUMBLOB": TEXT_BLOB, "LONGTEXT/LONGBLOB": TEXT_BLOB, "TEXT/BLOB": TEXT_BLOB,
    "CHAR": "test", "BINARY": PNG_RAW_TEXT,
}


def _wrap_column(col_json: str, ts=7):
    value = b'{"u":{"c":' + col_json.encode() + b"}}"
    return frame([({"ts": ts, "scm": "db", "tbl": "t", "t": 1}, value)])


def test_column_examples_cover_the_table():
    assert {s for s, _, _ in COLUMN_EXAMPLES} == set(COLUMN_TEXT)
    assert len(COLUMN_EXAMPLES) == 28  # 26 rows; DATE 10/14 and VARBINARY 15/253 give two each


@pytest.mark.parametrize("sql_type, code, col", COLUMN_EXAMPLES,
                         ids=[f"{s}-{c}" for s, c, _ in COLUMN_EXAMPLES])
def test_column_type_example_generic(decoder_factory, sql_type, code, col):
    key, value = _wrap_column(col)
    rows = decoder_factory().decode([key], [value]).to_pylist()
    assert rows == [generic_row(_op="INSERT", _commit_ts=7, _schema="db", _table="t",
                                after=[("c", COLUMN_TEXT[sql_type])])]


BINARY_VARIANTS = [(s, c, col) for s, c, col in COLUMN_EXAMPLES
                   if s in ("VARBINARY", "BINARY") or c in (249, 250, 251, 252)]


@pytest.mark.parametrize("sql_type, code, col", BINARY_VARIANTS,
                         ids=[f"{s}-{c}" for s, c, _ in BINARY_VARIANTS])
def test_column_type_example_binary_flag(decoder_factory, sql_type, code, col):
    col = col.replace(f'{{"t":{code},', f'{{"t":{code},"f":1,', 1)
    key, value = _wrap_column(col)
    dec = decoder_factory()
    (row,) = dec.decode([key], [value]).to_pylist()
    text = dict(row["after"])["c"]
    raw = base64.b64decode(text)
    if sql_type in ("VARBINARY", "BINARY"):
        assert raw == bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        assert text == PNG8_B64
    else:
        assert raw == TEXT_BLOB.encode()
        assert text == "5rWL6K+VdGV4dA=="
    typed = decoder_factory(table="db.t", schema=pa.schema([("c", pa.binary())]))
    assert typed.decode([key], [value]).column("c").to_pylist() == [raw]


# Typed decoding of the examples with the inferred (default) schema.
COLUMN_TYPED = {
    "NULL": (pa.string(), None), "TINYINT/BOOLEAN": (pa.int8(), 1), "SMALLINT": (pa.int16(), 1), "INT": (pa.int32(), 123),
    "FLOAT": (pa.float32(), f32(153.123)), "DOUBLE": (pa.float64(), 153.123),
    "TIMESTAMP": (pa.timestamp("us", tz="UTC"), dt.datetime(1973, 12, 30, 15, 30, tzinfo=dt.timezone.utc)),
    "BIGINT": (pa.int64(), 123), "MEDIUMINT": (pa.int32(), 123),
    "DATE": (pa.date32(), dt.date(2000, 1, 1)), "TIME": (pa.duration("us"), dt.timedelta(hours=23, minutes=59, seconds=59)),
    "DATETIME": (pa.timestamp("us"), dt.datetime(2015, 12, 20, 23, 58, 58)), "YEAR": (pa.int16(), 1970),
    "VARCHAR": (pa.string(), "test"), "VARBINARY": (pa.string(), PNG_RAW_TEXT), "BIT": (pa.uint64(), 81),
    "JSON": (pa.string(), '{"key1": "value1"}'),
    "DECIMAL": (pa.decimal256(65, 7), Decimal("129012.1230000")), "ENUM": (pa.uint16(), 1),
    "SET": (pa.uint64(), 3), "TINYTEXT/TINYBLOB": (pa.string(), TEXT_BLOB),
    "MEDIUMTEXT/MEDIUMBLOB": (pa.string(), TEXT_BLOB), "LONGTEXT/LONGBLOB": (pa.string(), TEXT_BLOB),
    "TEXT/BLOB": (pa.string(), TEXT_BLOB), "CHAR": (pa.string(), "test"), "BINARY": (pa.string(), PNG_RAW_TEXT),
}


def test_column_type_examples_typed_with_inferred_schema(decoder_factory):
    cols = []
    expected = {}
    for n, (sql_type, code, col) in enumerate(COLUMN_EXAMPLES):
        name = f"c{n}"
        cols.append(f'"{name}":{col}'.encode())
        expected[name] = COLUMN_TYPED[sql_type]
    value_json = b'{"u":{' + b",".join(cols) + b"}}"
    key, value = frame([({"ts": 9, "scm": "db", "tbl": "t", "t": 1}, value_json)])
    schema = ticdc_fast.infer_open_schema([key], [value], table="db.t")
    assert [(f.name, f.type) for f in schema] == [(n, t) for n, (t, _) in expected.items()]
    batch = decoder_factory(table="db.t", schema=schema).decode([key], [value])
    (row,) = batch.to_pylist()
    assert row == {"_op": "INSERT", "_commit_ts": 9, **{n: v for n, (_, v) in expected.items()},
                   "_ddl": None, "_handle_key_only": False, "_claim_check_location": None,
                                  "_before_incomplete": False}


# ----------------------------------------------------------------------------- input forms
def _all_messages():
    msgs = [derived_message(f"open_{fl}_{k}") for fl, k in DERIVED_CASES]
    msgs += [java_message(k, i) for k, i in JAVA_CASES]
    keys, values, _, _ = _docs_stream()
    msgs += list(zip(keys, values))
    return [m[0] for m in msgs], [m[1] for m in msgs]


def _forms(items):
    return {
        "bytes": list(items),
        "tuple": tuple(items),
        "bytearray": [bytearray(x) for x in items],
        "memoryview": [memoryview(x) for x in items],
        "binary": pa.array(items, pa.binary()),
        "large_binary": pa.array(items, pa.large_binary()),
        "sliced_binary": pa.array([b"junk"] + list(items), pa.binary()).slice(1),
        "chunked": pa.chunked_array([pa.array(items[:5], pa.binary()), pa.array(items[5:], pa.binary())]),
    }


@pytest.mark.parametrize("form", ["bytes", "tuple", "bytearray", "memoryview", "binary", "large_binary",
                                  "sliced_binary", "chunked"])
@pytest.mark.parametrize("typed", [False, True], ids=["generic", "typed"])
def test_input_forms_give_identical_output(decoder_factory, form, typed):
    keys, values = _all_messages()
    kw = {}
    if typed:
        kw = dict(table="test.t1", schema=pa.schema([("id", pa.int64()), ("val", pa.string())]))
    dec = decoder_factory(**kw)
    n = len(keys)
    partitions = list(range(n))
    offsets = [1000 + 3 * i for i in range(n)]
    expected = dec.decode(list(keys), list(values), partitions=partitions, offsets=offsets)
    assert expected.num_rows > 20
    got = dec.decode(_forms(keys)[form], _forms(values)[form],
                     partitions=pa.array(partitions, pa.int32()) if form == "binary" else partitions,
                     offsets=pa.array(offsets, pa.int64()) if form == "binary" else offsets)
    assert got.equals(expected)
    assert got.schema == expected.schema


def test_partitions_and_offsets_repeat_per_event(decoder_factory):
    k1, v1 = derived_message("open_ticdc_insert_batch2")   # 2 events
    k2, v2 = java_message("row", 2)                         # 0 events
    k3, v3 = java_message("rts", 1)                         # 3 events
    k4, v4 = derived_message("open_tiflow_ddl")             # 1 event
    dec = decoder_factory()
    batch = dec.decode([k1, k2, k3, k4], [v1, v2, v3, v4], partitions=[3, 4, 5, 6],
                       offsets=[1 << 40, 2, 3, 4])
    assert batch.column("_partition").to_pylist() == [3, 3, 5, 5, 5, 6]
    assert batch.column("_offset").to_pylist() == [1 << 40, 1 << 40, 3, 3, 3, 4]
    only_p = dec.decode([k1, k3], [v1, v3], partitions=[0, 1])
    assert only_p.schema.names[-1] == "_partition" and "_offset" not in only_p.schema.names
    assert only_p.column("_partition").type == pa.int32()
    only_o = dec.decode([k1, k3], [v1, v3], offsets=[7, 8])
    assert only_o.schema.names[-1] == "_offset" and "_partition" not in only_o.schema.names
    assert only_o.column("_offset").to_pylist() == [7, 7, 8, 8, 8]
    with pytest.raises(ValueError):
        dec.decode([k1, k3], [v1, v3], partitions=[0])


# ----------------------------------------------------------------------------- compression
def _compress_values(value: bytes, name: str) -> bytes:
    out, pos = bytearray(), 0
    while pos < len(value):
        n = int.from_bytes(value[pos:pos + 8], "big")
        payload = value[pos + 8:pos + 8 + n]
        if payload:
            payload = bytes(cramjam.snappy.compress_raw(payload) if name == "snappy"
                            else cramjam.lz4.compress(payload))
        out += u64(len(payload)) + payload
        pos += 8 + n
    return bytes(out)


@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_compressed_values(decoder_factory, compression):
    keys, values = _all_messages()
    expected = decoder_factory().decode(keys, values)
    packed = [_compress_values(v, compression) for v in values]
    assert packed != values
    got = decoder_factory(compression=compression).decode(keys, packed)
    assert got.equals(expected)


# ----------------------------------------------------------------------------- key fields
def test_key_extras(decoder_factory):
    cols = {"id": {"t": 3, "h": True, "f": 11, "v": 5}}
    events = [
        row_event(cols, ts=10, rid=5, ptn=77),
        row_event(cols, ts=11, ohk=True),
        # ticdc claim-check key: "ohk" twice (true, then false) and a location
        (b'{"ts":12,"scm":"db","tbl":"t","t":1,"ohk":true,"ohk":false,"ccl":"s3://b/x.json"}',
         {"u": cols}),
        # ticdc always writes scm/tbl, possibly empty
        (b'{"ts":13,"scm":"","tbl":"","t":3}', None),
        resolved_event(14),
    ]
    key, value = frame(events)
    rows = decoder_factory().decode([key], [value]).to_pylist()
    common = dict(_op="INSERT", _schema="db", _table="t", after=[("id", "5")])
    assert rows == [
        generic_row(_commit_ts=10, _row_id=5, _physical_table_id=77, **common),
        generic_row(_commit_ts=11, _handle_key_only=True, **common),
        generic_row(_commit_ts=12, _claim_check_location="s3://b/x.json", **common),
        generic_row(_op="RESOLVED", _commit_ts=13),
        generic_row(_op="RESOLVED", _commit_ts=14),
    ]


def test_max_commit_ts_and_uint64(decoder_factory):
    cols = {"u": {"t": 8, "f": 128, "v": 18446744073709551615},
            "s": {"t": 8, "v": -9223372036854775808},
            "f": {"t": 4, "v": 1e-7}, "d": {"t": 5, "v": 1e21}, "z": {"t": 5, "v": -0.0},
            "n": {"t": 15, "f": 64, "v": None}, "e": {"t": 15, "f": 64, "v": ""},
            "q": {"t": 15, "f": 65, "v": "\\u263a\\x00"}}
    key, value = frame([row_event(cols, ts=(1 << 63) - 1)])
    (row,) = decoder_factory().decode([key], [value]).to_pylist()
    assert row["_commit_ts"] == (1 << 63) - 1
    assert row["after"] == [("u", "18446744073709551615"), ("s", "-9223372036854775808"), ("f", "1e-7"),
                            ("d", "1e+21"), ("z", "-0"), ("n", None), ("e", ""),
                            ("q", base64.b64encode("\u263a".encode() + b"\x00").decode())]


# ----------------------------------------------------------------------------- Go number forms (spec G.1, G.2)
def test_go_float_forms(decoder_factory):
    # ticdc (jsoniter) keeps two-digit exponents; whole floats print without a point; a negative
    # zero prints as the integer token -0; [1e20, 1e21) prints as a 21-digit integer.
    value = (b'{"u":{"f1":{"t":4,"f":0,"v":1e-07},"f2":{"t":4,"f":0,"v":9.999999e-07},'
             b'"f3":{"t":4,"f":0,"v":3.4028235e+38},"f4":{"t":4,"f":0,"v":16777216},'
             b'"f5":{"t":4,"f":0,"v":-0},"d1":{"t":5,"f":0,"v":-0},"d2":{"t":5,"f":0,"v":100000000000000000000},'
             b'"d3":{"t":5,"f":0,"v":5e-324},"d4":{"t":5,"f":0,"v":1e+21},"i1":{"t":3,"f":0,"v":-0}}}')
    key, value = frame([({"ts": 1, "scm": "db", "tbl": "t", "t": 1}, value)])
    (row,) = decoder_factory().decode([key], [value]).to_pylist()
    assert row["after"] == [("f1", "1e-7"), ("f2", "9.999999e-7"), ("f3", "3.4028235e+38"), ("f4", "16777216"),
                            ("f5", "-0"), ("d1", "-0"), ("d2", "100000000000000000000"), ("d3", "5e-324"),
                            ("d4", "1e+21"), ("i1", "0")]
    schema = pa.schema([("f1", pa.float32()), ("f5", pa.float32()), ("d1", pa.float64()),
                        ("d2", pa.float64()), ("i1", pa.int32())])
    (typed,) = decoder_factory(table="db.t", schema=schema).decode([key], [value]).to_pylist()
    assert typed["f1"] == f32(1e-7)
    assert typed["f5"] == 0 and str(typed["f5"]) == "-0.0"
    assert typed["d1"] == 0 and str(typed["d1"]) == "-0.0"
    assert typed["d2"] == 1e20
    assert typed["i1"] == 0
