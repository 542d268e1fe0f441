/*
 * cli.c — the host tools' command dispatch and error exits (cli.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The commands' names into out: "a, b, c" then `last_joiner` and the last. */
static void command_list(const struct cli_command *commands, size_t count, const char *last_joiner, char *out,
                         size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < count && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", i == 0 ? "" : i + 1 == count ? last_joiner : ", ",
                               commands[i].name);
}

int cli_main(int argc, char **argv, const struct cli_command *commands, size_t count, const char *help_text,
             int help_stops_at_dashes)
{
    char list[256];
    if (argc < 2) {
        command_list(commands, count, " or ", list, sizeof list);
        usage("%s COMMAND ARGS, where COMMAND is %s", cli_program, list);
    }
    for (int i = 1; i < argc && !(help_stops_at_dashes && strcmp(argv[i], "--") == 0); i++)
        if (strcmp(argv[i], "--help") == 0 || (i == 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0))) {
            fputs(help_text, stdout);
            return 0;
        }
    for (size_t i = 0; i < count; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    command_list(commands, count, " and ", list, sizeof list);
    usage("unknown command '%s'; the commands are %s", argv[1], list);
}

void die(int status, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", cli_program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(status);
}

void usage(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: usage: ", cli_program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see %s --help)\n", cli_program);
    exit(CLI_STATUS_USAGE);
}
