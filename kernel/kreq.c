/*
 * kreq.c — requests to the kernel over kernel links (demos.h, "Requests over
 * kernel links"): the dispatcher, which hands each request to the service
 * of its link's kind, and process control for the process manager. The
 * console UART for the console server is console_service.c, the clock for
 * the timer server timer_service.c, a disk dev/virtio_disk.c and the live
 * trace channel dev/virtio_console.c.
 *
 * A request arrives as a message to the kernel (slot 0) and is handled at
 * once, in the sender's kernel call. Its answer goes back over the CALL's
 * reply link — at once, or later for requests that wait (console input, an
 * alarm, console output that does not fit yet): then the kernel keeps the
 * reply link in its own link table until it answers.
 */
#include "defs.h"
#include "probes.h"

static uint8_t request[DM_MSG_MAX];    /* the request being handled */
static uint8_t answer[DM_MSG_MAX];     /* the answer being built */
static struct link passed_answer_link;  /* a link passed to answer over */
static struct link answer_link;         /* a link the answer passes (KOP_DEVICE), or empty */

static void answer_over(struct link *reply, int64_t status, uint64_t value, const void *data, uint32_t len);
static void check_answer(uint32_t op, int64_t status);
static int is_process_control(uint32_t op);
static int64_t process_control(struct dm_kreq *q, uint32_t len, struct link *pass, struct link *reply,
                               uint64_t *value, uint32_t *answer_len, int *later, int from_here);

/* A message to this kernel: check the link's authority, do the request,
 * answer over the CALL's reply link (if any). Returns the send's result:
 * 0 once accepted, or the request's error when there is no reply link. */
int kreq_handle(struct outgoing *o)
{
    struct message *m = &o->message;
    if (o->from == kernel_proc)
        return E_INVAL;
    uint32_t len = m->length;
    if (m->data && len <= sizeof request)
        memcpy(request, m->data, len);
    if (len < sizeof(struct dm_kreq) || (!m->data && copy_in(m->data_owner, request, m->data_address, len))) {
        if (m->reply)
            answer_over(m->reply, E_BADREQ, 0, 0, 0);
        return m->reply ? 0 : E_BADREQ;
    }
    struct dm_kreq *q = (struct dm_kreq *)request;
    uint64_t value = 0;
    uint32_t answer_len = 0;
    int later = 0;
    int64_t status;
    switch (KLINK_KIND(o->via->code)) {
    case KLINK_PROCESS_CONTROL:
        status = is_process_control(q->op)
                     ? process_control(q, len, m->link, m->reply, &value, &answer_len, &later, o->from != 0)
                     : E_BADREQ;
        break;
    case KLINK_CONSOLE:
    case KLINK_TIMER:
        /* A request sent with SEND may pass the link to answer over (so
         * that a server need not wait for the answer): it moves here. */
        if (!m->reply && m->link) {
            passed_answer_link = *m->link;
            link_clear(m->link);
            m->link = 0;
            m->reply = &passed_answer_link;
        }
        if (KLINK_KIND(o->via->code) == KLINK_CONSOLE)
            status = console_request(q, len, m->reply, &value, &answer_len, &later);
        else
            status = timer_request(q, m->reply, &value, &answer_len, &later);
        break;
    case KLINK_DISK:
        status = disk_request(KLINK_INDEX(o->via->code), q, m->link, m->reply, &value, &later);
        break;
    case KLINK_LIVE:
        status = live_request(q, m->link, m->reply, &later);
        break;
    default:
        status = E_BADREQ;
    }
    check_answer(q->op, status);
    if (m->link && m->link->state == LINK_EMPTY)
        m->link = 0;   /* the request took the passed link */
    if (m->link && (m->reply || status >= 0)) {
        link_drop(m->link);   /* it travelled with the request, as to a process, and ends here */
        m->link = 0;
    }
    if (later || !m->reply) {
        link_clear(&answer_link);       /* no answer now: nothing to pass */
        return later ? 0 : (int)(status < 0 ? status : 0);
    }
    answer_over(m->reply, status, value, answer + sizeof(struct dm_kreply), answer_len);
    return 0;
}

/* ---- process control ---- */

static int64_t kop_create(struct dm_kreq *q, uint32_t len, struct link *pass, struct link *reply,
                          uint64_t *value, int *later);
