/*
 * analysis/report/causality_paths.c — the report's section on paths of
 * causality through the servers --server names (thesis §5.2.4,
 * models/causality.h): the strings and paths with their counts, "receives
 * from X, then sends to Y" with the branching probabilities, and the state
 * diagram as SVG of its own layout: the servers on a circle, the requestors
 * (U) in the corner above it, each transition labelled with its
 * probabilities beside its curve.
 */
#define _XOPEN_SOURCE 700   /* M_PI */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/causality.h"
#include "report/html.h"
#include "report/sections.h"

#define STRINGS_SHOWN 40
#define PATHS_SHOWN 60
#define DIAGRAM_WIDTH 820
#define DIAGRAM_HEIGHT 620
#define STATE_RADIUS 26.0

/* The letter of server x, or U for the requestors (x == nservers). */
static char letter_or_u(const struct causality *c, uint32_t x)
{
    return x == c->nservers ? 'U' : causality_letter(x);
}

/* A table of counted strings (at most `shown`), with its caption. */
static void strings_table(FILE *f, const char *id, const char *caption, const struct tally_item *items, uint32_t n,
                          uint32_t shown)
{
    fprintf(f, "<table id=\"%s\">\n<caption>%s (%" PRIu32 ")</caption>\n<tr><th>count</th><th>string</th></tr>\n",
            id, caption, n);
    for (uint32_t i = 0; i < n && i < shown; i++) {
        fprintf(f, "<tr><td>%" PRIu64 "</td><td class=\"string\">", items[i].count);
        html_text(f, items[i].text);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (n > shown)
        fprintf(f, "<p>... and %" PRIu32 " more.</p>\n", n - shown);
}

/* Per server: counts and probabilities of where it sends after receiving from each X. */
static void transitions_table(FILE *f, const struct causality *c, const struct dpm_trace *t)
{
    char label[96];
    fputs("<table id=\"transitions\">\n<caption>receives from X (U: a requestor), then sends to Y: count and "
          "P(Y | X)</caption>\n<tr><th>server</th><th>from</th>", f);
    for (uint32_t y = 0; y < c->nservers; y++)
        fprintf(f, "<th>&rarr; %c</th>", causality_letter(y));
    fputs("</tr>\n", f);
    for (uint32_t a = 0; a < c->nservers; a++)
        for (uint32_t x = 0; x <= c->nservers; x++) {
            if (causality_probability(c, a, x, 0) < 0)
                continue;
            fprintf(f, "<tr><td class=\"name\">%c ", causality_letter(a));
            html_text(f, dpm_process_label(t, t->processes[c->server[a]].pid, label, sizeof label));
            fprintf(f, "</td><td>%c</td>", letter_or_u(c, x));
            for (uint32_t y = 0; y < c->nservers; y++)
                fprintf(f, "<td>%" PRIu64 " (%.1f%%)</td>", causality_count(c, a, x, y),
                        100 * causality_probability(c, a, x, y));
            fputs("</tr>\n", f);
        }
    fputs("</table>\n", f);
}

/* ---- the state diagram ---- */

/* Where state s is: the servers on a circle, turned half a place so that
 * none sits straight below U, which is in the top left corner. */
static void state_position(const struct causality *c, uint32_t s, double *x, double *y)
{
    uint32_t n = c->nservers ? c->nservers : 1;
    double angle = -M_PI / 2 + M_PI / n + 2 * M_PI * s / n;
    if (s == c->nservers) {
        *x = 60;
        *y = 60;
        return;
    }
    *x = DIAGRAM_WIDTH / 2 + 40 + 220 * cos(angle);
    *y = DIAGRAM_HEIGHT / 2 + 20 + 220 * sin(angle);
}

/* A transition from state a to state b, bowed to one side (the way back
 * bows to the other), with its label's lines beside the curve on that side. */
static void transition(FILE *f, double ax, double ay, double bx, double by, double width, char lines[][48], int n)
{
    double dx = bx - ax, dy = by - ay, length = hypot(dx, dy) ? hypot(dx, dy) : 1;
    double nx = -dy / length, ny = dx / length;           /* the side it bows to */
    double cx = (ax + bx) / 2 + nx * 50, cy = (ay + by) / 2 + ny * 50;
    double sx = ax + (cx - ax) / hypot(cx - ax, cy - ay) * STATE_RADIUS;
    double sy = ay + (cy - ay) / hypot(cx - ax, cy - ay) * STATE_RADIUS;
    double ex = bx + (cx - bx) / hypot(cx - bx, cy - by) * (STATE_RADIUS + 2);
    double ey = by + (cy - by) / hypot(cx - bx, cy - by) * (STATE_RADIUS + 2);
    fprintf(f, "<g class=\"transition\"><path d=\"M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"#555\" "
            "stroke-width=\"%.2f\" marker-end=\"url(#state-arrow)\"/>", sx, sy, cx, cy, ex, ey, width);
    double lx = (sx + 2 * cx + ex) / 4 + nx * 6, ly = (sy + 2 * cy + ey) / 4 + ny * 6 + 4;
    ly += ny > 0.3 ? 6 : ny < -0.3 ? -12.0 * n : -6.0 * n;
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", lx, ly,
            nx > 0.3 ? "start" : nx < -0.3 ? "end" : "middle");
    for (int i = 0; i < n; i++) {
        fprintf(f, "<tspan x=\"%.1f\" dy=\"%s\">", lx, i ? "1.1em" : "0");
        html_text(f, lines[i]);
        fputs("</tspan>", f);
    }
    fputs("</text></g>\n", f);
}

