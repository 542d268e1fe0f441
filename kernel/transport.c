/*
 * transport.c — the reliable transport's engine (the protocol is described
 * in transport.h). Plain C, no library calls: it runs in the kernel and in
 * the host simulation tests/transport_test.c.
 */
#include "transport.h"

/* Copy n bytes. */
static void copy_bytes(uint8_t *to, const uint8_t *from, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        to[i] = from[i];
}

/* The number of fragments a message of `length` bytes travels in. */
static uint32_t fragment_count(uint32_t length)
{
    return length == 0 ? 1 : (length + NETFRAME_FRAGMENT_MAX - 1) / NETFRAME_FRAGMENT_MAX;
}

/* The peer `machine`, or 0 if it is this machine or beyond the cluster. */
static struct transport_peer *peer_of(struct transport *t, uint32_t machine)
{
    if (machine >= t->node_count || machine == t->machine)
        return 0;
    return &t->peers[machine];
}

/* Take `count` blocks off the free list, chained; returns the first one
 * (TRANSPORT_NO_BLOCK if count is 0). The caller checked free_blocks. */
static uint16_t blocks_take(struct transport *t, uint32_t count)
{
    uint16_t first = TRANSPORT_NO_BLOCK, *link = &first;
    for (uint32_t i = 0; i < count; i++) {
        *link = t->free_block;
        t->free_block = t->next_block[t->free_block];
        link = &t->next_block[*link];
    }
    *link = TRANSPORT_NO_BLOCK;
    t->free_blocks -= count;
    return first;
}

/* Give a chain of blocks back to the free list. */
static void blocks_free(struct transport *t, uint16_t block)
{
    while (block != TRANSPORT_NO_BLOCK) {
        uint16_t next = t->next_block[block];
        t->next_block[block] = t->free_block;
        t->free_block = block;
        t->free_blocks++;
        block = next;
    }
}

/* Message `sequence` to peer p: a slot of its window. */
static struct transport_outgoing *outgoing(struct transport_peer *p, uint32_t sequence)
{
    return &p->window[sequence % TRANSPORT_WINDOW];
}

/* Forget peer p's half-reassembled message, if any. */
static void reassembly_release(struct transport *t, struct transport_peer *p)
{
    if (p->reassembly != TRANSPORT_NO_BUFFER)
        t->reassembly[p->reassembly].owner = NETFRAME_MAX_NODES;
    p->reassembly = TRANSPORT_NO_BUFFER;
}

/* Fail every unacknowledged message to peer `machine` with `reason` and
 * empty its window. */
static void fail_pending(struct transport *t, uint32_t machine, int reason)
{
    struct transport_peer *p = &t->peers[machine];
    while (p->acked + 1 < p->next_sequence) {
        uint32_t sequence = ++p->acked;
        blocks_free(t, outgoing(p, sequence)->first_block);
        p->counters.messages_failed++;
        t->hooks->failed(t->context, machine, sequence, reason);
    }
    p->cursor_sequence = p->next_sequence;
    p->cursor_fragment = 0;
    p->retransmit_at = TRANSPORT_NO_TIMER;
}

/* Start both directions with peer `machine` afresh, at sequence 1, with
 * nothing under way (its counters are kept). */
static void peer_reset(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    reassembly_release(t, p);
    p->down = 0;
    p->next_sequence = p->cursor_sequence = 1;
    p->acked = p->delivered = p->cursor_fragment = 0;
    p->retransmit_at = TRANSPORT_NO_TIMER;
    p->rto = TRANSPORT_RTO_INITIAL_NS;
    p->retries = 0;
}

