/*
 * dmlib.h — the user library: kernel calls as C functions, and the client
 * side of the system processes (process manager, switchboard, console,
 * timer). Programs also have newlib (printf, malloc, ...), whose system
 * calls are built on these (syscalls.c).
 */
#ifndef DMLIB_H
#define DMLIB_H

#include <stddef.h>
#include <stdint.h>
#include "demos.h"
#include "server_protocol.h"

/* Kernel calls: each returns >= 0, or a negative dm_error. The prototypes
 * come from demos.h's list of calls, DM_CALLS, where each is documented:
 * dm_createlink, dm_destroylink, dm_duplicatelink, dm_send, dm_receive,
 * dm_areceive, dm_call, dm_movedata, dm_stoptask. */
#define DM_PROTOTYPE(number, name, function, return_type, parameters, errors) return_type function parameters;
DM_CALLS(DM_PROTOTYPE)
#undef DM_PROTOTYPE
long dm_badcall(void);   /* a call number the kernel does not have: E_NOSYS */

/* The name of an error code ("E_DEAD"), and a sentence about it. */
const char *dm_error_name(long err);
const char *dm_error_text(long err);
/* The name of kernel call `number` ("SEND"), or 0 if there is no such call;
 * the number of the call called `name` in any case ("send"), or 0. */
const char *dm_call_name(long number);
long dm_call_number(const char *name);
/* Whether `err` is among the errors kernel call `number` can return
 * (its entry in DM_CALLS). */
int dm_call_may_return(long number, long err);
/* The name of request `number` over a kernel link ("KOP_CREATE"), or 0 if
 * there is no such request; whether `err` is among the errors its answer
 * can carry (its entry in DM_KOPS). */
const char *dm_kop_name(long number);
int dm_kop_may_return(long number, long err);

/* This process, from its info page (no kernel call). */
dm_pid dm_self(void);
uint32_t dm_machine(void);
uint32_t dm_nodes(void);             /* machines in the cluster, as the boot said */
uint64_t dm_proctime(void);          /* instructions executed on my behalf */

static inline uint64_t dm_instret(void)
{
    uint64_t v;
    __asm__ volatile("rdinstret %0" : "=r"(v));
    return v;
}

/* The machine clock in ns (the time CSR ticks at 10 MHz). */
static inline uint64_t dm_clock_ns(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v * 100;
}

/* For the in-OS test programs: print `ok NAME`, or `not ok NAME: ` and the
 * printf-style reason, and count it; dm_check_summary prints
 * `PROGRAM: N passed, M failed` and gives the exit status (0 if none failed). */
