/*
 * analysis/models/stats.h — DPM's communication statistics (thesis §5.2.2),
 * computed in one
 * pass over the events of one or more logs in memory that does not grow
 * with the logs: a row per process, a cell per pair of processes that
 * talked, and an entry per message in flight (queued and not yet received).
 *
 * Only clocks of one machine are ever subtracted: a process's lifetime,
 * its queue and its blocking times are on its own machine's clock, and a
 * message's queue wait is between two records of its receiver. A process
 * that moved (its MIGRATE records) ran on several machines, one after
 * another: its clock is its first machine's, and at each move it goes on
 * from its last record before the move by the time the move took
 * (MIGRATE's took), then on the new machine's clock; so its lifetime is
 * its spans on each machine and its moves' times, and a wait or a queued
 * message that moved with it spans the move. (The time from its last
 * record to the request that moved it is unknown and counted as none.)
 *
 * A message is local when its receiver was on the machine it was sent from
 * (the SEND's). Where a receiver was then: its home (its pid's machine)
 * while no traced process has been anywhere else. When one has, the logs
 * are read twice (stats_read_logs): the first reading learns where each
 * traced process was when messages reached it, by the message ids, which
 * name the machine that made them and rise with its clock; the second
 * puts each SEND's receiver where the messages of that machine found it
 * around the SEND's id. A receiver outside the trace is at its home.
 */
#ifndef ANALYSIS_MODELS_STATS_H
#define ANALYSIS_MODELS_STATS_H

#include <stdint.h>

#include "load/event.h"
#include "load/table.h"

/* A power-of-two histogram: bucket 0 counts the value 0, bucket k > 0
 * the values in [2^(k-1), 2^k). */
#define HISTOGRAM_BUCKETS 65
struct histogram {
    uint64_t count, sum, min, max;
    uint64_t bucket[HISTOGRAM_BUCKETS];
};
void histogram_add(struct histogram *h, uint64_t value);
double histogram_mean(const struct histogram *h);
/* The smallest and the largest value bucket k counts. */
uint64_t histogram_low(int k);
uint64_t histogram_high(int k);

/* A process seen in the trace (it wrote records), or only as a
 * destination of messages sent in it (traced = 0). */
struct stats_process {
    uint64_t pid;
    char name[17];               /* from its CREATEPROCESS, or "" */
    uint8_t traced;
    uint8_t timed, cpu_seen;     /* a record with time / procTime was seen */
    uint8_t created_first;       /* its first record was its CREATEPROCESS */
    uint8_t calling;             /* in a RECEIVECALL not yet followed by its RECEIVE */
    uint64_t records, gaps;
    uint64_t first_time, last_time;          /* its clock (above) */
    int64_t  shift;                          /* its clock is its records' TIME + shift */
    uint32_t machine, last_machine;          /* where its first and its latest record were written
                                                (its pid's machine without records) */
    uint32_t row;                            /* last_machine's row in machines[] (until finished) */
    uint32_t moves;                          /* its MIGRATE records */
    uint8_t  placed;                         /* it has places (struct stats_place) */
    uint64_t first_proctime, last_proctime;
    uint64_t sent, bytes_sent, received, bytes_received;
    uint64_t receives;                       /* its RECEIVE records */
    uint64_t order;                          /* its records so far: orders queueing and calls */
    uint64_t call_time, call_order;          /* of the pending RECEIVECALL */
    int64_t  queue;                          /* its queue now */
    uint64_t queue_max, queue_changes;
    uint64_t queue_time;                     /* when the queue last changed */
    double   queue_area;                     /* queue length x time, for the time-weighted mean */
    double   queue_sum;                      /* queue length after each change, for the event mean */
    struct dpm_sequence sequence;
};

/* Messages from one process to another. */
struct stats_pair {
    uint64_t from, to;
    uint64_t messages, bytes;
    uint64_t local_messages;                 /* of them, sent where the receiver was */
};

/* A machine, by the records written on it. */
struct stats_machine {
    uint32_t machine;
    uint64_t records;
    uint64_t processes;                      /* that wrote records there */
    uint64_t cpu;                            /* PROCTIME used there: between two records of a process
                                                written there, and before a move from there */
    uint64_t local, remote;                  /* messages sent from there (SEND records of status 0) */
    uint64_t moves_in, moves_out;
};

