"""How far the Avro protocols' typed decode is from the least work any decoder must do (issue 13).

    PYTHONPATH=. python benchmarks/floor.py [--protocol avro|simple-avro] [--rows 10000] [--rounds 7]
    PYTHONPATH=. python benchmarks/floor.py --protocol simple-avro [--two-pass] [--map-order go|table]

The *floor* is a C loop written for exactly one table, the ``orders10`` table of
``benchmarks/goals.py`` (the "10-column stream" of the 5 M rows/s goal), in one protocol:
straight-line code per field (the Avro protocol: its one writer schema; simple Avro: the
protocol's schema, with each map key found in a hash table of the table's ten column names, as
TiCDC writes the map in Go map order), no plan to interpret, every read bounds-checked, every
value written to a preallocated column (validity bytes, offsets, int64/float/double/decimal
values, DATETIME/TIMESTAMP text parsed to microseconds).  It leaves out what a real decoder also does: UTF-8 checks of text, error
context (message, byte offset, column), growing builders, other schemas, the Arrow hand-over and the
Python call.  So a decoder that reads these bytes the way the floor does cannot be faster than
it on this machine (a different way of reading can be: see ``--two-pass``); how much slower the
core is says how much its generality costs.

The script builds the corpus, compiles the floor with the machine's ``gcc -O3 -march=native``
(into a temporary directory; nothing is kept), checks that the floor decodes the same values as
the core (sums of ids, commit timestamps, the two datetime columns, the double column and the
text bytes), then times both in alternating rounds on one CPU: each round is the floor's best of
~0.3 s, then the core's best of ~0.3 s (a ``gc.collect()`` before each call); the ratio of each
round is taken seconds apart, so the host's changes of speed mostly cancel.

Simple Avro has two floors.  The default reads each map once and converts each entry as its key
comes, so the branches on the column follow the map's order; ``--two-pass`` first finds where
each column's value is (the key looked up, the value's size from its union branch without a
branch on it), then converts the values in the table's column order.  ``--map-order table``
builds the corpus (and so the core's input too) with the map entries in column order instead of
the Go map order TiCDC writes, a new order every row: what the order alone costs.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import pin_one_core  # noqa: E402

# What both Avro floors share: the cursor, varints (with FLOOR_FAST_VARINT a one-byte and, where
# the CPU has BMI2, a one-word path: what the simple protocol's many short varints want),
# lengths, string columns and DATETIME text.
# What every floor shares: reading the corpus (with slack after it for word loads) and the clock.
COMMON_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint8_t *read_corpus(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (!f) exit(2);
    fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
    uint8_t *buf = calloc(sz + 64, 1);
    if (fread(buf, 1, sz, f) != (size_t)sz) exit(2);
    fclose(f);
    *size = sz;
    return buf;
}
static inline double elapsed(const struct timespec *t0) {
    struct timespec t1; clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) * 1e-9;
}
"""

