/*
 * dm.c — the directory manager, one of the file system's four processes
 * (DEMOS): it turns path names into inodes and lists directories. It reads
 * directory and inode-table blocks through the buffer manager, one block per
 * request, into its own data area.
 *
 * It owns the inode bitmap and the contents of directories; changes to an
 * inode itself (making it fresh, its link count, freeing its blocks) are
 * requests to the buffer manager, which also changes inodes (sizes and
 * block pointers), so that neither overwrites the other's changes.
 */
#include <string.h>
#include "dmlib.h"
#include "fs_protocol.h"
#include "server.h"

static long bm;                          /* link to the buffer manager */
static uint8_t block[FS_BLOCK_SIZE];     /* the block last read */
static long block_link;                  /* link to `block`, write right */
static struct fs_superblock superblock;
static struct dm_counts counts;

/* A request to the buffer manager; with `with_block`, `block` is the data
 * area it reads into or writes from. */
static long bm_request(uint32_t op, int64_t a0, int64_t a1, int64_t a2, int with_block, int64_t *value)
{
    long area = with_block ? dm_duplicatelink(block_link) : DM_NO_LINK;
    if (area < 0 && with_block)
        return area;
    struct sv_call c = { .op = op, .arg = { a0, a1, a2 }, .pass = area };
    counts.bm_requests++;
    long status = sv_call(bm, &c);
    if (value)
        *value = c.value;
    return status;
}

/* A block (BM_READ_BLOCK or BM_READ_FILE) into `block`. */
static long bm_read(uint32_t op, int64_t a0, int64_t a1)
{
    return op == BM_READ_BLOCK ? bm_request(op, a0, 0, 0, 1, 0) : bm_request(op, a0, a1, 0, 1, 0);
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

/* Call visit(entry, its index, arg) for every used entry of directory
 * `dir`, in order, until it returns non-zero; returns that, 0, or an error. */
static long each_entry(uint32_t dir, const struct fs_inode *inode,
                       long (*visit)(const struct fs_dirent *, uint64_t, void *), void *arg)
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
            long r = visit(&d[i], n * FS_DIRENTS_PER_BLOCK + i, arg);
            if (r)
                return r;
        }
    }
    return 0;
}

struct search { const char *name; size_t len; uint32_t found; uint64_t index; };

static long match_name(const struct fs_dirent *d, uint64_t index, void *arg)
{
    struct search *s = arg;
    if (strnlen(d->name, sizeof d->name) == s->len && memcmp(d->name, s->name, s->len) == 0) {
        s->found = d->inode;
        s->index = index;
        return 1;
    }
    return 0;
}

/* The entry called name[0..len) in directory dir: its index (*slot) and
 * inode; E_NOTFOUND if there is none. */
static long find_entry(uint32_t dir, const struct fs_inode *dir_inode, const char *name, size_t len,
                       uint64_t *slot, uint32_t *ino)
{
    struct search s = { name, len, 0, 0 };
    long err = each_entry(dir, dir_inode, match_name, &s);
    if (err < 0)
        return err;
    if (!s.found)
        return E_NOTFOUND;
    *slot = s.index;
    *ino = s.found;
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
        uint64_t slot;
        if ((err = find_entry(*ino, inode, p, len, &slot, ino)))
            return err;
        err = read_inode(*ino, inode);
        p += len;
    }
    return err;
}

struct listing { int64_t skip; struct fs_dirent *out; uint32_t count, max; };

