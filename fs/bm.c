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
 * Writes stay in the cache (write-back): a changed block goes to the disk
 * when it is evicted or at BM_SYNC. Blocks are allocated from the block
 * bitmap, itself read and changed through the cache.
 *
 * The superblock's state (docs/fs-design.md, "Consistency"): the disk
 * interface marks it MOUNTED before this process starts. The final sync at
 * shutdown (BM_SYNC with arg0 = 1) writes every changed block, then the
 * superblock as CLEAN; a change after that first writes it back as MOUNTED.
 * So CLEAN on the disk always means every change reached it.
 *
 * Read-ahead (BM_READAHEAD sets how many blocks, none at start): a reader
 * that reads a file in order may have the next blocks asked of the disk
 * before it asks for them. That is the lab of docs/labs/readahead.md, and
 * `readahead` below is where it goes.
 */
#include <stddef.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"
#include "server.h"

struct buffer {
    uint32_t block;      /* disk block held */
    int      valid;
    int      dirty;      /* changed since read: must be written back */
    int      indirect;   /* an indirect block (BM_SYNC writes these after data) */
    uint64_t last_use;   /* for least-recently-used replacement */
};

static long di;                      /* link to the disk interface */
static uint8_t *cache;               /* cache_blocks buffers of FS_BLOCK_SIZE */
static long cache_link;              /* link to cache, read and write rights */
static struct buffer *buffers;
static uint32_t cache_blocks;
static uint64_t use_clock;
static struct fs_superblock superblock;
static int marked_clean;             /* the disk's superblock says CLEAN (after a final sync) */
static int sound;                    /* the disk interface found the file system sound (DI_SOUND) */
static struct bm_stats stats;
static uint64_t disk_requests;       /* every request sent to the disk interface */
static const uint8_t zeros[FS_BLOCK_SIZE];
static long write_back_failed;       /* the first DI_WRITE that failed: every later change is refused with it */
static uint32_t readahead_blocks;    /* blocks to read ahead of a reader in order (BM_READAHEAD) */

/* Move buffer i to or from disk block b through the disk interface. A
 * disk interface that is gone (E_DEAD, E_NODE), or a disk that refused the
 * transfer (E_BADREQ, the kernel's answer), is E_FSDOWN; the first failed
 * write is kept in write_back_failed. */
static long disk_transfer(uint32_t op, uint32_t b, uint32_t i)
{
    long area = dm_duplicatelink(cache_link);
    if (area < 0)
        return area;
    struct sv_call c = { .op = op, .arg = { b, (int64_t)i * FS_BLOCK_SIZE }, .pass = area };
    disk_requests++;
    long status = sv_call(di, &c);
    if (status == E_DEAD || status == E_NODE || status == E_BADREQ)
        status = E_FSDOWN;
    if (status < 0 && op == DI_WRITE && !write_back_failed)
        write_back_failed = status;
    return status;
}

/* A buffer to put block b in: a free one or the least recently used, whose
 * changed contents are written back first; -1 with *err on failure. */
static int take_buffer(long *err)
{
    uint32_t victim = 0;
    for (uint32_t i = 0; i < cache_blocks; i++) {
        if (!buffers[i].valid) {
            victim = i;
            break;
        }
        if (buffers[i].last_use < buffers[victim].last_use)
            victim = i;
    }
    struct buffer *v = &buffers[victim];
    if (v->valid && v->dirty) {
        if ((*err = disk_transfer(DI_WRITE, v->block, victim)) < 0)
            return -1;
        stats.writebacks++;
    }
    v->valid = 0;
    v->dirty = 0;
    return (int)victim;
}

/* The buffer holding disk block b, read in on a miss (*missed = 1) unless
 * `fresh` (a block just allocated: zeros, no read); -1 with *err on failure. */
