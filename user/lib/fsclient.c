/*
 * fsclient.c — requests to the request interpreter. Requests by path go
 * over the link registered as "fs"; a file's reads and writes go over its
 * file link. The data of a read or write moves by MOVEDATA through a link to
 * the caller's own buffer, made for the request and handed over with it.
 */
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"

static long fs_link = -1;

/* A request over `via` (-1: the "fs" link) with `len` bytes of data (0: the
 * path and its NUL, if any); a link passed with the answer in *got, if got.
 * A request interpreter (or switchboard) that is gone, E_DEAD or E_NODE,
 * is E_FSDOWN. */
static long fs_call(long via, uint32_t op, const char *path, uint32_t len, int64_t a0, int64_t a1, long pass,
                    void *answer, uint32_t cap, int64_t *value, long *got)
{
    if (via < 0 && fs_link < 0 && (fs_link = sb_lookup("fs")) < 0) {
        long err = fs_link;
        fs_link = -1;
        if (pass >= 0)
            dm_destroylink(pass);
        return err == E_DEAD || err == E_NODE ? E_FSDOWN : err;
    }
    struct sv_call c = { .op = op, .arg = { a0, a1 }, .data = path,
                         .len = len ? len : path ? (uint32_t)strlen(path) + 1 : 0, .pass = pass,
                         .reply_data = answer, .reply_cap = cap };
    long status = sv_call(via < 0 ? fs_link : via, &c);
    if (value)
        *value = c.value;
    if (got)
        *got = c.reply_link;
    else if (c.reply_link >= 0)
        dm_destroylink(c.reply_link);
    return status == E_DEAD || status == E_NODE ? E_FSDOWN : status;
}

/* The file link an open or create answered with (or why there is none). */
static long file_link(long status, long got)
{
    if (status < 0)
        return status;
    return got >= 0 ? got : E_LINKFULL;   /* it was passed, but our table had no room */
}

long fs_open(const char *path, uint32_t access, struct dm_stat *st)
{
    long got = -1;
    long status = fs_call(-1, FS_OPEN, path, 0, access, 0, DM_NO_LINK, st, st ? sizeof *st : 0, 0, &got);
    return file_link(status, got);
}

long fs_lookup(const char *path, struct dm_stat *st)
{
    int64_t ino;
    long err = fs_call(-1, FS_OPEN, path, 0, 0, 0, DM_NO_LINK, st, st ? sizeof *st : 0, &ino, 0);
    return err < 0 ? err : (long)ino;
}

long fs_create(const char *path, int type, uint32_t access)
{
    long got = -1;
    long status = fs_call(-1, FS_CREATE, path, 0, type, access, DM_NO_LINK, 0, 0, 0, &got);
    return access ? file_link(status, got) : status < 0 ? status : 0;
}

/* A read or write of len bytes at buf: the link gives the needed right. */
static long transfer(long file, uint32_t op, uint64_t offset, void *buf, uint64_t len)
{
    if (file < 0)
        return E_BADSLOT;
    if (len == 0)
        return 0;
    long link = dm_createlink(0, 0, op == FS_READ ? LINK_WRITE : LINK_READ, buf, len);
    if (link < 0)
        return link;
    int64_t done;
    long err = fs_call(file, op, 0, 0, (int64_t)offset, (int64_t)len, link, 0, 0, &done, 0);
    return err < 0 ? err : (long)done;
}

long fs_read(long file, uint64_t offset, void *buf, uint64_t len)
{
    return transfer(file, FS_READ, offset, buf, len);
}

long fs_write(long file, uint64_t offset, const void *buf, uint64_t len)
{
    return transfer(file, FS_WRITE, offset, (void *)buf, len);
}

long fs_truncate(long file)
{
    return file < 0 ? E_BADSLOT : fs_call(file, FS_TRUNCATE, 0, 0, 0, 0, DM_NO_LINK, 0, 0, 0, 0);
}

long fs_stat(long file, struct dm_stat *st)
{
    return file < 0 ? E_BADSLOT : fs_call(file, FS_STAT, 0, 0, 0, 0, DM_NO_LINK, st, sizeof *st, 0, 0);
}

long fs_close(long file)
{
    return dm_destroylink(file);
}

long fs_unlink(const char *path)
{
    return fs_call(-1, FS_UNLINK, path, 0, 0, 0, DM_NO_LINK, 0, 0, 0, 0);
}

long fs_rename(const char *old_path, const char *new_path)
{
    char both[SV_DATA_MAX];
    size_t a = strlen(old_path) + 1, b = strlen(new_path) + 1;
    if (a + b > sizeof both)
        return E_TOOBIG;
    memcpy(both, old_path, a);
    memcpy(both + a, new_path, b);
    return fs_call(-1, FS_RENAME, both, (uint32_t)(a + b), 0, 0, DM_NO_LINK, 0, 0, 0, 0);
}

long fs_list(const char *path, int64_t first, struct fs_dirent *out, uint32_t max)
{
    int64_t count;
    long err = fs_call(-1, FS_LIST, path, 0, first, 0, DM_NO_LINK, out, max * sizeof *out, &count, 0);
    return err < 0 ? err : (long)count;
}

long fs_sync(void)
{
    return fs_call(-1, FS_SYNC, 0, 0, 0, 0, DM_NO_LINK, 0, 0, 0, 0);
}
