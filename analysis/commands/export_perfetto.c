/*
 * analysis/commands/export_perfetto.c — `dpm export --perfetto`
 * (commands/export_perfetto.h): a process per machine, a thread per traced
 * process there (a process that moved has one on each machine it was on,
 * its records on the machine that wrote them), on it a 1 ns slice per SEND
 * and RECEIVE, a slice "waiting" per
 * receive that waited, an instant per other record, and an arrow per
 * message paired on one time axis (models/timeline.h); every trace event
 * in the order of time, but a flow's finish never before its start.
 *
 * The logs are read twice, so that memory holds 16 bytes a record (struct
 * record) and not the records themselves:
 *
 *   1. Reading: each record's time, process, machine and kind; where each
 *      block of each log starts; the messages paired and the clocks'
 *      shifts chosen (models/timeline.c); each process's records in the
 *      order of its own stream (as load/trace.c orders them).
 *   2. Laying out each thread: where its slices and instants start on the
 *      shared axis, and its waits.
 *   3. Runs: each thread's slices and instants, its waits, the flows'
 *      starts and the flows' finishes, each a list of indices sorted into
 *      the order of the file (almost always in it already).
 *   4. Writing: the runs merged (a heap of their heads), each record's
 *      fields read again from its log when it is written. A block is read
 *      once, when the first of its records is written, and held until the
 *      last one is: a log written in about the order of time (or in
 *      batches of each process's records in order) holds a few blocks at
 *      a time.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/export_perfetto.h"
#include "load/event.h"
#include "load/table.h"
#include "models/timeline.h"
#include "tracelog.h"

/* What a record is to the layout: struct record's `what`. */
enum {
    REC_PID = 1 << 0,           /* it has a pid: it is on its process's thread */
    REC_TIME = 1 << 1,          /* it has a time: a slice or an instant there */
    REC_SHIFTED = 1 << 2,       /* its machine is one of TIMELINE_MACHINES: its clock is shifted */
    REC_SLICE = 1 << 3,         /* a SEND or a RECEIVE: a 1 ns slice */
    REC_RECEIVE = 1 << 4,
    REC_RECEIVECALL = 1 << 5,
    REC_CALL_WAITS = 1 << 6,    /* a RECEIVECALL not marked empty: its process waits */
};

/* A record, as the layout needs it. */
struct record {
    uint64_t at;                /* its machine's clock; once laid out, where its slice or instant
                                   starts on the shared axis (models/timeline.h) */
    uint32_t process;           /* an index into processes[] (REC_PID) */
    uint8_t machine;            /* the machine that wrote it (REC_SHIFTED) */
    uint8_t what;               /* REC_* */
};

/* A traced process: a thread of the JSON. */
struct process {
    uint64_t pid;
    uint32_t machine;           /* where its first record (in the logs) was written, else its pid's */
    uint8_t on[TIMELINE_MACHINES / 8];   /* the machines it wrote records on, a bit each */
    char name[17];
    uint32_t seen_as;           /* its index before the processes were sorted by pid */
    uint32_t first, count;      /* its records: by_process[first .. first+count) */
    uint32_t timed;             /* laid out: the first `timed` of them, the ones with a time */
    uint32_t wait_first, wait_count;   /* its waits: wait_order[wait_first .. +wait_count) */
    /* Where its stream puts the record read last (load/trace.c's order_process): */
    uint64_t run_time, run, sequence;
    uint8_t ended;              /* that record was DESTROYPROCESS */
    uint8_t unordered;          /* the logs do not hold its records in the order of its stream */
};

/* A block of a log that holds records. */
struct block {
    uint64_t first;             /* its first record's index among all the logs' records */
    uint64_t number;            /* its index in its log */
    uint64_t record;            /* its first record's number in its log */
    uint32_t log;
    uint32_t left;              /* its records on a thread not yet written */
    struct dpm_event *events;   /* its records, read again, while some are still to be written */
};

/* A receive that waited: the slice "waiting" from `from` to its RECEIVE's slice. */
struct wait {
    uint64_t from;
    uint32_t receive;
};

/* A trace event, in the order of `kind` at one time (the file's tie-break). */
enum item_kind { ITEM_WAITING, ITEM_SLICE, ITEM_FLOW_START, ITEM_FLOW_FINISH, ITEM_INSTANT };

/* What a run lists. */
enum run_type { RUN_RECORDS, RUN_WAITS, RUN_FLOW_STARTS, RUN_FLOW_FINISHES };

/* Trace events in the order they are written, to be merged with the other
 * runs: a thread's slices and instants (records), its waits, or the
 * flows' starts or finishes (messages). */
struct run {
    const uint32_t *ref;        /* indices of records, waits or messages */
    uint32_t n, next;
    uint32_t track;             /* the thread's index; UINT32_MAX for the flows */
    uint8_t type;               /* enum run_type */
    uint8_t kind;               /* the next one's enum item_kind */
    uint64_t order;             /* the next one's place in the file: its time, but a flow's finish
                                   never before its start */
};

