"""Delta Lake sink: decoded TiCDC changes applied to one Delta table per TiDB table, exactly once
(docs/lakehouse.md).  Needs ``deltalake`` (delta-rs, no JVM): ``pip install 'ticdc_fast[delta]'``.

Every commit of a table carries, as Delta application transactions, what that table has taken
in: per Kafka partition the next offset (``<app>/<topic>/<partition>``), the resolved ts it is
consistent at (``<app>/<topic>/resolved``) and the commit ts of its last TRUNCATE
(``<app>/<topic>/truncated``).  A change is already in the table when its offset is below its
partition's version and its commit ts is not above the resolved one; a DDL when its commit ts is
not above the resolved one.  The input is read from its start again after a restart, so
everything else is applied again, which the rules below make harmless:

* per key the newest change wins by ``(commit ts, DELETE before the rest, offset)``; a change
  is applied over a row only when it is newer than the row (``_commit_ts``; at equal ts a row
  that is a tombstone takes the INSERT of a split UPDATE);
* a DELETE leaves a tombstone (``_deleted`` true), so a replayed older change never brings the
  row back; a key-changing UPDATE (old image in ``_before``) deletes its old key;
* after a TRUNCATE at ts T changes below T are dropped.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _constants as C
from .columns import LAYOUTS
from .tables import table_key

MAX_TS = (1 << 63) - 1
SCD_TYPES = (1, 2)
SCHEMA_CHANGE_MODES = ("evolve", "fail", "ignore")
DATA_OPS = ("INSERT", "UPDATE", "UPSERT", "DELETE")
DELETED, COMMIT_TS = "_deleted", C.COL_COMMIT_TS
VALID_FROM, VALID_TO, CURRENT = "_valid_from", "_valid_to", "_current"
META_PREFIX = "ticdc_fast."

# the decoders' own columns: everything else in a typed batch is a column of the TiDB table
_CONTROL = {c.name for lay in LAYOUTS.values() for c in lay.head + lay.tail + lay.unused}
_CONTROL |= {C.COL_BEFORE_ROW, "_partition", "_offset", "_topic", "_timestamp", "_headers",
             "_error", "_raw_key", "_raw_value"}

_TRUNCATE = re.compile(r"^\s*TRUNCATE\s", re.I)
_COLUMN_CHANGE = re.compile(
    r"^\s*ALTER\s+TABLE\b.*?\b(?:(?:ADD|DROP)\s+(?:COLUMN\b|(?!INDEX\b|KEY\b|PRIMARY\b|UNIQUE\b|"
    r"CONSTRAINT\b|PARTITION\b|FOREIGN\b|FULLTEXT\b|SPATIAL\b|CHECK\b))|MODIFY\b|CHANGE\b|RENAME\s+COLUMN\b)",
    re.I | re.S)


def ddl_kind(query: str) -> str:
    """``"truncate"``, ``"columns"`` (adds, drops, changes or renames a column) or ``"other"``."""
    if _TRUNCATE.match(query or ""):
        return "truncate"
    if _COLUMN_CHANGE.match(query or ""):
        return "columns"
    return "other"


class SchemaChangeStop(RuntimeError):
    """``schema_change="fail"`` met a DDL that changes the table's columns.  Everything before it
    is committed; a restart with another mode goes on from it."""

    def __init__(self, table, query, commit_ts, partition, offset):
        self.table, self.query, self.commit_ts = table, query, commit_ts
        self.partition, self.offset = partition, offset
        super().__init__(f"schema change of {table} at commit ts {commit_ts} (partition {partition}, "
                         f"offset {offset}): {query!r}; schema_change='fail' stops here (restart with "
                         f"'evolve' or 'ignore' to go on)")


@dataclass
class StepResult:
    """What one ``DeltaSink.write`` did."""
    rows_applied: int = 0                  # changes folded into commits (after replays were dropped)
    commits: dict = field(default_factory=dict)   # table -> Delta version committed
    resolved_ts: int | None = None
    waiting: int = 0                       # changes held for a later resolved ts


def _require_deltalake():
    try:
        import deltalake
    except ImportError as exc:          # pragma: no cover - the extra is installed in tests
        raise ImportError("the Delta sink needs deltalake: pip install 'ticdc_fast[delta]'") from exc
    return deltalake


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class DeltaSink:
    """Applies decoded TiCDC changes to Delta tables under ``root`` (``<root>/<db>/<table>``: a
    local path or any URI delta-rs takes, with ``storage_options``).

    ``write(batches, offsets=...)`` takes one step of the stream: typed batches per table
    (a ``TableBatches`` or ``{"db.t": RecordBatch}``, or one batch with ``table=``) as the
    decoders give them with ``_partition``/``_offset`` (and ``_before``: ``old_image=True``),
    and ``offsets`` ``{partition: next offset}`` the step read up to.  RESOLVED rows in the
    batches advance the resolved ts (the minimum over ``partitions``, as
    ``CompletenessTracker``); with ``consistent=True`` (default) a table only takes changes up
    to it, the rest wait; ``consistent=False`` applies them as they come.

    ``keys``: ``{"db.t": [columns]}`` (required per table; the CLI takes them from the stream).
    ``scd``: 1 (current state with tombstones) or 2 (a row per version, ``_valid_from``,
    ``_valid_to``, ``_current``).  ``schema_change``: ``evolve``, ``fail`` or ``ignore``.
    """

    def __init__(self, root, *, keys, partitions, topic="topic", app_id="ticdc_fast", scd=1,
                 schema_change="evolve", consistent=True, storage_options=None):
        from .spark.changelog import CompletenessTracker
        _require_deltalake()
        _check_choice("scd", scd, SCD_TYPES)
        _check_choice("schema_change", schema_change, SCHEMA_CHANGE_MODES)
        if not isinstance(keys, dict):
            raise TypeError("keys must be a dict {'db.table': [key columns]}")
        self.root = str(root).rstrip("/")
        self.keys = {table_key(t): list(k) for t, k in keys.items()}
        for t, k in self.keys.items():
            if not k or not all(isinstance(c, str) for c in k):
                raise ValueError(f"keys of {t} must be a non-empty list of column names, not {k!r}")
        self.topic, self.app_id, self.scd = topic, app_id, scd
        self.schema_change, self.consistent = schema_change, bool(consistent)
        self.storage_options = dict(storage_options or {})
        self.tracker = CompletenessTracker(partitions=partitions)
        self.partitions = self.tracker.partitions
        self._tables: dict[str, _Table] = {}

    # ------------------------------------------------------------------ public
    def table_uri(self, table) -> str:
        db, name = table_key(table).split(".", 1)
        return posixpath.join(self.root, db, name)

    @property
    def resolved_ts(self):
        """The resolved ts the stream is complete up to (None before every partition sent one)."""
        return self.tracker.complete_up_to

    def write(self, batches, *, offsets=None, table=None, resolved=None, txn=None) -> StepResult:
        """One step: see the class.  Commits at most one Delta version per table (a
        ``SchemaChangeStop`` commits what came before the DDL, then raises).

        ``txn``: ``(app_id, version)`` instead of Kafka offsets (Spark's ``foreachBatch``: the
        query's id and ``batch_id``): a table whose ``app_id`` already has ``version`` or a
        later one takes nothing from this step; the others record it with their commit."""
        if (offsets is None) == (txn is None):
            raise ValueError("give offsets={partition: next offset} or txn=(app_id, version)")
        batches = self._as_tables(batches, table)
        self._observe_resolved(batches, resolved)
        offsets = {int(p): int(o) for p, o in (offsets or {}).items()}
        stray = sorted(set(offsets) - set(self.partitions))
        if stray:
            raise ValueError(f"offsets name partitions {stray} outside the topic's {self.partitions}")
        upto = self.resolved_ts if self.consistent else MAX_TS
        result = StepResult(resolved_ts=self.resolved_ts)
        for name, rows in batches.items():
            t = self._table(name)
            if txn is None or not t.has_txn(txn):
                t.take(rows)
        for name, t in self._tables.items():
            applied, version = t.step(upto, offsets, txn)
            result.rows_applied += applied
            if version is not None:
                result.commits[name] = version
            result.waiting += t.waiting
        return result

    def _as_tables(self, batches, table) -> dict:
        from .tables import DEAD_LETTERS, OTHER_TABLES
        if isinstance(batches, (pa.RecordBatch, pa.Table)):
            if table is None:
                raise ValueError("one batch needs table='db.table'")
            batches = {table: batches}
        elif table is not None:
            raise ValueError("table= is for one batch; a dict of batches names its tables")
        out = {}
        for name, b in batches.items():
            if name in (OTHER_TABLES, DEAD_LETTERS):
                continue
            t = pa.Table.from_batches([b]) if isinstance(b, pa.RecordBatch) else b
            missing = [c for c in ("_op", COMMIT_TS, "_partition", "_offset") if c not in t.column_names]
            if missing:
                raise ValueError(f"the batch of {name} lacks {missing} (decode with partitions= and offsets=)")
            out[table_key(name)] = t
        return out

    def _observe_resolved(self, batches, resolved) -> None:
        seen: dict = {}
        for t in batches.values():
            t = t.select(["_op", "_partition", COMMIT_TS])
            res = t.filter(pc.equal(t["_op"], "RESOLVED"))
            if res.num_rows:
                for r in res.group_by("_partition").aggregate([(COMMIT_TS, "max")]).to_pylist():
                    p, ts = r["_partition"], r[COMMIT_TS + "_max"]
                    seen[p] = max(ts, seen.get(p, ts))
        for p, ts in (resolved or {}).items():
            seen[int(p)] = max(int(ts), seen.get(int(p), int(ts)))
        self.tracker.observe(seen)

    def _table(self, name) -> "_Table":
        t = self._tables.get(name)
        if t is None:
            if name not in self.keys:
                raise ValueError(f"no key columns for table {name} (keys={{'{name}': [...]}})")
            t = self._tables[name] = _Table(self, name, self.keys[name])
        return t


class _Table:
    """One TiDB table's Delta table: its progress read back from the table, the changes taken in
    and not applied yet, and the step that applies them."""

    def __init__(self, sink: DeltaSink, name: str, keys: list):
        self.sink, self.name, self.keys = sink, name, keys
        self.uri = sink.table_uri(name)
        self.pending: list[tuple] = []             # (rows as decoded, mask of the changes kept)
        self.ddls: dict = {}                        # (ts, query) -> (partition, offset)
        self.dt = None
        self._load()

    # ------------------------------------------------------------------ progress
    def _app(self, what) -> str:
        return f"{self.sink.app_id}/{self.sink.topic}/{what}"

    def _load(self) -> None:
        from deltalake import DeltaTable
        self.high = {p: 0 for p in self.sink.partitions}
        self.resolved, self.truncated = -1, -1
        if not DeltaTable.is_deltatable(self.uri, storage_options=self.sink.storage_options or None):
            return
        self.dt = DeltaTable(self.uri, storage_options=self.sink.storage_options or None)
        for p in self.high:
            self.high[p] = self.dt.transaction_version(self._app(p)) or 0
        got = self.dt.transaction_version(self._app("resolved"))
        self.resolved = -1 if got is None else got
        got = self.dt.transaction_version(self._app("truncated"))
        self.truncated = -1 if got is None else got
        if self.sink.consistent and self.resolved == MAX_TS:
            raise ValueError(f"{self.uri} was written with changes applied as they come "
                             "(consistent=False, --apply as-they-come): go on in that mode")

    def has_txn(self, txn) -> bool:
        """Whether the table took ``(app_id, version)`` already."""
        if self.dt is None:
            return False
        got = self.dt.transaction_version(txn[0])
        return got is not None and got >= int(txn[1])

    @property
    def waiting(self) -> int:
        return sum(pc.sum(keep).as_py() or 0 for _, keep in self.pending) + len(self.ddls)

    # ------------------------------------------------------------------ taking changes in
    def take(self, rows: pa.Table) -> None:
        """Keep the batch's changes and DDLs the table does not have yet (the batch with a mask
        of them: rows are copied once, when a step takes the ready ones)."""
        ts, op = rows[COMMIT_TS], rows["_op"]
        seen = pa.array(np.zeros(rows.num_rows, dtype=bool))
        for p, high in self.high.items():
            mine = pc.and_(pc.equal(rows["_partition"], p), pc.less(rows["_offset"], high))
            seen = pc.or_(seen, mine)
        if self.sink.consistent:      # everything up to the resolved ts of the last commit is in
            at_or_below = pc.less_equal(ts, self.resolved)
            data_done, ddl_done = pc.and_(seen, at_or_below), at_or_below
        else:                         # everything below the offsets of the last commit is in
            data_done = ddl_done = seen
        for r in rows.select([COMMIT_TS, "_ddl", "_partition", "_offset"]).filter(
                pc.and_(pc.equal(op, "DDL"), pc.invert(ddl_done))).to_pylist():
            self.ddls.setdefault((r[COMMIT_TS], r["_ddl"]), (r["_partition"], r["_offset"]))
        keep = pc.and_(pc.is_in(op, pa.array(DATA_OPS)), pc.invert(data_done))
        keep = pc.and_(keep, pc.greater_equal(ts, self.truncated))
        keep = pc.fill_null(keep, False)
        if pc.any(keep).as_py():
            self.pending.append((rows, keep))

    # ------------------------------------------------------------------ a step
    def step(self, upto, offsets, txn=None) -> tuple[int, int | None]:
        """Apply the changes and DDLs up to ``upto``; returns (changes applied, version or None)."""
        if upto is None:
            return 0, None
        for k in [k for k in self.ddls if ddl_kind(k[1]) == "truncate" and k[0] <= self.truncated]:
            del self.ddls[k]                # another partition's copy of a TRUNCATE applied already
        ddls = sorted((k for k in self.ddls if k[0] <= upto), key=lambda k: k[0])
        stop = None
        if self.sink.schema_change == "fail":
            stop = next((k for k in ddls if ddl_kind(k[1]) == "columns"), None)
            if stop is not None:
                upto, ddls = stop[0] - 1, [k for k in ddls if k[0] < stop[0]]
        ready, rest = self._split_ready(upto)
        truncate = max((k[0] for k in ddls if ddl_kind(k[1]) == "truncate"), default=None)
        version = None
        if ready is not None or truncate is not None:
            version = self._commit(ready, truncate, upto, offsets, txn)
        self.pending = rest
        for k in ddls:
            del self.ddls[k]
        if stop is not None:
            part, off = self.ddls[stop]
            raise SchemaChangeStop(self.name, stop[1], stop[0], part, off)
        return (0 if ready is None else ready.num_rows), version

    def _split_ready(self, upto):
        """(the kept changes up to ``upto`` or None, the pending list of the rest)."""
        if not self.pending:
            return None, []
        rows = _concat([r for r, _ in self.pending])
        keep = pa.chunked_array([c for _, k in self.pending for c in _chunks(k)], pa.bool_())
        at = pc.less_equal(rows[COMMIT_TS], upto)
        ready, later = pc.and_(keep, at), pc.and_(keep, pc.invert(at))
        rest = []
        if pc.any(later).as_py():
            waiting = rows.filter(later)
            rest.append((waiting, pa.array(np.ones(waiting.num_rows, dtype=bool))))
        count = pc.sum(ready).as_py() or 0
        if not count:
            return None, rest
        chosen = rows.select(self._columns_to_apply(rows, ready))
        # all ready (the usual step): the rows as they are, no copy (the fold copies the newest once)
        return (chosen if count == rows.num_rows else chosen.filter(ready)), rest

    def _columns_to_apply(self, rows, ready) -> list:
        """The columns the fold reads: the table's, the change order's, and the old image
        only when a ready UPDATE changes its key (it is as wide as the rest together)."""
        names = data_columns(rows) + [COMMIT_TS, "_op", "_partition", "_offset"]
        found = key_changes(rows, self.keys)
        if found is not None and pc.any(pc.and_(found[1], ready)).as_py():
            names.append(C.COL_BEFORE_ROW)
        return names

    def _commit(self, ready, truncate, upto, offsets, txn=None) -> int | None:
        from deltalake import CommitProperties, Transaction
        if truncate is not None and ready is not None:
            ready = ready.filter(pc.greater_equal(ready[COMMIT_TS], truncate))
            ready = ready if ready.num_rows else None
        high = {p: max(self.high[p], offsets.get(p, 0)) for p in self.high}
        resolved = max(self.resolved, upto)
        truncated = self.truncated if truncate is None else max(self.truncated, truncate)
        txns = [Transaction(self._app(p), v) for p, v in high.items()]
        txns += [Transaction(self._app("resolved"), resolved), Transaction(self._app("truncated"), truncated)]
        if txn is not None:
            txns.append(Transaction(str(txn[0]), int(txn[1])))
        meta = {META_PREFIX + "resolved_ts": str(resolved), META_PREFIX + "topic": self.sink.topic,
                META_PREFIX + "offsets": ",".join(f"{p}:{v}" for p, v in high.items())}
        props = CommitProperties(custom_metadata=meta, app_transactions=txns)
        if self.sink.scd == 1:
            source = None if ready is None else fold_scd1(ready, self.keys)
            self._write_scd1(source, truncate, props)
        else:
            self._write_scd2(ready, truncate, props)
        self.high, self.resolved, self.truncated = high, resolved, truncated
        return self.dt.version()

    # ------------------------------------------------------------------ writing
    def _aligned(self, source: pa.Table) -> pa.Table:
        """The source in the target's columns: a column the target has and the source lacks is
        null (dropped in TiDB); one the source adds is added (evolve) or left out (ignore);
        a changed type is cast exactly or refused."""
        if self.dt is None:
            return source
        target = pa.schema(self.dt.schema().to_arrow())
        cols, names = [], []
        for f in target:
            if f.name in source.column_names:
                col = source[f.name]
                if col.type != f.type:
                    col = _cast_exactly(col, f, self.name)
            else:
                col = pa.nulls(source.num_rows, f.type)
            cols.append(col)
            names.append(f.name)
        if self.sink.schema_change == "evolve":
            for f in source.schema:
                if f.name not in target.names:
                    cols.append(source[f.name])
                    names.append(f.name)
        return pa.table(cols, names=names)

    def _create(self, source, props) -> None:
        from deltalake import DeltaTable, write_deltalake
        write_deltalake(self.uri, source, mode="append", commit_properties=props,
                        storage_options=self.sink.storage_options or None)
        self.dt = DeltaTable(self.uri, storage_options=self.sink.storage_options or None)

    def _on_keys(self, extra=()) -> str:
        return " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in list(self.keys) + list(extra))

    def _write_scd1(self, source, truncate, props) -> None:
        if self.dt is None:
            if source is not None:
                self._create(source, props)
            return
        if source is None:
            self.dt.delete(f"{_quote(COMMIT_TS)} < {truncate}", commit_properties=props)
            return
        newer = (f"s.{COMMIT_TS} > t.{COMMIT_TS} OR (s.{COMMIT_TS} = t.{COMMIT_TS} "
                 f"AND t.{DELETED} AND NOT s.{DELETED})")
        merger = (self.dt.merge(self._aligned(source), self._on_keys(), source_alias="s", target_alias="t",
                                merge_schema=self.sink.schema_change == "evolve", commit_properties=props)
                  .when_matched_update_all(predicate=newer).when_not_matched_insert_all())
        if truncate is not None:
            merger = merger.when_not_matched_by_source_delete(predicate=f"t.{COMMIT_TS} < {truncate}")
        merger.execute()
        self.dt.update_incremental()

    def _write_scd2(self, ready, truncate, props) -> None:
        events = None if ready is None else scd2_events(ready, self.keys)
        if self.dt is None:
            if events is not None:
                self._create(chain_scd2(events, self.keys), props)
            return
        if events is None:
            self.dt.delete(f"{_quote(VALID_FROM)} < {truncate}", commit_properties=props)
            return
        history = self._history_of(events)
        if truncate is not None:
            history = history.filter(pc.greater_equal(history[VALID_FROM], truncate))
        source = self._aligned(chain_scd2(_concat([history, events]), self.keys))
        merger = (self.dt.merge(source, self._on_keys((VALID_FROM, DELETED)), source_alias="s",
                                target_alias="t", merge_schema=self.sink.schema_change == "evolve",
                                commit_properties=props)
                  .when_matched_update(updates={VALID_TO: f"s.{VALID_TO}", CURRENT: f"s.{CURRENT}"})
                  .when_not_matched_insert_all())
        if truncate is not None:
            merger = merger.when_not_matched_by_source_delete(predicate=f"t.{VALID_FROM} < {truncate}")
        merger.execute()
        self.dt.update_incremental()

    def _history_of(self, events: pa.Table) -> pa.Table:
        """The versions the table holds of the keys ``events`` touch."""
        first = self.keys[0]
        wanted = pc.unique(events[first])
        rows = self.dt.to_pyarrow_dataset().to_table(filter=pc.field(first).isin(wanted))
        if len(self.keys) > 1:
            rows = rows.join(events.select(self.keys).group_by(self.keys).aggregate([]), self.keys,
                             join_type="left semi")
        return rows


def _cast_exactly(col, f: pa.Field, table: str):
    try:
        return col.cast(f.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"column {f.name} of {table} changed type {col.type} -> the table's {f.type}, "
                         f"which it cannot take exactly: {exc}") from exc


def _concat(tables):
    tables = [t for t in tables if t is not None]
    same = all(t.schema == tables[0].schema for t in tables)
    return pa.concat_tables(tables, promote_options="none" if same else "permissive")


def _chunks(arr) -> list:
    return arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]


# ---------------------------------------------------------------------- the fold (no Delta)
def data_columns(rows: pa.Table) -> list[str]:
    """The TiDB table's columns of a typed batch (every column but the decoders' own)."""
    return [n for n in rows.column_names if n not in _CONTROL]


def key_changes(rows: pa.Table, keys):
    """``(old key columns, mask of the UPDATEs whose old image has another key)`` (a key
    column the old image lacks is unchanged), or None when the rows have no old image."""
    if C.COL_BEFORE_ROW not in rows.column_names or not rows.num_rows:
        return None
    before = rows[C.COL_BEFORE_ROW]
    have = {f.name for f in before.type}
    if any(k not in have for k in keys):
        return None
    olds = {k: pc.coalesce(pc.struct_field(before, k), rows[k]) for k in keys}
    changed = pa.array(np.zeros(rows.num_rows, dtype=bool))
    for k in keys:
        changed = pc.or_(changed, pc.not_equal(olds[k], rows[k]))
    moved = pc.and_(pc.and_(pc.equal(rows["_op"], "UPDATE"), pc.is_valid(before)), changed)
    return olds, pc.fill_null(moved, False)


def with_old_key_deletes(rows: pa.Table, keys) -> pa.Table:
    """``rows`` plus a DELETE of the old key for every UPDATE whose old image (``_before``)
    has another key (``key_changes``)."""
    found = key_changes(rows, keys)
    if found is None or not pc.any(found[1]).as_py():
        return rows
    olds, moved = found
    have = {f.name for f in rows[C.COL_BEFORE_ROW].type}
    src = rows.filter(moved)
    image = src[C.COL_BEFORE_ROW]
    cols = []
    for f in rows.schema:
        if f.name in keys:
            cols.append(olds[f.name].filter(moved))
        elif f.name == "_op":
            cols.append(pa.array(["DELETE"] * src.num_rows, f.type))
        elif f.name in have and f.name not in _CONTROL:
            cols.append(pc.struct_field(image, f.name).cast(f.type))
        else:
            cols.append(src[f.name])
    return pa.concat_tables([rows, pa.table(cols, schema=rows.schema)])


def _change_order(rows: pa.Table) -> pa.Array:
    """The rows' indices in change order: commit ts, a DELETE before the rest at equal ts, then
    Kafka order (sorted on those columns alone)."""
    rank = pc.cast(pc.not_equal(rows["_op"], "DELETE"), pa.int8())
    narrow = rows.select([COMMIT_TS, "_partition", "_offset"]).append_column("__rank", rank)
    return pc.sort_indices(narrow, sort_keys=[(COMMIT_TS, "ascending"), ("__rank", "ascending"),
                                              ("_partition", "ascending"), ("_offset", "ascending")])


def _ordered(rows: pa.Table) -> pa.Table:
    """Rows in change order (``_change_order``)."""
    return rows.take(_change_order(rows))


def fold_scd1(rows: pa.Table, keys) -> pa.Table:
    """Per key its newest change (data columns, ``_commit_ts``, ``_deleted``), in the order of
    those changes.  The order and the groups are found on the key and order columns; the
    rows are copied once, the newest of each key."""
    rows = with_old_key_deletes(rows, keys)
    order = _change_order(rows)
    rank = np.empty(rows.num_rows, dtype=np.int64)          # each row's place in change order
    rank[order.to_numpy()] = np.arange(rows.num_rows, dtype=np.int64)
    narrow = rows.select(list(keys)).append_column("__i", pa.array(rank))
    last = np.sort(narrow.group_by(keys, use_threads=False).aggregate([("__i", "max")])["__i_max"].to_numpy())
    latest = rows.select(data_columns(rows) + [COMMIT_TS, "_op"]).take(pc.take(order, pa.array(last)))
    out = latest.select(data_columns(latest))
    out = out.append_column(COMMIT_TS, latest[COMMIT_TS])
    return out.append_column(DELETED, pc.equal(latest["_op"], "DELETE"))


def scd2_events(rows: pa.Table, keys) -> pa.Table:
    """Every change as a version row (``_valid_from`` its commit ts, ``_deleted`` for a
    DELETE), one per (key, ts, DELETE or not): re-deliveries count once."""
    rows = _ordered(with_old_key_deletes(rows, keys))
    out = rows.select(data_columns(rows))
    out = out.append_column(VALID_FROM, rows[COMMIT_TS])
    out = out.append_column(DELETED, pc.equal(rows["_op"], "DELETE"))
    out = out.append_column("__i", pa.array(np.arange(out.num_rows, dtype=np.int64)))
    last = out.group_by(list(keys) + [VALID_FROM, DELETED], use_threads=False).aggregate([("__i", "max")])
    last = last["__i_max"]
    return out.take(pc.take(last, pc.array_sort_indices(last))).drop_columns(["__i"])


def chain_scd2(versions: pa.Table, keys) -> pa.Table:
    """Versions of keys (history and new) as the table holds them: one per (key, valid-from,
    deleted), each valid to the next one's valid-from (null: still valid), ``_current`` on the
    last one of a key unless it is a DELETE."""
    versions = versions.drop_columns([c for c in (VALID_TO, CURRENT) if c in versions.column_names])
    versions = versions.append_column("__i", pa.array(np.arange(versions.num_rows, dtype=np.int64)))
    last = versions.group_by(list(keys) + [VALID_FROM, DELETED], use_threads=False).aggregate([("__i", "max")])
    versions = versions.take(last["__i_max"]).drop_columns(["__i"])
    rank = pc.cast(pc.invert(versions[DELETED]), pa.int8())
    order = pc.sort_indices(versions.append_column("__rank", rank),
                            sort_keys=[(k, "ascending") for k in keys]
                            + [(VALID_FROM, "ascending"), ("__rank", "ascending")])
    versions = versions.take(order)
    n = versions.num_rows
    same_key = np.ones(max(n - 1, 0), dtype=bool)
    for k in keys:
        col = versions[k]
        same_key &= pc.equal(col.slice(0, n - 1), col.slice(1)).to_numpy(zero_copy_only=False)
    nxt = versions[VALID_FROM].to_numpy()[1:]
    valid_to = pa.array(np.append(nxt, 0), pa.int64(), mask=np.append(~same_key, True))
    is_last = np.append(~same_key, True)
    current = pa.array(is_last & ~versions[DELETED].to_numpy(zero_copy_only=False))
    return versions.append_column(VALID_TO, valid_to).append_column(CURRENT, current)
