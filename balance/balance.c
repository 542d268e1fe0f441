/*
 * balance.c — a feedback scheduler, as DPM describes one (Miller, "DPM: A
 * Measurement System for Distributed Programs", 1988, §V.B and Fig. 4;
 * docs/migration.md, "The scheduler"): a process, not the kernel, fed by
 * the meter. A filter forwards it summaries of the metered processes'
 * messages (FILTER_FORWARD, meter/summary.h); it samples where every
 * process runs and whether it wants the CPU (the process list); its rule
 * (policy.h) says which moves save time; it asks the process manager to
 * make them (PM_MIGRATE, as the shell's `migrate` does), and says on the
 * console what it moved and why.
 *
 *     balance start [@K] [-F FILTER] [-i MS] [-t PERCENT] [-r MS] [-m MOVES]
 *     balance [status]
 *     balance stop
 *
 * start    starts the scheduler on machine K (the caller's by default) and
 *          returns once it serves. It first measures what a message between
 *          machines costs more than one within a machine (CALL round trips
 *          to an echo of its own on its machine and on another). With -F it
 *          reads the summaries of filter FILTER (a filter that logs, say,
 *          for the analyzer); else it starts a filter called "balance" that
 *          keeps no log (filter -n). The processes metered into that filter
 *          are the ones it may move: `meter -F balance run ...`.
 *          -i MS      the interval of the summaries and of the decisions (1000)
 *          -t PERCENT a move must save at least this share of a second (2)
 *          -r MS      a process it moved stays at least this long where it went
 *                     (5000)
 *          -m MOVES   moves in one interval, at most (4)
 * status   what it knows: the processes, what they want, the machines, its
 *          last moves with the time each was decided (also `balance` alone).
 * stop     the filter stops forwarding to it (its own filter stops, and the
 *          metering into it ends), it says what it did, and ends.
 *
 * The scheduler itself runs as `balance serve OPTIONS`, registered at the
 * switchboard as "balance" (one at a time); `balance echo NAME` is the echo
 * it measures with. Exit status: 0; 1 when the request failed (said); 2 for
 * bad arguments.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "policy.h"
#include "summary.h"

#define NAME               "balance"   /* at the switchboard, and the name of its own filter */
#define CHANNEL_REQUEST    0           /* BALANCE_STATUS, BALANCE_STOP */
#define CHANNEL_SUMMARY    1           /* the filter's summaries */
#define CHANNEL_SAMPLE     2           /* the timer's alarms: time to sample the process list */
#define SAMPLES            4           /* process-list samples per interval */
#define SAMPLE_WEIGHT      0.25        /* a sample's weight in a process's demand */
#define RATE_FLOOR         0.5         /* message rates below this (a second) are forgotten */
#define GROUP_RATE         10.0        /* processes exchanging this many messages a second move together */
#define MISSED_SAMPLES     3           /* a process absent from this many samples in a row is forgotten */
#define ECHO_WARMUP        20
#define ECHO_ROUNDS        200
#define START_WAIT_NS      30000000000ull
#define TEXT_MAX           3900

enum balance_op {
    BALANCE_STATUS = 1,   /* the answer's data: what `balance status` prints */
    BALANCE_STOP,         /* the same, then it ends */
};

struct options {
    int      machine;                      /* -1: the caller's */
    char     filter[FILTER_NAME_MAX + 1];  /* empty: its own */
    uint32_t interval_ms;
    uint32_t threshold_pct;
    uint32_t residence_ms;
    uint32_t max_moves;
};

static int usage(void)
{
    printf("usage: balance start [@K] [-F FILTER] [-i MS] [-t PERCENT] [-r MS] [-m MOVES]; balance [status]; "
           "balance stop\n");
    return 2;
}

/* A whole number from `word` in [low, high] into *value; -1 (said) if not. */
static int number(const char *option, const char *word, uint32_t low, uint32_t high, uint32_t *value)
{
    char *end;
    long v = strtol(word, &end, 10);
    if (end == word || *end || v < (long)low || v > (long)high) {
        printf("balance: %s %s: a number from %u to %u\n", option, word, low, high);
        return -1;
    }
    *value = (uint32_t)v;
    return 0;
}