static int get_block_as(uint32_t b, int fresh, int *missed, long *err)
{
    for (uint32_t i = 0; i < cache_blocks; i++) {
        if (buffers[i].valid && buffers[i].block == b) {
            buffers[i].last_use = ++use_clock;
            *missed = 0;
            return (int)i;
        }
    }
    *missed = 1;
    int i = take_buffer(err);
    if (i < 0)
        return -1;
    if (fresh)
        memset(cache + (size_t)i * FS_BLOCK_SIZE, 0, FS_BLOCK_SIZE);
    else if ((*err = disk_transfer(DI_READ, b, (uint32_t)i)) < 0)
        return -1;
    buffers[i].block = b;
    buffers[i].valid = 1;
    buffers[i].dirty = fresh;
    buffers[i].indirect = 0;
    buffers[i].last_use = ++use_clock;
    return i;
}

static int get_block(uint32_t b, int *missed, long *err)
{
    return get_block_as(b, 0, missed, err);
}

static uint8_t *buffer_data(int i)
{
    return cache + (size_t)i * FS_BLOCK_SIZE;
}

/* A metadata block (bitmap, inode table, indirect) through the cache; a
 * miss is counted in *counter. */
static uint8_t *get_meta(uint32_t b, uint64_t *counter, long *err)
{
    if (b < superblock.inode_bitmap_start || b >= superblock.block_count) {
        *err = E_BOUNDS;
        return 0;
    }
    int missed;
    int i = get_block(b, &missed, err);
    if (i < 0)
        return 0;
    *counter += missed;
    buffers[i].indirect = b >= superblock.data_start;   /* the only metadata among the data blocks */
    return buffer_data(i);
}

/* Mark the buffer holding meta-data at p as changed. */
static void mark_dirty(const uint8_t *p)
{
    buffers[(p - cache) / FS_BLOCK_SIZE].dirty = 1;
}

/* Take a free block from the block bitmap (through the cache); 0 if the
 * disk is full. The search goes on from where the last one ended (next
 * fit), so a file written in order gets blocks in order and a search does
 * not walk over every block taken before it; whole bytes of taken blocks
 * are passed over at once. */
static uint32_t allocation_hint;

static uint32_t allocate_block(long *err)
{
    const uint32_t bits = FS_BLOCK_SIZE * 8, first = superblock.data_start, count = superblock.block_count;
    uint32_t b = allocation_hint >= first && allocation_hint < count ? allocation_hint : first;
    for (uint32_t left = count - first; left > 0;) {
        int missed;
        int i = get_block(superblock.block_bitmap_start + b / bits, &missed, err);
        if (i < 0)
            return 0;
        stats.bitmap_reads += missed;
        uint8_t *map = buffer_data(i);
        uint32_t end = (b / bits + 1) * bits < count ? (b / bits + 1) * bits : count;
        for (; b < end && left > 0; b++, left--) {
            uint8_t *byte = &map[(b % bits) / 8];
            if (*byte == 0xff && b % 8 == 0 && b + 8 <= end && left >= 8) {
                b += 7, left -= 7;   /* eight taken blocks */
                continue;
            }
            if (!(*byte & (1u << (b % 8)))) {
                *byte |= (uint8_t)(1u << (b % 8));
                buffers[i].dirty = 1;
                stats.allocations++;
                allocation_hint = b + 1;
                return b;
            }
        }
        if (b >= count)
            b = first;   /* round to the start of the data */
    }
    *err = E_DISKFULL;
    return 0;
}

/* The inode of file `id` (FS_FILE_ID: inode and generation) in the cache;
 * 0 with *err on failure, E_NOTFOUND for a free inode or one of another
 * generation (the file was removed). */
static struct fs_inode *inode_in_cache(int64_t id, long *err)
{
    uint32_t ino = FS_FILE_INODE(id), generation = FS_FILE_GENERATION(id);
    if (id < 0 || ino == 0 || ino >= superblock.inode_count) {
        *err = E_NOTFOUND;
        return 0;
    }
    uint8_t *table = get_meta(superblock.inode_table_start + ino / FS_INODES_PER_BLOCK, &stats.inode_reads, err);
    if (!table)
        return 0;
    struct fs_inode *inode = (struct fs_inode *)(table + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE);
    if (inode->type == FS_TYPE_FREE || (generation && generation != (inode->generation ? inode->generation : 1))) {
        *err = E_NOTFOUND;
        return 0;
    }
    return inode;
}

