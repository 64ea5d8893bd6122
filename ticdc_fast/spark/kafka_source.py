"""Read Kafka into Spark without the Kafka jar: a Python Data Source over confluent-kafka.

``spark-sql-kafka-0-10`` is not always available (no Maven access, locked-down clusters); this
source gives the same columns as Spark's Kafka source, as Arrow record batches, for batch
(``spark.read``) and streaming (``spark.readStream``) queries::

    from ticdc_fast.spark.kafka_source import register
    register(spark)
    df = (spark.read.format("ticdc_kafka")
          .option("kafka.bootstrap.servers", "host:9092")
          .option("subscribe", "orders,payments")
          .option("startingOffsets", "earliest")        # or "latest", or JSON
          .option("endingOffsets", "latest")            # batch only
          .load())
    # key binary, value binary, topic string, partition int, offset long,
    # timestamp timestamp, timestampType int  [, headers array<struct<key string, value binary>>]

Options (strings, case-insensitive names, as Spark passes them):

``kafka.bootstrap.servers`` (or ``bootstrap.servers``)
    required.
``subscribe`` | ``subscribePattern`` | ``assign``
    exactly one: comma-separated topics, a Python regular expression matched (``re.fullmatch``)
    against the broker's topic names, or JSON ``{"topic": [0, 1]}``.
``startingOffsets``
    ``"earliest"`` (batch default) | ``"latest"`` (streaming default) | JSON
    ``{"topic": {"0": 23, "1": -2}}`` with -2 = earliest, -1 = latest. Partitions the JSON does not
    name take the default. A streaming query restarted from its checkpoint ignores it.
``endingOffsets``
    batch only: ``"latest"`` (default) | JSON as above. The end is exclusive.
``maxOffsetsPerTrigger``
    streaming: at most this many records per micro-batch, split over the partitions in
    proportion to their backlog (the split sums to exactly the limit). Honoured by
    ``trigger(availableNow=True)`` too, which then runs several micro-batches up to the offsets
    that were the latest when the query started.
``failOnDataLoss``
    ``"true"`` (default): a range whose records were deleted (offset out of range) fails the
    task, and a partition that now ends before the query's offset (topic re-created, log lost)
    fails the micro-batch; ``"false"``: read from the earliest record still there, and go on from
    a partition's new end (records below it are not read). tests/test_spark_faults.py checks the
    second case on the test broker; the first needs deleted records, which Tansu cannot make.
``includeHeaders``
    ``"true"`` adds ``headers array<struct<key:string, value:binary>>``.
``kafkaConsumer.pollTimeoutMs``
    how long a task / the driver waits without progress before failing (default 120000).
``arrowBatchSize``
    records per yielded Arrow record batch (default 10000).
``groupIdPrefix``
    ``group.id`` used by the (assign-only, never committing) consumers; default
    ``ticdc_fast-kafka-source``. ``kafka.group.id`` sets it outright.
``kafka.*``
    passed to the librdkafka consumer with the prefix removed (``kafka.security.protocol``,
    ``kafka.sasl.mechanism``, ``kafka.fetch.max.bytes``, ...). Forced: ``enable.auto.commit=false``,
    ``enable.partition.eof=true``, ``auto.offset.reset`` (from ``failOnDataLoss``).

Offsets of a streaming query are ``{"topic/partition": next offset}`` (JSON in the checkpoint's
offset log). Spark keeps them: ``commit()`` does not commit to Kafka, so a query restarted from
its checkpoint neither loses nor repeats records.

End offsets are not taken from ListOffsets ("high watermark") alone: some Kafka-compatible
brokers (Tansu 0.6) answer it wrongly after multi-record produce requests. The driver assigns a
consumer at the ListOffsets answer and takes the high watermark of the first Fetch response
(``get_watermark_offsets(cached=True)``) or the end-of-partition event, whichever it sees: one
fetch round trip per partition, right on every broker, and a consistent snapshot even while
producers keep writing. Tasks read ``[start, end)`` with ``assign()`` (no consumer group, no
rebalance) and stop at offset ``end - 1`` (or at end of partition past ``end``: compacted or
transactional topics have offset gaps).
"""
from __future__ import annotations

