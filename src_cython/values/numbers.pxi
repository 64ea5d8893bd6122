# Numbers: integer grammar and ranges, float parsing and Go-style shortest formatting,
# exact decimal parsing into 128/256-bit two's complement.

# libc's strtod and printf read the decimal point from LC_NUMERIC, which a host process may set
# (locale.setlocale(LC_ALL, "de_DE.UTF-8") makes strtod("7887.44") stop at the '.'): both run
# under the "C" locale here, thread-locally.
cdef extern from *:
    """
    #include <locale.h>
    #include <stdio.h>
    #include <stdlib.h>
    #if defined(_WIN32)
    static void tf_c_locale_init(void) {}
    static double tf_strtod(const char* s) { return strtod(s, NULL); }
    static int tf_format_e(char* buf, int n, int prec, double x) { return snprintf(buf, n, "%.*e", prec, x); }
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
    static int tf_format_e(char* buf, int n, int prec, double x) {
        locale_t old = tf_c_locale ? uselocale(tf_c_locale) : (locale_t)0;
        int r = snprintf(buf, n, "%.*e", prec, x);
        if (old) uselocale(old);
        return r;
    }
    #endif
    """
    void tf_c_locale_init() noexcept nogil
    double tf_strtod(const char* s) noexcept nogil
    int tf_format_e(char* buf, int n, int prec, double x) noexcept nogil


tf_c_locale_init()


cdef double[23] POW10_F64
POW10_F64[:] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
                1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef struct IntVal:
    uint64_t mag
    int neg


cdef int parse_int_text(const uint8_t* p, Py_ssize_t n, IntVal* out) noexcept nogil:
    """JSON integer grammar -?(0|[1-9][0-9]*) into sign + magnitude; -1 on syntax or > 2^64-1."""
    cdef const uint8_t* e = p + n
    cdef uint64_t v = 0, d
    out.neg = 0
    if p < e and p[0] == 45:
        out.neg = 1
        p += 1
    if p >= e:
        return -1
    if p[0] == 48 and e - p > 1:
        return -1
    if e - p <= 19:                      # 19 digits never overflow 64 bits: no check per digit
        while p < e:
            d = <uint64_t>(p[0] - 48)
            if d > 9:
                return -1
            v = v * 10 + d
            p += 1
    while p < e:
        if not (48 <= p[0] <= 57):
            return -1
        d = p[0] - 48
        if v > (0xFFFFFFFFFFFFFFFFULL - d) // 10:
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


cdef int int_to_text(const IntVal* v, char* out) noexcept nogil:
    """Decimal text of v into out (>= 22 bytes); returns its length."""
    cdef char tmp[24]
    cdef int n = 0, k = 0
    cdef uint64_t m = v.mag
    if m == 0:
        out[0] = 48
        return 1
    while m:
        tmp[n] = <char>(48 + m % 10)
        m //= 10
        n += 1
    if v.neg:
        out[k] = 45
        k += 1
    while n:
        n -= 1
        out[k] = tmp[n]
        k += 1
    return k


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


cdef int _exact_fast_double(const uint8_t* p, Py_ssize_t n, double* out) noexcept nogil:
    """Clinger's fast path: a mantissa below 2^53 scaled by 10^k, |k| <= 22, is one correctly
    rounded IEEE multiplication or division of two exact values.  -1: not that case."""
    cdef const uint8_t* e = p + n
    cdef uint64_t m = 0
    cdef int neg = 0, nd = 0, frac = 0, ex = 0, exneg = 0, exd = 0, k
    if p < e and p[0] == 45:
        neg = 1
        p += 1
    while p < e and 48 <= p[0] <= 57:
        if nd == 19:
            return -1
        if m or p[0] != 48:
            nd += 1
        m = m * 10 + (p[0] - 48)
        p += 1
    if p < e and p[0] == 46:
        p += 1
        while p < e and 48 <= p[0] <= 57:
            if nd == 19:
                return -1
            if m or p[0] != 48:
                nd += 1
            m = m * 10 + (p[0] - 48)
            frac += 1
            p += 1
    if p < e and (p[0] == 101 or p[0] == 69):
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
    if p != e or m > 9007199254740992ULL:
        return -1
    k = (-ex if exneg else ex) - frac
    if m == 0:
        out[0] = -0.0 if neg else 0.0
        return 0
    if k < -22 or k > 22:
        return -1
    out[0] = <double>m * POW10_F64[k] if k >= 0 else <double>m / POW10_F64[-k]
    if neg:
        out[0] = -out[0]
    return 0