/* The pointer slots one mapping filled with fresh blocks, in the order it
 * filled them (the double-indirect block's, the indirect block's, the data
 * block's), and the buffers holding them: what unfill gives back when the
 * write they were taken for fails. */
struct filled {
    int count;
    struct { uint32_t *slot; const uint8_t *holder; } at[3];
};

/* A pointer slot that is 0 gets a fresh block when `filled` is given, and
 * is noted there. The buffer holding the slot is marked changed. */
static long fill_slot(uint32_t *slot, const uint8_t *holder, struct filled *filled)
{
    long err = 0;
    if (*slot || !filled)
        return 0;
    uint32_t b = allocate_block(&err);
    if (!b)
        return err;
    int missed;
    if (get_block_as(b, 1, &missed, &err) < 0)
        return err;
    *slot = b;
    mark_dirty(holder);
    filled->at[filled->count].slot = slot;
    filled->at[filled->count].holder = holder;
    filled->count++;
    return 0;
}

/* Disk block of file block n of inode ino (0 for a hole), allocating the
 * missing blocks on the way when `filled` is given (the slots filled are
 * noted there); its size in *size. */
static long map_file_block(int64_t file, uint64_t n, struct filled *filled, uint32_t *disk_block, uint64_t *size)
{
    long err = 0;
    struct fs_inode *inode = inode_in_cache(file, &err);
    if (!inode)
        return err;
    *size = inode->size;
    uint32_t index[2];
    int level = fs_block_path(n, index);
    if (level < 0)
        return E_BOUNDS;
    uint32_t *slot = level == 0 ? &inode->direct[index[0]] : level == 1 ? &inode->indirect : &inode->double_indirect;
    const uint8_t *holder = (const uint8_t *)inode;
    for (int step = 0; step <= level; step++) {
        if ((err = fill_slot(slot, holder, filled)))
            return err;
        if (step == level || !*slot)
            break;
        uint8_t *block = get_meta(*slot, &stats.indirect_reads, &err);
        if (!block)
            return err;
        slot = (uint32_t *)block + index[level == 2 && step == 1 ? 1 : 0];
        holder = block;
    }
    if (*slot && (*slot < superblock.data_start || *slot >= superblock.block_count))
        return E_BOUNDS;
    *disk_block = *slot;
    return 0;
}

/* Give block b back to the block bitmap. */
static long free_block(uint32_t b)
{
    if (b < superblock.data_start || b >= superblock.block_count)
        return E_BOUNDS;
    long err = 0;
    uint32_t bits = FS_BLOCK_SIZE * 8;
    uint8_t *map = get_meta(superblock.block_bitmap_start + b / bits, &stats.bitmap_reads, &err);
    if (!map)
        return err;
    map[(b % bits) / 8] &= (uint8_t) ~(1u << (b % 8));
    mark_dirty(map);
    for (uint32_t i = 0; i < cache_blocks; i++)      /* its contents are dead */
        if (buffers[i].valid && buffers[i].block == b)
            buffers[i].valid = buffers[i].dirty = 0;
    stats.frees++;
    return 0;
}

/* The write a mapping filled slots for failed (the disk full on the way,
 * or the writer gone before its bytes came): each slot is emptied and its
 * block given back, the last filled first, so that no block is left
 * past the file's end. The buffers holding the slots are still in the
 * cache: the mapping used them last, and the cache has more than five. */
static void unfill(struct filled *filled)
{
    while (filled->count > 0) {
        filled->count--;
        uint32_t *slot = filled->at[filled->count].slot;
        uint32_t b = *slot;
        *slot = 0;
        mark_dirty(filled->at[filled->count].holder);
        free_block(b);
    }
}

/* Free the blocks an indirect block (at `depth` levels above data) points
 * to, then the indirect block itself. */
