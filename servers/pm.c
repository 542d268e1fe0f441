/*
 * pm.c — the process manager: the one process of the whole system that
 * holds process-control links to the kernels, one per machine. It starts the
 * system (switchboard, console, timer, file system, shell), creates, stops,
 * resumes and destroys processes on any machine on request, grows their
 * memory, and tells waiters when a process has ended.
 *
 * It runs on machine 0. Its own kernel gives it the process-control link
 * to every other machine's kernel as that machine comes up (a
 * DM_NOTICE_MACHINE notice); it then asks that kernel for exit notices too.
 *
 * A process may be moved to another machine (PM_MIGRATE, the shell's
 * `migrate`): the process manager asks the kernel of the machine it runs
 * on (KOP_MIGRATE), and keeps in its record where each process runs now,
 * which every later request about it goes to. The kernel it moved to says
 * so too (DM_NOTICE_MOVED), so the record is right even when the answer to
 * the request cannot come.
 *
 * Every process's link to the process manager (slot SLOT_PM) carries that
 * process's own id as its code, so a request always says who sent it
 * (DEMOS's way; docs/architecture.md). A new process is created stopped, given its
 * standard links, then started.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "fs_protocol.h"
#include "record.h"
#include "server.h"

#define CHANNEL_REQUEST 0
#define CHANNEL_NOTICE  1
#define CHANNEL_PLACEHOLDER 2   /* links that only hold a slot; never used */
#define CHANNEL_WATCH   3       /* the timer's alarms: look at the machines of processes waited for */
#define NRECORDS 256
#define NWAITERS 8

struct record {
    dm_pid pid;          /* 0: unused */
    uint32_t machine;    /* where it runs (its pid names where it was created) */
    uint32_t moves;      /* times it has moved (KOP_MIGRATE) */
    char   name[24];
    int    ended;
    int    lost;                 /* ended with its machine, which went down: no exit status */
    int    ready;                /* a boot server said PM_READY */
    int    system;               /* one of the system's own processes (started at boot): not killed,
                                    stopped or metered on request */
    int    holds_device;         /* a system process given a link to a kernel (a device, or process
                                    control): it stays on that kernel's machine */
    int    movable;              /* a system process that may be moved (PM_MIGRATE): the file
                                    system's request interpreter, directory and buffer managers */
    int64_t status;
    int    waiters[NWAITERS];   /* reply slots of PM_WAIT requests */
    int    nwaiters;
    uint64_t ended_order;       /* older ended records are reused first */
    dm_pid parent;              /* on whose behalf it was created (0: the process manager's own) */
    /* Its metering, as the process manager set it (the kernel holds the meter link). */
    int    filter;              /* index in filters[], or -1: not metered */
    struct pm_meter meter;
    dm_pid meter_owner;         /* who started it: only they (or their unmetered ancestors) change it */
    char   serves_filter[32];   /* a filter server started by PM_FILTER: the name it serves under */
};

/* The filters metered processes were sent to: a link to each, kept for
 * the children of metered processes and for the flush at halt, and the
 * process that registered the name (when it ends, or its machine is down,
 * the metering into it ends: filter_gone). */
#define NFILTERS 8
static struct { char name[32]; long link; dm_pid owner; } filters[NFILTERS];
static struct pm_meter system_meter[PM_MAX_MACHINES];   /* meter every new process there (flags 0: no) */
static int system_filter[PM_MAX_MACHINES];

/* Trace disks (a disk whose block 0 begins "DPMTRACE": meter/tracelog.h):
 * their machine, a device link to each, and the filter each is lent to.
 * This machine's are found at start; another machine's (its disk 1, as
 * the launcher attaches it) is asked for the first time a filter is
 * started there. */
#define NTRACEDISKS 16
static struct { uint32_t machine; long link; dm_pid filter; } trace_disks[NTRACEDISKS];
static int ntrace_disks;
#define REMOTE_TRACE_DISK 1     /* the trace disk's index on a machine without the file system's disk */
static int meter_fs_machine = -1;   /* meter.fs=K: meter the file system into a filter on machine K */

static struct record records[NRECORDS];
static uint64_t end_counter;
static long switchboard_slot = -1, console_slot = -1;
static long control[PM_MAX_MACHINES];   /* process-control link to each machine's kernel, or -1 */
static long buffer_manager = -1;        /* our own link to the file system's buffer manager, for halt */
static long request_interpreter = -1;   /* the request interpreter's halt link (PM_SERVE "fs") */
static long notice_link = -1;           /* our notice channel, copied to every kernel */
static uint8_t buffer[DM_MSG_MAX];

/* A request to the kernel of `machine` over its process-control link;
 * *value is the answer's value (0 if no answer came). */
static long kernel_request_on(uint32_t machine, uint32_t op, dm_pid pid, int64_t arg0, int64_t arg1,
                              const void *data, uint32_t len, long pass, void *answer_data, uint32_t answer_cap,
                              uint64_t *value)
{
    if (len > DM_MSG_MAX - sizeof(struct dm_kreq))
        return E_TOOBIG;
    if (machine >= PM_MAX_MACHINES || control[machine] < 0)
        return E_NODE;
    struct kernel_request k = { .op = op, .pid = pid, .arg = { arg0, arg1 }, .data = data, .len = len,
                                .pass = pass, .answer = answer_data, .answer_cap = answer_cap };
    long status = kernel_request(control[machine], &k);
    if (value)
        *value = k.value;
    return status;
}

static struct record *find_record(dm_pid pid);

/* The machine process pid runs on: as its record says, else the one that
 * created it. */
static uint32_t machine_of(dm_pid pid)
{
    const struct record *r = find_record(pid);
    return r ? r->machine : PID_MACHINE(pid);
}

/* The same, for the requests that need only arg[0], to the kernel of the
 * machine `pid` runs on (of this machine when pid is 0). */
static long kernel_request_about(uint32_t op, dm_pid pid, int64_t arg0, const void *data, uint32_t len, long pass,
                                 void *answer_data, uint32_t answer_cap, uint64_t *value)
{
    return kernel_request_on(pid ? machine_of(pid) : dm_machine(), op, pid, arg0, 0, data, len, pass, answer_data,
                             answer_cap, value);
}

/* The process manager's own heap (newlib's malloc, for stdio's buffers)
 * grows straight through the kernel: the library's _sbrk asks the process
 * manager, which would be asking itself. */
void *_sbrk(ptrdiff_t increment)
{
    uint64_t old;
    if (kernel_request_about(KOP_GROW, dm_self(), increment, 0, 0, DM_NO_LINK, 0, 0, &old) < 0) {
        errno = ENOMEM;
        return (void *)-1;
    }
    return (void *)old;
}

static struct record *find_record(dm_pid pid)
{
    for (int i = 0; i < NRECORDS; i++) {
        dm_pid p = records[i].pid;
        if (p && PID_MACHINE(p) == PID_MACHINE(pid) && PID_SLOT(p) == PID_SLOT(pid) &&
            PID_GEN(p) == PID_GEN(pid) && (PID_EPOCH(pid) == 0 || PID_EPOCH(p) == PID_EPOCH(pid)))
            return &records[i];
    }
    return 0;
}

/* A record for a new process: a free one, else the oldest ended one without waiters. */
static struct record *new_record(dm_pid pid, const char *name)
{
    struct record *best = 0;
    for (int i = 0; i < NRECORDS; i++) {
        struct record *r = &records[i];
        if (!r->pid) {
            best = r;
            break;
        }
        if (r->ended && r->nwaiters == 0 && (!best || r->ended_order < best->ended_order))
            best = r;
    }
    if (best) {
        memset(best, 0, sizeof *best);
        best->pid = pid;
        best->machine = PID_MACHINE(pid);
        best->filter = -1;
        snprintf(best->name, sizeof best->name, "%s", name);
    }
    return best;
}

/* Move a link into slot `slot` of process pid (it leaves our table). */
static long give_link(dm_pid pid, long slot, long link)
{
    long err = kernel_request_about(KOP_MOVELINK, pid, slot, 0, 0, link, 0, 0, 0);
    if (err < 0)
        dm_destroylink(link);
    return err;
}

/* The largest program the process manager loads. */
#define PROGRAM_MAX (16u << 20)

/* A link to the program called `name`, read from the file system into
 * memory of ours (*image, to be freed once the kernel has made the process
 * from it): /bin/NAME, or NAME itself if it holds a '/'. E_NOTFOUND if there
 * is no such file (or no file system yet). */
