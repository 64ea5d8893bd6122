# Numbers: integer grammar and ranges, float parsing and Go-style shortest formatting,
# exact decimal parsing into 128/256-bit two's complement (dates and times: temporal.pxi).

# libc's strtod reads the decimal point from LC_NUMERIC, which a host process may set
# (locale.setlocale(LC_ALL, "de_DE.UTF-8") makes strtod("7887.44") stop at the '.'): it runs
# under the "C" locale here, thread-locally.
cdef extern from *:
    """
    #include <locale.h>
    #include <stdio.h>
    #include <stdlib.h>
    #if defined(_WIN32)
    static void tf_c_locale_init(void) {}
    static double tf_strtod(const char* s) { return strtod(s, NULL); }
    #else
    #if defined(__APPLE__)
    #include <xlocale.h>
    #endif
    static locale_t tf_c_locale = (locale_t)0;
    static void tf_c_locale_init(void) {
        if (!tf_c_locale) tf_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    }
    static double tf_strtod(const char* s) {
        locale_t old = tf_c_locale ? uselocale(tf_c_locale) : (locale_t)0;
        double v = strtod(s, NULL);
        if (old) uselocale(old);
        return v;
    }
    #endif
    """
    void tf_c_locale_init() noexcept nogil
    double tf_strtod(const char* s) noexcept nogil


tf_c_locale_init()


cdef extern from *:
    ctypedef unsigned long long uint128 "unsigned __int128"
    int __builtin_clzll(unsigned long long) nogil


cdef double[23] POW10_F64
POW10_F64[:] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
                1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef struct IntVal:
    uint64_t mag
    int neg


cdef inline void int_from_long(int64_t lv, bint as_unsigned, IntVal* iv) noexcept nogil:
    """The integer a wire int64 stands for: its uint64 bits where the column is unsigned (TiCDC
    casts a uint64 to int64), else its sign and magnitude."""
    iv.neg = 0
    if as_unsigned:
        iv.mag = <uint64_t>lv
    elif lv < 0:
        iv.neg = 1
        iv.mag = <uint64_t>(-(lv + 1)) + 1
    else:
        iv.mag = <uint64_t>lv


cdef inline uint64_t _eight_digits_value(uint64_t w) noexcept nogil:
    """The number eight checked digits spell, the first (lowest byte) the most significant:
    neighbouring digits, then pairs, then quads are combined within ever wider lanes."""
    w -= 0x3030303030303030ULL
    w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFULL
    w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFULL
    return (w * 10000 + (w >> 32)) & 0xFFFFFFFFULL


cdef int parse_int_text(const uint8_t* p, Py_ssize_t n, IntVal* out) noexcept nogil:
    """JSON integer grammar -?(0|[1-9][0-9]*) into sign + magnitude; -1 if the text is not in the
    grammar, -2 if it is but the magnitude passes 2^64-1."""
    cdef const uint8_t* e = p + n
    cdef const uint8_t* text = p
    cdef uint64_t v = 0, d, w
    cdef int k
    out.neg = 0
    if p < e and p[0] == 45:
        out.neg = 1
        p += 1
    if p >= e:
        return -1
    if p[0] == 48 and e - p > 1:
        return -1
    if e - p <= 19:                      # 19 digits never overflow 64 bits: no check per digit
        while e - p >= 8:
            w = load_le64(p)
            if non_digit_bytes(w):
                return -1
            v = v * 100000000 + _eight_digits_value(w)
            p += 8
        if p < e and e - text >= 8:
            # the last 1-7 digits: the text's last word, its bytes before p made zeros
            k = <int>(e - p)
            w = (load_le64(e - 8) & ~(0xFFFFFFFFFFFFFFFFULL >> (8 * k))) | (0x3030303030303030ULL >> (8 * k))
            if non_digit_bytes(w):
                return -1
            v = v * POW10_U64[k] + _eight_digits_value(w)
            p = e
        while p < e:
            d = <uint64_t>(p[0] - 48)
            if d > 9:
                return -1
            v = v * 10 + d
            p += 1
    else:
        while p < e:
            if not (48 <= p[0] <= 57):
                return -1
            d = p[0] - 48
            if v > (0xFFFFFFFFFFFFFFFFULL - d) // 10:
                # too large, unless the text is no integer at all: that is said first, as the twin
                # does
                p += 1
                while p < e:
                    if not (48 <= p[0] <= 57):
                        return -1
                    p += 1
                return -2
            v = v * 10 + d
            p += 1
    out.mag = v
    if v == 0:
        out.neg = 0  # "-0" is 0
    return 0


cdef inline int64_t int_value(const IntVal* v) noexcept nogil:
    """v as an int64 (the caller checked the range).  The sign is applied in unsigned arithmetic:
    negating the int64 of 2^63 would overflow."""
    return <int64_t>(<uint64_t>0 - v.mag) if v.neg else <int64_t>v.mag


cdef inline int int_in_range(const IntVal* v, int64_t lo, uint64_t hi) noexcept nogil:
    """lo <= v <= hi with lo <= 0."""
    if v.neg:
        return lo < 0 and v.mag <= <uint64_t>(-(lo + 1)) + 1
    return v.mag <= hi


cdef char DIGIT_PAIRS[201]       # "00" "01" ... "99": two digits per division
cdef uint64_t POW10_U64[20]      # 10^0 .. 10^19


