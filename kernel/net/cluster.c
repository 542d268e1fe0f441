/*
 * cluster.c — this node among the others: who it is, who else is up, and
 * which frames come from them.
 *
 * A node's number and the node count come from its NIC's MAC address
 * (netframe.h). Every frame it sends is sealed here under the cluster's
 * key, given at boot (net.key=<32 hex digits>; the launcher makes one per
 * cluster): cluster_send numbers it and adds its SipHash-2-4 tag. Every
 * frame that arrives is checked here first (net_receive):
 *   - a wrong tag: not sealed with the key (FORGED) or changed since
 *     (altered): dropped and counted, in all and for the machine whose
 *     address it names;
 *   - a frame number already taken from that machine in its current epoch,
 *     or older than the 64 below the highest taken (REPLAYED): dropped and
 *     counted for that machine and in all (a duplicate the network made is
 *     the same frame sent again, and is counted with them);
 *   - the rest goes on: DATA, ACK and GONE frames to the transport (remote.c),
 *     which drops and counts as stale those from, or meant for, an epoch
 *     other than the current ones; announcements stay here.
 * Without a key a node of a cluster of more than one machine refuses to
 * join it: it sends no frame and takes none, and says so at boot.
 *
 * Announcements. At boot a node broadcasts an ANNOUNCE, "machine N, epoch
 * E is up", with a CHALLENGE (a number it has not used before in this
 * boot), and again every ANNOUNCE_INTERVAL_NS while there is a machine it
 * has not heard from (announcements may be lost like any frame). A node
 * answers every ANNOUNCE with an ANNOUNCE_REPLY to its sender that echoes
 * the challenge and the announcer's epoch. A machine's epoch is BELIEVED
 * only from a reply to this node's own challenge, answered in this boot
 * and later than the machine's last answer: a reply is fresh, where an
 * announcement may be an old one sent again, which would pass for a
 * reboot into a former epoch. So an ANNOUNCE of an epoch not believed
 * (a reboot, or a replay) is answered with a challenge of this node's own,
 * sent again every ANNOUNCE_INTERVAL_NS until the machine answers; its
 * answer settles the claim: an announced epoch that the answer does not
 * confirm was replayed, and is counted so then. A reply that answers no
 * open challenge of this node is counted as replayed at once. Whatever the
 * order of boots, every node learns of every other.
 *
 * What a node believes of another machine goes to the transport (a new
 * epoch means a reboot: what was under way with the former boot fails) and
 * to the process manager if it runs here (a process-control link to that
 * machine's kernel).
 */
#include "defs.h"
#include "netframe.h"

#define ANNOUNCE_INTERVAL_NS 1000000000ull
#define CLAIMS 4                        /* epochs announced and not settled, per machine */
#define WINDOW 64                       /* frame numbers below the highest taken that are remembered */

/* An epoch a machine was heard to announce, not believed yet, and how
 * many announcements claimed it. */
struct claim {
    uint32_t epoch, count;
};

/* What this node knows of another machine. */
struct peer {
    uint8_t  known;                     /* its epoch is believed */
    uint8_t  verifying;                 /* it announced an epoch not believed: challenged until it answers */
    uint32_t epoch;                     /* the epoch believed */
    uint32_t answered;                  /* the latest of this node's challenges it answered */
    uint64_t highest;                   /* the highest frame number taken from it in that epoch */
    uint64_t taken;                     /* bit i: frame highest - i was taken */
    struct claim claims[CLAIMS];
    uint32_t forged, replayed;          /* frames from it dropped, as in the comment above */
};

static struct peer peers[NETFRAME_MAX_NODES];
static int has_nic;
static int is_member;                   /* the MAC follows the convention */
static int keyed;                       /* the boot arguments gave the cluster's key */
static struct siphash_key key;
static uint64_t frames_sealed;          /* the number of the last frame sent */
static uint32_t challenges_issued;      /* the last challenge sent */
static uint64_t forged_total, forged_unnamed, replayed_total;
static uint32_t peers_known;
static uint64_t next_announce = UINT64_MAX;
static const uint8_t broadcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
/* A fault for the tests, which the wirefilters (one on each node's wire)
 * cannot make: a one-way cut between one pair of machines. With the boot
 * arguments net.deaf.machine=M net.deaf.ms=N, every frame from machine M
 * is dropped during this machine's first N ms. */
static uint32_t deaf_machine = NETFRAME_MAX_NODES;
static uint64_t deaf_until;

static int read_key(const char *hex);
static void auth_bench(void);

/* Learn this node's number and the node count from the NIC's MAC address;
 * without a NIC, or with another MAC, the node is machine 0 of 1. Take the
 * cluster's key out of the boot arguments. Called at boot, before anything
 * uses this_machine. */
