/*
 * netframe_test.c — host unit test of the kernel's frame parser, its seal
 * and the MAC convention (kernel/net/netframe.c), built with the host's compiler and the
 * address and undefined-behaviour sanitizers, and run by tests/test_net.py.
 * Prints `netframe_test: N checks passed`, or each failed check as
 * `netframe_test: file:line: what` and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netframe.h"

#define TEST_NAME "netframe_test"
#include "host_check.h"

/* An announcement as the wire format says it must look, written byte by
 * byte here rather than by netframe_build_announce. */
static void hand_made_announce(uint8_t frame[NETFRAME_MIN_LEN])
{
    static const uint8_t head[NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff,        /* destination: broadcast */
        0x52, 0x54, 0x00, 0x4d, 0x04, 0x02,        /* source: machine 2 of 4 */
        0x88, 0xb5,                                /* EtherType, network order */
        3, NETFRAME_ANNOUNCE,                      /* version, type */
        0x02, 0x00, 0x00, 0x00,                    /* machine 2 */
        0x04, 0x00, 0x00, 0x00,                    /* of 4 */
        0x78, 0x56, 0x34, 0x12,                    /* epoch 0x12345678 */
        0x00, 0x00, 0x00, 0x00,                    /* receiver epoch: none (an ANNOUNCE) */
        0x2a, 0x00, 0x00, 0x00,                    /* challenge 42 */
    };
    memset(frame, 0, NETFRAME_MIN_LEN);
    memcpy(frame, head, sizeof head);
}

/* A well-formed frame parses into the fields it holds, at every length
 * from its headers' end to a full Ethernet frame. */
static void test_good_frames(void)
{
    uint8_t frame[1514];
    struct netframe f;
    memset(frame, 0, sizeof frame);
    hand_made_announce(frame);
    for (uint32_t len = NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN; len <= sizeof frame; len++)
        CHECK(netframe_parse(frame, len, &f) == NETFRAME_OK);
    CHECK(netframe_parse(frame, NETFRAME_MIN_LEN, &f) == NETFRAME_OK);
    CHECK(f.version == 3 && f.type == NETFRAME_ANNOUNCE);
    CHECK(f.machine == 2 && f.node_count == 4 && f.epoch == 0x12345678);
    CHECK(f.receiver_epoch == 0 && f.challenge == 42);
    CHECK(f.destination[0] == 0xff && f.destination[5] == 0xff);
    CHECK(f.source[4] == 0x04 && f.source[5] == 0x02);
}

/* Building a frame gives the same bytes (its body: what follows is the
 * seal's), and parsing it gives it back. */
static void test_build_round_trip(void)
{
    uint8_t expected[NETFRAME_MIN_LEN], built[NETFRAME_MIN_LEN];
    hand_made_announce(expected);
    struct netframe f = { .machine = 2, .node_count = 4, .epoch = 0x12345678, .challenge = 42 };
    memset(f.destination, 0xff, 6);
    memcpy(f.source, (const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x04, 0x02 }, 6);
    memset(built, 0xaa, sizeof built);
    CHECK(netframe_build_announce(built, &f, NETFRAME_ANNOUNCE) == NETFRAME_BODY_MIN_LEN);
    CHECK(memcmp(built, expected, NETFRAME_BODY_MIN_LEN) == 0);

    struct netframe back;
    f.epoch = 0xffffff;
    f.receiver_epoch = 77;
    netframe_build_announce(built, &f, NETFRAME_ANNOUNCE_REPLY);
    CHECK(netframe_parse(built, sizeof built, &back) == NETFRAME_OK);
    CHECK(back.type == NETFRAME_ANNOUNCE_REPLY && back.epoch == 0xffffff && back.machine == 2);
    CHECK(back.receiver_epoch == 77 && back.challenge == 42);
}

/* Every length shorter than the headers is refused, never read past. */
static void test_short_frames(void)
{
    uint8_t frame[NETFRAME_MIN_LEN];
    struct netframe f;
    hand_made_announce(frame);
    for (uint32_t len = 0; len < NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN; len++)
        CHECK(netframe_parse(frame, len, &f) == NETFRAME_E_SHORT);
}

