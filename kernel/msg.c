/*
 * msg.c — messages: SEND's delivery, RECEIVE's queue, CALL's reply.
 *
 * A message (struct message, defs.h) goes straight into the receiver's
 * buffer when the receiver is already waiting for it (in RECEIVE on a
 * matching channel, or in CALL for exactly this reply); otherwise it is
 * copied into a kernel buffer and queued. Links travel with messages: a
 * passed link and a CALL's reply link leave the sender and enter the
 * receiver's table when the message is received.
 *
 * A process that blocks in RECEIVE or CALL gets its result later: the path
 * that delivers a message to it writes its a0 (deliver_to_waiting), and the
 * scheduler returns to it.
 */
#include "defs.h"
#include "probes.h"

static int channel_matches(uint32_t wanted, uint32_t channel);
static int64_t hand_over(struct proc *r, struct message *m);
static void deliver_to_waiting(struct proc *r, struct message *m);
static int enqueue(struct proc *r, struct message *m);
static inline __attribute__((always_inline)) void queued_free(struct queued *q);
static int send_away(struct outgoing *o);

/* ---- sending ---- */

/* Send o's message over o->via. Returns 0 once the destination has it
 * (delivered, queued, or handled by its kernel), SEND_PENDING when the
 * destination is on another machine and the sending process now waits for
 * its kernel's answer (net/remote.c), or an error and nothing moved. On
 * success the passed link has left the sender's table. */
int msg_send(struct outgoing *o)
{
    struct proc *r;
    if (PID_MACHINE(o->via->dest) != this_machine || !(r = proc_lookup(o->via->dest)))
        return send_away(o);
    if (r == kernel_proc)
        return kreq_handle(o);
    int err = msg_deliver(r, &o->message, o->via->reply_id);
    if (err)
        return err;
    if (o->message.link)
        link_clear(o->message.link);
    return 0;
}

/* msg_send for a destination that is not in the slot its id names on this
 * machine: on another machine (net/remote.c), or a process that has moved
 * (here from another machine, or away from here: net/migrate.c), or gone.
 * Out of line, off the path of a local message. */
static __attribute__((noinline)) int send_away(struct outgoing *o)
{
    struct proc *r = procs_displaced ? proc_lookup_displaced(o->via->dest) : 0;
    if (r) {                         /* it moved here */
        int err = msg_deliver(r, &o->message, o->via->reply_id);
        if (!err && o->message.link)
            link_clear(o->message.link);
        return err;
    }
    if (o->from != current)
        return remote_send(o);       /* the kernel's own message (a meter batch, a notice) */
    kernel_work_begin();             /* the transport's work is the kernel's (defs.h) */
    int result = remote_send(o);
    kernel_work_end();
    return result;
}

/* The kernel's own message: `length` bytes at `data` over `via`, passing
 * `pass` (or 0). msg_send's result. */
int msg_send_from_kernel(const struct link *via, const void *data, uint32_t length, struct link *pass)
{
    struct outgoing o = {
        .from = kernel_proc, .via = via,
        .message = { .sender = kernel_proc->pid, .code = via->code, .channel = via->channel,
                     .flags = DM_MSG_FROM_KERNEL, .length = length, .data = data, .link = pass },
    };
    return msg_send(&o);
}

/* Give r message m: straight into its buffer if it waits for it, else into
 * its queue. A CALL's answer (reply_id != 0) only to the CALL that waits
 * for exactly that id. Returns 0, or an error and nothing moved. */
int msg_deliver(struct proc *r, struct message *m, uint64_t reply_id)
{
    if (reply_id) {
        /* The caller waits for exactly this id; else it has stopped
         * waiting (its CALL ended, or it ended). */
        if (r->state != PS_CALLING || r->wait_reply_id != reply_id)
            return E_DEAD;
        deliver_to_waiting(r, m);
    } else if (r->state == PS_RECEIVING && channel_matches(r->wait.channel, m->channel)) {
        deliver_to_waiting(r, m);
    } else {
        return enqueue(r, m);
    }
    return 0;
}

/* ---- receiving ---- */

/* Check the receiver's buffers and remember them in p->wait (RECEIVE,
 * ARECEIVE, CALL). Returns 0 or E_FAULT. */
int set_receive_target(struct proc *p, uint64_t info, uint64_t buf, uint64_t cap, uint32_t channel)
{
    struct receive_target *t = &p->wait;
    if (!user_range_ok(p, info, sizeof(struct dm_msg_info), 1, (void **)&t->info_kernel) ||
        !user_range_ok(p, buf, cap, 1, (void **)&t->buf_kernel))
        return E_FAULT;
    t->info = info;
    t->buf = buf;
    t->cap = cap;
    t->channel = channel;
    return 0;
}

/* RECEIVE / ARECEIVE for p, whose receive target is set: take the first
 * queued message on a matching channel; else block (RESULT_PENDING) or
 * fail with E_NOMSG. Inlined into both copies of the kernel-call
 * dispatcher (syscall.c). */
