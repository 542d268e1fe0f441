/*
 * transport.h — the reliable kernel-to-kernel transport (issue 4): whole
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
 * message's sequence number, its whole length, and where the fragment
 * goes. An ACK carries one number, a cumulative acknowledgement.
 *
 * Sequence numbers. Each direction of each pair of boots numbers its
 * messages 1, 2, 3, ... The sender keeps at most TRANSPORT_WINDOW messages
 * unacknowledged ("the window"); transport_send refuses more. The receiver
 * accepts only the next message it expects (go-back-N): a fragment of a
 * later one is dropped ("out of order"), one of an earlier one is a
 * duplicate. So messages are delivered in order and once each, and the
 * receiver reassembles at most one message per sender at a time.
 *
 * Fragments. A message of L bytes is cut at multiples of
 * NETFRAME_FRAGMENT_MAX (1464) bytes: up to 45 frames for 64 KiB. A
 * message of one fragment is delivered straight from its frame; a longer
 * one is copied into one of TRANSPORT_REASSEMBLY_BUFFERS buffers of 64 KiB
 * that are shared by all senders, and delivered when every fragment is in
 * (a bitmap says which). A sender waits for a free buffer by having its
 * fragments dropped and retransmitted; a buffer that has had no fragment
 * for TRANSPORT_REASSEMBLY_IDLE_NS may be taken by another sender.
 *
 * Acknowledgements. The receiver answers at once (no delayed acks) with an
 * ACK "I have 1..N" whenever it completes a message, and whenever the last
 * fragment of a message it already has arrives again: that means its
 * earlier ACK was lost. Acks are cumulative, so a lost ACK is repaired by
 * any later one.
 *
 * Timers and backoff. A sender with messages unacknowledged has one timer.
 * It is set to now + rto when the first message enters an empty window
 * and whenever an ACK acknowledges something new (rto then goes back to
 * TRANSPORT_RTO_INITIAL_NS). When it expires, the sender goes back to its
 * oldest unacknowledged message and sends everything again from there,
 * doubling rto up to TRANSPORT_RTO_MAX_NS. After TRANSPORT_MAX_RETRIES
 * expiries in a row without progress, the peer is taken to be dead in
 * that epoch: every pending message fails with TRANSPORT_FAIL_TIMEOUT and
 * later sends to it fail with TRANSPORT_E_DOWN until it is announced in a
 * new epoch. With the constants below that is at most about 3.8 s.
 * A frame the NIC cannot take now ("queue full") is not lost: the sender
 * sends it on a later transport_tick.
 *
 * Epochs and reboots. A peer's epoch is learned only from its
 * announcements (transport_peer_up, called by cluster.c). Frames are
 * dropped as stale when their sender's epoch is not the one the
 * announcements gave, or their receiver epoch is not this boot's: they
 * were sent by, or meant for, a former boot. (Epochs are 24-bit numbers
 * that may wrap, so "newer" cannot be told from "larger"; and a rebooted
 * peer cannot send to this node before this node has heard its
 * announcement, since it learns this node's epoch only from the answer.)
 * When a peer is announced in a new epoch, everything about the old one
 * is dropped: its pending messages fail with TRANSPORT_FAIL_REBOOTED (they
 * may or may not have been delivered to the old boot; they will never
 * reach the new one), its half-reassembled message is discarded, both
 * directions start again at sequence 1, and the layer above is told.
 *
 * Limits. Sequence numbers do not wrap: 2^32 messages per pair of boots.
 * Hooks are called from inside transport calls and must not call back
 * into the same struct transport.
 */
#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <stdint.h>
#include "netframe.h"

#define TRANSPORT_WINDOW              32          /* unacknowledged messages per peer */
#define TRANSPORT_SEND_BLOCKS         512         /* fragments of unacknowledged messages, all peers */
#define TRANSPORT_REASSEMBLY_BUFFERS  4           /* multi-fragment messages being received at once */
#define TRANSPORT_RTO_INITIAL_NS      20000000ull /* 20 ms */
#define TRANSPORT_RTO_MAX_NS          640000000ull
#define TRANSPORT_MAX_RETRIES         10
#define TRANSPORT_QUEUE_RETRY_NS      1000000ull  /* try a full transmit queue again after 1 ms */
#define TRANSPORT_REASSEMBLY_IDLE_NS  (2 * TRANSPORT_RTO_MAX_NS)
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
     * (enum transport_failure): it may or may not have been delivered. */
    void (*failed)(void *context, uint32_t machine, uint32_t sequence, int reason);
    /* `machine` was announced in a new epoch, after an earlier one. */
    void (*peer_rebooted)(void *context, uint32_t machine, uint32_t epoch);
};

