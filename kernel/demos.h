/*
 * demos.h — the kernel-call interface of DEMOS/MP on riscv64.
 *
 * This one header is the whole contract between user processes and the kernel:
 * every kernel call, every argument, every error code, and the requests that
 * travel over kernel links. It is included by the kernel and by user programs.
 *
 * A process talks to anything only through LINKS (DEMOS/MP, Powell & Miller).
 * A link is an entry in the process's link table, named by its slot number.
 * It addresses one process (or a kernel), carries a channel and a code chosen
 * by the link's creator, flags, and optionally a data area in the creator's
 * address space that the holder may read and/or write with MOVEDATA.
 *
 * Calling convention: a7 = call number, a0..a6 = arguments, `ecall`;
 * the result comes back in a0: >= 0 on success, a negative dm_error on failure.
 */
#ifndef DEMOS_H
#define DEMOS_H

#include <stdint.h>

/* ---- Kernel calls (a7). This is the complete list. ---------------------- */
enum dm_call {
    /* CREATELINK(channel, code, flags, area_addr, area_len) -> slot
     * Creates a link that addresses the caller itself. A message sent over it
     * arrives with this channel and code. flags: LINK_READ / LINK_WRITE give
     * the holder access to the data area [area_addr, area_addr+area_len) of
     * the caller's memory; LINK_REPLY makes the link usable for one SEND.
     * Errors: E_INVAL (unknown flag bits, or rights without an area, or an
     * area on a link without rights), E_FAULT (the area is not mapped user memory
     * with the requested rights), E_LINKFULL (no free slot). */
    DM_CREATELINK = 1,

    /* DESTROYLINK(slot) -> 0
     * Removes the link from the caller's table. Destroying an unused reply
     * link made by CALL makes that CALL fail with E_NOREPLY.
     * Destroying a used reply link's slot (see E_USED) just clears it.
     * Errors: E_BADSLOT, E_EMPTYSLOT. */
    DM_DESTROYLINK = 2,

    /* DUPLICATELINK(slot) -> new slot holding an identical link.
     * Errors: E_BADSLOT, E_EMPTYSLOT, E_USED, E_INVAL (reply
     * links cannot be duplicated: they are good for one answer), E_LINKFULL. */
    DM_DUPLICATELINK = 3,

    /* SEND(slot, buf, len, pass_slot) -> 0
     * Queues a message of len (<= DM_MSG_MAX) bytes at the link's destination
     * and returns at once. pass_slot >= 0 moves that link into the message:
     * it leaves the caller's table and enters the receiver's (DUPLICATELINK
     * first to keep a copy); DM_NO_LINK (-1) passes nothing. A reply link is
     * used up by its SEND.
     * Errors: E_BADSLOT, E_EMPTYSLOT, E_USED, E_FAULT, E_TOOBIG,
     * E_INVAL (passing the link being sent over), E_DEAD (the destination
     * process is gone), E_QFULL (the receiver has DM_QUEUE_MAX queued),
     * E_NOMEM (the kernel is out of message buffers, or the sender already
     * has DM_SENT_QUEUED_MAX messages waiting in queues on its machine:
     * one process cannot take every buffer from the others). */
    DM_SEND = 4,

    /* RECEIVE(info, buf, cap, channel) -> length of the message's data
     * Blocks until a message arrives whose channel is `channel` (or any
     * channel when channel == DM_ANY_CHANNEL), copies at most cap bytes of it
     * to buf and describes it in *info (sender, channel, code, flags, slot of
     * a passed link). info->length is the whole length; DM_MSG_TRUNCATED is
     * set when it exceeded cap.
     * Errors: E_FAULT (info or buf not writable user memory). */
    DM_RECEIVE = 5,

    /* ARECEIVE(info, buf, cap, channel) -> like RECEIVE, but never blocks.
     * Errors: E_FAULT, E_NOMSG (no matching message is queued). */
    DM_ARECEIVE = 6,

