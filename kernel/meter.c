/*
 * meter.c — DPM's meter module: the records the probes write, each
 * process's batch of them, and the meter outbox that takes full batches to
 * the filters (docs/architecture.md, "Metering").
 *
 * A probe sits in the kernel where its event happens, behind one test of
 * the process's selection flags (METERED in probes.h); an unmetered process
 * pays that test and nothing else. A metered process's records go into a
 * page of its own (its batch: struct meter_batch, then the records, as
 * meter/record.h lays them out). A batch is sealed when it holds
 * METER_BATCH_RECORDS records or the next record might not fit in one
 * message (DM_MSG_MAX bytes), when its first record is older than the
 * process's bound (100 ms unless set), and when the process is stopped,
 * ends, or has its metering changed.
 *
 * Sealing only moves the page to the meter outbox: probes run in the
 * middle of other kernel work, so the batches are sent later, at the
 * meter's safe point (probes.h, meter_safe_point), as ordinary messages
 * from this kernel over a copy of the meter link. One destination's batches go in the order they
 * were sealed, so each stream reaches its filter in order. A filter on
 * another machine gets one batch at a time, and its kernel's answer says
 * whether the filter took it.
 *
 * A batch the filter cannot take (its queue is full) waits in the outbox,
 * offered again at the next push; one that a filter on another machine
 * refused, RETRY_NS later and not before (every offer there is a message
 * of up to a page each way, sealed and checked). By default its process
 * waits too (HELD_METER) until every batch of its is taken: metering is
 * lossless and never changes what a program computes, only when. In lossy mode such a batch is thrown away instead
 * and its records counted in the stream's next batch (`lost`). A batch
 * whose filter has ended, or whose filter's machine is down, is thrown
 * away and counted lost, and its process's metering into that filter stops
 * (orphan); a batch in flight to a machine declared down is one of them
 * (meter_machine_down), so that no process waits for an answer that cannot
 * come.
 */
#include "defs.h"
#include "probes.h"

#define NSEALED          512          /* batches in the meter outbox, all processes together */
#define FINAL_RESERVE    NPROC        /* of them, kept for streams' final batches: one per process */
#define DEFAULT_AGE_NS   100000000ull /* 100 ms */
#define RETRY_NS         2000000ull   /* a filter that was full is tried again after 2 ms */
#define NO_TIME          UINT64_MAX
#define METER_BACKLOG    2            /* batches a lossless process may have waiting and still run */

/* A sealed batch waiting in the outbox. */
struct sealed {
    struct sealed *next;
    uint8_t *page;               /* struct meter_batch, then the records */
    uint32_t length, records;
    dm_pid   pid;                /* whose stream */
    struct link link;            /* the meter link it goes over */
    uint8_t  lossy, final;
    uint8_t  in_flight;          /* sent to another machine; its answer is awaited */
    uint8_t  refused;            /* its filter, on another machine, was full: not offered
                                    again before retry_at */
    uint64_t op;                 /* in flight: the answer's number */
};

#define SPARE_PAGES      8            /* batch pages kept for reuse rather than freed */

static struct sealed sealed_pool[NSEALED];
static void *spare_pages[SPARE_PAGES];
static int nspare;
static struct sealed *free_sealed, *outbox_head, *outbox_tail;
static uint32_t nfree_sealed;
static uint64_t message_counter, message_id_base, retry_at = NO_TIME;
/* No batch is old enough to go before this machine-clock time: lowered
 * when a batch gets its first record, made exact again by meter_tick's scan
 * when it comes. So the timer, programmed after every kernel event, does
 * not scan every process for it. */
static uint64_t age_deadline = NO_TIME;
static uint32_t metered_count;       /* processes with a batch page or a meter link */
int meter_work, meter_waiting_room;
static struct {
    uint64_t records, batches;   /* made (counted when sealed, or when lost for room); sent and taken */
    uint64_t dropped;            /* records of lossy batches a full filter could not take */
    uint64_t filter_ended;       /* records whose filter had ended (orphaned) */
    uint64_t machine_down;       /* records whose filter's machine was down (orphaned) */
    uint64_t no_room;            /* records lost because the outbox or memory was full */
    uint64_t waits;              /* times a process was held for its batches */
} counters;

void meter_init(void)
{
    message_id_base = METER_MESSAGE_ID(this_machine, boot_epoch, 0);
    for (int i = NSEALED - 1; i >= 0; i--) {
        sealed_pool[i].next = free_sealed;
        free_sealed = &sealed_pool[i];
        nfree_sealed++;
    }
}

/* A fresh message id: unique across machines and boots (machine, epoch,
 * counter), so the SEND, MESSAGEQUEUED and RECEIVE records of a message
 * carry the same one wherever they are written. */
