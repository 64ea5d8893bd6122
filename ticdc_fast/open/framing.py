"""Open-protocol batch framing helpers shared by both implementations (Python level, per event).

The hot framing walk lives in the Cython core (``src_cython/framing``) and in
``reference.py``; this module holds what runs once per *event* at most: undoing
``large-message-handle-compression`` before the walk.
"""
from __future__ import annotations

from ..errors import DecodeError
from ..compression import DEFAULT_MAX_MESSAGE_BYTES, OutputTooLarge, decompress

_U64 = 8


def decompress_event_values(values: list, compression: str,
                            max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> list[bytes]:
    """Return the values with every event payload decompressed, framing kept.

    Byte offsets reported later refer to this decompressed framing.  The decompressed events of
    one Kafka message add up to at most ``max_message_bytes``.
    """
    out = []
    for i, value in enumerate(values):
        value = bytes(value)
        pos, n = 0, len(value)
        parts = []
        budget = max_message_bytes
        while pos < n:
            if n - pos < _U64:
                raise DecodeError(f"truncated event length: {n - pos} of 8 bytes", i, pos, part="value")
            length = int.from_bytes(value[pos:pos + _U64], "big")
            start = pos + _U64
            if length > n - start:
                raise DecodeError(f"event length {length} exceeds the {n - start} bytes left",
                                  i, pos, part="value")
            payload = value[start:start + length]
            if length:
                try:
                    payload = decompress(payload, compression, budget)
                except OutputTooLarge:
                    raise DecodeError(f"{compression} decompression failed: the message's events "
                                      f"decompress to more than max_message_bytes ({max_message_bytes} bytes)",
                                      i, start, part="value") from None
                except ValueError as exc:
                    raise DecodeError(f"{compression} decompression failed: {exc}", i, start,
                                      part="value") from None
                budget -= len(payload)
            parts.append(len(payload).to_bytes(_U64, "big"))
            parts.append(payload)
            pos = start + length
        out.append(b"".join(parts))
    return out
