/*
 * dpm_graph_test.c — the analyzer's graph analyses (analysis/models/:
 * history.c, parallel.c, contention.c, delays.c, critpath.c, causality.c,
 * tally.c; analysis/load/elfsym.c) on traces built in memory, under the
 * sanitizers:
 *   - hand-checkable cases of parallelism (thesis §5.2.3), in every
 *     step and with both contention algorithms;
 *   - the longest path against a brute force over every path, on many
 *     random small traces, and step 3's invariants on them;
 *   - the arc for requests outside the trace, and odd traces (a RECEIVE
 *     whose SEND is missing, a failed SEND, a cycle, no PROCTIME);
 *   - the critical path's processes and functions;
 *   - causality strings of DPM's Fig. 2 shapes, fan-out, system processes
 *     ignored, and the thesis's Fig. 5.18 counts and probabilities;
 *   - the delivery-time table;
 *   - vector timestamps against reachability in the graph (brute force, on
 *     random small traces), and the count of ordered pairs;
 *   - clock offsets: random traces with a known skew per machine and random
 *     delays (each true offset within its interval, the estimate within its
 *     bound, no message backward once corrected), hand cases of three
 *     machines and of clocks no constant offset explains;
 *   - the ELF symbol reader on a program compiled here (checked against
 *     nm) and on truncated and damaged copies of it;
 * and prints how long parallelism and the critical path take on a trace
 * of a million records (a measurement, not a check).
 *
 *     dpm_graph_test    prints `dpm_graph_test: N checks passed` or the failures
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "load/elfsym.h"
#include "models/arrivals.h"
#include "models/causality.h"
#include "models/clocks.h"
#include "models/critpath.h"
#include "models/history.h"
#include "models/parallel.h"
#include "models/vclock.h"
#include "models/timeline.h"

#define TEST_NAME "dpm_graph_test"
#include "host_check.h"

/* ---- traces built in memory ---- */

#define MAX_PROCESSES 64
#define OUTSIDE_PID 0x999       /* a process that is never traced */

struct builder {
    struct dpm_event *events;
    size_t nevents, capacity;
    struct dpm_process process[MAX_PROCESSES];
    uint64_t cpu[MAX_PROCESSES], clock[MAX_PROCESSES];
    uint32_t on[MAX_PROCESSES];          /* the machine each process is on now */
    struct dpm_move moves[MAX_PROCESSES];
    size_t nmoves;
    size_t nprocesses;
    uint64_t next_message, pc;
};

static size_t find(struct builder *b, uint64_t pid)
{
    for (size_t i = 0; i < b->nprocesses; i++)
        if (b->process[i].pid == pid)
            return i;
    abort();
}

/* A record of pid's stream, with every field present. */
static struct dpm_event *add_event(struct builder *b, uint64_t pid, uint32_t type)
{
    size_t p = find(b, pid);
    if (b->nevents == b->capacity) {
        b->capacity = b->capacity ? b->capacity * 2 : 256;
        b->events = realloc(b->events, b->capacity * sizeof *b->events);
    }
    struct dpm_event *ev = &b->events[b->nevents++];
    memset(ev, 0, sizeof *ev);
    ev->type = type;
    ev->machine = b->on[p];
    ev->time = b->clock[p];
    ev->proctime = b->cpu[p];
    ev->pc = b->pc;
    ev->pid = pid;
    ev->sequence = b->process[p].count++;
    ev->present = EV_MACHINE | EV_TIME | EV_PROCTIME | EV_PC | EV_PID | EV_SEQUENCE | EV_OTHER | EV_MESSAGE_ID |
                  EV_SIZE | EV_STATUS;
    return ev;
}

/* A process, created now (pids must be added in rising order). */
static void add_process(struct builder *b, uint64_t pid, uint32_t machine, const char *name)
{
    struct dpm_process *p = &b->process[b->nprocesses++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->machine = p->last_machine = machine;
    b->on[b->nprocesses - 1] = machine;
    snprintf(p->name, sizeof p->name, "%s", name);
    add_event(b, pid, MT_CREATEPROCESS);
}

/* Process pid moves to `machine`, out of execution `took` ns: its MIGRATE
 * record, written there at `time` by that machine's clock (the process's
 * clock is set to it). */
static void move_to(struct builder *b, uint64_t pid, uint32_t machine, uint64_t took, uint64_t time)
{
    size_t p = find(b, pid);
    uint32_t from = b->on[p];
    b->on[p] = machine;
    b->clock[p] = time;
    struct dpm_event *ev = add_event(b, pid, MT_MIGRATE);
    ev->from_machine = (uint16_t)from;
    ev->to_machine = (uint16_t)machine;
    ev->code = took;
    ev->kind = (uint32_t)++b->process[p].nmoves;
    ev->present = EV_MACHINE | EV_TIME | EV_PROCTIME | EV_PC | EV_PID | EV_SEQUENCE | EV_FROM_MACHINE |
                  EV_TO_MACHINE | EV_CODE | EV_KIND;
    b->process[p].last_machine = machine;
    b->moves[b->nmoves++] = (struct dpm_move){ .pid = pid, .event = (uint32_t)(b->nevents - 1), .from = from,
                                               .to = machine, .time = time, .took = took, .moves = ev->kind };
}

static void compute(struct builder *b, uint64_t pid, uint64_t ns)
{
    size_t p = find(b, pid);
    b->cpu[p] += ns;
    b->clock[p] += ns;
}

static void send_id(struct builder *b, uint64_t from, uint64_t to, uint64_t id, uint64_t size)
{
    struct dpm_event *ev = add_event(b, from, MT_SEND);
    ev->other = to;
    ev->message_id = id;
    ev->size = size;
}

static uint64_t send(struct builder *b, uint64_t from, uint64_t to)
{
    send_id(b, from, to, ++b->next_message, 1);
    return b->next_message;
}

static void receive(struct builder *b, uint64_t to, uint64_t from, uint64_t id)
{
    struct dpm_event *ev = add_event(b, to, MT_RECEIVE);
    ev->other = from;
    ev->message_id = id;
    ev->size = 1;
}

static void end(struct builder *b, uint64_t pid)
{
    add_event(b, pid, MT_DESTROYPROCESS);
}

/* The trace: its processes, and each one's records in order. */
static void finish(struct builder *b, struct dpm_trace *t)
{
    memset(t, 0, sizeof *t);
    t->events = b->events;
    t->nevents = b->nevents;
    t->processes = b->process;
    t->nprocesses = b->nprocesses;
    for (size_t i = 1; i < b->nmoves; i++)       /* by process, each one's in order: struct dpm_trace's */
        for (size_t j = i; j > 0 && b->moves[j - 1].pid > b->moves[j].pid; j--) {
            struct dpm_move swap = b->moves[j];
            b->moves[j] = b->moves[j - 1];
            b->moves[j - 1] = swap;
        }
    t->moves = b->moves;
    t->nmoves = b->nmoves;
    t->by_process = malloc(b->nevents * sizeof *t->by_process + 1);
    uint32_t at = 0, moved = 0;
    for (size_t p = 0; p < b->nprocesses; p++) {
        b->process[p].first = at;
        b->process[p].first_move = moved;
        moved += b->process[p].nmoves;
        for (size_t i = 0; i < b->nevents; i++)
            if (b->events[i].pid == b->process[p].pid)
                t->by_process[at++] = (uint32_t)i;
    }
}

static void builder_free(struct builder *b, struct dpm_trace *t)
{
    free(b->events);
    free(t->by_process);
    memset(b, 0, sizeof *b);
}

/* ---- running the steps ---- */

static struct delay_table constant_delays(uint64_t local, uint64_t remote)
{
    struct delay_table d = { .nrows = 1, .row = { { 1, local, remote } } };
    return d;
}

/* t_max of `step` on trace t, with machines from `placement` (NULL: measured). */
static uint64_t t_max_of(const struct dpm_trace *t, enum parallel_step step, const uint32_t *placement,
                         const struct delay_table *d, double *parallelism)
{
    struct history h;
    struct parallel_result r = { 0 };
    char err[256];
    uint32_t machine[MAX_PROCESSES];
    CHECK(history_build(&h, t, err, sizeof err) == 0);
    if (placement)
        memcpy(machine, placement, t->nprocesses * sizeof *machine);
    else
        placement_measured(machine, &h);
    CHECK(parallel_step_run(&r, 0, &h, step, GRAPH_ELAPSED_ARCS, machine, d, err, sizeof err) == 0);
    if (parallelism)
        *parallelism = r.parallelism;
    history_free(&h);
    return r.t_max;
}

/* T and t_max of a step; both contention algorithms when step is 3. */
static void check_step(const struct dpm_trace *t, int step, const uint32_t *placement, const struct delay_table *d,
                       uint64_t expect_t_max, double expect_p)
{
    double p;
    if (step == 3) {
        CHECK(t_max_of(t, STEP_CONTENTION_THESIS, placement, d, &p) == expect_t_max);
        CHECK(fabs(p - expect_p) < 1e-9);
        CHECK(t_max_of(t, STEP_CONTENTION_SIMULATED, placement, d, &p) == expect_t_max);
    } else {
        CHECK(t_max_of(t, (enum parallel_step)step, placement, d, &p) == expect_t_max);
    }
    CHECK(fabs(p - expect_p) < 1e-9);
}

/* The hand-checkable cases of parallelism (thesis §5.2.3). Long on purpose:
 * one small trace after another, each built and checked in a few lines. */
static void check_hand_cases(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct delay_table zero = constant_delays(0, 0);
    static const uint32_t one_machine[MAX_PROCESSES], two_machines[MAX_PROCESSES] = { 0, 1 };

    /* One process with CPU 10: T = 10, t_max = 10, P = 1. */
    add_process(&b, 1, 0, "alone");
    compute(&b, 1, 10);
    end(&b, 1);
    finish(&b, &t);
    for (int step = 1; step <= 3; step++)
        check_step(&t, step, 0, &zero, 10, 1.0);
    builder_free(&b, &t);

    /* Two independent processes of 10: P = 2 on two machines; 1 on one (step 3). */
    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 1, "b");
    compute(&b, 1, 10);
    compute(&b, 2, 10);
    end(&b, 1);
    end(&b, 2);
    finish(&b, &t);
    for (int step = 1; step <= 3; step++)
        check_step(&t, step, two_machines, &zero, 10, 2.0);
    check_step(&t, 2, one_machine, &zero, 10, 2.0);
    check_step(&t, 3, one_machine, &zero, 20, 1.0);
    builder_free(&b, &t);

    /* A synchronous client (5, send; 5) and server (receive; 10, reply):
     * T = t_max = 20, P = 1; with a remote delay d each way, 20 + 2d. */
    add_process(&b, 1, 0, "client");
    add_process(&b, 2, 1, "server");
    compute(&b, 1, 5);
    uint64_t request = send(&b, 1, 2);
    receive(&b, 2, 1, request);
    compute(&b, 2, 10);
    uint64_t reply = send(&b, 2, 1);
    end(&b, 2);
    receive(&b, 1, 2, reply);
    compute(&b, 1, 5);
    end(&b, 1);
    finish(&b, &t);
    struct delay_table remote = constant_delays(0, 7);
    check_step(&t, 1, 0, &zero, 20, 1.0);
    check_step(&t, 2, two_machines, &zero, 20, 1.0);
    check_step(&t, 2, two_machines, &remote, 34, 20.0 / 34);
    check_step(&t, 3, two_machines, &remote, 34, 20.0 / 34);
    check_step(&t, 2, one_machine, &remote, 20, 1.0);
    check_step(&t, 3, one_machine, &zero, 20, 1.0);
    builder_free(&b, &t);

    /* A computes 4, sends to B, computes 6; B receives, computes 6. One
     * machine, zero delay: t_max = 16 = T, P = 1; two machines: 10, 1.6. */
    add_process(&b, 1, 0, "A");
    add_process(&b, 2, 0, "B");
    compute(&b, 1, 4);
    uint64_t m = send(&b, 1, 2);
    compute(&b, 1, 6);
    end(&b, 1);
    receive(&b, 2, 1, m);
    compute(&b, 2, 6);
    end(&b, 2);
    finish(&b, &t);
    check_step(&t, 3, one_machine, &zero, 16, 1.0);
    check_step(&t, 3, 0, &zero, 16, 1.0);              /* measured: both on machine 0 */
    check_step(&t, 2, two_machines, &zero, 10, 1.6);
    check_step(&t, 3, two_machines, &zero, 10, 1.6);
    check_step(&t, 1, 0, &zero, 10, 1.6);
    builder_free(&b, &t);
}

