/*
 * netbench — this system's delivery-time table (DPM thesis, Fig. 5.11): the
 * time per message for 1, 10, 100 and 1000-byte messages, between two
 * processes on one machine (local) and on two machines (remote), from
 * ping-pong exchanges: a client CALLs an echo server, which answers with as
 * many bytes; an exchange is two messages, so a message takes half an
 * exchange. Prints, per message,
 *     BENCH deliver_local_<size>_us  X us     guest (machine-clock) time
 *     BENCH deliver_remote_<size>_us X us
 *     BENCH deliver_local_1_instr    N instructions   (instret: client,
 *                                    server and kernel; exact under -icount)
 *     BENCH deliver_remote_<size>_instr N instructions (both machines)
 * and around each run the lines
 *     netbench: begin local|remote SIZE MESSAGES
 *     netbench: end local|remote SIZE
 * from which the host (scripts/bench.py) times it by its own clock
 * (BENCH deliver_*_wall_us).
 *
 * Guest time is the machine clock, which under `-icount shift=0,sleep=on`
 * advances one nanosecond per instruction executed and with host time while
 * the machine waits in wfi: a remote exchange includes the other machine's
 * work and the network as the host ran them.
 *
 * A remote message's instructions are those both machines executed over
 * the exchanges, their idle waits left out: each machine's PROCTIMEs added
 * up, the kernel's with them (pm_machine_proctime), before and after.
 * Under -icount instret would count the waits too, which follow the host.
 * The span includes a constant share of the process lists' own requests
 * (machine 1's list is read first before and last after, so that only
 * what machine 1 does for one request on either side of its count falls
 * in it): a few instructions a message over 20,000 messages.
 *
 *     netbench [EXCHANGES [MACHINE]]   default 10000, the remote server on machine 1
 */
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"

static char request[1000], answer[1000];   /* what is sent, and where the echo goes */
static const uint64_t sizes[] = { 1, 10, 100, 1000 };

/* An echo server on `machine` (callbench's: it answers each CALL with as
 * many bytes as it brought, and ends at an empty SEND), and the link to it. */
static long start_server(int machine)
{
    char name[SB_NAME_MAX], id[24];
    snprintf(name, sizeof name, "netbench-%s-%d", dm_pid_string(dm_self(), id), machine);
    char *argv[] = { "callbench", "serve", name, 0 };
    long pid = pm_run_on(machine, "callbench", 3, argv, 0);
    return pid < 0 ? pid : sb_lookup_wait(name, 20000000000ull);
}

/* The instructions `machine` has executed so far, its idle waits left out. */
static uint64_t busy(uint32_t machine)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    uint64_t sum;
    long err = pm_machine_proctime(machine, entries, sizeof entries, &sum);
    if (err < 0) {                 /* no count: no figure rather than a wrong one */
        printf("netbench: machine %u's process list: %s\n", machine, dm_error_name(err));
        exit(1);
    }
    return sum;
}

/* `exchanges` CALLs of `size` bytes each way to `server`, which runs on
 * `machine` (this one for local). */
static void measure(long server, uint32_t machine, uint64_t size, long exchanges)
{
    const char *where = machine == dm_machine() ? "local" : "remote";
    struct dm_msg_info info;
    for (long i = 0; i < exchanges / 10; i++)   /* warm up: translate the code paths */
        dm_call(server, request, size, DM_NO_LINK, answer, sizeof answer, &info);
    printf("netbench: begin %s %llu %ld\n", where, (unsigned long long)size, 2 * exchanges);
    uint64_t there = busy(machine), here = busy(dm_machine());
    uint64_t instret = dm_instret(), clock = dm_clock_ns();
    for (long i = 0; i < exchanges; i++) {
        if (dm_call(server, request, size, DM_NO_LINK, answer, sizeof answer, &info) != (long)size) {
            printf("netbench: %s exchange %ld of %llu bytes failed\n", where, i, (unsigned long long)size);
            exit(1);
        }
    }
    instret = dm_instret() - instret;
    clock = dm_clock_ns() - clock;
    here = busy(dm_machine()) - here;
    there = busy(machine) - there;
    printf("netbench: end %s %llu\n", where, (unsigned long long)size);
    uint64_t messages = 2 * (uint64_t)exchanges;
    printf("BENCH deliver_%s_%llu_us %llu.%02llu us\n", where, (unsigned long long)size,
           (unsigned long long)(clock / messages / 1000), (unsigned long long)(clock / messages % 1000 / 10));
    if (size == 1 && machine == dm_machine())
        printf("BENCH deliver_local_1_instr %llu instructions\n", (unsigned long long)(instret / messages));
    if (machine != dm_machine()) {
        printf("BENCH deliver_remote_%llu_instr %llu instructions\n", (unsigned long long)size,
               (unsigned long long)((here + there + messages / 2) / messages));
        printf("netbench: remote %llu: machine %u %llu.%llu, machine %u %llu.%llu instructions a message\n",
               (unsigned long long)size, dm_machine(), (unsigned long long)(here / messages),
               (unsigned long long)(here * 10 / messages % 10), machine, (unsigned long long)(there / messages),
               (unsigned long long)(there * 10 / messages % 10));
    }
}

int main(int argc, char **argv)
{
    long exchanges = argc > 1 ? atol(argv[1]) : 10000;
    int machine = argc > 2 ? atoi(argv[2]) : 1;
    if (exchanges <= 0 || machine < 0 || (uint32_t)machine == dm_machine()) {
        printf("usage: netbench [EXCHANGES [MACHINE]]  (MACHINE: another machine than this one)\n");
        return 2;
    }
    long local = start_server((int)dm_machine());
    long remote = start_server(machine);
    if (local < 0 || remote < 0) {
        printf("netbench: no %s server: %s\n", local < 0 ? "local" : "remote",
               dm_error_name(local < 0 ? local : remote));
        return 1;
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        measure(local, dm_machine(), sizes[i], exchanges);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        measure(remote, (uint32_t)machine, sizes[i], exchanges);
    dm_send(local, 0, 0, DM_NO_LINK);
    dm_send(remote, 0, 0, DM_NO_LINK);
    return 0;
}