/* The output: trace events are put together here, their numbers written
 * digit by digit, and written out 64 KiB at a time. */
struct out {
    FILE *file;
    size_t n;
    char buf[1 << 16];
};

struct perfetto {
    char *const *logs;
    int nlogs;
    struct record *records;
    size_t nrecords, records_capacity;
    struct process *processes;  /* by pid, once the logs are read */
    size_t nprocesses, processes_capacity;
    struct table process_index; /* pid -> processes[], while the logs are read */
    uint32_t last_process;      /* the last record's, processes[] not empty: records come in batches */
    uint32_t *by_process;       /* record indices: each process's records in the order of its stream */
    struct block *blocks;       /* every log's, in the order of their records */
    size_t nblocks, blocks_capacity, last_block;
    struct wait *waits;
    size_t nwaits, waits_capacity;
    uint32_t *wait_order, *flow_starts, *flow_finishes;
    struct timeline timeline;
    uint32_t machine_order[TIMELINE_MACHINES];   /* the machines in the order of their first records */
    uint32_t nmachines;
    struct dpm_stream **streams;   /* each log's, to read blocks again */
    struct out out;
};

static void read_logs(struct perfetto *p);
static void index_processes(struct perfetto *p);
static void lay_out_process(struct perfetto *p, struct process *process);
static void sort_runs(struct perfetto *p);
static void put_header(struct perfetto *p);
static void put_names(struct perfetto *p);
static void put_events(struct perfetto *p);
static void free_perfetto(struct perfetto *p);

void export_perfetto(const char *path, char *const *logs, int n)
{
    static struct perfetto p;
    p.logs = logs;
    p.nlogs = n;
    read_logs(&p);
    index_processes(&p);
    for (size_t i = 0; i < p.nprocesses; i++)
        lay_out_process(&p, &p.processes[i]);
    sort_runs(&p);
    if (!(p.out.file = fopen(path, "w")))
        dpm_fail("%s: %s", path, strerror(errno));
    put_header(&p);
    put_names(&p);
    put_events(&p);
    fputs("\n]}\n", p.out.file);
    if (ferror(p.out.file) | fclose(p.out.file))
        dpm_fail("%s: %s", path, strerror(errno));
    if (p.timeline.backward)
        fprintf(stderr, "dpm export: %s: %" PRIu32 " of the %" PRIu32 " messages between machines arrive before "
                "they were sent on the shifted clocks (the machines' clocks run at different rates); viewers "
                "that order a trace by time, as Perfetto does, draw no arrow for them\n", path,
                p.timeline.backward, p.timeline.between_machines);
    free_perfetto(&p);
}

static void out_of_memory(void)
{
    dpm_fail("out of memory");
}

/* ---- 1. reading ---- */

static void add_record(struct perfetto *p, const struct dpm_event *ev);
static uint32_t process_of(struct perfetto *p, const struct dpm_event *ev);
static void follow_stream(struct process *process, const struct dpm_event *ev, uint64_t *key);
static int key_before(const uint64_t *a, const uint64_t *b);

/* Log i, read for its events alone; or the export fails, saying why. */
static struct dpm_stream *open_log(struct perfetto *p, int i)
{
    struct dpm_error e;
    struct dpm_stream *s = dpm_stream_open(p->logs[i], (uint16_t)i, &e);
    if (!s)
        dpm_fail("%s", e.text);
    dpm_stream_events_only(s);
    return s;
}

/* Every record of every log, in order: struct record, the blocks, the
 * processes, the messages and the shifts. */
static void read_logs(struct perfetto *p)
{
    timeline_init(&p->timeline);
    for (int i = 0; i < p->nlogs; i++) {
        struct dpm_error e;
        struct dpm_stream *s = open_log(p, i);
        uint64_t log_first = p->nrecords;
        struct dpm_event ev;
        int status;
        while ((status = dpm_stream_next(s, &ev, &e)) == 1) {
            uint64_t block = dpm_stream_block(s);
            struct block *last = p->nblocks ? &p->blocks[p->nblocks - 1] : 0;
            if (!last || last->log != (uint32_t)i || last->number != block) {
                p->blocks = array_grow(p->blocks, &p->blocks_capacity, p->nblocks, sizeof *p->blocks);
                p->blocks[p->nblocks++] = (struct block){ p->nrecords, block, p->nrecords - log_first, (uint32_t)i,
                                                          0, 0 };
            }
            add_record(p, &ev);
        }
        if (status < 0)
            dpm_fail("%s", e.text);
        dpm_stream_close(s);
    }
    table_free(&p->process_index);
    timeline_finish(&p->timeline);
}

/* One record: its struct record, and what the timeline, its block and
 * its process learn from it. */
