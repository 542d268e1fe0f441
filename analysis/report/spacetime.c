/*
 * analysis/report/spacetime.c — the report's sections on clocks
 * (models/clocks.h): each machine's offset against the reference machine
 * with its interval and bound, the messages that seem to arrive before
 * they were sent, before and after the correction; and a space-time
 * diagram drawn as SVG here: a line per process, grouped by machine (a
 * process that moved on each machine it was on, an arrow for each move),
 * and an arrow per message, on the corrected clock and in the order in
 * which no arrow runs backward (clocks_display_times).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/sections.h"

#define DIAGRAM_MESSAGES 200       /* arrows drawn at most: the first by their SEND */
#define DIAGRAM_WIDTH 860.0        /* px for the window's time */
#define DIAGRAM_LEFT 200.0         /* px for the processes' names */
#define DIAGRAM_ROW 26.0
#define DIAGRAM_MACHINE_GAP 14.0   /* px between two machines' groups */
#define DIAGRAM_TOP 24.0

/* A signed number of ns as text, or "unbounded". */
static const char *signed_ns(int64_t ns, char *out, size_t cap)
{
    if (ns == CLOCKS_UNBOUNDED || ns == -CLOCKS_UNBOUNDED)
        snprintf(out, cap, "%s", ns > 0 ? "+inf" : "-inf");
    else
        snprintf(out, cap, "%+" PRId64, ns);
    return out;
}

/* ---- the offsets ---- */

int report_clocks(FILE *f, const struct report_input *r)
{
    const struct clock_model *c = &r->clocks.clocks;
    char low[32], high[32], offset[32];
    fprintf(f, "<section id=\"clocks\">\n<h2>Clocks</h2>\n<p>Each machine's clock against machine %" PRIu32
            "'s, from the %" PRIu64 " messages between machines (dpm clocks): a constant offset per machine, a "
            "message taking at least %" PRIu64 " ns. Every offset in a machine's interval is allowed by the "
            "messages and none outside it; the estimate is within the bound of the true offset. ",
            c->nmachines ? c->machine[c->reference].machine : 0, c->remote, c->min_delay);
    if (c->slack)
        fprintf(f, "No constant offsets satisfy every message (the clocks drift, or the least delay is too large): "
                "by these, a message may arrive up to %" PRIu64 " ns sooner than the least delay allows (the "
                "slack), and their intervals are no guarantee.</p>\n", c->slack);
    else
        fputs("Constant offsets satisfy every message.</p>\n", f);
    fputs("<table id=\"offsets\">\n<tr><th>machine</th><th>offset (ns)</th><th>low (ns)</th><th>high (ns)</th>"
          "<th>bound (ns)</th><th>sent</th><th>received</th></tr>\n", f);
    for (uint32_t m = 0; m < c->nmachines; m++) {
        const struct clock_machine *cm = &c->machine[m];
        int reference = m == c->reference;
        fprintf(f, "<tr><td>%" PRIu32 "%s</td><td>%s</td><td>%s</td><td>%s</td>", cm->machine,
                reference ? " (reference)" : "", reference ? "0" : signed_ns(cm->offset, offset, sizeof offset),
                reference ? "0" : signed_ns(cm->low, low, sizeof low),
                reference ? "0" : signed_ns(cm->high, high, sizeof high));
        if (reference || cm->bound != CLOCKS_UNBOUNDED)
            fprintf(f, "<td>%" PRId64 "</td>", reference ? 0 : cm->bound);
        else
            fputs("<td>unbounded</td>", f);
        fprintf(f, "<td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n", cm->sent, cm->received);
    }
    fprintf(f, "</table>\n<table id=\"backward\">\n<tr><th>messages</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>between machines, timed</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>backward by the machines' own clocks</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>backward within one machine</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>backward once corrected</th><td>%" PRIu64 "</td></tr>\n</table>\n</section>\n",
            c->messages, c->remote, c->backward_before, c->backward_local, c->backward_after);
    return EXIT_OK;
}

