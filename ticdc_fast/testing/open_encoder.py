"""A TiCDC Open Protocol *encoder*, for tests, benchmarks, demos and pipeline testing.

It writes the bytes TiCDC writes (``protocol=open-protocol``) for both code bases:

* ``flavor="tiflow"``: pingcap/tiflow (classic TiCDC, v4-v8.5).  Go ``encoding/json``: column
  maps sorted by name, ``<>&`` and U+2028/U+2029 escaped, invalid UTF-8 replaced by ``\\ufffd``,
  ``rid`` in the key, empty ``scm``/``tbl`` omitted.
* ``flavor="ticdc"``: pingcap/ticdc (new architecture).  json-iterator without HTML escaping:
  table column order, bytes >= 0x80 copied raw (no UTF-8 validation), float exponents with at
  least two digits (``1e-07``), ``scm``/``tbl`` always written, never ``rid``, claim-check keys
  with ``"ohk":true,"ohk":false``.

Values are taken as given: the encoder never range-checks integers, so tests can forge inputs
that a decoder must reject.  Wire rules: ``shared/spec/protocols.md`` sections 0 and A.
"""
from __future__ import annotations

import base64
import gc
import math
import random
import re
import struct
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from operator import attrgetter

from .. import _constants as C
from ._gen import WallClock
from ..compression import check_compression, compress
from ..values import format_float

__all__ = [
    "Col", "RowChange", "DDL", "Resolved", "OpenEncoder", "realistic_changefeed",
    "claim_check_file", "go_quote", "make_tso",
]

FLAVORS = ("tiflow", "ticdc")
LARGE_MESSAGE_HANDLES = ("none", "handle-key-only", "claim-check")

# Kafka record overhead TiCDC adds to a message's length (common.MaxRecordOverhead:
# 5 * MaxVarintLen32 + MaxVarintLen64 + 1).
MAX_RECORD_OVERHEAD = 36

_U64 = struct.Struct(">Q").pack
_VERSION_HEAD = _U64(C.OPEN_BATCH_VERSION)


# ============================================================================ events
@dataclass(slots=True)
class Col:
    """One column of a row image.

    ``value`` is ``None`` for SQL NULL; an ``int`` for integer types, YEAR, BIT, ENUM (1-based
    index) and SET (bitmask); a ``float`` for FLOAT/DOUBLE (FLOAT is rounded to float32); a
    ``str`` already rendered as TiDB text for DECIMAL, DATE/DATETIME/TIMESTAMP/TIME, JSON and
    VECTOR; a ``str`` for non-binary CHAR/VARCHAR/TEXT; ``bytes`` for binary-charset columns
    (``flags & 1``) and BLOBs.  ``bytes`` for a non-binary VARCHAR are written as TiCDC would
    write such bytes (tiflow: invalid UTF-8 becomes ``\\ufffd``; ticdc: copied raw).
    """
    name: str
    type: int
    value: object
    flags: int = 0


@dataclass(slots=True)
class RowChange:
    """A row event.  ``after`` only: INSERT; ``after`` and ``before``: UPDATE; ``before`` only: DELETE."""
    schema: str
    table: str
    commit_ts: int
    after: list | None = None
    before: list | None = None
    row_id: int | None = None
    partition_id: int | None = None
    handle_key_only: bool = False
    claim_check_location: str | None = None

    @property
    def op(self) -> str:
        if self.after is None:
            return "DELETE"
        return "INSERT" if self.before is None else "UPDATE"


@dataclass(slots=True)
class DDL:
    schema: str
    table: str
    commit_ts: int
    query: str
    ddl_type: int   # TiDB ActionType code (3 = CREATE TABLE)


@dataclass(slots=True)
class Resolved:
    ts: int


def make_tso(physical_ms: int, logical: int = 0) -> int:
    """A TiDB TSO: ``physical_ms << 18 | logical``."""
    return (physical_ms << 18) | logical


# ============================================================================ Go strconv.Quote
def _ranges(*pairs):
    out = set()
    for lo, hi in pairs:
        out.update(range(lo, hi + 1))
    return frozenset(out)


# Graphic code points assigned in Unicode 15.0 (Go 1.21+ tables), which Python 3.11's
# Unicode 14 database still calls unassigned.  Best effort; everything else follows
# str.isprintable(), which has the same definition as Go's unicode.IsPrint
# (L, M, N, P, S and U+0020).
_UNICODE15_PRINTABLE = _ranges(
    (0x0CF3, 0x0CF3), (0x0ECE, 0x0ECE), (0x10EFD, 0x10EFF), (0x1123F, 0x11241),
    (0x11B00, 0x11B09), (0x11F00, 0x11F10), (0x11F12, 0x11F3A), (0x11F3E, 0x11F59),
    (0x13440, 0x13455), (0x1B132, 0x1B132), (0x1B155, 0x1B155), (0x1D2C0, 0x1D2D3),
    (0x1DF25, 0x1DF2A), (0x1E030, 0x1E06D), (0x1E08F, 0x1E08F), (0x1E4D0, 0x1E4F9),
    (0x1F6DC, 0x1F6DC), (0x1F774, 0x1F776), (0x1F77B, 0x1F77F), (0x1F7D9, 0x1F7D9),
    (0x1FA75, 0x1FA77), (0x1FA87, 0x1FA88), (0x1FAAD, 0x1FAAF), (0x1FABB, 0x1FABD),
    (0x1FABF, 0x1FABF), (0x1FACE, 0x1FACF), (0x1FADA, 0x1FADB), (0x1FAE8, 0x1FAE8),
    (0x1FAF7, 0x1FAF8), (0x31350, 0x323AF),
)