static void add_record(struct perfetto *p, const struct dpm_event *ev)
{
    int shifted = ev->machine < TIMELINE_MACHINES;
    if (shifted && !p->timeline.present[ev->machine])
        p->machine_order[p->nmachines++] = ev->machine;
    timeline_add(&p->timeline, ev, (uint32_t)p->nrecords);
    struct record r = { ev->time, 0, shifted ? (uint8_t)ev->machine : 0, 0 };
    r.what = (uint8_t)((shifted ? REC_SHIFTED : 0) | (ev->present & EV_TIME ? REC_TIME : 0) |
                       (ev->type == MT_SEND || ev->type == MT_RECEIVE ? REC_SLICE : 0) |
                       (ev->type == MT_RECEIVE ? REC_RECEIVE : 0) |
                       (ev->type == MT_RECEIVECALL ? REC_RECEIVECALL | (ev->flag ? 0 : REC_CALL_WAITS) : 0));
    if (ev->present & EV_PID) {
        r.what |= REC_PID;
        r.process = process_of(p, ev);
        if (ev->present & EV_TIME)
            p->blocks[p->nblocks - 1].left++;
    }
    p->records = array_grow(p->records, &p->records_capacity, p->nrecords, sizeof *p->records);
    p->records[p->nrecords++] = r;
}

/* The index of ev's process in processes[], a new one at its first
 * record (its machine: where that record was written, else its pid's);
 * its name from its CREATEPROCESS; where its stream puts ev. */
static uint32_t process_of(struct perfetto *p, const struct dpm_event *ev)
{
    uint32_t index = p->last_process;
    if (!p->nprocesses || p->processes[index].pid != ev->pid) {
        uint32_t *found = table_find(&p->process_index, ev->pid, 0);
        if (found) {
            index = *found;
        } else {
            index = (uint32_t)p->nprocesses;
            p->processes = array_grow(p->processes, &p->processes_capacity, p->nprocesses, sizeof *p->processes);
            p->processes[p->nprocesses++] = (struct process){
                .pid = ev->pid, .seen_as = index,
                .machine = ev->present & EV_MACHINE ? ev->machine : DPM_PID_MACHINE(ev->pid) };
            table_insert(&p->process_index, ev->pid, 0, index);
        }
        p->last_process = index;
    }
    struct process *process = &p->processes[index];
    uint32_t m = ev->present & EV_MACHINE && ev->machine < TIMELINE_MACHINES ? ev->machine : process->machine;
    if (m < TIMELINE_MACHINES)
        process->on[m / 8] |= (uint8_t)(1u << (m % 8));
    if (ev->type == MT_CREATEPROCESS && (ev->present & EV_NAME))
        memcpy(process->name, ev->name, sizeof process->name);
    uint64_t before[3] = { process->run_time, process->run, process->sequence }, key[3];
    follow_stream(process, ev, key);
    if (process->count > 1 && key_before(key, before))
        process->unordered = 1;
    return index;
}

/* Where ev, the process's next record in the logs, goes in its stream:
 * key = { the time its run began, the run, its record number (the last
 * one seen when the log did not keep it) }, as load/trace.c orders a
 * process's records. A run begins at the first record, after a
 * DESTROYPROCESS, and at a record numbered 0. */
static void follow_stream(struct process *process, const struct dpm_event *ev, uint64_t *key)
{
    int numbered = (ev->present & EV_SEQUENCE) != 0;
    if (process->count == 0 || process->ended || (numbered && ev->sequence == 0)) {
        process->run += process->count != 0;
        process->run_time = ev->time;
    }
    if (numbered)
        process->sequence = ev->sequence;
    process->ended = ev->type == MT_DESTROYPROCESS;
    process->count++;
    key[0] = process->run_time;
    key[1] = process->run;
    key[2] = process->sequence;
}

/* Whether stream key a (follow_stream's) goes before key b. */
static int key_before(const uint64_t *a, const uint64_t *b)
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

static int by_pid(const void *a, const void *b)
{
    uint64_t x = ((const struct process *)a)->pid, y = ((const struct process *)b)->pid;
    return x < y ? -1 : x > y;
}

static void order_streams(struct perfetto *p);

/* The processes sorted by pid, and each one's records in by_process: in
 * the order of the logs, which is its stream's unless order_streams has
 * to sort them. */
static void index_processes(struct perfetto *p)
{
    if (p->nprocesses)
        qsort(p->processes, p->nprocesses, sizeof *p->processes, by_pid);
    uint32_t *rank = malloc(p->nprocesses * sizeof *rank + 1);
    p->by_process = malloc(p->nrecords * sizeof *p->by_process + 1);
    if (!rank || !p->by_process)
        out_of_memory();
    uint32_t next = 0;
    int unordered = 0;
    for (uint32_t i = 0; i < p->nprocesses; i++) {
        struct process *process = &p->processes[i];
        rank[process->seen_as] = i;
        process->first = next;
        next += process->count;
        process->count = 0;
        unordered |= process->unordered;
    }
    for (size_t i = 0; i < p->nrecords; i++) {
        struct record *r = &p->records[i];
        if (r->what & REC_PID) {
            struct process *process = &p->processes[r->process = rank[r->process]];
            p->by_process[process->first + process->count++] = (uint32_t)i;
        }
    }
    free(rank);
    if (unordered)
        order_streams(p);
}

