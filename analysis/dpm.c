/*
 * analysis/dpm.c — the host analyzer's entry point: `dpm COMMAND ARGS`, the
 * overview help, and the helpers every subcommand uses for errors and
 * usage (commands/commands.h). Each subcommand lives in a file of its own.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "load/event.h"
#include "load/window.h"
#include "output_check.h"

static const char help_text[] =
"NAME\n"
"    dpm - analyze DPM trace logs of DEMOS/MP: records, communication\n"
"    statistics, causality, parallelism, critical paths, clocks and\n"
"    happens-before, wait states, pictures\n"
"\n"
"SYNOPSIS\n"
"    dpm dump [--rules FILE|TEXT] LOG...\n"
"    dpm stats [--csv DIR] LOG...\n"
"    dpm merge -o OUT LOG...\n"
"    dpm export [--perfetto OUT.json] [--dot OUT.dot] [--csv DIR] [--shiviz OUT.log] LOG...\n"
"    dpm generate [--repeat N] [--skew M=NS,...] SCENARIO OUT\n"
"    dpm generate --random N [--seed S] [--skew M=NS,...] OUT\n"
"    dpm causality ...        dpm parallelism ...        dpm critpath ...\n"
"    dpm clocks [--min-delay NS] [--reference MACHINE] [--events] LOG...\n"
"    dpm waitstates [--top N] [--elf-dir DIR] LOG...\n"
"    dpm report [--server NAMES] [--place ...] [--elf-dir DIR] -o OUT.html LOG...\n"
"    dpm live [--interval SECONDS] [--figure NAME] [--once | --frames N] STREAM\n"
"    dpm --help               dpm COMMAND --help\n"
"    Every command that reads logs also takes --window FROM:TO or\n"
"    --window-of NAME_OR_PID,... (see WINDOW below).\n"
"\n"
"DESCRIPTION\n"
"    A trace log is what a DPM filter server writes (meter/tracelog.h): a\n"
"    header with the trace description in DPM's format (thesis Fig. 3.3),\n"
"    then blocks of the records its selection rules kept, each with the\n"
"    fields the rules kept, and the count of records lost on the way. dpm\n"
"    reads a log by its own description, so it reads logs of any build and\n"
"    logs whose rules dropped fields; a field a log did not keep is never\n"
"    taken for 0. A LOG is a log file (`dmtrace extract` makes one) or a\n"
"    trace disk image itself.\n"
"\n"
"    dump, stats and export (but for --shiviz) read their logs as streams,\n"
"    a few blocks at a time: their memory does not grow with the logs'\n"
"    length. Records are numbered from 0 in each log, in messages as in\n"
"    the records' order.\n"
"\n"
"    Times are guest time: TIME is a machine's clock in ns and PROCTIME a\n"
"    process's CPU time in instructions (under QEMU -icount shift=0 the\n"
"    two are the same unit). Only clocks of one machine are subtracted,\n"
"    except once clocks has set the machines' clocks against one another\n"
"    (clocks, waitstates and the report's space-time diagram).\n"
"    A pid is shown as MACHINE.SLOT.GENERATION, after its program's name\n"
"    when the trace holds its CREATEPROCESS (\"ri 0.17.1\"); slot 0 of a\n"
"    machine is its kernel (\"kernel 1.0.1\").\n"
"\n"
"COMMANDS\n"
"    dump       every record, one line each, optionally selected with DPM's\n"
"               selection rules\n"
"    stats      the communication statistics of thesis §5.2.2: who talks\n"
"               to whom, rates, sizes, local and remote, queue lengths and\n"
"               waits, blocking times, CPU shares, the Fig. 5.12 table\n"
"    merge      several filters' logs into one log\n"
"    export     Perfetto/Chrome trace JSON, Graphviz DOT, CSV tables, a\n"
"               ShiViz log (vector timestamps)\n"
"    generate   a log from a scenario script, or of random traffic\n"
"    causality  paths of causality and branching probabilities (§5.2.4)\n"
"    parallelism  P = T / t_max in DPM's three steps (§5.2.3)\n"
"    critpath   the critical path, its PCs named from ELF symbols\n"
"    clocks     the machines' clock offsets from the messages between them,\n"
"               with their bounds; messages that seem to arrive before they\n"
"               were sent, before and after correction; happens-before\n"
"    waitstates why processes waited: each blocking RECEIVE and CALL split\n"
"               into late sender, delivery, queued, server's work, outside\n"
"               the trace, charged to processes and functions\n"
"    report     one HTML page with every table above and SVG pictures: the\n"
"               communication graph, the traffic matrix, the message rate,\n"
"               the critical path on a timeline, the causality diagram,\n"
"               a space-time diagram on the corrected clocks\n"
"    live       follows a filter's live stream (filter start -l) as the\n"
"               cluster runs: the traffic matrix, rates and queues of each\n"
"               interval, their phase changes, a history line\n"
"    Each command's own --help gives its options and output in full.\n"
"\n"
"WINDOW\n"
"    --window FROM:TO\n"
"        read only the records whose TIME, on their own machine's clock,\n"
"        lies from FROM to TO (both included): times in ns, or with a\n"
"        unit (ns, us, ms, s), either left out for the log's start or end:\n"
"        --window 2ms:90ms, --window 500000:\n"
"    --window-of NAME_OR_PID,...\n"
"        the time these processes were at work (a name from CREATEPROCESS,\n"
"        a pid as M.S.G or a number): on each machine, from the first to\n"
"        the last of their records, on its own clock; for a process outside\n"
"        the trace, of the records naming it (a SEND to it, a RECEIVE from\n"
"        it, ...), so that an unmetered user of metered servers names the\n"
"        time its requests were served. A machine with none of those\n"
"        takes its span from the messages it exchanged with the others'\n"
"        spans, and the work each set off; one that exchanged none, from\n"
"        the least to the greatest of the other machines' spans.\n"
"    Every table, figure and log dpm makes is then of the window alone;\n"
"    the reports say which window. The machines' clocks are not set\n"
"    against one another: each record is placed by its own machine's.\n"
"\n"
"EXIT STATUS\n"
"    0  success\n"
"    1  bad input: a file that cannot be read or written, not a trace log,\n"
"       a damaged log, rules or a scenario that do not parse, an output\n"
"       that is one of the inputs (also through a link) or not a regular\n"
"       file (refused before anything is written)\n"
"    2  bad usage\n"
"\n"
"MESSAGES\n"
"    Each error is one line on standard error naming the file, and the\n"
"    record when one is damaged (records counted from 0):\n"
"        dpm: run1.log: not a trace disk or log (no DPMTRACE header)\n"
"        dpm: run1.log: record 4182: a damaged entry in block 57\n"
"        dpm: run1.log: record 4182: block 57 is damaged: its checksum does not\n"
"             match its contents\n"
"        dpm: run1.log: is the input run1.log   (an output that is an input)\n"
"        dpm: /dev/full: is not a regular file\n"
"        dpm: run1.log: record 900: the log is cut short: block 20 has only\n"
"             1000 of its 4096 bytes\n"
"        dpm: sends.rules:2:9: no such field in the description\n"
"        dpm: fs.scenario:7: B is waiting in a receive: it cannot compute\n"
"\n"
"EXAMPLES\n"
"    build/tools/dmtrace extract build/trace/trace0.img run1.log\n"
"    dpm stats run1.log\n"
"    dpm dump --rules 'traceType=SEND, size>=1000;' run1.log\n"
"    dpm export --perfetto run1.json --dot run1.dot run1.log\n"
"    dot -Tsvg run1.dot > run1.svg\n"
"    dpm generate --random 1000000 --seed 7 big.log && dpm stats big.log\n";

/* The arguments of this run (main's), for dpm_output_check. */
static int run_argc;
static char **run_argv;

