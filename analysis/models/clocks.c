/*
 * analysis/models/clocks.c — the machines' clock offsets from the messages
 * between them, their bounds, and the corrected times (models/clocks.h
 * says the model and the method).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/clocks.h"

#define NO_PATH INT64_MAX      /* no constraint (no path) between two machines */
#define MACHINES_MAX 256       /* machines a pid can name (load/event.h, DPM_PID_MACHINE) */

/* a + b, NO_PATH if either is, and saturated short of NO_PATH. */
static int64_t add(int64_t a, int64_t b)
{
    int64_t sum;
    if (a == NO_PATH || b == NO_PATH)
        return NO_PATH;
    if (__builtin_add_overflow(a, b, &sum))
        return a > 0 ? NO_PATH - 1 : INT64_MIN + 1;
    return sum == NO_PATH ? NO_PATH - 1 : sum;
}

/* The machine whose clock stamped ev (models/clocks.h). */
uint32_t clocks_machine_of(const struct history *h, uint32_t p, const struct dpm_event *ev)
{
    (void)h, (void)p;
    return ev->machine;
}

/* The index of machine number m in c->machine, or UINT32_MAX. */
uint32_t clocks_machine_index(const struct clock_model *c, uint32_t m)
{
    uint32_t low = 0, high = c->nmachines;
    while (low < high) {
        uint32_t mid = low + (high - low) / 2;
        if (c->machine[mid].machine < m)
            low = mid + 1;
        else
            high = mid;
    }
    return low < c->nmachines && c->machine[low].machine == m ? low : UINT32_MAX;
}

/* Add machine number m to the sorted list, if new. 0, or -1 (no memory). */
static int note_machine(struct clock_model *c, uint32_t m)
{
    if (clocks_machine_index(c, m) != UINT32_MAX)
        return 0;
    struct clock_machine *bigger = realloc(c->machine, (c->nmachines + 1) * sizeof *bigger);
    if (!bigger)
        return -1;
    c->machine = bigger;
    uint32_t at = 0;
    while (at < c->nmachines && c->machine[at].machine < m)
        at++;
    memmove(&c->machine[at + 1], &c->machine[at], (c->nmachines - at) * sizeof *c->machine);
    c->machine[at] = (struct clock_machine){ .machine = m };
    c->nmachines++;
    return 0;
}

/* Every machine that stamped a node, then each node's machine (its index
 * in c->machine) into node_machine[nnodes]. 0, or -1 (no memory, or more
 * than MACHINES_MAX: c->nmachines says which). */
static int find_machines(struct clock_model *c, const struct history *h, uint16_t *node_machine)
{
    uint32_t last = UINT32_MAX, index = 0;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        uint32_t m = h->machine[v];
        if (m != last && (note_machine(c, m) < 0 || c->nmachines > MACHINES_MAX))
            return -1;
        last = m;
    }
    last = UINT32_MAX;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        uint32_t m = h->machine[v];
        if (m != last)
            index = clocks_machine_index(c, m);
        last = m;
        node_machine[v] = (uint16_t)index;
    }
    return 0;
}

/* A timed message: its arrival minus its send, by the machines' own
 * clocks, and the machines (indices) it went from and to; or a move, from
 * the process's last node on the machine it left to its MIGRATE node. */
struct timed_message {
    int64_t took;
    uint16_t from, to;
    uint8_t move;
};

/* The direct pair of machines a < b, made when new (index[] holds n x n). */
static struct clock_pair *pair_of(struct clock_model *c, uint32_t *index, uint32_t a, uint32_t b)
{
    uint32_t n = c->nmachines, low = a < b ? a : b, high = a < b ? b : a;
    if (index[low * n + high] == UINT32_MAX) {
        index[low * n + high] = c->npairs;
        c->pair[c->npairs++] = (struct clock_pair){ low, high, 0, 0, -CLOCKS_UNBOUNDED, CLOCKS_UNBOUNDED };
    }
    return &c->pair[index[low * n + high]];
}

/* The timed messages into list[] (room for every message arc), their
 * count. A message arrives on the machine of its arrival record (at a
 * RECEIVE node, the node's). */
