"""``ticdc-fast sync``: a topic (or a capture of it) → Delta tables through ``DeltaSink``.

Simple and Avro protocols, two passes over the input: the first (``discover``) decodes it
generic and learns every table's columns (the union over its schema versions, Spark-accepted
types) and key (simple: the table schema's primary key; Avro: the Kafka key's fields); the
second decodes it typed (``tables=``, old images, schema changes ignored by the decoder: the
sink decides) and writes it a chunk at a time.  The open protocol decodes once (``sync`` with
``tables=None``, ``OpenTables``): the first pass only reads the partitions (``partitions_of``),
and the typed decode learns the tables as it meets them: a piece whose rows name a table not
known yet, or columns its schema lacks (the decoder's ``unknown_columns``), teaches them (types
and handle-key flags from the rows around their first appearance) and is decoded again.  A
restart reads from the start again and the sink leaves out what its tables already hold
(``delta_sink``), so a run killed at any point and started again ends with the tables of one
uninterrupted run.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _constants as C
from .delta_sink import DeltaSink, StepResult

PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")


@dataclass
class TableInfo:
    schema: pa.Schema          # every column of every version (what schema_change="evolve" writes)
    keys: list
    first: pa.Schema | None = None   # the columns of the first version (what "ignore" keeps)


@dataclass
class SyncSummary:
    messages: int = 0
    steps: int = 0
    rows_applied: int = 0
    commits: int = 0
    resolved_ts: int | None = None
    waiting: int = 0
    tables: dict = field(default_factory=dict)      # table -> last version committed
    stopped: bool = False


def _decoder(protocol, decoder_options, **kw):
    from .spark.decoding import make_decoder
    opts = dict(decoder_options or {})
    if protocol == "open":
        opts.pop("registry", None)
    return make_decoder(protocol, **kw, **opts)


# ---------------------------------------------------------------------- pass 1: the tables
def discover(protocol, chunks, decoder_options=None) -> tuple[dict, list]:
    """``({"db.t": TableInfo}, partitions seen)`` from one pass over ``chunks``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")
    dec = _decoder(protocol, decoder_options)
    schemas: dict = {}
    keys: dict = {}
    parts: set = set()
    learn = {"open": _learn_open, "avro": _learn_avro}.get(protocol, _learn_simple)
    for k, v, p, _ in chunks:
        parts.update(pc.unique(p if isinstance(p, (pa.Array, pa.ChunkedArray)) else pa.array(p)).to_pylist())
        index = pa.array(np.arange(len(v), dtype=np.int64))
        batch = dec.decode(k, v, partitions=pa.array(np.zeros(len(v), dtype=np.int32)), offsets=index)
        batch = pa.Table.from_batches([batch]).rename_columns(
            [c if c != "_offset" else "_message" for c in batch.schema.names])
        learn(batch, k, v, schemas, keys, dec, decoder_options or {})
    tables = {t: TableInfo(union, keys.get(t) or [], first) for t, (union, first) in schemas.items()}
    return tables, sorted(parts)


def _union(old: tuple | None, new: pa.Schema) -> tuple:
    """(columns of every version in order of first appearance, each with its latest type; the
    first version's schema)."""
    if old is None:
        return new, new
    old, first = old
    fields = {f.name: f for f in old}
    for f in new:
        fields[f.name] = f
    return pa.schema(list(fields.values())), first


def _rows_by_table(batch):
    wanted = ["_op", C.COL_SCHEMA, C.COL_TABLE, "after", "before", "_message", C.COL_VALUE_SCHEMA_ID, C.COL_KEY]
    batch = batch.select([c for c in wanted if c in batch.column_names])
    data = batch.filter(pc.is_in(batch["_op"], pa.array(["INSERT", "UPDATE", "DELETE", "UPSERT"])))
    if not data.num_rows:
        return {}
    names = pc.binary_join_element_wise(data[C.COL_SCHEMA], data[C.COL_TABLE], ".")
    return {t: data.filter(pc.equal(names, t)) for t in pc.unique(names).to_pylist()}


_SAMPLE = 32       # messages an open-protocol table's column types are read from


def _learn_open(batch, k, v, schemas, keys, dec, options):
    """A table's columns from the messages from its first row that names a column not known yet
    (every row carries its columns' type codes and flags: a sample is enough)."""
    from .arrow_types import infer_open_schema, spark_schema
    for table, first in _first_rows_naming_new_columns(batch, schemas).items():
        known = schemas.get(table)
        found = infer_open_schema(_pylist(k[first:first + _SAMPLE]), _pylist(v[first:first + _SAMPLE]),
                                  table=table, compression=options.get("compression", "none"))
        keys.setdefault(table, [f.name for f in found
                                if int((f.metadata or {}).get(b"ticdc_flags", b"0")) & C.FLAG_HANDLE_KEY])
        schemas[table] = _union(known, spark_schema(found))


