/*
 * remote.c — one system over many machines: what kernels ask of each other
 * when a link leads to another machine.
 *
 * A link names a process by its global id, which holds its machine. When a
 * SEND, a CALL, a CALL's answer, a MOVEDATA or a request to a kernel goes to
 * another machine, this kernel turns it into a KERNEL MESSAGE to that
 * machine's kernel and hands it to the reliable transport (transport.h),
 * which delivers it there exactly once and in order, or reports that the
 * machine is gone. The other kernel does the work as if it had been asked
 * locally and answers. Kernel messages (struct rm_*, below) are:
 *
 *   RM_SEND     a message for process `dest`, with its links   -> RM_RESULT
 *               (for a CALL only if it failed: its answer says it arrived)
 *   RM_RESULT   "the message is delivered or queued", or the error
 *   RM_NOREPLY  a CALL's reply link was destroyed unused
 *   RM_READ     send me bytes of process `target`'s memory     -> RM_DATA
 *   RM_DATA     those bytes, or the error
 *   RM_WRITE    put these bytes into `target`'s memory          -> RM_RESULT
 *   RM_READ_TO  read `target`'s bytes and write them into `to` (a third
 *               machine's, or this one's): MOVEDATA between two areas that
 *               are both elsewhere                              -> RM_RESULT
 *   RM_PING     nothing: its acknowledgement shows the machine is alive
 *   RM_LOCATION where a moved process is (a link update, below)
 *   RM_MIGRATE, RM_MIGRATE_PART, RM_MIGRATE_CANCEL: moving a process to
 *               another machine (migrate.c)
 *
 * Every request names its WAITER (a process, or a kernel for its own work),
 * an operation number, and the machine the waiter is on; the answer goes
 * to that machine and is taken only if the waiter still waits for that
 * number, so an answer that comes too late is ignored.
 *
 * MOVED PROCESSES. A process that has moved (migrate.c) keeps its id, which
 * names the machine that created it. What is for a process that is not on
 * this machine goes where location.c says it is, or to its home. A request
 * that arrives for a process that is not here is sent on (forward): to
 * where it went from here, to where it is arriving from, or to its home;
 * the machine of its waiter gets a link update (RM_LOCATION), so that its
 * next message goes straight there, and its wait depends on that machine
 * from then on (DEMOS/MP's forwarding and link update); a link update for
 * a waiter that has left its machine follows it there. A forwarded request
 * is answered by the machine that does it, to the waiter's machine, as any
 * other. Each process has at most one request under way (a SEND waits for
 * its answer), so forwarding reorders nothing.
 *
 * A process whose operation involves another machine waits (PS_SENDING,
 * PS_MOVING, or PS_CALLING for a CALL) and its struct remote_wait says for
 * what. A SEND returns once the destination kernel has the message, so
 * that the sender gets an honest error and the system gets flow control
 * (docs/architecture.md, "Where this system differs"). The
 * links a message passes leave the sender's table when the message goes out
 * and come back if the other kernel refuses it.
 *
 * Nothing waits forever: while a process waits on a machine, its kernel
 * pings that machine every PING_INTERVAL_NS when nothing else is under way
 * to it; the transport declares a machine that acknowledges nothing down
 * (after about 4 s; never with the boot argument net.patient), and then
 * every wait on it ends with E_NODE. A machine
 * announced in a new epoch has lost its processes: waits on it end with
 * E_DEAD, and links to its former processes give E_DEAD from then on.
 *
 * THE OUTBOX. The transport takes a message only when the receiver's window
 * has room, and its hooks may not call back into it. So every kernel
 * message is first an INTENT in its machine's outbox, and the outboxes are
 * flushed in order whenever the transport may take more (after a frame
 * arrives, on the timer, after a kernel call). An intent holds the message's
 * fixed part; bytes of process memory are read only when the message is
 * built, so a big MOVEDATA chunk occupies no kernel memory while it waits.
 */
#include "defs.h"
#include "probes.h"
#include "remote.h"
#include "transport.h"

struct rm_send {                /* RM_SEND, then the links it has (a struct link
                                   each: the passed link, then the CALL's reply
                                   link), then `length` bytes of data */
    struct rm_header h;
    dm_pid   dest, sender;
    uint64_t code, reply_id;    /* of the link sent over */
    uint32_t channel, flags, length;
    uint8_t  has_link, has_reply, reserved[2];
    uint64_t msgid;             /* the meter's message id, or 0 */
};

struct rm_result {              /* RM_RESULT */
    struct rm_header h;
    int64_t status;
};

struct rm_noreply {             /* RM_NOREPLY */
    struct rm_header h;
    dm_pid   caller;
    uint64_t reply_id;
};

struct rm_access {              /* RM_READ, RM_WRITE (then the bytes), RM_READ_TO */
    struct rm_header h;
    dm_pid   target;
    uint64_t address;
    uint32_t length, reserved;
    dm_pid   to;                /* RM_READ_TO: where the bytes go */
    uint64_t to_address;
};

struct rm_data {                /* RM_DATA, then the bytes if status is 0 */
    struct rm_header h;
    int64_t status;
};

#define MOVE_CHUNK        32768u            /* bytes per MOVEDATA request */
#define PING_INTERVAL_NS  500000000ull
#define NINTENTS          1024
#define INTENT_RESERVE    256               /* kept for answers (intent_new) */
#define INTENT_BYTES      320               /* a message's fixed part and small data */
#define CREATE_JOBS       4                 /* programs being fetched from other machines at once */
#define CREATE_MAX        (4u << 20)        /* the largest program fetched from another machine */
#define MAX_HOPS          8                 /* a request forwarded this often is for no process */
#define COPY_PAGES        ((MOVE_CHUNK + sizeof(struct rm_access)) / PAGE_SIZE + 1)

/* A kernel message waiting in an outbox. */
enum intent_data {
    DATA_INLINE,                 /* all of it in bytes[] */
    DATA_PAGE,                   /* then data_length bytes in `page` */
    DATA_MEMORY,                 /* then data_length bytes of process data_pid's memory, read when sent */
    DATA_COPY,                   /* then data_length bytes in pages[], one after the other */
    DATA_DEPARTURE,              /* the parts of a moving process, one message each (migrate.c) */
};
enum intent_owns {
    OWNS_NONE = 0,               /* none: its data is inline, in a process, or a meter batch (meter.c's) */
    OWNS_PAGE,                   /* `page`, a kernel copy */
    OWNS_PAGES,                  /* pages[] */
};
struct intent {
    struct intent *next;
    uint32_t machine;
    uint8_t  data_kind;          /* enum intent_data: where the bytes after `length` come from */
    uint32_t length;             /* of bytes[] */
    uint32_t data_length;        /* DATA_PAGE, DATA_MEMORY, DATA_COPY */
    uint8_t *page;               /* DATA_PAGE: a kernel copy, or a meter batch's own page */
    uint8_t  owns;               /* enum intent_owns: pages freed with the intent */
    dm_pid   data_pid;           /* DATA_MEMORY: read from this process's memory when sent */
    uint64_t data_address;
    union {
        struct rm_header h;
        uint8_t bytes[INTENT_BYTES];
    } m;
    /* After the message, where intent_new does not clear them: */
    uint8_t *pages[COPY_PAGES];  /* DATA_COPY (OWNS_PAGES): the pages one after the other, then 0s */
    struct departure *departure; /* DATA_DEPARTURE */
};

static struct transport net;
static struct intent intents[NINTENTS];
static struct intent *free_intents;
static uint32_t free_intent_count;
static struct { struct intent *head, *tail; } outbox[NETFRAME_MAX_NODES];
static uint8_t message[NETFRAME_MAX_MESSAGE] __attribute__((aligned(8)));   /* where a kernel message is built */
static uint8_t loopback[NETFRAME_MAX_MESSAGE] __attribute__((aligned(8)));  /* one to this kernel itself */
static int inside_transport;                     /* in a transport call: its hooks may not call back */
static int flushing;                             /* in flush(): what is queued meanwhile waits its turn */
static uint64_t transport_due = TRANSPORT_NO_TIMER, next_ping = TRANSPORT_NO_TIMER;
static uint64_t halt_at = TRANSPORT_NO_TIMER;    /* KOP_HALT from another machine */
/* A machine of the cluster not heard of yet -- its announcements lost, or
 * it is still booting -- is not given up at once: what is sent to it waits
 * in its outbox until it is heard of, or fails with E_NODE when
 * UNHEARD_WAIT_NS have passed since the first of it was queued (cluster.c
 * announces again every second meanwhile, and the machine answers). */
