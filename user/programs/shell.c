/*
 * shell.c — the command interpreter on the console.
 *
 *   run PROG ARGS [&]   run a program (in the background with &)
 *   run @K PROG ARGS    the same on machine K
 *   PROG ARGS [&]       the same, for a program that is not a command
 *   ps                  every process: id, name, state, the machine it runs
 *                       on, CPU, links, memory, the machine that created it
 *   netstat             what each machine's transport did with each other
 *   kill PID            end a process (PID as ps shows it: machine.slot.gen)
 *   stop PID, resume PID
 *   migrate PID @K      move a running process to machine K (DEMOS/MP's
 *                       migration: docs/migration.md)
 *   meter [OPTIONS] run [@K] PROG ARGS [&]
 *                       run a program metered (DPM): -F FILTER (default
 *                       "trace"), -e EVENTS (names, comma-separated; all by
 *                       default), -n (its children unmetered), -l (lossy),
 *                       -a MS (the batches' maximum age)
 *   meter attach [OPTIONS] PID..., meter flags PID EVENTS, meter off PID
 *   meter system [OPTIONS] MACHINES   meter every process created there
 *                       (MACHINES: 0,2,3 or all; -e none stops it)
 *   filter start [-l|-n] [@K] NAME DESCRIPTION RULES [LOG]
 *                       a filter server (DESCRIPTION, RULES: files, or -;
 *                       -n: no log, it only forwards what it selects)
 *   filter stats NAME, filter stop NAME
 *   echo WORDS          print the words
 *   export NAME=VALUE...  set environment variables for every later program
 *   export              list the environment
 *   unset NAME...       remove environment variables
 *   help                this list
 *   halt                power the system off
 *
 * Words are separated by blanks and quoted as in a POSIX shell: '...'
 * keeps every character as it is, "..." too except that \" and \\ stand
 * for " and \, and outside quotes a backslash keeps the next character as
 * it is; `>`, `>>` and `&` are operators wherever they stand unquoted
 * (`|` is refused: there are no pipes). A line is at most LINE_LIMIT
 * bytes; a longer one is refused, not run.
 *
 * `> FILE` (or `>> FILE`, to append) after a command sends its standard
 * output to FILE. A program is told so by an environment string
 * (DM_STDOUT=FILE or DM_STDOUT_APPEND=FILE) that its start-up code obeys
 * (user/lib/syscalls.c); the shell's own commands write to FILE themselves.
 * Programs (ls, cat, cp, mv, rm, mkdir, fsstat, sync, ...) are /bin/NAME.
 *
 * The environment: every program gets the shell's (HOME=/ and PATH=/bin
 * at start, then what export and unset make of it), then the NAME=VALUE
 * words before its name (`NAME=VALUE run PROG`, for that program only),
 * then DM_STDOUT for a redirection. A line of NAME=VALUE words alone is
 * an export. PATH says where programs are; the process manager looks in
 * /bin whatever it says.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "record.h"

#define MAX_ARGS 32
#define MAX_ENV  64

extern char **environ;

static const char *state_name(uint32_t s)
{
    static const char *names[] = {
        "free", "created", "ready", "receiving", "calling", "stopped", "kernel", "sending", "moving", "arriving",
    };
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static void cmd_ps(FILE *out)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    char id[24];
    fprintf(out, "%-10s %-14s %-10s %4s %14s %5s %8s %4s\n", "PID", "NAME", "STATE", "NODE", "CPU(instr)", "LINKS",
           "MEM(KiB)", "HOME");
    int64_t cursor = 0;
    long n;
    while ((n = pm_ps_page(&cursor, entries, sizeof entries)) > 0) {
        for (long i = 0; i < n; i++) {
            struct dm_kproc *e = &entries[i];
            fprintf(out, "%-10s %-14s %-10s %4u %14llu %5u %8llu %4u\n", dm_pid_string(e->pid, id), e->name,
                   state_name(e->state), e->machine, (unsigned long long)e->proctime, e->links,
                   (unsigned long long)(e->memory / 1024), PID_MACHINE(e->pid));
        }
    }
    if (n < 0)
        printf("ps: %s\n", dm_error_text(n));
}

/* netstat: for each machine up, a line per other machine it knows. */
static void cmd_netstat(FILE *out)
{
    static struct dm_kpeer peers[DM_MSG_MAX / sizeof(struct dm_kpeer)];
    fprintf(out, "%-4s %-4s %-5s %8s %8s %6s %8s %7s %8s %6s %6s %5s %6s %8s\n", "FROM", "TO", "STATE", "SENT",
            "RECEIVED", "FAILED", "FRAMES", "RESENT", "TIMEOUTS", "DUPS", "OOO", "STALE", "FORGED", "REPLAYED");
    uint32_t nodes = ((const struct dm_info *)DM_INFO_PAGE)->nodes;
    for (uint32_t k = 0; k < nodes; k++) {
        struct sv_call c = { .op = PM_NETSTAT, .arg = { k }, .pass = DM_NO_LINK, .reply_data = peers,
                             .reply_cap = sizeof peers };
        long err = sv_call(SLOT_PM, &c);
        if (err < 0) {
            fprintf(out, "%-4u %s\n", k, err == E_NODE ? "(not up)" : dm_error_text(err));
            continue;
        }
        for (int64_t i = 0; i < c.value; i++) {
            struct dm_kpeer *p = &peers[i];
            fprintf(out, "%-4u %-4u %-5s %8u %8u %6u %8u %7u %8u %6u %6u %5u %6u %8u\n", k, p->machine,
                    p->state == DM_PEER_UP ? "up" : "down", p->messages_sent, p->messages_delivered,
                    p->messages_failed, p->frames_sent, p->retransmissions, p->timeouts, p->duplicates_dropped,
                    p->out_of_order_dropped, p->stale_dropped, p->forged, p->replayed);
        }
    }
}