cdef void _init_digit_pairs() noexcept:
    cdef int k
    for k in range(100):
        DIGIT_PAIRS[2 * k] = <char>(48 + k // 10)
        DIGIT_PAIRS[2 * k + 1] = <char>(48 + k % 10)
    POW10_U64[0] = 1
    for k in range(1, 20):
        POW10_U64[k] = POW10_U64[k - 1] * 10


_init_digit_pairs()


cdef inline int decimal_digit_count(uint64_t m) noexcept nogil:
    """How many decimal digits m has (1 for 0): from its bit length, one table look-up, no loop."""
    cdef int t = ((64 - __builtin_clzll(m | 1)) * 1233) >> 12     # 1233 / 4096 ~ log10(2)
    return t + 1 - <int>(m < POW10_U64[t]) if m else 1


cdef inline uint64_t _eight_digits(uint64_t v) noexcept nogil:
    """v < 10^8 as eight ASCII digits in a little-endian word, the first digit in its lowest byte:
    the halves, quarters and single digits are split in parallel lanes of one word (each quotient
    by a multiply and a shift, exact for these ranges), no division chain."""
    cdef uint64_t hi = (v * 109951163ULL) >> 40                     # v // 10^4
    cdef uint64_t x = hi | ((v - hi * 10000) << 32)
    hi = ((x * 10486) >> 20) & 0x0000007F0000007FULL                # each lane // 100
    x = hi | ((x - hi * 100) << 16)
    hi = ((x * 103) >> 10) & 0x000F000F000F000FULL                  # each lane // 10
    x = hi | ((x - hi * 10) << 8)
    return x + 0x3030303030303030ULL


cdef inline void write_digits_roomy(uint64_t m, int nd, char* out) noexcept nogil:
    """write_digits for an `out` with room for max(nd, 8) bytes: each word of digits is stored
    whole (shifted so its first wanted digit lands at its place; the next store overwrites what
    a store wrote past its digits), with no copy of a variable length."""
    cdef uint64_t w, rest
    cdef int lead
    if nd <= 8:
        w = _eight_digits(m) >> (8 * (8 - nd))
        memcpy(out, &w, 8)
        return
    if nd <= 16:
        rest = m // 100000000ULL
        lead = nd - 8
        w = _eight_digits(rest) >> (8 * (8 - lead))
        memcpy(out, &w, 8)
    else:
        rest = m // 10000000000000000ULL
        lead = nd - 16
        w = _eight_digits(rest) >> (8 * (8 - lead))
        memcpy(out, &w, 8)
        m -= rest * 10000000000000000ULL
        rest = m // 100000000ULL
        w = _eight_digits(rest)
        memcpy(out + lead, &w, 8)
        lead += 8
    w = _eight_digits(m - rest * 100000000ULL)
    memcpy(out + lead, &w, 8)


cdef inline void write_digits(uint64_t m, int nd, char* out) noexcept nogil:
    """The nd decimal digits of m (nd = decimal_digit_count(m)) into out, exactly nd bytes
    written (write_digits_roomy into a word-sized buffer, then copied)."""
    cdef char tmp[24]
    write_digits_roomy(m, nd, tmp)
    memcpy(out, tmp, nd)


cdef inline uint64_t strip_trailing_zeros(uint64_t m, int* e10) noexcept nogil:
    """m (non-zero) without its trailing decimal zeros, e10 raised by their count: eight, four,
    two and one at a time (at most 19 zeros: 8 + 8 + 2 + 1), not a division per zero."""
    if m == 0:
        return m
    while m % 100000000ULL == 0:
        m //= 100000000ULL
        e10[0] += 8
    if m % 10000 == 0:
        m //= 10000
        e10[0] += 4
    if m % 100 == 0:
        m //= 100
        e10[0] += 2
    if m % 10 == 0:
        m //= 10
        e10[0] += 1
    return m


cdef int int_to_text(const IntVal* v, char* out) noexcept nogil:
    """Decimal text of v into out (>= 22 bytes); returns its length."""
    cdef int k = 0, nd = decimal_digit_count(v.mag)
    if v.neg and v.mag:
        out[0] = 45
        k = 1
    write_digits_roomy(v.mag, nd, out + k)      # out: 22 bytes, at most 21 written
    return k + nd


def _parse_int_texts(texts):
    """Test hook: parse_int_text over byte strings, as (return code, negative, magnitude)."""
    cdef bytes t
    cdef IntVal v
    cdef int rc
    got = []
    for t in texts:
        v.mag = 0
        v.neg = 0
        rc = parse_int_text(<const uint8_t*>t, len(t), &v)
        got.append((rc, bool(v.neg), v.mag) if rc == 0 else (rc, None, None))
    return got


def _int_text(uint64_t magnitude, bint negative):
    """Test hook: int_to_text of a sign and a magnitude, as bytes."""
    cdef IntVal v
    cdef char out[24]
    v.mag = magnitude
    v.neg = negative
    return out[:int_to_text(&v, out)]


# ---- floats
cdef int json_number_syntax(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef Cur c
    cdef Span s
    cdef Err e
    c.start = p
    c.pos = p
    c.end = p + n
    if n == 0 or scan_number(&c, &s, &e) < 0 or c.pos != c.end:
        return -1
    return 0


cdef inline const uint8_t* _digit_run(const uint8_t* p, const uint8_t* e, const uint8_t* text,
                                       uint64_t* m, int* too_many) noexcept nogil:
    """Add the digits at p (up to e; the number's text starts at `text`) to m, m x 10 + digit
    each; returns where they end.  A word at a time while m has room for eight more digits: the
    word's first non-digit byte is found with a count of trailing zeros and the digits before it
    are read as one padded word (full-precision doubles carry 16-17 digits: byte by byte they
    were 4 % of a generic decode).  A run at the end of the text reads the text's last word,
    shifted, never past e.  *too_many when a 20th significant digit came."""
    cdef uint64_t w, x, d
    cdef int k
    while m[0] < 100000000000ULL:                      # m x 10^8 + 8 digits stays below 10^19
        if e - p >= 8:
            w = load_le64(p)
        elif e - text >= 8:
            if p >= e:
                return p
            w = load_le64(e - 8) >> (8 * (8 - (e - p)))
        else:
            break
        x = non_digit_bytes(w)
        if x == 0:
            m[0] = m[0] * 100000000ULL + _eight_digits_value(w)
            p += 8
            continue
        k = __builtin_ctzll(x) >> 3
        if k:
            m[0] = m[0] * POW10_U64[k] + _eight_digits_value(
                (w << (64 - 8 * k)) | (0x3030303030303030ULL >> (8 * k)))
            p += k
        return p
    while p < e:
        d = <uint64_t>(p[0] - 48)
        if d > 9:
            return p
        if m[0] >= 1000000000000000000ULL:             # 19 significant digits already
            too_many[0] = 1
            return p
        m[0] = m[0] * 10 + d
        p += 1
    return p


cdef int _decimal_parts(const uint8_t* p, Py_ssize_t n, uint64_t* mant, int* exp10, int* neg) noexcept nogil:
    """A JSON-number text as mantissa x 10^exp10 with at most 19 significant digits: 1 when the
    text is a positional fraction (a '.', no exponent), else 0; -1 when it has more digits (or an
    exponent beyond four digits): those go to strtod."""
    cdef const uint8_t* e = p + n
    cdef const uint8_t* text = p
    cdef const uint8_t* q
    cdef uint64_t m = 0
    cdef int frac = 0, ex = 0, exneg = 0, exd = 0, too_many = 0
    cdef bint exponent = 0
    neg[0] = 0
    if p < e and p[0] == 45:
        neg[0] = 1
        p += 1
    p = _digit_run(p, e, text, &m, &too_many)
    if too_many:
        return -1
    if p < e and p[0] == 46:
        q = p + 1
        p = _digit_run(q, e, text, &m, &too_many)
        if too_many:
            return -1
        frac = <int>(p - q)
    if p < e and (p[0] == 101 or p[0] == 69):
        exponent = 1
        p += 1
        if p < e and (p[0] == 43 or p[0] == 45):
            exneg = p[0] == 45
            p += 1
        while p < e and 48 <= p[0] <= 57:
            if exd == 4:
                return -1
            ex = ex * 10 + (p[0] - 48)
            exd += 1
            p += 1
    if p != e:
        return -1
    mant[0] = m
    exp10[0] = (-ex if exneg else ex) - frac
    return 1 if frac > 0 and not exponent else 0


# ---- decimal to double for up to 19 significant digits (the Eisel-Lemire method: D. Lemire,
# "Number Parsing at a Gigabyte per Second", 2021; N. Mushtak and D. Lemire, "Fast Number Parsing
# Without Fallback", 2023).  w x 10^q is w x 5^q x 2^q: one 64x128-bit product of the normalised
# w with a 128-bit significand of 5^q gives the top bits of the result, and 2^q only moves the
# exponent.  Full-precision doubles (16-17 digits) otherwise went to strtod at ~150 ns each.
cdef enum:
    POW5_Q_MIN = -342               # below: zero for any 19-digit mantissa
    POW5_Q_MAX = 308                # above: infinite

# 5^q scaled into [2^127, 2^128): truncated for q >= 0 (exact up to q = 55); for q < 0 the
# quotient 2^b / 5^-q rounded down plus one, with b chosen as the method's proof requires.
cdef uint64_t POW5_HI[POW5_Q_MAX - POW5_Q_MIN + 1]
cdef uint64_t POW5_LO[POW5_Q_MAX - POW5_Q_MIN + 1]


def _pow5_significands():
    out = []
    for q in range(POW5_Q_MIN, POW5_Q_MAX + 1):
        if q >= 0:
            v = 5 ** q
            v = v << (128 - v.bit_length()) if v.bit_length() < 128 else v >> (v.bit_length() - 128)
        else:
            d = 5 ** -q
            z = d.bit_length()                  # the smallest z with 2^z >= 5^-q (never equal)
            v = (1 << (z + 127 if q >= -27 else 2 * z + 128)) // d + 1
            if v.bit_length() > 128:
                v >>= v.bit_length() - 128
        out.append(v)
    return out


for _i, _v in enumerate(_pow5_significands()):
    POW5_HI[_i] = _v >> 64
    POW5_LO[_i] = _v & 0xFFFFFFFFFFFFFFFF


cdef int _eisel_lemire(uint64_t w, int q, int neg, double* out) noexcept nogil:
    """w x 10^q (w != 0) correctly rounded; -1 where it would need the slow path: out of range,
    a subnormal or infinite result, or a product too close to a halfway point to decide."""
    cdef int lz, upper, shift
    cdef int64_t power2
    cdef uint64_t hi, lo, mant, bits
    cdef uint128 prod
    if q < POW5_Q_MIN or q > POW5_Q_MAX:
        return -1
    lz = __builtin_clzll(w)
    w <<= lz
    prod = <uint128>w * POW5_HI[q - POW5_Q_MIN]
    hi = <uint64_t>(prod >> 64)
    lo = <uint64_t>prod
    if (hi & 0x1FF) == 0x1FF:
        # the low 9 bits decide the rounding: add the product with the lower 64 bits of 5^q
        prod = <uint128>w * POW5_LO[q - POW5_Q_MIN]
        lo += <uint64_t>(prod >> 64)
        if lo < <uint64_t>(prod >> 64):
            hi += 1
        if (hi & 0x1FF) == 0x1FF and lo == 0xFFFFFFFFFFFFFFFFULL:
            return -1
    if lo <= 1:
        return -1                   # possibly an exact halfway: strtod rounds it to even
    upper = <int>(hi >> 63)
    shift = upper + 9
    mant = hi >> shift
    power2 = ((<int64_t>217706 * q) >> 16) + 63 + upper - lz + 1023
    if power2 <= 0:
        return -1
    mant += mant & 1
    mant >>= 1
    if mant >= (<uint64_t>2 << 52):
        mant = <uint64_t>1 << 52
        power2 += 1
    mant &= ~(<uint64_t>1 << 52)
    if power2 >= 0x7FF:
        return -1
    bits = mant | (<uint64_t>power2 << 52)
    if neg:
        bits |= <uint64_t>1 << 63
    memcpy(out, &bits, 8)
    return 0


cdef int _fast_double(const uint8_t* p, Py_ssize_t n, double* out) noexcept nogil:
    """Clinger's exact case (a mantissa below 2^53 scaled by 10^k, |k| <= 22: one correctly
    rounded multiplication or division), else Eisel-Lemire.  -1: strtod decides."""
    cdef uint64_t m
    cdef int k, neg
    if _decimal_parts(p, n, &m, &k, &neg) < 0:
        return -1
    return _double_of_parts(m, k, neg, out)


cdef inline int _double_of_parts(uint64_t m, int k, int neg, double* out) noexcept nogil:
    """(-1)^neg x m x 10^k correctly rounded (see _fast_double); -1: strtod decides."""
    if m == 0:
        out[0] = -0.0 if neg else 0.0
        return 0
    if m <= 9007199254740992ULL and -22 <= k <= 22:
        out[0] = <double>m * POW10_F64[k] if k >= 0 else <double>m / POW10_F64[-k]
        if neg:
            out[0] = -out[0]
        return 0
    return _eisel_lemire(m, k, neg, out)


cdef int parse_double(const uint8_t* p, Py_ssize_t n, double* out, Buf* scratch) noexcept nogil:
    """A JSON-number text (syntax checked by the caller) as the nearest double; -1 if infinite,
    RC_NO_MEMORY if a long text found no room in `scratch`."""
    cdef char local[64]
    cdef char* s = local
    if _fast_double(p, n, out) == 0:
        return 0
    if n >= 63:
        scratch.len = 0
        if buf_reserve(scratch, n + 1) < 0:
            return RC_NO_MEMORY
        s = <char*>scratch.data
    memcpy(s, p, n)
    s[n] = 0
    out[0] = tf_strtod(s)
    if isinf(out[0]) or isnan(out[0]):
        return -1
    return 0


def _parse_doubles(texts):
    """parse_double over a list of JSON-number texts, and whether each took the fast path
    (for the tests: every result must equal Python's float())."""
    cdef bytes t
    cdef double v
    cdef int rc
    cdef Buf scratch
    memset(&scratch, 0, sizeof(Buf))
    out = []
    for t in texts:
        fast = _fast_double(<const uint8_t*>t, len(t), &v) == 0
        rc = parse_double(<const uint8_t*>t, len(t), &v, &scratch)
        if rc == RC_NO_MEMORY:
            buf_free(&scratch)
            no_memory("a number text")
        if rc < 0:
            out.append((None, fast))
        else:
            out.append((v, fast))
    buf_free(&scratch)
    return out


cdef inline int to_float32(double x, float* out) noexcept nogil:
    cdef float f = <float>x
    if isinf(f):
        return -1
    out[0] = f
    return 0


cdef inline void _copy_digits(char* out, const char* digits) noexcept nogil:
    """The (at most 17) shortest digits at `digits` into `out` as one fixed 24-byte copy (no
    call for a variable length): the digit buffers hold DIGIT_ROOM readable bytes and every
    output of the formatters below has 24 bytes of room past any digit run; what is copied
    past the digits is overwritten or lies beyond the returned length."""
    memcpy(out, digits, 24)


cdef enum:
    DIGIT_ROOM = 48           # digit buffers: 17 digits + a copy of 24 from any of them


cdef int go_format_digits(const char* digits, int nd, int exp10, int negative, char* out) noexcept nogil:
    """value = 0.<digits> x 10^exp10 (digits without leading/trailing zeros) as Go's
    encoding/json writes it: plain unless the magnitude is < 1e-6 or >= 1e21."""
    cdef int k = 0, sci = exp10 - 1, a
    if negative:
        out[k] = 45
        k += 1
    if sci < -6 or sci >= 21:
        out[k] = digits[0]
        k += 1
        if nd > 1:
            out[k] = 46
            k += 1
            _copy_digits(out + k, digits + 1)
            k += nd - 1
        out[k] = 101
        k += 1
        out[k] = 45 if sci < 0 else 43
        k += 1
        a = -sci if sci < 0 else sci
        if a >= 100:
            out[k] = <char>(48 + a // 100)
            k += 1
        if a >= 10:
            out[k] = <char>(48 + (a // 10) % 10)
            k += 1
        out[k] = <char>(48 + a % 10)
        return k + 1
    return k + plain_format_digits(digits, nd, exp10, 0, out + k)


cdef int plain_format_digits(const char* digits, int nd, int exp10, int negative, char* out) noexcept nogil:
    """Go strconv.FormatFloat(x, 'f', -1, bits): the shortest digits, never an exponent."""
    cdef int k = 0, i
    if negative:
        out[k] = 45
        k += 1
    if exp10 <= 0:
        out[k] = 48
        out[k + 1] = 46
        k += 2
        for i in range(-exp10):
            out[k] = 48
            k += 1
        _copy_digits(out + k, digits)
        return k + nd
    if exp10 >= nd:
        _copy_digits(out + k, digits)
        k += nd
        for i in range(exp10 - nd):
            out[k] = 48
            k += 1
        return k
    _copy_digits(out + k, digits)
    k += exp10
    out[k] = 46
    k += 1
    _copy_digits(out + k, digits + exp10)
    return k + nd - exp10


# ---- shortest round-trip digits (Schubfach, after R. Giulietti, "The Schubfach way to render
# doubles", 2020).  The rounding interval of x = c * 2^q is scaled by 10^-k, where 10^k is the
# largest power of ten not above the interval's width, so the interval holds at most one multiple
# of 10^(k+1) and at least one of 10^k; the scaled ends come from one 64x128-bit product each,
# rounded to odd so the comparisons below stay exact.  No printf, no strtod, no loop over lengths.
cdef enum:
    POW10_G_MIN = -300              # 10^e for e in [POW10_G_MIN, POW10_G_MAX]: covers every
    POW10_G_MAX = 330               # -k a float32 or float64 can ask for
    BIN_EXP_MIN = -1100             # binary exponents q of float32/float64 values
    BIN_EXP_MAX = 1000

# 10^e as a 128-bit significand g in [2^127, 2^128), rounded down then plus one (an upper bound
# that never equals a product of powers of two), and floor(log2(10^e)); the float32 path uses
# the top 64 bits likewise.  Exact integer arithmetic at import: Python ints, no floating point.
cdef uint64_t G128_HI[POW10_G_MAX - POW10_G_MIN + 1]
cdef uint64_t G128_LO[POW10_G_MAX - POW10_G_MIN + 1]
cdef uint64_t G64[POW10_G_MAX - POW10_G_MIN + 1]
cdef int16_t FLOOR_LOG2_POW10[POW10_G_MAX - POW10_G_MIN + 1]
# floor(log10(2^q)) and floor(log10(3/4 * 2^q)) (the width when the interval below x is the
# narrower half, at a power of two)
cdef int16_t FLOOR_LOG10_POW2[BIN_EXP_MAX - BIN_EXP_MIN + 1]
cdef int16_t FLOOR_LOG10_POW2_3_4[BIN_EXP_MAX - BIN_EXP_MIN + 1]


def _floor_log10_of_fraction(num, den):
    """floor(log10(num/den)) for positive ints."""
    e = len(str(num)) - len(str(den))
    if e >= 0:
        return e if num >= den * 10 ** e else e - 1
    return e if num * 10 ** -e >= den else e - 1


cdef void _init_shortest_tables() except *:
    cdef int i
    mask64 = (1 << 64) - 1
    for i in range(POW10_G_MAX - POW10_G_MIN + 1):
        e = i + POW10_G_MIN
        if e >= 0:
            p = 10 ** e
            fl = p.bit_length() - 1
            g = (p << (127 - fl)) if fl <= 127 else (p >> (fl - 127))
            g64 = (p << (63 - fl)) if fl <= 63 else (p >> (fl - 63))
        else:
            d = 10 ** -e
            fl = -d.bit_length()        # d is never a power of two, so 2^-bl < 1/d < 2^(1-bl)
            g = (1 << (127 - fl)) // d
            g64 = (1 << (63 - fl)) // d
        g += 1
        g64 += 1
        G128_HI[i] = g >> 64
        G128_LO[i] = g & mask64
        G64[i] = g64
        FLOOR_LOG2_POW10[i] = fl
    for i in range(BIN_EXP_MAX - BIN_EXP_MIN + 1):
        q = i + BIN_EXP_MIN
        FLOOR_LOG10_POW2[i] = _floor_log10_of_fraction(1 << max(q, 0), 1 << max(-q, 0))
        FLOOR_LOG10_POW2_3_4[i] = _floor_log10_of_fraction(3 << max(q, 0), 4 << max(-q, 0))

_init_shortest_tables()


cdef inline uint64_t _round_to_odd_128(uint64_t g_hi, uint64_t g_lo, uint64_t cp) noexcept nogil:
    """floor(g * cp / 2^128), its lowest bit set when the dropped part is not (nearly) zero."""
    cdef uint128 lo = <uint128>g_lo * cp
    cdef uint128 mid = <uint128>g_hi * cp + (lo >> 64)
    return <uint64_t>(mid >> 64) | (<uint64_t>mid > 1)


cdef inline uint64_t _round_to_odd_64(uint64_t g, uint64_t cp) noexcept nogil:
    cdef uint128 p = <uint128>g * cp
    return <uint64_t>(p >> 64) | (<uint32_t>(p >> 32) > 1)


cdef int _shortest_decimal(double x, int bits, uint64_t* digits_out, int* exp_out) noexcept nogil:
    """x (finite, non-zero; a float32 value when bits == 32) = digits * 10^exp, the digits the
    fewest that read back as x at this width and, among those, the closest (ties to even)."""
    cdef uint64_t u, c, cb, cbl, cbr, vb, vbl, vbr, lower, upper, s, sp, mid, g_hi, g_lo
    cdef int q, k, h, gi, is_even, lower_closer, up_inside, wp_inside, u_inside, w_inside, round_up
    cdef uint32_t u32
    cdef float f
    cdef int mb, emask, bias
    # the IEEE fields of either width: mb mantissa bits, then the exponent (emask) biased by bias
    if bits == 32:
        f = <float>x
        memcpy(&u32, &f, 4)
        u = u32
        mb, emask, bias = 23, 0xFF, 150
    else:
        memcpy(&u, &x, 8)
        mb, emask, bias = 52, 0x7FF, 1075
    c = u & ((<uint64_t>1 << mb) - 1)
    q = <int>((u >> mb) & emask)
    if q == 0:                              # subnormal
        q = 1 - bias
        lower_closer = 0
    else:
        lower_closer = c == 0 and q > 1
        c |= <uint64_t>1 << mb
        q -= bias
    is_even = (c & 1) == 0
    cb = c << 2
    cbr = cb + 2
    cbl = cb - 2 + <uint64_t>lower_closer      # the interval below a power of two is half as wide
    k = FLOOR_LOG10_POW2_3_4[q - BIN_EXP_MIN] if lower_closer else FLOOR_LOG10_POW2[q - BIN_EXP_MIN]
    gi = -k - POW10_G_MIN
    h = q + FLOOR_LOG2_POW10[gi] + 1            # 1..4: keeps the products within 64 bits
    if bits == 32:
        vbl = _round_to_odd_64(G64[gi], cbl << h)
        vb = _round_to_odd_64(G64[gi], cb << h)
        vbr = _round_to_odd_64(G64[gi], cbr << h)
    else:
        g_hi = G128_HI[gi]
        g_lo = G128_LO[gi]
        vbl = _round_to_odd_128(g_hi, g_lo, cbl << h)
        vb = _round_to_odd_128(g_hi, g_lo, cb << h)
        vbr = _round_to_odd_128(g_hi, g_lo, cbr << h)
    # an end of the interval reads back as x only when c is even (round half to even)
    lower = vbl + <uint64_t>(not is_even)
    upper = vbr - <uint64_t>(not is_even)
    s = vb >> 2
    if s >= 10:
        # one digit fewer: the single multiple of 10^(k+1) the interval can hold, if it holds one
        sp = s // 10
        up_inside = lower <= 40 * sp
        wp_inside = 40 * sp + 40 <= upper
        if up_inside != wp_inside:
            digits_out[0] = sp + <uint64_t>wp_inside
            exp_out[0] = k + 1
            return 0
    u_inside = lower <= 4 * s
    w_inside = 4 * s + 4 <= upper
    if u_inside != w_inside:
        digits_out[0] = s + <uint64_t>w_inside
        exp_out[0] = k
        return 0
    mid = 4 * s + 2
    round_up = vb > mid or (vb == mid and (s & 1) != 0)
    digits_out[0] = s + <uint64_t>round_up
    exp_out[0] = k
    return 0


cdef inline int _stripped_decimal_text(uint64_t m, int nd, int e10, int negative, int plain,
                                       char* out) noexcept nogil:
    """(-1)^negative x 0.<the nd digits of m> x 10^e10 (m without trailing zeros) in the plain
    or the Go form; returns the length."""
    cdef char digits[DIGIT_ROOM]
    write_digits_roomy(m, nd, digits)          # digits: 24 bytes
    if plain:
        return plain_format_digits(digits, nd, e10, negative, out)
    return go_format_digits(digits, nd, e10, negative, out)


cdef int decimal_text(uint64_t m, int e, int negative, int plain, char* out) noexcept nogil:
    """(-1)^negative x m x 10^e (m != 0, as the digit search gives it) in the plain or the Go
    form, its trailing zeros dropped; returns the length."""
    cdef int nd
    m = strip_trailing_zeros(m, &e)
    nd = decimal_digit_count(m)
    return _stripped_decimal_text(m, nd, e + nd, negative, plain, out)


cdef enum:
    NOT_FLOAT32 = -3          # format_shortest: finite as a double, beyond float32's range


cdef inline bint _plain_fraction_text(const uint8_t* p, Py_ssize_t n, int shape) noexcept nogil:
    """Whether a JSON-number text (syntax already checked) is written the way the plain and
    Go forms write a value with a fraction: a '.', no exponent (`shape`, what _decimal_parts
    returned for it, is 1), no trailing zero, at most 40 bytes (the grammar already rules out
    leading zeros)."""
    return shape == 1 and 3 <= n <= 40 and p[n - 1] != 48


cdef int format_shortest(const uint8_t* text, Py_ssize_t n, int bits,
                         double* value, char* out, Buf* scratch, int plain=0) noexcept nogil:
    """Canonical text of a JSON number in a FLOAT/DOUBLE column; -1 if not finite as a double,
    NOT_FLOAT32 if it is but bits == 32 and it is not finite as a float32, RC_NO_MEMORY (see
    parse_double).  Also leaves the parsed value (rounded to the width) in *value."""
    cdef int nd, e10, negative, rc, k
    cdef float f
    cdef double x
    cdef uint64_t m, sd
    cdef int se
    # One reading of the text gives both the value and its digits: a text of at most 15
    # significant digits (6 for a float32) is the shortest form of its value, any other goes to
    # the shortest-digit search.
    cdef int shape = _decimal_parts(text, n, &m, &k, &negative)
    cdef bint parts = shape >= 0 and _double_of_parts(m, k, negative, &x) == 0
    if not parts:
        rc = parse_double(text, n, &x, scratch)
        if rc < 0:
            return rc
    if bits == 32:
        if to_float32(x, &f) < 0:
            return NOT_FLOAT32
        x = <double>f
    value[0] = x
    if not parts or x == 0:
        return float_text(x, bits, plain, out)
    m = strip_trailing_zeros(m, &k)
    nd = decimal_digit_count(m)
    e10 = k + nd
    if nd > (15 if bits == 64 else 6) or not (
            (-306 <= e10 - 1 <= 307) if bits == 64 else (-37 <= e10 - 1 <= 37)):
        if not _plain_fraction_text(text, n, shape) or not (plain or -6 <= e10 - 1 < 21):
            return float_text(x, bits, plain, out)
        # A full-precision value as writers print it (Go, repr): when the digit search finds the
        # text's own digits, the text is already the answer, so its digits are not rebuilt
        _shortest_decimal(x, bits, &sd, &se)
        if sd == m and se == k:
            memcpy(out, text, n)
            return <int>n
        return decimal_text(sd, se, negative, plain, out)
    return _stripped_decimal_text(m, nd, e10, negative, plain, out)


cdef int float_text(double x, int bits, int plain, char* out) noexcept nogil:
    """The shortest text that reads back as x (finite; a float32 value when bits == 32), in Go's
    strconv form (an exponent for very large or small values) or plain (never an exponent), a
    negative zero as "-0"; returns its length (at most 400 bytes)."""
    cdef uint64_t m
    cdef int e10
    if x == 0:
        if signbit(x):
            out[0] = 45
            out[1] = 48
            return 2
        out[0] = 48
        return 1
    _shortest_decimal(x, bits, &m, &e10)
    return decimal_text(m, e10, x < 0, plain, out)


def _format_floats(const uint8_t[::1] data, int bits, bint plain=False):
    """Test and benchmark hook: the little-endian float64 values in ``data`` (rounded to float32
    when bits == 32) as the core's float text, one per line; the twin is
    ticdc_fast.values.format_float (plain: format_float_plain)."""
    cdef Py_ssize_t n = data.shape[0] // 8, i, k = 0, cap = n * 26 + 400
    cdef bint out_of_memory = False
    cdef double x
    cdef char* o
    cdef char* grown
    if bits != 32 and bits != 64:
        raise ValueError("bits must be 32 or 64")
    for i in range(n):
        memcpy(&x, &data[0] + 8 * i, 8)
        if isnan(x) or isinf(x) or (bits == 32 and isinf(<float>x)):
            raise ValueError(f"value {i} is not finite")
    o = <char*>malloc(cap)
    if o == NULL:
        no_memory("the float text buffer")
    try:
        with nogil:
            for i in range(n):
                if cap - k < 400:      # a plain float64 takes up to 1 + 2 + 323 + 17 bytes
                    grown = <char*>realloc(o, cap * 2)
                    if grown == NULL:
                        out_of_memory = True
                        break
                    o = grown
                    cap *= 2
                memcpy(&x, &data[0] + 8 * i, 8)
                if bits == 32:
                    x = <double><float>x
                k += float_text(x, bits, plain, o + k)
                o[k] = 10
                k += 1
        if out_of_memory:
            no_memory("the float text buffer")
        return o[:k]
    finally:
        free(o)

def _format_number_texts(texts, int bits, bint plain=False):
    """Test hook: format_shortest over JSON-number texts (a FLOAT/DOUBLE column's generic text;
    None where the value is not finite at this width); the twin is
    ticdc_fast.values.float_text(parse_float_text(text, bits), bits, plain)."""
    cdef bytes t
    cdef char out[400]
    cdef double x
    cdef int n
    cdef Buf scratch
    if bits != 32 and bits != 64:
        raise ValueError("bits must be 32 or 64")
    memset(&scratch, 0, sizeof(Buf))
    got = []
    try:
        for t in texts:
            n = format_shortest(<const uint8_t*>t, len(t), bits, &x, out, &scratch, plain)
            if n == RC_NO_MEMORY:
                no_memory("a number text")
            got.append(None if n < 0 else out[:n].decode())
    finally:
        buf_free(&scratch)
    return got


# ---- decimals

cdef int _small_decimal_text(uint64_t mag, int neg, int scale, Buf* out_buf) noexcept nogil:
    """decimal_bytes_text of a magnitude that fits 64 bits at a scale of at most 19: the integer
    part's digits and the fraction's (zero-padded to the scale) written in place, word stores
    (write_digits_roomy), no copy of a variable length."""
    cdef uint64_t ip = mag // POW10_U64[scale]
    cdef int nd = decimal_digit_count(ip), k = 0
    cdef char* out
    if buf_reserve(out_buf, 64) < 0:         # sign, 20 + 19 digits, '.', a word's spill
        return RC_NO_MEMORY
    out = <char*>(out_buf.data + out_buf.len)
    if neg:
        out[0] = 45
        k = 1
    write_digits_roomy(ip, nd, out + k)
    k += nd
    if scale > 0:
        out[k] = 46
        write_digits_roomy(mag - ip * POW10_U64[scale], scale, out + k + 1)
        k += 1 + scale
    out_buf.len += k
    return 0


cdef int decimal_bytes_text(const uint8_t* p, Py_ssize_t n, int scale, Buf* out_buf,
                            const char** why) noexcept nogil:
    """Minimal two's-complement big-endian unscaled bytes (an Avro decimal) as MyDecimal-style
    text appended to out_buf: 0, RC_FAILED with the fault in `why`, or RC_NO_MEMORY."""
    cdef uint32_t limbs[24]
    cdef int nl, k, neg, i, nd, cnt, pad, int_len
    cdef uint64_t cur, mag
    cdef char digs[240]          # the digits, most significant first, ending at digs[240]
    cdef int at = 240
    cdef char* out
    if n == 0:
        why[0] = "empty decimal bytes"
        return RC_FAILED
    if n > 90:
        why[0] = "decimal wider than 720 bits"
        return RC_FAILED
    neg = p[0] >= 0x80
    if n <= 8:
        # up to 8 bytes (DECIMAL(18) and narrower): one 64-bit magnitude, no long division
        mag = 0
        for k in range(<int>n):
            mag = (mag << 8) | p[k]
        if neg:
            if n < 8:
                mag |= ~<uint64_t>0 << (8 * n)
            mag = ~mag + 1
        if 0 <= scale <= 19:
            return _small_decimal_text(mag, neg, scale, out_buf)
        cnt = decimal_digit_count(mag)
        at -= cnt
        write_digits(mag, cnt, digs + at)
    else:
        nl = <int>((n + 3) // 4)
        memset(limbs, 0, sizeof(limbs))
        for k in range(<int>n):             # little-endian 32-bit limbs
            limbs[k // 4] |= (<uint32_t>p[n - 1 - k]) << (8 * (k % 4))
        if neg:
            for k in range(nl):
                limbs[k] = ~limbs[k]
            if n % 4:
                limbs[nl - 1] &= (1u << (8 * (n % 4))) - 1
            k = 0
            while k < nl:                    # + 1
                limbs[k] += 1
                if limbs[k] != 0:
                    break
                k += 1
        # repeated division by 10^9 → 9-digit groups, least significant first, each written
        # in place from the end
        while True:
            i = nl - 1
            while i >= 0 and limbs[i] == 0:
                i -= 1
            if i < 0:
                break
            cur = 0
            while i >= 0:
                cur = (cur << 32) | limbs[i]
                limbs[i] = <uint32_t>(cur // 1000000000ULL)
                cur = cur % 1000000000ULL
                i -= 1
            at -= 9
            memset(digs + at, 48, 9)
            cnt = decimal_digit_count(cur)
            write_digits(cur, cnt, digs + at + 9 - cnt)
        while at < 239 and digs[at] == 48:
            at += 1
        if at == 240:
            at -= 1
            digs[at] = 48
    nd = 240 - at
    pad = scale + 1 - nd if scale + 1 > nd else 0
    if buf_reserve(out_buf, nd + pad + 3) < 0:
        return RC_NO_MEMORY
    out = <char*>(out_buf.data + out_buf.len)
    k = 0
    if neg:
        out[k] = 45
        k += 1
    if pad:                              # |value| < 1: "0." and zeros before the digits
        out[k] = 48
        out[k + 1] = 46
        k += 2
        memset(out + k, 48, pad - 1)
        k += pad - 1
        memcpy(out + k, digs + at, nd)
        k += nd
    else:
        int_len = nd - scale
        memcpy(out + k, digs + at, int_len)
        k += int_len
        if scale > 0:
            out[k] = 46
            k += 1
            memcpy(out + k, digs + at + int_len, scale)
            k += scale
    out_buf.len += k
    return 0


def _decimal_bytes_text(const uint8_t[::1] data, int scale):
    """Test hook: decimal_bytes_text of Avro decimal bytes, as str (or the refusal's reason)."""
    cdef Buf out
    cdef const char* why = NULL
    cdef int rc
    memset(&out, 0, sizeof(Buf))
    rc = decimal_bytes_text(&data[0] if data.shape[0] else NULL, data.shape[0], scale, &out, &why)
    try:
        if rc == RC_NO_MEMORY:
            no_memory("the decimal text")
        if rc < 0:
            return why.decode()
        return out.data[:out.len].decode()
    finally:
        buf_free(&out)


def _decimal_parse(bytes text, int precision, int scale, int limbs):
    """Test hook: decimal_parse of MyDecimal text as the signed unscaled int its 2 or 4 limbs
    hold (or the refusal's reason, a str)."""
    cdef uint64_t out[4]
    cdef const char* why = NULL
    cdef int k
    if limbs != 2 and limbs != 4:
        raise ValueError("limbs is 2 or 4")
    if decimal_parse(<const uint8_t*><const char*>text, len(text), precision, scale, limbs, out, &why) < 0:
        return why.decode()
    return int.from_bytes(b"".join([(<object>out[k]).to_bytes(8, "little") for k in range(limbs)]), "little",
                          signed=True)


cdef uint128 POW10_128[39]


cdef void _init_pow10() noexcept:
    cdef int i
    POW10_128[0] = 1
    for i in range(1, 39):
        POW10_128[i] = POW10_128[i - 1] * 10


_init_pow10()


cdef int twos_to_decimal128(const uint8_t* p, Py_ssize_t n, int precision, uint64_t* out) noexcept nogil:
    """Big-endian two's complement unscaled bytes (1..16) → two little-endian limbs, when the
    value has at most `precision` digits; -1 otherwise (the caller takes the text path, which
    words the error)."""
    cdef uint128 u, mag
    cdef Py_ssize_t i
    cdef int neg
    if n < 1 or n > 16 or precision < 1 or precision > 38:
        return -1
    neg = p[0] >= 0x80
    u = ~(<uint128>0) if neg else 0
    for i in range(n):
        u = (u << 8) | p[i]
    mag = (~u + 1) if neg else u
    if mag >= POW10_128[precision]:
        return -1
    out[0] = <uint64_t>u
    out[1] = <uint64_t>(u >> 64)
    return 0


cdef int decimal_parse(const uint8_t* p, Py_ssize_t n, int precision, int scale, int limbs,
                       uint64_t* out, const char** why) noexcept nogil:
    """MyDecimal text → unscaled two's complement little-endian limbs (2 or 4), exactly."""
    cdef const uint8_t* e = p + n
    cdef int neg = 0, int_digits = 0, frac_digits = 0, i, k, sig = 0, used
    cdef const uint8_t* ip
    cdef const uint8_t* fp = NULL
    cdef uint64_t carry, lo, hi, acc
    cdef uint128 t
    if p < e and p[0] == 45:
        neg = 1
        p += 1
    ip = p
    p = _skip_digits(p, e)
    int_digits = p - ip
    if p < e and p[0] == 46:
        fp = p + 1
        p = _skip_digits(fp, e)
        frac_digits = p - fp
    # digits before the point, digits after a point, and nothing else
    if int_digits == 0 or (fp != NULL and frac_digits == 0) or p != e:
        why[0] = "invalid decimal"
        return -1
    if frac_digits > scale:
        for i in range(scale, frac_digits):
            if fp[i] != 48:
                why[0] = "decimal does not fit the target scale exactly"
                return -1
    for k in range(limbs):
        out[k] = 0
    if int_digits + scale <= 19:
        # the unscaled value is below 10^19 < 2^64 (DECIMAL(12,2), DECIMAL(18,4)...): one word,
        # no limb arithmetic per digit; same value and refusals as the loop below
        used = frac_digits if frac_digits < scale else scale
        acc = 0
        for i in range(int_digits):
            acc = acc * 10 + (ip[i] - 48)
        for i in range(used):
            acc = acc * 10 + (fp[i] - 48)
        acc *= POW10_U64[scale - used]
        if acc and decimal_digit_count(acc) > precision:
            why[0] = "decimal exceeds the target precision"
            return -1
        if neg and acc:
            out[0] = 0 - acc
            for k in range(1, limbs):
                out[k] = 0xFFFFFFFFFFFFFFFFULL
        else:
            out[0] = acc
        return 0
    # digits: int part, then min(frac, scale) fraction digits, then zero padding to `scale`
    for i in range(int_digits + scale):
        if i < int_digits:
            k = ip[i] - 48
        elif i - int_digits < frac_digits:
            k = fp[i - int_digits] - 48
        else:
            k = 0
        if sig == 0 and k == 0:
            continue
        sig += 1
        if sig > precision:
            why[0] = "decimal exceeds the target precision"
            return -1
        carry = <uint64_t>k
        for k in range(limbs):
            t = <uint128>out[k] * 10 + carry
            out[k] = <uint64_t>t
            carry = <uint64_t>(t >> 64)
    if neg:
        carry = 1
        for k in range(limbs):
            out[k] = ~out[k]
            lo = out[k] + carry
            carry = 1 if (carry and lo == 0) else 0
            out[k] = lo
    return 0
