/*
 * fsbench — sequential throughput of the file system: a file written and
 * read back through the request interpreter ("fs"), then the same disk
 * blocks read through the disk interface ("di") alone, so the cost of the
 * three processes above the disk can be seen.
 *
 *     fsbench [KIB]      the file's size in KiB, a multiple of 4; default 4096
 *
 * The file /fsbench (removed first if it is there, and left behind so the
 * host can check it) is written and read in requests of CHUNK (64 KiB)
 * bytes, the disk blocks one DI_READ each, as the buffer manager asks for
 * them. Prints, for each of fs_seq_write, fs_seq_read and di_seq_read:
 *     BENCH <what>_MBps N.NN MB/s                      (MB = 10^6 bytes)
 *     BENCH <what>_instr_per_byte N.NN instructions/byte
 *
 * Only the requests are measured: the file's contents are made, and what
 * is read back is checked, outside the measured spans, in a buffer as large
 * as the file. The write figures include the FS_SYNC that follows the
 * writes: until then part of the file is only in the buffer manager's
 * cache, and a write is not done before it is on the disk.
 *
 * Instructions: the sum of every process's PROCTIME (asked of the process
 * manager, PM_PS) over the span, the kernel's slot 0 included: this
 * program, the four file-system processes, and the kernel's own work while
 * no process is current (taking the disk's interrupt, copying the block out
 * of its bounce page). Not dm_instret(): under -icount QEMU's instret is its
 * virtual clock, which also runs, at real-time speed, while the machine
 * waits idle (wfi) for QEMU to finish a disk request, so it counted 2x more
 * on one run than on the next. The kernel charges that wait to no one
 * (kernel/proc.c, idle), so the sum is every instruction executed but a few
 * per wake-up, and it repeats exactly.
 *
 * MB/s comes from dm_clock_ns(), the machine clock: one nanosecond per
 * instruction while the processor works, plus the idle waits for the disk,
 * which depend on the host (the image is in its page cache, just written).
 * The time with no process running is printed beside it.
 *
 * Cache: the buffer manager holds 64 blocks (256 KiB) unless told more, no
 * more than the file, so the read through the file system is cold: each
 * data block is one miss and one DI_READ (the counts are printed). The disk
 * interface keeps no cache.
 *
 * Correctness: the data written, the data read through the file system and
 * the blocks read through the disk interface must have the same checksum
 * (FNV-1a, 64 bits), or no figure is printed. The disk blocks read are the
 * file's own: found by reading its inode and indirect blocks from the disk
 * (after the sync they are current there), in the file's order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"

#define CHUNK (64 * 1024)
#define PATH  "/fsbench"
#define SEED  11u

/* The instructions this machine has executed, its idle waits left out
 * (pm_machine_proctime). The set of processes does not change while this
 * runs. */
static uint64_t machine_proctime(void)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    uint64_t sum;
    long err = pm_machine_proctime(dm_machine(), entries, sizeof entries, &sum);
    if (err < 0) {                 /* no count: no figure rather than a wrong one */
        printf("fsbench: the process manager's process list: %s\n", dm_error_name(err));
        exit(1);
    }
    return sum;
}

/* One measured span: instructions charged to processes, machine-clock ns,
 * and instret (the virtual clock under -icount, idle waits included). */
struct meter {
    uint64_t instructions, ns, instret;
};

static void meter_start(struct meter *m)
{
    m->instructions = machine_proctime();
    m->instret = dm_instret();
    m->ns = dm_clock_ns();
}

static void meter_stop(struct meter *m)
{
    m->ns = dm_clock_ns() - m->ns;
    m->instret = dm_instret() - m->instret;
    m->instructions = machine_proctime() - m->instructions;
}

/* Byte `at` of the file: the same pattern as fstest's, so a host test can
 * make the expected contents. */
static uint8_t pattern(uint64_t at)
{
    return (uint8_t)((at * 131 + SEED) ^ (at >> 11));
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--)
        h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

static size_t chunk_at(uint64_t at, uint64_t size)
{
    return size - at < CHUNK ? (size_t)(size - at) : CHUNK;
}

/* Write file[0 .. size) to PATH in CHUNK-byte requests, then sync; the
 * file's link (read and write access). */
static long write_file(const uint8_t *file, uint64_t size, struct meter *m)
{
    long err = fs_unlink(PATH);
    if (err < 0 && err != E_NOTFOUND)
        return err;
    err = 0;
    long link = fs_create(PATH, FS_TYPE_FILE, FS_ACCESS_READ | FS_ACCESS_WRITE);
    if (link < 0)
        return link;
    meter_start(m);
    for (uint64_t at = 0; at < size && err >= 0; at += CHUNK) {
        size_t n = chunk_at(at, size);
        long done = fs_write(link, at, file + at, n);
        err = done < 0 ? done : (size_t)done != n ? E_STATE : 0;
    }
    if (err >= 0)
        err = fs_sync();
    meter_stop(m);
    return err < 0 ? err : link;
}

