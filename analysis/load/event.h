/*
 * analysis/load/event.h — the analyzer's view of a trace: every record of
 * one or more trace logs, read by each log's own description
 * (meter/tracelog.h, tracelog_next_values) and turned into one fixed
 * struct, whatever fields the filter's rules kept. Every analysis of `dpm`
 * works on these; none of them reads a log's bytes itself.
 *
 * Field meanings are meter/record.h's; this file only says where each of
 * them lands. A field the log does not hold is 0 here and its bit in
 * `present` is clear, so an analysis can tell "0" from "not recorded".
 */
#ifndef ANALYSIS_LOAD_EVENT_H
#define ANALYSIS_LOAD_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record.h"

/* Bits of dpm_event.present: which fields the log held. */
enum dpm_field_bit {
    EV_MACHINE    = 1u << 0,
    EV_TIME       = 1u << 1,
    EV_PROCTIME   = 1u << 2,
    EV_PC         = 1u << 3,
    EV_LOAD       = 1u << 4,
    EV_PID        = 1u << 5,
    EV_SEQUENCE   = 1u << 6,
    EV_OTHER      = 1u << 7,    /* toTask, fromTask, parent or by */
    EV_OTHER2     = 1u << 8,    /* MOVEDATA's fromTask; SEND's passTask */
    EV_MESSAGE_ID = 1u << 9,
    EV_CODE       = 1u << 10,
    EV_CHANNEL    = 1u << 11,
    EV_SIZE       = 1u << 12,
    EV_STATUS     = 1u << 13,
    EV_SLOT       = 1u << 14,
    EV_SLOT2      = 1u << 15,
    EV_KIND       = 1u << 16,   /* RECEIVECALL kind, a link's how, SEND's call, START's resumed */
    EV_FLAG       = 1u << 17,   /* RECEIVECALL empty, CREATELINK flags */
    EV_QUEUE      = 1u << 18,   /* MESSAGEQUEUED queueLength */
    EV_NAME       = 1u << 19,   /* CREATEPROCESS nameLow/nameHigh */
    EV_FROM_MACHINE = 1u << 20, /* MIGRATE fromMachine */
    EV_TO_MACHINE = 1u << 21,   /* MIGRATE toMachine */
};

/* One record. `type` is enum meter_type (MT_SEND ...). */
struct dpm_event {
    uint32_t type;
    uint32_t machine;        /* the machine that wrote it; in a trace loaded whole (dpm_trace_load),
                                where the log did not keep it, the machine the process was on then */
    uint64_t time;           /* that machine's clock, ns (= instructions under -icount) */
    uint64_t proctime;       /* the process's CPU time so far, instructions */
    uint64_t pc;
    uint64_t pid;            /* whose stream */
    uint64_t sequence;       /* the stream's record number */
    uint64_t other;          /* SEND, CREATELINK, DESTROYLINK, MOVEDATA: toTask;
                                MESSAGEQUEUED, RECEIVE: fromTask;
                                CREATEPROCESS: parent; STOPPROCESS: by */
    uint64_t other2;         /* MOVEDATA: fromTask; SEND: passTask */
    uint64_t message_id;     /* SEND, MESSAGEQUEUED, RECEIVE */
    uint64_t code;           /* the link's code; MIGRATE: took (ns out of execution) */
    uint64_t size;           /* SEND, MESSAGEQUEUED, RECEIVE, MOVEDATA: bytes; MIGRATE: bytes of memory */
    int64_t  status;         /* SEND: its immediate error; DESTROYPROCESS: exit status */
    int32_t  slot;           /* SEND: sendLink; RECEIVE: linkSlot; CREATE/DESTROYLINK: slot;
                                MOVEDATA: toLink */
    int32_t  slot2;          /* SEND: passLink; RECEIVE: replySlot; MOVEDATA: fromLink */
    uint32_t channel;
    uint32_t load;
    uint32_t kind;           /* RECEIVECALL: kind (0 RECEIVE, 1 ARECEIVE, 2 CALL);
                                CREATE/DESTROYLINK: how (enum meter_link_how);
                                SEND: call (1: CALL's send half); STARTPROCESS: resumed;
                                MIGRATE: moves (its moves so far, this one included) */
    uint32_t flag;           /* RECEIVECALL: empty; CREATELINK: flags */
    uint32_t queue_length;   /* MESSAGEQUEUED; MIGRATE: messages (queued messages moved with it) */
    uint32_t present;        /* enum dpm_field_bit */
    char     name[17];       /* CREATEPROCESS: the program's name, NUL-ended */
    uint16_t file;           /* which of the loaded logs it came from (0-based) */
    uint16_t from_machine;   /* MIGRATE: the machine it left */
    uint16_t to_machine;     /* MIGRATE: the machine it reached (the header's) */
    uint64_t record;         /* its index in that log (0-based), for messages */
};

