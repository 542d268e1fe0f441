/*
 * migbench — what moving a process costs, and what a message forwarded
 * through a forwarding address costs (docs/migration.md), on a cluster of
 * three machines: this program on machine 0, the processes it moves on
 * machines 1 and 2. Prints
 *     BENCH migrate_<size>_us    X us            guest time of one move, on this machine's clock:
 *                                               from PM_MIGRATE to its answer (the move is over)
 *     BENCH migrate_<size>_instr N instructions  what the three machines execute for one move
 *     BENCH forward_extra_instr  N instructions  a CALL whose request is forwarded once, less a
 *                                               direct one
 * for a process with a heap of 64 KiB, 1 MiB and 8 MiB (<size> 64k, 1m, 8m),
 * and a line per size saying how much memory it has in all.
 *
 * The moved process is this program too (`migbench hold NAME KIB`): it
 * fills KIB KiB of its heap, registers NAME and answers every CALL with
 * as many bytes as it brought, waiting in RECEIVE between them, so that it
 * is at rest when asked to move and executes nothing while it moves.
 *
 * Instructions are counted as netbench counts them: each machine's
 * PROCTIMEs added up, the kernel's with them (pm_machine_proctime), before
 * and after, so that the idle waits, which instret counts too under
 * -icount, are left out. The lists read before and after are requests
 * too; what they cost is measured in a span with nothing in it and taken
 * off. A move goes between machines 1 and 2, MOVES times back and forth;
 * its count is the three machines' (the process manager's part on this
 * one included). Forwarding: the held process moves, and this machine's
 * kernel still sends to where it was, whose kernel sends the request on and
 * tells this one where the process is (a link update); the next CALL goes
 * straight there. Each of FORWARDS rounds moves it, then counts one CALL
 * (forwarded) and the next (direct); the figure is the median of the
 * differences.
 *
 *     migbench [MOVES [FORWARDS]]    default 4 and 200
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

#define MACHINES 3
static char request[64], answer[64];

/* `migbench hold NAME KIB`: the process that is moved. */
static int hold(const char *name, long kib)
{
    uint64_t words = (uint64_t)kib * 1024 / sizeof(uint64_t);
    uint64_t *memory = malloc(words * sizeof *memory + 1);
    if (!memory) {
        printf("migbench: no memory for %ld KiB\n", kib);
        return 1;
    }
    for (uint64_t i = 0; i < words; i++)
        memory[i] = i * 0x9e3779b97f4a7c15ull;
    sb_register(name, dm_createlink(0, 0, 0, 0, 0));
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, request, sizeof request, DM_ANY_CHANNEL);
        if (n < 0 || info.reply < 0)
            return n == 0 ? 0 : 1;    /* an empty SEND ends it */
        dm_send(info.reply, answer, (uint64_t)n, DM_NO_LINK);
    }
}

static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];

/* The instructions machine m has executed so far, its idle waits left out. */
static uint64_t busy(uint32_t m)
{
    uint64_t sum;
    long err = pm_machine_proctime(m, entries, sizeof entries, &sum);
    if (err < 0) {                 /* no count: no figure rather than a wrong one */
        printf("migbench: machine %u's process list: %s\n", m, dm_error_name(err));
        exit(1);
    }
    return sum;
}

/* The bytes of user memory process pid has, from the process list (0 if
 * it is not there). */
static uint64_t memory_of(dm_pid pid)
{
    int64_t cursor = 0;
    long n;
    while ((n = pm_ps_page(&cursor, entries, sizeof entries)) > 0)
        for (long i = 0; i < n; i++)
            if (entries[i].pid == pid)
                return entries[i].memory;
    return 0;
}

/* A span's count: every machine's list read before (the last first) and
 * after (the first first), so that what each does for the list requests
 * on either side of its own count is the same in every span. */
struct span {
    uint64_t before[MACHINES];
};

static void span_begin(struct span *s)
{
    for (int m = MACHINES - 1; m >= 0; m--)
        s->before[m] = busy((uint32_t)m);
}

static uint64_t span_end(const struct span *s)
{
    uint64_t sum = 0;
    for (int m = 0; m < MACHINES; m++)
        sum += busy((uint32_t)m) - s->before[m];
    return sum;
}

/* What the list requests of a span cost: a span with nothing in it, the
 * least of several (a timer's tick may fall into one). */
static uint64_t empty_span(void)
{
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        struct span s;
        span_begin(&s);
        uint64_t n = span_end(&s);
        least = n < least ? n : least;
    }
    return least;
}

