/* What every floor shares: reading the corpus (with slack after it for word loads) and the clock. */
#ifndef FLOOR_COMMON_H
#define FLOOR_COMMON_H
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
#endif
