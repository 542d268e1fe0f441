/*
 * analysis/report/waiting.c — the report's section on why processes
 * waited (models/waitstates.h): the waits by cause, the largest causes
 * (waiting process, cause, process charged), the functions charged, and
 * each process's waiting time, as `dpm waitstates` prints them.
 */
#include <inttypes.h>
#include <stdio.h>

#include "models/waitstates.h"
#include "report/html.h"
#include "report/sections.h"

#define CAUSES_SHOWN 20

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* A process's label as a table cell: a pid of the trace or not, 0 unknown. */
static void pid_cell(FILE *f, const struct report_input *r, uint64_t pid)
{
    char label[96];
    fputs("<td class=\"name\">", f);
    html_text(f, pid ? dpm_process_label(&r->graph.trace, pid, label, sizeof label) : "(unknown)");
    fputs("</td>", f);
}

/* A cause's name as a table cell. */
static void category_cell(FILE *f, uint8_t category)
{
    fputs("<td class=\"name\">", f);
    html_text(f, wait_category_name((enum wait_category)category));
    fputs("</td>", f);
}

static void causes_table(FILE *f, const struct report_input *r, const struct waitstates *w)
{
    fputs("<table id=\"wait-causes\">\n<caption>the largest causes</caption>\n<tr><th>waiting process</th>"
          "<th>cause</th><th>charged to</th><th>time (ns)</th><th>share %</th><th>waits</th></tr>\n", f);
    for (uint32_t i = 0; i < w->npairs && i < CAUSES_SHOWN; i++) {
        const struct wait_pair *p = &w->pair[i];
        fputs("<tr>", f);
        pid_cell(f, r, r->graph.trace.processes[p->waiter].pid);
        category_cell(f, p->category);
        pid_cell(f, r, p->responsible);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu64 "</td></tr>\n", p->time,
                percent(p->time, w->total), p->waits);
    }
    fputs("</table>\n", f);
    if (w->npairs > CAUSES_SHOWN)
        fprintf(f, "<p>... and %" PRIu32 " more causes.</p>\n", w->npairs - CAUSES_SHOWN);
}

static void functions_table(FILE *f, const struct report_input *r, const struct waitstates *w)
{
    fputs("<table id=\"wait-functions\">\n<caption>functions charged (the late SEND's, the reply's SEND's)"
          "</caption>\n<tr><th>function</th><th>process</th><th>cause</th><th>time (ns)</th><th>share %</th>"
          "<th>waits</th></tr>\n", f);
    for (uint32_t i = 0; i < w->nfunctions && i < CAUSES_SHOWN; i++) {
        const struct wait_function *fn = &w->function[i];
        fputs("<tr><td class=\"name\">", f);
        if (fn->name)
            html_text(f, fn->name);
        else
            fprintf(f, "pc 0x%" PRIx64, fn->start);
        fputs("</td>", f);
        pid_cell(f, r, r->graph.trace.processes[fn->process].pid);
        category_cell(f, fn->category);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu64 "</td></tr>\n", fn->time,
                percent(fn->time, w->total), fn->waits);
    }
    fputs("</table>\n", f);
}

/* The section (report/sections.h). */
int report_waitstates(FILE *f, const struct report_input *r)
{
    struct waitstates w;
    char err[512];
    if (waitstates_find(&w, &r->graph.history, &r->clocks.arrivals, &r->clocks.clocks, programs_name_pc,
                        (void *)&r->programs, err, sizeof err) < 0) {
        fprintf(stderr, "dpm report: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    fprintf(f, "<section id=\"waitstates\">\n<h2>Why processes waited</h2>\n<p>%" PRIu64 " waits (%" PRIu64
            " in CALLs, %" PRIu64 " in RECEIVEs), %" PRIu64 " ns in all (dpm waitstates): each split into late "
            "sender (until the matching SEND), delivery (messages in flight), queued (a CALL's request in the "
            "server's queue), server's work (from the server's RECEIVE of the request to its reply) and outside "
            "the trace, and charged to the process responsible.</p>\n<table id=\"wait-categories\">\n<tr><th>cause"
            "</th><th>time (ns)</th><th>share %%</th></tr>\n", w.waits, w.call_waits, w.receive_waits, w.total);
    for (int k = 0; k < WAIT_CATEGORIES; k++) {
        fputs("<tr>", f);
        category_cell(f, (uint8_t)k);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td></tr>\n", w.category[k], percent(w.category[k], w.total));
    }
    fputs("</table>\n", f);
    causes_table(f, r, &w);
    functions_table(f, r, &w);
    fputs("<table id=\"wait-processes\">\n<tr><th>process</th><th>waited (ns)</th><th>share %</th></tr>\n", f);
    for (uint32_t p = 0; p < r->graph.history.nprocesses; p++) {
        if (!w.waited[p])
            continue;
        fputs("<tr>", f);
        pid_cell(f, r, r->graph.trace.processes[p].pid);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td></tr>\n", w.waited[p], percent(w.waited[p], w.total));
    }
    fputs("</table>\n", f);
    if (w.untimed)
        fprintf(f, "<ul class=\"notes\"><li>%" PRIu64 " waits were not split: a record they need lacks TIME</li>"
                "</ul>\n", w.untimed);
    fputs("</section>\n", f);
    waitstates_free(&w);
    return EXIT_OK;
}
