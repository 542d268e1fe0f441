/*
 * analysis/models/live_view.c — DPM's real-time displays of a live stream
 * (models/live_view.h): for each interval between two frames, the traffic
 * between processes, each process's send and receive rates per second of
 * guest time and its queue length now, the change of each rate since the
 * interval before (a phase change is marked), and a history line of one
 * figure over the frames.
 *
 * The counting is `dpm stats`'s own (models/stats.h: its accumulators, never
 * finished); an interval's figures are the differences of its cumulative
 * counts between two frames. Memory: stats' per-process and per-pair
 * tables and the messages in flight, a row of the figures before per
 * process and per pair, and the last LIVE_HISTORY values of the history
 * line: nothing grows with the stream's length.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/live_view.h"

#define PROCESSES_SHOWN 40
#define LABEL 28

/* The view before any log, with the options (models/live_view.h). */
int live_view_init(struct live_view *v, unsigned top, double threshold, const char *figure)
{
    memset(v, 0, sizeof *v);
    stats_init(&v->stats);
    v->top = top;
    v->threshold = threshold;
    if (strcmp(figure, "rate") == 0)
        v->figure = FIGURE_TOTAL_RATE;
    else if (strncmp(figure, "rate:", 5) == 0 && figure[5])
        v->figure = FIGURE_PROCESS_RATE;
    else if (strncmp(figure, "queue:", 6) == 0 && figure[6])
        v->figure = FIGURE_PROCESS_QUEUE;
    else
        return -1;
    v->figure_process = v->figure == FIGURE_TOTAL_RATE ? 0 : strchr(figure, ':') + 1;
    return 0;
}

/* Free what the view holds (its options stay). */
void live_view_free(struct live_view *v)
{
    stats_free(&v->stats);
    free(v->before);
    free(v->pair_before);
    v->before = 0;
    v->pair_before = 0;
}

/* A new log in the stream: everything starts over but the options. */
static void view_begin(void *context, const struct tracelog_header *header)
{
    struct live_view *v = context, fresh;
    memset(&fresh, 0, sizeof fresh);
    live_view_free(v);
    stats_init(&fresh.stats);
    fresh.top = v->top;
    fresh.threshold = v->threshold;
    fresh.figure = v->figure;
    fresh.figure_process = v->figure_process;
    fresh.frames = v->frames;
    fresh.header = *header;
    fresh.have_header = 1;
    *v = fresh;
}

/* A record: counted as `dpm stats` counts it; its machine's clock moves on. */
static void view_record(void *context, const struct dpm_event *ev)
{
    struct live_view *v = context;
    uint32_t m = (ev->present & EV_MACHINE) ? ev->machine % LIVE_MACHINES : DPM_PID_MACHINE(ev->pid);
    stats_add(&v->stats, ev);
    if (!(ev->present & EV_TIME))
        return;
    if (!v->machine_seen[m])
        v->frame_start[m] = v->now[m] = ev->time;
    v->machine_seen[m] = 1;
    v->now[m] = ev->time > v->now[m] ? ev->time : v->now[m];
}

/* The follower's sink into the view (models/live_view.h). */
struct live_sink live_view_sink(struct live_view *v)
{
    return (struct live_sink){ view_begin, view_record, v };
}

/* ---- one interval's figures ---- */

/* The array grown from `old` to `count` elements of `size` bytes, the new ones zero. */
static void *grow_zeroed(void *array, size_t old, size_t count, size_t size)
{
    uint8_t *bigger = realloc(array, count * size);
    if (!bigger) {
        fputs("dpm: out of memory\n", stderr);
        exit(1);
    }
    memset(bigger + old * size, 0, (count - old) * size);
    return bigger;
}

/* Room for the figures before of every process and pair seen so far (new ones zero). */
static void grow_before(struct live_view *v)
{
    if (v->stats.nprocesses > v->before_capacity) {
        v->before = grow_zeroed(v->before, v->before_capacity, v->stats.processes_capacity, sizeof *v->before);
        v->before_capacity = v->stats.processes_capacity;
    }
    if (2 * v->stats.npairs > v->pair_before_capacity) {
        v->pair_before = grow_zeroed(v->pair_before, v->pair_before_capacity, 2 * v->stats.pairs_capacity,
                                     sizeof *v->pair_before);
        v->pair_before_capacity = 2 * v->stats.pairs_capacity;
    }
}

/* Guest ns of machine m's clock in this interval. */
static uint64_t interval_ns(const struct live_view *v, uint32_t m)
{
    return v->now[m] - v->frame_start[m];
}

/* Messages in the interval per second of `ns`. */
static double per_second(uint64_t messages, uint64_t ns)
{
    return ns ? (double)messages * 1e9 / (double)ns : 0;
}

/* Process i's send or receive rate in this interval. */
static double rate_now(const struct live_view *v, size_t i, int receive)
{
    const struct stats_process *p = &v->stats.processes[i];
    uint64_t done = receive ? p->received - v->before[i].received : p->sent - v->before[i].sent;
    return per_second(done, interval_ns(v, DPM_PID_MACHINE(p->pid)));
}

