/*
 * analysis/commands/commands.h — the subcommands of `dpm` and what they
 * share: each cmd_NAME(argc, argv), in commands/cmd_NAME.c, runs `dpm NAME
 * ...` with argv[0] the subcommand's name, parses its own options (and
 * --help), and returns the exit status. dpm.c dispatches to them and holds
 * the helpers declared at the end.
 *
 * Exit statuses are the same for every subcommand: DPM_OK, DPM_BAD_INPUT
 * (a file that cannot be read or written, a damaged log, a scenario or
 * rules that do not parse), DPM_USAGE (a wrong command line).
 */
#ifndef ANALYSIS_COMMANDS_COMMANDS_H
#define ANALYSIS_COMMANDS_COMMANDS_H

enum { DPM_OK = 0, DPM_BAD_INPUT = 1, DPM_USAGE = 2 };

/* Reading, summing and converting logs. */
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_generate(int argc, char **argv);

/* The graph analyses. */
int cmd_causality(int argc, char **argv);
int cmd_parallelism(int argc, char **argv);
int cmd_critpath(int argc, char **argv);
int cmd_clocks(int argc, char **argv);
int cmd_waitstates(int argc, char **argv);

/* The HTML report and the live view of a filter's stream. */
int cmd_report(int argc, char **argv);
int cmd_live(int argc, char **argv);

/* Print `dpm: ` and the message on standard error and exit with DPM_BAD_INPUT. */
void dpm_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A usage error of subcommand `command`: says what is wrong and where the
 * help is, and exits with DPM_USAGE. */
void dpm_usage(const char *command, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* If --help (or -h) is among the arguments, print `help` and return 1. */
int dpm_help_asked(int argc, char **argv, const char *help);

#endif
