/* What both Avro floors share: the cursor, varints (with FLOOR_FAST_VARINT a one-byte and, where
   the CPU has BMI2, a one-word path: what the simple protocol's many short varints want),
   lengths, string columns, DATETIME text and the report line the script checks. */
#ifndef FLOOR_AVRO_PRELUDE_H
#define FLOOR_AVRO_PRELUDE_H
#include "common.h"
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
#endif
