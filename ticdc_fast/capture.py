"""Captured Kafka messages: the JSON-lines envelope ``kcat -C -J`` writes.

One JSON object per line: ``{"topic": ..., "partition": 0, "offset": 12, "tstype": "create",
"ts": 1700000000000, "key": "...", "payload": "..."}``; ``key``/``payload`` are ``null`` for a
null key or a tombstone.  kcat copies message bytes into the JSON strings as they are (escaping
only control characters), so a line must give back the exact bytes of binary keys and values
(open-protocol framing, Avro) as well as of JSON: a line that is not UTF-8 is read as Latin-1
(one code point per byte) and its strings written back the same way; only a line that also
escapes a character above U+007F goes through UTF-8 with surrogate escapes and the slower
standard ``json`` module.
``write_capture`` writes the same format (``ticdc-fast capture`` does it from a topic).
"""
from __future__ import annotations

import json
import re
from typing import Iterable, Iterator

import orjson


# a \uXXXX escape of a character above U+007F: in a Latin-1 reading it would come back as one
# byte instead of its UTF-8 bytes (an escaped backslash before a 'u' matches too: only slower)
_WIDE_ESCAPE = re.compile(rb"\\u(?!00[0-7])")


def _loads(line: bytes) -> tuple[dict, str]:
    """The record and the codec that turns its strings back into the message bytes."""
    try:
        return orjson.loads(line), "utf-8"
    except orjson.JSONDecodeError:
        pass
    if _WIDE_ESCAPE.search(line) is None:
        return orjson.loads(line.decode("latin-1")), "latin-1"
    return json.loads(line.decode("utf-8", "surrogateescape")), "utf-8"


def _to_bytes(s, codec: str):
    if s is None:
        return None
    return s.encode("latin-1") if codec == "latin-1" else s.encode("utf-8", "surrogateescape")


def read_capture(path, chunk: int = 50_000, progress=None) -> Iterator[tuple[list, list, list, list]]:
    """Chunks of (keys, values, partitions, offsets) from a capture file; ``progress(nbytes)`` is
    called with the bytes read for each chunk."""
    keys, values, parts, offs = [], [], [], []
    nbytes = 0
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            nbytes += len(line)
            line = line.strip()
            if not line:
                continue
            try:
                rec, codec = _loads(line)
                k, v = rec.get("key"), rec.get("payload", rec.get("value"))
                keys.append(_to_bytes(k, codec))
                values.append(_to_bytes(v, codec))
                parts.append(int(rec.get("partition", 0)))
                offs.append(int(rec.get("offset", lineno - 1)))
            except (ValueError, TypeError, AttributeError) as exc:
                raise ValueError(f"{path}:{lineno}: not a kcat -J record ({exc})") from None
            if len(values) == chunk:
                if progress is not None:
                    progress(nbytes)
                    nbytes = 0
                yield keys, values, parts, offs
                keys, values, parts, offs = [], [], [], []
    if progress is not None:
        progress(nbytes)
    if values:
        yield keys, values, parts, offs


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
