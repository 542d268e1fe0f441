/*
 * analysis/commands/cmd_export.c — `dpm export`: a trace in formats that
 * existing viewers read: Chrome/Perfetto trace-event JSON (a timeline per
 * process, message arrows, on one time axis: commands/export_perfetto.c),
 * Graphviz DOT (the communication graph, its hot spots in red), the
 * statistics' CSV tables (models/stats_output.c), and ShiViz's log of
 * vector timestamps (models/shiviz_log.c).
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/graph_options.h"
#include "commands/export_perfetto.h"
#include "load/table.h"
#include "models/shiviz_log.h"
#include "models/stats.h"
#include "models/stats_output.h"

static const char export_help[] =
"NAME\n"
"    dpm export - a trace as Perfetto/Chrome JSON, Graphviz DOT, CSV, a ShiViz log\n"
"\n"
"SYNOPSIS\n"
"    dpm export [--perfetto OUT.json] [--dot OUT.dot] [--csv DIR] [--shiviz OUT.log] LOG...\n"
"\n"
"DESCRIPTION\n"
"    Writes each output asked for (at least one) from the LOGs, read as\n"
"    one trace.\n"
"\n"
"    --perfetto OUT.json\n"
"        The Trace Event Format that ui.perfetto.dev, chrome://tracing and\n"
"        Chrome DevTools open: a process per machine (\"machine M\") and in it\n"
"        a thread per traced process that wrote records there (a process\n"
"        that moved has one on each machine), named by its label. Each\n"
"        SEND and RECEIVE is a 1 ns slice, a receive that waited a slice\n"
"        \"waiting\" from its RECEIVECALL to its RECEIVE (on the thread of\n"
"        its RECEIVE), every other record an instant;\n"
"        each record's fields are its args (\"time\": its machine's clock).\n"
"        A message whose SEND and RECEIVE are both in the trace is an arrow\n"
"        (a flow start and its finish, with an id of their own, 1, 2, ...);\n"
"        a message to or from a process without records has none.\n"
"        Times (ts, dur) are integer nanoseconds of guest time, written\n"
"        where the format has microseconds, so that no viewer rounds them:\n"
"        a viewer's microsecond is a guest nanosecond. The slices of a\n"
"        thread are disjoint (one that would start before the one before it\n"
"        ends, at the same nanosecond, starts at its end). Each machine's\n"
"        clock is shifted by a constant, chosen so that the most messages\n"
"        between machines arrive after they were sent (the shifts are in\n"
"        the process names and in otherData.clockShiftNs); the clocks run\n"
"        at different rates, and when some messages still arrive before\n"
"        they were sent, dpm export says how many: viewers that order a\n"
"        trace by time (Perfetto) draw no arrow for them. Events are in the\n"
"        order of time, but a flow's finish never before its start. The\n"
"        LOGs are read twice (they must not change in between): memory\n"
"        holds about 40 bytes a record, and the blocks of the LOGs whose\n"
"        records are being written.\n"
"    --dot OUT.dot\n"
"        The communication graph (DPM's \"who talks to whom\"): a box per\n"
"        traced process, an ellipse per process that was only sent to,\n"
"        grouped in a cluster per machine (one that moved with the machine\n"
"        it began on, saying where it ran); an edge per pair that talked,\n"
"        labelled with its messages and bytes, wider the more messages it\n"
"        carried and from blue to red the more bytes (the hot spots).\n"
"        Render it with: dot -Tsvg OUT.dot > OUT.svg\n"
"    --csv DIR\n"
"        The tables of `dpm stats --csv DIR` (see dpm stats --help).\n"
"    --shiviz OUT.log\n"
"        A log for ShiViz (bestchai.bitbucket.io/shiviz), which draws the\n"
"        run as a space-time diagram from vector timestamps: a line per\n"
"        event of the program history graph (a process's start, each SEND,\n"
"        RECEIVE and MIGRATE, its end), `HOST {VECTOR} EVENT`, HOST the process\n"
"        (\"ri@0.8.1\"), VECTOR its vector timestamp as JSON, EVENT what it\n"
"        is with its machine, TIME and time corrected by dpm clocks. Paste\n"
"        it into ShiViz with this regular expression (and no delimiter):\n"
"            " SHIVIZ_REGEX "\n"
"        The whole trace is loaded, as for dpm clocks.\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 bad input (a damaged log names the file and record) or\n"
"    an output that cannot be written, 2 bad usage.\n"
"\n"
"EXAMPLE\n"
"    dpm export --perfetto run1.json --dot run1.dot --csv run1-tables run1.log\n";

/* ---- Graphviz DOT ---- */

/* A process's node: a box for a traced one (with the machines it ran on
 * if it moved: it sits with the first), a dashed ellipse for the others. */
static void dot_node(FILE *f, const struct stats *st, size_t i)
{
    const struct stats_process *p = &st->processes[i];
    char label[64], machines[32];
    dpm_label(p->name, p->pid, label, sizeof label);
    fprintf(f, "    p%zu [label=\"", i + 1);
    export_label(f, label);
    if (p->traced && p->moves)
        fprintf(f, "\\n%" PRIu64 " records\\nran on machines %s\", shape=box];\n", p->records,
                stats_machines(st, p, machines, sizeof machines));
    else if (p->traced)
        fprintf(f, "\\n%" PRIu64 " records\", shape=box];\n", p->records);
    else
        fputs("\\n(not traced)\", shape=ellipse, style=dashed];\n", f);
}

