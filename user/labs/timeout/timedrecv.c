/*
 * timedrecv — the test program of the timeout lab (docs/labs/timeout.md):
 * it calls TIMEDRECEIVE, RECEIVE with a time-out, in the situations the
 * lab's grader checks, and prints what each call returned and when.
 *
 *   timedrecv wait TIMEOUT [DELAY]   TIMEDRECEIVE of TIMEOUT on a channel of its own; with
 *                                    DELAY, the timer server sends a message on it DELAY
 *                                    after the call begins. A message that comes after the
 *                                    time-out is then received with RECEIVE.
 *   timedrecv queued TIMEOUT         the same with a message already queued
 *   timedrecv stale                  TIMEDRECEIVE of 300 ms answered by a message at 50 ms,
 *                                    then RECEIVE, which must wait for the next at 600 ms
 *   timedrecv fault                  TIMEDRECEIVE of 1 s into memory it may not write
 *   timedrecv several TIMEOUT...     a child `timedrecv wait TIMEOUT` for each, all at once
 *
 * A time is in ns, or with a unit: 300ms, 2s. Every line says what a call
 * returned and the machine-clock time since the TIMEDRECEIVE began:
 *
 *   timedrecv: wait 2s: message 1 from 0.4.1 after 100.2 ms
 *   timedrecv: wait 300ms: E_TIMEOUT after 300.0 ms
 *   timedrecv: late: message 1 from 0.4.1 after 400.1 ms
 *   timedrecv: nothing more is queued
 *
 * Message N is the timer server's alarm with cookie N (server_protocol.h,
 * TIMER_ALARM); message 0 is one it sent itself. An error the call
 * returned that its entry in demos.h (DM_CALLS) does not list is said, and
 * so is E_NOSYS: the kernel has no such call. Exit status 0 when every
 * call answered as the lab says, 1 otherwise, 2 for a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

#define CHANNEL 5                /* the channel of its links to itself */
#define NUMBER  10               /* TIMEDRECEIVE's call number (docs/labs/timeout.md) */

/* TODO(lab timeout, part 1): this stand-in for the kernel call's stub
 * makes the call by its number, which the kernel does not know yet: it
 * answers E_NOSYS. When kernel/demos.h lists TIMEDRECEIVE in DM_CALLS,
 * user/lib/kcall.S has the real stub and user/lib/dmlib.h its prototype:
 * then delete this declaration and the function below. */
long dm_timedreceive(struct dm_msg_info *info, void *buf, uint64_t cap, uint32_t channel, int64_t timeout_ns);
__attribute__((weak)) long dm_timedreceive(struct dm_msg_info *info, void *buf, uint64_t cap, uint32_t channel,
                                           int64_t timeout_ns)
{
    register long a0 __asm__("a0") = (long)info;
    register long a1 __asm__("a1") = (long)buf;
    register long a2 __asm__("a2") = (long)cap;
    register long a3 __asm__("a3") = (long)channel;
    register long a4 __asm__("a4") = (long)timeout_ns;
    register long a7 __asm__("a7") = NUMBER;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a7) : "memory");
    return a0;
}

static int wait_for(const char *timeout_text, int64_t timeout, int64_t delay);
static int queued(const char *timeout_text, int64_t timeout);
static int stale(void);
static int fault(void);
static int several(int count, char **timeouts);

/* A time: ns, or a number with the unit ms or s; 0 for text that is none. */
static int parse_time(const char *text, int64_t *ns)
{
    char *end;
    long long n = strtoll(text, &end, 10);
    if (end == text)
        return 0;
    int64_t unit = strcmp(end, "ms") == 0 ? 1000000 : strcmp(end, "s") == 0 ? 1000000000 : *end ? 0 : 1;
    if (unit == 0 || (unit > 1 && (n > INT64_MAX / unit || n < INT64_MIN / unit)))
        return 0;
    *ns = (int64_t)n * unit;
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int64_t timeout = 0, delay = -1;
    if (strcmp(mode, "wait") == 0 && (argc == 3 || argc == 4) && parse_time(argv[2], &timeout) &&
        (argc == 3 || (parse_time(argv[3], &delay) && delay >= 0)))
        return wait_for(argv[2], timeout, delay);
    if (strcmp(mode, "queued") == 0 && argc == 3 && parse_time(argv[2], &timeout))
        return queued(argv[2], timeout);
    if (strcmp(mode, "stale") == 0 && argc == 2)
        return stale();
    if (strcmp(mode, "fault") == 0 && argc == 2)
        return fault();
    if (strcmp(mode, "several") == 0 && argc > 2)
        return several(argc - 2, argv + 2);
    printf("usage: timedrecv wait TIMEOUT [DELAY] | queued TIMEOUT | stale | fault | several TIMEOUT...\n"
           "       (a time in ns, or with a unit: 300ms, 2s)\n");
    return 2;
}

