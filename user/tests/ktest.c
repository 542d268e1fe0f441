/*
 * ktest — the in-OS tests of every kernel call: each success path and each
 * error return (kernel/demos.h). Prints one line per check:
 *     ok NAME            or     not ok NAME: what went wrong
 * and `provoked E_X` whenever a call returned the error a check expected, so
 * that the host can prove every error code in demos.h is exercised
 * (tests/test_kernel.py). Ends with `ktest: N passed, M failed`.
 *
 *     ktest [GROUP...]   run all groups, or the named ones
 *
 * ktest also plays the helper processes its tests need, chosen by argv[1]
 * (echo, never, killer, sleeper, hog, exit, crash, fp); they are not meant to be run
 * by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dmlib.h"
#include "fsclient.h"

/* The kernel call a check is named after ("send" in "send.too_big"), or 0. */
static long call_of_check(const char *name)
{
    char call[16];
    size_t n = strcspn(name, ".");
    if (name[n] != '.' || n >= sizeof call)
        return 0;
    memcpy(call, name, n);
    call[n] = 0;
    return dm_call_number(call);
}

/* A call that must fail with `want`. A check named after a kernel call
 * also needs `want` to be among that call's errors in demos.h (DM_CALLS). */
static void expect_error(long got, long want, const char *name)
{
    long call = call_of_check(name);
    if (call && !dm_call_may_return(call, want)) {
        dm_check(0, name, "%s is not among %s's errors in demos.h", dm_error_name(want), dm_call_name(call));
        return;
    }
    if (got == want)
        printf("provoked %s\n", dm_error_name(want));
    dm_check(got == want, name, "returned %ld (%s), expected %s", got, got < 0 ? dm_error_name(got) : "success",
           dm_error_name(want));
}

/* A call that must succeed. */
static void expect_ok(long got, const char *name)
{
    dm_check(got >= 0, name, "failed with %s", dm_error_name(got));
}

/* ---- helper processes ---- */

static char area[4096] __attribute__((aligned(4096)));

/* echo NAME: answer every CALL with its own data; "drop" destroys the reply
 * link unanswered; "twice" answers, then answers again and remembers what
 * the second SEND returned ("last" answers with it); a passed link gets a
 * "hello over the passed link" message; "area" answers with the data area;
 * "quit" ends. Also registers NAME-area: a link to `area` with read and
 * write rights, and NAME-ro: a read-only one. */
static int role_echo(const char *name)
{
    char area_name[SB_NAME_MAX];
    for (int i = 0; i < 4096; i++)
        area[i] = (char)('a' + i % 26);
    long self = dm_createlink(0, 7, 0, 0, 0);
    snprintf(area_name, sizeof area_name, "%s-area", name);
    sb_register(area_name, dm_createlink(0, 8, LINK_READ | LINK_WRITE, area, sizeof area));
    snprintf(area_name, sizeof area_name, "%s-ro", name);
    sb_register(area_name, dm_createlink(0, 9, LINK_READ, area, sizeof area));
    sb_register(name, self);
    long last = 0;
    static char buf[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        if (info.link >= 0) {
            dm_send(info.link, "hello over the passed link", 27, DM_NO_LINK);
            dm_destroylink(info.link);
        }
        if (n == 5 && memcmp(buf, "quit", 5) == 0)
            return 0;
        if (info.reply < 0)
            continue;
        if (n == 5 && memcmp(buf, "drop", 5) == 0) {
            dm_destroylink(info.reply);
        } else if (n == 6 && memcmp(buf, "twice", 6) == 0) {
            dm_send(info.reply, "first", 6, DM_NO_LINK);
            last = dm_send(info.reply, "second", 7, DM_NO_LINK);
        } else if (n == 5 && memcmp(buf, "last", 5) == 0) {
            dm_send(info.reply, &last, sizeof last, DM_NO_LINK);
        } else if (n == 5 && memcmp(buf, "area", 5) == 0) {
            dm_send(info.reply, area, sizeof area, DM_NO_LINK);
        } else {
            dm_send(info.reply, buf, (uint64_t)n, DM_NO_LINK);
        }
    }
}

/* never NAME: take requests and never answer them. */
static int __attribute__((noreturn)) role_never(const char *name)
{
    sb_register(name, dm_createlink(0, 0, 0, 0, 0));
    for (;;) {
        struct dm_msg_info info;
        char buf[64];
        dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
    }
}

