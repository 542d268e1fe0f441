/*
 * analysis/models/simulate.h — a deterministic model of DEMOS/MP processes
 * exchanging messages, writing the trace log their meter would have
 * written: SEND, MESSAGEQUEUED, RECEIVECALL, RECEIVE, CREATEPROCESS,
 * DESTROYPROCESS and MIGRATE records in this build's layouts
 * (meter/record.h), through
 * meter/'s own log writer. `dpm generate` drives it from a scenario script
 * or with random traffic, to make logs whose statistics are known.
 *
 * The model: each machine has a clock (ns) and each process a CPU time
 * (PROCTIME). Only `compute` (a process runs) and `idle` (a machine waits)
 * take time; every other step is instantaneous. A message to a process
 * that waits in a receive is handed to it at once (RECEIVE); otherwise it
 * is queued (MESSAGEQUEUED) until the process receives. A message to
 * another machine arrives `delay` ns after it was sent, by the sender's
 * clock: the receiver's machine clock is moved on to then if it is
 * behind, so clocks of different machines stay plausible but are never
 * the same clock. A process that moves is out of execution for the time
 * the move takes, by the machine it leaves: the machine it reaches moves
 * on to then if it is behind, and its MIGRATE record (the process's next)
 * is written there, with its queued messages moved with it. A machine's
 * `skew` is added to the TIME its records
 * carry, not to its clock: the records then read as from a clock that is
 * that far ahead, which `dpm clocks` should find again.
 */
#ifndef ANALYSIS_MODELS_SIMULATE_H
#define ANALYSIS_MODELS_SIMULATE_H

#include <stdint.h>

#include "tracelog.h"

#define SIM_MACHINES 256

struct sim_message {
    uint64_t id, time;
    uint32_t from;               /* the sender's index */
    uint32_t channel;
    uint64_t size;
    int call;                    /* a CALL's request: the receiver gets a reply link */
};

enum sim_wait { SIM_RUNNING, SIM_RECEIVING, SIM_CALLING };

struct sim_process {
    char name[24];               /* the scenario's name for it */
    char program[17];            /* CREATEPROCESS's name */
    uint64_t pid, parent;
    uint32_t machine;
    int traced, exited;
    enum sim_wait wait;
    int caller;                  /* whose CALL it received last and has not answered, or -1 */
    int callee;                  /* whom it waits on in a CALL (SIM_CALLING) */
    uint64_t proctime, sequence;
    uint32_t moves;              /* its moves so far */
    struct sim_message *queue;   /* a ring */
    uint32_t queue_head, queue_count, queue_capacity;
};

struct simulation {
    struct sim_process *processes;
    uint32_t nprocesses;
    size_t capacity;
    uint64_t clock[SIM_MACHINES];
    uint64_t skew[SIM_MACHINES];  /* ns added to the TIME of each record of the machine */
    uint64_t message_counter[SIM_MACHINES];
    uint64_t delay;              /* ns a message takes between machines */
    uint64_t pc;                 /* the pc the next records carry */
    uint64_t records, limit;     /* written; stop writing at `limit` (0: none) */
    int fd;
    struct tracelog_writer writer;
    char error[160];             /* why the last step was refused */
};

/* Start a log called `log_id` in the file `path` (made or emptied); 0,
 * or -1 with s->error. Logs written over each other on a trace disk must
 * have different ids, as a filter's have (meter/tracelog.h). */
int sim_begin(struct simulation *s, const char *path, uint32_t log_id);
/* Write the last block and close the file; 0, or -1 with s->error. */
int sim_end(struct simulation *s);
/* Free what the simulation holds (after sim_end, or after a failure). */
void sim_free(struct simulation *s);

/* A new process (pid 0: made from its machine and its index); its
 * CREATEPROCESS record unless it is attached (metered mid-run: it starts
 * with `proctime` and no CREATEPROCESS) or untraced (it writes no records
 * at all: a kernel, a server outside the trace). Its index, or -1. */
int sim_process(struct simulation *s, const char *name, uint32_t machine, const char *program, uint64_t pid,
                uint64_t parent, int traced, int attached, uint64_t proctime);
/* The process called `name`, or -1. */
int sim_find(const struct simulation *s, const char *name);

/* The steps; each returns 0, or -1 with s->error saying why it is not possible. */
int sim_compute(struct simulation *s, int p, uint64_t instructions);
int sim_send(struct simulation *s, int p, int to, uint64_t size, uint32_t channel, int call);
int sim_reply(struct simulation *s, int p, uint64_t size);
int sim_receive(struct simulation *s, int p, int nonblocking);
int sim_exit(struct simulation *s, int p, int64_t status);
/* p moves to `machine`, out of execution `took` ns (by the clock of the
 * machine it leaves), `bytes` of memory moving with it; it may be
 * waiting in a receive or a call, and goes on waiting there. */
int sim_move(struct simulation *s, int p, uint32_t machine, uint64_t took, uint64_t bytes);
/* The next n records of p are lost (its numbering jumps by n). */
int sim_skip(struct simulation *s, int p, uint64_t n);
/* The log counts n more records lost. */
void sim_lose(struct simulation *s, uint64_t n);
/* Machine m's clock moves on by n ns. */
void sim_idle(struct simulation *s, uint32_t machine, uint64_t n);

#endif
