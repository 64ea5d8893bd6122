"""Where a member of a JSON document starts, for the error path of the pure-Python twins.

The twins parse with orjson, which gives values but not their places; the Cython core reports
every error at a byte offset of the message (a value's first byte, a member name's opening quote).
When a twin finds a problem in a document it has already parsed, these helpers walk the text to
the member it is about — only then, so the happy path stays as fast as orjson.  The documents
given here are valid JSON (they parsed); a repeated member counts by its last copy, as in the
twins and the core.
"""
from __future__ import annotations

import json
import re

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(rb'[^,\]}\s]*')
_WS = b" \t\n\r"


def skip_ws(doc: bytes, p: int) -> int:
    n = len(doc)
    while p < n and doc[p] in _WS:
        p += 1
    return p


def _skip_value(doc: bytes, p: int) -> int:
    c = doc[p]
    if c == 0x22:
        return _STRING.match(doc, p).end()
    if c not in (0x7B, 0x5B):
        return _SCALAR.match(doc, p).end()
    depth = 0
    while True:                 # iterative: a value may nest 1024 deep
        c = doc[p]
        if c == 0x22:
            p = _STRING.match(doc, p).end()
            continue
        if c in (0x7B, 0x5B):
            depth += 1
        elif c in (0x7D, 0x5D):
            depth -= 1
            if depth == 0:
                return p + 1
        p += 1


def _name(raw: bytes) -> str:
    return json.loads(raw.decode("utf-8", "surrogateescape"))


def members(doc: bytes, p: int) -> list[tuple[str, int, int]]:
    """(name, offset of its opening quote, offset of its value) of every member of the object
    at ``p`` (whitespace before it allowed), in document order."""
    p = skip_ws(doc, p)
    out = []
    p = skip_ws(doc, p + 1)
    if doc[p] == 0x7D:
        return out
    while True:
        m = _STRING.match(doc, p)
        name, name_at = _name(m.group()), p
        p = skip_ws(doc, skip_ws(doc, m.end()) + 1)      # past ':'
        out.append((name, name_at, p))
        p = skip_ws(doc, _skip_value(doc, p))
        if doc[p] == 0x7D:
            return out
        p = skip_ws(doc, p + 1)


def elements(doc: bytes, p: int) -> list[int]:
    """Offset of every element of the array at ``p`` (whitespace before it allowed)."""
    p = skip_ws(doc, skip_ws(doc, p) + 1)
    out = []
    if doc[p] == 0x5D:
        return out
    while True:
        out.append(p)
        p = skip_ws(doc, _skip_value(doc, p))
        if doc[p] == 0x5D:
            return out
        p = skip_ws(doc, p + 1)


def locate(doc: bytes, path, name: bool = False, start: int = 0, first: bool = False) -> int | None:
    """Offset in ``doc`` of the value at ``path`` (member names, the last copy of each, and
    array indexes: ``("columns", 3, "name")``), or of the last member name of the path when
    ``name``; None when the path is not there.  ``first``: the first copy of the path's last
    member (where a reader that stops at it fails)."""
    try:
        p = skip_ws(doc, start)
        at = p
        for depth, key in enumerate(path):
            if type(key) is int:
                if p >= len(doc) or doc[p] != 0x5B:
                    return None
                items = elements(doc, p)
                if not 0 <= key < len(items):
                    return None
                at = p = items[key]
                continue
            if p >= len(doc) or doc[p] != 0x7B:
                return None
            hit = None
            for k, name_at, value_at in members(doc, p):
                if k == key and (hit is None or not first or depth < len(path) - 1):
                    hit = (name_at, value_at)
            if hit is None:
                return None
            at, p = hit[0], hit[1]
        return at if name else p
    except (IndexError, AttributeError, ValueError):     # not the valid JSON promised: no place
        return None


# ----------------------------------------------------------------------------- syntax errors
class JSONSyntax(Exception):
    """The first grammar error of a document as the core's scanner (src_cython/json/scan.pxi)
    words and places it."""

    def __init__(self, reason: str, offset: int):
        super().__init__(reason)
        self.reason, self.offset = "malformed JSON: " + reason, offset


