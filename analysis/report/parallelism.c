/*
 * analysis/report/parallelism.c — the report's sections on the history
 * graph: DPM's parallelism in its steps (thesis §5.2.3), and the critical
 * path as tables and on a timeline (SVG drawn here). The figures come from
 * models/parallel.h and models/critpath.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "load/window.h"
#include "models/critpath.h"
#include "report/html.h"
#include "report/sections.h"

#define TIMELINE_ROWS 48          /* processes drawn on the critical path's timeline */
#define TIMELINE_WIDTH 720.0      /* px for t_max */
#define TIMELINE_LEFT 220.0       /* px for the processes' names */
#define TIMELINE_ROW 22.0
#define TIMELINE_CROSSINGS 300    /* cross arcs of the path drawn at most */
#define FUNCTIONS_SHOWN 20

/* A share in percent, 0 when the whole is 0. */
static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* Process p of the graph's label, escaped, as a table cell. */
static void process_cell(FILE *f, const struct report_input *r, uint32_t p)
{
    char label[96];
    fputs("<td class=\"name\">", f);
    html_text(f, dpm_process_label(&r->graph.trace, r->graph.trace.processes[p].pid, label, sizeof label));
    fputs("</td>", f);
}

/* What the graph could not take from the trace, as a list (none: nothing). */
static void graph_notes(FILE *f, const struct history *h)
{
    if (!h->unmatched_sends && !h->unmatched_receives && !h->no_proctime && !h->cpu_backwards)
        return;
    fputs("<ul class=\"notes\">\n", f);
    if (h->unmatched_sends)
        fprintf(f, "<li>%" PRIu64 " SENDs to traced processes were never received in the trace (no message arc)"
                "</li>\n", h->unmatched_sends);
    if (h->unmatched_receives)
        fprintf(f, "<li>%" PRIu64 " RECEIVEs had no SEND in the trace</li>\n", h->unmatched_receives);
    if (h->no_proctime)
        fprintf(f, "<li>%" PRIu64 " arcs lacked PROCTIME in a record (weighed 0)</li>\n", h->no_proctime);
    if (h->cpu_backwards)
        fprintf(f, "<li>%" PRIu64 " arcs had PROCTIME going down (weighed 0)</li>\n", h->cpu_backwards);
    fputs("</ul>\n", f);
}

/* ---- parallelism ---- */

/* The steps on both graphs of Fig. 5.3: T, t_max, P and the share of t_max
 * outside the trace on graph B, and P on graph A. */
static void steps_table(FILE *f, const struct parallel_steps *s)
{
    fputs("<table id=\"steps\">\n<tr><th>step</th><th>T (ns)</th><th>t_max (ns)</th><th>P</th><th>outside %</th>"
          "<th>P plain</th></tr>\n", f);
    for (int i = 0; i < PARALLEL_STEPS; i++) {
        const struct parallel_result *e = &s->elapsed[i];
        fputs("<tr><td class=\"name\">", f);
        html_text(f, parallel_step_name((enum parallel_step)(i + 1)));
        fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%.3f</td><td>%.1f</td><td>%.3f</td></tr>\n",
                e->total_cpu, e->t_max, e->parallelism, outside_percent(&e->outside), s->plain[i].parallelism);
    }
    fputs("</table>\n", f);
}

/* Each step's time outside the trace, and the processes asked. */
static void outside_table(FILE *f, const struct parallel_steps *s)
{
    char label[64];
    fputs("<table id=\"outside\">\n<tr><th>step</th><th>outside (ns)</th><th>% of t_max</th><th>requests</th>"
          "<th>in requests to (share of t_max)</th></tr>\n", f);
    for (int i = 0; i < PARALLEL_STEPS; i++) {
        const struct outside_share *o = &s->elapsed[i].outside;
        fputs("<tr><td class=\"name\">", f);
        html_text(f, parallel_step_name((enum parallel_step)(i + 1)));
        fprintf(f, "</td><td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu32 "</td><td class=\"name\">", o->ns,
                outside_percent(o), o->requests);
        for (uint32_t k = 0; k < o->nprocesses && k < OUTSIDE_NAMED; k++) {
            fputs(k ? ", " : "", f);
            html_text(f, dpm_label("", o->named[k].pid, label, sizeof label));
            fprintf(f, " %.1f%%", percent(o->named[k].ns, o->t_max));
        }
        fprintf(f, "%s</td></tr>\n", o->nprocesses > OUTSIDE_NAMED ? ", ..." : "");
    }
    fputs("</table>\n", f);
}