#define UNHEARD_WAIT_NS   5000000000ull
static uint64_t unheard_deadline[NETFRAME_MAX_NODES];   /* TRANSPORT_NO_TIMER: nothing waits */
/* No unheard_deadline is earlier (one may have been cleared since: the
 * tick then finds nothing due, and looks again). */
static uint64_t unheard_soonest = TRANSPORT_NO_TIMER;
/* The soonest of the deadlines that are seldom set: halt_at,
 * unheard_soonest and the moves' (migrate_next_time). remote_next_time,
 * which the clock asks at every kernel exit, looks at it alone; each is
 * looked at when it is due (remote_tick). */
static uint64_t rare_due = TRANSPORT_NO_TIMER;
static int halt_code;
static struct {
    uint64_t intents_lost;       /* kernel messages (answers) dropped: no free intent */
    uint64_t intents_refused;    /* new work refused (E_NOMEM): only the answers' reserve was left */
    uint64_t malformed;          /* kernel messages that made no sense */
    uint64_t forwarded;          /* requests sent on to where their process went */
    uint64_t unforwarded;        /* requests for a process not here that could not be sent on */
} counters;

/* A program being fetched from another machine for KOP_CREATE. */
struct create_job {
    uint8_t  active;
    uint8_t  machine;
    int      reply_slot;         /* the request's reply link, in the kernel's table */
    uint64_t op;
    dm_pid   source;             /* the image: this process's memory ... */
    uint64_t address, size, done;
    uint32_t request_len;
    uint8_t *pages[CREATE_MAX / PAGE_SIZE];
    uint8_t  request[DM_MSG_MAX];
};
static struct create_job create_jobs[CREATE_JOBS];

static void flush(void);
static void fail_machine(uint32_t machine, int error);

/* ---- the transport's environment ---- */

static int hook_send_frame(void *context, const uint8_t *frame, uint32_t len)
{
    (void)context;
    return cluster_send(frame, len);
}

static int hook_send_netframe(void *context, const struct netframe *f)
{
    (void)context;
    return cluster_send_netframe(f);
}

static uint64_t hook_now(void *context)
{
    (void)context;
    return machine_clock_ns();
}

static inline __attribute__((always_inline)) void receive(uint32_t machine, const uint8_t *bytes, uint32_t len);

static void hook_deliver(void *context, uint32_t machine, const uint8_t *bytes, uint32_t len)
{
    (void)context;
    receive(machine, bytes, len);
}

/* Whether the console has been told that machine m failed, since its last
 * boot: the transport fails each message under way on its own, and the
 * failure is said once. */
static uint8_t failure_said[NETFRAME_MAX_NODES];

static void hook_failed(void *context, uint32_t machine, uint32_t sequence, int reason)
{
    (void)context, (void)sequence;
    if (machine < NETFRAME_MAX_NODES && !failure_said[machine])
        kprintf("machine %u: machine %u %s\n", this_machine, machine,
                reason == TRANSPORT_FAIL_REBOOTED    ? "rebooted"
                : reason == TRANSPORT_FAIL_GIVEN_UP ? "has given this machine up: taken to be down"
                                                    : "does not answer: taken to be down");
    if (machine < NETFRAME_MAX_NODES)
        failure_said[machine] = 1;
    fail_machine(machine, reason == TRANSPORT_FAIL_REBOOTED ? E_DEAD : E_NODE);
}

static void hook_rebooted(void *context, uint32_t machine, uint32_t epoch)
{
    (void)context, (void)epoch;
    if (machine < NETFRAME_MAX_NODES)
        failure_said[machine] = 0;     /* a new boot: its next failure is news */
    fail_machine(machine, E_DEAD);
}

static const struct transport_hooks hooks = {
    hook_send_frame, hook_now, hook_deliver, hook_failed, hook_rebooted, hook_send_netframe,
};

/* Start the transport. With the boot argument net.patient=1 (the cluster
 * launcher gives it to every node when any waits for GDB) it takes no
 * machine to be down for its silence: one stopped at a breakpoint is
 * waited for (kernel/net/transport.h, transport_be_patient). */
void remote_init(void)
{
    transport_init(&net, this_machine, node_count, boot_epoch, &hooks, 0);
    uint64_t patient;
    if (bootarg_number("net.patient", &patient) && patient) {
        transport_be_patient(&net);
        kprintf("machine %u: a silent machine is waited for, never taken to be down (net.patient)\n", this_machine);
    }
    for (int i = 0; i < NINTENTS; i++) {
        intents[i].next = free_intents;
        free_intents = &intents[i];
    }
    free_intent_count = NINTENTS;
    for (uint32_t m = 0; m < NETFRAME_MAX_NODES; m++)
        unheard_deadline[m] = TRANSPORT_NO_TIMER;
    location_init();
}

static inline int reachable_on(dm_pid dest, uint32_t m);

/* Whether a process that is not on this machine can be reached where it
 * is (location.c): 0, E_NODE (that machine is unknown or down), E_DEAD (it
 * belonged to an earlier boot of its home, or nothing is known of it here
 * at its home). */
int remote_reachable(dm_pid dest)
{
    return reachable_on(dest, location_of(dest));
}

/* remote_reachable for `dest`, which location_of places on machine m. */
static inline int reachable_on(dm_pid dest, uint32_t m)
{
    if (m >= node_count || m == this_machine)
        return m == this_machine ? E_DEAD : E_NODE;
    const struct transport_peer *peer = &net.peers[m];
    if (peer->down)
        return E_NODE;
    if (peer->epoch == 0 || m != PID_MACHINE(dest))
        return 0;            /* not heard of yet (what goes to it waits: flush), or a process that moved there */
    return PID_EPOCH(dest) == peer->epoch ? 0 : E_DEAD;
}

/* 0 if machine m is another machine of the cluster, heard of and not
 * taken to be down; else E_NODE. */
int remote_machine_up(uint32_t m)
{
    return m < node_count && m != this_machine && net.peers[m].epoch && !net.peers[m].down ? 0 : E_NODE;
}

/* ---- the outbox ---- */

/* A new intent. New work (a process's SEND, CALL or MOVEDATA piece, a
 * program's fetch, a ping) may not take the last INTENT_RESERVE free ones:
 * they are kept for answers, so that work already accepted elsewhere is
 * answered even when this kernel is busy (new work then fails with E_NOMEM). */
static struct intent *intent_new(uint32_t machine, uint32_t type, dm_pid waiter, uint64_t op, uint32_t length,
                                 int new_work)
{
    struct intent *i = free_intents;
    if (!i || (new_work && free_intent_count <= INTENT_RESERVE)) {
        if (new_work)
            counters.intents_refused++;
        else
            counters.intents_lost++;
        return 0;
    }
    free_intents = i->next;
    free_intent_count--;
    memset(i, 0, __builtin_offsetof(struct intent, m) + length);
    i->machine = machine;
    i->length = length;
    i->m.h.type = type;
    i->m.h.answer_to = (uint8_t)this_machine;
    i->m.h.waiter = waiter;
    i->m.h.op = op;
    return i;
}

static void intent_free_pages(struct intent *i);

static inline __attribute__((always_inline)) void intent_free(struct intent *i)
{
    if (i->owns)
        intent_free_pages(i);
    i->next = free_intents;
    free_intents = i;
    free_intent_count++;
}

/* The pages intent i owns go back (intent_free). */
static void intent_free_pages(struct intent *i)
{
    if (i->owns == OWNS_PAGE)
        page_free(i->page);
    for (uint32_t k = 0; i->owns == OWNS_PAGES && k < COPY_PAGES && i->pages[k]; k++)
        page_free(i->pages[k]);
}

static inline __attribute__((always_inline)) void intent_queue(struct intent *i)
{
    i->next = 0;
    if (outbox[i->machine].tail)
        outbox[i->machine].tail->next = i;
    else
        outbox[i->machine].head = i;
    outbox[i->machine].tail = i;
    flush();
}

/* The process `waiter` if it still waits for answer `op`, or 0. */
static struct proc *waiting_process(dm_pid waiter, uint64_t op)
{
    struct proc *p = proc_lookup(waiter);
    if (!p || p == kernel_proc || !p->remote.active || p->remote.op != op)
        return 0;
    return p;
}

/* End p's wait with result a0 = `result`. */
static void wake(struct proc *p, int64_t result)
{
    p->remote.active = 0;
    TF_A(&p->tf, 0) = (uint64_t)result;
    make_runnable(p);
}

