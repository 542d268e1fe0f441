/*
 * dmfs.c — the host tool for DEMOS/MP file-system disk images: make an image
 * holding given files, list it, copy files out of it and into it, and check
 * and repair it (issue 3). The on-disk format is fs/fsformat.h and nothing
 * else; `dmfs --help` documents the commands, exit statuses and the repair
 * policy.
 *
 * How changes are made. An image is opened by reading its superblock, both
 * bitmaps and the inode table (all blocks before data_start) into memory;
 * directory and indirect blocks are read through a block cache. Every
 * change is made in memory; only file data is written straight to the image,
 * and only into blocks that were free. image_commit() then writes the
 * changed cached blocks, the changed metadata blocks and last the
 * superblock. Any error before the commit therefore leaves the image as it
 * was: errors print `dmfs: ...` and exit at once.
 *
 * `check` makes its repairs the same way in both modes and commits them only
 * with --repair, so a plain check reports exactly what --repair would fix.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsformat.h"

/* Exit statuses (see EXIT STATUS in the help text). */
enum {
    STATUS_OK = 0,       /* done; check: the image is clean */
    STATUS_FAILED = 1,   /* the operation failed; check: problems found */
    STATUS_ERROR = 2,    /* bad usage, or an image or host file unreadable */
};

#define DIRENT_SIZE ((uint32_t)sizeof(struct fs_dirent))

static const char help_text[] =
"NAME\n"
"    dmfs - make, list, read, change and check DEMOS/MP file-system images\n"
"\n"
"SYNOPSIS\n"
"    dmfs mkfs [--force] [--inodes N] IMAGE SIZE_MB [HOSTFILE[=PATH] ...]\n"
"    dmfs ls [-l] [-R] IMAGE [PATH]\n"
"    dmfs get IMAGE PATH [HOSTFILE]\n"
"    dmfs put IMAGE HOSTFILE PATH\n"
"    dmfs mkdir IMAGE PATH\n"
"    dmfs rm IMAGE PATH\n"
"    dmfs check [--repair] IMAGE\n"
"    dmfs --help\n"
"\n"
"DESCRIPTION\n"
"    An IMAGE is a host file holding a whole file system in the format of\n"
"    fs/fsformat.h, to attach to a node as its disk (make run DISK=IMAGE).\n"
"    A PATH inside the image names directories from the root, separated by\n"
"    '/' (a leading '/' is optional); a name is 1 to 59 bytes. Options may\n"
"    come anywhere after the command; '--' ends them.\n"
"\n"
"COMMANDS\n"
"    mkfs [--force] [--inodes N] IMAGE SIZE_MB [HOSTFILE[=PATH] ...]\n"
"        Create IMAGE, SIZE_MB MiB long (256 blocks of 4096 bytes per MiB),\n"
"        with an empty root directory, then copy each HOSTFILE in as PATH\n"
"        (default: /BASENAME; the last '=' separates HOSTFILE from PATH).\n"
"        Missing parent directories of a PATH are made. --inodes N sets the\n"
"        number of inodes, rounded up to a multiple of 32 (default: one per\n"
"        16 KiB of image, at most 1048576; inode 0 is reserved). An existing\n"
"        IMAGE is refused unless --force is given. The image is built under\n"
"        a temporary name and renamed to IMAGE only when it is complete, so\n"
"        a failure leaves no half-made image and an old IMAGE untouched.\n"
"\n"
"    ls [-l] [-R] IMAGE [PATH]\n"
"        List directory PATH (default: the root), one name a line, sorted,\n"
"        without '.' and '..'. A PATH naming a file lists that file.\n"
"        -l  columns: type (file or dir), inode, nlink, size in bytes, name.\n"
"        -R  every entry below PATH, depth first, each by its full path.\n"
"\n"
"    get IMAGE PATH [HOSTFILE]\n"
"        Copy file PATH out to HOSTFILE, or to standard output. This is how\n"
"        a trace log leaves a node's disk.\n"
"\n"
"    put IMAGE HOSTFILE PATH\n"
"        Copy HOSTFILE in as file PATH, replacing PATH's contents if it\n"
"        exists. PATH's parent directory must exist. Free blocks and inodes\n"
"        are counted first: a file that does not fit is refused with\n"
"        \"image full\" and the image is left as it was. A replaced file's\n"
"        old blocks are freed only after the new contents are written,\n"
"        unless the new contents fit only in the old blocks.\n"
"\n"
"    mkdir IMAGE PATH\n"
"        Make directory PATH; its parent must exist.\n"
"\n"
"    rm IMAGE PATH\n"
"        Remove file PATH, or directory PATH if it is empty.\n"
"\n"
"    check [--repair] IMAGE\n"
"        Check the whole file system; print each problem on its own line,\n"
"        `dmfs: IMAGE: what is wrong`, then a summary line. Without\n"
"        --repair the image is opened read-only and nothing is changed; the\n"
"        problems reported are exactly those --repair would fix. With\n"
"        --repair, fix what can be fixed (each line then ends with\n"
"        `(fixed: how)`); a second check of a repaired image is clean.\n"
"        Pointers out of range and blocks past the size are reported once\n"
"        per inode, with a count; after 10 bad entries in one directory,\n"
"        the rest are counted in one line.\n"
"\n"
"WHAT CHECK CHECKS\n"
"    The superblock: magic, version, a layout that is exactly what\n"
"    fs_layout() gives for its block and inode counts, an image file long\n"
"    enough, root_inode, and state (MOUNTED means the file system was not\n"
"    cleanly unmounted). Every inode: its type; no block pointer outside\n"
"    the data blocks; no block past its size (holes are allowed); a\n"
"    directory's size a multiple of 64. Every block used by exactly one\n"
"    owner (the metadata or one inode's data or indirect blocks), and the\n"
"    block bitmap marking exactly those; the inode bitmap marking exactly\n"
"    inode 0 and the inodes in use. The tree: every directory starts with\n"
"    '.' (itself) and '..' (its parent; the root's is itself); every name is\n"
"    NUL-terminated, non-empty, free of '/', not a misplaced '.' or '..', and\n"
"    unique in its directory; every entry names an inode in use; no\n"
"    directory is reachable twice; every inode in use is reachable from the\n"
"    root; every nlink equals the number of entries naming the inode (for a\n"
"    directory: its entry in its parent, its '.' and its subdirectories'\n"
"    '..').\n"
"\n"
"REPAIR POLICY\n"
"    Not repairable: a bad magic, version or layout, or an image file too\n"
"    short (nothing is written then). Everything else is repaired:\n"
"    - state is set to CLEAN, root_inode to 1;\n"
"    - a root inode that is not a directory is made one again, keeping its\n"
"      blocks (the checks below then rebuild what they can);\n"
"    - an inode of unknown type is freed;\n"
"    - a pointer out of range is cleared (the file gets a hole);\n"
"    - a block past the size is released;\n"
"    - a block claimed twice stays with its first owner (the lower inode,\n"
"      or the earlier place in the same file); the second file is cut\n"
"      where that block starts and loses its later blocks;\n"
"    - both bitmaps are rebuilt from what the inodes use;\n"
"    - a wrong or missing '.' or '..' is rewritten;\n"
"    - a bad entry (bad name, duplicate name, free or out-of-range inode,\n"
"      a directory already reached elsewhere) is removed;\n"
"    - an inode in use that cannot be reached is linked into /lost+found\n"
"      (made when needed) as #INODE, a directory's '..' pointing there; if\n"
"      /lost+found cannot be made or grown (image full, or the name taken\n"
"      by a file) the inode and its blocks are freed instead;\n"
"    - nlink is set to the number of entries naming the inode.\n"
"\n"
"FORMAT CONVENTIONS\n"
"    Beyond fs/fsformat.h, dmfs assumes: bit i of a bitmap is bit i % 8 of\n"
"    byte i / 8; bit 0 of the inode bitmap is set (inode 0 reserved); bits\n"
"    past block_count or inode_count are ignored; a directory's size is a\n"
"    multiple of 64 and it grows one entry at a time, a new entry taking\n"
"    the first free one after '.' and '..'.\n"
"\n"
"SAFETY\n"
"    Changes are made in memory and written at the end (file data first,\n"
"    into free blocks), so an error leaves the image as it was. The image\n"
"    must not be in use by a running node: put, mkdir and rm refuse an\n"
"    image whose state is MOUNTED (check --repair marks it CLEAN); ls and\n"
"    get read it with a warning.\n"
"\n"
"EXIT STATUS\n"
"    0  success; for check, the image is clean\n"
"    1  the operation failed (no such path, image full, not a dmfs image,\n"
"       ...); for check, problems were found, whether or not repaired\n"
"    2  bad usage, or the image or a host file could not be read or written\n"
"\n"
"EXAMPLES\n"
"    dmfs mkfs disk.img 64 build/user/hello.elf=/bin/hello notes.txt\n"
"    dmfs ls -lR disk.img\n"
"    dmfs get disk.img /trace/log trace.log\n"
"    dmfs check --repair disk.img\n";

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* Prints `dmfs: ` and the message to stderr and exits with `status`. */
static void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void die(int status, const char *fmt, ...)
{
    va_list ap;
    fputs("dmfs: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

/* A usage error: says what is wrong and where the help is; status 2. */
static void usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void usage(const char *fmt, ...)
{
    va_list ap;
    fputs("dmfs: usage: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see dmfs --help)\n", stderr);
    exit(STATUS_ERROR);
}

/* calloc that ends the program when memory runs out. */
static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL)
        die(STATUS_ERROR, "out of memory (%zu bytes)", count * size);
    return p;
}

