"""What ``decode`` does with a Kafka message it cannot decode: the error policy every decoder
shares (``on_error="fail"|"skip"|"dead_letter"``), and the counts that make it visible.

The unit is the Kafka message.  With ``skip`` or ``dead_letter`` a batch that fails at message
``i`` is decoded again up to ``i`` (each decoder's ``decode`` is all-or-nothing, state included),
message ``i`` is set aside whole, and decoding resumes after it.  Clean input therefore takes the
same single pass as ``fail``; each bad message costs one extra pass over the part of the batch
before it, never more (each stretch of good messages is decoded at most twice).

Not every ``DecodeError`` is about a message.  ``UnavailableError`` (registry or claim-check store
unreachable), ``SchemaChangedError`` (the typed table's schema changed under the query) and errors
tied to no message (a bound on held rows, a key/value count mismatch) always raise: skipping them
would lose messages that are fine.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, fields

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from . import _constants as C
from .errors import DecodeError, SchemaChangedError, UnavailableError
from .tables import DEAD_LETTERS, TableBatches

ON_ERROR = ("fail", "skip", "dead_letter")
OP_ERROR = "ERROR"
COL_ERROR = "_error"
COL_RAW_KEY = "_raw_key"
COL_RAW_VALUE = "_raw_value"

ERROR_TYPE = pa.struct([
    pa.field("reason", pa.string()),
    pa.field("message", pa.string()),      # the DecodeError's full text
    pa.field("message_index", pa.int64()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("part", pa.string()),
    pa.field("byte_offset", pa.int64()),
    pa.field("column", pa.string()),
])
DEAD_LETTER_FIELDS = [
    pa.field(COL_ERROR, ERROR_TYPE),
    pa.field(COL_RAW_KEY, pa.binary()),
    pa.field(COL_RAW_VALUE, pa.binary()),
]

log = logging.getLogger("ticdc_fast")


def check_on_error(on_error: str) -> str:
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(map(repr, ON_ERROR))}, not {on_error!r}")
    return on_error


@dataclass
class DecodeStats:
    """Counts over a decoder's life (``decoder.stats``); ``messages`` includes bad ones."""
    messages: int = 0
    rows: int = 0                   # output rows, dead letters not included
    skipped: int = 0                # bad messages left out (on_error="skip")
    dead_lettered: int = 0          # bad messages given as ERROR rows (on_error="dead_letter")
    invalid_utf8_replaced: int = 0  # text values whose invalid UTF-8 became U+FFFD
    unlisted_rows: int = 0          # tables={...}, unlisted="skip": rows of tables not listed
    schema_changes_ignored: int = 0  # typed table's schema versions unlike the target (on_schema_change="ignore")

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __add__(self, other: "DecodeStats") -> "DecodeStats":
        return DecodeStats(**{k: v + getattr(other, k) for k, v in self.as_dict().items()})

    def __sub__(self, other: "DecodeStats") -> "DecodeStats":
        return DecodeStats(**{k: v - getattr(other, k) for k, v in self.as_dict().items()})


@dataclass
class BadMessage:
    """A message set aside by the policy: its error and its bytes."""
    error: DecodeError
    key: bytes | None
    value: bytes | None
    partition: int | None
    offset: int | None


def dead_letter_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every column nullable but ``_op`` (an ERROR row has nothing else), and
    the ``_error``/``_raw_key``/``_raw_value`` columns before the Kafka columns."""
    kafka = [f for f in schema if f.name in (C.COL_PARTITION, C.COL_OFFSET)]
    body = [f if f.name == C.COL_OP else f.with_nullable(True)
            for f in schema if f.name not in (C.COL_PARTITION, C.COL_OFFSET)]
    return pa.schema(body + DEAD_LETTER_FIELDS + kafka, metadata=schema.metadata)


def dead_letters_schema(partitions: bool = False, offsets: bool = False) -> pa.Schema:
    """The ``DEAD_LETTERS`` batch of a multi-table decode: ``_op``, the dead-letter columns and
    the Kafka columns asked for."""
    from ._frontend import with_kafka_fields
    return with_kafka_fields([pa.field(C.COL_OP, pa.string(), nullable=False)] + DEAD_LETTER_FIELDS,
                             partitions=partitions, offsets=offsets)


def _item(seq, i):
    if seq is None:
        return None
    v = seq[i]
    if hasattr(v, "as_py"):
        v = v.as_py()
    return bytes(v) if isinstance(v, (bytearray, memoryview)) else v


def as_dead_letter_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A batch decoded without dead letters in the layout of one with them."""
    return _as_dead_letter_schema(batch, dead_letter_schema(batch.schema))


