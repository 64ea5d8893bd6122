# Open protocol: walk the batch framing of every message, scan each event's key and value
# JSON, and write Arrow buffers directly.  Runs without the GIL; errors go to an Err struct.

cdef struct KeyInfo:
    uint64_t ts
    int64_t rid
    int64_t ptn
    Span scm
    Span tbl
    Span ccl
    int t
    int has_ts
    int has_t
    int has_rid
    int has_ptn
    int ohk


cdef struct ColEntry:
    Span name
    Span v
    Span loc               # simple protocol: TIMESTAMP location (kind J_STR when present)
    int col                # simple protocol: column index in the table plan
    int tgt                # open protocol: target index from the name-sequence memo, -2 unknown
    Py_ssize_t name_off    # unescaped name in plan.names when name.esc, else -1
    Py_ssize_t name_len
    uint64_t hash
    uint32_t f
    int t
    int has_t
    int bad                # open: a COL_* fault of this column (judged on its last copy; v.off
                           # then holds the fault's offset), 0 if fine


cdef struct Image:
    ColEntry* cols
    Py_ssize_t n
    Py_ssize_t cap
    int present
    int plan               # simple/Avro: the table or writer plan its ColEntry.col indexes
    int slot               # simple: which image (data/old) of the message
    uint32_t gen           # simple: generation stamped on the plan's per-column index when read
    int direct             # Avro: typed fields of this image were written straight to their columns
    int any_bad            # open: some column was marked bad while reading (a later copy may clear it)
    const char* bad        # open: the image itself is not an object (its last copy), NULL if fine
    Py_ssize_t bad_off


cdef int image_make_room(Image* img) noexcept nogil:
    """Room for one more column entry: 0, or RUN_FAIL (the old entries stay) when out of memory."""
    cdef Py_ssize_t cap = img.cap * 2 + 16
    cdef ColEntry* grown = <ColEntry*>realloc(img.cols, cap * sizeof(ColEntry))
    if grown == NULL:
        note_failed_alloc(cap * <Py_ssize_t>sizeof(ColEntry))
        return RUN_FAIL
    img.cols = grown
    img.cap = cap
    return 0


cdef struct BareMember:
    # open: a t/h/f/v member written straight into "p" (ticdc, protocols.md E.15)
    Span v
    Py_ssize_t at          # distinct named columns of "p" before it
    int field              # the member name's byte: t, h, f or v


cdef struct BareWork:
    # scratch of OpenPlan._recover_bare
    Py_ssize_t* gat
    Py_ssize_t* left
    Py_ssize_t* right
    Py_ssize_t* pre
    Py_ssize_t* suf
    int* gt
    int* slot
    uint8_t* named
    Span* gv
    ColEntry* out
    Py_ssize_t cap


cdef struct MapCol:
    Buf offsets
    Bits valid
    VarCol keys
    VarCol vals
    int32_t count


cdef enum:
    # Avro readers in typed mode: numbers travel raw in the span (n holds the bits, neg the
    # sign), not as text
    J_RAWINT = 20
    J_RAWF64 = 21


cdef enum:
    IMG_U = 0
    IMG_P = 1
    IMG_D = 2


cdef enum:
    # faults of one open-protocol column (ColEntry.bad)
    COL_FINE = 0
    COL_NOT_OBJECT = 1
    COL_BAD_TYPE = 2
    COL_BAD_FLAGS = 3
    COL_BAD_HANDLE = 4
    COL_BAD_NAME = 5


cdef const char* COL_FAULT_TEXT[6]
COL_FAULT_TEXT[0] = b""
COL_FAULT_TEXT[1] = b"column value is not a JSON object"
COL_FAULT_TEXT[2] = b"unknown column type code"
COL_FAULT_TEXT[3] = b"invalid column flags"
COL_FAULT_TEXT[4] = b"invalid handle marker"
COL_FAULT_TEXT[5] = b"invalid UTF-8 in a column name"


cdef inline bint _is_bare_field(uint8_t ch) noexcept nogil:
    return ch == 116 or ch == 104 or ch == 102 or ch == 118     # t h f v


cdef inline int fail_at(Err* err, Py_ssize_t off, const char* reason) noexcept nogil:
    err.failed = 1
    err.offset = off
    strncpy(err.reason, reason, 255)
    err.reason[255] = 0
    return -1


