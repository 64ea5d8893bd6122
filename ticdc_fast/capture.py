"""Captured Kafka messages: the JSON-lines envelope ``kcat -C -J`` writes.

One JSON object per line: ``{"topic": ..., "partition": 0, "offset": 12, "tstype": "create",
"ts": 1700000000000, "key": "...", "payload": "..."}``; ``key``/``payload`` are ``null`` for a
null key or a tombstone.  kcat copies message bytes into the JSON strings as they are (escaping
only control characters), so a line is read as UTF-8 with surrogate escapes, which gives back
the exact bytes of binary keys and values (open-protocol framing, Avro) as well as of JSON.
``write_capture`` writes the same format (``ticdc-fast capture`` does it from a topic).
"""
from __future__ import annotations

import json
from typing import Iterable, Iterator

import orjson


def _to_bytes(s):
    return None if s is None else s.encode("utf-8", "surrogateescape")


def _loads(line: bytes) -> dict:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line.decode("utf-8", "surrogateescape"))


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
                rec = _loads(line)
                k, v = rec.get("key"), rec.get("payload", rec.get("value"))
                keys.append(_to_bytes(k))
                values.append(_to_bytes(v))
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
