/*
 * isotest — what one process cannot do to another (SECURITY.md):
 * read or write its memory, forge a link to it, use a data area beyond the
 * rights its link grants, reach a kernel link it was not given, pass for
 * the kernel, change its own metering, or take the kernel's memory from
 * the others (links, queued messages); and a process's PROCTIME counts its
 * own instructions only, not the interrupts taken while it ran. It is run
 * from the shell with slots 0 to 2 only (the standard links). Prints one
 * line per check, as ktest does, and `isotest: N passed, M failed`.
 *
 *     isotest                  the checks (starts the helpers below itself)
 *     isotest peek ADDRESS     a helper: prints the bytes at ADDRESS of its
 *                              own memory, then overwrites them
 *     isotest touch ADDRESS    a helper: loads from ADDRESS (a fault ends it)
 *     isotest sink NAME        a helper: registers NAME and never receives
 *     isotest spin             a helper: computes until it is killed
 *     isotest flood NAME       a helper: sends to NAME until it is killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "record.h"

static char secret[64] = "the parent's secret, which no other process may read";

/* A new `isotest ARGS...`; its pid, or 0. */
static dm_pid start(int argc, char **argv)
{
    long pid = pm_run("isotest", argc, argv);
    return pid < 0 ? 0 : (dm_pid)pid;
}

static int64_t wait_for(dm_pid pid)
{
    int64_t status = -1;
    if (!pid || pm_wait(pid, &status) < 0)
        return -1;
    return status;
}

/* ---- memory ---- */

/* The same address in another process is that process's own memory: a
 * child of the same program sees its own copy of `secret`, unchanged by
 * ours, and its writes there leave ours alone. */
static void check_memory(void)
{
    char address[24];
    strcpy(secret, "changed by the parent after loading");
    snprintf(address, sizeof address, "%lu", (unsigned long)(uintptr_t)secret);
    int64_t status = wait_for(start(3, (char *[]){ "isotest", "peek", address, 0 }));
    dm_check(status == 7, "memory.other_process_sees_its_own_copy", "the child's status %lld",
             (long long)status);
    dm_check(strcmp(secret, "changed by the parent after loading") == 0, "memory.child_writes_stay_its_own",
             "ours now reads \"%.40s\"", secret);
    static const uint64_t forbidden[] = { 0x80000000UL, 0x80200000UL, 0x70000000UL };
    for (int i = 0; i < 3; i++) {
        snprintf(address, sizeof address, "%lu", (unsigned long)forbidden[i]);
        status = wait_for(start(3, (char *[]){ "isotest", "touch", address, 0 }));
        dm_check(status == DM_EXIT_FAULT, i == 0 ? "memory.kernel_load_ends_only_the_process"
                                          : i == 1 ? "memory.kernel_image_load_ends_only_the_process"
                                                   : "memory.unmapped_load_ends_only_the_process",
                 "status %lld", (long long)status);
    }
    struct dm_msg_info info;
    long err = dm_areceive(&info, (void *)0x80000000UL, 16, DM_ANY_CHANNEL);
    dm_check(err == E_FAULT, "memory.kernel_buffer_refused", "ARECEIVE into kernel memory: %s", dm_error_name(err));
}

/* peek: exit 7 if ADDRESS holds this program's own initial `secret`. */
static int peek(const char *address)
{
    char *p = (char *)(uintptr_t)strtoull(address, 0, 10);
    int own = p == secret && strncmp(p, "the parent's secret", 19) == 0;
    strcpy(p, "overwritten by the child");
    return own ? 7 : 1;
}

/* ---- links ---- */

/* A slot number names an entry of the caller's own table and nothing else. */
static void check_links(void)
{
    long mine = dm_createlink(5, 55, 0, 0, 0);
    long free_slot = mine + 1;
    while (free_slot < DM_NLINKS && dm_duplicatelink(free_slot) != E_EMPTYSLOT)
        free_slot++;
    long err = dm_send(free_slot, "x", 1, DM_NO_LINK);
    dm_check(err == E_EMPTYSLOT, "links.empty_slot_is_nothing", "SEND over slot %ld: %s", free_slot,
             dm_error_name(err));
    err = dm_send(DM_NLINKS, "x", 1, DM_NO_LINK);
    dm_check(err == E_BADSLOT, "links.beyond_the_table", "%s", dm_error_name(err));
    err = dm_send(-5, "x", 1, DM_NO_LINK);
    dm_check(err == E_BADSLOT, "links.negative_slot", "%s", dm_error_name(err));
    /* A message a process sends is never marked as the kernel's. */
    err = dm_send(mine, "x", 1, DM_NO_LINK);
    struct dm_msg_info info;
    char buf[4];
    long n = err < 0 ? err : dm_receive(&info, buf, sizeof buf, 5);
    dm_check(n == 1 && !(info.flags & DM_MSG_FROM_KERNEL) && info.sender == dm_self() && info.code == 55,
             "links.no_process_passes_for_the_kernel", "n %ld flags %x", n, n >= 0 ? info.flags : 0);
    dm_destroylink(mine);
}

