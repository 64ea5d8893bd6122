"""Pure-Python reference twin of the Avro-protocol row decoder.

Same interface as the Cython core's AvroPlan: ``register(WriterSchema)``, ``run(keys, values,
start)`` (decode while every schema id is known; stop at anything else), ``append_control``,
``reset``, ``finish``.  It reads the Avro body itself (``ticdc_fast._avro_binary``) over the
compiled writer schema, so every error names the byte offset and column the core names.  It
defines behaviour; the core defines speed."""
from __future__ import annotations

import base64
import math

import pyarrow as pa

from .. import _constants as C
from .. import values as V
from .._avro_binary import AvroError, Reader
from ..arrow_types import old_image_column
from ..errors import DecodeError
from ..convert import text_decoder, typed_decoder
from ..values import to_float32
from .schema import (AV_BOOLEAN, AV_BYTES, AV_DOUBLE, AV_ENUM, AV_FIXED, AV_FLOAT, AV_INT, AV_LONG,
                     AV_NULL, AV_RECORD, AV_STRING, EXTENSIONS)

_MASK64 = (1 << 64) - 1
_I64 = (1 << 63) - 1


class _RecInfo:
    """What the TiDB extension fields of one value record said (as the core's RecInfo)."""
    __slots__ = ("op", "op_at", "commit_ts", "commit_ts_at", "checksum", "checksum_at", "corrupted", "ckver")

    def __init__(self):
        self.op = self.op_at = self.commit_ts = self.commit_ts_at = self.checksum = self.checksum_at = None
        self.corrupted = self.ckver = None


def decimal_text(raw: bytes, scale: int) -> str:
    """Minimal two's-complement big-endian unscaled bytes → MyDecimal-style text."""
    if not raw:
        raise V.ValueProblem("empty decimal bytes")   # TiCDC writes zero as 0x00
    if len(raw) > 90:
        raise V.ValueProblem("decimal wider than 720 bits")
    unscaled = int.from_bytes(raw, "big", signed=True)
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    text = digits if scale == 0 else f"{digits[:-scale]}.{digits[-scale:]}"
    return "-" + text if unscaled < 0 else text


# ----------------------------------------------------------------------------- column decoders
# Every branch of every column field gets a reader, and every column field its output decoder,
# when a writer schema's plan is compiled for this output (_RecordPlan), as the core's
# _branch_decoder chooses one per branch: the record walk reads the union index and hands the
# value to that branch's reader; the image's values go through their columns' decoders once the
# record is read.

def _branch_reader(field, b):
    """The reader of one branch of a column: the value, in the open protocol's value form;
    problems with the value itself are ``ValueProblem``s (reported at its start)."""
    kind = b.kind
    if kind == AV_NULL:
        return lambda r: None
    if kind == AV_STRING:
        # invalid UTF-8 is kept as surrogate escapes: the invalid_utf8 policy applies where the
        # text is rendered (ticdc_fast.convert's decoders)
        return lambda r: r.raw().decode("utf-8", "surrogateescape")
    if kind == AV_ENUM:
        symbols, n = b.symbols, len(b.symbols)
        return lambda r: symbols[r.enum(n)]
    if kind == AV_BOOLEAN:
        return lambda r: int(r.boolean())
    if kind == AV_INT or kind == AV_LONG:
        read = (lambda r: r.int32(r.pos)) if kind == AV_INT else (lambda r: r.long())
        if field.type_code == C.T_LONGLONG and field.flags & C.FLAG_UNSIGNED:
            return lambda r: read(r) & _MASK64   # long mode: TiCDC casts the uint64 to int64
        return read
    if kind == AV_FLOAT or kind == AV_DOUBLE:
        return _float_reader(kind, field.type_code == C.T_FLOAT)
    return _bytes_reader(field, b)


def _float_reader(kind: int, float32: bool):
    def read_float(r: Reader) -> float:
        v = r.float32() if kind == AV_FLOAT else r.float64()
        if math.isinf(v) or math.isnan(v):
            raise V.ValueProblem("NaN or infinite float")
        if float32:
            try:
                v = to_float32(v)
            except V.ValueProblem:
                raise V.ValueProblem("number out of range") from None
        return v
    return read_float


