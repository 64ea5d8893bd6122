# Messages as the protocol cores read them: a pointer and a length per message, length -1 for
# none (a tombstone, a key-less message, an Arrow null).  Filled once per batch, from a list of
# bytes or in place from an Arrow binary or large_binary array, whose buffers the caller keeps
# alive while the pointers are in use.

cdef struct MessageInput:
    # a list's messages: a pointer and a length each
    const uint8_t** ptr
    Py_ssize_t* len
    Py_ssize_t cap
    # an Arrow array's, read in place through its offsets (arrow = 1): filling pointer arrays
    # wrote 16 bytes a message that the loop read back, 20-45 us of a 10,000-message batch
    int arrow
    const uint8_t* data
    const int32_t* o32         # int32 offsets (binary), else
    const int64_t* o64         # int64 offsets (large_binary), both from the array's offset
    const uint8_t* valid       # validity bits, NULL: no nulls
    Py_ssize_t base            # the array's offset (for the validity bits)
    Py_ssize_t n               # messages (either kind)
    Py_ssize_t missing         # messages without bytes among those filled
    Py_ssize_t bytes           # their bytes, all together (an Arrow array's: with any that
                               # its nulls span)


cdef inline const uint8_t* input_message(const MessageInput* m, Py_ssize_t i, Py_ssize_t* n) noexcept nogil:
    """Message i's bytes and, in n, their length (-1, NULL: no message)."""
    cdef Py_ssize_t lo, bit
    if not m.arrow:
        n[0] = m.len[i]
        return m.ptr[i]
    if m.valid != NULL:
        bit = m.base + i
        if not (m.valid[bit >> 3] >> (bit & 7)) & 1:
            n[0] = -1
            return NULL
    if m.o32 != NULL:
        lo = m.o32[i]
        n[0] = m.o32[i + 1] - lo
    else:
        lo = m.o64[i]
        n[0] = m.o64[i + 1] - lo
    return m.data + lo


cdef int input_fill(MessageInput* m, object messages, Py_ssize_t start, bint others_missing) except -1:
    """Point at messages[start:] (an Arrow array: at all of it, in place).  A list holds bytes and
    None; with `others_missing`, any other object counts as no message (the caller asks Python
    about it), else it is a TypeError."""
    cdef Py_ssize_t n = len(messages), k
    cdef object v
    m.missing = 0
    m.bytes = 0
    m.n = n
    if not isinstance(messages, list):
        _point_at_arrow(m, messages, n)
        return 0
    m.arrow = 0
    if n > m.cap:
        free(m.ptr)
        free(m.len)
        m.ptr = <const uint8_t**>malloc(n * sizeof(uint8_t*))
        m.len = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        if m.ptr == NULL or m.len == NULL:
            input_free(m)
            no_memory("the message pointer arrays")
        m.cap = n
    for k in range(start, n):
        v = messages[k]
        if type(v) is bytes:
            m.ptr[k] = <const uint8_t*>PyBytes_AS_STRING(v)
            m.len[k] = PyBytes_GET_SIZE(v)
            m.bytes += m.len[k]
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
    m.arrow = 0
    m.n = 0


cdef extern from *:
    """
    static const uint8_t tf_no_bytes[8] = {0};
    static const int32_t tf_no_offsets[2] = {0, 0};
    """
    const uint8_t tf_no_bytes[8]
    const int32_t tf_no_offsets[2]


cdef int _point_at_arrow(MessageInput* m, object arr, Py_ssize_t n) except -1:
    """Read a binary (int32 offsets, what Spark and Kafka sources hand over) or large_binary
    array in place: a cast to large_binary cost 3-10 % of a batch's decode.  Its buffers are
    taken by address (memoryviews of them cost 30 us a batch once the caches were cold)."""
    cdef uintptr_t address
    m.arrow = 1
    m.data = tf_no_bytes
    m.o32 = tf_no_offsets
    m.o64 = NULL
    m.valid = NULL
    m.base = arr.offset
    if n == 0:
        return 0
    bufs = arr.buffers()
    address = bufs[1].address
    if pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type):
        m.o32 = NULL
        m.o64 = <const int64_t*>address + m.base
    else:
        m.o32 = <const int32_t*>address + m.base
    if bufs[2] is not None and bufs[2].size:
        address = bufs[2].address
        m.data = <const uint8_t*>address
    m.missing = arr.null_count
    if bufs[0] is not None and m.missing > 0:
        address = bufs[0].address
        m.valid = <const uint8_t*>address
    # with the bytes a null may span (Arrow allows them; what the bytes are for is a reserve)
    m.bytes = m.o32[n] - m.o32[0] if m.o32 != NULL else m.o64[n] - m.o64[0]
    return 0