/* Read the file into file[0 .. size) in CHUNK-byte requests. */
static long read_file(long link, uint8_t *file, uint64_t size, struct meter *m)
{
    long err = 0;
    meter_start(m);
    for (uint64_t at = 0; at < size && err >= 0; at += CHUNK) {
        size_t n = chunk_at(at, size);
        long done = fs_read(link, at, file + at, n);
        err = done < 0 ? done : (size_t)done != n ? E_STATE : 0;
    }
    meter_stop(m);
    return err;
}

/* One block from the disk interface into the area of link `area` at
 * `offset`, over a copy of the link (the disk interface consumes the link
 * it is given, as with the buffer manager's requests). */
static long di_read(long di, long area, uint32_t block, uint64_t offset)
{
    long pass = dm_duplicatelink(area);
    if (pass < 0)
        return pass;
    struct sv_call c = { .op = DI_READ, .arg = { block, (int64_t)offset }, .pass = pass };
    return sv_call(di, &c);
}

/* Disk block `block` into `out` (len bytes of it), through the start of
 * `file`, the area of link `area`. */
static long di_read_into(long di, long area, const uint8_t *file, uint32_t block, void *out, size_t len)
{
    long err = di_read(di, area, block, 0);
    if (err >= 0)
        memcpy(out, file, len);
    return err;
}

/* Block of pointers `block` into `pointers`, unless it holds it already. */
static long load_pointers(long di, long area, const uint8_t *file, uint32_t block, uint32_t *pointers,
                          uint32_t *held)
{
    if (block == 0)
        return E_NOTFOUND;        /* every block was written: a hole is an error */
    if (*held == block)
        return 0;
    *held = block;
    return di_read_into(di, area, file, block, pointers, FS_BLOCK_SIZE);
}

/* The disk blocks of file blocks 0 .. count-1 of inode `ino` into out[],
 * found as the buffer manager finds them (fs_block_path), but read from the
 * disk directly, through `file` (the area of link `area`). */
static long file_disk_blocks(long di, long area, const uint8_t *file, uint32_t ino, uint32_t *out, uint64_t count)
{
    static uint32_t single[FS_PTRS_PER_BLOCK], top[FS_PTRS_PER_BLOCK];
    uint32_t single_held = 0, top_held = 0;
    struct fs_superblock sb;
    struct fs_inode inode;
    long err = di_read_into(di, area, file, 0, &sb, sizeof sb);
    if (err < 0)
        return err;
    if (sb.magic != FS_MAGIC || ino >= sb.inode_count)
        return E_INVAL;
    err = di_read(di, area, sb.inode_table_start + ino / FS_INODES_PER_BLOCK, 0);
    if (err < 0)
        return err;
    memcpy(&inode, file + (ino % FS_INODES_PER_BLOCK) * FS_INODE_SIZE, sizeof inode);
    for (uint64_t n = 0; n < count; n++) {
        uint32_t index[2];
        int level = fs_block_path(n, index);
        if (level == 0) {
            out[n] = inode.direct[index[0]];
        } else if (level == 1) {
            if ((err = load_pointers(di, area, file, inode.indirect, single, &single_held)) < 0)
                return err;
            out[n] = single[index[0]];
        } else {
            if ((err = load_pointers(di, area, file, inode.double_indirect, top, &top_held)) < 0 ||
                (err = load_pointers(di, area, file, top[index[0]], single, &single_held)) < 0)
                return err;
            out[n] = single[index[1]];
        }
        if (out[n] < sb.data_start || out[n] >= sb.block_count)
            return E_BOUNDS;
    }
    return 0;
}

/* Read blocks[0 .. count-1] through the disk interface into the area of
 * link `area`, one DI_READ each, in order. */
static long read_disk_blocks(long di, long area, const uint32_t *blocks, uint64_t count, struct meter *m)
{
    long err = 0;
    meter_start(m);
    for (uint64_t n = 0; n < count && err >= 0; n++)
        err = di_read(di, area, blocks[n], n * FS_BLOCK_SIZE);
    meter_stop(m);
    return err;
}

/* The buffer manager's counters; 0 or an error. */
static long bm_counters(struct bm_stats *s)
{
    long bm = sb_lookup("bm");
    if (bm < 0)
        return bm;
    struct sv_call c = { .op = BM_STATS, .pass = DM_NO_LINK, .reply_data = s, .reply_cap = sizeof *s };
    long err = sv_call(bm, &c);
    dm_destroylink(bm);
    return err;
}

