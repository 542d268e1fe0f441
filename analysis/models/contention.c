/*
 * analysis/models/contention.c — parallelism's step 3 (thesis §5.2.3):
 * processes placed on one machine share its CPU, so each arc within a
 * process is reweighed by simulating the run over the history graph. A
 * process is runnable unless it waits in a RECEIVE whose message has not
 * arrived, or has ended.
 *
 * A process runs on the machine the placement puts it on; placed as
 * measured, a process that moved runs on each machine it was on, from the
 * MIGRATE node that took it there on (models/parallel.h).
 *
 * Two simulations, reported side by side (the second is this project's):
 *   - contention_thesis: the thesis's algorithm (Appendix A), faithfully:
 *     time advances in steps of `decr`, the least CPU any running process
 *     still needs for its current arc, and each running process's arc
 *     gains decr × (runnable processes on its machine). Its quirks are
 *     kept: message delays count down by decr, CPU units rather than
 *     elapsed time; and when every process waits on a message in flight
 *     decr is undefined -- we break that stall by letting the smallest
 *     pending delay elapse.
 *   - contention_simulated: a discrete-event simulation in elapsed time:
 *     each runnable process on machine m advances at 1/k_m of real speed
 *     (k_m runnable there), delays elapse in elapsed time, and an arc
 *     weighs the elapsed time from its start to its end.
 * Both then leave the message arcs as step 2 weighed them; the caller
 * recomputes t_max.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/parallel.h"

/* Remaining work or delay at most this small is done: the elapsed-time
 * simulation divides, and weights are whole nanoseconds. */
#define SIM_EPSILON 1e-6

enum runner_state { RUNNING, WAITING, DONE };

/* A message in flight: its RECEIVE node and the delay it still has. */
struct delivery {
    double remaining;
    uint32_t receive;
};

/* The state both simulations share. */
struct sim {
    const struct history *h;
    const struct history_weights *w;  /* chain: CPU per arc; cross: step 2's delivery times */
    double *out;              /* [nnodes]: the new weight of the arc ending at each node */
    const uint32_t *placement;  /* models/parallel.h */
    uint32_t *machines;       /* the placement's machine numbers, sorted, each once */
    uint32_t nmachines;
    uint32_t *on;             /* [nprocesses]: where it runs now (an index into machines) */
    uint32_t *runnable;       /* [nmachines]: runnable processes there */
    uint32_t *at;             /* [nprocesses]: the node it is at; its current arc ends at at+1 */
    uint8_t *state;           /* [nprocesses]: enum runner_state */
    double *remaining;        /* [nprocesses]: CPU its current arc still needs */
    double *started;          /* [nprocesses]: when its current arc began (elapsed time) */
    uint8_t *arrived;         /* [nnodes]: 1 bit: the message of this RECEIVE has arrived; 2: SEND issued */
    uint32_t *active;         /* processes not DONE */
    uint32_t nactive;
    struct delivery *pending;
    uint32_t npending;
    double now;               /* elapsed time (the simulation only) */
};

enum { ARRIVED = 1, ISSUED = 2 };

static int by_machine(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The machines the placement puts nodes on, each once, into s->machines
 * (any uint32 may name a machine; a process placed as measured may be on
 * several, one after another). 0, or -1 (no memory). */
static int find_machines(struct sim *s)
{
    const struct history *h = s->h;
    uint32_t n = 0, capacity = h->nprocesses + 1;
    s->machines = malloc(capacity * sizeof *s->machines);
    for (uint32_t p = 0; p < h->nprocesses && s->machines; p++) {
        for (uint32_t v = h->first_node[p], last = UINT32_MAX; v < h->first_node[p + 1]; v++) {
            uint32_t m = placement_node(h, s->placement, v);
            if (v > h->first_node[p] && m == last)
                continue;
            if (n == capacity) {
                uint32_t *bigger = realloc(s->machines, 2 * capacity * sizeof *bigger);
                if (!bigger)
                    return -1;
                s->machines = bigger;
                capacity *= 2;
            }
            s->machines[n++] = last = m;
        }
    }
    if (!s->machines)
        return -1;
    qsort(s->machines, n, sizeof *s->machines, by_machine);
    s->nmachines = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || s->machines[i] != s->machines[i - 1])
            s->machines[s->nmachines++] = s->machines[i];
    return 0;
}

/* Where node v's process runs from v on: an index into s->machines. */
static uint32_t machine_at(const struct sim *s, uint32_t v)
{
    uint32_t m = placement_node(s->h, s->placement, v), low = 0, high = s->nmachines;
    while (high - low > 1) {
        uint32_t mid = low + (high - low) / 2;
        if (s->machines[mid] <= m)
            low = mid;
        else
            high = mid;
    }
    return low;
}

static void sim_free(struct sim *s)
{
    free(s->out);
    free(s->machines);
    free(s->on);
    free(s->runnable);
    free(s->at);
    free(s->state);
    free(s->remaining);
    free(s->started);
    free(s->arrived);
    free(s->active);
    free(s->pending);
}

