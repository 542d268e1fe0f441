/*
 * fsseq — the sequential user of the thesis's file-system study (Miller
 * 1984, §5.3.1): it writes a whole file from its start to its end, then
 * reads it back the same way and checks every byte, ROUNDS times.
 *
 *     fsseq FILE SIZE_KIB [ROUNDS] [SEED]      ROUNDS 1 and SEED 1 by default
 *
 * FILE is made, or emptied when it is there, and left behind. Every request
 * moves REQUEST bytes (4 KiB, the file system's block, so each request is
 * one block for the buffer manager). Round r (from 0) writes the bytes of
 * the xorshift stream seeded with SEED * 65536 + r (user/lib/workload.h),
 * so each round changes every block, and a block read from the wrong place,
 * the wrong file or an earlier round is caught. The file holds the last
 * round's bytes at the end; the host test makes them again to check it.
 *
 * On success it prints one line and exits 0:
 *     fsseq FILE: ok size=BYTES rounds=R requests=N bytes=MOVED ns=T instructions=I
 * requests: reads and writes together; bytes: what they moved; ns: the
 * machine clock over all rounds; instructions: those this process executed
 * (its PROCTIME). Not dm_instret(): under -icount the instruction counter is
 * the machine's virtual clock, idle waits included, so it would repeat ns.
 * On failure it says what failed and exits 1; bad arguments exit 2.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "workload.h"

#define REQUEST    4096
#define MAX_KIB    (16u * 1024)     /* 16 MiB, half the system disk */
#define MAX_ROUNDS 1000u

static const char *path;
static uint8_t out[REQUEST], in[REQUEST];

/* Say why a file-system request failed (its error, or the bytes it moved
 * when it moved too few), and give the exit status. */
static int failed(const char *what, uint64_t offset, long result)
{
    if (result < 0)
        fprintf(stderr, "fsseq: %s: %s at offset %llu: %s (%s)\n", path, what, (unsigned long long)offset,
                dm_error_name(result), dm_error_text(result));
    else
        fprintf(stderr, "fsseq: %s: %s at offset %llu moved %ld of %d bytes\n", path, what,
                (unsigned long long)offset, result, REQUEST);
    return 1;
}

/* One round: the whole file written with `seed`'s bytes, then read back and
 * compared. 0, or 1 after saying what failed. */
static int round_trip(long file, uint64_t size, uint64_t seed, uint64_t *requests)
{
    struct prng bytes;
    prng_seed(&bytes, seed);
    for (uint64_t at = 0; at < size; at += REQUEST) {
        prng_fill(&bytes, out, REQUEST);
        long n = fs_write(file, at, out, REQUEST);
        if (n != REQUEST)
            return failed("write", at, n);
        ++*requests;
    }
    prng_seed(&bytes, seed);
    for (uint64_t at = 0; at < size; at += REQUEST) {
        prng_fill(&bytes, out, REQUEST);
        long n = fs_read(file, at, in, REQUEST);
        if (n != REQUEST)
            return failed("read", at, n);
        ++*requests;
        if (memcmp(in, out, REQUEST) != 0) {
            size_t i = 0;
            while (in[i] == out[i])
                i++;
            fprintf(stderr, "fsseq: %s: byte %llu reads 0x%02x, 0x%02x was written\n", path,
                    (unsigned long long)(at + i), in[i], out[i]);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t kib, rounds = 1, seed = 1;
    if (argc < 3 || argc > 5 || workload_number(argv[2], 1, MAX_KIB, &kib) < 0 ||
        (argc > 3 && workload_number(argv[3], 1, MAX_ROUNDS, &rounds) < 0) ||
        (argc > 4 && workload_number(argv[4], 0, UINT32_MAX, &seed) < 0)) {
        fprintf(stderr, "usage: fsseq FILE SIZE_KIB [ROUNDS] [SEED]   (SIZE_KIB 1 to %u, ROUNDS 1 to %u)\n",
                MAX_KIB, MAX_ROUNDS);
        return 2;
    }
    path = argv[1];
    uint64_t size = kib * 1024, requests = 0;
    long file = workload_empty_file(path);
    if (file < 0) {
        fprintf(stderr, "fsseq: %s: cannot make it: %s (%s)\n", path, dm_error_name(file), dm_error_text(file));
        return 1;
    }
    uint64_t ns = dm_clock_ns(), instructions = dm_proctime();
    for (uint64_t r = 0; r < rounds; r++)
        if (round_trip(file, size, seed * 65536 + r, &requests) != 0)
            return 1;
    ns = dm_clock_ns() - ns;
    instructions = dm_proctime() - instructions;
    fs_close(file);
    printf("fsseq %s: ok size=%llu rounds=%llu requests=%llu bytes=%llu ns=%llu instructions=%llu\n", path,
           (unsigned long long)size, (unsigned long long)rounds, (unsigned long long)requests,
           (unsigned long long)(requests * REQUEST), (unsigned long long)ns, (unsigned long long)instructions);
    return 0;
}
