/*
 * analysis/commands/cmd_generate.c — `dpm generate`: trace logs made by the
 * model of models/simulate.h, from a scenario script (models/scenario.c) or
 * as random traffic among a small file-system-like set of processes, for
 * the analyzer's tests and its benchmark.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "models/scenario.h"

static const char generate_help[] =
"NAME\n"
"    dpm generate - write a trace log from a scenario, or of random traffic\n"
"\n"
"SYNOPSIS\n"
"    dpm generate [--repeat N] [--skew M=NS,...] SCENARIO OUT\n"
"    dpm generate --random N [--seed S] [--skew M=NS,...] OUT\n"
"\n"
"DESCRIPTION\n"
"    Writes OUT, a trace log in this build's record layouts, with meter/'s\n"
"    own log writer, as a filter would: the records the meter of simulated\n"
"    DEMOS/MP processes would write (SEND, MESSAGEQUEUED, RECEIVECALL,\n"
"    RECEIVE, CREATEPROCESS, DESTROYPROCESS, MIGRATE), with message ids\n"
"    matching across them, TIME on each machine's clock and PROCTIME per\n"
"    process.\n"
"    Then prints\n"
"        OUT: N records, L lost\n"
"\n"
"    The model: only `compute` (a process runs: its PROCTIME and its\n"
"    machine's clock advance) and `idle` take time; every other step takes\n"
"    none. A message to a process waiting in a receive is handed to it at\n"
"    once (RECEIVE, no MESSAGEQUEUED); otherwise it is queued\n"
"    (MESSAGEQUEUED) until the process receives it. A message to another\n"
"    machine arrives `delay` ns after it was sent by the sender's clock\n"
"    (the receiver's machine clock moves on to then if it is behind); a\n"
"    process that moves is out of execution for the time its move takes,\n"
"    by the clock of the machine it leaves (the one it reaches moves on\n"
"    to then if it is behind).\n"
"    So queue waits, blocking times and CPU times are exactly the compute\n"
"    and idle steps between the records, and can be worked out by hand.\n"
"\n"
"SCENARIO LANGUAGE\n"
"    One statement per line; '#' starts a comment. Declarations:\n"
"      machine M clock T     machine M's clock starts at T ns (default 0)\n"
"      machine M skew NS     machine M's records carry TIME NS more than its\n"
"                            clock (default 0): a clock that far ahead of\n"
"                            the others, for dpm clocks to find again\n"
"      delay N               messages between machines take N ns (default 0)\n"
"      process A machine M [name PROG] [pid M.S.G] [parent B] [untraced]\n"
"                            [attached PROCTIME]\n"
"                            a process called A on machine M: its\n"
"                            CREATEPROCESS now (PROG its program's name,\n"
"                            the pid by default M.(16+its index).1);\n"
"                            untraced: it takes part but writes no records\n"
"                            (a kernel, a server outside the trace);\n"
"                            attached: metered mid-run, no CREATEPROCESS,\n"
"                            its PROCTIME starts at PROCTIME\n"
"    Steps of a process A:\n"
"      A compute N           A runs N instructions\n"
"      A send B SIZE [channel C]\n"
"                            SEND of SIZE bytes (at most 4096) to B; to an\n"
"                            exited B it fails at once (status -5)\n"
"      A call B SIZE [channel C]\n"
"                            SEND (call=1), then RECEIVECALL (kind 2): A\n"
"                            waits until a message comes (B's reply)\n"
"      A reply SIZE          SEND to the process whose CALL A received last\n"
"      A receive             RECEIVECALL; RECEIVE at once of the first\n"
"                            queued message, or A waits for one\n"
"      A areceive            RECEIVECALL (kind 1); RECEIVE if a message is\n"
"                            queued, else the RECEIVECALL is marked empty\n"
"      A exit [STATUS]       DESTROYPROCESS\n"
"      A skip N              A's next N records are lost: a sequence gap\n"
"      A move M TOOK [bytes B]\n"
"                            A moves to machine M, out of execution TOOK ns\n"
"                            (B bytes of memory moved, default 0); its\n"
"                            MIGRATE record on M, its queued messages with\n"
"                            it; a waiting A goes on waiting there\n"
"    Others:\n"
"      lose N                the log counts N more records lost\n"
"      idle M N              machine M's clock moves on N ns\n"
"      repeat N ... end      the statements between run N times (nestable)\n"
"    A process that waits cannot compute, send or receive (it can move):\n"
"    the scenario is refused with its file and line.\n"
"\n"
"OPTIONS\n"
"    --repeat N   run the whole scenario N times; its declarations (machine,\n"
"                 delay, process) only the first time\n"
"    --random N   instead of a scenario, N records of random traffic: four\n"
"                 servers (ri, dm, bm, di on machines 0, 1, 1, 2, each\n"
"                 serving calls, ri and dm calling bm, bm calling di),\n"
"                 four clients calling and sending to them, and an\n"
"                 untraced kernel on machine 0 that clients send to;\n"
"                 N is at most 10000000 (a log of about 1 GB)\n"
"    --seed S     the random mode's seed (default 1): the same N and S\n"
"                 give the same log\n"
"    --skew M=NS,...\n"
"                 machine M's records carry TIME NS more than its clock, as\n"
"                 `machine M skew NS` does (a scenario's own declaration\n"
"                 wins)\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 a scenario that does not parse or run (FILE:LINE: what),\n"
"    or OUT cannot be written, 2 bad usage.\n"
"\n"
"EXAMPLE\n"
"    A client on machine 0 calls a server on machine 1 that computes 500:\n"
"        process u machine 0 name user\n"
"        process s machine 1 name server\n"
"        s receive\n"
"        u compute 1000\n"
"        u call s 64\n"
"        s compute 500\n"
"        s reply 16\n"
"    dpm generate call.scenario call.log && dpm stats call.log\n";

/* ---- random traffic ---- */

