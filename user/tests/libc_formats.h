/*
 * libc_formats.h — the printf and scanf cases that user/tests/libctest.c
 * checks in the OS against what the host's C library prints for the same
 * cases: tests/libc_expected.c runs each case on the host at build time and
 * writes build/user/tests/libc_expected.h, one EXPECTED_<kind>_<name>
 * string per case, which libctest compares with newlib's output.
 *
 * Every case is portable C99/C11: its output is the same on any conforming
 * library where the types have the same sizes (riscv64 and x86_64 are both
 * LP64). long double is the exception: riscv64's is IEEE binary128, x86_64's
 * the 80-bit extended format, so the %L cases of PRINTF_CASES and
 * SCANF_CASES use values both hold exactly, and the cases at binary128's
 * full precision (LONG_DOUBLE_CASES, LONG_DOUBLE_SCANF_CASES,
 * STRTOLD_CASES) are checked against the host's _Float128, also binary128:
 * glibc's strfromf128 and strtof128. Their values are written LD(literal),
 * LD_MAX, LD_MIN and LD_TRUE_MIN, which each side defines in its binary128
 * type. C leaves the first hexadecimal digit of a subnormal number to the
 * library: glibc writes 0x0.0...p-16382, newlib a 1 and the exponent the
 * value needs, as for every other nonzero number; tests/libc_expected.c
 * writes the host's digits in newlib's way.
 *
 * Include <float.h>, <limits.h>, <math.h>, <stddef.h>, <stdint.h> and
 * <wchar.h> first, and define LD, LD_MAX, LD_MIN and LD_TRUE_MIN.
 */
#ifndef LIBC_FORMATS_H
#define LIBC_FORMATS_H