/* How a process ended, in words. */
static void report_status(const char *name, dm_pid pid, int64_t status)
{
    char id[24];
    if (status == DM_EXIT_KILLED)
        printf("[%s] %s: killed\n", dm_pid_string(pid, id), name);
    else if (status == DM_EXIT_FAULT)
        printf("[%s] %s: ended by a fault\n", dm_pid_string(pid, id), name);
    else if (status == DM_EXIT_LOST)
        printf("[%s] %s: lost with the machine it was moving to\n", dm_pid_string(pid, id), name);
    else if (status != 0)
        printf("[%s] %s: exit status %lld\n", dm_pid_string(pid, id), name, (long long)status);
}

/* The machine K of a word "@K"; -1 (with a message naming `command`) if
 * it is not one, or not a machine of this cluster. */
static int parse_machine(const char *command, const char *word)
{
    char *end;
    long k = strtol(word + 1, &end, 10);
    if (word[0] != '@' || end == word + 1 || *end || k < 0 || k >= PM_MAX_MACHINES) {
        printf("%s: %s: not a machine number (@0, @1, ...)\n", command, word);
        return -1;
    }
    if (k >= (long)dm_nodes()) {
        printf("%s: %s: the cluster has no machine %ld (its machines are 0 to %u)\n", command, word, k,
               dm_nodes() - 1);
        return -1;
    }
    return (int)k;
}

static void remember_job(dm_pid pid, const char *name, uint32_t machine);

static void cmd_run(int argc, char **argv, int background, char **envp, const struct pm_meter *metering)
{
    char id[24];
    int machine = -1;
    if (argc >= 1 && argv[0][0] == '@') {
        if ((machine = parse_machine("run", argv[0])) < 0)
            return;
        argc--, argv++;
    }
    if (argc < 1) {
        printf("run: which program?\n");
        return;
    }
    long pid = metering ? pm_meter_run(metering, machine, argv[0], argc, argv, envp)
                        : pm_run_on(machine, argv[0], argc, argv, envp);
    if (pid < 0) {
        if (metering && pid == E_NOTFOUND) {
            printf("run: %s: no such program, or no filter called %s\n", argv[0], metering->filter);
            return;
        }
        printf("run: %s: %s\n", argv[0],
               pid == E_NOTFOUND ? "no such program"
               : pid == E_BADREQ ? "not a program (a RISC-V ELF executable)"
               : pid == E_NODE   ? "that machine is not up"
                                 : dm_error_text(pid));
        return;
    }
    if (background) {
        printf("[%s] %s\n", dm_pid_string((dm_pid)pid, id), argv[0]);
        remember_job((dm_pid)pid, argv[0], machine < 0 ? dm_machine() : (uint32_t)machine);
        return;
    }
    int64_t status;
    long err = pm_wait((dm_pid)pid, &status);
    if (err == E_NODE)
        printf("[%s] %s: machine %u went down\n", dm_pid_string((dm_pid)pid, id), argv[0], PID_MACHINE((dm_pid)pid));
    else if (err < 0)
        printf("run: waiting for %s: %s\n", argv[0], dm_error_text(err));
    else
        report_status(argv[0], (dm_pid)pid, status);
}

/* ---- background jobs on other machines ----
 * A machine that goes down takes its processes with it, and no exit notice
 * comes from it: the shell keeps its background jobs on other machines and,
 * before each prompt, says which are gone with their machine. */

#define MAX_JOBS 64
static struct { dm_pid pid; uint32_t machine; char name[24]; } jobs[MAX_JOBS];   /* pid 0: a free entry */

/* Keep background job pid, which runs on `machine`, if that is another
 * machine (and there is room); a job kept already is on `machine` now
 * (moved there by `migrate`). */
static void remember_job(dm_pid pid, const char *name, uint32_t machine)
{
    int free = -1;
    for (int i = 0; i < MAX_JOBS; i++) {
        if (jobs[i].pid == pid) {
            jobs[i].machine = machine;
            return;
        }
        if (!jobs[i].pid && free < 0)
            free = i;
    }
    if (machine == dm_machine() || free < 0)
        return;
    jobs[free].pid = pid;
    jobs[free].machine = machine;
    snprintf(jobs[free].name, sizeof jobs[free].name, "%s", name);
}

/* Whether machine 0's kernel (whose transport watches every other machine)
 * has found `machine` down. */
