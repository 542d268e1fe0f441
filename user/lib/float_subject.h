/*
 * float_subject.h — the text that strtod reads, its "subject sequence"
 * (C99 7.20.1.3), recognized one character at a time. strtold
 * (user/lib/strtold.c) finds with it where a number ends, and scanf's a, e,
 * f and g conversions (newlib's vfscanf.c as scripts/newlib/vfscanf.patch
 * changes it) which characters of the input make the input item
 * (C99 7.19.6.2), before giving them to strtod or strtold: both read the
 * same grammar, written once.
 *
 * After an optional + or -, a subject sequence is one of
 *   - decimal digits, optionally with a decimal point among or after them
 *     (at least one digit), then optionally e or E, a sign and digits;
 *   - 0x or 0X, then hexadecimal digits in the same way, then optionally
 *     p or P, a sign and decimal digits (a power of two);
 *   - INF or INFINITY;
 *   - NAN, or NAN( letters, digits and _ ),
 * letters in either case. The decimal point is the locale's, one or more
 * bytes.
 *
 *     struct float_subject subject;
 *     _float_subject_start(&subject, localeconv()->decimal_point);
 *     while (_float_subject_next(&subject, *p))
 *         p++;
 *     subject.complete: how many of the characters taken form the longest
 *     subject sequence among them (0 if none does)
 *
 * The characters taken are the longest prefix of the text that is, or
 * begins, a subject sequence; those past `complete` ("1e+", "0x", "infin")
 * are what scanf gives back to the stream.
 *
 * newlib's libc.a calls these functions, so the header is copied into its
 * source by scripts/build-newlib.sh; changing it builds newlib again.
 */
#ifndef FLOAT_SUBJECT_H
#define FLOAT_SUBJECT_H

#include <stddef.h>

struct float_subject {
    const char *decimal_point; /* the locale's decimal point */
    const char *name;          /* "infinity" or "nan" while one is read */
    unsigned char part;        /* which part of the sequence comes next (strtold.c's enum float_part) */
    unsigned char after_point; /* the part after the decimal point being read */
    unsigned char hex;         /* the number began with 0x */
    unsigned char matched;     /* bytes of the decimal point, or letters of the name, read */
    size_t length;             /* characters taken */
    size_t complete;           /* the longest prefix taken that is a subject sequence */
};

/* Begins a subject sequence; decimal_point must outlive it. */
void _float_subject_start(struct float_subject *subject, const char *decimal_point);

/* Takes c if the characters taken and c are, or begin, a subject
 * sequence, and says so (1); otherwise takes nothing and says 0. */
int _float_subject_next(struct float_subject *subject, int c);

#endif
