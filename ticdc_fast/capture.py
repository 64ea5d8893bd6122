"""Captured Kafka messages: the JSON-lines envelope ``kcat -C -J`` writes.

One JSON object per line: ``{"topic": ..., "partition": 0, "offset": 12, "tstype": "create",
"ts": 1700000000000, "key": "...", "payload": "..."}``; ``key``/``payload`` are ``null`` for a
null key or a tombstone.  kcat copies message bytes into the JSON strings as they are (escaping
only control characters), so a line must give back the exact bytes of binary keys and values
(open-protocol framing, Avro) as well as of JSON: raw bytes come back as they are, and a
``\\uXXXX`` escape as the UTF-8 bytes of its character.  (A line that is not UTF-8 is read as
Latin-1, one code point per byte, with its escapes above U+007F first rewritten as the escapes of
their UTF-8 bytes.)  Blank lines are skipped but counted; a missing ``partition`` is 0, a missing
``offset`` the line number - 1; ``value`` is read when there is no ``payload``; other members are
skipped.

This module is the definition of that reading.  ``parse_block`` uses the Cython core when it is
built (``_core.parse_capture_block``: same arrays, same error text, no GIL held), so
``decode --jobs N`` parses a capture on N threads; ``read_blocks`` cuts the file into blocks of
whole lines.
``write_capture`` writes the same format (``ticdc-fast capture`` does it from a topic).
"""
from __future__ import annotations

import json
import queue
import re
from typing import Iterable, Iterator

import orjson
import pyarrow as pa

from . import _impl


BLOCK_BYTES = 4 << 20
"""Bytes of capture read at a time; a block ends at the last line end in it (a longer line makes
a longer block)."""

_INT32 = range(-(1 << 31), 1 << 31)
_INT64 = range(-(1 << 63), 1 << 63)

# A \uXXXX escape of a character above U+007F (a surrogate pair as one character), preceded by an
# even run of backslashes (an escaped backslash before a 'u' is no escape).  In the Latin-1 reading
# it becomes the \u00XX escapes of its UTF-8 bytes, so that each comes back as one byte.
_WIDE_ESCAPE = re.compile(
    rb"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\)((?:\\\\)*)\\u(?!00[0-7])([0-9a-fA-F]{4})")


def _utf8_byte_escapes(m) -> bytes:
    if m.group(2) is not None:
        lead = m.group(1)
        cp = 0x10000 + ((int(m.group(2), 16) - 0xD800) << 10) + (int(m.group(3), 16) - 0xDC00)
    else:
        lead, cp = m.group(4), int(m.group(5), 16)
        if 0xD800 <= cp <= 0xDFFF:
            return m.group(0)        # a lone surrogate: orjson refuses the line, as it should
    return lead + b"".join(b"\\u00%02x" % b for b in chr(cp).encode("utf-8"))


def _loads(line: bytes) -> tuple[object, str]:
    """The record and the codec that turns its strings back into the message bytes: raw bytes
    come back as they are, escapes as the UTF-8 bytes of their character.  orjson's verdict on the
    line is the definition of a well-formed line (grammar, depth 1024, no lone surrogate, no
    number that is infinite as a double); the Cython core keeps the same rules."""
    try:
        return orjson.loads(line), "utf-8"
    except orjson.JSONDecodeError:
        pass
    if b"\\u" in line:
        line = _WIDE_ESCAPE.sub(_utf8_byte_escapes, line)
    return orjson.loads(line.decode("latin-1")), "latin-1"


def _to_bytes(s, codec: str):
    if s is None:
        return None
    return s.encode(codec)


class _BadLine(ValueError):
    """What is wrong with one line (the words the core uses too)."""


def _record(line: bytes, lineno: int) -> tuple:
    try:
        rec, codec = _loads(line)
    except orjson.JSONDecodeError:
        raise _BadLine("malformed JSON") from None
    if not isinstance(rec, dict):
        raise _BadLine("not a JSON object")
    key = rec.get("key")
    if key is not None and not isinstance(key, str):
        raise _BadLine("key is not a string or null")
    name = "payload" if "payload" in rec else "value"
    value = rec.get(name)
    if value is not None and not isinstance(value, str):
        raise _BadLine(f"{name} is not a string or null")
    partition = rec.get("partition", 0)
    if type(partition) is not int or partition not in _INT32:
        raise _BadLine("partition is not a 32-bit integer")
    offset = rec.get("offset", lineno - 1)
    if type(offset) is not int or offset not in _INT64:
        raise _BadLine("offset is not a 64-bit integer")
    return _to_bytes(key, codec), _to_bytes(value, codec), partition, offset


def _parse_lists(block: bytes, first_lineno: int, path) -> tuple[list, list, list, list]:
    keys, values, parts, offs = [], [], [], []
    lines = bytes(block).split(b"\n")
    if lines[-1] == b"":
        lines.pop()           # the block's last line end, not a line
    for lineno, line in enumerate(lines, first_lineno):
        line = line.strip()
        if not line:
            continue
        try:
            k, v, p, o = _record(line, lineno)
        except _BadLine as exc:
            raise ValueError(f"{path}:{lineno}: not a kcat -J record ({exc})") from None
        keys.append(k)
        values.append(v)
        parts.append(p)
        offs.append(o)
    return keys, values, parts, offs


