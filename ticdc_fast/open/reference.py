"""Pure-Python reference twin of the open-protocol decoder (orjson).

It defines behaviour; the Cython core in ``src_cython/open`` defines speed.  Both return the same
columns for the same input (``tests/`` runs every behavioural test against both).
"""
from __future__ import annotations

import json
import re

import orjson
import pyarrow as pa

from .. import _constants as C
from .. import values as V
from ..arrow_types import old_image_column
from ..columns import layout
from .._json_fallback import stdlib_loads
from ..errors import DecodeError
from ..compression import DEFAULT_MAX_MESSAGE_BYTES
from .framing import decompress_event_values
from ..convert import NEG_ZERO, Decoders, _is_int
from .._json_where import JSONSyntax, column_name, locate, members, object_syntax, skip_ws

_U64 = 8
_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)


def _raise_constant(name):
    raise ValueError(f"invalid JSON literal {name}")


_NEG_ZERO_TOKEN = re.compile(rb"(?<![0-9.eE+-])-0(?![0-9.eE])")


def _parse_int(text: str):
    return NEG_ZERO if text == "-0" else int(text)


def _skip_members(name):
    return None


def _image_members(name):
    return _skip_members        # a column object: read member by member, its values skipped


def _row_members(name):
    return _image_members if name in ("u", "p", "d") else None


def parse_json(doc: bytes, msg: int, base: int, part: str, not_object: str, walked=_skip_members):
    """Parse one event JSON document (an object); offsets in errors are relative to the Kafka
    message.  Errors are the core's: ``not_object`` at the first byte when the document is not
    an object, and a grammar error worded and placed as the core's scanner does (``walked``:
    which members the core reads member by member, see ``_json_where.object_syntax``)."""
    start = skip_ws(doc, 0)
    if start >= len(doc) or doc[start] != 0x7B:
        raise DecodeError(not_object, msg, base + start, part=part)
    return _parse_json(doc, msg, base, part, walked)


def _parse_json(doc: bytes, msg: int, base: int, part: str, walked):
    try:
        parsed = orjson.loads(doc)
        if _NEG_ZERO_TOKEN.search(doc):  # rare: keep the sign of integer-syntax negative zeros
            try:
                return stdlib_loads(doc, parse_int=_parse_int)
            except ValueError as exc2:  # orjson took it: only the standard parser's depth fails
                raise DecodeError(f"malformed JSON: {exc2}", msg, base, part=part) from None
        return parsed
    except orjson.JSONDecodeError as exc:
        # what orjson refuses, the core's scanner may refuse too (then its words and place), or
        # take: invalid UTF-8, numbers beyond the double range (the standard parser reads those)
        try:
            object_syntax(doc, walked)
        except JSONSyntax as syntax:
            raise DecodeError(syntax.reason, msg, base + syntax.offset, part=part) from None
        try:
            text = doc.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and "infinity" in exc.msg:
            # Valid JSON (e.g. 1e999) that orjson refuses; it only matters where a value is used.
            try:
                return stdlib_loads(text, parse_constant=_raise_constant, parse_int=_parse_int)
            except (json.JSONDecodeError, ValueError) as exc2:
                pos = len(text[:getattr(exc2, "pos", 0)].encode("utf-8"))
                raise DecodeError(f"malformed JSON: {getattr(exc2, 'msg', exc2)}", msg, base + pos,
                                  part=part) from None
        if text is not None:
            # orjson reports a character position; report bytes.
            pos = len(text[:exc.pos].encode("utf-8"))
            raise DecodeError(f"malformed JSON: {exc.msg}", msg, base + pos, part=part) from None
    # TiCDC's jsoniter writer copies bytes >= 0x80 raw, so JSON text may hold invalid UTF-8:
    # parse it with the bytes kept as surrogate escapes.  The standard parser would also take a
    # lone surrogate escape (and read "\udcff" as the byte 0xff): refused first, as orjson and
    # the core do.
    text = doc.decode("utf-8", "surrogateescape")
    lone = _lone_surrogate_escape(text)
    if lone is not None:
        pos = len(text[:lone].encode("utf-8", "surrogateescape"))
        raise DecodeError("malformed JSON: lone surrogate escape", msg, base + pos, part=part)
    try:
        return stdlib_loads(text, parse_constant=_raise_constant, parse_int=_parse_int)
    except (json.JSONDecodeError, ValueError) as exc:
        pos = getattr(exc, "pos", 0)
        pos = len(doc.decode("utf-8", "surrogateescape")[:pos].encode("utf-8", "surrogateescape"))
        raise DecodeError(f"malformed JSON: {getattr(exc, 'msg', exc)}", msg, base + pos,
                          part=part) from None


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)


