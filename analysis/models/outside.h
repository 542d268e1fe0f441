/*
 * analysis/models/outside.h — where t_max went outside the trace. A
 * request to a process that is not traced becomes an arc weighted by the
 * time its answer took (thesis Fig. 5.3B; models/history.h); when such
 * arcs make most of the critical path, P says more about the waits for
 * those processes (a disk's kernel, the process manager at boot) than
 * about the traced computation. Every P and critical path the reports
 * print says how much of t_max those arcs are and to whom the requests
 * went, and warns above OUTSIDE_WARN_PERCENT, saying what to meter or
 * which window to take.
 */
#ifndef ANALYSIS_MODELS_OUTSIDE_H
#define ANALYSIS_MODELS_OUTSIDE_H

#include <stddef.h>
#include <stdint.h>

#include "models/history.h"

#define OUTSIDE_NAMED 4               /* untraced processes named, the most time first */
#define OUTSIDE_WARN_PERCENT 50.0     /* the share of t_max above which the reports warn */
#define OUTSIDE_NAMED_PERCENT 1.0     /* the warning names the processes asked with this share or more */

/* The requests to one untraced process on the path. */
struct outside_time {
    uint64_t pid;
    uint64_t ns;
    uint32_t requests;
};

/* The outside arcs on one longest path. */
struct outside_share {
    uint64_t t_max;
    uint64_t ns;                      /* their weights, summed */
    uint32_t requests;                /* how many */
    uint32_t nprocesses;              /* the untraced processes they went to */
    struct outside_time named[OUTSIDE_NAMED];   /* the first min(nprocesses, OUTSIDE_NAMED), most time first */
};

/* The outside arcs on the longest path p under the weights w it was found
 * with. 0, or -1 (no memory). */
int outside_share_of(struct outside_share *s, const struct history *h, const struct history_weights *w,
                     const struct history_paths *p);
/* Their share of t_max in percent (0 when t_max is 0). */
double outside_percent(const struct outside_share *s);

/* The untraced processes whose requests the trace serves: those that send
 * to a traced process other than in answer to its request (its users, when
 * servers are traced and their users are not), kernels left aside. Up to
 * `cap` pids into out[], the most messages first; returns how many there
 * are in all. */
uint32_t outside_requestors(const struct history *h, uint64_t *out, uint32_t cap);

/* What to say when s's share is above OUTSIDE_WARN_PERCENT (and "" when it
 * is not), into out[0..cap), one paragraph without a newline: the share and
 * the processes, what P then measures, what to meter, which window to take
 * (`window`: the window the trace was read in, as asked, or NULL), and P on
 * the plain graph (`p_plain`, thesis Fig. 5.3A). `step` names the step in a
 * few words ("step 1"). */
void outside_advice(char *out, size_t cap, const struct outside_share *s, const char *step, double p, double p_plain,
                    const struct history *h, const char *window);

#endif
