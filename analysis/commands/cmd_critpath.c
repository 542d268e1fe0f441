/*
 * analysis/commands/cmd_critpath.c — `dpm critpath`: the critical path of a
 * trace (thesis §5.2.3): the processes that hold it, in order and in total,
 * and the functions it runs through, named from the programs' ELF symbol
 * tables.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/graph_options.h"
#include "load/window.h"
#include "load/programs.h"
#include "models/critpath.h"

#define SEGMENTS_SHOWN 40

static const char critpath_help[] =
    "NAME\n"
    "    dpm critpath - the critical path of a traced computation, by process and function\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm critpath [--step 1|2|3|3a] [--place NAME_OR_PID=MACHINE,... | --each-own | --all-one]\n"
    "                 [--network NAME|FILE | --delays FILE] [--elf NAME=FILE]... [--elf-dir DIR] [--plain]\n"
    "                 [--top N] [--full]\n"
    "                 LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    Finds the longest path through the program history graph (Miller's thesis, section\n"
    "    5.2.3; see dpm parallelism --help for the graph and the steps): the chain of\n"
    "    computation and messages that decided how long the computation took, t_max. Prints\n"
    "    the processes on it in order (consecutive arcs within one process merged), how long\n"
    "    each holds it in all and its share of t_max, the time on message deliveries and on\n"
    "    requests outside the trace, and the functions on it: each arc within a process is\n"
    "    charged to the function that made the kernel call ending it. The record that ends it\n"
    "    holds the return address of the call (the instruction after it, in the caller), and\n"
    "    the function holding that address - 1 is the caller even when the call was its last\n"
    "    instruction; records the process did not write by a call of its own (MESSAGEQUEUED,\n"
    "    STOPPROCESS, ...) hold where it left user mode, whose function is named. Functions are\n"
    "    named from the program's ELF symbol table when one is given; an address none holds\n"
    "    shows as `pc 0x...`, the record's PC. Times are guest nanoseconds.\n"
    "\n"
    "    The time on requests outside the trace (arcs weighted by the time their answer took,\n"
    "    thesis Fig. 5.3B) is given by the process each request went to, and when it is more\n"
    "    than half of t_max a warning says so, what to meter and which window to take\n"
    "    (--window, --window-of: see dpm --help); t_max and P of the plain history graph,\n"
    "    without those arcs (Fig. 5.3A), follow the path's own.\n"
    "\n"
    "OPTIONS\n"
    "    --step S     the weights: 1 no delivery time, no contention; 2 (default) delivery\n"
    "                 times for the placement; 3 contention by the elapsed-time simulation;\n"
    "                 3a contention by the thesis's Appendix A algorithm\n"
    "    --place, --each-own, --all-one, --network, --delays\n"
    "                 the placement and the network's delivery times, as for dpm parallelism\n"
    "    --elf NAME=FILE\n"
    "                 the program of the processes named NAME (their CREATEPROCESS name) is\n"
    "                 the ELF file FILE; may be repeated\n"
    "    --elf-dir DIR\n"
    "                 look for NAME.elf under DIR, up to 4 levels down (the build puts them in\n"
    "                 build/user, build/fs, build/servers, build/user/tests, build/user/bench)\n"
    "    --plain      the path of the plain history graph (thesis Fig. 5.3A): requests outside\n"
    "                 the trace take no time\n"
    "    --top N      list the N functions holding the path longest (default 20; 0: all)\n"
    "    --full       list every segment of the path (default: the first 40)\n"
    "    --help       this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log, the table or an ELF file could not be read or used; 2 usage.\n";

struct critpath_options {
    struct placement_options placement;
    struct program_options programs;
    enum parallel_step step;
    enum history_graph graph;
    long top;
    int full;
};


static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* Who holds the path: each process in all, then the path in order. */
static void print_processes(const struct critpath *c, const struct graph_input *in, int full)
{
    char label[96];
    printf("\nprocesses on the path\n  %-28s %16s %8s %9s\n", "process", "holds (ns)", "share", "segments");
    for (uint32_t p = 0; p < in->history.nprocesses; p++) {
        uint32_t segments = 0;
        for (uint32_t i = 0; i < c->nsegments; i++)
            segments += c->segment[i].process == p;
        if (!segments)
            continue;
        dpm_process_label(&in->trace, in->trace.processes[p].pid, label, sizeof label);
        printf("  %-28s %16" PRIu64 " %7.1f%% %9u\n", label, c->held[p], share(c->held[p], c->t_max), segments);
    }
    printf("  %-28s %16" PRIu64 " %7.1f%%\n", "(message delivery)", c->delivery, share(c->delivery, c->t_max));
    printf("  %-28s %16" PRIu64 " %7.1f%%\n", "(outside the trace)", c->outside, share(c->outside, c->t_max));
    for (uint32_t k = 0; k < c->outside_by.nprocesses && k < OUTSIDE_NAMED; k++) {
        char asked[96];
        snprintf(asked, sizeof asked, "  in requests to %s", dpm_label("", c->outside_by.named[k].pid, label,
                                                                         sizeof label));
        printf("  %-28s %16" PRIu64 " %7.1f%% %9" PRIu32 " requests\n", asked, c->outside_by.named[k].ns,
               share(c->outside_by.named[k].ns, c->t_max), c->outside_by.named[k].requests);
    }
    if (c->outside_by.nprocesses > OUTSIDE_NAMED)
        printf("    ... and %" PRIu32 " other processes outside the trace\n", c->outside_by.nprocesses - OUTSIDE_NAMED);
    printf("\nthe path in order (%u segments)\n", c->nsegments);
    for (uint32_t i = 0; i < c->nsegments && (full || i < SEGMENTS_SHOWN); i++) {
        const struct critpath_segment *s = &c->segment[i];
        if (s->came_by != HX_NONE)
            printf("  %5s  %-28s %16" PRIu64 " ns\n", "",
                   s->came_by == HX_MESSAGE ? "  then a message" : "  then outside the trace", s->came_weight);
        dpm_process_label(&in->trace, in->trace.processes[s->process].pid, label, sizeof label);
        printf("  %5u  %-28s %16" PRIu64 " ns  (%u arcs)\n", i + 1, label, s->held, s->arcs);
    }
    if (!full && c->nsegments > SEGMENTS_SHOWN)
        printf("  ... %u more (--full lists them)\n", c->nsegments - SEGMENTS_SHOWN);
}