/* Where a record goes in its process's stream (follow_stream's key), then
 * its place among the process's records in the logs. */
struct stream_key {
    uint64_t key[3];
    uint32_t position, record;
};

static int by_stream(const void *a, const void *b)
{
    const struct stream_key *x = a, *y = b;
    if (key_before(x->key, y->key) || key_before(y->key, x->key))
        return key_before(x->key, y->key) ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

/* The records of the processes whose logs do not hold them in the order
 * of their streams (a process's records in two logs, given in another
 * order), sorted into it: their keys need the records' numbers, so the
 * logs are read again for them. */
static void order_streams(struct perfetto *p)
{
    size_t total = 0;
    uint32_t *key_first = malloc(p->nprocesses * sizeof *key_first);
    if (!key_first)
        out_of_memory();
    for (size_t i = 0; i < p->nprocesses; i++) {
        struct process *process = &p->processes[i];
        key_first[i] = (uint32_t)total;
        if (!process->unordered)
            continue;
        total += process->count;
        process->run_time = process->run = process->sequence = process->ended = 0;
    }
    struct stream_key *keys = malloc(total * sizeof *keys + 1);
    uint32_t *keyed = calloc(p->nprocesses, sizeof *keyed);
    if (!keys || !keyed)
        out_of_memory();
    uint64_t index = 0;
    for (int i = 0; i < p->nlogs; i++) {
        struct dpm_error e;
        struct dpm_stream *s = open_log(p, i);
        struct dpm_event ev;
        int status;
        for (; (status = dpm_stream_next(s, &ev, &e)) == 1; index++) {
            const struct record *r = index < p->nrecords ? &p->records[index] : 0;
            if (!r || ((r->what & REC_PID) && ev.pid != p->processes[r->process].pid))
                dpm_fail("%s: the log changed while dpm export read it", p->logs[i]);
            struct process *process = &p->processes[r->process];
            if (!(r->what & REC_PID) || !process->unordered)
                continue;
            uint32_t position = keyed[r->process]++;
            struct stream_key *k = &keys[key_first[r->process] + position];
            k->position = position;
            k->record = (uint32_t)index;
            process->count = position;
            follow_stream(process, &ev, k->key);
        }
        if (status < 0)
            dpm_fail("%s", e.text);
        dpm_stream_close(s);
    }
    for (size_t i = 0; i < p->nprocesses; i++) {
        struct process *process = &p->processes[i];
        if (!process->unordered)
            continue;
        struct stream_key *k = &keys[key_first[i]];
        qsort(k, process->count, sizeof *k, by_stream);
        for (uint32_t j = 0; j < process->count; j++)
            p->by_process[process->first + j] = k[j].record;
    }
    free(keys);
    free(keyed);
    free(key_first);
}

/* ---- 2. laying out a thread ---- */

/* Process `process`'s records, in the order of its stream, on the shared
 * axis: each SEND and RECEIVE a 1 ns slice, a receive that waited a slice
 * "waiting" from its RECEIVECALL, every other record an instant. A slice
 * starts no earlier than the one before it ends, so that the slices of a
 * thread are disjoint even where two records bear the same time. Records
 * without a time are left out: by_process keeps the others first. */
static void lay_out_process(struct perfetto *p, struct process *process)
{
    uint64_t end = 0, call_time = 0, from;
    int calling = 0;
    uint32_t timed = 0;
    process->wait_first = (uint32_t)p->nwaits;
    for (uint32_t i = 0; i < process->count; i++) {
        uint32_t e = p->by_process[process->first + i];
        struct record *r = &p->records[e];
        if (!(r->what & REC_TIME))
            continue;
        uint64_t at = r->at + (uint64_t)(r->what & REC_SHIFTED ? p->timeline.shift[r->machine] : 0);
        if (r->what & REC_RECEIVECALL) {
            calling = (r->what & REC_CALL_WAITS) != 0;
            call_time = at;
        }
        if ((r->what & REC_RECEIVE) && calling && (from = call_time > end ? call_time : end) < at) {
            p->waits = array_grow(p->waits, &p->waits_capacity, p->nwaits, sizeof *p->waits);
            p->waits[p->nwaits++] = (struct wait){ from, e };
            end = at;
        }
        if (r->what & REC_RECEIVE)
            calling = 0;
        if (r->what & REC_SLICE) {
            r->at = at > end ? at : end;
            end = r->at + 1;
        } else {
            r->at = at;
        }
        p->by_process[process->first + timed++] = e;
    }
    process->timed = timed;
    process->wait_count = (uint32_t)p->nwaits - process->wait_first;
}

/* ---- 3. runs ---- */

/* Whether element x of a run goes strictly before element y. */
typedef int (*before_fn)(const struct perfetto *p, uint32_t x, uint32_t y);

/* Sort a[0..n) by `before`, equal elements kept in their order; tmp has
 * room for n / 2. A run already in order costs a comparison an element. */
static void merge_sort(const struct perfetto *p, uint32_t *a, size_t n, uint32_t *tmp, before_fn before)
{
    if (n < 2)
        return;
    size_t half = n / 2, i = 0, j = half, k = 0;
    merge_sort(p, a, half, tmp, before);
    merge_sort(p, a + half, n - half, tmp, before);
    if (!before(p, a[half], a[half - 1]))
        return;
    memcpy(tmp, a, half * sizeof *a);
    while (i < half && j < n)
        a[k++] = before(p, a[j], tmp[i]) ? a[j++] : tmp[i++];
    while (i < half)
        a[k++] = tmp[i++];
}

/* A slice before an instant at the same time (enum item_kind's order). */
static int record_before(const struct perfetto *p, uint32_t x, uint32_t y)
{
    const struct record *a = &p->records[x], *b = &p->records[y];
    return a->at != b->at ? a->at < b->at : (a->what & REC_SLICE) && !(b->what & REC_SLICE);
}

static int wait_before(const struct perfetto *p, uint32_t x, uint32_t y)
{
    return p->waits[x].from < p->waits[y].from;
}

/* A flow starts at its SEND's slice, and finishes at its RECEIVE's: in
 * the file no earlier than it starts. */
static uint64_t flow_start(const struct perfetto *p, uint32_t m)
{
    return p->records[p->timeline.message[m].send].at;
}

static uint64_t flow_finish(const struct perfetto *p, uint32_t m)
{
    return p->records[p->timeline.message[m].receive].at;
}

static uint64_t flow_finish_order(const struct perfetto *p, uint32_t m)
{
    uint64_t start = flow_start(p, m), finish = flow_finish(p, m);
    return finish > start ? finish : start;
}

static int start_before(const struct perfetto *p, uint32_t x, uint32_t y)
{
    return flow_start(p, x) < flow_start(p, y);
}

static int finish_before(const struct perfetto *p, uint32_t x, uint32_t y)
{
    return flow_finish_order(p, x) < flow_finish_order(p, y);
}

/* Each run in the order of the file: a thread's records, its waits, the
 * flows' starts and their finishes (a flow per message: both of its ends
 * have a slice). Equal times keep the order they were laid out in, the
 * flows that of their messages. */
static void sort_runs(struct perfetto *p)
{
    uint32_t messages = p->timeline.nmessages;
    size_t longest = messages > p->nwaits ? messages : p->nwaits;
    for (size_t i = 0; i < p->nprocesses; i++)
        longest = p->processes[i].timed > longest ? p->processes[i].timed : longest;
    uint32_t *tmp = malloc(longest / 2 * sizeof *tmp + 1);
    p->wait_order = malloc(p->nwaits * sizeof *p->wait_order + 1);
    p->flow_starts = malloc(messages * sizeof *p->flow_starts + 1);
    p->flow_finishes = malloc(messages * sizeof *p->flow_finishes + 1);
    if (!tmp || !p->wait_order || !p->flow_starts || !p->flow_finishes)
        out_of_memory();
    for (uint32_t i = 0; i < p->nwaits; i++)
        p->wait_order[i] = i;
    for (uint32_t i = 0; i < messages; i++)
        p->flow_starts[i] = p->flow_finishes[i] = i;
    for (size_t i = 0; i < p->nprocesses; i++) {
        const struct process *process = &p->processes[i];
        merge_sort(p, p->by_process + process->first, process->timed, tmp, record_before);
        merge_sort(p, p->wait_order + process->wait_first, process->wait_count, tmp, wait_before);
    }
    merge_sort(p, p->flow_starts, messages, tmp, start_before);
    merge_sort(p, p->flow_finishes, messages, tmp, finish_before);
    free(tmp);
}

/* ---- 4. writing ---- */

void export_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc((unsigned char)*s < ' ' ? ' ' : *s, f);
    }
}

