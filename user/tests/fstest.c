/*
 * fstest — use the file system through the request interpreter ("fs"), the
 * way the C library will: create, write, read, remove.
 *
 *   fstest write PATH SIZE SEED CHUNK   create PATH (if new) and write SIZE
 *                                       pattern bytes in requests of CHUNK bytes
 *   fstest read PATH CHUNK              read PATH in CHUNK-byte requests; print
 *                                       its size and checksum (FNV-1a, 64 bits)
 *   fstest rm PATH
 *   fstest stats                        the request interpreter's counters
 *   fstest rights FILE DIR              what the request interpreter refuses: a
 *                                       write over a read-only file link, a read
 *                                       over the "fs" link, write access to a
 *                                       directory
 *   fstest stale PATH                   a file link to PATH, kept while PATH is
 *                                       removed and made again (with the same
 *                                       inode): the old link no longer reaches it
 *   fstest twice PATH                   read PATH twice in 4096-byte requests
 *                                       and print what the buffer manager and
 *                                       the disk interface counted for each
 *                                       read (in one run: loading a program
 *                                       reads it through the buffer manager too)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"

static long file_link = -1;   /* the file link the last open or create passed */
static long fs;

/* A request over link `via` (fs, or a file link); a file link passed with
 * the answer goes to *file_link when asked for. */
static long call(long via, uint32_t op, const char *path, int64_t a0, int64_t a1, int64_t a2, long link,
                 int64_t *value, void *data, uint32_t cap)
{
    struct sv_call c = { .op = op, .arg = { a0, a1, a2 }, .data = path, .len = path ? (uint32_t)strlen(path) + 1 : 0,
                         .pass = link, .reply_data = data, .reply_cap = cap };
    long status = sv_call(via, &c);
    if (value)
        *value = c.value;
    if (c.reply_link >= 0)
        file_link = c.reply_link;
    return status;
}

static uint8_t pattern(uint64_t i, unsigned seed)
{
    return (uint8_t)((i * 131 + seed) ^ (i >> 11));
}

/* Read all of the file that link `file` names in 4096-byte requests; its
 * checksum, or an error. */
static long read_all(long file, uint64_t *total, uint64_t *h)
{
    static uint8_t buf[FS_BLOCK_SIZE];
    int64_t got;
    *total = 0, *h = 0xcbf29ce484222325ull;
    for (;;) {
        long link = dm_createlink(0, 0, LINK_WRITE, buf, sizeof buf);
        long err = call(file, FS_READ, 0, (int64_t)*total, sizeof buf, 0, link, &got, 0, 0);
        if (err < 0 || got == 0)
            return err;
        for (int64_t i = 0; i < got; i++)
            *h = (*h ^ buf[i]) * 0x100000001b3ull;
        *total += (uint64_t)got;
    }
}

/* The buffer manager's and the disk interface's counters. */
static long counters(struct bm_stats *bm, struct di_stats *di)
{
    long bm_link = sb_lookup("bm"), di_link = sb_lookup("di");
    struct sv_call b = { .op = BM_STATS, .pass = DM_NO_LINK, .reply_data = bm, .reply_cap = sizeof *bm };
    struct sv_call d = { .op = DI_STATS, .pass = DM_NO_LINK, .reply_data = di, .reply_cap = sizeof *di };
    long err = bm_link < 0 ? bm_link : di_link < 0 ? di_link : sv_call(bm_link, &b);
    if (err >= 0)
        err = sv_call(di_link, &d);
    dm_destroylink(bm_link);
    dm_destroylink(di_link);
    return err;
}

static int cmd_write(char **argv);
static int cmd_read(char **argv);
static int cmd_rm(char **argv);
static int cmd_stats(void);
static int cmd_rights(char **argv);
static int cmd_stale(char **argv);
static int cmd_twice(char **argv);

/* One subcommand, by its name and number of arguments. */
int main(int argc, char **argv)
{
    if ((fs = sb_lookup("fs")) < 0) {
        printf("fstest: no file system\n");
        return 1;
    }
    if (argc == 6 && strcmp(argv[1], "write") == 0)
        return cmd_write(argv);
    if (argc == 4 && strcmp(argv[1], "read") == 0)
        return cmd_read(argv);
    if (argc == 3 && strcmp(argv[1], "rm") == 0)
        return cmd_rm(argv);
    if (argc == 2 && strcmp(argv[1], "stats") == 0)
        return cmd_stats();
    if (argc == 4 && strcmp(argv[1], "rights") == 0)
        return cmd_rights(argv);
    if (argc == 3 && strcmp(argv[1], "stale") == 0)
        return cmd_stale(argv);
    if (argc == 3 && strcmp(argv[1], "twice") == 0)
        return cmd_twice(argv);
    printf("usage: fstest write PATH SIZE SEED CHUNK | read PATH CHUNK | rm PATH | stats | rights FILE DIR | "
           "stale PATH | twice PATH\n");
    return 2;
}

