/*
 * virtio_disk.c — virtio-blk disks over virtio-mmio (version 2, "modern"),
 * interrupt-driven, any number of them (one per virtio-mmio transport that
 * holds a block device).
 *
 * A disk is reached only over its device link (demos.h, KLINK_DISK), which
 * the process manager hands to the one server that owns the disk. That
 * server attaches a data area once (KOP_DISK_ATTACH); each read or write
 * names a block and an offset in that area. The device transfers through a
 * kernel page (a bounce buffer): data moves between it and the owner's area
 * as MOVEDATA would, so the device never writes into a process's memory,
 * which could be freed while a transfer is in flight.
 *
 * Several requests may be in flight per disk; each uses three descriptors
 * (header, data, status) and is answered over its CALL's reply link when the
 * device reports it done.
 */
#include "defs.h"

#define MMIO_BASE   0x10001000UL   /* eight transports, 0x1000 apart, IRQs 1..8 */
#define MMIO_COUNT  8
#define REG(d, off) (*(volatile uint32_t *)((d)->base + (off)))
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
#define VIRTIO_DEVICE_BLK 2
#define DESC_NEXT  1
#define DESC_WRITE 2                    /* the device writes this buffer */
#define BLK_IN   0                      /* read from the disk */
#define BLK_OUT  1                      /* write to the disk */
#define SECTORS_PER_BLOCK (DM_DISK_BLOCK / 512)

#define QUEUE_SIZE 16
#define SLOTS      (QUEUE_SIZE / 3)     /* requests in flight per disk */

struct descriptor { uint64_t addr; uint32_t len; uint16_t flags, next; };
struct queue {                          /* one page, zeroed */
    struct descriptor desc[QUEUE_SIZE];
    struct { uint16_t flags, idx, ring[QUEUE_SIZE], used_event; } avail;
    uint8_t pad[64];
    struct { uint16_t flags, idx; struct { uint32_t id, len; } ring[QUEUE_SIZE]; } used;
};

struct request {
    int      busy;
    int      write;
    uint64_t offset;                    /* in the attached area */
    int      reply_slot;                /* kernel link slot of the reply link */
    struct { uint32_t type, reserved; uint64_t sector; } header;
    uint8_t  status;
    uint8_t *bounce;                    /* a page */
};

struct disk {
    uintptr_t base;
    int irq;
    uint64_t blocks;
    struct queue *queue;
    uint16_t last_used;
    int area_slot;                      /* kernel link slot of the attached area, or -1 */
    struct request requests[SLOTS];
};

static struct disk disks[DM_MAX_DISKS];
static int ndisks;

