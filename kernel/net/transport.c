/*
 * transport.c — the reliable transport's engine (the protocol, selective
 * repeat, is described in transport.h). Plain C, no library calls: it runs
 * in the kernel and in the host simulation tests/transport_test.c.
 *
 * The sending side of each peer: a window of outgoing messages whose
 * bytes are in send blocks; for each, which fragments were sent, which the
 * newest ACK says arrived, and which are taken as lost. The receiving
 * side: a window of incoming messages whose fragments are in receive
 * blocks, chained in fragment order, until the message is delivered.
 */
#include "transport.h"

_Static_assert(TRANSPORT_WINDOW <= NETFRAME_ACK_MAX_PARTIAL, "an ACK names 32 messages after its ack");
_Static_assert(NETFRAME_MAX_FRAGMENTS <= 64, "fragment maps are 64 bits");
_Static_assert(TRANSPORT_BLOCKS < TRANSPORT_NO_BLOCK, "block numbers are 16 bits");

#define REORDER_US (TRANSPORT_REORDER_NS / 1000)

/* Where frames are built: on a word boundary, as are their fields and a
 * DATA frame's payload (netframe.h). */
static uint8_t *frame_of(struct transport *t)
{
    return t->frame_space;
}
_Static_assert((NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN) % 8 == 0, "a frame's payload is word-aligned");

/* Copy n bytes (netframe.h: in words where the ends allow). */
static void copy_bytes(uint8_t *to, const uint8_t *from, uint32_t n)
{
    netframe_copy(to, from, n);
}

/* The number of fragments a message of `length` bytes travels in. */
static uint32_t fragment_count(uint32_t length)
{
    return length == 0 ? 1 : (length + NETFRAME_FRAGMENT_MAX - 1) / NETFRAME_FRAGMENT_MAX;
}

/* The length of fragment `index` of a message of `length` bytes. */
static uint32_t fragment_length(uint32_t length, uint32_t index)
{
    uint32_t offset = index * NETFRAME_FRAGMENT_MAX;
    return length - offset < NETFRAME_FRAGMENT_MAX ? length - offset : NETFRAME_FRAGMENT_MAX;
}

/* The map with a bit for each of fragments 0 .. count-1 (count < 64). */
static uint64_t first_fragments(uint32_t count)
{
    return (1ull << count) - 1;
}

/* The map of every fragment of a message of `length` bytes. */
static uint64_t all_fragments(uint32_t length)
{
    return first_fragments(fragment_count(length));
}

/* The number of bits set in `map`. */
static uint32_t bits_set(uint64_t map)
{
    uint32_t n = 0;
    for (; map; map &= map - 1)
        n++;
    return n;
}

/* The index of the lowest bit set in `map`, which is not 0. */
static uint32_t lowest_bit(uint64_t map)
{
    uint32_t i = 0;
    while (!(map & 1ull << i))
        i++;
    return i;
}

/* The stamp of time `ns`: microseconds, the low 32 bits. */
static uint32_t stamp_of(uint64_t ns)
{
    return (uint32_t)(ns / 1000);
}

/* Is stamp a earlier than stamp b? Stamps wrap, so this holds for stamps
 * less than 35 minutes apart. */
static int stamp_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* The peer `machine`, or 0 if it is this machine or beyond the cluster. */
static struct transport_peer *peer_of(struct transport *t, uint32_t machine)
{
    if (machine >= t->node_count || machine == t->machine)
        return 0;
    return &t->peers[machine];
}

/* Take `count` blocks off the free list, chained; returns the first one
 * (TRANSPORT_NO_BLOCK if count is 0). The caller checked its budget. */
static uint16_t blocks_take(struct transport *t, uint32_t count)
{
    uint16_t first = TRANSPORT_NO_BLOCK, *link = &first;
    for (uint32_t i = 0; i < count; i++) {
        *link = t->free_block;
        t->free_block = t->next_block[t->free_block];
        link = &t->next_block[*link];
    }
    *link = TRANSPORT_NO_BLOCK;
    return first;
}

