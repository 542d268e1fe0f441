/*
 * analysis/models/causality.h — paths of causality (thesis §5.2.4, DPM
 * paper §IV-B): which chains of messages a request to a set of server
 * processes sets off, written as strings of the servers' letters, the most
 * travelled paths, and the branching probabilities of a state diagram.
 *
 * Processes are servers (the computation studied), requestors (its
 * clients: every other traced process) and system processes (named so,
 * or never traced: kernels, the name server); events with system
 * processes are ignored.
 *
 * The strings form a forest: a root is a server's RECEIVE of a message
 * from a requestor; the children of a server's RECEIVE are the RECEIVEs,
 * by servers, of the messages that server sends after it and before its
 * next RECEIVE (from a server or a requestor). Every string is a path
 * from a root to a leaf, so a fan-out makes separate strings sharing a
 * prefix (this project's reading of thesis §5.2.4). A substring occurrence is a
 * downward path in the forest, and is counted once even when several
 * strings share it (a shared prefix happened once).
 *
 * The "receives from X, then sends to Y" counts (the thesis's Fig. 5.18)
 * and the branching probabilities are counted over every RECEIVE of a
 * server in the trace, not only those in the forest (this project's choice: a chain
 * whose request came before the trace began, or that a server began on
 * its own, still shows how the server branches). Within the forest they
 * equal the counts of the substrings XAY.
 */
#ifndef ANALYSIS_MODELS_CAUSALITY_H
#define ANALYSIS_MODELS_CAUSALITY_H

#include <stddef.h>
#include <stdint.h>

#include "models/history.h"
#include "models/tally.h"

#define CAUSALITY_SERVERS_MAX 52        /* letters A..Z, then a..z */
#define CAUSALITY_DEFAULT_LENGTH 32     /* letters at most in a string, by default */

enum causality_role { ROLE_REQUESTOR, ROLE_SERVER, ROLE_SYSTEM };

struct causality {
    uint32_t nservers;
    uint32_t server[CAUSALITY_SERVERS_MAX];  /* server i (letter causality_letter(i)): a process of h */
    uint32_t max_length;
    uint64_t requests;         /* roots: RECEIVEs by servers from requestors */
    uint64_t requests_to[CAUSALITY_SERVERS_MAX];  /* those of each server */
    uint64_t nstrings;         /* leaves: strings, counting repeats */
    uint64_t cut;              /* chains that went on past max_length letters, cut there */
    struct tally strings;      /* root-to-leaf strings */
    struct tally paths;        /* every substring of length >= 2 */
    /* matrix[(a * (nservers + 1) + x) * nservers + y]: how often server a,
     * having received from server x (x = nservers: from a requestor),
     * then sent to server y before its next RECEIVE. */
    uint64_t *matrix;
};

/* Who plays which part: traced[p] for each traced process p; a process
 * outside the trace is a system process if it is a kernel, is one of
 * system_pids, or was CALLed by the process it talks with (the RECEIVE of
 * the answer is an outside arc); else a requestor (models/causality.c,
 * outside_role). */
struct causality_roles {
    const uint8_t *traced;           /* enum causality_role, by process index */
    const uint64_t *system_pids;     /* processes outside the trace named as system processes,
                                        without their epoch (DPM_PID_EPOCH_MASK clear) */
    size_t nsystem_pids;
};

/* Analyze the trace of h with the roles given; strings longer than
 * max_length letters are cut there (and counted). 0, or -1 with err. */
int causality_analyze(struct causality *c, const struct history *h, const struct causality_roles *role,
                      uint32_t max_length, char *err, size_t cap);
void causality_free(struct causality *c);

/* Server i's letter. */
char causality_letter(uint32_t i);
/* count(x a y): a received from x (x == nservers: a requestor), then sent to y. */
uint64_t causality_count(const struct causality *c, uint32_t a, uint32_t x, uint32_t y);
/* P(a sends next to y | a just received from x) = count(xay) / sum over z
 * of count(xaz) (thesis §5.2.4); -1 if a never sent after receiving from x. */
double causality_probability(const struct causality *c, uint32_t a, uint32_t x, uint32_t y);

/* The distinct strings of a tally sorted for reports: by count, most first
 * (ties alphabetical), or alphabetically. The caller frees the array. */
struct tally_item *causality_by_count(const struct tally *t);
struct tally_item *causality_alphabetical(const struct tally *t);

#endif
