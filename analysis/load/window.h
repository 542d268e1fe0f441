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
 * --window-of takes FROM and TO from the logs themselves: the first and
 * the last TIME of the records of the processes named and of the records
 * naming them (a SEND to one, a RECEIVE from one, a link to one, ...), so a
 * process outside the trace, such as an unmetered user of a metered server,
 * names a window too. The machines' clocks are not set against one another:
 * a window read on one machine's clock cuts another machine's records where
 * that machine's clock reads the same.
 *
 * With a window, the first record of a process in it starts its numbering:
 * the records before the window are not counted as missing in sequence gaps,
 * and a process created before it keeps the name its CREATEPROCESS gave.
 */
#ifndef ANALYSIS_LOAD_WINDOW_H
#define ANALYSIS_LOAD_WINDOW_H

#include <stdint.h>

#include "load/event.h"

struct dpm_window {
    uint64_t from, to;         /* TIME, ns, both included */
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

/* The window's option as given ("--window-of 0.19.1"), or NULL if none. */
const char *dpm_window_asked(void);

/* The window in words, for the reports: "TIME 1200 to 2500 ns on each
 * machine's clock (--window 1200:2500)", or "" when there is none. */
const char *dpm_window_describe(void);

#endif