/* The edges, width by messages, colour by bytes (blue: few, red: the most). */
static void dot_edges(FILE *f, const struct stats *st)
{
    uint64_t most_messages = 1, most_bytes = 1;
    for (size_t i = 0; i < st->npairs; i++) {
        most_messages = st->pairs[i].messages > most_messages ? st->pairs[i].messages : most_messages;
        most_bytes = st->pairs[i].bytes > most_bytes ? st->pairs[i].bytes : most_bytes;
    }
    for (size_t i = 0; i < st->npairs; i++) {
        const struct stats_pair *c = &st->pairs[i];
        uint32_t *from = table_find(&st->process_index, c->from, 0), *to = table_find(&st->process_index, c->to, 0);
        unsigned heat = (unsigned)(255 * c->bytes / most_bytes);
        fprintf(f, "  p%u -> p%u [label=\"%" PRIu64 " msgs\\n%" PRIu64 " bytes\", penwidth=%.2f, "
                "color=\"#%02x00%02x\", fontcolor=\"#%02x00%02x\"];\n", *from + 1, *to + 1, c->messages, c->bytes,
                1.0 + 5.0 * (double)c->messages / (double)most_messages, heat, 255 - heat, heat, 255 - heat);
    }
}

/* Write the communication graph of st into `path`. */
static void export_dot(const char *path, const struct stats *st)
{
    FILE *f = fopen(path, "w");
    if (!f)
        dpm_fail("%s: %s", path, strerror(errno));
    fprintf(f, "digraph dpm {\n  label=\"who talks to whom: %" PRIu64 " messages, %" PRIu64 " bytes; %" PRIu64
            " records lost, %" PRIu64 " missing in sequence gaps\";\n  rankdir=LR;\n", st->messages, st->bytes,
            st->lost, st->gaps);
    size_t *order = malloc(st->nprocesses * sizeof *order + 1);
    if (!order)
        dpm_fail("%s: no memory", path);
    stats_by_machine(st, order);
    for (size_t k = 0; k < st->nprocesses; k++) {
        uint32_t machine = st->processes[order[k]].machine;
        if (k == 0 || machine != st->processes[order[k - 1]].machine)
            fprintf(f, "%s  subgraph cluster_machine%" PRIu32 " {\n    label=\"machine %" PRIu32 "\";\n",
                    k ? "  }\n" : "", machine, machine);
        dot_node(f, st, order[k]);
    }
    free(order);
    fputs(st->nprocesses ? "  }\n" : "", f);
    dot_edges(f, st);
    fputs("}\n", f);
    if (ferror(f) | fclose(f))
        dpm_fail("%s: %s", path, strerror(errno));
}

/* ---- ShiViz ---- */

/* Load the logs as one trace and write its ShiViz log into `path`. */
static int export_shiviz(const char *path, char **logs, int n)
{
    struct graph_input in;
    struct clock_input c;
    struct clock_options o = { 0, -1 };
    int status = graph_load(&in, "export", logs, n);
    if (status != DPM_OK)
        return status;
    if ((status = clock_load(&c, &in, &o, "export")) == DPM_OK) {
        FILE *f = fopen(path, "w");
        if (!f)
            dpm_fail("%s: %s", path, strerror(errno));
        if (shiviz_write(f, &in.history, &c.clocks) < 0)
            dpm_fail("%s: no memory for the vector timestamps", path);
        if (ferror(f) | fclose(f))
            dpm_fail("%s: %s", path, strerror(errno));
        clock_input_free(&c);
    }
    graph_input_free(&in);
    return status;
}

int cmd_export(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, export_help))
        return DPM_OK;
    const char *perfetto = 0, *dot = 0, *csv = 0, *shiviz = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (i + 1 == argc)
            dpm_usage("export", "%s needs a file name", argv[i]);
        if (strcmp(argv[i], "--perfetto") == 0)
            perfetto = argv[++i];
        else if (strcmp(argv[i], "--dot") == 0)
            dot = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0)
            csv = argv[++i];
        else if (strcmp(argv[i], "--shiviz") == 0)
            shiviz = argv[++i];
        else
            dpm_usage("export", "unknown option '%s'", argv[i]);
    }
    if (i == argc || (!perfetto && !dot && !csv && !shiviz))
        dpm_usage("export",
                  "dpm export [--perfetto OUT.json] [--dot OUT.dot] [--csv DIR] [--shiviz OUT.log] LOG...");
    const char *outputs[] = { perfetto, dot, shiviz };
    for (size_t k = 0; k < sizeof outputs / sizeof outputs[0]; k++) {
        struct dpm_error e;
        if (outputs[k] && dpm_output_check(outputs[k], &e) != 0)
            dpm_fail("%s", e.text);
    }
    if (perfetto)
        export_perfetto(perfetto, argv + i, argc - i);
    if (dot || csv) {
        static struct stats st;
        struct dpm_error e;
        stats_init(&st);
        if (stats_read_logs(&st, argv + i, argc - i, &e) != 0 || (csv && report_csv(csv, &st, &e) != 0))
            dpm_fail("%s", e.text);
        if (dot)
            export_dot(dot, &st);
        stats_free(&st);
    }
    return shiviz ? export_shiviz(shiviz, argv + i, argc - i) : DPM_OK;
}
