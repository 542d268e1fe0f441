/*
 * analysis/commands/cmd_waitstates.c — `dpm waitstates`: why processes
 * waited (models/waitstates.h): every blocking RECEIVE and every CALL's
 * wait split into late sender, delivery, queued at the server, the
 * server's work and outside the trace, summed by waiting process, cause and
 * responsible process, and by the functions responsible.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/graph_options.h"
#include "load/programs.h"
#include "models/waitstates.h"

static const char waitstates_help[] =
    "NAME\n"
    "    dpm waitstates - why processes waited, and on whom\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm waitstates [--top N] [--elf NAME=FILE]... [--elf-dir DIR] [--min-delay NS]\n"
    "                   [--reference MACHINE] LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    A wait runs from a RECEIVECALL to the RECEIVE that ends it when the message was not\n"
    "    already queued (dpm stats's receive blocking time). Each is split, in the manner of\n"
    "    Scalasca's wait-state analysis, into parts that add up to it exactly:\n"
    "      late sender     a blocking RECEIVE: until the matching SEND was issued\n"
    "      delivery        messages in flight: a RECEIVE's message from its SEND on; a\n"
    "                      CALL's request until it arrived at the server, and its reply\n"
    "      queued          a CALL: from the request's arrival at the server (its\n"
    "                      MESSAGEQUEUED) to the server's RECEIVE of it\n"
    "      server's work   a CALL: from the server's RECEIVE of the request to its reply's\n"
    "                      SEND (including the server's own waits on others)\n"
    "      outside the trace  the whole wait, when its other end is not in the trace\n"
    "    Times on other machines are put on the waiting process's clock by the offsets of dpm\n"
    "    clocks (its options --min-delay and --reference apply), and held within the wait.\n"
    "    Each part is charged to a process: late sender to the sender, delivery, queued and\n"
    "    server's work to the server (the sender, for a RECEIVE), outside to the process the\n"
    "    records name; late sender and server's work also to a function, the one holding the\n"
    "    PC of the late SEND or of the reply's SEND, named from the programs' ELF files.\n"
    "\n"
    "    Prints: the waits and their total; the total by cause; the largest causes, each a\n"
    "    waiting process, a cause and the process charged, with its time, share and the waits\n"
    "    it took part in; the functions charged; each process's waiting time. Times are guest\n"
    "    nanoseconds.\n"
    "\n"
    "OPTIONS\n"
    "    --top N      list the N largest causes and functions (default 20; 0: all)\n"
    "    --elf NAME=FILE, --elf-dir DIR\n"
    "                 the programs, to name functions, as for dpm critpath\n"
    "    --min-delay NS, --reference MACHINE\n"
    "                 the clock model, as for dpm clocks\n"
    "    --help       this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log or an ELF file could not be read or used; 2 usage.\n";

struct waitstates_options {
    struct clock_options clock;
    struct program_options programs;
    long top;
};

static int waitstates_take(void *options, int argc, char **argv, int *i)
{
    struct waitstates_options *o = options;
    int taken = clock_option(&o->clock, argv[0], argc, argv, i);
    if (taken == 0)
        taken = program_option(&o->programs, argv[0], argc, argv, i);
    return taken != 0 ? taken : top_option(&o->top, argv[0], argc, argv, i);
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* How many rows of n to show. */
static uint32_t shown(uint32_t n, long top)
{
    return top == 0 || (uint64_t)top >= n ? n : (uint32_t)top;
}

/* The causes, largest first. */
static void print_pairs(const struct waitstates *w, const struct graph_input *in, long top)
{
    char waiter[96], responsible[96];
    uint32_t n = shown(w->npairs, top);
    printf("\nthe largest causes (%" PRIu32 " in all)\n  %-24s %-18s %-24s %14s %7s %8s\n", w->npairs,
           "waiting process", "cause", "charged to", "time (ns)", "share", "waits");
    for (uint32_t i = 0; i < n; i++) {
        const struct wait_pair *p = &w->pair[i];
        dpm_process_label(&in->trace, in->trace.processes[p->waiter].pid, waiter, sizeof waiter);
        if (p->responsible)
            dpm_process_label(&in->trace, p->responsible, responsible, sizeof responsible);
        else
            snprintf(responsible, sizeof responsible, "(unknown)");
        printf("  %-24s %-18s %-24s %14" PRIu64 " %6.1f%% %8" PRIu64 "\n", waiter,
               wait_category_name((enum wait_category)p->category), responsible, p->time, share(p->time, w->total),
               p->waits);
    }
    if (n < w->npairs)
        printf("  ... %" PRIu32 " more (--top 0 lists them)\n", w->npairs - n);
}

