# Simple protocol, Avro flavour: the fixed message schema read straight off the wire.  A DML's
# data/old maps come in Go map order; each value's union branch goes to the decoder compiled for
# (column, branch) when the table plan was registered (plan/decoders.pxi, as the Avro protocol's
# fields): typed rows stream their map into the targets, generic rows render theirs into the
# after/before maps as they are read.  A map that must be judged as a whole (a repeated column,
# a value that fails) is read again through the row image (RUN_REREAD, SimplePlan._read_again).

# How _avro_map takes a map's values
cdef enum MapMode:
    MAP_IMAGE = 0       # into the row image as text (typed rows' maps not streamed, readings again)
    MAP_STREAM = 1      # typed: each value through its FieldDecoder into its target
    MAP_CHECK = 2       # read and checked only (maps no output takes): no text forms
    MAP_RENDER = 3      # generic: each value through its GenericDecoder into the map's entries


cdef void _sav_compile_column(SimplePlan self, TablePlan* p, int j) noexcept:
    """The decoders of column j's union branches: typed (its target's) and generic."""
    cdef int b
    for b in range(SAV_BRANCHES):
        p.gen[j * SAV_BRANCHES + b] = _sav_generic_decoder(p.type_code[j], p.flags[j], b)
        p.dec[j * SAV_BRANCHES + b] = DEC_CHECK if p.col_target[j] < 0 else \
            _sav_field_decoder(p.type_code[j], p.flags[j], b, self.core.writers[p.col_target[j]])


cdef int _sav_field_decoder(int t, uint32_t flags, int b, int w) noexcept nogil:
    """The FieldDecoder of branch b of a column of type t into a target of writer w: the value
    written as it comes where its result and errors are those of its text through the column's
    TextDecoder (DEC_TEXT_RULES, the twin's route: Avro values as the JSON flavour's strings)."""
    cdef int kind = TYPE_KIND[t]
    if b == SAV_NULL:
        return DEC_NULL
    if b == SAV_LONG or b == SAV_UBIGINT:
        if (kind == K_INT or kind == K_UINT or kind == K_ENUM) and W_INT8 <= w <= W_UINT64:
            return DEC_INT
        return DEC_TEXT_RULES
    if b == SAV_FLOAT or b == SAV_DOUBLE:
        if not ((t == T_DOUBLE and b == SAV_DOUBLE) or (t == T_FLOAT and b == SAV_FLOAT)):
            return DEC_TEXT_RULES
        if w == W_FLOAT64:
            return DEC_F64
        if w == W_FLOAT32 and t == T_FLOAT:
            return DEC_F32
        return DEC_NUMBER if w == W_FLOAT32 else DEC_TEXT_RULES
    if b == SAV_STRING:
        if plain_text_target(t, flags, w):
            return DEC_STR
        if kind == K_DECIMAL and (w == W_DECIMAL128 or w == W_DECIMAL256):
            return DEC_DECIMAL_TEXT
        if (kind == K_DATE or kind == K_DATETIME or kind == K_TIMESTAMP) and w == W_TIMESTAMP:
            return DEC_WALL
    return DEC_TEXT_RULES


cdef int _sav_generic_decoder(int t, uint32_t flags, int b) noexcept nogil:
    """The GenericDecoder of branch b of a column of type t: its text written at once where
    SimplePlan._render would come to it simply, else GEN_RENDER."""
    cdef int kind = TYPE_KIND[t]
    if b == SAV_NULL:
        return GEN_NULL
    if (b == SAV_LONG or b == SAV_UBIGINT) and (kind == K_INT or kind == K_UINT or kind == K_ENUM):
        return GEN_INT
    if (t == T_DOUBLE and b == SAV_DOUBLE) or (t == T_FLOAT and b == SAV_FLOAT):
        return GEN_FLOAT_PLAIN
    if b == SAV_STRING and is_character_text(t, flags):
        return GEN_TEXT
    return GEN_RENDER