static uint32_t timed_messages(struct clock_model *c, const struct history *h, const struct arrivals *a,
                               const uint16_t *node_machine, struct timed_message *list)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        if (h->cross_kind[v] != HX_MESSAGE)
            continue;
        uint32_t u = h->cross_from[v], arrived = arrivals_event(a, h, v);
        const struct dpm_event *send = &h->trace->events[h->event[u]], *arrival = &h->trace->events[arrived];
        c->messages++;
        if (!(send->present & EV_TIME) || !(arrival->present & EV_TIME)) {
            c->untimed++;
            continue;
        }
        uint32_t to = arrived == h->event[v] ? node_machine[v]
                                             : clocks_machine_index(c, clocks_machine_of(h, h->process[v], arrival));
        list[n++] = (struct timed_message){ (int64_t)arrival->time - (int64_t)send->time, node_machine[u],
                                            (uint16_t)(to == UINT32_MAX ? node_machine[v] : to), 0 };
    }
    return n;
}

/* The arcs along processes between two machines (a process's moves: the
 * arc into its MIGRATE node), timed, into list[] after the messages: the
 * process's state crossed from one machine to the other as a message does,
 * and bounds their clocks the same way. Their count. */
static uint32_t timed_moves(struct clock_model *c, const struct history *h, const uint16_t *node_machine,
                            struct timed_message *list)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        if (h->kind[v] == HN_START || node_machine[v - 1] == node_machine[v])
            continue;
        const struct dpm_event *left = &h->trace->events[h->event[v - 1]], *came = &h->trace->events[h->event[v]];
        if (!(left->present & EV_TIME) || !(came->present & EV_TIME))
            continue;
        c->moves++;
        list[n++] = (struct timed_message){ (int64_t)came->time - (int64_t)left->time, node_machine[v - 1],
                                            node_machine[v], 1 };
    }
    return n;
}

/* The arcs along processes between two machines, timed or not. */
static uint32_t count_moves(const struct history *h, const uint16_t *node_machine)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < h->nnodes; v++)
        n += h->kind[v] != HN_START && node_machine[v - 1] != node_machine[v];
    return n;
}

/* The constraints: w[a * n + b] = min over timed messages from machine a
 * to machine b of (arrival - send) - min_delay, NO_PATH without any; the
 * counts of messages, and the pairs' direct intervals. */
static void constrain(struct clock_model *c, const struct timed_message *list, uint32_t count, int64_t *w,
                      uint32_t *pair_index)
{
    uint32_t n = c->nmachines;
    for (uint32_t i = 0; i < count; i++) {
        struct timed_message e = list[i];
        int64_t took = e.took;
        if (!e.move) {
            c->backward_before += took < 0;
            if (e.from == e.to) {
                c->backward_local += took < 0;
                continue;
            }
            c->remote++;
            c->machine[e.from].sent++;
            c->machine[e.to].received++;
        }
        int64_t limit = add(took, -(int64_t)c->min_delay);
        if (limit < w[e.from * n + e.to])
            w[e.from * n + e.to] = limit;
        struct clock_pair *p = pair_of(c, pair_index, e.from, e.to);
        if (e.from == p->a) {
            p->a_to_b += !e.move;
            p->high = w[e.from * n + e.to];
        } else {
            p->b_to_a += !e.move;
            p->low = -w[e.from * n + e.to];
        }
    }
}

/* Shortest paths over the constraints w, each arc `slack` longer, into d.
 * Whether they have no negative cycle (constant offsets exist). */
static int shortest_paths(int64_t *d, const int64_t *w, uint32_t n, int64_t slack)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            d[i * n + j] = i == j ? 0 : add(w[i * n + j], slack);
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t i = 0; i < n; i++) {
            int64_t ik = d[i * n + k];
            if (ik == NO_PATH)
                continue;
            for (uint32_t j = 0; j < n; j++) {
                int64_t through = add(ik, d[k * n + j]);
                if (through < d[i * n + j])
                    d[i * n + j] = through;
            }
        }
    for (uint32_t i = 0; i < n; i++)
        if (d[i * n + i] < 0)
            return 0;
    return 1;
}

/* The smallest slack making the constraints satisfiable, d their shortest
 * paths with it: 0 when they are as they are, else a binary search up to
 * the largest backward step, with which every arc is non-negative. */