uint64_t meter_message_id(void)
{
    return message_id_base | ++message_counter;
}

/* ---- batches ---- */

/* A page for a batch: one that carried an earlier batch if there is one
 * (no allocation, and no zeroing: records fill it), else a new one. */
static uint8_t *batch_page(void)
{
    return nspare ? spare_pages[--nspare] : page_alloc_dirty();
}

static void batch_page_done(uint8_t *page)
{
    if (nspare < SPARE_PAGES)
        spare_pages[nspare++] = page;
    else
        page_free(page);
}

static void hold(struct proc *p)
{
    if (p->held & HELD_METER)
        return;
    counters.waits++;
    p->held |= HELD_METER;
    runq_remove(p);
    if (p == current)
        request_reschedule();
}

static void release(struct proc *p)
{
    p->held &= (uint8_t)~HELD_METER;
    if (p->state == PS_RUNNABLE && p != current && !p->held)
        runq_add(p);
}

/* Move p's batch to the outbox (`final`: its stream ends with it). A
 * batch with no records goes only to carry a count of lost ones. When the
 * outbox is full the records are lost, and counted in the stream's next
 * batch; a final batch always finds room (FINAL_RESERVE: each process has
 * one), so that the count of every record its stream lost reaches the
 * filter however full the outbox was. */
static void seal(struct proc *p, int final)
{
    struct meter_state *s = &p->meter;
    if (!s->batch && (s->lost || final) && (s->batch = batch_page()))
        s->used = sizeof(struct meter_batch);
    if (!s->batch || (s->count == 0 && s->lost == 0))
        return;
    if (nfree_sealed <= (final ? 0 : FINAL_RESERVE)) {   /* the outbox is full: lost, and counted */
        counters.records += s->count;
        counters.no_room += s->count;
        s->lost += s->count;
        s->count = 0;
        s->used = sizeof(struct meter_batch);
        return;
    }
    struct sealed *e = free_sealed;
    free_sealed = e->next;
    nfree_sealed--;
    counters.records += s->count;
    struct meter_batch *b = (struct meter_batch *)s->batch;
    b->magic = METER_BATCH_MAGIC;
    b->records = s->count;
    b->final = (uint16_t)final;
    b->pid = p->pid;
    b->lost = s->lost;
    *e = (struct sealed){ .page = s->batch, .length = s->used, .records = s->count, .pid = p->pid,
                          .link = s->link, .lossy = s->lossy, .final = (uint8_t)final };
    if (outbox_tail)
        outbox_tail->next = e;
    else
        outbox_head = e;
    outbox_tail = e;
    s->batch = final ? 0 : batch_page();   /* the next records' (record_begin) */
    s->count = 0;
    s->used = sizeof(struct meter_batch);
    s->lost = 0;
    s->waiting++;
    meter_work = 1;
}

/* p's PROCTIME for a record written now: what it would be unmetered, the
 * meter's count so far left out (probes.h). */
static uint64_t meter_proctime(const struct proc *p)
{
    if (p != current)
        return p->proctime;
    if (in_kernel_work)
        return p->proctime + kernel_work_uncharged;
    return p->proctime - last_switch_instret - meter_count;
}

static __attribute__((noinline)) void record_lost(struct meter_state *s);

/* Room for a record of `type` with a body of body_size bytes in p's batch:
 * the header is filled in and the body's address returned (0 if there was
 * no memory for a batch: the record is counted lost). A metered process
 * has a batch page from the start, and a fresh one each time one is sealed
 * (seal), so a probe calls nothing before its record; a batch always has
 * room for the largest record: record_end seals it when it might not.
 * Inlined into each probe. */
static inline __attribute__((always_inline)) void *record_begin(struct proc *p, uint32_t type, uint32_t body_size,
                                                                uint64_t time, uint64_t pc)
{
    struct meter_state *s = &p->meter;
    uint32_t size = sizeof(struct meter_header) + body_size;
    if (!s->batch) {
        record_lost(s);
        return 0;
    }
    if (s->count == 0) {
        s->oldest = machine_clock_ns();
        if (s->oldest + s->max_age_ns < age_deadline)
            age_deadline = s->oldest + s->max_age_ns;
    }
    struct meter_header *h = (struct meter_header *)(s->batch + s->used);
    h->machine = this_machine;
    h->traceType = type;
    h->time = time;
    h->procTime = meter_proctime(p);
    h->pc = pc;
    h->load = runnable_count();
    h->length = size;
    h->pid = p->pid;
    h->sequence = s->sequence++;
    s->used += size;
    s->count++;
    return h + 1;
}