# ------------------------------------------------------------------ a message
cdef int _avro_message(SimplePlan self, Cur* c, Py_ssize_t msg, Err* err) noexcept nogil:
    """One simple-Avro message into the batch (RUN_OK), or why not."""
    cdef DmlInfo d
    cdef int rc
    cdef Py_ssize_t rows = colset_rows(&self.core.cols, CS_OP)
    cdef long long replaced = self.core.invalid_utf8_replaced
    _dml_start(&d)
    rc = _avro_dml(self, c, &d, err)
    if rc == RUN_OK:
        rc = self._emit_dml(&d, msg, err)
    if rc == RUN_REREAD:
        # the image path gives the twin's answer.  Other failures need no second reading: what
        # the decoders wrote was read without fault, so the image path would fail the same way.
        rc = self._read_again(c, &d, rows, replaced, msg, err)
        if rc == RUN_OK:
            rc = self._emit_dml(&d, msg, err)
    if rc != RUN_OK and d.streamed:
        # the row is dropped whatever comes next: the message is decoded again (after a stop
        # for a zone), or its failure is handled without a row
        self._drop_streamed_row(rows, replaced)
    return rc


cdef int _avro_dml(SimplePlan self, Cur* c, DmlInfo* d, Err* err) noexcept nogil:
    """A DML message's envelope and maps into d and the images / builders (RUN_OK), RUN_STOP
    for what the front end handles, or a failure."""
    cdef int rc = _avro_envelope(self, c, d, err)
    if rc != RUN_OK:
        return rc
    rc = _avro_options(self, c, d, err)
    if rc != RUN_OK:
        return rc
    if self.stop_on_claim_check and d.ccl.kind == J_STR:
        return RUN_STOP
    rc = _avro_maps(self, c, d, err)
    if rc != 0:
        return rc
    if c.pos != c.end:
        return fail(err, c, "trailing bytes after the Avro message")
    if not (d.has_data or d.has_old):
        return fail(err, c, "DML without data or old")
    fix_scratch_spans(&self.core.images[IMG_U], self.avro_scratch.data)
    fix_scratch_spans(&self.core.images[IMG_P], self.avro_scratch.data)
    return RUN_OK


cdef inline int _avro_enum(Cur* c, int64_t last, int64_t* v, Err* err) noexcept nogil:
    """An Avro enum index in [0, last]."""
    cdef const uint8_t* at = c.pos
    if avro_long(c, v, err) < 0:
        return -1
    if v[0] < 0 or v[0] > last:
        c.pos = at
        return fail(err, c, "Avro enum index out of range")
    return 0


cdef inline int _avro_long_at(Cur* c, uint64_t* out, Py_ssize_t* at, Err* err) noexcept nogil:
    """An Avro long of the envelope (kept as its uint64 bits) and its byte offset."""
    cdef int64_t v
    at[0] = c.pos - c.start
    if avro_long(c, &v, err) < 0:
        return -1
    out[0] = <uint64_t>v
    return 0


cdef int _avro_envelope(SimplePlan self, Cur* c, DmlInfo* d, Err* err) noexcept nogil:
    """The message kind, then a DML's table, type, timestamps and schema version, and its plan:
    RUN_OK, RUN_STOP (not a DML, or no plan yet) or a failure."""
    cdef int64_t v, idx
    cdef Py_ssize_t at
    if c.pos >= c.end or c.pos[0] != 2 * AVRO_MESSAGE_BRANCH:
        return RUN_STOP
    c.pos += 1
    if _avro_enum(c, AVRO_TYPE_DML, &v, err) < 0:          # type: enum of the 4 message kinds
        return -1
    if v != AVRO_TYPE_DML:
        return RUN_STOP
    if avro_union(c, AVRO_TYPE_DML + 1, &idx, err) < 0:     # payload: union of the 4 kinds
        return -1
    if idx != AVRO_TYPE_DML:
        return RUN_STOP
    if avro_long(c, &v, err) < 0:                          # version
        return -1
    if avro_string(c, &d.database, err) < 0 or avro_string(c, &d.table, err) < 0:
        return -1
    if _avro_long_at(c, &d.table_id, &d.table_id_at, err) < 0:
        return -1
    d.has_table_id = 1
    d.type_at = c.pos - c.start
    if _avro_enum(c, 2, &v, err) < 0:                      # type: DMLType enum
        return -1
    d.op = <int>v
    if _avro_long_at(c, &d.commit_ts, &d.commit_ts_at, err) < 0 \
            or _avro_long_at(c, &d.build_ts, &d.build_ts_at, err) < 0 \
            or _avro_long_at(c, &d.schema_version, &d.schema_version_at, err) < 0:
        return -1
    d.has_commit_ts = 1
    d.has_build_ts = 1
    d.has_version = 1
    d.plan = self._find_plan(d.database.p, d.database.n, d.table.p, d.table.n, d.schema_version)
    return RUN_STOP if d.plan < 0 else RUN_OK