_QUOTE_SHORT = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r",
                0x09: "\\t", 0x0B: "\\v", 0x22: '\\"', 0x5C: "\\\\"}


def _go_is_print(cp: int) -> bool:
    return chr(cp).isprintable() or cp in _UNICODE15_PRINTABLE


class _QuoteTable(dict):
    """str.translate table for Go strconv.Quote over text decoded with surrogateescape."""

    def __missing__(self, cp: int):
        if 0xDC80 <= cp <= 0xDCFF:          # an invalid UTF-8 byte (surrogateescape)
            out = f"\\x{cp - 0xDC00:02x}"
        elif cp in _QUOTE_SHORT:
            out = _QUOTE_SHORT[cp]
        elif cp < 0x20 or cp == 0x7F:
            out = f"\\x{cp:02x}"
        elif 0xD800 <= cp <= 0xDFFF:        # cannot come from bytes; Go would see invalid bytes
            out = "".join(f"\\x{b:02x}" for b in chr(cp).encode("utf-8", "surrogatepass"))
        elif _go_is_print(cp):
            out = cp
        elif cp < 0x10000:
            out = f"\\u{cp:04x}"
        else:
            out = f"\\U{cp:08x}"
        self[cp] = out
        return out


_QUOTE_TABLE = _QuoteTable()
_QUOTE_PLAIN = re.compile(rb'[\x20\x21\x23-\x5b\x5d-\x7e]*').fullmatch
# Bytes that go through Quote and then JSON unchanged (tiflow also escapes < > &).
_QUOTE_JSON_PLAIN_TF = re.compile(rb'[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\x7e]*').fullmatch


def go_quote(data: bytes) -> str:
    """Go ``strconv.Quote(string(data))`` without the surrounding double quotes.

    The result is a ``str``; it is pure ASCII except for printable non-ASCII runes.
    """
    if _QUOTE_PLAIN(data):
        return data.decode("ascii")
    return data.decode("utf-8", "surrogateescape").translate(_QUOTE_TABLE)


# ============================================================================ JSON strings
# Go encoding/json (tiflow): HTML-safe, \b \f \n \r \t short forms, \u00XX otherwise,
# U+2028/U+2029 escaped, each invalid UTF-8 byte (a surrogateescape char) -> \ufffd.
_TF_TABLE = {cp: f"\\u{cp:04x}" for cp in range(0x20)}
_TF_TABLE.update({0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
                  0x22: '\\"', 0x5C: "\\\\", 0x3C: "\\u003c", 0x3E: "\\u003e", 0x26: "\\u0026",
                  0x2028: "\\u2028", 0x2029: "\\u2029"})
_TF_TABLE.update({cp: "\\ufffd" for cp in range(0xD800, 0xE000)})
_TF_NEEDS = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]').search

# json-iterator, EscapeHTML=false (ticdc): only " \ \n \r \t short, other < 0x20 as \u00XX;
# everything else (including raw bytes kept as surrogateescape chars) is copied.
_TC_TABLE = {cp: f"\\u{cp:04x}" for cp in range(0x20)}
_TC_TABLE.update({0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x5C: "\\\\"})
_TC_NEEDS = re.compile('[\x00-\x1f"\\\\]').search


def _json_str_tf(s: str) -> str:
    if _TF_NEEDS(s) is None:
        return '"' + s + '"'
    return '"' + s.translate(_TF_TABLE) + '"'


def _json_str_tc(s: str) -> str:
    if _TC_NEEDS(s) is None:
        return '"' + s + '"'
    return '"' + s.translate(_TC_TABLE) + '"'


# ============================================================================ floats
_EXP_ONE_DIGIT = re.compile(r"e([+-])(\d)$")


def _float64_tf(x) -> str:
    if type(x) is not float:
        x = _as_float(x)
    r = repr(x)
    if "e" not in r and "n" not in r:       # plain notation, not nan/inf
        return r[:-2] if r.endswith(".0") else r
    if x != x or x in (math.inf, -math.inf):
        return "0"                            # TF mounter turns NaN/Inf into 0
    return format_float(x, 64)


