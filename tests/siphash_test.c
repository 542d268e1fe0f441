/*
 * siphash_test.c — host unit test of SipHash-2-4 (kernel/net/siphash.c)
 * against published test vectors, built with the host's compiler and the
 * address and undefined-behaviour sanitizers, and run by
 * tests/test_wireauth.py. Prints `siphash_test: N checks passed`, or each
 * failed check as `siphash_test: file:line: what` and exits 1.
 *
 * The vectors:
 *  - the paper's Appendix A: key 00 01 .. 0f, message 00 01 .. 0e (15
 *    bytes), tag a129ca6149be45e5;
 *  - the table the SipHash authors publish with their reference code
 *    (vectors_sip64): key 00 01 .. 0f, message 00 01 .. (i-1) for each
 *    length i from 0 to 63; each tag as its 8 bytes, little-endian, in hex.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "siphash.h"

#define TEST_NAME "siphash_test"
#include "host_check.h"

static const char *const published[64] = {
    "310e0edd47db6f72", "fd67dc93c539f874", "5a4fa9d909806c0d", "2d7efbd796666785",
    "b7877127e09427cf", "8da699cd64557618", "cee3fe586e46c9cb", "37d1018bf50002ab",
    "6224939a79f5f593", "b0e4a90bdf82009e", "f3b9dd94c5bb5d7a", "a7ad6b22462fb3f4",
    "fbe50e86bc8f1e75", "903d84c02756ea14", "eef27a8e90ca23f7", "e545be4961ca29a1",
    "db9bc2577fcc2a3f", "9447be2cf5e99a69", "9cd38d96f0b3c14b", "bd6179a71dc96dbb",
    "98eea21af25cd6be", "c7673b2eb0cbf2d0", "883ea3e395675393", "c8ce5ccd8c030ca8",
    "94af49f6c650adb8", "eab8858ade92e1bc", "f315bb5bb835d817", "adcf6b0763612e2f",
    "a5c91da7acaa4dde", "716595876650a2a6", "28ef495c53a387ad", "42c341d8fa92d832",
    "ce7cf2722f512771", "e37859f94623f3a7", "381205bb1ab0e012", "ae97a10fd434e015",
    "b4a31508beff4d31", "81396229f0907902", "4d0cf49ee5d4dcca", "5c73336a76d8bf9a",
    "d0a704536ba93e0e", "925958fcd6420cad", "a915c29bc8067318", "952b79f3bc0aa6d4",
    "f21df2e41d4535f9", "87577519048f53a9", "10a56cf5dfcd9adb", "eb75095ccd986cd0",
    "51a9cb9ecba312e6", "96afadfc2ce666c7", "72fe52975a4364ee", "5a1645b276d592a1",
    "b274cb8ebf87870a", "6f9bb4203de7b381", "eaecb2a30b22a87f", "9924a43cc1315724",
    "bd838d3aafbf8db7", "0b1a2a3265d51aea", "135079a3231ce660", "932b2846e4d70666",
    "e1915f5cb1eca46c", "f325965ca16d629f", "575ff28e60381be5", "724506eb4c328a95",
};

/* The 8 bytes of `hex` (16 hex digits) as a little-endian word. */
static uint64_t tag_of(const char *hex)
{
    uint64_t tag = 0;
    for (int i = 0; i < 8; i++) {
        unsigned byte;
        sscanf(hex + 2 * i, "%2x", &byte);
        tag |= (uint64_t)byte << (8 * i);
    }
    return tag;
}

/* The key 00 01 .. 0f of every vector. */
static struct siphash_key test_key(void)
{
    uint8_t key[SIPHASH_KEY_LEN];
    for (int i = 0; i < SIPHASH_KEY_LEN; i++)
        key[i] = (uint8_t)i;
    return siphash_key_from_bytes(key);
}

/* The key's words are read little-endian (§2). */
static void test_key_words(void)
{
    struct siphash_key key = test_key();
    CHECK(key.k0 == 0x0706050403020100ull && key.k1 == 0x0f0e0d0c0b0a0908ull);
}

/* Appendix A: the 15-byte message 00 .. 0e. */
static void test_paper_vector(void)
{
    struct siphash_key key = test_key();
    uint8_t message[15];
    for (int i = 0; i < 15; i++)
        message[i] = (uint8_t)i;
    CHECK(siphash24(&key, message, sizeof message) == 0xa129ca6149be45e5ull);
}