/* X(name, format, arguments...): snprintf(buffer, size, format, arguments). */
#define PRINTF_CASES(X)                                                     \
    X(d, "%d", 42)                                                          \
    X(d_negative, "%d", -42)                                                \
    X(d_width, "[%5d]", 42)                                                 \
    X(d_minus, "[%-5d]", 42)                                                \
    X(d_zero, "[%05d]", 42)                                                 \
    X(d_plus, "%+d %+d", 42, -42)                                           \
    X(d_space, "[% d] [% d]", 42, -42)                                      \
    X(d_plus_zero, "[%+05d]", -42)                                          \
    X(d_precision, "[%.3d] [%8.3d] [%-8.3d]", 7, -7, 7)                     \
    X(d_zero_precision_zero, "[%.0d]", 0)                                   \
    X(d_star, "[%*d] [%-*d] [%.*d]", 6, 42, 6, 42, 4, 3)                    \
    X(d_limits, "%d %d", INT_MIN, INT_MAX)                                  \
    X(i, "%i %+i", -17, 17)                                                 \
    X(u, "%u %u [%10u]", 4000000000u, 0u, 7u)                               \
    X(o, "%o %o %o", 8u, 0u, UINT_MAX)                                      \
    X(o_hash, "%#o %#o [%#.3o] [%#6o]", 8u, 0u, 8u, 8u)                     \
    X(x, "%x %x %x", 255u, 0u, 0xdeadbeefu)                                 \
    X(X_upper, "%X %X", 255u, 0xdeadbeefu)                                  \
    X(x_hash, "%#x %#X %#x", 255u, 255u, 0u)                                \
    X(x_zero, "[%08x] [%#010x] [%.4x] [%-#8x]", 255u, 255u, 255u, 255u)     \
    X(c, "%c%c%c", 'D', 'M', '!')                                           \
    X(c_width, "[%3c] [%-3c]", 'B', 'C')                                    \
    X(c_high, "[%c]", 200)                                                  \
    X(s, "%s", "links")                                                     \
    X(s_width, "[%10s] [%-10s]", "links", "links")                          \
    X(s_precision, "[%.3s] [%10.2s] [%-6.0s]", "links", "links", "links")   \
    X(s_empty, "[%s] [%3s]", "", "")                                        \
    X(p, "%p", (void *)0x1234abcd)                                          \
    X(p_width, "[%20p] [%-20p]", (void *)0xfe, (void *)0xfe)                \
    X(percent, "100%% %d%%", 5)                                             \
    X(e, "%e %e", 3.14159, 0.0)                                             \
    X(E_upper, "%E", 0.000123)                                              \
    X(e_precision, "%.2e %.0e %#.0e", 12345.678, 3.0, 3.0)                  \
    X(e_flags, "[%+.3e] [% e] [%12.4e] [%-12.2e] [%012.3e]", 1.0, 2.5, 31.4, -31.4, -31.4) \
    X(e_extremes, "%e %e %e", 1e300, 1e-300, -0.0)                          \
    X(f, "%f %f", 3.14159, -0.5)                                            \
    X(f_precision, "%.2f %.0f %.0f %.0f %#.0f", 3.14159, 2.5, 3.5, 0.4, 3.0) \
    X(f_flags, "[%10.3f] [%-10.1f] [%+f] [% f] [%010.2f]", 3.14159, 2.25, 1.0, 1.0, -3.5) \
    X(f_big, "%f", 1e20)                                                    \
    X(f_exact, "%.30f", 0.1)                                                \
    X(f_rounding, "%.1f %.2f %.3f", 0.05, 1.005, 2.0005)                    \
    X(F_upper, "%F %F", 1.5, -2.0)                                          \
    X(f_infinity, "%f %F %f %F [%6f]", (double)INFINITY, (double)INFINITY, -(double)INFINITY, \
      -(double)INFINITY, (double)INFINITY)                                  \
    X(f_nan, "%f %F", (double)NAN, (double)NAN)                             \
    X(g, "%g %g %g %g", 0.0001, 0.00001, 123456.0, 1234567.0)               \
    X(G_upper, "%G %G", 1e-10, 1e100)                                       \
    X(g_precision, "%.3g %.0g %.10g %#g %#.3g", 3.14159, 0.5, 1.0 / 3, 1.0, 2.0) \
    X(g_flags, "[%10.4g] [%-10g] [%+g] [%010g]", 3.14159, 2.5, 100.0, -1.5) \
    X(a, "%a %a %a %a", 1.0, 0.1, 0.0, -2.0)                                \
    X(A_upper, "%A %A", 255.5, 1e-5)                                        \
    X(a_precision, "%.2a %.0a %.1a", 1.0 / 3, 1.5, 1.96875)                 \
    X(a_flags, "[%+a] [%#a] [%20a] [%-20A] [%020a]", 1.0, 1.0, 0.5, 0.5, 0.5) \
    X(hhd, "%hhd %hhd %hhd", 300, 200, -129)                                \
    X(hhu_hhx, "%hhu %hhx %hho", 300, 0x1ff, 0777)                          \
    X(hd, "%hd %hd %hu %hx", 70000, -32769, 65537, 0x12345)                 \
    X(ld, "%ld %ld %li", LONG_MIN, LONG_MAX, -1L)                           \
    X(lu, "%lu %lx %lo", ULONG_MAX, 0x123456789abcdefUL, 01234567012345670UL) \
    X(lld, "%lld %lld %lli", LLONG_MIN, LLONG_MAX, -1LL)                    \
    X(llu, "%llu %llx %#llX %llo", ULLONG_MAX, 0xfedcba9876543210ULL, 0xabcdefULL, 0777777777777ULL) \
    X(jd, "%jd %jd %ji", INTMAX_MIN, INTMAX_MAX, (intmax_t)-3)              \
    X(ju, "%ju %jx %jo", UINTMAX_MAX, (uintmax_t)0xabc, (uintmax_t)8)       \
    X(zu, "%zu %zx %zd", SIZE_MAX, (size_t)0xbeef, (ptrdiff_t)-5)           \
    X(td, "%td %tx %ti", (ptrdiff_t)-123, (ptrdiff_t)255, PTRDIFF_MAX)      \
    X(lf, "%lf %lF %le %lg %la", 0.25, 0.25, 0.25, 0.25, 0.25)              \
    X(Lf, "%Lf [%10.2Lf] %.1Lf", 1.5L, 2.25L, -1024.0L)                     \
    X(Le, "%Le %.3LE %Le", -0.125L, 3.0L, 1e-3L)                            \
    X(Lg, "%Lg %LG %.10Lg %Lg", 1024.0L, 1e-10L, 1.0L / 3, 123456789.0L)   \
    X(lc_ls, "[%lc] [%ls] [%6ls] [%.2ls]", (wint_t)L'A', L"wide", L"wide", L"wide") \
    X(after_c99_conversions, "%zu|%jd|%td|%hhd|%a|%s|%d", (size_t)7, (intmax_t)-8, (ptrdiff_t)9, 10, 0.5, \
      "eleven", 12)                                                         \
    X(after_long_double, "%Lf|%d|%s", 0.5L, 13, "fourteen")