void transport_init(struct transport *t, uint32_t machine, uint32_t node_count, uint32_t epoch,
                    const struct transport_hooks *hooks, void *context)
{
    t->machine = machine;
    t->node_count = node_count;
    t->epoch = epoch;
    t->hooks = hooks;
    t->context = context;
    for (uint32_t i = 0; i < NETFRAME_MAX_NODES; i++) {
        struct transport_peer *p = &t->peers[i];
        p->epoch = 0;
        p->reassembly = TRANSPORT_NO_BUFFER;
        p->counters = (struct transport_counters){ 0 };
        peer_reset(t, i);
    }
    for (uint32_t i = 0; i < TRANSPORT_REASSEMBLY_BUFFERS; i++)
        t->reassembly[i].owner = NETFRAME_MAX_NODES;
    for (uint32_t i = 0; i < TRANSPORT_SEND_BLOCKS; i++)
        t->next_block[i] = (uint16_t)(i + 1 < TRANSPORT_SEND_BLOCKS ? i + 1 : TRANSPORT_NO_BLOCK);
    t->free_block = 0;
    t->free_blocks = TRANSPORT_SEND_BLOCKS;
}

void transport_peer_up(struct transport *t, uint32_t machine, uint32_t epoch)
{
    struct transport_peer *p = peer_of(t, machine);
    if (!p || epoch == 0 || p->epoch == epoch)
        return;
    uint32_t former = p->epoch;
    fail_pending(t, machine, TRANSPORT_FAIL_REBOOTED);
    peer_reset(t, machine);
    p->epoch = epoch;
    if (former != 0)
        t->hooks->peer_rebooted(t->context, machine, epoch);
}

/* The header fields every frame from this node to `machine` has. */
static struct netframe frame_to(const struct transport *t, uint32_t machine)
{
    struct netframe f = { .machine = t->machine, .node_count = t->node_count, .epoch = t->epoch,
                          .receiver_epoch = t->peers[machine].epoch };
    const uint8_t prefix[4] = { NETFRAME_MAC_PREFIX0, NETFRAME_MAC_PREFIX1, NETFRAME_MAC_PREFIX2,
                                NETFRAME_MAC_PREFIX3 };
    copy_bytes(f.destination, prefix, 4);
    copy_bytes(f.source, prefix, 4);
    f.destination[4] = f.source[4] = (uint8_t)t->node_count;
    f.destination[5] = (uint8_t)machine;
    f.source[5] = (uint8_t)t->machine;
    return f;
}

/* Put fragment `index` of message `sequence` to `machine` on the wire;
 * returns what send_frame returned. */
static int send_fragment(struct transport *t, uint32_t machine, uint32_t sequence, uint32_t index)
{
    struct transport_peer *p = &t->peers[machine];
    struct transport_outgoing *m = outgoing(p, sequence);
    uint16_t block = m->first_block;
    for (uint32_t i = 0; i < index; i++)
        block = t->next_block[block];
    struct netframe f = frame_to(t, machine);
    f.sequence = sequence;
    f.message_length = m->length;
    f.fragment_offset = index * NETFRAME_FRAGMENT_MAX;
    f.fragment_length = m->length - f.fragment_offset < NETFRAME_FRAGMENT_MAX ? m->length - f.fragment_offset
                                                                              : NETFRAME_FRAGMENT_MAX;
    f.payload = block == TRANSPORT_NO_BLOCK ? 0 : t->blocks[block];
    uint32_t len = netframe_build_data(t->frame, &f);
    int result = t->hooks->send_frame(t->context, t->frame, len);
    if (result < 0) {
        p->counters.queue_full++;
        return result;
    }
    p->counters.frames_sent++;
    if (index < m->fragments_sent)
        p->counters.retransmissions++;
    else
        m->fragments_sent++;
    return 0;
}

/* Send the fragments of peer `machine` from its cursor on, until all are
 * sent or the transmit queue is full. */
static void pump(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    while (p->cursor_sequence < p->next_sequence) {
        if (send_fragment(t, machine, p->cursor_sequence, p->cursor_fragment) < 0)
            return;
        if (++p->cursor_fragment == fragment_count(outgoing(p, p->cursor_sequence)->length)) {
            p->cursor_sequence++;
            p->cursor_fragment = 0;
        }
    }
}

