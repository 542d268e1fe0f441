/*
 * analysis/models/stats.c — DPM's communication statistics, one event at a
 * time (models/stats.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/window.h"
#include "models/stats.h"

/* ---- histograms ---- */

void histogram_add(struct histogram *h, uint64_t value)
{
    int k = value ? 64 - __builtin_clzll(value) : 0;
    h->bucket[k]++;
    if (h->count == 0 || value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    h->count++;
    h->sum += value;
}

double histogram_mean(const struct histogram *h)
{
    return h->count ? (double)h->sum / (double)h->count : 0;
}

uint64_t histogram_low(int k)
{
    return k ? (uint64_t)1 << (k - 1) : 0;
}

uint64_t histogram_high(int k)
{
    return k ? histogram_low(k) + (histogram_low(k) - 1) : 0;
}

/* ---- tables ---- */

void stats_init(struct stats *st)
{
    memset(st, 0, sizeof *st);
    st->last_process = SIZE_MAX;
}

/* The row of process `pid`, made (untraced) when it is new. */
static struct stats_process *process(struct stats *st, uint64_t pid)
{
    uint32_t *index = table_find(&st->process_index, pid, 0);
    if (index)
        return &st->processes[*index];
    st->processes = array_grow(st->processes, &st->processes_capacity, st->nprocesses, sizeof *st->processes);
    struct stats_process *p = &st->processes[st->nprocesses];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->machine = p->last_machine = DPM_PID_MACHINE(pid);
    table_insert(&st->process_index, pid, 0, (uint32_t)st->nprocesses++);
    return p;
}

/* The index of machine m's row, made when new. */
static uint32_t machine_row(struct stats *st, uint32_t m)
{
    uint32_t *index = table_find(&st->machine_index, m, 0);
    if (index)
        return *index;
    st->machines = array_grow(st->machines, &st->machines_capacity, st->nmachines, sizeof *st->machines);
    st->machines[st->nmachines] = (struct stats_machine){ .machine = m };
    table_insert(&st->machine_index, m, 0, (uint32_t)st->nmachines);
    return (uint32_t)st->nmachines++;
}

/* The row of the process whose record this is: most records are of the
 * same process as the record before (meter batches). */
static struct stats_process *writer_of(struct stats *st, uint64_t pid)
{
    if (st->last_process < st->nprocesses && st->processes[st->last_process].pid == pid)
        return &st->processes[st->last_process];
    struct stats_process *p = process(st, pid);
    st->last_process = (size_t)(p - st->processes);
    return p;
}

/* The cell of messages from `from` to `to`. */
static struct stats_pair *pair(struct stats *st, uint64_t from, uint64_t to)
{
    uint32_t *index = table_find(&st->pair_index, from, to);
    if (index)
        return &st->pairs[*index];
    st->pairs = array_grow(st->pairs, &st->pairs_capacity, st->npairs, sizeof *st->pairs);
    st->pairs[st->npairs] = (struct stats_pair){ .from = from, .to = to };
    table_insert(&st->pair_index, from, to, (uint32_t)st->npairs++);
    return &st->pairs[st->npairs - 1];
}

/* Remember a queued message of receiver `pid`. */
static void remember_queued(struct stats *st, uint64_t pid, uint64_t message_id, uint64_t time, uint64_t order)
{
    uint32_t i;
    if (st->queued_free) {
        i = st->queued_free - 1;
        st->queued_free = st->queued[i].next_free;
    } else {
        st->queued = array_grow(st->queued, &st->queued_capacity, st->nqueued, sizeof *st->queued);
        i = (uint32_t)st->nqueued++;
    }
    st->queued[i] = (struct stats_queued){ time, order, 0 };
    table_insert(&st->queued_index, pid, message_id, i);
}

/* Take the queued message out (its entry is reused); 0 if it was never seen queued. */
static int take_queued(struct stats *st, uint64_t pid, uint64_t message_id, struct stats_queued *out)
{
    uint32_t *index = table_find(&st->queued_index, pid, message_id);
    if (!index)
        return 0;
    uint32_t i = *index;
    *out = st->queued[i];
    st->queued[i].next_free = st->queued_free;
    st->queued_free = i + 1;
    table_remove(&st->queued_index, pid, message_id);
    return 1;
}

/* ---- where receivers were (models/stats.h) ---- */

/* A message id's place among the ids of the machine that made it. */
#define ID_ORDER(id) ((id) & ((1ull << 56) - 1))
/* The key under which a process's first machine is kept (no machine makes ids under it). */
#define FIRST_PLACE UINT64_MAX

/* A new place, the first of (pid, key) or after place `last` of it. */
static void add_place(struct stats *st, uint64_t pid, uint64_t key, const uint32_t *last, uint64_t from,
                      uint32_t machine)
{
    st->places = array_grow(st->places, &st->places_capacity, st->nplaces, sizeof *st->places);
    st->places[st->nplaces] = (struct stats_place){ from, machine, 0 };
    if (last)
        st->places[*last].next = (uint32_t)st->nplaces + 1;
    else
        table_insert(&st->place_index, pid, key, (uint32_t)st->nplaces);
    st->nplaces++;
}

/* Record ev of traced process p, written on machine `at`, is where a
 * message reached p (its MESSAGEQUEUED, or its RECEIVE when it was not
 * queued): p was there when the machine that made the message's id made
 * it. Kept when it is news: a machine other than the last one known for
 * that machine's ids, the first of them being where p's records began. */
static void learn_place(struct stats *st, struct stats_process *p, const struct dpm_event *ev, uint32_t at)
{
    if (st->placed || !(ev->present & EV_MESSAGE_ID) || (!p->placed && at == p->machine))
        return;
    uint32_t *first = table_find(&st->place_index, p->pid, METER_MESSAGE_ID_MACHINE(ev->message_id));
    uint32_t last = first ? *first : 0;
    while (first && st->places[last].next)
        last = st->places[last].next - 1;
    if (first ? st->places[last].machine == at : at == p->machine)
        return;                                /* no news */
    add_place(st, p->pid, METER_MESSAGE_ID_MACHINE(ev->message_id), first ? &last : 0, ID_ORDER(ev->message_id), at);
    p->placed = 1;
}

/* Where the receiver `to` of SEND ev was when it was sent: for a traced
 * process, known from the first reading (where the messages of the same
 * machine found it around this id, or where its records began), else its
 * home. */
static uint32_t receiver_machine(const struct stats *st, uint64_t to, const struct dpm_event *ev)
{
    if (!st->placed)
        return DPM_PID_MACHINE(to);
    uint32_t *origin = table_find(&st->place_index, to, FIRST_PLACE);
    uint32_t *first = (ev->present & EV_MESSAGE_ID)
                          ? table_find(&st->place_index, to, METER_MESSAGE_ID_MACHINE(ev->message_id))
                          : 0;
    uint32_t machine = origin ? st->places[*origin].machine : DPM_PID_MACHINE(to);
    for (const struct stats_place *at = first ? &st->places[*first] : 0; at && at->from <= ID_ORDER(ev->message_id);
         at = at->next ? &st->places[at->next - 1] : 0)
        machine = at->machine;
    return machine;
}

/* ---- the events ---- */

/* The queue of p changes by `delta` at `time`: the time-weighted area so far. */
static void queue_step(struct stats_process *p, int delta, uint64_t time)
{
    p->queue_area += (double)p->queue * (double)(time - p->queue_time);
    p->queue_time = time;
    p->queue += delta;
    if (p->queue > 0 && (uint64_t)p->queue > p->queue_max)
        p->queue_max = (uint64_t)p->queue;
    p->queue_changes++;
    p->queue_sum += (double)p->queue;
}

/* A SEND that sent (status 0): who talks to whom, sizes, local or remote. */
static void count_send(struct stats *st, struct stats_process *p, const struct dpm_event *ev)
{
    if ((ev->present & EV_STATUS) && ev->status != 0) {
        st->failed_sends++;
        return;
    }
    uint64_t to = ev->other, size = ev->size;
    int local = p->last_machine == receiver_machine(st, to, ev);
    st->machines[p->row].local += local;
    st->machines[p->row].remote += !local;
    struct stats_pair *cell = pair(st, p->pid, to);
    cell->messages++;
    cell->local_messages += local;
    cell->bytes += size;
    p->sent++;
    p->bytes_sent += size;
    size_t from_index = (size_t)(p - st->processes);
    struct stats_process *q = process(st, to);    /* may move the rows */
    p = &st->processes[from_index];
    q->received++;
    q->bytes_received += size;
    st->messages++;
    st->bytes += size;
    histogram_add(&st->sizes, size);
    if (local) {
        st->local_messages++;
        st->local_bytes += size;
    } else {
        st->remote_messages++;
        st->remote_bytes += size;
    }
}

/* A RECEIVE: the queue wait of its message if it was queued, and the
 * blocking time of the RECEIVECALL before it if the process had to wait
 * (its message was not already queued when it called). */
static void count_receive(struct stats *st, struct stats_process *p, const struct dpm_event *ev, uint64_t time)
{
    struct stats_queued queued;
    int was_queued = (ev->present & EV_MESSAGE_ID) && take_queued(st, p->pid, ev->message_id, &queued);
    p->receives++;
    if (was_queued) {
        histogram_add(&st->waits, time - queued.time);
        queue_step(p, -1, time);
    } else {
        st->unmatched_receives++;
        learn_place(st, p, ev, p->last_machine);
    }
    if (p->calling) {
        if (was_queued && queued.order < p->call_order) {
            st->ready_receives++;
        } else {
            st->waited_receives++;
            histogram_add(&st->blocking, time - p->call_time);
        }
        p->calling = 0;
    }
}

/* Where the record was written: the machine's row, and the process's
 * first and latest machine; a move (MIGRATE) into the moves' list. The CPU
 * the process used since its record before was used where that one was
 * written (a move's MIGRATE record is its first on the new machine). */
static void count_machine(struct stats *st, struct stats_process *p, const struct dpm_event *ev)
{
    uint32_t m = (ev->present & EV_MACHINE) ? ev->machine : p->last_machine;
    if (p->records == 1) {
        p->machine = p->last_machine = m;
        p->row = machine_row(st, m);
        if (!st->placed)
            add_place(st, p->pid, FIRST_PLACE, 0, 0, m);
    }
    if (p->cpu_seen && (ev->present & EV_PROCTIME) && ev->proctime > p->last_proctime)
        st->machines[p->row].cpu += ev->proctime - p->last_proctime;
    if (ev->type == MT_MIGRATE) {
        st->moves = array_grow(st->moves, &st->moves_capacity, st->nmoves, sizeof *st->moves);
        st->moves[st->nmoves] = dpm_move_of(ev, p->last_machine);
        m = st->moves[st->nmoves++].to;
        st->machines[p->row].moves_out++;
        st->machines[machine_row(st, m)].moves_in++;
        p->moves++;
    }
    if (p->records == 1 || m != p->last_machine) {
        p->row = machine_row(st, m);
        p->last_machine = m;
        if (!table_find(&st->seen_on, m, p->pid)) {
            st->machines[p->row].processes++;
            table_insert(&st->seen_on, m, p->pid, 0);
        }
        st->displaced |= m != DPM_PID_MACHINE(p->pid);
    }
    st->machines[p->row].records++;
}

/* The header's part: the process's lifetime, CPU time and name. Its
 * clock goes on across a move by the time the move took (models/stats.h). */
static void count_header(struct stats_process *p, const struct dpm_event *ev)
{
    if (ev->type == MT_MIGRATE && p->timed && (ev->present & EV_TIME))
        p->shift = (int64_t)(p->last_time + ((ev->present & EV_CODE) ? ev->code : 0)) - (int64_t)ev->time;
    if (ev->present & EV_TIME) {
        uint64_t time = (uint64_t)((int64_t)ev->time + p->shift);
        if (!p->timed)
            p->first_time = p->queue_time = time;
        p->last_time = time;
        p->timed = 1;
    }
    if (ev->present & EV_PROCTIME) {
        if (!p->cpu_seen) {
            p->first_proctime = ev->proctime;
            p->created_first = ev->type == MT_CREATEPROCESS;
        }
        p->last_proctime = ev->proctime;
        p->cpu_seen = 1;
    }
    if (ev->type == MT_CREATEPROCESS && (ev->present & EV_NAME))
        memcpy(p->name, ev->name, sizeof p->name);
}

void stats_add(struct stats *st, const struct dpm_event *ev)
{
    st->records++;
    if (!(ev->present & EV_PID))
        return;
    struct stats_process *p = writer_of(st, ev->pid);
    p->traced = 1;
    p->records++;
    uint64_t gap = dpm_sequence_gap(&p->sequence, ev);
    p->gaps += gap;
    st->gaps += gap;
    count_machine(st, p, ev);
    count_header(p, ev);
    uint64_t time = p->last_time;        /* its clock: this record's TIME, or the last one's */
    switch (ev->type) {
    case MT_SEND:
        count_send(st, p, ev);
        p = writer_of(st, ev->pid);
        break;
    case MT_MESSAGEQUEUED:
        queue_step(p, +1, time);
        learn_place(st, p, ev, p->last_machine);
        if (ev->present & EV_MESSAGE_ID)
            remember_queued(st, p->pid, ev->message_id, time, p->order);
        break;
    case MT_RECEIVECALL:
        p->calling = !ev->flag;               /* an ARECEIVE that found nothing waits for nothing */
        p->call_time = time;
        p->call_order = p->order;
        break;
    case MT_RECEIVE:
        count_receive(st, p, ev, time);
        break;
    /* TODO(lab event, part 3): PREEMPT, counted in the process's row
     * (models/stats.h, struct stats_process; docs/labs/event.md). */
    default:
        break;
    }
    p->order++;
}

int stats_read_again(struct stats *st)
{
    if (!st->displaced || st->placed)
        return 0;
    struct stats_place *places = st->places;
    size_t nplaces = st->nplaces, capacity = st->places_capacity;
    struct table index = st->place_index;
    st->places = 0;
    st->place_index = (struct table){ 0 };
    stats_free(st);
    stats_init(st);
    st->places = places;
    st->nplaces = nplaces;
    st->places_capacity = capacity;
    st->place_index = index;
    st->placed = 1;
    return 1;
}

/* Every record of the logs, once, into st. */
static int read_once(struct stats *st, char *const *paths, int n, struct dpm_error *e)
{
    for (int i = 0; i < n; i++) {
        struct dpm_stream *s = dpm_stream_open(paths[i], (uint16_t)i, e);
        if (!s)
            return -1;
        dpm_stream_events_only(s);
        struct dpm_event ev;
        int status;
        while ((status = dpm_stream_next(s, &ev, e)) == 1)
            stats_add(st, &ev);
        st->lost += dpm_stream_lost(s);
        dpm_stream_close(s);
        if (status < 0)
            return -1;
    }
    return 0;
}

int stats_read_logs(struct stats *st, char *const *paths, int n, struct dpm_error *e)
{
    if (read_once(st, paths, n, e) < 0 || (stats_read_again(st) && read_once(st, paths, n, e) < 0))
        return -1;
    stats_finish(st);
    return 0;
}

/* ---- the results ---- */

static int process_by_pid(const void *a, const void *b)
{
    uint64_t x = ((const struct stats_process *)a)->pid, y = ((const struct stats_process *)b)->pid;
    return x < y ? -1 : x > y;
}

static int pair_by_pids(const void *a, const void *b)
{
    const struct stats_pair *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

static int machine_by_number(const void *a, const void *b)
{
    uint32_t x = ((const struct stats_machine *)a)->machine, y = ((const struct stats_machine *)b)->machine;
    return x < y ? -1 : x > y;
}

void stats_finish(struct stats *st)
{
    for (size_t i = 0; i < st->nprocesses; i++) {
        struct stats_process *p = &st->processes[i];
        const char *name = p->name[0] ? 0 : dpm_window_name_of(p->pid);
        p->queue_area += (double)p->queue * (double)(p->last_time - p->queue_time);
        if (name)
            memcpy(p->name, name, sizeof p->name);
    }
    if (st->nprocesses)
        qsort(st->processes, st->nprocesses, sizeof *st->processes, process_by_pid);
    if (st->npairs)
        qsort(st->pairs, st->npairs, sizeof *st->pairs, pair_by_pids);
    if (st->nmachines)
        qsort(st->machines, st->nmachines, sizeof *st->machines, machine_by_number);
    table_free(&st->process_index);              /* the indices, again after sorting */
    for (size_t i = 0; i < st->nprocesses; i++)
        table_insert(&st->process_index, st->processes[i].pid, 0, (uint32_t)i);
    table_free(&st->pair_index);
    for (size_t i = 0; i < st->npairs; i++)
        table_insert(&st->pair_index, st->pairs[i].from, st->pairs[i].to, (uint32_t)i);
    table_free(&st->machine_index);              /* the rows moved; they are read in order from now on */
    table_free(&st->seen_on);
    st->finished = 1;
}

void stats_free(struct stats *st)
{
    free(st->processes);
    free(st->pairs);
    free(st->queued);
    free(st->moves);
    free(st->machines);
    free(st->places);
    table_free(&st->process_index);
    table_free(&st->pair_index);
    table_free(&st->queued_index);
    table_free(&st->machine_index);
    table_free(&st->seen_on);
    table_free(&st->place_index);
    memset(st, 0, sizeof *st);
}

uint64_t stats_cpu(const struct stats_process *p)
{
    return p->cpu_seen ? p->last_proctime - p->first_proctime : 0;
}

uint64_t stats_lifetime(const struct stats_process *p)
{
    return p->timed ? p->last_time - p->first_time : 0;
}

double stats_rate(const struct stats_process *p)
{
    uint64_t life = stats_lifetime(p);
    return life ? (double)(p->sent + p->received) * 1e9 / (double)life : 0;
}

double stats_queue_mean(const struct stats_process *p)
{
    uint64_t life = stats_lifetime(p);
    return life ? p->queue_area / (double)life : 0;
}

uint64_t stats_total_cpu(const struct stats *st)
{
    uint64_t total = 0;
    for (size_t i = 0; i < st->nprocesses; i++)
        total += st->processes[i].traced ? stats_cpu(&st->processes[i]) : 0;
    return total;
}

static const struct stats *sorting;       /* stats_by_machine's, for its comparison */

static int by_first_machine(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint32_t mx = sorting->processes[x].machine, my = sorting->processes[y].machine;
    if (mx != my)
        return mx < my ? -1 : 1;
    return x < y ? -1 : x > y;
}

void stats_by_machine(const struct stats *st, size_t *order)
{
    for (size_t i = 0; i < st->nprocesses; i++)
        order[i] = i;
    sorting = st;
    if (st->nprocesses)
        qsort(order, st->nprocesses, sizeof *order, by_first_machine);
    sorting = 0;
}

const char *stats_machines(const struct stats *st, const struct stats_process *p, char *out, size_t cap)
{
    return dpm_machines_text(p->machine, st->moves, st->nmoves, p->pid, out, cap);
}

const char *stats_label(const struct stats *st, uint64_t pid, char *out, size_t cap)
{
    uint32_t *index = table_find(&st->process_index, pid, 0);
    return dpm_label(index ? st->processes[*index].name : "", pid, out, cap);
}