cdef inline int _avro_bool(Cur* c, int* out, Err* err) noexcept nogil:
    if c.pos >= c.end:
        return fail(err, c, "truncated Avro boolean")
    if c.pos[0] > 1:
        return fail(err, c, "invalid Avro boolean")
    out[0] = c.pos[0]
    c.pos += 1
    return 0


cdef int _avro_options(SimplePlan self, Cur* c, DmlInfo* d, Err* err) noexcept nogil:
    """The optional claimCheckLocation, handleKeyOnly and checksum members."""
    cdef int64_t v, idx
    if avro_union(c, 2, &idx, err) < 0:                     # claimCheckLocation
        return -1
    if idx == 1 and avro_string(c, &d.ccl, err) < 0:
        return -1
    if avro_union(c, 2, &idx, err) < 0:                     # handleKeyOnly
        return -1
    if idx == 1 and _avro_bool(c, &d.hko, err) < 0:
        return -1
    if avro_union(c, 2, &idx, err) < 0:                     # checksum
        return -1
    if idx == 1:
        d.has_ck = 1
        if avro_long(c, &v, err) < 0:
            return -1
        d.ck_version = v
        if _avro_bool(c, &d.ck_corrupted, err) < 0 or avro_long(c, &v, err) < 0:
            return -1
        d.ck_current = <uint64_t>v & 0xFFFFFFFFULL
        if avro_long(c, &v, err) < 0:
            return -1
        d.ck_previous = <uint64_t>v & 0xFFFFFFFFULL
    return RUN_OK


cdef int _avro_maps(SimplePlan self, Cur* c, DmlInfo* d, Err* err) noexcept nogil:
    """The data and old maps, each in the MapMode its row needs."""
    cdef int64_t idx
    cdef int k, which, mode, rc
    cdef int streamed = self._streamed_image(d.plan, d.op) if self.core.typed else -1
    self.core.names.len = 0
    self.core.images[IMG_U].present = 0
    self.core.images[IMG_P].present = 0
    # Text forms of Avro values go to a scratch buffer that may move while the message is read:
    # spans hold scratch offsets (in_scratch) until the message is done.
    self.avro_scratch.len = 0
    for k in range(2):
        if avro_union(c, 2, &idx, err) < 0:
            return -1
        if idx != 1:
            continue
        which = IMG_U if k == 0 else IMG_P
        if k == 0:
            d.has_data = 1
        else:
            d.has_old = 1
        mode = _map_mode(self, d, which, streamed)
        if mode == MAP_STREAM or mode == MAP_RENDER:
            d.streamed = 1            # builders are written as the map is read
        if mode == MAP_STREAM:
            self._stream_start()
        rc = _avro_map(self, c, &self.plans[d.plan], &self.core.images[which], mode, err)
        if rc != 0:
            return rc
    return 0


cdef inline int _map_mode(SimplePlan self, const DmlInfo* d, int which, int streamed) noexcept nogil:
    """How the map `which` (IMG_U: data, IMG_P: old) of this row is read (`streamed`: the image
    a typed row streams, SimplePlan._streamed_image)."""
    if not self.core.typed:
        if self.reading_again:
            return MAP_IMAGE
        # an INSERT's old map and a DELETE's data map are no output's
        if (which == IMG_U and d.op == OP_DELETE) or (which == IMG_P and d.op == OP_INSERT):
            return MAP_CHECK
        return MAP_RENDER
    if which == streamed:
        return MAP_STREAM
    # another table's row, or the other map of a streamed row without a `_before` column
    if (streamed >= 0 and not self.core.with_old_image) or not self._own_table(d.plan):
        return MAP_CHECK
    return MAP_IMAGE


# ------------------------------------------------------------------ a map
cdef int _avro_map(SimplePlan self, Cur* c, TablePlan* p, Image* img, int mode, Err* err) noexcept nogil:
    """One data/old map: its blocks, each entry's key found in the plan and its value taken as
    `mode` says: 0, or what stops or fails the message."""
    cdef int64_t count, size
    cdef int rc
    cdef Py_ssize_t pos = 0
    self._image_start(p, img)
    while True:
        if avro_long(c, &count, err) < 0:
            return -1
        if count == 0:
            break
        if count < 0:
            if count == INT64_MIN_ or avro_long(c, &size, err) < 0:
                return fail(err, c, "invalid Avro map block") if not err.failed else -1
            count = -count
        if count > c.end - c.pos:
            return fail(err, c, "Avro map block count exceeds the bytes left")
        while count > 0:
            count -= 1
            rc = _avro_entry(self, c, p, img, pos, mode, err)
            if rc != 0:
                return rc
            pos += 1
    if mode == MAP_STREAM and self._stream_end() < 0:
        return _oom(err)
    return 0


