/*
 * analysis/models/parallel.c — parallelism P = T / t_max in DPM's three
 * steps (thesis §5.2.3; models/parallel.h lists them): the weights of each
 * step over the history graph, the longest path under them, and the
 * placements that steps 2 and 3 are run for.
 */
#include <stdio.h>

#include "models/parallel.h"

/* Where node v's process runs from v on (models/parallel.h). */
uint32_t placement_node(const struct history *h, const uint32_t *machine, uint32_t v)
{
    uint32_t placed = machine[h->process[v]];
    return placed != PLACE_MEASURED ? placed : h->machine[v];
}

/* Step 2's weight of the message arc into v: the table's delivery time
 * for the message's size, remote when the placement puts the sender at
 * its SEND and the receiver at its RECEIVE on different machines (thesis
 * §5.2.3, step 2). */
static uint64_t delivery_time(const struct history *h, uint32_t v, const uint32_t *machine,
                              const struct delay_table *d)
{
    uint32_t from = h->cross_from[v];
    return delay_of(d, h->message_size[v], placement_node(h, machine, from) != placement_node(h, machine, v));
}

/* The weights of `step` (models/parallel.h). */
int parallel_weigh(struct history_weights *w, const struct history *h, enum parallel_step step,
                   enum history_graph graph, const uint32_t *machine, const struct delay_table *d, char *err,
                   size_t cap)
{
    history_weights_measured(w, h, graph);
    if (step == STEP_UPPER_BOUND)
        return 0;
    for (uint32_t v = 0; v < h->nnodes; v++)
        if (h->cross_kind[v] == HX_MESSAGE)
            w->cross[v] = delivery_time(h, v, machine, d);
    if (step == STEP_CONTENTION_THESIS)
        return contention_thesis(w, h, machine, err, cap);
    if (step == STEP_CONTENTION_SIMULATED)
        return contention_simulated(w, h, machine, err, cap);
    return 0;
}

/* Run one step: weigh, find the longest path, divide, and sum the path's
 * time outside the trace (models/parallel.h). */
int parallel_step_run(struct parallel_result *r, struct history_paths *paths, const struct history *h,
                      enum parallel_step step, enum history_graph graph, const uint32_t *machine,
                      const struct delay_table *d, char *err, size_t cap)
{
    struct history_weights w;
    struct history_paths mine;
    struct history_paths *p = paths ? paths : &mine;
    if (history_weights_alloc(&w, h) < 0) {
        snprintf(err, cap, "no memory for the weights of %u nodes", h->nnodes);
        return -1;
    }
    if (parallel_weigh(&w, h, step, graph, machine, d, err, cap) < 0) {
        history_weights_free(&w);
        return -1;
    }
    int ok = history_longest(p, h, &w);
    if (ok == 0)
        ok = outside_share_of(&r->outside, h, &w, p);
    history_weights_free(&w);
    if (ok < 0) {
        snprintf(err, cap, "no memory for the longest paths of %u nodes", h->nnodes);
        return -1;
    }
    r->total_cpu = history_total_cpu(h);
    r->t_max = p->t_max;
    r->parallelism = r->t_max ? (double)r->total_cpu / (double)r->t_max : 0;
    if (!paths)
        history_paths_free(&mine);
    return 0;
}

const char *parallel_step_name(enum parallel_step step)
{
    switch (step) {
    case STEP_UPPER_BOUND:
        return "1 upper bound: no delivery time, no contention";
    case STEP_DELIVERY:
        return "2 delivery times, no contention";
    case STEP_CONTENTION_THESIS:
        return "3 contention, thesis Appendix A";
    case STEP_CONTENTION_SIMULATED:
        return "3 contention, elapsed-time simulation";
    }
    return "?";
}

const char *parallel_step_short(enum parallel_step step)
{
    static const char *const names[] = { "?", "step 1", "step 2", "step 3a", "step 3" };
    return step >= STEP_UPPER_BOUND && step <= STEP_CONTENTION_SIMULATED ? names[step] : names[0];
}

/* Every step on both graphs (models/parallel.h). */
int parallel_steps_run(struct parallel_steps *s, const struct history *h, const uint32_t *machine,
                       const struct delay_table *d, char *err, size_t cap)
{
    for (int i = 0; i < PARALLEL_STEPS; i++) {
        enum parallel_step step = (enum parallel_step)(STEP_UPPER_BOUND + i);
        if (parallel_step_run(&s->elapsed[i], 0, h, step, GRAPH_ELAPSED_ARCS, machine, d, err, cap) < 0)
            return -1;
        if (!h->outside_arcs)
            s->plain[i] = s->elapsed[i];
        else if (parallel_step_run(&s->plain[i], 0, h, step, GRAPH_PLAIN, machine, d, err, cap) < 0)
            return -1;
    }
    return 0;
}

/* The advice for the first step mostly outside the trace (models/parallel.h). */
void parallel_steps_advice(char *out, size_t cap, const struct parallel_steps *s, const struct history *h,
                           const char *window)
{
    out[0] = 0;
    for (int i = 0; i < PARALLEL_STEPS && !out[0]; i++)
        outside_advice(out, cap, &s->elapsed[i].outside, parallel_step_short((enum parallel_step)(STEP_UPPER_BOUND + i)),
                       s->elapsed[i].parallelism, s->plain[i].parallelism, h, window);
}

/* Each process where its records came from, record by record. */
void placement_measured(uint32_t *machine, const struct history *h)
{
    for (uint32_t p = 0; p < h->nprocesses; p++)
        machine[p] = PLACE_MEASURED;
}

/* Process p on machine p. */
void placement_each_own(uint32_t *machine, const struct history *h)
{
    for (uint32_t p = 0; p < h->nprocesses; p++)
        machine[p] = p;
}

/* Every process on machine 0. */
void placement_all_one(uint32_t *machine, const struct history *h)
{
    for (uint32_t p = 0; p < h->nprocesses; p++)
        machine[p] = 0;
}
