# Bytes-level value codecs: UTF-8 validation, Go strconv.Unquote, standard base64.

# Strict UTF-8 as a shift-based DFA: each state is a bit offset (a multiple of 6) and
# UTF8_ROW[byte] holds, at every state's offset, the offset of the state that byte leads to.
# One load whose address does not depend on the state and one shift per byte: no branch to
# mispredict on text that mixes ASCII, CJK and emoji, where the byte-by-byte ladder stalled.
cdef enum:
    U8_ACCEPT = 0       # between characters
    U8_REJECT = 6       # absorbing
    U8_NEED1 = 12       # one continuation byte to go
    U8_NEED2 = 18
    U8_NEED3 = 24
    U8_E0 = 30          # after E0: A0..BF (no overlong 3-byte form)
    U8_ED = 36          # after ED: 80..9F (no surrogates)
    U8_F0 = 42          # after F0: 90..BF (no overlong 4-byte form)
    U8_F4 = 48          # after F4: 80..8F (nothing above U+10FFFF)

cdef uint64_t UTF8_ROW[256]


# The DFA's moves (from state, first byte, last byte, to state); every other move rejects.
_UTF8_MOVES = (
    (U8_ACCEPT, 0x00, 0x7F, U8_ACCEPT),    # between characters: ASCII stays,
    (U8_ACCEPT, 0xC2, 0xDF, U8_NEED1),     # a lead byte opens its sequence
    (U8_ACCEPT, 0xE0, 0xE0, U8_E0),
    (U8_ACCEPT, 0xE1, 0xEC, U8_NEED2),
    (U8_ACCEPT, 0xED, 0xED, U8_ED),
    (U8_ACCEPT, 0xEE, 0xEF, U8_NEED2),
    (U8_ACCEPT, 0xF0, 0xF0, U8_F0),
    (U8_ACCEPT, 0xF1, 0xF3, U8_NEED3),
    (U8_ACCEPT, 0xF4, 0xF4, U8_F4),
    (U8_NEED1, 0x80, 0xBF, U8_ACCEPT),
    (U8_NEED2, 0x80, 0xBF, U8_NEED1),
    (U8_NEED3, 0x80, 0xBF, U8_NEED2),
    (U8_E0, 0xA0, 0xBF, U8_NEED1),
    (U8_ED, 0x80, 0x9F, U8_NEED1),
    (U8_F0, 0x90, 0xBF, U8_NEED2),
    (U8_F4, 0x80, 0x8F, U8_NEED2),
)


cdef void _utf8_row_init() noexcept:
    """UTF8_ROW from _UTF8_MOVES: a state's value is its field's bit offset in a row."""
    cdef int b, s, frm, first, last, to
    cdef uint64_t reject_all = 0
    for s in range(9):
        reject_all |= (<uint64_t>U8_REJECT) << (6 * s)
    for b in range(256):
        UTF8_ROW[b] = reject_all
    for frm, first, last, to in _UTF8_MOVES:
        for b in range(first, last + 1):
            UTF8_ROW[b] = (UTF8_ROW[b] & ~((<uint64_t>63) << frm)) | ((<uint64_t>to) << frm)


_utf8_row_init()


