/*
 * cluster.c — this node among the others: who it is, and who else is up.
 *
 * A node's number and the node count come from its NIC's MAC address
 * (netframe.h). At boot a node broadcasts one announcement, "machine N,
 * epoch E is up"; a node that hears of a machine it did not know (or of a
 * new boot of it) prints so and answers that machine directly with its own
 * announcement. So whatever the order of boots, every node learns of every
 * other: a node booted later hears the earlier ones' answers. Announcements
 * are not retransmitted; the reliable transport is built over this later.
 */
#include "defs.h"
#include "netframe.h"

/* What this node knows of another machine. */
struct peer {
    uint8_t  known;
    uint8_t  mac[6];
    uint32_t epoch;
};

static struct peer peers[NETFRAME_MAX_NODES];
static int has_nic;
static int is_member;                   /* the MAC follows the convention */
static const uint8_t broadcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Learn this node's number and the node count from the NIC's MAC address;
 * without a NIC, or with another MAC, the node is machine 0 of 1. Called
 * at boot, before anything uses this_machine. */
void cluster_init(void)
{
    has_nic = net_init();
    is_member = has_nic && netframe_identity(net_mac, &this_machine, &node_count) == 0;
}

/* Send this node's announcement to `destination`. */
static void announce(const uint8_t destination[6], uint8_t type)
{
    struct netframe f = { .machine = this_machine, .node_count = node_count, .epoch = boot_epoch };
    memcpy(f.destination, destination, 6);
    memcpy(f.source, net_mac, 6);
    uint8_t frame[NETFRAME_MIN_LEN];
    uint32_t len = netframe_build_announce(frame, &f, type);
    if (net_send(frame, len) < 0)
        kprintf("machine %u: announcement not sent (transmit queue full)\n", this_machine);
}

/* Print the NIC and, if the node is a cluster member, broadcast that it is
 * up. Called at boot once interrupts can be taken. */
void cluster_announce(void)
{
    if (!has_nic)
        return;
    kprintf("net: %02x:%02x:%02x:%02x:%02x:%02x%s\n", net_mac[0], net_mac[1], net_mac[2], net_mac[3],
            net_mac[4], net_mac[5], is_member ? "" : " (not a cluster address: no announcement)");
    if (is_member)
        announce(broadcast_mac, NETFRAME_ANNOUNCE);
}

/* A frame arrived (virtio_net.c, from its interrupt). Announcements from a
 * machine of the same cluster that this node has not heard of in that
 * epoch are recorded, printed, and, if broadcast, answered. Transport
 * frames (DATA, ACK) are dropped: the transport is not yet in the kernel. */
void net_receive(const uint8_t *frame, uint32_t len)
{
    struct netframe f;
    if (!is_member || netframe_parse(frame, len, &f) != NETFRAME_OK || f.node_count != node_count ||
        f.machine == this_machine || (f.type != NETFRAME_ANNOUNCE && f.type != NETFRAME_ANNOUNCE_REPLY)) {
        net_counters.rx_drops++;
        return;
    }
    struct peer *p = &peers[f.machine];
    if (p->known && p->epoch == f.epoch)
        return;
    p->known = 1;
    p->epoch = f.epoch;
    memcpy(p->mac, f.source, 6);
    kprintf("machine %u: machine %u is up (epoch %u)\n", this_machine, f.machine, f.epoch);
    if (f.type == NETFRAME_ANNOUNCE)
        announce(p->mac, NETFRAME_ANNOUNCE_REPLY);
}
