/*
 * analysis/models/parallel.h — DPM's measure of parallelism, P = T / t_max,
 * in the thesis's three steps (thesis §5.2.3 and Appendix A):
 *   1. the upper bound: message arcs weigh 0, no contention;
 *   2. message arcs weigh their delivery time for a placement of the
 *      processes on machines (a table measured by a benchmark), still no
 *      contention;
 *   3. processes sharing a machine share its CPU: the arcs within
 *      processes are reweighed by simulating the run, either by the
 *      thesis's own algorithm (Appendix A) or by a discrete-event
 *      simulation in elapsed time (models/contention.c says why both).
 * A placement other than the measured one predicts P for it.
 */
#ifndef ANALYSIS_MODELS_PARALLEL_H
#define ANALYSIS_MODELS_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "models/history.h"
#include "models/outside.h"

/* ---- delivery times (models/delays.c) ---- */

#define DELAY_ROWS_MAX 64

/* A network: the delivery time of one message by size, local (same
 * machine) and remote, in guest ns; rows sorted by size. Read from a
 * network file (docs/analyzer.md, "Networks"): lines `SIZE LOCAL_NS
 * REMOTE_NS`, '#' starting a comment, `# title: TEXT` naming it. */
struct delay_table {
    char name[256];            /* a shipped network's name, or the file's path */
    char path[256];            /* the file it was read from (a shipped one's in the source tree) */
    char title[160];           /* its `# title:` line, or "" */
    size_t nrows;
    struct delay_row {
        uint64_t size, local_ns, remote_ns;
    } row[DELAY_ROWS_MAX];
};

/* The networks shipped with dpm (analysis/networks/NAME.tsv, compiled in
 * by scripts/mknetworks.sh), in name order. */
struct shipped_network {
    const char *name, *path, *text;
};
extern const struct shipped_network shipped_networks[];
extern const size_t shipped_network_count;

/* The default network: the shipped `here`, this system's, measured by
 * `make bench` (netbench). */
void delay_table_default(struct delay_table *d);
/* The network `what`: a shipped one by its name (a word without '/' or
 * '.'), or else the network file of that path. 0; -1 with err saying
 * "FILE:LINE: what is wrong" (or why the file cannot be read); -2 with err
 * when no shipped network has that name. */
int delay_table_network(struct delay_table *d, const char *what, char *err, size_t cap);
/* The network file `path` (whatever its name). 0, or -1 with err. */
int delay_table_read(struct delay_table *d, const char *path, char *err, size_t cap);
/* A network file's text; `origin` (its path) names it in errors and in
 * d->name and d->path. 0, or -1 with err. */
int delay_table_parse(struct delay_table *d, const char *text, const char *origin, char *err, size_t cap);
/* The delivery time of a message of `size` bytes: linear between the
 * table's sizes, the first or last row's beyond them. */
uint64_t delay_of(const struct delay_table *d, uint64_t size, int remote);

/* ---- the steps (models/parallel.c, models/contention.c) ---- */

enum parallel_step {
    STEP_UPPER_BOUND = 1,      /* step 1 */
    STEP_DELIVERY,             /* step 2 */
    STEP_CONTENTION_THESIS,    /* step 3, Appendix A's algorithm */
    STEP_CONTENTION_SIMULATED, /* step 3, the elapsed-time simulation */
};

/* What a step computes. */
struct parallel_result {
    uint64_t total_cpu;        /* T */
    uint64_t t_max;            /* the critical path */
    double parallelism;        /* P = T / t_max (0 when t_max is 0) */
    struct outside_share outside;   /* t_max's time outside the trace, by process asked */
};

/* A placement: machine[p] for each process p of h, the machine it runs
 * on, or PLACE_MEASURED: where its records were written, record by record,
 * so that a process that moved (its MIGRATE records) runs on each machine
 * it was on, from the record it reached it by on. */
#define PLACE_MEASURED UINT32_MAX
/* The machine node v's process runs on from node v on (to its next node),
 * under placement machine[]. */
uint32_t placement_node(const struct history *h, const uint32_t *machine, uint32_t v);

/* The weights of `step` on `graph` for the placement machine[] (above;
 * unused by step 1) and delivery table d (unused by step 1). 0, or -1
 * with err saying why. */
int parallel_weigh(struct history_weights *w, const struct history *h, enum parallel_step step,
                   enum history_graph graph, const uint32_t *machine, const struct delay_table *d, char *err,
                   size_t cap);
/* Run `step` on `graph`: T, t_max, P and the time outside the trace; with
 * `paths` non-NULL the longest paths are left there (the caller frees
 * them). 0, or -1 with err. */
int parallel_step_run(struct parallel_result *r, struct history_paths *paths, const struct history *h,
                      enum parallel_step step, enum history_graph graph, const uint32_t *machine,
                      const struct delay_table *d, char *err, size_t cap);
/* The step's name for reports, and in a few words ("step 3a"). */
const char *parallel_step_name(enum parallel_step step);
const char *parallel_step_short(enum parallel_step step);

/* Every step on both graphs of thesis Fig. 5.3: with the requests outside
 * the trace weighted by their elapsed time (B) and without them (A, the
 * plain graph; the same figures, not computed again, when no request went
 * outside the trace). Indexed by step - 1. */
#define PARALLEL_STEPS 4
struct parallel_steps {
    struct parallel_result elapsed[PARALLEL_STEPS], plain[PARALLEL_STEPS];
};
/* 0, or -1 with err. */
int parallel_steps_run(struct parallel_steps *s, const struct history *h, const uint32_t *machine,
                       const struct delay_table *d, char *err, size_t cap);
/* outside_advice (models/outside.h) for the first step whose time outside
 * the trace is above OUTSIDE_WARN_PERCENT of its t_max, or "". */
void parallel_steps_advice(char *out, size_t cap, const struct parallel_steps *s, const struct history *h,
                           const char *window);

/* Step 3's reweighing of the arcs within processes (models/contention.c),
 * given the cross weights of step 2 in w->cross: w->chain becomes each arc's
 * time under contention. 0, or -1 with err. */
int contention_thesis(struct history_weights *w, const struct history *h, const uint32_t *machine, char *err,
                      size_t cap);
int contention_simulated(struct history_weights *w, const struct history *h, const uint32_t *machine, char *err,
                         size_t cap);

/* ---- placements ---- */

/* The measured placement: each process where its records were written
 * (PLACE_MEASURED). */
void placement_measured(uint32_t *machine, const struct history *h);
/* Every process on a machine of its own. */
void placement_each_own(uint32_t *machine, const struct history *h);
/* Every process on one machine. */
void placement_all_one(uint32_t *machine, const struct history *h);

#endif