    /* CALL(slot, buf, len, pass_slot, reply_buf, reply_cap, info) -> reply length
     * SEND with a fresh reply link given to the receiver (the receiver sees
     * it in info->reply and answers with one SEND over it), then wait for the
     * answer alone; other messages stay queued. pass_slot passes a link as
     * SEND does, beside the reply link.
     * Errors: those of SEND and RECEIVE, E_NOREPLY (the reply link was
     * destroyed unused: the server dropped it or died). */
    DM_CALL = 7,

    /* MOVEDATA(dst_slot, dst_offset, src_slot, src_offset, len) -> len
     * Copies len bytes from the data area of the src link to the data area of
     * the dst link. Either slot may be DM_SELF: then its offset is an address
     * in the caller's own memory. Needs LINK_READ on src, LINK_WRITE on dst.
     * Errors: E_BADSLOT, E_EMPTYSLOT, E_USED, E_NOAREA (the link
     * has no data area), E_RIGHTS, E_BOUNDS (outside the area), E_FAULT
     * (own memory not mapped or not writable), E_DEAD, E_INVAL (both DM_SELF),
     * E_TOOBIG (len > DM_MOVE_MAX). */
    DM_MOVEDATA = 8,

    /* STOPTASK(status) — ends the calling process; never returns. Its links
     * are destroyed and the process manager is told the exit status. */
    DM_STOPTASK = 9,
};
#define DM_NCALLS 10

/* ---- Error codes: every failing call returns exactly one of these. ----- */
enum dm_error {
    E_OK        =   0,
    E_BADSLOT   =  -1,  /* slot number outside the link table */
    E_EMPTYSLOT =  -2,  /* slot holds no link */
    E_FAULT     =  -3,  /* pointer not in the caller's mapped user memory with the needed access */
    E_TOOBIG    =  -4,  /* message or move longer than allowed */
    E_DEAD      =  -5,  /* the destination process no longer exists */
    E_RIGHTS    =  -6,  /* the link does not grant that access to its data area */
    E_BOUNDS    =  -7,  /* offset and length fall outside the link's data area */
    E_NOAREA    =  -8,  /* the link has no data area */
    E_USED      =  -9,  /* the slot held a reply link that has been used */
    E_NOREPLY   = -10,  /* CALL: the reply link was destroyed without an answer */
    E_NOMSG     = -11,  /* ARECEIVE: nothing matching is queued */
    E_INVAL     = -12,  /* an argument is not valid for this call */
    E_QFULL     = -13,  /* the destination's message queue is full */
    E_NOMEM     = -14,  /* out of memory (kernel buffers, or the process's own limit) */
    E_LINKFULL  = -15,  /* the link table has no free slot */
    E_NOSYS     = -16,  /* no such kernel call, or no such request to a kernel or server */
    E_NOTFOUND  = -17,  /* request: no such program image, process or name */
    E_BADREQ    = -18,  /* request: malformed, or not allowed over this link */
    E_STATE     = -19,  /* request: the process is not in a state that allows it */
    E_NODE      = -20,  /* the destination's machine is down or unreachable (after a bounded wait) */
};
#define DM_NERRORS 21

/* ---- Limits and special values. --------------------------------------- */
#define DM_MSG_MAX      4096        /* bytes of data in one message */
#define DM_MOVE_MAX     (1u << 24)  /* bytes in one MOVEDATA */
#define DM_NLINKS       64          /* slots in a link table */
#define DM_QUEUE_MAX    128         /* messages queued at one process */
#define DM_SENT_QUEUED_MAX 256      /* messages of one sender queued, not yet received, on its machine */
#define DM_NO_LINK      (-1)        /* SEND/CALL: pass no link */
#define DM_SELF         (-2)        /* MOVEDATA: my own memory instead of a link */
#define DM_ANY_CHANNEL  0xffffffffu /* RECEIVE: any channel */
#define DM_REPLY_CHANNEL 0xfffffffeu /* the channel of CALL's reply links */