/* The options of `start` (argv[first] on) into *o; 0, or -1 (said). */
static int parse_options(int argc, char **argv, int first, struct options *o)
{
    *o = (struct options){ .machine = -1, .interval_ms = 1000, .threshold_pct = 2, .residence_ms = 5000,
                           .max_moves = 4 };
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        uint32_t k;
        if (a[0] == '@') {
            if (number("@", a + 1, 0, dm_nodes() - 1, &k) < 0)
                return -1;
            o->machine = (int)k;
        } else if (strcmp(a, "-F") == 0 && i + 1 < argc) {
            if (strlen(argv[++i]) > FILTER_NAME_MAX || !argv[i][0]) {
                printf("balance: -F %s: a filter's name has 1 to %u characters\n", argv[i],
                       (unsigned)FILTER_NAME_MAX);
                return -1;
            }
            snprintf(o->filter, sizeof o->filter, "%s", argv[i]);
        } else if (strcmp(a, "-i") == 0 && i + 1 < argc) {
            if (number("-i", argv[++i], 100, 60000, &o->interval_ms) < 0)
                return -1;
        } else if (strcmp(a, "-t") == 0 && i + 1 < argc) {
            if (number("-t", argv[++i], 0, 100, &o->threshold_pct) < 0)
                return -1;
        } else if (strcmp(a, "-r") == 0 && i + 1 < argc) {
            if (number("-r", argv[++i], 0, 3600000, &o->residence_ms) < 0)
                return -1;
        } else if (strcmp(a, "-m") == 0 && i + 1 < argc) {
            if (number("-m", argv[++i], 1, 16, &o->max_moves) < 0)
                return -1;
        } else {
            usage();
            return -1;
        }
    }
    return 0;
}

/* ---- text ---- */

/* v with its thousands grouped ("5,120"), rounded, into buf (24 bytes). */
static char *grouped(double v, char *buf)
{
    char digits[24];
    long long n = (long long)(v < 0 ? -v + 0.5 : v + 0.5);
    int len = snprintf(digits, sizeof digits, "%lld", n), at = 0;
    if (v < 0 && n)
        buf[at++] = '-';
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = 0;
    return buf;
}

/* A line the scheduler says, on the console, at once. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* ---- what the scheduler knows ---- */

struct tracked {
    dm_pid   pid;            /* 0: a free entry */
    char     name[24];
    uint32_t machine;        /* where the process list last showed it */
    uint8_t  metered;        /* its records reach the filter: it may be moved */
    uint8_t  ended;          /* its DESTROYPROCESS came, or it ended as it was to move */
    uint8_t  pinned;         /* it cannot move (enum pinned): not tried again */
    uint8_t  missed;         /* samples in a row that did not list it */
    double   demand;         /* the share of samples it was runnable in, smoothed */
    double   messages;       /* its messages a second, all partners, as the rates say */
    uint64_t settled_ns;     /* when the scheduler moved it (this machine's clock); 0: never */
};

/* Why a process cannot move. */
enum pinned { MOVABLE = 0, PINNED_DEVICE, PINNED_SYSTEM };

struct rate {
    dm_pid a, b;             /* a < b */
    double rate;             /* messages a second, both ways, smoothed */
};

static struct options opt;
static struct tracked tracked[POLICY_PROCESSES];
static struct rate rates[POLICY_PAIRS];
static int nrates;
static uint8_t machine_up[POLICY_MACHINES];
static double remote_ns, local_rtt_ns, remote_rtt_ns;   /* measured at start */
static int echo_machine = -1;                           /* the other machine measured with */
static long filter_link = -1;
static int own_filter;                                   /* it started the filter it reads */
static uint64_t intervals, moves, refusals;
#define MOVES_KEPT 8
static struct {
    char what[120];          /* "1.1.2 (ping) 1 -> 2" */
    uint64_t at_ns;          /* this machine's clock when it was decided */
} recent[MOVES_KEPT];        /* the last moves, the latest at (moves_decided - 1) % MOVES_KEPT */
static uint64_t moves_decided;

static struct tracked *find(dm_pid pid)
{
    for (int i = 0; i < POLICY_PROCESSES; i++)
        if (tracked[i].pid == pid)
            return &tracked[i];
    return 0;
}

/* The entry of pid, made if it is new; 0 if the table is full. */
static struct tracked *track(dm_pid pid)
{
    struct tracked *t = find(pid);
    for (int i = 0; !t && i < POLICY_PROCESSES; i++) {
        if (!tracked[i].pid) {
            t = &tracked[i];
            *t = (struct tracked){ .pid = pid, .demand = -1, .missed = 1 };   /* not listed yet */
        }
    }
    return t;
}

