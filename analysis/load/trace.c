/*
 * analysis/load/trace.c — a whole trace in memory (load/event.h): every
 * record of one or more logs as events, the processes seen, each process's
 * events in the order of its own stream, and the records lost and missing.
 * Also the small helpers every analysis shares: errors, sequence gaps, and
 * a traced process's label (load/pids.c writes pids as text).
 */
#define _DEFAULT_SOURCE   /* MAP_NORESERVE, madvise */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "load/event.h"
#include "load/table.h"
#include "load/window.h"
#include "tracelog.h"

void dpm_error_set(struct dpm_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
}

uint64_t dpm_sequence_gap(struct dpm_sequence *q, const struct dpm_event *ev)
{
    uint64_t missing = 0;
    if (ev->present & EV_SEQUENCE) {
        if (!q->started && dpm_window_get())
            missing = 0;                       /* the records before the window are not missing */
        else if (!q->started || q->ended || ev->sequence == 0)
            missing = ev->sequence;            /* a stream starts at 0 */
        else if (ev->sequence > q->next)
            missing = ev->sequence - q->next;
        q->next = ev->sequence + 1;
    }
    q->started = 1;
    q->ended = ev->type == MT_DESTROYPROCESS;
    return missing;
}

/* ---- loading ---- */

/* Room for every event the logs can hold: an entry takes at least
 * sizeof(struct tracelog_entry) bytes of a log, so their sizes bound the
 * count. The room is reserved, not used: pages are touched only as events
 * fill them, in huge pages where the system allows (a million events take
 * 170 MB, and page by page their faults cost more than reading them).
 * Returns the room in events; exits if there is no address space. */
static size_t reserve_events(struct dpm_trace *t, const char *const *paths, int n)
{
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0)
            bytes += (uint64_t)st.st_size;
    }
    size_t room = (size_t)(bytes / sizeof(struct tracelog_entry)) + 1;
    t->events_mapped = room * sizeof *t->events;
    t->events = mmap(0, t->events_mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t->events == MAP_FAILED) {
        fprintf(stderr, "dpm: no address space for %zu events\n", room);
        exit(1);
    }
    madvise(t->events, t->events_mapped, MADV_HUGEPAGE);
    return room;
}

/* Append every event of the log `path` to t->events (room for `room` in
 * all); 0, or -1 with *e set. */
static int load_log(struct dpm_trace *t, size_t room, const char *path, uint16_t file, struct dpm_error *e)
{
    struct dpm_stream *s = dpm_stream_open(path, file, e);
    if (!s)
        return -1;
    dpm_stream_events_only(s);
    int status = 0;
    while (t->nevents < room && (status = dpm_stream_next(s, &t->events[t->nevents], e)) == 1)
        t->nevents++;
    t->lost += dpm_stream_lost(s);
    dpm_stream_close(s);
    return status;
}

static int by_pid(const void *a, const void *b)
{
    uint64_t x = ((const struct dpm_process *)a)->pid, y = ((const struct dpm_process *)b)->pid;
    return x < y ? -1 : x > y;
}

/* The processes seen (every event with a pid), sorted by pid, with their
 * names and event counts; `first` and their machines not yet set. */
static void find_processes(struct dpm_trace *t)
{
    struct table seen = { 0 };
    size_t capacity = 0;
    uint64_t last_pid = 0;
    uint32_t *index = 0;      /* last_pid's; records come in batches of one process's */
    for (size_t i = 0; i < t->nevents; i++) {
        const struct dpm_event *ev = &t->events[i];
        if (!(ev->present & EV_PID))
            continue;
        if (!index || ev->pid != last_pid)
            index = table_find(&seen, ev->pid, 0);
        last_pid = ev->pid;
        if (!index) {
            t->processes = array_grow(t->processes, &capacity, t->nprocesses, sizeof *t->processes);
            t->processes[t->nprocesses] = (struct dpm_process){ .pid = ev->pid };
            table_insert(&seen, ev->pid, 0, (uint32_t)t->nprocesses);
            index = table_find(&seen, ev->pid, 0);
            t->nprocesses++;
        }
        struct dpm_process *p = &t->processes[*index];
        p->count++;
        if (ev->type == MT_CREATEPROCESS && (ev->present & EV_NAME))
            memcpy(p->name, ev->name, sizeof p->name);
    }
    table_free(&seen);
    for (size_t p = 0; p < t->nprocesses; p++) {
        const char *name = t->processes[p].name[0] ? 0 : dpm_window_name_of(t->processes[p].pid);
        if (name)
            memcpy(t->processes[p].name, name, sizeof t->processes[p].name);
    }
    if (t->nprocesses)
        qsort(t->processes, t->nprocesses, sizeof *t->processes, by_pid);
}

