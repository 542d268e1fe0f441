/*
 * dmtest — ask the directory manager ("dm") as the request interpreter will.
 *
 *   dmtest lookup PATH     inode, type, size and link count of PATH
 *   dmtest ls PATH         the names in directory PATH, one a line
 *   dmtest stats           the directory manager's counters
 *   dmtest create PATH file|dir
 *   dmtest rm PATH
 *   dmtest sync            ask the buffer manager to write everything back
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"

static int cmd_lookup(long dm, char **argv);
static int cmd_ls(long dm, char **argv);
static int cmd_stats(long dm);
static int cmd_create(long dm, char **argv);
static int cmd_rm(long dm, char **argv);
static int cmd_sync(void);

/* One subcommand, by its name and number of arguments. */
int main(int argc, char **argv)
{
    long dm = sb_lookup("dm");
    if (dm < 0) {
        printf("dmtest: no directory manager: %s\n", dm_error_name(dm));
        return 1;
    }
    if (argc == 3 && strcmp(argv[1], "lookup") == 0)
        return cmd_lookup(dm, argv);
    if (argc == 3 && strcmp(argv[1], "ls") == 0)
        return cmd_ls(dm, argv);
    if (argc == 2 && strcmp(argv[1], "stats") == 0)
        return cmd_stats(dm);
    if (argc == 4 && strcmp(argv[1], "create") == 0)
        return cmd_create(dm, argv);
    if (argc == 3 && strcmp(argv[1], "rm") == 0)
        return cmd_rm(dm, argv);
    if (argc == 2 && strcmp(argv[1], "sync") == 0)
        return cmd_sync();
    printf("usage: dmtest lookup PATH | ls PATH | stats | create PATH file|dir | rm PATH | sync\n");
    return 2;
}

/* dmtest lookup PATH (the usage above). */
static int cmd_lookup(long dm, char **argv)
{
    struct dm_stat st;
    struct sv_call c = { .op = DMG_LOOKUP, .data = argv[2], .len = (uint32_t)strlen(argv[2]) + 1,
                         .pass = DM_NO_LINK, .reply_data = &st, .reply_cap = sizeof st };
    long err = sv_call(dm, &c);
    if (err < 0) {
        printf("%s: %s\n", argv[2], dm_error_name(err));
        return 1;
    }
    printf("%s: inode %u %s size %llu nlink %u\n", argv[2], st.inode, st.type == FS_TYPE_DIR ? "dir" : "file",
           (unsigned long long)st.size, st.nlink);
    return 0;
}

/* dmtest ls PATH (the usage above). */
static int cmd_ls(long dm, char **argv)
{
    static struct fs_dirent entries[64];
    long total = 0;
    for (;;) {
        struct sv_call c = { .op = DMG_LIST, .arg = { total }, .data = argv[2],
                             .len = (uint32_t)strlen(argv[2]) + 1, .pass = DM_NO_LINK,
                             .reply_data = entries, .reply_cap = sizeof entries };
        long err = sv_call(dm, &c);
        if (err < 0) {
            printf("%s: %s\n", argv[2], dm_error_name(err));
            return 1;
        }
        for (int64_t i = 0; i < c.value; i++)
            printf("%s\n", entries[i].name);
        total += c.value;
        if (c.value == 0)
            break;
    }
    printf("%ld entries\n", total);
    return 0;
}

/* dmtest stats (the usage above). */
static int cmd_stats(long dm)
{
    struct dm_counts k;
    struct sv_call c = { .op = DMG_STATS, .pass = DM_NO_LINK, .reply_data = &k, .reply_cap = sizeof k };
    if (sv_call(dm, &c) < 0)
        return 1;
    printf("lookup %llu list %llu bm_requests %llu\n", (unsigned long long)k.requests[DMG_LOOKUP],
           (unsigned long long)k.requests[DMG_LIST], (unsigned long long)k.bm_requests);
    return 0;
}

/* dmtest create PATH file|dir (the usage above). */
static int cmd_create(long dm, char **argv)
{
    struct sv_call c = { .op = DMG_CREATE, .arg = { strcmp(argv[3], "dir") == 0 ? FS_TYPE_DIR : FS_TYPE_FILE },
                         .data = argv[2], .len = (uint32_t)strlen(argv[2]) + 1, .pass = DM_NO_LINK };
    long err = sv_call(dm, &c);
    if (err < 0)
        printf("%s: %s\n", argv[2], dm_error_name(err));
    else
        printf("%s: inode %lld\n", argv[2], (long long)c.value);
    return err < 0;
}

/* dmtest rm PATH (the usage above). */
static int cmd_rm(long dm, char **argv)
{
    struct sv_call c = { .op = DMG_UNLINK, .data = argv[2], .len = (uint32_t)strlen(argv[2]) + 1,
                         .pass = DM_NO_LINK };
    long err = sv_call(dm, &c);
    printf("%s: %s\n", argv[2], err < 0 ? dm_error_name(err) : "removed");
    return err < 0;
}

/* dmtest sync (the usage above). */
static int cmd_sync(void)
{
    long bm = sb_lookup("bm");
    struct sv_call c = { .op = BM_SYNC, .pass = DM_NO_LINK };
    long err = bm < 0 ? bm : sv_call(bm, &c);
    printf(err < 0 ? "sync: failed\n" : "synced\n");
    return err < 0;
}
