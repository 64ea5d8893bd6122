"""``format("ticdc")``: TiCDC changelogs read from Kafka and decoded inside the data source.

``format("ticdc_kafka")`` + ``ticdc_fast.spark.decode`` moves every raw message from the Python
reader into the JVM and back out to a Python ``mapInArrow`` worker before it is decoded.  This
source decodes where the messages are read and hands Spark the decoded Arrow batches (Spark >= 4
accepts ``pyarrow.RecordBatch`` from a Python data source reader), saving that round trip::

    from ticdc_fast.spark import register_kafka_source
    register_kafka_source(spark)          # registers "ticdc_kafka" and "ticdc"
    df = (spark.readStream.format("ticdc")
          .option("kafka.bootstrap.servers", "host:9092")
          .option("subscribe", "tidb-orders")
          .option("protocol", "open")
          .option("table", "shop.orders")                       # typed output (optional)
          .option("schema", "id BIGINT NOT NULL, note STRING")  # DDL or StructType JSON
          .load())

Options: every option of ``ticdc_kafka`` (see ``kafka_source``: offsets, limits, headers,
``kafka.*``, ...) and

``protocol``
    required: ``open``, ``simple-json``, ``simple-avro`` or ``avro``.
``table`` and ``schema``
    typed output of one table (both or neither): ``db.tbl`` and the table's schema as a DDL
    string of flat columns (``"id BIGINT NOT NULL, price DECIMAL(10,2)"``) or the JSON of a
    ``StructType`` (``struct.json()``), or ``auto`` (every protocol): resolved on the
    driver when the query is planned, as ``decode(..., schema="auto")`` does.
``tables`` and ``unlisted``
    many tables in one pass, as ``decode(tables=...)``: a JSON object ``{"db.t1": "id BIGINT,
    ...", "db.t2": ...}`` (each schema a DDL string, a StructType JSON object, or ``null`` for the
    simple protocol: found as ``auto`` finds it); ``unlisted``:
    ``skip`` (default) or ``generic``.  The output is the stacked layout; ``split_tables`` splits it.
every decoder option
    as the protocol's decoder takes it (docs/api.md: ``onError``, ``onSchemaChange``, ``oldImage``,
    ``timezone``, ``compression``, ``registry``, ``invalidUtf8``, ``controlEvents``,
    ``maxMessageBytes``, ``holdMaxRows``, ``verifyChecksum``, ``extraColumns``...), named in
    camelCase or snake_case (``onError`` or ``on_error``); an option the protocol's decoder does
    not take, or no option at all (a misspelling), is an error listing the valid ones.
``claimCheckBase``
    where claim-check files live (open and simple protocols):
    ``ticdc_fast.fsspec_resolver(base)`` reads them.

Columns: the decoded changelog (as ``decode`` gives it) with ``_partition``, ``_offset``,
``_topic``, ``_timestamp`` (and ``_headers`` with ``includeHeaders``).  Offsets, checkpoints and
restarts are those of ``ticdc_kafka``: a streaming query restarted from its checkpoint neither
loses nor repeats rows.  Each input partition (one Kafka partition's range) is decoded by one
decoder, so a simple-protocol row whose schema comes later in the range is released there;
one whose schema is in a later micro-batch is not (as with ``decode``, whose decoders live for
one task too).
"""
from __future__ import annotations

import json
import re

import pyarrow as pa
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from ..tables import check_tables
from .decoding import (PROTOCOLS, DecodeSpec, _with_meta_fields, decode_partition,
                       output_arrow_schema, to_spark_struct)
from .kafka_source import (HEADERS_TYPE, KAFKA_SCHEMA, KAFKA_SCHEMA_WITH_HEADERS, KafkaBatchReader,
                           KafkaStreamReader, _bool, _Options)

__all__ = ["TicdcDataSource", "parse_table_schema", "register"]


# ================================================================================ table schema
_SIMPLE_TYPES = {
    "boolean": "boolean", "bool": "boolean", "tinyint": "byte", "byte": "byte",
    "smallint": "short", "short": "short", "int": "integer", "integer": "integer",
    "bigint": "long", "long": "long", "float": "float", "real": "float", "double": "double",
    "string": "string", "binary": "binary", "date": "date", "timestamp": "timestamp",
    "timestamp_ltz": "timestamp", "timestamp_ntz": "timestamp_ntz",
}
_COLUMN = re.compile(r"\s*(`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_$]*)(?:\s*:\s*|\s+)"
                     r"([A-Za-z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?"
                     r"(\s+NOT\s+NULL)?(?:\s+COMMENT\s+'(?:[^'\\]|\\.)*')?\s*$", re.I)


def _split_columns(text: str) -> list[str]:
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "`'":
            quote = ch
        elif ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return out