def _float64_tc(x) -> str:
    if type(x) is not float:
        x = _as_float(x)
    r = repr(x)
    if "e" not in r and "n" not in r:
        return r[:-2] if r.endswith(".0") else r
    if x != x or x in (math.inf, -math.inf):
        raise ValueError("ticdc cannot encode a NaN or infinite float")
    return _EXP_ONE_DIGIT.sub(r"e\g<1>0\g<2>", format_float(x, 64))


def _to_f32(x: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        raise ValueError(f"{x!r} is outside the float32 range") from None


def _float32_tf(x) -> str:
    x = _as_float(x)
    if x != x or x in (math.inf, -math.inf):
        return "0"
    return format_float(_to_f32(x), 32)


def _float32_tc(x) -> str:
    x = _as_float(x)
    if x != x or x in (math.inf, -math.inf):
        raise ValueError("ticdc cannot encode a NaN or infinite float")
    return _EXP_ONE_DIGIT.sub(r"e\g<1>0\g<2>", format_float(_to_f32(x), 32))


def _as_float(x) -> float:
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return float(x)
    raise TypeError(f"expected a float, got {type(x).__name__}")


# ============================================================================ values
def _int(v) -> str:
    if type(v) is int:
        return str(v)
    if isinstance(v, int):                    # bool, IntEnum
        return str(int(v))
    raise TypeError(f"expected an int, got {type(v).__name__}")


def _to_bytes(v) -> bytes:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    raise TypeError(f"expected bytes or str, got {type(v).__name__}")


def _b64(v) -> str:
    return '"' + base64.b64encode(_to_bytes(v)).decode("ascii") + '"'


class _Flavor:
    """Per-flavour value renderers: each maps a non-None value to its JSON text."""

    def __init__(self, name: str):
        self.name = name
        tiflow = name == "tiflow"
        self.jstr = js = _json_str_tf if tiflow else _json_str_tc
        f64 = _float64_tf if tiflow else _float64_tc
        f32 = _float32_tf if tiflow else _float32_tc

        def text(v) -> str:
            if type(v) is str:
                return js(v)
            if isinstance(v, (bytes, bytearray, memoryview)):
                return js(bytes(v).decode("utf-8", "surrogateescape"))
            if isinstance(v, str):
                return js(str(v))
            raise TypeError(f"expected str, got {type(v).__name__}")

        def quoted(v) -> str:
            return js(go_quote(_to_bytes(v)))

        def decimal(v) -> str:
            if isinstance(v, Decimal):
                v = format(v, "f")
            return text(v)

        def generic(v) -> str:            # unknown type codes: like TC's WriteAnyField
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, int):
                return str(v)
            if isinstance(v, float):
                return f64(v)
            if isinstance(v, str):
                return js(v)
            return _b64(v)

        def null_type(v) -> str:
            raise ValueError("a type-NULL column (t=6) can only hold None")

        r = {}
        for t in (C.T_TINY, C.T_SHORT, C.T_LONG, C.T_LONGLONG, C.T_INT24, C.T_YEAR,
                  C.T_BIT, C.T_ENUM, C.T_SET):
            r[t] = _int
        r[C.T_FLOAT] = f32
        r[C.T_DOUBLE] = f64
        r[C.T_NULL] = null_type
        for t in (C.T_DECIMAL_LEGACY, C.T_NEWDECIMAL):
            r[t] = decimal
        for t in (C.T_TIMESTAMP, C.T_DATE, C.T_NEWDATE, C.T_DURATION, C.T_DATETIME,
                  C.T_JSON, C.T_VECTOR):
            r[t] = text
        for t in (C.T_TINY_BLOB, C.T_MEDIUM_BLOB, C.T_LONG_BLOB, C.T_BLOB):
            r[t] = _b64
        self.renderers = r
        self.text = text
        self.decimal = decimal
        self.quoted = quoted
        self.generic = generic

    def renderer(self, tcode: int, flags: int):
        if tcode in (C.T_VARCHAR, C.T_VAR_STRING, C.T_STRING):
            return self.quoted if flags & C.FLAG_BINARY else self.text
        return self.renderers.get(tcode, self.generic)


_FLAVOR_OBJS = {name: _Flavor(name) for name in FLAVORS}
_COL_SIG = attrgetter("name", "type", "flags")


def claim_check_file(key: bytes | None, value: bytes) -> bytes:
    """The claim-check file content: Go JSON ``{"key":<base64>,"value":<base64>}``.

    ``key``/``value`` are the one-event framings (``u64be(1) u64be(len) keyJSON`` and
    ``u64be(len) value``); a ``None`` key gives ``"key":null``.
    """
    k = "null" if key is None else '"' + base64.b64encode(key).decode("ascii") + '"'
    v = "null" if value is None else '"' + base64.b64encode(value).decode("ascii") + '"'
    return ('{"key":' + k + ',"value":' + v + "}").encode("ascii")