static long read_program(const char *name, long *image_link, void **image)
{
    char path[1024];
    int len = snprintf(path, sizeof path, "%s%s", strchr(name, '/') ? "" : "/bin/", name);
    if (len < 0 || (size_t)len >= sizeof path)
        return E_NOTFOUND;
    struct dm_stat st;
    long file = fs_open(path, FS_ACCESS_READ, &st);
    if (file < 0)
        return file == E_NOTFOUND || file == E_INVAL ? E_NOTFOUND : file;
    long got = 0;
    if (st.type != FS_TYPE_FILE)
        got = E_NOTFOUND;
    else if (st.size == 0 || st.size > PROGRAM_MAX)
        got = st.size ? E_TOOBIG : E_BADREQ;
    else if (!(*image = malloc(st.size)))
        got = E_NOMEM;
    if (got == 0)
        got = fs_read(file, 0, *image, st.size);
    fs_close(file);
    if (got >= 0 && (uint64_t)got != st.size)
        got = E_BADREQ;
    if (got >= 0 && (*image_link = dm_createlink(0, 0, LINK_READ, *image, st.size)) < 0)
        got = *image_link;
    if (got < 0) {
        free(*image);
        *image = 0;
        return got;
    }
    return 0;
}

/* Create a process called `program` with argv and environment (data: argc
 * then envc NUL-ended strings) running the program that image_link's data
 * area holds (DM_NO_LINK: the boot image of that name); give it its
 * standard links (and extra_link in extra_slot), start it. Returns 0 and
 * its pid in *pid_out, or an error. */
/* How create_process meters a new process (DPM's metered creation). */
struct metering {
    int filter;                 /* filters[] index, or -1: not metered */
    struct pm_meter meter;
    dm_pid owner, parent;
};

static long meter_request(dm_pid pid, const struct pm_meter *m, long filter_link, dm_pid parent);

static long create_process(uint32_t machine, const char *program, long image_link, const char *args,
                           uint32_t args_len, int argc, int envc, long extra_link, long extra_slot,
                           const struct metering *metering, dm_pid *pid_out)
{
    char data[DM_MSG_MAX];
    const char *base = strrchr(program, '/');
    base = base ? base + 1 : program;
    size_t name_len = strlen(base) + 1;
    if (name_len + args_len > sizeof data - sizeof(struct dm_kreq)) {
        if (image_link >= 0)
            dm_destroylink(image_link);
        return E_TOOBIG;
    }
    memcpy(data, base, name_len);
    memcpy(data + name_len, args, args_len);
    uint64_t pid;
    long err = kernel_request_on(machine, KOP_CREATE, 0, argc, envc, data, (uint32_t)(name_len + args_len),
                                 image_link, 0, 0, &pid);
    if (err < 0) {
        if (err == E_NODE && image_link >= 0)
            dm_destroylink(image_link);
        return err;
    }
    long link = dm_createlink(CHANNEL_REQUEST, pid, 0, 0, 0);
    err = link < 0 ? link : give_link(pid, SLOT_PM, link);
    if (err >= 0 && switchboard_slot >= 0) {
        long copy = dm_duplicatelink(switchboard_slot);
        err = copy < 0 ? copy : give_link(pid, SLOT_SWITCHBOARD, copy);
    }
    if (err >= 0 && console_slot >= 0) {
        long copy = dm_duplicatelink(console_slot);
        err = copy < 0 ? copy : give_link(pid, SLOT_CONSOLE, copy);
    }
    if (err >= 0 && extra_link >= 0)
        err = give_link(pid, extra_slot, extra_link);
    int metered = metering && metering->filter >= 0;
    if (err >= 0 && metered)      /* the meter link, with the selection flags: DPM's steps 3 and 4 */
        err = meter_request(pid, &metering->meter, filters[metering->filter].link, metering->parent);
    struct record *r = err >= 0 ? new_record(pid, base) : 0;
    if (err >= 0 && !r)
        err = E_PROCFULL;
    if (r) {
        r->parent = metering ? metering->parent : 0;
        r->filter = metered ? metering->filter : -1;
        if (metered) {
            r->meter = metering->meter;
            r->meter_owner = metering->owner;
        }
    }
    if (err >= 0)
        err = kernel_request_about(KOP_START, pid, 0, 0, 0, DM_NO_LINK, 0, 0, 0);
    if (err < 0) {
        kernel_request_about(KOP_DESTROY, pid, DM_EXIT_KILLED, 0, 0, DM_NO_LINK, 0, 0, 0);
        return err;
    }
    *pid_out = pid;
    return 0;
}

/* ---- metering ---- */

/* Ask the kernel of pid to meter it into (a copy of) `filter_link` as m
 * says (DM_NO_LINK: only the flags and options change; flags 0: stop). */
static long meter_request(dm_pid pid, const struct pm_meter *m, long filter_link, dm_pid parent)
{
    long copy = DM_NO_LINK;
    if (filter_link >= 0 && (copy = dm_duplicatelink(filter_link)) < 0)
        return copy;
    int64_t options = (m->options & PM_METER_LOSSY ? 1 : 0) | ((int64_t)m->max_age_ms << 32);
    return kernel_request_on(machine_of(pid), KOP_METER, pid, m->flags, options, &parent, sizeof parent, copy,
                             0, 0, 0);
}

/* The filter called `name` now: its index in filters[], or an error. It
 * is looked up at the switchboard every time, as a filter of that name may
 * have ended and another taken its name. */
static long find_filter(const char *name)
{
    if (strnlen(name, sizeof filters[0].name) == sizeof filters[0].name || !name[0])
        return E_INVAL;
    dm_pid owner = 0;
    long link = filter_lookup_owner(name, &owner);
    if (link < 0)
        return link;
    int index = -1;
    for (int i = 0; i < NFILTERS && index < 0; i++)
        if (filters[i].link >= 0 && strcmp(filters[i].name, name) == 0)
            index = i;
    for (int i = 0; i < NFILTERS && index < 0; i++)
        if (filters[i].link < 0)
            index = i;
    if (index < 0) {
        dm_destroylink(link);
        return E_NOMEM;
    }
    if (filters[index].link >= 0)
        dm_destroylink(filters[index].link);
    snprintf(filters[index].name, sizeof filters[index].name, "%s", name);
    filters[index].link = link;
    filters[index].owner = owner;
    return index;
}

/* The metering into filters[f] ends: the machines' system metering into
 * it stops, and every process metered into it is metered no more (its
 * kernel sends its last batch: taken by a filter that still serves,
 * counted lost by the kernel if it has ended). */
static void end_metering_into(int f)
{
    for (int m = 0; m < PM_MAX_MACHINES; m++)
        if (system_meter[m].flags && system_filter[m] == f)
            system_meter[m].flags = 0;
    static const struct pm_meter stop = { .flags = 0 };
    for (int i = 0; i < NRECORDS; i++) {
        struct record *r = &records[i];
        if (r->pid && !r->ended && r->filter == f) {
            meter_request(r->pid, &stop, DM_NO_LINK, 0);
            r->filter = -1;
        }
    }
}

/* Filter f has ended, or its machine is down: nothing is metered into
 * it any more, and its entry is free. */
static void filter_gone(int f)
{
    end_metering_into(f);
    dm_destroylink(filters[f].link);
    filters[f].link = -1;
    filters[f].owner = 0;
}

/* Process pid has ended (an exit notice): the filter names it registered
 * are forgotten, and the metering into a filter it was ends. */
static void metering_process_ended(dm_pid pid)
{
    filter_forget(pid, 0);
    for (int f = 0; f < NFILTERS; f++)
        if (filters[f].link >= 0 && filters[f].owner == pid)
            filter_gone(f);
}

/* Machine `machine` is down (a kernel's DM_NOTICE_DOWN): the filters
 * there are gone for the metering: their names are forgotten and nothing
 * is metered into them any more. */
static void metering_machine_down(uint32_t machine)
{
    filter_forget(PID_MAKE(machine, 0, 0, 0), 1);
    for (int f = 0; f < NFILTERS; f++)
        if (filters[f].link >= 0 && machine_of(filters[f].owner) == machine)
            filter_gone(f);
}

/* Whether `caller` may change the metering of r: the process that started
 * it, or an unmetered ancestor of that process; anyone but r itself when r
 * is not metered. Never r or a metered descendant of r's metering. */
static int may_change_metering(dm_pid caller, const struct record *r)
{
    if (caller == r->pid)
        return 0;
    if (r->filter < 0)
        return 1;
    dm_pid who = r->meter_owner;
    for (int depth = 0; who && depth < NRECORDS; depth++) {
        if (who == caller)
            return 1;
        const struct record *a = find_record(who);
        if (!a || a->filter >= 0)
            return 0;
        who = a->parent;
    }
    return 0;
}

