/*
 * ri.c — the request interpreter, one of the file system's four processes
 * (DEMOS): the only one users talk to (registered as "fs"). It asks the
 * directory manager about names and the buffer manager for blocks. File
 * data does not pass through it where it need not: a whole block moves by
 * MOVEDATA straight between the buffer manager and the user's data area
 * (the user's link is handed on); only the partial blocks at the ends of a
 * request go through the request interpreter's own buffer.
 *
 * Requests by path come over the registered link; opening a file answers
 * with a file link, whose code names the inode and the access granted, and
 * the file's reads and writes come over that (user/lib/fs_protocol.h).
 */
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"
#include "server.h"

static long bm, dm;
static uint8_t buffer[FS_BLOCK_SIZE];
static long buffer_link;            /* read and write rights on `buffer` */
static struct ri_counts counts;

/* A request to the buffer manager, passing `link` (a copy is made; -1 none). */
static long bm_call(uint32_t op, int64_t a0, int64_t a1, int64_t a2, long link, int64_t *value)
{
    long pass = link >= 0 ? dm_duplicatelink(link) : DM_NO_LINK;
    if (link >= 0 && pass < 0)
        return pass;
    struct sv_call c = { .op = op, .arg = { a0, a1, a2 }, .pass = pass };
    counts.bm_requests++;
    long status = sv_call(bm, &c);
    if (value)
        *value = c.value;
    return status == E_DEAD || status == E_NODE ? E_FSDOWN : status;   /* the buffer manager is gone */
}

/* FS_READ: bytes [offset, offset+length) of the file (FS_FILE_ID) into the user's area. */
static long read_file(int64_t file, uint64_t offset, uint64_t length, long user, int64_t *done)
{
    int64_t size;
    uint64_t moved = 0;
    /* The first block comes through our buffer: its answer tells the size. */
    long err = bm_call(BM_READ_FILE, file, (int64_t)(offset / FS_BLOCK_SIZE), 0, buffer_link, &size);
    if (err < 0)
        return err;
    if (offset >= (uint64_t)size)
        length = 0;
    else if (length > (uint64_t)size - offset)
        length = (uint64_t)size - offset;
    while (moved < length) {
        uint64_t at = offset + moved, block = at / FS_BLOCK_SIZE, within = at % FS_BLOCK_SIZE;
        uint64_t n = FS_BLOCK_SIZE - within;
        if (n > length - moved)
            n = length - moved;
        if (moved > 0 && n == FS_BLOCK_SIZE) {
            err = bm_call(BM_READ_FILE, file, (int64_t)block, (int64_t)moved, user, 0);   /* straight to the user */
        } else {
            if (moved > 0)
                err = bm_call(BM_READ_FILE, file, (int64_t)block, 0, buffer_link, 0);
            if (err >= 0)
                err = dm_movedata(user, moved, DM_SELF, (uint64_t)buffer + within, n);
        }
        if (err < 0)
            return err;
        moved += n;
    }
    counts.bytes_read += moved;
    *done = (int64_t)moved;
    return 0;
}

/* FS_WRITE: the user's area holds `length` bytes for [offset, ...) of the file. */
static long write_file(int64_t file, uint64_t offset, uint64_t length, long user, int64_t *done)
{
    int64_t size = -1;
    uint64_t moved = 0;
    long err = 0;
    if (offset + length < offset || offset + length > FS_MAX_FILE_SIZE)
        return E_TOOBIG;
    while (moved < length) {
        uint64_t at = offset + moved, block = at / FS_BLOCK_SIZE, within = at % FS_BLOCK_SIZE;
        uint64_t n = FS_BLOCK_SIZE - within;
        if (n > length - moved)
            n = length - moved;
        if (n == FS_BLOCK_SIZE) {
            err = bm_call(BM_WRITE_FILE, file, (int64_t)block, (int64_t)moved, user, &size);
        } else {   /* part of a block: read it, change it, write it */
            err = bm_call(BM_READ_FILE, file, (int64_t)block, 0, buffer_link, &size);
            if (err >= 0)
                err = dm_movedata(DM_SELF, (uint64_t)buffer + within, user, moved, n);
            if (err >= 0)
                err = bm_call(BM_WRITE_FILE, file, (int64_t)block, 0, buffer_link, 0);
        }
        if (err < 0)
            break;
        moved += n;
    }
    if (err < 0) {
        /* Failed part way (a full disk): the blocks written so far stay,
         * and the size covers them, so that no block lies past the end. */
        if (moved && offset + moved > (uint64_t)size)
            bm_call(BM_SET_SIZE, file, (int64_t)(offset + moved), 0, -1, 0);
        counts.bytes_written += moved;
        *done = (int64_t)moved;
        return err;
    }
    if (length && offset + length > (uint64_t)size)
        err = bm_call(BM_SET_SIZE, file, (int64_t)(offset + length), 0, -1, 0);
    counts.bytes_written += moved;
    *done = (int64_t)moved;
    return err < 0 ? err : 0;
}