static int machine_down(uint32_t machine)
{
    static struct dm_kpeer peers[DM_MSG_MAX / sizeof(struct dm_kpeer)];
    struct sv_call c = { .op = PM_NETSTAT, .arg = { 0 }, .pass = DM_NO_LINK, .reply_data = peers,
                         .reply_cap = sizeof peers };
    if (sv_call(SLOT_PM, &c) < 0)
        return 0;
    for (int64_t i = 0; i < c.value; i++)
        if (peers[i].machine == machine)
            return peers[i].state != DM_PEER_UP;
    return 0;
}

/* Process pid runs on `machine` now (`migrate`): if it is a job of the
 * shell's, it is watched there (a job of this machine is kept from now on,
 * under the name ps gives it). */
static void job_moved(dm_pid pid, uint32_t machine)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    for (int i = 0; i < MAX_JOBS; i++) {
        if (jobs[i].pid == pid) {
            jobs[i].machine = machine;
            return;
        }
    }
    int64_t cursor = PM_PS_CURSOR(machine, 0);
    long n;
    while ((n = pm_ps_page(&cursor, entries, sizeof entries)) > 0 && entries[0].machine == machine)
        for (long e = 0; e < n; e++)
            if (entries[e].pid == pid)
                remember_job(pid, entries[e].name, machine);
}

/* The jobs of `machine` that no longer run are forgotten; if the machine
 * has gone down, each is said so first. Asking for its processes is what
 * makes its silence noticed. */
static void check_machine_jobs(uint32_t machine)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    int running[MAX_JOBS] = { 0 }, listed = 0;
    int64_t cursor = PM_PS_CURSOR(machine, 0);
    long n;
    while ((n = pm_ps_page(&cursor, entries, sizeof entries)) > 0 && entries[0].machine == machine) {
        listed = 1;     /* a page holds the processes of one machine */
        for (long e = 0; e < n; e++)
            for (int i = 0; i < MAX_JOBS; i++)
                running[i] |= jobs[i].pid == entries[e].pid;
    }
    int down = !listed && machine_down(machine);
    char id[24];
    for (int i = 0; i < MAX_JOBS; i++) {
        if (!jobs[i].pid || jobs[i].machine != machine || running[i])
            continue;
        if (down)
            printf("[%s] %s: machine %u went down\n", dm_pid_string(jobs[i].pid, id), jobs[i].name, machine);
        jobs[i].pid = 0;
    }
}

/* Before a prompt: every machine that has background jobs of the shell. */
static void check_jobs(void)
{
    for (int i = 0; i < MAX_JOBS; i++)
        if (jobs[i].pid && jobs[i].machine != dm_machine())
            check_machine_jobs(jobs[i].machine);
}

static void cmd_signal(const char *what, int argc, char **argv, long (*action)(dm_pid))
{
    dm_pid pid;
    if (argc != 2 || dm_pid_parse(argv[1], &pid) < 0) {
        printf("%s: usage: %s PID (as ps shows it, e.g. 0.7.1)\n", what, what);
        return;
    }
    long err = action(pid);
    if (err < 0)
        printf("%s: %s: %s\n", what, argv[1],
               err == E_NOTFOUND ? "no such process"
               : err == E_SYSTEM ? "a system process: the system cannot go on without it"
                                 : dm_error_text(err));
}

/* migrate PID @K: move a running process to machine K. */
static void cmd_migrate(int argc, char **argv)
{
    dm_pid pid;
    if (argc != 3 || dm_pid_parse(argv[1], &pid) < 0 || argv[2][0] != '@') {
        printf("migrate: usage: migrate PID @K (PID as ps shows it, e.g. 1.7.1)\n");
        return;
    }
    int machine = parse_machine("migrate", argv[2]);
    if (machine < 0)
        return;
    long err = pm_migrate(pid, machine);
    if (err >= 0) {
        job_moved(pid, (uint32_t)machine);
        return;
    }
    printf("migrate: %s: %s\n", argv[1],
           err == E_NOTFOUND ? "no such process"
           : err == E_SYSTEM ? "a system process: it stays where it is"
           : err == E_DEVICE ? "it holds a device link: it stays with its device"
           : err == E_INVAL  ? "it runs there already"
           : err == E_STATE  ? "it did not come to rest (its SEND, MOVEDATA or metering did not end): it stays"
           : err == E_NODE   ? "that machine is not up, or went down during the move"
                             : dm_error_text(err));
}

/* ---- metering ---- */

static const struct { const char *name; uint32_t type; } event_names[] = {
#define EVENT_NAME(name, number) { #name, number },
    METER_TYPES(EVENT_NAME)
#undef EVENT_NAME
};

/* Selection flags from "SEND,RECEIVE,..." (any case), "all" or "none";
 * -1 (with a message) for a name that is no event. */
