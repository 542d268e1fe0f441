/*
 * dmlib.c — the client side of the system processes, and small helpers.
 */
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"

/* The tables made from demos.h's lists (DM_ERRORS, DM_CALLS, DM_KOPS). */
static const char *const error_names[DM_NERRORS] = {
#define DM_ERROR_NAME(value, name, text) [-(value)] = #name,
    DM_ERRORS(DM_ERROR_NAME)
#undef DM_ERROR_NAME
};
static const char *const error_texts[DM_NERRORS] = {
#define DM_ERROR_TEXT(value, name, text) [-(value)] = text,
    DM_ERRORS(DM_ERROR_TEXT)
#undef DM_ERROR_TEXT
};
static const char *const call_names[DM_NCALLS] = {
#define DM_CALL_NAME(number, name, function, return_type, parameters, errors) [number] = #name,
    DM_CALLS(DM_CALL_NAME)
#undef DM_CALL_NAME
};
static const uint32_t call_errors[DM_NCALLS] = {
#define DM_CALL_ERRORS(number, name, function, return_type, parameters, errors) [number] = errors,
    DM_CALLS(DM_CALL_ERRORS)
#undef DM_CALL_ERRORS
};
static const char *const kop_names[DM_NKOPS] = {
#define DM_KOP_NAME(number, name, links, errors) [number] = "KOP_" #name,
    DM_KOPS(DM_KOP_NAME)
#undef DM_KOP_NAME
};
static const uint32_t kop_errors[DM_NKOPS] = {
#define DM_KOP_ERRORS(number, name, links, errors) [number] = errors,
    DM_KOPS(DM_KOP_ERRORS)
#undef DM_KOP_ERRORS
};

static int checks_passed, checks_failed;