static int disk_setup(struct disk *d)
{
    REG(d, STATUS) = 0;
    REG(d, STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER;
    REG(d, DRIVER_FEATURES_SEL) = 0;
    REG(d, DRIVER_FEATURES) = 0;        /* nothing optional */
    REG(d, DRIVER_FEATURES_SEL) = 1;
    REG(d, DRIVER_FEATURES) = 1;        /* VIRTIO_F_VERSION_1 (bit 32) */
    REG(d, STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK;
    if (!(REG(d, STATUS) & STATUS_FEATURES_OK))
        return -1;
    REG(d, QUEUE_SEL) = 0;
    if (REG(d, QUEUE_READY) || REG(d, QUEUE_NUM_MAX) < QUEUE_SIZE)
        return -1;
    if (!(d->queue = page_alloc()))
        return -1;
    for (int i = 0; i < SLOTS; i++)
        if (!(d->requests[i].bounce = page_alloc()))
            return -1;
    REG(d, QUEUE_NUM) = QUEUE_SIZE;
    uint64_t desc = (uint64_t)d->queue->desc, avail = (uint64_t)&d->queue->avail;
    uint64_t used = (uint64_t)&d->queue->used;
    REG(d, QUEUE_DESC_LOW) = (uint32_t)desc;
    REG(d, QUEUE_DESC_HIGH) = (uint32_t)(desc >> 32);
    REG(d, QUEUE_DRIVER_LOW) = (uint32_t)avail;
    REG(d, QUEUE_DRIVER_HIGH) = (uint32_t)(avail >> 32);
    REG(d, QUEUE_DEVICE_LOW) = (uint32_t)used;
    REG(d, QUEUE_DEVICE_HIGH) = (uint32_t)(used >> 32);
    REG(d, QUEUE_READY) = 1;
    uint64_t sectors = (uint64_t)REG(d, CONFIG) | ((uint64_t)REG(d, CONFIG + 4) << 32);
    d->blocks = sectors / SECTORS_PER_BLOCK;
    d->area_slot = -1;
    REG(d, STATUS) = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK;
    return 0;
}

/* Find every virtio block device; returns how many there are. QEMU's virt
 * machine gives the first -device on its command line the highest
 * transport, so the slots are searched from the top down: disk 0 is the
 * first disk given, which holds the file system. */
int disk_init(void)
{
    for (int i = MMIO_COUNT - 1; i >= 0 && ndisks < DM_MAX_DISKS; i--) {
        struct disk *d = &disks[ndisks];
        d->base = MMIO_BASE + 0x1000UL * i;
        d->irq = 1 + i;
        if (REG(d, MAGIC) != VIRTIO_MAGIC || REG(d, VERSION) != 2 || REG(d, DEVICE_ID) != VIRTIO_DEVICE_BLK)
            continue;
        if (disk_setup(d) < 0) {
            kprintf("disk at %p: set-up failed\n", d->base);
            continue;
        }
        plic_enable(d->irq);
        kprintf("disk %d: %lu blocks of %u bytes\n", ndisks, d->blocks, DM_DISK_BLOCK);
        ndisks++;
    }
    return ndisks;
}

/* The attached area's owner and the address of [offset, offset+block). */
static int area_address(struct disk *d, uint64_t offset, struct proc **owner, uint64_t *address)
{
    if (d->area_slot < 0)
        return E_NOAREA;
    struct link *l = &kernel_proc->links[d->area_slot];
    if (offset > l->area_len || DM_DISK_BLOCK > l->area_len - offset)
        return E_BOUNDS;
    if (!(*owner = proc_lookup(l->dest)))
        return E_DEAD;
    *address = l->area_addr + offset;
    return 0;
}

/* Start a transfer; the answer goes over `reply` when the device is done. */
static int64_t disk_start(struct disk *d, int write, uint64_t block, uint64_t offset, struct link *reply)
{
    if (block >= d->blocks)
        return E_BOUNDS;
    struct proc *owner;
    uint64_t address;
    int err = area_address(d, offset, &owner, &address);
    if (err)
        return err;
    int slot = 0;
    while (slot < SLOTS && d->requests[slot].busy)
        slot++;
    if (slot == SLOTS)
        return E_QFULL;
    struct request *r = &d->requests[slot];
    if (write && (err = copy_in(owner, r->bounce, address, DM_DISK_BLOCK)))
        return err;
    if ((r->reply_slot = link_install(kernel_proc, reply)) < 0)
        return E_LINKFULL;
    r->busy = 1;
    r->write = write;
    r->offset = offset;
    r->header.type = write ? BLK_OUT : BLK_IN;
    r->header.reserved = 0;
    r->header.sector = block * SECTORS_PER_BLOCK;
    r->status = 0xff;

    struct descriptor *desc = d->queue->desc;
    int head = 3 * slot;
    desc[head] = (struct descriptor){ (uint64_t)&r->header, sizeof r->header, DESC_NEXT, (uint16_t)(head + 1) };
    desc[head + 1] = (struct descriptor){ (uint64_t)r->bounce, DM_DISK_BLOCK,
                                          (uint16_t)(DESC_NEXT | (write ? 0 : DESC_WRITE)), (uint16_t)(head + 2) };
    desc[head + 2] = (struct descriptor){ (uint64_t)&r->status, 1, DESC_WRITE, 0 };
    struct queue *q = d->queue;
    q->avail.ring[q->avail.idx % QUEUE_SIZE] = (uint16_t)head;
    __sync_synchronize();
    q->avail.idx++;
    __sync_synchronize();
    REG(d, QUEUE_NOTIFY) = 0;
    return 0;
}

/* The device finished request r: move a read block to the area, answer. */
static void disk_finish(struct disk *d, struct request *r)
{
    int64_t status = r->status == 0 ? 0 : E_BADREQ;   /* the device refused it */
    if (status == 0 && !r->write) {
        struct proc *owner;
        uint64_t address;
        status = area_address(d, r->offset, &owner, &address);
        if (status == 0)
            status = copy_out(owner, address, r->bounce, DM_DISK_BLOCK);
    }
    r->busy = 0;
    kernel_reply_slot(r->reply_slot, status, 0, 0, 0);
}

void disk_interrupt(int irq)
{
    for (int i = 0; i < ndisks; i++) {
        struct disk *d = &disks[i];
        if (d->irq != irq)
            continue;
        REG(d, INTERRUPT_ACK) = REG(d, INTERRUPT_STATUS) & 3;
        __sync_synchronize();
        while (d->last_used != *(volatile uint16_t *)&d->queue->used.idx) {
            uint32_t head = d->queue->used.ring[d->last_used % QUEUE_SIZE].id;
            d->last_used++;
            if (head % 3 == 0 && head / 3 < SLOTS && d->requests[head / 3].busy)
                disk_finish(d, &d->requests[head / 3]);
        }
    }
}

/* A request over the device link of disk `index`. Sets *later when the
 * answer will come from disk_interrupt. */
int64_t disk_request(unsigned index, struct dm_kreq *q, struct link *pass, struct link *reply,
                     uint64_t *value, int *later)
{
    if (index >= (unsigned)ndisks)
        return E_BADREQ;
    struct disk *d = &disks[index];
    switch (q->op) {
    case KOP_DISK_INFO:
        *value = d->blocks;
        return 0;
    case KOP_DISK_ATTACH: {
        if (!pass || !(pass->flags & LINK_READ) || !(pass->flags & LINK_WRITE))
            return pass ? E_RIGHTS : E_BADREQ;
        int slot = link_install(kernel_proc, pass);
        if (slot < 0)
            return E_LINKFULL;
        link_clear(pass);
        if (d->area_slot >= 0)
            link_drop(&kernel_proc->links[d->area_slot]);
        d->area_slot = slot;
        return 0;
    }
    case KOP_DISK_READ:
    case KOP_DISK_WRITE: {
        if (!reply)
            return E_BADREQ;
        int64_t err = disk_start(d, q->op == KOP_DISK_WRITE, (uint64_t)q->arg[0], (uint64_t)q->arg[1], reply);
        if (err == 0)
            *later = 1;
        return err;
    }
    }
    return E_NOSYS;
}