/* Pass a request on to the directory manager with `out_len` bytes of
 * request data (0: the path and its NUL); its answer data to `data`. */
static long to_dm(uint32_t op, const char *path, uint32_t out_len, int64_t arg0, int64_t *value, void *data,
                  uint32_t cap, uint32_t *len)
{
    if (out_len == 0)
        out_len = (uint32_t)strlen(path) + 1;
    struct sv_call c = { .op = op, .arg = { arg0 }, .data = path, .len = out_len,
                         .pass = DM_NO_LINK, .reply_data = data, .reply_cap = cap };
    counts.dm_requests++;
    long status = sv_call(dm, &c);
    *value = c.value;
    *len = c.reply_len;
    return status == E_DEAD || status == E_NODE ? E_FSDOWN : status;   /* the directory manager is gone */
}

/* E_NAMETOOLONG if a name in the `len` bytes at `path` (one path, or two
 * for FS_RENAME, each NUL-ended) is longer than a directory entry holds
 * (FS_NAME_MAX), else 0. */
static long check_names(const char *path, uint32_t len)
{
    size_t name = 0;
    for (uint32_t i = 0; i < len; i++) {
        name = path[i] == '/' || path[i] == 0 ? 0 : name + 1;
        if (name > FS_NAME_MAX)
            return E_NAMETOOLONG;
    }
    return 0;
}

/* A file link's code: the file (FS_FILE_ID: inode and generation) in bits
 * 0-60, the access granted in bits 61-62. */
#define CHANNEL_REQUEST 0   /* the registered link: requests by path */
#define CHANNEL_FILE    1   /* file links, from FS_OPEN and FS_CREATE */
#define CHANNEL_HALT    2   /* the process manager's link (PM_SERVE "fs"): the final sync at halt */
#define ACCESS_SHIFT    61

static uint8_t answer[DM_MSG_MAX];

/* FS_OPEN and FS_CREATE: look the path up (or create it) through the
 * directory manager; with access asked for, *pass = a file link to answer
 * with. */
static long open_file(const struct sv_request *q, const char *path, int64_t *value, uint32_t *len, long *pass)
{
    int64_t type = q->op == FS_CREATE ? q->arg[0] : 0;
    int64_t access = q->op == FS_CREATE ? q->arg[1] : q->arg[0];
    if (access & ~(int64_t)(FS_ACCESS_READ | FS_ACCESS_WRITE))
        return E_INVAL;
    if (type == FS_TYPE_DIR && (access & FS_ACCESS_WRITE))
        return E_STATE;   /* a directory's entries are the directory manager's to write */
    long status = q->op == FS_CREATE ? to_dm(DMG_CREATE, path, 0, type, value, answer, sizeof answer, len)
                                     : to_dm(DMG_LOOKUP, path, 0, 0, value, answer, sizeof answer, len);
    if (status < 0 || !access)
        return status;
    if (q->op == FS_OPEN && ((struct dm_stat *)answer)->type == FS_TYPE_DIR && (access & FS_ACCESS_WRITE))
        return E_STATE;
    const struct dm_stat *st = (const struct dm_stat *)answer;
    *pass = dm_createlink(CHANNEL_FILE, (uint64_t)FS_FILE_ID(st->inode, st->generation) | (uint64_t)access << ACCESS_SHIFT,
                          0, 0, 0);
    return *pass < 0 ? *pass : 0;
}

/* A request that must come over a file link: read, write, truncate, stat
 * of the file the link names, if the link grants the access it needs. */