/* xorshift64*: a small, good, deterministic generator. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545f4914f6cdd1dull;
}

/* A random number in [low, high]. */
static uint64_t between(uint64_t *state, uint64_t low, uint64_t high)
{
    return low + next_random(state) % (high - low + 1);
}

/* A message size: mostly small, sometimes a block (as in DPM's file system). */
static uint64_t random_size(uint64_t *state)
{
    return next_random(state) % 4 == 0 ? between(state, 512, 4096) : between(state, 8, 128);
}

enum { KERNEL = 0, FIRST_SERVER = 1, SERVERS = 4, FIRST_CLIENT = 5, CLIENTS = 4 };

/* The random processes: an untraced kernel, four servers, four clients. */
static void random_processes(struct simulation *s)
{
    static const char *servers[SERVERS] = { "ri", "dm", "bm", "di" };
    static const uint32_t server_machine[SERVERS] = { 0, 1, 1, 2 };
    sim_process(s, "kernel", 0, "", 1, 0, 0, 0, 0);             /* pid 0.0.1 */
    for (int i = 0; i < SERVERS; i++)
        sim_process(s, servers[i], server_machine[i], servers[i], 0, 0, 1, 0, 0);
    for (int i = 0; i < CLIENTS; i++) {
        char name[8];
        snprintf(name, sizeof name, "user%d", i);
        sim_process(s, name, (uint32_t)i % 3, "user", 0, 0, 1, 0, 0);
    }
}

/* One step of server i: answer its caller (sometimes asking a server
 * below it first), or receive. */
static void server_step(struct simulation *s, int i, uint64_t *state)
{
    const struct sim_process *p = &s->processes[i];
    static const int below[SERVERS] = { 3, 3, 4, 0 };     /* ri, dm -> bm; bm -> di */
    int lower = below[i - FIRST_SERVER];
    if (p->caller >= 0 && lower && p->caller != FIRST_SERVER + lower - 1 && next_random(state) % 3 == 0) {
        sim_compute(s, i, between(state, 100, 2000));
        sim_send(s, i, FIRST_SERVER + lower - 1, random_size(state), 0, 1);
    } else if (p->caller >= 0) {
        sim_compute(s, i, between(state, 200, 5000));
        sim_reply(s, i, random_size(state));
    } else {
        sim_receive(s, i, 0);
    }
}

/* One step of client i: compute, then call a server, send to one, or send to the kernel. */
static void client_step(struct simulation *s, int i, uint64_t *state)
{
    sim_compute(s, i, between(state, 500, 20000));
    int server = FIRST_SERVER + (int)(next_random(state) % SERVERS), choice = (int)(next_random(state) % 10);
    if (choice < 7)
        sim_send(s, i, server, random_size(state), 0, 1);
    else if (choice < 9)
        sim_send(s, i, server, random_size(state), 1, 0);
    else
        sim_send(s, i, KERNEL, between(state, 8, 64), 0, 0);
}

/* Random steps of random runnable processes until `records` are written. */
static int random_traffic(struct simulation *s, uint64_t records, uint64_t seed)
{
    uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
    s->limit = records;
    random_processes(s);
    while (s->records < records && !s->error[0]) {
        int n = (int)s->nprocesses, i = (int)(next_random(&state) % (uint64_t)n);
        while (s->processes[i].wait != SIM_RUNNING)
            i = (i + 1) % n;                        /* servers always get their messages: someone runs */
        s->pc = 0x20000 + 0x100 * (uint64_t)i;
        if (i == KERNEL && s->processes[i].queue_count)
            sim_receive(s, i, 0);
        else if (i >= FIRST_SERVER && i < FIRST_CLIENT)
            server_step(s, i, &state);
        else if (i >= FIRST_CLIENT)
            client_step(s, i, &state);
    }
    return s->error[0] ? -1 : 0;
}

/* ---- the command ---- */