def _bytes_reader(field, b):
    """bytes/fixed (and any other kind, read as bytes): DECIMAL text, a BIT's integer, else the
    bytes as base64."""
    size = b.size if b.kind == AV_FIXED else None
    if field.type_code == C.T_NEWDECIMAL:
        scale = b.decimal[1] if b.decimal is not None else field.scale
        value = lambda raw: decimal_text(raw, scale)   # noqa: E731
    elif field.type_code == C.T_BIT:
        value = _bit_value
    else:
        value = lambda raw: base64.b64encode(raw).decode("ascii")   # noqa: E731
    if size is None:
        return lambda r: value(r.raw())
    return lambda r: value(r.fixed(size))


def _bit_value(raw: bytes) -> int:
    digits = raw.lstrip(b"\x00")
    if len(digits) > 8:
        raise V.ValueProblem("BIT value longer than 64 bits")
    return int.from_bytes(digits, "big")


_ROLE_COLUMN, _ROLE_EXTENSION, _ROLE_BEFORE = 0, 1, 2


class _RecordPlan:
    """One record's fields with their decoders, compiled once per (writer schema, output):
    ``fields`` holds per field (field, role, per-branch readers, the column's output decoder,
    per-branch plans of the _ticdc_before record).  The output decoder is the typed decoder of
    the target of the field's name (None: no target) or the generic text decoder."""
    __slots__ = ("fields",)

    def __init__(self, fields, cfg, top: bool = True):
        targets = None if cfg.targets is None else {t.name: t for t in cfg.targets}
        self.fields = []
        for f in fields:
            role = _ROLE_COLUMN
            if top and f.name == "_ticdc_before":
                role = _ROLE_BEFORE
            elif top and f.name in EXTENSIONS:
                role = _ROLE_EXTENSION
            readers = decoder = before = None
            if role == _ROLE_BEFORE:
                before = [_RecordPlan(b.fields, cfg, top=False) if b.kind == AV_RECORD else None
                          for b in f.branches]
            elif role == _ROLE_COLUMN:
                readers = [_branch_reader(f, b) for b in f.branches]
                decoder = _output_decoder(f, targets, cfg.timezone)
            self.fields.append((f, role, readers, decoder, before))


def _output_decoder(f, targets, tz):
    if targets is None:
        return text_decoder(f.type_code, f.flags)
    t = targets.get(f.name)
    return None if t is None else typed_decoder(t, f.type_code, f.flags, tz)


