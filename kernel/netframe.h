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
 * 802 local experimental) whose payload starts with struct
 * netframe_header. All payload fields are little-endian, at fixed offsets;
 * the Ethernet header is in network order as always. Frames shorter than
 * Ethernet's minimum are padded with zeros to NETFRAME_MIN_LEN.
 */
#ifndef NETFRAME_H
#define NETFRAME_H

#include <stdint.h>

/* The MAC convention: the first four bytes say "a DEMOS/MP node". */
#define NETFRAME_MAC_PREFIX0 0x52
#define NETFRAME_MAC_PREFIX1 0x54
#define NETFRAME_MAC_PREFIX2 0x00
#define NETFRAME_MAC_PREFIX3 0x4d

#define NETFRAME_ETHERTYPE 0x88b5
#define NETFRAME_VERSION   1
#define NETFRAME_ETH_LEN   14           /* destination, source, EtherType */
#define NETFRAME_MIN_LEN   60           /* Ethernet's minimum, without the FCS */
#define NETFRAME_MAX_NODES 255          /* the machine number is 8 bits in a pid */

enum netframe_type {
    NETFRAME_ANNOUNCE = 1,              /* "machine N, epoch E is up", broadcast at boot */
    NETFRAME_ANNOUNCE_REPLY = 2,        /* the same, unicast to a machine just heard from */
};

/* The payload of an announcement, as bytes on the wire (offsets after the
 * Ethernet header):
 *   0  uint8   version      NETFRAME_VERSION
 *   1  uint8   type         enum netframe_type
 *   2  uint16  reserved     zero
 *   4  uint32  machine      the sender's number
 *   8  uint32  node_count   the sender's idea of the cluster size
 *  12  uint32  epoch        the sender's boot epoch
 */
#define NETFRAME_ANNOUNCE_LEN 16

/* Errors of netframe_parse. */
enum netframe_error {
    NETFRAME_OK = 0,
    NETFRAME_E_SHORT = -1,              /* shorter than its headers */
    NETFRAME_E_ETHERTYPE = -2,          /* not our EtherType */
    NETFRAME_E_VERSION = -3,            /* another version of this format */
    NETFRAME_E_TYPE = -4,               /* an unknown frame type */
    NETFRAME_E_FIELD = -5,              /* a field out of range */
};

/* A parsed frame. */
struct netframe {
    uint8_t  destination[6], source[6];
    uint8_t  version, type;
    uint32_t machine, node_count, epoch;
};

/* Check frame[0..len) and fill *out; returns NETFRAME_OK or an error. */
int netframe_parse(const uint8_t *frame, uint32_t len, struct netframe *out);

/* Write an announcement of type `type` from `f` (source, destination,
 * machine, node_count, epoch) into buf, which holds at least
 * NETFRAME_MIN_LEN bytes; returns the frame's length. */
uint32_t netframe_build_announce(uint8_t *buf, const struct netframe *f, uint8_t type);

/* The machine number and node count that MAC address `mac` gives, by the
 * convention above; 0 if it follows it, -1 if not. */
int netframe_identity(const uint8_t mac[6], uint32_t *machine, uint32_t *node_count);

#endif
