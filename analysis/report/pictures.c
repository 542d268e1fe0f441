/*
 * analysis/report/pictures.c — the report's pictures of communication,
 * drawn as SVG by this code alone (no Graphviz): the communication graph (who
 * talks to whom) with the processes on a circle grouped by machine, the
 * traffic matrix as a heat map, and the message rate over time on each
 * machine's clock.
 */
#define _XOPEN_SOURCE 700   /* M_PI */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/html.h"
#include "report/sections.h"

#define GRAPH_SIZE 760            /* the communication graph's square, px */
#define GRAPH_RADIUS 270          /* the circle the processes sit on */
#define CURVE_OFFSET 40           /* how far a two-way pair's edges bow apart */
#define RATE_BUCKETS 60           /* points of each machine's line */
#define MACHINES 256

/* ---- the communication graph ---- */

/* Where each process sits: on one circle grouped by machine
 * (stats_by_machine's order), with an empty place between two machines'
 * groups. */
static void graph_layout(const struct stats *st, const size_t *order, double *angle, double *x, double *y)
{
    size_t places = st->nprocesses, place = 0;
    for (size_t k = 1; k < st->nprocesses; k++)
        places += st->processes[order[k]].machine != st->processes[order[k - 1]].machine;
    for (size_t k = 0; k < st->nprocesses; k++) {
        size_t i = order[k];
        if (k && st->processes[i].machine != st->processes[order[k - 1]].machine)
            place++;
        angle[i] = -M_PI / 2 + 2 * M_PI * (double)place++ / (double)(places ? places : 1);
        x[i] = GRAPH_SIZE / 2 + GRAPH_RADIUS * cos(angle[i]);
        y[i] = GRAPH_SIZE / 2 + GRAPH_RADIUS * sin(angle[i]);
    }
}

/* Each machine's group: a pale band along the circle behind its
 * processes, and its name inside the circle. A process that moved sits
 * with the machine it began on. */
static void graph_machines(FILE *f, const struct stats *st, const size_t *order, const double *angle, double node)
{
    double half = st->nprocesses > 1 ? M_PI / (double)(st->nprocesses + 1) * 0.6 : M_PI / 4;
    for (size_t first = 0, last; first < st->nprocesses; first = last + 1) {
        uint32_t machine = st->processes[order[first]].machine;
        for (last = first; last + 1 < st->nprocesses && st->processes[order[last + 1]].machine == machine;)
            last++;
        double a0 = angle[order[first]] - half, a1 = angle[order[last]] + half;
        double middle = (a0 + a1) / 2, c = GRAPH_SIZE / 2;
        fprintf(f, "<path d=\"M%.1f,%.1f A%d,%d 0 %d 1 %.1f,%.1f\" fill=\"none\" stroke=\"%s\" stroke-opacity=\"0.18\" "
                "stroke-width=\"%.0f\" stroke-linecap=\"round\"/>\n", c + GRAPH_RADIUS * cos(a0),
                c + GRAPH_RADIUS * sin(a0), GRAPH_RADIUS, GRAPH_RADIUS, a1 - a0 > M_PI, c + GRAPH_RADIUS * cos(a1),
                c + GRAPH_RADIUS * sin(a1), html_palette(machine), 2 * node + 14);
        char name[32];
        snprintf(name, sizeof name, "machine %" PRIu32, machine);
        fputs("<g class=\"machine\">", f);
        svg_text(f, c + (GRAPH_RADIUS - node - 34) * cos(middle), c + (GRAPH_RADIUS - node - 34) * sin(middle) + 4,
                 "middle", name);
        fputs("</g>\n", f);
    }
}

/* One pair's edge: straight, or bowed to its right when the pair also
 * talks the other way; width by messages, colour by bytes. */