/* There was no memory for a batch when the last was sealed: this record is
 * lost, and counted; the next may find a page. */
static void record_lost(struct meter_state *s)
{
    s->sequence++;
    s->lost++;
    counters.records++;
    counters.no_room++;
    if ((s->batch = batch_page()))
        s->used = sizeof(struct meter_batch);
}

/* After a record: seal a batch that is full, or that the largest record
 * might not fit in. */
static inline __attribute__((always_inline)) void record_end(struct proc *p)
{
    struct meter_state *s = &p->meter;
    if (s->count >= METER_BATCH_RECORDS || s->used + METER_RECORD_MAX > DM_MSG_MAX)
        seal(p, 0);
}

/* ---- where in its program the process is: a record's pc ----
 * meter/record.h (meter_pc_is_return_address) says which records carry
 * which. call_site and left_user_mode_at are a load each: the records of
 * the message path pay nothing more for their pc. */

/* The call site of the kernel call p is in, or waits in: the return
 * address of its kernel-call stub. The stubs (user/lib/kcall.S) are leaves
 * that do not touch ra, so at their ecall ra holds their caller's return
 * address: the instruction after the call, in the process's own code. */
static inline uint64_t call_site(const struct proc *p)
{
    return p->tf.regs[1];
}

/* Where p last left user mode: after the ecall of a kernel call it is in,
 * or the instruction an interrupt or a fault stopped it at (its entry point
 * if it has not run yet). */
static inline uint64_t left_user_mode_at(const struct proc *p)
{
    return p->tf.sepc;
}

/* The pc of p's records as it ends: its call site when it ends by a kernel
 * call of its own (STOPTASK, or asking its kernel to destroy it), the one
 * the kernel is doing now; else, killed or faulted, where it left user mode. */
static uint64_t exit_site(const struct proc *p)
{
    return p == current && CSR_READ(scause) == SCAUSE_ECALL_U ? call_site(p) : left_user_mode_at(p);
}

/* A CREATELINK or DESTROYLINK record's pc, by how the link came or went. */
static uint64_t link_site(const struct proc *p, uint32_t how)
{
    if (how == ML_MOVED)
        return left_user_mode_at(p);   /* the process manager's doing, not p's */
    return how == ML_EXIT ? exit_site(p) : call_site(p);
}

/* ---- the probes ---- */

/* RECEIVECALL: p enters RECEIVE, ARECEIVE or CALL's wait; the record, for
 * CALL's sending to finish (meter_send_end). */
static inline __attribute__((always_inline)) struct meter_RECEIVECALL *receivecall_record(struct proc *p,
                                                                                          uint32_t channel,
                                                                                          uint32_t kind,
                                                                                          uint32_t empty)
{
    struct meter_RECEIVECALL *b =
        record_begin(p, MT_RECEIVECALL, sizeof *b, machine_clock_ns(), call_site(p));
    if (b) {
        *b = (struct meter_RECEIVECALL){ .channel = channel, .kind = kind, .empty = empty };
        record_end(p);
    }
    return b;
}

/* SEND, or CALL's send half, is about to go: the message gets its id; the
 * SEND record (and CALL's RECEIVECALL) are written now, so that they come
 * before any record of the message's receipt, and finished by
 * meter_send_end, while their batch is still being filled. The slots are
 * the kernel call's own arguments. */
void meter_send_begin(struct proc *p, struct outgoing *o, int call, struct meter_sending *s)
{
    struct message *m = &o->message;
    m->msgid = meter_message_id();
    s->begun = 1;
    s->via_slot = (int32_t)TF_A(&p->tf, 0);
    s->via_to = o->via->dest;
    s->via_reply = (o->via->flags & LINK_REPLY) != 0;
    s->pass_slot = m->link ? (int32_t)TF_A(&p->tf, 3) : -1;
    s->pass_to = m->link ? m->link->dest : 0;
    s->send = METERED(p, MT_SEND) ? record_begin(p, MT_SEND, sizeof *s->send, machine_clock_ns(), call_site(p))
                                  : 0;
    if (s->send) {
        *s->send = (struct meter_SEND){
            .toTask = s->via_to, .messageId = m->msgid, .code = m->code, .passTask = s->pass_to,
            .channel = m->channel, .size = m->length, .sendLink = s->via_slot, .passLink = s->pass_slot,
            .call = (uint32_t)call,
        };
        record_end(p);
    }
    s->receivecall = call && METERED(p, MT_RECEIVECALL) ? receivecall_record(p, DM_REPLY_CHANNEL, 2, 0) : 0;
}

/* The kernel call ended with `result`: a failure to send is marked in the
 * records; after a success, the links that left the table with the
 * message are recorded (a passed link; a reply link, used up). */
