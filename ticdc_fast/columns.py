"""The output columns of every protocol, declared once: their names, order, Arrow types and
nullability per protocol and mode (generic or typed).

The front ends build their output schemas from it, the pure-Python twins fill their columns in
its order, and the Cython core builds its column set from it when a plan is compiled (no column
list is written out anywhere else).  Names come from ``_constants``.

A protocol in one mode is a ``Layout``: the protocol's own columns before the table's typed
columns (``head``), after them (``tail``), and the columns the core's column set holds in that
mode although the output leaves them out (``unused``: the column set is the same in both modes;
the row writers skip these, finish hands them over empty and the front ends never select them;
the twins ignore them).  Generic output has no table columns, so all of it is ``head``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pyarrow as pa

from . import _constants as C

TEXT_MAP = pa.map_(pa.string(), pa.string())   # generic images: column name -> value as text


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    nullable: bool = True
    empty_is_null: bool = False   # an empty text value is written as null
    # how the core sizes the column's builder before a batch (no effect on the values): data
    # bytes per row, and 1/byte_share of the batch's input bytes (0: none)
    bytes_per_row: int = 0
    byte_share: int = 0

    @property
    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


@dataclass(frozen=True)
class Layout:
    head: tuple[Column, ...]
    tail: tuple[Column, ...] = ()
    unused: tuple[Column, ...] = ()

    def fields(self, targets: Sequence = (), *, old_image: bool = False,
               table_schema: pa.Schema | None = None) -> list[pa.Field]:
        """The output fields (without ``_partition``/``_offset``) for these typed ``targets``
        (``arrow_types.Target``; none in generic mode).  ``table_schema``: the typed columns
        keep its fields' metadata."""
        out = [c.field for c in self.head]
        for t in targets:
            meta = table_schema.field(t.name).metadata if table_schema is not None else None
            out.append(pa.field(t.name, t.arrow_type, nullable=True, metadata=meta))
        if old_image:
            out.append(old_image_field(targets))
        return out + [c.field for c in self.tail]


def old_image_field(targets: Sequence) -> pa.Field:
    """Typed output's ``_before`` column (``old_image=True``): the old image as a struct of the
    target columns, null on rows without one."""
    return pa.field(C.COL_BEFORE_ROW, pa.struct([pa.field(t.name, t.arrow_type) for t in targets]))


# ------------------------------------------------------------------ the columns
OP = Column(C.COL_OP, pa.string(), nullable=False, bytes_per_row=6)
COMMIT_TS = Column(C.COL_COMMIT_TS, pa.int64(), nullable=False)
SCHEMA = Column(C.COL_SCHEMA, pa.string(), empty_is_null=True, bytes_per_row=8)
TABLE = Column(C.COL_TABLE, pa.string(), empty_is_null=True, bytes_per_row=8)
DDL = Column(C.COL_DDL, pa.string())
AFTER = Column(C.COL_AFTER, TEXT_MAP, byte_share=1)
BEFORE = Column(C.COL_BEFORE, TEXT_MAP, byte_share=4)
HANDLE_KEY_ONLY = Column(C.COL_HANDLE_KEY_ONLY, pa.bool_(), nullable=False)
# the tiflow flavour omits the location: an empty one is null too
CLAIM_CHECK = Column(C.COL_CLAIM_CHECK, pa.string(), empty_is_null=True)
CHANGE = (OP, COMMIT_TS, SCHEMA, TABLE, DDL, AFTER, BEFORE)   # every generic changelog starts so

# an UPDATE's old image lacks columns that ticdc wrote ambiguously (protocols.md E.15)
BEFORE_INCOMPLETE = Column(C.COL_BEFORE_INCOMPLETE, pa.bool_(), nullable=False)
OPEN_GENERIC = Layout(CHANGE + (
    Column(C.COL_DDL_TYPE, pa.int32()),
    Column(C.COL_ROW_ID, pa.int64()),
    Column(C.COL_PHYSICAL_TABLE_ID, pa.int64()),
    HANDLE_KEY_ONLY, CLAIM_CHECK, BEFORE_INCOMPLETE,
))
OPEN_TYPED = Layout((OP, COMMIT_TS), (DDL, HANDLE_KEY_ONLY, CLAIM_CHECK, BEFORE_INCOMPLETE))

