# A JSON scanner that knows only what TiCDC events need: spans of strings and numbers (no
# Python objects), validated escapes, and an iterative skipper for values we do not use.
# Behaviour matches orjson where the twin relies on it (lone surrogates, depth 1024, grammar).

cdef enum:
    J_ABSENT = 0
    J_NULL = 1
    J_TRUE = 2
    J_FALSE = 3
    J_INT = 4
    J_FLOAT = 5
    J_STR = 6
    J_OBJ = 7
    J_ARR = 8

cdef enum:
    MAX_DEPTH = 1024
    SC_PLAIN = 0
    SC_QUOTE = 1
    SC_BACKSLASH = 2
    SC_CONTROL = 3
    SC_HIGH = 4


cdef struct Span:
    const uint8_t* p     # strings: first byte after the quote; numbers/literals: first byte
    Py_ssize_t n         # strings: bytes between the quotes
    Py_ssize_t off       # offset of the value in the message (for errors)
    int kind
    int esc              # string holds backslash escapes
    int ascii            # string's raw bytes are all < 0x80
    int neg              # number starts with '-'
    int in_scratch       # p is an offset into the protocol's scratch buffer until the message
                         # is read (the buffer may move meanwhile): fix_scratch_spans


cdef inline void span_text(Span* s, const uint8_t* p, Py_ssize_t n, int ascii, int in_scratch) noexcept nogil:
    """s as a string of n bytes at p with no escapes (the fields but off)."""
    s.p = p
    s.n = n
    s.kind = J_STR
    s.esc = 0
    s.ascii = ascii
    s.neg = 0
    s.in_scratch = in_scratch


cdef uint8_t STR_CLASS[256]
cdef int8_t HEX_VAL[256]


cdef void _init_tables() noexcept:
    cdef int i
    for i in range(256):
        STR_CLASS[i] = SC_PLAIN
        HEX_VAL[i] = -1
    for i in range(0x20):
        STR_CLASS[i] = SC_CONTROL
    for i in range(0x80, 256):
        STR_CLASS[i] = SC_HIGH
    STR_CLASS[34] = SC_QUOTE
    STR_CLASS[92] = SC_BACKSLASH
    for i in range(10):
        HEX_VAL[48 + i] = i
    for i in range(6):
        HEX_VAL[65 + i] = 10 + i
        HEX_VAL[97 + i] = 10 + i

_init_tables()


# the byte a two-character escape \<letter> stands for, -1 if none (\u is read apart): JSON's,
# and those of a Go quoted string (strconv.Quote's text, values/text.pxi)
cdef int8_t JSON_ESCAPE[256]
cdef int8_t GO_ESCAPE[256]


cdef void _escape_table(int8_t* table, const char* letters, const char* means) noexcept:
    cdef int i
    for i in range(256):
        table[i] = -1
    i = 0
    while letters[i] != 0:
        table[<uint8_t>letters[i]] = <int8_t>means[i]
        i += 1

_escape_table(JSON_ESCAPE, b'"\\/bfnrt', b'"\\/\x08\x0c\n\r\t')
_escape_table(GO_ESCAPE, b'abfnrtv\\"', b'\x07\x08\x0c\n\r\t\x0b\\"')


cdef inline void skip_ws(Cur* c) noexcept nogil:
    cdef const uint8_t* p = c.pos
    cdef const uint8_t* e = c.end
    if p < e and p[0] > 32:                     # TiCDC writes compact JSON: mostly no space
        return
    while p < e and (p[0] == 32 or p[0] == 10 or p[0] == 13 or p[0] == 9):
        p += 1
    c.pos = p


cdef inline int hex4(const uint8_t* p, uint32_t* out) noexcept nogil:
    cdef int a = HEX_VAL[p[0]], b = HEX_VAL[p[1]], d = HEX_VAL[p[2]], e = HEX_VAL[p[3]]
    if (a | b | d | e) < 0:
        return -1
    out[0] = <uint32_t>((a << 12) | (b << 8) | (d << 4) | e)
    return 0


