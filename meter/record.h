/*
 * meter/record.h — DPM's trace records: the one definition of their
 * layouts, for the kernel (which writes them), the filter (which selects
 * them), and the host tools and the analyzer (which read them).
 *
 * Every record is a header (struct meter_header) followed by the body of
 * its type. Each layout is written once, below, as a list of fields
 *     F(C type, name, display base)
 * from which both the C struct and the trace description are made
 * (meter/tracelog.c writes the description in DPM's format, thesis Fig.
 * 3.3, with each field's offset and size as the compiler lays them out), so
 * the two can never disagree. Field names are those the selection rules use.
 *
 * All fields are little-endian, naturally aligned; a body's offsets count
 * from the end of the header, as in DPM. Which record goes to whose stream,
 * and when, is docs/architecture.md's table ("Metering").
 */
#ifndef METER_RECORD_H
#define METER_RECORD_H

#include <stdint.h>

/* The trace types (traceType). 0 is the header's own number in the description. */
#define METER_TYPES(T) \
    T(SEND,           1) \
    T(RECEIVECALL,    2) \
    T(RECEIVE,        3) \
    T(MESSAGEQUEUED,  4) \
    T(CREATELINK,     5) \
    T(DESTROYLINK,    6) \
    T(MOVEDATA,       7) \
    T(CREATEPROCESS,  8) \
    T(STARTPROCESS,   9) \
    T(STOPPROCESS,   10) \
    T(DESTROYPROCESS, 11) \
    T(MIGRATE,       12)

enum meter_type {
#define METER_ENUM(name, number) MT_##name = number,
    METER_TYPES(METER_ENUM)
#undef METER_ENUM
};
#define METER_NTYPES 13                  /* type numbers 1..12; 0 is the header */
#define METER_FLAG(type) (1u << (type))  /* a process's selection flags: a bit per type */
#define METER_ALL_FLAGS  (((1u << METER_NTYPES) - 1) & ~1u)

/* ---- the header of every record ---- */
#define METER_HEADER_FIELDS(F) \
    F(uint32_t, machine,   10)  /* the machine that wrote it */ \
    F(uint32_t, traceType, 10)  /* enum meter_type */ \
    F(uint64_t, time,      10)  /* the machine clock, ns */ \
    F(uint64_t, procTime,  10)  /* the process's CPU time so far, instructions */ \
    F(uint64_t, pc,        16)  /* its kernel call's return address, or where it left user mode: see below */ \
    F(uint32_t, load,      10)  /* runnable processes on the machine */ \
    F(uint32_t, length,    10)  /* the whole record's length in bytes */ \
    F(uint64_t, pid,       16)  /* whose stream the record belongs to */ \
    F(uint64_t, sequence,  10)  /* the process's record number: a gap is a lost record */

/* ---- the bodies ---- */

/* SEND: the send of SEND or of CALL's first half. */
#define METER_SEND_FIELDS(F) \
    F(uint64_t, toTask,    16)  /* the receiver */ \
    F(uint64_t, messageId, 16)  /* the same in this message's MESSAGEQUEUED and RECEIVE */ \
    F(uint64_t, code,      10)  /* the link's code */ \
    F(uint64_t, passTask,  16)  /* where the passed link leads, or 0 */ \
    F(uint32_t, channel,   10) \
    F(uint32_t, size,      10)  /* bytes of data */ \
    F(int32_t,  sendLink,  10)  /* slot sent over */ \
    F(int32_t,  passLink,  10)  /* slot passed, or -1 */ \
    F(uint32_t, call,      10)  /* 1: the send half of a CALL (a reply link goes too) */ \
    F(int32_t,  status,    10)  /* 0, or the error SEND gave at once (nothing was sent) */

/* MESSAGEQUEUED: the message entered the receiver's queue (the receiver was not waiting for it). */
#define METER_MESSAGEQUEUED_FIELDS(F) \
    F(uint64_t, fromTask,  16) \
    F(uint64_t, messageId, 16) \
    F(uint64_t, code,      10) \
    F(uint32_t, channel,   10) \
    F(uint32_t, size,      10) \
    F(uint32_t, queueLength, 10)  /* messages queued, this one included */ \
    F(uint32_t, reserved,  10)

