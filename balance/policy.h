/*
 * balance/policy.h — the feedback scheduler's rule (docs/migration.md,
 * "The scheduler"): from the message rates between processes, the CPU each
 * wants and where each runs, which processes to move where. Plain C with
 * no system calls, so that the host tests it (tests/balance_test.c) as the
 * scheduler (balance/balance.c) runs it.
 *
 * The rule prices a placement in one unit, the time lost each second:
 *  - every message between two machines costs `remote_ns` more than the
 *    same message within one (measured by the scheduler at its start);
 *  - a machine whose processes want more than its one CPU (their demands
 *    added up, D > 1) makes them wait D - 1 seconds each second.
 * A move of a process, or of a group of processes that talk to each other
 * on one machine, to another machine is worth the time it saves: messages
 * made local less messages made remote, times remote_ns, plus the waiting
 * for the CPU it takes away from the machine it leaves less what it adds
 * to the one it goes to. The best move worth at least `threshold_ns` a
 * second is made, the placement updated, and the next looked for, up to
 * `max_moves` in one interval (hysteresis: the threshold, and a process
 * moved moves again only `residence_ns` after it came where it is).
 */
#ifndef BALANCE_POLICY_H
#define BALANCE_POLICY_H

#include <stdint.h>

#define POLICY_PROCESSES 128
#define POLICY_PAIRS     256
#define POLICY_MACHINES  16
#define POLICY_GROUP     8          /* processes moved together, at most */

struct policy_process {
    uint64_t pid;
    uint32_t machine;         /* where it runs */
    int      movable;         /* the scheduler may move it (metered, not refused before, not ending) */
    double   demand;          /* the CPU it wants: the share of the time it is runnable, 0 to 1 */
    uint64_t settled_ns;      /* when it was last moved (by the scheduler); 0: never */
};

struct policy_pair {
    int    a, b;              /* indexes of processes */
    double rate;              /* messages a second, both ways */
};

struct policy_model {
    struct policy_process processes[POLICY_PROCESSES];
    int nprocesses;
    struct policy_pair pairs[POLICY_PAIRS];
    int npairs;
    uint32_t machines;        /* machines 0 to machines - 1 ... */
    uint8_t up[POLICY_MACHINES];   /* ... of which these run */
};

struct policy_params {
    double   remote_ns;       /* what a message costs more between machines than within one */
    double   threshold_ns;    /* a move must save at least this much time a second */
    uint64_t residence_ns;    /* a process stays at least this long where it came */
    uint64_t now_ns;
    double   group_rate;      /* processes on one machine exchanging at least this many messages a
                                 second may move together */
    int      max_moves;       /* in one interval */
};

/* A move the rule decided: which processes (indexes), from where to where,
 * what it saves, and why: the partner it talks with most on the machine
 * it goes to, and the machines' demands before the move. */
struct policy_move {
    int      members[POLICY_GROUP];
    int      nmembers;
    uint32_t from, to;
    double   gain_ns;          /* time saved a second, in all */
    double   message_gain_ns;  /* of which by messages made local (less those made remote) */
    double   cpu_gain_ns;      /* of which by waiting for a CPU */
    double   messages;         /* messages a second made local, less those made remote */
    int      partner;          /* the process on `to` it exchanges most messages with, or -1 */
    double   partner_rate;
    double   demand_from, demand_to;   /* the two machines' demands, before */
    double   demand_moved;     /* the CPU the moved processes want */
};

/* The moves to make now, at most `max` of them (and params->max_moves),
 * into moves[]; their number. The model is updated as if they were made
 * (machines, settled_ns): a caller whose move did not work puts back where
 * the process is, and may ask again. */
int policy_decide(struct policy_model *m, const struct policy_params *params, struct policy_move *moves, int max);

/* Machine k's demand: the CPU its processes want, added up. */
double policy_demand(const struct policy_model *m, uint32_t machine);

#endif
