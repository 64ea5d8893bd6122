# kcat -J capture lines → the columns of their Kafka records (keys, values, partitions, offsets),
# parsed without the GIL so that `decode --jobs N` can read a capture on N threads.
#
# The definition is ticdc_fast/capture.py (the twin): a line is one JSON document as orjson
# accepts it (the scanner in json/scan.pxi keeps orjson's grammar, depth 1024 and surrogate
# rules; a number whose double is infinite is refused here as orjson refuses it); its strings'
# raw bytes are copied as they are (kcat writes message bytes unescaped), escapes become their
# UTF-8 bytes.  Blank lines count for the line numbers only.

from libc.string cimport memchr


cdef enum:
    CAP_KEY = 0
    CAP_PAYLOAD = 1
    CAP_VALUE = 2
    CAP_PARTITION = 3
    CAP_OFFSET = 4
    CAP_FIELDS = 5

cdef tuple CAP_MEMBER_NAMES = (b"key", b"payload", b"value", b"partition", b"offset")  # in CAP_* order
cdef const char* CAP_NAMES[5]
cdef Py_ssize_t CAP_LENS[5]
name_table(CAP_MEMBER_NAMES, CAP_FIELDS, CAP_NAMES, CAP_LENS)


# A large_binary column (int64 offsets: a block's bytes may pass 2 GiB, and the decoders read this
# layout without a cast).
cdef struct BigVarCol:
    Buf offsets
    Buf data
    Bits valid


cdef struct CapCols:
    BigVarCol keys
    BigVarCol values
    Buf partitions
    Buf offsets
    Py_ssize_t rows
    Buf scratch        # long number texts for parse_double


cdef inline int _big_close(BigVarCol* c, bint valid) noexcept nogil:
    cdef int64_t end = c.data.len
    if buf_append(&c.offsets, &end, 8) < 0:
        return -1
    return bits_push(&c.valid, valid)


cdef void _cap_free(CapCols* o) noexcept nogil:
    buf_free(&o.keys.offsets)
    buf_free(&o.keys.data)
    buf_free(&o.keys.valid.b)
    buf_free(&o.values.offsets)
    buf_free(&o.values.data)
    buf_free(&o.values.valid.b)
    buf_free(&o.partitions)
    buf_free(&o.offsets)
    buf_free(&o.scratch)


cdef inline int _cap_is_space(uint8_t ch) noexcept nogil:
    # bytes.strip(): space, \t, \n, \r, \v, \f
    return ch == 32 or (9 <= ch <= 13)


cdef int _cap_string_into(Cur* c, Buf* out, Err* err) noexcept nogil:
    """The JSON string at c.pos (its opening quote) appended to `out` as the bytes it stands for
    (raw bytes as they are, escapes as UTF-8), checked as scan_string checks it, in one pass: the
    payloads of a capture are escape-dense (every quote of a JSON message is escaped).
    -1 bad string (out unchanged), -2 out of memory."""
    cdef const uint8_t* p = c.pos + 1
    cdef const uint8_t* e = c.end
    cdef uint8_t* o
    cdef uint8_t ch
    cdef uint32_t cp
    cdef int n
    cdef unsigned int m16
    cdef uint64_t m
    # unescaping never makes the text longer; the 16 spare bytes take the whole-word stores below
    if buf_reserve(out, (e - p) + 16) < 0:
        return -2
    o = out.data + out.len
    while True:
        if TF_SIMD16:
            while e - p >= 16:
                memcpy(o, p, 16)
                m16 = tf_special16_text(p)
                if m16:
                    m16 = __builtin_ctz(m16)
                    p += m16
                    o += m16
                    break
                p += 16
                o += 16
        else:
            while e - p >= 8:
                memcpy(o, p, 8)
                m = _special8_text(load_le64(p))
                if m:
                    m = __builtin_ctzll(m) >> 3     # the lowest flag is at or before the first hit
                    p += m
                    o += m
                    break
                p += 8
                o += 8
        while p < e and p[0] != 34 and p[0] != 92 and p[0] >= 0x20:
            o[0] = p[0]
            o += 1
            p += 1
        if p >= e:
            c.pos = p
            return fail(err, c, "malformed JSON: unterminated string")
        ch = p[0]
        if ch == 34:
            break
        if ch < 0x20:
            c.pos = p
            return fail(err, c, "malformed JSON: control character in string")
        if p + 1 >= e:
            c.pos = p
            return fail(err, c, "malformed JSON: unterminated string")
        ch = p[1]
        if ch == 117:
            n = u_escape(c, p, e, &cp, err)
            if n < 0:
                return n
            p += n
            o += utf8_put(o, cp)
            continue
        if ch == 34 or ch == 92 or ch == 47:
            o[0] = ch
        elif ch == 98:
            o[0] = 8
        elif ch == 102:
            o[0] = 12
        elif ch == 110:
            o[0] = 10
        elif ch == 114:
            o[0] = 13
        elif ch == 116:
            o[0] = 9
        else:
            c.pos = p
            return fail(err, c, "malformed JSON: invalid escape")
        o += 1
        p += 2
    out.len = o - out.data
    c.pos = p + 1
    return 0


