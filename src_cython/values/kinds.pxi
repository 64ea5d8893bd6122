# What the core derives from the shared constants (src_cython/_constants.pxi, generated from
# ticdc_fast/_constants.py): the type-code -> kind table and the integer ranges per type and writer.

# type code -> kind (0 = unknown type code), filled from the Python table at import
cdef uint8_t TYPE_KIND[TYPE_CODE_SLOTS]

cdef void _init_kinds() noexcept:
    cdef int i
    for i in range(TYPE_CODE_SLOTS):
        TYPE_KIND[i] = 0

_init_kinds()
for _code, _kind in _C.TYPE_KIND.items():
    TYPE_KIND[_code] = _kind


cdef inline bint is_character_text(int t, uint32_t f) noexcept nogil:
    """A character column (CHAR/VARCHAR/TEXT, not binary): its value's string is its text as it is."""
    return TYPE_KIND[t] == K_TEXT and not (f & FLAG_BINARY)


cdef inline void int_range(int t, uint32_t f, int64_t* lo, uint64_t* hi) noexcept nogil:
    cdef int k = TYPE_KIND[t]
    cdef int u = (f & FLAG_UNSIGNED) != 0
    if k == K_UINT:
        lo[0] = 0
        hi[0] = 0xFFFFFFFFFFFFFFFFULL
    elif k == K_ENUM:
        lo[0] = 0
        hi[0] = 65535
    elif t == T_TINY:
        lo[0] = 0 if u else -128
        hi[0] = 255 if u else 127
    elif t == T_SHORT:
        lo[0] = 0 if u else -32768
        hi[0] = 65535 if u else 32767
    elif t == T_INT24:
        lo[0] = 0 if u else -8388608
        hi[0] = 16777215 if u else 8388607
    elif t == T_LONG:
        lo[0] = 0 if u else -2147483648LL
        hi[0] = 4294967295ULL if u else 2147483647ULL
    elif t == T_YEAR:
        lo[0] = 0
        hi[0] = 2155
    else:
        lo[0] = 0 if u else (-9223372036854775807LL - 1)
        hi[0] = 0xFFFFFFFFFFFFFFFFULL if u else 9223372036854775807ULL


cdef inline void writer_range(int w, int64_t* lo, uint64_t* hi) noexcept nogil:
    if w == W_INT8:
        lo[0] = -128; hi[0] = 127
    elif w == W_INT16:
        lo[0] = -32768; hi[0] = 32767
    elif w == W_INT32:
        lo[0] = -2147483648LL; hi[0] = 2147483647ULL
    elif w == W_INT64:
        lo[0] = -9223372036854775807LL - 1; hi[0] = 9223372036854775807ULL
    elif w == W_UINT8:
        lo[0] = 0; hi[0] = 255
    elif w == W_UINT16:
        lo[0] = 0; hi[0] = 65535
    elif w == W_UINT32:
        lo[0] = 0; hi[0] = 4294967295ULL
    else:
        lo[0] = 0; hi[0] = 0xFFFFFFFFFFFFFFFFULL


cdef inline int writer_width(int w) noexcept nogil:
    if w == W_BOOL:
        return 0
    if w == W_INT8 or w == W_UINT8:
        return 1
    if w == W_INT16 or w == W_UINT16:
        return 2
    if w == W_INT32 or w == W_UINT32 or w == W_FLOAT32 or w == W_DATE32:
        return 4
    if w == W_DECIMAL128:
        return 16
    if w == W_DECIMAL256:
        return 32
    return 8
