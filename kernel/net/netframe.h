/*
 * netframe.h — what kernels say to each other on the wire, and how a node
 * knows who it is. Shared by the kernel, the host tools and tests (plain C,
 * fixed-width types only), so that the format is defined in one place.
 *
 * A node's identity is its NIC's MAC address: 52:54:00:4d:CC:NN, where CC is
 * the number of nodes in the cluster and NN this node's number (0..CC-1),
 * both as hex bytes. The launcher gives each node that MAC; a node without
 * a NIC, or with any other MAC, is machine 0 of 1.
 *
 * Every frame is an Ethernet frame of EtherType NETFRAME_ETHERTYPE (IEEE
 * 802 local experimental) whose payload starts with the header laid out
 * below (parsed into struct netframe). All payload fields are
 * little-endian, at fixed offsets; the Ethernet header is in network order
 * as always. Frames shorter than Ethernet's minimum are padded with zeros
 * to NETFRAME_MIN_LEN.
 *
 * Every frame, of every type, starts with the same 16-byte header, so that
 * each one names its sender, the sender's cluster size and the sender's
 * boot epoch at the same offsets. The reliable transport's frames (DATA and
 * ACK) follow it with fields of their own; transport.h says how they
 * are used.
 *
 * Every frame ends with its SEAL (below): the sender's frame number and a
 * SipHash-2-4 tag (siphash.h) under the cluster's key over every byte
 * before the tag. What this file calls a frame's BODY is the frame without
 * its seal: the builders write bodies, netframe_seal adds the seal,
 * netframe_unseal checks and removes it, and netframe_parse reads bodies.
 */
#ifndef NETFRAME_H
#define NETFRAME_H

#include <stdint.h>
#include "siphash.h"

/* Copy n bytes in the widest units both ends allow (8, 4 or 2 bytes, once
 * they share that alignment; else one by one). Fragments are 1,434 bytes
 * and sit 64 bytes into a frame, so most copies of a message's bytes
 * between frames, fragment blocks and the message buffer can use words
 * (a byte-by-byte copy costs about 5 instructions a byte, tens of
 * thousands for a 4 KiB message). The types may alias
 * anything, and no library is called (the host builds this too). */
typedef uint64_t __attribute__((may_alias)) netframe_u64;
typedef uint32_t __attribute__((may_alias)) netframe_u32;
typedef uint16_t __attribute__((may_alias)) netframe_u16;
static inline void netframe_copy(uint8_t *to, const uint8_t *from, uint32_t n)
{
    uintptr_t apart = (uintptr_t)to ^ (uintptr_t)from;
    if ((apart & 7) == 0) {
        for (; n && ((uintptr_t)to & 7); n--)
            *to++ = *from++;
        for (; n >= 32; n -= 32, to += 32, from += 32) {   /* four words a turn: half the loop's cost */
            const netframe_u64 *f = (const netframe_u64 *)from;
            netframe_u64 a = f[0], b = f[1], c = f[2], d = f[3], *t = (netframe_u64 *)to;
            t[0] = a, t[1] = b, t[2] = c, t[3] = d;
        }
        for (; n >= 8; n -= 8, to += 8, from += 8)
            *(netframe_u64 *)to = *(const netframe_u64 *)from;
    } else if ((apart & 3) == 0) {
        for (; n && ((uintptr_t)to & 3); n--)
            *to++ = *from++;
        for (; n >= 16; n -= 16, to += 16, from += 16) {
            const netframe_u32 *f = (const netframe_u32 *)from;
            netframe_u32 a = f[0], b = f[1], c = f[2], d = f[3], *t = (netframe_u32 *)to;
            t[0] = a, t[1] = b, t[2] = c, t[3] = d;
        }
        for (; n >= 4; n -= 4, to += 4, from += 4)
            *(netframe_u32 *)to = *(const netframe_u32 *)from;
    } else if ((apart & 1) == 0) {
        for (; n && ((uintptr_t)to & 1); n--)
            *to++ = *from++;
        for (; n >= 2; n -= 2, to += 2, from += 2)
            *(netframe_u16 *)to = *(const netframe_u16 *)from;
    }
    while (n--)
        *to++ = *from++;
}