cdef int _avro_entry(SimplePlan self, Cur* c, TablePlan* p, Image* img, Py_ssize_t pos, int mode,
                     Err* err) noexcept nogil:
    """One map entry: its column by name, its union branch, then its value by `mode`."""
    cdef int64_t idx
    cdef int j
    cdef ColEntry* e
    if img.n == img.cap and image_make_room(img) < 0:
        return _oom(err)
    e = &img.cols[img.n]
    if avro_string(c, &e.name, err) < 0:
        return -1
    j = self._resolve_map_key(p, pos, e.name.p, e.name.n, c.end)
    if j < 0:
        set_column(err, e.name.p, e.name.n)
        return fail_at(err, e.name.off, "column is not in the message's schema version")
    _map_entry(e, p, j, c.pos - c.start)
    if avro_union(c, SAV_BRANCHES, &idx, err) < 0:
        set_column(err, e.name.p, e.name.n)
        return -1
    if mode == MAP_STREAM:
        return _stream_value(self, c, p, e, idx, err)
    if mode == MAP_RENDER:
        return _render_value(self, c, p, img, e, idx, err)
    if mode == MAP_CHECK:
        return _sav_value(self, c, e, idx, 0, err)
    return _image_value(self, c, p, img, e, idx, err)


cdef inline void _map_entry(ColEntry* e, const TablePlan* p, int j, Py_ssize_t off) noexcept nogil:
    """Entry `e` (its name read) as column j's, its value at byte `off`."""
    e.name_off = -1
    e.name_len = e.name.n
    e.hash = 0
    e.col = j
    e.t = p.type_code[j]
    e.f = p.flags[j]
    e.has_t = 1
    e.zone = -1
    e.v.off = off
    e.v.esc = 0
    e.v.ascii = 1
    e.v.in_scratch = 0


cdef int _sav_value(SimplePlan self, Cur* c, ColEntry* e, int64_t idx, bint text, Err* err) noexcept nogil:
    """The value of branch idx into e.v as the row image holds it, the JSON flavour's string
    forms (`text`; in the scratch, from its current end), or only read and checked: 0, 1 (a
    TIMESTAMP's zone to load first), or a failure."""
    cdef int64_t lv
    cdef IntVal iv
    cdef double f64
    cdef Span loc, val
    cdef Py_ssize_t start
    if text and buf_reserve(&self.avro_scratch, 400) < 0:
        return _oom(err)
    start = self.avro_scratch.len
    e.v.neg = 0          # not a scratch span (entries are reused across messages)
    e.v.in_scratch = 0
    if idx == SAV_NULL:
        e.v.kind = J_NULL
    elif idx == SAV_LONG or idx == SAV_UBIGINT:        # long, UnsignedBigint{value: long}
        if avro_long(c, &lv, err) < 0:
            return -1
        if text:
            _sav_integer(lv, idx, e.t, e.f, &iv)
            span_in_scratch(&e.v, start, int_to_text(&iv, <char*>(self.avro_scratch.data + start)))
    elif idx == SAV_FLOAT or idx == SAV_DOUBLE:
        if _sav_real(c, e, idx, &f64, err) < 0:
            return -1
        if text:
            # rendered by the column's type, as the JSON protocol sends it: a float branch in a
            # DOUBLE column is the float32 widened (exact), not its float32 text
            span_in_scratch(&e.v, start, float_text(f64, 32 if e.t == T_FLOAT else 64, 1,
                                                    <char*>(self.avro_scratch.data + start)))
    elif idx == SAV_STRING:
        if avro_string(c, &e.v, err) < 0:
            return -1
        e.v.ascii = 0                 # raw Avro text: UTF-8 is checked when used
    elif idx == SAV_BYTES:            # bytes → base64 text, as the JSON encoding sends
        if avro_string(c, &val, err) < 0:
            return -1
        if not text:
            return 0
        if b64_encode(val.p, val.n, &self.avro_scratch) < 0:
            return _oom(err)
        span_in_scratch(&e.v, start, self.avro_scratch.len - start)
    else:                             # SAV_TIMESTAMP: Timestamp{location, value}
        if avro_string(c, &loc, err) < 0 or avro_string(c, &val, err) < 0:
            return -1
        val.ascii = 0
        return self._set_timestamp(e, &loc, &val, err)
    if e.v.in_scratch:
        self.avro_scratch.len = start + e.v.n
    return 0


