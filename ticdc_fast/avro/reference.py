"""Pure-Python reference twin of the Avro-protocol row decoder (fastavro).

Same interface as the Cython core's AvroPlan: ``register(WriterSchema)``, ``run(keys, values,
start)`` (decode while every schema id is known; stop at anything else), ``append_control``,
``reset``, ``finish``.  It defines behaviour; the core defines speed."""
from __future__ import annotations

import base64
import io
import struct

import fastavro
import orjson
import pyarrow as pa

from .. import _constants as C
from .. import values as V
from ..arrow_types import old_image_column
from ..errors import DecodeError
from ..open.reference import convert_typed, render_text
from .schema import AV_INT, AV_NULL, AV_RECORD, EXTENSIONS

_MASK64 = (1 << 64) - 1
_I64 = (1 << 63) - 1


def _strip_logical(node):
    """fastavro would turn decimals into Decimal objects; the twin reads the raw bytes."""
    if isinstance(node, dict):
        return {k: _strip_logical(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [_strip_logical(x) for x in node]
    return node


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


def normalise(field, v):
    """A field value as fastavro gives it → the open protocol's value form."""
    if v is None:
        return None
    code = field.type_code
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        if code == C.T_LONGLONG and field.flags & C.FLAG_UNSIGNED:
            return v & _MASK64   # long mode: TiCDC casts the uint64 to int64
        return v
    if isinstance(v, (bytes, bytearray)):
        if code == C.T_NEWDECIMAL:
            return decimal_text(bytes(v), field.scale)
        if code == C.T_BIT:
            b = bytes(v).lstrip(b"\x00")
            if len(b) > 8:
                raise V.ValueProblem("BIT value longer than 64 bits")
            return int.from_bytes(b, "big")
        return base64.b64encode(bytes(v)).decode("ascii")
    return v   # str, float


class ReferenceAvroRows:
    def __init__(self, cfg):
        self.cfg = cfg
        self.schemas = {}
        self.parsed = {}
        self.rows = []
        self._extra_checked = set()

    def register(self, ws) -> None:
        self.schemas[ws.schema_id] = ws
        # TiCDC writes Go-marshalled defaults (e.g. "default": 0 for a float), which Avro tools
        # other than goavro reject; defaults never matter for reading
        self.parsed[ws.schema_id] = fastavro.parse_schema(_strip_logical(orjson.loads(ws.text)),
                                                          _ignore_default_error=True)

    def known(self, schema_id) -> bool:
        return schema_id in self.schemas

    def reset(self):
        self.rows = []

    def append_control(self, row):
        self.rows.append(row)

    # ---------------------------------------------------------------- records
    def _record(self, data: bytes, i: int, part: str):
        if len(data) < 5:
            raise DecodeError(f"truncated Confluent header: {len(data)} of 5 bytes", i, 0, part=part)
        schema_id = int.from_bytes(data[1:5], "big", signed=True)
        ws = self.schemas[schema_id]
        buf = io.BytesIO(data[5:])
        try:
            # invalid UTF-8 in a string comes as surrogate escapes: text values follow the
            # invalid_utf8 policy (open reference render_text / convert_typed)
            rec = fastavro.schemaless_reader(buf, self.parsed[schema_id],
                                             handle_unicode_errors="surrogateescape")
        except Exception as exc:  # EOFError, ValueError, IndexError, UnicodeDecodeError...
            raise DecodeError(f"invalid Avro body (schema id {schema_id}): {type(exc).__name__}: {exc}",
                              i, 5 + buf.tell(), part=part) from None
        if buf.tell() != len(data) - 5:
            raise DecodeError(f"{len(data) - 5 - buf.tell()} trailing bytes after the Avro record",
                              i, 5 + buf.tell(), part=part)
        return ws, rec

    def _check_ints(self, fields, rec, i, part):
        """Avro ``int`` is 32-bit; fastavro's reader does not check."""
        for f in fields:
            v = rec.get(f.name)
            if type(v) is int and all(b.kind == AV_INT for b in f.branches if b.kind != AV_NULL) \
                    and not -(1 << 31) <= v < (1 << 31):
                raise DecodeError("Avro int out of 32-bit range", i, 0, f.name, part=part)

    def _image(self, fields, rec, i, part):
        self._check_ints(fields, rec, i, part)
        out = []
        for f in fields:
            if f.name in EXTENSIONS:
                continue
            try:
                out.append((f, normalise(f, rec.get(f.name))))
            except V.ValueProblem as exc:
                raise DecodeError(str(exc), i, 0, f.name, part=part) from None
        return out

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
            key_ws, krec = self._record(key, i, "key")
            key_img = self._image(key_ws.fields, krec, i, "key")
        row = {"_msg": i, "_key_schema_id": key_ws.schema_id if key_ws else None}
        if value is None or value[0] == 3:
            if value is not None:
                if len(value) != 9:
                    raise DecodeError("delete event value must be 0x03 + 8 bytes", i, 0, part="value")
                row["_commit_ts"] = _ts(int.from_bytes(value[1:9], "big"), i)
            ws = key_ws
            row.update(_op="DELETE", _schema=ws.database, _table=ws.table)
            self._emit(row, None, key_img, key_img, ws, i)
            return
        if value[0] == 2:
            if len(value) != 9:
                raise DecodeError("checkpoint value must be 0x02 + 8 bytes", i, 0, part="value")
            row.update(_op="RESOLVED", _commit_ts=_ts(int.from_bytes(value[1:9], "big"), i))
            if self.cfg.targets is None or self.cfg.control_events:
                self.rows.append(row)
            return
        ws, rec = self._record(value, i, "value")
        row["_value_schema_id"] = ws.schema_id
        row.update(_schema=ws.database, _table=ws.table)
        op = rec.get("_tidb_op")
        img = self._image(ws.fields, rec, i, "value")
        before = None
        bf = next((f for f in ws.fields if f.name == "_ticdc_before"), None)
        if bf is not None and rec.get("_ticdc_before") is not None:
            rb = next(b for b in bf.branches if b.kind == AV_RECORD)
            before = self._image(rb.fields, rec["_ticdc_before"], i, "value")
        if op == "c":
            row["_op"], after = "INSERT", img
        elif op == "u":
            row["_op"], after = "UPDATE", img
        elif op == "d":
            row["_op"], after, before = "DELETE", None, img
        elif op in (None, ""):
            row["_op"], after = "UPSERT", img    # without the TiDB extension insert = update
        else:
            raise DecodeError(f"unknown _tidb_op {op!r}", i, 0, part="value")
        if "_tidb_commit_ts" in rec and op not in (None, ""):
            row["_commit_ts"] = _ts(rec["_tidb_commit_ts"], i)
        if "_tidb_row_level_checksum" in rec:
            row["_checksum"] = rec["_tidb_row_level_checksum"] or None
            if row["_checksum"] is not None and not _is_utf8(row["_checksum"]):
                raise DecodeError("invalid UTF-8 in a text value", i, 0, part="value")
            row["_checksum_corrupted"] = rec.get("_tidb_corrupted")
            row["_checksum_version"] = rec.get("_tidb_checksum_version")
        self._emit(row, after, before, key_img, ws, i)

    def _emit(self, row, after, before, key_img, ws, i):
        cfg = self.cfg
        if not self._wants(ws):
            return
        if cfg.targets is None:
            for name, img in (("after", after), ("before", before), ("_key", key_img)):
                if img is None:
                    row[name] = None
                    continue
                entries = []
                for f, v in img:
                    try:
                        entries.append((f.name, render_text(f.type_code, f.flags, v)))
                    except V.ValueProblem as exc:
                        raise DecodeError(str(exc), i, 0, f.name, part="value") from None
                row[name] = entries
        else:
            img = after if after is not None else before
            if cfg.extra_columns == "error" and ws.schema_id not in self._extra_checked:
                wanted = {t.name for t in cfg.targets}
                for f, _ in img or ():
                    if f.name not in wanted:
                        raise DecodeError(f"column {f.name!r} (schema id {ws.schema_id}) is not in the "
                                          "target schema", i, 0, f.name, part="value")
                self._extra_checked.add(ws.schema_id)
            row["typed"] = dict(zip([t.name for t in cfg.targets], self._typed_image(img, i)))
            if cfg.old_image and before is not None:
                row[C.COL_OLD_IMAGE] = self._typed_image(before, i)
        self.rows.append(row)

    def _typed_image(self, img, i) -> list:
        """One image (None: none) as the target columns' values, in target order."""
        have = {f.name: (f, v) for f, v in img or ()}
        out = []
        for t in self.cfg.targets:
            got = have.get(t.name)
            if got is None or got[1] is None:
                out.append(None)
                continue
            try:
                out.append(convert_typed(t, got[0].type_code, got[0].flags, got[1], self.cfg.timezone))
            except V.ValueProblem as exc:
                raise DecodeError(str(exc), i, 0, t.name, part="value") from None
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
        return [old_image_column(self.cfg.targets, cols[f.name]) if f.name == C.COL_OLD_IMAGE
                else pa.array(cols[f.name], f.type) for f in fields], msg


def _is_utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _ts(v, i):
    if v is None or not 0 <= v <= _I64:
        raise DecodeError(f"commit ts {v} out of range", i, 0, part="value")
    return v
