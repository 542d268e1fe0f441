/*
 * analysis/load/pids.c — pids as text (load/event.h): "M.S.G" as the guest
 * shows them, and a process's label, its program's name before it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "load/event.h"

const char *dpm_pid_string(uint64_t pid, char out[24])
{
    snprintf(out, 24, "%" PRIu32 ".%" PRIu32 ".%" PRIu32, DPM_PID_MACHINE(pid), DPM_PID_SLOT(pid), DPM_PID_GEN(pid));
    return out;
}

const char *dpm_label(const char *name, uint64_t pid, char *out, size_t cap)
{
    char id[24];
    dpm_pid_string(pid, id);
    if (name[0])
        snprintf(out, cap, "%s %s", name, id);
    else if (DPM_PID_SLOT(pid) == 0)
        snprintf(out, cap, "kernel %s", id);   /* slot 0 of every machine (kernel/demos.h) */
    else
        snprintf(out, cap, "%s", id);
    return out;
}
