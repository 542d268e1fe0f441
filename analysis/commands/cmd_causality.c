/*
 * analysis/commands/cmd_causality.c — `dpm causality`: the paths of
 * causality through a set of server processes (thesis §5.2.4, DPM paper
 * §IV-B), their counts, the "receives from X, then sends to Y" tables, the
 * branching probabilities, and the state diagram as Graphviz DOT (and SVG).
 */
#define _POSIX_C_SOURCE 200809L   /* posix_spawnp, waitpid */

#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "commands/graph_options.h"
#include "load/window.h"
#include "models/causality.h"

extern char **environ;

static const char causality_help[] =
    "NAME\n"
    "    dpm causality - the chains of messages that requests set off through servers\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm causality --server NAME_OR_PID,... [--system NAME_OR_PID,...] [--max-length N]\n"
    "                  [--dot FILE] LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    Paths of causality (Miller's thesis, section 5.2.4). The processes named by --server\n"
    "    are the computation studied and get a letter each (A, B, ... in pid order); those\n"
    "    named by --system, the kernels, and every process outside the trace that a server\n"
    "    CALLed (the name server, the process manager, a disk's kernel) are system processes,\n"
    "    whose messages are ignored; every other process, traced or not, is a requestor (the\n"
    "    users of a server are seldom metered themselves). A causality string starts when a server receives a message from a\n"
    "    requestor, with that server's letter; the sends the server makes before its next\n"
    "    RECEIVE lead, along their messages, to the servers that receive them, whose letters\n"
    "    are appended, and so on. A server that sends to two servers after one RECEIVE starts\n"
    "    two strings sharing a prefix. Replies to requestors and messages to system processes\n"
    "    add no letter. A request to A answered through B gives ABA.\n"
    "\n"
    "    Printed: the strings with their counts, most frequent first; every substring of two\n"
    "    letters or more with its count, alphabetically (the most travelled paths; a piece\n"
    "    shared by several strings of one request counts once); per server, how often it sent\n"
    "    to each server after receiving from each server or from a requestor (U), over every\n"
    "    RECEIVE in the trace (the thesis's Fig. 5.18); and the branching probabilities\n"
    "    P(A sends next to Y | A received from X) = count(XAY) / sum over Z of count(XAZ).\n"
    "\n"
    "OPTIONS\n"
    "    --server NAME_OR_PID,...\n"
    "                 the server processes (required): program names (from CREATEPROCESS;\n"
    "                 a name takes every process of that name) or pids; at most 52\n"
    "    --system NAME_OR_PID,...\n"
    "                 processes to treat as system processes: names or pids of traced ones,\n"
    "                 or M.S.G pids of processes outside the trace\n"
    "    --max-length N\n"
    "                 cut strings at N letters (default 32; cut chains are counted and said)\n"
    "    --dot FILE   write the state diagram (states: the servers and the requestors;\n"
    "                 transitions labelled with their probabilities) as Graphviz DOT, and\n"
    "                 render it to FILE.svg with `dot -Tsvg` when Graphviz is installed\n"
    "    --help       this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log could not be read or the diagram written; 2 usage.\n";

struct causality_options {
    const char *servers, *system, *dot;
    unsigned long max_length;
};

/* The letter of server a, or U for the requestors (x == nservers). */
static char letter_or_u(const struct causality *c, uint32_t x)
{
    return x == c->nservers ? 'U' : causality_letter(x);
}

/* The strings by count, and the substrings alphabetically. 0, or 1 (no memory). */
static int print_strings(const struct causality *c)
{
    struct tally_item *strings = causality_by_count(&c->strings), *paths = causality_alphabetical(&c->paths);
    if (!strings || !paths) {
        free(strings);
        free(paths);
        return EXIT_BAD_INPUT;
    }
    printf("\nstrings, most frequent first (%u distinct)\n", c->strings.used);
    for (uint32_t i = 0; i < c->strings.used; i++)
        printf("  %10" PRIu64 "  %s\n", strings[i].count, strings[i].text);
    printf("\npaths: every substring of 2 letters or more, alphabetically (%u)\n", c->paths.used);
    for (uint32_t i = 0; i < c->paths.used; i++)
        printf("  %10" PRIu64 "  %s\n", paths[i].count, paths[i].text);
    free(strings);
    free(paths);
    return EXIT_OK;
}