void meter_send_end(struct proc *p, const struct meter_sending *s, int64_t result)
{
    if (result < 0 && result != RESULT_PENDING) {
        if (s->send)
            s->send->status = (int32_t)result;
        if (s->receivecall)
            s->receivecall->empty = 1;
        return;
    }
    if (METERED(p, MT_DESTROYLINK)) {
        if (s->pass_slot >= 0)
            meter_link_destroyed(p, s->pass_slot, s->pass_to, ML_PASSED);
        if (s->via_reply)
            meter_link_destroyed(p, s->via_slot, s->via_to, ML_USED);
    }
}

void meter_receivecall(struct proc *p, uint32_t channel, uint32_t kind, uint32_t empty)
{
    receivecall_record(p, channel, kind, empty);
}

/* Message m is handed to r; its links went to these slots (or -1). */
void meter_receive(struct proc *r, const struct message *m, int32_t link_slot, int32_t reply_slot)
{
    uint64_t now = machine_clock_ns();
    struct meter_RECEIVE *b = record_begin(r, MT_RECEIVE, sizeof *b, now, call_site(r));
    if (b) {
        *b = (struct meter_RECEIVE){ .fromTask = m->sender, .messageId = m->msgid ? m->msgid : meter_message_id(),
                                     .code = m->code, .channel = m->channel, .size = m->length,
                                     .linkSlot = link_slot, .replySlot = reply_slot };
        record_end(r);
    }
}

/* Message m entered r's queue (r was not waiting for it): it gets an id
 * now if its sender gave it none, for r's RECEIVE of it to match. */
void meter_queued(struct proc *r, struct message *m, uint32_t queue_length)
{
    if (!m->msgid)
        m->msgid = meter_message_id();
    struct meter_MESSAGEQUEUED *b = record_begin(r, MT_MESSAGEQUEUED, sizeof *b, machine_clock_ns(), left_user_mode_at(r));
    if (b) {
        *b = (struct meter_MESSAGEQUEUED){ .fromTask = m->sender, .messageId = m->msgid, .code = m->code,
                                           .channel = m->channel, .size = m->length, .queueLength = queue_length };
        record_end(r);
    }
}

void meter_link_created(struct proc *p, int slot, const struct link *l, uint32_t how)
{
    struct meter_CREATELINK *b = record_begin(p, MT_CREATELINK, sizeof *b, machine_clock_ns(), link_site(p, how));
    if (b) {
        *b = (struct meter_CREATELINK){ .toTask = l->dest, .code = l->code, .channel = l->channel,
                                        .slot = slot, .how = how, .flags = l->flags };
        record_end(p);
    }
}

void meter_link_destroyed(struct proc *p, int slot, dm_pid to, uint32_t how)
{
    struct meter_DESTROYLINK *b = record_begin(p, MT_DESTROYLINK, sizeof *b, machine_clock_ns(), link_site(p, how));
    if (b) {
        *b = (struct meter_DESTROYLINK){ .toTask = to, .slot = slot, .how = how };
        record_end(p);
    }
}

void meter_movedata(struct proc *p, const struct move *m, int64_t to_link, int64_t from_link)
{
    struct meter_MOVEDATA *b = record_begin(p, MT_MOVEDATA, sizeof *b, machine_clock_ns(), call_site(p));
    if (b) {
        *b = (struct meter_MOVEDATA){ .toTask = m->dst, .fromTask = m->src, .size = m->length,
                                      .toLink = (int32_t)to_link, .fromLink = (int32_t)from_link };
        record_end(p);
    }
}

/* STARTPROCESS (a = 1 if resumed) and STOPPROCESS (a = who asked); a
 * stopped process's batch goes at once. */
void meter_process_event(struct proc *p, uint32_t type, uint64_t a)
{
    uint64_t *b = record_begin(p, type, 8, machine_clock_ns(), left_user_mode_at(p));
    if (b) {
        *b = a;               /* STARTPROCESS: resumed, reserved 0; STOPPROCESS: by */
        record_end(p);
    }
    if (type == MT_STOPPROCESS)
        seal(p, 0);
}

/* TODO(lab event, part 2): the PREEMPT record's writer, which
 * probes.h's probe_preempt calls (docs/labs/event.md). */

static void createprocess_record(struct proc *p, dm_pid parent)
{
    struct meter_CREATEPROCESS *b = record_begin(p, MT_CREATEPROCESS, sizeof *b, p->created_ns, left_user_mode_at(p));
    if (b) {
        *b = (struct meter_CREATEPROCESS){ .parent = parent };
        memcpy(&b->nameLow, p->name, 16);
        record_end(p);
    }
}