AVRO_PRELUDE_C = COMMON_C + r"""
#if defined(FLOOR_FAST_VARINT) && defined(__BMI2__)
#include <immintrin.h>
#endif

typedef struct { const uint8_t *p, *end; } Cur;
static int bad = 0;

static inline uint64_t varint(Cur *c) {
#ifdef FLOOR_FAST_VARINT
    if (c->p < c->end && *c->p < 0x80) return *c->p++;     /* one byte: indexes, lengths, counts */
#endif
#if defined(FLOOR_FAST_VARINT) && defined(__BMI2__)
    if (c->end - c->p >= 8) {                               /* 2-8 bytes from one word */
        uint64_t x; memcpy(&x, c->p, 8);
        uint64_t stop = ~x & 0x8080808080808080ULL;
        if (stop) {
            int nb = (__builtin_ctzll(stop) >> 3) + 1;
            c->p += nb;
            return _pext_u64(x, 0x7f7f7f7f7f7f7f7fULL >> (64 - 8 * nb));
        }
    }
#endif
    uint64_t v = 0; int s = 0;
    while (c->p < c->end) {
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) return v;
        s += 7;
        if (s > 63) break;
    }
    bad = 1; return 0;
}
static inline int64_t zz(Cur *c) { uint64_t u = varint(c); return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }
static inline int64_t len(Cur *c) {
    int64_t n = zz(c);
    if (n < 0 || c->end - c->p < n) { bad = 1; return 0; }
    return n;
}
static inline void skip(Cur *c, int64_t n) { if (c->end - c->p < n) bad = 1; else c->p += n; }

typedef struct { int64_t *off; uint8_t *data; int64_t len; } Var;
static inline void var_push(Var *v, int64_t row, const uint8_t *p, int64_t n) {
    memcpy(v->data + v->len, p, n); v->len += n; v->off[row + 1] = v->len;
}
static inline void var_null(Var *v, int64_t row) { v->off[row + 1] = v->len; }

static inline int d2(const uint8_t *p) { return (p[0] - '0') * 10 + (p[1] - '0'); }
static int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2; int era = (y >= 0 ? y : y - 399) / 400; int yoe = y - era * 400;
    int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1; int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int64_t)era * 146097 + doe - 719468;
}
static inline int64_t datetime_us(const uint8_t *p, int64_t n) {
    if (n < 19) { bad = 1; return 0; }
    int64_t s = days_from_civil(d2(p) * 100 + d2(p + 2), d2(p + 5), d2(p + 8)) * 86400
                + d2(p + 11) * 3600 + d2(p + 14) * 60 + d2(p + 17);
    int64_t us = 0; int k = 0;
    for (int64_t i = 20; i < n; i++, k++) us = us * 10 + (p[i] - '0');
    for (; k < 6; k++) us *= 10;
    return s * 1000000 + us;
}
/* what the script compares with the core's batch (the sums wrap as int64) */
static void report(double best, int64_t rows, int64_t sum_id, int64_t sum_ts, int64_t micros, double f64, int64_t text) {
    printf("%.9f %d %lld %lld %lld %lld %.17g %lld\n", best, bad, (long long)rows, (long long)sum_id,
           (long long)sum_ts, (long long)micros, f64, (long long)text);
}
"""