def parse_block(block: bytes, first_lineno: int, path, implementation: str | None = None) -> tuple:
    """The records of a block of whole kcat -J lines (its first line is line ``first_lineno`` of
    ``path``, named in errors) as Arrow arrays: keys and values ``large_binary`` (null for a null
    key or a tombstone), partitions ``int32`` (0 when absent), offsets ``int64`` (the line number
    - 1 when absent).  The Cython core parses with the GIL released; a bad line raises
    ``ValueError("path:lineno: not a kcat -J record (why)")`` in both implementations."""
    if _impl.resolve(implementation) == "cython":
        return _impl.core.parse_capture_block(block, first_lineno, str(path))
    keys, values, parts, offs = _parse_lists(block, first_lineno, path)
    return (pa.array(keys, pa.large_binary()), pa.array(values, pa.large_binary()),
            pa.array(parts, pa.int32()), pa.array(offs, pa.int64()))


def line_of_error(exc: Exception, path) -> int | None:
    """The line number a ``parse_block`` error names (``"path:lineno: not a kcat -J record
    (why)"``), or None for any other error."""
    text, prefix = str(exc), f"{path}:"
    if not text.startswith(prefix):
        return None
    num, sep, rest = text[len(prefix):].partition(":")
    if not sep or not num.isdigit() or not rest.startswith(" not a kcat -J record"):
        return None
    return int(num)


def _count_lines(block) -> int:
    return _impl.core.capture_count_lines(block) if _impl.core is not None else block.count(b"\n")


def read_blocks(path, block_bytes: int | None = None, spare=None) -> Iterator[tuple[int, bytearray]]:
    """(number of its first line, block) for blocks of whole lines: ``block_bytes`` read, plus
    the rest of the line they cut (a long line makes a long block).  Only file reads, which
    release the GIL: the parsing is the caller's, on whatever thread it likes.

    ``spare``: a queue (``queue.SimpleQueue``) into which the caller puts each block it has
    finished with; blocks are taken from it before new ones are made.  A new block is fresh
    memory that the kernel maps and zeroes page by page on first touch (on a 174 MB capture,
    ~43,000 page faults and most of the reading thread's system time); a reused one is not."""
    lineno = 1
    block_bytes = max(1, block_bytes or BLOCK_BYTES)
    with open(path, "rb") as fh:
        while True:
            block = _spare_block(spare, block_bytes)
            n = fh.readinto(block)
            if not n:
                return
            del block[n:]
            if block[-1] != 10:
                block += fh.readline()
            yield lineno, block
            lineno += _count_lines(block)


def _spare_block(spare, block_bytes: int) -> bytearray:
    """A block of ``block_bytes`` bytes: one the caller gave back, resized (shrinking keeps a
    bytearray's memory, and it regrows into it), or a new one."""
    if spare is not None:
        try:
            block = spare.get_nowait()
        except queue.Empty:
            pass
        else:
            if len(block) > block_bytes:
                del block[block_bytes:]
            elif len(block) < block_bytes:
                block += bytes(block_bytes - len(block))
            return block
    return bytearray(block_bytes)


def _concat(pieces: list) -> tuple:
    if len(pieces) == 1:
        return pieces[0]
    return tuple(pa.concat_arrays([p[i] for p in pieces]) for i in range(4))


def rechunk(blocks: Iterable[tuple], size: int) -> Iterator[tuple]:
    """Column tuples of exactly ``size`` messages (the last one shorter) from column tuples of
    any length."""
    pieces: list = []
    held = 0
    for cols in blocks:
        if not len(cols[0]):
            continue
        pieces.append(cols)
        held += len(cols[0])
        while held >= size:
            want, out = size, []
            while want:
                head = pieces[0]
                n = len(head[0])
                if n <= want:
                    out.append(pieces.pop(0))
                    want -= n
                else:
                    out.append(tuple(a.slice(0, want) for a in head))
                    pieces[0] = tuple(a.slice(want) for a in head)
                    want = 0
            held -= size
            yield _concat(out)
    if held:
        yield _concat(pieces)


def read_capture(path, chunk: int = 50_000, progress=None, *, arrow: bool = False,
                 implementation: str | None = None) -> Iterator[tuple]:
    """Chunks of ``chunk`` messages (the last one shorter), each (keys, values, partitions,
    offsets): lists, or with ``arrow=True`` the Arrow arrays of ``parse_block``.
    ``progress(nbytes)`` is called with the bytes of each block read."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")

    def parsed():
        spare = queue.SimpleQueue()
        for lineno, block in read_blocks(path, spare=spare):
            cols = parse_block(block, lineno, path, implementation)
            if progress is not None:
                progress(len(block))
            spare.put(block)            # the arrays hold copies: the block takes the next read
            yield cols

    for cols in rechunk(parsed(), chunk):
        yield cols if arrow else tuple(a.to_pylist() for a in cols)


def _str(b):
    return None if b is None else bytes(b).decode("utf-8", "surrogateescape")


def write_capture(path, records: Iterable[tuple], topic: str = "ticdc") -> int:
    """Write (key, value, partition, offset) records as kcat -J lines; returns the count."""
    n = 0
    with open(path, "wb") as fh:
        for key, value, partition, offset in records:
            doc = {"topic": topic, "partition": partition, "offset": offset, "tstype": "create",
                   "ts": 0, "key": _str(key), "payload": _str(value)}
            fh.write(json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n")
            n += 1
    return n
