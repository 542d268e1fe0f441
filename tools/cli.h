/*
 * cli.h — how the host tools (dmfs, dmtrace) end on an error: a message
 * `TOOL: ...` on stderr and an exit status. Each tool defines its name,
 * cli_program, once.
 */
#ifndef CLI_H
#define CLI_H

/* The tool's name, the first word of every message ("dmfs"). */
extern const char cli_program[];

/* A usage error's exit status (both tools' help texts: 2). */
#define CLI_STATUS_USAGE 2

/* Prints `TOOL: ` and the message to stderr and exits with `status`. */
void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* A usage error: prints `TOOL: usage: `, the message and where the help
 * is (` (see TOOL --help)`), and exits with CLI_STATUS_USAGE. */
void usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
