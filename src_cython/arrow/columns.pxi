# The column set: every output column of a plan, built once from the Arrow fields it writes
# (pyarrow type -> builder kind and width), with one reserve per batch, appends through the
# builders of buffers.pxi, truncation to a row count (a savepoint), and the hand-over to pyarrow.
# A protocol's own columns are more specs in the same set; nested columns (a map's keys and
# values, a struct's fields) are columns of the set too, placed after the top-level ones.

cdef enum:
    CS_VAR = 1        # string / binary: VarCol (offsets, data, validity)
    CS_FIX = 2        # fixed width: FixCol (`width` bytes per value; 0: bit-packed boolean)
    CS_MAP = 3        # map<string, string>: entry offsets and validity in its VarCol, keys and
                      # values are the VAR columns first_child and first_child + 1
    CS_STRUCT = 4     # validity in its VarCol; its fields are columns [first_child, + nchild)


cdef struct ColSpec:
    int kind
    int width                 # CS_FIX
    int first_child           # CS_MAP / CS_STRUCT
    int nchild
    int empty_null            # CS_VAR: an empty text is written as null (see PlanCore._push_text)
    Py_ssize_t row_mult       # reserved values = batch rows * row_mult (a map's entries)
    Py_ssize_t bytes_per_row  # CS_VAR: data bytes reserved per batch row
    Py_ssize_t hint_div       # CS_VAR: data bytes reserved: bytes_hint // hint_div (0: none)
    # what the last finished batch wrote, per byte of its bytes_hint (0: nothing known yet)
    double seen_bytes         # CS_VAR: data bytes
    double seen_values        # a map's keys or values: entries


cdef struct ColumnSet:
    int n                     # columns: the top-level ones first (ntop), then nested ones
    int ntop
    ColSpec* spec
    VarCol* var               # per column: CS_VAR builder, or a map's / struct's offsets and validity
    FixCol* fix               # per column: CS_FIX builder
    int32_t* count            # per column: a map's entries so far
    Py_ssize_t hint           # the bytes_hint of the batch being built
    PoolOwner* owner          # names its columns' blocks in the buffer pool


cdef int _colset_spec_of(object typ, int* width) except -1:
    """Builder kind (and fixed width) of a pyarrow type (every type the output schemas use)."""
    if pa.types.is_string(typ) or pa.types.is_binary(typ):
        return CS_VAR
    if pa.types.is_map(typ):
        return CS_MAP
    if pa.types.is_struct(typ):
        return CS_STRUCT
    if pa.types.is_boolean(typ):
        width[0] = 0
        return CS_FIX
    width[0] = typ.bit_width // 8
    return CS_FIX


cdef list colset_specs(list top):
    """Flatten top-level column specs into set order.  Each entry of `top` is (arrow type,
    bytes_per_row, hint_div, empty_null); nested columns follow the top-level ones and take the
    reservation of their parent (map entries: 8 per row, half of the map's hint each; struct
    fields: the struct's hint each)."""
    cdef int k
    out = [[typ, bpr, div, en, 1] for typ, bpr, div, en in top]
    k = 0
    while k < len(out):
        typ, bpr, div, en, mult = out[k]
        if pa.types.is_map(typ):
            for child in (typ.key_type, typ.item_type):
                out.append([child, 0, 2 * div if div else 0, 0, 8 * mult])
        elif pa.types.is_struct(typ):
            for i in range(typ.num_fields):
                out.append([typ.field(i).type, 0, div, 0, mult])
        k += 1
    return out


cdef int colset_build(ColumnSet* cs, list top) except -1:
    """Allocate the (empty) set of the columns `top` describes (see colset_specs)."""
    cdef int k, kind, w, nxt
    cdef list flat = colset_specs(top)
    cdef Py_ssize_t n = len(flat)
    cs.n = <int>n
    cs.ntop = len(top)
    cs.spec = <ColSpec*>calloc(max(n, 1), sizeof(ColSpec))
    cs.var = <VarCol*>calloc(max(n, 1), sizeof(VarCol))
    cs.fix = <FixCol*>calloc(max(n, 1), sizeof(FixCol))
    cs.count = <int32_t*>calloc(max(n, 1), sizeof(int32_t))
    cs.owner = pool_owner_new()
    if not (cs.spec and cs.var and cs.fix and cs.count and cs.owner):
        no_memory("the output column set")
    nxt = cs.ntop
    for k in range(n):
        typ, bpr, div, en, mult = flat[k]
        w = 0
        kind = _colset_spec_of(typ, &w)
        cs.spec[k].kind = kind
        cs.spec[k].width = w
        cs.spec[k].bytes_per_row = bpr
        cs.spec[k].hint_div = div
        cs.spec[k].empty_null = en
        cs.spec[k].row_mult = mult
        if kind == CS_MAP:
            cs.spec[k].first_child = nxt
            cs.spec[k].nchild = 2
            nxt += 2
        elif kind == CS_STRUCT:
            cs.spec[k].first_child = nxt
            cs.spec[k].nchild = typ.num_fields
            nxt += typ.num_fields
    return 0