# Where the CPU has AVX2 (checked once at import), non-ASCII text of 16 bytes or more is validated
# 32 bytes per step (from its first non-ASCII byte: ASCII runs are skipped 32 bytes at a time
# either way); elsewhere, and for shorter text, the DFA below does it.
cdef extern from *:
    """
    /* Strict UTF-8 validation 32 bytes at a time (AVX2), after the classification of Keiser and
       Lemire ("Validating UTF-8 in less than one instruction per byte", 2021): each byte pair
       (previous, current) is looked up by three nibbles into 8 error classes, and the bytes that
       must continue a 3- or 4-byte character are checked against the previous two and three. */
    #if defined(__x86_64__) && defined(__GNUC__)
    #include <immintrin.h>
    #include <stdint.h>
    #include <string.h>
    #define TF_U8_TOO_SHORT 0x01   /* a lead byte not followed by a continuation */
    #define TF_U8_TOO_LONG 0x02    /* a continuation after ASCII */
    #define TF_U8_OVERLONG_3 0x04  /* E0 80..9F */
    #define TF_U8_TOO_LARGE 0x08   /* F4 90..BF, F5..FF 90..BF */
    #define TF_U8_SURROGATE 0x10   /* ED A0..BF */
    #define TF_U8_OVERLONG_2 0x20  /* C0/C1 80..BF */
    #define TF_U8_4_BIT6 0x40      /* F0 80..8F (overlong 4) or F5..FF 80..8F (too large) */
    #define TF_U8_TWO_CONTS 0x80   /* a continuation after a continuation */
    #define TF_U8_CARRY (TF_U8_TOO_SHORT | TF_U8_TOO_LONG | TF_U8_TWO_CONTS)

    __attribute__((target("avx2")))
    static inline __m256i tf_u8_lookup(__m256i idx, int8_t t0, int8_t t1, int8_t t2, int8_t t3,
            int8_t t4, int8_t t5, int8_t t6, int8_t t7, int8_t t8, int8_t t9, int8_t ta, int8_t tb,
            int8_t tc, int8_t td, int8_t te, int8_t tf) {
        __m256i table = _mm256_setr_epi8(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ta, tb, tc, td, te, tf,
                                         t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ta, tb, tc, td, te, tf);
        return _mm256_shuffle_epi8(table, idx);
    }

    /* the input shifted up by k bytes, the previous block's last k bytes coming in below */
    #define TF_U8_PREV(cur, prev, k) \
        _mm256_alignr_epi8((cur), _mm256_permute2x128_si256((prev), (cur), 0x21), 16 - (k))

    __attribute__((target("avx2")))
    static inline __m256i tf_u8_block_errors(__m256i cur, __m256i prev) {
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        __m256i prev1 = TF_U8_PREV(cur, prev, 1);
        __m256i prev2 = TF_U8_PREV(cur, prev, 2);
        __m256i prev3 = TF_U8_PREV(cur, prev, 3);
        __m256i b1_high = tf_u8_lookup(_mm256_and_si256(_mm256_srli_epi16(prev1, 4), low4),
            TF_U8_TOO_LONG, TF_U8_TOO_LONG, TF_U8_TOO_LONG, TF_U8_TOO_LONG,
            TF_U8_TOO_LONG, TF_U8_TOO_LONG, TF_U8_TOO_LONG, TF_U8_TOO_LONG,
            (int8_t)TF_U8_TWO_CONTS, (int8_t)TF_U8_TWO_CONTS, (int8_t)TF_U8_TWO_CONTS, (int8_t)TF_U8_TWO_CONTS,
            TF_U8_TOO_SHORT | TF_U8_OVERLONG_2,
            TF_U8_TOO_SHORT,
            TF_U8_TOO_SHORT | TF_U8_OVERLONG_3 | TF_U8_SURROGATE,
            TF_U8_TOO_SHORT | TF_U8_TOO_LARGE | TF_U8_4_BIT6);
        __m256i b1_low = tf_u8_lookup(_mm256_and_si256(prev1, low4),
            (int8_t)(TF_U8_CARRY | TF_U8_OVERLONG_2 | TF_U8_OVERLONG_3 | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_OVERLONG_2),
            (int8_t)TF_U8_CARRY, (int8_t)TF_U8_CARRY,
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6 | TF_U8_SURROGATE),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6),
            (int8_t)(TF_U8_CARRY | TF_U8_TOO_LARGE | TF_U8_4_BIT6));
        __m256i b2_high = tf_u8_lookup(_mm256_and_si256(_mm256_srli_epi16(cur, 4), low4),
            TF_U8_TOO_SHORT, TF_U8_TOO_SHORT, TF_U8_TOO_SHORT, TF_U8_TOO_SHORT,
            TF_U8_TOO_SHORT, TF_U8_TOO_SHORT, TF_U8_TOO_SHORT, TF_U8_TOO_SHORT,
            (int8_t)(TF_U8_TOO_LONG | TF_U8_OVERLONG_2 | TF_U8_TWO_CONTS | TF_U8_OVERLONG_3 | TF_U8_4_BIT6),
            (int8_t)(TF_U8_TOO_LONG | TF_U8_OVERLONG_2 | TF_U8_TWO_CONTS | TF_U8_OVERLONG_3 | TF_U8_TOO_LARGE),
            (int8_t)(TF_U8_TOO_LONG | TF_U8_OVERLONG_2 | TF_U8_TWO_CONTS | TF_U8_SURROGATE | TF_U8_TOO_LARGE),
            (int8_t)(TF_U8_TOO_LONG | TF_U8_OVERLONG_2 | TF_U8_TWO_CONTS | TF_U8_SURROGATE | TF_U8_TOO_LARGE),
            TF_U8_TOO_SHORT, TF_U8_TOO_SHORT, TF_U8_TOO_SHORT, TF_U8_TOO_SHORT);
        __m256i special = _mm256_and_si256(_mm256_and_si256(b1_high, b1_low), b2_high);
        /* the third byte of a 3- or 4-byte character and the fourth of a 4-byte one must be
           continuations: exactly there a TWO_CONTS flag is expected rather than an error */
        __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80)));
        __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80)));
        __m256i must = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
        return _mm256_xor_si256(must, special);
    }

    /* non-zero where the block ends inside a character (a lead in its last 1, 2 or 3 bytes) */
    __attribute__((target("avx2")))
    static inline __m256i tf_u8_unfinished(__m256i cur) {
        const __m256i limit = _mm256_setr_epi8(
            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            (char)(0xF0 - 1), (char)(0xE0 - 1), (char)(0xC0 - 1));
        return _mm256_subs_epu8(cur, limit);
    }

    /* Validates the whole 32-byte blocks of p[:n]: -1 if they hold an error, else the offset
       where the character the blocks may have left open starts (a multiple of 32 when none is
       open), from which the caller checks the rest byte by byte. */
    __attribute__((target("avx2")))
    static Py_ssize_t tf_utf8_blocks_avx2(const unsigned char* p, Py_ssize_t n) {
        __m256i prev = _mm256_setzero_si256();
        __m256i unfinished = _mm256_setzero_si256();
        __m256i error = _mm256_setzero_si256();
        __m256i cur;
        Py_ssize_t i = 0, k;
        for (; n - i >= 32; i += 32) {
            cur = _mm256_loadu_si256((const __m256i*)(p + i));
            if (_mm256_movemask_epi8(cur) == 0) {
                /* all ASCII: only a character the previous block left open can be wrong */
                error = _mm256_or_si256(error, unfinished);
                unfinished = _mm256_setzero_si256();
            } else {
                error = _mm256_or_si256(error, tf_u8_block_errors(cur, prev));
                unfinished = tf_u8_unfinished(cur);
            }
            prev = cur;
        }
        if (!_mm256_testz_si256(error, error))
            return -1;
        if (!_mm256_testz_si256(unfinished, unfinished)) {
            /* back to the open character's lead: the caller's byte-wise check reads it whole */
            for (k = 0; k < 3 && (p[i - 1] & 0xC0) == 0x80; k++)
                i--;
            if (p[i - 1] >= 0xC0)
                i--;
        }
        return i;
    }
    /* Text of 16 to 64 bytes, copied into two zeroed blocks: the zeros after it are ASCII, so a
       character it leaves open fails as it would before an ASCII byte. */
    __attribute__((target("avx2")))
    static int tf_utf8_short_avx2(const unsigned char* p, Py_ssize_t n) {
        unsigned char buf[64];
        __m256i cur, prev, error;
        _mm256_storeu_si256((__m256i*)buf, _mm256_setzero_si256());
        _mm256_storeu_si256((__m256i*)(buf + 32), _mm256_setzero_si256());
        if (n >= 32) {
            _mm256_storeu_si256((__m256i*)buf, _mm256_loadu_si256((const __m256i*)p));
            _mm256_storeu_si256((__m256i*)(buf + n - 32), _mm256_loadu_si256((const __m256i*)(p + n - 32)));
        } else {
            _mm_storeu_si128((__m128i*)buf, _mm_loadu_si128((const __m128i*)p));
            _mm_storeu_si128((__m128i*)(buf + n - 16), _mm_loadu_si128((const __m128i*)(p + n - 16)));
        }
        prev = _mm256_loadu_si256((const __m256i*)buf);
        error = tf_u8_block_errors(prev, _mm256_setzero_si256());
        if (n > 32) {
            cur = _mm256_loadu_si256((const __m256i*)(buf + 32));
            error = _mm256_or_si256(error, tf_u8_block_errors(cur, prev));
            prev = cur;
        }
        error = _mm256_or_si256(error, tf_u8_unfinished(prev));
        return _mm256_testz_si256(error, error);
    }

    /* Standard base64, 32 symbols (24 bytes) per step while every symbol is in the alphabet:
       each byte is classified by range (A-Z, a-z, 0-9, '+', '/'; anything else, '=' included,
       ends the blocks) and moved to its 6-bit value by one added offset; the four values of a
       group become 24 bits by two multiply-adds and are stored big-endian.  Returns how many
       symbols were decoded (a multiple of 32); leaves at least 8 symbols, so the 28-byte
       stores of the last block land inside the output the caller reserved. */
    __attribute__((target("avx2")))
    static Py_ssize_t tf_b64_blocks_avx2(const unsigned char* p, Py_ssize_t n, unsigned char* o) {
        Py_ssize_t k = 0;
        const __m256i order = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
                                               2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
        while (k + 32 + 8 <= n) {
            __m256i c = _mm256_loadu_si256((const __m256i*)(p + k));
            /* bytes >= 0x80 are negative: they fall in none of the ranges below */
            __m256i upper = _mm256_and_si256(_mm256_cmpgt_epi8(c, _mm256_set1_epi8(64)),
                                             _mm256_cmpgt_epi8(_mm256_set1_epi8(91), c));
            __m256i lower = _mm256_and_si256(_mm256_cmpgt_epi8(c, _mm256_set1_epi8(96)),
                                             _mm256_cmpgt_epi8(_mm256_set1_epi8(123), c));
            __m256i digit = _mm256_and_si256(_mm256_cmpgt_epi8(c, _mm256_set1_epi8(47)),
                                             _mm256_cmpgt_epi8(_mm256_set1_epi8(58), c));
            __m256i plus = _mm256_cmpeq_epi8(c, _mm256_set1_epi8(43));
            __m256i slash = _mm256_cmpeq_epi8(c, _mm256_set1_epi8(47));
            __m256i valid = _mm256_or_si256(_mm256_or_si256(upper, lower),
                                            _mm256_or_si256(digit, _mm256_or_si256(plus, slash)));
            if (_mm256_movemask_epi8(valid) != -1)
                break;
            __m256i shift = _mm256_or_si256(
                _mm256_or_si256(_mm256_and_si256(upper, _mm256_set1_epi8(-65)),
                                _mm256_and_si256(lower, _mm256_set1_epi8(-71))),
                _mm256_or_si256(_mm256_and_si256(digit, _mm256_set1_epi8(4)),
                                _mm256_or_si256(_mm256_and_si256(plus, _mm256_set1_epi8(19)),
                                                _mm256_and_si256(slash, _mm256_set1_epi8(16)))));
            __m256i v = _mm256_add_epi8(c, shift);
            v = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));   /* a<<6|b, c<<6|d */
            v = _mm256_madd_epi16(v, _mm256_set1_epi32(0x00011000));      /* the 24 bits */
            v = _mm256_shuffle_epi8(v, order);
            _mm_storeu_si128((__m128i*)o, _mm256_castsi256_si128(v));
            _mm_storeu_si128((__m128i*)(o + 12), _mm256_extracti128_si256(v, 1));
            o += 24;
            k += 32;
        }
        return k;
    }
    #define TF_HAVE_U8_AVX2 1
    static int tf_cpu_has_avx2(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx2"); }
    #else
    static Py_ssize_t tf_b64_blocks_avx2(const unsigned char* p, Py_ssize_t n, unsigned char* o) { (void)p; (void)n; (void)o; return 0; }
    static Py_ssize_t tf_utf8_blocks_avx2(const unsigned char* p, Py_ssize_t n) { (void)p; (void)n; return 0; }
    static int tf_utf8_short_avx2(const unsigned char* p, Py_ssize_t n) { (void)p; (void)n; return 0; }
    #define TF_HAVE_U8_AVX2 0
    static int tf_cpu_has_avx2(void) { return 0; }
    #endif
    """
    const int TF_HAVE_U8_AVX2
    Py_ssize_t tf_utf8_blocks_avx2(const uint8_t* p, Py_ssize_t n) nogil
    int tf_utf8_short_avx2(const uint8_t* p, Py_ssize_t n) nogil
    Py_ssize_t tf_b64_blocks_avx2(const uint8_t* p, Py_ssize_t n, uint8_t* o) nogil
    int tf_cpu_has_avx2()