static int64_t kop_ps(int64_t first, uint8_t *out, uint32_t *out_len, uint64_t *value);
static int64_t kop_notify(struct link *pass);
static int64_t kop_netstat(uint64_t *value, uint32_t *answer_len);
static int64_t kop_device(struct dm_kreq *q);
static int64_t kop_meter_flush(struct dm_kreq *q, struct link *reply, int *later);
static int64_t kop_halt(struct dm_kreq *q, int from_here);
static int64_t process_op(struct dm_kreq *q, uint32_t len, struct link *pass, uint64_t *value);
static int64_t kop_movelink(struct proc *p, struct dm_kreq *q, struct link *pass, uint64_t *value);
static int64_t kop_start(struct proc *p);
static int64_t kop_stop(struct proc *p, dm_pid on_behalf);
static int64_t kop_resume(struct proc *p);
static int64_t kop_grow(struct proc *p, int64_t increment, uint64_t *value);

/* A request over the process-control link (q->op is one of its operations).
 * from_here is 0 for a request from another machine's process manager. */
static int64_t process_control(struct dm_kreq *q, uint32_t len, struct link *pass, struct link *reply,
                               uint64_t *value, uint32_t *answer_len, int *later, int from_here)
{
    switch (q->op) {
    case KOP_CREATE:
        return kop_create(q, len, pass, reply, value, later);
    case KOP_PS:
        return kop_ps(q->arg[0], answer + sizeof(struct dm_kreply), answer_len, value);
    case KOP_NOTIFY:
        return kop_notify(pass);
    case KOP_NETSTAT:
        return kop_netstat(value, answer_len);
    case KOP_DEVICE:
        return kop_device(q);
    case KOP_METER_FLUSH:
        return kop_meter_flush(q, reply, later);
    case KOP_HALT:
        return kop_halt(q, from_here);
    case KOP_MIGRATE:
        return migrate_request(q, reply, later);
    }
    return process_op(q, len, pass, value);
}

/* KOP_CREATE: the program is the passed link's data area (read right), or
 * without one the boot image of that name. */
static int64_t kop_create(struct dm_kreq *q, uint32_t len, struct link *pass, struct link *reply,
                          uint64_t *value, int *later)
{
    const char *data = (const char *)(q + 1);
    uint32_t data_len = len - sizeof *q;
    uint32_t name_len = 0;
    while (name_len < data_len && data[name_len])
        name_len++;
    if (name_len == 0 || name_len == data_len || q->arg[0] < 0 || q->arg[0] > 256 || q->arg[1] < 0 ||
        q->arg[1] > 256)
        return E_BADREQ;
    const char *args = data + name_len + 1;
    uint32_t args_len = data_len - name_len - 1;
    int strings = 0;
    for (uint32_t i = 0; i < args_len; i++)
        strings += args[i] == 0;
    if (strings != q->arg[0] + q->arg[1] || (args_len && args[args_len - 1]))
        return E_BADREQ;
    struct image_source image = { 0 };
    int err;
    if (pass) {
        if (pass->area_len == 0)
            return E_NOAREA;
        if (!(pass->flags & LINK_READ))
            return E_RIGHTS;
        if (PID_MACHINE(pass->dest) != this_machine) {   /* fetched first: the answer comes later */
            int64_t err = remote_create(q, len, pass, reply);
            *later = err == 0;
            return err;
        }
        if (!(image.owner = proc_lookup(pass->dest)))
            return E_DEAD;
        image.kernel = 0;
        image.address = pass->area_addr;
        image.size = pass->area_len;
    } else if ((err = boot_image_source(data, &image))) {
        return err;
    }
    struct proc *p = proc_create(data, &image, args, args_len, (int)q->arg[0], (int)q->arg[1], &err);
    if (!p)
        return err;
    *value = p->pid;
    return 0;
}

/* KOP_PS: the processes from slot `first` on, as many as the answer holds. */
static int64_t kop_ps(int64_t first, uint8_t *out, uint32_t *out_len, uint64_t *value)
{
    struct dm_kproc *e = (struct dm_kproc *)out;
    uint32_t max = (DM_MSG_MAX - sizeof(struct dm_kreply)) / sizeof *e, n = 0;
    for (int64_t i = first < 0 ? 0 : first; i < NPROC && n < max; i++) {
        struct proc *p = &procs[i];
        if (p->state == PS_FREE || p->state == PS_ARRIVING)
            continue;
        memset(&e[n], 0, sizeof e[n]);
        e[n].pid = p->pid;
        strlcpy_k(e[n].name, p->name, sizeof e[n].name);
        e[n].state = (p->held & HELD_STOPPED) ? PS_STOPPED : p->state;
        e[n].machine = (uint8_t)this_machine;
        e[n].slot = (uint16_t)i;
        e[n].links = (uint16_t)link_count(p);
        e[n].proctime = p == kernel_proc ? kernel_proctime() : proctime_now(p);
        e[n].memory = p->pages * PAGE_SIZE;
        n++;
    }
    *out_len = n * sizeof *e;
    *value = n;
    return 0;
}

/* KOP_NOTIFY: the passed link is where the kernel's notices go (a process
 * exited, a machine is up), starting with every machine known now. */
