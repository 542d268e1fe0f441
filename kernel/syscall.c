/*
 * syscall.c — the kernel calls (demos.h): check every argument, then do it.
 * Each returns its result for a0, or RESULT_PENDING when the caller now
 * waits and its a0 will be written when it is woken.
 *
 * The calls are dispatched by one switch, written once (dispatch) and
 * expanded twice: for an unmetered process, with no probe in it, and for a
 * metered one, whose records are written on the way and whose sealed
 * batches go out at the meter's safe point when the call is done
 * (probes.h). Choosing between the two is an unmetered process's whole
 * price for metering.
 */
#include "defs.h"
#include "probes.h"

/* The kernel calls off the message path are kept out of line, so that the
 * message path does not pay for their registers (docs/performance.md). */
#define OUT_OF_LINE __attribute__((noinline))

static OUT_OF_LINE int64_t sys_createlink(struct proc *p, struct trapframe *tf);
static OUT_OF_LINE int64_t sys_destroylink(struct proc *p, struct trapframe *tf);
static OUT_OF_LINE int64_t sys_duplicatelink(struct proc *p, struct trapframe *tf);
static OUT_OF_LINE int64_t sys_movedata(struct proc *p, struct trapframe *tf);
static OUT_OF_LINE int64_t sys_stoptask(struct proc *p, struct trapframe *tf);
static inline __attribute__((always_inline)) int64_t sys_send(struct proc *p, struct trapframe *tf, int metered,
                                                              struct meter_sending *sending);
static inline __attribute__((always_inline)) int64_t sys_call(struct proc *p, struct trapframe *tf, int metered,
                                                              struct meter_sending *sending);
static inline __attribute__((always_inline)) int64_t sys_receive(struct proc *p, struct trapframe *tf, int block,
                                                                 int metered);
static int check_send(struct proc *p, int64_t slot, uint64_t buf, uint64_t len, int64_t pass_slot,
                      struct outgoing *o);
static void use_up_if_reply(struct link *via);

/* Every kernel call once, for a metered or an unmetered caller: `metered`
 * is a constant wherever this is expanded; a metered SEND or CALL begins
 * its records in `sending`. */
static inline __attribute__((always_inline)) int64_t dispatch(struct proc *p, struct trapframe *tf, int metered,
                                                              struct meter_sending *sending)
{
    switch (TF_A(tf, 7)) {
    case DM_CREATELINK:    return sys_createlink(p, tf);
    case DM_DESTROYLINK:   return sys_destroylink(p, tf);
    case DM_DUPLICATELINK: return sys_duplicatelink(p, tf);
    case DM_SEND:          return sys_send(p, tf, metered, sending);
    case DM_RECEIVE:
    case DM_ARECEIVE:      return sys_receive(p, tf, TF_A(tf, 7) == DM_RECEIVE, metered);
    case DM_CALL:          return sys_call(p, tf, metered, sending);
    case DM_MOVEDATA:      return sys_movedata(p, tf);
    case DM_STOPTASK:      return sys_stoptask(p, tf);
    default:               return E_NOSYS;
    }
}

/* The metered copy ends at the meter's safe point and then in the
 * scheduler, as trap_user does: never returning, it saves no registers
 * for a return (docs/performance.md). What it does beyond the unmetered
 * copy is counted as the meter's (probes.h, meter_count_on): entering it
 * (syscall_dispatch switches the count on), the probes, the end of a SEND's
 * or CALL's records, the safe point, and its end, where the count is taken
 * out of p's PROCTIME. */
static OUT_OF_LINE __attribute__((noreturn)) void dispatch_metered(struct proc *p)
{
    struct trapframe *tf = &p->tf;
    struct meter_sending sending;
    sending.begun = 0;
    meter_count_off();
    int64_t result = dispatch(p, tf, 1, &sending);
    if (result != RESULT_PENDING)
        TF_A(tf, 0) = (uint64_t)result;
    meter_count_on();
    if (sending.begun)
        meter_send_end(p, &sending, result);
    if (meter_work) {            /* the safe point: sending is kernel work of its own */
        meter_count_off();
        kernel_work_begin();
        meter_push();
        kernel_work_end();
        meter_count_on();
    }
    meter_count_flush(p->info);
    schedule();
}

/* The kernel call p made (trap.c): its number in a7, its arguments in
 * a0..a6; the result goes to a0 unless p now waits. */
void syscall_dispatch(struct proc *p)
{
    struct trapframe *tf = &p->tf;
    if (METER_ANY(p)) {
        meter_count_on();
        dispatch_metered(p);
    }
    int64_t result = dispatch(p, tf, 0, 0);
    if (result != RESULT_PENDING)
        TF_A(tf, 0) = (uint64_t)result;
}