int64_t transport_send(struct transport *t, uint32_t machine, const void *message, uint32_t len)
{
    struct transport_peer *p = peer_of(t, machine);
    if (!p || p->epoch == 0)
        return TRANSPORT_E_UNKNOWN;
    if (p->down)
        return TRANSPORT_E_DOWN;
    if (len > NETFRAME_MAX_MESSAGE)
        return TRANSPORT_E_SIZE;
    if (p->next_sequence - p->acked - 1 >= TRANSPORT_WINDOW)
        return TRANSPORT_E_WINDOW;
    uint32_t blocks = len == 0 ? 0 : fragment_count(len);
    if (blocks > t->free_blocks)
        return TRANSPORT_E_NOSPACE;
    uint32_t sequence = p->next_sequence++;
    struct transport_outgoing *m = outgoing(p, sequence);
    m->length = len;
    m->fragments_sent = 0;
    m->first_block = blocks_take(t, blocks);
    const uint8_t *bytes = message;
    for (uint16_t b = m->first_block, i = 0; b != TRANSPORT_NO_BLOCK; b = t->next_block[b], i++) {
        uint32_t offset = (uint32_t)i * NETFRAME_FRAGMENT_MAX;
        copy_bytes(t->blocks[b], bytes + offset, len - offset < NETFRAME_FRAGMENT_MAX ? len - offset
                                                                                    : NETFRAME_FRAGMENT_MAX);
    }
    p->counters.messages_sent++;
    if (p->retransmit_at == TRANSPORT_NO_TIMER)
        p->retransmit_at = t->hooks->now(t->context) + p->rto;
    pump(t, machine);
    return sequence;
}

/* Acknowledge to `machine` every message from it delivered so far. */
static void send_ack(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    struct netframe f = frame_to(t, machine);
    f.ack = p->delivered;
    uint32_t len = netframe_build_ack(t->frame, &f);
    if (t->hooks->send_frame(t->context, t->frame, len) < 0)
        p->counters.queue_full++;       /* the sender's retransmission will ask again */
    else
        p->counters.acks_sent++;
}

/* An ACK from `machine`: free what it acknowledges and restart the timer. */
static void receive_ack(struct transport *t, uint32_t machine, uint32_t ack)
{
    struct transport_peer *p = &t->peers[machine];
    p->counters.acks_received++;
    if (ack >= p->next_sequence) {
        p->counters.bad_acks++;
        return;
    }
    if (ack <= p->acked)
        return;
    while (p->acked < ack)
        blocks_free(t, outgoing(p, ++p->acked)->first_block);
    p->retries = 0;
    p->rto = TRANSPORT_RTO_INITIAL_NS;
    p->retransmit_at = p->acked + 1 < p->next_sequence ? t->hooks->now(t->context) + p->rto : TRANSPORT_NO_TIMER;
    if (p->cursor_sequence <= p->acked) {
        p->cursor_sequence = p->acked + 1;
        p->cursor_fragment = 0;
    }
}

/* A reassembly buffer for peer `machine`'s message f->sequence: the one it
 * has, or a free one, or one idle too long; or 0 if there is none. */
static struct transport_reassembly *reassembly_for(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    if (p->reassembly != TRANSPORT_NO_BUFFER)
        return &t->reassembly[p->reassembly];
    uint64_t now = t->hooks->now(t->context);
    for (uint32_t i = 0; i < TRANSPORT_REASSEMBLY_BUFFERS; i++) {
        struct transport_reassembly *r = &t->reassembly[i];
        if (r->owner != NETFRAME_MAX_NODES && now - r->last_fragment_at < TRANSPORT_REASSEMBLY_IDLE_NS)
            continue;
        if (r->owner != NETFRAME_MAX_NODES)
            t->peers[r->owner].reassembly = TRANSPORT_NO_BUFFER;
        r->owner = machine;
        r->sequence = f->sequence;
        r->length = f->message_length;
        r->received = 0;
        r->fragments_in = 0;
        r->last_fragment_at = now;
        p->reassembly = (uint8_t)i;
        return r;
    }
    return 0;
}

/* Deliver message[0..len) from `machine`, the next one expected, and
 * acknowledge it. */
static void deliver(struct transport *t, uint32_t machine, const uint8_t *message, uint32_t len)
{
    struct transport_peer *p = &t->peers[machine];
    p->delivered++;
    p->counters.messages_delivered++;
    send_ack(t, machine);
    t->hooks->deliver(t->context, machine, message, len);
}

/* A fragment of the message expected next from `machine`, which has more
 * than one: keep it, and deliver the message once it is whole. */