/* Another EtherType, another version, an unknown type are each refused
 * with their own error. */
static void test_foreign_frames(void)
{
    uint8_t frame[NETFRAME_MIN_LEN];
    struct netframe f;
    hand_made_announce(frame);
    frame[12] = 0x08, frame[13] = 0x00;                    /* IPv4 */
    CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_ETHERTYPE);
    frame[12] = 0xb5, frame[13] = 0x88;                    /* byte-swapped */
    CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_ETHERTYPE);

    hand_made_announce(frame);
    frame[NETFRAME_ETH_LEN] = 1;                           /* the format before selective acks */
    CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_VERSION);
    frame[NETFRAME_ETH_LEN] = 2;                           /* the format before the seal */
    CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_VERSION);
    frame[NETFRAME_ETH_LEN] = 4;
    CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_VERSION);
    frame[NETFRAME_ETH_LEN] = 0;
    CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_VERSION);

    hand_made_announce(frame);
    for (int type = 0; type < 256; type++) {
        frame[NETFRAME_ETH_LEN + 1] = (uint8_t)type;
        int result = netframe_parse(frame, sizeof frame, &f);
        if (type == NETFRAME_ANNOUNCE || type == NETFRAME_ANNOUNCE_REPLY)
            CHECK(result == NETFRAME_OK);
        else if (type == NETFRAME_DATA)
            CHECK(result == NETFRAME_E_SHORT);          /* 60 bytes: shorter than its headers */
        else if (type == NETFRAME_ACK || type == NETFRAME_GONE)
            CHECK(result == NETFRAME_E_FIELD);          /* receiver epoch 0 */
        else
            CHECK(result == NETFRAME_E_TYPE);
    }
}

/* Fields out of range: a machine beyond the count, no nodes, more nodes
 * than a pid can name, an announcement without a challenge. */
static void test_bad_fields(void)
{
    static const struct { int offset; uint8_t value; } damage[] = {
        { 2, 4 }, { 2, 0xff }, { 5, 1 },        /* machine >= node_count */
        { 6, 0 }, { 7, 1 }, { 9, 0x80 },        /* node_count 0, 260, huge */
        { 18, 0 },                              /* challenge 0 */
    };
    uint8_t frame[NETFRAME_MIN_LEN];
    struct netframe f;
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        hand_made_announce(frame);
        frame[NETFRAME_ETH_LEN + damage[i].offset] = damage[i].value;
        CHECK(netframe_parse(frame, sizeof frame, &f) == NETFRAME_E_FIELD);
    }
}

/* DATA frames: built and parsed back at every fragment's edge, with and
 * without the ACK_NOW flag, with and without an acknowledgement; a frame
 * one byte short of its fragment, a cut the format does not make, a zero
 * epoch or sequence, an unknown flag, an acknowledgement's fields without
 * its flag, a reserved byte set, each refused. Every field lies a
 * multiple of its size from the frame's start, the fragment a multiple
 * of 8. */