/* What the file says of itself: its unit of time and the clocks' shifts. */
static void put_header(struct perfetto *p)
{
    FILE *f = p->out.file;
    fputs("{\"otherData\":{\"generator\":\"dpm export\",\"time\":\"ts and dur are integer guest nanoseconds, "
          "written where the format has microseconds: a viewer's microsecond is a guest nanosecond\","
          "\"clockShiftNs\":{", f);
    for (uint32_t i = 0; i < p->nmachines; i++)
        fprintf(f, "%s\"machine %" PRIu32 "\":%" PRId64, i ? "," : "", p->machine_order[i],
                p->timeline.shift[p->machine_order[i]]);
    fprintf(f, "},\"messages\":%" PRIu32 ",\"messagesBetweenMachines\":%" PRIu32 ",\"arrivingBeforeSent\":%" PRIu32
            "},\n\"traceEvents\":[", p->timeline.nmessages, p->timeline.between_machines, p->timeline.backward);
}

/* The thread of process i on machine m: i + 1 on the machine it began on,
 * and one of its own on each other (viewers find a flow's thread by its
 * number alone). */
static uint64_t thread_of(const struct perfetto *p, uint32_t i, uint32_t m)
{
    return i + 1 + (m == p->processes[i].machine ? 0 : (uint64_t)(m + 1) * p->nprocesses);
}