static void receive_fragment(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    struct transport_reassembly *r = reassembly_for(t, machine, f);
    if (!r) {
        p->counters.no_buffer_dropped++;
        return;
    }
    uint64_t bit = 1ull << (f->fragment_offset / NETFRAME_FRAGMENT_MAX);
    if (r->fragments_in & bit) {
        p->counters.duplicates_dropped++;
        return;
    }
    copy_bytes(r->bytes + f->fragment_offset, f->payload, f->fragment_length);
    r->fragments_in |= bit;
    r->received += f->fragment_length;
    r->last_fragment_at = t->hooks->now(t->context);
    if (r->received < r->length)
        return;
    p->reassembly = TRANSPORT_NO_BUFFER;
    r->owner = NETFRAME_MAX_NODES;
    deliver(t, machine, r->bytes, r->length);
}

/* A DATA frame from `machine`, in its current epoch and meant for this one. */
static void receive_data(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    if (f->sequence <= p->delivered) {
        p->counters.duplicates_dropped++;
        if (f->fragment_offset + f->fragment_length == f->message_length)
            send_ack(t, machine);               /* our ACK of it may have been lost */
        return;
    }
    if (f->sequence > p->delivered + 1) {
        p->counters.out_of_order_dropped++;
        return;
    }
    if (f->message_length <= NETFRAME_FRAGMENT_MAX)
        deliver(t, machine, f->payload, f->message_length);
    else
        receive_fragment(t, machine, f);
}

void transport_frame(struct transport *t, const uint8_t *frame, uint32_t len)
{
    struct netframe f;
    if (netframe_parse(frame, len, &f) != NETFRAME_OK || (f.type != NETFRAME_DATA && f.type != NETFRAME_ACK) ||
        f.node_count != t->node_count)
        return;
    struct transport_peer *p = peer_of(t, f.machine);
    if (!p)
        return;
    if (f.epoch != p->epoch || f.receiver_epoch != t->epoch) {
        p->counters.stale_dropped++;
        return;
    }
    if (f.type == NETFRAME_ACK)
        receive_ack(t, f.machine, f.ack);
    else
        receive_data(t, f.machine, &f);
}

/* Peer `machine`'s timer expired at `now`: go back to its oldest
 * unacknowledged message with a doubled timeout, or give up on it. */
static void retransmit_timeout(struct transport *t, uint32_t machine, uint64_t now)
{
    struct transport_peer *p = &t->peers[machine];
    p->counters.timeouts++;
    if (++p->retries >= TRANSPORT_MAX_RETRIES) {
        fail_pending(t, machine, TRANSPORT_FAIL_TIMEOUT);
        p->down = 1;
        return;
    }
    p->rto = p->rto * 2 < TRANSPORT_RTO_MAX_NS ? p->rto * 2 : TRANSPORT_RTO_MAX_NS;
    p->retransmit_at = now + p->rto;
    p->cursor_sequence = p->acked + 1;
    p->cursor_fragment = 0;
}

uint64_t transport_tick(struct transport *t)
{
    uint64_t now = t->hooks->now(t->context), next = TRANSPORT_NO_TIMER;
    for (uint32_t machine = 0; machine < t->node_count; machine++) {
        struct transport_peer *p = &t->peers[machine];
        if (p->retransmit_at == TRANSPORT_NO_TIMER)
            continue;
        if (now >= p->retransmit_at)
            retransmit_timeout(t, machine, now);
        pump(t, machine);
        if (p->cursor_sequence < p->next_sequence && now + TRANSPORT_QUEUE_RETRY_NS < next)
            next = now + TRANSPORT_QUEUE_RETRY_NS;
        if (p->retransmit_at < next)
            next = p->retransmit_at;
    }
    return next;
}

uint32_t transport_pending(const struct transport *t, uint32_t machine)
{
    if (machine >= NETFRAME_MAX_NODES)
        return 0;
    return t->peers[machine].next_sequence - t->peers[machine].acked - 1;
}

const struct transport_counters *transport_counters(const struct transport *t, uint32_t machine)
{
    return machine < NETFRAME_MAX_NODES ? &t->peers[machine].counters : 0;
}