static int64_t least_slack(int64_t *d, const int64_t *w, uint32_t n)
{
    if (shortest_paths(d, w, n, 0))
        return 0;
    int64_t infeasible = 0, feasible = 0;
    for (uint32_t i = 0; i < n * n; i++)
        if (w[i] != NO_PATH && -w[i] > feasible)
            feasible = -w[i];
    while (feasible - infeasible > 1) {
        int64_t mid = infeasible + (feasible - infeasible) / 2;
        if (shortest_paths(d, w, n, mid))
            feasible = mid;
        else
            infeasible = mid;
    }
    shortest_paths(d, w, n, feasible);
    return feasible;
}

/* Machine m's interval against reference r under the shortest paths d. */
static void interval(const int64_t *d, uint32_t n, uint32_t r, uint32_t m, int64_t *low, int64_t *high)
{
    *low = d[m * n + r] == NO_PATH ? -CLOCKS_UNBOUNDED : -d[m * n + r];
    *high = d[r * n + m] == NO_PATH ? CLOCKS_UNBOUNDED : d[r * n + m];
}

/* Fix offset[m] = value against r: the arcs r -> m (value) and m -> r
 * (-value) added, and the shortest paths d brought up to date with them
 * (a shortest path takes at most one of the two; rows and columns of r
 * and m are read as they were before). */
static int fix_offset(int64_t *d, uint32_t n, uint32_t r, uint32_t m, int64_t value)
{
    int64_t *to_r = malloc(4 * (size_t)n * sizeof *to_r + 1);
    if (!to_r)
        return -1;
    int64_t *to_m = to_r + n, *from_r = to_r + 2 * n, *from_m = to_r + 3 * n;
    for (uint32_t i = 0; i < n; i++) {
        to_r[i] = d[i * n + r];
        to_m[i] = d[i * n + m];
        from_r[i] = d[r * n + i];
        from_m[i] = d[m * n + i];
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            int64_t via_rm = add(add(to_r[i], value), from_m[j]), via_mr = add(add(to_m[i], -value), from_r[j]);
            int64_t best = via_rm < via_mr ? via_rm : via_mr;
            if (best < d[i * n + j])
                d[i * n + j] = best;
        }
    free(to_r);
    return 0;
}

/* The estimates, machine by machine (models/clocks.h): each the middle of
 * what is left to it, then fixed. Intervals and bounds are those of the
 * trace alone (before any machine is fixed). */
static int estimate(struct clock_model *c, int64_t *d)
{
    uint32_t n = c->nmachines, r = c->reference;
    for (uint32_t m = 0; m < n; m++)
        interval(d, n, r, m, &c->machine[m].low, &c->machine[m].high);
    for (uint32_t m = 0; m < n; m++) {
        struct clock_machine *cm = &c->machine[m];
        int64_t low, high, value;
        interval(d, n, r, m, &low, &high);
        if (low != -CLOCKS_UNBOUNDED && high != CLOCKS_UNBOUNDED)
            value = low + (high - low) / 2;
        else if (high != CLOCKS_UNBOUNDED)
            value = high < 0 ? high : 0;
        else if (low != -CLOCKS_UNBOUNDED)
            value = low > 0 ? low : 0;
        else
            value = 0;
        cm->offset = value;
        cm->bound = cm->low == -CLOCKS_UNBOUNDED || cm->high == CLOCKS_UNBOUNDED
                        ? CLOCKS_UNBOUNDED
                        : (value - cm->low > cm->high - value ? value - cm->low : cm->high - value);
        if (m != r && fix_offset(d, n, r, m, value) < 0)
            return -1;
    }
    return 0;
}

/* Each node's offset, and the messages still backward once corrected. */
static void apply(struct clock_model *c, const struct history *h, const uint16_t *node_machine,
                  const struct timed_message *list, uint32_t count)
{
    for (uint32_t v = 0; v < h->nnodes; v++)
        c->node_offset[v] = c->machine[node_machine[v]].offset;
    for (uint32_t i = 0; i < count; i++)
        c->backward_after += !list[i].move &&
                             list[i].took < c->machine[list[i].to].offset - c->machine[list[i].from].offset;
}

