/*
 * analysis/models/waitstates.h — why processes waited: each blocking
 * RECEIVE and each CALL's wait split into its causes, in the manner of
 * Scalasca's wait-state analysis (Geimer, Wolf, Wylie, Mohr: "A scalable
 * tool architecture for diagnosing wait states in massively parallel
 * applications", 2009), over the history graph (models/history.h).
 *
 * A wait runs from a RECEIVECALL to the RECEIVE that ends it, on the
 * waiting process's clock, when the message was not already queued
 * (models/arrivals.h; `dpm stats` calls it a receive blocking time); a
 * process that moved while it waited ends it on another machine's clock,
 * which the offsets below put on the first one's. Its
 * boundaries on other processes' records are put on one clock by the
 * offsets of models/clocks.h, then held inside the wait, so that the parts
 * of a wait always add up to the wait exactly. The parts:
 *
 * A blocking RECEIVE (RECEIVECALL kind 0), of a message sent at s:
 *   late sender    from the RECEIVECALL to s (the sender had not sent yet)
 *   delivery       from s to the RECEIVE
 * A CALL (RECEIVECALL kind 2), whose request arrived at the server at a
 * (its MESSAGEQUEUED, or its RECEIVE if the server was waiting), which the
 * server received at r and answered by the reply's SEND at p:
 *   delivery       from the RECEIVECALL to a, and from p to the RECEIVE
 *   queued         from a to r (the request waited in the server's queue)
 *   server's work  from r to p
 * Either, when the other end is not in the trace (no matching SEND, a
 * server not traced):
 *   outside the trace   the whole wait
 *
 * Each part is charged to a process: late sender to the sender; delivery,
 * queued and server's work to the server (the sender for a RECEIVE);
 * outside to the process the records name. Late sender and server's work
 * are also charged to a function: the one holding the PC of the late SEND,
 * or of the reply's SEND.
 */
#ifndef ANALYSIS_MODELS_WAITSTATES_H
#define ANALYSIS_MODELS_WAITSTATES_H

#include <stddef.h>
#include <stdint.h>

#include "models/arrivals.h"
#include "models/clocks.h"
#include "models/critpath.h"
#include "models/history.h"

enum wait_category {
    WAIT_LATE_SENDER,
    WAIT_DELIVERY,
    WAIT_QUEUED,
    WAIT_SERVICE,
    WAIT_OUTSIDE,
    WAIT_CATEGORIES
};

/* "late sender", "delivery", "queued", "server's work", "outside the trace". */
const char *wait_category_name(enum wait_category c);

/* The time one process waited for one cause on one process. */
struct wait_pair {
    uint32_t waiter;           /* the waiting process (index into trace->processes) */
    uint8_t category;          /* enum wait_category */
    uint64_t responsible;      /* its pid, traced or not; 0 if the records do not say */
    uint64_t time;             /* ns */
    uint64_t waits;            /* the waits that had part of their time here */
};

/* The time a function held others waiting: late SENDs, or server's work. */
struct wait_function {
    uint8_t category;          /* WAIT_LATE_SENDER or WAIT_SERVICE */
    uint32_t process;          /* the responsible process (index) */
    uint64_t start;            /* the function's address, or the PC itself if unnamed */
    const char *name;          /* NULL if unnamed */
    uint64_t time, waits;
};

struct waitstates {
    uint64_t waits, call_waits, receive_waits;   /* the waits split (calls + receives = waits) */
    uint64_t total;                              /* their time, ns */
    uint64_t category[WAIT_CATEGORIES];          /* the total by cause: they add up to `total` */
    uint64_t *waited;                            /* [nprocesses]: each process's waiting time */
    struct wait_pair *pair;                      /* largest first */
    uint32_t npairs;
    struct wait_function *function;              /* largest first */
    uint32_t nfunctions;
    uint64_t untimed;                            /* waits not split: a record they need lacks TIME */
};

/* Split every wait of h. namer may be NULL (functions then by PC). 0, or
 * -1 with err (no memory). */
int waitstates_find(struct waitstates *w, const struct history *h, const struct arrivals *a,
                    const struct clock_model *c, critpath_namer *namer, void *context, char *err, size_t cap);
void waitstates_free(struct waitstates *w);

#endif
