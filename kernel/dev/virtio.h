/*
 * virtio.h — what the virtio drivers (virtio_disk.c, virtio_net.c) share:
 * where QEMU's virt machine puts its virtio-mmio transports, their
 * registers (virtio 1.x, the "modern" mmio layout, Virtio specification
 * §4.2.2), the start-up handshake, and a split virtqueue (§2.7) of
 * VIRTQ_SIZE descriptors with the helpers that post to it and read what the
 * device has used.
 */
#ifndef VIRTIO_H
#define VIRTIO_H

#include <stdint.h>

#define VIRTIO_MMIO_BASE  0x10001000UL   /* eight transports, 0x1000 apart, IRQs 1..8 */
#define VIRTIO_MMIO_COUNT 8
#define VIRTIO_REG(base, off) (*(volatile uint32_t *)((base) + (off)))

enum virtio_register {
    MAGIC = 0x000, VERSION = 0x004, DEVICE_ID = 0x008, DEVICE_FEATURES = 0x010,
    DEVICE_FEATURES_SEL = 0x014, DRIVER_FEATURES = 0x020, DRIVER_FEATURES_SEL = 0x024,
    QUEUE_SEL = 0x030, QUEUE_NUM_MAX = 0x034, QUEUE_NUM = 0x038, QUEUE_READY = 0x044,
    QUEUE_NOTIFY = 0x050, INTERRUPT_STATUS = 0x060, INTERRUPT_ACK = 0x064, STATUS = 0x070,
    QUEUE_DESC_LOW = 0x080, QUEUE_DESC_HIGH = 0x084, QUEUE_DRIVER_LOW = 0x090,
    QUEUE_DRIVER_HIGH = 0x094, QUEUE_DEVICE_LOW = 0x0a0, QUEUE_DEVICE_HIGH = 0x0a4,
    CONFIG = 0x100,                  /* the device's own configuration starts here */
};
#define VIRTIO_DEVICE_NET 1
#define VIRTIO_DEVICE_BLK 2
#define VIRTIO_DEVICE_CONSOLE 3

#define VIRTQ_SIZE       16          /* descriptors per queue */
#define VIRTQ_DESC_NEXT  1           /* the chain goes on at `next` */
#define VIRTQ_DESC_WRITE 2           /* the device writes this buffer */
#define VIRTQ_AVAIL_NO_INTERRUPT 1   /* do not interrupt when using this queue's buffers */

struct virtq_desc { uint64_t addr; uint32_t len; uint16_t flags, next; };

/* A split virtqueue, in one page (4096-byte aligned, zeroed). */
struct virtq {
    struct virtq_desc desc[VIRTQ_SIZE];
    struct { uint16_t flags, idx, ring[VIRTQ_SIZE], used_event; } avail;
    uint8_t pad[64];
    struct { uint16_t flags, idx; struct { uint32_t id, len; } ring[VIRTQ_SIZE]; } used;
    uint16_t last_used;              /* the driver's own: used entries taken so far */
};

/* The next transport below slot `below` (VIRTIO_MMIO_COUNT: the top) that
 * holds a modern device of type `device`; its slot, or -1. QEMU gives the
 * first -device on its command line the highest transport, so searching
 * from the top down finds devices in command-line order. */
int virtio_next(int below, uint32_t device);

/* The base address of transport `slot`; its interrupt is slot + 1. */
static inline uintptr_t virtio_base(int slot)
{
    return VIRTIO_MMIO_BASE + 0x1000UL * (uintptr_t)slot;
}

/* Reset the device at `base` and agree on features: `wanted` (of the
 * first 32 feature bits, all of which the device must offer) and
 * VIRTIO_F_VERSION_1. 0, or -1 if the device refuses. */
int virtio_start(uintptr_t base, uint32_t wanted);

/* Give queue n of the device its rings; -1 if it cannot take VIRTQ_SIZE. */
int virtio_queue_setup(uintptr_t base, int n, struct virtq *q);

/* The driver is ready: the device may start. */
void virtio_driver_ok(uintptr_t base);

/* Make descriptor chain `head` available to the device (the caller then
 * notifies it through QUEUE_NOTIFY). */
void virtq_post(struct virtq *q, uint16_t head);

/* Take the next entry the device has used: 1 with its chain's head and
 * length, or 0 if there is none. */
int virtq_take_used(struct virtq *q, uint32_t *head, uint32_t *len);

#endif
