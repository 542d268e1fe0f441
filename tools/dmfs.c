/*
 * dmfs.c — the host tool for DEMOS/MP file-system disk images: make an image
 * holding given files, list it, copy files out of it and into it, and check
 * and repair it. The on-disk format is user/lib/fs_format.h and nothing
 * else; `dmfs --help` documents the commands, exit statuses and the repair
 * policy.
 *
 * How changes are made. The image is worked on through fs/fsimage.c (its
 * superblock, bitmaps and inode table in memory, directory and indirect
 * blocks through a cache), with this file's block I/O on the image file.
 * Every change is made in memory; only file data is written straight to the
 * image, and only into blocks that were free. image_commit() then writes
 * the changed cached blocks, the changed metadata blocks and last the
 * superblock. Any error before the commit therefore leaves the image as it
 * was: errors print `dmfs: ...` and exit at once.
 *
 * `check` is fs/fsck.c, the checker the disk interface also runs at mount.
 * It makes its repairs the same way in both modes and commits them only
 * with --repair, so a plain check reports exactly what --repair would fix.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output_check.h"
#include "fsck.h"
#include "fsimage.h"

/* Exit statuses (see EXIT STATUS in the help text). */
enum {
    STATUS_OK = 0,       /* done; check: the image is clean */
    STATUS_FAILED = 1,   /* the operation failed; check: problems found */
    STATUS_ERROR = CLI_STATUS_USAGE,   /* bad usage (usage()), or an image or host file unreadable */
};

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
"    user/lib/fs_format.h, to attach to a node as its disk (make run DISK=IMAGE).\n"
"    A PATH inside the image names directories from the root, separated by\n"
"    '/' (a leading '/' is optional); a name is 1 to 59 bytes. Options may\n"
"    come anywhere after the command; '--' ends them.\n"
"\n"
"    A file dmfs writes (mkfs's IMAGE, get's HOSTFILE, put's IMAGE) must not\n"
"    be one of the files it reads (the same file, also through a link:\n"
"    `dmfs: OUT: is the input IN`) and, if it exists, must be a regular\n"
"    file (`dmfs: OUT: is not a regular file`): both are refused with\n"
"    status 1 before anything is written.\n"
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
"    Beyond user/lib/fs_format.h, dmfs assumes: bit i of a bitmap is bit i % 8 of\n"
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
"    dmfs mkfs disk.img 64 build/user/programs/hello.elf=/bin/hello notes.txt\n"
"    dmfs ls -lR disk.img\n"
"    dmfs get disk.img /trace/log trace.log\n"
"    dmfs check --repair disk.img\n";

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

const char cli_program[] = "dmfs";   /* in every error message (cli.h) */

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
/* The image file: block I/O for fs/fsimage.c, opening an image        */
/* ------------------------------------------------------------------ */

/* The host file behind the image being worked on (one per run). */
struct image_file {
    const char *name;              /* as given on the command line, for messages */
    int fd;
};

static struct image_file image_file;

/* Reads block b of the image file into buf; an I/O error ends the program
 * here, with the system's reason, so this never returns -1. */
static int host_block_read(void *ctx, uint32_t b, void *buf)
{
    struct image_file *f = ctx;
    ssize_t n = pread(f->fd, buf, FS_BLOCK_SIZE, (off_t)b * FS_BLOCK_SIZE);
    if (n != (ssize_t)FS_BLOCK_SIZE)
        die(STATUS_ERROR, "%s: block %" PRIu32 ": %s", f->name, b, n < 0 ? strerror(errno) : "short read");
    return 0;
}

/* Writes buf to block b of the image file; an I/O error ends the program. */
static int host_block_write(void *ctx, uint32_t b, const void *buf)
{
    struct image_file *f = ctx;
    ssize_t n = pwrite(f->fd, buf, FS_BLOCK_SIZE, (off_t)b * FS_BLOCK_SIZE);
    if (n != (ssize_t)FS_BLOCK_SIZE)
        die(STATUS_ERROR, "%s: writing block %" PRIu32 ": %s", f->name, b, n < 0 ? strerror(errno) : "short write");
    return 0;
}

/* Waits until what was written is on the disk. */
static int host_flush(void *ctx)
{
    struct image_file *f = ctx;
    if (fsync(f->fd) != 0)
        die(STATUS_ERROR, "%s: %s", f->name, strerror(errno));
    return 0;
}

