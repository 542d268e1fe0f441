/*
 * analysis/models/timeline.h — a trace laid on one time axis, for the
 * viewers that draw every machine on one (dpm export --perfetto): each
 * message whose SEND and RECEIVE are both in the trace, paired; and a shift
 * of each machine's clock that has as many messages between machines as it
 * can arrive after they were sent.
 *
 * A machine's clock counts from its own boot, and under -icount it runs at
 * the rate its processor executes instructions (docs/architecture.md, "Time
 * is instructions"), so the clocks of two machines differ by an offset that
 * drifts: no one shift per machine need suit every message. The messages
 * that still arrive "before" they were sent are counted. A shift is a
 * constant, so the times of one machine keep their exact differences; only
 * clocks of one machine are ever compared by the analyses, and this is for
 * drawing.
 */
#ifndef ANALYSIS_MODELS_TIMELINE_H
#define ANALYSIS_MODELS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "load/event.h"

#define TIMELINE_MACHINES 256      /* a pid's machine is a byte */
#define TIMELINE_TRANSIT  1        /* ns: a message "arrives after it was sent" when its RECEIVE is at
                                      least this much after its SEND (the SEND's slice in the export) */

/* A message: its SEND and its RECEIVE, as the indices given to timeline_add. */
struct timeline_message {
    uint32_t send, receive;
};

/* A message id seen (models/timeline.c): its first end, until the other comes. */
struct timeline_id;
/* A message between two machines, a bound on their shifts (models/timeline.c). */
struct timeline_crossing;

struct timeline {
    struct timeline_message *message;  /* in the order of their RECEIVEs (once finished) */
    uint32_t nmessages;
    int64_t shift[TIMELINE_MACHINES];  /* ns added to machine m's clock; the least is 0 */
    uint32_t between_machines;         /* messages whose SEND and RECEIVE are on two machines */
    uint32_t backward;                 /* of those, arriving before they were sent, shifted */
    uint8_t present[TIMELINE_MACHINES];   /* the machines that wrote an event added so far */
    /* What timeline_add keeps until timeline_finish: */
    struct timeline_id *ids;           /* a hash table of the message ids seen, a power of two long */
    size_t ids_capacity, nids, message_capacity;
    struct timeline_crossing *crossing;
    size_t ncrossings, crossing_capacity;
};

/* An empty timeline, to add the events of a trace to. */
void timeline_init(struct timeline *tl);
/* The event numbered `index` (the events in order, from 0): a SEND or
 * RECEIVE is paired with the other end of its message whichever comes
 * first. A message is the first SEND of a message id that sent it and the
 * first RECEIVE of that id, when both are in the trace. Exits with a
 * message if memory runs out. */
void timeline_add(struct timeline *tl, const struct dpm_event *ev, uint32_t index);
/* After the last event: the messages in the order of their RECEIVEs, and
 * the shifts. */
void timeline_finish(struct timeline *tl);
void timeline_free(struct timeline *tl);

/* The time of ev on the shared axis: its machine's clock, shifted. */
static inline uint64_t timeline_time(const struct timeline *tl, const struct dpm_event *ev)
{
    return ev->time + (uint64_t)(ev->machine < TIMELINE_MACHINES ? tl->shift[ev->machine] : 0);
}

#endif
