"""``OpenDecoder``: TiCDC Open Protocol Kafka messages → ``pyarrow.RecordBatch``."""
from __future__ import annotations

from array import array
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from .. import _constants as C
from .. import _impl
from .. import claim_check
from ..arrow_types import Target, as_arrow_schema, compile_targets
from ..columns import output_fields
from ..compression import DEFAULT_MAX_MESSAGE_BYTES, check_compression, check_max_message_bytes
from .._frontend import FrontEnd, add_kafka_columns, check_mode_options, as_binary_chunk, int64_array, offsets64, init_invalid_utf8, as_pylist, kafka_position_arrays, with_kafka_fields
from ..errors import DecodeError, check_on_schema_change
from ..policy import DecodeStats
from ..tables import OTHER_TABLES, TableBatches, check_tables, split_table
from ..timezones import get_zone, local_table
from . import reference
from .unknown import TwinLog, UnknownColumns


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
    invalid_utf8: str = "replace"
    old_image: bool = False
    tables: tuple = ()          # tables={...}: one typed config per listed table (this one generic)
    unlisted: str = "skip"


@dataclass(frozen=True)
class _Layout:
    """One output batch's columns and what its claim-check rows must match."""
    fields: list
    table: str | None           # "db.t" of a typed batch, None for generic rows
    claim_check_column: int


def _layout(fields: list, table: str | None) -> _Layout:
    return _Layout(fields, table, [f.name for f in fields].index(C.COL_CLAIM_CHECK))


