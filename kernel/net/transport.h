/*
 * transport.h — the reliable kernel-to-kernel transport: whole
 * messages of up to 64 KiB, carried by raw Ethernet frames that may be
 * lost, duplicated, delayed or reordered, arrive exactly once and in order
 * for each pair of kernels, or fail with a clear reason.
 *
 * Plain C with fixed-width types, no kernel headers and no malloc: the
 * environment (sending a frame, the clock, the layer above) is a table of
 * hooks, so the same engine runs in the kernel and in the host simulation
 * tests/transport_test.c. All its state is one struct transport.
 *
 * THE PROTOCOL
 *
 * Frames. DATA and ACK frames (netframe.h gives the byte layouts) start
 * with the header every frame has: the sender's machine number, cluster
 * size and boot epoch. Both also carry the receiver's epoch as the sender
 * knows it. A DATA frame carries one fragment of one message: the
 * message's sequence number, its whole length, where the fragment goes, a
 * stamp (the sender's clock, in microseconds) and a flag "ACK at once". An
 * ACK says what the receiver has: a cumulative acknowledgement, which later
 * messages are whole, which fragments of the others it holds, and the
 * latest stamp it has seen from the sender (the echo).
 *
 * Sequence numbers and the window. Each direction of each pair of boots
 * numbers its messages 1, 2, 3, ... The sender keeps at most
 * TRANSPORT_WINDOW messages unacknowledged ("the window"); transport_send
 * refuses more. The protocol is selective repeat: the receiver that has
 * delivered 1..D keeps any fragment of messages D+1 .. D+TRANSPORT_WINDOW,
 * in whatever order they come, and delivers messages strictly in order and
 * once each: a message as soon as it and all before it are whole. A
 * fragment of a message it has delivered, or one it holds already, is a
 * duplicate; one beyond D+TRANSPORT_WINDOW cannot come from a sender that
 * keeps the window, and is dropped ("out of order").
 *
 * Fragments. A message of L bytes is cut at multiples of
 * NETFRAME_FRAGMENT_MAX (1444) bytes: up to 46 frames for 64 KiB. The next
 * message expected that comes in one frame is delivered straight from it;
 * any other fragment is copied into a receive block (one fragment each,
 * TRANSPORT_RECEIVE_BLOCKS shared by all senders) until its message is
 * delivered. When no block is free, a fragment of a sender's next message
 * expected takes the blocks of the held message that is furthest ahead of
 * its own sender's next one (evicted: that sender will send it again); any
 * other fragment is dropped ("no buffer"). So a next message expected
 * always finds room when at most 17 machines send 64 KiB messages to one
 * at once (17 * 46 blocks); beyond that, reassembly may stall.
 *
 * Acknowledgements. The receiver owes an acknowledgement whenever a
 * message becomes whole (delivered or not) and whenever a DATA frame asks
 * for it. The sender asks with the last fragment of each message and with
 * every fragment it sends again, so a repeat of something already
 * received (its acknowledgement was lost) is answered. Each acknowledgement
 * describes the receiver's whole window as it is then; the sender believes
 * the newest one (the greatest echo), so one that arrives after a later
 * one does not undo it, and a receiver may forget fragments it reported
 * (evicted): the next one no longer lists them and they are sent again.
 * An ACK frame can describe any window. A DATA frame carries one too
 * whenever its sender holds nothing of its receiver's after the last
 * message delivered (NETFRAME_DATA_HAS_ACK: the common case, nothing lost
 * or out of order), so that a message answered at once costs no ACK
 * frame. An acknowledgement owed goes out at once as an ACK frame when
 * the receiver holds fragments after the last message delivered (the
 * sender needs their list to repair its losses) or has delivered
 * TRANSPORT_ACK_MESSAGES messages since the last acknowledgement it sent
 * (so that a sender with no answers coming does not fill its window);
 * else it waits up to TRANSPORT_ACK_DELAY_NS for a DATA frame to carry
 * it, and goes in an ACK frame of its own then.
 *
 * Loss and retransmission. The sender sends only what the receiver lacks:
 *  - At once, on an ACK ("fast retransmit"): frames may overtake each other
 *    by up to TRANSPORT_REORDER_NS, so a fragment sent and not received is
 *    taken as lost once the receiver has seen a frame stamped more than
 *    that after the fragment's message was last sent (the echo says so).
 *    On a network that reorders more, fragments are sent again needlessly;
 *    nothing is lost or delivered twice.
 *  - On a timeout: a sender with messages unacknowledged has one timer. It
 *    is set to now + rto when the first message enters an empty window and
 *    whenever an ACK reports anything new (a message acknowledged, or a
 *    fragment the newest ACK before it did not report); rto then goes back
 *    to TRANSPORT_RTO_INITIAL_NS. When the timer expires, the fragments of
 *    the oldest unacknowledged message that the newest ACK did not report
 *    are sent again as a probe, and rto doubles up to TRANSPORT_RTO_MAX_NS.
 *    The probe asks for an ACK, whose echo then shows everything else that
 *    is missing as lost; a dead peer costs one message's fragments per
 *    expiry, not a window's.
 * After TRANSPORT_MAX_RETRIES expiries in a row without progress, the peer
 * is taken to be dead in that epoch: every pending message fails with
 * TRANSPORT_FAIL_TIMEOUT and later sends to it fail with TRANSPORT_E_DOWN
 * until it is announced in a new epoch. With the constants below that is
 * at most about 3.8 s. The peer may be alive (its frames lost on the way
 * here, or only delayed): it is sent a GONE frame, and answered with
 * another each time a frame of its comes, of which nothing is taken; told
 * so, it takes this node to be down too (its messages fail with
 * TRANSPORT_FAIL_GIVEN_UP), so that neither waits on the other for ever,
 * until one of them boots again. A patient transport (transport_be_patient)
 * never gives up on a silent peer: it probes every TRANSPORT_RTO_MAX_NS for
 * as long as the silence lasts, for a cluster under a debugger, where a
 * machine stopped at a breakpoint is silent for as long as its user
 * likes. Fragments taken as lost go out before any fragment
 * never sent, oldest message first. A frame the NIC cannot take now
 * ("queue full") is not lost: the sender sends it on a later
 * transport_tick.
 *
 * Epochs and reboots. A peer's epoch is learned only from its
 * announcements (transport_peer_up, called by cluster.c once the peer has
 * answered a challenge in that epoch). Frames are
 * dropped as stale when their sender's epoch is not the one the
 * announcements gave, or their receiver epoch is not this boot's: they
 * were sent by, or meant for, a former boot. (Epochs are 24-bit numbers
 * that may wrap, so "newer" cannot be told from "larger". A rebooted peer
 * learns this node's epoch from this node's answer to its announcement,
 * and may send before its own answer to this node's challenge arrives:
 * those frames are dropped as stale here and sent again.)
 * When a peer is announced in a new epoch, everything about the old one
 * is dropped: its pending messages fail with TRANSPORT_FAIL_REBOOTED (they
 * may or may not have been delivered to the old boot; they will never
 * reach the new one), the fragments held from it are discarded, both
 * directions start again at sequence 1, and the layer above is told.
 *
 * Limits. Sequence numbers do not wrap: 2^32 messages per pair of boots.
 * Stamps wrap after 71 minutes; they are only compared over seconds.
 * Hooks are called from inside transport calls and must not call back
 * into the same struct transport.
 */
