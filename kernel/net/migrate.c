/*
 * migrate.c — moving a running process to another machine, as DEMOS/MP
 * does (Powell and Miller, "Process Migration in DEMOS/MP", SOSP 1983, §3;
 * docs/migration.md). The process manager asks the kernel of the machine
 * the process runs on (KOP_MIGRATE); that kernel, the SOURCE, and the
 * DESTINATION's kernel do the rest with kernel messages over the reliable
 * transport, which delivers them exactly once and in order:
 *
 *  1. The process is taken out of execution (HELD_MIGRATING). What arrives
 *     for it meanwhile is delivered as usual, to be taken when it runs
 *     again. It moves once it waits for no other machine's kernel: a SEND
 *     or MOVEDATA of its own under way, the send half of a CALL that has
 *     not left yet, and meter batches its filter has not taken are waited
 *     for (at_rest), up to REST_WAIT_NS.
 *  2. The destination is asked to take it (RM_MIGRATE): it keeps a process
 *     slot (PS_ARRIVING) and, until the process has arrived, sends back to
 *     the source what comes for it (location.c, LOCATION_ARRIVING).
 *  3-5. At once, in one step of the source's kernel (leave): the process
 *     leaves the process table; its state (registers, links, its wait, its
 *     metering with the batch it is filling), its memory and the messages
 *     queued for it become the parts of a departure, sent in that order
 *     (RM_MIGRATE_PART, built as the transport takes them: migrate_build),
 *     the last one PART_DONE; a forwarding address (location.c,
 *     LOCATION_FORWARD) takes its place, and what arrives for it from then
 *     on is sent on (remote.c, forward) behind its parts.
 *  6-7. At PART_DONE the destination's kernel installs it, under its own
 *     id, and restarts it (arrive): a CALL it waits in is answered there.
 *     It tells the process's home where it is, the kernels of the callers
 *     whose reply links it holds that their wait depends on this machine,
 *     and the process manager (DM_NOTICE_MOVED); it writes the MIGRATE
 *     record; its answer to PART_DONE ends the request.
 *
 * If the destination fails before its answer to RM_MIGRATE, the process
 * stays and runs on. Once it has left, it is lost if the destination fails
 * before it has arrived: the source ends it for the process manager
 * (DM_EXIT_LOST). It is never in both places.
 *
 * Ending a move (answering the process manager, giving back what it held)
 * sends messages, which must not happen inside the transport's work, where
 * the events that end a move are seen: it is done at the next tick
 * (migrate_tick), as soon as the timer fires.
 */
#include "defs.h"
#include "netframe.h"
#include "probes.h"
#include "remote.h"

#define DEPARTURES     4                 /* processes moving away at once */
#define ARRIVALS       8                 /* processes arriving at once */
#define REST_WAIT_NS   10000000000ull    /* how long a process may take to come to rest */
#define POLL_NS        1000000ull        /* while one is awaited: look again every 1 ms */
#define PAGES_PER_PART 15                /* of memory in one message (NETFRAME_MAX_MESSAGE) */
#define SPARE_PAGES    256               /* free memory a destination keeps besides what arrives */
#define NO_TIME        UINT64_MAX

/* ---- the kernel messages ---- */

struct rm_migrate {             /* RM_MIGRATE: keep a slot for process pid -> RM_RESULT */
    struct rm_header h;
    dm_pid   pid;
    uint32_t pages;             /* of memory it has */
    uint32_t moves;             /* this move's number */
};

struct rm_migrate_cancel {      /* RM_MIGRATE_CANCEL: the slot is not needed */
    struct rm_header h;
    dm_pid   pid;
};

enum part_kind { PART_STATE = 1, PART_PAGES, PART_MESSAGE, PART_DONE };

struct rm_migrate_part {        /* RM_MIGRATE_PART, then the part's body */
    struct rm_header h;         /* PART_DONE: waiter (the source's kernel) and op -> RM_RESULT */
    dm_pid   pid;
    uint32_t kind;              /* enum part_kind */
    uint32_t count;             /* PART_STATE: bytes of the meter batch after the state;
                                   PART_PAGES: pages */
};

/* PART_STATE's body: what moves of a process besides its memory and its
 * queued messages; then `count` bytes of its meter batch. */
struct moved_state {
    struct trapframe tf;
    uint64_t fp_regs[33];
    uint8_t  state;             /* enum dm_proc_state */
    uint8_t  held;              /* HELD_STOPPED, or 0 */
    uint8_t  fp_used;
    uint8_t  reserved;
    uint32_t moves;             /* this move's number */
    char     name[24];
    uint64_t heap_start, brk, pages;
    uint64_t proctime;
    uint64_t age_ns;            /* since it was created */
    uint64_t out_ns;            /* out of execution at the source, until it left */
    uint64_t wait_reply_id;
    uint64_t wait_buf, wait_cap, wait_info;
    uint32_t wait_channel;
    uint32_t queue_len;
    struct remote_wait remote;
    struct meter_state meter;   /* its `oldest` an age, its batch after the state (meter_take) */
    struct link links[DM_NLINKS];
};

