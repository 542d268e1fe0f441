/*
 * callbench — the local CALL round trip: a client CALLs a server that
 * answers at once, with 8 and with 1000 bytes each way. Prints, per round
 * trip, the guest instructions executed on the machine (instret: client,
 * server and kernel together; exact under -icount) and the machine-clock
 * nanoseconds:
 *     BENCH call_rtt_8_instr N instructions   (and _1000_, and _ns)
 * and the client's and the server's PROCTIME per round trip (the server's
 * from the process manager, while it waits in RECEIVE), which
 * scripts/bench.py compares metered and unmetered:
 *     callbench: 8 bytes: PROCTIME a round trip: client N.NN, server M.MM
 * No floating point: a process that has used the FP registers costs the
 * kernel a few instructions more at each switch into it (kernel/fpu.c).
 *
 *     callbench [ROUNDS]      default 20000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

static char request[1000], answer[1000];

/* The server: answer each CALL with as many bytes as it brought. */
static int serve(const char *name)
{
    sb_register(name, dm_createlink(0, 0, 0, 0, 0));
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, request, sizeof request, DM_ANY_CHANNEL);
        if (n < 0 || info.reply < 0)
            return n == 0 ? 0 : 1;    /* an empty SEND ends the server */
        dm_send(info.reply, answer, (uint64_t)n, DM_NO_LINK);
    }
}

/* The server's PROCTIME; exits when the process manager cannot say. */
static uint64_t server_proctime(dm_pid pid)
{
    uint64_t proctime;
    long err = pm_proctime(pid, &proctime);
    if (err < 0) {
        printf("callbench: the server's PROCTIME: %s\n", dm_error_name(err));
        exit(1);
    }
    return proctime;
}

/* `rounds` round trips of `size` bytes, after 1000 to warm up. */
static void measure(long server, dm_pid server_pid, uint64_t size, long rounds)
{
    struct dm_msg_info info;
    for (long i = 0; i < 1000; i++)   /* warm up: translate the code paths */
        dm_call(server, request, size, DM_NO_LINK, answer, sizeof answer, &info);
    uint64_t server_time = server_proctime(server_pid), client_time = dm_proctime();
    uint64_t instret = dm_instret(), clock = dm_clock_ns();
    for (long i = 0; i < rounds; i++) {
        if (dm_call(server, request, size, DM_NO_LINK, answer, sizeof answer, &info) != (long)size) {
            printf("callbench: round %ld failed\n", i);
            exit(1);
        }
    }
    instret = dm_instret() - instret;
    clock = dm_clock_ns() - clock;
    client_time = dm_proctime() - client_time;
    printf("BENCH call_rtt_%llu_instr %llu instructions\n", (unsigned long long)size,
           (unsigned long long)(instret / rounds));
    printf("BENCH call_rtt_%llu_ns %llu ns\n", (unsigned long long)size, (unsigned long long)(clock / rounds));
    server_time = server_proctime(server_pid) - server_time;
    printf("callbench: %llu bytes: PROCTIME a round trip: client %llu.%02llu, server %llu.%02llu\n",
           (unsigned long long)size, (unsigned long long)(client_time / rounds),
           (unsigned long long)(client_time * 100 / rounds % 100), (unsigned long long)(server_time / rounds),
           (unsigned long long)(server_time * 100 / rounds % 100));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "serve") == 0)
        return serve(argv[2]);
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, "callbench-%u", PID_SLOT(dm_self()));
    char *server_argv[] = { "callbench", "serve", name, 0 };
    long pid = pm_run("callbench", 3, server_argv);
    long server = pid < 0 ? pid : sb_lookup_wait(name, 5000000000ull);
    if (server < 0) {
        printf("callbench: no server: %s\n", dm_error_name(server));
        return 1;
    }
    measure(server, (dm_pid)pid, 8, rounds);
    measure(server, (dm_pid)pid, 1000, rounds);
    dm_send(server, "", 0, DM_NO_LINK);
    int64_t status;
    pm_wait((dm_pid)pid, &status);
    return 0;
}