def _lone_surrogate_escape(text: str) -> int | None:
    """Where the first \\u escape of an unpaired surrogate starts, or None.  Outside strings a
    backslash is a syntax error anyway, so escapes are read over the whole document."""
    high_end = None     # end of a high-surrogate escape that needs a low one right after it
    for m in _ESCAPE.finditer(text):
        cp = int(m.group(1), 16) if m.group(1) else -1
        if high_end is not None:
            if m.start() == high_end and 0xDC00 <= cp <= 0xDFFF:
                high_end = None
                continue
            return high_end - 6
        if 0xD800 <= cp <= 0xDBFF:
            high_end = m.end()
        elif 0xDC00 <= cp <= 0xDFFF:
            return m.start()
    return None if high_end is None else high_end - 6


def _utf8(s: str) -> str:
    """A name (schema, table, column, claim-check location, DDL query): UTF-8 or an error."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise V.ValueProblem("invalid UTF-8 in a text value") from None
    return s


def _preview(v, limit: int) -> str:
    """A short description of a JSON value for an error message: never recursive (a value may
    nest 1000 deep) and never longer than about ``limit`` characters."""
    if isinstance(v, dict):
        return "{...}" if v else "{}"
    if isinstance(v, list):
        return "[...]" if v else "[]"
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "..."


# ----------------------------------------------------------------------------- walking
def _u64(buf: bytes, pos: int, msg: int, part: str, what: str) -> int:
    if len(buf) - pos < _U64:
        raise DecodeError(f"truncated {what}: {len(buf) - pos} of 8 bytes", msg, pos, part=part)
    return int.from_bytes(buf[pos:pos + _U64], "big")


def iter_events(keys: list, values: list):
    """Yield (message index, key dict, key offset, value bytes, value offset) for every event."""
    if len(keys) != len(values):
        raise DecodeError(f"{len(keys)} keys but {len(values)} values")
    for i in range(len(keys)):
        key, value = keys[i], values[i]
        if key is None or value is None:
            raise DecodeError(f"null {'key' if key is None else 'value'}", i,
                              part="key" if key is None else "value")
        key, value = bytes(key), bytes(value)
        version = _u64(key, 0, i, "key", "batch version")
        if version != C.OPEN_BATCH_VERSION:
            raise DecodeError(f"unsupported batch version {version}", i, 0, part="key")
        kpos, vpos = _U64, 0
        while kpos < len(key):
            klen = _u64(key, kpos, i, "key", "event key length")
            kstart = kpos + _U64
            if klen > len(key) - kstart:
                raise DecodeError(f"event key length {klen} exceeds the {len(key) - kstart} bytes left",
                                  i, kpos, part="key")
            if vpos >= len(value):
                raise DecodeError("the value holds fewer events than the key", i, vpos, part="value")
            vlen = _u64(value, vpos, i, "value", "event value length")
            vstart = vpos + _U64
            if vlen > len(value) - vstart:
                raise DecodeError(f"event value length {vlen} exceeds the {len(value) - vstart} bytes left",
                                  i, vpos, part="value")
            kraw = key[kstart:kstart + klen]
            kdoc = parse_json(kraw, i, kstart, "key", "event key is not a JSON object")
            yield i, _check_key(kdoc, i, kstart, kraw), kstart, value[vstart:vstart + vlen], vstart
            kpos, vpos = kstart + klen, vstart + vlen
        if vpos != len(value):
            raise DecodeError("the value holds more events than the key", i, vpos, part="value")


_KEY_TYPES = {"ts": "uint", "scm": "str", "tbl": "str", "rid": "int", "ptn": "int", "t": "int",
              "ohk": "bool", "ccl": "str"}


_INT_TOKEN = re.compile(rb"-?(?:0|[1-9][0-9]*)(?![0-9.eE])")


def _int_token(raw: bytes, at) -> bool:
    return at is not None and _INT_TOKEN.match(raw, at) is not None


def _check_key(doc, msg: int, base: int, raw: bytes) -> dict:
    """The event key's fields, judged in the core's order with its wording; an error names the
    byte offset of the field's value (the last copy of a repeated field)."""
    def bad(reason, name):
        at = locate(raw, (name,))
        raise DecodeError(reason, msg, base + (0 if at is None else at), part="key")

    out = {}
    for name, kind in _KEY_TYPES.items():
        if name not in doc:
            continue
        v = doc[name]
        if v is None:
            continue
        if kind == "str":
            if not isinstance(v, str):
                bad("event key field has an invalid value", name)
        elif kind == "bool":
            if type(v) is not bool:
                bad(f"event key field {name!r} has an invalid value", name)
        elif not _is_int(v):
            if type(v) is float and name != "t" and _int_token(raw, locate(raw, (name,))):
                # an integer beyond 64 bits, which orjson reads as a float
                bad("event key field 'ts' out of range" if name == "ts"
                    else "event key field out of int64 range", name)
            bad(f"event key field {name!r} has an invalid value" if name in ("ts", "t")
                else "event key field has an invalid value", name)
        elif name == "ts":
            if not 0 <= v <= _INT64_MAX:
                bad("event key field 'ts' out of range", name)
        elif not _INT64_MIN <= v <= _INT64_MAX:
            bad("event key field 't' has an invalid value" if name == "t"
                else "event key field out of int64 range", name)
        out[name] = v
    last = base + len(raw) - 1      # the core names the document's last byte
    if "ts" not in out:
        raise DecodeError("event key has no ts", msg, last, part="key")
    if out.get("t") not in (C.MSG_ROW, C.MSG_DDL, C.MSG_RESOLVED):
        raise DecodeError("event key has an unknown type t", msg, last, part="key")
    for name in ("scm", "tbl", "ccl"):
        if name in out:
            try:
                out[name] = _utf8(out[name])
            except V.ValueProblem:
                bad("invalid UTF-8 in a text value", name)
            if out[name] == "":
                del out[name]
    return out


