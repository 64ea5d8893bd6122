# Avro binary primitives over the cursor: zig-zag varints, length-prefixed bytes/strings and
# union indexes, each bounds-checked against the value being read.

cdef inline int avro_long(Cur* c, int64_t* out, Err* err) noexcept nogil:
    """Zig-zag varint.  Overlong encodings whose extra groups are zero are accepted (as fastavro
    does); a value that needs more than 64 bits is an error."""
    cdef uint64_t b
    if c.pos < c.end and c.pos[0] < 0x80:    # one byte: union indexes, lengths, small numbers
        b = c.pos[0]
        c.pos += 1
        out[0] = <int64_t>((b >> 1) ^ (0 - (b & 1)))
        return 0
    return _avro_long_multi(c, out, err)


cdef inline uint64_t _varint_groups(uint64_t x) noexcept nogil:
    """The 7-bit groups of eight little-endian varint bytes, packed into 56 bits."""
    x = ((x & 0x7F007F007F007F00ULL) >> 1) | (x & 0x007F007F007F007FULL)
    x = ((x & 0x3FFF00003FFF0000ULL) >> 2) | (x & 0x00003FFF00003FFFULL)
    return ((x & 0x0FFFFFFF00000000ULL) >> 4) | (x & 0x000000000FFFFFFFULL)


cdef int _avro_long_multi(Cur* c, int64_t* out, Err* err) noexcept nogil:
    cdef uint64_t acc = 0, x, stop
    cdef int shift = 0, nb
    cdef uint8_t b
    if c.end - c.pos >= 9:
        # 2-9 bytes (timestamps, TSOs, lengths past 63) from one word: the last byte is the
        # first without its high bit; nothing this long can overflow
        x = load_le64(c.pos)
        stop = ~x & 0x8080808080808080ULL
        if stop != 0:
            nb = (__builtin_ctzll(stop) >> 3) + 1
            if nb < 8:
                x &= (1ULL << (8 * nb)) - 1
            acc = _varint_groups(x)
        elif c.pos[8] < 0x80:
            nb = 9
            acc = _varint_groups(x) | (<uint64_t>c.pos[8] << 56)
        else:
            nb = 0                              # ten bytes or more: the byte loop below
        if nb:
            c.pos += nb
            out[0] = <int64_t>((acc >> 1) ^ (0 - (acc & 1)))
            return 0
    while True:
        if c.pos >= c.end:
            return fail(err, c, "truncated Avro varint")
        b = c.pos[0]
        c.pos += 1
        if shift < 63:
            acc |= (<uint64_t>(b & 0x7F)) << shift
        elif shift == 63:
            if b & 0x7E:
                return fail(err, c, "Avro varint overflows 64 bits")
            acc |= (<uint64_t>(b & 0x01)) << 63
        elif b & 0x7F:
            return fail(err, c, "Avro varint overflows 64 bits")
        if not (b & 0x80):
            break
        shift += 7
    out[0] = <int64_t>((acc >> 1) ^ (0 - (acc & 1)))
    return 0


cdef int avro_string(Cur* c, Span* s, Err* err) noexcept nogil:
    cdef int64_t n
    cdef Py_ssize_t at = c.pos - c.start
    if avro_long(c, &n, err) < 0:
        return -1
    if n < 0:
        return fail(err, c, "negative Avro length")
    if n > c.end - c.pos:
        return fail(err, c, "Avro length exceeds the bytes left")
    span_text(s, c.pos, <Py_ssize_t>n, 0, 0)
    s.off = at
    c.pos += n
    return 0


cdef inline int avro_union(Cur* c, int branches, int64_t* idx, Err* err) noexcept nogil:
    # an index out of range is reported at its first byte, as every bad value is
    cdef const uint8_t* at = c.pos
    if avro_long(c, idx, err) < 0:
        return -1
    if idx[0] < 0 or idx[0] >= branches:
        c.pos = at
        return fail(err, c, "Avro union index out of range")
    return 0


cdef inline int avro_real(Cur* c, bint single, double* out, Err* err) noexcept nogil:
    """An Avro float (single) or double, as a double (a float widens exactly); finiteness is the
    caller's to judge."""
    cdef float f32
    if single:
        if c.end - c.pos < 4:
            return fail(err, c, "truncated Avro float")
        memcpy(&f32, c.pos, 4)
        c.pos += 4
        out[0] = f32
        return 0
    if c.end - c.pos < 8:
        return fail(err, c, "truncated Avro double")
    memcpy(out, c.pos, 8)
    c.pos += 8
    return 0