/* strdup that ends the program when memory runs out. */
static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (p == NULL)
        die(STATUS_ERROR, "out of memory");
    return p;
}

/* The time now in ns since 1970, for mtime_ns. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* The open image: metadata in memory, a block cache, raw block I/O    */
/* ------------------------------------------------------------------ */

/* A directory or indirect block held in memory; written at commit if dirty. */
struct cached_block {
    struct cached_block *next;     /* in its hash bucket */
    uint32_t block;
    int dirty;
    _Alignas(8) uint8_t data[FS_BLOCK_SIZE];
};

#define CACHE_BUCKETS 1024u

struct image {
    const char *name;              /* as given on the command line, for messages */
    int fd;
    uint8_t *meta;                 /* blocks 0 .. data_start-1 */
    uint8_t *meta_dirty;           /* one flag per metadata block */
    struct fs_superblock *sb;      /* all four point into meta */
    uint8_t *inode_bitmap;
    uint8_t *block_bitmap;
    struct fs_inode *inodes;
    struct cached_block *cache[CACHE_BUCKETS];
    uint32_t free_blocks;          /* clear bits from data_start on */
    uint32_t free_inodes;          /* clear bits from 1 on */
    uint32_t next_block;           /* where block_alloc looks first */
};

/* Reads block b of the image into buf; an I/O error ends the program. */
static void block_read(struct image *img, uint32_t b, void *buf)
{
    ssize_t n = pread(img->fd, buf, FS_BLOCK_SIZE, (off_t)b * FS_BLOCK_SIZE);
    if (n != (ssize_t)FS_BLOCK_SIZE)
        die(STATUS_ERROR, "%s: block %" PRIu32 ": %s", img->name, b,
            n < 0 ? strerror(errno) : "short read");
}

/* Writes buf to block b of the image; an I/O error ends the program. */
static void block_write(struct image *img, uint32_t b, const void *buf)
{
    ssize_t n = pwrite(img->fd, buf, FS_BLOCK_SIZE, (off_t)b * FS_BLOCK_SIZE);
    if (n != (ssize_t)FS_BLOCK_SIZE)
        die(STATUS_ERROR, "%s: writing block %" PRIu32 ": %s", img->name, b,
            n < 0 ? strerror(errno) : "short write");
}

/* The bucket list pointer that holds (or would hold) block b. */
static struct cached_block **cache_link(struct image *img, uint32_t b)
{
    struct cached_block **link = &img->cache[b % CACHE_BUCKETS];
    while (*link && (*link)->block != b)
        link = &(*link)->next;
    return link;
}

/* Block b, read into the cache if it is not there yet. */
static struct cached_block *cache_get(struct image *img, uint32_t b)
{
    struct cached_block **link = cache_link(img, b);
    if (*link == NULL) {
        struct cached_block *cb = xcalloc(1, sizeof *cb);
        cb->block = b;
        block_read(img, b, cb->data);
        *link = cb;
    }
    return *link;
}

/* Block b as a block of zeros (just allocated), dirty. */
static struct cached_block *cache_new(struct image *img, uint32_t b)
{
    struct cached_block **link = cache_link(img, b);
    if (*link == NULL) {
        *link = xcalloc(1, sizeof **link);
        (*link)->block = b;
    }
    memset((*link)->data, 0, FS_BLOCK_SIZE);
    (*link)->dirty = 1;
    return *link;
}

/* Forgets block b (it was freed): its cached contents must never be written. */
static void cache_drop(struct image *img, uint32_t b)
{
    struct cached_block **link = cache_link(img, b);
    if (*link) {
        struct cached_block *cb = *link;
        *link = cb->next;
        free(cb);
    }
}

/* Marks the metadata blocks holding bytes [p, p+len) of meta as changed. */
static void meta_changed(struct image *img, const void *p, size_t len)
{
    size_t first = (size_t)((const uint8_t *)p - img->meta) / FS_BLOCK_SIZE;
    size_t last = ((size_t)((const uint8_t *)p - img->meta) + len - 1) / FS_BLOCK_SIZE;
    for (size_t b = first; b <= last; b++)
        img->meta_dirty[b] = 1;
}

/* Inode ino; the number must be below inode_count (callers check it). */
static struct fs_inode *inode_at(struct image *img, uint32_t ino)
{
    if (ino >= img->sb->inode_count)
        die(STATUS_ERROR, "%s: internal error: inode %" PRIu32 " out of range", img->name, ino);
    return &img->inodes[ino];
}

/* Marks inode ino as changed, to be written at commit. */
static void inode_changed(struct image *img, uint32_t ino)
{
    meta_changed(img, &img->inodes[ino], sizeof img->inodes[ino]);
}

/* Bit i of a bitmap: bit i % 8 of byte i / 8 (least significant first). */
static int bit_test(const uint8_t *map, uint32_t i)
{
    return map[i / 8] >> (i % 8) & 1;
}

/* Sets (used=1) or clears bit i of a bitmap in meta, keeping the free counts. */
static void bit_set(struct image *img, uint8_t *map, uint32_t i, int used)
{
    if (bit_test(map, i) == used)
        return;
    map[i / 8] ^= (uint8_t)(1u << (i % 8));
    meta_changed(img, &map[i / 8], 1);
    uint32_t *count = map == img->block_bitmap ? &img->free_blocks : &img->free_inodes;
    int counted = map == img->block_bitmap ? i >= img->sb->data_start : i >= 1;
    if (counted && used)
        (*count)--;
    else if (counted)
        (*count)++;
}

/* Counts the free blocks and inodes from the bitmaps. */
static void count_free(struct image *img)
{
    img->free_blocks = img->free_inodes = 0;
    for (uint32_t b = img->sb->data_start; b < img->sb->block_count; b++)
        img->free_blocks += !bit_test(img->block_bitmap, b);
    for (uint32_t i = 1; i < img->sb->inode_count; i++)
        img->free_inodes += !bit_test(img->inode_bitmap, i);
}

/* Points sb, the bitmaps and the inode table into img->meta. */
static void meta_attach(struct image *img)
{
    img->sb = (struct fs_superblock *)img->meta;
    img->inode_bitmap = img->meta + (size_t)img->sb->inode_bitmap_start * FS_BLOCK_SIZE;
    img->block_bitmap = img->meta + (size_t)img->sb->block_bitmap_start * FS_BLOCK_SIZE;
    img->inodes = (struct fs_inode *)(img->meta + (size_t)img->sb->inode_table_start * FS_BLOCK_SIZE);
}

/* Says in why (and returns -1) if sb is not a superblock this tool can use
 * for an image file of file_size bytes: magic, version, a layout exactly as
 * fs_layout() makes it, and the file long enough. root_inode and state are
 * left to the callers. Returns 0 when it is sound. */
static int superblock_fault(const struct fs_superblock *sb, uint64_t file_size, char *why, size_t len)
{
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        { "inode_count", offsetof(struct fs_superblock, inode_count) },
        { "inode_bitmap_start", offsetof(struct fs_superblock, inode_bitmap_start) },
        { "inode_bitmap_blocks", offsetof(struct fs_superblock, inode_bitmap_blocks) },
        { "block_bitmap_start", offsetof(struct fs_superblock, block_bitmap_start) },
        { "block_bitmap_blocks", offsetof(struct fs_superblock, block_bitmap_blocks) },
        { "inode_table_start", offsetof(struct fs_superblock, inode_table_start) },
        { "inode_table_blocks", offsetof(struct fs_superblock, inode_table_blocks) },
        { "data_start", offsetof(struct fs_superblock, data_start) },
    };
    struct fs_superblock want;

    if (sb->magic != FS_MAGIC) {
        snprintf(why, len, "not a dmfs image (magic 0x%08" PRIx32 ", expected 0x%08x)", sb->magic, FS_MAGIC);
        return -1;
    }
    if (sb->version != FS_VERSION) {
        snprintf(why, len, "superblock: version %" PRIu32 ", this tool knows version %u", sb->version, FS_VERSION);
        return -1;
    }
    if (fs_layout(sb->block_count, sb->inode_count, &want) != 0) {
        snprintf(why, len, "superblock: %" PRIu32 " blocks and %" PRIu32 " inodes leave no room for data",
                 sb->block_count, sb->inode_count);
        return -1;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        uint32_t have, expect;
        memcpy(&have, (const uint8_t *)sb + fields[i].offset, sizeof have);
        memcpy(&expect, (const uint8_t *)&want + fields[i].offset, sizeof expect);
        if (have != expect) {
            snprintf(why, len, "superblock: %s is %" PRIu32 ", expected %" PRIu32 " for %" PRIu32
                     " blocks and %" PRIu32 " inodes", fields[i].name, have, expect,
                     sb->block_count, sb->inode_count);
            return -1;
        }
    }
    if (file_size < (uint64_t)sb->block_count * FS_BLOCK_SIZE) {
        snprintf(why, len, "the image file is %" PRIu64 " bytes, shorter than its %" PRIu32 " blocks",
                 file_size, sb->block_count);
        return -1;
    }
    return 0;
}