/* Processes that move (MIGRATE records): each node runs on the machine
 * its record was written on, from it to the next (models/parallel.h). */
static void check_moves(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    char err[256];
    struct delay_table zero = constant_delays(0, 0);
    static const uint32_t two_machines[MAX_PROCESSES] = { 0, 1 };

    /* A computes 1000 on machine 0; B computes 500 on machine 1, moves to
     * machine 0 and computes 500 more. Without contention t_max = 1000, P =
     * 2. With it, as measured: 500 ns apart, then A's last 500 and B's 500
     * share machine 0 and take 1000 each: t_max = 1500, P = 4/3. Were B
     * on machine 1 throughout, P = 2. */
    add_process(&b, 1, 0, "A");
    add_process(&b, 2, 1, "B");
    compute(&b, 1, 1000);
    compute(&b, 2, 500);
    move_to(&b, 2, 0, 3000, 500);
    compute(&b, 2, 500);
    end(&b, 1);
    end(&b, 2);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    CHECK(h.nnodes == 5 && h.kind[h.first_node[1] + 1] == HN_MIGRATE);   /* A: start, end; B: start, MIGRATE, end */
    uint32_t measured[MAX_PROCESSES];
    placement_measured(measured, &h);
    CHECK(measured[1] == PLACE_MEASURED && placement_node(&h, measured, h.first_node[1]) == 1 &&
          placement_node(&h, measured, h.first_node[1] + 1) == 0);
    history_free(&h);
    check_step(&t, 1, 0, &zero, 1000, 2.0);
    check_step(&t, 3, 0, &zero, 1500, 2000.0 / 1500);
    check_step(&t, 3, two_machines, &zero, 1000, 2.0);
    builder_free(&b, &t);

    /* A ping (machine 0) calls a pong (machine 1) twice; between the two
     * the pong moves to machine 0. Delivery 10 ns on one machine, 1000
     * between two: the first exchange's messages are remote, the second's
     * local: t_max = 1000 + 1000 + 500 + 1000 + 1000 + 10 + 500 + 10 =
     * 5020; with the pong on machine 1 throughout, 7000. */
    add_process(&b, 1, 0, "ping");
    add_process(&b, 2, 1, "pong");
    compute(&b, 1, 1000);
    uint64_t m = send(&b, 1, 2);
    receive(&b, 2, 1, m);
    compute(&b, 2, 500);
    m = send(&b, 2, 1);
    receive(&b, 1, 2, m);
    move_to(&b, 2, 0, 100, 1600);
    compute(&b, 1, 1000);
    m = send(&b, 1, 2);
    receive(&b, 2, 1, m);
    compute(&b, 2, 500);
    m = send(&b, 2, 1);
    receive(&b, 1, 2, m);
    end(&b, 1);
    end(&b, 2);
    finish(&b, &t);
    struct delay_table far = constant_delays(10, 1000);
    check_step(&t, 2, 0, &far, 5020, 3000.0 / 5020);
    check_step(&t, 3, 0, &far, 5020, 3000.0 / 5020);
    check_step(&t, 2, two_machines, &far, 7000, 3000.0 / 7000);
    builder_free(&b, &t);
}

/* ---- random traces against a brute force ---- */

/* The test's own record of a random trace's graph, kept as it is made. */
struct model {
    int nnodes;
    int process[256];
    uint64_t cpu[256], time[256];
    int is_start[256];
    int previous[256];         /* the node before, in the same process */
    int last[8];
    int cross_from[256];       /* -1 or the node */
    int cross_outside[256];
};

static int model_node(struct model *m, int process, uint64_t cpu, uint64_t time, int start)
{
    int v = m->nnodes++;
    m->process[v] = process;
    m->cpu[v] = cpu;
    m->time[v] = time;
    m->is_start[v] = start;
    m->previous[v] = start ? -1 : m->last[process];
    m->last[process] = v;
    m->cross_from[v] = -1;
    m->cross_outside[v] = 0;
    return v;
}

/* The longest path ending at v, trying every path into it (exponential,
 * so small graphs only); on the plain graph (Fig. 5.3A) when `plain`,
 * where a request outside the trace is no arc. */
static uint64_t brute_longest(const struct model *m, int v, const uint32_t *machine, uint64_t local,
                              uint64_t remote, int plain)
{
    uint64_t best = 0;
    if (!m->is_start[v]) {
        int u = m->previous[v];
        best = brute_longest(m, u, machine, local, remote, plain) + (m->cpu[v] - m->cpu[u]);
    }
    int u = m->cross_from[v];
    if (u >= 0 && !(plain && m->cross_outside[v])) {
        uint64_t w = m->cross_outside[v]                              ? m->time[v] - m->time[u]
                     : machine[m->process[u]] == machine[m->process[v]] ? local
                                                                        : remote;
        uint64_t over = brute_longest(m, u, machine, local, remote, plain) + w;
        if (over > best)
            best = over;
    }
    return best;
}

/* A random consistent trace: processes compute, send to one another,
 * receive what was sent to them, and call a process outside the trace. */
static void random_trace(struct builder *b, struct dpm_trace *t, struct model *m, unsigned *seed)
{
    int n = 2 + rand_r(seed) % 4;
    int outside_call[8];
    struct { uint64_t id; int from, node; } inbox[8][64];
    int ninbox[8] = { 0 };
    memset(m, 0, sizeof *m);
    for (int p = 0; p < n; p++) {
        add_process(b, (uint64_t)p + 1, (uint32_t)(rand_r(seed) % 2), "r");
        model_node(m, p, 0, 0, 1);
        outside_call[p] = -1;
    }
    for (int step = 0; step < 18; step++) {
        int p = rand_r(seed) % n, action = rand_r(seed) % 5;
        uint64_t pid = (uint64_t)p + 1;
        compute(b, pid, (uint64_t)(rand_r(seed) % 20));
        size_t bp = find(b, pid);
        if (action <= 1) {
            int q = rand_r(seed) % n;
            uint64_t id = send(b, pid, (uint64_t)q + 1);
            int v = model_node(m, p, b->cpu[bp], b->clock[bp], 0);
            inbox[q][ninbox[q]].id = id;
            inbox[q][ninbox[q]].from = p;
            inbox[q][ninbox[q]++].node = v;
        } else if (action <= 3 && ninbox[p] > 0) {
            receive(b, pid, (uint64_t)inbox[p][0].from + 1, inbox[p][0].id);
            int v = model_node(m, p, b->cpu[bp], b->clock[bp], 0);
            m->cross_from[v] = inbox[p][0].node;
            memmove(&inbox[p][0], &inbox[p][1], (size_t)--ninbox[p] * sizeof inbox[p][0]);
        } else if (action == 4 && outside_call[p] < 0) {
            send(b, pid, OUTSIDE_PID);
            outside_call[p] = model_node(m, p, b->cpu[bp], b->clock[bp], 0);
        } else if (action == 4) {
            b->clock[bp] += (uint64_t)(rand_r(seed) % 100);     /* the time spent outside */
            receive(b, pid, OUTSIDE_PID, 0);
            int v = model_node(m, p, b->cpu[bp], b->clock[bp], 0);
            m->cross_from[v] = outside_call[p];
            m->cross_outside[v] = 1;
            outside_call[p] = -1;
        }
    }
    for (int p = 0; p < n; p++) {
        end(b, (uint64_t)p + 1);
        size_t bp = find(b, (uint64_t)p + 1);
        model_node(m, p, b->cpu[bp], b->clock[bp], 0);
    }
    finish(b, t);
}

