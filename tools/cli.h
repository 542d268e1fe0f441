/*
 * cli.h — what the host tools (dmfs, dmtrace) share: running the command
 * their first argument names, and ending on an error with a message
 * `TOOL: ...` on stderr and an exit status. Each tool defines its name,
 * cli_program, once.
 */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>

/* The tool's name, the first word of every message ("dmfs"). */
extern const char cli_program[];

/* A usage error's exit status (both tools' help texts: 2). */
#define CLI_STATUS_USAGE 2

/* Prints `TOOL: ` and the message to stderr and exits with `status`. */
void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* A usage error: prints `TOOL: usage: `, the message and where the help
 * is (` (see TOOL --help)`), and exits with CLI_STATUS_USAGE. */
void usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* One command of a tool: `TOOL NAME ARGS` runs run(argc, argv) with
 * ARGS; it returns the exit status. */
struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
};

/* The tool's main: prints help_text (exit status 0) for --help anywhere
 * (before a `--` argument when help_stops_at_dashes), or -h or help
 * first; else runs the command argv[1] names. No command, or an unknown
 * one, is a usage error naming the commands. */
int cli_main(int argc, char **argv, const struct cli_command *commands, size_t count, const char *help_text,
             int help_stops_at_dashes);

#endif