/* Opens the image file and reads its superblock into *sb; returns the file's
 * size. A file that cannot be opened ends the program (status 2); one
 * shorter than a block gets a zeroed sb (which has a bad magic). */
static uint64_t image_open_file(struct image *img, const char *path, int writable, struct fs_superblock *sb)
{
    struct stat st;
    memset(img, 0, sizeof *img);
    img->name = path;
    img->fd = open(path, writable ? O_RDWR : O_RDONLY);
    if (img->fd < 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    if (fstat(img->fd, &st) != 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
        die(STATUS_ERROR, "%s: not a regular file", path);
    memset(sb, 0, sizeof *sb);
    if (st.st_size >= (off_t)FS_BLOCK_SIZE) {
        uint8_t block[FS_BLOCK_SIZE];
        block_read(img, 0, block);
        memcpy(sb, block, sizeof *sb);
    }
    return (uint64_t)st.st_size;
}

/* Reads all metadata blocks (those before data_start) of an image whose
 * superblock `sb` passed superblock_fault(). */
static void image_load(struct image *img, const struct fs_superblock *sb)
{
    img->meta = xcalloc(sb->data_start, FS_BLOCK_SIZE);
    img->meta_dirty = xcalloc(sb->data_start, 1);
    for (uint32_t b = 0; b < sb->data_start; b++)
        block_read(img, b, img->meta + (size_t)b * FS_BLOCK_SIZE);
    meta_attach(img);
    count_free(img);
    img->next_block = img->sb->data_start;
}

/* Opens an image for ls, get, put, mkdir and rm: a superblock that is not
 * sound ends the program (status 1). A MOUNTED image is refused for writing
 * and read with a warning. */
static void image_open(struct image *img, const char *path, int writable)
{
    struct fs_superblock sb;
    char why[200];
    uint64_t size = image_open_file(img, path, writable, &sb);
    if (superblock_fault(&sb, size, why, sizeof why) != 0)
        die(STATUS_FAILED, "%s: %s", path, why);
    if (sb.state != FS_STATE_CLEAN) {
        if (writable)
            die(STATUS_FAILED, "%s: marked mounted (in use by a node, or not cleanly unmounted); "
                "run dmfs check --repair first", path);
        fprintf(stderr, "dmfs: %s: warning: marked mounted (in use by a node, or not cleanly "
                "unmounted); run dmfs check\n", path);
    }
    image_load(img, &sb);
}

/* Writes every change: cached blocks, then metadata, the superblock last,
 * then waits for the disk. */
static void image_commit(struct image *img)
{
    for (uint32_t i = 0; i < CACHE_BUCKETS; i++)
        for (struct cached_block *cb = img->cache[i]; cb; cb = cb->next)
            if (cb->dirty) {
                block_write(img, cb->block, cb->data);
                cb->dirty = 0;
            }
    for (uint32_t b = 1; b < img->sb->data_start; b++)
        if (img->meta_dirty[b]) {
            block_write(img, b, img->meta + (size_t)b * FS_BLOCK_SIZE);
            img->meta_dirty[b] = 0;
        }
    if (img->meta_dirty[0]) {
        block_write(img, 0, img->meta);
        img->meta_dirty[0] = 0;
    }
    if (fsync(img->fd) != 0)
        die(STATUS_ERROR, "%s: %s", img->name, strerror(errno));
}

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

/* Takes a free data block; returns its number, or 0 when there is none. */
static uint32_t block_alloc(struct image *img)
{
    uint32_t start = img->sb->data_start, count = img->sb->block_count;
    uint32_t b = img->next_block >= start && img->next_block < count ? img->next_block : start;
    if (img->free_blocks == 0)
        return 0;
    for (uint32_t tries = count - start; tries > 0; tries--) {
        if (!bit_test(img->block_bitmap, b)) {
            bit_set(img, img->block_bitmap, b, 1);
            img->next_block = b + 1;
            return b;
        }
        if (++b == count)
            b = start;
    }
    return 0;
}

/* Gives data block b back. */
static void block_free(struct image *img, uint32_t b)
{
    bit_set(img, img->block_bitmap, b, 0);
    cache_drop(img, b);
}

/* Takes a free inode and makes it an empty inode of `type` with no links;
 * returns its number, or 0 when there is none. */
static uint32_t inode_alloc(struct image *img, uint16_t type)
{
    for (uint32_t ino = 1; ino < img->sb->inode_count; ino++)
        if (!bit_test(img->inode_bitmap, ino)) {
            struct fs_inode *ip = inode_at(img, ino);
            bit_set(img, img->inode_bitmap, ino, 1);
            memset(ip, 0, sizeof *ip);
            ip->type = type;
            ip->mtime_ns = now_ns();
            inode_changed(img, ino);
            return ino;
        }
    return 0;
}

/* Frees inode ino, which must hold no blocks any more. */
static void inode_free(struct image *img, uint32_t ino)
{
    memset(inode_at(img, ino), 0, sizeof(struct fs_inode));
    inode_changed(img, ino);
    bit_set(img, img->inode_bitmap, ino, 0);
}

/* ------------------------------------------------------------------ */
/* File blocks                                                         */
/* ------------------------------------------------------------------ */

/* Where a block pointer lives: in an indirect block (table) or, when table
 * is NULL, in the inode. */
struct pointer_slot {
    uint32_t *ptr;
    struct cached_block *table;
};

/* Stores b in a pointer slot of inode ino and marks what holds it changed. */
static void slot_set(struct image *img, uint32_t ino, struct pointer_slot *slot, uint32_t b)
{
    *slot->ptr = b;
    if (slot->table)
        slot->table->dirty = 1;
    else
        inode_changed(img, ino);
}

/* Ends the program if block pointer b of inode ino is outside the data
 * blocks: the image is damaged and only check can deal with it. */
static void pointer_check(struct image *img, uint32_t ino, uint32_t b)
{
    if (b < img->sb->data_start || b >= img->sb->block_count)
        die(STATUS_FAILED, "%s: inode %" PRIu32 ": block %" PRIu32 " out of range; run dmfs check",
            img->name, ino, b);
}

/* The indirect block that *slot points to, allocated (zeroed) if the slot
 * is a hole and `allocate` is set; NULL for a hole, or a full image. */
static struct cached_block *indirect_table(struct image *img, uint32_t ino, struct pointer_slot *slot,
                                           int allocate)
{
    uint32_t b = *slot->ptr;
    if (b == 0) {
        if (!allocate || (b = block_alloc(img)) == 0)
            return NULL;
        struct cached_block *table = cache_new(img, b);
        slot_set(img, ino, slot, b);
        return table;
    }
    pointer_check(img, ino, b);
    return cache_get(img, b);
}

/* Finds the slot of the pointer to block n of inode ino (fs_block_path
 * says where it lives), allocating missing indirect blocks if `allocate`.
 * Returns 0, or -1 when n is past the largest file or the way to it is a
 * hole (or, allocating, the image is full). */
static int file_slot(struct image *img, uint32_t ino, uint64_t n, int allocate, struct pointer_slot *slot)
{
    struct fs_inode *ip = inode_at(img, ino);
    uint32_t index[2];
    int level = fs_block_path(n, index);

    if (level < 0)
        return -1;
    slot->table = NULL;
    if (level == 0) {
        slot->ptr = &ip->direct[index[0]];
        return 0;
    }
    slot->ptr = level == 1 ? &ip->indirect : &ip->double_indirect;
    for (int i = 0; i < level; i++) {
        struct cached_block *table = indirect_table(img, ino, slot, allocate);
        if (table == NULL)
            return -1;
        slot->table = table;
        slot->ptr = (uint32_t *)table->data + index[i];
    }
    return 0;
}

/* The image block holding block n of inode ino; 0 for a hole. */
static uint32_t file_block(struct image *img, uint32_t ino, uint64_t n)
{
    struct pointer_slot slot;
    if (file_slot(img, ino, n, 0, &slot) != 0 || *slot.ptr == 0)
        return 0;
    pointer_check(img, ino, *slot.ptr);
    return *slot.ptr;
}

/* The image block holding block n of inode ino, allocated if it is a hole
 * (as a zeroed cached block if `cached`: directory blocks; file data is
 * written directly). Returns 0 when the image is full. */
static uint32_t file_map(struct image *img, uint32_t ino, uint64_t n, int cached)
{
    struct pointer_slot slot;
    if (file_slot(img, ino, n, 1, &slot) != 0)
        return 0;
    if (*slot.ptr == 0) {
        uint32_t b = block_alloc(img);
        if (b == 0)
            return 0;
        if (cached)
            cache_new(img, b);
        slot_set(img, ino, &slot, b);
    }
    pointer_check(img, ino, *slot.ptr);
    return *slot.ptr;
}

/* How many blocks a new file of `size` bytes takes, indirect ones included. */
static uint64_t blocks_for_size(uint64_t size)
{
    uint64_t n = (size + FS_BLOCK_SIZE - 1) / FS_BLOCK_SIZE, total = n;
    if (n > FS_NDIRECT)
        total += 1;
    if (n > FS_NDIRECT + FS_PTRS_PER_BLOCK) {
        uint64_t rest = n - FS_NDIRECT - FS_PTRS_PER_BLOCK;
        total += 1 + (rest + FS_PTRS_PER_BLOCK - 1) / FS_PTRS_PER_BLOCK;
    }
    return total;
}

/* How many blocks mapping block n of inode ino would allocate. */
static uint32_t blocks_to_map(struct image *img, uint32_t ino, uint64_t n)
{
    struct fs_inode *ip = inode_at(img, ino);
    uint32_t index[2];
    int level = fs_block_path(n, index);

    if (level < 0)
        return UINT32_MAX;
    if (level == 0)
        return ip->direct[index[0]] == 0;
    uint32_t b = level == 1 ? ip->indirect : ip->double_indirect;
    for (int i = 0; i < level; i++) {
        if (b == 0)
            return (uint32_t)(level - i) + 1;   /* the missing tables and the block */
        pointer_check(img, ino, b);
        b = ((uint32_t *)cache_get(img, b)->data)[index[i]];
    }
    return b == 0;
}

/* Counts the blocks under pointer b at `level` (0: a data block, 1: an
 * indirect block, 2: a double-indirect block); with `release`, frees them. */
static uint64_t pointer_tree(struct image *img, uint32_t ino, uint32_t b, int level, int release)
{
    uint64_t count = 1;
    if (b == 0)
        return 0;
    pointer_check(img, ino, b);
    if (level > 0) {
        const uint32_t *table = (const uint32_t *)cache_get(img, b)->data;
        for (uint32_t i = 0; i < FS_PTRS_PER_BLOCK; i++)
            count += pointer_tree(img, ino, table[i], level - 1, release);
    }
    if (release)
        block_free(img, b);
    return count;
}

/* Counts the blocks, data and indirect, of the inode *ip (number ino, for
 * messages); with `release`, frees them and leaves *ip empty with size 0. */
static uint64_t inode_blocks(struct image *img, struct fs_inode *ip, uint32_t ino, int release)
{
    uint64_t count = 0;
    for (uint32_t i = 0; i < FS_NDIRECT; i++)
        count += pointer_tree(img, ino, ip->direct[i], 0, release);
    count += pointer_tree(img, ino, ip->indirect, 1, release);
    count += pointer_tree(img, ino, ip->double_indirect, 2, release);
    if (release) {
        memset(ip->direct, 0, sizeof ip->direct);
        ip->indirect = ip->double_indirect = 0;
        ip->size = 0;
    }
    return count;
}

/* Writes `size` bytes into inode ino, which holds no blocks; the caller has
 * made sure the blocks are free. */
static void file_write(struct image *img, uint32_t ino, const uint8_t *data, uint64_t size)
{
    static uint8_t last[FS_BLOCK_SIZE];
    for (uint64_t n = 0; n * FS_BLOCK_SIZE < size; n++) {
        uint64_t offset = n * FS_BLOCK_SIZE;
        uint32_t b = file_map(img, ino, n, 0);
        if (b == 0)
            die(STATUS_FAILED, "%s: internal error: image full after checking for room", img->name);
        if (size - offset >= FS_BLOCK_SIZE) {
            block_write(img, b, data + offset);
        } else {
            memset(last, 0, sizeof last);
            memcpy(last, data + offset, size - offset);
            block_write(img, b, last);
        }
    }
    inode_at(img, ino)->size = size;
    inode_at(img, ino)->mtime_ns = now_ns();
    inode_changed(img, ino);
}

/* Copies inode ino's contents to `out` (holes as zeros). */
static void file_read(struct image *img, uint32_t ino, FILE *out, const char *out_name)
{
    static uint8_t buf[FS_BLOCK_SIZE];
    uint64_t size = inode_at(img, ino)->size;
    for (uint64_t n = 0; n * FS_BLOCK_SIZE < size; n++) {
        uint64_t left = size - n * FS_BLOCK_SIZE;
        size_t len = left < FS_BLOCK_SIZE ? (size_t)left : FS_BLOCK_SIZE;
        uint32_t b = file_block(img, ino, n);
        if (b)
            block_read(img, b, buf);
        else
            memset(buf, 0, sizeof buf);
        if (fwrite(buf, 1, len, out) != len)
            die(STATUS_ERROR, "%s: %s", out_name, strerror(errno));
    }
}

/* ------------------------------------------------------------------ */
/* Directories                                                         */
/* ------------------------------------------------------------------ */

/* The number of entries directory dino's size covers. A directory grows
 * one 64-byte entry at a time. */
static uint32_t dir_count(struct image *img, uint32_t dino)
{
    uint64_t n = inode_at(img, dino)->size / DIRENT_SIZE;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Reads entry i of directory dino (a hole reads as a free entry). */
static void dir_read(struct image *img, uint32_t dino, uint32_t i, struct fs_dirent *de)
{
    uint32_t b = file_block(img, dino, i / FS_DIRENTS_PER_BLOCK);
    if (b == 0)
        memset(de, 0, sizeof *de);
    else
        memcpy(de, cache_get(img, b)->data + (i % FS_DIRENTS_PER_BLOCK) * DIRENT_SIZE, sizeof *de);
}

/* Writes entry i of directory dino (not its size); -1 if a block was needed
 * and the image is full. */
static int dir_write(struct image *img, uint32_t dino, uint32_t i, const struct fs_dirent *de)
{
    uint32_t b = file_map(img, dino, i / FS_DIRENTS_PER_BLOCK, 1);
    if (b == 0)
        return -1;
    struct cached_block *cb = cache_get(img, b);
    memcpy(cb->data + (i % FS_DIRENTS_PER_BLOCK) * DIRENT_SIZE, de, sizeof *de);
    cb->dirty = 1;
    return 0;
}

/* Fills *de with inode ino and name (at most FS_NAME_MAX bytes), NUL-padded. */
static void dirent_make(struct fs_dirent *de, uint32_t ino, const char *name)
{
    memset(de, 0, sizeof *de);
    de->inode = ino;
    memcpy(de->name, name, strlen(name));
}

/* Whether entry *de is in use and called `name`. */
static int dirent_is(const struct fs_dirent *de, const char *name)
{
    return de->inode != 0 && memcmp(de->name, name, strlen(name) + 1) == 0;
}

/* The inode that `name` names in directory dino, or 0; its entry's index
 * goes to *index when index is not NULL. */
static uint32_t dir_lookup(struct image *img, uint32_t dino, const char *name, uint32_t *index)
{
    struct fs_dirent de;
    uint32_t count = dir_count(img, dino);
    for (uint32_t i = 0; i < count; i++) {
        dir_read(img, dino, i, &de);
        if (dirent_is(&de, name)) {
            if (index)
                *index = i;
            return de.inode;
        }
    }
    return 0;
}

/* The index a new entry of directory dino would take: the first free one
 * after '.' and '..', or one past the end. */
static uint32_t dir_free_index(struct image *img, uint32_t dino)
{
    struct fs_dirent de;
    uint32_t count = dir_count(img, dino);
    for (uint32_t i = 2; i < count; i++) {
        dir_read(img, dino, i, &de);
        if (de.inode == 0)
            return i;
    }
    return count < 2 ? 2 : count;
}

/* How many blocks adding an entry to directory dino would allocate. */
static uint32_t dir_add_cost(struct image *img, uint32_t dino)
{
    return blocks_to_map(img, dino, dir_free_index(img, dino) / FS_DIRENTS_PER_BLOCK);
}

/* Adds entry name -> ino to directory dino (no link counts change); -1 if
 * the image is full. */
static int dir_add(struct image *img, uint32_t dino, const char *name, uint32_t ino)
{
    struct fs_inode *dp = inode_at(img, dino);
    struct fs_dirent de;
    uint32_t i = dir_free_index(img, dino);

    if (dir_add_cost(img, dino) > img->free_blocks)
        return -1;
    dirent_make(&de, ino, name);
    if (dir_write(img, dino, i, &de) != 0)
        return -1;
    if ((uint64_t)(i + 1) * DIRENT_SIZE > dp->size)
        dp->size = (uint64_t)(i + 1) * DIRENT_SIZE;
    dp->mtime_ns = now_ns();
    inode_changed(img, dino);
    return 0;
}

/* Makes directory `name` in directory parent; returns its inode, or 0 (with
 * nothing changed) if there is no free inode or block for it. */
static uint32_t dir_create(struct image *img, uint32_t parent, const char *name)
{
    struct fs_dirent de;
    uint32_t ino;

    if (img->free_inodes == 0 || 1 + (uint64_t)dir_add_cost(img, parent) > img->free_blocks)
        return 0;
    ino = inode_alloc(img, FS_TYPE_DIR);
    dirent_make(&de, ino, ".");
    dir_write(img, ino, 0, &de);
    dirent_make(&de, parent, "..");
    dir_write(img, ino, 1, &de);
    inode_at(img, ino)->size = 2 * DIRENT_SIZE;
    inode_at(img, ino)->nlink = 2;                 /* its entry and its '.' */
    inode_changed(img, ino);
    dir_add(img, parent, name, ino);
    inode_at(img, parent)->nlink++;                /* the new '..' */
    inode_changed(img, parent);
    return ino;
}

/* ------------------------------------------------------------------ */
/* Paths                                                               */
/* ------------------------------------------------------------------ */

/* Copies the next component of *path into name and moves *path past it.
 * Returns 1 for a component, 0 at the end, -1 for one too long. */
static int path_next(const char **path, char name[FS_NAME_MAX + 1])
{
    const char *p = *path;
    size_t len;
    while (*p == '/')
        p++;
    len = strcspn(p, "/");
    *path = p + len;
    if (len == 0)
        return 0;
    if (len > FS_NAME_MAX)
        return -1;
    memcpy(name, p, len);
    name[len] = 0;
    return 1;
}

/* Resolves `path` up to its last component: the directory holding it goes
 * to *parent and the name to `last` ("" for the root itself). Ends the
 * program when a directory on the way is missing or not a directory. */
static void path_parent(struct image *img, const char *path, uint32_t *parent, char last[FS_NAME_MAX + 1])
{
    const char *p = path;
    char name[FS_NAME_MAX + 1];
    uint32_t dir = FS_ROOT_INODE;
    int r;

    last[0] = 0;
    while ((r = path_next(&p, name)) != 0) {
        if (r < 0)
            die(STATUS_FAILED, "%s: %s: a name is longer than %u bytes", img->name, path, FS_NAME_MAX);
        if (last[0]) {
            uint32_t next = dir_lookup(img, dir, last, NULL);
            if (next == 0 || next >= img->sb->inode_count)
                die(STATUS_FAILED, "%s: %s: no such file or directory", img->name, path);
            if (inode_at(img, next)->type != FS_TYPE_DIR)
                die(STATUS_FAILED, "%s: %s: not a directory", img->name, path);
            dir = next;
        }
        memcpy(last, name, sizeof name);
    }
    *parent = dir;
}

/* The inode `path` names; ends the program if there is none. */
static uint32_t path_resolve(struct image *img, const char *path)
{
    char last[FS_NAME_MAX + 1];
    uint32_t parent, ino;
    path_parent(img, path, &parent, last);
    if (last[0] == 0)
        return FS_ROOT_INODE;
    ino = dir_lookup(img, parent, last, NULL);
    if (ino == 0)
        die(STATUS_FAILED, "%s: %s: no such file or directory", img->name, path);
    if (ino >= img->sb->inode_count)
        die(STATUS_FAILED, "%s: %s: names inode %" PRIu32 ", out of range; run dmfs check",
            img->name, path, ino);
    return ino;
}

/* Resolves the parent of a path that is to be made or removed, refusing
 * the root, '.' and '..' as the last component. */
static uint32_t path_parent_for_change(struct image *img, const char *path, char last[FS_NAME_MAX + 1])
{
    uint32_t parent;
    path_parent(img, path, &parent, last);
    if (last[0] == 0)
        die(STATUS_FAILED, "%s: %s: is the root directory", img->name, path);
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        die(STATUS_FAILED, "%s: %s: cannot make or remove '.' or '..'", img->name, path);
    return parent;
}

/* Joins a directory path and a name into a new string. */
static char *path_join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = xcalloc(len, 1);
    snprintf(path, len, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
    return path;
}

/* ------------------------------------------------------------------ */
/* Host files                                                          */
/* ------------------------------------------------------------------ */

/* Reads a whole host file into memory; its size goes to *size. */
static uint8_t *host_read(const char *path, uint64_t *size)
{
    struct stat st;
    uint8_t *data;
    uint64_t done = 0;
    int fd = open(path, O_RDONLY);

    if (fd < 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        die(STATUS_ERROR, "%s: not a regular file", path);
    *size = (uint64_t)st.st_size;
    data = xcalloc((size_t)*size, 1);
    while (done < *size) {
        ssize_t n = read(fd, data + done, (size_t)(*size - done));
        if (n <= 0)
            die(STATUS_ERROR, "%s: %s", path, n < 0 ? strerror(errno) : "file shrank while read");
        done += (uint64_t)n;
    }
    close(fd);
    return data;
}

/* ------------------------------------------------------------------ */
/* put, mkdir, rm                                                      */
/* ------------------------------------------------------------------ */

/* Puts `size` bytes of data in the image as file `path`, creating it or
 * replacing its contents; dies (changing nothing) if it does not fit. */
static void put_file(struct image *img, const char *path, const uint8_t *data, uint64_t size)
{
    char name[FS_NAME_MAX + 1];
    uint32_t parent = path_parent_for_change(img, path, name);
    uint32_t ino = dir_lookup(img, parent, name, NULL);
    uint64_t need = blocks_for_size(size), old_blocks = 0;

    if (ino >= img->sb->inode_count)
        die(STATUS_FAILED, "%s: %s: names inode %" PRIu32 ", out of range; run dmfs check", img->name, path, ino);
    if (ino && inode_at(img, ino)->type != FS_TYPE_FILE)
        die(STATUS_FAILED, "%s: %s: is a directory", img->name, path);
    if (size > FS_MAX_FILE_SIZE)
        die(STATUS_FAILED, "%s: %s: %" PRIu64 " bytes is larger than the largest file", img->name, path, size);
    if (ino)
        old_blocks = inode_blocks(img, inode_at(img, ino), ino, 0);
    else
        need += dir_add_cost(img, parent);
    if (need > img->free_blocks + old_blocks)
        die(STATUS_FAILED, "%s: image full: %s needs %" PRIu64 " blocks, %" PRIu64 " free",
            img->name, path, need, img->free_blocks + old_blocks);
    if (!ino && img->free_inodes == 0)
        die(STATUS_FAILED, "%s: image full: no free inode for %s", img->name, path);

    if (!ino) {
        ino = inode_alloc(img, FS_TYPE_FILE);
        dir_add(img, parent, name, ino);
        inode_at(img, ino)->nlink = 1;
        file_write(img, ino, data, size);
    } else if (need > img->free_blocks) {
        /* fits only in the old blocks: free them first */
        inode_blocks(img, inode_at(img, ino), ino, 1);
        file_write(img, ino, data, size);
    } else {
        /* write the new contents into free blocks, then free the old ones */
        struct fs_inode old = *inode_at(img, ino);
        memset(inode_at(img, ino)->direct, 0, sizeof old.direct);
        inode_at(img, ino)->indirect = inode_at(img, ino)->double_indirect = 0;
        file_write(img, ino, data, size);
        inode_blocks(img, &old, ino, 1);
    }
    inode_at(img, parent)->mtime_ns = now_ns();
    inode_changed(img, parent);
}

/* Makes the directories of `path` that are missing (mkfs's PATHs). */
static void make_parents(struct image *img, const char *path)
{
    char name[FS_NAME_MAX + 1], next[FS_NAME_MAX + 1];
    const char *p = path;
    uint32_t dir = FS_ROOT_INODE;
    int r = path_next(&p, name);

    while (r > 0 && (r = path_next(&p, next)) > 0) {
        uint32_t ino = dir_lookup(img, dir, name, NULL);
        if (ino == 0 && (ino = dir_create(img, dir, name)) == 0)
            die(STATUS_FAILED, "%s: image full: no room for directory %s in %s", img->name, name, path);
        if (inode_at(img, ino)->type != FS_TYPE_DIR)
            die(STATUS_FAILED, "%s: %s: %s is not a directory", img->name, path, name);
        dir = ino;
        memcpy(name, next, sizeof name);
    }
    if (r < 0)
        die(STATUS_FAILED, "%s: %s: a name is longer than %u bytes", img->name, path, FS_NAME_MAX);
}

/* Removes `path`: a file, or an empty directory. */
static void remove_path(struct image *img, const char *path)
{
    char name[FS_NAME_MAX + 1];
    struct fs_dirent de, empty;
    uint32_t parent = path_parent_for_change(img, path, name), index = 0;
    uint32_t ino = dir_lookup(img, parent, name, &index);
    struct fs_inode *ip;

    if (ino == 0)
        die(STATUS_FAILED, "%s: %s: no such file or directory", img->name, path);
    if (ino >= img->sb->inode_count)
        die(STATUS_FAILED, "%s: %s: names inode %" PRIu32 ", out of range; run dmfs check", img->name, path, ino);
    ip = inode_at(img, ino);
    if (ip->type == FS_TYPE_DIR) {
        for (uint32_t i = 2; i < dir_count(img, ino); i++) {
            dir_read(img, ino, i, &de);
            if (de.inode != 0)
                die(STATUS_FAILED, "%s: %s: directory not empty", img->name, path);
        }
    }
    memset(&empty, 0, sizeof empty);
    dir_write(img, parent, index, &empty);
    inode_at(img, parent)->mtime_ns = now_ns();
    if (ip->type == FS_TYPE_DIR && inode_at(img, parent)->nlink > 0)
        inode_at(img, parent)->nlink--;            /* its '..' */
    inode_changed(img, parent);
    if (ip->type == FS_TYPE_FILE && ip->nlink > 1) {
        ip->nlink--;                               /* still named elsewhere */
        inode_changed(img, ino);
        return;
    }
    inode_blocks(img, ip, ino, 1);
    inode_free(img, ino);
}

/* ------------------------------------------------------------------ */
/* Command-line arguments                                              */
/* ------------------------------------------------------------------ */

/* The options given to the command being run. */
static struct {
    int force;
    const char *inodes;
    int long_format;
    int recursive;
    int repair;
} options;

/* Records option `name` (with its value, for one that takes one). */
static void set_option(const char *name, const char *value)
{
    if (strcmp(name, "--force") == 0)
        options.force = 1;
    else if (strcmp(name, "--inodes") == 0)
        options.inodes = value;
    else if (strcmp(name, "-l") == 0)
        options.long_format = 1;
    else if (strcmp(name, "-R") == 0)
        options.recursive = 1;
    else if (strcmp(name, "--repair") == 0)
        options.repair = 1;
}

/* A command's positional arguments (what is not an option). */
struct args {
    const char **positional;
    int count;
};

/* Splits a command's argv into positionals and the options in `known`,
 * which go to set_option(): "-l" is a flag (short flags combine: "-lR"),
 * "--inodes=" one taking a value ("--inodes N" or "--inodes=N"). An
 * unknown option is a usage error. */
static void args_parse(int argc, char **argv, const char *command, const char *const *known, struct args *args)
{
    int options_done = 0;
    args->positional = xcalloc((size_t)argc + 1, sizeof args->positional[0]);
    args->count = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == 0) {
            args->positional[args->count++] = a;
        } else if (strcmp(a, "--") == 0) {
            options_done = 1;
        } else if (a[1] == '-') {
            int found = 0;
            for (int k = 0; known[k]; k++) {
                size_t len = strlen(known[k]);
                if (known[k][len - 1] == '=' && strncmp(a, known[k], len - 1) == 0 && a[len - 1] == 0) {
                    if (i + 1 >= argc)
                        usage("%s: %s needs a value", command, a);
                    set_option(a, argv[++i]);
                    found = 1;
                } else if (known[k][len - 1] == '=' && strncmp(a, known[k], len) == 0) {
                    char name[32];
                    snprintf(name, sizeof name, "%.*s", (int)(len - 1), a);
                    set_option(name, a + len);
                    found = 1;
                } else if (strcmp(a, known[k]) == 0) {
                    set_option(a, NULL);
                    found = 1;
                }
            }
            if (!found)
                usage("%s: unknown option %s", command, a);
        } else {
            for (const char *f = a + 1; *f; f++) {
                char flag[3] = { '-', *f, 0 };
                int found = 0;
                for (int k = 0; known[k]; k++)
                    if (strcmp(flag, known[k]) == 0)
                        found = 1;
                if (!found)
                    usage("%s: unknown option %s", command, flag);
                set_option(flag, NULL);
            }
        }
    }
}

/* Ends the program unless a command got between min and max positionals. */
static void args_expect(const struct args *args, int min, int max, const char *synopsis)
{
    if (args->count < min || args->count > max)
        usage("%s", synopsis);
}

/* ------------------------------------------------------------------ */
/* mkfs                                                                */
/* ------------------------------------------------------------------ */

/* mkfs's default: one inode per 16 KiB of image, up to this many. */
#define DEFAULT_INODES_MAX (1u << 20)

/* The temporary file mkfs builds the image in. */
static char *mkfs_temporary;

/* At exit: removes mkfs's temporary file if mkfs did not finish. */
static void mkfs_cleanup(void)
{
    if (mkfs_temporary)
        unlink(mkfs_temporary);
}

/* Parses a positive decimal number no larger than max; dies otherwise. */
static uint64_t parse_count(const char *s, uint64_t max, const char *what)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v == 0 || v > max)
        usage("%s must be a number from 1 to %" PRIu64 ", not '%s'", what, max, s);
    return v;
}

