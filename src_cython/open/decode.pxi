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



cdef struct MemoColumn:
    # one position of a table's last image (ColumnMemo)
    uint64_t hash
    Py_ssize_t at          # its spelling in ColumnMemo.spell
    Py_ssize_t qn          # the length of the name as JSON writes it before its value, `"name":`
    Py_ssize_t sn          # the whole spelling's length: qn, plus the column object's head
                           # `{"t":T[,"h":B],"f":F,"v":` when the column had TiCDC's own shape
    uint32_t f
    int t
    int tgt                # its target (typed plans; -1 none)
    uint8_t kind           # _name_kind: 0 the name cannot be matched as raw bytes


cdef struct ColumnMemo:
    # The open protocol's one lookup shortcut, a position hint for column names: rows of a
    # table repeat the column sequence of its last image, and compact JSON writes each column as
    # `"name":{"t":T,"f":F,"v":` before its value, the same bytes in every row.  Position k of
    # the image being read is compared with position k of the last one as one run of bytes
    # (equal bytes: the same name, hash, target, t and f, read without a test); a name read
    # otherwise that equals the memo's keeps the image on it.  While the names follow the memo
    # they are distinct, so the image needs no de-duplication (ImageRead.on_memo).
    # Measured gain (callgrind, OpenPlan._run, the open corpora realistic5, orders10, wide100,
    # stream3 of benchmarks/goals.py, generic and typed): without the whole-spelling match the
    # decode takes 14-29% more instructions (without the memo at all, 21-43% more).  A second
    # tier matching the name alone when the spelling differs gained 0.0% and was removed, as
    # were a separate head memo and a generation counter for the name set.
    Buf spell              # the spellings, one after another
    Buf cols               # MemoColumn per position
    Py_ssize_t n
    uint64_t version       # OpenPlan.memo_gen when it was last saved
    int recorded           # typed plans: every name of it was checked by _note_unknown (a row
                           # of the plan's table), so an image that follows it has nothing to report


cdef struct UnknownRec:
    # one column name a typed plan's table carried and its targets lack (OpenPlan.unk_rec)
    uint64_t hash
    Py_ssize_t at          # its bytes in OpenPlan.unk_spell
    Py_ssize_t n
    Py_ssize_t msg         # the message it was first seen in (index within that call)
    int64_t row            # the plan's row ordinal (own_rows) of that row: 0 is its first row


cdef struct HeadRef:
    # where the head of entry k of the image being read is in its message (n = 0: none)
    Py_ssize_t off
    Py_ssize_t n


cdef struct ImageFault:
    # the judgement of one image of the event value being read (OpenPlan.faults, per IMG_*)
    int any_bad            # some column was marked bad while reading (a later copy may clear it)
    const char* bad        # the image itself is not an object (its last copy), NULL if fine
    Py_ssize_t bad_off


cdef struct ImageRead:
    # the state of reading one image (OpenPlan._parse_image)
    ColumnMemo* memo
    ImageFault* fault
    int on_memo            # every name so far matched the memo at its position
    int deduped            # some name repeated (a later copy replaced the earlier entry)
    int is_old             # the image is "p" (it may hold bare members, protocols.md E.15)


cdef struct EventBody:
    # what an event's value holds (OpenPlan._read_value)
    Span q                 # a DDL's query (J_ABSENT: none)
    int64_t qt             # a DDL's type, when has_qt
    int has_qt
    int op                 # OP_*
    Image* after           # the new image, NULL none
    Image* before          # the old image, NULL none


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



cdef enum:
    # faults of one open-protocol column (ColEntry.bad)
    COL_FINE = 0
    COL_NOT_OBJECT = 1
    COL_TYPE_UNKNOWN = 2
    COL_FLAGS_INVALID = 3
    COL_HANDLE_INVALID = 4
    COL_NAME_NOT_UTF8 = 5


cdef enum ColumnRead:
    # what the literal reading of a column object (_column_fast, _column_value) found; errors
    # are RC_FAILED
    COLUMN_OTHER_SHAPE = 0 # not TiCDC's own spelling: cursor unchanged, the member loop reads it
    COLUMN_READ = 1        # read, the cursor past its '}'


cdef enum MemoMatch:
    # what position k of the column memo gave the image being read (_memo_column); errors are
    # RC_FAILED
    MEMO_MISS = 0          # nothing: cursor unchanged
    MEMO_WHOLE = 1         # the whole entry, value included (cursor past the column object)


cdef enum NameSet:
    # _dedupe_slot; RC_NO_MEMORY when the set could not grow
    NAME_NEW = 0           # entered
    NAME_REPEATED = 1      # an earlier entry of the name took this copy (JSON last-wins)


cdef enum RowChoice:
    # OpenPlan._typed_keeps; RC_NO_MEMORY when it could not tell
    ROW_SKIP = 0           # another table's event, or a control event the plan does not write
    ROW_KEEP = 1


cdef const char* COL_FAULT_TEXT[6]
COL_FAULT_TEXT[0] = b""
COL_FAULT_TEXT[1] = b"column value is not a JSON object"
COL_FAULT_TEXT[2] = b"unknown column type code"
COL_FAULT_TEXT[3] = b"invalid column flags"
COL_FAULT_TEXT[4] = b"invalid handle marker"
COL_FAULT_TEXT[5] = b"invalid UTF-8 in a column name"


cdef inline bint _is_bare_field(uint8_t ch) noexcept nogil:
    return ch == 116 or ch == 104 or ch == 102 or ch == 118     # t h f v



cdef inline uint64_t _table_hash(const uint8_t* schema, Py_ssize_t sn, const uint8_t* table,
                                  Py_ssize_t tn) noexcept nogil:
    """FNV-1a over schema, a 0xff byte (never in UTF-8, so the split is unambiguous) and table."""
    cdef uint8_t split = 0xff
    cdef uint64_t h = fnv1a_more(FNV_OFFSET_BASIS, schema, sn)
    h = fnv1a_more(h, &split, 1)
    return hash_finish(fnv1a_more(h, table, tn))



cdef enum:
    # column memos per plan, chosen by the event's (schema, table) hash: a topic interleaving
    # tables keeps one memo per table instead of rebuilding one on every change of table (a
    # collision only costs the rebuild: every name is still compared byte for byte)
    MEMO_SLOTS = 16


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


cdef tuple EVENT_KEY_NAMES = (b"ts", b"t", b"scm", b"tbl", b"ccl", b"rid", b"ptn", b"ohk")  # in KK_* order
cdef KnownKeys EVENT_KEY_SET
known_keys(&EVENT_KEY_SET, EVENT_KEY_NAMES, EVENT_KEYS)


cdef inline int _batch_part(Cur* c, Cur* part, const char* what, const char* too_long,
                            Err* err) noexcept nogil:
    """The next part of a batch's key or value: a u64 big-endian length (`what`, for a fault),
    then that many bytes, which `part` spans (c.pos stays at their start; `too_long`: the fault
    of a length past the end, its length and the bytes left).  0, or -1 with err set."""
    cdef uint64_t n
    if read_u64be(c, &n, err, what) < 0:
        return -1
    if n > <uint64_t>(c.end - c.pos):
        c.pos -= 8
        return fail_fmt(err, c, too_long, <long long>n, <long long>(c.end - c.pos - 8))
    part.start = c.start
    part.pos = c.pos
    part.end = c.pos + n
    return 0