/* The model's nodes are made in trace order, not process order: the
 * history numbers them process by process. Map and compare every node's
 * longest path, and t_max. */
static void compare_with_brute_force(const struct model *m, const struct dpm_trace *t, unsigned *seed)
{
    struct history h;
    struct history_weights w;
    struct history_paths paths;
    char err[256];
    uint32_t machine[MAX_PROCESSES];
    struct delay_table d = constant_delays(3, 50);
    CHECK(history_build(&h, t, err, sizeof err) == 0);
    for (uint32_t p = 0; p < h.nprocesses; p++)
        machine[p] = (uint32_t)(rand_r(seed) % 3);
    CHECK(history_weights_alloc(&w, &h) == 0);
    for (int i = 0; i < 4; i++) {
        enum parallel_step step = i % 2 ? STEP_DELIVERY : STEP_UPPER_BOUND;
        enum history_graph graph = i < 2 ? GRAPH_ELAPSED_ARCS : GRAPH_PLAIN;
        CHECK(parallel_weigh(&w, &h, step, graph, machine, &d, err, sizeof err) == 0);
        CHECK(history_longest(&paths, &h, &w) == 0);
        uint64_t local = step == STEP_UPPER_BOUND ? 0 : 3, remote = step == STEP_UPPER_BOUND ? 0 : 50;
        uint64_t t_max = 0;
        int seen[MAX_PROCESSES] = { 0 };
        for (int v = 0; v < m->nnodes; v++) {
            int p = m->process[v];
            uint32_t hv = h.first_node[p] + (uint32_t)seen[p]++;
            uint64_t brute = brute_longest(m, v, machine, local, remote, graph == GRAPH_PLAIN);
            CHECK(paths.dist[hv] == brute);
            if (brute > t_max)
                t_max = brute;
        }
        CHECK((uint32_t)m->nnodes == h.nnodes);
        CHECK(paths.t_max == t_max);
        history_paths_free(&paths);
    }
    history_weights_free(&w);
    history_free(&h);
}

/* Step 3's invariants: with a machine per process there is no contention
 * (both algorithms give step 2's t_max); contention never shortens the
 * path; on one machine with no delays and no waits outside, the elapsed
 * simulation keeps the one CPU busy, so t_max = T (up to rounding). */
static void check_contention_invariants(const struct dpm_trace *t, const struct model *m)
{
    uint32_t own[MAX_PROCESSES], one[MAX_PROCESSES] = { 0 };
    struct delay_table d = constant_delays(3, 50), zero = constant_delays(0, 0);
    int outside = 0;
    for (uint32_t p = 0; p < t->nprocesses; p++)
        own[p] = p;
    for (int v = 0; v < m->nnodes; v++)
        outside |= m->cross_outside[v];
    uint64_t step2 = t_max_of(t, STEP_DELIVERY, own, &d, 0);
    CHECK(t_max_of(t, STEP_CONTENTION_THESIS, own, &d, 0) == step2);
    CHECK(t_max_of(t, STEP_CONTENTION_SIMULATED, own, &d, 0) == step2);
    uint64_t shared = t_max_of(t, STEP_DELIVERY, one, &d, 0);
    CHECK(t_max_of(t, STEP_CONTENTION_THESIS, one, &d, 0) >= shared);
    CHECK(t_max_of(t, STEP_CONTENTION_SIMULATED, one, &d, 0) >= shared);
    if (!outside) {
        struct history h;
        char err[256];
        CHECK(history_build(&h, t, err, sizeof err) == 0);
        uint64_t total = history_total_cpu(&h), simulated = t_max_of(t, STEP_CONTENTION_SIMULATED, one, &zero, 0);
        CHECK(simulated + h.nnodes >= total && simulated <= total + h.nnodes);
        history_free(&h);
    }
}

/* The critical path's arcs join up and add up to t_max. */
static void check_path_is_a_path(const struct dpm_trace *t)
{
    struct history h;
    struct critpath c;
    char err[256];
    uint32_t machine[MAX_PROCESSES];
    struct delay_table d = constant_delays(3, 50);
    CHECK(history_build(&h, t, err, sizeof err) == 0);
    placement_measured(machine, &h);
    CHECK(critpath_find(&c, &h, STEP_DELIVERY, GRAPH_ELAPSED_ARCS, machine, &d, err, sizeof err) == 0);
    uint64_t sum = 0, held = c.delivery + c.outside;
    for (uint32_t i = 0; i < c.narcs; i++) {
        uint32_t v = c.arc[i].to;
        sum += c.arc[i].weight;
        if (c.arc[i].cross == HX_NONE)
            CHECK(h.kind[v] != HN_START && (i == 0 ? h.kind[v - 1] == HN_START : c.arc[i - 1].to == v - 1));
        else
            CHECK(h.cross_from[v] != HISTORY_NONE &&
                  (i == 0 ? h.kind[h.cross_from[v]] == HN_START : c.arc[i - 1].to == h.cross_from[v]));
    }
    for (uint32_t p = 0; p < h.nprocesses; p++)
        held += c.held[p];
    CHECK(sum == c.t_max && held == c.t_max);
    /* Its time outside the trace is all in requests to OUTSIDE_PID. */
    CHECK(c.outside_by.ns == c.outside && c.outside_by.t_max == c.t_max);
    CHECK(c.outside_by.nprocesses == (c.outside > 0 || c.outside_by.requests > 0));
    CHECK(c.outside_by.nprocesses == 0 ||
          (c.outside_by.named[0].pid == OUTSIDE_PID && c.outside_by.named[0].ns == c.outside));
    critpath_free(&c);
    history_free(&h);
}

static void check_random_traces(void)
{
    unsigned seed = 12345;
    for (int round = 0; round < 400; round++) {
        struct builder b = { 0 };
        struct dpm_trace t;
        struct model m;
        random_trace(&b, &t, &m, &seed);
        compare_with_brute_force(&m, &t, &seed);
        check_contention_invariants(&t, &m);
        check_path_is_a_path(&t);
        builder_free(&b, &t);
    }
}

/* ---- requests outside the trace, odd traces ---- */

static void check_outside_arc(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    char err[256];
    add_process(&b, 1, 0, "caller");
    compute(&b, 1, 10);
    send(&b, 1, OUTSIDE_PID);
    send(&b, 1, OUTSIDE_PID);           /* two requests outside: answered in order */
    b.clock[0] += 500;
    receive(&b, 1, OUTSIDE_PID + 1, 0); /* from another process outside: no arc */
    compute(&b, 1, 2);
    receive(&b, 1, OUTSIDE_PID, 0);
    b.clock[0] += 300;
    receive(&b, 1, OUTSIDE_PID, 0);
    compute(&b, 1, 8);
    end(&b, 1);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    CHECK(h.outside_arcs == 2 && h.message_arcs == 0);
    /* Nodes: start, send, send, receive (other), receive, receive, end. */
    CHECK(h.cross_from[4] == 1 && h.cross_kind[4] == HX_OUTSIDE && h.cross_from[5] == 2);
    CHECK(h.cross_from[3] == HISTORY_NONE);
    CHECK(history_outside_time(&h, 4) == 502 && history_outside_time(&h, 5) == 802);
    CHECK(history_total_cpu(&h) == 20);
    history_free(&h);
    struct delay_table zero = constant_delays(0, 0);
    /* The path: 10 CPU, 802 outside, then 8 CPU. */
    check_step(&t, 1, 0, &zero, 820, 20.0 / 820);
    check_step(&t, 3, 0, &zero, 820, 20.0 / 820);
    /* Its 802 outside are the second request's, to OUTSIDE_PID: 97.8% of
     * t_max, above the warning's 50%. The plain graph (Fig. 5.3A) has no
     * outside arc: t_max is the 20 of CPU, P = 1. */
    struct parallel_steps s;
    uint32_t machine[1] = { 0 };
    char advice[2048];
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    CHECK(parallel_steps_run(&s, &h, machine, &zero, err, sizeof err) == 0);
    for (int i = 0; i < PARALLEL_STEPS; i++) {
        const struct outside_share *o = &s.elapsed[i].outside;
        CHECK(o->ns == 802 && o->requests == 1 && o->nprocesses == 1 && o->named[0].pid == OUTSIDE_PID);
        CHECK(fabs(outside_percent(o) - 100.0 * 802 / 820) < 1e-9);
        CHECK(s.plain[i].t_max == 20 && s.plain[i].outside.ns == 0 && fabs(s.plain[i].parallelism - 1.0) < 1e-9);
    }
    parallel_steps_advice(advice, sizeof advice, &s, &h, 0);
    CHECK(strncmp(advice, "97.8% of t_max (step 1) is time spent waiting", 45) == 0 && strstr(advice, "P = 1.000:"));
    /* Both processes outside are in slot 0, kernels: the advice says a
     * kernel is not metered, and names no requestor for --window-of. */
    CHECK(outside_requestors(&h, 0, 0) == 0 && strstr(advice, "A kernel is not metered"));
    CHECK(strstr(advice, "--window-of a process of the workload") != 0);
    history_free(&h);
    builder_free(&b, &t);
}

/* Traces at the edges: none, a RECEIVE without its SEND, message ids
 * that differ in every part, messages received before they were sent.
 * Long on purpose: independent cases, one after another. */
