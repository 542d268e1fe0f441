/*
 * fsck.c — the file-system checker (fsck.h), shared by the host tool and
 * the disk interface. It runs in passes over an image opened through
 * fsimage.c: the superblock; every inode and its block pointers (claiming
 * each block for one owner); both bitmaps against those claims; the tree
 * from the root; the inodes no entry reached (to /lost+found); and last
 * every link count.
 *
 * Failures. The image layer calls check_failed() when a block cannot be
 * read or written or memory runs out; that jumps back to fsck_run
 * (longjmp), which frees what the check holds and returns the failure.
 * This keeps error paths out of every pass, and a failing check never ends
 * the process that runs it (the disk interface must go on serving).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"

/* The owner recorded for a metadata block. */
#define OWNER_METADATA UINT32_MAX

struct checker {
    struct fs_image img;      /* first, so that check_failed can find the checker */
    const struct fsck_disk *disk;
    unsigned flags;
    int repair;
    uint32_t problems;
    uint32_t unrepaired;
    uint32_t *owner;          /* per block: 0 (none), OWNER_METADATA or an inode */
    uint8_t *reached;         /* per inode: reached from the root */
    uint32_t *found;          /* per inode: entries naming it */
    char **dir_path;          /* per reached directory: its path */
    uint32_t *queue_dir;      /* the directories check_tree has still to read */
    uint32_t *queue_parent;
    uint32_t lost_found;      /* /lost+found's inode once it is known */
    jmp_buf failed;           /* where check_failed returns to */
    enum fs_image_failure failure;
    char failure_message[256];
};

/* The image layer's fail function for the checker's image: keep the
 * message and go back to fsck_run. */
static void check_failed(struct fs_image *img, enum fs_image_failure why, const char *message)
{
    struct checker *ck = (struct checker *)img;   /* img is the checker's first member */
    ck->failure = why;
    snprintf(ck->failure_message, sizeof ck->failure_message, "%s", message);
    longjmp(ck->failed, 1);
}

/* Reports one problem. `fix` says how it is repaired (said with
 * FSCK_REPAIR); NULL means it cannot be. */