/* The MAC convention: the first four bytes say "a DEMOS/MP node". */
#define NETFRAME_MAC_PREFIX0 0x52
#define NETFRAME_MAC_PREFIX1 0x54
#define NETFRAME_MAC_PREFIX2 0x00
#define NETFRAME_MAC_PREFIX3 0x4d

#define NETFRAME_ETHERTYPE 0x88b5
#define NETFRAME_VERSION   3
#define NETFRAME_ETH_LEN   14           /* destination, source, EtherType */
#define NETFRAME_MIN_LEN   60           /* Ethernet's minimum, without the FCS: a sealed frame's least length */
#define NETFRAME_MAX_NODES 255          /* the machine number is 8 bits in a pid */
#define NETFRAME_MAX_LEN   1514         /* an Ethernet frame without the FCS: a sealed frame's greatest length */

/* The seal, the last NETFRAME_SEAL_LEN bytes of every frame on the wire:
 *  len-16  uint64  number   the sender's count of the frames it has sealed
 *                           in this boot, 1, 2, ... (to every destination)
 *  len-8   uint64  tag      SipHash-2-4 (siphash.h) under the cluster's key
 *                           of bytes 0 .. len-8 of the frame: the Ethernet
 *                           header, the body, its padding and the number
 * A body is padded with zeros to NETFRAME_BODY_MIN_LEN bytes, so that a
 * sealed frame is never shorter than Ethernet's minimum. A frame whose tag
 * is wrong was not sealed with the key (forged) or was changed since
 * (altered); the number lets a receiver tell a frame it has taken already
 * (replayed) from a new one (cluster.c). */
#define NETFRAME_SEAL_LEN     16
#define NETFRAME_BODY_MIN_LEN (NETFRAME_MIN_LEN - NETFRAME_SEAL_LEN)
#define NETFRAME_BODY_MAX_LEN (NETFRAME_MAX_LEN - NETFRAME_SEAL_LEN)

enum netframe_type {
    NETFRAME_ANNOUNCE = 1,              /* "machine N, epoch E is up", broadcast at boot */
    NETFRAME_ANNOUNCE_REPLY = 2,        /* the same, unicast to a machine just heard from */
    NETFRAME_DATA = 3,                  /* transport: one fragment of a message */
    NETFRAME_ACK = 4,                   /* transport: "I have every message up to N, and these after it" */
    NETFRAME_GONE = 5,                  /* transport: "I have taken you to be down in your epoch" */
};

/* The header of every frame, as bytes on the wire (offsets after the
 * Ethernet header, whose 14 bytes come first):
 *   0  uint8   version      NETFRAME_VERSION
 *   1  uint8   type         enum netframe_type
 *   2  uint32  machine      the sender's number
 *   6  uint32  node_count   the sender's idea of the cluster size
 *  10  uint32  epoch        the sender's boot epoch
 * An announcement (ANNOUNCE or ANNOUNCE_REPLY): the header, then
 *  14  uint32  receiver_epoch   REPLY: the epoch of the announcement it
 *                               answers; ANNOUNCE: zero
 *  18  uint32  challenge        ANNOUNCE: a number its sender has not used
 *                               before in this boot; REPLY: the challenge of
 *                               the announcement it answers (never zero)
 * A machine's epoch is believed only from a REPLY to one of the believer's
 * own challenges (cluster.c), so that an old announcement sent again
 * cannot pass for a reboot.
 *
 * Every field of every frame lies a multiple of its own size from the
 * frame's start (14 + its offset here), and a DATA frame's fragment a
 * multiple of 8: a kernel that puts its frames on word boundaries reads
 * and writes each field with one load or store, moves fragments a word at
 * a time, and hashes the whole frame a word at a time (virtio_net.c).
 */
#define NETFRAME_ANNOUNCE_LEN 22