static void graph_edge(FILE *f, const struct stats *st, const struct stats_pair *c, const double *x, const double *y,
                       double node, uint64_t most_messages, uint64_t most_bytes)
{
    uint32_t i = *table_find(&st->process_index, c->from, 0), j = *table_find(&st->process_index, c->to, 0);
    char colour[8], from[64], to[64], title[192];
    double width = 1 + 5 * (double)c->messages / (double)most_messages;
    html_blue_red((double)c->bytes / (double)most_bytes, colour);
    snprintf(title, sizeof title, "%s -> %s: %" PRIu64 " messages, %" PRIu64 " bytes",
             stats_label(st, c->from, from, sizeof from), stats_label(st, c->to, to, sizeof to), c->messages, c->bytes);
    fprintf(f, "<g class=\"edge\"><title>");
    html_text(f, title);
    fputs("</title>", f);
    if (i == j) {                           /* to itself: a loop outside the circle */
        double dx = x[i] - GRAPH_SIZE / 2, dy = y[i] - GRAPH_SIZE / 2, n = hypot(dx, dy) ? hypot(dx, dy) : 1;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"12\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"/>"
                "</g>\n", x[i] + dx / n * (node + 10), y[i] + dy / n * (node + 10), colour, width);
        return;
    }
    int two_way = table_find(&st->pair_index, c->to, c->from) != 0;
    double dx = x[j] - x[i], dy = y[j] - y[i], length = hypot(dx, dy);
    double cx = (x[i] + x[j]) / 2 - (two_way ? dy / length * CURVE_OFFSET : 0);
    double cy = (y[i] + y[j]) / 2 + (two_way ? dx / length * CURVE_OFFSET : 0);
    double sx = x[i] + (cx - x[i]) / hypot(cx - x[i], cy - y[i]) * node;
    double sy = y[i] + (cy - y[i]) / hypot(cx - x[i], cy - y[i]) * node;
    double ex = x[j] + (cx - x[j]) / hypot(cx - x[j], cy - y[j]) * (node + 2);
    double ey = y[j] + (cy - y[j]) / hypot(cx - x[j], cy - y[j]) * (node + 2);
    fprintf(f, "<path d=\"M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\" "
            "marker-end=\"url(#arrow)\"/>", sx, sy, cx, cy, ex, ey, colour, width);
    char count[32];
    snprintf(count, sizeof count, "%" PRIu64, c->messages);
    svg_text(f, (sx + 2 * cx + ex) / 4, (sy + 2 * cy + ey) / 4 - 3, "middle", count);
    fputs("</g>\n", f);
}

/* A process's node and its label outside the circle. */
static void graph_node(FILE *f, const struct stats *st, const struct stats_process *p, double angle, double x, double y, double node)
{
    char label[64], title[160], machines[32];
    dpm_label(p->name, p->pid, label, sizeof label);
    if (p->traced)
        snprintf(title, sizeof title, "%s: %" PRIu64 " records, sent %" PRIu64 ", received %" PRIu64 "%s%s", label,
                 p->records, p->sent, p->received, p->moves ? "; ran on machines " : "",
                 p->moves ? stats_machines(st, p, machines, sizeof machines) : "");
    else
        snprintf(title, sizeof title, "%s: not traced, received %" PRIu64, label, p->received);
    fprintf(f, "<g class=\"node%s\"><title>", p->traced ? "" : " untraced");
    html_text(f, title);
    fprintf(f, "</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>", x, y, node);
    double c = cos(angle), s = sin(angle);
    svg_text(f, x + c * (node + 6), y + s * (node + 6) + (s > 0.3 ? 10 : s < -0.3 ? -2 : 4),
             c > 0.3 ? "start" : c < -0.3 ? "end" : "middle", label);
    fputs("</g>\n", f);
}

/* The communication graph as SVG (report/sections.h): the machines' bands,
 * the edges, then the nodes over them. */
void report_communication_graph(FILE *f, const struct stats *st)
{
    size_t n = st->nprocesses ? st->nprocesses : 1;
    double *angle = calloc(n, sizeof *angle), *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
    size_t *order = calloc(n, sizeof *order);
    double node = st->nprocesses > 16 ? fmax(5, 300.0 / (double)st->nprocesses) : 18;
    uint64_t most_messages = 1, most_bytes = 1;
    if (!angle || !x || !y || !order) {
        fputs("dpm: out of memory\n", stderr);
        exit(1);
    }
    for (size_t i = 0; i < st->npairs; i++) {
        most_messages = st->pairs[i].messages > most_messages ? st->pairs[i].messages : most_messages;
        most_bytes = st->pairs[i].bytes > most_bytes ? st->pairs[i].bytes : most_bytes;
    }
    stats_by_machine(st, order);
    graph_layout(st, order, angle, x, y);
    svg_begin(f, GRAPH_SIZE + 240, GRAPH_SIZE, "the communication graph: who talks to whom");
    fputs("<g transform=\"translate(120,0)\">\n", f);
    svg_arrow_marker(f, "arrow", "#444");
    graph_machines(f, st, order, angle, node);
    for (size_t i = 0; i < st->npairs; i++)
        graph_edge(f, st, &st->pairs[i], x, y, node, most_messages, most_bytes);
    for (size_t i = 0; i < st->nprocesses; i++)
        graph_node(f, st, &st->processes[i], angle[i], x[i], y[i], node);
    fputs("</g>\n", f);
    svg_end(f);
    free(angle);
    free(x);
    free(y);
    free(order);
}

