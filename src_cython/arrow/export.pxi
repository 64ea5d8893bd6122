# The hand-over of a finished column set to pyarrow through the Arrow C data interface: one
# import per batch.  Wrapping every block in a pyarrow Buffer and every column in
# `Array.from_buffers` cost 30-40 Python-level calls per batch: 34 us of a 1.6 ms Avro-protocol
# batch of 10,000 rows, and 120 us once a garbage collection had run before it (what a Spark
# worker's batches meet), where one import of the whole set costs 4 us and 35 us.
# The blocks travel with the imported batch and go back to the buffer pool, as the column they
# were written for, when pyarrow releases the batch.

cdef extern from *:
    """
    #ifndef ARROW_C_DATA_INTERFACE
    #define ARROW_C_DATA_INTERFACE
    #define ARROW_FLAG_DICTIONARY_ORDERED 1
    #define ARROW_FLAG_NULLABLE 2
    #define ARROW_FLAG_MAP_KEYS_SORTED 4
    struct ArrowSchema {
      const char* format;
      const char* name;
      const char* metadata;
      int64_t flags;
      int64_t n_children;
      struct ArrowSchema** children;
      struct ArrowSchema* dictionary;
      void (*release)(struct ArrowSchema*);
      void* private_data;
    };
    struct ArrowArray {
      int64_t length;
      int64_t null_count;
      int64_t offset;
      int64_t n_buffers;
      int64_t n_children;
      const void** buffers;
      struct ArrowArray** children;
      struct ArrowArray* dictionary;
      void (*release)(struct ArrowArray*);
      void* private_data;
    };
    #endif
    /* what an empty column's offsets or data point at: Arrow wants a buffer, not NULL */
    static const int64_t tf_empty_buffer[2] __attribute__((aligned(64))) = {0, 0};
    """
    cdef struct ArrowArray:
        int64_t length
        int64_t null_count
        int64_t offset
        int64_t n_buffers
        int64_t n_children
        const void** buffers
        ArrowArray** children
        ArrowArray* dictionary
        void (*release)(ArrowArray*) noexcept nogil
        void* private_data
    const int64_t tf_empty_buffer[2]


cdef struct ExportBlock:
    uint8_t* ptr
    Py_ssize_t cap
    int col


# One imported batch's memory: the array nodes, their pointer arrays and the blocks, in one
# allocation that the root's release frees.
cdef struct Exported:
    PoolOwner* owner
    int nblocks
    int nnodes
    int nkids
    int nbufs
    ExportBlock* blocks
    ArrowArray* nodes
    ArrowArray** kids
    const void** bufs


cdef void _exported_release(ArrowArray* root) noexcept with gil:
    # with the GIL: the pool is the interpreter's; pyarrow may drop a batch on any thread
    cdef Exported* e = <Exported*>root.private_data
    cdef int k
    for k in range(e.nblocks):
        pool_give(e.blocks[k].ptr, e.blocks[k].cap, e.owner, e.blocks[k].col)
    if e.owner != NULL:
        pool_owner_drop(e.owner)
    root.release = NULL          # first: a root never imported lies in the memory freed next
    free(e)


cdef void _child_release(ArrowArray* a) noexcept nogil:
    # a child's memory is its root's
    a.release = NULL


cdef int _subtree_nodes(ColumnSet* cs, int k) noexcept nogil:
    cdef ColSpec* s = &cs.spec[k]
    cdef int n = 1, c
    if s.kind == CS_MAP:
        return 2 + _subtree_nodes(cs, s.first_child) + _subtree_nodes(cs, s.first_child + 1)
    if s.kind == CS_STRUCT:
        for c in range(s.nchild):
            n += _subtree_nodes(cs, s.first_child + c)
    return n


cdef ArrowArray* _export_node(Exported* e, int64_t length, int64_t nulls, int nbuf, int nkid) noexcept nogil:
    cdef ArrowArray* a = &e.nodes[e.nnodes]
    e.nnodes += 1
    a.length = length
    a.null_count = nulls
    a.offset = 0
    a.n_buffers = nbuf
    a.n_children = nkid
    a.buffers = &e.bufs[e.nbufs]
    e.nbufs += nbuf
    a.children = &e.kids[e.nkids] if nkid else NULL
    e.nkids += nkid
    a.dictionary = NULL
    a.release = _child_release
    a.private_data = NULL
    return a


cdef const void* _export_block(Exported* e, Buf* b, int col) noexcept nogil:
    """Move b's block into the export (b is left empty); an empty builder gives zero bytes."""
    cdef ExportBlock* blk
    if b.data == NULL:
        return tf_empty_buffer
    blk = &e.blocks[e.nblocks]
    e.nblocks += 1
    blk.ptr = b.data
    blk.cap = b.cap
    blk.col = col
    b.data = NULL
    b.len = 0
    b.cap = 0
    return blk.ptr


