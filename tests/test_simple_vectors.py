"""Simple-protocol spec vectors: the docs JSON stream and the derived Avro messages.

Vectors: ``tests/data/vectors/simple/docs/*.json`` (docs examples, medium trust) and
``tests/data/vectors/derived/simple_avro_*`` (hand-built from the code, see
``derived/manifest.json``).  Every test runs against both implementations.
"""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import VECTORS, plain_rows
from ticdc_fast import _impl

DOCS = VECTORS / "simple" / "docs"
DERIVED = VECTORS / "derived"
DOCS_ORDER = ["bootstrap", "dml_insert", "ddl_alter", "dml_update", "dml_delete", "watermark"]

differential = pytest.mark.skipif(_impl.PURE_FORCED,
                                  reason="TICDC_FAST_PURE=1: differential core-vs-twin test")


def _docs_values() -> list[bytes]:
    return [(DOCS / f"{name}.json").read_bytes() for name in DOCS_ORDER]


def _manifest() -> dict:
    return {e["name"]: e for e in json.loads((DERIVED / "manifest.json").read_text())}


def _t1_schema() -> dict:
    """TableSchema of test.t1 (id int primary key, val varchar(16)) at the version the derived
    simple_avro_insert vector carries."""
    return {
        "schema": "test", "table": "t1", "tableID": 104, "version": 415508856908021766,
        "columns": [
            {"name": "id", "dataType": {"mysqlType": "int", "charset": "binary", "collate": "binary",
                                        "length": 11}, "nullable": False, "default": None},
            {"name": "val", "dataType": {"mysqlType": "varchar", "charset": "utf8mb4",
                                         "collate": "utf8mb4_bin", "length": 16},
             "nullable": True, "default": None},
        ],
        "indexes": [{"name": "primary", "unique": True, "primary": True, "nullable": False,
                     "columns": ["id"]}],
    }


# --------------------------------------------------------------------------- docs stream
@pytest.fixture
def docs_batch(impl):
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    batch = dec.decode(None, _docs_values(), partitions=[3] * 6, offsets=list(range(100, 106)))
    return dec, batch


def test_docs_stream_ops_and_order(docs_batch):
    dec, batch = docs_batch
    rows = plain_rows(batch)
    # The INSERT for simple.user arrives before its schema (the BOOTSTRAP is for new_user) and is
    # released right after the ALTER, whose preTableSchema announces the version it needs.
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "DDL", "INSERT", "UPDATE", "DELETE", "RESOLVED"]
    assert [r["_offset"] for r in rows] == [100, 102, 101, 103, 104, 105]
    assert [r["_partition"] for r in rows] == [3] * 6
    assert dec.held() == 0
    assert not any(r["_undecodable"] for r in rows)
    assert all(r["_raw"] is None for r in rows)


def test_docs_bootstrap_row(docs_batch):
    _, batch = docs_batch
    r = plain_rows(batch)[0]
    assert r["_op"] == "BOOTSTRAP"
    assert r["_ddl_type"] == "BOOTSTRAP"
    assert r["_commit_ts"] == 0
    assert (r["_schema"], r["_table"]) == ("simple", "new_user")
    assert r["_schema_version"] == 447984074911121426
    assert r["_table_id"] == 148
    assert r["_build_ts"] == 1708924603278
    assert r["_ddl"] is None and r["after"] is None and r["before"] is None
    ts = json.loads(r["_table_schema"])
    assert (ts["schema"], ts["table"], ts["version"]) == ("simple", "new_user", 447984074911121426)
    assert [c["name"] for c in ts["columns"]] == ["id", "name", "age", "score"]
    assert ts["columns"][3]["dataType"]["mysqlType"] == "float"


def test_docs_ddl_row(docs_batch):
    _, batch = docs_batch
    r = plain_rows(batch)[1]
    assert r["_op"] == "DDL"
    assert r["_ddl_type"] == "ALTER"
    assert r["_ddl"] == "ALTER TABLE `user` ADD COLUMN `createTime` TIMESTAMP"
    assert r["_commit_ts"] == 447987408682614795
    assert r["_build_ts"] == 1708936343598
    assert (r["_schema"], r["_table"]) == ("simple", "user")
    # the row describes the schema after the DDL
    assert r["_schema_version"] == 447987408682614791
    assert r["_table_id"] == 148
    ts = json.loads(r["_table_schema"])
    assert ts["version"] == 447987408682614791
    assert [c["name"] for c in ts["columns"]] == ["id", "name", "age", "score", "createTime"]
    assert r["after"] is None and r["before"] is None
    assert r["_handle_key_only"] is False


