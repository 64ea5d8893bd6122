# One cursor over a Kafka message's key or value.  `start` is the message start, so the byte
# offset reported in errors is always `pos - start`; `end` is clamped to the event or value
# being read, and readers never look past it.  Cur, Err and the return codes: cursor.pxd.

cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define TF_FROM_LE64(v) __builtin_bswap64(v)
    #else
    #define TF_FROM_LE64(v) (v)
    #endif
    """
    uint64_t TF_FROM_LE64(uint64_t v) nogil


cdef inline uint64_t load_le64(const uint8_t* p) noexcept nogil:
    """8 bytes as a little-endian word (byte i in bits 8i..8i+7): the word-at-a-time readers
    find the first flagged byte with a count of trailing zeros, whatever the machine's order."""
    cdef uint64_t v
    memcpy(&v, p, 8)
    return TF_FROM_LE64(v)

cdef inline uint64_t has_byte8(uint64_t w, uint64_t pattern) noexcept nogil:
    """Non-zero if a byte of w equals the byte repeated in pattern; the lowest flagged byte is
    exact (higher flags can be false after a match)."""
    cdef uint64_t x = w ^ pattern
    return (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL


cdef inline uint64_t non_digit_bytes(uint64_t w) noexcept nogil:
    """Zero for eight ASCII digits; else the lowest non-zero byte is the first non-digit (a
    digit's high nibble is 3 and stays 3 after adding 6; a carry out of a byte comes only from a
    non-digit below it, which is flagged itself)."""
    return ((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) \
        ^ 0x3333333333333333ULL


cdef inline int fail(Err* err, const Cur* c, const char* reason) noexcept nogil:
    err.failed = 1
    err.offset = c.pos - c.start
    strncpy(err.reason, reason, 255)
    err.reason[255] = 0
    return RC_FAILED


cdef int fail_fmt(Err* err, const Cur* c, const char* fmt, long long a, long long b) noexcept nogil:
    err.failed = 1
    err.offset = c.pos - c.start
    snprintf(err.reason, 256, fmt, a, b)
    return RC_FAILED


cdef inline bint bytes_eq(const uint8_t* a, const uint8_t* b, Py_ssize_t n) noexcept nogil:
    """Equality of short byte strings (names, keys) without a libc call. The tail is compared
    as one word that overlaps the bytes already compared (names are mostly 5-20 bytes: a byte
    loop there cost more than the words)."""
    cdef uint64_t x, y
    cdef uint32_t u, v
    if n >= 8:
        while n > 8:
            memcpy(&x, a, 8)
            memcpy(&y, b, 8)
            if x != y:
                return 0
            a += 8
            b += 8
            n -= 8
        memcpy(&x, a + n - 8, 8)
        memcpy(&y, b + n - 8, 8)
        return x == y
    if n >= 4:
        memcpy(&u, a, 4)
        memcpy(&v, b, 4)
        if u != v:
            return 0
        memcpy(&u, a + n - 4, 4)
        memcpy(&v, b + n - 4, 4)
        return u == v
    if n == 0:
        return 1
    return a[0] == b[0] and a[n >> 1] == b[n >> 1] and a[n - 1] == b[n - 1]


def _bytes_eq(const uint8_t[::1] a, const uint8_t[::1] b):
    """Test hook: bytes_eq over two buffers of the same length."""
    if a.shape[0] != b.shape[0]:
        raise ValueError("lengths differ")
    if a.shape[0] == 0:
        return True
    return bool(bytes_eq(&a[0], &b[0], a.shape[0]))


cdef inline void set_column(Err* err, const uint8_t* name, Py_ssize_t n) noexcept nogil:
    if n > 255:
        n = 255
    if n > 0:
        memcpy(err.column, name, n)
    err.column_len = n
    err.has_column = 1


cdef int _fail_truncated(Err* err, const Cur* c, const char* what) noexcept nogil:
    err.failed = 1
    err.offset = c.pos - c.start
    snprintf(err.reason, 256, "truncated %s: %lld of 8 bytes", what, <long long>(c.end - c.pos))
    return RC_FAILED


cdef inline int read_u64be(Cur* c, uint64_t* out, Err* err, const char* what) noexcept nogil:
    cdef const uint8_t* p = c.pos
    if c.end - p < 8:
        return _fail_truncated(err, c, what)
    out[0] = ((<uint64_t>p[0] << 56) | (<uint64_t>p[1] << 48) | (<uint64_t>p[2] << 40)
              | (<uint64_t>p[3] << 32) | (<uint64_t>p[4] << 24) | (<uint64_t>p[5] << 16)
              | (<uint64_t>p[6] << 8) | <uint64_t>p[7])
    c.pos = p + 8
    return 0


cdef extern from *:
    """
    /* Size of the last allocation that failed on this thread (decoders run their loops without
       the GIL, in parallel): read once the GIL is back, to say what could not be allocated. */
    static _Thread_local Py_ssize_t ticdc_failed_alloc = 0;
    static inline void ticdc_note_failed_alloc(Py_ssize_t n) { ticdc_failed_alloc = n; }
    static inline Py_ssize_t ticdc_take_failed_alloc(void) {
        Py_ssize_t n = ticdc_failed_alloc;
        ticdc_failed_alloc = 0;
        return n;
    }
    """
    void note_failed_alloc "ticdc_note_failed_alloc"(Py_ssize_t n) noexcept nogil
    Py_ssize_t take_failed_alloc "ticdc_take_failed_alloc"() noexcept nogil


cdef extern from *:
    """
    /* Test hook (_fail_allocations_after): how many more allocations of the decode loops may
       succeed before every one is refused; -1 (the default) refuses none.  Checked only where an
       allocation is made (the builders' cold growth path), never per value. */
    static Py_ssize_t ticdc_alloc_budget = -1;
    static Py_ssize_t ticdc_alloc_refusals = 0;
    static inline int ticdc_alloc_refused(void) {
        if (__builtin_expect(ticdc_alloc_budget < 0, 1)) return 0;
        if (ticdc_alloc_budget == 0) { ticdc_alloc_refusals++; return 1; }
        ticdc_alloc_budget--;
        return 0;
    }
    """
    int alloc_refused "ticdc_alloc_refused"() noexcept nogil
    Py_ssize_t alloc_budget "ticdc_alloc_budget"
    Py_ssize_t alloc_refusals "ticdc_alloc_refusals"


def _fail_allocations_after(Py_ssize_t n):
    """Test hook: let the next `n` allocations of the decode loops succeed, then refuse every
    one as if memory ran out (n < 0: refuse none, the default).  Returns how many allocations
    were refused since the previous call."""
    global alloc_budget, alloc_refusals
    cdef Py_ssize_t refused = alloc_refusals
    alloc_budget = n if n >= 0 else -1
    alloc_refusals = 0
    return refused


cdef int no_memory(str what) except -1:
    """MemoryError naming what could not be allocated (and its size, when a builder recorded it)."""
    cdef Py_ssize_t n = take_failed_alloc()
    raise MemoryError(f"out of memory: could not allocate {what}" + (f" ({n} bytes)" if n > 0 else ""))


cdef int raise_decode_error(const Err* err, str protocol, object default_part) except -1:
    """The one exit of a failed message loop: DecodeError (message index, part, byte offset,
    column) for bad input, else MemoryError naming the batch whose memory ran out."""
    if not err.failed:
        return no_memory(f"the {protocol} batch's output at message {err.msg}")
    raise DecodeError(
        err.reason.decode("utf-8", "replace"), err.msg, err.offset,
        err.column[:err.column_len].decode("utf-8", "replace") if err.has_column else None,
        "key" if err.part == PART_KEY else "value" if err.part == PART_VALUE else default_part)