def _one_array(col) -> pa.Array:
    """A column as one array (a single chunk as it is: ``combine_chunks`` copies a map)."""
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def _pylist(seq) -> list:
    return seq.to_pylist() if isinstance(seq, pa.Array) else list(seq)


def _map_keys(arr) -> tuple:
    """(row of each key, the keys) of a map array (``pc.list_parent_indices`` aborts on maps)."""
    offsets = arr.offsets.to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(arr), dtype=np.int64), np.diff(offsets))
    keys = arr.keys
    if len(keys) != offsets[-1] - offsets[0]:
        keys = keys.slice(offsets[0], offsets[-1] - offsets[0])
    return rows, keys


def _first_rows_naming_new_columns(batch, schemas) -> dict:
    """``{table: message index}`` of the first data row of each table that is new or names a
    column its schema lacks.  Names are hashed, not compared row by row: when every table of
    the batch is known and every column name of its maps is known to all of them, there is
    nothing to look for; else per table."""
    is_data = pc.is_in(batch["_op"], pa.array(["INSERT", "UPDATE", "DELETE", "UPSERT"]))
    pairs = batch.select([C.COL_SCHEMA, C.COL_TABLE]).filter(is_data)
    pairs = pairs.group_by([C.COL_SCHEMA, C.COL_TABLE], use_threads=False).aggregate([]).to_pylist()
    tables = [f"{r[C.COL_SCHEMA]}.{r[C.COL_TABLE]}" for r in pairs]
    maps = [_one_array(batch.column(col)) for col in ("after", "before")]
    if all(t in schemas for t in tables):
        everywhere = set.intersection(*(set(schemas[t][0].names) for t in tables)) if tables else set()
        if all(set(pc.unique(m.keys).to_pylist()) <= everywhere for m in maps):
            return {}
    names = pc.if_else(is_data, pc.binary_join_element_wise(batch[C.COL_SCHEMA], batch[C.COL_TABLE], "."), None)
    names = names.combine_chunks() if isinstance(names, pa.ChunkedArray) else names
    messages = _one_array(batch["_message"])
    out = {t: messages[pc.index(names, t).as_py()].as_py() for t in tables if t not in schemas}
    for rows, keys in (_map_keys(m) for m in maps):
        for table in (t for t in tables if t in schemas):
            at = _first_row_naming_other(names, table, rows, keys, schemas[table][0].names)
            if at is not None:
                at = messages[at].as_py()
                out[table] = min(at, out.get(table, at))
    return out


def _first_row_naming_other(names, table, rows, keys, known) -> int | None:
    """The first row of ``table`` whose map (``rows``, ``keys``: each entry's row and name)
    names a column not in ``known``, or None."""
    mine = pc.fill_null(pc.equal(names, table), False).to_numpy(zero_copy_only=False)
    new = mine[rows] & ~pc.is_in(keys, pa.array(known, pa.string())).to_numpy(zero_copy_only=False)
    return int(rows[int(np.argmax(new))]) if new.any() else None


def _learn_simple(batch, k, v, schemas, keys, dec, options):
    from .simple import arrow_schema
    rows = batch.filter(pc.is_valid(batch[C.COL_TABLE_SCHEMA]))
    for text in pc.unique(rows[C.COL_TABLE_SCHEMA]).to_pylist():
        ts = dec.add_schema(text)
        table = f"{ts.database}.{ts.table}"
        schemas[table] = _union(schemas.get(table), arrow_schema(ts, spark=True))
        primary = [ix for ix in ts.indexes if ix.get("primary")] or \
                  [ix for ix in ts.indexes if ix.get("unique") and not ix.get("nullable")]
        if primary:
            keys[table] = list(primary[0]["columns"])


def _learn_avro(batch, k, v, schemas, keys, dec, options):
    from .arrow_types import spark_schema
    from .avro import avro_arrow_schema
    for table, rows in _rows_by_table(batch).items():
        for sid in pc.unique(rows[C.COL_VALUE_SCHEMA_ID].drop_null()).to_pylist():
            schemas[table] = _union(schemas.get(table), spark_schema(avro_arrow_schema(dec.writer_schema(sid))))
        if table not in keys:
            first = rows.filter(pc.is_valid(rows[C.COL_KEY])).slice(0, 1)[C.COL_KEY].to_pylist()
            if first:
                keys[table] = [name for name, _ in first[0]]


