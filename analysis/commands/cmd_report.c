/*
 * analysis/commands/cmd_report.c — `dpm report`: one self-contained HTML
 * page of a trace: every table of `dpm stats`, the communication graph, the
 * traffic matrix, the message rate over time, parallelism's steps, the
 * critical path on a timeline, the clocks with a space-time diagram, why
 * processes waited and, with --server, the paths of causality and their
 * state diagram. Inline CSS and inline SVG drawn by dpm itself:
 * the page needs nothing else to be read, and no Graphviz to be made.
 */
#define _POSIX_C_SOURCE 200809L   /* unlink, rename */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/window.h"
#include "report/html.h"
#include "report/sections.h"

static const char report_help[] =
    "NAME\n"
    "    dpm report - one HTML page with every table and picture of a trace\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm report [--server NAME_OR_PID,...] [--system NAME_OR_PID,...]\n"
    "               [--place NAME_OR_PID=MACHINE,... | --each-own | --all-one]\n"
    "               [--network NAME|FILE | --delays FILE]\n"
    "               [--elf NAME=FILE]... [--elf-dir DIR] [--min-delay NS] [--reference MACHINE]\n"
    "               -o OUT.html LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads the logs once, as one trace, and writes OUT.html: a page that holds all it\n"
    "    shows (inline CSS, pictures as inline SVG drawn by dpm; no scripts, no Graphviz):\n"
    "      summary       the logs, records, records lost (the logs' count) and missing in\n"
    "                    sequence gaps, processes, messages and bytes\n"
    "      graph         the communication graph: processes on a circle grouped by machine\n"
    "                    (dashed: not traced), an arrow per pair that talked, wider the more\n"
    "                    messages, from blue to red the more bytes; hover for the figures\n"
    "      the tables of dpm stats (see dpm stats --help): processes, who talks to whom\n"
    "                    with the traffic matrix as a heat map (darker: more messages, on a\n"
    "                    square-root scale), local and remote, message sizes, queue lengths, queue\n"
    "                    waiting times, receive blocking times, CPU time, thesis Fig. 5.12\n"
    "      rate          messages sent per second over time, a line per machine, each on its\n"
    "                    own clock from its first record (60 points)\n"
    "      parallelism   P = T / t_max in DPM's steps for the placement (dpm parallelism)\n"
    "      critpath      the critical path under step 2 (dpm critpath): a timeline with a\n"
    "                    row per process (those on the path first, 48 at most), its\n"
    "                    computing in grey as early as the graph allows, the path in red and\n"
    "                    its messages as lines; who holds it; the 20 functions holding it longest\n"
    "      clocks        each machine's clock offset against the reference machine, its\n"
    "                    interval and bound, and the messages backward before and after the\n"
    "                    correction (dpm clocks)\n"
    "      spacetime     a space-time diagram: a line per process grouped by machine, an arrow\n"
    "                    per message (red: between machines) on the corrected clocks, moved so\n"
    "                    that no arrow runs backward; the first 300 messages by their SEND\n"
    "      waitstates    why processes waited (dpm waitstates): the waits by cause, the 20\n"
    "                    largest causes and functions charged, each process's waiting time\n"
    "      causality     with --server: the strings, the paths, the branching\n"
    "                    probabilities (dpm causality) and the state diagram: the requestors\n"
    "                    (U) and the servers, each transition labelled with its probabilities\n"
    "    Each section is a <section> whose id is the name above (the stats tables: processes,\n"
    "    matrix, traffic, sizes, queues, waits, blocking, cpu, shares). Every string taken from\n"
    "    a log is escaped. OUT.html is written under OUT.html.partial and renamed when whole.\n"
    "\n"
    "OPTIONS\n"
    "    -o OUT.html  the page to write (required)\n"
    "    --server, --system\n"
    "                 the servers and system processes, as for dpm causality\n"
    "    --place, --each-own, --all-one, --network, --delays\n"
    "                 the placement and the network's delivery times, as for dpm parallelism\n"
    "    --elf NAME=FILE, --elf-dir DIR\n"
    "                 the programs, to name the functions of the critical path and of the\n"
    "                 waits, as for dpm critpath\n"
    "    --min-delay NS, --reference MACHINE\n"
    "                 the clock model, as for dpm clocks\n"
    "    --help       this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log could not be read (the file and record are named) or the page\n"
    "    written; 2 usage.\n"
    "\n"
    "EXAMPLE\n"
    "    dpm report --server ri,dm,bm,di --elf-dir build -o run1.html run1.log\n";

