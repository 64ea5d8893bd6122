"""The standard-library JSON parser, for the documents orjson refuses (numbers beyond double,
invalid UTF-8 kept as surrogate escapes).  The open twin and the simple front end both use it."""
from __future__ import annotations

import json
import re
import sys
import threading

# orjson and the Cython scanner both accept 1024 levels of nesting and no more.
MAX_DEPTH = 1024

_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_limit_lock = threading.Lock()


def _depth(text: str) -> int:
    depth = deepest = 0
    for m in _STRING_OR_BRACKET.finditer(text):
        ch = m.group()
        if ch == "[" or ch == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif ch == "]" or ch == "}":
            depth -= 1
    return deepest


def _frames() -> int:
    n, f = 0, sys._getframe()
    while f is not None:
        n, f = n + 1, f.f_back
    return n


def stdlib_loads(text: str | bytes, **kwargs):
    """``json.loads`` with orjson's nesting limit: a document it would take parses here too, a
    deeper one is a ValueError (as is every other bad document; callers make it a DecodeError).

    The standard parser recurses once per level, so the interpreter's recursion limit is raised
    for the call when the current stack plus 1024 levels would not fit under it."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    if _depth(text) > MAX_DEPTH:
        raise ValueError(f"nesting deeper than {MAX_DEPTH}")
    need = _frames() + MAX_DEPTH + 100
    if need <= sys.getrecursionlimit():
        return _loads(text, kwargs)
    with _limit_lock:
        before = sys.getrecursionlimit()
        if need > before:
            sys.setrecursionlimit(need)
        try:
            return _loads(text, kwargs)
        finally:
            if sys.getrecursionlimit() == need:
                sys.setrecursionlimit(before)


def _loads(text: str, kwargs: dict):
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # not expected under the raised limit; never let it escape
        raise ValueError("nesting too deep") from None