cdef inline uint64_t fnv1a(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h


cdef inline uint64_t _table_hash(const uint8_t* schema, Py_ssize_t sn, const uint8_t* table,
                                  Py_ssize_t tn) noexcept nogil:
    """FNV-1a over schema, a 0xff byte (never in UTF-8, so the split is unambiguous) and table."""
    cdef uint64_t h = fnv1a(schema, sn)
    cdef Py_ssize_t i
    h = (h ^ 0xff) * 1099511628211ULL
    for i in range(tn):
        h = (h ^ table[i]) * 1099511628211ULL
    return h


cdef int map_init(MapCol* m, Py_ssize_t rows, Py_ssize_t hint) noexcept nogil:
    if buf_reserve_fresh(&m.offsets, (rows + 1) * 4) < 0:
        return -1
    (<int32_t*>m.offsets.data)[0] = 0
    m.offsets.len = 4
    m.count = 0
    if var_init(&m.keys, rows * 8, hint // 2) < 0:
        return -1
    return var_init(&m.vals, rows * 8, hint // 2)


cdef void map_free(MapCol* m) noexcept nogil:
    buf_free(&m.offsets)
    buf_free(&m.valid.b)
    m.valid.n = 0
    m.valid.nulls = 0
    var_free(&m.keys)
    var_free(&m.vals)


cdef inline int map_close_row(MapCol* m, bint valid) noexcept nogil:
    if buf_append(&m.offsets, &m.count, 4) < 0:
        return -1
    return bits_push(&m.valid, valid)


cdef enum:
    KK_TS = 0
    KK_T = 1
    KK_SCM = 2
    KK_TBL = 3
    KK_CCL = 4
    KK_RID = 5
    KK_PTN = 6
    KK_OHK = 7
    EVENT_KEYS = 8
    KSEQ_MAX = 16


cdef const char* EVENT_KEY_TEXT[8]
cdef Py_ssize_t EVENT_KEY_LEN[8]
EVENT_KEY_TEXT[0] = b"ts"
EVENT_KEY_LEN[0] = 2
EVENT_KEY_TEXT[1] = b"t"
EVENT_KEY_LEN[1] = 1
EVENT_KEY_TEXT[2] = b"scm"
EVENT_KEY_LEN[2] = 3
EVENT_KEY_TEXT[3] = b"tbl"
EVENT_KEY_LEN[3] = 3
EVENT_KEY_TEXT[4] = b"ccl"
EVENT_KEY_LEN[4] = 3
EVENT_KEY_TEXT[5] = b"rid"
EVENT_KEY_LEN[5] = 3
EVENT_KEY_TEXT[6] = b"ptn"
EVENT_KEY_LEN[6] = 3
EVENT_KEY_TEXT[7] = b"ohk"
EVENT_KEY_LEN[7] = 3


cdef class OpenPlan:
    """Compiled once per decoder (table, target schema, time zone); decodes batches."""
    cdef int typed
    cdef int control_events
    cdef int ntargets
    cdef int* writers
    cdef int* precisions
    cdef int* scales
    cdef Buf target_names        # concatenated target names
    cdef Py_ssize_t* tname_off   # ntargets + 1 offsets
    cdef uint64_t* tname_hash
    cdef int* tslot              # open addressing: slot -> target index or -1
    cdef int tslot_cap
    cdef bytes schema_name
    cdef bytes table_name
    cdef const char* schema_name_c     # into the bytes above, for nogil comparisons
    cdef const char* table_name_c
    cdef Py_ssize_t schema_name_n
    cdef Py_ssize_t table_name_n
    cdef int64_t* tz_bounds
    cdef int64_t* tz_offsets
    cdef Py_ssize_t tz_n
    # scratch
    cdef Buf names
    cdef Buf tmp
    cdef Buf tmp2
    cdef Buf numtmp
    # the column-name sequence of the last image: rows of a table repeat it, so a matching name
    # reuses its hash and target and skips de-duplication (the memo's names are distinct)
    cdef Buf memo_names
    cdef Buf memo_off          # Py_ssize_t per name + 1
    cdef Buf memo_hash         # uint64_t per name
    cdef Buf memo_tgt          # int per name
    cdef Buf memo_kind         # uint8 per name: 0 needs JSON escaping, 1 plain ASCII, 2 plain non-ASCII
    cdef Py_ssize_t memo_n
    cdef int kseq[16]          # event-key field id seen at each position of the last event key
    cdef Image images[3]
    cdef Buf bare              # BareMember per bare member of the last "p" read
    cdef int before_incomplete # the UPDATE just read leaves some bare group unplaced
    cdef uint32_t* dd_gen
    cdef int32_t* dd_idx
    cdef Py_ssize_t dd_cap
    cdef uint32_t gen
    cdef int* present          # per target: entry index or -1
    # output builders (live during one decode call)
    cdef VarCol c_op
    cdef FixCol c_ts
    cdef VarCol c_schema
    cdef VarCol c_table
    cdef VarCol c_ddl
    cdef MapCol c_after
    cdef MapCol c_before
    cdef FixCol c_ddl_type
    cdef FixCol c_rid
    cdef FixCol c_ptn
    cdef FixCol c_hko
    cdef VarCol c_ccl
    cdef FixCol c_bic
    cdef FixCol c_msg
    cdef FixCol* t_fix
    cdef VarCol* t_var
    cdef object target_types
    # typed output's old image (`_before`, opt-in): a struct of the targets, filled by swapping
    # these builders in for t_fix/t_var while the old image is converted (same rules, no copy)
    cdef int with_old_image
    cdef FixCol* o_fix
    cdef VarCol* o_var
    cdef Bits o_valid
    cdef object old_image_type
    # Set while a call runs (the decode loops release the GIL and free/rebuild the builders):
    # a second thread gets DecoderBusyError at once instead of sharing the buffers.
    cdef int busy
    # invalid UTF-8 in a column's text: 0 replace it with U+FFFD (and count the value), 1 raise
    cdef int utf8_strict
    cdef Buf utf8_fix               # the invalid text while its repaired form is written
    # text values that needed a U+FFFD, over the plan's life (front ends count per decode call)
    cdef readonly long long invalid_utf8_replaced
    # tables={...} (set_routes): this plan walks the framing and parses each event key once, then
    # hands the value to the typed plan of the event's table, which parses it and writes its own
    # columns.  The sub-plans are ordinary typed plans held by this one (composition): each keeps
    # its own column-name memo, so interleaved tables do not evict one another's.
    cdef list routes                # the sub-plans, in the order the tables were listed
    cdef void** route_ptr           # the same objects, for calls without the GIL
    cdef int nroutes
    cdef uint64_t* route_hash       # per sub-plan: _table_hash of its (schema, table)
    cdef int* route_slot            # open addressing: slot -> sub-plan index or -1
    cdef int route_cap
    cdef int keep_unlisted          # unlisted="generic": this plan writes their rows, generic layout
    cdef long long unlisted_skipped # unlisted="skip": rows left out during the current call

    cdef int _claim(self) except -1:
        # checked and set with the GIL held, so two threads cannot both pass
        if self.busy:
            raise DecoderBusyError(
                "this decoder is already decoding in another thread; a decoder is not thread-safe: "
                "use one decoder per thread")
        self.busy = 1
        return 0

    def __cinit__(self, cfg):
        cdef int j
        cdef Py_ssize_t k
        self.typed = cfg.targets is not None
        self.control_events = bool(cfg.control_events)
        self.utf8_strict = getattr(cfg, "invalid_utf8", "replace") == "error"
        targets = cfg.targets or ()
        self.ntargets = len(targets)
        n = max(self.ntargets, 1)
        self.writers = <int*>calloc(n, sizeof(int))
        self.precisions = <int*>calloc(n, sizeof(int))
        self.scales = <int*>calloc(n, sizeof(int))
        self.present = <int*>calloc(n, sizeof(int))
        self.tname_off = <Py_ssize_t*>calloc(n + 1, sizeof(Py_ssize_t))
        self.tname_hash = <uint64_t*>calloc(n, sizeof(uint64_t))
        self.t_fix = <FixCol*>calloc(n, sizeof(FixCol))
        self.t_var = <VarCol*>calloc(n, sizeof(VarCol))
        self.o_fix = <FixCol*>calloc(n, sizeof(FixCol))
        self.o_var = <VarCol*>calloc(n, sizeof(VarCol))
        self.tslot_cap = 16
        while self.tslot_cap < 2 * n:
            self.tslot_cap *= 2
        self.tslot = <int*>malloc(self.tslot_cap * sizeof(int))
        if not (self.writers and self.precisions and self.scales and self.present and self.tname_off
                and self.tname_hash and self.t_fix and self.t_var and self.o_fix and self.o_var
                and self.tslot):
            no_memory("the target column arrays")
        for k in range(self.tslot_cap):
            self.tslot[k] = -1
        self.target_types = [t.arrow_type for t in targets]
        self.with_old_image = self.typed and bool(getattr(cfg, "old_image", False))
        self.old_image_type = pa.struct([pa.field(t.name, t.arrow_type) for t in targets])
        for j, t in enumerate(targets):
            self.writers[j] = t.writer
            self.precisions[j] = t.precision
            self.scales[j] = t.scale
            name = t.name.encode("utf-8")
            self.tname_off[j] = self.target_names.len
            if buf_append(&self.target_names, <const char*>name, len(name)) < 0:
                no_memory("the target column names")
            self.tname_hash[j] = fnv1a(<const uint8_t*><const char*>name, len(name))
            k = <Py_ssize_t>(self.tname_hash[j] & <uint64_t>(self.tslot_cap - 1))
            while self.tslot[k] >= 0:
                k = (k + 1) & (self.tslot_cap - 1)
            self.tslot[k] = j
        self.tname_off[self.ntargets] = self.target_names.len
        self.schema_name = (cfg.schema_name or "").encode("utf-8")
        self.table_name = (cfg.table_name or "").encode("utf-8")
        self.schema_name_c = self.schema_name
        self.table_name_c = self.table_name
        self.schema_name_n = len(self.schema_name)
        self.table_name_n = len(self.table_name)
        self.tz_n = len(cfg.tz_bounds)
        self.tz_bounds = <int64_t*>malloc(self.tz_n * sizeof(int64_t))
        self.tz_offsets = <int64_t*>malloc(self.tz_n * sizeof(int64_t))
        if not (self.tz_bounds and self.tz_offsets):
            no_memory("the time zone transitions")
        for k in range(self.tz_n):
            self.tz_bounds[k] = cfg.tz_bounds[k]
            self.tz_offsets[k] = cfg.tz_offsets[k]
        self.dd_cap = 0
        self.gen = 0
        for k in range(KSEQ_MAX):
            self.kseq[k] = -1

    def __dealloc__(self):
        buf_free(&self.memo_names)
        buf_free(&self.memo_off)
        buf_free(&self.memo_hash)
        buf_free(&self.memo_tgt)
        buf_free(&self.memo_kind)
        cdef int i
        self._free_outputs()
        free(self.writers)
        free(self.precisions)
        free(self.scales)
        free(self.present)
        free(self.tname_off)
        free(self.tname_hash)
        free(self.tslot)
        free(self.t_fix)
        free(self.t_var)
        free(self.o_fix)
        free(self.o_var)
        free(self.tz_bounds)
        free(self.tz_offsets)
        free(self.dd_gen)
        free(self.dd_idx)
        free(self.route_ptr)
        free(self.route_hash)
        free(self.route_slot)
        buf_free(&self.target_names)
        buf_free(&self.names)
        buf_free(&self.tmp)
        buf_free(&self.tmp2)
        buf_free(&self.numtmp)
        buf_free(&self.utf8_fix)
        buf_free(&self.bare)
        for i in range(3):
            free(self.images[i].cols)

    cdef void _free_outputs(self) noexcept nogil:
        cdef int j
        var_free(&self.c_op)
        fix_free(&self.c_ts)
        var_free(&self.c_schema)
        var_free(&self.c_table)
        var_free(&self.c_ddl)
        map_free(&self.c_after)
        map_free(&self.c_before)
        fix_free(&self.c_ddl_type)
        fix_free(&self.c_rid)
        fix_free(&self.c_ptn)
        fix_free(&self.c_hko)
        var_free(&self.c_ccl)
        fix_free(&self.c_bic)
        fix_free(&self.c_msg)
        if self.t_fix != NULL:
            for j in range(self.ntargets):
                fix_free(&self.t_fix[j])
                var_free(&self.t_var[j])
        if self.o_fix != NULL:
            for j in range(self.ntargets):
                fix_free(&self.o_fix[j])
                var_free(&self.o_var[j])
        buf_free(&self.o_valid.b)
        self.o_valid.n = 0
        self.o_valid.nulls = 0

    cdef int _init_outputs(self, Py_ssize_t rows, Py_ssize_t bytes_hint) noexcept nogil:
        cdef int j, w
        if (var_init(&self.c_op, rows, rows * 6) < 0 or fix_init(&self.c_ts, 8, rows) < 0
                or var_init(&self.c_ddl, rows, 0) < 0 or fix_init(&self.c_hko, 0, rows) < 0
                or var_init(&self.c_ccl, rows, 0) < 0 or fix_init(&self.c_msg, 4, rows) < 0
                or fix_init(&self.c_bic, 0, rows) < 0):
            return -1
        if not self.typed:
            if (var_init(&self.c_schema, rows, rows * 8) < 0 or var_init(&self.c_table, rows, rows * 8) < 0
                    or map_init(&self.c_after, rows, bytes_hint) < 0
                    or map_init(&self.c_before, rows, bytes_hint // 4) < 0
                    or fix_init(&self.c_ddl_type, 4, rows) < 0 or fix_init(&self.c_rid, 8, rows) < 0
                    or fix_init(&self.c_ptn, 8, rows) < 0):
                return -1
        else:
            for j in range(self.ntargets):
                w = self.writers[j]
                if w == W_STRING or w == W_BINARY:
                    if var_init(&self.t_var[j], rows, bytes_hint // (self.ntargets + 1)) < 0:
                        return -1
                elif fix_init(&self.t_fix[j], writer_width(w), rows) < 0:
                    return -1
                if not self.with_old_image:
                    continue
                if w == W_STRING or w == W_BINARY:
                    if var_init(&self.o_var[j], rows, bytes_hint // (4 * self.ntargets + 4)) < 0:
                        return -1
                elif fix_init(&self.o_fix[j], writer_width(w), rows) < 0:
                    return -1
        return 0

    # ------------------------------------------------------------------ python entry
    def decode(self, kbuf, koff, vbuf, voff):
        self._claim()
        try:
            return self._decode_body(kbuf, koff, vbuf, voff)
        finally:
            self.busy = 0

    def set_routes(self, plans, bint keep_unlisted):
        """Make this (generic) plan the router of a multi-table decode: ``plans`` are the typed
        plans of the listed tables; events of other tables get this plan's generic rows
        (``keep_unlisted``) or are checked and counted."""
        cdef int k, j
        cdef Py_ssize_t s
        cdef OpenPlan sub
        if self.typed or self.nroutes:
            raise ValueError("only a generic plan without routes can route events")
        plans = list(plans)
        if not plans:
            raise ValueError("set_routes needs at least one typed plan")
        for sub in plans:
            if not sub.typed or sub.nroutes:
                raise ValueError("a route must be a typed plan")
        self.route_cap = 16
        while self.route_cap < 2 * len(plans):
            self.route_cap *= 2
        self.route_ptr = <void**>calloc(len(plans), sizeof(void*))
        self.route_hash = <uint64_t*>calloc(len(plans), sizeof(uint64_t))
        self.route_slot = <int*>malloc(self.route_cap * sizeof(int))
        if not (self.route_ptr and self.route_hash and self.route_slot):
            no_memory("the table routes")
        for s in range(self.route_cap):
            self.route_slot[s] = -1
        for k, sub in enumerate(plans):
            self.route_ptr[k] = <void*>sub
            self.route_hash[k] = _table_hash(<const uint8_t*>sub.schema_name_c, sub.schema_name_n,
                                             <const uint8_t*>sub.table_name_c, sub.table_name_n)
            s = <Py_ssize_t>(self.route_hash[k] & <uint64_t>(self.route_cap - 1))
            while self.route_slot[s] >= 0:
                j = self.route_slot[s]
                if self._route_is(j, <const uint8_t*>sub.schema_name_c, sub.schema_name_n,
                                  <const uint8_t*>sub.table_name_c, sub.table_name_n):
                    raise ValueError("a table is routed twice")
                s = (s + 1) & (self.route_cap - 1)
            self.route_slot[s] = k
        self.routes = plans
        self.nroutes = len(plans)
        self.keep_unlisted = keep_unlisted

    def decode_tables(self, kbuf, koff, vbuf, voff):
        """A routing plan's decode: ``([(columns, message index per row)] per routed table,
        (columns, message index) of the unlisted tables' generic rows or None, unlisted rows
        skipped)``."""
        if not self.nroutes:
            raise ValueError("decode_tables needs set_routes first")
        self._claim()
        try:
            self._walk(kbuf, koff, vbuf, voff)
            tables = [(<OpenPlan>sub)._finish() for sub in self.routes]
            other = self._finish() if self.keep_unlisted else None
            self._free_outputs()
            return tables, other, self.unlisted_skipped
        finally:
            self.busy = 0

    cdef object _decode_body(self, kbuf, koff, vbuf, voff):
        if self.nroutes:
            raise ValueError("a routing plan decodes with decode_tables")
        self._walk(kbuf, koff, vbuf, voff)
        return self._finish()

    cdef int _walk(self, kbuf, koff, vbuf, voff) except -1:
        """Decode the batch into the output builders (this plan's, and its routes' if any)."""
        cdef const uint8_t[::1] kb = memoryview(kbuf).cast("B") if len(kbuf) else b"\0"
        cdef const uint8_t[::1] vb = memoryview(vbuf).cast("B") if len(vbuf) else b"\0"
        cdef const int64_t[::1] ko = memoryview(koff.buffers()[1]).cast("q")[koff.offset:koff.offset + len(koff)]
        cdef const int64_t[::1] vo = memoryview(voff.buffers()[1]).cast("q")[voff.offset:voff.offset + len(voff)]
        cdef Py_ssize_t n = len(koff) - 1
        cdef Py_ssize_t rows, hint
        cdef Err err
        cdef int rc, k
        cdef OpenPlan sub
        if len(voff) - 1 != n:
            raise DecodeError(f"{n} keys but {len(voff) - 1} values")
        memset(&err, 0, sizeof(Err))
        self._free_outputs()
        # every event key is at least ~48 bytes with its length word: a row estimate that does
        # not undershoot batched messages (reserved but untouched pages cost nothing)
        rows = n * 2 + 16 + (ko[n] - ko[0]) // 48
        hint = vo[n] - vo[0] + 64
        self.unlisted_skipped = 0
        if self.nroutes and not self.keep_unlisted:
            rc = self._init_outputs(0, 0)         # a router that writes no row of its own
        else:
            rc = self._init_outputs(rows, hint)   # GIL held: pool
        for k in range(self.nroutes):
            sub = <OpenPlan>self.route_ptr[k]
            sub._free_outputs()
            if rc == 0:
                rc = sub._init_outputs(rows, hint)
        if rc == 0:
            with nogil:
                rc = self._run(&kb[0], &ko[0], &vb[0], &vo[0], n, &err)
        for k in range(self.nroutes):
            # the front end reads one counter, the router's
            sub = <OpenPlan>self.route_ptr[k]
            self.invalid_utf8_replaced += sub.invalid_utf8_replaced
            sub.invalid_utf8_replaced = 0
        if rc != 0:
            self._free_outputs()
            for k in range(self.nroutes):
                (<OpenPlan>self.route_ptr[k])._free_outputs()
            raise_decode_error(&err, "open-protocol", None)
        return 0

    cdef object _finish(self):
        cdef int j, w
        cols = [var_to_array(&self.c_op, pa.string()), fix_to_array(&self.c_ts, pa.int64())]
        if self.typed:
            for j in range(self.ntargets):
                w = self.writers[j]
                if w == W_STRING or w == W_BINARY:
                    cols.append(var_to_array(&self.t_var[j], self.target_types[j]))
                else:
                    cols.append(fix_to_array(&self.t_fix[j], self.target_types[j]))
            if self.with_old_image:
                cols.append(self._old_image_array())
            cols += [var_to_array(&self.c_ddl, pa.string()), fix_to_array(&self.c_hko, pa.bool_()),
                     var_to_array(&self.c_ccl, pa.string()), fix_to_array(&self.c_bic, pa.bool_())]
        else:
            cols += [var_to_array(&self.c_schema, pa.string()), var_to_array(&self.c_table, pa.string()),
                     var_to_array(&self.c_ddl, pa.string()), _map_to_array(&self.c_after),
                     _map_to_array(&self.c_before), fix_to_array(&self.c_ddl_type, pa.int32()),
                     fix_to_array(&self.c_rid, pa.int64()), fix_to_array(&self.c_ptn, pa.int64()),
                     fix_to_array(&self.c_hko, pa.bool_()), var_to_array(&self.c_ccl, pa.string()),
                     fix_to_array(&self.c_bic, pa.bool_())]
        msg = fix_to_array(&self.c_msg, pa.int32())
        self._free_outputs()
        return cols, msg

    cdef object _old_image_array(self):
        """The `_before` struct column: the old-image builders as children, null where a row
        has no old image."""
        cdef int j, w
        cdef Py_ssize_t n = self.o_valid.n
        cdef Py_ssize_t nulls = self.o_valid.nulls
        children = []
        for j in range(self.ntargets):
            w = self.writers[j]
            if w == W_STRING or w == W_BINARY:
                children.append(var_to_array(&self.o_var[j], self.target_types[j]))
            else:
                children.append(fix_to_array(&self.o_fix[j], self.target_types[j]))
        validity = take_validity(&self.o_valid)
        self.o_valid.n = 0
        self.o_valid.nulls = 0
        return pa.Array.from_buffers(self.old_image_type, n, [validity], null_count=nulls,
                                     children=children)

    # ------------------------------------------------------------------ framing walk
    cdef int _run(self, const uint8_t* kb, const int64_t* ko, const uint8_t* vb, const int64_t* vo,
                  Py_ssize_t n, Err* err) noexcept nogil:
        cdef Py_ssize_t i
        cdef Cur kc, vc, kd, vd
        cdef uint64_t version, klen, vlen
        cdef int rc
        for i in range(n):
            err.msg = i
            if ko[i + 1] < ko[i] or vo[i + 1] < vo[i]:
                err.part = PART_NONE
                return fail_at(err, 0, "invalid message offsets")
            kc.start = kb + ko[i]
            kc.pos = kc.start
            kc.end = kb + ko[i + 1]
            vc.start = vb + vo[i]
            vc.pos = vc.start
            vc.end = vb + vo[i + 1]
            err.part = PART_KEY
            if read_u64be(&kc, &version, err, "batch version") < 0:
                return -1
            if version != 1:
                kc.pos = kc.start
                return fail_fmt(err, &kc, "unsupported batch version %llu%.0lld", <long long>version, 0)
            while kc.pos < kc.end:
                err.part = PART_KEY
                if read_u64be(&kc, &klen, err, "event key length") < 0:
                    return -1
                if klen > <uint64_t>(kc.end - kc.pos):
                    kc.pos -= 8
                    return fail_fmt(err, &kc, "event key length %llu exceeds the %lld bytes left",
                                    <long long>klen, <long long>(kc.end - kc.pos - 8))
                err.part = PART_VALUE
                if vc.pos >= vc.end:
                    return fail(err, &vc, "the value holds fewer events than the key")
                if read_u64be(&vc, &vlen, err, "event value length") < 0:
                    return -1
                if vlen > <uint64_t>(vc.end - vc.pos):
                    vc.pos -= 8
                    return fail_fmt(err, &vc, "event value length %llu exceeds the %lld bytes left",
                                    <long long>vlen, <long long>(vc.end - vc.pos - 8))
                kd.start = kc.start
                kd.pos = kc.pos
                kd.end = kc.pos + klen
                vd.start = vc.start
                vd.pos = vc.pos
                vd.end = vc.pos + vlen
                rc = self._event(&kd, &vd, i, err)
                if rc < 0:
                    return -1
                kc.pos = kd.end
                vc.pos = vd.end
            if vc.pos != vc.end:
                err.part = PART_VALUE
                return fail(err, &vc, "the value holds more events than the key")
        return 0

    # ------------------------------------------------------------------ one event
    cdef int _event(self, Cur* kd, Cur* vd, Py_ssize_t msg, Err* err) noexcept nogil:
        cdef KeyInfo key
        cdef int k, rc
        err.part = PART_KEY
        if self._parse_key(kd, &key, err) < 0:
            return -1
        err.part = PART_VALUE
        if not self.nroutes:
            return self._event_value(&key, vd, msg, err, 0)
        if key.t == MSG_RESOLVED:
            # every listed table's batch has it, as its single-table decode does
            for k in range(self.nroutes):
                rc = (<OpenPlan>self.route_ptr[k])._event_value(&key, vd, msg, err, 1)
                if rc < 0:
                    return rc
            return 0
        k = self._route_of(&key)
        if k >= 0:
            return (<OpenPlan>self.route_ptr[k])._event_value(&key, vd, msg, err, 1)
        if k == -2:
            return -2
        if self.keep_unlisted:
            return self._event_value(&key, vd, msg, err, 0)
        return self._skip_value(&key, vd, err)

    cdef int _skip_value(self, const KeyInfo* key, Cur* vd, Err* err) noexcept nogil:
        """unlisted="skip": an event of a table not listed is still read and checked, as a
        single-table typed decode reads other tables' events (so a message fails alike), but
        nothing is written; it counts as the one row it would have been."""
        cdef Span q
        cdef int64_t qt = 0
        cdef int has_qt = 0, op
        q.kind = J_ABSENT
        if key.t == MSG_DDL:
            if self._parse_ddl(vd, &q, &qt, &has_qt, err) < 0:
                return -1
        elif self._parse_row(vd, &op, err) < 0:
            return -1
        self.unlisted_skipped += 1
        return 0

    cdef int _route_of(self, const KeyInfo* key) noexcept nogil:
        """The index of the sub-plan of the event's table, -1 for a table not listed (or an
        event without schema or table), -2 out of memory.  Escaped names are compared
        unescaped, as the single-table filter does."""
        cdef const uint8_t* sp
        cdef const uint8_t* tp
        cdef Py_ssize_t sn, tn, s
        cdef int k
        if key.scm.kind != J_STR or key.tbl.kind != J_STR:
            return -1
        sp = key.scm.p
        sn = key.scm.n
        if key.scm.esc:
            self.tmp.len = 0
            if json_unescape(key.scm.p, key.scm.n, &self.tmp) < 0:
                return -2
            sp = self.tmp.data
            sn = self.tmp.len
        tp = key.tbl.p
        tn = key.tbl.n
        if key.tbl.esc:
            self.tmp2.len = 0
            if json_unescape(key.tbl.p, key.tbl.n, &self.tmp2) < 0:
                return -2
            tp = self.tmp2.data
            tn = self.tmp2.len
        s = <Py_ssize_t>(_table_hash(sp, sn, tp, tn) & <uint64_t>(self.route_cap - 1))
        while True:
            k = self.route_slot[s]
            if k < 0 or self._route_is(k, sp, sn, tp, tn):
                return k
            s = (s + 1) & (self.route_cap - 1)

    cdef inline bint _route_is(self, int k, const uint8_t* sp, Py_ssize_t sn, const uint8_t* tp,
                               Py_ssize_t tn) noexcept nogil:
        # no local of the plan's type: that would count references, which needs the GIL
        return ((<OpenPlan>self.route_ptr[k]).schema_name_n == sn
                and (<OpenPlan>self.route_ptr[k]).table_name_n == tn
                and bytes_eq(<const uint8_t*>(<OpenPlan>self.route_ptr[k]).schema_name_c, sp, sn)
                and bytes_eq(<const uint8_t*>(<OpenPlan>self.route_ptr[k]).table_name_c, tp, tn))

    cdef int _event_value(self, const KeyInfo* kp, Cur* vd, Py_ssize_t msg, Err* err,
                          int routed) noexcept nogil:
        """Parse one event's value (its key already read) and write its row.  ``routed``: a
        router chose this typed plan by the event's table, which needs no second look."""
        cdef KeyInfo key = kp[0]
        cdef Span q
        cdef int64_t qt = 0
        cdef int has_qt = 0, op, hko, rc
        cdef int32_t m32
        cdef Image* a = NULL
        cdef Image* b = NULL
        q.kind = J_ABSENT
        self.before_incomplete = 0
        if key.t == MSG_RESOLVED:
            if vd.end != vd.pos:
                return fail(err, vd, "resolved event with a non-empty value")
            op = OP_RESOLVED
        elif key.t == MSG_DDL:
            if self._parse_ddl(vd, &q, &qt, &has_qt, err) < 0:
                return -1
            op = OP_DDL
        else:
            if self._parse_row(vd, &op, err) < 0:
                return -1
            if op == OP_DELETE:
                b = &self.images[IMG_D]
            else:
                a = &self.images[IMG_U]
                if op == OP_UPDATE:
                    b = &self.images[IMG_P]
        if self.typed:
            if key.t != MSG_RESOLVED and not routed and not (
                    _span_equals(&key.scm, self.schema_name_c, self.schema_name_n, &self.tmp)
                    and _span_equals(&key.tbl, self.table_name_c, self.table_name_n, &self.tmp)):
                return 0
            if key.t != MSG_ROW and not self.control_events:
                return 0
        hko = key.ohk and key.ccl.kind != J_STR
        if var_push(&self.c_op, OP_TEXT[op], OP_LEN[op]) < 0 or fix_push(&self.c_ts, &key.ts) < 0:
            return -2
        m32 = <int32_t>msg
        if fix_push(&self.c_msg, &m32) < 0 or fix_push_bool(&self.c_hko, hko) < 0 \
                or fix_push_bool(&self.c_bic, self.before_incomplete) < 0:
            return -2
        if self._push_text(&self.c_ddl, &q, err) < 0 or self._push_text(&self.c_ccl, &key.ccl, err) < 0:
            return -1
        if self.typed:
            rc = self._emit_typed(a if a != NULL else b, vd, err)
            if rc < 0 or not self.with_old_image:
                return rc
            return self._emit_old_image(b, vd, err)
        if self._push_text(&self.c_schema, &key.scm, err) < 0 or self._push_text(&self.c_table, &key.tbl, err) < 0:
            return -1
        if op == OP_UPDATE:
            self._old_flags_from_new(b, a)
        if self._emit_map(&self.c_after, a, err) < 0 or self._emit_map(&self.c_before, b, err) < 0:
            return -1
        m32 = <int32_t>qt
        if (_push_opt(&self.c_ddl_type, &m32, has_qt) < 0 or _push_opt(&self.c_rid, &key.rid, key.has_rid) < 0
                or _push_opt(&self.c_ptn, &key.ptn, key.has_ptn) < 0):
            return -2
        return 0

    cdef int _parse_key(self, Cur* c, KeyInfo* k, Err* err) noexcept nogil:
        # A repeated field counts by its last copy, as in Go's encoding/json (TiCDC writes
        # "ohk":true then "ohk":false in a claim-check key): the scan only remembers where each
        # field's last value is; the fields are judged after the whole document is read, in the
        # twin's order, so both report the same first fault.
        cdef Span name, v
        cdef Span vals[8]
        cdef IntVal iv
        cdef int r, kid, kpos = 0
        cdef unsigned seen = 0
        memset(k, 0, sizeof(KeyInfo))
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return fail(err, c, "event key is not a JSON object")
        r = obj_open(c, err)
        if r < 0:
            return -1
        while r == 0:
            # event keys repeat their field order: try the key seen at this position last time
            kid = self.kseq[kpos] if kpos < KSEQ_MAX else -1
            if kid >= 0:
                r = obj_key_expected(c, &name, <const uint8_t*>EVENT_KEY_TEXT[kid], EVENT_KEY_LEN[kid], 1, err)
                if r < 0:
                    return -1
                if r == 0:
                    kid = -1
            if kid < 0:
                if obj_key(c, &name, err) < 0:
                    return -1
                kid = key_id(&name, EVENT_KEY_TEXT, EVENT_KEY_LEN, EVENT_KEYS)
                if kpos < KSEQ_MAX:
                    self.kseq[kpos] = kid
            kpos += 1
            if kid >= 0:
                if scan_value(c, &vals[kid], 2, err) < 0:
                    return -1
                seen |= 1u << kid
            elif scan_value(c, &v, 2, err) < 0:
                return -1
            r = obj_next(c, err)
            if r < 0:
                return -1
            r = 1 - r
        if doc_end(c, err) < 0:
            return -1
        if seen & (1u << KK_TS):
            v = vals[KK_TS]
            if v.kind == J_INT:
                if parse_int_text(v.p, v.n, &iv) < 0 or (iv.neg and iv.mag != 0) or iv.mag > 9223372036854775807ULL:
                    return fail_at(err, v.off, "event key field 'ts' out of range")
                k.ts = iv.mag
                k.has_ts = 1
            elif v.kind != J_NULL:
                return fail_at(err, v.off, "event key field 'ts' has an invalid value")
        if seen & (1u << KK_SCM) and _key_str(&vals[KK_SCM], &k.scm, err) < 0:
            return -1
        if seen & (1u << KK_TBL) and _key_str(&vals[KK_TBL], &k.tbl, err) < 0:
            return -1
        if seen & (1u << KK_RID) and _key_int(&vals[KK_RID], &k.rid, &k.has_rid, err) < 0:
            return -1
        if seen & (1u << KK_PTN) and _key_int(&vals[KK_PTN], &k.ptn, &k.has_ptn, err) < 0:
            return -1
        if seen & (1u << KK_T):
            v = vals[KK_T]
            if v.kind == J_INT:
                if parse_int_text(v.p, v.n, &iv) < 0 or not int_in_range(&iv, -9223372036854775807LL - 1, 9223372036854775807ULL):
                    return fail_at(err, v.off, "event key field 't' has an invalid value")
                k.t = <int>iv.mag if (not iv.neg and iv.mag < 100) else 0
                k.has_t = 1
            elif v.kind != J_NULL:
                return fail_at(err, v.off, "event key field 't' has an invalid value")
        if seen & (1u << KK_OHK):
            v = vals[KK_OHK]
            if v.kind == J_TRUE:
                k.ohk = 1
            elif not (v.kind == J_FALSE or v.kind == J_NULL):
                return fail_at(err, v.off, "event key field 'ohk' has an invalid value")
        if seen & (1u << KK_CCL) and _key_str(&vals[KK_CCL], &k.ccl, err) < 0:
            return -1
        if not k.has_ts:
            return fail_at(err, 0 if c.start == NULL else (c.end - c.start) - 1, "event key has no ts")
        if not k.has_t or not (k.t == MSG_ROW or k.t == MSG_DDL or k.t == MSG_RESOLVED):
            return fail_at(err, (c.end - c.start) - 1, "event key has an unknown type t")
        # UTF-8 of names (the twin checks them too)
        if _check_utf8_span(&k.scm, &self.tmp, err) < 0 or _check_utf8_span(&k.tbl, &self.tmp, err) < 0 \
                or _check_utf8_span(&k.ccl, &self.tmp, err) < 0:
            return -1
        return 0

    cdef int _parse_ddl(self, Cur* c, Span* q, int64_t* qt, int* has_qt, Err* err) noexcept nogil:
        # last copy of a repeated field wins; judged after the document is read (see _parse_key)
        cdef Span name, v, vq, vt
        cdef IntVal iv
        cdef int r
        vq.kind = J_ABSENT
        vt.kind = J_ABSENT
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return fail(err, c, "DDL value is not a JSON object")
        r = obj_open(c, err)
        if r < 0:
            return -1
        while r == 0:
            if obj_key(c, &name, err) < 0 or scan_value(c, &v, 2, err) < 0:
                return -1
            if key_is(&name, b"q", 1):
                vq = v
            elif key_is(&name, b"t", 1):
                vt = v
            r = obj_next(c, err)
            if r < 0:
                return -1
            r = 1 - r
        if doc_end(c, err) < 0:
            return -1
        if vq.kind == J_STR:
            q[0] = vq
        elif not (vq.kind == J_NULL or vq.kind == J_ABSENT):
            return fail_at(err, vq.off, "DDL query is not a string")
        if vt.kind == J_INT:
            if parse_int_text(vt.p, vt.n, &iv) < 0 or not int_in_range(&iv, -2147483648LL, 2147483647ULL):
                return fail_at(err, vt.off, "DDL type is not an int32")
            qt[0] = int_value(&iv)
            has_qt[0] = 1
        elif not (vt.kind == J_NULL or vt.kind == J_ABSENT):
            return fail_at(err, vt.off, "DDL type is not an int32")
        return _check_utf8_span(q, &self.tmp, err)

    cdef int _parse_row(self, Cur* c, int* op, Err* err) noexcept nogil:
        cdef Span name, v
        cdef int r, which
        cdef Image* img
        cdef Py_ssize_t value_off = c.pos - c.start
        self.images[0].present = 0
        self.images[1].present = 0
        self.images[2].present = 0
        self.names.len = 0
        self.bare.len = 0
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return fail(err, c, "row value is not a JSON object")
        r = obj_open(c, err)
        if r < 0:
            return -1
        while r == 0:
            if obj_key(c, &name, err) < 0:
                return -1
            which = -1
            if key_is(&name, b"u", 1):
                which = IMG_U
            elif key_is(&name, b"p", 1):
                which = IMG_P
            elif key_is(&name, b"d", 1):
                which = IMG_D
            # A repeated u/p/d replaces the earlier copy (last wins, as Go's encoding/json):
            # faults in an image are only recorded while reading and judged once the document
            # is read, u then p then d as the twin does.
            if which < 0:
                if scan_value(c, &v, 2, err) < 0:
                    return -1
            elif c.pos[0] == 123:
                if self._parse_image(c, &self.images[which], err) < 0:
                    return -1
            else:
                if scan_value(c, &v, 2, err) < 0:
                    return -1
                img = &self.images[which]
                img.n = 0
                img.any_bad = 0
                if which == IMG_P:
                    self.bare.len = 0
                if v.kind == J_NULL:
                    img.present = 0
                    img.bad = NULL
                else:
                    img.present = 1
                    img.bad = "row image is not a JSON object"
                    img.bad_off = v.off
            r = obj_next(c, err)
            if r < 0:
                return -1
            r = 1 - r
        if doc_end(c, err) < 0:
            return -1
        for which in range(3):
            img = &self.images[which]
            if img.present and (img.bad != NULL or img.any_bad) and self._image_fault(img, err) < 0:
                return -1
        if self.images[IMG_D].present:
            if self.images[IMG_U].present or self.images[IMG_P].present:
                return fail_at(err, value_off, "row value has both d and u/p")
            op[0] = OP_DELETE
            return 0
        if not self.images[IMG_U].present:
            return fail_at(err, value_off, "row value has no u or d")
        op[0] = OP_UPDATE if self.images[IMG_P].present else OP_INSERT
        if op[0] == OP_UPDATE and self.bare.len:
            return self._recover_bare(value_off, err)
        return 0

    cdef int _recover_bare(self, Py_ssize_t value_off, Err* err) noexcept nogil:
        """ticdc's writeColumnFieldValueIfUpdated writes a column that went from non-NULL to
        NULL as bare "t",["h":true],"f","v" members of "p" (protocols.md E.15, addendum 6).
        TiCDC writes "p" in table column order, as "u", so a group lies between the u positions
        of the named p columns around it, and its column is NULL in u, not named in p, and of
        the group's type.  The groups map in order onto such columns; a group whose column is
        the same in the leftmost and the rightmost mapping has only one possible column and is
        inserted into "p"; the others are left out and flag the row (the twin's _recover_bare)."""
        cdef BareWork w
        cdef Py_ssize_t nm = self.bare.len // sizeof(BareMember)
        cdef Py_ssize_t nu = self.images[IMG_U].n, np_ = self.images[IMG_P].n
        cdef const char* why = NULL
        cdef int rc = -2
        w.cap = 16
        while w.cap < 2 * nu + 2:
            w.cap *= 2
        w.gat = <Py_ssize_t*>malloc((nm + 1) * sizeof(Py_ssize_t))
        w.left = <Py_ssize_t*>malloc((nm + 1) * sizeof(Py_ssize_t))
        w.right = <Py_ssize_t*>malloc((nm + 1) * sizeof(Py_ssize_t))
        w.pre = <Py_ssize_t*>malloc((np_ + 1) * sizeof(Py_ssize_t))
        w.suf = <Py_ssize_t*>malloc((np_ + 1) * sizeof(Py_ssize_t))
        w.gt = <int*>malloc((nm + 1) * sizeof(int))
        w.slot = <int*>malloc(w.cap * sizeof(int))
        w.named = <uint8_t*>calloc(nu + 1, 1)
        w.gv = <Span*>malloc((nm + 1) * sizeof(Span))
        w.out = <ColEntry*>malloc((np_ + nm + 1) * sizeof(ColEntry))
        if w.gat and w.left and w.right and w.pre and w.suf and w.gt and w.slot and w.named and w.gv and w.out:
            why = self._place_bare(&w, nm)
            rc = -1 if why != NULL else 0
            if rc == 0:
                free(self.images[IMG_P].cols)
                self.images[IMG_P].cols = w.out
                self.images[IMG_P].cap = np_ + nm + 1
                w.out = NULL
        free(w.gat)
        free(w.left)
        free(w.right)
        free(w.pre)
        free(w.suf)
        free(w.gt)
        free(w.slot)
        free(w.named)
        free(w.gv)
        free(w.out)
        if rc == -1:
            return fail_at(err, value_off, why)
        return rc

    cdef const char* _place_bare(self, BareWork* w, Py_ssize_t nm) noexcept nogil:
        """The work of _recover_bare in w's scratch arrays: NULL when done (w.out then holds
        the new "p"), else the fault."""
        cdef const BareMember* m = <const BareMember*>self.bare.data
        cdef Image* u = &self.images[IMG_U]
        cdef Image* p = &self.images[IMG_P]
        cdef Py_ssize_t nu = u.n, np_ = p.n, i = 0, k = 0, j, c, s, cap = w.cap, gi, nout, at, hit
        cdef ColEntry* e
        cdef const ColEntry* o
        cdef IntVal iv
        # the groups, in the twin's order of faults
        while i < nm:
            at = m[i].at
            if m[i].field != 116:
                return "bare column members in p do not form t,[h],f,v groups"
            if not (m[i].v.kind == J_INT and parse_int_text(m[i].v.p, m[i].v.n, &iv) == 0
                    and (not iv.neg or iv.mag == 0) and iv.mag < 256 and TYPE_KIND[iv.mag] != 0):
                return "bare column group in p has an invalid t"
            w.gt[k] = <int>iv.mag
            i += 1
            if i < nm and m[i].field == 104:
                if m[i].v.kind != J_TRUE or m[i].at != at:
                    return "bare column members in p do not form t,[h],f,v groups"
                i += 1
            if i >= nm or m[i].field != 102 or m[i].at != at:
                return "bare column members in p do not form t,[h],f,v groups"
            if not (m[i].v.kind == J_INT and parse_int_text(m[i].v.p, m[i].v.n, &iv) == 0
                    and (not iv.neg or iv.mag == 0) and iv.mag <= 0xFFFFFFFFULL):
                return "bare column group in p has an invalid f"
            i += 1
            if i >= nm or m[i].field != 118 or m[i].at != at:
                return "bare column members in p do not form t,[h],f,v groups"
            if m[i].v.kind == J_NULL:
                return "bare column group in p has a null v"
            w.gv[k] = m[i].v
            w.gat[k] = at
            k += 1
            i += 1
        # u position of each named p column (u names are distinct: a repeat replaced its entry)
        for s in range(cap):
            w.slot[s] = -1
        for j in range(nu):
            s = <Py_ssize_t>(u.cols[j].hash & <uint64_t>(cap - 1))
            while w.slot[s] >= 0:
                s = (s + 1) & (cap - 1)
            w.slot[s] = <int>j
        w.pre[0] = -1
        for j in range(np_):
            e = &p.cols[j]
            hit = -1
            s = <Py_ssize_t>(e.hash & <uint64_t>(cap - 1))
            while w.slot[s] >= 0:
                o = &u.cols[w.slot[s]]
                if o.hash == e.hash and o.name_len == e.name_len \
                        and bytes_eq(self._name_ptr(o), self._name_ptr(e), e.name_len):
                    hit = w.slot[s]
                    break
                s = (s + 1) & (cap - 1)
            if hit >= 0:
                w.named[hit] = 1
            w.suf[j] = hit if hit >= 0 else nu       # the column's own u position for now
            w.pre[j + 1] = hit if hit > w.pre[j] else w.pre[j]
        w.suf[np_] = nu
        for j in range(np_ - 1, -1, -1):
            if w.suf[j + 1] < w.suf[j]:
                w.suf[j] = w.suf[j + 1]
        # leftmost mapping
        c = -1
        for gi in range(k):
            at = w.gat[gi]
            c = c + 1 if c + 1 > w.pre[at] + 1 else w.pre[at] + 1
            while c < nu and not self._bare_fits(u, w.named, w.gt[gi], w.pre[at], w.suf[at], c):
                c += 1
            if c >= nu:
                return "bare column groups in p match no NULL column of u"
            w.left[gi] = c
        # rightmost mapping (bounded below by the leftmost one)
        c = nu
        for gi in range(k - 1, -1, -1):
            at = w.gat[gi]
            c = c - 1 if c - 1 < w.suf[at] - 1 else w.suf[at] - 1
            while c > w.left[gi] and not self._bare_fits(u, w.named, w.gt[gi], w.pre[at], w.suf[at], c):
                c -= 1
            w.right[gi] = c
        # the new "p": recovered groups at their place among the named columns
        nout = 0
        gi = 0
        for j in range(np_ + 1):
            while gi < k and w.gat[gi] == j:
                if w.left[gi] == w.right[gi]:
                    w.out[nout] = u.cols[w.left[gi]]
                    w.out[nout].v = w.gv[gi]
                    w.out[nout].bad = 0
                    nout += 1
                else:
                    self.before_incomplete = 1
                gi += 1
            if j < np_:
                w.out[nout] = p.cols[j]
                nout += 1
        p.n = nout
        return NULL

    cdef inline bint _bare_fits(self, const Image* u, const uint8_t* named, int t, Py_ssize_t lo,
                                Py_ssize_t hi, Py_ssize_t c) noexcept nogil:
        cdef const ColEntry* o = &u.cols[c]
        return (lo < c < hi and not named[c] and o.t == t
                and (o.v.kind == J_NULL or o.v.kind == J_ABSENT))

    cdef int _image_fault(self, Image* img, Err* err) noexcept nogil:
        """-1 with the first fault of a read image (its columns in output order), else 0."""
        cdef Py_ssize_t k
        cdef ColEntry* e
        if img.bad != NULL:
            return fail_at(err, img.bad_off, img.bad)
        if not img.any_bad:
            return 0
        for k in range(img.n):
            e = &img.cols[k]
            if e.bad:
                set_column(err, self._name_ptr(e), e.name_len)
                return fail_at(err, e.v.off, COL_FAULT_TEXT[e.bad])
        return 0

    cdef int _dedupe_slot(self, Image* img, Py_ssize_t idx) noexcept nogil:
        """Insert entry idx into the per-image hash; if its name exists, overwrite the earlier
        entry in place (JSON last-wins, first position) and return 1."""
        cdef ColEntry* e = &img.cols[idx]
        cdef ColEntry* o
        cdef Py_ssize_t s, cap, k
        cdef const uint8_t* a
        cdef const uint8_t* b
        if img.n * 2 >= self.dd_cap:
            if self._grow_dedupe(img, idx) < 0:
                return -2
        cap = self.dd_cap
        s = <Py_ssize_t>(e.hash & <uint64_t>(cap - 1))
        a = self._name_ptr(e)
        while self.dd_gen[s] == self.gen:
            o = &img.cols[self.dd_idx[s]]
            if o.hash == e.hash and o.name_len == e.name_len:
                b = self._name_ptr(o)
                if bytes_eq(<const uint8_t*>(a), <const uint8_t*>(b), e.name_len):
                    o.v = e.v
                    o.t = e.t
                    o.f = e.f
                    o.has_t = e.has_t
                    o.bad = e.bad
                    return 1
            s = (s + 1) & (cap - 1)
        self.dd_gen[s] = self.gen
        self.dd_idx[s] = <int32_t>idx
        return 0

    cdef int _grow_dedupe(self, Image* img, Py_ssize_t upto) noexcept nogil:
        cdef Py_ssize_t cap = self.dd_cap * 2 if self.dd_cap else 64
        cdef Py_ssize_t k, s
        while cap < (img.n + 1) * 4:
            cap *= 2
        free(self.dd_gen)
        free(self.dd_idx)
        self.dd_gen = <uint32_t*>calloc(cap, sizeof(uint32_t))
        self.dd_idx = <int32_t*>malloc(cap * sizeof(int32_t))
        self.dd_cap = 0
        if self.dd_gen == NULL or self.dd_idx == NULL:
            return -1
        self.dd_cap = cap
        self.gen = 1
        for k in range(upto):
            s = <Py_ssize_t>(img.cols[k].hash & <uint64_t>(cap - 1))
            while self.dd_gen[s] == self.gen:
                s = (s + 1) & (cap - 1)
            self.dd_gen[s] = self.gen
            self.dd_idx[s] = <int32_t>k
        return 0

    cdef void _old_flags_from_new(self, Image* old, const Image* new) noexcept nogil:
        """An UPDATE's old column takes the flags of its new copy: ticdc v8.5.x wrote TiDB's
        column flags (NotNull=1, Binary=128, ...) into "p" under only-output-updated-columns,
        while "u" always carries TiCDC's (protocols.md E.13).  Both images list the columns in
        the same order unless "p" is a subset, so position k is tried first."""
        cdef Py_ssize_t k, j
        cdef ColEntry* e
        cdef const ColEntry* o
        cdef const uint8_t* np
        for k in range(old.n):
            e = &old.cols[k]
            np = self._name_ptr(e)
            if k < new.n:
                o = &new.cols[k]
                if o.hash == e.hash and o.name_len == e.name_len and bytes_eq(self._name_ptr(o), np, e.name_len):
                    e.f = o.f
                    continue
            for j in range(new.n):
                o = &new.cols[j]
                if o.hash == e.hash and o.name_len == e.name_len and bytes_eq(self._name_ptr(o), np, e.name_len):
                    e.f = o.f
                    break

    cdef inline const uint8_t* _name_ptr(self, const ColEntry* e) noexcept nogil:
        if e.name_off >= 0:
            return self.names.data + e.name_off
        return e.name.p

    cdef int _parse_image(self, Cur* c, Image* img, Err* err) noexcept nogil:
        cdef Span name, v, ck, vt, vf, vh
        cdef int r, r2, dup, field
        cdef ColEntry* e
        cdef IntVal iv
        cdef int memo_ok = 1, deduped = 0
        cdef Py_ssize_t k, mo
        cdef const Py_ssize_t* moff = <const Py_ssize_t*>self.memo_off.data
        cdef BareMember bm
        cdef bint is_old = img == &self.images[IMG_P]
        if is_old:
            self.bare.len = 0
        img.present = 1
        img.n = 0
        img.bad = NULL
        img.any_bad = 0
        self.gen += 1
        if self.gen == 0:
            if self.dd_gen != NULL:
                memset(self.dd_gen, 0, self.dd_cap * sizeof(uint32_t))
            self.gen = 1
        r = obj_open(c, err)
        if r < 0:
            return -1
        while r == 0:
            if img.n == img.cap and image_make_room(img) < 0:
                return -2
            e = &img.cols[img.n]
            k = img.n
            r2 = 0
            if memo_ok and k < self.memo_n and self.memo_kind.data[k]:
                # the name the last row had here, matched byte for byte (no string scan)
                r2 = obj_key_expected(c, &e.name, self.memo_names.data + moff[k], moff[k + 1] - moff[k],
                                      self.memo_kind.data[k] == 1, err)
                if r2 < 0:
                    return -1
            if r2 == 0 and obj_key(c, &e.name, err) < 0:
                return -1
            if e.name.esc:
                e.name_off = self.names.len
                if json_unescape(e.name.p, e.name.n, &self.names) < 0:
                    return -2
                e.name_len = self.names.len - e.name_off
            else:
                e.name_off = -1
                e.name_len = e.name.n
            if is_old and c.pos[0] != 123 and e.name_len == 1 and _is_bare_field(self._name_ptr(e)[0]):
                # not a column: a member of a bare group (protocols.md E.15), placed after the row
                bm.field = self._name_ptr(e)[0]
                bm.at = img.n
                if scan_value(c, &bm.v, 3, err) < 0:
                    return -1
                if buf_append(&self.bare, &bm, sizeof(BareMember)) < 0:
                    return -2
                r = obj_next(c, err)
                if r < 0:
                    return -1
                r = 1 - r
                continue
            # A column's faults are recorded on its entry, not raised: a later copy of the same
            # column name replaces the entry (last wins), and _image_fault judges what is left.
            e.bad = 0
            e.has_t = 0
            e.f = 0
            e.v.kind = J_ABSENT
            e.v.off = c.pos - c.start
            if c.pos[0] != 123:
                if scan_value(c, &v, 3, err) < 0:
                    return -1
                e.bad = COL_NOT_OBJECT
            else:
                r2 = _column_fast(c, e, err)
                if r2 < 0:
                    return -1
            if e.bad == 0 and r2 == 0:
                # another shape than TiCDC's own: the member loop (r2 == 1 for an empty object)
                vt.kind = J_ABSENT
                vf.kind = J_ABSENT
                vh.kind = J_ABSENT
                r2 = obj_open(c, err)
                if r2 < 0:
                    return -1
                while r2 == 0:
                    if obj_key(c, &ck, err) < 0 or scan_value(c, &v, 4, err) < 0:
                        return -1
                    # members repeat last-wins; escaped spellings ("\u0074") mean the same name
                    field = 0
                    if ck.n == 1 and not ck.esc:
                        field = ck.p[0]
                    elif ck.esc:
                        if key_is(&ck, b"v", 1):
                            field = 118
                        elif key_is(&ck, b"t", 1):
                            field = 116
                        elif key_is(&ck, b"f", 1):
                            field = 102
                        elif key_is(&ck, b"h", 1):
                            field = 104
                    if field == 118:        # v
                        e.v = v
                    elif field == 116:      # t
                        vt = v
                    elif field == 102:      # f
                        vf = v
                    elif field == 104:      # h
                        vh = v
                    r2 = obj_next(c, err)
                    if r2 < 0:
                        return -1
                    r2 = 1 - r2
                # judge the last t, f, h in the twin's order
                if vt.kind == J_INT and parse_int_text(vt.p, vt.n, &iv) == 0 and (not iv.neg or iv.mag == 0) \
                        and iv.mag < 256 and TYPE_KIND[iv.mag] != 0:
                    e.t = <int>iv.mag
                    e.has_t = 1
                else:
                    e.bad = COL_BAD_TYPE
                    if vt.kind != J_ABSENT:
                        e.v.off = vt.off
                if e.bad == 0:
                    if vf.kind == J_INT and parse_int_text(vf.p, vf.n, &iv) == 0 and (not iv.neg or iv.mag == 0) \
                            and iv.mag <= 0xFFFFFFFFULL:
                        e.f = <uint32_t>iv.mag
                    elif not (vf.kind == J_NULL or vf.kind == J_ABSENT):
                        e.bad = COL_BAD_FLAGS
                        e.v.off = vf.off
                if e.bad == 0 and not (vh.kind == J_TRUE or vh.kind == J_FALSE
                                          or vh.kind == J_NULL or vh.kind == J_ABSENT):
                    e.bad = COL_BAD_HANDLE
                    e.v.off = vh.off
            if not e.name.ascii and not utf8_valid(self._name_ptr(e), e.name_len):
                e.bad = COL_BAD_NAME
                e.v.off = e.name.off
            if e.bad:
                img.any_bad = 1
            k = img.n
            if memo_ok and k < self.memo_n and not e.name.esc and moff[k + 1] - moff[k] == e.name_len \
                    and bytes_eq(self.memo_names.data + moff[k], e.name.p, e.name_len):
                e.hash = (<const uint64_t*>self.memo_hash.data)[k]
                e.tgt = (<const int*>self.memo_tgt.data)[k]
                img.n += 1
            else:
                if memo_ok:
                    # off the memo: the entries so far are distinct; enter them for de-duplication
                    memo_ok = 0
                    for mo in range(k):
                        if self._dedupe_slot(img, mo) < 0:
                            return -2
                e.hash = fnv1a(self._name_ptr(e), e.name_len)
                e.tgt = -2
                dup = self._dedupe_slot(img, img.n)
                if dup < 0:
                    return -2
                if dup == 0:
                    img.n += 1
                else:
                    deduped = 1
            r = obj_next(c, err)
            if r < 0:
                return -1
            r = 1 - r
        if not memo_ok:
            self._save_memo(img, deduped or img.any_bad)
        return 0

    cdef void _save_memo(self, Image* img, int deduped) noexcept nogil:
        """Remember this image's name sequence (only when no name repeated: positions must map
        one to one).  Out of memory just leaves the memo empty."""
        cdef Py_ssize_t k, off
        cdef ColEntry* e
        cdef int tgt
        self.memo_n = 0
        if deduped:
            return
        self.memo_names.len = 0
        self.memo_off.len = 0
        self.memo_hash.len = 0
        self.memo_tgt.len = 0
        self.memo_kind.len = 0
        off = 0
        if buf_append(&self.memo_off, &off, sizeof(Py_ssize_t)) < 0:
            return
        for k in range(img.n):
            e = &img.cols[k]
            tgt = self._lookup_target(e) if self.typed else -1
            e.tgt = tgt
            off = self.memo_names.len + e.name_len
            if buf_append(&self.memo_names, self._name_ptr(e), e.name_len) < 0 \
                    or buf_append(&self.memo_off, &off, sizeof(Py_ssize_t)) < 0 \
                    or buf_append(&self.memo_hash, &e.hash, 8) < 0 \
                    or buf_append(&self.memo_tgt, &tgt, sizeof(int)) < 0 \
                    or buf_push_byte(&self.memo_kind, _name_kind(self._name_ptr(e), e.name_len)) < 0:
                return
        self.memo_n = img.n

    # ------------------------------------------------------------------ output
    cdef int _push_text(self, VarCol* out, const Span* s, Err* err) noexcept nogil:
        """Push a JSON string (unescaped, UTF-8 checked) or null for absent/empty-null."""
        return self._push_str(out, s, 0, err)

    cdef int _push_value_text(self, VarCol* out, const Span* s, Err* err) noexcept nogil:
        """_push_text for a column's value: invalid UTF-8 follows the invalid_utf8 option."""
        return self._push_str(out, s, 1, err)

    cdef int _text_invalid(self, Buf* out, Py_ssize_t before, Py_ssize_t off, Err* err) noexcept nogil:
        """out.data[before:] is a column's text that is not UTF-8: raise (invalid_utf8="error")
        or rewrite it in place with U+FFFD and count the value."""
        if self.utf8_strict:
            return fail_at(err, off, "invalid UTF-8 in a text value")
        self.utf8_fix.len = 0
        if buf_append(&self.utf8_fix, out.data + before, out.len - before) < 0:
            return _oom(err)
        out.len = before
        if utf8_replace_invalid(self.utf8_fix.data, self.utf8_fix.len, out) < 0:
            return _oom(err)
        self.invalid_utf8_replaced += 1
        return 0

    cdef int _append_value_bytes(self, VarCol* out, const uint8_t* p, Py_ssize_t n, Py_ssize_t off,
                                 Err* err) noexcept nogil:
        """Append decoded bytes that must be a column's text (UTF-8 under the invalid_utf8
        option); the caller closes the row.  `p` must not point into `out`."""
        if utf8_valid(p, n):
            if buf_append(&out.data, p, n) < 0:
                return _oom(err)
            return 0
        if self.utf8_strict:
            return fail_at(err, off, "invalid UTF-8 in a text value")
        if utf8_replace_invalid(p, n, &out.data) < 0:
            return _oom(err)
        self.invalid_utf8_replaced += 1
        return 0

    cdef int _push_str(self, VarCol* out, const Span* s, int value, Err* err) noexcept nogil:
        cdef Py_ssize_t before
        if s.kind != J_STR:
            if var_push_null(out) < 0:
                return _oom(err)
            return 0
        before = out.data.len
        if s.esc:
            if json_unescape(s.p, s.n, &out.data) < 0:
                return _oom(err)
        elif buf_append(&out.data, s.p, s.n) < 0:
            return _oom(err)
        if not s.ascii and not utf8_valid(out.data.data + before, out.data.len - before):
            if not value:
                return fail_at(err, s.off, "invalid UTF-8 in a text value")
            if self._text_invalid(&out.data, before, s.off, err) < 0:
                return -1
        # an empty schema/table/location is reported as null, like the tiflow flavour omits it
        if out.data.len == before and (out is &self.c_schema or out is &self.c_table or out is &self.c_ccl):
            return _close(out, 0, err)
        return _close(out, 1, err)

    cdef int _emit_map(self, MapCol* m, Image* img, Err* err) noexcept nogil:
        cdef Py_ssize_t k
        cdef ColEntry* e
        cdef const uint8_t* np
        if img == NULL:
            if map_close_row(m, 0) < 0:
                return _oom(err)
            return 0
        for k in range(img.n):
            e = &img.cols[k]
            np = self._name_ptr(e)
            if var_push(&m.keys, np, e.name_len) < 0:
                return _oom(err)
            if self._render(e, &m.vals, err) < 0:
                set_column(err, np, e.name_len)
                return -1
            m.count += 1
        if map_close_row(m, 1) < 0:
            return _oom(err)
        return 0

    cdef int _str_bytes(self, const Span* s, const uint8_t** p, Py_ssize_t* n, Err* err) noexcept nogil:
        """The unescaped bytes of a string span (zero copy when it has no escapes)."""
        if not s.esc:
            p[0] = s.p
            n[0] = s.n
            return 0
        self.tmp.len = 0
        if json_unescape(s.p, s.n, &self.tmp) < 0:
            return _oom(err)
        p[0] = self.tmp.data
        n[0] = self.tmp.len
        return 0

    cdef int _raw_bytes(self, const ColEntry* e, int kind, const uint8_t** p, Py_ssize_t* n,
                        Err* err) noexcept nogil:
        """Raw bytes of a TEXT/BLOB value: Go-unquoted (binary) or base64-decoded (blob)."""
        cdef const char* why = NULL
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "expected a string")
        if self._str_bytes(&e.v, p, n, err) < 0:
            return -1
        if kind == K_BLOB:
            self.tmp2.len = 0
            if b64_decode(p[0], n[0], &self.tmp2, &why) < 0:
                return fail_at(err, e.v.off, why)
            p[0] = self.tmp2.data
            n[0] = self.tmp2.len
        elif e.f & FLAG_BINARY:
            self.tmp2.len = 0
            if go_unquote(p[0], n[0], &self.tmp2, &why) < 0:
                return fail_at(err, e.v.off, why)
            p[0] = self.tmp2.data
            n[0] = self.tmp2.len
        return 0

    cdef int _render(self, const ColEntry* e, VarCol* out, Err* err) noexcept nogil:
        """Generic output: the value as text (docs/open-protocol.md)."""
        cdef int kind = TYPE_KIND[e.t]
        cdef const Span* s = &e.v
        cdef IntVal iv
        cdef int64_t lo
        cdef uint64_t hi
        cdef char txt[400]
        cdef int n
        cdef double x
        cdef const uint8_t* p
        cdef Py_ssize_t ln
        cdef const char* why = NULL
        if s.kind == J_NULL or s.kind == J_ABSENT:
            return _close(out, 0, err)
        if kind == K_NULL:
            return fail_at(err, s.off, "type NULL with a non-null value")
        if kind == K_INT or kind == K_UINT or kind == K_ENUM:
            if s.kind == J_STR:
                return self._push_value_text(out, s, err)
            if s.kind != J_INT:
                return fail_at(err, s.off, "expected an integer")
            int_range(e.t, e.f, &lo, &hi)
            if parse_int_text(s.p, s.n, &iv) < 0 or not int_in_range(&iv, lo, hi):
                return fail_at(err, s.off, "integer out of range")
            n = int_to_text(&iv, txt)
            if buf_append(&out.data, txt, n) < 0:
                return _oom(err)
            return _close(out, 1, err)
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if s.kind == J_STR:
                return self._push_value_text(out, s, err)
            if s.kind != J_INT and s.kind != J_FLOAT:
                return fail_at(err, s.off, "expected a number")
            n = format_shortest(s.p, s.n, s.kind == J_INT, 32 if kind == K_FLOAT32 else 64, &x, txt,
                                &self.numtmp)
            if n < 0:
                return fail_at(err, s.off, "number out of range")
            if buf_append(&out.data, txt, n) < 0:
                return _oom(err)
            return _close(out, 1, err)
        if kind == K_TEXT or kind == K_BLOB:
            if s.kind != J_STR:
                return fail_at(err, s.off, "expected a string")
            if kind == K_TEXT and not (e.f & FLAG_BINARY):
                return self._push_value_text(out, s, err)
            if self._raw_bytes(e, kind, &p, &ln, err) < 0:
                return -1
            if e.f & FLAG_BINARY:
                if kind == K_BLOB:
                    # canonical base64 was verified: the text itself is the answer
                    if self._str_bytes(s, &p, &ln, err) < 0:
                        return -1
                    if buf_append(&out.data, p, ln) < 0:
                        return _oom(err)
                elif b64_encode(p, ln, &out.data) < 0:
                    return _oom(err)
                return _close(out, 1, err)
            if self._append_value_bytes(out, p, ln, s.off, err) < 0:
                return -1
            return _close(out, 1, err)
        if s.kind != J_STR:
            return fail_at(err, s.off, "expected a string")
        return self._push_value_text(out, s, err)

    cdef int _target_by_name(self, const uint8_t* name, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h = fnv1a(name, n)
        cdef Py_ssize_t s = <Py_ssize_t>(h & <uint64_t>(self.tslot_cap - 1))
        cdef int j
        while True:
            j = self.tslot[s]
            if j < 0:
                return -1
            if self.tname_hash[j] == h and self.tname_off[j + 1] - self.tname_off[j] == n \
                    and bytes_eq(<const uint8_t*>(self.target_names.data + self.tname_off[j]), <const uint8_t*>(name), n):
                return j
            s = (s + 1) & (self.tslot_cap - 1)

    cdef int _lookup_target(self, const ColEntry* e) noexcept nogil:
        cdef Py_ssize_t s = <Py_ssize_t>(e.hash & <uint64_t>(self.tslot_cap - 1))
        cdef int j
        cdef const uint8_t* np = self._name_ptr(e)
        while True:
            j = self.tslot[s]
            if j < 0:
                return -1
            if self.tname_hash[j] == e.hash and self.tname_off[j + 1] - self.tname_off[j] == e.name_len \
                    and bytes_eq(<const uint8_t*>(self.target_names.data + self.tname_off[j]), <const uint8_t*>(np), e.name_len):
                return j
            s = (s + 1) & (self.tslot_cap - 1)

    cdef inline int _push_target_null(self, int j) noexcept nogil:
        """A null in target column j (0, or -2 out of memory)."""
        if self.writers[j] == W_STRING or self.writers[j] == W_BINARY:
            return 0 if var_push_null(&self.t_var[j]) == 0 else -2
        return 0 if fix_push_null(&self.t_fix[j]) == 0 else -2

    cdef int _push_target_int(self, int j, const IntVal* iv, int t, uint32_t flags, Py_ssize_t off,
                              Err* err) noexcept nogil:
        """An integer of a column of type t into integer target j, both ranges checked."""
        cdef int w = self.writers[j]
        cdef int64_t lo, v64
        cdef uint64_t hi
        cdef int8_t i8
        cdef int16_t i16
        cdef int32_t i32
        int_range(t, flags, &lo, &hi)
        if not int_in_range(iv, lo, hi):
            return fail_at(err, off, "integer out of range")
        writer_range(w, &lo, &hi)
        if not int_in_range(iv, lo, hi):
            return fail_at(err, off, "integer out of range for the target type")
        v64 = int_value(iv)
        if w == W_INT8 or w == W_UINT8:
            i8 = <int8_t>v64
            return 0 if fix_push(&self.t_fix[j], &i8) == 0 else -2
        if w == W_INT16 or w == W_UINT16:
            i16 = <int16_t>v64
            return 0 if fix_push(&self.t_fix[j], &i16) == 0 else -2
        if w == W_INT32 or w == W_UINT32:
            i32 = <int32_t>v64
            return 0 if fix_push(&self.t_fix[j], &i32) == 0 else -2
        return 0 if fix_push(&self.t_fix[j], &v64) == 0 else -2

    cdef int _emit_old_image(self, Image* img, Cur* vd, Err* err) noexcept nogil:
        """The `_before` struct of one row: the old image (NULL: none) converted by _emit_typed,
        exactly as the new image is, into the old-image builders."""
        cdef FixCol* fix = self.t_fix
        cdef VarCol* var = self.t_var
        cdef int rc
        if bits_push(&self.o_valid, img != NULL) < 0:
            return _oom(err)
        self.t_fix = self.o_fix
        self.t_var = self.o_var
        rc = self._emit_typed(img, vd, err)
        self.t_fix = fix
        self.t_var = var
        return rc

    cdef int _emit_typed(self, Image* img, Cur* vd, Err* err) noexcept nogil:
        cdef int j, k
        cdef ColEntry* e
        for j in range(self.ntargets):
            self.present[j] = -1
        if img != NULL:
            for k in range(img.n):
                # open-protocol images only (simple/Avro plans override this method)
                j = img.cols[k].tgt
                if j == -2:
                    j = self._lookup_target(&img.cols[k])
                if j >= 0:
                    self.present[j] = k
        for j in range(self.ntargets):
            k = self.present[j]
            if k < 0 or img.cols[k].v.kind == J_NULL or img.cols[k].v.kind == J_ABSENT:
                if self._push_target_null(j) < 0:
                    return _oom(err)
                continue
            e = &img.cols[k]
            if self._convert(e, j, err) < 0:
                set_column(err, self._name_ptr(e), e.name_len)
                return -1
        return 0

    cdef int _source_int(self, const ColEntry* e, int kind, IntVal* iv, Err* err) noexcept nogil:
        cdef int64_t lo
        cdef uint64_t hi
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef int r
        if kind == K_DECIMAL and e.v.kind == J_STR:
            return self._decimal_int(e, iv, err)
        if not (kind == K_INT or kind == K_UINT or kind == K_ENUM):
            return fail_at(err, e.v.off, "cannot convert this column type to an integer")
        if e.v.kind == J_INT:
            p = e.v.p
            n = e.v.n
        elif e.v.kind == J_STR:
            if self._str_bytes(&e.v, &p, &n, err) < 0:
                return -1
        else:
            return fail_at(err, e.v.off, "expected an integer")
        int_range(e.t, e.f, &lo, &hi)
        r = parse_int_text(p, n, iv)
        if r == -1:
            return fail_at(err, e.v.off, "invalid integer")
        if r < 0 or not int_in_range(iv, lo, hi):
            return fail_at(err, e.v.off, "integer out of range")
        return 0

    cdef int _decimal_int(self, const ColEntry* e, IntVal* iv, Err* err) noexcept nogil:
        cdef const uint8_t* p
        cdef Py_ssize_t n, i, dot = -1
        cdef const char* why = NULL
        cdef uint64_t lim[4]
        if self._str_bytes(&e.v, &p, &n, err) < 0:
            return -1
        # validate as a decimal first, then require a zero fraction
        if decimal_parse(p, n, 76, 0, 4, lim, &why) < 0:
            if why != NULL and strcmp(why, "decimal does not fit the target scale exactly") == 0:
                return fail_at(err, e.v.off, "decimal is not an integer")
            return fail_at(err, e.v.off, why)
        for i in range(n):
            if p[i] == 46:
                dot = i
                break
        if parse_int_text(p, dot if dot >= 0 else n, iv) != 0:
            # leading zeros ("007") are valid decimals but not JSON integers: strip them
            i = 1 if p[0] == 45 else 0
            while i < (dot if dot >= 0 else n) - 1 and p[i] == 48:
                i += 1
            if _parse_uint_digits(p + i, (dot if dot >= 0 else n) - i, iv) < 0:
                return fail_at(err, e.v.off, "integer out of range")
            iv.neg = p[0] == 45 and iv.mag != 0
        return 0

    cdef int _source_double(self, const ColEntry* e, int kind, double* x, Err* err) noexcept nogil:
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef float f
        cdef IntVal iv
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if e.v.kind == J_INT or e.v.kind == J_FLOAT:
                p = e.v.p
                n = e.v.n
            elif e.v.kind == J_STR:
                if self._str_bytes(&e.v, &p, &n, err) < 0:
                    return -1
                if json_number_syntax(p, n) < 0:
                    return fail_at(err, e.v.off, "invalid number")
            else:
                return fail_at(err, e.v.off, "expected a number")
            if parse_double(p, n, x, &self.numtmp) < 0:
                return fail_at(err, e.v.off, "number out of range")
            if kind == K_FLOAT32:
                if to_float32(x[0], &f) < 0:
                    return fail_at(err, e.v.off, "number out of range")
                x[0] = f
            return 0
        if kind == K_INT or kind == K_UINT or kind == K_ENUM:
            if self._source_int(e, kind, &iv, err) < 0:
                return -1
            if iv.mag > 9007199254740992ULL:
                x[0] = <double>iv.mag
                if x[0] >= 18446744073709551616.0 or <uint64_t>x[0] != iv.mag:
                    return fail_at(err, e.v.off, "integer is not exact as a float")
            x[0] = -<double>iv.mag if iv.neg else <double>iv.mag
            return 0
        return fail_at(err, e.v.off, "cannot convert this column type to a float")

    cdef int _convert(self, const ColEntry* e, int j, Err* err) noexcept nogil:
        cdef int w = self.writers[j]
        cdef int kind = TYPE_KIND[e.t]
        cdef FixCol* fc = &self.t_fix[j]
        cdef VarCol* vc = &self.t_var[j]
        cdef IntVal iv
        cdef int64_t lo, v64
        cdef uint64_t hi
        cdef uint64_t limbs[4]
        cdef double x
        cdef float f
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef const char* why = NULL
        cdef char txt[24]
        cdef int tn
        cdef int8_t i8
        cdef int16_t i16
        cdef int32_t i32
        if kind == K_NULL:
            return fail_at(err, e.v.off, "type NULL with a non-null value")
        if w == W_STRING:
            if (kind == K_TEXT or kind == K_BLOB) and (e.f & FLAG_BINARY):
                if self._raw_bytes(e, kind, &p, &n, err) < 0:
                    return -1
                if self._append_value_bytes(vc, p, n, e.v.off, err) < 0:
                    return -1
                return _close(vc, 1, err)
            return self._render(e, vc, err)
        if w == W_BINARY:
            if kind == K_TEXT or kind == K_BLOB:
                if self._raw_bytes(e, kind, &p, &n, err) < 0:
                    return -1
            elif kind == K_JSONDOC and e.v.kind == J_STR:
                if self._str_bytes(&e.v, &p, &n, err) < 0:
                    return -1
            else:
                return fail_at(err, e.v.off, "cannot convert this column type to binary")
            if var_push(vc, p, n) < 0:
                return _oom(err)
            return 0
        if w == W_BOOL or (W_INT8 <= w <= W_UINT64):
            if self._source_int(e, kind, &iv, err) < 0:
                return -1
            if w == W_BOOL:
                if iv.neg or iv.mag > 1:
                    return fail_at(err, e.v.off, "integer is not a boolean (0 or 1)")
                if fix_push_bool(fc, iv.mag == 1) < 0:
                    return _oom(err)
                return 0
            writer_range(w, &lo, &hi)
            if not int_in_range(&iv, lo, hi):
                return fail_at(err, e.v.off, "integer out of range for the target type")
            v64 = int_value(&iv)
            if w == W_INT8 or w == W_UINT8:
                i8 = <int8_t>v64
                if fix_push(fc, &i8) < 0:
                    return _oom(err)
            elif w == W_INT16 or w == W_UINT16:
                i16 = <int16_t>v64
                if fix_push(fc, &i16) < 0:
                    return _oom(err)
            elif w == W_INT32 or w == W_UINT32:
                i32 = <int32_t>v64
                if fix_push(fc, &i32) < 0:
                    return _oom(err)
            elif fix_push(fc, &v64) < 0:
                return _oom(err)
            return 0
        if w == W_FLOAT32 or w == W_FLOAT64:
            if self._source_double(e, kind, &x, err) < 0:
                return -1
            if w == W_FLOAT32:
                f = <float>x
                if isinf(f) or <double>f != x:
                    return fail_at(err, e.v.off, "value not exact as float32")
                if fix_push(fc, &f) < 0:
                    return _oom(err)
                return 0
            if fix_push(fc, &x) < 0:
                return _oom(err)
            return 0
        if w == W_DECIMAL128 or w == W_DECIMAL256:
            if kind == K_INT or kind == K_UINT or kind == K_ENUM:
                if self._source_int(e, kind, &iv, err) < 0:
                    return -1
                tn = int_to_text(&iv, txt)
                p = <const uint8_t*>txt
                n = tn
            elif kind == K_DECIMAL and e.v.kind == J_STR:
                if self._str_bytes(&e.v, &p, &n, err) < 0:
                    return -1
            else:
                return fail_at(err, e.v.off, "cannot convert this column type to a decimal")
            if decimal_parse(p, n, self.precisions[j], self.scales[j], 2 if w == W_DECIMAL128 else 4,
                             limbs, &why) < 0:
                return fail_at(err, e.v.off, why)
            if fix_push(fc, limbs) < 0:
                return _oom(err)
            return 0
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "expected a string")
        if self._str_bytes(&e.v, &p, &n, err) < 0:
            return -1
        if w == W_DATE32:
            if kind != K_DATE:
                return fail_at(err, e.v.off, "cannot convert this column type to a date")
            if parse_date_days(p, n, &v64, &why) < 0:
                return fail_at(err, e.v.off, why)
            i32 = <int32_t>v64
            if fix_push(fc, &i32) < 0:
                return _oom(err)
            return 0
        if w == W_TIMESTAMP:
            if kind == K_DATE or kind == K_DATETIME or kind == K_TIMESTAMP:
                if parse_datetime_us(p, n, &v64, &why) < 0:
                    return fail_at(err, e.v.off, why)
                if kind == K_TIMESTAMP:
                    v64 = self._wall_to_utc(v64)
            else:
                return fail_at(err, e.v.off, "cannot convert this column type to a timestamp")
            if fix_push(fc, &v64) < 0:
                return _oom(err)
            return 0
        if w == W_DURATION:
            if kind != K_TIME:
                return fail_at(err, e.v.off, "cannot convert this column type to a duration")
            if parse_time_us(p, n, &v64, &why) < 0:
                return fail_at(err, e.v.off, why)
            if fix_push(fc, &v64) < 0:
                return _oom(err)
            return 0
        return fail_at(err, e.v.off, "unsupported target type")

    cdef int _convert_raw(self, const ColEntry* e, int j, ColEntry* tmp, char* txt, int int_kind,
                          Err* err) noexcept nogil:
        """A raw Avro number (J_RAWINT / J_RAWF64) into a numeric target: 0 written, -1 error;
        1: the target needs the text rules, and `tmp` now holds the value as text (`txt`, at
        least 400 bytes; integers get span kind `int_kind`)."""
        cdef int w = self.writers[j]
        cdef IntVal iv
        cdef int64_t lo
        cdef uint64_t hi
        cdef double x
        cdef float f
        cdef char digits[24]
        cdef int nd, e10, tn
        cdef uint64_t limbs[2]
        if e.v.kind == J_RAWINT:
            iv.neg = e.v.neg
            iv.mag = <uint64_t>e.v.n
            if W_INT8 <= w <= W_UINT64:
                return self._push_target_int(j, &iv, e.t, e.f, e.v.off, err)
            int_range(e.t, e.f, &lo, &hi)
            if not int_in_range(&iv, lo, hi):
                return fail_at(err, e.v.off, "integer out of range")
            if w == W_DECIMAL128 and (TYPE_KIND[e.t] == K_INT or TYPE_KIND[e.t] == K_UINT or TYPE_KIND[e.t] == K_ENUM) \
                    and _int_to_decimal128(&iv, self.precisions[j], self.scales[j], limbs) == 0:
                return 0 if fix_push(&self.t_fix[j], limbs) == 0 else -1
            tn = int_to_text(&iv, txt)
        else:
            memcpy(&x, &e.v.n, 8)
            if w == W_FLOAT64 and (e.t == T_FLOAT or e.t == T_DOUBLE):
                return 0 if fix_push(&self.t_fix[j], &x) == 0 else -1
            if w == W_FLOAT32 and (e.t == T_FLOAT or e.t == T_DOUBLE):
                f = <float>x
                if isinf(f) or <double>f != x:
                    return fail_at(err, e.v.off, "value not exact as float32")
                return 0 if fix_push(&self.t_fix[j], &f) == 0 else -1
            if x == 0:
                tn = 2 if signbit(x) else 1
                txt[0] = 45 if signbit(x) else 48
                txt[1] = 48
            else:
                shortest_from_value(x, 32 if e.t == T_FLOAT else 64, digits, &nd, &e10)
                tn = go_format_digits(digits, nd, e10, x < 0, txt)
        # the text form, for string/decimal/bool targets and for errors worded like the twin's
        tmp[0] = e[0]
        tmp.v.p = <const uint8_t*>txt
        tmp.v.n = tn
        tmp.v.kind = int_kind if e.v.kind == J_RAWINT else J_STR
        tmp.v.esc = 0
        tmp.v.ascii = 1
        tmp.v.neg = 0
        return 1

    cdef inline int64_t _wall_to_utc(self, int64_t wall) noexcept nogil:
        return wall - zone_offset(self.tz_bounds, self.tz_offsets, self.tz_n, wall)


cdef int _int_to_decimal128(const IntVal* iv, int precision, int scale, uint64_t* out) noexcept nogil:
    """An integer as decimal128(precision, scale) limbs when it fits; -1 otherwise (the text path
    words the error)."""
    cdef uint128 u
    if scale < 0 or scale > 38 or precision < 1 or precision > 38:
        return -1
    u = <uint128>iv.mag * POW10_128[scale]       # < 2^64 * 10^38 < 2^192: check before use
    if iv.mag != 0 and (u // POW10_128[scale] != iv.mag or u >= POW10_128[precision]):
        return -1
    if iv.neg:
        u = ~u + 1
    out[0] = <uint64_t>u
    out[1] = <uint64_t>(u >> 64)
    return 0


cdef uint8_t _name_kind(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """0 if a JSON encoder escapes something in the name ('"', '\\', control bytes, and Go's
    <, >, &, U+2028/9), else 1 (ASCII) or 2 (other UTF-8): whether `"name"` can be matched as
    raw bytes."""
    cdef Py_ssize_t i
    cdef uint8_t kind = 1
    for i in range(n):
        if p[i] < 0x20 or p[i] == 34 or p[i] == 92 or p[i] == 60 or p[i] == 62 or p[i] == 38:
            return 0
        if p[i] >= 0x80:
            kind = 2
            if p[i] == 0xE2 and i + 2 < n and p[i + 1] == 0x80 and (p[i + 2] == 0xA8 or p[i + 2] == 0xA9):
                return 0
    return kind


cdef inline int _small_uint(const uint8_t** pp, const uint8_t* e, int max_digits, uint64_t* out) noexcept nogil:
    """A JSON integer without sign, fraction or leading zero, at most `max_digits` long."""
    cdef const uint8_t* p = pp[0]
    cdef uint64_t v = 0
    cdef int nd = 0
    while p < e and 48 <= p[0] <= 57:
        if nd == max_digits:
            return -1
        v = v * 10 + (p[0] - 48)
        p += 1
        nd += 1
    if nd == 0 or (nd > 1 and pp[0][0] == 48):
        return -1
    pp[0] = p
    out[0] = v
    return 0


cdef int _column_fast(Cur* c, ColEntry* e, Err* err) noexcept nogil:
    """The column object as TiCDC writes it, `{"t":T[,"h":B],"f":F,"v":V}`, read by literal
    matching: 1 read (cursor past the '}'), 0 another shape (cursor unchanged; the member loop
    reads it), -1 an error in V (the member loop would report the same)."""
    cdef const uint8_t* p = c.pos
    cdef const uint8_t* end = c.end
    cdef const uint8_t* start = c.pos
    cdef uint64_t t, f
    if end - p < 20 or not bytes_eq(p, <const uint8_t*>b'{"t":', 5):
        return 0
    p += 5
    if _small_uint(&p, end, 3, &t) < 0 or t > 255 or TYPE_KIND[t] == 0:
        return 0
    if end - p >= 10 and bytes_eq(p, <const uint8_t*>b',"h":', 5):
        if bytes_eq(p + 5, <const uint8_t*>b"true", 4):
            p += 9
        elif bytes_eq(p + 5, <const uint8_t*>b"false", 5):
            p += 10
        else:
            return 0
    if end - p < 6 or not bytes_eq(p, <const uint8_t*>b',"f":', 5):
        return 0
    p += 5
    if _small_uint(&p, end, 10, &f) < 0 or f > 0xFFFFFFFFULL:
        return 0
    if end - p < 6 or not bytes_eq(p, <const uint8_t*>b',"v":', 5):
        return 0
    c.pos = p + 5
    skip_ws(c)                                  # JSON allows whitespace after the colon
    if c.pos < end and c.pos[0] == 34:          # the common values first, without the dispatch
        if scan_string(c, &e.v, err) < 0:
            return -1
    elif c.pos < end and (c.pos[0] == 45 or 48 <= c.pos[0] <= 57):
        if scan_number(c, &e.v, err) < 0:
            return -1
    elif scan_value(c, &e.v, 4, err) < 0:
        return -1
    if c.pos < end and c.pos[0] == 125:
        c.pos += 1
        e.t = <int>t
        e.f = <uint32_t>f
        e.has_t = 1
        return 1
    c.pos = start
    e.v.kind = J_ABSENT
    e.v.off = start - c.start
    return 0


cdef int _parse_uint_digits(const uint8_t* p, Py_ssize_t n, IntVal* iv) noexcept nogil:
    cdef uint64_t v = 0, d
    cdef Py_ssize_t i
    for i in range(n):
        d = p[i] - 48
        if v > (0xFFFFFFFFFFFFFFFFULL - d) // 10:
            return -1
        v = v * 10 + d
    iv.mag = v
    iv.neg = 0
    return 0


cdef const char* OP_TEXT[6]
cdef int OP_LEN[6]
OP_TEXT[OP_INSERT] = b"INSERT"
OP_TEXT[OP_UPDATE] = b"UPDATE"
OP_TEXT[OP_DELETE] = b"DELETE"
OP_TEXT[OP_DDL] = b"DDL"
OP_TEXT[OP_RESOLVED] = b"RESOLVED"
OP_TEXT[OP_UPSERT] = b"UPSERT"
OP_LEN[OP_INSERT] = 6
OP_LEN[OP_UPDATE] = 6
OP_LEN[OP_DELETE] = 6
OP_LEN[OP_DDL] = 3
OP_LEN[OP_RESOLVED] = 8
OP_LEN[OP_UPSERT] = 6


cdef inline int _oom(Err* err) noexcept nogil:
    return -2


cdef inline int _close(VarCol* out, bint valid, Err* err) noexcept nogil:
    cdef int r = var_close_row(out, valid)
    if r == -2:
        err.failed = 1
        strncpy(err.reason, b"batch too large: a column exceeds 2 GiB, decode fewer messages at once", 255)
        return -1
    return r


cdef inline int _push_opt(FixCol* c, const void* v, int has) noexcept nogil:
    if has:
        return fix_push(c, v)
    return fix_push_null(c)


cdef int _key_str(const Span* v, Span* out, Err* err) noexcept nogil:
    if v.kind == J_STR:
        out[0] = v[0]
        if v.n == 0:
            out.kind = J_ABSENT
    elif v.kind == J_NULL:
        out.kind = J_ABSENT
    else:
        return fail_at(err, v.off, "event key field has an invalid value")
    return 0


cdef int _key_int(const Span* v, int64_t* out, int* has, Err* err) noexcept nogil:
    cdef IntVal iv
    if v.kind == J_INT:
        if parse_int_text(v.p, v.n, &iv) < 0 or not int_in_range(&iv, -9223372036854775807LL - 1, 9223372036854775807ULL):
            return fail_at(err, v.off, "event key field out of int64 range")
        out[0] = int_value(&iv)
        has[0] = 1
    elif v.kind == J_NULL:
        has[0] = 0
    else:
        return fail_at(err, v.off, "event key field has an invalid value")
    return 0


cdef int _check_utf8_span(const Span* s, Buf* tmp, Err* err) noexcept nogil:
    if s.kind != J_STR or s.ascii:
        return 0
    tmp.len = 0
    if s.esc:
        if json_unescape(s.p, s.n, tmp) < 0:
            return -2
        if not utf8_valid(tmp.data, tmp.len):
            return fail_at(err, s.off, "invalid UTF-8 in a text value")
    elif not utf8_valid(s.p, s.n):
        return fail_at(err, s.off, "invalid UTF-8 in a text value")
    return 0


cdef int _span_equals(const Span* s, const char* e, Py_ssize_t n, Buf* tmp) noexcept nogil:
    if s.kind != J_STR:
        return n == 0
    if not s.esc:
        return s.n == n and bytes_eq(s.p, <const uint8_t*>e, n)
    tmp.len = 0
    if json_unescape(s.p, s.n, tmp) < 0:
        return 0
    return tmp.len == n and bytes_eq(<const uint8_t*>(tmp.data), <const uint8_t*>(e), n)


cdef object _map_to_array(MapCol* m):
    cdef Py_ssize_t n = m.valid.n
    cdef Py_ssize_t nulls = m.valid.nulls
    keys = var_to_array(&m.keys, pa.string())
    vals = var_to_array(&m.vals, pa.string())
    entries = pa.StructArray.from_arrays([keys, vals], fields=[_MAP_TYPE.key_field, _MAP_TYPE.item_field])
    validity = take_validity(&m.valid)
    offsets = take_buffer(&m.offsets)
    return pa.Array.from_buffers(_MAP_TYPE, n, [validity, offsets], null_count=nulls, children=[entries])