static int64_t kop_notify(struct link *pass)
{
    if (!pass)
        return E_BADREQ;
    int slot = link_install(kernel_proc, pass);
    if (slot < 0)
        return E_LINKFULL;
    link_clear(pass);
    set_exit_notify_slot(slot);
    cluster_notify_known();
    return 0;
}

/* KOP_NETSTAT: a struct dm_kpeer for each other machine heard of. */
static int64_t kop_netstat(uint64_t *value, uint32_t *answer_len)
{
    uint32_t max = (DM_MSG_MAX - sizeof(struct dm_kreply)) / sizeof(struct dm_kpeer);
    *value = remote_netstat((struct dm_kpeer *)(answer + sizeof(struct dm_kreply)), max);
    *answer_len = (uint32_t)*value * sizeof(struct dm_kpeer);
    return 0;
}

/* KOP_DEVICE: the answer passes a device link to a disk or to the live
 * trace channel. */
static int64_t kop_device(struct dm_kreq *q)
{
    uint64_t code;
    if (q->arg[1] == KLINK_LIVE && live_present())
        code = KLINK_LIVE;
    else if ((q->arg[1] == 0 || q->arg[1] == KLINK_DISK) && q->arg[0] >= 0 && q->arg[0] < disk_count())
        code = KLINK_DISK | (uint64_t)q->arg[0] << 8;
    else
        return E_NOTFOUND;
    answer_link = (struct link){ .state = LINK_LIVE, .dest = kernel_proc->pid, .code = code };
    return 0;
}

/* KOP_METER_FLUSH: send every metered process's batch; the answer comes
 * when the filters have taken them (meter_flush_all). */
static int64_t kop_meter_flush(struct dm_kreq *q, struct link *reply, int *later)
{
    if (!reply)
        return E_BADREQ;
    int slot = kernel_keep_reply(reply);
    if (slot < 0)
        return E_LINKFULL;
    int64_t err = meter_flush_all(slot, q->arg[0] > 0 ? (uint64_t)q->arg[0] * 1000000ull : 0);
    if (err < 0)
        link_drop(&kernel_proc->links[slot]);
    *later = err == 0;
    return err;
}

/* KOP_HALT: power off now, or, asked from another machine, once the answer
 * has gone back to it. */
static int64_t kop_halt(struct dm_kreq *q, int from_here)
{
    if (!from_here) {
        remote_halt_later((int)q->arg[0]);
        return 0;
    }
    kernel_halt((int)q->arg[0]);
}

/* The operations on one process, q->pid, which must be on this machine
 * and not the kernel. */
static int64_t process_op(struct dm_kreq *q, uint32_t len, struct link *pass, uint64_t *value)
{
    struct proc *p = proc_lookup(q->pid);
    if (!p || p == kernel_proc)
        return E_NOTFOUND;
    dm_pid on_behalf = 0;           /* KOP_METER, KOP_STOP: who the process manager acts for */
    if (len >= sizeof *q + sizeof on_behalf)
        memcpy(&on_behalf, q + 1, sizeof on_behalf);
    switch (q->op) {
    case KOP_MOVELINK:
        return kop_movelink(p, q, pass, value);
    case KOP_METER:
        return meter_install(p, (uint64_t)q->arg[0], (uint64_t)q->arg[1], on_behalf, pass);
    case KOP_START:
        return kop_start(p);
    case KOP_STOP:
        return kop_stop(p, on_behalf);
    case KOP_RESUME:
        return kop_resume(p);
    case KOP_DESTROY:
        proc_exit(p, q->arg[0]);
        return 0;
    case KOP_GROW:
        return kop_grow(p, q->arg[0], value);
    }
    return E_NOSYS;
}

/* KOP_MOVELINK: the passed link enters p's table, in slot arg[0] or the
 * first free one. */
static int64_t kop_movelink(struct proc *p, struct dm_kreq *q, struct link *pass, uint64_t *value)
{
    if (!pass)
        return E_BADREQ;
    int64_t slot = q->arg[0];
    if (slot == -1)
        slot = link_alloc_slot(p);
    if (slot < 0)
        return E_LINKFULL;
    if (slot >= DM_NLINKS)
        return E_BADSLOT;
    if (p->links[slot].state == LINK_LIVE)
        return E_STATE;
    p->links[slot] = *pass;
    link_clear(pass);
    *value = (uint64_t)slot;
    probe_link_created(p, (int)slot, &p->links[slot], ML_MOVED);
    return 0;
}

/* KOP_START: p's first start. */
static int64_t kop_start(struct proc *p)
{
    if (p->state != PS_CREATED)
        return E_STATE;
    make_runnable(p);
    probe_process_event(p, MT_STARTPROCESS, 0);
    return 0;
}

