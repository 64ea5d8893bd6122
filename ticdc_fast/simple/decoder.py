"""``SimpleDecoder``: TiCDC Simple Protocol (JSON or Avro) → ``pyarrow.RecordBatch``.

State lives here, shared by both implementations: the TableSchema cache keyed by
(database, table, schemaVersion), rows held until their schema arrives (bounded by count and
bytes, with an explicit policy at the bound), save/restore of that state, and claim-check
resolution.  The row decoding itself is done by the Cython core or the reference twin.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Callable

import orjson
import pyarrow as pa

from .. import _constants as C
from .. import _impl
from ..arrow_types import Target, as_arrow_schema, compile_targets
from ..columns import output_fields
from ..compression import (DEFAULT_MAX_MESSAGE_BYTES, check_compression, check_max_message_bytes,
                           decompress)
from .. import claim_check
from ..claim_check import local_claim_check
from ..errors import DecodeError, UnavailableError, check_on_schema_change, schema_change
from ..policy import BadMessage, as_dead_letter_batch
from .._frontend import (FrontEnd, as_array, check_mode_options, drive_fast_path, exclusive, as_binary_chunk, as_pylist, is_binary_array,
                         finish_rows, with_kafka_fields)
from ..tables import OTHER_TABLES, TableBatches, TableRouter, check_tables, split_table
from ..timezones import get_zone, local_table
from ..values import ValueProblem
from .hold import Held as _Held
from .hold import HoldQueue
from .._json_where import locate, path_at
from .messages import Msg, canonical_json, field_at, nearest_at, parse_message
from .reference import ReferenceRows
from .routing import SimpleRouter
from .schema import TableSchema, TableSchemaError, arrow_schema, table_schema_from_dict

_INT64_MAX = (1 << 63) - 1

def _in_original(exc: DecodeError, canonical: bytes, original: bytes) -> DecodeError:
    """An error found in the canonical form of a JSON message, placed in the message as sent:
    the member it names is found again by its path (a repeated member by its last copy, the one
    the canonical form keeps)."""
    where = path_at(canonical, exc.byte_offset)
    at = None if where is None else locate(original, where[0], name=where[1])
    if at is None:
        return exc
    return DecodeError(exc.reason, exc.message_index, at, exc.column, exc.part, exc.partition, exc.offset)


@dataclass(frozen=True)
class SimpleConfig:
    encoding: str
    compression: str
    timezone: str
    targets: tuple[Target, ...] | None
    schema_name: str | None
    table_name: str | None
    control_events: bool
    tz_bounds: tuple = ()
    tz_offsets: tuple = ()
    invalid_utf8: str = "replace"
    old_image: bool = False


@dataclass
class _Batch:
    """What one decode() stretch (or flush) knows about its batch; it lives for that call only.

    Rows released from the hold queue have no message index in the batch: they are numbered
    after its n messages, and their Kafka positions are kept here."""
    number: int                       # the decoder's batch counter: held messages remember it
    n: int
    parts: pa.Array | None = None
    offs: pa.Array | None = None
    held: list[int] = field(default_factory=list)          # hold-queue numbers of messages held now
    extra_meta: list[tuple] = field(default_factory=list)  # (partition, offset) of released rows
    bad_zones: tuple = (None, 0)     # (message, how many names that are no zone it asked for)

    def meta(self, i) -> tuple:
        return (self.parts[i].as_py() if self.parts is not None else None,
                self.offs[i].as_py() if self.offs is not None else None)

    def virtual(self, meta) -> int:
        """The row number of a row that comes from outside the batch (a held message)."""
        self.extra_meta.append(meta)
        return self.n + len(self.extra_meta) - 1


def _checksum_at(m: Msg, member: str) -> int:
    """Where a checksum error points: the ``checksum`` member it is about (``corrupted``,
    ``current`` or ``previous``), or the checksum object when the member is not sent (a JSON
    checksum may leave out a member whose value is zero)."""
    return field_at(m, ("checksum", member)) or field_at(m, "checksum")


def _with_held(column: pa.Array, held: list) -> pa.Array:
    """A batch's partition/offset column followed by those of the held rows it released."""
    return pa.concat_arrays([column, pa.array(held, column.type)]) if held else column