/* A SEND or CALL of p's failed: the links that left with the message come
 * back, and p learns why. */
static void send_failed(struct proc *p, int error)
{
    struct remote_wait *w = &p->remote;
    if (w->sent && w->pass_slot >= 0) {
        if (p->links[w->pass_slot].state != LINK_LIVE)
            p->links[w->pass_slot] = w->pass;
        else if (link_install(p, &w->pass) < 0)
            link_drop(&w->pass);
    }
    if (w->sent && w->via_reply && p->links[w->via_slot].state == LINK_USED)
        p->links[w->via_slot].state = LINK_LIVE;
    wake(p, error);
}

static void create_finished(struct create_job *job, int64_t status, uint64_t pid);

/* The program fetch waiting for answer `op`, or 0. */
static struct create_job *create_job_of(uint64_t op)
{
    for (int j = 0; j < CREATE_JOBS; j++)
        if (create_jobs[j].active && create_jobs[j].op == op)
            return &create_jobs[j];
    return 0;
}

static void answer_error(const struct rm_header *h, int error);

/* The operation an intent stands for cannot be done (its machine is down,
 * or the memory it was to read is gone): its waiter learns `error`, here,
 * or by an answer to its machine (a request sent on from another). */
static void intent_failed(struct intent *i, int error)
{
    struct rm_header *h = &i->m.h;
    if (h->type == RM_DATA) {             /* an answer: say why there are no bytes */
        ((struct rm_data *)h)->status = error;
        i->data_kind = DATA_INLINE;
        return;
    }
    if (i->data_kind == DATA_DEPARTURE) {
        migrate_departure_failed(i->departure, error);
        return;
    }
    int request = h->type == RM_SEND || h->type == RM_READ || h->type == RM_WRITE || h->type == RM_READ_TO ||
                  h->type == RM_MIGRATE;
    if (!h->waiter || !request)
        return;
    if (h->answer_to != this_machine) {
        answer_error(h, error);
        return;
    }
    if (PID_SLOT(h->waiter) == 0) {       /* the kernel's own: a program fetch, a move, a meter batch */
        struct create_job *job = create_job_of(h->op);
        if (job)
            create_finished(job, error, 0);
        else if (!migrate_answered(h->op, error))
            meter_answered(h->op, error);
        return;
    }
    struct proc *p = waiting_process(h->waiter, h->op);
    if (!p)
        return;
    if (p->state == PS_MOVING)
        wake(p, error);
    else
        send_failed(p, error);
}

/* A process's message has left: the link it passed goes with it, and a
 * reply link it was sent over is used up. */
static inline __attribute__((always_inline)) void send_left(struct intent *i)
{
    struct proc *p = waiting_process(i->m.h.waiter, i->m.h.op);
    if (!p || p->remote.sent)
        return;
    struct remote_wait *w = &p->remote;
    w->sent = 1;
    if (w->pass_slot >= 0) {
        w->pass = p->links[w->pass_slot];
        link_clear(&p->links[w->pass_slot]);
    }
    if (w->via_reply)
        p->links[w->via_slot].state = LINK_USED;
}

static uint32_t build_into_message(struct intent *i);

/* Intent i as the transport takes it: *head, then *tail_len bytes at
 * *tail (a page of data, or a process's data that lies within one page,
 * where the kernel sees it: not copied here, the transport copies it into
 * its fragments at once). Returns the whole length, or 0 if it is not to
 * be sent after all. Other data in a process's memory is read into
 * message[] with the fixed part, and so are a copy's pages and a moving
 * process's next part (migrate.c). */
static uint32_t build(struct intent *i, const uint8_t **head, const uint8_t **tail, uint32_t *tail_len)
{
    *tail = 0;
    *tail_len = 0;
    *head = i->m.bytes;
    if (i->data_kind == DATA_INLINE || i->data_kind == DATA_PAGE) {
        if (i->data_kind == DATA_PAGE) {
            *tail = i->page;
            *tail_len = i->data_length;
        }
        return i->length + *tail_len;
    }
    if (__builtin_expect(i->data_kind != DATA_MEMORY, 0)) {
        *head = message;
        return build_into_message(i);
    }
    struct proc *p = proc_lookup(i->data_pid);
    void *in_place;
    if (p && user_range_ok(p, i->data_address, i->data_length, 0, &in_place) && in_place) {
        *tail = in_place;
        *tail_len = i->data_length;
        return i->length + i->data_length;
    }
    *head = message;
    memcpy(message, i->m.bytes, i->length);
    int err = !p ? E_DEAD : copy_in(p, message + i->length, i->data_address, i->data_length) ? E_FAULT : 0;
    if (err) {
        switch (i->m.h.type) {
        case RM_DATA:                 /* the answer says why there are no bytes */
            ((struct rm_data *)message)->status = err;
            return i->length;
        case RM_WRITE:                /* the move's waiter learns it failed */
            intent_failed(i, err);
            return 0;
        default:                      /* the sender is gone: nothing to send */
            return 0;
        }
    }
    return i->length + i->data_length;
}

/* build for a copy's pages and a moving process's next part: the message
 * in message[]; its length. Out of line: seldom. */
static __attribute__((noinline)) uint32_t build_into_message(struct intent *i)
{
    if (i->data_kind == DATA_DEPARTURE)
        return migrate_build(i->departure, message);
    memcpy(message, i->m.bytes, i->length);
    for (uint32_t done = 0, k = 0; done < i->data_length; done += PAGE_SIZE, k++)
        memcpy(message + i->length + done, i->pages[k],
               i->data_length - done < PAGE_SIZE ? i->data_length - done : PAGE_SIZE);
    return i->length + i->data_length;
}

static void take_own(void);
static void wait_unheard(uint32_t m);

/* Hand the transport what it will take, machine by machine, in order, and
 * take what this kernel sent itself (take_own), until nothing more can go. */
static void flush(void)
{
    if (inside_transport || flushing)
        return;
    flushing = 1;
    for (uint32_t m = 0; m < node_count; m++) {
        if (!outbox[m].head)
            continue;
        if (__builtin_expect(m == this_machine, 0)) {
            take_own();
            m = UINT32_MAX;         /* from the first machine again: what it queued for those before */
            continue;
        }
        if (__builtin_expect(net.peers[m].epoch == 0, 0)) {
            wait_unheard(m);
            continue;
        }
        while (outbox[m].head) {
            struct intent *i = outbox[m].head;
            const uint8_t *head, *tail;
            uint32_t tail_len, len = build(i, &head, &tail, &tail_len);
            if (len) {
                int64_t r = transport_send_parts(&net, m, head, len - tail_len, tail, tail_len);
                if (r == TRANSPORT_E_WINDOW || r == TRANSPORT_E_NOSPACE)
                    break;              /* later, when acknowledgements make room */
                if (r < 0)
                    intent_failed(i, E_NODE);
                else if (i->m.h.type == RM_SEND)
                    send_left(i);
                else if (__builtin_expect(i->data_kind == DATA_DEPARTURE, 0) && migrate_part_sent(i->departure))
                    continue;           /* the moving process's next part */
            }
            outbox[m].head = i->next;
            if (!outbox[m].head)
                outbox[m].tail = 0;
            intent_free(i);
        }
    }
    flushing = 0;
    inside_transport = 1;
    transport_due = transport_tick(&net);
    inside_transport = 0;
    timer_program();
}

/* What is queued for machine m, which has not been heard of yet, waits:
 * for UNHEARD_WAIT_NS from when the first of it was queued. */
static __attribute__((noinline)) void wait_unheard(uint32_t m)
{
    if (unheard_deadline[m] == TRANSPORT_NO_TIMER)
        unheard_deadline[m] = machine_clock_ns() + UNHEARD_WAIT_NS;
    if (unheard_deadline[m] < unheard_soonest)
        unheard_soonest = unheard_deadline[m];
    remote_due_at(unheard_soonest);
}

/* The kernel messages this kernel sent itself (its outbox for this
 * machine), taken in order as if they had arrived: the answer to a request
 * that was forwarded to this machine, where its waiter is, and a link
 * update for this machine's own waiter. What taking one queues waits for
 * flush, which called this; one for this machine is taken here in turn.
 * Out of line: seldom. */
static __attribute__((noinline)) void take_own(void)
{
    struct intent *i;
    while ((i = outbox[this_machine].head)) {
        const uint8_t *head, *tail;
        uint32_t tail_len, len = build(i, &head, &tail, &tail_len);
        if (len) {
            memcpy(loopback, head, len - tail_len);
            if (tail_len)
                memcpy(loopback + len - tail_len, tail, tail_len);
            if (i->m.h.type == RM_SEND)
                send_left(i);
            hook_deliver(0, this_machine, loopback, len);
        }
        outbox[this_machine].head = i->next;
        if (!outbox[this_machine].head)
            outbox[this_machine].tail = 0;
        intent_free(i);
    }
}