/* KOP_STOP: p may not run until KOP_RESUME. */
static int64_t kop_stop(struct proc *p, dm_pid on_behalf)
{
    if ((p->held & HELD_STOPPED) || p->state == PS_CREATED)
        return E_STATE;
    p->held |= HELD_STOPPED;
    runq_remove(p);
    if (p == current)
        request_reschedule();
    probe_process_event(p, MT_STOPPROCESS, on_behalf);
    return 0;
}

/* KOP_RESUME: p, stopped, goes on. */
static int64_t kop_resume(struct proc *p)
{
    if (!(p->held & HELD_STOPPED))
        return E_STATE;
    p->held &= (uint8_t)~HELD_STOPPED;
    if (p->state == PS_RUNNABLE && p != current && !p->held)
        runq_add(p);
    probe_process_event(p, MT_STARTPROCESS, 1);
    return 0;
}

/* KOP_GROW: p's heap grows (or shrinks) by `increment` bytes; value: the
 * old end. */
static int64_t kop_grow(struct proc *p, int64_t increment, uint64_t *value)
{
    int64_t old = proc_grow(p, increment);
    if (old < 0)
        return old;
    *value = (uint64_t)old;
    return 0;
}

/* ---- answers ---- */

/* Send an answer over a reply link. */
static void answer_over(struct link *reply, int64_t status, uint64_t value, const void *data, uint32_t len)
{
    struct dm_kreply *r = (struct dm_kreply *)answer;
    uint32_t total = sizeof *r + len;
    if (total > DM_MSG_MAX)
        total = DM_MSG_MAX;
    if (data != answer + sizeof *r)
        memcpy(answer + sizeof *r, data, total - sizeof *r);
    r->status = status;
    r->value = value;
    msg_send_from_kernel(reply, answer, total, answer_link.state ? &answer_link : 0);
    link_clear(&answer_link);     /* gone with the answer, or dropped with it */
}

/* Answer request `op`, whose reply link the kernel kept in `slot`. */
void kernel_reply_slot(int slot, uint32_t op, int64_t status, uint64_t value, const void *data, uint32_t len)
{
    struct link *l = &kernel_proc->links[slot];
    check_answer(op, status);
    answer_over(l, status, value, data, len);
    link_clear(l);
}

/* Keep a reply link for a later answer; its kernel slot, or E_LINKFULL. */
int kernel_keep_reply(struct link *reply)
{
    return link_install(kernel_proc, reply);
}

/* Where an answer's data is built: kernel_reply_slot sends what is there
 * without copying it. */
uint8_t *kernel_answer_data(void)
{
    return answer + sizeof(struct dm_kreply);
}

/* ---- the errors a request may answer with ---- */

/* From demos.h's lists: each request's errors, links and name, and the
 * errors' names. */
static const uint32_t kop_errors[DM_NKOPS] = {
#define KOP_ERRORS(number, name, links, errors) [number] = errors,
    DM_KOPS(KOP_ERRORS)
#undef KOP_ERRORS
};
static const uint32_t kop_links[DM_NKOPS] = {
#define KOP_LINKS(number, name, links, errors) [number] = links,
    DM_KOPS(KOP_LINKS)
#undef KOP_LINKS
};
static const char *const kop_names[DM_NKOPS] = {
#define KOP_NAME(number, name, links, errors) [number] = "KOP_" #name,
    DM_KOPS(KOP_NAME)
#undef KOP_NAME
};
static const char *const error_names[DM_NERRORS] = {
#define ERROR_NAME(value, name, text) [-(value)] = #name,
    DM_ERRORS(ERROR_NAME)
#undef ERROR_NAME
};

/* Whether request `op` is one of process control's (demos.h's list says so). */
static int is_process_control(uint32_t op)
{
    return op < DM_NKOPS && kop_links[op] == DM_KLINKS(KLINK_PROCESS_CONTROL);
}

/* Request `op` is answered with `status`. An error that its entry in
 * demos.h (DM_KOPS) does not name means that the kernel or the list is
 * wrong: say so in one line on the console, where the test harness looks
 * for it (scripts/harness.py, Node.check_kernel_lines). A number with no
 * entry may be answered E_BADREQ or E_NOSYS (demos.h says why). */
static void check_answer(uint32_t op, int64_t status)
{
    if (status >= 0)
        return;
    int known = op > 0 && op < DM_NKOPS;
    uint32_t listed = known ? kop_errors[op] : DM_ERRS(E_BADREQ, E_NOSYS);
    if (status > -DM_NERRORS && (listed & DM_ERROR_BIT(status)))
        return;
    kprintf("kernel: %s answered %s, which demos.h does not list for it\n",
            known ? kop_names[op] : "a request of no known number",
            status > -DM_NERRORS ? error_names[-status] : "a value that is no error");
}