def test_docs_dmlplain_rows(docs_batch):
    _, batch = docs_batch
    ins, upd, dele = plain_rows(batch)[2:5]
    common = {"_schema": "simple", "_table": "user", "_table_id": 148,
              "_schema_version": 447984074911121426, "_ddl": None, "_ddl_type": None,
              "_table_schema": None, "_handle_key_only": False, "_claim_check_location": None,
              "_checksum_version": None, "_checksum_corrupted": None, "_checksum_current": None,
              "_checksum_previous": None, "_undecodable": False, "_raw": None}
    for r in (ins, upd, dele):
        for k, v in common.items():
            assert r[k] == v, (r["_op"], k)
    assert ins["_commit_ts"] == 447984084414103554 and ins["_build_ts"] == 1708923662983
    assert ins["after"] == {"age": "25", "id": "1", "name": "John Doe", "score": "90.5"}
    assert ins["before"] is None
    assert upd["_commit_ts"] == 447984099186180098 and upd["_build_ts"] == 1708923719184
    assert upd["after"] == {"age": "25", "id": "1", "name": "John Doe", "score": "95"}
    assert upd["before"] == {"age": "25", "id": "1", "name": "John Doe", "score": "90.5"}
    assert dele["_commit_ts"] == 447984114259722243 and dele["_build_ts"] == 1708923776484
    assert dele["after"] is None
    assert dele["before"] == {"age": "25", "id": "1", "name": "John Doe", "score": "95"}


def test_docs_watermark_row(docs_batch):
    _, batch = docs_batch
    r = plain_rows(batch)[5]
    assert r["_op"] == "RESOLVED"
    assert r["_commit_ts"] == 447984124732375041
    assert r["_build_ts"] == 1708923816911
    for k in ("_schema", "_table", "_ddl", "_ddl_type", "_table_schema", "_schema_version",
              "_table_id", "after", "before"):
        assert r[k] is None, k


def test_docs_schema_cache(docs_batch):
    dec, _ = docs_batch
    latest = dec.table_schema("simple", "user")
    assert latest.version == 447987408682614791
    assert [c.name for c in latest.columns] == ["id", "name", "age", "score", "createTime"]
    assert latest.column("createTime").mysql_type == "timestamp"
    old = dec.table_schema("simple", "user", 447984074911121426)
    assert [c.name for c in old.columns] == ["id", "name", "age", "score"]
    assert dec.table_schema("simple", "new_user").version == 447984074911121426
    assert dec.table_schema("simple", "nope") is None


def test_docs_generic_schema(docs_batch):
    _, batch = docs_batch
    names = batch.schema.names
    assert names[:7] == ["_op", "_commit_ts", "_schema", "_table", "_ddl", "after", "before"]
    assert names[-4:] == ["_undecodable", "_raw", "_partition", "_offset"]
    assert batch.schema.field("after").type == pa.map_(pa.string(), pa.string())
    assert batch.schema.field("_commit_ts").type == pa.int64()


def test_docs_stream_one_message_per_call(impl):
    """Feeding the docs messages one decode() call at a time gives the same rows."""
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    rows = []
    for i, v in enumerate(_docs_values()):
        rows += plain_rows(dec.decode(None, [v], offsets=[100 + i]))
        if i == 1:
            assert dec.held() == 1          # the INSERT waits for simple.user's schema
    whole = ticdc_fast.SimpleDecoder("json", implementation=impl).decode(
        None, _docs_values(), offsets=list(range(100, 106)))
    assert rows == plain_rows(whole)


def test_docs_stream_typed(impl):
    """Typed mode for simple.user: rows decode by their own TableSchema version."""
    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("age", pa.int32()),
                        ("score", pa.float32()), ("createTime", pa.timestamp("us", tz="UTC"))])
    dec = ticdc_fast.SimpleDecoder("json", table="simple.user", schema=schema, implementation=impl)
    batch = dec.decode(None, _docs_values())
    rows = batch.to_pylist()
    assert [r["_op"] for r in rows] == ["DDL", "INSERT", "UPDATE", "DELETE", "RESOLVED"]
    ins, upd, dele = rows[1:4]
    assert (ins["id"], ins["name"], ins["age"], ins["score"], ins["createTime"]) == \
        (1, "John Doe", 25, 90.5, None)
    assert upd["score"] == 95.0
    assert dele["score"] == 95.0 and dele["id"] == 1
    assert rows[0]["_ddl"].startswith("ALTER TABLE")
    assert batch.schema.names[:7] == ["_op", "_commit_ts", "id", "name", "age", "score", "createTime"]


