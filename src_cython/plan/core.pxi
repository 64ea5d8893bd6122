# The protocol-neutral part of a decode plan, held by every protocol's plan (composition: no
# protocol's plan derives from another's).  It owns what does not depend on the wire format:
# the compiled targets (writer, precision/scale, name hash table), the zone tables, the
# column set of the output (arrow/columns.pxi), built from the protocol's layout in
# ticdc_fast.columns (the one list of every protocol's output columns): the columns every
# protocol writes, the generic after/before maps, the typed targets and their old image, and
# the protocol's own columns as more specs of the same set; the error record of the current
# call, the row images a parser fills, scratch buffers, the invalid-UTF-8 policy and counter,
# and the converters from a column's source value to each target writer.  Protocol parsers fill
# the images and call in.

cdef enum:
    NKINDS = 16          # converters per target: type kinds 0 (unknown code) .. K_ENUM
    ZONE_SHOWN_MAX = 200     # bytes of an unknown zone's name that its error shows

cdef const char* HEX_DIGITS = b"0123456789abcdef"


# Indexes in PlanCore.cols of the columns every protocol's row writers fill (_build_columns puts
# them there, taking each column's type from the protocol's layout in ticdc_fast.columns); the
# generic output's CS_SCHEMA..CS_BEFORE exist only in a generic plan
cdef enum:
    CS_OP = 0
    CS_TS = 1
    CS_MSG = 2
    CS_HKO = 3
    CS_DDL = 4
    CS_CCL = 5
    CS_SCHEMA = 6
    CS_TABLE = 7
    CS_AFTER = 8
    CS_BEFORE = 9

# the name of the column at each fixed index (None: the core's message index of each row, which
# is no output column)
_COMMON_COLUMNS = {CS_OP: _C.COL_OP, CS_TS: _C.COL_COMMIT_TS, CS_MSG: None, CS_HKO: _C.COL_HANDLE_KEY_ONLY,
                  CS_DDL: _C.COL_DDL, CS_CCL: _C.COL_CLAIM_CHECK}
_GENERIC_COLUMNS = {CS_SCHEMA: _C.COL_SCHEMA, CS_TABLE: _C.COL_TABLE, CS_AFTER: _C.COL_AFTER,
                          CS_BEFORE: _C.COL_BEFORE}
if sorted(_COMMON_COLUMNS) != list(range(CS_SCHEMA)) or sorted(_GENERIC_COLUMNS) != list(range(CS_SCHEMA, CS_BEFORE + 1)):
    raise ImportError("the core's fixed column indexes CS_* are not 0, 1, ... in order")


cdef tuple _builder_spec(column):
    """(Arrow type, data bytes per row, share of the batch's byte hint, empty text is null) of a
    ticdc_fast.columns.Column, as colset_build takes it."""
    return (column.type, column.bytes_per_row, column.byte_share, int(column.empty_is_null))


ctypedef int (*render_fn)(void* owner, const ColEntry* e, VarCol* out, Err* err) noexcept nogil
ctypedef int (*convert_fn)(void* core, const ColEntry* e, int j, int kind, Err* err) noexcept nogil


