# The protocol-neutral row image every protocol's parser fills (ColEntry per column of an
# image) and the small helpers every plan shares.

cdef struct ColEntry:
    Span name
    Span v
    int zone               # a TIMESTAMP value's own zone (simple protocol): its index in the
                           # core's named zone tables, -1 none
    int col                # its index in the image's source schema (Image.plan), if any
    int tgt                # its target when the parser knows it already (open: from the
                           # name-sequence memo), -2 unknown
    Py_ssize_t name_off    # unescaped name in the core's names when name.esc, else -1
    Py_ssize_t name_len
    uint64_t hash
    uint32_t f
    int t
    int has_t
    int bad                # open: a COL_* fault of this column (judged on its last copy; v.off
                           # then holds the fault's offset), 0 if fine


cdef struct Image:
    ColEntry* cols
    Py_ssize_t n
    Py_ssize_t cap
    int present
    int plan               # the compiled source schema (table/writer plan) ColEntry.col indexes,
                           # when the protocol has one


cdef int image_make_room(Image* img) noexcept nogil:
    """Room for one more column entry: 0, or RC_NO_MEMORY (the old entries stay)."""
    cdef Py_ssize_t cap = img.cap * 2 + 16
    cdef ColEntry* grown = NULL if alloc_refused() else <ColEntry*>realloc(img.cols, cap * sizeof(ColEntry))
    if grown == NULL:
        note_failed_alloc(cap * <Py_ssize_t>sizeof(ColEntry))
        return RC_NO_MEMORY
    img.cols = grown
    img.cap = cap
    return 0



cdef enum:
    IMG_U = 0
    IMG_P = 1
    IMG_D = 2



cdef inline int fail_at(Err* err, Py_ssize_t off, const char* reason) noexcept nogil:
    err.failed = 1
    err.offset = off
    strncpy(err.reason, reason, 255)
    err.reason[255] = 0
    return RC_FAILED


cdef extern from *:
    """
    #define TF_FNV_OFFSET_BASIS 1469598103934665603ULL
    #define TF_HASH_SEED 0xa0761d6478bd642fULL
    #define TF_HASH_K1 0xe7037ed1a0b428dbULL
    """
    const uint64_t FNV_OFFSET_BASIS "TF_FNV_OFFSET_BASIS"
    const uint64_t HASH_SEED "TF_HASH_SEED"
    const uint64_t HASH_K1 "TF_HASH_K1"


