"""Pieces every decoder front end shares: batch inputs, the Kafka metadata columns, and the
output schema with them (the protocol's own columns are declared in ``columns``)."""
from __future__ import annotations

import functools
import threading
from array import array

import pyarrow as pa

from . import _constants as C
from .errors import DecodeError, DecoderBusyError
from .values import TextPolicy, enter_text_policy, leave_text_policy

PARTITION_FIELD = pa.field(C.COL_PARTITION, pa.int32())
OFFSET_FIELD = pa.field(C.COL_OFFSET, pa.int64())


# Python lists of Kafka positions and message indexes become Arrow arrays through the array
# module where they can: pa.array's first call imports pandas (a quarter of a second, see
# int64_array).  Anything array() refuses (None, floats, text, out of range) and bools, which
# array() takes as integers but pa.array refuses, go to pa.array, which decides and names the fault.
_INT_TYPECODES = {pa.int32(): "i", pa.int64(): "q"}


def as_array(obj, typ) -> pa.Array:
    if isinstance(obj, pa.ChunkedArray):
        obj = obj.combine_chunks()
    if isinstance(obj, pa.Array):
        return obj if obj.type == typ else obj.cast(typ)
    code = _INT_TYPECODES.get(typ)
    if code is not None and isinstance(obj, (list, tuple)) and bool not in set(map(type, obj)):
        try:
            values = array(code, obj)
        except (TypeError, OverflowError):
            pass
        else:
            return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])
    return pa.array(obj, typ)


def as_pylist(seq) -> list:
    if isinstance(seq, pa.ChunkedArray):
        seq = seq.combine_chunks()
    if isinstance(seq, pa.Array):
        return seq.to_pylist()
    return list(seq)


def is_binary_array(obj) -> bool:
    """An Arrow (chunked) array of binary or large_binary: the core can read its buffers."""
    if isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return pa.types.is_binary(obj.type) or pa.types.is_large_binary(obj.type)
    return False


def as_binary_chunk(arr) -> pa.Array:
    """One binary or large_binary chunk, the layouts the core's zero-copy input reads in place
    (no cast: Spark and the Kafka source hand over binary, and a cast to large_binary cost 3-10 %
    of a batch's decode)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        return arr
    return arr.cast(pa.large_binary())


def int64_array(values) -> pa.Array:
    """An int64 Arrow array over a contiguous buffer of int64 values (numpy, ``array("q")``),
    without a copy.  Not ``pa.array``: its first call imports pandas (pyarrow checks every input
    for pandas types), a quarter of a second that the first decode of a process would pay."""
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def offsets64(arr) -> "np.ndarray":
    """The n+1 offsets of a binary or large_binary array as int64 (a widening copy for binary)."""
    import numpy as np
    n = len(arr)
    dtype = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offs = np.frombuffer(arr.buffers()[1], dtype)[arr.offset:arr.offset + n + 1]
    return offs if dtype is np.int64 else offs.astype(np.int64)


def drive_fast_path(n: int, run, retry, slow) -> None:
    """The batch driver every core-backed front end shares: ``run(i)`` decodes messages i.. in the
    core until one needs Python and returns its index (n when none does); ``retry(j)`` does what
    lets the core take message j after all (load a schema or a zone) and says whether it did;
    otherwise ``slow(j)`` handles message j in Python and the core resumes after it."""
    i = 0
    while i < n:
        j = run(i)
        if retry(j):
            i = j
            continue
        if j >= n:
            break
        slow(j)
        i = j + 1


def check_extras(n: int, partitions, offsets) -> None:
    for name, extra in (("partitions", partitions), ("offsets", offsets)):
        if extra is not None and len(extra) != n:
            raise ValueError(f"{name} has {len(extra)} entries for {n} messages")


_SCHEMAS: dict = {}     # (id(fields), partitions, offsets) -> (fields, schema)


def with_kafka_fields(fields, *, partitions: bool, offsets: bool) -> pa.Schema:
    """The batch schema of ``fields`` (the same object for the same ``fields``: a core keys its
    hand-over of a batch on it)."""
    key = (id(fields), partitions, offsets)
    hit = _SCHEMAS.get(key)
    if hit is not None and hit[0] is fields:
        return hit[1]
    out = list(fields)
    if partitions:
        out.append(PARTITION_FIELD)
    if offsets:
        out.append(OFFSET_FIELD)
    schema = pa.schema(out)
    if len(_SCHEMAS) >= 256:
        _SCHEMAS.clear()
    _SCHEMAS[key] = (fields, schema)
    return schema


def kafka_position_arrays(partitions, offsets) -> list:
    """The ``partitions=``/``offsets=`` of a decode that were given, as int32 / int64 arrays:
    what a core gathers the ``_partition``/``_offset`` columns from (one value per message)."""
    out = []
    if partitions is not None:
        out.append(as_array(partitions, pa.int32()))
    if offsets is not None:
        out.append(as_array(offsets, pa.int64()))
    return out


def finish_rows(rows, fields, partitions=None, offsets=None) -> pa.RecordBatch:
    """The rows a row decoder holds as a RecordBatch of ``fields``, then ``_partition`` and
    ``_offset`` when given (one value per message, as ``partitions=``/``offsets=`` of a decode).
    A core hands the batch over in one piece, the Kafka columns taken for each row from its
    message; the twin's columns are put together here."""
    schema = with_kafka_fields(fields, partitions=partitions is not None, offsets=offsets is not None)
    extras = kafka_position_arrays(partitions, offsets)
    finish_batch = getattr(rows, "finish_batch", None)
    if finish_batch is not None and not any(a.null_count for a in extras):
        return finish_batch(schema, extras)
    cols, msg_index = rows.finish(fields)
    _append_taken(cols, msg_index, extras)
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def add_kafka_columns(cols: list, msg_index, partitions, offsets) -> None:
    """``_partition``/``_offset`` of each output row, taken from its message (``msg_index``)."""
    _append_taken(cols, msg_index, kafka_position_arrays(partitions, offsets))


