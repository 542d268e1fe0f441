/*
 * fuzz_netframe.c — libFuzzer target: the kernel's frame parser
 * (kernel/net/netframe.c) on any bytes a network can deliver, and the reliable
 * transport (kernel/net/transport.c) fed those frames, both built for the host
 * as tests/transport_test.c builds them.
 *
 * The input is a list of steps, each a byte saying which (modulo 4), then
 * its arguments (little-endian; the input may end inside one):
 *   0  a frame: uint16 length, then the frame's bytes
 *   1  a message to send: uint8 machine, uint24 length (modulo LONGEST_SEND)
 *   2  time passing: uint32 microseconds, then transport_tick
 *   3  uint8 what: bit 0 sets the transmit queue full or not; with bit 1,
 *      machine `what >> 2` announces itself in epoch uint32
 * The engine is machine 1 of 3 in epoch 9; machines 0 (epoch 7) and 2
 * (epoch 5) are announced before the first step. Seeds
 * (tests/fuzz/corpus/netframe) hold exchanges of valid frames.
 *
 * What must hold:
 *   - a frame that parses is within the bytes given, and built again from
 *     what was parsed (netframe_build_*) parses into the same fields;
 *   - every frame the engine puts on the wire parses, is a DATA or ACK
 *     frame, and names this machine, cluster size and epoch;
 *   - messages are delivered only from known peers, at most
 *     NETFRAME_MAX_MESSAGE bytes, and counted as delivered; failures give
 *     a reason transport.h lists; transport_send answers a sequence number
 *     or one of its errors, an error for a message over the limit;
 *   - the engine never holds more blocks than its budgets, nor more
 *     messages unacknowledged than its window, and its timer is never in
 *     the past.
 * Run by scripts/fuzz.py (README, "Fuzzing").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netframe.h"
#include "transport.h"

#define MACHINE 1u
#define NODES   3u
#define EPOCH   9u
#define LONGEST_SEND 70000u      /* messages offered: up to a little over the limit */

#define REQUIRE(cond) ((cond) ? (void)0 : fail(__FILE__, __LINE__, #cond))

/* Stop the run with `what`: libFuzzer saves the input as a crash. */
static void fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "fuzz_netframe: %s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

/* The engine under test and its world. */
static struct transport engine;
static uint64_t now_ns;
static int queue_full;
static uint32_t delivered[NODES];

/* Hook: a frame the engine sends must be one of its own, well formed. */
static int send_frame(void *context, const uint8_t *frame, uint32_t len)
{
    struct netframe f;
    (void)context;
    REQUIRE(len <= NETFRAME_MAX_LEN && netframe_parse(frame, len, &f) == NETFRAME_OK);
    REQUIRE(f.type == NETFRAME_DATA || f.type == NETFRAME_ACK || f.type == NETFRAME_GONE);
    REQUIRE(f.machine == MACHINE && f.node_count == NODES && f.epoch == EPOCH);
    return queue_full ? -1 : 0;
}

static uint64_t clock_now(void *context)
{
    (void)context;
    return now_ns;
}

/* Hook: a message delivered comes from a peer and fits the limit. */
static void deliver(void *context, uint32_t machine, const uint8_t *message, uint32_t len)
{
    (void)context, (void)message;
    REQUIRE(machine < NODES && machine != MACHINE && len <= NETFRAME_MAX_MESSAGE);
    delivered[machine]++;
}

/* Hook: a failed message fails for a reason transport.h gives. */
static void failed(void *context, uint32_t machine, uint32_t sequence, int reason)
{
    (void)context;
    REQUIRE(machine < NODES && machine != MACHINE);
    REQUIRE(reason == TRANSPORT_FAIL_REBOOTED || reason == TRANSPORT_FAIL_TIMEOUT ||
            reason == TRANSPORT_FAIL_GIVEN_UP);
    REQUIRE(sequence > 0 || reason == TRANSPORT_FAIL_GIVEN_UP);   /* 0: nothing was under way */
}

static void peer_rebooted(void *context, uint32_t machine, uint32_t epoch)
{
    (void)context;
    REQUIRE(machine < NODES && machine != MACHINE && epoch != 0);
}

static const struct transport_hooks hooks = {
    .send_frame = send_frame, .now = clock_now, .deliver = deliver, .failed = failed, .peer_rebooted = peer_rebooted,
};

