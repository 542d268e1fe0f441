/*
 * remote.h — the kernel messages kernels send each other, as far as the
 * files of kernel/net/ besides remote.c need them: their types, the header
 * every one begins with, and how migrate.c and location.c send them.
 * remote.c defines the bodies of its own types; migrate.c those of the
 * migration's.
 */
#ifndef REMOTE_H
#define REMOTE_H

#include "defs.h"

enum rm_type {
    RM_SEND = 1, RM_RESULT, RM_NOREPLY, RM_READ, RM_DATA, RM_WRITE, RM_READ_TO, RM_PING,
    RM_MIGRATE,          /* migrate.c: "keep a slot for this process": answered RM_RESULT */
    RM_MIGRATE_PART,     /* migrate.c: a part of a moving process (its state, memory, messages) */
    RM_MIGRATE_CANCEL,   /* migrate.c: the slot kept for it is not needed */
    RM_LOCATION,         /* a moved process's location (DEMOS/MP's link update) */
};

/* The start of every kernel message. */
struct rm_header {
    uint32_t type;              /* enum rm_type */
    uint8_t  answer_to;         /* the machine where the waiter is: the answer goes there */
    uint8_t  hops;              /* how many kernels have forwarded it (location.c) */
    uint16_t reserved;
    dm_pid   waiter;            /* who waits for the answer; 0: no answer */
    uint64_t op;                /* the waiter's operation number */
};

/* RM_LOCATION: process `pid` is on `machine` after its `moves`th move (or
 * is gone, machine NO_MACHINE); and the wait of `waiter` for `op`, if it
 * still waits, depends on `machine` now instead of on `replaces`
 * (NO_MACHINE: whatever it depended on). */
struct rm_location {
    struct rm_header h;
    dm_pid   pid;
    uint32_t machine, moves;
    uint32_t replaces, reserved;
};

#define NO_MACHINE 0xff

/* A move under way from this machine (migrate.c). */
struct departure;

/* remote.c, for the kernels' own messages (each begins with its header;
 * answer_to is filled in): 0, or E_NOMEM when no intent is free. */
int remote_post(uint32_t machine, struct rm_header *message, uint32_t len, int new_work);
int remote_post_departure(uint32_t machine, struct departure *d);
void remote_answer(const struct rm_header *h, int64_t status);
void remote_keep_memory(dm_pid pid);
void remote_wait_started(void);
void remote_call_waits_on(struct proc *p, uint32_t machine);
void remote_due_at(uint64_t t);

/* migrate.c, called by remote.c */
int migrate_receive(uint32_t machine, const uint8_t *bytes, uint32_t len);
int migrate_answered(uint64_t op, int64_t status);
uint32_t migrate_build(struct departure *d, uint8_t *buffer);
int migrate_part_sent(struct departure *d);
void migrate_departure_failed(struct departure *d, int error);
void migrate_machine_down(uint32_t machine, int error);
int migrate_mark_waited(uint8_t *waited);
void migrate_tick(uint64_t now);
uint64_t migrate_next_time(void);
void migrate_print_counters(void);

/* location.c: where moved processes are */
enum location_kind {
    LOCATION_HINT = 1,     /* learned from a link update */
    LOCATION_FORWARD,      /* it left this machine for there (DEMOS/MP's forwarding address); at its
                              home, where it is now */
    LOCATION_ARRIVING,     /* it is moving here from there: what comes for it goes back there,
                              without a link update, until it has arrived */
};
void location_init(void);
int location_lookup(dm_pid pid, uint32_t *machine, uint32_t *moves, uint32_t *kind);
uint32_t location_known(dm_pid pid);
extern uint32_t locations_used;

/* Where to send what is for pid, a process that is not on this machine:
 * where it is known to be, else its home (which may be this machine: then
 * nothing is known of it here). With no entry at all, it is its home. */
static inline uint32_t location_of(dm_pid pid)
{
    return locations_used ? location_known(pid) : PID_MACHINE(pid);
}
void location_set(dm_pid pid, uint32_t machine, uint32_t moves, uint32_t kind);
void location_learned(dm_pid pid, uint32_t machine, uint32_t moves);
void location_forget(dm_pid pid);
void location_machine_down(uint32_t machine, int error);
void location_print_counters(void);

#endif