/* ---- the traffic matrix ---- */

/* One cell: its colour by the messages (on a square-root scale, so that
 * small flows still show), its count, and what it is on hover. */
static void heat_cell(FILE *f, const struct stats *st, const struct stats_pair *c, double x, double y, double cell,
                      uint64_t most)
{
    char colour[8], from[64], to[64], title[192], count[32];
    double t = sqrt((double)c->messages / (double)most);
    snprintf(title, sizeof title, "%s -> %s: %" PRIu64 " messages, %" PRIu64 " bytes",
             stats_label(st, c->from, from, sizeof from), stats_label(st, c->to, to, sizeof to), c->messages, c->bytes);
    svg_rect(f, x, y, cell - 1, cell - 1, html_heat(t, colour), title);
    if (cell >= 24) {
        snprintf(count, sizeof count, "%" PRIu64, c->messages);
        fprintf(f, "<g class=\"%s\">", t > 0.55 ? "on-dark" : "on-light");
        svg_text(f, x + cell / 2, y + cell / 2 + 4, "middle", count);
        fputs("</g>\n", f);
    }
}

/* The traffic matrix as a heat map: a row per sender, a column per
 * receiver, as the tables. */
void report_traffic_heatmap(FILE *f, const struct stats *st)
{
    size_t rows = 0, columns = 0;
    uint64_t most = 1;
    for (size_t i = 0; i < st->nprocesses; i++) {
        rows += st->processes[i].sent != 0;
        columns += st->processes[i].received != 0;
    }
    for (size_t i = 0; i < st->npairs; i++)
        most = st->pairs[i].messages > most ? st->pairs[i].messages : most;
    double cell = columns ? fmax(12, fmin(40, 640.0 / (double)columns)) : 40, left = 220, top = 30;
    svg_begin(f, (int)(left + cell * (double)columns + 20), (int)(top + cell * (double)rows + 10),
              "the traffic matrix: messages from each sender (row) to each receiver (column)");
    for (size_t j = 0, column = 0; j < st->nprocesses; j++) {
        if (!st->processes[j].received)
            continue;
        char name[32];
        snprintf(name, sizeof name, "[%zu]", j + 1);
        svg_text(f, left + cell * ((double)column++ + 0.5), top - 8, "middle", name);
    }
    for (size_t i = 0, row = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->sent)
            continue;
        char label[64], name[96];
        snprintf(name, sizeof name, "[%zu] %s", i + 1, dpm_label(p->name, p->pid, label, sizeof label));
        double y = top + cell * (double)row++;
        svg_text(f, left - 6, y + cell / 2 + 4, "end", name);
        for (size_t j = 0, column = 0; j < st->nprocesses; j++) {
            if (!st->processes[j].received)
                continue;
            uint32_t *c = table_find(&st->pair_index, p->pid, st->processes[j].pid);
            if (c)
                heat_cell(f, st, &st->pairs[*c], left + cell * (double)column, y, cell, most);
            column++;
        }
    }
    svg_end(f);
}

/* ---- message rate over time ---- */

/* The machine that wrote a record. */
static uint32_t machine_of(const struct dpm_event *ev)
{
    return (ev->present & EV_MACHINE) ? ev->machine % MACHINES : DPM_PID_MACHINE(ev->pid);
}

/* Whether the record is a message sent (a SEND of status 0). */
static int is_message(const struct dpm_event *ev)
{
    return ev->type == MT_SEND && (ev->present & EV_TIME) && !((ev->present & EV_STATUS) && ev->status != 0);
}

/* Each machine's messages sent, in RATE_BUCKETS equal spans of its own
 * clock from its first record to its last; 1 in seen[m] for a machine
 * with records. */
struct rate_series {
    uint8_t seen[MACHINES];
    uint64_t first[MACHINES], last[MACHINES];
    uint64_t count[MACHINES][RATE_BUCKETS];
};