static int64_t parse_events(const char *list)
{
    if (strcasecmp(list, "all") == 0)
        return METER_ALL_FLAGS;
    if (strcasecmp(list, "none") == 0)
        return 0;
    uint32_t flags = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save, *name = strtok_r(copy, ",", &save); name; name = strtok_r(0, ",", &save)) {
        size_t i = 0;
        while (i < sizeof event_names / sizeof event_names[0] && strcasecmp(event_names[i].name, name) != 0)
            i++;
        if (i == sizeof event_names / sizeof event_names[0]) {
            printf("meter: %s: no such event (SEND, RECEIVECALL, RECEIVE, MESSAGEQUEUED, CREATELINK, "
                   "DESTROYLINK, MOVEDATA, CREATEPROCESS, STARTPROCESS, STOPPROCESS, DESTROYPROCESS, MIGRATE, "
                   "all)\n", name);
            return -1;
        }
        flags |= METER_FLAG(event_names[i].type);
    }
    return flags;
}

/* The options before a meter subcommand's operands: -F FILTER, -e EVENTS,
 * -n, -l, -a MS. Returns how many words they took, or -1. */
static int parse_meter_options(int argc, char **argv, struct pm_meter *m)
{
    *m = (struct pm_meter){ .flags = METER_ALL_FLAGS };
    snprintf(m->filter, sizeof m->filter, "trace");
    int i = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *o = argv[i];
        if (strcmp(o, "-n") == 0) {
            m->options |= PM_METER_NO_CHILDREN;
        } else if (strcmp(o, "-l") == 0) {
            m->options |= PM_METER_LOSSY;
        } else if ((strcmp(o, "-F") == 0 || strcmp(o, "-e") == 0 || strcmp(o, "-a") == 0) && i + 1 < argc) {
            const char *v = argv[++i];
            if (o[1] == 'F') {
                if (strlen(v) > FILTER_NAME_MAX) {
                    printf("meter: %s: name too long (a filter's name has at most %zu characters)\n", v,
                           FILTER_NAME_MAX);
                    return -1;
                }
                snprintf(m->filter, sizeof m->filter, "%s", v);
            } else if (o[1] == 'e') {
                int64_t flags = parse_events(v);
                if (flags < 0)
                    return -1;
                m->flags = (uint32_t)flags;
            } else {
                char *end;
                long ms = strtol(v, &end, 10);
                if (end == v || *end || ms <= 0 || ms > 3600000) {
                    printf("meter: -a %s: a maximum age in ms (1 to 3600000)\n", v);
                    return -1;
                }
                m->max_age_ms = (uint32_t)ms;
            }
        } else {
            printf("meter: %s: no such option (-F FILTER, -e EVENTS, -n, -l, -a MS)\n", o);
            return -1;
        }
    }
    return i;
}

static const char *meter_error(long err)
{
    return err == E_NOTFOUND ? "no such process or filter"
         : err == E_RIGHTS   ? "not allowed: only whoever started its metering changes it"
         : err == E_SYSTEM   ? "a system process or a filter: not metered on request"
         : err == E_STATE    ? "not metered"
         : err == E_INVAL    ? "bad flags"
                             : dm_error_text(err);
}

static void cmd_meter(int argc, char **argv, int background, char **envp)
{
    const char *usage = "meter: usage: meter [-F FILTER] [-e EVENTS] [-n] [-l] [-a MS] run [@K] PROG ARGS\n"
                        "       meter attach [-F FILTER] [-e EVENTS] [-n] [-l] [-a MS] PID...\n"
                        "       meter flags PID EVENTS; meter off PID\n"
                        "       meter system [-F FILTER] [-e EVENTS] MACHINES (0,1,... or all)\n";
    struct pm_meter m;
    int taken = parse_meter_options(argc - 1, argv + 1, &m);
    if (taken < 0)
        return;
    argc -= 1 + taken;
    argv += 1 + taken;
    const char *sub = argc > 0 ? argv[0] : "";
    if (strcmp(sub, "run") == 0 && argc >= 2) {
        cmd_run(argc - 1, argv + 1, background, envp, &m);
    } else if (strcmp(sub, "attach") == 0 && argc >= 2) {
        /* options may also follow the word (then they are the ones that count) */
        int more = argv[1][0] == '-' ? parse_meter_options(argc - 1, argv + 1, &m) : 0;
        for (int i = 1 + (more > 0 ? more : 0); more >= 0 && i < argc; i++) {
            dm_pid pid;
            if (dm_pid_parse(argv[i], &pid) < 0) {
                printf("meter: %s: not a process id (as ps shows it, e.g. 0.7.1)\n", argv[i]);
                continue;
            }
            long err = pm_meter(pid, &m), filter = err == E_NOTFOUND ? filter_lookup(m.filter) : -1;
            if (filter >= 0)
                dm_destroylink(filter);
            if (err == E_NOTFOUND && filter < 0)
                printf("meter: %s: no filter called %s\n", argv[i], m.filter);
            else if (err < 0)
                printf("meter: %s: %s\n", argv[i], meter_error(err));
        }
    } else if ((strcmp(sub, "flags") == 0 && argc == 3) || (strcmp(sub, "off") == 0 && argc == 2)) {
        dm_pid pid;
        int64_t flags = sub[0] == 'o' ? 0 : parse_events(argv[2]);
        if (dm_pid_parse(argv[1], &pid) < 0) {
            printf("meter: %s: not a process id (as ps shows it, e.g. 0.7.1)\n", argv[1]);
            return;
        }
        if (flags < 0)
            return;
        m = (struct pm_meter){ .flags = (uint32_t)flags };   /* no filter: the flags change */
        long err = pm_meter(pid, &m);
        if (err < 0)
            printf("meter: %s: %s\n", argv[1], meter_error(err));
    } else if (strcmp(sub, "system") == 0 && argc == 2) {
        char list[128];
        snprintf(list, sizeof list, "%s", argv[1]);
        int all = strcmp(list, "all") == 0;
        for (int k = 0; all && k < (int)dm_nodes(); k++) {
            long err = pm_meter_system(k, &m);
            if (err < 0)
                printf("meter: machine %d: %s\n", k, meter_error(err));
        }
        for (char *save, *w = all ? 0 : strtok_r(list, ",", &save); w; w = strtok_r(0, ",", &save)) {
            char *end;
            long k = strtol(w, &end, 10);
            long err = end == w || *end || k < 0 || k >= PM_MAX_MACHINES ? E_INVAL : pm_meter_system((int)k, &m);
            if (err < 0)
                printf("meter: machine %s: %s\n", w, meter_error(err));
        }
    } else {
        printf("%s", usage);
    }
}