/* The advice when most of t_max is outside the trace (models/outside.h). */
static void outside_warning(FILE *f, const char *advice)
{
    if (!advice[0])
        return;
    fputs("<p class=\"warning\"><b>Warning:</b> ", f);
    html_text(f, advice);
    fputs("</p>\n", f);
}

/* P for the placement under each network shipped with dpm: steps 2 and 3
 * on graph B, and step 3 on the plain graph A. 0, or 1 (said). */
static int networks_table(FILE *f, const struct report_input *r)
{
    const struct history *h = &r->graph.history;
    static const enum parallel_step steps[] = { STEP_DELIVERY, STEP_CONTENTION_THESIS, STEP_CONTENTION_SIMULATED };
    char err[512];
    fputs("<table id=\"networks\">\n<tr><th>network</th><th>step 2</th><th>step 3 (Appendix A)</th>"
          "<th>step 3 (elapsed)</th><th>P plain, step 3</th><th>what it is</th></tr>\n", f);
    for (size_t i = 0; i < shipped_network_count; i++) {
        struct delay_table d;
        struct parallel_result result;
        if (delay_table_network(&d, shipped_networks[i].name, err, sizeof err) < 0) {
            fprintf(stderr, "dpm report: %s\n", err);
            return EXIT_BAD_INPUT;
        }
        fputs("<tr><td class=\"name\">", f);
        html_text(f, d.name);
        fputs("</td>", f);
        for (int k = 0; k < 4; k++) {
            enum parallel_step step = k < 3 ? steps[k] : STEP_CONTENTION_SIMULATED;
            enum history_graph graph = k < 3 || !h->outside_arcs ? GRAPH_ELAPSED_ARCS : GRAPH_PLAIN;
            if (parallel_step_run(&result, 0, h, step, graph, r->machine, &d, err, sizeof err) < 0) {
                fprintf(stderr, "dpm report: %s\n", err);
                return EXIT_BAD_INPUT;
            }
            fprintf(f, "<td>%.3f</td>", result.parallelism);
        }
        fputs("<td class=\"name\">", f);
        html_text(f, d.title);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    return EXIT_OK;
}

int report_parallelism(FILE *f, const struct report_input *r)
{
    const struct history *h = &r->graph.history;
    static struct parallel_steps s;
    char err[512], advice[2048];
    if (parallel_steps_run(&s, h, r->machine, &r->delays, err, sizeof err) < 0) {
        fprintf(stderr, "dpm report: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    fprintf(f, "<section id=\"parallelism\">\n<h2>Parallelism (thesis 5.2.3)</h2>\n<p>P = T / t_max over the "
            "program history graph of %" PRIu32 " processes, %" PRIu64 " message arcs and %" PRIu64 " requests "
            "outside the trace. Placement: ", h->nprocesses, h->message_arcs, h->outside_arcs);
    html_text(f, r->placement);
    fputs(". Delivery times: network ", f);
    html_text(f, r->delays.name);
    fputs(" (", f);
    html_text(f, r->delays.title[0] ? r->delays.title : r->delays.path);
    fputs("). P is given on both graphs of the thesis's Fig. 5.3: with each request to a process outside the trace "
          "an arc weighted by the time its answer took (B: T, t_max, P and the share of t_max on such arcs), and "
          "the plain graph without them (A: P plain).</p>\n", f);
    steps_table(f, &s);
    if (h->outside_arcs)
        outside_table(f, &s);
    parallel_steps_advice(advice, sizeof advice, &s, h, dpm_window_asked());
    outside_warning(f, advice);
    fputs("<p>The same placement under each network shipped with dpm (their delivery times: analysis/networks/, "
          "dpm parallelism --network):</p>\n", f);
    if (networks_table(f, r) != EXIT_OK)
        return EXIT_BAD_INPUT;
    fputs("<table id=\"placement\">\n<tr><th>process</th><th>measured machine</th><th>placed on</th></tr>\n", f);
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        char measured[64], placed[64];
        fputs("<tr>", f);
        process_cell(f, r, p);
        fprintf(f, "<td>%s</td><td>%s</td></tr>\n",
                dpm_process_machines(&r->graph.trace, &r->graph.trace.processes[p], measured, sizeof measured),
                placement_text(&r->graph, r->machine, p, placed, sizeof placed));
    }
    fputs("</table>\n", f);
    graph_notes(f, h);
    fputs("</section>\n", f);
    return EXIT_OK;
}

/* ---- the critical path ---- */

/* The timeline's rows: the processes on the path first, then the others,
 * TIMELINE_ROWS at most; row[p] is process p's row or -1. How many. */
static int timeline_rows(const struct critpath *c, const struct history *h, int *row)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t p = 0; p < h->nprocesses; p++) {
            if (pass == 0)
                row[p] = -1;
            if ((pass == 0) == (c->held[p] > 0) && n < TIMELINE_ROWS)
                row[p] = n++;
        }
    return n;
}

