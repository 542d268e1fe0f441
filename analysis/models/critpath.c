/*
 * analysis/models/critpath.c — the critical path (models/critpath.h):
 * walked back from the end of the longest path, then summed by process and
 * by function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/critpath.h"

/* The arcs of the longest path ending at paths->end, in path order. */
static int walk_back(struct critpath *c, const struct history *h, const struct history_weights *w,
                     const struct history_paths *paths)
{
    uint32_t n = 0, v = paths->end;
    c->arc = malloc((size_t)h->nnodes * sizeof *c->arc + 1);
    if (!c->arc)
        return -1;
    while (h->nnodes && (paths->via_cross[v] || h->kind[v] != HN_START)) {
        if (paths->via_cross[v]) {
            c->arc[n++] = (struct critpath_arc){ v, h->cross_kind[v], w->cross[v] };
            v = h->cross_from[v];
        } else {
            c->arc[n++] = (struct critpath_arc){ v, HX_NONE, w->chain[v] };
            v--;
        }
    }
    for (uint32_t i = 0; i < n / 2; i++) {
        struct critpath_arc swap = c->arc[i];
        c->arc[i] = c->arc[n - 1 - i];
        c->arc[n - 1 - i] = swap;
    }
    c->narcs = n;
    return 0;
}

/* Each process's time on the path, the runs of arcs within one process,
 * and the time on message and outside arcs. */
static int sum_up(struct critpath *c, const struct history *h)
{
    c->held = calloc(h->nprocesses + 1, sizeof *c->held);
    c->segment = malloc((size_t)c->narcs * sizeof *c->segment + 1);
    if (!c->held || !c->segment)
        return -1;
    for (uint32_t i = 0; i < c->narcs; i++) {
        const struct critpath_arc *a = &c->arc[i];
        uint32_t p = h->process[a->to];
        if (a->cross == HX_MESSAGE)
            c->delivery += a->weight;
        else if (a->cross == HX_OUTSIDE)
            c->outside += a->weight;
        if (a->cross != HX_NONE)
            continue;
        c->held[p] += a->weight;
        if (c->nsegments == 0 || c->arc[i - 1].cross != HX_NONE)
            c->segment[c->nsegments++] = (struct critpath_segment){
                p, 0, 0, i ? c->arc[i - 1].cross : HX_NONE, i ? c->arc[i - 1].weight : 0
            };
        c->segment[c->nsegments - 1].arcs++;
        c->segment[c->nsegments - 1].held += a->weight;
    }
    return 0;
}

/* The critical path under `step` on `graph` (models/critpath.h). */
int critpath_find(struct critpath *c, const struct history *h, enum parallel_step step, enum history_graph graph,
                  const uint32_t *machine, const struct delay_table *d, char *err, size_t cap)
{
    struct history_weights w;
    struct history_paths paths = { 0 };
    int ok = -1;
    memset(c, 0, sizeof *c);
    if (history_weights_alloc(&w, h) < 0) {
        snprintf(err, cap, "no memory for the weights of %u nodes", h->nnodes);
        return -1;
    }
    if (parallel_weigh(&w, h, step, graph, machine, d, err, cap) == 0) {
        if (history_longest(&paths, h, &w) == 0 && walk_back(c, h, &w, &paths) == 0 && sum_up(c, h) == 0 &&
            outside_share_of(&c->outside_by, h, &w, &paths) == 0) {
            c->t_max = paths.t_max;
            ok = 0;
        } else {
            snprintf(err, cap, "no memory for the critical path of %u nodes", h->nnodes);
        }
    }
    history_paths_free(&paths);
    history_weights_free(&w);
    if (ok < 0)
        critpath_free(c);
    return ok;
}

void critpath_free(struct critpath *c)
{
    free(c->arc);
    free(c->segment);
    free(c->held);
    memset(c, 0, sizeof *c);
}

static int by_process_and_start(const void *a, const void *b)
{
    const struct critpath_function *x = a, *y = b;
    if (x->process != y->process)
        return x->process < y->process ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_time_held(const void *a, const void *b)
{
    const struct critpath_function *x = a, *y = b;
    if (x->held != y->held)
        return x->held > y->held ? -1 : 1;
    return by_process_and_start(a, b);
}

/* The address whose function a record names: one before its pc when the
 * pc is a return address (meter/record.h), which lies past the call, and
 * past the caller's end when the call is its last instruction. */
static uint64_t code_address(const struct dpm_event *ev)
{
    return meter_pc_is_return_address(ev->type, ev->kind) && ev->pc ? ev->pc - 1 : ev->pc;
}

/* The path's time per function (models/critpath.h): one entry per arc
 * within a process, sorted by (process, function) and merged, then sorted
 * by time. */
int critpath_functions(const struct critpath *c, const struct history *h, critpath_namer *namer, void *context,
                       struct critpath_function **out, uint32_t *n)
{
    struct critpath_function *f = malloc((size_t)c->narcs * sizeof *f + 1);
    uint32_t count = 0, merged = 0;
    if (!f)
        return -1;
    for (uint32_t i = 0; i < c->narcs; i++) {
        const struct critpath_arc *a = &c->arc[i];
        if (a->cross != HX_NONE)
            continue;
        uint32_t p = h->process[a->to];
        const struct dpm_event *ev = &h->trace->events[h->event[a->to]];
        uint64_t start = ev->pc;
        const char *name = namer ? namer(context, p, code_address(ev), &start) : 0;
        f[count++] = (struct critpath_function){ p, name ? start : ev->pc, name, a->weight };
    }
    qsort(f, count, sizeof *f, by_process_and_start);
    for (uint32_t i = 0; i < count; i++) {
        if (merged && f[merged - 1].process == f[i].process && f[merged - 1].start == f[i].start)
            f[merged - 1].held += f[i].held;
        else
            f[merged++] = f[i];
    }
    qsort(f, merged, sizeof *f, by_time_held);
    *out = f;
    *n = merged;
    return 0;
}