static uint64_t host_now(void *ctx)
{
    (void)ctx;
    return now_ns();
}

/* The block I/O of image_file; write is left out when it is read-only. */
static const struct fs_image_io host_io = { &image_file, host_block_read, host_block_write, host_flush, host_now };
static const struct fs_image_io host_io_read_only = { &image_file, host_block_read, NULL, NULL, host_now };

/* fs/fsimage.c's fail function for dmfs: the message, then exit. */
static void image_failed(struct fs_image *img, enum fs_image_failure why, const char *message)
{
    (void)img;
    die(why == FS_IMAGE_DAMAGED ? STATUS_FAILED : STATUS_ERROR, "%s", message);
}

/* Opens the image file as image_file; returns its size in bytes. A file
 * that cannot be opened ends the program (status 2). */
static uint64_t host_open(const char *path, int writable)
{
    struct stat st;
    image_file.name = path;
    image_file.fd = open(path, writable ? O_RDWR : O_RDONLY);
    if (image_file.fd < 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    if (fstat(image_file.fd, &st) != 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
        die(STATUS_ERROR, "%s: not a regular file", path);
    return (uint64_t)st.st_size;
}

/* Sets up img (empty) to work on image_file under the name `path`. */
static void image_attach(struct fs_image *img, const char *path, int writable)
{
    memset(img, 0, sizeof *img);
    img->name = path;
    img->io = writable ? &host_io : &host_io_read_only;
    img->fail = image_failed;
}

/* Opens an image for ls, get, put, mkdir and rm: a superblock that is not
 * sound ends the program (status 1). A MOUNTED image is refused for writing
 * and read with a warning. */
static void image_open(struct fs_image *img, const char *path, int writable)
{
    struct fs_superblock sb;
    char why[200];
    uint64_t size = host_open(path, writable);

    image_attach(img, path, writable);
    memset(&sb, 0, sizeof sb);
    if (size >= FS_BLOCK_SIZE) {
        uint8_t block[FS_BLOCK_SIZE];
        block_read(img, 0, block);
        memcpy(&sb, block, sizeof sb);
    }
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

/* ------------------------------------------------------------------ */
/* File contents                                                       */
/* ------------------------------------------------------------------ */

/* Writes `size` bytes into inode ino, which holds no blocks; the caller has
 * made sure the blocks are free. */
static void file_write(struct fs_image *img, uint32_t ino, const uint8_t *data, uint64_t size)
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
static void file_read(struct fs_image *img, uint32_t ino, FILE *out, const char *out_name)
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
static void path_parent(struct fs_image *img, const char *path, uint32_t *parent, char last[FS_NAME_MAX + 1])
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
static uint32_t path_resolve(struct fs_image *img, const char *path)
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
static uint32_t path_parent_for_change(struct fs_image *img, const char *path, char last[FS_NAME_MAX + 1])
{
    uint32_t parent;
    path_parent(img, path, &parent, last);
    if (last[0] == 0)
        die(STATUS_FAILED, "%s: %s: is the root directory", img->name, path);
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        die(STATUS_FAILED, "%s: %s: cannot make or remove '.' or '..'", img->name, path);
    return parent;
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
static void put_file(struct fs_image *img, const char *path, const uint8_t *data, uint64_t size)
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
static void make_parents(struct fs_image *img, const char *path)
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
static void remove_path(struct fs_image *img, const char *path)
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
        for (uint32_t i = 2; i < dir_count(img, ino); i = dir_next(img, ino, i)) {
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

/* Exits (status 1) unless `out` may be written: it must not be one of the
 * `n` files read (`inputs`) nor anything but a regular file (output_check.h). */
static void check_output(const char *out, const char *const *inputs, size_t n)
{
    char why[4200];
    if (output_check(out, inputs, n, why, sizeof why) != 0)
        die(STATUS_FAILED, "%s: %s", out, why);
}

static void create_temporary(struct fs_image *img, const char *path, uint64_t blocks);
static void put_host_file(struct fs_image *img, const char *spec);

/* dmfs mkfs [--force] [--inodes N] IMAGE SIZE_MB [HOSTFILE[=PATH] ...] */
static int cmd_mkfs(int argc, char **argv)
{
    static const char *const known[] = { "--force", "--inodes=", NULL };
    static const char synopsis[] = "dmfs mkfs [--force] [--inodes N] IMAGE SIZE_MB [HOSTFILE[=PATH] ...]";
    struct args args;
    struct fs_superblock sb;
    struct fs_image image, *img = &image;
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
    const char **hosts = xcalloc((size_t)args.count, sizeof *hosts);
    for (int i = 2; i < args.count; i++) {
        char *host = xstrdup(args.positional[i]), *equals = strrchr(host, '=');
        if (equals)
            *equals = 0;
        hosts[i] = host;
    }
    check_output(path, hosts, (size_t)args.count);
    for (int i = 2; i < args.count; i++)
        free((char *)hosts[i]);
    free(hosts);

    create_temporary(img, path, blocks);
    image_format(img, &sb);   /* the metadata and the root (fs/fsimage.c) */
    for (int i = 2; i < args.count; i++)
        put_host_file(img, args.positional[i]);
    image_commit(img);
    if (close(image_file.fd) != 0 || rename(mkfs_temporary, path) != 0)
        die(STATUS_ERROR, "%s: %s", path, strerror(errno));
    free(mkfs_temporary);
    mkfs_temporary = NULL;
    return STATUS_OK;
}

/* Create mkfs's temporary file beside IMAGE (`path`), of `blocks` blocks,
 * for img to be written to (its errors name IMAGE); the file is removed at
 * exit unless mkfs finishes. */
static void create_temporary(struct fs_image *img, const char *path, uint64_t blocks)
{
    size_t len = strlen(path) + 16;
    mkfs_temporary = xcalloc(len, 1);
    snprintf(mkfs_temporary, len, "%s.tmp-XXXXXX", path);
    image_attach(img, path, 1);
    image_file.name = path;
    image_file.fd = mkstemp(mkfs_temporary);
    if (image_file.fd < 0)
        die(STATUS_ERROR, "%s: %s", mkfs_temporary, strerror(errno));
    atexit(mkfs_cleanup);
    if (fchmod(image_file.fd, 0644) != 0 || ftruncate(image_file.fd, (off_t)(blocks * FS_BLOCK_SIZE)) != 0)
        die(STATUS_ERROR, "%s: %s", mkfs_temporary, strerror(errno));
}

/* Put one HOSTFILE[=PATH] argument into img (split at the last '='; PATH
 * defaults to /HOSTFILE's last name), making its parent directories. */
static void put_host_file(struct fs_image *img, const char *spec)
{
    char *host = xstrdup(spec), *target, *slash;
    char *equals = strrchr(host, '=');
    uint64_t size;
    if (equals) {
        *equals = 0;
        target = xstrdup(equals + 1);
    } else {
        slash = strrchr(host, '/');
        target = path_join(img, "/", slash ? slash + 1 : host);
    }
    uint8_t *data = host_read(host, &size);
    make_parents(img, target);
    put_file(img, target, data, size);
    free(data);
    free(target);
    free(host);
}

/* ------------------------------------------------------------------ */
/* ls, get, put, mkdir, rm                                             */
/* ------------------------------------------------------------------ */

/* One line of ls: the name, or with -l type, inode, nlink, size and name. */
static void ls_line(struct fs_image *img, uint32_t ino, const char *name)
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
static void ls_directory(struct fs_image *img, uint32_t dino, const char *path, uint8_t *visited)
{
    uint32_t count = dir_count(img, dino), n = 0, room = 64;
    struct listed *entries = xcalloc(room, sizeof *entries);   /* grown as names are found: the */
    struct fs_dirent de;                                       /* size may be mostly holes */

    visited[dino] = 1;
    for (uint32_t i = 0; i < count; i = dir_next(img, dino, i)) {
        dir_read(img, dino, i, &de);
        de.name[FS_NAME_MAX] = 0;
        if (de.inode == 0 || strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0)
            continue;
        if (de.inode >= img->sb->inode_count)
            die(STATUS_FAILED, "%s: %s: entry '%s' names inode %" PRIu32 ", out of range; run dmfs check",
                img->name, path, de.name, de.inode);
        if (n == room) {
            room *= 2;
            entries = realloc(entries, (size_t)room * sizeof *entries);
            if (entries == NULL)
                die(STATUS_ERROR, "out of memory (%u names)", room);
        }
        memcpy(entries[n].name, de.name, sizeof de.name);
        entries[n++].ino = de.inode;
    }
    qsort(entries, n, sizeof *entries, listed_compare);
    for (uint32_t i = 0; i < n; i++) {
        if (!options.recursive) {
            ls_line(img, entries[i].ino, entries[i].name);
            continue;
        }
        char *full = path_join(img, path, entries[i].name);
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
    struct fs_image img;

    args_parse(argc, argv, "ls", known, &args);
    args_expect(&args, 1, 2, "dmfs ls [-l] [-R] IMAGE [PATH]");
    const char *path = args.count > 1 ? args.positional[1] : "/";
    image_open(&img, args.positional[0], 0);
    uint32_t ino = path_resolve(&img, path);
    if (inode_at(&img, ino)->type != FS_TYPE_DIR) {
        ls_line(&img, ino, path);
    } else {
        uint8_t *visited = xcalloc(img.sb->inode_count, 1);
        char *start = path_join(&img, "/", path[0] == '/' ? path + 1 : path);
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
    struct fs_image img;
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
        check_output(out_name, (const char *const *)args.positional, 1);
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
    struct fs_image img;
    uint64_t size;

    args_parse(argc, argv, "put", known, &args);
    args_expect(&args, 3, 3, "dmfs put IMAGE HOSTFILE PATH");
    check_output(args.positional[0], (const char *const *)args.positional + 1, 1);
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
    struct fs_image img;
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
    struct fs_image img;

    args_parse(argc, argv, "rm", known, &args);
    args_expect(&args, 2, 2, "dmfs rm IMAGE PATH");
    image_open(&img, args.positional[0], 1);
    remove_path(&img, args.positional[1]);
    image_commit(&img);
    return STATUS_OK;
}
/* ------------------------------------------------------------------ */
/* check (fs/fsck.c)                                                   */
/* ------------------------------------------------------------------ */

/* fsck's report function: one problem, `dmfs: IMAGE: what is wrong`. */
static void check_report(void *ctx, const char *line)
{
    struct image_file *f = ctx;
    printf("dmfs: %s: %s\n", f->name, line);
}

/* Prints check's last line and returns its exit status. */
static int check_summary(const char *name, const struct fsck_result *r, int repair)
{
    if (r->problems == 0) {
        printf("dmfs: %s: clean: %" PRIu32 " files, %" PRIu32 " directories, %" PRIu32 " of %" PRIu32
               " blocks and %" PRIu32 " of %" PRIu32 " inodes in use\n", name, r->files, r->directories,
               r->blocks_used, r->block_count, r->inodes_used, r->inode_count);
        return STATUS_OK;
    }
    const char *s = r->problems == 1 ? "" : "s";
    if (repair)
        printf("dmfs: %s: %" PRIu32 " problem%s found, %" PRIu32 " repaired, %" PRIu32 " not repairable\n",
               name, r->problems, s, r->problems - r->unrepaired, r->unrepaired);
    else
        printf("dmfs: %s: %" PRIu32 " problem%s found, %" PRIu32 " of them repairable with --repair\n",
               name, r->problems, s, r->problems - r->unrepaired);
    return STATUS_FAILED;
}

/* dmfs check [--repair] IMAGE */
static int cmd_check(int argc, char **argv)
{
    static const char *const known[] = { "--repair", NULL };
    struct args args;
    struct fsck_result result;

    args_parse(argc, argv, "check", known, &args);
    args_expect(&args, 1, 1, "dmfs check [--repair] IMAGE");
    const char *path = args.positional[0];
    struct fsck_disk disk = {
        .name = path,
        .size = host_open(path, options.repair),
        .io = options.repair ? host_io : host_io_read_only,
        .report = check_report,
    };
    if (fsck_run(&disk, options.repair ? FSCK_REPAIR : 0, &result) != 0)
        die(result.failure == FS_IMAGE_DAMAGED ? STATUS_FAILED : STATUS_ERROR, "%s", result.failure_message);
    return check_summary(path, &result, options.repair);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static const struct cli_command commands[] = {
        { "mkfs", cmd_mkfs }, { "ls", cmd_ls }, { "get", cmd_get }, { "put", cmd_put },
        { "mkdir", cmd_mkdir }, { "rm", cmd_rm }, { "check", cmd_check },
    };
    return cli_main(argc, argv, commands, sizeof commands / sizeof commands[0], help_text, 1);
}