/* How a process created for `caller` on `machine` is metered: as the
 * request says (metered run), else as its creator (children inherit), else
 * as the machine's system setting, else not. */
static long metering_for(dm_pid caller, uint32_t machine, const struct pm_meter *asked, struct metering *out)
{
    out->filter = -1;
    out->parent = caller;
    out->owner = caller;
    const struct record *creator = find_record(caller);
    if (asked) {
        long f = find_filter(asked->filter);
        if (f < 0)
            return f;
        if ((asked->flags & ~(uint32_t)METER_ALL_FLAGS) || asked->flags == 0)
            return E_INVAL;
        out->filter = (int)f;
        out->meter = *asked;
    } else if (creator && creator->filter >= 0 && !(creator->meter.options & PM_METER_NO_CHILDREN)) {
        out->filter = creator->filter;
        out->meter = creator->meter;
        out->owner = creator->meter_owner;
    } else if (machine < PM_MAX_MACHINES && system_meter[machine].flags) {
        out->filter = system_filter[machine];
        out->meter = system_meter[machine];
        out->owner = dm_self();
    }
    return 0;
}

/* PM_METER: attach, change or stop the metering of a running process. */
static long change_metering(dm_pid caller, struct record *r, const struct pm_meter *m)
{
    if (!may_change_metering(caller, r))
        return E_RIGHTS;
    if (r->system || r->serves_filter[0])
        return E_SYSTEM;    /* a lossless stream could hold it while a filter waits for it */
    if (m->flags & ~(uint32_t)METER_ALL_FLAGS)
        return E_INVAL;
    long f = -1;
    if (m->flags && m->filter[0] && (f = find_filter(m->filter)) < 0)
        return f;
    if (f < 0 && r->filter < 0)
        return E_STATE;                  /* not metered: off has nothing to stop, flags need a filter named */
    long err = meter_request(r->pid, m, f >= 0 ? filters[f].link : DM_NO_LINK, r->parent);
    if (err < 0)
        return err;
    if (!m->flags) {
        r->filter = -1;
        return 0;
    }
    if (r->filter < 0)
        r->meter_owner = caller;
    if (f >= 0)
        r->filter = (int)f;
    r->meter = *m;
    return 0;
}

/* Every kernel sends its metered processes' batches; returns when they
 * have been taken (each kernel answers then, or after wait_ms). */
#define FLUSH_AT_HALT_MS 10000       /* a stuck filter must not stop a halt for long */
#define FLUSH_AT_STOP_MS 60000       /* a lossy stream's whole outbox may be on its way over a bad wire */
#define FILTER_BUSY_RETRY_NS 10000000ull   /* a filter whose queue is full is asked again after 10 ms */
static void flush_kernels_metering(int64_t wait_ms)
{
    for (uint32_t m = 0; m < PM_MAX_MACHINES; m++)
        if (control[m] >= 0)
            kernel_request_on(m, KOP_METER_FLUSH, 0, wait_ms, 0, 0, 0, DM_NO_LINK, 0, 0, 0);
}

/* PM_METER_FLUSH: with a filter's name (the data), the metering into that
 * filter ends (`filter stop`: its processes' last batches go to it before
 * it stops); then every kernel sends what it has. */
static void flush_for_stop(const struct sv_request *q, uint32_t len)
{
    const char *name = (const char *)(q + 1);
    uint32_t name_len = len - sizeof *q;
    long f = name_len > 0 && strnlen(name, name_len) < name_len ? find_filter(name) : -1;
    if (f >= 0)
        end_metering_into((int)f);
    flush_kernels_metering(FLUSH_AT_STOP_MS);
}

/* At halt: the metering into every filter ends, as at `filter stop` (each
 * metered process's last batch goes; a process metered on would make
 * records after the flush that no filter writes out), every kernel sends
 * its metered processes' batches, then every filter writes out what it
 * has, before the power goes. */
static void flush_metering(void)
{
    int any = 0;
    for (int i = 0; i < NRECORDS; i++)
        any |= records[i].pid && !records[i].ended && records[i].serves_filter[0];
    if (!any)
        return;
    for (int f = 0; f < NFILTERS; f++)
        if (filters[f].link >= 0)
            end_metering_into(f);
    flush_kernels_metering(FLUSH_AT_HALT_MS);
    for (int i = 0; i < NRECORDS; i++) {       /* only the filter servers this process manager started */
        struct record *r = &records[i];
        long link = r->pid && !r->ended && r->serves_filter[0] ? filter_lookup(r->serves_filter) : -1;
        if (link < 0)
            continue;
        /* A filter whose queue is full of batches refuses the request
         * (E_QFULL): asked again until it has taken them, which it does
         * soon, nothing being metered any more. */
        struct sv_call flush = { .op = FILTER_FLUSH, .pass = DM_NO_LINK };
        long err = sv_call(link, &flush);
        uint64_t tries = FLUSH_AT_HALT_MS * 1000000ull / FILTER_BUSY_RETRY_NS;
        while (err == E_QFULL && --tries > 0) {
            timer_sleep_ns(FILTER_BUSY_RETRY_NS);
            err = sv_call(link, &flush);
        }
        dm_destroylink(link);
    }
}

/* ---- trace disks ---- */

static uint8_t disk_block[DM_DISK_BLOCK] __attribute__((aligned(4096)));

/* Whether the disk behind device link `slot` is a trace disk. */
static int is_trace_disk(long slot)
{
    long area = dm_createlink(0, 0, LINK_READ | LINK_WRITE, disk_block, sizeof disk_block);
    struct kernel_request attach = { .op = KOP_DISK_ATTACH, .pass = area };
    struct kernel_request read = { .op = KOP_DISK_READ, .arg = { 0, 0 }, .pass = DM_NO_LINK };
    if (area < 0 || kernel_request(slot, &attach) < 0 || kernel_request(slot, &read) < 0)
        return 0;
    return memcmp(disk_block, "DPMTRACE", 8) == 0;
}

/* A device link from the kernel of `machine` (KOP_DEVICE with arg0 and
 * arg1: a disk's index, or 0 and KLINK_LIVE for the live trace channel). */
static long device_link_on(uint32_t machine, int64_t arg0, int64_t arg1)
{
    struct kernel_request k = { .op = KOP_DEVICE, .arg = { arg0, arg1 }, .pass = DM_NO_LINK };
    long status = kernel_request(control[machine], &k);
    if (status < 0 || k.link < 0) {
        if (k.link >= 0)
            dm_destroylink(k.link);
        return status < 0 ? status : E_BADREQ;
    }
    return k.link;
}

/* A copy of a free trace disk's device link on `machine` for a filter
 * about to start there (*index: its entry): DM_NO_LINK if the machine has
 * none, E_STATE if each is lent to a filter that still runs. An entry
 * whose link is -1 is the disk of a machine that booted again
 * (machine_up): its device link is asked of the new boot's kernel. */
static long lend_trace_disk(uint32_t machine, int *index)
{
    *index = -1;
    int known = 0;
    for (int i = 0; i < ntrace_disks; i++)
        known |= trace_disks[i].machine == machine;
    if (!known && machine != dm_machine() && ntrace_disks < NTRACEDISKS) {
        long link = device_link_on(machine, REMOTE_TRACE_DISK, 0);
        if (link >= 0)
            trace_disks[ntrace_disks++] = (typeof(trace_disks[0])){ machine, link, 0 };
    }
    int any = 0;
    for (int i = 0; i < ntrace_disks; i++) {
        if (trace_disks[i].machine != machine)
            continue;
        any = 1;
        const struct record *r = trace_disks[i].filter ? find_record(trace_disks[i].filter) : 0;
        if (trace_disks[i].filter && r && !r->ended)
            continue;
        if (trace_disks[i].link < 0) {
            long link = device_link_on(machine, REMOTE_TRACE_DISK, 0);
            if (link < 0)
                return link;
            trace_disks[i].link = link;
        }
        *index = i;
        return dm_duplicatelink(trace_disks[i].link);
    }
    return any ? E_STATE : DM_NO_LINK;
}

/* The live trace channels lent to filters: one per machine, to one
 * filter at a time (PM_LIVE). The device link is asked of the machine's
 * kernel the first time (KOP_DEVICE). */
static struct { long link; dm_pid filter; } live_channels[PM_MAX_MACHINES];

/* PM_LIVE: a copy of the live channel's device link of the machine of
 * `filter` (a filter server this process manager started), or an error. */
