/*
 * siphash.h — SipHash-2-4, the keyed pseudorandom function of Aumasson and
 * Bernstein ("SipHash: a fast short-input PRF", 2012), written from the
 * paper's definition (§2). It is the MAC that seals every frame between
 * kernels (netframe.h, "The seal"). Plain C with fixed-width types and no
 * library calls: compiled into the kernel and, on the host, into
 * tests/siphash_test.c (the paper's Appendix A vector and the authors'
 * published vectors for messages of 0..63 bytes) and the netframe tests.
 */
#ifndef SIPHASH_H
#define SIPHASH_H

#include <stdint.h>

#define SIPHASH_KEY_LEN 16

/* A 128-bit key as the two little-endian 64-bit words k0 and k1 of §2. */
struct siphash_key {
    uint64_t k0, k1;
};

/* The key of the 16 bytes key[0..15] (k0 from bytes 0..7, k1 from 8..15,
 * each little-endian, as §2 reads them). */
struct siphash_key siphash_key_from_bytes(const uint8_t key[SIPHASH_KEY_LEN]);

/* SipHash-2-4 of message[0..len) under `key`: the 64-bit tag of §2, whose
 * little-endian bytes are the tag as the paper prints it. */
uint64_t siphash24(const struct siphash_key *key, const uint8_t *message, uint32_t len);

/* SipHash-2-4 of message[0..len) as siphash24, where bytes [at, at +
 * 8 * words) are first copied into place from `from`: each of those words
 * is loaded once, to be stored and hashed (a frame sealed as its fragment
 * is copied in). message, at and from on word boundaries; the rest of the
 * message in place already. */
uint64_t siphash24_copy(const struct siphash_key *key, uint8_t *message, uint32_t len, uint32_t at,
                        const uint8_t *from, uint32_t words);

#endif
