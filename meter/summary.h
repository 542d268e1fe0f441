/*
 * meter/summary.h — what a filter forwards instead of, or besides, the
 * records it keeps: a summary of them over an interval (DPM's feedback
 * scheduling: Miller, "DPM: A Measurement System for Distributed
 * Programs", IEEE Trans. Computers 37(2), 1988, §V.B and Fig. 4, where the
 * filters pass what they select, or summaries of it, to a process that
 * decides where work runs). Defined once here for the filter, which makes
 * summaries (filter/filter.c, FILTER_FORWARD), and for their consumers
 * (balance/balance.c) and the host tests.
 *
 * A summary says, for the records folded into it:
 *  - who sent how many messages, and bytes, to whom: a pair per sender and
 *    receiver. A message counts once: from its SEND record (status 0) when
 *    its sender is metered into the filter, else from its RECEIVE record.
 *    A MOVEDATA counts as one message between its caller and the owner of
 *    each area that is not the caller's own, with its bytes;
 *  - each process whose records came: the machine of its latest record,
 *    how many it wrote, and whether it ended (DESTROYPROCESS).
 * Pairs and processes beyond the arrays' room are counted, not kept.
 *
 * It travels as one message of meter_summary_size bytes (the arrays'
 * used entries only), at most DM_MSG_MAX.
 */
#ifndef METER_SUMMARY_H
#define METER_SUMMARY_H

#include <stdint.h>
#include "record.h"

#define METER_SUMMARY_MAGIC     0x59524d4d55534d44ull   /* "DMSUMMRY" */
#define METER_SUMMARY_PAIRS     64
#define METER_SUMMARY_PROCESSES 40

struct meter_summary_pair {
    uint64_t from, to;         /* sender and receiver (a MOVEDATA: its caller, an area's owner) */
    uint32_t messages;
    uint32_t reserved;
    uint64_t bytes;
};

struct meter_summary_process {
    uint64_t pid;
    uint32_t machine;          /* where its latest record was written */
    uint32_t records;          /* its records folded in */
    uint32_t ended;            /* 1: its DESTROYPROCESS came */
    uint32_t reserved;
};

struct meter_summary_head {
    uint64_t magic;            /* METER_SUMMARY_MAGIC */
    uint64_t sequence;         /* the summaries this filter sent before this one to its consumer */
    uint64_t begin_ns, end_ns; /* the interval, on the filter's machine clock */
    uint32_t machine;          /* the filter's */
    uint32_t records;          /* records folded in */
    uint32_t npairs, nprocesses;
    uint32_t messages_left_out;   /* messages of pairs that found no room */
    uint32_t processes_left_out;  /* processes that found no room */
};

struct meter_summary {
    struct meter_summary_head head;
    struct meter_summary_pair pairs[METER_SUMMARY_PAIRS];
    struct meter_summary_process processes[METER_SUMMARY_PROCESSES];
};

/* An empty summary, its interval beginning at `now`. */
void meter_summary_begin(struct meter_summary *s, uint64_t sequence, uint32_t machine, uint64_t now);

/* Fold record h in. `sender_metered`: for a RECEIVE record, whether its
 * sender is metered into the same filter (then its SEND counted the
 * message); not looked at for other types. */
void meter_summary_add(struct meter_summary *s, const struct meter_header *h, int sender_metered);

/* Pack s for sending: its processes moved up behind the pairs it uses.
 * Returns the message's length in bytes. s is not to be added to after. */
uint32_t meter_summary_pack(struct meter_summary *s);

/* A received summary of len bytes: 0 if it is well formed, with *pairs
 * and *processes pointing into it; -1 if not. */
int meter_summary_parse(const void *message, uint32_t len, const struct meter_summary_head **head,
                        const struct meter_summary_pair **pairs, const struct meter_summary_process **processes);

#endif
