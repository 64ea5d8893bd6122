"""Issue 42, one vocabulary: every option has one name on every decoder, ``spark.decode`` and the
``ticdc`` source; ``schema=`` takes a pyarrow schema, a StructType or a DDL string everywhere
(DDL read without a SparkSession); ``schema="auto"`` on every protocol; ``keys=None``."""
from __future__ import annotations

import inspect
import logging

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast.ddl import parse_ddl
from ticdc_fast.options import OPTIONS
from ticdc_fast.testing import SimpleBootstrap, SimpleEncoder

from test_changelog_key_changes import AVRO_SCHEMAS, SIMPLE_TABLE, _encode, _history

PROTOCOLS = ["open", "simple-json", "simple-avro", "avro"]
DDL = "id BIGINT NOT NULL, name STRING"
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
DATA = ("INSERT", "UPDATE", "DELETE")


def _messages(protocol):
    """INSERT 1, raw UPDATE 1 -> 2, INSERT 3 of db.t (a BOOTSTRAP first for the simple protocol)."""
    msgs = [_encode(protocol, ev) for ev in _history(0, split=False)]
    if protocol.startswith("simple"):
        (_, v), = SimpleEncoder(protocol.split("-")[1]).encode([SimpleBootstrap(SIMPLE_TABLE)])
        msgs.insert(0, (None, v))
    return [k for k, _ in msgs], [v for _, v in msgs]


def _decoder(protocol, impl, **kw):
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation=impl, **kw)
    if protocol.startswith("simple"):
        return ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation=impl, **kw)
    return ticdc_fast.AvroDecoder(schemas=AVRO_SCHEMAS, implementation=impl, **kw)


def _data(batch):
    return [(r["_op"], r["id"], r["name"]) for r in batch.to_pylist() if r["_op"] in DATA]


# ------------------------------------------------------------------ names
NOT_OPTIONS = {"self", "encoding", "state", "claim_check_resolver", "topic", "schema_id"}


def test_every_option_has_one_name_on_every_decoder():
    """Each decoder option is a keyword of exactly the decoders the vocabulary says take it."""
    decoders = {"open": ticdc_fast.OpenDecoder, "simple": ticdc_fast.SimpleDecoder,
                "avro": ticdc_fast.AvroDecoder}
    for family, cls in decoders.items():
        params = set(inspect.signature(cls).parameters) - NOT_OPTIONS
        want = {o.name for o in OPTIONS.values() if o.decoder and family in o.protocols}
        assert params == want, family


def test_schema_version_is_the_name_on_both_decoders_that_have_it(impl):
    keys, values = _messages("avro")
    new = _decoder("avro", impl, table="db.t", schema=DDL, schema_version=2).decode(keys, values)
    with pytest.warns(DeprecationWarning, match="schema_id= is now schema_version="):
        old = _decoder("avro", impl, table="db.t", schema=DDL, schema_id=2)
    assert old.decode(keys, values).equals(new)
    skeys, svalues = _messages("simple-json")
    simple = _decoder("simple-json", impl, table="db.t", schema=DDL, schema_version=50)
    assert _data(simple.decode(skeys, svalues)) == _data(new)


# ------------------------------------------------------------------ schema=
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_schema_forms_on_every_decoder(protocol, impl):
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    struct = StructType([StructField("id", LongType(), False), StructField("name", StringType())])
    keys, values = _messages(protocol)
    outs = [_decoder(protocol, impl, table="db.t", schema=s).decode(keys, values) for s in (ARROW, struct, DDL)]
    assert outs[0].schema.field("id") == pa.field("id", pa.int64())
    assert outs[1].equals(outs[0]) and outs[2].equals(outs[0])
    assert _data(outs[0]) == [("INSERT", 1, "a"), ("UPDATE", 2, "a"), ("INSERT", 3, "c")]


DDLS = ["id BIGINT NOT NULL, `odd name` DECIMAL(20, 0) COMMENT 'a, b', `a``b` STRING, t TIMESTAMP",
        "a INT, b SMALLINT, c TINYINT, d DOUBLE, e FLOAT, f BOOLEAN, g BINARY, h DATE, i STRING",
        "x: DECIMAL(38,10), y TIMESTAMP_NTZ, z DECIMAL",
        "tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>, pt STRUCT<x: INT, y: DOUBLE NOT NULL>",
        "STRUCT<id: BIGINT, n: STRING>"]