cdef int HAVE_U8_AVX2 = TF_HAVE_U8_AVX2 and tf_cpu_has_avx2()
cdef int HAVE_B64_AVX2 = TF_HAVE_U8_AVX2 and tf_cpu_has_avx2()



cdef inline uint64_t _utf8_run(const uint8_t* p, const uint8_t* e, uint64_t st) noexcept nogil:
    while p < e:
        st = (UTF8_ROW[p[0]] >> st) & 63
        p += 1
    return st


cdef uint64_t _utf8_two_lanes(const uint8_t* p, const uint8_t* e) noexcept nogil:
    """Non-ASCII text split at a character boundary near its middle and run as two interleaved
    DFAs: each step waits on the previous state, so one lane leaves the core idle half the time.
    The state after e (the second lane's), or U8_REJECT when the first half fails or ends inside
    a character."""
    cdef const uint8_t* mid = p + (e - p) // 2
    cdef const uint8_t* q
    cdef const uint8_t* r
    cdef uint64_t s1 = U8_ACCEPT, s2 = U8_ACCEPT
    cdef int k = 0
    while k < 3 and (mid[0] & 0xC0) == 0x80:     # back to a lead or ASCII byte
        mid -= 1
        k += 1
    if (mid[0] & 0xC0) == 0x80:
        return U8_REJECT                          # four continuation bytes in a row
    q = p
    r = mid
    while q < mid and r < e:
        s1 = (UTF8_ROW[q[0]] >> s1) & 63
        s2 = (UTF8_ROW[r[0]] >> s2) & 63
        q += 1
        r += 1
    s1 = _utf8_run(q, mid, s1)
    s2 = _utf8_run(r, e, s2)
    return s2 if s1 == U8_ACCEPT else U8_REJECT


