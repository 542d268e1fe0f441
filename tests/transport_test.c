/*
 * transport_test.c — the reliable transport (kernel/net/transport.c) between
 * simulated kernels on a simulated, faulty network, on the host, with the
 * address and undefined-behaviour sanitizers; run by tests/test_transport.py.
 *
 * The fault runs: for each seed, N engines send each other messages of 0
 * to 64 KiB over a network that loses (5%), duplicates (3%), delays and
 * reorders frames, with a transmit queue of 16 frames per node; node 1
 * reboots when a quarter of the messages have been delivered, and the last
 * node dies (stops answering) at half and comes back in a new boot 5.6 s
 * later.
 * Checked: every message is delivered once, in order, with its bytes, or
 * fails for a reason the run gave (a reboot, a dead peer), or died with
 * its sender's boot; nothing sent to a former boot reaches a new one; a
 * dead peer's messages fail within the bound transport.h states; and the
 * counters show that the faults happened and were repaired.
 *
 * The efficiency runs: thousands of messages of 1 byte to 64 KiB on a
 * network that loses 10% of the frames both ways and duplicates 5%: every
 * message is delivered once, in order, intact, and the DATA frames sent
 * are fewer than 1.5 times the fragments the messages need (selective
 * repeat sends again only what is missing).
 *
 * Before them, engines fed frames one by one: transport_send's errors;
 * the receiver keeping fragments out of order and acknowledging them; the
 * sender resending exactly the fragments an ACK shows missing; the
 * receiver evicting held fragments when its blocks run out.
 *
 * Prints one summary line per run, or `transport_test: file:line: what`
 * for each failed check, and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport.h"

#define MAX_NODES      4
#define MAX_MESSAGES   500             /* per ordered pair of nodes */
#define TX_QUEUE       16              /* kernel/dev/virtio_net.c's transmit buffers */
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
    uint8_t nic[NETFRAME_MAX_LEN + 8] __attribute__((aligned(8)));   /* in_place: where frames are built */
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
/* What a run does: its nodes, its network, its faults. */
struct scenario {
    int nodes;
    int messages;                       /* per ordered pair of nodes, at most MAX_MESSAGES */
    unsigned loss, duplication;         /* per mille of the frames that leave a node */
    int faults;                         /* node 1 reboots; the last node dies and comes back */
    uint32_t min_length;                /* no message shorter */
    uint64_t start_at;                  /* when the first messages are offered */
};

static const struct scenario *scenario;
static int in_place;                    /* runs with sim_hooks_in_place */
static struct entry log_of[MAX_NODES][MAX_NODES][MAX_MESSAGES];
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
 * that leaves is lost, or arrives, or arrives twice (the scenario says how
 * often). */
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
    CHECK(len >= NETFRAME_BODY_MIN_LEN && len <= (in_place ? NETFRAME_MAX_LEN : NETFRAME_BODY_MAX_LEN));
    n->wire_free_at = (n->wire_free_at > now_ns ? n->wire_free_at : now_ns) + FRAME_TIME_NS;
    n->departures[n->queued++] = n->wire_free_at;
    int to = frame[5];
    if (chance(scenario->loss))
        return 0;
    launch(frame, len, to, n->wire_free_at);
    if (chance(scenario->duplication))
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

/* The optional hook, as the kernel's cluster.c gives it: a frame built
 * and sealed in the node's own buffer (on a word boundary, a DATA frame's
 * fragment hashed as it is copied in), then sent from there; such frames
 * are checked and unsealed on arrival (deliver_due_frames). */
static uint64_t frames_in_place;
static const struct siphash_key sim_key = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

static int sim_send_netframe(void *context, const struct netframe *f)
{
    struct node *n = context;
    CHECK(f->type == NETFRAME_DATA || f->type == NETFRAME_ACK || f->type == NETFRAME_GONE);
    if (f->type == NETFRAME_DATA)
        return sim_send_frame(context, n->nic, netframe_build_data_sealed(n->nic, f, ++frames_in_place, &sim_key));
    uint32_t body = f->type == NETFRAME_ACK ? netframe_build_ack(n->nic, f) : netframe_build_gone(n->nic, f);
    return sim_send_frame(context, n->nic, netframe_seal(n->nic, body, ++frames_in_place, &sim_key));
}