static char *described(const struct tracked *t, char *buf)
{
    char id[24];
    snprintf(buf, 64, "%s (%s)", dm_pid_string(t->pid, id), t->name[0] ? t->name : "?");
    return buf;
}

/* One sample of the process list: where each process runs, whether it is
 * runnable (its demand moves a quarter of the way to 1 or 0), which
 * machines are up. The process that woke the scheduler for the sample
 * (the timer server, which is still runnable then) is not counted. A
 * process the list has not shown for a few samples in a row (it ended; a
 * moving one is listed nowhere for a moment) is forgotten. */
static void sample(dm_pid waker)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    uint8_t up[POLICY_MACHINES] = { 0 };
    for (int i = 0; i < POLICY_PROCESSES; i++)
        if (tracked[i].pid)
            tracked[i].missed++;
    int64_t cursor = 0;
    long n;
    while ((n = pm_ps_page(&cursor, entries, sizeof entries)) > 0) {
        for (long i = 0; i < n; i++) {
            const struct dm_kproc *e = &entries[i];
            if (e->machine < POLICY_MACHINES && PID_SLOT(e->pid) == 0)
                up[e->machine] = 1;
            struct tracked *t = track(e->pid);
            if (!t)
                continue;
            memcpy(t->name, e->name, sizeof t->name);
            t->name[sizeof t->name - 1] = 0;
            t->machine = e->machine;
            t->missed = 0;
            if (e->pid == waker)
                continue;
            double runnable = e->state == PS_RUNNABLE;
            t->demand = t->demand < 0 ? runnable : t->demand + SAMPLE_WEIGHT * (runnable - t->demand);
        }
    }
    if (n < 0)
        return;                 /* the list could not be read: nothing learned */
    memcpy(machine_up, up, sizeof up);
    for (int i = 0; i < POLICY_PROCESSES; i++)
        if (tracked[i].pid && tracked[i].missed >= MISSED_SAMPLES)
            tracked[i].pid = 0;
}

/* The rate between a and b, made if new (0 if the table is full). */
static struct rate *rate_of(dm_pid a, dm_pid b)
{
    if (a > b) {
        dm_pid t = a;
        a = b;
        b = t;
    }
    for (int i = 0; i < nrates; i++)
        if (rates[i].a == a && rates[i].b == b)
            return &rates[i];
    if (nrates == POLICY_PAIRS)
        return 0;
    rates[nrates] = (struct rate){ .a = a, .b = b };
    return &rates[nrates++];
}

/* A summary from the filter: each pair's rate becomes the mean of what it
 * was and what this interval saw; the processes named are metered (or
 * ended). Returns whether it was a summary. */
static int take_summary(const void *message, uint32_t len)
{
    const struct meter_summary_head *h;
    const struct meter_summary_pair *pairs;
    const struct meter_summary_process *processes;
    if (meter_summary_parse(message, len, &h, &pairs, &processes) < 0 || h->end_ns <= h->begin_ns)
        return 0;
    double seconds = (double)(h->end_ns - h->begin_ns) / 1e9;
    for (int i = 0; i < nrates; i++)
        rates[i].rate /= 2;
    for (uint32_t i = 0; i < h->npairs; i++) {
        if (pairs[i].from == pairs[i].to)
            continue;
        struct tracked *sender = PID_SLOT(pairs[i].to) == 0 ? track(pairs[i].from) : 0;
        if (sender && PID_SLOT(sender->pid) != 0)
            sender->pinned = PINNED_DEVICE;   /* it sends to a kernel: it holds a device link (migrate.c) */
        struct rate *r = rate_of(pairs[i].from, pairs[i].to);
        if (r)
            r->rate += pairs[i].messages / seconds / 2;
    }
    int kept = 0;
    for (int i = 0; i < nrates; i++)
        if (rates[i].rate >= RATE_FLOOR)
            rates[kept++] = rates[i];
    nrates = kept;
    for (uint32_t i = 0; i < h->nprocesses; i++) {
        struct tracked *t = track(processes[i].pid);
        if (t) {
            t->metered = 1;
            t->ended |= processes[i].ended;
        }
    }
    for (int i = 0; i < POLICY_PROCESSES; i++)
        tracked[i].messages = 0;
    for (int i = 0; i < nrates; i++) {
        struct tracked *a = find(rates[i].a), *b = find(rates[i].b);
        if (a)
            a->messages += rates[i].rate;
        if (b)
            b->messages += rates[i].rate;
    }
    intervals++;
    return 1;
}

