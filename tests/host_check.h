/*
 * host_check.h — the checks of the host unit tests (netframe_test.c,
 * transport_test.c). CHECK(cond) counts a check and reports a failed one on
 * stderr as `TEST_NAME: file:line: failed: cond` (the first 20 of them).
 * Define TEST_NAME before including it; `checks` and `failures` make the
 * summary.
 */
#ifndef HOST_CHECK_H
#define HOST_CHECK_H

#include <stdio.h>

static int checks, failures;

#define CHECK(cond) check((cond), __FILE__, __LINE__, #cond)

/* Count a check; report it if it failed. */
static void check(int ok, const char *file, int line, const char *what)
{
    checks++;
    if (!ok) {
        failures++;
        if (failures <= 20)
            fprintf(stderr, "%s: %s:%d: failed: %s\n", TEST_NAME, file, line, what);
    }
}

#endif