#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <stdint.h>
#include "netframe.h"

#define TRANSPORT_WINDOW              32          /* unacknowledged messages per peer; an ACK names 32 */
#define TRANSPORT_SEND_BLOCKS         512         /* fragments of unacknowledged messages, all peers */
#define TRANSPORT_RECEIVE_BLOCKS      782         /* fragments held for reassembly, all peers */
#define TRANSPORT_RTO_INITIAL_NS      20000000ull /* 20 ms */
#define TRANSPORT_RTO_MAX_NS          640000000ull
#define TRANSPORT_MAX_RETRIES         10
#define TRANSPORT_REORDER_NS          3000000ull  /* how far frames may overtake each other: 3 ms */
#define TRANSPORT_QUEUE_RETRY_NS      1000000ull  /* try a full transmit queue again after 1 ms */
#define TRANSPORT_ACK_DELAY_NS        1000000ull  /* an acknowledgement waits at most 1 ms for a DATA frame */
#define TRANSPORT_ACK_MESSAGES        8           /* messages delivered before one is sent at once */
#define TRANSPORT_NO_TIMER            UINT64_MAX

/* Errors of transport_send. */
enum transport_error {
    TRANSPORT_E_UNKNOWN = -1,   /* no such machine, this machine, or not announced yet */
    TRANSPORT_E_DOWN = -2,      /* the peer stopped answering in its current epoch */
    TRANSPORT_E_WINDOW = -3,    /* TRANSPORT_WINDOW messages to it are unacknowledged */
    TRANSPORT_E_NOSPACE = -4,   /* not enough free send blocks for the message */
    TRANSPORT_E_SIZE = -5,      /* longer than NETFRAME_MAX_MESSAGE */
};

