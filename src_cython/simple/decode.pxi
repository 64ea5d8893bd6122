# Simple protocol: DML messages (JSON or the fixed Avro schema) decoded straight into the column
# builders of the plan's core (plan/core.pxi).  Control messages (BOOTSTRAP, DDL, WATERMARK),
# DML whose schema is not registered yet, claim-check rows (when a resolver is set) and
# TIMESTAMP zones not loaded yet make `run` stop *before* anything of that message is written;
# the Python front end handles them and calls `run` again.

cdef enum:
    AVRO_MESSAGE_BRANCH = 11
    AVRO_TYPE_DML = 3


cdef enum:
    EK_TYPE = 0
    EK_DATABASE = 1
    EK_TABLE = 2
    EK_DATA = 3
    EK_OLD = 4
    EK_COMMITTS = 5
    EK_SCHEMAVERSION = 6
    EK_TABLEID = 7
    EK_BUILDTS = 8
    EK_CLAIMCHECKLOCATION = 9
    EK_HANDLEKEYONLY = 10
    EK_CHECKSUM = 11
    EK_TABLESCHEMA = 12
    EK_PRETABLESCHEMA = 13
    EK_SQL = 14
    EK_VERSION = 15
    ENV_KEYS = 16
    ENV_SEQ_MAX = 24
    TS_OTHER_FORM = 3       # _json_timestamp_here: not the spelling it reads; scan the value


cdef tuple ENV_KEY_NAMES = (  # in EK_* order
    b"type", b"database", b"table", b"data", b"old", b"commitTs", b"schemaVersion", b"tableID",
    b"buildTs", b"claimCheckLocation", b"handleKeyOnly", b"checksum", b"tableSchema", b"preTableSchema",
    b"sql", b"version")
cdef KnownKeys ENV_KEY_SET
known_keys(&ENV_KEY_SET, ENV_KEY_NAMES, ENV_KEYS)


cdef enum:
    SEQ_GIVE_UP = 16
    SEQ_RETRY = 4096


cdef struct KeySlot:
    # a column name of at most 16 bytes, zero-padded, in the plan's perfect-hash table
    uint64_t lo
    uint64_t hi
    int32_t n                # -1: empty
    int32_t col


cdef uint64_t KEY_MASK_LO[17]    # the bytes of a name of n <= 16 bytes in its first and second word
cdef uint64_t KEY_MASK_HI[17]


cdef void _init_key_masks() noexcept:
    cdef int n
    for n in range(17):
        KEY_MASK_LO[n] = 0xFFFFFFFFFFFFFFFFULL if n >= 8 else ((1ULL << (8 * n)) - 1)
        KEY_MASK_HI[n] = 0 if n <= 8 else 0xFFFFFFFFFFFFFFFFULL if n >= 16 else ((1ULL << (8 * (n - 8))) - 1)


_init_key_masks()


cdef inline uint64_t _key_word(uint64_t lo, uint64_t hi, Py_ssize_t n) noexcept nogil:
    return lo ^ ((hi << 31) | (hi >> 33)) ^ (<uint64_t>n << 58)


cdef struct ColSlot:
    # one slot of a table plan's name index: what a probe compares sits in the slot itself, so a
    # key found by hash (simple Avro's maps come in a new order every row) costs one slot load
    # and one compare of the name bytes
    uint64_t hash
    Py_ssize_t name_off      # into TablePlan.names
    int32_t name_len
    int32_t col              # -1: empty


cdef struct TablePlan:
    uint64_t version
    uint64_t hash
    Py_ssize_t db_off, db_len, tbl_off, tbl_len    # into SimplePlan.keys
    int ncols
    int* type_code
    uint32_t* flags
    int* elem_first          # per column: index of its first element in elem_off, -1 if none
    int* elem_count
    Py_ssize_t* name_off     # ncols + 1 offsets into names
    ColSlot* slot            # open addressing over names -> column index
    int slot_cap
    Buf names
    Buf quoted               # each name as JSON writes it before its value, `"name":` (column j
                             # at name_off[j] + 3j), compared whole by obj_key_expected
    int* col_target          # per column: typed target index, -1 if none
    int* seq                 # per position: the column seen there last time (names repeat per row)
    int seq_misses           # Avro keys since the position hint last held (_resolve_map_key)
    # Avro map keys in Go map order are looked up one by one: names of at most 16 bytes have a
    # perfect hash (one multiply picks the only slot a key can be in; two words and the length
    # decide), found when the plan is built; NULL when a multiplier was not found or a name is
    # longer (then the hash index below serves)
    KeySlot* kslot
    uint64_t kmul
    int kshift
    uint32_t* seen           # per image slot and column: generation of the image it was last seen in
    int* at                  # per image slot and column: its entry index in that image
    int* tcol                # per typed target: the column that fills it, -1 if none
    uint8_t* name_kind       # per column: 0 needs JSON escaping, 1 plain ASCII, 2 plain non-ASCII
    uint8_t* dec             # per column and Avro union branch (SAV_*): its FieldDecoder
    uint8_t* gen             # per column and Avro union branch: its GenericDecoder
    uint8_t* text_dec        # per column: the TextDecoder of its values into its target


# a checksum member of a wrong form (JSON), reported once the row is otherwise whole, as the twin
cdef enum:
    CK_OK = 0
    CK_VERSION
    CK_CORRUPTED
    CK_CURRENT
    CK_PREVIOUS

cdef const char* CK_FAULT_TEXT[5]
CK_FAULT_TEXT[CK_VERSION] = b"invalid checksum object (version)"
CK_FAULT_TEXT[CK_CORRUPTED] = b"invalid checksum object (corrupted)"
CK_FAULT_TEXT[CK_CURRENT] = b"invalid checksum object (current)"
CK_FAULT_TEXT[CK_PREVIOUS] = b"invalid checksum object (previous)"


cdef struct DmlInfo:
    Span database
    Span table
    Span type
    Span ccl
    Span data_span
    Span old_span
    uint64_t table_id
    uint64_t commit_ts
    uint64_t build_ts
    uint64_t schema_version
    int64_t ck_version
    uint64_t ck_current
    uint64_t ck_previous
    int has_data, has_old, has_version, has_table_id, has_build_ts, has_commit_ts
    int hko
    int has_ck
    int ck_corrupted
    int ck_fault           # CK_* of the first checksum member of a wrong form (JSON), CK_OK if none
    int op
    int plan
    int streamed           # builders were written while a map was read (typed targets: _stream_target;
                           # simple Avro's generic maps too): a row to drop should the message not end in one
    # byte offsets of the envelope values an error may name (the last copy of a repeated member)
    Py_ssize_t type_at, commit_ts_at, build_ts_at, schema_version_at, table_id_at, ck_fault_at


cdef inline void _dml_start(DmlInfo* d) noexcept nogil:
    """The defaults of what a message may leave unwritten: every span absent, every has_* flag
    off, no checksum, no plan.  A value field is read only under its flag (or, JSON, once the
    reader has required it), so the rest need no clearing: cheaper per message than a memset
    of the whole struct."""
    d.database.kind = J_ABSENT
    d.table.kind = J_ABSENT
    d.ccl.kind = J_ABSENT
    d.type.kind = J_ABSENT
    d.data_span.kind = J_ABSENT
    d.old_span.kind = J_ABSENT
    d.hko = 0
    d.has_ck = 0
    d.ck_version = 0
    d.ck_corrupted = 0
    d.ck_current = 0
    d.ck_previous = 0
    d.ck_fault = CK_OK
    d.has_data = 0
    d.has_old = 0
    d.has_version = 0
    d.has_table_id = 0
    d.has_build_ts = 0
    d.has_commit_ts = 0
    d.streamed = 0
    d.plan = -1


cdef void _build_key_slots(TablePlan* p) noexcept nogil:
    """The plan's perfect hash of column names (see TablePlan.kslot), or none."""
    cdef int bits = 4, j, tries, size
    cdef uint64_t state = 0x9E3779B97F4A7C15ULL, mul, lo, hi, w
    cdef Py_ssize_t n, i
    cdef uint8_t pad[16]
    cdef KeySlot* t
    for j in range(p.ncols):
        if p.name_off[j + 1] - p.name_off[j] > 16:
            return
    while (1 << bits) < 2 * p.ncols:
        bits += 1
    size = 1 << (bits + 1)
    t = <KeySlot*>malloc(size * sizeof(KeySlot))
    if t == NULL:
        return                       # the hash index serves
    for bits in range(bits, bits + 2):
        for tries in range(64):
            state += 0x9E3779B97F4A7C15ULL          # splitmix64: a fixed sequence of odd multipliers
            mul = state
            mul = (mul ^ (mul >> 30)) * 0xBF58476D1CE4E5B9ULL
            mul = (mul ^ (mul >> 27)) * 0x94D049BB133111EBULL
            mul = (mul ^ (mul >> 31)) | 1
            for i in range(1 << bits):
                t[i].n = -1
            for j in range(p.ncols):
                n = p.name_off[j + 1] - p.name_off[j]
                memset(pad, 0, 16)
                memcpy(pad, p.names.data + p.name_off[j], n)
                lo = load_le64(pad)
                hi = load_le64(pad + 8)
                w = (_key_word(lo, hi, n) * mul) >> (64 - bits)
                if t[w].n >= 0:
                    break
                t[w].lo = lo
                t[w].hi = hi
                t[w].n = <int32_t>n
                t[w].col = j
            else:
                p.kslot = t
                p.kmul = mul
                p.kshift = 64 - bits
                return
    free(t)