/* ---- waits that cannot end ---- */

/* Machine `machine` is down (E_NODE) or rebooted (E_DEAD): drop what waits
 * to go to it, and end every wait on it, the meter's batches' and the
 * moves' included (migrate.c), and forget the locations it stood for; a
 * machine down is told to the process manager (DM_NOTICE_DOWN). */
static void fail_machine(uint32_t machine, int error)
{
    while (outbox[machine].head) {
        struct intent *i = outbox[machine].head;
        outbox[machine].head = i->next;
        intent_failed(i, error);
        intent_free(i);
    }
    outbox[machine].tail = 0;
    for (int s = 1; s < NPROC; s++) {
        struct proc *p = &procs[s];
        if (p->state == PS_FREE || !p->remote.active ||
            (p->remote.machine != machine && p->remote.machine2 != machine))
            continue;
        if (p->state == PS_SENDING || p->state == PS_CALLING)
            send_failed(p, error);
        else if (p->state == PS_MOVING)
            wake(p, error);
    }
    for (int j = 0; j < CREATE_JOBS; j++)
        if (create_jobs[j].active && create_jobs[j].machine == machine)
            create_finished(&create_jobs[j], error, 0);
    meter_machine_down(machine, error);
    migrate_machine_down(machine, error);
    location_machine_down(machine, error);
    if (error == E_NODE)
        notify_machine_down(machine);
}

/* A wait on another machine began: make sure pings will watch it. */
void remote_wait_started(void)
{
    if (next_ping == TRANSPORT_NO_TIMER)
        next_ping = machine_clock_ns() + PING_INTERVAL_NS;
}

/* p waits in a CALL whose message has reached its callee (p->wait_reply_id
 * is its answer's number), and the answer will come from `machine` now:
 * the callee (or the holder of the CALL's reply link) has moved there. The
 * wait depends on that machine from then on, as a CALL sent there would
 * (msg.c ends it when the answer comes, fail_machine with E_NODE if the
 * machine fails). */
void remote_call_waits_on(struct proc *p, uint32_t machine)
{
    p->remote = (struct remote_wait){ .active = 1, .machine = (uint8_t)machine, .machine2 = NO_MACHINE,
                                      .sent = 1, .via_slot = -1, .pass_slot = -1, .op = p->wait_reply_id };
    remote_wait_started();
}

/* ---- sending ---- */

/* The length of o's RM_SEND without its data: the fixed part and the
 * links it passes. */
static uint32_t send_length(const struct outgoing *o)
{
    return sizeof(struct rm_send) + (o->message.link ? sizeof(struct link) : 0) +
           (o->message.reply ? sizeof(struct link) : 0);
}

/* Write o's RM_SEND but for its data at r (send_length bytes). */
static void fill_send(struct rm_send *r, const struct outgoing *o)
{
    const struct message *m = &o->message;
    struct link *links = (struct link *)(r + 1);
    r->dest = o->via->dest;
    r->sender = m->sender;
    r->code = m->code;
    r->reply_id = o->via->reply_id;
    r->channel = m->channel;
    r->flags = m->flags & DM_MSG_FROM_KERNEL;
    r->length = m->length;
    r->msgid = m->msgid;
    if ((r->has_link = m->link != 0))
        *links++ = *m->link;
    if ((r->has_reply = m->reply != 0))
        *links = *m->reply;
}

/* msg_send for a destination on another machine. A process now waits
 * (SEND_PENDING) for that machine's answer; the kernel's own messages (its
 * answers to requests, exit notices) go without waiting. Kept out of line:
 * inlined into msg_send, its register saves would cost every local message. */
__attribute__((noinline)) int remote_send(struct outgoing *o)
{
    uint32_t machine = location_of(o->via->dest);
    int err = reachable_on(o->via->dest, machine);
    if (err)
        return err;
    const struct message *m = &o->message;
    struct proc *p = o->from;
    if (p == kernel_proc) {
        struct intent *i = intent_new(machine, RM_SEND, 0, 0, send_length(o), 0);
        if (!i)
            return E_NOMEM;
        fill_send((struct rm_send *)&i->m.h, o);
        i->data_length = m->length;
        if (m->length <= INTENT_BYTES - i->length) {
            memcpy(i->m.bytes + i->length, m->data, m->length);
            i->length += m->length;
        } else if (m->length) {
            if (!(i->page = page_alloc())) {
                intent_free(i);
                return E_NOMEM;
            }
            i->owns = OWNS_PAGE;
            memcpy(i->page, m->data, m->length);
            i->data_kind = DATA_PAGE;
        }
        if (m->link)
            link_clear(m->link);
        intent_queue(i);
        return 0;
    }

    struct remote_wait *w = &p->remote;
    uint64_t op = m->reply ? m->reply->reply_id : new_reply_id();
    struct intent *i = intent_new(machine, RM_SEND, p->pid, op, send_length(o), 1);
    if (!i)
        return E_NOMEM;
    fill_send((struct rm_send *)&i->m.h, o);
    i->data_kind = DATA_MEMORY;
    i->data_pid = p->pid;
    i->data_address = m->data_address;
    i->data_length = m->length;
    memset(w, 0, sizeof *w);
    w->active = 1;
    w->machine = (uint8_t)machine;
    w->machine2 = NO_MACHINE;
    w->op = op;
    w->via_slot = (int8_t)(o->via - p->links);
    w->pass_slot = m->link ? (int8_t)(m->link - p->links) : -1;
    w->via_reply = (o->via->flags & LINK_REPLY) != 0;
    if (!m->reply)
        p->state = PS_SENDING;
    remote_wait_started();
    intent_queue(i);
    return SEND_PENDING;
}

/* A meter batch (meter.c) to a filter on another machine: like the
 * kernel's other messages it does not wait, but its kernel answers
 * (RM_RESULT to this kernel, operation `op`) whether the filter took it,
 * which meter_answered hears. 0, or E_NODE/E_NOMEM and nothing sent. */
int remote_send_batch(const struct link *via, const void *data, uint32_t len, uint64_t op)
{
    int err = remote_reachable(via->dest);
    if (err)
        return err;
    struct intent *i = intent_new(location_of(via->dest), RM_SEND, kernel_proc->pid, op, sizeof(struct rm_send), 1);
    if (!i)
        return E_NOMEM;
    struct outgoing o = {
        .from = kernel_proc, .via = via,
        .message = { .sender = kernel_proc->pid, .code = via->code, .channel = via->channel,
                     .flags = DM_MSG_FROM_KERNEL, .length = len, .data = data },
    };
    fill_send((struct rm_send *)&i->m.h, &o);
    /* Not copied: the batch stays in meter.c's outbox until its answer,
     * and no answer comes before this intent is built, or has failed. */
    i->page = (uint8_t *)data;
    i->data_kind = DATA_PAGE;
    i->data_length = len;
    remote_wait_started();     /* its answer is waited for: pings watch the machine (meter_mark_waited) */
    intent_queue(i);
    return 0;
}

/* A reply link to a process on another machine died unused: tell its kernel. */
void remote_reply_dropped(const struct link *l)
{
    if (remote_reachable(l->dest))
        return;
    struct intent *i = intent_new(location_of(l->dest), RM_NOREPLY, 0, 0, sizeof(struct rm_noreply), 0);
    if (!i)
        return;
    struct rm_noreply *m = (struct rm_noreply *)&i->m.h;
    m->caller = l->dest;
    m->reply_id = l->reply_id;
    intent_queue(i);
}

/* Send the answer `status` for request h to the machine of its waiter (a
 * kernel that waits, or a process). */
void remote_answer(const struct rm_header *h, int64_t status)
{
    if (!h->waiter)
        return;
    struct intent *i = intent_new(h->answer_to, RM_RESULT, h->waiter, h->op, sizeof(struct rm_result), 0);
    if (!i)
        return;
    ((struct rm_result *)&i->m.h)->status = status;
    intent_queue(i);
}

/* Request h failed with `error` where it was to be done: its waiter's
 * machine is told, with an RM_DATA for a read, else an RM_RESULT. */