static void test_data_frames(void)
{
    static uint8_t message[NETFRAME_MAX_MESSAGE];
    uint8_t frame[NETFRAME_MAX_LEN];
    for (uint32_t i = 0; i < sizeof message; i++)
        message[i] = (uint8_t)(i * 7);
    struct netframe f = { .machine = 1, .node_count = 3, .epoch = 9, .receiver_epoch = 5, .sequence = 4 }, back;
    static const uint32_t lengths[] = { 0, 1, NETFRAME_FRAGMENT_MAX, NETFRAME_FRAGMENT_MAX + 1, NETFRAME_MAX_MESSAGE };
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        f.message_length = lengths[i];
        for (f.fragment_offset = 0; f.fragment_offset < f.message_length || f.fragment_offset == 0;
             f.fragment_offset += NETFRAME_FRAGMENT_MAX) {
            uint32_t rest = f.message_length - f.fragment_offset;
            f.fragment_length = rest < NETFRAME_FRAGMENT_MAX ? rest : NETFRAME_FRAGMENT_MAX;
            f.payload = message + f.fragment_offset;
            f.flags = rest <= NETFRAME_FRAGMENT_MAX ? NETFRAME_DATA_ACK_NOW : 0;
            f.flags |= i % 2 ? NETFRAME_DATA_HAS_ACK : 0;
            f.ack = i % 2 ? 0x1000 + (uint32_t)i : 0;
            f.echo = i % 2 ? 0xbeef0000u + f.fragment_offset : 0;
            f.stamp = 0xfedc0000u + f.fragment_offset;
            uint32_t len = netframe_build_data(frame, &f);
            CHECK(len >= NETFRAME_BODY_MIN_LEN && len <= NETFRAME_BODY_MAX_LEN);
            CHECK(netframe_parse(frame, len, &back) == NETFRAME_OK);
            CHECK(back.type == NETFRAME_DATA && back.sequence == 4 && back.epoch == 9 && back.receiver_epoch == 5);
            CHECK(back.flags == f.flags && back.stamp == f.stamp && back.ack == f.ack && back.echo == f.echo);
            CHECK(back.fragment_length == f.fragment_length && memcmp(back.payload, f.payload, f.fragment_length) == 0);
            if (f.fragment_length + NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN >= NETFRAME_BODY_MIN_LEN)
                CHECK(netframe_parse(frame, len - 1, &back) == NETFRAME_E_SHORT);
            if (f.message_length == 0)
                break;
        }
    }
    CHECK(NETFRAME_FRAGMENT_MAX == 1434 && NETFRAME_MAX_FRAGMENTS == 46);
    f.message_length = 100, f.fragment_offset = 0, f.fragment_length = 100, f.payload = message, f.flags = 0;
    f.ack = f.echo = 0;
    f.stamp = 0xfedc0064;
    uint32_t len = netframe_build_data(frame, &f);
    CHECK(frame[NETFRAME_ETH_LEN + 30] == 0x64 && frame[NETFRAME_ETH_LEN + 33] == 0xfe);   /* stamp, little-endian */
    CHECK(frame[NETFRAME_ETH_LEN + 50] == message[0]);                                   /* the bytes follow it */
    CHECK((NETFRAME_ETH_LEN + 50) % 8 == 0 && (NETFRAME_ETH_LEN + 2) % 4 == 0 && (NETFRAME_ETH_LEN + 42) % 2 == 0);
    frame[NETFRAME_ETH_LEN + 26] = 1;                    /* offset 1: not a cut */
    CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    netframe_build_data(frame, &f);
    frame[NETFRAME_ETH_LEN + 42] = 99;                   /* length not the fragment's */
    CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    netframe_build_data(frame, &f);
    memset(frame + NETFRAME_ETH_LEN + 18, 0, 4);         /* sequence 0 */
    CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    netframe_build_data(frame, &f);
    frame[NETFRAME_ETH_LEN + 34] = 1;                    /* an ack without NETFRAME_DATA_HAS_ACK */
    CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    netframe_build_data(frame, &f);
    frame[NETFRAME_ETH_LEN + 41] = 1;                    /* an echo without it */
    CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    for (int at = 46; at < 50; at++) {                   /* reserved */
        netframe_build_data(frame, &f);
        frame[NETFRAME_ETH_LEN + at] = 0x10;
        CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    }
    for (int bit = 2; bit < 16; bit++) {                 /* flags other than ACK_NOW and HAS_ACK */
        netframe_build_data(frame, &f);
        frame[NETFRAME_ETH_LEN + 44 + bit / 8] |= (uint8_t)(1 << bit % 8);
        CHECK(netframe_parse(frame, len, &back) == NETFRAME_E_FIELD);
    }
}

/* An ACK as the wire format says it must look, written byte by byte: ack
 * 0x100, echo 0x0badcafe, message ack+3 whole, ack+1 and ack+32 partial
 * with their fragment maps. Returns its length. */
