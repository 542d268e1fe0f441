/*
 * virtio_console.c — the live trace channel: a virtio-console device
 * (virtio-mmio, version 2) whose first port the launcher connects to a
 * file on the host (scripts/harness.py, live_channel_args). A filter
 * started with -l streams the blocks of its trace log through it as it
 * writes them, so that the host can watch a run while it goes (`dpm live`,
 * docs/architecture.md, "Where the log goes").
 *
 * Only the host-bound direction is used: transmitq0 (queue 1). The driver
 * does not take VIRTIO_CONSOLE_F_MULTIPORT, so the device has one port and
 * no control queues (Virtio specification §5.3).
 *
 * Like a disk, the channel is reached only over its device link
 * (demos.h, KLINK_LIVE), which the process manager hands to one filter at a
 * time. The filter attaches a data area once (KOP_DISK_ATTACH, read right);
 * each KOP_LIVE_WRITE names an offset and a length in it. The bytes go
 * through a kernel page, as a disk's do, and the answer comes when the
 * device has taken them.
 */
#include "defs.h"
#include "virtio.h"

#define REG(off) VIRTIO_REG(live.base, off)
#define TRANSMITQ 1                     /* transmitq0 */
#define SLOTS 4                         /* writes in flight */

struct live_write {
    int      busy;
    int      reply_slot;                /* kernel link slot of the reply link */
    uint8_t *bounce;                    /* a page */
};

static struct {
    int present;
    uintptr_t base;
    int irq;
    struct virtq *queue;                /* transmitq0, one page */
    int area_slot;                      /* kernel link slot of the attached area, or -1 */
    struct live_write writes[SLOTS];
} live;

/* Find the console device and start it; 1 if there is one, 0 if not. */
int live_init(void)
{
    int slot = virtio_next(VIRTIO_MMIO_COUNT, VIRTIO_DEVICE_CONSOLE);
    if (slot < 0)
        return 0;
    live.base = virtio_base(slot);
    live.irq = 1 + slot;
    live.area_slot = -1;
    if (virtio_start(live.base, 0) < 0 || !(live.queue = page_alloc()))   /* no optional features */
        goto failed;
    for (int i = 0; i < SLOTS; i++)
        if (!(live.writes[i].bounce = page_alloc()))
            goto failed;
    if (virtio_queue_setup(live.base, TRANSMITQ, live.queue) < 0)
        goto failed;
    virtio_driver_ok(live.base);
    plic_enable(live.irq);
    live.present = 1;
    kprintf("live trace channel: virtio console\n");
    return 1;
failed:
    kprintf("live trace channel at %p: set-up failed\n", live.base);
    return 0;
}

/* Queue bytes [offset, offset+len) of the attached area for the host; the
 * answer goes over `reply` when the device has taken them. */
static int64_t live_write(uint64_t offset, uint64_t len, struct link *reply)
{
    if (live.area_slot < 0)
        return E_NOAREA;
    struct link *area = &kernel_proc->links[live.area_slot];
    if (len == 0 || len > PAGE_SIZE || offset > area->area_len || len > area->area_len - offset)
        return E_BOUNDS;
    struct proc *owner = proc_lookup(area->dest);
    if (!owner)
        return E_DEAD;
    int slot = 0;
    while (slot < SLOTS && live.writes[slot].busy)
        slot++;
    if (slot == SLOTS)
        return E_QFULL;
    struct live_write *w = &live.writes[slot];
    int err = copy_in(owner, w->bounce, area->area_addr + offset, len);
    if (err)
        return err;
    if ((w->reply_slot = link_install(kernel_proc, reply)) < 0)
        return E_LINKFULL;
    w->busy = 1;
    live.queue->desc[slot] = (struct virtq_desc){ (uint64_t)w->bounce, (uint32_t)len, 0, 0 };
    virtq_post(live.queue, (uint16_t)slot);
    REG(QUEUE_NOTIFY) = TRANSMITQ;
    return 0;
}

void live_interrupt(int irq)
{
    if (!live.present || irq != live.irq)
        return;
    REG(INTERRUPT_ACK) = REG(INTERRUPT_STATUS) & 3;
    __sync_synchronize();
    uint32_t head, len;
    while (virtq_take_used(live.queue, &head, &len)) {
        if (head < SLOTS && live.writes[head].busy) {
            live.writes[head].busy = 0;
            kernel_reply_slot(live.writes[head].reply_slot, KOP_LIVE_WRITE, 0, len, 0, 0);
        }
    }
}

/* A request over the live channel's device link. Sets *later when the
 * answer will come from live_interrupt. */
int64_t live_request(struct dm_kreq *q, struct link *pass, struct link *reply, int *later)
{
    if (!live.present)
        return E_NOTFOUND;
    switch (q->op) {
    case KOP_DISK_ATTACH: {
        if (!pass || !(pass->flags & LINK_READ))
            return pass ? E_RIGHTS : E_BADREQ;
        int slot = link_install(kernel_proc, pass);
        if (slot < 0)
            return E_LINKFULL;
        link_clear(pass);
        if (live.area_slot >= 0)
            link_drop(&kernel_proc->links[live.area_slot]);
        live.area_slot = slot;
        return 0;
    }
    case KOP_LIVE_WRITE: {
        if (!reply)
            return E_BADREQ;
        int64_t err = live_write((uint64_t)q->arg[0], (uint64_t)q->arg[1], reply);
        if (err == 0)
            *later = 1;
        return err;
    }
    }
    return E_NOSYS;
}

/* Whether this machine has a live trace channel. */
int live_present(void)
{
    return live.present;
}