/* PART_PAGES's body: PAGES_PER_PART words, each a page's address with its
 * permissions (PTE_R, PTE_W, PTE_X) in the low bits, `count` of them used;
 * then those pages. PART_MESSAGE's: one queued message, then its data. */
struct moved_message {
    dm_pid   sender;
    uint64_t code;
    uint32_t channel, flags, length;
    uint8_t  has_link, has_reply, reserved[2];
    uint64_t msgid;
    struct link link, reply;
};

_Static_assert(sizeof(struct rm_migrate_part) + PAGES_PER_PART * (sizeof(uint64_t) + PAGE_SIZE) <=
                   NETFRAME_MAX_MESSAGE, "a part of memory fits in one kernel message");
_Static_assert(sizeof(struct rm_migrate_part) + sizeof(struct moved_state) + PAGE_SIZE <= NETFRAME_MAX_MESSAGE,
               "a process's state and its meter batch fit in one kernel message");
_Static_assert(sizeof(struct rm_migrate_part) + sizeof(struct moved_message) + DM_MSG_MAX <= NETFRAME_MAX_MESSAGE,
               "a queued message fits in one kernel message");

/* ---- the moves under way ---- */

enum departure_phase {
    DEPART_FREE = 0,
    DEPART_RESTING,             /* held, until it waits for no other machine */
    DEPART_ASKED,               /* RM_MIGRATE sent: the destination's answer is awaited */
    DEPART_READY,               /* a slot is kept there; it must be at rest again to leave */
    DEPART_SENDING,             /* it has left: its parts go */
    DEPART_SENT,                /* PART_DONE is out: the answer is awaited */
    DEPART_ENDED,               /* over, or given up: migrate_tick finishes it */
};

/* A process moving away from this machine. */
struct departure {
    uint8_t  phase;             /* enum departure_phase */
    uint8_t  to;                /* the destination */
    uint8_t  lost;              /* DEPART_ENDED: it left and did not arrive */
    uint8_t  cancel;            /* DEPART_ENDED: the destination keeps a slot to give up */
    int      reply_slot;        /* the request's reply link, in the kernel's table */
    int64_t  result;            /* DEPART_ENDED: the answer: the destination, or an error */
    dm_pid   pid;
    struct proc *p;             /* while it is here */
    uint64_t op;                /* the answer awaited: to RM_MIGRATE, then to PART_DONE */
    uint64_t held_at, give_up;  /* this machine's clock */
    /* Once it has left: */
    uint32_t part;              /* enum part_kind: the part to send next */
    uint64_t part_next_va;      /* PART_PAGES being sent: where the next part starts */
    uint64_t next_va;           /* the memory not sent yet starts here */
    struct moved_state state;
    uint8_t *batch;             /* its meter batch (a page), until PART_STATE is sent */
    uint64_t *pagetable;        /* its memory, until PART_DONE is sent */
    struct queued *queue;       /* its messages not sent yet, in order */
};

/* A process moving to this machine. */
struct arrival {
    uint8_t  active;
    uint8_t  from;              /* the source */
    uint8_t  discard;           /* given up: migrate_tick frees what it holds */
    uint8_t  have_state;        /* PART_STATE has come */
    int      failed;            /* an error on the way (no memory): PART_DONE is refused */
    dm_pid   pid;
    uint32_t moves;             /* the move's number */
    struct proc *p;             /* the slot kept (PS_ARRIVING), its memory filled in as it comes */
    struct moved_state state;
    uint8_t *batch;             /* its meter batch, or 0 */
    struct queued *queue_head, *queue_tail;
    uint32_t queue_len;
    uint64_t state_at;          /* this machine's clock when PART_STATE came */
    uint64_t bytes;             /* of memory come */
};

static struct departure departures[DEPARTURES];
static struct arrival arrivals[ARRIVALS];
static int finishing;                  /* moves ended or arrivals given up wait for migrate_tick */
static uint64_t poll_at = NO_TIME;     /* processes to leave are looked at again then */
static struct {
    uint64_t left, arrived, refused, given_up, lost;
} counters;

static void depart_step(struct departure *d);
static void depart_end(struct departure *d, int64_t result, int cancel);
static void leave(struct departure *d);
static int at_rest(struct proc *p);
static void arrival_asked(uint32_t from, const struct rm_migrate *m);
static void arrival_part(struct arrival *a, const struct rm_migrate_part *h, const uint8_t *body, uint32_t len);
static void arrive(struct arrival *a, const struct rm_header *h);
static void finish_departure(struct departure *d);
static void finish_arrival(struct arrival *a);