def _slice(seq, start, stop):
    if seq is None:
        return None
    if isinstance(seq, (pa.Array, pa.ChunkedArray)):
        return seq.slice(start, stop - start)
    return seq[start:stop]


class ErrorPolicy:
    """Runs a decoder's all-or-nothing batch decode under ``on_error``.

    ``unattributed(exc)`` (optional, from the decoder) turns an error that names no message of
    this batch into the ``BadMessage`` it is about (a held simple-protocol message from an earlier
    batch) after removing it from the decoder's state, or returns None: the error then raises."""

    def __init__(self, on_error: str, stats: DecodeStats, unattributed=None):
        self.on_error = check_on_error(on_error)
        self.stats = stats
        self._unattributed = unattributed

    def output_schema(self, schema: pa.Schema) -> pa.Schema:
        return dead_letter_schema(schema) if self.on_error == "dead_letter" else schema

    def output_schemas(self, schemas: dict) -> dict:
        """A multi-table decode's ``{key: schema}`` (each as decoded), with ``DEAD_LETTERS``
        added under ``dead_letter``."""
        out = dict(schemas)
        if self.on_error == "dead_letter":
            names = set(next(iter(schemas.values())).names)
            out[DEAD_LETTERS] = dead_letters_schema(C.COL_PARTITION in names, C.COL_OFFSET in names)
        return out

    def run(self, decode_batch, keys, values, partitions, offsets) -> pa.RecordBatch:
        n = len(values)
        if self.on_error == "fail" or n == 0:
            out = decode_batch(keys, values, partitions, offsets)
            self.stats.messages += n
            self.stats.rows += out.num_rows
            if isinstance(out, TableBatches) and self.on_error == "dead_letter":
                out = self._assemble_tables([out], [])    # the same keys as any other batch
            return out
        pieces: list = []        # RecordBatches and BadMessages, in message order
        start = 0
        while start < n:
            stop, failed = n, None   # failed: (error, index) of the message that ends [start, stop)
            while True:
                try:
                    out = decode_batch(_slice(keys, start, stop), _slice(values, start, stop),
                                       _slice(partitions, start, stop), _slice(offsets, start, stop))
                except (UnavailableError, SchemaChangedError) as exc:
                    if exc.message_index is not None:
                        exc.message_index += start
                        exc.args = (exc._text(),)
                    raise
                except DecodeError as exc:
                    i = exc.message_index
                    if i is None:
                        bad = self._unattributed(exc) if self._unattributed is not None else None
                        if bad is None:
                            raise
                        pieces.append(bad)   # the decoder no longer holds it: same stretch again
                        continue
                    if not 0 <= i < stop - start:
                        raise
                    failed = (exc, start + i)
                    if i == 0:
                        break
                    stop = start + i         # the good part before it first
                    continue
                pieces.append(out)
                break
            if failed is None:
                break
            exc, i = failed
            pieces.append(self._bad(exc, i, keys, values, partitions, offsets))
            start = i + 1
        return self._assemble(pieces, n, decode_batch, keys, values, partitions, offsets)

    def _bad(self, exc: DecodeError, i: int, keys, values, partitions, offsets) -> BadMessage:
        exc.message_index = i
        partition, offset = _item(partitions, i), _item(offsets, i)
        if partition is not None or offset is not None:
            exc.at_kafka(partition, offset)
        else:
            exc.args = (exc._text(),)
        return BadMessage(exc, _item(keys, i), _item(values, i), partition, offset)

    def _assemble(self, pieces, n, decode_batch, keys, values, partitions, offsets) -> pa.RecordBatch:
        good = [p for p in pieces if not isinstance(p, BadMessage)]
        bad = [p for p in pieces if isinstance(p, BadMessage)]
        if not good:   # every message was bad: an empty batch gives the schema
            good = [decode_batch(_slice(keys, 0, 0), _slice(values, 0, 0),
                                 _slice(partitions, 0, 0), _slice(offsets, 0, 0))]
            pieces = good + pieces
        stats = self.stats
        stats.messages += n
        stats.rows += sum(b.num_rows for b in good)
        for b in bad:
            log.warning("%s message: %s", "skipped" if self.on_error == "skip" else "dead-lettered", b.error)
        if isinstance(good[0], TableBatches):
            return self._assemble_tables(good, bad)
        if self.on_error == "skip":
            stats.skipped += len(bad)
            return good[0] if len(good) == 1 else _concat(good, good[0].schema)
        stats.dead_lettered += len(bad)
        schema = dead_letter_schema(good[0].schema)
        return _concat([_as_dead_letter_schema(p, schema) if isinstance(p, pa.RecordBatch)
                        else _dead_letter_row(p, schema) for p in pieces], schema)


    def _assemble_tables(self, good: list, bad: list) -> TableBatches:
        """Multi-table pieces: each table's batches joined; dead letters under their own key."""
        out = TableBatches((key, _concat([g[key] for g in good], good[0][key].schema)) for key in good[0])
        if self.on_error == "skip":
            self.stats.skipped += len(bad)
            return out
        self.stats.dead_lettered += len(bad)
        names = set(next(iter(good[0].values())).schema.names) if good[0] else set()
        schema = dead_letters_schema(C.COL_PARTITION in names, C.COL_OFFSET in names)
        rows = [_dead_letter_row(b, schema) for b in bad]
        out[DEAD_LETTERS] = _concat(rows, schema) if rows else pa.RecordBatch.from_pylist([], schema=schema)
        return out