cdef inline int _sav_real(Cur* c, ColEntry* e, int64_t idx, double* out, Err* err) noexcept nogil:
    """A float/double branch's value, finite."""
    if avro_real(c, idx == SAV_FLOAT, out, err) < 0:
        return -1
    if isinf(out[0]) or isnan(out[0]):
        set_column(err, e.name.p, e.name.n)
        return fail_at(err, e.v.off, "NaN or infinite float")
    return 0


cdef int _image_value(SimplePlan self, Cur* c, TablePlan* p, Image* img, ColEntry* e, int64_t idx,
                      Err* err) noexcept nogil:
    """MAP_IMAGE: the value as text in the row image (a repeated column: the last copy at the
    first one's place)."""
    cdef int rc = _sav_value(self, c, e, idx, 1, err)
    if rc != 0:
        return rc
    if self._dedupe_column(p, img, e) == 0:
        img.n += 1
    return 0


cdef inline int _again_if_failed(int rc) noexcept nogil:
    """A decoder's push: a value that does not convert is judged by the image path."""
    return rc if rc == 0 or rc == RC_NO_MEMORY else RUN_REREAD


cdef int _stream_value(SimplePlan self, Cur* c, TablePlan* p, ColEntry* e, int64_t idx,
                       Err* err) noexcept nogil:
    """MAP_STREAM: the value through its branch's FieldDecoder into its target: 0, RUN_REREAD
    (a repeated column, or a value that fails: the image path decides), or a failure."""
    cdef int dec = p.dec[e.col * SAV_BRANCHES + idx]
    cdef int tj = p.col_target[e.col]
    cdef int rc
    cdef Py_ssize_t start
    if dec == DEC_TEXT_RULES or dec == DEC_CHECK:
        start = self.avro_scratch.len
        rc = _sav_value(self, c, e, idx, dec == DEC_TEXT_RULES, err)
        if rc != 0 or dec == DEC_CHECK:
            return rc
        return self._stream_target(p, e, start, err)
    if self.target_gen[tj] == self.row_gen:
        return RUN_REREAD
    self.target_gen[tj] = self.row_gen
    if dec == DEC_NULL:
        return self.core._push_target_null(tj)
    if dec == DEC_INT or dec == DEC_F64 or dec == DEC_F32 or dec == DEC_NUMBER:
        return _stream_number(self, c, e, idx, dec, tj, err)
    return _stream_string(self, c, e, dec, tj, err)


cdef inline int _stream_number(SimplePlan self, Cur* c, ColEntry* e, int64_t idx, int dec, int tj,
                               Err* err) noexcept nogil:
    """DEC_INT / DEC_F64 / DEC_F32 / DEC_NUMBER of a long or float/double branch."""
    cdef IntVal iv
    cdef double f64
    if dec == DEC_INT:
        if _sav_read_integer(c, e, idx, &iv, err) < 0:
            return -1
        return _again_if_failed(self.core._push_target_int(tj, &iv, e.t, e.f, e.v.off, err))
    if _sav_real(c, e, idx, &f64, err) < 0:
        return -1
    if dec == DEC_NUMBER:
        return _again_if_failed(decode_real_value(self.core, e, f64, tj, err))
    return decode_real(self.core, dec, tj, f64)


cdef inline int _stream_string(SimplePlan self, Cur* c, ColEntry* e, int dec, int tj,
                               Err* err) noexcept nogil:
    """DEC_STR / DEC_DECIMAL_TEXT / DEC_WALL of a string branch."""
    cdef Span val
    if avro_string(c, &val, err) < 0:
        return -1
    val.ascii = 0
    if dec == DEC_STR:
        return _again_if_failed(self.core._push_value_text(&self.core.t_var[tj], &val, err))
    if dec == DEC_DECIMAL_TEXT:
        return _again_if_failed(self.core._push_decimal_text(tj, val.p, val.n, e.v.off, err))
    return _again_if_failed(self.core._push_wall_text(tj, val.p, val.n, TYPE_KIND[e.t], e.v.off, err))