static long add_to_listing(const struct fs_dirent *d, uint64_t index, void *arg)
{
    (void)index;
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

/* Take a free inode from the inode bitmap; 0 if there is none. */
static uint32_t allocate_inode(long *err)
{
    uint32_t bits = FS_BLOCK_SIZE * 8;
    for (uint32_t m = 0; m < superblock.inode_bitmap_blocks; m++) {
        if ((*err = bm_read(BM_READ_BLOCK, superblock.inode_bitmap_start + m, 0)) < 0)
            return 0;
        for (uint32_t bit = 0; bit < bits && m * bits + bit < superblock.inode_count; bit++) {
            if (m * bits + bit != 0 && !(block[bit / 8] & (1u << (bit % 8)))) {
                block[bit / 8] |= (uint8_t)(1u << (bit % 8));
                *err = bm_request(BM_WRITE_BLOCK, superblock.inode_bitmap_start + m, 0, 0, 1, 0);
                return *err < 0 ? 0 : m * bits + bit;
            }
        }
    }
    *err = E_NOMEM;
    return 0;
}

static long free_inode(uint32_t ino)
{
    uint32_t bits = FS_BLOCK_SIZE * 8;
    long err = bm_read(BM_READ_BLOCK, superblock.inode_bitmap_start + ino / bits, 0);
    if (err < 0)
        return err;
    block[(ino % bits) / 8] &= (uint8_t) ~(1u << (ino % 8));
    return bm_request(BM_WRITE_BLOCK, superblock.inode_bitmap_start + ino / bits, 0, 0, 1, 0);
}

/* Split "/a/b/name" into the parent's path (in parent) and the name. */
static long split_path(const char *path, char *parent, size_t cap, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (path[0] != '/' || !slash || !slash[1] || strlen(slash + 1) > FS_NAME_MAX ||
        (size_t)(slash - path) + 2 > cap || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
        return E_INVAL;
    memcpy(parent, path, (size_t)(slash - path));
    parent[slash == path ? 1 : slash - path] = 0;
    if (slash == path)
        parent[0] = '/';
    *name = slash + 1;
    return 0;
}

/* Write entry (ino, name) into directory dir: into a free entry, or at its
 * end (one entry longer). */
static long add_entry(uint32_t dir, struct fs_inode *dir_inode, uint32_t ino, const char *name)
{
    uint64_t entries = dir_inode->size / sizeof(struct fs_dirent);
    uint64_t slot = entries;
    for (uint64_t n = 0; n * FS_DIRENTS_PER_BLOCK < entries && slot == entries; n++) {
        long err = bm_read(BM_READ_FILE, dir, (int64_t)n);
        if (err < 0)
            return err;
        const struct fs_dirent *d = (const struct fs_dirent *)block;
        for (uint64_t i = 0; i < FS_DIRENTS_PER_BLOCK && n * FS_DIRENTS_PER_BLOCK + i < entries; i++)
            if (d[i].inode == 0) {
                slot = n * FS_DIRENTS_PER_BLOCK + i;
                break;
            }
    }
    uint64_t n = slot / FS_DIRENTS_PER_BLOCK;
    long err = bm_read(BM_READ_FILE, dir, (int64_t)n);   /* a new block reads as zeros */
    if (err < 0)
        return err;
    struct fs_dirent *d = (struct fs_dirent *)block + slot % FS_DIRENTS_PER_BLOCK;
    memset(d, 0, sizeof *d);
    d->inode = ino;
    strcpy(d->name, name);
    if ((err = bm_request(BM_WRITE_FILE, dir, (int64_t)n, 0, 1, 0)) < 0)
        return err;
    if (slot == entries)
        err = bm_request(BM_SET_SIZE, dir, (int64_t)((entries + 1) * sizeof(struct fs_dirent)), 0, 0, 0);
    return err < 0 ? err : 0;
}

/* The answer about an inode: struct dm_stat. */
static struct dm_stat stat_of(uint32_t ino, const struct fs_inode *inode)
{
    return (struct dm_stat){ .inode = ino, .type = inode->type, .nlink = inode->nlink, .size = inode->size,
                             .generation = inode->generation ? inode->generation : 1 };
}

/* A create that failed after taking inode ino: give back what it took
 * (the parent's link for "..", the inode's blocks, the inode), so that a
 * failed create (a full disk, say) leaves the file system as it was. The
 * entry naming ino was never written: add_entry is the last step and
 * writes nothing when it fails. Errors here are not reported: the
 * create's own error is the answer, and anything not given back is found
 * by the checker (fs/fsck.c). */
static void undo_create(uint32_t dir, uint32_t ino, int parent_linked)
{
    if (parent_linked)
        bm_request(BM_INODE_LINKS, dir, -1, 0, 0, 0);
    if (bm_request(BM_TRUNCATE, ino, 0, 0, 0, 0) >= 0 && bm_request(BM_INODE_INIT, ino, FS_TYPE_FREE, 0, 0, 0) >= 0)
        free_inode(ino);
}

/* DMG_CREATE: the new inode in *value, what it is in *st. */
static long create(const char *path, int64_t type, int64_t *value, struct dm_stat *st)
{
    char parent[1024];
    const char *name;
    uint32_t dir, ino;
    struct fs_inode dir_inode;
    long err = split_path(path, parent, sizeof parent, &name);
    if (err || (type != FS_TYPE_FILE && type != FS_TYPE_DIR))
        return err ? err : E_INVAL;
    if ((err = lookup(parent, &dir, &dir_inode)))
        return err;
    if (dir_inode.type != FS_TYPE_DIR)
        return E_NOTFOUND;
    uint64_t slot;
    if ((err = find_entry(dir, &dir_inode, name, strlen(name), &slot, &ino)) != E_NOTFOUND)
        return err < 0 ? err : E_STATE;   /* the name exists */
    if (!(ino = allocate_inode(&err)))
        return err;
    /* The new inode is complete before the entry that names it is written. */
    int64_t generation = 0;
    int parent_linked = 0;   /* the parent's link count counts the new directory's ".." */
    err = bm_request(BM_INODE_INIT, ino, type, type == FS_TYPE_DIR ? 2 : 1, 0, &generation);
    if (!err && type == FS_TYPE_DIR) {
        memset(block, 0, sizeof block);
        struct fs_dirent *d = (struct fs_dirent *)block;
        d[0].inode = ino;
        strcpy(d[0].name, ".");
        d[1].inode = dir;
        strcpy(d[1].name, "..");
        err = bm_request(BM_WRITE_FILE, ino, 0, 0, 1, 0);
        if (err >= 0)
            err = bm_request(BM_SET_SIZE, ino, 2 * sizeof(struct fs_dirent), 0, 0, 0);
        if (err >= 0 && (err = bm_request(BM_INODE_LINKS, dir, 1, 0, 0, 0)) >= 0)
            parent_linked = 1;
    }
    if (err >= 0 && (err = read_inode(dir, &dir_inode)) == 0)
        err = add_entry(dir, &dir_inode, ino, name);
    if (err < 0) {
        undo_create(dir, ino, parent_linked);
        return err;
    }
    *value = ino;
    *st = (struct dm_stat){ .inode = ino, .type = (uint16_t)type, .nlink = type == FS_TYPE_DIR ? 2 : 1,
                            .size = type == FS_TYPE_DIR ? 2 * sizeof(struct fs_dirent) : 0,
                            .generation = (uint32_t)generation };
    return err < 0 ? err : 0;
}

struct emptiness { int other; };

static long note_other(const struct fs_dirent *d, uint64_t index, void *arg)
{
    (void)index;
    if (strcmp(d->name, ".") != 0 && strcmp(d->name, "..") != 0)
        ((struct emptiness *)arg)->other = 1;
    return 0;
}

/* E_STATE unless directory ino (contents *inode) holds only "." and "..". */
static long check_empty(uint32_t ino, const struct fs_inode *inode)
{
    struct emptiness e = { 0 };
    long err = each_entry(ino, inode, note_other, &e);
    return err < 0 ? err : e.other ? E_STATE : 0;
}

/* Make entry `slot` of directory dir name inode ino (0: free it). */
static long set_entry(uint32_t dir, uint64_t slot, uint32_t ino, const char *name)
{
    uint64_t n = slot / FS_DIRENTS_PER_BLOCK;
    long err = bm_read(BM_READ_FILE, dir, (int64_t)n);
    if (err < 0)
        return err;
    struct fs_dirent *d = (struct fs_dirent *)block + slot % FS_DIRENTS_PER_BLOCK;
    memset(d, 0, sizeof *d);
    if (ino) {
        d->inode = ino;
        strcpy(d->name, name);
    }
    return bm_request(BM_WRITE_FILE, dir, (int64_t)n, 0, 1, 0);
}

/* A name of inode ino (type `type`) in directory dir has just been removed:
 * drop the links it held, and free the inode and its blocks with its last. */
static long drop_name(uint32_t dir, uint32_t ino, uint16_t type)
{
    int64_t links = 0;
    int64_t drop = type == FS_TYPE_DIR ? -2 : -1;   /* its name, and a directory's own "." */
    long err = bm_request(BM_INODE_LINKS, ino, drop, 0, 0, &links);
    if (err < 0)
        return err;
    if (type == FS_TYPE_DIR && (err = bm_request(BM_INODE_LINKS, dir, -1, 0, 0, 0)) < 0)   /* its ".." */
        return err;
    if (links == 0) {
        if ((err = bm_request(BM_TRUNCATE, ino, 0, 0, 0, 0)) < 0 ||
            (err = bm_request(BM_INODE_INIT, ino, FS_TYPE_FREE, 0, 0, 0)) < 0)
            return err;
        err = free_inode(ino);
    }
    return err < 0 ? err : 0;
}

static long unlink_path(const char *path)
{
    char parent[1024];
    const char *name;
    uint32_t dir, ino;
    uint64_t slot;
    struct fs_inode dir_inode, inode;
    long err = split_path(path, parent, sizeof parent, &name);
    if (err || (err = lookup(parent, &dir, &dir_inode)))
        return err;
    if (dir_inode.type != FS_TYPE_DIR)
        return E_NOTFOUND;
    if ((err = find_entry(dir, &dir_inode, name, strlen(name), &slot, &ino)) || (err = read_inode(ino, &inode)))
        return err;
    if (inode.type == FS_TYPE_DIR && (err = check_empty(ino, &inode)))
        return err;
    /* Remove the name first, then the inode it named. */
    if ((err = set_entry(dir, slot, 0, 0)) < 0)
        return err;
    return drop_name(dir, ino, inode.type);
}

/* Is directory `ancestor` on the path from directory dir up to the root? */
static long is_ancestor(uint32_t ancestor, uint32_t dir, int *answer)
{
    *answer = 0;
    for (int depth = 0; depth < 4096; depth++) {
        if (dir == ancestor) {
            *answer = 1;
            return 0;
        }
        if (dir == FS_ROOT_INODE)
            return 0;
        struct fs_inode inode;
        uint64_t slot;
        long err = read_inode(dir, &inode);
        if (err || (err = find_entry(dir, &inode, "..", 2, &slot, &dir)))
            return err;
    }
    return E_INVAL;   /* a loop of ".." entries: the tree is damaged */
}

/* DMG_RENAME: the new name is written before the old one is removed, so a
 * crash between the two leaves a second name (the check at mount fixes the
 * link count), never a lost file. */
static long rename_path(const char *old_path, const char *new_path)
{
    char old_parent[1024], new_parent[1024];
    const char *old_name, *new_name;
    uint32_t old_dir, new_dir, ino, existing;
    uint64_t old_slot, new_slot;
    struct fs_inode old_dir_inode, new_dir_inode, inode, existing_inode;
    int inside;
    long err = split_path(old_path, old_parent, sizeof old_parent, &old_name);
    if (err || (err = split_path(new_path, new_parent, sizeof new_parent, &new_name)))
        return err;
    if ((err = lookup(old_parent, &old_dir, &old_dir_inode)) || (err = lookup(new_parent, &new_dir, &new_dir_inode)))
        return err;
    if (old_dir_inode.type != FS_TYPE_DIR || new_dir_inode.type != FS_TYPE_DIR)
        return E_NOTFOUND;
    if ((err = find_entry(old_dir, &old_dir_inode, old_name, strlen(old_name), &old_slot, &ino)) ||
        (err = read_inode(ino, &inode)))
        return err;
    if (inode.type == FS_TYPE_DIR && ((err = is_ancestor(ino, new_dir, &inside)) || inside))
        return err ? err : E_INVAL;
    err = find_entry(new_dir, &new_dir_inode, new_name, strlen(new_name), &new_slot, &existing);
    if (err && err != E_NOTFOUND)
        return err;
    if (err == 0) {   /* the new name exists: replace what it names */
        if (existing == ino)
            return 0;
        if ((err = read_inode(existing, &existing_inode)))
            return err;
        if (existing_inode.type != inode.type)
            return E_STATE;
        if (existing_inode.type == FS_TYPE_DIR && (err = check_empty(existing, &existing_inode)))
            return err;
        if ((err = set_entry(new_dir, new_slot, ino, new_name)) < 0 ||
            (err = drop_name(new_dir, existing, existing_inode.type)) < 0)
            return err;
    } else if ((err = add_entry(new_dir, &new_dir_inode, ino, new_name)) < 0) {
        return err;
    }
    if ((err = set_entry(old_dir, old_slot, 0, 0)) < 0)
        return err;
    if (inode.type == FS_TYPE_DIR && old_dir != new_dir) {   /* its ".." moves with it */
        if ((err = find_entry(ino, &inode, "..", 2, &old_slot, &existing)) ||
            (err = set_entry(ino, old_slot, new_dir, "..")) < 0 ||
            (err = bm_request(BM_INODE_LINKS, old_dir, -1, 0, 0, 0)) < 0 ||
            (err = bm_request(BM_INODE_LINKS, new_dir, 1, 0, 0, 0)) < 0)
            return err;
    }
    return 0;
}

/* One request by path (the path is ended: server_run); the answer's data
 * is a struct dm_stat or the listing's entries. */
static void handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t n,
                   struct server_answer *answer)
{
    (void)info;
    static struct fs_dirent entries[(DM_MSG_MAX - sizeof(struct sv_reply)) / sizeof(struct fs_dirent)];
    static struct dm_stat st;
    const char *path = (const char *)(q + 1);
    long status;
    int64_t value = 0;
    const void *data = 0;
    uint32_t len = 0;
    uint32_t ino;
    struct fs_inode inode;
    if (q->op < DMG_NKINDS)
        counts.requests[q->op]++;
    if (q->op == DMG_LOOKUP) {
        if ((status = lookup(path, &ino, &inode)) == 0) {
            st = stat_of(ino, &inode);
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
    } else if (q->op == DMG_CREATE) {
        if ((status = create(path, q->arg[0], &value, &st)) == 0)
            data = &st, len = sizeof st;
    } else if (q->op == DMG_UNLINK) {
        status = unlink_path(path);
    } else if (q->op == DMG_RENAME) {
        const char *second = path + strlen(path) + 1;
        status = second < (const char *)q + n ? rename_path(path, second) : E_INVAL;
    } else if (q->op == DMG_STAT) {
        uint32_t generation = FS_FILE_GENERATION(q->arg[0]);
        ino = FS_FILE_INODE(q->arg[0]);
        if ((status = read_inode(ino, &inode)) == 0 && generation && generation != stat_of(ino, &inode).generation)
            status = E_NOTFOUND;   /* removed, and the inode given to another file */
        if (status == 0) {
            st = stat_of(ino, &inode);
            value = ino, data = &st, len = sizeof st;
        }
    } else if (q->op == DMG_STATS) {
        status = 0, data = &counts, len = sizeof counts;
    } else {
        status = E_NOSYS;
    }
    answer->status = status;
    answer->value = value;
    answer->data = data;
    answer->len = len;
}

int main(void)
{
    bm = sb_lookup_wait("bm", 5000000000ull);
    block_link = dm_createlink(0, 0, LINK_READ | LINK_WRITE, block, sizeof block);
    if (bm < 0 || block_link < 0 || bm_read(BM_READ_BLOCK, 0, 0) < 0)
        return 1;
    memcpy(&superblock, block, sizeof superblock);
    server_register("dm", 0);
    server_run(handle);
}
