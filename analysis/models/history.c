/*
 * analysis/models/history.c — the program history graph (thesis §5.2.3;
 * models/history.h says what its nodes and arcs are), its arc weights and
 * its longest paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/history.h"

/* The index of the traced process `pid` in t->processes (sorted by pid), or HISTORY_NONE. */
uint32_t history_process_index(const struct dpm_trace *t, uint64_t pid)
{
    size_t low = 0, high = t->nprocesses;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (t->processes[mid].pid < pid)
            low = mid + 1;
        else
            high = mid;
    }
    return low < t->nprocesses && t->processes[low].pid == pid ? (uint32_t)low : HISTORY_NONE;
}

/* Whether record ev becomes a node: a RECEIVE, a SEND that sent
 * something (a SEND whose status is an error sent nothing), or a MIGRATE. */
static int is_node_event(const struct dpm_event *ev)
{
    return ev->type == MT_RECEIVE || (ev->type == MT_SEND && ev->status == 0) || ev->type == MT_MIGRATE;
}

static uint8_t node_kind(const struct dpm_event *ev)
{
    return ev->type == MT_SEND ? HN_SEND : ev->type == MT_RECEIVE ? HN_RECEIVE : HN_MIGRATE;
}

/* Whether the record's other process (SEND: the receiver; RECEIVE: the
 * sender) is outside the trace. Unknown (the field was not kept) counts as
 * inside: such a record can still be matched by its message id. */
static int other_is_outside(const struct dpm_trace *t, const struct dpm_event *ev)
{
    return (ev->present & EV_OTHER) && history_process_index(t, ev->other) == HISTORY_NONE;
}

static int alloc_nodes(struct history *h, uint32_t n)
{
    h->nnodes = n;
    h->process = malloc(n * sizeof *h->process + 1);
    h->event = malloc(n * sizeof *h->event + 1);
    h->kind = malloc(n + 1);
    h->machine = malloc(n * sizeof *h->machine + 1);
    h->cpu = malloc(n * sizeof *h->cpu + 1);
    h->cross_from = malloc(n * sizeof *h->cross_from + 1);
    h->cross_to = malloc(n * sizeof *h->cross_to + 1);
    h->cross_kind = calloc(n + 1, 1);
    h->message_size = malloc(n * sizeof *h->message_size + 1);
    h->order = malloc(n * sizeof *h->order + 1);
    if (!h->process || !h->event || !h->kind || !h->machine || !h->cpu || !h->cross_from || !h->cross_to ||
        !h->cross_kind || !h->message_size || !h->order)
        return -1;
    memset(h->cross_from, 0xff, n * sizeof *h->cross_from);
    memset(h->cross_to, 0xff, n * sizeof *h->cross_to);
    return 0;
}

/* The CPU used between node v-1 and node v of one process: the difference
 * of their PROCTIMEs. A record without PROCTIME, or a PROCTIME that went
 * down (only a damaged trace does that), gives 0 and is counted. */
static uint64_t cpu_between(struct history *h, const struct dpm_event *before, const struct dpm_event *after)
{
    if (!(before->present & EV_PROCTIME) || !(after->present & EV_PROCTIME)) {
        h->no_proctime++;
        return 0;
    }
    if (after->proctime < before->proctime) {
        h->cpu_backwards++;
        return 0;
    }
    return after->proctime - before->proctime;
}

/* Place one node. */
static void put_node(struct history *h, uint32_t v, uint32_t p, uint32_t ev, uint8_t kind, uint32_t previous_event)
{
    const struct dpm_event *events = h->trace->events;
    h->process[v] = p;
    h->event[v] = ev;
    h->kind[v] = kind;
    h->machine[v] = events[ev].machine;
    h->cpu[v] = kind == HN_START ? 0 : cpu_between(h, &events[previous_event], &events[ev]);
}

/* The nodes of every process, in its record order: start, its SENDs,
 * RECEIVEs and MIGRATEs, end. A process without records has no nodes. */
