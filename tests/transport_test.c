/*
 * transport_test.c — the reliable transport (kernel/transport.c) between
 * simulated kernels on a simulated, faulty network, on the host, with the
 * address and undefined-behaviour sanitizers; run by tests/test_transport.py.
 *
 * For each seed, N engines send each other messages of 0 to 64 KiB over a
 * network that loses, duplicates, delays and reorders frames, with a
 * transmit queue of 16 frames per node; node 1 reboots early in the run,
 * and the last node dies (stops answering) and comes back in a new boot
 * later. Checked: every message is delivered once, in order, with its
 * bytes, or fails for a reason the run gave (a reboot, a dead peer), or
 * died with its sender's boot; nothing sent to a former boot reaches a new
 * one; a dead peer's messages fail within the bound transport.h states;
 * and the counters show that the faults happened and were repaired.
 * Prints one summary line per seed, or `transport_test: file:line: what`
 * for each failed check, and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport.h"

#define MAX_NODES      4
#define MESSAGES       60              /* per ordered pair of nodes */
#define TX_QUEUE       16              /* virtio_net.c's transmit buffers */
#define FRAME_TIME_NS  12000ull        /* a full frame at 1 Gbit/s */
#define MS             1000000ull
#define RUN_LIMIT_NS   (40000 * MS)
#define DEAD_BOUND_NS  (3820 * MS)     /* 20+40+80+160+320+5*640 ms: transport.h */

#define TEST_NAME "transport_test"
#include "host_check.h"

/* The seeded pseudo-random numbers of one run (xorshift64). */
static uint64_t prng_state;

static uint64_t prng(void)
{
    prng_state ^= prng_state << 13;
    prng_state ^= prng_state >> 7;
    prng_state ^= prng_state << 17;
    return prng_state;
}

/* True with probability per_mille / 1000. */
static int chance(unsigned per_mille)
{
    return prng() % 1000 < per_mille;
}

/* One message the test sent, and what became of it. */
struct entry {
    uint32_t length, sequence;
    int sender_boot, receiver_boot;
    int delivered, failed_reason;
};

/* One simulated kernel. */
struct node {
    struct transport transport;
    int index, boot, alive;
    uint32_t epoch, epoch_of_boot[8];
    uint64_t announce_at;               /* when the others hear of its new boot */
    uint64_t departures[TX_QUEUE];      /* when the frames in its transmit queue leave */
    int queued;
    uint64_t wire_free_at;
    int called;                         /* transport_send or transport_frame since its last tick */
};

/* A frame on the wire. */
struct flight {
    uint64_t at, serial;
    int to;
    uint32_t len;
    uint8_t bytes[NETFRAME_MAX_LEN];
};

static struct node nodes[MAX_NODES];
static int node_count;
static uint64_t now_ns;
static struct entry log_of[MAX_NODES][MAX_NODES][MESSAGES];
static int sent_count[MAX_NODES][MAX_NODES], last_delivered[MAX_NODES][MAX_NODES];
static struct flight **heap;            /* frames in flight, earliest first */
static int heap_size, heap_capacity;
static uint64_t serial;
static uint64_t death_at;
static int dead_node, timeout_failures, reboot_failures, late_timeouts;

/* The boot of node `other` that node `knower`'s transport knows (its
 * announcements reach the others a while after it boots). */
static int known_boot(int knower, int other)
{
    uint32_t epoch = nodes[knower].transport.peers[other].epoch;
    for (int b = nodes[other].boot; b > 0; b--)
        if (nodes[other].epoch_of_boot[b] == epoch)
            return b;
    return 0;
}

/* A byte of message `index` from s to r: the content depends on all three,
 * so a message delivered in another's place is caught. */
static uint8_t message_byte(int s, int r, int index, uint32_t i)
{
    uint32_t h = (uint32_t)(s * 7919 + r * 104729 + index * 1299709) ^ (i * 2654435761u);
    return (uint8_t)(h ^ h >> 13 ^ h >> 24);
}