/* ---- the message path ---- */

/* SEND(slot, buf, len, pass_slot). */
static inline __attribute__((always_inline)) int64_t sys_send(struct proc *p, struct trapframe *tf, int metered,
                                                              struct meter_sending *sending)
{
    struct outgoing o;
    int err = check_send(p, (int64_t)TF_A(tf, 0), TF_A(tf, 1), TF_A(tf, 2), (int64_t)TF_A(tf, 3), &o);
    if (err)
        return err;
    if ((err = metered ? probe_send(p, &o, 0, sending) : msg_send(&o)))
        return err == SEND_PENDING ? RESULT_PENDING : err;
    use_up_if_reply((struct link *)o.via);
    return 0;
}

/* CALL(slot, buf, len, pass_slot, reply_buf, reply_cap, info): a SEND with
 * a fresh reply link, then a wait for the answer over it alone. */
static inline __attribute__((always_inline)) int64_t sys_call(struct proc *p, struct trapframe *tf, int metered,
                                                              struct meter_sending *sending)
{
    struct outgoing o;
    int err = check_send(p, (int64_t)TF_A(tf, 0), TF_A(tf, 1), TF_A(tf, 2), (int64_t)TF_A(tf, 3), &o);
    if (err)
        return err;
    if (set_receive_target(p, TF_A(tf, 6), TF_A(tf, 4), TF_A(tf, 5), DM_REPLY_CHANNEL))
        return E_FAULT;
    struct link reply = {
        .state = LINK_LIVE, .flags = LINK_REPLY, .channel = DM_REPLY_CHANNEL, .dest = p->pid,
        .reply_id = new_reply_id(),
    };
    o.message.reply = &reply;
    p->wait_reply_id = reply.reply_id;
    p->state = PS_CALLING;
    if ((err = metered ? probe_send(p, &o, 1, sending) : msg_send(&o))) {
        if (err == SEND_PENDING)
            return RESULT_PENDING;   /* net/remote.c uses up the link when the message leaves */
        make_runnable(p);
        return err;
    }
    use_up_if_reply((struct link *)o.via);
    return RESULT_PENDING;
}

/* RECEIVE / ARECEIVE(info, buf, cap, channel): block (or not) for the
 * first message on a matching channel (msg.c). */
static inline __attribute__((always_inline)) int64_t sys_receive(struct proc *p, struct trapframe *tf, int block,
                                                                 int metered)
{
    uint32_t channel = (uint32_t)TF_A(tf, 3);
    if (set_receive_target(p, TF_A(tf, 0), TF_A(tf, 1), TF_A(tf, 2), channel))
        return E_FAULT;
    if (metered)
        probe_receivecall(p, channel, block);
    return msg_receive(p, channel, block);
}

/* The checks SEND and CALL share: the link, the passed link, the data;
 * then the message to send, in o. */
static int check_send(struct proc *p, int64_t slot, uint64_t buf, uint64_t len, int64_t pass_slot,
                      struct outgoing *o)
{
    struct link *via, *pass = 0;
    int err = link_get(p, slot, &via);
    if (err)
        return err;
    if (len > DM_MSG_MAX)
        return E_TOOBIG;
    if (pass_slot != DM_NO_LINK) {
        if (pass_slot == slot)
            return E_INVAL;
        if ((err = link_get(p, pass_slot, &pass)))
            return err;
    }
    void *kernel_view;
    if (!user_range_ok(p, buf, len, 0, &kernel_view))
        return E_FAULT;
    struct message *m = &o->message;   /* field by field: a struct literal would cost a memset */
    o->from = p;
    o->via = via;
    m->sender = p->pid;
    m->code = via->code;
    m->channel = via->channel;
    m->flags = 0;
    m->length = (uint32_t)len;
    m->msgid = 0;
    m->data = kernel_view;      /* when the data lies in one page; else by data_address */
    m->data_owner = p;
    m->data_address = buf;
    m->link = pass;
    m->reply = 0;
    return 0;
}

/* A reply link is good for one message: mark its slot used (the slot is
 * free for the next link; until then, using it again gives E_USED). */
static void use_up_if_reply(struct link *via)
{
    if (via->flags & LINK_REPLY)
        via->state = LINK_USED;
}

/* ---- links ---- */

