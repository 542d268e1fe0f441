/*
 * siphash.c — SipHash-2-4 (siphash.h), from Aumasson and Bernstein,
 * "SipHash: a fast short-input PRF" (2012), §2: initialisation, compression
 * with c = 2 SipRounds per message word, finalisation with d = 4. A
 * word-aligned message is read a word at a time (the words are
 * little-endian: this file is for little-endian machines, RISC-V and the
 * host's); any other byte by byte.
 */
#include "siphash.h"

/* x rotated left by b bits (0 < b < 64): one instruction (rol) where the
 * compiler may use RISC-V's Zbb, as the Makefile has it for this file. */
static inline uint64_t rotl(uint64_t x, int b)
{
    return x << b | x >> (64 - b);
}

/* A word that may alias any bytes (the message is bytes). */
typedef uint64_t __attribute__((may_alias)) siphash_word;

/* The eight bytes at p as a little-endian word (§2: "m_i ... little-endian"). */
static inline uint64_t word_at(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* The internal state v0..v3 of §2. */
struct state {
    uint64_t v0, v1, v2, v3;
};

/* One SipRound (§2, Fig. 2.1): three ARX networks' worth of additions,
 * rotations and xors over the four words. */
static inline void sip_round(struct state *s)
{
    s->v0 += s->v1;
    s->v2 += s->v3;
    s->v1 = rotl(s->v1, 13);
    s->v3 = rotl(s->v3, 16);
    s->v1 ^= s->v0;
    s->v3 ^= s->v2;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v1;
    s->v0 += s->v3;
    s->v1 = rotl(s->v1, 17);
    s->v3 = rotl(s->v3, 21);
    s->v1 ^= s->v2;
    s->v3 ^= s->v0;
    s->v2 = rotl(s->v2, 32);
}

/* Compression of one message word m (§2): v3 ^= m, c = 2 SipRounds,
 * v0 ^= m. */
static inline void compress(struct state *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);
    sip_round(s);
    s->v0 ^= m;
}

struct siphash_key siphash_key_from_bytes(const uint8_t key[SIPHASH_KEY_LEN])
{
    return (struct siphash_key){ word_at(key), word_at(key + 8) };
}

/* The three steps of §2 that siphash24 and siphash24_copy share, each
 * inlined wherever it is used (always: the state then stays in registers).
 * Initialisation: the key xored with the constants
 * "somepseudorandomlygeneratedbytes". */
static inline __attribute__((always_inline)) void begin(struct state *s, const struct siphash_key *key)
{
    s->v0 = key->k0 ^ 0x736f6d6570736575ull;
    s->v1 = key->k1 ^ 0x646f72616e646f6dull;
    s->v2 = key->k0 ^ 0x6c7967656e657261ull;
    s->v3 = key->k1 ^ 0x7465646279746573ull;
}

/* Compression of the `count` message words at `words` (any alignment). */
static inline __attribute__((always_inline)) void absorb(struct state *s, const uint8_t *words, uint32_t count)
{
    const uint8_t *p = words, *end = words + 8 * (uint64_t)count;
    if (((uintptr_t)p & 7) == 0) {
        /* Word-aligned, as the kernel's frames are: one load a word, four
         * words a turn of the loop. */
        for (; p + 32 <= end; p += 32) {
            const siphash_word *w = (const siphash_word *)p;
            compress(s, w[0]);
            compress(s, w[1]);
            compress(s, w[2]);
            compress(s, w[3]);
        }
        for (; p < end; p += 8)
            compress(s, *(const siphash_word *)p);
    } else {
        for (; p < end; p += 8)
            compress(s, word_at(p));
    }
}

/* The last word and the finalisation: the tag of a message of `len`
 * bytes whose last len % 8 are at `rest`. */
static inline __attribute__((always_inline)) uint64_t finish(struct state *s, const uint8_t *rest, uint32_t len)
{
    /* The last word (§2): the 0..7 bytes left, little-endian, and the
     * message's length modulo 256 in its most significant byte. */
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (uint32_t k = 0; k < (len & 7); k++)
        last |= (uint64_t)rest[k] << (8 * k);
    compress(s, last);
    /* Finalisation (§2): v2 ^= 0xff, d = 4 SipRounds, the xor of the four. */
    s->v2 ^= 0xff;
    sip_round(s);
    sip_round(s);
    sip_round(s);
    sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t siphash24(const struct siphash_key *key, const uint8_t *message, uint32_t len)
{
    struct state s;
    begin(&s, key);
    absorb(&s, message, len / 8);
    return finish(&s, message + (len & ~7u), len);
}

uint64_t siphash24_copy(const struct siphash_key *key, uint8_t *message, uint32_t len, uint32_t at,
                        const uint8_t *from, uint32_t words)
{
    struct state s;
    begin(&s, key);
    absorb(&s, message, at / 8);
    siphash_word *t = (siphash_word *)(message + at);
    const siphash_word *f = (const siphash_word *)from, *end = f + words;
    for (; f + 4 <= end; f += 4, t += 4) {     /* each word loaded once, stored and compressed */
        uint64_t a = f[0], b = f[1], c = f[2], d = f[3];
        t[0] = a, t[1] = b, t[2] = c, t[3] = d;
        compress(&s, a);
        compress(&s, b);
        compress(&s, c);
        compress(&s, d);
    }
    for (; f < end; f++, t++) {
        *t = *f;
        compress(&s, *f);
    }
    uint32_t done = at + 8 * words;
    absorb(&s, message + done, len / 8 - done / 8);
    return finish(&s, message + (len & ~7u), len);
}
