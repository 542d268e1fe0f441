/*
 * cli.c — the host tools' error exits (cli.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"

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