/* Metering of p stops: the meter link and flags go, and its batch is
 * sealed as its stream's last (`keep`) or thrown away. A process that is
 * not metered (never, or no more: its filter is gone) has no stream to
 * end; a count of records its last stream lost stays for its next. */
static void meter_stop(struct proc *p, int keep)
{
    if (keep && p->meter.link.state != LINK_EMPTY)
        seal(p, 1);
    if (p->meter.batch)
        batch_page_done(p->meter.batch);
    p->meter.batch = 0;
    p->meter.count = 0;
    p->meter.flags = 0;
    if (p->meter.link.state != LINK_EMPTY) {
        link_clear(&p->meter.link);
        metered_count--;
    }
}

/* p ends: its DESTROYPROCESS record, then its last batch. */
void meter_exit(struct proc *p, int64_t status)
{
    meter_count_on();
    if (METERED(p, MT_DESTROYPROCESS)) {
        struct meter_DESTROYPROCESS *b =
            record_begin(p, MT_DESTROYPROCESS, sizeof *b, machine_clock_ns(), exit_site(p));
        if (b)
            b->status = status;
    }
    meter_stop(p, 1);
    meter_probe_end();
}

/* p has moved to this machine (net/migrate.c): its MIGRATE record. */
void meter_migrated(struct proc *p, uint32_t from, uint64_t took, uint64_t bytes, uint32_t messages)
{
    struct meter_MIGRATE *b = record_begin(p, MT_MIGRATE, sizeof *b, machine_clock_ns(), p->tf.sepc);
    if (b) {
        *b = (struct meter_MIGRATE){ .fromMachine = from, .toMachine = this_machine, .took = took,
                                     .bytes = bytes, .messages = messages, .moves = p->moves };
        record_end(p);
    }
}

/* p leaves for another machine (net/migrate.c), its metering with it:
 * *out gets its state as it is, with the age of the batch's first record
 * in `oldest` (machine clocks differ), and the batch being filled is
 * returned (its page, or 0): its stream goes on there. p is metered here
 * no more. The move has waited until no sealed batch of p's is left. */
uint8_t *meter_take(struct proc *p, struct meter_state *out)
{
    uint8_t *batch = p->meter.batch;
    *out = p->meter;
    out->batch = 0;
    out->waiting = 0;
    out->oldest = p->meter.count ? machine_clock_ns() - p->meter.oldest : 0;
    if (!batch)                         /* none since a seal found no memory */
        out->used = 0, out->count = 0;
    if (p->meter.link.state != LINK_EMPTY)
        metered_count--;
    memset(&p->meter, 0, sizeof p->meter);
    return batch;
}

/* p has arrived with the metering meter_take took (`m`) and its batch
 * (`batch`, or 0): metered here as it was, its stream numbered on. */
void meter_give(struct proc *p, const struct meter_state *m, uint8_t *batch)
{
    uint64_t now = machine_clock_ns();
    p->meter = *m;
    p->meter.batch = batch;
    if (!batch) {                       /* a page for its next records (record_begin) */
        p->meter.batch = p->meter.link.state != LINK_EMPTY ? batch_page() : 0;
        p->meter.count = 0;
        p->meter.used = p->meter.batch ? sizeof(struct meter_batch) : 0;
    }
    p->meter.oldest = now > m->oldest ? now - m->oldest : 0;
    if (p->meter.count && p->meter.oldest + p->meter.max_age_ns < age_deadline)
        age_deadline = p->meter.oldest + p->meter.max_age_ns;
    if (p->meter.link.state != LINK_EMPTY)
        metered_count++;
    meter_work = 1;                     /* and the timer must know the batch's bound */
}

/* KOP_METER: meter p into `meter_link` with selection flags `flags`
 * (0: stop metering p). Options: bit 0 lossy; bits 32.. the batches'
 * maximum age in ms (0: 100 ms). Without a link, p's flags and options
 * change. The first time p is metered, its CREATEPROCESS record is written,
 * time-stamped when p was created. */
static int64_t install(struct proc *p, uint64_t flags, uint64_t options, dm_pid parent, struct link *meter_link);

int64_t meter_install(struct proc *p, uint64_t flags, uint64_t options, dm_pid parent, struct link *meter_link)
{
    meter_count_on();
    int64_t err = install(p, flags, options, parent, meter_link);
    meter_probe_end();
    return err;
}

