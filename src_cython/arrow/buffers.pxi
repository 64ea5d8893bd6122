# Column builders that own malloc'd memory and hand it to pyarrow without a copy.
# Reserve once per batch, append unchecked on the hot path, grow in a cold noinline path.  The structs: buffers.pxd.

cdef extern from *:
    """
    static Py_ssize_t tf_grow_count = 0;
    static inline void tf_count_growth(void) { __atomic_fetch_add(&tf_grow_count, 1, __ATOMIC_RELAXED); }
    static inline Py_ssize_t tf_growths(void) { return __atomic_load_n(&tf_grow_count, __ATOMIC_RELAXED); }
    """
    void tf_count_growth() nogil
    Py_ssize_t tf_growths() nogil


def _builder_growths():
    """How many times a buffer outgrew its reserve, to a pooled size (over 4 KiB), since the
    module was loaded (test hook: a batch like the last one should need no such growth)."""
    return tf_growths()


cdef int buf_grow(Buf* b, Py_ssize_t need) noexcept nogil:
    cdef Py_ssize_t cap = b.cap * 2
    if cap < need:
        cap = need
    if cap < 64:
        cap = 64
    if cap > 4096 and b.cap > 0:
        tf_count_growth()
    cdef uint8_t* p = NULL if alloc_refused() else <uint8_t*>realloc(b.data, cap)
    if p == NULL:
        note_failed_alloc(cap)
        return -1  # the old block stays valid and owned
    b.data = p
    b.cap = cap
    return 0


cdef inline int buf_reserve(Buf* b, Py_ssize_t extra) noexcept nogil:
    if b.len + extra > b.cap:
        return buf_grow(b, b.len + extra)
    return 0


# Names, operation codes and rendered numbers are short: up to 32 bytes they are copied inline as
# overlapping words, where libc's memcpy costs a call and a size dispatch (8 % of Avro generic).
# Only for such appends, and for the one text append of a column value (PlanCore._push_str: most
# values are short there, +2-3 % on generic JSON output); inlined into every append, the copy
# measured slower on long text.
# Text values of 33-256 bytes (TEXT, long VARCHAR) go 16 bytes a step: a memcpy of unknown size
# written here is expanded by the profile-guided build into `rep movsq`, whose start-up cost was
# 3.6 % of the Avro protocol's typed decode.  Longer ones call libc through a pointer it cannot
# expand.
cdef extern from *:
    """
    #include <string.h>
    #include <stdint.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    static void* (*volatile tf_memcpy_call)(void*, const void*, size_t) = memcpy;
    static inline void tf_copy_medium(unsigned char* d, const unsigned char* s, size_t n) {
    #if defined(__SSE2__)
        if (n <= 256) {
            size_t i = 0;
            do {
                _mm_storeu_si128((__m128i*)(d + i), _mm_loadu_si128((const __m128i*)(s + i)));
                i += 16;
            } while (i + 16 < n);
            _mm_storeu_si128((__m128i*)(d + n - 16), _mm_loadu_si128((const __m128i*)(s + n - 16)));
            return;
        }
    #endif
        tf_memcpy_call(d, s, n);
    }
    static inline void tf_copy_short(unsigned char* d, const unsigned char* s, size_t n) {
        uint64_t a, b, c, e;
        uint32_t x, y;
        if (n >= 16) {
            if (n > 32) { tf_copy_medium(d, s, n); return; }
            memcpy(&a, s, 8); memcpy(&b, s + 8, 8);
            memcpy(&c, s + n - 16, 8); memcpy(&e, s + n - 8, 8);
            memcpy(d, &a, 8); memcpy(d + 8, &b, 8);
            memcpy(d + n - 16, &c, 8); memcpy(d + n - 8, &e, 8);
        } else if (n >= 8) {
            memcpy(&a, s, 8); memcpy(&b, s + n - 8, 8);
            memcpy(d, &a, 8); memcpy(d + n - 8, &b, 8);
        } else if (n >= 4) {
            memcpy(&x, s, 4); memcpy(&y, s + n - 4, 4);
            memcpy(d, &x, 4); memcpy(d + n - 4, &y, 4);
        } else if (n > 0) {
            unsigned char first = s[0], mid = s[n / 2], last = s[n - 1];
            d[0] = first; d[n / 2] = mid; d[n - 1] = last;
        }
    }
    """
    void tf_copy_short(uint8_t* d, const uint8_t* s, size_t n) nogil


