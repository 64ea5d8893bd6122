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


cdef int _avro_long_multi(Cur* c, int64_t* out, Err* err) noexcept nogil:
    cdef uint64_t acc = 0
    cdef int shift = 0
    cdef uint8_t b
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
    s.p = c.pos
    s.n = <Py_ssize_t>n
    s.off = at
    s.kind = J_STR
    s.esc = 0
    s.ascii = 0
    s.neg = 0
    s.in_scratch = 0
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
