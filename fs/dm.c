/*
 * dm.c — the directory manager, one of the file system's four processes
 * (DEMOS): it turns path names into inodes and lists directories. It reads
 * directory and inode-table blocks through the buffer manager, one block per
 * request, into its own data area.
 *
 * So far it answers lookups and listings; creating, removing and renaming
 * come next (docs/fs-design.md).
 */
#include <string.h>
#include "dmlib.h"
#include "fsproto.h"

static long bm;                          /* link to the buffer manager */
static uint8_t block[FS_BLOCK_SIZE];     /* the block last read */
static long block_link;                  /* link to `block`, write right */
static struct fs_superblock superblock;
static struct dm_counts counts;

/* Ask the buffer manager for a block (BM_READ_BLOCK or BM_READ_FILE) into `block`. */
static long bm_read(uint32_t op, int64_t a0, int64_t a1)
{
    long area = dm_duplicatelink(block_link);
    if (area < 0)
        return area;
    struct sv_call c = { .op = op, .arg = { a0, a1, 0 }, .pass = area };
    if (op == BM_READ_BLOCK)
        c.arg[1] = 0;
    counts.bm_requests++;
    return sv_call(bm, &c);
}

static long read_inode(uint32_t ino, struct fs_inode *inode)
{
    if (ino == 0 || ino >= superblock.inode_count)
        return E_NOTFOUND;
    long err = bm_read(BM_READ_BLOCK, superblock.inode_table_start + ino / FS_INODES_PER_BLOCK, 0);
    if (err < 0)
        return err;
    memcpy(inode, block + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE, sizeof *inode);
    return inode->type == FS_TYPE_FREE ? E_NOTFOUND : 0;
}

/* Call visit(entry, arg) for every used entry of directory `dir`, in order,
 * until it returns non-zero; returns that, 0, or an error. */
static long each_entry(uint32_t dir, const struct fs_inode *inode, long (*visit)(const struct fs_dirent *, void *),
                       void *arg)
{
    uint64_t entries = inode->size / sizeof(struct fs_dirent);
    for (uint64_t n = 0; n * FS_DIRENTS_PER_BLOCK < entries; n++) {
        long err = bm_read(BM_READ_FILE, dir, (int64_t)n);
        if (err < 0)
            return err;
        const struct fs_dirent *d = (const struct fs_dirent *)block;
        for (uint64_t i = 0; i < FS_DIRENTS_PER_BLOCK && n * FS_DIRENTS_PER_BLOCK + i < entries; i++) {
            if (d[i].inode == 0)
                continue;
            long r = visit(&d[i], arg);
            if (r)
                return r;
        }
    }
    return 0;
}

struct search { const char *name; size_t len; uint32_t found; };

static long match_name(const struct fs_dirent *d, void *arg)
{
    struct search *s = arg;
    if (strnlen(d->name, sizeof d->name) == s->len && memcmp(d->name, s->name, s->len) == 0) {
        s->found = d->inode;
        return 1;
    }
    return 0;
}

/* The inode a path names, with its contents in *inode. */
static long lookup(const char *path, uint32_t *ino, struct fs_inode *inode)
{
    if (path[0] != '/')
        return E_INVAL;
    *ino = FS_ROOT_INODE;
    long err = read_inode(*ino, inode);
    for (const char *p = path; !err && *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, "/");
        if (len > FS_NAME_MAX)
            return E_INVAL;
        if (inode->type != FS_TYPE_DIR)
            return E_NOTFOUND;
        struct search s = { p, len, 0 };
        err = each_entry(*ino, inode, match_name, &s);
        if (err < 0)
            return err;
        if (!s.found)
            return E_NOTFOUND;
        *ino = s.found;
        err = read_inode(*ino, inode);
        p += len;
    }
    return err;
}

struct listing { int64_t skip; struct fs_dirent *out; uint32_t count, max; };

static long add_to_listing(const struct fs_dirent *d, void *arg)
{
    struct listing *l = arg;
    if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
        return 0;
    if (l->skip > 0) {
        l->skip--;
        return 0;
    }
    l->out[l->count++] = *d;
    return l->count == l->max;
}

int main(void)
{
    bm = sb_lookup_wait("bm", 5000000000ull);
    block_link = dm_createlink(0, 0, LINK_WRITE, block, sizeof block);
    if (bm < 0 || block_link < 0 || bm_read(BM_READ_BLOCK, 0, 0) < 0)
        return 1;
    memcpy(&superblock, block, sizeof superblock);
    sb_register("dm", dm_createlink(0, 0, 0, 0, 0));
    pm_ready();

    static uint8_t message[DM_MSG_MAX];
    static struct fs_dirent entries[(DM_MSG_MAX - sizeof(struct sv_reply)) / sizeof(struct fs_dirent)];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message - 1, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        message[n] = 0;
        const struct sv_request *q = (const struct sv_request *)message;
        const char *path = (const char *)(q + 1);
        long status = E_BADREQ;
        int64_t value = 0;
        const void *data = 0;
        uint32_t len = 0;
        uint32_t ino;
        struct fs_inode inode;
        struct dm_stat st;
        if ((size_t)n >= sizeof *q && q->op < DMG_NKINDS)
            counts.requests[q->op]++;
        if ((size_t)n < sizeof *q) {
            status = E_BADREQ;
        } else if (q->op == DMG_LOOKUP) {
            if ((status = lookup(path, &ino, &inode)) == 0) {
                st = (struct dm_stat){ ino, inode.type, inode.nlink, inode.size };
                value = ino, data = &st, len = sizeof st;
            }
        } else if (q->op == DMG_LIST) {
            status = lookup(path, &ino, &inode);
            if (status == 0 && inode.type != FS_TYPE_DIR)
                status = E_INVAL;
            if (status == 0) {
                struct listing l = { q->arg[0], entries, 0, sizeof entries / sizeof entries[0] };
                status = each_entry(ino, &inode, add_to_listing, &l);
                status = status < 0 ? status : 0;
                value = l.count, data = entries, len = l.count * sizeof entries[0];
            }
        } else if (q->op == DMG_STATS) {
            status = 0, data = &counts, len = sizeof counts;
        } else {
            status = E_NOSYS;
        }
        if (info.link >= 0)
            dm_destroylink(info.link);
        if (info.reply >= 0)
            sv_reply(info.reply, status, value, data, len, DM_NO_LINK);
    }
}
