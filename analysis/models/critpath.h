/*
 * analysis/models/critpath.h — the critical path itself (thesis §5.2.3:
 * t_max is its length): the arcs of the longest path through the history
 * graph, who holds it for how long, and the functions it runs through.
 */
#ifndef ANALYSIS_MODELS_CRITPATH_H
#define ANALYSIS_MODELS_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "models/history.h"
#include "models/parallel.h"

/* One arc of the path, ending at node `to`. */
struct critpath_arc {
    uint32_t to;
    uint8_t cross;             /* enum history_cross: HX_NONE for an arc within a process */
    uint64_t weight;
};

/* A run of consecutive arcs within one process, and the cross arc (a
 * message or a request outside the trace) that led the path into it. */
struct critpath_segment {
    uint32_t process;
    uint32_t arcs;
    uint64_t held;             /* the sum of their weights */
    uint8_t came_by;           /* enum history_cross: HX_NONE for the first segment */
    uint64_t came_weight;      /* that cross arc's weight */
};

struct critpath {
    uint64_t t_max;
    struct critpath_arc *arc;  /* from the first start node on, in path order */
    uint32_t narcs;
    struct critpath_segment *segment;
    uint32_t nsegments;
    uint64_t *held;            /* [nprocesses]: each process's time on the path */
    uint64_t delivery;         /* on message arcs */
    uint64_t outside;          /* on outside arcs (requests to processes not traced) */
    struct outside_share outside_by;   /* those by the untraced process asked */
};

/* The critical path under `step` on `graph` for the placement and delivery
 * table (models/parallel.h). 0, or -1 with err. */
int critpath_find(struct critpath *c, const struct history *h, enum parallel_step step, enum history_graph graph,
                  const uint32_t *machine, const struct delay_table *d, char *err, size_t cap);
void critpath_free(struct critpath *c);

/* Names an address in process p's program: sets *start (the first
 * address of the function holding it) and returns its name, or returns
 * NULL if unknown. */
typedef const char *critpath_namer(void *context, uint32_t process, uint64_t address, uint64_t *start);

/* Time on the path per function: each arc within a process is charged to
 * the function that made the call ending it (thesis §5.2.3 "where in the
 * program"): the function holding the PC of its end record, or, when that
 * PC is a return address (meter/record.h: the records of the process's own
 * kernel calls), the one holding PC - 1, the call itself. */
struct critpath_function {
    uint32_t process;
    uint64_t start;            /* the function's address, or the record's PC itself if unnamed */
    const char *name;          /* NULL if unnamed */
    uint64_t held;
};
/* The path's functions, most time first, into *out (the caller frees it). 0, or -1 (no memory). */
int critpath_functions(const struct critpath *c, const struct history *h, critpath_namer *namer, void *context,
                       struct critpath_function **out, uint32_t *n);

#endif