cdef int parse_double(const uint8_t* p, Py_ssize_t n, double* out, Buf* scratch) noexcept nogil:
    """A JSON-number text (syntax checked by the caller) as the nearest double; -1 if infinite."""
    cdef char local[64]
    cdef char* s = local
    if _exact_fast_double(p, n, out) == 0:
        return 0
    if n >= 63:
        scratch.len = 0
        if buf_reserve(scratch, n + 1) < 0:
            return -1
        s = <char*>scratch.data
    memcpy(s, p, n)
    s[n] = 0
    out[0] = tf_strtod(s)
    if isinf(out[0]) or isnan(out[0]):
        return -1
    return 0


cdef inline int to_float32(double x, float* out) noexcept nogil:
    cdef float f = <float>x
    if isinf(f):
        return -1
    out[0] = f
    return 0


cdef int go_format_digits(const char* digits, int nd, int exp10, int negative, char* out) noexcept nogil:
    """value = 0.<digits> x 10^exp10 (digits without leading/trailing zeros) as Go's
    encoding/json writes it: plain unless the magnitude is < 1e-6 or >= 1e21."""
    cdef int k = 0, i, sci = exp10 - 1, a
    if negative:
        out[k] = 45
        k += 1
    if sci < -6 or sci >= 21:
        out[k] = digits[0]
        k += 1
        if nd > 1:
            out[k] = 46
            k += 1
            memcpy(out + k, digits + 1, nd - 1)
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
    if exp10 <= 0:
        out[k] = 48
        out[k + 1] = 46
        k += 2
        for i in range(-exp10):
            out[k] = 48
            k += 1
        memcpy(out + k, digits, nd)
        return k + nd
    if exp10 >= nd:
        memcpy(out + k, digits, nd)
        k += nd
        for i in range(exp10 - nd):
            out[k] = 48
            k += 1
        return k
    memcpy(out + k, digits, exp10)
    k += exp10
    out[k] = 46
    k += 1
    memcpy(out + k, digits + exp10, nd - exp10)
    return k + nd - exp10


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
        memcpy(out + k, digits, nd)
        return k + nd
    if exp10 >= nd:
        memcpy(out + k, digits, nd)
        k += nd
        for i in range(exp10 - nd):
            out[k] = 48
            k += 1
        return k
    memcpy(out + k, digits, exp10)
    k += exp10
    out[k] = 46
    k += 1
    memcpy(out + k, digits + exp10, nd - exp10)
    return k + nd - exp10


cdef int shortest_from_text(const uint8_t* p, Py_ssize_t n, int bits, char* digits,
                            int* nd_out, int* exp_out) noexcept nogil:
    """If the number text has few enough significant digits to be the unique shortest form
    at this width, extract them (0 = done); otherwise return 1 (use the slow path)."""
    cdef const uint8_t* e = p + n
    cdef int nd = 0, exp10 = 0, seen_point = 0, lead = 1, ez = 0, eneg = 0, limit
    cdef int trailing_zero_run = 0
    cdef long long ev = 0
    if p < e and p[0] == 45:
        p += 1
    while p < e and p[0] != 101 and p[0] != 69:
        if p[0] == 46:
            seen_point = 1
            p += 1
            continue
        if lead and p[0] == 48:
            if seen_point:
                exp10 -= 1
            p += 1
            continue
        lead = 0
        if nd >= 20:
            return 1
        digits[nd] = <char>p[0]
        nd += 1
        if not seen_point:
            exp10 += 1
        p += 1
    if p < e:
        p += 1
        if p < e and (p[0] == 43 or p[0] == 45):
            eneg = p[0] == 45
            p += 1
        while p < e:
            ev = ev * 10 + (p[0] - 48)
            if ev > 100000:
                return 1
            p += 1
        exp10 += <int>(-ev if eneg else ev)
    while nd > 0 and digits[nd - 1] == 48:
        nd -= 1
    if nd == 0:
        return 1  # zero: handled by the caller's value path
    limit = 15 if bits == 64 else 6
    if nd > limit:
        return 1
    # stay in the normal range so the decimal round-trips uniquely and finitely
    if bits == 64 and not (-306 <= exp10 - 1 <= 307):
        return 1
    if bits == 32 and not (-37 <= exp10 - 1 <= 37):
        return 1
    nd_out[0] = nd
    exp_out[0] = exp10
    return 0