/* Per server: the "received from X, then sent to Y" table and its probabilities. */
static void print_transitions(const struct causality *c, const struct dpm_trace *t)
{
    char label[96];
    printf("\nreceives from X (U: a requestor), then sends to Y, and P(Y | X)\n");
    for (uint32_t a = 0; a < c->nservers; a++) {
        dpm_process_label(t, t->processes[c->server[a]].pid, label, sizeof label);
        printf("  %c  %s\n      from", causality_letter(a), label);
        for (uint32_t y = 0; y < c->nservers; y++)
            printf("  %7s-> %c", "", causality_letter(y));
        printf("\n");
        for (uint32_t x = 0; x <= c->nservers; x++) {
            if (causality_probability(c, a, x, 0) < 0)
                continue;
            printf("      %c   ", letter_or_u(c, x));
            for (uint32_t y = 0; y < c->nservers; y++)
                printf("  %7" PRIu64 " %5.1f%%", causality_count(c, a, x, y), 100 * causality_probability(c, a, x, y));
            printf("\n");
        }
    }
}

/* The state diagram as DOT into `path`. 0, or 1 after saying why. */
static int write_dot(const struct causality *c, const struct dpm_trace *t, const char *path)
{
    char label[96];
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dpm causality: %s: %s\n", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    fprintf(f, "digraph causality {\n  rankdir=LR;\n  node [shape=circle];\n");
    fprintf(f, "  U [shape=box, label=\"requestors\"];\n");
    for (uint32_t a = 0; a < c->nservers; a++) {
        dpm_process_label(t, t->processes[c->server[a]].pid, label, sizeof label);
        fprintf(f, "  %c [label=\"%c\\n%s\"];\n", causality_letter(a), causality_letter(a), label);
        if (c->requests_to[a])
            fprintf(f, "  U -> %c [label=\"%" PRIu64 " requests\"];\n", causality_letter(a), c->requests_to[a]);
    }
    for (uint32_t a = 0; a < c->nservers; a++)
        for (uint32_t x = 0; x <= c->nservers; x++)
            for (uint32_t y = 0; y < c->nservers; y++)
                if (causality_count(c, a, x, y))
                    fprintf(f, "  %c -> %c [label=\"after %c: %.1f%% (%" PRIu64 ")\"];\n", causality_letter(a),
                            causality_letter(y), letter_or_u(c, x), 100 * causality_probability(c, a, x, y),
                            causality_count(c, a, x, y));
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "dpm causality: %s: %s\n", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* Render path to path.svg with Graphviz's `dot`, if it is installed, and say what happened. */
static void render_svg(const char *path)
{
    char svg[4096];
    pid_t child;
    int status = 0;
    snprintf(svg, sizeof svg, "%s.svg", path);
    char *args[] = { "dot", "-Tsvg", (char *)path, "-o", svg, 0 };
    int spawned = posix_spawnp(&child, "dot", 0, 0, args, environ);
    if (spawned == 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        printf("state diagram: %s, rendered to %s\n", path, svg);
    else if (spawned != 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 127))
        printf("state diagram: %s (not rendered: Graphviz's `dot` was not found)\n", path);
    else
        printf("state diagram: %s (not rendered: `dot -Tsvg` failed)\n", path);
}

/* Print the whole analysis. */
static int causality_report(const struct causality *c, const struct graph_input *in, const char *dot)
{
    char label[96];
    printf("causality (thesis 5.2.4) through %u servers:", c->nservers);
    for (uint32_t a = 0; a < c->nservers; a++) {
        dpm_process_label(&in->trace, in->trace.processes[c->server[a]].pid, label, sizeof label);
        printf("%s %c = %s", a ? "," : "", causality_letter(a), label);
    }
    printf("\n%" PRIu64 " requests from requestors, %" PRIu64 " strings\n", c->requests, c->nstrings);
    if (dpm_window_get())
        printf("window: %s\n", dpm_window_describe());
    if (c->cut)
        printf("%" PRIu64 " chains went on past %u letters and were cut there (--max-length)\n", c->cut,
               c->max_length);
    int status = print_strings(c);
    if (status == EXIT_OK)
        print_transitions(c, &in->trace);
    if (status == EXIT_OK && dot && (status = write_dot(c, &in->trace, dot)) == EXIT_OK)
        render_svg(dot);
    graph_print_notes(in);
    return status;
}

/* One option at argv[*i]: 1 taken, 0 not one, -1 bad (said). */
static int causality_option(struct causality_options *o, int argc, char **argv, int *i)
{
    int missing = 0;
    const char *value, *length;
    char *end;
    if ((value = graph_option(argc, argv, i, "--server", &missing)))
        o->servers = value;
    else if ((value = graph_option(argc, argv, i, "--system", &missing)))
        o->system = value;
    else if ((value = graph_option(argc, argv, i, "--dot", &missing))) {
        struct dpm_error e;
        if (dpm_output_check(value, &e) != 0) {
            fprintf(stderr, "dpm causality: %s\n", e.text);
            exit(EXIT_BAD_INPUT);
        }
        o->dot = value;
    }
    else if ((length = graph_option(argc, argv, i, "--max-length", &missing))) {
        o->max_length = strtoul(length, &end, 10);
        if (end == length || *end || o->max_length == 0 || o->max_length > 4096) {
            fprintf(stderr, "dpm causality: --max-length %s: expected a number from 1 to 4096\n", length);
            return -1;
        }
        return 1;
    }
    if (missing)
        fprintf(stderr, "dpm causality: %s needs a value (see --help)\n", argv[*i]);
    return missing ? -1 : value != 0;
}

static int causality_take(void *o, int argc, char **argv, int *i)
{
    return causality_option(o, argc, argv, i);
}

/* Read the command line: EXIT_OK to go on, or the exit status; *help after --help. */
static int causality_arguments(struct causality_options *o, int argc, char **argv, char **logs, int *nlogs,
                               int *help)
{
    int status = graph_arguments("causality", argc, argv, causality_take, o, logs, nlogs, help);
    if (status != EXIT_OK || *help)
        return status;
    if (!o->servers) {
        fprintf(stderr, "dpm causality: --server names the server processes (see --help)\n");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* Roles from the options, then the analysis and its report. */
static int causality_run(const struct causality_options *o, struct graph_input *in)
{
    struct causality c;
    struct causality_roles roles;
    char err[512];
    int status = causality_roles_choose(&roles, &in->trace, "causality", o->servers, o->system);
    if (status == EXIT_OK &&
        causality_analyze(&c, &in->history, &roles, (uint32_t)o->max_length, err, sizeof err) < 0) {
        fprintf(stderr, "dpm causality: %s\n", err);
        status = EXIT_BAD_INPUT;
    } else if (status == EXIT_OK) {
        status = causality_report(&c, in, o->dot);
        causality_free(&c);
    }
    causality_roles_release(&roles);
    return status;
}

/* `dpm causality` (the help text above). */
int cmd_causality(int argc, char **argv)
{
    struct causality_options o = { 0 };
    struct graph_input in;
    int nlogs = 0, help = 0, status;
    char **logs = calloc((size_t)argc + 1, sizeof *logs);
    status = logs ? causality_arguments(&o, argc, argv, logs, &nlogs, &help) : EXIT_BAD_INPUT;
    if (help)
        fputs(causality_help, stdout);
    if (status == EXIT_OK && !help && (status = graph_load(&in, "causality", logs, nlogs)) == EXIT_OK) {
        status = causality_run(&o, &in);
        graph_input_free(&in);
    }
    free(logs);
    return status;
}