/* killer PID MS: after MS milliseconds, kill PID. */
static int role_killer(const char *pid_text, const char *ms)
{
    dm_pid pid;
    if (dm_pid_parse(pid_text, &pid) < 0)
        return 2;
    timer_sleep_ns((uint64_t)atol(ms) * 1000000u);
    return pm_kill(pid) < 0 ? 1 : 0;
}

/* hog: take memory a megabyte at a time until there is none; exit with
 * the number of megabytes obtained. */
static int role_hog(void)
{
    int megabytes = 0;
    while (malloc(1 << 20))
        megabytes++;
    return megabytes;
}

/* crash HOW: do something a process must not; the kernel ends it with a
 * fault status and everything else goes on. */
static int role_crash(const char *how)
{
    if (strcmp(how, "null") == 0)
        return *(volatile int *)0;
    if (strcmp(how, "kernel-write") == 0)
        *(volatile uint64_t *)0x80001000UL = 0;
    else if (strcmp(how, "info-write") == 0)
        *(volatile uint64_t *)DM_INFO_PAGE = 0;
    else if (strcmp(how, "jump-kernel") == 0)
        ((void (*)(void))0x80000000UL)();
    else if (strcmp(how, "illegal") == 0)
        __asm__ volatile(".word 0");
    else if (strcmp(how, "csr") == 0)
        __asm__ volatile("csrw sstatus, zero");
    else if (strcmp(how, "stack") == 0) {
        volatile char big[1 << 20];
        big[0] = 1;
        return big[0];
    }
    return 0;
}

/* fp N: add 1/i for i = 1..N twice, while other processes do the same and
 * the scheduler switches between them; both sums must be equal and right. */
static int role_fp(const char *count)
{
    long n = atol(count);
    double sums[2];
    for (int pass = 0; pass < 2; pass++) {
        volatile double sum = 0;
        for (long i = 1; i <= n; i++)
            sum += 1.0 / (double)i;
        sums[pass] = sum;
    }
    return sums[0] == sums[1] && sums[0] > 16.0021 && sums[0] < 16.0023 ? 0 : 1;   /* H(5e6) = 16.002164 */
}

/* ---- the tests ---- */

static long spawn(const char *role, const char *a, const char *b)
{
    char *argv[] = { "ktest", (char *)role, (char *)a, (char *)b, 0 };
    int argc = b ? 4 : a ? 3 : 2;
    return pm_run("ktest", argc, argv);
}

/* Start an echo server and return a link to it (and its pid). */
static long start_echo(const char *suffix, dm_pid *pid)
{
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, "kt%u-%s", PID_SLOT(dm_self()), suffix);
    long p = spawn("echo", name, 0);
    if (p < 0)
        return p;
    *pid = (dm_pid)p;
    return sb_lookup_wait(name, 5000000000ull);
}

static long lookup_suffix(const char *server, const char *suffix)
{
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, "kt%u-%s-%s", PID_SLOT(dm_self()), server, suffix);
    return sb_lookup(name);
}

static void stop_echo(long link, dm_pid pid)
{
    int64_t status;
    dm_send(link, "quit", 5, DM_NO_LINK);
    pm_wait(pid, &status);
    dm_destroylink(link);
}

static void test_createlink(void)
{
    long a = dm_createlink(3, 0x1234, 0, 0, 0);
    expect_ok(a, "createlink.plain");
    long b = dm_createlink(4, 99, LINK_READ | LINK_WRITE, area, sizeof area);
    expect_ok(b, "createlink.with_area");
    dm_check(a != b, "createlink.distinct_slots", "both in slot %ld", a);
    expect_error(dm_createlink(0, 0, 0x80, 0, 0), E_INVAL, "createlink.unknown_flag");
    expect_error(dm_createlink(0, 0, LINK_READ, 0, 0), E_INVAL, "createlink.rights_without_area");
    expect_error(dm_createlink(0, 0, 0, area, 16), E_INVAL, "createlink.area_without_rights");
    expect_error(dm_createlink(DM_ANY_CHANNEL, 0, 0, 0, 0), E_INVAL, "createlink.reserved_channel");
    expect_error(dm_createlink(0, 0, LINK_READ, (void *)0x80000000UL, 64), E_FAULT, "createlink.kernel_area");
    expect_error(dm_createlink(0, 0, LINK_READ, (void *)0x50000000UL, 64), E_FAULT, "createlink.unmapped_area");
    expect_error(dm_createlink(0, 0, LINK_WRITE, (void *)DM_INFO_PAGE, 64), E_FAULT,
                 "createlink.write_to_readonly_area");
    expect_error(dm_createlink(0, 0, LINK_READ, area, DM_MOVE_MAX + 1), E_TOOBIG, "createlink.huge_area");

    /* A message over the new link arrives with its channel and code. */
    struct dm_msg_info info;
    char buf[16];
    dm_send(a, "x", 2, DM_NO_LINK);
    long n = dm_areceive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
    dm_check(n == 2 && info.channel == 3 && info.code == 0x1234 && info.sender == dm_self() &&
               info.flags == 0 && info.link == DM_NO_LINK && info.reply == DM_NO_LINK,
           "createlink.message_carries_channel_and_code", "n=%ld channel=%u code=%llu", n, info.channel,
           (unsigned long long)info.code);
    dm_destroylink(a);
    dm_destroylink(b);

    /* Fill the table: E_LINKFULL, then everything is released again. */
    long slots[DM_NLINKS], count = 0, r;
    while ((r = dm_createlink(0, 0, 0, 0, 0)) >= 0)
        slots[count++] = r;
    expect_error(r, E_LINKFULL, "createlink.table_full");
    for (long i = 0; i < count; i++)
        dm_destroylink(slots[i]);
    expect_ok(dm_createlink(0, 0, 0, 0, 0), "createlink.after_table_full");
}