/* Give a chain of blocks back to the free list; returns how many. */
static uint32_t blocks_free(struct transport *t, uint16_t block)
{
    uint32_t count = 0;
    while (block != TRANSPORT_NO_BLOCK) {
        uint16_t next = t->next_block[block];
        t->next_block[block] = t->free_block;
        t->free_block = block;
        count++;
        block = next;
    }
    return count;
}

/* Message `sequence` to peer p: a slot of its send window. */
static struct transport_outgoing *outgoing(struct transport_peer *p, uint32_t sequence)
{
    return &p->window[sequence % TRANSPORT_WINDOW];
}

/* Message `sequence` from peer p: a slot of its receive window. */
static struct transport_incoming *incoming(struct transport_peer *p, uint32_t sequence)
{
    return &p->incoming[sequence % TRANSPORT_WINDOW];
}

/* Empty a slot of a receive window, giving its blocks back. */
static void incoming_clear(struct transport *t, struct transport_incoming *in)
{
    t->receive_blocks_free += blocks_free(t, in->first_block);
    in->sequence = in->length = 0;
    in->fragments_in = 0;
    in->first_block = TRANSPORT_NO_BLOCK;
}

/* Fail every unacknowledged message to peer `machine` with `reason` and
 * empty its window. */
static void fail_pending(struct transport *t, uint32_t machine, int reason)
{
    struct transport_peer *p = &t->peers[machine];
    while (p->acked + 1 < p->next_sequence) {
        uint32_t sequence = ++p->acked;
        t->send_blocks_free += blocks_free(t, outgoing(p, sequence)->first_block);
        p->counters.messages_failed++;
        t->hooks->failed(t->context, machine, sequence, reason);
    }
    p->cursor_sequence = p->next_sequence;
    p->retransmit_at = TRANSPORT_NO_TIMER;
}

/* Start both directions with peer `machine` afresh, at sequence 1, with
 * nothing under way and no fragment held (its counters are kept). */
static void peer_reset(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    for (uint32_t i = 0; i < TRANSPORT_WINDOW; i++)
        incoming_clear(t, &p->incoming[i]);
    p->down = p->stamp_known = 0;
    p->next_sequence = p->cursor_sequence = 1;
    p->acked = p->delivered = 0;
    p->latest_stamp = 0;
    p->echo = stamp_of(t->hooks->now(t->context));      /* every ACK of a frame sent from now on echoes more */
    p->retransmit_at = TRANSPORT_NO_TIMER;
    p->ack_due = TRANSPORT_NO_TIMER;
    p->reported = 0;
    p->rto = TRANSPORT_RTO_INITIAL_NS;
    p->retries = 0;
}

void transport_init(struct transport *t, uint32_t machine, uint32_t node_count, uint32_t epoch,
                    const struct transport_hooks *hooks, void *context)
{
    t->machine = machine;
    t->node_count = node_count;
    t->epoch = epoch;
    t->patient = 0;
    t->hooks = hooks;
    t->context = context;
    for (uint32_t i = 0; i < TRANSPORT_BLOCKS; i++)
        t->next_block[i] = (uint16_t)(i + 1 < TRANSPORT_BLOCKS ? i + 1 : TRANSPORT_NO_BLOCK);
    t->free_block = 0;
    t->send_blocks_free = TRANSPORT_SEND_BLOCKS;
    t->receive_blocks_free = TRANSPORT_RECEIVE_BLOCKS;
    for (uint32_t i = 0; i < NETFRAME_MAX_NODES; i++) {
        struct transport_peer *p = &t->peers[i];
        p->epoch = 0;
        for (uint32_t k = 0; k < TRANSPORT_WINDOW; k++)
            p->incoming[k].first_block = TRANSPORT_NO_BLOCK;
        p->counters = (struct transport_counters){ 0 };
        peer_reset(t, i);
    }
}