static uint32_t hand_made_ack(uint8_t frame[NETFRAME_ACK_MAX_LEN])
{
    static const uint8_t bytes[] = {
        0x52, 0x54, 0x00, 0x4d, 0x03, 0x02,        /* destination: machine 2 of 3 */
        0x52, 0x54, 0x00, 0x4d, 0x03, 0x01,        /* source: machine 1 of 3 */
        0x88, 0xb5,
        3, NETFRAME_ACK,
        0x01, 0x00, 0x00, 0x00,                    /* machine 1 */
        0x03, 0x00, 0x00, 0x00,                    /* of 3 */
        0x09, 0x00, 0x00, 0x00,                    /* epoch 9 */
        0x05, 0x00, 0x00, 0x00,                    /* receiver epoch 5 */
        0x00, 0x01, 0x00, 0x00,                    /* ack 0x100 */
        0xfe, 0xca, 0xad, 0x0b,                    /* echo */
        0x04, 0x00, 0x00, 0x00,                    /* whole: bit 2, message 0x103 */
        0x01, 0x00, 0x00, 0x80,                    /* partial: bits 0 and 31, messages 0x101, 0x120 */
        0x05, 0, 0, 0, 0, 0, 0, 0,                 /* 0x101: fragments 0 and 2 */
        0, 0, 0, 0, 0, 0x20, 0, 0,                 /* 0x120: fragment 45, the last of 64 KiB */
    };
    memset(frame, 0, NETFRAME_ACK_MAX_LEN);
    memcpy(frame, bytes, sizeof bytes);
    return sizeof bytes;
}

/* ACK frames: the hand-made one parses into its fields and is what
 * building them gives; each damage to it is refused: a map missing from
 * its length, whole and partial naming the same message, ack+1 whole, an
 * empty map or one beyond 46 fragments, a message beyond 2^32 - 1, a zero
 * epoch. An ACK with nothing after `ack` is its headers alone (longer
 * than a body's minimum). */
static void test_ack_frames(void)
{
    uint8_t frame[NETFRAME_ACK_MAX_LEN], built[NETFRAME_ACK_MAX_LEN];
    struct netframe f;
    uint32_t len = hand_made_ack(frame);
    CHECK(len == NETFRAME_ETH_LEN + NETFRAME_ACK_LEN + 16);
    CHECK(netframe_parse(frame, len, &f) == NETFRAME_OK);
    CHECK(f.type == NETFRAME_ACK && f.machine == 1 && f.epoch == 9 && f.receiver_epoch == 5);
    CHECK(f.ack == 0x100 && f.echo == 0x0badcafe && f.whole == 4 && f.partial == 0x80000001u);
    CHECK(f.fragments[0] == 5 && f.fragments[1] == 1ull << 45);
    memset(built, 0xaa, sizeof built);
    CHECK(netframe_build_ack(built, &f) == len && memcmp(built, frame, len) == 0);
    for (uint32_t short_len = NETFRAME_ETH_LEN + NETFRAME_ACK_LEN; short_len < len; short_len++)
        CHECK(netframe_parse(frame, short_len, &f) == NETFRAME_E_SHORT);

    static const struct { int offset; uint8_t value; } damage[] = {
        { 26, 0x05 },                           /* whole: ack+1, which would be acked */
        { 29, 0x80 },                           /* whole and partial both name message 0x120 */
        { 34, 0x00 },                           /* the first map empty */
        { 47, 0x40 },                           /* fragment 46 of 0x120: beyond the last */
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        hand_made_ack(frame);
        frame[NETFRAME_ETH_LEN + damage[i].offset] = damage[i].value;
        CHECK(netframe_parse(frame, len, &f) == NETFRAME_E_FIELD);
    }
    hand_made_ack(frame);
    memset(frame + NETFRAME_ETH_LEN + 18, 0xff, 4);     /* ack 2^32 - 1: its next messages cannot exist */
    CHECK(netframe_parse(frame, len, &f) == NETFRAME_E_FIELD);
    memcpy(frame + NETFRAME_ETH_LEN + 18, (const uint8_t[]){ 0xdf, 0xff, 0xff, 0xff }, 4);
    CHECK(netframe_parse(frame, len, &f) == NETFRAME_OK);    /* bit 31: message 2^32 - 1, the last */
    frame[NETFRAME_ETH_LEN + 18] = 0xe0;
    CHECK(netframe_parse(frame, len, &f) == NETFRAME_E_FIELD);
    hand_made_ack(frame);
    memset(frame + NETFRAME_ETH_LEN + 10, 0, 4);         /* sender epoch 0 */
    CHECK(netframe_parse(frame, len, &f) == NETFRAME_E_FIELD);
    hand_made_ack(frame);
    memset(frame + NETFRAME_ETH_LEN + 14, 0, 4);         /* receiver epoch 0 */
    CHECK(netframe_parse(frame, len, &f) == NETFRAME_E_FIELD);

    struct netframe plain = { .machine = 1, .node_count = 3, .epoch = 9, .receiver_epoch = 5, .ack = 77 };
    len = netframe_build_ack(built, &plain);
    CHECK(len == NETFRAME_ETH_LEN + NETFRAME_ACK_LEN && len >= NETFRAME_BODY_MIN_LEN);
    CHECK(netframe_parse(built, len, &f) == NETFRAME_OK && f.ack == 77 && f.whole == 0 && f.partial == 0);
    plain.partial = 0xffffffffu;                         /* every message after ack partial: the longest ACK */
    for (int i = 0; i < NETFRAME_ACK_MAX_PARTIAL; i++)
        plain.fragments[i] = (uint64_t)i + 1;
    len = netframe_build_ack(built, &plain);
    CHECK(len == NETFRAME_ACK_MAX_LEN);
    CHECK(netframe_parse(built, len, &f) == NETFRAME_OK && f.fragments[31] == 32);
    CHECK(netframe_parse(built, len - 1, &f) == NETFRAME_E_SHORT);
}