def _image(doc: dict, which: str, msg: int, base: int, raw: bytes, members=None):
    """One row image as (name, type code, flags, value) per column.  Faults are the core's
    (src_cython/open/decode.pxi ``_parse_image``): each names the byte offset of what is wrong —
    the column value, its t, f or h member, or its name."""
    img = doc.get(which)
    if img is None:
        return None

    def bad(reason, path, name=None, at_name=False):
        at = locate(raw, (which,) + path, name=at_name)
        raise DecodeError(reason, msg, base + (0 if at is None else at),
                          None if name is None else column_name(name), part="value")

    if type(img) is not dict:
        bad("row image is not a JSON object", ())
    cols = []
    for name, col in (img.items() if members is None else members):
        try:
            name = _utf8(name)
        except V.ValueProblem:
            bad("invalid UTF-8 in a column name", (name,), name, at_name=True)
        if type(col) is not dict:
            bad("column value is not a JSON object", (name,), name)
        t = col.get("t")
        if not _is_int(t) or t not in C.TYPE_KIND:
            # the core names the t member, else the v member, else the column object
            bad("unknown column type code", (name, "t") if "t" in col else (name, "v") if "v" in col
                else (name,), name)
        f = col.get("f", 0)
        if f is None:
            f = 0
        if not _is_int(f) or not 0 <= f <= 0xFFFFFFFF:
            bad("invalid column flags", (name, "f"), name)
        h = col.get("h")
        if h is not None and type(h) is not bool:
            bad("invalid handle marker", (name, "h"), name)
        cols.append((name, t, f, col.get("v")))
    return cols


def value_error(exc, msg: int, base: int, raw: bytes, which: str, name: str) -> DecodeError:
    """A value of column ``name`` in image ``which`` cannot be converted: the error names the
    byte offset of that value (its "v" member), as the core does."""
    if isinstance(name, _BareName):
        at = _bare_value_at(raw, name.member)
    else:
        at = locate(raw, (which, name, "v"))
    reason = str(exc)
    if reason == "expected an integer" and _int_token(raw, at):
        reason = "integer out of range"     # beyond 64 bits: orjson reads it as a float
    return DecodeError(reason, msg, base + (0 if at is None else at), column_name(name), part="value")


