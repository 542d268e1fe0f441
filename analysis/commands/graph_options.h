/*
 * analysis/commands/graph_options.h — what the subcommands parallelism,
 * critpath and causality share: reading their options, loading the logs
 * into a history graph, naming processes on the command line, and choosing
 * a placement and a delivery-time table. They print `dpm COMMAND: what is
 * wrong`.
 *
 * The subcommands themselves (dpm.c dispatches to them; the core's
 * commands/commands.h declares them too): argv[0] is the subcommand's name;
 * each returns 0, 1 (bad input: a log or file that cannot be read or used) or
 * 2 (usage).
 */
#ifndef ANALYSIS_COMMANDS_GRAPH_OPTIONS_H
#define ANALYSIS_COMMANDS_GRAPH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "load/event.h"
#include "load/programs.h"
#include "models/arrivals.h"
#include "models/causality.h"
#include "models/clocks.h"
#include "models/history.h"
#include "models/parallel.h"

int cmd_parallelism(int argc, char **argv);
int cmd_critpath(int argc, char **argv);
int cmd_causality(int argc, char **argv);
int cmd_clocks(int argc, char **argv);
int cmd_waitstates(int argc, char **argv);

/* Exit statuses. */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

/* If argv[*i] is the option `name` ("--place"), its value: the next
 * argument (*i moves on) or what follows '='; NULL otherwise. *missing
 * is set when the option is there without a value. */
const char *graph_option(int argc, char **argv, int *i, const char *name, int *missing);

/* A subcommand's own options: if argv[*i] is one of them, take it (and its
 * value: *i moves on) and return 1; 0 if it is not one; -1 if its value is
 * missing (said on stderr). */
typedef int (*graph_option_fn)(void *options, int argc, char **argv, int *i);

/* Read a subcommand's command line: every argument is an option `take`
 * takes, --help or -h, or a log (into logs[(*nlogs)++]; logs has room for
 * argc). EXIT_OK to go on (with *help set after --help), or EXIT_USAGE
 * after saying why on stderr (`dpm COMMAND: unknown option ...`). */
int graph_arguments(const char *command, int argc, char **argv, graph_option_fn take, void *options, char **logs,
                    int *nlogs, int *help);

/* The placement options of parallelism and critpath. */
struct placement_options {
    const char *place;         /* --place NAME_OR_PID=MACHINE,... */
    int each_own, all_one;     /* --each-own, --all-one */
    const char *delays;        /* --delays FILE */
    const char *network;       /* --network NAME|FILE */
};
/* If argv[*i] is one of those options, take it: 1; 0 if it is not one; -1
 * if its value is missing (said on stderr). */
int placement_option(struct placement_options *o, const char *command, int argc, char **argv, int *i);

/* A loaded trace and its graph. */
struct graph_input {
    struct dpm_trace trace;
    struct history history;
};
/* Load logs[0..n) and build the graph; on failure say why and return 1. */
int graph_load(struct graph_input *in, const char *command, char **logs, int n);
void graph_input_free(struct graph_input *in);

/* The traced processes `what` names (a program name, which may name
 * several, a pid as dpm prints it or as a number): their indices into
 * out[0..cap), how many, or -1 if none. */
int graph_select(const struct dpm_trace *t, const char *what, uint32_t *out, size_t cap);

/* machine[] for the options (measured, unless --each-own, --all-one or
 * --place say otherwise), its description into how[0..cap), and the
 * delivery table into *d. 0, or the exit status after saying why. */
int placement_choose(const struct placement_options *o, const char *command, const struct graph_input *in,
                     uint32_t *machine, char *how, size_t cap, struct delay_table *d);
/* Where placement machine[] puts process p, as text into out[0..cap): a
 * machine's number, or as measured (dpm_process_machines). */
const char *placement_text(const struct graph_input *in, const uint32_t *machine, uint32_t p, char *out, size_t cap);

/* The roles that --server NAME_OR_PID,... and --system NAME_OR_PID,...
 * (system may be NULL) give the processes of t, for causality_analyze:
 * r->traced made (one per process of t), the system processes outside the
 * trace (M.S.G) in r->system_pids. 0, or the exit status after printing
 * `dpm COMMAND: why`. Release r after either. */
int causality_roles_choose(struct causality_roles *r, const struct dpm_trace *t, const char *command,
                           const char *servers, const char *system);
void causality_roles_release(struct causality_roles *r);

/* The clock model's options of clocks, waitstates and report:
 * --min-delay NS and --reference MACHINE (models/clocks.h). */
struct clock_options {
    uint64_t min_delay;        /* 0 unless given */
    int64_t reference;         /* -1: the lowest machine */
};
/* If argv[*i] is one of those options, take it: 1; 0 if it is not one; -1
 * if its value is missing or not a number (said on stderr). */
int clock_option(struct clock_options *o, const char *command, int argc, char **argv, int *i);

/* The program options of critpath and waitstates: --elf-dir DIR and
 * --elf NAME=FILE (load/programs.h). If argv[*i] is one, take it: 1; 0 if
 * it is not one; -1 if its value is missing or not NAME=FILE (said). */
int program_option(struct program_options *o, const char *command, int argc, char **argv, int *i);

/* --top N (a count, 0 or more) into *top: 1, 0 or -1 as above. */
int top_option(long *top, const char *command, int argc, char **argv, int *i);

/* The arrivals and clock offsets of a loaded graph. */
struct clock_input {
    struct arrivals arrivals;
    struct clock_model clocks;
};
/* Find them for the options; on failure say why (`dpm COMMAND: ...`) and
 * return the exit status. */
int clock_load(struct clock_input *c, const struct graph_input *in, const struct clock_options *o,
               const char *command);
void clock_input_free(struct clock_input *c);

/* Print what the graph could not take from the trace (unmatched messages, records without PROCTIME). */
void graph_print_notes(const struct graph_input *in);

#endif