def parse_table_schema(text: str) -> StructType:
    """The ``schema`` option: the JSON of a ``StructType``, or a DDL string of flat columns.

    Parsed without the JVM (data source options are read in Python workers, where no
    SparkContext exists).  Nested types (a TiCDC table has none) need the JSON form."""
    s = text.strip()
    if s.startswith("{"):
        try:
            parsed = StructType.fromJson(json.loads(s))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"ticdc: option 'schema' is not the JSON of a StructType: {exc}") from None
        return parsed
    fields = []
    for col in _split_columns(s):
        m = _COLUMN.match(col)
        if not m:
            raise ValueError(f"ticdc: option 'schema': cannot read the column {col.strip()!r}; "
                             "write 'name TYPE [NOT NULL]' (flat types) or give StructType JSON")
        name, typ, p, sc, not_null = m.group(1), m.group(2).lower(), m.group(3), m.group(4), m.group(5)
        if name.startswith("`"):
            name = name[1:-1].replace("``", "`")
        if typ in ("decimal", "dec", "numeric"):
            json_type = f"decimal({p or 10},{sc or 0})"
        elif typ in ("char", "varchar") and p is not None:
            json_type = "string"
        elif typ in _SIMPLE_TYPES and p is None:
            json_type = _SIMPLE_TYPES[typ]
        else:
            raise ValueError(f"ticdc: option 'schema': unsupported type in {col.strip()!r}")
        fields.append({"name": name, "type": json_type, "nullable": not not_null, "metadata": {}})
    return StructType.fromJson({"type": "struct", "fields": fields})


def _parse_tables(text: str) -> dict:
    """The ``tables`` option: a JSON object ``{"db.table": schema}``, each schema a DDL string
    or the JSON object of a ``StructType``."""
    try:
        given = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"ticdc: option 'tables' is not a JSON object: {exc}") from None
    if not isinstance(given, dict) or not given:
        raise ValueError('ticdc: option \'tables\' must be a JSON object {"db.table": "id BIGINT, ..."}')
    out = {}
    for name, sch in given.items():
        if sch is None:                  # the simple protocol: the table's schema from the stream
            out[name] = None
            continue
        if isinstance(sch, dict):
            sch = json.dumps(sch)
        elif not isinstance(sch, str):
            raise ValueError(f"ticdc: option 'tables': the schema of {name!r} must be a DDL string "
                             "or a StructType JSON object")
        out[name] = parse_table_schema(sch)
    return out


# ================================================================================ options
# the options of ``ticdc_kafka`` (spelling keys: no case, no underscores); ``kafka.*`` too
_KAFKA_OPTIONS = {"bootstrap.servers": "bootstrap.servers", "subscribe": "subscribe",
                  "subscribepattern": "subscribePattern", "assign": "assign",
                  "startingoffsets": "startingOffsets", "endingoffsets": "endingOffsets",
                  "maxoffsetspertrigger": "maxOffsetsPerTrigger", "failondataloss": "failOnDataLoss",
                  "includeheaders": "includeHeaders", "kafkaconsumer.polltimeoutms": "kafkaConsumer.pollTimeoutMs",
                  "arrowbatchsize": "arrowBatchSize", "groupidprefix": "groupIdPrefix"}
# read here, not given to the decoder as they are
_SOURCE_READ = ("protocol", "table", "schema", "tables", "claim_check_base")


def split_options(options) -> tuple[dict, dict]:
    """(the Kafka source's options, ``{decoder option: text}``) of a ``ticdc`` source's options,
    each name in camelCase or snake_case; an option neither takes is a ValueError listing them."""
    from ..options import RENAMED, resolve_names, spelling_key
    kafka, ours = {}, {}
    old_names = {spelling_key(old): new for old, (_, new) in RENAMED.items()}
    for k, v in dict(options or {}).items():
        key = spelling_key(k)
        if str(k).lower().startswith("kafka."):
            kafka[str(k).lower()] = str(v)
        elif key in _KAFKA_OPTIONS:
            kafka[_KAFKA_OPTIONS[key].lower()] = str(v)
        elif key in old_names:
            ours[old_names[key]] = str(v)
        else:
            ours[k] = v
    return kafka, resolve_names(ours, where="ticdc", others=[*_KAFKA_OPTIONS.values(), "kafka.*"])


def _decoder_kwargs(protocol: str, opts: dict, typed: bool) -> dict:
    """The decoder keywords of the options given (each read as its kind, each checked to be one
    the protocol's decoder takes)."""
    from .. import _impl
    from ..options import OPTIONS, check_protocol, parse_value
    from ..policy import check_on_error
    dec = {"on_error": check_on_error(opts.get("on_error", "fail")),
           "implementation": _impl.resolve(opts.get("implementation"))}
    for name, text in opts.items():
        check_protocol(name, protocol, "ticdc")
        if name in _SOURCE_READ or name in dec:
            continue
        if name in ("on_schema_change", "old_image", "schema_version", "extra_columns") and not typed:
            raise ValueError(f"ticdc: option {OPTIONS[name].camel!r} is for typed output "
                             "(table and schema, or tables)")
        dec[name] = parse_value(name, text)
    if typed:
        dec.setdefault("old_image", True)        # what latest_state needs of a raw key change
    if "on_schema_change" in dec:
        from ..errors import check_on_schema_change
        check_on_schema_change(dec["on_schema_change"])
    return dec