static void test_destroylink(void)
{
    long a = dm_createlink(0, 0, 0, 0, 0);
    expect_ok(dm_destroylink(a), "destroylink.ok");
    expect_error(dm_send(a, "x", 1, DM_NO_LINK), E_EMPTYSLOT, "destroylink.slot_now_empty");
    expect_error(dm_destroylink(a), E_EMPTYSLOT, "destroylink.twice");
    expect_error(dm_destroylink(-1), E_BADSLOT, "destroylink.negative_slot");
    expect_error(dm_destroylink(DM_NLINKS), E_BADSLOT, "destroylink.slot_past_table");
}

static void test_duplicatelink(void)
{
    long a = dm_createlink(5, 55, 0, 0, 0);
    long b = dm_duplicatelink(a);
    expect_ok(b, "duplicatelink.ok");
    dm_destroylink(a);
    struct dm_msg_info info;
    char buf[8];
    dm_send(b, "d", 2, DM_NO_LINK);
    long n = dm_areceive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
    dm_check(n == 2 && info.channel == 5 && info.code == 55, "duplicatelink.copy_survives_original",
           "n=%ld channel=%u", n, info.channel);
    dm_destroylink(b);
    expect_error(dm_duplicatelink(b), E_EMPTYSLOT, "duplicatelink.empty_slot");
    expect_error(dm_duplicatelink(4096), E_BADSLOT, "duplicatelink.bad_slot");
    long r = dm_createlink(0, 0, LINK_REPLY, 0, 0);
    expect_error(dm_duplicatelink(r), E_INVAL, "duplicatelink.reply_link");
    dm_destroylink(r);
}

/* SEND and RECEIVE to ourselves: message sizes, channels, queue order,
 * truncation, ARECEIVE, and SEND's errors. Long on purpose: a list of
 * checks, one after another. */
