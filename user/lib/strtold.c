/*
 * strtold.c — strtold for riscv64's long double, IEEE binary128 (a 113-bit
 * significand, exponents -16382 to 16383), correctly rounded in the current
 * rounding direction, for decimal and hexadecimal text, infinities and
 * NaNs (C99 7.20.1.3); and the grammar of that text, which scanf's float
 * conversions read too (float_subject.h).
 *
 * newlib 3.3.0's own strtold writes the x87 80-bit format, nonsense in a
 * binary128; scripts/build-newlib.sh takes it out of libc.a, and these
 * functions take its place: every program links this file, and newlib's
 * scanf and wcstold call it.
 *
 * A number is read exactly, in integers. Its text gives an integer
 * significand and an exponent: hexadecimal text a significand of at most
 * 128 bits and a power of two (the digits past 128 bits only say whether
 * anything nonzero follows); decimal text digits D and a power of ten
 * 10^E = 5^E 2^E. For E >= 0 the product D 5^E is formed in full; for
 * E < 0, long division of D by 5^-E, both scaled by powers of two, gives a
 * quotient of 116 or 117 bits and a remainder. Either way the value
 * becomes an integer of at most 128 bits, a power of two and a "sticky"
 * flag saying whether anything nonzero lies below that integer's last bit,
 * which is all round_to_binary128() needs to round it.
 */
#define _GNU_SOURCE /* strtold_l */
#include <errno.h>
#include <fenv.h>
#include <float.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "float_subject.h"

_Static_assert(LDBL_MANT_DIG == 113 && LDBL_MAX_EXP == 16384 && LDBL_MIN_EXP == -16381,
               "long double is IEEE binary128");

typedef unsigned __int128 uint128;

static long double text_to_long_double(const char *text, char **end, int *error);

long double strtold(const char *restrict text, char **restrict end)
{
    int error = 0;
    long double value = text_to_long_double(text, end, &error);
    if (error)
        errno = error;
    return value;
}

long double _strtold_r(struct _reent *reent, const char *restrict text, char **restrict end)
{
    int error = 0;
    long double value = text_to_long_double(text, end, &error);
    if (error)
        reent->_errno = error;
    return value;
}

/* Every locale newlib has on this system reads numbers as the C locale
 * does (newlib is built without locale data for LC_NUMERIC), so the
 * locale argument changes nothing. */
long double strtold_l(const char *restrict text, char **restrict end, locale_t locale)
{
    (void)locale;
    return strtold(text, end);
}

/* ---- The grammar (float_subject.h) ---- */

enum float_part {
    PART_START,          /* nothing yet: a sign, or what may follow one */
    PART_SIGNED,         /* after the sign */
    PART_ZERO,           /* a first digit 0, which 0x may continue */
    PART_HEX_PREFIX,     /* after 0x: a digit or the decimal point */
    PART_INTEGER,        /* in the digits before the decimal point */
    PART_LEADING_POINT,  /* after a decimal point with no digit before it */
    PART_FRACTION,       /* in the digits after the decimal point */
    PART_EXPONENT_MARK,  /* after e or p */
    PART_EXPONENT_SIGN,  /* after the exponent's sign */
    PART_EXPONENT,       /* in the exponent's digits */
    PART_NAME,           /* in "infinity" or "nan" */
    PART_NAN_OPEN,       /* after "nan": ( may follow */
    PART_NAN_CHARS,      /* after "nan(" */
    PART_END,            /* nothing more can be taken */
};

/* What a character does: not taken; taken, the text so far beginning a
 * subject sequence; taken, the text so far a whole one. */
enum step { REJECTED, PREFIX, COMPLETE };

void _float_subject_start(struct float_subject *subject, const char *decimal_point)
{
    *subject = (struct float_subject){ .decimal_point = decimal_point, .part = PART_START };
}

static enum step take(struct float_subject *subject, int c);

int _float_subject_next(struct float_subject *subject, int c)
{
    enum step step = take(subject, c);
    if (step == REJECTED)
        return 0;
    subject->length++;
    if (step == COMPLETE)
        subject->complete = subject->length;
    return 1;
}

