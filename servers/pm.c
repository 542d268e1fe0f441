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
 * Every process's link to the process manager (slot SLOT_PM) carries that
 * process's own id as its code, so a request always says who sent it
 * (DEMOS's way; DESIGN.md). A new process is created stopped, given its
 * standard links, then started.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "fsproto.h"

#define CHANNEL_REQUEST 0
#define CHANNEL_NOTICE  1
#define CHANNEL_PLACEHOLDER 2   /* links that only hold a slot; never used */
#define NRECORDS 256
#define NWAITERS 8

struct record {
    dm_pid pid;          /* 0: unused */
    char   name[24];
    int    ended;
    int    ready;                /* a boot server said PM_READY */
    int64_t status;
    int    waiters[NWAITERS];   /* reply slots of PM_WAIT requests */
    int    nwaiters;
    uint64_t ended_order;       /* older ended records are reused first */
};

static struct record records[NRECORDS];
static uint64_t end_counter;
static long switchboard_slot = -1, console_slot = -1;
static long control[PM_MAX_MACHINES];   /* process-control link to each machine's kernel, or -1 */
static long notice_link = -1;           /* our notice channel, copied to every kernel */
static uint8_t buffer[DM_MSG_MAX];

/* A request to the kernel of `machine` over its process-control link. */
static long kernel_request_on(uint32_t machine, uint32_t op, dm_pid pid, int64_t arg0, int64_t arg1,
                              const void *data, uint32_t len, long pass, void *answer_data, uint32_t answer_cap,
                              uint64_t *value)
{
    static uint8_t out[DM_MSG_MAX], in[DM_MSG_MAX];
    struct dm_kreq *q = (struct dm_kreq *)out;
    memset(q, 0, sizeof *q);
    q->op = op;
    q->pid = pid;
    q->arg[0] = arg0;
    q->arg[1] = arg1;
    if (len > sizeof out - sizeof *q)
        return E_TOOBIG;
    if (machine >= PM_MAX_MACHINES || control[machine] < 0)
        return E_NODE;
    memcpy(q + 1, data, len);
    struct dm_msg_info info;
    long n = dm_call(control[machine], out, sizeof *q + len, pass, in, sizeof in, &info);
    if (n < 0)
        return n;
    struct dm_kreply *r = (struct dm_kreply *)in;
    if (value)
        *value = r->value;
    if (answer_data) {
        uint32_t got = (uint32_t)n - sizeof *r;
        memcpy(answer_data, r + 1, got < answer_cap ? got : answer_cap);
    }
    return r->status;
}

/* The same, for the requests that need only arg[0], to the kernel of the
 * machine of `pid` (of this machine when pid is 0). */
static long kernel_request(uint32_t op, dm_pid pid, int64_t arg0, const void *data, uint32_t len, long pass,
                           void *answer_data, uint32_t answer_cap, uint64_t *value)
{
    return kernel_request_on(pid ? PID_MACHINE(pid) : dm_machine(), op, pid, arg0, 0, data, len, pass,
                             answer_data, answer_cap, value);
}

/* The process manager's own heap (newlib's malloc, for stdio's buffers)
 * grows straight through the kernel: the library's _sbrk asks the process
 * manager, which would be asking itself. */
void *_sbrk(ptrdiff_t increment)
{
    uint64_t old;
    if (kernel_request(KOP_GROW, dm_self(), increment, 0, 0, DM_NO_LINK, 0, 0, &old) < 0) {
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
        snprintf(best->name, sizeof best->name, "%s", name);
    }
    return best;
}

/* Move a link into slot `slot` of process pid (it leaves our table). */
static long give_link(dm_pid pid, long slot, long link)
{
    long err = kernel_request(KOP_MOVELINK, pid, slot, 0, 0, link, 0, 0, 0);
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
static long create_process(uint32_t machine, const char *program, long image_link, const char *args,
                           uint32_t args_len, int argc, int envc, long extra_link, long extra_slot, dm_pid *pid_out)
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
    struct record *r = err >= 0 ? new_record(pid, base) : 0;
    if (err >= 0 && !r)
        err = E_NOMEM;
    if (err >= 0)
        err = kernel_request(KOP_START, pid, 0, 0, 0, DM_NO_LINK, 0, 0, 0);
    if (err < 0) {
        kernel_request(KOP_DESTROY, pid, DM_EXIT_KILLED, 0, 0, DM_NO_LINK, 0, 0, 0);
        return err;
    }
    *pid_out = pid;
    return 0;
}

/* A process has ended (the kernel's notice): tell whoever waits. */
static void process_ended(dm_pid pid, int64_t status)
{
    struct record *r = find_record(pid);
    if (!r || r->ended)
        return;
    r->ended = 1;
    r->status = status;
    r->ended_order = ++end_counter;
    for (int i = 0; i < r->nwaiters; i++)
        sv_reply(r->waiters[i], 0, r->status, 0, 0, DM_NO_LINK);
    r->nwaiters = 0;
}

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
    for (int i = 0; i < NRECORDS; i++)
        if (records[i].pid && PID_MACHINE(records[i].pid) == machine && !records[i].ended)
            process_ended(records[i].pid, DM_EXIT_KILLED);
    long copy = dm_duplicatelink(notice_link);
    if (copy >= 0 && kernel_request_on(machine, KOP_NOTIFY, 0, 0, 0, 0, 0, copy, 0, 0, 0) < 0)
        printf("pm: machine %u does not take exit notices\n", machine);
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

/* Before power-off: the buffer manager writes its changed blocks back. */
static void flush_file_system(void)
{
    long bm = sb_lookup("bm");
    if (bm < 0)
        return;
    struct sv_call sync = { .op = BM_SYNC, .arg = { 1 }, .pass = DM_NO_LINK };   /* final: marks it CLEAN */
    sv_call(bm, &sync);
    dm_destroylink(bm);
}

static void handle_request(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len)
{
    dm_pid caller = info->code;
    const char *data = (const char *)(q + 1);
    uint32_t data_len = len - sizeof *q;
    long reply = info->reply;
    struct record *r;
    long status = 0;
    uint64_t value = 0;

    switch (q->op) {
    case PM_RUN: {
        uint32_t name_len = (uint32_t)strnlen(data, data_len);
        if (name_len == 0 || name_len == data_len) {
            status = E_INVAL;
            break;
        }
        uint32_t machine = q->arg[2] > 0 ? (uint32_t)(q->arg[2] - 1) : PID_MACHINE(caller);
        if (machine >= PM_MAX_MACHINES || control[machine] < 0) {
            status = E_NODE;
            break;
        }
        long image_link = DM_NO_LINK;
        void *image = 0;
        status = read_program(data, &image_link, &image);
        if (status == E_NOTFOUND && !strchr(data, '/'))
            status = 0;   /* not in the file system: perhaps in the boot image */
        if (status == 0)
            status = create_process(machine, data, image_link, data + name_len + 1, data_len - name_len - 1,
                                    (int)q->arg[0], (int)q->arg[1], -1, 0, &value);
        free(image);
        break;
    }
    case PM_WAIT:
        if (!(r = target(q))) {
            status = E_NOTFOUND;
        } else if (r->ended) {
            value = (uint64_t)r->status;
        } else if (r->nwaiters < NWAITERS && reply >= 0) {
            r->waiters[r->nwaiters++] = (int)reply;
            return;   /* answered when it ends */
        } else {
            status = E_QFULL;
        }
        break;
    case PM_KILL:
    case PM_STOP:
    case PM_RESUME:
        if (!(r = target(q)) || r->ended)
            status = E_NOTFOUND;
        else if (r->pid == dm_self())
            status = E_INVAL;   /* not the process manager itself */
        else
            status = kernel_request(q->op == PM_KILL ? KOP_DESTROY : q->op == PM_STOP ? KOP_STOP : KOP_RESUME,
                                    r->pid, DM_EXIT_KILLED, 0, 0, DM_NO_LINK, 0, 0, 0);
        break;
    case PM_PS: {
        /* From the cursor's machine and slot on; a machine with nothing
         * more (or down) gives way to the next. */
        static uint8_t entries[DM_MSG_MAX];
        int64_t machine = q->arg[0] >> 16, slot = q->arg[0] & 0xffff;
        for (; machine < PM_MAX_MACHINES; machine++, slot = 0) {
            if (control[machine] < 0)
                continue;
            status = kernel_request_on((uint32_t)machine, KOP_PS, 0, slot, 0, 0, 0, DM_NO_LINK, entries,
                                       sizeof entries, &value);
            if (status >= 0 && value > 0)
                break;
        }
        if (machine == PM_MAX_MACHINES)
            status = 0, value = 0;
        if (status >= 0 && reply >= 0) {
            sv_reply(reply, 0, (int64_t)value, entries, (uint32_t)(value * sizeof(struct dm_kproc)), DM_NO_LINK);
            return;
        }
        break;
    }
    case PM_NETSTAT: {
        static uint8_t peers[DM_MSG_MAX];
        status = q->arg[0] < 0 || q->arg[0] >= PM_MAX_MACHINES
                     ? E_NODE
                     : kernel_request_on((uint32_t)q->arg[0], KOP_NETSTAT, 0, 0, 0, 0, 0, DM_NO_LINK, peers,
                                         sizeof peers, &value);
        if (status >= 0 && reply >= 0) {
            sv_reply(reply, 0, (int64_t)value, peers, (uint32_t)(value * sizeof(struct dm_kpeer)), DM_NO_LINK);
            return;
        }
        break;
    }
    case PM_SBRK:
        status = kernel_request(KOP_GROW, caller, q->arg[0], 0, 0, DM_NO_LINK, 0, 0, &value);
        break;
    case PM_HALT:
        flush_file_system();
        halt_other_machines((int)q->arg[0]);
        kernel_request(KOP_HALT, 0, q->arg[0], 0, 0, DM_NO_LINK, 0, 0, 0);
        status = E_STATE;   /* only reached if the kernel refused */
        break;
    case PM_READY:
        if ((r = find_record(caller)))
            r->ready = 1;
        break;
    case PM_SERVE:
        if (info->link < 0 || strnlen(data, data_len) == data_len) {
            status = E_INVAL;
        } else if (strcmp(data, "switchboard") == 0 && switchboard_slot < 0) {
            switchboard_slot = info->link;
        } else if (strcmp(data, "console") == 0 && console_slot < 0) {
            console_slot = info->link;
        } else {
            status = E_INVAL;
            dm_destroylink(info->link);
        }
        break;
    default:
        status = E_NOSYS;
    }
    if (reply >= 0)
        sv_reply(reply, status, (int64_t)value, 0, 0, DM_NO_LINK);
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
 * the start-up table places a server. */
#define MACHINE_WAIT_NS 30000000000ull

/* Serve what comes until machine `machine` is up (its kernel's
 * process-control link has come); returns whether it came in time. */
static int wait_for_machine(uint32_t machine)
{
    uint64_t give_up = dm_clock_ns() + MACHINE_WAIT_NS;
    while (control[machine] < 0 && dm_clock_ns() < give_up) {
        struct dm_msg_info info;
        long n;
        while (control[machine] < 0 && (n = dm_areceive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL)) >= 0)
            serve_message(&info, n);
        if (control[machine] < 0)
            timer_sleep_ns(50000000);
    }
    return control[machine] >= 0;
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
        else if (info.link >= 0)
            dm_destroylink(info.link);
    } else if (info.channel == CHANNEL_REQUEST && (size_t)n >= sizeof(struct sv_request)) {
        handle_request(&info, (const struct sv_request *)buffer, (uint32_t)n);
    } else if (info.reply >= 0) {
        sv_reply(info.reply, E_BADREQ, 0, 0, 0, DM_NO_LINK);
    }
}