static OUT_OF_LINE int64_t sys_createlink(struct proc *p, struct trapframe *tf)
{
    uint32_t channel = (uint32_t)TF_A(tf, 0);
    uint64_t code = TF_A(tf, 1), flags = TF_A(tf, 2), area = TF_A(tf, 3), len = TF_A(tf, 4);
    int rights = (flags & (LINK_READ | LINK_WRITE)) != 0;
    if ((flags & ~(uint64_t)(LINK_READ | LINK_WRITE | LINK_REPLY)) || TF_A(tf, 0) >= DM_REPLY_CHANNEL ||
        rights != (len != 0))
        return E_INVAL;
    if (len > DM_MOVE_MAX)
        return E_TOOBIG;
    if (rights && (!user_range_ok(p, area, len, 0, 0) ||
                   ((flags & LINK_WRITE) && !user_range_ok(p, area, len, 1, 0))))
        return E_FAULT;
    struct link l = {
        .state = LINK_LIVE, .flags = (uint8_t)flags, .channel = channel, .dest = p->pid,
        .code = code, .area_addr = rights ? area : 0, .area_len = len,
    };
    int slot = link_install(p, &l);
    probe_link_created(p, slot, &l, ML_CREATELINK);
    return slot;
}

static OUT_OF_LINE int64_t sys_destroylink(struct proc *p, struct trapframe *tf)
{
    int64_t slot = (int64_t)TF_A(tf, 0);
    struct link *l;
    int err = link_get(p, slot, &l);
    if (err == E_USED) {           /* clearing a used reply link's marker */
        link_clear(&p->links[slot]);
        return 0;
    }
    if (err)
        return err;
    probe_link_destroyed(p, (int)slot, l->dest, ML_DESTROYLINK);
    link_drop(l);
    return 0;
}

static OUT_OF_LINE int64_t sys_duplicatelink(struct proc *p, struct trapframe *tf)
{
    struct link *l;
    int err = link_get(p, (int64_t)TF_A(tf, 0), &l);
    if (err)
        return err;
    if (l->flags & LINK_REPLY)
        return E_INVAL;
    struct link copy = *l;
    int slot = link_install(p, &copy);
    probe_link_created(p, slot, &copy, ML_DUPLICATE);
    return slot;
}

/* ---- data and ending ---- */

/* One side of a MOVEDATA: a link's data area, or the caller's own memory.
 * Gives the process (on any machine), the address in its memory, and the
 * process itself when it is on this machine (0 when it is elsewhere). */
static int movedata_side(struct proc *p, int64_t slot, uint64_t offset, uint64_t len, int write,
                         dm_pid *owner, uint64_t *address, struct proc **local)
{
    if (slot == DM_SELF) {
        if (!user_range_ok(p, offset, len, write, 0))
            return E_FAULT;
        *owner = p->pid;
        *address = offset;
        *local = p;
        return 0;
    }
    struct link *l;
    int err = link_get(p, slot, &l);
    if (err)
        return err;
    if (l->area_len == 0)
        return E_NOAREA;
    if (!(l->flags & (write ? LINK_WRITE : LINK_READ)))
        return E_RIGHTS;
    if (offset > l->area_len || len > l->area_len - offset)
        return E_BOUNDS;
    if (!(*local = proc_lookup(l->dest)) && (err = remote_reachable(l->dest)))
        return err;            /* not here, and not to be reached where it is (E_DEAD: gone) */
    *owner = l->dest;
    *address = l->area_addr + offset;
    return 0;
}

static OUT_OF_LINE int64_t sys_movedata(struct proc *p, struct trapframe *tf)
{
    int64_t dst_slot = (int64_t)TF_A(tf, 0), src_slot = (int64_t)TF_A(tf, 2);
    uint64_t len = TF_A(tf, 4);
    if (dst_slot == DM_SELF && src_slot == DM_SELF)
        return E_INVAL;
    if (len > DM_MOVE_MAX)
        return E_TOOBIG;
    struct move m = { .length = len };
    struct proc *dst, *src;
    int err = movedata_side(p, dst_slot, TF_A(tf, 1), len, 1, &m.dst, &m.dst_address, &dst);
    if (!err)
        err = movedata_side(p, src_slot, TF_A(tf, 3), len, 0, &m.src, &m.src_address, &src);
    if (err)
        return err;
    probe_movedata(p, &m, dst_slot, src_slot);
    /* Moving the bytes is the kernel's work (proc.c), here as between
     * machines: the caller's CPU time does not depend on where the data is. */
    kernel_work_begin();
    int64_t result = !dst || !src ? remote_movedata(p, &m) : copy_user_to_user(dst, m.dst_address, src, m.src_address, len);
    kernel_work_end();
    return result < 0 || !dst || !src ? result : (int64_t)len;
}

static OUT_OF_LINE int64_t sys_stoptask(struct proc *p, struct trapframe *tf)
{
    proc_exit(p, (int64_t)TF_A(tf, 0));
    return RESULT_PENDING;
}