/* ---- deciding and moving ---- */

static struct policy_model model;

/* The model of the placement now: every process listed and not ended;
 * those metered and never refused may move; the rates between them. */
static void build_model(void)
{
    memset(&model, 0, sizeof model);
    model.machines = dm_nodes() < POLICY_MACHINES ? dm_nodes() : POLICY_MACHINES;
    memcpy(model.up, machine_up, sizeof model.up);
    for (int i = 0; i < POLICY_PROCESSES; i++) {
        const struct tracked *t = &tracked[i];
        if (!t->pid || t->ended || t->missed || model.nprocesses == POLICY_PROCESSES)
            continue;
        model.processes[model.nprocesses++] = (struct policy_process){
            .pid = t->pid, .machine = t->machine, .demand = t->demand < 0 ? 0 : t->demand,
            .settled_ns = t->settled_ns,
            .movable = t->metered && !t->pinned && PID_SLOT(t->pid) != 0 && t->pid != dm_self(),
        };
    }
    for (int i = 0; i < nrates && model.npairs < POLICY_PAIRS; i++) {
        int a = -1, b = -1;
        for (int k = 0; k < model.nprocesses; k++) {
            if (model.processes[k].pid == rates[i].a)
                a = k;
            if (model.processes[k].pid == rates[i].b)
                b = k;
        }
        if (a >= 0 && b >= 0)
            model.pairs[model.npairs++] = (struct policy_pair){ .a = a, .b = b, .rate = rates[i].rate };
    }
}

/* Say what the rule decided and why: the line a user reads. */
static void say_move(const struct policy_move *mv)
{
    char who[POLICY_GROUP * 48] = "", buf[64], n1[24], n2[24];
    int at = 0;
    for (int k = 0; k < mv->nmembers; k++)
        at += snprintf(who + at, sizeof who - (size_t)at, "%s%s", k ? ", " : "",
                       described(find(model.processes[mv->members[k]].pid), buf));
    char why[320];
    int messages_first = mv->message_gain_ns >= mv->cpu_gain_ns;
    if (messages_first && mv->partner >= 0)
        snprintf(why, sizeof why, "%s messages/s with %s on machine %u, a message between machines costs %.0fx "
                 "one within a machine", grouped(mv->partner_rate, n1),
                 described(find(model.processes[mv->partner].pid), buf), mv->to,
                 remote_rtt_ns / local_rtt_ns);
    else if (messages_first)
        snprintf(why, sizeof why, "%s messages/s made local", grouped(mv->messages, n1));
    else
        snprintf(why, sizeof why, "machine %u's processes want %.1f of its CPU, machine %u's %.1f; %s %.2f",
                 mv->from, mv->demand_from, mv->to, mv->demand_to, mv->nmembers > 1 ? "they want" : "it wants",
                 mv->demand_moved);
    char also[96] = "";
    if (!messages_first && (mv->messages >= 1 || mv->messages <= -1))
        snprintf(also, sizeof also, "; %s messages/s made %s",
                 grouped(mv->messages < 0 ? -mv->messages : mv->messages, n2), mv->messages < 0 ? "remote" : "local");
    say("balance: move %s %u -> %u: %s%s (saves about %.0f ms a second)\n", who, mv->from, mv->to, why, also,
        mv->gain_ns / 1e6);
    int k = (int)(moves_decided++ % MOVES_KEPT);
    snprintf(recent[k].what, sizeof recent[k].what, "%s %u -> %u", who, mv->from, mv->to);
    recent[k].at_ns = dm_clock_ns();
}

/* Move process p (of the model) to machine `to`; whether it moved. A
 * refusal is said, and remembered: a process that cannot move is not
 * tried again, one that ended is forgotten, one that did not come to rest
 * waits its residence again. */