void dm_check(int ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int dm_check_summary(const char *program);

/* The 64-bit FNV-1a hash of n bytes (tests compare data by it). */
uint64_t dm_fnv1a(const void *p, size_t n);

/* Print a pid as machine.slot.generation into buf (at least 24 bytes). */
char *dm_pid_string(dm_pid pid, char *buf);
/* Parse "m.s.g" (epoch left 0: the process manager matches the rest). */
int dm_pid_parse(const char *s, dm_pid *pid);

/* A request to a server over `slot` (a CALL): fills in the answer. */
struct sv_call {
    uint32_t op;
    int64_t arg[3];
    const void *data;      /* request data, len bytes */
    uint32_t len;
    long pass;             /* a link to pass, or DM_NO_LINK */
    void *reply_data;      /* where the answer's data goes */
    uint32_t reply_cap;
    int64_t value;         /* out: the answer's value */
    uint32_t reply_len;    /* out: bytes of answer data */
    int32_t reply_link;    /* out: a link passed with the answer, or DM_NO_LINK */
    uint64_t replier;      /* out: who answered (a dm_pid) */
};
/* The status the server answered with (its sv_reply's), or the CALL's own
 * error; value, reply_len, reply_link and replier are filled in when the
 * CALL succeeded (whatever the server's status). */
long sv_call(long slot, struct sv_call *c);
/* Answer a request over its reply link. */
long sv_reply(long reply_slot, int64_t status, int64_t value, const void *data, uint32_t len, long pass);

/* The process manager. */
long pm_run(const char *program, int argc, char *const argv[]);   /* pid or error */
/* The same, with environment strings "NAME=VALUE" (envp ends with 0). */
long pm_run_env(const char *program, int argc, char *const argv[], char *const envp[]);
/* The same on machine `machine` (-1: the caller's); E_NODE if it is not up. */
long pm_run_on(int machine, const char *program, int argc, char *const argv[], char *const envp[]);
/* One page of the list of every machine's processes, from *cursor on (0 at
 * first): the number of entries (0 at the end) or an error; moves *cursor. */
/* Metering through the process manager (protocol.h, struct pm_meter):
 * run a program metered; start a filter server (argv: "filter" NAME ...)
 * with the machine's trace disk; change a process's metering (flags 0:
 * stop it); meter every process created on a machine from now on. */
long pm_meter_run(const struct pm_meter *m, int machine, const char *program, int argc, char *const argv[],
                  char *const envp[]);
long pm_filter_run(int machine, int argc, char *const argv[]);
long pm_meter(dm_pid pid, const struct pm_meter *m);
long pm_meter_system(int machine, const struct pm_meter *m);
/* Every kernel sends its metered processes' batches now (PM_METER_FLUSH);
 * with a filter's name (or 0), the metering into that filter ends first. */
long pm_meter_flush(const char *filter);
long pm_ps_page(int64_t *cursor, struct dm_kproc *entries, uint32_t cap);
/* The PROCTIMEs of every process of machine `machine` added up, the
 * kernel's (slot 0) with them, into *sum: the instructions that machine
 * has executed but its idle waits (kernel/proc.c, idle) and the few from
 * a wake-up to the next process. The process list's pages are read into
 * entries (cap bytes). 0, or the error of the process list. */
long pm_machine_proctime(uint32_t machine, struct dm_kproc *entries, uint32_t cap, uint64_t *sum);
/* The PROCTIME of process `pid` now (PM_PS): 0, or E_NOTFOUND when it is
 * not running, or the process manager's error. */
long pm_proctime(dm_pid pid, uint64_t *proctime);
long pm_wait(dm_pid pid, int64_t *status);
long pm_kill(dm_pid pid);
long pm_stop(dm_pid pid);
long pm_resume(dm_pid pid);
/* Move process pid to `machine` (PM_MIGRATE); 0 once it runs there, or an error. */
long pm_migrate(dm_pid pid, int machine);
long pm_halt(int code);
long pm_ready(void);   /* a system server tells the process manager it is serving */

/* The switchboard. */
long sb_register(const char *name, long slot);     /* moves the link in `slot` */
long sb_lookup(const char *name);                  /* a new slot, or E_NOTFOUND */
/* The same for a filter server's name (user/lib/server_protocol.h, FILTER_NAME_PREFIX);
 * E_INVAL for a name longer than FILTER_NAME_MAX. A filter's name is
 * registered only while it is free (E_STATE: a filter of that name runs);
 * filter_lookup_owner also gives the process that registered it. */
long filter_register(const char *name, long slot);
long filter_lookup(const char *name);
long filter_lookup_owner(const char *name, dm_pid *owner);
long filter_unregister(const char *name);
/* The filters' names that process pid registered (whole_machine: any
 * process of its machine) are forgotten: a SEND, no answer awaited (the
 * process manager, when a process ends or its machine is down). */
long filter_forget(dm_pid pid, int whole_machine);
long sb_lookup_wait(const char *name, uint64_t timeout_ns);

/* The timer server. */
long timer_sleep_ns(uint64_t ns);
long timer_time(uint64_t *wall_ns, uint64_t *machine_ns);

#endif