/* The seal: a sealed body is unsealed back to its length and number, and
 * the seal's bytes are the number and SipHash-2-4 of all before the tag,
 * little-endian; a change to any byte of a sealed frame, a frame cut
 * short or made longer, and another key each give NETFRAME_E_TAG; a frame
 * too short to hold a seal gives NETFRAME_E_SHORT. Sealed frames are
 * never shorter than Ethernet's minimum. */
static void test_seal(void)
{
    uint8_t key_bytes[SIPHASH_KEY_LEN], frame[NETFRAME_MAX_LEN];
    for (int i = 0; i < SIPHASH_KEY_LEN; i++)
        key_bytes[i] = (uint8_t)(0xa0 + i);
    struct siphash_key key = siphash_key_from_bytes(key_bytes), other = key;
    other.k1 ^= 1;
    struct netframe f = { .machine = 2, .node_count = 4, .epoch = 0x12345678, .challenge = 42 };
    memset(f.destination, 0xff, 6);
    memcpy(f.source, (const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x04, 0x02 }, 6);
    uint32_t body = netframe_build_announce(frame, &f, NETFRAME_ANNOUNCE);
    uint32_t len = netframe_seal(frame, body, 0x0102030405060708ull, &key);
    CHECK(len == NETFRAME_MIN_LEN && body + NETFRAME_SEAL_LEN == len);
    CHECK(frame[body] == 0x08 && frame[body + 7] == 0x01);                     /* the number, little-endian */
    uint64_t tag = siphash24(&key, frame, body + 8), number = 0;
    for (int i = 0; i < 8; i++)
        CHECK(frame[body + 8 + i] == (uint8_t)(tag >> (8 * i)));
    CHECK(netframe_unseal(frame, len, &key, &number) == (int32_t)body && number == 0x0102030405060708ull);
    struct netframe back;
    CHECK(netframe_parse(frame, body, &back) == NETFRAME_OK && back.challenge == 42);
    for (uint32_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            frame[i] ^= (uint8_t)(1 << bit);
            CHECK(netframe_unseal(frame, len, &key, &number) == NETFRAME_E_TAG);
            frame[i] ^= (uint8_t)(1 << bit);
        }
    }
    CHECK(netframe_unseal(frame, len, &other, &number) == NETFRAME_E_TAG);
    CHECK(netframe_unseal(frame, len - 1, &key, &number) == NETFRAME_E_TAG);
    frame[len] = 0;
    CHECK(netframe_unseal(frame, len + 1, &key, &number) == NETFRAME_E_TAG);
    for (uint32_t short_len = 0; short_len < NETFRAME_ETH_LEN + NETFRAME_SEAL_LEN; short_len++)
        CHECK(netframe_unseal(frame, short_len, &key, &number) == NETFRAME_E_SHORT);

    static uint8_t message[NETFRAME_FRAGMENT_MAX];
    struct netframe d = { .machine = 1, .node_count = 3, .epoch = 9, .receiver_epoch = 5, .sequence = 1,
                          .message_length = NETFRAME_FRAGMENT_MAX, .fragment_length = NETFRAME_FRAGMENT_MAX,
                          .payload = message, .flags = NETFRAME_DATA_ACK_NOW };
    body = netframe_build_data(frame, &d);
    CHECK(body == NETFRAME_BODY_MAX_LEN && netframe_seal(frame, body, 1, &key) == NETFRAME_MAX_LEN);
    CHECK(netframe_unseal(frame, NETFRAME_MAX_LEN, &key, &number) == (int32_t)body && number == 1);
}