/* The offsets (models/clocks.h). */
int clocks_estimate(struct clock_model *c, const struct history *h, const struct arrivals *a, uint64_t min_delay,
                    int64_t reference, char *err, size_t cap)
{
    memset(c, 0, sizeof *c);
    c->min_delay = min_delay;
    uint16_t *node_machine = malloc((size_t)h->nnodes * sizeof *node_machine + 1);
    struct timed_message *list = 0;
    c->node_offset = malloc((size_t)h->nnodes * sizeof *c->node_offset + 1);
    if (node_machine && c->node_offset && find_machines(c, h, node_machine) == 0)
        list = malloc(((size_t)h->message_arcs + count_moves(h, node_machine)) * sizeof *list + 1);
    if (!node_machine || !list || !c->node_offset) {
        if (c->nmachines > MACHINES_MAX)
            snprintf(err, cap, "the records name more than the %d machines a pid can name: a damaged log",
                     MACHINES_MAX);
        else
            snprintf(err, cap, "no memory for the clocks of %u nodes", h->nnodes);
        free(node_machine);
        free(list);
        clocks_free(c);
        return -1;
    }
    if (reference >= 0 && (reference > UINT32_MAX || clocks_machine_index(c, (uint32_t)reference) == UINT32_MAX)) {
        snprintf(err, cap, "--reference %lld: no SEND, RECEIVE or first or last record of a process was stamped "
                           "by that machine", (long long)reference);
        free(node_machine);
        free(list);
        clocks_free(c);
        return -2;
    }
    c->reference = reference >= 0 ? clocks_machine_index(c, (uint32_t)reference) : 0;
    size_t n = c->nmachines;
    int64_t *w = malloc(n * n * sizeof *w + 1), *d = malloc(n * n * sizeof *d + 1);
    uint32_t *pair_index = malloc(n * n * sizeof *pair_index + 1);
    c->pair = malloc(n * n * sizeof *c->pair + 1);
    int ok = w && d && pair_index && c->pair;
    if (ok) {
        for (size_t i = 0; i < n * n; i++)
            w[i] = NO_PATH;
        memset(pair_index, 0xff, n * n * sizeof *pair_index);
        uint32_t count = timed_messages(c, h, a, node_machine, list);
        count += timed_moves(c, h, node_machine, list + count);
        constrain(c, list, count, w, pair_index);
        c->slack = (uint64_t)least_slack(d, w, (uint32_t)n);
        ok = n == 0 || estimate(c, d) == 0;
        if (ok)
            apply(c, h, node_machine, list, count);
    }
    free(node_machine);
    free(list);
    free(w);
    free(d);
    free(pair_index);
    if (!ok) {
        snprintf(err, cap, "no memory for the clocks of %zu machines", n);
        clocks_free(c);
        return -1;
    }
    return 0;
}

void clocks_free(struct clock_model *c)
{
    free(c->machine);
    free(c->pair);
    free(c->node_offset);
    memset(c, 0, sizeof *c);
}

/* Node v's corrected TIME (models/clocks.h). */
int64_t clocks_node_time(const struct clock_model *c, const struct history *h, uint32_t v)
{
    return (int64_t)h->trace->events[h->event[v]].time - c->node_offset[v];
}

/* Record `event` of process p's corrected TIME (models/clocks.h). */
int64_t clocks_event_time(const struct clock_model *c, const struct history *h, uint32_t p, uint32_t event)
{
    const struct dpm_event *ev = &h->trace->events[event];
    uint32_t m = clocks_machine_index(c, clocks_machine_of(h, p, ev));
    return (int64_t)ev->time - (m == UINT32_MAX ? 0 : c->machine[m].offset);
}

/* Display times (models/clocks.h): in topological order, the corrected
 * time, or later if a node before it (in its process, or its message's
 * SEND) is later. A node without TIME takes the latest of those. */
uint64_t clocks_display_times(const struct clock_model *c, const struct history *h, int64_t *out)
{
    uint64_t moved = 0;
    for (uint32_t i = 0; i < h->nnodes; i++) {
        uint32_t v = h->order[i], from = h->cross_from[v];
        int has_time = (h->trace->events[h->event[v]].present & EV_TIME) != 0;
        int64_t own = has_time ? clocks_node_time(c, h, v) : INT64_MIN, at = own;
        if (h->kind[v] != HN_START && out[v - 1] > at)
            at = out[v - 1];
        if (from != HISTORY_NONE && out[from] > at)
            at = out[from];
        if (at == INT64_MIN)
            at = 0;
        moved += has_time && at > own;
        out[v] = at;
    }
    return moved;
}
