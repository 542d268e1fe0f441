/*
 * analysis/models/waitstates.c — every wait split into its causes and
 * summed by waiting process, cause and responsible process, and by
 * function (models/waitstates.h defines the parts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "models/waitstates.h"

const char *wait_category_name(enum wait_category c)
{
    static const char *const names[WAIT_CATEGORIES] = { "late sender", "delivery", "queued", "server's work",
                                                        "outside the trace" };
    return c < WAIT_CATEGORIES ? names[c] : "?";
}

/* The sums being made, and how to name functions. */
struct splitter {
    const struct history *h;
    const struct clock_model *c;
    struct waitstates *w;
    struct table pair_index;           /* (waiter << 8 | category, responsible) -> pair */
    struct table function_index;       /* (process << 8 | category, start) -> function */
    size_t pair_capacity, function_capacity;
    critpath_namer *namer;
    void *context;
    uint32_t waiter;                   /* the wait being split */
    int64_t start, end;                /* its window, corrected */
};

/* Charge `time` of the current wait to a cause. */
static void charge(struct splitter *s, enum wait_category category, uint64_t responsible, int64_t time)
{
    struct waitstates *w = s->w;
    uint64_t key = (uint64_t)s->waiter << 8 | category;
    if (time <= 0)
        return;
    w->category[category] += (uint64_t)time;
    uint32_t *index = table_find(&s->pair_index, key, responsible);
    if (!index) {
        w->pair = array_grow(w->pair, &s->pair_capacity, w->npairs, sizeof *w->pair);
        w->pair[w->npairs] = (struct wait_pair){ s->waiter, (uint8_t)category, responsible, 0, 0 };
        table_insert(&s->pair_index, key, responsible, w->npairs);
        index = table_find(&s->pair_index, key, responsible);
        w->npairs++;
    }
    w->pair[*index].time += (uint64_t)time;
    w->pair[*index].waits++;
}

/* Charge `time` to the function holding the PC of record `event` of process p. */
static void charge_function(struct splitter *s, enum wait_category category, uint32_t p, uint32_t event,
                            int64_t time)
{
    const struct dpm_event *ev = &s->h->trace->events[event];
    struct waitstates *w = s->w;
    if (time <= 0 || !(ev->present & EV_PC))
        return;
    uint64_t start = ev->pc;
    const char *name = s->namer ? s->namer(s->context, p, ev->pc, &start) : 0;
    if (!name)
        start = ev->pc;
    uint64_t key = (uint64_t)p << 8 | category;
    uint32_t *index = table_find(&s->function_index, key, start);
    if (!index) {
        w->function = array_grow(w->function, &s->function_capacity, w->nfunctions, sizeof *w->function);
        w->function[w->nfunctions] = (struct wait_function){ (uint8_t)category, p, start, name, 0, 0 };
        table_insert(&s->function_index, key, start, w->nfunctions);
        index = table_find(&s->function_index, key, start);
        w->nfunctions++;
    }
    w->function[*index].time += (uint64_t)time;
    w->function[*index].waits++;
}

/* A corrected time held inside the current wait. */
static int64_t inside(const struct splitter *s, int64_t t)
{
    return t < s->start ? s->start : t > s->end ? s->end : t;
}

static int has_time(const struct history *h, uint32_t event)
{
    return (h->trace->events[event].present & EV_TIME) != 0;
}

/* The pid a record names as its other end (0 if it does not say). */
static uint64_t other_of(const struct history *h, uint32_t event)
{
    const struct dpm_event *ev = &h->trace->events[event];
    return (ev->present & EV_OTHER) ? ev->other : 0;
}

/* A blocking RECEIVE ending at node v: late sender, then delivery; or
 * outside the trace. 0, or -1 if a record it needs lacks TIME (before
 * anything is charged). */
static int split_receive(struct splitter *s, uint32_t v)
{
    const struct history *h = s->h;
    uint32_t u = h->cross_from[v];
    if (h->cross_kind[v] != HX_MESSAGE) {
        charge(s, WAIT_OUTSIDE, other_of(h, h->event[v]), s->end - s->start);
        return 0;
    }
    if (!has_time(h, h->event[u]))
        return -1;
    uint32_t sender = h->process[u];
    int64_t sent = inside(s, clocks_node_time(s->c, h, u));
    uint64_t pid = h->trace->processes[sender].pid;
    charge(s, WAIT_LATE_SENDER, pid, sent - s->start);
    charge_function(s, WAIT_LATE_SENDER, sender, h->event[u], sent - s->start);
    charge(s, WAIT_DELIVERY, pid, s->end - sent);
    return 0;
}

/* A CALL whose request is SEND node q and whose reply ends at RECEIVE
 * node v: delivery, queued, server's work, delivery; or outside the trace.
 * 0, or -1 if a record it needs lacks TIME (before anything is charged). */
