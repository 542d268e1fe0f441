/*
 * analysis/commands/cmd_parallelism.c — `dpm parallelism`: DPM's measure of
 * parallelism in its three steps (thesis §5.2.3, Appendix A) for the measured
 * placement or a predicted one, as a table or CSV.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/graph_options.h"
#include "load/window.h"

static const char parallelism_help[] =
    "NAME\n"
    "    dpm parallelism - how parallel a traced computation was, and would be elsewhere\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm parallelism [--place NAME_OR_PID=MACHINE,... | --each-own | --all-one]\n"
    "                    [--network NAME|FILE | --delays FILE] [--csv] LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    Builds the program history graph of the logs (Miller's thesis, section 5.2.3): a node\n"
    "    per SEND and RECEIVE (and per MIGRATE, where a process moved), arcs within a process\n"
    "    weighted by the CPU used between them (PROCTIME), an arc per message from its SEND to\n"
    "    its RECEIVE, and an arc from a request to a process outside the trace to its reply,\n"
    "    weighted by the time between them. As measured, a process runs where its records were\n"
    "    written, record by record: one that moved counts on each machine it was on, from its\n"
    "    MIGRATE record on (a move's own time is on no arc).\n"
    "    T is the CPU time of all processes, t_max the longest path (the critical path), and\n"
    "    the parallelism P = T / t_max, computed in DPM's three steps:\n"
    "      1  upper bound: messages take no time, no process waits for a CPU;\n"
    "      2  each message takes the delivery time for its size, local or remote under the\n"
    "         placement (a table measured by a ping-pong benchmark, not the trace);\n"
    "      3  processes placed on one machine share its CPU. Reported twice: by the thesis's\n"
    "         own algorithm (Appendix A; its delays count down in CPU time, and a stall where\n"
    "         every process waits is broken by letting the nearest delivery arrive) and by a\n"
    "         simulation in elapsed time (each of k runnable processes runs at 1/k speed).\n"
    "    A placement other than the measured one predicts P for it (thesis Figs. 5.16-5.17).\n"
    "    All times are guest nanoseconds (one per instruction under -icount).\n"
    "\n"
    "    Each step is given on both graphs of the thesis's Fig. 5.3: with an arc for each\n"
    "    request to a process outside the trace, weighted by the time its answer took (B, the\n"
    "    thesis's own: the table's `outside` column is the share of t_max on such arcs, and\n"
    "    the lines after it name the processes asked), and the plain history graph without\n"
    "    them (A: that time is lost). When more than half of a step's t_max is outside the\n"
    "    trace, a warning says so, what to meter, and which window to take (--window,\n"
    "    --window-of: see dpm --help).\n"
    "\n"
    "OPTIONS\n"
    "    --place NAME_OR_PID=MACHINE,...\n"
    "           put these processes on these machines (numbers), the others as measured; a\n"
    "           name (from CREATEPROCESS) places every process of that name\n"
    "    --each-own   every process on a machine of its own\n"
    "    --all-one    every process on one machine\n"
    "    --network NAME|FILE\n"
    "           the delivery times of steps 2 and 3: a network shipped with dpm by its NAME\n"
    "           (here, this system's, measured by `make bench`: the default; vax, DEMOS/MP's on\n"
    "           VAX-11/750s, thesis Fig. 5.11; infiniband; gbe), or a network FILE (a path, with\n"
    "           a '/' or a '.'): lines `SIZE LOCAL_NS REMOTE_NS` (bytes, then guest ns per\n"
    "           message on one machine and between two), sizes rising, `#` comments, `# title:\n"
    "           TEXT` naming it. Times between two sizes are interpolated linearly, beyond the\n"
    "           table the nearest row's. Each shipped file, in analysis/networks/, says where its\n"
    "           figures come from; `make bench` writes this host's as build/net/here.tsv\n"
    "    --delays FILE\n"
    "           a network file, as --network FILE\n"
    "    --csv        print `step,T,t_max,P,outside_ns,t_max_plain,P_plain` lines only: each\n"
    "                 step on graph B, its t_max's time outside the trace, and on graph A\n"
    "    --help       this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log or the table could not be read or used; 2 usage.\n";

/* The placement, process by process. */
static void print_placement(const struct graph_input *in, const uint32_t *machine, const char *how)
{
    char label[96], measured[64], placed[64];
    printf("placement: %s\n", how);
    printf("  %-28s %9s %7s\n", "process", "measured", "placed");
    for (uint32_t p = 0; p < in->history.nprocesses; p++) {
        const struct dpm_process *pr = &in->trace.processes[p];
        dpm_process_label(&in->trace, pr->pid, label, sizeof label);
        printf("  %-28s %9s %7s\n", label, dpm_process_machines(&in->trace, pr, measured, sizeof measured),
               placement_text(in, machine, p, placed, sizeof placed));
    }
}

static void print_delays(const struct delay_table *d)
{
    if (strcmp(d->name, d->path) != 0)
        printf("delivery times (guest ns): network %s (%s)%s%s\n", d->name, d->path, d->title[0] ? ": " : "",
               d->title);
    else
        printf("delivery times (guest ns): network file %s%s%s\n", d->path, d->title[0] ? ": " : "", d->title);
    printf("  %10s %12s %12s\n", "size", "local", "remote");
    for (size_t i = 0; i < d->nrows; i++)
        printf("  %10" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", d->row[i].size, d->row[i].local_ns,
               d->row[i].remote_ns);
}

/* The steps' table: each step on one graph, with the share of its t_max
 * outside the trace when `outside` is set. */