cdef inline uint64_t fnv1a_more(uint64_t h, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """FNV-1a state h carried over p[:n] (no finish: see hash_finish)."""
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h


cdef inline uint64_t hash_finish(uint64_t h) noexcept nogil:
    """The low k bits of an FNV-1a state depend on the low k bits of each byte only, and every
    table here is indexed by h & (capacity - 1): names that differ in high bits collided (the
    tables shop.events and shop.orders shared a name memo of 16).  Fold the high half in and mix."""
    h ^= h >> 32
    h *= 0x9E3779B97F4A7C15ULL
    return h ^ (h >> 29)


cdef inline uint64_t _mul_fold(uint64_t a, uint64_t b) noexcept nogil:
    """The 128-bit product's halves xor-ed: every bit of both inputs reaches the low bits."""
    cdef uint128 r = <uint128>a * b
    return <uint64_t>r ^ <uint64_t>(r >> 64)


cdef inline uint32_t _load32(const uint8_t* p) noexcept nogil:
    """4 bytes in the machine's order (a hash never leaves the process)."""
    cdef uint32_t v
    memcpy(&v, p, 4)
    return v


cdef inline uint64_t name_hash(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Hash of a name (column, target, table, zone), words at a time: a simple-protocol Avro
    map comes in Go map order, so every key of a row is looked up by hash, and the byte loop of
    FNV-1a (one dependent multiply per byte) was most of that.  Up to 16 bytes take two
    overlapping loads that stay inside p[:n]; longer names take 16 bytes a round."""
    cdef uint64_t a, b, h = HASH_SEED ^ <uint64_t>n
    cdef Py_ssize_t i = 0
    if n <= 16:
        if n >= 8:
            a = load_le64(p)
            b = load_le64(p + n - 8)
        elif n >= 4:
            a = _load32(p)
            b = _load32(p + n - 4)
        elif n > 0:
            a = (<uint64_t>p[0] << 16) | (<uint64_t>p[n >> 1] << 8) | p[n - 1]
            b = 0
        else:
            a = 0
            b = 0
    else:
        while n - i > 16:
            h = _mul_fold(load_le64(p + i) ^ HASH_K1, load_le64(p + i + 8) ^ h)
            i += 16
        a = load_le64(p + n - 16)
        b = load_le64(p + n - 8)
    return _mul_fold(HASH_K1 ^ <uint64_t>n, _mul_fold(a ^ HASH_K1, b ^ h))


cdef int _int_to_decimal128(const IntVal* iv, int precision, int scale, uint64_t* out) noexcept nogil:
    """An integer as decimal128(precision, scale) limbs when it fits; -1 otherwise (the text path
    words the error)."""
    cdef uint128 u
    if scale < 0 or scale > 38 or precision < 1 or precision > 38:
        return -1
    u = <uint128>iv.mag * POW10_128[scale]       # < 2^64 * 10^38 < 2^192: check before use
    if iv.mag != 0 and (u // POW10_128[scale] != iv.mag or u >= POW10_128[precision]):
        return -1
    if iv.neg:
        u = ~u + 1
    out[0] = <uint64_t>u
    out[1] = <uint64_t>(u >> 64)
    return 0


cdef int _parse_uint_digits(const uint8_t* p, Py_ssize_t n, IntVal* iv) noexcept nogil:
    cdef uint64_t v = 0, d
    cdef Py_ssize_t i
    for i in range(n):
        d = p[i] - 48
        if v > (0xFFFFFFFFFFFFFFFFULL - d) // 10:
            return -1
        v = v * 10 + d
    iv.mag = v
    iv.neg = 0
    return 0


cdef const char* OP_TEXT[6]
cdef int OP_LEN[6]
OP_TEXT[OP_INSERT] = b"INSERT"
OP_TEXT[OP_UPDATE] = b"UPDATE"
OP_TEXT[OP_DELETE] = b"DELETE"
OP_TEXT[OP_DDL] = b"DDL"
OP_TEXT[OP_RESOLVED] = b"RESOLVED"
OP_TEXT[OP_UPSERT] = b"UPSERT"
OP_LEN[OP_INSERT] = 6
OP_LEN[OP_UPDATE] = 6
OP_LEN[OP_DELETE] = 6
OP_LEN[OP_DDL] = 3
OP_LEN[OP_RESOLVED] = 8
OP_LEN[OP_UPSERT] = 6


cdef inline int _oom(Err* err) noexcept nogil:
    """An allocation failed: nothing is recorded in the Err (raise_decode_error then raises
    MemoryError)."""
    return RC_NO_MEMORY


cdef inline int _close(VarCol* out, bint valid, Err* err) noexcept nogil:
    """var_close_row with its failures as the Err contract has them."""
    return _var_result(var_close_row(out, valid), err)


cdef inline int _var_result(int r, Err* err) noexcept nogil:
    """A text builder's result (var_close_row, var_push_run) as the Err contract has it."""
    if r == 0:
        return 0
    if r == VAR_TOO_LARGE:
        err.failed = 1
        strncpy(err.reason, b"batch too large: a column exceeds 2 GiB, decode fewer messages at once", 255)
        return RC_FAILED
    return _oom(err)


cdef inline int _close_shortest(VarCol* out, const uint8_t* p, Py_ssize_t n, int kind, Buf* numtmp,
                                 int plain, Py_ssize_t off, Err* err) noexcept nogil:
    """Generic text of the number text p[:n] in a FLOAT (K_FLOAT32) or DOUBLE column: its
    canonical shortest form (format_shortest) as out's next value."""
    cdef char txt[400]
    cdef double x
    cdef int r = format_shortest(p, n, 32 if kind == K_FLOAT32 else 64, &x, txt, numtmp, plain)
    if r == RC_NO_MEMORY:
        return _oom(err)
    if r == NOT_FLOAT32:
        return fail_at(err, off, "float out of float32 range")
    if r < 0:
        return fail_at(err, off, "number out of range")
    if buf_append_short(&out.data, txt, r) < 0:
        return _oom(err)
    return _close(out, 1, err)


cdef inline int _close_integer_text(VarCol* out, const IntVal* iv, const uint8_t* p, Py_ssize_t n,
                                   Err* err) noexcept nogil:
    """Generic text of an integer whose text `p` parsed in range (parse_int_text): the grammar
    admits one text per value but "-0", so the text itself is the answer."""
    cdef int rc
    if iv.mag == 0:
        rc = buf_append(&out.data, b"0", 1)
    else:
        rc = buf_append_short(&out.data, p, n)
    if rc < 0:
        return _oom(err)
    return _close(out, 1, err)


cdef inline int _close_int_text(VarCol* out, int t, uint32_t f, const uint8_t* p, Py_ssize_t n,
                                Py_ssize_t off, const char* invalid, Err* err) noexcept nogil:
    """Generic text of the integer text p[:n] in a column of type t and flags f: `invalid` if it
    is no integer, "integer out of range" if it passes the column's range."""
    cdef IntVal iv
    cdef int64_t lo
    cdef uint64_t hi
    cdef int r
    int_range(t, f, &lo, &hi)
    r = parse_int_text(p, n, &iv)
    if r == -1:
        return fail_at(err, off, invalid)
    if r < 0 or not int_in_range(&iv, lo, hi):
        return fail_at(err, off, "integer out of range")
    return _close_integer_text(out, &iv, p, n, err)


cdef inline int _push_opt(FixCol* c, const void* v, int n, int has) noexcept nogil:
    if has:
        return fix_push(c, v, n)
    return fix_push_null(c)



cdef inline Py_ssize_t _hash_slot(uint64_t h, Py_ssize_t cap) noexcept nogil:
    """Home slot of a 64-bit hash in a power-of-two table, every bit mixed in (versions of one
    table differ only in their high bits)."""
    return <Py_ssize_t>(((h ^ (h >> 32)) * 0x9E3779B97F4A7C15ULL) >> 32) & (cap - 1)



# Values a parser writes out as text (Avro numbers for the generic map, simple Avro values) go
# to a scratch buffer that may move while the message is read: their spans hold an offset into
# it, marked in_scratch, and become pointers once the message is done.
cdef inline void span_in_scratch(Span* s, Py_ssize_t start, Py_ssize_t n) noexcept nogil:
    span_text(s, <const uint8_t*><uintptr_t>start, n, 1, 1)


cdef void fix_scratch_spans(Image* img, const uint8_t* base) noexcept nogil:
    cdef Py_ssize_t k
    if not img.present:
        return
    for k in range(img.n):
        if img.cols[k].v.in_scratch:
            img.cols[k].v.p = base + <uintptr_t>img.cols[k].v.p
            img.cols[k].v.in_scratch = 0


def _name_hash(const uint8_t[::1] name):
    """Test hook: the hash every name and table look-up table of the core indexes by."""
    return name_hash(&name[0] if name.shape[0] else NULL, name.shape[0])
