"""``OpenDecoder``: TiCDC Open Protocol Kafka messages → ``pyarrow.RecordBatch``."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Sequence

import pyarrow as pa

from .. import _constants as C
from .. import _impl
from ..arrow_types import Target, compile_targets, old_image_field
from ..compression import DEFAULT_MAX_MESSAGE_BYTES, check_compression, check_max_message_bytes
from .._frontend import add_kafka_columns, exclusive, names_kafka_position, as_pylist, change_fields, check_extras, with_kafka_fields
from ..errors import DecodeError
from ..timezones import get_zone, local_table
from . import reference


GENERIC_FIELDS = change_fields() + [
    pa.field(C.COL_DDL_TYPE, pa.int32()),
    pa.field(C.COL_ROW_ID, pa.int64()),
    pa.field(C.COL_PHYSICAL_TABLE_ID, pa.int64()),
    pa.field(C.COL_HANDLE_KEY_ONLY, pa.bool_(), nullable=False),
    pa.field(C.COL_CLAIM_CHECK, pa.string()),
]
TRAILER_TYPED_FIELDS = [
    pa.field(C.COL_DDL, pa.string()),
    pa.field(C.COL_HANDLE_KEY_ONLY, pa.bool_(), nullable=False),
    pa.field(C.COL_CLAIM_CHECK, pa.string()),
]


@dataclass(frozen=True)
class OpenConfig:
    """Everything both implementations need; built once per decoder."""
    compression: str
    timezone: str
    tz_bounds: tuple
    tz_offsets: tuple
    targets: tuple[Target, ...] | None
    schema_name: str | None
    table_name: str | None
    control_events: bool
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    old_image: bool = False


def _split_table(table) -> tuple[str, str]:
    if isinstance(table, tuple):
        return table
    schema, dot, name = str(table).partition(".")
    if not dot or not schema or not name:
        raise ValueError(f"table must be 'db.table', not {table!r}")
    return schema, name


class OpenDecoder:
    """Decode TiCDC Open Protocol messages (both the tiflow and the ticdc flavour).

    Parameters
    ----------
    table, schema:
        Typed mode: ``table="db.tbl"`` and a ``pyarrow.Schema`` of that table's columns; the output
        holds ``_op``, ``_commit_ts``, those columns converted exactly, then ``_ddl``,
        ``_handle_key_only``, ``_claim_check_location``.  Without them: generic mode
        (``after``/``before`` maps of text).
    timezone:
        The TiCDC server time zone that TIMESTAMP values were rendered in (IANA name, ``UTC`` or
        ``±HH:MM``).  Default ``UTC``.
    compression:
        The changefeed's ``large-message-handle-compression``: ``none``, ``snappy`` or ``lz4``.
    control_events:
        Typed mode only: keep RESOLVED rows and this table's DDL rows (default True).
    old_image:
        Typed mode only: add a ``_before`` column after the table's columns, a struct of the
        same typed fields holding the row's old image, converted exactly like the new one:
        UPDATE its ``p`` image, DELETE the deleted row (which the columns hold too), null on
        INSERT and control rows.  What tells a primary-key change apart (docs/spark.md).
    max_message_bytes:
        With compression: the most bytes the events of one Kafka message may decompress to
        (default 128 MiB); beyond it the message is a DecodeError, found without allocating more.
    implementation:
        ``auto`` (default), ``cython`` or ``python``.
    """

    def __init__(self, *, table=None, schema: pa.Schema | None = None, timezone: str = "UTC",
                 compression: str = "none", control_events: bool = True,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 implementation: str | None = None, old_image: bool = False):
        if (table is None) != (schema is None):
            raise ValueError("typed mode needs both table= and schema=")
        if old_image and schema is None:
            raise ValueError("old_image=True is for typed mode (generic output has the old image in 'before')")
        get_zone(timezone)  # validate early
        bounds, offsets = local_table(timezone)
        schema_name = table_name = None
        targets = None
        if schema is not None:
            schema_name, table_name = _split_table(table)
            targets = compile_targets(schema)
        self.config = OpenConfig(check_compression(compression), timezone, bounds, offsets,
                                 targets, schema_name, table_name, bool(control_events),
                                 check_max_message_bytes(max_message_bytes), bool(old_image))
        self.implementation = _impl.resolve(implementation)
        if targets is None:
            fields = list(GENERIC_FIELDS)
        else:
            fields = [GENERIC_FIELDS[0], GENERIC_FIELDS[1]]
            fields += [pa.field(t.name, t.arrow_type, nullable=True,
                                metadata=schema.field(t.name).metadata) for t in targets]
            if old_image:
                fields.append(old_image_field(targets))
            fields += TRAILER_TYPED_FIELDS
        self._fields = fields
        self._core_plan = None
        if self.implementation == "cython":
            self._core_plan = _impl.core.OpenPlan(self.config)

    def output_schema(self, *, partitions: bool = False, offsets: bool = False) -> pa.Schema:
        return with_kafka_fields(self._fields, partitions=partitions, offsets=offsets)

    @names_kafka_position
    @exclusive
    def decode(self, keys, values, *, partitions=None, offsets=None) -> pa.RecordBatch:
        """Decode one batch of Kafka messages (``keys[i]``/``values[i]`` belong to message ``i``)."""
        n = len(keys)
        if len(values) != n:
            raise DecodeError(f"{n} keys but {len(values)} values")
        check_extras(n, partitions, offsets)
        if self.implementation == "cython":
            kbuf, koff = _contiguous(keys, "key")
            vbuf, voff = _contiguous(values, "value")
            if self.config.compression != "none":
                vbuf, voff = _contiguous(reference.decompress_event_values(
                    _as_list(vbuf, voff), self.config.compression, self.config.max_message_bytes), "value")
            cols, msg_index = self._core_plan.decode(kbuf, koff, vbuf, voff)
        else:
            cols, msg_index = reference.decode(as_pylist(keys), as_pylist(values), self.config)
        add_kafka_columns(cols, msg_index, partitions, offsets)
        return pa.RecordBatch.from_arrays(cols, schema=self.output_schema(
            partitions=partitions is not None, offsets=offsets is not None))


def _as_list(buf, offs) -> list:
    mv = memoryview(buf)
    return [mv[offs[i]:offs[i + 1]] for i in range(len(offs) - 1)]


def _contiguous(seq, part: str):
    """One buffer plus n+1 int64 offsets, with no copy for Arrow input."""
    if isinstance(seq, pa.ChunkedArray):
        seq = seq.combine_chunks()
    if isinstance(seq, pa.Array):
        if not (pa.types.is_binary(seq.type) or pa.types.is_large_binary(seq.type)
                or pa.types.is_string(seq.type) or pa.types.is_large_string(seq.type)):
            raise TypeError(f"{part}s must be a binary array, not {seq.type}")
        if seq.null_count:
            first = seq.is_null().index(True).as_py()
            raise DecodeError(f"null {part}", first, part=part)
        arr = seq.cast(pa.large_binary())
        bufs = arr.buffers()
        off = pa.Array.from_buffers(pa.int64(), len(arr) + 1, [None, bufs[1]], offset=arr.offset)
        data = bufs[2] if bufs[2] is not None else pa.py_buffer(b"")
        return data, off
    items = list(seq)
    for i, item in enumerate(items):
        if item is None:
            raise DecodeError(f"null {part}", i, part=part)
    data = b"".join(items)
    off = pa.array(list(accumulate(map(len, items), initial=0)), pa.int64())
    return data, off