/* Link flags (CREATELINK). */
#define LINK_READ   0x1u   /* holder may read the data area */
#define LINK_WRITE  0x2u   /* holder may write the data area */
#define LINK_REPLY  0x4u   /* good for one SEND, then used up */

/* Standard slots, filled by the process manager before a process starts. */
#define SLOT_PM          0  /* the process manager; code = this process's id */
#define SLOT_SWITCHBOARD 1  /* the name server */
#define SLOT_CONSOLE     2  /* the console server: standard input and output */

/* The process manager's kernel links, placed by the kernel at boot. */
#define BOOT_SLOT_PROCESS_CONTROL 3
#define BOOT_SLOT_CONSOLE         4  /* handed on to the console server */
#define BOOT_SLOT_TIMER           5  /* handed on to the timer server */
#define BOOT_SLOT_DISK0           6  /* disk i (if present) in slot 6 + i, up to DM_MAX_DISKS */
#define DM_MAX_DISKS              8

/* ---- Process ids. ------------------------------------------------------
 * Global: the machine that created the process, that machine's boot epoch
 * (a rebooted machine's processes are new ones), the slot in its process
 * table, and the slot's generation (a stale link cannot reach a new process).
 * Slot 0 of every machine is its kernel. */
typedef uint64_t dm_pid;
#define PID_MAKE(machine, epoch, slot, gen) \
    (((uint64_t)(machine) << 56) | ((uint64_t)((epoch) & 0xffffff) << 32) | \
     ((uint64_t)((slot) & 0xfff) << 20) | ((uint64_t)(gen) & 0xfffff))
#define PID_MACHINE(p)  ((unsigned)((p) >> 56))
#define PID_EPOCH(p)    ((unsigned)(((p) >> 32) & 0xffffff))
#define PID_SLOT(p)     ((unsigned)(((p) >> 20) & 0xfff))
#define PID_GEN(p)      ((unsigned)((p) & 0xfffff))

/* What RECEIVE, ARECEIVE and CALL tell about the message they return. */
struct dm_msg_info {
    dm_pid   sender;   /* the sending process; a kernel's id when from a kernel */
    uint64_t code;     /* code of the link the message came over */
    uint32_t channel;  /* channel of that link */
    uint32_t flags;    /* DM_MSG_* below */
    int32_t  link;     /* slot of the link passed with the message, or DM_NO_LINK */
    int32_t  reply;    /* slot of the reply link of a CALL, or DM_NO_LINK */
    uint32_t length;   /* the message's whole length in bytes */
    uint32_t reserved;
};
#define DM_MSG_FROM_KERNEL 0x1u  /* sent by a kernel: cannot be forged by a process */
#define DM_MSG_TRUNCATED   0x2u  /* longer than the receive buffer */
#define DM_MSG_LINK_LOST   0x4u  /* a link was passed but the table was full: it was destroyed */

/* ---- Requests over kernel links. ---------------------------------------
 * A kernel link is a link to a kernel (slot 0) whose code says what it
 * authorises. Only a kernel makes them; holding one is the authority.
 * A request is a CALL over the link with a struct dm_kreq (plus data); the
 * reply is a struct dm_kreply (plus data). A link passed with a request
 * leaves the caller's table, as it would going to a process: the requests
 * below that keep it say so, and after any other it is destroyed. */
enum dm_klink_kind {
    KLINK_PROCESS_CONTROL = 1, /* held by the process manager only */
    KLINK_CONSOLE         = 2, /* the UART, held by the console server */
    KLINK_TIMER           = 3, /* the clock, held by the timer server */
    KLINK_DISK            = 4, /* a disk: code = KLINK_DISK | disk index << 8 */
    KLINK_LIVE            = 5, /* the live trace channel to the host (a virtio console) */
};
#define KLINK_KIND(code)  ((code) & 0xff)
#define KLINK_INDEX(code) (((code) >> 8) & 0xff)