# ============================================================================ encoder
class OpenEncoder:
    """Encode events into open-protocol Kafka messages, the way TiCDC batches them.

    Parameters
    ----------
    flavor:
        ``"tiflow"`` or ``"ticdc"`` (see the module docstring).
    max_batch_size:
        ``max-batch-size``: rows per Kafka message (default 16).
    max_message_bytes:
        ``max-message-bytes``: the batch byte budget and the single-event limit.
    compression:
        ``large-message-handle-compression``: ``none``, ``snappy`` or ``lz4``; applied to every
        row and DDL event payload (never to the key, never to the empty resolved payload).
    batch_control_events:
        ``False`` (current TiCDC): each DDL and Resolved event goes in its own message, after
        the open row batch is flushed.  ``True``: they are batched like rows (legacy encoders).
    large_message_handle:
        What to do with a row whose single-event length (key + value + 36 + 24) exceeds
        ``max_message_bytes``: ``none`` raises ``ValueError`` (ErrMessageTooLarge);
        ``handle-key-only`` re-encodes it with only the handle-key columns and ``ohk``;
        ``claim-check`` stores the full event in ``self.claim_check_files`` (file name ->
        content) and sends the handle-key columns with ``ccl``.
    claim_check_storage_uri:
        Prefix of the ``ccl`` location (``<uri>/<uuid>.json``).
    seed:
        Seed for the claim-check file names (UUIDv4 from ``random.Random(seed)``).
    """

    def __init__(self, flavor: str = "tiflow", max_batch_size: int = 16,
                 max_message_bytes: int = 10 * 1024 * 1024, compression: str = "none",
                 batch_control_events: bool = False, *, large_message_handle: str = "none",
                 claim_check_storage_uri: str = "file:///tmp/ticdc-claim-check", seed: int = 0):
        if flavor not in FLAVORS:
            raise ValueError(f"flavor must be one of {FLAVORS}, not {flavor!r}")
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        if large_message_handle not in LARGE_MESSAGE_HANDLES:
            raise ValueError(f"large_message_handle must be one of {LARGE_MESSAGE_HANDLES}")
        self.flavor = flavor
        self.max_batch_size = int(max_batch_size)
        self.max_message_bytes = int(max_message_bytes)
        self.compression = check_compression(compression)
        self.batch_control_events = bool(batch_control_events)
        self.large_message_handle = large_message_handle
        self.claim_check_storage_uri = claim_check_storage_uri.rstrip("/")
        self.claim_check_files: dict[str, bytes] = {}
        self._rng = random.Random(seed)
        self._tiflow = flavor == "tiflow"
        self._fl = _FLAVOR_OBJS[flavor]
        self._jstr = self._fl.jstr
        self._plans: dict = {}
        self._key_names: dict = {}

    # ------------------------------------------------------------------ event keys
    def encode_event_key(self, ev) -> bytes:
        """The event-key JSON (not framed)."""
        js = self._jstr
        if isinstance(ev, RowChange):
            names = self._key_names.get((ev.schema, ev.table))
            if names is None:
                names = self._key_names[(ev.schema, ev.table)] = self._names_part(ev.schema, ev.table)
            s = '{"ts":' + str(ev.commit_ts) + names
            if self._tiflow:
                if ev.row_id:
                    s += ',"rid":' + str(ev.row_id)
                if ev.partition_id is not None:          # *int64, omitempty: nil only
                    s += ',"ptn":' + str(ev.partition_id)
                s += ',"t":1'
                if ev.claim_check_location:
                    # NewClaimCheckMessage resets OnlyHandleKey: no "ohk" here.
                    s += ',"ccl":' + js(ev.claim_check_location)
                elif ev.handle_key_only:
                    s += ',"ohk":true'
            else:
                s += ',"t":1'
                if ev.handle_key_only or ev.claim_check_location:
                    s += ',"ohk":true'
                if ev.claim_check_location:
                    s += ',"ohk":false,"ccl":' + js(ev.claim_check_location)
                if ev.partition_id is not None:
                    s += ',"ptn":' + str(ev.partition_id)
            s += "}"
        elif isinstance(ev, DDL):
            s = '{"ts":' + str(ev.commit_ts) + self._names_part(ev.schema, ev.table) + ',"t":2}'
        elif isinstance(ev, Resolved):
            s = '{"ts":' + str(ev.ts) + ',"t":3}'
        else:
            raise TypeError(f"not an event: {type(ev).__name__}")
        return self._bytes(s)

    def _names_part(self, schema, table) -> str:
        js = self._jstr
        if self._tiflow:                                  # omitempty
            return ((',"scm":' + js(schema) if schema else "")
                    + (',"tbl":' + js(table) if table else ""))
        return ',"scm":' + js(schema or "") + ',"tbl":' + js(table or "")

    # ------------------------------------------------------------------ event values
    def encode_event_value(self, ev) -> bytes:
        """The event-value JSON, uncompressed (``b""`` for Resolved)."""
        if isinstance(ev, RowChange):
            return self._bytes(self._row_value(ev))
        if isinstance(ev, DDL):
            return self._bytes('{"q":' + self._jstr(ev.query) + ',"t":' + _int(ev.ddl_type) + "}")
        if isinstance(ev, Resolved):
            return b""
        raise TypeError(f"not an event: {type(ev).__name__}")

    def _bytes(self, s: str) -> bytes:
        if self._tiflow:
            return s.encode("utf-8")
        try:
            return s.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raise ValueError("text holds a lone surrogate that is not an escaped byte") from None

    def _row_value(self, ev: RowChange) -> str:
        after, before = ev.after, ev.before
        if after is None and before is None:
            raise ValueError("a RowChange needs after and/or before")
        if ev.handle_key_only or ev.claim_check_location:
            after = _handle_only(after)
            before = _handle_only(before)
        parts = []
        if after is not None:
            if not self._tiflow or after:                 # Go map omitempty
                parts.append('"u":' + self._columns(after))
            if before is not None and (not self._tiflow or before):
                parts.append('"p":' + self._columns(before))
        elif not self._tiflow or before:
            parts.append('"d":' + self._columns(before))
        return "{" + ",".join(parts) + "}"

    def _columns(self, cols) -> str:
        sig = tuple(map(_COL_SIG, cols))
        render = self._plans.get(sig)
        if render is None:
            render = self._plans[sig] = self._make_plan(sig)
        return render(cols)

    def _make_plan(self, sig):
        """Compile a renderer for one column layout (names, types, flags): a generated function
        that writes the whole column map in one join, in wire order."""
        if len(self._plans) > 4096:
            self._plans.clear()
        n = len(sig)
        if self._tiflow:
            last = {}
            for i, (name, _, _) in enumerate(sig):
                last[name] = i                            # Go map: the last one wins
            order = sorted(last.values(), key=lambda i: _name_bytes(sig[i][0]))
        else:
            order = range(n)
        if not order:
            return lambda cols: "{}"
        env = {"str": str, "bytes": bytes,
               "PLAIN": _QUOTE_JSON_PLAIN_TF if self._tiflow else _QUOTE_PLAIN,
               "NEEDS": _TF_NEEDS if self._tiflow else _TC_NEEDS}
        pieces, lines = [], []
        sep = "{"
        for k, i in enumerate(order):
            name, tcode, flags = sig[i]
            if not isinstance(tcode, int) or not isinstance(flags, int):
                raise TypeError(f"column {name!r}: type and flags must be ints")
            prefix = (sep + self._jstr(name) + ':{"t":' + str(tcode)
                      + (',"h":true' if flags & C.FLAG_HANDLE_KEY else "")
                      + ',"f":' + str(flags) + ',"v":')
            sep = "},"
            render = self._fl.renderer(tcode, flags)
            env[f"R{k}"] = render
            lines.append(f"    v{k} = cols[{i}].value")
            if render is _int:
                expr = f"'null' if v{k} is None else str(v{k}) if v{k}.__class__ is int else R{k}(v{k})"
            elif render is self._fl.text or render is self._fl.decimal:
                expr = (f"'null' if v{k} is None else '\"' + v{k} + '\"' "
                        f"if v{k}.__class__ is str and NEEDS(v{k}) is None else R{k}(v{k})")
            elif render is self._fl.quoted:
                expr = (f"'null' if v{k} is None else '\"' + v{k}.decode() + '\"' "
                        f"if v{k}.__class__ is bytes and PLAIN(v{k}) else R{k}(v{k})")
            else:
                expr = f"'null' if v{k} is None else R{k}(v{k})"
            pieces.append(repr(prefix))
            pieces.append(f"({expr})")
        pieces.append(repr("}}"))
        src = ("def render(cols):\n" + "\n".join(lines)
               + "\n    return ''.join((" + ", ".join(pieces) + "))\n")
        exec(src, env)
        return env["render"]

    # ------------------------------------------------------------------ messages
    def _payload(self, value: bytes) -> bytes:
        return compress(value, self.compression) if self.compression != "none" else value

    def encode(self, events) -> list[tuple[bytes, bytes]]:
        """Kafka messages ``(key, value)`` for the events, in order."""
        with _gc_paused():
            return self._encode(events)

    def _encode(self, events) -> list[tuple[bytes, bytes]]:
        out: list[tuple[bytes, bytes]] = []
        kparts: list | None = None       # the open message: key parts, value parts,
        vparts: list = []                # row count and Go's Message.Length()
        rows = cur_len = 0
        limit = self.max_message_bytes
        max_rows = self.max_batch_size
        key_of, value_of, payload = self.encode_event_key, self.encode_event_value, self._payload
        u64, join = _U64, b"".join
        batch_control = self.batch_control_events

        for ev in events:
            cls = ev.__class__
            if cls is RowChange or isinstance(ev, RowChange):
                k = key_of(ev)
                v = payload(value_of(ev))
                if len(k) + len(v) + MAX_RECORD_OVERHEAD + 24 > limit:
                    k, v, alone = self._large(ev, k, v)
                    if alone:                             # tiflow claim-check: its own message
                        if kparts is not None:
                            out.append((join(kparts), join(vparts)))
                            kparts = None
                        out.append(_frame1(k, v))
                        continue
            elif isinstance(ev, (DDL, Resolved)):
                k = key_of(ev)
                v = b"" if isinstance(ev, Resolved) else payload(value_of(ev))
                if not batch_control:
                    if kparts is not None:
                        out.append((join(kparts), join(vparts)))
                        kparts = None
                    out.append(_frame1(k, v))
                    continue
            else:
                raise TypeError(f"not an event: {type(ev).__name__}")

            add = len(k) + len(v) + 16
            if kparts is None or rows >= max_rows or cur_len + add > limit:
                if kparts is not None:
                    out.append((join(kparts), join(vparts)))
                kparts, vparts = [_VERSION_HEAD], []
                rows, cur_len = 0, len(_VERSION_HEAD) + MAX_RECORD_OVERHEAD
            kparts.append(u64(len(k)))
            kparts.append(k)
            vparts.append(u64(len(v)))
            vparts.append(v)
            rows += 1
            cur_len += add

        if kparts is not None:
            out.append((join(kparts), join(vparts)))
        return out

    def _large(self, ev: RowChange, k: bytes, v: bytes):
        """Large-message handling; returns (key, value, send-alone)."""
        limit = self.max_message_bytes
        mode = self.large_message_handle
        if mode == "none":
            raise ValueError(f"row event of {len(k) + len(v) + MAX_RECORD_OVERHEAD + 24} bytes "
                             f"exceeds max_message_bytes={limit} (ErrMessageTooLarge)")
        if mode == "claim-check":
            name = str(uuid.UUID(int=self._rng.getrandbits(128), version=4)) + ".json"
            self.claim_check_files[name] = claim_check_file(
                _VERSION_HEAD + _U64(len(k)) + k, _U64(len(v)) + v)
            small = _replace_row(ev, claim_check_location=f"{self.claim_check_storage_uri}/{name}",
                                 handle_key_only=False)
        else:
            small = _replace_row(ev, handle_key_only=True, claim_check_location=None)
        k = self.encode_event_key(small)
        v = self._payload(self.encode_event_value(small))
        if len(k) + len(v) + MAX_RECORD_OVERHEAD + 24 > limit:
            raise ValueError("row event exceeds max_message_bytes even with only the handle-key "
                             "columns (ErrMessageTooLarge)")
        return k, v, mode == "claim-check" and self._tiflow