/* RECEIVECALL: entry to RECEIVE, ARECEIVE or CALL's receive half. */
#define METER_RECEIVECALL_FIELDS(F) \
    F(uint32_t, channel,   10)  /* the channel asked for (0xffffffff: any) */ \
    F(uint32_t, kind,      10)  /* 0 RECEIVE, 1 ARECEIVE, 2 CALL */ \
    F(uint32_t, empty,     10)  /* ARECEIVE found nothing; CALL: its send failed at once */ \
    F(uint32_t, reserved,  10)

/* RECEIVE: the message is handed to the receiver. */
#define METER_RECEIVE_FIELDS(F) \
    F(uint64_t, fromTask,  16) \
    F(uint64_t, messageId, 16) \
    F(uint64_t, code,      10) \
    F(uint32_t, channel,   10) \
    F(uint32_t, size,      10) \
    F(int32_t,  linkSlot,  10)  /* where a passed link went, or -1 */ \
    F(int32_t,  replySlot, 10)  /* where a CALL's reply link went, or -1 */

/* CREATELINK: the process's link table gained a link. */
#define METER_CREATELINK_FIELDS(F) \
    F(uint64_t, toTask,    16)  /* where the link leads */ \
    F(uint64_t, code,      10) \
    F(uint32_t, channel,   10) \
    F(int32_t,  slot,      10) \
    F(uint32_t, how,       10)  /* enum meter_link_how */ \
    F(uint32_t, flags,     16)  /* LINK_READ, LINK_WRITE, LINK_REPLY */

/* DESTROYLINK: the process's link table lost a link. */
#define METER_DESTROYLINK_FIELDS(F) \
    F(uint64_t, toTask,    16) \
    F(int32_t,  slot,      10) \
    F(uint32_t, how,       10)  /* enum meter_link_how */

/* MOVEDATA: the caller copied between two data areas. */
#define METER_MOVEDATA_FIELDS(F) \
    F(uint64_t, toTask,    16)  /* the destination area's owner */ \
    F(uint64_t, fromTask,  16)  /* the source area's owner */ \
    F(uint64_t, size,      10) \
    F(int32_t,  toLink,    10)  /* slots, or -2 (DM_SELF) */ \
    F(int32_t,  fromLink,  10)

/* CREATEPROCESS: a process was created (time-stamped at creation). */
#define METER_CREATEPROCESS_FIELDS(F) \
    F(uint64_t, parent,    16)  /* on whose behalf the process manager created it */ \
    F(uint64_t, nameLow,   16)  /* the program's name, first 16 bytes, NUL-padded */ \
    F(uint64_t, nameHigh,  16)

/* STARTPROCESS, STOPPROCESS: started or resumed; suspended. */
#define METER_STARTPROCESS_FIELDS(F) \
    F(uint32_t, resumed,   10)  /* 0: first start, 1: resumed */ \
    F(uint32_t, reserved,  10)
#define METER_STOPPROCESS_FIELDS(F) \
    F(uint64_t, by,        16)  /* who asked */

/* DESTROYPROCESS: the process ended. */
#define METER_DESTROYPROCESS_FIELDS(F) \
    F(int64_t,  status,    10)  /* exit status (DM_EXIT_KILLED, DM_EXIT_FAULT, ...) */

/* MIGRATE: the process has moved to this machine (the header's) and runs
 * here from now on; written when it restarts here (kernel/net/migrate.c). */
#define METER_MIGRATE_FIELDS(F) \
    F(uint32_t, fromMachine, 10)  /* where it ran before */ \
    F(uint32_t, toMachine, 10)    /* where it runs now */ \
    F(uint64_t, took,      10)  /* ns out of execution: from the request at the source to the restart
                                   here (each machine's part on its own clock) */ \
    F(uint64_t, bytes,     10)  /* bytes of its memory moved */ \
    F(uint32_t, messages,  10)  /* queued messages moved with it */ \
    F(uint32_t, moves,     10)  /* its moves so far, this one included */

/* A message id (SEND, MESSAGEQUEUED and RECEIVE's messageId): made by the
 * kernel that records the message first, the sender's, or the receiver's
 * when the sender is not metered; unique across machines and boots: the
 * machine that made it, its boot epoch and a counter, so that the ids one
 * machine makes in one boot rise with its clock. */
#define METER_MESSAGE_ID(machine, epoch, counter) \
    (((uint64_t)(machine) << 56) | ((uint64_t)((epoch) & 0xffffff) << 32) | (uint64_t)(counter))
#define METER_MESSAGE_ID_MACHINE(id) ((uint32_t)((uint64_t)(id) >> 56))