FLOOR_C = AVRO_PRELUDE_C + r"""
int main(int argc, char **argv) {
    long sz;
    uint8_t *buf = read_corpus(argv[1], &sz);
    double seconds = atof(argv[2]);
    int64_t rows = 0;
    for (long at = 0; at < sz; rows++) {
        int32_t kn, vn; memcpy(&kn, buf + at, 4); memcpy(&vn, buf + at + 4, 4); at += 8 + kn + (vn > 0 ? vn : 0);
    }
    int64_t *ts = malloc(8 * rows), *id = malloc(8 * rows), *dt = malloc(8 * rows), *tz = malloc(8 * rows);
    uint32_t *u32 = malloc(4 * rows); int32_t *i32 = malloc(4 * rows), *sid = malloc(4 * rows);
    double *f64 = malloc(8 * rows); float *f32 = malloc(4 * rows);
    uint8_t *dec = malloc(16 * rows), *valid = malloc(12 * rows);
    Var op = {malloc(8 * (rows + 1)), malloc(8 * rows), 0}, s6 = {malloc(8 * (rows + 1)), malloc(sz), 0},
        s7 = {malloc(8 * (rows + 1)), malloc(sz), 0};
    double best = 1e9, spent = 0;
    while (spent < seconds) {
        struct timespec t0; clock_gettime(CLOCK_MONOTONIC, &t0);
        memset(valid, 0, 12 * rows);
        op.len = s6.len = s7.len = 0; op.off[0] = s6.off[0] = s7.off[0] = 0;
        long at = 0;
        for (int64_t i = 0; i < rows; i++) {
            int32_t kn, vn; memcpy(&kn, buf + at, 4); memcpy(&vn, buf + at + 4, 4); at += 8;
            const uint8_t *kp = buf + at; at += kn;
            if (kn < 5 || kp[0] != 0) bad = 1;
            Cur k = {kp + 5, kp + kn};
            int64_t key_id = zz(&k);
            if (k.p != k.end) bad = 1;
            uint8_t *vb = valid + 12 * i;
            if (vn < 0) {                       /* a tombstone: a DELETE, the id from the key */
                var_push(&op, i, (const uint8_t *)"DELETE", 6); id[i] = key_id; vb[0] = 1;
                var_null(&s6, i); var_null(&s7, i);
                continue;
            }
            const uint8_t *vp = buf + at; at += vn;
            if (vn < 5 || vp[0] != 0) bad = 1;
            Cur c = {vp + 5, vp + vn};
            sid[i] = (vp[1] << 24) | (vp[2] << 16) | (vp[3] << 8) | vp[4];
            id[i] = zz(&c); vb[0] = 1;
            if (varint(&c)) { int64_t x = zz(&c); if (x < 0 || x > 0xffffffffLL) bad = 1; u32[i] = (uint32_t)x; vb[1] = 1; }
            if (varint(&c)) {                   /* DECIMAL bytes: big-endian two's complement */
                int64_t n = len(&c); if (n > 16 || n == 0) { bad = 1; n = 0; }
                uint8_t *d = dec + 16 * i; memset(d, (n && (c.p[0] & 0x80)) ? 0xff : 0, 16);
                for (int64_t j = 0; j < n; j++) d[j] = c.p[n - 1 - j];
                c.p += n; vb[2] = 1;
            }
            if (varint(&c)) { if (c.end - c.p < 8) bad = 1; else { memcpy(f64 + i, c.p, 8); c.p += 8; vb[3] = 1; } }
            if (varint(&c)) { if (c.end - c.p < 4) bad = 1; else { memcpy(f32 + i, c.p, 4); c.p += 4; vb[4] = 1; } }
            if (varint(&c)) { int64_t x = zz(&c); if (x < INT32_MIN || x > INT32_MAX) bad = 1; i32[i] = (int32_t)x; vb[5] = 1; }
            if (varint(&c)) { int64_t n = len(&c); var_push(&s6, i, c.p, n); c.p += n; vb[6] = 1; } else var_null(&s6, i);
            if (varint(&c)) { int64_t n = len(&c); var_push(&s7, i, c.p, n); c.p += n; vb[7] = 1; } else var_null(&s7, i);
            if (varint(&c)) { int64_t n = len(&c); dt[i] = datetime_us(c.p, n); c.p += n; vb[8] = 1; }
            if (varint(&c)) { int64_t n = len(&c); tz[i] = datetime_us(c.p, n); c.p += n; vb[9] = 1; }
            int64_t n = len(&c); if (n != 1) { bad = 1; n = 0; }
            uint8_t o = n ? c.p[0] : 0; c.p += n;
            if (o == 'c') var_push(&op, i, (const uint8_t *)"INSERT", 6);
            else if (o == 'u') var_push(&op, i, (const uint8_t *)"UPDATE", 6);
            else if (o == 'd') var_push(&op, i, (const uint8_t *)"DELETE", 6);
            else bad = 1;
            ts[i] = zz(&c); zz(&c);
            if (c.p != c.end) bad = 1;
        }
        double t = elapsed(&t0);
        if (t < best) best = t;
        spent += t;
    }
    int64_t sum_id = 0, sum_ts = 0, sum_dt = 0, sum_tz = 0; double sum_f64 = 0;
    for (int64_t i = 0; i < rows; i++) {
        sum_id += id[i];
        if (valid[12 * i + 8]) sum_dt += dt[i];
        if (valid[12 * i + 9]) sum_tz += tz[i];
        if (valid[12 * i + 3]) sum_f64 += f64[i];
        if (op.off[i + 1] - op.off[i] == 6 && memcmp(op.data + op.off[i], "DELETE", 6) != 0) sum_ts += ts[i];
    }
    report(best, rows, sum_id, sum_ts, sum_dt + sum_tz, sum_f64, s6.len + s7.len);
    return 0;
}
"""



SIMPLE_FLOOR_C = "#define FLOOR_FAST_VARINT\n" + AVRO_PRELUDE_C + r"""
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
"""


