/*
 * fsimage.c — a file-system image opened through block-I/O callbacks:
 * metadata in memory, a cache of directory and indirect blocks, allocation,
 * file-block mapping and directories (fsimage.h says what is kept where and
 * how changes reach the image). Shared by tools/dmfs and fs/fsck.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsimage.h"

/* ------------------------------------------------------------------ */
/* Failures, memory, raw blocks                                        */
/* ------------------------------------------------------------------ */

/* Hands a failure to the image's fail function, which does not return. */
static void image_fail(struct fs_image *img, enum fs_image_failure why, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static void image_fail(struct fs_image *img, enum fs_image_failure why, const char *fmt, ...)
{
    char message[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    img->fail(img, why, message);
    abort();   /* a fail function that returns breaks its contract */
}

/* calloc that fails the image when memory runs out. */
void *image_calloc(struct fs_image *img, size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL)
        image_fail(img, FS_IMAGE_NO_MEMORY, "out of memory (%zu bytes)", count * size);
    return p;
}

/* strdup that fails the image when memory runs out. */
char *image_strdup(struct fs_image *img, const char *s)
{
    char *p = image_calloc(img, strlen(s) + 1, 1);
    return strcpy(p, s);
}

/* The time to stamp on an inode made or changed now. */
uint64_t image_now(struct fs_image *img)
{
    return img->io->now_ns ? img->io->now_ns(img->io->ctx) : 0;
}

/* Reads block b of the image into buf. */
void block_read(struct fs_image *img, uint32_t b, void *buf)
{
    if (img->io->read(img->io->ctx, b, buf) != 0)
        image_fail(img, FS_IMAGE_IO_ERROR, "%s: block %" PRIu32 ": cannot read", img->name, b);
}

/* Writes buf to block b of the image. */
void block_write(struct fs_image *img, uint32_t b, const void *buf)
{
    if (img->io->write == NULL)
        image_fail(img, FS_IMAGE_INTERNAL, "%s: internal error: writing block %" PRIu32 " of an image opened "
                   "read-only", img->name, b);
    if (img->io->write(img->io->ctx, b, buf) != 0)
        image_fail(img, FS_IMAGE_IO_ERROR, "%s: block %" PRIu32 ": cannot write", img->name, b);
}

/* ------------------------------------------------------------------ */
/* The cache of directory and indirect blocks                          */
/* ------------------------------------------------------------------ */

/* The bucket list pointer that holds (or would hold) block b. */
static struct cached_block **cache_link(struct fs_image *img, uint32_t b)
{
    struct cached_block **link = &img->cache[b % CACHE_BUCKETS];
    while (*link && (*link)->block != b)
        link = &(*link)->next;
    return link;
}

/* Block b, read into the cache if it is not there yet. */
struct cached_block *cache_get(struct fs_image *img, uint32_t b)
{
    struct cached_block **link = cache_link(img, b);
    if (*link == NULL) {
        struct cached_block *cb = image_calloc(img, 1, sizeof *cb);
        cb->block = b;
        *link = cb;            /* linked first, so image_free finds it if the read fails */
        block_read(img, b, cb->data);
    }
    return *link;
}

/* Block b as a block of zeros (just allocated), dirty. */
struct cached_block *cache_new(struct fs_image *img, uint32_t b)
{
    struct cached_block **link = cache_link(img, b);
    if (*link == NULL) {
        *link = image_calloc(img, 1, sizeof **link);
        (*link)->block = b;
    }
    memset((*link)->data, 0, FS_BLOCK_SIZE);
    (*link)->dirty = 1;
    return *link;
}

/* Forgets block b (it was freed): its cached contents must never be written. */
static void cache_drop(struct fs_image *img, uint32_t b)
{
    struct cached_block **link = cache_link(img, b);
    if (*link) {
        struct cached_block *cb = *link;
        *link = cb->next;
        free(cb);
    }
}

/* ------------------------------------------------------------------ */
/* Metadata in memory                                                  */
/* ------------------------------------------------------------------ */

/* Marks the metadata blocks holding bytes [p, p+len) of meta as changed. */
void meta_changed(struct fs_image *img, const void *p, size_t len)
{
    size_t first = (size_t)((const uint8_t *)p - img->meta) / FS_BLOCK_SIZE;
    size_t last = ((size_t)((const uint8_t *)p - img->meta) + len - 1) / FS_BLOCK_SIZE;
    for (size_t b = first; b <= last; b++)
        img->meta_dirty[b] = 1;
}

/* Inode ino; the number must be below inode_count (callers check it). */
struct fs_inode *inode_at(struct fs_image *img, uint32_t ino)
{
    if (ino >= img->sb->inode_count)
        image_fail(img, FS_IMAGE_INTERNAL, "%s: internal error: inode %" PRIu32 " out of range", img->name, ino);
    return &img->inodes[ino];
}

/* Marks inode ino as changed, to be written at commit. */
void inode_changed(struct fs_image *img, uint32_t ino)
{
    meta_changed(img, &img->inodes[ino], sizeof img->inodes[ino]);
}

/* Bit i of a bitmap: bit i % 8 of byte i / 8 (least significant first). */
int bit_test(const uint8_t *map, uint32_t i)
{
    return map[i / 8] >> (i % 8) & 1;
}

/* Sets (used=1) or clears bit i of a bitmap in meta, keeping the free counts. */
void bit_set(struct fs_image *img, uint8_t *map, uint32_t i, int used)
{
    if (bit_test(map, i) == used)
        return;
    map[i / 8] ^= (uint8_t)(1u << (i % 8));
    meta_changed(img, &map[i / 8], 1);
    uint32_t *count = map == img->block_bitmap ? &img->free_blocks : &img->free_inodes;
    int counted = map == img->block_bitmap ? i >= img->sb->data_start : i >= 1;
    if (counted && used)
        (*count)--;
    else if (counted)
        (*count)++;
}

/* Counts the free blocks and inodes from the bitmaps. */
void count_free(struct fs_image *img)
{
    img->free_blocks = img->free_inodes = 0;
    for (uint32_t b = img->sb->data_start; b < img->sb->block_count; b++)
        img->free_blocks += !bit_test(img->block_bitmap, b);
    for (uint32_t i = 1; i < img->sb->inode_count; i++)
        img->free_inodes += !bit_test(img->inode_bitmap, i);
}

/* ------------------------------------------------------------------ */
/* Opening, committing, closing                                        */
/* ------------------------------------------------------------------ */

/* Says in why (and returns -1) if sb is not a superblock this code can use
 * for an image of file_size bytes: magic, version, a layout exactly as
 * fs_layout() makes it, and the image long enough. root_inode and state are
 * left to the callers. Returns 0 when it is sound. */
int superblock_fault(const struct fs_superblock *sb, uint64_t file_size, char *why, size_t len)
{
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        { "inode_count", offsetof(struct fs_superblock, inode_count) },
        { "inode_bitmap_start", offsetof(struct fs_superblock, inode_bitmap_start) },
        { "inode_bitmap_blocks", offsetof(struct fs_superblock, inode_bitmap_blocks) },
        { "block_bitmap_start", offsetof(struct fs_superblock, block_bitmap_start) },
        { "block_bitmap_blocks", offsetof(struct fs_superblock, block_bitmap_blocks) },
        { "inode_table_start", offsetof(struct fs_superblock, inode_table_start) },
        { "inode_table_blocks", offsetof(struct fs_superblock, inode_table_blocks) },
        { "data_start", offsetof(struct fs_superblock, data_start) },
    };
    struct fs_superblock want;

    if (sb->magic != FS_MAGIC) {
        snprintf(why, len, "not a dmfs image (magic 0x%08" PRIx32 ", expected 0x%08x)", sb->magic, FS_MAGIC);
        return -1;
    }
    if (sb->version != FS_VERSION) {
        snprintf(why, len, "superblock: version %" PRIu32 ", this tool knows version %u", sb->version, FS_VERSION);
        return -1;
    }
    if (fs_layout(sb->block_count, sb->inode_count, &want) != 0) {
        snprintf(why, len, "superblock: %" PRIu32 " blocks and %" PRIu32 " inodes leave no room for data",
                 sb->block_count, sb->inode_count);
        return -1;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        uint32_t have, expect;
        memcpy(&have, (const uint8_t *)sb + fields[i].offset, sizeof have);
        memcpy(&expect, (const uint8_t *)&want + fields[i].offset, sizeof expect);
        if (have != expect) {
            snprintf(why, len, "superblock: %s is %" PRIu32 ", expected %" PRIu32 " for %" PRIu32
                     " blocks and %" PRIu32 " inodes", fields[i].name, have, expect,
                     sb->block_count, sb->inode_count);
            return -1;
        }
    }
    if (file_size < (uint64_t)sb->block_count * FS_BLOCK_SIZE) {
        snprintf(why, len, "the image file is %" PRIu64 " bytes, shorter than its %" PRIu32 " blocks",
                 file_size, sb->block_count);
        return -1;
    }
    return 0;
}

