# Mirrors ticdc_fast/_constants.py (tests/test_constants.py checks they agree).

cdef enum:
    MSG_ROW = 1
    MSG_DDL = 2
    MSG_RESOLVED = 3

cdef enum:
    OP_INSERT = 0
    OP_UPDATE = 1
    OP_DELETE = 2
    OP_DDL = 3
    OP_RESOLVED = 4

cdef enum:
    FLAG_BINARY = 1
    FLAG_UNSIGNED = 128

cdef enum:
    K_INT = 1
    K_UINT = 2
    K_FLOAT32 = 3
    K_FLOAT64 = 4
    K_DECIMAL = 5
    K_DATE = 6
    K_DATETIME = 7
    K_TIMESTAMP = 8
    K_TIME = 9
    K_TEXT = 10
    K_BLOB = 11
    K_JSONDOC = 12
    K_NULL = 13
    K_ENUM = 14

cdef enum:
    W_BOOL = 1
    W_INT8 = 2
    W_INT16 = 3
    W_INT32 = 4
    W_INT64 = 5
    W_UINT8 = 6
    W_UINT16 = 7
    W_UINT32 = 8
    W_UINT64 = 9
    W_FLOAT32 = 10
    W_FLOAT64 = 11
    W_DECIMAL128 = 12
    W_DECIMAL256 = 13
    W_DATE32 = 14
    W_TIMESTAMP = 15
    W_DURATION = 16
    W_STRING = 17
    W_BINARY = 18

CONSTANTS = dict(
    MSG_ROW=MSG_ROW, MSG_DDL=MSG_DDL, MSG_RESOLVED=MSG_RESOLVED,
    OP_INSERT=OP_INSERT, OP_UPDATE=OP_UPDATE, OP_DELETE=OP_DELETE, OP_DDL=OP_DDL,
    OP_RESOLVED=OP_RESOLVED, FLAG_BINARY=FLAG_BINARY, FLAG_UNSIGNED=FLAG_UNSIGNED,
    K_INT=K_INT, K_UINT=K_UINT, K_FLOAT32=K_FLOAT32, K_FLOAT64=K_FLOAT64, K_DECIMAL=K_DECIMAL,
    K_DATE=K_DATE, K_DATETIME=K_DATETIME, K_TIMESTAMP=K_TIMESTAMP, K_TIME=K_TIME, K_TEXT=K_TEXT,
    K_BLOB=K_BLOB, K_JSONDOC=K_JSONDOC, K_NULL=K_NULL, K_ENUM=K_ENUM,
    W_BOOL=W_BOOL, W_INT8=W_INT8, W_INT16=W_INT16, W_INT32=W_INT32, W_INT64=W_INT64,
    W_UINT8=W_UINT8, W_UINT16=W_UINT16, W_UINT32=W_UINT32, W_UINT64=W_UINT64,
    W_FLOAT32=W_FLOAT32, W_FLOAT64=W_FLOAT64, W_DECIMAL128=W_DECIMAL128,
    W_DECIMAL256=W_DECIMAL256, W_DATE32=W_DATE32, W_TIMESTAMP=W_TIMESTAMP,
    W_DURATION=W_DURATION, W_STRING=W_STRING, W_BINARY=W_BINARY,
)

# type code -> kind (0 = unknown type code), filled from the Python table at import
cdef uint8_t TYPE_KIND[256]

cdef void _init_kinds() noexcept:
    cdef int i
    for i in range(256):
        TYPE_KIND[i] = 0

_init_kinds()
for _code, _kind in _C.TYPE_KIND.items():
    TYPE_KIND[_code] = _kind


cdef inline void int_range(int t, uint32_t f, int64_t* lo, uint64_t* hi) noexcept nogil:
    cdef int k = TYPE_KIND[t]
    cdef int u = (f & FLAG_UNSIGNED) != 0
    if k == K_UINT:
        lo[0] = 0
        hi[0] = 0xFFFFFFFFFFFFFFFFULL
    elif k == K_ENUM:
        lo[0] = 0
        hi[0] = 65535
    elif t == 1:
        lo[0] = 0 if u else -128
        hi[0] = 255 if u else 127
    elif t == 2:
        lo[0] = 0 if u else -32768
        hi[0] = 65535 if u else 32767
    elif t == 9:
        lo[0] = 0 if u else -8388608
        hi[0] = 16777215 if u else 8388607
    elif t == 3:
        lo[0] = 0 if u else -2147483648LL
        hi[0] = 4294967295ULL if u else 2147483647ULL
    elif t == 13:
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