cdef int _digits_roundtrip(const char* digits, int nd, int e10, int bits, double ax) noexcept nogil:
    """Does d.ddd × 10^(e10-1) (digits, nd of them) parse back to ax at this width?"""
    cdef char buf[48]
    cdef int k = 0
    cdef double back
    buf[k] = digits[0]
    k += 1
    if nd > 1:
        buf[k] = 46
        k += 1
        memcpy(buf + k, digits + 1, nd - 1)
        k += nd - 1
    k += snprintf(buf + k, 48 - k, "e%d", e10 - 1)
    back = tf_strtod(buf)
    if bits == 32:
        return <float>back == <float>ax and not isinf(<float>back)
    return back == ax


cdef int _step_digits(char* digits, int nd, int* e10, int up) noexcept nogil:
    """Add (up) or subtract one unit in the last place of a nd-digit string; 0 if it underflows."""
    cdef int i = nd - 1
    if up:
        while i >= 0 and digits[i] == 57:
            digits[i] = 48
            i -= 1
        if i < 0:                 # 99..9 + 1 = 100..0: one more power of ten
            digits[0] = 49
            e10[0] += 1
            return 1
        digits[i] += 1
        return 1
    while i >= 0 and digits[i] == 48:
        digits[i] = 57
        i -= 1
    if i < 0:
        return 0
    digits[i] -= 1
    if digits[0] == 48:           # 100..0 - 1 = 099..9: keep nd significant digits
        if nd == 1:
            return 0
        memmove(digits, digits + 1, nd - 1)
        digits[nd - 1] = 57
        e10[0] -= 1
    return 1


cdef double P10[23]
cdef void _init_p10() noexcept:
    cdef int k
    P10[0] = 1.0
    for k in range(1, 23):
        P10[k] = P10[k - 1] * 10.0     # exact up to 1e22

_init_p10()


cdef int _fast_shortest(double ax, int bits, char* digits, int* nd_out, int* exp_out) noexcept nogil:
    """Short decimals without printf: the smallest k with N = round(ax * 10^k) such that N / 10^k
    (a correctly rounded division of exact values = strtod of that decimal) gives back ax.  With
    N of at most 15 digits (6 for float32) no shorter decimal maps to ax, so these are the digits."""
    cdef int k, nd, lim = 15 if bits == 64 else 6
    cdef double y, back
    cdef int64_t n
    cdef char tmp[24]
    cdef int i
    if not (1e-5 <= ax < 1e15):
        return -1
    for k in range(0, 16):
        y = ax * P10[k]
        if y >= 1e15:
            return -1
        n = <int64_t>(y + 0.5)
        back = <double>n / P10[k]
        if bits == 32:
            if <float>back != <float>ax:
                continue
        elif back != ax:
            continue
        if n == 0:
            return -1
        nd = 0
        while n:
            tmp[nd] = <char>(48 + n % 10)
            n //= 10
            nd += 1
        if nd > lim:
            return -1
        for i in range(nd):
            digits[i] = tmp[nd - 1 - i]
        exp_out[0] = nd - k
        while nd > 1 and digits[nd - 1] == 48:
            nd -= 1
        nd_out[0] = nd
        return 0
    return -1