/* Moves have ended, or arrivals been given up: migrate_tick finishes them
 * as soon as the timer fires (remote.c looks at once). */
static void finish_later(void)
{
    finishing = 1;
    remote_due_at(0);
}

/* ---- the source ---- */

/* KOP_MIGRATE: move process q->pid to machine arg[0]; answered over
 * `reply`, later (*later), when the move is over. */
int64_t migrate_request(struct dm_kreq *q, struct link *reply, int *later)
{
    struct proc *p = proc_lookup(q->pid);
    if (!p || p == kernel_proc)
        return E_NOTFOUND;
    for (int i = 0; i < DM_NLINKS; i++)
        if (p->links[i].state == LINK_LIVE && PID_SLOT(p->links[i].dest) == 0)
            return E_DEVICE;    /* a link to a kernel names its machine: a device stays with it */
    int64_t to = q->arg[0];
    if (to < 0 || to >= node_count || to == this_machine)
        return E_INVAL;
    if (remote_machine_up((uint32_t)to))
        return E_NODE;
    if (p->state == PS_CREATED || (p->held & HELD_MIGRATING))
        return E_STATE;
    if (!reply)
        return E_BADREQ;
    struct departure *d = 0;
    for (int i = 0; i < DEPARTURES && !d; i++)
        if (departures[i].phase == DEPART_FREE)
            d = &departures[i];
    if (!d)
        return E_NOMEM;
    int slot = kernel_keep_reply(reply);
    if (slot < 0)
        return E_LINKFULL;
    link_clear(reply);
    memset(d, 0, sizeof *d);
    uint64_t now = machine_clock_ns();
    d->phase = DEPART_RESTING;
    d->to = (uint8_t)to;
    d->reply_slot = slot;
    d->pid = p->pid;
    d->p = p;
    d->held_at = now;
    d->give_up = now + REST_WAIT_NS;
    p->held |= HELD_MIGRATING;          /* step 1: out of execution */
    runq_remove(p);
    if (p == current)
        request_reschedule();
    depart_step(d);
    *later = 1;
    return 0;
}

/* Whether p waits for no other machine's kernel, and its filter has taken
 * every batch it sealed: then what it is doing can go on elsewhere. A CALL
 * whose message has left is: its answer, and the failure answer that
 * comes in its place if it was not taken, follow it (remote.c). */
static int at_rest(struct proc *p)
{
    if (p->state == PS_SENDING || p->state == PS_MOVING)
        return 0;
    if (p->state == PS_CALLING && p->remote.active && !p->remote.sent)
        return 0;
    return p->meter.waiting == 0;
}

/* A departure resting (or ready) is looked at again: it asks the
 * destination (or leaves) once the process is at rest, and is given up
 * when that takes too long. */
static void depart_step(struct departure *d)
{
    if (d->phase != DEPART_RESTING && d->phase != DEPART_READY)
        return;
    if (!at_rest(d->p)) {
        if (machine_clock_ns() >= d->give_up)
            depart_end(d, E_STATE, d->phase == DEPART_READY);
        else if (poll_at == NO_TIME)
            remote_due_at(poll_at = machine_clock_ns() + POLL_NS);
        return;
    }
    if (d->phase == DEPART_READY) {
        leave(d);
        return;
    }
    struct rm_migrate m = {                                       /* step 2 */
        .h = { .type = RM_MIGRATE, .waiter = kernel_proc->pid, .op = new_reply_id() },
        .pid = d->pid, .pages = (uint32_t)d->p->pages, .moves = d->p->moves + 1,
    };
    d->op = m.h.op;
    d->phase = DEPART_ASKED;
    if (remote_post(d->to, &m.h, sizeof m, 1))
        depart_end(d, E_NOMEM, 0);
}

/* Steps 3 to 5, in one: the process leaves this machine. Its state,
 * memory and messages become the departure's parts; a forwarding address
 * takes its place. */