def _append_taken(cols: list, msg_index, per_message: list) -> None:
    """Append each per-message array of ``per_message`` taken at every row's message."""
    if per_message:
        idx = as_array(msg_index, pa.int32())
        cols += [a.take(idx) for a in per_message]


def _position(seq, i):
    if seq is None or i is None or not 0 <= i < len(seq):
        return None
    v = seq[i]
    return v.as_py() if hasattr(v, "as_py") else v


def init_invalid_utf8(decoder, choice: str) -> None:
    """The ``invalid_utf8`` option of a decoder: ``replace`` (each invalid sequence becomes
    U+FFFD; ``decoder.invalid_utf8_replaced`` counts the text values that needed it) or
    ``error`` (DecodeError).  ValueError for anything else."""
    decoder._text_policy = TextPolicy(choice)
    decoder.invalid_utf8_replaced = 0


class FrontEnd:
    """What every decoder front end shares: the public ``decode`` (one call at a time, the
    invalid-UTF-8 policy and its counter, the key/value check — ``keys=None`` where the protocol
    can do without keys —, the error policy over stretches of the batch, the Kafka position of a
    failed message), the output schema with the Kafka columns, and the core/twin choice.  A
    protocol front end supplies what is its own: ``_decode_batch`` (one stretch, all or nothing),
    ``_fields``, and where it needs them the hooks ``_before_batch`` (a first batch that fixes a
    schema), ``_part_begin`` / ``_part_rollback`` / ``_part_commit`` (state a failed call undoes)
    and ``_core_text_counter``; ``_router`` takes ``tables={...}`` batches (``TableRouter``)."""

    needs_keys = False          # the open protocol: its events live in the key
    protocol = "this"
    _router = None

    def _init_front(self, on_error: str, invalid_utf8: str, implementation, unattributed=None) -> None:
        """The options every decoder takes: ``on_error``, ``invalid_utf8``, ``implementation``."""
        from . import _impl
        from .policy import DecodeStats, ErrorPolicy
        self.stats = DecodeStats()
        self._policy = ErrorPolicy(on_error, self.stats, unattributed)
        init_invalid_utf8(self, invalid_utf8)
        self.implementation = _impl.resolve(implementation)

    def decode(self, keys, values, *, partitions=None, offsets=None):
        """Decode one batch of Kafka messages (``keys[i]``/``values[i]`` belong to message ``i``;
        ``keys`` may be None where the protocol can do without them): a ``RecordBatch``, or with
        ``tables={...}`` a ``TableBatches``.  ``partitions=`` / ``offsets=`` add the Kafka
        columns and name a failed message's position in its ``DecodeError``.

        All or nothing: if it raises, the decoder's state (schemas learned, held messages) is as
        before the call, so the same batch can be retried or skipped without duplicated or lost
        rows.  One call at a time per decoder (``DecoderBusyError`` from a second thread)."""
        lock = _exclusive_lock(self)
        try:
            self._replaced_in_call = 0
            token = enter_text_policy(self._text_policy)
            try:
                self._check_batch(keys, values)
                self._before_batch(keys, values)
                if self._router is not None:
                    out = self._router.decode(keys, values, partitions, offsets)
                else:
                    self._part_begin(values)
                    try:
                        out = self._policy.run(self._stretch, keys, values, partitions, offsets)
                    except BaseException:
                        self._part_rollback(None)
                        raise
                    self._part_commit()
            finally:
                leave_text_policy(token)
            self.invalid_utf8_replaced += self._replaced_in_call
            self.stats.invalid_utf8_replaced = self.invalid_utf8_replaced
            return out
        except DecodeError as exc:
            if exc.partition is None and exc.offset is None and (partitions is not None or offsets is not None):
                partition = _position(partitions, exc.message_index)
                offset = _position(offsets, exc.message_index)
                if partition is not None or offset is not None:
                    exc.at_kafka(partition, offset)
            raise
        finally:
            lock.release()

    def _stretch(self, keys, values, partitions, offsets):
        """One stretch of the batch as the error policy gives it, counting the text values it
        replaced into the current call if it returns (the twin counts in its TextPolicy, the
        core in its plan's counter, read through ``_core_text_counter()``)."""
        policy = self._text_policy
        mark = policy.replaced + self._core_text_counter()
        out = self._decode_batch(keys, values, partitions, offsets)
        self._replaced_in_call += policy.replaced + self._core_text_counter() - mark
        return out

    def _check_stretch(self, keys, values, partitions, offsets) -> int:
        """The number of messages of a stretch, its keys (if any) and Kafka positions checked
        against it."""
        n = len(values)
        if keys is not None and len(keys) != n:
            raise DecodeError(f"{len(keys)} keys but {n} values")
        check_extras(n, partitions, offsets)
        return n

    def _check_batch(self, keys, values) -> None:
        if keys is None:
            if self.needs_keys:
                raise ValueError(f"the {self.protocol} protocol needs the Kafka keys (keys=None): its "
                                 "events live in the key")
        elif len(keys) != len(values):
            raise DecodeError(f"{len(keys)} keys but {len(values)} values")

    # hooks (no state to undo, nothing to do before a batch, no core counter)
    def _before_batch(self, keys, values) -> None:
        pass

    def _part_begin(self, values=None) -> None:
        pass

    def _part_mark(self):
        return None

    def _part_rollback(self, mark) -> None:
        pass

    def _part_commit(self) -> None:
        pass

    def _batch_schema(self, partitions: bool, offsets: bool) -> pa.Schema:
        return with_kafka_fields(self._fields, partitions=partitions, offsets=offsets)

    def _core_text_counter(self) -> int:
        return 0


