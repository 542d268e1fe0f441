/*
 * nettest — the kernel calls across machines: SEND, CALL and its
 * answer, link passing, MOVEDATA between areas on different machines (two
 * and three of them), DESTROYLINK, and the errors a dead process gives.
 * Prints one line per check, as ktest does:
 *     ok NAME            or     not ok NAME: what went wrong
 * and ends with `nettest: N passed, M failed`.
 *
 *     nettest [K [J]]        servers on machines K and J (default 1 and 2,
 *                            or the last machine when there are only two)
 *     nettest serve NAME     a server: registers under NAME with the
 *                            switchboard and answers the client's requests
 *     nettest stress K MESSAGES MIB
 *                            a workload for the fault tests: with a server on
 *                            machine K, MESSAGES messages (SENDs whose order and
 *                            bytes the server checks, and CALLs whose answers
 *                            this checks) and MIB MiB moved there and back by
 *                            MOVEDATA, every byte checked; prints the figures
 *     nettest ring N ROUNDS  a relay on each machine 1..N-1; a token leaves this
 *                            process (machine 0), goes from relay to relay
 *                            through every machine and comes back, ROUNDS times;
 *                            each relay adds its machine to the token's path
 *     nettest relay PREFIX K N   one relay (internal): registers PREFIX.K and
 *                            passes tokens on to PREFIX.(K+1 mod N)
 *     nettest hold K         with a server on machine K, CALL it every 100 ms
 *                            until a call fails; prints why and after how long
 *                            (the tests kill or reboot machine K meanwhile)
 *     nettest reach K        with a server on machine K, CALL it until a call is
 *                            answered (at most 20 calls); prints each call's
 *                            time on this machine's clock, its result and how
 *                            long it took (the tests keep this machine from
 *                            hearing machine K for a while)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

enum op {
    OP_ECHO = 1,     /* answer with the request's data */
    OP_SEQUENCE,     /* (SEND) arg = the next number in order; its data, if any, is
                        fill(data, length, arg) */
    OP_COUNT,        /* answer: value = numbers received, arg = whether all were in
                        order with the right bytes */
    OP_AREA,         /* answer passes a read-write link to the server's area */
    OP_USE_LINK,     /* the passed link leads to the client's area (arg bytes):
                        SEND "over the passed link" over it, read the area,
                        write its bytes reversed back; value = hash of what was read */
    OP_FILL,         /* fill arg bytes of the area with pattern seed arg2; value = their hash */
    OP_HASH,         /* value = hash of arg bytes of the area */
    OP_DROP,         /* destroy the reply link unanswered */
    OP_EXIT,         /* answer, then end */
};

struct request {
    uint32_t op;
    uint32_t reserved;
    uint64_t arg, arg2;
    uint8_t  data[];
};

struct answer {
    int64_t  status;
    uint64_t value, arg;
};

#define AREA_SIZE (1u << 20)
static uint8_t area[AREA_SIZE] __attribute__((aligned(4096)));
static uint8_t mine[AREA_SIZE] __attribute__((aligned(4096)));
static uint8_t message[DM_MSG_MAX];
static void fill(uint8_t *p, uint32_t n, uint64_t seed)
{
    uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (uint32_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint8_t)(x >> 56);
    }
}

/* ---- the server ---- */

static void answer(long reply, int64_t status, uint64_t value, uint64_t arg, long pass)
{
    struct answer a = { status, value, arg };
    dm_send(reply, &a, sizeof a, pass);
}

/* nettest serve NAME: answer the client's requests for ever. Long on
 * purpose: a switch with one case per request (enum op). */
