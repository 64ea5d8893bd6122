"""``AvroDecoder``: TiCDC Avro protocol (Confluent framing + Schema Registry) → ``pyarrow.RecordBatch``."""
from __future__ import annotations

from dataclasses import dataclass

import orjson
import pyarrow as pa

from .. import _constants as C
from .. import _impl
from ..arrow_types import Target, as_arrow_schema, compile_targets
from ..columns import output_fields
from ..errors import DecodeError, UnavailableError, check_on_schema_change, schema_change
from ..options import renamed
from .._frontend import (FrontEnd, check_mode_options, drive_fast_path, exclusive, as_binary_chunk, offsets64, as_pylist,
                         finish_rows, is_binary_array, with_kafka_fields)
from ..tables import TableRouter, check_tables, split_table
from ..timezones import get_zone, local_table
from .reference import ReferenceAvroRows
from .registry import RegistryFailure, SchemaSource
from .schema import SchemaProblem, compile_writer_schema

_I64 = (1 << 63) - 1

@dataclass(frozen=True)
class AvroConfig:
    targets: tuple[Target, ...] | None
    schema_name: str | None
    table_name: str | None
    control_events: bool
    extra_columns: str
    timezone: str
    tz_bounds: tuple
    tz_offsets: tuple
    invalid_utf8: str = "replace"
    old_image: bool = False