/* ---- the space-time diagram ---- */

/* A row per process and machine it was on (a process that moved has one
 * on each machine), at lane[p * nmachines + m] (0: none). */
struct lanes {
    double *y;
    uint32_t nmachines;
};

/* Node v's row. */
static double lane_of(const struct report_input *r, const struct lanes *l, uint32_t v)
{
    const struct history *h = &r->graph.history;
    uint32_t m = clocks_machine_index(&r->clocks.clocks, h->machine[v]);
    return m == UINT32_MAX ? 0 : l->y[(size_t)h->process[v] * l->nmachines + m];
}

/* The rows: grouped by machine (in the order of the clock model's
 * machines), each group's processes in pid order, on a pale band of its
 * own with the machine's number and offset. The diagram's height. */
static double layout_rows(FILE *f, const struct report_input *r, struct lanes *l)
{
    const struct history *h = &r->graph.history;
    const struct clock_model *c = &r->clocks.clocks;
    double at = DIAGRAM_TOP;
    char name[64], offset[32];
    for (uint32_t v = 0; v < h->nnodes; v++) {
        uint32_t m = clocks_machine_index(c, h->machine[v]);
        if (m != UINT32_MAX)
            l->y[(size_t)h->process[v] * l->nmachines + m] = 1;   /* it was there */
    }
    for (uint32_t m = 0; m < c->nmachines; m++) {
        int any = 0;
        double top = at;
        at += DIAGRAM_MACHINE_GAP;
        for (uint32_t p = 0; p < h->nprocesses; p++) {
            double *y = &l->y[(size_t)p * l->nmachines + m];
            if (*y == 0)
                continue;
            *y = at + DIAGRAM_ROW / 2;
            at += DIAGRAM_ROW;
            any = 1;
        }
        if (!any) {
            at = top;
            continue;
        }
        if (f) {
            snprintf(name, sizeof name, "machine %" PRIu32 " %s", c->machine[m].machine,
                     m == c->reference ? "(reference)" : signed_ns(c->machine[m].offset, offset, sizeof offset));
            svg_rect(f, 4, top, DIAGRAM_LEFT + DIAGRAM_WIDTH + 22, at - top, m % 2 ? "#f3f5f8" : "#eaf0f7", 0);
            fputs("<g class=\"machine\">", f);
            svg_text(f, 8, top + 11, "start", name);
            fputs("</g>\n", f);
        }
        at += DIAGRAM_MACHINE_GAP / 2;
    }
    return at + 24;
}

/* A message arc into v, by the display time of its SEND. */
struct arrow {
    int64_t sent;
    uint32_t receive;
};

static int by_sent(const void *x, const void *y)
{
    const struct arrow *a = x, *b = y;
    if (a->sent != b->sent)
        return a->sent < b->sent ? -1 : 1;
    return a->receive < b->receive ? -1 : a->receive > b->receive;
}

/* The window: from the first node on, to the last RECEIVE of the first
 * DIAGRAM_MESSAGES messages (all of it when there are no more). The
 * arrows to draw into *arrows (the caller frees it), their count. */
static uint32_t choose_window(const struct history *h, const int64_t *at, int64_t *begin, int64_t *end,
                              struct arrow **arrows, uint64_t *messages)
{
    uint32_t n = 0;
    *arrows = malloc((size_t)h->message_arcs * sizeof **arrows + 1);
    *begin = INT64_MAX;
    *end = INT64_MIN;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        *begin = at[v] < *begin ? at[v] : *begin;
        if (h->cross_kind[v] == HX_MESSAGE && *arrows)
            (*arrows)[n++] = (struct arrow){ at[h->cross_from[v]], v };
    }
    *messages = n;
    if (!*arrows)
        return 0;
    qsort(*arrows, n, sizeof **arrows, by_sent);
    n = n > DIAGRAM_MESSAGES ? DIAGRAM_MESSAGES : n;
    if ((uint64_t)n == *messages)
        for (uint32_t v = 0; v < h->nnodes; v++)
            *end = at[v] > *end ? at[v] : *end;
    for (uint32_t i = 0; i < n; i++)
        *end = at[(*arrows)[i].receive] > *end ? at[(*arrows)[i].receive] : *end;
    if (*end < *begin)
        *end = *begin;
    return n;
}