static int64_t install(struct proc *p, uint64_t flags, uint64_t options, dm_pid parent, struct link *meter_link)
{
    if (flags & ~(uint64_t)METER_ALL_FLAGS)
        return E_INVAL;
    if (flags == 0) {
        meter_stop(p, 1);
        return 0;
    }
    int first = p->meter.link.state == LINK_EMPTY;
    if (meter_link) {
        if (meter_link->dest == p->pid || PID_SLOT(meter_link->dest) == 0)
            return E_INVAL;             /* never into itself, nor to a kernel */
        if (!first)
            seal(p, 0);                 /* what was recorded goes where it was meant to */
    } else if (first) {
        return E_BADREQ;
    }
    uint64_t age_ms = options >> 32;
    p->meter.flags = (uint32_t)flags;
    p->meter.lossy = options & 1;
    p->meter.max_age_ns = age_ms ? age_ms * 1000000ull : DEFAULT_AGE_NS;
    if (p->meter.count && p->meter.oldest + p->meter.max_age_ns < age_deadline)
        age_deadline = p->meter.oldest + p->meter.max_age_ns;
    if (meter_link) {
        p->meter.link = *meter_link;
        link_clear(meter_link);
    }
    if (first) {
        if (!p->meter.batch && (p->meter.batch = batch_page()))   /* its first records' (record_begin) */
            p->meter.used = sizeof(struct meter_batch);
        metered_count++;
        p->meter.sequence = 0;          /* a new stream: its last one ended with a final batch */
        if (METERED(p, MT_CREATEPROCESS))
            createprocess_record(p, parent);
    }
    if (p->meter.lossy && (p->held & HELD_METER))
        release(p);
    meter_work = 1;                     /* and the timer must know the new bound */
    return 0;
}

/* KOP_METER_FLUSH: seal every batch now; the answer goes over the
 * kernel's link in `reply_slot` once the outbox is empty, or after
 * wait_ns (0: FLUSH_WAIT_NS) with E_QFULL if a filter still has not taken
 * everything (the process manager flushes before halting, which must not
 * hang on a filter that is stuck, and before a filter stops, which must
 * first have every record on its way to it). */
#define FLUSH_WAIT_NS 2000000000ull
static int flush_reply_slot = -1;
static uint64_t flush_deadline = NO_TIME;

static void flush_answer(int64_t status)
{
    int slot = flush_reply_slot;
    flush_reply_slot = -1;
    flush_deadline = NO_TIME;
    kernel_reply_slot(slot, KOP_METER_FLUSH, status, 0, 0, 0);
}

int64_t meter_flush_all(int reply_slot, uint64_t wait_ns)
{
    if (flush_reply_slot >= 0)
        return E_STATE;
    for (int i = 1; i < NPROC; i++)
        if (procs[i].state != PS_FREE && procs[i].meter.count)
            seal(&procs[i], 0);
    flush_reply_slot = reply_slot;
    flush_deadline = machine_clock_ns() + (wait_ns ? wait_ns : FLUSH_WAIT_NS);
    meter_work = 1;
    return 0;
}

/* ---- the outbox ---- */

/* Batch e is done with: taken, thrown away or orphaned. */
static void finish(struct sealed *e)
{
    struct proc *p = proc_lookup(e->pid);
    if (p && p->meter.waiting && --p->meter.waiting == 0 && (p->held & HELD_METER))
        release(p);
    if (e->page)
        batch_page_done(e->page);
    e->next = free_sealed;
    free_sealed = e;
    nfree_sealed++;
}

static void unlink_sealed(struct sealed *e, struct sealed *prev)
{
    if (prev)
        prev->next = e->next;
    else
        outbox_head = e->next;
    if (outbox_tail == e)
        outbox_tail = prev;
}

/* A lossy batch the filter could not take: its records are counted in its
 * stream's next batch (waiting in the outbox, or still being filled; or,
 * if the process is metered again, its next stream's first). */
static void drop(struct sealed *e)
{
    counters.dropped += e->records;
    uint64_t lost = e->records + ((struct meter_batch *)e->page)->lost;
    struct sealed *later = e->next;
    while (later && later->pid != e->pid)
        later = later->next;
    struct proc *p = proc_lookup(e->pid);
    if (later)
        ((struct meter_batch *)later->page)->lost += lost;
    else if (p)
        p->meter.lost += lost;
    finish(e);
}

/* A batch whose filter has ended (E_DEAD) or whose filter's machine is
 * down (E_NODE): thrown away, its records counted lost by that cause, and
 * its process is metered into that filter no more (with the records it
 * had not sealed yet). What the stream lost stays in the process's count
 * (meter.lost): if it is metered again, into another filter, the first
 * batch of its new stream carries the count there, and so into that
 * filter's log. */
