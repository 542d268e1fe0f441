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
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* binary128 on the host is _Float128 (long double is x87's there). */
#define LD(literal) literal##f128
#define LD_MAX FLT128_MAX
#define LD_MIN FLT128_MIN
#define LD_TRUE_MIN FLT128_TRUE_MIN
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

/* strfromf128(text, size, format, value), format one of strfromf128's
 * (%a, %.3e, ...), but a subnormal's %a or %A as newlib writes it: a first
 * digit 1 and the exponent that needs (libc_formats.h). Multiplying by
 * 2^113 makes it a normal number with the same digits. */
static void binary128_text(char *text, size_t size, const char *format, _Float128 value)
{
    char conversion = format[strlen(format) - 1];
    int subnormal = value != 0 && value > -FLT128_MIN && value < FLT128_MIN;
    if (!subnormal || (conversion != 'a' && conversion != 'A')) {
        strfromf128(text, size, format, value);
        return;
    }
    strfromf128(text, size, format, value * 0x1p113f128);
    char *exponent = strpbrk(text, "pP") + 1;
    snprintf(exponent, size - (size_t)(exponent - text), "%+ld", strtol(exponent, 0, 10) - 113);
}

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

#define LONG_DOUBLE_CASE(name, host_format, format, value)              \
    binary128_text(buffer, sizeof buffer, host_format, value);          \
    define("printf", #name, buffer);
    LONG_DOUBLE_CASES(LONG_DOUBLE_CASE)

#define STRTOLD_CASE(name, input)                                                   \
    {                                                                               \
        char *end;                                                                  \
        errno = 0;                                                                  \
        _Float128 value = strtof128(input, &end);                                   \
        int range = errno == ERANGE;                                                \
        binary128_text(buffer, sizeof buffer, "%a", value);                         \
        size_t length = strlen(buffer);                                             \
        snprintf(buffer + length, sizeof buffer - length, "|%td|%s", end - input,   \
                 range ? "ERANGE" : "0");                                           \
        define("strtold", #name, buffer);                                           \
    }
    STRTOLD_CASES(STRTOLD_CASE)

#define LONG_DOUBLE_SCANF_CASE(name, input, format)                                 \
    memcpy(buffer, "1|", 2);                                                        \
    binary128_text(buffer + 2, sizeof buffer - 2, "%a", strtof128(input, 0));       \
    define("scanf", #name, buffer);
    LONG_DOUBLE_SCANF_CASES(LONG_DOUBLE_SCANF_CASE)

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