static long free_tree(uint32_t b, int depth)
{
    if (!b)
        return 0;
    for (uint32_t i = 0; depth > 0 && i < FS_PTRS_PER_BLOCK; i++) {
        long err = 0;
        uint8_t *block = get_meta(b, &stats.indirect_reads, &err);
        if (!block)
            return err;
        uint32_t next;
        memcpy(&next, block + 4 * i, 4);
        if ((err = free_tree(next, depth - 1)))
            return err;
    }
    return free_block(b);
}

/* BM_TRUNCATE: every block of the file back to the bitmap; size 0. */
static long truncate_inode(int64_t file)
{
    long err = 0;
    struct fs_inode *inode = inode_in_cache(file, &err);
    if (!inode)
        return err;
    struct fs_inode copy = *inode;   /* freeing may evict the inode's block */
    for (uint32_t i = 0; i < FS_NDIRECT && !err; i++)
        err = free_tree(copy.direct[i], 0);
    if (!err)
        err = free_tree(copy.indirect, 1);
    if (!err)
        err = free_tree(copy.double_indirect, 2);
    if (err)
        return err;
    if (!(inode = inode_in_cache(file, &err)))
        return err;
    memset(inode->direct, 0, sizeof inode->direct);
    inode->indirect = inode->double_indirect = 0;
    inode->size = 0;
    mark_dirty((const uint8_t *)inode);
    return 0;
}

/* BM_INODE_INIT: make inode ino fresh (any old contents are forgotten). */
static long init_inode(uint32_t ino, uint16_t type, uint16_t nlink, int64_t *generation_out)
{
    if (ino == 0 || ino >= superblock.inode_count || type > FS_TYPE_DIR)
        return ino == 0 || ino >= superblock.inode_count ? E_NOTFOUND : E_INVAL;
    long err = 0;
    uint8_t *table = get_meta(superblock.inode_table_start + ino / FS_INODES_PER_BLOCK, &stats.inode_reads, &err);
    if (!table)
        return err;
    struct fs_inode *inode = (struct fs_inode *)(table + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE);
    uint32_t generation = inode->generation ? inode->generation : 1;
    memset(inode, 0, sizeof *inode);
    inode->type = type;
    inode->nlink = type == FS_TYPE_FREE ? 0 : nlink;
    inode->generation = type == FS_TYPE_FREE ? generation : FS_GENERATION_NEXT(generation);
    *generation_out = inode->generation;
    mark_dirty(table);
    return 0;
}

/* The order in which BM_SYNC writes changed blocks: file data and
 * directory blocks, then indirect blocks, then the inode table and the
 * bitmaps. A block reaches the disk before the pointers to it that the same
 * sync writes (docs/fs-design.md says what this does and does not promise). */
enum write_order { WRITE_DATA, WRITE_INDIRECT, WRITE_METADATA };

static enum write_order write_order(const struct buffer *b)
{
    if (b->block < superblock.data_start)
        return WRITE_METADATA;
    return b->indirect ? WRITE_INDIRECT : WRITE_DATA;
}

/* Write every changed buffer to the disk, in write_order; returns how
 * many, or the first error, with *unwritten the number of changed blocks
 * that could not be written (each is tried). */
static long sync_all(int64_t *unwritten)
{
    long written = 0, first_error = 0;
    *unwritten = 0;
    for (int order = WRITE_DATA; order <= WRITE_METADATA; order++) {
        for (uint32_t i = 0; i < cache_blocks; i++) {
            if (!buffers[i].valid || !buffers[i].dirty || write_order(&buffers[i]) != (enum write_order)order)
                continue;
            long err = disk_transfer(DI_WRITE, buffers[i].block, i);
            if (err < 0) {
                ++*unwritten;
                first_error = first_error ? first_error : err;
                continue;
            }
            buffers[i].dirty = 0;
            stats.sync_writes++;
            written++;
        }
    }
    return first_error ? first_error : written;
}

/* Write the superblock to the disk with `state`. The whole block is made
 * from our copy (block 0 holds the superblock and nothing else), so it
 * needs no read. */