static void filter_start(int argc, char **argv);
static void filter_ask(const char *what, const char *name);

/* filter start: start a filter server; filter stats, filter stop: a filter
 * server's statistics (FILTER_STATS), or stop it (FILTER_STOP). */
static void cmd_filter(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "start") == 0) {
        filter_start(argc, argv);
        return;
    }
    if (argc != 3 || (strcmp(argv[1], "stats") != 0 && strcmp(argv[1], "stop") != 0)) {
        printf("filter: usage: filter start [-l|-n] [@K] NAME DESCRIPTION RULES [LOG]; filter stats NAME; "
               "filter stop NAME\n");
        return;
    }
    filter_ask(argv[1], argv[2]);
}

/* filter start [-l|-n] [@K] NAME DESCRIPTION RULES [LOG]: the process
 * manager starts it (PM_FILTER) and answers once it serves. */
static void filter_start(int argc, char **argv)
{
    int machine = -1;
    const char *option = 0;           /* -l (live) or -n (no log) */
    int first = 2;
    for (; first < argc && (argv[first][0] == '@' || strcmp(argv[first], "-l") == 0 ||
                            strcmp(argv[first], "-n") == 0); first++) {
        if (argv[first][0] == '-')
            option = argv[first];
        else if ((machine = parse_machine("filter", argv[first])) < 0)
            return;
    }
    if (argc - first < 3 || argc - first > 4 || (option && option[1] == 'n' && argc - first != 3)) {
        printf("filter: usage: filter start [-l|-n] [@K] NAME DESCRIPTION RULES [LOG] (-n: no LOG)\n");
        return;
    }
    if (strlen(argv[first]) > FILTER_NAME_MAX) {
        printf("filter: %s: name too long (a filter's name has at most %zu characters)\n", argv[first],
               FILTER_NAME_MAX);
        return;
    }
    long running = filter_lookup(argv[first]);
    if (running >= 0) {    /* (the filter checks too: two started at once cannot share the name) */
        dm_destroylink(running);
        printf("filter: %s: a filter named %s already runs\n", argv[first], argv[first]);
        return;
    }
    /* its argv: filter [-l|-n] NAME DESCRIPTION RULES [LOG] */
    char *filter_argv[7] = { "filter", (char *)option };
    int filter_argc = 1 + (option != 0);
    for (int i = first; i < argc; i++)
        filter_argv[filter_argc++] = argv[i];
    long pid = pm_filter_run(machine, filter_argc, filter_argv);
    char id[24];
    if (pid < 0)
        printf("filter: %s: %s\n", argv[first],
               pid == E_STATE  ? "that machine's trace disk is in use by another filter"
               : pid == E_DEAD ? "it refused to start (its message above says why)"
                               : dm_error_text(pid));
    else
        printf("[%s] filter %s\n", dm_pid_string((dm_pid)pid, id), argv[first]);
}

/* ", N summaries forwarded, N lost" for a filter that forwarded (FILTER_FORWARD), else "". */
static const char *forwarded(const struct filter_stats *st)
{
    static char text[80];
    text[0] = 0;
    if (st->summaries || st->summaries_lost)
        snprintf(text, sizeof text, ", %llu summaries forwarded, %llu lost", (unsigned long long)st->summaries,
                 (unsigned long long)st->summaries_lost);
    return text;
}

#define FILTER_BUSY_RETRY_NS 10000000ull   /* a filter whose queue is full of batches is asked again */
#define FILTER_BUSY_TRIES    500

/* filter stats NAME, filter stop NAME (`what`). Stopping a filter first
 * ends the metering into it and has every kernel send it what it has
 * (pm_meter_flush), so that it ends with every record made for it. */
