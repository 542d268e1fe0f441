/*
 * virtio_net.c — the network card: one virtio-net device over virtio-mmio
 * (version 2, "modern"), carrying raw Ethernet frames, driven by interrupts.
 *
 * Queue 0 receives: every one of its buffers is kept posted to the device,
 * and each is posted again as soon as the frame in it has been handed to
 * net_receive (cluster.c), from the interrupt handler. Queue 1 transmits:
 * net_send copies a frame into a free buffer and notifies the device; the
 * buffers the device has used are taken back lazily (on the next send, or
 * by net_drain), so transmission costs no interrupt.
 *
 * No offloads and no mergeable buffers are negotiated: every frame arrives
 * whole in one buffer, after a 12-byte virtio-net header that is all zeros
 * when sending.
 */
#include "defs.h"
#include "netframe.h"

#define MMIO_BASE   0x10001000UL   /* eight transports, 0x1000 apart, IRQs 1..8 */
#define MMIO_COUNT  8
#define REG(off) (*(volatile uint32_t *)(nic_base + (off)))
enum {
    MAGIC = 0x000, VERSION = 0x004, DEVICE_ID = 0x008, DEVICE_FEATURES = 0x010,
    DEVICE_FEATURES_SEL = 0x014, DRIVER_FEATURES = 0x020, DRIVER_FEATURES_SEL = 0x024,
    QUEUE_SEL = 0x030, QUEUE_NUM_MAX = 0x034, QUEUE_NUM = 0x038, QUEUE_READY = 0x044,
    QUEUE_NOTIFY = 0x050, INTERRUPT_STATUS = 0x060, INTERRUPT_ACK = 0x064, STATUS = 0x070,
    QUEUE_DESC_LOW = 0x080, QUEUE_DESC_HIGH = 0x084, QUEUE_DRIVER_LOW = 0x090,
    QUEUE_DRIVER_HIGH = 0x094, QUEUE_DEVICE_LOW = 0x0a0, QUEUE_DEVICE_HIGH = 0x0a4,
    CONFIG = 0x100,
};
enum { STATUS_ACKNOWLEDGE = 1, STATUS_DRIVER = 2, STATUS_DRIVER_OK = 4, STATUS_FEATURES_OK = 8 };
#define VIRTIO_MAGIC      0x74726976u   /* "virt" */
#define VIRTIO_DEVICE_NET 1
#define FEATURE_MAC       (1u << 5)     /* the device has a MAC address in its config */
#define DESC_WRITE        2             /* the device writes this buffer */
#define AVAIL_NO_INTERRUPT 1            /* do not interrupt when using this queue's buffers */
#define RX_QUEUE 0
#define TX_QUEUE 1

#define QUEUE_SIZE  16                  /* buffers per queue */
#define NET_HEADER  12                  /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define BUFFER_SIZE (NET_HEADER + 1514) /* a whole Ethernet frame without FCS */
#define DRAIN_LIMIT_NS 1000000000ULL    /* 1 s */

struct descriptor { uint64_t addr; uint32_t len; uint16_t flags, next; };
struct queue {
    struct descriptor desc[QUEUE_SIZE];
    struct { uint16_t flags, idx, ring[QUEUE_SIZE], used_event; } avail;
    uint8_t pad[64];
    struct { uint16_t flags, idx; struct { uint32_t id, len; } ring[QUEUE_SIZE]; } used;
    uint16_t last_used;                 /* the driver's: used entries handled so far */
};

static uintptr_t nic_base;              /* 0: no NIC */
static int nic_irq;
static struct queue rx_queue __attribute__((aligned(4096)));
static struct queue tx_queue __attribute__((aligned(4096)));
static uint8_t rx_buffers[QUEUE_SIZE][BUFFER_SIZE];
static uint8_t tx_buffers[QUEUE_SIZE][BUFFER_SIZE];
static uint8_t tx_busy[QUEUE_SIZE];     /* buffer given to the device, not yet used */
static uint32_t tx_in_flight;

uint8_t net_mac[6];
struct net_counters net_counters;

/* Give queue n its rings; -1 if the device cannot take QUEUE_SIZE buffers. */
static int queue_setup(int n, struct queue *q)
{
    REG(QUEUE_SEL) = (uint32_t)n;
    if (REG(QUEUE_READY) || REG(QUEUE_NUM_MAX) < QUEUE_SIZE)
        return -1;
    REG(QUEUE_NUM) = QUEUE_SIZE;
    uint64_t desc = (uint64_t)q->desc, avail = (uint64_t)&q->avail, used = (uint64_t)&q->used;
    REG(QUEUE_DESC_LOW) = (uint32_t)desc;
    REG(QUEUE_DESC_HIGH) = (uint32_t)(desc >> 32);
    REG(QUEUE_DRIVER_LOW) = (uint32_t)avail;
    REG(QUEUE_DRIVER_HIGH) = (uint32_t)(avail >> 32);
    REG(QUEUE_DEVICE_LOW) = (uint32_t)used;
    REG(QUEUE_DEVICE_HIGH) = (uint32_t)(used >> 32);
    REG(QUEUE_READY) = 1;
    return 0;
}

