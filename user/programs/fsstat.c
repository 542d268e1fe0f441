/*
 * fsstat — what the file system's processes have counted: the disk
 * interface, the buffer manager and the directory manager (user/lib/fs_protocol.h
 * defines each counter as the message-level event it stands for).
 */
#include <stdio.h>
#include "dmlib.h"
#include "fs_protocol.h"

/* Ask server `name` for its counters (op) into buf; 0 or an error. */
static long counters(const char *name, uint32_t op, void *buf, uint32_t len)
{
    long link = sb_lookup(name);
    if (link < 0)
        return link;
    struct sv_call c = { .op = op, .pass = DM_NO_LINK, .reply_data = buf, .reply_cap = len };
    long err = sv_call(link, &c);
    dm_destroylink(link);
    return err;
}

int main(void)
{
    struct di_stats di;
    struct bm_stats bm;
    struct dm_counts dm;
    struct ri_counts ri;
    if (counters("di", DI_STATS, &di, sizeof di) < 0) {
        printf("fsstat: no file system (no disk interface)\n");
        return 1;
    }
    printf("disk interface:    reads %llu  writes %llu  errors %llu\n", (unsigned long long)di.reads,
           (unsigned long long)di.writes, (unsigned long long)di.errors);
    if (counters("bm", BM_STATS, &bm, sizeof bm) == 0) {
        static const char *kinds[BM_NKINDS] = { 0, "read_block", "read_file", "stats", "write_block",
                                                "write_file", "set_size", "sync", "inode_init",
                                                "inode_links", "truncate", "readahead" };
        printf("buffer manager:    cache %llu blocks\n  requests:", (unsigned long long)bm.cache_blocks);
        for (int k = 1; k < BM_NKINDS; k++)
            printf(" %s %llu", kinds[k], (unsigned long long)bm.requests[k]);
        printf("\n  hits %llu  misses %llu  holes %llu\n", (unsigned long long)bm.hits,
               (unsigned long long)bm.misses, (unsigned long long)bm.holes);
        printf("  read ahead %llu  of them used %llu\n", (unsigned long long)bm.readaheads,
               (unsigned long long)bm.readahead_hits);
        printf("  disk reads for: inodes %llu  indirect blocks %llu  bitmap %llu  mount %llu\n",
               (unsigned long long)bm.inode_reads, (unsigned long long)bm.indirect_reads,
               (unsigned long long)bm.bitmap_reads, (unsigned long long)bm.mount_reads);
        printf("  disk writes: write-back %llu  sync %llu  superblock %llu\n  blocks allocated %llu  freed %llu\n",
               (unsigned long long)bm.writebacks, (unsigned long long)bm.sync_writes,
               (unsigned long long)bm.state_writes,
               (unsigned long long)bm.allocations, (unsigned long long)bm.frees);
        for (int k = 0; k < BM_REQUESTERS && bm.requesters[k].requests; k++) {
            const struct bm_requester *r = &bm.requesters[k];
            char pid[24];
            printf("  from %s: requests %llu  to the disk %llu  disk requests %llu\n",
                   r->pid ? dm_pid_string(r->pid, pid) : "others", (unsigned long long)r->requests,
                   (unsigned long long)r->to_disk, (unsigned long long)r->disk_requests);
        }
    }
    if (counters("dm", DMG_STATS, &dm, sizeof dm) == 0) {
        static const char *kinds[DMG_NKINDS] = { 0, "lookup", "list", "stats", "create", "unlink",
                                                 "rename", "stat" };
        printf("directory manager:\n  requests:");
        for (int k = 1; k < DMG_NKINDS; k++)
            printf(" %s %llu", kinds[k], (unsigned long long)dm.requests[k]);
        printf("\n  requests to the buffer manager %llu\n", (unsigned long long)dm.bm_requests);
    }
    if (counters("fs", FS_STATS, &ri, sizeof ri) == 0) {
        static const char *kinds[FS_NKINDS] = { 0, "open", "create", "read", "write", "unlink", "list",
                                                "sync", "stats", "rename", "truncate", "stat" };
        printf("request interpreter:\n  requests:");
        for (int k = 1; k < FS_NKINDS; k++)
            printf(" %s %llu", kinds[k], (unsigned long long)ri.requests[k]);
        printf("\n  requests to the buffer manager %llu  to the directory manager %llu\n",
               (unsigned long long)ri.bm_requests, (unsigned long long)ri.dm_requests);
        printf("  bytes read %llu  written %llu\n", (unsigned long long)ri.bytes_read,
               (unsigned long long)ri.bytes_written);
    }
    return 0;
}