inline __attribute__((always_inline)) int64_t msg_receive(struct proc *p, uint32_t channel, int block)
{
    struct queued *prev = 0;
    for (struct queued *q = p->queue_head; q; prev = q, q = q->next) {
        if (!channel_matches(channel, q->message.channel))
            continue;
        if (prev)
            prev->next = q->next;
        else
            p->queue_head = q->next;
        if (p->queue_tail == q)
            p->queue_tail = prev;
        p->queue_len--;
        int64_t result = hand_over(p, &q->message);
        queued_free(q);
        probe_message_taken();
        return result;
    }
    if (!block)
        return E_NOMSG;
    p->state = PS_RECEIVING;
    return RESULT_PENDING;
}

/* Whether a message on `channel` is queued at p (ARECEIVE's RECEIVECALL
 * record says whether it found one). */
int msg_queue_has(struct proc *p, uint32_t channel)
{
    for (struct queued *q = p->queue_head; q; q = q->next)
        if (channel_matches(channel, q->message.channel))
            return 1;
    return 0;
}

static int channel_matches(uint32_t wanted, uint32_t channel)
{
    return wanted == DM_ANY_CHANNEL || wanted == channel;
}

/* Deliver to a process blocked in RECEIVE or CALL, and wake it. */
static void deliver_to_waiting(struct proc *r, struct message *m)
{
    r->remote.active = 0;      /* a CALL to another machine is answered */
    TF_A(&r->tf, 0) = (uint64_t)hand_over(r, m);
    make_runnable(r);
}

/* Put a travelling link into r's table; its slot, or DM_NO_LINK after
 * destroying it when the table is full (the receiver is told). */
static int32_t receive_link(struct proc *r, struct link *l, uint32_t *flags)
{
    int slot = link_install(r, l);
    if (slot < 0) {
        link_drop(l);
        *flags |= DM_MSG_LINK_LOST;
        return DM_NO_LINK;
    }
    return slot;
}

/* Hand message m to receiver r at its receive target. Returns the bytes
 * copied into its buffer, or E_FAULT if its memory went bad. Written once
 * for both kinds of receiver and expanded twice, like the kernel calls
 * (syscall.c, dispatch): the unmetered copy has no probe. */
static inline __attribute__((always_inline)) int64_t hand_over_body(struct proc *r, struct message *m, int metered)
{
    struct receive_target *t = &r->wait;
    uint32_t n = m->length < t->cap ? m->length : (uint32_t)t->cap;
    int err = 0;
    if (t->buf_kernel && m->data)
        memcpy(t->buf_kernel, m->data, n);
    else if (m->data)
        err = copy_out(r, t->buf, m->data, n);
    else
        err = copy_user_to_user(r, t->buf, m->data_owner, m->data_address, n);

    struct dm_msg_info local, *info = t->info_kernel ? t->info_kernel : &local;
    info->sender = m->sender;
    info->code = m->code;
    info->channel = m->channel;
    info->flags = m->flags | (n < m->length ? DM_MSG_TRUNCATED : 0);
    info->length = m->length;
    info->reserved = 0;
    info->link = m->link ? receive_link(r, m->link, &info->flags) : DM_NO_LINK;
    info->reply = m->reply ? receive_link(r, m->reply, &info->flags) : DM_NO_LINK;
    if (metered)
        probe_handed_over(r, m, info->link, info->reply);
    if (err == 0 && info == &local)
        err = copy_out(r, t->info, &local, sizeof local);
    return err ? err : (int64_t)n;
}

/* A metered receiver's copy: what it does beyond the unmetered one is the
 * meter's, counted (probes.h) from hand_over's choice of it; the count is
 * off for the work both copies do. */
static __attribute__((noinline)) int64_t hand_over_metered(struct proc *r, struct message *m)
{
    meter_count_off();
    int64_t result = hand_over_body(r, m, 1);
    meter_count_on();
    return result;
}

/* The choice of copy is the same test for both, and what the unmetered
 * copy does around its body (entering and leaving this function) the
 * metered one does too: only the metered copy itself is counted. */
static int64_t hand_over(struct proc *r, struct message *m)
{
    if (!METER_ANY(r))
        return hand_over_body(r, m, 0);
    meter_count_on();
    int64_t result = hand_over_metered(r, m);
    meter_probe_end();
    return result;
}

/* ---- the queues ---- */

static struct queued queued_pool[NMSG];
static struct queued *queued_free_list;

void msg_init(void)
{
    for (int i = 0; i < NMSG; i++) {
        queued_pool[i].next = queued_free_list;
        queued_free_list = &queued_pool[i];
    }
}

/* The process of this machine that sent a message, whose sent_queued
 * counts it; 0 for a kernel's message or one from another machine. */
static struct proc *counted_sender(dm_pid sender)
{
    if (PID_MACHINE(sender) != this_machine || PID_SLOT(sender) == 0)
        return 0;
    return proc_lookup(sender);
}

