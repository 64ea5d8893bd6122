# The decoder model of the Avro readers (the Avro protocol, the simple protocol's Avro flavour):
# when a plan is compiled, every union branch of every column gets one decoder, chosen from the
# column's TiDB type, the branch's Avro kind and the target's writer (typed output) or the
# generic map's text rules (generic output).  A protocol's parser finds a value's branch and
# hands the value to that decoder, which writes its builder.  The apply functions below are the
# decoders' protocol-neutral halves: a value already read off the wire into its builder.  The enums: decoders.pxd.

cdef inline int decode_real(PlanCore core, int dec, int j, double x) noexcept nogil:
    """DEC_F64 / DEC_F32: a finite float/double (a float branch's value widened, exact) into
    target j: 0, or RC_NO_MEMORY."""
    cdef float f32
    if dec == DEC_F32:
        f32 = <float>x
        return 0 if fix_push(&core.t_fix[j], &f32, sizeof(f32)) == 0 else RC_NO_MEMORY
    return 0 if fix_push(&core.t_fix[j], &x, sizeof(x)) == 0 else RC_NO_MEMORY


cdef inline int render_int(VarCol* vals, const IntVal* iv, Err* err) noexcept nogil:
    """GEN_INT: an integer (the caller has checked it against its column type's range) as the
    map entry's text, written in place."""
    if buf_reserve(&vals.data, 24) < 0:
        return _oom(err)
    vals.data.len += int_to_text(iv, <char*>(vals.data.data + vals.data.len))
    return _close(vals, 1, err)


cdef inline int render_real(VarCol* vals, double x, int bits, int plain, Err* err) noexcept nogil:
    """GEN_FLOAT / GEN_FLOAT_PLAIN: a finite double (bits 32: a float32's value) as the map
    entry's shortest text, written in place."""
    if buf_reserve(&vals.data, 400) < 0:    # plain: a double's digits without an exponent, up to ~330
        return _oom(err)
    vals.data.len += float_text(x, bits, plain, <char*>(vals.data.data + vals.data.len))
    return _close(vals, 1, err)


cdef int decode_int_value(PlanCore core, const ColEntry* e, const IntVal* iv, int j,
                          Err* err) noexcept nogil:
    """DEC_NUMBER of an integer (entry `e` names the column, e.v.off the value) into target j:
    an integer writer takes it range-checked, a decimal128 one at once where it fits, anything
    else its decimal text (span kind J_INT) through the target's converter."""
    cdef int w = core.writers[j]
    cdef int64_t lo
    cdef uint64_t hi
    cdef uint64_t limbs[2]
    cdef char txt[24]
    if W_INT8 <= w <= W_UINT64:
        return core._push_target_int(j, iv, e.t, e.f, e.v.off, err)
    int_range(e.t, e.f, &lo, &hi)
    if not int_in_range(iv, lo, hi):
        return fail_at(err, e.v.off, "integer out of range")
    if w == W_DECIMAL128 and (TYPE_KIND[e.t] == K_INT or TYPE_KIND[e.t] == K_UINT or TYPE_KIND[e.t] == K_ENUM) \
            and _int_to_decimal128(iv, core.precisions[j], core.scales[j], limbs) == 0:
        return 0 if fix_push(&core.t_fix[j], limbs, sizeof(limbs)) == 0 else _oom(err)
    return _convert_text(core, e, j, txt, int_to_text(iv, txt), J_INT, err)


cdef int decode_real_value(PlanCore core, const ColEntry* e, double x, int j, Err* err) noexcept nogil:
    """DEC_NUMBER of a finite double (a FLOAT column's already its float32 value) into target j:
    a float writer takes it (float32 only exactly), anything else its shortest text through the
    target's converter."""
    cdef int w = core.writers[j]
    cdef float f
    cdef char txt[48]
    if w == W_FLOAT64 and (e.t == T_FLOAT or e.t == T_DOUBLE):
        return 0 if fix_push(&core.t_fix[j], &x, sizeof(x)) == 0 else _oom(err)
    if w == W_FLOAT32 and (e.t == T_FLOAT or e.t == T_DOUBLE):
        f = <float>x
        if isinf(f) or <double>f != x:
            return fail_at(err, e.v.off, "value not exact as float32")
        return 0 if fix_push(&core.t_fix[j], &f, sizeof(f)) == 0 else _oom(err)
    return _convert_text(core, e, j, txt, float_text(x, 32 if e.t == T_FLOAT else 64, 0, txt), J_STR, err)


cdef inline int _convert_text(PlanCore core, const ColEntry* e, int j, const char* txt, int n, int kind,
                              Err* err) noexcept nogil:
    """The number's text (span kind `kind`) converted into target j as the row image's value
    would be (string/decimal/bool targets; errors worded like the twin's)."""
    cdef ColEntry tmp = e[0]
    tmp.v.p = <const uint8_t*>txt
    tmp.v.n = n
    tmp.v.kind = kind
    tmp.v.esc = 0
    tmp.v.ascii = 1
    tmp.v.neg = 0
    tmp.v.in_scratch = 0
    return core._convert(&tmp, j, err)


# ------------------------------------------------------------------ text tokens (TextDecoder)
cdef inline bint plain_text_target(int t, uint32_t flags, int w) noexcept nogil:
    """A character column (not binary, not ENUM/SET) into a string target: its text as it is."""
    return is_character_text(t, flags) and w == W_STRING


