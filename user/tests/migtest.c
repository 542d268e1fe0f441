/*
 * migtest — a process to move from machine to machine (tests/test_migrate.py):
 * it keeps memory and registers whose values it knows, and checks them
 * while it is moved about.
 *
 *     migtest ROUNDS PAUSE_MS KIB
 *
 * fills KIB KiB of its heap with a pattern, then ROUNDS times sleeps
 * PAUSE_MS (a CALL to the timer server, which answers it after the pause,
 * wherever this process is then), adds to a floating-point sum, and checks
 * a piece of the memory, noting the machine each round finds it on when
 * that changes. At the end it checks all of its memory and the sum, and
 * says where it ran:
 *     migtest PID: ROUNDS rounds on machines 1 2 0 1, memory and registers intact
 * or says what was wrong (exit status 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"

static uint64_t pattern(uint64_t i)
{
    return (i + 1) * 0x9e3779b97f4a7c15ull;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        printf("usage: migtest ROUNDS PAUSE_MS KIB\n");
        return 2;
    }
    long rounds = atol(argv[1]), pause_ms = atol(argv[2]);
    uint64_t words = (uint64_t)atol(argv[3]) * 1024 / sizeof(uint64_t);
    char id[24];
    dm_pid_string(dm_self(), id);
    uint64_t *memory = malloc(words * sizeof *memory + 1);
    if (!memory) {
        printf("migtest %s: no memory for %s KiB\n", id, argv[3]);
        return 1;
    }
    for (uint64_t i = 0; i < words; i++)
        memory[i] = pattern(i);
    char machines[256];
    int used = snprintf(machines, sizeof machines, "%u", dm_machine());
    uint32_t last = dm_machine();
    double sum = 0;
    int bad = 0;
    for (long r = 0; r < rounds && !bad; r++) {
        if (pause_ms > 0)
            timer_sleep_ns((uint64_t)pause_ms * 1000000ull);
        sum += sqrt((double)r);
        for (uint64_t i = (uint64_t)r % 512; i < words; i += 512)
            bad |= memory[i] != pattern(i);
        if (dm_machine() != last) {
            last = dm_machine();
            if (used < (int)sizeof machines - 8)
                used += snprintf(machines + used, sizeof machines - (size_t)used, " %u", last);
        }
    }
    for (uint64_t i = 0; i < words; i++)
        bad |= memory[i] != pattern(i);
    double expected = 0;
    for (long r = 0; r < rounds; r++)
        expected += sqrt((double)r);
    if (bad || sum != expected) {
        printf("migtest %s: %s changed\n", id, bad ? "its memory" : "its floating-point sum");
        return 1;
    }
    printf("migtest %s: %ld rounds on machines %s, memory and registers intact\n", id, rounds, machines);
    return 0;
}
