"""``ticdc_fast.spark.decode``: TiCDC messages in a Kafka-shaped DataFrame → a decoded changelog,
through ``mapInArrow`` (one decoder per partition iterator, so simple-protocol schema caches and
held rows live across the iterator's batches).

Spark starts its Python workers in the driver's working directory, and a Python started there
imports ``./ticdc_fast`` before the installed package.  Run from a checkout with a regular
install, that is the source tree without the compiled core: every worker would decode with the
60–160× slower twin while the driver reports the core.  ``decode`` therefore starts its workers
with ``PYTHONSAFEPATH=1`` when the working directory holds another ``ticdc_fast`` than the
driver's, and every worker checks that it runs the implementation the driver chose.
"""
from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from .. import _impl
from ..arrow_types import as_arrow_schema, spark_schema  # noqa: F401  (as_arrow_schema: public here too)
from ..tables import TableBatches, check_tables, stack_batches, stacked_schema
from .kafka_metadata import META_COLUMNS, KafkaMetadataJoin, meta_names

PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")


def make_decoder(protocol: str, table=None, schema=None, tables=None, **options):
    """The decoder for one protocol (typed when ``schema`` or ``tables`` is given, in the
    Spark-accepted variant of each schema)."""
    import ticdc_fast

    kw = dict(options)
    if schema is not None:
        kw.update(table=table, schema=spark_schema(as_arrow_schema(schema)))
    if tables is not None:
        kw["tables"] = {name: None if s is None else spark_schema(as_arrow_schema(s)) for name, s in tables.items()}
    if protocol == "open":
        return ticdc_fast.OpenDecoder(**kw)
    if protocol in ("simple-json", "simple-avro"):
        return ticdc_fast.SimpleDecoder(protocol.split("-")[1], **kw)
    if protocol == "avro":
        return ticdc_fast.AvroDecoder(**kw)
    raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")


def output_arrow_schema(protocol: str, table=None, schema=None, tables=None, **options) -> pa.Schema:
    """The decoded batches' Arrow schema as Spark gets it; with ``tables`` the stacked layout
    (``ticdc_fast.tables.stacked_schema``)."""
    dec = make_decoder(protocol, table, schema, tables, **options)
    if tables is not None:
        out = stacked_schema(dec.output_schemas(partitions=True, offsets=True))
    else:
        out = dec.output_schema(partitions=True, offsets=True)
    # Spark's Arrow path: no unsigned ints, no durations, decimals <= 38 (generic columns already are)
    return spark_schema(out)


def to_spark_struct(arrow_schema: pa.Schema):
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(arrow_schema)


def _shadowing_checkout() -> bool:
    """True when a Python started in this directory would import another ``ticdc_fast`` than ours."""
    here = Path.cwd() / "ticdc_fast"
    if not (here / "__init__.py").is_file():
        return False
    return here.resolve() != Path(_impl.__file__).resolve().parent


class WorkerPythonError(RuntimeError):
    """Spark's Python workers would start an interpreter that cannot import ``ticdc_fast``."""


_CHECKED: dict = {}     # interpreter -> why it cannot import ticdc_fast ("" when it can)


def _import_problem(python: str) -> str | None:
    """Why ``python`` (a path, or a name looked up on ``PATH``) cannot import ``ticdc_fast`` from
    the driver's working directory, or None when it can or is not on this machine (a cluster's
    path for its nodes).  Asked once per interpreter, with a bound of 20 s."""
    import shutil
    import subprocess

    found = shutil.which(python)
    if found is None:
        return None
    key = (os.path.abspath(found), os.getcwd())
    if key not in _CHECKED:
        try:
            res = subprocess.run([found, "-c", "import ticdc_fast"], capture_output=True, text=True,
                                 timeout=20, stdin=subprocess.DEVNULL)
            tail = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])[-1]
            _CHECKED[key] = "" if res.returncode == 0 else tail
        except (OSError, subprocess.TimeoutExpired) as exc:
            _CHECKED[key] = f"{type(exc).__name__}: {exc}"
    return _CHECKED[key] or None


def _is_local(master: str) -> bool:
    return master == "local" or master.startswith(("local[", "local-cluster["))