/* Where an event sorts among its process's: its stream (a run, ordered
 * by the time its first record was written), then its record number. */
struct stream_key {
    uint64_t run_time;
    uint64_t run;
    uint64_t sequence;       /* the last one seen when the log did not keep it */
    uint64_t position;       /* in the logs, for ties */
    uint32_t event;
};

static int by_stream(const void *a, const void *b)
{
    const struct stream_key *x = a, *y = b;
    if (x->run_time != y->run_time)
        return x->run_time < y->run_time ? -1 : 1;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    if (x->sequence != y->sequence)
        return x->sequence < y->sequence ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

/* Put one process's events (by_process[first .. first+count), in log
 * order) in stream order, and count the records missing from them. */
static void order_process(struct dpm_trace *t, struct dpm_process *p, struct stream_key *keys)
{
    uint64_t run = 0, run_time = 0, sequence = 0;
    for (uint32_t k = 0; k < p->count; k++) {
        const struct dpm_event *ev = &t->events[t->by_process[p->first + k]];
        const struct dpm_event *before = k ? &t->events[t->by_process[p->first + k - 1]] : 0;
        int seq = (ev->present & EV_SEQUENCE) != 0;
        if (!before || (before->type == MT_DESTROYPROCESS) || (seq && ev->sequence == 0)) {
            run += before != 0;
            run_time = ev->time;
        }
        if (seq)
            sequence = ev->sequence;
        keys[k] = (struct stream_key){ run_time, run, sequence, k, t->by_process[p->first + k] };
    }
    uint32_t sorted = 1;   /* one log's streams come in order: then no sort is needed */
    while (sorted < p->count && by_stream(&keys[sorted - 1], &keys[sorted]) <= 0)
        sorted++;
    if (sorted < p->count)
        qsort(keys, p->count, sizeof *keys, by_stream);
    struct dpm_sequence q = { 0 };
    for (uint32_t k = 0; k < p->count; k++) {
        t->by_process[p->first + k] = keys[k].event;
        p->gaps += dpm_sequence_gap(&q, &t->events[keys[k].event]);
    }
    t->gaps += p->gaps;
}

/* Each process's event list (by_process), in stream order, and the gaps. */
static void index_processes(struct dpm_trace *t)
{
    uint32_t next = 0;
    for (size_t i = 0; i < t->nprocesses; i++) {
        t->processes[i].first = next;
        next += t->processes[i].count;
        t->processes[i].count = 0;
    }
    t->by_process = malloc((next ? next : 1) * sizeof *t->by_process);
    struct stream_key *keys = malloc((next ? next : 1) * sizeof *keys);
    if (!t->by_process || !keys) {
        fputs("dpm: out of memory\n", stderr);
        exit(1);
    }
    struct dpm_process *p = 0;    /* the last event's: records come in batches of one process's */
    for (size_t i = 0; i < t->nevents; i++) {
        if (!(t->events[i].present & EV_PID))
            continue;
        if (!p || p->pid != t->events[i].pid)
            p = (struct dpm_process *)dpm_trace_process(t, t->events[i].pid);
        t->by_process[p->first + p->count++] = (uint32_t)i;
    }
    for (size_t i = 0; i < t->nprocesses; i++)
        order_process(t, &t->processes[i], keys);
    free(keys);
}

struct dpm_move dpm_move_of(const struct dpm_event *ev, uint32_t before)
{
    struct dpm_move m = { .pid = ev->pid, .from = before, .to = before };
    if (ev->present & EV_FROM_MACHINE)
        m.from = ev->from_machine;
    if (ev->present & EV_TO_MACHINE)
        m.to = ev->to_machine;
    else if (ev->present & EV_MACHINE)
        m.to = ev->machine;
    m.time = (ev->present & EV_TIME) ? ev->time : 0;
    m.took = (ev->present & EV_CODE) ? ev->code : 0;
    m.bytes = (ev->present & EV_SIZE) ? ev->size : 0;
    m.messages = (ev->present & EV_QUEUE) ? ev->queue_length : 0;
    m.moves = (ev->present & EV_KIND) ? ev->kind : 0;
    return m;
}

/* Where each process was at each of its records, and its moves: the
 * machine of its first record (its pid's when the log did not keep it),
 * then that of each record that says, and after a MIGRATE the machine it
 * reached. A record whose machine the log did not keep gets the one the
 * process was on then. */
static void locate_processes(struct dpm_trace *t)
{
    size_t capacity = 0;
    for (size_t i = 0; i < t->nprocesses; i++) {
        struct dpm_process *p = &t->processes[i];
        const uint32_t *mine = &t->by_process[p->first];
        const struct dpm_event *first = p->count ? &t->events[mine[0]] : 0;
        uint32_t at = first && (first->present & EV_MACHINE) ? first->machine : DPM_PID_MACHINE(p->pid);
        p->machine = at;
        p->first_move = (uint32_t)t->nmoves;
        for (uint32_t k = 0; k < p->count; k++) {
            struct dpm_event *ev = &t->events[mine[k]];
            if (ev->type == MT_MIGRATE) {
                t->moves = array_grow(t->moves, &capacity, t->nmoves, sizeof *t->moves);
                t->moves[t->nmoves] = dpm_move_of(ev, at);
                t->moves[t->nmoves].event = mine[k];
                at = t->moves[t->nmoves++].to;
            }
            if (ev->present & EV_MACHINE)
                at = ev->machine;
            else
                ev->machine = at;
        }
        p->last_machine = at;
        p->nmoves = (uint32_t)(t->nmoves - p->first_move);
    }
}

int dpm_trace_load(struct dpm_trace *t, const char *const *paths, int n, struct dpm_error *e)
{
    memset(t, 0, sizeof *t);
    size_t room = reserve_events(t, paths, n);
    for (int i = 0; i < n; i++) {
        if (load_log(t, room, paths[i], (uint16_t)i, e) != 0) {
            dpm_trace_free(t);
            return -1;
        }
    }
    find_processes(t);
    index_processes(t);
    locate_processes(t);
    return 0;
}

const struct dpm_process *dpm_trace_process(const struct dpm_trace *t, uint64_t pid)
{
    size_t low = 0, high = t->nprocesses;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (t->processes[mid].pid == pid)
            return &t->processes[mid];
        if (t->processes[mid].pid < pid)
            low = mid + 1;
        else
            high = mid;
    }
    return 0;
}

