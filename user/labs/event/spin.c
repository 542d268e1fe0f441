/*
 * spin — the workload of the event lab (docs/labs/event.md): processes
 * that only compute, all at once on one machine, so that the scheduler
 * must preempt them.
 *
 *   spin N MILLIONS    N processes (this one and N - 1 children it starts)
 *                      each execute MILLIONS million instructions of their
 *                      own, counted by their PROCTIME (the info page: no
 *                      kernel call), then end
 *
 * prints, once every child has ended,
 *
 *   spin: 3 processes (0.11.1 0.12.1 0.13.1), 50 million instructions each
 *
 * the first pid its own. Metered, its children are metered as it is
 * (docs/metering.md). Exit status 0, 1 if a child could not be started
 * or failed, 2 for a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

#define MOST 16

/* Compute until this process has executed `instructions` more of its own. */
static void compute(uint64_t instructions)
{
    uint64_t end = dm_proctime() + instructions;
    volatile uint64_t work = 0;
    while (dm_proctime() < end)
        for (int i = 0; i < 1000; i++)
            work++;
}

int main(int argc, char **argv)
{
    long n = argc == 3 ? atol(argv[1]) : 0, millions = argc == 3 ? atol(argv[2]) : 0;
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        compute((uint64_t)millions * 1000000);
        return 0;
    }
    if (n < 1 || n > MOST || millions < 1) {
        printf("usage: spin N MILLIONS (N from 1 to %d processes, each MILLIONS million instructions)\n", MOST);
        return 2;
    }
    long children[MOST];
    char pids[MOST * 24] = "", id[24];
    strcat(pids, dm_pid_string(dm_self(), id));
    for (long i = 1; i < n; i++) {
        char *child_argv[] = { "spin", "child", argv[2], 0 };
        if ((children[i] = pm_run("spin", 3, child_argv)) < 0) {
            printf("spin: cannot start a child: %s\n", dm_error_name(children[i]));
            return 1;
        }
        strcat(strcat(pids, " "), dm_pid_string((dm_pid)children[i], id));
    }
    compute((uint64_t)millions * 1000000);
    int ok = 1;
    for (long i = 1; i < n; i++) {
        int64_t status = 1;
        pm_wait((dm_pid)children[i], &status);
        ok &= status == 0;
    }
    printf("spin: %ld processes (%s), %ld million instructions each\n", n, pids, millions);
    return ok ? 0 : 1;
}
