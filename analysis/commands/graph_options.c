/*
 * analysis/commands/graph_options.c — options, loading and process names
 * shared by the subcommands parallelism, critpath and causality
 * (commands/graph_options.h).
 */
#define _POSIX_C_SOURCE 200809L   /* strdup, strtok_r */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/graph_options.h"
#include "load/window.h"

/* The value of option `name` at argv[*i] (commands/graph_options.h). */
const char *graph_option(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != 0)
        return 0;
    if (*i + 1 >= argc) {
        *missing = 1;
        return 0;
    }
    return argv[++*i];
}

/* Read a subcommand's command line (commands/graph_options.h). */
int graph_arguments(const char *command, int argc, char **argv, graph_option_fn take, void *options, char **logs,
                    int *nlogs, int *help)
{
    for (int i = 1; i < argc; i++) {
        int taken = take(options, argc, argv, &i);
        if (taken < 0)
            return EXIT_USAGE;
        if (taken > 0)
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help = 1;
            return EXIT_OK;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "dpm %s: unknown option %s (see --help)\n", command, argv[i]);
            return EXIT_USAGE;
        }
        logs[(*nlogs)++] = argv[i];
    }
    return EXIT_OK;
}

/* Take a placement option (commands/graph_options.h). */
int placement_option(struct placement_options *o, const char *command, int argc, char **argv, int *i)
{
    int missing = 0;
    const char *value;
    if (strcmp(argv[*i], "--each-own") == 0)
        return o->each_own = 1;
    if (strcmp(argv[*i], "--all-one") == 0)
        return o->all_one = 1;
    if ((value = graph_option(argc, argv, i, "--place", &missing)))
        o->place = value;
    else if ((value = graph_option(argc, argv, i, "--delays", &missing)))
        o->delays = value;
    else if ((value = graph_option(argc, argv, i, "--network", &missing)))
        o->network = value;
    if (missing)
        fprintf(stderr, "dpm %s: %s needs a value (see --help)\n", command, argv[*i]);
    return missing ? -1 : value != 0;
}

/* Take a clock option (commands/graph_options.h). */
int clock_option(struct clock_options *o, const char *command, int argc, char **argv, int *i)
{
    int missing = 0, reference = 0;
    const char *name = argv[*i], *value = graph_option(argc, argv, i, "--min-delay", &missing);
    char *end;
    if (!value && !missing) {
        value = graph_option(argc, argv, i, "--reference", &missing);
        reference = 1;
    }
    if (!value) {
        if (missing)
            fprintf(stderr, "dpm %s: %s needs a value (see --help)\n", command, name);
        return missing ? -1 : 0;
    }
    errno = 0;
    unsigned long long n = strtoull(value, &end, 10);
    if (errno || end == value || *end || value[0] == '-' || (reference && n > UINT32_MAX)) {
        fprintf(stderr, "dpm %s: %s %s: expected %s\n", command, reference ? "--reference" : "--min-delay", value,
                reference ? "a machine number" : "a time in ns");
        return -1;
    }
    if (reference)
        o->reference = (int64_t)n;
    else
        o->min_delay = n;
    return 1;
}

/* Take a program option (commands/graph_options.h). */
int program_option(struct program_options *o, const char *command, int argc, char **argv, int *i)
{
    int missing = 0;
    const char *name = argv[*i], *value;
    if ((value = graph_option(argc, argv, i, "--elf-dir", &missing))) {
        o->elf_dir = value;
        return 1;
    }
    if ((value = graph_option(argc, argv, i, "--elf", &missing))) {
        if (strchr(value, '=')) {
            o->elf[o->nelf++] = value;
            return 1;
        }
        fprintf(stderr, "dpm %s: --elf %s: expected NAME=FILE\n", command, value);
        return -1;
    }
    if (missing)
        fprintf(stderr, "dpm %s: %s needs a value (see --help)\n", command, name);
    return missing ? -1 : 0;
}

/* Take --top (commands/graph_options.h). */
int top_option(long *top, const char *command, int argc, char **argv, int *i)
{
    int missing = 0;
    const char *name = argv[*i], *value = graph_option(argc, argv, i, "--top", &missing);
    char *end;
    if (!value) {
        if (missing)
            fprintf(stderr, "dpm %s: %s needs a value (see --help)\n", command, name);
        return missing ? -1 : 0;
    }
    *top = strtol(value, &end, 10);
    if (end != value && !*end && *top >= 0)
        return 1;
    fprintf(stderr, "dpm %s: --top %s: expected a number\n", command, value);
    return -1;
}