JSON_FLOOR_C = COMMON_C + r"""
#include <immintrin.h>

static int bad = 0;
typedef struct { int64_t *off; uint8_t *data; int64_t len, n; } Var;
static inline void var_push(Var *v, const uint8_t *p, int64_t n) {
    memcpy(v->data + v->len, p, n); v->len += n; v->off[++v->n] = v->len;
}
static inline void var_null(Var *v) { v->off[v->n + 1] = v->len; v->n++; }

/* p just after an opening quote: the closing quote (32 bytes a step; a backslash skips a byte) */
static inline const uint8_t *str_end(const uint8_t *p) {
    const __m256i q = _mm256_set1_epi8('"'), bs = _mm256_set1_epi8('\\');
    for (;;) {
        __m256i x = _mm256_loadu_si256((const __m256i *)p);
        uint32_t m = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(x, q), _mm256_cmpeq_epi8(x, bs)));
        if (!m) { p += 32; continue; }
        p += __builtin_ctz(m);
        if (*p == '"') return p;
        p += 2;
    }
}
static inline uint64_t number(const uint8_t **pp) {
    const uint8_t *p = *pp; uint64_t v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
    *pp = p; return v;
}
/* any JSON value the floor does not keep */
static const uint8_t *skip_value(const uint8_t *p) {
    if (*p == '"') return str_end(p + 1) + 1;
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (;;) {
            uint8_t ch = *p++;
            if (ch == '"') p = str_end(p) + 1;
            else if (ch == '{' || ch == '[') depth++;
            else if ((ch == '}' || ch == ']') && --depth == 0) return p;
        }
    }
    while (*p != ',' && *p != '}' && *p != ']') p++;
    return p;
}
static inline int key_is(const uint8_t *k, int64_t n, const char *s, int64_t sn) { return n == sn && memcmp(k, s, sn) == 0; }

/* a data/old object as a map row: keys and values copied, a {"location","value"} object's
   value followed by 'Z' (its zone is not looked at) */
static const uint8_t *map_row(const uint8_t *p, Var *keys, Var *vals, int64_t *entries) {
    if (*p++ != '{') { bad = 1; return p; }
    if (*p == '}') return p + 1;
    for (;;) {
        if (*p++ != '"') { bad = 1; return p; }
        const uint8_t *e = str_end(p);
        var_push(keys, p, e - p);
        p = e + 1;
        if (*p++ != ':') { bad = 1; return p; }
        if (*p == '"') {
            e = str_end(p + 1);
            var_push(vals, p + 1, e - p - 1);
            p = e + 1;
        } else if (*p == 'n') {
            var_null(vals);
            p += 4;
        } else if (*p == '{') {
            const uint8_t *v = NULL, *ve = NULL;
            p++;
            for (;;) {
                if (*p++ != '"') { bad = 1; return p; }
                e = str_end(p);
                int is_value = key_is(p, e - p, "value", 5);
                p = e + 1;
                if (*p++ != ':' || *p++ != '"') { bad = 1; return p; }
                e = str_end(p);
                if (is_value) { v = p; ve = e; }
                p = e + 1;
                if (*p == ',') { p++; continue; }
                if (*p++ != '}') bad = 1;
                break;
            }
            if (!v) { bad = 1; return p; }
            memcpy(vals->data + vals->len, v, ve - v); vals->len += ve - v;
            vals->data[vals->len++] = 'Z';
            vals->off[++vals->n] = vals->len;
        } else {
            e = skip_value(p);                  /* a bare number: copied as it is */
            var_push(vals, p, e - p);
            p = e;
        }
        (*entries)++;
        if (*p == ',') { p++; continue; }
        if (*p++ != '}') bad = 1;
        return p;
    }
}

int main(int argc, char **argv) {
    long sz;
    uint8_t *buf = read_corpus(argv[1], &sz);
    double seconds = atof(argv[2]);
    int64_t msgs = 0;
    for (long at = 0; at < sz; msgs++) { int32_t vn; memcpy(&vn, buf + at, 4); at += 4 + vn; }
    int64_t *ts = malloc(8 * msgs), *tid = malloc(8 * msgs), *bts = malloc(8 * msgs), *sv = malloc(8 * msgs);
    int64_t cap = 8 * (sz / 4 + msgs + 1);
    Var op = {malloc(8 * (msgs + 1)), malloc(8 * msgs), 0, 0}, db = {malloc(8 * (msgs + 1)), malloc(sz), 0, 0},
        tb = {malloc(8 * (msgs + 1)), malloc(sz), 0, 0};
    Var keys[2], vals[2];
    int64_t *moff[2];
    for (int k = 0; k < 2; k++) {
        keys[k] = (Var){malloc(cap), malloc(sz), 0, 0};
        vals[k] = (Var){malloc(cap), malloc(sz + sz / 8), 0, 0};
        moff[k] = malloc(8 * (msgs + 1));
    }
    double best = 1e9, spent = 0;
    int64_t entries[2] = {0, 0}, nrows = 0, nulls = 0;
    while (spent < seconds) {
        struct timespec t0; clock_gettime(CLOCK_MONOTONIC, &t0);
        op.len = op.n = db.len = db.n = tb.len = tb.n = 0; op.off[0] = db.off[0] = tb.off[0] = 0;
        for (int k = 0; k < 2; k++) {
            keys[k].len = keys[k].n = vals[k].len = vals[k].n = 0; keys[k].off[0] = vals[k].off[0] = 0;
            entries[k] = 0; moff[k][0] = 0;
        }
        nrows = 0;
        long at = 0;
        for (int64_t m = 0; m < msgs; m++) {
            int32_t vn; memcpy(&vn, buf + at, 4); at += 4;
            const uint8_t *p = buf + at; at += vn;
            int kind = -1;                      /* 0 INSERT, 1 UPDATE, 2 DELETE */
            if (*p++ != '{') { bad = 1; continue; }
            int64_t r = nrows;
            int seen[2] = {0, 0};
            for (;;) {
                if (*p++ != '"') { bad = 1; break; }
                const uint8_t *k = p, *e = str_end(p);
                int64_t kn = e - k;
                p = e + 1;
                if (*p++ != ':') { bad = 1; break; }
                if (kn == 4 && memcmp(k, "data", 4) == 0 && *p == '{') {
                    if (kind != 2) { p = map_row(p, &keys[0], &vals[0], &entries[0]); seen[0] = 1; }
                    else p = skip_value(p);
                } else if (kn == 3 && memcmp(k, "old", 3) == 0 && *p == '{') {
                    if (kind != 0) { p = map_row(p, &keys[1], &vals[1], &entries[1]); seen[1] = 1; }
                    else p = skip_value(p);
                } else if (key_is(k, kn, "type", 4)) {
                    e = str_end(p + 1);
                    kind = p[1] == 'I' ? 0 : p[1] == 'U' ? 1 : p[1] == 'D' ? 2 : -1;
                    var_push(&op, p + 1, e - p - 1);
                    p = e + 1;
                } else if (key_is(k, kn, "database", 8)) {
                    e = str_end(p + 1); var_push(&db, p + 1, e - p - 1); p = e + 1;
                } else if (key_is(k, kn, "table", 5)) {
                    e = str_end(p + 1); var_push(&tb, p + 1, e - p - 1); p = e + 1;
                } else if (key_is(k, kn, "commitTs", 8)) ts[r] = (int64_t)number(&p);
                else if (key_is(k, kn, "tableID", 7)) tid[r] = (int64_t)number(&p);
                else if (key_is(k, kn, "buildTs", 7)) bts[r] = (int64_t)number(&p);
                else if (key_is(k, kn, "schemaVersion", 13)) sv[r] = (int64_t)number(&p);
                else p = skip_value(p);
                if (*p == ',') { p++; continue; }
                if (*p++ != '}') bad = 1;
                break;
            }
            if (kind < 0) { if (op.n > r) op.n = r; continue; }   /* not a DML: no row */
            moff[0][r + 1] = keys[0].n; moff[1][r + 1] = keys[1].n;
            nrows++;
        }
        double t = elapsed(&t0);
        if (t < best) best = t;
        spent += t;
    }
    nulls = 0;
    for (int k = 0; k < 2; k++)
        for (int64_t i = 0; i < vals[k].n; i++) nulls += vals[k].off[i + 1] == vals[k].off[i];
    printf("%.9f %d %lld %lld %lld %lld %lld\n", best, bad, (long long)nrows, (long long)(entries[0] + entries[1]),
           (long long)(keys[0].len + keys[1].len), (long long)(vals[0].len + vals[1].len), (long long)nulls);
    return 0;
}
"""

