/*
 * fs_protocol.h — the messages of the file system's processes (kept with
 * the user library, which its clients and its processes link). Requests are
 * struct sv_request (user/lib/server_protocol.h) sent by CALL; block data moves by
 * MOVEDATA through a link to the requester's data area passed with the
 * request.
 */
#ifndef FS_PROTOCOL_H
#define FS_PROTOCOL_H

#include "fs_format.h"

/* The disk interface ("di" in the switchboard): the only process that
 * talks to the kernel's disk driver. */
enum di_op {
    DI_INFO = 1,   /* value = the disk's size in blocks */
    DI_READ,       /* arg0 = block, arg1 = offset: the passed link's area (write
                      right) receives the block at that offset */
    DI_WRITE,      /* arg0 = block, arg1 = offset: the passed link's area (read
                      right) holds the block at that offset */
    DI_STATS,      /* data = struct di_stats */
    DI_SOUND,      /* value = 1 if the disk's file system was found sound at start
                      (clean, or repaired by the check) and marked MOUNTED; 0 if
                      not, and then it must never be marked CLEAN, so that the
                      next start checks it again */
};

/* A DI_READ may also come by SEND, without a reply link, so that its sender
 * need not wait for the disk (the buffer manager's read-ahead): the answer
 * is then a struct di_read_done sent over the link the request passed, once
 * the block is in that link's area. That link leads to the requester, who
 * made it, so the answer comes on the channel and with the code it chose.
 * The disk interface serves its requests in the order they arrive. */
struct di_read_done {
    int64_t block;         /* the request's arg0 */
    int64_t offset;        /* its arg1 */
    int64_t status;        /* 0, or the error a CALL would have been answered */
};

/* What the disk interface counts: one each per request it answered. */
struct di_stats {
    uint64_t reads;        /* DI_READ requests that read a block from the disk */
    uint64_t writes;       /* DI_WRITE requests that wrote a block to the disk */
    uint64_t errors;       /* requests answered with an error */
};

/* The request interpreter ("fs"): the only file-system process users talk
 * to. Opening a file gives a *file link*: a link to the request interpreter
 * whose code names the file and the access granted (DEMOS's way), so a
 * process reads and writes only the files it opened, as it opened them;
 * closing is destroying the link. Offsets travel with each read and write:
 * the request interpreter keeps nothing per client. File data moves by
 * MOVEDATA between the buffer manager and the data area whose link comes
 * with FS_READ and FS_WRITE (the user's buffer, at offset 0 of that area). */
#define FS_ACCESS_READ  1u
#define FS_ACCESS_WRITE 2u

/* A file as the buffer manager's file requests name it (arg0): its inode,
 * and in bits 32-60 the generation the requester knows it by (fs_inode.
 * generation), or 0 to take the inode as it is (the directory manager's own
 * requests). A generation the inode no longer has means the file was
 * removed and its inode given to another: E_NOTFOUND. */
#define FS_FILE_ID(inode, generation) ((int64_t)((uint64_t)(generation) << 32 | (uint32_t)(inode)))
#define FS_FILE_INODE(id)      ((uint32_t)(uint64_t)(id))
#define FS_FILE_GENERATION(id) ((uint32_t)((uint64_t)(id) >> 32) & 0x1fffffffu)
#define FS_GENERATION_NEXT(g)  ((g) >= 0x1fffffffu ? 1u : (g) + 1u)

enum fs_op {
    FS_OPEN = 1,      /* data = path, arg0 = access (FS_ACCESS_*, or 0): value = inode;
                         answer data = struct dm_stat; with access, the answer passes a
                         file link. E_STATE: write access to a directory */
    FS_CREATE,        /* data = path, arg0 = FS_TYPE_FILE or FS_TYPE_DIR, arg1 = access:
                         value = inode; E_STATE if the name exists; with access (a
                         file's), the answer passes a file link */
    FS_READ,          /* over a file link with read access: arg0 = offset, arg1 = length:
                         value = bytes read (fewer at the end of the file) */
    FS_WRITE,         /* over a file link with write access: arg0 = offset, arg1 = length:
                         value = bytes written; the file grows as needed */
    FS_UNLINK,        /* data = path */
    FS_LIST,          /* data = path, arg0 = first index: as DMG_LIST */
    FS_SYNC,          /* write everything changed to the disk; over the halt link
                         (PM_SERVE "fs"), the final sync: the disk marked CLEAN,
                         and every later change refused with E_FSDOWN */
    FS_STATS,         /* data = struct ri_counts */
    FS_RENAME,        /* data = old path NUL new path NUL: as DMG_RENAME */
    FS_TRUNCATE,      /* over a file link with write access: free all its blocks; size 0 */
    FS_STAT,          /* over a file link: answer data = struct dm_stat */
};
#define FS_NKINDS 12

/* What the request interpreter counts. */
struct ri_counts {
    uint64_t requests[FS_NKINDS];  /* requests received, by op */
    uint64_t bm_requests;          /* requests it sent to the buffer manager */
    uint64_t dm_requests;          /* requests it sent to the directory manager */
    uint64_t bytes_read, bytes_written;
};

/* The buffer manager ("bm"): a cache of disk blocks. It maps a file's
 * blocks to disk blocks itself, reading inode-table and indirect blocks
 * through its own cache (DEMOS; docs/fs-design.md). Data moves by MOVEDATA
 * between a cache buffer and the passed link's data area. */