/* A DATA frame built and sealed in one go (netframe_build_data_sealed) is
 * the frame netframe_build_data and netframe_seal make, byte for byte, at
 * every fragment length and with the buffer and the fragment on and off
 * word boundaries, and unseals. */
static void test_build_data_sealed(void)
{
    static uint64_t message_words[NETFRAME_FRAGMENT_MAX / 8 + 2], one_words[NETFRAME_MAX_LEN / 8 + 2],
        other_words[NETFRAME_MAX_LEN / 8 + 2];
    uint8_t *message = (uint8_t *)message_words, *one = (uint8_t *)one_words, *other = (uint8_t *)other_words;
    struct siphash_key key = { 0x1122334455667788ull, 0x99aabbccddeeff00ull };
    for (uint32_t i = 0; i < NETFRAME_FRAGMENT_MAX + 8; i++)
        message[i] = (uint8_t)(i * 11 + 3);
    for (uint32_t length = 0; length <= NETFRAME_FRAGMENT_MAX; length += length < 40 ? 1 : 97) {
        for (int shift = 0; shift < 16; shift += 3) {       /* 0, 3, 6, 9 (buffer 1 past a word), 12, 15 */
            struct netframe f = { .machine = 1, .node_count = 3, .epoch = 9, .receiver_epoch = 5, .sequence = 2,
                                  .message_length = length, .fragment_length = length, .stamp = 77,
                                  .flags = NETFRAME_DATA_ACK_NOW | NETFRAME_DATA_HAS_ACK, .ack = 4, .echo = 66,
                                  .payload = message + (shift < 8 ? shift : 0) };
            uint8_t *at = other + (shift < 8 ? 0 : shift - 8);
            memset(one, 0xaa, NETFRAME_MAX_LEN + 8);
            memset(other, 0x55, NETFRAME_MAX_LEN + 8);
            uint32_t len = netframe_seal(one, netframe_build_data(one, &f), 1234, &key);
            CHECK(netframe_build_data_sealed(at, &f, 1234, &key) == len && memcmp(one, at, len) == 0);
            uint64_t number = 0;
            CHECK(netframe_unseal(at, len, &key, &number) == (int32_t)(len - NETFRAME_SEAL_LEN) && number == 1234);
        }
    }
}

/* A GONE frame: built from its fields (receiver_epoch 14 bytes after the
 * Ethernet header), parsed back, sealed and unsealed as every frame is;
 * shorter than its header, or naming no receiver epoch, refused. */
static void test_gone_frames(void)
{
    uint8_t built[NETFRAME_MIN_LEN];
    const struct siphash_key key = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
    uint64_t number = 0;
    struct netframe f = { .machine = 1, .node_count = 3, .epoch = 9, .receiver_epoch = 5 }, back;
    memcpy(f.destination, (const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x03, 0x00 }, 6);
    memcpy(f.source, (const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x03, 0x01 }, 6);
    uint32_t body = netframe_build_gone(built, &f);
    CHECK(body == NETFRAME_BODY_MIN_LEN);
    CHECK(built[NETFRAME_ETH_LEN + 1] == NETFRAME_GONE && built[NETFRAME_ETH_LEN + 14] == 5 &&
          built[NETFRAME_ETH_LEN + 15] == 0);
    CHECK(netframe_parse(built, body, &back) == NETFRAME_OK);
    CHECK(back.type == NETFRAME_GONE && back.machine == 1 && back.epoch == 9 && back.receiver_epoch == 5);
    CHECK(netframe_seal(built, body, 7, &key) == NETFRAME_MIN_LEN);
    CHECK(netframe_unseal(built, NETFRAME_MIN_LEN, &key, &number) == (int32_t)body && number == 7);
    CHECK(netframe_parse(built, body, &back) == NETFRAME_OK && back.receiver_epoch == 5);
    CHECK(netframe_parse(built, NETFRAME_ETH_LEN + NETFRAME_GONE_LEN, &back) == NETFRAME_OK);
    CHECK(netframe_parse(built, NETFRAME_ETH_LEN + NETFRAME_GONE_LEN - 1, &back) == NETFRAME_E_SHORT);
    f.receiver_epoch = 0;
    CHECK(netframe_parse(built, netframe_build_gone(built, &f), &back) == NETFRAME_E_FIELD);
}