import json
import re
import time
from typing import Any, Iterator

import pyarrow as pa
from pyspark.sql.datasource import (DataSource, DataSourceReader, DataSourceStreamReader,
                                    InputPartition)
from pyspark.sql.types import (ArrayType, BinaryType, IntegerType, LongType, StringType,
                               StructField, StructType, TimestampType)

try:  # pyspark >= 4.2
    from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxRows,
                                                  ReadMinRows, SupportsTriggerAvailableNow)
except ImportError:  # pragma: no cover - older pyspark: no admission control, no availableNow
    ReadLimit = ReadAllAvailable = ReadMaxRows = ReadMinRows = None  # type: ignore[assignment]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        pass

__all__ = ["KafkaDataSource", "KafkaInputPartition", "KafkaBatchReader", "KafkaStreamReader",
           "KAFKA_SCHEMA", "KAFKA_SCHEMA_WITH_HEADERS", "register"]

EARLIEST = -2
LATEST = -1

HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()),
                                     StructField("value", BinaryType())]))
KAFKA_SCHEMA = StructType([
    StructField("key", BinaryType()),
    StructField("value", BinaryType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    StructField("timestamp", TimestampType()),
    StructField("timestampType", IntegerType()),
])
KAFKA_SCHEMA_WITH_HEADERS = StructType(KAFKA_SCHEMA.fields + [StructField("headers", HEADERS_TYPE)])

# confluent-kafka TIMESTAMP_NOT_AVAILABLE / CREATE_TIME / LOG_APPEND_TIME -> Kafka's
# TimestampType.id as Spark's source reports it (-1 / 0 / 1)
_TS_TYPE = {0: -1, 1: 0, 2: 1}
_DEFAULT_GROUP_PREFIX = "ticdc_fast-kafka-source"


# ====================================================================================== options
def _bool(value: Any, name: str) -> bool:
    s = str(value).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise ValueError(f"option {name!r} must be true or false, got {value!r}")


def _positive_int(value: Any, name: str) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"option {name!r} must be a positive integer, got {value!r}") from None
    if n <= 0:
        raise ValueError(f"option {name!r} must be a positive integer, got {value!r}")
    return n


class _Options:
    """The parsed, picklable options of one source."""

    def __init__(self, options) -> None:
        opts = {str(k).lower(): str(v) for k, v in dict(options or {}).items()}
        bootstrap = opts.get("kafka.bootstrap.servers") or opts.get("bootstrap.servers")
        if not bootstrap:
            raise ValueError("ticdc_kafka: option 'kafka.bootstrap.servers' is required")
        conf: dict[str, str] = {}
        for k, v in opts.items():
            if k.startswith("kafka."):
                conf[k[len("kafka."):]] = v
        conf["bootstrap.servers"] = bootstrap
        self.group_id = conf.pop("group.id", None) or (
            opts.get("groupidprefix", _DEFAULT_GROUP_PREFIX))
        for forced in ("enable.auto.commit", "enable.partition.eof", "auto.offset.reset"):
            conf.pop(forced, None)
        self.consumer_conf = conf

        modes = [m for m in ("subscribe", "subscribepattern", "assign") if opts.get(m)]
        if len(modes) != 1:
            raise ValueError("ticdc_kafka: give exactly one of the options 'subscribe', "
                             f"'subscribePattern', 'assign' (got {modes or 'none'})")
        self.mode = modes[0]
        self.topics: list[str] = []
        self.pattern: str | None = None
        self.assigned: dict[str, list[int]] = {}
        if self.mode == "subscribe":
            self.topics = [t.strip() for t in opts["subscribe"].split(",") if t.strip()]
            if not self.topics:
                raise ValueError("ticdc_kafka: option 'subscribe' names no topic")
        elif self.mode == "subscribepattern":
            self.pattern = opts["subscribepattern"]
            re.compile(self.pattern)
        else:
            try:
                assigned = json.loads(opts["assign"])
                self.assigned = {str(t): sorted(int(p) for p in ps) for t, ps in assigned.items()}
            except (ValueError, TypeError, AttributeError) as exc:
                raise ValueError("ticdc_kafka: option 'assign' must be JSON like "
                                 f'{{"topic": [0, 1]}}, got {opts["assign"]!r}') from exc

        self.starting = opts.get("startingoffsets")
        self.ending = opts.get("endingoffsets")
        for name, spec in (("startingOffsets", self.starting), ("endingOffsets", self.ending)):
            if spec is not None:
                _parse_offsets_spec(spec, name)  # fail early, on the driver
        mopt = opts.get("maxoffsetspertrigger")
        self.max_offsets_per_trigger = (
            _positive_int(mopt, "maxOffsetsPerTrigger") if mopt is not None else None)
        self.fail_on_data_loss = _bool(opts.get("failondataloss", "true"), "failOnDataLoss")
        self.include_headers = _bool(opts.get("includeheaders", "false"), "includeHeaders")
        self.poll_timeout = _positive_int(opts.get("kafkaconsumer.polltimeoutms", "120000"),
                                          "kafkaConsumer.pollTimeoutMs") / 1000.0
        self.batch_size = _positive_int(opts.get("arrowbatchsize", "10000"), "arrowBatchSize")

    def consumer(self, **overrides):
        from confluent_kafka import Consumer

        # fetch.queue.backoff.ms: librdkafka's default (1000 ms) stalls a fast reader for a
        # second whenever its local queue passes queued.min.messages (measured: 200k records
        # 1.25 s with it, 0.3 s with 5 ms).
        conf: dict[str, Any] = {"fetch.wait.max.ms": 100, "fetch.queue.backoff.ms": 5,
                                "group.id": self.group_id}
        conf.update(self.consumer_conf)
        conf.update({"enable.auto.commit": False, "enable.partition.eof": True,
                     "auto.offset.reset": "error" if self.fail_on_data_loss else "earliest"})
        conf.update(overrides)
        return Consumer(conf)


