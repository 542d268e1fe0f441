/*
 * bmtest — read through the buffer manager ("bm") as the request
 * interpreter will, and show what it counted.
 *
 *   bmtest file INODE COUNT   checksum (FNV-1a, 64 bits) of file blocks 0..COUNT-1
 *   bmtest block BLOCK        checksum of one disk block
 *   bmtest stats              the buffer manager's counters
 *   bmtest write INODE FIRST COUNT SEED
 *                             write file blocks FIRST.. with a pattern made from
 *                             SEED, set the size to their end, and sync
 *   bmtest finalsync          the final sync of a shutdown (BM_SYNC, arg0 = 1):
 *                             the superblock is then written as CLEAN
 *
 * Several commands may follow each other in one run (`bmtest stats file 5 41
 * stats`), so that counters are compared with no program loaded between
 * them: loading a program reads it through the buffer manager too. `stats`
 * also prints the disk interface's reads and writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"

static uint8_t area[2 * FS_BLOCK_SIZE];   /* blocks land in the second half */

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--)
        h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

static long bm_call(long bm, uint32_t op, int64_t a0, int64_t a1, int64_t *value, void *data, uint32_t cap)
{
    long link = op == BM_STATS ? DM_NO_LINK : dm_createlink(0, 0, LINK_WRITE, area, sizeof area);
    struct sv_call c = { .op = op, .arg = { a0, a1, FS_BLOCK_SIZE }, .pass = link, .reply_data = data,
                         .reply_cap = cap };
    long status = sv_call(bm, &c);
    if (value)
        *value = c.value;
    return status;
}

/* One command at argv[0]; how many words it used, 0 if it failed (a
 * message printed), -1 if it is not a command. Long on purpose: one short
 * block per command, as the usage lists them. */
static int command(long bm, int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[0], "file") == 0) {
        long ino = atol(argv[1]), count = atol(argv[2]);
        int64_t size = 0;
        for (long n = 0; n < count; n++) {
            long err = bm_call(bm, BM_READ_FILE, ino, n, &size, 0, 0);
            if (err < 0) {
                printf("file block %ld: %s\n", n, dm_error_name(err));
                return 0;
            }
            printf("file block %ld fnv %016llx\n", n, (unsigned long long)fnv1a(area + FS_BLOCK_SIZE, FS_BLOCK_SIZE));
        }
        printf("size %lld\n", (long long)size);
        return 3;
    }
    if (argc >= 2 && strcmp(argv[0], "block") == 0) {
        long err = bm_call(bm, BM_READ_BLOCK, atol(argv[1]), FS_BLOCK_SIZE, 0, 0, 0);
        if (err < 0) {
            printf("block %s: %s\n", argv[1], dm_error_name(err));
            return 0;
        }
        printf("block %s fnv %016llx\n", argv[1], (unsigned long long)fnv1a(area + FS_BLOCK_SIZE, FS_BLOCK_SIZE));
        return 2;
    }
    if (argc >= 1 && strcmp(argv[0], "stats") == 0) {
        struct bm_stats s;
        struct di_stats d = { 0 };
        long di = sb_lookup("di");
        long err = bm_call(bm, BM_STATS, 0, 0, 0, &s, sizeof s);
        if (err == 0 && di >= 0) {
            struct sv_call c = { .op = DI_STATS, .pass = DM_NO_LINK, .reply_data = &d, .reply_cap = sizeof d };
            err = sv_call(di, &c);
            dm_destroylink(di);
        }
        if (err < 0)
            return 0;
        printf("requests read_block %llu read_file %llu stats %llu\n", (unsigned long long)s.requests[BM_READ_BLOCK],
               (unsigned long long)s.requests[BM_READ_FILE], (unsigned long long)s.requests[BM_STATS]);
        printf("hits %llu misses %llu holes %llu inode_reads %llu indirect_reads %llu mount_reads %llu cache %llu\n",
               (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.holes,
               (unsigned long long)s.inode_reads, (unsigned long long)s.indirect_reads,
               (unsigned long long)s.mount_reads, (unsigned long long)s.cache_blocks);
        printf("bitmap_reads %llu writebacks %llu sync_writes %llu allocations %llu\n",
               (unsigned long long)s.bitmap_reads, (unsigned long long)s.writebacks,
               (unsigned long long)s.sync_writes, (unsigned long long)s.allocations);
        printf("di_reads %llu di_writes %llu\n", (unsigned long long)d.reads, (unsigned long long)d.writes);
        return 1;
    }
    if (argc >= 5 && strcmp(argv[0], "write") == 0) {
        long ino = atol(argv[1]), first = atol(argv[2]), count = atol(argv[3]);
        unsigned seed = (unsigned)atol(argv[4]);
        for (long n = first; n < first + count; n++) {
            for (size_t i = 0; i < FS_BLOCK_SIZE; i++)
                area[FS_BLOCK_SIZE + i] = (uint8_t)((i * 7 + (size_t)n * 13 + seed) ^ (i >> 9));
            long link = dm_createlink(0, 0, LINK_READ, area, sizeof area);
            struct sv_call c = { .op = BM_WRITE_FILE, .arg = { ino, n, FS_BLOCK_SIZE }, .pass = link };
            long err = sv_call(bm, &c);
            if (err < 0) {
                printf("file block %ld: %s\n", n, dm_error_name(err));
                return 0;
            }
        }
        struct sv_call size = { .op = BM_SET_SIZE, .arg = { ino, (first + count) * (int64_t)FS_BLOCK_SIZE },
                                .pass = DM_NO_LINK };
        struct sv_call sync = { .op = BM_SYNC, .pass = DM_NO_LINK };
        long err = sv_call(bm, &size);
        if (err == 0)
            err = sv_call(bm, &sync);
        if (err < 0)
            printf("write: %s\n", dm_error_name(err));
        else
            printf("wrote %ld blocks, synced %lld\n", count, (long long)sync.value);
        return err < 0 ? 0 : 5;
    }
    if (argc >= 1 && strcmp(argv[0], "finalsync") == 0) {
        struct sv_call sync = { .op = BM_SYNC, .arg = { 1 }, .pass = DM_NO_LINK };
        long err = sv_call(bm, &sync);
        printf("finalsync: %s\n", err < 0 ? dm_error_name(err) : "done");
        return err < 0 ? 0 : 1;
    }
    return -1;
}

int main(int argc, char **argv)
{
    long bm = sb_lookup("bm");
    if (bm < 0) {
        printf("bmtest: no buffer manager: %s\n", dm_error_name(bm));
        return 1;
    }
    if (argc < 2)
        argc = 0;   /* the usage */
    for (int i = 1; i < argc;) {
        int used = command(bm, argc - i, argv + i);
        if (used == 0)
            return 1;
        if (used < 0) {
            argc = 0;
            break;
        }
        i += used;
    }
    if (argc == 0) {
        printf("usage: bmtest COMMAND...: file INODE COUNT | block BLOCK | stats | write INODE FIRST COUNT SEED | finalsync\n");
        return 2;
    }
    return 0;
}
