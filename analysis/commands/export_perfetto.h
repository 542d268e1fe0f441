/*
 * analysis/commands/export_perfetto.h — `dpm export --perfetto`: a trace as
 * the Trace Event Format's JSON that Perfetto and Chrome read (what it
 * holds: dpm export --help), written by commands/export_perfetto.c for
 * commands/cmd_export.c; and how both write a label.
 */
#ifndef ANALYSIS_COMMANDS_EXPORT_PERFETTO_H
#define ANALYSIS_COMMANDS_EXPORT_PERFETTO_H

#include <stdio.h>

/* Write the JSON of logs[0..n), read as one trace, into `path`. A log
 * that cannot be read, or an output that cannot be written, ends dpm
 * (dpm_fail); a damaged log does so before `path` is opened. */
void export_perfetto(const char *path, char *const *logs, int n);

/* A label inside a quoted string of JSON or DOT (export --dot's too):
 * program names come from the trace, so a quote, a backslash or a control
 * character is escaped or blanked. */
void export_label(FILE *f, const char *s);

#endif
