/*
 * ping — one half of the ping-pong pair: starts a pong, finds it through
 * the switchboard, and exchanges ROUNDS (default 10) CALLs with it, checking
 * every answer; with PAUSE_MS, it waits that long between rounds (a long
 * exchange for the tests of migration to move either side of).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 10;
    long pause_ms = argc > 2 ? atol(argv[2]) : 0;
    char name[SB_NAME_MAX], id[24];
    snprintf(name, sizeof name, "pong-%u", PID_SLOT(dm_self()));
    char *pong_argv[] = { "pong", name, 0 };
    long pid = pm_run("pong", 2, pong_argv);
    if (pid < 0) {
        printf("ping: cannot start pong: %s\n", dm_error_name(pid));
        return 1;
    }
    long pong = sb_lookup_wait(name, 5000000000ull);
    if (pong < 0) {
        printf("ping: pong never registered: %s\n", dm_error_name(pong));
        return 1;
    }
    for (long i = 0; i < rounds; i++) {
        char out[32], in[32], want[32];
        struct dm_msg_info info;
        int n = snprintf(out, sizeof out, "ping %ld", i);
        snprintf(want, sizeof want, "pong %ld", i);
        long got = dm_call(pong, out, (uint64_t)n + 1, DM_NO_LINK, in, sizeof in, &info);
        if (got < 0 || strcmp(in, want) != 0) {
            printf("ping: round %ld went wrong (%s)\n", i, got < 0 ? dm_error_name(got) : in);
            return 1;
        }
        if (pause_ms > 0)
            timer_sleep_ns((uint64_t)pause_ms * 1000000ull);
    }
    dm_send(pong, "quit", 5, DM_NO_LINK);
    int64_t status;
    pm_wait((dm_pid)pid, &status);
    printf("ping: %ld round trips with pong %s, all answered\n", rounds, dm_pid_string((dm_pid)pid, id));
    return 0;
}