static long file_request(const struct sv_request *q, const struct dm_msg_info *info, int64_t *value, uint32_t *len)
{
    if (info->channel != CHANNEL_FILE)
        return E_BADREQ;
    int64_t file = (int64_t)(info->code & ((1ull << ACCESS_SHIFT) - 1));
    uint32_t access = (uint32_t)(info->code >> ACCESS_SHIFT);
    switch (q->op) {
    case FS_READ:
    case FS_WRITE:
        if (!(access & (q->op == FS_READ ? FS_ACCESS_READ : FS_ACCESS_WRITE)))
            return E_RIGHTS;
        if (info->link < 0 || q->arg[0] < 0 || q->arg[1] < 0)
            return E_INVAL;
        return q->op == FS_READ ? read_file(file, (uint64_t)q->arg[0], (uint64_t)q->arg[1], info->link, value)
                                : write_file(file, (uint64_t)q->arg[0], (uint64_t)q->arg[1], info->link, value);
    case FS_TRUNCATE:   /* a file: write access is given to nothing else */
        return access & FS_ACCESS_WRITE ? bm_call(BM_TRUNCATE, file, 0, 0, -1, 0) : E_RIGHTS;
    case FS_STAT:
        return to_dm(DMG_STAT, "", 0, file, value, answer, sizeof answer, len);
    }
    return E_NOSYS;
}

/* Set by the final sync at halt: from then on every change is refused
 * (E_FSDOWN), so that the disk stays as that sync left it, CLEAN. Requests
 * are served one at a time, each with every request it makes to the
 * directory and buffer managers, so the sync falls between two whole
 * operations, never inside one. */
static int closed;

/* Whether a request changes the file system. */
static int changes(uint32_t op)
{
    return op == FS_CREATE || op == FS_UNLINK || op == FS_RENAME || op == FS_WRITE || op == FS_TRUNCATE;
}

/* FS_SYNC over the halt link: every changed block written, the superblock
 * marked CLEAN (BM_SYNC's final sync), and the file system closed. */
static long final_sync(int64_t *value)
{
    closed = 1;
    return bm_call(BM_SYNC, 1, 0, 0, -1, value);
}

/* One request; its answer's value, data (in `answer`, *len bytes) and
 * passed link. */
static long handle(const struct sv_request *q, const struct dm_msg_info *info, uint32_t size, int64_t *value,
                   uint32_t *len, long *pass)
{
    if (info->channel == CHANNEL_HALT)
        return q->op == FS_SYNC ? final_sync(value) : E_BADREQ;
    if (closed && changes(q->op))
        return E_FSDOWN;
    const char *path = (const char *)(q + 1);
    int by_path = q->op == FS_OPEN || q->op == FS_CREATE || q->op == FS_UNLINK || q->op == FS_LIST ||
                  q->op == FS_RENAME;
    long err = by_path ? check_names(path, (uint32_t)(size - sizeof *q)) : 0;
    if (err < 0)
        return err;
    switch (q->op) {
    case FS_OPEN:
    case FS_CREATE:
        return open_file(q, path, value, len, pass);
    case FS_UNLINK:
        return to_dm(DMG_UNLINK, path, 0, 0, value, answer, sizeof answer, len);
    case FS_LIST:
        return to_dm(DMG_LIST, path, 0, q->arg[0], value, answer, sizeof answer, len);
    case FS_RENAME:
        return to_dm(DMG_RENAME, path, (uint32_t)(size - sizeof *q), 0, value, answer, sizeof answer, len);
    case FS_READ:
    case FS_WRITE:
    case FS_TRUNCATE:
    case FS_STAT:
        return file_request(q, info, value, len);
    case FS_SYNC:
        return bm_call(BM_SYNC, 0, 0, 0, -1, value);
    case FS_STATS:
        memcpy(answer, &counts, sizeof counts);
        *len = sizeof counts;
        return 0;
    }
    return E_NOSYS;
}

/* One request (its path is ended: server_run), counted; an answer that
 * fails carries no data and no link. */
static void serve(const struct dm_msg_info *info, const struct sv_request *q, uint32_t n,
                  struct server_answer *reply)
{
    int64_t value = 0;
    uint32_t len = 0;
    long pass = DM_NO_LINK;
    if (q->op < FS_NKINDS)
        counts.requests[q->op]++;
    long status = handle(q, info, n, &value, &len, &pass);
    if (status < 0 && pass >= 0) {
        dm_destroylink(pass);
        pass = DM_NO_LINK;
    }
    reply->status = status;
    reply->value = value;
    reply->data = answer;
    reply->len = status < 0 ? 0 : len;
    reply->pass = pass;
}

int main(void)
{
    bm = sb_lookup_wait("bm", 5000000000ull);
    dm = sb_lookup_wait("dm", 5000000000ull);
    buffer_link = dm_createlink(0, 0, LINK_READ | LINK_WRITE, buffer, sizeof buffer);
    if (bm < 0 || dm < 0 || buffer_link < 0)
        return 1;
    server_offer("fs", CHANNEL_HALT);
    server_register("fs", CHANNEL_REQUEST);
    server_run(serve);
}