static long lend_live_channel(const struct record *filter)
{
    if (!filter || !filter->serves_filter[0])
        return E_RIGHTS;
    uint32_t machine = filter->machine;
    if (machine >= PM_MAX_MACHINES || control[machine] < 0)
        return E_NODE;
    typeof(live_channels[0]) *c = &live_channels[machine];
    if (c->link < 0) {
        long link = device_link_on(machine, 0, KLINK_LIVE);
        if (link < 0)
            return link;
        c->link = link;
    }
    const struct record *holder = c->filter ? find_record(c->filter) : 0;
    if (holder && holder != filter && !holder->ended)
        return E_STATE;
    long copy = dm_duplicatelink(c->link);
    if (copy >= 0)
        c->filter = filter->pid;
    return copy;
}

static void record_ended(struct record *r, int64_t status, int lost);

/* Process r runs on `machine` after its `moves`th move (the answer to
 * KOP_MIGRATE, or the notice of the kernel it moved to, whichever comes
 * first; the other, or an older one, changes nothing). */
static void record_moved(struct record *r, uint32_t machine, uint32_t moves)
{
    if (moves <= r->moves || machine >= PM_MAX_MACHINES)
        return;
    r->machine = machine;
    r->moves = moves;
}

/* A process has ended (the kernel's notice): its metering's bookkeeping,
 * then tell whoever waits. */
static void process_ended(dm_pid pid, int64_t status)
{
    struct record *r = find_record(pid);
    if (r && !r->ended)
        record_ended(r, status, 0);
}

/* Record r's process has ended with `status`, or is `lost` with its
 * machine: whoever waits for it is answered, with the status or E_NODE. */
static void record_ended(struct record *r, int64_t status, int lost)
{
    metering_process_ended(r->pid);
    r->ended = 1;
    r->lost = lost;
    r->status = status;
    r->ended_order = ++end_counter;
    for (int i = 0; i < r->nwaiters; i++)
        sv_reply(r->waiters[i], lost ? E_NODE : 0, r->status, 0, 0, DM_NO_LINK);
    r->nwaiters = 0;
}

/* Machine `machine` is down (its kernel's DM_NOTICE_DOWN, or the watch
 * found it so): its processes went with it, and no exit notice will come
 * for them. Each is taken as ended, lost. */
static void machine_lost(uint32_t machine)
{
    for (int i = 0; i < NRECORDS; i++)
        if (records[i].pid && PID_MACHINE(records[i].pid) == machine && !records[i].ended)
            record_ended(&records[i], DM_EXIT_KILLED, 1);
}

/* ---- watching the machines of processes waited for ----
 * A machine that goes down sends no exit notice, and this machine's
 * kernel notices it only when something is sent there: a PM_WAIT for a
 * process on another machine would wait for ever. While there is one,
 * each such machine is asked, once a second, for something small
 * (KOP_NETSTAT): a machine that does not answer is taken to be down by
 * its kernel within about 4 s, and its processes are lost. */
#define WATCH_EVERY_NS 1000000000ull
static int watch_armed;
static long watch_timer = -1;          /* the timer server, for the watch's alarms */

/* Whether someone waits for a process of `machine`. */
static int waited_on(uint32_t machine)
{
    for (int i = 0; i < NRECORDS; i++)
        if (records[i].pid && !records[i].ended && records[i].nwaiters && PID_MACHINE(records[i].pid) == machine)
            return 1;
    return 0;
}

/* The watch's next alarm, a second from now, unless one is on its way. */
static void arm_watch(void)
{
    if (watch_armed)
        return;
    if (watch_timer < 0)
        watch_timer = sb_lookup("timer");
    long link = watch_timer < 0 ? watch_timer : dm_createlink(CHANNEL_WATCH, 0, 0, 0, 0);
    if (link < 0)
        return;
    struct sv_call alarm = { .op = TIMER_ALARM, .arg = { (int64_t)WATCH_EVERY_NS, 0 }, .pass = link };
    watch_armed = sv_call(watch_timer, &alarm) == 0;
}

/* The watch's alarm: every other machine with a process waited for is
 * asked; one that does not answer is lost. Armed again while any remain. */
static void watch_machines(void)
{
    watch_armed = 0;
    int again = 0;
    for (uint32_t m = 0; m < PM_MAX_MACHINES; m++) {
        if (m == dm_machine() || !waited_on(m))
            continue;
        long err = kernel_request_on(m, KOP_NETSTAT, 0, 0, 0, 0, 0, DM_NO_LINK, 0, 0, 0);
        if (err == E_NODE || err == E_DEAD)
            machine_lost(m);
        else
            again = 1;
    }
    if (again)
        arm_watch();
}

#define NOTIFY_ATTEMPTS 5
#define NOTIFY_RETRY_NS 100000000ull   /* 0.1 s */

/* Machine `machine` is up, in a new boot if we knew it before: keep the
 * process-control link to its kernel (slot `link`), ask it for exit
 * notices, and count the processes of its former boot as ended. */
static void machine_up(uint32_t machine, long link)
{
    if (machine >= PM_MAX_MACHINES || machine == dm_machine()) {
        dm_destroylink(link);
        return;
    }
    if (control[machine] >= 0)
        dm_destroylink(control[machine]);
    control[machine] = link;
    if (live_channels[machine].link >= 0)      /* a device link of its former boot */
        dm_destroylink(live_channels[machine].link);
    live_channels[machine].link = -1;
    for (int i = 0; i < ntrace_disks; i++) {   /* the same for its trace disk: lend_trace_disk asks again */
        if (trace_disks[i].machine == machine && trace_disks[i].link >= 0) {
            dm_destroylink(trace_disks[i].link);
            trace_disks[i].link = -1;
            trace_disks[i].filter = 0;
        }
    }
    for (int i = 0; i < NRECORDS; i++)
        if (records[i].pid && records[i].machine == machine && !records[i].ended)
            process_ended(records[i].pid, DM_EXIT_KILLED);
    /* A machine just booted may not answer at once: asked again a few times. */
    long err = E_NOMEM;
    for (int attempt = 0; attempt < NOTIFY_ATTEMPTS && err < 0; attempt++) {
        if (attempt)
            timer_sleep_ns(NOTIFY_RETRY_NS);
        long copy = dm_duplicatelink(notice_link);
        err = copy < 0 ? copy : kernel_request_on(machine, KOP_NOTIFY, 0, 0, 0, 0, 0, copy, 0, 0, 0);
    }
    if (err < 0)
        printf("pm: machine %u does not take exit notices (%s)\n", machine, dm_error_name(err));
}

/* The process named by a request's arg0 (epoch 0 matches any epoch). */
static struct record *target(const struct sv_request *q)
{
    return find_record((dm_pid)q->arg[0]);
}

/* Power every other machine off: a SEND each, which returns once that
 * kernel has the request (it powers off a moment later). */
static void halt_other_machines(int code)
{
    struct dm_kreq q = { .op = KOP_HALT, .arg = { code } };
    for (uint32_t m = 0; m < PM_MAX_MACHINES; m++)
        if (control[m] >= 0 && m != dm_machine())
            dm_send(control[m], &q, sizeof q, DM_NO_LINK);
}

/* Before power-off: the file system's final sync, over the request
 * interpreter's halt link: between two of its operations, every changed
 * block is written back and the disk marked CLEAN, and no later change is
 * taken (a program still writing is refused). Without a request
 * interpreter, the buffer manager syncs alone, over the process manager's
 * own link to it (the switchboard is not needed). What could not be
 * written back is said on the console. */
static void flush_file_system(void)
{
    if (buffer_manager < 0)
        return;        /* no file system was started */
    struct sv_call sync = { .op = FS_SYNC, .pass = DM_NO_LINK };
    long err = request_interpreter >= 0 ? sv_call(request_interpreter, &sync) : E_DEAD;
    if (err == E_DEAD || err == E_NODE || err == E_FSDOWN) {
        sync = (struct sv_call){ .op = BM_SYNC, .arg = { 1 }, .pass = DM_NO_LINK };   /* final: marks it CLEAN */
        err = sv_call(buffer_manager, &sync);
    }
    if (err == E_DEAD || err == E_NODE)
        printf("pm: halt: the file system's changes since its last sync could not be written back: "
               "its buffer manager (bm) is gone: %s\n", dm_error_text(err));
    else if (err < 0)
        printf("pm: halt: %lld changed blocks of the file system could not be written back: %s\n",
               (long long)sync.value, dm_error_text(err));
    if (err < 0)
        printf("pm: halt: the disk is left marked MOUNTED: the next start checks it\n");
    fflush(stdout);
}

static void serve_one(void);
static int wait_for_machines(uint32_t first, uint32_t last, uint64_t give_up);