class _DecodeOptions:
    """The decoding options of a ``ticdc`` source, parsed on the driver side of planning."""

    def __init__(self, options) -> None:
        from .decoding import as_arrow_schema

        kafka, opts = split_options(options)
        self.protocol = opts.get("protocol")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"ticdc: option 'protocol' must be one of {', '.join(PROTOCOLS)}, "
                             f"got {self.protocol!r}")
        self.table = opts.get("table")
        text = opts.get("schema")
        self.tables = None
        auto = text is not None and text.strip().lower() == "auto"
        if "tables" in opts:
            if self.table is not None or text is not None:
                raise ValueError("ticdc: give either option 'tables' or 'table' and 'schema', not both")
            self.tables = check_tables(_parse_tables(opts["tables"]), opts.get("unlisted", "skip"),
                                       schema_optional=self.protocol.startswith("simple"))
        elif (self.table is None) != (text is None):
            raise ValueError("ticdc: typed output needs both options 'table' and 'schema'")
        dec = _decoder_kwargs(self.protocol, opts, typed=self.table is not None or self.tables is not None)
        if self.tables is not None and None in self.tables.values():
            from .decoding import _tables_from_stream
            self.tables = _tables_from_stream(self.protocol, self.tables, kafka, dec)
        if self.tables is not None:
            dec.setdefault("unlisted", "skip")
        self.schema = as_arrow_schema(parse_table_schema(text)) if text is not None and not auto else None
        if auto:
            from .auto import resolve_auto_schema
            self.schema, fixed = resolve_auto_schema(self.protocol, self.table, kafka, dec)
            dec.update(fixed)
        self.auto = auto
        self.decoder_options = dec
        self.claim_check_base = opts.get("claim_check_base")
        self.include_headers = _bool(kafka.get("includeheaders", "false"), "includeHeaders")

    def kafka_schema(self) -> StructType:
        return KAFKA_SCHEMA_WITH_HEADERS if self.include_headers else KAFKA_SCHEMA

    def meta_types(self) -> dict:
        from pyspark.sql.pandas.types import to_arrow_type
        types = {"topic": pa.string(), "timestamp": pa.timestamp("us", tz="UTC")}
        if self.include_headers:
            types["headers"] = to_arrow_type(HEADERS_TYPE)
        return types

    def output_schema(self) -> pa.Schema:
        return _with_meta_fields(output_arrow_schema(self.protocol, self.table, self.schema, self.tables,
                                                     **self.decoder_options), self.meta_types())

    def spec(self, spark_schema: StructType) -> DecodeSpec:
        from pyspark.sql.pandas.types import to_arrow_schema
        # exactly the Arrow schema pyspark checks each yielded batch against
        target = to_arrow_schema(spark_schema, timezone="UTC")
        return DecodeSpec(self.protocol, self.table, self.schema, self.decoder_options, target,
                          self.meta_types(), claim_check_base=self.claim_check_base, tables=self.tables)


# ================================================================================ readers
class TicdcBatchReader(KafkaBatchReader):
    """``ticdc_kafka``'s batch planning; each range decoded as it is read."""

    def __init__(self, opts: _Options, kafka_schema: StructType, spec: DecodeSpec) -> None:
        super().__init__(opts, kafka_schema)
        self.spec = spec

    def read(self, partition):
        return decode_partition(super().read(partition), self.spec)


class TicdcStreamReader(KafkaStreamReader):
    """``ticdc_kafka``'s offsets and micro-batch planning; each range decoded as it is read."""

    def __init__(self, opts: _Options, kafka_schema: StructType, spec: DecodeSpec) -> None:
        super().__init__(opts, kafka_schema)
        self.spec = spec

    def read(self, partition):
        return decode_partition(super().read(partition), self.spec)


class TicdcDataSource(DataSource):
    """``format("ticdc")``: decoded TiCDC changelogs from Kafka."""

    @classmethod
    def name(cls) -> str:
        return "ticdc"

    def schema(self):
        return to_spark_struct(_DecodeOptions(self.options).output_schema())

    def _parts(self, schema: StructType):
        dopts = _DecodeOptions(self.options)
        expected = to_spark_struct(dopts.output_schema())
        if schema.fieldNames() != expected.fieldNames():
            if dopts.auto:
                raise ValueError("ticdc: schema 'auto': the table's schema changed while the query "
                                 f"was planned (now {expected.simpleString()}); start it again")
            raise ValueError("ticdc: the source's columns are fixed by its options; do not give "
                             f"a user schema (expected {expected.simpleString()})")
        return _Options(split_options(self.options)[0]), dopts.kafka_schema(), dopts.spec(schema)

    def reader(self, schema: StructType) -> TicdcBatchReader:
        return TicdcBatchReader(*self._parts(schema))

    def streamReader(self, schema: StructType) -> TicdcStreamReader:
        return TicdcStreamReader(*self._parts(schema))


def register(spark) -> None:
    """``spark.dataSource.register(TicdcDataSource)``: enables ``format("ticdc")``."""
    spark.dataSource.register(TicdcDataSource)
