/*
 * probes.h — the meter's probe points: every place where the kernel may
 * write a trace record for a process, named by its event, and the safe
 * point where sealed batches are sent to the filters. The records
 * themselves are written by meter.c.
 *
 * A probe costs an unmetered process one test of its selection flags.
 * The kernel calls on the message path (SEND, CALL, RECEIVE) and the
 * hand-over of a message to its receiver are written once, with a constant
 * `metered` argument, and expanded twice (see syscall.c, dispatch, and
 * msg.c, hand_over): the unmetered copy has no probe in it at all, and
 * the one test is the choice between the copies. docs/performance.md
 * measures what an unmetered probe costs.
 */
#ifndef PROBES_H
#define PROBES_H

#include "defs.h"

/* Built with METER_PROBES=0 (the second kernel of make bench), every probe
 * is compiled out, so that a benchmark can measure what the tests cost. */
#ifndef METER_PROBES
#define METER_PROBES 1
#endif

/* The probes' one test: is p metered for this event (for any event)?
 * Marked unlikely, so that the unmetered path falls straight through. */
#define METERED(p, type) __builtin_expect(METER_PROBES && ((p)->meter.flags & METER_FLAG(type)), 0)
#define METER_ANY(p)     __builtin_expect(METER_PROBES && (p)->meter.flags, 0)

/* ---- the meter's count ----
 * What metering adds to a kernel call is the kernel's work, not the
 * process's, so that a metered process's PROCTIME is what it would be
 * unmetered: writing records, sealing batches, and what the metered copy
 * of a kernel call does beyond the unmetered one. Those instructions are
 * counted in register tp (defs.h, meter_count), which is 0 whenever the
 * kernel is entered, and taken out of the current process's count
 * (defs.h, last_switch_instret) by meter_count_flush.
 *
 * The count is switched on (meter_count_on) where metering's work begins
 * and off (meter_count_off) where work that an unmetered process does too
 * resumes. While it is on, tp holds the count so far less instret when it
 * was switched on; while it is off, the count. A metered process's kernel
 * call (syscall.c, dispatch_metered) is counted from the choice of the
 * metered copy, and flushed at its end. A probe that may run anywhere (a
 * record for a message's receiver, for a process the process manager acts
 * on, for a process ending) is counted on its own and ends with
 * meter_probe_end: within a metered process's kernel call its count joins
 * the call's; elsewhere it is flushed at once.
 *
 * Each of these reads instret first and counts its own instructions from
 * the read on (instret counts those retired before the read), so the count
 * is exact. A record's PROCTIME is its process's then, the count left out
 * (meter.c, meter_proctime). */
static inline __attribute__((always_inline)) void meter_count_on(void)
{
    uint64_t now;
    __asm__ volatile("rdinstret %1\n\t"
                     "sub %0, %0, %1"
                     : "+r"(meter_count), "=&r"(now) : : "memory");
}

static inline __attribute__((always_inline)) void meter_count_off(void)
{
    uint64_t now;
    __asm__ volatile("rdinstret %1\n\t"
                     "add %0, %0, %1\n\t"
                     "addi %0, %0, 3"         /* these three */
                     : "+r"(meter_count), "=&r"(now) : : "memory");
}

/* Switch the count off and take it out of the PROCTIME of the process
 * that is current: last_switch_instret moves past it, and the copy the
 * process reads, in `info` (its info page; proc.c's unread_info when no
 * process is current, or it has ended), with it. */
static inline __attribute__((always_inline)) void meter_count_flush(struct dm_info *info)
{
    uint64_t now, last;
    __asm__ volatile("rdinstret %1\n\t"
                     "add %1, %1, %0\n\t"
                     "ld %2, 0(%3)\n\t"
                     "add %2, %2, %1\n\t"
                     "addi %2, %2, 8\n\t"   /* these eight */
                     "sd %2, 0(%3)\n\t"
                     "li %0, 0\n\t"
                     "sd %2, %5(%4)"
                     : "+r"(meter_count), "=&r"(now), "=&r"(last)
                     : "r"(&last_switch_instret), "r"(info),
                       "i"(__builtin_offsetof(struct dm_info, instret_at_switch))
                     : "memory");
}