/* ---- what a call returned ---- */

static uint64_t began;           /* machine clock when the TIMEDRECEIVE began */

/* Whether err is E_TIMEOUT, by its name: the starting point's demos.h has
 * no such error yet. */
static int timed_out(long err)
{
    return strcmp(dm_error_name(err), "E_TIMEOUT") == 0;
}

static double ms_since_began(void)
{
    return (double)(dm_clock_ns() - began) / 1e6;
}

/* Whether err, returned by TIMEDRECEIVE, is one of the errors demos.h
 * lists for it; if not, say so. */
static int listed(long err)
{
    long number = dm_call_number("TIMEDRECEIVE");
    if (err == E_NOSYS) {
        printf("timedrecv: the kernel answers E_NOSYS to call %d: it has no TIMEDRECEIVE yet "
               "(docs/labs/timeout.md, parts 1 and 2)\n", NUMBER);
        return 0;
    }
    if (number != NUMBER) {
        printf("timedrecv: kernel/demos.h lists no call TIMEDRECEIVE of number %d (docs/labs/timeout.md, part 1)\n",
               NUMBER);
        return 0;
    }
    if (!dm_call_may_return(number, err)) {
        printf("timedrecv: TIMEDRECEIVE returned %s, which its entry in kernel/demos.h does not list\n",
               dm_error_name(err));
        return 0;
    }
    return 1;
}

/* Print what a receive (`what`) returned: n >= 0, the message in `body`
 * and `info`, or an error. Returns 1 if it was a message. */
static int say(const char *what, long n, const struct dm_msg_info *info, const struct sv_request *body)
{
    char id[24];
    double ms = ms_since_began();
    if (n < 0) {
        printf("timedrecv: %s: %s after %.1f ms\n", what, dm_error_name(n), ms);
        return 0;
    }
    printf("timedrecv: %s: message %lld from %s after %.1f ms\n", what, (long long)body->arg[0],
           dm_pid_string(info->sender, id), ms);
    return 1;
}

/* A link to this process on CHANNEL. */
static long link_to_me(void)
{
    long slot = dm_createlink(CHANNEL, 0, 0, 0, 0);
    if (slot < 0)
        printf("timedrecv: CREATELINK: %s\n", dm_error_name(slot));
    return slot;
}

/* Ask the timer server to send message `cookie` on CHANNEL in `delay` ns. */
static int alarm_in(int64_t delay, int64_t cookie)
{
    static long timer = -1;
    if (timer < 0 && (timer = sb_lookup("timer")) < 0) {
        printf("timedrecv: no timer server: %s\n", dm_error_name(timer));
        return 0;
    }
    long link = link_to_me();
    if (link < 0)
        return 0;
    struct sv_call c = { .op = TIMER_ALARM, .arg = { delay, cookie }, .pass = link };
    long err = sv_call(timer, &c);
    if (err < 0)
        printf("timedrecv: the timer server refused an alarm: %s\n", dm_error_name(err));
    return err >= 0;
}

/* After a message came: is another queued on CHANNEL? Each message comes once. */
static int nothing_more(void)
{
    struct dm_msg_info info;
    struct sv_request body;
    long n = dm_areceive(&info, &body, sizeof body, CHANNEL);
    if (n == E_NOMSG) {
        printf("timedrecv: nothing more is queued\n");
        return 1;
    }
    say("ARECEIVE", n, &info, &body);
    return 0;
}

/* ---- the modes ---- */

