"""The columns a typed open-protocol decode drops: names rows of a typed table carried that its
schema lacks (``OpenDecoder.unknown_columns``), and the schema changes they make
(``on_schema_change``).

Both implementations keep, per typed table, the same log: each such name once, in first-seen
order (a row's new image, then its old one, each in its own order), with the message it was first
seen in and the row ordinal of the table it came from (0: the table's first row event).  The core
keeps it in its typed plan (``OpenPlan.unknown_since``, recorded where a column's name is looked
up, which a row that repeats its table's column memo skips), the twin in a ``TwinLog``; the front
end reads either through the same four members.
"""
from __future__ import annotations

from ..errors import SchemaChangedError


class TwinLog:
    """The twin's record of one typed table (the core's ``OpenPlan`` has the same members)."""

    def __init__(self):
        self.recs: list = []            # (name, message index, row ordinal)
        self.seen: set = set()
        self.own_rows = 0
        self.missing: list = []         # target indexes a full new image lacked, first time each

    @property
    def unknown_count(self) -> int:
        return len(self.recs)

    def unknown_since(self, start: int) -> list:
        return self.recs[start:]

    @property
    def missing_count(self) -> int:
        return len(self.missing)

    def missing_since(self, start: int) -> list:
        return self.missing[start:]

    def truncate_missing(self, count: int) -> None:
        del self.missing[count:]

    def note_missing(self, after, targets) -> None:
        """A row's full new image: the typed columns it does not carry."""
        names = {col[0] for col in after}
        for j, target in enumerate(targets):
            if target.name not in names and j not in self.missing:
                self.missing.append(j)

    def truncate_unknown(self, count: int, rows: int) -> None:
        for name, _, _ in self.recs[count:]:
            self.seen.discard(name)
        del self.recs[count:]
        self.own_rows = rows

    def note(self, after, before, msg: int, names) -> None:
        """One row event of the table: the images it uses (new, then old)."""
        for img in (after, before):
            for col in img or ():
                name = col[0]
                if name not in names and name not in self.seen:
                    self.seen.add(name)
                    self.recs.append((str(name), msg, self.own_rows))
        self.own_rows += 1


class UnknownColumns:
    """The front end's side: the logs of a decoder's typed tables, the names reported so far
    (cumulative over the decoder's life, only calls that returned), and the schema-change check."""

    def __init__(self, logs: dict, on_schema_change: str, targets: dict):
        self.logs = logs                        # {"db.t": OpenPlan | TwinLog}
        self.tables = list(logs)
        self._logs = list(logs.values())        # aligned with tables (and with marks())
        self.targets = targets                  # {"db.t": [typed column names]}
        self.absent: dict = {t: () for t in logs}
        self.on_change = on_schema_change
        self.names: dict = {t: () for t in logs}
        self.found: list = []     # (table, name, message index) first reported by the last stretch

    def marks(self) -> list:
        """Where each log stands: (unknown names, the table's rows, missing targets)."""
        return [(log.unknown_count, log.own_rows, log.missing_count) for log in self._logs]

    def rollback(self, marks: list, reports: bool = False) -> None:
        """The logs as at ``marks``; ``reports``: the names reported, too (a call undone)."""
        for t, log, m in zip(self.tables, self._logs, marks):
            log.truncate_unknown(m[0], m[1])
            log.truncate_missing(m[2])
            if reports:
                self._report(t, log)

    def commit(self, marks: list, stats) -> None:
        """A stretch decoded: its new names are reported; with a typed schema that held every
        column of the table's first row (not a projection), each row that brought new ones is
        a schema change (``fail``: SchemaChangedError at its message, the logs as before)."""
        moved = [i for i, log in enumerate(self._logs)
                 if log.unknown_count != marks[i][0] or log.missing_count != marks[i][2]]
        if not moved:           # the common call: nothing new (two compares per table)
            if self.found:
                self.found = []
            return
        changes = []
        for i in moved:
            t, log = self.tables[i], self._logs[i]
            new = log.unknown_since(marks[i][0])
            if not new:
                continue
            if _whole_table(log):
                rows: dict = {}
                for name, msg, row in new:
                    rows.setdefault((row, msg), []).append(name)
                changes += [(msg, t, names) for (row, msg), names in rows.items()]
        if changes and self.on_change == "fail":
            self.rollback(marks)
            msg, table, added = min(changes, key=lambda c: c[0])
            raise SchemaChangedError(
                f"schema of table {table} changed under the typed query: a row adds column(s) "
                f"{', '.join(added)} that the typed schema lacks (it held every column of the "
                "table's first row); restart the query from its last checkpoint with the new "
                "schema (schema='auto' reads it from the stream), or pass on_schema_change='ignore' "
                "(new columns dropped and counted)", msg, 0, part="value", table=table, added=tuple(added))
        stats.schema_changes_ignored += len(changes)
        self.found = [(self.tables[i], name, msg) for i in moved
                      for name, msg, _ in self._logs[i].unknown_since(marks[i][0])]
        for i in moved:
            self._report(self.tables[i], self._logs[i])

    def _report(self, t: str, log) -> None:
        self.names[t] = tuple(name for name, _, _ in log.unknown_since(0))
        self.absent[t] = tuple(self.targets[t][j] for j in log.missing_since(0))

    def report(self) -> dict:
        return {t: names for t, names in self.names.items() if names}

    def report_missing(self) -> dict:
        return {t: names for t, names in self.absent.items() if names}


def _whole_table(log) -> bool:
    """The table's first row carried no column the typed schema lacks."""
    first = log.unknown_since(0)[:1]
    return not (first and first[0][2] == 0)