def _worker_python(spark) -> None:
    """Make Spark's Python workers and data-source planners run an interpreter that has
    ``ticdc_fast``.  With neither ``PYSPARK_PYTHON`` nor ``spark.pyspark.python`` set, on a
    local master: the driver's own (``sys.executable``; Spark's default is the ``python3`` on
    ``PATH``, which need not be it).  An interpreter set on a local master, or Spark's default on
    a cluster (the data sources' planners run beside the driver), is checked on this machine, and
    one that cannot import the package is a ``WorkerPythonError`` naming it and the setting to
    change, before any job runs; one set for a cluster's nodes is theirs, and trusted."""
    import shutil
    import sys

    try:
        sc = spark.sparkContext
        conf = sc.getConf()
    except Exception:  # noqa: BLE001 - Spark Connect: no SparkContext, workers are remote
        return
    configured = conf.get("spark.pyspark.python", None)
    local = _is_local(sc.master)
    if os.environ.get("PYSPARK_PYTHON"):
        setting = f"PYSPARK_PYTHON={os.environ['PYSPARK_PYTHON']}"
    elif configured:
        setting = f"spark.pyspark.python={configured}"
        sc.pythonExec = configured
    elif local:
        sc.pythonExec = sys.executable
        return
    else:
        setting = "neither PYSPARK_PYTHON nor spark.pyspark.python set"
    if not local and (os.environ.get("PYSPARK_PYTHON") or configured):
        return
    python = sc.pythonExec
    found = shutil.which(python)
    if found is not None and os.path.abspath(found) == os.path.abspath(sys.executable):
        return      # (not the real path: a venv's python is a link to an interpreter without it)
    why = _import_problem(python)
    if why is not None:
        raise WorkerPythonError(
            f"Spark's Python workers would run {python} ({setting}), which cannot import ticdc_fast "
            f"({why}): set spark.pyspark.python (or PYSPARK_PYTHON) to an interpreter that has it, "
            f"such as this driver's {sys.executable}")