cdef int text_decoder_for(int t, uint32_t flags, int w, bint has_elements) noexcept nogil:
    """The TextDecoder of a column of type t into a target of writer w, chosen once."""
    cdef int kind = TYPE_KIND[t]
    if w == W_STRING:
        if (t == T_ENUM or t == T_SET) and has_elements:
            return TXT_ENUM if t == T_ENUM else TXT_SET
        if plain_text_target(t, flags, w):
            return TXT_TEXT
        return TXT_CORE if flags & FLAG_BINARY else TXT_RENDER
    if (kind == K_FLOAT32 or kind == K_FLOAT64) and (w == W_FLOAT32 or w == W_FLOAT64):
        return TXT_FLOAT
    return TXT_CORE


cdef inline int decode_text(PlanCore core, int td, const ColEntry* e, int j, const ElementNames* el,
                            int first, int count, Err* err) noexcept nogil:
    """A column's non-null text token into target j by its TextDecoder td (elements first..first
    + count of el for TXT_ENUM / TXT_SET): 0, RC_FAILED or RC_NO_MEMORY.  A TIMESTAMP given with its
    zone (the simple protocol's {"location", "value"} object) is a token kind of its own."""
    if e.zone >= 0:
        return _text_zoned(core, e, j, err)
    if e.v.kind != J_STR:
        return fail_at(err, e.v.off, "expected a string value")
    if td == TXT_TEXT:
        return core._push_value_text(&core.t_var[j], &e.v, err)
    if td == TXT_CORE:
        return core._convert(e, j, err)
    if td == TXT_RENDER:
        return core._render_hooked(e, &core.t_var[j], err)
    if td == TXT_ENUM or td == TXT_SET:
        return _text_elements(core, e, j, el, first, count, td == TXT_ENUM, err)
    return _text_float(core, e, j, err)


cdef int _text_zoned(PlanCore core, const ColEntry* e, int j, Err* err) noexcept nogil:
    """A TIMESTAMP's wall text and zone: UTC microseconds, or its text in UTC for a string."""
    cdef int w = core.writers[j]
    cdef int64_t wall, utc
    cdef const char* why = NULL
    if w == W_STRING:
        return core._render_hooked(e, &core.t_var[j], err)
    if w != W_TIMESTAMP:
        return fail_at(err, e.v.off, "cannot convert a TIMESTAMP to this type")
    if parse_datetime_cached(&core.walls, e.v.p, e.v.n, &wall, &why) < 0:
        return fail_at(err, e.v.off, why)
    if core.zone_n[e.zone] < 0:
        return core._unknown_zone(e.zone, e, err)
    utc = wall - zone_offset(core.zone_bounds[e.zone], core.zone_offsets[e.zone], core.zone_n[e.zone], wall)
    if fix_push(&core.t_fix[j], &utc, sizeof(utc)) < 0:
        return _oom(err)
    return 0


cdef int _text_elements(PlanCore core, const ColEntry* e, int j, const ElementNames* el, int first,
                        int count, bint is_enum, Err* err) noexcept nogil:
    """An ENUM index (1-based, 0 the empty value) or SET bitmask as its element names."""
    cdef const uint8_t* sp
    cdef Py_ssize_t sn
    cdef int64_t lo
    cdef uint64_t hi
    cdef IntVal iv
    cdef int b, wrote = 0
    cdef const int64_t* eo = <const int64_t*>el.off.data
    cdef Buf* out = &core.t_var[j].data
    cdef int rc = core._str_bytes(&e.v, &sp, &sn, err)
    if rc < 0:
        return rc
    int_range(e.t, e.f, &lo, &hi)
    if parse_int_text(sp, sn, &iv) != 0 or not int_in_range(&iv, lo, hi):
        return fail_at(err, e.v.off, "invalid ENUM/SET value")
    if is_enum:
        if iv.mag > <uint64_t>count:
            return fail_at(err, e.v.off, "ENUM index beyond its elements")
        if iv.mag > 0 and buf_append(out, el.names.data + eo[first + iv.mag - 1],
                                     eo[first + iv.mag] - eo[first + iv.mag - 1]) < 0:
            return _oom(err)
        return _close(&core.t_var[j], 1, err)
    if count < 64 and (iv.mag >> count) != 0:
        return fail_at(err, e.v.off, "SET bitmask beyond its elements")
    for b in range(count):
        if (iv.mag >> b) & 1:
            if wrote and buf_push_byte(out, 44) < 0:
                return _oom(err)
            if buf_append(out, el.names.data + eo[first + b], eo[first + b + 1] - eo[first + b]) < 0:
                return _oom(err)
            wrote = 1
    return _close(&core.t_var[j], 1, err)


cdef int _text_float(PlanCore core, const ColEntry* e, int j, Err* err) noexcept nogil:
    """A FLOAT/DOUBLE column's number text into float32/float64: the nearest double, a FLOAT
    column's rounded to float32; into float32 it must be exact."""
    cdef const uint8_t* sp
    cdef Py_ssize_t sn
    cdef double x
    cdef float f
    cdef int rc = core._str_bytes(&e.v, &sp, &sn, err)
    if rc < 0:
        return rc
    if json_number_syntax(sp, sn) < 0:
        return fail_at(err, e.v.off, "invalid number")
    rc = parse_double(sp, sn, &x, &core.numtmp)
    if rc == RC_NO_MEMORY:
        return _oom(err)
    if rc < 0:
        return fail_at(err, e.v.off, "number out of range")
    if TYPE_KIND[e.t] == K_FLOAT32:
        if to_float32(x, &f) < 0:
            return fail_at(err, e.v.off, "float out of float32 range")
        x = f
    if core.writers[j] == W_FLOAT32:
        f = <float>x
        if isinf(f) or <double>f != x:
            return fail_at(err, e.v.off, "value not exact as float32")
        return 0 if fix_push(&core.t_fix[j], &f, sizeof(f)) >= 0 else _oom(err)
    return 0 if fix_push(&core.t_fix[j], &x, sizeof(x)) >= 0 else _oom(err)