void cluster_init(void)
{
    has_nic = net_init();
    is_member = has_nic && netframe_identity(net_mac, &this_machine, &node_count) == 0;
    char hex[2 * SIPHASH_KEY_LEN + 2];
    if (bootarg_take("net.key", hex, sizeof hex)) {
        keyed = read_key(hex);
        if (!keyed)
            kprintf("net: net.key is not %d hex digits: no key\n", 2 * SIPHASH_KEY_LEN);
    }
    uint64_t machine, ms, bench;
    if (bootarg_number("net.deaf.machine", &machine) && bootarg_number("net.deaf.ms", &ms) &&
        machine < node_count && machine != this_machine) {
        deaf_machine = (uint32_t)machine;
        deaf_until = machine_clock_ns() + ms * 1000000;
        kprintf("machine %u: frames from machine %lu are dropped for %lu ms (net.deaf)\n", this_machine, machine, ms);
    }
    if (bootarg_number("net.authbench", &bench) && bench)
        auth_bench();
}

/* The value of hex digit c, or -1. */
static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Set the key from exactly 2 * SIPHASH_KEY_LEN hex digits (byte 0 first);
 * 1 if they were, 0 if not. */
static int read_key(const char *hex)
{
    uint8_t bytes[SIPHASH_KEY_LEN];
    for (int i = 0; i < 2 * SIPHASH_KEY_LEN; i++) {
        int v = hex_value(hex[i]);
        if (v < 0)
            return 0;
        bytes[i / 2] = (uint8_t)(i % 2 ? bytes[i / 2] << 4 | v : v);
    }
    if (hex[2 * SIPHASH_KEY_LEN] != 0)
        return 0;
    key = siphash_key_from_bytes(bytes);
    return 1;
}

/* Seal the body frame[0..len) as this node's next frame and send it: 0,
 * or E_QFULL if every transmit buffer is in flight, E_BADREQ without a
 * NIC. */
int cluster_send(const uint8_t *frame, uint32_t len)
{
    uint8_t *buffer = net_frame_buffer();
    if (!buffer)
        return has_nic ? E_QFULL : E_BADREQ;
    netframe_copy(buffer, frame, len);
    return net_send_buffer(buffer, netframe_seal(buffer, len, ++frames_sealed, &key));
}

/* Build the transport's DATA, ACK or GONE frame f in the NIC's buffer,
 * seal it as this node's next frame (a DATA frame's fragment hashed as it
 * is copied in) and send it: as cluster_send. */
int cluster_send_netframe(const struct netframe *f)
{
    uint8_t *buffer = net_frame_buffer();
    if (!buffer)
        return has_nic ? E_QFULL : E_BADREQ;
    if (f->type == NETFRAME_DATA)
        return net_send_buffer(buffer, netframe_build_data_sealed(buffer, f, ++frames_sealed, &key));
    uint32_t body = f->type == NETFRAME_ACK ? netframe_build_ack(buffer, f) : netframe_build_gone(buffer, f);
    return net_send_buffer(buffer, netframe_seal(buffer, body, ++frames_sealed, &key));
}

/* The MAC address of machine m of this cluster (netframe.h). */
static void mac_of(uint32_t m, uint8_t mac[6])
{
    const uint8_t start[6] = { NETFRAME_MAC_PREFIX0, NETFRAME_MAC_PREFIX1, NETFRAME_MAC_PREFIX2,
                               NETFRAME_MAC_PREFIX3, (uint8_t)node_count, (uint8_t)m };
    memcpy(mac, start, 6);
}

/* Send an announcement of `type` to `destination`. */
static void announce(const uint8_t destination[6], uint8_t type, uint32_t receiver_epoch, uint32_t challenge)
{
    struct netframe f = { .machine = this_machine, .node_count = node_count, .epoch = boot_epoch,
                          .receiver_epoch = receiver_epoch, .challenge = challenge };
    memcpy(f.destination, destination, 6);
    memcpy(f.source, net_mac, 6);
    uint8_t frame[NETFRAME_MIN_LEN];
    uint32_t len = netframe_build_announce(frame, &f, type);
    cluster_send(frame, len);   /* if the transmit queue is full, a later announcement will do */
}

/* Send an ANNOUNCE with a fresh challenge to `destination` (one machine,
 * or every one). */
static void challenge(const uint8_t destination[6])
{
    announce(destination, NETFRAME_ANNOUNCE, 0, ++challenges_issued);
}

/* Print the NIC and, if the node is a cluster member with a key,
 * broadcast that it is up. Called at boot once interrupts can be taken. */