/* A value given in hundredths, as N.NN. */
static void print_figure(const char *what, const char *figure, uint64_t hundredths, const char *unit)
{
    printf("BENCH %s_%s %llu.%02llu %s\n", what, figure, (unsigned long long)(hundredths / 100),
           (unsigned long long)(hundredths % 100), unit);
}

static void print_span(const char *what, const struct meter *m)
{
    printf("fsbench: %s: %llu instructions; %llu ns, of which %llu with no process running\n", what,
           (unsigned long long)m->instructions, (unsigned long long)m->ns,
           (unsigned long long)(m->instret > m->instructions ? m->instret - m->instructions : 0));
}

static int fail(const char *what, long err)
{
    printf("fsbench: %s: %s\n", what, dm_error_name(err));
    return 1;
}

static void print_results(uint64_t size, uint64_t count, const struct bm_stats *before, const struct bm_stats *after,
                          const struct meter *write, const struct meter *read, const struct meter *disk);

int main(int argc, char **argv)
{
    long kib = argc > 1 ? atol(argv[1]) : 4096;
    if (argc > 2 || kib <= 0 || kib % 4 != 0) {
        printf("usage: fsbench [KIB]   (a multiple of 4; default 4096)\n");
        return 2;
    }
    uint64_t size = (uint64_t)kib * 1024, count = size / FS_BLOCK_SIZE;
    uint8_t *file = malloc(size);
    uint32_t *blocks = malloc(count * sizeof *blocks);
    if (!file || !blocks)
        return fail("memory for the file", E_NOMEM);
    for (uint64_t i = 0; i < size; i++)
        file[i] = pattern(i);
    uint64_t written_sum = fnv1a(file, size);
    struct meter write, read, disk;

    long link = write_file(file, size, &write);
    if (link < 0)
        return fail("write", link);
    struct dm_stat st;
    long err = fs_stat(link, &st);
    if (err < 0)
        return fail("stat", err);

    memset(file, 0, size);
    struct bm_stats before, after;
    err = bm_counters(&before);
    if (err >= 0)
        err = read_file(link, file, size, &read);
    if (err >= 0)
        err = bm_counters(&after);
    if (err < 0)
        return fail("read through the file system", err);
    uint64_t read_sum = fnv1a(file, size);

    long di = sb_lookup("di");
    long area = dm_createlink(0, 0, LINK_WRITE, file, size);
    if (di < 0 || area < 0)
        return fail("disk interface", di < 0 ? di : area);
    err = file_disk_blocks(di, area, file, st.inode, blocks, count);
    memset(file, 0, size);
    if (err >= 0)
        err = read_disk_blocks(di, area, blocks, count, &disk);
    if (err < 0)
        return fail("read through the disk interface", err);
    uint64_t disk_sum = fnv1a(file, size);

    printf("fsbench: %s: %llu bytes in %d-byte requests; checksum written %016llx, read %016llx, disk %016llx\n",
           PATH, (unsigned long long)size, CHUNK, (unsigned long long)written_sum, (unsigned long long)read_sum,
           (unsigned long long)disk_sum);
    if (read_sum != written_sum || disk_sum != written_sum) {
        printf("fsbench: the data read back differs from the data written\n");
        return 1;
    }
    print_results(size, count, &before, &after, &write, &read, &disk);
    return 0;
}

/* What the three spans measured: the buffer manager's misses and hits
 * while the file was read through the file system, each span's
 * instructions and time, and the BENCH figures. */
static void print_results(uint64_t size, uint64_t count, const struct bm_stats *before, const struct bm_stats *after,
                          const struct meter *write, const struct meter *read, const struct meter *disk)
{
    printf("fsbench: read through the file system: buffer manager misses %llu hits %llu (file of %llu blocks)\n",
           (unsigned long long)(after->misses - before->misses), (unsigned long long)(after->hits - before->hits),
           (unsigned long long)count);
    print_span("write and sync", write);
    print_span("read through the file system", read);
    print_span("read through the disk interface", disk);
    static const char *const what[] = { "fs_seq_write", "fs_seq_read", "di_seq_read" };
    const struct meter *const measured[] = { write, read, disk };
    for (int i = 0; i < 3; i++)   /* MB/s: 10^6 bytes a second of machine clock */
        print_figure(what[i], "MBps", measured[i]->ns ? size * 100000 / measured[i]->ns : 0, "MB/s");
    for (int i = 0; i < 3; i++)
        print_figure(what[i], "instr_per_byte", measured[i]->instructions * 100 / size, "instructions/byte");
}