cdef void colset_release(ColumnSet* cs) noexcept nogil:
    """Free every builder's memory (the set stays, empty)."""
    cdef int k
    for k in range(cs.n):
        var_free(&cs.var[k])
        fix_free(&cs.fix[k])
        cs.count[k] = 0


cdef void colset_free(ColumnSet* cs) noexcept nogil:
    if cs.spec != NULL:
        colset_release(cs)
    free(cs.spec)
    free(cs.var)
    free(cs.fix)
    free(cs.count)
    pool_owner_end(cs.owner)
    cs.owner = NULL
    cs.spec = NULL
    cs.var = NULL
    cs.fix = NULL
    cs.count = NULL
    cs.n = 0
    cs.ntop = 0


# A column whose text outgrew its first guess grew by realloc into fresh pages, batch after
# batch: with another decoder or a garbage collection between batches, each batch of the Avro
# protocol's `orders10` took 430-860 page faults, a third of its time.  Once a batch is finished,
# each column reserves what it wrote then, scaled by the batch's input, and an eighth more (so a
# long first guess no longer holds pool memory either); per input byte, so that one odd batch
# cannot make the next reserve more than a few times its input.
cdef enum:
    SEEN_BYTES_MAX = 4        # data bytes per hint byte taken from a batch, at most
    SEEN_VALUES_MAX = 1       # map entries per hint byte, at most


cdef inline Py_ssize_t _seen_reserve(Py_ssize_t bytes_hint, double per_hint_byte) noexcept nogil:
    return <Py_ssize_t>(<double>bytes_hint * per_hint_byte * 1.125) + 64


cdef void colset_note_sizes(ColumnSet* cs) noexcept nogil:
    """Remember what the batch being finished wrote into each text column and map (the next
    colset_reserve reserves that much)."""
    cdef int k
    cdef ColSpec* s
    cdef double hint = <double>cs.hint
    if cs.hint <= 0:
        return
    for k in range(cs.n):
        s = &cs.spec[k]
        if s.kind == CS_VAR:
            s.seen_bytes = min(<double>cs.var[k].data.len / hint, <double>SEEN_BYTES_MAX)
        if s.row_mult > 1 and s.kind != CS_FIX:
            s.seen_values = min(<double>cs.var[k].valid.n / hint, <double>SEEN_VALUES_MAX)


