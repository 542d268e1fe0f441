/*
 * bm.c — the buffer manager, one of the file system's four processes
 * (DEMOS): a cache of disk blocks between the directory manager and request
 * interpreter above and the disk interface below. It maps a file's blocks
 * to disk blocks itself, following the inode's direct, single- and
 * double-indirect pointers through its own cache, so its extra requests to
 * the disk interface for inode-table and indirect blocks are visible as
 * messages (docs/fs-design.md).
 *
 *     bm [CACHE_BLOCKS]      default 64
 *
 * So far it serves reads (BM_READ_BLOCK, BM_READ_FILE) and its counters
 * (BM_STATS); writing, allocation and write-back come next.
 */
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsproto.h"

struct buffer {
    uint32_t block;      /* disk block held */
    int      valid;
    uint64_t last_use;   /* for least-recently-used replacement */
};

static long di;                      /* link to the disk interface */
static uint8_t *cache;               /* cache_blocks buffers of FS_BLOCK_SIZE */
static long cache_link;              /* link to cache, read and write rights */
static struct buffer *buffers;
static uint32_t cache_blocks;
static uint64_t use_clock;
static struct fs_superblock superblock;
static struct bm_stats stats;
static const uint8_t zeros[FS_BLOCK_SIZE];

/* Read disk block b into buffer i through the disk interface. */
static long disk_read(uint32_t b, uint32_t i)
{
    long area = dm_duplicatelink(cache_link);
    if (area < 0)
        return area;
    struct sv_call c = { .op = DI_READ, .arg = { b, (int64_t)i * FS_BLOCK_SIZE }, .pass = area };
    return sv_call(di, &c);
}

/* The buffer holding disk block b, read in on a miss (*missed = 1); -1 with
 * *err on failure. The least recently used buffer is replaced. */
static int get_block(uint32_t b, int *missed, long *err)
{
    uint32_t victim = 0;
    for (uint32_t i = 0; i < cache_blocks; i++) {
        if (buffers[i].valid && buffers[i].block == b) {
            buffers[i].last_use = ++use_clock;
            *missed = 0;
            return (int)i;
        }
        if (!buffers[i].valid || (buffers[victim].valid && buffers[i].last_use < buffers[victim].last_use))
            victim = i;
    }
    *missed = 1;
    buffers[victim].valid = 0;
    if ((*err = disk_read(b, victim)) < 0)
        return -1;
    buffers[victim].block = b;
    buffers[victim].valid = 1;
    buffers[victim].last_use = ++use_clock;
    return (int)victim;
}

static uint8_t *buffer_data(int i)
{
    return cache + (size_t)i * FS_BLOCK_SIZE;
}

/* A metadata block (inode table, indirect) through the cache; a miss is
 * counted in *counter. */
static uint8_t *get_meta(uint32_t b, uint64_t *counter, long *err)
{
    if (b < superblock.inode_table_start || b >= superblock.block_count) {
        *err = E_BOUNDS;
        return 0;
    }
    int missed;
    int i = get_block(b, &missed, err);
    if (i < 0)
        return 0;
    *counter += missed;
    return buffer_data(i);
}

/* Disk block of file block n of inode ino (0 for a hole); its size in *size. */
static long map_file_block(uint32_t ino, uint64_t n, uint32_t *disk_block, uint64_t *size)
{
    if (ino == 0 || ino >= superblock.inode_count)
        return E_NOTFOUND;
    long err = 0;
    uint8_t *table = get_meta(superblock.inode_table_start + ino / FS_INODES_PER_BLOCK, &stats.inode_reads, &err);
    if (!table)
        return err;
    struct fs_inode inode;
    memcpy(&inode, table + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE, sizeof inode);
    if (inode.type == FS_TYPE_FREE)
        return E_NOTFOUND;
    *size = inode.size;
    uint32_t index[2];
    int level = fs_block_path(n, index);
    if (level < 0)
        return E_BOUNDS;
    uint32_t pointer = level == 0 ? inode.direct[index[0]] : level == 1 ? inode.indirect : inode.double_indirect;
    for (int step = 0; step < level && pointer; step++) {
        uint8_t *block = get_meta(pointer, &stats.indirect_reads, &err);
        if (!block)
            return err;
        memcpy(&pointer, block + 4 * index[level == 2 && step == 1 ? 1 : 0], 4);
    }
    if (pointer && (pointer < superblock.data_start || pointer >= superblock.block_count))
        return E_BOUNDS;
    *disk_block = pointer;
    return 0;
}