static int split_call(struct splitter *s, uint32_t q, uint32_t v, const struct arrivals *a)
{
    const struct history *h = s->h;
    uint32_t r = h->cross_to[q], u = h->cross_from[v];
    if (r == HISTORY_NONE || h->cross_kind[r] != HX_MESSAGE) {
        charge(s, WAIT_OUTSIDE, other_of(h, h->event[q]), s->end - s->start);
        return 0;
    }
    uint32_t server = h->process[r], arrived = arrivals_event(a, h, r);
    int replied = u != HISTORY_NONE && h->cross_kind[v] == HX_MESSAGE;
    if (!has_time(h, arrived) || !has_time(h, h->event[r]) || (replied && !has_time(h, h->event[u])))
        return -1;
    int64_t arrival = clocks_event_time(s->c, h, server, arrived), taken = clocks_node_time(s->c, h, r);
    int64_t answered = replied ? clocks_node_time(s->c, h, u) : s->end;
    taken = taken > arrival ? taken : arrival;
    answered = answered > taken ? answered : taken;
    int64_t b1 = inside(s, arrival), b2 = inside(s, taken), b3 = inside(s, answered);
    uint64_t pid = h->trace->processes[server].pid;
    charge(s, WAIT_DELIVERY, pid, (b1 - s->start) + (s->end - b3));
    charge(s, WAIT_QUEUED, pid, b2 - b1);
    charge(s, WAIT_SERVICE, pid, b3 - b2);
    if (replied && h->process[u] == server)
        charge_function(s, WAIT_SERVICE, server, h->event[u], b3 - b2);
    return 0;
}

/* The node before RECEIVE node v in its process that is not a move: a
 * process may move while it waits (a MIGRATE node between its CALL's SEND
 * and the RECEIVE of the answer). */
static uint32_t step_before(const struct history *h, uint32_t v)
{
    uint32_t u = v - 1;
    while (h->kind[u] == HN_MIGRATE)
        u--;
    return u;
}

/* Whether the wait ending at RECEIVE node v is a CALL's: its RECEIVECALL
 * is of kind 2 and the step before it is the CALL's SEND (call = 1, when
 * the log kept that field). */
static int is_call(const struct history *h, uint32_t v, uint32_t call)
{
    uint32_t u = step_before(h, v);
    const struct dpm_event *rc = &h->trace->events[call], *sent = &h->trace->events[h->event[u]];
    return (rc->present & EV_KIND) && rc->kind == 2 && h->kind[u] == HN_SEND &&
           (!(sent->present & EV_KIND) || sent->kind == 1);
}

/* Split the wait that RECEIVE node v ended. */
static void split(struct splitter *s, uint32_t v, const struct arrivals *a)
{
    const struct history *h = s->h;
    struct waitstates *w = s->w;
    uint32_t call = a->waited_from[v], p = h->process[v];
    const struct dpm_event *began = &h->trace->events[call], *ended = &h->trace->events[h->event[v]];
    int moved = began->machine != ended->machine;   /* it moved while it waited: two clocks */
    if (!has_time(h, call) || !has_time(h, h->event[v]) || (!moved && ended->time < began->time)) {
        w->untimed++;
        return;
    }
    s->waiter = p;
    s->start = clocks_event_time(s->c, h, p, call);
    s->end = moved ? clocks_node_time(s->c, h, v) : s->start + (int64_t)(ended->time - began->time);
    s->end = s->end > s->start ? s->end : s->start;
    int calling = is_call(h, v, call);
    if ((calling ? split_call(s, step_before(h, v), v, a) : split_receive(s, v)) < 0) {
        w->untimed++;
        return;
    }
    w->waits++;
    w->call_waits += calling;
    w->receive_waits += !calling;
    w->total += (uint64_t)(s->end - s->start);
    w->waited[p] += (uint64_t)(s->end - s->start);
}

static int by_pair_time(const void *x, const void *y)
{
    const struct wait_pair *a = x, *b = y;
    if (a->time != b->time)
        return a->time > b->time ? -1 : 1;
    if (a->waiter != b->waiter)
        return a->waiter < b->waiter ? -1 : 1;
    if (a->category != b->category)
        return a->category < b->category ? -1 : 1;
    return a->responsible < b->responsible ? -1 : a->responsible > b->responsible;
}

static int by_function_time(const void *x, const void *y)
{
    const struct wait_function *a = x, *b = y;
    if (a->time != b->time)
        return a->time > b->time ? -1 : 1;
    if (a->process != b->process)
        return a->process < b->process ? -1 : 1;
    if (a->category != b->category)
        return a->category < b->category ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* Split every wait (models/waitstates.h). */
int waitstates_find(struct waitstates *w, const struct history *h, const struct arrivals *a,
                    const struct clock_model *c, critpath_namer *namer, void *context, char *err, size_t cap)
{
    struct splitter s = { .h = h, .c = c, .w = w, .namer = namer, .context = context };
    memset(w, 0, sizeof *w);
    w->waited = calloc(h->nprocesses + 1, sizeof *w->waited);
    if (!w->waited) {
        snprintf(err, cap, "no memory for the waits of %u processes", h->nprocesses);
        return -1;
    }
    for (uint32_t v = 0; v < h->nnodes; v++)
        if (h->kind[v] == HN_RECEIVE && a->waited_from[v] != HISTORY_NONE)
            split(&s, v, a);
    table_free(&s.pair_index);
    table_free(&s.function_index);
    if (w->npairs)
        qsort(w->pair, w->npairs, sizeof *w->pair, by_pair_time);
    if (w->nfunctions)
        qsort(w->function, w->nfunctions, sizeof *w->function, by_function_time);
    return 0;
}

void waitstates_free(struct waitstates *w)
{
    free(w->waited);
    free(w->pair);
    free(w->function);
    memset(w, 0, sizeof *w);
}