/* Copy message m into a kernel buffer at the end of r's queue. Out of
 * line, off the path to a waiting receiver (docs/performance.md). */
static __attribute__((noinline)) int enqueue(struct proc *r, struct message *m)
{
    if (r->queue_len >= DM_QUEUE_MAX)
        return E_QFULL;
    struct proc *sender = counted_sender(m->sender);
    if (sender && sender->sent_queued >= DM_SENT_QUEUED_MAX)
        return E_NOMEM;
    struct queued *q = queued_free_list;
    if (!q)
        return E_NOMEM;
    uint8_t *data = q->inline_data;
    int err = 0;
    if (m->flags & MSG_DONATED_PAGE) {         /* the page itself joins the queue */
        data = (uint8_t *)m->data;
        m->flags &= ~MSG_DONATED_PAGE;
    } else if (m->length > MSG_INLINE && !(data = page_alloc_dirty())) {
        return E_NOMEM;
    } else {
        err = m->data ? (memcpy(data, m->data, m->length), 0)
                      : copy_in(m->data_owner, data, m->data_address, m->length);
    }
    if (err) {
        if (data != q->inline_data)
            page_free(data);
        return err;
    }
    queued_free_list = q->next;
    q->next = 0;
    if (sender)
        sender->sent_queued++;
    q->message = *m;
    q->message.data = data;
    q->message.data_owner = 0;
    q->message.link = m->link ? (q->link = *m->link, &q->link) : 0;
    q->message.reply = m->reply ? (q->reply = *m->reply, &q->reply) : 0;
    if (r->queue_tail)
        r->queue_tail->next = q;
    else
        r->queue_head = q;
    r->queue_tail = q;
    r->queue_len++;
    probe_queued(r, &q->message);
    return 0;
}

/* Its data's page and its buffer go back, and its sender may queue one
 * more. Inlined: RECEIVE of a queued message is on the message path. */
static inline __attribute__((always_inline)) void queued_free(struct queued *q)
{
    struct proc *sender = counted_sender(q->message.sender);
    if (sender && sender->sent_queued)
        sender->sent_queued--;
    if (q->message.data != q->inline_data)
        page_free((void *)q->message.data);
    q->next = queued_free_list;
    queued_free_list = q;
}

/* Throw away everything queued at p (it is ending); links inside die too. */
void msg_discard_queue(struct proc *p)
{
    while (p->queue_head) {
        struct queued *q = p->queue_head;
        p->queue_head = q->next;
        msg_queued_drop(q);
    }
    p->queue_tail = 0;
    p->queue_len = 0;
}

/* Throw away a queued message with the links it carries. */
void msg_queued_drop(struct queued *q)
{
    if (q->message.link)
        link_drop(q->message.link);
    if (q->message.reply)
        link_drop(q->message.reply);
    queued_free(q);
}

/* A queued message is done with (it has left with its process: net/
 * migrate.c): its data's page and its buffer go back, and its sender may
 * queue one more. Its links are the caller's. */
void msg_queued_free(struct queued *q)
{
    queued_free(q);
}

/* A message that was queued at a process on another machine and moves
 * here with it (net/migrate.c): appended to the queue (*head, *tail) being
 * rebuilt for it, as it was, with no record. 0, or E_NOMEM. */
int msg_queue_moved(struct queued **head, struct queued **tail, const struct message *m)
{
    struct queued *q = queued_free_list;
    uint8_t *data = q ? q->inline_data : 0;
    if (!q || (m->length > MSG_INLINE && !(data = page_alloc_dirty())))
        return E_NOMEM;
    queued_free_list = q->next;
    memcpy(data, m->data, m->length);
    struct proc *sender = counted_sender(m->sender);
    if (sender)
        sender->sent_queued++;
    q->next = 0;
    q->message = *m;
    q->message.data = data;
    q->message.data_owner = 0;
    q->message.link = m->link ? (q->link = *m->link, &q->link) : 0;
    q->message.reply = m->reply ? (q->reply = *m->reply, &q->reply) : 0;
    if (*tail)
        (*tail)->next = q;
    else
        *head = q;
    *tail = q;
    return 0;
}

/* ---- reply links ---- */

static uint64_t reply_counter;

uint64_t new_reply_id(void)
{
    return ++reply_counter;
}

/* A CALL's reply link died unused: its caller, if still waiting, fails. */
void reply_link_dropped(const struct link *l)
{
    struct proc *caller = proc_lookup(l->dest);
    if (!caller) {
        remote_reply_dropped(l);     /* on another machine, or moved away */
        return;
    }
    if (caller->state == PS_CALLING && caller->wait_reply_id == l->reply_id) {
        caller->remote.active = 0;
        TF_A(&caller->tf, 0) = (uint64_t)(int64_t)E_NOREPLY;
        make_runnable(caller);
    }
}
