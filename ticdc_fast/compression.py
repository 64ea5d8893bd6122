"""``large-message-handle-compression``: snappy raw block and lz4 frame, via cramjam.

Nothing in a message says it is compressed: the consumer is configured with the same value as
the changefeed.  Decompression is per event and holds the GIL (one call per event, not per value).
"""
from __future__ import annotations

import cramjam

from ._constants import COMPRESSIONS

# A snappy block declares its decompressed length up front; a forged one must not make us
# allocate gigabytes.  A snappy copy op expands at most 64 bytes from 3 input bytes.
_SNAPPY_MAX_RATIO = 22


def check_compression(name: str) -> str:
    if name is None:
        return "none"
    name = name.lower()
    if name not in COMPRESSIONS:
        raise ValueError(f"compression must be one of {COMPRESSIONS}, not {name!r}")
    return name


def _snappy_declared_length(data: bytes) -> int:
    result = shift = 0
    for i, b in enumerate(data[:10]):
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result
        shift += 7
    raise ValueError("bad snappy length header")


def decompress(data: bytes, name: str) -> bytes:
    if name == "snappy":
        if _snappy_declared_length(data) > _SNAPPY_MAX_RATIO * len(data) + 64:
            raise ValueError("snappy declared length is impossible for the input size")
        try:
            return bytes(cramjam.snappy.decompress_raw(data))
        except Exception as exc:  # cramjam raises its own DecompressionError
            raise ValueError(str(exc)) from None
    if name == "lz4":
        try:
            return bytes(cramjam.lz4.decompress(data))
        except Exception as exc:
            raise ValueError(str(exc)) from None
    return data


def compress(data: bytes, name: str) -> bytes:
    if name == "snappy":
        return bytes(cramjam.snappy.compress_raw(data))
    if name == "lz4":
        return bytes(cramjam.lz4.compress(data))
    return data