static void filter_ask(const char *what, const char *name)
{
    long link = filter_lookup(name);
    if (link < 0) {
        printf("filter: %s: no such filter\n", name);
        return;
    }
    int stop = strcmp(what, "stop") == 0;
    if (stop)
        pm_meter_flush(name);
    struct filter_stats st = { 0 };
    struct sv_call c = { .op = stop ? FILTER_STOP : FILTER_STATS,
                         .pass = DM_NO_LINK, .reply_data = &st, .reply_cap = sizeof st };
    long err = sv_call(link, &c);
    for (int tries = 1; err == E_QFULL && tries < FILTER_BUSY_TRIES; tries++) {
        timer_sleep_ns(FILTER_BUSY_RETRY_NS);
        err = sv_call(link, &c);
    }
    dm_destroylink(link);
    if (err == 0 && c.op == FILTER_STOP) {
        /* It answers, then ends: wait for that, so that its trace disk is
         * free for the next `filter start` on its machine. */
        int64_t status;
        pm_wait((dm_pid)c.replier, &status);
    }
    if (err < 0)
        printf("filter: %s: %s\n", name, dm_error_text(err));
    else if (c.op == FILTER_STATS)
        printf("filter %s: %llu batches, %llu records received, %llu kept, %llu dropped by the rules, "
               "%llu lost, %llu refused, %llu streams, %llu log blocks%s\n",
               name, (unsigned long long)st.batches, (unsigned long long)st.received,
               (unsigned long long)st.kept, (unsigned long long)st.dropped, (unsigned long long)st.lost,
               (unsigned long long)st.refused, (unsigned long long)st.streams, (unsigned long long)st.log_blocks,
               forwarded(&st));
}

static void cmd_help(FILE *out)
{
    fprintf(out, "run PROG ARGS [&]  run a program (background with &); 'PROG ARGS' works too\n"
                 "run @K PROG ARGS   run it on machine K\n"
                 "CMD ... > FILE     standard output to FILE (>> FILE appends)\n"
                 "'a b' \"a b\" a\\ b   one word: quotes and \\ as in a POSIX shell\n"
                 "ps                 list processes\n"
                 "netstat            what each machine's transport did with each other machine\n"
                 "kill PID           end a process; stop PID, resume PID suspend and continue it\n"
                 "migrate PID @K     move a running process to machine K\n"
                 "meter [-F FILTER] [-e EVENTS] [-n] [-l] [-a MS] run [@K] PROG ARGS\n"
                 "                   run it metered (DPM); also: meter attach PID..., meter flags PID EVENTS,\n"
                 "                   meter off PID, meter system MACHINES\n"
                 "filter start [-l|-n] [@K] NAME DESCRIPTION RULES [LOG]; filter stats NAME; filter stop NAME\n"
                 "balance start [@K] [-F FILTER] ...; balance; balance stop\n"
                 "                   a scheduler that moves the processes metered into its filter\n"
                 "echo WORDS         print the words\n"
                 "export NAME=VALUE  set an environment variable for later programs; export lists them;\n"
                 "                   unset NAME removes one; NAME=VALUE PROG ARGS sets it for PROG only\n"
                 "help               this list\n"
                 "halt               power the system off\n"
                 "programs in /bin:  ls [-l] [PATH], cat FILE..., cp FROM TO, mv FROM TO, rm PATH...,\n"
                 "                   mkdir PATH..., fsstat, sync, hello, ping/pong, tests\n");
}

/* Whether word is NAME=VALUE, NAME a letter or '_' then letters, digits, '_'. */
static int is_assignment(const char *word)
{
    if (!(isalpha((unsigned char)word[0]) || word[0] == '_'))
        return 0;
    size_t n = 1;
    while (isalnum((unsigned char)word[n]) || word[n] == '_')
        n++;
    return word[n] == '=';
}

/* export NAME=VALUE...: the count words into the shell's environment;
 * with none, list it. */
static void cmd_export(int count, char **words, FILE *out)
{
    if (count == 0)
        for (char **e = environ; *e; e++)
            fprintf(out, "%s\n", *e);
    for (int i = 0; i < count; i++) {
        if (!is_assignment(words[i])) {
            printf("export: %s: not NAME=VALUE\n", words[i]);
            continue;
        }
        char *equals = strchr(words[i], '=');
        *equals = 0;
        if (setenv(words[i], equals + 1, 1) != 0)
            printf("export: %s: %s\n", words[i], strerror(errno));
    }
}

static void cmd_unset(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (unsetenv(argv[i]) != 0)
            printf("unset: %s: %s\n", argv[i], strerror(errno));
}

/* Put string (NAME=VALUE) into envp, which has *count strings, in place of
 * one of the same NAME. Returns 0, or -1 (with a message) when full. */
static int add_env(char **envp, int *count, char *string)
{
    size_t name_len = strcspn(string, "=") + 1;
    for (int i = 0; i < *count; i++) {
        if (strncmp(envp[i], string, name_len) == 0) {
            envp[i] = string;
            return 0;
        }
    }
    if (*count == MAX_ENV) {
        printf("shell: more than %d environment strings\n", MAX_ENV);
        return -1;
    }
    envp[(*count)++] = string;
    return 0;
}