/* Points sb, the bitmaps and the inode table into img->meta. */
void meta_attach(struct fs_image *img)
{
    img->sb = (struct fs_superblock *)img->meta;
    img->inode_bitmap = img->meta + (size_t)img->sb->inode_bitmap_start * FS_BLOCK_SIZE;
    img->block_bitmap = img->meta + (size_t)img->sb->block_bitmap_start * FS_BLOCK_SIZE;
    img->inodes = (struct fs_inode *)(img->meta + (size_t)img->sb->inode_table_start * FS_BLOCK_SIZE);
}

/* Reads all metadata blocks (those before data_start) of an image whose
 * superblock `sb` passed superblock_fault(). img's name, io and fail are
 * set; the rest is zero. */
void image_load(struct fs_image *img, const struct fs_superblock *sb)
{
    img->meta = image_calloc(img, sb->data_start, FS_BLOCK_SIZE);
    img->meta_dirty = image_calloc(img, sb->data_start, 1);
    for (uint32_t b = 0; b < sb->data_start; b++)
        block_read(img, b, img->meta + (size_t)b * FS_BLOCK_SIZE);
    meta_attach(img);
    count_free(img);
    img->next_block = img->sb->data_start;
}

/* Makes a new, empty file system in memory from superblock `sb` (made by
 * fs_layout): every metadata block in use, inode 0 reserved, and the root
 * directory with its '.' and '..'. Every metadata block is dirty, so
 * image_commit writes it all. img's name, io and fail are set; the rest is
 * zero. Used by `dmfs mkfs` and by the fuzzer of the checker. */