static int make_nodes(struct history *h)
{
    const struct dpm_trace *t = h->trace;
    uint64_t n = 0;
    for (size_t p = 0; p < t->nprocesses; p++) {
        const struct dpm_process *pr = &t->processes[p];
        n += pr->count ? 2 : 0;
        for (uint32_t i = 0; i < pr->count; i++)
            n += is_node_event(&t->events[t->by_process[pr->first + i]]);
    }
    if (n >= HISTORY_NONE || alloc_nodes(h, (uint32_t)n) < 0)
        return -1;
    uint32_t v = 0;
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        const struct dpm_process *pr = &t->processes[p];
        const uint32_t *mine = &t->by_process[pr->first];
        h->first_node[p] = v;
        if (!pr->count)
            continue;
        put_node(h, v++, p, mine[0], HN_START, 0);
        for (uint32_t i = 0; i < pr->count; i++) {
            const struct dpm_event *ev = &t->events[mine[i]];
            if (is_node_event(ev)) {
                put_node(h, v, p, mine[i], node_kind(ev), h->event[v - 1]);
                v++;
            }
        }
        put_node(h, v, p, mine[pr->count - 1], HN_END, h->event[v - 1]);
        v++;
    }
    h->first_node[h->nprocesses] = v;
    return 0;
}

/* Whether node v of `kind` can end or start a message arc: its record has
 * a message id and its other process is in the trace. */
static int message_node(const struct history *h, uint32_t v, uint8_t kind)
{
    const struct dpm_event *ev = &h->trace->events[h->event[v]];
    return h->kind[v] == kind && (ev->present & EV_MESSAGE_ID) && !other_is_outside(h->trace, ev);
}

/* A message node by its message id, for the join below. */
struct keyed_node {
    uint64_t id;
    uint32_t node;
};

/* Sort a[0..n) by id, keeping the order of equal ids (an LSD radix sort,
 * a byte a pass; a pass whose byte is the same in every id is skipped, as
 * most of a message id's machine and epoch bytes are). tmp has room for n.
 * Sorting beats a hash table here: a million records make hundreds of
 * thousands of messages, whose table would not fit in any cache. */