/* Each machine's first and last TIME, then its messages in their buckets. */
static void rate_count(struct rate_series *r, const struct dpm_trace *t)
{
    for (size_t i = 0; i < t->nevents; i++) {
        const struct dpm_event *ev = &t->events[i];
        uint32_t m = machine_of(ev);
        if (!(ev->present & EV_TIME))
            continue;
        if (!r->seen[m] || ev->time < r->first[m])
            r->first[m] = ev->time;
        if (!r->seen[m] || ev->time > r->last[m])
            r->last[m] = ev->time;
        r->seen[m] = 1;
    }
    for (size_t i = 0; i < t->nevents; i++) {
        const struct dpm_event *ev = &t->events[i];
        uint32_t m = machine_of(ev);
        if (is_message(ev)) {
            double span = (double)(r->last[m] - r->first[m] + 1);
            size_t k = (size_t)((double)(ev->time - r->first[m]) / span * RATE_BUCKETS);
            r->count[m][k < RATE_BUCKETS ? k : RATE_BUCKETS - 1]++;
        }
    }
}

/* A bucket's messages per second of its machine's clock. */
static double rate_of(const struct rate_series *r, uint32_t m, int k)
{
    double bucket_ns = (double)(r->last[m] - r->first[m] + 1) / RATE_BUCKETS;
    return (double)r->count[m][k] * 1e9 / bucket_ns;
}

/* The chart's axes, its scale labels and its legend. */
static void rate_axes(FILE *f, const struct rate_series *r, uint64_t longest, double most, double left, double top,
                      double width, double height)
{
    char text[64], when[32];
    svg_line(f, left, top, left, top + height, "#444", 1);
    svg_line(f, left, top + height, left + width, top + height, "#444", 1);
    for (int k = 0; k <= 2; k++) {
        snprintf(text, sizeof text, "%.3g/s", most * k / 2);
        svg_text(f, left - 6, top + height - height * k / 2 + 4, "end", text);
        svg_text(f, left + width * k / 2, top + height + 16, k ? (k == 2 ? "end" : "middle") : "start",
                 html_ns(longest * (uint64_t)k / 2, when, sizeof when));
    }
    svg_text(f, left + width / 2, top + height + 34, "middle", "time since the machine's first record, on its own clock");
    for (uint32_t m = 0, shown = 0; m < MACHINES; m++) {
        if (!r->seen[m])
            continue;
        snprintf(text, sizeof text, "machine %" PRIu32, m);
        svg_line(f, left + width + 14, top + 10 + 18 * shown, left + width + 34, top + 10 + 18 * shown,
                 html_palette(m), 3);
        svg_text(f, left + width + 40, top + 14 + 18 * shown++, "start", text);
    }
}

/* The message rate as a line chart: a line per machine, on a time axis as
 * long as the longest machine's span. */
void report_message_rate(FILE *f, const struct dpm_trace *t)
{
    struct rate_series *r = calloc(1, sizeof *r);
    double left = 80, top = 20, width = 600, height = 220, most = 1;
    uint64_t longest = 1;
    if (!r) {
        fputs("dpm: out of memory\n", stderr);
        exit(1);
    }
    rate_count(r, t);
    for (uint32_t m = 0; m < MACHINES; m++)
        for (int k = 0; r->seen[m] && k < RATE_BUCKETS; k++) {
            most = fmax(most, rate_of(r, m, k));
            longest = r->last[m] - r->first[m] > longest ? r->last[m] - r->first[m] : longest;
        }
    svg_begin(f, (int)(left + width + 150), (int)(top + height + 50), "messages sent per second, per machine");
    rate_axes(f, r, longest, most, left, top, width, height);
    for (uint32_t m = 0; m < MACHINES; m++) {
        if (!r->seen[m])
            continue;
        double span = (double)(r->last[m] - r->first[m] + 1);
        fprintf(f, "<polyline class=\"rate\" data-machine=\"%" PRIu32 "\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"2\" points=\"", m, html_palette(m));
        for (int k = 0; k < RATE_BUCKETS; k++)
            fprintf(f, "%.1f,%.1f ", left + width * (span * (k + 0.5) / RATE_BUCKETS) / (double)longest,
                    top + height - height * rate_of(r, m, k) / most);
        fputs("\"/>\n", f);
    }
    svg_end(f);
    free(r);
}