/* A DATA frame: the header, then
 *  14  uint32  receiver_epoch   the receiver's boot epoch as the sender knows it
 *  18  uint32  sequence         the message's number, 1, 2, ... per pair of boots
 *  22  uint32  message_length   the whole message's length in bytes
 *  26  uint32  fragment_offset  where this fragment starts in the message
 *  30  uint32  stamp            the sender's clock when it sent the frame
 *                               (microseconds, low 32 bits), echoed in ACKs
 *  34  uint32  ack              with NETFRAME_DATA_HAS_ACK, an acknowledgement
 *  38  uint32  echo             as an ACK frame's fields of those names, of
 *                               an ACK that names no message after ack (whole
 *                               and partial zero); without it, zero
 *  42  uint16  fragment_length  the bytes that follow the header
 *  44  uint16  flags            NETFRAME_DATA_ACK_NOW, NETFRAME_DATA_HAS_ACK;
 *                               no other bit
 *  46  uint32  reserved         zero
 *  50  ...     the fragment's bytes
 * A message of L bytes travels as fragments of NETFRAME_FRAGMENT_MAX bytes
 * at offsets 0, NETFRAME_FRAGMENT_MAX, ..., the last one shorter; an empty
 * message is one fragment of length 0. The parser accepts no other cut.
 * A DATA frame carries an acknowledgement for its receiver whenever its
 * sender holds nothing of the receiver's after `ack` (transport.h,
 * "Acknowledgements"), so that a message answered at once needs no ACK
 * frame of its own.
 */
#define NETFRAME_DATA_HEADER_LEN 50
#define NETFRAME_DATA_ACK_NOW    1      /* flags: "acknowledge this frame" */
#define NETFRAME_DATA_HAS_ACK    2      /* flags: ack and echo are an acknowledgement */
#define NETFRAME_FRAGMENT_MAX    (NETFRAME_BODY_MAX_LEN - NETFRAME_ETH_LEN - NETFRAME_DATA_HEADER_LEN)
#define NETFRAME_MAX_MESSAGE     65536
#define NETFRAME_MAX_FRAGMENTS   ((NETFRAME_MAX_MESSAGE + NETFRAME_FRAGMENT_MAX - 1) / NETFRAME_FRAGMENT_MAX)

/* An ACK frame: the header, then
 *  14  uint32  receiver_epoch   the epoch of the boot whose messages are acknowledged
 *  18  uint32  ack              every message numbered 1..ack has arrived
 *  22  uint32  echo             the latest stamp of the DATA frames received
 *                               from the ACK's receiver in this pair of boots
 *  26  uint32  whole            bit i: message ack+1+i has arrived whole
 *                               (bit 0 is always clear: that would be ack+1)
 *  30  uint32  partial          bit i: some fragments of message ack+1+i have
 *                               arrived, not all (never together with whole)
 *  34  uint64  fragments[n]     one map per bit set in partial, lowest bit
 *                               first: bit j, fragment j has arrived (at
 *                               least one bit, none from NETFRAME_MAX_FRAGMENTS on)
 * So an ACK is 34 + 8n bytes after the Ethernet header, n <= 32; no bit may
 * name a message beyond 2^32 - 1.
 */
#define NETFRAME_ACK_LEN         34
#define NETFRAME_ACK_MAX_PARTIAL 32
#define NETFRAME_ACK_MAX_LEN     (NETFRAME_ETH_LEN + NETFRAME_ACK_LEN + 8 * NETFRAME_ACK_MAX_PARTIAL)

/* A GONE frame: the header, then
 *  14  uint32  receiver_epoch   the epoch of the boot the sender has given up
 * The sender takes the receiver to be down in that epoch (it stopped
 * answering, transport.h); the receiver then takes the sender to be down
 * too, so that neither waits for the other.
 */
#define NETFRAME_GONE_LEN        18

/* Errors of netframe_parse. */
enum netframe_error {
    NETFRAME_OK = 0,
    NETFRAME_E_SHORT = -1,              /* shorter than its headers */
    NETFRAME_E_ETHERTYPE = -2,          /* not our EtherType */
    NETFRAME_E_VERSION = -3,            /* another version of this format */
    NETFRAME_E_TYPE = -4,               /* an unknown frame type */
    NETFRAME_E_FIELD = -5,              /* a field out of range */
    NETFRAME_E_TAG = -6,                /* netframe_unseal: the tag is wrong (forged or altered) */
};