def write_corpus(case, path):
    """The messages as the floor reads them: per message the key's and the value's length
    (-1: none) and bytes; simple Avro has no keys, only the value's length and bytes."""
    with open(path, "wb") as fh:
        if case.keys_list is None:
            for v in case.values_list:
                fh.write(struct.pack("<i", len(v)))
                fh.write(v)
            return
        for k, v in zip(case.keys_list, case.values_list):
            fh.write(struct.pack("<ii", len(k), -1 if v is None else len(v)))
            fh.write(k)
            fh.write(v or b"")


def core_sums(batch):
    """The floor's checksums, from the core's typed batch."""
    import pyarrow.compute as pc
    ops = batch.column("_op").to_pylist()
    ts = batch.column("_commit_ts").to_pylist()
    sum_ts = sum(t for o, t in zip(ops, ts) if o in ("INSERT", "UPDATE") and t is not None)
    rows = sum(o in ("INSERT", "UPDATE", "DELETE") for o in ops)     # not the control rows
    micros = 0
    for name in ("c08_datetime", "c09_timestamp3"):
        micros += sum(v for v in batch.column(name).cast("int64").to_pylist() if v is not None)
    text = sum(pc.sum(pc.binary_length(batch.column(n))).as_py() or 0 for n in ("c06_varchar_intl", "c07_text"))
    f64 = 0.0
    for v in batch.column("c03_double_full").to_pylist():    # in row order, as the floor adds
        if v is not None:
            f64 += v
    return (rows, _wrap(pc.sum(batch.column("id")).as_py()), _wrap(sum_ts), _wrap(micros), f64, text)


