/*
 * fswriter — keep the file system busy until the node is powered off, for
 * the durability tests (tests/test_durability.py): a power-off then finds
 * files half made, blocks allocated and freed, directories changed, and
 * most of it still in the buffer manager's cache.
 *
 *   fswriter DIR SIZE SYNC   make directory DIR, then for ever: create
 *                            DIR/fN (N = 0, 1, ...), write SIZE bytes to it
 *                            in 3000-byte requests (not block-aligned), and
 *                            remove DIR/f(N-4), so that at most four files
 *                            exist and the disk never fills; after every
 *                            SYNC files (0: never), sync, so that a
 *                            power-off also finds older changes on the disk.
 *
 * It prints "fswriter: writing" once, when it starts, and after that only
 * an error, which ends it.
 */
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"
#include "fsclient.h"

#define CHUNK 3000
#define KEEP 4

/* Prints what failed and ends the program. */
static void fail(const char *what, const char *path, long err)
{
    printf("fswriter: %s %s: %s\n", what, path, dm_error_name(err));
    exit(1);
}

/* Writes `size` bytes (byte i is i + n, mod 256) to new file `path`. */
static void write_file(const char *path, uint64_t size, uint32_t n)
{
    static uint8_t buf[CHUNK];
    long file = fs_create(path, FS_TYPE_FILE, FS_ACCESS_WRITE);
    if (file < 0)
        fail("create", path, file);
    for (uint64_t at = 0; at < size; at += CHUNK) {
        uint64_t len = size - at < CHUNK ? size - at : CHUNK;
        for (uint64_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(at + i + n);
        long got = fs_write(file, at, buf, len);
        if (got < 0)
            fail("write", path, got);
    }
    fs_close(file);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        printf("usage: fswriter DIR SIZE SYNC\n");
        return 2;
    }
    const char *dir = argv[1];
    uint64_t size = (uint64_t)atoll(argv[2]);
    uint32_t sync_every = (uint32_t)atol(argv[3]);
    long err = fs_create(dir, FS_TYPE_DIR, 0);
    if (err < 0)
        fail("mkdir", dir, err);
    printf("fswriter: writing\n");
    char path[128];
    for (uint32_t n = 0;; n++) {
        snprintf(path, sizeof path, "%s/f%u", dir, (unsigned)n);
        write_file(path, size, n);
        if (n >= KEEP) {
            snprintf(path, sizeof path, "%s/f%u", dir, (unsigned)(n - KEEP));
            if ((err = fs_unlink(path)) < 0)
                fail("remove", path, err);
        }
        if (sync_every && (n + 1) % sync_every == 0 && (err = fs_sync()) < 0)
            fail("sync", dir, err);
    }
}