/* The MAC convention: 52:54:00:4d:CC:NN is machine NN of CC; anything else
 * is not a cluster address, and leaves the outputs alone. */
static void test_identity(void)
{
    uint32_t machine = 99, count = 99;
    CHECK(netframe_identity((const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x03, 0x02 }, &machine, &count) == 0);
    CHECK(machine == 2 && count == 3);
    CHECK(netframe_identity((const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x01, 0x00 }, &machine, &count) == 0);
    CHECK(machine == 0 && count == 1);
    CHECK(netframe_identity((const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0xff, 0xfe }, &machine, &count) == 0);
    CHECK(machine == 254 && count == 255);
    machine = count = 99;
    CHECK(netframe_identity((const uint8_t[]){ 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, &machine, &count) < 0);
    CHECK(netframe_identity((const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x03, 0x03 }, &machine, &count) < 0);
    CHECK(netframe_identity((const uint8_t[]){ 0x52, 0x54, 0x00, 0x4d, 0x00, 0x00 }, &machine, &count) < 0);
    CHECK(netframe_identity((const uint8_t[]){ 0x53, 0x54, 0x00, 0x4d, 0x03, 0x00 }, &machine, &count) < 0);
    CHECK(machine == 99 && count == 99);
}

/* Random bytes of random lengths, each in a buffer of exactly that size
 * (the sanitizers this test is built with catch any read beyond it): the
 * parser answers with one of its codes, and accepts only what has our
 * EtherType, version and a known type at full length. */
static void test_random_bytes(void)
{
    uint32_t seed = 12345;
    for (int round = 0; round < 100000; round++) {
        seed = seed * 1103515245 + 12345;
        uint32_t len = (seed >> 16) % 80;
        uint8_t *frame = malloc(len ? len : 1), valid[NETFRAME_MIN_LEN];
        hand_made_announce(valid);
        for (uint32_t i = 0; i < len; i++)      /* odd rounds: a valid start, then damage */
            frame[i] = round % 2 && i < NETFRAME_MIN_LEN ? valid[i] : 0;
        for (uint32_t i = 0; i < len; i++) {
            seed = seed * 1103515245 + 12345;
            if (!(round % 2) || (seed >> 16) % 16 == 0)
                frame[i] = (uint8_t)(seed >> 16);
        }
        struct netframe f;
        int r = netframe_parse(frame, len, &f);
        CHECK(r <= NETFRAME_OK && r >= NETFRAME_E_FIELD);
        if (r == NETFRAME_OK)
            CHECK(len >= NETFRAME_ETH_LEN + NETFRAME_ANNOUNCE_LEN && frame[12] == 0x88 && frame[13] == 0xb5 &&
                  frame[NETFRAME_ETH_LEN] == NETFRAME_VERSION && f.machine < f.node_count);
        free(frame);
    }
}

int main(void)
{
    test_good_frames();
    test_build_round_trip();
    test_short_frames();
    test_foreign_frames();
    test_bad_fields();
    test_data_frames();
    test_ack_frames();
    test_gone_frames();
    test_seal();
    test_build_data_sealed();
    test_identity();
    test_random_bytes();
    if (failures) {
        fprintf(stderr, "netframe_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("netframe_test: %d checks passed\n", checks);
    return 0;
}