/* Start `migbench hold NAME KIB` on machine 1: its pid, and the link to it in *link. */
static long start_held(const char *tag, long kib, long *link)
{
    char name[SB_NAME_MAX], id[24], size[24];
    snprintf(name, sizeof name, "migbench-%s-%s", dm_pid_string(dm_self(), id), tag);
    snprintf(size, sizeof size, "%ld", kib);
    char *argv[] = { "migbench", "hold", name, size, 0 };
    long pid = pm_run_on(1, "migbench", 4, argv, 0);
    *link = pid < 0 ? pid : sb_lookup_wait(name, 20000000000ull);
    if (pid < 0 || *link < 0) {
        printf("migbench: no process to move: %s\n", dm_error_name(pid < 0 ? pid : *link));
        exit(1);
    }
    return pid;
}

static void call(long link, const char *what)
{
    struct dm_msg_info info;
    if (dm_call(link, request, sizeof request, DM_NO_LINK, answer, sizeof answer, &info) != (long)sizeof request) {
        printf("migbench: %s CALL failed\n", what);
        exit(1);
    }
}

static void move(long pid, int machine)
{
    long err = pm_migrate((dm_pid)pid, machine);
    if (err < 0) {
        printf("migbench: moving the process to machine %d: %s\n", machine, dm_error_name(err));
        exit(1);
    }
}

static void stop_held(long pid, long link)
{
    int64_t status;
    dm_send(link, "", 0, DM_NO_LINK);
    pm_wait((dm_pid)pid, &status);
    dm_destroylink(link);
}

/* `moves` moves of a process with a heap of `kib` KiB, between machines 1 and 2. */
static void measure_moves(const char *tag, long kib, long moves, uint64_t overhead)
{
    long link;
    long pid = start_held(tag, kib, &link);
    call(link, "a first");
    uint64_t memory = memory_of((dm_pid)pid);
    struct span s;
    uint64_t guest = 0;
    span_begin(&s);
    for (long i = 0; i < moves; i++) {
        uint64_t clock = dm_clock_ns();
        move(pid, i % 2 ? 1 : 2);
        guest += dm_clock_ns() - clock;
    }
    uint64_t instructions = span_end(&s);
    instructions = instructions > overhead ? instructions - overhead : 0;
    printf("migbench: a process of %llu KiB (a heap of %ld KiB), moved %ld times between machines 1 and 2\n",
           (unsigned long long)(memory / 1024), kib, moves);
    printf("BENCH migrate_%s_us %llu.%02llu us\n", tag, (unsigned long long)(guest / moves / 1000),
           (unsigned long long)(guest / moves % 1000 / 10));
    printf("BENCH migrate_%s_instr %llu instructions\n", tag, (unsigned long long)(instructions / moves));
    stop_held(pid, link);
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* `rounds` CALLs forwarded once, each against the direct one after it;
 * the median of the differences (a round into which a timer's tick, or an
 * acknowledgement that found no frame to ride on, fell is off by
 * thousands, either way). */
static void measure_forwarding(long rounds, uint64_t overhead)
{
    long link;
    long pid = start_held("forward", 0, &link);
    int64_t *extra = malloc((size_t)rounds * sizeof *extra);
    if (!extra) {
        printf("migbench: no memory for %ld rounds\n", rounds);
        exit(1);
    }
    call(link, "a first");
    int64_t forwarded = 0, direct = 0;
    for (long i = 0; i < rounds; i++) {
        move(pid, i % 2 ? 1 : 2);
        struct span s;
        span_begin(&s);
        call(link, "a forwarded");
        int64_t one = (int64_t)(span_end(&s) - overhead);
        span_begin(&s);
        call(link, "a direct");
        int64_t other = (int64_t)(span_end(&s) - overhead);
        forwarded += one;
        direct += other;
        extra[i] = one - other;
    }
    qsort(extra, (size_t)rounds, sizeof *extra, by_value);
    printf("migbench: %ld CALLs forwarded once, %lld instructions each; %ld direct, %lld each (means)\n", rounds,
           (long long)(forwarded / rounds), rounds, (long long)(direct / rounds));
    printf("migbench: the differences' quartiles %lld, %lld, %lld\n", (long long)extra[rounds / 4],
           (long long)extra[rounds / 2], (long long)extra[3 * rounds / 4]);
    printf("BENCH forward_extra_instr %lld instructions\n", (long long)extra[rounds / 2]);
    free(extra);
    stop_held(pid, link);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "hold") == 0)
        return hold(argv[2], atol(argv[3]));
    long moves = argc > 1 ? atol(argv[1]) : 4, forwards = argc > 2 ? atol(argv[2]) : 200;
    if (moves <= 0 || forwards <= 0 || dm_machine() != 0) {
        printf("usage: migbench [MOVES [FORWARDS]]  (on machine 0 of three or more)\n");
        return 2;
    }
    uint64_t overhead = empty_span();
    printf("migbench: the process lists of a span cost %llu instructions\n", (unsigned long long)overhead);
    measure_moves("64k", 64, moves, overhead);
    measure_moves("1m", 1024, moves, overhead);
    measure_moves("8m", 8192, moves, overhead);
    measure_forwarding(forwards, overhead);
    return 0;
}