/* X(name, type, format, arguments...): snprintf(buffer, size, format,
 * arguments, &count) with `type count`, the format's last conversion a %n
 * of that type; printed as the output, "|" and the count. */
#define PRINTF_COUNT_CASES(X)                                               \
    X(n, int, "abc%d%n", 5)                                                 \
    X(hhn, signed char, "[%5d]%hhn", 7)                                     \
    X(hn, short, "%s%hn", "links")                                          \
    X(ln, long, "%e%ln", 1.0)                                               \
    X(lln, long long, "%zu%lln", (size_t)1234)                              \
    X(jn, intmax_t, "%jd%jn", INTMAX_MIN)                                   \
    X(zn, size_t, "%a%zn", 0.5)                                             \
    X(tn, ptrdiff_t, "%10s%tn", "x")

/* X(name, host_format, format, value): snprintf(buffer, size, format,
 * value) for a binary128 value, checked against the host's
 * strfromf128(buffer, size, host_format, value) (see the top of this file). */
#define LONG_DOUBLE_CASES(X)                                                \
    X(La_one, "%a", "%La", LD(1.0))                                         \
    X(La_fraction, "%a", "%La", LD(0.3125))                                 \
    X(La_tenth, "%a", "%La", LD(0.1))                                       \
    X(La_third, "%a", "%La", LD(1.0) / 3)                                   \
    X(La_negative, "%a", "%La", -LD(1536.0))                                \
    X(La_negative_zero, "%a", "%La", -LD(0.0))                              \
    X(La_max, "%a", "%La", LD_MAX)                                          \
    X(La_min, "%a", "%La", LD_MIN)                                          \
    X(La_true_min, "%a", "%La", LD_TRUE_MIN)                                \
    X(La_subnormal, "%a", "%La", LD_MIN / 3)                                \
    X(LA_upper, "%A", "%LA", LD_MAX)                                        \
    X(La_precision, "%.3a", "%.3La", LD(0.1))                               \
    X(La_precision_third, "%.3a", "%.3La", LD(1.0) / 3)                     \
    X(La_precision_tie_up, "%.0a", "%.0La", LD(1.5))                        \
    X(La_precision_tie_even, "%.1a", "%.1La", LD(0x1.08p0))                 \
    X(La_precision_carry, "%.2a", "%.2La", LD(0x1.ff8p0))                   \
    X(La_precision_past_the_digits, "%.30a", "%.30La", LD(1.0) / 3)         \
    X(La_precision_subnormal, "%.1a", "%.1La", LD_MIN / 3)                  \
    X(La_precision_zero, "%.2a", "%.2La", LD(0.0))                          \
    X(Le_third, "%.35e", "%.35Le", LD(1.0) / 3)                             \
    X(Le_max, "%.35e", "%.35Le", LD_MAX)                                    \
    X(Le_true_min, "%.35e", "%.35Le", LD_TRUE_MIN)                          \
    X(Lf_tenth, "%.40f", "%.40Lf", LD(0.1))                                 \
    X(Lg_third, "%.36g", "%.36Lg", LD(1.0) / 3)

/* X(name, input): strtold(input, &end), printed as the value with %La, "|",
 * how many characters it read, "|" and "ERANGE" if errno became ERANGE
 * (else 0); checked against the host's strtof128. */