/* Load the logs and build the history graph (commands/graph_options.h). */
int graph_load(struct graph_input *in, const char *command, char **logs, int n)
{
    struct dpm_error e;
    char err[512];
    memset(in, 0, sizeof *in);
    if (n == 0) {
        fprintf(stderr, "dpm %s: no trace log named (see --help)\n", command);
        return EXIT_USAGE;
    }
    if (dpm_trace_load(&in->trace, (const char *const *)logs, n, &e) < 0) {
        fprintf(stderr, "dpm %s: %s\n", command, e.text);
        return EXIT_BAD_INPUT;
    }
    if (history_build(&in->history, &in->trace, err, sizeof err) < 0) {
        fprintf(stderr, "dpm %s: %s: %s\n", command, logs[0], err);
        dpm_trace_free(&in->trace);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

void graph_input_free(struct graph_input *in)
{
    history_free(&in->history);
    dpm_trace_free(&in->trace);
}

/* The arrivals and clock offsets (commands/graph_options.h). */
int clock_load(struct clock_input *c, const struct graph_input *in, const struct clock_options *o,
               const char *command)
{
    char err[512];
    memset(c, 0, sizeof *c);
    if (arrivals_find(&c->arrivals, &in->history) < 0) {
        fprintf(stderr, "dpm %s: no memory for the arrivals of %u nodes\n", command, in->history.nnodes);
        return EXIT_BAD_INPUT;
    }
    int status = clocks_estimate(&c->clocks, &in->history, &c->arrivals, o->min_delay, o->reference, err, sizeof err);
    if (status < 0) {
        fprintf(stderr, "dpm %s: %s\n", command, err);
        arrivals_free(&c->arrivals);
        return status == -2 ? EXIT_USAGE : EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

void clock_input_free(struct clock_input *c)
{
    clocks_free(&c->clocks);
    arrivals_free(&c->arrivals);
}

/* Whether `what` names process p: its program name, its label as dpm
 * prints it, the label's pid part, or its pid as a number (0x... or decimal). */
static int names_process(const struct dpm_trace *t, size_t p, const char *what)
{
    const struct dpm_process *pr = &t->processes[p];
    char label[96], *end;
    dpm_process_label(t, pr->pid, label, sizeof label);
    const char *pid_part = strrchr(label, ' ');
    errno = 0;
    unsigned long long number = strtoull(what, &end, 0);
    return (pr->name[0] && strcmp(pr->name, what) == 0) || strcmp(label, what) == 0 ||
           (pid_part && strcmp(pid_part + 1, what) == 0) || (!errno && end != what && !*end && number == pr->pid);
}

/* The processes `what` names (commands/graph_options.h). */
int graph_select(const struct dpm_trace *t, const char *what, uint32_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t p = 0; p < t->nprocesses && n < cap; p++)
        if (names_process(t, p, what))
            out[n++] = (uint32_t)p;
    return n ? (int)n : -1;
}

/* Apply --place NAME_OR_PID=MACHINE,... to machine[]. 0, or -1 after saying why. */
static int apply_place(const char *spec, const char *command, const struct dpm_trace *t, uint32_t *machine)
{
    char *copy = strdup(spec), *save = 0, *item;
    uint32_t *chosen = malloc((t->nprocesses + 1) * sizeof *chosen);
    int ok = copy && chosen ? 0 : -1;
    for (item = copy ? strtok_r(copy, ",", &save) : 0; ok == 0 && item; item = strtok_r(0, ",", &save)) {
        char *equals = strrchr(item, '='), *end = 0;
        unsigned long m = 0;
        int n = -1;
        if (equals) {
            *equals = 0;
            m = strtoul(equals + 1, &end, 10);
            n = graph_select(t, item, chosen, t->nprocesses);
        }
        if (!equals || end == equals + 1 || *end || m > UINT32_MAX) {
            fprintf(stderr, "dpm %s: --place: `%s`: expected NAME_OR_PID=MACHINE\n", command, item);
            ok = -1;
        } else if (n < 0 && dpm_window_left_out(item)) {
            fprintf(stderr, "dpm %s: --place: `%s` has no record in the window: nothing to place\n", command, item);
        } else if (n < 0) {
            fprintf(stderr, "dpm %s: --place: no traced process is named `%s`\n", command, item);
            ok = -1;
        }
        for (int k = 0; ok == 0 && k < n; k++)
            machine[chosen[k]] = (uint32_t)m;
    }
    free(copy);
    free(chosen);
    return ok;
}

/* The placement and the delivery table (commands/graph_options.h). */
int placement_choose(const struct placement_options *o, const char *command, const struct graph_input *in,
                     uint32_t *machine, char *how, size_t cap, struct delay_table *d)
{
    char err[512];
    if (o->each_own + o->all_one + (o->place != 0) > 1) {
        fprintf(stderr, "dpm %s: --each-own, --all-one and --place exclude one another\n", command);
        return EXIT_USAGE;
    }
    placement_measured(machine, &in->history);
    snprintf(how, cap, "measured (each process where its records were written)");
    if (o->each_own) {
        placement_each_own(machine, &in->history);
        snprintf(how, cap, "--each-own: every process on a machine of its own");
    } else if (o->all_one) {
        placement_all_one(machine, &in->history);
        snprintf(how, cap, "--all-one: every process on one machine");
    } else if (o->place) {
        if (apply_place(o->place, command, &in->trace, machine) < 0)
            return EXIT_USAGE;
        snprintf(how, cap, "--place %s (the others as measured)", o->place);
    }
    if (o->delays && o->network) {
        fprintf(stderr, "dpm %s: --delays and --network exclude one another\n", command);
        return EXIT_USAGE;
    }
    int status = o->delays    ? delay_table_read(d, o->delays, err, sizeof err)
                 : o->network ? delay_table_network(d, o->network, err, sizeof err)
                              : (delay_table_default(d), 0);
    if (status == -2)
        fprintf(stderr, "dpm %s: --network %s: %s\n", command, o->network, err);
    else if (status < 0)
        fprintf(stderr, "dpm %s: %s\n", command, err);
    return status == -2 ? EXIT_USAGE : status < 0 ? EXIT_BAD_INPUT : EXIT_OK;
}

/* Where the placement puts process p (commands/graph_options.h). */
const char *placement_text(const struct graph_input *in, const uint32_t *machine, uint32_t p, char *out, size_t cap)
{
    if (machine[p] == PLACE_MEASURED)
        return dpm_process_machines(&in->trace, &in->trace.processes[p], out, cap);
    snprintf(out, cap, "%" PRIu32, machine[p]);
    return out;
}

/* A process outside the trace written M.S.G (machine, slot, generation),
 * as dpm prints pids: its pid without the epoch, or 0 if it is not one. */
static uint64_t untraced_pid(const char *item)
{
    unsigned machine, slot, gen;
    char extra;
    if (sscanf(item, "%u.%u.%u%c", &machine, &slot, &gen, &extra) != 3 || machine > 255 || slot > 0xfff ||
        gen > 0xfffff)
        return 0;
    return (uint64_t)machine << 56 | (uint64_t)slot << 20 | gen;
}

/* Mark every process `list` names with `role`; system processes outside
 * the trace (--system M.S.G) go to r->system_pids. 0, or EXIT_USAGE after
 * saying why. */
static int mark_roles(const struct dpm_trace *t, const char *command, const char *list, const char *option,
                      uint8_t role, struct causality_roles *r)
{
    char *copy = strdup(list), *save = 0, *item;
    uint32_t *chosen = malloc((t->nprocesses + 1) * sizeof *chosen);
    uint64_t *outside = (uint64_t *)r->system_pids;
    int status = copy && chosen ? EXIT_OK : EXIT_BAD_INPUT;
    for (item = copy ? strtok_r(copy, ",", &save) : 0; status == EXIT_OK && item; item = strtok_r(0, ",", &save)) {
        int n = graph_select(t, item, chosen, t->nprocesses);
        uint64_t pid = n < 0 && role == ROLE_SYSTEM ? untraced_pid(item) : 0;
        if (pid && (outside = realloc(outside, (r->nsystem_pids + 1) * sizeof *outside)))
            outside[r->nsystem_pids++] = pid;
        else if (n < 0) {
            fprintf(stderr, "dpm %s: %s: no %sprocess is named `%s`\n", command, option,
                    role == ROLE_SYSTEM ? "" : "traced ", item);
            status = EXIT_USAGE;
        }
        for (int k = 0; k < n; k++)
            ((uint8_t *)r->traced)[chosen[k]] = role;
    }
    r->system_pids = outside;
    free(copy);
    free(chosen);
    return status;
}

/* The roles of --server and --system (commands/graph_options.h). */
int causality_roles_choose(struct causality_roles *r, const struct dpm_trace *t, const char *command,
                           const char *servers, const char *system)
{
    uint8_t *traced = calloc(t->nprocesses + 1, 1);   /* ROLE_REQUESTOR is 0 */
    *r = (struct causality_roles){ traced, 0, 0 };
    int status = traced ? EXIT_OK : EXIT_BAD_INPUT;
    if (status == EXIT_OK && system)
        status = mark_roles(t, command, system, "--system", ROLE_SYSTEM, r);
    if (status == EXIT_OK)
        status = mark_roles(t, command, servers, "--server", ROLE_SERVER, r);
    return status;
}

void causality_roles_release(struct causality_roles *r)
{
    free((void *)r->traced);
    free((void *)r->system_pids);
    *r = (struct causality_roles){ 0 };
}

/* What the graph could not take from the trace. */
void graph_print_notes(const struct graph_input *in)
{
    const struct history *h = &in->history;
    if (h->unmatched_sends)
        printf("note: %" PRIu64 " SENDs to traced processes were never received in the trace (no message arc)\n",
               h->unmatched_sends);
    if (h->unmatched_receives)
        printf("note: %" PRIu64 " RECEIVEs had no SEND in the trace (each waits for nothing)\n",
               h->unmatched_receives);
    if (h->no_proctime)
        printf("note: %" PRIu64 " arcs lacked PROCTIME in a record (weighed 0: keep procTime in the rules)\n",
               h->no_proctime);
    if (h->cpu_backwards)
        printf("note: %" PRIu64 " arcs had PROCTIME going down (weighed 0: a damaged trace)\n", h->cpu_backwards);
    if (in->trace.lost || in->trace.gaps)
        printf("note: the logs lost %" PRIu64 " records and show %" PRIu64 " sequence gaps: the graph misses them\n",
               in->trace.lost, in->trace.gaps);
}