static void test_send_receive(void)
{
    static char out[DM_MSG_MAX + 1], in[DM_MSG_MAX];
    struct dm_msg_info info;
    long self = dm_createlink(1, 0, 0, 0, 0);
    long other = dm_createlink(2, 0, 0, 0, 0);
    for (int i = 0; i < DM_MSG_MAX; i++)
        out[i] = (char)(i * 7);

    static const uint32_t sizes[] = { 0, 1, 8, 1000, DM_MSG_MAX };
    int all_intact = 1;
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        dm_send(self, out, sizes[i], DM_NO_LINK);
        long n = dm_receive(&info, in, sizeof in, DM_ANY_CHANNEL);
        if (n != (long)sizes[i] || info.length != sizes[i] || memcmp(in, out, sizes[i]) != 0)
            all_intact = 0;
    }
    dm_check(all_intact, "send.sizes_0_to_4096_intact", "a message came back different");

    /* RECEIVE by channel: a later message on the wanted channel first. */
    dm_send(self, "one", 4, DM_NO_LINK);
    dm_send(other, "two", 4, DM_NO_LINK);
    long n = dm_receive(&info, in, sizeof in, 2);
    dm_check(n == 4 && strcmp(in, "two") == 0 && info.channel == 2, "receive.selects_channel", "got %s", in);
    n = dm_receive(&info, in, sizeof in, DM_ANY_CHANNEL);
    dm_check(n == 4 && strcmp(in, "one") == 0, "receive.order_kept", "got %s", in);

    /* Truncation: the buffer is shorter than the message. */
    dm_send(self, "truncated!", 11, DM_NO_LINK);
    n = dm_receive(&info, in, 4, DM_ANY_CHANNEL);
    dm_check(n == 4 && info.length == 11 && (info.flags & DM_MSG_TRUNCATED), "receive.truncates",
           "n=%ld length=%u flags=%u", n, info.length, info.flags);

    expect_error(dm_areceive(&info, in, sizeof in, DM_ANY_CHANNEL), E_NOMSG, "areceive.empty");
    dm_send(self, "a", 2, DM_NO_LINK);
    expect_error(dm_areceive(&info, in, sizeof in, 9), E_NOMSG, "areceive.other_channel_only");
    n = dm_areceive(&info, in, sizeof in, 1);
    dm_check(n == 2 && in[0] == 'a', "areceive.gets_queued", "n=%ld", n);

    expect_error(dm_send(self, out, DM_MSG_MAX + 1, DM_NO_LINK), E_TOOBIG, "send.too_big");
    expect_error(dm_send(self, (void *)0x80000000UL, 8, DM_NO_LINK), E_FAULT, "send.kernel_pointer");
    expect_error(dm_send(self, (void *)0x50000000UL, 8, DM_NO_LINK), E_FAULT, "send.unmapped_pointer");
    expect_error(dm_send(self, (void *)(DM_USER_TOP - 4), 8, DM_NO_LINK), E_FAULT, "send.pointer_past_user_space");
    expect_error(dm_send(-3, "x", 1, DM_NO_LINK), E_BADSLOT, "send.bad_slot");
    expect_error(dm_send(60, "x", 1, DM_NO_LINK), E_EMPTYSLOT, "send.empty_slot");
    expect_error(dm_send(self, "x", 1, self), E_INVAL, "send.pass_own_link");
    expect_error(dm_send(self, "x", 1, 61), E_EMPTYSLOT, "send.pass_empty_slot");
    expect_error(dm_receive((void *)DM_INFO_PAGE, in, sizeof in, DM_ANY_CHANNEL), E_FAULT,
                 "receive.info_readonly");
    expect_error(dm_receive(&info, (void *)0x80001000UL, 16, DM_ANY_CHANNEL), E_FAULT, "receive.kernel_buffer");
    expect_error(dm_areceive(&info, (void *)0x50000000UL, 16, DM_ANY_CHANNEL), E_FAULT,
                 "areceive.unmapped_buffer");

    /* The queue holds DM_QUEUE_MAX messages, then E_QFULL. */
    long r = 0, sent = 0;
    while ((r = dm_send(self, "q", 1, DM_NO_LINK)) == 0)
        sent++;
    expect_error(r, E_QFULL, "send.queue_full");
    dm_check(sent == DM_QUEUE_MAX, "send.queue_holds_limit", "took %ld", sent);
    while (dm_areceive(&info, in, sizeof in, DM_ANY_CHANNEL) >= 0)
        ;
    dm_destroylink(self);
    dm_destroylink(other);
}

static void test_link_passing(void)
{
    struct dm_msg_info info;
    char in[64];
    long self = dm_createlink(1, 0, 0, 0, 0);
    long passed = dm_createlink(6, 66, 0, 0, 0);
    expect_ok(dm_send(self, "p", 2, passed), "pass.send_with_link");
    expect_error(dm_send(passed, "x", 1, DM_NO_LINK), E_EMPTYSLOT, "pass.sender_loses_link");
    long n = dm_receive(&info, in, sizeof in, DM_ANY_CHANNEL);
    dm_check(n == 2 && info.link >= 0, "pass.receiver_gets_link", "link=%d", info.link);
    dm_send(info.link, "via", 4, DM_NO_LINK);
    n = dm_receive(&info, in, sizeof in, DM_ANY_CHANNEL);
    dm_check(n == 4 && info.channel == 6 && info.code == 66, "pass.link_keeps_destination",
           "channel=%u code=%llu", info.channel, (unsigned long long)info.code);

    /* Passed to another process, a link still reaches the same process. */
    dm_pid pid;
    long echo = start_echo("pass", &pid);
    long mine = dm_createlink(12, 1212, 0, 0, 0);
    dm_send(echo, "x", 2, mine);
    n = dm_receive(&info, in, sizeof in, 12);
    dm_check(n == 27 && strcmp(in, "hello over the passed link") == 0 && info.sender == pid && info.code == 1212,
           "pass.other_process_reaches_me", "n=%ld sender ok=%d", n, info.sender == pid);
    stop_echo(echo, pid);
    dm_destroylink(self);
}

