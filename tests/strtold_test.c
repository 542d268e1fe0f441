/*
 * strtold_test.c — user/lib/strtold.c on the host, against glibc's
 * strtof128, which also reads IEEE binary128 correctly rounded: the same
 * value bit for bit, the same end and the same errno, in each of the four
 * rounding directions, for numbers made to be hard: numbers exactly halfway
 * between two binary128 numbers and a little above and below them, written
 * out in full (over 11,000 digits for the subnormal ones), every number
 * written exactly, random decimal and hexadecimal text at every exponent,
 * and the edges of overflow and underflow (tests/test_kernel.py runs it).
 *
 * strtold.c is compiled into this program, its entry points renamed since
 * the host's C library has its own, with long double made binary128
 * (-mlong-double-128 on x86_64, whose long double is otherwise the x87
 * format); so nothing here passes a long double to the host's library.
 */
struct _reent {
    int _errno;
};
#define strtold strtold_under_test
#define strtold_l strtold_l_under_test
#define _strtold_r strtold_r_under_test
#include "../user/lib/strtold.c"
#undef strtold
#undef strtold_l
#undef _strtold_r

#define __STDC_WANT_IEC_60559_TYPES_EXT__ 1
#include <stdio.h>

#define TEST_NAME "strtold_test"
#include "host_check.h"

_Static_assert(sizeof(long double) == sizeof(_Float128) && LDBL_MANT_DIG == 113,
               "build with long double as binary128 (-mlong-double-128 on x86_64)");

static const int modes[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };

/* text through both, in the current rounding direction. */
static void compare(const char *text)
{
    char *host_end, *end;
    errno = 0;
    _Float128 expected = strtof128(text, &host_end);
    int host_errno = errno;
    errno = 0;
    long double value = strtold_under_test(text, &end);
    int error = errno;
    uint64_t want[2], got[2];
    memcpy(want, &expected, sizeof want);
    memcpy(got, &value, sizeof got);
    int both_nan = expected != expected && value != value;
    int ok = (both_nan || (want[0] == got[0] && want[1] == got[1])) && end == host_end && error == host_errno;
    char what[320];
    snprintf(what, sizeof what, "%.60s (%zu characters, rounding %d): %016llx%016llx end %td errno %d, not "
             "%016llx%016llx end %td errno %d", text, strlen(text), fegetround(), (unsigned long long)got[1],
             (unsigned long long)got[0], end - text, error, (unsigned long long)want[1], (unsigned long long)want[0],
             host_end - text, host_errno);
    check(ok, __FILE__, __LINE__, what);
}

static void compare_in_every_direction(const char *text)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        fesetround(modes[i]);
        compare(text);
    }
    fesetround(FE_TONEAREST);
}

static uint64_t random_state = 0x9e3779b97f4a7c15ULL;

static uint64_t random_number(void)
{
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return random_state;
}

/* A finite binary128 with random bits, its biased exponent in [low, high]. */
static _Float128 random_binary128(uint64_t low, uint64_t high, uint64_t words[2])
{
    words[0] = random_number();
    words[1] = (random_number() & 0xffffffffffffULL) | (low + random_number() % (high - low + 1)) << 48;
    _Float128 value;
    memcpy(&value, words, sizeof value);
    return value;
}

static char text[40000], other[40000];

/* The number halfway between x and the next binary128 above it, exactly,
 * in fixed-point decimal, or a little above or below it (nudge 1 or -1):
 * the two printed with %.Nf (digits enough to be exact), added digit by
 * digit and halved. */
static void halfway_text(_Float128 x, int fraction_digits, int nudge)
{
    uint64_t words[2];
    memcpy(words, &x, sizeof words);
    if (++words[0] == 0)
        words[1]++;
    _Float128 next;
    memcpy(&next, words, sizeof next);
    char format[16];
    snprintf(format, sizeof format, "%%.%df", fraction_digits);
    strfromf128(text, sizeof text / 2, format, x);
    strfromf128(other, sizeof other, format, next);
    size_t length = strlen(text);
    if (strlen(other) != length) { /* next has one more integer digit: pad x */
        memmove(text + 1, text, length + 1);
        text[0] = '0';
        length++;
    }
    int carry = 0;
    for (size_t i = length; i-- > 0;) {
        if (text[i] == '.')
            continue;
        int sum = text[i] - '0' + other[i] - '0' + carry;
        text[i] = (char)('0' + sum % 10);
        carry = sum / 10;
    }
    int remainder = carry;
    for (size_t i = 0; i < length; i++) {
        if (text[i] == '.')
            continue;
        int digit = remainder * 10 + text[i] - '0';
        text[i] = (char)('0' + digit / 2);
        remainder = digit % 2;
    }
    if (!strchr(text, '.'))
        text[length++] = '.';
    text[length++] = remainder ? '5' : '0';
    if (nudge > 0) {
        memset(text + length, '0', 300);
        length += 300;
        text[length++] = '1';
    } else if (nudge < 0) {
        size_t last = length - 1;
        while (text[last] == '0' || text[last] == '.')
            last--;
        text[last]--;
        for (size_t i = last + 1; i < length; i++)
            if (text[i] != '.')
                text[i] = '9';
        memset(text + length, '9', 300);
        length += 300;
    }
    text[length] = '\0';
}

