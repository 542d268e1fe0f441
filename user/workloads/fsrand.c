/*
 * fsrand — the random user of the thesis's file-system study (Miller 1984,
 * §5.3.1): reads and writes of random sizes at random places in one file,
 * each read checked against a copy of the file kept in memory.
 *
 *     fsrand FILE SIZE_KIB OPS [SEED] [WRITE_PERCENT]    SEED 1, WRITE_PERCENT 30 by default
 *
 * FILE is made (or emptied, when it is there) and filled with SIZE_KIB KiB
 * of random bytes in 4 KiB requests. Then come OPS operations, each drawn
 * from one xorshift stream seeded with SEED (user/lib/workload.h), so a
 * seed always gives the same operations: an offset in the file, a length
 * from 1 byte to MAX_OP (16 KiB, up to five blocks) that stays inside the
 * file, and a write with probability WRITE_PERCENT % (its bytes from the
 * stream too), else a read. The file's size never changes. At the end the
 * whole file is read back and compared with the copy.
 *
 * On success it prints one line and exits 0:
 *     fsrand FILE: ok size=BYTES ops=N reads=R writes=W bytes=MOVED ns=T instructions=I fnv=HASH
 * bytes: what the OPS operations moved; ns: the machine clock over them;
 * instructions: those this process executed over them (its PROCTIME; see
 * fsseq.c for why not dm_instret); fnv: the FNV-1a hash of the file's final
 * contents, which the host test compares with the file on the disk image.
 * On failure it says what failed and exits 1; bad arguments exit 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "workload.h"

#define FILL    4096               /* the requests that fill and check the whole file */
#define MAX_OP  (16 * 1024)
#define MAX_KIB 8192u              /* the copy in memory: 8 MiB */
#define MAX_OPS 10000000u

static const char *path;
static uint8_t *shadow;            /* what the file should hold */
static uint8_t buf[MAX_OP];

/* What a random operation did, counted for the summary. */
struct counts {
    uint64_t reads, writes, bytes;
};

/* Say why a request failed (its error, or the bytes it moved when too few);
 * the exit status. */
static int failed(const char *what, uint64_t offset, uint64_t len, long result)
{
    if (result < 0)
        fprintf(stderr, "fsrand: %s: %s of %llu bytes at offset %llu: %s (%s)\n", path, what,
                (unsigned long long)len, (unsigned long long)offset, dm_error_name(result), dm_error_text(result));
    else
        fprintf(stderr, "fsrand: %s: %s of %llu bytes at offset %llu moved %ld\n", path, what,
                (unsigned long long)len, (unsigned long long)offset, result);
    return 1;
}

/* Read len bytes at offset and compare them with the copy: 0, or 1 after
 * saying what differs. */
static int read_and_check(long file, uint64_t offset, uint64_t len)
{
    long n = fs_read(file, offset, buf, len);
    if (n < 0 || (uint64_t)n != len)
        return failed("read", offset, len, n);
    for (uint64_t i = 0; i < len; i++)
        if (buf[i] != shadow[offset + i]) {
            fprintf(stderr, "fsrand: %s: byte %llu reads 0x%02x, the file should hold 0x%02x\n", path,
                    (unsigned long long)(offset + i), buf[i], shadow[offset + i]);
            return 1;
        }
    return 0;
}

/* Write the copy's bytes [offset, offset + len) to the file: 0, or 1. */
static int write_from_copy(long file, uint64_t offset, uint64_t len)
{
    long n = fs_write(file, offset, shadow + offset, len);
    return n >= 0 && (uint64_t)n == len ? 0 : failed("write", offset, len, n);
}

/* One random operation drawn from `random`: 0, or 1 after saying what failed. */
static int random_op(long file, uint64_t size, uint64_t write_percent, struct prng *random, struct counts *c)
{
    uint64_t offset = prng_below(random, size);
    uint64_t room = size - offset < MAX_OP ? size - offset : MAX_OP;
    uint64_t len = 1 + prng_below(random, room);
    c->bytes += len;
    if (prng_below(random, 100) < write_percent) {
        c->writes++;
        prng_fill(random, shadow + offset, len);
        return write_from_copy(file, offset, len);
    }
    c->reads++;
    return read_and_check(file, offset, len);
}

/* The file's size and every byte against the copy: 0, or 1. */
static int check_whole(long file, uint64_t size)
{
    struct dm_stat st;
    long err = fs_stat(file, &st);
    if (err < 0) {
        fprintf(stderr, "fsrand: %s: stat: %s (%s)\n", path, dm_error_name(err), dm_error_text(err));
        return 1;
    }
    if (st.size != size) {
        fprintf(stderr, "fsrand: %s: the file has %llu bytes, not %llu\n", path, (unsigned long long)st.size,
                (unsigned long long)size);
        return 1;
    }
    for (uint64_t at = 0; at < size; at += FILL)
        if (read_and_check(file, at, FILL) != 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t kib, ops, seed = 1, write_percent = 30;
    if (argc < 4 || argc > 6 || workload_number(argv[2], 1, MAX_KIB, &kib) < 0 ||
        workload_number(argv[3], 0, MAX_OPS, &ops) < 0 ||
        (argc > 4 && workload_number(argv[4], 0, UINT32_MAX, &seed) < 0) ||
        (argc > 5 && workload_number(argv[5], 0, 100, &write_percent) < 0)) {
        fprintf(stderr, "usage: fsrand FILE SIZE_KIB OPS [SEED] [WRITE_PERCENT]   (SIZE_KIB 1 to %u, "
                "WRITE_PERCENT 0 to 100)\n", MAX_KIB);
        return 2;
    }
    path = argv[1];
    uint64_t size = kib * 1024;
    if ((shadow = malloc(size)) == 0) {
        fprintf(stderr, "fsrand: no memory for a copy of %llu bytes\n", (unsigned long long)size);
        return 1;
    }
    long file = workload_empty_file(path);
    if (file < 0) {
        fprintf(stderr, "fsrand: %s: cannot make it: %s (%s)\n", path, dm_error_name(file), dm_error_text(file));
        return 1;
    }
    struct prng random;
    prng_seed(&random, seed);
    prng_fill(&random, shadow, size);
    for (uint64_t at = 0; at < size; at += FILL)
        if (write_from_copy(file, at, FILL) != 0)
            return 1;
    struct counts c = { 0, 0, 0 };
    uint64_t ns = dm_clock_ns(), instructions = dm_proctime();
    for (uint64_t i = 0; i < ops; i++)
        if (random_op(file, size, write_percent, &random, &c) != 0)
            return 1;
    ns = dm_clock_ns() - ns;
    instructions = dm_proctime() - instructions;
    if (check_whole(file, size) != 0)
        return 1;
    fs_close(file);
    printf("fsrand %s: ok size=%llu ops=%llu reads=%llu writes=%llu bytes=%llu ns=%llu instructions=%llu "
           "fnv=%016llx\n", path, (unsigned long long)size, (unsigned long long)ops, (unsigned long long)c.reads,
           (unsigned long long)c.writes, (unsigned long long)c.bytes, (unsigned long long)ns,
           (unsigned long long)instructions, (unsigned long long)dm_fnv1a(shadow, size));
    return 0;
}