static void test_call(void)
{
    dm_pid pid;
    long echo = start_echo("call", &pid);
    expect_ok(echo, "call.server_found");
    char in[DM_MSG_MAX];
    static char big[1000];
    struct dm_msg_info info;
    long n = dm_call(echo, "ping", 5, DM_NO_LINK, in, sizeof in, &info);
    dm_check(n == 5 && strcmp(in, "ping") == 0 && info.sender == pid && info.channel == DM_REPLY_CHANNEL,
           "call.reply", "n=%ld %s", n, n > 0 ? in : dm_error_name(n));
    memset(big, 'z', sizeof big);
    n = dm_call(echo, big, sizeof big, DM_NO_LINK, in, sizeof in, &info);
    dm_check(n == 1000 && memcmp(in, big, 1000) == 0, "call.1000_bytes", "n=%ld", n);

    /* A link passed with a CALL arrives beside the reply link. */
    long mine = dm_createlink(13, 0, 0, 0, 0);
    n = dm_call(echo, "with link", 10, mine, in, sizeof in, &info);
    long m = dm_receive(&info, in, sizeof in, 13);
    dm_check(n == 10 && m == 27, "call.passes_a_link", "n=%ld m=%ld", n, m);

    n = dm_call(echo, "twice", 6, DM_NO_LINK, in, sizeof in, &info);
    long last = 0;
    dm_call(echo, "last", 5, DM_NO_LINK, &last, sizeof last, &info);
    dm_check(n == 6 && strcmp(in, "first") == 0, "call.first_answer", "got %s", in);
    expect_error(last, E_USED, "call.reply_link_used_twice");

    expect_error(dm_call(echo, "drop", 5, DM_NO_LINK, in, sizeof in, &info), E_NOREPLY,
                 "call.reply_link_destroyed");
    expect_error(dm_call(echo, "x", 2, DM_NO_LINK, in, sizeof in, (void *)DM_INFO_PAGE), E_FAULT,
                 "call.info_readonly");
    expect_error(dm_call(echo, "x", 2, DM_NO_LINK, (void *)0x80000000UL, 64, &info), E_FAULT,
                 "call.reply_buffer_kernel");
    expect_error(dm_call(echo, "x", DM_MSG_MAX + 1, DM_NO_LINK, in, sizeof in, &info), E_TOOBIG, "call.too_big");

    /* The link to a process that has ended: E_DEAD, for SEND and CALL. */
    stop_echo(dm_duplicatelink(echo), pid);
    expect_error(dm_send(echo, "x", 1, DM_NO_LINK), E_DEAD, "send.destination_dead");
    expect_error(dm_call(echo, "x", 1, DM_NO_LINK, in, sizeof in, &info), E_DEAD, "call.destination_dead");
    dm_destroylink(echo);

    /* A reply link made by hand is also used up by one SEND. */
    long r = dm_createlink(14, 0, LINK_REPLY, 0, 0);
    expect_ok(dm_send(r, "once", 5, DM_NO_LINK), "send.over_reply_link");
    expect_error(dm_send(r, "again", 6, DM_NO_LINK), E_USED, "send.reply_link_used");
    expect_error(dm_duplicatelink(r), E_USED, "duplicatelink.used_reply_link");
    expect_ok(dm_destroylink(r), "destroylink.clears_used_reply_link");
    dm_receive(&info, in, sizeof in, 14);
}

static void test_kill_while_blocked(void)
{
    char name[SB_NAME_MAX], pid_text[24];
    snprintf(name, sizeof name, "kt%u-never", PID_SLOT(dm_self()));
    long p = spawn("never", name, 0);
    long never = sb_lookup_wait(name, 5000000000ull);
    dm_pid_string((dm_pid)p, pid_text);
    long killer = spawn("killer", pid_text, "300");
    char in[16];
    struct dm_msg_info info;
    expect_error(dm_call(never, "wait", 5, DM_NO_LINK, in, sizeof in, &info), E_NOREPLY,
                 "call.server_killed_while_blocked");
    int64_t status = 0;
    pm_wait((dm_pid)p, &status);
    dm_check(status == DM_EXIT_KILLED, "kill.status_is_killed", "status %lld", (long long)status);
    pm_wait((dm_pid)killer, &status);
    expect_error(dm_send(never, "x", 1, DM_NO_LINK), E_DEAD, "kill.links_to_it_dead");
    dm_destroylink(never);
}