/* The handlers of each kind of request (user/lib/server_protocol.h, enum pm_op),
 * below in this order. Each fills in the answer (server.h); the caller is
 * the request link's code, info->code. */
static server_handler run_program, meter_process, meter_system, wait_for_end, signal_process, migrate_process,
    list_processes, list_peers, halt_system, lend_live, take_server_link;

/* One request to the process manager, by kind. */
static void handle_request(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                           struct server_answer *answer)
{
    struct record *r;
    uint64_t value = 0;
    switch (q->op) {
    case PM_RUN:
    case PM_METER_RUN:
    case PM_FILTER:
        run_program(info, q, len, answer);
        break;
    case PM_METER:
        meter_process(info, q, len, answer);
        break;
    case PM_METER_SYSTEM:
        meter_system(info, q, len, answer);
        break;
    case PM_WAIT:
        wait_for_end(info, q, len, answer);
        break;
    case PM_KILL:
    case PM_STOP:
    case PM_RESUME:
        signal_process(info, q, len, answer);
        break;
    case PM_MIGRATE:
        migrate_process(info, q, len, answer);
        break;
    case PM_PS:
        list_processes(info, q, len, answer);
        break;
    case PM_NETSTAT:
        list_peers(info, q, len, answer);
        break;
    case PM_SBRK:
        answer->status = kernel_request_about(KOP_GROW, info->code, q->arg[0], 0, 0, DM_NO_LINK, 0, 0, &value);
        answer->value = (int64_t)value;
        break;
    case PM_HALT:
        halt_system(info, q, len, answer);
        break;
    case PM_READY:
        if ((r = find_record(info->code)))
            r->ready = 1;
        break;
    case PM_METER_FLUSH:
        flush_for_stop(q, len);
        break;
    case PM_LIVE:
        lend_live(info, q, len, answer);
        break;
    case PM_SERVE:
        take_server_link(info, q, len, answer);
        break;
    default:
        answer->status = E_NOSYS;
    }
}

/* A PM_RUN, PM_METER_RUN or PM_FILTER request's data, taken apart. The
 * pointers are into the request buffer, which the next request overwrites. */
struct run_request {
    const struct pm_meter *asked;   /* PM_METER_RUN's metering (the data's first part); else 0 */
    const char *name;               /* the program's name */
    const char *args;               /* then argv (argv[0] first) and the environment, each NUL-ended */
    uint32_t args_len;
};

static void wait_to_run(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                        struct server_answer *answer, uint32_t machine);
static long parse_run_request(const struct sv_request *q, uint32_t len, struct run_request *run);
static long load_and_create(uint32_t machine, const struct run_request *run, int argc, int envc, long device,
                            const struct metering *metering, uint64_t *pid);
static void note_served_name(struct record *filter, const struct run_request *run, long argc);
static int keeps_no_log(const struct run_request *run, long argc);

/* PM_RUN, PM_METER_RUN (data: a struct pm_meter first), PM_FILTER: create
 * a process running the program named by the data, on the machine asked
 * (arg2 - 1, or the caller's if arg2 is 0), with arg0 arguments and arg1
 * environment strings; the answer's value is its pid. A filter gets a
 * trace disk of its machine and is answered once it serves. */
static void run_program(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                        struct server_answer *answer)
{
    dm_pid caller = info->code;
    struct run_request run;
    if (parse_run_request(q, len, &run) < 0) {
        answer->status = E_INVAL;
        return;
    }
    uint32_t machine = q->arg[2] > 0 ? (uint32_t)(q->arg[2] - 1) : machine_of(caller);
    if (machine < dm_nodes() && machine < PM_MAX_MACHINES && control[machine] < 0) {
        wait_to_run(info, q, len, answer, machine);
        return;
    }
    if (machine >= PM_MAX_MACHINES || control[machine] < 0) {
        answer->status = E_NODE;
        return;
    }
    long status = 0;
    struct metering metering = { .filter = -1 };
    int disk = -1;
    long device = DM_NO_LINK;
    if (q->op == PM_FILTER && !keeps_no_log(&run, q->arg[0]))   /* nor metered by the machine's setting */
        device = lend_trace_disk(machine, &disk);
    else
        status = metering_for(caller, machine, run.asked, &metering);
    if (device < DM_NO_LINK)
        status = device;
    if (status < 0) {
        answer->status = status;
        return;
    }
    uint64_t value = 0;
    status = load_and_create(machine, &run, (int)q->arg[0], (int)q->arg[1], device, &metering, &value);
    if (status == 0 && disk >= 0)
        trace_disks[disk].filter = value;
    struct record *started = status == 0 && q->op == PM_FILTER ? find_record(value) : 0;
    if (started)
        note_served_name(started, &run, q->arg[0]);
    /* Answer once the filter serves (its PM_READY, after it registered
     * its name), so that `filter start` then `meter -F NAME ...` works;
     * meanwhile serve others (the filter itself may ask for memory).
     * `q` and `run` are not used after this: serving overwrites the buffer. */
    while (started && !started->ended && !started->ready)
        serve_one();
    if (started && started->ended)
        status = E_DEAD;     /* it refused to start: it said why on the console */
    answer->status = status;
    answer->value = (int64_t)value;
}

/* How long a request to run a program on a machine of the cluster that
 * has not joined yet waits for it. */
#define RUN_WAIT_NS 10000000000ull

/* A run request for `machine`, a machine of the cluster that has not
 * joined yet: wait up to RUN_WAIT_NS for it, serving others meanwhile
 * (which overwrites the request buffer: the request is copied first), then
 * handle the request, or answer E_NODE. */
static void wait_to_run(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                        struct server_answer *answer, uint32_t machine)
{
    struct sv_request *copy = malloc(len);
    if (!copy) {
        answer->status = E_NOMEM;
        return;
    }
    memcpy(copy, q, len);
    if (wait_for_machines(machine, machine, dm_clock_ns() + RUN_WAIT_NS))
        run_program(info, copy, len, answer);
    else
        answer->status = E_NODE;
    free(copy);
}

/* Take the request's data apart: PM_METER_RUN's struct pm_meter (its
 * filter name NUL-ended), then a non-empty NUL-ended program name followed
 * by the argument and environment strings. 0, or E_INVAL. */
static long parse_run_request(const struct sv_request *q, uint32_t len, struct run_request *run)
{
    const char *data = (const char *)(q + 1);
    uint32_t data_len = len - sizeof *q;
    run->asked = 0;
    if (q->op == PM_METER_RUN) {
        const struct pm_meter *asked = (const struct pm_meter *)data;
        if (data_len < sizeof *asked || strnlen(asked->filter, sizeof asked->filter) == sizeof asked->filter)
            return E_INVAL;
        run->asked = asked;
        data += sizeof *asked;
        data_len -= sizeof *asked;
    }
    uint32_t name_len = (uint32_t)strnlen(data, data_len);
    if (name_len == 0 || name_len == data_len)
        return E_INVAL;
    run->name = data;
    run->args = data + name_len + 1;
    run->args_len = data_len - name_len - 1;
    return 0;
}

/* Create the process of `run` on `machine`, its program read from the file
 * system (/bin/NAME for a name without a '/'), or, for such a name not
 * found there, from the boot image. If the process is not created, the
 * lent device link is destroyed. 0 with *pid, or an error. */
static long load_and_create(uint32_t machine, const struct run_request *run, int argc, int envc, long device,
                            const struct metering *metering, uint64_t *pid)
{
    long image_link = DM_NO_LINK;
    void *image = 0;
    long status = read_program(run->name, &image_link, &image), read_status = status;
    if ((status == E_NOTFOUND || status == E_FSDOWN) && !strchr(run->name, '/'))
        status = 0;   /* not in the file system (or it is down): perhaps in the boot image */
    if (status == 0)
        status = create_process(machine, run->name, image_link, run->args, run->args_len, argc, envc, device, 3,
                                metering, pid);
    else if (device >= 0)
        dm_destroylink(device);
    free(image);
    return status == E_NOTFOUND && read_status == E_FSDOWN ? E_FSDOWN : status;
}

/* Remember the name a filter just started serves under: its first
 * argument after argv[0] and the options (those starting with '-', -l). */
static void note_served_name(struct record *filter, const struct run_request *run, long argc)
{
    const char *end = run->args + run->args_len, *name = run->args;
    for (int i = 0; i < argc && name < end; i++) {
        name += strnlen(name, (size_t)(end - name)) + 1;
        if (name < end && name[0] != '-')
            break;
    }
    if (name < end)
        snprintf(filter->serves_filter, sizeof filter->serves_filter, "%.*s",
                 (int)strnlen(name, (size_t)(end - name)), name);
}