/* Where a traced process was when messages made on one machine reached
 * it: from message id `from` on (by the machine's clock), on `machine`;
 * before its first place, on the machine its records began on. */
struct stats_place {
    uint64_t from;
    uint32_t machine;
    uint32_t next;                           /* the next place of the same (process, machine), + 1; 0 at the end */
};

/* A message queued and not yet received. */
struct stats_queued {
    uint64_t time;               /* of its MESSAGEQUEUED */
    uint64_t order;              /* its receiver's record count then */
    uint32_t next_free;
};

struct stats {
    uint64_t records, lost, gaps;
    uint64_t messages, bytes, failed_sends;
    uint64_t local_messages, local_bytes, remote_messages, remote_bytes;
    uint64_t unmatched_receives;             /* RECEIVEs of messages never seen queued */
    uint64_t waited_receives, ready_receives;
    struct histogram sizes, waits, blocking;
    struct stats_process *processes;
    size_t nprocesses, processes_capacity;
    struct stats_pair *pairs;
    size_t npairs, pairs_capacity;
    struct table process_index, pair_index, queued_index;
    struct stats_queued *queued;             /* a pool, reused through its free list */
    size_t nqueued, queued_capacity;
    uint32_t queued_free;                    /* first free entry + 1, or 0 */
    size_t last_process;                     /* the process of the record before: streams come in batches */
    struct dpm_move *moves;                  /* every move (a MIGRATE record), in the order read */
    size_t nmoves, moves_capacity;
    struct stats_machine *machines;          /* by machine number, once finished */
    size_t nmachines, machines_capacity;
    struct table machine_index;              /* machine -> its row */
    struct table seen_on;                    /* (machine, pid): the process wrote records there */
    uint8_t displaced;                       /* a traced process wrote a record away from its home */
    uint8_t placed;                          /* the places below are known (a second reading) */
    struct stats_place *places;              /* kept from a first reading to the second */
    size_t nplaces, places_capacity;
    struct table place_index;                /* (receiver, machine of the ids) -> its first place */
    int finished;
};

/* Start from nothing. */
void stats_init(struct stats *st);
/* Count one event. */
void stats_add(struct stats *st, const struct dpm_event *ev);
/* Stream every record of the logs paths[0..n) into st, then finish it;
 * read twice when stats_read_again says so. 0, or -1 with *e set ("FILE:
 * record N: what"). */
int stats_read_logs(struct stats *st, char *const *paths, int n, struct dpm_error *e);
/* After every record has been added: whether a traced process was away
 * from its home, so that where the receivers of messages were is known
 * only now. Then st starts over, knowing it: add every record again. */
int stats_read_again(struct stats *st);
/* Close the time-weighted queue means at each process's last record and
 * sort processes and pairs by pid. After this, st is only read. */
void stats_finish(struct stats *st);
void stats_free(struct stats *st);

/* What a process's row says, computed from it. */
uint64_t stats_cpu(const struct stats_process *p);          /* last - first PROCTIME */
uint64_t stats_lifetime(const struct stats_process *p);     /* last - first TIME */
double stats_rate(const struct stats_process *p);           /* messages sent and received per second */
double stats_queue_mean(const struct stats_process *p);     /* time-weighted */
uint64_t stats_total_cpu(const struct stats *st);           /* over the traced processes */
/* The processes' indices into order[nprocesses], grouped by the machine
 * their records began on (their pid's without records), in pid order
 * within a machine. For the pictures that group processes by machine. */
void stats_by_machine(const struct stats *st, size_t *order);
/* Where a process ran, as text into out[0..cap): its machine ("1"), or
 * the machines it moved to in order ("1>0>1"; the first and the last and
 * how many moves, when they are many). Once finished. */
const char *stats_machines(const struct stats *st, const struct stats_process *p, char *out, size_t cap);
/* A process's label for reports (dpm_label) into out[0..cap). */
const char *stats_label(const struct stats *st, uint64_t pid, char *out, size_t cap);

#endif