def partitions_of(chunks) -> list:
    """The partitions ``chunks`` have messages of (nothing decoded)."""
    parts: set = set()
    for _, _, p, _ in chunks:
        parts.update(pc.unique(p if isinstance(p, (pa.Array, pa.ChunkedArray)) else pa.array(p)).to_pylist())
    return sorted(parts)


class OpenTables:
    """The open protocol in one pass: the tables and their columns, learned by the typed decode
    that writes them.  ``decode`` gives a piece's ``{table: batch}``: decoded typed with the
    tables known; if its rows name a table not known yet (the decoder's ``OTHER_TABLES`` rows)
    or columns a table's schema lacks (``unknown_columns``; not with ``schema_change="ignore"``,
    which keeps the first columns), they are learned from the rows around their first message
    and the piece is decoded again with the new schemas."""

    def __init__(self, decoder_options=None, schema_change="evolve", keys=None, only=None):
        self.options = dict(decoder_options or {})
        self.keep_first = schema_change == "ignore"
        self.given = dict(keys or {})
        self.only = only
        self.tables: dict = {}          # "db.t" -> TableInfo
        self.dec = None
        self.redecoded = 0              # pieces decoded again because they taught something

    def decode(self, k, v, p, o) -> dict:
        """``({table: batch}, {partition: resolved ts} of a piece no table is known for yet)``."""
        while True:
            dec = self._decoder()
            out = dec.decode(k, v, partitions=p, offsets=o)
            if not self._learn(out, dec, k, v, p, o):
                break
            self.dec = None
            self.redecoded += 1
        if isinstance(out, pa.RecordBatch):       # no table known yet: nothing to write
            return {}, _resolved_of(out)
        return {t: b for t, b in out.items() if t in self.tables}, {}

    def _decoder(self):
        if self.dec is None:
            if not self.tables:
                self.dec = _decoder("open", self.options)
            else:
                pick = (lambda i: i.first or i.schema) if self.keep_first else (lambda i: i.schema)
                unlisted = "skip" if self.only is not None and self.only in self.tables else "generic"
                self.dec = _decoder("open", self.options, tables={t: pick(i) for t, i in self.tables.items()},
                                    old_image=True, unlisted=unlisted, on_schema_change="ignore")
        return self.dec

    def _learn(self, out, dec, k, v, p, o) -> bool:
        """Learn the piece's new tables and columns; whether there were any."""
        from .tables import OTHER_TABLES
        starts: dict = {}        # table -> message indexes to read its columns from
        other = out if isinstance(out, pa.RecordBatch) else out.get(OTHER_TABLES)
        if other is not None and other.num_rows:
            for table, at in _first_rows_of_tables(other, p, o).items():
                if table not in self.tables and (self.only is None or table == self.only):
                    starts.setdefault(table, set()).add(at)
        if not self.keep_first and not isinstance(out, pa.RecordBatch):
            for table, _, msg in dec._unknown.found:
                starts.setdefault(table, set()).add(msg)
        for table, at in starts.items():
            self._learn_table(table, sorted(at), k, v, dec)
        return bool(starts)

    def _learn_table(self, table, starts, k, v, dec) -> None:
        from .arrow_types import infer_open_schema, spark_schema
        known = self.tables.get(table)
        keys, values, seen = [], [], set()
        for at in starts:
            for i in range(at, min(at + _SAMPLE, len(v))):
                if i not in seen:
                    seen.add(i)
                    keys.append(_item(k, i))
                    values.append(_item(v, i))
        found = infer_open_schema(keys, values, table=table, compression=self.options.get("compression", "none"))
        old = None if known is None else (known.schema, known.first)
        union, first = _union(old, spark_schema(found))
        if known is not None:
            missing = [c for c in dec.unknown_columns.get(table, ()) if c not in union.names]
            if missing:
                raise RuntimeError(f"the rows of {table} name {missing}, which its rows around them do not show")
            known.schema = union
            return
        key = self.given.get(table) or [f.name for f in found
                                        if int((f.metadata or {}).get(b"ticdc_flags", b"0")) & C.FLAG_HANDLE_KEY]
        if not key:
            raise ValueError(f"no key found in the stream for {[table]}: give them (--key db.t=col1,col2)")
        self.tables[table] = TableInfo(union, list(key), first)


def _item(seq, i):
    return seq[i].as_py() if isinstance(seq, (pa.Array, pa.ChunkedArray)) else seq[i]