@contextlib.contextmanager
def _worker_environment(spark):
    """Python functions created inside get workers that run an interpreter with ``ticdc_fast``
    (``_worker_python``) and import the driver's ``ticdc_fast`` (see the module docstring); the
    SparkContext's environment is restored afterwards, so the user's own UDFs keep theirs."""
    _worker_python(spark)
    try:
        env = spark.sparkContext.environment
    except Exception:  # noqa: BLE001 - Spark Connect: no SparkContext, workers are remote
        env = None
    if env is None or not _shadowing_checkout() or "PYTHONSAFEPATH" in env:
        yield
        return
    env["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        env.pop("PYTHONSAFEPATH", None)


def _worker_problem(implementation: str) -> str | None:
    """Why this worker cannot decode with ``implementation`` (None when it can)."""
    if implementation == "cython" and _impl.core is None:
        import ticdc_fast
        return (f"the Spark worker's ticdc_fast ({Path(ticdc_fast.__file__).parent}) cannot load its "
                f"compiled core, which the driver uses: {_impl.CORE_PROBLEM or 'TICDC_FAST_PURE is set in the worker'}. "
                "Pass implementation='python' to ticdc_fast.spark.decode to decode with the "
                "pure-Python twin on purpose")
    return None


def worker_implementations(spark, partitions: int = 2) -> list[dict]:
    """Ask Spark's Python workers what ``decode`` would run in them: one dict per partition with
    ``implementation`` ("cython"/"python"), ``core`` (the extension's path or the reason it is
    missing), ``package`` (the directory ``ticdc_fast`` was imported from) and ``pid``."""
    def probe(batches):
        import ticdc_fast
        from ticdc_fast import _impl as impl
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({
            "implementation": [impl.IMPLEMENTATION],
            "core": [impl.core.__file__ if impl.core is not None else impl.CORE_PROBLEM or "TICDC_FAST_PURE"],
            "package": [str(Path(ticdc_fast.__file__).parent)],
            "pid": [os.getpid()],
        })

    with _worker_environment(spark):
        df = spark.range(0, partitions, 1, partitions).mapInArrow(
            probe, "implementation string, core string, package string, pid bigint")
    return [r.asDict() for r in df.collect()]


class _StatsParam:
    """Spark accumulator arithmetic for ``DecodeStats`` (pickled to the workers by reference)."""

    @staticmethod
    def zero(value):
        from ..policy import DecodeStats
        return DecodeStats()

    @staticmethod
    def addInPlace(a, b):
        return a + b


def decode_stats(spark):
    """An accumulator for ``decode(..., stats=acc)``: after an action, ``acc.value`` is the
    ``DecodeStats`` (messages, rows, skipped, dead_lettered, invalid_utf8_replaced,
    schema_changes_ignored) summed over
    the tasks that ran.  Like every Spark accumulator updated in a transformation, a task that
    is retried adds its counts again; a streaming query's counts grow with each micro-batch."""
    from pyspark.accumulators import AccumulatorParam

    from ..policy import DecodeStats

    class Param(AccumulatorParam):
        zero = staticmethod(_StatsParam.zero)
        addInPlace = staticmethod(_StatsParam.addInPlace)

    return spark.sparkContext.accumulator(DecodeStats(), Param())


def split_dead_letters(df):
    """(good rows, dead letters) of a DataFrame decoded with ``on_error="dead_letter"``: the
    ERROR rows keep ``_error``, ``_raw_key``, ``_raw_value`` and the Kafka columns (``_partition``,
    ``_offset``, ``_topic``, ``_timestamp``, ``_headers`` when present); the good
    rows drop those three dead-letter columns.  Works on streaming DataFrames and inside
    ``foreachBatch``."""
    from pyspark.sql import functions as F

    from ..policy import COL_ERROR, COL_RAW_KEY, COL_RAW_VALUE, OP_ERROR
    is_error = F.col("_op") == F.lit(OP_ERROR)
    good = df.filter(~is_error).drop(COL_ERROR, COL_RAW_KEY, COL_RAW_VALUE)
    kafka = [c for c in df.columns if c in ("_partition", "_offset", "_topic", "_timestamp", "_headers")]
    dead = df.filter(is_error).select(COL_ERROR, COL_RAW_KEY, COL_RAW_VALUE, *kafka)
    return good, dead


def split_tables(df) -> dict:
    """``{"db.table": DataFrame}`` of a DataFrame decoded with ``tables=``: each table's rows with
    the columns its single-table decode has (``_op``, ``_commit_ts``, the typed columns and
    trailer, the Kafka columns); the unlisted tables' generic rows under ``"*"`` when decoded
    with ``unlisted="generic"``.  Dead letters belong to no table: ``split_dead_letters(df)``.  Works on streaming DataFrames and inside ``foreachBatch``
    (where each table is typically written to its own sink)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from ..policy import COL_ERROR
    kafka = [c for c in df.columns if c in ("_partition", "_offset", "_topic", "_timestamp", "_headers")]
    out = {}
    for f in df.schema.fields:
        if isinstance(f.dataType, StructType) and f.name != COL_ERROR:
            col = F.col(f"`{f.name}`")
            inner = [col.getField(g.name).alias(g.name) for g in f.dataType.fields]
            out[f.name] = df.filter(col.isNotNull()).select("_op", "_commit_ts", *inner, *kafka)
    return out


def decode(df, protocol: str, *, table=None, schema=None, tables=None, unlisted: str = "skip",
           implementation: str | None = None, on_error: str = "fail", stats=None, kafka: dict | None = None,
           columns=None, **options):
    """Decode a DataFrame shaped like Spark's Kafka source (``key``, ``value`` binary, ``partition``,
    ``offset``; other columns ignored) with ``mapInArrow``.

    ``protocol``: ``"open"``, ``"simple-json"``, ``"simple-avro"`` or ``"avro"``.  Without
    ``schema`` the output is the generic changelog; with ``table="db.tbl"`` and an Arrow ``schema``
    it is typed, in the Spark-accepted variant of that schema (uint64 → decimal(20,0), DECIMAL(>38)
    → decimal(38,s), TIME → string).  ``schema`` is a pyarrow schema, a ``StructType`` or a DDL
    string.  ``options`` go to the decoder (``timezone``, ``compression``, ``registry``,
    ``old_image=True`` for typed output's ``_before`` struct...).
    Works for batch and streaming DataFrames; ``_partition``/``_offset`` are kept, and the Kafka
    columns ``topic``, ``timestamp`` and ``headers`` pass through as ``_topic``, ``_timestamp``,
    ``_headers`` when the DataFrame has them (with ``partition`` and ``offset``), on every row
    (dead letters and simple-protocol rows released batches later included).

    ``on_error``: ``"fail"`` (default: the task fails with a DecodeError naming the Kafka
    partition and offset), ``"skip"`` or ``"dead_letter"`` (ERROR rows; ``split_dead_letters``
    separates them); see docs/error-handling.md.  Each task logs one line with its counts (logger
    ``ticdc_fast``, in the executor's stderr) and adds them to ``stats``, an accumulator from
    ``decode_stats(spark)``, when given.

    ``schema="auto"`` (every protocol): the driver resolves the table's schema when
    ``decode`` is called — simple: its latest BOOTSTRAP/DDL in the topic, read from the earliest
    offset up to now; Avro: the registry's latest value schema of subject ``<topic>-value`` —
    and decodes with it (earlier DDLs/schema ids are history, later ones a schema change,
    ``on_schema_change``).  ``kafka``: the options of the Kafka source the DataFrame reads
    (``kafka.bootstrap.servers``, ``subscribe``...), which is where the driver looks.  Restarting
    a query with ``schema="auto"`` after ``SchemaChangedError`` picks up the new schema.

    The workers decode with the driver's implementation (the compiled core unless
    ``implementation="python"`` or ``TICDC_FAST_PURE=1``); a worker that cannot load the core
    fails its task with the reason and the fix rather than decode 60–160× slower.

    Many tables of one topic in one pass: ``tables={"db.t1": schema1, "db.t2": schema2}`` (each
    schema as ``schema`` takes it, or None for the simple protocol: found as ``schema="auto"``
    finds it, with ``kafka=``) instead of ``table``/``schema``.  The output is one DataFrame: ``_op``,
    ``_commit_ts``, ``_table`` (``"db.t1"``...), one struct column per table named after it
    (that table's typed columns and trailer, null on other tables' rows), the dead-letter and
    Kafka columns; ``split_tables`` gives a DataFrame per table with the columns the single-table
    decode has.  ``unlisted``: ``"skip"`` (rows of other tables left out, counted in
    ``unlisted_rows``) or ``"generic"`` (kept in the generic layout in a struct column ``"*"``).

    ``columns``: the input's column names (``df.columns``), given so that ``decode`` runs no
    analysis of ``df`` — inside a Spark Declarative Pipelines query function, where analysis is
    refused.  ``schema="auto"`` is then refused (it reads Kafka through the session; DDL strings
    are parsed without one), and the Kafka columns ``topic``/``timestamp``/``headers`` among them
    are taken to have the Kafka source's types.
    """
    if columns is not None:
        _check_no_analysis(columns, schema, tables, kafka)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
    if tables is not None:
        # in the driver (DDL strings need the JVM); a typed query's schema is needed up front
        tables = check_tables(tables, unlisted, table=table, schema=schema,
                              schema_optional=protocol.startswith("simple"))
        options["unlisted"] = unlisted
    elif (table is None) != (schema is None):
        raise ValueError("typed output needs both table= and schema=")
    if tables is not None and None in tables.values():
        tables = _tables_from_stream(protocol, tables, kafka, options)
        kafka = None
    if isinstance(schema, str) and schema == "auto":
        if kafka is None:
            raise ValueError("schema='auto' needs kafka= (the Kafka source's options: where to "
                             "read the table's schema)")
        from .auto import resolve_auto_schema
        schema, fixed = resolve_auto_schema(protocol, table, kafka, options)
        options.update(fixed)
    elif kafka is not None:
        raise ValueError("kafka= is for schema='auto'")
    if schema is not None:
        schema = as_arrow_schema(schema)
    if schema is not None or tables is not None:
        options.setdefault("old_image", True)   # what latest_state needs of a raw key change
    from ..policy import check_on_error
    options["on_error"] = check_on_error(on_error)
    options["implementation"] = _impl.resolve(implementation)
    analyse = columns is None
    given = list(df.columns) if analyse else list(columns)
    columns = [c for c in ("key", "value", "partition", "offset") if c in given]
    if "value" not in columns:
        raise ValueError("the DataFrame needs a 'value' column (and usually 'key', 'partition', 'offset')")
    meta = meta_names(given) if {"partition", "offset"} <= set(columns) else []
    meta_types = _meta_arrow_types(df.schema, meta) if analyse else _kafka_meta_types(meta)
    out_schema = _with_meta_fields(output_arrow_schema(protocol, table, schema, tables, **options), meta_types)
    spark_struct = to_spark_struct(out_schema)
    spec = DecodeSpec(protocol, table, schema, options, out_schema, meta_types, stats, tables=tables)

    def run(batches, _spec=spec):
        return decode_partition(batches, _spec)

    with _worker_environment(df.sparkSession):
        selected = df.select(*columns, *meta)
        if not analyse:
            _names_known(selected, columns + meta)
        return selected.mapInArrow(run, spark_struct)


def _tables_from_stream(protocol, tables: dict, kafka, options) -> dict:
    """``tables={"db.t": None}`` (simple protocol): each such table's schema as ``schema="auto"``
    finds it, on the driver (a query's columns are fixed before it starts)."""
    if kafka is None:
        raise ValueError("tables={'db.t': None}: the schema comes from the stream, found on the "
                         "driver as schema='auto' finds it: give kafka= (the Kafka source's options)")
    from .auto import resolve_auto_schema
    return {name: sch if sch is not None else resolve_auto_schema(protocol, name, kafka, options)[0]
            for name, sch in tables.items()}


def _names_known(selected, names) -> None:
    """Spark Connect's ``mapInArrow`` asks its input for its column names, which analyses the
    plan unless the DataFrame has its schema already: give it one with those names (only the
    names are read there; the types are the Kafka source's)."""
    if getattr(selected, "_cached_schema", "absent") is not None:
        return                                   # classic Spark, or a schema known already
    from pyspark.sql.types import BinaryType, StructField, StructType
    selected._cached_schema = StructType([StructField(n, BinaryType()) for n in names])


class DecodeSpec:
    """What a task needs to decode one input partition (picklable): protocol, typed table and
    schema, decoder options (``on_error``, ``implementation`` resolved on the driver), the output
    Arrow schema, the Arrow types of the Kafka metadata columns to pass through, and the stats
    accumulator; ``claim_check_base``: a resolver for it is made in each task (fsspec
    file systems are not meant to travel between processes)."""

    def __init__(self, protocol, table, schema, options, out_schema, meta_types, stats=None,
                 claim_check_base=None, tables=None):
        self.protocol, self.table, self.schema, self.options = protocol, table, schema, options
        self.tables = tables
        self.out_schema, self.meta_types, self.stats = out_schema, meta_types, stats
        self.claim_check_base = claim_check_base

    def decoder_options(self) -> dict:
        opts = dict(self.options)
        if self.claim_check_base is not None:
            from ..claim_check import fsspec_resolver
            opts["claim_check_resolver"] = fsspec_resolver(self.claim_check_base)
        return opts


def _check_no_analysis(columns, schema, tables, kafka) -> None:
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise TypeError("columns must be the input's column names (a list of str)")
    if kafka is not None or (isinstance(schema, str) and schema == "auto"):
        raise ValueError("with columns= (no analysis) schema='auto' cannot be used: it is read "
                         "through the session")


def _kafka_meta_types(names) -> dict:
    """The Kafka source's types of its metadata columns (``columns=``: the input is not analysed)."""
    known = {"topic": pa.string(), "timestamp": pa.timestamp("us", tz="UTC"),
             "headers": pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))}
    return {n: known[n] for n in names}