static void check_odd_traces(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    char err[256];
    struct delay_table zero = constant_delays(0, 0);

    /* No processes at all. */
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0 && h.nnodes == 0);
    history_free(&h);
    check_step(&t, 3, 0, &zero, 0, 0);
    builder_free(&b, &t);

    /* A RECEIVE whose SEND is not in the trace waits for nothing; a failed
     * SEND is no node; a record without PROCTIME weighs 0. */
    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 0, "b");
    compute(&b, 1, 5);
    receive(&b, 1, 2, 777);
    send(&b, 1, 2);
    b.events[b.nevents - 1].status = -3;
    compute(&b, 1, 5);
    end(&b, 1);
    compute(&b, 2, 4);
    add_event(&b, 2, MT_SEND)->present &= ~(uint32_t)EV_PROCTIME;
    end(&b, 2);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    CHECK(h.nnodes == 3 + 3 && h.unmatched_receives == 1 && h.no_proctime == 2);
    history_free(&h);
    check_step(&t, 3, 0, &zero, 10, 1.0);
    builder_free(&b, &t);

    /* Message ids differing in every part (machine, epoch and counter, as
     * the kernel makes them), received out of id order, one id used twice:
     * each RECEIVE takes the SEND of its id, an id's SENDs and RECEIVEs in
     * node order, and the message's size comes from its SEND; a SEND never
     * received is counted. Nodes: a 0 start, 1-4 SENDs, 5 end; b 6 start,
     * 7-9 RECEIVEs, 10 end. */
    uint64_t id0 = 0x0200000500000003ull, id1 = 0x0100000700000002ull, id2 = 0x02000005000001ffull;
    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 1, "b");
    send_id(&b, 1, 2, id0, 10);
    send_id(&b, 1, 2, id1, 20);
    send_id(&b, 1, 2, id0, 30);
    send_id(&b, 1, 2, id2, 40);
    end(&b, 1);
    receive(&b, 2, 1, id1);
    receive(&b, 2, 1, id0);
    receive(&b, 2, 1, id0);
    end(&b, 2);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0 && h.nnodes == 11);
    CHECK(h.message_arcs == 3 && h.unmatched_sends == 1 && h.unmatched_receives == 0);
    CHECK(h.cross_from[7] == 2 && h.cross_from[8] == 1 && h.cross_from[9] == 3);
    CHECK(h.cross_to[1] == 8 && h.cross_to[2] == 7 && h.cross_to[3] == 9 && h.cross_to[4] == HISTORY_NONE);
    CHECK(h.message_size[7] == 20 && h.message_size[8] == 10 && h.message_size[9] == 30);
    history_free(&h);
    builder_free(&b, &t);

    /* Messages received before they were sent: a cycle, refused. */
    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 0, "b");
    receive(&b, 1, 2, 1);
    send_id(&b, 1, 2, 2, 1);
    receive(&b, 2, 1, 2);
    send_id(&b, 2, 1, 1, 1);
    end(&b, 1);
    end(&b, 2);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == -1 && strstr(err, "cycle"));
    builder_free(&b, &t);
}

/* ---- the critical path ---- */

/* Names PCs 0x1000.. as "client_*", 0x2000.. as "server" (a test namer). */
static const char *test_namer(void *context, uint32_t process, uint64_t pc, uint64_t *start)
{
    (void)context;
    (void)process;
    *start = pc & ~(uint64_t)0xff;
    return pc >= 0x2000 ? "server" : pc >= 0x1100 ? "client_after" : pc >= 0x1000 ? "client_before" : 0;
}

static void check_critical_path(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct critpath c;
    char err[256];
    add_process(&b, 1, 0, "client");
    add_process(&b, 2, 1, "server");
    compute(&b, 1, 5);
    b.pc = 0x1010;
    uint64_t request = send(&b, 1, 2);
    b.pc = 0x2000;
    receive(&b, 2, 1, request);
    compute(&b, 2, 10);
    b.pc = 0x2010;
    uint64_t reply = send(&b, 2, 1);
    end(&b, 2);
    b.pc = 0x1020;
    receive(&b, 1, 2, reply);
    compute(&b, 1, 5);
    b.pc = 0x1130;
    end(&b, 1);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    uint32_t machine[2] = { 0, 1 };
    struct delay_table d = constant_delays(0, 7);
    CHECK(critpath_find(&c, &h, STEP_DELIVERY, GRAPH_ELAPSED_ARCS, machine, &d, err, sizeof err) == 0);
    CHECK(c.t_max == 34 && c.delivery == 14 && c.outside == 0);
    CHECK(c.held[0] == 10 && c.held[1] == 10);
    CHECK(c.nsegments == 3 && c.segment[0].process == 0 && c.segment[0].held == 5 && c.segment[1].process == 1 &&
          c.segment[1].held == 10 && c.segment[2].process == 0 && c.segment[2].held == 5);
    CHECK(c.segment[0].came_by == HX_NONE && c.segment[1].came_by == HX_MESSAGE && c.segment[1].came_weight == 7);
    struct critpath_function *f;
    uint32_t n;
    CHECK(critpath_functions(&c, &h, test_namer, 0, &f, &n) == 0);
    /* server 10; client_before 5; client_after 5 (the arc ending at the end record; ties by address). */
    CHECK(n == 3 && strcmp(f[0].name, "server") == 0 && f[0].held == 10);
    CHECK(strcmp(f[1].name, "client_before") == 0 && f[1].held == 5 && f[1].start == 0x1000);
    CHECK(strcmp(f[2].name, "client_after") == 0 && f[2].held == 5 && f[2].start == 0x1100);
    free(f);
    CHECK(critpath_functions(&c, &h, 0, 0, &f, &n) == 0);
    CHECK(n == 3 && f[0].name == 0 && f[0].start == 0x2010);
    free(f);
    critpath_free(&c);
    history_free(&h);
    builder_free(&b, &t);
}

/* A record's PC is the return address of the kernel call that wrote it,
 * one past the call: when the call is its function's last instruction (a
 * call that does not return, as exit's), that is the next function's first
 * address, and the arc ending there is still charged to the function that
 * called. A PC where the process was stopped (MESSAGEQUEUED's) is not a
 * return address, and names the function holding it. */
static void check_return_addresses_name_the_caller(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct critpath c;
    char err[256];
    add_process(&b, 1, 0, "client");
    compute(&b, 1, 5);
    b.pc = 0x1100;          /* client_before's call, its last instruction, returns here */
    send(&b, 1, OUTSIDE_PID);
    compute(&b, 1, 3);
    b.pc = 0x1100;
    add_event(&b, 1, MT_MESSAGEQUEUED);   /* stopped at client_after's first instruction: its last record */
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    uint32_t machine[1] = { 0 };
    struct delay_table d = constant_delays(0, 0);
    CHECK(critpath_find(&c, &h, STEP_DELIVERY, GRAPH_ELAPSED_ARCS, machine, &d, err, sizeof err) == 0);
    struct critpath_function *f;
    uint32_t n;
    CHECK(critpath_functions(&c, &h, test_namer, 0, &f, &n) == 0);
    CHECK(n == 2 && strcmp(f[0].name, "client_before") == 0 && f[0].held == 5 && f[0].start == 0x1000);
    CHECK(strcmp(f[1].name, "client_after") == 0 && f[1].held == 3 && f[1].start == 0x1100);
    free(f);
    critpath_free(&c);
    history_free(&h);
    builder_free(&b, &t);
}

/* ---- one time axis for every machine (models/timeline.h) ---- */

/* A SEND from `from` at its clock `sent`, received by `to` at its clock `received`. */
static void message_at(struct builder *b, uint64_t from, uint64_t sent, uint64_t to, uint64_t received)
{
    b->clock[find(b, from)] = sent;
    uint64_t id = send(b, from, to);
    b->clock[find(b, to)] = received;
    receive(b, to, from, id);
}

/* The timeline of trace t: its events added in order. */
static void build_timeline(struct timeline *tl, const struct dpm_trace *t)
{
    timeline_init(tl);
    for (size_t i = 0; i < t->nevents; i++)
        timeline_add(tl, &t->events[i], (uint32_t)i);
    timeline_finish(tl);
}

/* Only messages sent and received in the trace are paired; machine 1's
 * clock, 10000 ns ahead of machine 0's, is shifted back by just that when
 * messages take 40 ns each way; when it then gains 500 ns on machine 0, no
 * shift suits every message, and the one left arriving before it was sent
 * is counted. */
static void check_timeline(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct timeline tl;
    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 1, "b");
    message_at(&b, 1, 100, 2, 10140);
    message_at(&b, 2, 10200, 1, 240);
    send(&b, 1, OUTSIDE_PID);                        /* to a process not traced */
    receive(&b, 2, OUTSIDE_PID, 0x777);               /* from one */
    add_event(&b, 1, MT_SEND)->status = -1;          /* an error at once: sent nothing */
    finish(&b, &t);
    build_timeline(&tl, &t);
    CHECK(tl.nmessages == 2 && tl.between_machines == 2 && tl.backward == 0);
    CHECK(tl.message[0].send == 2 && tl.message[0].receive == 3 && tl.message[1].send == 4);
    CHECK(tl.shift[0] == 10000 && tl.shift[1] == 0);
    CHECK(timeline_time(&tl, &t.events[2]) == 10100 && timeline_time(&tl, &t.events[3]) == 10140);
    timeline_free(&tl);
    builder_free(&b, &t);

    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 1, "b");
    message_at(&b, 1, 100, 2, 10140);
    message_at(&b, 2, 10200, 1, 240);
    message_at(&b, 1, 1000, 2, 11540);
    message_at(&b, 2, 11600, 1, 1100);
    finish(&b, &t);
    build_timeline(&tl, &t);
    /* Machine 1's shift - machine 0's is bounded below by -10039 and -10539, above by -9961
     * and -10501: every shift breaks one bound, and the first range that does, -10539 to
     * -10501, gives its middle. */
    CHECK(tl.nmessages == 4 && tl.between_machines == 4 && tl.backward == 1);
    CHECK(tl.shift[0] == 10520 && tl.shift[1] == 0);
    timeline_free(&tl);
    builder_free(&b, &t);

    /* A log may hold a RECEIVE before its SEND; an id's first SEND and
     * first RECEIVE are its message, and no later end of the id pairs. */
    add_process(&b, 1, 0, "a");
    add_process(&b, 2, 1, "b");
    receive(&b, 2, 1, 60);                                   /* 2 */
    send_id(&b, 1, 2, 60, 1);                                /* 3: pairs with 2 */
    send_id(&b, 1, 2, 60, 1);                                /* 4: 60 is paired */
    receive(&b, 2, 1, 60);                                   /* 5 */
    send_id(&b, 1, 2, 70, 1);                                /* 6 */
    send_id(&b, 1, 2, 70, 1);                                /* 7: not the first SEND of 70 */
    receive(&b, 2, 1, 70);                                   /* 8: pairs with 6 */
    receive(&b, 2, 1, 80);                                   /* 9 */
    send_id(&b, 1, 2, 90, 1);                                /* 10 */
    receive(&b, 2, 1, 90);                                   /* 11: pairs with 10 */
    send_id(&b, 1, 2, 80, 1);                                /* 12: pairs with 9 */
    finish(&b, &t);
    build_timeline(&tl, &t);
    CHECK(tl.nmessages == 4 && tl.between_machines == 4);
    CHECK(tl.message[0].send == 3 && tl.message[0].receive == 2 && tl.message[1].send == 6 &&
          tl.message[1].receive == 8 && tl.message[2].send == 12 && tl.message[2].receive == 9 &&
          tl.message[3].send == 10 && tl.message[3].receive == 11);
    timeline_free(&tl);
    builder_free(&b, &t);
}

