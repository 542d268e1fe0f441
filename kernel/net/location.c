/*
 * location.c — where the processes that have moved are, as far as this
 * kernel knows: DEMOS/MP's forwarding addresses and link updates (Powell
 * and Miller, "Process Migration in DEMOS/MP", §4; docs/migration.md).
 *
 * A process keeps its id when it moves, and its id names the machine that
 * created it, its home. A kernel sends what is for a process that is not on
 * its own machine to where this table says it is, or else to its home
 * (remote.c). An entry is one of
 *  - FORWARD: the process left this machine for `machine` (migrate.c sets
 *    it when the process leaves); or, at its home, the machine it is on now
 *    (each machine it moves to tells its home). What arrives here for it is
 *    sent on there (remote.c, forward).
 *  - HINT: learned from a link update: a kernel that sent on a message from
 *    this machine said where the process is.
 *  - ARRIVING: it is moving here from `machine`. What comes for it before
 *    it has arrived goes back there, and so reaches it after its move,
 *    behind its state on the same ordered channel.
 * Every entry carries the number of moves the process had made when it was
 * there. A newer location replaces an older one, never the reverse, so a
 * late link update cannot send messages backwards: following the entries
 * goes forward along the process's moves and ends where it is.
 *
 * The table is a hash of NBUCKETS buckets of WAYS entries. Entries about
 * processes whose home is this machine stay until the process ends (the
 * machine it ends on tells its home) or comes back, and so do ARRIVING
 * ones; the others make room for new ones, hints first, the oldest first:
 * a message for a process whose entry was given up goes to its home.
 */
#include "remote.h"

#define NBUCKETS 128
#define WAYS     4

struct location {
    dm_pid   pid;        /* 0: a free entry */
    uint8_t  machine;
    uint8_t  kind;       /* enum location_kind */
    uint16_t reserved;
    uint32_t moves;
    uint64_t stamp;      /* when it was set: among those that may go, the oldest goes first */
};

static struct location table[NBUCKETS][WAYS];
uint32_t locations_used;             /* entries in use: none, and a lookup costs one test (remote.h) */
static uint64_t stamp_counter;
static struct {
    uint64_t set;                    /* entries made or changed */
    uint64_t given_up;               /* entries that made room for others */
    uint64_t no_room;                /* entries that found none: their bucket held only kept ones */
} counters;

void location_init(void)
{
    memset(table, 0, sizeof table);
    locations_used = 0;
}

static struct location *bucket_of(dm_pid pid)
{
    uint32_t h = PID_SLOT(pid) * 0x9e37u ^ PID_MACHINE(pid) * 0x85ebu ^ PID_GEN(pid) * 0xc2b3u;
    return table[(h ^ (h >> 11)) % NBUCKETS];
}

static struct location *find(dm_pid pid)
{
    if (locations_used == 0)
        return 0;
    struct location *b = bucket_of(pid);
    for (int w = 0; w < WAYS; w++)
        if (b[w].pid == pid)
            return &b[w];
    return 0;
}

/* Whether an entry is kept rather than given up for another. */
static int kept(const struct location *e)
{
    return e->kind == LOCATION_ARRIVING || PID_MACHINE(e->pid) == this_machine;
}

/* An entry for pid: its own, a free one, or the one given up for it (a
 * hint first, the oldest first); 0 if its bucket holds only kept ones. */
static struct location *entry_for(dm_pid pid)
{
    struct location *e = find(pid);
    if (e)
        return e;
    struct location *b = bucket_of(pid), *victim = 0;
    for (int w = 0; w < WAYS; w++) {
        if (!b[w].pid) {
            locations_used++;
            return &b[w];
        }
        if (kept(&b[w]))
            continue;
        if (!victim || (b[w].kind == LOCATION_HINT && victim->kind != LOCATION_HINT) ||
            (b[w].kind == victim->kind && b[w].stamp < victim->stamp))
            victim = &b[w];
    }
    if (!victim) {
        counters.no_room++;
        return 0;
    }
    counters.given_up++;
    return victim;
}

static void set(struct location *e, dm_pid pid, uint32_t machine, uint32_t moves, uint32_t kind)
{
    *e = (struct location){ .pid = pid, .machine = (uint8_t)machine, .kind = (uint8_t)kind, .moves = moves,
                            .stamp = ++stamp_counter };
    counters.set++;
}

static void clear(struct location *e)
{
    memset(e, 0, sizeof *e);
    locations_used--;
}

/* What this kernel knows of pid's location: 1 with its machine, moves and
 * kind, or 0 if nothing. */
int location_lookup(dm_pid pid, uint32_t *machine, uint32_t *moves, uint32_t *kind)
{
    const struct location *e = find(pid);
    if (!e)
        return 0;
    *machine = e->machine;
    *moves = e->moves;
    *kind = e->kind;
    return 1;
}

/* location_of (remote.h) when there are entries. */
uint32_t location_known(dm_pid pid)
{
    const struct location *e = find(pid);
    return e ? e->machine : PID_MACHINE(pid);
}

/* migrate.c: pid left for `machine` (LOCATION_FORWARD), or is arriving
 * from it (LOCATION_ARRIVING), after `moves` moves. */
void location_set(dm_pid pid, uint32_t machine, uint32_t moves, uint32_t kind)
{
    struct location *e = entry_for(pid);
    if (e)
        set(e, pid, machine, moves, kind);
}

/* A link update, or a machine telling the home where its process is now:
 * pid is on `machine` after its `moves`th move, or (NO_MACHINE) ended
 * there. Older news than what is known changes nothing; a process moving
 * here is waited for. */
void location_learned(dm_pid pid, uint32_t machine, uint32_t moves)
{
    struct location *e = find(pid);
    if (e && (e->kind == LOCATION_ARRIVING || e->moves > moves))
        return;
    if (machine == NO_MACHINE) {
        if (e)
            clear(e);
        return;
    }
    if (machine == this_machine || machine >= node_count ||
        (PID_MACHINE(pid) == this_machine && PID_EPOCH(pid) != boot_epoch))
        return;           /* not here (the caller looked): news of a move not finished, or stale; or
                             a process of this machine's former boot, whose home this is no more */
    if (e && e->moves == moves && e->machine == machine)
        return;
    uint32_t kind = e ? e->kind : PID_MACHINE(pid) == this_machine ? LOCATION_FORWARD : LOCATION_HINT;
    if (!e && !(e = entry_for(pid)))
        return;
    set(e, pid, machine, moves, kind);
}

/* pid is here again, or its move here was given up: nothing more to know. */
void location_forget(dm_pid pid)
{
    struct location *e = find(pid);
    if (e)
        clear(e);
}

/* Machine `machine` is down (E_NODE) or rebooted (E_DEAD): hints that
 * point there are given up (what is for those processes goes to their
 * homes again). After a reboot, the processes that were there are gone, so
 * the forwarding addresses to it are too. */
void location_machine_down(uint32_t machine, int error)
{
    if (locations_used == 0)
        return;
    for (int b = 0; b < NBUCKETS; b++) {
        for (int w = 0; w < WAYS; w++) {
            struct location *e = &table[b][w];
            if (e->pid && e->machine == machine &&
                (e->kind == LOCATION_HINT || (e->kind == LOCATION_FORWARD && error == E_DEAD)))
                clear(e);
        }
    }
}

/* At halt: what the table did, if it was used. */
void location_print_counters(void)
{
    if (counters.set)
        kprintf("machine %u: locations: %lu set, %u known, %lu given up for room, %lu found no room\n",
                this_machine, counters.set, locations_used, counters.given_up, counters.no_room);
}