cdef int _render_value(SimplePlan self, Cur* c, TablePlan* p, Image* img, ColEntry* e, int64_t idx,
                       Err* err) noexcept nogil:
    """MAP_RENDER: the entry's name and its value's text through its branch's GenericDecoder,
    straight into the map being filled (img's: CS_AFTER for data, CS_BEFORE for old): 0,
    RUN_REREAD (a repeated column, or a value that does not render: the image path decides
    which copy wins and words the error), or a failure."""
    cdef int col = CS_AFTER if img == &self.core.images[IMG_U] else CS_BEFORE
    cdef VarCol* keys = &self.core.cols.var[self.core.cols.spec[col].first_child]
    cdef Py_ssize_t seen = (img - &self.core.images[0]) * p.ncols + e.col
    if p.seen[seen] == self.image_gen[img - &self.core.images[0]]:
        return RUN_REREAD
    p.seen[seen] = self.image_gen[img - &self.core.images[0]]
    if var_push(keys, e.name.p, e.name.n) < 0:
        return _oom(err)
    self.core.cols.count[col] = self.core.cols.count[col] + 1
    return _render_text(self, c, p.gen[e.col * SAV_BRANCHES + idx], e, idx, keys + 1, err)


cdef inline int _render_text(SimplePlan self, Cur* c, int g, ColEntry* e, int64_t idx, VarCol* vals,
                             Err* err) noexcept nogil:
    """One value's generic text by GenericDecoder g."""
    cdef IntVal iv
    cdef int64_t lo
    cdef uint64_t hi
    cdef double x
    cdef Span val
    cdef int rc
    if g == GEN_INT:
        if _sav_read_integer(c, e, idx, &iv, err) < 0:
            return -1
        int_range(e.t, e.f, &lo, &hi)
        if not int_in_range(&iv, lo, hi):
            return RUN_REREAD           # the image path words the error
        return _again_if_failed(render_int(vals, &iv, err))
    if g == GEN_TEXT:
        if avro_string(c, &val, err) < 0:
            return -1
        val.ascii = 0
        return _again_if_failed(self.core._push_value_text(vals, &val, err))
    if g == GEN_FLOAT_PLAIN:
        if _sav_real(c, e, idx, &x, err) < 0:
            return -1
        return _again_if_failed(render_real(vals, x, 32 if e.t == T_FLOAT else 64, 1, err))
    if g == GEN_NULL:
        return _again_if_failed(_close(vals, 0, err))
    return _render_entry(self, c, e, idx, vals, err)


cdef int _render_entry(SimplePlan self, Cur* c, ColEntry* e, int64_t idx, VarCol* vals,
                       Err* err) noexcept nogil:
    """GEN_RENDER: the value as the row image holds it, rendered at once by the simple
    protocol's rules (as PlanCore._emit_map would)."""
    cdef Py_ssize_t start = self.avro_scratch.len
    cdef int rc = _sav_value(self, c, e, idx, 1, err)
    if rc != 0:
        return rc
    if e.v.in_scratch:
        e.v.p = self.avro_scratch.data + <uintptr_t>e.v.p
        e.v.in_scratch = 0
    if e.v.kind == J_STR and e.zone < 0 and is_character_text(e.t, e.f):
        rc = self.core._push_value_text(vals, &e.v, err)
    else:
        rc = self._render(e, vals, err)
    self.avro_scratch.len = start
    return _again_if_failed(rc)


cdef inline int _sav_read_integer(Cur* c, ColEntry* e, int64_t idx, IntVal* iv,
                                  Err* err) noexcept nogil:
    """The next long (branch idx) as the integer it stands for in e's column (_sav_integer)."""
    cdef int64_t lv
    if avro_long(c, &lv, err) < 0:
        return -1
    _sav_integer(lv, idx, e.t, e.f, iv)
    return 0


cdef inline void _sav_integer(int64_t lv, int64_t idx, int t, uint32_t flags, IntVal* iv) noexcept nogil:
    """The integer a simple-Avro long (or UnsignedBigint) stands for in a column of type t: TiCDC
    casts a uint64 (BIGINT UNSIGNED, BIT, SET bitmasks) to int64, so those are read back as
    unsigned."""
    int_from_long(lv, idx == SAV_UBIGINT or t == T_BIT or t == T_SET
                  or (t == T_LONGLONG and (flags & FLAG_UNSIGNED)), iv)
