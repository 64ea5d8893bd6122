"""``large-message-handle-compression``: snappy raw block and lz4 frame, via cramjam.

Nothing in a message says it is compressed: the consumer is configured with the same value as
the changefeed.  Decompression is per event and holds the GIL (one call per event, not per value).

Output is capped (``max_message_bytes`` of the decoders): a few kilobytes of lz4 can claim, or
really hold, gigabytes.  Neither format's size header is trusted: snappy's declared length is
checked against the cap and the input's size before anything is allocated; lz4 is decompressed
into a small buffer first and, when it does not fit, once more into one buffer of the cap + 1
byte, so a bomb stops at the cap.  A large output is written into anonymous memory (pages are
only mapped as they are written) and copied out once: one message never holds more than about
twice the cap, and a bomb about the cap.
"""
from __future__ import annotations

import mmap

import cramjam

from ._constants import COMPRESSIONS

# A snappy block declares its decompressed length up front; a forged one must not make us
# allocate gigabytes.  A snappy copy op expands at most 64 bytes from 3 input bytes.
_SNAPPY_MAX_RATIO = 22

# TiCDC's default max-message-bytes is 10 MiB (a Kafka message, compressed), and TiDB's default
# txn-entry-size-limit 6 MiB (one row, before JSON escaping): 128 MiB of decompressed output per
# Kafka message leaves room for both and for highly compressible batches, and still bounds what
# one hostile message can make a decoder hold.
DEFAULT_MAX_MESSAGE_BYTES = 128 << 20
_LZ4_FIRST_GUESS = 1 << 16
# Up to this size an output buffer is ordinary memory; above it, anonymous pages written once.
_SMALL = 1 << 20


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


def check_max_message_bytes(limit) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_message_bytes must be a positive int, not {limit!r}")
    return limit


class OutputTooLarge(ValueError):
    """The decompressed bytes would exceed the cap."""


def _too_large(limit: int) -> ValueError:
    return OutputTooLarge(f"decompressed size exceeds max_message_bytes ({limit} bytes)")


def decompress(data: bytes, name: str, limit: int = DEFAULT_MAX_MESSAGE_BYTES) -> bytes:
    """The decompressed bytes, at most ``limit`` of them (ValueError beyond, or on bad input)."""
    if name == "snappy":
        declared = _snappy_declared_length(data)
        if declared > limit:
            raise _too_large(limit)
        if declared > _SNAPPY_MAX_RATIO * len(data) + 64:
            raise ValueError("snappy declared length is impossible for the input size")
        try:
            if declared <= _SMALL:
                return bytes(cramjam.snappy.decompress_raw(data))
            with mmap.mmap(-1, declared) as out:
                n = cramjam.snappy.decompress_raw_into(data, out)
                return out[:n]
        except Exception as exc:  # cramjam raises its own DecompressionError
            raise ValueError(str(exc)) from None
    if name == "lz4":
        return _lz4_bounded(data, limit)
    return data


_FULL = "failed to write whole buffer"     # cramjam: the output buffer filled up


def _lz4_bounded(data: bytes, limit: int) -> bytes:
    """An lz4 frame (or frames) decompressed into a buffer of a few times the input (most
    messages), else once into a buffer of ``limit + 1`` bytes: more than ``limit`` is refused
    (the frames' content-size fields may lie, so they are not used)."""
    size = min(limit + 1, max(_LZ4_FIRST_GUESS, 4 * len(data)), _SMALL)
    out = bytearray(size)
    try:
        n = cramjam.lz4.decompress_into(data, out)
    except Exception as exc:  # cramjam.DecompressionError
        if _FULL not in str(exc):   # an lz4 format error reads "lz4: ERROR_..."
            raise ValueError(str(exc)) from None
        if size > limit:
            raise _too_large(limit) from None
    else:
        if n > limit:
            raise _too_large(limit)
        del out[n:]
        return bytes(out)
    del out
    with mmap.mmap(-1, limit + 1) as big:
        try:
            n = cramjam.lz4.decompress_into(data, big)
        except Exception as exc:  # cramjam.DecompressionError
            if _FULL not in str(exc):
                raise ValueError(str(exc)) from None
            raise _too_large(limit) from None
        if n > limit:
            raise _too_large(limit)
        return big[:n]


def compress(data: bytes, name: str) -> bytes:
    if name == "snappy":
        return bytes(cramjam.snappy.compress_raw(data))
    if name == "lz4":
        return bytes(cramjam.lz4.compress(data))
    return data
