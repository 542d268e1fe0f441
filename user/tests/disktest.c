/*
 * disktest — talk to the disk interface ("di") the way the buffer manager
 * will: one block per request, moved through a data area passed with it.
 *
 *   disktest [-d DI] info                 the disk's size in blocks
 *   disktest [-d DI] read FIRST COUNT     print a checksum (FNV-1a, 64 bits) of each block
 *   disktest [-d DI] sent FIRST COUNT     the same, the COUNT (at most SENT_MAX) DI_READs
 *                                         sent at once with SEND, each answered over the
 *                                         link it passed (struct di_read_done)
 *   disktest [-d DI] write BLOCK SEED     fill a block with a pattern made from SEED
 *   disktest [-d DI] stats                what the disk interface has counted
 *
 * DI names the disk interface: "di" (disk 0, the default), "di1", ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"


static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--)
        h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

/* A request to the disk interface passing a link to an area of three
 * blocks whose middle one is `block` (so the offset is exercised too). */
static uint8_t area_space[3 * DM_DISK_BLOCK];
static uint8_t *const block = area_space + DM_DISK_BLOCK;

static long di_call(long di, uint32_t op, int64_t arg0, uint32_t rights, int64_t *value)
{
    long area = rights ? dm_createlink(0, 0, rights, area_space, sizeof area_space) : DM_NO_LINK;
    struct sv_call c = { .op = op, .arg = { arg0, DM_DISK_BLOCK }, .pass = area, .reply_data = block,
                         .reply_cap = op == DI_STATS ? sizeof(struct di_stats) : 0 };
    long status = sv_call(di, &c);
    if (value)
        *value = c.value;
    return status;
}

/* Blocks FIRST .. FIRST+COUNT-1 asked for all at once, each by a DI_READ
 * sent with SEND that passes a link to its own block of `sent_space`, on
 * SENT_CHANNEL with the block's number as its code; then the answers
 * received, which must come over those links in the order sent. The exit
 * status. */
#define SENT_MAX 8
#define SENT_CHANNEL 7
static uint8_t sent_space[SENT_MAX * DM_DISK_BLOCK];

static int read_sent(long di, long first, long count)
{
    if (count < 1 || count > SENT_MAX) {
        printf("disktest: sent: 1 to %d blocks\n", SENT_MAX);
        return 2;
    }
    for (long k = 0; k < count; k++) {
        long area = dm_createlink(SENT_CHANNEL, (uint64_t)(first + k), LINK_WRITE, sent_space, sizeof sent_space);
        struct sv_request q = { .op = DI_READ, .arg = { first + k, k * DM_DISK_BLOCK } };
        long err = area < 0 ? area : dm_send(di, &q, sizeof q, area);
        if (err < 0) {
            printf("block %ld: sent: %s\n", first + k, dm_error_name(err));
            return 1;
        }
    }
    int failed = 0;
    for (long k = 0; k < count; k++) {
        struct di_read_done done;
        struct dm_msg_info info;
        long n = dm_receive(&info, &done, sizeof done, SENT_CHANNEL);
        if (n != sizeof done || done.block != first + k || info.code != (uint64_t)(first + k) ||
            done.offset != k * DM_DISK_BLOCK) {
            printf("disktest: answer %ld: %ld bytes for block %lld over the link of block %llu\n", k, n,
                   (long long)done.block, (unsigned long long)info.code);
            return 1;
        }
        if (done.status < 0) {
            printf("block %ld: %s\n", first + k, dm_error_name(done.status));
            failed = 1;
        } else {
            printf("block %ld fnv %016llx\n", first + k,
                   (unsigned long long)fnv1a(sent_space + k * DM_DISK_BLOCK, DM_DISK_BLOCK));
        }
    }
    return failed;
}

int main(int argc, char **argv)
{
    const char *name = "di";
    if (argc > 2 && strcmp(argv[1], "-d") == 0) {
        name = argv[2];
        argv[2] = argv[0];
        argc -= 2, argv += 2;
    }
    long di = sb_lookup(name);
    if (di < 0) {
        printf("disktest: no disk interface %s: %s\n", name, dm_error_name(di));
        return 1;
    }
    int64_t value = 0;
    if (argc == 2 && strcmp(argv[1], "info") == 0) {
        long err = di_call(di, DI_INFO, 0, 0, &value);
        if (err < 0)
            printf("disktest: %s\n", dm_error_name(err));
        else
            printf("blocks %lld\n", (long long)value);
        return err < 0;
    }
    if (argc == 4 && strcmp(argv[1], "read") == 0) {
        long first = atol(argv[2]), count = atol(argv[3]);
        for (long b = first; b < first + count; b++) {
            long err = di_call(di, DI_READ, b, LINK_WRITE, 0);
            if (err < 0) {
                printf("block %ld: %s\n", b, dm_error_name(err));
                return 1;
            }
            printf("block %ld fnv %016llx\n", b, (unsigned long long)fnv1a(block, DM_DISK_BLOCK));
        }
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "sent") == 0)
        return read_sent(di, atol(argv[2]), atol(argv[3]));
    if (argc == 4 && strcmp(argv[1], "write") == 0) {
        long b = atol(argv[2]);
        unsigned seed = (unsigned)atol(argv[3]);
        for (size_t i = 0; i < DM_DISK_BLOCK; i++)
            block[i] = (uint8_t)((i * 31 + seed) ^ (i >> 8));
        long err = di_call(di, DI_WRITE, b, LINK_READ, 0);
        if (err < 0)
            printf("block %ld: %s\n", b, dm_error_name(err));
        else
            printf("block %ld written\n", b);
        return err < 0;
    }
    if (argc == 2 && strcmp(argv[1], "stats") == 0) {
        long err = di_call(di, DI_STATS, 0, 0, 0);
        struct di_stats s;
        memcpy(&s, block, sizeof s);
        if (err == 0)
            printf("reads %llu writes %llu errors %llu\n", (unsigned long long)s.reads,
                   (unsigned long long)s.writes, (unsigned long long)s.errors);
        return err < 0;
    }
    printf("usage: disktest [-d DI] info | read FIRST COUNT | sent FIRST COUNT | write BLOCK SEED | stats\n");
    return 2;
}