static long write_state(uint32_t state)
{
    int missed;
    long err = 0;
    int i = get_block_as(0, 1, &missed, &err);
    if (i < 0)
        return err;
    superblock.state = state;
    memset(buffer_data(i), 0, FS_BLOCK_SIZE);
    memcpy(buffer_data(i), &superblock, sizeof superblock);
    err = disk_transfer(DI_WRITE, 0, (uint32_t)i);
    buffers[i].dirty = 0;
    if (err < 0) {
        buffers[i].valid = 0;   /* the disk may hold either state: forget the copy */
        return err;
    }
    stats.state_writes++;
    marked_clean = state == FS_STATE_CLEAN;
    return 0;
}

/* Whether request `op` may change a block. */
static int changes_blocks(uint32_t op)
{
    return op == BM_WRITE_BLOCK || op == BM_WRITE_FILE || op == BM_SET_SIZE || op == BM_INODE_INIT ||
           op == BM_INODE_LINKS || op == BM_TRUNCATE;
}

/* Move a hole's zeros to the requester's area. */
static long send_hole(long area, uint64_t offset)
{
    stats.holes++;
    return dm_movedata(area, offset, DM_SELF, (uint64_t)zeros, FS_BLOCK_SIZE);
}

/* Move disk block b to the requester's area, counting a hit or a miss. */
static long send_block(uint32_t b, long area, uint64_t offset)
{
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

static long read_file(const struct sv_request *q, long area, int64_t *value);
static long set_readahead(const struct sv_request *q, int64_t *value);
static void readahead(int64_t file, uint64_t n, uint64_t size);
static long write_block(const struct sv_request *q, long area, int64_t *value);
static long set_size(const struct sv_request *q);
static long change_links(const struct sv_request *q, int64_t *value);
static long sync_request(const struct sv_request *q, int64_t *value);

/* One request but BM_STATS: counted, and the file system marked MOUNTED on
 * the disk before the first change after it was marked CLEAN. `area` is
 * the request's data-area link (reads and writes move a block through it);
 * 0 or an error, with *value the answer's value. */
static long handle(const struct sv_request *q, long area, int64_t *value)
{
    if (q->op < BM_NKINDS)
        stats.requests[q->op]++;
    if (changes_blocks(q->op) && write_back_failed)
        return write_back_failed;   /* a change now would be lost: say so at once */
    if (changes_blocks(q->op) && marked_clean) {
        long err = write_state(FS_STATE_MOUNTED);   /* before the change can reach the disk */
        if (err < 0)
            return err;
    }
    switch (q->op) {
    case BM_READ_BLOCK:
        if (area < 0)
            return E_INVAL;
        if (q->arg[0] < 0 || (uint64_t)q->arg[0] >= superblock.block_count)
            return E_BOUNDS;
        return send_block((uint32_t)q->arg[0], area, (uint64_t)q->arg[1]);
    case BM_READ_FILE:
        return read_file(q, area, value);
    case BM_WRITE_BLOCK:
    case BM_WRITE_FILE:
        return write_block(q, area, value);
    case BM_SET_SIZE:
        return set_size(q);
    case BM_INODE_INIT:
        return init_inode((uint32_t)q->arg[0], (uint16_t)q->arg[1], (uint16_t)q->arg[2], value);
    case BM_INODE_LINKS:
        return change_links(q, value);
    case BM_TRUNCATE:
        return truncate_inode(q->arg[0]);
    case BM_SYNC:
        return sync_request(q, value);
    case BM_READAHEAD:
        return set_readahead(q, value);
    }
    return E_NOSYS;
}

/* BM_READ_FILE: block arg1 of file arg0 (FS_FILE_ID; zeros for a hole) to
 * the area at offset arg2; *value is the file's size. */
static long read_file(const struct sv_request *q, long area, int64_t *value)
{
    if (area < 0)
        return E_INVAL;
    uint32_t b = 0;
    uint64_t size = 0;
    long err = q->arg[0] < 0 || q->arg[1] < 0 ? E_BOUNDS : map_file_block(q->arg[0], (uint64_t)q->arg[1], 0, &b, &size);
    if (err == 0)
        err = b ? send_block(b, area, (uint64_t)q->arg[2]) : send_hole(area, (uint64_t)q->arg[2]);
    if (err >= 0)
        readahead(q->arg[0], (uint64_t)q->arg[1], size);
    *value = (int64_t)size;
    return err;
}

/* Read ahead: block n of `file` (FS_FILE_ID), of `size` bytes, has just
 * been read by a BM_READ_FILE request. If the reader reads the file in
 * order, ask the disk interface now, without waiting for its answer, for
 * the next readahead_blocks blocks of the file that are not in the cache,
 * so that they are there, or on their way, when the reader asks for them.
 *
 * TODO(lab readahead): nothing is read ahead yet; docs/labs/readahead.md
 * says what to write here and where else. */
static void readahead(int64_t file, uint64_t n, uint64_t size)
{
    (void)file, (void)n, (void)size;
}

/* BM_READAHEAD: read arg0 blocks ahead from now on (-1: as before); *value
 * is the number before. */
static long set_readahead(const struct sv_request *q, int64_t *value)
{
    if (q->arg[0] < -1 || q->arg[0] > BM_READAHEAD_MAX)
        return E_INVAL;
    *value = readahead_blocks;
    if (q->arg[0] >= 0)
        readahead_blocks = (uint32_t)q->arg[0];
    return 0;
}

/* BM_WRITE_BLOCK (disk block arg0, from the area at offset arg1) and
 * BM_WRITE_FILE (block arg1 of file arg0, allocated if need be, from
 * offset arg2): the whole block is replaced in the cache and marked dirty;
 * *value is the file's size (0 for BM_WRITE_BLOCK). */
static long write_block(const struct sv_request *q, long area, int64_t *value)
{
    if (area < 0)
        return E_INVAL;
    uint32_t b = 0;
    uint64_t size = 0, offset = (uint64_t)q->arg[q->op == BM_WRITE_BLOCK ? 1 : 2];
    long err = 0;
    struct filled filled = { 0 };
    if (q->op == BM_WRITE_BLOCK) {
        if (q->arg[0] <= 0 || (uint64_t)q->arg[0] >= superblock.block_count)
            return E_BOUNDS;
        b = (uint32_t)q->arg[0];
    } else if (q->arg[0] < 0 || q->arg[1] < 0) {
        return E_BOUNDS;
    } else if ((err = map_file_block(q->arg[0], (uint64_t)q->arg[1], &filled, &b, &size))) {
        unfill(&filled);
        return err;
    }
    int missed;
    int i = get_block(b, &missed, &err);   /* the whole block is replaced, but a */
    if (i >= 0) {                          /* failed move must not leave zeros */
        stats.misses += missed;
        stats.hits += !missed;
        err = dm_movedata(DM_SELF, (uint64_t)buffer_data(i), area, offset, FS_BLOCK_SIZE);
    }
    if (i < 0 || err < 0) {
        unfill(&filled);
        return err;
    }
    buffers[i].dirty = 1;
    *value = (int64_t)size;
    return 0;
}

/* BM_SET_SIZE: file arg0's (FS_FILE_ID) size becomes arg1. */
static long set_size(const struct sv_request *q)
{
    long err = 0;
    struct fs_inode *inode = inode_in_cache(q->arg[0], &err);
    if (!inode)
        return err;
    if (q->arg[1] < 0 || (uint64_t)q->arg[1] > FS_MAX_FILE_SIZE)
        return E_BOUNDS;
    inode->size = (uint64_t)q->arg[1];
    mark_dirty((const uint8_t *)inode);
    return 0;
}

/* BM_INODE_LINKS: add arg1 (which may be negative) to inode arg0's link
 * count; *value is the new count. */
static long change_links(const struct sv_request *q, int64_t *value)
{
    long err = 0;
    struct fs_inode *inode = q->arg[0] < 0 ? 0 : inode_in_cache((uint32_t)q->arg[0], &err);
    if (!inode)
        return err ? err : E_NOTFOUND;
    int64_t links = (int64_t)inode->nlink + q->arg[1];
    if (links < 0 || links > 0xffff)
        return E_INVAL;
    inode->nlink = (uint16_t)links;
    mark_dirty((const uint8_t *)inode);
    *value = links;
    return 0;
}

/* BM_SYNC: write every changed block; with arg0 = 1 (at shutdown) and a
 * file system found sound, then mark it CLEAN. *value is the number of
 * blocks written, or with an error the number that could not be. */
static long sync_request(const struct sv_request *q, int64_t *value)
{
    long written = sync_all(value);
    if (written < 0)
        return written;
    if (q->arg[0] == 1 && !marked_clean && sound) {
        long err = write_state(FS_STATE_CLEAN);
        if (err < 0)
            return err;
    }
    *value = written;
    return 0;
}

/* One request; BM_STATS answers with the counters. */
static void serve(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                  struct server_answer *answer)
{
    (void)len;
    if (q->op == BM_STATS) {
        stats.requests[BM_STATS]++;
        answer->data = &stats;
        answer->len = sizeof stats;
        return;
    }
    int64_t value = 0;
    long status = handle(q, info->link, &value);
    answer->status = status < 0 ? status : 0;
    answer->value = value;
}

/* The requesters[] entry counting the requests of `sender`: its own, a
 * free one, or the last ("others", pid 0) once every entry is taken. */
static struct bm_requester *requester(uint64_t sender)
{
    for (int k = 0; k < BM_REQUESTERS; k++) {
        struct bm_requester *r = &stats.requesters[k];
        if (r->pid == sender)
            return r;
        if (r->pid == 0 && r->requests == 0) {
            r->pid = k == BM_REQUESTERS - 1 ? 0 : sender;
            return r;
        }
    }
    struct bm_requester *others = &stats.requesters[BM_REQUESTERS - 1];
    others->pid = 0;
    return others;
}

/* Whether the superblock's layout is exactly what fs_layout() gives for its
 * block and inode counts (the checker's test too). A damaged one is not
 * served: every bound below comes from it. */
static int layout_is_sound(const struct fs_superblock *sb)
{
    struct fs_superblock want;
    size_t from = offsetof(struct fs_superblock, inode_count), to = offsetof(struct fs_superblock, root_inode);
    return fs_layout(sb->block_count, sb->inode_count, &want) == 0 &&
           memcmp((const uint8_t *)sb + from, (const uint8_t *)&want + from, to - from) == 0;
}

int main(int argc, char **argv)
{
    cache_blocks = argc > 1 ? (uint32_t)atol(argv[1]) : 64;
    /* Mapping a block touches at most five blocks in a row (inode table,
     * double and single indirect, bitmap, the block itself) and holds
     * pointers into the first ones meanwhile; least-recently-used
     * replacement keeps them in a cache of more than five. */
    if (cache_blocks < 8)
        cache_blocks = 8;
    /* Each buffer a page (aligned to one): the kernel moves a block
     * between the cache and a client's area in as few pieces as the
     * client's area allows (docs/performance.md). */
    cache = memalign(FS_BLOCK_SIZE, (size_t)cache_blocks * FS_BLOCK_SIZE);
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
    if (!layout_is_sound(&superblock)) {
        printf("bm: the superblock's layout is damaged; the file system is not served\n");
        return 2;
    }
    marked_clean = superblock.state == FS_STATE_CLEAN;   /* the disk interface could not mark it */
    struct sv_call sound_call = { .op = DI_SOUND, .pass = DM_NO_LINK };
    sound = sv_call(di, &sound_call) == 0 && sound_call.value == 1;
    if (!sound)
        printf("bm: the check at start did not find the file system sound: it will not be marked clean\n");
    server_register("bm", 0);

    /* Every message counts as a request of its sender, and the requests to
     * the disk interface that serving it took as that sender's. */
    static uint8_t message[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        struct bm_requester *asker = requester(info.sender);
        uint64_t disk_before = disk_requests;
        asker->requests++;
        server_serve(&info, message, n, serve);
        asker->disk_requests += disk_requests - disk_before;
        asker->to_disk += disk_requests != disk_before;
    }
}