cdef void _free_table_plan(TablePlan* p) noexcept nogil:
    free(p.type_code)
    free(p.flags)
    free(p.elem_first)
    free(p.elem_count)
    free(p.name_off)
    free(p.slot)
    free(p.kslot)
    free(p.col_target)
    free(p.seq)
    free(p.seen)
    free(p.at)
    free(p.tcol)
    free(p.name_kind)
    free(p.dec)
    free(p.gen)
    free(p.text_dec)
    buf_free(&p.names)
    buf_free(&p.quoted)


@cython.final
cdef class SimplePlan(PlanFront):
    _protocol = "simple"   # the layout of its columns (PlanFront.__cinit__)
    cdef int avro
    cdef public bint stop_on_claim_check
    cdef TablePlan* plans
    cdef int nplans
    cdef int plans_cap
    cdef int* pslot              # open addressing over plan hashes -> plan index, -1 empty
    cdef Py_ssize_t pslot_cap
    cdef Buf keys                # database/table bytes of every plan
    cdef ElementNames elements   # ENUM/SET element names (n + 1 offsets per column's group)
    cdef Buf avro_scratch        # text forms of Avro values, reserved per message
    cdef public object pending_zone
    cdef public Py_ssize_t pending_zone_at   # byte offset of that TIMESTAMP location
    # the simple protocol's own output columns: indexes in the core's column set
    cdef int col_ddl_type
    cdef int col_table_schema
    cdef int col_schema_version
    cdef int col_table_id
    cdef int col_build_ts
    cdef int col_ck_version
    cdef int col_ck_corrupted
    cdef int col_ck_current
    cdef int col_ck_previous
    cdef int col_undecodable
    cdef int col_raw
    cdef object fields
    cdef object _values_ref
    cdef MessageInput input      # the messages of `_values_ref`
    cdef int cur_plan
    # typed rows: the map a row's targets come from is converted as it is read, in whatever
    # order its columns come (JSON: sorted, Avro: Go map order); reading_again: the message is
    # read a second time, through the row image (_read_again).  target_gen[j] == row_gen: target
    # j has this row's value already.
    cdef int reading_again
    cdef uint32_t* target_gen
    cdef uint32_t row_gen
    cdef readonly long long rows_read_again     # streamed rows sent back to the image (tests)
    cdef uint32_t cgen
    cdef uint32_t image_gen[3]   # per image of the core (IMG_*): cgen when it was started
    cdef int env_seq[24]         # envelope key id seen at each position of the last message
    cdef object _targets

    def __cinit__(self, cfg):
        self.col_ddl_type = self.core.own_col(_C.COL_DDL_TYPE)
        self.col_table_schema = self.core.own_col(_C.COL_TABLE_SCHEMA)
        self.col_schema_version = self.core.own_col(_C.COL_SCHEMA_VERSION)
        self.col_table_id = self.core.own_col(_C.COL_TABLE_ID)
        self.col_build_ts = self.core.own_col(_C.COL_BUILT_TS)
        self.col_ck_version = self.core.own_col(_C.COL_CHECKSUM_VERSION)
        self.col_ck_corrupted = self.core.own_col(_C.COL_CHECKSUM_CORRUPTED)
        self.col_ck_current = self.core.own_col(_C.COL_CHECKSUM_CURRENT)
        self.col_ck_previous = self.core.own_col(_C.COL_CHECKSUM_PREVIOUS)
        self.col_undecodable = self.core.own_col(_C.COL_UNDECODABLE)
        self.col_raw = self.core.own_col(_C.COL_RAW)
        self.core.render_hook = _simpleplan_render
        self.core.hook_owner = <void*>self
        self.avro = cfg.encoding == "avro"
        self.core.text_prevalidated = not self.avro     # _message checks every JSON message first
        self.stop_on_claim_check = False
        self.pending_zone = None
        self._values_ref = None
        for k in range(ENV_SEQ_MAX):
            self.env_seq[k] = -1
        self._targets = cfg.targets or ()
        self.target_gen = <uint32_t*>calloc(max(self.core.ntargets, 1), sizeof(uint32_t))
        if self.target_gen == NULL:
            raise MemoryError("the simple-protocol target marks")

    def __dealloc__(self):
        cdef int i
        for i in range(self.nplans):
            _free_table_plan(&self.plans[i])
        free(self.plans)
        free(self.pslot)
        free(self.target_gen)
        buf_free(&self.keys)
        buf_free(&self.elements.names)
        buf_free(&self.elements.off)
        buf_free(&self.avro_scratch)
        input_free(&self.input)

    # ------------------------------------------------------------------ plans
    def register(self, ts):
        self.core._claim()
        try:
            return self._register_body(ts)
        finally:
            self.core.busy = 0

    cdef object _register_body(self, ts):
        """Compile a TableSchema once; DML of (database, table, version) then decodes in C."""
        cdef TablePlan* p
        cdef int k, j, ncols = len(ts.columns)
        cdef bytes name, db = ts.database.encode(), tb = ts.table.encode()
        cdef Py_ssize_t s
        cdef int64_t off
        if self._find_plan(<const uint8_t*><const char*>db, len(db), <const uint8_t*><const char*>tb,
                           len(tb), <uint64_t>ts.version) >= 0:
            return   # the first schema of a version stays (TiCDC's decoder keeps it too)
        self._reserve_plan_slots(self.nplans + 1)
        if self.nplans == self.plans_cap:
            p = <TablePlan*>realloc(self.plans, (self.plans_cap * 2 + 8) * sizeof(TablePlan))
            if p == NULL:
                no_memory("the table plan list")
            self.plans = p
            self.plans_cap = self.plans_cap * 2 + 8
        p = &self.plans[self.nplans]
        memset(p, 0, sizeof(TablePlan))
        p.version = <uint64_t>ts.version
        p.db_off = self.keys.len
        p.db_len = len(db)
        if buf_append(&self.keys, <const char*>db, len(db)) < 0:
            no_memory("a database name")
        p.tbl_off = self.keys.len
        p.tbl_len = len(tb)
        if buf_append(&self.keys, <const char*>tb, len(tb)) < 0:
            no_memory("a table name")
        p.hash = _plan_hash(<const uint8_t*><const char*>db, len(db), <const uint8_t*><const char*>tb,
                            len(tb), p.version)
        p.ncols = ncols
        n = max(ncols, 1)
        p.type_code = <int*>calloc(n, sizeof(int))
        p.flags = <uint32_t*>calloc(n, sizeof(uint32_t))
        p.elem_first = <int*>calloc(n, sizeof(int))
        p.elem_count = <int*>calloc(n, sizeof(int))
        p.name_off = <Py_ssize_t*>calloc(n + 1, sizeof(Py_ssize_t))
        p.slot_cap = 16
        while p.slot_cap < 2 * n:
            p.slot_cap *= 2
        p.slot = <ColSlot*>malloc(p.slot_cap * sizeof(ColSlot))
        p.col_target = <int*>calloc(n, sizeof(int))
        p.seq = <int*>calloc(n, sizeof(int))
        p.seen = <uint32_t*>calloc(2 * n, sizeof(uint32_t))
        p.at = <int*>calloc(2 * n, sizeof(int))
        p.tcol = <int*>malloc(max(self.core.ntargets, 1) * sizeof(int))
        p.name_kind = <uint8_t*>calloc(n, 1)
        p.dec = <uint8_t*>calloc(n * SAV_BRANCHES, 1)
        p.gen = <uint8_t*>calloc(n * SAV_BRANCHES, 1)
        p.text_dec = <uint8_t*>calloc(n, 1)
        if not (p.name_kind and p.dec and p.gen and p.text_dec and p.type_code and p.flags and p.elem_first and p.elem_count and p.name_off and p.slot
                and p.col_target and p.seq and p.seen and p.at and p.tcol):
            _free_table_plan(p)
            no_memory("the column arrays of a table plan")
        for k in range(p.slot_cap):
            p.slot[k].col = -1
        for k in range(self.core.ntargets):
            p.tcol[k] = -1
        try:
            self._fill_table_plan(p, ts)
        except BaseException:
            _free_table_plan(p)      # never found: the plan counts only once it is complete
            raise
        self._put_plan_slot(self.nplans)
        self.nplans += 1

    cdef int _fill_table_plan(self, TablePlan* p, ts) except -1:
        """The columns of a new table plan (names, types, targets, ENUM/SET elements)."""
        cdef int j, ncols = len(ts.columns)
        cdef bytes name, quoted
        cdef Py_ssize_t s
        cdef int64_t off
        cdef uint64_t h
        for j, col in enumerate(ts.columns):
            p.type_code[j] = col.type_code
            p.flags[j] = col.flags
            name = col.name.encode("utf-8")
            quoted = b'"' + name + b'":'
            p.name_off[j] = p.names.len
            if buf_append(&p.names, <const char*>name, len(name)) < 0 \
                    or buf_append(&p.quoted, <const char*>quoted, len(quoted)) < 0:
                no_memory("the column names of a table plan")
            h = name_hash(<const uint8_t*><const char*>name, len(name))
            p.col_target[j] = self.core._target_by_name(<const uint8_t*><const char*>name, len(name))
            if p.col_target[j] >= 0:
                p.tcol[p.col_target[j]] = j
                p.text_dec[j] = text_decoder_for(col.type_code, col.flags, self.core.writers[p.col_target[j]],
                                                 col.elements is not None)
            # Go escapes '"', '\\', control bytes, <, >, & and U+2028/9 in keys: such names are
            # never matched byte for byte
            if not any(ch in col.name for ch in '"\\<>&\u2028\u2029') and all(ord(ch) >= 0x20 for ch in col.name):
                p.name_kind[j] = 1 if col.name.isascii() else 2
            if self.avro:
                _sav_compile_column(self, p, j)
            p.seq[j] = -1
            s = <Py_ssize_t>(h & <uint64_t>(p.slot_cap - 1))
            while p.slot[s].col >= 0:
                s = (s + 1) & (p.slot_cap - 1)
            p.slot[s].col = j
            p.slot[s].hash = h
            p.slot[s].name_off = p.name_off[j]
            p.slot[s].name_len = <int32_t>len(name)
            p.elem_first[j] = -1
            if col.elements is not None:
                p.elem_first[j] = <int>(self.elements.off.len // 8)
                p.elem_count[j] = len(col.elements)
                for el in col.elements:
                    eb = el.encode("utf-8")
                    off = self.elements.names.len
                    if buf_append(&self.elements.off, &off, 8) < 0:
                        no_memory("the ENUM/SET element offsets")
                    if buf_append(&self.elements.names, <const char*>eb, len(eb)) < 0:
                        no_memory("the ENUM/SET element names")
                off = self.elements.names.len
                if buf_append(&self.elements.off, &off, 8) < 0:
                    no_memory("the ENUM/SET element offsets")
        p.name_off[ncols] = p.names.len
        _build_key_slots(p)
        return 0

    def zone_names_seen(self):
        """Zone names registered so far (known or not)."""
        return list(self.core.zone_names)

    def add_zone(self, name, known=True):
        self.core._claim()
        try:
            return self.core._add_zone_body(name, known)
        finally:
            self.core.busy = 0

    cdef int _reserve_plan_slots(self, Py_ssize_t n) except -1:
        """Room for n plans at a load factor of at most 1/2 (rehashing every plan when growing)."""
        cdef Py_ssize_t cap = self.pslot_cap, k
        cdef int* slots
        if 2 * n <= cap:
            return 0
        if cap == 0:
            cap = 16
        while 2 * n > cap:
            cap *= 2
        slots = <int*>malloc(cap * sizeof(int))
        if slots == NULL:
            no_memory("the column name slots")
        free(self.pslot)
        self.pslot = slots
        self.pslot_cap = cap
        for k in range(cap):
            slots[k] = -1
        for k in range(self.nplans):
            self._put_plan_slot(<int>k)
        return 0

    cdef void _put_plan_slot(self, int k) noexcept nogil:
        cdef Py_ssize_t s = _hash_slot(self.plans[k].hash, self.pslot_cap)
        while self.pslot[s] >= 0:
            s = (s + 1) & (self.pslot_cap - 1)
        self.pslot[s] = k

    cdef int _find_plan(self, const uint8_t* db, Py_ssize_t dbn, const uint8_t* tb, Py_ssize_t tbn,
                        uint64_t version) noexcept nogil:
        """Plan of (database, table, version) by hash: many tables and versions cost no more per
        message than one."""
        cdef uint64_t h
        cdef int k
        cdef Py_ssize_t s
        cdef TablePlan* p
        if self.pslot_cap == 0:
            return -1
        # a topic's messages mostly repeat the previous one's table: compare before hashing
        if 0 <= self.cur_plan < self.nplans:
            p = &self.plans[self.cur_plan]
            if p.version == version and p.db_len == dbn and p.tbl_len == tbn \
                    and bytes_eq(<const uint8_t*>(self.keys.data + p.tbl_off), <const uint8_t*>(tb), tbn) \
                    and bytes_eq(<const uint8_t*>(self.keys.data + p.db_off), <const uint8_t*>(db), dbn):
                return self.cur_plan
        h = _plan_hash(db, dbn, tb, tbn, version)
        s = _hash_slot(h, self.pslot_cap)
        while True:
            k = self.pslot[s]
            if k < 0:
                return -1
            p = &self.plans[k]
            if p.hash == h and p.version == version and p.db_len == dbn and p.tbl_len == tbn \
                    and bytes_eq(<const uint8_t*>(self.keys.data + p.db_off), <const uint8_t*>(db), dbn) \
                    and bytes_eq(<const uint8_t*>(self.keys.data + p.tbl_off), <const uint8_t*>(tb), tbn):
                return k
            s = (s + 1) & (self.pslot_cap - 1)

    cdef int _find_column(self, TablePlan* p, const uint8_t* name, Py_ssize_t n, uint64_t h) noexcept nogil:
        cdef Py_ssize_t s = <Py_ssize_t>(h & <uint64_t>(p.slot_cap - 1))
        cdef ColSlot* slot
        while True:
            slot = &p.slot[s]
            if slot.col < 0:
                return -1
            if slot.hash == h and slot.name_len == n \
                    and bytes_eq(<const uint8_t*>(p.names.data + slot.name_off), <const uint8_t*>(name), n):
                return slot.col
            s = (s + 1) & (p.slot_cap - 1)

    cdef inline int _resolve_column(self, TablePlan* p, Py_ssize_t pos, const uint8_t* name,
                                    Py_ssize_t n) noexcept nogil:
        """Column index of a data/old member: rows of one table repeat the same name sequence,
        so the column seen at this position last time is tried before hashing."""
        cdef int j
        if pos < p.ncols:
            j = p.seq[pos]
            if j >= 0 and p.name_off[j + 1] - p.name_off[j] == n \
                    and bytes_eq(p.names.data + p.name_off[j], name, n):
                return j
        j = self._find_column(p, name, n, name_hash(name, n))
        if j >= 0 and pos < p.ncols:
            p.seq[pos] = j
        return j

    cdef inline int _resolve_map_key(self, TablePlan* p, Py_ssize_t pos, const uint8_t* name,
                                     Py_ssize_t n, const uint8_t* end) noexcept nogil:
        """_resolve_column for an Avro map key.  TiCDC writes the map in Go map order, which
        rarely repeats a position: after SEQ_GIVE_UP misses in a row the position hint is not
        tried (a compare and a mispredicted branch per key) until SEQ_RETRY more keys have gone
        by, so a stream whose order does repeat gets it back.  Keys go to the perfect hash when
        16 bytes can be read from the key's start inside the message."""
        cdef int j
        cdef uint64_t lo, hi
        cdef KeySlot* k
        if pos < p.ncols and p.seq_misses < SEQ_GIVE_UP:
            j = p.seq[pos]
            if j >= 0 and p.name_off[j + 1] - p.name_off[j] == n \
                    and bytes_eq(p.names.data + p.name_off[j], name, n):
                p.seq_misses = 0
                return j
        p.seq_misses += 1
        if p.seq_misses >= SEQ_RETRY:
            p.seq_misses = 0
        if p.kslot != NULL and n <= 16 and end - name >= 16:
            lo = load_le64(name) & KEY_MASK_LO[n]
            hi = load_le64(name + 8) & KEY_MASK_HI[n]
            k = &p.kslot[(_key_word(lo, hi, n) * p.kmul) >> p.kshift]
            # every name of the plan is in the table (none is longer than 16 bytes): a key not in
            # its one slot is no column
            j = k.col if k.n == n and k.lo == lo and k.hi == hi else -1
        else:
            j = self._find_column(p, name, n, name_hash(name, n))
        if j >= 0 and pos < p.ncols:
            p.seq[pos] = j
        return j

    cdef inline void _image_start(self, TablePlan* p, Image* img) noexcept nogil:
        cdef int k, i
        img.present = 1
        img.n = 0
        img.plan = <int>(p - self.plans)
        self.cgen += 1
        if self.cgen == 0:
            for k in range(self.nplans):
                for i in range(2 * self.plans[k].ncols):
                    self.plans[k].seen[i] = 0
            self.cgen = 1
        self.image_gen[img - &self.core.images[0]] = self.cgen

    cdef inline int _dedupe_column(self, TablePlan* p, Image* img, ColEntry* e) noexcept nogil:
        """1 if the column already appeared in this image (JSON last-wins at the first position)."""
        cdef ColEntry* o
        cdef Py_ssize_t slot = img - &self.core.images[0]
        cdef uint32_t gen = self.image_gen[slot]
        cdef Py_ssize_t i = slot * p.ncols + e.col
        if p.seen[i] == gen:
            o = &img.cols[p.at[i]]
            o.v = e.v
            o.zone = e.zone
            return 1
        p.seen[i] = gen
        p.at[i] = <int>img.n
        return 0

    cdef int _emit_old_image(self, Image* img, Cur* vd, Err* err) noexcept nogil:
        """The `_before` struct of one row: the old image (NULL: none) converted by _emit_typed,
        exactly as the new image is, into the old-image builders."""
        cdef int rc
        if self.core._old_image_begin(img != NULL) < 0:
            return _oom(err)
        rc = self._emit_typed(img, vd, err)
        self.core._old_image_end()
        return rc

    cdef int _emit_typed(self, Image* img, Cur* vd, Err* err) noexcept nogil:
        """Targets in order, each from the column compiled for it, found through the plan's index
        of the image (no per-row name lookups)."""
        cdef TablePlan* p
        cdef int j, col, rc
        cdef Py_ssize_t slot, base
        cdef uint32_t gen
        cdef ColEntry* e
        if img == NULL:
            return self.core._emit_nulls(err)
        p = &self.plans[img.plan]
        slot = img - &self.core.images[0]
        base = slot * p.ncols
        gen = self.image_gen[slot]
        for j in range(self.core.ntargets):
            col = p.tcol[j]
            if col >= 0 and p.seen[base + col] == gen:
                e = &img.cols[p.at[base + col]]
                if e.v.kind != J_NULL and e.v.kind != J_ABSENT:
                    rc = decode_text(self.core, p.text_dec[col], e, j, &self.elements, p.elem_first[col],
                                     p.elem_count[col], err)
                    if rc < 0:
                        if rc == RC_FAILED:
                            set_column(err, self.core._name_ptr(e), e.name_len)
                        return rc
                    continue
            if self.core._push_target_null(j) < 0:
                return _oom(err)
        return 0

    # ------------------------------------------------------------------ outputs
    cdef int _begin(self, Py_ssize_t rows, Py_ssize_t hint) except -1:
        return self.core.begin_batch(rows, hint, "the simple-protocol output columns")

    def finish(self, fields):
        self.core._claim()
        try:
            return self._finish_body(fields)
        finally:
            self.core.busy = 0

    def finish_batch(self, schema, extras=()):
        """The batch's rows as a RecordBatch of `schema`: the output columns its first fields
        name, then one per array of `extras` (int32/int64, one value per message: Kafka
        partitions, offsets), taken for each row from its message."""
        self.core._claim()
        try:
            return self._finish_batch_body(schema, extras)
        finally:
            self.core.busy = 0

    cdef object _finish_body(self, fields):
        self._values_ref = None
        return self.core.finish_batch_fields(fields, "the simple-protocol output columns")

    cdef object _finish_batch_body(self, schema, extras):
        self._values_ref = None
        return self.core.finish_record_batch(schema, extras, "the simple-protocol output columns")

    def reset(self):
        self.core._claim()
        try:
            return self._reset_body()
        finally:
            self.core.busy = 0

    cdef object _reset_body(self):
        """Drop the rows of a batch that failed."""
        self.core.end_batch()
        self._values_ref = None

    @property
    def target_names_py(self):
        return [t.name for t in self._targets]

    def append_control(self, row):
        self.core._claim()
        try:
            return self._append_control_body(row)
        finally:
            self.core.busy = 0

    cdef object _append_control_body(self, row):
        """One control / undecodable row (Python values; rare)."""
        cdef int j
        cdef int64_t v64
        cdef int32_t m32
        cdef ColumnSet* cs = &self.core.cols
        self._begin(1024, 1 << 16)
        op = row[_C.COL_OP].encode()
        var_push(&cs.var[CS_OP], <const char*>op, len(op))
        v64 = row[_C.COL_COMMIT_TS]
        fix_push(&cs.fix[CS_TS], &v64, sizeof(v64))
        m32 = row["_msg"]
        fix_push(&cs.fix[CS_MSG], &m32, sizeof(m32))
        fix_push_bool(&cs.fix[CS_HKO], 0)
        _push_py_text(&cs.var[CS_DDL], row.get(_C.COL_DDL))
        _push_py_text(&cs.var[CS_CCL], None)
        _push_py_text(&cs.var[self.col_ddl_type], row.get(_C.COL_DDL_TYPE))
        _push_py_text(&cs.var[self.col_table_schema], row.get(_C.COL_TABLE_SCHEMA))
        _push_py_int(&cs.fix[self.col_schema_version], row.get(_C.COL_SCHEMA_VERSION), 8)
        _push_py_int(&cs.fix[self.col_table_id], row.get(_C.COL_TABLE_ID), 8)
        _push_py_int(&cs.fix[self.col_build_ts], row.get(_C.COL_BUILT_TS), 8)
        fix_push_null(&cs.fix[self.col_ck_version])
        fix_push_null(&cs.fix[self.col_ck_corrupted])
        fix_push_null(&cs.fix[self.col_ck_current])
        fix_push_null(&cs.fix[self.col_ck_previous])
        fix_push_bool(&cs.fix[self.col_undecodable], bool(row.get(_C.COL_UNDECODABLE)))
        raw = row.get(_C.COL_RAW)
        if raw is None:
            var_push_null(&cs.var[self.col_raw])
        else:
            var_push(&cs.var[self.col_raw], <const char*>raw, len(raw))
        if self.core.typed:
            for j in range(self.core.ntargets):
                self.core._push_target_null(j)
            if self.core.with_old_image:
                self._emit_old_image(NULL, NULL, NULL)
        else:
            _push_py_text(&cs.var[CS_SCHEMA], row.get(_C.COL_SCHEMA))
            _push_py_text(&cs.var[CS_TABLE], row.get(_C.COL_TABLE))
            colset_push_null(cs, CS_AFTER)
            colset_push_null(cs, CS_BEFORE)

    # ------------------------------------------------------------------ the hot loop
    def run(self, values, Py_ssize_t start, Py_ssize_t msg_base=0):
        self.core._claim()
        try:
            return self._run_body(values, start, msg_base)
        finally:
            self.core.busy = 0

    cdef object _run_body(self, values, Py_ssize_t start, Py_ssize_t msg_base=0):
        """Decode values[start:] while they are DML with registered schemas; return the index of
        the first message left to the caller.  ``values`` is a list of bytes or a binary or
        large_binary Arrow array without nulls (read in place; it must stay alive until
        ``finish``)."""
        cdef Py_ssize_t n = len(values), i, k, total, saved, length
        cdef const uint8_t* p
        cdef Err* err = &self.core.err
        cdef ColumnSet* cs = &self.core.cols
        cdef int rc = 0
        cdef object v
        if values is not self._values_ref:
            self._values_ref = None
            input_fill(&self.input, values, 0, True)
            if self.input.missing:
                raise ValueError("null values reach the simple-protocol core")
            self._values_ref = values
        if not self.core.started:
            # output text is at most about the input size: reserve it once for the batch
            total = self.input.bytes
            for k in range(start):
                input_message(&self.input, k, &length)
                total -= length
            self._begin(n * 2 + 16, total + (1 << 16))
        self.pending_zone = None
        self.core._begin_call()
        i = start
        with nogil:
            while i < n:
                err.msg = msg_base + i
                saved = colset_rows(cs, CS_OP)      # the savepoint of this message
                p = input_message(&self.input, i, &length)
                rc = self._message(p, length, msg_base + i, err)
                if rc != RUN_OK:
                    # a message the front end handles (or a failed one) leaves no partial row
                    colset_truncate(cs, saved)
                    break
                i += 1
        if rc < 0:
            self._values_ref = None
            raise_decode_error(err, "simple-protocol", "value")
        if rc == RUN_STOP and err.has_column == 2:
            self.pending_zone = err.column[:err.column_len].decode("utf-8", "replace")
            self.pending_zone_at = err.offset
        return i

    cdef int _message(self, const uint8_t* p, Py_ssize_t n, Py_ssize_t msg, Err* err) noexcept nogil:
        cdef Cur c
        cdef DmlInfo d
        cdef int rc
        cdef Py_ssize_t rows
        cdef long long replaced
        c.start = p
        c.pos = p
        c.end = p + n
        err.part = PART_VALUE
        if self.avro:
            return _avro_message(self, &c, msg, err)
        else:
            _dml_start(&d)
            # Go's encoding/json always writes valid UTF-8 here: anything else is malformed
            if not utf8_valid(p, n):
                return fail_at(err, utf8_first_invalid(p, n), "malformed JSON: invalid UTF-8")
            rows = colset_rows(&self.core.cols, CS_OP)
            replaced = self.core.invalid_utf8_replaced
            rc = self._json_dml(&c, &d, err)
            if rc != RUN_OK and rc != RC_NO_MEMORY:
                # the one-pass reader judged members as they came; a repeated key must be judged
                # by its last copy only (Go's encoding/json, orjson): whatever it declined or
                # rejected is read again
                rc = self._read_again(&c, &d, rows, replaced, msg, err)
        if rc != RUN_OK:
            return rc
        return self._emit_dml(&d, msg, err)

    cdef int _read_again(self, Cur* c, DmlInfo* d, Py_ssize_t rows, long long replaced,
                         Py_ssize_t msg, Err* err) noexcept nogil:
        """The one second reading of a message whose first, streaming reading declined it: its
        streamed row dropped, the message read from its start into the row image, and that answer
        stands.  JSON reads every member and takes a repeated key's last copy (Go, orjson);
        Avro reads its maps into the image."""
        cdef int rc
        if d.streamed:
            self.rows_read_again += 1
            self._drop_streamed_row(rows, replaced)
        _message_again(c, d, err, msg)
        self.reading_again = 1
        if self.avro:
            rc = _avro_dml(self, c, d, err)
        else:
            rc = self._json_dml_last_wins(c, d, err)
        self.reading_again = 0
        return rc

    # ---- JSON
    cdef int _json_dml(self, Cur* c, DmlInfo* d, Err* err) noexcept nogil:
        """One pass that takes members as they come (data/old parsed in place with the plan).  It
        gives up (RUN_STOP) on a repeated key, so _json_dml_last_wins decides such messages."""
        cdef Span name, v
        cdef int r
        cdef IntVal iv
        cdef int direct = 0, which, rc, kid, epos = 0
        cdef bint stream
        cdef uint32_t seen = 0
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return RUN_STOP   # not an object: the slow path reports it
        self.core.names.len = 0
        self.avro_scratch.len = 0
        self.core.images[IMG_U].present = 0
        self.core.images[IMG_P].present = 0
        r = obj_open(c, err)
        while r == 0:
            # messages repeat Go's field order: try the key seen at this position last time
            kid = self.env_seq[epos] if epos < ENV_SEQ_MAX else -1
            if kid >= 0:
                rc = obj_key_expected(c, &name, <const uint8_t*>ENV_KEY_SET.quoted[kid], ENV_KEY_SET.lens[kid] + 3, 1,
                                      err)
                if rc < 0:
                    return -1
                if rc == 0:
                    kid = -1
            if kid < 0:
                if obj_key(c, &name, err) < 0:
                    return -1
                kid = key_id(&name, ENV_KEY_SET.texts, ENV_KEY_SET.lens, ENV_KEYS)
                if epos < ENV_SEQ_MAX:
                    self.env_seq[epos] = kid
            epos += 1
            if kid >= 0:
                if seen & (1U << kid):
                    return RUN_STOP     # a repeated key: the last copy wins (JSON, Go)
                seen |= 1U << kid
            # Go writes database/table/schemaVersion/type before data/old: with the plan known,
            # parse the image right here instead of skipping it and parsing it again
            which = -1
            if c.pos[0] == 123 and not name.esc:
                if kid == EK_DATA:
                    which = IMG_U
                elif kid == EK_OLD:
                    which = IMG_P
            if which >= 0 and d.plan < 0 and self._json_plan_early(d) == 0:
                pass
            if which >= 0 and d.plan >= 0:
                stream = self._json_streams(d, which)
                if stream:
                    d.streamed = 1
                    self._stream_start()
                rc = self._json_image_cur(c, &self.plans[d.plan], &self.core.images[which], stream, err)
                if rc == RUN_REREAD:
                    return rc
                if rc != 0:
                    return _image_declined(rc, err)
                if which == IMG_U:
                    d.has_data = 1
                else:
                    d.has_old = 1
                direct |= 1 if which == IMG_U else 2
                r = obj_more(c, err)
                continue
            if scan_value(c, &v, 2, err) < 0:
                return -1
            if kid == EK_DATA:
                direct &= ~1
            elif kid == EK_OLD:
                direct &= ~2
            if kid >= 0:
                rc = _envelope_value(self, kid, &v, d, err)
                if rc != RUN_OK:
                    return rc
            r = obj_more(c, err)
        if r < 0 or doc_end(c, err) < 0:
            return -1
        return self._json_dml_checked(c, d, direct, err)

    cdef int _json_dml_checked(self, Cur* c, DmlInfo* d, int direct, Err* err) noexcept nogil:
        """The envelope is read: a DML of a known schema has its images (those not parsed in
        place, `direct`) parsed now; anything else stops for the slow path."""
        cdef int rc
        if not (d.has_data or d.has_old) or d.database.kind != J_STR or d.table.kind != J_STR \
                or d.type.kind != J_STR or not d.has_commit_ts or not d.has_version:
            return RUN_STOP
        if d.type.n == 6 and memcmp(d.type.p, b"INSERT", 6) == 0:
            d.op = OP_INSERT
        elif d.type.n == 6 and memcmp(d.type.p, b"UPDATE", 6) == 0:
            d.op = OP_UPDATE
        elif d.type.n == 6 and memcmp(d.type.p, b"DELETE", 6) == 0:
            d.op = OP_DELETE
        else:
            return RUN_STOP
        if d.plan < 0:
            self._find_json_plan(d)
        if d.plan < 0:
            return RUN_STOP
        if self.stop_on_claim_check and d.ccl.kind == J_STR:
            return RUN_STOP
        if d.has_data and not (direct & 1):
            rc = self._json_image(&d.data_span, &self.plans[d.plan], &self.core.images[IMG_U], c, err)
            if rc != 0:
                return _image_declined(rc, err)
        if d.has_old and not (direct & 2):
            rc = self._json_image(&d.old_span, &self.plans[d.plan], &self.core.images[IMG_P], c, err)
            if rc != 0:
                return _image_declined(rc, err)
        fix_scratch_spans(&self.core.images[IMG_U], self.avro_scratch.data)
        fix_scratch_spans(&self.core.images[IMG_P], self.avro_scratch.data)
        return RUN_OK

    cdef int _json_dml_last_wins(self, Cur* c, DmlInfo* d, Err* err) noexcept nogil:
        """The envelope read as JSON (and Go's decoder) reads it: every member scanned, a repeated
        key's last copy the only one interpreted, images parsed from their final spans."""
        cdef Span name, v
        cdef Span last[16]
        cdef uint32_t present = 0
        cdef int r, kid, rc
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return RUN_STOP
        self.core.names.len = 0
        self.avro_scratch.len = 0
        self.core.images[IMG_U].present = 0
        self.core.images[IMG_P].present = 0
        r = obj_open(c, err)
        while r == 0:
            if obj_key(c, &name, err) < 0 or scan_value(c, &v, 2, err) < 0:
                return -1
            kid = key_id(&name, ENV_KEY_SET.texts, ENV_KEY_SET.lens, ENV_KEYS)
            if kid >= 0:
                last[kid] = v
                present |= 1U << kid
            r = obj_more(c, err)
        if r < 0 or doc_end(c, err) < 0:
            return -1
        for kid in range(ENV_KEYS):
            if present & (1U << kid):
                rc = _envelope_value(self, kid, &last[kid], d, err)
                if rc != RUN_OK:
                    return rc
        return self._json_dml_checked(c, d, 0, err)



    cdef bint _json_streams(self, const DmlInfo* d, int which) noexcept nogil:
        """Whether the image `which`, read in place with the plan known (so the type is an
        unescaped INSERT, UPDATE or DELETE), is the one streamed into the typed targets."""
        if d.type.esc:
            return 0
        return self._streamed_image(d.plan, OP_DELETE if memcmp(d.type.p, b"DELETE", 6) == 0 else OP_INSERT) == which

    cdef inline bint _own_table(self, int k) noexcept nogil:
        """Whether plan k's table is the typed output's."""
        cdef TablePlan* p = &self.plans[k]
        return self.core.is_own_table(<const uint8_t*>(self.keys.data + p.db_off), p.db_len,
                                      <const uint8_t*>(self.keys.data + p.tbl_off), p.tbl_len)

    cdef int _streamed_image(self, int k, int op) noexcept nogil:
        """The image (IMG_U: data, IMG_P: old for a DELETE) a typed row of plan k streams into its
        targets, or -1: not typed, another table's row, a reading again, or a DELETE whose old image
        the `_before` column needs kept."""
        if not self.core.typed or self.reading_again or not self._own_table(k):
            return -1
        if op == OP_DELETE and self.core.with_old_image:
            return -1
        self.cur_plan = k
        return IMG_P if op == OP_DELETE else IMG_U

    cdef int _json_plan_early(self, DmlInfo* d) noexcept nogil:
        """Resolve the plan once database, table, schemaVersion and a DML type were seen."""
        if d.database.kind != J_STR or d.table.kind != J_STR or not d.has_version or d.type.kind != J_STR:
            return -1
        if not (d.type.n == 6 and (memcmp(d.type.p, b"INSERT", 6) == 0 or memcmp(d.type.p, b"UPDATE", 6) == 0
                                   or memcmp(d.type.p, b"DELETE", 6) == 0)):
            return -1
        self._find_json_plan(d)
        return 0 if d.plan >= 0 else -1

    cdef void _find_json_plan(self, DmlInfo* d) noexcept nogil:
        cdef const uint8_t* dp
        cdef const uint8_t* tp
        cdef Py_ssize_t dn, tn
        if span_bytes(&d.database, &self.core.tmp, &dp, &dn) < 0 \
                or span_bytes(&d.table, &self.core.tmp2, &tp, &tn) < 0:
            d.plan = -1
            return
        d.plan = self._find_plan(dp, dn, tp, tn, d.schema_version)

    cdef int _json_checksum(self, const Span* s, DmlInfo* d, Err* err) noexcept nogil:
        """The checksum object, a repeated field's last copy winning: 0, or -1 malformed.  The
        first member of a wrong form (in the order version, corrupted, current, previous) is kept
        in d.ck_fault and fails the row once the row is otherwise whole."""
        cdef Cur c
        cdef Span name, v, version, corrupted, current, previous
        cdef int r
        cdef uint64_t u
        c.start = s.p - s.off
        c.pos = s.p
        c.end = s.p + s.n
        version.kind = J_ABSENT
        corrupted.kind = J_ABSENT
        current.kind = J_ABSENT
        previous.kind = J_ABSENT
        r = obj_open(&c, err)
        while r == 0:
            if obj_key(&c, &name, err) < 0 or scan_value(&c, &v, 3, err) < 0:
                return -1
            if key_is(&name, b"version", 7):
                version = v
            elif key_is(&name, b"corrupted", 9):
                corrupted = v
            elif key_is(&name, b"current", 7):
                current = v
            elif key_is(&name, b"previous", 8):
                previous = v
            r = obj_more(&c, err)
        if r < 0:
            return -1
        d.has_ck = 1
        d.ck_fault = CK_OK
        if version.kind != J_ABSENT:
            if _json_u64_or_minus_zero(&version, &u) < 0 or u > 2147483647:
                return _checksum_fault(d, CK_VERSION, &version)
            d.ck_version = <int64_t>u
        if corrupted.kind != J_ABSENT:
            if corrupted.kind != J_TRUE and corrupted.kind != J_FALSE:
                return _checksum_fault(d, CK_CORRUPTED, &corrupted)
            d.ck_corrupted = corrupted.kind == J_TRUE
        if current.kind != J_ABSENT:
            if _json_u64_or_minus_zero(&current, &d.ck_current) < 0:
                return _checksum_fault(d, CK_CURRENT, &current)
            d.ck_current &= 0xFFFFFFFFULL
        if previous.kind != J_ABSENT:
            if _json_u64_or_minus_zero(&previous, &d.ck_previous) < 0:
                return _checksum_fault(d, CK_PREVIOUS, &previous)
            d.ck_previous &= 0xFFFFFFFFULL
        return 0

    cdef int _json_image(self, const Span* s, TablePlan* p, Image* img, Cur* outer, Err* err) noexcept nogil:
        """Parse a data/old object recorded as a span (fields came in an unusual order)."""
        cdef Cur c
        c.start = outer.start
        c.pos = s.p
        c.end = s.p + s.n
        return self._json_image_cur(&c, p, img, 0, err)

    cdef int _json_image_cur(self, Cur* cp, TablePlan* p, Image* img, bint stream, Err* err) noexcept nogil:
        """Parse a data/old object at the cursor with the table plan: 0 ok, 1 stop (zone),
        RC_FAILED, RC_NO_MEMORY, or (streaming into the typed targets) RUN_REREAD."""
        cdef Span v, ck
        cdef int r, r2, j, dup, z
        cdef ColEntry* e
        cdef Cur c = cp[0]
        r = self._json_image_body(&c, p, img, stream, err)
        cp.pos = c.pos
        return r

    cdef int _json_image_body(self, Cur* cc, TablePlan* p, Image* img, bint stream, Err* err) noexcept nogil:
        cdef Span v, ck
        cdef int r, r2, j, dup, z
        cdef ColEntry* e
        cdef Cur c = cc[0]
        cdef Py_ssize_t pos = 0, k, scratch_start
        cdef int ts_objects = 0
        self._image_start(p, img)
        r = obj_open(&c, err)
        while r == 0:
            if img.n == img.cap and image_make_room(img) < 0:
                return _oom(err)
            e = &img.cols[img.n]
            # rows of a table repeat their key order: try the column seen at this position
            j = p.seq[pos] if pos < p.ncols else -1
            if j >= 0 and p.name_kind[j]:
                r2 = obj_key_expected(&c, &e.name, p.quoted.data + p.name_off[j] + 3 * j,
                                      p.name_off[j + 1] - p.name_off[j] + 3, p.name_kind[j] == 1, err)
                if r2 < 0:
                    return -1
                if r2 == 0:
                    j = -1
            else:
                j = -1
            if j >= 0:
                e.name_off = -1
                e.name_len = e.name.n
            else:
                if obj_key(&c, &e.name, err) < 0:
                    return -1
                if e.name.esc:
                    e.name_off = self.core.names.len
                    if json_unescape(e.name.p, e.name.n, &self.core.names) < 0:
                        return _oom(err)
                    e.name_len = self.core.names.len - e.name_off
                else:
                    e.name_off = -1
                    e.name_len = e.name.n
                j = self._resolve_column(p, pos, self.core._name_ptr(e), e.name_len)
                if j < 0:
                    set_column(err, self.core._name_ptr(e), e.name_len)
                    return fail_at(err, e.name.off, "column is not in the message's schema version")
            e.hash = 0
            pos += 1
            e.col = j
            e.t = p.type_code[j]
            e.f = p.flags[j]
            e.has_t = 1
            e.zone = -1
            scratch_start = self.avro_scratch.len
            r2 = TS_OTHER_FORM
            if e.t == T_TIMESTAMP and c.pos[0] == 123:
                r2 = self._json_timestamp_here(&c, e, err)
            if r2 == TS_OTHER_FORM:
                if scan_value(&c, &e.v, 3, err) < 0:
                    return -1
                r2 = self._json_timestamp(e, err) if e.v.kind == J_OBJ and e.t == T_TIMESTAMP else 0
            if r2 != 0:
                if r2 == RC_NO_MEMORY:
                    return r2
                if stream:
                    return RUN_REREAD
                _forget_error(err)   # judged again at the end: a later copy may replace it
                ts_objects = 1
            if stream:
                r2 = self._stream_target(p, e, scratch_start, err)
                if r2 != 0:
                    return r2
            elif self._dedupe_column(p, img, e) == 0:
                img.n += 1
            r = obj_more(&c, err)
        if r < 0:
            return -1
        # a TIMESTAMP object that failed is judged again once the image is complete: only a
        # repeated column's last copy counts (JSON last-wins), as in the twin
        if ts_objects:
            for k in range(img.n):
                e = &img.cols[k]
                if e.v.kind == J_OBJ and e.t == T_TIMESTAMP:
                    r2 = self._json_timestamp(e, err)
                    if r2 == RC_NO_MEMORY:
                        return r2
                    if r2 != 0:
                        return -1 if err.failed else 1
        if stream and self._stream_end() < 0:
            return _oom(err)
        cc.pos = c.pos
        return 0

    cdef int _json_timestamp(self, ColEntry* e, Err* err) noexcept nogil:
        """{"location":..,"value":..} → e.zone and e.v (the wall-clock string)."""
        cdef Cur c
        cdef Span name, v, loc, val
        cdef int r
        c.start = e.v.p - e.v.off
        c.pos = e.v.p
        c.end = e.v.p + e.v.n
        loc.kind = J_ABSENT
        val.kind = J_ABSENT
        r = obj_open(&c, err)
        while r == 0:
            if obj_key(&c, &name, err) < 0 or scan_value(&c, &v, 4, err) < 0:
                return -1
            if key_is(&name, b"location", 8):
                loc = v
            elif key_is(&name, b"value", 5):
                val = v
            r = obj_more(&c, err)
        if r < 0:
            return -1
        return self._timestamp_parts(e, &loc, &val, err)

    cdef int _json_timestamp_here(self, Cur* c, ColEntry* e, Err* err) noexcept nogil:
        """scan_value and _json_timestamp in one pass, for the spelling TiCDC writes:
        {"location":"..","value":".."}, no spaces.  The same outcome as those two (e.v the
        object's span, then the wall-clock string), or TS_OTHER_FORM with the cursor where it was
        and nothing recorded: any other spelling, and any error, is theirs to find and name."""
        cdef const uint8_t* at = c.pos
        cdef Span loc, val
        if c.end - at < 13 or not bytes_eq(at, <const uint8_t*>b'{"location":"', 13):
            return TS_OTHER_FORM
        c.pos = at + 12
        if scan_string(c, &loc, err) < 0:
            return self._timestamp_other_form(c, at, err)
        if c.end - c.pos < 10 or not bytes_eq(c.pos, <const uint8_t*>b',"value":"', 10):
            return self._timestamp_other_form(c, at, err)
        c.pos += 9
        if scan_string(c, &val, err) < 0:
            return self._timestamp_other_form(c, at, err)
        if c.pos >= c.end or c.pos[0] != 125:
            return self._timestamp_other_form(c, at, err)
        c.pos += 1
        e.v.p = at
        e.v.n = c.pos - at
        e.v.off = at - c.start
        e.v.kind = J_OBJ
        e.v.esc = 0
        e.v.ascii = 1
        e.v.neg = 0
        e.v.in_scratch = 0
        return self._timestamp_parts(e, &loc, &val, err)

    cdef int _timestamp_other_form(self, Cur* c, const uint8_t* at, Err* err) noexcept nogil:
        """Give up the one-pass read: the cursor back at the object's '{' and nothing recorded
        (a string scan may have failed), so the general path reads the value from scratch."""
        _forget_error(err)
        c.pos = at
        return TS_OTHER_FORM

    cdef int _timestamp_parts(self, ColEntry* e, const Span* loc_in, const Span* val_in, Err* err) noexcept nogil:
        """The members of a TIMESTAMP object (e.v its span) → e.zone and e.v."""
        cdef Span loc = loc_in[0]
        cdef Span val = val_in[0]
        cdef Py_ssize_t start
        if loc.kind != J_STR or val.kind != J_STR:
            set_column(err, self.core._name_ptr(e), e.name_len)
            return fail_at(err, e.v.off, "TIMESTAMP value must be {location, value} strings")
        if loc.esc:
            self.core.tmp.len = 0
            if json_unescape(loc.p, loc.n, &self.core.tmp) < 0:
                return _oom(err)
            loc.p = self.core.tmp.data      # only read by _set_timestamp's zone lookup, right now
            loc.n = self.core.tmp.len
            loc.esc = 0
        if val.esc:
            start = self.avro_scratch.len
            if json_unescape(val.p, val.n, &self.avro_scratch) < 0:
                return _oom(err)
            span_in_scratch(&val, start, self.avro_scratch.len - start)
            val.ascii = 0
        return self._set_timestamp(e, &loc, &val, err)

    cdef int _set_timestamp(self, ColEntry* e, const Span* loc, const Span* val, Err* err) noexcept nogil:
        cdef int z = self.core._find_zone(loc.p, loc.n)
        if z < 0:
            # ask the caller to load the zone, then run again from this message
            err.has_column = 2
            err.offset = loc.off          # where the location is, should it never load
            if loc.n > 0:
                memcpy(err.column, loc.p, loc.n if loc.n < 255 else 255)
            err.column_len = loc.n if loc.n < 255 else 255
            return 1
        e.zone = z
        e.v = val[0]
        return 0

    cdef inline void _drop_streamed_row(self, Py_ssize_t rows, long long replaced) noexcept nogil:
        """Cut the column set back to the row count before a streamed row, and take back what its
        text counted as replaced."""
        colset_truncate(&self.core.cols, rows)
        self.core.invalid_utf8_replaced = replaced

    cdef inline void _stream_start(self) noexcept nogil:
        self.row_gen += 1
        if self.row_gen == 0:
            memset(self.target_gen, 0, max(self.core.ntargets, 1) * sizeof(uint32_t))
            self.row_gen = 1

    cdef inline int _stream_target(self, TablePlan* p, ColEntry* e, Py_ssize_t scratch_start,
                                   Err* err) noexcept nogil:
        """Write a streamed map entry into its target: 0, RC_NO_MEMORY, or RUN_REREAD when the
        image path must decide (a repeated column: the last copy wins at the first one's place;
        a value that fails or stops)."""
        cdef int tj = p.col_target[e.col]
        cdef int rc
        if tj < 0:
            return 0
        if self.target_gen[tj] == self.row_gen:
            return RUN_REREAD
        self.target_gen[tj] = self.row_gen
        if e.v.kind == J_NULL or e.v.kind == J_ABSENT:
            return self.core._push_target_null(tj)
        if e.v.in_scratch:
            e.v.p = self.avro_scratch.data + <uintptr_t>e.v.p
            e.v.in_scratch = 0
        rc = decode_text(self.core, p.text_dec[e.col], e, tj, &self.elements, p.elem_first[e.col],
                         p.elem_count[e.col], err)
        if rc == RC_NO_MEMORY:
            return rc
        # the text form is spent: the next value reuses its scratch
        self.avro_scratch.len = scratch_start
        return 0 if rc == 0 else RUN_REREAD

    cdef inline int _stream_end(self) noexcept nogil:
        """A null in every target the streamed map did not name, as _emit_typed gives them."""
        cdef int j
        for j in range(self.core.ntargets):
            if self.target_gen[j] != self.row_gen and self.core._push_target_null(j) < 0:
                return RC_NO_MEMORY
        return 0

    # ---- one DML row
    cdef int _push_generic_only(self, const DmlInfo* d, Err* err) noexcept nogil:
        """A DML row's columns that only generic output has: the table schema (null on a DML),
        table id, build ts and the row checksum."""
        cdef ColumnSet* cs = &self.core.cols
        cdef int32_t ck32
        if var_push_null(&cs.var[self.col_table_schema]) < 0 \
                or _push_opt(&cs.fix[self.col_table_id], &d.table_id, sizeof(d.table_id), d.has_table_id) < 0 \
                or _push_opt(&cs.fix[self.col_build_ts], &d.build_ts, sizeof(d.build_ts), d.has_build_ts) < 0:
            return _oom(err)
        if d.has_ck:
            ck32 = <int32_t>d.ck_version
            if fix_push(&cs.fix[self.col_ck_version], &ck32, sizeof(ck32)) < 0 \
                    or fix_push_bool(&cs.fix[self.col_ck_corrupted], d.ck_corrupted) < 0 \
                    or fix_push(&cs.fix[self.col_ck_current], &d.ck_current, sizeof(d.ck_current)) < 0 \
                    or fix_push(&cs.fix[self.col_ck_previous], &d.ck_previous, sizeof(d.ck_previous)) < 0:
                return _oom(err)
        elif fix_push_null(&cs.fix[self.col_ck_version]) < 0 or fix_push_null(&cs.fix[self.col_ck_corrupted]) < 0 \
                or fix_push_null(&cs.fix[self.col_ck_current]) < 0 or fix_push_null(&cs.fix[self.col_ck_previous]) < 0:
            return _oom(err)
        return 0

    cdef int _emit_dml(self, DmlInfo* d, Py_ssize_t msg, Err* err) noexcept nogil:
        cdef Image* a = NULL
        cdef Image* b = NULL
        cdef int32_t m32
        cdef int64_t v64
        cdef int rc
        cdef TablePlan* p = &self.plans[d.plan]
        # a copy: the column arrays never move during a call, and a local lets the compiler keep
        # their addresses in registers across the appends (a store into a buffer may alias a field)
        cdef ColumnSet cs = self.core.cols
        self.cur_plan = d.plan
        if d.op == OP_INSERT:
            if not d.has_data:
                return fail_at(err, d.type_at, "INSERT without the image it needs")
            a = &self.core.images[IMG_U]
        elif d.op == OP_UPDATE:
            if not (d.has_data and d.has_old):
                return fail_at(err, d.type_at, "UPDATE without the image it needs")
            a = &self.core.images[IMG_U]
            b = &self.core.images[IMG_P]
        else:
            if not d.has_old:
                return fail_at(err, d.type_at, "DELETE without the image it needs")
            b = &self.core.images[IMG_P]
        if d.commit_ts > 9223372036854775807ULL:
            return fail_at(err, d.commit_ts_at, "commitTs out of int64 range")
        if d.schema_version > 9223372036854775807ULL:
            return fail_at(err, d.schema_version_at, "schemaVersion out of int64 range")
        if d.has_table_id and d.table_id > 9223372036854775807ULL:
            return fail_at(err, d.table_id_at, "tableID out of int64 range")
        if d.has_build_ts and d.build_ts > 9223372036854775807ULL:
            return fail_at(err, d.build_ts_at, "buildTs out of int64 range")
        if self.core.typed and not self._own_table(d.plan):
            return RUN_OK
        if var_push(&cs.var[CS_OP], OP_TEXT[d.op], OP_LEN[d.op]) < 0 or fix_push(&cs.fix[CS_TS], &d.commit_ts, sizeof(d.commit_ts)) < 0:
            return _oom(err)
        m32 = <int32_t>msg
        if fix_push(&cs.fix[CS_MSG], &m32, sizeof(m32)) < 0 or fix_push_bool(&cs.fix[CS_HKO], d.hko and d.ccl.kind != J_STR) < 0:
            return _oom(err)
        if var_push_null(&cs.var[CS_DDL]) < 0 or var_push_null(&cs.var[self.col_ddl_type]) < 0 \
                or var_push_null(&cs.var[self.col_raw]) < 0:
            return _oom(err)
        rc = self.core._push_text(CS_CCL, &d.ccl, err)
        if rc < 0:
            return rc
        if d.ck_fault != CK_OK:
            return fail_at(err, d.ck_fault_at, CK_FAULT_TEXT[d.ck_fault])
        if fix_push(&cs.fix[self.col_schema_version], &d.schema_version, sizeof(d.schema_version)) < 0 \
                or fix_push_bool(&cs.fix[self.col_undecodable], 0) < 0:
            return _oom(err)
        if not self.core.typed:
            # typed output leaves these out (columns.SIMPLE_TYPED.unused): there they are not
            # written, and finish hands them over empty
            rc = self._push_generic_only(d, err)
            if rc < 0:
                return rc
        if self.core.typed:
            rc = 0 if d.streamed else self._emit_typed(a if a != NULL else b, NULL, err)
            if rc < 0 or not self.core.with_old_image:
                return rc
            return self._emit_old_image(b, NULL, err)
        if var_push(&cs.var[CS_SCHEMA], self.keys.data + p.db_off, p.db_len) < 0 \
                or var_push(&cs.var[CS_TABLE], self.keys.data + p.tbl_off, p.tbl_len) < 0:
            return _oom(err)
        rc = self.core._emit_map(CS_AFTER, a, err)
        if rc < 0:
            return rc
        rc = self.core._emit_map(CS_BEFORE, b, err)
        if rc < 0:
            return rc
        return 0

    # ---- simple-protocol value rules on top of the open ones
    cdef int _render(self, const ColEntry* e, VarCol* out, Err* err) noexcept nogil:
        cdef int kind = TYPE_KIND[e.t]
        if e.v.kind == J_NULL or e.v.kind == J_ABSENT:
            return _close(out, 0, err)
        if e.zone >= 0:
            return self._utc_text(e, out, err)
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "expected a string value")
        if kind == K_INT or kind == K_UINT or kind == K_ENUM or kind == K_FLOAT32 or kind == K_FLOAT64:
            return self._number_text(e, kind, out, err)
        return self.core._render(e, out, err)

    cdef inline int _number_text(self, const ColEntry* e, int kind, VarCol* out, Err* err) noexcept nogil:
        """An integer or float column's value, which the simple protocol's JSON writes as a
        string: its text checked and written out."""
        cdef const uint8_t* p
        cdef Py_ssize_t ln
        cdef int rc = self.core._str_bytes(&e.v, &p, &ln, err)
        if rc < 0:
            return rc
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if json_number_syntax(p, ln) < 0:
                return fail_at(err, e.v.off, "invalid number")
            return _close_shortest(out, p, ln, kind, &self.core.numtmp, 1, e.v.off, err)
        return _close_int_text(out, e.t, e.f, p, ln, e.v.off, "invalid integer", err)

    cdef int _utc_text(self, const ColEntry* e, VarCol* out, Err* err) noexcept nogil:
        cdef const char* why = NULL
        cdef int64_t wall, utc, days, secs, frac, rem
        cdef int z = e.zone, y, m, d, fd = 0, k
        cdef char txt[48]
        cdef int n
        cdef Py_ssize_t i
        if parse_datetime_cached(&self.core.walls, e.v.p, e.v.n, &wall, &why) < 0:
            if e.v.n >= 10 and memcmp(e.v.p, b"0000-00-00", 10) == 0 and utf8_valid(e.v.p, e.v.n):
                if buf_append(&out.data, e.v.p, e.v.n) < 0:
                    return _oom(err)
                return _close(out, 1, err)
            return fail_at(err, e.v.off, why)
        if self.core.zone_n[z] < 0:
            return self.core._unknown_zone(z, e, err)
        utc = wall - zone_offset(self.core.zone_bounds[z], self.core.zone_offsets[z], self.core.zone_n[z], wall)
        if utc == wall and e.v.n >= 19:
            # at offset zero the text is already its UTC text: parse_datetime takes only the
            # zero-padded "YYYY-MM-DD HH:MM:SS[.f{1,6}]" form, which is the form written here
            if buf_append_short(&out.data, e.v.p, e.v.n) < 0 or buf_push_byte(&out.data, 90) < 0:
                return _oom(err)
            return _close(out, 1, err)
        days = utc // DAY_US          # C division truncates: make it floor
        rem = utc - days * DAY_US
        if rem < 0:
            days -= 1
            rem += DAY_US
        secs = rem // 1000000
        frac = rem % 1000000
        civil_from_days(days, &y, &m, &d)
        for i in range(e.v.n):
            if e.v.p[i] == 46:
                fd = <int>(e.v.n - i - 1)
                break
        if 0 <= y <= 9999:             # the common case, without printf
            _put2(txt, y // 100)
            _put2(txt + 2, y % 100)
            txt[4] = 45
            _put2(txt + 5, m)
            txt[7] = 45
            _put2(txt + 8, d)
            txt[10] = 32
            _put2(txt + 11, <int>(secs // 3600))
            txt[13] = 58
            _put2(txt + 14, <int>(secs // 60 % 60))
            txt[16] = 58
            _put2(txt + 17, <int>(secs % 60))
            n = 19
        else:
            n = snprintf(txt, 48, "%04d-%02d-%02d %02d:%02d:%02d", y, m, d, <int>(secs // 3600),
                         <int>(secs // 60 % 60), <int>(secs % 60))
        if fd > 0:
            txt[n] = 46
            _put2(txt + n + 1, <int>(frac // 10000))
            _put2(txt + n + 3, <int>(frac // 100 % 100))
            _put2(txt + n + 5, <int>(frac % 100))
            n += 1 + fd
        txt[n] = 90
        n += 1
        if buf_append_short(&out.data, txt, n) < 0:
            return _oom(err)
        return _close(out, 1, err)

cdef int _simpleplan_render(void* owner, const ColEntry* e, VarCol* out, Err* err) noexcept nogil:
    """The core renders a column's text through this: the simple protocol's value rules."""
    return (<SimplePlan>owner)._render(e, out, err)


cdef extern from "Python.h":
    char* PyBytes_AS_STRING(object)
    Py_ssize_t PyBytes_GET_SIZE(object)

cdef int64_t INT64_MIN_ = -9223372036854775807LL - 1
cdef int64_t DAY_US = 86400000000LL


cdef inline int _image_declined(int rc, const Err* err) noexcept nogil:
    """What a message returns when its image was not read (rc of _json_image: 1, RC_FAILED or
    RC_NO_MEMORY): a fault, an allocation failure, or else a stop for the slow path."""
    if rc == RC_NO_MEMORY:
        return RC_NO_MEMORY
    return RC_FAILED if err.failed else RUN_STOP


cdef inline void _message_again(Cur* c, DmlInfo* d, Err* err, Py_ssize_t msg) noexcept nogil:
    """A message's second reading starts where the first did: cursor at its start, defaults in
    d, an empty error record for this message's value."""
    c.pos = c.start
    _dml_start(d)
    memset(err, 0, sizeof(Err))
    err.msg = msg
    err.part = PART_VALUE


cdef inline void _forget_error(Err* err) noexcept nogil:
    err.failed = 0
    err.has_column = 0
    err.column_len = 0


cdef inline uint64_t _plan_hash(const uint8_t* db, Py_ssize_t dbn, const uint8_t* tb, Py_ssize_t tbn,
                                uint64_t version) noexcept nogil:
    return (name_hash(db, dbn) * 31) ^ name_hash(tb, tbn) ^ (version * 0x9E3779B97F4A7C15ULL)


cdef int _json_u64(const Span* v, uint64_t* out) noexcept nogil:
    cdef IntVal iv
    if v.kind != J_INT or parse_int_text(v.p, v.n, &iv) != 0 or iv.neg:
        return -1
    out[0] = iv.mag
    return 0


cdef int _json_u64_or_minus_zero(const Span* v, uint64_t* out) noexcept nogil:
    """_json_u64 that also takes -0, which JSON readers (Go's, orjson) read as the integer 0."""
    cdef IntVal iv
    if v.kind == J_INT and parse_int_text(v.p, v.n, &iv) == 0 and iv.neg and iv.mag == 0:
        out[0] = 0
        return 0
    return _json_u64(v, out)


cdef inline int _checksum_fault(DmlInfo* d, int fault, const Span* v) noexcept nogil:
    d.ck_fault = fault
    d.ck_fault_at = v.off
    return 0


cdef inline void _put2(char* out, int v) noexcept nogil:
    out[0] = <char>(48 + v // 10)
    out[1] = <char>(48 + v % 10)


cdef void _push_py_text(VarCol* col, object v):
    cdef bytes b
    if v is None:
        var_push_null(col)
    else:
        b = v.encode("utf-8")
        var_push(col, <const char*>b, len(b))


cdef void _push_py_int(FixCol* col, object v, int width):
    cdef int64_t x
    if v is None:
        fix_push_null(col)
    else:
        x = v
        fix_push(col, &x, sizeof(x))


cdef inline int _envelope_value(SimplePlan plan, int kid, const Span* v, DmlInfo* d, Err* err) noexcept nogil:
    """One envelope member's value into d: RUN_OK, or RUN_STOP for a form left to the slow
    path (control messages, wrong JSON types)."""
    if kid == EK_TYPE:
        if v.kind != J_STR:
            return RUN_STOP
        d.type = v[0]
        d.type_at = v.off
    elif kid == EK_DATABASE:
        if v.kind != J_STR:
            return RUN_STOP
        d.database = v[0]
    elif kid == EK_TABLE:
        if v.kind != J_STR:
            return RUN_STOP
        d.table = v[0]
    elif kid == EK_DATA:
        if v.kind == J_OBJ:
            d.data_span = v[0]
            d.has_data = 1
        elif v.kind == J_NULL:
            d.has_data = 0
        else:
            return RUN_STOP
    elif kid == EK_OLD:
        if v.kind == J_OBJ:
            d.old_span = v[0]
            d.has_old = 1
        elif v.kind == J_NULL:
            d.has_old = 0
        else:
            return RUN_STOP
    elif kid == EK_COMMITTS:
        if _json_u64(v, &d.commit_ts) < 0:
            return RUN_STOP
        d.has_commit_ts = 1
        d.commit_ts_at = v.off
    elif kid == EK_SCHEMAVERSION:
        if _json_u64(v, &d.schema_version) < 0:
            return RUN_STOP
        d.has_version = 1
        d.schema_version_at = v.off
    elif kid == EK_TABLEID:
        if _json_u64(v, &d.table_id) < 0:
            return RUN_STOP
        d.has_table_id = 1
        d.table_id_at = v.off
    elif kid == EK_BUILDTS:
        if _json_u64(v, &d.build_ts) < 0:
            return RUN_STOP
        d.has_build_ts = 1
        d.build_ts_at = v.off
    elif kid == EK_CLAIMCHECKLOCATION:
        if v.kind == J_STR:
            d.ccl = v[0]
        elif v.kind != J_NULL:
            return RUN_STOP
    elif kid == EK_HANDLEKEYONLY:
        if v.kind == J_TRUE:
            d.hko = 1
        elif v.kind != J_FALSE and v.kind != J_NULL:
            return RUN_STOP
    elif kid == EK_CHECKSUM:
        if v.kind == J_OBJ:
            if plan._json_checksum(v, d, err) != 0:
                return -1
        elif v.kind != J_NULL:
            return RUN_STOP
    elif kid == EK_TABLESCHEMA or kid == EK_PRETABLESCHEMA or kid == EK_SQL:
        return RUN_STOP
    return RUN_OK
