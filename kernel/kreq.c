/*
 * kreq.c — requests to the kernel over kernel links (demos.h, "Requests over
 * kernel links"): process control for the process manager, the console UART
 * for the console server, the clock for the timer server.
 *
 * A request arrives as a message to the kernel (slot 0) and is handled at
 * once, in the sender's kernel call. Its answer goes back over the CALL's
 * reply link — at once, or later for requests that wait (console input, an
 * alarm, console output that does not fit yet): then the kernel keeps the
 * reply link in its own link table until it answers.
 */
#include "defs.h"

#define NALARMS 16
static struct { uint64_t when; int slot; int active; } alarms[NALARMS];
static int console_read_slot = -1;     /* the reply link of a waiting read */
static uint32_t console_read_max;
static int console_write_slot = -1;    /* the reply link of a write not yet queued */
static uint8_t console_pending[DM_MSG_MAX];
static uint32_t console_pending_len, console_pending_done;

static uint8_t request[DM_MSG_MAX];    /* the request being handled */
static uint8_t answer[DM_MSG_MAX];     /* the answer being built */
static struct link passed_answer_link;  /* a link passed to answer over */
static struct link answer_link;         /* a link the answer passes (KOP_DEVICE), or empty */

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
    struct outgoing o = { kernel_proc, answer, 0, total, reply, answer_link.state ? &answer_link : 0, 0, 0 };
    msg_send(&o);
    link_clear(&answer_link);     /* gone with the answer, or dropped with it */
}

/* Answer a request whose reply link the kernel kept in `slot`. */
void kernel_reply_slot(int slot, int64_t status, uint64_t value, const void *data, uint32_t len)
{
    struct link *l = &kernel_proc->links[slot];
    answer_over(l, status, value, data, len);
    link_clear(l);
}

/* Keep a reply link for a later answer; its kernel slot, or E_LINKFULL. */
static int keep_reply(struct link *reply)
{
    return link_install(kernel_proc, reply);
}

/* ---- process control ---- */

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
    if (METERED(p, MT_CREATELINK))
        meter_link_created(p, (int)slot, &p->links[slot], ML_MOVED);
    return 0;
}

static int64_t kop_ps(int64_t first, uint8_t *out, uint32_t *out_len, uint64_t *value)
{
    struct dm_kproc *e = (struct dm_kproc *)out;
    uint32_t max = (DM_MSG_MAX - sizeof(struct dm_kreply)) / sizeof *e, n = 0;
    for (int64_t i = first < 0 ? 0 : first; i < NPROC && n < max; i++) {
        struct proc *p = &procs[i];
        if (p->state == PS_FREE)
            continue;
        memset(&e[n], 0, sizeof e[n]);
        e[n].pid = p->pid;
        strlcpy_k(e[n].name, p->name, sizeof e[n].name);
        e[n].state = (p->held & HELD_STOPPED) ? PS_STOPPED : p->state;
        e[n].links = link_count(p);
        e[n].proctime = proctime_now(p);
        e[n].memory = p->pages * PAGE_SIZE;
        n++;
    }
    *out_len = n * sizeof *e;
    *value = n;
    return 0;
}