static void leave(struct departure *d)
{
    struct proc *p = d->p;
    struct moved_state *s = &d->state;
    uint64_t now = machine_clock_ns();
    fp_take(p);
    s->tf = p->tf;
    memcpy(s->fp_regs, p->fp_regs, sizeof s->fp_regs);
    s->state = p->state;
    s->held = p->held & HELD_STOPPED;
    s->fp_used = p->fp_used;
    s->moves = p->moves + 1;
    memcpy(s->name, p->name, sizeof s->name);
    s->heap_start = p->heap_start;
    s->brk = p->brk;
    s->pages = p->pages;
    s->proctime = proctime_now(p);
    s->age_ns = now - p->created_ns;
    s->out_ns = now - d->held_at;
    s->wait_reply_id = p->wait_reply_id;
    s->wait_buf = p->wait.buf;
    s->wait_cap = p->wait.cap;
    s->wait_info = p->wait.info;
    s->wait_channel = p->wait.channel;
    s->queue_len = p->queue_len;
    s->remote = p->remote;
    memcpy(s->links, p->links, sizeof s->links);
    d->batch = meter_take(p, &s->meter);
    d->queue = p->queue_head;
    p->queue_head = p->queue_tail = 0;
    p->queue_len = 0;
    remote_keep_memory(p->pid);         /* what was to read its memory later reads it now */
    d->pagetable = p->pagetable;
    d->next_va = DM_USER_BASE;
    d->part = PART_STATE;
    d->p = 0;
    proc_departed(p);
    location_set(d->pid, d->to, s->moves, LOCATION_FORWARD);
    d->phase = DEPART_SENDING;
    counters.left++;
    if (remote_post_departure(d->to, d)) {
        d->lost = 1;
        depart_end(d, E_NOMEM, 0);
    }
}

/* The next part of departure d, built into `buffer` (remote.c's flush,
 * when the transport may take it); its length. migrate_part_sent moves on
 * to the next once the transport has taken it. */
uint32_t migrate_build(struct departure *d, uint8_t *buffer)
{
    struct rm_migrate_part *h = (struct rm_migrate_part *)buffer;
    uint8_t *body = buffer + sizeof *h;
    memset(h, 0, sizeof *h);
    h->h.type = RM_MIGRATE_PART;
    h->h.answer_to = (uint8_t)this_machine;
    h->pid = d->pid;
    for (;;) {
        h->kind = d->part;
        if (d->part == PART_STATE) {
            uint32_t batch = d->batch ? d->state.meter.used : 0;
            memcpy(body, &d->state, sizeof d->state);
            if (batch)
                memcpy(body + sizeof d->state, d->batch, batch);
            h->count = batch;
            return sizeof *h + sizeof d->state + batch;
        }
        if (d->part == PART_PAGES) {
            uint64_t *addresses = (uint64_t *)body, va = d->next_va, perm;
            uint8_t *pages = body + PAGES_PER_PART * sizeof(uint64_t), *kernel;
            uint32_t n = 0;
            while (n < PAGES_PER_PART && vm_next_mapped(d->pagetable, &va, &perm, &kernel)) {
                addresses[n] = va | perm;
                memcpy(pages + n * PAGE_SIZE, kernel, PAGE_SIZE);
                n++;
                va += PAGE_SIZE;
            }
            if (n == 0) {
                d->part = PART_MESSAGE;
                continue;
            }
            d->part_next_va = va;
            h->count = n;
            return sizeof *h + PAGES_PER_PART * sizeof(uint64_t) + n * PAGE_SIZE;
        }
        if (d->part == PART_MESSAGE) {
            const struct queued *q = d->queue;
            if (!q) {
                d->part = PART_DONE;
                continue;
            }
            const struct message *m = &q->message;
            struct moved_message *mm = (struct moved_message *)body;   /* the body is 8-byte aligned */
            memset(mm, 0, sizeof *mm);
            mm->sender = m->sender;
            mm->code = m->code;
            mm->channel = m->channel;
            mm->flags = m->flags;
            mm->length = m->length;
            mm->msgid = m->msgid;
            if ((mm->has_link = m->link != 0))
                mm->link = *m->link;
            if ((mm->has_reply = m->reply != 0))
                mm->reply = *m->reply;
            memcpy(body + sizeof *mm, m->data, m->length);
            return sizeof *h + sizeof *mm + m->length;
        }
        h->h.waiter = kernel_proc->pid;          /* PART_DONE: its answer ends the move */
        h->h.op = d->op = new_reply_id();
        return sizeof *h;
    }
}

/* The transport has taken the part migrate_build made: on to the next.
 * Whether there is one. */
int migrate_part_sent(struct departure *d)
{
    switch (d->part) {
    case PART_STATE:
        if (d->batch)
            page_free(d->batch);
        d->batch = 0;
        d->part = PART_PAGES;
        return 1;
    case PART_PAGES:
        d->next_va = d->part_next_va;
        return 1;
    case PART_MESSAGE: {
        struct queued *q = d->queue;
        d->queue = q->next;
        msg_queued_free(q);               /* its links have gone with it */
        return 1;
    }
    default:
        vm_free_space(d->pagetable);
        d->pagetable = 0;
        d->phase = DEPART_SENT;
        return 0;
    }
}