/* A parsed frame. The fields after `epoch` are those of DATA and ACK
 * frames (zero in announcements) but for receiver_epoch, which
 * announcements and GONE frames have too (GONE has it alone), and
 * `challenge`, announcements' alone; `payload` points into the parsed
 * frame. Of fragments[], only the first as many as `partial` has bits set
 * are the frame's: the parser leaves the others as they were, and the
 * builder reads only those. */
struct netframe {
    uint8_t  destination[6], source[6];
    uint8_t  version, type;
    uint32_t machine, node_count, epoch;
    uint32_t receiver_epoch;
    uint32_t challenge;                 /* ANNOUNCE, ANNOUNCE_REPLY */
    uint32_t sequence;                  /* DATA */
    uint32_t message_length, fragment_offset, fragment_length;
    uint32_t flags, stamp;
    const uint8_t *payload;
    uint32_t ack, echo;                 /* ACK, and DATA with NETFRAME_DATA_HAS_ACK */
    uint32_t whole, partial;            /* ACK */
    uint64_t fragments[NETFRAME_ACK_MAX_PARTIAL];   /* the maps of `partial`'s bits, in order */
};

/* Check the body frame[0..len) (a frame without its seal) and fill *out;
 * returns NETFRAME_OK or an error. */
int netframe_parse(const uint8_t *frame, uint32_t len, struct netframe *out);

/* Write the body of an announcement of type `type` from `f` (source,
 * destination, machine, node_count, epoch, receiver_epoch, challenge) into
 * buf, which holds at least NETFRAME_MIN_LEN bytes; returns its length. */
uint32_t netframe_build_announce(uint8_t *buf, const struct netframe *f, uint8_t type);

/* Write the body of a DATA frame from `f` (the header's fields,
 * receiver_epoch, sequence, message_length, fragment_offset,
 * fragment_length, flags, stamp, ack, echo, and payload: the fragment's
 * bytes) into buf, which holds NETFRAME_MAX_LEN bytes; returns its length.
 * The fields must be ones the parser accepts. */
uint32_t netframe_build_data(uint8_t *buf, const struct netframe *f);

/* Write the body of an ACK frame from `f` (the header's fields,
 * receiver_epoch, ack, echo, whole, partial and one map in fragments[] per
 * bit of partial) into buf, which holds at least NETFRAME_ACK_MAX_LEN
 * bytes; returns its length. The fields must be ones the parser accepts. */
uint32_t netframe_build_ack(uint8_t *buf, const struct netframe *f);

/* Write the body of a GONE frame from `f` (the header's fields and
 * receiver_epoch, not 0) into buf, which holds at least NETFRAME_MIN_LEN
 * bytes; returns its length. */
uint32_t netframe_build_gone(uint8_t *buf, const struct netframe *f);

/* netframe_build_data, then netframe_seal as frame `number` under `key`:
 * the same bytes, but when buf and f->payload are on word boundaries (the
 * kernel's frames and blocks) each word of the fragment is loaded once, to
 * be copied and hashed. Returns the sealed frame's length. */
uint32_t netframe_build_data_sealed(uint8_t *buf, const struct netframe *f, uint64_t number,
                                    const struct siphash_key *key);

/* Seal the body frame[0..len) (len <= NETFRAME_BODY_MAX_LEN; the buffer
 * has NETFRAME_SEAL_LEN bytes more after it) as frame `number` under `key`:
 * write the number and the tag after it. Returns the sealed frame's length. */
uint32_t netframe_seal(uint8_t *frame, uint32_t len, uint64_t number, const struct siphash_key *key);

/* Check the seal of frame[0..len) under `key`: the body's length (len -
 * NETFRAME_SEAL_LEN) with its frame number in *number, or NETFRAME_E_SHORT
 * (too short to hold an Ethernet header and a seal) or NETFRAME_E_TAG. */
int32_t netframe_unseal(const uint8_t *frame, uint32_t len, const struct siphash_key *key, uint64_t *number);

/* The machine number and node count that MAC address `mac` gives, by the
 * convention above; 0 if it follows it, -1 if not. */
int netframe_identity(const uint8_t mac[6], uint32_t *machine, uint32_t *node_count);

#endif