/* ---- causality ---- */

/* Causality of trace t with `servers` (pids) as servers; others requestors. */
static int analyze(struct causality *c, struct history *h, const struct dpm_trace *t, const uint64_t *servers,
                   int nservers, uint32_t max_length)
{
    uint8_t role[MAX_PROCESSES];
    char err[256];
    CHECK(history_build(h, t, err, sizeof err) == 0);
    for (size_t p = 0; p < t->nprocesses; p++) {
        role[p] = ROLE_REQUESTOR;
        for (int i = 0; i < nservers; i++)
            if (t->processes[p].pid == servers[i])
                role[p] = ROLE_SERVER;
    }
    struct causality_roles roles = { role, 0, 0 };
    return causality_analyze(c, h, &roles, max_length, err, sizeof err);
}

/* The count of string s in a tally (0 if absent). */
static uint64_t count_of(const struct tally *t, const char *s)
{
    struct tally_item *items = tally_items(t);
    uint64_t n = 0;
    for (uint32_t i = 0; items && i < t->used; i++)
        if (strcmp(items[i].text, s) == 0)
            n = items[i].count;
    free(items);
    return n;
}

/* A message from one process to another, sent and received now. */
static void pass(struct builder *b, uint64_t from, uint64_t to)
{
    compute(b, from, 1);
    receive(b, to, from, send(b, from, to));
}

/* DPM's Fig. 2 shapes: U->A->B->A->U is ABA; U->A->B->C->B->A->U is ABCBA. */
static void check_fig2_shapes(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct causality c;
    const uint64_t U = 9, A = 1, B = 2, C = 3, servers[] = { A, B, C };
    add_process(&b, A, 0, "A");
    add_process(&b, B, 0, "B");
    add_process(&b, C, 0, "C");
    add_process(&b, U, 0, "user");
    pass(&b, U, A);
    pass(&b, A, B);
    pass(&b, B, A);
    send(&b, A, OUTSIDE_PID);           /* a message to a system process: ignored */
    receive(&b, A, OUTSIDE_PID, 0);
    pass(&b, A, U);
    pass(&b, U, A);
    pass(&b, A, B);
    pass(&b, B, C);
    pass(&b, C, B);
    pass(&b, B, A);
    pass(&b, A, U);
    for (uint64_t p = 1; p <= 3; p++)
        end(&b, p);
    end(&b, U);
    finish(&b, &t);
    CHECK(analyze(&c, &h, &t, servers, 3, 0) == 0);
    CHECK(c.requests == 2 && c.strings.used == 2);
    CHECK(count_of(&c.strings, "ABA") == 1 && count_of(&c.strings, "ABCBA") == 1);
    CHECK(count_of(&c.paths, "AB") == 2 && count_of(&c.paths, "BA") == 2 && count_of(&c.paths, "ABA") == 1);
    CHECK(count_of(&c.paths, "BCB") == 1 && count_of(&c.paths, "ABCBA") == 1 && count_of(&c.paths, "CB") == 1);
    CHECK(c.paths.used == 11);          /* AB BA ABA, then BC CB ABC BCB CBA ABCB BCBA ABCBA */
    struct tally_item *lex = causality_alphabetical(&c.paths);
    for (uint32_t i = 1; i < c.paths.used; i++)
        CHECK(strcmp(lex[i - 1].text, lex[i].text) < 0);
    free(lex);
    /* A after receiving from the user sent to B (twice); B after A: to A once, to C once. */
    CHECK(causality_count(&c, 0, 3, 1) == 2 && causality_count(&c, 1, 0, 0) == 1 && causality_count(&c, 1, 0, 2) == 1);
    CHECK(causality_probability(&c, 1, 0, 2) == 0.5 && causality_probability(&c, 2, 2, 0) == -1);
    causality_free(&c);

    history_free(&h);
    /* Cut at 3 letters: ABA stays, ABCBA becomes ABC, cut once. */
    CHECK(analyze(&c, &h, &t, servers, 3, 3) == 0);
    CHECK(c.cut == 1 && count_of(&c.strings, "ABC") == 1 && count_of(&c.strings, "ABA") == 1);
    causality_free(&c);
    history_free(&h);
    builder_free(&b, &t);
}

/* A server whose clients are not traced, as a file system's users seldom
 * are: their requests start causality strings (they are requestors), and a
 * reply to a client followed by the client's next request is no outside
 * arc (the client's time is its own); the server's CALL to another process
 * outside the trace (a disk's kernel) and its answer are one, and that
 * process a system process. */
static void check_untraced_clients(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct causality c;
    const uint64_t A = 1, B = 2, user = (uint64_t)5 << 20 | 1, kernel = (uint64_t)1 << 56, servers[] = { A, B };
    add_process(&b, A, 0, "A");
    add_process(&b, B, 0, "B");
    for (int request = 0; request < 2; request++) {
        b.clock[0] += 1000;                       /* the user's own time between requests */
        receive(&b, A, user, 0);
        compute(&b, A, 5);
        pass(&b, A, B);
        struct dpm_event *call = add_event(&b, B, MT_SEND);   /* B CALLs the kernel ... */
        call->other = kernel;
        call->message_id = ++b.next_message;
        call->kind = 1;
        call->present |= EV_KIND;
        b.clock[1] += 700;
        receive(&b, B, kernel, 0);                /* ... and waits 700 for its answer */
        pass(&b, B, A);
        struct dpm_event *reply = add_event(&b, A, MT_SEND);  /* the reply to the user: a plain SEND */
        reply->other = user;
        reply->message_id = ++b.next_message;
        reply->present |= EV_KIND;
    }
    end(&b, A);
    end(&b, B);
    finish(&b, &t);
    CHECK(analyze(&c, &h, &t, servers, 2, 0) == 0);
    CHECK(h.outside_arcs == 2);                   /* B's two CALLs; not A's replies and the next requests */
    CHECK(c.requests == 2 && count_of(&c.strings, "ABA") == 2 && c.strings.used == 1);
    CHECK(causality_count(&c, 0, 2, 1) == 2);     /* A after a requestor (U) sent to B, twice */
    causality_free(&c);
    history_free(&h);
    builder_free(&b, &t);
}

/* A fan-out: after one request A sends to B and to C: strings AB and AC. */
static void check_fan_out(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct causality c;
    const uint64_t servers[] = { 1, 2, 3 };
    add_process(&b, 1, 0, "A");
    add_process(&b, 2, 0, "B");
    add_process(&b, 3, 0, "C");
    add_process(&b, 9, 0, "user");
    pass(&b, 9, 1);
    pass(&b, 1, 2);
    pass(&b, 1, 3);
    finish(&b, &t);
    CHECK(analyze(&c, &h, &t, servers, 3, 0) == 0);
    CHECK(c.strings.used == 2 && count_of(&c.strings, "AB") == 1 && count_of(&c.strings, "AC") == 1);
    CHECK(c.paths.used == 2);
    causality_free(&c);
    history_free(&h);
    builder_free(&b, &t);
}

/* The thesis's Fig. 5.18 counts, made into a trace: every server first
 * sends the messages the others will receive from it (before any RECEIVE
 * of its own, so in no window), then receives each and sends on as the
 * table says, then receives what was sent to it (windows sending nothing). */
static void check_fig5_18(void)
{
    enum { DI, BM, DM, RI, USERS };
    static const struct { int process, from, to; uint64_t count; } table[] = {
        { DI, BM, BM, 1086 }, { BM, DI, DI, 162 },  { BM, DI, RI, 819 },  { BM, RI, DI, 981 },
        { BM, RI, RI, 2553 }, { BM, USERS, DI, 33 }, { DM, RI, RI, 21 },  { RI, BM, BM, 9 },
        { RI, DM, BM, 27 },   { RI, DM, DM, 12 },   { RI, USERS, BM, 3390 },
    };
    const int n = sizeof table / sizeof table[0];
    const uint64_t servers[] = { 1, 2, 3, 4 };  /* pid = index + 1; users are pid 5 */
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct causality c;
    uint64_t *first_id = calloc((size_t)n, sizeof *first_id);
    for (int p = 0; p <= USERS; p++)
        add_process(&b, (uint64_t)p + 1, 0, "fs");
    for (int i = 0; i < n; i++) {
        first_id[i] = b.next_message + 1;
        for (uint64_t k = 0; k < table[i].count; k++)
            send(&b, (uint64_t)table[i].from + 1, (uint64_t)table[i].process + 1);
    }
    uint64_t onward_first = b.next_message + 1;
    for (int i = 0; i < n; i++)
        for (uint64_t k = 0; k < table[i].count; k++) {
            receive(&b, (uint64_t)table[i].process + 1, (uint64_t)table[i].from + 1, first_id[i] + k);
            send(&b, (uint64_t)table[i].process + 1, (uint64_t)table[i].to + 1);
        }
    uint64_t id = onward_first;
    for (int i = 0; i < n; i++)
        for (uint64_t k = 0; k < table[i].count; k++)
            receive(&b, (uint64_t)table[i].to + 1, (uint64_t)table[i].process + 1, id++);
    finish(&b, &t);
    CHECK(analyze(&c, &h, &t, servers, 4, 0) == 0);
    for (int i = 0; i < n; i++)
        CHECK(causality_count(&c, (uint32_t)table[i].process, (uint32_t)table[i].from, (uint32_t)table[i].to) ==
              table[i].count);
    CHECK(fabs(causality_probability(&c, BM, RI, DI) - 0.278) < 0.0005);
    CHECK(fabs(causality_probability(&c, BM, RI, RI) - 0.722) < 0.0005);
    CHECK(fabs(causality_probability(&c, BM, DI, DI) - 0.165) < 0.0005);
    CHECK(fabs(causality_probability(&c, BM, DI, RI) - 0.835) < 0.0005);
    CHECK(fabs(causality_probability(&c, RI, DM, BM) - 0.69) < 0.005);
    CHECK(fabs(causality_probability(&c, RI, DM, DM) - 0.31) < 0.005);
    causality_free(&c);
    history_free(&h);
    builder_free(&b, &t);
    free(first_id);
}