@differential
def test_docs_stream_implementations_agree():
    out = [ticdc_fast.SimpleDecoder("json", implementation=i).decode(
        None, _docs_values(), partitions=[0] * 6, offsets=list(range(6))) for i in ("cython", "python")]
    assert out[0].equals(out[1])


# --------------------------------------------------------------------------- derived Avro
def test_avro_vector_files_match_manifest():
    m = _manifest()
    for name in ("simple_avro_insert", "simple_avro_watermark"):
        assert (DERIVED / f"{name}.value.bin").read_bytes() == bytes.fromhex(m[name]["value_hex"])
        assert (DERIVED / f"{name}.value.bin").read_bytes()[:1] == b"\x16"
        assert m[name]["key_hex"] is None   # the simple protocol's Kafka key is nil


def test_avro_watermark_vector(impl):
    value = (DERIVED / "simple_avro_watermark.value.bin").read_bytes()
    assert value[:4] == bytes.fromhex("16000002")
    dec = ticdc_fast.SimpleDecoder("avro", implementation=impl)
    rows = plain_rows(dec.decode([None], [value]))
    assert len(rows) == 1
    r = rows[0]
    # same content as the docs JSON WATERMARK
    doc = json.loads((DOCS / "watermark.json").read_text())
    assert r["_op"] == "RESOLVED"
    assert r["_commit_ts"] == doc["commitTs"] == 447984124732375041
    assert r["_build_ts"] == doc["buildTs"] == 1708923816911
    assert r["_schema"] is None and r["after"] is None


def test_avro_insert_vector_seeded(impl):
    value = (DERIVED / "simple_avro_insert.value.bin").read_bytes()
    dec = ticdc_fast.SimpleDecoder("avro", schemas=[_t1_schema()], implementation=impl)
    rows = plain_rows(dec.decode(None, [value], partitions=[2], offsets=[9]))
    assert len(rows) == 1
    r = rows[0]
    assert r["_op"] == "INSERT"
    assert (r["_schema"], r["_table"]) == ("test", "t1")
    assert r["_table_id"] == 104
    assert r["_commit_ts"] == 415508878783938562
    assert r["_build_ts"] == 1585040583999
    assert r["_schema_version"] == 415508856908021766
    assert r["after"] == {"id": "1", "val": "aa"}
    assert r["before"] is None
    assert r["_handle_key_only"] is False and r["_claim_check_location"] is None
    assert (r["_partition"], r["_offset"]) == (2, 9)


def test_avro_insert_vector_without_schema_is_held(impl):
    value = (DERIVED / "simple_avro_insert.value.bin").read_bytes()
    dec = ticdc_fast.SimpleDecoder("avro", implementation=impl)
    assert dec.decode(None, [value]).num_rows == 0
    assert dec.held() == 1
    # seeding the schema afterwards and announcing it through a BOOTSTRAP releases it
    from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleEncoder, SimpleTable
    t1 = SimpleTable("test", "t1", 104, 415508856908021766,
                     [SimpleColumn("id", "int", nullable=False), SimpleColumn("val", "varchar", length=16)])
    boot = SimpleEncoder("avro").encode_value(SimpleBootstrap(t1))
    rows = plain_rows(dec.decode(None, [boot]))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT"]
    assert rows[1]["after"] == {"id": "1", "val": "aa"}
    assert dec.held() == 0


def test_avro_insert_vector_typed(impl):
    value = (DERIVED / "simple_avro_insert.value.bin").read_bytes()
    watermark = (DERIVED / "simple_avro_watermark.value.bin").read_bytes()
    # no schema=: the default Arrow schema of the seeded TableSchema
    dec = ticdc_fast.SimpleDecoder("avro", table="test.t1", schemas=[_t1_schema()], implementation=impl)
    batch = dec.decode(None, [value, watermark])
    assert batch.schema.field("id").type == pa.int32()
    assert batch.schema.field("val").type == pa.string()
    rows = batch.to_pylist()
    assert [(r["_op"], r["id"], r["val"]) for r in rows] == [("INSERT", 1, "aa"), ("RESOLVED", None, None)]
    assert rows[1]["_commit_ts"] == 447984124732375041


@differential
def test_avro_vectors_implementations_agree():
    values = [(DERIVED / f"simple_avro_{n}.value.bin").read_bytes() for n in ("insert", "watermark")]
    out = [ticdc_fast.SimpleDecoder("avro", schemas=[_t1_schema()], implementation=i).decode(None, values)
           for i in ("cython", "python")]
    assert out[0].equals(out[1])