_MAX_DEPTH = 1024
_ESCAPES = frozenset(b'"\\/bfnrt')
_HEX = frozenset(b"0123456789abcdefABCDEF")
_PLAIN_RUN = re.compile(rb'[^"\\\x00-\x1f]*')


def _scan_string(doc: bytes, p: int) -> int:
    """``p`` at the opening quote; returns the offset past the closing one."""
    n = len(doc)
    p += 1
    while True:
        p = _PLAIN_RUN.match(doc, p).end()
        if p >= n:
            raise JSONSyntax("unterminated string", p)
        c = doc[p]
        if c == 0x22:
            return p + 1
        if c < 0x20:
            raise JSONSyntax("control character in string", p)
        if p + 1 >= n:
            raise JSONSyntax("unterminated string", p)
        e = doc[p + 1]
        if e == 0x75:
            if n - p < 6 or not all(b in _HEX for b in doc[p + 2:p + 6]):
                raise JSONSyntax("invalid \\u escape", p)
            cp = int(doc[p + 2:p + 6], 16)
            if 0xD800 <= cp <= 0xDBFF:
                if n - p < 12 or doc[p + 6] != 0x5C or doc[p + 7] != 0x75 \
                        or not all(b in _HEX for b in doc[p + 8:p + 12]) \
                        or not 0xDC00 <= int(doc[p + 8:p + 12], 16) <= 0xDFFF:
                    raise JSONSyntax("lone high surrogate", p)
                p += 12
            elif 0xDC00 <= cp <= 0xDFFF:
                raise JSONSyntax("lone low surrogate", p)
            else:
                p += 6
        elif e in _ESCAPES:
            p += 2
        else:
            raise JSONSyntax("invalid escape", p)


def _digits(doc: bytes, p: int) -> int:
    n = len(doc)
    while p < n and 0x30 <= doc[p] <= 0x39:
        p += 1
    return p


def _scan_number(doc: bytes, p: int) -> int:
    n = len(doc)
    if p < n and doc[p] == 0x2D:
        p += 1
    if p >= n or not 0x30 <= doc[p] <= 0x39:
        raise JSONSyntax("invalid number", p)
    if doc[p] == 0x30:
        p += 1
        if p < n and 0x30 <= doc[p] <= 0x39:
            raise JSONSyntax("number with leading zero", p)
    else:
        p = _digits(doc, p)
    if p < n and doc[p] == 0x2E:
        p += 1
        if p >= n or not 0x30 <= doc[p] <= 0x39:
            raise JSONSyntax("invalid number", p)
        p = _digits(doc, p)
    if p < n and doc[p] in (0x65, 0x45):
        p += 1
        if p < n and doc[p] in (0x2B, 0x2D):
            p += 1
        if p >= n or not 0x30 <= doc[p] <= 0x39:
            raise JSONSyntax("invalid number", p)
        p = _digits(doc, p)
    return p


def _scan_scalar(doc: bytes, p: int) -> int:
    c = doc[p]
    if c == 0x22:
        return _scan_string(doc, p)
    if c == 0x2D or 0x30 <= c <= 0x39:
        return _scan_number(doc, p)
    for lit in (b"true", b"false", b"null"):
        if c == lit[0]:
            if doc[p:p + len(lit)] != lit:
                raise JSONSyntax("invalid literal", p)
            return p + len(lit)
    raise JSONSyntax("unexpected character", p)