static void test_movedata(void)
{
    dm_pid pid;
    long echo = start_echo("move", &pid);
    long rw = lookup_suffix("move", "area"), ro = lookup_suffix("move", "ro");
    long plain = dm_createlink(0, 0, 0, 0, 0);
    static char buf[4096], check[4096];
    struct dm_msg_info info;

    long n = dm_movedata(DM_SELF, (uint64_t)buf, rw, 0, 4096);
    int pattern = 1;
    for (int i = 0; i < 4096; i++)
        pattern &= buf[i] == (char)('a' + i % 26);
    dm_check(n == 4096 && pattern, "movedata.read_other_process", "n=%ld", n);

    memset(buf, 'Q', 100);
    n = dm_movedata(rw, 1000, DM_SELF, (uint64_t)buf, 100);
    dm_call(echo, "area", 5, DM_NO_LINK, check, sizeof check, &info);
    dm_check(n == 100 && check[999] == (char)('a' + 999 % 26) && check[1000] == 'Q' && check[1099] == 'Q' &&
               check[1100] == (char)('a' + 1100 % 26),
           "movedata.write_other_process", "n=%ld", n);

    n = dm_movedata(DM_SELF, (uint64_t)buf, ro, 4000, 96);
    dm_check(n == 96, "movedata.read_readonly_area", "n=%ld", n);
    expect_error(dm_movedata(ro, 0, DM_SELF, (uint64_t)buf, 8), E_RIGHTS, "movedata.write_readonly_area");
    expect_error(dm_movedata(rw, 4090, DM_SELF, (uint64_t)buf, 8), E_BOUNDS, "movedata.past_area_end");
    expect_error(dm_movedata(rw, (uint64_t)-8, DM_SELF, (uint64_t)buf, 16), E_BOUNDS, "movedata.offset_wraps");
    expect_error(dm_movedata(DM_SELF, (uint64_t)buf, plain, 0, 8), E_NOAREA, "movedata.link_without_area");
    expect_error(dm_movedata(DM_SELF, (uint64_t)buf, DM_SELF, (uint64_t)check, 8), E_INVAL, "movedata.both_self");
    expect_error(dm_movedata(DM_SELF, 0x80000000UL, rw, 0, 8), E_FAULT, "movedata.into_kernel");
    expect_error(dm_movedata(DM_SELF, DM_INFO_PAGE, rw, 0, 8), E_FAULT, "movedata.into_readonly_page");
    expect_error(dm_movedata(DM_SELF, (uint64_t)buf, rw, 0, DM_MOVE_MAX + 1), E_TOOBIG, "movedata.too_big");
    expect_error(dm_movedata(DM_SELF, (uint64_t)buf, 77, 0, 8), E_BADSLOT, "movedata.bad_slot");
    expect_error(dm_movedata(DM_SELF, (uint64_t)buf, 50, 0, 8), E_EMPTYSLOT, "movedata.empty_slot");

    /* Within my own memory, through a link to myself. */
    long own = dm_createlink(0, 0, LINK_READ | LINK_WRITE, check, sizeof check);
    memcpy(buf, "own area", 9);
    n = dm_movedata(own, 10, DM_SELF, (uint64_t)buf, 9);
    dm_check(n == 9 && strcmp(check + 10, "own area") == 0, "movedata.own_area", "n=%ld", n);

    stop_echo(echo, pid);
    expect_error(dm_movedata(DM_SELF, (uint64_t)buf, rw, 0, 8), E_DEAD, "movedata.owner_dead");
    dm_destroylink(rw);
    dm_destroylink(ro);
    dm_destroylink(plain);
    dm_destroylink(own);
}