void dpm_trace_free(struct dpm_trace *t)
{
    if (t->events_mapped)
        munmap(t->events, t->events_mapped);
    else
        free(t->events);
    free(t->processes);
    free(t->by_process);
    free(t->moves);
    memset(t, 0, sizeof *t);
}

#define MACHINES_LISTED 5      /* dpm_machines_text lists this many moves at most */

const char *dpm_machines_text(uint32_t first, const struct dpm_move *moves, size_t n, uint64_t pid, char *out,
                              size_t cap)
{
    size_t count = 0, at = (size_t)snprintf(out, cap, "%" PRIu32, first);
    uint32_t last = first;
    for (size_t i = 0; i < n; i++)
        if (moves[i].pid == pid)
            count++, last = moves[i].to;
    if (count > MACHINES_LISTED) {
        snprintf(out + (at < cap ? at : cap), cap - (at < cap ? at : cap), ">...>%" PRIu32 " (%zu moves)", last,
                 count);
        return out;
    }
    for (size_t i = 0; i < n && at < cap; i++)
        if (moves[i].pid == pid)
            at += (size_t)snprintf(out + at, cap - at, ">%" PRIu32, moves[i].to);
    return out;
}

const char *dpm_process_machines(const struct dpm_trace *t, const struct dpm_process *p, char *out, size_t cap)
{
    return dpm_machines_text(p->machine, &t->moves[p->first_move], p->nmoves, p->pid, out, cap);
}

const char *dpm_process_label(const struct dpm_trace *t, uint64_t pid, char *out, size_t cap)
{
    const struct dpm_process *p = t ? dpm_trace_process(t, pid) : 0;
    return dpm_label(p ? p->name : "", pid, out, cap);
}