#define STRTOLD_CASES(X)                                                    \
    X(tenth, "0.1")                                                         \
    X(third, "0.333333333333333333333333333333333333333333333")             \
    X(sixty_digits, "123456789012345678901234567890123456789012345678901234567890") \
    X(many_zeros, "0.0000000000000000000000000000000000000000000000000000012345e56") \
    X(halfway_to_even_below,                                                \
      "1.00000000000000000000000000000000009629649721936179265279889712924636592690508241076940976199693977832794189453125") \
    X(halfway_and_a_little,                                                 \
      "1.000000000000000000000000000000000096296497219361792652798897129246365926905082410769409761996939778327941894531250000000001") \
    X(halfway_to_even_above,                                                \
      "1.00000000000000000000000000000000028888949165808537795839669138773909778071524723230822928599081933498382568359375") \
    X(halfway_less_a_little,                                                \
      "1.000000000000000000000000000000000288889491658085377958396691387739097780715247232308229285990819334983825683593749999") \
    X(max, "1.18973149535723176508575932662800707e4932")                    \
    X(overflow, "1.18973149535723176508575932662800708e4932")               \
    X(overflow_far, "-1e5000")                                              \
    X(min, "3.36210314311209350626267781732175260e-4932")                   \
    X(subnormal, "1e-4940")                                                 \
    X(true_min_rounded_up, "3.23758755971901255546221947911382327625e-4966") \
    X(underflow, "3.23758755971901255546221947911382327624e-4966")         \
    X(underflow_far, "1e-99999")                                            \
    X(zero_exponent_huge, "0e99999999999999999999")                         \
    X(hex, "0x1.8p1")                                                       \
    X(hex_negative, "-0X.8P-3")                                             \
    X(hex_no_exponent, "0x1F.8")                                            \
    X(hex_double_max, "0x1.fffffffffffffp1023")                             \
    X(hex_double_true_min, "0x1p-1074")                                     \
    X(hex_true_min, "0x1p-16494")                                           \
    X(hex_tie_to_even_below, "0x1.00000000000000000000000000008p0")         \
    X(hex_tie_to_even_above, "0x1.00000000000000000000000000018p0")         \
    X(hex_long, "0x1.000000000000000000000000000080000000000000000001p0")   \
    X(hex_overflow, "0x1p16384")                                            \
    X(hex_underflow, "0x1.8p-16495")                                        \
    X(infinity, "-INFINITY")                                                \
    X(inf_of_infinite, "infinite")                                          \
    X(nan, "nan")                                                           \
    X(nan_chars, "nan(0x12_ab)")                                            \
    X(nan_unclosed, "nan(12")                                               \
    X(white_space_and_rest, " \t\n+2.5e-3z")                              \
    X(exponent_without_digits, "1e+")                                       \
    X(hex_prefix_alone, "0xg")                                              \
    X(point_alone, ".e1")                                                   \
    X(nothing, "x1")

/* X(name, input, format): a long double from sscanf(input, format,
 * &value), the whole input its input item, printed as "COUNT|" and the
 * value with %La; checked against the host's strtof128(input). */
#define LONG_DOUBLE_SCANF_CASES(X)                                          \
    X(Lf_tenth, "0.1", "%Lf")                                               \
    X(Le_third, "0.333333333333333333333333333333333333333333333", "%Le")   \
    X(Lg_halfway,                                                           \
      "1.00000000000000000000000000000000028888949165808537795839669138773909778071524723230822928599081933498382568359375", \
      "%Lg")                                                                \
    X(La_hex_third, "0x1.5555555555555555555555555555p-2", "%La")          \
    X(La_hex_max, "0x1.ffffffffffffffffffffffffffffp16383", "%La")          \
    X(Lf_hex_true_min, "0x1p-16494", "%Lf")                                 \
    X(Lf_subnormal, "1e-4940", "%Lf")                                       \
    X(Lf_overflow, "1e5000", "%Lf")                                         \
    X(Lf_negative_infinity, "-infinity", "%Lf")

/* X(name, input, format, type, show): `type value` from
 * sscanf(input, format, &value), printed as "COUNT|" then show's output. */