static int serve(const char *name)
{
    long me = dm_createlink(0, 0, 0, 0, 0);
    if (me < 0 || sb_register(name, me) < 0) {
        printf("nettest serve %s: cannot register\n", name);
        return 1;
    }
    uint64_t expected = 0, received = 0, in_order = 1;
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < (long)sizeof(struct request))
            continue;
        struct request *q = (struct request *)message;
        long reply = info.reply;
        switch (q->op) {
        case OP_ECHO:
            dm_send(reply, q->data, (uint32_t)n - sizeof *q, DM_NO_LINK);
            break;
        case OP_SEQUENCE: {
            static uint8_t want[DM_MSG_MAX];
            uint32_t len = (uint32_t)n - sizeof *q;
            fill(want, len, q->arg);
            in_order &= q->arg == expected && memcmp(want, q->data, len) == 0;
            expected = q->arg + 1;
            received++;
            break;
        }
        case OP_COUNT:
            answer(reply, 0, received, in_order, DM_NO_LINK);
            break;
        case OP_AREA: {
            long l = dm_createlink(1, 0, LINK_READ | LINK_WRITE, area, AREA_SIZE);
            answer(reply, l < 0 ? l : 0, AREA_SIZE, 0, l < 0 ? DM_NO_LINK : l);
            break;
        }
        case OP_USE_LINK: {
            long l = info.link;
            uint32_t len = (uint32_t)q->arg;
            long err = l < 0 ? E_EMPTYSLOT : len > AREA_SIZE ? E_TOOBIG : 0;
            static const char words[] = "over the passed link";
            if (!err)
                err = dm_send(l, words, sizeof words, DM_NO_LINK);
            if (!err)
                err = dm_movedata(DM_SELF, (uint64_t)area, l, 0, len);
            uint64_t hash = dm_fnv1a(area, len);
            for (uint32_t i = 0; err >= 0 && i < len / 2; i++) {
                uint8_t t = area[i];
                area[i] = area[len - 1 - i];
                area[len - 1 - i] = t;
            }
            if (err >= 0)
                err = dm_movedata(l, 0, DM_SELF, (uint64_t)area, len);
            if (l >= 0)
                dm_destroylink(l);
            answer(reply, err < 0 ? err : 0, hash, 0, DM_NO_LINK);
            break;
        }
        case OP_FILL:
            fill(area, (uint32_t)q->arg, q->arg2);
            answer(reply, 0, dm_fnv1a(area, (uint32_t)q->arg), 0, DM_NO_LINK);
            break;
        case OP_HASH:
            answer(reply, 0, dm_fnv1a(area, (uint32_t)q->arg), 0, DM_NO_LINK);
            break;
        case OP_DROP:
            dm_destroylink(reply);
            break;
        case OP_EXIT:
            answer(reply, 0, 0, 0, DM_NO_LINK);
            return 0;
        default:
            if (reply >= 0)
                answer(reply, E_NOSYS, 0, 0, DM_NO_LINK);
        }
        if (info.link >= 0 && q->op != OP_USE_LINK)
            dm_destroylink(info.link);
    }
}

/* ---- the client ---- */

/* A CALL with a request; the answer in *a. Returns the CALL's result. */
static long ask(long server, uint32_t op, uint64_t arg, uint64_t arg2, long pass, struct answer *a)
{
    struct request q = { .op = op, .arg = arg, .arg2 = arg2 };
    struct dm_msg_info info;
    long n = dm_call(server, &q, sizeof q, pass, a, sizeof *a, &info);
    if (n >= 0 && a->status < 0)
        return a->status;
    if (n >= 0 && info.link >= 0)
        return info.link;
    return n < 0 ? n : 0;
}

/* Start a server on `machine`, registered as nettest.<this pid>.<role> (a
 * name of this run's own: an earlier run's may linger), and find its link. */
static long start_server(int machine, const char *role, dm_pid *pid)
{
    char name[48], id[24];
    snprintf(name, sizeof name, "nettest.%s.%s", dm_pid_string(dm_self(), id), role);
    char *argv[] = { "nettest", "serve", name, 0 };
    long p = pm_run_on(machine, "nettest", 3, argv, 0);
    if (p < 0)
        return p;
    *pid = (dm_pid)p;
    return sb_lookup_wait(name, 20000000000ull);
}

/* start_server for the modes that need one (stress, hold, reach): says
 * "nettest ROLE: no server on machine K: why" when there is none. */