/* ---- the delivery-time table ---- */

static void check_delays(void)
{
    struct delay_table d;
    char err[512], path[] = "/tmp/dpm_graph_test_delaysXXXXXX";
    /* The default is the shipped network `here`, this system's. */
    delay_table_default(&d);
    CHECK(strcmp(d.name, "here") == 0 && strcmp(d.path, "analysis/networks/here.tsv") == 0 && d.title[0]);
    CHECK(d.nrows == 4 && delay_of(&d, 1, 0) == 760 && delay_of(&d, 1000, 1) == 93100);
    CHECK(delay_of(&d, 0, 1) == 97400 && delay_of(&d, 4096, 0) == 1110);
    CHECK(delay_of(&d, 55, 0) == 800 && delay_of(&d, 550, 1) == 86600);
    /* Every shipped network parses, has a title, and its sizes rise. */
    CHECK(shipped_network_count >= 4);
    for (size_t i = 0; i < shipped_network_count; i++) {
        CHECK(delay_table_network(&d, shipped_networks[i].name, err, sizeof err) == 0);
        CHECK(strcmp(d.name, shipped_networks[i].name) == 0 && d.title[0] && d.nrows >= 1);
    }
    CHECK(delay_table_network(&d, "vax", err, sizeof err) == 0 && delay_of(&d, 10, 1) == 13000000);
    CHECK(delay_table_network(&d, "nosuch", err, sizeof err) == -2 && strstr(err, "(gbe, here, infiniband, vax)"));
    /* A file: rows, comments, a title; and what is wrong in one, by line. */
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("# title: two rows\n# size local remote\n\n10 100 1000\n  20\t200 3000  # a comment\r\n", f);
    fclose(f);
    CHECK(delay_table_read(&d, path, err, sizeof err) == 0 && d.nrows == 2 && delay_of(&d, 15, 1) == 2000);
    CHECK(strcmp(d.title, "two rows") == 0 && strcmp(d.name, path) == 0);
    static const struct {
        const char *text, *said;
    } bad[] = {
        { "10 100 1000\n10 200 3000\n", ":2: size 10 does not follow 10: sizes must rise" },
        { "10 100\n", ":1: 2 fields; expected 3: SIZE LOCAL_NS REMOTE_NS" },
        { "1 2 3 4\n", ":1: 4 fields; expected 3: SIZE LOCAL_NS REMOTE_NS" },
        { "# x\n10 1.5 3\n", ":2: LOCAL_NS `1.5` is not a whole number of ns" },
        { "+10 1 3\n", ":1: SIZE `+10` is not a whole number of bytes" },
        { "10 1 99999999999999999999\n", ":1: REMOTE_NS `99999999999999999999` is not a whole number of ns" },
        { "# nothing\n", ": no rows (lines `SIZE LOCAL_NS REMOTE_NS`)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[512];
        f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        snprintf(want, sizeof want, "%s%s", path, bad[i].said);
        CHECK(delay_table_read(&d, path, err, sizeof err) == -1 && strcmp(err, want) == 0);
    }
    char rows[64 * 12 + 32] = "";
    for (int i = 0; i <= DELAY_ROWS_MAX; i++)
        snprintf(rows + strlen(rows), sizeof rows - strlen(rows), "%d 1 2\n", i + 1);
    CHECK(delay_table_parse(&d, rows, "many", err, sizeof err) == -1 && strcmp(err, "many:65: more than 64 rows") == 0);
    unlink(path);
    CHECK(delay_table_read(&d, path, err, sizeof err) == -1 && strstr(err, path) && strstr(err, "No such file"));
}

/* ---- the ELF reader ---- */

/* Every function nm lists in `elf` is found at its address, by name. */
static void check_against_nm(const struct elf_symbols *s, const char *elf)
{
    char command[512], line[512];
    int functions = 0;
    snprintf(command, sizeof command, "nm --defined-only %s", elf);
    FILE *nm = popen(command, "r");
    CHECK(nm != 0);
    while (nm && fgets(line, sizeof line, nm)) {
        unsigned long long address;
        char type, name[256];
        if (sscanf(line, "%llx %c %255s", &address, &type, name) != 3 || (type != 'T' && type != 't'))
            continue;
        const struct elf_function *f = elfsym_lookup(s, address);
        CHECK(f && f->start == address);
        if (strcmp(name, "graph_test_marker") == 0) {
            functions++;
            CHECK(f && strcmp(f->name, name) == 0);
            CHECK(elfsym_lookup(s, address + 1) == f);
        }
    }
    CHECK(nm && pclose(nm) == 0);
    CHECK(functions == 1);
    CHECK(elfsym_lookup(s, 0) == 0);
}

/* Load `path` holding data[0..size): it may fail, but must not crash, and its error names the file. */
static void load_damaged(const char *path, const unsigned char *data, size_t size)
{
    struct elf_symbols s;
    char err[512];
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, size, f);
    fclose(f);
    if (elfsym_load(&s, path, err, sizeof err) < 0) {
        CHECK(strncmp(err, path, strlen(path)) == 0);
        return;
    }
    for (size_t i = 0; i < s.nfunctions; i++)
        CHECK(elfsym_lookup(&s, s.function[i].start) != 0 && strlen(s.function[i].name) < size);
    elfsym_free(&s);
}

static void check_elf(void)
{
    char dir[] = "/tmp/dpm_graph_test_elfXXXXXX", source[128], elf[128], command[512], damaged[128], err[512];
    struct elf_symbols s;
    CHECK(mkdtemp(dir) != 0);
    snprintf(source, sizeof source, "%s/tiny.c", dir);
    snprintf(elf, sizeof elf, "%s/tiny", dir);
    snprintf(damaged, sizeof damaged, "%s/damaged", dir);
    FILE *f = fopen(source, "w");
    fputs("int graph_test_marker(int x) { return x * 3 + 1; }\n"
          "static int helper(int x) { return graph_test_marker(x) - 1; }\n"
          "int main(int argc, char **argv) { (void)argv; return helper(argc); }\n", f);
    fclose(f);
    snprintf(command, sizeof command, "cc -O0 -o %s %s", elf, source);
    CHECK(system(command) == 0);
    CHECK(elfsym_load(&s, elf, err, sizeof err) == 0 && s.nfunctions >= 3);
    check_against_nm(&s, elf);
    elfsym_free(&s);

    /* Truncated at every length up to the whole, and bytes damaged at random. */
    f = fopen(elf, "rb");
    static unsigned char data[1 << 20];
    size_t size = fread(data, 1, sizeof data, f);
    fclose(f);
    for (size_t length = 0; length < size; length += 1 + length / 64)
        load_damaged(damaged, data, length);
    unsigned seed = 7;
    static unsigned char copy[1 << 20];
    for (int round = 0; round < 1500; round++) {
        memcpy(copy, data, size);
        for (int k = 0; k < 1 + rand_r(&seed) % 8; k++) {
            size_t at = round % 2 ? (size_t)rand_r(&seed) % 64 : (size_t)rand_r(&seed) % size;
            if (round % 3 == 0 && size > 64)
                at = size - 1 - (size_t)rand_r(&seed) % (size / 4);   /* the section headers, at the end */
            copy[at] = (unsigned char)rand_r(&seed);
        }
        load_damaged(damaged, copy, size);
    }

    /* Not there; not ELF; stripped. */
    snprintf(command, sizeof command, "%s/none", dir);
    CHECK(elfsym_load(&s, command, err, sizeof err) == -1 && strstr(err, command));
    CHECK(elfsym_load(&s, source, err, sizeof err) == -1 && strstr(err, "not an ELF file"));
    snprintf(command, sizeof command, "strip -o %s %s", damaged, elf);
    CHECK(system(command) == 0);
    CHECK(elfsym_load(&s, damaged, err, sizeof err) == -1 && strstr(err, "no symbol table"));
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0);
}

/* ---- happens-before and clocks ---- */

/* Every node's vector, collected by a walk. */
struct vectors {
    uint32_t width;
    uint32_t *of;              /* [nnodes * width] */
    uint32_t visited;
};

static void keep_vector(void *context, uint32_t v, const uint32_t *vector)
{
    struct vectors *all = context;
    memcpy(&all->of[(size_t)v * all->width], vector, all->width * sizeof *vector);
    all->visited++;
}

/* reach[u * n + v]: v can be reached from u over the graph's arcs (u != v). */
static void reachability(const struct history *h, uint8_t *reach)
{
    uint32_t n = h->nnodes, *stack = malloc((n + 1) * sizeof *stack);
    memset(reach, 0, (size_t)n * n);
    for (uint32_t u = 0; u < n; u++) {
        uint32_t depth = 0;
        stack[depth++] = u;
        while (depth) {
            uint32_t x = stack[--depth], next[2] = { HISTORY_NONE, h->cross_to[x] };
            if (h->kind[x] != HN_END)
                next[0] = x + 1;
            for (int k = 0; k < 2; k++)
                if (next[k] != HISTORY_NONE && !reach[(size_t)u * n + next[k]]) {
                    reach[(size_t)u * n + next[k]] = 1;
                    stack[depth++] = next[k];
                }
        }
    }
    free(stack);
}