/* Each process's lines, one for each stay on a machine, from its first
 * to its last node there in the window, with its name on each of its rows. */
static void draw_processes(FILE *f, const struct report_input *r, const int64_t *at, const struct lanes *l,
                           int64_t begin, int64_t end, double scale)
{
    const struct history *h = &r->graph.history;
    char label[96];
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        dpm_process_label(&r->graph.trace, r->graph.trace.processes[p].pid, label, sizeof label);
        for (uint32_t m = 0; m < l->nmachines; m++) {
            double y = l->y[(size_t)p * l->nmachines + m];
            if (y != 0)
                svg_text(f, DIAGRAM_LEFT - 8, y + 4, "end", label);
        }
        for (uint32_t first = h->first_node[p], last; first < h->first_node[p + 1] && at[first] <= end;
             first = last + 1) {
            double y = lane_of(r, l, first);
            for (last = first; last + 1 < h->first_node[p + 1] && lane_of(r, l, last + 1) == y;)
                last++;
            int64_t to = at[last] < end ? at[last] : end;
            fprintf(f, "<line class=\"process\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9aa\" "
                    "stroke-width=\"2\"/>\n", DIAGRAM_LEFT + (double)(at[first] - begin) * scale, y,
                    DIAGRAM_LEFT + (double)(to - begin) * scale, y);
        }
    }
}

/* The arrows, each with a title saying its ends and times. */
static void draw_arrows(FILE *f, const struct report_input *r, const int64_t *at, const struct lanes *l,
                        const struct arrow *arrows, uint32_t n, int64_t begin, double scale)
{
    const struct history *h = &r->graph.history;
    char from[96], to[96], took[32], title[320];
    svg_arrow_marker(f, "message-head", "#335");
    svg_arrow_marker(f, "remote-head", "#c03030");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = arrows[i].receive, u = h->cross_from[v];
        const struct dpm_event *sent = &r->graph.trace.events[h->event[u]];
        const struct dpm_event *got = &r->graph.trace.events[h->event[v]];
        int remote = clocks_machine_of(h, h->process[u], sent) != clocks_machine_of(h, h->process[v], got);
        dpm_process_label(&r->graph.trace, r->graph.trace.processes[h->process[u]].pid, from, sizeof from);
        dpm_process_label(&r->graph.trace, r->graph.trace.processes[h->process[v]].pid, to, sizeof to);
        snprintf(title, sizeof title, "%s -> %s: %" PRIu64 " bytes, sent at %" PRId64 ", received at %" PRId64
                 " (corrected ns), %s", from, to, h->message_size[v], at[u], at[v],
                 html_ns((uint64_t)(at[v] - at[u]), took, sizeof took));
        fprintf(f, "<line class=\"message%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"1\" marker-end=\"url(#%s)\"><title>", remote ? " remote" : "",
                DIAGRAM_LEFT + (double)(at[u] - begin) * scale, lane_of(r, l, u),
                DIAGRAM_LEFT + (double)(at[v] - begin) * scale, lane_of(r, l, v), remote ? "#c03030" : "#335",
                remote ? "remote-head" : "message-head");
        html_text(f, title);
        fputs("</title></line>\n", f);
    }
}

/* A dashed arrow for each move of a process in the window, from its last
 * node on the machine it left to its MIGRATE node on the one it reached. */