/* TIMEDRECEIVE of `timeout`; the alarm (if delay >= 0) comes `delay` after it begins. */
static int wait_for(const char *timeout_text, int64_t timeout, int64_t delay)
{
    if (delay >= 0 && !alarm_in(delay, 1))
        return 1;
    char what[64];
    snprintf(what, sizeof what, "wait %s", timeout_text);
    struct dm_msg_info info;
    struct sv_request body;
    began = dm_clock_ns();
    long n = dm_timedreceive(&info, &body, sizeof body, CHANNEL, timeout);
    if (n < 0 && !listed(n))
        return 1;
    if (say(what, n, &info, &body))
        return nothing_more() ? 0 : 1;
    if (delay < 0 || !timed_out(n))
        return timed_out(n) || (timeout < 0 && n == E_INVAL) ? 0 : 1;
    n = dm_receive(&info, &body, sizeof body, CHANNEL);   /* the message after the time-out */
    if (!say("late", n, &info, &body))
        return 1;
    return nothing_more() ? 0 : 1;
}

/* A message of its own queued first: TIMEDRECEIVE takes it at once. */
static int queued(const char *timeout_text, int64_t timeout)
{
    long link = link_to_me();
    struct sv_request body = { .arg = { 0 } };
    long err = link < 0 ? link : dm_send(link, &body, sizeof body, DM_NO_LINK);
    if (err < 0) {
        printf("timedrecv: SEND to itself: %s\n", dm_error_name(err));
        return 1;
    }
    char what[64];
    snprintf(what, sizeof what, "queued %s", timeout_text);
    struct dm_msg_info info;
    began = dm_clock_ns();
    long n = dm_timedreceive(&info, &body, sizeof body, CHANNEL, timeout);
    if (n < 0 && !listed(n))
        return 1;
    return say(what, n, &info, &body) && nothing_more() ? 0 : 1;
}

/* A TIMEDRECEIVE answered before its deadline leaves nothing behind: the
 * RECEIVE after it waits past that deadline for its own message. */
static int stale(void)
{
    if (!alarm_in(50000000, 1) || !alarm_in(600000000, 2))
        return 1;
    struct dm_msg_info info;
    struct sv_request body;
    began = dm_clock_ns();
    long n = dm_timedreceive(&info, &body, sizeof body, CHANNEL, 300000000);
    if (n < 0 && !listed(n))
        return 1;
    if (!say("wait 300ms", n, &info, &body))
        return 1;
    n = dm_receive(&info, &body, sizeof body, CHANNEL);
    return say("then RECEIVE", n, &info, &body) ? 0 : 1;
}

/* Memory it may not write, as info or as the buffer: E_FAULT at once,
 * without waiting for the time-out. */
static int fault(void)
{
    static struct dm_msg_info info;
    static const struct { const char *what; struct dm_msg_info *info; void *buf; uint64_t cap; } cases[] = {
        { "info at 0", 0, 0, 0 },
        { "info on the read-only info page", (struct dm_msg_info *)DM_INFO_PAGE, 0, 0 },
        { "buffer unmapped", &info, (void *)0x70000000UL, 64 },   /* between heap and stack */
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        began = dm_clock_ns();
        long n = dm_timedreceive(cases[i].info, cases[i].buf, cases[i].cap, CHANNEL, 1000000000);
        if (n >= 0 || !listed(n))
            return 1;
        printf("timedrecv: %s: %s after %.1f ms\n", cases[i].what, dm_error_name(n), ms_since_began());
        ok &= n == E_FAULT;
    }
    return ok ? 0 : 1;
}

/* A child `timedrecv wait T` for each T, all waiting at once. */
static int several(int count, char **timeouts)
{
    long children[16];
    if (count > 16)
        count = 16;
    for (int i = 0; i < count; i++) {
        char *child_argv[] = { "timedrecv", "wait", timeouts[i], 0 };
        if ((children[i] = pm_run("timedrecv", 3, child_argv)) < 0) {
            printf("timedrecv: cannot start a child: %s\n", dm_error_name(children[i]));
            return 1;
        }
    }
    int ok = 1;
    for (int i = 0; i < count; i++) {
        int64_t status = 1;
        pm_wait((dm_pid)children[i], &status);
        ok &= status == 0;
    }
    return ok ? 0 : 1;
}