/* Where and why reading went wrong: "FILE: record N: what". */
struct dpm_error {
    char text[512];
};
/* Set e's text, printf-style (cut at its size). */
void dpm_error_set(struct dpm_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether dpm may write the file `out`: 0, or -1 with *e saying "OUT: is
 * the input IN" (IN, another argument of this run, names the same file,
 * also through a link) or "OUT: is not a regular file" (tools/output_check.h).
 * Every command asks it before it creates or replaces a file. */
int dpm_output_check(const char *out, struct dpm_error *e);

/* ---- streaming: one log, record by record, in bounded memory ----
 * Used by dump and stats, whose memory must not grow with the log. */
struct dpm_stream;
/* Open the log `path` (a log file, or a trace disk image); NULL with *e
 * set if it is not a readable trace log. `file` is put in each event. */
struct dpm_stream *dpm_stream_open(const char *path, uint16_t file, struct dpm_error *e);
/* The next event (in the window, when one was asked for: load/window.h):
 * 1, 0 at the log's end, -1 with *e set on a damaged record (the records
 * before it were delivered; nothing after it is). */
int dpm_stream_next(struct dpm_stream *s, struct dpm_event *ev, struct dpm_error *e);
/* The caller reads only events (not dpm_stream_values): then records kept
 * whole are decoded straight into them, several times faster. */
void dpm_stream_events_only(struct dpm_stream *s);
/* Records the log itself counts lost (its blocks' `lost`), so far. */
uint64_t dpm_stream_lost(const struct dpm_stream *s);
/* The block of the log that held the record dpm_stream_next delivered
 * last (a record lies in one block). */
uint64_t dpm_stream_block(const struct dpm_stream *s);
/* Go back (or on) to the first record of `block`, which is the log's
 * record number `record`, both as a reading of the log found them: the
 * next dpm_stream_next delivers that record. For a reader that comes back
 * to a block it has read (dpm export). */
void dpm_stream_seek(struct dpm_stream *s, uint64_t block, uint64_t record);
void dpm_stream_close(struct dpm_stream *s);

/* The log as meter/ reads it (its header, description and parsed
 * layouts), and the record dpm_stream_next delivered last, field by field
 * in the log's own layout: for the tools that show or copy records
 * exactly as the log holds them (dump, merge). */
struct tracelog_reader;
struct trace_values;
const struct tracelog_reader *dpm_stream_reader(const struct dpm_stream *s);
const struct trace_values *dpm_stream_values(const struct dpm_stream *s);

/* ---- process ids and streams ---- */

/* A pid's parts (kernel/demos.h): the machine that created it, its slot
 * and generation. */
#define DPM_PID_MACHINE(pid) ((uint32_t)((pid) >> 56))
#define DPM_PID_SLOT(pid)    ((uint32_t)(((pid) >> 20) & 0xfff))
#define DPM_PID_GEN(pid)     ((uint32_t)((pid) & 0xfffff))
#define DPM_PID_EPOCH_MASK   (0xffffffull << 32)   /* the creating machine's boot epoch */
/* A pid as "M.S.G", as the guest shows it (user/lib/dmlib.c); out holds 24. */
const char *dpm_pid_string(uint64_t pid, char out[24]);

/* Following one process's record numbers to count the records missing
 * from them. A stream is numbered from 0; a process metered again after
 * its stream's final batch starts a new stream from 0 (a new run, not a
 * gap), and DESTROYPROCESS ends a stream. Start from all zeros. */
