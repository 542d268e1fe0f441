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

static const char parallelism_help[] =
    "NAME\n"
    "    dpm parallelism - how parallel a traced computation was, and would be elsewhere\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm parallelism [--place NAME_OR_PID=MACHINE,... | --each-own | --all-one]\n"
    "                    [--delays FILE] [--csv] LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    Builds the program history graph of the logs (Miller's thesis, section 5.2.3): a node\n"
    "    per SEND and RECEIVE, arcs within a process weighted by the CPU used between them\n"
    "    (PROCTIME), an arc per message from its SEND to its RECEIVE, and an arc from a request\n"
    "    to a process outside the trace to its reply, weighted by the time between them.\n"
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
    "OPTIONS\n"
    "    --place NAME_OR_PID=MACHINE,...\n"
    "           put these processes on these machines (numbers), the others as measured; a\n"
    "           name (from CREATEPROCESS) places every process of that name\n"
    "    --each-own   every process on a machine of its own\n"
    "    --all-one    every process on one machine\n"
    "    --delays FILE\n"
    "           the delivery-time table: lines `SIZE LOCAL_NS REMOTE_NS`, sizes rising, `#`\n"
    "           comments; times between two sizes are interpolated linearly, beyond the table\n"
    "           the nearest row's. Default: this system's, measured by `make bench` (netbench):\n"
    "           1 byte 760 / 97400 ns, 10: 780 / 82600, 100: 820 / 80100, 1000: 1110 / 93100\n"
    "    --csv        print `step,T,t_max,P` lines only\n"
    "    --help       this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log or the table could not be read or used; 2 usage.\n";

/* The placement, process by process. */
static void print_placement(const struct graph_input *in, const uint32_t *machine, const char *how)
{
    char label[96];
    printf("placement: %s\n", how);
    printf("  %-28s %9s %7s\n", "process", "measured", "placed");
    for (uint32_t p = 0; p < in->history.nprocesses; p++) {
        const struct dpm_process *pr = &in->trace.processes[p];
        dpm_process_label(&in->trace, pr->pid, label, sizeof label);
        printf("  %-28s %9u %7u\n", label, pr->machine, machine[p]);
    }
}

static void print_delays(const struct delay_table *d, const char *path)
{
    printf("delivery times (guest ns): %s\n", path ? path : "built in, measured by `make bench` (netbench)");
    printf("  %10s %12s %12s\n", "size", "local", "remote");
    for (size_t i = 0; i < d->nrows; i++)
        printf("  %10" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", d->row[i].size, d->row[i].local_ns,
               d->row[i].remote_ns);
}

/* Run the four steps and print them. */
static int print_steps(const struct graph_input *in, const uint32_t *machine, const struct delay_table *d, int csv)
{
    char err[512];
    if (csv)
        printf("step,T,t_max,P\n");
    else
        printf("\n%-46s %16s %16s %8s\n", "step", "T (ns)", "t_max (ns)", "P");
    for (int step = STEP_UPPER_BOUND; step <= STEP_CONTENTION_SIMULATED; step++) {
        struct parallel_result r;
        if (parallel_step_run(&r, 0, &in->history, (enum parallel_step)step, machine, d, err, sizeof err) < 0) {
            fprintf(stderr, "dpm parallelism: %s\n", err);
            return EXIT_BAD_INPUT;
        }
        if (csv)
            printf("\"%s\",%" PRIu64 ",%" PRIu64 ",%.4f\n", parallel_step_name((enum parallel_step)step),
                   r.total_cpu, r.t_max, r.parallelism);
        else
            printf("%-46s %16" PRIu64 " %16" PRIu64 " %8.3f\n", parallel_step_name((enum parallel_step)step),
                   r.total_cpu, r.t_max, r.parallelism);
    }
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
        print_placement(&in, machine, how);
        print_delays(&d, o.delays);
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