/* Whether a rate moved from `before` to `now` by more than the threshold. */
static int phase_change(const struct live_view *v, double before, double now)
{
    if (v->frames == 0)
        return 0;                        /* no interval before the first */
    if (before == 0)
        return now > 0;
    return fabs(now - before) * 100 / before > v->threshold;
}

/* Whether process i is the one --figure names (its program name or pid). */
static int is_figure_process(const struct live_view *v, size_t i)
{
    char id[24];
    const struct stats_process *p = &v->stats.processes[i];
    return strcmp(p->name, v->figure_process) == 0 || strcmp(dpm_pid_string(p->pid, id), v->figure_process) == 0;
}

/* The history line's figure now. */
static double figure_now(const struct live_view *v)
{
    double value = 0;
    for (size_t i = 0; i < v->stats.nprocesses; i++) {
        if (v->figure == FIGURE_TOTAL_RATE)
            value += rate_now(v, i, 0);
        else if (is_figure_process(v, i))
            value += v->figure == FIGURE_PROCESS_RATE ? rate_now(v, i, 0) + rate_now(v, i, 1)
                                                      : (double)v->stats.processes[i].queue;
    }
    return value;
}

/* ---- drawing ---- */

/* The stream's line and the interval's length on each machine. */
static void draw_heading(const struct live_view *v, const struct live_follower *f, FILE *out)
{
    char filter[33], when[32];
    int shown = 0;
    memcpy(filter, v->header.filter, 32);
    filter[32] = 0;
    fprintf(out, "dpm live: %s, frame %" PRIu32 ": log %" PRIu32 " by filter %s on machine %" PRIu32 "; %" PRIu64
            " records (+%" PRIu64 "), %" PRIu64 " lost, %" PRIu64 " missing in sequence gaps, %" PRIu64
            " stream blocks missing\n", f->path, v->frames + 1, f->logs, filter, v->header.machine, v->stats.records,
            v->stats.records - v->records_before, f->lost, v->stats.gaps, f->blocks_missing);
    fputs("interval (guest time):", out);
    for (uint32_t m = 0; m < LIVE_MACHINES; m++) {
        if (!v->machine_seen[m])
            continue;
        uint64_t ns = interval_ns(v, m);
        if (ns < 1000)
            snprintf(when, sizeof when, "%" PRIu64 " ns", ns);
        else if (ns < 1000000)
            snprintf(when, sizeof when, "%.1f us", (double)ns / 1e3);
        else
            snprintf(when, sizeof when, "%.3f ms", (double)ns / 1e6);
        fprintf(out, "%s machine %" PRIu32 " %s", shown++ ? "," : "", m, when);
    }
    fputc('\n', out);
}

/* Pairs by their messages in the interval, most first (then bytes, then pids). */
static const struct live_view *sorting;
/* qsort order of pair indices (into `sorting`, the view being drawn): by
 * the interval's messages, most first, then bytes, then pids. */