static void draw_moves(FILE *f, const struct report_input *r, const int64_t *at, const struct lanes *l,
                       int64_t begin, int64_t end, double scale)
{
    const struct history *h = &r->graph.history;
    char label[96], took[32], title[256];
    int marked = 0;
    for (uint32_t v = 0; v < h->nnodes; v++) {
        if (h->kind[v] != HN_MIGRATE || at[v] > end || lane_of(r, l, v - 1) == lane_of(r, l, v))
            continue;
        if (!marked++)
            svg_arrow_marker(f, "move-head", "#2a7a3a");
        struct dpm_move m = dpm_move_of(&r->graph.trace.events[h->event[v]],
                                        r->graph.trace.events[h->event[v - 1]].machine);
        dpm_process_label(&r->graph.trace, r->graph.trace.processes[h->process[v]].pid, label, sizeof label);
        snprintf(title, sizeof title, "%s moved from machine %" PRIu32 " to machine %" PRIu32 " (move %" PRIu32
                 "): out of execution %s", label, m.from, m.to, m.moves, html_ns(m.took, took, sizeof took));
        fprintf(f, "<line class=\"move\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#2a7a3a\" "
                "stroke-width=\"2\" stroke-dasharray=\"5,3\" marker-end=\"url(#move-head)\"><title>",
                DIAGRAM_LEFT + (double)(at[v - 1] - begin) * scale, lane_of(r, l, v - 1),
                DIAGRAM_LEFT + (double)(at[v] - begin) * scale, lane_of(r, l, v));
        html_text(f, title);
        fputs("</title></line>\n", f);
    }
}

/* The diagram's section. 0, or 1 (no memory). */
int report_spacetime(FILE *f, const struct report_input *r)
{
    const struct history *h = &r->graph.history;
    struct lanes l = { 0, r->clocks.clocks.nmachines };
    int64_t *at = malloc((size_t)h->nnodes * sizeof *at + 1), begin, end;
    l.y = calloc((size_t)h->nprocesses * l.nmachines + 1, sizeof *l.y);
    struct arrow *arrows = 0;
    uint64_t messages = 0;
    char span[32];
    if (!at || !l.y) {
        free(at);
        free(l.y);
        fputs("dpm report: no memory for the space-time diagram\n", stderr);
        return EXIT_BAD_INPUT;
    }
    uint64_t moved = clocks_display_times(&r->clocks.clocks, h, at);
    uint32_t n = choose_window(h, at, &begin, &end, &arrows, &messages);
    double height = layout_rows(0, r, &l), scale = DIAGRAM_WIDTH / (double)(end > begin ? end - begin : 1);
    fprintf(f, "<section id=\"spacetime\">\n<h2>Space-time diagram</h2>\n<p>A line per process, grouped by "
            "machine (a process that moved has a row on each machine it was on, and a dashed green arrow for each "
            "move); an arrow per message from its SEND to its RECEIVE (red: between machines), on the corrected "
            "clock of the section above, %" PRIu64 " events moved later so that no arrow runs backward. %" PRIu32
            " of the %" PRIu64 " messages are drawn (the first by their SEND), over %s from the first event.</p>\n",
            moved, n, messages, html_ns((uint64_t)(end - begin), span, sizeof span));
    svg_begin(f, (int)(DIAGRAM_LEFT + DIAGRAM_WIDTH + 30), (int)height, "space-time diagram on the corrected clocks");
    memset(l.y, 0, ((size_t)h->nprocesses * l.nmachines + 1) * sizeof *l.y);
    layout_rows(f, r, &l);
    draw_processes(f, r, at, &l, begin, end, scale);
    draw_moves(f, r, at, &l, begin, end, scale);
    draw_arrows(f, r, at, &l, arrows, n, begin, scale);
    svg_text(f, DIAGRAM_LEFT, height - 6, "start", "0");
    svg_text(f, DIAGRAM_LEFT + DIAGRAM_WIDTH, height - 6, "end", span);
    svg_end(f);
    fputs("</section>\n", f);
    free(at);
    free(l.y);
    free(arrows);
    return EXIT_OK;
}