cdef int colset_reserve(ColumnSet* cs, Py_ssize_t rows, Py_ssize_t bytes_hint) noexcept nogil:
    """Reserve every column for a batch of `rows` rows and about `bytes_hint` bytes of text, once:
    appends then run unchecked until a cold-path growth.  0, or -1 out of memory."""
    cdef int k
    cdef ColSpec* s
    cdef Py_ssize_t r, nbytes
    global pool_clock
    cs.hint = bytes_hint
    pool_clock += 1
    cs.owner.last = pool_clock
    for k in range(cs.n):
        s = &cs.spec[k]
        r = rows * s.row_mult
        if s.seen_values > 0:
            r = _seen_reserve(bytes_hint, s.seen_values)
        cs.var[k].valid.rows_hint = r          # the validity of whichever builder column k uses
        cs.fix[k].valid.rows_hint = r
        if s.kind == CS_VAR:
            if s.seen_bytes > 0:
                nbytes = _seen_reserve(bytes_hint, s.seen_bytes)
            else:
                nbytes = rows * s.bytes_per_row + (bytes_hint // s.hint_div if s.hint_div else 0)
            if var_init(&cs.var[k], r, nbytes, cs.owner, k) < 0:
                return -1
        elif s.kind == CS_FIX:
            if fix_init(&cs.fix[k], s.width, r, cs.owner, k) < 0:
                return -1
        elif s.kind == CS_MAP:
            if buf_reserve_fresh(&cs.var[k].offsets, (r + 1) * 4, cs.owner, k) < 0:
                return -1
            (<int32_t*>cs.var[k].offsets.data)[0] = 0
            cs.var[k].offsets.len = 4
            cs.count[k] = 0
    return 0


cdef inline Py_ssize_t colset_rows(const ColumnSet* cs, int k) noexcept nogil:
    if cs.spec[k].kind == CS_FIX:
        return cs.fix[k].n
    return cs.var[k].valid.n


cdef inline int map_close_row(ColumnSet* cs, int k, bint valid) noexcept nogil:
    """End a row of map column k whose entries were pushed to its keys and values."""
    if buf_append(&cs.var[k].offsets, &cs.count[k], 4) < 0:
        return -1
    return bits_push(&cs.var[k].valid, valid)


cdef int colset_push_null(ColumnSet* cs, int k) noexcept nogil:
    """A null row in column k, whatever its kind (a struct's fields get nulls too)."""
    cdef int c
    cdef ColSpec* s = &cs.spec[k]
    if s.kind == CS_VAR:
        return var_push_null(&cs.var[k])
    if s.kind == CS_FIX:
        return fix_push_null(&cs.fix[k])
    if s.kind == CS_MAP:
        return map_close_row(cs, k, 0)
    if bits_push(&cs.var[k].valid, 0) < 0:
        return -1
    for c in range(s.first_child, s.first_child + s.nchild):
        if colset_push_null(cs, c) < 0:
            return -1
    return 0


# ------------------------------------------------------------------ truncation (savepoints)
cdef void _bits_truncate(Bits* v, Py_ssize_t k) noexcept nogil:
    """Keep the first k bits; the nulls among them are counted again."""
    cdef Py_ssize_t i, nulls = 0
    if k >= v.n:
        return
    if v.nulls == 0:          # no bitmap written yet
        v.n = k
        return
    for i in range(k):
        if not (v.b.data[i >> 3] >> (i & 7)) & 1:
            nulls += 1
    v.b.len = (k + 7) // 8
    if k & 7:
        v.b.data[k >> 3] &= <uint8_t>((1 << (k & 7)) - 1)   # appends OR into this byte
    v.n = k
    v.nulls = nulls


cdef void _var_truncate(VarCol* c, Py_ssize_t k) noexcept nogil:
    """Keep k rows; bytes of a value appended but never closed (it failed) go too."""
    if c.lazy:                # every row so far is a leading null, nothing written yet
        if k < c.valid.n:
            c.lazy = k
            c.valid.n = k
            c.valid.nulls = k
        c.data.len = 0
        return
    if k < c.valid.n:
        c.offsets.len = (k + 1) * 4
        _bits_truncate(&c.valid, k)
    if c.offsets.data != NULL:
        c.data.len = (<int32_t*>c.offsets.data)[c.offsets.len // 4 - 1]


cdef void _fix_truncate(FixCol* c, Py_ssize_t k) noexcept nogil:
    if k >= c.n:
        return
    if c.lazy:
        c.lazy = k
        c.n = k
        c.valid.n = k
        c.valid.nulls = k
        return
    if c.width:
        c.data.len = k * c.width
    else:
        c.data.len = (k + 7) // 8
        if k & 7:
            c.data.data[k >> 3] &= <uint8_t>((1 << (k & 7)) - 1)
    c.n = k
    _bits_truncate(&c.valid, k)


cdef void colset_truncate_column(ColumnSet* cs, int k, Py_ssize_t rows) noexcept nogil:
    cdef ColSpec* s = &cs.spec[k]
    cdef int c
    cdef int32_t entries
    if s.kind == CS_VAR:
        _var_truncate(&cs.var[k], rows)
    elif s.kind == CS_FIX:
        _fix_truncate(&cs.fix[k], rows)
    elif s.kind == CS_MAP:
        # a row that failed halfway has entries in the keys and values but no offset yet: the
        # children are cut back even when the map itself has no row to drop
        if cs.var[k].offsets.data == NULL:
            return
        if rows < cs.var[k].valid.n:
            cs.var[k].offsets.len = (rows + 1) * 4
            _bits_truncate(&cs.var[k].valid, rows)
        entries = (<int32_t*>cs.var[k].offsets.data)[cs.var[k].valid.n]
        cs.count[k] = entries
        colset_truncate_column(cs, s.first_child, entries)
        colset_truncate_column(cs, s.first_child + 1, entries)
    else:
        _bits_truncate(&cs.var[k].valid, rows)
        for c in range(s.first_child, s.first_child + s.nchild):
            colset_truncate_column(cs, c, rows)


cdef void colset_truncate(ColumnSet* cs, Py_ssize_t rows) noexcept nogil:
    """Roll every column back to `rows` rows (a savepoint taken with colset_rows): what was
    appended after it is gone, the memory stays reserved."""
    cdef int k
    for k in range(cs.ntop):
        colset_truncate_column(cs, k, rows)


# the hand-over to pyarrow: arrow/export.pxi