/* A data area: only what the link's rights and bounds allow. */
static void check_areas(void)
{
    static char area[100], mine[200];
    long read_only = dm_createlink(0, 0, LINK_READ, area, sizeof area);
    long err = dm_movedata(read_only, 0, DM_SELF, (uint64_t)(uintptr_t)mine, 10);
    dm_check(err == E_RIGHTS, "areas.write_without_the_right", "%s", dm_error_name(err));
    err = dm_movedata(DM_SELF, (uint64_t)(uintptr_t)mine, read_only, 90, 20);
    dm_check(err == E_BOUNDS, "areas.read_beyond_the_area", "%s", dm_error_name(err));
    err = dm_movedata(DM_SELF, (uint64_t)(uintptr_t)mine, read_only, ~0ull - 5, 10);
    dm_check(err == E_BOUNDS, "areas.offset_that_wraps", "%s", dm_error_name(err));
    long none = dm_createlink(0, 0, 0, 0, 0);
    err = dm_movedata(DM_SELF, (uint64_t)(uintptr_t)mine, none, 0, 1);
    dm_check(err == E_NOAREA, "areas.link_without_an_area", "%s", dm_error_name(err));
    err = dm_createlink(0, 0, LINK_READ | LINK_WRITE, (void *)0x80000000UL, 4096);
    dm_check(err == E_FAULT, "areas.kernel_memory_as_an_area", "%s", dm_error_name(err));
    dm_destroylink(read_only);
    dm_destroylink(none);
}

/* Kernel links are made only by kernels and given only by the process
 * manager: the slot where the process manager holds its process-control
 * link means nothing in another table, so a process-control request over
 * it reaches no kernel; and metering is changed only through the process
 * manager, never by the metered process itself. */
static void check_kernel_links(void)
{
    struct dm_kreq q = { .op = KOP_CREATE };
    struct dm_kreply r;
    struct dm_msg_info info;
    long n = dm_call(BOOT_SLOT_PROCESS_CONTROL, &q, sizeof q, DM_NO_LINK, &r, sizeof r, &info);
    dm_check(n == E_EMPTYSLOT, "kernel.process_control_slot_is_the_pm_s_alone", "CALL over our slot %d: %s",
             BOOT_SLOT_PROCESS_CONTROL, dm_error_name(n));
    struct pm_meter m = { .flags = METER_ALL_FLAGS, .filter = "anything" };
    long err = pm_meter(dm_self(), &m);
    dm_check(err == E_RIGHTS, "metering.not_of_itself", "%s", dm_error_name(err));
}

/* ---- limits ---- */

/* The link table: full at DM_NLINKS, with its own error, and the process
 * goes on. */
static void check_link_limit(void)
{
    long slots[DM_NLINKS], n = 0, err = 0;
    while (n < DM_NLINKS && (err = dm_createlink(0, 0, 0, 0, 0)) >= 0)
        slots[n++] = err;
    dm_check(err == E_LINKFULL, "limits.link_table", "after %ld links: %s", n, dm_error_name(err));
    while (n > 0)
        dm_destroylink(slots[--n]);
    dm_check(dm_createlink(0, 0, 0, 0, 0) >= 0, "limits.links_again_after", "no link");
}

/* Messages: a process that floods processes that never receive is stopped
 * at DM_SENT_QUEUED_MAX with E_NOMEM, and the others can still send. */
static void check_message_limit(void)
{
    dm_pid sinks[3];
    long links[3];
    char name[24];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "isotest.sink.%d", i);
        sinks[i] = start(3, (char *[]){ "isotest", "sink", name, 0 });
        links[i] = sb_lookup_wait(name, 5000000000ull);
    }
    static char data[64];
    long sent = 0, err = 0;
    for (int i = 0; i < 3 && err != E_NOMEM; i++) {
        while ((err = dm_send(links[i], data, sizeof data, DM_NO_LINK)) == 0)
            sent++;
    }
    dm_check(err == E_NOMEM && sent == DM_SENT_QUEUED_MAX, "limits.messages_of_one_sender",
             "%ld sent, then %s", sent, dm_error_name(err));
    long me = dm_createlink(9, 0, 0, 0, 0);
    err = dm_send(me, data, 1, DM_NO_LINK);
    dm_check(err == E_NOMEM, "limits.counted_for_every_receiver", "%s", dm_error_name(err));
    uint64_t wall, clock;
    dm_check(timer_time(&wall, &clock) == 0, "limits.others_still_answer", "the timer server did not answer");
    for (int i = 0; i < 3; i++) {
        pm_kill(sinks[i]);
        wait_for(sinks[i]);
        dm_destroylink(links[i]);
    }
    err = dm_send(me, data, 1, DM_NO_LINK);   /* the sinks' queues went with them */
    struct dm_msg_info info;
    dm_check(err == 0 && dm_receive(&info, data, sizeof data, 9) == 1, "limits.freed_when_the_receivers_end", "%s",
             dm_error_name(err));
    dm_destroylink(me);
}

