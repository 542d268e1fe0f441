/*
 * strtold.c — newlib's strtold for this system. newlib 3.3.0 reads a long
 * double with its x87 reader (_strtorx_l), which writes the 80-bit
 * extended format; riscv64's long double is IEEE binary128, so the value
 * it gives is garbage (strtold("1.5") is about 2e-4942). These definitions
 * replace every function of newlib's strtold.c (so that it is never
 * linked) and read the number as a double: exact for every value a double
 * holds, to double's precision otherwise. scanf's %Lf, %Le and %Lg
 * read through _strtold_r. docs/programs.md lists this limit.
 */
#define _GNU_SOURCE   /* strtod_l and strtold_l */
#include <locale.h>
#include <stdlib.h>

long double _strtold_r(struct _reent *reent, const char *restrict text, char **restrict end)
{
    return _strtod_r(reent, text, end);
}

long double strtold_l(const char *restrict text, char **restrict end, locale_t locale)
{
    return strtod_l(text, end, locale);
}

long double strtold(const char *restrict text, char **restrict end)
{
    return strtod(text, end);
}