/* A run of bars on one row, merged while less than a pixel apart, so that
 * a row has at most about a bar per pixel however long the trace. */
struct bar_run {
    double start, end;         /* px; start < 0: none open */
    double y;
    const char *fill;
};

/* Draw the open bar, if any, and close it. */
static void bar_flush(FILE *f, struct bar_run *b, double height)
{
    if (b->start >= 0)
        svg_rect(f, b->start, b->y, fmax(b->end - b->start, 1), height, b->fill, 0);
    b->start = -1;
}

/* Add a bar from start to end (px) on the row at y: merged into the open
 * one when it touches it. */
static void bar_add(FILE *f, struct bar_run *b, double start, double end, double y, double height)
{
    if (b->start >= 0 && (y != b->y || start > b->end + 1))
        bar_flush(f, b, height);
    if (b->start < 0)
        *b = (struct bar_run){ start, end, y, b->fill };
    else
        b->end = fmax(b->end, end);
}

/* Each process's computing, grey, as the graph's longest paths schedule
 * it: an arc within a process from node v-1 runs from dist[v-1] for its
 * weight. */
static void timeline_processes(FILE *f, const struct history *h, const struct history_weights *w,
                               const struct history_paths *paths, const int *row, double scale)
{
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        if (row[p] < 0)
            continue;
        double y = 30 + TIMELINE_ROW * row[p];
        struct bar_run run = { -1, 0, 0, "#c8ccd4" };
        svg_line(f, TIMELINE_LEFT, y + TIMELINE_ROW / 2, TIMELINE_LEFT + TIMELINE_WIDTH, y + TIMELINE_ROW / 2,
                 "#e4e6ea", 1);
        for (uint32_t v = h->first_node[p] + 1; v < h->first_node[p + 1]; v++)
            if (w->chain[v])
                bar_add(f, &run, TIMELINE_LEFT + (double)paths->dist[v - 1] * scale,
                        TIMELINE_LEFT + (double)(paths->dist[v - 1] + w->chain[v]) * scale, y + 4, TIMELINE_ROW - 8);
        bar_flush(f, &run, TIMELINE_ROW - 8);
    }
}

/* The path over them: its arcs within processes red, its messages and
 * requests outside the trace as lines from row to row. */