class SimpleDecoder(FrontEnd):
    """Decode TiCDC Simple Protocol messages, tracking table schemas across batches.

    Parameters
    ----------
    encoding: ``"json"`` or ``"avro"`` (the changefeed's ``encoding-format``).
    table, schema: typed mode, as for ``OpenDecoder``; ``schema`` may be omitted once the table's
        TableSchema is known (seeded) — its default Arrow schema is then used.
        ``schema="auto"``: the default Arrow schema of the table's latest TableSchema, the
        seeded one (``schemas=``/``state=``) or else the latest BOOTSTRAP/DDL of the table in
        the first ``decode()`` batch (``latest_table_schema``); a DDL up to its version is
        history (it sets ``schema_version``).  Fixed from then on: a later DDL is a schema
        change (``on_schema_change``).
    timezone: zone for TIMESTAMP values sent without a location (the simple protocol names it).
    compression: ``large-message-handle-compression`` (``none``, ``snappy``, ``lz4``).
    hold_max_rows, hold_max_bytes: bound on DML held while its schema is unknown.
    on_hold_overflow: ``"raise"`` (DecodeError) or ``"emit"`` (the oldest held rows come out with
        ``_undecodable=True`` and their raw value in ``_raw``).
    schemas: TableSchema JSON objects (or BOOTSTRAP/DDL message values) to seed the cache.
    state: a dict from ``state()`` to resume from (schemas and held rows).
    claim_check_resolver: callable(location) → the claim-check file bytes; when given, claim-check
        rows are replaced by the full event from the file (``fsspec_resolver()`` reads any storage
        URI, ``local_claim_check(dir)`` a local copy).  An unreadable file raises
        ``UnavailableError``; a file holding no valid event, ``DecodeError``.
    verify_checksum: recompute the row checksums TiCDC sends (``[integrity]``) and raise
        DecodeError on a mismatch or a ``corrupted`` flag (a Python pass per message: opt-in).
    max_message_bytes: with compression, the most bytes one message (or claim-check file) may
        decompress to (default 128 MiB); beyond it a DecodeError, found without allocating more.
    on_error: ``"fail"`` (default), ``"skip"`` or ``"dead_letter"`` (docs/error-handling.md).  A
        bad message has no effect on the schema cache or the held rows; a held message that
        fails when its schema arrives in a later batch is skipped or dead-lettered then.
    invalid_utf8: ``replace`` (default; counted in ``invalid_utf8_replaced``) or ``error``, for
        invalid UTF-8 in a text column (Avro encoding; as for ``OpenDecoder``).
    old_image: typed mode only: add a ``_before`` column after the table's columns, a struct of
        the same typed fields holding the row's ``old`` image, converted exactly like ``data``:
        UPDATE its old row, DELETE the deleted row (which the columns hold too), null on INSERT,
        control and undecodable rows.
    on_schema_change: typed mode: what a DDL of the table in the stream does when it changes what
        the typed output holds (its ``preTableSchema`` against its ``tableSchema``): it drops a
        column the typed schema has, or adds one it lacks while the typed schema had every column
        of the table (a typed schema that leaves columns out is a projection: a new column is one
        more it does not ask for; one that already has the new column sees no change):
        ``"fail"`` (default) raises ``SchemaChangedError`` at that message, naming the table and
        the columns (never skipped by ``on_error``); ``"ignore"`` counts it in
        ``stats.schema_changes_ignored`` and goes on: new columns are dropped, dropped ones null.
        Checked once per schema version; generic output is never affected.
    schema_version: the TableSchema version the typed ``schema`` was taken from: DDLs up to it are the table's history, not a change, and are not checked.
        Without ``schema=`` it is the version of the TableSchema the default schema comes from.
    tables, unlisted: many tables in one pass (``ticdc_fast.tables``): ``{"db.t1": schema or
        None, ...}``; ``decode`` returns a ``TableBatches`` whose batch of each table is what
        ``table="db.t1", schema=...`` gives (None: the table's default Arrow schema, as without
        ``schema=``); a WATERMARK belongs to every table.  Each message is decoded once, by its
        table's decoder (docs/simple-protocol.md, "Many tables").
    """

    def __init__(self, encoding: str = "json", *, table=None, schema: pa.Schema | None = None,
                 timezone: str = "UTC", compression: str = "none", control_events: bool = True,
                 hold_max_rows: int = 100_000, hold_max_bytes: int = 256 << 20,
                 on_hold_overflow: str = "raise", schemas=None, state: dict | None = None,
                 claim_check_resolver: Callable[[str], bytes] | None = None,
                 verify_checksum: bool = False, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 invalid_utf8: str = "replace", on_error: str = "fail", old_image: bool = False,
                 on_schema_change: str = "fail", schema_version: int | None = None,
                 tables: dict | None = None, unlisted: str = "skip", implementation: str | None = None):
        self._init_front(on_error, invalid_utf8, implementation, self._set_aside_held)
        self._auto = isinstance(schema, str) and schema == "auto"
        if self._auto:
            schema = None
            if table is None:
                raise ValueError("schema='auto' needs table=")
        elif schema is not None:
            schema = as_arrow_schema(schema)      # pyarrow, StructType or DDL
        check_mode_options(table is not None, tables, unlisted, control_events)
        self._on_schema_change = check_on_schema_change(on_schema_change)
        self._schema_version = schema_version
        self._versions_checked: set = set()   # keys compared with the target (never undone)
        if encoding not in ("json", "avro"):
            raise ValueError("encoding must be 'json' or 'avro'")
        if on_hold_overflow not in ("raise", "emit"):
            raise ValueError("on_hold_overflow must be 'raise' or 'emit'")
        if tables is not None:
            self._init_tables(check_tables(tables, unlisted, table=table, schema=schema, schema_optional=True),
                              unlisted, dict(
                encoding=encoding, timezone=timezone, compression=compression, control_events=control_events,
                hold_max_rows=hold_max_rows, hold_max_bytes=hold_max_bytes, on_hold_overflow=on_hold_overflow,
                schemas=list(schemas or ()), claim_check_resolver=claim_check_resolver,
                verify_checksum=verify_checksum, max_message_bytes=max_message_bytes,
                invalid_utf8=invalid_utf8, implementation=implementation), state, old_image, on_error,
                on_schema_change)
            return
        if schema is not None and table is None:
            raise ValueError("typed mode needs table=")
        if old_image and table is None:
            raise ValueError("old_image=True is for typed mode (generic output has the old image in 'before')")
        self._old_image = bool(old_image)
        get_zone(timezone)
        self.encoding = encoding
        self.hold_max_rows, self.hold_max_bytes = int(hold_max_rows), int(hold_max_bytes)
        self.on_hold_overflow = on_hold_overflow
        self.claim_check_resolver = claim_check_resolver
        self.verify_checksum = bool(verify_checksum)
        self._schemas: dict[tuple, TableSchema] = {}
        # every TableSchema ever given to the row decoder: its plans outlive a failed decode()
        self._planned: dict[tuple, TableSchema] = {}
        self._schema_undo: list | None = None    # keys added during the current decode()
        self._held = HoldQueue()
        self._batch: _Batch | None = None      # set while a decode() stretch or flush() runs
        self._table = split_table(table) if table is not None else None
        self._user_schema = schema
        self._compression = check_compression(compression)
        self._max_message_bytes = check_max_message_bytes(max_message_bytes)
        self._timezone = timezone
        self._control_events = bool(control_events)
        self._rows = None
        self._batch_no = 0
        for s in schemas or ():
            self.add_schema(s)
        if state is not None:
            self._restore(state)
        if self._table is None or schema is not None:
            self._build(schema)

    # ------------------------------------------------------------------ many tables
    def _init_tables(self, tables: dict, unlisted: str, options: dict, state, old_image, on_error,
                     on_schema_change):
        """One typed decoder per table (and a generic one for ``unlisted="generic"``), fed by
        ``TableRouter``; ``state`` (from ``state()``) gives each its table's held messages."""
        self.encoding = options["encoding"]
        held = {}
        for h in (state or {}).get("held", ()):
            held.setdefault(tuple(h["key"][:2]), []).append(h)
        base = {"version": 1, "encoding": self.encoding, "schemas": (state or {}).get("schemas", ())}
        if state is not None and state.get("encoding") != self.encoding:
            raise ValueError("state was saved by a decoder with another encoding")
        parts = {}
        for key, schema in tables.items():
            mine = dict(base, held=held.pop(split_table(key), []))
            parts[key] = SimpleDecoder(table=key, schema=schema, old_image=old_image,
                                       on_schema_change=on_schema_change,
                                       state=mine if state is not None else None, **options)
        other = None
        if unlisted == "generic":
            rest = dict(base, held=[h for hs in held.values() for h in hs])
            other = SimpleDecoder(state=rest if state is not None else None,
                                  **dict(options, control_events=True))   # generic: every event
        self._router = TableRouter(self, parts, other, SimpleRouter(
            tables, self.encoding, check_compression(options["compression"]),
            check_max_message_bytes(options["max_message_bytes"]), self.implementation), on_error)

    def output_schemas(self, *, partitions: bool = False, offsets: bool = False) -> dict:
        """``tables={...}``: ``{"db.table": schema, ...}`` of the batches ``decode`` gives."""
        if self._router is None:
            raise ValueError("output_schemas() is for tables={...}; use output_schema()")
        return self._router.output_schemas(partitions, offsets)

    def _parts(self) -> list:
        return self._router._subs if self._router is not None else [self]

    # what TableRouter asks of each table's decoder: decode() split in its steps
    def _part_begin(self, values=None) -> None:
        self._ensure_built(values)
        self._schema_undo = []
        self._held.begin()

    def _part_mark(self) -> tuple:
        return len(self._schema_undo), self._held.savepoint()

    def _part_rollback(self, mark) -> None:
        if self._schema_undo is None:
            return
        if mark is None:
            self._undo_to(0, None)
            self._schema_undo = None
        else:
            self._undo_to(*mark)

    def _part_commit(self) -> None:
        self._schema_undo = None
        self._held.commit()

    # ------------------------------------------------------------------ configuration
    def _build(self, schema):
        targets = compile_targets(schema) if schema is not None else None
        schema_name, table_name = self._table if self._table else (None, None)
        bounds, offs = local_table(self._timezone)
        self.config = SimpleConfig(self.encoding, self._compression, self._timezone, targets,
                                   schema_name, table_name, self._control_events, bounds, offs,
                                   "error" if self._text_policy.strict else "replace",
                                   self._old_image and targets is not None)
        self._fields = output_fields("simple", targets, old_image=self.config.old_image)
        if self.implementation == "cython":
            self._rows = _impl.core.SimplePlan(self.config)
        else:
            self._rows = ReferenceRows(self.config)
        self._rows.stop_on_claim_check = self.claim_check_resolver is not None
        for ts in self._schemas.values():
            self._rows.register(ts)

    def _ensure_built(self, values=None):
        if self._rows is not None:
            return
        # typed mode without a schema: the table's default Arrow schema, once its TableSchema is known
        known = [ts for ts in self._schemas.values() if (ts.database, ts.table) == self._table]
        if not known and self._auto and values is not None:
            from .latest import latest_table_schema
            found = latest_table_schema(as_pylist(values), self._table, encoding=self.encoding,
                                        compression=self._compression,
                                        max_message_bytes=self._max_message_bytes)
            if found is not None:
                known = [self._store_schema(found)]
        if not known:
            if self._auto:
                raise ValueError(f"schema='auto': no BOOTSTRAP or DDL of {'.'.join(self._table)} "
                                 "known yet; seed its TableSchema (schemas=...) or decode a batch "
                                 "that holds one")
            raise ValueError(f"typed mode for {'.'.join(self._table)} needs schema= or a seeded "
                             "TableSchema (schemas=...)")
        latest = max(known, key=lambda ts: ts.version)
        if self._schema_version is None:
            self._schema_version = latest.version
        self._build(arrow_schema(latest))

    def output_schema(self, *, partitions: bool = False, offsets: bool = False) -> pa.Schema:
        if self._router is not None:
            raise ValueError("a decoder given tables={...} has one schema per table: output_schemas()")
        return self._policy.output_schema(self._batch_schema(partitions, offsets))

    def _batch_schema(self, partitions: bool, offsets: bool) -> pa.Schema:
        self._ensure_built()
        return with_kafka_fields(self._fields, partitions=partitions, offsets=offsets)

    # ------------------------------------------------------------------ schema cache
    @exclusive
    def add_schema(self, obj) -> TableSchema:
        """Seed the cache with a TableSchema (dict, JSON text/bytes, or a BOOTSTRAP/DDL message value).
        Returns the cached TableSchema of its (database, table, version): the first one given, as
        TiCDC's own decoder keeps it (a later one with other columns is ignored)."""
        if self._router is not None:
            return [part.add_schema(obj) for part in self._parts()][0]
        if isinstance(obj, TableSchema):
            ts = obj
        else:
            if isinstance(obj, (bytes, bytearray, memoryview)) and self.encoding == "avro" \
                    and bytes(obj[:1]) == b"\x16":
                m = parse_message(bytes(obj), 0, "avro")
                obj = m.table_schema
            elif isinstance(obj, (str, bytes, bytearray, memoryview)):
                obj = orjson.loads(bytes(obj) if not isinstance(obj, str) else obj)
            if isinstance(obj, dict) and "tableSchema" in obj:
                obj = obj["tableSchema"]
            ts = table_schema_from_dict(obj)
        return self._store_schema(ts)

    def _store_schema(self, ts: TableSchema) -> TableSchema:
        cached = self._schemas.get(ts.key)
        if cached is not None:
            return cached
        # a version the row decoder already has (announced in a decode() that failed) keeps its
        # plan, so the cache must keep the same TableSchema
        first = self._planned.get(ts.key)
        if first is None:
            if self._rows is not None:
                self._rows.register(ts)     # first: a registration that fails (memory) is tried again
            first = self._planned[ts.key] = ts
        self._schemas[ts.key] = first
        if self._schema_undo is not None:
            self._schema_undo.append(ts.key)
        return first

    def table_schema(self, database: str, table: str, version: int | None = None) -> TableSchema | None:
        cands = [ts for part in self._parts() for k, ts in part._schemas.items() if k[:2] == (database, table)
                 and (version is None or k[2] == version)]
        return max(cands, key=lambda t: t.version) if cands else None

    def held(self) -> int:
        """Number of DML messages waiting for their schema."""
        return sum(len(part._held) for part in self._parts())

    def held_positions(self) -> list[tuple]:
        """``(partition, offset)`` of each DML message waiting for its schema, oldest first (with
        ``tables=``: table by table)."""
        return [(h.partition, h.offset) for part in self._parts() for h in part._held]

    @exclusive
    def state(self) -> dict:
        """JSON-serialisable state (schemas and held rows) for ``SimpleDecoder(state=...)``
        (with ``tables=``, the same form: every table's decoder's, for a decoder given the same
        ``tables=``)."""
        schemas = {k: ts for part in self._parts() for k, ts in part._schemas.items()}
        return {
            "version": 1, "encoding": self.encoding,
            "schemas": [orjson.loads(ts.json) for ts in schemas.values()],
            "held": [{"value": base64.b64encode(h.value).decode(), "key": list(h.key), "op": h.op,
                      "commit_ts": h.commit_ts, "partition": h.partition, "offset": h.offset}
                     for part in self._parts() for h in part._held],
        }

    def _restore(self, state: dict):
        if state.get("encoding") != self.encoding:
            raise ValueError("state was saved by a decoder with another encoding")
        for s in state.get("schemas", ()):
            self.add_schema(s)
        for h in state.get("held", ()):
            value = base64.b64decode(h["value"])
            self._held.append(_Held(value, tuple(h["key"]), h["op"], h["commit_ts"], h.get("partition"),
                                    h.get("offset")))

    # ------------------------------------------------------------------ decoding
    def _core_text_counter(self) -> int:
        return getattr(self._rows, "invalid_utf8_replaced", 0)

    def _undo_to(self, schemas: int, held: int | None) -> None:
        for key in reversed(self._schema_undo[schemas:]):
            del self._schemas[key]
        del self._schema_undo[schemas:]
        self._held.rollback(held)
        self._rows.reset()

    def _set_aside_held(self, exc: DecodeError) -> BadMessage | None:
        """A held message from an earlier batch failed when its schema came: the error policy
        takes it out of the hold queue (the failed call left the queue as it was)."""
        h = getattr(exc, "held", None)
        if h is None or not self._held.remove(h):
            return None
        return BadMessage(exc, None, h.value, h.partition, h.offset)

    def _decode_batch(self, keys, values, partitions, offsets) -> pa.RecordBatch:
        """One stretch of the batch, all or nothing (the error policy may decode several)."""
        mark = (len(self._schema_undo), self._held.savepoint())
        try:
            return self._decode(keys, values, partitions, offsets)
        except BaseException:
            self._undo_to(*mark)
            raise

    def _decode(self, keys, values, partitions, offsets) -> pa.RecordBatch:
        n = self._check_stretch(keys, values, partitions, offsets)
        parts = as_array(partitions, pa.int32()) if partitions is not None else None
        offs = as_array(offsets, pa.int64()) if offsets is not None else None
        if self.implementation == "cython" and self._compression == "none" and is_binary_array(values):
            # zero copy: the core reads the Arrow buffers; only messages it leaves become bytes
            arr = as_binary_chunk(values)
            if arr.null_count:
                self._null_value(arr.is_null().to_pylist().index(True))
            values, message = arr, (lambda j: arr[j].as_py())
        else:
            values = as_pylist(values)
            for i, v in enumerate(values):
                if v is None:
                    self._null_value(i)
            if self._compression != "none":
                values = [self._decompress(v, i) for i, v in enumerate(values)]
            else:
                values = [bytes(v) for v in values]
            message = values.__getitem__
        self._batch_no += 1
        self._batch = batch = _Batch(self._batch_no, n, parts, offs)
        try:
            return self._decode_messages(batch, values, message)
        finally:
            self._batch = None

    def _decode_messages(self, batch: _Batch, values, message) -> pa.RecordBatch:
        n, parts, offs = batch.n, batch.parts, batch.offs
        rows = self._rows
        drive_fast_path(n, lambda i: rows.run(values, i), self._load_pending_zone,
                        lambda j: self._slow_message(message(j), j))
        if self.verify_checksum:   # after the loop: the batch's own BOOTSTRAP/DDL are known now
            still = (self._held.get(number) for number in batch.held)
            held = {h.index for h in still if h is not None}
            self._verify_checksums([(i, message(i)) for i in range(n) if i not in held])
        held = batch.extra_meta
        return finish_rows(rows, self._fields,
                           None if parts is None else _with_held(parts, [m[0] for m in held]),
                           None if offs is None else _with_held(offs, [m[1] for m in held]))

    @exclusive
    def flush(self, *, partitions: bool = False, offsets: bool = False) -> pa.RecordBatch:
        """Emit every held row as undecodable (end of stream), emptying the hold queue (with
        ``tables=``, a ``TableBatches``)."""
        if self._router is not None:
            out = TableBatches((key, part.flush(partitions=partitions, offsets=offsets))
                               for key, part in self._router.parts.items())
            if self._router.other is not None:
                out[OTHER_TABLES] = self._router.other.flush(partitions=partitions, offsets=offsets)
            return out
        self._ensure_built()
        self._batch = batch = _Batch(self._batch_no, 0)
        try:
            while self._held:
                self._emit_undecodable(self._held.pop_oldest())
        finally:
            self._batch = None
        cols, msg_index = self._rows.finish(self._fields)
        if partitions or offsets:
            idx = msg_index if isinstance(msg_index, pa.Array) else pa.array(msg_index, pa.int32())
            if partitions:
                cols.append(pa.array([m[0] for m in batch.extra_meta], pa.int32()).take(idx))
            if offsets:
                cols.append(pa.array([m[1] for m in batch.extra_meta], pa.int64()).take(idx))
        out = pa.RecordBatch.from_arrays(cols, schema=self._batch_schema(partitions, offsets))
        return as_dead_letter_batch(out) if self._policy.on_error == "dead_letter" else out

    def _verify_checksums(self, indexed_values) -> None:
        from .checksum import row_checksum
        from .reference import normalise_avro_value
        for i, value in indexed_values:
            m = parse_message(value, i, self.encoding)
            if m.kind != "DML" or m.checksum is None:
                continue
            if m.kind == "DML" and m.claim_check_location is not None:
                continue  # a handle-key-only stand-in: the checksum is of the full row
            ts = self._planned.get((m.database, m.table, m.schema_version))
            if ts is None:
                continue  # only other tables' rows skipped in typed mode get here
            if m.checksum.get("corrupted"):
                raise DecodeError("TiCDC flagged the row as corrupted (checksum.corrupted)", i,
                                  _checksum_at(m, "corrupted"), part="value")
            for img, field in ((m.data, "current"), (m.old, "previous")):
                if img is None:
                    continue
                if self.encoding == "avro":
                    img = {k: normalise_avro_value(ts.column(k), v) if ts.column(k) else v
                           for k, v in img.items()}
                try:
                    want = int(m.checksum.get(field) or 0) & 0xFFFFFFFF
                    got = row_checksum(ts, img)
                except DecodeError:
                    raise
                except (ValueError, TypeError, KeyError, AttributeError, OverflowError, ValueProblem) as exc:
                    # a held row is checked before it is decoded: its values may be anything
                    raise DecodeError(f"row checksum cannot be computed ({field}): {exc}", i,
                                      _checksum_at(m, field), part="value") from None
                if got != want:
                    raise DecodeError(f"row checksum mismatch ({field}: sent {want}, computed {got})",
                                      i, _checksum_at(m, field), part="value")

    def _load_pending_zone(self, msg) -> bool:
        zone = getattr(self._rows, "pending_zone", None)
        if zone is None:
            return False
        try:
            self._rows.add_zone(zone)
        except ValueError as exc:
            if zone in self._rows.zone_names_seen():
                # the core asked again for a name it has (not valid UTF-8, or too long to pass)
                raise DecodeError(f"TIMESTAMP location: {exc}", msg, self._rows.pending_zone_at,
                                  part="value") from None
            # not a zone: values that use it fail where they are converted, naming their column
            self._count_bad_zone(msg, self._rows.pending_zone_at)
            self._rows.add_zone(zone, known=False)
        return True

    def _count_bad_zone(self, msg, location_at: int) -> None:
        """The core remembers the last 256 names that are no zone: one message naming more would
        make it forget one and ask for it again, forever.  Reported at the location that is one
        too many."""
        seen = self._batch.bad_zones
        count = seen[1] + 1 if seen[0] == msg else 1
        self._batch.bad_zones = (msg, count)
        if count > C.UNKNOWN_ZONE_SLOTS:
            raise DecodeError(f"more than {C.UNKNOWN_ZONE_SLOTS} distinct TIMESTAMP locations that "
                              "are no time zone in one message", msg, location_at, part="value")

    def _run_one(self, value: bytes, msg: int) -> None:
        """Decode one DML whose schema is known; never let it vanish silently.

        JSON the core declines (escaped member names or values, say) is valid all the same: it is
        decoded again in its canonical form, so core and twin read the same document.  An error
        found there names the place of the same member in the message as sent."""
        canonical, original = False, value
        while True:
            try:
                if self._rows.run([value], 0, msg) == 1:
                    return
                if self._load_pending_zone(msg):
                    continue
            except DecodeError as exc:
                if canonical and type(exc) is DecodeError and exc.byte_offset:
                    raise _in_original(exc, value, original) from None
                raise
            if self.encoding == "json" and not canonical:
                canonical, value = True, canonical_json(value, msg)
                if value is not None:
                    continue
            raise DecodeError("message is in a form the Cython core does not decode; decode it "
                              "with implementation='python'", msg, 0, part="value")

    @staticmethod
    def _null_value(i):
        raise DecodeError("null value (the simple protocol never sends tombstones)", i, part="value")

    def _decompress(self, v, i):
        try:
            return decompress(bytes(v), self._compression, self._max_message_bytes)
        except ValueError as exc:
            raise DecodeError(f"{self._compression} decompression failed: {exc}", i, 0,
                              part="value") from None

    def _wanted_table(self, database, table) -> bool:
        return self._table is None or (database, table) == self._table

    def _slow_message(self, value: bytes, i: int) -> None:
        m = parse_message(value, i, self.encoding)
        if m.kind == "DML":
            key = (m.database, m.table, m.schema_version)
            if self.config.targets is not None and not self._wanted_table(m.database, m.table):
                return
            # "known" is what the row decoder has a plan for (``_planned``: a version announced in
            # a decode() that failed keeps its plan), so that this path and the fast path, which
            # asks the row decoder, always make the same choice between decoding and holding
            if m.claim_check_location is not None and self.claim_check_resolver is not None \
                    and key in self._planned:
                self._claim_check(m, i, i)
                return
            if key in self._planned:  # the fast path declined it: decode it on its own
                self._run_one(value, i)
                return
            self._hold(_Held(value, key, m.type, m.commit_ts, *self._batch.meta(i), self._batch.number, i,
                             m.claim_check_location))
            return
        self._control(m, i, i)

    def _claim_check(self, m: Msg, i, row_msg: int) -> None:
        """Decode the full event of a claim-check message from its file.  An unreadable file is
        UnavailableError (the resolver's failure); a file that holds no valid event, DecodeError
        naming the location."""
        location = m.claim_check_location
        raw = claim_check.fetch(self.claim_check_resolver, location, i)
        value = raw
        if raw[:1] == b"{":
            try:
                value = claim_check.unwrap(raw, location, i)[1] or raw
            except DecodeError:
                value = raw  # a JSON-encoded message stored raw (claim-check-raw-value)
        try:
            if self._compression != "none":
                value = self._decompress(value, i)
            full = parse_message(value, i, self.encoding)
            if full.kind != "DML" or full.claim_check_location is not None:
                raise DecodeError("the file does not hold the full DML event", i, 0, part="value")
            if (full.database, full.table, full.schema_version) not in self._planned:
                raise DecodeError("the event's schema version is unknown", i, 0, part="value")
            stop, self._rows.stop_on_claim_check = self._rows.stop_on_claim_check, False
            try:
                self._run_one(value, row_msg)
            finally:
                self._rows.stop_on_claim_check = stop
        except UnavailableError:
            raise
        except DecodeError as exc:
            raise DecodeError(f"claim-check file {location!r}: {exc.reason}", exc.message_index,
                              exc.byte_offset, exc.column, exc.part) from None

    def _control(self, m: Msg, msg: int, row_msg: int) -> None:
        announced = []   # as the message sent them (its output row shows that)
        for field, obj in (("preTableSchema", m.pre_table_schema), ("tableSchema", m.table_schema)):
            if obj is not None:
                try:
                    ts = table_schema_from_dict(obj)
                except TableSchemaError as exc:
                    where = field if exc.field == "tableSchema" else f"{field}.{exc.field}"
                    # at the value at fault; a member left out, at the object that lacks it
                    raise DecodeError(f"invalid TableSchema: {where}: {exc.problem}", msg,
                                      nearest_at(m, (field,) + exc.path), exc.column, part="value") from None
                if field == "tableSchema":
                    self._check_schema_change(m, announced[-1] if announced else None, ts, msg)
                self._store_schema(ts)
                announced.append(ts)
        ts = announced[-1] if announced else None
        database = m.database or (ts.database if ts else None)
        table = m.table or (ts.table if ts else None)
        keep = self._control_events if self.config.targets is not None else True
        if m.kind != "WATERMARK" and self.config.targets is not None and not self._wanted_table(database, table):
            keep = False
        if keep:
            commit_ts = m.commit_ts or 0
            # the TableSchema shown is the last one announced: tableSchema, else preTableSchema
            shown = "tableSchema" if m.table_schema is not None else "preTableSchema"
            for name, v in (("commitTs", commit_ts), ("buildTs", m.build_ts),
                            ("version", ts.version if ts else None), ("tableID", ts.table_id if ts else None)):
                if v is not None and not 0 <= v <= _INT64_MAX:
                    path = name if name in ("commitTs", "buildTs") else (shown, name)
                    raise DecodeError(f"{name} out of int64 range", msg, field_at(m, path), part="value")
            op = {"WATERMARK": "RESOLVED", "BOOTSTRAP": "BOOTSTRAP"}.get(m.kind, "DDL")
            self._rows.append_control({
                "_op": op, "_commit_ts": commit_ts, "_schema": database, "_table": table,
                "_ddl": m.sql, "_ddl_type": m.type if m.kind in ("DDL", "BOOTSTRAP") else None,
                "_table_schema": ts.json if ts is not None else None,
                "_schema_version": ts.version if ts is not None else None,
                "_table_id": ts.table_id if ts is not None else None, "_build_ts": m.build_ts,
                "_msg": row_msg})
        for t in announced:
            self._release(t.key)

    def _check_schema_change(self, m: Msg, before, after, msg: int) -> None:
        """Typed mode: a DDL of the table (its TableSchema before and after) must not add a
        column the target lacks nor drop one it has; checked before the new version is stored,
        so a failed check leaves the cache as it was."""
        targets = self.config.targets
        if targets is None or before is None or after is None or (after.database, after.table) != self._table \
                or after.key in self._versions_checked or after.key in self._schemas:
            return
        if self._schema_version is None or after.version > self._schema_version:
            what = f"the DDL of schema version {after.version}" + (f" ({m.sql})" if m.sql else "")
            schema_change(f"{after.database}.{after.table}", [t.name for t in targets],
                          [c.name for c in before.columns], [c.name for c in after.columns], what, msg,
                          self._on_schema_change, self.stats)
        self._versions_checked.add(after.key)   # history before the typed schema's version too

    def _hold(self, h: _Held) -> None:
        self._batch.held.append(self._held.append(h))
        while len(self._held) > self.hold_max_rows or self._held.bytes > self.hold_max_bytes:
            if self.on_hold_overflow == "raise":
                oldest = self._held.oldest()
                raise DecodeError(
                    f"{len(self._held)} messages ({self._held.bytes} bytes) held waiting for table "
                    f"schemas; the oldest needs {oldest.key[0]}.{oldest.key[1]} schema version "
                    f"{oldest.key[2]}, never announced by a BOOTSTRAP or DDL "
                    "(raise hold_max_rows/hold_max_bytes, seed schemas=, or use on_hold_overflow='emit')",
                    None, part="value")
            self._emit_undecodable(self._held.pop_oldest())

    def _release(self, key) -> None:
        for h in self._held.take(key):
            row_msg = self._batch.virtual((h.partition, h.offset))
            origin = h.index if h.batch == self._batch.number else None   # None: an earlier batch
            try:
                if self.verify_checksum:
                    self._verify_checksums([(origin, h.value)])
                if h.claim_check is not None and self.claim_check_resolver is not None:
                    self._claim_check(parse_message(h.value, origin, self.encoding), origin, row_msg)
                else:
                    self._run_one(h.value, row_msg)
            except DecodeError as exc:
                # a held message from an earlier batch has no index here, but its Kafka position
                if exc.message_index != origin:
                    reason = exc.reason + (" (a held message from an earlier batch)" if origin is None else "")
                    exc = (UnavailableError(reason, origin, location=exc.location)
                           if isinstance(exc, UnavailableError)
                           else DecodeError(reason, origin, exc.byte_offset, exc.column, exc.part))
                if h.partition is not None or h.offset is not None:
                    exc.at_kafka(h.partition, h.offset)
                if origin is None:
                    exc.held = h    # for the error policy: no message of this batch is at fault
                raise exc from None

    def _emit_undecodable(self, h: _Held) -> None:
        if h.commit_ts is None or h.commit_ts > _INT64_MAX:
            raise DecodeError("held message has an invalid commitTs")
        self._rows.append_control({
            "_op": h.op, "_commit_ts": h.commit_ts, "_schema": h.key[0], "_table": h.key[1],
            "_schema_version": h.key[2], "_undecodable": True, "_raw": h.value,
            "_msg": self._batch.virtual((h.partition, h.offset))})