/* Start process p's current arc (the one ending at node at+1) now. */
static void start_arc(struct sim *s, uint32_t p)
{
    uint32_t next = s->at[p] + 1;
    s->remaining[p] = (double)s->w->chain[next];
    s->started[p] = s->now;
    s->out[next] = 0;
}

/* Whether node v is a RECEIVE that must still wait for its message. A
 * RECEIVE whose SEND is not in the trace waits for nothing. */
static int must_wait(const struct sim *s, uint32_t v)
{
    return s->h->kind[v] == HN_RECEIVE && s->h->cross_from[v] != HISTORY_NONE && !(s->arrived[v] & ARRIVED);
}

/* Process p has reached node at[p] (thesis Appendix A, step 6): it ends,
 * waits in a RECEIVE, or goes on running its next arc, on the machine it
 * has moved to if it moved (a MIGRATE node). */
static void arrive_at_node(struct sim *s, uint32_t p)
{
    uint32_t v = s->at[p], m = machine_at(s, v);
    if (m != s->on[p]) {
        s->runnable[s->on[p]]--;
        s->runnable[m]++;
        s->on[p] = m;
    }
    if (s->h->kind[v] == HN_END || must_wait(s, v)) {
        s->state[p] = s->h->kind[v] == HN_END ? DONE : WAITING;
        s->runnable[s->on[p]]--;
        return;
    }
    start_arc(s, p);
}

/* Everything at its start: every process runnable at its start node (the
 * thesis starts one whose first event is a RECEIVE waiting; here its
 * start node comes first, and it stops at that RECEIVE after the CPU
 * before it). */
static int sim_init(struct sim *s, const struct history *h, const struct history_weights *w, const uint32_t *machine)
{
    uint32_t np = h->nprocesses, nn = h->nnodes;
    memset(s, 0, sizeof *s);
    s->h = h;
    s->w = w;
    s->placement = machine;
    s->out = calloc(nn + 1, sizeof *s->out);
    s->on = malloc(np * sizeof *s->on + 1);
    s->at = malloc(np * sizeof *s->at + 1);
    s->state = malloc(np + 1);
    s->remaining = malloc(np * sizeof *s->remaining + 1);
    s->started = malloc(np * sizeof *s->started + 1);
    s->arrived = calloc(nn + 1, 1);
    s->active = malloc(np * sizeof *s->active + 1);
    s->pending = malloc(nn * sizeof *s->pending + 1);
    if (!s->out || !s->on || !s->at || !s->state || !s->remaining || !s->started || !s->arrived || !s->active ||
        !s->pending || find_machines(s) < 0 || !(s->runnable = calloc(s->nmachines + 1, sizeof *s->runnable)))
        return -1;
    for (uint32_t p = 0; p < np; p++) {
        s->state[p] = DONE;
        if (h->first_node[p] == h->first_node[p + 1])
            continue;                   /* a process without records */
        s->at[p] = h->first_node[p];
        s->state[p] = RUNNING;
        s->on[p] = machine_at(s, s->at[p]);
        s->runnable[s->on[p]]++;
        s->active[s->nactive++] = p;
        start_arc(s, p);
    }
    return 0;
}

/* Appendix A, step 1: each delivery whose delay has run out marks its RECEIVE. */
static void deliver_due(struct sim *s)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->npending; i++) {
        if (s->pending[i].remaining <= SIM_EPSILON)
            s->arrived[s->pending[i].receive] |= ARRIVED;
        else
            s->pending[kept++] = s->pending[i];
    }
    s->npending = kept;
}

/* Appendix A, step 2: each process at a SEND not yet issued starts its
 * message's delay, or delivers it at once if the delay is 0. */
static void issue_sends(struct sim *s)
{
    for (uint32_t i = 0; i < s->nactive; i++) {
        uint32_t v = s->at[s->active[i]], to = s->h->cross_to[v];
        if (s->h->kind[v] != HN_SEND || to == HISTORY_NONE || (s->arrived[v] & ISSUED))
            continue;
        s->arrived[v] |= ISSUED;
        if (s->w->cross[to] == 0)
            s->arrived[to] |= ARRIVED;
        else
            s->pending[s->npending++] = (struct delivery){ (double)s->w->cross[to], to };
    }
}

/* Appendix A, step 3: each process waiting at a RECEIVE whose message has
 * arrived runs again. */
static void wake_waiting(struct sim *s)
{
    for (uint32_t i = 0; i < s->nactive; i++) {
        uint32_t p = s->active[i];
        if (s->state[p] == WAITING && !must_wait(s, s->at[p])) {
            s->state[p] = RUNNING;
            s->runnable[s->on[p]]++;
            start_arc(s, p);
        }
    }
}

/* Forget the processes that have ended. */
static void drop_done(struct sim *s)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->nactive; i++)
        if (s->state[s->active[i]] != DONE)
            s->active[kept++] = s->active[i];
    s->nactive = kept;
}