static int move(struct policy_process *p, uint32_t from, uint32_t to)
{
    struct tracked *t = find(p->pid);
    char buf[64];
    long err = pm_migrate(p->pid, (int)to);
    uint64_t now = dm_clock_ns();
    if (err == 0) {
        t->machine = to;
        t->settled_ns = now;
        moves++;
        return 1;
    }
    refusals++;
    p->machine = from;
    p->movable = 0;
    t->settled_ns = now;
    if (err == E_SYSTEM || err == E_DEVICE) {
        t->pinned = err == E_DEVICE ? PINNED_DEVICE : PINNED_SYSTEM;
        say("balance: %s stays on machine %u: %s; not tried again\n", described(t, buf), from,
            err == E_DEVICE ? "it holds a device link" : "a system process that does not move");
    } else if (err == E_NOTFOUND) {
        t->ended = 1;
        say("balance: %s ended before it could move\n", described(t, buf));
    } else if (err == E_NODE) {
        model.up[to] = 0;
        say("balance: %s stays on machine %u: machine %u is not up\n", described(t, buf), from, to);
    } else {
        say("balance: %s stays on machine %u: %s\n", described(t, buf), from,
            err == E_STATE  ? "it did not come to rest; tried again later"
            : err == E_INVAL ? "it was there already"
                             : dm_error_text(err));
        if (err == E_INVAL)
            t->machine = to;
    }
    return 0;
}

/* An interval is over: the rule's moves, made one at a time (each
 * decided on the placement the moves before it made). */
static void decide(void)
{
    build_model();
    struct policy_params params = {
        .remote_ns = remote_ns, .threshold_ns = opt.threshold_pct * 1e7, .residence_ns = opt.residence_ms * 1000000ull,
        .now_ns = dm_clock_ns(), .group_rate = GROUP_RATE, .max_moves = 1,
    };
    uint32_t made = 0;
    for (uint32_t tries = 0; made < opt.max_moves && tries < 2 * opt.max_moves + 4; tries++) {
        struct policy_move mv;
        if (policy_decide(&model, &params, &mv, 1) == 0)
            break;
        say_move(&mv);
        int all = 1;
        for (int k = 0; k < mv.nmembers; k++)
            all &= move(&model.processes[mv.members[k]], mv.from, mv.to);
        made += all;
    }
}

/* ---- the status ---- */

static char text[TEXT_MAX + 100];

/* What `balance status` prints, into text[]; its length. */
static uint32_t status_text(void)
{
    char id[24], n1[24];
    int at = snprintf(text, sizeof text,
                      "balance %s on machine %u: filter %s, every %u ms; %llu intervals, %llu moves, %llu refused\n",
                      dm_pid_string(dm_self(), id), dm_machine(), opt.filter, opt.interval_ms,
                      (unsigned long long)intervals, (unsigned long long)moves, (unsigned long long)refusals);
    if (remote_ns > 0)
        at += snprintf(text + at, sizeof text - (size_t)at,
                       "a message between machines costs %.1f us more than one within a machine (%.0fx: CALL round "
                       "trips of %.1f us to machine %d and %.2f us here)\n", remote_ns / 1000,
                       remote_rtt_ns / local_rtt_ns, remote_rtt_ns / 1000, echo_machine, local_rtt_ns / 1000);
    else
        at += snprintf(text + at, sizeof text - (size_t)at, "one machine: no messages to bring together\n");
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "a move must save %u%% of a second; a process it moved stays at least %u ms where it went\n",
                   opt.threshold_pct, opt.residence_ms);
    at += snprintf(text + at, sizeof text - (size_t)at, "%-10s %-14s %4s %10s %12s\n", "PID", "NAME", "NODE",
                   "CPU WANTED", "MESSAGES/S");
    for (int i = 0; i < POLICY_PROCESSES && at < TEXT_MAX - 200; i++) {
        const struct tracked *t = &tracked[i];
        if (t->pid && (t->metered || t->demand > 0.05) && !t->ended)
            at += snprintf(text + at, sizeof text - (size_t)at, "%-10s %-14s %4u %10.2f %12s%s\n",
                           dm_pid_string(t->pid, id), t->name, t->machine, t->demand < 0 ? 0 : t->demand,
                           grouped(t->messages, n1),
                           t->pinned == PINNED_DEVICE   ? "  (holds a device link: does not move)"
                           : t->pinned == PINNED_SYSTEM ? "  (a system process that does not move)"
                                                        : "");
    }
    build_model();
    at += snprintf(text + at, sizeof text - (size_t)at, "CPU wanted:");
    for (uint32_t k = 0; k < model.machines && at < TEXT_MAX - 40; k++)
        if (model.up[k])
            at += snprintf(text + at, sizeof text - (size_t)at, " machine %u %.2f;", k, policy_demand(&model, k));
    at += snprintf(text + at, sizeof text - (size_t)at, "\nmoves decided (the last %d, at this machine's clock):%s\n",
                   MOVES_KEPT, moves_decided ? "" : " none");
    uint64_t first = moves_decided > MOVES_KEPT ? moves_decided - MOVES_KEPT : 0;
    for (uint64_t i = first; i < moves_decided && at < TEXT_MAX - 140; i++) {
        int k = (int)(i % MOVES_KEPT);
        at += snprintf(text + at, sizeof text - (size_t)at, "  %.3f s: %s\n", recent[k].at_ns / 1e9, recent[k].what);
    }
    return (uint32_t)(at < TEXT_MAX ? at : TEXT_MAX);
}