/* The transport could not take a part of d: its destination is down. */
void migrate_departure_failed(struct departure *d, int error)
{
    (void)error;
    if (d->phase != DEPART_SENDING && d->phase != DEPART_SENT)
        return;
    d->lost = 1;
    depart_end(d, E_NODE, 0);
}

/* An error the destination answered, as KOP_MIGRATE's answer lists it
 * (a failure of the transport, E_NODE or E_DEAD, is the destination's
 * machine going down). */
static int64_t as_listed(int64_t status)
{
    return status == E_PROCFULL || status == E_NOMEM || status == E_STATE ? status : E_NODE;
}

/* The destination's answer `op` (remote.c, for an RM_RESULT to this
 * kernel): to RM_MIGRATE, or to PART_DONE. Whether it was a move's. */
int migrate_answered(uint64_t op, int64_t status)
{
    for (int i = 0; i < DEPARTURES; i++) {
        struct departure *d = &departures[i];
        if (d->op != op || (d->phase != DEPART_ASKED && d->phase != DEPART_SENDING && d->phase != DEPART_SENT))
            continue;
        if (d->phase == DEPART_ASKED && status < 0) {
            depart_end(d, as_listed(status), 0);
        } else if (d->phase == DEPART_ASKED) {
            d->phase = DEPART_READY;
            depart_step(d);
        } else if (status >= 0) {
            depart_end(d, d->to, 0);
        } else {
            d->lost = 1;
            depart_end(d, as_listed(status) == E_NOMEM ? E_NOMEM : E_NODE, 0);
        }
        return 1;
    }
    return 0;
}

/* The move is over (result: the destination) or given up (an error); the
 * rest is done by migrate_tick. */
static void depart_end(struct departure *d, int64_t result, int cancel)
{
    d->phase = DEPART_ENDED;
    d->result = result;
    d->cancel = (uint8_t)cancel;
    finish_later();
}

/* p, which was to move, stays: it may run again. */
static void release(struct proc *p)
{
    p->held &= (uint8_t)~HELD_MIGRATING;
    if (p->state == PS_RUNNABLE && p != current && !p->held)
        runq_add(p);
}

/* The process of d left and did not arrive: it is ended here, for those
 * who know it. */
static void lost(struct departure *d)
{
    counters.lost++;
    kprintf("machine %u: process %u.%u.%u (%s) is lost: machine %u, to which it was moving, went down\n",
            this_machine, PID_MACHINE(d->pid), PID_SLOT(d->pid), PID_GEN(d->pid), d->state.name, d->to);
    for (int i = 0; i < DM_NLINKS; i++)
        if (d->state.links[i].state == LINK_LIVE)
            link_drop(&d->state.links[i]);      /* a CALL its reply link would answer gets E_NOREPLY */
    location_forget(d->pid);
    if (PID_MACHINE(d->pid) != this_machine) {
        struct rm_location gone = { .h = { .type = RM_LOCATION }, .pid = d->pid, .machine = NO_MACHINE,
                                    .moves = d->state.moves, .replaces = NO_MACHINE };
        remote_post(PID_MACHINE(d->pid), &gone.h, sizeof gone, 0);
    }
    notify_process(DM_NOTICE_EXIT, d->pid, DM_EXIT_LOST);
}

/* Finish an ended departure: the process stays (it runs again) or is
 * lost; the slot kept at the destination is given up; the process manager
 * gets its answer; what the departure held goes back. */
static void finish_departure(struct departure *d)
{
    if (d->p)
        release(d->p);
    if (d->cancel && remote_machine_up(d->to) == 0) {
        struct rm_migrate_cancel c = { .h = { .type = RM_MIGRATE_CANCEL }, .pid = d->pid };
        remote_post(d->to, &c.h, sizeof c, 0);
    }
    if (d->lost)
        lost(d);
    else if (d->result < 0)
        counters.given_up++;
    kernel_reply_slot(d->reply_slot, KOP_MIGRATE, d->result < 0 ? d->result : 0,
                      d->result < 0 ? 0 : (uint64_t)d->result, 0, 0);
    if (d->pagetable)
        vm_free_space(d->pagetable);
    if (d->batch)
        page_free(d->batch);
    while (d->queue) {
        struct queued *q = d->queue;
        d->queue = q->next;
        msg_queued_drop(q);
    }
    d->phase = DEPART_FREE;
}

/* ---- the destination ---- */

/* A kernel message of the migration's, from the kernel of `machine`
 * (remote.c). Whether it was well formed. */
