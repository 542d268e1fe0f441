/*
 * analysis/models/clocks.h — the machines' clocks set against one another
 * from the messages between them. Each machine's TIME is its own clock;
 * DPM never subtracts two machines' clocks (thesis §5.2.2). This model
 * estimates how far each machine's clock reads ahead of a reference
 * machine's, with the interval the trace allows, so that events of
 * different machines can be put on one time line.
 *
 * The model: machine m's clock reads offset[m] more than the reference
 * machine's at every instant (a constant offset, no drift), and a message
 * between machines arrives no sooner than `min_delay` ns after it was sent.
 * A message sent on machine a at TIME s and arriving on machine b at TIME r
 * (its MESSAGEQUEUED, or its RECEIVE when the receiver waited for it:
 * models/arrivals.h) then says
 *     offset[b] - offset[a] <= r - s - min_delay,
 * and the messages in the other direction bound it from below. For two
 * machines that is the interval [max(s' - r' + min_delay), min(r - s -
 * min_delay)] over the messages each way; for more, the constraints form a
 * graph (an arc a -> b weighing min(r - s) - min_delay over a's messages to
 * b) and offset[m] lies in [-dist(m, ref), dist(ref, m)], its shortest
 * paths (Floyd-Warshall over the machines). Each interval is exact: every
 * value in it is allowed by some set of offsets that satisfies every
 * message. The estimate: machine by machine in number order, the midpoint
 * of what the machines fixed before it leave (one side bounded: the end
 * nearest 0; none: 0), fixed in turn, so that the estimates together
 * satisfy every message. Its error is at most `bound`, the distance from
 * the estimate to the interval's farther end.
 *
 * A process that moved (a MIGRATE node, models/history.h) carried its
 * state from one machine to the other after its last record there and
 * before its MIGRATE record: that arc bounds the two clocks as a message
 * does, and is one of the constraints.
 *
 * When no constant offsets satisfy every message (the clocks drift, or
 * min_delay is too large), the constraint graph has a negative cycle. The
 * model then finds the smallest `slack` such that offsets exist with every
 * message at most `slack` ns backward (binary search over it), and
 * estimates as above with every arc `slack` longer: the intervals and
 * bounds are then no guarantee.
 */
#ifndef ANALYSIS_MODELS_CLOCKS_H
#define ANALYSIS_MODELS_CLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "models/arrivals.h"
#include "models/history.h"

#define CLOCKS_UNBOUNDED INT64_MAX

struct clock_machine {
    uint32_t machine;          /* its number, as records carry it */
    int64_t offset;            /* the estimate: its clock minus the reference's, ns */
    int64_t low, high;         /* the interval the messages allow (-/+CLOCKS_UNBOUNDED: no bound on that side) */
    int64_t bound;             /* max(offset - low, high - offset), or CLOCKS_UNBOUNDED */
    uint64_t sent, received;   /* timed messages to and from other machines */
};

/* The direct bound of a pair of machines a < b from their own messages:
 * offset[b] - offset[a] in [low, high]. */
struct clock_pair {
    uint32_t a, b;             /* indices into machine[] */
    uint64_t a_to_b, b_to_a;   /* timed messages each way */
    int64_t low, high;         /* -/+CLOCKS_UNBOUNDED without messages that way */
};

struct clock_model {
    struct clock_machine *machine;   /* every machine with a SEND or RECEIVE, by number */
    uint32_t nmachines;
    uint32_t reference;              /* index of the reference machine (offset 0) */
    struct clock_pair *pair;         /* pairs that exchanged messages, by (a, b) */
    uint32_t npairs;
    uint64_t min_delay;
    uint64_t slack;                  /* 0: constant offsets satisfy every message */
    /* The messages (the graph's message arcs). */
    uint64_t messages, remote, untimed;  /* all; between machines with TIME at both ends; lacking TIME */
    uint64_t backward_before;        /* arriving before they were sent, by the machines' own clocks */
    uint64_t backward_after;         /* the same by the corrected clocks */
    uint64_t backward_local;         /* of those before, between processes of one machine (one clock:
                                        no offset corrects them) */
    uint64_t moves;                  /* arcs along a process between two machines (its moves: the arc
                                        into a MIGRATE node), timed at both ends: bounds as messages */
    int64_t *node_offset;            /* [nnodes]: the offset of the clock of each node's record */
};

/* Estimate the offsets of the machines of h (models/clocks.h says how);
 * `reference` is a machine number, or -1 for the lowest. 0; or with err,
 * -1 (no memory, or more machines than a pid can name: a damaged log) or
 * -2 (no record of the trace has that machine). */
int clocks_estimate(struct clock_model *c, const struct history *h, const struct arrivals *a, uint64_t min_delay,
                    int64_t reference, char *err, size_t cap);
void clocks_free(struct clock_model *c);

/* The machine whose clock stamped event ev of process p: its record's
 * machine (load/event.h: where the log did not keep it, the machine the
 * process was on then). */
uint32_t clocks_machine_of(const struct history *h, uint32_t p, const struct dpm_event *ev);

/* The index of machine number m in c->machine, or UINT32_MAX (no node of
 * it). */
uint32_t clocks_machine_index(const struct clock_model *c, uint32_t m);

/* The corrected TIME of node v's record: its TIME minus its machine's
 * offset (on the reference machine's clock). */
int64_t clocks_node_time(const struct clock_model *c, const struct history *h, uint32_t v);

/* The corrected TIME of record `event` of process p. */
int64_t clocks_event_time(const struct clock_model *c, const struct history *h, uint32_t p, uint32_t event);

/* Times to draw or list the nodes by: the corrected times, each moved on
 * where needed to be no earlier than the node before it in its process and
 * than the SEND of its message, in topological order; so that no message
 * runs backward even when constant offsets could not achieve it. Into
 * out[nnodes]; the count of nodes moved. */
uint64_t clocks_display_times(const struct clock_model *c, const struct history *h, int64_t *out);

#endif