def _first_rows_of_tables(generic, p, o) -> dict:
    """``{table: message index}`` of the first data row of each table in a generic batch, found
    by its ``_partition``/``_offset`` among the piece's."""
    data = generic.filter(pc.is_in(generic["_op"], pa.array(["INSERT", "UPDATE", "DELETE"])))
    if not data.num_rows:
        return {}
    names = pc.binary_join_element_wise(data[C.COL_SCHEMA], data[C.COL_TABLE], ".")
    parts, offs = _numbers(p), _numbers(o)
    out: dict = {}
    for table in pc.unique(names).to_pylist():
        row = pc.index(names, table).as_py()
        at = (parts == data["_partition"][row].as_py()) & (offs == data["_offset"][row].as_py())
        out[table] = int(np.flatnonzero(at)[0])
    return out


def _numbers(seq) -> np.ndarray:
    if isinstance(seq, pa.ChunkedArray):
        seq = seq.combine_chunks()
    if isinstance(seq, pa.Array):
        return seq.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return np.asarray(list(seq), dtype=np.int64)


def _resolved_of(generic) -> dict:
    res = generic.select(["_op", "_partition", C.COL_COMMIT_TS]).filter(pc.equal(generic["_op"], "RESOLVED"))
    out: dict = {}
    for r in res.to_pylist():
        out[r["_partition"]] = max(r[C.COL_COMMIT_TS], out.get(r["_partition"], r[C.COL_COMMIT_TS]))
    return out


# ---------------------------------------------------------------------- pass 2: the sink
def next_offsets(parts, offs) -> dict:
    """``{partition: highest offset + 1}`` of one chunk."""
    parts = parts if isinstance(parts, (pa.Array, pa.ChunkedArray)) else pa.array(parts, pa.int64())
    offs = offs if isinstance(offs, (pa.Array, pa.ChunkedArray)) else pa.array(offs, pa.int64())
    return {p: pc.max(offs.filter(pc.equal(parts, p))).as_py() + 1 for p in pc.unique(parts).to_pylist()}


def capture_blocks(path):
    """A capture file's messages a block (~4 MiB of whole lines) at a time, as Arrow arrays (no
    copy into chunks of a set size: ``sync(step_messages=)`` groups them); the blocks' memory is
    reused (a fresh 4 MiB block costs its page faults)."""
    import queue

    from .capture import parse_block, read_blocks
    spare = queue.SimpleQueue()
    for lineno, block in read_blocks(path, spare=spare):
        cols = parse_block(block, lineno, path)
        spare.put(block)            # the arrays hold copies: the block takes the next read
        if len(cols[1]):
            yield cols


def sync(protocol, chunks, root, *, tables, partitions, topic, keys=None, scd=1, schema_change="evolve",
         consistent=True, storage_options=None, decoder_options=None, app_id="ticdc_fast",
         progress=None, should_stop=None, step_messages=None, only=None) -> SyncSummary:
    """Write ``chunks`` (an iterable of (keys, values, partitions, offsets)) into Delta tables
    under ``root``, a step per ``step_messages`` messages (default: per chunk, as long as no
    chunk is longer).  ``tables``: ``{"db.t": TableInfo}`` (``discover``), or for the open
    protocol None: learned in the one pass (``OpenTables``; ``only="db.t"``: that table
    alone); ``keys`` overrides their keys.  ``progress(summary, step)`` after every step;
    ``should_stop()`` True ends the run between steps (nothing is lost: the next run goes on)."""
    learner = None
    if tables is None:
        if protocol != "open":
            raise ValueError("tables=None (learned in one pass) is for the open protocol; use discover()")
        learner = OpenTables(decoder_options, schema_change, keys, only)
        tables = {}
    keys = {t: list(keys[t]) if keys and t in keys else info.keys for t, info in tables.items()}
    missing = sorted(t for t, k in keys.items() if not k)
    if missing:
        raise ValueError(f"no key found in the stream for {missing}: give them (--key db.t=col1,col2)")
    sink = DeltaSink(root, keys=keys, partitions=partitions, topic=topic, app_id=app_id, scd=scd,
                     schema_change=schema_change, consistent=consistent, storage_options=storage_options)
    if learner is not None:
        decode = _learning(learner, sink)
    else:
        pick = (lambda i: i.first or i.schema) if schema_change == "ignore" else (lambda i: i.schema)
        dec = _decoder(protocol, decoder_options, tables={t: pick(i) for t, i in tables.items()},
                       old_image=True, on_schema_change="ignore")
        decode = lambda k, v, p, o: (dec.decode(k, v, partitions=p, offsets=o), {})  # noqa: E731
    summary = SyncSummary()
    for batches, offsets, messages, resolved in _steps(decode, chunks, step_messages):
        step = sink.write(batches, offsets=offsets, resolved=resolved or None)
        _add(summary, step, messages)
        if progress is not None:
            progress(summary, step)
        if should_stop is not None and should_stop():
            summary.stopped = True
            break
    if learner is not None and only is not None and only not in learner.tables and not summary.stopped:
        raise ValueError(f"table {only} has no change in the input (tables: {sorted(learner.tables)})")
    return summary


