/*
 * analysis/models/outside.c — the time of the critical path spent outside
 * the trace, by the untraced process asked, and the advice the reports give
 * when it is most of t_max (models/outside.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "models/outside.h"

/* Most time first; equal times by pid. */
static int by_time(const void *a, const void *b)
{
    const struct outside_time *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Walk the path back from its end, as models/critpath.c does, summing the
 * outside arcs by the process each request went to (its SEND's toTask). */
int outside_share_of(struct outside_share *s, const struct history *h, const struct history_weights *w,
                     const struct history_paths *p)
{
    struct table index = { 0 };
    struct outside_time *by = 0;
    size_t n = 0, capacity = 0;
    uint32_t v = p->end;
    memset(s, 0, sizeof *s);
    s->t_max = p->t_max;
    while (h->nnodes && (p->via_cross[v] || h->kind[v] != HN_START)) {
        if (!p->via_cross[v]) {
            v--;
            continue;
        }
        if (h->cross_kind[v] == HX_OUTSIDE) {
            uint64_t pid = h->trace->events[h->event[h->cross_from[v]]].other;
            uint32_t *i = table_find(&index, pid, 0);
            if (!i) {
                by = array_grow(by, &capacity, n, sizeof *by);
                by[n] = (struct outside_time){ pid, 0, 0 };
                table_insert(&index, pid, 0, (uint32_t)n);
                i = table_find(&index, pid, 0);
                n++;
            }
            by[*i].ns += w->cross[v];
            by[*i].requests++;
            s->ns += w->cross[v];
            s->requests++;
        }
        v = h->cross_from[v];
    }
    if (n) {
        qsort(by, n, sizeof *by, by_time);
        memcpy(s->named, by, (n < OUTSIDE_NAMED ? n : OUTSIDE_NAMED) * sizeof *by);
    }
    s->nprocesses = (uint32_t)n;
    free(by);
    table_free(&index);
    return 0;
}

double outside_percent(const struct outside_share *s)
{
    return s->t_max ? 100.0 * (double)s->ns / (double)s->t_max : 0;
}

/* A requestor and its messages, for sorting. */
struct requestor {
    uint64_t pid;
    uint32_t messages;
};

static int by_messages(const void *a, const void *b)
{
    const struct requestor *x = a, *y = b;
    if (x->messages != y->messages)
        return x->messages > y->messages ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The untraced senders of RECEIVEs that answer no request outside, but
 * for those the trace asks something itself (models/outside.h). */
uint32_t outside_requestors(const struct history *h, uint64_t *out, uint32_t cap)
{
    struct table index = { 0 }, asked = { 0 };
    struct requestor *by = 0;
    size_t n = 0, capacity = 0;
    for (uint32_t v = 0; v < h->nnodes; v++)
        if (h->cross_kind[v] == HX_OUTSIDE) {
            uint64_t pid = h->trace->events[h->event[h->cross_from[v]]].other;
            if (!table_find(&asked, pid, 0))
                table_insert(&asked, pid, 0, 1);
        }
    for (uint32_t v = 0; v < h->nnodes; v++) {
        const struct dpm_event *ev = &h->trace->events[h->event[v]];
        if (h->kind[v] != HN_RECEIVE || h->cross_from[v] != HISTORY_NONE || !(ev->present & EV_OTHER) ||
            DPM_PID_SLOT(ev->other) == 0 || table_find(&asked, ev->other, 0) ||
            history_process_index(h->trace, ev->other) != HISTORY_NONE)
            continue;
        uint32_t *i = table_find(&index, ev->other, 0);
        if (!i) {
            by = array_grow(by, &capacity, n, sizeof *by);
            by[n] = (struct requestor){ ev->other, 0 };
            table_insert(&index, ev->other, 0, (uint32_t)n);
            i = table_find(&index, ev->other, 0);
            n++;
        }
        by[*i].messages++;
    }
    if (n)
        qsort(by, n, sizeof *by, by_messages);
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = by[i].pid;
    free(by);
    table_free(&index);
    table_free(&asked);
    return (uint32_t)n;
}

/* Append printf-style text to out[0..cap) (cut at its end). */
static void append(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *out, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(out);
    va_list ap;
    if (used + 1 >= cap)
        return;
    va_start(ap, fmt);
    vsnprintf(out + used, cap - used, fmt, ap);
    va_end(ap);
}

/* The advice (models/outside.h): what the share is, what to meter, which
 * window to take, and P without those requests. */
void outside_advice(char *out, size_t cap, const struct outside_share *s, const char *step, double p, double p_plain,
                    const struct history *h, const char *window)
{
    char label[64];
    uint64_t users[OUTSIDE_NAMED];
    uint32_t named = 0, kernels = 0;
    out[0] = 0;
    if (outside_percent(s) <= OUTSIDE_WARN_PERCENT)
        return;
    while (named < s->nprocesses && named < OUTSIDE_NAMED &&
           (named == 0 || 100.0 * (double)s->named[named].ns >= OUTSIDE_NAMED_PERCENT * (double)s->t_max))
        named++;
    append(out, cap, "%.1f%% of t_max (%s) is time spent waiting for requests outside the trace, to", outside_percent(s),
           step);
    for (uint32_t i = 0; i < named; i++) {
        kernels += DPM_PID_SLOT(s->named[i].pid) == 0;
        append(out, cap, "%s %s (%.1f%%)", i ? "," : "", dpm_label("", s->named[i].pid, label, sizeof label),
               100.0 * (double)s->named[i].ns / (double)s->t_max);
    }
    if (s->nprocesses > named)
        append(out, cap, " and %" PRIu32 " other%s", s->nprocesses - named, s->nprocesses - named == 1 ? "" : "s");
    append(out, cap, ": P = %.3f measures those waits more than the traced processes' parallelism.", p);
    if (kernels < named) {
        append(out, cap, " Meter");
        for (uint32_t i = 0, first = 1; i < named; i++)
            if (DPM_PID_SLOT(s->named[i].pid) != 0) {
                append(out, cap, "%s %s", first ? "" : ",", dpm_label("", s->named[i].pid, label, sizeof label));
                first = 0;
            }
        append(out, cap, " too, to see inside those requests.");
    }
    if (kernels)
        append(out, cap, " A kernel is not metered: its time is its devices' (a disk, the network).");
    uint32_t n = window ? 0 : outside_requestors(h, users, OUTSIDE_NAMED);
    if (window)
        append(out, cap, " In the window taken (%s) they are the workload's own waits, unless a narrower window "
               "leaves them out.", window);
    else if (n) {
        append(out, cap, " To leave out what came before the workload, analyze its window: --window-of");
        for (uint32_t i = 0; i < n && i < OUTSIDE_NAMED; i++)
            append(out, cap, "%s%s", i ? "," : " ", dpm_label("", users[i], label, sizeof label));
        append(out, cap, " (the untraced processes whose requests the trace serves), or --window FROM:TO.");
    } else {
        append(out, cap, " To leave out what came before the workload, analyze its window: --window-of a process of "
               "the workload, or --window FROM:TO.");
    }
    append(out, cap, " The plain history graph (thesis Fig. 5.3A), which leaves that time out, gives P = %.3f: the "
           "traced processes' parallelism were every request outside answered at once.", p_plain);
}
