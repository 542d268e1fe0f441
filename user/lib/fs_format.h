/*
 * fs_format.h — the on-disk format of the DEMOS/MP file system, the one
 * definition shared by the file-system processes (fs/, in the OS) and the
 * host tools (tools/dmfs). Plain C with fixed-size types; little-endian, as
 * both riscv64 and the host are. It sits with the user library because the
 * file system's messages (fs_protocol.h) carry its directory entries and
 * types to every client.
 *
 * Layout, in 4096-byte blocks:
 *
 *   0                      superblock
 *   inode_bitmap_start     inode bitmap: bit i set = inode i in use (bit 0 and
 *                          inode 0 are reserved: inode number 0 means "none")
 *   block_bitmap_start     block bitmap: bit b set = block b in use (the
 *                          metadata blocks above are marked in use too)
 *   inode_table_start      inodes, FS_INODES_PER_BLOCK per block
 *   data_start ...         data, indirect and directory blocks
 *
 * A file's blocks: FS_NDIRECT direct pointers, then one single-indirect block
 * of FS_PTRS_PER_BLOCK pointers, then one double-indirect block (pointers to
 * single-indirect blocks). A pointer of 0 is a hole (reads as zeros). With
 * 4 KiB blocks a file can reach 12 + 1024 + 1024*1024 blocks (about 4 GiB).
 *
 * A directory is a file of struct fs_dirent records; an entry with inode 0
 * is free. Every directory holds "." and ".." first; the root's ".." is
 * itself. The root is inode FS_ROOT_INODE. A directory's size is a whole
 * number of entries (its last block may be partly used).
 *
 * Conventions both sides keep:
 *   - bitmaps: bit i is bit (i % 8), least significant first, of byte i / 8;
 *     bits past block_count or inode_count are zero and mean nothing;
 *   - inode bitmap bit 0 is set (inode 0 is reserved);
 *   - nlink counts the directory entries naming an inode, "." and ".."
 *     included: a file has one per name, a directory 2 + its subdirectories.
 */
#ifndef FS_FORMAT_H
#define FS_FORMAT_H

#include <stdint.h>

#define FS_BLOCK_SIZE      4096u
#define FS_MAGIC           0x53464d44u   /* "DMFS" read as little-endian bytes */
#define FS_VERSION         1u
#define FS_ROOT_INODE      1u

/* superblock.state: FS_STATE_MOUNTED while the file system has it open;
 * finding it mounted at start means the last run did not end cleanly. */
#define FS_STATE_CLEAN     1u
#define FS_STATE_MOUNTED   2u

struct fs_superblock {
    uint32_t magic;               /* FS_MAGIC */
    uint32_t version;             /* FS_VERSION */
    uint32_t block_count;         /* blocks in the image */
    uint32_t inode_count;         /* inodes, including the reserved inode 0 */
    uint32_t inode_bitmap_start;
    uint32_t inode_bitmap_blocks;
    uint32_t block_bitmap_start;
    uint32_t block_bitmap_blocks;
    uint32_t inode_table_start;
    uint32_t inode_table_blocks;
    uint32_t data_start;          /* first block not holding metadata */
    uint32_t root_inode;          /* FS_ROOT_INODE */
    uint32_t state;               /* FS_STATE_CLEAN or FS_STATE_MOUNTED */
    uint32_t reserved[3];
};

#define FS_TYPE_FREE  0u
#define FS_TYPE_FILE  1u
#define FS_TYPE_DIR   2u

#define FS_NDIRECT         12u
#define FS_PTRS_PER_BLOCK  (FS_BLOCK_SIZE / 4u)   /* 1024 block numbers */

struct fs_inode {
    uint16_t type;                /* FS_TYPE_* */
    uint16_t nlink;               /* directory entries naming it */
    uint32_t generation;          /* 1 up, bumped each time the inode is made anew
                                     (0 in an image made by dmfs: the same as 1), so
                                     that a file link to a removed file cannot reach
                                     the next file given its inode (user/lib/fs_protocol.h) */
    uint64_t size;                /* bytes */
    uint64_t mtime_ns;            /* last change, ns since 1970 */
    uint32_t direct[FS_NDIRECT];
    uint32_t indirect;            /* block of FS_PTRS_PER_BLOCK pointers */
    uint32_t double_indirect;     /* block of pointers to indirect blocks */
    uint32_t reserved1[12];
};                                /* 128 bytes */

