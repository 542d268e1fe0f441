/*
 * syscall.c — the kernel calls (demos.h): check every argument, then do it.
 * Each returns its result for a0, or RESULT_PENDING when the caller now
 * waits and its a0 will be written when it is woken.
 */
#include "defs.h"

/* The kernel calls off the message path, kept out of line: inlined into
 * syscall_dispatch (and so into trap_user), their registers would be
 * saved and restored on every trap, SEND, RECEIVE and CALL included. */
#define OUT_OF_LINE __attribute__((noinline))

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
    if (METERED(p, MT_CREATELINK) && slot >= 0)
        meter_link_created(p, slot, &l, ML_CREATELINK);
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
    if (METERED(p, MT_DESTROYLINK))
        meter_link_destroyed(p, (int)slot, l->dest, ML_DESTROYLINK);
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
    if (METERED(p, MT_CREATELINK) && slot >= 0)
        meter_link_created(p, slot, &copy, ML_DUPLICATE);
    return slot;
}

/* The checks SEND and CALL share: the link, the passed link, the data. */
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
    o->sender = p;
    o->kdata = kernel_view;   /* when the data lies in one page; else by udata */
    o->udata = buf;
    o->len = (uint32_t)len;
    o->via = via;
    o->pass = pass;
    o->reply = 0;
    return 0;
}

/* msg_send for a metered process: its records around the send. Apart,
 * so that the unmetered pay one test and nothing else. */
static __attribute__((noinline)) int msg_send_metered(struct proc *p, struct outgoing *o, int call)
{
    struct meter_sending metering;
    meter_send_begin(p, o, call, &metering);
    int err = msg_send_with_id(o, o->msgid);
    meter_send_end(p, &metering, err);
    if (meter_work)
        meter_push();            /* batches sealed meanwhile go now (this is a safe point) */
    return err;
}

/* A reply link is good for one message: mark its slot used (the slot is
 * free for the next link; until then, using it again gives E_USED). */
static void use_up_if_reply(struct link *via)
{
    if (via->flags & LINK_REPLY)
        via->state = LINK_USED;
}

/* SEND and CALL, written once for both kinds of sender. `metered` is a
 * constant where the body is expanded (always_inline): the unmetered copy
 * compiles to what a kernel without probes has, so that an unmetered
 * sender's whole price for metering is the one test in sys_send/sys_call;
 * the metered copy lives out of line. */
static inline __attribute__((always_inline)) int64_t send_body(struct proc *p, struct trapframe *tf, int metered)
{
    struct outgoing o;
    int err = check_send(p, (int64_t)TF_A(tf, 0), TF_A(tf, 1), TF_A(tf, 2), (int64_t)TF_A(tf, 3), &o);
    if (err)
        return err;
    if ((err = metered ? msg_send_metered(p, &o, 0) : msg_send(&o)))
        return err == SEND_PENDING ? RESULT_PENDING : err;
    use_up_if_reply((struct link *)o.via);
    return 0;
}

static inline __attribute__((always_inline)) int64_t call_body(struct proc *p, struct trapframe *tf, int metered)
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
    o.reply = &reply;
    p->wait_reply_id = reply.reply_id;
    p->state = PS_CALLING;
    if ((err = metered ? msg_send_metered(p, &o, 1) : msg_send(&o))) {
        if (err == SEND_PENDING)
            return RESULT_PENDING;   /* net/remote.c uses up the link when the message leaves */
        p->state = PS_RUNNABLE;
        return err;
    }
    use_up_if_reply((struct link *)o.via);
    return RESULT_PENDING;
}

static __attribute__((noinline)) int64_t sys_send_metered(struct proc *p, struct trapframe *tf)
{
    return send_body(p, tf, 1);
}

static __attribute__((noinline)) int64_t sys_call_metered(struct proc *p, struct trapframe *tf)
{
    return call_body(p, tf, 1);
}

static int64_t sys_send(struct proc *p, struct trapframe *tf)
{
    return METER_ANY(p) ? sys_send_metered(p, tf) : send_body(p, tf, 0);
}

static int64_t sys_call(struct proc *p, struct trapframe *tf)
{
    return METER_ANY(p) ? sys_call_metered(p, tf) : call_body(p, tf, 0);
}

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
    if (PID_MACHINE(l->dest) == this_machine) {
        if (!(*local = proc_lookup(l->dest)))
            return E_DEAD;
    } else {
        *local = 0;
        if ((err = remote_reachable(l->dest)))
            return err;
    }
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
    if (METERED(p, MT_MOVEDATA))
        meter_movedata(p, &m, dst_slot, src_slot);
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
    if (METER_PROBES && meter_work)
        meter_push();            /* its last batch */
    return RESULT_PENDING;
}

void syscall_dispatch(struct proc *p)
{
    struct trapframe *tf = &p->tf;
    int64_t result;
    switch (TF_A(tf, 7)) {
    case DM_CREATELINK:    result = sys_createlink(p, tf); break;
    case DM_DESTROYLINK:   result = sys_destroylink(p, tf); break;
    case DM_DUPLICATELINK: result = sys_duplicatelink(p, tf); break;
    case DM_SEND:          result = sys_send(p, tf); break;
    case DM_RECEIVE:
    case DM_ARECEIVE:
        result = msg_receive(p, TF_A(tf, 0), TF_A(tf, 1), TF_A(tf, 2), (uint32_t)TF_A(tf, 3),
                             TF_A(tf, 7) == DM_RECEIVE);
        break;
    case DM_CALL:          result = sys_call(p, tf); break;
    case DM_MOVEDATA:      result = sys_movedata(p, tf); break;
    case DM_STOPTASK:      result = sys_stoptask(p, tf); break;
    default:               result = E_NOSYS; break;
    }
    if (result != RESULT_PENDING)
        TF_A(tf, 0) = (uint64_t)result;
}