/* e happens before f by the vectors (models/vclock.h). */
static int happens_before(const struct vectors *all, const struct history *h, uint32_t e, uint32_t f)
{
    uint32_t p = h->process[e];
    return e != f && all->of[(size_t)e * all->width + p] <= all->of[(size_t)f * all->width + p];
}

/* On random small traces: e happens before f exactly when f is reachable
 * from e; each node's own component counts its process's nodes; the
 * ordered pairs vclock_order counts are those reachability gives. */
static void check_vector_clocks(void)
{
    unsigned seed = 777;
    for (int round = 0; round < 300; round++) {
        struct builder b = { 0 };
        struct dpm_trace t;
        struct model m;
        struct history h;
        struct vclock_order order;
        char err[256];
        random_trace(&b, &t, &m, &seed);
        CHECK(history_build(&h, &t, err, sizeof err) == 0);
        struct vectors all = { h.nprocesses, calloc((size_t)h.nnodes * h.nprocesses + 1, sizeof *all.of), 0 };
        uint8_t *reach = malloc((size_t)h.nnodes * h.nnodes + 1);
        CHECK(vclock_walk(&h, keep_vector, &all) == 0 && all.visited == h.nnodes);
        reachability(&h, reach);
        uint64_t ordered = 0, pairs = 0;
        int agree = 1;
        for (uint32_t e = 0; e < h.nnodes; e++) {
            CHECK(all.of[(size_t)e * all.width + h.process[e]] == e - h.first_node[h.process[e]] + 1);
            for (uint32_t f = 0; f < h.nnodes; f++) {
                agree &= happens_before(&all, &h, e, f) == reach[(size_t)e * h.nnodes + f];
                if (e < f && h.process[e] != h.process[f]) {
                    pairs++;
                    ordered += reach[(size_t)e * h.nnodes + f] || reach[(size_t)f * h.nnodes + e];
                }
            }
        }
        CHECK(agree);
        CHECK(vclock_order(&h, &order) == 0 && order.nodes == h.nnodes && order.pairs == pairs &&
              order.ordered == ordered);
        free(all.of);
        free(reach);
        history_free(&h);
        builder_free(&b, &t);
    }
}

/* The clock model of trace t, with its graph and arrivals kept in *h, *a. */
static void clocks_of(const struct dpm_trace *t, struct history *h, struct arrivals *a, struct clock_model *c,
                      uint64_t min_delay)
{
    char err[256];
    CHECK(history_build(h, t, err, sizeof err) == 0);
    CHECK(arrivals_find(a, h) == 0);
    CHECK(clocks_estimate(c, h, a, min_delay, -1, err, sizeof err) == 0);
}

static void clocks_release(struct history *h, struct arrivals *a, struct clock_model *c)
{
    clocks_free(c);
    arrivals_free(a);
    history_free(h);
}

/* A record stamped by machine m's skewed clock: true time + skew[m]. */
static void stamp(struct builder *b, const int64_t *skew)
{
    struct dpm_event *ev = &b->events[b->nevents - 1];
    ev->time = (uint64_t)((int64_t)ev->time + skew[ev->machine]);
}

/* A random trace on three machines whose records carry TIME = true time
 * + skew[machine]; each message takes min_delay to min_delay + 300 ns of
 * true time. The builder's clock of a process is its true time. */
static void skewed_trace(struct builder *b, struct dpm_trace *t, unsigned *seed, const int64_t *skew,
                         uint64_t min_delay)
{
    int n = 3 + rand_r(seed) % 4;
    struct { uint64_t id, sent; int from; } inbox[8][64];
    int ninbox[8] = { 0 };
    for (int p = 0; p < n; p++) {
        add_process(b, (uint64_t)p + 1, (uint32_t)(p % 3), "s");
        stamp(b, skew);
    }
    for (int step = 0; step < 40; step++) {
        int p = rand_r(seed) % n;
        uint64_t pid = (uint64_t)p + 1;
        size_t bp = find(b, pid);
        compute(b, pid, (uint64_t)(rand_r(seed) % 500));
        if (rand_r(seed) % 2 && ninbox[p] < 64) {
            int q = rand_r(seed) % n;
            inbox[q][ninbox[q]].id = send(b, pid, (uint64_t)q + 1);
            stamp(b, skew);
            inbox[q][ninbox[q]].sent = b->clock[bp];
            inbox[q][ninbox[q]++].from = p;
        } else if (ninbox[p] > 0) {
            uint64_t arrives = inbox[p][0].sent + min_delay + (uint64_t)(rand_r(seed) % 301);
            if (b->clock[bp] < arrives)
                b->clock[bp] = arrives;
            receive(b, pid, (uint64_t)inbox[p][0].from + 1, inbox[p][0].id);
            stamp(b, skew);
            memmove(&inbox[p][0], &inbox[p][1], (size_t)--ninbox[p] * sizeof inbox[p][0]);
        }
    }
    for (int p = 0; p < n; p++) {
        end(b, (uint64_t)p + 1);
        stamp(b, skew);
    }
    finish(b, t);
}

/* Whether the estimated offsets make every message arrive no sooner than
 * min_delay after it was sent (between machines). */
static int offsets_satisfy(const struct history *h, const struct arrivals *a, const struct clock_model *c,
                           uint64_t min_delay)
{
    for (uint32_t v = 0; v < h->nnodes; v++) {
        if (h->cross_kind[v] != HX_MESSAGE)
            continue;
        uint32_t u = h->cross_from[v];
        const struct dpm_event *sent = &h->trace->events[h->event[u]];
        const struct dpm_event *got = &h->trace->events[arrivals_event(a, h, v)];
        if (sent->machine != got->machine &&
            clocks_event_time(c, h, h->process[v], arrivals_event(a, h, v)) - clocks_node_time(c, h, u) <
                (int64_t)min_delay)
            return 0;
    }
    return 1;
}

/* Random skews and delays: each machine's true offset against machine 0
 * lies in its interval and within its bound of the estimate; so do the
 * pairs' direct intervals; nothing is backward once corrected. */
static void check_skewed_traces(void)
{
    unsigned seed = 4242;
    for (int round = 0; round < 300; round++) {
        int64_t skew[3];
        uint64_t min_delay = round % 3 == 0 ? 0 : (uint64_t)(rand_r(&seed) % 1000);
        for (int m = 0; m < 3; m++)
            skew[m] = (int64_t)(rand_r(&seed) % 2000000) + 1000000;
        struct builder b = { 0 };
        struct dpm_trace t;
        struct history h;
        struct arrivals a;
        struct clock_model c;
        skewed_trace(&b, &t, &seed, skew, min_delay);
        clocks_of(&t, &h, &a, &c, min_delay);
        CHECK(c.slack == 0 && c.backward_after == 0 && c.backward_local == 0);
        CHECK(c.machine[c.reference].machine == 0 && c.machine[c.reference].offset == 0);
        for (uint32_t m = 0; m < c.nmachines; m++) {
            const struct clock_machine *cm = &c.machine[m];
            int64_t truth = skew[cm->machine] - skew[0];
            CHECK(cm->low <= truth && truth <= cm->high);
            CHECK(cm->low <= cm->offset && cm->offset <= cm->high);
            if (cm->bound != CLOCKS_UNBOUNDED)
                CHECK(llabs(cm->offset - truth) <= cm->bound);
        }
        int64_t least[3][3];                  /* least[a][b]: the least arrival - send from machine a to b */
        for (int i = 0; i < 9; i++)
            least[i / 3][i % 3] = INT64_MAX;
        for (uint32_t v = 0; v < h.nnodes; v++) {
            if (h.cross_kind[v] != HX_MESSAGE)
                continue;
            const struct dpm_event *sent = &t.events[h.event[h.cross_from[v]]], *got = &t.events[h.event[v]];
            int64_t took = (int64_t)got->time - (int64_t)sent->time;
            if (took < least[sent->machine][got->machine])
                least[sent->machine][got->machine] = took;
        }
        for (uint32_t i = 0; i < c.npairs; i++) {
            const struct clock_pair *p = &c.pair[i];
            uint32_t ma = c.machine[p->a].machine, mb = c.machine[p->b].machine;
            int64_t truth = skew[mb] - skew[ma];
            CHECK(p->low <= truth && truth <= p->high);
            CHECK(p->high == (p->a_to_b ? least[ma][mb] - (int64_t)min_delay : CLOCKS_UNBOUNDED));
            CHECK(p->low == (p->b_to_a ? (int64_t)min_delay - least[mb][ma] : -CLOCKS_UNBOUNDED));
            if (p->a == c.reference)          /* a machine's interval is within its direct pair's */
                CHECK(p->low <= c.machine[p->b].low && c.machine[p->b].high <= p->high);
        }
        CHECK(offsets_satisfy(&h, &a, &c, min_delay));
        clocks_release(&h, &a, &c);
        builder_free(&b, &t);
    }
}

/* A message from process `from` sent at TIME s to process `to` arriving
 * (received at once) at TIME r, each by its own machine's clock. */
static void timed_message(struct builder *b, uint64_t from, uint64_t to, uint64_t s, uint64_t r)
{
    b->clock[find(b, from)] = s;
    uint64_t id = send(b, from, to);
    b->clock[find(b, to)] = r;
    receive(b, to, from, id);
}

/* Three machines, the offsets 0, 1000, -500 (in ns, by the clocks below)
 * and messages taking 10 (0 to 1), 20 (1 to 0), 5 (1 to 2), 7 (2 to 1):
 *   offset(1) - offset(0) <= 1000 + 10 and >= 1000 - 20: [980, 1010];
 *   offset(2) - offset(1) <= -1500 + 5 and >= -1500 - 7: [-1507, -1495];
 *   machine 2, which never talks to machine 0, by the paths through 1:
 *   [980 - 1507, 1010 - 1495] = [-527, -485].
 * The estimates: machine 1 the middle, 995 (bound 15); then machine 2 the
 * middle of what 995 leaves, [995 - 1507, 995 - 1495] = [-512, -500]: -506,
 * within 21 of either end of [-527, -485]. */
