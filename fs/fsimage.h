/*
 * fsimage.h — a file-system image opened through block-I/O callbacks, as
 * the host tool (tools/dmfs) and the checker (fs/fsck.c, run by dmfs and by
 * the disk interface at mount) both use it. The same code is compiled for
 * the host and for the OS (newlib): plain C11, no stdio streams.
 *
 * What is in memory. image_load() reads the metadata blocks (superblock,
 * both bitmaps, the inode table: every block before data_start) once.
 * Directory and indirect blocks are read into a cache when first needed and
 * stay there until image_free(); file data is never cached. For a 64 MiB
 * image that is about 0.5 MiB of metadata plus the directory and indirect
 * blocks actually visited.
 *
 * How changes are made. Every change is made in memory and marked dirty;
 * image_commit() writes the dirty cached blocks, then the dirty metadata
 * blocks, the superblock last. Only file data written by the host tool goes
 * to the image straight away, and only into blocks that were free.
 *
 * Failures. A callback that cannot read or write a block, memory running
 * out, or a damaged pointer met while following a path end the operation:
 * the image's `fail` function is called, and it must not return (dmfs exits;
 * the checker jumps back to fsck_run, which returns the failure).
 */
#ifndef FSIMAGE_H
#define FSIMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "fs_format.h"

#define DIRENT_SIZE ((uint32_t)sizeof(struct fs_dirent))

/* How an image reaches its blocks. read and write move one FS_BLOCK_SIZE
 * block and return 0, or -1 on an error; write is NULL for an image opened
 * read-only (nothing may then be committed). flush, if not NULL, is called
 * at the end of image_commit to wait for the disk. now_ns, if not NULL,
 * gives the time stamped on inodes made or changed (ns since 1970; 0 without
 * it). */
struct fs_image_io {
    void *ctx;
    int (*read)(void *ctx, uint32_t block, void *buf);
    int (*write)(void *ctx, uint32_t block, const void *buf);
    int (*flush)(void *ctx);
    uint64_t (*now_ns)(void *ctx);
};

/* Why an operation on an image could not go on. */
enum fs_image_failure {
    FS_IMAGE_IO_ERROR = 1,    /* a block could not be read or written */
    FS_IMAGE_NO_MEMORY,       /* an allocation failed */
    FS_IMAGE_DAMAGED,         /* a pointer outside the data blocks: only a check can deal with it */
    FS_IMAGE_INTERNAL,        /* a bug: an inode number out of range reached the image layer */
};

/* A directory or indirect block held in memory; written at commit if dirty. */
struct cached_block {
    struct cached_block *next;     /* in its hash bucket */
    uint32_t block;
    int dirty;
    _Alignas(8) uint8_t data[FS_BLOCK_SIZE];
};

#define CACHE_BUCKETS 1024u

struct fs_image {
    const char *name;              /* for messages: the image file, or the disk */
    const struct fs_image_io *io;
    /* Called with a whole message (it names the image where that helps);
     * must not return. */
    void (*fail)(struct fs_image *img, enum fs_image_failure why, const char *message);
    uint8_t *meta;                 /* blocks 0 .. data_start-1 */
    uint8_t *meta_dirty;           /* one flag per metadata block */
    struct fs_superblock *sb;      /* all four point into meta */
    uint8_t *inode_bitmap;
    uint8_t *block_bitmap;
    struct fs_inode *inodes;
    struct cached_block *cache[CACHE_BUCKETS];
    uint32_t free_blocks;          /* clear bits from data_start on */
    uint32_t free_inodes;          /* clear bits from 1 on */
    uint32_t next_block;           /* where block_alloc looks first */
};

/* Where a block pointer lives: in an indirect block (table) or, when table
 * is NULL, in the inode. */
struct pointer_slot {
    uint32_t *ptr;
    struct cached_block *table;
};

/* Memory, raw blocks, the cache. */
void *image_calloc(struct fs_image *img, size_t count, size_t size);
char *image_strdup(struct fs_image *img, const char *s);
uint64_t image_now(struct fs_image *img);
void block_read(struct fs_image *img, uint32_t b, void *buf);
void block_write(struct fs_image *img, uint32_t b, const void *buf);
struct cached_block *cache_get(struct fs_image *img, uint32_t b);
struct cached_block *cache_new(struct fs_image *img, uint32_t b);

/* Opening, committing, closing. */
int superblock_fault(const struct fs_superblock *sb, uint64_t file_size, char *why, size_t len);
void meta_attach(struct fs_image *img);
void image_load(struct fs_image *img, const struct fs_superblock *sb);
void image_format(struct fs_image *img, const struct fs_superblock *sb);
void image_commit(struct fs_image *img);
void image_free(struct fs_image *img);

/* Metadata in memory. */
void meta_changed(struct fs_image *img, const void *p, size_t len);
struct fs_inode *inode_at(struct fs_image *img, uint32_t ino);
void inode_changed(struct fs_image *img, uint32_t ino);
int bit_test(const uint8_t *map, uint32_t i);
void bit_set(struct fs_image *img, uint8_t *map, uint32_t i, int used);
void count_free(struct fs_image *img);

/* Allocation. */
uint32_t block_alloc(struct fs_image *img);
uint32_t inode_alloc(struct fs_image *img, uint16_t type);
void inode_free(struct fs_image *img, uint32_t ino);

/* File blocks. */
void slot_set(struct fs_image *img, uint32_t ino, struct pointer_slot *slot, uint32_t b);
uint32_t file_block(struct fs_image *img, uint32_t ino, uint64_t n);
uint64_t file_next_block(struct fs_image *img, uint32_t ino, uint64_t n);
uint32_t file_map(struct fs_image *img, uint32_t ino, uint64_t n, int cached);
uint64_t blocks_for_size(uint64_t size);
uint64_t inode_blocks(struct fs_image *img, struct fs_inode *ip, uint32_t ino, int release);

/* Directories. */
uint32_t dir_count(struct fs_image *img, uint32_t dino);
void dir_read(struct fs_image *img, uint32_t dino, uint32_t i, struct fs_dirent *de);
uint32_t dir_next(struct fs_image *img, uint32_t dino, uint32_t i);
int dir_write(struct fs_image *img, uint32_t dino, uint32_t i, const struct fs_dirent *de);
void dirent_make(struct fs_dirent *de, uint32_t ino, const char *name);
int dirent_is(const struct fs_dirent *de, const char *name);
uint32_t dir_lookup(struct fs_image *img, uint32_t dino, const char *name, uint32_t *index);
uint32_t dir_add_cost(struct fs_image *img, uint32_t dino);
int dir_add(struct fs_image *img, uint32_t dino, const char *name, uint32_t ino);
uint32_t dir_create(struct fs_image *img, uint32_t parent, const char *name);
char *path_join(struct fs_image *img, const char *dir, const char *name);

#endif