cdef inline int u_escape(Cur* c, const uint8_t* p, const uint8_t* e, uint32_t* cp,
                         Err* err) noexcept nogil:
    """The code point of the \\u escape at p (p[0] is its backslash) and the bytes it spans (6, or
    12 for a surrogate pair); RC_FAILED with c.pos at p when it is malformed."""
    cdef uint32_t lo
    if e - p < 6 or hex4(p + 2, cp) < 0:
        c.pos = p
        return fail(err, c, "malformed JSON: invalid \\u escape")
    if 0xD800 <= cp[0] <= 0xDBFF:
        if e - p < 12 or p[6] != 92 or p[7] != 117 or hex4(p + 8, &lo) < 0 \
                or not (0xDC00 <= lo <= 0xDFFF):
            c.pos = p
            return fail(err, c, "malformed JSON: lone high surrogate")
        cp[0] = 0x10000 + ((cp[0] - 0xD800) << 10) + (lo - 0xDC00)
        return 12
    if 0xDC00 <= cp[0] <= 0xDFFF:
        c.pos = p
        return fail(err, c, "malformed JSON: lone low surrogate")
    return 6


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_ctz(unsigned int) nogil


# 16 bytes at a time where SSE2 exists (every x86-64); elsewhere the 8-byte SWAR loop alone.
cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #define TF_SIMD16 1
    /* bit i set: byte i is '"', '\\', < 0x20 or >= 0x80 */
    static inline unsigned tf_special16(const unsigned char* p) {
        __m128i v = _mm_loadu_si128((const __m128i*)p);
        __m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x22));
        __m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C));
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), _mm_or_si128(ctl, v)));
    }
    /* the same without bytes >= 0x80: once a string is known to be non-ASCII, its CJK or emoji
       bytes no longer stop the run (utf8_valid checks them afterwards, in one pass) */
    static inline unsigned tf_special16_text(const unsigned char* p) {
        __m128i v = _mm_loadu_si128((const __m128i*)p);
        __m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x22));
        __m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5C));
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), ctl));
    }
    #else
    #define TF_SIMD16 0
    static inline unsigned tf_special16(const unsigned char* p) { (void)p; return 1; }
    static inline unsigned tf_special16_text(const unsigned char* p) { (void)p; return 1; }
    #endif
    """
    const int TF_SIMD16
    unsigned int tf_special16(const uint8_t* p) nogil
    unsigned int tf_special16_text(const uint8_t* p) nogil


cdef inline uint64_t _special8(uint64_t w) noexcept nogil:
    """Non-zero if one of the 8 bytes may be a quote, a backslash, < 0x20 or >= 0x80."""
    cdef uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL
    cdef uint64_t q = w ^ 0x2222222222222222ULL
    cdef uint64_t b = w ^ 0x5C5C5C5C5C5C5C5CULL
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - 0x2020202020202020ULL) & ~w) | w) & highs


cdef inline uint64_t _special8_text(uint64_t w) noexcept nogil:
    """_special8 without flagging bytes >= 0x80 themselves (a flag may still land on one: the
    borrow of a true hit carries upward; the caller checks the lowest flagged byte exactly)."""
    cdef uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL
    cdef uint64_t q = w ^ 0x2222222222222222ULL
    cdef uint64_t b = w ^ 0x5C5C5C5C5C5C5C5CULL
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - 0x2020202020202020ULL) & ~w)) & highs


cdef inline const uint8_t* _plain_run(const uint8_t* p, const uint8_t* e, bint text) noexcept nogil:
    """Past the run of plain string bytes at p, 16 or 8 at a time (SWAR: any '"', '\\', byte < 0x20
    or, unless text, >= 0x80 stops it; the lowest flagged byte is exact), then byte by byte. Each
    caller passes text as a constant, so each inlined copy keeps only its own masks."""
    cdef unsigned int m16
    cdef uint64_t m
    if TF_SIMD16:
        while e - p >= 16:
            m16 = tf_special16_text(p) if text else tf_special16(p)
            if m16:
                return p + __builtin_ctz(m16)
            p += 16
    while e - p >= 8:
        m = _special8_text(load_le64(p)) if text else _special8(load_le64(p))
        if m:
            return p + (__builtin_ctzll(m) >> 3)
        p += 8
    if text:
        while p < e and (STR_CLASS[p[0]] == SC_PLAIN or STR_CLASS[p[0]] == SC_HIGH):
            p += 1
    else:
        while p < e and STR_CLASS[p[0]] == 0:
            p += 1
    return p


cdef int scan_string(Cur* c, Span* s, Err* err) noexcept nogil:
    """c.pos is at the opening quote; on success it is just past the closing quote."""
    cdef const uint8_t* p = c.pos + 1
    cdef const uint8_t* e = c.end
    cdef uint8_t cls, ch
    cdef uint32_t cp
    cdef int n
    s.p = p
    s.off = c.pos - c.start
    s.esc = 0
    s.ascii = 1
    s.neg = 0        # every field set: spans live in reused entry arrays (see fix_scratch_spans)
    s.in_scratch = 0
    s.kind = J_STR
    while True:
        # The common case: runs of plain bytes, 16 or 8 at a time; the byte loop below decides
        # exactly where the run stopped.
        p = _plain_run(p, e, 0) if s.ascii else _plain_run(p, e, 1)
        if p >= e:
            c.pos = p
            return fail(err, c, "malformed JSON: unterminated string")
        ch = p[0]
        if ch == 34:        # most runs end at the closing quote: no class look-up on the way out
            break
        cls = STR_CLASS[ch]
        if cls == SC_PLAIN:
            p += 1
        elif cls == SC_HIGH:
            s.ascii = 0
            p += 1
        elif cls == SC_CONTROL:
            c.pos = p
            return fail(err, c, "malformed JSON: control character in string")
        else:
            s.esc = 1
            if p + 1 >= e:
                c.pos = p
                return fail(err, c, "malformed JSON: unterminated string")
            ch = p[1]
            if ch == 117:  # \uXXXX
                n = u_escape(c, p, e, &cp, err)
                if n < 0:
                    return n
                if cp >= 0x80:          # a surrogate pair's code point is too
                    s.ascii = 0
                p += n
            elif ch == 34 or ch == 92 or ch == 47 or ch == 98 or ch == 102 or ch == 110 \
                    or ch == 114 or ch == 116:
                p += 2
            else:
                c.pos = p
                return fail(err, c, "malformed JSON: invalid escape")
    s.n = p - s.p
    c.pos = p + 1
    return 0


cdef inline Py_ssize_t utf8_put(uint8_t* o, uint32_t cp) noexcept nogil:
    if cp < 0x80:
        o[0] = <uint8_t>cp
        return 1
    if cp < 0x800:
        o[0] = <uint8_t>(0xC0 | (cp >> 6))
        o[1] = <uint8_t>(0x80 | (cp & 0x3F))
        return 2
    if cp < 0x10000:
        o[0] = <uint8_t>(0xE0 | (cp >> 12))
        o[1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
        o[2] = <uint8_t>(0x80 | (cp & 0x3F))
        return 3
    o[0] = <uint8_t>(0xF0 | (cp >> 18))
    o[1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
    o[2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
    o[3] = <uint8_t>(0x80 | (cp & 0x3F))
    return 4


cdef int json_unescape(const uint8_t* p, Py_ssize_t n, Buf* out) noexcept nogil:
    """Append the unescaped bytes of a string span already validated by scan_string."""
    cdef const uint8_t* e = p + n
    cdef uint8_t* o
    cdef uint32_t cp, lo
    cdef uint8_t ch
    if buf_reserve(out, n) < 0:  # unescaping never grows the text
        return -1
    o = out.data + out.len
    while p < e:
        while e - p >= 8 and not has_byte8(load_le64(p), 0x5C5C5C5C5C5C5C5CULL):
            memcpy(o, p, 8)
            o += 8
            p += 8
        if p >= e:
            break
        ch = p[0]
        if ch != 92:
            o[0] = ch
            o += 1
            p += 1
            continue
        ch = p[1]
        if ch == 117:
            hex4(p + 2, &cp)
            p += 6
            if 0xD800 <= cp <= 0xDBFF:
                hex4(p + 2, &lo)
                p += 6
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
            o += utf8_put(o, cp)
            continue
        o[0] = <uint8_t>JSON_ESCAPE[ch]
        o += 1
        p += 2
    out.len = o - out.data
    return 0


cdef inline int span_bytes(const Span* s, Buf* tmp, const uint8_t** p, Py_ssize_t* n) noexcept nogil:
    """The unescaped bytes of a string span: its own when it has no escapes (zero copy), else
    unescaped into tmp (emptied first).  0, or -1 out of memory."""
    if not s.esc:
        p[0] = s.p
        n[0] = s.n
        return 0
    tmp.len = 0
    if json_unescape(s.p, s.n, tmp) < 0:
        return -1
    p[0] = tmp.data
    n[0] = tmp.len
    return 0


cdef inline int is_digit(uint8_t ch) noexcept nogil:
    return 48 <= ch <= 57


cdef inline const uint8_t* _skip_digits(const uint8_t* p, const uint8_t* e) noexcept nogil:
    """Past a run of ASCII digits, a word at a time: the first non-digit byte by a count of
    trailing zeros (full-precision doubles carry 16-17 digits, integers 10-20)."""
    cdef uint64_t x
    while e - p >= 8:
        x = non_digit_bytes(load_le64(p))
        if x:
            return p + (__builtin_ctzll(x) >> 3)
        p += 8
    while p < e and is_digit(p[0]):
        p += 1
    return p


cdef int scan_number(Cur* c, Span* s, Err* err) noexcept nogil:
    cdef const uint8_t* p = c.pos
    cdef const uint8_t* e = c.end
    s.p = p
    s.off = p - c.start
    s.kind = J_INT
    s.esc = 0
    s.ascii = 1
    s.neg = 0
    s.in_scratch = 0
    if p < e and p[0] == 45:
        s.neg = 1
        p += 1
    if p >= e or not is_digit(p[0]):
        c.pos = p
        return fail(err, c, "malformed JSON: invalid number")
    if p[0] == 48:
        p += 1
        if p < e and is_digit(p[0]):
            c.pos = p
            return fail(err, c, "malformed JSON: number with leading zero")
    else:
        p = _skip_digits(p, e)
    if p < e and p[0] == 46:
        s.kind = J_FLOAT
        p += 1
        if p >= e or not is_digit(p[0]):
            c.pos = p
            return fail(err, c, "malformed JSON: invalid number")
        p = _skip_digits(p, e)
    if p < e and (p[0] == 101 or p[0] == 69):
        s.kind = J_FLOAT
        p += 1
        if p < e and (p[0] == 43 or p[0] == 45):
            p += 1
        if p >= e or not is_digit(p[0]):
            c.pos = p
            return fail(err, c, "malformed JSON: invalid number")
        p = _skip_digits(p, e)
    s.n = p - s.p
    c.pos = p
    return 0


cdef inline int scan_literal(Cur* c, Span* s, const char* lit, int n, int kind, Err* err) noexcept nogil:
    s.p = c.pos
    s.off = c.pos - c.start
    s.esc = 0
    s.ascii = 1
    s.neg = 0
    s.in_scratch = 0
    if c.end - c.pos < n or memcmp(c.pos, lit, n) != 0:
        return fail(err, c, "malformed JSON: invalid literal")
    c.pos += n
    s.n = n
    s.kind = kind
    return 0


cdef int skip_container(Cur* c, int depth, Err* err, Buf* checked_numbers) noexcept nogil:
    """Skip an object or array starting at c.pos; `depth` is its nesting level (root = 1).
    checked_numbers: NULL, or the capture reader's scratch (framing/capture.pxi), whose numbers
    are checked as it reads them (_cap_scalar)."""
    cdef uint8_t stack[MAX_DEPTH + 1]
    cdef int sp = 0
    cdef int state   # 2 = just opened, 1 = need an element, 0 = after an element
    cdef uint8_t ch, top
    cdef Span tmp
    if depth > MAX_DEPTH:
        return fail(err, c, "malformed JSON: nesting deeper than 1024")
    stack[0] = c.pos[0]
    sp = 1
    c.pos += 1
    state = 2
    while sp > 0:
        skip_ws(c)
        if c.pos >= c.end:
            return fail(err, c, "malformed JSON: unexpected end of data")
        ch = c.pos[0]
        top = stack[sp - 1]
        if state != 1 and ((top == 123 and ch == 125) or (top == 91 and ch == 93)):
            c.pos += 1
            sp -= 1
            state = 0
            continue
        if state == 0:
            if ch != 44:
                return fail(err, c, "malformed JSON: expected ',' or a closing bracket")
            c.pos += 1
            skip_ws(c)
            if c.pos >= c.end:
                return fail(err, c, "malformed JSON: unexpected end of data")
            ch = c.pos[0]
        if top == 123:
            if obj_key(c, &tmp, err) < 0:
                return -1
            ch = c.pos[0]
        if ch == 123 or ch == 91:
            if depth + sp > MAX_DEPTH:
                return fail(err, c, "malformed JSON: nesting deeper than 1024")
            stack[sp] = ch
            sp += 1
            c.pos += 1
            state = 2
            continue
        if checked_numbers != NULL:
            if _cap_scalar(c, &tmp, err, checked_numbers) < 0:
                return -1
        elif scan_scalar(c, &tmp, err) < 0:
            return -1
        state = 0
    return 0


cdef inline int scan_scalar(Cur* c, Span* s, Err* err) noexcept nogil:
    cdef uint8_t ch = c.pos[0]
    if ch == 34:
        return scan_string(c, s, err)
    if ch == 45 or is_digit(ch):
        return scan_number(c, s, err)
    if ch == 116:
        return scan_literal(c, s, b"true", 4, J_TRUE, err)
    if ch == 102:
        return scan_literal(c, s, b"false", 5, J_FALSE, err)
    if ch == 110:
        return scan_literal(c, s, b"null", 4, J_NULL, err)
    return fail(err, c, "malformed JSON: unexpected character")


cdef int scan_value(Cur* c, Span* s, int depth, Err* err) noexcept nogil:
    """Scan any value at c.pos (whitespace already skipped). Containers are skipped."""
    if c.pos >= c.end:
        return fail(err, c, "malformed JSON: unexpected end of data")
    cdef uint8_t ch = c.pos[0]
    if ch == 123 or ch == 91:
        s.p = c.pos
        s.off = c.pos - c.start
        s.kind = J_OBJ if ch == 123 else J_ARR
        s.esc = 0
        s.ascii = 1
        s.neg = 0
        s.in_scratch = 0
        if skip_container(c, depth, err, NULL) < 0:
            return -1
        s.n = c.pos - s.p
        return 0
    return scan_scalar(c, s, err)


# ---- object walking for the shapes we know
cdef inline int obj_open(Cur* c, Err* err) noexcept nogil:
    """At '{': consume it. Returns 1 if the object is empty (and consumed), 0 if members follow."""
    c.pos += 1
    skip_ws(c)
    if c.pos >= c.end:
        return fail(err, c, "malformed JSON: unexpected end of data")
    if c.pos[0] == 125:
        c.pos += 1
        return 1
    return 0


cdef inline int obj_key(Cur* c, Span* key, Err* err) noexcept nogil:
    if c.pos >= c.end or c.pos[0] != 34:
        return fail(err, c, "malformed JSON: expected a string key")
    if scan_string(c, key, err) < 0:
        return -1
    skip_ws(c)
    if c.pos >= c.end or c.pos[0] != 58:
        return fail(err, c, "malformed JSON: expected ':'")
    c.pos += 1
    skip_ws(c)
    if c.pos >= c.end:
        return fail(err, c, "malformed JSON: unexpected end of data")
    return 0


cdef inline void plain_key_span(const Cur* c, Span* key, const uint8_t* p, Py_ssize_t qn, int ascii) noexcept nogil:
    """The key spelled `"name":` (qn bytes, no escape) at p, as obj_key would have read it."""
    key.p = p + 1
    key.n = qn - 3
    key.off = p - c.start
    key.kind = J_STR
    key.esc = 0
    key.ascii = ascii
    key.neg = 0
    key.in_scratch = 0


cdef inline int obj_key_expected(Cur* c, Span* key, const uint8_t* quoted, Py_ssize_t qn, int ascii,
                                 Err* err) noexcept nogil:
    """obj_key when the key is probably the one spelled `quoted`: `"name":`, qn bytes, the name
    holding no quote, backslash or control byte (so those bytes can only be that one key and its
    colon).  The whole spelling is compared at once, the way compact JSON writes it.  1 read,
    exactly as obj_key would; 0 it is another key or another spelling (cursor unchanged); -1 an
    error obj_key would report too."""
    cdef const uint8_t* p = c.pos
    if c.end - p < qn or not bytes_eq(p, quoted, qn):
        return 0
    plain_key_span(c, key, p, qn, ascii)
    c.pos = p + qn
    skip_ws(c)
    if c.pos >= c.end:
        return fail(err, c, "malformed JSON: unexpected end of data")
    return 1


cdef int name_table(tuple names, int count, const char** texts, Py_ssize_t* lens) except -1:
    """texts[k], lens[k]: the bytes of names[k] and their length, the known-key tables key_id and
    known_keys read (`count` entries each).  `names` (a tuple of bytes) must outlive the tables:
    a module-level tuple."""
    cdef Py_ssize_t k
    cdef bytes b
    if len(names) != count:
        raise AssertionError("name_table: the names do not fit the table")
    for k in range(count):
        b = names[k]
        texts[k] = <const char*>b
        lens[k] = len(b)
    return 0


cdef enum:
    KNOWN_KEYS_MAX = 16
    KNOWN_KEYS_BYTES = 384


cdef struct KnownKeys:
    # the known keys of an object (an open event key's, a simple envelope's), made by known_keys
    int count
    const char* texts[KNOWN_KEYS_MAX]     # the tables key_id reads
    Py_ssize_t lens[KNOWN_KEYS_MAX]
    const char* quoted[KNOWN_KEYS_MAX]    # their `"name":` spellings (obj_key_expected), in spelling[]
    char spelling[KNOWN_KEYS_BYTES]


cdef int known_keys(KnownKeys* keys, tuple names, int count) except -1:
    """The tables of an object's `count` known keys `names` (bytes, in the order of their ids;
    kept alive by the caller, see name_table) and their `"name":` spellings."""
    cdef Py_ssize_t k, at = 0
    if count > KNOWN_KEYS_MAX:
        raise AssertionError("known_keys: too many known keys")
    keys.count = count
    name_table(names, count, keys.texts, keys.lens)
    for k in range(keys.count):
        if at + keys.lens[k] + 3 > KNOWN_KEYS_BYTES:
            raise AssertionError("known_keys: the known keys are too long")
        keys.quoted[k] = keys.spelling + at
        keys.spelling[at] = 34
        memcpy(keys.spelling + at + 1, keys.texts[k], keys.lens[k])
        keys.spelling[at + 1 + keys.lens[k]] = 34
        keys.spelling[at + 2 + keys.lens[k]] = 58
        at += keys.lens[k] + 3
    return 0


cdef enum:
    KEY_HINT_SLOTS = 16


cdef struct KeyHint:
    # A position hint for an object of known keys: the known key read at each member position of
    # the last such object (-1: another key).  A producer repeats its key order, so the key at
    # position i is first compared whole with the one found there last time (obj_key_expected).
    int8_t at[KEY_HINT_SLOTS]


cdef inline void key_hint_init(KeyHint* h) noexcept nogil:
    memset(h.at, 0xFF, sizeof(h.at))


cdef inline int hinted_key(Cur* c, Span* name, KeyHint* h, int pos, KnownKeys* keys, int* kid,
                           Err* err) noexcept nogil:
    """obj_key for member `pos` of an object whose known keys are `keys`: kid gets the key's
    index among them or -1.  0, or RC_FAILED as obj_key."""
    cdef int r, k = h.at[pos] if pos < KEY_HINT_SLOTS else -1
    if k >= 0:
        r = obj_key_expected(c, name, <const uint8_t*>keys.quoted[k], keys.lens[k] + 3, 1, err)
        if r < 0:
            return r
        if r == 1:
            kid[0] = k
            return 0
    if obj_key(c, name, err) < 0:
        return RC_FAILED
    k = key_id(name, keys.texts, keys.lens, keys.count)
    if pos < KEY_HINT_SLOTS:
        h.at[pos] = <int8_t>k
    kid[0] = k
    return 0


cdef inline int obj_more(Cur* c, Err* err) noexcept nogil:
    """After a member, in obj_open's terms: 0 if another member follows (',' consumed), 1 at '}'
    (consumed), -1 on a fault.  So the members of an object are read as
    `r = obj_open(c, err)`, `while r == 0:` (one member, then `r = obj_more(c, err)`), and after
    the loop `r < 0` is the fault of either."""
    skip_ws(c)
    if c.pos < c.end:
        if c.pos[0] == 44:
            c.pos += 1
            skip_ws(c)
            return 0
        if c.pos[0] == 125:
            c.pos += 1
            return 1
        return fail(err, c, "malformed JSON: expected ',' or '}'")
    return fail(err, c, "malformed JSON: unexpected end of data")


cdef inline int key_is(const Span* k, const char* lit, Py_ssize_t n) noexcept nogil:
    if not k.esc:
        return k.n == n and bytes_eq(k.p, <const uint8_t*>lit, n)
    return _escaped_key_is(k, lit, n)


cdef int key_id(const Span* name, const char** texts, const Py_ssize_t* lens, int count) noexcept nogil:
    """Index of the key among `count` known names (escaped spellings too), -1 for any other."""
    cdef int k
    for k in range(count):
        if key_is(name, texts[k], lens[k]):
            return k
    return -1


cdef int _escaped_key_is(const Span* k, const char* lit, Py_ssize_t n) noexcept nogil:
    # unescaped into a stack buffer (unescaping never makes the text longer), so no allocation
    # can fail and make a known key read as an unknown one
    cdef uint8_t text[64]
    cdef Buf tmp
    if k.n > 64:
        return 0
    tmp.data = text
    tmp.len = 0
    tmp.cap = 64
    json_unescape(k.p, k.n, &tmp)
    return tmp.len == n and bytes_eq(<const uint8_t*>(tmp.data), <const uint8_t*>(lit), n)


cdef inline int doc_end(Cur* c, Err* err) noexcept nogil:
    skip_ws(c)
    if c.pos != c.end:
        return fail(err, c, "malformed JSON: trailing characters")
    return 0


# ---- routing: which table a message is about, without parsing it
cdef struct TopMembers:
    Span type
    Span database
    Span table
    int has_type, has_database, has_table


cdef int scan_top_members(const uint8_t* p, Py_ssize_t n, TopMembers* t) noexcept nogil:
    """Read only the top-level "type", "database" and "table" members of a JSON object; every
    other member is skipped (its grammar checked, nothing converted).  0: read; 1: only a full
    parse can tell — not an object, malformed, an escaped member name, a repeated member (the
    last copy wins) or a tableSchema/preTableSchema member (a control message)."""
    cdef Cur c
    cdef Err err     # a sink, never raised: a fault here only means "a full parse must tell"
    cdef Span key, v
    cdef int r
    memset(t, 0, sizeof(TopMembers))
    memset(&err, 0, sizeof(Err))
    c.start = p
    c.pos = p
    c.end = p + n
    skip_ws(&c)
    if c.pos >= c.end or c.pos[0] != 123:
        return 1
    r = obj_open(&c, &err)
    while r == 0:
        if obj_key(&c, &key, &err) < 0 or key.esc:
            return 1
        if scan_value(&c, &v, 2, &err) < 0:
            return 1
        if key_is(&key, b"type", 4):
            if t.has_type:
                return 1
            t.type = v
            t.has_type = 1
        elif key_is(&key, b"database", 8):
            if t.has_database:
                return 1
            t.database = v
            t.has_database = 1
        elif key_is(&key, b"table", 5):
            if t.has_table:
                return 1
            t.table = v
            t.has_table = 1
        elif key_is(&key, b"tableSchema", 11) or key_is(&key, b"preTableSchema", 14):
            return 1
        r = obj_more(&c, &err)
    if r < 0 or doc_end(&c, &err) < 0:
        return 1
    return 0