void cluster_announce(void)
{
    if (!has_nic)
        return;
    kprintf("net: %02x:%02x:%02x:%02x:%02x:%02x%s\n", net_mac[0], net_mac[1], net_mac[2], net_mac[3],
            net_mac[4], net_mac[5], is_member ? "" : " (not a cluster address: no announcement)");
    if (!is_member)
        return;
    if (!keyed) {
        if (node_count > 1)
            kprintf("net: NO CLUSTER KEY (boot argument net.key=<%d hex digits>): machine %u does not join "
                    "the cluster; it sends no frame and takes none\n", 2 * SIPHASH_KEY_LEN, this_machine);
        return;
    }
    challenge(broadcast_mac);
    if (node_count > 1)
        next_announce = machine_clock_ns() + ANNOUNCE_INTERVAL_NS;
}

/* The timer (remote.c): announce again while some machine is unheard of,
 * and challenge again each machine that has not answered a challenge yet. */
void cluster_tick(uint64_t now)
{
    if (now < next_announce)
        return;
    int again = 0;
    if (peers_known + 1 < node_count) {
        challenge(broadcast_mac);
        again = 1;
    }
    for (uint32_t m = 0; m < node_count; m++) {
        if (peers[m].verifying) {
            uint8_t mac[6];
            mac_of(m, mac);
            challenge(mac);
            again = 1;
        }
    }
    next_announce = again ? now + ANNOUNCE_INTERVAL_NS : UINT64_MAX;
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

/* A frame with a wrong tag: count it, and for the machine its source
 * address names if that is another machine of this cluster. */
static void count_forged(const uint8_t *frame, uint32_t len)
{
    uint32_t machine, count;
    forged_total++;
    if (len >= NETFRAME_ETH_LEN && netframe_identity(frame + 6, &machine, &count) == 0 && count == node_count &&
        machine != this_machine)
        peers[machine].forged++;
    else
        forged_unnamed++;
}

/* A frame from p sent again: count it. */
static void count_replayed(struct peer *p, uint32_t count)
{
    p->replayed += count;
    replayed_total += count;
}

/* Has frame `number` from p (in its believed epoch) been taken already, or
 * is it older than the window? If not, it is taken now. */
static int taken_before(struct peer *p, uint64_t number)
{
    if (number > p->highest) {
        uint64_t ahead = number - p->highest;
        p->taken = (ahead >= WINDOW ? 0 : p->taken << ahead) | 1;
        p->highest = number;
        return 0;
    }
    uint64_t behind = p->highest - number;
    if (behind >= WINDOW || (p->taken >> behind & 1))
        return 1;
    p->taken |= 1ull << behind;
    return 0;
}

/* p announced `epoch`, which is not the one believed: remember the claim
 * until p's answer to a challenge settles it. Beyond CLAIMS different
 * epochs claimed at once, at most one of them true, a further one is
 * counted as replayed at once. */
static void note_claim(struct peer *p, uint32_t epoch)
{
    for (int i = 0; i < CLAIMS; i++) {
        if (p->claims[i].count && p->claims[i].epoch == epoch) {
            p->claims[i].count++;
            return;
        }
    }
    for (int i = 0; i < CLAIMS; i++) {
        if (!p->claims[i].count) {
            p->claims[i] = (struct claim){ epoch, 1 };
            return;
        }
    }
    count_replayed(p, 1);
}

/* p answered a challenge in `epoch`: every announcement that claimed
 * another epoch was replayed. */
static void settle_claims(struct peer *p, uint32_t epoch)
{
    for (int i = 0; i < CLAIMS; i++) {
        if (p->claims[i].count && p->claims[i].epoch != epoch)
            count_replayed(p, p->claims[i].count);
        p->claims[i].count = 0;
    }
}

/* An ANNOUNCE from f->machine: answer it; if its epoch is not the one
 * believed, challenge the machine until it answers. */
static void heard_announce(struct peer *p, const struct netframe *f, int believed)
{
    announce(f->source, NETFRAME_ANNOUNCE_REPLY, f->epoch, f->challenge);
    if (believed)
        return;
    note_claim(p, f->epoch);
    if (!p->verifying) {
        uint8_t mac[6];
        mac_of(f->machine, mac);
        p->verifying = 1;
        challenge(mac);
        if (next_announce == UINT64_MAX)
            next_announce = machine_clock_ns() + ANNOUNCE_INTERVAL_NS;
    }
}

/* An ANNOUNCE_REPLY from f->machine, frame `number`: if it answers an open
 * challenge of this boot, later than the machine's last answer, its epoch
 * is believed from now on (recorded, printed and passed on if new); if
 * not, and its epoch is not the one believed, it was replayed. */
static void heard_reply(struct peer *p, const struct netframe *f, uint64_t number, int believed)
{
    if (f->receiver_epoch != boot_epoch || f->challenge <= p->answered || f->challenge > challenges_issued) {
        if (!believed)
            count_replayed(p, 1);
        return;
    }
    p->answered = f->challenge;
    p->verifying = 0;
    settle_claims(p, f->epoch);
    if (believed)
        return;
    peers_known += !p->known;
    p->known = 1;
    p->epoch = f->epoch;
    p->highest = number;
    p->taken = ~0ull;               /* its frames before this one were sent before its epoch was believed */
    kprintf("machine %u: machine %u is up (epoch %u)\n", this_machine, f->machine, f->epoch);
    remote_peer_up(f->machine, f->epoch);
    notify_machine_up(f->machine, f->epoch);
}

/* A frame arrived (dev/virtio_net.c, from its interrupt). Its seal is
 * checked, then a frame number taken before from its machine's current
 * epoch is refused (the comment at the top says how each is counted).
 * Transport frames go to remote.c; announcements to heard_announce and
 * heard_reply. */
void net_receive(const uint8_t *frame, uint32_t len)
{
    if (!is_member || !keyed || len < NETFRAME_ETH_LEN ||
        (frame[12] << 8 | frame[13]) != NETFRAME_ETHERTYPE) {
        net_counters.rx_drops++;
        return;
    }
    uint64_t number;
    int32_t body = netframe_unseal(frame, len, &key, &number);
    if (body == NETFRAME_E_TAG) {
        count_forged(frame, len);
        return;
    }
    struct netframe f;
    if (body < 0 || netframe_parse(frame, (uint32_t)body, &f) != NETFRAME_OK || f.node_count != node_count ||
        f.machine == this_machine || (f.machine == deaf_machine && machine_clock_ns() < deaf_until)) {
        net_counters.rx_drops++;
        return;
    }
    struct peer *p = &peers[f.machine];
    int believed = p->known && f.epoch == p->epoch;
    if (believed && taken_before(p, number)) {
        count_replayed(p, 1);
        return;
    }
    if (f.type == NETFRAME_DATA || f.type == NETFRAME_ACK || f.type == NETFRAME_GONE)
        remote_frame(&f);
    else if (f.type == NETFRAME_ANNOUNCE)
        heard_announce(p, &f, believed);
    else
        heard_reply(p, &f, number, believed);
}

/* The frames from machine m dropped for a wrong tag and as replayed
 * (netstat). */
void cluster_auth_counters(uint32_t m, uint32_t *forged, uint32_t *replayed)
{
    *forged = m < NETFRAME_MAX_NODES ? peers[m].forged : 0;
    *replayed = m < NETFRAME_MAX_NODES ? peers[m].replayed : 0;
}

/* Print what the seal refused (at halt), if this node is a member with a
 * key: in all, then for each machine that had any. */
void cluster_print_counters(void)
{
    if (!is_member || !keyed)
        return;
    kprintf("net: %lu frames sealed; dropped %lu with a wrong tag (%lu naming no other machine), %lu replayed\n",
            frames_sealed, forged_total, forged_unnamed, replayed_total);
    for (uint32_t m = 0; m < node_count; m++)
        if (peers[m].forged || peers[m].replayed)
            kprintf("net: from machine %u: %u with a wrong tag, %u replayed\n", m, peers[m].forged,
                    peers[m].replayed);
}

/* net.authbench=1: print BENCH lines for the instructions that sealing a
 * frame and checking its seal take together (netframe_seal and
 * netframe_unseal, as net_receive and cluster_send call them), for a
 * frame of Ethernet's least and greatest lengths: the average of ROUNDS
 * each, exact under -icount. Called at boot, before anything else runs. */
static void auth_bench(void)
{
    enum { ROUNDS = 100 };
    static uint8_t frame[NETFRAME_MAX_LEN] __attribute__((aligned(8)));
    static const uint32_t lengths[] = { NETFRAME_MIN_LEN, NETFRAME_MAX_LEN };
    static const char *const names[] = { "frame_auth_min_instr", "frame_auth_instr" };
    struct siphash_key bench_key = keyed ? key : (struct siphash_key){ 1, 2 };
    uint8_t *at = frame;            /* where frames are: on a word boundary (virtio_net.c) */
    for (int i = 0; i < 2; i++) {
        uint32_t body = lengths[i] - NETFRAME_SEAL_LEN, good = 0;
        uint64_t number, start = read_instret();
        for (uint32_t round = 0; round < ROUNDS; round++) {
            netframe_seal(at, body, round + 1, &bench_key);
            good += netframe_unseal(at, body + NETFRAME_SEAL_LEN, &bench_key, &number) == (int32_t)body;
        }
        uint64_t spent = read_instret() - start;
        kprintf("BENCH %s %lu instructions (seal and check of a %u-byte frame; %u of %u good)\n", names[i],
                spent / ROUNDS, lengths[i], good, ROUNDS);
    }
}