enum dm_kop {
    /* process control */
    KOP_CREATE = 1,  /* data: process name NUL, then argc argument strings and envc
                        environment strings, each NUL-ended; arg[0] = argc,
                        arg[1] = envc. The program (a RISC-V ELF executable) is
                        the passed link's data area (read right), or without a
                        passed link the boot image of that name. The process
                        starts with a0 = argc, a1 = argv, a2 = envp. Reply value:
                        the new (stopped) pid. */
    KOP_MOVELINK,    /* pid; arg[0] = slot or -1; the passed link enters pid's table.
                        Reply value: the slot it took. */
    KOP_START,       /* pid: first start of a created process */
    KOP_STOP,        /* pid: suspend; data (optional): the pid on whose behalf */
    KOP_RESUME,      /* pid: continue after KOP_STOP */
    KOP_DESTROY,     /* pid; arg[0] = exit status to report */
    KOP_GROW,        /* pid; arg[0] = signed byte increment of its heap.
                        Reply value: the old break. */
    KOP_PS,          /* arg[0] = first slot; reply data: struct dm_kproc entries from
                        it on; value = count. Slot 0 is the kernel: its proctime
                        is its own work while no process is current (interrupts,
                        scheduling); the time it waits idle in wfi is no one's,
                        so the proctimes add up to every instruction executed */
    KOP_NOTIFY,      /* the passed link receives struct dm_notice messages: when a
                        process of this machine ends, and, if the link leads to a
                        process on this machine, when another machine comes up */
    KOP_HALT,        /* drain the console and power off; arg[0] = exit code */
    KOP_NETSTAT,     /* reply data: a struct dm_kpeer for each other machine this
                        kernel has heard of; value = count */
    KOP_METER,       /* pid; arg[0] = selection flags (METER_FLAG(type) bits, meter/
                        record.h; 0: stop metering it), arg[1] = options (bit 0:
                        lossy; bits 32..: the batches' maximum age in ms, 0 for
                        100); data (optional): the pid on whose behalf (the
                        parent, for its CREATEPROCESS record). The passed link
                        becomes its meter link (required the first time; it
                        may not lead to the process itself or to a kernel).
                        Without one, the flags and options change. */
    KOP_METER_FLUSH, /* send every metered process's batch now; the answer comes
                        when every batch has been taken (or thrown away), or with
                        E_QFULL after arg[0] ms (0: 2,000) if a filter still has
                        not taken everything */
    KOP_DEVICE,      /* arg[0] = disk index, arg[1] = KLINK_DISK (or 0) or
                        KLINK_LIVE: the answer passes a device link to that disk,
                        or to the live trace channel, of this kernel (E_NOTFOUND
                        if there is none), so that the process manager can lend
                        another machine's trace disk and live channel to a filter
                        started there */
    KOP_PROCESS_CONTROL_LAST = KOP_DEVICE,
    /* console */
    KOP_CONS_WRITE,  /* data: bytes to print. Reply when queued; value = count */
    KOP_CONS_READ,   /* arg[0] = max bytes. Reply data: bytes typed (at least one) */
    /* timer */
    KOP_TIME,        /* reply value: wall-clock ns since 1970; arg[0] of reply
                        data (uint64): the machine clock in ns */
    KOP_ALARM,       /* arg[0] = machine-clock ns: reply when that time is reached */
    /* disk (blocks of DM_DISK_BLOCK bytes) */
    KOP_DISK_INFO,   /* reply value: the disk's size in blocks */
    KOP_DISK_ATTACH, /* the passed link's data area (read and write rights) is
                        where blocks are read into and written from; also to the
                        live channel (read right): where KOP_LIVE_WRITE's bytes
                        are taken from */
    KOP_DISK_READ,   /* arg[0] = block, arg[1] = offset in the attached area:
                        reply when the block is there */
    KOP_DISK_WRITE,  /* arg[0] = block, arg[1] = offset in the attached area:
                        reply when the block is on the disk */
    /* live trace channel */
    KOP_LIVE_WRITE,  /* arg[0] = offset in the attached area, arg[1] = bytes (1 to
                        4096): reply when the device has taken them for the host */
};
#define DM_DISK_BLOCK 4096