cdef int _cap_number(Cur* c, Span* s, Err* err, Buf* scratch) noexcept nogil:
    """A number orjson takes: an integer of up to 308 digits is finite; anything else is read as
    the double orjson would make of it, which must not be infinite."""
    cdef const uint8_t* at = c.pos
    cdef double d
    cdef int rc
    if scan_number(c, s, err) < 0:
        return -1
    if s.kind == J_INT and s.n - s.neg <= 308:
        return 0
    rc = parse_double(s.p, s.n, &d, scratch)
    if rc == RC_NO_MEMORY:
        return rc
    if rc < 0:
        c.pos = at
        return fail(err, c, "malformed JSON: number is infinite as a double")
    return 0


cdef int _cap_scalar(Cur* c, Span* s, Err* err, Buf* scratch) noexcept nogil:
    cdef uint8_t ch = c.pos[0]
    if ch == 45 or is_digit(ch):
        return _cap_number(c, s, err, scratch)
    return scan_scalar(c, s, err)


cdef int _cap_value(Cur* c, Span* s, int depth, Err* err, Buf* scratch) noexcept nogil:
    if c.pos >= c.end:
        return fail(err, c, "malformed JSON: unexpected end of data")
    cdef uint8_t ch = c.pos[0]
    if ch == 123 or ch == 91:
        s.kind = J_OBJ if ch == 123 else J_ARR
        return skip_container(c, depth, err, scratch)
    return _cap_scalar(c, s, err, scratch)


cdef int _cap_int(const Span* s, int64_t lo, uint64_t hi, int64_t* out) noexcept nogil:
    cdef IntVal v
    if s.kind != J_INT or parse_int_text(s.p, s.n, &v) < 0 or not int_in_range(&v, lo, hi):
        return -1
    out[0] = int_value(&v)
    return 0


# What is wrong with a line: the twin's words exactly (capture.py, _record).
cdef const char* CAP_MALFORMED = b"malformed JSON"


cdef int _cap_line(Cur* c, int64_t lineno, CapCols* o, Err* err) noexcept nogil:
    """One stripped, non-blank line → one row of `o`; -1 with err.reason set, -2 out of memory.
    Key and payload strings are written straight into their columns; a repeated member
    replaces what an earlier one wrote (the last one counts, as in a dict)."""
    cdef Span found[5]
    cdef int have[5]
    cdef Span key, val
    cdef int k, r, v_at
    cdef int64_t offset
    cdef int32_t partition
    cdef Py_ssize_t key_start = o.keys.data.len, value_start = o.values.data.len
    memset(have, 0, sizeof(have))
    if c.pos[0] != 123:
        r = _cap_value(c, &val, 1, err, &o.scratch)
        if r == -2:
            return -2
        if r < 0 or doc_end(c, err) < 0:
            return fail(err, c, CAP_MALFORMED)
        return fail(err, c, b"not a JSON object")
    r = obj_open(c, err)
    while r == 0:
        if obj_key(c, &key, err) < 0:
            return fail(err, c, CAP_MALFORMED)
        k = key_id(&key, CAP_NAMES, CAP_LENS, CAP_FIELDS)
        if k == CAP_VALUE and have[CAP_PAYLOAD]:
            k = -1                          # "payload" wins over "value" wherever it stands
        if k == CAP_KEY:
            o.keys.data.len = key_start
        elif k == CAP_PAYLOAD or k == CAP_VALUE:
            o.values.data.len = value_start
        if (k == CAP_KEY or k == CAP_PAYLOAD or k == CAP_VALUE) and c.pos[0] == 34:
            r = _cap_string_into(c, &o.keys.data if k == CAP_KEY else &o.values.data, err)
            val.kind = J_STR
        else:
            r = _cap_value(c, &val, 2, err, &o.scratch)
        if r == -2:
            return -2
        if r < 0:
            return fail(err, c, CAP_MALFORMED)
        if k >= 0:
            found[k] = val
            have[k] = 1
        r = obj_more(c, err)
    if r < 0 or doc_end(c, err) < 0:
        return fail(err, c, CAP_MALFORMED)
    # the members, checked in the twin's order
    if have[CAP_KEY] and found[CAP_KEY].kind != J_NULL and found[CAP_KEY].kind != J_STR:
        return fail(err, c, b"key is not a string or null")
    v_at = CAP_PAYLOAD if have[CAP_PAYLOAD] else CAP_VALUE if have[CAP_VALUE] else -1
    if v_at >= 0 and found[v_at].kind != J_NULL and found[v_at].kind != J_STR:
        if v_at == CAP_PAYLOAD:
            return fail(err, c, b"payload is not a string or null")
        return fail(err, c, b"value is not a string or null")
    partition = 0
    if have[CAP_PARTITION]:
        if _cap_int(&found[CAP_PARTITION], -2147483648LL, 2147483647ULL, &offset) < 0:
            return fail(err, c, b"partition is not a 32-bit integer")
        partition = <int32_t>offset
    offset = lineno - 1
    if have[CAP_OFFSET] and _cap_int(&found[CAP_OFFSET], -9223372036854775807LL - 1,
                                     9223372036854775807ULL, &offset) < 0:
        return fail(err, c, b"offset is not a 64-bit integer")
    if _big_close(&o.keys, have[CAP_KEY] and found[CAP_KEY].kind == J_STR) < 0 \
            or _big_close(&o.values, v_at >= 0 and found[v_at].kind == J_STR) < 0 \
            or buf_append(&o.partitions, &partition, 4) < 0 or buf_append(&o.offsets, &offset, 8) < 0:
        return -2
    o.rows += 1
    return 0