/* Put descriptor `id` in q's available ring (the caller notifies). */
static void queue_post(struct queue *q, uint16_t id)
{
    q->avail.ring[q->avail.idx % QUEUE_SIZE] = id;
    __sync_synchronize();
    q->avail.idx++;
    __sync_synchronize();
}

/* Negotiate features (the MAC only), set up both queues, read the MAC and
 * post every receive buffer; -1 if the device refuses. */
static int nic_setup(void)
{
    REG(STATUS) = 0;
    REG(STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER;
    REG(DEVICE_FEATURES_SEL) = 0;
    uint32_t offered = REG(DEVICE_FEATURES);
    REG(DRIVER_FEATURES_SEL) = 0;
    REG(DRIVER_FEATURES) = offered & FEATURE_MAC;
    REG(DRIVER_FEATURES_SEL) = 1;
    REG(DRIVER_FEATURES) = 1;           /* VIRTIO_F_VERSION_1 (bit 32) */
    REG(STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK;
    if (!(REG(STATUS) & STATUS_FEATURES_OK) || !(offered & FEATURE_MAC))
        return -1;
    if (queue_setup(RX_QUEUE, &rx_queue) < 0 || queue_setup(TX_QUEUE, &tx_queue) < 0)
        return -1;
    for (int i = 0; i < 6; i++)
        net_mac[i] = *(volatile uint8_t *)(nic_base + CONFIG + i);
    tx_queue.avail.flags = AVAIL_NO_INTERRUPT;
    for (uint16_t i = 0; i < QUEUE_SIZE; i++) {
        rx_queue.desc[i] = (struct descriptor){ (uint64_t)rx_buffers[i], BUFFER_SIZE, DESC_WRITE, 0 };
        queue_post(&rx_queue, i);
    }
    REG(STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK;
    REG(QUEUE_NOTIFY) = RX_QUEUE;
    return 0;
}

/* Find the NIC and start it; 1 if there is one, 0 if not. Like disk_init,
 * the slots are searched from the top down: the first NIC on QEMU's
 * command line is the one used. Called at boot before processes exist. */
int net_init(void)
{
    for (int i = MMIO_COUNT - 1; i >= 0; i--) {
        nic_base = MMIO_BASE + 0x1000UL * i;
        if (REG(MAGIC) != VIRTIO_MAGIC || REG(VERSION) != 2 || REG(DEVICE_ID) != VIRTIO_DEVICE_NET)
            continue;
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
    while (tx_queue.last_used != *(volatile uint16_t *)&tx_queue.used.idx) {
        __sync_synchronize();
        uint32_t id = tx_queue.used.ring[tx_queue.last_used % QUEUE_SIZE].id;
        tx_queue.last_used++;
        if (id < QUEUE_SIZE && tx_busy[id]) {
            tx_busy[id] = 0;
            tx_in_flight--;
        }
    }
}

/* Queue a raw Ethernet frame (destination, source, EtherType, payload; no
 * FCS) for transmission. 0, E_BADREQ if there is no NIC or the frame is
 * too long, E_QFULL if every transmit buffer is in flight. */
int net_send(const void *frame, uint32_t len)
{
    if (!nic_base || len > BUFFER_SIZE - NET_HEADER)
        return E_BADREQ;
    tx_reclaim();
    uint16_t id = 0;
    while (id < QUEUE_SIZE && tx_busy[id])
        id++;
    if (id == QUEUE_SIZE) {
        net_counters.tx_full++;
        return E_QFULL;
    }
    memset(tx_buffers[id], 0, NET_HEADER);
    memcpy(tx_buffers[id] + NET_HEADER, frame, len);
    tx_queue.desc[id] = (struct descriptor){ (uint64_t)tx_buffers[id], NET_HEADER + len, 0, 0 };
    tx_busy[id] = 1;
    tx_in_flight++;
    queue_post(&tx_queue, id);
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
    while (rx_queue.last_used != *(volatile uint16_t *)&rx_queue.used.idx) {
        __sync_synchronize();
        uint32_t id = rx_queue.used.ring[rx_queue.last_used % QUEUE_SIZE].id;
        uint32_t len = rx_queue.used.ring[rx_queue.last_used % QUEUE_SIZE].len;
        rx_queue.last_used++;
        if (id >= QUEUE_SIZE)
            continue;                   /* the device broke the protocol: no buffer to repost */
        const uint8_t *frame = rx_buffers[id] + NET_HEADER;
        if (len < NET_HEADER + NETFRAME_ETH_LEN || len > BUFFER_SIZE || !addressed_here(frame)) {
            net_counters.rx_drops++;
        } else {
            net_counters.frames_received++;
            net_counters.bytes_received += len - NET_HEADER;
            net_receive(frame, len - NET_HEADER);
        }
        queue_post(&rx_queue, (uint16_t)id);
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
}