/* TODO(lab event, part 1): PREEMPT, type 13 in METER_TYPES (after
 * MIGRATE, and METER_NTYPES one more), and its body's fields here (docs/labs/event.md). */

/* How a link came or went (CREATELINK, DESTROYLINK). */
enum meter_link_how {
    ML_CREATELINK = 1,   /* CREATELINK */
    ML_DUPLICATE,        /* DUPLICATELINK */
    ML_ARRIVED,          /* passed in a message */
    ML_REPLY,            /* a CALL's reply link, given to the receiver */
    ML_MOVED,            /* moved in by the process manager (KOP_MOVELINK) */
    ML_DESTROYLINK,      /* DESTROYLINK */
    ML_USED,             /* a reply link used up by its SEND */
    ML_PASSED,           /* passed away in a message */
    ML_EXIT,             /* dropped when the process ended */
};

/* ---- what a record's pc is ----
 * Where in its own program the process was. For the records its own kernel
 * calls write -- SEND, RECEIVECALL, RECEIVE, MOVEDATA, and CREATELINK and
 * DESTROYLINK of the links those calls make, use up, pass or bring -- it is
 * the return address of the kernel-call stub it called (user/lib/kcall.S:
 * the stubs are leaves, so ra at their ecall is their caller's): the
 * instruction after the call, in the caller. That is one past the call, and
 * past the caller's end when the call is its last instruction (a call that
 * does not return): to name the function, look up pc - 1. A stub reached by
 * a tail call returns to the caller's caller, which it names.
 * For the others -- MESSAGEQUEUED, CREATEPROCESS, STARTPROCESS, STOPPROCESS,
 * and a link moved in by the process manager -- it is where the process
 * last left user mode: after the ecall of a kernel call it is in, or the
 * instruction an interrupt or a fault stopped it at.
 * DESTROYPROCESS, and DESTROYLINK of the links dropped as the process ends,
 * carry the return address when it ended by a kernel call of its own
 * (STOPTASK), and where it left user mode when it was killed or faulted.
 * Whether a record of `type` (a link's `how`) carries a return address: 1
 * for DESTROYPROCESS and the links dropped at its end, the common case, so
 * that pc - 1 names the function of a killed process too unless it was
 * stopped at a function's first instruction. */
static inline int meter_pc_is_return_address(uint32_t type, uint32_t how)
{
    switch (type) {
    case MT_SEND:
    case MT_RECEIVECALL:
    case MT_RECEIVE:
    case MT_MOVEDATA:
    case MT_DESTROYLINK:
    case MT_DESTROYPROCESS:
        return 1;
    case MT_CREATELINK:
        return how != ML_MOVED;
    default:
        return 0;
    }
}

/* ---- a meter batch: what a kernel sends a filter ----
 * One message over a process's meter link, sent by its kernel (the filter
 * sees DM_MSG_FROM_KERNEL): this header, then `records` whole records of
 * one process's stream, in order, each as long as its header.length says.
 * A stream's records are numbered (header.sequence) from 0 with no gap
 * unless records were lost; `lost` counts those a lossy stream dropped
 * since its previous batch, so the filter can count every loss even at
 * the end of a stream. */
#define METER_BATCH_MAGIC 0x4842544du    /* "MTBH" */
#define METER_BATCH_RECORDS 50           /* at most, per batch (DPM's figure) */
struct meter_batch {
    uint32_t magic;                      /* METER_BATCH_MAGIC */
    uint16_t records;
    uint16_t final;                      /* 1: the stream's last batch (its process ended, or metering stopped) */
    uint64_t pid;                        /* whose stream */
    uint64_t lost;
};

/* ---- the C structs, made from the lists ---- */
#define METER_STRUCT_FIELD(type, name, base) type name;

struct meter_header { METER_HEADER_FIELDS(METER_STRUCT_FIELD) };

#define METER_BODY_STRUCT(name, number) \
    struct meter_##name { METER_##name##_FIELDS(METER_STRUCT_FIELD) };
METER_TYPES(METER_BODY_STRUCT)
#undef METER_BODY_STRUCT

/* The largest record. */
union meter_any_body {
#define METER_UNION_MEMBER(name, number) struct meter_##name name;
    METER_TYPES(METER_UNION_MEMBER)
#undef METER_UNION_MEMBER
};
#define METER_RECORD_MAX (sizeof(struct meter_header) + sizeof(union meter_any_body))

#endif