enum bm_op {
    BM_READ_BLOCK = 1,  /* arg0 = disk block, arg1 = offset in the passed area (write right) */
    BM_READ_FILE,       /* arg0 = file (FS_FILE_ID), arg1 = file block, arg2 = offset in the passed area;
                           a hole reads as zeros. value = the file's size in bytes */
    BM_STATS,           /* data = struct bm_stats */
    BM_WRITE_BLOCK,     /* arg0 = disk block, arg1 = offset in the passed area (read right) */
    BM_WRITE_FILE,      /* arg0 = file (FS_FILE_ID), arg1 = file block, arg2 = offset in the passed area:
                           the whole block; missing blocks (and indirect blocks) are allocated */
    BM_SET_SIZE,        /* arg0 = file (FS_FILE_ID), arg1 = its size in bytes */
    BM_SYNC,            /* write every changed block to the disk; value = blocks written.
                           arg0 = 1: the final sync at shutdown, after which the superblock
                           is written as CLEAN (until the next change marks it MOUNTED) */
    BM_INODE_INIT,      /* arg0 = inode, arg1 = type, arg2 = nlink: a fresh, empty inode
                           of the next generation, the value (FS_TYPE_FREE: cleared,
                           the generation kept) */
    BM_INODE_LINKS,     /* arg0 = inode, arg1 = change of nlink; value = the new nlink */
    BM_TRUNCATE,        /* arg0 = file (FS_FILE_ID): free all its blocks; size 0 */
    BM_READAHEAD,       /* arg0 = how many blocks to read ahead of a reader that reads a file
                           in order, 0 to BM_READAHEAD_MAX (0: none, as at start), or -1 to
                           leave it; value = the number before (docs/labs/readahead.md) */
};
#define BM_NKINDS 12
#define BM_REQUESTERS 8
#define BM_READAHEAD_MAX 8

/* What the buffer manager counts. Every DI_READ it sends is exactly one of
 * misses, readaheads, inode_reads, indirect_reads, mount_reads or
 * bitmap_reads; every DI_WRITE is one of writebacks, sync_writes or
 * state_writes. */
struct bm_stats {
    uint64_t requests[BM_NKINDS];  /* requests received, by op */
    uint64_t hits;            /* read and write requests whose block was in the cache */
    uint64_t misses;          /* requests whose block was not: one DI_READ each */
    uint64_t readaheads;      /* DI_READs sent ahead of a reader, without waiting */
    uint64_t readahead_hits;  /* of the hits, those on a block read ahead, at its first use (it
                                 may still have been on its way from the disk) */
    uint64_t holes;           /* file blocks never written: zeros, no disk read */
    uint64_t inode_reads;     /* DI_READs of inode-table blocks to map a file block */
    uint64_t indirect_reads;  /* DI_READs of single- and double-indirect blocks */
    uint64_t mount_reads;     /* DI_READs at start (the superblock) */
    uint64_t bitmap_reads;    /* DI_READs of block-bitmap blocks to allocate */
    uint64_t writebacks;      /* DI_WRITEs of a changed block evicted from the cache */
    uint64_t sync_writes;     /* DI_WRITEs made by BM_SYNC */
    uint64_t state_writes;    /* DI_WRITEs of the superblock: CLEAN at a final sync,
                                 MOUNTED again at the first change after one */
    uint64_t allocations;     /* blocks allocated (data and indirect) */
    uint64_t frees;           /* blocks given back by BM_TRUNCATE */
    uint64_t cache_blocks;    /* the cache's size */
    /* Requests by who sent them (the rows of DPM's "receives from, then
     * sends to" table, thesis Fig. 5.18), for the first BM_REQUESTERS
     * senders in the order they first asked; a later sender is added to the
     * last entry, whose pid then becomes 0 ("others"). */
    struct bm_requester {
        uint64_t pid;             /* the sender (dm_pid); 0 in an unused entry, or "others" */
        uint64_t requests;        /* requests received from it, BM_STATS included */
        uint64_t to_disk;         /* of them, those during which this process sent at least one
                                     request to the disk interface before it answered */
        uint64_t disk_requests;   /* the requests to the disk interface made while serving them */
    } requesters[BM_REQUESTERS];
};

/* The directory manager ("dm"): names, directories, inodes. Paths are
 * absolute, '/'-separated, NUL-terminated, in the request's data. */
enum dm_op {
    DMG_LOOKUP = 1,   /* data = path: value = inode; answer data = struct dm_stat */
    DMG_LIST,         /* data = path of a directory, arg0 = index of the first entry
                         wanted ("." and ".." are not listed): answer data = struct
                         fs_dirent[], value = how many */
    DMG_STATS,        /* data = struct dm_counts */
    DMG_CREATE,       /* data = path, arg0 = FS_TYPE_FILE or FS_TYPE_DIR: value = the new
                         inode; answer data = struct dm_stat; E_STATE if the name exists */
    DMG_UNLINK,       /* data = path: remove the name (a directory must be empty, else
                         E_STATE); the inode and its blocks are freed with its last name */
    DMG_RENAME,       /* data = old path NUL new path NUL: the object named old is named
                         new instead. An existing new of the same type is replaced (a
                         directory only if empty), else E_STATE; a directory cannot move
                         into itself (E_INVAL) */
    DMG_STAT,         /* arg0 = file (FS_FILE_ID): answer data = struct dm_stat */
};
#define DMG_NKINDS 8

struct dm_stat {
    uint32_t inode;
    uint16_t type;            /* FS_TYPE_FILE or FS_TYPE_DIR */
    uint16_t nlink;
    uint64_t size;
    uint32_t generation;      /* fs_inode.generation, at least 1 */
    uint32_t reserved;
};

/* What the directory manager counts. */
struct dm_counts {
    uint64_t requests[DMG_NKINDS];  /* requests received, by op */
    uint64_t bm_requests;           /* requests it sent to the buffer manager */
};

#endif