class _BareName(str):
    """The name of a column recovered from a bare group of "p"; ``member``: the index of the
    bare member that holds its value, among the bare members of the last "p"."""
    __slots__ = ("member",)

    def __new__(cls, name: str, member: int):
        self = super().__new__(cls, name)
        self.member = member
        return self


def _bare_value_at(raw: bytes, member: int) -> int | None:
    """Where the value of the ``member``-th bare member of the last "p" of a row value is."""
    p = locate(raw, ("p",))
    if p is None:
        return None
    bare = [value_at for name, _, value_at in members(raw, p)
            if name in _BARE_FIELDS and raw[value_at] != 0x7B]
    return bare[member] if member < len(bare) else None


class _Members(dict):
    """A JSON object that also keeps every member in document order (repeats included)."""
    __slots__ = ("pairs",)

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs


_BARE_FIELDS = ("t", "h", "f", "v")
BARE_SHAPE = "bare column members in p do not form t,[h],f,v groups"
BARE_TYPE = "bare column group in p has an invalid t"
BARE_FLAGS = "bare column group in p has an invalid f"
BARE_NULL = "bare column group in p has a null v"
BARE_NO_MATCH = "bare column groups in p match no NULL column of u"


def _p_members(value: bytes, msg: int, vstart: int):
    """The last "p" of a row value as (named members, bare members): named ones repeat
    last-wins at their first position; a bare member is (field, value, number of distinct
    named members before it).  Only taken when "p" has a member named t/h/f/v (rare)."""
    doc = stdlib_loads(value.decode("utf-8", "surrogateescape"), parse_constant=_raise_constant,
                       parse_int=_parse_int, object_pairs_hook=_Members)
    named, bare = {}, []
    for name, col in doc["p"].pairs:
        if name in _BARE_FIELDS and type(col) is not _Members:
            bare.append((name, col, len(named)))
        else:
            named[name] = dict(col) if type(col) is _Members else col
    return list(named.items()), bare


def _bare_groups(bare, msg: int, vstart: int) -> list:
    """ticdc's writeColumnFieldValueIfUpdated writes a column that went from non-NULL to NULL
    as bare "t",["h":true],"f","v" members of "p" (protocols.md E.15, addendum 6).  Returns
    (type code, value, position among the named members) per group."""
    groups, i, n = [], 0, len(bare)

    def shape():
        return DecodeError(BARE_SHAPE, msg, vstart, part="value")

    while i < n:
        field, t, at = bare[i]
        if field != "t":
            raise shape()
        if not _is_int(t) or t not in C.TYPE_KIND:
            raise DecodeError(BARE_TYPE, msg, vstart, part="value")
        i += 1
        if i < n and bare[i][0] == "h":
            if bare[i][1] is not True or bare[i][2] != at:
                raise shape()
            i += 1
        if i >= n or bare[i][0] != "f" or bare[i][2] != at:
            raise shape()
        f = bare[i][1]
        if not _is_int(f) or not 0 <= f <= 0xFFFFFFFF:
            raise DecodeError(BARE_FLAGS, msg, vstart, part="value")
        i += 1
        if i >= n or bare[i][0] != "v" or bare[i][2] != at:
            raise shape()
        if bare[i][1] is None:
            raise DecodeError(BARE_NULL, msg, vstart, part="value")
        groups.append((t, bare[i][1], at, i))      # i: which bare member holds the value
        i += 1
    return groups