cdef int shortest_from_value(double x, int bits, char* digits, int* nd_out, int* exp_out) noexcept nogil:
    """Shortest digits that round-trip x at this width (x finite, non-zero); among candidates of
    that length the closest.  At a power of two the interval above x is twice as wide as below,
    so when the nearest p-digit decimal misses, its upper (then lower) neighbour is tried."""
    cdef char buf[40]
    cdef char cand[24]
    cdef int p, k, nd, e10, start, ce, delta
    cdef double ax = -x if x < 0 else x
    if _fast_shortest(ax, bits, digits, nd_out, exp_out) == 0:
        return 0
    start = 15 if bits == 64 else 6
    # subnormals carry fewer significant bits: their shortest form can be 1 digit
    if (bits == 64 and ax < 2.2250738585072014e-308) or (bits == 32 and ax < 1.1754943508222875e-38):
        start = 1
    for p in range(start, 18 if bits == 64 else 10):
        tf_format_e(buf, 40, p - 1, ax)
        nd = 0
        k = 0
        while buf[k] != 101:
            if buf[k] != 46:
                digits[nd] = buf[k]
                nd += 1
            k += 1
        e10 = atoi(buf + k + 1) + 1
        if _digits_roundtrip(digits, nd, e10, bits, ax):
            break
        for delta in range(2):
            memcpy(cand, digits, nd)
            ce = e10
            if _step_digits(cand, nd, &ce, delta == 0) and _digits_roundtrip(cand, nd, ce, bits, ax):
                memcpy(digits, cand, nd)
                e10 = ce
                break
        else:
            continue
        break
    while nd > 1 and digits[nd - 1] == 48:
        nd -= 1
    nd_out[0] = nd
    exp_out[0] = e10
    return 0


cdef int format_shortest(const uint8_t* text, Py_ssize_t n, int is_int_syntax, int bits,
                         double* value, char* out, Buf* scratch, int plain=0) noexcept nogil:
    """Canonical text of a JSON number in a FLOAT/DOUBLE column; -1 if not finite at this width.
    Also leaves the parsed value (rounded to the width) in *value."""
    cdef char digits[24]
    cdef int nd, e10, negative
    cdef float f
    cdef double x
    if parse_double(text, n, &x, scratch) < 0:
        return -1
    if bits == 32:
        if to_float32(x, &f) < 0:
            return -1
        x = <double>f
    value[0] = x
    if x == 0:
        if signbit(x):
            out[0] = 45
            out[1] = 48
            return 2
        out[0] = 48
        return 1
    negative = x < 0
    if shortest_from_text(text, n, bits, digits, &nd, &e10) != 0:
        shortest_from_value(x, bits, digits, &nd, &e10)
    if plain:
        return plain_format_digits(digits, nd, e10, negative, out)
    return go_format_digits(digits, nd, e10, negative, out)


# ---- decimals
cdef extern from *:
    ctypedef unsigned long long uint128 "unsigned __int128"


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
    cdef int neg = 0, int_digits = 0, frac_digits = 0, i, k, sig = 0
    cdef const uint8_t* ip
    cdef const uint8_t* fp = NULL
    cdef uint64_t carry, lo, hi
    cdef uint128 t
    if p < e and p[0] == 45:
        neg = 1
        p += 1
    ip = p
    while p < e and 48 <= p[0] <= 57:
        p += 1
    int_digits = p - ip
    if int_digits == 0:
        why[0] = "invalid decimal"
        return -1
    if p < e and p[0] == 46:
        p += 1
        fp = p
        while p < e and 48 <= p[0] <= 57:
            p += 1
        frac_digits = p - fp
        if frac_digits == 0:
            why[0] = "invalid decimal"
            return -1
    if p != e:
        why[0] = "invalid decimal"
        return -1
    if frac_digits > scale:
        for i in range(scale, frac_digits):
            if fp[i] != 48:
                why[0] = "decimal does not fit the target scale exactly"
                return -1
    for k in range(limbs):
        out[k] = 0
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


# ---- temporal
cdef inline int two(const uint8_t* p) noexcept nogil:
    if not (48 <= p[0] <= 57 and 48 <= p[1] <= 57):
        return -1
    return (p[0] - 48) * 10 + (p[1] - 48)


