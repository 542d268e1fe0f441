/*
 * libctest — newlib on DEMOS/MP as a portable C program sees it: every
 * printf and scanf conversion, flag and length modifier against what the
 * host's C library prints for the same case (user/tests/libc_formats.h),
 * input from the console with scanf, the heap, strings, the clocks and
 * sleep, the environment the shell passes, each standard C11 header, and
 * the POSIX calls the system does not offer (ENOSYS). Prints `ok NAME` or
 * `not ok NAME: ...` per check and `libctest: N passed, M failed`. It reads
 * one line from standard input: a number and a word (tests type "42 links").
 *
 *   libctest               every check
 *   libctest exit N        print a line, end with exit(N); an atexit handler prints another
 *   libctest return N      end by returning N from main
 *   libctest abort         end with abort()
 *   libctest env NAME...   print NAME=VALUE, or "NAME is not set", for each
 *
 * It includes every standard C11 header: the build compiling it is the
 * check that they all compile with the user programs' flags (<threads.h>
 * is there, but newlib has no threads for this system and the Makefile
 * defines __STDC_NO_THREADS__; newlib 3.3.0 has no <uchar.h>).
 */
#include <assert.h>
#include <complex.h>
#include <ctype.h>
#include <errno.h>
#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <iso646.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <tgmath.h>
#include <time.h>
#include <wchar.h>
#include <wctype.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>
#include "dmlib.h"

/* binary128 is long double here (libc_formats.h). */
#define LD(literal) literal##L
#define LD_MAX LDBL_MAX
#define LD_MIN LDBL_MIN
#define LD_TRUE_MIN LDBL_TRUE_MIN
#include "libc_formats.h"
#include "libc_expected.h"   /* made from libc_formats.h by tests/libc_expected.c on the host */

static_assert(CHAR_BIT == 8 && INT_MAX == 2147483647 && LONG_MAX == INT64_MAX && LLONG_MAX == INT64_MAX,
              "limits.h: LP64");
static_assert(sizeof(size_t) == 8 && sizeof(intmax_t) == 8 && sizeof(ptrdiff_t) == 8, "stdint.h, stddef.h");
static_assert(DBL_MANT_DIG == 53 && LDBL_MANT_DIG == 113 && FLT_RADIX == 2, "float.h: binary128 long double");

extern char **environ;

static char out[512];

/* Compares what newlib printed for a case with what the host printed. */
static void check_output(const char *kind, const char *name, const char *expected)
{
    char check_name[80];
    snprintf(check_name, sizeof check_name, "%s.%s", kind, name);
    dm_check(strcmp(out, expected) == 0, check_name, "\"%s\", the host printed \"%s\"", out, expected);
}

