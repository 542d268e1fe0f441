/*
 * analysis/commands/cmd_stats.c — `dpm stats`: DPM's communication
 * statistics of trace logs (models/stats.h), printed as text and, with
 * --csv, written as CSV tables (models/stats_output.h).
 */
#include <string.h>

#include "commands/commands.h"
#include "models/stats_output.h"

static const char stats_help[] =
"NAME\n"
"    dpm stats - DPM's communication statistics of trace logs\n"
"\n"
"SYNOPSIS\n"
"    dpm stats [--csv DIR] LOG...\n"
"\n"
"DESCRIPTION\n"
"    Reads the logs as one trace (several filters' logs together) in one\n"
"    pass (two when a traced process ran away from its home machine: see\n"
"    local and remote), in memory that does not grow with their length,\n"
"    and prints the statistics of thesis §5.2.2:\n"
"\n"
"    - the records, the records lost (the logs' own count) and the records\n"
"      missing in sequence gaps (a process's records are numbered from 0;\n"
"      a stream that starts again from 0 is a new run, not a gap);\n"
"    - per process: the machine its records were written on (1>0>1 for\n"
"      one that moved: MIGRATE records), records, messages and bytes sent\n"
"      and received, lifetime (first to last record, its machine's clock;\n"
"      across a move, by the time the move took) and rate (messages sent\n"
"      and received per second of it). Processes are numbered [1], [2],\n"
"      ... in pid order; those without records are the ones messages were\n"
"      sent to (a kernel, a name server);\n"
"    - who talks to whom: messages and bytes from each sender (row) to\n"
"      each receiver (column), from SEND records of status 0;\n"
"    - local and remote traffic (the machine a message was sent on, its\n"
"      SEND's, against the one its receiver was on: where the messages of\n"
"      that machine reached it, by their ids, for a traced process, else\n"
"      its pid's), message sizes (mean, min, max and a histogram of\n"
"      power-of-two ranges);\n"
"    - queue length per process: +1 at MESSAGEQUEUED, -1 at the RECEIVE of\n"
"      a message that was queued (a message handed to a receiver already\n"
"      waiting has no MESSAGEQUEUED); its maximum, its mean weighted by\n"
"      time over the process's lifetime, and its mean over its changes;\n"
"    - queue waiting time: RECEIVE - MESSAGEQUEUED of one message id;\n"
"    - receive blocking time: RECEIVE - RECEIVECALL when the process had\n"
"      to wait (its message was not already queued at the RECEIVECALL);\n"
"    - CPU time per process: its last PROCTIME minus its first, with a\n"
"      note when its stream starts mid-run (metering attached to a running\n"
"      process: the CPU time before its first record is not counted);\n"
"    - thesis Fig. 5.12: per process, its % of the CPU time of all traced\n"
"      processes, of the messages and of the bytes sent, and its messages\n"
"      and bytes by destination;\n"
"    - per machine, by the records written on it (a process that moved\n"
"      counts where it was at each): processes, records, the CPU time used\n"
"      there, messages sent from there (local, remote), moves in and out;\n"
"    - each migration (MIGRATE record): the process, its move's number,\n"
"      from and to which machine, when it ran again (TIME on the machine it\n"
"      reached), how long it was out of execution, the bytes of memory and\n"
"      the queued messages that moved with it.\n"
"    Times are ns of the machine clock, CPU times instructions.\n"
"\n"
"OPTIONS\n"
"    --csv DIR   also write the tables as CSV files into DIR (made if\n"
"                missing): summary.csv (name,value), processes.csv (a row\n"
"                per process with every figure above), pairs.csv (from,\n"
"                to, messages, bytes, local: 1 if all were, local_messages),\n"
"                machines.csv, migrations.csv, sizes.csv, waits.csv and\n"
"                blocking.csv (histograms: low,high,count).\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 bad input (the file and record are named), 2 bad usage.\n"
"\n"
"EXAMPLE\n"
"    dpm stats --csv run1-tables run1.log\n";

int cmd_stats(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, stats_help))
        return DPM_OK;
    const char *csv = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv = argv[++i];
        else
            dpm_usage("stats", "unknown option '%s'", argv[i]);
    }
    if (i == argc)
        dpm_usage("stats", "dpm stats [--csv DIR] LOG...");
    static struct stats st;
    struct dpm_error e;
    stats_init(&st);
    if (stats_read_logs(&st, argv + i, argc - i, &e) != 0)
        dpm_fail("%s", e.text);
    report_text(stdout, &st, argv + i, argc - i);
    if (csv && report_csv(csv, &st, &e) != 0)
        dpm_fail("%s", e.text);
    stats_free(&st);
    return DPM_OK;
}