/* ---- starting and stopping ---- */

/* A request to a server over `link`, with a number and maybe a link. */
static long ask(long link, uint32_t op, int64_t arg0, long pass, void *answer, uint32_t cap, struct sv_call *c)
{
    *c = (struct sv_call){ .op = op, .arg = { arg0 }, .pass = pass, .reply_data = answer, .reply_cap = cap };
    return sv_call(link, c);
}

/* The round trip of a 1-byte CALL over `link`, in ns, the mean of
 * ECHO_ROUNDS after ECHO_WARMUP; 0 if a CALL failed. */
static double round_trip_ns(long link)
{
    char byte = 'x', answer;
    struct dm_msg_info info;
    uint64_t start = 0;
    for (int i = 0; i < ECHO_WARMUP + ECHO_ROUNDS; i++) {
        if (i == ECHO_WARMUP)
            start = dm_clock_ns();
        if (dm_call(link, &byte, 1, DM_NO_LINK, &answer, 1, &info) < 0)
            return 0;
    }
    return (double)(dm_clock_ns() - start) / ECHO_ROUNDS;
}

/* The round trip to an echo started on `machine`; 0 if there was none. */
static double echo_round_trip_ns(uint32_t machine)
{
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, "balance.echo.%u", machine);
    char *argv[] = { "balance", "echo", name, 0 };
    long pid = pm_run_on((int)machine, "balance", 3, argv, 0);
    long link = pid < 0 ? pid : sb_lookup_wait(name, 10000000000ull);
    if (link < 0)
        return 0;
    double ns = round_trip_ns(link);
    char quit = 'q', answer;
    struct dm_msg_info info;
    dm_call(link, &quit, 1, DM_NO_LINK, &answer, 1, &info);
    dm_destroylink(link);
    int64_t status;
    pm_wait((dm_pid)pid, &status);
    return ns;
}

/* What a message between machines costs more than one within this one:
 * half the difference of the CALL round trips to an echo on another
 * machine and to one here. */
static void measure_messages(void)
{
    sample(0);
    for (uint32_t k = 0; k < POLICY_MACHINES && k < dm_nodes() && echo_machine < 0; k++)
        if (machine_up[k] && k != dm_machine())
            echo_machine = (int)k;
    if (echo_machine < 0)
        return;
    local_rtt_ns = echo_round_trip_ns(dm_machine());
    remote_rtt_ns = echo_round_trip_ns((uint32_t)echo_machine);
    if (local_rtt_ns > 0 && remote_rtt_ns > local_rtt_ns)
        remote_ns = (remote_rtt_ns - local_rtt_ns) / 2;
}

/* The filter to read: -F's, or its own "balance" filter, started if it
 * does not run (a scheduler before may have left it). */
static long find_filter(void)
{
    if (opt.filter[0]) {
        long link = filter_lookup(opt.filter);
        if (link < 0)
            say("balance: no filter called %s\n", opt.filter);
        return link;
    }
    snprintf(opt.filter, sizeof opt.filter, "%s", NAME);
    own_filter = 1;
    long link = filter_lookup(NAME);
    if (link >= 0)
        return link;
    char *argv[] = { "filter", "-n", NAME, "-", "-", 0 };
    long pid = pm_filter_run((int)dm_machine(), 5, argv);
    link = pid < 0 ? pid : filter_lookup(NAME);
    if (link < 0)
        say("balance: its filter did not start: %s\n", dm_error_text(link));
    return link;
}

/* Ask the timer to wake the scheduler for its next sample. */
static void arm_sample_alarm(void)
{
    static long timer = -1;
    if (timer < 0)
        timer = sb_lookup("timer");
    long link = dm_createlink(CHANNEL_SAMPLE, 0, 0, 0, 0);
    if (timer < 0 || link < 0)
        return;
    struct sv_call c = { .op = TIMER_ALARM, .arg = { (int64_t)opt.interval_ms * 1000000 / SAMPLES }, .pass = link };
    sv_call(timer, &c);
}