/* A process per machine ("machine M", and its clock's shift), a thread per
 * traced process on each machine it was on, named by its label. */
static void put_names(struct perfetto *p)
{
    FILE *f = p->out.file;
    uint8_t named[TIMELINE_MACHINES] = { 0 };
    char label[96];
    int first = 1;
    for (size_t i = 0; i < p->nprocesses; i++) {
        const struct process *process = &p->processes[i];
        for (uint32_t m = 0; m < TIMELINE_MACHINES; m++) {
            if (!(process->on[m / 8] & (1u << (m % 8))))
                continue;
            if (!named[m]) {
                named[m] = 1;
                fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32 ",\"args\":{\"name\":"
                        "\"machine %" PRIu32, first ? "\n" : ",\n", m + 1, m);
                if (p->timeline.shift[m])
                    fprintf(f, " (clock +%" PRId64 " ns)", p->timeline.shift[m]);
                fputs("\"}}", f);
                first = 0;
            }
            fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"args\":"
                    "{\"name\":\"", first ? "\n" : ",\n", m + 1, thread_of(p, (uint32_t)i, m));
            export_label(f, dpm_label(process->name, process->pid, label, sizeof label));
            fputs("\"}}", f);
            first = 0;
        }
    }
}

static void put_event(struct perfetto *p, const struct run *r);
static void next_of(struct perfetto *p, struct run *r);
static int run_before(const struct run *a, const struct run *b);
static void sift_down(struct run **heap, size_t n, size_t i);
static void out_flush(struct out *o);

/* Every trace event, in the order of the file: the runs merged, a heap
 * of them ordered by their next events. Equal times are in the order of
 * enum item_kind, then of the threads (the flows after them). */
static void put_events(struct perfetto *p)
{
    size_t nruns = 0, n = 0;
    struct run *runs = calloc(2 * p->nprocesses + 2, sizeof *runs);
    struct run **heap = malloc((2 * p->nprocesses + 2) * sizeof *heap);
    p->streams = calloc((size_t)p->nlogs, sizeof *p->streams);
    if (!runs || !heap || !p->streams)
        out_of_memory();
    for (int i = 0; i < p->nlogs; i++) {
        struct dpm_error e;
        if (!(p->streams[i] = dpm_stream_open(p->logs[i], (uint16_t)i, &e)))
            dpm_fail("%s", e.text);
        dpm_stream_events_only(p->streams[i]);
    }
    for (uint32_t i = 0; i < p->nprocesses; i++) {
        const struct process *process = &p->processes[i];
        runs[nruns++] = (struct run){ p->by_process + process->first, process->timed, 0, i, RUN_RECORDS, 0, 0 };
        runs[nruns++] = (struct run){ p->wait_order + process->wait_first, process->wait_count, 0, i, RUN_WAITS, 0, 0 };
    }
    runs[nruns++] = (struct run){ p->flow_starts, p->timeline.nmessages, 0, UINT32_MAX, RUN_FLOW_STARTS, 0, 0 };
    runs[nruns++] = (struct run){ p->flow_finishes, p->timeline.nmessages, 0, UINT32_MAX, RUN_FLOW_FINISHES, 0, 0 };
    for (size_t i = 0; i < nruns; i++) {
        if (runs[i].n) {
            next_of(p, &runs[i]);
            heap[n++] = &runs[i];
        }
    }
    for (size_t i = n; i-- > 0;)
        sift_down(heap, n, i);
    while (n) {
        struct run *r = heap[0];
        put_event(p, r);
        if (++r->next < r->n)
            next_of(p, r);
        else
            heap[0] = heap[--n];
        sift_down(heap, n, 0);
    }
    out_flush(&p->out);
    for (int i = 0; i < p->nlogs; i++)
        dpm_stream_close(p->streams[i]);
    free(runs);
    free(heap);
}