static int by_interval_traffic(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct stats_pair *x = &sorting->stats.pairs[i], *y = &sorting->stats.pairs[j];
    uint64_t mx = x->messages - sorting->pair_before[2 * i], my = y->messages - sorting->pair_before[2 * j];
    uint64_t bx = x->bytes - sorting->pair_before[2 * i + 1], by = y->bytes - sorting->pair_before[2 * j + 1];
    if (mx != my)
        return mx > my ? -1 : 1;
    if (bx != by)
        return bx > by ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

/* The traffic matrix of the interval, as its busiest pairs. */
static void draw_traffic(const struct live_view *v, FILE *out)
{
    size_t *busy = malloc((v->stats.npairs + 1) * sizeof *busy), n = 0;
    char from[64], to[64];
    if (!busy) {
        fputs("dpm: out of memory\n", stderr);
        exit(1);
    }
    for (size_t i = 0; i < v->stats.npairs; i++)
        if (v->stats.pairs[i].messages > v->pair_before[2 * i])
            busy[n++] = i;
    sorting = v;
    qsort(busy, n, sizeof *busy, by_interval_traffic);
    fprintf(out, "traffic in the interval: %zu pairs talked; the top %u by messages\n", n, v->top);
    fprintf(out, "  %-*s %-*s %10s %10s\n", LABEL, "from", LABEL, "to", "messages", "bytes");
    for (size_t k = 0; k < n && k < v->top; k++) {
        const struct stats_pair *c = &v->stats.pairs[busy[k]];
        fprintf(out, "  %-*s %-*s %10" PRIu64 " %10" PRIu64 "\n", LABEL,
                stats_label(&v->stats, c->from, from, sizeof from), LABEL, stats_label(&v->stats, c->to, to, sizeof to),
                c->messages - v->pair_before[2 * busy[k]], c->bytes - v->pair_before[2 * busy[k] + 1]);
    }
    free(busy);
}

/* Processes by pid. */
static int by_pid(const void *a, const void *b)
{
    uint64_t x = sorting->stats.processes[*(const size_t *)a].pid, y = sorting->stats.processes[*(const size_t *)b].pid;
    return x < y ? -1 : x > y;
}

/* One process's row: its rates, queue, the changes and their marks. */
static void draw_process(const struct live_view *v, size_t i, FILE *out)
{
    const struct stats_process *p = &v->stats.processes[i];
    char label[64];
    double send = rate_now(v, i, 0), receive = rate_now(v, i, 1);
    fprintf(out, "  %-*s %12.1f %12.1f %6" PRId64 " %+14.1f %c %+14.1f %c\n", LABEL,
            dpm_label(p->name, p->pid, label, sizeof label), send, receive, p->queue, send - v->before[i].send_rate,
            phase_change(v, v->before[i].send_rate, send) ? '*' : ' ', receive - v->before[i].receive_rate,
            phase_change(v, v->before[i].receive_rate, receive) ? '*' : ' ');
}

/* Every process's row, in pid order (PROCESSES_SHOWN at most). */
static void draw_processes(const struct live_view *v, FILE *out)
{
    size_t *order = malloc((v->stats.nprocesses + 1) * sizeof *order);
    if (!order) {
        fputs("dpm: out of memory\n", stderr);
        exit(1);
    }
    for (size_t i = 0; i < v->stats.nprocesses; i++)
        order[i] = i;
    sorting = v;
    qsort(order, v->stats.nprocesses, sizeof *order, by_pid);
    fprintf(out, "processes: rates per second of guest time on the process's machine, queue length now, change "
            "since the interval before (*: by more than %.0f%%, a phase change)\n", v->threshold);
    fprintf(out, "  %-*s %12s %12s %6s %16s %16s\n", LABEL, "process", "send/s", "receive/s", "queue", "send/s change",
            "receive/s change");
    for (size_t k = 0; k < v->stats.nprocesses && k < PROCESSES_SHOWN; k++)
        draw_process(v, order[k], out);
    if (v->stats.nprocesses > PROCESSES_SHOWN)
        fprintf(out, "  ... %zu more processes\n", v->stats.nprocesses - PROCESSES_SHOWN);
    free(order);
}

/* The history line: a sparkline of the figure over the frames so far. */
static void draw_history(const struct live_view *v, FILE *out)
{
    static const char *const level[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
    double most = 0;
    unsigned first = (v->history_next + LIVE_HISTORY - v->nhistory) % LIVE_HISTORY;
    for (unsigned k = 0; k < v->nhistory; k++)
        most = fmax(most, v->history[(first + k) % LIVE_HISTORY]);
    if (v->figure == FIGURE_TOTAL_RATE)
        fprintf(out, "history of the total message rate (sends/s), %u frames: ", v->nhistory);
    else
        fprintf(out, "history of %s's %s, %u frames: ", v->figure_process,
                v->figure == FIGURE_PROCESS_RATE ? "rate (sends and receives/s)" : "queue length", v->nhistory);
    for (unsigned k = 0; k < v->nhistory; k++) {
        double value = v->history[(first + k) % LIVE_HISTORY];
        fputs(level[most > 0 ? (int)(value / most * 7 + 0.5) : 0], out);
    }
    fprintf(out, "  now %.1f, max %.1f\n", v->nhistory ? v->history[(v->history_next + LIVE_HISTORY - 1) %
            LIVE_HISTORY] : 0.0, most);
}

/* The interval is drawn: its figures become the figures before. */
static void next_interval(struct live_view *v)
{
    for (size_t i = 0; i < v->stats.nprocesses; i++) {
        const struct stats_process *p = &v->stats.processes[i];
        v->before[i] = (struct live_before){ p->sent, p->received, rate_now(v, i, 0), rate_now(v, i, 1) };
    }
    for (size_t i = 0; i < v->stats.npairs; i++) {
        v->pair_before[2 * i] = v->stats.pairs[i].messages;
        v->pair_before[2 * i + 1] = v->stats.pairs[i].bytes;
    }
    memcpy(v->frame_start, v->now, sizeof v->now);
    v->records_before = v->stats.records;
    v->frames++;
}

/* A frame: the figure of the history line, the drawing, then the next
 * interval (models/live_view.h). */
void live_view_frame(struct live_view *v, const struct live_follower *f, FILE *out)
{
    if (!v->have_header) {
        fprintf(out, "dpm live: %s, frame %" PRIu32 ": waiting for a log (no log header in the stream yet)\n",
                f->path, ++v->frames);
        return;
    }
    grow_before(v);
    v->history[v->history_next] = figure_now(v);
    v->history_next = (v->history_next + 1) % LIVE_HISTORY;
    v->nhistory += v->nhistory < LIVE_HISTORY;
    draw_heading(v, f, out);
    draw_traffic(v, out);
    draw_processes(v, out);
    draw_history(v, out);
    next_interval(v);
}