static void report(struct checker *ck, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(struct checker *ck, const char *fix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t size = (size_t)(len < 0 ? 0 : len) + (fix ? strlen(fix) : 0) + sizeof " (fixed: )";
    char *line = image_calloc(&ck->img, size, 1);
    va_start(ap, fmt);
    vsnprintf(line, size, fmt, ap);
    va_end(ap);
    if (fix == NULL)
        ck->unrepaired++;
    else if (ck->repair)
        snprintf(line + strlen(line), size - strlen(line), " (fixed: %s)", fix);
    ck->disk->report(ck->disk->io.ctx, line);
    free(line);
    ck->problems++;
}

/* Pointers of one kind found wrong in one inode: how many, and the first. */
struct bad_pointers {
    uint32_t count;
    uint32_t block;           /* the first one's value */
    char what[96];            /* and what it was for */
};

/* One inode's walk over its block pointers. */
struct block_walk {
    struct checker *ck;
    uint32_t ino;
    uint64_t size;            /* the inode's size in bytes */
    uint64_t size_blocks;     /* the blocks that size covers */
    uint64_t cut;             /* blocks from here on are dropped (a block claimed twice) */
    struct bad_pointers out_of_range, past_size;   /* reported once the walk is done */
};

/* The number of file blocks a pointer at each level covers. */
static const uint64_t level_span[3] = { 1, FS_PTRS_PER_BLOCK, (uint64_t)FS_PTRS_PER_BLOCK * FS_PTRS_PER_BLOCK };

/* Counts a wrong pointer b (at `level`, covering file blocks from `first`)
 * in *bad, describing it if it is the first. */
static void note_bad_pointer(struct bad_pointers *bad, uint32_t b, int level, uint64_t first)
{
    if (bad->count++ > 0)
        return;
    bad->block = b;
    if (level == 0)
        snprintf(bad->what, sizeof bad->what, "file block %" PRIu64, first);
    else
        snprintf(bad->what, sizeof bad->what, "%s block for file blocks %" PRIu64 "-%" PRIu64,
                 level == 1 ? "indirect" : "double-indirect", first, first + level_span[level] - 1);
}

/* Whether b can be a block of a file: a data block of the disk. */
static int in_data_area(const struct fs_image *img, uint32_t b)
{
    return b >= img->sb->data_start && b < img->sb->block_count;
}

/* Checks the pointer in *slot, at `level` (0 data, 1 indirect, 2
 * double-indirect), covering file blocks from `first` on; claims the blocks
 * it leads to, and clears it when it is past the size, out of range,
 * claimed already (which cuts the file there) or after such a cut. */
static void check_pointer(struct block_walk *w, struct pointer_slot *slot, int level, uint64_t first)
{
    struct checker *ck = w->ck;
    struct fs_image *img = &ck->img;
    uint32_t b = *slot->ptr;
    char fix[64];

    if (b == 0)
        return;
    if (first >= w->cut) {
        slot_set(img, w->ino, slot, 0);
        return;
    }
    if (first >= w->size_blocks || !in_data_area(img, b)) {
        note_bad_pointer(first >= w->size_blocks ? &w->past_size : &w->out_of_range, b, level, first);
        slot_set(img, w->ino, slot, 0);
        return;
    }
    if (ck->owner[b] != 0) {
        uint64_t kept = first * FS_BLOCK_SIZE < w->size ? first * FS_BLOCK_SIZE : w->size;
        snprintf(fix, sizeof fix, "file cut to %" PRIu64 " bytes", kept);
        report(ck, fix, "inode %" PRIu32 ": block %" PRIu32 " also used by inode %" PRIu32,
               w->ino, b, ck->owner[b]);
        w->cut = first;
        slot_set(img, w->ino, slot, 0);
        return;
    }
    ck->owner[b] = w->ino;
    if (level > 0) {
        struct cached_block *table = cache_get(img, b);
        for (uint32_t i = 0; i < FS_PTRS_PER_BLOCK; i++) {
            struct pointer_slot s = { (uint32_t *)table->data + i, table };
            check_pointer(w, &s, level - 1, first + i * level_span[level - 1]);
        }
        /* A cut at or before the first block this table covers (one of its
         * own pointers was claimed already, the table itself perhaps) leaves
         * it nothing to point to: it goes too, or it would lie past the size
         * the cut sets and the next check would release it. */
        if (first >= w->cut) {
            ck->owner[b] = 0;
            slot_set(img, w->ino, slot, 0);
        }
    }
}

/* Reports the pointers a walk found out of range or past the size, one
 * line for each kind. */
static void report_bad_pointers(struct block_walk *w)
{
    const struct bad_pointers *range = &w->out_of_range, *past = &w->past_size;
    if (range->count == 1)
        report(w->ck, "pointer cleared, leaving a hole", "inode %" PRIu32 ": block %" PRIu32 " out of range (%s)",
               w->ino, range->block, range->what);
    else if (range->count > 1)
        report(w->ck, "pointers cleared, leaving holes", "inode %" PRIu32 ": %" PRIu32 " block pointers out of "
               "range (the first: block %" PRIu32 ", %s)", w->ino, range->count, range->block, range->what);
    if (past->count == 1)
        report(w->ck, "released", "inode %" PRIu32 ": block %" PRIu32 " lies past the size %" PRIu64 " (%s)",
               w->ino, past->block, w->size, past->what);
    else if (past->count > 1)
        report(w->ck, "released", "inode %" PRIu32 ": %" PRIu32 " blocks lie past the size %" PRIu64
               " (the first: block %" PRIu32 ", %s)", w->ino, past->count, w->size, past->block, past->what);
}

/* A directory grows an entry at a time, so its size never reaches past its
 * last block unless the inode is damaged; holes there read as free entries,
 * but every walk over the directory (the directory manager's too) would
 * cross them. The size is cut to the end of its last block, and indirect
 * blocks that then cover nothing are released with it. Runs after the
 * block walk, which left only pointers in range and nothing past the size. */
static void check_directory_end(struct checker *ck, uint32_t ino, struct fs_inode *ip)
{
    const uint64_t twice = FS_NDIRECT + FS_PTRS_PER_BLOCK;   /* the first block under the double-indirect */
    struct fs_image *img = &ck->img;
    uint64_t blocks = (ip->size + FS_BLOCK_SIZE - 1) / FS_BLOCK_SIZE, end = 0;
    char fix[64];

    for (uint64_t b = file_next_block(img, ino, 0); b < blocks; b = file_next_block(img, ino, b + 1))
        end = b + 1;
    if (ip->size <= end * FS_BLOCK_SIZE)
        return;
    snprintf(fix, sizeof fix, "size cut to %" PRIu64, end * FS_BLOCK_SIZE);
    report(ck, fix, "inode %" PRIu32 ": directory size %" PRIu64 " reaches past its last block (it covers %" PRIu64
           " blocks, the last %" PRIu64 " are holes)", ino, ip->size, blocks, blocks - end);
    ip->size = end * FS_BLOCK_SIZE;
    inode_changed(img, ino);
    if (ip->double_indirect) {
        struct cached_block *top = cache_get(img, ip->double_indirect);
        for (uint32_t k = 0; k < FS_PTRS_PER_BLOCK; k++) {
            struct pointer_slot slot = { (uint32_t *)top->data + k, top };
            if (*slot.ptr && twice + (uint64_t)k * FS_PTRS_PER_BLOCK >= end) {
                ck->owner[*slot.ptr] = 0;
                slot_set(img, ino, &slot, 0);
            }
        }
    }
    struct pointer_slot single = { &ip->indirect, NULL }, double_slot = { &ip->double_indirect, NULL };
    if (ip->double_indirect && end <= twice) {
        ck->owner[ip->double_indirect] = 0;
        slot_set(img, ino, &double_slot, 0);
    }
    if (ip->indirect && end <= FS_NDIRECT) {
        ck->owner[ip->indirect] = 0;
        slot_set(img, ino, &single, 0);
    }
}

/* Pass 2: every inode's type, size and block pointers; fills ck->owner. */
static void check_inodes(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    char fix[64];

    for (uint32_t ino = 0; ino < img->sb->inode_count; ino++) {
        struct fs_inode *ip = inode_at(img, ino);
        if (ino == FS_ROOT_INODE && ip->type != FS_TYPE_DIR) {
            report(ck, "made a directory again, keeping its blocks", "inode %u: the root is not a directory "
                   "(type %u)", FS_ROOT_INODE, ip->type);
            ip->type = FS_TYPE_DIR;
            inode_changed(img, ino);
        }
        if (ip->type == FS_TYPE_FREE)
            continue;
        if (ino == 0 || (ip->type != FS_TYPE_FILE && ip->type != FS_TYPE_DIR)) {
            if (ino == 0)
                report(ck, "cleared", "inode 0: the reserved inode is in use (type %u)", ip->type);
            else
                report(ck, "inode freed", "inode %" PRIu32 ": unknown type %u", ino, ip->type);
            memset(ip, 0, sizeof *ip);
            inode_changed(img, ino);
            continue;
        }
        if (ip->size > FS_MAX_FILE_SIZE) {
            snprintf(fix, sizeof fix, "size set to %" PRIu64, (uint64_t)FS_MAX_FILE_SIZE);
            report(ck, fix, "inode %" PRIu32 ": size %" PRIu64 " is larger than the largest file", ino, ip->size);
            ip->size = FS_MAX_FILE_SIZE;
            inode_changed(img, ino);
        }
        if (ip->type == FS_TYPE_DIR && ip->size % DIRENT_SIZE != 0) {
            snprintf(fix, sizeof fix, "size rounded down to %" PRIu64, ip->size / DIRENT_SIZE * DIRENT_SIZE);
            report(ck, fix, "inode %" PRIu32 ": directory size %" PRIu64 " is not a multiple of %" PRIu32,
                   ino, ip->size, DIRENT_SIZE);
            ip->size = ip->size / DIRENT_SIZE * DIRENT_SIZE;
            inode_changed(img, ino);
        }
        struct block_walk w = { ck, ino, ip->size, (ip->size + FS_BLOCK_SIZE - 1) / FS_BLOCK_SIZE, UINT64_MAX,
                                { 0, 0, "" }, { 0, 0, "" } };
        for (uint32_t i = 0; i < FS_NDIRECT; i++) {
            struct pointer_slot s = { &ip->direct[i], NULL };
            check_pointer(&w, &s, 0, i);
        }
        struct pointer_slot single = { &ip->indirect, NULL }, twice = { &ip->double_indirect, NULL };
        check_pointer(&w, &single, 1, FS_NDIRECT);
        check_pointer(&w, &twice, 2, FS_NDIRECT + FS_PTRS_PER_BLOCK);
        report_bad_pointers(&w);
        if (w.cut != UINT64_MAX && ip->size > w.cut * FS_BLOCK_SIZE) {
            ip->size = w.cut * FS_BLOCK_SIZE;
            inode_changed(img, ino);
        }
        if (ip->type == FS_TYPE_DIR)
            check_directory_end(ck, ino, ip);
    }
}

/* Compares one bitmap with what it should hold (want[i] for i < count),
 * reporting each run of wrong bits, and corrects it in memory. */
static void check_bitmap(struct checker *ck, uint8_t *map, uint32_t count, const char *kind, const uint8_t *want)
{
    uint32_t i = 0;
    while (i < count) {
        int have = bit_test(map, i);
        if (have == want[i]) {
            i++;
            continue;
        }
        uint32_t start = i;
        while (i < count && bit_test(map, i) == have && want[i] != have)
            i++;
        const char *marked = have ? "in use" : "free", *really = have ? "free" : "in use";
        if (i - start == 1)
            report(ck, have ? "bit cleared" : "bit set", "%s bitmap: %s %" PRIu32 " marked %s but %s",
                   kind, kind, start, marked, really);
        else
            report(ck, have ? "bits cleared" : "bits set", "%s bitmap: %ss %" PRIu32 "-%" PRIu32 " marked %s but %s",
                   kind, kind, start, i - 1, marked, really);
        for (uint32_t j = start; j < i; j++)
            bit_set(&ck->img, map, j, !have);
    }
}

/* Pass 3: both bitmaps against the blocks claimed and the inodes in use;
 * afterwards they agree, so blocks and inodes can be allocated. */
static void check_bitmaps(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    uint32_t blocks = img->sb->block_count, inodes = img->sb->inode_count;
    uint8_t *want = image_calloc(&ck->img, blocks > inodes ? blocks : inodes, 1);

    for (uint32_t i = 0; i < inodes; i++)
        want[i] = i == 0 || img->inodes[i].type != FS_TYPE_FREE;
    check_bitmap(ck, img->inode_bitmap, inodes, "inode", want);
    for (uint32_t b = 0; b < blocks; b++)
        want[b] = ck->owner[b] != 0;
    check_bitmap(ck, img->block_bitmap, blocks, "block", want);
    free(want);
    count_free(img);
}

/* A set of the names seen in one directory (open addressing). */
struct name_set {
    char (*names)[FS_NAME_MAX + 1];
    uint32_t capacity;        /* a power of two */
    uint32_t used;
};

/* FNV-1a hash of a name, for name_set. */
static uint32_t name_hash(const char *name)
{
    uint32_t h = 2166136261u;
    for (; *name; name++)
        h = (h ^ (uint8_t)*name) * 16777619u;
    return h;
}

/* Adds name to the set; returns 1 if it was there already. */
static int name_set_add(struct checker *ck, struct name_set *set, const char *name)
{
    if ((set->used + 1) * 2 > set->capacity) {
        struct name_set bigger = { NULL, set->capacity ? set->capacity * 2 : 64, 0 };
        bigger.names = image_calloc(&ck->img, bigger.capacity, sizeof bigger.names[0]);
        for (uint32_t i = 0; i < set->capacity; i++)
            if (set->names[i][0])
                name_set_add(ck, &bigger, set->names[i]);
        free(set->names);
        *set = bigger;
    }
    uint32_t i = name_hash(name) & (set->capacity - 1);
    while (set->names[i][0]) {
        if (strcmp(set->names[i], name) == 0)
            return 1;
        i = (i + 1) & (set->capacity - 1);
    }
    strcpy(set->names[i], name);
    set->used++;
    return 0;
}

/* Room for a name shown by shown_name(). */
#define SHOWN_NAME_SIZE (4 * (FS_NAME_MAX + 1) + 1)

/* A name from a directory entry made safe to print in a report: read up to
 * its NUL (or all FS_NAME_MAX + 1 bytes), with every byte outside printable
 * ASCII (and the backslash) written as \xNN. Returns out. */
static const char *shown_name(const char *name, char out[SHOWN_NAME_SIZE])
{
    char *o = out;
    for (size_t i = 0; i < FS_NAME_MAX + 1 && name[i]; i++) {
        uint8_t c = (uint8_t)name[i];
        if (c < 0x20 || c >= 0x7f || c == '\\')
            o += sprintf(o, "\\x%02x", c);
        else
            *o++ = (char)c;
    }
    *o = 0;
    return out;
}

/* Rewrites entry `index` of directory d; reports whether that worked. */
static const char *rewrite_entry(struct checker *ck, uint32_t d, uint32_t index, uint32_t ino, const char *name,
                                 const char *fix)
{
    struct fs_dirent de;
    if (ino)
        dirent_make(&de, ino, name);
    else
        memset(&de, 0, sizeof de);
    return dir_write(&ck->img, d, index, &de) == 0 ? fix : NULL;
}

/* Checks entry `index` of directory d, which must be `name` naming `want`
 * ('.' or '..'), and rewrites it if it is not. */
static void check_dot_entry(struct checker *ck, uint32_t d, uint32_t index, const char *name, uint32_t want)
{
    struct fs_dirent de;
    const char *path = ck->dir_path[d];
    char shown[SHOWN_NAME_SIZE];

    dir_read(&ck->img, d, index, &de);
    if (dirent_is(&de, name) && de.inode == want)
        return;
    const char *fix = rewrite_entry(ck, d, index, want, name, "entry rewritten");
    if (dirent_is(&de, name))
        report(ck, fix, "directory %s (inode %" PRIu32 "): '%s' names inode %" PRIu32 ", should name %" PRIu32,
               path, d, name, de.inode, want);
    else if (de.inode == 0)
        report(ck, fix, "directory %s (inode %" PRIu32 "): entry %" PRIu32 " should be '%s', is free",
               path, d, index, name);
    else
        report(ck, fix, "directory %s (inode %" PRIu32 "): entry %" PRIu32 " should be '%s', is '%s'",
               path, d, index, name, shown_name(de.name, shown));
}

/* Why the name of an entry after '.' and '..' is bad, or NULL if it is good. */
static const char *bad_name(const struct fs_dirent *de)
{
    if (memchr(de->name, 0, sizeof de->name) == NULL)
        return "name not NUL-terminated";
    if (de->name[0] == 0)
        return "empty name";
    if (strcmp(de->name, ".") == 0 || strcmp(de->name, "..") == 0)
        return "misplaced '.' or '..'";
    if (strchr(de->name, '/'))
        return "name contains '/'";
    return NULL;
}

/* The bad entries of one directory reported one by one; more are counted
 * and reported in one line, so that a damaged block read as a directory
 * does not bury the report. */
#define BAD_ENTRIES_SHOWN 10

/* What check_directory knows while it reads one directory's entries. */
struct directory_check {
    uint32_t d;               /* the directory */
    struct name_set names;    /* the names seen so far */
    uint32_t bad;             /* bad entries removed so far */
    uint32_t *tail;           /* where check_tree's queue ends */
};

/* Why entry *de of a directory is bad, written to why; or 0 if it is good. */
static int bad_entry(struct checker *ck, struct directory_check *dc, const struct fs_dirent *de, uint32_t i,
                     char *why, size_t len)
{
    struct fs_image *img = &ck->img;
    char name[SHOWN_NAME_SIZE];
    const char *bad = bad_name(de);

    shown_name(de->name, name);
    if (bad)
        snprintf(why, len, "entry %" PRIu32 ": %s", i, bad);
    else if (de->inode >= img->sb->inode_count)
        snprintf(why, len, "entry '%s' names inode %" PRIu32 ", out of range", name, de->inode);
    else if (img->inodes[de->inode].type == FS_TYPE_FREE)
        snprintf(why, len, "entry '%s' names free inode %" PRIu32, name, de->inode);
    else if (name_set_add(ck, &dc->names, de->name))
        snprintf(why, len, "duplicate name '%s'", name);
    else if (img->inodes[de->inode].type == FS_TYPE_DIR && ck->reached[de->inode])
        snprintf(why, len, "entry '%s' names directory inode %" PRIu32 ", already reachable as %s", name,
                 de->inode, ck->dir_path[de->inode]);
    else
        return 0;
    return 1;
}

/* Checks entry i (after '.' and '..') of a directory: removes a bad one;
 * else marks what it names reached and counts the link, and queues a
 * directory not reached before. */
static void check_entry(struct checker *ck, struct directory_check *dc, uint32_t i)
{
    struct fs_dirent de;
    char why[SHOWN_NAME_SIZE + 200], name[SHOWN_NAME_SIZE];

    dir_read(&ck->img, dc->d, i, &de);
    if (de.inode == 0)
        return;
    if (bad_entry(ck, dc, &de, i, why, sizeof why)) {
        const char *fix = rewrite_entry(ck, dc->d, i, 0, NULL, "entry removed");
        if (dc->bad++ < BAD_ENTRIES_SHOWN)
            report(ck, fix, "directory %s (inode %" PRIu32 "): %s", ck->dir_path[dc->d], dc->d, why);
        return;
    }
    if (ck->img.inodes[de.inode].type == FS_TYPE_DIR) {
        free(ck->dir_path[de.inode]);
        ck->dir_path[de.inode] = path_join(&ck->img, ck->dir_path[dc->d], shown_name(de.name, name));
        ck->queue_dir[*dc->tail] = de.inode;
        ck->queue_parent[(*dc->tail)++] = dc->d;
    }
    ck->reached[de.inode] = 1;
    ck->found[de.inode]++;
}

/* Checks directory d, reached from directory parent: '.' and '..', then
 * every entry. */
static void check_directory(struct checker *ck, uint32_t d, uint32_t parent, uint32_t *tail)
{
    struct fs_image *img = &ck->img;
    struct fs_inode *ip = inode_at(img, d);
    struct directory_check dc = { d, { NULL, 0, 0 }, 0, tail };

    if (ip->size < 2 * DIRENT_SIZE) {
        uint64_t size = ip->size;
        const char *fix = rewrite_entry(ck, d, 0, d, ".", "'.' and '..' written");
        if (fix)
            fix = rewrite_entry(ck, d, 1, parent, "..", fix);
        report(ck, fix, "directory %s (inode %" PRIu32 "): too small to hold '.' and '..' (size %" PRIu64 ")",
               ck->dir_path[d], d, size);
        if (fix == NULL)
            return;
        ip->size = 2 * DIRENT_SIZE;
        inode_changed(img, d);
    }
    check_dot_entry(ck, d, 0, ".", d);
    check_dot_entry(ck, d, 1, "..", parent);
    ck->found[d]++;
    ck->found[parent]++;
    for (uint32_t i = 2; i < dir_count(img, d); i = dir_next(img, d, i))
        check_entry(ck, &dc, i);
    if (dc.bad > BAD_ENTRIES_SHOWN)
        report(ck, "entries removed", "directory %s (inode %" PRIu32 "): %" PRIu32 " more bad entries",
               ck->dir_path[d], d, dc.bad - BAD_ENTRIES_SHOWN);
    free(dc.names.names);
}

/* Walks the tree from directory top (its parent is `parent`, its path
 * `path`), breadth first, checking every directory reached. */
static void check_tree(struct checker *ck, uint32_t top, uint32_t parent, const char *path)
{
    uint32_t head = 0, tail = 0;
    ck->reached[top] = 1;
    free(ck->dir_path[top]);
    ck->dir_path[top] = image_strdup(&ck->img, path);
    ck->queue_dir[tail] = top;
    ck->queue_parent[tail++] = parent;
    while (head < tail) {
        check_directory(ck, ck->queue_dir[head], ck->queue_parent[head], &tail);
        head++;
    }
}

/* /lost+found's inode, made if missing; 0 when it cannot be had. */
static uint32_t lost_and_found(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    if (ck->lost_found)
        return ck->lost_found;
    uint32_t ino = dir_lookup(img, FS_ROOT_INODE, "lost+found", NULL);
    if (ino == 0) {
        ino = dir_create(img, FS_ROOT_INODE, "lost+found");
        if (ino == 0)
            return 0;
        ck->reached[ino] = 1;
        ck->dir_path[ino] = image_strdup(&ck->img, "/lost+found");
    } else if (inode_at(img, ino)->type != FS_TYPE_DIR) {
        return 0;
    }
    ck->lost_found = ino;
    return ino;
}

/* Points the '..' of orphan directory d at its new parent, moving the link
 * count that '..' made from the old parent (if that is a directory) to the
 * new one, so that the move itself is not later reported as a wrong nlink. */
static void move_dotdot(struct checker *ck, uint32_t d, uint32_t parent)
{
    struct fs_image *img = &ck->img;
    struct fs_dirent de;

    dir_read(img, d, 1, &de);
    if (dirent_is(&de, "..") && de.inode < img->sb->inode_count && img->inodes[de.inode].type == FS_TYPE_DIR &&
        img->inodes[de.inode].nlink > 0) {
        img->inodes[de.inode].nlink--;
        inode_changed(img, de.inode);
    }
    rewrite_entry(ck, d, 1, parent, "..", NULL);
    inode_at(img, parent)->nlink++;
    inode_changed(img, parent);
}

/* Links orphan inode ino into /lost+found as #INODE (a directory's '..'
 * then names /lost+found, and its tree is checked), or frees it when that
 * cannot be done. */
static void link_orphan(struct checker *ck, uint32_t ino)
{
    struct fs_image *img = &ck->img;
    struct fs_inode *ip = inode_at(img, ino);
    char name[FS_NAME_MAX + 1], fix[96];
    uint32_t lf = lost_and_found(ck);

    snprintf(name, sizeof name, "#%" PRIu32, ino);
    for (uint32_t k = 2; lf && dir_lookup(img, lf, name, NULL) != 0; k++)
        snprintf(name, sizeof name, "#%" PRIu32 ".%" PRIu32, ino, k);
    if (lf == 0 || dir_add(img, lf, name, ino) != 0) {
        report(ck, "inode and its blocks freed: no room in /lost+found",
               "inode %" PRIu32 ": in use but not reachable from the root", ino);
        inode_blocks(img, ip, ino, 1);
        inode_free(img, ino);
        return;
    }
    snprintf(fix, sizeof fix, "linked as /lost+found/%s", name);
    report(ck, fix, "inode %" PRIu32 ": in use but not reachable from the root", ino);
    if (ip->type == FS_TYPE_DIR) {
        char *path = path_join(&ck->img, "/lost+found", name);
        if (dir_count(img, ino) >= 2)
            move_dotdot(ck, ino, lf);
        check_tree(ck, ino, lf, path);
        free(path);
    } else {
        ck->reached[ino] = 1;
    }
}

/* Pass 5: links every inode in use that was not reached into /lost+found,
 * those no unreached directory names first (the tops of lost subtrees). */
static void check_orphans(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    uint32_t inodes = img->sb->inode_count;
    uint8_t *named = image_calloc(&ck->img, inodes, 1);
    struct fs_dirent de;

    for (uint32_t ino = 1; ino < inodes; ino++) {
        if (ck->reached[ino] || img->inodes[ino].type != FS_TYPE_DIR)
            continue;
        for (uint32_t i = 2; i < dir_count(img, ino); i = dir_next(img, ino, i)) {
            dir_read(img, ino, i, &de);
            if (de.inode < inodes)
                named[de.inode] = 1;
        }
    }
    for (int round = 0; round < 2; round++)
        for (uint32_t ino = 1; ino < inodes; ino++)
            if (!ck->reached[ino] && img->inodes[ino].type != FS_TYPE_FREE && (round == 1 || !named[ino]))
                link_orphan(ck, ino);
    free(named);
}

/* Pass 6: counts the entries naming each inode over the repaired tree and
 * sets every nlink that differs. */
static void check_links(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    uint32_t inodes = img->sb->inode_count;
    char fix[48];

    memset(ck->reached, 0, inodes);
    memset(ck->found, 0, inodes * sizeof ck->found[0]);
    check_tree(ck, FS_ROOT_INODE, FS_ROOT_INODE, "/");
    for (uint32_t ino = 1; ino < inodes; ino++) {
        struct fs_inode *ip = inode_at(img, ino);
        if (ip->type == FS_TYPE_FREE || !ck->reached[ino] || ip->nlink == ck->found[ino])
            continue;
        snprintf(fix, sizeof fix, "nlink set to %" PRIu32, ck->found[ino]);
        report(ck, ck->found[ino] <= UINT16_MAX ? fix : NULL, "inode %" PRIu32 ": nlink %u, should be %" PRIu32,
               ino, ip->nlink, ck->found[ino]);
        if (ck->found[ino] <= UINT16_MAX) {
            ip->nlink = (uint16_t)ck->found[ino];
            inode_changed(img, ino);
        }
    }
}

/* Pass 1: the superblock. Returns -1 (reported) if it cannot be trusted:
 * nothing else can be checked then. */
static int check_superblock(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    struct fs_superblock sb;
    char why[200];

    memset(&sb, 0, sizeof sb);
    if (ck->disk->size >= FS_BLOCK_SIZE) {
        uint8_t *block = image_calloc(img, 1, FS_BLOCK_SIZE);
        block_read(img, 0, block);
        memcpy(&sb, block, sizeof sb);
        free(block);
    }
    if (superblock_fault(&sb, ck->disk->size, why, sizeof why) != 0) {
        report(ck, NULL, "%s", why);
        return -1;
    }
    image_load(img, &sb);
    if (img->sb->root_inode != FS_ROOT_INODE) {
        report(ck, "set to 1", "superblock: root_inode is %" PRIu32 ", should be %u", img->sb->root_inode,
               FS_ROOT_INODE);
        img->sb->root_inode = FS_ROOT_INODE;
        meta_changed(img, img->sb, sizeof *img->sb);
    }
    if (img->sb->state != FS_STATE_CLEAN && !(ck->flags & FSCK_AT_MOUNT)) {
        if (img->sb->state == FS_STATE_MOUNTED)
            report(ck, "set to CLEAN", "superblock: state is MOUNTED (not cleanly unmounted, or in use)");
        else
            report(ck, "set to CLEAN", "superblock: state is %" PRIu32 ", neither CLEAN nor MOUNTED", img->sb->state);
        img->sb->state = FS_STATE_CLEAN;
        meta_changed(img, img->sb, sizeof *img->sb);
    }
    return 0;
}

/* Every pass, then the repairs to the disk. */
static void check_all(struct checker *ck)
{
    struct fs_image *img = &ck->img;
    if (check_superblock(ck) != 0)
        return;
    ck->owner = image_calloc(img, img->sb->block_count, sizeof ck->owner[0]);
    ck->reached = image_calloc(img, img->sb->inode_count, 1);
    ck->found = image_calloc(img, img->sb->inode_count, sizeof ck->found[0]);
    ck->dir_path = image_calloc(img, img->sb->inode_count, sizeof ck->dir_path[0]);
    ck->queue_dir = image_calloc(img, img->sb->inode_count, sizeof ck->queue_dir[0]);
    ck->queue_parent = image_calloc(img, img->sb->inode_count, sizeof ck->queue_parent[0]);
    for (uint32_t b = 0; b < img->sb->data_start; b++)
        ck->owner[b] = OWNER_METADATA;

    check_inodes(ck);
    check_bitmaps(ck);
    check_tree(ck, FS_ROOT_INODE, FS_ROOT_INODE, "/");
    check_orphans(ck);
    check_links(ck);
    if (ck->repair && ck->problems > 0)
        image_commit(img);
}

/* What the check found, into *result. */
static void fill_result(struct checker *ck, struct fsck_result *result)
{
    struct fs_image *img = &ck->img;
    memset(result, 0, sizeof *result);
    result->problems = ck->problems;
    result->unrepaired = ck->unrepaired;
    if (img->sb == NULL)
        return;
    for (uint32_t ino = 1; ino < img->sb->inode_count; ino++) {
        result->files += img->inodes[ino].type == FS_TYPE_FILE;
        result->directories += img->inodes[ino].type == FS_TYPE_DIR;
    }
    result->block_count = img->sb->block_count;
    result->blocks_used = img->sb->block_count - img->free_blocks;
    result->inode_count = img->sb->inode_count - 1;
    result->inodes_used = img->sb->inode_count - 1 - img->free_inodes;
}

/* Frees everything the check holds. */
static void checker_free(struct checker *ck)
{
    if (ck->dir_path)
        for (uint32_t ino = 0; ino < ck->img.sb->inode_count; ino++)
            free(ck->dir_path[ino]);
    free(ck->dir_path);
    free(ck->owner);
    free(ck->reached);
    free(ck->found);
    free(ck->queue_dir);
    free(ck->queue_parent);
    image_free(&ck->img);
    free(ck);
}

int fsck_run(const struct fsck_disk *disk, unsigned flags, struct fsck_result *result)
{
    /* On the heap, not in this frame: what the passes change survives the
     * longjmp of a failure (C11 7.13.2.1 leaves changed locals indeterminate). */
    struct checker *ck = calloc(1, sizeof *ck);
    if (ck == NULL) {
        memset(result, 0, sizeof *result);
        result->failure = FS_IMAGE_NO_MEMORY;
        snprintf(result->failure_message, sizeof result->failure_message, "out of memory (%zu bytes)", sizeof *ck);
        return -1;
    }
    ck->disk = disk;
    ck->flags = flags;
    ck->repair = (flags & FSCK_REPAIR) != 0;
    ck->img.name = disk->name;
    ck->img.io = &disk->io;
    ck->img.fail = check_failed;
    int status = 0;
    if (setjmp(ck->failed) == 0) {
        check_all(ck);
        fill_result(ck, result);
    } else {
        memset(result, 0, sizeof *result);
        result->failure = ck->failure;
        memcpy(result->failure_message, ck->failure_message, sizeof result->failure_message);
        status = -1;
    }
    checker_free(ck);
    return status;
}