static void timeline_path(FILE *f, const struct critpath *c, const struct history *h,
                          const struct history_paths *paths, const int *row, double scale)
{
    struct bar_run run = { -1, 0, 0, "#d02020" };
    uint32_t crossings = 0;
    for (uint32_t i = 0; i < c->narcs; i++) {
        uint32_t v = c->arc[i].to, from = c->arc[i].cross == HX_NONE ? v - 1 : h->cross_from[v];
        int to_row = row[h->process[v]], from_row = row[h->process[from]];
        double x0 = TIMELINE_LEFT + (double)paths->dist[from] * scale, x1 = TIMELINE_LEFT + (double)paths->dist[v] * scale;
        if (c->arc[i].cross == HX_NONE && to_row >= 0 && c->arc[i].weight)
            bar_add(f, &run, x0, x1, 30 + TIMELINE_ROW * to_row + 2, TIMELINE_ROW - 4);
        if (c->arc[i].cross == HX_NONE || to_row < 0 || from_row < 0 || crossings >= TIMELINE_CROSSINGS)
            continue;
        bar_flush(f, &run, TIMELINE_ROW - 4);
        crossings++;
        svg_line(f, x0, 30 + TIMELINE_ROW * (from_row + 0.5), x1, 30 + TIMELINE_ROW * (to_row + 0.5),
                 c->arc[i].cross == HX_MESSAGE ? "#7a1010" : "#7040a0", 0.8);
    }
    bar_flush(f, &run, TIMELINE_ROW - 4);
    if (crossings >= TIMELINE_CROSSINGS)
        svg_text(f, TIMELINE_LEFT, 16, "start", "(only the first 300 messages of the path are drawn)");
}

/* The timeline: a row per process, its computing in grey, the path in red. */
static int timeline(FILE *f, const struct report_input *r, const struct critpath *c)
{
    const struct history *h = &r->graph.history;
    struct history_weights w;
    struct history_paths paths = { 0 };
    char err[512], when[32], label[96];
    int *row = malloc((h->nprocesses + 1) * sizeof *row), rows, status = EXIT_BAD_INPUT;
    if (row && history_weights_alloc(&w, h) == 0) {
        if (parallel_weigh(&w, h, STEP_DELIVERY, GRAPH_ELAPSED_ARCS, r->machine, &r->delays, err, sizeof err) == 0 &&
            history_longest(&paths, h, &w) == 0) {
            double scale = TIMELINE_WIDTH / (double)(paths.t_max ? paths.t_max : 1);
            rows = timeline_rows(c, h, row);
            svg_begin(f, (int)(TIMELINE_LEFT + TIMELINE_WIDTH + 20), (int)(30 + TIMELINE_ROW * rows + 30),
                      "the critical path on a timeline");
            for (uint32_t p = 0; p < h->nprocesses; p++)
                if (row[p] >= 0)
                    svg_text(f, TIMELINE_LEFT - 8, 30 + TIMELINE_ROW * row[p] + 15, "end",
                             dpm_process_label(&r->graph.trace, r->graph.trace.processes[p].pid, label, sizeof label));
            timeline_processes(f, h, &w, &paths, row, scale);
            timeline_path(f, c, h, &paths, row, scale);
            svg_text(f, TIMELINE_LEFT, 30 + TIMELINE_ROW * rows + 18, "start", "0");
            svg_text(f, TIMELINE_LEFT + TIMELINE_WIDTH, 30 + TIMELINE_ROW * rows + 18, "end",
                     html_ns(paths.t_max, when, sizeof when));
            svg_end(f);
            status = EXIT_OK;
        }
        history_paths_free(&paths);
        history_weights_free(&w);
    }
    free(row);
    if (status != EXIT_OK)
        fputs("dpm report: no memory for the critical path's timeline\n", stderr);
    return status;
}

/* Who holds the path, in all. */
static void path_holders(FILE *f, const struct report_input *r, const struct critpath *c)
{
    fputs("<table id=\"holders\">\n<tr><th>process</th><th>holds (ns)</th><th>share %</th><th>segments</th></tr>\n",
          f);
    for (uint32_t p = 0; p < r->graph.history.nprocesses; p++) {
        uint32_t segments = 0;
        for (uint32_t i = 0; i < c->nsegments; i++)
            segments += c->segment[i].process == p;
        if (!segments)
            continue;
        fputs("<tr>", f);
        process_cell(f, r, p);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu32 "</td></tr>\n", c->held[p],
                percent(c->held[p], c->t_max), segments);
    }
    fprintf(f, "<tr><td>(message delivery)</td><td>%" PRIu64 "</td><td>%.1f</td><td></td></tr>\n"
            "<tr><td>(outside the trace)</td><td>%" PRIu64 "</td><td>%.1f</td><td></td></tr>\n",
            c->delivery, percent(c->delivery, c->t_max), c->outside, percent(c->outside, c->t_max));
    for (uint32_t k = 0; k < c->outside_by.nprocesses && k < OUTSIDE_NAMED; k++) {
        char label[64];
        fputs("<tr><td class=\"name\">in requests to ", f);
        html_text(f, dpm_label("", c->outside_by.named[k].pid, label, sizeof label));
        fprintf(f, "</td><td>%" PRIu64 "</td><td>%.1f</td><td></td></tr>\n", c->outside_by.named[k].ns,
                percent(c->outside_by.named[k].ns, c->t_max));
    }
    fputs("</table>\n", f);
}