static int64_t process_control(struct dm_kreq *q, uint32_t len, struct link *pass, struct link *reply,
                               uint64_t *value, uint32_t *answer_len, int *later, int from_here)
{
    if (q->op == KOP_CREATE)
        return kop_create(q, len, pass, reply, value, later);
    if (q->op == KOP_PS)
        return kop_ps(q->arg[0], answer + sizeof(struct dm_kreply), answer_len, value);
    if (q->op == KOP_NOTIFY) {
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
    if (q->op == KOP_NETSTAT) {
        uint32_t max = (DM_MSG_MAX - sizeof(struct dm_kreply)) / sizeof(struct dm_kpeer);
        *value = remote_netstat((struct dm_kpeer *)(answer + sizeof(struct dm_kreply)), max);
        *answer_len = (uint32_t)*value * sizeof(struct dm_kpeer);
        return 0;
    }
    if (q->op == KOP_DEVICE) {
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
    if (q->op == KOP_METER_FLUSH) {
        if (!reply)
            return E_BADREQ;
        int slot = keep_reply(reply);
        if (slot < 0)
            return E_LINKFULL;
        int64_t err = meter_flush_all(slot, q->arg[0] > 0 ? (uint64_t)q->arg[0] * 1000000ull : 0);
        if (err < 0)
            link_drop(&kernel_proc->links[slot]);
        *later = err == 0;
        return err;
    }
    if (q->op == KOP_HALT) {
        if (!from_here) {   /* from another machine: answer it first */
            remote_halt_later((int)q->arg[0]);
            return 0;
        }
        kernel_halt((int)q->arg[0]);
    }
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
        if (p->state != PS_CREATED)
            return E_STATE;
        make_runnable(p);
        if (METERED(p, MT_STARTPROCESS))
            meter_process_event(p, MT_STARTPROCESS, 0);
        return 0;
    case KOP_STOP:
        if ((p->held & HELD_STOPPED) || p->state == PS_CREATED)
            return E_STATE;
        p->held |= HELD_STOPPED;
        runq_remove(p);
        if (p == current)
            request_reschedule();
        if (METERED(p, MT_STOPPROCESS))
            meter_process_event(p, MT_STOPPROCESS, on_behalf);
        return 0;
    case KOP_RESUME:
        if (!(p->held & HELD_STOPPED))
            return E_STATE;
        p->held &= (uint8_t)~HELD_STOPPED;
        if (p->state == PS_RUNNABLE && p != current && !p->held)
            runq_add(p);
        if (METERED(p, MT_STARTPROCESS))
            meter_process_event(p, MT_STARTPROCESS, 1);
        return 0;
    case KOP_DESTROY:
        proc_exit(p, q->arg[0]);
        return 0;
    case KOP_GROW: {
        int64_t old = proc_grow(p, q->arg[0]);
        if (old < 0)
            return old;
        *value = (uint64_t)old;
        return 0;
    }
    }
    return E_NOSYS;
}

/* ---- the console ---- */

/* Queue as much pending output as fits; answer the writer when all did. */
static void console_push_pending(void)
{
    console_pending_done += uart_queue_output(console_pending + console_pending_done,
                                              console_pending_len - console_pending_done);
    if (console_pending_done == console_pending_len && console_write_slot >= 0) {
        int slot = console_write_slot;
        console_write_slot = -1;
        kernel_reply_slot(slot, 0, console_pending_len, 0, 0);
    }
}

void console_output_ready(void)
{
    if (console_write_slot >= 0)
        console_push_pending();
}

void console_input_ready(void)
{
    if (console_read_slot < 0)
        return;
    uint8_t *data = answer + sizeof(struct dm_kreply);
    uint32_t n = uart_read_input(data, console_read_max);
    if (n) {
        int slot = console_read_slot;
        console_read_slot = -1;
        kernel_reply_slot(slot, 0, n, data, n);
    }
}

/* Console requests. Returns 1 when the answer will come later. */
static int64_t console_request(struct dm_kreq *q, uint32_t len, struct link *reply, uint64_t *value,
                               uint32_t *answer_len, int *later)
{
    if (q->op == KOP_CONS_WRITE) {
        uint32_t n = len - sizeof *q;
        const uint8_t *data = (const uint8_t *)(q + 1);
        uint32_t taken = uart_queue_output(data, n);
        *value = n;
        if (taken == n)
            return 0;
        if (console_write_slot >= 0 || !reply)
            return E_STATE;
        memcpy(console_pending, data, n);
        console_pending_len = n;
        console_pending_done = taken;
        if ((console_write_slot = keep_reply(reply)) < 0)
            return E_LINKFULL;
        *later = 1;
        return 0;
    }
    if (q->op == KOP_CONS_READ) {
        if (q->arg[0] <= 0 || !reply)
            return E_BADREQ;
        uint32_t max = q->arg[0] > DM_MSG_MAX - 16 ? DM_MSG_MAX - 16 : (uint32_t)q->arg[0];
        uint32_t n = uart_read_input(answer + sizeof(struct dm_kreply), max);
        if (n) {
            *value = n;
            *answer_len = n;
            return 0;
        }
        if (console_read_slot >= 0)
            return E_STATE;
        if ((console_read_slot = keep_reply(reply)) < 0)
            return E_LINKFULL;
        console_read_max = max;
        *later = 1;
        return 0;
    }
    return E_NOSYS;
}

/* ---- the clock ---- */

/* The earliest alarm, recomputed whenever the set of alarms changes. */
static uint64_t earliest_alarm = UINT64_MAX;

static void alarms_changed(void)
{
    earliest_alarm = UINT64_MAX;
    for (int i = 0; i < NALARMS; i++)
        if (alarms[i].active && alarms[i].when < earliest_alarm)
            earliest_alarm = alarms[i].when;
    timer_program();
}

uint64_t next_alarm_time(void)
{
    return earliest_alarm;
}

void timer_check_alarms(void)
{
    uint64_t now = machine_clock_ns();
    for (int i = 0; i < NALARMS; i++) {
        if (alarms[i].active && alarms[i].when <= now) {
            alarms[i].active = 0;
            kernel_reply_slot(alarms[i].slot, 0, now, 0, 0);
        }
    }
    alarms_changed();
}

static int64_t timer_request(struct dm_kreq *q, struct link *reply, uint64_t *value, uint32_t *answer_len,
                             int *later)
{
    if (q->op == KOP_TIME) {
        uint64_t machine_now = machine_clock_ns();
        *value = wall_clock_ns();
        memcpy(answer + sizeof(struct dm_kreply), &machine_now, 8);
        *answer_len = 8;
        return 0;
    }
    if (q->op == KOP_ALARM) {
        if (!reply)
            return E_BADREQ;
        if ((uint64_t)q->arg[0] <= machine_clock_ns()) {
            *value = machine_clock_ns();
            return 0;
        }
        for (int i = 0; i < NALARMS; i++) {
            if (!alarms[i].active) {
                int slot = keep_reply(reply);
                if (slot < 0)
                    return E_LINKFULL;
                alarms[i].active = 1;
                alarms[i].slot = slot;
                alarms[i].when = (uint64_t)q->arg[0];
                alarms_changed();
                *later = 1;
                return 0;
            }
        }
        return E_NOMEM;
    }
    return E_NOSYS;
}

/* A message to this kernel: check the link's authority, do the request,
 * answer over the CALL's reply link (if any). Returns the send's result:
 * 0 once accepted, or the request's error when there is no reply link. */
int kreq_handle(struct outgoing *o)
{
    if (o->sender == kernel_proc)
        return E_INVAL;
    uint32_t len = o->len;
    if (o->kdata && len <= sizeof request)
        memcpy(request, o->kdata, len);
    if (len < sizeof(struct dm_kreq) || (!o->kdata && copy_in(o->sender, request, o->udata, len))) {
        if (o->reply)
            answer_over(o->reply, E_BADREQ, 0, 0, 0);
        return o->reply ? 0 : E_BADREQ;
    }
    struct dm_kreq *q = (struct dm_kreq *)request;
    uint64_t value = 0;
    uint32_t answer_len = 0;
    int later = 0;
    int64_t status;
    switch (KLINK_KIND(o->via->code)) {
    case KLINK_PROCESS_CONTROL:
        status = (q->op >= KOP_CREATE && q->op <= KOP_PROCESS_CONTROL_LAST)
                     ? process_control(q, len, o->pass, o->reply, &value, &answer_len, &later, o->sender != 0)
                     : E_BADREQ;
        break;
    case KLINK_CONSOLE:
    case KLINK_TIMER:
        /* A request sent with SEND may pass the link to answer over (so
         * that a server need not wait for the answer): it moves here. */
        if (!o->reply && o->pass) {
            passed_answer_link = *o->pass;
            link_clear(o->pass);
            o->pass = 0;
            o->reply = &passed_answer_link;
        }
        if (KLINK_KIND(o->via->code) == KLINK_CONSOLE)
            status = console_request(q, len, o->reply, &value, &answer_len, &later);
        else
            status = timer_request(q, o->reply, &value, &answer_len, &later);
        break;
    case KLINK_DISK:
        status = disk_request(KLINK_INDEX(o->via->code), q, o->pass, o->reply, &value, &later);
        break;
    case KLINK_LIVE:
        status = live_request(q, o->pass, o->reply, &later);
        break;
    default:
        status = E_BADREQ;
    }
    if (o->pass && o->pass->state == LINK_EMPTY)
        o->pass = 0;   /* the request took the passed link */
    if (o->pass && (o->reply || status >= 0)) {
        link_drop(o->pass);   /* it travelled with the request, as to a process, and ends here */
        o->pass = 0;
    }
    if (later || !o->reply) {
        link_clear(&answer_link);       /* no answer now: nothing to pass */
        return later ? 0 : (int)(status < 0 ? status : 0);
    }
    answer_over(o->reply, status, value, answer + sizeof(struct dm_kreply), answer_len);
    return 0;
}