int migrate_receive(uint32_t machine, const uint8_t *bytes, uint32_t len)
{
    struct rm_header h;
    memcpy(&h, bytes, sizeof h);
    if (h.type == RM_MIGRATE) {
        struct rm_migrate m;
        if (len != sizeof m)
            return 0;
        memcpy(&m, bytes, sizeof m);
        arrival_asked(machine, &m);
        return 1;
    }
    dm_pid pid;
    uint32_t fixed = h.type == RM_MIGRATE_CANCEL ? sizeof(struct rm_migrate_cancel) : sizeof(struct rm_migrate_part);
    if (len < fixed || (h.type == RM_MIGRATE_CANCEL && len != fixed))
        return 0;
    memcpy(&pid, bytes + sizeof h, sizeof pid);
    struct arrival *a = 0;
    for (int i = 0; i < ARRIVALS && !a; i++)
        if (arrivals[i].active && !arrivals[i].discard && arrivals[i].from == machine && arrivals[i].pid == pid)
            a = &arrivals[i];
    if (h.type == RM_MIGRATE_CANCEL) {
        if (a) {
            a->discard = 1;
            finish_later();
        }
        return 1;
    }
    struct rm_migrate_part part;
    memcpy(&part, bytes, sizeof part);
    if (!a) {
        if (part.kind == PART_DONE)
            remote_answer(&part.h, E_STATE);   /* no slot kept: given up here already */
        return 1;
    }
    arrival_part(a, &part, bytes + sizeof part, len - sizeof part);
    return 1;
}

/* Step 2 at the destination: RM_MIGRATE from `from`. A slot is kept if
 * there is one, and the memory; until the process has arrived, what comes
 * here for it goes back to `from`. */
static void arrival_asked(uint32_t from, const struct rm_migrate *m)
{
    struct arrival *a = 0;
    int status = 0;
    for (int i = 0; i < ARRIVALS; i++) {
        if (arrivals[i].active && arrivals[i].pid == m->pid)
            status = E_STATE;
        else if (!arrivals[i].active && !a)
            a = &arrivals[i];
    }
    if (!status && (!a || pages_free_count() < (uint64_t)m->pages + SPARE_PAGES))
        status = E_NOMEM;
    struct proc *p = status ? 0 : proc_reserve(m->pid, &status);
    if (p) {
        memset(a, 0, sizeof *a);
        a->active = 1;
        a->from = (uint8_t)from;
        a->pid = m->pid;
        a->moves = m->moves;
        a->p = p;
        location_set(m->pid, from, m->moves, LOCATION_ARRIVING);
    } else {
        counters.refused++;
    }
    remote_answer(&m->h, status);
}

/* Whether a PART_STATE's body (the state, then batch_len bytes of its
 * meter batch) describes a process this kernel can run: a state it could
 * have left in, and a batch as meter.c fills one. */
static int state_is_sound(const uint8_t *body, uint32_t batch_len)
{
    struct moved_state s;
    memcpy(&s, body, sizeof s);
    const struct meter_state *m = &s.meter;
    int batch_fits = batch_len == 0 ? m->count == 0 && m->used == 0
                                    : batch_len == m->used && batch_len <= PAGE_SIZE &&
                                          batch_len >= sizeof(struct meter_batch) && m->count <= METER_BATCH_RECORDS;
    return (s.state == PS_RUNNABLE || s.state == PS_RECEIVING || s.state == PS_CALLING) &&
           (s.held & ~HELD_STOPPED) == 0 && batch_fits && s.remote.machine < NETFRAME_MAX_NODES;
}

/* A part of arriving process a (its body: `len` bytes at `body`). */
static void arrival_part(struct arrival *a, const struct rm_migrate_part *h, const uint8_t *body, uint32_t len)
{
    switch (h->kind) {
    case PART_STATE:
        if (len != sizeof a->state + h->count || a->have_state || !state_is_sound(body, h->count)) {
            a->failed = E_STATE;
            return;
        }
        memcpy(&a->state, body, sizeof a->state);
        a->have_state = 1;
        a->state_at = machine_clock_ns();
        if (h->count && !(a->batch = page_alloc_dirty()))
            a->failed = E_NOMEM;
        else if (h->count)
            memcpy(a->batch, body + sizeof a->state, h->count);
        return;
    case PART_PAGES: {
        uint32_t fixed = PAGES_PER_PART * sizeof(uint64_t);
        if (h->count == 0 || h->count > PAGES_PER_PART || len != fixed + h->count * PAGE_SIZE) {
            a->failed = E_STATE;
            return;
        }
        for (uint32_t k = 0; k < h->count && !a->failed; k++) {
            uint64_t word;
            memcpy(&word, body + k * sizeof word, sizeof word);
            uint64_t va = PAGE_ROUND_DOWN(word), perm = word & (PTE_R | PTE_W | PTE_X);
            if (va < DM_USER_BASE || va >= DM_USER_TOP || vm_map_filled(a->p, va, perm, body + fixed + k * PAGE_SIZE))
                a->failed = E_NOMEM;
            a->bytes += PAGE_SIZE;
        }
        return;
    }
    case PART_MESSAGE: {
        struct moved_message mm;
        if (len < sizeof mm)
            return;
        memcpy(&mm, body, sizeof mm);
        if (mm.length > DM_MSG_MAX || len != sizeof mm + mm.length) {
            a->failed = E_STATE;
            return;
        }
        struct message m = {
            .sender = mm.sender, .code = mm.code, .channel = mm.channel, .flags = mm.flags, .length = mm.length,
            .msgid = mm.msgid, .data = body + sizeof mm, .link = mm.has_link ? &mm.link : 0,
            .reply = mm.has_reply ? &mm.reply : 0,
        };
        if (msg_queue_moved(&a->queue_head, &a->queue_tail, &m))
            a->failed = E_NOMEM;
        else
            a->queue_len++;
        return;
    }
    case PART_DONE:
        arrive(a, &h->h);
        return;
    }
}