static void test_stoptask_and_requests(void)
{
    int64_t status = -1;
    long p = spawn("exit", "42", 0);
    expect_ok(p, "pm.run");
    expect_ok(pm_wait((dm_pid)p, &status), "pm.wait");
    dm_check(status == 42, "stoptask.status_reaches_waiter", "status %lld", (long long)status);
    expect_error(pm_run("no-such-program", 0, 0), E_NOTFOUND, "pm.run_unknown_program");
    char *hello[] = { "hello", 0 };
    expect_error(pm_run_on(200, "hello", 1, hello, 0), E_NODE, "pm.run_on_a_machine_that_is_not_up");
    expect_error(pm_kill(PID_MAKE(0, 0, 120, 77)), E_NOTFOUND, "pm.kill_unknown_process");
    p = spawn("never", "kt-resume", 0);
    expect_error(pm_resume((dm_pid)p), E_STATE, "pm.resume_running_process");
    expect_ok(pm_stop((dm_pid)p), "pm.stop");
    expect_error(pm_stop((dm_pid)p), E_STATE, "pm.stop_stopped_process");
    expect_ok(pm_resume((dm_pid)p), "pm.resume");
    pm_kill((dm_pid)p);
    struct sv_call c = { .op = 999, .pass = DM_NO_LINK };
    expect_error(sv_call(SLOT_PM, &c), E_NOSYS, "pm.unknown_request");
    struct dm_msg_info info;
    char in[64];
    long n = dm_call(SLOT_PM, "x", 1, DM_NO_LINK, in, sizeof in, &info);   /* shorter than a request */
    expect_error(n >= (long)sizeof(struct sv_reply) ? ((struct sv_reply *)in)->status : n, E_BADREQ,
                 "pm.malformed_request");
    expect_error(dm_badcall(), E_NOSYS, "kernel.unknown_call");
}

/* The pid of the process called `name` (the first ps lists), or 0. */
static dm_pid pid_named(const char *name)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    int64_t cursor = 0;
    long n;
    while ((n = pm_ps_page(&cursor, entries, sizeof entries)) > 0)
        for (long i = 0; i < n; i++)
            if (strcmp(entries[i].name, name) == 0)
                return entries[i].pid;
    return 0;
}

/* The process manager refuses to end or stop the system's own processes. */
static void test_system_processes(void)
{
    dm_pid switchboard = pid_named("switchboard");
    expect_error(pm_kill(switchboard), E_SYSTEM, "pm.kill_a_system_process");
    expect_error(pm_stop(switchboard), E_SYSTEM, "pm.stop_a_system_process");
    expect_error(pm_kill(pid_named("pm")), E_SYSTEM, "pm.kill_the_process_manager");
}

/* The switchboard's limits: a name longer than SB_NAME_MAX - 1, and a
 * table with no room for another name; every name taken is given back. */
static void test_switchboard_limits(void)
{
    char name[SB_NAME_MAX + 1];
    memset(name, 'n', SB_NAME_MAX);
    name[SB_NAME_MAX] = 0;
    long self = dm_createlink(0, 0, 0, 0, 0);
    expect_error(sb_register(name, dm_duplicatelink(self)), E_NAMETOOLONG, "switchboard.name_too_long");
    long err = 0;
    int taken = 0;
    for (; taken < 100 && err == 0; taken++) {
        snprintf(name, sizeof name, "kt%u-n%d", PID_SLOT(dm_self()), taken);
        err = sb_register(name, dm_duplicatelink(self));
    }
    expect_error(err, E_NAMESFULL, "switchboard.table_full");
    for (int i = 0; i < taken; i++) {
        snprintf(name, sizeof name, "kt%u-n%d", PID_SLOT(dm_self()), i);
        struct sv_call c = { .op = SB_REMOVE, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = DM_NO_LINK };
        sv_call(SLOT_SWITCHBOARD, &c);
    }
    dm_destroylink(self);
}

/* A file link whose request interpreter is gone: the client library
 * says the file system is down. */
static void test_file_system_gone(void)
{
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, "kt%u-gone", PID_SLOT(dm_self()));
    long p = spawn("never", name, 0);
    long link = p < 0 ? p : sb_lookup_wait(name, 5000000000ull);
    int64_t status;
    if (p >= 0 && pm_kill((dm_pid)p) == 0)
        pm_wait((dm_pid)p, &status);
    char byte;
    expect_error(link < 0 ? link : fs_read(link, 0, &byte, 1), E_FSDOWN, "fs.request_interpreter_gone");
    if (link >= 0)
        dm_destroylink(link);
}