def _parse_offsets_spec(spec: str, name: str):
    """``"earliest"`` / ``"latest"`` / ``{topic: {partition: offset}}`` (ints)."""
    s = spec.strip()
    if s.lower() in ("earliest", "latest"):
        return s.lower()
    try:
        raw = json.loads(s)
        if not isinstance(raw, dict):
            raise TypeError
        out: dict[tuple[str, int], int] = {}
        for topic, parts in raw.items():
            if not isinstance(parts, dict):
                raise TypeError
            for p, off in parts.items():
                if isinstance(off, bool) or not isinstance(off, int) or off < -2:
                    raise TypeError
                out[(str(topic), int(p))] = off
        return out
    except (ValueError, TypeError) as exc:
        raise ValueError(f"ticdc_kafka: option {name!r} must be 'earliest', 'latest' or JSON like "
                         f'{{"topic": {{"0": 23, "1": -2}}}}, got {spec!r}') from exc


# ====================================================================================== offsets
def _okey(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


def _split(key: str) -> tuple[str, int]:
    topic, _, p = key.rpartition("/")
    return topic, int(p)


def _sorted_offsets(d: dict[tuple[str, int], int]) -> dict[str, int]:
    """JSON-friendly ``{"topic/partition": offset}`` in a deterministic order."""
    return {_okey(t, p): int(d[(t, p)]) for t, p in sorted(d)}


class _OffsetProbe:
    """Driver-side metadata and offset look-ups (one consumer, created lazily)."""

    def __init__(self, opts: _Options) -> None:
        self.opts = opts
        self._consumer = None

    @property
    def consumer(self):
        if self._consumer is None:
            # auto.offset.reset=latest: an assign past the end (truncated log) lands at the end
            self._consumer = self.opts.consumer(**{"auto.offset.reset": "latest",
                                                   "fetch.wait.max.ms": 10})
        return self._consumer

    def close(self) -> None:
        c, self._consumer = self._consumer, None
        if c is not None:
            c.close()

    def topic_partitions(self, *, strict: bool) -> list[tuple[str, int]]:
        """The subscribed (topic, partition)s that exist now. ``strict``: a missing topic or
        assigned partition is an error (else it is skipped: a stream waits for it)."""
        md = self.consumer.list_topics(timeout=self.opts.poll_timeout)
        existing = {name: sorted(t.partitions) for name, t in md.topics.items()
                    if t.error is None and t.partitions}
        o = self.opts
        out: list[tuple[str, int]] = []
        missing: list[str] = []
        if o.mode == "subscribe":
            for t in o.topics:
                if t in existing:
                    out += [(t, p) for p in existing[t]]
                else:
                    missing.append(t)
        elif o.mode == "subscribepattern":
            rx = re.compile(o.pattern)
            for t in sorted(existing):
                if rx.fullmatch(t) and not t.startswith("__"):
                    out += [(t, p) for p in existing[t]]
        else:
            for t, ps in o.assigned.items():
                for p in ps:
                    if p in existing.get(t, ()):
                        out.append((t, p))
                    else:
                        missing.append(f"{t}/{p}")
        if missing and strict:
            raise ValueError(f"ticdc_kafka: not found on {o.consumer_conf['bootstrap.servers']}: "
                             f"{', '.join(missing)}")
        return sorted(set(out))

    def earliest(self, tps) -> dict[tuple[str, int], int]:
        from confluent_kafka import TopicPartition

        return {(t, p): self.consumer.get_watermark_offsets(
                    TopicPartition(t, p), timeout=self.opts.poll_timeout)[0] for t, p in tps}

    def latest(self, tps) -> dict[tuple[str, int], int]:
        """The true end (high watermark) of each partition.

        ListOffsets gives a lower bound (exact on Apache Kafka, too low on Tansu after a
        multi-record produce). Assign at OFFSET_END (librdkafka resolves it with ListOffsets,
        one request per broker) and wait for one Fetch response per partition: its high
        watermark (``get_watermark_offsets(cached=True)``) or the end-of-partition event is the
        answer."""
        from confluent_kafka import OFFSET_END, KafkaError, TopicPartition

        tps = list(tps)
        if not tps:
            return {}
        c = self.consumer
        timeout = self.opts.poll_timeout
        listed = set(tps)
        c.assign([TopicPartition(t, p, OFFSET_END) for t, p in tps])
        try:
            ends: dict[tuple[str, int], int] = {}
            deadline = time.monotonic() + timeout
            last_error = None
            while len(ends) < len(tps):
                if time.monotonic() > deadline:
                    missing = sorted(set(tps) - set(ends))
                    raise TimeoutError(
                        f"ticdc_kafka: no fetch response within {timeout} s for "
                        f"{', '.join(_okey(*tp) for tp in missing)} (last error: {last_error})")
                m = c.poll(0.1)  # returns at the first event (consume() waits for N or timeout)
                if m is not None:
                    tp = (m.topic(), m.partition())
                    err = m.error()
                    if err is not None and err.code() != KafkaError._PARTITION_EOF:
                        if err.fatal():
                            raise _kafka_exception(err)
                        last_error = err
                    elif tp in listed and tp not in ends:
                        seen = m.offset() if err is not None else m.offset() + 1
                        cached = c.get_watermark_offsets(TopicPartition(*tp), cached=True)[1]
                        ends[tp] = max(seen, cached)
            return ends
        finally:
            c.unassign()

    def resolve(self, spec, tps, default: str, name: str) -> dict[tuple[str, int], int]:
        """Offsets for ``tps`` from an offsets spec (parsed or not); -2/-1 resolved."""
        if spec is None:
            spec = default
        if isinstance(spec, str):
            spec = _parse_offsets_spec(spec, name)
        if isinstance(spec, str):
            wanted = {tp: (EARLIEST if spec == "earliest" else LATEST) for tp in tps}
        else:
            unknown = sorted(set(spec) - set(tps))
            if unknown:
                raise ValueError(f"ticdc_kafka: {name} names partitions that are not subscribed "
                                 f"or do not exist: {', '.join(_okey(*tp) for tp in unknown)}")
            dflt = EARLIEST if default == "earliest" else LATEST
            wanted = {tp: spec.get(tp, dflt) for tp in tps}
        need_lo = [tp for tp, v in wanted.items() if v == EARLIEST]
        need_hi = [tp for tp, v in wanted.items() if v == LATEST]
        lo = self.earliest(need_lo)
        hi = self.latest(need_hi)
        return {tp: (lo[tp] if v == EARLIEST else hi[tp] if v == LATEST else v)
                for tp, v in wanted.items()}


def _kafka_exception(err):
    from confluent_kafka import KafkaException

    return KafkaException(err)


# ====================================================================================== reading
class KafkaInputPartition(InputPartition):
    """Records ``[start, end)`` of one topic-partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end

    def __repr__(self) -> str:
        return f"KafkaInputPartition({self.topic}/{self.partition} [{self.start}, {self.end}))"


def _check_schema(schema: StructType) -> StructType:
    known = {f.name: f.dataType for f in KAFKA_SCHEMA_WITH_HEADERS.fields}
    for f in schema.fields:
        if f.name not in known:
            raise ValueError(f"ticdc_kafka: unknown column {f.name!r}; the columns are "
                             f"{', '.join(known)}")
        if f.dataType != known[f.name]:
            raise ValueError(f"ticdc_kafka: column {f.name!r} is {known[f.name].simpleString()}, "
                             f"not {f.dataType.simpleString()}")
    return schema


def _arrow_schema(schema: StructType) -> pa.Schema:
    # Exactly what pyspark checks the first yielded batch against.
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


# Kafka errors that end a task: the range cannot be read by waiting. Others (transport errors,
# UNKNOWN_TOPIC_OR_PART while metadata propagates, ...) are retried until pollTimeoutMs.
_FATAL_CODES: frozenset | None = None


def _fatal_codes() -> frozenset:
    global _FATAL_CODES
    if _FATAL_CODES is None:
        from confluent_kafka import KafkaError as E

        _FATAL_CODES = frozenset(getattr(E, n) for n in (
            "_AUTO_OFFSET_RESET", "OFFSET_OUT_OF_RANGE", "TOPIC_AUTHORIZATION_FAILED",
            "_INVALID_ARG", "_SSL", "_AUTHENTICATION", "SASL_AUTHENTICATION_FAILED")
            if hasattr(E, n))
    return _FATAL_CODES


def read_range(opts: _Options, schema: StructType, topic: str, partition: int, start: int,
               end: int) -> Iterator[pa.RecordBatch]:
    """Records ``[start, end)`` of ``topic/partition`` as record batches of ``schema``."""
    if start >= end:
        return
    from confluent_kafka import KafkaError, TopicPartition

    arrow_schema = _arrow_schema(schema)
    names = schema.fieldNames()
    want_headers = "headers" in names
    batch_size = opts.batch_size
    c = opts.consumer()
    try:
        c.assign([TopicPartition(topic, partition, start)])
        keys: list = []
        values: list = []
        offsets: list = []
        stamps: list = []
        stypes: list = []
        headers: list = []
        nxt = start
        deadline = time.monotonic() + opts.poll_timeout
        last_error = None
        fatal = _fatal_codes()
        while nxt < end:
            room = batch_size - len(offsets)  # batches hold exactly arrowBatchSize records
            msgs = c.consume(num_messages=max(1, min(room, end - nxt, 100_000)), timeout=0.5)
            before = nxt
            for m in msgs:
                err = m.error()
                if err is not None:
                    code = err.code()
                    if code == KafkaError._PARTITION_EOF:
                        if m.offset() >= end:  # trailing offset gap (compaction, txn marker)
                            nxt = end
                        else:  # the broker says the log ends before `end`: keep waiting
                            last_error = f"end of partition at offset {m.offset()}"
                        continue
                    if code in fatal or err.fatal():
                        if code in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                            raise RuntimeError(
                                f"ticdc_kafka: {topic}/{partition}: offsets [{nxt}, {end}) are "
                                f"out of range (deleted by retention?): {err.str()}. Set "
                                "failOnDataLoss=false to read from the earliest record left.")
                        raise _kafka_exception(err)
                    last_error = err
                    continue
                o = m.offset()
                if o >= end:
                    nxt = end
                    break
                if o < nxt:
                    continue
                keys.append(m.key())
                values.append(m.value())
                offsets.append(o)
                ts_type, ts = m.timestamp()
                stypes.append(_TS_TYPE.get(ts_type, -1))
                stamps.append(ts * 1000 if ts_type != 0 and ts >= 0 else None)
                if want_headers:
                    h = m.headers()
                    headers.append(None if h is None else
                                   [{"key": k, "value": v} for k, v in h])
                nxt = o + 1
            if nxt != before:
                deadline = time.monotonic() + opts.poll_timeout
            elif time.monotonic() > deadline:
                raise TimeoutError(
                    f"ticdc_kafka: {topic}/{partition}: no record past offset {nxt - 1} within "
                    f"{opts.poll_timeout} s; expected records up to {end - 1} "
                    f"(last error: {last_error})")
            if len(offsets) >= batch_size:
                yield _to_batch(arrow_schema, names, topic, partition, keys, values, offsets,
                                stamps, stypes, headers)
                keys, values, offsets, stamps, stypes, headers = [], [], [], [], [], []
        if offsets:
            yield _to_batch(arrow_schema, names, topic, partition, keys, values, offsets, stamps,
                            stypes, headers)
    finally:
        c.close()


def _to_batch(arrow_schema: pa.Schema, names, topic, partition, keys, values, offsets, stamps,
              stypes, headers) -> pa.RecordBatch:
    n = len(offsets)
    cols = {
        "key": lambda t: pa.array(keys, type=t),
        "value": lambda t: pa.array(values, type=t),
        "topic": lambda t: pa.array([topic] * n, type=t),
        "partition": lambda t: pa.array([partition] * n, type=t),
        "offset": lambda t: pa.array(offsets, type=t),
        "timestamp": lambda t: pa.array(stamps, type=t),
        "timestampType": lambda t: pa.array(stypes, type=t),
        "headers": lambda t: pa.array(headers, type=t),
    }
    arrays = [cols[name](arrow_schema.field(i).type) for i, name in enumerate(names)]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


# ====================================================================================== batch
class KafkaBatchReader(DataSourceReader):
    """``spark.read``: one input partition per topic-partition with records in
    ``[startingOffsets, endingOffsets)``, resolved once, when Spark plans the scan."""

    def __init__(self, opts: _Options, schema: StructType) -> None:
        self.opts = opts
        self.schema = schema

    def partitions(self):
        probe = _OffsetProbe(self.opts)
        try:
            tps = probe.topic_partitions(strict=True)
            start = probe.resolve(self.opts.starting, tps, "earliest", "startingOffsets")
            end = probe.resolve(self.opts.ending, tps, "latest", "endingOffsets")
        finally:
            probe.close()
        parts = []
        for tp in tps:
            s, e = start[tp], end[tp]
            if s > e:
                raise ValueError(f"ticdc_kafka: {_okey(*tp)}: starting offset {s} is after the "
                                 f"ending offset {e}")
            if s < e:
                parts.append(KafkaInputPartition(tp[0], tp[1], s, e))
        return parts

    def read(self, partition):
        if not isinstance(partition, KafkaInputPartition):  # Spark's placeholder: no records
            return iter(())
        return read_range(self.opts, self.schema, partition.topic, partition.partition,
                          partition.start, partition.end)


# ====================================================================================== streaming
class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream``: offsets ``{"topic/partition": next offset}``.

    A partition that appears while the query runs (new topic for a pattern, partitions added)
    enters the offsets at its earliest offset with an empty range in that micro-batch, so its
    start is in the offset log before any of its records are read."""

    def __init__(self, opts: _Options, schema: StructType) -> None:
        self.opts = opts
        self.schema = schema
        self._probe: _OffsetProbe | None = None
        self._target: dict[str, int] | None = None  # Trigger.AvailableNow: the offsets to reach
        self._latest: dict[str, int] | None = None
        self._last_end: dict[str, int] | None = None  # pyspark < 4.2 (latestOffset() without args)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_probe"] = None
        return state

    @property
    def probe(self) -> _OffsetProbe:
        if self._probe is None:
            self._probe = _OffsetProbe(self.opts)
        return self._probe

    def _now_latest(self) -> dict[str, int]:
        probe = self.probe
        return _sorted_offsets(probe.latest(probe.topic_partitions(strict=False)))

    def initialOffset(self) -> dict:
        probe = self.probe
        tps = probe.topic_partitions(strict=self.opts.mode == "assign")
        return _sorted_offsets(probe.resolve(self.opts.starting, tps, "latest", "startingOffsets"))

    def getDefaultReadLimit(self):
        if self.opts.max_offsets_per_trigger is not None and ReadMaxRows is not None:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._now_latest()

    def reportLatestOffset(self):
        return self._latest

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:
        if start is None:  # pyspark < 4.2
            start = self._last_end or {}
            if self.opts.max_offsets_per_trigger is not None and ReadMaxRows is not None:
                limit = ReadMaxRows(self.opts.max_offsets_per_trigger)
        latest = dict(self._target) if self._target is not None else self._now_latest()
        self._latest = latest
        start_tp = {_split(k): int(v) for k, v in start.items()}
        latest_tp = {_split(k): int(v) for k, v in latest.items()}
        end = dict(start_tp)
        new = [tp for tp in latest_tp if tp not in start_tp]
        if new:
            end.update(self.probe.earliest(new))
        avail: dict[tuple[str, int], int] = {}
        for tp, s in start_tp.items():
            if tp not in latest_tp:
                continue  # vanished (topic deleted): keep its offset
            hi = latest_tp[tp]
            if hi < s:
                if self.opts.fail_on_data_loss:
                    raise RuntimeError(
                        f"ticdc_kafka: {_okey(*tp)}: the partition now ends at {hi}, before the "
                        f"query's offset {s} (topic deleted and re-created?). Set "
                        "failOnDataLoss=false to go on from the new end.")
                end[tp] = hi
            elif hi > s:
                avail[tp] = hi - s
        for tp, n in _apply_limit(avail, limit).items():
            end[tp] = start_tp[tp] + n
        out = _sorted_offsets(end)
        self._last_end = out
        return out

    def partitions(self, start: dict, end: dict):
        parts = []
        for k, e in end.items():
            s = start.get(k)
            if s is None or int(e) <= int(s):
                continue
            t, p = _split(k)
            parts.append(KafkaInputPartition(t, p, int(s), int(e)))
        return parts

    def read(self, partition):
        return read_range(self.opts, self.schema, partition.topic, partition.partition,
                          partition.start, partition.end)

    def commit(self, end: dict) -> None:
        """Nothing to do: Spark's checkpoint holds the offsets; no consumer group is used."""

    def stop(self) -> None:
        if self._probe is not None:
            self._probe.close()
            self._probe = None


def _apply_limit(avail: dict, limit) -> dict:
    """How many records of each partition's backlog to take under ``limit``.

    ``ReadMaxRows(n)``: shares proportional to the backlogs, rounded down, the remainder going
    to the largest fractions, so the shares sum to exactly ``min(n, total)``.
    ``ReadMinRows(n)``: nothing unless at least n records are waiting. Anything else: all."""
    total = sum(avail.values())
    if ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
        n = int(limit.max_rows)
        if total <= n:
            return dict(avail)
        shares = {tp: (a * n) // total for tp, a in avail.items()}
        rest = n - sum(shares.values())
        order = sorted(avail, key=lambda tp: (-((avail[tp] * n) % total), tp))
        for tp in order[:rest]:
            shares[tp] += 1
        return {tp: s for tp, s in shares.items() if s}
    if ReadMinRows is not None and isinstance(limit, ReadMinRows):
        return dict(avail) if total >= int(limit.min_rows) else {}
    return dict(avail)


# ====================================================================================== source
class KafkaDataSource(DataSource):
    """``format("ticdc_kafka")``: Kafka records with the columns of Spark's Kafka source."""

    @classmethod
    def name(cls) -> str:
        return "ticdc_kafka"

    def _opts(self) -> _Options:
        return _Options(self.options)

    def schema(self):
        include = _bool(dict((str(k).lower(), v) for k, v in dict(self.options).items())
                        .get("includeheaders", "false"), "includeHeaders")
        return KAFKA_SCHEMA_WITH_HEADERS if include else KAFKA_SCHEMA

    def reader(self, schema: StructType) -> KafkaBatchReader:
        return KafkaBatchReader(self._opts(), _check_schema(schema))

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(self._opts(), _check_schema(schema))


def register(spark) -> None:
    """``spark.dataSource.register(KafkaDataSource)``: enables ``format("ticdc_kafka")``."""
    spark.dataSource.register(KafkaDataSource)