/* The inputs are every argument but `out` itself (the same pointer: the
 * option's value) that names a file: the logs, a scenario, rules, delays. */
int dpm_output_check(const char *out, struct dpm_error *e)
{
    char why[4200];
    const char *inputs[run_argc > 0 ? run_argc : 1];
    size_t n = 0;
    for (int i = 1; i < run_argc; i++)
        if (run_argv[i] != out)
            inputs[n++] = run_argv[i];
    if (output_check(out, inputs, n, why, sizeof why) == 0)
        return 0;
    dpm_error_set(e, "%s: %s", out, why);
    return -1;
}

void dpm_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("dpm: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(DPM_BAD_INPUT);
}

void dpm_usage(const char *command, const char *fmt, ...)
{
    va_list ap;
    fputs("dpm: usage: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see dpm %s%s--help)\n", command ? command : "", command ? " " : "");
    exit(DPM_USAGE);
}

int dpm_help_asked(int argc, char **argv, const char *help)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(help, stdout);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        { "dump", cmd_dump },           { "stats", cmd_stats },     { "merge", cmd_merge },
        { "export", cmd_export },       { "generate", cmd_generate }, { "causality", cmd_causality },
        { "parallelism", cmd_parallelism }, { "critpath", cmd_critpath }, { "report", cmd_report },
        { "live", cmd_live },           { "clocks", cmd_clocks }, { "waitstates", cmd_waitstates },
    };
    run_argc = argc;
    run_argv = argv;
    if (argc < 2)
        dpm_usage(0, "dpm COMMAND ARGS, where COMMAND is dump, stats, merge, export, generate, causality, "
                     "parallelism, critpath, clocks, waitstates, report or live");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(help_text, stdout);
        return DPM_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        int status, left = dpm_window_take(argc - 1, argv + 1, &status);
        run_argc = left + 1;           /* the arguments without the window's (dpm_output_check) */
        return left < 0 ? status : commands[i].run(left, argv + 1);
    }
    dpm_usage(0, "unknown command '%s'", argv[1]);
}
