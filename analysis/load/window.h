/*
 * analysis/load/window.h — the window of time that dpm reads: the options
 * `--window FROM:TO` and `--window-of NAME_OR_PID,...`, which every
 * command that reads logs takes (dpm.c takes them out of the command line
 * before the command sees it). Every record is read through load/stream.c,
 * which leaves out those outside the window; so every analysis, table and
 * picture, and the logs merge writes, are of the window alone.
 *
 * A record is in the window when its TIME, its own machine's clock, lies
 * between FROM and TO, both included; a record without TIME is kept.
 * --window-of takes the times from the logs themselves, machine by
 * machine, as the machines' clocks are not set against one another (under
 * -icount they drift apart by up to seconds over a run): on each machine
 * with records of the processes named, the span of those records on its
 * own clock; for a process outside the trace, which has none, the span of
 * the records naming it (a SEND to it, a RECEIVE from it, a link to it,
 * ...), so that an unmetered user of metered servers names a window too.
 * A machine with neither takes its span from the messages its records
 * exchanged with spans (window.c, spans_by_messages: a server's requests
 * from the window and its answers, and the work each set off), hop by hop;
 * one that exchanged none takes the least to the greatest of the spans,
 * read on other machines' clocks, so cut only roughly.
 *
 * With a window, the first record of a process in it starts its numbering:
 * the records before the window are not counted as missing in sequence gaps,
 * and a process created before it keeps the name its CREATEPROCESS gave.
 */
#ifndef ANALYSIS_LOAD_WINDOW_H
#define ANALYSIS_LOAD_WINDOW_H

#include <stdint.h>

#include "load/event.h"

#define DPM_WINDOW_MACHINES 256     /* machines a window may hold a span of their own for (a pid's machine byte) */

struct dpm_window {
    uint64_t from, to;         /* TIME, ns, both included: on every machine without a span of its own */
    uint64_t machine_from[DPM_WINDOW_MACHINES], machine_to[DPM_WINDOW_MACHINES];
    uint8_t on_machine[DPM_WINDOW_MACHINES];    /* machine m has a span of its own (--window-of) */
    char asked[160];           /* the option as given: "--window 2ms:90ms", "--window-of 0.19.1" */
};

/* Take --window and --window-of (with their values, or `=VALUE`) out of a
 * command's arguments argv[1..argc), argv[0] being the command's name, and
 * set the window. --window-of reads the command's logs to find its times:
 * every other argument that opens as a trace log, but for the value of -o
 * (the log merge writes). Returns the arguments left, or -1 after saying
 * why on stderr (`dpm COMMAND: ...`), with *status the exit status. */
int dpm_window_take(int argc, char **argv, int *status);

/* The window asked for, or NULL if none was. */
const struct dpm_window *dpm_window_get(void);

/* Whether record ev lies in window w. */
int dpm_window_holds(const struct dpm_window *w, const struct dpm_event *ev);

/* The program names of the CREATEPROCESS records the window left out:
 * load/stream.c notes each, and the loader and the statistics name the
 * processes by them, so that a process created before the window keeps
 * its name. The name noted for `pid`, or NULL. */
void dpm_window_note_name(const struct dpm_event *createprocess);
const char *dpm_window_name_of(uint64_t pid);
/* Whether `what` (a program name, or a pid as M.S.G) names a process whose
 * CREATEPROCESS the window left out: one that may have no record in it. */
int dpm_window_left_out(const char *what);

/* The window's option as given ("--window-of 0.19.1"), or NULL if none. */
const char *dpm_window_asked(void);

/* The window in words, for the reports: "TIME 1200 to 2500 ns on each
 * machine's clock (--window 1200:2500)", or "" when there is none. */
const char *dpm_window_describe(void);

#endif