static long start_server_or_say(int machine, const char *role, dm_pid *pid)
{
    long server = start_server(machine, role, pid);
    if (server < 0)
        printf("nettest %s: no server on machine %d: %s\n", role, machine, dm_error_name(server));
    return server;
}

static void check_echo(long server, const char *where)
{
    static const uint32_t sizes[] = { 0, 1, 10, 100, 1000, 4000 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t len = sizes[i];
        struct request *q = (struct request *)message;
        q->op = OP_ECHO;
        fill(q->data, len, len);
        static uint8_t back[DM_MSG_MAX];
        struct dm_msg_info info;
        long n = dm_call(server, q, sizeof *q + len, DM_NO_LINK, back, sizeof back, &info);
        char name[64];
        snprintf(name, sizeof name, "%s.call_%u_bytes", where, len);
        dm_check(n == (long)len && memcmp(back, q->data, len) == 0 && !(info.flags & DM_MSG_FROM_KERNEL), name,
               "answer of %ld bytes (%s)", n, n < 0 ? dm_error_name(n) : "wrong bytes?");
    }
}

static void check_sequence(long server, const char *where, int count)
{
    long err = 0;
    for (int i = 0; i < count && err >= 0; i++) {
        struct request q = { .op = OP_SEQUENCE, .arg = (uint64_t)i };
        err = dm_send(server, &q, sizeof q, DM_NO_LINK);
    }
    struct answer a;
    long got = err < 0 ? err : ask(server, OP_COUNT, 0, 0, DM_NO_LINK, &a);
    char name[64];
    snprintf(name, sizeof name, "%s.send_%d_in_order", where, count);
    dm_check(got >= 0 && a.value == (uint64_t)count && a.arg == 1, name, "%s; %lu received, in order: %lu",
           got < 0 ? dm_error_name(got) : "answered", got < 0 ? 0 : a.value, got < 0 ? 0 : a.arg);
}

/* Pass a link to our own area: the server sends over it and moves data
 * through it in both directions. */
static void check_link_passing(long server, const char *where)
{
    const uint32_t len = 200000;
    fill(mine, len, 77);
    uint64_t hash = dm_fnv1a(mine, len);
    long l = dm_createlink(5, 1234, LINK_READ | LINK_WRITE, mine, len);
    struct answer a;
    long err = l < 0 ? l : ask(server, OP_USE_LINK, len, 0, l, &a);
    char name[64];
    snprintf(name, sizeof name, "%s.passed_link_moves_data", where);
    /* The server wrote our bytes back reversed: check by reversing again. */
    for (uint32_t i = 0; i < len / 2; i++) {
        uint8_t t = mine[i];
        mine[i] = mine[len - 1 - i];
        mine[len - 1 - i] = t;
    }
    int reversed = dm_fnv1a(mine, len) == hash;
    dm_check(err >= 0 && a.value == hash && reversed, name, "%s; server read hash %lx (want %lx); written back %s",
           err < 0 ? dm_error_name(err) : "answered", err < 0 ? 0 : a.value, hash, reversed ? "right" : "wrong");
    struct dm_msg_info info;
    static char words[64];
    long n = dm_areceive(&info, words, sizeof words, 5);
    snprintf(name, sizeof name, "%s.send_over_passed_link", where);
    dm_check(n > 0 && strcmp(words, "over the passed link") == 0 && info.code == 1234 && info.channel == 5, name,
           "got %ld (%s), code %lu", n, n < 0 ? dm_error_name(n) : words, n < 0 ? 0 : info.code);
}

