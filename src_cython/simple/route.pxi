# Simple protocol, tables={...}: the table of each message, read from the few bytes that name it
# (JSON: the top-level members; Avro: the DML's leading fields), so that each message is decoded
# once, by its table's decoder.  What this cannot tell cheaply (control messages, escapes,
# anything odd) it leaves to the front end (ticdc_fast/simple/routing.py), which decides the same
# way for every message and is the whole router of the pure-Python twin.

cdef enum:
    ROUTE_ALL = -1        # every table's decoder: a WATERMARK (the front end also sends bad messages)
    ROUTE_UNLISTED = -2   # a table not listed
    ROUTE_ASK = -3        # the front end decides


cdef inline int _listed(const uint8_t* db, Py_ssize_t dbn, const uint8_t* tb, Py_ssize_t tbn,
                        const uint8_t** names, const Py_ssize_t* lens, int count) noexcept nogil:
    cdef int k
    for k in range(count):
        if lens[2 * k] == dbn and lens[2 * k + 1] == tbn and bytes_eq(db, names[2 * k], dbn) \
                and bytes_eq(tb, names[2 * k + 1], tbn):
            return k
    return ROUTE_UNLISTED


cdef int _json_route(const uint8_t* p, Py_ssize_t n, const uint8_t** names, const Py_ssize_t* lens,
                     int count) noexcept nogil:
    cdef TopMembers t
    if n < 0 or not utf8_valid(p, n) or scan_top_members(p, n, &t) != 0:
        return ROUTE_ASK
    if t.has_type and t.type.kind == J_STR and not t.type.esc and t.type.n == 9 \
            and bytes_eq(t.type.p, <const uint8_t*>b"WATERMARK", 9):
        return ROUTE_ALL
    if not (t.has_database and t.has_table and t.database.kind == J_STR and t.table.kind == J_STR) \
            or t.database.esc or t.table.esc:
        return ROUTE_ASK
    return _listed(t.database.p, t.database.n, t.table.p, t.table.n, names, lens, count)


cdef int _avro_route(const uint8_t* p, Py_ssize_t n, const uint8_t** names, const Py_ssize_t* lens,
                     int count) noexcept nogil:
    cdef Cur c
    cdef Err err     # a sink, never raised: a fault here only means ROUTE_ASK (the decoder reports it)
    cdef int64_t kind, branch, v
    cdef Span db, tb
    if n < 1 or p[0] != 2 * AVRO_MESSAGE_BRANCH:
        return ROUTE_ASK
    memset(&err, 0, sizeof(Err))
    c.start = p
    c.pos = p + 1
    c.end = p + n
    if avro_long(&c, &kind, &err) < 0 or avro_long(&c, &branch, &err) < 0:
        return ROUTE_ASK
    if kind == 0:        # WATERMARK, whatever follows (a bad one fails in every decoder)
        return ROUTE_ALL
    if kind != AVRO_TYPE_DML or branch != AVRO_TYPE_DML:
        return ROUTE_ASK
    if avro_long(&c, &v, &err) < 0 or avro_string(&c, &db, &err) < 0 or avro_string(&c, &tb, &err) < 0:
        return ROUTE_ASK
    if not utf8_valid(db.p, db.n) or not utf8_valid(tb.p, tb.n):
        return ROUTE_ASK
    return _listed(db.p, db.n, tb.p, tb.n, names, lens, count)


def simple_routes(values, tables, bint avro):
    """The route of each message of ``values`` (a list of bytes/None or a binary or large_binary
    array) as int32 bytes: the index of its table in ``tables`` (``[(database, table)]`` as UTF-8 bytes),
    ROUTE_ALL (-1) for a WATERMARK, ROUTE_UNLISTED (-2), or ROUTE_ASK (-3): the front end decides."""
    cdef Py_ssize_t n = len(values), i, length
    cdef const uint8_t* p
    cdef int count = len(tables), k
    cdef MessageInput m
    cdef const uint8_t** names = NULL
    cdef Py_ssize_t* lens = NULL
    cdef int32_t* out
    cdef char* raw
    memset(&m, 0, sizeof(MessageInput))
    keep = [bytes(x) for pair in tables for x in pair]   # the names' bytes stay alive
    result = bytearray(4 * n)
    try:
        names = <const uint8_t**>malloc((2 * count + 1) * sizeof(uint8_t*))
        lens = <Py_ssize_t*>malloc((2 * count + 1) * sizeof(Py_ssize_t))
        if names == NULL or lens == NULL:
            no_memory("the routing arrays")
        for k in range(2 * count):
            names[k] = <const uint8_t*>PyBytes_AS_STRING(keep[k])
            lens[k] = PyBytes_GET_SIZE(keep[k])
        input_fill(&m, values, 0, True)        # anything but bytes: the front end asks Python
        raw = result
        out = <int32_t*>raw
        with nogil:
            for i in range(n):
                p = input_message(&m, i, &length)
                if length < 0:
                    out[i] = ROUTE_ASK
                elif avro:
                    out[i] = _avro_route(p, length, names, lens, count)
                else:
                    out[i] = _json_route(p, length, names, lens, count)
    finally:
        input_free(&m)
        free(names)
        free(lens)
    return bytes(result)