/* A server's transitions to y: one label line per X it received from. */
static void server_transitions(FILE *f, const struct causality *c, uint32_t a, uint64_t most)
{
    char lines[CAUSALITY_SERVERS_MAX + 1][48];
    for (uint32_t y = 0; y < c->nservers; y++) {
        uint64_t total = 0;
        int n = 0;
        for (uint32_t x = 0; x <= c->nservers; x++) {
            uint64_t count = causality_count(c, a, x, y);
            total += count;
            if (count)
                snprintf(lines[n++], sizeof lines[0], "after %c: %.1f%% (%" PRIu64 ")", letter_or_u(c, x),
                         100 * causality_probability(c, a, x, y), count);
        }
        if (!total)
            continue;
        double ax, ay, bx, by;
        state_position(c, a, &ax, &ay);
        state_position(c, y, &bx, &by);
        if (a == y)                         /* to itself: beside it */
            bx += 2.5 * STATE_RADIUS;
        transition(f, ax, ay, bx, by, 1 + 4 * (double)total / (double)most, lines, n);
    }
}

/* The state diagram: requests from U, each server's transitions, then the
 * states over them. */
static void state_diagram(FILE *f, const struct causality *c, const struct dpm_trace *t)
{
    uint64_t most = 1;
    char label[96], lines[1][48];
    for (uint32_t a = 0; a < c->nservers; a++)
        for (uint32_t x = 0; x <= c->nservers; x++)
            for (uint32_t y = 0; y < c->nservers; y++)
                most = causality_count(c, a, x, y) > most ? causality_count(c, a, x, y) : most;
    svg_begin(f, DIAGRAM_WIDTH, DIAGRAM_HEIGHT, "the causality state diagram");
    svg_arrow_marker(f, "state-arrow", "#555");
    for (uint32_t a = 0; a < c->nservers; a++) {
        double ux, uy, ax, ay;
        state_position(c, c->nservers, &ux, &uy);
        state_position(c, a, &ax, &ay);
        snprintf(lines[0], sizeof lines[0], "%" PRIu64 " requests", c->requests_to[a]);
        if (c->requests_to[a])
            transition(f, ux, uy, ax, ay, 1.5, lines, 1);
        server_transitions(f, c, a, most);
    }
    for (uint32_t s = 0; s <= c->nservers; s++) {
        double x, y;
        char letter[2] = { letter_or_u(c, s), 0 };
        state_position(c, s, &x, &y);
        fprintf(f, "<g class=\"state\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>", x, y, STATE_RADIUS);
        svg_text(f, x, y + 6, "middle", letter);
        svg_text(f, x, y + STATE_RADIUS + 16, "middle", s == c->nservers ? "requestors"
                 : dpm_process_label(t, t->processes[c->server[s]].pid, label, sizeof label));
        fputs("</g>\n", f);
    }
    svg_end(f);
}

/* The section's tables and diagram. 0, or 1 (no memory). */
static int causality_section(FILE *f, const struct causality *c, const struct dpm_trace *t)
{
    struct tally_item *strings = causality_by_count(&c->strings), *paths = causality_alphabetical(&c->paths);
    char label[96];
    if (strings && paths) {
        fprintf(f, "<p>%" PRIu64 " requests from requestors, %" PRIu64 " strings. Servers:", c->requests,
                c->nstrings);
        for (uint32_t a = 0; a < c->nservers; a++) {
            fprintf(f, "%s %c = ", a ? "," : "", causality_letter(a));
            html_text(f, dpm_process_label(t, t->processes[c->server[a]].pid, label, sizeof label));
        }
        fputs(".</p>\n", f);
        if (c->cut)
            fprintf(f, "<p>%" PRIu64 " chains went on past %" PRIu32 " letters and were cut there.</p>\n", c->cut,
                    c->max_length);
        strings_table(f, "strings", "strings, most frequent first", strings, c->strings.used, STRINGS_SHOWN);
        strings_table(f, "paths", "paths: every substring of 2 letters or more, alphabetically", paths,
                      c->paths.used, PATHS_SHOWN);
        transitions_table(f, c, t);
        state_diagram(f, c, t);
    }
    free(strings);
    free(paths);
    return strings && paths ? EXIT_OK : EXIT_BAD_INPUT;
}

/* The causality section (report/sections.h): the roles from --server and
 * --system, the analysis, its tables and diagram. */
int report_causality(FILE *f, const struct report_input *r)
{
    struct causality_roles roles;
    struct causality c;
    char err[512];
    int status = causality_roles_choose(&roles, &r->graph.trace, "report", r->servers, r->system);
    if (status == EXIT_OK &&
        causality_analyze(&c, &r->graph.history, &roles, CAUSALITY_DEFAULT_LENGTH, err, sizeof err) < 0) {
        fprintf(stderr, "dpm report: %s\n", err);
        status = EXIT_BAD_INPUT;
    } else if (status == EXIT_OK) {
        fputs("<section id=\"causality\">\n<h2>Paths of causality (thesis 5.2.4)</h2>\n", f);
        status = causality_section(f, &c, &r->graph.trace);
        fputs("</section>\n", f);
        causality_free(&c);
    }
    causality_roles_release(&roles);
    return status;
}