/* BALANCE_STOP: the filter stops forwarding (its own filter stops, once
 * the metering into it has ended and every kernel has sent it what it
 * held); then the answer, and the end. */
static void stop(long reply)
{
    struct sv_call c;
    if (own_filter) {
        pm_meter_flush(opt.filter);
        ask(filter_link, FILTER_STOP, 0, DM_NO_LINK, 0, 0, &c);
    } else {
        ask(filter_link, FILTER_FORWARD, 0, DM_NO_LINK, 0, 0, &c);
    }
    say("balance: stopped after %llu intervals: %llu moves\n", (unsigned long long)intervals,
        (unsigned long long)moves);
    uint32_t len = status_text();
    sv_reply(reply, 0, 0, text, len, DM_NO_LINK);
    struct sv_call remove = { .op = SB_REMOVE, .data = NAME, .len = sizeof NAME, .pass = DM_NO_LINK };
    sv_call(SLOT_SWITCHBOARD, &remove);
    exit(0);
}

/* `balance serve`: the scheduler. Registers its name first (a second
 * scheduler is refused there), measures, finds its filter and asks it
 * for summaries, then serves: summaries (each ends an interval: a
 * decision), samples, and requests. */
static int serve(void)
{
    struct sv_call c = { .op = SB_REGISTER, .arg = { SB_REGISTER_NEW }, .data = NAME, .len = sizeof NAME,
                         .pass = dm_createlink(CHANNEL_REQUEST, 0, 0, 0, 0) };
    long err = sv_call(SLOT_SWITCHBOARD, &c);
    if (err < 0) {
        say("balance: %s\n", err == E_STATE ? "a scheduler runs already" : dm_error_text(err));
        return 1;
    }
    measure_messages();
    filter_link = find_filter();
    long summaries = dm_createlink(CHANNEL_SUMMARY, 0, 0, 0, 0);
    err = filter_link < 0 ? filter_link : ask(filter_link, FILTER_FORWARD, opt.interval_ms, summaries, 0, 0, &c);
    if (err < 0) {       /* its name stays: `balance start` finds it gone, and takes it back */
        if (filter_link >= 0)
            say("balance: filter %s does not forward: %s\n", opt.filter, dm_error_text(err));
        return 1;
    }
    arm_sample_alarm();
    char id[24];
    if (remote_ns > 0)
        say("balance: %s on machine %u reads filter %s every %u ms; a message between machines costs %.0fx one "
            "within a machine\n", dm_pid_string(dm_self(), id), dm_machine(), opt.filter, opt.interval_ms,
            remote_rtt_ns / local_rtt_ns);
    else
        say("balance: %s on machine %u reads filter %s every %u ms; one machine: it only spreads\n",
            dm_pid_string(dm_self(), id), dm_machine(), opt.filter, opt.interval_ms);
    static uint8_t message[DM_MSG_MAX] __attribute__((aligned(8)));
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        if (info.link >= 0)
            dm_destroylink(info.link);
        if (info.channel == CHANNEL_SUMMARY) {
            if (take_summary(message, (uint32_t)n))
                decide();
        } else if (info.channel == CHANNEL_SAMPLE) {
            sample(info.sender);
            arm_sample_alarm();
        } else if (info.reply >= 0 && n >= (long)sizeof(struct sv_request)) {
            const struct sv_request *q = (const struct sv_request *)message;
            if (q->op == BALANCE_STOP)
                stop(info.reply);
            uint32_t len = status_text();
            sv_reply(info.reply, q->op == BALANCE_STATUS ? 0 : E_BADREQ, 0, text, len, DM_NO_LINK);
        } else if (info.reply >= 0) {
            sv_reply(info.reply, E_BADREQ, 0, 0, 0, DM_NO_LINK);
        }
    }
}

/* `balance echo NAME`: answers each CALL with its byte, until a 'q'. */
static int echo(const char *name)
{
    if (sb_register(name, dm_createlink(0, 0, 0, 0, 0)) < 0)
        return 1;
    for (;;) {
        char byte;
        struct dm_msg_info info;
        if (dm_receive(&info, &byte, 1, DM_ANY_CHANNEL) < 0 || info.reply < 0)
            continue;
        dm_send(info.reply, &byte, 1, DM_NO_LINK);
        if (byte == 'q')
            break;
    }
    struct sv_call remove = { .op = SB_REMOVE, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = DM_NO_LINK };
    sv_call(SLOT_SWITCHBOARD, &remove);
    return 0;
}

