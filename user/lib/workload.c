/*
 * workload.c — the workloads' random numbers, files and argument
 * parsing (workload.h).
 */
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "workload.h"

void prng_seed(struct prng *r, uint64_t seed)
{
    r->state = seed ^ WORKLOAD_SEED_MIX;
    if (r->state == 0)
        r->state = 1;
}

uint64_t prng_next(struct prng *r)
{
    uint64_t x = r->state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r->state = x;
    return x;
}

uint64_t prng_below(struct prng *r, uint64_t n)
{
    return prng_next(r) % n;
}

void prng_fill(struct prng *r, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        uint64_t x = prng_next(r);
        size_t take = n < 8 ? n : 8;
        for (size_t i = 0; i < take; i++, x >>= 8)
            *p++ = (uint8_t)x;
        n -= take;
    }
}

long workload_empty_file(const char *path)
{
    long file = fs_create(path, FS_TYPE_FILE, FS_ACCESS_READ | FS_ACCESS_WRITE);
    if (file != E_STATE)
        return file;
    file = fs_open(path, FS_ACCESS_READ | FS_ACCESS_WRITE, 0);
    long err = file < 0 ? file : fs_truncate(file);
    if (err < 0 && file >= 0)
        fs_close(file);
    return err < 0 ? err : file;
}

int workload_number(const char *s, uint64_t min, uint64_t max, uint64_t *value)
{
    uint64_t v = 0;
    if (*s == 0 || strlen(s) > 19)          /* 19 digits cannot overflow 64 bits */
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v < min || v > max)
        return -1;
    *value = v;
    return 0;
}