/* The heap of frames in flight: is a earlier than b? */
static int earlier(const struct flight *a, const struct flight *b)
{
    return a->at < b->at || (a->at == b->at && a->serial < b->serial);
}

/* Put a frame in flight. */
static void heap_push(struct flight *f)
{
    if (heap_size == heap_capacity) {
        heap_capacity = heap_capacity ? 2 * heap_capacity : 1024;
        heap = realloc(heap, heap_capacity * sizeof *heap);
    }
    int i = heap_size++;
    while (i > 0 && earlier(f, heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = f;
}

/* Take the earliest frame in flight. */
static struct flight *heap_pop(void)
{
    struct flight *top = heap[0], *last = heap[--heap_size];
    int i = 0;
    for (;;) {
        int child = 2 * i + 1;
        if (child >= heap_size)
            break;
        if (child + 1 < heap_size && earlier(heap[child + 1], heap[child]))
            child++;
        if (!earlier(heap[child], last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = last;
    return top;
}

/* Send a copy of a frame to node `to`, arriving `delay` after `leaves`. */
static void launch(const uint8_t *frame, uint32_t len, int to, uint64_t leaves)
{
    struct flight *f = malloc(sizeof *f);
    f->at = leaves + 20000 + prng() % (2 * MS);     /* up to 2 ms of jitter: reordering */
    f->serial = serial++;
    f->to = to;
    f->len = len;
    memcpy(f->bytes, frame, len);
    heap_push(f);
}

/* Hook: the simulated NIC. Refuses a frame when 16 wait to leave; a frame
 * that leaves is lost (5%), or arrives, or arrives twice (3%). */
static int sim_send_frame(void *context, const uint8_t *frame, uint32_t len)
{
    struct node *n = context;
    int kept = 0;
    for (int i = 0; i < n->queued; i++)
        if (n->departures[i] > now_ns)
            n->departures[kept++] = n->departures[i];
    n->queued = kept;
    if (n->queued == TX_QUEUE)
        return -1;
    CHECK(len >= NETFRAME_MIN_LEN && len <= NETFRAME_MAX_LEN);
    n->wire_free_at = (n->wire_free_at > now_ns ? n->wire_free_at : now_ns) + FRAME_TIME_NS;
    n->departures[n->queued++] = n->wire_free_at;
    int to = frame[5];
    if (chance(50))
        return 0;
    launch(frame, len, to, n->wire_free_at);
    if (chance(30))
        launch(frame, len, to, n->wire_free_at);
    return 0;
}

/* Hook: the simulated clock. */
static uint64_t sim_now(void *context)
{
    (void)context;
    return now_ns;
}

/* Hook: a message from `machine` reached node `context`: it must be the
 * next one sent to this boot, whole. */
static void sim_deliver(void *context, uint32_t machine, const uint8_t *message, uint32_t len)
{
    struct node *n = context;
    int s = (int)machine, r = n->index, k = last_delivered[s][r] + 1;
    while (k < sent_count[s][r] &&
           (log_of[s][r][k].receiver_boot != n->boot || log_of[s][r][k].sender_boot != known_boot(r, s)))
        k++;
    CHECK(k < sent_count[s][r]);
    if (k >= sent_count[s][r])
        return;
    struct entry *e = &log_of[s][r][k];
    CHECK(e->length == len);
    int same = e->length == len;
    for (uint32_t i = 0; same && i < len; i++)
        same = message[i] == message_byte(s, r, k, i);
    CHECK(same);
    e->delivered++;
    last_delivered[s][r] = k;
}

/* Hook: message `sequence` of node `context` to `machine` failed. */
static void sim_failed(void *context, uint32_t machine, uint32_t sequence, int reason)
{
    struct node *n = context;
    int s = n->index, r = (int)machine, k = sent_count[s][r] - 1;
    while (k >= 0 && !(log_of[s][r][k].sender_boot == n->boot && log_of[s][r][k].sequence == sequence))
        k--;                            /* the latest pair of boots: sequences start again at 1 in each */
    CHECK(k >= 0 && !log_of[s][r][k].failed_reason);
    if (k >= 0)
        log_of[s][r][k].failed_reason = reason;
    CHECK(reason == TRANSPORT_FAIL_REBOOTED || reason == TRANSPORT_FAIL_TIMEOUT);
    if (reason == TRANSPORT_FAIL_TIMEOUT) {
        timeout_failures++;
        CHECK(r == dead_node && !nodes[r].alive);
        late_timeouts += now_ns > death_at + DEAD_BOUND_NS + 10 * MS;
    } else {
        reboot_failures++;
    }
}

/* Hook: a peer came back in a new boot. */
static void sim_peer_rebooted(void *context, uint32_t machine, uint32_t epoch)
{
    (void)context;
    CHECK(nodes[machine].epoch == epoch);
}

static const struct transport_hooks sim_hooks = {
    .send_frame = sim_send_frame, .now = sim_now, .deliver = sim_deliver,
    .failed = sim_failed, .peer_rebooted = sim_peer_rebooted,
};

/* Start node i in a new boot with a fresh epoch; it hears of every live
 * node at once (their answers), they hear of it 30 ms later (announce). */
static void boot(int i)
{
    struct node *n = &nodes[i];
    uint32_t epoch;
    do
        epoch = (uint32_t)(prng() & 0xffffff);
    while (epoch == 0 || epoch == n->epoch);
    n->index = i;
    n->boot++;
    n->alive = 1;
    n->epoch = n->epoch_of_boot[n->boot] = epoch;
    n->announce_at = now_ns + 30 * MS;
    transport_init(&n->transport, (uint32_t)i, (uint32_t)node_count, epoch, &sim_hooks, n);
    for (int j = 0; j < node_count; j++) {
        if (j == i || !nodes[j].alive)
            continue;
        transport_peer_up(&n->transport, (uint32_t)j, nodes[j].epoch);
    }
}

/* Node i's announcement reaches the other live nodes when it is due. */
static void announce_when_due(int i)
{
    if (!nodes[i].alive || nodes[i].announce_at > now_ns)
        return;
    for (int j = 0; j < node_count; j++)
        if (j != i && nodes[j].alive)
            transport_peer_up(&nodes[j].transport, (uint32_t)i, nodes[i].epoch);
    nodes[i].announce_at = UINT64_MAX;
}

/* A message length: empty, around a fragment's edge, the largest, or any. */
static uint32_t message_length(void)
{
    static const uint32_t edges[] = { 0, 1, NETFRAME_FRAGMENT_MAX - 1, NETFRAME_FRAGMENT_MAX,
                                      NETFRAME_FRAGMENT_MAX + 1, NETFRAME_MAX_MESSAGE };
    switch (prng() % 4) {
    case 0:
        return edges[prng() % 6];
    case 1:
        return (uint32_t)(prng() % 100);
    default:
        return (uint32_t)(prng() % (NETFRAME_MAX_MESSAGE + 1));
    }
}

/* Node s tries to send its next message to r. */
static void offer_message(int s, int r)
{
    static uint8_t buf[NETFRAME_MAX_MESSAGE];
    int k = sent_count[s][r];
    if (k == MESSAGES || !nodes[s].alive)
        return;
    uint32_t len = message_length();
    for (uint32_t i = 0; i < len; i++)
        buf[i] = message_byte(s, r, k, i);
    int64_t sequence = transport_send(&nodes[s].transport, (uint32_t)r, buf, len);
    nodes[s].called = 1;
    if (sequence < 0) {
        CHECK(sequence == TRANSPORT_E_WINDOW || sequence == TRANSPORT_E_NOSPACE ||
              (sequence == TRANSPORT_E_UNKNOWN && known_boot(s, r) == 0) ||     /* not announced yet */
              (sequence == TRANSPORT_E_DOWN && r == dead_node));   /* until its new boot is announced */
        return;
    }
    log_of[s][r][k] = (struct entry){ .length = len, .sequence = (uint32_t)sequence, .sender_boot = nodes[s].boot,
                                      .receiver_boot = known_boot(s, r) };
    sent_count[s][r]++;
}

/* Hook for the error tests: a NIC that takes every frame and loses it. */
static int lose_frame(void *context, const uint8_t *frame, uint32_t len)
{
    (void)context, (void)frame, (void)len;
    return 0;
}

/* transport_send's errors, each provoked on purpose: an unknown peer, this
 * machine, a message too long, a full window, no send blocks left. */
static void test_send_errors(void)
{
    static const struct transport_hooks hooks = { .send_frame = lose_frame, .now = sim_now };
    static struct transport t;
    static uint8_t big[NETFRAME_MAX_MESSAGE + 1];
    transport_init(&t, 0, 3, 77, &hooks, 0);
    CHECK(transport_send(&t, 1, "x", 1) == TRANSPORT_E_UNKNOWN);     /* not announced */
    transport_peer_up(&t, 1, 5);
    transport_peer_up(&t, 2, 6);
    CHECK(transport_send(&t, 0, "x", 1) == TRANSPORT_E_UNKNOWN);     /* itself */
    CHECK(transport_send(&t, 3, "x", 1) == TRANSPORT_E_UNKNOWN);     /* beyond the cluster */
    CHECK(transport_send(&t, 1, big, sizeof big) == TRANSPORT_E_SIZE);
    for (int i = 1; i <= TRANSPORT_WINDOW; i++)
        CHECK(transport_send(&t, 1, "x", 1) == i);
    CHECK(transport_send(&t, 1, "x", 1) == TRANSPORT_E_WINDOW);
    CHECK(transport_pending(&t, 1) == TRANSPORT_WINDOW);
    int sent = 0;
    while (transport_send(&t, 2, big, NETFRAME_MAX_MESSAGE) > 0)
        sent++;
    CHECK(sent == (TRANSPORT_SEND_BLOCKS - TRANSPORT_WINDOW) / NETFRAME_MAX_FRAGMENTS);   /* 1 block each to 1 */
    CHECK(transport_send(&t, 2, big, NETFRAME_MAX_MESSAGE) == TRANSPORT_E_NOSPACE);
    CHECK(transport_send(&t, 2, big, 0) == sent + 1);               /* an empty message needs no block */
}

/* Has everything been sent, and is nothing pending or in flight? */
static int finished(void)
{
    if (heap_size)
        return 0;
    for (int s = 0; s < node_count; s++)
        for (int r = 0; r < node_count; r++)
            if (s != r && (sent_count[s][r] < MESSAGES || transport_pending(&nodes[s].transport, (uint32_t)r)))
                return 0;
    return 1;
}

/* Deliver every frame due by now; frames to a dead node are lost. */
static void deliver_due_frames(void)
{
    while (heap_size && heap[0]->at <= now_ns) {
        struct flight *f = heap_pop();
        if (nodes[f->to].alive) {
            transport_frame(&nodes[f->to].transport, f->bytes, f->len);
            nodes[f->to].called = 1;
        }
        free(f);
    }
}

/* Every message was delivered exactly once, or failed, or was lost with
 * its sender's boot; within one pair of boots, what was delivered is a
 * prefix of what was sent (nothing lost before something delivered). */
static void check_every_message(void)
{
    for (int s = 0; s < node_count; s++)
        for (int r = 0; r < node_count; r++) {
            int gap = 0;
            for (int k = 0; k < sent_count[s][r]; k++) {
                struct entry *e = &log_of[s][r][k];
                CHECK(e->delivered <= 1);
                CHECK(e->delivered || e->failed_reason || e->sender_boot < nodes[s].boot);
                if (k > 0 && (log_of[s][r][k - 1].sender_boot != e->sender_boot ||
                              log_of[s][r][k - 1].receiver_boot != e->receiver_boot))
                    gap = 0;
                CHECK(!(gap && e->delivered));
                gap |= !e->delivered;
            }
        }
}

/* The counters of every node about every peer, summed. */
static struct transport_counters counter_sums(void)
{
    struct transport_counters sum = { 0 };
    for (int i = 0; i < node_count; i++)
        for (int j = 0; j < node_count; j++) {
            const struct transport_counters *c = transport_counters(&nodes[i].transport, (uint32_t)j);
            sum.messages_delivered += c->messages_delivered;
            sum.frames_sent += c->frames_sent;
            sum.retransmissions += c->retransmissions;
            sum.duplicates_dropped += c->duplicates_dropped;
            sum.out_of_order_dropped += c->out_of_order_dropped;
            sum.stale_dropped += c->stale_dropped;
            sum.no_buffer_dropped += c->no_buffer_dropped;
            sum.queue_full += c->queue_full;
            sum.acks_sent += c->acks_sent;
            sum.timeouts += c->timeouts;
        }
    return sum;
}

/* One run: `count` nodes, faults from `seed`; node 1 reboots at 200 ms, the
 * last node dies at 400 ms and boots again at 6 s. */
static void run(uint64_t seed, int count)
{
    memset(nodes, 0, sizeof nodes);
    memset(log_of, 0, sizeof log_of);
    memset(sent_count, 0, sizeof sent_count);
    for (int s = 0; s < MAX_NODES; s++)
        for (int r = 0; r < MAX_NODES; r++)
            last_delivered[s][r] = -1;
    prng_state = seed * 0x9e3779b97f4a7c15ull + 1;
    node_count = count;
    dead_node = count - 1;
    now_ns = 0;
    timeout_failures = reboot_failures = late_timeouts = 0;
    death_at = 400 * MS;
    for (int i = 0; i < count; i++)
        boot(i);
    int rebooted = 0, revived = 0;
    uint64_t next_tick[MAX_NODES] = { 0 };
    while (!finished() && now_ns < RUN_LIMIT_NS) {
        if (!rebooted && now_ns >= 200 * MS)
            boot(1), rebooted = 1;
        if (nodes[dead_node].alive && !revived && now_ns >= death_at)
            nodes[dead_node].alive = 0;
        if (!revived && now_ns >= 6000 * MS)
            boot(dead_node), revived = 1;
        for (int i = 0; i < count; i++)
            announce_when_due(i);
        deliver_due_frames();
        for (int s = 0; s < count; s++)
            for (int r = 0; r < count; r++)
                if (s != r && chance(300))
                    offer_message(s, r);
        for (int i = 0; i < count; i++)     /* after another call, the time to tick may be sooner */
            if (nodes[i].alive && (next_tick[i] <= now_ns || nodes[i].called))
                next_tick[i] = transport_tick(&nodes[i].transport), nodes[i].called = 0;
        now_ns += 100000;       /* 100 us */
    }
    CHECK(finished());
    check_every_message();
    struct transport_counters sum = counter_sums();
    CHECK(sum.retransmissions > 0 && sum.duplicates_dropped > 0 && sum.out_of_order_dropped > 0);
    CHECK(sum.stale_dropped > 0 && sum.queue_full > 0);
    CHECK(reboot_failures > 0 && timeout_failures > 0 && late_timeouts == 0);
    printf("transport_test: seed %llu, %d nodes: %u messages delivered, %d failed at a reboot, %d at a dead peer; "
           "%u data frames, %u retransmitted, %u duplicates, %u out of order, %u stale, %u without a buffer, "
           "%u queue full, %u acks, %u timeouts; %.1f s simulated\n",
           (unsigned long long)seed, count, sum.messages_delivered, reboot_failures, timeout_failures,
           sum.frames_sent, sum.retransmissions, sum.duplicates_dropped, sum.out_of_order_dropped, sum.stale_dropped,
           sum.no_buffer_dropped, sum.queue_full, sum.acks_sent, sum.timeouts, now_ns / 1e9);
}

int main(void)
{
    test_send_errors();
    for (uint64_t seed = 1; seed <= 4; seed++)
        run(seed, seed % 2 ? 3 : 4);
    free(heap);
    if (failures) {
        fprintf(stderr, "transport_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("transport_test: %d checks passed\n", checks);
    return 0;
}
