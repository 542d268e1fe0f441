/*
 * hello — greets with its process id and machine. With an argument, it then
 * computes for that many seconds of machine time (to watch it in ps).
 */
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"

int main(int argc, char **argv)
{
    char id[24];
    printf("hello from process %s on machine %u\n", dm_pid_string(dm_self(), id), dm_machine());
    if (argc > 1) {
        uint64_t end = dm_clock_ns() + (uint64_t)(atof(argv[1]) * 1e9);
        volatile uint64_t work = 0;
        while (dm_clock_ns() < end)      /* the clock is slow to read under QEMU: rarely */
            for (int i = 0; i < 100000; i++)
                work++;
        printf("hello %s: done\n", id);
    }
    return 0;
}