def _skip_container(doc: bytes, p: int, depth: int) -> int:
    n = len(doc)
    if depth > _MAX_DEPTH:
        raise JSONSyntax("nesting deeper than 1024", p)
    stack = [doc[p]]
    p += 1
    state = 2       # 2 just opened, 1 an element must follow, 0 after an element
    while stack:
        p = skip_ws(doc, p)
        if p >= n:
            raise JSONSyntax("unexpected end of data", p)
        c = doc[p]
        top = stack[-1]
        if state != 1 and ((top == 0x7B and c == 0x7D) or (top == 0x5B and c == 0x5D)):
            p += 1
            stack.pop()
            state = 0
            continue
        if state == 0:
            if c != 0x2C:
                raise JSONSyntax("expected ',' or a closing bracket", p)
            p = skip_ws(doc, p + 1)
            if p >= n:
                raise JSONSyntax("unexpected end of data", p)
            c = doc[p]
        if top == 0x7B:
            if c != 0x22:
                raise JSONSyntax("expected a string key", p)
            p = skip_ws(doc, _scan_string(doc, p))
            if p >= n or doc[p] != 0x3A:
                raise JSONSyntax("expected ':'", p)
            p = skip_ws(doc, p + 1)
            if p >= n:
                raise JSONSyntax("unexpected end of data", p)
            c = doc[p]
        if c in (0x7B, 0x5B):
            if depth + len(stack) > _MAX_DEPTH:
                raise JSONSyntax("nesting deeper than 1024", p)
            stack.append(c)
            p += 1
            state = 2
            continue
        p = _scan_scalar(doc, p)
        state = 0
    return p


def _scan_value(doc: bytes, p: int, depth: int) -> int:
    if p >= len(doc):
        raise JSONSyntax("unexpected end of data", p)
    if doc[p] in (0x7B, 0x5B):
        return _skip_container(doc, p, depth)
    return _scan_scalar(doc, p)


def _walk_object(doc: bytes, p: int, depth: int, walked) -> int:
    """An object the core reads member by member (obj_open / obj_key / obj_more), ``p`` at its
    '{'.  ``walked(name)``: how the core reads that member's value when it is an object — None
    (skipped as any value) or the ``walked`` of its own members."""
    n = len(doc)
    p = skip_ws(doc, p + 1)
    if p >= n:
        raise JSONSyntax("unexpected end of data", p)
    if doc[p] == 0x7D:
        return p + 1
    while True:
        if p >= n or doc[p] != 0x22:
            raise JSONSyntax("expected a string key", p)
        end = _scan_string(doc, p)
        name = _name(doc[p:end])
        p = skip_ws(doc, end)
        if p >= n or doc[p] != 0x3A:
            raise JSONSyntax("expected ':'", p)
        p = skip_ws(doc, p + 1)
        if p >= n:
            raise JSONSyntax("unexpected end of data", p)
        inner = walked(name) if walked is not None else None
        if inner is not None and doc[p] == 0x7B:
            p = _walk_object(doc, p, depth + 1, inner)
        else:
            p = _scan_value(doc, p, depth + 1)
        p = skip_ws(doc, p)
        if p >= n:
            raise JSONSyntax("unexpected end of data", p)
        if doc[p] == 0x2C:
            p = skip_ws(doc, p + 1)
            continue
        if doc[p] == 0x7D:
            return p + 1
        raise JSONSyntax("expected ',' or '}'", p)


def object_syntax(doc: bytes, walked=None) -> None:
    """Raise JSONSyntax with the core's first grammar error of a document that is an object
    (its first byte after whitespace is '{'), read as the core reads it; ``walked`` as in
    ``_walk_object`` for its members (None: every member value skipped as any value)."""
    p = _walk_object(doc, skip_ws(doc, 0), 1, walked)
    p = skip_ws(doc, p)
    if p != len(doc):
        raise JSONSyntax("trailing characters", p)


def column_name(name: str) -> str:
    """A column name as the core's error carries it: its first 255 bytes, invalid UTF-8 replaced."""
    return name.encode("utf-8", "surrogateescape")[:255].decode("utf-8", "replace")


def path_at(doc: bytes, offset: int) -> tuple[tuple, bool] | None:
    """The member path whose value (or, second item True, whose name) starts at or holds
    ``offset``: the inverse of ``locate``, to carry an error's place from one spelling of a
    document to another.  None when ``doc`` is not an object."""
    try:
        p = skip_ws(doc, 0)
        path = []
        while p < len(doc) and doc[p] == 0x7B and p != offset:
            inner = None
            for name, name_at, value_at in members(doc, p):
                if name_at <= offset < value_at:
                    return tuple(path) + (name,), True
                if value_at <= offset < _skip_value(doc, value_at):
                    inner = (name, value_at)
                    break
            if inner is None:
                break
            path.append(inner[0])
            p = inner[1]
        return tuple(path), False
    except (IndexError, AttributeError, ValueError):
        return None