/* The wait of the caller whose reply link `reply` p holds depends on this
 * machine now: its kernel is told (an RM_LOCATION, as a link update). */
static void tell_caller(const struct proc *p, const struct link *reply)
{
    struct rm_location update = {
        .h = { .type = RM_LOCATION, .waiter = reply->dest, .op = reply->reply_id },
        .pid = p->pid, .machine = this_machine, .moves = p->moves, .replaces = NO_MACHINE,
    };
    uint32_t machine = proc_lookup(reply->dest) ? this_machine : location_of(reply->dest);
    remote_post(machine, &update.h, sizeof update, 0);
}

/* Steps 6 and 7 at the destination: PART_DONE has come; the process is
 * installed in the slot kept for it, under its own id, and goes on. */
static void arrive(struct arrival *a, const struct rm_header *h)
{
    struct proc *p = a->p;
    const struct moved_state *s = &a->state;
    struct dm_info *info = a->failed || !a->have_state ? 0 : vm_user_to_kernel(p->pagetable, DM_INFO_PAGE, 0);
    if (!info) {
        remote_answer(h, a->failed == E_NOMEM ? E_NOMEM : E_STATE);
        a->discard = 1;
        finish_later();
        return;
    }
    uint64_t now = machine_clock_ns();
    p->tf = s->tf;
    memcpy(p->fp_regs, s->fp_regs, sizeof p->fp_regs);
    p->fp_used = s->fp_used;
    p->held = s->held;
    memcpy(p->name, s->name, sizeof p->name);
    p->name[sizeof p->name - 1] = 0;
    p->heap_start = s->heap_start;
    p->brk = s->brk;
    p->proctime = s->proctime;
    p->created_ns = now > s->age_ns ? now - s->age_ns : 0;
    p->moves = s->moves;
    memcpy(p->links, s->links, sizeof p->links);
    p->wait_reply_id = s->wait_reply_id;
    p->wait = (struct receive_target){ .buf = s->wait_buf, .cap = s->wait_cap, .info = s->wait_info,
                                       .channel = s->wait_channel };
    p->remote = s->remote;
    p->queue_head = a->queue_head;
    p->queue_tail = a->queue_tail;
    p->queue_len = a->queue_len;
    p->info = info;
    info->machine = this_machine;
    info->nodes = node_count;
    meter_give(p, &s->meter, a->batch);
    proc_arrived(p, a->pid);
    location_forget(a->pid);
    p->state = s->state;
    if (p->state == PS_RUNNABLE)
        make_runnable(p);
    if (p->state == PS_CALLING && !p->remote.active)   /* its CALL was to the source's machine */
        remote_call_waits_on(p, a->from);
    else if (p->remote.active)
        remote_wait_started();
    probe_migrated(p, a->from, s->out_ns + (now - a->state_at), a->bytes, a->queue_len);
    if (PID_MACHINE(p->pid) != this_machine) {          /* its home knows where it is */
        struct rm_location home = { .h = { .type = RM_LOCATION }, .pid = p->pid, .machine = this_machine,
                                    .moves = p->moves, .replaces = NO_MACHINE };
        remote_post(PID_MACHINE(p->pid), &home.h, sizeof home, 0);
    }
    for (int i = 0; i < DM_NLINKS; i++)
        if (p->links[i].state == LINK_LIVE && (p->links[i].flags & LINK_REPLY))
            tell_caller(p, &p->links[i]);
    for (const struct queued *q = p->queue_head; q; q = q->next)
        if (q->message.reply)
            tell_caller(p, q->message.reply);
    notify_process(DM_NOTICE_MOVED, p->pid, p->moves);
    remote_answer(h, 0);
    counters.arrived++;
    a->active = 0;
}

/* Give up an arrival: its slot, its memory, and the messages and links
 * that came with it (a CALL its reply links would answer gets E_NOREPLY).
 * The process is where it came from, as far as this machine knows (a move
 * given up), and that machine says so if it is lost. */