struct dpm_sequence {
    uint64_t next;           /* the number expected next */
    uint8_t  started;        /* a record of the process was seen */
    uint8_t  ended;          /* its last record was DESTROYPROCESS */
};
/* The records missing before `ev` in its process's numbering (0 when the
 * log did not keep the sequence field, and at a process's first record in
 * a window: load/window.h). */
uint64_t dpm_sequence_gap(struct dpm_sequence *q, const struct dpm_event *ev);

/* ---- a whole trace in memory, for the analyses that need the graph ---- */

/* A process seen in the trace. */
struct dpm_process {
    uint64_t pid;
    uint32_t machine;        /* where its first record was written */
    uint32_t last_machine;   /* where its last record was written (another after a move) */
    char     name[17];       /* from its CREATEPROCESS, or "" */
    uint32_t first, count;   /* its events: trace.by_process[first .. first+count) */
    uint32_t first_move, nmoves;   /* its moves: trace.moves[first_move .. first_move+nmoves) */
    uint64_t gaps;           /* records missing from its sequence numbers */
};

/* A move of a traced process to another machine: its MIGRATE record
 * (meter/record.h), written where it arrived when it ran again. */
struct dpm_move {
    uint64_t pid;
    uint32_t event;          /* its MIGRATE record, in trace.events */
    uint32_t from, to;       /* the machine it left and the one it reached */
    uint64_t time;           /* the record's TIME: when it ran again, on `to`'s clock (0 if not kept) */
    uint64_t took;           /* ns out of execution, each machine's part on its own clock (0 if not kept) */
    uint64_t bytes;          /* of memory moved */
    uint32_t messages;       /* queued messages moved with it */
    uint32_t moves;          /* its moves so far, this one included */
};

struct dpm_trace {
    struct dpm_event *events;      /* every event of every log, in log order per log */
    size_t nevents;
    struct dpm_process *processes; /* sorted by pid */
    size_t nprocesses;
    uint32_t *by_process;          /* indices into events: each process's events in
                                      sequence order, processes in the order above */
    struct dpm_move *moves;        /* every process's moves, processes in pid order, each's in
                                      the order of its stream */
    size_t nmoves;
    uint64_t lost;                 /* the logs' own loss counts, summed */
    uint64_t gaps;                 /* sequence gaps over all streams */
    size_t events_mapped;          /* bytes of `events` mapped by dpm_trace_load (0: malloc'd) */
};

/* The move that MIGRATE record ev (a record of a process whose machine
 * before it was `before`) stands for. */
struct dpm_move dpm_move_of(const struct dpm_event *ev, uint32_t before);

/* Load logs paths[0..n) into *t (every event; processes and their
 * sequence-ordered event lists; each event's machine, where the log did
 * not keep it, from the process's first record and its moves; the moves;
 * loss and gaps). 0, or -1 with *e set. */
int dpm_trace_load(struct dpm_trace *t, const char *const *paths, int n, struct dpm_error *e);
/* The process `pid`, or NULL. */
const struct dpm_process *dpm_trace_process(const struct dpm_trace *t, uint64_t pid);
void dpm_trace_free(struct dpm_trace *t);

/* The machines a process ran on, in order, as text into out[0..cap): its
 * first machine, then where each of its moves took it, the moves of
 * process pid among moves[0..n): "1", "1>2>0" after two (the first, the
 * last and how many moves, when they are many). */
const char *dpm_machines_text(uint32_t first, const struct dpm_move *moves, size_t n, uint64_t pid, char *out,
                              size_t cap);
/* The same for process p of trace t. */
const char *dpm_process_machines(const struct dpm_trace *t, const struct dpm_process *p, char *out, size_t cap);

/* A process's name for reports: its program name and pid ("ri 0.1.5"),
 * or its pid alone; into out[0..cap). */
const char *dpm_process_label(const struct dpm_trace *t, uint64_t pid, char *out, size_t cap);
/* The same from a name known otherwise ("" if none): "ri 0.1.5", or
 * "kernel 0.0.1" for slot 0 (every machine's kernel), or "0.4.2". */
const char *dpm_label(const char *name, uint64_t pid, char *out, size_t cap);

#endif
