/*
 * server_protocol.h — the messages the system processes understand: the
 * process manager, the switchboard, the console and timer servers, and the
 * filters. Kept with the user library, which every client links and every
 * server is built on.
 *
 * Every request is a struct sv_request, then data; every answer a struct
 * sv_reply, then data. Requests go by CALL, so the answer comes back over
 * the CALL's reply link. Status values are dm_error codes (kernel/demos.h).
 */
#ifndef PROTOCOL_H
#define PROTOCOL_H

#include <stdint.h>
#include "demos.h"

struct sv_request {
    uint32_t op;
    uint32_t reserved;
    int64_t  arg[3];
    /* data follows */
};

struct sv_reply {
    int64_t status;
    int64_t value;
    /* data follows */
};

#define SV_DATA_MAX (DM_MSG_MAX - sizeof(struct sv_request))

/* The process manager (every process's slot SLOT_PM; the link's code is the
 * caller's own pid, so the process manager knows who asks). */
enum pm_op {
    PM_RUN = 1,   /* arg0 = argc, arg1 = envc, arg2 = machine + 1 (0: the caller's
                     machine); data = program name NUL, argc argument strings then
                     envc environment strings ("NAME=VALUE"), each NUL-ended (argv[0]
                     first). The program is /bin/NAME in the file system (a name
                     holding '/' is a path), else a boot image (machine 0 only).
                     value = the new pid. E_NODE: no such machine, or it is down */
    PM_WAIT,      /* arg0 = pid: answer when it has ended; value = its exit status;
                     E_NODE when it went with its machine, which went down */
    PM_KILL,      /* arg0 = pid */
    PM_STOP,      /* arg0 = pid: suspend */
    PM_RESUME,    /* arg0 = pid */
    PM_PS,        /* arg0 = cursor, PM_PS_CURSOR(machine, slot): the processes of
                     every machine, machine by machine, from there on; data =
                     struct dm_kproc[] (all of one machine); value = entries in
                     this answer, 0 at the end (pm_ps_page) */
    PM_SBRK,      /* arg0 = increment; value = the old break */
    PM_HALT,      /* arg0 = exit code: power every machine off */
    PM_SERVE,     /* data = "switchboard" or "console"; the passed link is how
                     every new process will reach that server (boot only); or
                     data = "fs" from the request interpreter started at boot:
                     the passed link is its halt link, for the final sync */
    PM_READY,     /* a system server started at boot is serving (the process
                     manager starts the next one, and the shell last, only then) */
    PM_NETSTAT,   /* arg0 = machine: what its kernel knows of the others; data =
                     struct dm_kpeer[]; value = entries. E_NODE if it is not up */
    PM_METER_RUN, /* as PM_RUN, the new process metered: data = struct pm_meter,
                     then PM_RUN's data */
    PM_METER,     /* arg0 = pid: meter it as struct pm_meter (data) says, change
                     its flags (filter ""), or stop metering it (flags 0). Allowed
                     to the process that started its metering or an unmetered
                     ancestor of that process; for a process not metered yet,
                     to any process but itself. E_RIGHTS otherwise */
    PM_METER_SYSTEM, /* arg0 = machine: meter every process created there from now
                     on as struct pm_meter (data) says; flags 0: no more */
    PM_FILTER,    /* as PM_RUN, for a filter server: it gets a copy of the trace
                     disk's device link of its machine in slot 3, if the machine
                     has one (E_STATE if another filter has it), unless its
                     options hold -n (it keeps no log) */
    PM_METER_FLUSH, /* data (optional) = a filter's name: the metering into that
                     filter ends first (the system metering into it, and every
                     process metered into it); then every kernel sends its
                     metered processes' batches now; the answer comes when they
                     have been taken (`filter stop` asks first, so that a stopped
                     filter has every record that was on its way: a process's
                     last batches can still be in its kernel's outbox when the
                     process has ended) */
    PM_LIVE,      /* from a filter server started by PM_FILTER: the answer passes
                     a device link to its machine's live trace channel (kernel/
                     dev/virtio_console.c). E_RIGHTS for any other caller, E_NOTFOUND
                     if the machine has none, E_STATE if another filter that
                     still runs has it */
    PM_MIGRATE,   /* arg0 = pid, arg1 = machine: move the process there (it keeps
                     its id, links, messages and metering; docs/migration.md);
                     answered once it runs there, value = the machine. Of the
                     system's processes only the file system's request
                     interpreter, directory and buffer managers move. E_SYSTEM:
                     the switchboard or the shell; E_DEVICE: it holds a device
                     link (among the system's: the process manager, the console
                     and timer servers, the disk interfaces); E_NODE:
                     that machine is not up (or went down during the move: the
                     process stays, or, if it had left, it ended with
                     DM_EXIT_LOST); E_INVAL: it runs there already; E_STATE: it
                     did not come to rest (a SEND, MOVEDATA or its metering did not
                     end) within 10 s, or has not started */
    PM_PROCESS_ENDED = 100,  /* internal: a kernel's exit notice */
};