/* ---- the commands ---- */

/* The running scheduler's link, and its pid; E_NOTFOUND if none runs. */
static long scheduler(dm_pid *pid)
{
    struct sv_call c = { .op = SB_LOOKUP, .data = NAME, .len = sizeof NAME, .pass = DM_NO_LINK };
    long err = sv_call(SLOT_SWITCHBOARD, &c);
    if (err < 0 || c.reply_link < 0)
        return err < 0 ? err : E_NOTFOUND;
    *pid = (dm_pid)c.value;
    return c.reply_link;
}

/* `balance status` and `balance stop`: ask the scheduler, print its answer. */
static int ask_scheduler(uint32_t op)
{
    static char answer[TEXT_MAX + 1];
    dm_pid pid;
    long link = scheduler(&pid);
    struct sv_call c;
    long err = link < 0 ? link : ask(link, op, 0, DM_NO_LINK, answer, TEXT_MAX, &c);
    if (link >= 0)
        dm_destroylink(link);
    if (err == E_NOTFOUND || err == E_DEAD || err == E_NOREPLY) {
        printf("balance: no scheduler runs\n");
        return op == BALANCE_STOP;
    }
    if (err < 0) {
        printf("balance: %s\n", dm_error_text(err));
        return 1;
    }
    answer[c.reply_len < TEXT_MAX ? c.reply_len : TEXT_MAX] = 0;
    int64_t status;
    if (op == BALANCE_STATUS)
        printf("%s", answer);
    else
        pm_wait(pid, &status);          /* it said what it did, answers, then ends */
    return 0;
}

/* `balance start ...`: the scheduler on its machine, answered once it
 * serves (its first line says what it measured). A name left registered by
 * a scheduler that was killed is taken back. */
static int start(int argc, char **argv)
{
    struct options o;
    if (parse_options(argc, argv, 2, &o) < 0)
        return 2;
    long filter = o.filter[0] ? filter_lookup(o.filter) : 0;
    if (filter < 0) {
        printf("balance: no filter called %s\n", o.filter);
        return 1;
    }
    if (o.filter[0])
        dm_destroylink(filter);
    dm_pid running;
    long link = scheduler(&running);
    if (link >= 0) {
        struct sv_call c;
        long err = ask(link, BALANCE_STATUS, 0, DM_NO_LINK, 0, 0, &c);
        dm_destroylink(link);
        char id[24];
        if (err >= 0) {
            printf("balance: a scheduler runs already (%s)\n", dm_pid_string(running, id));
            return 1;
        }
        struct sv_call remove = { .op = SB_REMOVE, .data = NAME, .len = sizeof NAME, .pass = DM_NO_LINK };
        sv_call(SLOT_SWITCHBOARD, &remove);
    }
    char *args[24] = { "balance", "serve" };
    int n = 2;
    for (int i = 2; i < argc && n < 23; i++)
        if (argv[i][0] != '@')
            args[n++] = argv[i];
    args[n] = 0;
    long pid = pm_run_on(o.machine, "balance", n, args, 0);
    if (pid < 0) {
        printf("balance: %s\n", dm_error_text(pid));
        return 1;
    }
    dm_pid found = 0;
    uint64_t deadline = dm_clock_ns() + START_WAIT_NS;
    while ((link = scheduler(&found)) < 0 && dm_clock_ns() < deadline)
        timer_sleep_ns(20000000);
    struct sv_call c;
    long err = link < 0 ? link : found != (dm_pid)pid ? E_STATE : ask(link, BALANCE_STATUS, 0, DM_NO_LINK, 0, 0, &c);
    if (link >= 0)
        dm_destroylink(link);
    if (err < 0) {
        printf("balance: the scheduler did not start%s\n", err == E_STATE ? ": another started at once" : "");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *verb = argc > 1 ? argv[1] : "status";
    if (strcmp(verb, "start") == 0)
        return start(argc, argv);
    if (strcmp(verb, "serve") == 0) {
        if (parse_options(argc, argv, 2, &opt) < 0)
            return 2;
        return serve();
    }
    if (strcmp(verb, "echo") == 0 && argc == 3)
        return echo(argv[2]);
    if (strcmp(verb, "status") == 0 && argc <= 2)
        return ask_scheduler(BALANCE_STATUS);
    if (strcmp(verb, "stop") == 0 && argc == 2)
        return ask_scheduler(BALANCE_STOP);
    return usage();
}