/* dmfs mkfs [--force] [--inodes N] IMAGE SIZE_MB [HOSTFILE[=PATH] ...] */
static int cmd_mkfs(int argc, char **argv)
{
    static const char *const known[] = { "--force", "--inodes=", NULL };
    static const char synopsis[] = "dmfs mkfs [--force] [--inodes N] IMAGE SIZE_MB [HOSTFILE[=PATH] ...]";
    struct args args;
    struct fs_superblock sb;
    struct image image, *img = &image;
    struct fs_dirent de;
    struct stat st;

    args_parse(argc, argv, "mkfs", known, &args);
    args_expect(&args, 2, argc, synopsis);
    const char *path = args.positional[0];
    uint64_t blocks = parse_count(args.positional[1], UINT32_MAX / 256, "SIZE_MB") * 256;
    uint64_t inodes = options.inodes ? parse_count(options.inodes, UINT32_MAX - FS_INODES_PER_BLOCK, "--inodes")
                                     : blocks / 4 < DEFAULT_INODES_MAX ? blocks / 4 : DEFAULT_INODES_MAX;
    if (fs_layout((uint32_t)blocks, (uint32_t)inodes, &sb) != 0)
        die(STATUS_FAILED, "%s: %" PRIu64 " inodes do not fit in %s MiB", path, inodes, args.positional[1]);
    if (!options.force && stat(path, &st) == 0)
        die(STATUS_FAILED, "%s: exists; give --force to replace it", path);

    /* Build under a temporary name beside IMAGE. */
    size_t len = strlen(path) + 16;
    mkfs_temporary = xcalloc(len, 1);
    snprintf(mkfs_temporary, len, "%s.tmp-XXXXXX", path);
    memset(img, 0, sizeof *img);
    img->name = path;
    img->fd = mkstemp(mkfs_temporary);
    if (img->fd < 0)
        die(STATUS_ERROR, "%s: %s", mkfs_temporary, strerror(errno));
    atexit(mkfs_cleanup);
    if (fchmod(img->fd, 0644) != 0 || ftruncate(img->fd, (off_t)(blocks * FS_BLOCK_SIZE)) != 0)
        die(STATUS_ERROR, "%s: %s", mkfs_temporary, strerror(errno));

    /* The metadata: every metadata block in use, inode 0 reserved, the root. */
    img->meta = xcalloc(sb.data_start, FS_BLOCK_SIZE);
    img->meta_dirty = xcalloc(sb.data_start, 1);
    memset(img->meta_dirty, 1, sb.data_start);
    memcpy(img->meta, &sb, sizeof sb);
    meta_attach(img);
    for (uint32_t b = 0; b < sb.data_start; b++)
        img->block_bitmap[b / 8] |= (uint8_t)(1u << (b % 8));
    img->inode_bitmap[0] |= 1;
    count_free(img);
    img->next_block = sb.data_start;
    if (inode_alloc(img, FS_TYPE_DIR) != FS_ROOT_INODE)
        die(STATUS_FAILED, "%s: internal error: the root is not inode %u", path, FS_ROOT_INODE);
    dirent_make(&de, FS_ROOT_INODE, ".");
    dir_write(img, FS_ROOT_INODE, 0, &de);
    dirent_make(&de, FS_ROOT_INODE, "..");
    dir_write(img, FS_ROOT_INODE, 1, &de);
    inode_at(img, FS_ROOT_INODE)->size = 2 * DIRENT_SIZE;
    inode_at(img, FS_ROOT_INODE)->nlink = 2;       /* its '.' and '..' */

    /* The files: HOSTFILE[=PATH], split at the last '='. */
    for (int i = 2; i < args.count; i++) {
        char *host = xstrdup(args.positional[i]), *target, *slash;
        char *equals = strrchr(host, '=');
        uint64_t size;
        if (equals) {
            *equals = 0;
            target = xstrdup(equals + 1);
        } else {
            slash = strrchr(host, '/');
            target = path_join("/", slash ? slash + 1 : host);
        }
        uint8_t *data = host_read(host, &size);
        make_parents(img, target);
        put_file(img, target, data, size);
        free(data);
        free(target);
        free(host);
    }
    image_commit(img);
    if (close(img->fd) != 0 || rename(mkfs_temporary, path) != 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    free(mkfs_temporary);
    mkfs_temporary = NULL;
    return STATUS_OK;
}

/* ------------------------------------------------------------------ */
/* ls, get, put, mkdir, rm                                             */
/* ------------------------------------------------------------------ */

/* One line of ls: the name, or with -l type, inode, nlink, size and name. */
static void ls_line(struct image *img, uint32_t ino, const char *name)
{
    if (options.long_format) {
        const struct fs_inode *ip = inode_at(img, ino);
        const char *type = ip->type == FS_TYPE_FILE ? "file" : ip->type == FS_TYPE_DIR ? "dir" : "?";
        printf("%-4s %7" PRIu32 " %5u %12" PRIu64 " %s\n", type, ino, ip->nlink, ip->size, name);
    } else {
        printf("%s\n", name);
    }
}

struct listed {
    char name[FS_NAME_MAX + 1];
    uint32_t ino;
};

/* qsort order for ls: by name, bytewise. */
static int listed_compare(const void *a, const void *b)
{
    return strcmp(((const struct listed *)a)->name, ((const struct listed *)b)->name);
}

/* Lists directory dino (its path is `path`): names, or with -R full paths
 * and everything below. `visited` guards against loops in a damaged image. */
static void ls_directory(struct image *img, uint32_t dino, const char *path, uint8_t *visited)
{
    uint32_t count = dir_count(img, dino), n = 0;
    struct listed *entries = xcalloc(count, sizeof *entries);
    struct fs_dirent de;

    visited[dino] = 1;
    for (uint32_t i = 0; i < count; i++) {
        dir_read(img, dino, i, &de);
        de.name[FS_NAME_MAX] = 0;
        if (de.inode == 0 || strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0)
            continue;
        if (de.inode >= img->sb->inode_count)
            die(STATUS_FAILED, "%s: %s: entry '%s' names inode %" PRIu32 ", out of range; run dmfs check",
                img->name, path, de.name, de.inode);
        memcpy(entries[n].name, de.name, sizeof de.name);
        entries[n++].ino = de.inode;
    }
    qsort(entries, n, sizeof *entries, listed_compare);
    for (uint32_t i = 0; i < n; i++) {
        if (!options.recursive) {
            ls_line(img, entries[i].ino, entries[i].name);
            continue;
        }
        char *full = path_join(path, entries[i].name);
        ls_line(img, entries[i].ino, full);
        if (inode_at(img, entries[i].ino)->type == FS_TYPE_DIR && !visited[entries[i].ino])
            ls_directory(img, entries[i].ino, full, visited);
        free(full);
    }
    free(entries);
}

/* dmfs ls [-l] [-R] IMAGE [PATH] */
static int cmd_ls(int argc, char **argv)
{
    static const char *const known[] = { "-l", "-R", NULL };
    struct args args;
    struct image img;

    args_parse(argc, argv, "ls", known, &args);
    args_expect(&args, 1, 2, "dmfs ls [-l] [-R] IMAGE [PATH]");
    const char *path = args.count > 1 ? args.positional[1] : "/";
    image_open(&img, args.positional[0], 0);
    uint32_t ino = path_resolve(&img, path);
    if (inode_at(&img, ino)->type != FS_TYPE_DIR) {
        ls_line(&img, ino, path);
    } else {
        uint8_t *visited = xcalloc(img.sb->inode_count, 1);
        char *start = path_join("/", path[0] == '/' ? path + 1 : path);
        size_t len = strlen(start);
        while (len > 1 && start[len - 1] == '/')
            start[--len] = 0;
        ls_directory(&img, ino, start, visited);
        free(start);
        free(visited);
    }
    if (fflush(stdout) != 0)
        die(STATUS_ERROR, "standard output: %s", strerror(errno));
    return STATUS_OK;
}

/* dmfs get IMAGE PATH [HOSTFILE] */
static int cmd_get(int argc, char **argv)
{
    static const char *const known[] = { NULL };
    struct args args;
    struct image img;
    FILE *out = stdout;
    const char *out_name = "standard output";

    args_parse(argc, argv, "get", known, &args);
    args_expect(&args, 2, 3, "dmfs get IMAGE PATH [HOSTFILE]");
    image_open(&img, args.positional[0], 0);
    uint32_t ino = path_resolve(&img, args.positional[1]);
    if (inode_at(&img, ino)->type == FS_TYPE_DIR)
        die(STATUS_FAILED, "%s: %s: is a directory", img.name, args.positional[1]);
    if (inode_at(&img, ino)->type != FS_TYPE_FILE)
        die(STATUS_FAILED, "%s: %s: names inode %" PRIu32 ", which is not in use; run dmfs check",
            img.name, args.positional[1], ino);
    if (args.count == 3) {
        out_name = args.positional[2];
        out = fopen(out_name, "wb");
        if (out == NULL)
            die(STATUS_ERROR, "%s: %s", out_name, strerror(errno));
    }
    file_read(&img, ino, out, out_name);
    if (fflush(out) != 0 || (out != stdout && fclose(out) != 0))
        die(STATUS_ERROR, "%s: %s", out_name, strerror(errno));
    return STATUS_OK;
}

/* dmfs put IMAGE HOSTFILE PATH */
static int cmd_put(int argc, char **argv)
{
    static const char *const known[] = { NULL };
    struct args args;
    struct image img;
    uint64_t size;

    args_parse(argc, argv, "put", known, &args);
    args_expect(&args, 3, 3, "dmfs put IMAGE HOSTFILE PATH");
    image_open(&img, args.positional[0], 1);
    uint8_t *data = host_read(args.positional[1], &size);
    put_file(&img, args.positional[2], data, size);
    image_commit(&img);
    free(data);
    return STATUS_OK;
}

/* dmfs mkdir IMAGE PATH */
static int cmd_mkdir(int argc, char **argv)
{
    static const char *const known[] = { NULL };
    struct args args;
    struct image img;
    char name[FS_NAME_MAX + 1];

    args_parse(argc, argv, "mkdir", known, &args);
    args_expect(&args, 2, 2, "dmfs mkdir IMAGE PATH");
    image_open(&img, args.positional[0], 1);
    uint32_t parent = path_parent_for_change(&img, args.positional[1], name);
    if (dir_lookup(&img, parent, name, NULL) != 0)
        die(STATUS_FAILED, "%s: %s: exists", img.name, args.positional[1]);
    if (dir_create(&img, parent, name) == 0)
        die(STATUS_FAILED, "%s: image full: no free %s for %s", img.name,
            img.free_inodes == 0 ? "inode" : "block", args.positional[1]);
    image_commit(&img);
    return STATUS_OK;
}

/* dmfs rm IMAGE PATH */
static int cmd_rm(int argc, char **argv)
{
    static const char *const known[] = { NULL };
    struct args args;
    struct image img;

    args_parse(argc, argv, "rm", known, &args);
    args_expect(&args, 2, 2, "dmfs rm IMAGE PATH");
    image_open(&img, args.positional[0], 1);
    remove_path(&img, args.positional[1]);
    image_commit(&img);
    return STATUS_OK;
}

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

/* The owner recorded for a metadata block. */
#define OWNER_METADATA UINT32_MAX

struct checker {
    struct image *img;
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
};

/* Prints one problem. `fix` says how it is repaired (printed with --repair);
 * NULL means it cannot be. */
static void report(struct checker *ck, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(struct checker *ck, const char *fix, const char *fmt, ...)
{
    va_list ap;
    printf("dmfs: %s: ", ck->img->name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (fix == NULL)
        ck->unrepaired++;
    else if (ck->repair)
        printf(" (fixed: %s)", fix);
    printf("\n");
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

/* Checks the pointer in *slot, at `level` (0 data, 1 indirect, 2
 * double-indirect), covering file blocks from `first` on; claims the blocks
 * it leads to, and clears it when it is past the size, out of range,
 * claimed already (which cuts the file there) or after such a cut. */
static void check_pointer(struct block_walk *w, struct pointer_slot *slot, int level, uint64_t first)
{
    struct checker *ck = w->ck;
    struct image *img = ck->img;
    uint32_t b = *slot->ptr;
    char fix[64];

    if (b == 0)
        return;
    if (first >= w->cut) {
        slot_set(img, w->ino, slot, 0);
        return;
    }
    if (first >= w->size_blocks || b < img->sb->data_start || b >= img->sb->block_count) {
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

/* Pass 2: every inode's type, size and block pointers; fills ck->owner. */
static void check_inodes(struct checker *ck)
{
    struct image *img = ck->img;
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
            bit_set(ck->img, map, j, !have);
    }
}

/* Pass 3: both bitmaps against the blocks claimed and the inodes in use;
 * afterwards they agree, so blocks and inodes can be allocated. */
static void check_bitmaps(struct checker *ck)
{
    struct image *img = ck->img;
    uint32_t blocks = img->sb->block_count, inodes = img->sb->inode_count;
    uint8_t *want = xcalloc(blocks > inodes ? blocks : inodes, 1);

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
static int name_set_add(struct name_set *set, const char *name)
{
    if ((set->used + 1) * 2 > set->capacity) {
        struct name_set bigger = { NULL, set->capacity ? set->capacity * 2 : 64, 0 };
        bigger.names = xcalloc(bigger.capacity, sizeof bigger.names[0]);
        for (uint32_t i = 0; i < set->capacity; i++)
            if (set->names[i][0])
                name_set_add(&bigger, set->names[i]);
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
    return dir_write(ck->img, d, index, &de) == 0 ? fix : NULL;
}

/* Checks entry `index` of directory d, which must be `name` naming `want`
 * ('.' or '..'), and rewrites it if it is not. */
static void check_dot_entry(struct checker *ck, uint32_t d, uint32_t index, const char *name, uint32_t want)
{
    struct fs_dirent de;
    const char *path = ck->dir_path[d];
    char shown[SHOWN_NAME_SIZE];

    dir_read(ck->img, d, index, &de);
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
    struct image *img = ck->img;
    char name[SHOWN_NAME_SIZE];
    const char *bad = bad_name(de);

    shown_name(de->name, name);
    if (bad)
        snprintf(why, len, "entry %" PRIu32 ": %s", i, bad);
    else if (de->inode >= img->sb->inode_count)
        snprintf(why, len, "entry '%s' names inode %" PRIu32 ", out of range", name, de->inode);
    else if (img->inodes[de->inode].type == FS_TYPE_FREE)
        snprintf(why, len, "entry '%s' names free inode %" PRIu32, name, de->inode);
    else if (name_set_add(&dc->names, de->name))
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

    dir_read(ck->img, dc->d, i, &de);
    if (de.inode == 0)
        return;
    if (bad_entry(ck, dc, &de, i, why, sizeof why)) {
        const char *fix = rewrite_entry(ck, dc->d, i, 0, NULL, "entry removed");
        if (dc->bad++ < BAD_ENTRIES_SHOWN)
            report(ck, fix, "directory %s (inode %" PRIu32 "): %s", ck->dir_path[dc->d], dc->d, why);
        return;
    }
    if (ck->img->inodes[de.inode].type == FS_TYPE_DIR) {
        free(ck->dir_path[de.inode]);
        ck->dir_path[de.inode] = path_join(ck->dir_path[dc->d], shown_name(de.name, name));
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
    struct image *img = ck->img;
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
    for (uint32_t i = 2; i < dir_count(img, d); i++)
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
    ck->dir_path[top] = xstrdup(path);
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
    struct image *img = ck->img;
    if (ck->lost_found)
        return ck->lost_found;
    uint32_t ino = dir_lookup(img, FS_ROOT_INODE, "lost+found", NULL);
    if (ino == 0) {
        ino = dir_create(img, FS_ROOT_INODE, "lost+found");
        if (ino == 0)
            return 0;
        ck->reached[ino] = 1;
        ck->dir_path[ino] = xstrdup("/lost+found");
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
    struct image *img = ck->img;
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
    struct image *img = ck->img;
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
        char *path = path_join("/lost+found", name);
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
    struct image *img = ck->img;
    uint32_t inodes = img->sb->inode_count;
    uint8_t *named = xcalloc(inodes, 1);
    struct fs_dirent de;

    for (uint32_t ino = 1; ino < inodes; ino++) {
        if (ck->reached[ino] || img->inodes[ino].type != FS_TYPE_DIR)
            continue;
        for (uint32_t i = 2; i < dir_count(img, ino); i++) {
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
    struct image *img = ck->img;
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

/* Prints check's last line and returns its exit status. */
static int check_summary(struct checker *ck)
{
    struct image *img = ck->img;
    const char *name = img->name;
    uint32_t files = 0, dirs = 0;

    if (ck->problems == 0) {
        for (uint32_t ino = 1; ino < img->sb->inode_count; ino++) {
            files += img->inodes[ino].type == FS_TYPE_FILE;
            dirs += img->inodes[ino].type == FS_TYPE_DIR;
        }
        printf("dmfs: %s: clean: %" PRIu32 " files, %" PRIu32 " directories, %" PRIu32 " of %" PRIu32
               " blocks and %" PRIu32 " of %" PRIu32 " inodes in use\n", name, files, dirs,
               img->sb->block_count - img->free_blocks, img->sb->block_count,
               img->sb->inode_count - 1 - img->free_inodes, img->sb->inode_count - 1);
        return STATUS_OK;
    }
    const char *s = ck->problems == 1 ? "" : "s";
    if (ck->repair)
        printf("dmfs: %s: %" PRIu32 " problem%s found, %" PRIu32 " repaired, %" PRIu32 " not repairable\n",
               name, ck->problems, s, ck->problems - ck->unrepaired, ck->unrepaired);
    else
        printf("dmfs: %s: %" PRIu32 " problem%s found, %" PRIu32 " of them repairable with --repair\n",
               name, ck->problems, s, ck->problems - ck->unrepaired);
    return STATUS_FAILED;
}

/* dmfs check [--repair] IMAGE */
static int cmd_check(int argc, char **argv)
{
    static const char *const known[] = { "--repair", NULL };
    struct args args;
    struct image image, *img = &image;
    struct fs_superblock sb;
    struct checker ck;
    char why[200];

    args_parse(argc, argv, "check", known, &args);
    args_expect(&args, 1, 1, "dmfs check [--repair] IMAGE");
    memset(&ck, 0, sizeof ck);
    ck.img = img;
    ck.repair = options.repair;

    /* Pass 1: the superblock. A bad one ends the check: nothing else can be trusted. */
    uint64_t size = image_open_file(img, args.positional[0], ck.repair, &sb);
    if (superblock_fault(&sb, size, why, sizeof why) != 0) {
        report(&ck, NULL, "%s", why);
        return check_summary(&ck);
    }
    image_load(img, &sb);
    if (img->sb->root_inode != FS_ROOT_INODE) {
        report(&ck, "set to 1", "superblock: root_inode is %" PRIu32 ", should be %u", img->sb->root_inode,
               FS_ROOT_INODE);
        img->sb->root_inode = FS_ROOT_INODE;
        meta_changed(img, img->sb, sizeof *img->sb);
    }
    if (img->sb->state != FS_STATE_CLEAN) {
        if (img->sb->state == FS_STATE_MOUNTED)
            report(&ck, "set to CLEAN", "superblock: state is MOUNTED (not cleanly unmounted, or in use)");
        else
            report(&ck, "set to CLEAN", "superblock: state is %" PRIu32 ", neither CLEAN nor MOUNTED", img->sb->state);
        img->sb->state = FS_STATE_CLEAN;
        meta_changed(img, img->sb, sizeof *img->sb);
    }

    ck.owner = xcalloc(img->sb->block_count, sizeof ck.owner[0]);
    ck.reached = xcalloc(img->sb->inode_count, 1);
    ck.found = xcalloc(img->sb->inode_count, sizeof ck.found[0]);
    ck.dir_path = xcalloc(img->sb->inode_count, sizeof ck.dir_path[0]);
    ck.queue_dir = xcalloc(img->sb->inode_count, sizeof ck.queue_dir[0]);
    ck.queue_parent = xcalloc(img->sb->inode_count, sizeof ck.queue_parent[0]);
    for (uint32_t b = 0; b < img->sb->data_start; b++)
        ck.owner[b] = OWNER_METADATA;

    check_inodes(&ck);
    check_bitmaps(&ck);
    check_tree(&ck, FS_ROOT_INODE, FS_ROOT_INODE, "/");
    check_orphans(&ck);
    check_links(&ck);
    if (ck.repair && ck.problems > 0)
        image_commit(img);
    return check_summary(&ck);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        { "mkfs", cmd_mkfs }, { "ls", cmd_ls }, { "get", cmd_get }, { "put", cmd_put },
        { "mkdir", cmd_mkdir }, { "rm", cmd_rm }, { "check", cmd_check },
    };

    if (argc < 2)
        usage("dmfs COMMAND ARGS, where COMMAND is mkfs, ls, get, put, mkdir, rm or check");
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || (i == 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0))) {
            fputs(help_text, stdout);
            return STATUS_OK;
        }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    usage("unknown command '%s'; the commands are mkfs, ls, get, put, mkdir, rm and check", argv[1]);
}