static void fixed_cases(void)
{
    static const char *const cases[] = {
        "0.1", "-0.125", "1e4932", "1.18973149535723176508575932662800707e4932",
        "1.18973149535723176508575932662800708e4932", "1e-4966", "3.23758755971901255546221947911382327624e-4966",
        "3.23758755971901255546221947911382327625e-4966", "1e-5000", "0x1.8p1", "-0X.8P-3", "0x1p-16494",
        "0x1p-16495", "0x1.0000000000000000000000000001p-16495", "0x1.ffffffffffffffffffffffffffff8p16383",
        "0x1.ffffffffffffffffffffffffffff7p16383", "0x1.fffffffffffffffffffffffffffff8p-16383",
        "0x1.ffffffffffffffffffffffffffff7p-16383", "inf", "-infinity", "infinit", "nan", "nan(123)", "nan(12",
        "  +12.5e-3xyz", "0x", "0xp1", "1e+", "1e", "0x1p", "0x1p+", ".e1", "1.", ".5", "0x.p1", "0x.8", "", "-",
        "+.", "00x1", "0e99999999999999", "1e99999999999999999", "1e-99999999999999999", "0x1p99999999999999999",
        "0x0.000000000000000000000000000000000000000001p-16300", "123456789012345678901234567890123456789012345678901",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        compare_in_every_direction(cases[i]);
}

/* Halfway numbers, and a little either side: subnormal and the least
 * normal exponents in full (fixed point), and integers near the top. */
static void halfway_cases(int count)
{
    uint64_t words[2];
    for (int i = 0; i < count; i++) {
        halfway_text(random_binary128(0, 3, words), 16500, i % 3 - 1);
        compare_in_every_direction(text);
        halfway_text(random_binary128(16383 + 113, 32765, words), 0, i % 3 - 1);
        compare_in_every_direction(text);
        halfway_text(random_binary128(16383 - 60, 16383 + 60, words), 200, i % 3 - 1);
        compare_in_every_direction(text);
    }
}

/* Every binary128 written exactly in %e, then cut short or nudged. */
static void exact_cases(int count)
{
    uint64_t words[2];
    for (int i = 0; i < count; i++) {
        _Float128 x = random_binary128(0, 32766, words);
        strfromf128(text, sizeof text, "%.12000e", x);
        char *exponent = strchr(text, 'e'), *last = exponent - 1;
        while (*last == '0' || *last == '.')
            last--;
        char tail[16];
        snprintf(tail, sizeof tail, "%s", exponent);
        switch (i % 3) {
        case 0:
            strcpy(last + 1, tail);
            break;
        case 1:
            strcpy(last + 1, "000000001");
            strcat(text, tail);
            break;
        default:
            last[0]--;
            strcpy(last + 1, "99999999999");
            strcat(text, tail);
            break;
        }
        compare_in_every_direction(text);
    }
}

/* Random decimal and hexadecimal text: digits, a point, an exponent. */
static void random_cases(int count)
{
    for (int i = 0; i < count; i++) {
        int length = 0;
        if (random_number() % 2)
            text[length++] = '-';
        int hex = random_number() % 2;
        if (hex)
            length += sprintf(text + length, "0x");
        int digits = 1 + (int)(random_number() % 45);
        for (int k = 0; k < digits; k++) {
            text[length++] = "0123456789abcdef"[random_number() % (hex ? 16 : 10)];
            if (k == 0 && random_number() % 3 == 0)
                text[length++] = '.';
        }
        if (hex)
            sprintf(text + length, "p%d", (int)(random_number() % 33200) - 16600);
        else
            sprintf(text + length, "e%d", (int)(random_number() % 10000) - 5000);
        compare_in_every_direction(text);
    }
}

int main(void)
{
    fixed_cases();
    halfway_cases(40);
    exact_cases(300);
    random_cases(3000);
    if (failures) {
        fprintf(stderr, "strtold_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("strtold_test: %d checks passed\n", checks);
    return 0;
}