class ReferenceAvroRows:
    def __init__(self, cfg):
        self.cfg = cfg
        self.schemas = {}
        self.plans = {}         # schema id -> the _RecordPlan of its writer schema for this output
        self.rows = []
        self._extra_checked = set()

    def register(self, ws) -> None:
        self.schemas[ws.schema_id] = ws
        self.plans.pop(ws.schema_id, None)

    def _plan(self, schema_id: int):
        """The compiled plan of a registered writer schema (compiled when first used)."""
        plan = self.plans.get(schema_id)
        if plan is None:
            plan = self.plans[schema_id] = _RecordPlan(self.schemas[schema_id].fields, self.cfg)
        return plan

    def reset(self):
        self.rows = []

    def append_control(self, row):
        self.rows.append(row)

    # ---------------------------------------------------------------- records
    def _record(self, data: bytes, i: int, part: str, info: _RecInfo | None):
        """The writer schema and the image (``[(field, value, byte offset, output decoder)]``)
        of one framed record, and the _ticdc_before image (or None)."""
        if len(data) < 5:
            raise DecodeError("truncated Confluent header", i, 0, part=part)
        schema_id = int.from_bytes(data[1:5], "big", signed=True)
        ws = self.schemas[schema_id]
        r = Reader(data, 5)
        img, before = [], None
        try:
            before = self._fields(r, self._plan(schema_id), img, info, i, part)
        except AvroError as exc:
            raise DecodeError(exc.reason, i, exc.offset, getattr(exc, "column", None), part=part) from None
        if r.pos != len(data):
            raise DecodeError("trailing bytes after the Avro record", i, r.pos, part=part)
        return ws, img, before

    def _fields(self, r: Reader, plan: _RecordPlan, img: list, info, i: int, part: str):
        """Read a record's fields in order into ``img``, each value by its branch's reader;
        returns the _ticdc_before image."""
        before = None
        for f, role, readers, decoder, before_plans in plan.fields:
            try:
                bi = r.union(len(f.branches)) if f.is_union else 0
                b = f.branches[bi]
            except AvroError as exc:
                exc.column = f.name
                raise
            if role == _ROLE_BEFORE:
                if b.kind == AV_RECORD:
                    before = []
                    self._fields(r, before_plans[bi], before, None, i, part)
                elif b.kind != AV_NULL:
                    raise AvroError("unexpected _ticdc_before branch", r.pos)
                continue
            if role == _ROLE_EXTENSION:
                try:
                    _extension(r, f, b, info)
                except AvroError as exc:
                    exc.column = f.name
                    raise
                continue
            at = r.pos
            try:
                img.append((f, readers[bi](r), at, decoder))
            except AvroError as exc:
                exc.column = f.name
                raise
            except V.ValueProblem as exc:
                raise DecodeError(str(exc), i, at, f.name, part=part) from None
        return before

    def _wants(self, ws) -> bool:
        cfg = self.cfg
        return cfg.targets is None or (ws.database, ws.table) == (cfg.schema_name, cfg.table_name)

    def run(self, keys, values, start: int, msg_base: int = 0) -> int:
        i = start
        n = len(values)
        while i < n:
            key, value = keys[i], values[i]
            if not self._ready(key, value):
                return i
            self._message(key, value, msg_base + i)
            i += 1
        return i

    def _ready(self, key, value) -> bool:
        for data in (key, value):
            if data is not None and len(data) >= 5 and data[0] == 0:
                if int.from_bytes(data[1:5], "big", signed=True) not in self.schemas:
                    return False
        if value is None:
            return key is not None and len(key) >= 1 and key[0] == 0
        if key is not None and value[:1] == b"\x02":
            return False   # the front end rejects a keyed checkpoint
        return len(value) >= 1 and value[0] in (0, 2, 3) and (value[0] != 3 or (key is not None and key[:1] == b"\x00"))

    def _message(self, key, value, i):
        key_ws = key_img = None
        if key is not None:
            if key[:1] != b"\x00":
                raise DecodeError("key does not start with the Confluent magic byte 0x00", i, 0, part="key")
            key_ws, key_img, _ = self._record(key, i, "key", None)
        row = {"_msg": i, "_key_schema_id": key_ws.schema_id if key_ws else None}
        if value is None or value[0] == 3:
            if value is not None:
                if len(value) != 9:
                    raise DecodeError("delete event value must be 0x03 + 8 bytes", i, 0, part="value")
                row["_commit_ts"] = _ts(int.from_bytes(value[1:9], "big"), i, 1)
            ws = key_ws
            row.update(_op="DELETE", _schema=ws.database, _table=ws.table)
            self._emit(row, None, key_img, key_img, ws, i, None)
            return
        if value[0] == 2:
            if len(value) != 9:
                raise DecodeError("checkpoint value must be 0x02 + 8 bytes", i, 0, part="value")
            row.update(_op="RESOLVED", _commit_ts=_ts(int.from_bytes(value[1:9], "big"), i, 1))
            if self.cfg.targets is None or self.cfg.control_events:
                self.rows.append(row)
            return
        info = _RecInfo()
        ws, img, before = self._record(value, i, "value", info)
        row["_value_schema_id"] = ws.schema_id
        row.update(_schema=ws.database, _table=ws.table)
        op = info.op
        if op == b"c":
            row["_op"], after = "INSERT", img
        elif op == b"u":
            row["_op"], after = "UPDATE", img
        elif op == b"d":
            row["_op"], after, before = "DELETE", None, img
        elif op in (None, b""):
            row["_op"], after = "UPSERT", img    # without the TiDB extension insert = update
            info.commit_ts = None
        else:
            raise DecodeError("unknown _tidb_op", i, info.op_at, part="value")
        if info.commit_ts is not None:
            row["_commit_ts"] = _ts(info.commit_ts, i, info.commit_ts_at)
        self._emit(row, after, before, key_img, ws, i, info)

    def _emit(self, row, after, before, key_img, ws, i, info):
        cfg = self.cfg
        if not self._wants(ws):
            return
        if cfg.targets is not None and cfg.extra_columns == "error" and ws.schema_id not in self._extra_checked:
            wanted = {t.name for t in cfg.targets}
            for f, _, at, _ in (after if after is not None else before) or ():
                if f.name not in wanted:
                    raise DecodeError("column is not in the target schema", i, at, f.name, part="value")
            self._extra_checked.add(ws.schema_id)
        if info is not None and info.checksum is not None:
            row["_checksum"] = None
            if info.checksum:
                try:
                    row["_checksum"] = info.checksum.decode("utf-8")
                except UnicodeDecodeError:
                    raise DecodeError("invalid UTF-8 in a text value", i, info.checksum_at, part="value") from None
            row["_checksum_corrupted"] = info.corrupted
            row["_checksum_version"] = info.ckver
        if cfg.targets is None:
            for name, img in (("after", after), ("before", before), ("_key", key_img)):
                if img is None:
                    row[name] = None
                    continue
                row[name] = _entries(img, i)
        else:
            img = after if after is not None else before
            row["typed"] = dict(zip([t.name for t in cfg.targets], self._typed_image(img, i)))
            if cfg.old_image and before is not None:
                row[C.COL_BEFORE_ROW] = self._typed_image(before, i)
        self.rows.append(row)

    def _typed_image(self, img, i) -> list:
        """One image (None: none) as the target columns' values, in target order, each through
        its column's decoder."""
        have = {e[0].name: e for e in img or ()}
        out = []
        for t in self.cfg.targets:
            got = have.get(t.name)
            if got is None or got[1] is None:
                out.append(None)
                continue
            try:
                out.append(got[3](got[1]))
            except V.ValueProblem as exc:
                raise DecodeError(str(exc), i, got[2], t.name, part="value") from None
        return out

    def finish(self, fields):
        cols = {f.name: [] for f in fields}
        msg = []
        for r in self.rows:
            msg.append(r["_msg"])
            t = r.get("typed") or {}
            for f in fields:
                cols[f.name].append(t[f.name] if f.name in t else r.get(f.name))
        self.rows = []
        return [old_image_column(self.cfg.targets, cols[f.name]) if f.name == C.COL_BEFORE_ROW
                else pa.array(cols[f.name], f.type) for f in fields], msg