cdef int64_t days_from_civil(int64_t y, int m, int d) noexcept nogil:
    cdef int64_t era, yoe, doy, doe
    if m <= 2:
        y -= 1
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef int parse_ymd(const uint8_t* p, int64_t* days, const char** why) noexcept nogil:
    cdef int y1 = two(p), y2 = two(p + 2), m = two(p + 5), d = two(p + 8), y, mdays
    if y1 < 0 or y2 < 0 or m < 0 or d < 0 or p[4] != 45 or p[7] != 45:
        why[0] = "invalid date"
        return -1
    y = y1 * 100 + y2
    if y == 0 or m == 0 or d == 0:
        why[0] = "zero date has no exact value"
        return -1
    if m > 12:
        why[0] = "invalid date"
        return -1
    mdays = 31
    if m == 4 or m == 6 or m == 9 or m == 11:
        mdays = 30
    elif m == 2:
        mdays = 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    if d > mdays:
        why[0] = "invalid date"
        return -1
    days[0] = days_from_civil(y, m, d)
    return 0


cdef int parse_frac_us(const uint8_t* p, const uint8_t* e, int64_t* us) noexcept nogil:
    """'.f{1,6}' to µs; p at '.'."""
    cdef int nd = 0
    cdef int64_t v = 0
    p += 1
    while p < e:
        if not (48 <= p[0] <= 57) or nd == 6:
            return -1
        v = v * 10 + (p[0] - 48)
        nd += 1
        p += 1
    if nd == 0:
        return -1
    while nd < 6:
        v *= 10
        nd += 1
    us[0] = v
    return 0


cdef int parse_date_days(const uint8_t* p, Py_ssize_t n, int64_t* days, const char** why) noexcept nogil:
    if n != 10:
        why[0] = "invalid date"
        return -1
    return parse_ymd(p, days, why)


cdef int parse_datetime_us(const uint8_t* p, Py_ssize_t n, int64_t* us, const char** why) noexcept nogil:
    cdef int64_t days, frac = 0
    cdef int hh, mi, ss
    if n == 10:
        if parse_ymd(p, &days, why) < 0:
            return -1
        us[0] = days * <int64_t>86400000000LL
        return 0
    if n < 19 or p[10] != 32 or p[13] != 58 or p[16] != 58:
        why[0] = "invalid datetime"
        return -1
    if parse_ymd(p, &days, why) < 0:
        return -1
    hh = two(p + 11)
    mi = two(p + 14)
    ss = two(p + 17)
    if hh < 0 or mi < 0 or ss < 0:
        why[0] = "invalid datetime"
        return -1
    if hh > 23 or mi > 59 or ss > 59:
        why[0] = "invalid time of day"
        return -1
    if n > 19:
        if p[19] != 46 or parse_frac_us(p + 19, p + n, &frac) < 0:
            why[0] = "invalid datetime"
            return -1
    us[0] = (days * 86400 + hh * 3600 + mi * 60 + ss) * 1000000 + frac
    return 0


cdef int parse_time_us(const uint8_t* p, Py_ssize_t n, int64_t* us, const char** why) noexcept nogil:
    cdef const uint8_t* e = p + n
    cdef int neg = 0, hd = 0, mi, ss
    cdef int64_t hh = 0, frac = 0
    if p < e and p[0] == 45:
        neg = 1
        p += 1
    while p < e and 48 <= p[0] <= 57 and hd < 4:
        hh = hh * 10 + (p[0] - 48)
        hd += 1
        p += 1
    if hd == 0 or hd > 3 or e - p < 6 or p[0] != 58 or p[3] != 58:
        why[0] = "invalid time"
        return -1
    mi = two(p + 1)
    ss = two(p + 4)
    if mi < 0 or ss < 0:
        why[0] = "invalid time"
        return -1
    if hh > 838 or mi > 59 or ss > 59:
        why[0] = "time out of range"
        return -1
    p += 6
    if p < e:
        if p[0] != 46 or parse_frac_us(p, e, &frac) < 0:
            why[0] = "invalid time"
            return -1
    us[0] = (hh * 3600 + mi * 60 + ss) * 1000000 + frac
    if neg:
        us[0] = -us[0]
    return 0