/* fstest write PATH SIZE SEED CHUNK (the usage above). */
static int cmd_write(char **argv)
{
    int64_t ino = 0, got = 0;
    uint64_t size = (uint64_t)atoll(argv[3]), chunk = (uint64_t)atoll(argv[5]);
    unsigned seed = (unsigned)atoi(argv[4]);
    long err = call(fs, FS_OPEN, argv[2], FS_ACCESS_WRITE, 0, 0, DM_NO_LINK, &ino, 0, 0);
    if (err == E_NOTFOUND)
        err = call(fs, FS_CREATE, argv[2], FS_TYPE_FILE, FS_ACCESS_WRITE, 0, DM_NO_LINK, &ino, 0, 0);
    uint8_t *buf = malloc(chunk);
    for (uint64_t at = 0; err >= 0 && at < size; at += (uint64_t)got) {
        uint64_t n = size - at < chunk ? size - at : chunk;
        for (uint64_t i = 0; i < n; i++)
            buf[i] = pattern(at + i, seed);
        long link = dm_createlink(0, 0, LINK_READ, buf, n);
        err = call(file_link, FS_WRITE, 0, (int64_t)at, (int64_t)n, 0, link, &got, 0, 0);
        if (err >= 0 && got != (int64_t)n)
            err = E_INVAL;
    }
    if (err < 0) {
        printf("%s: %s\n", argv[2], dm_error_name(err));
        return 1;
    }
    printf("%s: wrote %llu bytes\n", argv[2], (unsigned long long)size);
    return 0;
}