void transport_be_patient(struct transport *t)
{
    t->patient = 1;
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

/* Set the header fields every frame of `type` (DATA, ACK or GONE) from this node
 * to `machine` has, and zero the fields of DATA and ACK frames;
 * fragments[] is left alone (the ACK builder reads only the maps that
 * partial names). */
static void frame_to(const struct transport *t, uint32_t machine, uint8_t type, struct netframe *f)
{
    const uint8_t mac[6] = { NETFRAME_MAC_PREFIX0, NETFRAME_MAC_PREFIX1, NETFRAME_MAC_PREFIX2,
                             NETFRAME_MAC_PREFIX3, (uint8_t)t->node_count, (uint8_t)machine };
    copy_bytes(f->destination, mac, 6);
    copy_bytes(f->source, mac, 5);
    f->source[5] = (uint8_t)t->machine;
    f->version = NETFRAME_VERSION;
    f->type = type;
    f->machine = t->machine;
    f->node_count = t->node_count;
    f->epoch = t->epoch;
    f->receiver_epoch = t->peers[machine].epoch;
    f->sequence = f->message_length = f->fragment_offset = f->fragment_length = f->flags = f->stamp = 0;
    f->payload = 0;
    f->ack = f->echo = f->whole = f->partial = 0;
}

/* Send the DATA, ACK or GONE frame f: built by the environment where it
 * sends from, if it says how (send_netframe), else in frame_of(t). Returns
 * what the hook returned. */
static int put_on_wire(struct transport *t, const struct netframe *f)
{
    if (t->hooks->send_netframe)
        return t->hooks->send_netframe(t->context, f);
    uint32_t len = f->type == NETFRAME_DATA ? netframe_build_data(frame_of(t), f)
                   : f->type == NETFRAME_ACK ? netframe_build_ack(frame_of(t), f)
                                             : netframe_build_gone(frame_of(t), f);
    return t->hooks->send_frame(t->context, frame_of(t), len);
}

/* Does this node hold nothing of peer p's after the last message
 * delivered, so that "every message up to `delivered`, none after" is the
 * whole acknowledgement? (A message held has a block: none is held while
 * every receive block is free.) */
static int holds_nothing(const struct transport *t, const struct transport_peer *p)
{
    if (t->receive_blocks_free == TRANSPORT_RECEIVE_BLOCKS)
        return 1;
    for (uint32_t i = 0; i < TRANSPORT_WINDOW; i++)
        if (p->incoming[i].sequence != 0)
            return 0;
    return 1;
}

/* Put fragment `index` of message `sequence` to `machine` on the wire with
 * `stamp`: for the first time if index is the message's fragments_sent,
 * else again. The last fragment of a message, and every fragment sent
 * again, ask for an acknowledgement; the frame carries one for `machine`
 * if this node holds nothing of its after the last message delivered.
 * Returns what send_frame returned. */
static int send_fragment(struct transport *t, uint32_t machine, uint32_t sequence, uint32_t index, uint32_t stamp)
{
    struct transport_peer *p = &t->peers[machine];
    struct transport_outgoing *m = outgoing(p, sequence);
    uint16_t block = m->first_block;
    for (uint32_t i = 0; i < index; i++)
        block = t->next_block[block];
    int again = index < m->fragments_sent;
    struct netframe f;
    frame_to(t, machine, NETFRAME_DATA, &f);
    f.sequence = sequence;
    f.message_length = m->length;
    f.fragment_offset = index * NETFRAME_FRAGMENT_MAX;
    f.fragment_length = fragment_length(m->length, index);
    f.flags = again || index + 1 == fragment_count(m->length) ? NETFRAME_DATA_ACK_NOW : 0;
    f.stamp = stamp;
    if (holds_nothing(t, p)) {
        f.flags |= NETFRAME_DATA_HAS_ACK;
        f.ack = p->delivered;
        f.echo = p->latest_stamp;
    }
    f.payload = block == TRANSPORT_NO_BLOCK ? 0 : t->blocks[block];
    int result = put_on_wire(t, &f);
    if (result < 0) {
        p->counters.queue_full++;
        return result;
    }
    p->counters.frames_sent++;
    if (f.flags & NETFRAME_DATA_HAS_ACK) {
        p->counters.acks_carried++;
        p->reported = f.ack;
        p->ack_due = TRANSPORT_NO_TIMER;
    }
    if (again)
        p->counters.retransmissions++;
    else
        m->fragments_sent++;
    m->last_sent = stamp;
    return 0;
}

/* Put peer `machine`'s due fragments on the wire until all are sent or the
 * transmit queue is full: first those taken as lost, oldest message first,
 * then those never sent. */
static void pump(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    uint32_t stamp = stamp_of(t->hooks->now(t->context));
    for (uint32_t sequence = p->acked + 1; sequence < p->next_sequence; sequence++) {
        struct transport_outgoing *m = outgoing(p, sequence);
        while (m->lost) {
            uint32_t index = lowest_bit(m->lost);
            if (send_fragment(t, machine, sequence, index, stamp) < 0)
                return;
            m->lost &= ~(1ull << index);
        }
    }
    while (p->cursor_sequence < p->next_sequence) {
        struct transport_outgoing *m = outgoing(p, p->cursor_sequence);
        while (m->fragments_sent < fragment_count(m->length))
            if (send_fragment(t, machine, p->cursor_sequence, m->fragments_sent, stamp) < 0)
                return;
        p->cursor_sequence++;
    }
}

/* Has peer p fragments to send: taken as lost, or never sent? */
static int has_unsent(struct transport_peer *p)
{
    if (p->cursor_sequence < p->next_sequence)
        return 1;
    for (uint32_t sequence = p->acked + 1; sequence < p->next_sequence; sequence++)
        if (outgoing(p, sequence)->lost)
            return 1;
    return 0;
}

/* Take as lost every fragment in peer p's window that was sent, is not
 * reported received, and whose message was last sent before stamp
 * `before`. */
static void mark_lost(struct transport_peer *p, uint32_t before)
{
    for (uint32_t sequence = p->acked + 1; sequence < p->next_sequence; sequence++) {
        struct transport_outgoing *m = outgoing(p, sequence);
        if (stamp_before(m->last_sent, before))
            m->lost |= first_fragments(m->fragments_sent) & ~m->received;
    }
}

/* Bytes [at, at + n) of a message made of `head` (head_len bytes) and then
 * `tail`, into `to`. */
static void copy_span(uint8_t *to, const uint8_t *head, uint32_t head_len, const uint8_t *tail, uint32_t at,
                      uint32_t n)
{
    if (at < head_len) {
        uint32_t k = head_len - at < n ? head_len - at : n;
        copy_bytes(to, head + at, k);
        to += k, at += k, n -= k;
    }
    if (n)
        copy_bytes(to, tail + (at - head_len), n);
}

int64_t transport_send(struct transport *t, uint32_t machine, const void *message, uint32_t len)
{
    return transport_send_parts(t, machine, message, len, 0, 0);
}

int64_t transport_send_parts(struct transport *t, uint32_t machine, const void *head, uint32_t head_len,
                             const void *tail, uint32_t tail_len)
{
    uint32_t len = head_len + tail_len;
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
    if (blocks > t->send_blocks_free)
        return TRANSPORT_E_NOSPACE;
    uint64_t now = t->hooks->now(t->context);
    uint32_t sequence = p->next_sequence++;
    struct transport_outgoing *m = outgoing(p, sequence);
    m->length = len;
    m->fragments_sent = 0;
    m->last_sent = stamp_of(now);
    m->received = m->lost = 0;
    m->first_block = blocks_take(t, blocks);
    t->send_blocks_free -= blocks;
    uint32_t index = 0;
    for (uint16_t b = m->first_block; b != TRANSPORT_NO_BLOCK; b = t->next_block[b], index++)
        copy_span(t->blocks[b], head, head_len, tail, index * NETFRAME_FRAGMENT_MAX, fragment_length(len, index));
    p->counters.messages_sent++;
    if (p->retransmit_at == TRANSPORT_NO_TIMER)
        p->retransmit_at = now + p->rto;
    pump(t, machine);
    return sequence;
}

/* Tell `machine` what has arrived from it: every message up to the last
 * one delivered, and after that, which messages are whole and which
 * fragments of the others are held; echo the latest stamp it sent. */
static void send_ack(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    struct netframe f;
    frame_to(t, machine, NETFRAME_ACK, &f);
    f.ack = p->delivered;
    f.echo = p->latest_stamp;
    uint32_t maps = 0;
    for (uint32_t i = 0; i < TRANSPORT_WINDOW && t->receive_blocks_free < TRANSPORT_RECEIVE_BLOCKS; i++) {
        struct transport_incoming *in = incoming(p, p->delivered + 1 + i);   /* (held only if a block is) */
        if (in->sequence != p->delivered + 1 + i)
            continue;
        if (in->fragments_in == all_fragments(in->length)) {
            f.whole |= 1u << i;
        } else {
            f.partial |= 1u << i;
            f.fragments[maps++] = in->fragments_in;
        }
    }
    int result = put_on_wire(t, &f);
    p->ack_due = TRANSPORT_NO_TIMER;
    if (result < 0) {
        p->counters.queue_full++;       /* the sender's retransmission will ask again */
    } else {
        p->counters.acks_sent++;
        p->reported = f.ack;
    }
}

/* An acknowledgement to `machine` is owed: send it now in an ACK frame if
 * this node holds fragments of its after the last message delivered, or
 * has delivered TRANSPORT_ACK_MESSAGES of its messages since the last
 * acknowledgement; else let it wait for a DATA frame to carry it, until
 * TRANSPORT_ACK_DELAY_NS from now at most (transport_tick). */
static void ack_owed(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    if (!holds_nothing(t, p) || p->delivered - p->reported >= TRANSPORT_ACK_MESSAGES)
        send_ack(t, machine);
    else if (p->ack_due == TRANSPORT_NO_TIMER)
        p->ack_due = t->hooks->now(t->context) + TRANSPORT_ACK_DELAY_NS;
}

/* Tell peer `machine` that it is taken to be down here (a GONE frame), so
 * that it takes this node to be down too. */
static void send_gone(struct transport *t, uint32_t machine)
{
    struct netframe f;
    frame_to(t, machine, NETFRAME_GONE, &f);
    if (put_on_wire(t, &f) < 0)
        t->peers[machine].counters.queue_full++;   /* its next frame is answered with another */
}

/* Peer `machine` is taken to be down in its epoch, for `reason`: every
 * message to it under way fails, later sends fail with TRANSPORT_E_DOWN,
 * and the layer above is told, with sequence 0 if nothing was under way. */
static void give_up(struct transport *t, uint32_t machine, int reason)
{
    struct transport_peer *p = &t->peers[machine];
    int nothing_under_way = p->acked + 1 >= p->next_sequence;
    fail_pending(t, machine, reason);
    if (nothing_under_way)
        t->hooks->failed(t->context, machine, 0, reason);
    p->down = 1;
}

/* Does ACK f fit what was sent to peer p: does it acknowledge or report
 * only messages sent, whole only those sent whole, and of the others only
 * fragments sent, never all of them as partial? (Of messages acknowledged
 * already, nothing is known any more but that they were sent.) */
static int ack_fits(struct transport_peer *p, const struct netframe *f)
{
    if (f->ack >= p->next_sequence)
        return 0;
    for (uint32_t sequence = p->acked + 1; sequence <= f->ack; sequence++) {
        struct transport_outgoing *m = outgoing(p, sequence);
        if (m->fragments_sent < fragment_count(m->length))
            return 0;
    }
    uint32_t maps = 0;
    for (uint32_t i = 0; i < 32 && (f->whole | f->partial) >> i; i++) {   /* up to the last message it names */
        uint32_t sequence = f->ack + 1 + i, bit = 1u << i;
        if (!((f->whole | f->partial) & bit))
            continue;
        if (sequence >= p->next_sequence)
            return 0;
        uint64_t map = f->partial & bit ? f->fragments[maps++] : 0;
        if (sequence <= p->acked)
            continue;
        struct transport_outgoing *m = outgoing(p, sequence);
        uint64_t sent = first_fragments(m->fragments_sent);
        if (f->whole & bit ? sent != all_fragments(m->length) : (map & ~sent) || map == all_fragments(m->length))
            return 0;
    }
    return 1;
}

/* Believe ACK f, the newest one so far, about every message of peer p's
 * window that it covers: what it reports is what has arrived, nothing
 * more. Returns 1 if it reports a fragment that the ACK believed before
 * it did not. */
static int take_report(struct transport_peer *p, const struct netframe *f)
{
    int news = 0;
    uint32_t maps = 0, after = p->next_sequence - 1 - f->ack;    /* messages sent after f->ack */
    for (uint32_t i = 0; i < 32 && i < after; i++) {
        uint32_t sequence = f->ack + 1 + i, bit = 1u << i;
        uint64_t map = f->partial & bit ? f->fragments[maps++] : 0;
        if (sequence <= p->acked || sequence >= p->next_sequence)
            continue;
        struct transport_outgoing *m = outgoing(p, sequence);
        if (f->whole & bit)
            map = all_fragments(m->length);
        news |= (map & ~m->received) != 0;
        m->received = map;
        m->lost &= ~map;
    }
    return news;
}

/* An acknowledgement from `machine` (an ACK frame, or one a DATA frame
 * carries): free what it acknowledges, learn from it what is missing,
 * send that again if it is taken as lost, and restart the timer if it
 * says anything new. */
static void receive_ack(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    if (!ack_fits(p, f)) {
        p->counters.bad_acks++;
        return;
    }
    int progress = 0;
    while (p->acked < f->ack) {
        t->send_blocks_free += blocks_free(t, outgoing(p, ++p->acked)->first_block);
        progress = 1;
    }
    if (p->cursor_sequence <= p->acked)
        p->cursor_sequence = p->acked + 1;
    if (!stamp_before(f->echo, p->echo)) {
        p->echo = f->echo;
        progress |= take_report(p, f);
        mark_lost(p, f->echo - (uint32_t)REORDER_US);
    }
    if (progress) {
        p->retries = 0;
        p->rto = TRANSPORT_RTO_INITIAL_NS;
        p->retransmit_at = p->acked + 1 < p->next_sequence ? t->hooks->now(t->context) + p->rto : TRANSPORT_NO_TIMER;
    }
    pump(t, machine);
}

/* Deliver, in order, every message from `machine` that is whole, from the
 * next one expected on. */
static void deliver_ready(struct transport *t, uint32_t machine)
{
    struct transport_peer *p = &t->peers[machine];
    for (;;) {
        struct transport_incoming *in = incoming(p, p->delivered + 1);
        if (in->sequence != p->delivered + 1 || in->fragments_in != all_fragments(in->length))
            return;
        uint32_t length = in->length, index = 0;
        for (uint16_t b = in->first_block; b != TRANSPORT_NO_BLOCK; b = t->next_block[b], index++)
            copy_bytes(t->message + index * NETFRAME_FRAGMENT_MAX, t->blocks[b], fragment_length(length, index));
        incoming_clear(t, in);
        p->delivered++;
        p->counters.messages_delivered++;
        t->hooks->deliver(t->context, machine, t->message, length);
    }
}

/* Free the blocks of the held message that is furthest ahead of its
 * sender's next message expected (never such a next message itself);
 * returns 0 if there is none. */
static int evict_furthest(struct transport *t)
{
    struct transport_peer *victim_peer = 0;
    struct transport_incoming *victim = 0;
    uint32_t furthest = 1;
    for (uint32_t machine = 0; machine < t->node_count; machine++) {
        struct transport_peer *q = &t->peers[machine];
        for (uint32_t i = 0; i < TRANSPORT_WINDOW; i++) {
            struct transport_incoming *in = &q->incoming[i];
            if (in->sequence != 0 && in->sequence - q->delivered > furthest) {
                furthest = in->sequence - q->delivered;
                victim_peer = q;
                victim = in;
            }
        }
    }
    if (!victim)
        return 0;
    victim_peer->counters.fragments_evicted += bits_set(victim->fragments_in);
    incoming_clear(t, victim);
    return 1;
}

/* Keep fragment f of a message from `machine` in a receive block, chained
 * in fragment order with the others of its message; for the next message
 * expected, evict another to make room if there is none. Returns 0 if the
 * fragment could not be kept. */
static int keep_fragment(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    if (t->receive_blocks_free == 0 && (f->sequence != p->delivered + 1 || !evict_furthest(t)))
        return 0;
    uint16_t block = blocks_take(t, 1);
    t->receive_blocks_free--;
    copy_bytes(t->blocks[block], f->payload, f->fragment_length);
    struct transport_incoming *in = incoming(p, f->sequence);
    if (in->sequence != f->sequence) {
        in->sequence = f->sequence;
        in->length = f->message_length;
    }
    uint32_t index = f->fragment_offset / NETFRAME_FRAGMENT_MAX;
    uint16_t *link = &in->first_block;
    for (uint32_t before = bits_set(in->fragments_in & first_fragments(index)); before > 0; before--)
        link = &t->next_block[*link];
    t->next_block[block] = *link;
    *link = block;
    in->fragments_in |= 1ull << index;
    return 1;
}

/* Fragment f of a message from `machine` within its receive window: keep
 * it, or deliver it at once if it is the whole of the next message
 * expected; then deliver whatever is ready. Returns 1 if it made a message
 * whole. */
static int receive_fragment(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    struct transport_incoming *in = incoming(p, f->sequence);
    uint64_t bit = 1ull << (f->fragment_offset / NETFRAME_FRAGMENT_MAX);
    if (in->sequence == f->sequence && in->length != f->message_length) {
        p->counters.bad_fragments++;
        return 0;
    }
    if (in->sequence == f->sequence && (in->fragments_in & bit)) {
        p->counters.duplicates_dropped++;
        return 0;
    }
    if (in->sequence != f->sequence && f->sequence == p->delivered + 1 && f->message_length <= NETFRAME_FRAGMENT_MAX) {
        p->delivered++;
        p->counters.messages_delivered++;
        t->hooks->deliver(t->context, machine, f->payload, f->message_length);
        deliver_ready(t, machine);
        return 1;
    }
    if (!keep_fragment(t, machine, f)) {
        p->counters.no_buffer_dropped++;
        return 0;
    }
    if (f->sequence > p->delivered + 1)
        p->counters.out_of_order_buffered++;
    int whole = in->fragments_in == all_fragments(in->length);
    deliver_ready(t, machine);
    return whole;
}

/* A DATA frame from `machine`, in its current epoch and meant for this
 * one: note its stamp, take its fragment, and answer with an ACK if that
 * made a message whole or the frame asks for one. */
static void receive_data(struct transport *t, uint32_t machine, const struct netframe *f)
{
    struct transport_peer *p = &t->peers[machine];
    if (!p->stamp_known || stamp_before(p->latest_stamp, f->stamp)) {
        p->latest_stamp = f->stamp;
        p->stamp_known = 1;
    }
    int answer = (f->flags & NETFRAME_DATA_ACK_NOW) != 0;
    if (f->sequence <= p->delivered) {
        p->counters.duplicates_dropped++;
    } else if (f->sequence - p->delivered > TRANSPORT_WINDOW) {
        p->counters.out_of_order_dropped++;
        return;
    } else if (receive_fragment(t, machine, f)) {
        answer = 1;
    }
    if (answer)
        ack_owed(t, machine);
}

void transport_frame(struct transport *t, const uint8_t *frame, uint32_t len)
{
    struct netframe f;
    if (netframe_parse(frame, len, &f) == NETFRAME_OK)
        transport_frame_parsed(t, &f);
}

void transport_frame_parsed(struct transport *t, const struct netframe *f)
{
    if ((f->type != NETFRAME_DATA && f->type != NETFRAME_ACK && f->type != NETFRAME_GONE) ||
        f->node_count != t->node_count)
        return;
    struct transport_peer *p = peer_of(t, f->machine);
    if (!p)
        return;
    if (f->epoch != p->epoch || f->receiver_epoch != t->epoch) {
        p->counters.stale_dropped++;
        return;
    }
    if (p->down) {             /* given up in this epoch: nothing of it is taken, and it is told again */
        if (f->type != NETFRAME_GONE)
            send_gone(t, f->machine);
        return;
    }
    if (f->type == NETFRAME_GONE) {
        give_up(t, f->machine, TRANSPORT_FAIL_GIVEN_UP);
        return;
    }
    if (f->type == NETFRAME_ACK) {
        p->counters.acks_received++;
        receive_ack(t, f->machine, f);
        return;
    }
    if (f->flags & NETFRAME_DATA_HAS_ACK)
        receive_ack(t, f->machine, f);      /* its fields are an ACK's naming nothing after ack */
    receive_data(t, f->machine, f);
}

/* Peer `machine`'s timer expired at `now`: send again, as a probe, what
 * its oldest unacknowledged message lacks (the ACK that asks for tells
 * what else is missing), with a doubled timeout; or give up on it and
 * tell it so, unless the transport is patient. */
static void retransmit_timeout(struct transport *t, uint32_t machine, uint64_t now)
{
    struct transport_peer *p = &t->peers[machine];
    p->counters.timeouts++;
    if (++p->retries >= TRANSPORT_MAX_RETRIES && !t->patient) {
        give_up(t, machine, TRANSPORT_FAIL_TIMEOUT);
        send_gone(t, machine);
        return;
    }
    p->rto = p->rto * 2 < TRANSPORT_RTO_MAX_NS ? p->rto * 2 : TRANSPORT_RTO_MAX_NS;
    p->retransmit_at = now + p->rto;
    struct transport_outgoing *oldest = outgoing(p, p->acked + 1);
    oldest->lost |= first_fragments(oldest->fragments_sent) & ~oldest->received;
}

uint64_t transport_tick(struct transport *t)
{
    uint64_t now = t->hooks->now(t->context), next = TRANSPORT_NO_TIMER;
    for (uint32_t machine = 0; machine < t->node_count; machine++) {
        struct transport_peer *p = &t->peers[machine];
        if (p->retransmit_at != TRANSPORT_NO_TIMER) {
            if (now >= p->retransmit_at)
                retransmit_timeout(t, machine, now);
            pump(t, machine);
            if (has_unsent(p) && now + TRANSPORT_QUEUE_RETRY_NS < next)
                next = now + TRANSPORT_QUEUE_RETRY_NS;
            if (p->retransmit_at < next)
                next = p->retransmit_at;
        }
        if (now >= p->ack_due)              /* no DATA frame carried it in time */
            send_ack(t, machine);
        if (p->ack_due < next)
            next = p->ack_due;
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