class OpenDecoder(FrontEnd):
    """Decode TiCDC Open Protocol messages (both the tiflow and the ticdc flavour).

    Parameters
    ----------
    table, schema:
        Typed mode: ``table="db.tbl"`` and a ``pyarrow.Schema`` of that table's columns; the output
        holds ``_op``, ``_commit_ts``, those columns converted exactly, then ``_ddl``,
        ``_handle_key_only``, ``_claim_check_location``, ``_before_incomplete``.  Without them: generic mode
        (``after``/``before`` maps of text).
    tables, unlisted:
        Many tables in one pass: ``tables={"db.t1": schema1, ...}`` (pyarrow schemas,
        ``StructType`` or DDL strings) makes ``decode`` return a ``TableBatches``: per listed table
        the batch ``table="db.t1", schema=schema1`` would give (every message decoded once).
        Rows of other tables: ``unlisted="skip"`` (default; counted in ``stats.unlisted_rows``)
        or ``"generic"`` (generic rows under ``OTHER_TABLES``).  See docs/open-protocol.md.
    timezone:
        The TiCDC server time zone that TIMESTAMP values were rendered in (IANA name, ``UTC`` or
        ``±HH:MM``).  Default ``UTC``.
    compression:
        The changefeed's ``large-message-handle-compression``: ``none``, ``snappy`` or ``lz4``.
    control_events:
        Typed mode only: keep RESOLVED rows and this table's DDL rows (default True); with
        ``tables=``, in every listed table's batch (``OTHER_TABLES`` holds what the generic
        decode gives).
    old_image:
        Typed mode only: add a ``_before`` column after the table's columns, a struct of the
        same typed fields holding the row's old image, converted exactly like the new one:
        UPDATE its ``p`` image, DELETE the deleted row (which the columns hold too), null on
        INSERT and control rows.  What tells a primary-key change apart (docs/spark.md).
    max_message_bytes:
        With compression: the most bytes the events of one Kafka message (or claim-check file)
        may decompress to (default 128 MiB); beyond it the message is a DecodeError, found
        without allocating more.
    claim_check_resolver:
        callable(location) -> the claim-check file's bytes (e.g. ``fsspec_resolver()``).  When
        given, each claim-check event (its key has ``ccl``) comes out as the full event read from
        the file instead of its handle-key columns.  A file that cannot be read raises
        ``UnavailableError``; one that holds no valid event, ``DecodeError``.
    on_error:
        What a message that cannot be decoded does: ``"fail"`` (default: DecodeError),
        ``"skip"`` (left out, counted in ``stats``) or ``"dead_letter"`` (one ``_op="ERROR"`` row
        with ``_error``, ``_raw_key``, ``_raw_value``); see docs/error-handling.md.  A claim-check
        file that cannot be read is never a message error.
    invalid_utf8:
        ``replace`` (default): invalid UTF-8 in a column's text becomes U+FFFD (as Python's
        ``errors="replace"``), and ``invalid_utf8_replaced`` counts the values replaced by
        successful ``decode()`` calls; ``error``: a DecodeError.  A ``pa.binary()`` column gets
        the original bytes either way.
    on_schema_change:
        Typed mode: what a row of a typed table that carries a column its schema lacks does
        when the schema held every column of the table's first row (not a projection):
        ``"fail"`` (default) raises ``SchemaChangedError`` at its message, naming the table and
        the columns; ``"ignore"`` counts it in ``stats.schema_changes_ignored`` (once per row that
        brings new columns) and goes on dropping them.  A schema that left out columns of the
        first row is a projection: new columns are more columns it does not ask for.
    implementation:
        ``auto`` (default), ``cython`` or ``python``.

    After each ``decode()`` call, ``unknown_columns`` is ``{"db.t": ("c1", ...)}``: per typed
    table the column names its rows carried (in any image) that the typed schema lacks, in
    first-seen order, cumulative over the decoder's life (a call that raised adds nothing);
    tables without such a column are left out.  ``missing_columns``, alike: the typed columns a
    row's full new image (INSERT, UPDATE) did not carry.
    """

    needs_keys = True
    protocol = "open"

    def __init__(self, *, table=None, schema: pa.Schema | None = None, tables: dict | None = None,
                 unlisted: str = "skip", timezone: str = "UTC",
                 compression: str = "none", control_events: bool = True,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 claim_check_resolver: Callable[[str], bytes] | None = None, on_error: str = "fail",
                 invalid_utf8: str = "replace", old_image: bool = False,
                 on_schema_change: str = "fail", implementation: str | None = None):
        self._auto_args = None
        self._unknown = None
        self._first_marks = None
        check_on_schema_change(on_schema_change)
        if isinstance(schema, str) and schema == "auto":
            self._defer_auto(dict(locals()))
            return
        if schema is not None:
            schema = as_arrow_schema(schema)      # pyarrow, StructType or DDL
        check_mode_options(schema is not None, tables, unlisted, control_events)
        self._init_front(on_error, invalid_utf8, implementation)
        if tables is not None:
            tables = check_tables(tables, unlisted, table=table, schema=schema)
        elif (table is None) != (schema is None):
            raise ValueError("typed mode needs both table= and schema=")
        if old_image and schema is None and tables is None:
            raise ValueError("old_image=True is for typed mode (generic output has the old image in 'before')")
        get_zone(timezone)  # validate early
        bounds, offsets = local_table(timezone)

        def config(table_schema, table_name, **more):
            names = split_table(table_name) if table_schema is not None else (None, None)
            return OpenConfig(check_compression(compression), timezone, bounds, offsets,
                              None if table_schema is None else compile_targets(table_schema),
                              names[0], names[1], bool(control_events),
                              check_max_message_bytes(max_message_bytes), invalid_utf8,
                              bool(old_image), **more)

        self.claim_check_resolver = claim_check_resolver
        self._core_plan = None
        self._layout = None                    # one table or generic: the batch's _Layout
        self._layouts: dict | None = None      # tables={...}: {"db.t" | OTHER_TABLES: _Layout}
        if tables is None:
            self.config = config(schema, table)
            self._fields = output_fields("open", self.config.targets, old_image=old_image, table_schema=schema)
            self._layout = _layout(self._fields, None if schema is None else ".".join(split_table(table)))
            if self.implementation == "cython":
                self._core_plan = _impl.core.OpenPlan(self.config)
            if schema is not None:
                self._unknown_logs({self._layout.table: self._core_plan}, {self._layout.table: schema},
                                   on_schema_change)
            return
        subs = tuple(config(sch, key) for key, sch in tables.items())
        self.config = replace(config(None, None), old_image=False, tables=subs, unlisted=unlisted)
        self._layouts = {key: _layout(output_fields("open", sub.targets, old_image=old_image, table_schema=sch), key)
                         for (key, sch), sub in zip(tables.items(), subs)}
        if unlisted == "generic":
            self._layouts[OTHER_TABLES] = _layout(output_fields("open", None), None)
        plans = [None] * len(subs)
        if self.implementation == "cython":
            self._core_plan = _impl.core.OpenPlan(self.config)
            plans = [_impl.core.OpenPlan(sub) for sub in subs]
            self._core_plan.set_routes(plans, unlisted == "generic")
        self._unknown_logs(dict(zip(tables, plans)), tables, on_schema_change)

    def _unknown_logs(self, plans: dict, schemas: dict, on_schema_change: str) -> None:
        """Per typed table the log of the columns its rows carry that its schema lacks: the
        core's typed plan, or the twin's ``TwinLog``."""
        logs = {t: plan if plan is not None else TwinLog() for t, plan in plans.items()}
        self._unknown = UnknownColumns(logs, on_schema_change,
                                       {t: [f.name for f in as_arrow_schema(s)] for t, s in schemas.items()})

    @property
    def unknown_columns(self) -> dict:
        """``{"db.t": ("c1", ...)}``: per typed table, the columns its rows carried that the
        typed schema lacks (first-seen order, over the decoder's life; calls that returned)."""
        return {} if self._unknown is None else self._unknown.report()

    @property
    def missing_columns(self) -> dict:
        """``{"db.t": ("c1", ...)}``: per typed table, the typed columns a row's full new image
        (INSERT, UPDATE; not handle-key-only or claim-check rows) did not carry (first-seen
        order, over the decoder's life; calls that returned)."""
        return {} if self._unknown is None else self._unknown.report_missing()

    def _defer_auto(self, args: dict) -> None:
        """``schema="auto"``: the typed schema is inferred from the table's rows in the first
        ``decode()`` batch (``infer_open_schema``), logged, and fixed from then on."""
        if args["table"] is None or args["tables"] is not None:
            raise ValueError("schema='auto' needs table= (and no tables=)")
        del args["self"]
        OpenDecoder(**{k: v for k, v in args.items()      # the other options are checked now
                       if k not in ("table", "schema", "tables", "unlisted", "old_image", "control_events")})
        self._auto_args = args
        self.stats = DecodeStats()
        init_invalid_utf8(self, args["invalid_utf8"])

    def _resolve_auto(self, keys, values) -> None:
        import logging
        from ..arrow_types import infer_open_schema
        args = self._auto_args
        try:
            schema = infer_open_schema(as_pylist(keys), as_pylist(values), args["table"],
                                       compression=args["compression"])
        except ValueError:
            raise ValueError(f"schema='auto': no row of {args['table']} in the first decode() batch "
                             "to infer its schema from; give schema= or decode a batch that holds one") from None
        logging.getLogger("ticdc_fast").warning(
            "schema='auto': the schema of %s inferred from the first batch's rows: %s", args["table"],
            ", ".join(f"{f.name} {f.type}" for f in schema))
        policy, stats = self._text_policy, self.stats
        self.__init__(**dict(args, schema=schema))
        self._text_policy, self.stats = policy, stats
        self._policy.stats = stats

    def output_schema(self, *, partitions: bool = False, offsets: bool = False) -> pa.Schema:
        if self._auto_args is not None:
            raise ValueError("schema='auto': the schema is inferred from the first decode() batch; "
                             "call output_schema() after it")
        if self._layouts is not None:
            raise ValueError("this decoder decodes several tables (tables={...}): each has its own "
                             "schema, see output_schemas()")
        return self._policy.output_schema(self._batch_schema(partitions, offsets))

    def output_schemas(self, *, partitions: bool = False, offsets: bool = False) -> dict:
        """``tables={...}``: the schema of each batch ``decode`` returns, by its key (the listed
        tables in order, then ``OTHER_TABLES`` and ``DEAD_LETTERS`` when they come)."""
        if self._layouts is None:
            raise ValueError("output_schemas() is for tables={...}; this decoder has output_schema()")
        return self._policy.output_schemas({
            key: with_kafka_fields(layout.fields, partitions=partitions, offsets=offsets)
            for key, layout in self._layouts.items()})

    def _core_text_counter(self) -> int:
        return self._core_plan.invalid_utf8_replaced if self._core_plan is not None else 0

    def _before_batch(self, keys, values) -> None:
        if self._auto_args is not None:
            self._resolve_auto(keys, values)

    def _decode_tables_batch(self, keys, values, partitions, offsets) -> TableBatches:
        pieces, skipped = self._decode_tables(keys, values)
        out = TableBatches()
        for k, (key, layout) in enumerate(self._layouts.items()):
            cols, msg_index = pieces[k]
            if self.claim_check_resolver is not None:
                cols = self._with_claim_checks_resolved(
                    cols, msg_index, layout,
                    lambda fkeys, fvalues, k=k: self._decode_tables(fkeys, fvalues)[0][k])
            add_kafka_columns(cols, msg_index, partitions, offsets)
            out[key] = pa.RecordBatch.from_arrays(cols, schema=with_kafka_fields(
                layout.fields, partitions=partitions is not None, offsets=offsets is not None))
        self.stats.unlisted_rows += skipped      # only once the whole stretch has decoded
        return out

    def _decode_tables(self, keys, values) -> tuple[list, int]:
        """([(columns, message index per row)] in ``_layouts`` order, unlisted rows skipped)."""
        if self.implementation == "cython":
            tables, other, skipped = self._core_plan.decode_tables(*self._core_buffers(keys, values))
        else:
            tables, other, skipped = reference.decode_tables(as_pylist(keys), as_pylist(values), self.config,
                                                             list(self._unknown.logs.values()))
        return tables + ([] if other is None else [other]), skipped

    def _decode_batch(self, keys, values, partitions, offsets) -> pa.RecordBatch | TableBatches:
        """One stretch; the columns its typed rows carried that the schemas lack are reported
        (and checked for a schema change) only if it decodes."""
        if self._unknown is None:
            return self._decode_stretch(keys, values, partitions, offsets)
        marks = self._first_marks or self._unknown.marks()   # a call's first stretch: its own
        self._first_marks = None
        try:
            out = self._decode_stretch(keys, values, partitions, offsets)
        except BaseException:
            self._unknown.rollback(marks)
            raise
        self._unknown.commit(marks, self.stats)
        return out

    def _part_begin(self, values=None) -> None:
        self._call_marks = self._first_marks = None if self._unknown is None else self._unknown.marks()

    def _part_rollback(self, mark) -> None:
        if self._unknown is not None and self._call_marks is not None:
            self._unknown.rollback(self._call_marks, reports=True)

    def _decode_stretch(self, keys, values, partitions, offsets) -> pa.RecordBatch | TableBatches:
        self._check_stretch(keys, values, partitions, offsets)
        if self._layouts is not None:
            return self._decode_tables_batch(keys, values, partitions, offsets)
        if self.implementation == "cython" and self.claim_check_resolver is None:
            extras = kafka_position_arrays(partitions, offsets)
            if not any(a.null_count for a in extras):
                # one hand-over, the Kafka columns gathered in the core
                return self._core_plan.decode_batch(*self._core_buffers(keys, values), self._batch_schema(
                    partitions is not None, offsets is not None), extras)
        cols, msg_index = self._decode_columns(keys, values)
        if self.claim_check_resolver is not None:
            cols = self._with_claim_checks_resolved(cols, msg_index, self._layout, self._decode_columns)
        add_kafka_columns(cols, msg_index, partitions, offsets)
        return pa.RecordBatch.from_arrays(cols, schema=self._batch_schema(
            partitions is not None, offsets is not None))

    def _decode_columns(self, keys, values):
        if self.implementation == "cython":
            return self._core_plan.decode(*self._core_buffers(keys, values))
        log = None if self._unknown is None else next(iter(self._unknown.logs.values()))
        return reference.decode(as_pylist(keys), as_pylist(values), self.config, log)

    def _core_buffers(self, keys, values) -> tuple:
        kbuf, koff = _contiguous(keys, "key")
        vbuf, voff = _contiguous(values, "value")
        if self.config.compression != "none":
            vbuf, voff = _contiguous(reference.decompress_event_values(
                _as_list(vbuf, voff), self.config.compression, self.config.max_message_bytes), "value")
        return kbuf, koff, vbuf, voff

    def _with_claim_checks_resolved(self, cols: list, msg_index, layout: _Layout, decode_files) -> list:
        """Replace each claim-check row by the full event from its file.

        The batch was decoded as usual (a claim-check event is a row of handle-key columns with
        ``_claim_check_location`` set), so a batch without one costs a null count.  The files'
        events, each a one-event Kafka message of its own, are decoded together by the same
        implementation and spliced in at the rows they replace: one row for one row, so the
        message index (and ``_partition``/``_offset``) of every row stays that of its message.
        """
        locations = cols[layout.claim_check_column]
        if locations.null_count == len(locations):
            return cols
        rows = pc.indices_nonzero(locations.is_valid()).to_pylist()
        origin = [_at(msg_index, j) for j in rows]
        file_keys, file_values = [], []
        for j, msg in zip(rows, origin):
            location = locations[j].as_py()
            key, value = claim_check.unwrap(claim_check.fetch(self.claim_check_resolver, location, msg),
                                            location, msg)
            if key is None or value is None:
                raise DecodeError(f"claim-check file {location!r} has no event "
                                  f"{'key' if key is None else 'value'}", msg, part="value")
            file_keys.append(key)
            file_values.append(value)
        try:
            full, full_msg = decode_files(file_keys, file_values)
        except DecodeError as exc:
            k = exc.message_index
            if k is None:
                raise
            raise DecodeError(f"claim-check file {locations[rows[k]].as_py()!r}: {exc.reason}", origin[k],
                              exc.byte_offset, exc.column,
                              None if exc.part is None else f"claim-check {exc.part}") from None
        self._check_claim_check_events(layout, cols, rows, origin, locations, full, full_msg)
        out = []
        for col, sub in zip(cols, full):
            pieces, start = [], 0
            for k, j in enumerate(rows):
                pieces += [col.slice(start, j - start), sub.slice(k, 1)]
                start = j + 1
            pieces.append(col.slice(start))
            out.append(pa.concat_arrays(pieces))
        return out

    def _check_claim_check_events(self, layout, cols, rows, origin, locations, full, full_msg) -> None:
        """Each file must give exactly one row event (so row k of ``full`` is file k's), of the
        row it replaces (same commit ts, same table), with no claim-check location of its own."""
        names = [f.name for f in layout.fields]
        counts = [0] * len(rows)
        for k in _as_pylist(full_msg):
            counts[k] += 1
        for k, n in enumerate(counts):
            if n != 1:
                what = ("no row event" + ("" if layout.table is None else f" of {layout.table}")
                        if n == 0 else f"{n} events")
                raise DecodeError(f"claim-check file {locations[rows[k]].as_py()!r} holds {what}, "
                                  "not one row event", origin[k], part="value")
        ops = full[names.index(C.COL_OP)].to_pylist()
        nested = full[layout.claim_check_column]
        compared = [C.COL_COMMIT_TS] + ([C.COL_SCHEMA, C.COL_TABLE] if layout.table is None else [])
        for k, j in enumerate(rows):
            location = locations[j].as_py()
            if ops[k] not in ("INSERT", "UPDATE", "DELETE") or nested[k].is_valid:
                raise DecodeError(f"claim-check file {location!r} holds a {ops[k]} event, "
                                  "not the full row event", origin[k], part="value")
            for name in compared:
                i = names.index(name)
                want, got = cols[i][j].as_py(), full[i][k].as_py()
                if want != got:
                    raise DecodeError(f"claim-check file {location!r} holds another event: its "
                                      f"{name} is {got!r}, the message's {want!r}", origin[k], part="value")


def _at(seq, i: int) -> int:
    v = seq[i]
    return v.as_py() if hasattr(v, "as_py") else v


def _as_pylist(seq) -> list:
    return seq.to_pylist() if hasattr(seq, "to_pylist") else list(seq)


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
        arr = as_binary_chunk(seq)
        data = arr.buffers()[2]
        off = int64_array(offsets64(arr))    # binary: its int32 offsets widened, no cast
        return data if data is not None else pa.py_buffer(b""), off
    items = list(seq)
    for i, item in enumerate(items):
        if item is None:
            raise DecodeError(f"null {part}", i, part=part)
    data = b"".join(items)
    off = int64_array(array("q", accumulate(map(len, items), initial=0)))
    return data, off