def _concat(batches, schema) -> pa.RecordBatch:
    batches = [b for b in batches if b.num_rows] or batches[:1]
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches, schema).combine_chunks()
    return pa.RecordBatch.from_arrays([c.chunk(0) if c.num_chunks else pa.array([], c.type)
                                       for c in table.columns], schema=schema)


def _as_dead_letter_schema(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A batch of good rows in the dead-letter layout: null ``_error``/``_raw_*``."""
    n = batch.num_rows
    cols = [batch.column(f.name) if f.name not in (COL_ERROR, COL_RAW_KEY, COL_RAW_VALUE)
            else pa.nulls(n, f.type) for f in schema]
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _dead_letter_row(bad: BadMessage, schema: pa.Schema) -> pa.RecordBatch:
    e = bad.error
    given = {
        C.COL_OP: pa.array([OP_ERROR], pa.string()),
        COL_ERROR: pa.array([{"reason": e.reason, "message": str(e), "message_index": e.message_index,
                              "partition": e.partition, "offset": e.offset, "part": e.part,
                              "byte_offset": e.byte_offset, "column": e.column}], ERROR_TYPE),
        COL_RAW_KEY: pa.array([bad.key], pa.binary()),
        COL_RAW_VALUE: pa.array([bad.value], pa.binary()),
        C.COL_PARTITION: pa.array([bad.partition], pa.int32()),
        C.COL_OFFSET: pa.array([bad.offset], pa.int64()),
    }
    return pa.RecordBatch.from_arrays([given[f.name] if f.name in given else pa.nulls(1, f.type)
                                       for f in schema], schema=schema)


def split_dead_letters(batch: pa.RecordBatch) -> tuple[pa.RecordBatch, pa.RecordBatch]:
    """(good rows, ERROR rows) of a batch decoded with ``on_error="dead_letter"``."""
    is_error = pa.compute.equal(batch.column(C.COL_OP), OP_ERROR)
    return batch.filter(pa.compute.invert(is_error)), batch.filter(is_error)