def _wrap(x):
    """x as the floor's int64 sum, which wraps around."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def json_core_sums(batch):
    """Map entries and key bytes of the core's generic batch (after and before), as the floor
    counts them, and its value bytes (rendered: shortest floats, a 'Z' after TIMESTAMPs)."""
    import pyarrow.compute as pc
    entries = keys = values = 0
    for name in ("after", "before"):
        col = batch.column(name)
        entries += len(col.keys)
        keys += pc.sum(pc.binary_length(col.keys)).as_py() or 0
        values += pc.sum(pc.binary_length(col.items)).as_py() or 0
    ops = batch.column("_op").to_pylist()
    return sum(o in ("INSERT", "UPDATE", "DELETE") for o in ops), entries, keys, values


def _best(fn, seconds):
    fn()
    best, t_end = float("inf"), time.perf_counter() + seconds
    out = None
    while time.perf_counter() < t_end:
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--protocol", choices=("avro", "simple-avro", "simple-json"), default="avro")
    ap.add_argument("--corpus", default="orders10", help="simple-json: any corpus of goals.py (Avro: orders10)")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3, help="each contender's share of a round")
    ap.add_argument("--two-pass", action="store_true",
                    help="simple-avro: the floor reads each map twice (find every column's value, then "
                         "convert in column order)")
    ap.add_argument("--map-order", choices=("go", "table"), default="go",
                    help="simple-avro: the order of the data/old map entries; TiCDC writes Go map order")
    args = ap.parse_args(argv)
    pin_one_core()
    import goals
    if args.protocol != "simple-json" and args.corpus != "orders10":
        raise SystemExit("the Avro floors are written for orders10 only")
    if args.protocol != "simple-avro" and (args.two_pass or args.map_order != "go"):
        raise SystemExit("--two-pass and --map-order are for simple-avro")
    case = goals.Case(args.protocol, args.corpus, args.rows,
                      avro_map_order="table" if args.map_order == "table" else None)
    source = {"avro": FLOOR_C, "simple-avro": SIMPLE_FLOOR_C, "simple-json": JSON_FLOOR_C}[args.protocol]
    with tempfile.TemporaryDirectory() as tmp:
        corpus, exe = os.path.join(tmp, "corpus.bin"), os.path.join(tmp, "floor")
        src = os.path.join(tmp, "floor.c")
        with open(src, "w") as fh:
            fh.write(source)
        subprocess.run(["gcc", "-O3", "-march=native", *(["-DFLOOR_TWO_PASS"] if args.two_pass else []),
                        "-o", exe, src], check=True)
        write_corpus(case, corpus)

        def floor():
            out = subprocess.run([exe, corpus, str(args.seconds)], capture_output=True, text=True, check=True)
            best, bad, *sums = out.stdout.split()
            if int(bad):
                raise SystemExit("the floor found bytes it does not expect")
            return float(best), tuple(float(x) if "." in x else int(x) for x in sums)

        if args.protocol == "simple-json":
            run_json(args, case, floor)
            return
        _, floor_sums = floor()
        _, batch = _best(case.decode_typed, args.seconds)
        mine = core_sums(batch)
        if mine != floor_sums:
            raise SystemExit(f"the floor and the core disagree: {floor_sums} vs {mine}")
        print(f"# {args.corpus}, {args.protocol}, typed: {case.rows:,} row changes, {case.nbytes / 1e6:.2f} MB; "
              f"the floor decodes the same values (checksums {floor_sums})")
        print("| round | floor ms | floor M rows/s | core ms | core M rows/s | core ÷ floor (time) |")
        print("|---|---|---|---|---|---|")
        ratios = []
        for r in range(args.rounds):
            f_t, _ = floor()
            c_t, _ = _best(case.decode_typed, args.seconds)
            ratios.append(c_t / f_t)
            print(f"| {r + 1} | {f_t * 1e3:.3f} | {case.rows / f_t / 1e6:.2f} | {c_t * 1e3:.3f} | "
                  f"{case.rows / c_t / 1e6:.2f} | {c_t / f_t:.2f}× |", flush=True)
        print(f"\ncore ÷ floor, median of {len(ratios)} rounds: {statistics.median(ratios):.2f}× "
              f"(lowest {min(ratios):.2f}×, highest {max(ratios):.2f}×); load average {os.getloadavg()[0]:.2f}")


def run_json(args, case, floor):
    """Simple JSON, generic output: the floor, simdjson's parse-only rate (the goal's baseline)
    and the core, each round all three."""
    _, (rows, entries, keys, values, nulls) = floor()
    _, batch = _best(case.decode_generic, args.seconds)
    mine = json_core_sums(batch)
    if mine[:3] != (rows, entries, keys):
        raise SystemExit(f"the floor and the core disagree: {(rows, entries, keys)} vs {mine[:3]}")
    print(f"# {args.corpus}, simple-json, generic: {case.rows:,} row changes, {case.nbytes / 1e6:.2f} MB; the "
          f"floor writes the same map entries ({entries:,}, {keys:,} key bytes; value bytes: floor {values:,} "
          f"copied as they are, core {mine[3]:,} rendered)")
    print("| round | floor MB/s | simdjson parse-only MB/s | core MB/s | floor ÷ simdjson | core ÷ simdjson | core ÷ floor (time) |")
    print("|---|---|---|---|---|---|---|")
    mb = case.nbytes / 1e6
    res = []
    for r in range(args.rounds):
        f_t, _ = floor()
        s_t, _ = _best(case.baseline, args.seconds)
        c_t, _ = _best(case.decode_generic, args.seconds)
        res.append((s_t / f_t, s_t / c_t, c_t / f_t))
        print(f"| {r + 1} | {mb / f_t:.0f} | {mb / s_t:.0f} | {mb / c_t:.0f} | {s_t / f_t:.2f}× | {s_t / c_t:.2f}× | "
              f"{c_t / f_t:.2f}× |", flush=True)
    med = [statistics.median(x[k] for x in res) for k in range(3)]
    print(f"\nmedians of {len(res)} rounds: floor ÷ simdjson {med[0]:.2f}×, core ÷ simdjson {med[1]:.2f}×, "
          f"core ÷ floor {med[2]:.2f}×; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
