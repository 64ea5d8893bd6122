/* The simple protocol's Avro floor for orders10: each data/old map key found in a perfect hash of
   the ten column names (TiCDC writes Go map order); -DFLOOR_TWO_PASS reads each map twice. */
#define FLOOR_FAST_VARINT
#include "avro_prelude.h"
/* a decimal text at scale 2 -> its unscaled value (fits 64 bits for DECIMAL(12,2)) */
static inline int64_t decimal_2(const uint8_t *p, int64_t n) {
    int neg = n && p[0] == '-'; int64_t v = 0, i = neg, frac = -1;
    for (; i < n; i++) {
        if (p[i] == '.') { frac = 0; continue; }
        v = v * 10 + (p[i] - '0');
        if (frac >= 0) frac++;
    }
    if (frac < 0) frac = 0;
    if (frac > 2) bad = 1;
    for (; frac < 2; frac++) v *= 10;
    return neg ? -v : v;
}

enum { C_ID, C_U32, C_DEC, C_F64, C_F32, C_I16, C_S6, C_S7, C_DT, C_TS, NCOL };
static const char *NAMES[NCOL] = {"id", "c01_int_u", "c02_decimal", "c03_double_full", "c04_float_full",
                                  "c05_smallint", "c06_varchar_intl", "c07_text", "c08_datetime", "c09_timestamp3"};
static int slot_col[64];
static int64_t name_len[NCOL];
static uint64_t name_w[NCOL][2];       /* each name's first 16 bytes, zero-padded */
static inline uint64_t load64(const uint8_t *p) { uint64_t x; memcpy(&x, p, 8); return x; }
static inline uint64_t mask(int64_t n) { return n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1; }
static uint64_t hash_mul = 0;
static inline unsigned slot_of(const uint8_t *k, int64_t n) {
    return (unsigned)(((load64(k) & mask(n)) ^ (uint64_t)n) * hash_mul >> 58);
}
/* the column of a map key: a perfect hash of the ten names (one multiply, one slot), then two
   masked words compared (the input has 16 bytes of slack) */
static inline int col_of(const uint8_t *k, int64_t n) {
    if (n == 0 || n > 16) return -1;
    int j = slot_col[slot_of(k, n)];
    if (j < 0 || name_len[j] != n || (load64(k) & mask(n)) != name_w[j][0]
            || (n > 8 && (load64(k + 8) & mask(n - 8)) != name_w[j][1])) return -1;
    return j;
}

/* the columns the floor writes, one slot per row */
static int64_t *ts, *id, *dt, *tz, *dec;
static uint32_t *u32; static int16_t *i16;
static double *f64; static float *f32;
static Var s6, s7;

/* a map value of the simple protocol's union: null, long, float, double, string, bytes,
   Timestamp{location, value}, UnsignedBigint{value} -- skipped */
static inline void skip_value(Cur *c, int64_t b) {
    switch (b) {
    case 0: break;
    case 1: case 7: zz(c); break;
    case 2: skip(c, 4); break;
    case 3: skip(c, 8); break;
    case 4: case 5: { int64_t n = len(c); c->p += n; break; }
    case 6: { int64_t n = len(c); c->p += n; n = len(c); c->p += n; break; }
    default: bad = 1;
    }
}

/* the value of column j (union branch b, not null) at c into row r */
static inline void put(int j, int64_t b, Cur *c, int64_t r) {
    switch (j) {
    case C_ID: if (b != 1) bad = 1; id[r] = zz(c); break;
    case C_U32: { if (b != 1) bad = 1; int64_t x = zz(c); if (x < 0 || x > 0xffffffffLL) bad = 1; u32[r] = (uint32_t)x; break; }
    case C_I16: { if (b != 1) bad = 1; int64_t x = zz(c); if (x < -32768 || x > 32767) bad = 1; i16[r] = (int16_t)x; break; }
    case C_F64: if (b != 3 || c->end - c->p < 8) { bad = 1; break; } memcpy(f64 + r, c->p, 8); c->p += 8; break;
    case C_F32: if (b != 2 || c->end - c->p < 4) { bad = 1; break; } memcpy(f32 + r, c->p, 4); c->p += 4; break;
    case C_DEC: { if (b != 4) bad = 1; int64_t n = len(c); dec[2 * r] = decimal_2(c->p, n); dec[2 * r + 1] = dec[2 * r] < 0 ? -1 : 0; c->p += n; break; }
    case C_S6: { if (b != 4) bad = 1; int64_t n = len(c); var_push(&s6, r, c->p, n); c->p += n; break; }
    case C_S7: { if (b != 4) bad = 1; int64_t n = len(c); var_push(&s7, r, c->p, n); c->p += n; break; }
    case C_DT: { if (b != 4) bad = 1; int64_t n = len(c); dt[r] = datetime_us(c->p, n); c->p += n; break; }
    case C_TS: {
        if (b != 6) bad = 1;
        int64_t n = len(c);
        if (n != 3 || memcmp(c->p, "UTC", 3) != 0) bad = 1;   /* the zone: UTC only here */
        c->p += n; n = len(c); tz[r] = datetime_us(c->p, n); c->p += n; break;
    }
    }
}