/* Where run r's next event goes: its kind and its place in the file. */
static void next_of(struct perfetto *p, struct run *r)
{
    uint32_t ref = r->ref[r->next];
    switch (r->type) {
    case RUN_RECORDS:
        r->kind = p->records[ref].what & REC_SLICE ? ITEM_SLICE : ITEM_INSTANT;
        r->order = p->records[ref].at;
        break;
    case RUN_WAITS:
        r->kind = ITEM_WAITING;
        r->order = p->waits[ref].from;
        break;
    case RUN_FLOW_STARTS:
        r->kind = ITEM_FLOW_START;
        r->order = flow_start(p, ref);
        break;
    default:
        r->kind = ITEM_FLOW_FINISH;
        r->order = flow_finish_order(p, ref);
        break;
    }
}

/* The order of the file: time, kind, thread. Two runs' next events never
 * tie: a thread's two runs hold different kinds, and so do the flows'. */
static int run_before(const struct run *a, const struct run *b)
{
    if (a->order != b->order)
        return a->order < b->order;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->track < b->track;
}

static void sift_down(struct run **heap, size_t n, size_t i)
{
    for (;;) {
        size_t least = i, left = 2 * i + 1, right = left + 1;
        if (left < n && run_before(heap[left], heap[least]))
            least = left;
        if (right < n && run_before(heap[right], heap[least]))
            least = right;
        if (least == i)
            return;
        struct run *swap = heap[i];
        heap[i] = heap[least];
        heap[least] = swap;
        i = least;
    }
}

static void record_fields(struct perfetto *p, uint32_t e, struct dpm_event *ev);
static inline void out_text(struct out *o, const char *s);
static void out_u64(struct out *o, uint64_t v);
static void out_hex(struct out *o, uint64_t v);
static void out_pid_label(struct out *o, uint64_t pid);

static const char *type_name(uint32_t type)
{
    const struct meter_layout *l = meter_body_layout(type);
    return l ? l->name : "record";
}

static void put_head(struct perfetto *p, uint8_t kind, const char *name, uint32_t e, uint64_t ts, uint64_t dur,
                     uint32_t flow);
static void put_args(struct out *o, const struct dpm_event *ev);

/* Run r's next trace event; a slice's or instant's record's fields are
 * its args ("time": its machine's own clock). */
static void put_event(struct perfetto *p, const struct run *r)
{
    uint32_t ref = r->ref[r->next];
    struct dpm_event ev;
    switch (r->type) {
    case RUN_RECORDS:
        record_fields(p, ref, &ev);
        put_head(p, r->kind, type_name(ev.type), ref, r->order, 1, 0);
        put_args(&p->out, &ev);
        break;
    case RUN_WAITS:
        put_head(p, r->kind, "waiting", p->waits[ref].receive, r->order,
                 p->records[p->waits[ref].receive].at - r->order, 0);
        break;
    case RUN_FLOW_STARTS:
        put_head(p, r->kind, "message", p->timeline.message[ref].send, r->order, 0, ref + 1);
        break;
    default:
        put_head(p, r->kind, "message", p->timeline.message[ref].receive, flow_finish(p, ref), 0, ref + 1);
        break;
    }
    out_text(&p->out, "}");
}

/* A trace event's phase, name, thread and time, and what its kind has:
 * a slice's duration, a flow's id, an instant's scope. Its thread is that
 * of record e's process on the machine that wrote e. */
static void put_head(struct perfetto *p, uint8_t kind, const char *name, uint32_t e, uint64_t ts, uint64_t dur,
                     uint32_t flow)
{
    static const char *const phase[] = { "X", "X", "s", "f", "i" };
    struct out *o = &p->out;
    const struct record *r = &p->records[e];
    out_text(o, ",\n{\"ph\":\"");
    out_text(o, phase[kind]);
    out_text(o, "\",\"name\":\"");
    out_text(o, name);
    uint32_t machine = r->what & REC_SHIFTED ? r->machine : p->processes[r->process].machine;
    out_text(o, "\",\"cat\":\"dpm\",\"pid\":");
    out_u64(o, machine + 1);
    out_text(o, ",\"tid\":");
    out_u64(o, thread_of(p, r->process, machine));
    out_text(o, ",\"ts\":");
    out_u64(o, ts);
    if (kind == ITEM_WAITING || kind == ITEM_SLICE) {
        out_text(o, ",\"dur\":");
        out_u64(o, dur);
    }
    if (kind == ITEM_FLOW_START || kind == ITEM_FLOW_FINISH) {
        out_text(o, ",\"id\":");
        out_u64(o, flow);
        if (kind == ITEM_FLOW_FINISH)
            out_text(o, ",\"bp\":\"e\"");
    }
    if (kind == ITEM_INSTANT)
        out_text(o, ",\"s\":\"t\"");
}

