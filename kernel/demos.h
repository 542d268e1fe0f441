/*
 * demos.h — the kernel-call interface of DEMOS/MP on riscv64.
 *
 * This one header is the whole contract between user processes and the kernel:
 * every kernel call, every argument, every error code, and the requests that
 * travel over kernel links. It is included by the kernel and by user programs,
 * and by user/lib/kcall.S (an assembler file: only the list of calls is
 * visible there, the C declarations are left out).
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

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* ---- Kernel calls (a7). This is the complete list. ----------------------
 *
 * The list is an X-macro: DM_CALLS(X) expands to X(...) once for each call,
 * and whoever needs something for every call defines a macro that makes it
 * from one entry and expands DM_CALLS with that macro. So this one list
 * makes enum dm_call (below), the C prototypes of the calls (user/lib/
 * dmlib.h), their stubs (user/lib/kcall.S), the table of call names and of
 * each call's errors (user/lib/dmlib.c), and the lists cannot disagree. An
 * entry is
 *     X(number, NAME, function, return type, (parameters), errors)
 * number: the call's number, for a7 (enum dm_call: DM_NAME);
 * function, return type, parameters: the C function a user program calls;
 * errors: EVERY error the call can return, as a set of bits (DM_ERRS);
 * user/tests/kfuzz and ktest fail when a call returns an error that its
 * entry does not name.
 * The comment above each entry documents the call: its arguments, its
 * result and why each error happens. (A comment may span lines inside a
 * #define: the preprocessor removes comments before it reads directives.)
 * A call number that is not in the list gives E_NOSYS.
 */