def _meta_arrow_types(spark_schema_, names) -> dict:
    if not names:
        return {}
    from pyspark.sql.pandas.types import to_arrow_type
    by = {f.name: f.dataType for f in spark_schema_.fields}
    # TIMESTAMP is an instant: UTC, as the typed decoders write it
    return {n: to_arrow_type(by[n], timezone="UTC") if n == "timestamp" else to_arrow_type(by[n])
            for n in names}


def _with_meta_fields(schema: pa.Schema, meta_types: dict) -> pa.Schema:
    return pa.schema(list(schema) + [pa.field(META_COLUMNS[n], t) for n, t in meta_types.items()],
                     metadata=schema.metadata)


def decode_partition(batches, spec: DecodeSpec):
    """Decode the Kafka-shaped record batches of one input partition: one decoder per topic
    (one in practice: a Kafka input partition is one topic-partition), so simple-protocol schema
    caches and held rows live across the batches, and every row gets its message's Kafka
    metadata.  Yields batches of ``spec.out_schema``; reports the counts when done."""
    problem = _worker_problem(spec.options["implementation"])
    if problem is not None:
        raise RuntimeError(problem)
    opts = spec.decoder_options()
    meta = list(spec.meta_types)
    keep_history = spec.protocol.startswith("simple")
    decoders: dict = {}   # topic (None without metadata) -> (decoder, KafkaMetadataJoin | None)

    def decoder_of(topic):
        got = decoders.get(topic)
        if got is None:
            got = (make_decoder(spec.protocol, spec.table, spec.schema, spec.tables, **opts),
                   KafkaMetadataJoin(meta, keep_history) if meta else None)
            decoders[topic] = got
        return got

    try:
        for b in batches:
            if b.num_rows == 0:
                continue
            for topic, part in _by_topic(b, meta):
                dec, join = decoder_of(topic)
                names = part.schema.names
                keys = part.column(names.index("key")) if "key" in names else None
                values = part.column(names.index("value"))
                parts = part.column(names.index("partition")) if "partition" in names else pa.nulls(part.num_rows, pa.int32())
                offs = part.column(names.index("offset")) if "offset" in names else pa.nulls(part.num_rows, pa.int64())
                if keys is None and spec.protocol == "open":
                    raise ValueError("the open protocol needs the Kafka key")
                if join is not None:
                    join.add(part)
                out = dec.decode(keys, values, partitions=parts, offsets=offs)   # keys=None: no key column
                if isinstance(out, TableBatches):
                    out = stack_batches(out, stacked_schema({k: b.schema for k, b in out.items()}))
                if join is not None:
                    out = join.attach(out, spec.meta_types)
                    if keep_history:
                        join.retain(dec.held_positions())
                yield _conform(out, spec.out_schema)
    finally:
        if decoders:
            from ..policy import DecodeStats
            total = DecodeStats()
            for dec, _ in decoders.values():
                total = total + dec.stats
            _report_task(total, spec.stats)