def _entries(img, i: int) -> list:
    """Generic output: one image's (name, text) map entries, each value through its column's
    text decoder."""
    entries = []
    for f, v, at, decoder in img:
        try:
            entries.append((f.name, None if v is None else decoder(v)))
        except V.ValueProblem as exc:
            raise DecodeError(str(exc), i, at, f.name, part="value") from None
    return entries


def _extension(r: Reader, f, b, info: _RecInfo | None) -> None:
    """A TiDB extension field: only the kinds TiCDC writes for them (as the core)."""
    kind = b.kind
    if kind == AV_NULL:
        return
    if kind == AV_STRING:
        at = r.pos
        raw = r.raw()
        if info is not None:
            if f.name == "_tidb_op":
                info.op, info.op_at = raw, at
            elif f.name == "_tidb_row_level_checksum":
                info.checksum, info.checksum_at = raw, at
        return
    if kind == AV_INT or kind == AV_LONG:
        at = r.pos
        v = r.int32() if kind == AV_INT else r.long()
        if info is not None:
            if f.name == "_tidb_commit_ts":
                info.commit_ts, info.commit_ts_at = v, at
            elif f.name == "_tidb_checksum_version":
                info.ckver = (v + (1 << 31)) % (1 << 32) - (1 << 31)   # the core keeps an int32
        return
    if kind == AV_BOOLEAN:
        v = r.boolean()
        if info is not None and f.name == "_tidb_corrupted":
            info.corrupted = v
        return
    raise AvroError("unsupported type for a TiDB extension field", r.pos)


def _ts(v, i, at):
    """A commit ts; ``at``: the byte offset of its value (1: the 8 bytes after a control byte)."""
    if v is None or not 0 <= v <= _I64:
        raise DecodeError("commit ts out of range", i, at, part="value")
    return v
