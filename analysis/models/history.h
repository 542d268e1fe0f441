/*
 * analysis/models/history.h — the program history graph of a trace (thesis
 * §5.2.3, DPM paper §IV-C), on which parallelism, the critical path and the
 * contention simulations work.
 *
 * A node per SEND (that sent something), per RECEIVE and per MIGRATE of
 * every traced process, plus a start node (at the process's first record)
 * and an end node (at its last record) per process. A MIGRATE node splits
 * the process's work where it moved: the arc into it ran on the machine it
 * left, the arc out of it on the one it reached (each node's record says
 * where it was written), and the time the move took is on no arc. The nodes of one process are
 * consecutive, in its record order, so the arc within a process from node
 * v-1 to node v is implicit. The only other arcs are "cross" arcs, at most
 * one into a node and one out of a node:
 *   - a message arc SEND -> RECEIVE of the same message id;
 *   - an outside arc (thesis Fig. 5.3): a SEND to a process that is not in
 *     the trace -> the same process's next RECEIVE from that process,
 *     weighted by the TIME between them (one machine's clock).
 * The graph is a DAG when the trace is consistent; history_build refuses
 * one that is not. Arrays, not node structs: a trace may have millions of
 * nodes, and every pass over them is a loop over arrays.
 */
#ifndef ANALYSIS_MODELS_HISTORY_H
#define ANALYSIS_MODELS_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "load/event.h"

#define HISTORY_NONE UINT32_MAX

enum history_kind { HN_START, HN_SEND, HN_RECEIVE, HN_END, HN_MIGRATE };
enum history_cross { HX_NONE, HX_MESSAGE, HX_OUTSIDE };

struct history {
    const struct dpm_trace *trace;
    uint32_t nprocesses;       /* = trace->nprocesses; process p is trace->processes[p] */
    uint32_t nnodes;
    uint32_t *first_node;      /* [nprocesses + 1]: process p's nodes are first_node[p] ..
                                  first_node[p+1] - 1, its start node first and end node last */
    uint32_t *process;         /* [nnodes]: whose node */
    uint32_t *event;           /* [nnodes]: its record in trace->events (a start or end node:
                                  the process's first or last record) */
    uint8_t  *kind;            /* [nnodes]: enum history_kind */
    uint32_t *machine;         /* [nnodes]: the machine that wrote its record (load/event.h) */
    uint64_t *cpu;             /* [nnodes]: PROCTIME from the process's previous node (0 at a start) */
    uint32_t *cross_from;      /* [nnodes]: the node whose cross arc ends here, or HISTORY_NONE */
    uint32_t *cross_to;        /* [nnodes]: where this node's cross arc goes, or HISTORY_NONE */
    uint8_t  *cross_kind;      /* [nnodes]: enum history_cross of the arc ending here */
    uint64_t *message_size;    /* [nnodes]: at a message arc's RECEIVE, the message's bytes (the
                                  SEND's size, or the RECEIVE's if the SEND's was not kept) */
    uint32_t *order;           /* [nnodes]: the nodes in a topological order */
    /* What the trace did not allow, for the reports to say. */
    uint64_t message_arcs, outside_arcs;
    uint64_t unmatched_sends;      /* sent to a traced process, never received in the trace */
    uint64_t unmatched_receives;   /* from a traced process whose SEND is not in the trace */
    uint64_t no_proctime;          /* nodes whose record holds no PROCTIME (weighed 0) */
    uint64_t cpu_backwards;        /* PROCTIME that went down between two nodes (weighed 0) */
};

/* Which program history graph (thesis Fig. 5.3): with each request to a
 * process outside the trace an arc weighted by the time its answer took
 * (B, the thesis's own), or the plain graph without them (A: that time is
 * lost, the process going on as if answered at once). */
enum history_graph { GRAPH_ELAPSED_ARCS, GRAPH_PLAIN };

/* Arc weights for one analysis: chain[v] weighs the arc from node v-1 of
 * v's process to v (0 at a start node); cross[v] weighs the cross arc
 * into v (unused where there is none). */
struct history_weights {
    uint64_t *chain;
    uint64_t *cross;
};

/* The longest paths (thesis §5.2.3: t_max is the critical path's length).
 * dist[v] is the longest path from any start node to v; via_cross[v] says
 * whether it arrives over v's cross arc (1) or along its process (0). */
struct history_paths {
    uint64_t *dist;
    uint8_t  *via_cross;
    uint64_t t_max;
    uint32_t end;              /* the node where the longest path ends */
};

/* Build the graph of trace t into *h. 0, or -1 with err[0..cap) saying
 * why (no memory; a cycle, which only an inconsistent trace can make). */
int history_build(struct history *h, const struct dpm_trace *t, char *err, size_t cap);
void history_free(struct history *h);

/* The index of the traced process `pid` in t->processes, or HISTORY_NONE. */
uint32_t history_process_index(const struct dpm_trace *t, uint64_t pid);

/* Weights, allocated for h's nodes; 0 or -1 (no memory). */
int history_weights_alloc(struct history_weights *w, const struct history *h);
void history_weights_free(struct history_weights *w);
/* The measured weights: chain arcs their CPU, outside arcs their TIME
 * difference (0 on the plain graph), message arcs 0 (thesis §5.2.3, step 1). */
void history_weights_measured(struct history_weights *w, const struct history *h, enum history_graph graph);
/* The TIME an outside arc into node v took (its SEND and RECEIVE are
 * records of the same process, so of the same machine's clock). */
uint64_t history_outside_time(const struct history *h, uint32_t v);

/* Longest paths under weights w, in topological order (no recursion).
 * 0, or -1 (no memory). */
int history_longest(struct history_paths *r, const struct history *h, const struct history_weights *w);
void history_paths_free(struct history_paths *r);

/* T: the CPU time of every process, summed (thesis §5.2.3). */
uint64_t history_total_cpu(const struct history *h);

#endif