/* fstest read PATH CHUNK (the usage above). */
static int cmd_read(char **argv)
{
    int64_t ino = 0, got = 0;
    struct dm_stat st;
    uint64_t chunk = (uint64_t)atoll(argv[3]), total = 0, h = 0xcbf29ce484222325ull;
    long err = call(fs, FS_OPEN, argv[2], FS_ACCESS_READ, 0, 0, DM_NO_LINK, &ino, &st, sizeof st);
    uint8_t *buf = malloc(chunk);
    while (err >= 0) {
        long link = dm_createlink(0, 0, LINK_WRITE, buf, chunk);
        err = call(file_link, FS_READ, 0, (int64_t)total, (int64_t)chunk, 0, link, &got, 0, 0);
        if (err < 0 || got == 0)
            break;
        for (int64_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
        total += (uint64_t)got;
    }
    if (err < 0) {
        printf("%s: %s\n", argv[2], dm_error_name(err));
        return 1;
    }
    printf("%s: size %llu read %llu fnv %016llx\n", argv[2], (unsigned long long)st.size,
           (unsigned long long)total, (unsigned long long)h);
    return 0;
}

/* fstest rm PATH (the usage above). */
static int cmd_rm(char **argv)
{
    long err = call(fs, FS_UNLINK, argv[2], 0, 0, 0, DM_NO_LINK, 0, 0, 0);
    printf("%s: %s\n", argv[2], err < 0 ? dm_error_name(err) : "removed");
    return err < 0;
}

/* fstest stats (the usage above). */
static int cmd_stats(void)
{
    struct ri_counts k;
    if (call(fs, FS_STATS, 0, 0, 0, 0, DM_NO_LINK, 0, &k, sizeof k) < 0)
        return 1;
    printf("read %llu write %llu bm_requests %llu dm_requests %llu bytes_read %llu bytes_written %llu\n",
           (unsigned long long)k.requests[FS_READ], (unsigned long long)k.requests[FS_WRITE],
           (unsigned long long)k.bm_requests, (unsigned long long)k.dm_requests,
           (unsigned long long)k.bytes_read, (unsigned long long)k.bytes_written);
    return 0;
}

/* fstest rights FILE DIR (the usage above). */
static int cmd_rights(char **argv)
{
    int64_t ino = 0, got = 0;
    static uint8_t buf[16];
    long err = call(fs, FS_OPEN, argv[2], FS_ACCESS_READ, 0, 0, DM_NO_LINK, &ino, 0, 0);
    if (err < 0) {
        printf("%s: %s\n", argv[2], dm_error_name(err));
        return 1;
    }
    long read_only = file_link;
    long link = dm_createlink(0, 0, LINK_READ, buf, sizeof buf);
    printf("write over a read-only file link: %s\n",
           dm_error_name(call(read_only, FS_WRITE, 0, 0, sizeof buf, 0, link, &got, 0, 0)));
    link = dm_createlink(0, 0, LINK_WRITE, buf, sizeof buf);
    printf("read over the fs link: %s\n", dm_error_name(call(fs, FS_READ, 0, 0, sizeof buf, 0, link, &got, 0, 0)));
    printf("truncate over a read-only file link: %s\n",
           dm_error_name(call(read_only, FS_TRUNCATE, 0, 0, 0, 0, DM_NO_LINK, 0, 0, 0)));
    printf("write access to a directory: %s\n",
           dm_error_name(call(fs, FS_OPEN, argv[3], FS_ACCESS_WRITE, 0, 0, DM_NO_LINK, &ino, 0, 0)));
    link = dm_createlink(0, 0, LINK_WRITE, buf, sizeof buf);
    err = call(read_only, FS_READ, 0, 0, sizeof buf, 0, link, &got, 0, 0);
    printf("read over the read-only file link: %s, %lld bytes\n", dm_error_name(err), (long long)got);
    return 0;
}

/* fstest stale PATH (the usage above). */
static int cmd_stale(char **argv)
{
    int64_t got = 0;
    static uint8_t buf[16] = "stale data";
    int64_t old_ino = 0, new_ino = 0;
    struct dm_stat st;
    long err = call(fs, FS_CREATE, argv[2], FS_TYPE_FILE, FS_ACCESS_WRITE, 0, DM_NO_LINK, &old_ino, 0, 0);
    long old_link = file_link;
    if (err >= 0)
        err = call(fs, FS_UNLINK, argv[2], 0, 0, 0, DM_NO_LINK, 0, 0, 0);
    if (err >= 0)
        err = call(fs, FS_CREATE, argv[2], FS_TYPE_FILE, FS_ACCESS_READ, 0, DM_NO_LINK, &new_ino, 0, 0);
    if (err < 0) {
        printf("%s: %s\n", argv[2], dm_error_name(err));
        return 1;
    }
    long link = dm_createlink(0, 0, LINK_READ, buf, sizeof buf);
    printf("same inode: %s\n", old_ino == new_ino ? "yes" : "no");
    printf("write over the old link: %s\n",
           dm_error_name(call(old_link, FS_WRITE, 0, 0, sizeof buf, 0, link, &got, 0, 0)));
    printf("stat over the old link: %s\n",
           dm_error_name(call(old_link, FS_STAT, 0, 0, 0, 0, DM_NO_LINK, 0, &st, sizeof st)));
    err = call(file_link, FS_STAT, 0, 0, 0, 0, DM_NO_LINK, 0, &st, sizeof st);
    printf("the new file: %s, size %llu\n", dm_error_name(err), (unsigned long long)st.size);
    return 0;
}

/* fstest twice PATH (the usage above). */
static int cmd_twice(char **argv)
{
    int64_t ino = 0;
    struct bm_stats b[3];
    struct di_stats d[3];
    uint64_t total, h;
    long err = call(fs, FS_OPEN, argv[2], FS_ACCESS_READ, 0, 0, DM_NO_LINK, &ino, 0, 0);
    for (int pass = 0; err >= 0 && pass < 3; pass++) {
        if ((err = counters(&b[pass], &d[pass])) < 0 || pass == 2)
            break;
        err = read_all(file_link, &total, &h);
        if (err >= 0)
            printf("read %d: %llu bytes fnv %016llx\n", pass + 1, (unsigned long long)total,
                   (unsigned long long)h);
    }
    if (err < 0) {
        printf("%s: %s\n", argv[2], dm_error_name(err));
        return 1;
    }
    for (int pass = 1; pass < 3; pass++)
        printf("read %d: misses %llu hits %llu holes %llu inode_reads %llu indirect_reads %llu di_reads %llu\n",
               pass, (unsigned long long)(b[pass].misses - b[pass - 1].misses),
               (unsigned long long)(b[pass].hits - b[pass - 1].hits),
               (unsigned long long)(b[pass].holes - b[pass - 1].holes),
               (unsigned long long)(b[pass].inode_reads - b[pass - 1].inode_reads),
               (unsigned long long)(b[pass].indirect_reads - b[pass - 1].indirect_reads),
               (unsigned long long)(d[pass].reads - d[pass - 1].reads));
    return 0;
}