/* Every case of libc_formats.h, as tests/libc_expected.c runs it on the host. */
static void check_formats(void)
{
#define PRINTF_CASE(name, ...)                   \
    snprintf(out, sizeof out, __VA_ARGS__);      \
    check_output("printf", #name, EXPECTED_printf_##name);
    PRINTF_CASES(PRINTF_CASE)

#define PRINTF_COUNT_CASE(name, type, format, ...)                                          \
    {                                                                                       \
        type count = -1;                                                                    \
        int length = snprintf(out, sizeof out, format, __VA_ARGS__, &count);                \
        snprintf(out + length, sizeof out - (size_t)length, "|%lld", (long long)count);     \
        check_output("printf", #name, EXPECTED_printf_##name);                              \
    }
    PRINTF_COUNT_CASES(PRINTF_COUNT_CASE)

#define LONG_DOUBLE_CASE(name, host_format, format, value) \
    snprintf(out, sizeof out, format, value);             \
    check_output("printf", #name, EXPECTED_printf_##name);
    LONG_DOUBLE_CASES(LONG_DOUBLE_CASE)

    /* newlib's %Le, %Lf and %Lg stop after 43 significant digits and write
     * zeros for the rest (docs/programs.md), where the host writes every
     * digit: more than the 36 that tell every binary128 apart
     * (LDBL_DECIMAL_DIG), so only this case asks for more. */
    snprintf(out, sizeof out, "%.50Le", 1.0L / 3);
    dm_check(strcmp(out, "3.33333333333333333333333333333333317283917100000000e-01") == 0,
             "printf.Le_43_digits_then_zeros", "%s", out);

#define STRTOLD_CASE(name, input)                                                   \
    {                                                                               \
        char *end;                                                                  \
        errno = 0;                                                                  \
        long double value = strtold(input, &end);                                   \
        snprintf(out, sizeof out, "%La|%td|%s", value, end - input, errno == ERANGE ? "ERANGE" : "0"); \
        check_output("strtold", #name, EXPECTED_strtold_##name);                    \
    }
    STRTOLD_CASES(STRTOLD_CASE)

#define LONG_DOUBLE_SCANF_CASE(name, input, format)                                 \
    {                                                                               \
        long double value = 0;                                                      \
        int count = sscanf(input, format, &value);                                  \
        snprintf(out, sizeof out, "%d|%La", count, value);                          \
        check_output("scanf", #name, EXPECTED_scanf_##name);                        \
    }
    LONG_DOUBLE_SCANF_CASES(LONG_DOUBLE_SCANF_CASE)

#define SCANF_CASE(name, input, format, type, show)                                 \
    {                                                                               \
        type value = 0;                                                             \
        int count = sscanf(input, format, &value);                                  \
        int length = snprintf(out, sizeof out, "%d|", count);                       \
        snprintf(out + length, sizeof out - (size_t)length, show, value);           \
        check_output("scanf", #name, EXPECTED_scanf_##name);                        \
    }
    SCANF_CASES(SCANF_CASE)

#define SCANF_STRING_CASE(name, input, format)                                      \
    {                                                                               \
        char value[32] = "";                                                        \
        int count = sscanf(input, format, value);                                   \
        snprintf(out, sizeof out, "%d|%s", count, value);                           \
        check_output("scanf", #name, EXPECTED_scanf_##name);                        \
    }
    SCANF_STRING_CASES(SCANF_STRING_CASE)

#define SCANF_PAIR_CASE(name, input, format, type1, type2, show)                    \
    {                                                                               \
        type1 first = 0;                                                            \
        type2 second = 0;                                                           \
        int count = sscanf(input, format, &first, &second);                         \
        int length = snprintf(out, sizeof out, "%d|", count);                       \
        snprintf(out + length, sizeof out - (size_t)length, show, first, second);   \
        check_output("scanf", #name, EXPECTED_scanf_##name);                        \
    }
    SCANF_PAIR_CASES(SCANF_PAIR_CASE)
}

/* scanf's float conversions where the host's glibc reads otherwise, so
 * checked against what C99 and this system say: nan(chars) is one number
 * (C99 7.20.1.3; glibc leaves "(chars)"), and what follows the longest
 * number in the input item goes back to the stream, where strtod would end
 * (glibc reads "1e+x" as 1 but keeps the "e", and fails on "0x" and
 * "infinit"). X(name, input, format, type, expected): format a float
 * conversion for `type` then %n, printed as "COUNT|VALUE|REST", the value
 * with %g. */
#define SCANF_GIVEN_BACK_CASES(X)                                           \
    X(nan_chars, "nan(abc)x", "%lf%n", double, "1|nan|x")                   \
    X(nan_unclosed, "nan(ab", "%lf%n", double, "1|nan|(ab")                 \
    X(exponent, "1e+x", "%lf%n", double, "1|1|e+x")                         \
    X(hex_prefix, "0xg", "%lf%n", double, "1|0|xg")                         \
    X(hex_point, "0x.p1", "%f%n", float, "1|0|x.p1")                        \
    X(hex_width_at_prefix, "0x1.8p1", "%2la%n", double, "1|0|x1.8p1")       \
    X(infinite, "infinite", "%Lf%n", long double, "1|inf|inite")            \
    X(point_alone, ".e1", "%lf%n", double, "0|0|.e1")                       \
    X(sign_alone, "-x", "%lf%n", double, "0|0|-x")

static int same_bits(long double a, long double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Reading floating-point numbers beyond what the host can check: scanf's
 * choices where glibc differs, a long double read to the last bit,
 * numbers longer than any buffer, and a stream whose buffer refills in the
 * middle of a number and of what it gives back. */
static void check_float_input(void)
{
#define SCANF_GIVEN_BACK_CASE(name, input, format, type, expected)                          \
    {                                                                                       \
        type value = 0;                                                                     \
        int used = 0;                                                                       \
        int count = sscanf(input, format, &value, &used);                                   \
        snprintf(out, sizeof out, "%d|%g|%s", count, (double)value, input + used);          \
        dm_check(strcmp(out, expected) == 0, "scanf.given_back." #name, "\"%s\", not \"%s\"", out, expected); \
    }
    SCANF_GIVEN_BACK_CASES(SCANF_GIVEN_BACK_CASE)

    long double tenth = 0;
    int count = sscanf("0.1", "%Lf", &tenth);
    dm_check(count == 1 && same_bits(tenth, 0.1L), "scanf.Lf_tenth_is_0.1L", "%La, 0.1L is %La", tenth, 0.1L);
    dm_check(same_bits(strtold("0.1", 0), 0.1L) && same_bits(strtold("-0x1.999999999999999999999999999ap-4", 0), -0.1L),
             "strtold.tenth_is_0.1L", "%La", strtold("0.1", 0));

    /* 6,000 digits: more than scanf's buffer holds. */
    static char digits[6100];
    strcpy(digits, "0.1");
    for (int i = 3; i < 6003; i++)
        digits[i] = (char)('0' + i % 7);
    strcpy(digits + 6003, "e-3 next");
    long double long_value = 0;
    double double_value = 0;
    int used = 0, double_used = 0;
    char *end;
    count = sscanf(digits, "%Lf%n", &long_value, &used) + sscanf(digits, "%lf%n", &double_value, &double_used);
    dm_check(count == 2 && used == 6006 && double_used == 6006 && same_bits(long_value, strtold(digits, &end)) &&
                 end == digits + 6006 && double_value == strtod(digits, 0),
             "scanf.six_thousand_digits", "read %d and %d characters: %La", used, double_used, long_value);

    /* A stream with a 4-byte buffer: numbers and given-back text across refills. */
    static char text[] = "0x1.5555555555555555555555555555p-2 1e+x nan(a_1)7 0.33333333333333333333333333333333333333";
    FILE *stream = fmemopen(text, strlen(text), "r");
    long double third = 0, decimal_third = 0;
    double one = 0, not_a_number = 0;
    char word[8] = "";
    int seven = 0;
    count = stream && setvbuf(stream, 0, _IOFBF, 4) == 0
                ? fscanf(stream, "%La %lf%3s %lf%d %Lf", &third, &one, word, &not_a_number, &seven, &decimal_third)
                : -2;
    dm_check(count == 6 && same_bits(third, 1.0L / 3) && one == 1 && strcmp(word, "e+x") == 0 &&
                 isnan(not_a_number) && seven == 7 && same_bits(decimal_third, strtold(strstr(text, "0.333"), 0)),
             "scanf.stream_refills", "%d: %La %g %s %g %d %La", count, third, one, word, not_a_number, seven,
             decimal_third);
    if (stream)
        fclose(stream);
}

static void check_console_heap_strings(void)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%d|%5s|%-3x|%.2f|%lld", -7, "ab", 255, 3.14159, 1234567890123LL);
    dm_check(strcmp(buf, "-7|   ab|ff |3.14|1234567890123") == 0, "printf.formats", "%s", buf);

    int number = 0;
    char word[32] = "";
    printf("type a number and a word: ");
    fflush(stdout);
    int got = scanf("%d %31s", &number, word);
    dm_check(got == 2 && number == 42 && strcmp(word, "links") == 0, "scanf.console", "got %d: %d %s", got, number,
             word);

    double d = 0;
    dm_check(sscanf("2.5e3", "%lf", &d) == 1 && d == 2500.0, "sscanf.double", "parse failed");

    size_t total = 0;
    char *blocks[64];
    for (int i = 0; i < 64; i++) {
        blocks[i] = malloc(1000 + i * 1000);
        if (blocks[i]) {
            memset(blocks[i], i, 1000 + i * 1000);
            total += 1000 + i * 1000;
        }
    }
    int intact = 1;
    for (int i = 0; i < 64; i++) {
        intact &= blocks[i] && blocks[i][999 + i * 1000] == (char)i;
        free(blocks[i]);
    }
    dm_check(intact && total == 64 * 1000 + 1000 * (63 * 64 / 2), "malloc.blocks_intact", "%zu bytes", total);

    char *s = strdup("links and messages");
    dm_check(s && strlen(s) == 18 && strstr(s, "and") == s + 6 && strchr(s, 'm') == s + 10, "string.functions",
             "strdup/strlen/strstr/strchr");
    free(s);
}

static void check_time(void)
{
    struct timeval before, after;
    int r1 = gettimeofday(&before, 0);
    dm_check(r1 == 0 && before.tv_sec > 1700000000, "time.gettimeofday_is_wall_clock", "before 2023");
    time_t now = 0, returned = time(&now);
    dm_check(returned == now && now >= before.tv_sec && now - before.tv_sec <= 1, "time.time_is_gettimeofday",
             "time() %lld, gettimeofday %lld", (long long)now, (long long)before.tv_sec);
    sleep(1);
    gettimeofday(&after, 0);
    long elapsed_ms = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_usec - before.tv_usec) / 1000;
    dm_check(elapsed_ms >= 1000 && elapsed_ms < 1500, "time.sleep_one_second", "slept %ld ms", elapsed_ms);
    double waited = difftime(time(0), now);
    dm_check(waited >= 1 && waited <= 2, "time.difftime", "%g s across a one-second sleep", waited);
    uint64_t t0 = dm_clock_ns();
    usleep(20000);
    dm_check(dm_clock_ns() - t0 >= 20000000, "time.usleep", "woke early");

    /* The calendar: no time zone is set, so local time is UTC. */
    time_t epoch_day = 86400 * 365 + 3600 + 61;
    char date[64] = "";
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %a", gmtime(&epoch_day));
    dm_check(strcmp(date, "1971-01-01 01:01:01 Fri") == 0, "time.gmtime_strftime", "%s", date);
    struct tm local = *localtime(&now), utc = *gmtime(&now);
    dm_check(mktime(&local) == now && local.tm_hour == utc.tm_hour && local.tm_min == utc.tm_min,
             "time.localtime_is_utc", "local %02d:%02d, UTC %02d:%02d", local.tm_hour, local.tm_min, utc.tm_hour,
             utc.tm_min);

    /* An alarm: the timer server sends TIMER_ALARM_FIRED over the link we pass. */
    long timer = sb_lookup("timer");
    long mine = dm_createlink(77, 0, 0, 0, 0);
    struct sv_call alarm = { .op = TIMER_ALARM, .arg = { 30000000, 4242 }, .pass = mine };
    uint64_t a0 = dm_clock_ns();
    long status = timer >= 0 ? sv_call(timer, &alarm) : timer;
    struct sv_request fired = { 0 };
    struct dm_msg_info info;
    long n = status == 0 ? dm_receive(&info, &fired, sizeof fired, 77) : status;
    dm_check(n == (long)sizeof fired && fired.op == TIMER_ALARM_FIRED && fired.arg[0] == 4242 &&
                 dm_clock_ns() - a0 >= 30000000,
             "time.alarm", "status %ld, n %ld, op %u, cookie %lld", status, n, fired.op, (long long)fired.arg[0]);

    /* An alarm that fires while our queue is full comes once there is room. */
    mine = dm_createlink(78, 0, 0, 0, 0);
    long self = dm_createlink(79, 0, 0, 0, 0);
    alarm = (struct sv_call){ .op = TIMER_ALARM, .arg = { 20000000, 4343 }, .pass = mine };
    status = timer >= 0 ? sv_call(timer, &alarm) : timer;
    int queued = 0;
    while (dm_send(self, "x", 1, DM_NO_LINK) == 0)
        queued++;
    usleep(60000);                                   /* it fires meanwhile, into a full queue */
    for (int i = 0; i < queued; i++)
        dm_receive(&info, &fired, sizeof fired, 79);
    fired.op = 0;
    n = E_NOMSG;
    for (int tries = 0; tries < 100 && n == E_NOMSG; tries++) {
        n = dm_areceive(&info, &fired, sizeof fired, 78);
        if (n == E_NOMSG)
            usleep(10000);
    }
    dm_check(status == 0 && queued == DM_QUEUE_MAX && n == (long)sizeof fired && fired.arg[0] == 4343,
             "time.alarm_waits_for_room", "status %ld, %d queued, n %ld, cookie %lld", status, queued, n,
             (long long)fired.arg[0]);
    dm_destroylink(self);

    /* CPU time: times() and clock() count this process's instructions,
     * which a loop adds to and a sleep does not. */
    struct tms t;
    clock_t c0 = times(&t);
    clock_t cpu0 = clock();
    uint64_t p0 = dm_proctime();
    volatile unsigned long work = 0;
    for (unsigned long i = 0; i < 5000000; i++)
        work += i;
    uint64_t p1 = dm_proctime();
    clock_t cpu1 = clock();
    times(&t);
    dm_check(p1 - p0 >= 5000000 && p1 - p0 < 50000000, "time.proctime_counts_instructions", "proctime grew by %llu",
             (unsigned long long)(p1 - p0));
    dm_check(t.tms_utime > 0 && c0 > 0, "time.times", "no CPU time or no elapsed time");
    double loop_s = (double)(cpu1 - cpu0) / CLOCKS_PER_SEC, proctime_s = (double)(p1 - p0) / 1e9;
    dm_check(cpu0 != (clock_t)-1 && fabs(loop_s - proctime_s) < 0.002, "time.clock_counts_cpu_time",
             "clock() says %.4f s, proctime %.4f s", loop_s, proctime_s);
    usleep(200000);
    double asleep_s = (double)(clock() - cpu1) / CLOCKS_PER_SEC;
    dm_check(asleep_s < 0.05, "time.clock_stands_still_in_sleep", "clock() grew %.3f s in a 0.2 s sleep", asleep_s);
}

/* The environment: what the shell gives every program (HOME, PATH), and
 * setenv, getenv and unsetenv within the process. */
static void check_environment(void)
{
    const char *home = getenv("HOME"), *path = getenv("PATH");
    dm_check(home && strcmp(home, "/") == 0 && path && strcmp(path, "/bin") == 0, "env.shell_defaults",
             "HOME %s, PATH %s", home ? home : "not set", path ? path : "not set");
    dm_check(getenv("DM_STDOUT") == 0, "env.no_redirection", "DM_STDOUT is set");
    int set = setenv("LIBCTEST_NAME", "value", 1), kept = setenv("LIBCTEST_NAME", "other", 0);
    const char *got = getenv("LIBCTEST_NAME");
    dm_check(set == 0 && kept == 0 && got && strcmp(got, "value") == 0, "env.setenv_getenv", "got %s",
             got ? got : "nothing");
    dm_check(unsetenv("LIBCTEST_NAME") == 0 && getenv("LIBCTEST_NAME") == 0, "env.unsetenv", "still set");
}

/* Each call the system cannot offer fails at once with ENOSYS (user/lib/unsupported.c). */
static void check_unsupported(void)
{
    char name[64];
    int fds[2];
    char *argv[] = { "hello", 0 };
    struct sigaction action = { 0 };
    sigset_t mask;
    sigemptyset(&mask);
#define ENOSYS_CHECK(call, failed)                                                                   \
    errno = 0;                                                                                       \
    snprintf(name, sizeof name, "enosys.%.*s", (int)strcspn(#call, "("), #call);                     \
    dm_check((call)failed && errno == ENOSYS, name, "%s gave errno %d (%s)", #call, errno, strerror(errno));
    ENOSYS_CHECK(fork(), == -1)
    ENOSYS_CHECK(execve("/bin/hello", argv, environ), == -1)
    ENOSYS_CHECK(wait(0), == -1)
    ENOSYS_CHECK(waitpid(-1, 0, 0), == -1)
    ENOSYS_CHECK(system("ls"), == -1)
    ENOSYS_CHECK(popen("ls", "r"), == 0)
    ENOSYS_CHECK(pclose(stdin), == -1)
    ENOSYS_CHECK(pipe(fds), == -1)
    ENOSYS_CHECK(dup(1), == -1)
    ENOSYS_CHECK(dup2(1, 5), == -1)
    ENOSYS_CHECK(kill(getpid() + 1, SIGTERM), == -1)
    ENOSYS_CHECK(sigaction(SIGINT, &action, 0), == -1)
    ENOSYS_CHECK(sigprocmask(SIG_BLOCK, &mask, 0), == -1)
    dm_check(system(0) == 0, "enosys.system_has_no_shell", "system(0) says a command processor exists");
}

static volatile sig_atomic_t signal_seen;
static void on_signal(int sig)
{
    signal_seen = sig;
}

static int sum(int count, ...)
{
    va_list ap;
    va_start(ap, count);
    int total = 0;
    for (int i = 0; i < count; i++)
        total += va_arg(ap, int);
    va_end(ap);
    return total;
}

struct two { char c; double d; };

/* Something from each standard header beyond stdio, stdlib, string, time. */
static void check_headers(void)
{
    assert(sizeof(struct two) == 16);
    double complex z = 3.0 + 4.0 * I;
    dm_check(cabs(z) == 5.0 && creal(z * I) == -4.0 && cimag(conj(z)) == -4.0, "header.complex", "%g%+gi",
             creal(z), cimag(z));
    dm_check(isdigit('7') && !isalpha('7') && toupper('q') == 'Q' && isspace('\t'), "header.ctype", "classes");
    errno = 0;
    long big = strtol("99999999999999999999", 0, 10);
    dm_check(big == LONG_MAX && errno == ERANGE, "header.errno", "strtol overflow: %ld, errno %d", big, errno);
    volatile double half = 2.5;
    double near = nearbyint(half);
    int set = fesetround(FE_UPWARD);
    double up = nearbyint(half);
    fesetround(FE_TONEAREST);
    dm_check(set == 0 && near == 2.0 && up == 3.0 && fegetround() == FE_TONEAREST, "header.fenv",
             "nearbyint(2.5) %g to nearest, %g upward", near, up);
    dm_check(DBL_EPSILON == 0x1p-52 && LDBL_MANT_DIG == 113 && FLT_MAX > 3e38f, "header.float", "limits");
    char printed[64];
    snprintf(printed, sizeof printed, "%" PRId64 " %" PRIx32 " %" PRIuMAX, INT64_MIN, UINT32_MAX, UINTMAX_MAX);
    intmax_t parsed = strtoimax("-1234567890123", 0, 10);
    dm_check(strcmp(printed, "-9223372036854775808 ffffffff 18446744073709551615") == 0 &&
                 parsed == -1234567890123 && imaxabs(parsed) == 1234567890123,
             "header.inttypes", "%s", printed);
    dm_check((1 and not 0) && (0 or 1) && (6 bitand 3) == 2, "header.iso646", "operators");
    dm_check(SCHAR_MIN == -128 && UCHAR_MAX == 255 && USHRT_MAX == 65535 && ULLONG_MAX == UINT64_MAX &&
                 MB_LEN_MAX >= 1,
             "header.limits", "limits");
    const char *locale = setlocale(LC_ALL, "C");
    dm_check(locale && strcmp(localeconv()->decimal_point, ".") == 0, "header.locale", "setlocale(LC_ALL, \"C\")");
    dm_check(fabs(sqrt(2.0) * sqrt(2.0) - 2.0) < 1e-15 && isnan(NAN) && isinf(HUGE_VAL) && pow(2, 10) == 1024 &&
                 fabs(exp(log(10.0)) - 10.0) < 1e-12,
             "header.math", "sqrt, pow, exp, log");
    jmp_buf jump;
    volatile int jumps = 0;
    if (setjmp(jump) < 2) {
        jumps++;
        longjmp(jump, jumps + 1);
    }
    dm_check(jumps == 1, "header.setjmp", "%d jumps", jumps);
    void (*previous)(int) = signal(SIGUSR1, on_signal);
    int raised = raise(SIGUSR1);
    dm_check(previous == SIG_DFL && raised == 0 && signal_seen == SIGUSR1, "header.signal_raise",
             "raise gave %d, handler saw %d", raised, (int)signal_seen);
    alignas(64) char aligned[8];
    dm_check(alignof(max_align_t) >= 8 && ((uintptr_t)aligned & 63) == 0, "header.stdalign", "alignof %zu",
             alignof(max_align_t));
    dm_check(sum(4, 1, 2, 3, 4) == 10, "header.stdarg", "va_arg");
    bool yes = true;
    dm_check(yes == 1 && false == 0 && __bool_true_false_are_defined, "header.stdbool", "bool");
    dm_check(offsetof(struct two, d) == 8, "header.stddef", "offsetof %zu", offsetof(struct two, d));
    dm_check(INT64_MAX == 9223372036854775807 && UINTPTR_MAX == UINT64_MAX && INT8_MIN == -128, "header.stdint",
             "limits");
    /* newlib's <tgmath.h> on this system calls the double function for a
     * double or an integer and the float one otherwise (long double too:
     * docs/programs.md), with a double result. */
    double root = sqrt(2), root_of_float = sqrt(2.0f);
    dm_check(fabs(root * root - 2.0) < 1e-15 && fabs(root_of_float * root_of_float - 2.0) < 1e-6 &&
                 sizeof(sqrt(2)) == sizeof(double) && pow(2, 0.5) == root,
             "header.tgmath", "sqrt(2) %.17g, sqrt(2.0f) %.9g", root, root_of_float);
    wchar_t wide[16];
    size_t converted = mbstowcs(wide, "links", 16);
    dm_check(converted == 5 && wcslen(wide) == 5 && wcscmp(wide, L"links") == 0 && wcschr(wide, L'k') == wide + 3,
             "header.wchar", "mbstowcs gave %zu", converted);
    dm_check(iswalpha(L'a') && iswdigit(L'5') && towupper(L'b') == L'B', "header.wctype", "classes");
}

/* libctest exit N: the status the shell reports; the handler and the
 * unfinished line both reach the console, since exit flushes stdio. */
static void at_exit(void)
{
    printf("libctest: atexit handler ran\n");
}

static noreturn void end_with_exit(int status)
{
    atexit(at_exit);
    printf("libctest: exit(%d) ", status);
    exit(status);
}

static int print_environment(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        const char *value = getenv(argv[i]);
        if (value)
            printf("%s=%s\n", argv[i], value);
        else
            printf("%s is not set\n", argv[i]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "exit") == 0)
        end_with_exit(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "return") == 0)
        return atoi(argv[2]);
    if (argc == 2 && strcmp(argv[1], "abort") == 0)
        abort();
    if (argc >= 2 && strcmp(argv[1], "env") == 0)
        return print_environment(argc, argv);
    check_formats();
    check_float_input();
    check_console_heap_strings();
    check_time();
    check_environment();
    check_unsupported();
    check_headers();
    return dm_check_summary("libctest");
}