def check_mode_options(typed: bool, tables, unlisted: str, control_events) -> None:
    """An option of one mode given in another is an error, never ignored."""
    if tables is None and unlisted != "skip":
        raise ValueError("unlisted= is for tables={...} (rows of the tables not listed)")
    if not typed and tables is None and not control_events:
        raise ValueError("control_events=False is for typed mode (table= and schema=, or tables=): "
                         "generic output keeps every event")


def exclusive(method):
    """One call at a time per decoder: a call from a second thread while another runs raises
    DecoderBusyError at once (and changes nothing); calls nested in the same thread are fine.

    Decoders hold per-batch output buffers and cross-batch state, and the core runs with the
    GIL released, so two threads sharing one would corrupt both."""
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        lock = _exclusive_lock(self)
        try:
            return method(self, *args, **kwargs)
        finally:
            lock.release()
    return guarded


def _exclusive_lock(decoder):
    """The decoder's call lock, acquired; DecoderBusyError if another thread holds it."""
    lock = decoder.__dict__.get("_exclusive_lock")
    if lock is None:   # setdefault is atomic: racing first calls end up with one lock
        lock = decoder.__dict__.setdefault("_exclusive_lock", threading.RLock())
    if not lock.acquire(blocking=False):
        raise DecoderBusyError(f"{type(decoder).__name__} is already in use by another thread; "
                               "decoders are not thread-safe: use one decoder per thread")
    return lock