/* MOVEDATA into and out of a server's area from here. */
static void check_movedata(long server, long server_area, const char *where)
{
    const uint32_t len = AREA_SIZE;
    fill(mine, len, 5);
    uint64_t hash = dm_fnv1a(mine, len);
    long moved = dm_movedata(server_area, 0, DM_SELF, (uint64_t)mine, len);
    struct answer a;
    long err = ask(server, OP_HASH, len, 0, DM_NO_LINK, &a);
    char name[64];
    snprintf(name, sizeof name, "%s.movedata_1MiB_there", where);
    dm_check(moved == (long)len && err >= 0 && a.value == hash, name, "moved %ld (%s), hash there %lx want %lx",
           moved, moved < 0 ? dm_error_name(moved) : "", err < 0 ? 0 : a.value, hash);
    memset(mine, 0, len);
    moved = dm_movedata(DM_SELF, (uint64_t)mine, server_area, 0, len);
    snprintf(name, sizeof name, "%s.movedata_1MiB_back", where);
    dm_check(moved == (long)len && dm_fnv1a(mine, len) == hash, name, "moved %ld (%s)", moved,
           moved < 0 ? dm_error_name(moved) : "bytes differ");
    moved = dm_movedata(DM_SELF, (uint64_t)mine, server_area, 1000, 777);
    snprintf(name, sizeof name, "%s.movedata_odd_offset", where);
    fill(area, len, 5);            /* what the server's area holds */
    dm_check(moved == 777 && memcmp(mine, area + 1000, 777) == 0, name, "moved %ld", moved);
    moved = dm_movedata(DM_SELF, (uint64_t)mine, server_area, AREA_SIZE - 10, 11);
    snprintf(name, sizeof name, "%s.movedata_bounds", where);
    dm_check(moved == E_BOUNDS, name, "returned %ld", moved);
}

/* The fault tests' workload: see the top of the file. */
static int stress(int k, int messages, int mib)
{
    dm_pid pid;
    long server = start_server_or_say(k, "stress", &pid);
    if (server < 0)
        return 1;
    uint64_t start = dm_clock_ns();
    int sends = messages / 2, calls = (messages - sends) / 2, bad = 0;
    long err = 0;
    struct request *q = (struct request *)message;
    static uint8_t back[DM_MSG_MAX];
    for (int i = 0, sent = 0, called = 0; err >= 0 && (sent < sends || called < calls); i++) {
        uint32_t len = (uint32_t)(i * 397) % 1500;       /* 0 .. 1499 bytes: one or two frames */
        if (sent * calls <= called * sends && sent < sends) {
            q->op = OP_SEQUENCE;
            q->arg = (uint64_t)sent++;
            fill(q->data, len, q->arg);
            err = dm_send(server, q, sizeof *q + len, DM_NO_LINK);
        } else {
            q->op = OP_ECHO;
            fill(q->data, len, (uint64_t)i);
            struct dm_msg_info info;
            err = dm_call(server, q, sizeof *q + len, DM_NO_LINK, back, sizeof back, &info);
            bad += err >= 0 && (err != (long)len || memcmp(back, q->data, len) != 0);
            called++;
        }
    }
    struct answer a = { 0 };
    long counted = err < 0 ? err : ask(server, OP_COUNT, 0, 0, DM_NO_LINK, &a);
    dm_check(err >= 0 && counted >= 0 && a.value == (uint64_t)sends && a.arg == 1, "stress.sends_in_order_intact",
           "%s; the server has %lu of %d, in order and intact: %lu", dm_error_name(err < 0 ? err : counted),
           a.value, sends, a.arg);
    dm_check(err >= 0 && bad == 0, "stress.calls_answered_intact", "%s; %d answers wrong", dm_error_name(err), bad);
    uint64_t messages_ns = dm_clock_ns() - start;

    long area_link = ask(server, OP_AREA, 0, 0, DM_NO_LINK, &a);
    long moved_ok = area_link >= 0;
    start = dm_clock_ns();
    for (int m = 0; m < mib && moved_ok; m++) {
        fill(mine, AREA_SIZE, 1000 + (uint64_t)m);
        uint64_t hash = dm_fnv1a(mine, AREA_SIZE);
        long there = dm_movedata(area_link, 0, DM_SELF, (uint64_t)mine, AREA_SIZE);
        long asked = ask(server, OP_HASH, AREA_SIZE, 0, DM_NO_LINK, &a);
        memset(mine, 0, AREA_SIZE);
        long back_moved = dm_movedata(DM_SELF, (uint64_t)mine, area_link, 0, AREA_SIZE);
        moved_ok = there == AREA_SIZE && asked >= 0 && a.value == hash && back_moved == AREA_SIZE &&
                   dm_fnv1a(mine, AREA_SIZE) == hash;
        if (!moved_ok)
            printf("nettest stress: MiB %d: moved %ld there (%s), hash there %s, %ld back\n", m, there,
                   dm_error_name(there), asked >= 0 && a.value == hash ? "right" : "wrong", back_moved);
    }
    dm_check(moved_ok, "stress.movedata_intact", "see above");
    uint64_t move_ns = dm_clock_ns() - start;
    ask(server, OP_EXIT, 0, 0, DM_NO_LINK, &a);
    int64_t status;
    pm_wait(pid, &status);
    printf("nettest stress: %d messages in %lu ms, %d MiB there and back in %lu ms\n", sends + 2 * calls,
           (unsigned long)(messages_ns / 1000000), mib, (unsigned long)(move_ns / 1000000));
    return dm_check_summary("nettest");
}