/* Why a message failed (the `failed` hook). */
enum transport_failure {
    TRANSPORT_FAIL_REBOOTED = 1,    /* the peer was announced in a new epoch */
    TRANSPORT_FAIL_TIMEOUT = 2,     /* the peer stopped answering */
    TRANSPORT_FAIL_GIVEN_UP = 3,    /* the peer said it had given this node up (a GONE frame) */
};

/* The environment. `context` is the one given to transport_init. */
struct transport_hooks {
    /* Put one frame on the wire: 0, or negative if the transmit queue is
     * full (the transport sends it again later). */
    int (*send_frame)(void *context, const uint8_t *frame, uint32_t len);
    /* The time in nanoseconds, from any origin, never going back. */
    uint64_t (*now)(void *context);
    /* A whole message from `machine`, in order; the bytes are valid only
     * during the call. */
    void (*deliver)(void *context, uint32_t machine, const uint8_t *message, uint32_t len);
    /* Message `sequence` (transport_send's result) to `machine` failed
     * (enum transport_failure): it may or may not have been delivered.
     * Sequence 0: no message was under way when `machine` was given up
     * (it said it had given this node up). */
    void (*failed)(void *context, uint32_t machine, uint32_t sequence, int reason);
    /* `machine` was announced in a new epoch, after an earlier one. */
    void (*peer_rebooted)(void *context, uint32_t machine, uint32_t epoch);
    /* Optional: put the DATA, ACK or GONE frame `f` on the wire, built where it
     * is sent from (the NIC's buffer, sealed as it is built: cluster.c)
     * instead of in the transport's own buffer and copied there by
     * send_frame. 0, or negative if the transmit queue is full. */
    int (*send_netframe)(void *context, const struct netframe *f);
};

/* What happened with one peer, counted since transport_init. */
struct transport_counters {
    uint32_t messages_sent;         /* accepted by transport_send */
    uint32_t messages_delivered;    /* from this peer, to the layer above */
    uint32_t messages_failed;       /* to this peer */
    uint32_t frames_sent;           /* DATA frames put on the wire, retransmissions included */
    uint32_t retransmissions;       /* DATA frames sent again */
    uint32_t queue_full;            /* DATA, ACK or GONE frames the NIC could not take then */
    uint32_t timeouts;              /* retransmission timer expiries */
    uint32_t acks_sent, acks_received;   /* ACK frames */
    uint32_t acks_carried;          /* acknowledgements sent in DATA frames */
    uint32_t duplicates_dropped;    /* fragments of messages already delivered, or already held */
    uint32_t out_of_order_buffered; /* fragments of later messages, held until their turn */
    uint32_t out_of_order_dropped;  /* fragments of messages beyond the window */
    uint32_t stale_dropped;         /* frames from, or meant for, another boot */
    uint32_t no_buffer_dropped;     /* fragments for which no receive block was free */
    uint32_t fragments_evicted;     /* held fragments given up to make room for a next message */
    uint32_t bad_fragments;         /* fragments giving a held message another length */
    uint32_t bad_acks;              /* ACKs of messages or fragments never sent */
};

/* A message in a peer's send window. Its bytes are in a chain of blocks,
 * one fragment per block. */
struct transport_outgoing {
    uint32_t length;
    uint16_t first_block;
    uint16_t fragments_sent;        /* fragments 0 .. fragments_sent-1 were sent at least once */
    uint32_t last_sent;             /* the stamp of its latest fragment put on the wire */
    uint64_t received;              /* bit i: the newest ACK says fragment i has arrived */
    uint64_t lost;                  /* bit i: fragment i is taken as lost, to be sent again */
};

/* A message in a peer's receive window: the fragments of it held so far. */
struct transport_incoming {
    uint32_t sequence;              /* 0: nothing held in this slot */
    uint32_t length;
    uint64_t fragments_in;          /* bit i: fragment i is held */
    uint16_t first_block;           /* the held fragments' blocks, chained in fragment order */
};

/* What this node knows of, and has under way with, another machine. */
struct transport_peer {
    uint32_t epoch;                 /* from its announcements; 0: not announced */
    uint8_t  down;                  /* stopped answering in this epoch */
    uint8_t  stamp_known;           /* a DATA frame came from it in this pair of boots */
    uint32_t next_sequence;         /* the number of the next message to it */
    uint32_t acked;                 /* it has 1..acked */
    uint32_t delivered;             /* we have 1..delivered from it */
    uint32_t cursor_sequence;       /* the first message to it with fragments never sent */
    uint32_t latest_stamp;          /* the latest stamp of its DATA frames: our ACKs' echo */
    uint32_t echo;                  /* the greatest echo of its ACKs: the newest ACK's */
    uint64_t retransmit_at;
    uint64_t ack_due;               /* an acknowledgement owed must go by then; or TRANSPORT_NO_TIMER */
    uint32_t reported;              /* `delivered` as the last acknowledgement sent to it said */
    uint64_t rto;
    uint32_t retries;               /* timer expiries since the last progress */
    struct transport_outgoing window[TRANSPORT_WINDOW];     /* by sequence % TRANSPORT_WINDOW */
    struct transport_incoming incoming[TRANSPORT_WINDOW];   /* by sequence % TRANSPORT_WINDOW */
    struct transport_counters counters;
};