/* The functions charged, largest first. */
static void print_functions(const struct waitstates *w, const struct graph_input *in, long top)
{
    char label[96], name[64];
    uint32_t n = shown(w->nfunctions, top);
    printf("\nfunctions charged (the late SEND's, the reply's SEND's; %" PRIu32 " in all)\n"
           "  %-32s %-24s %-14s %14s %7s %8s\n", w->nfunctions, "function", "process", "cause", "time (ns)",
           "share", "waits");
    for (uint32_t i = 0; i < n; i++) {
        const struct wait_function *f = &w->function[i];
        dpm_process_label(&in->trace, in->trace.processes[f->process].pid, label, sizeof label);
        if (f->name)
            snprintf(name, sizeof name, "%s", f->name);
        else
            snprintf(name, sizeof name, "pc 0x%" PRIx64, f->start);
        printf("  %-32s %-24s %-14s %14" PRIu64 " %6.1f%% %8" PRIu64 "\n", name, label,
               wait_category_name((enum wait_category)f->category), f->time, share(f->time, w->total), f->waits);
    }
    if (n < w->nfunctions)
        printf("  ... %" PRIu32 " more (--top 0 lists them)\n", w->nfunctions - n);
}

/* The whole report. */
static void waitstates_print(const struct waitstates *w, const struct graph_input *in,
                             const struct clock_model *c, long top)
{
    char label[96];
    printf("wait states: %" PRIu64 " waits (%" PRIu64 " in CALLs, %" PRIu64 " in RECEIVEs), %" PRIu64
           " ns in all\n", w->waits, w->call_waits, w->receive_waits, w->total);
    if (c->nmachines > 1)
        printf("clocks: %" PRIu32 " machines set against machine %" PRIu32 " (dpm clocks)%s\n", c->nmachines,
               c->machine[c->reference].machine,
               c->slack ? "; no constant offsets satisfy every message: parts across machines are approximate" : "");
    printf("\nby cause\n  %-18s %14s %7s\n", "cause", "time (ns)", "share");
    for (int k = 0; k < WAIT_CATEGORIES; k++)
        printf("  %-18s %14" PRIu64 " %6.1f%%\n", wait_category_name((enum wait_category)k), w->category[k],
               share(w->category[k], w->total));
    print_pairs(w, in, top);
    print_functions(w, in, top);
    printf("\nwaiting time by process\n  %-24s %14s %7s\n", "process", "time (ns)", "share");
    for (uint32_t p = 0; p < in->history.nprocesses; p++) {
        if (!w->waited[p])
            continue;
        dpm_process_label(&in->trace, in->trace.processes[p].pid, label, sizeof label);
        printf("  %-24s %14" PRIu64 " %6.1f%%\n", label, w->waited[p], share(w->waited[p], w->total));
    }
    if (w->untimed)
        printf("note: %" PRIu64 " waits were not split: a record they need lacks TIME\n", w->untimed);
    graph_print_notes(in);
}

/* `dpm waitstates` (the help text above). */
int cmd_waitstates(int argc, char **argv)
{
    struct waitstates_options o = { { 0, -1 }, { 0 }, 20 };
    struct graph_input in;
    struct clock_input c;
    struct program_symbols programs = { 0 };
    struct waitstates w;
    char err[512];
    int nlogs = 0, help = 0, status;
    char **logs = calloc((size_t)argc + 1, sizeof *logs);
    o.programs.elf = calloc((size_t)argc + 1, sizeof *o.programs.elf);
    status = logs && o.programs.elf
                 ? graph_arguments("waitstates", argc, argv, waitstates_take, &o, logs, &nlogs, &help)
                 : EXIT_BAD_INPUT;
    if (help)
        fputs(waitstates_help, stdout);
    if (status == EXIT_OK && !help && (status = graph_load(&in, "waitstates", logs, nlogs)) == EXIT_OK) {
        if ((status = clock_load(&c, &in, &o.clock, "waitstates")) == EXIT_OK) {
            status = programs_load(&programs, &o.programs, &in.trace, "waitstates");
            if (status == EXIT_OK && waitstates_find(&w, &in.history, &c.arrivals, &c.clocks, programs_name_pc,
                                                     &programs, err, sizeof err) < 0) {
                fprintf(stderr, "dpm waitstates: %s\n", err);
                status = EXIT_BAD_INPUT;
            } else if (status == EXIT_OK) {
                waitstates_print(&w, &in, &c.clocks, o.top);
                waitstates_free(&w);
            }
            programs_free(&programs);
            clock_input_free(&c);
        }
        graph_input_free(&in);
    }
    free(logs);
    free(o.programs.elf);
    return status;
}