static void orphan(struct sealed *e, int error)
{
    uint64_t *cause = error == E_NODE ? &counters.machine_down : &counters.filter_ended;
    *cause += e->records;
    struct proc *p = proc_lookup(e->pid);
    if (p)
        p->meter.lost += e->records + ((struct meter_batch *)e->page)->lost;
    if (p && p->meter.flags && p->meter.link.dest == e->link.dest) {
        kprintf("machine %u: meter: %s (%u.%u): %s; metering stops\n", this_machine, p->name,
                PID_MACHINE(p->pid), PID_SLOT(p->pid),
                error == E_NODE ? "its filter's machine is down" : "its filter has ended");
        *cause += p->meter.count;
        p->meter.lost += p->meter.count;
        meter_stop(p, 0);
    }
    finish(e);
}

/* Machine `machine` is down, or rebooted (net/remote.c, fail_machine):
 * every batch for a filter there, waiting or in flight, is orphaned, so
 * that no lossless process waits for an answer that will not come. */
void meter_machine_down(uint32_t machine, int error)
{
    struct sealed *prev = 0, *e = outbox_head;
    while (e) {
        struct sealed *next = e->next;
        if (PID_MACHINE(e->link.dest) == machine) {
            unlink_sealed(e, prev);
            orphan(e, error);
        } else {
            prev = e;
        }
        e = next;
    }
    meter_work = 1;
}

/* The machines that batches in flight wait on, marked in waited[] (the
 * transport's pings watch them: a machine that dies after taking a batch
 * and before answering is found down). Whether there is any. */
int meter_mark_waited(uint8_t *waited)
{
    int any = 0;
    for (struct sealed *e = outbox_head; e; e = e->next)
        if (e->in_flight)
            waited[PID_MACHINE(e->link.dest)] = any = 1;
    return any;
}

static int full_error(int64_t error)
{
    return error == E_QFULL || error == E_NOMEM;
}

/* A batch to a filter on this machine: into its buffer if it waits, else
 * into its queue, which keeps the batch's page itself rather than a copy
 * (then the page is the queue's: e->page is cleared). */
static int send_local(struct sealed *e)
{
    struct proc *r = proc_lookup(e->link.dest);
    if (!r)
        return E_DEAD;
    uint32_t donate = r->state == PS_RECEIVING ? 0 : MSG_DONATED_PAGE;   /* a waiting receiver gets a copy */
    struct message m = {
        .sender = kernel_proc->pid, .code = e->link.code, .channel = e->link.channel,
        .flags = DM_MSG_FROM_KERNEL | donate, .length = e->length, .data = e->page,
    };
    int err = msg_deliver(r, &m, e->link.reply_id);
    if (err == 0 && donate && !(m.flags & MSG_DONATED_PAGE))
        e->page = 0;           /* the queue took the page itself */
    return err;
}

/* Send what the outbox holds, in order per destination; batches that
 * cannot go yet wait, and so (unless lossy) do their processes. This is
 * the kernel's work (defs.h, kernel_work_begin), not that of the process
 * that happens to be current: it sends every process's sealed batches, to
 * this machine's filter or over the network to another's, and a process's
 * CPU time must not depend on where the filter or its partners are. So its
 * callers hold a kernel_work span: the interrupts' (trap.c, proc.c, the
 * safe point), the end of a metered kernel call (syscall.c), a RECEIVE
 * that may have made room (probes.h, probe_message_taken). */
/* probes.h, probe_message_taken: out of line, off the message path. */
__attribute__((noinline)) void meter_push_for_room(void)
{
    kernel_work_begin();
    meter_push();
    kernel_work_end();
}

void meter_push(void)
{
    meter_work = 0;
    dm_pid busy[16];                  /* destinations that take nothing more this time */
    uint32_t nbusy = 0;
    struct sealed *prev = 0, *e = outbox_head;
    while (e) {
        struct sealed *next = e->next;
        uint32_t b = 0;
        while (b < nbusy && busy[b] != e->link.dest)
            b++;
        int64_t r = 0;
        int waits = e->in_flight || (e->refused && retry_at != NO_TIME);
        if (b == nbusy && !waits) {
            e->refused = 0;
            if (PID_MACHINE(e->link.dest) != this_machine) {
                uint64_t op = new_reply_id();
                if ((r = remote_send_batch(&e->link, e->page, e->length, op)) == 0) {
                    e->in_flight = 1;
                    e->op = op;
                }
            } else if ((r = send_local(e)) == 0) {
                counters.batches++;
                unlink_sealed(e, prev);
                finish(e);
                e = next;
                continue;
            }
        }
        if (r && !full_error(r)) {            /* the filter is gone */
            unlink_sealed(e, prev);
            orphan(e, (int)r);
            e = next;
            continue;
        }
        if (r && e->lossy && !e->final) {     /* lossy: thrown away, counted */
            unlink_sealed(e, prev);
            drop(e);
            e = next;
            continue;
        }
        if (r && retry_at == NO_TIME) {
            retry_at = machine_clock_ns() + RETRY_NS;
            timer_program();                  /* the retry must wake an idle machine */
        }
        if (b == nbusy && nbusy < sizeof busy / sizeof busy[0])
            busy[nbusy++] = e->link.dest;     /* in flight, or full: the rest waits its turn */
        prev = e;
        e = next;
    }
    meter_waiting_room = outbox_head != 0;
    if (!outbox_head && flush_reply_slot >= 0)
        flush_answer(0);
    for (e = outbox_head; e; e = e->next) {   /* lossless streams with a backlog wait for it */
        struct proc *p = proc_lookup(e->pid);
        if (p && !p->meter.lossy && p->meter.waiting > METER_BACKLOG)
            hold(p);
    }
}

