/* The Avro protocol's floor: straight-line code for the one writer schema of orders10
   (benchmarks/floor.py builds the corpus, compiles this and checks its sums against the core). */
#include "avro_prelude.h"
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
