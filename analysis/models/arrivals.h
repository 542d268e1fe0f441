/*
 * analysis/models/arrivals.h — the receiving side of each message of a
 * history graph (models/history.h): when the message reached its receiver,
 * and whether the receiver had been waiting for it. Clock offsets
 * (models/clocks.h) bound a machine's clock by the arrivals, and wait states
 * (models/waitstates.h) split the waits they end.
 *
 * A message arrives at its MESSAGEQUEUED when the receiver was not waiting
 * for it, and at its RECEIVE when it was handed over at once. A RECEIVE
 * ended a wait when a RECEIVECALL that could wait (not an empty ARECEIVE,
 * not a CALL whose send failed) came before it and its message was not
 * already queued at that RECEIVECALL: the definition of a blocking receive
 * in `dpm stats` (thesis §5.2.2, receive blocking time).
 */
#ifndef ANALYSIS_MODELS_ARRIVALS_H
#define ANALYSIS_MODELS_ARRIVALS_H

#include <stdint.h>

#include "models/history.h"

struct arrivals {
    uint32_t *queued;          /* [nnodes]: at a RECEIVE node, the record (into trace->events) of its
                                  message's MESSAGEQUEUED, or HISTORY_NONE (handed over at the RECEIVE) */
    uint32_t *waited_from;     /* [nnodes]: at a RECEIVE node that ended a wait, the RECEIVECALL that
                                  began it, or HISTORY_NONE */
};

/* The arrivals of h's RECEIVE nodes, one pass over each process's records.
 * 0, or -1 (no memory). */
int arrivals_find(struct arrivals *a, const struct history *h);
void arrivals_free(struct arrivals *a);

/* The record at which the message of RECEIVE node v arrived (its
 * MESSAGEQUEUED, or the RECEIVE itself). */
uint32_t arrivals_event(const struct arrivals *a, const struct history *h, uint32_t v);

#endif
