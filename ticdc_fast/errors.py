"""The one exception every decoder raises on bad input."""
from __future__ import annotations


class DecodeError(ValueError):
    """A message could not be decoded exactly.

    Attributes
    ----------
    message_index:
        Index of the Kafka message in the batch passed to ``decode`` (``None`` when the
        problem is not tied to one message, e.g. a key/value count mismatch).
    byte_offset:
        Offset in bytes from the start of that message's key or value (``part`` says which).
        For compressed values the offset is into the decompressed event frame.
    column:
        Column name the failing value belongs to, or ``None``.
    part:
        ``"key"`` or ``"value"`` (or ``None``).
    partition, offset:
        Kafka partition and offset of that message, when the decoder was given them (the Spark
        path always gives them), else ``None``.
    """

    def __init__(self, reason: str, message_index: int | None = None,
                 byte_offset: int | None = None, column: str | None = None,
                 part: str | None = None, partition: int | None = None, offset: int | None = None):
        self.reason = reason
        self.message_index = message_index
        self.byte_offset = byte_offset
        self.column = column
        self.part = part
        self.partition = partition
        self.offset = offset
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.message_index is not None:
            where.append(f"message {self.message_index}")
        if self.partition is not None or self.offset is not None:
            where.append(f"Kafka partition {self.partition}, offset {self.offset}")
        if self.part is not None:
            where.append(self.part)
        if self.byte_offset is not None:
            where.append(f"byte {self.byte_offset}")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return f"{self.reason} ({', '.join(where)})" if where else self.reason

    def at_kafka(self, partition, offset) -> "DecodeError":
        """Name the Kafka partition and offset of the failing message (in place; returns self)."""
        self.partition, self.offset = partition, offset
        self.args = (self._text(),)
        return self

    def __reduce__(self):
        return (type(self), (self.reason, self.message_index, self.byte_offset,
                             self.column, self.part, self.partition, self.offset))


class UnavailableError(DecodeError):
    """Something the decoder needs besides the message bytes could not be reached or read: the
    schema registry (down, timing out, answering 5xx), a claim-check store (missing permission,
    network, a file that is not there).  The message itself may be fine, so an error policy never
    skips or dead-letters it (``on_error`` does not apply): that would lose data.  Retry once the
    store is back.  ``location`` names what could not be read (a URL or a claim-check URI)."""

    def __init__(self, reason: str, message_index: int | None = None,
                 byte_offset: int | None = None, column: str | None = None,
                 part: str | None = None, partition: int | None = None, offset: int | None = None,
                 location: str | None = None):
        self.location = location
        super().__init__(reason, message_index, byte_offset, column, part, partition, offset)

    def __reduce__(self):
        return (type(self), (self.reason, self.message_index, self.byte_offset, self.column,
                             self.part, self.partition, self.offset, self.location))


class SchemaChangedError(DecodeError):
    """A typed decoder met a version of its table's schema whose columns differ from the typed
    target: a DDL (ADD/DROP COLUMN...) after the query started.  With ``on_schema_change="fail"``
    (the default) this stops decoding; an error policy never skips or dead-letters it
    (``on_error`` does not apply): every later row of the table would be affected.  ``table`` is
    ``"db.tbl"``; ``added`` the new columns the target lacks; ``removed`` the target columns the
    new version lacks.  Restart with the new schema (``schema="auto"`` reads it from the stream
    or the registry) or pass ``on_schema_change="ignore"``."""

    def __init__(self, reason: str, message_index: int | None = None,
                 byte_offset: int | None = None, column: str | None = None,
                 part: str | None = None, partition: int | None = None, offset: int | None = None,
                 table: str | None = None, added: tuple = (), removed: tuple = ()):
        self.table, self.added, self.removed = table, tuple(added), tuple(removed)
        super().__init__(reason, message_index, byte_offset, column, part, partition, offset)

    def __reduce__(self):
        return (type(self), (self.reason, self.message_index, self.byte_offset, self.column,
                             self.part, self.partition, self.offset, self.table, self.added,
                             self.removed))


ON_SCHEMA_CHANGE = ("fail", "ignore")


def check_on_schema_change(value: str) -> str:
    if value not in ON_SCHEMA_CHANGE:
        raise ValueError(f"on_schema_change must be 'fail' or 'ignore', not {value!r}")
    return value


def schema_change(table: str, target_names, before_names, after_names, what: str, message_index,
                  on_change: str, stats) -> None:
    """One change of the typed table's columns (``before_names`` → ``after_names``) seen by a
    typed decoder.  It matters only when it changes what the typed output holds: it removes a
    column the target has (null from now on), or the target held the whole table (every column
    of ``before``) and the table now has a column the target lacks (its values would be lost).
    A target that already names the new columns (taken from the new schema) sees no change; a
    target that leaves out columns of ``before`` is a projection, and a new column is one more
    column it does not ask for.  Raise SchemaChangedError (``fail``) or count it (``ignore``).
    Called once per schema version, where it is planned."""
    before, after, target = set(before_names), set(after_names), set(target_names)
    whole_table = before <= target
    added = tuple(c for c in after_names if c not in before and c not in target) if whole_table else ()
    removed = tuple(c for c in target_names if c in before and c not in after)
    if not added and not removed:
        return
    if on_change == "ignore":
        stats.schema_changes_ignored += 1
        return
    parts = []
    if added:
        parts.append(f"adds column(s) {', '.join(added)} that the typed schema lacks")
    if removed:
        parts.append(f"drops column(s) {', '.join(removed)} of the typed schema")
    raise SchemaChangedError(
        f"schema of table {table} changed under the typed query: {what} {' and '.join(parts)}; "
        "restart the query from its last checkpoint with the new schema (schema='auto' reads it "
        "from the stream or the registry), or pass on_schema_change='ignore' (new columns "
        "dropped and counted, dropped columns null)",
        message_index, 0, part="value", table=table, added=added, removed=removed)


class SlowImplementationWarning(RuntimeWarning):
    """The compiled core could not be loaded: decoding falls back to the pure-Python twin, which
    gives the same output 60–160× slower.  The message says why and how to fix it."""


class DecoderBusyError(RuntimeError):
    """A decoder was used from a second thread while a call on it was still running.

    Decoders keep per-batch buffers and cross-batch state (schemas, held rows); they are not
    thread-safe.  Rather than corrupt either, the second call fails at once and changes nothing.
    Use one decoder per thread (decoders in different threads run in parallel: the core releases
    the GIL)."""