/* The token the ring passes around. */
struct token {
    uint32_t round, hops;      /* round 0xffffffff: the relays end */
    uint8_t  path[256];        /* the machine of each relay it passed */
};
#define TOKEN_STOP 0xffffffffu

/* A relay of the ring: pass every token to the next relay, adding this machine. */
static int relay(const char *prefix, int k, int n)
{
    char name[64], next_name[64];
    snprintf(name, sizeof name, "%s.%d", prefix, k);
    snprintf(next_name, sizeof next_name, "%s.%d", prefix, (k + 1) % n);
    long me = dm_createlink(0, 0, 0, 0, 0);
    if (me < 0 || sb_register(name, me) < 0)
        return 1;
    long next = -1;
    for (;;) {
        struct token t;
        struct dm_msg_info info;
        long got = dm_receive(&info, &t, sizeof t, DM_ANY_CHANNEL);
        if (got != (long)sizeof t)
            continue;
        if (next < 0 && (next = sb_lookup_wait(next_name, 20000000000ull)) < 0) {
            printf("nettest relay %d: no %s: %s\n", k, next_name, dm_error_name(next));
            return 1;
        }
        if (t.round != TOKEN_STOP && t.hops < sizeof t.path)
            t.path[t.hops++] = (uint8_t)dm_machine();
        long err = dm_send(next, &t, sizeof t, DM_NO_LINK);
        if (err < 0)
            printf("nettest relay %d: passing the token on: %s\n", k, dm_error_name(err));
        if (t.round == TOKEN_STOP)
            return 0;
    }
}

/* See the top of the file. */
static int ring(int n, int rounds)
{
    char prefix[48], id[24];
    snprintf(prefix, sizeof prefix, "ring.%s", dm_pid_string(dm_self(), id));
    char home_name[64];
    snprintf(home_name, sizeof home_name, "%s.0", prefix);
    long home = dm_createlink(0, 0, 0, 0, 0);
    if (home < 0 || sb_register(home_name, home) < 0 || n < 2 || n > 255) {
        printf("nettest ring: cannot start (needs 2 to 255 machines)\n");
        return 1;
    }
    for (int k = 1; k < n; k++) {
        char ks[8], ns[8];
        snprintf(ks, sizeof ks, "%d", k);
        snprintf(ns, sizeof ns, "%d", n);
        char *argv[] = { "nettest", "relay", prefix, ks, ns, 0 };
        long pid = pm_run_on(k, "nettest", 5, argv, 0);
        if (pid < 0) {
            printf("nettest ring: no relay on machine %d: %s\n", k, dm_error_name(pid));
            return 1;
        }
    }
    char first[64];
    snprintf(first, sizeof first, "%s.1", prefix);
    long next = sb_lookup_wait(first, 20000000000ull);
    int good = next >= 0;
    uint64_t start = dm_clock_ns();
    for (int r = 0; r < rounds && good; r++) {
        struct token t = { .round = (uint32_t)r };
        long err = dm_send(next, &t, sizeof t, DM_NO_LINK);
        struct dm_msg_info info;
        long got = err < 0 ? err : dm_receive(&info, &t, sizeof t, DM_ANY_CHANNEL);
        good = got == (long)sizeof t && t.round == (uint32_t)r && t.hops == (uint32_t)(n - 1);
        for (int k = 1; good && k < n; k++)
            good = t.path[k - 1] == k;
        if (!good)
            printf("nettest ring: round %d came back wrong (%s, %u hops)\n", r,
                   got < 0 ? dm_error_name(got) : "ok", got < 0 ? 0 : t.hops);
    }
    uint64_t ns = dm_clock_ns() - start;
    struct token stop = { .round = TOKEN_STOP };
    if (next >= 0)
        dm_send(next, &stop, sizeof stop, DM_NO_LINK);
    if (good)
        printf("nettest ring: the token went round %d machines %d times and came back, %lu us a round\n", n,
               rounds, (unsigned long)(ns / 1000 / (rounds ? rounds : 1)));
    return !good;
}

