"""Avro binary encoding, read strictly in pure Python: the twins' reader (both the Avro protocol
and the simple protocol's Avro encoding use it).

Every read is bounds-checked against the bytes left before anything is sliced, and a failure is an
``AvroError`` carrying the byte offset the Cython core reports for it (``src_cython/avro/
reader.pxi``): the offset of the bad value (a union or enum index, a boolean, a length that is
negative or beyond the bytes left is reported after its varint, as the core does), or of the end
of the input for a truncated value.  Callers add the message, part and column."""
from __future__ import annotations

import struct

_F32 = struct.Struct("<f").unpack_from
_F64 = struct.Struct("<d").unpack_from
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


class AvroError(ValueError):
    """A value the strict reader refuses; ``offset`` counts from the start of the reader's data."""

    def __init__(self, reason: str, offset: int):
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


class Reader:
    """A cursor over one message (``pos`` may start past a framing header)."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0):
        self.data = data
        self.pos = pos
        self.end = len(data)

    def long(self) -> int:
        """A zig-zag varint.  Overlong encodings whose extra groups are zero read as their value
        (the core does the same); one that needs more than 64 bits is an error."""
        data, pos = self.data, self.pos
        if pos < self.end:
            b = data[pos]
            if b < 0x80:
                self.pos = pos + 1
                return (b >> 1) ^ -(b & 1)
        acc = 0
        shift = 0
        end = self.end
        while True:
            if pos >= end:
                self.pos = pos
                raise AvroError("truncated Avro varint", pos)
            b = data[pos]
            pos += 1
            if shift < 63:
                acc |= (b & 0x7F) << shift
            elif shift == 63:
                if b & 0x7E:
                    self.pos = pos
                    raise AvroError("Avro varint overflows 64 bits", pos)
                acc |= (b & 0x01) << 63
            elif b & 0x7F:
                self.pos = pos
                raise AvroError("Avro varint overflows 64 bits", pos)
            if not b & 0x80:
                break
            shift += 7
        self.pos = pos
        return (acc >> 1) ^ -(acc & 1)

    def int32(self, at: int | None = None) -> int:
        """An Avro ``int``: a varint in the 32-bit range (reported at ``at``, else after it)."""
        v = self.long()
        if not INT32_MIN <= v <= INT32_MAX:
            raise AvroError("Avro int out of 32-bit range", self.pos if at is None else at)
        return v

    def boolean(self) -> bool:
        pos = self.pos
        if pos >= self.end:
            raise AvroError("truncated Avro boolean", pos)
        b = self.data[pos]
        if b > 1:
            raise AvroError("invalid Avro boolean", pos)
        self.pos = pos + 1
        return b == 1

    def float32(self) -> float:
        pos = self.pos
        if self.end - pos < 4:
            raise AvroError("truncated Avro float", pos)
        self.pos = pos + 4
        return _F32(self.data, pos)[0]

    def float64(self) -> float:
        pos = self.pos
        if self.end - pos < 8:
            raise AvroError("truncated Avro double", pos)
        self.pos = pos + 8
        return _F64(self.data, pos)[0]

    def raw(self) -> bytes:
        """Avro ``bytes`` / ``string`` payload: a length, checked before slicing, then the bytes."""
        n = self.long()
        pos = self.pos
        if n < 0:
            raise AvroError("negative Avro length", pos)
        if n > self.end - pos:
            raise AvroError("Avro length exceeds the bytes left", pos)
        self.pos = pos + n
        return self.data[pos:pos + n]

    def text(self, what: str = "a name") -> str:
        """An Avro ``string`` that must be UTF-8 (names, types, SQL: never a column value)."""
        at = self.pos
        raw = self.raw()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise AvroError(f"invalid UTF-8 in {what}", at) from None

    def fixed(self, size: int) -> bytes:
        pos = self.pos
        if self.end - pos < size:
            raise AvroError("truncated Avro fixed", pos)
        self.pos = pos + size
        return self.data[pos:pos + size]

    def index(self, count: int, reason: str) -> int:
        """A union branch or enum symbol index in ``range(count)`` (reported at its first byte)."""
        at = self.pos
        i = self.long()
        if not 0 <= i < count:
            raise AvroError(reason, at)
        return i

    def union(self, count: int) -> int:
        return self.index(count, "Avro union index out of range")

    def enum(self, count: int) -> int:
        return self.index(count, "Avro enum index out of range")

    def block_count(self) -> int:
        """The item count of the next array/map block (0: the end).  A negative count is followed
        by the block's byte size, read and not used."""
        count = self.long()
        if count < 0:
            if count == -(1 << 63):
                raise AvroError("invalid Avro map block", self.pos)
            self.long()
            count = -count
        if count > self.end - self.pos:   # every item takes at least one byte
            raise AvroError("Avro map block count exceeds the bytes left", self.pos)
        return count