void image_format(struct fs_image *img, const struct fs_superblock *sb)
{
    struct fs_dirent de;

    img->meta = image_calloc(img, sb->data_start, FS_BLOCK_SIZE);
    img->meta_dirty = image_calloc(img, sb->data_start, 1);
    memset(img->meta_dirty, 1, sb->data_start);
    memcpy(img->meta, sb, sizeof *sb);
    meta_attach(img);
    for (uint32_t b = 0; b < sb->data_start; b++)
        img->block_bitmap[b / 8] |= (uint8_t)(1u << (b % 8));
    img->inode_bitmap[0] |= 1;
    count_free(img);
    img->next_block = sb->data_start;
    if (inode_alloc(img, FS_TYPE_DIR) != FS_ROOT_INODE)
        image_fail(img, FS_IMAGE_INTERNAL, "%s: internal error: the root is not inode %u", img->name, FS_ROOT_INODE);
    dirent_make(&de, FS_ROOT_INODE, ".");
    dir_write(img, FS_ROOT_INODE, 0, &de);
    dirent_make(&de, FS_ROOT_INODE, "..");
    dir_write(img, FS_ROOT_INODE, 1, &de);
    inode_at(img, FS_ROOT_INODE)->size = 2 * DIRENT_SIZE;
    inode_at(img, FS_ROOT_INODE)->nlink = 2;       /* its '.' and '..' */
}

/* Writes every change: cached blocks, then metadata, the superblock last,
 * then waits for the disk. */