/* The functions on the path, most time first. 0, or 1 (no memory). */
static int print_functions(const struct critpath *c, const struct graph_input *in, struct program_symbols *s,
                           long top)
{
    struct critpath_function *f;
    uint32_t n;
    char label[96], name[64];
    if (critpath_functions(c, &in->history, programs_name_pc, s, &f, &n) < 0)
        return EXIT_BAD_INPUT;
    printf("\nfunctions on the path (where each computation ended)\n  %-32s %-24s %16s %8s\n", "function",
           "process", "holds (ns)", "share");
    for (uint32_t i = 0; i < n && (top == 0 || i < (uint64_t)top); i++) {
        dpm_process_label(&in->trace, in->trace.processes[f[i].process].pid, label, sizeof label);
        if (f[i].name)
            snprintf(name, sizeof name, "%s", f[i].name);
        else
            snprintf(name, sizeof name, "pc 0x%" PRIx64, f[i].start);
        printf("  %-32s %-24s %16" PRIu64 " %7.1f%%\n", name, label, f[i].held, share(f[i].held, c->t_max));
    }
    if (top && n > (uint64_t)top)
        printf("  ... %u more (--top 0 lists them)\n", n - (uint32_t)top);
    free(f);
    return EXIT_OK;
}

/* The step --step names, or 0. */
static enum parallel_step step_named(const char *value)
{
    if (strcmp(value, "1") == 0)
        return STEP_UPPER_BOUND;
    if (strcmp(value, "2") == 0)
        return STEP_DELIVERY;
    if (strcmp(value, "3") == 0)
        return STEP_CONTENTION_SIMULATED;
    if (strcmp(value, "3a") == 0)
        return STEP_CONTENTION_THESIS;
    return 0;
}

/* One of critpath's own options at argv[*i]: 1 taken, 0 not one, -1 bad (said). */
static int critpath_option(struct critpath_options *o, int argc, char **argv, int *i)
{
    int missing = 0;
    const char *value;
    if (strcmp(argv[*i], "--full") == 0)
        return o->full = 1;
    if (strcmp(argv[*i], "--plain") == 0) {
        o->graph = GRAPH_PLAIN;
        return 1;
    }
    int taken = program_option(&o->programs, "critpath", argc, argv, i);
    if (taken == 0)
        taken = top_option(&o->top, "critpath", argc, argv, i);
    if (taken != 0)
        return taken;
    if ((value = graph_option(argc, argv, i, "--step", &missing))) {
        if ((o->step = step_named(value)))
            return 1;
        fprintf(stderr, "dpm critpath: --step %s: expected 1, 2, 3 or 3a\n", value);
        return -1;
    }
    if (missing)
        fprintf(stderr, "dpm critpath: %s needs a value (see --help)\n", argv[*i]);
    return missing ? -1 : 0;
}

/* A placement option or one of critpath's own. */
static int critpath_take(void *options, int argc, char **argv, int *i)
{
    struct critpath_options *o = options;
    int taken = placement_option(&o->placement, argv[0], argc, argv, i);
    return taken != 0 ? taken : critpath_option(o, argc, argv, i);
}