/* How the file system starts: its four processes, bottom up, each with
 * its one argument, on its machine. This table is the start-up setting for
 * them: the buffer manager's argument is its cache size in blocks. The
 * boot argument place.NAME=K (e.g. `make run PLACE="bm=1 ri=2"`) puts
 * process NAME on machine K; the disk interface stays with the disk, on
 * this machine. */
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
 * Returns whether it is ready. */
static int start_server(uint32_t machine, const char *name, const char *argument, long device_link, long *ready)
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
    long err = create_process(machine, name, DM_NO_LINK, args, (uint32_t)len, argc, 0, device_link, 3, &pid);
    if (err < 0) {
        printf("pm: cannot start %s: %s\n", name, dm_error_name(err));
        return 0;
    }
    struct record *r = find_record(pid);
    while (r && !r->ended && (ready ? *ready < 0 : !r->ready))
        serve_one();
    return r && !r->ended;
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

int main(int argc, char **argv)
{
    /* How many disks? Asked before any link of ours can take slot 6. */
    int disks = 0;
    for (long copy; (copy = dm_duplicatelink(BOOT_SLOT_DISK0 + disks)) >= 0; disks++)
        dm_destroylink(copy);
    reserve_own_slots();
    records[0].pid = dm_self();
    snprintf(records[0].name, sizeof records[0].name, "pm");
    for (int m = 0; m < PM_MAX_MACHINES; m++)
        control[m] = -1;
    control[dm_machine()] = BOOT_SLOT_PROCESS_CONTROL;
    notice_link = dm_createlink(CHANNEL_NOTICE, 0, 0, 0, 0);
    long notice = dm_duplicatelink(notice_link);
    kernel_request(KOP_NOTIFY, 0, 0, 0, 0, notice, 0, 0, 0);

    start_server(dm_machine(), "switchboard", 0, -1, &switchboard_slot);
    take_own_slot(SLOT_SWITCHBOARD, switchboard_slot);
    start_server(dm_machine(), "console", 0, BOOT_SLOT_CONSOLE, &console_slot);
    take_own_slot(SLOT_CONSOLE, console_slot);
    start_server(dm_machine(), "timer", 0, BOOT_SLOT_TIMER, 0);
    /* The file system's processes on disk 0, from the bottom up, each once
     * the one below it serves; the buffer manager ends at once if the disk
     * holds no file system. */
    read_placement(argc, argv);
    for (size_t i = 0; disks > 0 && i < FILE_SYSTEM_PROCESSES; i++) {
        const struct boot_server *f = &file_system[i];
        if (!start_server(f->machine, f->program, f->argument, f->takes_disk ? BOOT_SLOT_DISK0 : -1, 0))
            break;
    }
    for (int i = 1; i < disks; i++) {   /* the other disks: a disk interface each */
        char name[16];
        snprintf(name, sizeof name, "di%d", i);
        start_server(dm_machine(), "di", name, BOOT_SLOT_DISK0 + i, 0);
    }
    /* The shell, like every program that is not needed to start the file
     * system, comes from the file system. */
    static const char shell_args[] = "shell";
    dm_pid shell;
    long image_link = DM_NO_LINK;
    void *image = 0;
    long err = read_program("shell", &image_link, &image);
    if (err == 0)
        err = create_process(dm_machine(), "shell", image_link, shell_args, sizeof shell_args, 1, 0, -1, 0, &shell);
    free(image);
    if (err < 0) {   /* nothing can be done without it: say so and power off */
        printf("pm: cannot start the shell (/bin/shell%s): %s; powering off\n",
               disks == 0 ? ", and there is no disk" : "", dm_error_name(err));
        flush_file_system();
        kernel_request(KOP_HALT, 0, 1, 0, 0, DM_NO_LINK, 0, 0, 0);
    }
    for (;;)
        serve_one();
}