static void answer_error(const struct rm_header *h, int error)
{
    if (h->type != RM_READ) {
        remote_answer(h, error);
        return;
    }
    struct intent *i = intent_new(h->answer_to, RM_DATA, h->waiter, h->op, sizeof(struct rm_data), 0);
    if (!i)
        return;
    ((struct rm_data *)&i->m.h)->status = error;
    intent_queue(i);
}

/* A kernel message of this kernel's own (migrate.c): `len` bytes, its
 * header first, copied into an intent for `machine`. 0, or E_NOMEM. */
int remote_post(uint32_t machine, struct rm_header *message, uint32_t len, int new_work)
{
    struct intent *i = len <= INTENT_BYTES
                           ? intent_new(machine, message->type, message->waiter, message->op, len, new_work)
                           : 0;
    if (!i)
        return E_NOMEM;
    message->answer_to = (uint8_t)this_machine;
    memcpy(i->m.bytes, message, len);
    intent_queue(i);
    return 0;
}

/* A moving process's parts (migrate.c builds them, one message each, as
 * the transport takes them) for `machine`. 0, or E_NOMEM. */
int remote_post_departure(uint32_t machine, struct departure *d)
{
    struct intent *i = intent_new(machine, RM_MIGRATE_PART, 0, 0, sizeof(struct rm_header), 1);
    if (!i)
        return E_NOMEM;
    i->data_kind = DATA_DEPARTURE;
    i->departure = d;
    intent_queue(i);
    return 0;
}

/* Process pid leaves this machine (migrate.c): the messages waiting to go
 * that were to read its memory when sent (MOVEDATA pieces, RM_DATA
 * answers) take the bytes now. A message whose copy finds no memory is
 * sent as if the process had been gone when it was built. */
void remote_keep_memory(dm_pid pid)
{
    for (uint32_t m = 0; m < node_count; m++) {
        for (struct intent *i = outbox[m].head; i; i = i->next) {
            if (i->data_kind != DATA_MEMORY || i->data_pid != pid)
                continue;
            struct proc *p = proc_lookup(pid);
            uint32_t k = 0;
            memset(i->pages, 0, sizeof i->pages);
            i->owns = OWNS_PAGES;
            for (uint32_t done = 0; done < i->data_length && p; done += PAGE_SIZE, k++) {
                uint32_t n = i->data_length - done < PAGE_SIZE ? i->data_length - done : PAGE_SIZE;
                if (!(i->pages[k] = page_alloc_dirty()) || copy_in(p, i->pages[k], i->data_address + done, n))
                    p = 0;
            }
            if (p) {
                i->data_kind = DATA_COPY;
                continue;
            }
            for (uint32_t j = 0; j < COPY_PAGES; j++) {
                if (i->pages[j])
                    page_free(i->pages[j]);
                i->pages[j] = 0;
            }
            i->data_pid = 0;      /* build finds no such process */
        }
    }
}

/* ---- MOVEDATA across machines ---- */

/* Ask for the next chunk of p's move, or end the move. */
static void move_next(struct proc *p)
{
    struct move *m = &p->remote.move;
    if (m->done == m->length) {
        wake(p, (int64_t)m->length);
        return;
    }
    m->chunk = m->length - m->done < MOVE_CHUNK ? (uint32_t)(m->length - m->done) : MOVE_CHUNK;
    p->remote.op = new_reply_id();
    struct proc *src = proc_lookup(m->src), *dst = proc_lookup(m->dst);
    if (src && dst) {          /* both here now: an owner has moved here meanwhile */
        uint64_t rest = m->length - m->done;
        int err = copy_user_to_user(dst, m->dst_address + m->done, src, m->src_address + m->done, rest);
        wake(p, err ? err : (int64_t)m->length);
        return;
    }
    uint32_t src_machine = src ? this_machine : location_of(m->src);
    uint32_t dst_machine = dst ? this_machine : location_of(m->dst);
    if (src_machine == this_machine && dst_machine == this_machine) {
        wake(p, E_DEAD);       /* an owner has ended here */
        return;
    }
    int src_here = src != 0;
    uint32_t type = src_here ? RM_WRITE : dst ? RM_READ : RM_READ_TO;
    uint32_t machine = src_here ? dst_machine : src_machine;
    struct intent *i = intent_new(machine, type, p->pid, p->remote.op, sizeof(struct rm_access), 1);
    if (!i) {
        wake(p, E_NOMEM);
        return;
    }
    struct rm_access *a = (struct rm_access *)&i->m.h;
    a->target = src_here ? m->dst : m->src;
    a->address = (src_here ? m->dst_address : m->src_address) + m->done;
    a->length = m->chunk;
    if (type == RM_WRITE) {
        i->data_kind = DATA_MEMORY;
        i->data_pid = m->src;
        i->data_address = m->src_address + m->done;
        i->data_length = m->chunk;
    } else if (type == RM_READ_TO) {
        a->to = m->dst;
        a->to_address = m->dst_address + m->done;
    }
    intent_queue(i);
}

/* MOVEDATA where an area is on another machine: p waits while the move goes
 * chunk by chunk. */
int64_t remote_movedata(struct proc *p, const struct move *m)
{
    struct remote_wait *w = &p->remote;
    memset(w, 0, sizeof *w);
    w->active = 1;
    w->move = *m;
    uint32_t src_machine = proc_lookup(m->src) ? this_machine : location_of(m->src);
    uint32_t dst_machine = proc_lookup(m->dst) ? this_machine : location_of(m->dst);
    w->machine = (uint8_t)(src_machine != this_machine ? src_machine : dst_machine);
    w->machine2 = src_machine != this_machine && dst_machine != this_machine && src_machine != dst_machine
                      ? (uint8_t)dst_machine
                      : NO_MACHINE;
    w->pass_slot = -1;
    p->state = PS_MOVING;
    remote_wait_started();
    if (m->length == 0) {
        wake(p, 0);
        return 0;
    }
    move_next(p);
    return RESULT_PENDING;
}

/* A chunk of p's move is done (status 0) or failed. */
static void move_answered(struct proc *p, int64_t status)
{
    if (status < 0) {
        wake(p, status);
        return;
    }
    p->remote.move.done += p->remote.move.chunk;
    move_next(p);
}

/* ---- process creation from a program on another machine ---- */

static void create_free_pages(struct create_job *job)
{
    for (uint64_t i = 0; i < CREATE_MAX / PAGE_SIZE && job->pages[i]; i++) {
        page_free(job->pages[i]);
        job->pages[i] = 0;
    }
}

static void create_finished(struct create_job *job, int64_t status, uint64_t pid)
{
    kernel_reply_slot(job->reply_slot, KOP_CREATE, status, pid, 0, 0);
    create_free_pages(job);
    job->active = 0;
}

static void create_fetch(struct create_job *job)
{
    job->op = new_reply_id();
    uint32_t n = job->size - job->done < MOVE_CHUNK ? (uint32_t)(job->size - job->done) : MOVE_CHUNK;
    struct intent *i = intent_new(job->machine, RM_READ, kernel_proc->pid, job->op, sizeof(struct rm_access), 1);
    if (!i) {
        create_finished(job, E_NOMEM, 0);
        return;
    }
    struct rm_access *a = (struct rm_access *)&i->m.h;
    a->target = job->source;
    a->address = job->address + job->done;
    a->length = n;
    intent_queue(i);
}

/* KOP_CREATE whose program is a data area on another machine (the process
 * manager's memory, typically): fetch it into kernel pages, then create the
 * process from them, and answer over `reply` then. Returns 0 when the
 * answer will come later, or an error now. */
int64_t remote_create(struct dm_kreq *q, uint32_t len, const struct link *image, struct link *reply)
{
    int err = remote_reachable(image->dest);
    if (err)
        return err;
    if (!reply)
        return E_BADREQ;
    if (image->area_len > CREATE_MAX)
        return E_TOOBIG;
    struct create_job *job = 0;
    for (int j = 0; j < CREATE_JOBS && !job; j++)
        if (!create_jobs[j].active)
            job = &create_jobs[j];
    if (!job)
        return E_NOMEM;
    for (uint64_t at = 0; at < image->area_len; at += PAGE_SIZE) {
        if (!(job->pages[at / PAGE_SIZE] = page_alloc())) {
            create_free_pages(job);
            return E_NOMEM;
        }
    }
    if ((job->reply_slot = link_install(kernel_proc, reply)) < 0) {
        create_free_pages(job);
        return E_LINKFULL;
    }
    link_clear(reply);
    job->active = 1;
    job->machine = (uint8_t)location_of(image->dest);
    job->source = image->dest;
    job->address = image->area_addr;
    job->size = image->area_len;
    job->done = 0;
    job->request_len = len;
    memcpy(job->request, q, len);
    remote_wait_started();
    create_fetch(job);
    return 0;
}

