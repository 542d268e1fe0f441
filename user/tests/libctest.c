/*
 * libctest — newlib on DEMOS/MP: formatted output, input from the console
 * with scanf, the heap, strings, the clocks and sleep. Prints `ok NAME` or
 * `not ok NAME: ...` per check and `libctest: N passed, M failed`. It reads
 * one line from standard input: a number and a word (tests type "42 links").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include "dmlib.h"

static int passed, failed;

static void check(int ok, const char *name, const char *detail)
{
    if (ok)
        passed++, printf("ok %s\n", name);
    else
        failed++, printf("not ok %s: %s\n", name, detail);
}

/* Every check in the order the header lists them. Long on purpose: a list
 * of checks, each a few lines. */
int main(void)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%d|%5s|%-3x|%.2f|%lld", -7, "ab", 255, 3.14159, 1234567890123LL);
    check(strcmp(buf, "-7|   ab|ff |3.14|1234567890123") == 0, "printf.formats", buf);

    int number = 0;
    char word[32] = "";
    printf("type a number and a word: ");
    fflush(stdout);
    int got = scanf("%d %31s", &number, word);
    snprintf(buf, sizeof buf, "got %d: %d %s", got, number, word);
    check(got == 2 && number == 42 && strcmp(word, "links") == 0, "scanf.console", buf);

    double d = 0;
    check(sscanf("2.5e3", "%lf", &d) == 1 && d == 2500.0, "sscanf.double", "parse failed");

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
    snprintf(buf, sizeof buf, "%zu bytes", total);
    check(intact && total == 64 * 1000 + 1000 * (63 * 64 / 2), "malloc.blocks_intact", buf);

    char *s = strdup("links and messages");
    check(s && strlen(s) == 18 && strstr(s, "and") == s + 6 && strchr(s, 'm') == s + 10, "string.functions",
          "strdup/strlen/strstr/strchr");
    free(s);

    struct timeval before, after;
    int r1 = gettimeofday(&before, 0);
    check(r1 == 0 && before.tv_sec > 1700000000, "time.gettimeofday_is_wall_clock", "before 2023");
    sleep(1);
    gettimeofday(&after, 0);
    long elapsed_ms = (after.tv_sec - before.tv_sec) * 1000 + (after.tv_usec - before.tv_usec) / 1000;
    snprintf(buf, sizeof buf, "slept %ld ms", elapsed_ms);
    check(elapsed_ms >= 1000 && elapsed_ms < 1500, "time.sleep_one_second", buf);
    uint64_t t0 = dm_clock_ns();
    usleep(20000);
    check(dm_clock_ns() - t0 >= 20000000, "time.usleep", "woke early");

    /* An alarm: the timer server sends TIMER_ALARM_FIRED over the link we pass. */
    long timer = sb_lookup("timer");
    long mine = dm_createlink(77, 0, 0, 0, 0);
    struct sv_call alarm = { .op = TIMER_ALARM, .arg = { 30000000, 4242 }, .pass = mine };
    uint64_t a0 = dm_clock_ns();
    long status = timer >= 0 ? sv_call(timer, &alarm) : timer;
    struct sv_request fired = { 0 };
    struct dm_msg_info info;
    long n = status == 0 ? dm_receive(&info, &fired, sizeof fired, 77) : status;
    snprintf(buf, sizeof buf, "status %ld, n %ld, op %u, cookie %lld", status, n, fired.op,
             (long long)fired.arg[0]);
    check(n == (long)sizeof fired && fired.op == TIMER_ALARM_FIRED && fired.arg[0] == 4242 &&
              dm_clock_ns() - a0 >= 30000000,
          "time.alarm", buf);

    struct tms t;
    clock_t c0 = times(&t);
    uint64_t p0 = dm_proctime();
    volatile unsigned long work = 0;
    for (unsigned long i = 0; i < 5000000; i++)
        work += i;
    uint64_t p1 = dm_proctime();
    times(&t);
    snprintf(buf, sizeof buf, "proctime grew by %llu", (unsigned long long)(p1 - p0));
    check(p1 - p0 >= 5000000 && p1 - p0 < 50000000, "time.proctime_counts_instructions", buf);
    check(t.tms_utime > 0 && c0 > 0, "time.times", "no CPU time or no elapsed time");

    printf("libctest: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
