/*
 * cluster.c — this node among the others: who it is, and who else is up.
 *
 * A node's number and the node count come from its NIC's MAC address
 * (netframe.h). At boot a node broadcasts an announcement, "machine N,
 * epoch E is up", and again every ANNOUNCE_INTERVAL_NS while there is a
 * machine it has not heard from (announcements may be lost like any frame).
 * A node answers every broadcast announcement with its own, sent to that
 * machine alone. So whatever the order of boots, every node learns of every
 * other: a node booted later hears the earlier ones' answers.
 *
 * What a node hears of another machine goes to the transport (a new epoch
 * means a reboot: what was under way with the former boot fails) and to
 * the process manager if it runs here (a process-control link to that
 * machine's kernel). DATA and ACK frames go to the transport (remote.c).
 */
#include "defs.h"
#include "netframe.h"

#define ANNOUNCE_INTERVAL_NS 1000000000ull

/* What this node knows of another machine. */
struct peer {
    uint8_t  known;
    uint32_t epoch;
};

static struct peer peers[NETFRAME_MAX_NODES];
static int has_nic;
static int is_member;                   /* the MAC follows the convention */
static uint32_t peers_known;
static uint64_t next_announce = UINT64_MAX;
static const uint8_t broadcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
/* A fault for the tests, which the wirefilters (one on each node's wire)
 * cannot make: a one-way cut between one pair of machines. With the boot
 * arguments net.deaf.machine=M net.deaf.ms=N, every frame from machine M
 * is dropped during this machine's first N ms. */
static uint32_t deaf_machine = NETFRAME_MAX_NODES;
static uint64_t deaf_until;

/* Learn this node's number and the node count from the NIC's MAC address;
 * without a NIC, or with another MAC, the node is machine 0 of 1. Called
 * at boot, before anything uses this_machine. */
void cluster_init(void)
{
    has_nic = net_init();
    is_member = has_nic && netframe_identity(net_mac, &this_machine, &node_count) == 0;
    uint64_t machine, ms;
    if (bootarg_number("net.deaf.machine", &machine) && bootarg_number("net.deaf.ms", &ms) &&
        machine < node_count && machine != this_machine) {
        deaf_machine = (uint32_t)machine;
        deaf_until = machine_clock_ns() + ms * 1000000;
        kprintf("machine %u: frames from machine %lu are dropped for %lu ms (net.deaf)\n", this_machine, machine, ms);
    }
}

/* Send this node's announcement to `destination`. */
static void announce(const uint8_t destination[6], uint8_t type)
{
    struct netframe f = { .machine = this_machine, .node_count = node_count, .epoch = boot_epoch };
    memcpy(f.destination, destination, 6);
    memcpy(f.source, net_mac, 6);
    uint8_t frame[NETFRAME_MIN_LEN];
    uint32_t len = netframe_build_announce(frame, &f, type);
    net_send(frame, len);   /* if the transmit queue is full, a later announcement will do */
}

/* Print the NIC and, if the node is a cluster member, broadcast that it is
 * up. Called at boot once interrupts can be taken. */
void cluster_announce(void)
{
    if (!has_nic)
        return;
    kprintf("net: %02x:%02x:%02x:%02x:%02x:%02x%s\n", net_mac[0], net_mac[1], net_mac[2], net_mac[3],
            net_mac[4], net_mac[5], is_member ? "" : " (not a cluster address: no announcement)");
    if (!is_member)
        return;
    announce(broadcast_mac, NETFRAME_ANNOUNCE);
    if (node_count > 1)
        next_announce = machine_clock_ns() + ANNOUNCE_INTERVAL_NS;
}

/* The timer (remote.c): announce again while some machine is unheard of. */
void cluster_tick(uint64_t now)
{
    if (now < next_announce)
        return;
    if (peers_known + 1 >= node_count) {
        next_announce = UINT64_MAX;
        return;
    }
    announce(broadcast_mac, NETFRAME_ANNOUNCE);
    next_announce = now + ANNOUNCE_INTERVAL_NS;
}

uint64_t cluster_next_time(void)
{
    return next_announce;
}

/* Tell the process manager (if here) of every machine known so far: it
 * has just asked for notices (KOP_NOTIFY). */
void cluster_notify_known(void)
{
    for (uint32_t m = 0; m < node_count; m++)
        if (peers[m].known)
            notify_machine_up(m, peers[m].epoch);
}

/* A frame arrived (dev/virtio_net.c, from its interrupt). Transport frames go
 * to remote.c. An announcement from a machine of the same cluster that is
 * new, or in a new epoch, is recorded, printed and passed on; a broadcast
 * one is answered. */
void net_receive(const uint8_t *frame, uint32_t len)
{
    struct netframe f;
    if (!is_member || netframe_parse(frame, len, &f) != NETFRAME_OK || f.node_count != node_count ||
        f.machine == this_machine || (f.machine == deaf_machine && machine_clock_ns() < deaf_until)) {
        net_counters.rx_drops++;
        return;
    }
    if (f.type == NETFRAME_DATA || f.type == NETFRAME_ACK) {
        remote_frame(frame, len);
        return;
    }
    if (f.type != NETFRAME_ANNOUNCE && f.type != NETFRAME_ANNOUNCE_REPLY) {
        net_counters.rx_drops++;
        return;
    }
    struct peer *p = &peers[f.machine];
    if (f.type == NETFRAME_ANNOUNCE)
        announce(f.source, NETFRAME_ANNOUNCE_REPLY);
    if (p->known && p->epoch == f.epoch)
        return;
    peers_known += !p->known;
    p->known = 1;
    p->epoch = f.epoch;
    kprintf("machine %u: machine %u is up (epoch %u)\n", this_machine, f.machine, f.epoch);
    remote_peer_up(f.machine, f.epoch);
    notify_machine_up(f.machine, f.epoch);
}