void image_commit(struct fs_image *img)
{
    for (uint32_t i = 0; i < CACHE_BUCKETS; i++)
        for (struct cached_block *cb = img->cache[i]; cb; cb = cb->next)
            if (cb->dirty) {
                block_write(img, cb->block, cb->data);
                cb->dirty = 0;
            }
    for (uint32_t b = 1; b < img->sb->data_start; b++)
        if (img->meta_dirty[b]) {
            block_write(img, b, img->meta + (size_t)b * FS_BLOCK_SIZE);
            img->meta_dirty[b] = 0;
        }
    if (img->meta_dirty[0]) {
        block_write(img, 0, img->meta);
        img->meta_dirty[0] = 0;
    }
    if (img->io->flush && img->io->flush(img->io->ctx) != 0)
        image_fail(img, FS_IMAGE_IO_ERROR, "%s: cannot flush the writes to the disk", img->name);
}

/* Frees what the image holds in memory (not committed changes are lost). */
void image_free(struct fs_image *img)
{
    for (uint32_t i = 0; i < CACHE_BUCKETS; i++)
        while (img->cache[i]) {
            struct cached_block *cb = img->cache[i];
            img->cache[i] = cb->next;
            free(cb);
        }
    free(img->meta);
    free(img->meta_dirty);
    img->meta = img->meta_dirty = NULL;
}

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

/* Takes a free data block; returns its number, or 0 when there is none. */
uint32_t block_alloc(struct fs_image *img)
{
    uint32_t start = img->sb->data_start, count = img->sb->block_count;
    uint32_t b = img->next_block >= start && img->next_block < count ? img->next_block : start;
    if (img->free_blocks == 0)
        return 0;
    for (uint32_t tries = count - start; tries > 0; tries--) {
        if (!bit_test(img->block_bitmap, b)) {
            bit_set(img, img->block_bitmap, b, 1);
            img->next_block = b + 1;
            return b;
        }
        if (++b == count)
            b = start;
    }
    return 0;
}

/* Gives data block b back. */
static void block_free(struct fs_image *img, uint32_t b)
{
    bit_set(img, img->block_bitmap, b, 0);
    cache_drop(img, b);
}

/* Takes a free inode and makes it an empty inode of `type` with no links;
 * returns its number, or 0 when there is none. */
uint32_t inode_alloc(struct fs_image *img, uint16_t type)
{
    for (uint32_t ino = 1; ino < img->sb->inode_count; ino++)
        if (!bit_test(img->inode_bitmap, ino)) {
            struct fs_inode *ip = inode_at(img, ino);
            bit_set(img, img->inode_bitmap, ino, 1);
            memset(ip, 0, sizeof *ip);
            ip->type = type;
            ip->mtime_ns = image_now(img);
            inode_changed(img, ino);
            return ino;
        }
    return 0;
}

/* Frees inode ino, which must hold no blocks any more. */
void inode_free(struct fs_image *img, uint32_t ino)
{
    memset(inode_at(img, ino), 0, sizeof(struct fs_inode));
    inode_changed(img, ino);
    bit_set(img, img->inode_bitmap, ino, 0);
}

/* ------------------------------------------------------------------ */
/* File blocks                                                         */
/* ------------------------------------------------------------------ */

/* Stores b in a pointer slot of inode ino and marks what holds it changed. */
void slot_set(struct fs_image *img, uint32_t ino, struct pointer_slot *slot, uint32_t b)
{
    *slot->ptr = b;
    if (slot->table)
        slot->table->dirty = 1;
    else
        inode_changed(img, ino);
}

/* Fails the image if block pointer b of inode ino is outside the data
 * blocks: the image is damaged and only the checker can deal with it. */
static void pointer_check(struct fs_image *img, uint32_t ino, uint32_t b)
{
    if (b < img->sb->data_start || b >= img->sb->block_count)
        image_fail(img, FS_IMAGE_DAMAGED, "%s: inode %" PRIu32 ": block %" PRIu32 " out of range; run dmfs check",
                   img->name, ino, b);
}

/* The indirect block that *slot points to, allocated (zeroed) if the slot
 * is a hole and `allocate` is set; NULL for a hole, or a full image. */
static struct cached_block *indirect_table(struct fs_image *img, uint32_t ino, struct pointer_slot *slot,
                                           int allocate)
{
    uint32_t b = *slot->ptr;
    if (b == 0) {
        if (!allocate || (b = block_alloc(img)) == 0)
            return NULL;
        struct cached_block *table = cache_new(img, b);
        slot_set(img, ino, slot, b);
        return table;
    }
    pointer_check(img, ino, b);
    return cache_get(img, b);
}