SIMPLE_DDL_TYPE = Column(C.COL_DDL_TYPE, pa.string())
SIMPLE_TABLE_SCHEMA = Column(C.COL_TABLE_SCHEMA, pa.string())
SIMPLE_SCHEMA_VERSION = Column(C.COL_SCHEMA_VERSION, pa.int64())
SIMPLE_TABLE_ID = Column(C.COL_TABLE_ID, pa.int64())
SIMPLE_BUILD_TS = Column(C.COL_BUILT_TS, pa.int64())
SIMPLE_CHECKSUM = (
    Column(C.COL_CHECKSUM_VERSION, pa.int32()),
    Column(C.COL_CHECKSUM_CORRUPTED, pa.bool_()),
    Column(C.COL_CHECKSUM_CURRENT, pa.int64()),
    Column(C.COL_CHECKSUM_PREVIOUS, pa.int64()),
)
UNDECODABLE = Column(C.COL_UNDECODABLE, pa.bool_(), nullable=False)
RAW = Column(C.COL_RAW, pa.binary())
SIMPLE_GENERIC = Layout(CHANGE + (
    SIMPLE_DDL_TYPE, SIMPLE_TABLE_SCHEMA, SIMPLE_SCHEMA_VERSION, SIMPLE_TABLE_ID, SIMPLE_BUILD_TS,
    HANDLE_KEY_ONLY, CLAIM_CHECK) + SIMPLE_CHECKSUM + (UNDECODABLE, RAW))
SIMPLE_TYPED = Layout(
    (OP, COMMIT_TS),
    (DDL, SIMPLE_DDL_TYPE, SIMPLE_SCHEMA_VERSION, HANDLE_KEY_ONLY, CLAIM_CHECK, UNDECODABLE, RAW),
    (SIMPLE_TABLE_SCHEMA, SIMPLE_TABLE_ID, SIMPLE_BUILD_TS) + SIMPLE_CHECKSUM)

# null when TiCDC does not send it (no extension, tombstones)
AVRO_COMMIT_TS = Column(C.COL_COMMIT_TS, pa.int64())
AVRO_VALUE_SCHEMA_ID = Column(C.COL_VALUE_SCHEMA_ID, pa.int32())
AVRO_EXTENSIONS = (
    Column(C.COL_DDL_TYPE, pa.int32()),
    Column(C.COL_CHECKSUM, pa.string()),
    Column(C.COL_CHECKSUM_CORRUPTED, pa.bool_()),
    Column(C.COL_CHECKSUM_VERSION, pa.int32()),
    Column(C.COL_KEY_SCHEMA_ID, pa.int32()),
)
AVRO_GENERIC = Layout(
    (OP, AVRO_COMMIT_TS, SCHEMA, TABLE, DDL, AFTER, BEFORE, Column(C.COL_KEY, TEXT_MAP, byte_share=8))
    + AVRO_EXTENSIONS + (AVRO_VALUE_SCHEMA_ID,),
    unused=(HANDLE_KEY_ONLY, CLAIM_CHECK))
AVRO_TYPED = Layout((OP, AVRO_COMMIT_TS), (DDL, AVRO_VALUE_SCHEMA_ID),
                    (HANDLE_KEY_ONLY, CLAIM_CHECK) + AVRO_EXTENSIONS)

LAYOUTS = {
    ("open", False): OPEN_GENERIC, ("open", True): OPEN_TYPED,
    ("simple", False): SIMPLE_GENERIC, ("simple", True): SIMPLE_TYPED,
    ("avro", False): AVRO_GENERIC, ("avro", True): AVRO_TYPED,
}


def layout(protocol: str, typed: bool) -> Layout:
    """``protocol``: ``open``, ``simple`` (JSON or Avro encoding alike) or ``avro``."""
    return LAYOUTS[protocol, bool(typed)]


def output_fields(protocol: str, targets: Sequence | None, *, old_image: bool = False,
                  table_schema: pa.Schema | None = None) -> list[pa.Field]:
    """The output fields of a ``protocol`` decoder: generic when ``targets`` is None (then
    ``old_image`` has no column of its own: the generic ``before`` holds the old image)."""
    typed = targets is not None
    return layout(protocol, typed).fields(targets or (), old_image=typed and bool(old_image),
                                          table_schema=table_schema)