static void check_three_machines(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct arrivals a;
    struct clock_model c;
    add_process(&b, 1, 0, "zero");
    add_process(&b, 2, 1, "one");
    add_process(&b, 3, 2, "two");
    timed_message(&b, 1, 2, 100000, 100000 + 10 + 1000);     /* true 100000 -> 100010 */
    timed_message(&b, 2, 1, 200000 + 1000, 200000 + 20);     /* true 200000 -> 200020 */
    timed_message(&b, 2, 3, 300000 + 1000, 300000 + 5 - 500);
    timed_message(&b, 3, 2, 400000 - 500, 400000 + 7 + 1000);
    for (uint64_t p = 1; p <= 3; p++)
        end(&b, p);
    finish(&b, &t);
    clocks_of(&t, &h, &a, &c, 0);
    CHECK(c.nmachines == 3 && c.slack == 0 && c.remote == 4 && c.backward_before == 2 && c.backward_after == 0);
    CHECK(c.machine[1].low == 980 && c.machine[1].high == 1010 && c.machine[1].offset == 995 &&
          c.machine[1].bound == 15);
    CHECK(c.machine[2].low == -527 && c.machine[2].high == -485 && c.machine[2].offset == -506 &&
          c.machine[2].bound == 21);
    CHECK(c.npairs == 2 && c.pair[0].a == 0 && c.pair[0].b == 1 && c.pair[0].low == 980 && c.pair[0].high == 1010);
    CHECK(c.pair[1].a == 1 && c.pair[1].b == 2 && c.pair[1].low == -1507 && c.pair[1].high == -1495);
    clocks_release(&h, &a, &c);
    builder_free(&b, &t);

    /* With --min-delay 5 the same messages narrow machine 1 to [985, 1005]. */
    add_process(&b, 1, 0, "zero");
    add_process(&b, 2, 1, "one");
    timed_message(&b, 1, 2, 100000, 100000 + 10 + 1000);
    timed_message(&b, 2, 1, 200000 + 1000, 200000 + 20);
    end(&b, 1);
    end(&b, 2);
    finish(&b, &t);
    clocks_of(&t, &h, &a, &c, 5);
    CHECK(c.machine[1].low == 985 && c.machine[1].high == 1005 && c.machine[1].offset == 995);
    clocks_release(&h, &a, &c);
    builder_free(&b, &t);
}

/* A move bounds the clocks as a message does. Machine 1 reads 1,000,000
 * ahead. A client on machine 0 sends at true 100 to a server on machine 1,
 * arriving at true 200: offset(1) <= 1,000,200 - 100 = 1,000,100. Heard
 * one way only, machine 1 would be bounded above only (its estimate 0).
 * The server's last record on machine 1 is at true 500, and it reaches
 * machine 0, where its MIGRATE record is at true 800: offset(1) >=
 * 1,000,500 - 800 = 999,700. So [999700, 1000100], 999,900 within 200;
 * the server's records after the move are on machine 0's clock. */
static void check_move_bounds_clocks(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct arrivals a;
    struct clock_model c;
    add_process(&b, 1, 0, "client");
    add_process(&b, 2, 1, "server");
    timed_message(&b, 1, 2, 100, 1000200);
    end(&b, 1);
    b.clock[1] = 1000500;
    send_id(&b, 2, OUTSIDE_PID, 99, 1);             /* its last node on machine 1: a SEND outside the trace */
    move_to(&b, 2, 0, 250, 800);
    b.clock[1] = 900;
    end(&b, 2);
    finish(&b, &t);
    clocks_of(&t, &h, &a, &c, 0);
    CHECK(c.nmachines == 2 && c.remote == 1 && c.moves == 1 && c.slack == 0);
    CHECK(c.machine[1].low == 999700 && c.machine[1].high == 1000100 && c.machine[1].offset == 999900 &&
          c.machine[1].bound == 200);
    uint32_t migrate = h.first_node[1] + 3;          /* server: start, RECEIVE, SEND, MIGRATE, end */
    CHECK(h.kind[migrate] == HN_MIGRATE && clocks_node_time(&c, &h, migrate) == 800 &&
          clocks_node_time(&c, &h, migrate - 1) == 1000500 - 999900);
    clocks_release(&h, &a, &c);
    builder_free(&b, &t);
}

/* Clocks no constant offset explains: 0 -> 1 arrives 100 before it was
 * sent (offset(1) - offset(0) <= -100), 1 -> 0 arrives 50 before
 * (offset(1) - offset(0) >= 50). With a slack s on each: -100 + s >= 50 -
 * s, so s = 75 and the offset -25, each message 75 backward. A machine
 * heard only one way is bounded on one side: its estimate the end nearest
 * 0, here with the slack: it too is 75 backward. A machine never heard:
 * unbounded, 0. */
static void check_inconsistent_clocks(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct arrivals a;
    struct clock_model c;
    add_process(&b, 1, 0, "zero");
    add_process(&b, 2, 1, "one");
    add_process(&b, 3, 2, "two");
    add_process(&b, 4, 3, "three");
    timed_message(&b, 1, 2, 1000, 900);
    timed_message(&b, 2, 1, 2000, 1950);
    timed_message(&b, 1, 3, 5000, 4000);                    /* offset(2) <= -1000 */
    for (uint64_t p = 1; p <= 4; p++)
        end(&b, p);
    finish(&b, &t);
    clocks_of(&t, &h, &a, &c, 0);
    CHECK(c.slack == 75 && c.machine[1].offset == -25 && c.backward_before == 3 && c.backward_after == 3);
    CHECK(c.machine[2].low == -CLOCKS_UNBOUNDED && c.machine[2].offset == -1000 + 75 &&
          c.machine[2].bound == CLOCKS_UNBOUNDED);
    CHECK(c.machine[3].low == -CLOCKS_UNBOUNDED && c.machine[3].high == CLOCKS_UNBOUNDED && c.machine[3].offset == 0);
    clocks_release(&h, &a, &c);
    builder_free(&b, &t);

    /* Records naming more machines than a pid can (a damaged log): refused. */
    char err[256];
    add_process(&b, 1, 0, "many");
    for (uint32_t m = 0; m < 300; m++) {
        send(&b, 1, OUTSIDE_PID);
        b.events[b.nevents - 1].machine = m;
    }
    end(&b, 1);
    finish(&b, &t);
    CHECK(history_build(&h, &t, err, sizeof err) == 0 && arrivals_find(&a, &h) == 0);
    CHECK(clocks_estimate(&c, &h, &a, 0, -1, err, sizeof err) == -1 && strstr(err, "a damaged log"));
    CHECK(clocks_estimate(&c, &h, &a, 0, 999, err, sizeof err) == -1);
    arrivals_free(&a);
    history_free(&h);
    builder_free(&b, &t);
}

/* ---- a million records ---- */

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* 16 processes on 4 machines, 500,000 messages between them: the time of
 * the history graph, the four steps and the critical path. Printed only:
 * the machine running the test decides it (and the sanitizers slow it). */
static void measure_a_million(void)
{
    struct builder b = { 0 };
    struct dpm_trace t;
    struct history h;
    struct critpath c;
    struct delay_table d;
    char err[256];
    uint32_t machine[16];
    enum { N = 16 };
    for (uint64_t p = 0; p < N; p++)
        add_process(&b, p + 1, (uint32_t)(p % 4), "worker");
    for (uint64_t i = 0; b.nevents < 1000000 - 2 * N; i++) {
        uint64_t from = i % N + 1, to = (i * 7 + 3) % N + 1;
        if (to == from)
            to = to % N + 1;
        compute(&b, from, 100 + i % 37);
        uint64_t id = send(&b, from, to);
        compute(&b, to, 50);
        receive(&b, to, from, id);
    }
    for (uint64_t p = 0; p < N; p++)
        end(&b, p + 1);
    finish(&b, &t);
    delay_table_default(&d);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    CHECK(history_build(&h, &t, err, sizeof err) == 0);
    double built = seconds_since(&start);
    placement_measured(machine, &h);
    for (int step = STEP_UPPER_BOUND; step <= STEP_CONTENTION_SIMULATED; step++) {
        struct parallel_result r;
        CHECK(parallel_step_run(&r, 0, &h, (enum parallel_step)step, GRAPH_ELAPSED_ARCS, machine, &d, err,
                                sizeof err) == 0);
        CHECK(r.parallelism > 0 && r.parallelism <= N);
    }
    double steps = seconds_since(&start);
    CHECK(critpath_find(&c, &h, STEP_DELIVERY, GRAPH_ELAPSED_ARCS, machine, &d, err, sizeof err) == 0);
    double total = seconds_since(&start);
    printf("dpm_graph_test: %zu records: history graph %.3f s, the four steps %.3f s, critical path %.3f s, "
           "all %.3f s%s\n",
           t.nevents, built, steps - built, total - steps, total,
#if defined(__SANITIZE_ADDRESS__)
           " (under the sanitizers)"
#else
           ""
#endif
    );
    critpath_free(&c);
    history_free(&h);
    builder_free(&b, &t);
}

int main(int argc, char **argv)
{
    check_hand_cases();
    check_moves();
    check_random_traces();
    check_outside_arc();
    check_untraced_clients();
    check_odd_traces();
    check_critical_path();
    check_return_addresses_name_the_caller();
    check_timeline();
    check_fig2_shapes();
    check_fan_out();
    check_fig5_18();
    check_delays();
    check_vector_clocks();
    check_skewed_traces();
    check_three_machines();
    check_move_bounds_clocks();
    check_inconsistent_clocks();
    check_elf();
    if (!(argc > 1 && strcmp(argv[1], "--quick") == 0))
        measure_a_million();
    if (failures) {
        printf("dpm_graph_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("dpm_graph_test: %d checks passed\n", checks);
    return 0;
}