#define TRANSPORT_BLOCKS    (TRANSPORT_SEND_BLOCKS + TRANSPORT_RECEIVE_BLOCKS)
#define TRANSPORT_NO_BLOCK  0xffff

/* One node's transport. Large (about 2.4 MB): give it static storage. */
struct transport {
    uint32_t machine, node_count, epoch;
    uint32_t patient;               /* never take a silent peer to be down (transport_be_patient) */
    const struct transport_hooks *hooks;
    void *context;
    struct transport_peer peers[NETFRAME_MAX_NODES];
    /* One pool of fragment-sized blocks, one free list, two budgets: the
     * sending side may hold TRANSPORT_SEND_BLOCKS, the receiving side
     * TRANSPORT_RECEIVE_BLOCKS. */
    /* Each block 8-byte aligned (the stride rounded up), as are the
     * payloads of the frames built in frame_space, so fragments move
     * between them a word at a time (netframe_copy). */
    uint8_t  blocks[TRANSPORT_BLOCKS][(NETFRAME_FRAGMENT_MAX + 7) & ~7] __attribute__((aligned(8)));
    uint16_t next_block[TRANSPORT_BLOCKS];
    uint16_t free_block;            /* the free list's head */
    uint32_t send_blocks_free, receive_blocks_free;
    uint8_t  message[NETFRAME_MAX_MESSAGE] __attribute__((aligned(8)));   /* where a message is put together to be delivered */
    uint8_t  frame_space[NETFRAME_MAX_LEN + 8] __attribute__((aligned(8)));   /* frames are built at frame_of() */
};

/* Start (or restart, after a reboot) the transport of machine `machine` of
 * `node_count` in boot epoch `epoch` (not 0): no peer known, nothing
 * pending. */
void transport_init(struct transport *t, uint32_t machine, uint32_t node_count, uint32_t epoch,
                    const struct transport_hooks *hooks, void *context);

/* From now on, take no peer to be down however long it is silent: its
 * messages wait, probed every TRANSPORT_RTO_MAX_NS, until it answers or is
 * announced in a new epoch. For a cluster under a debugger (the boot
 * argument net.patient, kernel/net/remote.c). */
void transport_be_patient(struct transport *t);

/* Machine `machine` announced itself in epoch `epoch` (cluster.c). A new
 * epoch after another ends everything under way with the former boot. */
void transport_peer_up(struct transport *t, uint32_t machine, uint32_t epoch);

/* Copy message[0..len) for `machine` and start sending it; returns its
 * sequence number (> 0), or an enum transport_error. */
int64_t transport_send(struct transport *t, uint32_t machine, const void *message, uint32_t len);
/* The same for a message in two pieces, `head` then `tail` (a kernel
 * message's fixed part, then data that is elsewhere): it is copied once,
 * into the fragments. */
int64_t transport_send_parts(struct transport *t, uint32_t machine, const void *head, uint32_t head_len,
                             const void *tail, uint32_t tail_len);

/* A frame arrived from the network (any frame: others are ignored). */
void transport_frame(struct transport *t, const uint8_t *frame, uint32_t len);
/* The same for a frame parsed already (netframe_parse said NETFRAME_OK):
 * the kernel parses each frame once, before it knows whose it is. */
void transport_frame_parsed(struct transport *t, const struct netframe *f);

/* Send what is due: retransmissions whose timer expired, frames that the
 * transmit queue refused earlier, acknowledgements that no DATA frame
 * carried in time. Returns the time at which it must be called next, or
 * TRANSPORT_NO_TIMER if nothing is pending. transport_send and
 * transport_frame may start a timer, so the caller also asks again after
 * each of them, not only when the last answer said. */
uint64_t transport_tick(struct transport *t);

/* Messages to `machine` not yet acknowledged. */
uint32_t transport_pending(const struct transport *t, uint32_t machine);

/* The counters for `machine`, or 0 if there is no such machine. */
const struct transport_counters *transport_counters(const struct transport *t, uint32_t machine);

#endif
