/*
 * readfile — the readahead lab's reader (docs/labs/readahead.md): a file
 * made of a pattern that every block can be checked against, read in
 * order or at random places, one block (4 KiB) a request, with the time it
 * waited for the file system; and the buffer manager's read-ahead setting.
 *
 *     readfile make FILE KIB [SEED]       FILE made (or emptied) with KIB KiB of the pattern, then sync
 *     readfile seq FILE [SEED]            FILE read from its start to its end, each block checked
 *     readfile random FILE COUNT [SEED]   COUNT blocks read at random places, each checked
 *     readfile ahead [N]                  how many blocks the buffer manager reads ahead (BM_READAHEAD);
 *                                         with N, set it to N (0: none)
 *
 * SEED is 1 unless given. The pattern: the file's 64-bit words, little-
 * endian, word i being pattern_word(i, SEED) below (a host script makes the
 * same bytes), so a block read from anywhere can be checked by itself.
 *
 * On success each prints one line and exits 0:
 *     readfile make FILE: ok blocks=N fnv1a=HASH
 *     readfile seq FILE: ok blocks=N fnv1a=HASH ns=T waited=W
 *     readfile random FILE: ok blocks=N ns=T waited=W
 *     readfile: the buffer manager reads N blocks ahead (it read M)
 * fnv1a: FNV-1a (64 bits) of the whole file, in order; ns: the machine
 * clock over the reads; waited: the part of it spent inside fs_read, that
 * is, waiting for the file system's answers. Between its reads the reader
 * checks the block and, in order, adds it to the hash: the work a real
 * reader does with what it reads. A block that differs from the pattern is
 * said (its offset and the first byte that differs) and ends it with
 * status 1; bad arguments end it with status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "fs_protocol.h"

#define BLOCK   4096
#define MAX_KIB (16u * 1024)      /* 16 MiB, half the system disk */

static uint8_t block[BLOCK];
static uint64_t want[BLOCK / 8];

