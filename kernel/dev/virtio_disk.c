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
 *
 * A modeled service time (the boot argument disk.service_us=N, for
 * measurements: scripts/fsrun.py): a request to disk 0, the file system's,
 * is answered no sooner than N us of machine time after it started. The
 * emulated disk is a host file, answered in host time: under -icount the
 * machine's clock follows host time while the machine idles and executed
 * instructions while it runs, so without a service time the same disk
 * wait looks several times longer on an idle machine than on a busy one,
 * and a trace depends on what shares the disk's machine
 * (docs/fs-predict.md). With a service time above the host's latency, and
 * the machine running rather than idle while it waits
 * (disk_wait_by_running), every request takes the same machine time.
 */
#include "defs.h"
#include "virtio.h"

#define REG(d, off) VIRTIO_REG((d)->base, off)
#define BLK_IN   0                      /* read from the disk */
#define BLK_OUT  1                      /* write to the disk */
#define SECTORS_PER_BLOCK (DM_DISK_BLOCK / 512)

#define SLOTS (VIRTQ_SIZE / 3)          /* requests in flight per disk */

struct request {
    int      busy;
    int      write;
    uint64_t offset;                    /* in the attached area */
    int      reply_slot;                /* kernel link slot of the reply link */
    struct { uint32_t type, reserved; uint64_t sector; } header;
    uint8_t  status;
    uint8_t *bounce;                    /* a page */
    uint64_t due;                       /* with a service time: answered no sooner (machine ns) */
    int      done;                      /* the device is done; the answer waits for `due` */
};

struct disk {
    uintptr_t base;
    int irq;
    uint64_t blocks;
    struct virtq *queue;                /* one page */
    int area_slot;                      /* kernel link slot of the attached area, or -1 */
    struct request requests[SLOTS];
};

static struct disk disks[DM_MAX_DISKS];
static int ndisks;
/* Requests the device is done with whose answers wait for their `due`
 * (disk_tick). While there are none, disk_next_time, which the clock asks
 * at every kernel exit, looks no further. */
static int delayed;
static uint64_t service_ns;             /* disk 0's modeled service time; 0: none */

int disk_count(void)
{
    return ndisks;
}

static int disk_setup(struct disk *d)
{
    if (virtio_start(d->base, 0) < 0 || !(d->queue = page_alloc()))   /* no optional features */
        return -1;
    for (int i = 0; i < SLOTS; i++)
        if (!(d->requests[i].bounce = page_alloc()))
            return -1;
    if (virtio_queue_setup(d->base, 0, d->queue) < 0)
        return -1;
    uint64_t sectors = (uint64_t)REG(d, CONFIG) | ((uint64_t)REG(d, CONFIG + 4) << 32);
    d->blocks = sectors / SECTORS_PER_BLOCK;
    d->area_slot = -1;
    virtio_driver_ok(d->base);
    return 0;
}

/* Find every virtio block device, in command-line order (virtio_next):
 * disk 0 is the first disk given, which holds the file system. Returns how
 * many there are. */
int disk_init(void)
{
    for (int slot = virtio_next(VIRTIO_MMIO_COUNT, VIRTIO_DEVICE_BLK); slot >= 0 && ndisks < DM_MAX_DISKS;
         slot = virtio_next(slot, VIRTIO_DEVICE_BLK)) {
        struct disk *d = &disks[ndisks];
        d->base = virtio_base(slot);
        d->irq = 1 + slot;
        if (disk_setup(d) < 0) {
            kprintf("disk at %p: set-up failed\n", d->base);
            continue;
        }
        plic_enable(d->irq);
        kprintf("disk %d: %lu blocks of %u bytes\n", ndisks, d->blocks, DM_DISK_BLOCK);
        ndisks++;
    }
    uint64_t us;
    if (ndisks > 0 && bootarg_number("disk.service_us", &us) && us > 0) {
        service_ns = us * 1000;
        kprintf("disk 0: every request takes at least %lu us (disk.service_us)\n", us);
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
    r->done = 0;
    r->due = 0;
    if (d == &disks[0] && service_ns)         /* on a tick, when the timer can fire */
        r->due = (machine_clock_ns() + service_ns + NS_PER_TICK - 1) / NS_PER_TICK * NS_PER_TICK;

    struct virtq_desc *desc = d->queue->desc;
    int head = 3 * slot;
    desc[head] = (struct virtq_desc){ (uint64_t)&r->header, sizeof r->header, VIRTQ_DESC_NEXT, (uint16_t)(head + 1) };
    desc[head + 1] = (struct virtq_desc){ (uint64_t)r->bounce, DM_DISK_BLOCK,
                                          (uint16_t)(VIRTQ_DESC_NEXT | (write ? 0 : VIRTQ_DESC_WRITE)),
                                          (uint16_t)(head + 2) };
    desc[head + 2] = (struct virtq_desc){ (uint64_t)&r->status, 1, VIRTQ_DESC_WRITE, 0 };
    virtq_post(d->queue, (uint16_t)head);
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
    if (r->done)
        delayed--;
    kernel_reply_slot(r->reply_slot, r->write ? KOP_DISK_WRITE : KOP_DISK_READ, status, 0, 0, 0);
}

void disk_interrupt(int irq)
{
    for (int i = 0; i < ndisks; i++) {
        struct disk *d = &disks[i];
        if (d->irq != irq)
            continue;
        REG(d, INTERRUPT_ACK) = REG(d, INTERRUPT_STATUS) & 3;
        __sync_synchronize();
        uint32_t head, len;
        int waiting = 0;
        while (virtq_take_used(d->queue, &head, &len)) {
            if (head % 3 != 0 || head / 3 >= SLOTS || !d->requests[head / 3].busy)
                continue;
            struct request *r = &d->requests[head / 3];
            if (r->due && machine_clock_ns() < r->due) {
                r->done = 1;          /* answered by disk_tick */
                delayed++;
                waiting = 1;
            } else {
                disk_finish(d, r);
            }
        }
        if (waiting)
            timer_program();
    }
}

/* The clock: answer the requests whose service time is up. */
void disk_tick(uint64_t now)
{
    for (int i = 0; i < ndisks; i++)
        for (int k = 0; k < SLOTS; k++) {
            struct request *r = &disks[i].requests[k];
            if (r->busy && r->done && now >= r->due)
                disk_finish(&disks[i], r);
        }
}

/* Whether the machine, idle, should wait for disk 0 by running instead of
 * in wfi: with a modeled service time, while a request is under way. Under
 * -icount an idle machine's clock follows host time, and QEMU wakes it for
 * the answer's timer tens of microseconds late, and later still on a busy
 * host; a running machine's clock counts instructions, so the timer fires
 * exactly on time. It costs a host processor while the disk works. */
int disk_wait_by_running(void)
{
    if (!service_ns)
        return 0;
    for (int k = 0; k < SLOTS; k++)
        if (disks[0].requests[k].busy)
            return 1;
    return 0;
}

/* When disk_tick has an answer to give next (UINT64_MAX: none). */
uint64_t disk_next_time(void)
{
    uint64_t soonest = UINT64_MAX;
    for (int i = 0; i < ndisks && delayed; i++)
        for (int k = 0; k < SLOTS; k++) {
            const struct request *r = &disks[i].requests[k];
            if (r->busy && r->done && r->due < soonest)
                soonest = r->due;
        }
    return soonest;
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