def _recover_bare(after, old, groups, msg: int, vstart: int):
    """Give each bare group the u column it belongs to.  TiCDC writes p in table column order,
    the same order as u, so a group lies between the u positions of the named p columns around
    it, and its column is NULL in u, not named in p, and of the group's type.  The groups map
    in order onto such columns; a group whose column is the same in the leftmost and the
    rightmost mapping has only one possible column and is recovered.  Returns (old image,
    whether some group could not be placed)."""
    u_pos = {name: k for k, (name, _, _, _) in enumerate(after)}
    named = {name for name, _, _, _ in old}
    nu = len(after)
    pre, best = [-1], -1
    for name, _, _, _ in old:
        best = max(best, u_pos.get(name, -1))
        pre.append(best)
    suf, best = [nu] * (len(old) + 1), nu
    for j in range(len(old) - 1, -1, -1):
        best = min(best, u_pos.get(old[j][0], nu))
        suf[j] = best

    def fits(g, c):
        name, t, _, v = after[c]
        return v is None and t == g[0] and name not in named and pre[g[2]] < c < suf[g[2]]

    left, c = [], -1
    for g in groups:
        c = max(c + 1, pre[g[2]] + 1)
        while c < nu and not fits(g, c):
            c += 1
        if c >= nu:
            raise DecodeError(BARE_NO_MATCH, msg, vstart, part="value")
        left.append(c)
    right, c = [0] * len(groups), nu
    for i in range(len(groups) - 1, -1, -1):
        g = groups[i]
        c = min(c - 1, suf[g[2]] - 1)
        while c > left[i] and not fits(g, c):  # the leftmost mapping bounds it from below
            c -= 1
        right[i] = c
    out, gi, incomplete = [], 0, False
    for j in range(len(old) + 1):
        while gi < len(groups) and groups[gi][2] == j:
            if left[gi] == right[gi]:
                name, t, f, _ = after[left[gi]]
                out.append((_BareName(name, groups[gi][3]), t, f, groups[gi][1]))
            else:
                incomplete = True
            gi += 1
        if j < len(old):
            out.append(old[j])
    return out, incomplete


def _row_value(value: bytes, msg: int, vstart: int):
    """(op code, after image, before image, whether the before image lacks columns)."""
    doc = parse_json(value, msg, vstart, "value", "row value is not a JSON object", _row_members)
    after = _image(doc, "u", msg, vstart, value)
    bare = None
    p = doc.get("p")
    if type(p) is dict and any(name in p for name in _BARE_FIELDS):
        named, bare = _p_members(value, msg, vstart)
        old = _image(doc, "p", msg, vstart, value, named)
    else:
        old = _image(doc, "p", msg, vstart, value)
    deleted = _image(doc, "d", msg, vstart, value)
    if deleted is not None:
        if after is not None or old is not None:
            raise DecodeError("row value has both d and u/p", msg, vstart, part="value")
        return C.OP_DELETE, None, deleted, False
    if after is None:
        raise DecodeError("row value has no u or d", msg, vstart, part="value")
    if old is None:
        return C.OP_INSERT, after, None, False
    # An old column takes the flags of its new copy: ticdc v8.5.x wrote TiDB's column flags
    # (NotNull=1, Binary=128, ...) into "p" under only-output-updated-columns, while "u" always
    # carries TiCDC's (protocols.md E.13).
    new_flags = {name: f for name, _, f, _ in after}
    old = [(name, t, new_flags.get(name, f), v) for name, t, f, v in old]
    incomplete = False
    if bare:
        old, incomplete = _recover_bare(after, old, _bare_groups(bare, msg, vstart), msg, vstart)
    return C.OP_UPDATE, after, old, incomplete


def _ddl_value(value: bytes, msg: int, vstart: int):
    doc = parse_json(value, msg, vstart, "value", "DDL value is not a JSON object")

    def bad(reason, name):
        at = locate(value, (name,))
        raise DecodeError(reason, msg, vstart + (0 if at is None else at), part="value")

    q, t = doc.get("q"), doc.get("t")
    if q is not None and not isinstance(q, str):
        bad("DDL query is not a string", "q")
    if t is not None and not (_is_int(t) and -(1 << 31) <= t < (1 << 31)):
        bad("DDL type is not an int32", "t")
    if q is not None:
        try:
            q = _utf8(q)
        except V.ValueProblem:
            bad("invalid UTF-8 in a text value", "q")
    return q, t


def _prepare(keys, values, compression, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES):
    keys, values = list(keys), list(values)
    if compression != "none" and len(keys) == len(values):
        values = decompress_event_values(values, compression, max_message_bytes)
    return keys, values


def iter_row_columns(keys, values, table: str, compression: str = "none"):
    """(name, type code, flags, value) of every column of every row event of ``table``."""
    scm, _, tbl = table.partition(".")
    keys, values = _prepare(keys, values, compression)
    for i, kd, _, value, vstart in iter_events(keys, values):
        if kd["t"] != C.MSG_ROW or kd.get("scm") != scm or kd.get("tbl") != tbl:
            continue
        _, a, b, _ = _row_value(value, i, vstart)
        for img in (a, b):
            for col in img or ():
                yield col