/* How a process is to be metered (PM_METER_RUN, PM_METER, PM_METER_SYSTEM). */
struct pm_meter {
    uint32_t flags;           /* selection flags: METER_FLAG(type) bits (meter/record.h) */
    uint32_t options;         /* PM_METER_LOSSY, PM_METER_NO_CHILDREN */
    uint32_t max_age_ms;      /* the batches' maximum age; 0: 100 ms */
    uint32_t reserved;
    char     filter[32];      /* the filter's name at the switchboard */
};
#define PM_METER_LOSSY       1   /* drop batches the filter cannot take (counted) rather than wait */
#define PM_METER_NO_CHILDREN 2   /* the processes it creates are not metered */

#define PM_PS_CURSOR(machine, slot) (((int64_t)(machine) << 16) | (slot))
#define PM_MAX_MACHINES 255

/* The switchboard (slot SLOT_SWITCHBOARD): names for links. */
enum sb_op {
    SB_REGISTER = 1,  /* data = name; the passed link is stored under it (replacing;
                         with arg0 = SB_REGISTER_NEW, only if the name is free:
                         E_STATE if it is not) */
    SB_LOOKUP,        /* data = name; the answer passes a copy of the link; value =
                         the process that registered it */
    SB_REMOVE,        /* data = name */
    SB_FORGET,        /* data = a prefix; arg0 = pid: every name beginning with it
                         that pid registered goes (arg1 = 1: that any process of
                         pid's machine registered); value = how many. The process
                         manager sends it when a process ends or its machine is down */
};
#define SB_REGISTER_NEW 1
#define SB_NAME_MAX 32

/* The console server (slot SLOT_CONSOLE). */
enum cons_op {
    CONS_WRITE = 1,   /* data = bytes; value = count written */
    CONS_READ,        /* arg0 = max bytes: answer with one line of input (with its
                         '\n'), or 0 bytes at end of input (Ctrl-D) */
};

/* The timer server (registered as "timer"). */
enum timer_op {
    TIMER_TIME = 1,   /* value = wall-clock ns since 1970; arg in data: machine clock ns */
    TIMER_SLEEP,      /* arg0 = ns: answer after that long */
    TIMER_ALARM,      /* arg0 = ns; a link is passed: after that long, a struct
                         sv_request with op TIMER_ALARM_FIRED and arg0 = arg1 of the
                         request is sent over it; the answer comes at once */
    TIMER_ALARM_FIRED,
};

/* A filter server (filter/filter.c), registered at the switchboard as
 * FILTER_NAME_PREFIX + its name (filter_register, filter_lookup in dmlib),
 * so that no filter's name can take a system server's (the request
 * interpreter is "fs"): meter
 * batches (struct meter_batch, from kernels only) and these requests
 * arrive over the same link. */
#define FILTER_NAME_PREFIX "filter."
#define FILTER_NAME_MAX (SB_NAME_MAX - sizeof FILTER_NAME_PREFIX)   /* characters in a filter's name */
enum filter_op {
    FILTER_STATS = 1, /* data: struct filter_stats */
    FILTER_FLUSH,     /* write out everything kept so far; answer when it is on the log */
    FILTER_STOP,      /* flush, answer, and end */
    FILTER_FORWARD,   /* arg0 = ms, 10 to 60000, and a link passed (the filter keeps
                         it): from now on every record the rules select is also
                         folded into a summary (meter/summary.h), sent over that link
                         every arg0 ms; a new FORWARD replaces it. arg0 = 0 with no
                         link: forwarding stops. E_INVAL: another interval, or no
                         link; E_STATE: the filter has no timer */
};
struct filter_stats {
    uint64_t batches;       /* meter batches taken */
    uint64_t received;      /* records in them */
    uint64_t kept;          /* records the rules kept, written to the log (-n: only forwarded) */
    uint64_t dropped;       /* records no rule kept */
    uint64_t lost;          /* records known lost: before they reached the filter (its
                               kernel's counts, gaps in a process's numbering), or
                               after (no room left on the log) */
    uint64_t refused;       /* messages on the meter link not from a kernel, or malformed */
    uint64_t log_blocks;    /* blocks of the log written */
    uint64_t streams;       /* distinct processes seen */
    uint64_t summaries;     /* summaries forwarded (FILTER_FORWARD) */
    uint64_t summaries_lost;   /* summaries the consumer's queue could not take */
};
#endif