static void test_many_processes(void)
{
    enum { N = 64 };
    long pids[N];
    int started = 0;
    for (int i = 0; i < N; i++) {
        char index[8];
        snprintf(index, sizeof index, "%d", i);
        pids[i] = spawn("sleeper", index, 0);
        started += pids[i] >= 0;
    }
    dm_check(started == N, "processes.64_at_once", "only %d started", started);
    int right = 0;
    for (int i = 0; i < N; i++) {
        int64_t status = -1;
        if (pids[i] >= 0 && pm_wait((dm_pid)pids[i], &status) == 0 && status == i)
            right++;
    }
    dm_check(right == N, "processes.64_exit_statuses", "%d right", right);
    /* Then as many as the machine takes: the next is refused, and the
     * table is free again after. */
    enum { MAX = 130 };
    long full[MAX], err = 0;
    int made = 0;
    while (made < MAX && err >= 0) {
        char name[SB_NAME_MAX];
        snprintf(name, sizeof name, "kt%u-full", PID_SLOT(dm_self()));   /* one name, taken over by each */
        err = full[made] = spawn("never", name, 0);
        made += err >= 0;
    }
    expect_error(err, E_PROCFULL, "processes.table_full");
    for (int i = 0; i < made; i++) {
        int64_t status;
        if (pm_kill((dm_pid)full[i]) == 0)
            pm_wait((dm_pid)full[i], &status);
    }
    expect_ok(spawn("exit", "0", 0), "processes.room_again_after");
}

static void test_memory(void)
{
    long p = spawn("hog", 0, 0);
    int64_t megabytes = -1;
    pm_wait((dm_pid)p, &megabytes);
    dm_check(megabytes >= 16 && megabytes < 32, "memory.exhaust_own_limit", "got %lld MiB", (long long)megabytes);
    struct sv_call c = { .op = PM_SBRK, .arg = { 1L << 40 }, .pass = DM_NO_LINK };
    expect_error(sv_call(SLOT_PM, &c), E_NOMEM, "memory.sbrk_too_much");
    /* A CALL whose reply buffer lies in memory the request itself frees:
     * the answer cannot be delivered (E_FAULT), and nothing else is hurt. */
    char *top = sbrk(0);
    char *grown = sbrk(3 * 4096);
    char *page = (char *)(((uintptr_t)top + 4095) & ~4095UL);
    struct sv_request shrink = { .op = PM_SBRK, .arg = { -3 * 4096 } };
    struct dm_msg_info info;
    long n = grown == top ? dm_call(SLOT_PM, &shrink, sizeof shrink, DM_NO_LINK, page, 64, &info) : -99;
    expect_error(n, E_FAULT, "memory.reply_into_freed_page");
    char *q = malloc(100000);
    dm_check(q != 0, "memory.malloc_after_exhaustion", "malloc failed");
    free(q);
    p = spawn("exit", "0", 0);
    int64_t status = -1;
    pm_wait((dm_pid)p, &status);
    dm_check(status == 0, "memory.system_fine_after_hog", "status %lld", (long long)status);
}

static void test_floating_point(void)
{
    long pids[3];
    for (int i = 0; i < 3; i++)
        pids[i] = spawn("fp", "5000000", 0);
    int right = 0;
    for (int i = 0; i < 3; i++) {
        int64_t status = -1;
        right += pids[i] >= 0 && pm_wait((dm_pid)pids[i], &status) == 0 && status == 0;
    }
    dm_check(right == 3, "fp.registers_kept_across_switches", "%d of 3 processes right", right);
}

static const struct { const char *name; void (*run)(void); } groups[] = {
    { "createlink", test_createlink },   { "destroylink", test_destroylink },
    { "duplicatelink", test_duplicatelink }, { "send", test_send_receive },
    { "pass", test_link_passing },       { "call", test_call },
    { "kill", test_kill_while_blocked }, { "movedata", test_movedata },
    { "stoptask", test_stoptask_and_requests }, { "many", test_many_processes },
    { "memory", test_memory },           { "fp", test_floating_point },
    { "system", test_system_processes }, { "switchboard", test_switchboard_limits },
    { "fsgone", test_file_system_gone },
};

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "echo") == 0)
        return role_echo(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "never") == 0)
        return role_never(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "killer") == 0)
        return role_killer(argv[2], argv[3]);
    if (argc >= 3 && strcmp(argv[1], "sleeper") == 0) {
        timer_sleep_ns(1000000000u);
        return atoi(argv[2]);
    }
    if (argc >= 3 && strcmp(argv[1], "crash") == 0)
        return role_crash(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "fp") == 0)
        return role_fp(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "hog") == 0)
        return role_hog();
    if (argc >= 3 && strcmp(argv[1], "exit") == 0)
        dm_stoptask(atol(argv[2]));

    for (unsigned g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        int wanted = argc == 1;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], groups[g].name) == 0;
        if (wanted)
            groups[g].run();
    }
    return dm_check_summary("ktest");
}