cdef inline int buf_append(Buf* b, const void* src, Py_ssize_t n) noexcept nogil:
    if n <= 0:       # memcpy with a NULL source or destination is undefined even for 0 bytes
        return 0
    if b.len + n > b.cap:
        if buf_grow(b, b.len + n) < 0:
            return -1
    memcpy(b.data + b.len, src, n)
    b.len += n
    return 0


cdef inline int buf_append_short(Buf* b, const void* src, Py_ssize_t n) noexcept nogil:
    """buf_append for bytes that are usually short (see tf_copy_short)."""
    if n <= 0:
        return 0
    if b.len + n > b.cap:
        if buf_grow(b, b.len + n) < 0:
            return -1
    tf_copy_short(b.data + b.len, <const uint8_t*>src, n)
    b.len += n
    return 0


cdef inline int buf_push_byte(Buf* b, uint8_t v) noexcept nogil:
    if b.len + 1 > b.cap:
        if buf_grow(b, b.len + 1) < 0:
            return -1
    b.data[b.len] = v
    b.len += 1
    return 0


cdef enum:
    POOL_BUSY = 3
    POOL_SLOTS = 256

cdef uint8_t* pool_ptr[256]
cdef Py_ssize_t pool_cap[256]
cdef PoolOwner* pool_owner[256]     # NULL: anyone's
cdef int pool_col[256]
cdef int pool_n = 0
cdef Py_ssize_t pool_bytes = 0
cdef Py_ssize_t pool_limit = 256 << 20
cdef Py_ssize_t pool_clock = 0          # column-set reserves so far


cdef PoolOwner* pool_owner_new() noexcept nogil:
    cdef PoolOwner* o = <PoolOwner*>malloc(sizeof(PoolOwner))
    if o != NULL:
        o.alive = 1
        o.refs = 1
        o.last = 0
    return o


cdef void pool_owner_drop(PoolOwner* o) noexcept nogil:
    o.refs -= 1
    if o.refs == 0:
        free(o)


cdef void pool_owner_end(PoolOwner* o) noexcept nogil:
    """The column set is gone: its pooled blocks become anyone's."""
    cdef int k
    if o == NULL:
        return
    o.alive = 0
    for k in range(pool_n):
        if pool_owner[k] == o:
            pool_owner[k] = NULL
    pool_owner_drop(o)


cdef int buf_reserve_fresh(Buf* b, Py_ssize_t need, PoolOwner* owner, int col,
                           Py_ssize_t fresh_cap=0) noexcept nogil:
    """Reserve for a builder that owns no block yet: its own column's pooled block (column `col`
    of `owner`) if there is one, else the smallest that fits of those no busy column set owns,
    else a new block of max(need, fresh_cap) bytes."""
    global pool_n, pool_bytes
    cdef int k, best = -1, own = -1
    if b.data != NULL or need <= 4096:
        return buf_reserve(b, need)
    for k in range(pool_n):
        if pool_owner[k] == NULL or pool_clock - pool_owner[k].last > POOL_BUSY:
            if need <= pool_cap[k] and (best < 0 or pool_cap[k] < pool_cap[best]):
                best = k
        if pool_owner[k] == owner and pool_col[k] == col and owner != NULL:
            # its own block, if it holds what the last batch wrote (the reserve asks an eighth
            # more, and appends grow a block that runs out)
            if need - need // 8 <= pool_cap[k] and (own < 0 or pool_cap[k] < pool_cap[own]):
                own = k
    if own >= 0:
        best = own
    if best < 0:
        return buf_reserve(b, max(need, fresh_cap))
    b.data = pool_ptr[best]
    b.cap = pool_cap[best]
    b.len = 0
    pool_bytes -= pool_cap[best]
    pool_n -= 1
    pool_ptr[best] = pool_ptr[pool_n]
    pool_cap[best] = pool_cap[pool_n]
    pool_owner[best] = pool_owner[pool_n]
    pool_col[best] = pool_col[pool_n]
    return 0