def _by_topic(batch: pa.RecordBatch, meta):
    """(topic, rows of that topic) of a batch, in order of first appearance."""
    if "topic" not in meta:
        return [(None, batch)]
    topics = batch.column(batch.schema.names.index("topic"))
    uniq = pc.unique(topics).to_pylist()
    if len(uniq) == 1:
        return [(uniq[0], batch)]
    return [(t, batch.filter(pc.fill_null(pc.equal(topics, t), False) if t is not None
                             else pc.is_null(topics))) for t in uniq]


def _report_task(stats, acc) -> None:
    """One log line per task, and the accumulator: what the policy did is never silent."""
    if stats.messages == 0:
        return
    try:
        from pyspark import TaskContext
        ctx = TaskContext.get()
        where = f"stage {ctx.stageId()} partition {ctx.partitionId()}" if ctx else "task"
    except Exception:  # noqa: BLE001 - a log line must not fail the task
        where = "task"
    level = (logging.WARNING if stats.skipped or stats.dead_lettered or stats.schema_changes_ignored
             else logging.INFO)
    logging.getLogger("ticdc_fast").log(
        level, "ticdc_fast decode (%s): %d messages -> %d rows; %d skipped, %d dead-lettered; "
        "%d text values with invalid UTF-8 replaced; %d schema changes ignored", where,
        stats.messages, stats.rows, stats.skipped, stats.dead_lettered, stats.invalid_utf8_replaced,
        stats.schema_changes_ignored)
    if acc is not None:
        acc.add(stats)


def _conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """Cast columns whose Arrow type differs from the declared Spark-accepted type (no-op mostly)."""
    if batch.schema.equals(target, check_metadata=False):
        return batch
    cols = []
    for i, f in enumerate(target):
        col = batch.column(i)
        cols.append(col if col.type == f.type else col.cast(f.type))
    return pa.RecordBatch.from_arrays(cols, schema=target)
