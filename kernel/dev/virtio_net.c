/*
 * virtio_net.c — the network card: one virtio-net device over virtio-mmio
 * (version 2, "modern"), carrying raw Ethernet frames, driven by interrupts.
 *
 * Queue 0 receives: every one of its buffers is kept posted to the device,
 * and each is posted again as soon as the frame in it has been handed to
 * net_receive (net/cluster.c), from the interrupt handler. Queue 1 transmits:
 * net_send copies a frame into a free buffer and notifies the device; the
 * buffers the device has used are taken back lazily (on the next send, or
 * by net_drain), so transmission costs no interrupt.
 *
 * No offloads and no mergeable buffers are negotiated: every frame arrives
 * whole in one buffer, after a 12-byte virtio-net header that is all zeros
 * when sending.
 */
#include "defs.h"
#include "net/netframe.h"
#include "virtio.h"

#define REG(off) VIRTIO_REG(nic_base, off)
#define FEATURE_MAC       (1u << 5)     /* the device has a MAC address in its config */
#define RX_QUEUE 0
#define TX_QUEUE 1

#define NET_HEADER  12                  /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define BUFFER_SIZE (NET_HEADER + NETFRAME_MAX_LEN)
/* Each buffer begins SLACK bytes into a word-aligned slot, so that the frame
 * after the header starts on a word boundary, and with it every field and
 * a DATA frame's payload (netframe.h), like the transport's own frames and
 * blocks: fields are read with one load, fragments copied and frames
 * hashed a word at a time. */
#define SLACK       4
#define BUFFER_STRIDE 1536
#define DRAIN_LIMIT_NS 1000000000ULL    /* 1 s */


static uintptr_t nic_base;              /* 0: no NIC */
static int nic_irq;
static struct virtq rx_queue __attribute__((aligned(4096)));
static struct virtq tx_queue __attribute__((aligned(4096)));
static uint8_t rx_slots[VIRTQ_SIZE][BUFFER_STRIDE] __attribute__((aligned(8)));
static uint8_t tx_slots[VIRTQ_SIZE][BUFFER_STRIDE] __attribute__((aligned(8)));
#define rx_buffer(i) (rx_slots[i] + SLACK)
#define tx_buffer(i) (tx_slots[i] + SLACK)
_Static_assert(SLACK + BUFFER_SIZE <= BUFFER_STRIDE && BUFFER_STRIDE % 8 == 0, "buffer slots");
_Static_assert((SLACK + NET_HEADER) % 8 == 0 && (NETFRAME_ETH_LEN + NETFRAME_DATA_HEADER_LEN) % 8 == 0,
               "frames and payloads word-aligned");
static uint8_t tx_busy[VIRTQ_SIZE];     /* buffer given to the device, not yet used */
static uint32_t tx_in_flight;

uint8_t net_mac[6];
struct net_counters net_counters;

/* Negotiate features (the MAC only), set up both queues, read the MAC and
 * post every receive buffer; -1 if the device refuses. */
static int nic_setup(void)
{
    if (virtio_start(nic_base, FEATURE_MAC) < 0 || virtio_queue_setup(nic_base, RX_QUEUE, &rx_queue) < 0 ||
        virtio_queue_setup(nic_base, TX_QUEUE, &tx_queue) < 0)
        return -1;
    for (int i = 0; i < 6; i++)
        net_mac[i] = *(volatile uint8_t *)(nic_base + CONFIG + i);
    tx_queue.avail.flags = VIRTQ_AVAIL_NO_INTERRUPT;
    for (uint16_t i = 0; i < VIRTQ_SIZE; i++) {
        rx_queue.desc[i] = (struct virtq_desc){ (uint64_t)rx_buffer(i), BUFFER_SIZE, VIRTQ_DESC_WRITE, 0 };
        virtq_post(&rx_queue, i);
    }
    virtio_driver_ok(nic_base);
    REG(QUEUE_NOTIFY) = RX_QUEUE;
    return 0;
}

/* Find the NIC and start it; 1 if there is one, 0 if not. Like disk_init,
 * the slots are searched from the top down: the first NIC on QEMU's
 * command line is the one used. Called at boot before processes exist. */
int net_init(void)
{
    for (int i = virtio_next(VIRTIO_MMIO_COUNT, VIRTIO_DEVICE_NET); i >= 0; i = virtio_next(i, VIRTIO_DEVICE_NET)) {
        nic_base = virtio_base(i);
        if (nic_setup() < 0) {
            kprintf("net at %p: set-up failed\n", nic_base);
            continue;
        }
        nic_irq = 1 + i;
        plic_enable(nic_irq);
        return 1;
    }
    nic_base = 0;
    return 0;
}

/* Take back the transmit buffers the device has used. */
static void tx_reclaim(void)
{
    uint32_t id, len;
    while (virtq_take_used(&tx_queue, &id, &len)) {
        if (id < VIRTQ_SIZE && tx_busy[id]) {
            tx_busy[id] = 0;
            tx_in_flight--;
        }
    }
}

/* A free transmit buffer's frame part (after its virtio-net header, 2
 * bytes past a word boundary), to build a frame of up to
 * NETFRAME_MAX_LEN bytes in and send with net_send_buffer; 0 if there is
 * no NIC or every buffer is in flight. Until it is sent, asking again
 * gives the same buffer. */