static void finish_arrival(struct arrival *a)
{
    uint32_t machine, moves, kind;
    if (location_lookup(a->pid, &machine, &moves, &kind) && kind == LOCATION_ARRIVING) {
        location_forget(a->pid);
        if (a->moves > 1 || PID_MACHINE(a->pid) == this_machine)
            location_set(a->pid, a->from, a->moves - 1,
                         PID_MACHINE(a->pid) == this_machine ? LOCATION_FORWARD : LOCATION_HINT);
    }
    proc_unreserve(a->p);
    if (a->batch)
        page_free(a->batch);
    while (a->queue_head) {
        struct queued *q = a->queue_head;
        a->queue_head = q->next;
        msg_queued_drop(q);
    }
    for (int i = 0; i < DM_NLINKS && a->have_state; i++)
        if (a->state.links[i].state == LINK_LIVE)
            link_drop(&a->state.links[i]);
    a->active = 0;
}

/* ---- failures and the clock ---- */

/* Machine `machine` is down or rebooted (remote.c, fail_machine): a
 * process that was to move there stays, one that has left for it is
 * lost; what was arriving from it is given up. */
void migrate_machine_down(uint32_t machine, int error)
{
    (void)error;
    for (int i = 0; i < DEPARTURES; i++) {
        struct departure *d = &departures[i];
        if (d->to != machine || d->phase == DEPART_FREE || d->phase == DEPART_ENDED)
            continue;
        d->lost = d->phase == DEPART_SENDING || d->phase == DEPART_SENT;
        depart_end(d, E_NODE, 0);
    }
    for (int i = 0; i < ARRIVALS; i++) {
        if (arrivals[i].active && arrivals[i].from == machine) {
            arrivals[i].discard = 1;
            finish_later();
        }
    }
}

/* p is ending (proc_exit): a move of it under way is given up, and, if it
 * is not at home, its home forgets where it is. */
void migrate_exit(struct proc *p)
{
    for (int i = 0; i < DEPARTURES; i++) {
        struct departure *d = &departures[i];
        if (d->p == p && d->phase != DEPART_FREE) {
            d->p = 0;
            depart_end(d, E_NOTFOUND, d->phase == DEPART_ASKED || d->phase == DEPART_READY);
        }
    }
    if (p->moves && PID_MACHINE(p->pid) != this_machine) {
        struct rm_location gone = { .h = { .type = RM_LOCATION }, .pid = p->pid, .machine = NO_MACHINE,
                                    .moves = p->moves, .replaces = NO_MACHINE };
        remote_post(PID_MACHINE(p->pid), &gone.h, sizeof gone, 0);
    }
}

/* The machines that moves under way wait on, marked in waited[], so that
 * the transport's pings watch them (remote.c). Whether there is any. */
int migrate_mark_waited(uint8_t *waited)
{
    int any = 0;
    for (int i = 0; i < DEPARTURES; i++) {
        uint8_t phase = departures[i].phase;
        if (phase == DEPART_ASKED || phase == DEPART_READY || phase == DEPART_SENDING || phase == DEPART_SENT)
            waited[departures[i].to] = any = 1;
    }
    for (int i = 0; i < ARRIVALS; i++)
        if (arrivals[i].active && !arrivals[i].discard)
            waited[arrivals[i].from] = any = 1;
    return any;
}

/* The timer (remote.c), when migrate_next_time is due: processes waiting
 * to come to rest are looked at again; ended moves and given-up arrivals
 * are finished. */
void migrate_tick(uint64_t now)
{
    if (now >= poll_at) {
        poll_at = NO_TIME;
        for (int i = 0; i < DEPARTURES; i++)
            depart_step(&departures[i]);
    }
    if (!finishing)
        return;
    finishing = 0;
    for (int i = 0; i < DEPARTURES; i++)
        if (departures[i].phase == DEPART_ENDED)
            finish_departure(&departures[i]);
    for (int i = 0; i < ARRIVALS; i++)
        if (arrivals[i].active && arrivals[i].discard)
            finish_arrival(&arrivals[i]);
}

/* When migrate_tick has work next (NO_TIME: none). */
uint64_t migrate_next_time(void)
{
    return finishing ? 0 : poll_at;
}

/* At halt: what moved, if anything did. */
void migrate_print_counters(void)
{
    if (counters.left || counters.arrived || counters.refused || counters.given_up || counters.lost)
        kprintf("machine %u: migration: %lu processes left, %lu arrived, %lu refused here, %lu moves given "
                "up, %lu processes lost\n", this_machine, counters.left, counters.arrived, counters.refused,
                counters.given_up, counters.lost);
}