/* See the top of the file. */
static int hold(int k)
{
    char id[24];
    dm_pid pid;
    long server = start_server_or_say(k, "hold", &pid);
    if (server < 0)
        return 1;
    struct answer a;
    long err = ask(server, OP_COUNT, 0, 0, DM_NO_LINK, &a);
    printf("nettest hold: serving on %s\n", dm_pid_string(pid, id));
    uint64_t calls = 1, asked = dm_clock_ns();
    while (err >= 0) {
        timer_sleep_ns(100000000);
        asked = dm_clock_ns();
        err = ask(server, OP_COUNT, 0, 0, DM_NO_LINK, &a);
        calls++;
    }
    printf("nettest hold: call %lu failed: %s after %lu ms\n", (unsigned long)calls, dm_error_name(err),
           (unsigned long)((dm_clock_ns() - asked) / 1000000));
    return 0;
}

/* See the top of the file. */
static int reach(int k)
{
    char id[24];
    dm_pid pid;
    long server = start_server_or_say(k, "reach", &pid);
    if (server < 0)
        return 1;
    printf("nettest reach: calling %s\n", dm_pid_string(pid, id));
    for (int call = 1; call <= 20; call++) {
        struct answer a;
        uint64_t asked = dm_clock_ns();
        long err = ask(server, OP_COUNT, 0, 0, DM_NO_LINK, &a);
        printf("nettest reach: call %d at %lu ms: %s after %lu ms\n", call, (unsigned long)(asked / 1000000),
               err < 0 ? dm_error_name(err) : "answered", (unsigned long)((dm_clock_ns() - asked) / 1000000));
        if (err >= 0)
            return 0;
    }
    return 1;
}

static void check_movedata_between(long ks, long js, long karea, long jarea);
static void check_dead_server(long ks, dm_pid kpid, long karea);

/* One subcommand by its name; without one, the checks against servers on
 * machines K and J (the usage above). */