#define FS_INODE_SIZE        128u
#define FS_INODES_PER_BLOCK  (FS_BLOCK_SIZE / FS_INODE_SIZE)   /* 32 */

#define FS_NAME_MAX 59u           /* bytes in a name, not counting its NUL */

struct fs_dirent {
    uint32_t inode;               /* 0: a free entry */
    char     name[FS_NAME_MAX + 1];  /* NUL-terminated */
};                                /* 64 bytes */

#define FS_DIRENTS_PER_BLOCK (FS_BLOCK_SIZE / sizeof(struct fs_dirent))   /* 64 */

/* The largest file, in blocks and bytes. */
#define FS_MAX_FILE_BLOCKS \
    ((uint64_t)FS_NDIRECT + FS_PTRS_PER_BLOCK + (uint64_t)FS_PTRS_PER_BLOCK * FS_PTRS_PER_BLOCK)
#define FS_MAX_FILE_SIZE (FS_MAX_FILE_BLOCKS * FS_BLOCK_SIZE)

_Static_assert(sizeof(struct fs_superblock) == 64, "superblock layout");
_Static_assert(sizeof(struct fs_inode) == FS_INODE_SIZE, "inode layout");
_Static_assert(sizeof(struct fs_dirent) == 64, "directory entry layout");

/* Where the pointer to a file's block `n` lives: how many indirect levels
 * lead to it (0: inode->direct[index[0]]; 1: inode->indirect, then
 * index[0]; 2: inode->double_indirect, then index[0], then index[1]).
 * Returns the level, or -1 past the largest file. */
static inline int fs_block_path(uint64_t n, uint32_t index[2])
{
    if (n < FS_NDIRECT) {
        index[0] = (uint32_t)n;
        return 0;
    }
    n -= FS_NDIRECT;
    if (n < FS_PTRS_PER_BLOCK) {
        index[0] = (uint32_t)n;
        return 1;
    }
    n -= FS_PTRS_PER_BLOCK;
    if (n < (uint64_t)FS_PTRS_PER_BLOCK * FS_PTRS_PER_BLOCK) {
        index[0] = (uint32_t)(n / FS_PTRS_PER_BLOCK);
        index[1] = (uint32_t)(n % FS_PTRS_PER_BLOCK);
        return 2;
    }
    return -1;
}

/* The layout of a new file system of block_count blocks and inode_count
 * inodes (rounded up to whole inode-table blocks); returns 0, or -1 if the
 * metadata and the root directory's block do not fit. */
static inline int fs_layout(uint32_t block_count, uint32_t inode_count, struct fs_superblock *sb)
{
    const uint32_t bits_per_block = FS_BLOCK_SIZE * 8;
    if (inode_count > UINT32_MAX - FS_INODES_PER_BLOCK)
        return -1;
    if (inode_count < FS_INODES_PER_BLOCK)
        inode_count = FS_INODES_PER_BLOCK;
    inode_count = (inode_count + FS_INODES_PER_BLOCK - 1) / FS_INODES_PER_BLOCK * FS_INODES_PER_BLOCK;
    for (unsigned i = 0; i < sizeof *sb; i++)
        ((uint8_t *)sb)[i] = 0;
    sb->magic = FS_MAGIC;
    sb->version = FS_VERSION;
    sb->block_count = block_count;
    sb->inode_count = inode_count;
    sb->inode_bitmap_start = 1;
    sb->inode_bitmap_blocks = (inode_count + bits_per_block - 1) / bits_per_block;
    sb->block_bitmap_start = sb->inode_bitmap_start + sb->inode_bitmap_blocks;
    sb->block_bitmap_blocks = (block_count + bits_per_block - 1) / bits_per_block;
    sb->inode_table_start = sb->block_bitmap_start + sb->block_bitmap_blocks;
    sb->inode_table_blocks = inode_count / FS_INODES_PER_BLOCK;
    sb->data_start = sb->inode_table_start + sb->inode_table_blocks;
    sb->root_inode = FS_ROOT_INODE;
    sb->state = FS_STATE_CLEAN;
    return sb->data_start < block_count ? 0 : -1;   /* room for the root directory's block */
}

#endif