/* Move block b (0: zeros) to the requester's area, counting a hit or a miss. */
static long send_block(uint32_t b, long area, uint64_t offset)
{
    if (b == 0) {
        stats.holes++;
        return dm_movedata(area, offset, DM_SELF, (uint64_t)zeros, FS_BLOCK_SIZE);
    }
    int missed;
    long err = 0;
    int i = get_block(b, &missed, &err);
    if (i < 0)
        return err;
    if (missed)
        stats.misses++;
    else
        stats.hits++;
    return dm_movedata(area, offset, DM_SELF, (uint64_t)buffer_data(i), FS_BLOCK_SIZE);
}

static long handle(const struct sv_request *q, long area, int64_t *value)
{
    if (q->op < BM_NKINDS)
        stats.requests[q->op]++;
    switch (q->op) {
    case BM_READ_BLOCK:
        if (area < 0)
            return E_INVAL;
        if (q->arg[0] < 0 || (uint64_t)q->arg[0] >= superblock.block_count)
            return E_BOUNDS;
        return send_block((uint32_t)q->arg[0], area, (uint64_t)q->arg[1]);
    case BM_READ_FILE: {
        if (area < 0)
            return E_INVAL;
        uint32_t b = 0;
        uint64_t size = 0;
        long err = q->arg[0] < 0 || q->arg[1] < 0 ? E_BOUNDS
                   : map_file_block((uint32_t)q->arg[0], (uint64_t)q->arg[1], &b, &size);
        if (err == 0)
            err = send_block(b, area, (uint64_t)q->arg[2]);
        *value = (int64_t)size;
        return err;
    }
    }
    return E_NOSYS;
}

int main(int argc, char **argv)
{
    cache_blocks = argc > 1 ? (uint32_t)atol(argv[1]) : 64;
    if (cache_blocks < 4)
        cache_blocks = 4;
    cache = malloc((size_t)cache_blocks * FS_BLOCK_SIZE);
    buffers = calloc(cache_blocks, sizeof *buffers);
    if (!cache || !buffers)
        return 1;
    stats.cache_blocks = cache_blocks;
    cache_link = dm_createlink(0, 0, LINK_READ | LINK_WRITE, cache, (uint64_t)cache_blocks * FS_BLOCK_SIZE);
    di = sb_lookup_wait("di", 5000000000ull);
    if (di < 0 || cache_link < 0)
        return 1;
    int missed;
    long err;
    int i = get_block(0, &missed, &err);
    stats.mount_reads += missed;
    if (i < 0)
        return 1;
    memcpy(&superblock, buffer_data(i), sizeof superblock);
    if (superblock.magic != FS_MAGIC || superblock.version != FS_VERSION)
        return 2;   /* not a file system: serve nothing */
    sb_register("bm", dm_createlink(0, 0, 0, 0, 0));

    static uint8_t message[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        const struct sv_request *q = (const struct sv_request *)message;
        int64_t value = 0;
        if ((size_t)n >= sizeof *q && q->op == BM_STATS) {
            stats.requests[BM_STATS]++;
            if (info.reply >= 0)
                sv_reply(info.reply, 0, 0, &stats, sizeof stats, DM_NO_LINK);
        } else {
            long status = (size_t)n >= sizeof *q ? handle(q, info.link, &value) : E_BADREQ;
            if (info.reply >= 0)
                sv_reply(info.reply, status < 0 ? status : 0, value, 0, 0, DM_NO_LINK);
        }
        if (info.link >= 0)
            dm_destroylink(info.link);
    }
}
