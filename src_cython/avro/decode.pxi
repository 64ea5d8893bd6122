# Avro protocol (Confluent framing): each writer schema id compiles once into a field plan; the
# record walk reads the Avro binary and writes the column builders of the plan's core
# (plan/core.pxi) directly.  Unknown schema ids, DDL values (0x01) and malformed framing stop
# `run` before anything of that message is written; the Python front end fetches schemas
# (registry) or reports the error.

cdef enum:
    AV_NULL = 0
    AV_BOOLEAN = 1
    AV_INT = 2
    AV_LONG = 3
    AV_FLOAT = 4
    AV_DOUBLE = 5
    AV_BYTES = 6
    AV_STRING = 7
    AV_FIXED = 8
    AV_ENUM = 9
    AV_RECORD = 10

cdef enum:
    ROLE_COLUMN = 0
    ROLE_OP = 1
    ROLE_COMMIT_TS = 2
    ROLE_PHYSICAL = 3
    ROLE_CHECKSUM = 4
    ROLE_CORRUPTED = 5
    ROLE_CKVER = 6
    ROLE_BEFORE = 7

cdef struct AvBranch:
    int kind
    int dec_scale        # -1: not a decimal
    int size             # fixed
    int sym_first        # enum: first symbol in WPlan.sym_off
    int nsym
    int sub_first        # record: its fields in WPlan.fields
    int sub_count
    int dec              # FieldDecoder of this branch in a typed row (DEC_CHECK: no target)
    int gen              # GenericDecoder of this branch (generic output)
    int nulls_first      # _ticdc_before's record: the old-image targets none of its fields fill,
    int nulls_count      # WPlan.nulls[nulls_first:+nulls_count]


cdef struct AvField:
    int role
    int is_union
    int nbranch
    int branch0
    int type_code
    uint32_t flags
    int scale
    Py_ssize_t name_off
    Py_ssize_t name_len
    uint64_t hash
    int target             # typed: the target this field fills, -1 none
    int64_t type_lo        # the range of the column's type (integer kinds), for GEN_INT
    uint64_t type_hi
    # DEC_INT: the Avro longs that fit both the column's type and the target (and an int
    # branch's 32 bits), stored at int_width bytes without further checks; 0: always checked
    int int_width
    int64_t int_lo
    int64_t int_hi
    int key_run            # generic: the KeyRun of the record the field is in


# Typed output: every branch of every column field of a plan whose rows are output gets one
# decoder (FieldDecoder, plan/decoders.pxi) when the plan is compiled (_branch_decoder), from the
# column's type, the branch's Avro kind and the target's writer.  The record walk reads the union
# index and hands the value to that decoder, which writes the target's builder (the old image's
# builders inside _ticdc_before); a value it cannot convert is kept as the row's deferred error.
# Generic output: every branch of every column field gets a GenericDecoder (_generic_decoder).


# How a record is read: its values are written by their decoders (typed), rendered as text
# into a map's entries (generic), or only checked.
cdef enum WalkMode:
    WALK_CHECK = 0
    WALK_FILL = 1       # typed; _ticdc_before fills the old image (old_image=True)
    WALK_REFILL = 2     # typed, the same record again into the old image: _ticdc_before checked
    WALK_RENDER = 3     # generic, into the map render_col; _ticdc_before into the before map
    WALK_RERENDER = 4   # generic, the same record again into the before map: _ticdc_before checked


# Generic rows: the map a record's entries go to, and its rank among the row's maps (the order
# in which their values' errors are raised)
cdef enum:
    RANK_AFTER = 0      # the value record (a DELETE's: its before map)
    RANK_BEFORE = 1     # _ticdc_before
    RANK_KEY = 2        # the key record


# Generic rows: a record's entries are its column fields in order, so the keys of the map it
# fills are known when the plan is compiled: their names are written at once per record.
cdef struct KeyRun:
    Py_ssize_t off         # the names: WPlan.key_names[off:], value i ending at off + ends[i]
    int ends_first         # ends: WPlan.key_ends[ends_first:ends_first + n]
    int n                  # the record's column fields


cdef struct WPlan:
    int32_t schema_id
    int nfields            # top-level fields are fields[0:nfields]
    AvField* fields
    int fields_len
    AvBranch* branches
    Buf names
    Buf syms
    int64_t* sym_off
    int* nulls             # typed: the targets no top-level field fills (nulls[0:ntop_nulls]),
    int ntop_nulls         # then each _ticdc_before record's (AvBranch.nulls_first)
    int nnulls
    Py_ssize_t db_off, db_len, tbl_off, tbl_len   # into AvroPlan.keys; db_len -1: no database
    int extra_checked
    int own_table          # typed: its (database, table) is the target table, looked up once
    Buf key_names          # generic: the keys of each record (KeyRun), AvField.key_run
    int32_t* key_ends
    KeyRun* key_runs


cdef struct RecInfo:
    Span op
    Span checksum
    int64_t commit_ts
    Py_ssize_t commit_ts_at    # byte offset of the value, for its range error
    int has_commit_ts
    int has_op
    int has_checksum
    int corrupted
    int has_corrupted
    int32_t ckver
    int has_ckver


cdef void _free_wplan(WPlan* p) noexcept nogil:
    free(p.fields)
    free(p.branches)
    free(p.sym_off)
    free(p.nulls)
    free(p.key_ends)
    free(p.key_runs)
    buf_free(&p.key_names)
    buf_free(&p.names)
    buf_free(&p.syms)


cdef inline Py_ssize_t _id_slot(int32_t sid, Py_ssize_t cap) noexcept nogil:
    """Home slot of a schema id (Fibonacci hashing: consecutive ids spread out)."""
    return <Py_ssize_t>(((<uint64_t><uint32_t>sid) * 0x9E3779B97F4A7C15ULL) >> 32) & (cap - 1)


