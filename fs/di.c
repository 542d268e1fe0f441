/*
 * di.c — the disk interface, one of the file system's four processes
 * (DEMOS): the only process that talks to the kernel's disk driver, over
 * the disk's device link (slot 3, from the process manager). One runs for
 * each disk, registered as its first argument ("di" for disk 0, which holds
 * the file system; "di1", ... for the others). It reads and
 * writes one block per request, in the order the requests arrive; the
 * block moves between the requester's data area and its own with MOVEDATA.
 * A read may come by SEND rather than CALL, for a requester that does not
 * wait for it: its answer then goes over the link it passed
 * (user/lib/fs_protocol.h, struct di_read_done).
 *
 * At start, before it serves, it mounts the file system
 * (docs/fs-design.md, "Consistency"): a superblock still marked MOUNTED
 * means the last run did not end with a final sync, so the disk is checked
 * and repaired (fs/fsck.c, the host's `dmfs check --repair`), then marked
 * MOUNTED until the buffer manager's final sync marks it CLEAN. A disk
 * without a file system is left alone: it is served as raw blocks.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "fsck.h"
#include "fs_protocol.h"
#include "server.h"

#define DEVICE_SLOT 3

static uint8_t block[DM_DISK_BLOCK] __attribute__((aligned(4096)));
static int sound;    /* the file system was found sound and marked MOUNTED (DI_SOUND) */
static struct di_stats stats;

/* A request to the disk driver; its status. */
static long disk(uint32_t op, int64_t arg0, int64_t arg1, long pass, uint64_t *value)
{
    struct kernel_request k = { .op = op, .arg = { arg0, arg1 }, .pass = pass };
    long status = kernel_request(DEVICE_SLOT, &k);
    if (value)
        *value = k.value;   /* 0 when no answer came */
    return status;
}

/* Block I/O for the checker, through `block`: the kernel's disk driver
 * moves blocks only to and from the attached area. */
static int check_read(void *ctx, uint32_t b, void *buf)
{
    (void)ctx;
    if (disk(KOP_DISK_READ, b, 0, DM_NO_LINK, 0) < 0)
        return -1;
    memcpy(buf, block, DM_DISK_BLOCK);
    return 0;
}

static int check_write(void *ctx, uint32_t b, const void *buf)
{
    (void)ctx;
    memcpy(block, buf, DM_DISK_BLOCK);
    return disk(KOP_DISK_WRITE, b, 0, DM_NO_LINK, 0) < 0 ? -1 : 0;
}

static void check_report(void *ctx, const char *line)
{
    (void)ctx;
    printf("di: %s\n", line);
}

/* Checks and repairs the file system on a disk of `blocks` blocks; says
 * what it found. Returns 0 if the file system can be used. */
static int check_at_mount(uint64_t blocks)
{
    struct fsck_disk d = {
        .name = "disk",
        .size = blocks * DM_DISK_BLOCK,
        .io = { 0, check_read, check_write, 0, 0 },
        .report = check_report,
    };
    struct fsck_result r;
    printf("di: file system not cleanly unmounted; checking\n");
    if (fsck_run(&d, FSCK_REPAIR | FSCK_AT_MOUNT, &r) != 0) {
        printf("di: check failed: %s\n", r.failure_message);
        return -1;
    }
    if (r.problems == 0)
        printf("di: check: clean: %u files, %u directories\n", (unsigned)r.files, (unsigned)r.directories);
    else
        printf("di: check: %u problems found, %u repaired, %u not repairable\n", (unsigned)r.problems,
               (unsigned)(r.problems - r.unrepaired), (unsigned)r.unrepaired);
    return r.unrepaired == 0 ? 0 : -1;
}

/* Mounts the file system before serving: checks it if it was not cleanly
 * unmounted, then marks it MOUNTED. A disk whose block 0 is not a
 * superblock of this format is not touched. */
static void mount(void)
{
    uint64_t blocks = 0;
    struct fs_superblock sb;
    if (disk(KOP_DISK_INFO, 0, 0, DM_NO_LINK, &blocks) < 0 || blocks == 0 ||
        disk(KOP_DISK_READ, 0, 0, DM_NO_LINK, 0) < 0)
        return;
    memcpy(&sb, block, sizeof sb);
    if (sb.magic != FS_MAGIC || sb.version != FS_VERSION)
        return;
    if (sb.state != FS_STATE_CLEAN && check_at_mount(blocks) != 0)
        return;   /* not repaired: left not CLEAN, to be checked again at the next start */
    if (disk(KOP_DISK_READ, 0, 0, DM_NO_LINK, 0) < 0)   /* the check may have rewritten it */
        return;
    ((struct fs_superblock *)block)->state = FS_STATE_MOUNTED;
    sound = disk(KOP_DISK_WRITE, 0, 0, DM_NO_LINK, 0) == 0;
}

/* DI_INFO, DI_SOUND, DI_READ, DI_WRITE; its status. */
static long handle_block(const struct sv_request *q, long area, uint64_t *value)
{
    switch (q->op) {
    case DI_INFO:
        return disk(KOP_DISK_INFO, 0, 0, DM_NO_LINK, value);
    case DI_SOUND:
        *value = (uint64_t)sound;
        return 0;
    case DI_READ: {
        if (area < 0)
            return E_INVAL;
        long err = disk(KOP_DISK_READ, q->arg[0], 0, DM_NO_LINK, 0);
        if (err == 0)
            err = dm_movedata(area, (uint64_t)q->arg[1], DM_SELF, (uint64_t)block, DM_DISK_BLOCK);
        if (err >= 0)
            stats.reads++;
        return err < 0 ? err : 0;
    }
    case DI_WRITE: {
        if (area < 0)
            return E_INVAL;
        long err = dm_movedata(DM_SELF, (uint64_t)block, area, (uint64_t)q->arg[1], DM_DISK_BLOCK);
        if (err >= 0)
            err = disk(KOP_DISK_WRITE, q->arg[0], 0, DM_NO_LINK, 0);
        if (err >= 0)
            stats.writes++;
        return err < 0 ? err : 0;
    }
    }
    return E_NOSYS;
}

/* One request; DI_STATS answers with the counters, every other request
 * that fails counts as an error. A DI_READ sent without a reply link is
 * answered over the link it passed (struct di_read_done). */
static void handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                   struct server_answer *answer)
{
    (void)len;
    if (q->op == DI_STATS) {
        answer->data = &stats;
        answer->len = sizeof stats;
        return;
    }
    uint64_t value = 0;
    answer->status = handle_block(q, info->link, &value);
    answer->value = (int64_t)value;
    if (answer->status < 0)
        stats.errors++;
    if (q->op == DI_READ && info->reply < 0 && info->link >= 0) {
        struct di_read_done done = { q->arg[0], q->arg[1], answer->status };
        dm_send(info->link, &done, sizeof done, DM_NO_LINK);
    }
}

int main(int argc, char **argv)
{
    long mine = dm_createlink(0, 0, LINK_READ | LINK_WRITE, block, sizeof block);
    long err = disk(KOP_DISK_ATTACH, 0, 0, mine, 0);
    if (err < 0)
        return 1;
    mount();
    server_register(argc > 1 ? argv[1] : "di", 0);
    server_run(handle);
}