#define DM_CALLS(X) \
    /* CREATELINK(channel, code, flags, area_addr, area_len) -> slot
     * Creates a link that addresses the caller itself. A message sent over it
     * arrives with this channel and code. flags: LINK_READ / LINK_WRITE give
     * the holder access to the data area [area_addr, area_addr+area_len) of
     * the caller's memory; LINK_REPLY makes the link usable for one SEND.
     * Errors: E_INVAL (unknown flag bits, or rights without an area, or an
     * area on a link without rights, or a channel from DM_REPLY_CHANNEL up,
     * which the kernel keeps for CALL's reply links and for RECEIVE's
     * DM_ANY_CHANNEL), E_TOOBIG (area_len > DM_MOVE_MAX), E_FAULT (the area
     * is not mapped user memory with the requested rights), E_LINKFULL (no
     * free slot). */ \
    X(1, CREATELINK, dm_createlink, long, \
      (uint32_t channel, uint64_t code, uint32_t flags, void *area, uint64_t area_len), \
      DM_ERRS(E_INVAL, E_TOOBIG, E_FAULT, E_LINKFULL)) \
    \
    /* DESTROYLINK(slot) -> 0
     * Removes the link from the caller's table. Destroying an unused reply
     * link made by CALL makes that CALL fail with E_NOREPLY.
     * Destroying a used reply link's slot (see E_USED) just clears it.
     * Errors: E_BADSLOT, E_EMPTYSLOT. */ \
    X(2, DESTROYLINK, dm_destroylink, long, (long slot), \
      DM_ERRS(E_BADSLOT, E_EMPTYSLOT)) \
    \
    /* DUPLICATELINK(slot) -> new slot holding an identical link.
     * Errors: E_BADSLOT, E_EMPTYSLOT, E_USED, E_INVAL (reply
     * links cannot be duplicated: they are good for one answer), E_LINKFULL. */ \
    X(3, DUPLICATELINK, dm_duplicatelink, long, (long slot), \
      DM_ERRS(E_BADSLOT, E_EMPTYSLOT, E_USED, E_INVAL, E_LINKFULL)) \
    \
    /* SEND(slot, buf, len, pass_slot) -> 0
     * Queues a message of len (<= DM_MSG_MAX) bytes at the link's destination
     * and returns at once. pass_slot >= 0 moves that link into the message:
     * it leaves the caller's table and enters the receiver's (DUPLICATELINK
     * first to keep a copy); DM_NO_LINK (-1) passes nothing. A reply link is
     * used up by its SEND. A SEND to a process on another machine returns
     * when that machine's kernel has the message.
     * Errors: E_BADSLOT, E_EMPTYSLOT, E_USED (slot or pass_slot), E_FAULT,
     * E_TOOBIG, E_INVAL (passing the link being sent over), E_DEAD (the
     * destination process is gone, or the CALL a reply link answers no
     * longer waits), E_QFULL (the receiver has DM_QUEUE_MAX queued),
     * E_NOMEM (the kernel is out of message buffers, or the sender already
     * has DM_SENT_QUEUED_MAX messages waiting in queues on its machine:
     * one process cannot take every buffer from the others; or, to another
     * machine, the kernel has no room for more work), E_NODE (the
     * destination's machine is down or unreachable).
     * A SEND over a kernel link (a request with no reply link to answer
     * over) returns the request's error as its own: besides those above,
     * E_BADREQ, E_NOSYS, E_NOTFOUND, E_STATE, E_LINKFULL, E_NOAREA, E_RIGHTS
     * (see "Requests over kernel links" below). */ \
    X(4, SEND, dm_send, long, (long slot, const void *buf, uint64_t len, long pass_slot), \
      DM_ERRS(E_BADSLOT, E_EMPTYSLOT, E_USED, E_FAULT, E_TOOBIG, E_INVAL, E_DEAD, E_QFULL, E_NOMEM, E_NODE, \
              E_BADREQ, E_NOSYS, E_NOTFOUND, E_STATE, E_LINKFULL, E_NOAREA, E_RIGHTS)) \
    \
    /* RECEIVE(info, buf, cap, channel) -> length of the message's data
     * Blocks until a message arrives whose channel is `channel` (or any
     * channel when channel == DM_ANY_CHANNEL), copies at most cap bytes of it
     * to buf and describes it in *info (sender, channel, code, flags, slot of
     * a passed link). info->length is the whole length; DM_MSG_TRUNCATED is
     * set when it exceeded cap.
     * Errors: E_FAULT (info or buf not writable user memory). */ \
    X(5, RECEIVE, dm_receive, long, (struct dm_msg_info *info, void *buf, uint64_t cap, uint32_t channel), \
      DM_ERRS(E_FAULT)) \
    \
    /* ARECEIVE(info, buf, cap, channel) -> like RECEIVE, but never blocks.
     * Errors: E_FAULT, E_NOMSG (no matching message is queued). */ \
    X(6, ARECEIVE, dm_areceive, long, (struct dm_msg_info *info, void *buf, uint64_t cap, uint32_t channel), \
      DM_ERRS(E_FAULT, E_NOMSG)) \
    \
    /* CALL(slot, buf, len, pass_slot, reply_buf, reply_cap, info) -> reply length
     * SEND with a fresh reply link given to the receiver (the receiver sees
     * it in info->reply and answers with one SEND over it), then wait for the
     * answer alone; other messages stay queued. pass_slot passes a link as
     * SEND does, beside the reply link. A request over a kernel link is
     * answered over the reply link: its error is the answer's status
     * (struct dm_kreply), not CALL's.
     * Errors: those of SEND's own (E_BADSLOT, E_EMPTYSLOT, E_USED, E_FAULT,
     * E_TOOBIG, E_INVAL, E_DEAD, E_QFULL, E_NOMEM, E_NODE), E_FAULT for
     * reply_buf and info as RECEIVE, E_NOREPLY (the reply link was destroyed
     * unused: the server dropped it or died). */ \
    X(7, CALL, dm_call, long, \
      (long slot, const void *buf, uint64_t len, long pass_slot, void *reply_buf, uint64_t reply_cap, \
       struct dm_msg_info *info), \
      DM_ERRS(E_BADSLOT, E_EMPTYSLOT, E_USED, E_FAULT, E_TOOBIG, E_INVAL, E_DEAD, E_QFULL, E_NOMEM, E_NODE, \
              E_NOREPLY)) \
    \
    /* MOVEDATA(dst_slot, dst_offset, src_slot, src_offset, len) -> len
     * Copies len bytes from the data area of the src link to the data area of
     * the dst link. Either slot may be DM_SELF: then its offset is an address
     * in the caller's own memory. Needs LINK_READ on src, LINK_WRITE on dst.
     * Errors: E_BADSLOT, E_EMPTYSLOT, E_USED, E_NOAREA (the link
     * has no data area), E_RIGHTS, E_BOUNDS (outside the area), E_FAULT
     * (own memory not mapped or not writable, or the area's owner has
     * unmapped it), E_DEAD, E_INVAL (both DM_SELF), E_TOOBIG (len >
     * DM_MOVE_MAX); with an area on another machine, E_NODE (that machine
     * is down or unreachable) and E_NOMEM (the kernel has no room for more
     * work). */ \
    X(8, MOVEDATA, dm_movedata, long, \
      (long dst_slot, uint64_t dst_offset, long src_slot, uint64_t src_offset, uint64_t len), \
      DM_ERRS(E_BADSLOT, E_EMPTYSLOT, E_USED, E_NOAREA, E_RIGHTS, E_BOUNDS, E_FAULT, E_DEAD, E_INVAL, E_TOOBIG, \
              E_NODE, E_NOMEM)) \
    \
    /* STOPTASK(status) — ends the calling process; never returns. Its links
     * are destroyed and the process manager is told the exit status. */ \
    X(9, STOPTASK, dm_stoptask, __attribute__((__noreturn__)) void, (long status), 0)

#ifndef __ASSEMBLER__
enum dm_call {
#define DM_CALL_ENUM(number, name, function, type, parameters, errors) DM_##name = number,
    DM_CALLS(DM_CALL_ENUM)
#undef DM_CALL_ENUM
};
#define DM_NCALLS 10   /* call numbers are 1 .. DM_NCALLS - 1 */