@cython.final
cdef class AvroPlan(PlanFront):
    _protocol = "avro"     # the layout of its columns (PlanFront.__cinit__)
    cdef WPlan* wplans
    cdef int nwplans
    cdef int wcap
    # schema id -> plan index, open addressing (a registry can hand out any number of ids: a
    # linear scan per message made decoding quadratic in them)
    cdef int32_t* wslot_id
    cdef int* wslot_plan         # -1: empty
    cdef Py_ssize_t wslot_cap
    # the schema id found last and its plan, for keys [0] and for values [1] (plans are only ever
    # added, so it stays true): a topic's messages mostly repeat one key and one value schema, and
    # one memo for both missed on every message
    cdef int32_t memo_sid[2]
    cdef int memo_plan[2]
    cdef Buf keys
    cdef Buf scratch
    cdef int extra_error
    cdef int control_events          # typed: also write the rows of control events
    cdef int cur_plan
    # the row's first conversion error, raised once the whole record is read, as the twin
    # converts after reading: ranked by target (the old image's after the row's), -1 none
    cdef int conv_rank
    cdef Err conv_err
    cdef int old_filling             # a typed walk is inside _ticdc_before (old image builders)
    cdef int before_filled           # this row's _ticdc_before record filled the old image
    cdef Py_ssize_t unlisted_at      # the first DEC_UNLISTED value of the row (-1 none), its name
    cdef const uint8_t* unlisted_name
    cdef Py_ssize_t unlisted_len
    cdef Cur fill_cur                # the record the row's values came from, its plan
    cdef int fill_plan
    cdef int render_col              # generic: the map a WALK_RENDER writes, its rank
    cdef int render_rank
    cdef int key_rendered            # generic: the row's key record is in the key map
    cdef Py_ssize_t row              # the row the current message writes
    cdef object _targets
    # the Avro protocol's own output columns: indexes in the core's column set (-1: not written)
    cdef int col_keymap
    cdef int col_ddl_type
    cdef int col_checksum
    cdef int col_corrupted
    cdef int col_ckver
    cdef int col_key_id
    cdef int col_value_id
    cdef MessageInput arrow_keys     # the batch prepare_arrow points at
    cdef MessageInput arrow_values
    # run() (list input: the front end's one-off messages) fills its own, so the batch prepared
    # by prepare_arrow stays valid and is never re-read per one-off message
    cdef MessageInput list_keys
    cdef MessageInput list_values
    cdef MessageInput* keys_in       # the pair the running loop reads
    cdef MessageInput* values_in

    def __cinit__(self, cfg):
        self.col_keymap = self.core.extra_col(_C.COL_KEY)      # generic only
        self.col_ddl_type = self.core.own_col(_C.COL_DDL_TYPE)
        self.col_checksum = self.core.own_col(_C.COL_CHECKSUM)
        self.col_corrupted = self.core.own_col(_C.COL_CHECKSUM_CORRUPTED)
        self.col_ckver = self.core.own_col(_C.COL_CHECKSUM_VERSION)
        self.col_key_id = self.core.own_col(_C.COL_KEY_SCHEMA_ID)
        self.col_value_id = self.core.own_col(_C.COL_VALUE_SCHEMA_ID)
        self.extra_error = cfg.extra_columns == "error"
        self.control_events = bool(cfg.control_events)
        self._targets = cfg.targets or ()
        self.memo_plan[0] = -1
        self.memo_plan[1] = -1

    def __dealloc__(self):
        cdef int i
        for i in range(self.nwplans):
            _free_wplan(&self.wplans[i])
        free(self.wplans)
        free(self.wslot_id)
        free(self.wslot_plan)
        buf_free(&self.keys)
        buf_free(&self.scratch)
        input_free(&self.arrow_keys)
        input_free(&self.arrow_values)
        input_free(&self.list_keys)
        input_free(&self.list_values)

    # ------------------------------------------------------------------ plans
    def register(self, ws):
        self.core._claim()
        try:
            return self._register_body(ws)
        finally:
            self.core.busy = 0

    cdef object _register_body(self, ws):
        """Compile one writer schema (ticdc_fast.avro.schema.WriterSchema)."""
        cdef WPlan* p
        cdef int k
        if self._find_wplan(ws.schema_id) >= 0:
            return
        self._reserve_id_slots(self.nwplans + 1)
        if self.nwplans == self.wcap:
            p = <WPlan*>realloc(self.wplans, (self.wcap * 2 + 8) * sizeof(WPlan))
            if p == NULL:
                no_memory("the Avro writer plan list")
            self.wplans = p
            self.wcap = self.wcap * 2 + 8
        p = &self.wplans[self.nwplans]
        memset(p, 0, sizeof(WPlan))
        p.schema_id = ws.schema_id
        flat_fields = []
        flat_branches = []
        symbols = []
        _flatten(ws.fields, flat_fields, flat_branches, symbols)
        p.fields_len = len(flat_fields)
        p.nfields = len(ws.fields)
        p.fields = <AvField*>calloc(max(p.fields_len, 1), sizeof(AvField))
        p.branches = <AvBranch*>calloc(max(len(flat_branches), 1), sizeof(AvBranch))
        p.sym_off = <int64_t*>calloc(len(symbols) + 1, sizeof(int64_t))
        # the targets no field fills: at most every target for the record and for _ticdc_before
        p.nulls = <int*>calloc(max(2 * self.core.ntargets, 1), sizeof(int))
        if p.fields == NULL or p.branches == NULL or p.sym_off == NULL or p.nulls == NULL:
            _free_wplan(p)
            no_memory("the fields of an Avro writer plan")
        try:
            self._fill_wplan(p, ws, flat_fields, flat_branches, symbols)
        except BaseException:
            _free_wplan(p)      # never found: the plan counts only once it is complete
            raise
        self._put_id_slot(p.schema_id, self.nwplans)
        self.nwplans += 1

    cdef int _fill_wplan(self, WPlan* p, ws, list flat_fields, list flat_branches, list symbols) except -1:
        """The fields, branches, symbols and table name of a new writer plan."""
        cdef int k, bi
        for k, s in enumerate(symbols):
            b = s.encode("utf-8")
            p.sym_off[k] = p.syms.len
            if buf_append(&p.syms, <const char*>b, len(b)) < 0:
                no_memory("the enum symbols of an Avro writer plan")
        p.sym_off[len(symbols)] = p.syms.len
        for k, (kind, dec_scale, size, sym_first, nsym, sub_first, sub_count) in enumerate(flat_branches):
            p.branches[k].kind = kind
            p.branches[k].dec_scale = dec_scale
            p.branches[k].size = size
            p.branches[k].sym_first = sym_first
            p.branches[k].nsym = nsym
            p.branches[k].sub_first = sub_first
            p.branches[k].sub_count = sub_count
        for k, (name, role, is_union, nbranch, branch0, code, flags, scale) in enumerate(flat_fields):
            nb = name.encode("utf-8")
            p.fields[k].role = role
            p.fields[k].is_union = is_union
            p.fields[k].nbranch = nbranch
            p.fields[k].branch0 = branch0
            p.fields[k].type_code = code
            p.fields[k].flags = flags
            p.fields[k].scale = scale
            p.fields[k].name_off = p.names.len
            p.fields[k].name_len = len(nb)
            p.fields[k].hash = name_hash(<const uint8_t*><const char*>nb, len(nb))
            p.fields[k].target = self.core._target_by_name(<const uint8_t*><const char*>nb, len(nb))
            int_range(code, flags, &p.fields[k].type_lo, &p.fields[k].type_hi)
            if buf_append(&p.names, <const char*>nb, len(nb)) < 0:
                no_memory("the field names of an Avro writer plan")
        db = None if ws.database is None else ws.database.encode("utf-8")
        tb = ws.table.encode("utf-8")
        p.db_off = self.keys.len
        p.db_len = -1 if db is None else len(db)
        if db is not None and buf_append(&self.keys, <const char*>db, len(db)) < 0:
            no_memory("a database name")
        p.tbl_off = self.keys.len
        p.tbl_len = len(tb)
        if buf_append(&self.keys, <const char*>tb, len(tb)) < 0:
            no_memory("a table name")
        p.own_table = self.core.is_own_table(<const uint8_t*>(self.keys.data + p.db_off), p.db_len,
                                             <const uint8_t*>(self.keys.data + p.tbl_off), p.tbl_len)
        if self.core.typed and p.own_table:
            self._compile_decoders(p)
        elif not self.core.typed:
            _compile_generic(p, len(flat_branches))
        return 0

    cdef void _compile_decoders(self, WPlan* p) noexcept:
        """Typed rows of the target table: a decoder for every branch of the top-level columns
        and (old_image=True) of _ticdc_before's fields, and the targets each record leaves null."""
        cdef int k, bi
        cdef AvBranch* b
        p.ntop_nulls = self._compile_fields(p, 0, p.nfields, 1, 0)
        p.nnulls = p.ntop_nulls
        if not self.core.with_old_image:
            return
        for k in range(p.nfields):
            if p.fields[k].role != ROLE_BEFORE:
                continue
            for bi in range(p.fields[k].nbranch):
                b = &p.branches[p.fields[k].branch0 + bi]
                if b.kind == AV_RECORD:
                    b.nulls_first = p.nnulls
                    b.nulls_count = self._compile_fields(p, b.sub_first, b.sub_count, 0, p.nnulls)
                    p.nnulls += b.nulls_count

    cdef int _compile_fields(self, WPlan* p, int first, int count, int top, int nulls_at) noexcept:
        """Decoders of the column fields [first, first + count) of one record; the targets they
        leave unfilled go to p.nulls[nulls_at:] (their count is returned).  Of two fields with
        one target the last fills it, as the row image's last entry would."""
        cdef int k, j, bi, n = 0
        cdef AvField* f
        for j in range(self.core.ntargets):
            self.core.present[j] = -1
        for k in range(first, first + count):
            if p.fields[k].role == ROLE_COLUMN and p.fields[k].target >= 0:
                self.core.present[p.fields[k].target] = k
        for k in range(first, first + count):
            f = &p.fields[k]
            if f.role != ROLE_COLUMN:
                continue
            for bi in range(f.nbranch):
                if f.target >= 0 and self.core.present[f.target] == k:
                    p.branches[f.branch0 + bi].dec = self._branch_decoder(p, f, &p.branches[f.branch0 + bi])
                    if p.branches[f.branch0 + bi].dec == DEC_INT:
                        self._int_bounds(p, f)
                else:
                    p.branches[f.branch0 + bi].dec = DEC_UNLISTED if top and f.target < 0 else DEC_CHECK
        for j in range(self.core.ntargets):
            if self.core.present[j] < 0:
                p.nulls[nulls_at + n] = j
                n += 1
        return n

    cdef int _reserve_id_slots(self, Py_ssize_t n) except -1:
        """Room for n ids at a load factor of at most 1/2 (rehashing every plan when growing)."""
        cdef Py_ssize_t cap = self.wslot_cap, k
        cdef int32_t* ids
        cdef int* plans
        if 2 * n <= cap:
            return 0
        if cap == 0:
            cap = 16
        while 2 * n > cap:
            cap *= 2
        ids = <int32_t*>malloc(cap * sizeof(int32_t))
        plans = <int*>malloc(cap * sizeof(int))
        if ids == NULL or plans == NULL:
            free(ids)
            free(plans)
            no_memory("the schema id slots")
        free(self.wslot_id)
        free(self.wslot_plan)
        self.wslot_id = ids
        self.wslot_plan = plans
        self.wslot_cap = cap
        for k in range(cap):
            plans[k] = -1
        for k in range(self.nwplans):
            self._put_id_slot(self.wplans[k].schema_id, <int>k)
        return 0

    cdef void _put_id_slot(self, int32_t sid, int plan) noexcept nogil:
        cdef Py_ssize_t s = _id_slot(sid, self.wslot_cap)
        while self.wslot_plan[s] >= 0:
            s = (s + 1) & (self.wslot_cap - 1)
        self.wslot_id[s] = sid
        self.wslot_plan[s] = plan

    cdef int _branch_decoder(self, WPlan* p, AvField* f, AvBranch* b) noexcept:
        """The decoder of one branch of a column field with a target: written straight to the
        target where the kinds allow, else by the text rules (same values and errors either way)."""
        cdef int w = self.core.writers[f.target], kind = b.kind
        cdef int tk = TYPE_KIND[f.type_code]
        if kind == AV_NULL:
            return DEC_NULL
        if (kind == AV_LONG or kind == AV_INT) and (tk == K_INT or tk == K_UINT) \
                and W_INT8 <= w <= W_UINT64 and f.type_code != T_BIT:
            return DEC_INT
        if w == W_FLOAT64 and ((kind == AV_DOUBLE and f.type_code == T_DOUBLE) or (kind == AV_FLOAT and f.type_code == T_FLOAT)):
            return DEC_F64
        if w == W_FLOAT32 and kind == AV_FLOAT and f.type_code == T_FLOAT:
            return DEC_F32
        if w == W_DECIMAL128 and (kind == AV_BYTES or kind == AV_FIXED) and f.type_code == T_NEWDECIMAL:
            return DEC_DECIMAL
        if kind == AV_STRING and tk == K_TEXT and w == W_STRING and not (f.flags & FLAG_BINARY):
            return DEC_STR
        if kind == AV_STRING and (tk == K_DATE or tk == K_DATETIME or tk == K_TIMESTAMP) and w == W_TIMESTAMP:
            return DEC_WALL
        if kind == AV_BYTES and tk == K_BLOB and w == W_BINARY \
                and b.dec_scale < 0 and f.type_code != T_NEWDECIMAL and f.type_code != T_BIT:
            return DEC_BLOB
        if kind == AV_INT or kind == AV_LONG or kind == AV_FLOAT or kind == AV_DOUBLE \
                or ((kind == AV_BYTES or kind == AV_FIXED) and f.type_code == T_BIT):
            return DEC_NUMBER
        return DEC_TEXT_RULES

    cdef void _int_bounds(self, WPlan* p, AvField* f) noexcept:
        """The unchecked range of a DEC_INT field: the longs its column type, its target writer
        and (an int branch) 32 bits all admit.  A BIGINT UNSIGNED column in long mode carries its
        uint64 as the long's bits, so it always takes the checked path."""
        cdef int64_t lo, wlo
        cdef uint64_t hi, whi
        cdef int bi
        f.int_width = 0
        if f.type_code == T_LONGLONG and (f.flags & FLAG_UNSIGNED):
            return
        int_range(f.type_code, f.flags, &lo, &hi)
        writer_range(self.core.writers[f.target], &wlo, &whi)
        lo = max(lo, wlo)
        hi = min(hi, whi, <uint64_t>9223372036854775807ULL)
        for bi in range(f.nbranch):
            if p.branches[f.branch0 + bi].kind == AV_INT:
                lo = max(lo, <int64_t>-2147483648LL)
                hi = min(hi, <uint64_t>2147483647ULL)
        if lo > <int64_t>hi:
            return
        f.int_lo = lo
        f.int_hi = <int64_t>hi
        f.int_width = writer_width(self.core.writers[f.target])

    cdef void _defer_at(self, int rank, AvField* f, Err* conv) noexcept nogil:
        """A value that cannot be converted or rendered: the record is still read to its end (a
        framing fault further on is reported first, as the twin reads before it converts); the
        row then raises the error of its lowest rank (typed: its target, the old image's after
        the row's; generic: the RANK_* of its map)."""
        if self.conv_rank < 0 or rank < self.conv_rank:
            set_column(conv, self.wplans[self.cur_plan].names.data + f.name_off, f.name_len)
            self.conv_err = conv[0]
            self.conv_rank = rank

    cdef inline int _deferred(self, int rc, int j, AvField* f, Err* conv) noexcept nogil:
        """A decoder's push: a conversion refusal is deferred (0), anything else returned."""
        if rc == RC_FAILED:
            self._defer_at(j + (self.core.ntargets if self.old_filling else 0), f, conv)
            return 0
        return rc

    cdef int _read_entry(self, Cur* c, AvField* f, AvBranch* b, Py_ssize_t off, ColEntry* e,
                         Err* err) noexcept nogil:
        """The value of field f as the row image would hold it, in the one-off entry `e` (its
        scratch text as a pointer: the caller converts or renders it before the next value)."""
        cdef int rc
        _field_entry(e, self.wplans[self.cur_plan].names.data + f.name_off, f,
                     <int>(f - self.wplans[self.cur_plan].fields), off)
        e.tgt = -2
        e.bad = 0
        rc = self._value(c, f, b, &e.v, 0, err)
        if rc < 0:
            return rc
        if e.v.in_scratch:                      # text written into the scratch: now a pointer
            e.v.p = self.scratch.data + <uintptr_t>e.v.p
            e.v.in_scratch = 0
        return 0

    cdef int _decode_text_rules(self, Cur* c, AvField* f, AvBranch* b, Py_ssize_t off, Err* err) noexcept nogil:
        """DEC_TEXT_RULES: the value read as the row image would hold it (_value) and handed to
        the target's converter at once."""
        cdef ColEntry tmp
        cdef Err conv
        cdef int rc
        cdef Py_ssize_t start = self.scratch.len
        rc = self._read_entry(c, f, b, off, &tmp, err)
        if rc < 0:
            return rc
        conv.failed = 0
        rc = self.core._convert(&tmp, f.target, &conv)
        self.scratch.len = start
        if rc == RC_FAILED and not conv.failed:
            return RC_NO_MEMORY
        return self._deferred(rc, f.target, f, &conv)

    cdef int _decode_number(self, Cur* c, AvField* f, AvBranch* b, Py_ssize_t off, Err* err) noexcept nogil:
        """DEC_NUMBER: an int/long, float/double or BIT's bytes read as its value and handed to
        the shared number decoders (plan/decoders.pxi), which write it or convert its text."""
        cdef ColEntry e
        cdef IntVal iv
        cdef double x
        cdef Err conv
        cdef int rc
        _field_entry(&e, self.wplans[self.cur_plan].names.data + f.name_off, f,
                     <int>(f - self.wplans[self.cur_plan].fields), off)
        conv.failed = 0
        if b.kind == AV_FLOAT or b.kind == AV_DOUBLE:
            if _avro_column_real(c, f, b, off, &x, err) < 0:
                return -1
            rc = decode_real_value(self.core, &e, x, f.target, &conv)
        else:
            if b.kind == AV_INT or b.kind == AV_LONG:
                rc = _avro_int(c, f, b, off, &iv, err)
            else:
                rc = _avro_bit(c, b, off, &iv, err)
            if rc < 0:
                return -1
            rc = decode_int_value(self.core, &e, &iv, f.target, &conv)
        if rc == RC_FAILED and not conv.failed:
            return RC_NO_MEMORY
        return self._deferred(rc, f.target, f, &conv)

    cdef int _decode_decimal(self, Cur* c, AvField* f, AvBranch* b, Py_ssize_t off, Err* err) noexcept nogil:
        """DEC_DECIMAL, out of _decode so that stays small enough to be inlined into the record
        walk.  (DATETIME/TIMESTAMP strings were written here too once: the parser inlined into
        the walk cost the profile-guided build 5-10 % more instructions than the converter table
        it replaced.)"""
        cdef Span raw
        cdef uint64_t limbs[2]
        cdef int j = f.target
        if _avro_bytes(c, b, &raw, err) < 0:
            return -1
        if raw.n == 0:
            return fail_at(err, off, "empty decimal bytes")
        if raw.n > 90:
            return fail_at(err, off, "decimal wider than 720 bits")
        if (b.dec_scale if b.dec_scale >= 0 else f.scale) == self.core.scales[j] \
                and twos_to_decimal128(raw.p, raw.n, self.core.precisions[j], limbs) == 0:
            return 0 if fix_push(&self.core.t_fix[j], limbs, sizeof(limbs)) == 0 else RC_NO_MEMORY
        c.pos = c.start + off                    # read again by the text rules, which word the error
        return self._decode_text_rules(c, f, b, off, err)

    cdef int _decode_int_checked(self, Cur* c, AvField* f, AvBranch* b, Py_ssize_t off, Err* err) noexcept nogil:
        """DEC_INT outside the field's unchecked range (and BIGINT UNSIGNED): every range tested;
        out of _decode, which the record walk inlines, because most values never come here."""
        cdef IntVal iv
        cdef Err conv
        if _avro_int(c, f, b, off, &iv, err) < 0:
            return -1
        return self._deferred(self.core._push_target_int(f.target, &iv, f.type_code, f.flags, off, &conv),
                              f.target, f, &conv)

    cdef int _decode_wall(self, Cur* c, AvField* f, Py_ssize_t off, Err* err) noexcept nogil:
        """DEC_WALL, out of _decode for the reason _decode_decimal is."""
        cdef Span raw
        cdef Err conv
        if avro_string(c, &raw, err) < 0:
            return -1
        return self._deferred(self.core._push_wall_text(f.target, raw.p, raw.n, TYPE_KIND[f.type_code], off, &conv),
                              f.target, f, &conv)

    cdef int _decode_unlisted(self, Cur* c, AvField* f, AvBranch* b, Py_ssize_t off, Err* err) noexcept nogil:
        """DEC_UNLISTED: checked as any value; the row's first is kept for extra_columns="error"."""
        cdef Span v
        if self.unlisted_at < 0:
            self.unlisted_at = off
            self.unlisted_name = self.wplans[self.cur_plan].names.data + f.name_off
            self.unlisted_len = f.name_len
        v.off = off
        return self._value(c, f, b, &v, 1, err)

    cdef inline int _decode(self, Cur* c, AvField* f, AvBranch* b, Err* err) noexcept nogil:
        """One value of a typed row through its branch's decoder."""
        cdef int j = f.target, dec = b.dec
        cdef Py_ssize_t off = c.pos - c.start
        cdef double f64
        cdef Span raw
        cdef Err conv
        cdef int64_t lv
        if dec == DEC_INT:
            if f.int_width:
                if avro_long(c, &lv, err) < 0:
                    return -1
                if f.int_lo <= lv <= f.int_hi:
                    return 0 if fix_push_int(&self.core.t_fix[j], lv, f.int_width) == 0 else RC_NO_MEMORY
                c.pos = c.start + off            # read again by the checked path, which words the error
            return self._decode_int_checked(c, f, b, off, err)
        if dec == DEC_NULL:
            return self.core._push_target_null(j)
        if dec == DEC_STR:
            if avro_string(c, &raw, err) < 0:
                return -1
            return self._deferred(self.core._push_value_text(&self.core.t_var[j], &raw, &conv), j, f, &conv)
        if dec == DEC_F64:
            if _avro_real(c, b, off, &f64, err) < 0:
                return -1
            return decode_real(self.core, DEC_F64, j, f64)
        if dec == DEC_WALL:
            return self._decode_wall(c, f, off, err)
        if dec == DEC_DECIMAL:
            return self._decode_decimal(c, f, b, off, err)
        if dec == DEC_F32:
            if _avro_real(c, b, off, &f64, err) < 0:
                return -1
            return decode_real(self.core, DEC_F32, j, f64)
        if dec == DEC_NUMBER:
            return self._decode_number(c, f, b, off, err)
        if dec == DEC_TEXT_RULES:
            return self._decode_text_rules(c, f, b, off, err)
        if dec == DEC_BLOB:
            if avro_string(c, &raw, err) < 0:
                return -1
            return 0 if var_push(&self.core.t_var[j], raw.p, raw.n) == 0 else RC_NO_MEMORY
        if dec == DEC_UNLISTED:
            return self._decode_unlisted(c, f, b, off, err)
        raw.off = off
        return self._value(c, f, b, &raw, 1, err)      # DEC_CHECK

    cdef int _push_nulls(self, const int* targets, int n) noexcept nogil:
        """A null in each of these targets (0, or RC_NO_MEMORY)."""
        cdef int k
        for k in range(n):
            if self.core._push_target_null(targets[k]) < 0:
                return RC_NO_MEMORY
        return 0

    cdef int _old_image_nulls(self, Err* err) noexcept nogil:
        """A null `_before` struct (a row without an old image): 0, or RC_NO_MEMORY."""
        cdef int rc
        if self.core._old_image_begin(0) < 0:
            return RC_NO_MEMORY
        rc = self.core._emit_nulls(err)
        self.core._old_image_end()
        return rc

    cdef int _find_wplan(self, int32_t sid) noexcept nogil:
        cdef Py_ssize_t s
        if self.wslot_cap == 0:
            return -1
        s = _id_slot(sid, self.wslot_cap)
        while self.wslot_plan[s] >= 0:
            if self.wslot_id[s] == sid:
                return self.wslot_plan[s]
            s = (s + 1) & (self.wslot_cap - 1)
        return -1

    # ------------------------------------------------------------------ outputs
    cdef int _begin(self, Py_ssize_t rows, Py_ssize_t hint) except -1:
        return self.core.begin_batch(rows, hint, "the Avro-protocol output columns")

    def reset(self):
        self.core._claim()
        try:
            return self._reset_body()
        finally:
            self.core.busy = 0

    cdef object _reset_body(self):
        self.core.end_batch()

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
        return self.core.finish_batch_fields(fields, "the Avro-protocol output columns")

    cdef object _finish_batch_body(self, schema, extras):
        return self.core.finish_record_batch(schema, extras, "the Avro-protocol output columns")

    def append_control(self, row):
        self.core._claim()
        try:
            return self._append_control_body(row)
        finally:
            self.core.busy = 0

    cdef object _append_control_body(self, row):
        cdef int j, w
        cdef int64_t v64
        cdef int32_t m32
        cdef ColumnSet* cs = &self.core.cols
        self._begin(1024, 1 << 16)
        op = row[_C.COL_OP].encode()
        var_push(&cs.var[CS_OP], <const char*>op, len(op))
        if row.get(_C.COL_COMMIT_TS) is None:
            fix_push_null(&cs.fix[CS_TS])
        else:
            v64 = row[_C.COL_COMMIT_TS]
            fix_push(&cs.fix[CS_TS], &v64, sizeof(v64))
        m32 = row["_msg"]
        fix_push(&cs.fix[CS_MSG], &m32, sizeof(m32))
        _push_py_text(&cs.var[CS_DDL], row.get(_C.COL_DDL))
        fix_push_null(&cs.fix[self.col_value_id])
        if not self.core.typed:            # as _emit: generic output alone has these
            if row.get(_C.COL_DDL_TYPE) is None:
                fix_push_null(&cs.fix[self.col_ddl_type])
            else:
                m32 = row[_C.COL_DDL_TYPE]
                fix_push(&cs.fix[self.col_ddl_type], &m32, sizeof(m32))
            var_push_null(&cs.var[self.col_checksum])
            fix_push_null(&cs.fix[self.col_corrupted])
            fix_push_null(&cs.fix[self.col_ckver])
            fix_push_null(&cs.fix[self.col_key_id])
        if self.core.typed:
            for j in range(self.core.ntargets):
                self.core._push_target_null(j)
            if self.core.with_old_image:
                self._old_image_nulls(&self.core.err)
        else:
            _push_py_text(&cs.var[CS_SCHEMA], row.get(_C.COL_SCHEMA))
            _push_py_text(&cs.var[CS_TABLE], row.get(_C.COL_TABLE))
            colset_push_null(cs, CS_AFTER)
            # a key-less DELETE carries an empty before image (nothing else reaches here)
            map_close_row(cs, CS_BEFORE, row.get(_C.COL_BEFORE) is not None)
            colset_push_null(cs, self.col_keymap)

    # ------------------------------------------------------------------ the hot loop
    def prepare_arrow(self, keys, values):
        self.core._claim()
        try:
            return self._prepare_arrow_body(keys, values)
        finally:
            self.core.busy = 0

    cdef object _prepare_arrow_body(self, keys, values):
        """Point at the messages of two Arrow binary or large_binary arrays (zero copy; they
        must stay alive until run_prepared is done)."""
        if len(keys) != len(values):
            raise ValueError(f"{len(keys)} keys but {len(values)} values")
        input_fill(&self.arrow_keys, keys, 0, False)
        input_fill(&self.arrow_values, values, 0, False)
        return len(values)

    def run_prepared(self, Py_ssize_t start, Py_ssize_t n, Py_ssize_t msg_base=0):
        self.core._claim()
        try:
            return self._run_prepared_body(start, n, msg_base)
        finally:
            self.core.busy = 0

    cdef object _run_prepared_body(self, Py_ssize_t start, Py_ssize_t n, Py_ssize_t msg_base=0):
        if n > self.arrow_values.n or not self.arrow_values.arrow:
            raise ValueError("run_prepared past the messages prepare_arrow pointed at")
        self.keys_in = &self.arrow_keys
        self.values_in = &self.arrow_values
        return self._run_loop(start, n, msg_base)

    cdef object _run_loop(self, Py_ssize_t start, Py_ssize_t n, Py_ssize_t msg_base):
        cdef Err* err = &self.core.err
        cdef ColumnSet* cs = &self.core.cols
        cdef int rc = 0
        cdef Py_ssize_t i, saved
        if not self.core.started:
            # output text is at most a few times the input size: reserve it once for the batch
            self._begin(n * 2 + 16, 2 * self.values_in.bytes + (1 << 16))
        self.core._begin_call()
        i = start
        with nogil:
            while i < n:
                err.msg = msg_base + i
                saved = colset_rows(cs, CS_OP)      # the savepoint of this message
                rc = self._message(i, msg_base + i, err)
                if rc != RUN_OK:
                    # a message the front end handles (or a failed one) leaves no partial row
                    colset_truncate(cs, saved)
                    break
                i += 1
        if rc < 0:
            raise_decode_error(err, "Avro-protocol", "value")
        return i

    def run(self, list keys, list values, Py_ssize_t start, Py_ssize_t msg_base=0):
        self.core._claim()
        try:
            return self._run_body(keys, values, start, msg_base)
        finally:
            self.core.busy = 0

    cdef object _run_body(self, list keys, list values, Py_ssize_t start, Py_ssize_t msg_base=0):
        if len(keys) != len(values):
            raise ValueError(f"{len(keys)} keys but {len(values)} values")
        input_fill(&self.list_keys, keys, start, False)
        input_fill(&self.list_values, values, start, False)
        self.keys_in = &self.list_keys
        self.values_in = &self.list_values
        return self._run_loop(start, len(values), msg_base)

    cdef int _known(self, const uint8_t* p, Py_ssize_t n, int part) noexcept nogil:
        """-1: not a framed record; -2: framed with an unknown id; else the plan index (part: 0 a
        key, 1 a value)."""
        cdef int32_t sid
        if n < 5 or p[0] != 0:
            return -1
        sid = <int32_t>((<uint32_t>p[1] << 24) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 8) | p[4])
        if sid == self.memo_sid[part] and self.memo_plan[part] >= 0:
            return self.memo_plan[part]
        k = self._find_wplan(sid)
        if k < 0:
            return -2
        self.memo_sid[part] = sid
        self.memo_plan[part] = k
        return k

    cdef int _ready(self, const uint8_t* kp, Py_ssize_t kn, const uint8_t* vp, Py_ssize_t vn,
                    int* kplan, int* vplan) noexcept nogil:
        """The same readiness rule as the twin: every framed id known, a decodable value form
        (RUN_OK), else RUN_STOP for the front end."""
        kplan[0] = -1
        vplan[0] = -1
        if kn >= 0:
            kplan[0] = self._known(kp, kn, 0)
            if kplan[0] == -2:
                return RUN_STOP
        if vn >= 0:
            vplan[0] = self._known(vp, vn, 1)
            if vplan[0] == -2:
                return RUN_STOP
        if vn < 0:
            if kn < 1 or kp[0] != AVRO_FRAME_RECORD:
                return RUN_STOP
        elif vn < 1 or not (vp[0] == AVRO_FRAME_RECORD or vp[0] == AVRO_FRAME_CHECKPOINT or vp[0] == AVRO_FRAME_DELETE):
            return RUN_STOP
        elif vp[0] == AVRO_FRAME_CHECKPOINT and kn >= 0:
            return RUN_STOP      # the front end rejects a keyed checkpoint
        elif vp[0] == AVRO_FRAME_DELETE and (kn < 1 or kp[0] != AVRO_FRAME_RECORD):
            return RUN_STOP
        return RUN_OK

    cdef void _start_row(self, RecInfo* info) noexcept nogil:
        # every other field of info is read only under its has_ flag
        info.has_commit_ts = 0
        info.has_op = 0
        info.has_checksum = 0
        info.has_corrupted = 0
        info.has_ckver = 0
        info.commit_ts_at = 0
        self.conv_rank = -1
        self.before_filled = 0
        self.unlisted_at = -1
        self.fill_plan = -1
        self.key_rendered = 0
        self.row = colset_rows(&self.core.cols, CS_OP)
        self.scratch.len = 0

    cdef inline int _walk_mode(self, int plan, int fills) noexcept nogil:
        """How a record of this plan is read: generic rows keep a row image; typed rows of the
        target table are written by their decoders when this record `fills` the row."""
        if not self.core.typed:
            return WALK_RENDER
        # plan -1: no framed record, which _read_record refuses before reading a field
        return WALK_FILL if fills and plan >= 0 and self.wplans[plan].own_table else WALK_CHECK

    cdef int _read_record(self, const uint8_t* p, Py_ssize_t n, int plan, int mode, int fills,
                          RecInfo* info, Err* err) noexcept nogil:
        """One framed record (a key or a value): the Confluent header, the fields, nothing after;
        `fills`: the record the row's values come from (kept for a read again)."""
        cdef Cur c
        cdef int rc
        c.start = p
        c.pos = p
        c.end = p + n
        if n == 0 or p[0] != AVRO_FRAME_RECORD:     # an empty record has no byte to read
            return fail_at(err, 0, "key does not start with the Confluent magic byte 0x00")
        if n < 5:
            return fail_at(err, 0, "truncated Confluent header")
        c.pos += 5
        self.cur_plan = plan
        if fills:
            self.fill_cur = c
            self.fill_plan = plan
        rc = self._record(&c, &self.wplans[plan], 0, self.wplans[plan].nfields, mode, info, err)
        if rc < 0:
            return rc
        if c.pos != c.end:
            return fail(err, &c, "trailing bytes after the Avro record")
        return 0

    cdef int _message(self, Py_ssize_t i, Py_ssize_t msg, Err* err) noexcept nogil:
        cdef Py_ssize_t kn, vn
        cdef const uint8_t* kp = input_message(self.keys_in, i, &kn)
        cdef const uint8_t* vp = input_message(self.values_in, i, &vn)
        cdef int kplan, vplan, op, rc
        cdef RecInfo info
        cdef bint key_only
        if self._ready(kp, kn, vp, vn, &kplan, &vplan) != RUN_OK:
            return RUN_STOP
        self._start_row(&info)
        key_only = vn < 0 or vp[0] == AVRO_FRAME_DELETE
        if kn >= 0:
            # typed output takes the key's fields only for a delete without a value record
            err.part = PART_KEY
            self.render_col = self.col_keymap
            self.render_rank = RANK_KEY
            rc = self._read_record(kp, kn, kplan, self._walk_mode(kplan, key_only), key_only, NULL, err)
            if rc < 0:
                return rc
            self.key_rendered = not self.core.typed
        err.part = PART_VALUE
        if key_only:
            if vn >= 0 and _frame_commit_ts(vp, vn, "delete event value must be 0x03 + 8 bytes", &info, err) < 0:
                return -1
            return self._emit(OP_DELETE, &info, kplan, -1, kplan, msg, err)
        if vp[0] == AVRO_FRAME_CHECKPOINT:
            if _frame_commit_ts(vp, vn, "checkpoint value must be 0x02 + 8 bytes", &info, err) < 0:
                return -1
            if self.core.typed and not self.control_events:
                return RUN_OK
            return self._emit(OP_RESOLVED, &info, -1, -1, kplan, msg, err)
        self.render_col = CS_AFTER
        self.render_rank = RANK_AFTER
        rc = self._read_record(vp, vn, vplan, self._walk_mode(vplan, 1), 1, &info, err)
        if rc < 0:
            return rc
        op = _record_op(&info, err)
        if op < 0:
            return op
        return self._emit(op, &info, vplan, vplan, kplan, msg, err)

    cdef int _record(self, Cur* c, WPlan* p, int first, int count, int mode, RecInfo* info,
                     Err* err) noexcept nogil:
        """Read the fields [first, first + count) of one record: each union index, then its value
        to the branch's decoder (WALK_FILL / WALK_REFILL), as text into the map render_col
        (WALK_RENDER / WALK_RERENDER) or only checked (WALK_CHECK); TiCDC's extension fields into
        `info` (NULL: checked)."""
        cdef int k, bi, rc
        cdef int64_t idx
        cdef AvField* f
        cdef AvBranch* b
        cdef Span v
        cdef VarCol* mvals = NULL
        if mode == WALK_RENDER or mode == WALK_RERENDER:      # the values of the map being filled
            mvals = &self.core.cols.var[self.core.cols.spec[self.render_col].first_child + 1]
            if count > 0:
                rc = self._map_keys(p, &p.key_runs[p.fields[first].key_run], mvals - 1, err)
                if rc < 0:
                    return rc
        for k in range(first, first + count):
            f = &p.fields[k]
            bi = 0
            if f.is_union:
                if avro_union(c, f.nbranch, &idx, err) < 0:
                    set_column(err, p.names.data + f.name_off, f.name_len)
                    return -1
                bi = <int>idx
            b = &p.branches[f.branch0 + bi]
            if f.role == ROLE_COLUMN:
                if mode == WALK_FILL or mode == WALK_REFILL:
                    rc = self._decode(c, f, b, err)
                elif mode == WALK_RENDER or mode == WALK_RERENDER:
                    rc = self._render_value(c, f, b, mvals, err)
                else:
                    v.off = c.pos - c.start
                    rc = self._value(c, f, b, &v, 1, err)
                if rc < 0:
                    if rc == RC_FAILED:
                        set_column(err, p.names.data + f.name_off, f.name_len)
                    return rc
            elif f.role == ROLE_BEFORE:
                rc = self._before(c, p, b, mode, err)
                if rc < 0:
                    return rc
            elif self._extension(c, f, b, info, err) < 0:
                set_column(err, p.names.data + f.name_off, f.name_len)
                return -1
        return 0

    cdef int _map_keys(self, WPlan* p, const KeyRun* run, VarCol* keys, Err* err) noexcept nogil:
        """Generic output: the keys of a record's entries in the map render_col, its column
        fields' names, written before its values (a row that fails is cut back whole)."""
        cdef int rc = _var_result(var_push_run(keys, p.key_names.data + run.off, p.key_ends + run.ends_first,
                                               run.n), err)
        if rc == 0:
            self.core.cols.count[self.render_col] = self.core.cols.count[self.render_col] + run.n
        return rc

    cdef inline int _render_value(self, Cur* c, AvField* f, AvBranch* b, VarCol* vals,
                                  Err* err) noexcept nogil:
        """Generic output: one column's value as the next entry of the map render_col (its key
        is written already: _map_keys), its text through the branch's GenericDecoder; a value
        that cannot be rendered is the row's deferred error."""
        cdef IntVal iv
        cdef Span raw
        cdef Err conv
        cdef double x
        cdef int rc, g = b.gen
        cdef Py_ssize_t off = c.pos - c.start
        if g == GEN_INT:
            rc = _avro_int(c, f, b, off, &iv, err) if b.kind == AV_INT or b.kind == AV_LONG \
                else _avro_bit(c, b, off, &iv, err)
            if rc < 0:
                return -1
            if not int_in_range(&iv, f.type_lo, f.type_hi):
                fail_at(&conv, off, "integer out of range")
                self._defer_at(self.render_rank, f, &conv)
                return 0
            return render_int(vals, &iv, err)
        elif g == GEN_TEXT:
            if avro_string(c, &raw, err) < 0:
                return -1
            rc = self.core._push_value_text(vals, &raw, &conv)
            if rc == RC_FAILED:
                self._defer_at(self.render_rank, f, &conv)
                return 0
            return rc
        elif g == GEN_FLOAT:
            if _avro_column_real(c, f, b, off, &x, err) < 0:
                return -1
            return render_real(vals, x, 32 if f.type_code == T_FLOAT else 64, 0, err)
        elif g == GEN_NULL:
            return _close(vals, 0, err)
        elif g == GEN_DECIMAL:
            return _render_decimal(c, f, b, vals, off, err)
        elif g == GEN_BASE64:
            return _render_base64(c, b, vals, err)
        return self._render_other(c, f, b, vals, off, err)

    cdef int _render_other(self, Cur* c, AvField* f, AvBranch* b, VarCol* vals, Py_ssize_t off,
                           Err* err) noexcept nogil:
        """GEN_RENDER: the value read as the row image would hold it (_value), rendered at once."""
        cdef ColEntry e
        cdef Err conv
        cdef int rc
        cdef Py_ssize_t start = self.scratch.len
        rc = self._read_entry(c, f, b, off, &e, err)
        if rc < 0:
            return rc
        if e.v.kind == J_STR and is_character_text(e.t, e.f):
            rc = self.core._push_value_text(vals, &e.v, &conv)
        else:
            rc = self.core._render_hooked(&e, vals, &conv)
        self.scratch.len = start
        if rc == RC_FAILED:
            self._defer_at(self.render_rank, f, &conv)
            return 0
        return rc

    cdef int _before(self, Cur* c, WPlan* p, AvBranch* b, int mode, Err* err) noexcept nogil:
        """The `_ticdc_before` record (an UPDATE's old values): the generic before image, or with
        old_image=True the typed row's `_before` struct, its fields through their decoders into
        the old image's builders; otherwise checked."""
        cdef int rc
        if b.kind == AV_NULL:
            return 0
        if b.kind != AV_RECORD:
            return fail(err, c, "unexpected _ticdc_before branch")
        if mode == WALK_RENDER:
            self.render_col = CS_BEFORE
            self.render_rank = RANK_BEFORE
            rc = self._record(c, p, b.sub_first, b.sub_count, WALK_RENDER, NULL, err)
            self.render_col = CS_AFTER
            self.render_rank = RANK_AFTER
            self.before_filled = 1
            return rc
        if mode != WALK_FILL or not self.core.with_old_image:
            return self._record(c, p, b.sub_first, b.sub_count, WALK_CHECK, NULL, err)
        if self.core._old_image_begin(1) < 0:
            return _oom(err)
        self.old_filling = 1
        rc = self._record(c, p, b.sub_first, b.sub_count, WALK_FILL, NULL, err)
        if rc == 0:
            rc = self._push_nulls(p.nulls + b.nulls_first, b.nulls_count)
        self.old_filling = 0
        self.core._old_image_end()
        self.before_filled = 1
        return rc

    cdef int _value(self, Cur* c, AvField* f, AvBranch* b, Span* v, int check, Err* err) noexcept nogil:
        """Read one Avro value into a span as the row image would hold it: strings point into
        the input; every other kind is written as text into the scratch (offset spans, fixed up
        after the record).  `check`: only read and checked, no text written."""
        cdef int64_t lv
        cdef Py_ssize_t start
        if b.kind == AV_STRING:
            return 0 if avro_string(c, v, err) == 0 else -1
        if b.kind == AV_NULL:
            v.kind = J_NULL
            v.neg = 0        # not a scratch span (entries are reused across messages)
            v.in_scratch = 0
            return 0
        if b.kind == AV_INT or b.kind == AV_LONG or b.kind == AV_FLOAT or b.kind == AV_DOUBLE:
            return self._value_number(c, f, b, v, check, err)
        if buf_reserve(&self.scratch, 400) < 0:
            return _oom(err)
        start = self.scratch.len
        if b.kind == AV_ENUM:
            if avro_long(c, &lv, err) < 0:
                return -1
            if lv < 0 or lv >= b.nsym:
                return fail_at(err, v.off, "Avro enum index out of range")
            if check:
                v.kind = J_NULL
                return 0
            # symbols live in the plan; copied so the span is fixed up like the others
            return self._scratch_text(
                v, <const char*>(self.wplans[self.cur_plan].syms.data + self.wplans[self.cur_plan].sym_off[b.sym_first + lv]),
                self.wplans[self.cur_plan].sym_off[b.sym_first + lv + 1] - self.wplans[self.cur_plan].sym_off[b.sym_first + lv])
        if b.kind == AV_BOOLEAN:
            if c.pos >= c.end:
                return fail(err, c, "truncated Avro boolean")
            if c.pos[0] > 1:
                return fail(err, c, "invalid Avro boolean")
            self.scratch.data[start] = 48 + c.pos[0]
            c.pos += 1
            span_in_scratch(v, start, 1)
            v.kind = J_INT
            self.scratch.len += 1
            return 0
        return self._value_bytes(c, f, b, v, check, err)

    cdef inline int _value_number(self, Cur* c, AvField* f, AvBranch* b, Span* v, int check,
                                  Err* err) noexcept nogil:
        """_value of an int/long (its decimal text, span kind J_INT) or float/double (its
        shortest text, a FLOAT column's as float32)."""
        cdef IntVal iv
        cdef double f64
        cdef int tn
        cdef Py_ssize_t start
        if b.kind == AV_INT or b.kind == AV_LONG:
            if _avro_int(c, f, b, v.off, &iv, err) < 0:
                return -1
        elif _avro_column_real(c, f, b, v.off, &f64, err) < 0:
            return -1
        if check:
            v.kind = J_NULL
            return 0
        if buf_reserve(&self.scratch, 400) < 0:
            return _oom(err)
        start = self.scratch.len
        if b.kind == AV_INT or b.kind == AV_LONG:
            tn = int_to_text(&iv, <char*>(self.scratch.data + start))
        else:
            tn = float_text(f64, 32 if f.type_code == T_FLOAT else 64, 0, <char*>(self.scratch.data + start))
        span_in_scratch(v, start, tn)
        if b.kind == AV_INT or b.kind == AV_LONG:
            v.kind = J_INT
        self.scratch.len += tn
        return 0

    cdef int _value_bytes(self, Cur* c, AvField* f, AvBranch* b, Span* v, int check, Err* err) noexcept nogil:
        """_value of bytes/fixed: a DECIMAL's text, a BIT's value as decimal text (span kind
        J_INT), other bytes as base64."""
        cdef Span raw
        cdef Py_ssize_t start = self.scratch.len
        cdef IntVal iv
        cdef int tn
        if f.type_code == T_BIT:
            if _avro_bit(c, b, v.off, &iv, err) < 0:
                return -1
            if check:
                v.kind = J_NULL
                return 0
            tn = int_to_text(&iv, <char*>(self.scratch.data + start))
            span_in_scratch(v, start, tn)
            v.kind = J_INT
            self.scratch.len += tn
            return 0
        if _avro_bytes(c, b, &raw, err) < 0:
            return -1
        if f.type_code == T_NEWDECIMAL:
            if not check:
                return self._decimal_text(v, raw.p, raw.n, b.dec_scale if b.dec_scale >= 0 else f.scale, err)
            if raw.n == 0:
                return fail_at(err, v.off, "empty decimal bytes")
            if raw.n > 90:
                return fail_at(err, v.off, "decimal wider than 720 bits")
            v.kind = J_NULL
            return 0
        if check:
            v.kind = J_NULL
            return 0
        if b64_encode(raw.p, raw.n, &self.scratch) < 0:
            return _oom(err)
        span_in_scratch(v, start, self.scratch.len - start)
        return 0

    cdef int _scratch_text(self, Span* v, const char* p, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t start = self.scratch.len
        if buf_append(&self.scratch, p, n) < 0:
            return RC_NO_MEMORY
        span_in_scratch(v, start, n)
        v.ascii = 0
        return 0

    cdef int _decimal_text(self, Span* v, const uint8_t* p, Py_ssize_t n, int scale, Err* err) noexcept nogil:
        """Avro decimal bytes (the unscaled value) as a text span in the scratch buffer."""
        cdef const char* why = NULL
        cdef Py_ssize_t start = self.scratch.len
        cdef int rc = decimal_bytes_text(p, n, scale, &self.scratch, &why)
        if rc == RC_NO_MEMORY:
            return _oom(err)
        if rc < 0:
            return fail_at(err, v.off, why)
        span_in_scratch(v, start, self.scratch.len - start)
        return 0

    cdef int _extension(self, Cur* c, AvField* f, AvBranch* b, RecInfo* info, Err* err) noexcept nogil:
        cdef int64_t lv
        cdef Py_ssize_t at
        cdef Span s
        if b.kind == AV_NULL:
            return 0
        if b.kind == AV_STRING:
            if avro_string(c, &s, err) < 0:
                return -1
            if info != NULL:
                if f.role == ROLE_OP:
                    info.op = s
                    info.has_op = 1
                elif f.role == ROLE_CHECKSUM:
                    info.checksum = s
                    info.has_checksum = 1
            return 0
        if b.kind == AV_INT or b.kind == AV_LONG:
            at = c.pos - c.start
            if avro_long(c, &lv, err) < 0:
                return -1
            if b.kind == AV_INT and (lv < -2147483648LL or lv > 2147483647LL):
                return fail(err, c, "Avro int out of 32-bit range")
            if info != NULL:
                if f.role == ROLE_COMMIT_TS:
                    info.commit_ts = lv
                    info.commit_ts_at = at
                    info.has_commit_ts = 1
                elif f.role == ROLE_CKVER:
                    info.ckver = <int32_t>lv
                    info.has_ckver = 1
            return 0
        if b.kind == AV_BOOLEAN:
            if c.pos >= c.end:
                return fail(err, c, "truncated Avro boolean")
            if c.pos[0] > 1:
                return fail(err, c, "invalid Avro boolean")
            if info != NULL and f.role == ROLE_CORRUPTED:
                info.corrupted = c.pos[0]
                info.has_corrupted = 1
            c.pos += 1
            return 0
        return fail(err, c, "unsupported type for a TiDB extension field")

    cdef int _push_extensions(self, const RecInfo* info, int kplan, Err* err) noexcept nogil:
        """The row's columns that only generic output has: the TiCDC extension fields and the
        key schema id.  (`_handle_key_only` and `_claim_check_location`, in every protocol's
        column set, are in no Avro output: columns.AVRO_*.unused.  Neither this nor
        append_control writes them.)"""
        cdef ColumnSet* cs = &self.core.cols
        cdef int rc
        if fix_push_null(&cs.fix[self.col_ddl_type]) < 0:
            return _oom(err)
        if info.has_checksum and info.checksum.n > 0:
            rc = self.core._push_text(self.col_checksum, &info.checksum, err)
            if rc < 0:
                return rc
        elif var_push_null(&cs.var[self.col_checksum]) < 0:
            return _oom(err)
        if info.has_checksum and info.has_corrupted:
            if fix_push_bool(&cs.fix[self.col_corrupted], info.corrupted) < 0:
                return _oom(err)
        elif fix_push_null(&cs.fix[self.col_corrupted]) < 0:
            return _oom(err)
        if info.has_checksum and info.has_ckver:
            if fix_push(&cs.fix[self.col_ckver], &info.ckver, sizeof(info.ckver)) < 0:
                return _oom(err)
        elif fix_push_null(&cs.fix[self.col_ckver]) < 0:
            return _oom(err)
        if kplan >= 0:
            if fix_push(&cs.fix[self.col_key_id], &self.wplans[kplan].schema_id, sizeof(int32_t)) < 0:
                return _oom(err)
        elif fix_push_null(&cs.fix[self.col_key_id]) < 0:
            return _oom(err)
        return 0

    cdef int _finish_typed_row(self, int op, WPlan* tp, Err* err) noexcept nogil:
        """The end of a typed row whose record's decoders wrote its targets: its deferred error,
        nulls in the targets no field filled, the `_before` struct (old_image=True)."""
        if op == OP_RESOLVED:
            if self.core._emit_nulls(err) < 0:
                return _oom(err)
            return self._old_image_nulls(err) if self.core.with_old_image else 0
        # a DELETE's _ticdc_before record is no old image: its errors are not the row's
        if self.conv_rank >= 0 and (self.conv_rank < self.core.ntargets or op != OP_DELETE):
            return self._raise_deferred(err)
        if self._push_nulls(tp.nulls, tp.ntop_nulls) < 0:
            return _oom(err)
        if not self.core.with_old_image:
            return 0
        if op == OP_DELETE:
            return self._refill_old_image(tp, err)
        return 0 if self.before_filled else self._old_image_nulls(err)

    cdef int _refill_old_image(self, WPlan* tp, Err* err) noexcept nogil:
        """The one record read again: a DELETE's `_before` is the row's own values, so the record
        they came from is read a second time into the old image's builders."""
        cdef Cur c = self.fill_cur
        cdef int rc
        if self.before_filled:
            colset_truncate_column(&self.core.cols, self.core.old_col, self.row)
        if self.core._old_image_begin(1) < 0:
            return _oom(err)
        self.cur_plan = self.fill_plan
        rc = self._record(&c, tp, 0, tp.nfields, WALK_REFILL, NULL, err)
        if rc == 0:
            rc = self._push_nulls(tp.nulls, tp.ntop_nulls)
        self.core._old_image_end()
        return rc

    cdef int _emit(self, int op, RecInfo* info, int vplan, int value_id_plan, int kplan,
                   Py_ssize_t msg, Err* err) noexcept nogil:
        """The row's own columns, then its values' end of row (typed or generic)."""
        cdef WPlan* tp = &self.wplans[vplan] if vplan >= 0 else (&self.wplans[kplan] if kplan >= 0 else NULL)
        cdef int32_t m32
        cdef int rc
        cdef ColumnSet cs = self.core.cols     # a copy: see SimplePlan._emit_dml
        if self.core.typed and op != OP_RESOLVED:
            if tp == NULL or not tp.own_table:
                return RUN_OK
            if self.extra_error and not tp.extra_checked:
                if self.unlisted_at >= 0:
                    set_column(err, self.unlisted_name, self.unlisted_len)
                    return fail_at(err, self.unlisted_at, "column is not in the target schema")
                tp.extra_checked = 1
        if var_push(&cs.var[CS_OP], OP_TEXT[op], OP_LEN[op]) < 0:
            return _oom(err)
        if info.has_commit_ts:
            if fix_push(&cs.fix[CS_TS], &info.commit_ts, sizeof(info.commit_ts)) < 0:
                return _oom(err)
        elif fix_push_null(&cs.fix[CS_TS]) < 0:
            return _oom(err)
        m32 = <int32_t>msg
        if fix_push(&cs.fix[CS_MSG], &m32, sizeof(m32)) < 0 or var_push_null(&cs.var[CS_DDL]) < 0:
            return _oom(err)
        if not self.core.typed:
            # typed output leaves these out (columns.AVRO_TYPED.unused): there they are not
            # written, and finish hands them over empty
            rc = self._push_extensions(info, kplan, err)
            if rc < 0:
                return rc
        elif info.has_checksum and info.checksum.n > 0 and not self.core.text_prevalidated \
                and not utf8_valid(info.checksum.p, info.checksum.n):
            # ... but the checksum is still text that must be UTF-8, as in generic output
            return fail_at(err, info.checksum.off, "invalid UTF-8 in a text value")
        if value_id_plan >= 0:
            if fix_push(&cs.fix[self.col_value_id], &self.wplans[value_id_plan].schema_id, sizeof(int32_t)) < 0:
                return _oom(err)
        elif fix_push_null(&cs.fix[self.col_value_id]) < 0:
            return _oom(err)
        if self.core.typed:
            return self._finish_typed_row(op, tp, err)
        if tp != NULL and op != OP_RESOLVED:
            if tp.db_len >= 0:
                if var_push(&cs.var[CS_SCHEMA], self.keys.data + tp.db_off, tp.db_len) < 0:
                    return _oom(err)
            elif var_push_null(&cs.var[CS_SCHEMA]) < 0:
                return _oom(err)
            if var_push(&cs.var[CS_TABLE], self.keys.data + tp.tbl_off, tp.tbl_len) < 0:
                return _oom(err)
        elif var_push_null(&cs.var[CS_SCHEMA]) < 0 or var_push_null(&cs.var[CS_TABLE]) < 0:
            return _oom(err)
        return self._finish_generic_row(op, err)

    cdef int _finish_generic_row(self, int op, Err* err) noexcept nogil:
        """The end of a generic row whose records' entries are in their maps: its deferred error,
        then each map's row.  A DELETE's values are its before image: the record they came from
        (the value, or a key-only DELETE's key) is read again into the before map."""
        cdef ColumnSet* cs = &self.core.cols
        cdef Cur c
        cdef int rc
        # a DELETE's _ticdc_before record is no before image: its errors are not the row's
        if self.conv_rank >= 0 and not (op == OP_DELETE and self.conv_rank == RANK_BEFORE):
            return self._raise_deferred(err)
        if op == OP_DELETE:
            colset_truncate_column(cs, CS_AFTER, self.row)
            colset_truncate_column(cs, CS_BEFORE, self.row)
            c = self.fill_cur
            self.render_col = CS_BEFORE
            self.render_rank = RANK_AFTER
            self.cur_plan = self.fill_plan
            rc = self._record(&c, &self.wplans[self.fill_plan], 0, self.wplans[self.fill_plan].nfields,
                              WALK_RERENDER, NULL, err)
            if rc < 0:
                return rc
            if map_close_row(cs, CS_AFTER, 0) < 0 or map_close_row(cs, CS_BEFORE, 1) < 0:
                return _oom(err)
        elif map_close_row(cs, CS_AFTER, op != OP_RESOLVED) < 0 or map_close_row(cs, CS_BEFORE, self.before_filled) < 0:
            return _oom(err)
        if map_close_row(cs, self.col_keymap, self.key_rendered) < 0:
            return _oom(err)
        return 0

    cdef int _raise_deferred(self, Err* err) noexcept nogil:
        """The row's deferred conversion or rendering error, now the call's."""
        err.failed = 1
        err.offset = self.conv_err.offset
        memcpy(err.reason, self.conv_err.reason, 256)
        set_column(err, <const uint8_t*>self.conv_err.column, self.conv_err.column_len)
        return RC_FAILED


cdef int _frame_commit_ts(const uint8_t* vp, Py_ssize_t vn, const char* why, RecInfo* info,
                          Err* err) noexcept nogil:
    """The commit ts of a delete event or checkpoint value (its frame byte + 8 bytes)."""
    cdef uint64_t u
    if vn != 9:
        return fail_at(err, 0, why)
    u = _be64(vp + 1)
    if u > 9223372036854775807ULL:
        return fail_at(err, 1, "commit ts out of range")
    info.commit_ts = <int64_t>u
    info.has_commit_ts = 1
    return 0


cdef int _record_op(RecInfo* info, Err* err) noexcept nogil:
    """The row's OP_* from _tidb_op (none or empty: an upsert without a commit ts), or RC_FAILED."""
    cdef int op
    if info.has_op and info.op.n == 1 and info.op.p[0] == 99:
        op = OP_INSERT
    elif info.has_op and info.op.n == 1 and info.op.p[0] == 117:
        op = OP_UPDATE
    elif info.has_op and info.op.n == 1 and info.op.p[0] == 100:
        op = OP_DELETE
    elif not info.has_op or info.op.n == 0:
        op = OP_UPSERT
        info.has_commit_ts = 0
    else:
        return fail_at(err, info.op.off, "unknown _tidb_op")
    if info.has_commit_ts and info.commit_ts < 0:
        return fail_at(err, info.commit_ts_at, "commit ts out of range")
    return op


cdef int _generic_decoder(const AvField* f, const AvBranch* b) noexcept nogil:
    """The GenericDecoder of one branch of a column: its text written at once where _value and
    PlanCore._render would come to it simply, else GEN_RENDER."""
    cdef int tk = TYPE_KIND[f.type_code]
    if b.kind == AV_NULL:
        return GEN_NULL
    if (b.kind == AV_INT or b.kind == AV_LONG) and (tk == K_INT or tk == K_UINT):
        return GEN_INT
    if (b.kind == AV_BYTES or b.kind == AV_FIXED) and f.type_code == T_BIT:
        return GEN_INT
    if (b.kind == AV_FLOAT or b.kind == AV_DOUBLE) and (f.type_code == T_FLOAT or f.type_code == T_DOUBLE):
        return GEN_FLOAT
    if b.kind == AV_STRING and tk != K_NULL and (is_character_text(f.type_code, f.flags)
                                                 or (tk != K_TEXT and tk != K_BLOB)):
        # a character column's, and any other whose string _render keeps as it is (DATE,
        # DATETIME, TIMESTAMP, TIME, JSON, ...): only binary text columns are decoded there
        return GEN_TEXT
    if (b.kind == AV_BYTES or b.kind == AV_FIXED) and f.type_code == T_NEWDECIMAL:
        return GEN_DECIMAL
    if (b.kind == AV_BYTES or b.kind == AV_FIXED) and tk == K_BLOB and (f.flags & FLAG_BINARY):
        # _value's base64, which _render verifies and keeps as it is
        return GEN_BASE64
    return GEN_RENDER


cdef int _compile_generic(WPlan* p, int nbranches) except -1:
    """Generic rows: the GenericDecoder of every branch, and the KeyRun of every record (the
    top level's, each nested _ticdc_before record's)."""
    cdef int k, bi, r = 1, ends_at
    for k in range(p.fields_len):
        for bi in range(p.fields[k].nbranch):
            p.branches[p.fields[k].branch0 + bi].gen = _generic_decoder(
                &p.fields[k], &p.branches[p.fields[k].branch0 + bi])
    p.key_ends = <int32_t*>calloc(max(p.fields_len, 1), sizeof(int32_t))
    p.key_runs = <KeyRun*>calloc(nbranches + 1, sizeof(KeyRun))
    if p.key_ends == NULL or p.key_runs == NULL:
        no_memory("the map keys of an Avro writer plan")
    ends_at = _key_run(p, 0, 0, p.nfields, 0)
    for bi in range(nbranches):
        if p.branches[bi].kind == AV_RECORD:
            ends_at = _key_run(p, r, p.branches[bi].sub_first, p.branches[bi].sub_count, ends_at)
            r += 1
    return 0


cdef int _key_run(WPlan* p, int r, int first, int count, int ends_at) except -1:
    """KeyRun r: the names of the column fields [first, first + count) of one record, their
    ends from p.key_ends[ends_at]; returns the ends used so far."""
    cdef KeyRun* run = &p.key_runs[r]
    cdef AvField* f
    cdef int k
    run.off = p.key_names.len
    run.ends_first = ends_at
    run.n = 0
    for k in range(first, first + count):
        f = &p.fields[k]
        f.key_run = r
        if f.role != ROLE_COLUMN:
            continue
        if buf_append(&p.key_names, p.names.data + f.name_off, f.name_len) < 0:
            no_memory("the map keys of an Avro writer plan")
        p.key_ends[ends_at + run.n] = <int32_t>(p.key_names.len - run.off)
        run.n += 1
    return ends_at + run.n


cdef int _render_decimal(Cur* c, const AvField* f, const AvBranch* b, VarCol* vals, Py_ssize_t off,
                         Err* err) noexcept nogil:
    """GEN_DECIMAL: the decimal's text written straight into the map's values (the text _value
    would put in the scratch, which _render keeps as it is: ASCII, no check needed)."""
    cdef Span raw
    cdef const char* why = NULL
    cdef int rc
    if _avro_bytes(c, b, &raw, err) < 0:
        return -1
    rc = decimal_bytes_text(raw.p, raw.n, b.dec_scale if b.dec_scale >= 0 else f.scale, &vals.data, &why)
    if rc == RC_NO_MEMORY:
        return _oom(err)
    if rc < 0:
        return fail_at(err, off, why)
    return _close(vals, 1, err)


cdef int _render_base64(Cur* c, const AvBranch* b, VarCol* vals, Err* err) noexcept nogil:
    """GEN_BASE64: the bytes' base64 written straight into the map's values."""
    cdef Span raw
    if _avro_bytes(c, b, &raw, err) < 0:
        return -1
    if b64_encode(raw.p, raw.n, &vals.data) < 0:
        return _oom(err)
    return _close(vals, 1, err)


cdef inline void _field_entry(ColEntry* e, const uint8_t* name, const AvField* f, int k,
                              Py_ssize_t off) noexcept nogil:
    """A row-image entry for the value of field k (at byte `off`) that _value is about to read."""
    e.name.p = name
    e.name.n = f.name_len
    e.name.esc = 0
    e.name.ascii = 0
    e.name_off = -1
    e.name_len = f.name_len
    e.hash = f.hash
    e.t = f.type_code
    e.f = f.flags
    e.has_t = 1
    e.col = k
    e.zone = -1
    e.v.off = off
    e.v.esc = 0
    e.v.neg = 0
    e.v.in_scratch = 0


cdef inline int _avro_int(Cur* c, const AvField* f, const AvBranch* b, Py_ssize_t off, IntVal* iv,
                   Err* err) noexcept nogil:
    """An Avro int/long of column f as sign and magnitude (BIGINT UNSIGNED in long mode: TiCDC
    cast the uint64 to int64, undone here)."""
    cdef int64_t lv
    if avro_long(c, &lv, err) < 0:
        return -1
    if b.kind == AV_INT and (lv < -2147483648LL or lv > 2147483647LL):
        return fail_at(err, off, "Avro int out of 32-bit range")
    int_from_long(lv, f.type_code == T_LONGLONG and (f.flags & FLAG_UNSIGNED), iv)
    return 0


cdef inline int _avro_bytes(Cur* c, const AvBranch* b, Span* raw, Err* err) noexcept nogil:
    """The bytes of an Avro bytes or fixed value (pointing into the input)."""
    if b.kind == AV_FIXED:
        if c.end - c.pos < b.size:
            return fail(err, c, "truncated Avro fixed")
        raw.p = c.pos
        raw.n = b.size
        c.pos += b.size
        return 0
    return avro_string(c, raw, err)


cdef inline int _avro_real(Cur* c, const AvBranch* b, Py_ssize_t off, double* out, Err* err) noexcept nogil:
    """An Avro float/double as a finite double."""
    if avro_real(c, b.kind == AV_FLOAT, out, err) < 0:
        return -1
    if isinf(out[0]) or isnan(out[0]):
        return fail_at(err, off, "NaN or infinite float")
    return 0


cdef inline int _avro_column_real(Cur* c, const AvField* f, const AvBranch* b, Py_ssize_t off,
                                  double* out, Err* err) noexcept nogil:
    """_avro_real of column f: a FLOAT column's value narrowed to float32 (out of its range: an
    error)."""
    cdef float f32
    if _avro_real(c, b, off, out, err) < 0:
        return -1
    if f.type_code == T_FLOAT:
        f32 = <float>out[0]
        if isinf(f32):
            return fail_at(err, off, "number out of range")
        out[0] = f32
    return 0


cdef int _avro_bit(Cur* c, const AvBranch* b, Py_ssize_t off, IntVal* iv, Err* err) noexcept nogil:
    """A BIT column's bytes/fixed (big-endian, leading zero bytes allowed) as an unsigned integer."""
    cdef Span raw
    cdef Py_ssize_t k = 0
    cdef uint64_t u = 0
    if _avro_bytes(c, b, &raw, err) < 0:
        return -1
    while k < raw.n and raw.p[k] == 0:
        k += 1
    if raw.n - k > 8:
        return fail_at(err, off, "BIT value longer than 64 bits")
    while k < raw.n:
        u = (u << 8) | raw.p[k]
        k += 1
    iv.neg = 0
    iv.mag = u
    return 0


cdef inline uint64_t _be64(const uint8_t* p) noexcept nogil:
    return ((<uint64_t>p[0] << 56) | (<uint64_t>p[1] << 48) | (<uint64_t>p[2] << 40) | (<uint64_t>p[3] << 32)
            | (<uint64_t>p[4] << 24) | (<uint64_t>p[5] << 16) | (<uint64_t>p[6] << 8) | <uint64_t>p[7])


_ROLES = {"_tidb_op": ROLE_OP, "_tidb_commit_ts": ROLE_COMMIT_TS, "_tidb_commit_physical_time": ROLE_PHYSICAL,
          "_tidb_row_level_checksum": ROLE_CHECKSUM, "_tidb_corrupted": ROLE_CORRUPTED,
          "_tidb_checksum_version": ROLE_CKVER, "_ticdc_before": ROLE_BEFORE}


def _flatten(fields, flat_fields, flat_branches, symbols, top=True):
    """Fields (and nested _ticdc_before record fields) into flat tuples for the C plan."""
    start = len(flat_fields)
    pending = []
    for f in fields:
        role = _ROLES.get(f.name, ROLE_COLUMN) if top else ROLE_COLUMN
        branch0 = len(flat_branches)
        for b in f.branches:
            dec_scale = b.decimal[1] if b.decimal is not None else -1
            sym_first = len(symbols)
            symbols.extend(b.symbols)
            flat_branches.append([b.kind, dec_scale, b.size, sym_first, len(b.symbols), -1, 0])
            if b.kind == AV_RECORD:
                pending.append((len(flat_branches) - 1, b.fields))
        flat_fields.append((f.name, role, 1 if f.is_union else 0, len(f.branches), branch0, f.type_code,
                            f.flags, f.scale))
    for bidx, sub in pending:
        first = len(flat_fields)
        _flatten(sub, flat_fields, flat_branches, symbols, top=False)
        flat_branches[bidx][5] = first
        flat_branches[bidx][6] = len(sub)