static const char page_style[] =
    "body{font-family:sans-serif;margin:2em;color:#222;max-width:1200px}"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}"
    "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
    "td.name,td.string,caption{text-align:left}th{background:#f0f2f5}caption{font-weight:bold;padding:4px 0}"
    "tr.share td{border-top:2px solid #888;font-weight:bold}"
    ".bar{display:inline-block;height:10px;background:#3060c0}"
    "svg{display:block;margin:1em 0;font-size:11px}svg text{fill:#222}"
    "g.node circle{fill:#e8eef8;stroke:#335;stroke-width:1.5}g.untraced circle{fill:#fff;stroke-dasharray:4 3}"
    "g.machine text{font-weight:bold;fill:#666}g.on-dark text{fill:#fff}"
    "g.state circle{fill:#fdf3d8;stroke:#765;stroke-width:1.5}g.state text{font-weight:bold}"
    "ul.notes{color:#845}p.warning{background:#fdecea;border-left:4px solid #c0392b;padding:6px 10px}";

struct report_options {
    const char *out;
    struct placement_options placement;
    struct program_options programs;
};

/* One option at argv[*i]: 1 taken, 0 not one, -1 bad (said). */
static int report_option(struct report_options *o, struct report_input *r, int argc, char **argv, int *i)
{
    int missing = 0, taken = placement_option(&o->placement, "report", argc, argv, i);
    const char *value;
    if (!taken)
        taken = clock_option(&r->clock_options, "report", argc, argv, i);
    if (taken)
        return taken;
    if ((value = graph_option(argc, argv, i, "-o", &missing)))
        o->out = value;
    else if ((value = graph_option(argc, argv, i, "--server", &missing)))
        r->servers = value;
    else if ((value = graph_option(argc, argv, i, "--system", &missing)))
        r->system = value;
    else if ((value = graph_option(argc, argv, i, "--elf-dir", &missing)))
        o->programs.elf_dir = value;
    else if ((value = graph_option(argc, argv, i, "--elf", &missing)) && !strchr(value, '=')) {
        fprintf(stderr, "dpm report: --elf %s: expected NAME=FILE\n", value);
        return -1;
    } else if (value)
        o->programs.elf[o->programs.nelf++] = value;
    if (missing)
        fprintf(stderr, "dpm report: %s needs a value (see --help)\n", argv[*i]);
    return missing ? -1 : value != 0;
}

struct report_command_line {
    struct report_options *o;
    struct report_input *r;
};

static int report_take(void *line, int argc, char **argv, int *i)
{
    struct report_command_line *l = line;
    return report_option(l->o, l->r, argc, argv, i);
}

