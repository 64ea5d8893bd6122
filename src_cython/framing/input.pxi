# Messages as the protocol cores read them: a pointer and a length per message, length -1 for
# none (a tombstone, a key-less message, an Arrow null).  Filled once per batch, from a list of
# bytes or in place from an Arrow binary or large_binary array, whose buffers the caller keeps
# alive while the pointers are in use.

cdef struct MessageInput:
    const uint8_t** ptr
    Py_ssize_t* len
    Py_ssize_t cap
    Py_ssize_t missing         # messages without bytes among those filled


cdef int input_fill(MessageInput* m, object messages, Py_ssize_t start, bint others_missing) except -1:
    """Point at messages[start:] (an Arrow array: at all of it).  A list holds bytes and None;
    with `others_missing`, any other object counts as no message (the caller asks Python about
    it), else it is a TypeError."""
    cdef Py_ssize_t n = len(messages), k
    cdef object v
    if n > m.cap:
        free(m.ptr)
        free(m.len)
        m.ptr = <const uint8_t**>malloc(n * sizeof(uint8_t*))
        m.len = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        if m.ptr == NULL or m.len == NULL:
            input_free(m)
            no_memory("the message pointer arrays")
        m.cap = n
    m.missing = 0
    if not isinstance(messages, list):
        _fill_from_arrow(messages, m.ptr, m.len, n)
        m.missing = messages.null_count
        return 0
    for k in range(start, n):
        v = messages[k]
        if type(v) is bytes:
            m.ptr[k] = <const uint8_t*>PyBytes_AS_STRING(v)
            m.len[k] = PyBytes_GET_SIZE(v)
            continue
        if v is not None and not others_missing:
            raise TypeError(f"message {k} is {type(v).__name__}, not bytes")
        m.ptr[k] = NULL
        m.len[k] = -1
        m.missing += 1
    return 0


cdef void input_free(MessageInput* m) noexcept nogil:
    free(m.ptr)
    free(m.len)
    m.ptr = NULL
    m.len = NULL
    m.cap = 0


cdef void _fill_from_arrow(object arr, const uint8_t** ptr, Py_ssize_t* ln, Py_ssize_t n) except *:
    """Message pointers from a binary (int32 offsets, what Spark and Kafka sources hand over) or
    large_binary array's buffers, read in place: a cast to large_binary cost 3-10 % of a batch's
    decode (nulls → length -1)."""
    cdef const int64_t[::1] offs64
    cdef const int32_t[::1] offs32
    cdef const uint8_t[::1] data
    cdef const uint8_t[::1] valid
    cdef Py_ssize_t i, base = arr.offset, bit, lo, hi
    cdef bint wide = pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type)
    bufs = arr.buffers()
    if wide:
        offs64 = memoryview(bufs[1]).cast("q")
    else:
        offs32 = memoryview(bufs[1]).cast("i")
    data = memoryview(bufs[2]).cast("B") if bufs[2] is not None and bufs[2].size else b"\0"
    has_valid = bufs[0] is not None and arr.null_count > 0
    if has_valid:
        valid = memoryview(bufs[0]).cast("B")
    for i in range(n):
        if has_valid:
            bit = base + i
            if not (valid[bit >> 3] >> (bit & 7)) & 1:
                ptr[i] = NULL
                ln[i] = -1
                continue
        if wide:
            lo = offs64[base + i]
            hi = offs64[base + i + 1]
        else:
            lo = offs32[base + i]
            hi = offs32[base + i + 1]
        ptr[i] = &data[0] + lo
        ln[i] = hi - lo