/* The end of a probe that may run anywhere: within a metered process's
 * kernel call (or an interrupt taken while it ran, which drops it) its
 * count joins the call's; elsewhere it is taken out now. */
static inline __attribute__((always_inline)) void meter_probe_end(void)
{
    if (current && METER_ANY(current))
        meter_count_off();
    else
        meter_count_flush(current ? current->info : &unread_info);
}

/* ---- meter.c: the records, the batches and the outbox ---- */
extern int meter_work;             /* sealed batches wait to be sent: meter_safe_point sends them */
extern int meter_waiting_room;     /* batches wait for a filter on this machine to take a message */
void meter_init(void);
uint64_t meter_message_id(void);
/* SEND and CALL: records written before the message goes (so that they
 * come before any record of its receipt), finished at the end of the
 * kernel call (syscall.c, dispatch_metered). */
struct meter_sending {
    struct meter_SEND *send;                 /* in the batch, or 0 */
    struct meter_RECEIVECALL *receivecall;   /* CALL's receive half, or 0 */
    int32_t via_slot, pass_slot;
    dm_pid  via_to, pass_to;
    uint8_t via_reply;
    uint8_t begun;                           /* meter_send_end is due */
};
void meter_send_begin(struct proc *p, struct outgoing *o, int call, struct meter_sending *s);
void meter_send_end(struct proc *p, const struct meter_sending *s, int64_t result);
void meter_receivecall(struct proc *p, uint32_t channel, uint32_t kind, uint32_t empty);
void meter_receive(struct proc *r, const struct message *m, int32_t link_slot, int32_t reply_slot);
void meter_queued(struct proc *r, struct message *m, uint32_t queue_length);
void meter_link_created(struct proc *p, int slot, const struct link *l, uint32_t how);
void meter_link_destroyed(struct proc *p, int slot, dm_pid to, uint32_t how);
void meter_movedata(struct proc *p, const struct move *m, int64_t to_link, int64_t from_link);
void meter_process_event(struct proc *p, uint32_t type, uint64_t a);
void meter_exit(struct proc *p, int64_t status);
int64_t meter_install(struct proc *p, uint64_t flags, uint64_t options, dm_pid parent, struct link *meter_link);
void meter_push(void);                  /* within a kernel_work span (defs.h) */
void meter_push_for_room(void);
int64_t meter_flush_all(int reply_slot, uint64_t wait_ns);
void meter_tick(uint64_t now);
uint64_t meter_next_time(void);
void meter_answered(uint64_t op, int64_t status);
void meter_machine_down(uint32_t machine, int error);   /* net/remote.c, fail_machine */
int meter_mark_waited(uint8_t *waited);                 /* net/remote.c, the pings */
void meter_print_counters(void);
void meter_migrated(struct proc *p, uint32_t from, uint64_t took, uint64_t bytes, uint32_t messages);
uint8_t *meter_take(struct proc *p, struct meter_state *out);
void meter_give(struct proc *p, const struct meter_state *m, uint8_t *batch);

/* ---- the probe points, in the order a message meets them ----
 * Those marked "in the call" run only in the metered copy of a kernel
 * call, and switch the call's count on and off; the others may run
 * anywhere, and end with meter_probe_end. */

/* CREATELINK, DUPLICATELINK, and a link arriving in a table (`how`:
 * ML_* of meter/record.h); slot < 0 means no link was made. */
static inline __attribute__((always_inline)) void probe_link_created(struct proc *p, int slot, const struct link *l, uint32_t how)
{
    if (METERED(p, MT_CREATELINK) && slot >= 0) {
        meter_count_on();
        meter_link_created(p, slot, l, how);
        meter_probe_end();
    }
}

/* DESTROYLINK, and a link leaving a table (passed, used up, its process ending). */
static inline __attribute__((always_inline)) void probe_link_destroyed(struct proc *p, int slot, dm_pid to, uint32_t how)
{
    if (METERED(p, MT_DESTROYLINK)) {
        meter_count_on();
        meter_link_destroyed(p, slot, to, how);
        meter_probe_end();
    }
}