# ----------------------------------------------------------------------------- decoding
def _typed_image(image, cfg, decoders, i, vstart, value: bytes, which: str) -> list:
    """One image (None: none; member ``which`` of the event ``value``) as the target columns'
    values, in target order: each column's value through the decoder of its target and type."""
    present = {}
    names = decoders.names
    for name, tc, fl, v in image or ():
        if name in names:
            present[name] = (tc, fl, v, name)
    out = []
    for j, target in enumerate(cfg.targets):
        got = present.get(target.name)
        if got is None or got[2] is None:
            out.append(None)
            continue
        try:
            out.append(decoders.typed_for(j, got[0], got[1])(got[2]))
        except V.ValueProblem as exc:
            raise value_error(exc, i, vstart, value, which, got[3]) from None
    return out


def _event_value(kd: dict, value: bytes, i: int, vstart: int):
    """Parse one event's value (its key ``kd`` already read): (op code, after image, before
    image, DDL query, DDL type, whether the before image lacks columns)."""
    t = kd["t"]
    if t == C.MSG_RESOLVED:
        if value:
            raise DecodeError("resolved event with a non-empty value", i, vstart, part="value")
        return C.OP_RESOLVED, None, None, None, None, False
    if t == C.MSG_DDL:
        q, qt = _ddl_value(value, i, vstart)
        return C.OP_DDL, None, None, q, qt, False
    code, a, b, incomplete = _row_value(value, i, vstart)
    return code, a, b, None, None, incomplete


class _Rows:
    """The rows of one output: a typed table's (``cfg.targets``) or generic ones."""

    def __init__(self, cfg, log=None):
        self.cfg = cfg
        self.log = log            # typed: the table's unknown-column log (unknown.TwinLog) or None
        self.typed = cfg.targets is not None
        self.op, self.ts, self.msg_of_row = [], [], []
        self.schema_col, self.table_col, self.ddl, self.ddl_type = [], [], [], []
        self.after_col, self.before_col = [], []
        self.row_id, self.ptn, self.hko, self.ccl, self.before_incomplete = [], [], [], [], []
        self.typed_cols = [[] for _ in (cfg.targets or ())]
        self.old_images = []      # typed, old_image=True: per row the converted old image or None
        # the column decoders of this output, per (target, type code, flags) as the wire has it
        self.decoders = Decoders(cfg.targets, cfg.timezone)

    def add(self, i: int, kd: dict, value: bytes, vstart: int, routed: bool = False) -> None:
        """Parse the event's value and add its row.  ``routed``: a router chose this typed
        output by the event's table, which needs no second look."""
        cfg = self.cfg
        t = kd["t"]
        scm, tbl = kd.get("scm"), kd.get("tbl")
        code, a, b, q, qt, incomplete = _event_value(kd, value, i, vstart)
        before = "d" if code == C.OP_DELETE else "p"
        if self.typed:
            if t != C.MSG_RESOLVED and not routed and (scm != cfg.schema_name or tbl != cfg.table_name):
                return
            if t != C.MSG_ROW and not cfg.control_events:
                return
            if t == C.MSG_ROW and self.log is not None:
                self.log.note(a, b, i, self.decoders.names)
                if a is not None and not kd.get("ohk", False) and "ccl" not in kd:
                    self.log.note_missing(a, cfg.targets)
            image = (a, "u") if a is not None else (b, before)
            for j, v in enumerate(_typed_image(image[0], cfg, self.decoders, i, vstart, value, image[1])):
                self.typed_cols[j].append(v)
            if cfg.old_image:
                self.old_images.append(None if b is None else
                                       _typed_image(b, cfg, self.decoders, i, vstart, value, before))
        else:
            self.schema_col.append(scm)
            self.table_col.append(tbl)
            self.ddl_type.append(qt)
            self.row_id.append(kd.get("rid"))
            self.ptn.append(kd.get("ptn"))
            for img, which, out in ((a, "u", self.after_col), (b, before, self.before_col)):
                if img is None:
                    out.append(None)
                    continue
                out.append(self._entries(img, i, vstart, value, which))
        self.op.append(C.OP_NAMES[code])
        self.ts.append(kd["ts"])
        self.ddl.append(q)
        self.hko.append(bool(kd.get("ohk", False)) and "ccl" not in kd)
        self.ccl.append(kd.get("ccl"))
        self.before_incomplete.append(incomplete)
        self.msg_of_row.append(i)

    def _entries(self, img, i: int, vstart: int, value: bytes, which: str) -> list:
        """Generic output: one image's (name, text) map entries, each value through the text
        decoder of its type."""
        entries, text_for = [], self.decoders.text_for
        for name, tc, fl, v in img:
            try:
                entries.append((name, None if v is None else text_for(tc, fl)(v)))
            except V.ValueProblem as exc:
                raise value_error(exc, i, vstart, value, which, name) from None
        return entries

    def columns(self) -> tuple[list[pa.Array], list[int]]:
        """The output columns in ``columns.OPEN_*`` order, then the message index of each row."""
        cfg = self.cfg
        by_name = {C.COL_OP: self.op, C.COL_COMMIT_TS: self.ts, C.COL_DDL: self.ddl,
                   C.COL_HANDLE_KEY_ONLY: self.hko, C.COL_CLAIM_CHECK: self.ccl,
                   C.COL_BEFORE_INCOMPLETE: self.before_incomplete}
        if not self.typed:
            by_name.update({C.COL_SCHEMA: self.schema_col, C.COL_TABLE: self.table_col,
                            C.COL_AFTER: self.after_col, C.COL_BEFORE: self.before_col,
                            C.COL_DDL_TYPE: self.ddl_type, C.COL_ROW_ID: self.row_id,
                            C.COL_PHYSICAL_TABLE_ID: self.ptn})
        out = layout("open", self.typed)
        cols = [pa.array(by_name[c.name], c.type) for c in out.head]
        if self.typed:
            for j, target in enumerate(cfg.targets):
                cols.append(pa.array(self.typed_cols[j], target.arrow_type))
            if cfg.old_image:
                cols.append(old_image_column(cfg.targets, self.old_images))
        cols += [pa.array(by_name[c.name], c.type) for c in out.tail]
        return cols, self.msg_of_row