cdef void pool_give(uint8_t* p, Py_ssize_t cap, PoolOwner* owner, int col) noexcept:
    global pool_n, pool_bytes
    if cap > 4096 and pool_n < POOL_SLOTS and pool_bytes + cap <= pool_limit:
        pool_ptr[pool_n] = p
        pool_cap[pool_n] = cap
        pool_owner[pool_n] = owner if owner != NULL and owner.alive else NULL
        pool_col[pool_n] = col
        pool_n += 1
        pool_bytes += cap
        return
    free(p)


def set_buffer_pool_limit(Py_ssize_t nbytes):
    """Bytes of released output blocks kept for reuse (default 256 MiB; 0 frees them all and
    disables the pool).  Returns the previous limit."""
    global pool_limit, pool_n, pool_bytes
    cdef Py_ssize_t old = pool_limit
    pool_limit = nbytes if nbytes > 0 else 0
    while pool_n > 0 and pool_bytes > pool_limit:
        pool_n -= 1
        pool_bytes -= pool_cap[pool_n]
        free(pool_ptr[pool_n])
    return old


def _buffer_pool_blocks():
    """[(capacity, owner)] of the pooled blocks, owner an id of the live column set that wrote
    the block, 0 for anyone's (test hook)."""
    return [(pool_cap[k], <uintptr_t>pool_owner[k]) for k in range(pool_n)]


def buffer_pool_bytes():
    """Bytes held by the pool right now."""
    return pool_bytes


cdef inline void buf_free(Buf* b) noexcept nogil:
    free(b.data)
    b.data = NULL
    b.len = 0
    b.cap = 0


cdef inline int bit_put(Buf* b, Py_ssize_t n, bint bit) noexcept nogil:
    """Bit n (LSB first) of the bitmap in b, its first n bits written: a byte more every 8."""
    if (n & 7) == 0:
        if buf_push_byte(b, 0) < 0:
            return -1
    if bit:
        b.data[n >> 3] |= <uint8_t>(1 << (n & 7))
    return 0


cdef inline int bits_push(Bits* v, bint valid) noexcept nogil:
    # the bitmap exists only once a null arrived: all-valid columns (most) never write bits
    if v.nulls == 0:
        if valid:
            v.n += 1
            return 0
        if _bits_materialise(v) < 0:
            return -1
    if bit_put(&v.b, v.n, valid) < 0:
        return -1
    if not valid:
        v.nulls += 1
    v.n += 1
    return 0


