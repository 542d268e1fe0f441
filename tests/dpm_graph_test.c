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
#include "models/causality.h"
#include "models/critpath.h"
#include "models/history.h"
#include "models/parallel.h"

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
    ev->machine = b->process[p].machine;
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
    p->machine = machine;
    snprintf(p->name, sizeof p->name, "%s", name);
    add_event(b, pid, MT_CREATEPROCESS);
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
    t->by_process = malloc(b->nevents * sizeof *t->by_process + 1);
    uint32_t at = 0;
    for (size_t p = 0; p < b->nprocesses; p++) {
        b->process[p].first = at;
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
    check_random_traces();
    check_outside_arc();
    check_untraced_clients();
    check_odd_traces();
    check_critical_path();
    check_fig2_shapes();
    check_fan_out();
    check_fig5_18();
    check_delays();
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