def _learning(learner: OpenTables, sink: DeltaSink):
    """The one-pass decode of ``sync``: each table learned gets its key in the sink."""
    from .delta_sink import table_key

    def decode(k, v, p, o):
        batches, resolved = learner.decode(k, v, p, o)
        for t, info in learner.tables.items():
            sink.keys.setdefault(table_key(t), list(info.keys))
        return batches, resolved
    return decode


def _steps(decode, chunks, size):
    """(``{table: pyarrow.Table}``, next offsets, messages, ``{partition: resolved ts}`` the
    batches do not show) per step of ``size`` messages (the last one shorter; None: a step per
    chunk): chunks are sliced, never copied, and decoded a piece at a time."""
    held: dict = {}
    offsets: dict = {}
    resolved: dict = {}
    messages = 0
    for chunk in chunks:
        n, at = len(chunk[1]), 0
        cap = size or n
        while at < n:
            take = min(n - at, cap - messages)
            k, v, p, o = (c[at:at + take] for c in chunk)
            at += take
            batches, seen = decode(k, v, p, o)
            for table, batch in batches.items():
                held.setdefault(table, []).append(batch)
            for part, ts in seen.items():
                resolved[part] = max(ts, resolved.get(part, ts))
            for part, nxt in next_offsets(p, o).items():
                offsets[part] = max(nxt, offsets.get(part, nxt))
            messages += take
            if messages == cap:
                yield _tables(held), offsets, messages, resolved
                held, offsets, messages, resolved = {}, {}, 0, {}
    if messages:
        yield _tables(held), offsets, messages, resolved


def _tables(held: dict) -> dict:
    """Each table's batches as one Table (a table learned mid-step has columns its earlier
    batches lack: they are null there)."""
    out = {}
    for t, bs in held.items():
        out[t] = pa.Table.from_batches(bs) if all(b.schema == bs[0].schema for b in bs) else \
            pa.concat_tables([pa.Table.from_batches([b]) for b in bs], promote_options="permissive")
    return out


class TwoPasses:
    """An input read twice (``read()``: a fresh iterator of chunks): the first pass keeps its
    chunks while their messages fit ``budget`` bytes, and the second replays them instead of
    reading the input again."""

    def __init__(self, read, budget: int = 512 << 20):
        self.read, self.budget = read, budget
        self.kept: list | None = []
        self.size, self.complete = 0, False

    def first(self):
        for chunk in self.read():
            if self.kept is not None:
                self.size += sum(_nbytes(part) for part in chunk[:2])
                if self.size <= self.budget:
                    self.kept.append(chunk)
                else:
                    self.kept = None
            yield chunk
        self.complete = True

    def second(self):
        if self.complete and self.kept is not None:
            kept, self.kept = self.kept, None
            return iter(kept)
        return self.read()


def _nbytes(seq) -> int:
    if isinstance(seq, (pa.Array, pa.ChunkedArray)):
        return seq.nbytes
    return sum(len(x) for x in seq if x is not None)


def _add(summary: SyncSummary, step: StepResult, messages: int) -> None:
    summary.messages += messages
    summary.steps += 1
    summary.rows_applied += step.rows_applied
    summary.commits += len(step.commits)
    summary.tables.update(step.commits)
    summary.resolved_ts = step.resolved_ts
    summary.waiting = step.waiting


def lag_seconds(resolved_ts) -> float | None:
    """How far the resolved ts is behind the wall clock (its physical part is milliseconds)."""
    if resolved_ts is None:
        return None
    return max(0.0, time.time() - (resolved_ts >> 18) / 1000)


def parse_keys(items) -> dict:
    """``["db.t=a,b", ...]`` → ``{"db.t": ["a", "b"]}``."""
    out = {}
    for item in items or ():
        table, eq, cols = item.partition("=")
        names = [c.strip() for c in cols.split(",") if c.strip()]
        if not eq or not names or "." not in table:
            raise ValueError(f"--key must be db.table=col1[,col2...], not {item!r}")
        out[table] = names
    return out


def summary_json(summary: SyncSummary) -> str:
    return json.dumps({"messages": summary.messages, "rows_applied": summary.rows_applied,
                       "commits": summary.commits, "resolved_ts": summary.resolved_ts,
                       "waiting": summary.waiting, "stopped": summary.stopped, "tables": summary.tables})