static void sort_by_id(struct keyed_node *a, struct keyed_node *tmp, size_t n)
{
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[257] = { 0 };
        for (size_t i = 0; i < n; i++)
            count[((a[i].id >> shift) & 0xff) + 1]++;
        if (n == 0 || count[((a[0].id >> shift) & 0xff) + 1] == n)
            continue;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++)
            tmp[count[(a[i].id >> shift) & 0xff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

/* Message arcs: each SEND to its RECEIVE with the same message id (thesis
 * §5.2.3), by a sort join: the SENDs and the RECEIVEs, each in node order,
 * are sorted by id, keeping that order among equal ids, and walked side by
 * side; were an id ever used twice, its SENDs and RECEIVEs would pair in
 * node order. A SEND or a RECEIVE left over had its partner outside the
 * trace (lost, or not metered): the RECEIVE is then a start of its own,
 * waiting for nothing. */
static int match_messages(struct history *h)
{
    size_t nsends = 0, nreceives = 0;
    struct keyed_node *sends = malloc((size_t)h->nnodes * sizeof *sends + 1);
    struct keyed_node *receives = malloc((size_t)h->nnodes * sizeof *receives + 1);
    struct keyed_node *tmp = malloc((size_t)h->nnodes * sizeof *tmp + 1);
    if (!sends || !receives || !tmp) {
        free(sends);
        free(receives);
        free(tmp);
        return -1;
    }
    for (uint32_t v = 0; v < h->nnodes; v++) {
        if (message_node(h, v, HN_SEND))
            sends[nsends++] = (struct keyed_node){ h->trace->events[h->event[v]].message_id, v };
        else if (message_node(h, v, HN_RECEIVE))
            receives[nreceives++] = (struct keyed_node){ h->trace->events[h->event[v]].message_id, v };
    }
    sort_by_id(sends, tmp, nsends);
    sort_by_id(receives, tmp, nreceives);
    size_t i = 0, j = 0;
    while (i < nsends && j < nreceives) {
        if (sends[i].id < receives[j].id) {
            i++;
        } else if (sends[i].id > receives[j].id) {
            j++;
        } else {
            uint32_t send = sends[i++].node, v = receives[j++].node;
            const struct dpm_event *sent = &h->trace->events[h->event[send]];
            h->cross_to[send] = v;
            h->cross_from[v] = send;
            h->cross_kind[v] = HX_MESSAGE;
            h->message_size[v] = (sent->present & EV_SIZE) ? sent->size : h->trace->events[h->event[v]].size;
            h->message_arcs++;
        }
    }
    h->unmatched_sends = nsends - h->message_arcs;
    h->unmatched_receives = nreceives - h->message_arcs;
    free(sends);
    free(receives);
    free(tmp);
    return 0;
}

/* Whether SEND node v asks something of a process outside the trace: a
 * CALL's send half to it (the SEND record's `call`). When the log did not
 * keep `call`, any SEND to it counts. A plain SEND to an outside process is
 * not a request: a server's reply to its client is one, and the client's
 * next request, which follows, is no answer to it (its time is the
 * client's own, not the server's). */
static int asks_outside(const struct history *h, uint32_t v)
{
    const struct dpm_event *ev = &h->trace->events[h->event[v]];
    return h->kind[v] == HN_SEND && other_is_outside(h->trace, ev) && (!(ev->present & EV_KIND) || ev->kind == 1);
}

/* Outside arcs (thesis Fig. 5.3): in each process, a RECEIVE from a
 * process outside the trace takes the earliest CALL still unanswered to
 * that same process (asks_outside), so that the time the request spent
 * outside is not lost. `pending` holds those CALLs of the process being
 * scanned. */
static int match_outside(struct history *h)
{
    uint32_t *pending = malloc((size_t)h->nnodes * sizeof *pending + 1);
    if (!pending)
        return -1;
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        uint32_t npending = 0;
        for (uint32_t v = h->first_node[p]; v < h->first_node[p + 1]; v++) {
            const struct dpm_event *ev = &h->trace->events[h->event[v]];
            if (asks_outside(h, v)) {
                pending[npending++] = v;
                continue;
            }
            if (h->kind[v] != HN_RECEIVE || h->cross_from[v] != HISTORY_NONE || !other_is_outside(h->trace, ev))
                continue;
            for (uint32_t k = 0; k < npending; k++) {
                uint32_t s = pending[k];
                if (h->trace->events[h->event[s]].other != ev->other)
                    continue;
                h->cross_to[s] = v;
                h->cross_from[v] = s;
                h->cross_kind[v] = HX_OUTSIDE;
                h->outside_arcs++;
                memmove(&pending[k], &pending[k + 1], (npending - k - 1) * sizeof *pending);
                npending--;
                break;
            }
        }
    }
    free(pending);
    return 0;
}

/* A topological order of the nodes (Kahn's algorithm: a node is placed
 * once every arc into it has been). -1 if some node never is: a cycle. */
static int topological_order(struct history *h)
{
    uint8_t *waiting = malloc((size_t)h->nnodes + 1);
    uint32_t placed = 0, next = 0;
    if (!waiting)
        return -1;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        waiting[v] = (uint8_t)((h->kind[v] != HN_START) + (h->cross_from[v] != HISTORY_NONE));
        if (!waiting[v])
            h->order[placed++] = v;
    }
    while (next < placed) {
        uint32_t u = h->order[next++];
        if (h->kind[u] != HN_END && --waiting[u + 1] == 0)
            h->order[placed++] = u + 1;
        if (h->cross_to[u] != HISTORY_NONE && --waiting[h->cross_to[u]] == 0)
            h->order[placed++] = h->cross_to[u];
    }
    free(waiting);
    return placed == h->nnodes ? 0 : -1;
}

