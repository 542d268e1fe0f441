/*
 * msg.c — messages: SEND's delivery, RECEIVE's queue, CALL's reply.
 *
 * A message goes straight into the receiver's buffer when the receiver is
 * already waiting for it (in RECEIVE on a matching channel, or in CALL for
 * exactly this reply); otherwise it is copied into a kernel buffer and
 * queued. Links travel with messages: a passed link and a CALL's reply link
 * leave the sender and enter the receiver's table when the message is
 * received.
 */
#include "defs.h"
#include "probes.h"

static struct msg msg_pool[NMSG];
static struct msg *msg_free_list;
static uint64_t reply_counter;

void msg_init(void)
{
    for (int i = 0; i < NMSG; i++) {
        msg_pool[i].next = msg_free_list;
        msg_free_list = &msg_pool[i];
    }
}

uint64_t new_reply_id(void)
{
    return ++reply_counter;
}

/* The local process that sent m, whose sent_queued counts it; 0 for a
 * kernel's message or one from another machine. */
static struct proc *counted_sender(dm_pid sender)
{
    if (PID_MACHINE(sender) != this_machine || PID_SLOT(sender) == 0)
        return 0;
    return proc_lookup(sender);
}

static void msg_free(struct msg *m)
{
    struct proc *sender = counted_sender(m->sender);
    if (sender && sender->sent_queued)
        sender->sent_queued--;
    if (m->data != m->inline_data)
        page_free(m->data);
    m->next = msg_free_list;
    msg_free_list = m;
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

/* Hand a message to receiver r at its receive target. Returns the bytes
 * copied into its buffer, or E_FAULT if its memory went bad. Written once
 * for both kinds of receiver and expanded twice, like the kernel calls
 * (syscall.c, dispatch): the unmetered copy has no probe. */
static inline __attribute__((always_inline)) int64_t hand_over_body(struct proc *r, struct delivery *d, int metered)
{
    struct receive_target *t = &r->wait;
    uint32_t n = d->length < t->cap ? d->length : (uint32_t)t->cap;
    int err = 0;
    if (t->buf_kernel && d->data_kernel)
        memcpy(t->buf_kernel, d->data_kernel, n);
    else if (d->data_kernel)
        err = copy_out(r, t->buf, d->data_kernel, n);
    else
        err = copy_user_to_user(r, t->buf, d->data_proc, d->data_uva, n);

    struct dm_msg_info local, *info = t->info_kernel ? t->info_kernel : &local;
    info->sender = d->sender;
    info->code = d->code;
    info->channel = d->channel;
    info->flags = d->flags | (n < d->length ? DM_MSG_TRUNCATED : 0);
    info->length = d->length;
    info->reserved = 0;
    info->link = d->link ? receive_link(r, d->link, &info->flags) : DM_NO_LINK;
    info->reply = d->reply ? receive_link(r, d->reply, &info->flags) : DM_NO_LINK;
    if (metered)
        probe_handed_over(r, d, info->link, info->reply);
    if (err == 0 && info == &local)
        err = copy_out(r, t->info, &local, sizeof local);
    return err ? err : (int64_t)n;
}

static __attribute__((noinline)) int64_t hand_over_metered(struct proc *r, struct delivery *d)
{
    return hand_over_body(r, d, 1);
}

static int64_t hand_over(struct proc *r, struct delivery *d)
{
    return METER_ANY(r) ? hand_over_metered(r, d) : hand_over_body(r, d, 0);
}

static int channel_matches(uint32_t wanted, uint32_t channel)
{
    return wanted == DM_ANY_CHANNEL || wanted == channel;
}

/* Deliver to a process blocked in RECEIVE or CALL, and wake it. */
static void deliver_to_waiting(struct proc *r, struct delivery *d)
{
    r->remote.active = 0;      /* a CALL to another machine is answered */
    TF_A(&r->tf, 0) = (uint64_t)hand_over(r, d);
    make_runnable(r);
}

/* Copy a message into a kernel buffer at the end of r's queue. Out of
 * line, off the path to a waiting receiver (docs/performance.md). */
static __attribute__((noinline)) int enqueue(struct proc *r, struct delivery *d)
{
    if (r->queue_len >= DM_QUEUE_MAX)
        return E_QFULL;
    struct proc *sender = counted_sender(d->sender);
    if (sender && sender->sent_queued >= DM_SENT_QUEUED_MAX)
        return E_NOMEM;
    struct msg *m = msg_free_list;
    if (!m)
        return E_NOMEM;
    m->data = m->inline_data;
    int err = 0;
    if (d->flags & MSG_DONATED_PAGE) {         /* the page itself joins the queue */
        m->data = (uint8_t *)d->data_kernel;
        d->flags &= ~MSG_DONATED_PAGE;
    } else if (d->length > MSG_INLINE && !(m->data = page_alloc_dirty())) {
        return E_NOMEM;
    } else {
        err = d->data_kernel ? (memcpy(m->data, d->data_kernel, d->length), 0)
                             : copy_in(d->data_proc, m->data, d->data_uva, d->length);
    }
    if (err) {
        if (m->data != m->inline_data)
            page_free(m->data);
        return err;
    }
    msg_free_list = m->next;
    m->next = 0;
    if (sender)
        sender->sent_queued++;
    m->sender = d->sender;
    m->code = d->code;
    m->channel = d->channel;
    m->flags = d->flags;
    m->length = d->length;
    m->msgid = d->msgid;
    m->has_link = d->link != 0;
    m->has_reply = d->reply != 0;
    if (d->link)
        m->link = *d->link;
    if (d->reply)
        m->reply = *d->reply;
    if (r->queue_tail)
        r->queue_tail->next = m;
    else
        r->queue_head = m;
    r->queue_tail = m;
    r->queue_len++;
    probe_queued(r, m);
    return 0;
}

/* Give r a message: straight into its buffer if it waits for it, else
 * into its queue. A CALL's answer (reply_id != 0) only to the CALL that
 * waits for exactly that id. Returns 0, or an error and nothing moved. */
int msg_deliver(struct proc *r, struct delivery *d, uint64_t reply_id)
{
    if (reply_id) {
        /* The caller waits for exactly this id, or the caller is gone (and
         * proc_lookup found its successor). */
        if (r->state != PS_CALLING || r->wait_reply_id != reply_id)
            return E_DEAD;
        deliver_to_waiting(r, d);
    } else if (r->state == PS_RECEIVING && channel_matches(r->wait.channel, d->channel)) {
        deliver_to_waiting(r, d);
    } else {
        return enqueue(r, d);
    }
    return 0;
}

/* Send o's message over o->via, as message `msgid` (the meter's id, or 0).
 * Returns 0 once the destination has it (delivered, queued, or handled by
 * the kernel), SEND_PENDING when the destination is on another machine
 * and the sending process now waits for its kernel's answer (net/remote.c), or
 * an error and nothing moved. On success the passed link has left the
 * sender's table. The id is an argument, not a field of `o` that every
 * SEND would have to fill, so that unmetered messages pay nothing for it. */
static inline __attribute__((always_inline)) int send_message(struct outgoing *o, uint64_t msgid)
{
    if (PID_MACHINE(o->via->dest) != this_machine) {
        o->msgid = msgid;
        if (o->sender != current)
            return remote_send(o);   /* the kernel's own message (a meter batch) */
        kernel_work_begin();         /* the transport's work is the kernel's (proc.c) */
        int result = remote_send(o);
        kernel_work_end();
        return result;
    }
    struct proc *r = proc_lookup(o->via->dest);
    if (!r)
        return E_DEAD;
    if (r == kernel_proc)
        return kreq_handle(o);

    struct delivery d;
    d.sender = o->sender->pid;
    d.code = o->via->code;
    d.channel = o->via->channel;
    d.flags = o->sender == kernel_proc ? DM_MSG_FROM_KERNEL : 0;
    d.length = o->len;
    d.msgid = msgid;
    d.data_proc = o->sender;
    d.data_uva = o->udata;
    d.data_kernel = o->kdata;
    d.link = o->pass;
    d.reply = o->reply;
    int err = msg_deliver(r, &d, o->via->reply_id);
    if (err)
        return err;
    if (o->pass)
        link_clear(o->pass);
    return 0;
}

/* Whether a message on `channel` is queued at p (ARECEIVE's RECEIVECALL
 * record says whether it found one). */
int msg_queue_has(struct proc *p, uint32_t channel)
{
    for (struct msg *m = p->queue_head; m; m = m->next)
        if (channel_matches(channel, m->channel))
            return 1;
    return 0;
}

int msg_send(struct outgoing *o)
{
    return send_message(o, 0);
}

/* The same for a metered sender's message, with its id. */
int msg_send_with_id(struct outgoing *o, uint64_t msgid)
{
    return send_message(o, msgid);
}

/* RECEIVE / ARECEIVE for p, whose receive target is set: take the first
 * queued message on a matching channel; else block (RESULT_PENDING) or
 * fail with E_NOMSG. A process that blocks gets its result later: the
 * path that delivers a message to it writes its a0 (deliver_to_waiting).
 * Inlined into both copies of the kernel-call dispatcher (syscall.c). */
inline __attribute__((always_inline)) int64_t msg_receive(struct proc *p, uint32_t channel, int block)
{
    struct msg *prev = 0;
    for (struct msg *m = p->queue_head; m; prev = m, m = m->next) {
        if (!channel_matches(channel, m->channel))
            continue;
        if (prev)
            prev->next = m->next;
        else
            p->queue_head = m->next;
        if (p->queue_tail == m)
            p->queue_tail = prev;
        p->queue_len--;
        struct delivery d = {
            .sender = m->sender, .code = m->code, .channel = m->channel, .flags = m->flags,
            .length = m->length, .msgid = m->msgid, .data_kernel = m->data,
            .link = m->has_link ? &m->link : 0, .reply = m->has_reply ? &m->reply : 0,
        };
        int64_t result = hand_over(p, &d);
        msg_free(m);
        probe_message_taken();
        return result;
    }
    if (!block)
        return E_NOMSG;
    p->state = PS_RECEIVING;
    return RESULT_PENDING;
}

/* Throw away everything queued at p (it is ending); links inside die too. */
void msg_discard_queue(struct proc *p)
{
    while (p->queue_head) {
        struct msg *m = p->queue_head;
        p->queue_head = m->next;
        if (m->has_link)
            link_drop(&m->link);
        if (m->has_reply)
            link_drop(&m->reply);
        msg_free(m);
    }
    p->queue_tail = 0;
    p->queue_len = 0;
}

/* A CALL's reply link died unused: its caller, if still waiting, fails. */
void reply_link_dropped(const struct link *l)
{
    if (PID_MACHINE(l->dest) != this_machine) {
        remote_reply_dropped(l);
        return;
    }
    struct proc *caller = proc_lookup(l->dest);
    if (caller && caller->state == PS_CALLING && caller->wait_reply_id == l->reply_id) {
        caller->remote.active = 0;
        TF_A(&caller->tf, 0) = (uint64_t)(int64_t)E_NOREPLY;
        make_runnable(caller);
    }
}
