/*
 * libc_expected.c — what the host's C library prints for each printf and
 * scanf case of user/tests/libc_formats.h, written as a C header
 * (build/user/tests/libc_expected.h, made by the Makefile) that
 * user/tests/libctest.c compiles in and checks newlib against in the OS.
 *
 *     libc_expected > libc_expected.h
 *
 * Each case gives one line: #define EXPECTED_<kind>_<name> "<output>",
 * the output with every byte outside printable ASCII, '"' and '\' escaped
 * in octal.
 */
#define __STDC_WANT_IEC_60559_TYPES_EXT__ 1
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "libc_formats.h"

/* Writes #define EXPECTED_<kind>_<name> "<text>" to standard output. */
static void define(const char *kind, const char *name, const char *text)
{
    printf("#define EXPECTED_%s_%s \"", kind, name);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p < ' ' || *p > '~' || *p == '"' || *p == '\\')
            printf("\\%03o", *p);
        else
            putchar(*p);
    }
    printf("\"\n");
}

static char buffer[512];

int main(void)
{
    printf("/* Made by tests/libc_expected.c from user/tests/libc_formats.h: what the host's C library\n"
           " * prints for each case. */\n");

#define PRINTF_CASE(name, ...)                          \
    snprintf(buffer, sizeof buffer, __VA_ARGS__);       \
    define("printf", #name, buffer);
    PRINTF_CASES(PRINTF_CASE)

#define PRINTF_COUNT_CASE(name, type, format, ...)                                  \
    {                                                                               \
        type count = -1;                                                            \
        int length = snprintf(buffer, sizeof buffer, format, __VA_ARGS__, &count);  \
        snprintf(buffer + length, sizeof buffer - (size_t)length, "|%lld", (long long)count); \
        define("printf", #name, buffer);                                            \
    }
    PRINTF_COUNT_CASES(PRINTF_COUNT_CASE)

#define LONG_DOUBLE_HEX_CASE(name, host_format, format, value)          \
    strfromf128(buffer, sizeof buffer, host_format, (_Float128)(value)); \
    define("printf", #name, buffer);
    LONG_DOUBLE_HEX_CASES(LONG_DOUBLE_HEX_CASE)

#define SCANF_CASE(name, input, format, type, show)                                 \
    {                                                                               \
        type value = 0;                                                             \
        int count = sscanf(input, format, &value);                                  \
        int length = snprintf(buffer, sizeof buffer, "%d|", count);                 \
        snprintf(buffer + length, sizeof buffer - (size_t)length, show, value);     \
        define("scanf", #name, buffer);                                             \
    }
    SCANF_CASES(SCANF_CASE)

#define SCANF_STRING_CASE(name, input, format)                                      \
    {                                                                               \
        char value[32] = "";                                                        \
        int count = sscanf(input, format, value);                                   \
        snprintf(buffer, sizeof buffer, "%d|%s", count, value);                     \
        define("scanf", #name, buffer);                                             \
    }
    SCANF_STRING_CASES(SCANF_STRING_CASE)

#define SCANF_PAIR_CASE(name, input, format, type1, type2, show)                    \
    {                                                                               \
        type1 first = 0;                                                            \
        type2 second = 0;                                                           \
        int count = sscanf(input, format, &first, &second);                         \
        int length = snprintf(buffer, sizeof buffer, "%d|", count);                 \
        snprintf(buffer + length, sizeof buffer - (size_t)length, show, first, second); \
        define("scanf", #name, buffer);                                             \
    }
    SCANF_PAIR_CASES(SCANF_PAIR_CASE)
    return 0;
}