int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "ring") == 0)
        return ring(atoi(argv[2]), atoi(argv[3]));
    if (argc == 5 && strcmp(argv[1], "relay") == 0)
        return relay(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc == 3 && strcmp(argv[1], "hold") == 0)
        return hold(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "reach") == 0)
        return reach(atoi(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "serve") == 0)
        return serve(argv[2]);
    if (argc == 5 && strcmp(argv[1], "stress") == 0)
        return stress(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    uint32_t nodes = ((const struct dm_info *)DM_INFO_PAGE)->nodes;
    int k = argc > 1 ? atoi(argv[1]) : 1;
    int j = argc > 2 ? atoi(argv[2]) : (nodes > 2 ? 2 : (int)nodes - 1);
    if (nodes < 2) {
        printf("nettest: needs two machines or more (this is one of %u)\n", nodes);
        return 1;
    }
    dm_pid kpid = 0, jpid = 0;
    long ks = start_server(k, "k", &kpid);
    long js = start_server(j, "j", &jpid);
    dm_check(ks >= 0 && PID_MACHINE(kpid) == (uint32_t)k, "start_server_k", "%s", dm_error_name(ks));
    dm_check(js >= 0 && PID_MACHINE(jpid) == (uint32_t)j, "start_server_j", "%s", dm_error_name(js));
    if (ks < 0 || js < 0)
        goto end;

    check_echo(ks, "k");
    check_sequence(ks, "k", 2000);
    check_link_passing(ks, "k");

    struct answer a;
    long karea = ask(ks, OP_AREA, 0, 0, DM_NO_LINK, &a);
    long jarea = ask(js, OP_AREA, 0, 0, DM_NO_LINK, &a);
    dm_check(karea >= 0 && jarea >= 0, "area_links_passed_back", "%s %s", dm_error_name(karea), dm_error_name(jarea));
    if (karea >= 0) {
        check_movedata(ks, karea, "k");
        check_movedata_between(ks, js, karea, jarea);
    }

    long err = ask(ks, OP_DROP, 0, 0, DM_NO_LINK, &a);
    dm_check(err == E_NOREPLY, "dropped_reply_link_gives_E_NOREPLY", "returned %ld (%s)", err, dm_error_name(err));

    long copy = dm_duplicatelink(ks);
    err = copy < 0 ? copy : dm_destroylink(copy);
    dm_check(err == 0, "destroylink_of_a_remote_link", "%s", dm_error_name(err));

    check_dead_server(ks, kpid, karea);
    int64_t status;
    ask(js, OP_EXIT, 0, 0, DM_NO_LINK, &a);
    pm_wait(jpid, &status);
end:
    return dm_check_summary("nettest");
}

/* MOVEDATA with both areas elsewhere: from k's area to j's (on one
 * machine if k == j). */
static void check_movedata_between(long ks, long js, long karea, long jarea)
{
    struct answer a;
    long err = ask(ks, OP_FILL, AREA_SIZE, 99, DM_NO_LINK, &a);
    uint64_t hash = a.value;
    long moved = err < 0 ? err : dm_movedata(jarea, 0, karea, 0, AREA_SIZE);
    err = ask(js, OP_HASH, AREA_SIZE, 0, DM_NO_LINK, &a);
    dm_check(moved == AREA_SIZE && err >= 0 && a.value == hash, "movedata_between_two_other_machines",
           "moved %ld (%s)", moved, moved < 0 ? dm_error_name(moved) : "hash differs");
}

/* Server k (link ks, its area karea if it passed one) exits; then a CALL,
 * a SEND and a MOVEDATA to it give E_DEAD. */
static void check_dead_server(long ks, dm_pid kpid, long karea)
{
    struct answer a;
    long err = ask(ks, OP_EXIT, 0, 0, DM_NO_LINK, &a);
    int64_t status = -1;
    long w = pm_wait(kpid, &status);
    dm_check(err >= 0 && w >= 0 && status == 0, "server_exits", "%s, wait %s, status %ld", dm_error_name(err),
           dm_error_name(w), (long)status);
    err = ask(ks, OP_ECHO, 0, 0, DM_NO_LINK, &a);
    dm_check(err == E_DEAD, "call_to_dead_remote_process_gives_E_DEAD", "returned %ld (%s)", err, dm_error_name(err));
    struct request q = { .op = OP_SEQUENCE };
    err = dm_send(ks, &q, sizeof q, DM_NO_LINK);
    dm_check(err == E_DEAD, "send_to_dead_remote_process_gives_E_DEAD", "returned %ld (%s)", err, dm_error_name(err));
    if (karea >= 0) {
        err = dm_movedata(DM_SELF, (uint64_t)mine, karea, 0, 100);
        dm_check(err == E_DEAD, "movedata_from_dead_remote_process_gives_E_DEAD", "returned %ld (%s)", err,
               dm_error_name(err));
    }
}