/* The answer for the batch sent to another machine as `op` (net/remote.c). */
void meter_answered(uint64_t op, int64_t status)
{
    struct sealed *prev = 0, *e = outbox_head;
    while (e && !(e->in_flight && e->op == op))
        prev = e, e = e->next;
    if (!e)
        return;
    e->in_flight = 0;
    meter_work = 1;
    if (status >= 0) {
        counters.batches++;
        unlink_sealed(e, prev);
        finish(e);
    } else if (!full_error(status)) {
        unlink_sealed(e, prev);
        orphan(e, (int)status);
    } else if (e->lossy && !e->final) {
        unlink_sealed(e, prev);
        drop(e);
    } else {
        e->refused = 1;
        if (retry_at == NO_TIME) {
            retry_at = machine_clock_ns() + RETRY_NS;
            timer_program();
        }
    }
}

/* The clock: batches old enough go; a full filter is tried again. */
void meter_tick(uint64_t now)
{
    if (flush_reply_slot >= 0 && now >= flush_deadline)
        flush_answer(E_QFULL);
    if (metered_count == 0 && !outbox_head)
        return;
    if (now >= age_deadline) {
        age_deadline = NO_TIME;
        for (int i = 1; i < NPROC; i++) {
            struct proc *p = &procs[i];
            if (p->state == PS_FREE || !p->meter.count)
                continue;
            if (now - p->meter.oldest >= p->meter.max_age_ns)
                seal(p, 0);
            else if (p->meter.oldest + p->meter.max_age_ns < age_deadline)
                age_deadline = p->meter.oldest + p->meter.max_age_ns;
        }
    }
    if (now >= retry_at) {
        retry_at = NO_TIME;
        meter_work = 1;
    }
}

/* When meter_tick has work next (NO_TIME: none). */
uint64_t meter_next_time(void)
{
    if (meter_work)
        return 0;                         /* sealed batches wait: at once */
    if (metered_count == 0 && !outbox_head)
        return NO_TIME;
    uint64_t soonest = outbox_head ? retry_at : NO_TIME;
    if (flush_deadline < soonest)
        soonest = flush_deadline;
    return age_deadline < soonest ? age_deadline : soonest;
}

/* At halt: what the meter did, and every record made that no filter took,
 * by why it was lost. The power goes with records still on their way:
 * those of batches sealed but not taken (the outbox, and batches in
 * flight), and those of batches not sealed yet, made after the flush at
 * halt or while their filter was full. They are made and lost too:
 * counted here, as unsent at halt. */
void meter_print_counters(void)
{
    uint64_t unsent = 0;
    for (struct sealed *e = outbox_head; e; e = e->next)
        unsent += e->records;
    for (int i = 1; i < NPROC; i++) {
        if (procs[i].state != PS_FREE) {
            counters.records += procs[i].meter.count;   /* made, never sealed */
            unsent += procs[i].meter.count;
        }
    }
    uint64_t orphaned = counters.filter_ended + counters.machine_down;
    uint64_t lost = orphaned + counters.dropped + counters.no_room + unsent;
    if (counters.records)
        kprintf("machine %u: meter: %lu records, %lu batches taken, %lu dropped (lossy), %lu orphaned, "
                "%lu lost for room, %lu unsent at halt, %lu waits\n", this_machine, counters.records,
                counters.batches, counters.dropped, orphaned, counters.no_room, unsent, counters.waits);
    if (lost)
        kprintf("machine %u: meter: %lu records lost: %lu their filter's machine was down, %lu their filter had "
                "ended, %lu dropped (lossy), %lu no room, %lu unsent at halt\n", this_machine, lost,
                counters.machine_down, counters.filter_ended, counters.dropped, counters.no_room, unsent);
}