/* A whole small text file; exits naming it if it cannot be read. */
static char *read_scenario(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        dpm_fail("%s: %s", path, strerror(errno));
    size_t capacity = 4096, n = 0, got;
    char *text = malloc(capacity);
    while (text && (got = fread(text + n, 1, capacity - n, f)) > 0) {
        n += got;
        if (n == capacity)
            text = realloc(text, capacity *= 2);
    }
    if (!text || ferror(f))
        dpm_fail("%s: cannot be read", path);
    fclose(f);
    *len = n;
    return text;
}

/* The log's identity: made from what it holds (the scenario, the skews
 * and its numbers), so that two different logs written over each other on
 * one disk are told apart, and one command always writes the same log. */
static uint32_t log_id(const char *text, size_t len, const char *skews, uint64_t number, uint64_t seed)
{
    uint32_t h = 2166136261u;                      /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)text[i]) * 16777619u;
    for (; skews && *skews; skews++)
        h = (h ^ (uint8_t)*skews) * 16777619u;
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint8_t)(number >> (8 * i)) ^ (uint8_t)(seed >> (8 * i))) * 16777619u;
    return h;
}

/* The most records --random writes: about 1 GB of log (a record and its
 * entry take about 100 bytes), ten times what the benchmarks read. */
#define RANDOM_RECORDS_MAX 10000000ull

/* --skew M=NS,...: each machine's skew into skew[]; a usage error if it does not parse. */
static void skew_option(const char *value, uint64_t *skew)
{
    const char *at = value;
    while (*at) {
        char *end;
        errno = 0;
        unsigned long long machine = strtoull(at, &end, 10), ns = 0;
        int ok = !errno && end != at && *end == '=' && machine < SIM_MACHINES && at[0] != '-';
        if (ok) {
            at = end + 1;
            ns = strtoull(at, &end, 10);
            ok = !errno && end != at && (*end == ',' || *end == 0) && at[0] != '-';
        }
        if (!ok)
            dpm_usage("generate", "--skew %s: expected MACHINE=NS,... (machines 0 to %d)", value, SIM_MACHINES - 1);
        skew[machine] = ns;
        at = *end ? end + 1 : end;
    }
}

/* A whole positive number option, or a usage error. */
static uint64_t count_option(const char *name, const char *value)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(value, &end, 10);
    if (errno || end == value || *end || value[0] == '-')
        dpm_usage("generate", "%s takes a whole number, not '%s'", name, value);
    return n;
}

int cmd_generate(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, generate_help))
        return DPM_OK;
    uint64_t repeat = 1, records = 0, seed = 1, skew[SIM_MACHINES] = { 0 };
    const char *skews = 0;
    int random = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (i + 1 == argc)
            dpm_usage("generate", "%s needs a value", argv[i]);
        if (strcmp(argv[i], "--repeat") == 0)
            repeat = count_option("--repeat", argv[++i]);
        else if (strcmp(argv[i], "--random") == 0) {
            random = 1, records = count_option("--random", argv[++i]);
            if (records < 1 || records > RANDOM_RECORDS_MAX)
                dpm_usage("generate", "--random N must be from 1 to %llu, not %s", RANDOM_RECORDS_MAX, argv[i]);
        } else if (strcmp(argv[i], "--seed") == 0)
            seed = count_option("--seed", argv[++i]);
        else if (strcmp(argv[i], "--skew") == 0)
            skew_option(skews = argv[++i], skew);
        else
            dpm_usage("generate", "unknown option '%s'", argv[i]);
    }
    if (argc - i != (random ? 1 : 2))
        dpm_usage("generate", "dpm generate [--repeat N] [--skew M=NS,...] SCENARIO OUT, or dpm generate --random N "
                              "[--seed S] [--skew M=NS,...] OUT");
    const char *out = argv[argc - 1];
    struct dpm_error refused;
    if (dpm_output_check(out, &refused) != 0)
        dpm_fail("%s", refused.text);
    size_t len = 0;
    char *text = random ? 0 : read_scenario(argv[i], &len);
    static struct simulation s;
    struct dpm_error e;
    if (sim_begin(&s, out, log_id(text, len, skews, random ? records : repeat, seed)) != 0)
        dpm_fail("%s: %s", out, s.error);
    memcpy(s.skew, skew, sizeof s.skew);
    int status;
    if (random) {
        status = random_traffic(&s, records, seed);
        dpm_error_set(&e, "%s: %s", out, s.error);
    } else {
        status = scenario_run(&s, argv[i], text, len, repeat, &e);
    }
    free(text);
    if (status == 0 && sim_end(&s) != 0)
        dpm_fail("%s: %s", out, s.error);
    sim_free(&s);
    if (status != 0) {
        remove(out);
        dpm_fail("%s", e.text);
    }
    printf("%s: %" PRIu64 " records, %" PRIu64 " lost\n", out, s.records, s.writer.lost);
    return DPM_OK;
}