cdef const void* _export_validity(Exported* e, Bits* v, int col) noexcept nogil:
    if v.nulls == 0:
        buf_free(&v.b)
        return NULL
    return _export_block(e, &v.b, col)


cdef ArrowArray* _export_buffers(Exported* e, Bits* valid, Buf* b1, Buf* b2, int nkid, int k,
                                 what) except NULL:
    """Column k's node: its validity, then b1 (its offsets or data: `what`) and b2 if any."""
    cdef ArrowArray* a
    if b1.data == NULL and valid.n > 0:
        raise RuntimeError(f"output column {k} has {valid.n} rows and no {what}")
    a = _export_node(e, valid.n, valid.nulls, 3 if b2 != NULL else 2, nkid)
    a.buffers[0] = _export_validity(e, valid, k)
    a.buffers[1] = _export_block(e, b1, k)
    if b2 != NULL:
        a.buffers[2] = _export_block(e, b2, k)
    return a


cdef int _export_column(Exported* e, ColumnSet* cs, int k, ArrowArray** slot) except -1:
    cdef ColSpec* s = &cs.spec[k]
    cdef ArrowArray* a
    cdef ArrowArray* entries
    cdef VarCol* v = &cs.var[k]
    cdef FixCol* f = &cs.fix[k]
    cdef int c
    if s.kind == CS_VAR:
        if v.lazy and _var_unlazy(v) < 0:
            no_memory("a column left unallocated until the end of the batch")
        a = _export_buffers(e, &v.valid, &v.offsets, &v.data, 0, k, "offsets")
    elif s.kind == CS_FIX:
        if f.lazy and _fix_unlazy(f) < 0:
            no_memory("a column left unallocated until the end of the batch")
        a = _export_buffers(e, &f.valid, &f.data, NULL, 0, k, "data")
    elif s.kind == CS_MAP:
        a = _export_buffers(e, &v.valid, &v.offsets, NULL, 1, k, "offsets")
        entries = _export_node(e, cs.var[s.first_child].valid.n, 0, 1, 2)
        entries.buffers[0] = NULL
        a.children[0] = entries
        _export_column(e, cs, s.first_child, &entries.children[0])
        _export_column(e, cs, s.first_child + 1, &entries.children[1])
        cs.count[k] = 0
    else:
        a = _export_node(e, v.valid.n, v.valid.nulls, 1, s.nchild)
        a.buffers[0] = _export_validity(e, &v.valid, k)
        for c in range(s.nchild):
            _export_column(e, cs, s.first_child + c, &a.children[c])
    v.valid.n = 0
    v.valid.nulls = 0
    slot[0] = a
    return 0


cdef struct Gathered:
    # a column of the batch taken from a per-message array through each row's message index
    # (a Kafka partition or offset)
    const uint8_t* src       # the array's values, `width` bytes each
    Py_ssize_t n             # values in it
    int width


cdef int _export_gathered(Exported* e, ColumnSet* cs, Gathered* g, int col, const int32_t* msg,
                          Py_ssize_t rows, ArrowArray** slot) except -1:
    cdef Buf b
    cdef Py_ssize_t i
    cdef int32_t m
    cdef ArrowArray* a
    if rows and msg == NULL:
        raise RuntimeError(f"{rows} rows and no message index")
    b.data = NULL
    b.len = 0
    b.cap = 0
    # a pooled block of this column may be up to an eighth short of what the batch needs: the
    # second reserve grows it (the gather below writes without checks)
    if buf_reserve_fresh(&b, rows * g.width if rows else 1, cs.owner, col) < 0 \
            or buf_reserve(&b, rows * g.width if rows else 1) < 0:
        buf_free(&b)
        no_memory("a Kafka position column")
    for i in range(rows):
        m = msg[i]
        if m < 0 or m >= g.n:
            buf_free(&b)
            raise IndexError(f"row {i} comes from message {m}, past the {g.n} Kafka positions given")
    if g.width == 4:
        for i in range(rows):
            (<int32_t*>b.data)[i] = (<const int32_t*>g.src)[msg[i]]
    else:
        for i in range(rows):
            (<int64_t*>b.data)[i] = (<const int64_t*>g.src)[msg[i]]
    b.len = rows * g.width
    a = _export_node(e, rows, 0, 2, 0)
    a.buffers[0] = NULL
    a.buffers[1] = _export_block(e, &b, col)
    slot[0] = a
    return 0