@contextmanager
def _gc_paused():
    """Pause the cyclic GC: building millions of small objects otherwise triggers full
    collections over every live event (several times slower, and no cycles are created)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _name_bytes(name: str) -> bytes:
    try:
        return name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogatepass")


def _frame1(k: bytes, v: bytes) -> tuple[bytes, bytes]:
    return _VERSION_HEAD + _U64(len(k)) + k, _U64(len(v)) + v


def _handle_only(cols):
    if cols is None:
        return None
    kept = [c for c in cols if c.flags & C.FLAG_HANDLE_KEY]
    if not kept:
        raise ValueError("handle-key-only / claim-check needs handle-key columns (flags & 2)")
    return kept


def _replace_row(ev: RowChange, **changes) -> RowChange:
    fields = dict(schema=ev.schema, table=ev.table, commit_ts=ev.commit_ts, after=ev.after,
                  before=ev.before, row_id=ev.row_id, partition_id=ev.partition_id,
                  handle_key_only=ev.handle_key_only,
                  claim_check_location=ev.claim_check_location)
    fields.update(changes)
    return RowChange(**fields)


# ============================================================================ realistic data
ORDERS_DDL = (
    "CREATE TABLE `{schema}`.`{table}` (\n"
    "  `id` BIGINT NOT NULL AUTO_INCREMENT,\n"
    "  `customer_id` INT UNSIGNED DEFAULT NULL,\n"
    "  `amount` DECIMAL(12,2) NOT NULL,\n"
    "  `price` DOUBLE DEFAULT NULL,\n"
    "  `qty` SMALLINT NOT NULL,\n"
    "  `status` VARCHAR(16) DEFAULT NULL,\n"
    "  `note` TEXT DEFAULT NULL,\n"
    "  `created_at` DATETIME(6) NOT NULL,\n"
    "  `updated_at` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n"
    "  `payload` VARBINARY(64) DEFAULT NULL,\n"
    "  `is_gift` TINYINT(1) NOT NULL DEFAULT 0,\n"
    "  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,\n"
    "  KEY `idx_customer` (`customer_id`)\n"
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
)

# (name, MySQL type code, TiCDC flags) of `shop.orders`, in table order.
ORDERS_COLUMNS = (
    ("id", C.T_LONGLONG, C.FLAG_BINARY | C.FLAG_HANDLE_KEY | C.FLAG_PRIMARY_KEY),          # 11
    ("customer_id", C.T_LONG,
     C.FLAG_UNSIGNED | C.FLAG_BINARY | C.FLAG_NULLABLE | C.FLAG_MULTIPLE_KEY),                # 225
    ("amount", C.T_NEWDECIMAL, C.FLAG_BINARY),                                               # 1
    ("price", C.T_DOUBLE, C.FLAG_BINARY | C.FLAG_NULLABLE),                                  # 65
    ("qty", C.T_SHORT, C.FLAG_BINARY),                                                       # 1
    ("status", C.T_VARCHAR, C.FLAG_NULLABLE),                                                # 64
    ("note", C.T_BLOB, C.FLAG_NULLABLE),                                                     # 64
    ("created_at", C.T_DATETIME, C.FLAG_BINARY),                                             # 1
    ("updated_at", C.T_TIMESTAMP, C.FLAG_BINARY),                                            # 1
    ("payload", C.T_VARCHAR, C.FLAG_BINARY | C.FLAG_NULLABLE),                               # 65
    ("is_gift", C.T_TINY, C.FLAG_BINARY),                                                    # 1
)

_STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
_NEXT_STATUS = {"pending": ("paid", "cancelled"), "paid": ("shipped", "refunded"),
                "shipped": ("delivered",), "delivered": ("refunded",),
                "cancelled": ("cancelled",), "refunded": ("refunded",)}
_NOTES = (
    "Leave at the front door", "Call before delivery", "Gift wrap, no invoice",
    "請放在門口", "Geschenkverpackung bitte 🎁", 'Customer said: "ASAP" <urgent> & fragile',
    "Line one\nLine two\ttabbed", "Entrega después de las 18:00", "",
)
_PAYLOADS = (b"", b"\x89PNG\r\n\x1a\n", b"{\"v\":1}", b"\x00\x01\x02\x03", "caf\u00e9".encode(),
             b"\xff\xfe\xfd", b"plain-ascii-bytes")


def realistic_changefeed(n_rows: int, seed: int = 0, flavor: str = "tiflow",
                         tables=("shop.orders",), *, resolved_every: int = 1000,
                         start_ms: int = 1_714_521_600_000, insert_ratio: float = 0.7,
                         update_ratio: float = 0.2, include_ddl: bool = True) -> list:
    """A deterministic, realistic open-protocol event stream.

    A CREATE TABLE DDL per table, then ``n_rows`` row changes (about 70% INSERT, 20% UPDATE,
    10% DELETE of live rows) on tables shaped like ``shop.orders`` (see ``ORDERS_COLUMNS``),
    grouped in transactions of 1-4 rows that share a commit TSO (``physical_ms << 18 |
    logical``, increasing), with a ``Resolved`` event about every ``resolved_every`` rows and
    one at the end.  ``flavor="tiflow"`` sets ``row_id`` to the id (tiflow's ``rid``); ticdc
    leaves it ``None``.  Col objects are shared between an UPDATE's images and later events;
    treat them as immutable.
    """
    if flavor not in FLAVORS:
        raise ValueError(f"flavor must be one of {FLAVORS}, not {flavor!r}")
    with _gc_paused():
        return _changefeed(n_rows, seed, flavor, tables, resolved_every, start_ms, insert_ratio,
                           update_ratio, include_ddl)


def _changefeed(n_rows, seed, flavor, tables, resolved_every, start_ms, insert_ratio,
                update_ratio, include_ddl) -> list:
    if isinstance(tables, str):
        tables = (tables,)
    names = []
    for t in tables:
        schema, dot, table = t.partition(".")
        if not dot:
            raise ValueError(f"table must be 'schema.table', not {t!r}")
        names.append((schema, table))

    rng = random.Random(seed)
    rand = rng.random

    def randint(lo: int, hi: int) -> int:         # random.randint is ~10x slower
        return lo + int(rand() * (hi - lo + 1))

    def choice(seq):
        return seq[int(rand() * len(seq))]

    tiflow = flavor == "tiflow"
    (n_id, t_id, f_id), (n_cust, t_cust, f_cust), (n_amt, t_amt, f_amt), \
        (n_price, t_price, f_price), (n_qty, t_qty, f_qty), (n_st, t_st, f_st), \
        (n_note, t_note, f_note), (n_cr, t_cr, f_cr), (n_up, t_up, f_up), \
        (n_pl, t_pl, f_pl), (n_gift, t_gift, f_gift) = ORDERS_COLUMNS

    events: list = []
    ms = start_ms
    if include_ddl:
        for schema, table in names:
            ms += randint(1, 50)
            events.append(DDL(schema, table, make_tso(ms, randint(0, 3)),
                              ORDERS_DDL.format(schema=schema, table=table), 3))

    state = [{"rows": {}, "live": [], "pos": {}, "next_id": 1} for _ in names]
    emitted = 0
    since_resolved = 0
    last_ts = events[-1].commit_ts if events else make_tso(ms)

    wall = WallClock()

    def payload():
        r = rand()
        if r < 0.3:
            return None
        if r < 0.6:
            return rng.getrandbits(8 * 24).to_bytes(24, "little")[:randint(1, 24)]
        return choice(_PAYLOADS)

    # Shared immutable Col objects for the values that repeat.
    qty_cols = [Col(n_qty, t_qty, q, f_qty) for q in range(21)]
    gift_cols = [Col(n_gift, t_gift, g, f_gift) for g in (0, 1)]
    note_cols = {note: Col(n_note, t_note, note, f_note) for note in _NOTES + (None,)}
    status_cols = {st_: Col(n_st, t_st, st_, f_st) for st_ in _STATUSES}
    null_price, null_payload = Col(n_price, t_price, None, f_price), Col(n_pl, t_pl, None, f_pl)

    while emitted < n_rows:
        ms += randint(1, 40)
        ts = make_tso(ms, randint(0, 7))
        last_ts = ts
        now = wall(ms)
        now_col = Col(n_up, t_up, now, f_up)
        touched = set()          # a transaction changes a row at most once (TiCDC merges)
        for _ in range(min(randint(1, 4), n_rows - emitted)):
            ti = randint(0, len(names) - 1) if len(names) > 1 else 0
            schema, table = names[ti]
            st = state[ti]
            live = st["live"]
            r = rand()
            if r >= insert_ratio and live:
                rid = live[randint(0, len(live) - 1)]
                if (ti, rid) in touched:
                    r = 0.0                                 # insert instead
                touched.add((ti, rid))
            if r < insert_ratio or not live:
                rid = st["next_id"]
                st["next_id"] = rid + 1
                cents = randint(100, 9_999_99) if rand() < 0.97 else randint(0, 99_999_999_99)
                price = round(cents / 100 / randint(1, 5), 2) if rand() < 0.9 else None
                cust = randint(1, 50_000) if rand() < 0.98 else choice((None, 4294967295))
                pl = payload()
                after = [
                    Col(n_id, t_id, rid, f_id),
                    Col(n_cust, t_cust, cust, f_cust),
                    Col(n_amt, t_amt, f"{cents // 100}.{cents % 100:02d}", f_amt),
                    null_price if price is None else Col(n_price, t_price, price, f_price),
                    qty_cols[randint(1, 20)],
                    status_cols["pending"],
                    note_cols[choice(_NOTES) if rand() < 0.4 else None],
                    Col(n_cr, t_cr, f"{now}.{ms % 1000:03d}{randint(0, 999):03d}", f_cr),
                    now_col,
                    null_payload if pl is None else Col(n_pl, t_pl, pl, f_pl),
                    gift_cols[1 if rand() < 0.1 else 0],
                ]
                st["rows"][rid] = after
                st["pos"][rid] = len(live)
                live.append(rid)
                touched.add((ti, rid))
                events.append(RowChange(schema, table, ts, after, None, rid if tiflow else None))
            elif r < insert_ratio + update_ratio:
                before = st["rows"][rid]
                after = list(before)
                status = before[5].value or "pending"
                new_status = choice(_NEXT_STATUS[status])
                after[5] = status_cols[new_status]
                after[8] = now_col
                if rand() < 0.3 or new_status == status:    # every UPDATE changes a value
                    after[4] = qty_cols[before[4].value % 20 + 1]
                if rand() < 0.2:
                    p = before[3].value
                    after[3] = Col(n_price, t_price,
                                   None if p is None else round(p * 0.9, 2), f_price)
                if rand() < 0.1:
                    after[6] = note_cols[choice(_NOTES)]
                if rand() < 0.1:
                    pl = payload()
                    after[9] = null_payload if pl is None else Col(n_pl, t_pl, pl, f_pl)
                st["rows"][rid] = after
                events.append(RowChange(schema, table, ts, after, before, rid if tiflow else None))
            else:
                before = st["rows"].pop(rid)
                i = st["pos"].pop(rid)
                moved = live.pop()
                if moved != rid:
                    live[i] = moved
                    st["pos"][moved] = i
                events.append(RowChange(schema, table, ts, None, before, rid if tiflow else None))
            emitted += 1
            since_resolved += 1
        if since_resolved >= resolved_every:
            events.append(Resolved(ts))
            since_resolved = 0
    if not events or not isinstance(events[-1], Resolved):
        events.append(Resolved(last_ts))
    return events


if __name__ == "__main__":   # tiny demo: python -m ticdc_fast.testing.open_encoder
    for n, (key, value) in enumerate(OpenEncoder("tiflow", max_batch_size=2).encode(
            realistic_changefeed(4, seed=1))):
        kpos, vpos = 8, 0
        while kpos < len(key):
            klen = int.from_bytes(key[kpos:kpos + 8], "big")
            vlen = int.from_bytes(value[vpos:vpos + 8], "big")
            print(f"message {n}: {key[kpos + 8:kpos + 8 + klen].decode()}\n    "
                  f"{value[vpos + 8:vpos + 8 + vlen].decode()[:300]}")
            kpos, vpos = kpos + 8 + klen, vpos + 8 + vlen