/* Whether two parsed frames say the same (payloads compared by bytes). */
static int same_frame(const struct netframe *a, const struct netframe *b)
{
    if (memcmp(a->destination, b->destination, 6) != 0 || memcmp(a->source, b->source, 6) != 0 ||
        a->version != b->version || a->type != b->type || a->machine != b->machine ||
        a->node_count != b->node_count || a->epoch != b->epoch || a->receiver_epoch != b->receiver_epoch ||
        a->challenge != b->challenge ||
        a->sequence != b->sequence || a->message_length != b->message_length ||
        a->fragment_offset != b->fragment_offset || a->fragment_length != b->fragment_length ||
        a->flags != b->flags || a->stamp != b->stamp || a->ack != b->ack || a->echo != b->echo ||
        a->whole != b->whole || a->partial != b->partial)
        return 0;
    uint32_t maps = 0;
    for (uint32_t rest = a->partial; rest; rest &= rest - 1)
        maps++;
    for (uint32_t i = 0; i < maps; i++)        /* the maps of partial's bits: the rest are not the frame's */
        if (a->fragments[i] != b->fragments[i])
            return 0;
    return a->fragment_length == 0 || memcmp(a->payload, b->payload, a->fragment_length) == 0;
}

/* The parser on frame[0..len): within bounds, and what it parsed builds
 * a frame that parses the same. */
static void check_parse(const uint8_t *frame, uint32_t len)
{
    static uint8_t built[NETFRAME_MAX_LEN + NETFRAME_ACK_MAX_LEN];
    struct netframe f, again;
    uint32_t machine, node_count;
    if (len >= NETFRAME_ETH_LEN && netframe_identity(frame + 6, &machine, &node_count) == 0)   /* the source's */
        REQUIRE(machine < node_count && node_count <= NETFRAME_MAX_NODES);
    if (netframe_parse(frame, len, &f) != NETFRAME_OK)
        return;
    REQUIRE(f.machine < f.node_count && f.node_count <= NETFRAME_MAX_NODES);
    uint32_t n;
    if (f.type == NETFRAME_DATA) {
        REQUIRE(f.payload >= frame && f.payload + f.fragment_length <= frame + len);
        REQUIRE(f.fragment_length <= NETFRAME_FRAGMENT_MAX && f.message_length <= NETFRAME_MAX_MESSAGE);
        n = netframe_build_data(built, &f);
    } else if (f.type == NETFRAME_ACK) {
        n = netframe_build_ack(built, &f);
    } else if (f.type == NETFRAME_GONE) {
        n = netframe_build_gone(built, &f);
    } else {
        n = netframe_build_announce(built, &f, f.type);
    }
    REQUIRE(n <= sizeof built && netframe_parse(built, n, &again) == NETFRAME_OK);
    REQUIRE(same_frame(&f, &again));
}

/* The engine within its budgets after a step. */
static void check_engine(void)
{
    REQUIRE(engine.send_blocks_free <= TRANSPORT_SEND_BLOCKS);
    REQUIRE(engine.receive_blocks_free <= TRANSPORT_RECEIVE_BLOCKS);
    for (uint32_t m = 0; m < NODES; m++) {
        REQUIRE(transport_pending(&engine, m) <= TRANSPORT_WINDOW);
        REQUIRE(transport_counters(&engine, m)->messages_delivered == delivered[m]);
    }
}

/* A little-endian number of `bytes` bytes at data[*at], as much of it as
 * there is; *at moves past it. */
static uint32_t take(const uint8_t *data, size_t size, size_t *at, int bytes)
{
    uint32_t v = 0;
    for (int i = 0; i < bytes && *at < size; i++)
        v |= (uint32_t)data[(*at)++] << (8 * i);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t message[LONGEST_SEND];
    now_ns = 0;
    queue_full = 0;
    memset(delivered, 0, sizeof delivered);
    transport_init(&engine, MACHINE, NODES, EPOCH, &hooks, 0);
    transport_peer_up(&engine, 0, 7);
    transport_peer_up(&engine, 2, 5);

    size_t at = 0;
    while (at < size) {
        uint8_t step = data[at++] % 4;
        if (step == 0) {
            uint32_t len = take(data, size, &at, 2);
            if (len > size - at)
                len = (uint32_t)(size - at);
            check_parse(data + at, len);
            transport_frame(&engine, data + at, len);
            at += len;
        } else if (step == 1) {
            uint32_t machine = take(data, size, &at, 1), len = take(data, size, &at, 3) % LONGEST_SEND;
            int64_t sequence = transport_send(&engine, machine, message, len);
            REQUIRE(sequence > 0 || (sequence >= TRANSPORT_E_SIZE && sequence <= TRANSPORT_E_UNKNOWN));
            REQUIRE(len <= NETFRAME_MAX_MESSAGE || sequence < 0);
        } else if (step == 2) {
            now_ns += (uint64_t)take(data, size, &at, 4) * 1000;
            uint64_t next = transport_tick(&engine);
            REQUIRE(next >= now_ns);
        } else {
            uint32_t what = take(data, size, &at, 1);
            queue_full = what & 1;
            if (what & 2)
                transport_peer_up(&engine, what >> 2, take(data, size, &at, 4));
        }
        check_engine();
    }
    return 0;
}