/* Whether a filter about to start keeps no log (its option -n, among
 * those after argv[0]): it is lent no trace disk. */
static int keeps_no_log(const struct run_request *run, long argc)
{
    const char *end = run->args + run->args_len, *word = run->args;
    for (long i = 0; i < argc && word < end; i++) {
        if (i > 0 && word[0] != '-')
            break;
        if (i > 0 && strcmp(word, "-n") == 0)
            return 1;
        word += strnlen(word, (size_t)(end - word)) + 1;
    }
    return 0;
}

/* PM_METER: change the metering of process arg0 (data: a struct pm_meter). */
static void meter_process(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                          struct server_answer *answer)
{
    uint32_t data_len = len - sizeof *q;
    struct record *r;
    if (data_len < sizeof(struct pm_meter) || !(r = target(q)) || r->ended)
        answer->status = data_len < sizeof(struct pm_meter) ? E_INVAL : E_NOTFOUND;
    else
        answer->status = change_metering(info->code, r, (const struct pm_meter *)(q + 1));
}

/* PM_METER_SYSTEM: meter every process created on machine arg0 from now
 * on as the data (a struct pm_meter) says; flags 0: stop doing so. */
static void meter_system(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                         struct server_answer *answer)
{
    (void)info;
    const struct pm_meter *m = (const struct pm_meter *)(q + 1);
    long f = 0;
    if (len - sizeof *q < sizeof *m || q->arg[0] < 0 || q->arg[0] >= PM_MAX_MACHINES ||
        (m->flags & ~(uint32_t)METER_ALL_FLAGS))
        answer->status = E_INVAL;
    else if (m->flags && (f = find_filter(m->filter)) < 0)
        answer->status = f;
    else {
        system_meter[q->arg[0]] = *m;
        system_filter[q->arg[0]] = (int)f;
    }
}

/* PM_WAIT: the exit status of process arg0, answered when it ends. */
static void wait_for_end(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                         struct server_answer *answer)
{
    (void)len;
    struct record *r = target(q);
    if (!r) {
        answer->status = E_NOTFOUND;
    } else if (r->ended) {
        answer->status = r->lost ? E_NODE : 0;
        answer->value = r->status;
    } else if (r->nwaiters < NWAITERS && info->reply >= 0) {
        r->waiters[r->nwaiters++] = (int)info->reply;
        answer->later = 1;   /* answered when it ends (process_ended), or is lost */
        if (PID_MACHINE(r->pid) != dm_machine())
            arm_watch();
    } else {
        answer->status = E_QFULL;
    }
}

/* PM_KILL, PM_STOP, PM_RESUME: of process arg0. The system's own
 * processes (the process manager, the servers it started at boot, the
 * shell) are not killed or stopped: without any of them the console, the
 * file system or halt would be gone for good. */
static void signal_process(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                           struct server_answer *answer)
{
    (void)len;
    dm_pid caller = info->code;
    struct record *r = target(q);
    if (!r || r->ended)
        answer->status = E_NOTFOUND;
    else if (r->system && q->op != PM_RESUME)
        answer->status = E_SYSTEM;
    else
        answer->status = kernel_request_about(q->op == PM_KILL   ? KOP_DESTROY
                                              : q->op == PM_STOP ? KOP_STOP
                                                                 : KOP_RESUME,
                                              r->pid, DM_EXIT_KILLED, &caller, sizeof caller, DM_NO_LINK, 0, 0, 0);
}

/* PM_MIGRATE: move process arg0 to machine arg1 (DEMOS/MP's migration:
 * the kernel of the machine it runs on does it, KOP_MIGRATE). Of the
 * system's own processes, only the file system's that hold no device link
 * move (docs/migration.md, "The system's processes"): those that were
 * given a link to a kernel stay with it (E_DEVICE: the process manager,
 * the console and timer servers, the disk interfaces), and the switchboard
 * and the shell stay where they are (E_SYSTEM). Any other process that
 * holds a device link is refused by its kernel (E_DEVICE). The answer
 * comes when the process runs on that machine; its value is the machine. */
static void migrate_process(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                            struct server_answer *answer)
{
    (void)info, (void)len;
    struct record *r = target(q);
    int64_t to = q->arg[1];
    uint64_t value = 0;
    if (!r || r->ended)
        answer->status = E_NOTFOUND;
    else if (r->system && !r->movable)
        answer->status = r->holds_device ? E_DEVICE : E_SYSTEM;
    else if (to < 0 || to >= PM_MAX_MACHINES || control[to] < 0)
        answer->status = E_NODE;
    else
        answer->status = kernel_request_on(r->machine, KOP_MIGRATE, r->pid, to, 0, 0, 0, DM_NO_LINK, 0, 0, &value);
    if (answer->status < 0)
        return;
    record_moved(r, (uint32_t)value, r->moves + 1);
    answer->value = (int64_t)value;
}

/* The answer of PM_PS and PM_NETSTAT: `count` entries of `size` bytes
 * each, or the error `status` (with count as its value). */
static void answer_entries(struct server_answer *answer, long status, uint64_t count, const void *entries,
                           size_t size)
{
    answer->value = (int64_t)count;
    if (status < 0) {
        answer->status = status;
        return;
    }
    answer->data = entries;
    answer->len = (uint32_t)(count * size);
}

/* PM_PS: a page of the list of every machine's processes, from the cursor
 * arg0 (PM_PS_CURSOR) on; a machine with nothing more (or down) gives way
 * to the next. The answer's value is the number of entries. */
static void list_processes(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                           struct server_answer *answer)
{
    (void)info, (void)len;
    static uint8_t entries[DM_MSG_MAX];
    long status = 0;
    uint64_t value = 0;
    int64_t machine = q->arg[0] >> 16, slot = q->arg[0] & 0xffff;
    for (; machine < PM_MAX_MACHINES; machine++, slot = 0) {
        if (control[machine] < 0)
            continue;
        status = kernel_request_on((uint32_t)machine, KOP_PS, 0, slot, 0, 0, 0, DM_NO_LINK, entries, sizeof entries,
                                   &value);
        if (status >= 0 && value > 0)
            break;
    }
    if (machine == PM_MAX_MACHINES)
        status = 0, value = 0;
    answer_entries(answer, status, value, entries, sizeof(struct dm_kproc));
}

/* PM_NETSTAT: what the kernel of machine arg0 knows of the others (struct
 * dm_kpeer each); the answer's value is their number. */
static void list_peers(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                       struct server_answer *answer)
{
    (void)info, (void)len;
    static uint8_t peers[DM_MSG_MAX];
    uint64_t value = 0;
    long status = q->arg[0] < 0 || q->arg[0] >= PM_MAX_MACHINES
                      ? E_NODE
                      : kernel_request_on((uint32_t)q->arg[0], KOP_NETSTAT, 0, 0, 0, 0, 0, DM_NO_LINK, peers,
                                          sizeof peers, &value);
    answer_entries(answer, status, value, peers, sizeof(struct dm_kpeer));
}

/* PM_HALT: write back the metering, then the file system, and power
 * every machine off with status arg0. The metering first: a filter may
 * write its log into a file, which the file system's final sync must
 * find written. Answered only if the kernel refuses. */
static void halt_system(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                        struct server_answer *answer)
{
    (void)info, (void)len;
    flush_metering();
    flush_file_system();
    halt_other_machines((int)q->arg[0]);
    kernel_request_about(KOP_HALT, 0, q->arg[0], 0, 0, DM_NO_LINK, 0, 0, 0);
    answer->status = E_STATE;
}

/* PM_LIVE: a filter server this process manager started asks for the live
 * trace channel of its machine; answered with a copy of its device link. */
static void lend_live(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                      struct server_answer *answer)
{
    (void)q, (void)len;
    long link = lend_live_channel(find_record(info->code));
    if (link < 0)
        answer->status = link;
    else
        answer->pass = link;
}

/* PM_SERVE: the switchboard or the console server (the data: its name)
 * gives its link, once; it is kept for every process created after. The
 * request interpreter started at boot gives its halt link ("fs"), once. */
static void take_server_link(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                             struct server_answer *answer)
{
    const char *name = (const char *)(q + 1);
    uint32_t name_len = len - sizeof *q;
    const struct record *from = find_record(info->code);
    if (info->link < 0 || strnlen(name, name_len) == name_len) {
        answer->status = E_INVAL;
    } else if (strcmp(name, "fs") == 0 && request_interpreter < 0 && from && from->system &&
               strcmp(from->name, "ri") == 0) {
        request_interpreter = info->link;
        answer->link_kept = 1;
    } else if (strcmp(name, "switchboard") == 0 && switchboard_slot < 0) {
        switchboard_slot = info->link;
        answer->link_kept = 1;
    } else if (strcmp(name, "console") == 0 && console_slot < 0) {
        console_slot = info->link;
        answer->link_kept = 1;
    } else {
        answer->status = E_INVAL;
    }
}