#ifdef FLOOR_TWO_PASS
#ifndef __BMI2__
#error "the two-pass floor reads varints with BMI2's pext"
#endif
/* bytes of the value of union branch b at c, without a branch on b: the sizes of every branch
   from one word (the input has slack after it), then a table look-up; a Timestamp's second
   string is the one case tested */
static inline int64_t value_size(const Cur *c, int64_t b) {
    uint64_t x = load64(c->p);
    uint64_t stop = ~x & 0x8080808080808080ULL;
    int64_t vsz = stop ? (__builtin_ctzll(stop) >> 3) + 1 : 9;
    uint64_t raw = _pext_u64(x, 0x7f7f7f7f7f7f7f7fULL >> (64 - 8 * (vsz > 8 ? 8 : vsz)));
    int64_t str = vsz + ((int64_t)(raw >> 1) ^ -(int64_t)(raw & 1));
    int64_t sz[8] = {0, vsz, 4, 8, str, str, str, vsz};
    int64_t s = sz[b & 7];
    if (b == 6) { Cur t = {c->p + s, c->end}; int64_t n = len(&t); s = t.p + n - c->p; }
    if (b < 0 || b > 7 || s < 0 || s > c->end - c->p) { bad = 1; return c->end - c->p; }
    return s;
}
#endif

/* one map.  By default each entry is converted as its key comes, so the branches on the column
   follow the map's order; with FLOOR_TWO_PASS the first pass finds each column's value (the key
   looked up, the value's size from its branch) and the second converts them in the table's
   column order, so those branches repeat row after row instead of following Go's map order */
static inline void image(Cur *c, int keep, uint8_t *vb, int64_t r) {
#ifdef FLOOR_TWO_PASS
    const uint8_t *at[NCOL]; int64_t br[NCOL];
#endif
    for (;;) {
        int64_t count = zz(c);
        if (count == 0) break;
        if (count < 0) { count = -count; zz(c); }
        for (int64_t e = 0; e < count; e++) {
            int64_t kn = len(c);
            const uint8_t *k = c->p; c->p += kn;
            int64_t b = zz(c);
#ifdef FLOOR_TWO_PASS
            int64_t s = value_size(c, b);
            if (keep) {
                int j = col_of(k, kn);
                if (j < 0) bad = 1; else { at[j] = c->p; br[j] = b; vb[j] = b != 0; }
            }
            c->p += s;
#else
            int j = keep ? col_of(k, kn) : -1;
            if (j < 0 || b == 0) { if (keep && j < 0) bad = 1; skip_value(c, b); continue; }
            vb[j] = 1;
            put(j, b, c, r);
#endif
        }
    }
#ifdef FLOOR_TWO_PASS
    if (!keep) return;
    for (int j = 0; j < NCOL; j++) {
        if (!vb[j]) continue;
        Cur v = {at[j], c->end};
        put(j, br[j], &v, r);
    }
#endif
}