/* sink: registers NAME, then waits on a channel nothing is sent to. */
static int sink(const char *name)
{
    long link = dm_createlink(0, 0, 0, 0, 0);
    if (link < 0 || sb_register(name, link) < 0)
        return 1;
    struct dm_msg_info info;
    dm_receive(&info, 0, 0, 12345);
    return 0;
}

/* ---- accounting ---- */

/* 2n + 1 instructions exactly. */
static void count_down(uint64_t n)
{
    __asm__ volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n));
}

/* What count_down(n) costs in PROCTIME. */
static uint64_t cost(uint64_t n)
{
    uint64_t before = dm_proctime();
    count_down(n);
    return dm_proctime() - before;
}

/* PROCTIME counts a process's own instructions: the loop's, cost()'s
 * reads around it, and two instructions of each interrupt's entry, whether
 * the machine is quiet or takes a stream of messages from another machine.
 * An interrupt's work is the kernel's from the trap's third instruction to
 * the return to user mode (docs/performance.md, "Who pays for what", has
 * what it would add to this loop charged to the process). Beside a busy
 * process, each switch away from it and back adds the scheduler's share. */
#define OWN_ONLY 200              /* instructions allowed beyond the loop's, quiet or under traffic */
#define SWITCHES 2000             /* beside a busy process */

static void check_accounting(void)
{
    uint64_t n = 20000000, exact = 2 * n + 1;
    uint64_t alone = cost(n);
    dm_pid spinner = start(2, (char *[]){ "isotest", "spin", 0 });
    uint64_t shared = cost(n);
    pm_kill(spinner);
    wait_for(spinner);
    dm_check(alone >= exact && alone < exact + OWN_ONLY, "accounting.loop_costs_its_instructions",
             "%lu for %lu", (unsigned long)alone, (unsigned long)exact);
    dm_check(shared >= exact && shared < exact + SWITCHES, "accounting.beside_a_busy_process",
             "%lu for %lu", (unsigned long)shared, (unsigned long)exact);
    if (dm_nodes() < 2)
        return;
    dm_pid sinker = start(3, (char *[]){ "isotest", "sink", "isotest.flooded", 0 });
    long found = sb_lookup_wait("isotest.flooded", 5000000000ull);
    long flooder = pm_run_on(1, "isotest", 3, (char *[]){ "isotest", "flood", "isotest.flooded", 0 }, 0);
    timer_sleep_ns(50000000);   /* the flood under way */
    uint64_t flooded = cost(n);
    pm_kill((dm_pid)flooder);
    wait_for((dm_pid)flooder);
    pm_kill(sinker);
    wait_for(sinker);
    dm_destroylink(found);
    dm_check(flooder > 0 && flooded >= exact && flooded < exact + OWN_ONLY,
             "accounting.beside_messages_from_another_machine", "%lu for %lu", (unsigned long)flooded,
             (unsigned long)exact);
}

/* flood: sends to NAME as fast as it can (its queue full or not). */
static int flood(const char *name)
{
    long link = sb_lookup_wait(name, 5000000000ull);
    if (link < 0)
        return 1;
    for (;;)
        dm_send(link, "flood", 5, DM_NO_LINK);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "peek") == 0)
        return peek(argv[2]);
    if (argc == 3 && strcmp(argv[1], "touch") == 0)
        return *(volatile char *)(uintptr_t)strtoull(argv[2], 0, 10);
    if (argc == 3 && strcmp(argv[1], "sink") == 0)
        return sink(argv[2]);
    if (argc == 3 && strcmp(argv[1], "flood") == 0)
        return flood(argv[2]);
    if (argc == 2 && strcmp(argv[1], "spin") == 0)
        for (;;)
            count_down(1000000);
    if (argc != 1) {
        printf("usage: isotest\n");
        return 2;
    }
    check_memory();
    check_links();
    check_areas();
    check_kernel_links();
    check_link_limit();
    check_message_limit();
    check_accounting();
    return dm_check_summary("isotest");
}