#define SCANF_CASES(X)                                                      \
    X(d, "  -42x", "%d", int, "%d")                                         \
    X(d_width, "12345", "%3d", int, "%d")                                   \
    X(d_plus, "+17", "%d", int, "%d")                                       \
    X(d_nothing, "x1", "%d", int, "%d")                                     \
    X(d_end_of_input, "", "%d", int, "%d")                                  \
    X(i_hex, "0x1f", "%i", int, "%d")                                       \
    X(i_octal, "017", "%i", int, "%d")                                      \
    X(i_negative_hex, "-0x10", "%i", int, "%d")                             \
    X(u, "4000000000", "%u", unsigned, "%u")                                \
    X(o, "777", "%o", unsigned, "%u")                                       \
    X(x, "ff", "%x", unsigned, "%u")                                        \
    X(x_prefix, "0x1F", "%x", unsigned, "%u")                               \
    X(X_upper, "0XFF", "%X", unsigned, "%u")                                \
    X(hhd, "-5", "%hhd", signed char, "%d")                                 \
    X(hhu, "250", "%hhu", unsigned char, "%u")                              \
    X(hhx, "7f", "%hhx", unsigned char, "%u")                               \
    X(hd, "-300", "%hd", short, "%d")                                       \
    X(hu, "65535", "%hu", unsigned short, "%u")                             \
    X(ld, "-9000000000", "%ld", long, "%ld")                                \
    X(lu, "18446744073709551615", "%lu", unsigned long, "%lu")              \
    X(lld, "-9223372036854775808", "%lld", long long, "%lld")               \
    X(llu, "18446744073709551615", "%llu", unsigned long long, "%llu")      \
    X(llx, "fedcba9876543210", "%llx", unsigned long long, "%llu")          \
    X(lli, "-0777", "%lli", long long, "%lld")                              \
    X(jd, "-9223372036854775807", "%jd", intmax_t, "%jd")                   \
    X(ju, "12345678901234", "%ju", uintmax_t, "%ju")                        \
    X(zu, "123", "%zu", size_t, "%zu")                                      \
    X(td, "-77", "%td", ptrdiff_t, "%td")                                   \
    X(f, "3.25", "%f", float, "%.9g")                                       \
    X(f_tenth, "0.1", "%f", float, "%.9g")                                  \
    X(e, "1e-5", "%e", float, "%.9g")                                       \
    X(g, "-2.5E3", "%g", float, "%.9g")                                     \
    X(E_upper, "6.25e2", "%E", float, "%.9g")                               \
    X(a, "2.75", "%a", float, "%.9g")                                       \
    X(lf, "-2.5e3", "%lf", double, "%.17g")                                 \
    X(lf_tenth, "0.1", "%lf", double, "%.17g")                              \
    X(le, "1e-300", "%le", double, "%.17g")                                 \
    X(lg, "123.456", "%lg", double, "%.17g")                                \
    X(la, "-0.484375", "%la", double, "%.17g")                              \
    X(lf_infinity, "-inf", "%lf", double, "%f")                             \
    X(lf_nan, "nan", "%lf", double, "%f")                                   \
    X(lf_width, "3.14159", "%4lf", double, "%.17g")                         \
    X(Lf, "1.5", "%Lf", long double, "%Lg")                                 \
    X(Lg, "-0.125", "%Lg", long double, "%Lg")                              \
    X(a_hex, "0x1.8p1", "%a", float, "%.9g")                                \
    X(e_hex, "-0X.8P-3", "%e", float, "%.9g")                               \
    X(f_hex, "0x1p-2", "%f", float, "%.9g")                                 \
    X(g_hex_integer, "0xA", "%g", float, "%.9g")                            \
    X(a_hex_width, "0x1.8p1", "%5a", float, "%.9g")                         \
    X(a_hex_width_at_point, "0x1.8p1", "%3a", float, "%.9g")                \
    X(la_hex, "0x1.8p1", "%la", double, "%a")                               \
    X(le_hex_negative, "-0X.8P-3", "%le", double, "%a")                     \
    X(lf_hex_least, "0x1p-1074", "%lf", double, "%.17g")                    \
    X(lg_hex_max, "0x1.fffffffffffffp1023", "%lg", double, "%a")            \
    X(la_hex_no_exponent, "0x10.8", "%la", double, "%g")                    \
    X(la_hex_long, "0x1.00000000000008000000000001p0", "%la", double, "%a") \
    X(La_hex, "0x1.8p1", "%La", long double, "%Lg")                         \
    X(La_hex_negative, "-0x.8p-3", "%La", long double, "%Lg")               \
    X(lf_infinity_word, "-INFINITY", "%lf", double, "%f")                   \
    X(p, "0x1234abcd", "%p", void *, "%p")                                  \
    X(percent, "100%", "%d%%", int, "%d")                                   \
    X(suppressed, "1 2", "%*d %d", int, "%d")                               \
    X(literal, "a=5", "a=%d", int, "%d")

/* X(name, input, format): a string (char[32]) from sscanf. */
#define SCANF_STRING_CASES(X)                                               \
    X(s, "  links and", "%31s")                                             \
    X(s_width, "abcdefgh", "%5s")                                           \
    X(c, "xyz", "%c")                                                       \
    X(c_width, "xyz", "%3c")                                                \
    X(c_no_skip, " x", "%c")                                                \
    X(set, "abc123", "%[a-z]")                                              \
    X(set_negated, "ab,cd", "%[^,]")                                        \
    X(set_bracket, "]]x", "%[]]")

/* X(name, input, format, type1, type2, show): two values. */
#define SCANF_PAIR_CASES(X)                                                 \
    X(n, "123abc", "%d%n", int, int, "%d %d")                               \
    X(hhn, "  12 ", "%d %hhn", int, signed char, "%d %d")                   \
    X(partial, "1 x", "%d %d", int, int, "%d %d")                           \
    X(after_c99_conversions, "5 6", "%zu %hhd", size_t, signed char, "%zu %d") \
    X(int_and_double, "7,2.5", "%d,%lf", int, double, "%d %g")

#endif