/* What happened with one peer, counted since transport_init. */
struct transport_counters {
    uint32_t messages_sent;         /* accepted by transport_send */
    uint32_t messages_delivered;    /* from this peer, to the layer above */
    uint32_t messages_failed;       /* to this peer */
    uint32_t frames_sent;           /* DATA frames put on the wire, retransmissions included */
    uint32_t retransmissions;       /* DATA frames sent again */
    uint32_t queue_full;            /* DATA or ACK frames the NIC could not take then */
    uint32_t timeouts;              /* retransmission timer expiries */
    uint32_t acks_sent, acks_received;
    uint32_t duplicates_dropped;    /* fragments of messages already delivered, or already held */
    uint32_t out_of_order_dropped;  /* fragments of later messages */
    uint32_t stale_dropped;         /* frames from, or meant for, another boot */
    uint32_t no_buffer_dropped;     /* fragments for which no reassembly buffer was free */
    uint32_t bad_acks;              /* ACKs of messages never sent */
};

/* A message in a peer's send window. Its bytes are in a chain of send
 * blocks, one fragment per block. */
struct transport_outgoing {
    uint32_t length;
    uint16_t first_block;
    uint16_t fragments_sent;        /* fragments sent at least once */
};

/* What this node knows of, and has under way with, another machine. */
struct transport_peer {
    uint32_t epoch;                 /* from its announcements; 0: not announced */
    uint8_t  down;                  /* stopped answering in this epoch */
    uint8_t  reassembly;            /* the buffer it is using, or TRANSPORT_NO_BUFFER */
    uint32_t next_sequence;         /* the number of the next message to it */
    uint32_t acked;                 /* it has 1..acked */
    uint32_t delivered;             /* we have 1..delivered from it */
    uint32_t cursor_sequence;       /* the next fragment to put on the wire: */
    uint32_t cursor_fragment;       /* message and fragment index */
    uint64_t retransmit_at;
    uint64_t rto;
    uint32_t retries;               /* timer expiries since the last progress */
    struct transport_outgoing window[TRANSPORT_WINDOW];     /* by sequence % TRANSPORT_WINDOW */
    struct transport_counters counters;
};

#define TRANSPORT_NO_BUFFER 0xff
#define TRANSPORT_NO_BLOCK  0xffff

/* A multi-fragment message being put together. */
struct transport_reassembly {
    uint32_t owner;                 /* the sending machine, or NETFRAME_MAX_NODES if free */
    uint32_t sequence, length, received;
    uint64_t fragments_in;          /* bit i: fragment i has arrived */
    uint64_t last_fragment_at;
    uint8_t  bytes[NETFRAME_MAX_MESSAGE];
};

/* One node's transport. Large (about 1 MB): give it static storage. */
struct transport {
    uint32_t machine, node_count, epoch;
    const struct transport_hooks *hooks;
    void *context;
    struct transport_peer peers[NETFRAME_MAX_NODES];
    struct transport_reassembly reassembly[TRANSPORT_REASSEMBLY_BUFFERS];
    uint8_t  blocks[TRANSPORT_SEND_BLOCKS][NETFRAME_FRAGMENT_MAX];
    uint16_t next_block[TRANSPORT_SEND_BLOCKS];
    uint16_t free_block;            /* the free list's head */
    uint32_t free_blocks;
    uint8_t  frame[NETFRAME_MAX_LEN];   /* where frames are built */
};

/* Start (or restart, after a reboot) the transport of machine `machine` of
 * `node_count` in boot epoch `epoch` (not 0): no peer known, nothing
 * pending. */
void transport_init(struct transport *t, uint32_t machine, uint32_t node_count, uint32_t epoch,
                    const struct transport_hooks *hooks, void *context);

/* Machine `machine` announced itself in epoch `epoch` (cluster.c). A new
 * epoch after another ends everything under way with the former boot. */
void transport_peer_up(struct transport *t, uint32_t machine, uint32_t epoch);

/* Copy message[0..len) for `machine` and start sending it; returns its
 * sequence number (> 0), or an enum transport_error. */
int64_t transport_send(struct transport *t, uint32_t machine, const void *message, uint32_t len);

/* A frame arrived from the network (any frame: others are ignored). */
void transport_frame(struct transport *t, const uint8_t *frame, uint32_t len);

/* Send what is due: retransmissions whose timer expired, frames that the
 * transmit queue refused earlier. Returns the time at which it must be
 * called next, or TRANSPORT_NO_TIMER if nothing is pending. transport_send
 * and transport_frame may start a timer, so the caller also asks again
 * after each of them, not only when the last answer said. */
uint64_t transport_tick(struct transport *t);

/* Messages to `machine` not yet acknowledged. */
uint32_t transport_pending(const struct transport *t, uint32_t machine);

/* The counters for `machine`, or 0 if there is no such machine. */
const struct transport_counters *transport_counters(const struct transport *t, uint32_t machine);

#endif