struct dm_kreq {
    uint32_t op;       /* enum dm_kop */
    uint32_t reserved;
    dm_pid   pid;      /* target process, where the op has one */
    int64_t  arg[2];
    /* data follows */
};

struct dm_kreply {
    int64_t  status;   /* E_OK or an error */
    uint64_t value;
    /* data follows */
};

/* What one kernel knows of another machine, and what its transport has
 * done with it (KOP_NETSTAT; kernel/net/transport.h defines the counters). */
struct dm_kpeer {
    uint32_t machine, epoch;
    uint32_t state;              /* DM_PEER_UP or DM_PEER_DOWN (stopped answering) */
    uint32_t pending;            /* messages to it not yet acknowledged */
    uint32_t messages_sent, messages_delivered, messages_failed;
    uint32_t frames_sent, retransmissions, timeouts;
    uint32_t duplicates_dropped, out_of_order_dropped, stale_dropped;
    uint32_t reserved;
};
#define DM_PEER_UP   1
#define DM_PEER_DOWN 2

/* One process in a KOP_PS reply. */
struct dm_kproc {
    dm_pid   pid;
    char     name[24];
    uint32_t state;      /* enum dm_proc_state */
    uint32_t links;      /* links in its table */
    uint64_t proctime;   /* instructions executed on its behalf */
    uint64_t memory;     /* bytes of user memory */
};

enum dm_proc_state {
    PS_FREE = 0, PS_CREATED, PS_RUNNABLE, PS_RECEIVING, PS_CALLING, PS_STOPPED, PS_KERNEL,
    PS_SENDING,   /* SEND to another machine: waiting until its kernel has the message */
    PS_MOVING,    /* MOVEDATA with an area on another machine: waiting for the copy */
};

/* Exit statuses the kernel gives a process it ends. */
#define DM_EXIT_KILLED (-1000)   /* destroyed by the process manager */
#define DM_EXIT_FAULT  (-1001)   /* a fault: bad memory access, illegal instruction */

/* What the kernel sends over the KOP_NOTIFY link. */
struct dm_notice {
    uint32_t kind;       /* enum dm_notice_kind */
    uint32_t machine;    /* the machine it is about */
    dm_pid   pid;        /* DM_NOTICE_EXIT: the process that ended */
    int64_t  status;     /* DM_NOTICE_EXIT: its exit status */
};
enum dm_notice_kind {
    DM_NOTICE_EXIT = 1,     /* process `pid` ended with `status` */
    DM_NOTICE_MACHINE = 2,  /* `machine` is up (in a new epoch): the message passes a
                               process-control link to its kernel */
};

/* ---- The process's info page: read-only, at DM_INFO_PAGE in every process.
 * The kernel keeps it current, so a process reads its own id and CPU time
 * without a kernel call:
 *   proctime = proctime_base + (rdinstret() - instret_at_switch)            */
#define DM_INFO_PAGE 0x7ffff000UL
struct dm_info {
    dm_pid   pid;
    uint32_t machine;
    uint32_t nodes;
    uint64_t proctime_base;      /* instructions charged up to the last switch-in */
    uint64_t instret_at_switch;  /* instret when this process was last switched in */
    char     name[24];           /* the program it runs */
};

/* The user part of an address space: [DM_USER_BASE, DM_USER_TOP). */
#define DM_USER_BASE 0x40000000UL
#define DM_USER_TOP  0x80000000UL

#endif