/* Read the command line: 0 to go on, or the exit status (--help: 0 after printing it). */
static int critpath_arguments(struct critpath_options *o, int argc, char **argv, char **logs, int *nlogs, int *help)
{
    return graph_arguments("critpath", argc, argv, critpath_take, o, logs, nlogs, help);
}

/* The path's summary: its step and graph, t_max and P, the window, the
 * placement, and P on the other graph of Fig. 5.3. 0, or 1 with err. */
static int print_summary(const struct critpath_options *o, const struct critpath *c, const struct graph_input *in,
                         const uint32_t *machine, const struct delay_table *d, const char *how, double *p_plain)
{
    struct parallel_result plain;
    char err[512];
    uint64_t total = history_total_cpu(&in->history);
    *p_plain = c->t_max ? (double)total / (double)c->t_max : 0.0;
    printf("critical path (thesis 5.2.3) under step %s%s\n", parallel_step_name(o->step),
           o->graph == GRAPH_PLAIN ? ", on the plain history graph (thesis Fig. 5.3A)" : "");
    printf("t_max = %" PRIu64 " ns over %u arcs; T = %" PRIu64 " ns; P = %.3f\n", c->t_max, c->narcs, total, *p_plain);
    if (dpm_window_get())
        printf("window: %s\n", dpm_window_describe());
    if (o->step != STEP_UPPER_BOUND)
        printf("placement: %s\n", how);
    if (o->graph == GRAPH_PLAIN || !in->history.outside_arcs)
        return EXIT_OK;
    if (parallel_step_run(&plain, 0, &in->history, o->step, GRAPH_PLAIN, machine, d, err, sizeof err) < 0) {
        fprintf(stderr, "dpm critpath: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    printf("on the plain history graph (thesis Fig. 5.3A, requests outside the trace left out): t_max = %" PRIu64
           " ns, P = %.3f\n", plain.t_max, plain.parallelism);
    *p_plain = plain.parallelism;
    return EXIT_OK;
}

/* Find the path and print it all. */
static int critpath_report(const struct critpath_options *o, struct graph_input *in, const uint32_t *machine,
                           const struct delay_table *d, const char *how)
{
    struct critpath c;
    struct program_symbols programs = { 0 };
    char err[512], advice[2048];
    double p_plain;
    int status = programs_load(&programs, &o->programs, &in->trace, "critpath");
    if (status == EXIT_OK && critpath_find(&c, &in->history, o->step, o->graph, machine, d, err, sizeof err) < 0) {
        fprintf(stderr, "dpm critpath: %s\n", err);
        status = EXIT_BAD_INPUT;
    } else if (status == EXIT_OK) {
        status = print_summary(o, &c, in, machine, d, how, &p_plain);
        if (status == EXIT_OK) {
            print_processes(&c, in, o->full);
            uint64_t total = history_total_cpu(&in->history);
            outside_advice(advice, sizeof advice, &c.outside_by, parallel_step_short(o->step),
                           c.t_max ? (double)total / (double)c.t_max : 0.0, p_plain, &in->history, dpm_window_asked());
            if (advice[0])
                printf("\nwarning: %s\n", advice);
            status = print_functions(&c, in, &programs, o->top);
            graph_print_notes(in);
        }
        critpath_free(&c);
    }
    programs_free(&programs);
    return status;
}

/* `dpm critpath` (the help text above). */
int cmd_critpath(int argc, char **argv)
{
    struct critpath_options o = { .step = STEP_DELIVERY, .top = 20 };
    struct graph_input in;
    struct delay_table d;
    char how[512];
    int nlogs = 0, help = 0, status;
    char **logs = calloc((size_t)argc + 1, sizeof *logs);
    o.programs.elf = calloc((size_t)argc + 1, sizeof *o.programs.elf);
    status = logs && o.programs.elf ? critpath_arguments(&o, argc, argv, logs, &nlogs, &help) : EXIT_BAD_INPUT;
    if (help)
        fputs(critpath_help, stdout);
    if (status == EXIT_OK && !help && (status = graph_load(&in, "critpath", logs, nlogs)) == EXIT_OK) {
        uint32_t *machine = malloc((in.history.nprocesses + 1) * sizeof *machine);
        status = machine ? placement_choose(&o.placement, "critpath", &in, machine, how, sizeof how, &d)
                         : EXIT_BAD_INPUT;
        if (status == EXIT_OK)
            status = critpath_report(&o, &in, machine, &d, how);
        free(machine);
        graph_input_free(&in);
    }
    free(logs);
    free(o.programs.elf);
    return status;
}