void dm_check(int ok, const char *name, const char *fmt, ...)
{
    if (ok) {
        checks_passed++;
        printf("ok %s\n", name);
        return;
    }
    checks_failed++;
    printf("not ok %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

int dm_check_summary(const char *program)
{
    printf("%s: %d passed, %d failed\n", program, checks_passed, checks_failed);
    return checks_failed != 0;
}

uint64_t dm_fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

const char *dm_error_name(long err)
{
    return err <= 0 && -err < DM_NERRORS ? error_names[-err] : "E_?";
}

const char *dm_error_text(long err)
{
    return err <= 0 && -err < DM_NERRORS ? error_texts[-err] : "unknown error";
}

const char *dm_call_name(long number)
{
    return number > 0 && number < DM_NCALLS ? call_names[number] : 0;
}

long dm_call_number(const char *name)
{
    for (long number = 1; number < DM_NCALLS; number++)
        if (strcasecmp(call_names[number], name) == 0)
            return number;
    return 0;
}

int dm_call_may_return(long number, long err)
{
    return number > 0 && number < DM_NCALLS && err < 0 && -err < DM_NERRORS &&
           (call_errors[number] & DM_ERROR_BIT(err)) != 0;
}

const char *dm_kop_name(long number)
{
    return number > 0 && number < DM_NKOPS ? kop_names[number] : 0;
}

int dm_kop_may_return(long number, long err)
{
    return number > 0 && number < DM_NKOPS && err < 0 && -err < DM_NERRORS &&
           (kop_errors[number] & DM_ERROR_BIT(err)) != 0;
}

static const struct dm_info *info_page(void)
{
    return (const struct dm_info *)DM_INFO_PAGE;
}

dm_pid dm_self(void)
{
    return info_page()->pid;
}

uint32_t dm_machine(void)
{
    return info_page()->machine;
}

uint32_t dm_nodes(void)
{
    return info_page()->nodes;
}

uint64_t dm_proctime(void)
{
    const volatile struct dm_info *i = info_page();
    uint64_t base, at;
    do {      /* a switch between the reads would change both */
        base = i->proctime_base;
        at = i->instret_at_switch;
    } while (base != i->proctime_base || at != i->instret_at_switch);
    return base + (dm_instret() - at);
}

char *dm_pid_string(dm_pid pid, char *buf)
{
    sprintf(buf, "%u.%u.%u", PID_MACHINE(pid), PID_SLOT(pid), PID_GEN(pid));
    return buf;
}

int dm_pid_parse(const char *s, dm_pid *pid)
{
    unsigned machine, slot, gen;
    char extra;
    if (sscanf(s, "%u.%u.%u%c", &machine, &slot, &gen, &extra) != 3 || machine > 255 || slot > 0xfff ||
        gen > 0xfffff)
        return -1;
    *pid = PID_MAKE(machine, 0, slot, gen);
    return 0;
}

long sv_call(long slot, struct sv_call *c)
{
    static uint8_t out[DM_MSG_MAX], in[DM_MSG_MAX];
    struct sv_request *q = (struct sv_request *)out;
    if (c->len > SV_DATA_MAX)
        return E_TOOBIG;
    q->op = c->op;
    q->reserved = 0;
    memcpy(q->arg, c->arg, sizeof q->arg);
    if (c->len)
        memcpy(q + 1, c->data, c->len);
    struct dm_msg_info info;
    long n = dm_call(slot, out, sizeof *q + c->len, c->pass, in, sizeof in, &info);
    if (n < 0)
        return n;
    if ((size_t)n < sizeof(struct sv_reply))
        return E_BADREQ;
    struct sv_reply *r = (struct sv_reply *)in;
    c->value = r->value;
    c->reply_len = (uint32_t)(n - sizeof *r);
    if (c->reply_len > c->reply_cap)
        c->reply_len = c->reply_cap;
    if (c->reply_len)
        memcpy(c->reply_data, r + 1, c->reply_len);
    c->reply_link = info.link;
    c->replier = info.sender;
    return r->status;
}

long sv_reply(long reply_slot, int64_t status, int64_t value, const void *data, uint32_t len, long pass)
{
    static uint8_t out[DM_MSG_MAX];
    struct sv_reply *r = (struct sv_reply *)out;
    if (len > DM_MSG_MAX - sizeof *r)
        len = DM_MSG_MAX - sizeof *r;
    r->status = status;
    r->value = value;
    if (len)
        memcpy(r + 1, data, len);
    return dm_send(reply_slot, out, sizeof *r + len, pass);
}

static long simple_call(long slot, uint32_t op, int64_t arg0, int64_t *value)
{
    struct sv_call c = { .op = op, .arg = { arg0 }, .pass = DM_NO_LINK };
    long status = sv_call(slot, &c);
    if (value)
        *value = c.value;
    return status;
}

long pm_run(const char *program, int argc, char *const argv[])
{
    return pm_run_env(program, argc, argv, 0);
}

long pm_run_env(const char *program, int argc, char *const argv[], char *const envp[])
{
    return pm_run_on(-1, program, argc, argv, envp);
}

/* PM_RUN and its kin: `prefix` (prefix_len bytes) goes before the program's name. */
static long run_request(uint32_t op, const void *prefix, size_t prefix_len, int machine, const char *program,
                        int argc, char *const argv[], char *const envp[])
{
    char data[SV_DATA_MAX];
    size_t len = prefix_len + strlen(program) + 1;
    int envc = 0;
    while (envp && envp[envc])
        envc++;
    if (len > sizeof data)
        return E_TOOBIG;
    memcpy(data, prefix, prefix_len);
    memcpy(data + prefix_len, program, len - prefix_len);
    for (int i = 0; i < argc + envc; i++) {
        const char *s = i < argc ? argv[i] : envp[i - argc];
        size_t n = strlen(s) + 1;
        if (len + n > sizeof data)
            return E_TOOBIG;
        memcpy(data + len, s, n);
        len += n;
    }
    struct sv_call c = { .op = op, .arg = { argc, envc, machine + 1 }, .data = data, .len = (uint32_t)len,
                         .pass = DM_NO_LINK };
    long status = sv_call(SLOT_PM, &c);
    return status < 0 ? status : c.value;
}

long pm_run_on(int machine, const char *program, int argc, char *const argv[], char *const envp[])
{
    return run_request(PM_RUN, 0, 0, machine, program, argc, argv, envp);
}

long pm_meter_run(const struct pm_meter *m, int machine, const char *program, int argc, char *const argv[],
                  char *const envp[])
{
    return run_request(PM_METER_RUN, m, sizeof *m, machine, program, argc, argv, envp);
}

long pm_filter_run(int machine, int argc, char *const argv[])
{
    return run_request(PM_FILTER, 0, 0, machine, "filter", argc, argv, 0);
}

long pm_meter(dm_pid pid, const struct pm_meter *m)
{
    struct sv_call c = { .op = PM_METER, .arg = { (int64_t)pid }, .data = m, .len = sizeof *m, .pass = DM_NO_LINK };
    return sv_call(SLOT_PM, &c);
}

long pm_meter_system(int machine, const struct pm_meter *m)
{
    struct sv_call c = { .op = PM_METER_SYSTEM, .arg = { machine }, .data = m, .len = sizeof *m,
                         .pass = DM_NO_LINK };
    return sv_call(SLOT_PM, &c);
}

long pm_ps_page(int64_t *cursor, struct dm_kproc *entries, uint32_t cap)
{
    struct sv_call c = { .op = PM_PS, .arg = { *cursor }, .pass = DM_NO_LINK, .reply_data = entries,
                         .reply_cap = cap };
    long status = sv_call(SLOT_PM, &c);
    if (status < 0)
        return status;
    if (c.value > 0) {
        const struct dm_kproc *last = &entries[c.value - 1];
        *cursor = PM_PS_CURSOR(last->machine, last->slot + 1);
    }
    return (long)c.value;
}

long pm_machine_proctime(uint32_t machine, struct dm_kproc *entries, uint32_t cap, uint64_t *sum)
{
    int64_t cursor = PM_PS_CURSOR(machine, 0);
    long n;
    *sum = 0;
    while ((n = pm_ps_page(&cursor, entries, cap)) > 0 && PID_MACHINE(entries[0].pid) == machine)
        for (long i = 0; i < n; i++)
            *sum += entries[i].proctime;
    return n < 0 ? n : 0;
}

long pm_proctime(dm_pid pid, uint64_t *proctime)
{
    struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];   /* a page of ps, on the stack */
    int64_t cursor = PM_PS_CURSOR(PID_MACHINE(pid), PID_SLOT(pid));
    long n = pm_ps_page(&cursor, entries, sizeof entries);
    if (n < 0)
        return n;
    if (n == 0 || entries[0].pid != pid)
        return E_NOTFOUND;
    *proctime = entries[0].proctime;
    return 0;
}

long pm_wait(dm_pid pid, int64_t *status)
{
    return simple_call(SLOT_PM, PM_WAIT, (int64_t)pid, status);
}

long pm_meter_flush(const char *filter)
{
    struct sv_call c = { .op = PM_METER_FLUSH, .data = filter, .len = filter ? (uint32_t)strlen(filter) + 1 : 0,
                         .pass = DM_NO_LINK };
    return sv_call(SLOT_PM, &c);
}

long pm_kill(dm_pid pid)
{
    return simple_call(SLOT_PM, PM_KILL, (int64_t)pid, 0);
}

long pm_stop(dm_pid pid)
{
    return simple_call(SLOT_PM, PM_STOP, (int64_t)pid, 0);
}

long pm_resume(dm_pid pid)
{
    return simple_call(SLOT_PM, PM_RESUME, (int64_t)pid, 0);
}

long pm_migrate(dm_pid pid, int machine)
{
    struct sv_call c = { .op = PM_MIGRATE, .arg = { (int64_t)pid, machine }, .pass = DM_NO_LINK };
    return sv_call(SLOT_PM, &c);
}

long pm_halt(int code)
{
    return simple_call(SLOT_PM, PM_HALT, code, 0);
}

long pm_ready(void)
{
    return simple_call(SLOT_PM, PM_READY, 0, 0);
}

long sb_register(const char *name, long slot)
{
    struct sv_call c = { .op = SB_REGISTER, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = slot };
    return sv_call(SLOT_SWITCHBOARD, &c);
}

/* FILTER_NAME_PREFIX + name into out[SB_NAME_MAX]; 0, E_INVAL if empty, or
 * E_NAMETOOLONG if longer than FILTER_NAME_MAX. */
static long filter_sb_name(const char *name, char *out)
{
    if (!name[0])
        return E_INVAL;
    if (strlen(name) > FILTER_NAME_MAX)
        return E_NAMETOOLONG;
    snprintf(out, SB_NAME_MAX, "%s%s", FILTER_NAME_PREFIX, name);
    return 0;
}

long filter_register(const char *name, long slot)
{
    char full[SB_NAME_MAX];
    long err = filter_sb_name(name, full);
    if (err < 0)
        return err;
    struct sv_call c = { .op = SB_REGISTER, .arg = { SB_REGISTER_NEW }, .data = full,
                         .len = (uint32_t)strlen(full) + 1, .pass = slot };
    return sv_call(SLOT_SWITCHBOARD, &c);
}

long filter_lookup(const char *name)
{
    return filter_lookup_owner(name, 0);
}

long filter_lookup_owner(const char *name, dm_pid *owner)
{
    char full[SB_NAME_MAX];
    long err = filter_sb_name(name, full);
    if (err < 0)
        return err;
    struct sv_call c = { .op = SB_LOOKUP, .data = full, .len = (uint32_t)strlen(full) + 1, .pass = DM_NO_LINK };
    long status = sv_call(SLOT_SWITCHBOARD, &c);
    if (status < 0)
        return status;
    if (owner)
        *owner = (dm_pid)c.value;
    return c.reply_link >= 0 ? c.reply_link : E_NOTFOUND;
}

long filter_forget(dm_pid pid, int whole_machine)
{
    struct {
        struct sv_request q;
        char prefix[sizeof FILTER_NAME_PREFIX];
    } m = { .q = { .op = SB_FORGET, .arg = { (int64_t)pid, whole_machine } }, .prefix = FILTER_NAME_PREFIX };
    return dm_send(SLOT_SWITCHBOARD, &m, sizeof m, DM_NO_LINK);
}

long filter_unregister(const char *name)
{
    char full[SB_NAME_MAX];
    long err = filter_sb_name(name, full);
    if (err < 0)
        return err;
    struct sv_call c = { .op = SB_REMOVE, .data = full, .len = (uint32_t)strlen(full) + 1, .pass = DM_NO_LINK };
    return sv_call(SLOT_SWITCHBOARD, &c);
}

long sb_lookup(const char *name)
{
    struct sv_call c = { .op = SB_LOOKUP, .data = name, .len = (uint32_t)strlen(name) + 1,
                         .pass = DM_NO_LINK };
    long status = sv_call(SLOT_SWITCHBOARD, &c);
    if (status < 0)
        return status;
    return c.reply_link >= 0 ? c.reply_link : E_NOTFOUND;
}

/* Look a name up until it appears (a server starting up) or time runs out. */
long sb_lookup_wait(const char *name, uint64_t timeout_ns)
{
    uint64_t deadline = dm_clock_ns() + timeout_ns;
    for (;;) {
        long slot = sb_lookup(name);
        if (slot != E_NOTFOUND || dm_clock_ns() >= deadline)
            return slot;
        timer_sleep_ns(5000000);
    }
}

static long timer_slot = -1;

static long timer_link(void)
{
    if (timer_slot < 0)
        timer_slot = sb_lookup("timer");
    return timer_slot;
}

long timer_sleep_ns(uint64_t ns)
{
    long slot = timer_link();
    return slot < 0 ? slot : simple_call(slot, TIMER_SLEEP, (int64_t)ns, 0);
}

long timer_time(uint64_t *wall_ns, uint64_t *machine_ns)
{
    long slot = timer_link();
    if (slot < 0)
        return slot;
    uint64_t machine = 0;
    struct sv_call c = { .op = TIMER_TIME, .pass = DM_NO_LINK, .reply_data = &machine, .reply_cap = 8 };
    long status = sv_call(slot, &c);
    if (status == 0) {
        *wall_ns = (uint64_t)c.value;
        if (machine_ns)
            *machine_ns = machine;
    }
    return status;
}
