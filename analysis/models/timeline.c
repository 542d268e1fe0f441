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
 *
 * Messages are paired as the events come, in one pass: a table of the
 * message ids seen holds each id's first end until its other end comes,
 * and then that the id is paired.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "models/timeline.h"

#define NO_MACHINE TIMELINE_MACHINES

/* A message between two machines: it arrives after it was sent when
 * shift[to] - shift[from] >= need. */
struct timeline_crossing {
    uint32_t from, to;
    int64_t need;
};

/* What is known of a message id: its first end, while the other end has
 * not come (ID_SENT, ID_RECEIVED), then that it is paired, so that no
 * later end of it is. */
enum { ID_FREE, ID_SENT, ID_RECEIVED, ID_PAIRED };

struct timeline_id {
    uint64_t id;
    uint64_t time;           /* the first end's, on its machine's clock */
    uint32_t event;          /* the first end's index */
    uint8_t machine;         /* the first end's */
    uint8_t state;           /* ID_FREE: the slot is unused */
};

/* From shift `at` on, `delta` more bounds are broken. */
struct step {
    int64_t at;
    int delta;
};

static void out_of_memory(void)
{
    fputs("dpm: out of memory\n", stderr);
    exit(1);
}

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

/* The slot of message id `id` in the table: its own, or the free one
 * where it goes (linear probing from its hash, MurmurHash3's finaliser:
 * ids differ mostly in their low bits). */
static struct timeline_id *id_slot(const struct timeline *tl, uint64_t id)
{
    uint64_t h = id;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    size_t mask = tl->ids_capacity - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask)
        if (tl->ids[i].state == ID_FREE || tl->ids[i].id == id)
            return &tl->ids[i];
}

/* Double the table of ids (from 4096 slots), keeping it at most three
 * quarters full, so that probes stay short. */
static void grow_ids(struct timeline *tl)
{
    struct timeline_id *old = tl->ids;
    size_t old_capacity = tl->ids_capacity;
    tl->ids_capacity = old_capacity ? 2 * old_capacity : 4096;
    tl->ids = calloc(tl->ids_capacity, sizeof *tl->ids);
    if (!tl->ids)
        out_of_memory();
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].state != ID_FREE)
            *id_slot(tl, old[i].id) = old[i];
    free(old);
}

void timeline_init(struct timeline *tl)
{
    memset(tl, 0, sizeof *tl);
}

/* A message from the SEND `s` (event, time, machine) to the RECEIVE `r`. */
static void add_message(struct timeline *tl, uint32_t s, uint64_t s_time, uint32_t s_machine, uint32_t r,
                        uint64_t r_time, uint32_t r_machine)
{
    tl->message = array_grow(tl->message, &tl->message_capacity, tl->nmessages, sizeof *tl->message);
    tl->message[tl->nmessages++] = (struct timeline_message){ s, r };
    if (s_machine == r_machine)
        return;
    tl->crossing = array_grow(tl->crossing, &tl->crossing_capacity, tl->ncrossings, sizeof *tl->crossing);
    tl->crossing[tl->ncrossings++] = (struct timeline_crossing){ s_machine, r_machine,
                                                                (int64_t)s_time + TIMELINE_TRANSIT - (int64_t)r_time };
}

void timeline_add(struct timeline *tl, const struct dpm_event *ev, uint32_t index)
{
    if (ev->machine < TIMELINE_MACHINES)
        tl->present[ev->machine] = 1;
    uint8_t end = ev->type == MT_SEND && sent(ev) ? ID_SENT : ev->type == MT_RECEIVE && usable(ev) ? ID_RECEIVED : 0;
    if (!end)
        return;
    if (4 * (tl->nids + 1) > 3 * tl->ids_capacity)
        grow_ids(tl);
    struct timeline_id *slot = id_slot(tl, ev->message_id);
    if (slot->state == ID_FREE) {
        *slot = (struct timeline_id){ ev->message_id, ev->time, index, (uint8_t)ev->machine, end };
        tl->nids++;
    } else if (slot->state != ID_PAIRED && slot->state != end) {
        if (end == ID_RECEIVED)
            add_message(tl, slot->event, slot->time, slot->machine, index, ev->time, ev->machine);
        else
            add_message(tl, index, ev->time, ev->machine, slot->event, slot->time, slot->machine);
        slot->state = ID_PAIRED;
    }
}

static int by_position(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The shift of machine x that breaks the fewest bounds of the messages
 * between it and the machines placed (the middle of the first range of
 * them). steps has room for n. */
static int64_t best_shift(const struct timeline_crossing *c, size_t n, uint32_t x, const uint8_t *placed,
                          const int64_t *shift, struct step *steps)
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
static uint32_t next_machine(const struct timeline_crossing *c, size_t n, const uint8_t *placed, const uint8_t *present)
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
static void choose_shifts(struct timeline *tl)
{
    const struct timeline_crossing *c = tl->crossing;
    size_t n = tl->ncrossings;
    uint8_t placed[TIMELINE_MACHINES] = { 0 };
    struct step *steps = malloc(n * sizeof *steps + 1);
    if (!steps)
        out_of_memory();
    uint32_t m;
    while ((m = next_machine(c, n, placed, tl->present)) != NO_MACHINE) {
        tl->shift[m] = best_shift(c, n, m, placed, tl->shift, steps);
        placed[m] = 1;
    }
    int64_t least = INT64_MAX;
    for (m = 0; m < TIMELINE_MACHINES; m++)
        if (tl->present[m] && tl->shift[m] < least)
            least = tl->shift[m];
    for (m = 0; m < TIMELINE_MACHINES; m++)
        tl->shift[m] = tl->present[m] ? tl->shift[m] - least : 0;
    tl->between_machines = (uint32_t)n;
    for (size_t i = 0; i < n; i++)
        tl->backward += tl->shift[c[i].to] - tl->shift[c[i].from] < c[i].need;
    free(steps);
}

static int by_receive(const void *a, const void *b)
{
    const struct timeline_message *x = a, *y = b;
    return x->receive < y->receive ? -1 : x->receive > y->receive;
}

/* The messages in the order of their RECEIVEs (paired in the order of
 * their later ends), and the shifts; what only pairing needed is freed. */
void timeline_finish(struct timeline *tl)
{
    uint32_t sorted = 1;
    while (sorted < tl->nmessages && tl->message[sorted - 1].receive < tl->message[sorted].receive)
        sorted++;
    if (sorted < tl->nmessages)
        qsort(tl->message, tl->nmessages, sizeof *tl->message, by_receive);
    free(tl->ids);
    tl->ids = 0;
    tl->ids_capacity = tl->nids = 0;
    choose_shifts(tl);
    free(tl->crossing);
    tl->crossing = 0;
    tl->ncrossings = tl->crossing_capacity = 0;
}

void timeline_free(struct timeline *tl)
{
    free(tl->message);
    free(tl->ids);
    free(tl->crossing);
    memset(tl, 0, sizeof *tl);
}