static const struct transport_hooks sim_hooks_in_place = {
    .send_frame = sim_send_frame, .now = sim_now, .deliver = sim_deliver,
    .failed = sim_failed, .peer_rebooted = sim_peer_rebooted,
    .send_netframe = sim_send_netframe,
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
    transport_init(&n->transport, (uint32_t)i, (uint32_t)node_count, epoch, in_place ? &sim_hooks_in_place : &sim_hooks,
                   n);
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
    if (k == scenario->messages || !nodes[s].alive)
        return;
    uint32_t len = message_length();
    if (len < scenario->min_length)
        len = scenario->min_length;
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

/* The engines fed by hand below are machines 0 (epoch 7) and 1 (epoch 9)
 * of 2; the frames they send are kept here, the first CAPTURE_MAX of them. */
#define CAPTURE_MAX 64
static uint8_t captured[CAPTURE_MAX][NETFRAME_MAX_LEN];
static uint32_t captured_len[CAPTURE_MAX];
static int captured_count;
static uint32_t hand_length[40];        /* message k from 0 to 1 is hand_length[k] bytes */
static uint32_t hand_delivered;         /* the last of them delivered */

/* Hook: keep a frame sent by an engine fed by hand. */
static int capture_frame(void *context, const uint8_t *frame, uint32_t len)
{
    (void)context;
    if (captured_count < CAPTURE_MAX) {
        memcpy(captured[captured_count], frame, len);
        captured_len[captured_count] = len;
    }
    captured_count++;
    return 0;
}

/* Hook: machine 1 fed by hand delivers a message from 0: the next one,
 * with its bytes. */
static void hand_deliver(void *context, uint32_t machine, const uint8_t *message, uint32_t len)
{
    (void)context;
    uint32_t k = ++hand_delivered;
    CHECK(machine == 0 && k < 40 && len == hand_length[k]);
    int same = k < 40 && len == hand_length[k];
    for (uint32_t i = 0; same && i < len; i++)
        same = message[i] == message_byte(0, 1, (int)k, i);
    CHECK(same);
}

/* Hook: no message fails in the tests fed by hand. */
static void hand_failed(void *context, uint32_t machine, uint32_t sequence, int reason)
{
    (void)context, (void)machine, (void)sequence, (void)reason;
    CHECK(0);
}

static const struct transport_hooks hand_hooks = {
    .send_frame = capture_frame, .now = sim_now, .deliver = hand_deliver, .failed = hand_failed,
    .peer_rebooted = sim_peer_rebooted,
};

/* Captured frame i, parsed (it must parse). */
static struct netframe captured_frame(int i)
{
    struct netframe f = { 0 };
    CHECK(i < captured_count && i < CAPTURE_MAX && netframe_parse(captured[i], captured_len[i], &f) == NETFRAME_OK);
    return f;
}

/* Feed engine t fragment `index` of message `sequence` from machine 0 to
 * 1, `length` bytes long, with `flags` and `stamp`. */
static void feed_data(struct transport *t, uint32_t sequence, uint32_t length, uint32_t index, uint32_t flags,
                      uint32_t stamp)
{
    uint8_t payload[NETFRAME_FRAGMENT_MAX], frame[NETFRAME_MAX_LEN];
    struct netframe f = { .machine = 0, .node_count = 2, .epoch = 7, .receiver_epoch = 9, .sequence = sequence,
                          .message_length = length, .fragment_offset = index * NETFRAME_FRAGMENT_MAX,
                          .flags = flags, .stamp = stamp, .payload = payload };
    uint32_t rest = length - f.fragment_offset;
    f.fragment_length = rest < NETFRAME_FRAGMENT_MAX ? rest : NETFRAME_FRAGMENT_MAX;
    for (uint32_t i = 0; i < f.fragment_length; i++)
        payload[i] = message_byte(0, 1, (int)sequence, f.fragment_offset + i);
    transport_frame(t, frame, netframe_build_data(frame, &f));
}

/* Feed engine t an ACK from machine 1 to 0 with the fields given and
 * `maps` for the bits of `partial`. */
static void feed_ack(struct transport *t, uint32_t ack, uint32_t echo, uint32_t whole, uint32_t partial,
                     const uint64_t *maps)
{
    uint8_t frame[NETFRAME_ACK_MAX_LEN];
    struct netframe f = { .machine = 1, .node_count = 2, .epoch = 9, .receiver_epoch = 7, .ack = ack, .echo = echo,
                          .whole = whole, .partial = partial };
    for (int i = 0, n = 0; i < 32; i++)
        if (partial & (1u << i))
            f.fragments[n] = maps[n], n++;
    transport_frame(t, frame, netframe_build_ack(frame, &f));
}

/* Start machine `machine` of the two fed by hand, at time 0. */
static void hand_start(struct transport *t, uint32_t machine)
{
    now_ns = 0;
    captured_count = 0;
    hand_delivered = 0;
    transport_init(t, machine, 2, machine == 0 ? 7 : 9, &hand_hooks, 0);
    transport_peer_up(t, 1 - machine, machine == 0 ? 9 : 7);
}

/* The receiver keeps fragments of later messages, single-fragment ones
 * too, delivers in order, and says in each ACK what it holds; it answers
 * when a message becomes whole or a frame asks, at once while it holds
 * fragments after the last message delivered, TRANSPORT_ACK_DELAY_NS
 * later when it holds none (no DATA frame went back meanwhile); it drops
 * a fragment beyond its window, a duplicate, and one giving a message
 * another length. */
static void test_receive_window(void)
{
    static struct transport t;
    const struct transport_counters *c = transport_counters(&t, 0);
    hand_start(&t, 1);
    hand_length[1] = 10, hand_length[2] = 5, hand_length[3] = NETFRAME_FRAGMENT_MAX + 20;

    feed_data(&t, 2, 5, 0, NETFRAME_DATA_ACK_NOW, 100);              /* message 2 before 1 */
    struct netframe a = captured_frame(0);
    CHECK(hand_delivered == 0 && c->out_of_order_buffered == 1 && captured_count == 1);
    CHECK(a.type == NETFRAME_ACK && a.ack == 0 && a.echo == 100 && a.whole == 2 && a.partial == 0);

    feed_data(&t, 3, hand_length[3], 1, NETFRAME_DATA_ACK_NOW, 90);  /* the last fragment of 3, overtaken */
    a = captured_frame(1);
    CHECK(a.ack == 0 && a.echo == 100 && a.whole == 2 && a.partial == 4 && a.fragments[0] == 2);

    feed_data(&t, 1 + TRANSPORT_WINDOW + 1, 1, 0, NETFRAME_DATA_ACK_NOW, 110);    /* beyond the window */
    CHECK(c->out_of_order_dropped == 1 && captured_count == 2);
    feed_data(&t, 3, 2 * NETFRAME_FRAGMENT_MAX + 1, 0, 0, 111);      /* 3 is another length now */
    CHECK(c->bad_fragments == 1 && captured_count == 2);

    feed_data(&t, 1, 10, 0, 0, 120);                                 /* 1: delivered, and 2 after it */
    a = captured_frame(2);
    CHECK(hand_delivered == 2 && a.ack == 2 && a.echo == 120 && a.whole == 0 && a.partial == 1 && a.fragments[0] == 2);
    feed_data(&t, 3, hand_length[3], 0, 0, 130);                     /* 3 whole, nothing held: it waits */
    CHECK(hand_delivered == 3 && captured_count == 3 && transport_tick(&t) == TRANSPORT_ACK_DELAY_NS);
    now_ns = TRANSPORT_ACK_DELAY_NS;
    CHECK(transport_tick(&t) == TRANSPORT_NO_TIMER);
    a = captured_frame(3);
    CHECK(captured_count == 4 && a.ack == 3 && a.whole == 0 && a.partial == 0 && a.echo == 130);

    feed_data(&t, 2, 5, 0, NETFRAME_DATA_ACK_NOW, 140);              /* a repeat that asks: answered */
    CHECK(c->duplicates_dropped == 1 && captured_count == 4);
    now_ns += TRANSPORT_ACK_DELAY_NS;
    transport_tick(&t);
    CHECK(captured_count == 5 && captured_frame(4).ack == 3);
    feed_data(&t, 3, hand_length[3], 0, 0, 150);                     /* one that does not: not */
    CHECK(c->duplicates_dropped == 2 && captured_count == 5 && transport_tick(&t) == TRANSPORT_NO_TIMER);
    CHECK(c->messages_delivered == 3 && c->acks_sent == 5 && t.receive_blocks_free == TRANSPORT_RECEIVE_BLOCKS);
}

/* Acknowledgements carried in DATA frames: a receiver that holds nothing
 * after the last message delivered sends no ACK frame when a DATA frame
 * of its goes back within TRANSPORT_ACK_DELAY_NS, and that frame carries
 * the acknowledgement; it sends an ACK frame at once when
 * TRANSPORT_ACK_MESSAGES messages have come since the last one; and a
 * DATA frame that acknowledges a message frees it. */
static void test_carried_acks(void)
{
    static struct transport t;
    static uint8_t bytes[20];
    const struct transport_counters *c = transport_counters(&t, 0);
    hand_start(&t, 1);
    for (uint32_t k = 1; k <= 10; k++)
        hand_length[k] = 10 + k;
    feed_data(&t, 1, hand_length[1], 0, NETFRAME_DATA_ACK_NOW, 100);
    CHECK(hand_delivered == 1 && captured_count == 0 && transport_tick(&t) == TRANSPORT_ACK_DELAY_NS);
    now_ns = TRANSPORT_ACK_DELAY_NS / 2;
    CHECK(transport_send(&t, 0, bytes, sizeof bytes) == 1);
    struct netframe f = captured_frame(0);
    CHECK(captured_count == 1 && f.type == NETFRAME_DATA && (f.flags & NETFRAME_DATA_HAS_ACK));
    CHECK(f.ack == 1 && f.echo == 100);
    now_ns = 2 * TRANSPORT_ACK_DELAY_NS;
    transport_tick(&t);
    CHECK(captured_count == 1 && c->acks_sent == 0 && c->acks_carried == 1);

    for (uint32_t k = 2; k <= 1 + TRANSPORT_ACK_MESSAGES; k++)
        feed_data(&t, k, hand_length[k], 0, NETFRAME_DATA_ACK_NOW, 100 + k);
    f = captured_frame(1);
    CHECK(captured_count == 2 && f.type == NETFRAME_ACK && f.ack == 1 + TRANSPORT_ACK_MESSAGES && c->acks_sent == 1);

    uint8_t payload[32], frame[NETFRAME_MAX_LEN];
    for (uint32_t i = 0; i < hand_length[10]; i++)
        payload[i] = message_byte(0, 1, 10, i);
    struct netframe d = { .machine = 0, .node_count = 2, .epoch = 7, .receiver_epoch = 9, .sequence = 10,
                          .message_length = hand_length[10], .fragment_length = hand_length[10],
                          .flags = NETFRAME_DATA_ACK_NOW | NETFRAME_DATA_HAS_ACK, .stamp = 300, .ack = 1,
                          .echo = captured_frame(0).stamp, .payload = payload };
    CHECK(transport_pending(&t, 0) == 1);
    transport_frame(&t, frame, netframe_build_data(frame, &d));
    CHECK(hand_delivered == 10 && transport_pending(&t, 0) == 0 && t.send_blocks_free == TRANSPORT_SEND_BLOCKS);
}

/* The sender sends again exactly the fragments an ACK shows missing once
 * a later frame is known to have arrived; ignores an ACK older than one it
 * has; refuses ACKs of things never sent; on a timeout sends again only
 * what the oldest message lacks. */
static void test_selective_retransmit(void)
{
    static struct transport t;
    static uint8_t bytes[2 * NETFRAME_FRAGMENT_MAX + 10];
    const struct transport_counters *c = transport_counters(&t, 1);
    hand_start(&t, 0);
    CHECK(transport_send(&t, 1, bytes, sizeof bytes) == 1);         /* 3 fragments at 0 ms */
    CHECK(captured_count == 3);
    for (int i = 0; i < 3; i++) {
        struct netframe f = captured_frame(i);
        CHECK(f.type == NETFRAME_DATA && f.sequence == 1 && f.fragment_offset == (uint32_t)i * NETFRAME_FRAGMENT_MAX);
        CHECK(f.stamp == 0 && f.flags == (i == 2 ? NETFRAME_DATA_ACK_NOW : 0u) + NETFRAME_DATA_HAS_ACK);
        CHECK(f.ack == 0 && f.echo == 0);                            /* nothing from machine 1 yet */
    }
    now_ns = 5 * MS;
    CHECK(transport_send(&t, 1, bytes, 1) == 2);
    struct netframe f = captured_frame(3);
    CHECK(captured_count == 4 && f.sequence == 2 && f.stamp == 5000 &&
          f.flags == (NETFRAME_DATA_ACK_NOW | NETFRAME_DATA_HAS_ACK));

    now_ns = 6 * MS;            /* 1 lacks fragment 1, and 2, sent 5 ms after it, arrived: send fragment 1 again */
    feed_ack(&t, 0, 5000, 2, 1, (const uint64_t[]){ 5 });
    f = captured_frame(4);
    CHECK(captured_count == 5 && f.sequence == 1 && f.fragment_offset == NETFRAME_FRAGMENT_MAX);
    CHECK(f.flags == (NETFRAME_DATA_ACK_NOW | NETFRAME_DATA_HAS_ACK) && f.stamp == 6000 && c->retransmissions == 1);

    now_ns = 7 * MS;
    feed_ack(&t, 0, 4000, 0, 0, 0);                                 /* older than the last: nothing changes */
    CHECK(captured_count == 5 && c->bad_acks == 0 && transport_pending(&t, 1) == 2);
    feed_ack(&t, 3, 6000, 0, 0, 0);                                 /* message 3 was never sent */
    feed_ack(&t, 0, 6000, 4, 0, 0);
    feed_ack(&t, 0, 6000, 0, 1, (const uint64_t[]){ 8 });            /* 1 has no fragment 3 */
    feed_ack(&t, 0, 6000, 0, 1, (const uint64_t[]){ 7 });            /* all of 1 is not "partial" */
    CHECK(c->bad_acks == 4 && captured_count == 5);

    CHECK(transport_tick(&t) == 26 * MS);                           /* 20 ms after the last news */
    now_ns = 26 * MS;
    CHECK(transport_tick(&t) == 26 * MS + 2 * TRANSPORT_RTO_INITIAL_NS);
    f = captured_frame(5);
    CHECK(captured_count == 6 && f.sequence == 1 && f.fragment_offset == NETFRAME_FRAGMENT_MAX);
    CHECK(c->timeouts == 1 && c->retransmissions == 2);

    now_ns = 27 * MS;
    feed_ack(&t, 2, 26000, 0, 0, 0);
    CHECK(transport_pending(&t, 1) == 0 && transport_tick(&t) == TRANSPORT_NO_TIMER);
    CHECK(c->frames_sent == 6 && c->acks_received == 7 && t.send_blocks_free == TRANSPORT_SEND_BLOCKS);
}

/* A patient sender (transport_be_patient) takes a peer silent for a minute
 * -- a machine stopped at a debugger's breakpoint -- not to be down: no
 * message fails (hand_failed), it probes every TRANSPORT_RTO_MAX_NS, and
 * the peer's first ACK after the silence ends the wait. */
static void test_patient_peer(void)
{
    static struct transport t;
    const struct transport_counters *c = transport_counters(&t, 1);
    hand_start(&t, 0);
    transport_be_patient(&t);
    CHECK(transport_send(&t, 1, "x", 1) == 1 && captured_count == 1);
    uint64_t next = transport_tick(&t);
    while (next <= 60000 * MS) {
        now_ns = next;
        next = transport_tick(&t);
        CHECK(next - now_ns <= TRANSPORT_RTO_MAX_NS);
    }
    CHECK(c->timeouts > 2 * TRANSPORT_MAX_RETRIES && c->messages_failed == 0 && !t.peers[1].down);
    CHECK(captured_count == 1 + (int)c->timeouts && transport_pending(&t, 1) == 1);
    CHECK(transport_send(&t, 1, "y", 1) == 2);                      /* the peer is still open */
    feed_ack(&t, 2, (uint32_t)(now_ns / 1000), 0, 0, 0);
    CHECK(transport_pending(&t, 1) == 0 && transport_tick(&t) == TRANSPORT_NO_TIMER);
}

/* With every receive block taken by later messages, the next message
 * expected evicts the one furthest ahead, and every message still arrives
 * once its fragments are sent again. */
static void test_eviction(void)
{
    static struct transport t;
    const struct transport_counters *c = transport_counters(&t, 0);
    const uint32_t fragments = NETFRAME_MAX_FRAGMENTS, kept_whole = TRANSPORT_RECEIVE_BLOCKS / NETFRAME_MAX_FRAGMENTS;
    hand_start(&t, 1);
    for (uint32_t k = 1; k <= TRANSPORT_WINDOW; k++)
        hand_length[k] = NETFRAME_MAX_MESSAGE;
    for (uint32_t k = 2; k <= TRANSPORT_WINDOW; k++)
        for (uint32_t i = 0; i < fragments; i++)
            feed_data(&t, k, NETFRAME_MAX_MESSAGE, i, 0, k);
    uint32_t kept = TRANSPORT_RECEIVE_BLOCKS;               /* messages 2 .. kept_whole+1, part of the next */
    CHECK(t.receive_blocks_free == 0 && c->out_of_order_buffered == kept);
    CHECK(c->no_buffer_dropped == (TRANSPORT_WINDOW - 1) * fragments - kept);
    for (uint32_t i = 0; i < fragments; i++)
        feed_data(&t, 1, NETFRAME_MAX_MESSAGE, i, 0, 100);
    uint32_t part = kept - kept_whole * fragments;          /* the part evicted first, then a whole one */
    CHECK(hand_delivered == kept_whole && c->fragments_evicted == part + fragments);
    for (uint32_t k = kept_whole + 1; k <= TRANSPORT_WINDOW; k++)
        for (uint32_t i = 0; i < fragments; i++)
            feed_data(&t, k, NETFRAME_MAX_MESSAGE, i, 0, 200 + k);
    CHECK(hand_delivered == TRANSPORT_WINDOW && t.receive_blocks_free == TRANSPORT_RECEIVE_BLOCKS);
}

/* Has everything been sent, and is nothing pending or in flight? */
static int finished(void)
{
    if (heap_size)
        return 0;
    for (int s = 0; s < node_count; s++)
        for (int r = 0; r < node_count; r++)
            if (s != r && (sent_count[s][r] < scenario->messages ||
                           transport_pending(&nodes[s].transport, (uint32_t)r)))
                return 0;
    return 1;
}

/* Deliver every frame due by now; frames to a dead node are lost. */
static void deliver_due_frames(void)
{
    while (heap_size && heap[0]->at <= now_ns) {
        struct flight *f = heap_pop();
        if (nodes[f->to].alive) {
            uint64_t number;
            int32_t body = in_place ? netframe_unseal(f->bytes, f->len, &sim_key, &number) : (int32_t)f->len;
            CHECK(body >= 0);
            if (body >= 0)
                transport_frame(&nodes[f->to].transport, f->bytes, (uint32_t)body);
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
            sum.out_of_order_buffered += c->out_of_order_buffered;
            sum.out_of_order_dropped += c->out_of_order_dropped;
            sum.stale_dropped += c->stale_dropped;
            sum.no_buffer_dropped += c->no_buffer_dropped;
            sum.fragments_evicted += c->fragments_evicted;
            sum.bad_fragments += c->bad_fragments;
            sum.bad_acks += c->bad_acks;
            sum.queue_full += c->queue_full;
            sum.acks_sent += c->acks_sent;
            sum.acks_carried += c->acks_carried;
            sum.timeouts += c->timeouts;
        }
    return sum;
}

/* The fragments the messages sent need: the DATA frames a network that
 * loses nothing would carry. */
static uint32_t fragments_needed(void)
{
    uint32_t n = 0;
    for (int s = 0; s < node_count; s++)
        for (int r = 0; r < node_count; r++)
            for (int k = 0; k < sent_count[s][r]; k++) {
                uint32_t length = log_of[s][r][k].length;
                n += length == 0 ? 1 : (length + NETFRAME_FRAGMENT_MAX - 1) / NETFRAME_FRAGMENT_MAX;
            }
    return n;
}

/* Messages delivered so far, by every node to every other. */
static int messages_delivered(void)
{
    int n = 0;
    for (int s = 0; s < node_count; s++)
        for (int r = 0; r < node_count; r++)
            for (int k = 0; k < sent_count[s][r]; k++)
                n += log_of[s][r][k].delivered;
    return n;
}

static void check_outcome(uint64_t seed, const struct scenario *sc, int total, int rebooted, int revived);

/* One run of scenario `sc` with faults from `seed`. With sc->faults, node 1
 * reboots when a quarter of the messages have been delivered, and the last
 * node dies at half and boots again 5.6 s later. */
static void run(uint64_t seed, const struct scenario *sc)
{
    memset(nodes, 0, sizeof nodes);
    memset(log_of, 0, sizeof log_of);
    memset(sent_count, 0, sizeof sent_count);
    for (int s = 0; s < MAX_NODES; s++)
        for (int r = 0; r < MAX_NODES; r++)
            last_delivered[s][r] = -1;
    prng_state = seed * 0x9e3779b97f4a7c15ull + 1;
    scenario = sc;
    node_count = sc->nodes;
    dead_node = node_count - 1;
    now_ns = 0;
    timeout_failures = reboot_failures = late_timeouts = 0;
    death_at = UINT64_MAX;
    for (int i = 0; i < node_count; i++)
        boot(i);
    int total = node_count * (node_count - 1) * sc->messages, rebooted = 0, revived = 0;
    uint64_t next_tick[MAX_NODES] = { 0 };
    while (!finished() && now_ns < RUN_LIMIT_NS) {
        if (sc->faults && !rebooted && messages_delivered() >= total / 4)
            boot(1), rebooted = 1;
        if (sc->faults && death_at == UINT64_MAX && messages_delivered() >= total / 2)
            nodes[dead_node].alive = 0, death_at = now_ns;
        if (!revived && now_ns >= death_at + 5600 * MS)
            boot(dead_node), revived = 1;
        for (int i = 0; i < node_count; i++)
            announce_when_due(i);
        deliver_due_frames();
        for (int s = 0; s < node_count && now_ns >= sc->start_at; s++)
            for (int r = 0; r < node_count; r++)
                if (s != r && chance(300))
                    offer_message(s, r);
        for (int i = 0; i < node_count; i++)     /* after another call, the time to tick may be sooner */
            if (nodes[i].alive && (next_tick[i] <= now_ns || nodes[i].called))
                next_tick[i] = transport_tick(&nodes[i].transport), nodes[i].called = 0;
        now_ns += 100000;       /* 100 us */
    }
    check_outcome(seed, sc, total, rebooted, revived);
}

/* What a run of scenario `sc` (seed `seed`) must have done: every message
 * delivered or failed for its reason, each fault's counter moved, and
 * without faults all `total` messages delivered in under 1.5 DATA frames a
 * fragment. Prints the run's figures. */
static void check_outcome(uint64_t seed, const struct scenario *sc, int total, int rebooted, int revived)
{
    CHECK(finished());
    check_every_message();
    struct transport_counters sum = counter_sums();
    CHECK(sum.retransmissions > 0 && sum.duplicates_dropped > 0 && sum.out_of_order_buffered > 0);
    CHECK(sum.out_of_order_dropped == 0 && sum.bad_fragments == 0 && sum.bad_acks == 0);    /* all keep the rules */
    CHECK(sum.queue_full > 0);
    if (sc->faults) {
        CHECK(sum.stale_dropped > 0 && rebooted && revived);
        CHECK(reboot_failures > 0 && timeout_failures > 0 && late_timeouts == 0);
    } else {
        CHECK(messages_delivered() == total && reboot_failures == 0 && timeout_failures == 0);
    }
    printf("transport_test: seed %llu, %d nodes, %u%% loss, %u%% duplication%s: %u messages delivered, "
           "%d failed at a reboot, %d at a dead peer; %u data frames, %u retransmitted, "
           "%u duplicates, %u held out of order, %u stale, %u without a buffer, %u evicted, %u queue full, %u acks "
           "(%u more in DATA frames), %u timeouts; %.1f s simulated\n",
           (unsigned long long)seed, node_count, sc->loss / 10, sc->duplication / 10,
           sc->faults ? ", a reboot, a dead peer" : "", messages_delivered(), reboot_failures, timeout_failures,
           sum.frames_sent, sum.retransmissions, sum.duplicates_dropped,
           sum.out_of_order_buffered, sum.stale_dropped, sum.no_buffer_dropped, sum.fragments_evicted,
           sum.queue_full, sum.acks_sent, sum.acks_carried, sum.timeouts, now_ns / 1e9);
    if (!sc->faults) {
        double ratio = (double)sum.frames_sent / fragments_needed();
        CHECK(ratio < 1.5);
        printf("transport_test: seed %llu: %u DATA frames for %u fragments, %.3f a fragment (at most 1.5; "
               "%.3f if only the frames lost were sent again)\n", (unsigned long long)seed, sum.frames_sent,
               fragments_needed(), ratio, 1000.0 / (1000 - sc->loss));
    }
}

/* Hook: what failed in test_gone (sequence 0: the peer alone, nothing
 * under way), and why. */
static int gone_messages_failed, gone_peers_failed, gone_reason;
static void gone_failed(void *context, uint32_t machine, uint32_t sequence, int reason)
{
    (void)context, (void)machine;
    if (sequence == 0)
        gone_peers_failed++;
    else
        gone_messages_failed++;
    gone_reason = reason;
}

/* A node that gives a peer up (it stopped answering) tells it so with a
 * GONE frame, answers each later frame from it with GONE again and takes
 * nothing of it; the peer, told, gives the node up too: its messages
 * under way fail, later sends fail, and the layer above is told even when
 * nothing was under way. Else the one that still takes the other to be up
 * waits on it for ever (what it sends is acknowledged but never
 * answered). A GONE meant for another boot is dropped. */
static void test_gone(void)
{
    static const struct transport_hooks hooks = { .send_frame = capture_frame, .now = sim_now,
                                                  .deliver = hand_deliver, .failed = gone_failed,
                                                  .peer_rebooted = sim_peer_rebooted };
    static struct transport one, zero, idle;
    now_ns = 0;
    captured_count = 0;
    hand_delivered = 0;
    transport_init(&one, 1, 2, 9, &hooks, 0);              /* machine 1 (epoch 9) gives machine 0 up */
    transport_peer_up(&one, 0, 7);
    CHECK(transport_send(&one, 0, "x", 1) == 1);
    for (int i = 0; i < 100 && transport_pending(&one, 0); i++) {
        uint64_t next = transport_tick(&one);
        if (next != TRANSPORT_NO_TIMER)
            now_ns = next;
    }
    CHECK(transport_pending(&one, 0) == 0 && gone_messages_failed == 1 && gone_reason == TRANSPORT_FAIL_TIMEOUT);
    struct netframe f = captured_frame(captured_count - 1);
    CHECK(f.type == NETFRAME_GONE && f.machine == 1 && f.epoch == 9 && f.receiver_epoch == 7);
    int gone_at = captured_count - 1;
    CHECK(transport_send(&one, 0, "x", 1) == TRANSPORT_E_DOWN);
    feed_data(&one, 1, 1, 0, NETFRAME_DATA_ACK_NOW, 0);       /* machine 0 goes on: GONE again, nothing taken */
    f = captured_frame(captured_count - 1);
    CHECK(captured_count == gone_at + 2 && f.type == NETFRAME_GONE && hand_delivered == 0);

    transport_init(&zero, 0, 2, 7, &hooks, 0);             /* machine 0, a message to 1 under way, is told */
    transport_peer_up(&zero, 1, 9);
    CHECK(transport_send(&zero, 1, "y", 1) == 1);
    transport_frame(&zero, captured[gone_at], captured_len[gone_at]);
    CHECK(gone_messages_failed == 2 && gone_reason == TRANSPORT_FAIL_GIVEN_UP && transport_pending(&zero, 1) == 0);
    CHECK(transport_send(&zero, 1, "y", 1) == TRANSPORT_E_DOWN);

    transport_init(&idle, 0, 2, 7, &hooks, 0);             /* nothing under way: the layer above is told all the same */
    transport_peer_up(&idle, 1, 9);
    transport_frame(&idle, captured[gone_at], captured_len[gone_at]);
    CHECK(gone_peers_failed == 1 && gone_reason == TRANSPORT_FAIL_GIVEN_UP);
    CHECK(transport_send(&idle, 1, "y", 1) == TRANSPORT_E_DOWN);

    transport_init(&idle, 0, 2, 8, &hooks, 0);             /* another boot of machine 0: stale */
    transport_peer_up(&idle, 1, 9);
    transport_frame(&idle, captured[gone_at], captured_len[gone_at]);
    CHECK(gone_peers_failed == 1 && transport_counters(&idle, 1)->stale_dropped == 1);
    CHECK(transport_send(&idle, 1, "y", 1) == 1);
}

int main(void)
{
    static const struct scenario faulty_3 = { .nodes = 3, .messages = 60, .loss = 50, .duplication = 30, .faults = 1 };
    static const struct scenario faulty_4 = { .nodes = 4, .messages = 60, .loss = 50, .duplication = 30, .faults = 1 };
    static const struct scenario lossy_3 = { .nodes = 3, .messages = 500, .loss = 100, .duplication = 50,
                                             .min_length = 1, .start_at = 31 * MS };
    static const struct scenario lossy_4 = { .nodes = 4, .messages = 250, .loss = 100, .duplication = 50,
                                             .min_length = 1, .start_at = 31 * MS };
    test_send_errors();
    test_receive_window();
    test_carried_acks();
    test_selective_retransmit();
    test_patient_peer();
    test_eviction();
    test_gone();
    for (uint64_t seed = 1; seed <= 4; seed++)
        run(seed, seed % 2 ? &faulty_3 : &faulty_4);
    run(5, &lossy_3);
    run(6, &lossy_4);
    in_place = 1;                       /* the same, frames built and sealed in the "NIC's" buffer */
    run(7, &faulty_3);
    run(8, &lossy_4);
    CHECK(frames_in_place > 1000);
    free(heap);
    if (failures) {
        fprintf(stderr, "transport_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("transport_test: %d checks passed\n", checks);
    return 0;
}