def decode(keys, values, cfg, log=None) -> tuple[list[pa.Array], list[int]]:
    """Decode a batch.  Returns (output columns without _partition/_offset, message index per row).
    ``log``: typed, the table's ``unknown.TwinLog``, which records the columns its rows carry
    that the schema lacks."""
    keys, values = _prepare(keys, values, cfg.compression, cfg.max_message_bytes)
    out = _Rows(cfg, log)
    for i, kd, _, value, vstart in iter_events(keys, values):
        out.add(i, kd, value, vstart)
    return out.columns()


def decode_tables(keys, values, cfg, logs=None):
    """Decode a batch for ``tables={...}`` (``cfg.tables``: one typed config per listed table).

    Each event key is read once; the value is parsed once, for the output of the event's table.
    Returns ``([(columns, message index per row)] per listed table, (columns, message index) of
    the unlisted tables' generic rows or None, unlisted rows left out)``.  ``logs``: per listed
    table its ``unknown.TwinLog``, as ``decode``'s ``log``."""
    keys, values = _prepare(keys, values, cfg.compression, cfg.max_message_bytes)
    tables = [_Rows(c, None if logs is None else log) for c, log in zip(cfg.tables, logs or [None] * len(cfg.tables))]
    route = {(c.schema_name, c.table_name): out for c, out in zip(cfg.tables, tables)}
    other = _Rows(cfg) if cfg.unlisted == "generic" else None
    skipped = 0
    for i, kd, _, value, vstart in iter_events(keys, values):
        if kd["t"] == C.MSG_RESOLVED:
            for out in tables:      # every listed table's batch has it, as its own decode does
                out.add(i, kd, value, vstart, routed=True)
            continue
        out = route.get((kd.get("scm"), kd.get("tbl")))
        if out is not None:
            out.add(i, kd, value, vstart, routed=True)
        elif other is not None:
            other.add(i, kd, value, vstart)
        else:
            # read and checked as a single-table typed decode reads other tables' events
            _event_value(kd, value, i, vstart)
            skipped += 1
    return [out.columns() for out in tables], None if other is None else other.columns(), skipped
