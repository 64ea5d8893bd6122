# The decoder model of the Avro readers (the Avro protocol, the simple protocol's Avro flavour):
# when a plan is compiled, every union branch of every column gets one decoder, chosen from the
# column's TiDB type, the branch's Avro kind and the target's writer (typed output) or the
# generic map's text rules (generic output).  A protocol's parser finds a value's branch and
# hands the value to that decoder, which writes its builder.  The apply functions below are the
# decoders' protocol-neutral halves: a value already read off the wire into its builder.

# Typed output: one per branch of a column with a target.
cdef enum FieldDecoder:
    DEC_CHECK = 0       # read and checked, written nowhere (no target, or a row not output)
    DEC_UNLISTED = 1    # a column the target schema lacks: checked, its place kept for
                        # extra_columns="error" (Avro protocol)
    DEC_NULL = 2        # the null branch: a null in the target
    DEC_INT = 3         # long/int of an integer column into an integer target (ranges checked)
    DEC_F64 = 4         # DOUBLE (double) or FLOAT (float) column into float64: cannot fail
    DEC_F32 = 5         # FLOAT (float) column into float32: exact, cannot fail
    DEC_BLOB = 6        # BLOB bytes into a binary target: the bytes themselves
    DEC_STR = 7         # a text column's string into a string target: UTF-8 checked as a value
    DEC_DECIMAL = 8     # DECIMAL bytes into decimal128: the limbs at once when the scale is the
                        # target's and the digits fit its precision, else by the text rules
    DEC_WALL = 9        # a DATE/DATETIME/TIMESTAMP string into a timestamp (TIMESTAMP made UTC)
    DEC_TEXT_RULES = 10 # anything else: the value as the row image would hold it, converted by
                        # the target's converter (plan/core.pxi)
    DEC_NUMBER = 11     # a number (or BIT bytes) of another column type or into another writer:
                        # the value where the writer takes it (decode_int_value / decode_real_value),
                        # else its text by the converters
    DEC_DECIMAL_TEXT = 12  # a DECIMAL's string (simple protocol) into decimal128/256


# Generic output: one per branch of every column; each writes the value's text as the next
# entry of the map being filled.
cdef enum GenericDecoder:
    GEN_RENDER = 0      # the value as the row image would hold it, rendered (PlanCore._render)
    GEN_NULL = 1        # the null branch: a null entry
    GEN_INT = 2         # an integer of an integer column (Avro protocol: BIT bytes too):
                        # range-checked by type, decimal text
    GEN_FLOAT = 3       # float/double of a FLOAT/DOUBLE column: shortest text (Avro protocol)
    GEN_TEXT = 4        # a character column's string: itself, UTF-8 checked as a value
    GEN_FLOAT_PLAIN = 5 # float/double of a FLOAT/DOUBLE column: shortest digits, never an
                        # exponent (the simple protocol's rule)


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