/* Finds the slot of the pointer to block n of inode ino (fs_block_path
 * says where it lives), allocating missing indirect blocks if `allocate`.
 * Returns 0, or -1 when n is past the largest file or the way to it is a
 * hole (or, allocating, the image is full). */
static int file_slot(struct fs_image *img, uint32_t ino, uint64_t n, int allocate, struct pointer_slot *slot)
{
    struct fs_inode *ip = inode_at(img, ino);
    uint32_t index[2];
    int level = fs_block_path(n, index);

    if (level < 0)
        return -1;
    slot->table = NULL;
    if (level == 0) {
        slot->ptr = &ip->direct[index[0]];
        return 0;
    }
    slot->ptr = level == 1 ? &ip->indirect : &ip->double_indirect;
    for (int i = 0; i < level; i++) {
        struct cached_block *table = indirect_table(img, ino, slot, allocate);
        if (table == NULL)
            return -1;
        slot->table = table;
        slot->ptr = (uint32_t *)table->data + index[i];
    }
    return 0;
}

/* The image block holding block n of inode ino; 0 for a hole. */
uint32_t file_block(struct fs_image *img, uint32_t ino, uint64_t n)
{
    struct pointer_slot slot;
    if (file_slot(img, ino, n, 0, &slot) != 0 || *slot.ptr == 0)
        return 0;
    pointer_check(img, ino, *slot.ptr);
    return *slot.ptr;
}

/* The first block of inode ino at or after block n that is not a hole, or
 * UINT64_MAX if there is none. A missing indirect table is passed
 * over whole, so a file that is mostly holes costs its tables, not its
 * size (a damaged directory can claim 4 GiB of holes: 67 million entries). */
uint64_t file_next_block(struct fs_image *img, uint32_t ino, uint64_t n)
{
    const uint64_t single = FS_NDIRECT, twice = FS_NDIRECT + FS_PTRS_PER_BLOCK;
    struct fs_inode *ip = inode_at(img, ino);

    for (; n < single; n++)
        if (ip->direct[n])
            return n;
    if (n < twice) {
        struct pointer_slot slot = { &ip->indirect, NULL };
        struct cached_block *table = indirect_table(img, ino, &slot, 0);
        for (; table && n < twice; n++)
            if (((uint32_t *)table->data)[n - single])
                return n;
        n = twice;
    }
    struct pointer_slot top_slot = { &ip->double_indirect, NULL };
    struct cached_block *top = indirect_table(img, ino, &top_slot, 0);
    while (top && n < FS_MAX_FILE_BLOCKS) {
        uint64_t k = (n - twice) / FS_PTRS_PER_BLOCK, end = twice + (k + 1) * FS_PTRS_PER_BLOCK;
        struct pointer_slot slot = { (uint32_t *)top->data + k, top };
        struct cached_block *table = indirect_table(img, ino, &slot, 0);
        for (; table && n < end; n++)
            if (((uint32_t *)table->data)[(n - twice) % FS_PTRS_PER_BLOCK])
                return n;
        n = end;
    }
    return UINT64_MAX;
}

/* The image block holding block n of inode ino, allocated if it is a hole
 * (as a zeroed cached block if `cached`: directory blocks; file data is
 * written directly). Returns 0 when the image is full. */
uint32_t file_map(struct fs_image *img, uint32_t ino, uint64_t n, int cached)
{
    struct pointer_slot slot;
    if (file_slot(img, ino, n, 1, &slot) != 0)
        return 0;
    if (*slot.ptr == 0) {
        uint32_t b = block_alloc(img);
        if (b == 0)
            return 0;
        if (cached)
            cache_new(img, b);
        slot_set(img, ino, &slot, b);
    }
    pointer_check(img, ino, *slot.ptr);
    return *slot.ptr;
}

/* How many blocks a new file of `size` bytes takes, indirect ones included. */
uint64_t blocks_for_size(uint64_t size)
{
    uint64_t n = (size + FS_BLOCK_SIZE - 1) / FS_BLOCK_SIZE, total = n;
    if (n > FS_NDIRECT)
        total += 1;
    if (n > FS_NDIRECT + FS_PTRS_PER_BLOCK) {
        uint64_t rest = n - FS_NDIRECT - FS_PTRS_PER_BLOCK;
        total += 1 + (rest + FS_PTRS_PER_BLOCK - 1) / FS_PTRS_PER_BLOCK;
    }
    return total;
}