static void print_table(const struct parallel_result *r, int outside)
{
    printf("%-46s %16s %16s %8s%s\n", "step", "T (ns)", "t_max (ns)", "P", outside ? "  outside" : "");
    for (int i = 0; i < PARALLEL_STEPS; i++) {
        printf("%-46s %16" PRIu64 " %16" PRIu64 " %8.3f", parallel_step_name((enum parallel_step)(i + 1)),
               r[i].total_cpu, r[i].t_max, r[i].parallelism);
        if (outside)
            printf(" %7.1f%%", outside_percent(&r[i].outside));
        putchar('\n');
    }
}

/* Each step's time outside the trace by the process asked. */
static void print_outside(const struct parallel_steps *s)
{
    char label[64];
    printf("time outside the trace on the critical path, by the process asked (share of that step's t_max):\n");
    for (int i = 0; i < PARALLEL_STEPS; i++) {
        const struct outside_share *o = &s->elapsed[i].outside;
        printf("  %s: %" PRIu64 " ns in %" PRIu32 " requests%s", parallel_step_short((enum parallel_step)(i + 1)),
               o->ns, o->requests, o->nprocesses ? ":" : "");
        for (uint32_t k = 0; k < o->nprocesses && k < OUTSIDE_NAMED; k++)
            printf("%s %s %.1f%%", k ? "," : "", dpm_label("", o->named[k].pid, label, sizeof label),
                   o->t_max ? 100.0 * (double)o->named[k].ns / (double)o->t_max : 0.0);
        printf("%s\n", o->nprocesses > OUTSIDE_NAMED ? ", ..." : "");
    }
}

/* Run the steps on both graphs of Fig. 5.3 and print them. */
static int print_steps(const struct graph_input *in, const uint32_t *machine, const struct delay_table *d, int csv)
{
    static struct parallel_steps s;
    char err[512], advice[2048];
    if (parallel_steps_run(&s, &in->history, machine, d, err, sizeof err) < 0) {
        fprintf(stderr, "dpm parallelism: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    if (csv) {
        printf("step,T,t_max,P,outside_ns,t_max_plain,P_plain\n");
        for (int i = 0; i < PARALLEL_STEPS; i++)
            printf("\"%s\",%" PRIu64 ",%" PRIu64 ",%.4f,%" PRIu64 ",%" PRIu64 ",%.4f\n",
                   parallel_step_name((enum parallel_step)(i + 1)), s.elapsed[i].total_cpu, s.elapsed[i].t_max,
                   s.elapsed[i].parallelism, s.elapsed[i].outside.ns, s.plain[i].t_max, s.plain[i].parallelism);
        return EXIT_OK;
    }
    if (!in->history.outside_arcs) {
        putchar('\n');
        print_table(s.elapsed, 1);
        printf("no request went outside the trace: the plain history graph (thesis Fig. 5.3A) gives the same\n");
        return EXIT_OK;
    }
    printf("\nwith each request outside the trace an arc weighted by its elapsed time (thesis Fig. 5.3B)\n");
    print_table(s.elapsed, 1);
    print_outside(&s);
    printf("\non the plain history graph: requests outside the trace left out (thesis Fig. 5.3A)\n");
    print_table(s.plain, 0);
    parallel_steps_advice(advice, sizeof advice, &s, &in->history, dpm_window_asked());
    if (advice[0])
        printf("\nwarning: %s\n", advice);
    return EXIT_OK;
}

struct parallelism_command_line {
    struct placement_options *placement;
    int csv;                   /* --csv */
};

/* A placement option, or --csv. */
static int parallelism_take(void *line, int argc, char **argv, int *i)
{
    struct parallelism_command_line *l = line;
    if (strcmp(argv[*i], "--csv") == 0)
        return l->csv = 1;
    return placement_option(l->placement, argv[0], argc, argv, i);
}

/* `dpm parallelism` (the help text above). */
int cmd_parallelism(int argc, char **argv)
{
    struct placement_options o = { 0 };
    struct graph_input in;
    struct delay_table d;
    char how[512];
    int csv = 0, nlogs = 0, status;
    char **logs = calloc((size_t)argc + 1, sizeof *logs);
    if (!logs)
        return EXIT_BAD_INPUT;
    struct parallelism_command_line line = { &o, 0 };
    int help = 0;
    status = graph_arguments("parallelism", argc, argv, parallelism_take, &line, logs, &nlogs, &help);
    csv = line.csv;
    if (help)
        fputs(parallelism_help, stdout);
    if (status != EXIT_OK || help) {
        free(logs);
        return status;
    }
    if ((status = graph_load(&in, "parallelism", logs, nlogs)) != EXIT_OK) {
        free(logs);
        return status;
    }
    uint32_t *machine = malloc((in.history.nprocesses + 1) * sizeof *machine);
    status = machine ? placement_choose(&o, "parallelism", &in, machine, how, sizeof how, &d) : EXIT_BAD_INPUT;
    if (status == EXIT_OK && !csv) {
        printf("parallelism of %zu records, %u processes, %" PRIu64 " message arcs, %" PRIu64
               " requests outside the trace (thesis 5.2.3: P = T / t_max)\n",
               in.trace.nevents, in.history.nprocesses, in.history.message_arcs, in.history.outside_arcs);
        if (dpm_window_get())
            printf("window: %s\n", dpm_window_describe());
        print_placement(&in, machine, how);
        print_delays(&d);
    }
    if (status == EXIT_OK)
        status = print_steps(&in, machine, &d, csv);
    if (status == EXIT_OK && !csv)
        graph_print_notes(&in);
    free(machine);
    free(logs);
    graph_input_free(&in);
    return status;
}