/* Every length from 0 to 63, at every alignment, each in a buffer of its
 * own that ends where the message does (the sanitizers catch a read past
 * it). */
static void test_published_vectors(void)
{
    struct siphash_key key = test_key();
    for (int len = 0; len < 64; len++) {
        for (int shift = 0; shift < 8; shift++) {
            uint8_t *buffer = malloc((size_t)(shift + len) + 1), *message = buffer + shift;
            for (int i = 0; i < len; i++)
                message[i] = (uint8_t)i;
            CHECK(siphash24(&key, message, (uint32_t)len) == tag_of(published[len]));
            free(buffer);
        }
    }
}

/* Longer messages (up to a full Ethernet frame) give the same tag at every
 * alignment as word-aligned. */
static void test_alignments_agree(void)
{
    struct siphash_key key = test_key();
    static uint64_t aligned[1514 / 8 + 1];
    uint8_t *reference = (uint8_t *)aligned;
    for (uint32_t len = 64; len <= 1514; len += 37) {
        for (uint32_t i = 0; i < len; i++)
            reference[i] = (uint8_t)(i * 13 + len);
        uint64_t tag = siphash24(&key, reference, len);
        for (int shift = 1; shift < 8; shift++) {
            uint8_t *buffer = malloc((size_t)shift + len), *message = buffer + shift;
            memcpy(message, reference, len);
            CHECK(siphash24(&key, message, len) == tag);
            free(buffer);
        }
    }
}

/* siphash24_copy gives siphash24's tag for every length and every run of
 * words copied in, and copies them. */
static void test_copy_agrees(void)
{
    struct siphash_key key = test_key();
    static uint64_t message_words[1514 / 8 + 1], copy_words[1514 / 8 + 1], source_words[1514 / 8 + 1];
    uint8_t *message = (uint8_t *)message_words, *copy = (uint8_t *)copy_words, *source = (uint8_t *)source_words;
    for (uint32_t len = 0; len <= 1514; len += len < 80 ? 1 : 29) {
        for (uint32_t i = 0; i < len; i++)
            message[i] = (uint8_t)(i * 29 + len);
        uint64_t tag = siphash24(&key, message, len);
        uint32_t words = len / 8;
        for (uint32_t first = 0; first <= words; first += words > 16 ? words / 8 + 1 : 1) {
            for (uint32_t copied = 0; first + copied <= words; copied += words > 16 ? words / 4 + 1 : 1) {
                memcpy(copy, message, len);
                memset(copy + 8 * first, 0, 8 * copied);
                memcpy(source, message + 8 * first, 8 * copied);
                CHECK(siphash24_copy(&key, copy, len, 8 * first, source, copied) == tag);
                CHECK(memcmp(copy, message, len) == 0);
            }
        }
    }
}

/* A tag depends on every bit of the message and of the key. */
static void test_every_bit_counts(void)
{
    struct siphash_key key = test_key();
    uint8_t message[40];
    for (int i = 0; i < 40; i++)
        message[i] = (uint8_t)(7 * i);
    uint64_t tag = siphash24(&key, message, sizeof message);
    for (int bit = 0; bit < 8 * 40; bit++) {
        message[bit / 8] ^= (uint8_t)(1 << bit % 8);
        CHECK(siphash24(&key, message, sizeof message) != tag);
        message[bit / 8] ^= (uint8_t)(1 << bit % 8);
    }
    for (int bit = 0; bit < 128; bit++) {
        struct siphash_key other = key;
        if (bit < 64)
            other.k0 ^= 1ull << bit;
        else
            other.k1 ^= 1ull << (bit - 64);
        CHECK(siphash24(&other, message, sizeof message) != tag);
    }
    CHECK(siphash24(&key, message, sizeof message - 1) != tag);
}

int main(void)
{
    test_key_words();
    test_paper_vector();
    test_published_vectors();
    test_alignments_agree();
    test_copy_agrees();
    test_every_bit_counts();
    if (failures) {
        fprintf(stderr, "siphash_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("siphash_test: %d checks passed\n", checks);
    return 0;
}