/* How many blocks mapping block n of inode ino would allocate. */
static uint32_t blocks_to_map(struct fs_image *img, uint32_t ino, uint64_t n)
{
    struct fs_inode *ip = inode_at(img, ino);
    uint32_t index[2];
    int level = fs_block_path(n, index);

    if (level < 0)
        return UINT32_MAX;
    if (level == 0)
        return ip->direct[index[0]] == 0;
    uint32_t b = level == 1 ? ip->indirect : ip->double_indirect;
    for (int i = 0; i < level; i++) {
        if (b == 0)
            return (uint32_t)(level - i) + 1;   /* the missing tables and the block */
        pointer_check(img, ino, b);
        b = ((uint32_t *)cache_get(img, b)->data)[index[i]];
    }
    return b == 0;
}

/* Counts the blocks under pointer b at `level` (0: a data block, 1: an
 * indirect block, 2: a double-indirect block); with `release`, frees them. */
static uint64_t pointer_tree(struct fs_image *img, uint32_t ino, uint32_t b, int level, int release)
{
    uint64_t count = 1;
    if (b == 0)
        return 0;
    pointer_check(img, ino, b);
    if (level > 0) {
        const uint32_t *table = (const uint32_t *)cache_get(img, b)->data;
        for (uint32_t i = 0; i < FS_PTRS_PER_BLOCK; i++)
            count += pointer_tree(img, ino, table[i], level - 1, release);
    }
    if (release)
        block_free(img, b);
    return count;
}

/* Counts the blocks, data and indirect, of the inode *ip (number ino, for
 * messages); with `release`, frees them and leaves *ip empty with size 0. */
uint64_t inode_blocks(struct fs_image *img, struct fs_inode *ip, uint32_t ino, int release)
{
    uint64_t count = 0;
    for (uint32_t i = 0; i < FS_NDIRECT; i++)
        count += pointer_tree(img, ino, ip->direct[i], 0, release);
    count += pointer_tree(img, ino, ip->indirect, 1, release);
    count += pointer_tree(img, ino, ip->double_indirect, 2, release);
    if (release) {
        memset(ip->direct, 0, sizeof ip->direct);
        ip->indirect = ip->double_indirect = 0;
        ip->size = 0;
    }
    return count;
}

/* ------------------------------------------------------------------ */
/* Directories                                                         */
/* ------------------------------------------------------------------ */

/* The number of entries directory dino's size covers. A directory grows
 * one 64-byte entry at a time. */