class AvroDecoder(FrontEnd):
    """Decode TiCDC ``protocol=avro`` messages (Confluent wire format: ``0x00 ‖ int32 id ‖ Avro``).

    Parameters
    ----------
    registry: Schema Registry URL, ``SchemaRegistryClient`` config dict (auth, TLS, timeouts) or
        client; writer schemas are fetched once per id with ``GET /schemas/ids/{id}``.
    schemas: ``{schema id: writer schema JSON}`` for offline use (no registry needed).
    table, schema: typed mode; columns map by name onto ``schema``; a writer column the target
        lacks is ignored (``extra_columns="ignore"``) or an error (``"error"``); a target column the
        writer lacks is null.
    timezone: the TiCDC server time zone TIMESTAMP strings were rendered in.
    on_error: ``"fail"`` (default), ``"skip"`` or ``"dead_letter"`` (docs/error-handling.md); a
        registry that cannot be reached is never a message error (``UnavailableError``).
    invalid_utf8: ``replace`` (default; counted in ``invalid_utf8_replaced``) or ``error``, for
        invalid UTF-8 in a string column (as for ``OpenDecoder``).
    old_image: typed mode only: add a ``_before`` column after the table's columns, a struct of
        the same typed fields, converted exactly like the row: UPDATE the ``_ticdc_before`` record
        (only sent by TiCDC's ``avro-include-before-value=true``; null otherwise), DELETE the
        deleted row as sent (the key columns of a tombstone, the pre-row of ``_tidb_op`` ``d``;
        the columns hold it too), null on INSERT/UPSERT and control rows.
    on_schema_change: typed mode: what a new value schema of the table does when, against the
        one before it, it changes what the typed output holds (an ADD/DROP COLUMN after the query
        started): it drops a column the typed schema has, or adds one it lacks while the typed
        schema had every column of the table (a projection is not stopped by a new column):
        ``"fail"`` (default) raises ``SchemaChangedError`` at the first message written
        with it, naming the table and the columns (never skipped by ``on_error``); ``"ignore"``
        counts it in ``stats.schema_changes_ignored`` and goes on: new columns are dropped
        (unless ``extra_columns="error"``), dropped ones null.  Checked once per schema id.
        "The one before" is the schema ``schema_version`` names when given, else the table's last
        value schema this decoder saw (a decoder that starts after the change cannot see it).
    schema_version: the registry id of the value schema the typed ``schema`` was taken from: ids
        up to it are the table's history, not a change (registry ids only grow).  The same option
        as ``SimpleDecoder``'s; ``schema_id=`` is its old name (DeprecationWarning).
    topic: with ``schema="auto"``: the Kafka topic; the typed schema is then the default Arrow
        schema of the registry's latest value schema of subject ``<topic>-value``, asked once at
        construction (``latest_value_schema``), and ``schema_version`` is its id.  It must be
        ``table``'s; a later id that changes the table is a schema change (``on_schema_change``).
    tables, unlisted: a consumer of several topics (one per table) in one pass
        (``ticdc_fast.tables``): ``{"db.t1": schema, ...}``; ``decode`` returns a
        ``TableBatches`` whose batch of each table is what ``table="db.t1", schema=...`` gives;
        each message goes by its schema id to its table's decoder (docs/avro-protocol.md).
    """

    def __init__(self, registry=None, *, schemas: dict | None = None, table=None,
                 schema: pa.Schema | None = None, timezone: str = "UTC", control_events: bool = True,
                 extra_columns: str = "ignore", registry_timeout: float = 10.0, registry_retries: int = 3,
                 invalid_utf8: str = "replace", on_error: str = "fail", old_image: bool = False,
                 on_schema_change: str = "fail", schema_version: int | None = None, topic: str | None = None,
                 tables: dict | None = None, unlisted: str = "skip", implementation: str | None = None,
                 schema_id: int | None = None):
        if schema_id is not None:
            schema_version = renamed({"schema_id": schema_id, "schema_version": schema_version},
                                     "AvroDecoder")["schema_version"]
        schema_id = schema_version
        check_mode_options(schema is not None, tables, unlisted, control_events)
        self._init_front(on_error, invalid_utf8, implementation)
        self._compiled = {}     # schema id -> WriterSchema, shared by the decoders of tables={...}
        self._same = {}         # the parts of those schemas, shared by equal parts of later ones
        self._on_schema_change = check_on_schema_change(on_schema_change)
        self._schema_id = schema_id
        self._baseline_columns = None   # columns of the value schema ``schema_id`` names
        self._last_columns = None       # columns of the table's last value schema seen
        if tables is not None:
            tables = check_tables(tables, unlisted, table=table, schema=schema)
            self.source = SchemaSource(registry, schemas, timeout=registry_timeout, retries=registry_retries)
            options = dict(timezone=timezone, control_events=control_events, extra_columns=extra_columns,
                           invalid_utf8=invalid_utf8, implementation=implementation)
            typed = dict(on_schema_change=on_schema_change)
            parts = {key: self._part(table=key, schema=sch, old_image=old_image, **typed, **options)
                     for key, sch in tables.items()}
            other = self._part(**dict(options, control_events=True)) if unlisted == "generic" else None
            self._router = TableRouter(self, parts, other, AvroRouter(tables, self), on_error)
            return
        if schema is not None and not (isinstance(schema, str) and schema == "auto"):
            schema = as_arrow_schema(schema)      # pyarrow, StructType or DDL
        if (table is None) != (schema is None):
            raise ValueError("typed mode needs both table= and schema=")
        if old_image and schema is None:
            raise ValueError("old_image=True is for typed mode (generic output has the old image in 'before')")
        if extra_columns not in ("ignore", "error"):
            raise ValueError("extra_columns must be 'ignore' or 'error'")
        get_zone(timezone)
        self.source = SchemaSource(registry, schemas, timeout=registry_timeout, retries=registry_retries)
        if isinstance(schema, str) and schema == "auto":
            if topic is None:
                raise ValueError("schema='auto' needs topic= (the registry subject is '<topic>-value')")
            from .latest import latest_value_schema
            latest_id, schema = latest_value_schema(self.source, topic, table)
            self._schema_id = latest_id if schema_id is None else schema_id
        targets = compile_targets(schema) if schema is not None else None
        sn, tn = split_table(table) if table is not None else (None, None)
        bounds, offs = local_table(timezone)
        self.config = AvroConfig(targets, sn, tn, bool(control_events), extra_columns, timezone, bounds, offs,
                                 invalid_utf8, bool(old_image))
        self._rows = (_impl.core.AvroPlan(self.config) if self.implementation == "cython"
                      else ReferenceAvroRows(self.config))
        self._fields = output_fields("avro", targets, old_image=bool(old_image))
        self._writers = {}

    def output_schema(self, *, partitions: bool = False, offsets: bool = False) -> pa.Schema:
        if self._router is not None:
            raise ValueError("a decoder given tables={...} has one schema per table: output_schemas()")
        return self._policy.output_schema(self._batch_schema(partitions, offsets))

    # ------------------------------------------------------------------ many tables
    def _part(self, **options) -> "AvroDecoder":
        """A table's decoder of ``tables={...}``: the registry client and compiled schemas shared."""
        part = AvroDecoder(**options)
        part.source, part._compiled, part._same = self.source, self._compiled, self._same
        return part

    def output_schemas(self, *, partitions: bool = False, offsets: bool = False) -> dict:
        """``tables={...}``: ``{"db.table": schema, ...}`` of the batches ``decode`` gives."""
        if self._router is None:
            raise ValueError("output_schemas() is for tables={...}; use output_schema()")
        return self._router.output_schemas(partitions, offsets)

    def _compiled_schema(self, schema_id: int):
        ws = self._compiled.get(schema_id)
        if ws is None:
            ws = self._compiled[schema_id] = compile_writer_schema(schema_id, self.source.get(schema_id), self._same)
        return ws

    # TableRouter's hooks are FrontEnd's no-ops: no state across batches but schemas, which are
    # immutable and kept whatever happens

    @exclusive
    def writer_schema(self, schema_id: int):
        """The compiled writer schema of an id (fetched and cached on first use)."""
        return self._writer_schema(schema_id)

    def _writer_schema(self, schema_id: int, check=None):
        ws = self._writers.get(schema_id)
        if ws is None:
            ws = self._compiled_schema(schema_id)
            if check is not None:
                check(ws)   # before the row decoder gets it: a failed check stops here again
            self._rows.register(ws)     # first: a registration that fails (memory) is tried again
            self._writers[schema_id] = ws
        return ws

    def _check_schema_change(self, ws, i: int) -> None:
        """Typed mode: a new value schema of the table, against the one before it (the schema
        ``schema_id`` names, else the last one this decoder saw), must not add a column the
        target lacks nor drop one it has."""
        cfg = self.config
        if cfg.targets is None or (ws.database, ws.table) != (cfg.schema_name, cfg.table_name):
            return
        if self._schema_id is not None:
            if ws.schema_id <= self._schema_id:
                return   # the typed schema's own version or the table's history
            if self._baseline_columns is None:
                base = self._writer_schema(self._schema_id)
                self._baseline_columns = [f.name for f in base.column_fields()]
            before = self._baseline_columns
        else:
            before = self._last_columns
        after = [f.name for f in ws.column_fields()]
        if before is not None:
            schema_change(f"{ws.database}.{ws.table}", [t.name for t in cfg.targets], before, after,
                          f"value schema id {ws.schema_id}", i, self._on_schema_change, self.stats)
        self._last_columns = after

    def _core_text_counter(self) -> int:
        return getattr(self._rows, "invalid_utf8_replaced", 0)

    def _decode_batch(self, keys, values, partitions, offsets) -> pa.RecordBatch:
        if self.implementation == "cython" and is_binary_array(values) and \
                (keys is None or is_binary_array(keys)):
            return self._decode_arrow(keys, values, partitions, offsets)
        n = self._check_stretch(keys, values, partitions, offsets)
        values = as_pylist(values)
        keys = as_pylist(keys) if keys is not None else [None] * n
        parts = as_pylist(partitions) if partitions is not None else None
        offs = as_pylist(offsets) if offsets is not None else None
        keys = [None if k is None else bytes(k) for k in keys]
        values = [None if v is None else bytes(v) for v in values]
        rows = self._rows
        try:
            drive_fast_path(
                n, lambda i: rows.run(keys, values, i),
                # schemas now registered: the fast path takes the message
                lambda j: j < n and self._fetch_schemas(keys[j], values[j], j),
                lambda j: self._slow_message(keys[j], values[j], j))
            return finish_rows(rows, self._fields, parts, offs)
        except BaseException:
            rows.reset()
            raise

    def _decode_arrow(self, keys, values, partitions, offsets) -> pa.RecordBatch:
        """Zero-copy input: the core reads the Arrow buffers; only the rare messages the fast path
        leaves (new schema ids, DDL values, errors) are materialised as bytes."""
        n = self._check_stretch(keys, values, partitions, offsets)
        values = as_binary_chunk(values)
        keys = as_binary_chunk(keys) if keys is not None else pa.nulls(n, pa.large_binary())
        rows = self._rows
        try:
            rows.prepare_arrow(keys, values)
            # registering a schema leaves the prepared batch in place; run() on lists (the slow
            # message) has its own pointer arrays
            drive_fast_path(
                n, lambda i: rows.run_prepared(i, n),
                lambda j: j < n and self._fetch_schemas(keys[j].as_py(), values[j].as_py(), j),
                lambda j: self._slow_message(keys[j].as_py(), values[j].as_py(), j))
            return finish_rows(rows, self._fields, partitions, offsets)
        except BaseException:
            rows.reset()
            raise

    def _fetch_schemas(self, key, value, i) -> bool:
        fetched = False
        for data, part in ((key, "key"), (value, "value")):
            if data is None or len(data) < 5 or data[0] != 0:
                continue
            sid = int.from_bytes(data[1:5], "big", signed=True)
            if sid in self._writers:
                continue
            try:
                self._writer_schema(sid, (lambda ws: self._check_schema_change(ws, i)) if part == "value" else None)
            except RegistryFailure as exc:
                if not exc.missing:
                    raise UnavailableError(str(exc), i, 1, part=part, location=self.source.url) from None
                raise DecodeError(str(exc), i, 1, part=part) from None
            except SchemaProblem as exc:
                raise DecodeError(str(exc), i, 1, part=part) from None
            fetched = True
        return fetched

    def _slow_message(self, key, value, i) -> None:
        """What the fast path leaves: DDL values, and malformed framing (reported here)."""
        if value is None:
            if key is None:
                # ticdc builds the Kafka key from primary-key columns only, so a table whose only
                # key is a NOT NULL unique one sends deletes with neither key nor value: a DELETE
                # of a row nobody can name, kept (not an error) so that nothing is lost silently
                self._rows.append_control({"_op": "DELETE", "_commit_ts": None, "_schema": None,
                                           "_table": None, "before": [], "_msg": i})
                return
            if key[:1] != b"\x00" or len(key) < 5:
                raise DecodeError("key does not start with the Confluent magic byte 0x00" if key[:1] != b"\x00"
                                  else "truncated Confluent header", i, 0, part="key")
        elif not value:
            raise DecodeError("empty value", i, 0, part="value")
        elif value[0] in (1, 2) and key is not None:
            # TiCDC sends DDL and checkpoint values without a key; its decoder takes any keyed
            # message for a row, whose value must start with 0x00, and fails on these
            raise DecodeError(f"{'DDL (0x01)' if value[0] == 1 else 'checkpoint (0x02)'} value with a "
                              "Kafka key (TiCDC sends them without one)", i, 0, part="key")
        elif value[0] == 1:
            self._ddl(value, i)
            return
        elif value[0] not in (0, 2, 3):
            raise DecodeError(f"unknown leading byte 0x{value[0]:02x} (Confluent magic 0x00 expected)",
                              i, 0, part="value")
        elif value[0] == 0 and len(value) < 5:
            raise DecodeError(f"truncated Confluent header: {len(value)} of 5 bytes", i, 0, part="value")
        elif value[0] == 3 and (key is None or key[:1] != b"\x00"):
            raise DecodeError("delete event without a Confluent-framed key", i, 0, part="key")
        if key is not None and (key[:1] != b"\x00" or len(key) < 5):
            raise DecodeError("key does not start with the Confluent magic byte 0x00" if key[:1] != b"\x00"
                              else "truncated Confluent header", i, 0, part="key")
        # every id is known and the framing is sound: decode it alone (errors come from there)
        if self._rows.run([key], [value], 0, i) != 1:
            raise DecodeError("message could not be decoded", i, 0, part="value")

    def _ddl(self, value: bytes, i: int) -> None:
        try:
            doc = orjson.loads(value[1:])
        except orjson.JSONDecodeError as exc:
            raise DecodeError(f"malformed DDL JSON: {exc.msg}", i, 1 + exc.pos, part="value") from None
        if not isinstance(doc, dict):
            raise DecodeError("DDL value is not a JSON object", i, 1, part="value")
        ts, typ = doc.get("commitTs"), doc.get("type")
        if type(ts) is not int or not 0 <= ts <= _I64 or \
                (typ is not None and (type(typ) is not int or not -(1 << 31) <= typ < (1 << 31))):
            raise DecodeError("DDL value has an invalid commitTs or type (not an int32)", i, 1, part="value")
        for name in ("schema", "table", "query"):   # Go strings: absent or null is "", anything else fails
            if doc.get(name) is not None and type(doc[name]) is not str:
                raise DecodeError(f"DDL value field {name!r} is not a string", i, 1, part="value")
        schema, table = doc.get("schema") or None, doc.get("table") or None
        cfg = self.config
        if cfg.targets is not None and (not cfg.control_events or (schema, table) != (cfg.schema_name, cfg.table_name)):
            return
        self._rows.append_control({"_op": "DDL", "_commit_ts": ts, "_schema": schema, "_table": table,
                                   "_ddl": doc.get("query"), "_ddl_type": typ, "_msg": i})


