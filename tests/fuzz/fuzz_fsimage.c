/*
 * fuzz_fsimage.c — libFuzzer target: the file-system checker (fs/fsck.c)
 * and the image layer (fs/fsimage.c) on damaged images, as `dmfs check
 * [--repair]`, `dmfs ls` and `dmfs get` and the disk interface at mount
 * meet them.
 *
 * The image. A new, empty file system of IMAGE_BLOCKS blocks and
 * IMAGE_INODES inodes is made once in memory (image_format, as `dmfs mkfs
 * --inodes 32 IMAGE 1` makes it); each input is a list of patches laid
 * over it:
 *     uint8 block, uint16 offset (little-endian; taken modulo the block
 *     size), uint8 length, then `length` bytes (fewer at the input's end)
 * written at that block and offset (cut at the block's end). The seeds
 * (tests/fuzz/corpus/fsimage, scripts/fuzz-seeds.py) are real dmfs images
 * with files and directories, damaged or not, as patches over this one.
 *
 * What must hold:
 *   - a check ends (fsck_run returns 0), or fails only because the image
 *     is damaged past what it can follow (never an I/O error, memory or an
 *     internal error: the image is in memory and small);
 *   - a check without --repair reports exactly the problems a repair then
 *     reports (fsck.h: "a check without it reports exactly what a repair
 *     would fix"), line for line but for the repair's "(fixed: ...)";
 *   - a repair that leaves nothing unrepaired leaves a clean image: a
 *     check afterwards finds no problem; a check that finds none writes
 *     nothing;
 *   - the image layer walking every directory and file block as dmfs ls
 *     and get do fails only as damaged, and not at all once repaired.
 * Run by scripts/fuzz.py (README, "Fuzzing").
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"
#include "fsimage.h"

#define IMAGE_BLOCKS 256u            /* 1 MiB: one patch's block byte reaches every block */
#define IMAGE_INODES 32u
#define WALK_ENTRIES 4096u           /* the walk's bounds in one directory, one file */
#define WALK_BLOCKS  2048u

#define REQUIRE(cond) ((cond) ? (void)0 : fail(__FILE__, __LINE__, #cond))

/* Stop the run with `what`: libFuzzer saves the input as a crash. */
static void fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "fuzz_fsimage: %s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

/* The new file system, and the image the input damages (its blocks that
 * differ from base are marked in `touched`, to be restored next run). */
static uint8_t base[IMAGE_BLOCKS][FS_BLOCK_SIZE];
static uint8_t image[IMAGE_BLOCKS][FS_BLOCK_SIZE];
static uint8_t touched[IMAGE_BLOCKS];
static uint32_t writes;              /* blocks written since the count was cleared */

/* Block I/O on `image` (ctx unused). */
static int image_read(void *ctx, uint32_t b, void *buf)
{
    (void)ctx;
    REQUIRE(b < IMAGE_BLOCKS);
    memcpy(buf, image[b], FS_BLOCK_SIZE);
    return 0;
}

static int image_write(void *ctx, uint32_t b, const void *buf)
{
    (void)ctx;
    REQUIRE(b < IMAGE_BLOCKS);
    memcpy(image[b], buf, FS_BLOCK_SIZE);
    touched[b] = 1;
    writes++;
    return 0;
}

static const struct fs_image_io read_write = { NULL, image_read, image_write, NULL, NULL };
static const struct fs_image_io read_only = { NULL, image_read, NULL, NULL, NULL };

/* The failure that ended an operation on an image, and where to go back. */
static jmp_buf failed;
static enum fs_image_failure failure;

/* The image layer's fail function outside the checker: back to the caller. */
static void image_failed(struct fs_image *img, enum fs_image_failure why, const char *message)
{
    (void)img, (void)message;
    failure = why;
    longjmp(failed, 1);
}

/* Make the base image once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    struct fs_superblock sb;
    struct fs_image img = { .name = "base", .io = &read_write, .fail = image_failed };
    REQUIRE(fs_layout(IMAGE_BLOCKS, IMAGE_INODES, &sb) == 0);
    REQUIRE(setjmp(failed) == 0);
    image_format(&img, &sb);
    image_commit(&img);
    image_free(&img);
    memcpy(base, image, sizeof image);
    memset(touched, 0, sizeof touched);
    return 0;
}

/* Lay the input's patches over the base image. */
static void apply_patches(const uint8_t *data, size_t size)
{
    for (uint32_t b = 0; b < IMAGE_BLOCKS; b++)
        if (touched[b]) {
            memcpy(image[b], base[b], FS_BLOCK_SIZE);
            touched[b] = 0;
        }
    size_t at = 0;
    while (at + 4 <= size) {
        uint32_t block = data[at], offset = (data[at + 1] | (uint32_t)data[at + 2] << 8) % FS_BLOCK_SIZE;
        size_t length = data[at + 3];
        at += 4;
        if (length > size - at)
            length = size - at;
        if (length > FS_BLOCK_SIZE - offset)
            length = FS_BLOCK_SIZE - offset;
        memcpy(image[block] + offset, data + at, length);
        touched[block] = 1;
        at += length;
    }
}