@cython.final
cdef class PlanCore:
    """Compiled once per decoder (targets, table filter, time zone); reused for every batch."""
    cdef int typed
    cdef int ntargets
    cdef int* writers
    cdef convert_fn* converters  # [target * NKINDS + column kind]: its converter (_pick_converter)
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
    cdef int64_t* tz_bounds          # the decoder's time zone (TIMESTAMP without a zone of its own)
    cdef int64_t* tz_offsets
    cdef Py_ssize_t tz_n
    # zones named by TIMESTAMP values: real zones (a few hundred exist) are kept; names that
    # are no zone are kept too, so values using them fail where converted, but only the last
    # UNKNOWN_ZONE_SLOTS of them: each message may name a new one
    cdef list zone_names         # per zone index
    cdef uint8_t** zone_key      # per zone index: its name (malloc'd)
    cdef Py_ssize_t* zone_key_len
    cdef uint64_t* zone_hash
    cdef int64_t** zone_bounds
    cdef int64_t** zone_offsets
    cdef Py_ssize_t* zone_n      # transitions; -1: the name is no zone
    cdef int nzones
    cdef int* zslot              # open addressing over zone_hash -> zone index, -1 empty
    cdef Py_ssize_t zslot_cap
    cdef int bad_zone[UNKNOWN_ZONE_SLOTS]   # zone indexes of names that are no zone, oldest at bad_next
    cdef int nbad
    cdef int bad_next
    # scratch
    cdef Buf names               # unescaped column names (ColEntry.name_off points here)
    cdef WallCache walls         # the minute of the last DATETIME/TIMESTAMP text parsed
    cdef Buf tmp
    cdef Buf tmp2
    cdef Buf numtmp
    cdef Image images[3]         # the row images of the message being read (IMG_*)
    cdef int* present            # per target: entry index or -1
    # the output columns (live during one decode call): the columns every protocol writes at
    # the fixed indexes CS_OP..CS_CCL (generic: also CS_SCHEMA..CS_BEFORE), typed targets at
    # t_first.., the old-image struct at old_col, then the protocol's own (extra_first..)
    cdef ColumnSet cols
    cdef list col_names          # per top-level column: its output name
    cdef list col_types          # per top-level column: its Arrow type
    cdef dict finish_plans       # output column names -> (set indexes, import schema)
    cdef object last_schema      # the schema of the last _finish_batch, and its set indexes
    cdef list last_wanted
    cdef list out_order          # the indexes of the output columns, in the layout's output order
    cdef int t_first
    cdef int old_col             # the `_before` struct (typed, old_image=True), -1 none
    cdef int extra_first
    # the builders the target writers write: the target columns of `cols`, or while an old image
    # is converted the `_before` struct's fields (swapped by _old_image_begin/_end, no copy)
    cdef FixCol* t_fix
    cdef VarCol* t_var
    cdef FixCol* o_fix
    cdef VarCol* o_var
    cdef int with_old_image
    cdef int started                # a batch is being built (begin_batch .. end_batch)
    # the error record of the current call (reset at its start; raise_decode_error reads it)
    cdef Err err
    # Set while a call runs (the decode loops release the GIL and free/rebuild the builders):
    # a second thread gets DecoderBusyError at once instead of sharing the buffers.
    cdef int busy
    # invalid UTF-8 in a column's text: 0 replace it with U+FFFD (and count the value), 1 raise
    cdef int utf8_strict
    # 1: the parser has checked each whole message as UTF-8 before reading it (simple JSON), so a
    # text value needs no second check
    cdef int text_prevalidated
    cdef Buf utf8_fix               # the invalid text while its repaired form is written
    # text values that needed a U+FFFD, over the plan's life (front ends count per decode call)
    cdef long long invalid_utf8_replaced
    # a protocol whose text rules differ (simple: values travel as strings, TIMESTAMP zones)
    # renders through its own function; NULL: the rules below
    cdef render_fn render_hook
    cdef void* hook_owner           # borrowed: the plan that holds this core

    cdef int _claim(self) except -1:
        # checked and set with the GIL held, so two threads cannot both pass
        if self.busy:
            raise DecoderBusyError(
                "this decoder is already decoding in another thread; a decoder is not thread-safe: "
                "use one decoder per thread")
        self.busy = 1
        return 0

    def __cinit__(self, cfg, layout):
        """`layout`: the protocol's columns in this mode (a ticdc_fast.columns.Layout)."""
        cdef int j, kind
        cdef Py_ssize_t k
        self.typed = cfg.targets is not None
        self.utf8_strict = getattr(cfg, "invalid_utf8", "replace") == "error"
        targets = cfg.targets or ()
        self.ntargets = len(targets)
        n = max(self.ntargets, 1)
        self.writers = <int*>calloc(n, sizeof(int))
        self.converters = <convert_fn*>calloc(n * NKINDS, sizeof(convert_fn))
        self.precisions = <int*>calloc(n, sizeof(int))
        self.scales = <int*>calloc(n, sizeof(int))
        self.present = <int*>calloc(n, sizeof(int))
        self.tname_off = <Py_ssize_t*>calloc(n + 1, sizeof(Py_ssize_t))
        self.tname_hash = <uint64_t*>calloc(n, sizeof(uint64_t))
        self.tslot_cap = 16
        while self.tslot_cap < 2 * n:
            self.tslot_cap *= 2
        self.tslot = <int*>malloc(self.tslot_cap * sizeof(int))
        if not (self.writers and self.converters and self.precisions and self.scales and self.present
                and self.tname_off and self.tname_hash and self.tslot):
            no_memory("the target column arrays")
        for k in range(self.tslot_cap):
            self.tslot[k] = -1
        self.with_old_image = self.typed and bool(getattr(cfg, "old_image", False))
        self._build_columns(targets, layout)
        for j, t in enumerate(targets):
            self.writers[j] = t.writer
            for kind in range(NKINDS):
                self.converters[j * NKINDS + kind] = _pick_converter(t.writer, kind)
            self.precisions[j] = t.precision
            self.scales[j] = t.scale
            name = t.name.encode("utf-8")
            self.tname_off[j] = self.target_names.len
            if buf_append(&self.target_names, <const char*>name, len(name)) < 0:
                no_memory("the target column names")
            self.tname_hash[j] = name_hash(<const uint8_t*><const char*>name, len(name))
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
        self.zone_names = []
        self.tz_n = len(cfg.tz_bounds)
        self.tz_bounds = <int64_t*>malloc(self.tz_n * sizeof(int64_t))
        self.tz_offsets = <int64_t*>malloc(self.tz_n * sizeof(int64_t))
        if not (self.tz_bounds and self.tz_offsets):
            no_memory("the time zone transitions")
        for k in range(self.tz_n):
            self.tz_bounds[k] = cfg.tz_bounds[k]
            self.tz_offsets[k] = cfg.tz_offsets[k]

    def __dealloc__(self):
        cdef int i
        self._free_outputs()
        free(self.writers)
        free(self.converters)
        free(self.precisions)
        free(self.scales)
        free(self.present)
        free(self.tname_off)
        free(self.tname_hash)
        free(self.tslot)
        colset_free(&self.cols)
        free(self.tz_bounds)
        free(self.tz_offsets)
        buf_free(&self.target_names)
        buf_free(&self.names)
        buf_free(&self.tmp)
        buf_free(&self.tmp2)
        buf_free(&self.numtmp)
        buf_free(&self.utf8_fix)
        for i in range(self.nzones):
            free(self.zone_bounds[i])
            free(self.zone_offsets[i])
            free(self.zone_key[i])
        free(self.zone_key)
        free(self.zone_key_len)
        free(self.zone_hash)
        free(self.zslot)
        free(self.zone_bounds)
        free(self.zone_offsets)
        free(self.zone_n)
        for i in range(3):
            free(self.images[i].cols)

    # ------------------------------------------------------------------ named zones
    cdef object _add_zone_body(self, name, known=True):
        """Load the transition table of an IANA zone named by TIMESTAMP values.  known=False
        registers a name that is no zone: values using it fail only where they are converted
        (as in the twin), so an unused image or column does not fail the message."""
        from ticdc_fast.timezones import local_table
        bounds, offsets = local_table(name) if known else ((), ())
        cdef int z
        cdef Py_ssize_t k, n = len(bounds)
        cdef bytes nb = name.encode("utf-8")
        cdef uint8_t* key
        if self._find_zone(<const uint8_t*><const char*>nb, len(nb)) >= 0:
            return
        key = <uint8_t*>malloc(max(len(nb), 1))
        if key == NULL:
            no_memory("a time zone name")
        memcpy(key, <const char*>nb, len(nb))
        if not known and self.nbad == UNKNOWN_ZONE_SLOTS:
            # forget the oldest name that is no zone, reuse its index
            z = self.bad_zone[self.bad_next]
            free(self.zone_key[z])
            free(self.zone_bounds[z])
            free(self.zone_offsets[z])
            self.zone_names[z] = name
        else:
            z = self.nzones
            if self._grow_zones(z + 1) < 0:
                free(key)
                no_memory("the time zone table")
            self.nzones += 1
            self.zone_names.append(name)
            if not known:
                self.nbad += 1
        if not known:
            self.bad_zone[self.bad_next] = z
            self.bad_next = (self.bad_next + 1) % UNKNOWN_ZONE_SLOTS
        self.zone_key[z] = key
        self.zone_key_len[z] = len(nb)
        self.zone_hash[z] = name_hash(key, len(nb))
        self.zone_n[z] = n if known else -1
        self.zone_bounds[z] = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        self.zone_offsets[z] = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if self.zone_bounds[z] == NULL or self.zone_offsets[z] == NULL:
            no_memory("the transitions of a time zone")
        for k in range(n):
            self.zone_bounds[z][k] = bounds[k]
            self.zone_offsets[z][k] = offsets[k]
        self._index_zones()

    cdef int _grow_zones(self, Py_ssize_t n) except -1:
        cdef void* p
        p = realloc(self.zone_key, n * sizeof(uint8_t*))
        if p == NULL:
            return -1
        self.zone_key = <uint8_t**>p
        p = realloc(self.zone_key_len, n * sizeof(Py_ssize_t))
        if p == NULL:
            return -1
        self.zone_key_len = <Py_ssize_t*>p
        p = realloc(self.zone_hash, n * sizeof(uint64_t))
        if p == NULL:
            return -1
        self.zone_hash = <uint64_t*>p
        p = realloc(self.zone_bounds, n * sizeof(int64_t*))
        if p == NULL:
            return -1
        self.zone_bounds = <int64_t**>p
        p = realloc(self.zone_offsets, n * sizeof(int64_t*))
        if p == NULL:
            return -1
        self.zone_offsets = <int64_t**>p
        p = realloc(self.zone_n, n * sizeof(Py_ssize_t))
        if p == NULL:
            return -1
        self.zone_n = <Py_ssize_t*>p
        return 0

    cdef int _index_zones(self) except -1:
        """Rebuild the name index (after a zone is added or a forgotten name replaced: a few
        hundred entries at most, and only when a message names a zone not seen before)."""
        cdef Py_ssize_t cap = 16, s
        cdef int z
        while cap < 2 * self.nzones:
            cap *= 2
        if cap != self.zslot_cap:
            free(self.zslot)
            self.zslot = <int*>malloc(cap * sizeof(int))
            self.zslot_cap = cap if self.zslot != NULL else 0
            if self.zslot == NULL:
                no_memory("the time zone name slots")
        for s in range(cap):
            self.zslot[s] = -1
        for z in range(self.nzones):
            s = _hash_slot(self.zone_hash[z], cap)
            while self.zslot[s] >= 0:
                s = (s + 1) & (cap - 1)
            self.zslot[s] = z
        return 0

    cdef int _find_zone(self, const uint8_t* name, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h
        cdef Py_ssize_t s
        cdef int z
        if self.zslot_cap == 0:
            return -1
        h = name_hash(name, n)
        s = _hash_slot(h, self.zslot_cap)
        while True:
            z = self.zslot[s]
            if z < 0:
                return -1
            if self.zone_hash[z] == h and self.zone_key_len[z] == n and bytes_eq(self.zone_key[z], name, n):
                return z
            s = (s + 1) & (self.zslot_cap - 1)

    cdef int _unknown_zone(self, int z, const ColEntry* e, Err* err) noexcept nogil:
        """The location named by no zone, shown whole up to 200 bytes: a control byte (a NUL
        included, which cut the name short when it went in as a C string) as \\xNN."""
        cdef const uint8_t* name = self.zone_key[z]
        cdef char shown[ZONE_SHOWN_MAX]
        cdef int k = 0, width
        cdef Py_ssize_t i
        cdef uint8_t b
        for i in range(self.zone_key_len[z]):
            b = name[i]
            width = 4 if b < 32 or b == 127 else 1
            if k + width > ZONE_SHOWN_MAX:
                break
            if width == 1:
                shown[k] = <char>b
            else:
                shown[k] = 92
                shown[k + 1] = 120
                shown[k + 2] = HEX_DIGITS[b >> 4]
                shown[k + 3] = HEX_DIGITS[b & 15]
            k += width
        err.failed = 1
        err.offset = e.v.off
        snprintf(err.reason, 256, "unknown time zone '%.*s'", k, shown)
        return -1

    # ------------------------------------------------------------------ column set
    cdef int _build_columns(self, targets, layout) except -1:
        """The column set of the output `layout` (ticdc_fast.columns) with these typed targets
        (Arrow type -> builder): the fixed columns at CS_*, the targets from t_first, the
        old-image struct at old_col, then the protocol's other columns (extra_first..)."""
        cdef int nt = len(targets)
        cdef int k
        own = {c.name: c for c in layout.head + layout.tail + layout.unused}
        fixed = dict(_COMMON_COLUMNS)
        if not self.typed:
            fixed.update(_GENERIC_COLUMNS)
        names = []
        top = []
        for k in range(len(fixed)):
            name = fixed[k]
            if name is None:
                top.append((pa.int32(), 0, 0, 0))
            elif name in own:
                top.append(_builder_spec(own.pop(name)))
            else:
                raise TypeError(f"the output layout has no column {name!r}, which every row of the core fills")
            names.append(name)
        self.old_col = -1
        self.t_first = len(top)
        for t in targets:
            names.append(t.name)
            top.append((t.arrow_type, 0, nt + 1, 0))
        if self.with_old_image:
            self.old_col = len(top)
            names.append(_C.COL_BEFORE_ROW)
            top.append((old_image_field(targets).type, 0, 4 * nt + 4, 0))
        self.extra_first = len(top)
        for name, column in own.items():
            names.append(name)
            top.append(_builder_spec(column))
        colset_build(&self.cols, top)
        self.col_names = names
        self.col_types = [spec[0] for spec in top]
        self.finish_plans = {}
        protocol = {names[k]: k for k in range(self.cols.ntop) if not self.t_first <= k < self.extra_first}
        self.out_order = ([protocol[c.name] for c in layout.head] + list(range(self.t_first, self.extra_first))
                          + [protocol[c.name] for c in layout.tail])
        self.t_fix = self.cols.fix + self.t_first
        self.t_var = self.cols.var + self.t_first
        if self.old_col >= 0:
            self.o_fix = self.cols.fix + self.cols.spec[self.old_col].first_child
            self.o_var = self.cols.var + self.cols.spec[self.old_col].first_child
        return 0

    cdef int extra_col(self, name) except -2:
        """Index of the protocol's own column `name` in the set, -1 if this plan has none."""
        cdef int k
        for k in range(self.extra_first, self.cols.ntop):
            if self.col_names[k] == name:
                return k
        return -1

    cdef int own_col(self, name) except -1:
        """Index of the protocol's own column `name`, which every mode's column set holds (its
        row writer fills it in the modes whose output has it)."""
        cdef int k = self.extra_col(name)
        if k < 0:
            raise TypeError(f"the output layout has no column {name!r}, which every row of this protocol fills")
        return k

    cdef void _free_outputs(self) noexcept nogil:
        colset_release(&self.cols)

    # A batch's life, the same for every protocol's plan: begun once (its outputs reserved), rows
    # appended by the protocol, then finished (handed over) or reset (dropped).
    cdef int begin_batch(self, Py_ssize_t rows, Py_ssize_t hint, what) except -1:
        """Reserve the outputs for a batch of about `rows` rows and `hint` text bytes, unless one
        is being built already."""
        if self.started:
            return 0
        self._free_outputs()
        if self._init_outputs(rows, hint) < 0:
            no_memory(what)
        self.started = 1
        return 0

    cdef void end_batch(self) noexcept:
        """The batch was handed over or is dropped: the outputs are empty again."""
        self._free_outputs()
        self.started = 0

    cdef tuple finish_batch_fields(self, fields, what):
        """finish(fields) of a plan: the batch's columns named by `fields` and the `_msg` array."""
        self.begin_batch(16, 64, what)
        out = self._finish_fields(fields)
        self.end_batch()
        return out

    cdef object finish_record_batch(self, schema, extras, what):
        """finish_batch(schema, extras) of a plan: the batch as one RecordBatch."""
        self.begin_batch(16, 64, what)
        out = self._finish_batch(schema, extras)
        self.end_batch()
        return out

    cdef int _init_outputs(self, Py_ssize_t rows, Py_ssize_t bytes_hint) noexcept nogil:
        return colset_reserve(&self.cols, rows, bytes_hint)

    cdef tuple _finish_fields(self, fields):
        """(the columns named by `fields`, in their order; the `_msg` array): the builders are
        handed over and the set is left empty."""
        names = tuple([f.name for f in fields])
        wanted = self.finish_plans.get(names)
        if wanted is None:
            wanted = self.finish_plans[names] = (self._indexes_of(names),
                                                 colset_schema([f.type for f in fields]))
        batch, msg = colset_finish(&self.cols, CS_MSG, wanted[0], wanted[1])
        return batch.columns, msg

    cdef object _finish_batch(self, schema, extras):
        """A RecordBatch of `schema`: the output columns its first fields name, then a column
        per array of `extras` (one value per message, taken for each row from its message).  The
        builders are handed over in one piece and the set is left empty."""
        if schema is not self.last_schema:
            self.last_wanted = self._indexes_of(schema.names[:len(schema.names) - len(extras)])
            self.last_schema = schema
        return colset_finish_batch(&self.cols, CS_MSG, self.last_wanted, schema, extras)

    cdef list _indexes_of(self, names):
        """The set indexes of the output columns `names`.  A target named like a protocol column
        wins, as it always did."""
        cdef int k
        order = ([k for k in range(self.t_first) if k != CS_MSG] + list(range(self.extra_first, self.cols.ntop))
                 + list(range(self.t_first, self.extra_first)))
        by = {self.col_names[k]: k for k in order}
        return [by[name] for name in names]

    def output_columns(self):
        """(name, Arrow type) of each output column in output order, as this plan built them from
        its layout (the decoders' schemas come from the same layout: tests compare the two)."""
        return [(self.col_names[k], self.col_types[k]) for k in self.out_order]

    cdef tuple _finish_output(self):
        """(the output columns in the layout's order, the `_msg` array): the builders are handed
        over and the set is left empty."""
        plan = self.finish_plans.get(None)
        if plan is None:
            plan = self.finish_plans[None] = colset_schema([self.col_types[k] for k in self.out_order])
        batch, msg = colset_finish(&self.cols, CS_MSG, self.out_order, plan)
        return batch.columns, msg

    cdef void _begin_call(self) noexcept:
        """A decode call starts: a clean error record."""
        memset(&self.err, 0, sizeof(Err))

    cdef int _old_image_begin(self, bint present) noexcept nogil:
        """Start a row's `_before` struct: the target writers write the old-image builders until
        _old_image_end (0, or RC_NO_MEMORY)."""
        cdef FixCol* fix = self.t_fix
        cdef VarCol* var = self.t_var
        if bits_push(&self.cols.var[self.old_col].valid, present) < 0:
            return RC_NO_MEMORY
        self.t_fix = self.o_fix
        self.t_var = self.o_var
        self.o_fix = fix
        self.o_var = var
        return 0

    cdef void _old_image_end(self) noexcept nogil:
        cdef FixCol* fix = self.t_fix
        cdef VarCol* var = self.t_var
        self.t_fix = self.o_fix
        self.t_var = self.o_var
        self.o_fix = fix
        self.o_var = var

    cdef int _emit_nulls(self, Err* err) noexcept nogil:
        """A null in every target (a row without the image the targets come from)."""
        cdef int j
        for j in range(self.ntargets):
            if self._push_target_null(j) < 0:
                return _oom(err)
        return 0

    cdef inline int _render_hooked(self, const ColEntry* e, VarCol* out, Err* err) noexcept nogil:
        if self.render_hook != NULL:
            return self.render_hook(self.hook_owner, e, out, err)
        return self._render(e, out, err)

    # ------------------------------------------------------------------ values
    cdef inline const uint8_t* _name_ptr(self, const ColEntry* e) noexcept nogil:
        if e.name_off >= 0:
            return self.names.data + e.name_off
        return e.name.p


    # ------------------------------------------------------------------ output
    cdef int _push_text(self, int col, const Span* s, Err* err) noexcept nogil:
        """Push a JSON string (unescaped, UTF-8 checked) or null for absent into column `col`
        (its spec says whether an empty text is null too)."""
        return self._push_str(&self.cols.var[col], s, 0, self.cols.spec[col].empty_null, err)

    cdef int _push_value_text(self, VarCol* out, const Span* s, Err* err) noexcept nogil:
        """_push_text for a column's value: invalid UTF-8 follows the invalid_utf8 option."""
        return self._push_str(out, s, 1, 0, err)

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

    cdef int _push_str(self, VarCol* out, const Span* s, int value, int empty_null, Err* err) noexcept nogil:
        cdef int rc
        cdef Py_ssize_t before
        if s.kind != J_STR:
            if var_push_null(out) < 0:
                return _oom(err)
            return 0
        before = out.data.len
        if s.esc:
            if json_unescape(s.p, s.n, &out.data) < 0:
                return _oom(err)
        elif buf_append_short(&out.data, s.p, s.n) < 0:
            return _oom(err)
        if not s.ascii and not self.text_prevalidated \
                and not utf8_valid(out.data.data + before, out.data.len - before):
            if not value:
                return fail_at(err, s.off, "invalid UTF-8 in a text value")
            rc = self._text_invalid(&out.data, before, s.off, err)
            if rc < 0:
                return rc
        if out.data.len == before and empty_null:
            return _close(out, 0, err)
        return _close(out, 1, err)

    cdef int _emit_map(self, int col, Image* img, Err* err) noexcept nogil:
        """An image as a row of map column `col` (NULL: a null row)."""
        cdef int rc
        cdef Py_ssize_t k
        cdef ColEntry* e
        cdef const uint8_t* np
        cdef VarCol* keys = &self.cols.var[self.cols.spec[col].first_child]
        cdef VarCol* vals = keys + 1
        if img == NULL:
            if map_close_row(&self.cols, col, 0) < 0:
                return _oom(err)
            return 0
        for k in range(img.n):
            e = &img.cols[k]
            np = self._name_ptr(e)
            if var_push(keys, np, e.name_len) < 0:
                return _oom(err)
            if e.v.kind == J_STR and e.zone < 0 and is_character_text(e.t, e.f):
                # a text column's string is its own generic text in every protocol (what _render
                # and the simple protocol's rules come to), without their kind tests
                rc = self._push_value_text(vals, &e.v, err)
            else:
                rc = self._render_hooked(e, vals, err)
            if rc < 0:
                if rc == RC_FAILED:
                    set_column(err, np, e.name_len)
                return rc
        # the entries of a failed row are never counted: truncation cuts them by the offsets
        self.cols.count[col] += <int32_t>img.n
        if map_close_row(&self.cols, col, 1) < 0:
            return _oom(err)
        return 0

    cdef int _str_bytes(self, const Span* s, const uint8_t** p, Py_ssize_t* n, Err* err) noexcept nogil:
        """The unescaped bytes of a string span (zero copy when it has no escapes)."""
        if span_bytes(s, &self.tmp, p, n) < 0:
            return _oom(err)
        return 0

    cdef int _raw_bytes(self, const ColEntry* e, int kind, const uint8_t** p, Py_ssize_t* n,
                        Err* err) noexcept nogil:
        """Raw bytes of a TEXT/BLOB value: Go-unquoted (binary) or base64-decoded (blob)."""
        cdef int rc
        cdef const char* why = NULL
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "expected a string")
        if kind != K_BLOB and (e.f & FLAG_BINARY) and e.v.esc:
            self.tmp2.len = 0
            rc = go_unquote_json(e.v.p, e.v.n, &self.tmp2)
            if rc == RC_NO_MEMORY:
                return _oom(err)
            if rc == 0:
                p[0] = self.tmp2.data
                n[0] = self.tmp2.len
                return 0
        rc = self._str_bytes(&e.v, p, n, err)
        if rc < 0:
            return rc
        if kind == K_BLOB:
            self.tmp2.len = 0
            rc = b64_decode(p[0], n[0], &self.tmp2, &why)
            if rc == RC_NO_MEMORY:
                return _oom(err)
            if rc < 0:
                return fail_at(err, e.v.off, why)
            p[0] = self.tmp2.data
            n[0] = self.tmp2.len
        elif e.f & FLAG_BINARY:
            self.tmp2.len = 0
            rc = go_unquote(p[0], n[0], &self.tmp2, &why)
            if rc == RC_NO_MEMORY:
                return _oom(err)
            if rc < 0:
                return fail_at(err, e.v.off, why)
            p[0] = self.tmp2.data
            n[0] = self.tmp2.len
        return 0

    cdef int _render(self, const ColEntry* e, VarCol* out, Err* err) noexcept nogil:
        """Generic output: the value as text (docs/open-protocol.md)."""
        cdef int kind = TYPE_KIND[e.t]
        cdef const Span* s = &e.v
        cdef const uint8_t* p
        cdef Py_ssize_t ln
        if s.kind == J_NULL or s.kind == J_ABSENT:
            return _close(out, 0, err)
        if kind == K_NULL:
            return fail_at(err, s.off, "type NULL with a non-null value")
        if kind == K_INT or kind == K_UINT or kind == K_ENUM:
            if s.kind == J_STR:
                return self._push_value_text(out, s, err)
            if s.kind != J_INT:
                return fail_at(err, s.off, "expected an integer")
            return _close_int_text(out, e.t, e.f, s.p, s.n, s.off, "integer out of range", err)
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if s.kind == J_STR:
                return self._push_value_text(out, s, err)
            if s.kind != J_INT and s.kind != J_FLOAT:
                return fail_at(err, s.off, "expected a number")
            return _close_shortest(out, s.p, s.n, kind, &self.numtmp, 0, s.off, err)
        if kind == K_TEXT or kind == K_BLOB:
            if s.kind != J_STR:
                return fail_at(err, s.off, "expected a string")
            if is_character_text(e.t, e.f):
                return self._push_value_text(out, s, err)
            rc = self._raw_bytes(e, kind, &p, &ln, err)
            if rc < 0:
                return rc
            if e.f & FLAG_BINARY:
                if kind == K_BLOB:
                    # canonical base64 was verified: the text itself is the answer
                    rc = self._str_bytes(s, &p, &ln, err)
                    if rc < 0:
                        return rc
                    if buf_append(&out.data, p, ln) < 0:
                        return _oom(err)
                elif b64_encode(p, ln, &out.data) < 0:
                    return _oom(err)
                return _close(out, 1, err)
            rc = self._append_value_bytes(out, p, ln, s.off, err)
            if rc < 0:
                return rc
            return _close(out, 1, err)
        if s.kind != J_STR:
            return fail_at(err, s.off, "expected a string")
        return self._push_value_text(out, s, err)

    cdef inline bint is_own_table(self, const uint8_t* db, Py_ssize_t db_n, const uint8_t* tbl,
                                  Py_ssize_t tbl_n) noexcept nogil:
        """Whether (database, table) names the table this plan's typed output is for."""
        return (db_n == self.schema_name_n and tbl_n == self.table_name_n
                and bytes_eq(db, <const uint8_t*>self.schema_name_c, db_n)
                and bytes_eq(tbl, <const uint8_t*>self.table_name_c, tbl_n))

    cdef int _target_by_name(self, const uint8_t* name, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h = name_hash(name, n)
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
        """A null in target column j (0, or RC_NO_MEMORY)."""
        if self.writers[j] == W_STRING or self.writers[j] == W_BINARY:
            return 0 if var_push_null(&self.t_var[j]) == 0 else RC_NO_MEMORY
        return 0 if fix_push_null(&self.t_fix[j]) == 0 else RC_NO_MEMORY

    cdef int _push_target_int(self, int j, const IntVal* iv, int t, uint32_t flags, Py_ssize_t off,
                              Err* err) noexcept nogil:
        """An integer of a column of type t into integer target j, both ranges checked."""
        cdef int64_t lo
        cdef uint64_t hi
        int_range(t, flags, &lo, &hi)
        if not int_in_range(iv, lo, hi):
            return fail_at(err, off, "integer out of range")
        return self._push_int(j, iv, off, err)

    cdef int _decimal_int(self, const ColEntry* e, IntVal* iv, Err* err) noexcept nogil:
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n, i, dot = -1
        cdef const char* why = NULL
        cdef uint64_t lim[4]
        rc = self._str_bytes(&e.v, &p, &n, err)
        if rc < 0:
            return rc
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

    cdef inline int _convert(self, const ColEntry* e, int j, Err* err) noexcept nogil:
        """A column's value into target j, through the converter picked for this (column kind,
        target writer) pair when the plan was compiled (_pick_converter): no test of the kind or
        the writer per value, only of the value's own JSON token where the kind allows several."""
        cdef int kind = TYPE_KIND[e.t]
        return self.converters[j * NKINDS + kind](<void*>self, e, j, kind, err)

    # The converters, one per (source kind, target writer) pair that can succeed; `kind` is
    # the column type's kind.  Pairs that cannot succeed get a refusal worded like the twin's.

    cdef int _string_from_bytes(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        """TEXT/BLOB into a string: binary columns as their bytes, character columns as text."""
        cdef int rc
        cdef VarCol* vc = &self.t_var[j]
        cdef const uint8_t* p
        cdef Py_ssize_t n
        if e.f & FLAG_BINARY:
            rc = self._raw_bytes(e, kind, &p, &n, err)
            if rc < 0:
                return rc
            rc = self._append_value_bytes(vc, p, n, e.v.off, err)
            if rc < 0:
                return rc
            return _close(vc, 1, err)
        return self._render_hooked(e, vc, err)

    cdef int _string_rendered(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        return self._render_hooked(e, &self.t_var[j], err)

    cdef int _binary_from_bytes(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        rc = self._raw_bytes(e, kind, &p, &n, err)
        if rc < 0:
            return rc
        if var_push(&self.t_var[j], p, n) < 0:
            return _oom(err)
        return 0

    cdef int _binary_from_json(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "cannot convert this column type to binary")
        rc = self._str_bytes(&e.v, &p, &n, err)
        if rc < 0:
            return rc
        if var_push(&self.t_var[j], p, n) < 0:
            return _oom(err)
        return 0

    cdef int _int_of_integer(self, const ColEntry* e, IntVal* iv, Err* err) noexcept nogil:
        """An integer column's value (a JSON integer or a string of one), in its type's range."""
        cdef int rc
        cdef int64_t lo
        cdef uint64_t hi
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef int r
        if e.v.kind == J_INT:
            p = e.v.p
            n = e.v.n
        elif e.v.kind == J_STR:
            rc = self._str_bytes(&e.v, &p, &n, err)
            if rc < 0:
                return rc
        else:
            return fail_at(err, e.v.off, "expected an integer")
        int_range(e.t, e.f, &lo, &hi)
        r = parse_int_text(p, n, iv)
        if r == -1:
            return fail_at(err, e.v.off, "invalid integer")
        if r < 0 or not int_in_range(iv, lo, hi):
            return fail_at(err, e.v.off, "integer out of range")
        return 0

    cdef inline int _int_of_decimal(self, const ColEntry* e, IntVal* iv, Err* err) noexcept nogil:
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "cannot convert this column type to an integer")
        return self._decimal_int(e, iv, err)

    cdef inline int _push_bool(self, int j, const IntVal* iv, Py_ssize_t off, Err* err) noexcept nogil:
        if iv.neg or iv.mag > 1:
            return fail_at(err, off, "integer is not a boolean (0 or 1)")
        if fix_push_bool(&self.t_fix[j], iv.mag == 1) < 0:
            return _oom(err)
        return 0

    cdef int _bool_from_integer(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef IntVal iv
        rc = self._int_of_integer(e, &iv, err)
        if rc < 0:
            return rc
        return self._push_bool(j, &iv, e.v.off, err)

    cdef int _bool_from_decimal(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef IntVal iv
        rc = self._int_of_decimal(e, &iv, err)
        if rc < 0:
            return rc
        return self._push_bool(j, &iv, e.v.off, err)

    cdef inline int _push_int(self, int j, const IntVal* iv, Py_ssize_t off, Err* err) noexcept nogil:
        """An integer into integer target j, in the target's range, at the target's width."""
        cdef int w = self.writers[j]
        cdef int64_t lo
        cdef uint64_t hi
        writer_range(w, &lo, &hi)
        if not int_in_range(iv, lo, hi):
            return fail_at(err, off, "integer out of range for the target type")
        if fix_push_int(&self.t_fix[j], int_value(iv), writer_width(w)) < 0:
            return _oom(err)
        return 0

    cdef int _int_from_integer(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef IntVal iv
        rc = self._int_of_integer(e, &iv, err)
        if rc < 0:
            return rc
        return self._push_int(j, &iv, e.v.off, err)

    cdef int _int_from_decimal(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef IntVal iv
        rc = self._int_of_decimal(e, &iv, err)
        if rc < 0:
            return rc
        return self._push_int(j, &iv, e.v.off, err)

    cdef int _double_of_float(self, const ColEntry* e, int kind, double* x, Err* err) noexcept nogil:
        """A FLOAT/DOUBLE column's value (a JSON number or a string of one), rounded to its width."""
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef float f
        if e.v.kind == J_INT or e.v.kind == J_FLOAT:
            p = e.v.p
            n = e.v.n
        elif e.v.kind == J_STR:
            rc = self._str_bytes(&e.v, &p, &n, err)
            if rc < 0:
                return rc
            if json_number_syntax(p, n) < 0:
                return fail_at(err, e.v.off, "invalid number")
        else:
            return fail_at(err, e.v.off, "expected a number")
        rc = parse_double(p, n, x, &self.numtmp)
        if rc == RC_NO_MEMORY:
            return _oom(err)
        if rc < 0:
            return fail_at(err, e.v.off, "number out of range")
        if kind == K_FLOAT32:
            if to_float32(x[0], &f) < 0:
                return fail_at(err, e.v.off, "float out of float32 range")
            x[0] = f
        return 0

    cdef int _double_of_integer(self, const ColEntry* e, double* x, Err* err) noexcept nogil:
        cdef int rc
        cdef IntVal iv
        rc = self._int_of_integer(e, &iv, err)
        if rc < 0:
            return rc
        if iv.mag > 9007199254740992ULL:
            x[0] = <double>iv.mag
            if x[0] >= 18446744073709551616.0 or <uint64_t>x[0] != iv.mag:
                return fail_at(err, e.v.off, "integer is not exact as a float")
        x[0] = -<double>iv.mag if iv.neg else <double>iv.mag
        return 0

    cdef inline int _push_float(self, int j, double x, Py_ssize_t off, Err* err) noexcept nogil:
        cdef float f
        if self.writers[j] == W_FLOAT32:
            f = <float>x
            if isinf(f) or <double>f != x:
                return fail_at(err, off, "value not exact as float32")
            if fix_push(&self.t_fix[j], &f, sizeof(f)) < 0:
                return _oom(err)
            return 0
        if fix_push(&self.t_fix[j], &x, sizeof(x)) < 0:
            return _oom(err)
        return 0

    cdef int _float_from_float(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef double x
        rc = self._double_of_float(e, kind, &x, err)
        if rc < 0:
            return rc
        return self._push_float(j, x, e.v.off, err)

    cdef int _float_from_integer(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef double x
        rc = self._double_of_integer(e, &x, err)
        if rc < 0:
            return rc
        return self._push_float(j, x, e.v.off, err)

    cdef inline int _push_decimal_text(self, int j, const uint8_t* p, Py_ssize_t n, Py_ssize_t off,
                                       Err* err) noexcept nogil:
        cdef uint64_t limbs[4]
        cdef const char* why = NULL
        if decimal_parse(p, n, self.precisions[j], self.scales[j],
                         2 if self.writers[j] == W_DECIMAL128 else 4, limbs, &why) < 0:
            return fail_at(err, off, why)
        if fix_push(&self.t_fix[j], limbs, 16 if self.writers[j] == W_DECIMAL128 else 32) < 0:
            return _oom(err)
        return 0

    cdef int _decimal_from_integer(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef IntVal iv
        cdef char txt[24]
        rc = self._int_of_integer(e, &iv, err)
        if rc < 0:
            return rc
        return self._push_decimal_text(j, <const uint8_t*>txt, int_to_text(&iv, txt), e.v.off, err)

    cdef int _decimal_from_decimal(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "cannot convert this column type to a decimal")
        rc = self._str_bytes(&e.v, &p, &n, err)
        if rc < 0:
            return rc
        return self._push_decimal_text(j, p, n, e.v.off, err)

    cdef inline int _text_of(self, const ColEntry* e, const uint8_t** p, Py_ssize_t* n,
                             Err* err) noexcept nogil:
        """The string the temporal writers parse (checked before the column's kind is)."""
        if e.v.kind != J_STR:
            return fail_at(err, e.v.off, "expected a string")
        return self._str_bytes(&e.v, p, n, err)

    cdef int _date_from_date(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef const char* why = NULL
        cdef int64_t v64
        cdef int32_t i32
        rc = self._text_of(e, &p, &n, err)
        if rc < 0:
            return rc
        if parse_date_days(p, n, &v64, &why) < 0:
            return fail_at(err, e.v.off, why)
        i32 = <int32_t>v64
        if fix_push(&self.t_fix[j], &i32, sizeof(i32)) < 0:
            return _oom(err)
        return 0

    cdef int _timestamp_from_wall(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        """DATE/DATETIME (a wall clock kept as it is) and TIMESTAMP (a wall clock in the decoder's
        time zone, converted to UTC) into a timestamp."""
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        rc = self._text_of(e, &p, &n, err)
        if rc < 0:
            return rc
        return self._push_wall_text(j, p, n, kind, e.v.off, err)

    cdef inline int _push_wall_text(self, int j, const uint8_t* p, Py_ssize_t n, int kind, Py_ssize_t off,
                                    Err* err) noexcept nogil:
        """A DATE/DATETIME/TIMESTAMP text into timestamp target j (TIMESTAMP: a wall clock in the
        decoder's time zone, made UTC)."""
        cdef const char* why = NULL
        cdef int64_t v64
        if parse_datetime_cached(&self.walls, p, n, &v64, &why) < 0:
            return fail_at(err, off, why)
        if kind == K_TIMESTAMP:
            v64 = self._wall_to_utc(v64)
        if fix_push(&self.t_fix[j], &v64, sizeof(v64)) < 0:
            return _oom(err)
        return 0

    cdef int _duration_from_time(self, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        cdef const char* why = NULL
        cdef int64_t v64
        rc = self._text_of(e, &p, &n, err)
        if rc < 0:
            return rc
        if parse_time_us(p, n, &v64, &why) < 0:
            return fail_at(err, e.v.off, why)
        if fix_push(&self.t_fix[j], &v64, sizeof(v64)) < 0:
            return _oom(err)
        return 0

    cdef int _refuse_text_then(self, const ColEntry* e, const char* why, Err* err) noexcept nogil:
        """A temporal or unsupported target refuses only after the value proved to be a string."""
        cdef int rc
        cdef const uint8_t* p
        cdef Py_ssize_t n
        rc = self._text_of(e, &p, &n, err)
        if rc < 0:
            return rc
        return fail_at(err, e.v.off, why)

    cdef inline int64_t _wall_to_utc(self, int64_t wall) noexcept nogil:
        return wall - zone_offset(self.tz_bounds, self.tz_offsets, self.tz_n, wall)


cdef class PlanFront:
    """The part every protocol's plan (OpenPlan, SimplePlan, AvroPlan) shares: the core it holds
    and what Python reads of it.  No cdef methods here: the protocols' classes stay final, so
    their calls stay direct."""
    cdef PlanCore core               # the protocol-neutral plan (targets, builders, converters)

    def __cinit__(self, cfg, *args, **kwargs):
        # before the protocol's own __cinit__: the core, whose columns are the protocol's
        # layout (`_protocol`, a class attribute of each plan) in cfg's mode
        self.core = PlanCore(cfg, _columns.layout(self._protocol, cfg.targets is not None))

    @property
    def invalid_utf8_replaced(self):
        return self.core.invalid_utf8_replaced

    @property
    def output_columns(self):
        return self.core.output_columns()


# The converters as plain function pointers, one per (source kind, target writer) pair; the plan
# fills its table [target * NKINDS + kind] once, when it is compiled (PlanCore is final: each
# call below is direct and inlined).
cdef int _cv_string_from_bytes(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._string_from_bytes(e, j, kind, err)


cdef int _cv_string_rendered(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._string_rendered(e, j, kind, err)


cdef int _cv_binary_from_bytes(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._binary_from_bytes(e, j, kind, err)


cdef int _cv_binary_from_json(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._binary_from_json(e, j, kind, err)


cdef int _cv_bool_from_integer(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._bool_from_integer(e, j, kind, err)


cdef int _cv_bool_from_decimal(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._bool_from_decimal(e, j, kind, err)


cdef int _cv_int_from_integer(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._int_from_integer(e, j, kind, err)


cdef int _cv_int_from_decimal(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._int_from_decimal(e, j, kind, err)


cdef int _cv_float_from_float(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._float_from_float(e, j, kind, err)


cdef int _cv_float_from_integer(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._float_from_integer(e, j, kind, err)


cdef int _cv_decimal_from_integer(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._decimal_from_integer(e, j, kind, err)


cdef int _cv_decimal_from_decimal(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._decimal_from_decimal(e, j, kind, err)


cdef int _cv_date_from_date(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._date_from_date(e, j, kind, err)


cdef int _cv_timestamp_from_wall(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._timestamp_from_wall(e, j, kind, err)


cdef int _cv_duration_from_time(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._duration_from_time(e, j, kind, err)


cdef int _cv_refuse_null(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return fail_at(err, e.v.off, "type NULL with a non-null value")


cdef int _cv_refuse_binary(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return fail_at(err, e.v.off, "cannot convert this column type to binary")


cdef int _cv_refuse_int(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return fail_at(err, e.v.off, "cannot convert this column type to an integer")


cdef int _cv_refuse_float(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return fail_at(err, e.v.off, "cannot convert this column type to a float")


cdef int _cv_refuse_decimal(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return fail_at(err, e.v.off, "cannot convert this column type to a decimal")


cdef int _cv_refuse_date(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._refuse_text_then(e, "cannot convert this column type to a date", err)


cdef int _cv_refuse_timestamp(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._refuse_text_then(e, "cannot convert this column type to a timestamp", err)


cdef int _cv_refuse_duration(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._refuse_text_then(e, "cannot convert this column type to a duration", err)


cdef int _cv_unsupported(void* c, const ColEntry* e, int j, int kind, Err* err) noexcept nogil:
    return (<PlanCore>c)._refuse_text_then(e, "unsupported target type", err)


cdef convert_fn _pick_converter(int w, int kind) noexcept nogil:
    """The converter of a column of this kind into a target of this writer."""
    cdef bint integer = kind == K_INT or kind == K_UINT or kind == K_ENUM
    cdef bint raw = kind == K_TEXT or kind == K_BLOB
    if kind == K_NULL:
        return _cv_refuse_null
    if w == W_STRING:
        return _cv_string_from_bytes if raw else _cv_string_rendered
    if w == W_BINARY:
        return _cv_binary_from_bytes if raw else (_cv_binary_from_json if kind == K_JSONDOC else _cv_refuse_binary)
    if w == W_BOOL:
        return _cv_bool_from_integer if integer else (_cv_bool_from_decimal if kind == K_DECIMAL else _cv_refuse_int)
    if W_INT8 <= w <= W_UINT64:
        return _cv_int_from_integer if integer else (_cv_int_from_decimal if kind == K_DECIMAL else _cv_refuse_int)
    if w == W_FLOAT32 or w == W_FLOAT64:
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            return _cv_float_from_float
        return _cv_float_from_integer if integer else _cv_refuse_float
    if w == W_DECIMAL128 or w == W_DECIMAL256:
        return _cv_decimal_from_integer if integer else (_cv_decimal_from_decimal if kind == K_DECIMAL else _cv_refuse_decimal)
    if w == W_DATE32:
        return _cv_date_from_date if kind == K_DATE else _cv_refuse_date
    if w == W_TIMESTAMP:
        if kind == K_DATE or kind == K_DATETIME or kind == K_TIMESTAMP:
            return _cv_timestamp_from_wall
        return _cv_refuse_timestamp
    if w == W_DURATION:
        return _cv_duration_from_time if kind == K_TIME else _cv_refuse_duration
    return _cv_unsupported