@pytest.mark.parametrize("ddl", DDLS)
def test_ddl_without_spark_is_what_spark_parses(spark, ddl):
    """``parse_ddl`` (no SparkSession needed) gives the Arrow schema of Spark's own parse."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import _parse_datatype_string
    assert parse_ddl(ddl).equals(to_arrow_schema(_parse_datatype_string(ddl), timezone="UTC"))


def test_ddl_char_types_are_strings():
    """(Spark reads CHAR/VARCHAR as strings in data; its Arrow conversion refuses the types.)"""
    assert parse_ddl("a CHAR(3), b VARCHAR(20)") == pa.schema([("a", pa.string()), ("b", pa.string())])


@pytest.mark.parametrize("ddl, fault", [
    ("id BIGINT, oops", "column 'oops' has no type"), ("a INTERVAL", "unknown type 'INTERVAL'"),
    ("a DECIMAL(50,2)", r"DECIMAL\(50, 2\) is not a Spark decimal"), ("x INT junk", "cannot read 'junk' after column 'x'"),
    ("m MAP<STRING>", "',' expected, not '>'"), ("a ARRAY<INT", "ends where '>' should come")])
def test_ddl_errors_name_the_bad_part(ddl, fault):
    with pytest.raises(ValueError, match=fault):
        parse_ddl(ddl)


# ------------------------------------------------------------------ schema="auto"
@pytest.mark.parametrize("protocol", ["open", "simple-json", "simple-avro"])
def test_schema_auto_from_the_first_batch(protocol, impl, caplog):
    keys, values = _messages(protocol)
    dec = _decoder(protocol, impl, table="db.t", schema="auto")
    with caplog.at_level(logging.WARNING, logger="ticdc_fast"):
        out = dec.decode(keys, values)
    assert _data(out) == [("INSERT", 1, "a"), ("UPDATE", 2, "a"), ("INSERT", 3, "c")]
    assert out.schema.field("id").type == pa.int64()
    assert dec.output_schema().names == out.schema.names
    if protocol == "open":
        assert "schema='auto': the schema of db.t inferred from the first batch's rows: id int64" in caplog.text


def test_schema_auto_open_needs_a_row_of_the_table(impl):
    dec = _decoder("open", impl, table="db.t", schema="auto")
    with pytest.raises(ValueError, match="inferred from the first decode"):
        dec.output_schema()
    keys, values = _messages("open")
    other = _decoder("open", impl, table="db.other", schema="auto")
    with pytest.raises(ValueError, match="no row of db.other in the first decode"):
        other.decode(keys, values)
    with pytest.raises(ValueError, match="needs table="):
        _decoder("open", impl, schema="auto")
    with pytest.raises(ValueError, match="on_error"):
        _decoder("open", impl, table="db.t", schema="auto", on_error="nope")


def test_schema_auto_avro_from_the_registry(impl):
    from test_schema_auto import _avro_messages, _registry
    with _registry() as reg:
        keys, values, _ = _avro_messages(reg.url, "cdc.users")
        dec = ticdc_fast.AvroDecoder(reg.url, implementation=impl, table="app.users", schema="auto", topic="cdc.users")
        rows = dec.decode(keys, values).to_pylist()
        assert [(r["id"], r["name"], r["score"]) for r in rows] == [(1, "a", None), (2, "b", 2.5)]


# ------------------------------------------------------------------ keys=None
@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro", "avro"])
def test_keys_none_where_keys_are_not_needed(protocol, impl):
    keys, values = _messages(protocol)
    none = _decoder(protocol, impl, table="db.t", schema=DDL).decode(None, values)
    assert none.equals(_decoder(protocol, impl, table="db.t", schema=DDL).decode([None] * len(values), values))
    assert _data(none) == [("INSERT", 1, "a"), ("UPDATE", 2, "a"), ("INSERT", 3, "c")]


def test_keys_none_is_a_value_error_on_the_open_decoder(impl):
    _, values = _messages("open")
    for kw in ({}, {"table": "db.t", "schema": DDL}):
        with pytest.raises(ValueError, match="the open protocol needs the Kafka keys"):
            _decoder("open", impl, **kw).decode(None, values)


def test_docs_api_lists_every_option():
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text()
    rows = {line.split("|")[1].strip().strip("`") for line in text.splitlines() if line.startswith("| `")}
    assert rows == set(OPTIONS)
    for o in OPTIONS.values():
        assert f"`{o.camel}`" in text


# ------------------------------------------------------------------ Spark and the source
def _topic_with(kafka, protocol, name):
    from test_ticdc_source import _topic
    topic = _topic(name)
    kafka.create_topic(topic, partitions=1)
    keys, values = _messages(protocol)
    kafka.produce(topic, [(k, v, 0) for k, v in zip(keys, values)])
    opts = {"kafka.bootstrap.servers": kafka.bootstrap_servers, "subscribe": topic, "startingOffsets": "earliest"}
    return topic, opts


def _state(df):
    return sorted((r["id"], r["name"]) for r in df.collect() if r["_op"] in DATA)


def test_schema_auto_open_in_spark_decode_and_the_source(spark, kafka, impl):
    from ticdc_fast import spark as tfs
    from test_ticdc_source import _read_kafka, _ticdc
    topic, opts = _topic_with(kafka, "open", "openauto")
    via_decode = tfs.decode(_read_kafka(spark, kafka, topic), "open", table="db.t", schema="auto", kafka=opts,
                            implementation=impl)
    source = _ticdc(spark, kafka, topic, protocol="open", table="db.t", schema="auto",
                    startingOffsets="earliest", implementation=impl)
    assert via_decode.schema == source.schema
    assert dict(via_decode.dtypes)["id"] == "bigint"
    assert _state(via_decode) == _state(source) == [(1, "a"), (2, "a"), (3, "c")]
    assert sorted(r["id"] for r in tfs.latest_state(source, ["id"]).collect()) == [2, 3]


def test_tables_none_in_spark_decode_and_the_source(spark, kafka, impl):
    """``tables={"db.t": None}`` (simple protocol): the table's schema from the stream."""
    import json

    from ticdc_fast import spark as tfs
    from test_ticdc_source import _read_kafka, _ticdc
    topic, opts = _topic_with(kafka, "simple-json", "tablesnone")
    with pytest.raises(ValueError, match="give kafka="):
        tfs.decode(_read_kafka(spark, kafka, topic), "simple-json", tables={"db.t": None})
    stacked = tfs.decode(_read_kafka(spark, kafka, topic), "simple-json", tables={"db.t": None}, kafka=opts,
                         implementation=impl)
    source = _ticdc(spark, kafka, topic, protocol="simple-json", tables=json.dumps({"db.t": None}),
                    startingOffsets="earliest", implementation=impl)
    assert stacked.schema == source.schema
    for df in (stacked, source):
        assert _state(tfs.split_tables(df)["db.t"]) == [(1, "a"), (2, "a"), (3, "c")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_option_of_another_mode_is_an_error(protocol, impl):
    with pytest.raises(ValueError, match=r"unlisted= is for tables="):
        _decoder(protocol, impl, table="db.t", schema=DDL, unlisted="generic")
    with pytest.raises(ValueError, match="control_events=False is for typed mode"):
        _decoder(protocol, impl, control_events=False)
    keys, values = _messages(protocol)
    quiet = _decoder(protocol, impl, tables={"db.t": DDL}, unlisted="generic", control_events=False)
    assert _data(quiet.decode(keys, values)["db.t"]) == [("INSERT", 1, "a"), ("UPDATE", 2, "a"), ("INSERT", 3, "c")]


def test_schemas_in_spark_decode_and_the_source(spark, kafka, impl):
    """``schemas`` (offline writer schemas: no registry) reaches the Avro decoder from
    ``spark.decode`` as a dict and from the source as JSON text."""
    import json

    from ticdc_fast import spark as tfs
    from test_ticdc_source import _read_kafka, _ticdc
    topic, opts = _topic_with(kafka, "avro", "schemasopt")
    via_decode = tfs.decode(_read_kafka(spark, kafka, topic), "avro", table="db.t", schema=DDL,
                            schemas=AVRO_SCHEMAS, implementation=impl)
    source = _ticdc(spark, kafka, topic, protocol="avro", table="db.t", schema=DDL, startingOffsets="earliest",
                    schemas=json.dumps(AVRO_SCHEMAS), implementation=impl)
    assert via_decode.schema == source.schema
    assert _state(via_decode) == _state(source) == [(1, "a"), (2, "a"), (3, "c")]


def test_schemas_text_forms(tmp_path):
    """A JSON option's text: inline, ``@file``, or an error naming the option."""
    import json

    from ticdc_fast.options import parse_value
    path = tmp_path / "schemas.json"
    path.write_text(json.dumps(AVRO_SCHEMAS))
    want = {str(k): v for k, v in AVRO_SCHEMAS.items()}
    assert parse_value("schemas", json.dumps(AVRO_SCHEMAS)) == want
    assert parse_value("schemas", f"@{path}") == want
    assert parse_value("schemas", AVRO_SCHEMAS) is AVRO_SCHEMAS
    with pytest.raises(ValueError, match="option 'schemas' must be JSON"):
        parse_value("schemas", "{1: oops")


def test_schemas_seeds_the_simple_decoder_from_the_cli(tmp_path, impl):
    """``--option schemas=@file``: the simple decoder decodes DML without its BOOTSTRAP."""
    import subprocess
    import sys

    import orjson
    keys, values = _messages("simple-json")
    path = tmp_path / "schemas.json"
    path.write_bytes(orjson.dumps([orjson.loads(values[0])["tableSchema"]]))
    capture = tmp_path / "in.jsonl"
    capture.write_bytes(b"".join(orjson.dumps({"key": None, "payload": v.decode()}) + b"\n" for v in values[1:]))
    out = tmp_path / "out.parquet"
    run = subprocess.run([sys.executable, "-m", "ticdc_fast", "decode", "--protocol", "simple-json",
                          "--input", str(capture), "--output", str(out), "--table", "db.t",
                          "--implementation", impl, "--option", f"schemas=@{path}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    import pyarrow.parquet as pq
    assert _data(pq.read_table(out)) == [("INSERT", 1, "a"), ("UPDATE", 2, "a"), ("INSERT", 3, "c")]
