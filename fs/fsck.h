/*
 * fsck.h — the file-system checker, one piece of code run by the host tool
 * (`dmfs check [--repair]`) and by the disk interface when it finds the
 * file system not cleanly unmounted (docs/fs-design.md, "Consistency").
 * What it checks and how it repairs is listed in `dmfs --help` (WHAT CHECK
 * CHECKS, REPAIR POLICY).
 *
 * It reads the disk through callbacks (fsimage.h) and holds in memory only
 * metadata: both bitmaps and the inode table, the directory and indirect
 * blocks it visits, and a few bytes per block and per inode of its own.
 * Repairs are made in memory; with FSCK_REPAIR they are written at the end
 * (image_commit's order: directory and indirect blocks, then bitmaps and the
 * inode table, the superblock last), so a check without it reports exactly
 * what a repair would fix.
 */
#ifndef FSCK_H
#define FSCK_H

#include <stdint.h>
#include "fsimage.h"

/* fsck_run's flags. */
#define FSCK_REPAIR   1u   /* write the repairs to the disk */
#define FSCK_AT_MOUNT 2u   /* the caller is mounting: the state MOUNTED is why it
                              checks, not a problem, and the state is left to it */

/* The disk to check. */
struct fsck_disk {
    const char *name;           /* for messages */
    uint64_t size;              /* the disk's (or image file's) size in bytes */
    struct fs_image_io io;      /* its blocks; io.write is needed only with FSCK_REPAIR */
    /* One problem, in one line without a newline: what is wrong, and with
     * FSCK_REPAIR " (fixed: how)" after it. Called with io.ctx. */
    void (*report)(void *ctx, const char *line);
};

/* What a check found. The counts of what is in use are those after the
 * repairs (made in memory, and on the disk with FSCK_REPAIR). */
struct fsck_result {
    uint32_t problems;          /* problems reported */
    uint32_t unrepaired;        /* of them, those that cannot be repaired */
    uint32_t files, directories;
    uint32_t blocks_used, block_count;     /* metadata blocks included */
    uint32_t inodes_used, inode_count;     /* the reserved inode 0 not included */
    enum fs_image_failure failure;         /* 0, or why the check could not finish */
    char failure_message[256];
};

/* Checks the file system on `disk`, reporting each problem through
 * disk->report. Returns 0 when the check ran to its end (*result says what
 * it found), -1 when it could not (result->failure says why: a block that
 * could not be read or written, or memory running out; with FSCK_REPAIR
 * the disk is then as it was, unless the failure came while writing). */
int fsck_run(const struct fsck_disk *disk, unsigned flags, struct fsck_result *result);

#endif