/* Receive and handle one message. */
static void serve_message(const struct dm_msg_info *m, long n);

static void serve_one(void)
{
    struct dm_msg_info info;
    long n = dm_receive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL);
    if (n >= 0)
        serve_message(&info, n);
}

/* How long the process manager waits at start-up for a machine on which
 * the start-up table places a server, and for every machine of the
 * cluster to join before it starts the shell (from its own start). */
#define MACHINE_WAIT_NS 30000000000ull

/* The first machine from `first` to `last` that is not up (its kernel's
 * process-control link has not come), or -1 if all are. */
static int first_missing(uint32_t first, uint32_t last)
{
    for (uint32_t m = first; m <= last; m++)
        if (control[m] < 0)
            return (int)m;
    return -1;
}

/* Serve what comes until every machine from `first` to `last` is up, or
 * the machine clock reaches give_up; returns whether they all are. */
static int wait_for_machines(uint32_t first, uint32_t last, uint64_t give_up)
{
    while (first_missing(first, last) >= 0 && dm_clock_ns() < give_up) {
        struct dm_msg_info info;
        long n;
        while (first_missing(first, last) >= 0 &&
               (n = dm_areceive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL)) >= 0)
            serve_message(&info, n);
        if (first_missing(first, last) >= 0)
            timer_sleep_ns(50000000);
    }
    return first_missing(first, last) < 0;
}

static int wait_for_machine(uint32_t machine)
{
    return wait_for_machines(machine, machine, dm_clock_ns() + MACHINE_WAIT_NS);
}

static void serve_message(const struct dm_msg_info *m, long n)
{
    struct dm_msg_info info = *m;
    if (info.channel == CHANNEL_NOTICE && (info.flags & DM_MSG_FROM_KERNEL) &&
        (size_t)n >= sizeof(struct dm_notice)) {
        const struct dm_notice *notice = (const struct dm_notice *)buffer;
        if (notice->kind == DM_NOTICE_EXIT)
            process_ended(notice->pid, notice->status);
        else if (notice->kind == DM_NOTICE_MACHINE && info.link >= 0)
            machine_up(notice->machine, info.link);
        else if (notice->kind == DM_NOTICE_DOWN && notice->machine < PM_MAX_MACHINES) {
            metering_machine_down(notice->machine);
            machine_lost(notice->machine);
        } else if (notice->kind == DM_NOTICE_MOVED && find_record(notice->pid))
            record_moved(find_record(notice->pid), notice->machine, (uint32_t)notice->status);
        else if (info.link >= 0)
            dm_destroylink(info.link);
    } else if (info.channel == CHANNEL_REQUEST) {
        server_serve(&info, buffer, n, handle_request);
    } else if (info.channel == CHANNEL_WATCH) {
        watch_machines();
    } else if (info.reply >= 0) {
        sv_reply(info.reply, E_BADREQ, 0, 0, 0, DM_NO_LINK);
    }
}

/* How the file system starts: its four processes, bottom up, each with
 * its one argument, on its machine. This table is the start-up setting for
 * them: the buffer manager's argument is its cache size in blocks. The
 * boot argument place.NAME=K (e.g. `make run PLACE="bm=1 ri=2"`) puts
 * process NAME on machine K; the disk interface stays with the disk, on
 * this machine. The other three may be moved later (PM_MIGRATE). */
struct boot_server {
    const char *program, *argument;
    int takes_disk;                /* it gets disk 0's device link in slot 3 */
    uint32_t machine;
};
static struct boot_server file_system[] = {
    { "di", "di", 1, 0 },  /* disk interface, registered as "di" */
    { "bm", "64", 0, 0 },  /* buffer manager: 64 cache blocks */
    { "dm", 0, 0, 0 },     /* directory manager */
    { "ri", 0, 0, 0 },     /* request interpreter, registered as "fs" */
};
#define FILE_SYSTEM_PROCESSES (sizeof file_system / sizeof file_system[0])

/* Read the place.NAME=K settings among the process manager's arguments
 * (the kernel gives it the boot arguments' words); others are not its. */
static void read_placement(int argc, char **argv)
{
    for (size_t i = 0; i < FILE_SYSTEM_PROCESSES; i++)
        file_system[i].machine = dm_machine();
    for (int a = 1; a < argc; a++) {
        if (strncmp(argv[a], "meter.fs=", 9) == 0) {
            char *end;
            long k = strtol(argv[a] + 9, &end, 10);
            if (end == argv[a] + 9 || *end || k < 0 || k >= PM_MAX_MACHINES)
                printf("pm: %s: not meter.fs=MACHINE\n", argv[a]);
            else
                meter_fs_machine = (int)k;
            continue;
        }
        if (strncmp(argv[a], "place.", 6) != 0)
            continue;
        char *name = argv[a] + 6, *equals = strchr(name, '='), *end;
        size_t i = 0;
        while (equals && i < FILE_SYSTEM_PROCESSES &&
               (strlen(file_system[i].program) != (size_t)(equals - name) ||
                strncmp(file_system[i].program, name, (size_t)(equals - name)) != 0))
            i++;
        long k = equals ? strtol(equals + 1, &end, 10) : -1;
        if (!equals || i == FILE_SYSTEM_PROCESSES || end == equals + 1 || *end || k < 0 || k >= PM_MAX_MACHINES)
            printf("pm: %s: not place.NAME=MACHINE with NAME one of di, bm, dm, ri\n", argv[a]);
        else if (file_system[i].takes_disk && (uint32_t)k != dm_machine())
            printf("pm: %s: the disk interface runs where the disk is, on machine %u\n", argv[a], dm_machine());
        else
            file_system[i].machine = (uint32_t)k;
    }
}

/* Start a system server and serve requests until it is ready: `*ready`
 * set (PM_SERVE), or, without `ready`, its PM_READY; or until it ends.
 * Returns its record if it is ready, else 0. */
static struct record *start_server(uint32_t machine, const char *name, const char *argument, long device_link,
                                   long *ready, const struct metering *metering)
{
    char args[32];
    int len = snprintf(args, sizeof args, "%s", name) + 1;
    int argc = 1;
    if (argument) {
        len += snprintf(args + len, sizeof args - (size_t)len, "%s", argument) + 1;
        argc++;
    }
    dm_pid pid;
    if (machine != dm_machine() && !wait_for_machine(machine)) {
        printf("pm: machine %u is not up: %s runs on machine %u\n", machine, name, dm_machine());
        machine = dm_machine();
    }
    long err = create_process(machine, name, DM_NO_LINK, args, (uint32_t)len, argc, 0, device_link, 3, metering,
                              &pid);
    if (err < 0) {
        printf("pm: cannot start %s: %s\n", name, dm_error_name(err));
        return 0;
    }
    struct record *r = find_record(pid);
    if (r) {
        r->system = 1;
        r->holds_device = device_link >= 0;
    }
    while (r && !r->ended && (ready ? *ready < 0 : !r->ready))
        serve_one();
    return r && !r->ended ? r : 0;
}

/* meter.fs=K: a filter named "fstrace" on machine K's trace disk (all records,
 * the kernel's description), started before the file system, into which
 * its four processes are metered from their first instruction. */
static void start_fs_filter(uint32_t machine, struct metering *m)
{
    if (machine != dm_machine() && !wait_for_machine(machine)) {
        printf("pm: meter.fs: machine %u is not up: the file system is not metered\n", machine);
        return;
    }
    int disk;
    long device = lend_trace_disk(machine, &disk);
    if (device < 0) {
        printf("pm: meter.fs: machine %u has no free trace disk: the file system is not metered\n", machine);
        return;
    }
    static const char args[] = "filter\0fstrace\0-\0-";
    dm_pid pid;
    long err = create_process(machine, "filter", DM_NO_LINK, args, sizeof args, 4, 0, device, 3, 0, &pid);
    struct record *r = err < 0 ? 0 : find_record(pid);
    while (r && !r->ended && !r->ready)
        serve_one();
    long f = r && !r->ended ? find_filter("fstrace") : E_DEAD;
    if (f < 0) {
        printf("pm: meter.fs: the filter did not start (%s): the file system is not metered\n",
               dm_error_name(err < 0 ? err : f));
        return;
    }
    trace_disks[disk].filter = pid;
    snprintf(r->serves_filter, sizeof r->serves_filter, "fstrace");
    *m = (struct metering){ .filter = (int)f, .meter = { .flags = METER_ALL_FLAGS, .filter = "fstrace" },
                            .owner = dm_self(), .parent = dm_self() };
}