/* Read the command line: EXIT_OK to go on, or the exit status; *help after --help. */
static int report_arguments(struct report_options *o, struct report_input *r, int argc, char **argv, int *help)
{
    struct report_command_line line = { o, r };
    int status = graph_arguments("report", argc, argv, report_take, &line, r->logs, &r->nlogs, help);
    if (status != EXIT_OK || *help)
        return status;
    if (!o->out) {
        fprintf(stderr, "dpm report: -o OUT.html names the page to write (see --help)\n");
        return EXIT_USAGE;
    }
    struct dpm_error e;
    if (dpm_output_check(o->out, &e) != 0) {
        fprintf(stderr, "dpm report: %s\n", e.text);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* The statistics of the loaded trace, event by event in log order, as
 * `dpm stats` computes them while it streams the logs (twice when it must:
 * models/stats.h). */
static void compute_stats(struct report_input *r)
{
    stats_init(&r->stats);
    for (int pass = 0; pass == 0 || (pass == 1 && stats_read_again(&r->stats)); pass++)
        for (size_t i = 0; i < r->graph.trace.nevents; i++)
            stats_add(&r->stats, &r->graph.trace.events[i]);
    r->stats.lost = r->graph.trace.lost;
    stats_finish(&r->stats);
}

/* The page's head, title and summary. */
static void page_start(FILE *f, const struct report_input *r)
{
    const struct stats *st = &r->stats;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dpm report</title>\n"
            "<style>%s</style>\n</head>\n<body>\n<h1>dpm report:", page_style);
    for (int i = 0; i < r->nlogs; i++) {
        fputc(' ', f);
        html_text(f, r->logs[i]);
    }
    fprintf(f, "</h1>\n<section id=\"summary\">\n<h2>Summary</h2>\n<table id=\"summary-table\">\n"
            "<tr><th>records</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>lost</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>missing in sequence gaps</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>processes</th><td>%zu</td></tr>\n<tr><th>traced processes</th><td>%zu</td></tr>\n"
            "<tr><th>messages</th><td>%" PRIu64 "</td></tr>\n<tr><th>bytes</th><td>%" PRIu64 "</td></tr>\n"
            "<tr><th>sends that failed at once</th><td>%" PRIu64 "</td></tr>\n", st->records, st->lost, st->gaps,
            st->nprocesses, r->graph.trace.nprocesses, st->messages, st->bytes, st->failed_sends);
    if (dpm_window_get()) {
        fputs("<tr><th>window</th><td>", f);
        html_text(f, dpm_window_describe());
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p>Lost: records the logs count as lost on the way to the filter. Missing: records absent from "
          "the processes' numbering. Times are guest ns on each machine's own clock; CPU times are instructions."
          "</p>\n</section>\n", f);
}

/* The whole page into f. 0, or an exit status after saying why. */
static int write_page(FILE *f, const struct report_input *r)
{
    page_start(f, r);
    fputs("<section id=\"graph\">\n<h2>Communication graph</h2>\n<p>Who talks to whom: an arrow per pair, wider "
          "the more messages, from blue to red the more bytes; dashed processes were not traced.</p>\n", f);
    report_communication_graph(f, &r->stats);
    fputs("</section>\n", f);
    report_stats_tables(f, r);
    fputs("<section id=\"rate\">\n<h2>Message rate over time</h2>\n<p>Messages sent per second, a line per "
          "machine, on that machine's own clock.</p>\n", f);
    report_message_rate(f, &r->graph.trace);
    fputs("</section>\n", f);
    int status = report_parallelism(f, r);
    if (status == EXIT_OK)
        status = report_critical_path(f, r);
    if (status == EXIT_OK)
        status = report_clocks(f, r);
    if (status == EXIT_OK)
        status = report_spacetime(f, r);
    if (status == EXIT_OK)
        status = report_waitstates(f, r);
    if (status == EXIT_OK && r->servers)
        status = report_causality(f, r);
    fputs("</body>\n</html>\n", f);
    return status;
}

/* Write the page under OUT.partial, renamed OUT when whole. */
static int write_report(const char *out, const struct report_input *r)
{
    char partial[4096];
    snprintf(partial, sizeof partial, "%s.partial", out);
    FILE *f = fopen(partial, "w");
    if (!f) {
        fprintf(stderr, "dpm report: %s: %s\n", partial, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    int status = write_page(f, r);
    if (status == EXIT_OK && (ferror(f) | fclose(f) | rename(partial, out))) {
        fprintf(stderr, "dpm report: %s: %s\n", out, strerror(errno));
        status = EXIT_BAD_INPUT;
    } else if (status != EXIT_OK) {
        fclose(f);
    }
    if (status != EXIT_OK)
        unlink(partial);
    return status;
}

/* Load, analyze and write (the help text above). */
static int report_run(const struct report_options *o, struct report_input *r)
{
    int status = graph_load(&r->graph, "report", r->logs, r->nlogs);
    if (status != EXIT_OK)
        return status;
    compute_stats(r);
    if ((status = clock_load(&r->clocks, &r->graph, &r->clock_options, "report")) != EXIT_OK) {
        stats_free(&r->stats);
        graph_input_free(&r->graph);
        return status;
    }
    r->machine = malloc((r->graph.history.nprocesses + 1) * sizeof *r->machine);
    status = r->machine ? placement_choose(&o->placement, "report", &r->graph, r->machine, r->placement,
                                           sizeof r->placement, &r->delays) : EXIT_BAD_INPUT;
    if (status == EXIT_OK)
        status = programs_load(&r->programs, &o->programs, &r->graph.trace, "report");
    if (status == EXIT_OK && (status = write_report(o->out, r)) == EXIT_OK)
        printf("%s: %" PRIu64 " records, %" PRIu64 " lost, %" PRIu64 " missing in sequence gaps\n", o->out,
               r->stats.records, r->stats.lost, r->stats.gaps);
    programs_free(&r->programs);
    free(r->machine);
    clock_input_free(&r->clocks);
    stats_free(&r->stats);
    graph_input_free(&r->graph);
    return status;
}

/* `dpm report` (the help text above). */
int cmd_report(int argc, char **argv)
{
    struct report_options o = { 0 };
    struct report_input r = { 0 };
    int help = 0, status;
    r.clock_options.reference = -1;
    r.logs = calloc((size_t)argc + 1, sizeof *r.logs);
    o.programs.elf = calloc((size_t)argc + 1, sizeof *o.programs.elf);
    status = r.logs && o.programs.elf ? report_arguments(&o, &r, argc, argv, &help) : EXIT_BAD_INPUT;
    if (help)
        fputs(report_help, stdout);
    else if (status == EXIT_OK)
        status = report_run(&o, &r);
    free(r.logs);
    free(o.programs.elf);
    return status;
}
