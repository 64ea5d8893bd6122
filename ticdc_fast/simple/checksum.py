"""Row checksums (TiDB row-level checksum v1) for the simple protocol's ``checksum`` field.

TiCDC's own verification (tiflow ``examples/golang/avro-checksum-verification``) rebuilds the
bytes TiDB hashed: for every column in schema order with a non-NULL value, integers, ENUM/SET
and BIT as uint64 little-endian, FLOAT/DOUBLE as the float64 bits (NaN/Inf as 0), and every
other type as ``uint32 LE length ‖ bytes`` of its text (TIMESTAMP as its UTC wall clock
``YYYY-MM-DD HH:MM:SS``, binary strings as their raw bytes); the CRC32 (IEEE) of that stream is the
checksum.  The simple protocol does not carry column IDs, so schema order is table order.
"""
from __future__ import annotations

import base64
import struct
import zlib

from .. import _constants as C
from .. import values as V
from ..timezones import wall_to_utc_us

_INTS = {C.T_TINY, C.T_SHORT, C.T_INT24, C.T_LONG, C.T_LONGLONG, C.T_YEAR, C.T_BIT, C.T_ENUM, C.T_SET}
_US_DAY = 86_400_000_000


def _utc_seconds_text(ts: dict) -> bytes:
    wall = V.parse_datetime_us(ts["value"].encode())
    utc = wall_to_utc_us(ts["location"], wall) // 1_000_000
    days, secs = divmod(utc, 86400)
    from .reference import _civil
    y, m, d = _civil(days)
    return f"{y:04d}-{m:02d}-{d:02d} {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}".encode()


def row_checksum(table_schema, image: dict) -> int:
    """CRC32 of one row image (column name → value in the JSON protocol's form)."""
    crc = 0
    for col in table_schema.columns:
        v = image.get(col.name)
        if v is None:
            continue
        code = col.type_code
        if code in _INTS:
            buf = struct.pack("<Q", int(v) & 0xFFFFFFFFFFFFFFFF)
        elif code in (C.T_FLOAT, C.T_DOUBLE):
            x = float(v)
            if x != x or x in (float("inf"), float("-inf")):
                x = 0.0
            buf = struct.pack("<d", x)
        else:
            if code == C.T_TIMESTAMP and isinstance(v, dict):
                data = _utc_seconds_text(v)
            elif col.flags & C.FLAG_BINARY:
                data = base64.b64decode(v)
            else:
                data = str(v).encode("utf-8", "surrogateescape")
            buf = struct.pack("<I", len(data)) + data
        crc = zlib.crc32(buf, crc)
    return crc & 0xFFFFFFFF