cdef int _bits_materialise(Bits* v) noexcept nogil:
    """At the first null: the bits of every row before it, all set."""
    cdef Py_ssize_t full = (v.n + 7) // 8
    if buf_reserve(&v.b, max(full, (v.rows_hint + 7) // 8) + 64) < 0:
        return -1
    memset(v.b.data, 0xFF, full)
    if v.n & 7:
        v.b.data[full - 1] = <uint8_t>((1 << (v.n & 7)) - 1)
    v.b.len = full
    return 0


cdef int var_init(VarCol* c, Py_ssize_t rows, Py_ssize_t bytes_hint, PoolOwner* owner, int col) noexcept nogil:
    if buf_reserve_fresh(&c.offsets, (rows + 1) * 4, owner, col) < 0 \
            or buf_reserve_fresh(&c.data, bytes_hint, owner, col) < 0:
        return -1
    (<int32_t*>c.offsets.data)[0] = 0
    c.offsets.len = 4
    c.lazy = 0
    return 0


cdef int _null_bits(Bits* v, Py_ssize_t k) noexcept nogil:
    """The bitmap of k leading null rows (the Bits already count them)."""
    cdef Py_ssize_t full = (k + 7) // 8
    if buf_reserve(&v.b, max(full, (v.rows_hint + 7) // 8) + 64) < 0:
        return -1
    memset(v.b.data, 0, full)
    v.b.len = full
    return 0


cdef int _var_unlazy(VarCol* c) noexcept nogil:
    cdef Py_ssize_t k = c.lazy
    if buf_reserve(&c.offsets, k * 4 + 4) < 0 or _null_bits(&c.valid, k) < 0:
        return -1
    memset(c.offsets.data + c.offsets.len, 0, k * 4)   # no bytes before the first value
    c.offsets.len += k * 4
    c.lazy = 0
    return 0


cdef enum:
    VAR_TOO_LARGE = -2     # var_close_row: the column's data passed the int32 offsets' 2 GiB


cdef inline int var_close_row(VarCol* c, bint valid) noexcept nogil:
    """Finish a value whose bytes were already appended to c.data: 0, -1 out of memory, or
    VAR_TOO_LARGE."""
    if not valid and c.lazy == c.valid.n and c.data.len == 0:
        c.lazy += 1
        c.valid.n += 1
        c.valid.nulls += 1
        return 0
    if c.lazy and _var_unlazy(c) < 0:
        return -1
    if c.data.len > 0x7FFFFFFF:
        return VAR_TOO_LARGE
    cdef int32_t off = <int32_t>c.data.len
    if buf_append(&c.offsets, &off, 4) < 0:
        return -1
    return bits_push(&c.valid, valid)


cdef inline int var_push(VarCol* c, const void* src, Py_ssize_t n) noexcept nogil:
    """One value that is usually short (a name, a code); text values are appended, then closed."""
    if buf_append_short(&c.data, src, n) < 0:
        return -1
    return var_close_row(c, 1)


cdef inline int var_push_null(VarCol* c) noexcept nogil:
    return var_close_row(c, 0)


cdef int var_push_run(VarCol* c, const uint8_t* src, const int32_t* ends, Py_ssize_t k) noexcept nogil:
    """k valid values at once, value i the bytes src[ends[i - 1]:ends[i]] (ends[-1] taken as 0):
    one copy of their bytes and one offset each, for values known before the row (the keys of
    a map whose names a plan fixed).  0, -1 out of memory, or VAR_TOO_LARGE."""
    cdef Py_ssize_t base = c.data.len, i
    cdef int32_t* offs
    if k <= 0:
        return 0
    if c.lazy and _var_unlazy(c) < 0:
        return -1
    if base + ends[k - 1] > 0x7FFFFFFF:
        return VAR_TOO_LARGE
    if buf_append(&c.data, src, ends[k - 1]) < 0 or buf_reserve(&c.offsets, k * 4) < 0:
        return -1
    offs = <int32_t*>(c.offsets.data + c.offsets.len)
    for i in range(k):
        offs[i] = <int32_t>(base + ends[i])
    c.offsets.len += k * 4
    if c.valid.nulls == 0:           # no bitmap yet (bits_push of a valid value only counts it)
        c.valid.n += k
        return 0
    for i in range(k):
        if bits_push(&c.valid, 1) < 0:
            return -1
    return 0


cdef void var_free(VarCol* c) noexcept nogil:
    buf_free(&c.offsets)
    buf_free(&c.data)
    buf_free(&c.valid.b)
    c.valid.n = 0
    c.valid.nulls = 0
    c.lazy = 0


cdef int fix_init(FixCol* c, int width, Py_ssize_t rows, PoolOwner* owner, int col) noexcept nogil:
    c.width = width
    c.lazy = 0
    return buf_reserve_fresh(&c.data, (rows * width) if width else (rows // 8 + 1), owner, col)


cdef inline int fix_push(FixCol* c, const void* src, int n) noexcept nogil:
    """One value of n bytes (a constant where this is inlined: every caller pushes a typed
    variable), written with a single move when it is the column's width and room is reserved;
    otherwise _fix_push_any copies the column's width from src."""
    if c.width == n and c.data.len + n <= c.data.cap and c.lazy == 0:
        memcpy(c.data.data + c.data.len, src, n)
        c.data.len += n
        c.n += 1
        return bits_push(&c.valid, 1)
    return _fix_push_any(c, src)


cdef int _fix_unlazy(FixCol* c) noexcept nogil:
    cdef Py_ssize_t k = c.lazy
    cdef Py_ssize_t nb = k * c.width if c.width else (k + 7) // 8
    if buf_reserve(&c.data, nb + 64) < 0 or _null_bits(&c.valid, k) < 0:
        return -1
    memset(c.data.data, 0, nb)
    c.data.len = nb
    c.lazy = 0
    return 0


cdef int _fix_push_any(FixCol* c, const void* src) noexcept nogil:
    cdef int w = c.width
    cdef uint8_t* dst
    if c.lazy and _fix_unlazy(c) < 0:
        return -1
    if c.data.len + w > c.data.cap:
        if buf_grow(&c.data, c.data.len + w) < 0:
            return -1
    dst = c.data.data + c.data.len
    # constant-size copies compile to single moves (a libc call per value otherwise)
    if w == 4:
        memcpy(dst, src, 4)
    elif w == 16:
        memcpy(dst, src, 16)
    elif w == 8:
        memcpy(dst, src, 8)
    elif w == 2:
        memcpy(dst, src, 2)
    elif w == 1:
        memcpy(dst, src, 1)
    else:
        memcpy(dst, src, w)
    c.data.len += w
    c.n += 1
    return bits_push(&c.valid, 1)


cdef inline int fix_push_int(FixCol* c, int64_t v, int width) noexcept nogil:
    """An integer already in its column's range, as `width` bytes of two's complement (the
    column's width: 1, 2, 4 or 8)."""
    cdef int8_t i8
    cdef int16_t i16
    cdef int32_t i32
    if width == 8:
        return fix_push(c, &v, sizeof(v))
    if width == 4:
        i32 = <int32_t>v
        return fix_push(c, &i32, sizeof(i32))
    if width == 2:
        i16 = <int16_t>v
        return fix_push(c, &i16, sizeof(i16))
    i8 = <int8_t>v
    return fix_push(c, &i8, sizeof(i8))


cdef inline int fix_push_bool(FixCol* c, bint v) noexcept nogil:
    if c.lazy and _fix_unlazy(c) < 0:
        return -1
    if bit_put(&c.data, c.n, v) < 0:
        return -1
    c.n += 1
    return bits_push(&c.valid, 1)


cdef inline int fix_push_null(FixCol* c) noexcept nogil:
    cdef uint8_t zeros[32]
    if c.lazy == c.n:
        c.lazy += 1
        c.n += 1
        c.valid.n += 1
        c.valid.nulls += 1
        return 0
    if c.width == 0:
        if (c.n & 7) == 0:
            if buf_push_byte(&c.data, 0) < 0:
                return -1
    else:
        memset(zeros, 0, 32)
        if buf_append(&c.data, zeros, c.width) < 0:
            return -1
    c.n += 1
    return bits_push(&c.valid, 0)


cdef void fix_free(FixCol* c) noexcept nogil:
    buf_free(&c.data)
    buf_free(&c.valid.b)
    c.valid.n = 0
    c.valid.nulls = 0
    c.n = 0
    c.lazy = 0


# ------------------------------------------------------------------ export to pyarrow
cdef class _Owned:
    """Owns one malloc'd block that a pyarrow buffer points into; back to the pool when released."""
    cdef void* ptr
    cdef Py_ssize_t cap
    cdef PoolOwner* owner        # the column set it was written for (a reference), or NULL
    cdef int col

    def __dealloc__(self):
        pool_give(<uint8_t*>self.ptr, self.cap, self.owner, self.col)
        if self.owner != NULL:
            pool_owner_drop(self.owner)


cdef object take_buffer(Buf* b, PoolOwner* pool_owner_of=NULL, int col=-1):
    """Move the block out of `b` into a pyarrow Buffer (zero copy); `b` is left empty.  The block
    returns to the pool as column `col` of `pool_owner_of` (NULL: anyone's)."""
    cdef _Owned owner = _Owned.__new__(_Owned)
    cdef Py_ssize_t n = b.len
    if b.data == NULL:
        b.data = NULL if alloc_refused() else <uint8_t*>malloc(1)
        if b.data == NULL:
            no_memory("an empty output buffer")
        b.cap = 1
    owner.ptr = b.data
    owner.cap = b.cap
    owner.owner = pool_owner_of
    owner.col = col
    if pool_owner_of != NULL:
        pool_owner_of.refs += 1
    b.data = NULL
    b.len = 0
    b.cap = 0
    return pa.foreign_buffer(<uintptr_t>owner.ptr, n, base=owner)


cdef object take_validity(Bits* v, PoolOwner* pool_owner_of=NULL, int col=-1):
    if v.nulls == 0:
        buf_free(&v.b)
        return None
    return take_buffer(&v.b, pool_owner_of, col)