/* The warning when most of the path is outside the trace, with P of the
 * plain graph (Fig. 5.3A) under the same step. 0, or 1 (said). */
static int path_advice(FILE *f, const struct report_input *r, const struct critpath *c)
{
    const struct history *h = &r->graph.history;
    struct parallel_result plain;
    char err[512], advice[2048];
    if (outside_percent(&c->outside_by) <= OUTSIDE_WARN_PERCENT)
        return EXIT_OK;
    if (parallel_step_run(&plain, 0, h, STEP_DELIVERY, GRAPH_PLAIN, r->machine, &r->delays, err, sizeof err) < 0) {
        fprintf(stderr, "dpm report: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    uint64_t total = history_total_cpu(h);
    outside_advice(advice, sizeof advice, &c->outside_by, "step 2", c->t_max ? (double)total / (double)c->t_max : 0,
                   plain.parallelism, h, dpm_window_asked());
    outside_warning(f, advice);
    return EXIT_OK;
}

/* The functions on the path, most time first. 0, or 1 (no memory). */
static int path_functions(FILE *f, const struct report_input *r, const struct critpath *c)
{
    struct critpath_function *fn;
    uint32_t n;
    if (critpath_functions(c, &r->graph.history, programs_name_pc, (void *)&r->programs, &fn, &n) < 0)
        return EXIT_BAD_INPUT;
    fputs("<table id=\"functions\">\n<tr><th>function</th><th>process</th><th>holds (ns)</th><th>share %</th>"
          "</tr>\n", f);
    for (uint32_t i = 0; i < n && i < FUNCTIONS_SHOWN && fn[i].held; i++) {
        fputs("<tr><td class=\"name\">", f);
        if (fn[i].name)
            html_text(f, fn[i].name);
        else
            fprintf(f, "pc 0x%" PRIx64, fn[i].start);
        fputs("</td>", f);
        process_cell(f, r, fn[i].process);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td></tr>\n", fn[i].held, percent(fn[i].held, c->t_max));
    }
    fputs("</table>\n", f);
    if (n > FUNCTIONS_SHOWN)
        fprintf(f, "<p>... and %" PRIu32 " more functions.</p>\n", n - FUNCTIONS_SHOWN);
    free(fn);
    return EXIT_OK;
}

/* The critical path's section (report/sections.h): the figures, the timeline,
 * who holds it, its functions. */
int report_critical_path(FILE *f, const struct report_input *r)
{
    const struct history *h = &r->graph.history;
    struct critpath c;
    char err[512];
    if (critpath_find(&c, h, STEP_DELIVERY, GRAPH_ELAPSED_ARCS, r->machine, &r->delays, err, sizeof err) < 0) {
        fprintf(stderr, "dpm report: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    uint64_t total = history_total_cpu(h);
    fprintf(f, "<section id=\"critpath\">\n<h2>The critical path (thesis 5.2.3)</h2>\n<p>Under step 2 (delivery "
            "times for the placement, no contention): t_max = <b>%" PRIu64 "</b> ns over %" PRIu32 " arcs; T = %"
            PRIu64 " ns; P = %.3f. On the timeline, each process's computing is grey as the longest paths schedule "
            "it (each arc as early as the graph allows) and the path is red; lines are the path's messages.</p>\n",
            c.t_max, c.narcs, total, c.t_max ? (double)total / (double)c.t_max : 0.0);
    int status = timeline(f, r, &c);
    if (status == EXIT_OK) {
        path_holders(f, r, &c);
        status = path_advice(f, r, &c);
    }
    if (status == EXIT_OK)
        status = path_functions(f, r, &c);
    fputs("</section>\n", f);
    critpath_free(&c);
    return status;
}
