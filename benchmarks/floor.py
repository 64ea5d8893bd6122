"""How far the Avro protocol's typed decode is from the least work any decoder must do (issue 13).

    PYTHONPATH=. python benchmarks/floor.py [--rows 10000] [--rounds 7]

The *floor* is a C loop written for exactly one writer schema, the ``orders10`` table of
``benchmarks/goals.py`` (the "10-column stream" of the 5 M rows/s goal): straight-line code per
field, no plan to interpret, every read bounds-checked, every value written to a preallocated
column (validity bytes, offsets, int64/float/double/decimal128 values, DATETIME/TIMESTAMP text
parsed to microseconds).  It leaves out what a real decoder also does: UTF-8 checks of text, error
context (message, byte offset, column), growing builders, other schemas, the Arrow hand-over and the
Python call.  So no decoder of these bytes can be faster than the floor on this machine; how much
slower the core is says how much its generality costs.

The script builds the corpus, compiles the floor with the machine's ``gcc -O3 -march=native``
(into a temporary directory; nothing is kept), checks that the floor decodes the same values as
the core (sums of ids, commit timestamps, the two datetime columns, the double column and the
text bytes), then times both in alternating rounds on one CPU: each round is the floor's best of
~0.3 s, then the core's best of ~0.3 s (a ``gc.collect()`` before each call); the ratio of each
round is taken seconds apart, so the host's changes of speed mostly cancel.
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

FLOOR_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { const uint8_t *p, *end; } Cur;
static int bad = 0;

static inline uint64_t varint(Cur *c) {
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

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(sz);
    if (fread(buf, 1, sz, f) != (size_t)sz) return 2;
    fclose(f);
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
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
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
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (t < best) best = t;
        spent += t;
    }
    /* what the script compares with the core's batch */
    int64_t sum_id = 0, sum_ts = 0, sum_dt = 0, sum_tz = 0; double sum_f64 = 0;
    for (int64_t i = 0; i < rows; i++) {
        sum_id += id[i];
        if (valid[12 * i + 8]) sum_dt += dt[i];
        if (valid[12 * i + 9]) sum_tz += tz[i];
        if (valid[12 * i + 3]) sum_f64 += f64[i];
        if (op.off[i + 1] - op.off[i] == 6 && memcmp(op.data + op.off[i], "DELETE", 6) != 0) sum_ts += ts[i];
    }
    printf("%.9f %d %lld %lld %lld %lld %.17g %lld\n", best, bad, (long long)rows, (long long)sum_id,
           (long long)sum_ts, (long long)(sum_dt + sum_tz), sum_f64, (long long)(s6.len + s7.len));
    return 0;
}
"""


def write_corpus(case, path):
    with open(path, "wb") as fh:
        for k, v in zip(case.keys_list, case.values_list):
            fh.write(struct.pack("<ii", len(k), -1 if v is None else len(v)))
            fh.write(k)
            fh.write(v or b"")


def core_sums(batch):
    """The floor's checksums, from the core's typed batch."""
    import pyarrow.compute as pc
    ops = batch.column("_op").to_pylist()
    ts = batch.column("_commit_ts").to_pylist()
    sum_ts = sum(t for o, t in zip(ops, ts) if o != "DELETE" and t is not None)
    micros = 0
    for name in ("c08_datetime", "c09_timestamp3"):
        micros += sum(v for v in batch.column(name).cast("int64").to_pylist() if v is not None)
    text = sum(pc.sum(pc.binary_length(batch.column(n))).as_py() or 0 for n in ("c06_varchar_intl", "c07_text"))
    f64 = 0.0
    for v in batch.column("c03_double_full").to_pylist():    # in row order, as the floor adds
        if v is not None:
            f64 += v
    return (batch.num_rows, _wrap(pc.sum(batch.column("id")).as_py()), _wrap(sum_ts), _wrap(micros), f64, text)


def _wrap(x):
    """x as the floor's int64 sum, which wraps around."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3, help="each contender's share of a round")
    args = ap.parse_args(argv)
    pin_one_core()
    import goals
    case = goals.Case("avro", "orders10", args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        corpus, exe = os.path.join(tmp, "orders10.bin"), os.path.join(tmp, "floor")
        src = os.path.join(tmp, "floor.c")
        with open(src, "w") as fh:
            fh.write(FLOOR_C)
        subprocess.run(["gcc", "-O3", "-march=native", "-o", exe, src], check=True)
        write_corpus(case, corpus)

        def floor():
            out = subprocess.run([exe, corpus, str(args.seconds)], capture_output=True, text=True, check=True)
            best, bad, rows, sum_id, sum_ts, micros, f64, text = out.stdout.split()
            if int(bad):
                raise SystemExit("the floor found bytes it does not expect")
            return float(best), (int(rows), int(sum_id), int(sum_ts), int(micros), float(f64), int(text))

        def core():
            case.decode_typed()
            best, t_end = float("inf"), time.perf_counter() + args.seconds
            while time.perf_counter() < t_end:
                gc.collect()
                t0 = time.perf_counter()
                batch = case.decode_typed()
                best = min(best, time.perf_counter() - t0)
            return best, batch

        _, floor_sums = floor()
        _, batch = core()
        mine = core_sums(batch)
        if mine != floor_sums:
            raise SystemExit(f"the floor and the core disagree: {floor_sums} vs {mine}")
        print(f"# orders10, Avro protocol, typed: {case.rows:,} row changes, {case.nbytes / 1e6:.2f} MB; "
              f"the floor decodes the same values (checksums {floor_sums})")
        print("| round | floor ms | floor M rows/s | core ms | core M rows/s | core ÷ floor (time) |")
        print("|---|---|---|---|---|---|")
        ratios = []
        for r in range(args.rounds):
            f_t, _ = floor()
            c_t, _ = core()
            ratios.append(c_t / f_t)
            print(f"| {r + 1} | {f_t * 1e3:.3f} | {case.rows / f_t / 1e6:.2f} | {c_t * 1e3:.3f} | "
                  f"{case.rows / c_t / 1e6:.2f} | {c_t / f_t:.2f}× |", flush=True)
        print(f"\ncore ÷ floor, median of {len(ratios)} rounds: {statistics.median(ratios):.2f}× "
              f"(lowest {min(ratios):.2f}×, highest {max(ratios):.2f}×); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