/* ---- Error codes: every failing call returns exactly one of these. -----
 * An X-macro list too: X(value, name, text), text being what dm_error_text
 * says to a user; the comment says what the error means. It makes
 * enum dm_error and the tables of names and texts (user/lib/dmlib.c). */
#define DM_ERRORS(X) \
    X(  0, E_OK,        "no error") \
    X( -1, E_BADSLOT,   "no such slot")                 /* slot number outside the link table */ \
    X( -2, E_EMPTYSLOT, "empty slot")                   /* slot holds no link */ \
    X( -3, E_FAULT,     "bad address")                  /* pointer not in the caller's mapped user
                                                           memory with the needed access */ \
    X( -4, E_TOOBIG,    "too big")                      /* message or move longer than allowed */ \
    X( -5, E_DEAD,      "process is gone")              /* the destination process no longer exists */ \
    X( -6, E_RIGHTS,    "not permitted by the link")    /* the link does not grant that access to its data area */ \
    X( -7, E_BOUNDS,    "outside the data area")        /* offset and length fall outside the link's data area */ \
    X( -8, E_NOAREA,    "link has no data area")        /* the link has no data area */ \
    X( -9, E_USED,      "reply link already used")      /* the slot held a reply link that has been used */ \
    X(-10, E_NOREPLY,   "no reply")                     /* CALL: the reply link was destroyed without an answer */ \
    X(-11, E_NOMSG,     "no message")                   /* ARECEIVE: nothing matching is queued */ \
    X(-12, E_INVAL,     "invalid argument")             /* an argument is not valid for this call */ \
    X(-13, E_QFULL,     "queue full")                   /* the destination's message queue is full */ \
    X(-14, E_NOMEM,     "out of memory")                /* out of memory (kernel buffers, or the
                                                           process's own limit) */ \
    X(-15, E_LINKFULL,  "link table full")              /* the link table has no free slot */ \
    X(-16, E_NOSYS,     "no such call or request")      /* no such kernel call, or no such request
                                                           to a kernel or server */ \
    X(-17, E_NOTFOUND,  "not found")                    /* request: no such program image, process or name */ \
    X(-18, E_BADREQ,    "bad request")                  /* request: malformed, or not allowed over this link */ \
    X(-19, E_STATE,     "wrong state")                  /* request: the process is not in a state that allows it */ \
    X(-20, E_NODE,      "machine down or unreachable")  /* the destination's machine is down or
                                                           unreachable (after a bounded wait) */ \
    X(-21, E_PROCFULL,  "process table full")           /* request: the machine has no free process */ \
    X(-22, E_DISKFULL,  "disk full")                    /* file system: no free block on the disk */ \
    X(-23, E_NAMETOOLONG, "name too long")              /* a name is longer than its table or
                                                           directory entry holds */ \
    X(-24, E_SYSTEM,    "a system process")             /* request: the process manager keeps the
                                                           system's own processes from being ended,
                                                           stopped or metered on request */ \
    X(-25, E_FSDOWN,    "the file system is down")      /* file system: one of its processes is
                                                           gone, or its disk refuses to write */ \
    X(-26, E_NAMESFULL, "name table full")              /* the switchboard has no room for another name */ \
    X(-27, E_DEVICE,    "holds a device link")          /* request: the process holds a link to a kernel
                                                           (a device, or process control), which names
                                                           its machine: it cannot move */

enum dm_error {
#define DM_ERROR_ENUM(value, name, text) name = value,
    DM_ERRORS(DM_ERROR_ENUM)
#undef DM_ERROR_ENUM
};
#define DM_NERRORS 28   /* error values are 0 .. -(DM_NERRORS - 1) */

/* A set of errors, as a call's entry in DM_CALLS names them: bit -e for
 * error e. DM_ERRS(E_BADSLOT, E_FAULT) is the set of those two; it takes up
 * to 20 errors (the rest of its 20 places are filled with E_OK, which adds
 * no bit). */
#define DM_ERROR_BIT(e) ((e) < 0 ? 1u << -(e) : 0u)
#define DM_ERRS(...) DM_ERRS_20(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
#define DM_ERRS_20(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, ...) \
    (DM_ERROR_BIT(a) | DM_ERROR_BIT(b) | DM_ERROR_BIT(c) | DM_ERROR_BIT(d) | DM_ERROR_BIT(e) | \
     DM_ERROR_BIT(f) | DM_ERROR_BIT(g) | DM_ERROR_BIT(h) | DM_ERROR_BIT(i) | DM_ERROR_BIT(j) | \
     DM_ERROR_BIT(k) | DM_ERROR_BIT(l) | DM_ERROR_BIT(m) | DM_ERROR_BIT(n) | DM_ERROR_BIT(o) | \
     DM_ERROR_BIT(p) | DM_ERROR_BIT(q) | DM_ERROR_BIT(r) | DM_ERROR_BIT(s) | DM_ERROR_BIT(t))

