/*
 * analysis/models/vclock.h — vector timestamps (Fidge and Mattern, 1988)
 * of the nodes of a history graph (models/history.h): Lamport's
 * happens-before made checkable, independent of any machine's clock.
 *
 * Each traced process p has a component. Node v of process p has the
 * vector V(v) = the componentwise maximum of V(v-1) (the node before it in
 * p, none at p's start node) and V(u) (u the other end of the cross arc
 * into v: a message's SEND, or a request outside the trace), with its own
 * component then one more. So V(v)[p] counts p's nodes up to v, and
 * e happens before f (f is reachable from e in the graph, e != f) exactly
 * when V(e)[process of e] <= V(f)[process of e]. The two are concurrent
 * when neither happens before the other.
 */
#ifndef ANALYSIS_MODELS_VCLOCK_H
#define ANALYSIS_MODELS_VCLOCK_H

#include <stdint.h>

#include "models/history.h"

/* Called for each node in the order of h->order, with its vector
 * (nprocesses components, valid during the call only). */
typedef void vclock_visit(void *context, uint32_t node, const uint32_t *vector);

/* Walk the nodes of h in topological order with their vectors. Memory: a
 * vector per process, and one per message whose SEND is walked and whose
 * RECEIVE not yet. 0, or -1 (no memory). */
int vclock_walk(const struct history *h, vclock_visit *visit, void *context);

/* How much of the trace happens-before orders: over pairs of nodes of
 * different processes, how many are ordered (one happens before the
 * other); the rest are concurrent. Each node f is preceded by
 * sum over q != p of V(f)[q] nodes of other processes, so the count is one
 * walk. */
struct vclock_order {
    uint64_t nodes;
    uint64_t pairs;            /* pairs of nodes of different processes */
    uint64_t ordered;          /* of them, ordered by happens-before */
};
/* 0, or -1 (no memory). */
int vclock_order(const struct history *h, struct vclock_order *o);

#endif
