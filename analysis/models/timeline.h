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

/* A message: its SEND and its RECEIVE, as indices into trace->events. */
struct timeline_message {
    uint32_t send, receive;
};

struct timeline {
    struct timeline_message *message;  /* in the order of their RECEIVEs in trace->events */
    uint32_t nmessages;
    int64_t shift[TIMELINE_MACHINES];  /* ns added to machine m's clock; the least is 0 */
    uint32_t between_machines;         /* messages whose SEND and RECEIVE are on two machines */
    uint32_t backward;                 /* of those, arriving before they were sent, shifted */
};

/* Pair the messages of trace t and choose the shifts; exits with a message
 * if memory runs out. */
void timeline_build(struct timeline *tl, const struct dpm_trace *t);
void timeline_free(struct timeline *tl);

/* The time of ev on the shared axis: its machine's clock, shifted. */
static inline uint64_t timeline_time(const struct timeline *tl, const struct dpm_event *ev)
{
    return ev->time + (uint64_t)(ev->machine < TIMELINE_MACHINES ? tl->shift[ev->machine] : 0);
}

#endif