/* The longest command line the shell takes, in bytes (without its newline). */
#define LINE_LIMIT 1023

static long read_line(char *line, size_t size);
static void run_line(const char *line);
static int make_environment(char **envp, char **argv, int assignments, const char *out_path, int append);
static void run_command(int argc, char **argv, FILE *out, int background, char **envp);

/* Read a line, run it, and again, until the end of the input. */
int main(void)
{
    static char line[LINE_LIMIT + 2];    /* the line, its newline, the NUL */
    setenv("HOME", "/", 0);
    setenv("PATH", "/bin", 0);
    printf("DEMOS/MP shell. Type help for the commands.\n");
    for (;;) {
        check_jobs();
        printf("$ ");
        fflush(stdout);
        long len = read_line(line, sizeof line);
        if (len < 0) {
            printf("shell: end of input\n");
            return 0;
        }
        if (len > LINE_LIMIT)
            printf("shell: a line of %ld bytes is too long (the limit is %d bytes): not run\n", len, LINE_LIMIT);
        else
            run_line(line);
    }
}

/* Read one line into line (size bytes); returns its length without the
 * newline, or -1 at the end of the input. A line that does not fit is
 * read to its end and only counted. */
static long read_line(char *line, size_t size)
{
    if (!fgets(line, (int)size, stdin))
        return -1;
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\n')
        return (long)len - 1;
    if (len < size - 1)
        return (long)len;                /* the input's last line, without a newline */
    long total = (long)len;
    int c;
    while ((c = getchar()) != EOF && c != '\n')
        total++;
    return total;
}

/* A command line taken apart: its words, where its standard output goes,
 * and whether it runs in the background. */
struct command {
    int argc;
    char *argv[MAX_ARGS + 1];
    const char *out_path;       /* `> FILE` or `>> FILE`; 0: the console */
    int append;                 /* `>>` */
    int background;             /* a final `&` */
};

static int parse_line(const char *line, struct command *c, char *store);

/* One command line: its words, a trailing `&` (in the background) and a
 * redirection (`> FILE`: a built-in command writes there itself; a program
 * is told by DM_STDOUT or DM_STDOUT_APPEND in its environment). */
static void run_line(const char *line)
{
    static char store[LINE_LIMIT + 3];   /* the words: the line, its newline and two bytes (parse_line) */
    struct command c;
    if (parse_line(line, &c, store) <= 0)
        return;
    int assignments = 0;
    while (assignments < c.argc && is_assignment(c.argv[assignments]))
        assignments++;
    if (assignments == c.argc) {   /* NAME=VALUE ... alone */
        cmd_export(c.argc, c.argv, stdout);
        return;
    }
    char *envp[MAX_ENV + 1];
    if (make_environment(envp, c.argv, assignments, c.out_path, c.append) < 0)
        return;
    c.argc -= assignments;
    memmove(c.argv, c.argv + assignments, (size_t)(c.argc + 1) * sizeof c.argv[0]);
    const char *cmd = c.argv[0];
    int builtin = strcmp(cmd, "help") == 0 || strcmp(cmd, "echo") == 0 || strcmp(cmd, "ps") == 0 ||
                  strcmp(cmd, "netstat") == 0 || strcmp(cmd, "export") == 0;
    FILE *out = stdout;
    if (builtin && c.out_path && !(out = fopen(c.out_path, c.append ? "a" : "w"))) {
        printf("shell: %s: %s\n", c.out_path, strerror(errno));
        return;
    }
    run_command(c.argc, c.argv, out, c.background, envp);
    if (out != stdout && fclose(out) != 0)
        printf("shell: %s: %s\n", c.out_path, strerror(errno));
}

/* The tokens of a command line: words, and the operators `>`, `>>`, `&`. */
enum token { TOKEN_END, TOKEN_WORD, TOKEN_TO_FILE, TOKEN_APPEND, TOKEN_BACKGROUND, TOKEN_ERROR };

static enum token next_token(const char **line, char **store, char **word);

/* Take a command line apart into c; the words are written to store, which
 * needs the line's length plus two bytes (each word's NUL stands for the
 * blank or operator after it, or for the line's end). Returns the number
 * of words, or -1 after a message saying what is wrong. */
static int parse_line(const char *line, struct command *c, char *store)
{
    *c = (struct command){ 0 };
    for (;;) {
        char *word;
        enum token t = next_token(&line, &store, &word);
        if (t == TOKEN_ERROR)
            return -1;
        if (t == TOKEN_END)
            break;
        if (c->background) {
            printf("shell: & may only end a command\n");
            return -1;
        }
        if (t == TOKEN_WORD) {
            if (c->argc == MAX_ARGS) {
                printf("shell: more than %d words: not run\n", MAX_ARGS);
                return -1;
            }
            c->argv[c->argc++] = word;
        } else if (t == TOKEN_BACKGROUND) {
            c->background = 1;
        } else {
            enum token file = next_token(&line, &store, &word);
            if (file == TOKEN_ERROR)
                return -1;
            if (file != TOKEN_WORD || c->out_path) {
                printf("shell: %s\n", c->out_path ? "one > FILE only" : "> needs a file name");
                return -1;
            }
            c->out_path = word;
            c->append = t == TOKEN_APPEND;
        }
    }
    c->argv[c->argc] = 0;
    return c->argc;
}