/* The record's fields as args: its machine's own clock among them. */
static void put_args(struct out *o, const struct dpm_event *ev)
{
    out_text(o, ",\"args\":{\"time\":");
    out_u64(o, ev->time);
    out_text(o, ",\"sequence\":");
    out_u64(o, ev->sequence);
    out_text(o, ",\"procTime\":");
    out_u64(o, ev->proctime);
    out_text(o, ",\"pc\":\"0x");
    out_hex(o, ev->pc);
    out_text(o, "\"");
    if (ev->present & EV_OTHER) {
        out_text(o, ",\"other\":\"");
        out_pid_label(o, ev->other);
        out_text(o, "\"");
    }
    if (ev->present & EV_SIZE) {
        out_text(o, ",\"size\":");
        out_u64(o, ev->size);
    }
    if (ev->present & EV_MESSAGE_ID) {
        out_text(o, ",\"messageId\":\"0x");
        out_hex(o, ev->message_id);
        out_text(o, "\"");
    }
    out_text(o, "}");
}

/* The block that holds record e: the last one starting at or before it. */
static struct block *block_of(struct perfetto *p, uint64_t e)
{
    size_t low = 0, high = p->nblocks;
    if (p->blocks[p->last_block].first <= e &&
        (p->last_block + 1 == p->nblocks || p->blocks[p->last_block + 1].first > e))
        return &p->blocks[p->last_block];
    while (high - low > 1) {
        size_t mid = low + (high - low) / 2;
        if (p->blocks[mid].first <= e)
            low = mid;
        else
            high = mid;
    }
    p->last_block = low;
    return &p->blocks[low];
}

/* Record e's fields, from its block, read again when the first of its
 * records is written and let go when the last one is. */
static void record_fields(struct perfetto *p, uint32_t e, struct dpm_event *ev)
{
    struct block *b = block_of(p, e);
    if (!b->events) {
        uint64_t count = (b + 1 < p->blocks + p->nblocks ? b[1].first : p->nrecords) - b->first;
        struct dpm_stream *s = p->streams[b->log];
        struct dpm_error error;
        if (!(b->events = malloc(count * sizeof *b->events)))
            out_of_memory();
        dpm_stream_seek(s, b->number, b->record);
        for (uint64_t i = 0; i < count; i++) {
            int status = dpm_stream_next(s, &b->events[i], &error);
            if (status < 0)
                dpm_fail("%s", error.text);
            if (status == 0 || dpm_stream_block(s) != b->number)
                dpm_fail("%s: the log changed while dpm export read it", p->logs[b->log]);
        }
    }
    *ev = b->events[e - b->first];
    if (--b->left == 0) {
        free(b->events);
        b->events = 0;
    }
}

/* ---- the output's buffer ---- */

static void out_flush(struct out *o)
{
    fwrite(o->buf, 1, o->n, o->file);
    o->n = 0;
}

static inline void out_bytes(struct out *o, const char *s, size_t n)
{
    if (o->n + n > sizeof o->buf)
        out_flush(o);
    memcpy(o->buf + o->n, s, n);
    o->n += n;
}

static inline void out_text(struct out *o, const char *s)
{
    out_bytes(o, s, strlen(s));
}

/* Room for n more bytes in the buffer, where the caller writes them. */
static char *out_room(struct out *o, size_t n)
{
    if (o->n + n > sizeof o->buf)
        out_flush(o);
    char *at = o->buf + o->n;
    o->n += n;
    return at;
}

/* v in decimal, written from its last digit back, two at a time. */
static void out_u64(struct out *o, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    size_t n = 1;
    for (uint64_t power = 10; n < 20 && v >= power; power *= 10)
        n++;
    char *end = out_room(o, n) + n;
    for (; v >= 100; v /= 100) {
        end -= 2;
        memcpy(end, pairs + 2 * (v % 100), 2);
    }
    if (v >= 10)
        memcpy(end - 2, pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

/* v in lower-case hexadecimal, without "0x". */
static void out_hex(struct out *o, uint64_t v)
{
    size_t n = 1;
    while (n < 16 && v >> (4 * n))
        n++;
    char *end = out_room(o, n) + n;
    do
        *--end = "0123456789abcdef"[v & 15];
    while (v >>= 4);
}

/* A pid as dpm_label names a process known by no name: "M.S.G", or
 * "kernel M.S.G" for slot 0. */
static void out_pid_label(struct out *o, uint64_t pid)
{
    if (DPM_PID_SLOT(pid) == 0)
        out_text(o, "kernel ");
    out_u64(o, DPM_PID_MACHINE(pid));
    out_text(o, ".");
    out_u64(o, DPM_PID_SLOT(pid));
    out_text(o, ".");
    out_u64(o, DPM_PID_GEN(pid));
}

static void free_perfetto(struct perfetto *p)
{
    for (size_t i = 0; i < p->nblocks; i++)
        free(p->blocks[i].events);
    free(p->records);
    free(p->processes);
    free(p->by_process);
    free(p->blocks);
    free(p->waits);
    free(p->wait_order);
    free(p->flow_starts);
    free(p->flow_finishes);
    free(p->streams);
    timeline_free(&p->timeline);
    memset(p, 0, sizeof *p);
}