uint32_t dir_count(struct fs_image *img, uint32_t dino)
{
    uint64_t n = inode_at(img, dino)->size / DIRENT_SIZE;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Reads entry i of directory dino (a hole reads as a free entry). */
void dir_read(struct fs_image *img, uint32_t dino, uint32_t i, struct fs_dirent *de)
{
    uint32_t b = file_block(img, dino, i / FS_DIRENTS_PER_BLOCK);
    if (b == 0)
        memset(de, 0, sizeof *de);
    else
        memcpy(de, cache_get(img, b)->data + (i % FS_DIRENTS_PER_BLOCK) * DIRENT_SIZE, sizeof *de);
}

/* The entry of directory dino after entry i, passing over holes (their
 * entries read as free): every walk over a directory's entries goes
 * `for (i = FIRST; i < dir_count(img, dino); i = dir_next(img, dino, i))`. */
uint32_t dir_next(struct fs_image *img, uint32_t dino, uint32_t i)
{
    i++;
    if (i % FS_DIRENTS_PER_BLOCK != 0)
        return i;
    uint64_t b = file_next_block(img, dino, i / FS_DIRENTS_PER_BLOCK);
    return b > UINT32_MAX / FS_DIRENTS_PER_BLOCK ? UINT32_MAX : (uint32_t)(b * FS_DIRENTS_PER_BLOCK);
}

/* Writes entry i of directory dino (not its size); -1 if a block was needed
 * and the image is full. */
int dir_write(struct fs_image *img, uint32_t dino, uint32_t i, const struct fs_dirent *de)
{
    uint32_t b = file_map(img, dino, i / FS_DIRENTS_PER_BLOCK, 1);
    if (b == 0)
        return -1;
    struct cached_block *cb = cache_get(img, b);
    memcpy(cb->data + (i % FS_DIRENTS_PER_BLOCK) * DIRENT_SIZE, de, sizeof *de);
    cb->dirty = 1;
    return 0;
}

/* Fills *de with inode ino and name (at most FS_NAME_MAX bytes), NUL-padded. */
void dirent_make(struct fs_dirent *de, uint32_t ino, const char *name)
{
    memset(de, 0, sizeof *de);
    de->inode = ino;
    memcpy(de->name, name, strlen(name));
}

/* Whether entry *de is in use and called `name`. */
int dirent_is(const struct fs_dirent *de, const char *name)
{
    return de->inode != 0 && memcmp(de->name, name, strlen(name) + 1) == 0;
}

/* The inode that `name` names in directory dino, or 0; its entry's index
 * goes to *index when index is not NULL. */
uint32_t dir_lookup(struct fs_image *img, uint32_t dino, const char *name, uint32_t *index)
{
    struct fs_dirent de;
    uint32_t count = dir_count(img, dino);
    for (uint32_t i = 0; i < count; i = dir_next(img, dino, i)) {
        dir_read(img, dino, i, &de);
        if (dirent_is(&de, name)) {
            if (index)
                *index = i;
            return de.inode;
        }
    }
    return 0;
}

/* The index a new entry of directory dino would take: the first free one
 * after '.' and '..', or one past the end. */
static uint32_t dir_free_index(struct fs_image *img, uint32_t dino)
{
    struct fs_dirent de;
    uint32_t count = dir_count(img, dino);
    for (uint32_t i = 2; i < count; i++) {
        dir_read(img, dino, i, &de);
        if (de.inode == 0)
            return i;
    }
    return count < 2 ? 2 : count;
}

/* How many blocks adding an entry to directory dino would allocate. */
uint32_t dir_add_cost(struct fs_image *img, uint32_t dino)
{
    return blocks_to_map(img, dino, dir_free_index(img, dino) / FS_DIRENTS_PER_BLOCK);
}

/* Adds entry name -> ino to directory dino (no link counts change); -1 if
 * the image is full. */
int dir_add(struct fs_image *img, uint32_t dino, const char *name, uint32_t ino)
{
    struct fs_inode *dp = inode_at(img, dino);
    struct fs_dirent de;
    uint32_t i = dir_free_index(img, dino);

    if (dir_add_cost(img, dino) > img->free_blocks)
        return -1;
    dirent_make(&de, ino, name);
    if (dir_write(img, dino, i, &de) != 0)
        return -1;
    if ((uint64_t)(i + 1) * DIRENT_SIZE > dp->size)
        dp->size = (uint64_t)(i + 1) * DIRENT_SIZE;
    dp->mtime_ns = image_now(img);
    inode_changed(img, dino);
    return 0;
}

/* Makes directory `name` in directory parent; returns its inode, or 0 (with
 * nothing changed) if there is no free inode or block for it. */
uint32_t dir_create(struct fs_image *img, uint32_t parent, const char *name)
{
    struct fs_dirent de;
    uint32_t ino;

    if (img->free_inodes == 0 || 1 + (uint64_t)dir_add_cost(img, parent) > img->free_blocks)
        return 0;
    ino = inode_alloc(img, FS_TYPE_DIR);
    dirent_make(&de, ino, ".");
    dir_write(img, ino, 0, &de);
    dirent_make(&de, parent, "..");
    dir_write(img, ino, 1, &de);
    inode_at(img, ino)->size = 2 * DIRENT_SIZE;
    inode_at(img, ino)->nlink = 2;                 /* its entry and its '.' */
    inode_changed(img, ino);
    dir_add(img, parent, name, ino);
    inode_at(img, parent)->nlink++;                /* the new '..' */
    inode_changed(img, parent);
    return ino;
}

/* Joins a directory path and a name into a new string. */
char *path_join(struct fs_image *img, const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = image_calloc(img, len, 1);
    snprintf(path, len, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
    return path;
}