cdef int utf8_valid(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (no surrogates, no overlongs, <= U+10FFFF), as Python's decoder."""
    cdef const uint8_t* e = p + n
    cdef const uint8_t* stop
    cdef uint64_t st = U8_ACCEPT
    cdef Py_ssize_t done
    cdef uint32_t w4, w4e
    if n < 8:
        # short ASCII (a code, a name): two overlapping 4-byte reads, or the bytes one by one
        if n >= 4:
            memcpy(&w4, p, 4)
            memcpy(&w4e, e - 4, 4)
            if ((w4 | w4e) & <uint32_t>0x80808080U) == 0:
                return 1
        else:
            done = 0
            while p + done < e:
                if p[done] & 0x80:
                    break
                done += 1
            if p + done == e:
                return 1
    while p < e:
        if st == U8_ACCEPT:
            # 8 ASCII bytes at a time between characters
            while e - p >= 32 and ((load_le64(p) | load_le64(p + 8) | load_le64(p + 16) | load_le64(p + 24))
                                   & 0x8080808080808080ULL) == 0:
                p += 32
            while e - p >= 8 and (load_le64(p) & 0x8080808080808080ULL) == 0:
                p += 8
            # an ASCII tail of under 8 bytes: the text's last 8 bytes, which overlap what passed
            if e - p < 8 and p < e and n >= 8 and (load_le64(e - 8) & 0x8080808080808080ULL) == 0:
                return 1
            if HAVE_U8_AVX2 and e - p >= 64:
                # non-ASCII text ahead (p is between characters): the rest in 32-byte blocks
                done = tf_utf8_blocks_avx2(p, e - p)
                if done < 0:
                    return 0
                p += done
                continue
            if HAVE_U8_AVX2 and e - p >= 16:
                return tf_utf8_short_avx2(p, e - p)
            if e - p >= 32:
                # The DFA walks only this non-ASCII stretch: it ends at the next 8 bytes that are
                # all ASCII (a JSON message with a few accented values is mostly structure, which
                # must not be walked byte by byte).  A character cut at that point leaves a
                # non-accepting state, which is an error here as it would be at the ASCII byte.
                stop = p + 8
                while e - stop >= 8 and (load_le64(stop) & 0x8080808080808080ULL) != 0:
                    stop += 8
                if e - stop < 8:
                    stop = e
                if stop - p >= 64:
                    st = _utf8_two_lanes(p, stop)
                else:
                    st = _utf8_run(p, stop, U8_ACCEPT)
                p = stop
                if st != U8_ACCEPT:
                    return 0
                continue
        stop = p + 16 if e - p > 16 else e
        while p < stop:
            st = (UTF8_ROW[p[0]] >> st) & 63
            p += 1
        if st == U8_REJECT:
            return 0
    return st == U8_ACCEPT


cdef Py_ssize_t utf8_first_invalid(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Offset of the first byte of the first ill-formed sequence in p[:n] (Python's
    UnicodeDecodeError.start), n if there is none.  A cold path: for the error of text that
    utf8_valid refused."""
    cdef Py_ssize_t i, start = 0
    cdef uint64_t st = U8_ACCEPT
    for i in range(n):
        if st == U8_ACCEPT:
            start = i
        st = (UTF8_ROW[p[i]] >> st) & 63
        if st == U8_REJECT:
            return start
    return start if st != U8_ACCEPT else n


cdef int utf8_replace_invalid(const uint8_t* p, Py_ssize_t n, Buf* out) noexcept nogil:
    """Append p[:n] with every maximal ill-formed subpart replaced by U+FFFD: the same output as
    Python's ``bytes.decode("utf-8", errors="replace")``.  A cold path: only text that
    utf8_valid refused comes here."""
    cdef const uint8_t* e = p + n
    cdef uint8_t* o
    cdef uint8_t c
    cdef int st, nxt, k
    if buf_reserve(out, 3 * n) < 0:   # each byte yields at most one 3-byte U+FFFD
        return -1
    o = out.data + out.len
    while p < e:
        c = p[0]
        if c < 0x80:
            o[0] = c
            o += 1
            p += 1
            continue
        # the DFA of utf8_valid from the lead: k bytes read while they may still be a character
        st = UTF8_ROW[c] & 63
        k = 1
        while st != U8_ACCEPT and st != U8_REJECT and e - p > k:
            nxt = (UTF8_ROW[p[k]] >> st) & 63
            if nxt == U8_REJECT:
                break
            st = nxt
            k += 1
        if st == U8_ACCEPT:
            memcpy(o, p, k)
            o += k
            p += k
        else:
            # the lead plus the continuation bytes that were still possible: one U+FFFD
            o[0] = 0xEF
            o[1] = 0xBF
            o[2] = 0xBD
            o += 3
            p += k
    out.len = o - out.data
    return 0


cdef inline uint64_t _go_special8(uint64_t w) noexcept nogil:
    """Non-zero if one of the 8 bytes is a backslash, a double quote or a newline."""
    return has_byte8(w, 0x5C5C5C5C5C5C5C5CULL) | has_byte8(w, 0x2222222222222222ULL) \
        | has_byte8(w, 0x0A0A0A0A0A0A0A0AULL)


cdef inline int go_rune_digits(const uint8_t* p, int width, uint32_t* cp) noexcept nogil:
    """The rune of a Go \\u (4) or \\U (8) escape's hex digits at p: 0, -1 if a digit is not
    hex, -2 if the rune is a surrogate or beyond U+10FFFF."""
    cdef int k, d
    cp[0] = 0
    for k in range(width):
        d = HEX_VAL[p[k]]
        if d < 0:
            return -1
        cp[0] = (cp[0] << 4) | <uint32_t>d
    if cp[0] > 0x10FFFF or 0xD800 <= cp[0] <= 0xDFFF:
        return -2
    return 0


cdef int go_unquote(const uint8_t* p, Py_ssize_t n, Buf* out, const char** why) noexcept nogil:
    """Invert Go strconv.Quote (quotes already removed) into raw bytes appended to `out`: 0,
    RC_FAILED with the fault in `why`, or RC_NO_MEMORY (`why` untouched)."""
    cdef const uint8_t* e = p + n
    cdef uint8_t* o
    cdef int v
    cdef uint32_t cp
    cdef int width
    if buf_reserve(out, n) < 0:   # unquoting never grows the text
        return RC_NO_MEMORY
    o = out.data + out.len
    while p < e:
        # runs of bytes that are not '\\', '"' or newline, 8 at a time
        while e - p >= 8 and not _go_special8(load_le64(p)):
            memcpy(o, p, 8)
            o += 8
            p += 8
        if p >= e:
            break
        if p[0] != 92:
            if p[0] == 34 or p[0] == 10:
                why[0] = "invalid Go-quoted string (raw quote or newline)"
                return -1
            o[0] = p[0]
            o += 1
            p += 1
            continue
        if e - p < 2:
            why[0] = "invalid Go escape at end of string"
            return -1
        v = GO_ESCAPE[p[1]]
        if v >= 0:
            o[0] = <uint8_t>v
            o += 1
            p += 2
        elif p[1] == 120:
            if e - p < 4 or HEX_VAL[p[2]] < 0 or HEX_VAL[p[3]] < 0:
                why[0] = "invalid \\x escape"
                return -1
            o[0] = <uint8_t>((HEX_VAL[p[2]] << 4) | HEX_VAL[p[3]])
            o += 1
            p += 4
        elif 48 <= p[1] <= 55:
            if e - p < 4 or not (48 <= p[2] <= 55) or not (48 <= p[3] <= 55):
                why[0] = "invalid octal escape"
                return -1
            v = ((p[1] - 48) << 6) | ((p[2] - 48) << 3) | (p[3] - 48)
            if v > 255:
                why[0] = "invalid octal escape"
                return -1
            o[0] = <uint8_t>v
            o += 1
            p += 4
        elif p[1] == 117 or p[1] == 85:
            width = 4 if p[1] == 117 else 8
            if e - p < 2 + width:
                why[0] = "invalid \\u escape"
                return -1
            v = go_rune_digits(p + 2, width, &cp)
            if v < 0:
                why[0] = "invalid \\u escape" if v == -1 else "invalid rune in \\u escape"
                return -1
            # a \u escape of 4 hex digits yields at most 3 bytes from 6; 8 digits at most 4 from 10
            o += utf8_put(o, cp)
            p += 2 + width
        else:
            why[0] = "invalid Go escape"
            return -1
    out.len = o - out.data
    return 0


cdef enum:
    GO_JSON_ELSEWHERE = 1     # go_unquote_json: not its subset; the two passes decide


cdef int go_unquote_json(const uint8_t* p, Py_ssize_t n, Buf* out) noexcept nogil:
    """go_unquote(json_unescape(p[:n])) in one pass, for a JSON string's content that scan_string
    accepted: 0 with the bytes appended to `out`, RC_NO_MEMORY, or GO_JSON_ELSEWHERE (`out` as it
    was) for what it leaves to the two passes: every error, Go's octal escapes, a JSON escape
    that yields a quote, newline, backslash or surrogate.  Binary values in the open
    protocol are escape-dense (a byte >= 0x80 is `\\\\xHH` in the JSON text): two passes cost a
    scratch copy and a second walk over every byte."""
    cdef const uint8_t* e = p + n
    cdef uint8_t* o
    cdef uint32_t cp
    cdef int v, hi, lo, width
    cdef uint8_t g
    if buf_reserve(out, n) < 0:   # neither pass grows the text
        return RC_NO_MEMORY
    o = out.data + out.len
    while True:
        while e - p >= 8 and not has_byte8(load_le64(p), 0x5C5C5C5C5C5C5C5CULL):
            memcpy(o, p, 8)       # scan_string admits no raw quote or control byte: plain bytes
            o += 8
            p += 8
        if p >= e:
            out.len = o - out.data
            return 0
        if p[0] != 92:
            o[0] = p[0]
            o += 1
            p += 1
        elif p[1] != 92:
            # a JSON escape of one character, which Go's text then holds as itself
            if p[1] == 117:
                hex4(p + 2, &cp)
                if cp == 34 or cp == 92 or cp == 10 or 0xD800 <= cp <= 0xDFFF:
                    return GO_JSON_ELSEWHERE
                o += utf8_put(o, cp)
                p += 6
            else:
                v = JSON_ESCAPE[p[1]]
                if v == 10 or v == 34 or v == 92:
                    return GO_JSON_ELSEWHERE
                o[0] = <uint8_t>v
                o += 1
                p += 2
        else:
            # "\\": a backslash in Go's text, whose escape letter is the next JSON character
            if e - p < 3:
                return GO_JSON_ELSEWHERE
            g = p[2]
            if g == 120:
                if e - p < 5:
                    return GO_JSON_ELSEWHERE
                hi = HEX_VAL[p[3]]
                lo = HEX_VAL[p[4]]
                if (hi | lo) < 0:      # a JSON escape there is no hex digit as written
                    return GO_JSON_ELSEWHERE
                o[0] = <uint8_t>((hi << 4) | lo)
                o += 1
                p += 5
            elif g == 117 or g == 85:
                width = 4 if g == 117 else 8
                if e - p < 3 + width:
                    return GO_JSON_ELSEWHERE
                if go_rune_digits(p + 3, width, &cp) < 0:
                    return GO_JSON_ELSEWHERE
                o += utf8_put(o, cp)       # at most 4 bytes from at least 7
                p += 3 + width
            elif g == 92:
                # Go's \\ and \" arrive as \\\\ and \\\" (scan_string saw p[3])
                if p[3] != 92 and p[3] != 34:
                    return GO_JSON_ELSEWHERE
                o[0] = p[3]
                o += 1
                p += 4
            else:
                v = GO_ESCAPE[g]       # g is raw here: never a quote or a backslash
                if v < 0:
                    return GO_JSON_ELSEWHERE
                o[0] = <uint8_t>v
                o += 1
                p += 3


cdef int8_t B64_VAL[256]
cdef const char* B64_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


# each symbol's 6 bits already in place for its position in a group; bit 31 marks a byte
# that is not a symbol, so one OR of four lookups decodes and checks a whole group
cdef uint32_t B64_AT0[256]
cdef uint32_t B64_AT1[256]
cdef uint32_t B64_AT2[256]
cdef uint32_t B64_AT3[256]


cdef void _init_b64() noexcept:
    cdef int i
    for i in range(256):
        B64_VAL[i] = -1
        B64_AT0[i] = B64_AT1[i] = B64_AT2[i] = B64_AT3[i] = 0x80000000u
    for i in range(64):
        B64_VAL[<uint8_t>B64_CHARS[i]] = i
        B64_AT0[<uint8_t>B64_CHARS[i]] = (<uint32_t>i) << 18
        B64_AT1[<uint8_t>B64_CHARS[i]] = (<uint32_t>i) << 12
        B64_AT2[<uint8_t>B64_CHARS[i]] = (<uint32_t>i) << 6
        B64_AT3[<uint8_t>B64_CHARS[i]] = <uint32_t>i

_init_b64()


cdef int b64_decode(const uint8_t* p, Py_ssize_t n, Buf* out, const char** why) noexcept nogil:
    """Strict standard base64 with padding and zero pad bits (what Go emits): 0, RC_FAILED with
    the fault in `why`, or RC_NO_MEMORY (`why` untouched)."""
    cdef Py_ssize_t i, groups
    cdef int a, b, c, d, pad = 0
    cdef uint32_t v
    cdef uint8_t* o
    if n % 4:
        why[0] = "invalid base64"
        return -1
    if n >= 1 and p[n - 1] == 61:
        pad = 1
        if n >= 2 and p[n - 2] == 61:
            pad = 2
    if buf_reserve(out, (n // 4) * 3) < 0:
        return RC_NO_MEMORY
    o = out.data + out.len
    groups = n // 4
    if HAVE_B64_AVX2 and n >= 72:             # two blocks at least (a threshold chosen, not measured)
        i = tf_b64_blocks_avx2(p, n, o)
        p += i
        o += (i // 4) * 3
        groups -= i // 4
    # every group before the last: four symbols, three bytes, no padding to consider
    for i in range(groups - 1):
        v = B64_AT0[p[0]] | B64_AT1[p[1]] | B64_AT2[p[2]] | B64_AT3[p[3]]
        if v & 0x80000000u:
            why[0] = "invalid base64"
            return -1
        o[0] = <uint8_t>(v >> 16)
        o[1] = <uint8_t>(v >> 8)
        o[2] = <uint8_t>v
        o += 3
        p += 4
    if groups:
        a = B64_VAL[p[0]]
        b = B64_VAL[p[1]]
        if pad:
            c = B64_VAL[p[2]] if pad == 1 else 0
            d = 0
            if (pad == 2 and p[2] != 61) or p[3] != 61:
                why[0] = "invalid base64"
                return -1
        else:
            c = B64_VAL[p[2]]
            d = B64_VAL[p[3]]
        if (a | b | c | d) < 0:
            why[0] = "invalid base64"
            return -1
        o[0] = <uint8_t>((a << 2) | (b >> 4))
        if pad == 2:
            if b & 0x0F:
                why[0] = "invalid base64 (non-zero padding bits)"
                return -1
            o += 1
        elif pad == 1:
            if c & 0x03:
                why[0] = "invalid base64 (non-zero padding bits)"
                return -1
            o[1] = <uint8_t>(((b & 0x0F) << 4) | (c >> 2))
            o += 2
        else:
            o[1] = <uint8_t>(((b & 0x0F) << 4) | (c >> 2))
            o[2] = <uint8_t>(((c & 0x03) << 6) | d)
            o += 3
    out.len = o - out.data
    return 0


cdef int b64_encode(const uint8_t* p, Py_ssize_t n, Buf* out) noexcept nogil:
    cdef Py_ssize_t full = n // 3, rem = n % 3, i
    cdef uint8_t* o
    if buf_reserve(out, ((n + 2) // 3) * 4) < 0:
        return -1
    o = out.data + out.len
    for i in range(full):
        o[0] = B64_CHARS[p[0] >> 2]
        o[1] = B64_CHARS[((p[0] & 3) << 4) | (p[1] >> 4)]
        o[2] = B64_CHARS[((p[1] & 15) << 2) | (p[2] >> 6)]
        o[3] = B64_CHARS[p[2] & 63]
        o += 4
        p += 3
    if rem == 1:
        o[0] = B64_CHARS[p[0] >> 2]
        o[1] = B64_CHARS[(p[0] & 3) << 4]
        o[2] = 61
        o[3] = 61
        o += 4
    elif rem == 2:
        o[0] = B64_CHARS[p[0] >> 2]
        o[1] = B64_CHARS[((p[0] & 3) << 4) | (p[1] >> 4)]
        o[2] = B64_CHARS[(p[1] & 15) << 2]
        o[3] = 61
        o += 4
    out.len = o - out.data
    return 0


def _utf8_use_blocks(bint on):
    """Turn the AVX2 block check on or off (for the tests: both paths must agree with Python's
    decoder on a machine that has AVX2); returns whether it is on."""
    global HAVE_U8_AVX2
    HAVE_U8_AVX2 = on and TF_HAVE_U8_AVX2 and tf_cpu_has_avx2()
    return bool(HAVE_U8_AVX2)


def _b64_use_blocks(bint on):
    """Turn the AVX2 base64 blocks on or off (for the tests, as _utf8_use_blocks); returns
    whether they are on."""
    global HAVE_B64_AVX2
    HAVE_B64_AVX2 = on and TF_HAVE_U8_AVX2 and tf_cpu_has_avx2()
    return bool(HAVE_B64_AVX2)


def _utf8_valid(const uint8_t[::1] data):
    """utf8_valid over a bytes-like object (for the tests: it must agree with Python's decoder)."""
    return bool(utf8_valid(&data[0] if data.shape[0] else <const uint8_t*>"", data.shape[0]))


def _go_unquote_json(const uint8_t[::1] data):
    """Test hook: go_unquote_json over a JSON string's content (as scan_string would pass it):
    the bytes, or None where it leaves the value to json_unescape + go_unquote."""
    cdef Buf out
    cdef int rc
    cdef const uint8_t* p = &data[0] if data.shape[0] else <const uint8_t*>""
    memset(&out, 0, sizeof(Buf))
    rc = go_unquote_json(p, data.shape[0], &out)
    try:
        if rc == RC_NO_MEMORY:
            no_memory("the decoded bytes")
        if rc == GO_JSON_ELSEWHERE:
            return None
        return bytes(out.data[:out.len]) if out.len else b""
    finally:
        buf_free(&out)


def _byte_codec(str which, const uint8_t[::1] data):
    """go_unquote ("go") or b64_decode ("b64") over a bytes-like object: the raw bytes, or the
    reason it was refused (for the tests: they must agree with the twin's codecs)."""
    cdef Buf out
    cdef const char* why = NULL
    cdef int rc
    cdef const uint8_t* p = &data[0] if data.shape[0] else <const uint8_t*>""
    memset(&out, 0, sizeof(Buf))
    rc = go_unquote(p, data.shape[0], &out, &why) if which == "go" else b64_decode(p, data.shape[0], &out, &why)
    try:
        if rc == RC_NO_MEMORY:
            no_memory("the decoded bytes")
        if rc < 0:
            return why.decode()
        return bytes(out.data[:out.len]) if out.len else b""
    finally:
        buf_free(&out)