/* Bytes of the program arrived for `job`. */
static void create_data(struct create_job *job, const struct rm_data *d, const uint8_t *bytes, uint32_t n)
{
    if (d->status < 0) {
        create_finished(job, d->status, 0);
        return;
    }
    for (uint32_t k = 0; k < n;) {
        uint64_t at = job->done + k;
        uint32_t part = PAGE_SIZE - at % PAGE_SIZE < n - k ? (uint32_t)(PAGE_SIZE - at % PAGE_SIZE) : n - k;
        memcpy(job->pages[at / PAGE_SIZE] + at % PAGE_SIZE, bytes + k, part);
        k += part;
    }
    job->done += n;
    if (job->done < job->size) {
        create_fetch(job);
        return;
    }
    struct dm_kreq *q = (struct dm_kreq *)job->request;
    const char *name = (const char *)(q + 1);
    uint32_t name_len = strlen(name);
    struct image_source source = { .pages = job->pages, .size = job->size };
    int err;
    struct proc *p = proc_create(name, &source, name + name_len + 1,
                                 job->request_len - sizeof *q - name_len - 1, (int)q->arg[0], (int)q->arg[1], &err);
    create_finished(job, p ? 0 : err, p ? p->pid : 0);
}

/* ---- receiving ---- */

/* The kernel message's fixed part, copied out of the frame to be aligned;
 * its data is used in place. */
union received {
    struct rm_header h;
    struct rm_send send;
    struct rm_result result;
    struct rm_noreply noreply;
    struct rm_access access;
    struct rm_data data;
    struct rm_location location;
    uint8_t bytes[sizeof(struct rm_send)];
};

static int receive_send(const struct rm_send *m, const uint8_t *message_bytes, uint32_t len);
static int receive_result(const struct rm_result *r, const uint8_t *message_bytes, uint32_t len);
static int receive_noreply(const struct rm_noreply *n, const uint8_t *message_bytes, uint32_t len);
static int receive_read(const struct rm_access *a, const uint8_t *message_bytes, uint32_t len);
static int receive_write(const struct rm_access *a, const uint8_t *message_bytes, uint32_t len);
static int receive_data(const struct rm_data *d, const uint8_t *message_bytes, uint32_t len);
static int receive_location(const struct rm_location *l, uint32_t len);
static int forward(const uint8_t *message_bytes, uint32_t len, dm_pid pid);
static int send_on(uint32_t machine, const uint8_t *message_bytes, uint32_t len);
static void follow_waiter(const uint8_t *message_bytes, uint32_t len, dm_pid waiter);
static int copy_into_intent(struct intent *i, const uint8_t *bytes, uint32_t len);

/* A kernel message from `machine` (the transport's deliver hook), to the
 * function for its type. Each says whether the message was well formed;
 * one that was not is counted and dropped. */
static inline __attribute__((always_inline)) void receive(uint32_t machine, const uint8_t *message_bytes,
                                                          uint32_t len)
{
    union received fixed;
    if (len < sizeof fixed.h) {
        counters.malformed++;
        return;
    }
    memcpy(&fixed, message_bytes, len < sizeof fixed ? len : sizeof fixed);
    int well_formed;
    switch (fixed.h.type) {
    case RM_SEND:
        well_formed = receive_send(&fixed.send, message_bytes, len);
        break;
    case RM_RESULT:
        well_formed = receive_result(&fixed.result, message_bytes, len);
        break;
    case RM_NOREPLY:
        well_formed = receive_noreply(&fixed.noreply, message_bytes, len);
        break;
    case RM_READ:
    case RM_READ_TO:
        well_formed = receive_read(&fixed.access, message_bytes, len);
        break;
    case RM_WRITE:
        well_formed = receive_write(&fixed.access, message_bytes, len);
        break;
    case RM_DATA:
        well_formed = receive_data(&fixed.data, message_bytes, len);
        break;
    case RM_PING:
        well_formed = 1;
        break;
    case RM_LOCATION:
        well_formed = receive_location(&fixed.location, len);
        break;
    case RM_MIGRATE:
    case RM_MIGRATE_PART:
    case RM_MIGRATE_CANCEL:
        well_formed = migrate_receive(machine, message_bytes, len);
        break;
    default:
        well_formed = 0;
    }
    if (!well_formed)
        counters.malformed++;
}

/* An RM_SEND: deliver its message here (to a process, or to this kernel as
 * a request), and answer whether it was taken. */
static int receive_send(const struct rm_send *m, const uint8_t *message_bytes, uint32_t len)
{
    uint32_t fixed = sizeof *m + (m->has_link ? sizeof(struct link) : 0) + (m->has_reply ? sizeof(struct link) : 0);
    if (len < sizeof *m || m->length > DM_MSG_MAX || len != fixed + m->length)
        return 0;
    const uint8_t *data = message_bytes + sizeof *m;
    struct link link, reply;
    if (m->has_link) {
        memcpy(&link, data, sizeof link);
        data += sizeof link;
    }
    if (m->has_reply) {
        memcpy(&reply, data, sizeof reply);
        data += sizeof reply;
    }
    struct message message = {
        .sender = m->sender, .code = m->code, .channel = m->channel, .flags = m->flags & DM_MSG_FROM_KERNEL,
        .length = m->length, .msgid = m->msgid, .data = data,
        .link = m->has_link ? &link : 0, .reply = m->has_reply ? &reply : 0,
    };
    struct proc *r = proc_lookup(m->dest);
    int status;
    if (!r) {
        if ((status = forward(message_bytes, len, m->dest)) == 0)
            return 1;                   /* where it arrives, it is answered */
    } else if (r == kernel_proc) {
        struct link via = { .state = LINK_LIVE, .dest = m->dest, .code = m->code, .channel = m->channel };
        struct outgoing o = { .from = 0, .via = &via, .message = message };
        status = (m->flags & DM_MSG_FROM_KERNEL) ? E_INVAL : kreq_handle(&o);
    } else {
        status = msg_deliver(r, &message, m->reply_id);
    }
    if (status < 0 || !m->has_reply)      /* a CALL taken is answered by its answer */
        remote_answer(&m->h, status);
    return 1;
}

/* An RM_RESULT: the answer to a meter batch's message, to a SEND or CALL,
 * or to a chunk of a MOVEDATA. */
static int receive_result(const struct rm_result *r, const uint8_t *message_bytes, uint32_t len)
{
    if (len != sizeof *r)
        return 0;
    const struct rm_header *h = &r->h;
    if (PID_SLOT(h->waiter) == 0) {     /* the kernel's own: a move's, or a meter batch's */
        if (!migrate_answered(h->op, r->status))
            meter_answered(h->op, r->status);
        return 1;
    }
    struct proc *p = waiting_process(h->waiter, h->op);
    if (!p) {
        follow_waiter(message_bytes, len, h->waiter);
        return 1;
    }
    if (p->state == PS_MOVING)
        move_answered(p, r->status);
    else if (r->status < 0)
        send_failed(p, (int)r->status);
    else if (p->state == PS_SENDING)
        wake(p, 0);
    return 1;                           /* a CALL goes on waiting for its answer */
}

/* An RM_NOREPLY: a CALL's reply link to a process here died unused. */
static int receive_noreply(const struct rm_noreply *n, const uint8_t *message_bytes, uint32_t len)
{
    if (len != sizeof *n)
        return 0;
    struct link l = { .state = LINK_LIVE, .dest = n->caller, .reply_id = n->reply_id };
    if (proc_lookup(n->caller))
        reply_link_dropped(&l);
    else
        forward(message_bytes, len, n->caller);
    return 1;
}