cdef int _cap_block(const uint8_t* p, Py_ssize_t n, int64_t first_lineno, CapCols* o,
                    Err* err) noexcept nogil:
    """Every line of the block; 0, -1 bad line (err.msg its number), -2 out of memory."""
    cdef const uint8_t* end = p + n
    cdef const uint8_t* nl
    cdef const uint8_t* a
    cdef const uint8_t* b
    cdef int64_t lineno = first_lineno
    cdef int64_t zero = 0
    cdef Cur c
    cdef int r
    if buf_append(&o.keys.offsets, &zero, 8) < 0 or buf_append(&o.values.offsets, &zero, 8) < 0 \
            or buf_reserve(&o.values.data, n) < 0:     # the payloads are most of a block
        return -2
    while p < end:
        nl = <const uint8_t*>memchr(p, 10, end - p)
        if nl == NULL:
            nl = end
        a = p
        b = nl
        while a < b and _cap_is_space(a[0]):
            a += 1
        while b > a and _cap_is_space((b - 1)[0]):
            b -= 1
        if a < b:
            c.start = a
            c.pos = a
            c.end = b
            r = _cap_line(&c, lineno, o, err)
            if r < 0:
                if r == -1:
                    err.msg = lineno
                return r
        p = nl + 1
        lineno += 1
    return 0


cdef object _big_to_array(BigVarCol* c, Py_ssize_t rows):
    validity = take_validity(&c.valid)
    offsets = take_buffer(&c.offsets)
    data = take_buffer(&c.data)
    return pa.Array.from_buffers(pa.large_binary(), rows, [validity, offsets, data],
                                 null_count=c.valid.nulls)


def parse_capture_block(block, Py_ssize_t first_lineno, str path):
    """The kcat -J lines of `block` (whole lines; the first is line `first_lineno` of `path`) as
    Arrow arrays (keys, values: large_binary; partitions: int32; offsets: int64).  Parsed with the
    GIL released; a bad line raises ValueError ``path:lineno: not a kcat -J record (why)``."""
    cdef const uint8_t[::1] view = block
    cdef const uint8_t* p = &view[0] if view.shape[0] else <const uint8_t*>b""
    cdef Py_ssize_t n = view.shape[0]
    cdef CapCols o
    cdef Err err
    cdef int rc
    cdef Py_ssize_t nulls
    memset(&o, 0, sizeof(CapCols))
    memset(&err, 0, sizeof(Err))
    # The payloads are most of a block.  Their buffer comes from the output pool (with the GIL,
    # which the pool needs), where an earlier block's went when its arrays were dropped: a fresh
    # one is mapped and zeroed by the kernel page by page as it fills (~1,000 page faults per
    # 4 MiB block).  A new one is a sixteenth larger, so that the next blocks, a line longer or
    # shorter, fit in it.
    if buf_reserve_fresh(&o.values.data, n, NULL, -1, n + n // 16) < 0:
        no_memory(f"the capture block at line {first_lineno} of {path}")
    with nogil:
        rc = _cap_block(p, n, first_lineno, &o, &err)
    try:
        if rc == -1:
            raise ValueError(f"{path}:{err.msg}: not a kcat -J record "
                             f"({err.reason.decode('utf-8', 'replace')})")
        if rc < 0:
            no_memory(f"the capture block at line {first_lineno} of {path}")
        keys = _big_to_array(&o.keys, o.rows)
        values = _big_to_array(&o.values, o.rows)
        parts = pa.Array.from_buffers(pa.int32(), o.rows, [None, take_buffer(&o.partitions)])
        offs = pa.Array.from_buffers(pa.int64(), o.rows, [None, take_buffer(&o.offsets)])
        return keys, values, parts, offs
    finally:
        _cap_free(&o)


def capture_count_lines(block):
    """Line ends in `block` (memchr, without the GIL): the reader numbers its blocks' lines."""
    cdef const uint8_t[::1] view = block
    cdef Py_ssize_t n = view.shape[0], count = 0
    cdef const uint8_t* p
    cdef const uint8_t* end
    if n == 0:
        return 0
    p = &view[0]
    end = p + n
    with nogil:
        while p < end:
            p = <const uint8_t*>memchr(p, 10, end - p)
            if p == NULL:
                break
            count += 1
            p += 1
    return count
