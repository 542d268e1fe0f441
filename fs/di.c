/*
 * di.c — the disk interface, one of the file system's four processes
 * (DEMOS): the only process that talks to the kernel's disk driver, over
 * the disk's device link (slot 3, from the process manager). One runs for
 * each disk, registered as its first argument ("di" for disk 0, which holds
 * the file system; "di1", ... for the others). It reads and
 * writes one block per request; the block moves between the requester's
 * data area and its own with MOVEDATA.
 */
#include <string.h>
#include "dmlib.h"
#include "fsproto.h"

#define DEVICE_SLOT 3

static uint8_t block[DM_DISK_BLOCK] __attribute__((aligned(4096)));
static struct di_stats stats;

/* A request to the disk driver; its status. */
static long disk(uint32_t op, int64_t arg0, int64_t arg1, long pass, uint64_t *value)
{
    struct dm_kreq q = { .op = op, .arg = { arg0, arg1 } };
    struct dm_kreply r = { .status = E_BADREQ };
    struct dm_msg_info info;
    long n = dm_call(DEVICE_SLOT, &q, sizeof q, pass, &r, sizeof r, &info);
    if (n < 0)
        return n;
    if (value)
        *value = r.value;
    return r.status;
}

static long handle(const struct sv_request *q, long area, uint64_t *value)
{
    switch (q->op) {
    case DI_INFO:
        return disk(KOP_DISK_INFO, 0, 0, DM_NO_LINK, value);
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

int main(int argc, char **argv)
{
    long mine = dm_createlink(0, 0, LINK_READ | LINK_WRITE, block, sizeof block);
    long err = disk(KOP_DISK_ATTACH, 0, 0, mine, 0);
    if (err < 0)
        return 1;
    sb_register(argc > 1 ? argv[1] : "di", dm_createlink(0, 0, 0, 0, 0));
    pm_ready();
    static uint8_t buffer[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        const struct sv_request *q = (const struct sv_request *)buffer;
        uint64_t value = 0;
        long status;
        if ((size_t)n < sizeof *q)
            status = E_BADREQ;
        else if (q->op == DI_STATS) {
            if (info.link >= 0)
                dm_destroylink(info.link);
            if (info.reply >= 0)
                sv_reply(info.reply, 0, 0, &stats, sizeof stats, DM_NO_LINK);
            continue;
        } else
            status = handle(q, info.link, &value);
        if (status < 0)
            stats.errors++;
        if (info.link >= 0)
            dm_destroylink(info.link);
        if (info.reply >= 0)
            sv_reply(info.reply, status, (int64_t)value, 0, 0, DM_NO_LINK);
    }
}