/* An RM_READ or RM_READ_TO: the bytes go back, or on to `to`. */
static int receive_read(const struct rm_access *a, const uint8_t *message_bytes, uint32_t len)
{
    if (len < sizeof *a || a->length > MOVE_CHUNK || len != sizeof *a)
        return 0;
    struct proc *p = proc_lookup(a->target);
    int err = p ? 0 : forward(message_bytes, len, a->target);
    if (!p) {
        if (err)
            answer_error(&a->h, err);
        return 1;
    }
    struct proc *to = a->h.type == RM_READ_TO ? proc_lookup(a->to) : 0;
    if (to) {
        remote_answer(&a->h, copy_user_to_user(to, a->to_address, p, a->address, a->length));
        return 1;
    }
    uint32_t to_machine = a->h.type == RM_READ ? a->h.answer_to : location_of(a->to);
    if (a->h.type == RM_READ_TO && to_machine == this_machine) {   /* `to` has ended here */
        remote_answer(&a->h, E_DEAD);
        return 1;
    }
    uint32_t type = a->h.type == RM_READ ? RM_DATA : RM_WRITE;
    uint32_t fixed = type == RM_DATA ? sizeof(struct rm_data) : sizeof(struct rm_access);
    struct intent *i = intent_new(to_machine, type, a->h.waiter, a->h.op, fixed, 0);
    if (!i)
        return 1;
    i->m.h.answer_to = a->h.answer_to;
    if (type == RM_WRITE) {                   /* on to the third machine, which answers the waiter */
        struct rm_access *w = (struct rm_access *)&i->m.h;
        w->target = a->to;
        w->address = a->to_address;
        w->length = a->length;
    }
    i->data_kind = DATA_MEMORY;
    i->data_pid = a->target;
    i->data_address = a->address;
    i->data_length = a->length;
    intent_queue(i);
    return 1;
}

/* An RM_WRITE: its bytes into `target`'s memory, and the answer. */
static int receive_write(const struct rm_access *a, const uint8_t *message_bytes, uint32_t len)
{
    if (len < sizeof *a || a->length > MOVE_CHUNK || len != sizeof *a + a->length)
        return 0;
    struct proc *p = proc_lookup(a->target);
    int err = p ? 0 : forward(message_bytes, len, a->target);
    if (p)
        remote_answer(&a->h, copy_out(p, a->address, message_bytes + sizeof *a, a->length) ? E_FAULT : 0);
    else if (err)
        remote_answer(&a->h, err);
    return 1;
}

/* An RM_DATA: bytes for a program being fetched (the kernel waits), or for
 * a MOVEDATA chunk (a process waits). */
static int receive_data(const struct rm_data *d, const uint8_t *message_bytes, uint32_t len)
{
    if (len < sizeof *d || len - sizeof *d > MOVE_CHUNK)
        return 0;
    const struct rm_header *h = &d->h;
    uint32_t n = len - sizeof *d;
    if (PID_SLOT(h->waiter) == 0) {
        struct create_job *job = create_job_of(h->op);
        if (job)
            create_data(job, d, message_bytes + sizeof *d, n);
        return 1;
    }
    struct proc *p = waiting_process(h->waiter, h->op);
    if (!p)
        follow_waiter(message_bytes, len, h->waiter);
    if (!p || p->state != PS_MOVING)
        return 1;
    struct move *m = &p->remote.move;
    if (d->status < 0 || n != m->chunk) {
        wake(p, d->status < 0 ? d->status : E_FAULT);
        return 1;
    }
    struct proc *dst = proc_lookup(m->dst);
    if (dst) {
        move_answered(p, copy_out(dst, m->dst_address + m->done, message_bytes + sizeof *d, n) ? E_FAULT : 0);
        return 1;
    }
    /* The destination's owner has moved away meanwhile: the bytes follow
     * it, and its machine answers this chunk. */
    struct intent *i = location_of(m->dst) == this_machine
                           ? 0
                           : intent_new(location_of(m->dst), RM_WRITE, p->pid, h->op, sizeof(struct rm_access), 1);
    if (!i || copy_into_intent(i, message_bytes + sizeof *d, n)) {
        if (i)
            intent_free(i);
        wake(p, i ? E_NOMEM : E_DEAD);
        return 1;
    }
    struct rm_access *a = (struct rm_access *)&i->m.h;
    a->target = m->dst;
    a->address = m->dst_address + m->done;
    a->length = n;
    intent_queue(i);
    return 1;
}

#ifdef LAB_FORWARDING
/* The forwarding lab's kernel (build/labs/forwarding/kernel.elf; Makefile,
 * docs/labs/forwarding.md) takes receive_location and forward from the
 * lab's file, which a student writes, instead of those below. */
#include "../labs/forwarding.c"
#else
/* An RM_LOCATION: where a moved process is (moves 0: no news of that),
 * and, if `waiter` still waits for `op`, the machine its wait depends on
 * now. A waiter that has left this machine is followed (forward), as a
 * message for it is; one in a CALL that was local (its answer was to come
 * from this machine) waits on that machine from then on, so that the
 * transport's E_NODE for it ends the wait. */
static int receive_location(const struct rm_location *l, uint32_t len)
{
    if (len != sizeof *l)
        return 0;
    if (l->moves && !proc_lookup(l->pid))
        location_learned(l->pid, l->machine, l->moves);
    if (!l->h.waiter)
        return 1;
    struct proc *p = proc_lookup(l->h.waiter);
    if (!p) {                       /* the waiter has left: the update follows it */
        forward((const uint8_t *)l, len, l->h.waiter);
        return 1;
    }
    if (p->state == PS_CALLING && !p->remote.active && p->wait_reply_id == l->h.op &&
        l->machine < node_count && l->machine != this_machine && !proc_lookup(l->pid)) {
        remote_call_waits_on(p, l->machine);    /* a local CALL whose callee has moved away */
        return 1;
    }
    p = waiting_process(l->h.waiter, l->h.op);
    if (p && l->machine < node_count) {
        struct remote_wait *w = &p->remote;
        if (l->replaces == NO_MACHINE || w->machine == l->replaces)
            w->machine = (uint8_t)l->machine;
        else if (w->machine2 == l->replaces)
            w->machine2 = (uint8_t)l->machine;
    }
    return 1;
}

/* A request for process `pid`, which is not on this machine, as it
 * arrived: sent on (send_on) to where the process went from here, to where
 * it is arriving from, or to its home (location.c), where it is done and
 * answered as any other; or an answer or a link update following its
 * waiter `pid`. A request's waiter's machine gets a link update: the
 * process's location, if this is news of it, and the machine its wait
 * depends on now. 0 once sent on; E_DEAD when nothing is known of the
 * process at its home (it has ended), or the request has been sent on
 * MAX_HOPS times; E_NOMEM when there is no room. */
static int forward(const uint8_t *message_bytes, uint32_t len, dm_pid pid)
{
    uint32_t machine, moves, kind;
    if (!location_lookup(pid, &machine, &moves, &kind)) {
        machine = PID_MACHINE(pid);
        moves = 0;
        kind = 0;
    }
    struct rm_header h;
    memcpy(&h, message_bytes, sizeof h);
    if (machine == this_machine || machine >= node_count || h.hops >= MAX_HOPS) {
        counters.unforwarded++;
        return E_DEAD;
    }
    int err = send_on(machine, message_bytes, len);
    if (err)
        return err;
    struct rm_location update = {
        .h = { .type = RM_LOCATION, .waiter = h.waiter, .op = h.op },
        .pid = pid, .machine = machine, .moves = kind == LOCATION_ARRIVING ? 0 : moves, .replaces = this_machine,
    };
    if ((update.moves || update.h.waiter) && h.type != RM_RESULT && h.type != RM_DATA && h.type != RM_LOCATION)
        remote_post(h.answer_to, &update.h, sizeof update, 0);   /* a request's: an answer's waiter knows */
    return 0;
}
#endif

/* The kernel message at message_bytes, `len` bytes as it arrived, into
 * `machine`'s outbox unchanged but for its count of hops, one more
 * (forward). 0, or E_NOMEM when no intent or page is free. */
static int send_on(uint32_t machine, const uint8_t *message_bytes, uint32_t len)
{
    struct rm_header h;
    memcpy(&h, message_bytes, sizeof h);
    uint32_t fixed = len < INTENT_BYTES ? len : INTENT_BYTES;
    struct intent *i = intent_new(machine, h.type, h.waiter, h.op, fixed, 0);
    if (!i || copy_into_intent(i, message_bytes + fixed, len - fixed)) {
        if (i)
            intent_free(i);
        counters.unforwarded++;
        return E_NOMEM;
    }
    memcpy(i->m.bytes, message_bytes, fixed);
    i->m.h.hops++;
    intent_queue(i);
    counters.forwarded++;
    return 0;
}

/* An answer (RM_RESULT, RM_DATA) for `waiter`, a process that does not
 * wait here: if it has left this machine, the answer follows it (a
 * failed CALL's answer, which comes to the machine it was sent from). */
static void follow_waiter(const uint8_t *message_bytes, uint32_t len, dm_pid waiter)
{
    uint32_t machine, moves, kind;
    if (!proc_lookup(waiter) && location_lookup(waiter, &machine, &moves, &kind) && kind == LOCATION_FORWARD)
        forward(message_bytes, len, waiter);
}