/* Appendix A, step 6 (and the simulation's arc ends): each running
 * process whose arc is done moves on to the next node. */
static void finish_arcs(struct sim *s, int elapsed)
{
    for (uint32_t i = 0; i < s->nactive; i++) {
        uint32_t p = s->active[i];
        if (s->state[p] != RUNNING || s->remaining[p] > SIM_EPSILON)
            continue;
        if (elapsed)
            s->out[s->at[p] + 1] = s->now - s->started[p];
        s->at[p]++;
        arrive_at_node(s, p);
    }
    drop_done(s);
}

/* The smallest pending delay, or -1 if none is pending. */
static double smallest_delay(const struct sim *s)
{
    double least = -1;
    for (uint32_t i = 0; i < s->npending; i++)
        if (least < 0 || s->pending[i].remaining < least)
            least = s->pending[i].remaining;
    return least;
}

/* Every pending delay shortens by `by` (Appendix A, step 5). */
static void count_down_delays(struct sim *s, double by)
{
    for (uint32_t i = 0; i < s->npending; i++)
        s->pending[i].remaining -= by;
}

/* The arcs' new weights, rounded to whole ns, into w->chain. */
static void sim_result(struct sim *s, struct history_weights *w)
{
    for (uint32_t v = 0; v < s->h->nnodes; v++)
        w->chain[v] = (uint64_t)(s->out[v] + 0.5);
}

/* sim_init for either algorithm: 0, or -1 with nothing held and err saying why. */
static int sim_start(struct sim *s, const struct history *h, const struct history_weights *w,
                     const uint32_t *machine, char *err, size_t cap)
{
    if (sim_init(s, h, w, machine) == 0)
        return 0;
    sim_free(s);
    snprintf(err, cap, "no memory for the contention of %u nodes", h->nnodes);
    return -1;
}

/* Only an inconsistent graph stops both processes and deliveries; the
 * history graph is checked acyclic, so this says so rather than loops
 * (and lets the simulation go). */
static int stalled(struct sim *s, char *err, size_t cap)
{
    sim_free(s);
    snprintf(err, cap, "contention: every process waits for a message that is not on its way");
    return -1;
}

/* Appendix A, step 4: the least CPU a running process's arc still needs,
 * or -1 if none runs. */
static double smallest_remaining(const struct sim *s, int scaled)
{
    double least = -1;
    for (uint32_t i = 0; i < s->nactive; i++) {
        uint32_t p = s->active[i];
        double r = s->remaining[p] * (scaled ? s->runnable[s->on[p]] : 1);
        if (s->state[p] == RUNNING && (least < 0 || r < least))
            least = r;
    }
    return least;
}

/* Step 3 by the thesis's algorithm (Appendix A; the file's comment). */
int contention_thesis(struct history_weights *w, const struct history *h, const uint32_t *machine, char *err,
                      size_t cap)
{
    struct sim s;
    if (sim_start(&s, h, w, machine, err, cap) < 0)
        return -1;
    while (s.nactive || s.npending) {
        deliver_due(&s);
        issue_sends(&s);
        wake_waiting(&s);
        double decr = smallest_remaining(&s, 0);
        if (decr < 0)
            decr = smallest_delay(&s);  /* the stall: let the nearest delivery arrive */
        if (decr < 0)
            return stalled(&s, err, cap);
        for (uint32_t i = 0; i < s.nactive; i++) {
            uint32_t p = s.active[i];
            if (s.state[p] != RUNNING)
                continue;
            s.remaining[p] -= decr;
            s.out[s.at[p] + 1] += decr * s.runnable[s.on[p]];
        }
        count_down_delays(&s, decr);
        finish_arcs(&s, 0);
    }
    sim_result(&s, w);
    sim_free(&s);
    return 0;
}

/* Step 3 by simulation in elapsed time (the file's comment): the next
 * event is the first arc to end, at 1/k_m speed, or the first delivery. */
int contention_simulated(struct history_weights *w, const struct history *h, const uint32_t *machine, char *err,
                         size_t cap)
{
    struct sim s;
    if (sim_start(&s, h, w, machine, err, cap) < 0)
        return -1;
    while (s.nactive || s.npending) {
        deliver_due(&s);
        issue_sends(&s);
        wake_waiting(&s);
        double step = smallest_remaining(&s, 1), delay = smallest_delay(&s);
        if (step < 0 || (delay >= 0 && delay < step))
            step = delay;
        if (step < 0)
            return stalled(&s, err, cap);
        s.now += step;
        for (uint32_t i = 0; i < s.nactive; i++) {
            uint32_t p = s.active[i];
            if (s.state[p] == RUNNING)
                s.remaining[p] -= step / s.runnable[s.on[p]];
        }
        count_down_delays(&s, step);
        finish_arcs(&s, 1);
    }
    sim_result(&s, w);
    sim_free(&s);
    return 0;
}