uint8_t *net_frame_buffer(void)
{
    if (!nic_base)
        return 0;
    tx_reclaim();
    uint16_t id = 0;
    while (id < VIRTQ_SIZE && tx_busy[id])
        id++;
    if (id == VIRTQ_SIZE) {
        net_counters.tx_full++;
        return 0;
    }
    return tx_buffer(id) + NET_HEADER;
}

/* Queue a raw Ethernet frame (destination, source, EtherType, payload; no
 * FCS) for transmission. 0, E_BADREQ if there is no NIC or the frame is
 * too long, E_QFULL if every transmit buffer is in flight. */
int net_send(const void *frame, uint32_t len)
{
    if (!nic_base || len > NETFRAME_MAX_LEN)
        return E_BADREQ;
    uint8_t *buffer = net_frame_buffer();
    if (!buffer)
        return E_QFULL;
    netframe_copy(buffer, frame, len);
    return net_send_buffer(buffer, len);
}

/* Send the frame of len bytes built in net_frame_buffer's buffer. Its
 * virtio-net header is all zeros: static storage that nothing writes. */
int net_send_buffer(uint8_t *frame, uint32_t len)
{
    uintptr_t at = (uintptr_t)(frame - NET_HEADER - SLACK) - (uintptr_t)tx_slots;
    uint32_t id = (uint32_t)(at / BUFFER_STRIDE);
    if (!nic_base || len > NETFRAME_MAX_LEN || at % BUFFER_STRIDE != 0 || id >= VIRTQ_SIZE || tx_busy[id])
        return E_BADREQ;
    tx_queue.desc[id] = (struct virtq_desc){ (uint64_t)tx_buffer(id), NET_HEADER + len, 0, 0 };
    tx_busy[id] = 1;
    tx_in_flight++;
    virtq_post(&tx_queue, id);
    REG(QUEUE_NOTIFY) = TX_QUEUE;
    net_counters.frames_sent++;
    net_counters.bytes_sent += len;
    return 0;
}

/* Wait until the device has sent every frame queued: QEMU transmits
 * later, from its own loop, so a frame queued just before power-off would
 * otherwise be lost. Gives up after DRAIN_LIMIT_NS of machine time, so that
 * a stuck device cannot stop the power-off. Called on the way to power-off
 * only. */
void net_drain(void)
{
    if (!nic_base)
        return;
    uint64_t give_up = machine_clock_ns() + DRAIN_LIMIT_NS;
    tx_reclaim();
    while (tx_in_flight && machine_clock_ns() < give_up)
        tx_reclaim();
    if (tx_in_flight)
        kprintf("net: %u frames not sent at power-off\n", tx_in_flight);
}

/* Whether a frame is for this node: to its MAC or to everyone. The device
 * itself does not filter (it stays promiscuous without a control queue),
 * and a switch floods frames for addresses it has not learnt yet. */
static int addressed_here(const uint8_t *frame)
{
    int mine = 1, broadcast = 1;
    for (int i = 0; i < 6; i++) {
        mine &= frame[i] == net_mac[i];
        broadcast &= frame[i] == 0xff;
    }
    return mine || broadcast;
}

/* Hand every frame received to net_receive and post its buffer again. */
static void rx_deliver(void)
{
    int posted = 0;
    uint32_t id, len;
    while (virtq_take_used(&rx_queue, &id, &len)) {
        if (id >= VIRTQ_SIZE)
            continue;                   /* the device broke the protocol: no buffer to repost */
        const uint8_t *frame = rx_buffer(id) + NET_HEADER;
        if (len < NET_HEADER + NETFRAME_ETH_LEN || len > BUFFER_SIZE) {
            net_counters.rx_drops++;
        } else if (!addressed_here(frame)) {
            net_counters.rx_others++;
        } else {
            net_counters.frames_received++;
            net_counters.bytes_received += len - NET_HEADER;
            net_receive(frame, len - NET_HEADER);
        }
        virtq_post(&rx_queue, (uint16_t)id);
        posted = 1;
    }
    if (posted)
        REG(QUEUE_NOTIFY) = RX_QUEUE;
}

/* The PLIC reported interrupt irq (1..8): if it is the NIC's, take the
 * frames received. Called with interrupts off, from trap.c. */
void net_interrupt(int irq)
{
    if (!nic_base || irq != nic_irq)
        return;
    REG(INTERRUPT_ACK) = REG(INTERRUPT_STATUS) & 3;
    __sync_synchronize();
    rx_deliver();
}

/* Print the counters (at halt), if there is a NIC. */
void net_print_counters(void)
{
    if (!nic_base)
        return;
    kprintf("net: sent %lu frames (%lu bytes), received %lu (%lu bytes), dropped %lu, refused %lu\n",
            net_counters.frames_sent, net_counters.bytes_sent, net_counters.frames_received,
            net_counters.bytes_received, net_counters.rx_drops, net_counters.tx_full);
    if (net_counters.rx_others)
        kprintf("net: %lu frames for other machines ignored (flooded by the switch)\n", net_counters.rx_others);
}
