/*
 * analysis/models/timeline.c — the messages of a trace paired, and the
 * shifts of its machines' clocks (models/timeline.h).
 *
 * The shifts are chosen a machine at a time: first the machine with the
 * most messages to and from other machines keeps its clock; then, again and
 * again, the machine with the most messages to and from those already
 * placed gets the shift that has the fewest of those messages arrive before
 * they were sent. Each of them bounds the shift: from below if the machine
 * received it, from above if it sent it. Of the shifts that break the
 * fewest bounds, the first range is taken, and its middle (or the end it
 * has, when it is unbounded on one side: the shift at which the quickest
 * message takes TIMELINE_TRANSIT). A machine with no message to or from
 * those placed keeps its own clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "models/timeline.h"

#define NO_MACHINE TIMELINE_MACHINES

/* A message between two machines: it arrives after it was sent when
 * shift[to] - shift[from] >= need. */
struct crossing {
    uint32_t from, to;
    int64_t need;
};

/* From shift `at` on, `delta` more bounds are broken. */
struct step {
    int64_t at;
    int delta;
};

/* Whether ev can be one end of a message on the axis. */
static int usable(const struct dpm_event *ev)
{
    uint32_t needed = EV_PID | EV_TIME | EV_MESSAGE_ID;
    return (ev->present & needed) == needed && ev->machine < TIMELINE_MACHINES;
}

/* Whether SEND ev sent a message (one that failed at once did not). */
static int sent(const struct dpm_event *ev)
{
    return usable(ev) && (!(ev->present & EV_STATUS) || ev->status == 0);
}

/* Each RECEIVE paired with the SEND of its message id: the SENDs by id in a
 * table first, since a log may hold a RECEIVE before its SEND. */
static void pair_messages(struct timeline *tl, const struct dpm_trace *t)
{
    struct table sends = { 0 };
    size_t capacity = 0;
    for (size_t i = 0; i < t->nevents; i++) {
        const struct dpm_event *ev = &t->events[i];
        if (ev->type == MT_SEND && sent(ev) && !table_find(&sends, ev->message_id, 0))
            table_insert(&sends, ev->message_id, 0, (uint32_t)i);
    }
    for (size_t i = 0; i < t->nevents; i++) {
        const struct dpm_event *ev = &t->events[i];
        uint32_t *send = ev->type == MT_RECEIVE && usable(ev) ? table_find(&sends, ev->message_id, 0) : 0;
        if (!send)
            continue;
        tl->message = array_grow(tl->message, &capacity, tl->nmessages, sizeof *tl->message);
        tl->message[tl->nmessages++] = (struct timeline_message){ *send, (uint32_t)i };
        table_remove(&sends, ev->message_id, 0);
    }
    table_free(&sends);
}

static int by_position(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The shift of machine x that breaks the fewest bounds of the messages
 * between it and the machines placed (the middle of the first range of
 * them). steps has room for n. */
static int64_t best_shift(const struct crossing *c, size_t n, uint32_t x, const uint8_t *placed, const int64_t *shift,
                          struct step *steps)
{
    size_t k = 0;
    int broken = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].to == x && placed[c[i].from]) {
            steps[k++] = (struct step){ shift[c[i].from] + c[i].need, -1 };   /* broken below this */
            broken++;
        } else if (c[i].from == x && placed[c[i].to]) {
            steps[k++] = (struct step){ shift[c[i].to] - c[i].need + 1, +1 };   /* broken from this on */
        }
    }
    qsort(steps, k, sizeof *steps, by_position);
    int best = broken, in_best = 1;
    int64_t low = INT64_MIN, high = k ? steps[0].at - 1 : INT64_MAX;
    for (size_t i = 0; i < k;) {
        int64_t at = steps[i].at;
        while (i < k && steps[i].at == at)
            broken += steps[i++].delta;
        int64_t end = i < k ? steps[i].at - 1 : INT64_MAX;
        if (broken < best) {
            best = broken;
            low = at;
            high = end;
            in_best = 1;
        } else if (broken == best && in_best) {
            high = end;
        } else {
            in_best = 0;
        }
    }
    if (low == INT64_MIN)
        return high == INT64_MAX ? 0 : high;
    return high == INT64_MAX ? low : low + (high - low) / 2;
}

/* The unplaced machine to place next: the one with the most messages to
 * and from the placed ones, else the one with the most messages, else the
 * first with records; NO_MACHINE when all are placed. */
static uint32_t next_machine(const struct crossing *c, size_t n, const uint8_t *placed, const uint8_t *present)
{
    static uint32_t linked[TIMELINE_MACHINES], all[TIMELINE_MACHINES];
    uint32_t best = NO_MACHINE;
    memset(linked, 0, sizeof linked);
    memset(all, 0, sizeof all);
    for (size_t i = 0; i < n; i++) {
        all[c[i].from]++;
        all[c[i].to]++;
        linked[c[i].to] += placed[c[i].from];
        linked[c[i].from] += placed[c[i].to];
    }
    for (uint32_t m = 0; m < TIMELINE_MACHINES; m++) {
        if (placed[m] || !present[m])
            continue;
        if (best == NO_MACHINE || linked[m] > linked[best] || (linked[m] == linked[best] && all[m] > all[best]))
            best = m;
    }
    return best;
}

/* The shifts, and the messages they leave arriving before they were sent. */
static void choose_shifts(struct timeline *tl, const struct dpm_trace *t)
{
    uint8_t present[TIMELINE_MACHINES] = { 0 }, placed[TIMELINE_MACHINES] = { 0 };
    struct crossing *c = malloc((size_t)tl->nmessages * sizeof *c + 1);
    struct step *steps = malloc((size_t)tl->nmessages * sizeof *steps + 1);
    size_t n = 0;
    if (!c || !steps) {
        fprintf(stderr, "dpm: no memory for the clocks of %u messages\n", tl->nmessages);
        exit(1);
    }
    for (size_t i = 0; i < t->nevents; i++)
        if (t->events[i].machine < TIMELINE_MACHINES)
            present[t->events[i].machine] = 1;
    for (uint32_t i = 0; i < tl->nmessages; i++) {
        const struct dpm_event *s = &t->events[tl->message[i].send], *r = &t->events[tl->message[i].receive];
        if (s->machine != r->machine)
            c[n++] = (struct crossing){ s->machine, r->machine,
                                        (int64_t)s->time + TIMELINE_TRANSIT - (int64_t)r->time };
    }
    uint32_t m;
    while ((m = next_machine(c, n, placed, present)) != NO_MACHINE) {
        tl->shift[m] = best_shift(c, n, m, placed, tl->shift, steps);
        placed[m] = 1;
    }
    int64_t least = INT64_MAX;
    for (m = 0; m < TIMELINE_MACHINES; m++)
        if (present[m] && tl->shift[m] < least)
            least = tl->shift[m];
    for (m = 0; m < TIMELINE_MACHINES; m++)
        tl->shift[m] = present[m] ? tl->shift[m] - least : 0;
    tl->between_machines = (uint32_t)n;
    for (size_t i = 0; i < n; i++)
        tl->backward += tl->shift[c[i].to] - tl->shift[c[i].from] < c[i].need;
    free(c);
    free(steps);
}

/* Pair the messages and choose the shifts (models/timeline.h). */
void timeline_build(struct timeline *tl, const struct dpm_trace *t)
{
    memset(tl, 0, sizeof *tl);
    pair_messages(tl, t);
    choose_shifts(tl, t);
}

void timeline_free(struct timeline *tl)
{
    free(tl->message);
    memset(tl, 0, sizeof *tl);
}