@cython.final
cdef class OpenPlan(PlanFront):
    """Compiled once per decoder (table, target schema, time zone); decodes batches.  The
    protocol-neutral part (targets, builders, images, converters) is `core`; this class reads
    the open protocol's framing, event keys and column objects into the core's images."""
    _protocol = "open"     # the layout of its columns (PlanFront.__cinit__)
    cdef int control_events
    cdef ColumnMemo memos[MEMO_SLOTS]
    cdef ColumnMemo* memo      # the one of the event being read (_choose_memo)
    cdef KeyHint key_hint      # the event key's field order (event keys repeat it)
    cdef ImageFault faults[3]  # per image of the core (IMG_*): faults found while reading it
    cdef Buf bare              # BareMember per bare member of the last "p" read
    cdef Buf head_ref          # HeadRef per entry of the image being read, for _save_memo
    cdef int before_incomplete # the UPDATE just read leaves some bare group unplaced
    cdef int32_t* dd_idx       # the name set of an image off its memo (_dedupe_slot), -1 empty
    cdef Py_ssize_t dd_cap
    # typed plans: the column names rows of the table carried that the targets lack, each once
    # in first-seen order over the plan's life (unknown_since); checked only for an image that
    # is not on a memo already checked (img_fresh), so a row on its memo costs three tests
    cdef uint64_t memo_gen     # memo saves so far (ColumnMemo.version)
    cdef int img_fresh[3]      # per IMG_*: the image just read may name a column not checked yet
    cdef uint64_t img_ver[3]   # per IMG_*: the memo version the image equals (0: none)
    cdef Buf unk_spell         # the names' bytes
    cdef Buf unk_rec           # UnknownRec per name
    cdef Py_ssize_t* unk_slot  # open addressing over unk_rec (-1 empty)
    cdef Py_ssize_t unk_cap
    cdef int64_t own_rows      # row events of the table read (lifetime; truncate_unknown resets)
    cdef uint8_t* absent_seen  # per target: a full new image lacked it (missing_since)
    cdef Buf absent_rec        # int32 target index per first absence, in order
    # the open protocol's own output columns: indexes in the core's column set (-1: not in
    # this plan's output)
    cdef int col_ddl_type
    cdef int col_rid
    cdef int col_ptn
    cdef int col_bic
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

    def __cinit__(self, cfg):
        self.col_ddl_type = self.core.extra_col(_C.COL_DDL_TYPE)
        self.col_rid = self.core.extra_col(_C.COL_ROW_ID)
        self.col_ptn = self.core.extra_col(_C.COL_PHYSICAL_TABLE_ID)
        self.col_bic = self.core.own_col(_C.COL_BEFORE_INCOMPLETE)
        self.control_events = bool(cfg.control_events)
        self.dd_cap = 0
        self.memo = &self.memos[0]
        if self.core.typed:
            self.absent_seen = <uint8_t*>calloc(max(self.core.ntargets, 1), 1)
            if self.absent_seen == NULL:
                no_memory("the typed plan")
        key_hint_init(&self.key_hint)

    def __dealloc__(self):
        cdef int m
        for m in range(MEMO_SLOTS):
            buf_free(&self.memos[m].spell)
            buf_free(&self.memos[m].cols)
        free(self.dd_idx)
        free(self.route_ptr)
        free(self.route_hash)
        free(self.route_slot)
        buf_free(&self.bare)
        buf_free(&self.head_ref)
        buf_free(&self.unk_spell)
        buf_free(&self.unk_rec)
        free(self.unk_slot)
        free(self.absent_seen)
        buf_free(&self.absent_rec)

    # ------------------------------------------------------------------ unknown columns
    @property
    def unknown_count(self):
        """How many names unknown_since(0) gives."""
        return self.unk_rec.len // <Py_ssize_t>sizeof(UnknownRec)

    @property
    def own_rows(self):
        """Row events of the plan's table read over its life."""
        return self.own_rows

    def unknown_since(self, Py_ssize_t start):
        """``[(name, message index, row ordinal)]`` of the names recorded after the first
        ``start``: columns rows of the table carried that the typed schema lacks, each once, in
        first-seen order (the row ordinal counts the table's row events, 0 its first)."""
        cdef const UnknownRec* r = <const UnknownRec*>self.unk_rec.data
        cdef Py_ssize_t k, n = self.unk_rec.len // <Py_ssize_t>sizeof(UnknownRec)
        return [((<const char*>self.unk_spell.data)[r[k].at:r[k].at + r[k].n].decode("utf-8"),
                 r[k].msg, r[k].row) for k in range(start, n)]

    @property
    def missing_count(self):
        """How many target indexes missing_since(0) gives."""
        return self.absent_rec.len // <Py_ssize_t>sizeof(int32_t)

    def missing_since(self, Py_ssize_t start):
        """The indexes of the typed columns a row's full new image (INSERT, UPDATE; not a
        handle-key-only or claim-check row) did not carry, each once, after the first ``start``."""
        cdef const int32_t* r = <const int32_t*>self.absent_rec.data
        return [r[k] for k in range(start, self.absent_rec.len // <Py_ssize_t>sizeof(int32_t))]

    def truncate_missing(self, Py_ssize_t count):
        """Forget the absences recorded after the first ``count`` (a call that failed)."""
        cdef const int32_t* r = <const int32_t*>self.absent_rec.data
        cdef Py_ssize_t k
        for k in range(count, self.absent_rec.len // <Py_ssize_t>sizeof(int32_t)):
            self.absent_seen[r[k]] = 0
        if count < self.absent_rec.len // <Py_ssize_t>sizeof(int32_t):
            self.absent_rec.len = count * sizeof(int32_t)

    def truncate_unknown(self, Py_ssize_t count, int64_t rows):
        """Forget the names recorded after the first ``count`` and the rows after ``rows`` (a
        call that failed): every memo is checked again when next met."""
        cdef const UnknownRec* r = <const UnknownRec*>self.unk_rec.data
        cdef Py_ssize_t k, n = self.unk_rec.len // <Py_ssize_t>sizeof(UnknownRec)
        if count < n:
            self.unk_spell.len = r[count].at
            self.unk_rec.len = count * sizeof(UnknownRec)
            for k in range(self.unk_cap):
                self.unk_slot[k] = -1
            for k in range(count):
                self._unk_put(k)
        self.own_rows = rows
        for k in range(MEMO_SLOTS):
            self.memos[k].recorded = 0

    cdef void _free_outputs(self) noexcept nogil:
        self.core._free_outputs()

    cdef int _init_outputs(self, Py_ssize_t rows, Py_ssize_t bytes_hint) noexcept nogil:
        return self.core._init_outputs(rows, bytes_hint)

    # ------------------------------------------------------------------ python entry
    def decode(self, kbuf, koff, vbuf, voff):
        self.core._claim()
        try:
            return self._decode_body(kbuf, koff, vbuf, voff)
        finally:
            self.core.busy = 0

    def decode_batch(self, kbuf, koff, vbuf, voff, schema, extras=()):
        """decode(), handed over as one RecordBatch of `schema`: the output columns in the
        layout's order, then a column per array of `extras` (int32/int64, one value per message:
        Kafka partitions, offsets), taken for each row from its message."""
        if self.nroutes:
            raise ValueError("a routing plan decodes with decode_tables")
        self.core._claim()
        try:
            self._walk(kbuf, koff, vbuf, voff)
            return colset_finish_batch(&self.core.cols, CS_MSG, self.core.out_order, schema, extras)
        finally:
            self.core.busy = 0

    def set_routes(self, plans, bint keep_unlisted):
        """Make this (generic) plan the router of a multi-table decode: ``plans`` are the typed
        plans of the listed tables; events of other tables get this plan's generic rows
        (``keep_unlisted``) or are checked and counted."""
        cdef int k, j
        cdef Py_ssize_t s
        cdef OpenPlan sub
        if self.core.typed or self.nroutes:
            raise ValueError("only a generic plan without routes can route events")
        plans = list(plans)
        if not plans:
            raise ValueError("set_routes needs at least one typed plan")
        for sub in plans:
            if not sub.core.typed or sub.nroutes:
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
            self.route_hash[k] = _table_hash(<const uint8_t*>sub.core.schema_name_c, sub.core.schema_name_n,
                                             <const uint8_t*>sub.core.table_name_c, sub.core.table_name_n)
            s = <Py_ssize_t>(self.route_hash[k] & <uint64_t>(self.route_cap - 1))
            while self.route_slot[s] >= 0:
                j = self.route_slot[s]
                if self._route_is(j, <const uint8_t*>sub.core.schema_name_c, sub.core.schema_name_n,
                                  <const uint8_t*>sub.core.table_name_c, sub.core.table_name_n):
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
        self.core._claim()
        try:
            self._walk(kbuf, koff, vbuf, voff)
            tables = [(<OpenPlan>sub)._finish() for sub in self.routes]
            other = self._finish() if self.keep_unlisted else None
            self._free_outputs()
            return tables, other, self.unlisted_skipped
        finally:
            self.core.busy = 0

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
        cdef Err* err = &self.core.err
        cdef int rc, k
        cdef OpenPlan sub
        if len(voff) - 1 != n:
            raise DecodeError(f"{n} keys but {len(voff) - 1} values")
        self.core._begin_call()
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
                rc = self._run(&kb[0], &ko[0], &vb[0], &vo[0], n, err)
        for k in range(self.nroutes):
            # the front end reads one counter, the router's
            sub = <OpenPlan>self.route_ptr[k]
            self.core.invalid_utf8_replaced += sub.core.invalid_utf8_replaced
            sub.core.invalid_utf8_replaced = 0
        if rc != 0:
            self._free_outputs()
            for k in range(self.nroutes):
                (<OpenPlan>self.route_ptr[k])._free_outputs()
            raise_decode_error(err, "open-protocol", None)
        return 0

    cdef object _finish(self):
        return self.core._finish_output()


    # ------------------------------------------------------------------ framing walk
    cdef int _run(self, const uint8_t* kb, const int64_t* ko, const uint8_t* vb, const int64_t* vo,
                  Py_ssize_t n, Err* err) noexcept nogil:
        cdef Py_ssize_t i
        cdef Cur kc, vc, kd, vd
        cdef uint64_t version
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
                if _batch_part(&kc, &kd, "event key length",
                               "event key length %llu exceeds the %lld bytes left", err) < 0:
                    return -1
                err.part = PART_VALUE
                if vc.pos >= vc.end:
                    return fail(err, &vc, "the value holds fewer events than the key")
                if _batch_part(&vc, &vd, "event value length",
                               "event value length %llu exceeds the %lld bytes left", err) < 0:
                    return -1
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
        rc = self._parse_key(kd, &key, err)
        if rc < 0:
            return rc
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
        if k == RC_NO_MEMORY:
            return RC_NO_MEMORY
        if self.keep_unlisted:
            return self._event_value(&key, vd, msg, err, 0)
        return self._skip_value(&key, vd, err)

    cdef int _skip_value(self, const KeyInfo* key, Cur* vd, Err* err) noexcept nogil:
        """unlisted="skip": an event of a table not listed is still read and checked, as a
        single-table typed decode reads other tables' events (so a message fails alike), but
        nothing is written; it counts as the one row it would have been."""
        cdef int rc
        cdef Span q
        cdef int64_t qt = 0
        cdef int has_qt = 0, op
        q.kind = J_ABSENT
        if key.t == MSG_DDL:
            rc = self._parse_ddl(vd, &q, &qt, &has_qt, err)
        else:
            self._choose_memo(key)
            rc = self._parse_row(vd, &op, err)
        if rc < 0:
            return rc
        self.unlisted_skipped += 1
        return 0

    cdef int _route_of(self, const KeyInfo* key) noexcept nogil:
        """The index of the sub-plan of the event's table, -1 for a table not listed (or an
        event without schema or table), or RC_NO_MEMORY.  Escaped names are compared unescaped,
        as the single-table filter does."""
        cdef const uint8_t* sp
        cdef const uint8_t* tp
        cdef Py_ssize_t sn, tn, s
        cdef int k
        if key.scm.kind != J_STR or key.tbl.kind != J_STR:
            return -1
        if span_bytes(&key.scm, &self.core.tmp, &sp, &sn) < 0 \
                or span_bytes(&key.tbl, &self.core.tmp2, &tp, &tn) < 0:
            return RC_NO_MEMORY
        s = <Py_ssize_t>(_table_hash(sp, sn, tp, tn) & <uint64_t>(self.route_cap - 1))
        while True:
            k = self.route_slot[s]
            if k < 0 or self._route_is(k, sp, sn, tp, tn):
                return k
            s = (s + 1) & (self.route_cap - 1)

    cdef inline bint _route_is(self, int k, const uint8_t* sp, Py_ssize_t sn, const uint8_t* tp,
                               Py_ssize_t tn) noexcept nogil:
        # no local of the plan's type: that would count references, which needs the GIL
        return (<OpenPlan>self.route_ptr[k]).core.is_own_table(sp, sn, tp, tn)

    cdef int _event_value(self, const KeyInfo* kp, Cur* vd, Py_ssize_t msg, Err* err,
                          int routed) noexcept nogil:
        """Parse one event's value (its key already read) and write its row.  ``routed``: a
        router chose this typed plan by the event's table, which needs no second look."""
        cdef KeyInfo key = kp[0]
        cdef EventBody ev
        cdef int rc = self._read_value(&key, vd, &ev, err)
        if rc < 0:
            return rc
        if self.core.typed:
            rc = self._typed_keeps(&key, routed)
            if rc != ROW_KEEP:
                return _oom(err) if rc == RC_NO_MEMORY else 0
            if key.t == MSG_ROW and self._note_row(&ev, msg) < 0:
                return _oom(err)
        rc = self._push_event_columns(&key, &ev, msg, err)
        if rc < 0:
            return rc
        if ev.op == OP_UPDATE and (not self.core.typed or self.core.with_old_image):
            self._old_flags_from_new(ev.before, ev.after)   # the old image reads as the new one
        if not self.core.typed:
            return self._push_generic(&key, &ev, err)
        rc = self._emit_typed(ev.after if ev.after != NULL else ev.before, vd, err,
                              ev.after != NULL and key.t == MSG_ROW and not key.ohk and key.ccl.kind != J_STR)
        if rc < 0 or not self.core.with_old_image:
            return rc
        return self._emit_old_image(ev.before, vd, err)

    cdef int _read_value(self, const KeyInfo* key, Cur* vd, EventBody* ev, Err* err) noexcept nogil:
        """The event's value, read as its key's type says, into ev: 0, or RC_FAILED."""
        cdef int rc
        ev.q.kind = J_ABSENT
        ev.qt = 0
        ev.has_qt = 0
        ev.after = NULL
        ev.before = NULL
        self.before_incomplete = 0
        if key.t == MSG_RESOLVED:
            if vd.end != vd.pos:
                return fail(err, vd, "resolved event with a non-empty value")
            ev.op = OP_RESOLVED
            return 0
        if key.t == MSG_DDL:
            ev.op = OP_DDL
            return self._parse_ddl(vd, &ev.q, &ev.qt, &ev.has_qt, err)
        self._choose_memo(key)
        rc = self._parse_row(vd, &ev.op, err)
        if rc < 0:
            return rc
        if ev.op == OP_DELETE:
            ev.before = &self.core.images[IMG_D]
        else:
            ev.after = &self.core.images[IMG_U]
            if ev.op == OP_UPDATE:
                ev.before = &self.core.images[IMG_P]
        return 0

    cdef int _typed_keeps(self, const KeyInfo* key, int routed) noexcept nogil:
        """Whether a typed plan writes the event's row (RowChoice): not another table's, and a
        row event unless control_events; RC_NO_MEMORY when a name could not be unescaped."""
        cdef int rc
        if key.t != MSG_RESOLVED and not routed:
            rc = _span_equals(&key.scm, self.core.schema_name_c, self.core.schema_name_n, &self.core.tmp)
            if rc == 1:
                rc = _span_equals(&key.tbl, self.core.table_name_c, self.core.table_name_n, &self.core.tmp)
            if rc != 1:
                return rc       # 0 (ROW_SKIP) or RC_NO_MEMORY
        if key.t != MSG_ROW and not self.control_events:
            return ROW_SKIP
        return ROW_KEEP

    cdef int _push_event_columns(self, const KeyInfo* key, const EventBody* ev, Py_ssize_t msg,
                                 Err* err) noexcept nogil:
        """The columns every layout has: op, ts, message index, handle-key-only, before-incomplete,
        DDL query, claim-check location."""
        cdef int rc
        cdef int32_t m32 = <int32_t>msg
        cdef int hko = key.ohk and key.ccl.kind != J_STR
        # a copy: the column arrays never move during a call, and a local lets the compiler keep
        # their addresses in registers across the appends (a store into a buffer may alias a field)
        cdef ColumnSet cs = self.core.cols
        if var_push(&cs.var[CS_OP], OP_TEXT[ev.op], OP_LEN[ev.op]) < 0 \
                or fix_push(&cs.fix[CS_TS], &key.ts, sizeof(key.ts)) < 0 \
                or fix_push(&cs.fix[CS_MSG], &m32, sizeof(m32)) < 0 or fix_push_bool(&cs.fix[CS_HKO], hko) < 0 \
                or fix_push_bool(&cs.fix[self.col_bic], self.before_incomplete) < 0:
            return RC_NO_MEMORY
        rc = self.core._push_text(CS_DDL, &ev.q, err)
        if rc < 0:
            return rc
        return self.core._push_text(CS_CCL, &key.ccl, err)

    cdef int _push_generic(self, const KeyInfo* key, const EventBody* ev, Err* err) noexcept nogil:
        """The generic layout's own columns: schema, table, the after/before maps, DDL type, row
        id, physical table id."""
        cdef int rc
        cdef int32_t qt = <int32_t>ev.qt
        cdef ColumnSet cs = self.core.cols
        rc = self.core._push_text(CS_SCHEMA, &key.scm, err)
        if rc < 0:
            return rc
        rc = self.core._push_text(CS_TABLE, &key.tbl, err)
        if rc < 0:
            return rc
        rc = self.core._emit_map(CS_AFTER, ev.after, err)
        if rc < 0:
            return rc
        rc = self.core._emit_map(CS_BEFORE, ev.before, err)
        if rc < 0:
            return rc
        if (_push_opt(&cs.fix[self.col_ddl_type], &qt, sizeof(qt), ev.has_qt) < 0
                or _push_opt(&cs.fix[self.col_rid], &key.rid, sizeof(key.rid), key.has_rid) < 0
                or _push_opt(&cs.fix[self.col_ptn], &key.ptn, sizeof(key.ptn), key.has_ptn) < 0):
            return RC_NO_MEMORY
        return 0

    cdef int _parse_key(self, Cur* c, KeyInfo* k, Err* err) noexcept nogil:
        # A repeated field counts by its last copy, as in Go's encoding/json (TiCDC writes
        # "ohk":true then "ohk":false in a claim-check key): the scan only remembers where each
        # field's last value is; the fields are judged after the whole document is read, in the
        # twin's order, so both report the same first fault.
        cdef Span name, v
        cdef Span vals[EVENT_KEYS]
        cdef int r, kid, kpos = 0
        cdef unsigned seen = 0
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return fail(err, c, "event key is not a JSON object")
        r = obj_open(c, err)
        while r == 0:
            if hinted_key(c, &name, &self.key_hint, kpos, &EVENT_KEY_SET, &kid, err) < 0:
                return -1
            kpos += 1
            if kid >= 0:
                if scan_value(c, &vals[kid], 2, err) < 0:
                    return -1
                seen |= 1u << kid
            elif scan_value(c, &v, 2, err) < 0:
                return -1
            r = obj_more(c, err)
        if r < 0 or doc_end(c, err) < 0:
            return -1
        if _judge_key(c, k, vals, seen, err) < 0:
            return -1
        # UTF-8 of names (the twin checks them too)
        r = _check_utf8_span(&k.scm, &self.core.tmp, err)
        if r == 0:
            r = _check_utf8_span(&k.tbl, &self.core.tmp, err)
        if r == 0:
            r = _check_utf8_span(&k.ccl, &self.core.tmp, err)
        return r

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
        while r == 0:
            if obj_key(c, &name, err) < 0 or scan_value(c, &v, 2, err) < 0:
                return -1
            if key_is(&name, b"q", 1):
                vq = v
            elif key_is(&name, b"t", 1):
                vt = v
            r = obj_more(c, err)
        if r < 0 or doc_end(c, err) < 0:
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
        return _check_utf8_span(q, &self.core.tmp, err)

    cdef inline void _choose_memo(self, const KeyInfo* key) noexcept nogil:
        # the raw bytes of the names: a hint only, so escapes need not be undone
        self.memo = &self.memos[_table_hash(key.scm.p, key.scm.n, key.tbl.p, key.tbl.n)
                                & (MEMO_SLOTS - 1)]

    cdef int _parse_row(self, Cur* c, int* op, Err* err) noexcept nogil:
        """A row event's value, {"u":..., "p":..., "d":...}, into the core's images; op gets
        the row's OP_*.  A repeated u/p/d replaces the earlier copy (last wins, as Go's
        encoding/json): faults in an image are only recorded while reading and judged once the
        document is read, u then p then d as the twin does."""
        cdef int rc, r, which
        cdef Span name, v
        cdef Py_ssize_t value_off = c.pos - c.start
        self.core.images[0].present = 0
        self.core.images[1].present = 0
        self.core.images[2].present = 0
        self.core.names.len = 0
        self.bare.len = 0
        skip_ws(c)
        if c.pos >= c.end or c.pos[0] != 123:
            return fail(err, c, "row value is not a JSON object")
        r = obj_open(c, err)
        while r == 0:
            if obj_key(c, &name, err) < 0:
                return -1
            which = _image_of(&name)
            if which < 0:
                rc = scan_value(c, &v, 2, err)
            elif c.pos[0] == 123:
                rc = self._parse_image(c, &self.core.images[which], err)
            else:
                rc = self._non_object_image(c, which, err)
            if rc < 0:
                return rc
            r = obj_more(c, err)
        if r < 0 or doc_end(c, err) < 0:
            return -1
        for which in range(3):
            if self.core.images[which].present and (self.faults[which].bad != NULL or self.faults[which].any_bad) \
                    and self._image_fault(&self.core.images[which], &self.faults[which], err) < 0:
                return -1
        return self._row_op(value_off, op, err)

    cdef int _non_object_image(self, Cur* c, int which, Err* err) noexcept nogil:
        """An image ("u", "p" or "d") whose value is not an object: null is no image, anything
        else a fault judged once the row is read."""
        cdef Span v
        cdef Image* img = &self.core.images[which]
        if scan_value(c, &v, 2, err) < 0:
            return -1
        img.n = 0
        self.faults[which].any_bad = 0
        if which == IMG_P:
            self.bare.len = 0
        if v.kind == J_NULL:
            img.present = 0
            self.faults[which].bad = NULL
        else:
            img.present = 1
            self.faults[which].bad = "row image is not a JSON object"
            self.faults[which].bad_off = v.off
        return 0

    cdef int _row_op(self, Py_ssize_t value_off, int* op, Err* err) noexcept nogil:
        """The row's OP_* from the images it has (and the bare groups of an UPDATE placed)."""
        if self.core.images[IMG_D].present:
            if self.core.images[IMG_U].present or self.core.images[IMG_P].present:
                return fail_at(err, value_off, "row value has both d and u/p")
            op[0] = OP_DELETE
            return 0
        if not self.core.images[IMG_U].present:
            return fail_at(err, value_off, "row value has no u or d")
        op[0] = OP_UPDATE if self.core.images[IMG_P].present else OP_INSERT
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
        cdef Py_ssize_t nu = self.core.images[IMG_U].n, np_ = self.core.images[IMG_P].n
        cdef const char* why = NULL
        cdef int rc = RC_NO_MEMORY
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
        if w.gat and w.left and w.right and w.pre and w.suf and w.gt and w.slot and w.named and w.gv and w.out \
                and not alloc_refused():
            why = self._place_bare(&w, nm)
            rc = RC_FAILED if why != NULL else 0
            if rc == 0:
                free(self.core.images[IMG_P].cols)
                self.core.images[IMG_P].cols = w.out
                self.core.images[IMG_P].cap = np_ + nm + 1
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
        if rc == RC_FAILED:
            return fail_at(err, value_off, why)
        return rc

    cdef const char* _place_bare(self, BareWork* w, Py_ssize_t nm) noexcept nogil:
        """The work of _recover_bare in w's scratch arrays: NULL when done (w.out then holds
        the new "p"), else the fault."""
        cdef Py_ssize_t k = 0
        cdef const char* why = self._bare_groups(w, nm, &k)
        if why != NULL:
            return why
        self._bare_bounds(w)
        why = self._bare_mappings(w, k)
        if why != NULL:
            return why
        self._bare_rebuild(w, k)
        return NULL

    cdef const char* _bare_groups(self, BareWork* w, Py_ssize_t nm, Py_ssize_t* count) noexcept nogil:
        """The bare members as t,[h],f,v groups (w.gt, w.gv, w.gat), in the twin's order of
        faults: NULL (count: the groups), else the fault."""
        cdef const BareMember* m = <const BareMember*>self.bare.data
        cdef Py_ssize_t i = 0, k = 0, at
        cdef IntVal iv
        while i < nm:
            at = m[i].at
            if m[i].field != 116:
                return "bare column members in p do not form t,[h],f,v groups"
            if not (m[i].v.kind == J_INT and parse_int_text(m[i].v.p, m[i].v.n, &iv) == 0
                    and (not iv.neg or iv.mag == 0) and iv.mag < TYPE_CODE_SLOTS and TYPE_KIND[iv.mag] != 0):
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
        count[0] = k
        return NULL

    cdef void _bare_bounds(self, BareWork* w) noexcept nogil:
        """The u position of each named p column (w.named), and around each place j of "p" the
        u positions a group there must lie between: w.pre[j] (the last named column before it)
        and w.suf[j] (the first after it; u names are distinct: a repeat replaced its entry)."""
        cdef const Image* u = &self.core.images[IMG_U]
        cdef const Image* p = &self.core.images[IMG_P]
        cdef Py_ssize_t nu = u.n, np_ = p.n, cap = w.cap, j, s, hit
        cdef const ColEntry* e
        cdef const ColEntry* o
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
                        and bytes_eq(self.core._name_ptr(o), self.core._name_ptr(e), e.name_len):
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

    cdef const char* _bare_mappings(self, BareWork* w, Py_ssize_t k) noexcept nogil:
        """The leftmost (w.left) and rightmost (w.right, bounded below by the leftmost) mapping
        of the k groups, in order, onto u columns they fit: NULL, else the fault."""
        cdef const Image* u = &self.core.images[IMG_U]
        cdef Py_ssize_t nu = u.n, c = -1, gi, at
        for gi in range(k):
            at = w.gat[gi]
            c = c + 1 if c + 1 > w.pre[at] + 1 else w.pre[at] + 1
            while c < nu and not self._bare_fits(u, w.named, w.gt[gi], w.pre[at], w.suf[at], c):
                c += 1
            if c >= nu:
                return "bare column groups in p match no NULL column of u"
            w.left[gi] = c
        c = nu
        for gi in range(k - 1, -1, -1):
            at = w.gat[gi]
            c = c - 1 if c - 1 < w.suf[at] - 1 else w.suf[at] - 1
            while c > w.left[gi] and not self._bare_fits(u, w.named, w.gt[gi], w.pre[at], w.suf[at], c):
                c -= 1
            w.right[gi] = c
        return NULL

    cdef void _bare_rebuild(self, BareWork* w, Py_ssize_t k) noexcept nogil:
        """The new "p" into w.out: each group with only one possible column (leftmost and
        rightmost mapping agree) at its place among the named columns; the others are left out
        and flag the row."""
        cdef const Image* u = &self.core.images[IMG_U]
        cdef Image* p = &self.core.images[IMG_P]
        cdef Py_ssize_t np_ = p.n, nout = 0, gi = 0, j
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

    cdef inline bint _bare_fits(self, const Image* u, const uint8_t* named, int t, Py_ssize_t lo,
                                Py_ssize_t hi, Py_ssize_t c) noexcept nogil:
        cdef const ColEntry* o = &u.cols[c]
        return (lo < c < hi and not named[c] and o.t == t
                and (o.v.kind == J_NULL or o.v.kind == J_ABSENT))

    cdef int _image_fault(self, Image* img, const ImageFault* fault, Err* err) noexcept nogil:
        """-1 with the first fault of a read image (its columns in output order), else 0."""
        cdef Py_ssize_t k
        cdef ColEntry* e
        if fault.bad != NULL:
            return fail_at(err, fault.bad_off, fault.bad)
        if not fault.any_bad:
            return 0
        for k in range(img.n):
            e = &img.cols[k]
            if e.bad:
                set_column(err, self.core._name_ptr(e), e.name_len)
                return fail_at(err, e.v.off, COL_FAULT_TEXT[e.bad])
        return 0

    cdef int _dedupe_start(self, const Image* img, Py_ssize_t upto) noexcept nogil:
        """Start the name set of the image being read with its entries [0, upto), distinct (they
        followed the memo, or were entered before the set grew): 0, or RC_NO_MEMORY."""
        cdef Py_ssize_t cap = self.dd_cap if self.dd_cap else 64, k
        while cap < (upto + 1) * 4:
            cap *= 2
        if cap != self.dd_cap:
            free(self.dd_idx)
            self.dd_cap = 0
            self.dd_idx = NULL if alloc_refused() else <int32_t*>malloc(cap * sizeof(int32_t))
            if self.dd_idx == NULL:
                return RC_NO_MEMORY
            self.dd_cap = cap
        memset(self.dd_idx, 0xFF, cap * sizeof(int32_t))
        for k in range(upto):
            self._dedupe_put(img, k)
        return 0

    cdef inline Py_ssize_t _dedupe_put(self, const Image* img, Py_ssize_t k) noexcept nogil:
        cdef Py_ssize_t s = <Py_ssize_t>(img.cols[k].hash & <uint64_t>(self.dd_cap - 1))
        while self.dd_idx[s] >= 0:
            s = (s + 1) & (self.dd_cap - 1)
        self.dd_idx[s] = <int32_t>k
        return s

    cdef int _dedupe_slot(self, Image* img, Py_ssize_t idx) noexcept nogil:
        """Enter entry idx into the image's name set (NameSet): a name it holds already
        overwrites the earlier entry in place (JSON last-wins, first position)."""
        cdef ColEntry* e = &img.cols[idx]
        cdef ColEntry* o
        cdef Py_ssize_t s, cap
        cdef const uint8_t* a
        if (idx + 1) * 2 >= self.dd_cap and self._dedupe_start(img, idx) < 0:
            return RC_NO_MEMORY
        cap = self.dd_cap
        s = <Py_ssize_t>(e.hash & <uint64_t>(cap - 1))
        a = self.core._name_ptr(e)
        while self.dd_idx[s] >= 0:
            o = &img.cols[self.dd_idx[s]]
            if o.hash == e.hash and o.name_len == e.name_len and bytes_eq(a, self.core._name_ptr(o), e.name_len):
                o.v = e.v
                o.t = e.t
                o.f = e.f
                o.has_t = e.has_t
                o.bad = e.bad
                return NAME_REPEATED
            s = (s + 1) & (cap - 1)
        self.dd_idx[s] = <int32_t>idx
        return NAME_NEW

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
            np = self.core._name_ptr(e)
            if k < new.n:
                o = &new.cols[k]
                if o.hash == e.hash and o.name_len == e.name_len and bytes_eq(self.core._name_ptr(o), np, e.name_len):
                    e.f = o.f
                    continue
            for j in range(new.n):
                o = &new.cols[j]
                if o.hash == e.hash and o.name_len == e.name_len and bytes_eq(self.core._name_ptr(o), np, e.name_len):
                    e.f = o.f
                    break

    cdef int _parse_image(self, Cur* c, Image* img, Err* err) noexcept nogil:
        """One image ("u", "p" or "d", at its '{'): its columns into img's entries, in order.
        A column's faults are recorded on its entry, not raised: a later copy of the same name
        replaces the entry (last wins), and _image_fault judges what is left."""
        cdef ImageRead rd
        cdef int r, rc
        cdef Py_ssize_t w
        rd.memo = self.memo
        rd.fault = &self.faults[img - &self.core.images[0]]
        rd.on_memo = 1
        rd.deduped = 0
        rd.is_old = img == &self.core.images[IMG_P]
        if rd.is_old:
            self.bare.len = 0
        img.present = 1
        img.n = 0
        rd.fault.bad = NULL
        rd.fault.any_bad = 0
        r = obj_open(c, err)
        while r == 0:
            rc = self._image_member(c, img, &rd, err)
            if rc < 0:
                return rc
            r = obj_more(c, err)
        if r < 0:
            return -1
        w = img - &self.core.images[0]
        if not rd.on_memo:
            self._save_memo(rd.memo, img, c.start, rd.deduped or rd.fault.any_bad)
            self.img_fresh[w] = 1
        else:
            self.img_fresh[w] = not rd.memo.recorded
        self.img_ver[w] = rd.memo.version if rd.memo.n == img.n and img.n else 0
        return 0

    cdef inline int _image_member(self, Cur* c, Image* img, ImageRead* rd, Err* err) noexcept nogil:
        """One member of an image: a column (its entry at img.n), or a bare member of "p"."""
        cdef ColEntry* e
        cdef Py_ssize_t k = img.n
        cdef int got = MEMO_MISS
        if img.n == img.cap and image_make_room(img) < 0:
            return RC_NO_MEMORY
        if self.head_ref.cap < img.cap * <Py_ssize_t>sizeof(HeadRef) \
                and buf_reserve(&self.head_ref, img.cap * sizeof(HeadRef)) < 0:
            return RC_NO_MEMORY
        e = &img.cols[k]
        if rd.on_memo and k < rd.memo.n:
            got = self._memo_column(c, e, k, err)
            if got < 0:
                return got
            if got == MEMO_WHOLE:
                img.n += 1
                return 0
        if obj_key(c, &e.name, err) < 0:
            return RC_FAILED
        if self._entry_name(e) < 0:
            return RC_NO_MEMORY
        if rd.is_old and c.pos[0] != 123 and e.name_len == 1 and _is_bare_field(self.core._name_ptr(e)[0]):
            return self._bare_member(c, img, e, err)
        if self._column_object(c, e, k, err) < 0:
            return RC_FAILED
        if not e.name.ascii and not utf8_valid(self.core._name_ptr(e), e.name_len):
            e.bad = COL_NAME_NOT_UTF8
            e.v.off = e.name.off
        if e.bad:
            rd.fault.any_bad = 1
        return self._enter_column(img, rd, e)

    cdef inline int _memo_column(self, Cur* c, ColEntry* e, Py_ssize_t k, Err* err) noexcept nogil:
        """Entry k of the image being read from position k of the column memo (MemoMatch)."""
        cdef const MemoColumn* m = &(<const MemoColumn*>self.memo.cols.data)[k]
        cdef const uint8_t* spell = <const uint8_t*>self.memo.spell.data + m.at
        cdef const uint8_t* at = c.pos
        cdef HeadRef* href
        cdef int r
        if m.kind != 0 and m.sn > m.qn and c.end - at >= m.sn and bytes_eq(at, spell, m.sn):
            # the name, its colon and the column's head all as the table's last row wrote them
            # here (rows of a table mostly do): the entry the reading would make, without its
            # tests; another shape after the head is read again, from the name on
            plain_key_span(c, &e.name, at, m.qn, m.kind == 1)
            e.name_off = -1
            e.name_len = m.qn - 3
            _clear_entry(e, at + m.qn - c.start)
            r = _column_value(c, e, at + m.qn, at + m.sn, m.t, m.f, err)
            if r < 0:
                return r
            if r == COLUMN_READ:
                href = &(<HeadRef*>self.head_ref.data)[k]
                href.off = at + m.qn - c.start
                href.n = m.sn - m.qn
                e.hash = m.hash
                e.tgt = m.tgt
                return MEMO_WHOLE
            c.pos = at
        return MEMO_MISS

    cdef inline int _entry_name(self, ColEntry* e) noexcept nogil:
        """The entry's name where _name_ptr finds it: unescaped into the core's names if it has
        escapes.  0, or RC_NO_MEMORY."""
        if e.name.esc:
            e.name_off = self.core.names.len
            if json_unescape(e.name.p, e.name.n, &self.core.names) < 0:
                return RC_NO_MEMORY
            e.name_len = self.core.names.len - e.name_off
        else:
            e.name_off = -1
            e.name_len = e.name.n
        return 0

    cdef int _bare_member(self, Cur* c, const Image* img, const ColEntry* e, Err* err) noexcept nogil:
        """Not a column: a t/h/f/v member of a bare group in "p" (protocols.md E.15), placed
        after the row is read (_recover_bare)."""
        cdef BareMember bm
        bm.field = self.core._name_ptr(e)[0]
        bm.at = img.n
        if scan_value(c, &bm.v, 3, err) < 0:
            return RC_FAILED
        if buf_append(&self.bare, &bm, sizeof(BareMember)) < 0:
            return RC_NO_MEMORY
        return 0

    cdef int _column_object(self, Cur* c, ColEntry* e, Py_ssize_t k, Err* err) noexcept nogil:
        """The column object after entry k's name: its t, f and v into e, or e.bad.  0, or
        RC_FAILED for malformed JSON."""
        cdef HeadRef* href = &(<HeadRef*>self.head_ref.data)[k]
        cdef Py_ssize_t head_n = 0, col_at = c.pos - c.start
        cdef Span v
        cdef int r
        _clear_entry(e, col_at)
        href.off = 0
        href.n = 0
        if c.pos[0] != 123:
            if scan_value(c, &v, 3, err) < 0:
                return RC_FAILED
            e.bad = COL_NOT_OBJECT
            return 0
        r = _column_fast(c, e, &head_n, err)
        if r < 0:
            return r
        if r == COLUMN_READ:
            href.off = col_at
            href.n = head_n
            return 0
        return _column_members(c, e, err)

    cdef inline int _enter_column(self, Image* img, ImageRead* rd, ColEntry* e) noexcept nogil:
        """Entry img.n, read, into the image: with the memo's hash and target while the names
        follow the memo, else through the image's name set (a repeated name replaces the earlier
        entry).  0, or RC_NO_MEMORY."""
        cdef Py_ssize_t k = img.n
        cdef const MemoColumn* m
        cdef int dup
        if rd.on_memo and k < rd.memo.n:
            m = &(<const MemoColumn*>rd.memo.cols.data)[k]
            if not e.name.esc and m.qn == e.name_len + 3 \
                    and bytes_eq(<const uint8_t*>rd.memo.spell.data + m.at + 1, e.name.p, e.name_len):
                e.hash = m.hash
                e.tgt = m.tgt
                img.n += 1
                return 0
        if rd.on_memo:
            # off the memo: the entries so far are distinct; enter them for de-duplication
            rd.on_memo = 0
            if self._dedupe_start(img, k) < 0:
                return RC_NO_MEMORY
        e.hash = name_hash(self.core._name_ptr(e), e.name_len)
        e.tgt = -2
        dup = self._dedupe_slot(img, k)
        if dup < 0:
            return RC_NO_MEMORY
        if dup == NAME_NEW:
            img.n += 1
        else:
            rd.deduped = 1
        return 0

    cdef void _save_memo(self, ColumnMemo* memo, Image* img, const uint8_t* msg, int deduped) noexcept nogil:
        """Remember this image's column sequence and heads (only when no name repeated:
        positions must map one to one).  Out of memory just leaves the memo empty."""
        cdef Py_ssize_t k
        cdef ColEntry* e
        cdef const HeadRef* href
        cdef MemoColumn m
        memo.n = 0
        memo.recorded = 0
        self.memo_gen += 1
        memo.version = self.memo_gen
        if deduped:
            return
        memo.spell.len = 0
        memo.cols.len = 0
        for k in range(img.n):
            e = &img.cols[k]
            e.tgt = self.core._lookup_target(e) if self.core.typed else -1
            href = &(<const HeadRef*>self.head_ref.data)[k]
            m.hash = e.hash
            m.at = memo.spell.len
            m.qn = e.name_len + 3
            m.sn = m.qn + href.n
            m.t = e.t
            m.f = e.f
            m.tgt = e.tgt
            m.kind = _name_kind(self.core._name_ptr(e), e.name_len)
            if buf_push_byte(&memo.spell, 34) < 0 \
                    or buf_append(&memo.spell, self.core._name_ptr(e), e.name_len) < 0 \
                    or buf_append(&memo.spell, b'":', 2) < 0 \
                    or buf_append(&memo.spell, msg + href.off, href.n) < 0 \
                    or buf_append(&memo.cols, &m, sizeof(MemoColumn)) < 0:
                return
        memo.n = img.n

    cdef inline int _note_row(self, const EventBody* ev, Py_ssize_t msg) noexcept nogil:
        """A row event of the typed table: the images it uses (new, then old) checked for
        names the targets lack, unless they are on a memo checked already.  0, or RC_NO_MEMORY."""
        cdef int rc = 0
        if ev.after != NULL and self.img_fresh[ev.after - &self.core.images[0]]:
            rc = self._note_unknown(ev.after, msg)
        if rc == 0 and ev.before != NULL and self.img_fresh[ev.before - &self.core.images[0]]:
            rc = self._note_unknown(ev.before, msg)
        self.own_rows += 1
        return rc

    cdef int _note_unknown(self, Image* img, Py_ssize_t msg) noexcept nogil:
        """Record each name of img that no target has and that was not recorded before; the
        memo img equals is checked from now on.  0, or RC_NO_MEMORY."""
        cdef Py_ssize_t k
        cdef ColEntry* e
        cdef int j
        for k in range(img.n):
            e = &img.cols[k]
            j = e.tgt
            if j == -2:
                j = self.core._lookup_target(e)
            if j == -1 and self._unk_add(self.core._name_ptr(e), e.name_len, e.hash, msg) < 0:
                return RC_NO_MEMORY
        if self.img_ver[img - &self.core.images[0]] == self.memo.version:
            self.memo.recorded = 1
        return 0

    cdef int _unk_add(self, const uint8_t* p, Py_ssize_t n, uint64_t h, Py_ssize_t msg) noexcept nogil:
        """The name into unk_rec unless it is there.  0, or RC_NO_MEMORY."""
        cdef const UnknownRec* recs = <const UnknownRec*>self.unk_rec.data
        cdef Py_ssize_t count = self.unk_rec.len // <Py_ssize_t>sizeof(UnknownRec), s, j
        cdef UnknownRec r
        if self.unk_cap:
            s = <Py_ssize_t>(h & <uint64_t>(self.unk_cap - 1))
            while self.unk_slot[s] >= 0:
                j = self.unk_slot[s]
                if recs[j].hash == h and recs[j].n == n and bytes_eq(self.unk_spell.data + recs[j].at, p, n):
                    return 0
                s = (s + 1) & (self.unk_cap - 1)
        if 2 * (count + 1) > self.unk_cap and self._unk_grow() < 0:
            return RC_NO_MEMORY
        r.hash = h
        r.at = self.unk_spell.len
        r.n = n
        r.msg = msg
        r.row = self.own_rows
        if buf_append(&self.unk_spell, p, n) < 0 or buf_append(&self.unk_rec, &r, sizeof(UnknownRec)) < 0:
            return RC_NO_MEMORY
        self._unk_put(count)
        return 0

    cdef int _unk_grow(self) noexcept nogil:
        """Twice the slots (16 at first), every name entered again.  0, or RC_NO_MEMORY."""
        cdef Py_ssize_t cap = 2 * self.unk_cap if self.unk_cap else 16, k
        cdef Py_ssize_t* slots = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
        if slots == NULL:
            return RC_NO_MEMORY
        free(self.unk_slot)
        self.unk_slot = slots
        self.unk_cap = cap
        for k in range(cap):
            slots[k] = -1
        for k in range(self.unk_rec.len // <Py_ssize_t>sizeof(UnknownRec)):
            self._unk_put(k)
        return 0

    cdef void _unk_put(self, Py_ssize_t k) noexcept nogil:
        cdef const UnknownRec* recs = <const UnknownRec*>self.unk_rec.data
        cdef Py_ssize_t s = <Py_ssize_t>(recs[k].hash & <uint64_t>(self.unk_cap - 1))
        while self.unk_slot[s] >= 0:
            s = (s + 1) & (self.unk_cap - 1)
        self.unk_slot[s] = k

    cdef int _emit_old_image(self, Image* img, Cur* vd, Err* err) noexcept nogil:
        """The `_before` struct of one row: the old image (NULL: none) converted by _emit_typed,
        exactly as the new image is, into the old-image builders."""
        cdef int rc
        if self.core._old_image_begin(img != NULL) < 0:
            return _oom(err)
        rc = self._emit_typed(img, vd, err, 0)
        self.core._old_image_end()
        return rc


    cdef int _emit_typed(self, Image* img, Cur* vd, Err* err, int full) noexcept nogil:
        """The typed columns of one row from img (NULL: none); ``full``: a row's whole new image,
        whose absent columns are recorded (absent_seen) the first time."""
        cdef int j, k, rc
        cdef int32_t j32
        cdef ColEntry* e
        for j in range(self.core.ntargets):
            self.core.present[j] = -1
        if img != NULL:
            for k in range(img.n):
                # the target of a column the name-sequence memo did not know is looked up by name
                j = img.cols[k].tgt
                if j == -2:
                    j = self.core._lookup_target(&img.cols[k])
                if j >= 0:
                    self.core.present[j] = k
        for j in range(self.core.ntargets):
            k = self.core.present[j]
            if k < 0 or img.cols[k].v.kind == J_NULL or img.cols[k].v.kind == J_ABSENT:
                if self.core._push_target_null(j) < 0:
                    return _oom(err)
                if k < 0 and full and not self.absent_seen[j]:
                    j32 = j
                    if buf_append(&self.absent_rec, &j32, sizeof(int32_t)) < 0:
                        return _oom(err)
                    self.absent_seen[j] = 1
                continue
            e = &img.cols[k]
            rc = self.core._convert(e, j, err)
            if rc < 0:
                if rc == RC_FAILED:
                    set_column(err, self.core._name_ptr(e), e.name_len)
                return rc
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


cdef inline void _clear_entry(ColEntry* e, Py_ssize_t at) noexcept nogil:
    """An entry whose column object (at offset `at`) is still to be read."""
    e.bad = COL_FINE
    e.has_t = 0
    e.f = 0
    e.v.kind = J_ABSENT
    e.v.off = at


cdef int _column_members(Cur* c, ColEntry* e, Err* err) noexcept nogil:
    """A column object of another shape than TiCDC's own, read member by member (members repeat
    last-wins), then judged as _judge_column does: 0, or RC_FAILED for malformed JSON."""
    cdef Span ck, v, vt, vf, vh
    cdef int r, field
    vt.kind = J_ABSENT
    vf.kind = J_ABSENT
    vh.kind = J_ABSENT
    r = obj_open(c, err)
    while r == 0:
        if obj_key(c, &ck, err) < 0 or scan_value(c, &v, 4, err) < 0:
            return RC_FAILED
        field = _member_field(&ck)
        if field == 118:        # v
            e.v = v
        elif field == 116:      # t
            vt = v
        elif field == 102:      # f
            vf = v
        elif field == 104:      # h
            vh = v
        r = obj_more(c, err)
    if r < 0:
        return RC_FAILED
    _judge_column(e, &vt, &vf, &vh)
    return 0


cdef inline int _member_field(const Span* ck) noexcept nogil:
    """The byte of a column object's member name t, h, f or v (escaped spellings such as
    "\\u0074" mean the same name), else 0."""
    if ck.n == 1 and not ck.esc:
        return ck.p[0]
    if ck.esc:
        if key_is(ck, b"v", 1):
            return 118
        if key_is(ck, b"t", 1):
            return 116
        if key_is(ck, b"f", 1):
            return 102
        if key_is(ck, b"h", 1):
            return 104
    return 0


cdef void _judge_column(ColEntry* e, const Span* vt, const Span* vf, const Span* vh) noexcept nogil:
    """The last t, f, h of a column object into e, judged in the twin's order (e.bad, and
    e.v.off at the faulty member)."""
    cdef IntVal iv
    if vt.kind == J_INT and parse_int_text(vt.p, vt.n, &iv) == 0 and (not iv.neg or iv.mag == 0) \
            and iv.mag < TYPE_CODE_SLOTS and TYPE_KIND[iv.mag] != 0:
        e.t = <int>iv.mag
        e.has_t = 1
    else:
        e.bad = COL_TYPE_UNKNOWN
        if vt.kind != J_ABSENT:
            e.v.off = vt.off
        return
    if vf.kind == J_INT and parse_int_text(vf.p, vf.n, &iv) == 0 and (not iv.neg or iv.mag == 0) \
            and iv.mag <= 0xFFFFFFFFULL:
        e.f = <uint32_t>iv.mag
    elif not (vf.kind == J_NULL or vf.kind == J_ABSENT):
        e.bad = COL_FLAGS_INVALID
        e.v.off = vf.off
        return
    if not (vh.kind == J_TRUE or vh.kind == J_FALSE or vh.kind == J_NULL or vh.kind == J_ABSENT):
        e.bad = COL_HANDLE_INVALID
        e.v.off = vh.off


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


cdef int _column_fast(Cur* c, ColEntry* e, Py_ssize_t* head_n, Err* err) noexcept nogil:
    """The column object as TiCDC writes it, `{"t":T[,"h":B],"f":F,"v":V}`, read by literal
    matching (ColumnRead; head_n: the length of the head up to V), or RC_FAILED for an error in
    V (the member loop would report the same)."""
    cdef const uint8_t* p = c.pos
    cdef const uint8_t* end = c.end
    cdef uint64_t t, f
    if end - p < 20 or not bytes_eq(p, <const uint8_t*>b'{"t":', 5):
        return COLUMN_OTHER_SHAPE
    p += 5
    if _small_uint(&p, end, 3, &t) < 0 or t >= TYPE_CODE_SLOTS or TYPE_KIND[t] == 0:
        return COLUMN_OTHER_SHAPE
    if end - p >= 10 and bytes_eq(p, <const uint8_t*>b',"h":', 5):
        if bytes_eq(p + 5, <const uint8_t*>b"true", 4):
            p += 9
        elif bytes_eq(p + 5, <const uint8_t*>b"false", 5):
            p += 10
        else:
            return COLUMN_OTHER_SHAPE
    if end - p < 6 or not bytes_eq(p, <const uint8_t*>b',"f":', 5):
        return COLUMN_OTHER_SHAPE
    p += 5
    if _small_uint(&p, end, 10, &f) < 0 or f > 0xFFFFFFFFULL:
        return COLUMN_OTHER_SHAPE
    if end - p < 6 or not bytes_eq(p, <const uint8_t*>b',"v":', 5):
        return COLUMN_OTHER_SHAPE
    head_n[0] = p + 5 - c.pos
    return _column_value(c, e, c.pos, p + 5, <int>t, <uint32_t>f, err)


cdef inline int _column_value(Cur* c, ColEntry* e, const uint8_t* start, const uint8_t* value,
                              int t, uint32_t f, Err* err) noexcept nogil:
    """The rest of _column_fast once its head (from `start` to `value`) has been read as t, f."""
    cdef const uint8_t* end = c.end
    c.pos = value
    skip_ws(c)                                  # JSON allows whitespace after the colon
    if c.pos < end and c.pos[0] == 34:          # the common values first, without the dispatch
        if scan_string(c, &e.v, err) < 0:
            return RC_FAILED
    elif c.pos < end and (c.pos[0] == 45 or 48 <= c.pos[0] <= 57):
        if scan_number(c, &e.v, err) < 0:
            return RC_FAILED
    elif scan_value(c, &e.v, 4, err) < 0:
        return RC_FAILED
    if c.pos < end and c.pos[0] == 125:
        c.pos += 1
        e.t = t
        e.f = f
        e.has_t = 1
        return COLUMN_READ
    c.pos = start
    e.v.kind = J_ABSENT
    e.v.off = start - c.start
    return COLUMN_OTHER_SHAPE


cdef int _judge_key(const Cur* c, KeyInfo* k, const Span* vals, unsigned seen, Err* err) noexcept nogil:
    """The event key's fields (the last copy of each, vals[KK_*] where `seen` has its bit) into
    k, judged in the twin's order: 0, or RC_FAILED with the first fault."""
    memset(k, 0, sizeof(KeyInfo))
    if seen & (1u << KK_TS) and _key_ts(&vals[KK_TS], k, err) < 0:
        return RC_FAILED
    if seen & (1u << KK_SCM) and _key_str(&vals[KK_SCM], &k.scm, err) < 0:
        return RC_FAILED
    if seen & (1u << KK_TBL) and _key_str(&vals[KK_TBL], &k.tbl, err) < 0:
        return RC_FAILED
    if seen & (1u << KK_RID) and _key_int(&vals[KK_RID], &k.rid, &k.has_rid, err) < 0:
        return RC_FAILED
    if seen & (1u << KK_PTN) and _key_int(&vals[KK_PTN], &k.ptn, &k.has_ptn, err) < 0:
        return RC_FAILED
    if seen & (1u << KK_T) and _key_type(&vals[KK_T], k, err) < 0:
        return RC_FAILED
    if seen & (1u << KK_OHK):
        if vals[KK_OHK].kind == J_TRUE:
            k.ohk = 1
        elif not (vals[KK_OHK].kind == J_FALSE or vals[KK_OHK].kind == J_NULL):
            return fail_at(err, vals[KK_OHK].off, "event key field 'ohk' has an invalid value")
    if seen & (1u << KK_CCL) and _key_str(&vals[KK_CCL], &k.ccl, err) < 0:
        return RC_FAILED
    if not k.has_ts:
        return fail_at(err, 0 if c.start == NULL else (c.end - c.start) - 1, "event key has no ts")
    if not k.has_t or not (k.t == MSG_ROW or k.t == MSG_DDL or k.t == MSG_RESOLVED):
        return fail_at(err, (c.end - c.start) - 1, "event key has an unknown type t")
    return 0


cdef int _key_ts(const Span* v, KeyInfo* k, Err* err) noexcept nogil:
    cdef IntVal iv
    if v.kind == J_INT:
        if parse_int_text(v.p, v.n, &iv) < 0 or (iv.neg and iv.mag != 0) or iv.mag > 9223372036854775807ULL:
            return fail_at(err, v.off, "event key field 'ts' out of range")
        k.ts = iv.mag
        k.has_ts = 1
    elif v.kind != J_NULL:
        return fail_at(err, v.off, "event key field 'ts' has an invalid value")
    return 0


cdef int _key_type(const Span* v, KeyInfo* k, Err* err) noexcept nogil:
    cdef IntVal iv
    if v.kind == J_INT:
        if parse_int_text(v.p, v.n, &iv) < 0 or not int_in_range(&iv, -9223372036854775807LL - 1, 9223372036854775807ULL):
            return fail_at(err, v.off, "event key field 't' has an invalid value")
        k.t = <int>iv.mag if (not iv.neg and iv.mag < 100) else 0
        k.has_t = 1
    elif v.kind != J_NULL:
        return fail_at(err, v.off, "event key field 't' has an invalid value")
    return 0


cdef inline int _image_of(const Span* name) noexcept nogil:
    """IMG_U, IMG_P or IMG_D for a row value's member "u", "p" or "d", else -1."""
    if key_is(name, b"u", 1):
        return IMG_U
    if key_is(name, b"p", 1):
        return IMG_P
    if key_is(name, b"d", 1):
        return IMG_D
    return -1


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
            return RC_NO_MEMORY
        if not utf8_valid(tmp.data, tmp.len):
            return fail_at(err, s.off, "invalid UTF-8 in a text value")
    elif not utf8_valid(s.p, s.n):
        return fail_at(err, s.off, "invalid UTF-8 in a text value")
    return 0


cdef int _span_equals(const Span* s, const char* e, Py_ssize_t n, Buf* tmp) noexcept nogil:
    """1 if the string span (unescaped) is e[:n], else 0; RC_NO_MEMORY when unescaping found no
    room."""
    if s.kind != J_STR:
        return n == 0
    if not s.esc:
        return s.n == n and bytes_eq(s.p, <const uint8_t*>e, n)
    tmp.len = 0
    if json_unescape(s.p, s.n, tmp) < 0:
        return RC_NO_MEMORY
    return tmp.len == n and bytes_eq(<const uint8_t*>(tmp.data), <const uint8_t*>(e), n)

