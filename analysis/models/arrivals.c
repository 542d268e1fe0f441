/*
 * analysis/models/arrivals.c — when each message of the history graph
 * reached its receiver, and which RECEIVEs ended a wait
 * (models/arrivals.h).
 */
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "models/arrivals.h"

/* A MESSAGEQUEUED seen and not yet received: its record and its place in
 * the process's stream (value = the record; the place is kept beside it). */
struct queued_message {
    uint32_t event;
    uint32_t position;
};

/* One process's records in order: each MESSAGEQUEUED is remembered by
 * message id until its RECEIVE; each RECEIVECALL that may wait opens a
 * wait, which the next RECEIVE ends unless its message was queued before
 * the RECEIVECALL. `seen` holds the open MESSAGEQUEUEDs (indices into
 * `message`), emptied at the end. */
static void scan_process(struct arrivals *a, const struct history *h, uint32_t p, struct table *seen,
                         struct queued_message **message, size_t *capacity)
{
    const struct dpm_trace *t = h->trace;
    const struct dpm_process *pr = &t->processes[p];
    const uint32_t *mine = &t->by_process[pr->first];
    uint32_t node = h->first_node[p] + 1, last = h->first_node[p + 1] - 1;
    uint32_t call = HISTORY_NONE, call_position = 0;
    size_t nmessages = 0;
    for (uint32_t i = 0; i < pr->count; i++) {
        const struct dpm_event *ev = &t->events[mine[i]];
        int is_node = node < last && h->event[node] == mine[i];
        if (ev->type == MT_MESSAGEQUEUED && (ev->present & EV_MESSAGE_ID) && !table_find(seen, ev->message_id, 0)) {
            *message = array_grow(*message, capacity, nmessages, sizeof **message);
            (*message)[nmessages] = (struct queued_message){ mine[i], i };
            table_insert(seen, ev->message_id, 0, (uint32_t)nmessages++);
        } else if (ev->type == MT_RECEIVECALL) {
            call = ev->flag ? HISTORY_NONE : mine[i];
            call_position = i;
        } else if (ev->type == MT_RECEIVE) {
            uint32_t *index = (ev->present & EV_MESSAGE_ID) ? table_find(seen, ev->message_id, 0) : 0;
            struct queued_message q = index ? (*message)[*index] : (struct queued_message){ HISTORY_NONE, 0 };
            if (index)
                table_remove(seen, ev->message_id, 0);
            if (is_node) {
                a->queued[node] = q.event;
                a->waited_from[node] = call != HISTORY_NONE && !(index && q.position < call_position)
                                           ? call : HISTORY_NONE;
            }
            call = HISTORY_NONE;
        }
        node += is_node;
    }
    table_free(seen);
}

/* The arrivals of every RECEIVE node (models/arrivals.h). */
int arrivals_find(struct arrivals *a, const struct history *h)
{
    struct table seen = { 0 };
    struct queued_message *message = 0;
    size_t capacity = 0;
    a->queued = malloc((size_t)h->nnodes * sizeof *a->queued + 1);
    a->waited_from = malloc((size_t)h->nnodes * sizeof *a->waited_from + 1);
    if (!a->queued || !a->waited_from) {
        arrivals_free(a);
        return -1;
    }
    memset(a->queued, 0xff, (size_t)h->nnodes * sizeof *a->queued);
    memset(a->waited_from, 0xff, (size_t)h->nnodes * sizeof *a->waited_from);
    for (uint32_t p = 0; p < h->nprocesses; p++)
        if (h->first_node[p + 1] > h->first_node[p])
            scan_process(a, h, p, &seen, &message, &capacity);
    free(message);
    return 0;
}

void arrivals_free(struct arrivals *a)
{
    free(a->queued);
    free(a->waited_from);
    a->queued = a->waited_from = 0;
}

/* The record at which RECEIVE node v's message arrived (models/arrivals.h). */
uint32_t arrivals_event(const struct arrivals *a, const struct history *h, uint32_t v)
{
    return a->queued[v] != HISTORY_NONE ? a->queued[v] : h->event[v];
}