cdef object _colset_import(ColumnSet* cs, list wanted, object schema, Gathered* extra=NULL,
                           int nextra=0, const int32_t* msg=NULL):
    """The top-level columns `wanted` (set indexes), then `nextra` gathered ones, as a
    RecordBatch of `schema`, their builders' blocks handed over without a copy."""
    cdef int k, j, nodes = 1 + nextra, nwant = len(wanted)
    cdef Py_ssize_t size
    cdef Exported* e
    cdef ArrowArray* root
    for k in wanted:
        nodes += _subtree_nodes(cs, k)
    # nodes, child pointers and buffer pointers (at most 3 each), blocks (at most 3 a node)
    size = (sizeof(Exported) + nodes * sizeof(ArrowArray) + nodes * sizeof(ArrowArray*)
            + 3 * nodes * sizeof(void*) + 3 * nodes * sizeof(ExportBlock))
    e = NULL if alloc_refused() else <Exported*>malloc(size)
    if e == NULL:
        no_memory("the batch's hand-over to pyarrow")
    e.owner = cs.owner
    if e.owner != NULL:
        e.owner.refs += 1
    e.nblocks = e.nnodes = e.nkids = e.nbufs = 0
    e.nodes = <ArrowArray*>(<uint8_t*>e + sizeof(Exported))
    e.kids = <ArrowArray**>(<uint8_t*>e.nodes + nodes * sizeof(ArrowArray))
    e.bufs = <const void**>(<uint8_t*>e.kids + nodes * sizeof(ArrowArray*))
    e.blocks = <ExportBlock*>(<uint8_t*>e.bufs + 3 * nodes * sizeof(void*))
    root = _export_node(e, 0, 0, 1, nwant + nextra)
    root.buffers[0] = NULL
    root.private_data = e
    root.release = _exported_release
    try:
        for j in range(nwant):
            _export_column(e, cs, wanted[j], &root.children[j])
            if root.children[j].length != root.children[0].length:
                raise RuntimeError(f"output column {wanted[j]} has {root.children[j].length} rows, "
                                   f"column {wanted[0]} {root.children[0].length}")
        if nwant:
            root.length = root.children[0].length
        for j in range(nextra):
            # blocks of their own in the pool: as if columns after the set's last
            _export_gathered(e, cs, &extra[j], cs.n + j, msg, root.length, &root.children[nwant + j])
        return pa.RecordBatch._import_from_c(<uintptr_t>root, schema)
    finally:
        if root.release != NULL:     # not imported: the blocks go back to the pool now
            root.release(root)


_MSG_SCHEMA = pa.schema([pa.field("_msg", pa.int32(), nullable=False)])


cdef tuple colset_finish(ColumnSet* cs, int msg_col, list wanted, object schema):
    """(the top-level columns `wanted` (set indexes) as a RecordBatch of `schema`, column
    `msg_col` as an array), the builders' blocks handed over without a copy; the set is left
    empty (the columns no one wanted are freed)."""
    colset_note_sizes(cs)
    try:
        msg = _colset_import(cs, [msg_col], _MSG_SCHEMA).column(0)
        batch = _colset_import(cs, wanted, schema)
    finally:
        colset_release(cs)
        cs.hint = 0
    return batch, msg


cdef object colset_finish_batch(ColumnSet* cs, int msg_col, list wanted, object schema, extras):
    """The top-level columns `wanted` (set indexes), then a column per array of `extras`
    (int32 or int64, one value per message: Kafka partitions, offsets) taken through the
    message index column `msg_col`, as a RecordBatch of `schema`; the set is left empty."""
    cdef Gathered g[2]
    cdef int j, nextra = len(extras)
    cdef FixCol* m = &cs.fix[msg_col]
    if nextra > 2:
        raise ValueError("at most two per-message columns")
    cdef uintptr_t address
    for j in range(nextra):
        arr = extras[j]
        if arr.null_count or (arr.type != pa.int32() and arr.type != pa.int64()):
            raise ValueError("per-message columns are int32 or int64 arrays without nulls")
        g[j].width = 4 if arr.type == pa.int32() else 8
        g[j].n = len(arr)
        buf = arr.buffers()[1]
        address = 0 if buf is None else buf.address
        g[j].src = NULL
        if address != 0:
            g[j].src = <const uint8_t*>address + <Py_ssize_t>arr.offset * g[j].width
    colset_note_sizes(cs)
    try:
        batch = _colset_import(cs, wanted, schema, g, nextra, <const int32_t*>m.data.data)
        if m.data.data != NULL:      # no one asked for the message index: back to the pool
            pool_give(m.data.data, m.data.cap, cs.owner, msg_col)
            m.data.data = NULL
            m.data.len = 0
            m.data.cap = 0
    finally:
        colset_release(cs)
        cs.hint = 0
    return batch


cdef object colset_schema(list types):
    """A schema for importing columns of `types` (names do not matter: callers take the arrays)."""
    return pa.schema([pa.field(f"c{k}", t) for k, t in enumerate(types)])
