/*
 * workload.h — what the workload programs (fsseq, fsrand, tsp) share: a
 * pseudo-random number generator that a host script can repeat exactly,
 * an empty file to work on, and the parsing of their numeric arguments.
 *
 * The generator is Marsaglia's xorshift64 (shifts 13, 7, 17; "Xorshift
 * RNGs", 2003), started from the state seed ^ WORKLOAD_SEED_MIX (or 1 when
 * that is 0, which xorshift must avoid). It is three lines in any language,
 * so tests/test_workloads.py makes the same numbers in Python: the bytes of
 * fsseq's files and tsp's distance matrices. Not for anything that needs
 * good statistics or secrecy.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define WORKLOAD_SEED_MIX 0x9e3779b97f4a7c15ull   /* 2^64 / golden ratio: seeds 0, 1, 2 ... differ at once */

struct prng {
    uint64_t state;     /* never 0 */
};

void prng_seed(struct prng *r, uint64_t seed);
/* The next 64-bit number. */
uint64_t prng_next(struct prng *r);
/* A number in [0, n), n > 0: the next number modulo n (biased by less than
 * n / 2^64, which no workload here can notice). */
uint64_t prng_below(struct prng *r, uint64_t n);
/* n bytes: the next numbers' bytes, least significant first, as many
 * numbers as needed (the last one's high bytes unused when n % 8 != 0). */
void prng_fill(struct prng *r, void *buf, size_t n);

/* A link to the file at path with read and write access, the file made,
 * or emptied when it is there; or an error (fsclient.h). */
long workload_empty_file(const char *path);

/* The decimal number in s, if it is all digits and within [min, max]:
 * 0 and *value; else -1. */
int workload_number(const char *s, uint64_t min, uint64_t max, uint64_t *value);

#endif
