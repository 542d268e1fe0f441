/*
 * fsclient.c — requests to the request interpreter. The data of a read or
 * write moves by MOVEDATA through a link to the caller's own buffer, made
 * for the request and handed over with it.
 */
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"

static long fs_link = -1;

/* A request with `len` bytes of data (0: the path and its NUL, if any). */
static long fs_call_data(uint32_t op, const char *path, uint32_t len, int64_t a0, int64_t a1, int64_t a2,
                         long pass, void *answer, uint32_t cap, int64_t *value)
{
    if (fs_link < 0 && (fs_link = sb_lookup("fs")) < 0) {
        long err = fs_link;
        fs_link = -1;
        if (pass >= 0)
            dm_destroylink(pass);
        return err;
    }
    struct sv_call c = { .op = op, .arg = { a0, a1, a2 }, .data = path,
                         .len = len ? len : path ? (uint32_t)strlen(path) + 1 : 0, .pass = pass,
                         .reply_data = answer, .reply_cap = cap };
    long status = sv_call(fs_link, &c);
    if (value)
        *value = c.value;
    return status;
}

static long fs_call(uint32_t op, const char *path, int64_t a0, int64_t a1, int64_t a2, long pass,
                    void *answer, uint32_t cap, int64_t *value)
{
    return fs_call_data(op, path, 0, a0, a1, a2, pass, answer, cap, value);
}

long fs_open(const char *path, struct dm_stat *st)
{
    int64_t ino;
    long err = fs_call(FS_OPEN, path, 0, 0, 0, DM_NO_LINK, st, st ? sizeof *st : 0, &ino);
    return err < 0 ? err : (long)ino;
}

long fs_create(const char *path, int type)
{
    int64_t ino;
    long err = fs_call(FS_CREATE, path, type, 0, 0, DM_NO_LINK, 0, 0, &ino);
    return err < 0 ? err : (long)ino;
}

/* A read or write of len bytes at buf: the link gives the needed right. */
static long transfer(uint32_t op, uint32_t inode, uint64_t offset, void *buf, uint64_t len)
{
    if (len == 0)
        return 0;
    long link = dm_createlink(0, 0, op == FS_READ ? LINK_WRITE : LINK_READ, buf, len);
    if (link < 0)
        return link;
    int64_t done;
    long err = fs_call(op, 0, inode, (int64_t)offset, (int64_t)len, link, 0, 0, &done);
    return err < 0 ? err : (long)done;
}

long fs_read(uint32_t inode, uint64_t offset, void *buf, uint64_t len)
{
    return transfer(FS_READ, inode, offset, buf, len);
}

long fs_write(uint32_t inode, uint64_t offset, const void *buf, uint64_t len)
{
    return transfer(FS_WRITE, inode, offset, (void *)buf, len);
}

long fs_unlink(const char *path)
{
    return fs_call(FS_UNLINK, path, 0, 0, 0, DM_NO_LINK, 0, 0, 0);
}

long fs_list(const char *path, int64_t first, struct fs_dirent *out, uint32_t max)
{
    int64_t count;
    long err = fs_call(FS_LIST, path, first, 0, 0, DM_NO_LINK, out, max * sizeof *out, &count);
    return err < 0 ? err : (long)count;
}

long fs_sync(void)
{
    return fs_call(FS_SYNC, 0, 0, 0, 0, DM_NO_LINK, 0, 0, 0);
}

long fs_rename(const char *old_path, const char *new_path)
{
    char both[SV_DATA_MAX];
    size_t a = strlen(old_path) + 1, b = strlen(new_path) + 1;
    if (a + b > sizeof both)
        return E_TOOBIG;
    memcpy(both, old_path, a);
    memcpy(both + a, new_path, b);
    return fs_call_data(FS_RENAME, both, (uint32_t)(a + b), 0, 0, 0, DM_NO_LINK, 0, 0, 0);
}

long fs_truncate(uint32_t inode)
{
    return fs_call(FS_TRUNCATE, 0, inode, 0, 0, DM_NO_LINK, 0, 0, 0);
}

long fs_stat(uint32_t inode, struct dm_stat *st)
{
    return fs_call(FS_STAT, 0, inode, 0, 0, DM_NO_LINK, st, sizeof *st, 0);
}