/* The lists' own consistency: DM_NERRORS errors with values from 0 down
 * to -(DM_NERRORS - 1), DM_NCALLS - 1 calls with numbers from 1 up to
 * DM_NCALLS - 1 (the tables made from them are indexed by -value and by
 * number; there, a value or number given twice is an error of
 * -Woverride-init). */
#define DM_ERROR_CHECK(value, name, text) \
    _Static_assert(-(value) < DM_NERRORS, #name " is beyond DM_NERRORS");
DM_ERRORS(DM_ERROR_CHECK)
#undef DM_ERROR_CHECK
#define DM_ONE_MORE(...) + 1
_Static_assert(0 DM_ERRORS(DM_ONE_MORE) == DM_NERRORS, "DM_NERRORS is not the number of errors");
_Static_assert(0 DM_CALLS(DM_ONE_MORE) == DM_NCALLS - 1, "DM_NCALLS is not one more than the number of calls");
#undef DM_ONE_MORE
_Static_assert(DM_NERRORS <= 32, "a set of errors is 32 bits");
#define DM_CALL_CHECK(number, name, function, type, parameters, errors) \
    _Static_assert(number > 0 && number < DM_NCALLS, #name "'s number is not in 1 .. DM_NCALLS - 1");
DM_CALLS(DM_CALL_CHECK)
#undef DM_CALL_CHECK

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
_Static_assert(sizeof(struct dm_msg_info) == 40, "struct dm_msg_info is part of the ABI: its size is fixed");
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

/* The requests. Like the calls, they are an X-macro list: DM_KOPS(X)
 * expands to X(...) once for each request, and makes enum dm_kop (below),
 * the kernel's check of every answer (kernel/kreq.c, check_answer) and the
 * tables of request names and of each request's errors (user/lib/dmlib.c).
 * An entry is
 *     X(number, NAME, links, errors)
 * number: the request's number, struct dm_kreq's op (enum dm_kop: KOP_NAME).
 *   The numbers are written out because they travel between machines and
 *   into trace logs, so a request keeps its number (the assertion after
 *   enum dm_kop holds them);
 * links: the kinds of kernel link that carry the request (DM_KLINKS);
 * errors: EVERY error its answer can carry, as a set (DM_ERRS): the
 *   answer's status after a CALL, or SEND's result when it was sent without
 *   a reply link. When the kernel answers a request with an error that its
 *   entry does not name, it prints the line
 *       kernel: KOP_NAME answered E_NAME, which demos.h does not list for it
 *   and the test harness fails every test that booted that machine
 *   (scripts/harness.py, Node.check_kernel_lines).
 * Every request may be answered with the dispatcher's (kreq.c) two errors,
 * and every entry names them: E_BADREQ, when the request is shorter than
 * struct dm_kreq or cannot be read, or it is not a process-control request
 * and comes over the process-control link; E_NOSYS, when it comes over a
 * console, timer, disk or live-channel link that does not carry it. A
 * number that is in no entry is answered the same way.
 * The comment above each entry documents the request: its arguments
 * (struct dm_kreq's pid, arg[0], arg[1] and the data after it), its answer
 * (struct dm_kreply's value and the data after it) and why each of its own
 * errors happens. */
#define DM_KOPS(X) \
    /* ---- process control ---- */ \
    \
    /* KOP_CREATE: data: the process name, NUL, then argc argument strings and
     * envc environment strings, each NUL-ended; arg[0] = argc, arg[1] = envc.
     * The program (a RISC-V ELF executable) is the passed link's data area
     * (read right), or without a passed link the boot image of that name.
     * The process starts with a0 = argc, a1 = argv, a2 = envp. Reply value:
     * the new (stopped) pid. A program on another machine is fetched first
     * (kernel/net/remote.c, remote_create): the answer comes when it is
     * here.
     * Errors: E_BADREQ (no name; argc or envc outside 0 .. 256, or not the
     * number of strings given; the program is not an ELF executable for the
     * user address space, or cannot be read; a program on another machine
     * sent without a reply link to answer over later), E_NOAREA (the passed
     * link has no data area), E_RIGHTS (it has no read right), E_NOTFOUND
     * (no boot image of that name), E_DEAD (the area's owner is gone, or its
     * machine has rebooted), E_NODE (the area's machine is down or
     * unreachable), E_FAULT (the area on another machine is not all mapped;
     * or the arguments could not be written to the new stack), E_TOOBIG (the
     * strings do not fit in half of the stack, or a program on another
     * machine is larger than 4 MiB), E_PROCFULL (the process table has no
     * free process), E_NOMEM (no free page, or over the process's memory
     * limit; for a program on another machine, four are being fetched
     * already, or there is no room for more work), E_LINKFULL (the kernel's
     * link table cannot keep the reply link while a program on another
     * machine is fetched). */ \
    X( 1, CREATE, DM_KLINKS(KLINK_PROCESS_CONTROL), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_NOAREA, E_RIGHTS, E_NOTFOUND, E_DEAD, E_NODE, E_FAULT, E_TOOBIG, E_NOMEM, \
              E_LINKFULL, E_PROCFULL)) \
    \
    /* KOP_MOVELINK: pid; arg[0] = slot or -1; the passed link enters pid's
     * table, in that slot or (-1) the first free one. Reply value: the slot
     * it took.
     * Errors: E_NOTFOUND (pid is no process of this machine, or is its
     * kernel), E_BADREQ (no link passed), E_LINKFULL (arg[0] is -1 and the
     * table is full, or arg[0] is below -1), E_BADSLOT (arg[0] is
     * DM_NLINKS or more), E_STATE (that slot holds a link). */ \
    X( 2, MOVELINK, DM_KLINKS(KLINK_PROCESS_CONTROL), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_LINKFULL, E_BADSLOT, E_STATE)) \
    \
    /* KOP_START: pid: the first start of a created process.
     * Errors: E_NOTFOUND (as KOP_MOVELINK), E_STATE (it has started). */ \
    X( 3, START, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_STATE)) \
    \
    /* KOP_STOP: pid: suspend; data (optional): the pid on whose behalf.
     * Errors: E_NOTFOUND (as KOP_MOVELINK), E_STATE (it is stopped already,
     * or has not started). */ \
    X( 4, STOP, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_STATE)) \
    \
    /* KOP_RESUME: pid: continue after KOP_STOP.
     * Errors: E_NOTFOUND (as KOP_MOVELINK), E_STATE (it is not stopped). */ \
    X( 5, RESUME, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_STATE)) \
    \
    /* KOP_DESTROY: pid; arg[0] = the exit status to report.
     * Errors: E_NOTFOUND (as KOP_MOVELINK). */ \
    X( 6, DESTROY, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND)) \
    \
    /* KOP_GROW: pid; arg[0] = signed byte increment of its heap. Reply
     * value: the old break.
     * Errors: E_NOTFOUND (as KOP_MOVELINK), E_NOMEM (the break would go into
     * the stack or below the heap's start, or no free page, or over the
     * process's memory limit). */ \
    X( 7, GROW, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_NOMEM)) \
    \
    /* KOP_PS: arg[0] = first slot; reply data: struct dm_kproc entries from
     * it on; value = count. Slot 0 is the kernel: its proctime is every
     * instruction since boot that no process was charged, its own work
     * while no process is current (interrupts, scheduling) and while one is
     * (interrupts, the transport, the meter); the time it waits idle in wfi
     * is no one's, so the proctimes, with those of the processes that
     * ended, add up to every instruction executed.
     * No errors of its own. */ \
    X( 8, PS, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS)) \
    \
    /* KOP_NOTIFY: the passed link receives struct dm_notice messages: when a
     * process of this machine ends, when a process has moved here, when
     * this kernel takes another machine to be down, and, if the link leads
     * to a process on this machine, when another machine comes up.
     * Errors: E_BADREQ (no link passed), E_LINKFULL (the kernel's link
     * table cannot keep it). */ \
    X( 9, NOTIFY, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_LINKFULL)) \
    \
    /* KOP_HALT: drain the console and power off; arg[0] = exit code. Asked
     * from another machine, the answer goes back first.
     * No errors of its own. */ \
    X(10, HALT, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS)) \
    \
    /* KOP_NETSTAT: reply data: a struct dm_kpeer for each other machine this
     * kernel has heard of; value = count.
     * No errors of its own. */ \
    X(11, NETSTAT, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS)) \
    \
    /* KOP_METER: pid; arg[0] = selection flags (METER_FLAG(type) bits,
     * meter/record.h; 0: stop metering it), arg[1] = options (bit 0: lossy;
     * bits 32..: the batches' maximum age in ms, 0 for 100); data
     * (optional): the pid on whose behalf (the parent, for its
     * CREATEPROCESS record). The passed link becomes its meter link
     * (required the first time; it may not lead to the process itself or to
     * a kernel). Without one, the flags and options change (kernel/meter.c,
     * meter_install).
     * Errors: E_NOTFOUND (as KOP_MOVELINK), E_INVAL (unknown flag bits, or
     * the link leads to the process itself or to a kernel), E_BADREQ (no
     * link passed and the process is not metered yet). */ \
    X(12, METER, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_INVAL)) \
    \
    /* KOP_METER_FLUSH: send every metered process's batch now; the answer
     * comes when every batch has been taken (or thrown away): kernel/meter.c,
     * meter_flush_all.
     * Errors: E_BADREQ (no reply link), E_LINKFULL (the kernel's link table
     * cannot keep the reply link), E_STATE (another flush is waiting),
     * E_QFULL (after arg[0] ms, 0: 2,000, a filter still has not taken
     * everything). */ \
    X(13, METER_FLUSH, DM_KLINKS(KLINK_PROCESS_CONTROL), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_LINKFULL, E_STATE, E_QFULL)) \
    \
    /* KOP_DEVICE: arg[0] = disk index, arg[1] = KLINK_DISK (or 0) or
     * KLINK_LIVE: the answer passes a device link to that disk, or to the
     * live trace channel, of this kernel, so that the process manager can
     * lend another machine's trace disk and live channel to a filter
     * started there.
     * Errors: E_NOTFOUND (there is no such disk or live channel). */ \
    X(14, DEVICE, DM_KLINKS(KLINK_PROCESS_CONTROL), DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND)) \
    \
    /* ---- the console (kernel/console_service.c) ---- */ \
    \
    /* KOP_CONS_WRITE: data: bytes to print. Reply when queued; value =
     * count. What does not fit in the UART's queue waits, with the reply
     * link, for room.
     * Errors: E_STATE (it does not fit, and another write waits already or
     * there is no reply link to wait with), E_LINKFULL (the kernel's link
     * table cannot keep the reply link). */ \
    X(15, CONS_WRITE, DM_KLINKS(KLINK_CONSOLE), DM_ERRS(E_BADREQ, E_NOSYS, E_STATE, E_LINKFULL)) \
    \
    /* KOP_CONS_READ: arg[0] = max bytes. Reply data: bytes typed (at least
     * one); value = count.
     * Errors: E_BADREQ (arg[0] is not positive, or no reply link), E_STATE
     * (nothing was typed and another read waits already), E_LINKFULL (the
     * kernel's link table cannot keep the reply link). */ \
    X(16, CONS_READ, DM_KLINKS(KLINK_CONSOLE), DM_ERRS(E_BADREQ, E_NOSYS, E_STATE, E_LINKFULL)) \
    \
    /* ---- the timer (kernel/timer_service.c) ---- */ \
    \
    /* KOP_TIME: reply value: wall-clock ns since 1970; reply data (one
     * uint64): the machine clock in ns.
     * No errors of its own. */ \
    X(17, TIME, DM_KLINKS(KLINK_TIMER), DM_ERRS(E_BADREQ, E_NOSYS)) \
    \
    /* KOP_ALARM: arg[0] = machine-clock ns: reply when that time is
     * reached; value: the machine clock then.
     * Errors: E_BADREQ (no reply link), E_LINKFULL (the kernel's link table
     * cannot keep the reply link), E_NOMEM (16 alarms wait already). */ \
    X(18, ALARM, DM_KLINKS(KLINK_TIMER), DM_ERRS(E_BADREQ, E_NOSYS, E_LINKFULL, E_NOMEM)) \
    \
    /* ---- a disk, blocks of DM_DISK_BLOCK bytes (kernel/dev/virtio_disk.c) */ \
    \
    /* KOP_DISK_INFO: reply value: the disk's size in blocks.
     * No errors of its own. */ \
    X(19, DISK_INFO, DM_KLINKS(KLINK_DISK), DM_ERRS(E_BADREQ, E_NOSYS)) \
    \
    /* KOP_DISK_ATTACH: the passed link's data area (read and write rights)
     * is where blocks are read into and written from; over the live channel's
     * link (read right): where KOP_LIVE_WRITE's bytes are taken from. It
     * replaces the area attached before.
     * Errors: E_BADREQ (no link passed), E_RIGHTS (it lacks a right),
     * E_LINKFULL (the kernel's link table cannot keep it), E_NOTFOUND (over
     * the live channel's link: this machine has no live channel). */ \
    X(20, DISK_ATTACH, DM_KLINKS(KLINK_DISK, KLINK_LIVE), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_RIGHTS, E_LINKFULL, E_NOTFOUND)) \
    \
    /* KOP_DISK_READ: arg[0] = block, arg[1] = offset in the attached area:
     * reply when the block is there.
     * Errors: E_BADREQ (no reply link, or the device refused the transfer),
     * E_BOUNDS (no such block, or the block would not lie inside the area,
     * when it starts or, after another KOP_DISK_ATTACH, when it ends),
     * E_NOAREA (no area is attached), E_DEAD (the area's owner is gone),
     * E_FAULT (the owner has unmapped the area), E_QFULL (as many transfers
     * as the disk takes are under way), E_LINKFULL (the kernel's link table
     * cannot keep the reply link). */ \
    X(21, DISK_READ, DM_KLINKS(KLINK_DISK), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_BOUNDS, E_NOAREA, E_DEAD, E_FAULT, E_QFULL, E_LINKFULL)) \
    \
    /* KOP_DISK_WRITE: arg[0] = block, arg[1] = offset in the attached area:
     * reply when the block is on the disk.
     * Errors: as KOP_DISK_READ's (the area is read when the transfer
     * starts). */ \
    X(22, DISK_WRITE, DM_KLINKS(KLINK_DISK), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_BOUNDS, E_NOAREA, E_DEAD, E_FAULT, E_QFULL, E_LINKFULL)) \
    \
    /* ---- the live trace channel (kernel/dev/virtio_console.c) ---- */ \
    \
    /* KOP_LIVE_WRITE: arg[0] = offset in the attached area, arg[1] = bytes
     * (1 to 4096): reply when the device has taken them for the host; value:
     * how many it took.
     * Errors: E_NOTFOUND (this machine has no live channel), E_BADREQ (no
     * reply link), E_NOAREA (no area is attached), E_BOUNDS (arg[1] is 0 or
     * over 4096, or the bytes would not lie inside the area), E_DEAD (the
     * area's owner is gone), E_FAULT (the owner has unmapped the area),
     * E_QFULL (as many writes as the channel takes are under way),
     * E_LINKFULL (the kernel's link table cannot keep the reply link). */ \
    X(23, LIVE_WRITE, DM_KLINKS(KLINK_LIVE), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_NOAREA, E_BOUNDS, E_DEAD, E_FAULT, E_QFULL, E_LINKFULL)) \
    \
    /* ---- process control, numbered after the devices' (a request keeps its number) ---- */ \
    \
    /* KOP_MIGRATE: pid; arg[0] = the machine to move it to (DEMOS/MP's
     * migration: kernel/net/migrate.c; docs/migration.md). Asked of the
     * kernel of the machine the process runs on; the answer comes when it
     * runs on the other machine (value: that machine), or when the move has
     * failed. The process keeps its id, its links, its queued messages and
     * its metering; a CALL it waits in gets its answer there. A process
     * that waits for another machine's kernel (SEND, MOVEDATA, the send of
     * a CALL) or whose meter batches wait for its filter is moved once that
     * is over. A process lost with the destination during the move is
     * ended: its exit notice says DM_EXIT_LOST.
     * Errors: E_NOTFOUND (as KOP_MOVELINK), E_DEVICE (it holds a link to a
     * kernel), E_INVAL (arg[0] is this machine or no machine of the
     * cluster), E_STATE (it has not started; it is being moved already; it
     * did not come to rest within 10 s), E_NODE (the destination is down or
     * unreachable, or went down during the move), E_PROCFULL (the
     * destination's process table is full), E_NOMEM (the destination has
     * not the memory for it, or this kernel moves 4 processes already, or
     * has no room for more work), E_BADREQ (no reply link to answer over),
     * E_LINKFULL (the kernel's link table cannot keep the reply link). */ \
    X(24, MIGRATE, DM_KLINKS(KLINK_PROCESS_CONTROL), \
      DM_ERRS(E_BADREQ, E_NOSYS, E_NOTFOUND, E_DEVICE, E_INVAL, E_STATE, E_NODE, E_PROCFULL, E_NOMEM, \
              E_LINKFULL))