/* The process manager's own standard slots: placeholders hold them at
 * start (the kernel gives out the lowest free slot, and links come and go
 * here all the time) until the real link can take its place. */
static void reserve_own_slots(void)
{
    for (int slot = 0; slot <= SLOT_CONSOLE; slot++)
        dm_createlink(CHANNEL_PLACEHOLDER, 0, 0, 0, 0);
}

/* Put a copy of link `from` in own slot `slot` (its placeholder goes). */
static void take_own_slot(long slot, long from)
{
    dm_destroylink(slot);
    long copy = dm_duplicatelink(from);   /* the lowest free slot: `slot` */
    if (copy != slot)
        printf("pm: standard link %ld landed in slot %ld\n", slot, copy);
}

static int count_disks(void);
static void init_tables(void);
static void start_disk_servers(int disks);
static void wait_for_cluster(uint64_t give_up);
static void start_shell(int disks);

/* Boot the system: the process manager's tables, the switchboard, the
 * console and timer servers, the file system and the other disks' servers,
 * then, once every machine of the cluster has joined (or MACHINE_WAIT_NS
 * after the start), the shell; then serve requests for ever. */
int main(int argc, char **argv)
{
    uint64_t join_deadline = dm_clock_ns() + MACHINE_WAIT_NS;
    int disks = count_disks();   /* before any link of ours can take slot 6 */
    reserve_own_slots();
    init_tables();
    start_server(dm_machine(), "switchboard", 0, -1, &switchboard_slot, 0);
    take_own_slot(SLOT_SWITCHBOARD, switchboard_slot);
    start_server(dm_machine(), "console", 0, BOOT_SLOT_CONSOLE, &console_slot, 0);
    take_own_slot(SLOT_CONSOLE, console_slot);
    start_server(dm_machine(), "timer", 0, BOOT_SLOT_TIMER, 0, 0);
    read_placement(argc, argv);
    start_disk_servers(disks);
    wait_for_cluster(join_deadline);
    start_shell(disks);
    for (;;)
        serve_one();
}

/* How many disks the kernel lent us (boot slots BOOT_SLOT_DISK0 on). */
static int count_disks(void)
{
    int disks = 0;
    for (long copy; (copy = dm_duplicatelink(BOOT_SLOT_DISK0 + disks)) >= 0; disks++)
        dm_destroylink(copy);
    return disks;
}

/* The process manager's own record, empty link tables, this machine's
 * process-control link, and the notice link this kernel tells us of other
 * machines over. */
static void init_tables(void)
{
    records[0].pid = dm_self();
    records[0].filter = -1;
    records[0].system = 1;
    records[0].holds_device = 1;     /* the process-control links of every kernel */
    snprintf(records[0].name, sizeof records[0].name, "pm");
    for (int m = 0; m < PM_MAX_MACHINES; m++)
        control[m] = live_channels[m].link = -1;
    for (int i = 0; i < NFILTERS; i++)
        filters[i].link = -1;
    control[dm_machine()] = BOOT_SLOT_PROCESS_CONTROL;
    notice_link = dm_createlink(CHANNEL_NOTICE, 0, 0, 0, 0);
    long notice = dm_duplicatelink(notice_link);
    kernel_request_about(KOP_NOTIFY, 0, 0, 0, 0, notice, 0, 0, 0);
}

/* The servers of the disks: the trace disks are set aside first (with
 * meter.fs a filter starts before the file system); then the file system's
 * processes on disk 0, from the bottom up, each once the one below it
 * serves (the buffer manager ends at once if the disk holds no file
 * system); then a disk interface for each other disk. */
static void start_disk_servers(int disks)
{
    int trace_disk[DM_MAX_DISKS] = { 0 };
    for (int i = 1; i < disks && i < DM_MAX_DISKS; i++) {
        if (ntrace_disks < NTRACEDISKS && is_trace_disk(BOOT_SLOT_DISK0 + i)) {
            trace_disks[ntrace_disks++] = (typeof(trace_disks[0])){ dm_machine(), BOOT_SLOT_DISK0 + i, 0 };
            trace_disk[i] = 1;
        }
    }
    struct metering fs_metering = { .filter = -1 };
    if (disks > 0 && meter_fs_machine >= 0)
        start_fs_filter((uint32_t)meter_fs_machine, &fs_metering);
    for (size_t i = 0; disks > 0 && i < FILE_SYSTEM_PROCESSES; i++) {
        const struct boot_server *f = &file_system[i];
        long device = f->takes_disk ? BOOT_SLOT_DISK0 : -1;
        struct record *r = start_server(f->machine, f->program, f->argument, device, 0, &fs_metering);
        if (!r)
            break;
        r->movable = !f->takes_disk;
        if (strcmp(f->program, "bm") == 0)
            buffer_manager = sb_lookup("bm");   /* it registered before it said PM_READY */
    }
    for (int i = 1; i < disks; i++) {
        if (i < DM_MAX_DISKS && trace_disk[i])
            continue;
        char name[16];
        snprintf(name, sizeof name, "di%d", i);
        start_server(dm_machine(), "di", name, BOOT_SLOT_DISK0 + i, 0, 0);
    }
}

/* Serve what comes until every machine of the cluster (dm_nodes) has
 * joined, or until give_up; then name each machine still missing, and
 * which kernels have heard of it (KOP_NETSTAT): none, when it did not
 * start or is not on the network; the others but not this one, when the
 * network loses what it sends here. */
static void wait_for_cluster(uint64_t give_up)
{
    uint32_t last = dm_nodes() - 1;
    if (last >= PM_MAX_MACHINES)
        last = PM_MAX_MACHINES - 1;
    if (wait_for_machines(0, last, give_up))
        return;
    static struct dm_kpeer peers[DM_MSG_MAX / sizeof(struct dm_kpeer)];
    for (int missing = first_missing(0, last); missing >= 0; missing = first_missing((uint32_t)missing + 1, last)) {
        char heard[128] = "", unheard[128] = "";
        int nheard = 0, nunheard = 0;
        for (uint32_t k = 0; k <= last; k++) {
            uint64_t count = 0;
            if (control[k] < 0 ||
                kernel_request_on(k, KOP_NETSTAT, 0, 0, 0, 0, 0, DM_NO_LINK, peers, sizeof peers, &count) < 0)
                continue;
            int knows = 0;
            for (uint64_t i = 0; i < count && i < sizeof peers / sizeof peers[0]; i++)
                knows |= peers[i].machine == (uint32_t)missing;
            char *list = knows ? heard : unheard;
            int *n = knows ? &nheard : &nunheard;
            size_t used = strlen(list);
            snprintf(list + used, sizeof heard - used, "%s%u", *n ? ", " : "", k);
            ++*n;
        }
        char why[300];
        if (nheard == 0)
            snprintf(why, sizeof why, "no machine has heard of it: is it started, and on this network?");
        else if (nunheard == 0)
            snprintf(why, sizeof why, "machine%s %s heard of it, but it did not join", nheard > 1 ? "s" : "", heard);
        else
            snprintf(why, sizeof why, "machine%s %s %s not heard of it; machine%s %s %s", nunheard > 1 ? "s" : "",
                     unheard, nunheard > 1 ? "have" : "has", nheard > 1 ? "s" : "", heard,
                     nheard > 1 ? "have" : "has");
        printf("pm: after %llu s, machine %d has not joined (%s): the shell starts without it\n",
               (unsigned long long)(MACHINE_WAIT_NS / 1000000000ull), missing, why);
    }
}

/* The shell, like every program that is not needed to start the file
 * system, comes from the file system. Nothing can be done without it: if
 * it cannot start, say so and power off. */
static void start_shell(int disks)
{
    static const char shell_args[] = "shell";
    dm_pid shell;
    long image_link = DM_NO_LINK;
    void *image = 0;
    long err = read_program("shell", &image_link, &image);
    if (err == 0)
        err = create_process(dm_machine(), "shell", image_link, shell_args, sizeof shell_args, 1, 0, -1, 0, 0, &shell);
    free(image);
    struct record *r = err < 0 ? 0 : find_record(shell);
    if (r)
        r->system = 1;
    if (err < 0) {
        printf("pm: cannot start the shell (/bin/shell%s): %s; powering off\n",
               disks == 0 ? ", and there is no disk" : "", dm_error_name(err));
        flush_file_system();
        kernel_request_about(KOP_HALT, 0, 1, 0, 0, DM_NO_LINK, 0, 0, 0);
    }
}