/* The `len` bytes at `bytes` as the data of intent i (DATA_COPY), in
 * pages of its own. 0, or E_NOMEM. */
static int copy_into_intent(struct intent *i, const uint8_t *bytes, uint32_t len)
{
    if (len == 0)
        return 0;
    i->data_kind = DATA_COPY;
    i->data_length = len;
    memset(i->pages, 0, sizeof i->pages);
    i->owns = OWNS_PAGES;
    for (uint32_t done = 0, k = 0; done < len; done += PAGE_SIZE, k++) {
        if (k >= COPY_PAGES || !(i->pages[k] = page_alloc_dirty()))
            return E_NOMEM;
        memcpy(i->pages[k], bytes + done, len - done < PAGE_SIZE ? len - done : PAGE_SIZE);
    }
    return 0;
}

/* ---- the network and the clock ---- */

/* A DATA or ACK frame arrived (cluster.c), parsed. */
void remote_frame(const struct netframe *f)
{
    inside_transport = 1;
    transport_frame_parsed(&net, f);
    inside_transport = 0;
    flush();
}

/* Machine `machine` announced itself in `epoch` (cluster.c). */
void remote_peer_up(uint32_t machine, uint32_t epoch)
{
    unheard_deadline[machine] = TRANSPORT_NO_TIMER;
    inside_transport = 1;
    transport_peer_up(&net, machine, epoch);
    inside_transport = 0;
    flush();
}

/* Ping every machine that a wait depends on and that has nothing else under
 * way from here, so that a machine that died is noticed. */
static void ping_waited_machines(void)
{
    uint8_t waited[NETFRAME_MAX_NODES] = { 0 };
    int any = 0;
    for (int s = 1; s < NPROC; s++) {
        struct proc *p = &procs[s];
        if (p->state != PS_FREE && p->remote.active) {
            waited[p->remote.machine] = 1;
            if (p->remote.machine2 != NO_MACHINE)
                waited[p->remote.machine2] = 1;
            any = 1;
        }
    }
    for (int j = 0; j < CREATE_JOBS; j++)
        if (create_jobs[j].active)
            waited[create_jobs[j].machine] = any = 1;
    any |= meter_mark_waited(waited);
    any |= migrate_mark_waited(waited);
    for (uint32_t m = 0; m < node_count; m++) {
        if (waited[m] && m != this_machine && !outbox[m].head && transport_pending(&net, m) == 0 &&
            net.peers[m].epoch &&
            !net.peers[m].down) {
            struct intent *i = intent_new(m, RM_PING, 0, 0, sizeof(struct rm_header), 1);
            if (i)
                intent_queue(i);
        }
    }
    next_ping = any ? machine_clock_ns() + PING_INTERVAL_NS : TRANSPORT_NO_TIMER;
}

/* KOP_HALT from another machine: power off soon, once the answer is out. */
#define HALT_DELAY_NS 100000000ull
void remote_halt_later(int code)
{
    halt_code = code;
    halt_at = machine_clock_ns() + HALT_DELAY_NS;
    remote_due_at(halt_at);
}

/* Something seldom needed is due at `t` (ns of the machine clock): a
 * move's work (migrate.c), a machine not heard of, a halt. remote_tick
 * looks at each of them then. */
void remote_due_at(uint64_t t)
{
    if (t < rare_due)
        rare_due = t;
}

static void rare_tick(uint64_t now);

/* The timer fired (trap.c): retransmissions, pings, announcements. */
void remote_tick(void)
{
    uint64_t now = machine_clock_ns();
    if (now >= rare_due)
        rare_tick(now);
    cluster_tick(now);
    if (now >= next_ping)          /* set by remote_wait_started while something waits */
        ping_waited_machines();
    if (now >= transport_due) {
        inside_transport = 1;
        transport_due = transport_tick(&net);
        inside_transport = 0;
    }
    flush();
}

/* remote_tick, when a seldom deadline is due (rare_due): a halt, machines
 * never heard of, and the moves' work (migrate.c). */
static void rare_tick(uint64_t now)
{
    if (now >= halt_at)
        kernel_halt(halt_code);
    if (now >= unheard_soonest) {
        unheard_soonest = TRANSPORT_NO_TIMER;
        for (uint32_t m = 0; m < node_count; m++) {
            if (now >= unheard_deadline[m]) {    /* never heard of: what waited for it fails */
                unheard_deadline[m] = TRANSPORT_NO_TIMER;
                if (net.peers[m].epoch == 0)
                    fail_machine(m, E_NODE);
            }
            if (unheard_deadline[m] < unheard_soonest)
                unheard_soonest = unheard_deadline[m];
        }
    }
    migrate_tick(now);
    rare_due = halt_at < unheard_soonest ? halt_at : unheard_soonest;
    if (migrate_next_time() < rare_due)
        rare_due = migrate_next_time();
}

/* When remote_tick must run next (machine-clock ns). */
uint64_t remote_next_time(void)
{
    uint64_t t = transport_due;
    if (next_ping < t)
        t = next_ping;
    if (cluster_next_time() < t)
        t = cluster_next_time();
    if (rare_due < t)
        t = rare_due;
    return t;
}

/* KOP_NETSTAT: every other machine heard of, and the transport's counters. */
uint32_t remote_netstat(struct dm_kpeer *out, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t m = 0; m < node_count && n < max; m++) {
        const struct transport_counters *c = transport_counters(&net, m);
        if (m == this_machine || !c || net.peers[m].epoch == 0)
            continue;
        out[n] = (struct dm_kpeer){
            .machine = m, .epoch = net.peers[m].epoch,
            .state = net.peers[m].down ? DM_PEER_DOWN : DM_PEER_UP,
            .pending = transport_pending(&net, m),
            .messages_sent = c->messages_sent, .messages_delivered = c->messages_delivered,
            .messages_failed = c->messages_failed, .frames_sent = c->frames_sent,
            .retransmissions = c->retransmissions, .timeouts = c->timeouts,
            .duplicates_dropped = c->duplicates_dropped, .out_of_order_dropped = c->out_of_order_dropped,
            .stale_dropped = c->stale_dropped,
        };
        cluster_auth_counters(m, &out[n].forged, &out[n].replayed);
        n++;
    }
    return n;
}

/* For Ctrl-T (kernel_status): the outboxes, the transport's peers and timers. */
void remote_status(void)
{
    kprintf("  transport: next tick %lu ns from now, next ping %s, %u of %u intents free, flushing %d\n",
            transport_due == TRANSPORT_NO_TIMER ? 0 : transport_due - machine_clock_ns(),
            next_ping == TRANSPORT_NO_TIMER ? "none" : "set", free_intent_count, NINTENTS, flushing);
    for (uint32_t m = 0; m < node_count; m++) {
        if (m == this_machine || net.peers[m].epoch == 0)
            continue;
        uint32_t queued = 0;
        for (struct intent *i = outbox[m].head; i; i = i->next)
            queued++;
        const struct transport_peer *p = &net.peers[m];
        kprintf("  machine %u epoch %u%s: outbox %u, unacknowledged %u, next sequence %u, acked %u, "
                "delivered %u, retries %u\n", m, p->epoch, p->down ? " (down)" : "", queued,
                transport_pending(&net, m), p->next_sequence, p->acked, p->delivered, p->retries);
    }
}

/* The transport's counters for every other machine (at halt). */
void remote_print_counters(void)
{
    for (uint32_t m = 0; m < node_count; m++) {
        const struct transport_counters *c = transport_counters(&net, m);
        if (m == this_machine || !c || (c->messages_sent == 0 && c->messages_delivered == 0))
            continue;
        kprintf("transport %u->%u: sent %u delivered %u failed %u frames %u retransmitted %u timeouts %u "
                "duplicates %u out-of-order %u stale %u\n",
                this_machine, m, c->messages_sent, c->messages_delivered, c->messages_failed, c->frames_sent,
                c->retransmissions, c->timeouts, c->duplicates_dropped, c->out_of_order_dropped,
                c->stale_dropped);
    }
    if (counters.intents_lost || counters.intents_refused || counters.malformed)
        kprintf("remote: %lu answers lost (no intent free), %lu requests refused (E_NOMEM), %lu malformed\n",
                counters.intents_lost, counters.intents_refused, counters.malformed);
    if (counters.forwarded || counters.unforwarded)
        kprintf("machine %u: %lu requests sent on to moved processes, %lu could not be\n", this_machine,
                counters.forwarded, counters.unforwarded);
    location_print_counters();
    migrate_print_counters();
}