/* A set of kernel link kinds, as an entry of DM_KOPS names them: bit k for
 * kind k. DM_KLINKS(KLINK_DISK, KLINK_LIVE) is the set of those two; it
 * takes up to 5 kinds. */
#define DM_KLINK_BIT(kind) ((kind) > 0 ? 1u << (kind) : 0u)
#define DM_KLINKS(...) DM_KLINKS_5(__VA_ARGS__, 0, 0, 0, 0, 0)
#define DM_KLINKS_5(a, b, c, d, e, ...) \
    (DM_KLINK_BIT(a) | DM_KLINK_BIT(b) | DM_KLINK_BIT(c) | DM_KLINK_BIT(d) | DM_KLINK_BIT(e))

enum dm_kop {
#define DM_KOP_ENUM(number, name, links, errors) KOP_##name = number,
    DM_KOPS(DM_KOP_ENUM)
#undef DM_KOP_ENUM
};
#define DM_NKOPS 25   /* request numbers are 1 .. DM_NKOPS - 1 */

/* The list's own consistency, as for the calls: DM_NKOPS - 1 requests with
 * numbers 1 .. DM_NKOPS - 1, each carried by some kind of link. */
#define DM_ONE_MORE(...) + 1
_Static_assert(0 DM_KOPS(DM_ONE_MORE) == DM_NKOPS - 1, "DM_NKOPS is not one more than the number of requests");
#undef DM_ONE_MORE
#define DM_KOP_CHECK(number, name, links, errors) \
    _Static_assert(number > 0 && number < DM_NKOPS, "KOP_" #name "'s number is not in 1 .. DM_NKOPS - 1"); \
    _Static_assert(links != 0, "KOP_" #name " is carried by no kind of link");
DM_KOPS(DM_KOP_CHECK)
#undef DM_KOP_CHECK
/* A request keeps its number: it travels between machines and into trace
 * logs. Here they are once more, so that a change to one in the list is a
 * compile error. */
_Static_assert(KOP_CREATE == 1 && KOP_MOVELINK == 2 && KOP_START == 3 && KOP_STOP == 4 && KOP_RESUME == 5 &&
               KOP_DESTROY == 6 && KOP_GROW == 7 && KOP_PS == 8 && KOP_NOTIFY == 9 && KOP_HALT == 10 &&
               KOP_NETSTAT == 11 && KOP_METER == 12 && KOP_METER_FLUSH == 13 && KOP_DEVICE == 14 &&
               KOP_CONS_WRITE == 15 && KOP_CONS_READ == 16 && KOP_TIME == 17 && KOP_ALARM == 18 &&
               KOP_DISK_INFO == 19 && KOP_DISK_ATTACH == 20 && KOP_DISK_READ == 21 && KOP_DISK_WRITE == 22 &&
               KOP_LIVE_WRITE == 23 && KOP_MIGRATE == 24,
               "a request's number is part of the ABI: it never changes");
#define DM_DISK_BLOCK 4096

struct dm_kreq {
    uint32_t op;       /* enum dm_kop */
    uint32_t reserved;
    dm_pid   pid;      /* target process, where the op has one */
    int64_t  arg[2];
    /* data follows */
};
_Static_assert(sizeof(struct dm_kreq) == 32, "struct dm_kreq is part of the ABI: its size is fixed");

struct dm_kreply {
    int64_t  status;   /* E_OK or an error */
    uint64_t value;
    /* data follows */
};
_Static_assert(sizeof(struct dm_kreply) == 16, "struct dm_kreply is part of the ABI: its size is fixed");

/* What one kernel knows of another machine, and what its transport has
 * done with it (KOP_NETSTAT; kernel/net/transport.h defines the counters). */
struct dm_kpeer {
    uint32_t machine, epoch;
    uint32_t state;              /* DM_PEER_UP or DM_PEER_DOWN (stopped answering) */
    uint32_t pending;            /* messages to it not yet acknowledged */
    uint32_t messages_sent, messages_delivered, messages_failed;
    uint32_t frames_sent, retransmissions, timeouts;
    uint32_t duplicates_dropped, out_of_order_dropped, stale_dropped;
    uint32_t forged;             /* frames naming it as their sender whose tag was wrong (kernel/net/cluster.c) */
    uint32_t replayed;           /* frames from it that had been taken already */
    uint32_t reserved;
};
_Static_assert(sizeof(struct dm_kpeer) == 64, "struct dm_kpeer is part of the ABI: its size is fixed");
#define DM_PEER_UP   1
#define DM_PEER_DOWN 2

/* One process in a KOP_PS reply. */
struct dm_kproc {
    dm_pid   pid;        /* its machine is where it was created */
    char     name[24];
    uint16_t state;      /* enum dm_proc_state */
    uint8_t  machine;    /* where it runs: the machine whose kernel answered */
    uint8_t  reserved;
    uint16_t slot;       /* its slot in that kernel's table (KOP_PS's arg[0] goes on from the next) */
    uint16_t links;      /* links in its table */
    uint64_t proctime;   /* instructions executed on its behalf */
    uint64_t memory;     /* bytes of user memory */
};
_Static_assert(sizeof(struct dm_kproc) == 56, "struct dm_kproc is part of the ABI: its size is fixed");

enum dm_proc_state {
    PS_FREE = 0, PS_CREATED, PS_RUNNABLE, PS_RECEIVING, PS_CALLING, PS_STOPPED, PS_KERNEL,
    PS_SENDING,   /* SEND to another machine: waiting until its kernel has the message */
    PS_MOVING,    /* MOVEDATA with an area on another machine: waiting for the copy */
    PS_ARRIVING,  /* a slot kept for a process moving here (KOP_MIGRATE): not listed */
};

/* Exit statuses the kernel gives a process it ends. */
#define DM_EXIT_KILLED (-1000)   /* destroyed by the process manager */
#define DM_EXIT_FAULT  (-1001)   /* a fault: bad memory access, illegal instruction */
#define DM_EXIT_LOST   (-1002)   /* lost with the machine it was moving to (KOP_MIGRATE) */

/* What the kernel sends over the KOP_NOTIFY link. */
struct dm_notice {
    uint32_t kind;       /* enum dm_notice_kind */
    uint32_t machine;    /* the machine it is about */
    dm_pid   pid;        /* DM_NOTICE_EXIT, DM_NOTICE_MOVED: the process */
    int64_t  status;     /* DM_NOTICE_EXIT: its exit status; DM_NOTICE_MOVED: its moves so far */
};
_Static_assert(sizeof(struct dm_notice) == 24, "struct dm_notice is part of the ABI: its size is fixed");
enum dm_notice_kind {
    DM_NOTICE_EXIT = 1,     /* process `pid` ended with `status` */
    DM_NOTICE_MACHINE = 2,  /* `machine` is up (in a new epoch): the message passes a
                               process-control link to its kernel */
    DM_NOTICE_DOWN = 3,     /* `machine` does not answer: this kernel takes it to be down
                               (every wait on it ended with E_NODE) */
    DM_NOTICE_MOVED = 4,    /* process `pid` runs on `machine` now, after its `status`th
                               move (KOP_MIGRATE): sent by the kernel it moved to */
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
_Static_assert(sizeof(struct dm_info) == 56, "struct dm_info is part of the ABI: its size is fixed");

/* The user part of an address space: [DM_USER_BASE, DM_USER_TOP). */
#define DM_USER_BASE 0x40000000UL
#define DM_USER_TOP  0x80000000UL

#endif /* not __ASSEMBLER__ */

#endif