static int decimal_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* The value of a hexadecimal digit, or -1. */
static int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int lower_case(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* c as the first byte of the decimal point, after which `next` comes. */
static enum step take_point(struct float_subject *subject, int c, enum float_part next)
{
    if (c != (unsigned char)subject->decimal_point[0])
        return REJECTED;
    if (subject->decimal_point[1] != '\0') {
        subject->matched = 1;
        subject->after_point = next;
        return PREFIX;
    }
    subject->part = next;
    return next == PART_FRACTION ? COMPLETE : PREFIX;
}

/* The rest of a decimal point of several bytes. */
static enum step take_point_byte(struct float_subject *subject, int c)
{
    if (c != (unsigned char)subject->decimal_point[subject->matched])
        return REJECTED;
    if (subject->decimal_point[++subject->matched] != '\0')
        return PREFIX;
    subject->matched = 0;
    subject->part = subject->after_point;
    return subject->part == PART_FRACTION ? COMPLETE : PREFIX;
}

/* The state machine of the grammar in float_subject.h. */
static enum step take(struct float_subject *subject, int c)
{
    int digit = subject->hex ? hex_digit(c) >= 0 : decimal_digit(c);
    int exponent_mark = lower_case(c) == (subject->hex ? 'p' : 'e');

    if (subject->matched > 0 && subject->part != PART_NAME)
        return take_point_byte(subject, c);
    switch ((enum float_part)subject->part) {
    case PART_START:
        if (c == '+' || c == '-') {
            subject->part = PART_SIGNED;
            return PREFIX;
        }
        /* fall through */
    case PART_SIGNED:
        if (c == '0') {
            subject->part = PART_ZERO;
            return COMPLETE;
        }
        if (digit) {
            subject->part = PART_INTEGER;
            return COMPLETE;
        }
        if (lower_case(c) == 'i' || lower_case(c) == 'n') {
            subject->name = lower_case(c) == 'i' ? "infinity" : "nan";
            subject->matched = 1;
            subject->part = PART_NAME;
            return PREFIX;
        }
        return take_point(subject, c, PART_LEADING_POINT);
    case PART_ZERO:
        if (lower_case(c) == 'x') {
            subject->hex = 1;
            subject->part = PART_HEX_PREFIX;
            return PREFIX;
        }
        /* fall through */
    case PART_INTEGER:
        if (digit) {
            subject->part = PART_INTEGER;
            return COMPLETE;
        }
        if (exponent_mark) {
            subject->part = PART_EXPONENT_MARK;
            return PREFIX;
        }
        return take_point(subject, c, PART_FRACTION);
    case PART_HEX_PREFIX:
        if (digit) {
            subject->part = PART_INTEGER;
            return COMPLETE;
        }
        return take_point(subject, c, PART_LEADING_POINT);
    case PART_LEADING_POINT:
        if (!digit)
            return REJECTED;
        subject->part = PART_FRACTION;
        return COMPLETE;
    case PART_FRACTION:
        if (digit)
            return COMPLETE;
        if (!exponent_mark)
            return REJECTED;
        subject->part = PART_EXPONENT_MARK;
        return PREFIX;
    case PART_EXPONENT_MARK:
        if (c == '+' || c == '-') {
            subject->part = PART_EXPONENT_SIGN;
            return PREFIX;
        }
        /* fall through */
    case PART_EXPONENT_SIGN:
    case PART_EXPONENT:
        if (!decimal_digit(c))
            return REJECTED;
        subject->part = PART_EXPONENT;
        return COMPLETE;
    case PART_NAME:
        if (lower_case(c) != subject->name[subject->matched])
            return REJECTED;
        subject->matched++;
        if (subject->name[subject->matched] != '\0')
            return subject->matched == 3 ? COMPLETE : PREFIX; /* "inf" */
        subject->matched = 0;
        subject->part = subject->name[0] == 'n' ? PART_NAN_OPEN : PART_END;
        return COMPLETE;
    case PART_NAN_OPEN:
        if (c != '(')
            return REJECTED;
        subject->part = PART_NAN_CHARS;
        return PREFIX;
    case PART_NAN_CHARS:
        if (c == ')') {
            subject->part = PART_END;
            return COMPLETE;
        }
        return decimal_digit(c) || (lower_case(c) >= 'a' && lower_case(c) <= 'z') || c == '_' ? PREFIX : REJECTED;
    case PART_END:
        break;
    }
    return REJECTED;
}

/* ---- Rounding to binary128 ---- */

#define SIGNIFICAND_BITS 113
#define LEAST_BIT_MIN (-16494)   /* the weight of a subnormal's last bit, 2^-16494 */
#define NORMAL_MIN (-16382)      /* LDBL_MIN is 2^-16382 */
#define EXPONENT_FIELD_MAX 32767 /* the exponent field of infinities and NaNs */

static int bit_length(uint128 m)
{
    uint64_t high = (uint64_t)(m >> 64), low = (uint64_t)m;
    return high ? 128 - __builtin_clzll(high) : low ? 64 - __builtin_clzll(low) : 0;
}

/* m divided by 2^shift (shift >= 0) and rounded to an integer in the
 * direction `mode`, for a value of sign `negative` whose bits below m's
 * last are nonzero when `sticky`; *inexact says whether anything was lost.
 * A sticky m has more bits than shift, so that its round bit is in m. */
static uint128 shift_and_round(uint128 m, long shift, int sticky, int negative, int mode, int *inexact)
{
    uint128 kept;
    int round_bit, rest;
    if (shift == 0) {
        kept = m;
        round_bit = 0;
        rest = sticky;
    } else if (shift <= 128) {
        kept = shift == 128 ? 0 : m >> shift;
        round_bit = (int)(m >> (shift - 1)) & 1;
        rest = sticky || (shift > 1 && m << (129 - shift) != 0);
    } else {
        kept = 0;
        round_bit = 0;
        rest = 1;
    }
    *inexact = round_bit || rest;
    int up;
    switch (mode) {
    case FE_TOWARDZERO:
        up = 0;
        break;
    case FE_UPWARD:
        up = !negative && *inexact;
        break;
    case FE_DOWNWARD:
        up = negative && *inexact;
        break;
#ifdef FE_TONEAREST_MM /* RISC-V's "round to nearest, ties to max magnitude" */
    case FE_TONEAREST_MM:
        up = round_bit;
        break;
#endif
    default:
        up = round_bit && (rest || (kept & 1));
        break;
    }
    return kept + (uint128)up;
}

static long double from_bits(int negative, uint64_t exponent_field, uint128 fraction)
{
    uint64_t words[2] = { (uint64_t)fraction,
                          (uint64_t)negative << 63 | exponent_field << 48 |
                              ((uint64_t)(fraction >> 64) & 0xffffffffffffULL) };
    long double value;
    memcpy(&value, words, sizeof value);
    return value;
}

/* The long double nearest, in the current rounding direction, to
 * (-1)^negative (m + f) 2^e with 0 <= f < 1, f > 0 when `sticky`; m > 0.
 * *error becomes ERANGE when the result overflows, or is below LDBL_MIN
 * (after rounding, as riscv64's arithmetic judges it) and inexact. */
static long double round_to_binary128(int negative, uint128 m, long e, int sticky, int *error)
{
    int mode = fegetround(), inexact = 0;
    long top = e + bit_length(m) - 1; /* the weight of m's leading bit is 2^top */
    long least = top - (SIGNIFICAND_BITS - 1);
    if (least < LEAST_BIT_MIN)
        least = LEAST_BIT_MIN;
    uint128 r = least >= e ? shift_and_round(m, least - e, sticky, negative, mode, &inexact) : m << (e - least);
    if (r >> SIGNIFICAND_BITS) { /* rounding carried into a 114th bit */
        r >>= 1;
        least++;
    }
    long field = r >> (SIGNIFICAND_BITS - 1) ? least - LEAST_BIT_MIN + 1 : 0;
    if (field >= EXPONENT_FIELD_MAX) {
        *error = ERANGE;
        int infinite = (mode != FE_TOWARDZERO && mode != FE_UPWARD && mode != FE_DOWNWARD) ||
                       (mode == FE_UPWARD && !negative) || (mode == FE_DOWNWARD && negative);
        return infinite ? from_bits(negative, EXPONENT_FIELD_MAX, 0)
                        : from_bits(negative, EXPONENT_FIELD_MAX - 1, ~(uint128)0);
    }
    if (inexact && top < NORMAL_MIN) {
        /* Tiny unless rounding to 113 bits, with no least exponent,
         * carries the value up to LDBL_MIN itself. */
        int tiny = 1;
        if (top + 1 == NORMAL_MIN && top - (SIGNIFICAND_BITS - 1) >= e) {
            int ignored;
            tiny = !(shift_and_round(m, top - (SIGNIFICAND_BITS - 1) - e, sticky, negative, mode, &ignored) >>
                     SIGNIFICAND_BITS);
        }
        if (tiny)
            *error = ERANGE;
    }
    return from_bits(negative, (uint64_t)field, r);
}

/* ---- Big integers, for decimal text ---- */

/* A nonnegative integer in 64-bit limbs, least significant first; length
 * limbs are in use, the last nonzero (none for 0). */
struct big {
    uint64_t *limb;
    size_t length;
};

static void big_set(struct big *b, uint64_t value)
{
    b->limb[0] = value;
    b->length = value != 0;
}

/* b = b * factor + addend. */
static void big_multiply_add(struct big *b, uint64_t factor, uint64_t addend)
{
    uint64_t carry = addend;
    for (size_t i = 0; i < b->length; i++) {
        uint128 product = (uint128)b->limb[i] * factor + carry;
        b->limb[i] = (uint64_t)product;
        carry = (uint64_t)(product >> 64);
    }
    if (carry)
        b->limb[b->length++] = carry;
}

static long big_bit_length(const struct big *b)
{
    return b->length == 0 ? 0 : (long)(b->length - 1) * 64 + (64 - __builtin_clzll(b->limb[b->length - 1]));
}

static void big_shift_left(struct big *b, long bits)
{
    if (b->length == 0 || bits == 0)
        return;
    size_t limbs = (size_t)bits / 64, shift = (size_t)bits % 64;
    b->limb[b->length + limbs] = 0;
    for (size_t i = b->length; i-- > 0;) {
        if (shift) {
            b->limb[i + limbs + 1] |= b->limb[i] >> (64 - shift);
            b->limb[i + limbs] = b->limb[i] << shift;
        } else {
            b->limb[i + limbs] = b->limb[i];
        }
    }
    for (size_t i = 0; i < limbs; i++)
        b->limb[i] = 0;
    b->length += limbs + 1;
    while (b->length > 0 && b->limb[b->length - 1] == 0)
        b->length--;
}

/* Shifts b right by `bits`, saying whether any bit shifted out was 1. */
static int big_shift_right(struct big *b, long bits)
{
    size_t limbs = (size_t)bits / 64, shift = (size_t)bits % 64;
    int lost = 0;
    if (limbs >= b->length) {
        lost = b->length > 0;
        b->length = 0;
        return lost;
    }
    for (size_t i = 0; i < limbs; i++)
        lost |= b->limb[i] != 0;
    if (shift)
        lost |= (b->limb[limbs] << (64 - shift)) != 0;
    for (size_t i = limbs; i < b->length; i++) {
        uint64_t next = i + 1 < b->length ? b->limb[i + 1] : 0;
        b->limb[i - limbs] = shift ? b->limb[i] >> shift | next << (64 - shift) : b->limb[i];
    }
    b->length -= limbs;
    while (b->length > 0 && b->limb[b->length - 1] == 0)
        b->length--;
    return lost;
}

static int big_compare(const struct big *a, const struct big *b)
{
    if (a->length != b->length)
        return a->length < b->length ? -1 : 1;
    for (size_t i = a->length; i-- > 0;)
        if (a->limb[i] != b->limb[i])
            return a->limb[i] < b->limb[i] ? -1 : 1;
    return 0;
}

/* a -= b, for a >= b. */
static void big_subtract(struct big *a, const struct big *b)
{
    uint64_t borrow = 0;
    for (size_t i = 0; i < a->length; i++) {
        uint64_t subtrahend = i < b->length ? b->limb[i] : 0;
        uint64_t difference = a->limb[i] - subtrahend - borrow;
        borrow = a->limb[i] < subtrahend || (a->limb[i] == subtrahend && borrow);
        a->limb[i] = difference;
    }
    while (a->length > 0 && a->limb[a->length - 1] == 0)
        a->length--;
}

/* b = b * 5^power. */
static void big_multiply_power_of_five(struct big *b, long power)
{
    const uint64_t five_27 = 7450580596923828125ULL; /* 5^27, the largest power of 5 below 2^64 */
    for (; power >= 27; power -= 27)
        big_multiply_add(b, five_27, 0);
    uint64_t factor = 1;
    for (; power > 0; power--)
        factor *= 5;
    big_multiply_add(b, factor, 0);
}

/* ---- Reading the text ---- */

/* A digit string cut after this many significant digits, with a digit 1
 * appended when anything nonzero was cut, rounds as the whole string
 * does: every number halfway between two long doubles, and every long
 * double, has at most 11,564 significant digits (the most, an odd number
 * below 2^114 times 2^-16495, is that odd number times 5^16495 over
 * 10^16495), so no such number lies between the cut string and the whole. */
#define DIGITS_KEPT 11600

/* An exponent in the text is held to this size: beyond it, the value is
 * 0 or infinite whatever the digits. */
#define EXPONENT_LIMIT 1000000000L

/* The exponent's digits at *p, as a decimal number, its size limited. */
static long read_exponent(const char *p, const char *end)
{
    int negative = *p == '-';
    if (*p == '+' || *p == '-')
        p++;
    long value = 0;
    for (; p < end; p++)
        if (value < EXPONENT_LIMIT)
            value = value * 10 + (*p - '0');
    return negative ? -value : value;
}

/* The hexadecimal number in [p, end) (after 0x, a subject sequence). */
static long double read_hex(int negative, const char *p, const char *end, const char *point, int *error)
{
    size_t point_length = strlen(point);
    uint128 m = 0;
    long e = 0;
    int sticky = 0, after_point = 0;
    for (; p < end && lower_case(*p) != 'p'; p++) {
        if (strncmp(p, point, point_length) == 0) {
            after_point = 1;
            p += point_length - 1;
            continue;
        }
        int digit = hex_digit(*p);
        if (m >> 124 == 0) {
            m = m << 4 | (uint128)digit;
            e -= after_point ? 4 : 0;
        } else {
            sticky |= digit != 0;
            e += after_point ? 0 : 4;
        }
    }
    if (p < end)
        e += read_exponent(p + 1, end);
    if (m == 0)
        return from_bits(negative, 0, 0);
    return round_to_binary128(negative, m, e, sticky, error);
}

/* The decimal number in [p, end) (a subject sequence, after the sign). */
static long double read_decimal(int negative, const char *p, const char *end, const char *point, int *error)
{
    size_t point_length = strlen(point);

    /* Where the digits are: the significant ones are those from the
     * first nonzero digit to the last, counted among all digits. */
    const char *digits_end = p, *point_at = 0;
    long count = 0, integer_digits = -1, first = -1, last = -1;
    for (; digits_end < end && lower_case(*digits_end) != 'e'; digits_end++) {
        if (strncmp(digits_end, point, point_length) == 0) {
            point_at = digits_end;
            integer_digits = count;
            digits_end += point_length - 1;
            continue;
        }
        if (*digits_end != '0') {
            if (first < 0)
                first = count;
            last = count;
        }
        count++;
    }
    if (first < 0)
        return from_bits(negative, 0, 0);
    if (integer_digits < 0)
        integer_digits = count;
    long exponent = digits_end < end ? read_exponent(digits_end + 1, end) : 0;

    /* The value is D 10^power, D the significant digits (cut as
     * DIGITS_KEPT says), and lies in [10^leading, 10^(leading + 1)). */
    long leading = integer_digits - 1 - first + exponent;
    if (leading > LDBL_MAX_10_EXP)
        return round_to_binary128(negative, 1, 2L * EXPONENT_LIMIT, 0, error);
    if (leading < LDBL_MIN_10_EXP - 36) /* below 10^-4966, under half the least subnormal */
        return round_to_binary128(negative, 1, -2L * EXPONENT_LIMIT, 0, error);
    int cut = last - first + 1 > DIGITS_KEPT;
    if (cut)
        last = first + DIGITS_KEPT - 1;
    long power = integer_digits - 1 - last + exponent;

    /* Room for D, or D times 5^power, or for the division's two numbers;
     * 19 decimal digits and 27 powers of 5 each fit in a limb. At most
     * about 20 KB; without it, the result is 0 and errno ENOMEM. */
    long digits = last - first + 1 + cut;
    size_t d_limbs = (size_t)digits / 19 + 2, five_limbs = (size_t)(power < 0 ? -power : power) / 27 + 2;
    size_t limbs = d_limbs + five_limbs + 4;
    uint64_t *memory = malloc(2 * limbs * sizeof *memory);
    if (!memory) {
        *error = ENOMEM;
        return 0;
    }
    struct big d = { memory, 0 }, divisor = { memory + limbs, 0 };

    big_set(&d, 0);
    uint64_t chunk = 0, scale = 1;
    long index = 0;
    for (const char *q = p; q < digits_end && index <= last; q++) {
        if (q == point_at) {
            q += point_length - 1;
            continue;
        }
        if (index++ < first)
            continue;
        chunk = chunk * 10 + (uint64_t)(*q - '0');
        scale *= 10;
        if (scale == 10000000000000000000ULL) {
            big_multiply_add(&d, scale, chunk);
            chunk = 0;
            scale = 1;
        }
    }
    if (cut) {
        chunk = chunk * 10 + 1;
        scale *= 10;
        power--;
    }
    big_multiply_add(&d, scale, chunk);

    long double value;
    if (power >= 0) {
        big_multiply_power_of_five(&d, power);
        long shift = big_bit_length(&d) - 128;
        int sticky = 0;
        if (shift > 0)
            sticky = big_shift_right(&d, shift);
        else
            shift = 0;
        uint128 m = d.limb[0] | (d.length > 1 ? (uint128)d.limb[1] << 64 : 0);
        value = round_to_binary128(negative, m, shift + power, sticky, error);
    } else {
        /* D 2^a / (5^-power 2^b), a or b 0, the numbers divided of equal
         * length, the quotient bit by bit from its 2^116 down. */
        big_set(&divisor, 1);
        big_multiply_power_of_five(&divisor, -power);
        long a = big_bit_length(&divisor) + 116 - big_bit_length(&d), b = 0;
        if (a < 0) {
            b = -a;
            a = 0;
        }
        big_shift_left(&d, a);
        big_shift_left(&divisor, b + 116);
        uint128 q = 0;
        for (int bit = 116; bit >= 0; bit--) {
            if (big_compare(&d, &divisor) >= 0) {
                big_subtract(&d, &divisor);
                q |= (uint128)1 << bit;
            }
            big_shift_right(&divisor, 1);
        }
        value = round_to_binary128(negative, q, b - a + power, d.length != 0, error);
    }
    free(memory);
    return value;
}

/* strtold: the subject sequence after any white space, and its value. */
static long double text_to_long_double(const char *text, char **end, int *error)
{
    const char *point = localeconv()->decimal_point, *p = text;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        p++;
    struct float_subject subject;
    _float_subject_start(&subject, point);
    while (p[subject.length] != '\0' && _float_subject_next(&subject, (unsigned char)p[subject.length]))
        ;
    if (end)
        *end = (char *)(subject.complete ? p + subject.complete : text);
    if (subject.complete == 0)
        return 0;

    const char *stop = p + subject.complete;
    int negative = *p == '-';
    if (*p == '+' || *p == '-')
        p++;
    if (lower_case(*p) == 'i')
        return from_bits(negative, EXPONENT_FIELD_MAX, 0);
    if (lower_case(*p) == 'n')
        return from_bits(negative, EXPONENT_FIELD_MAX, (uint128)1 << (SIGNIFICAND_BITS - 2)); /* quiet */
    if (stop - p > 2 && p[0] == '0' && lower_case(p[1]) == 'x')
        return read_hex(negative, p + 2, stop, point, error);
    return read_decimal(negative, p, stop, point, error);
}
