/* The simple protocol's JSON floor, generic output: each DML's data/old objects copied into
   key and value columns (AVX2 string scan), the header fields kept. */
#include "common.h"
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