class AvroRouter:
    """``tables={...}``: each message's table from the schema id in its Confluent header (the
    value's; the key's for a delete), looked up once per id; a DDL's from its JSON; a checkpoint,
    or a message whose table cannot be read, goes to every table's decoder (which reports it as
    the single-table decoders do)."""

    def __init__(self, tables, decoder: AvroDecoder):
        from ..tables import ROUTE_ALL, ROUTE_UNLISTED
        self._all, self._unlisted = ROUTE_ALL, ROUTE_UNLISTED
        self._index = {split_table(t): k for k, t in enumerate(tables)}
        self._decoder = decoder
        self._by_id: dict[int, int] = {}

    def __call__(self, keys, values):
        import numpy as np
        values = as_binary_chunk(values if isinstance(values, pa.Array) else pa.array(values, pa.large_binary()))
        n = len(values)
        bufs = values.buffers()
        offs = offsets64(values)
        data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
        starts, lens = offs[:-1], offs[1:] - offs[:-1]
        framed = lens >= 5
        if values.null_count:
            framed &= values.is_valid().to_numpy(zero_copy_only=False)
        at = starts[framed]
        framed[framed] = data[at] == 0
        at = starts[framed]
        ids = ((data[at + 1].astype(np.uint32) << 24) | (data[at + 2].astype(np.uint32) << 16)
               | (data[at + 3].astype(np.uint32) << 8) | data[at + 4].astype(np.uint32)).view(np.int32)
        codes = np.empty(n, np.int32)
        rows = np.flatnonzero(framed)
        for sid in np.unique(ids).tolist():
            codes[rows[ids == sid]] = self._by_schema_id(sid, int(rows[ids == sid][0]))
        for i in np.flatnonzero(~framed).tolist():
            codes[i] = self._route_rest(keys[i] if keys is not None else None, values[i].as_py(), i)
        return codes

    def _by_schema_id(self, sid: int, i: int, part: str = "value") -> int:
        code = self._by_id.get(sid)
        if code is None:
            try:
                ws = self._decoder._compiled_schema(sid)
            except RegistryFailure as exc:
                if not exc.missing:
                    raise UnavailableError(str(exc), i, 1, part=part, location=self._decoder.source.url) from None
                return self._all          # the table's decoder reports the unknown id
            except SchemaProblem:
                return self._all
            code = self._by_id[sid] = self._index.get((ws.database, ws.table), self._unlisted)
        return code

    def _route_rest(self, key, value, i: int) -> int:
        if hasattr(key, "as_py"):
            key = key.as_py()
        if value is not None and value[:1] == b"\x01" and key is None:
            try:
                doc = orjson.loads(value[1:])
            except orjson.JSONDecodeError:
                return self._all
            if not isinstance(doc, dict):
                return self._all
            schema, table = doc.get("schema") or None, doc.get("table") or None
            if not all(v is None or type(v) is str for v in (schema, table)):
                return self._all
            return self._index.get((schema, table), self._unlisted)
        if (value is None or value[:1] == b"\x03") and key is not None and key[:1] == b"\x00" and len(key) >= 5:
            return self._by_schema_id(int.from_bytes(key[1:5], "big", signed=True), i, "key")
        return self._all