int main(int argc, char **argv) {
    long sz;
    uint8_t *buf = read_corpus(argv[1], &sz);
    double seconds = atof(argv[2]);
    uint8_t padded[NCOL][24];
    for (int j = 0; j < NCOL; j++) {
        memset(padded[j], 0, 24);
        name_len[j] = strlen(NAMES[j]);
        memcpy(padded[j], NAMES[j], name_len[j]);
        name_w[j][0] = load64(padded[j]);
        name_w[j][1] = load64(padded[j] + 8);
    }
    for (uint64_t m = 0x9E3779B97F4A7C15ULL;; m += 0x2545F4914F6CDD1DULL) {   /* find a perfect hash */
        int ok = 1;
        hash_mul = m;
        for (int s = 0; s < 64; s++) slot_col[s] = -1;
        for (int j = 0; j < NCOL && ok; j++) {
            unsigned s = slot_of(padded[j], name_len[j]);
            if (slot_col[s] >= 0) ok = 0; else slot_col[s] = j;
        }
        if (ok) break;
    }
    int64_t msgs = 0;
    for (long at = 0; at < sz; msgs++) { int32_t vn; memcpy(&vn, buf + at, 4); at += 4 + vn; }
    ts = malloc(8 * msgs); id = malloc(8 * msgs); dt = malloc(8 * msgs); tz = malloc(8 * msgs);
    dec = malloc(16 * msgs); u32 = malloc(4 * msgs); i16 = malloc(2 * msgs);
    f64 = malloc(8 * msgs); f32 = malloc(4 * msgs);
    uint8_t *valid = malloc(NCOL * msgs);
    Var op = {malloc(8 * (msgs + 1)), malloc(8 * msgs), 0};
    s6 = (Var){malloc(8 * (msgs + 1)), malloc(sz), 0};
    s7 = (Var){malloc(8 * (msgs + 1)), malloc(sz), 0};
    double best = 1e9, spent = 0;
    int64_t rows = 0;
    while (spent < seconds) {
        struct timespec t0; clock_gettime(CLOCK_MONOTONIC, &t0);
        op.len = s6.len = s7.len = 0; op.off[0] = s6.off[0] = s7.off[0] = 0;
        long at = 0;
        rows = 0;
        for (int64_t m = 0; m < msgs; m++) {
            int32_t vn; memcpy(&vn, buf + at, 4); at += 4;
            Cur c = {buf + at, buf + at + vn}; at += vn;
            if (zz(&c) != 11) bad = 1;                  /* the schema's union: Message */
            int64_t mtype = zz(&c), branch = zz(&c);
            if (mtype != 3 || branch != 3) {            /* a watermark: its three fields */
                if (mtype == 0 && branch == 0) { zz(&c); zz(&c); zz(&c); } else bad = 1;
                continue;
            }
            zz(&c);                                     /* version */
            int64_t n = len(&c); c.p += n;              /* database */
            n = len(&c); c.p += n;                      /* table */
            zz(&c);                                     /* tableID */
            int64_t dml = zz(&c);
            int64_t commit_ts = zz(&c);
            zz(&c); zz(&c);                             /* buildTs, schemaVersion */
            if (zz(&c)) { n = len(&c); c.p += n; }      /* claimCheckLocation */
            if (zz(&c)) { skip(&c, 1); }                /* handleKeyOnly */
            if (zz(&c)) { zz(&c); skip(&c, 1); zz(&c); zz(&c); }  /* checksum */
            int64_t r = rows;
            uint8_t *vb = valid + NCOL * r;
            memset(vb, 0, NCOL);
            for (int img = 0; img < 2; img++)           /* data, then old */
                if (zz(&c)) image(&c, (img == 0) == (dml != 2), vb, r);   /* the row: data, or old for a DELETE */
            if (!vb[C_S6]) var_null(&s6, r);
            if (!vb[C_S7]) var_null(&s7, r);
            var_push(&op, r, (const uint8_t *)(dml == 0 ? "INSERT" : dml == 1 ? "UPDATE" : "DELETE"), 6);
            ts[r] = commit_ts;
            if (c.p != c.end) bad = 1;
            rows++;
        }
        double t = elapsed(&t0);
        if (t < best) best = t;
        spent += t;
    }
    int64_t sum_id = 0, sum_ts = 0, sum_dt = 0, sum_tz = 0; double sum_f64 = 0;
    for (int64_t i = 0; i < rows; i++) {
        if (valid[NCOL * i + C_ID]) sum_id += id[i];
        if (valid[NCOL * i + C_DT]) sum_dt += dt[i];
        if (valid[NCOL * i + C_TS]) sum_tz += tz[i];
        if (valid[NCOL * i + C_F64]) sum_f64 += f64[i];
        if (memcmp(op.data + op.off[i], "DELETE", 6) != 0) sum_ts += ts[i];
    }
    report(best, rows, sum_id, sum_ts, sum_dt + sum_tz, sum_f64, s6.len + s7.len);
    return 0;
}