/* Build the graph of trace t (models/history.h). */
int history_build(struct history *h, const struct dpm_trace *t, char *err, size_t cap)
{
    memset(h, 0, sizeof *h);
    h->trace = t;
    h->nprocesses = (uint32_t)t->nprocesses;
    h->first_node = malloc((t->nprocesses + 1) * sizeof *h->first_node);
    if (!h->first_node || make_nodes(h) < 0 || match_messages(h) < 0 || match_outside(h) < 0) {
        snprintf(err, cap, "no memory for the history graph of %zu records", t->nevents);
        history_free(h);
        return -1;
    }
    if (topological_order(h) < 0) {
        snprintf(err, cap, "the trace's messages make a cycle (a message received before it was sent): "
                           "the trace is inconsistent");
        history_free(h);
        return -1;
    }
    return 0;
}

void history_free(struct history *h)
{
    free(h->first_node);
    free(h->process);
    free(h->event);
    free(h->kind);
    free(h->machine);
    free(h->cpu);
    free(h->cross_from);
    free(h->cross_to);
    free(h->cross_kind);
    free(h->message_size);
    free(h->order);
    memset(h, 0, sizeof *h);
}

int history_weights_alloc(struct history_weights *w, const struct history *h)
{
    w->chain = malloc((size_t)h->nnodes * sizeof *w->chain + 1);
    w->cross = malloc((size_t)h->nnodes * sizeof *w->cross + 1);
    if (!w->chain || !w->cross) {
        history_weights_free(w);
        return -1;
    }
    return 0;
}

void history_weights_free(struct history_weights *w)
{
    free(w->chain);
    free(w->cross);
    w->chain = w->cross = 0;
}

/* The TIME an outside arc into v took; 0 if the clock is missing or went back. */
uint64_t history_outside_time(const struct history *h, uint32_t v)
{
    const struct dpm_event *receive = &h->trace->events[h->event[v]];
    const struct dpm_event *send = &h->trace->events[h->event[h->cross_from[v]]];
    if (!(receive->present & EV_TIME) || !(send->present & EV_TIME) || receive->time < send->time)
        return 0;
    return receive->time - send->time;
}

/* Step 1's weights (thesis §5.2.3): CPU along processes, outside arcs
 * their measured TIME, message arcs 0. An arc of weight 0 from a SEND to a
 * later RECEIVE of the same process never lengthens a path, nor delays the
 * RECEIVE in the contention simulations: so the plain graph is this one
 * with its outside arcs weighing 0. */
void history_weights_measured(struct history_weights *w, const struct history *h, enum history_graph graph)
{
    for (uint32_t v = 0; v < h->nnodes; v++) {
        w->chain[v] = h->cpu[v];
        w->cross[v] = h->cross_kind[v] == HX_OUTSIDE && graph == GRAPH_ELAPSED_ARCS ? history_outside_time(h, v) : 0;
    }
}

/* Longest paths in topological order: each node takes the longer of its
 * arrival along its process and over its cross arc. */
int history_longest(struct history_paths *r, const struct history *h, const struct history_weights *w)
{
    memset(r, 0, sizeof *r);
    r->dist = malloc((size_t)h->nnodes * sizeof *r->dist + 1);
    r->via_cross = malloc((size_t)h->nnodes + 1);
    if (!r->dist || !r->via_cross) {
        history_paths_free(r);
        return -1;
    }
    for (uint32_t i = 0; i < h->nnodes; i++) {
        uint32_t v = h->order[i];
        uint64_t along = h->kind[v] == HN_START ? 0 : r->dist[v - 1] + w->chain[v];
        uint32_t from = h->cross_from[v];
        uint64_t over = from == HISTORY_NONE ? 0 : r->dist[from] + w->cross[v];
        r->via_cross[v] = from != HISTORY_NONE && over > along;
        r->dist[v] = r->via_cross[v] ? over : along;
        if (r->dist[v] > r->t_max || i == 0) {
            r->t_max = r->dist[v];
            r->end = v;
        }
    }
    return 0;
}

void history_paths_free(struct history_paths *r)
{
    free(r->dist);
    free(r->via_cross);
    r->dist = 0;
    r->via_cross = 0;
}

/* T (thesis §5.2.3): every process's CPU between its first and last record. */
uint64_t history_total_cpu(const struct history *h)
{
    uint64_t total = 0;
    for (uint32_t v = 0; v < h->nnodes; v++)
        total += h->cpu[v];
    return total;
}
