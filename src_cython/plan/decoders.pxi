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
    map entry's text."""
    cdef char txt[24]
    cdef int n = int_to_text(iv, txt)
    if buf_append_short(&vals.data, txt, n) < 0:
        return _oom(err)
    return _close(vals, 1, err)


cdef inline int render_real(VarCol* vals, double x, int bits, int plain, Err* err) noexcept nogil:
    """GEN_FLOAT / GEN_FLOAT_PLAIN: a finite double (bits 32: a float32's value) as the map
    entry's shortest text."""
    cdef char txt[400]          # plain: a double's digits without an exponent, up to ~330
    cdef int n = float_text(x, bits, plain, txt)
    if buf_append_short(&vals.data, txt, n) < 0:
        return _oom(err)
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