/* The next token of the line at *line (which moves past it). A word is
 * copied to *store, unquoted, NUL-ended (*word: where; *store moves past
 * it). As in a POSIX shell: blanks separate words; `>`, `>>` and `&` are
 * operators wherever they stand; '...' keeps every character as it is;
 * "..." too, except that \" and \\ stand for " and \; outside quotes a
 * backslash keeps the next character as it is. `|` is refused (no pipes),
 * and so are a quote without its end and a backslash at the line's end
 * (TOKEN_ERROR, after a message). */
static enum token next_token(const char **line, char **store, char **word)
{
    const char *p = *line;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    enum token t = TOKEN_WORD;
    if (*p == 0) {
        t = TOKEN_END;
    } else if (*p == '&') {
        t = TOKEN_BACKGROUND;
        p++;
    } else if (*p == '>') {
        t = p[1] == '>' ? TOKEN_APPEND : TOKEN_TO_FILE;
        p += t == TOKEN_APPEND ? 2 : 1;
    } else if (*p == '|') {
        printf("shell: | (a pipe) is not supported; quote it to mean the character itself\n");
        return TOKEN_ERROR;
    }
    *line = p;
    if (t != TOKEN_WORD)
        return t;
    char *out = *store;
    *word = out;
    while (*p && !strchr(" \t\n&>|", *p)) {
        if (*p == '\\') {
            if (p[1] == 0 || p[1] == '\n') {
                printf("shell: a \\ ends the line (nothing to escape): not run\n");
                return TOKEN_ERROR;
            }
            *out++ = p[1];
            p += 2;
        } else if (*p == '\'' || *p == '"') {
            char quote = *p++;
            for (; *p && *p != quote; p++) {
                if (quote == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
                    p++;
                *out++ = *p;
            }
            if (!*p) {
                printf("shell: no closing %c in the line: not run\n", quote);
                return TOKEN_ERROR;
            }
            p++;
        } else {
            *out++ = *p++;
        }
    }
    *out++ = 0;
    *store = out;
    *line = p;
    return TOKEN_WORD;
}

/* A program's environment, in envp: the shell's, the line's NAME=VALUE
 * words (the first `assignments` of argv), and the redirection (`> FILE`
 * as DM_STDOUT or DM_STDOUT_APPEND). -1, said, when it has too many. */
static int make_environment(char **envp, char **argv, int assignments, const char *out_path, int append)
{
    static char redirection[LINE_LIMIT + 32];
    int envc = 0, too_many = 0;
    for (char **e = environ; *e && !too_many; e++)
        too_many = add_env(envp, &envc, *e);
    for (int i = 0; i < assignments && !too_many; i++)
        too_many = add_env(envp, &envc, argv[i]);
    if (out_path && !too_many) {
        snprintf(redirection, sizeof redirection, "%s=%s", append ? "DM_STDOUT_APPEND" : "DM_STDOUT", out_path);
        too_many = add_env(envp, &envc, redirection);
    }
    if (too_many)
        return -1;
    envp[envc] = 0;
    return 0;
}

/* A built-in command by its name, else a program (`run PROG` or `PROG`). */
static void run_command(int argc, char **argv, FILE *out, int background, char **envp)
{
    const char *cmd = argv[0];
    if (strcmp(cmd, "help") == 0)
        cmd_help(out);
    else if (strcmp(cmd, "echo") == 0) {
        for (int i = 1; i < argc; i++)
            fprintf(out, "%s%s", argv[i], i + 1 < argc ? " " : "");
        fprintf(out, "\n");
    } else if (strcmp(cmd, "ps") == 0)
        cmd_ps(out);
    else if (strcmp(cmd, "netstat") == 0)
        cmd_netstat(out);
    else if (strcmp(cmd, "export") == 0)
        cmd_export(argc - 1, argv + 1, out);
    else if (strcmp(cmd, "unset") == 0)
        cmd_unset(argc, argv);
    else if (strcmp(cmd, "kill") == 0)
        cmd_signal("kill", argc, argv, pm_kill);
    else if (strcmp(cmd, "stop") == 0)
        cmd_signal("stop", argc, argv, pm_stop);
    else if (strcmp(cmd, "resume") == 0)
        cmd_signal("resume", argc, argv, pm_resume);
    else if (strcmp(cmd, "migrate") == 0)
        cmd_migrate(argc, argv);
    else if (strcmp(cmd, "halt") == 0) {
        fflush(stdout);
        long err = pm_halt(0);
        printf("halt: %s\n", dm_error_text(err));
    } else if (strcmp(cmd, "meter") == 0)
        cmd_meter(argc, argv, background, envp);
    else if (strcmp(cmd, "filter") == 0)
        cmd_filter(argc, argv);
    else if (strcmp(cmd, "run") == 0)
        cmd_run(argc - 1, argv + 1, background, envp, 0);
    else
        cmd_run(argc, argv, background, envp, 0);
}