/* What one check reported: how many lines, and a hash of them without a
 * repair's "(fixed: ...)", so that a check and a repair can be compared. */
struct report_log {
    uint32_t lines;
    uint64_t hash;
};

/* fsck's report function: count the line and hash what it says is wrong. */
static void report_line(void *ctx, const char *line)
{
    struct report_log *log = ctx;
    const char *fixed = strstr(line, " (fixed: ");
    size_t n = fixed ? (size_t)(fixed - line) : strlen(line);
    log->hash ^= 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        log->hash = (log->hash ^ (uint8_t)line[i]) * 0x100000001b3ull;
    log->hash = log->hash * 31 + log->lines++;
}

/* Run the checker over the image; its status, with *result and *log. */
static int check(unsigned flags, struct fsck_result *result, struct report_log *log)
{
    struct fsck_disk disk = { "fuzzed", sizeof image, read_only, report_line };
    if (flags & FSCK_REPAIR)
        disk.io = read_write;
    memset(log, 0, sizeof *log);
    disk.io.ctx = log;
    int status = fsck_run(&disk, flags, result);
    REQUIRE(status == 0 || result->failure == FS_IMAGE_DAMAGED);
    REQUIRE(status != 0 || result->problems == log->lines);
    return status;
}

/* Walk the tree from the root as dmfs ls -R and get do: every entry of
 * every directory reached, every block of every file (within the walk's
 * bounds). Returns 0, or the failure that stopped it. */
static enum fs_image_failure walk(void)
{
    static struct fs_image img;
    static uint8_t visited[IMAGE_INODES], data[FS_BLOCK_SIZE];
    static uint32_t queue[IMAGE_INODES];
    struct fs_superblock sb;
    char why[200];

    memset(&img, 0, sizeof img);
    img.name = "fuzzed";
    img.io = &read_only;
    img.fail = image_failed;
    memcpy(&sb, image[0], sizeof sb);
    if (superblock_fault(&sb, sizeof image, why, sizeof why) != 0)
        return 0;
    failure = 0;
    if (setjmp(failed) == 0) {
        image_load(&img, &sb);
        uint32_t head = 0, tail = 0;
        memset(visited, 0, sizeof visited);
        visited[FS_ROOT_INODE] = 1;
        queue[tail++] = FS_ROOT_INODE;
        while (head < tail) {
            uint32_t d = queue[head++];
            for (uint32_t i = 0; i < dir_count(&img, d) && i < WALK_ENTRIES; i = dir_next(&img, d, i)) {
                struct fs_dirent de;
                dir_read(&img, d, i, &de);
                if (de.inode == 0 || de.inode >= img.sb->inode_count || visited[de.inode])
                    continue;
                struct fs_inode *ip = inode_at(&img, de.inode);
                visited[de.inode] = 1;
                if (ip->type == FS_TYPE_DIR)
                    queue[tail++] = de.inode;
                for (uint64_t n = 0; ip->type == FS_TYPE_FILE && n < blocks_for_size(ip->size) && n < WALK_BLOCKS; n++) {
                    uint32_t b = file_block(&img, de.inode, n);
                    REQUIRE(b == 0 || (b >= img.sb->data_start && b < img.sb->block_count));
                    if (b)
                        block_read(&img, b, data);
                }
            }
        }
    }
    image_free(&img);
    return failure;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fsck_result first, repaired, after;
    struct report_log first_log, repaired_log, after_log;

    apply_patches(data, size);
    enum fs_image_failure walked = walk();
    REQUIRE(walked == 0 || walked == FS_IMAGE_DAMAGED);

    int status = check(0, &first, &first_log);
    writes = 0;
    REQUIRE(check(FSCK_REPAIR, &repaired, &repaired_log) == status);
    REQUIRE(repaired_log.lines == first_log.lines && repaired_log.hash == first_log.hash);
    if (status != 0)
        return 0;
    REQUIRE(repaired.problems == first.problems && repaired.unrepaired == first.unrepaired);
    REQUIRE(first.problems > 0 || writes == 0);
    if (first.problems == 0 || first.unrepaired > 0)
        return 0;
    REQUIRE(check(0, &after, &after_log) == 0);
    REQUIRE(after.problems == 0);
    REQUIRE(walk() == 0);
    return 0;
}