/* SEND and CALL of a metered sender, in the call: the message gets its id
 * and its records before it goes (meter.c, meter_send_begin); the call's
 * end finishes them. */
static inline __attribute__((always_inline)) int probe_send(struct proc *p, struct outgoing *o, int call,
                                                            struct meter_sending *s)
{
    meter_count_on();
    meter_send_begin(p, o, call, s);
    meter_count_off();
    return msg_send(o);
}

/* RECEIVE (block) or ARECEIVE of a metered receiver, in the call, before
 * it looks at its queue; ARECEIVE's record says whether anything matching
 * waits. */
static inline __attribute__((always_inline)) void probe_receivecall(struct proc *p, uint32_t channel, int block)
{
    meter_count_on();
    if (METERED(p, MT_RECEIVECALL))
        meter_receivecall(p, channel, !block, !block && !msg_queue_has(p, channel));
    meter_count_off();
}

/* A message entered r's queue (r was not waiting for it). */
static inline __attribute__((always_inline)) void probe_queued(struct proc *r, struct message *m)
{
    if (METERED(r, MT_MESSAGEQUEUED)) {
        meter_count_on();
        meter_queued(r, m, r->queue_len);
        meter_probe_end();
    }
}

/* A message was handed to a metered r: RECEIVE, then the links it brought
 * (within msg.c's hand_over_metered, whose count this switches on). */
static inline __attribute__((always_inline)) void probe_handed_over(struct proc *r, const struct message *m, int32_t link, int32_t reply)
{
    meter_count_on();
    if (METERED(r, MT_RECEIVE))
        meter_receive(r, m, link, reply);
    if (METERED(r, MT_CREATELINK)) {
        if (link >= 0)
            meter_link_created(r, link, &r->links[link], ML_ARRIVED);
        if (reply >= 0)
            meter_link_created(r, reply, &r->links[reply], ML_REPLY);
    }
    meter_count_off();
}

static inline __attribute__((always_inline)) void probe_movedata(struct proc *p, const struct move *m, int64_t to_link, int64_t from_link)
{
    if (METERED(p, MT_MOVEDATA)) {
        meter_count_on();
        meter_movedata(p, m, to_link, from_link);
        meter_probe_end();
    }
}

/* STARTPROCESS (a = 1 if resumed) and STOPPROCESS (a = who asked). */
static inline __attribute__((always_inline)) void probe_process_event(struct proc *p, uint32_t type, uint64_t a)
{
    if (METERED(p, type)) {
        meter_count_on();
        meter_process_event(p, type, a);
        meter_probe_end();
    }
}

/* p has moved here from machine `from` (net/migrate.c). */
static inline __attribute__((always_inline)) void probe_migrated(struct proc *p, uint32_t from, uint64_t took,
                                                                 uint64_t bytes, uint32_t messages)
{
    if (METERED(p, MT_MIGRATE)) {
        meter_count_on();
        meter_migrated(p, from, took, bytes, messages);
        meter_probe_end();
    }
}

/* TODO(lab event, part 2): probe_preempt, the PREEMPT probe that
 * kernel/proc.c's schedule calls, and meter.c's function it calls,
 * declared above (docs/labs/event.md). */

/* A process took a message from its queue: if batches wait for a filter
 * on this machine to make room, this may have made it. */
static inline __attribute__((always_inline)) void probe_message_taken(void)
{
    if (METER_PROBES && meter_waiting_room)
        meter_push_for_room();
}

/* ---- the safe point ----
 * Probes run in the middle of other kernel work, so a batch they seal only
 * moves to the meter outbox; it is sent from here, where no kernel call or
 * interrupt is half done. The kernel passes it at the end of every kernel
 * call of a metered process (syscall.c) and after handling interrupts
 * (trap.c; within the interrupts' kernel_work span); an idle machine with
 * batches to send sets its timer to fire at once (meter_next_time). */
static inline void meter_safe_point(void)
{
    if (METER_PROBES && meter_work)
        meter_push();
}

#endif
