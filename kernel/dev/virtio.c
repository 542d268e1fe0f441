/*
 * virtio.c — the virtio-mmio handshake and split virtqueues, shared by the
 * disk and network drivers (virtio.h).
 */
#include "defs.h"
#include "virtio.h"

#define VIRTIO_MAGIC 0x74726976u   /* "virt" */

enum { STATUS_ACKNOWLEDGE = 1, STATUS_DRIVER = 2, STATUS_DRIVER_OK = 4, STATUS_FEATURES_OK = 8 };

int virtio_next(int below, uint32_t device)
{
    for (int slot = below - 1; slot >= 0; slot--) {
        uintptr_t base = virtio_base(slot);
        if (VIRTIO_REG(base, MAGIC) == VIRTIO_MAGIC && VIRTIO_REG(base, VERSION) == 2 &&
            VIRTIO_REG(base, DEVICE_ID) == device)
            return slot;
    }
    return -1;
}

int virtio_start(uintptr_t base, uint32_t wanted)
{
    VIRTIO_REG(base, STATUS) = 0;
    VIRTIO_REG(base, STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER;
    VIRTIO_REG(base, DEVICE_FEATURES_SEL) = 0;
    if ((VIRTIO_REG(base, DEVICE_FEATURES) & wanted) != wanted)
        return -1;
    VIRTIO_REG(base, DRIVER_FEATURES_SEL) = 0;
    VIRTIO_REG(base, DRIVER_FEATURES) = wanted;
    VIRTIO_REG(base, DRIVER_FEATURES_SEL) = 1;
    VIRTIO_REG(base, DRIVER_FEATURES) = 1;   /* VIRTIO_F_VERSION_1 (bit 32) */
    VIRTIO_REG(base, STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK;
    return VIRTIO_REG(base, STATUS) & STATUS_FEATURES_OK ? 0 : -1;
}

int virtio_queue_setup(uintptr_t base, int n, struct virtq *q)
{
    VIRTIO_REG(base, QUEUE_SEL) = (uint32_t)n;
    if (VIRTIO_REG(base, QUEUE_READY) || VIRTIO_REG(base, QUEUE_NUM_MAX) < VIRTQ_SIZE)
        return -1;
    VIRTIO_REG(base, QUEUE_NUM) = VIRTQ_SIZE;
    uint64_t desc = (uint64_t)q->desc, avail = (uint64_t)&q->avail, used = (uint64_t)&q->used;
    VIRTIO_REG(base, QUEUE_DESC_LOW) = (uint32_t)desc;
    VIRTIO_REG(base, QUEUE_DESC_HIGH) = (uint32_t)(desc >> 32);
    VIRTIO_REG(base, QUEUE_DRIVER_LOW) = (uint32_t)avail;
    VIRTIO_REG(base, QUEUE_DRIVER_HIGH) = (uint32_t)(avail >> 32);
    VIRTIO_REG(base, QUEUE_DEVICE_LOW) = (uint32_t)used;
    VIRTIO_REG(base, QUEUE_DEVICE_HIGH) = (uint32_t)(used >> 32);
    VIRTIO_REG(base, QUEUE_READY) = 1;
    return 0;
}

void virtio_driver_ok(uintptr_t base)
{
    VIRTIO_REG(base, STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK;
}

void virtq_post(struct virtq *q, uint16_t head)
{
    q->avail.ring[q->avail.idx % VIRTQ_SIZE] = head;
    __sync_synchronize();   /* the entry before the index that publishes it */
    q->avail.idx++;
    __sync_synchronize();
}

int virtq_take_used(struct virtq *q, uint32_t *head, uint32_t *len)
{
    if (q->last_used == *(volatile uint16_t *)&q->used.idx)
        return 0;
    __sync_synchronize();   /* the index before the entry it publishes */
    *head = q->used.ring[q->last_used % VIRTQ_SIZE].id;
    *len = q->used.ring[q->last_used % VIRTQ_SIZE].len;
    q->last_used++;
    return 1;
}
