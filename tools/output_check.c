/*
 * output_check.c — whether a host tool may write a file (output_check.h).
 */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <sys/stat.h>

#include "output_check.h"

int output_check(const char *out, const char *const *inputs, size_t n, char *why, size_t cap)
{
    struct stat o, in;
    if (stat(out, &o) != 0)
        return 0;                          /* not there yet (or unreachable: opening it will say why) */
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == o.st_dev && in.st_ino == o.st_ino) {
            snprintf(why, cap, "is the input %s", inputs[i]);
            return -1;
        }
    if (!S_ISREG(o.st_mode)) {
        snprintf(why, cap, "is not a regular file");
        return -1;
    }
    return 0;
}