/* Word i of a file made with `seed`: SplitMix64's finalizer of i and seed. */
static uint64_t pattern_word(uint64_t i, uint64_t seed)
{
    uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Block n of the pattern, in `want`. */
static void pattern_block(uint64_t n, uint64_t seed)
{
    for (uint64_t k = 0; k < BLOCK / 8; k++)
        want[k] = pattern_word(n * (BLOCK / 8) + k, seed);
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    while (n--)
        h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

#define FNV_START 0xcbf29ce484222325ull

static int usage(void)
{
    fprintf(stderr, "usage: readfile make FILE KIB [SEED] | seq FILE [SEED] | random FILE COUNT [SEED] | ahead [N]\n");
    return 2;
}

/* The number in s, if it is all digits and at most max: 0; else -1. */
static int number(const char *s, uint64_t max, uint64_t *value)
{
    char *end;
    if (!*s || *s < '0' || *s > '9')
        return -1;
    *value = strtoull(s, &end, 10);
    return *end || *value > max ? -1 : 0;
}

/* Say that `what` of path failed with err; the exit status. */
static int failed(const char *what, const char *path, long err)
{
    fprintf(stderr, "readfile: %s: %s: %s (%s)\n", path, what, dm_error_name(err), dm_error_text(err));
    return 1;
}

/* Block n (read into `block`) against the pattern: 0, or 1 after saying
 * where it differs. */
static int check_block(const char *path, uint64_t n, uint64_t seed)
{
    pattern_block(n, seed);
    if (memcmp(block, want, BLOCK) == 0)
        return 0;
    const uint8_t *w = (const uint8_t *)want;
    size_t i = 0;
    while (block[i] == w[i])
        i++;
    fprintf(stderr, "readfile: %s: byte %llu reads 0x%02x, the pattern has 0x%02x\n", path,
            (unsigned long long)(n * BLOCK + i), block[i], w[i]);
    return 1;
}

/* Read block n of the file into `block`, adding the time it took to *waited. */
static long read_block(long file, uint64_t n, uint64_t *waited)
{
    uint64_t start = dm_clock_ns();
    long got = fs_read(file, n * BLOCK, block, BLOCK);
    *waited += dm_clock_ns() - start;
    return got;
}

/* The file at path, opened for reading, and its size in blocks. */
static long open_file(const char *path, uint64_t *blocks)
{
    struct dm_stat st;
    long file = fs_open(path, FS_ACCESS_READ, &st);
    if (file >= 0 && st.size % BLOCK) {
        fs_close(file);
        fprintf(stderr, "readfile: %s: %llu bytes, not whole blocks: not made by readfile make\n", path,
                (unsigned long long)st.size);
        return E_INVAL;
    }
    *blocks = st.size / BLOCK;
    return file;
}

static int make(const char *path, uint64_t kib, uint64_t seed)
{
    long file = fs_create(path, FS_TYPE_FILE, FS_ACCESS_READ | FS_ACCESS_WRITE);
    if (file == E_STATE)                   /* it is there: empty it */
        file = fs_open(path, FS_ACCESS_READ | FS_ACCESS_WRITE, 0);
    if (file < 0)
        return failed("open", path, file);
    long err = fs_truncate(file);
    if (err < 0)
        return failed("truncate", path, err);
    uint64_t blocks = kib * 1024 / BLOCK, hash = FNV_START;
    for (uint64_t n = 0; n < blocks; n++) {
        pattern_block(n, seed);
        long put = fs_write(file, n * BLOCK, want, BLOCK);
        if (put != BLOCK)
            return failed("write", path, put < 0 ? put : E_DISKFULL);
        hash = fnv1a(hash, (const uint8_t *)want, BLOCK);
    }
    fs_close(file);
    if ((err = fs_sync()) < 0)
        return failed("sync", path, err);
    printf("readfile make %s: ok blocks=%llu fnv1a=%016llx\n", path, (unsigned long long)blocks,
           (unsigned long long)hash);
    return 0;
}

static int in_order(const char *path, uint64_t seed)
{
    uint64_t blocks, waited = 0, hash = FNV_START;
    long file = open_file(path, &blocks);
    if (file < 0)
        return file == E_INVAL ? 1 : failed("open", path, file);
    uint64_t start = dm_clock_ns();
    for (uint64_t n = 0; n < blocks; n++) {
        long got = read_block(file, n, &waited);
        if (got != BLOCK)
            return failed("read", path, got < 0 ? got : E_BOUNDS);
        if (check_block(path, n, seed))
            return 1;
        hash = fnv1a(hash, block, BLOCK);
    }
    uint64_t ns = dm_clock_ns() - start;
    fs_close(file);
    printf("readfile seq %s: ok blocks=%llu fnv1a=%016llx ns=%llu waited=%llu\n", path,
           (unsigned long long)blocks, (unsigned long long)hash, (unsigned long long)ns,
           (unsigned long long)waited);
    return 0;
}

static int at_random(const char *path, uint64_t count, uint64_t seed)
{
    uint64_t blocks, waited = 0, x = seed * 0x9e3779b97f4a7c15ull | 1;
    long file = open_file(path, &blocks);
    if (file < 0)
        return file == E_INVAL ? 1 : failed("open", path, file);
    if (blocks == 0) {
        fprintf(stderr, "readfile: %s: empty\n", path);
        return 1;
    }
    uint64_t start = dm_clock_ns();
    for (uint64_t k = 0; k < count; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;         /* xorshift64 */
        uint64_t n = x % blocks;
        long got = read_block(file, n, &waited);
        if (got != BLOCK)
            return failed("read", path, got < 0 ? got : E_BOUNDS);
        if (check_block(path, n, seed))
            return 1;
    }
    uint64_t ns = dm_clock_ns() - start;
    fs_close(file);
    printf("readfile random %s: ok blocks=%llu ns=%llu waited=%llu\n", path, (unsigned long long)count,
           (unsigned long long)ns, (unsigned long long)waited);
    return 0;
}

static int ahead(int argc, char **argv)
{
    uint64_t n = 0;
    if (argc > 3 || (argc == 3 && number(argv[2], BM_READAHEAD_MAX, &n) < 0)) {
        fprintf(stderr, "readfile: ahead: N is 0 to %d\n", BM_READAHEAD_MAX);
        return 2;
    }
    long bm = sb_lookup("bm");
    if (bm < 0)
        return failed("ahead", "bm", bm);
    struct sv_call c = { .op = BM_READAHEAD, .arg = { argc == 3 ? (int64_t)n : -1 }, .pass = DM_NO_LINK };
    long err = sv_call(bm, &c);
    dm_destroylink(bm);
    if (err < 0)
        return failed("ahead", "bm", err);
    int64_t now = argc == 3 ? (int64_t)n : c.value;
    printf("readfile: the buffer manager reads %lld block%s ahead", (long long)now, now == 1 ? "" : "s");
    if (argc == 3)
        printf(" (it read %lld)", (long long)c.value);
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t kib, count, seed = 1;
    if (argc >= 2 && strcmp(argv[1], "ahead") == 0)
        return ahead(argc, argv);
    if (argc >= 4 && argc <= 5 && strcmp(argv[1], "make") == 0) {
        if (number(argv[3], MAX_KIB, &kib) < 0 || kib == 0 || kib % 4 ||
            (argc == 5 && number(argv[4], UINT32_MAX, &seed) < 0))
            return usage();
        return make(argv[2], kib, seed);
    }
    if (argc >= 3 && argc <= 4 && strcmp(argv[1], "seq") == 0) {
        if (argc == 4 && number(argv[3], UINT32_MAX, &seed) < 0)
            return usage();
        return in_order(argv[2], seed);
    }
    if (argc >= 4 && argc <= 5 && strcmp(argv[1], "random") == 0) {
        if (number(argv[3], 1000000, &count) < 0 || (argc == 5 && number(argv[4], UINT32_MAX, &seed) < 0))
            return usage();
        return at_random(argv[2], count, seed);
    }
    return usage();
}
