/*
 * census — the workload of the questions lab (docs/labs/questions.md): a
 * census of 32 districts taken by two counters and a ledger on three
 * machines, as census.h plans it; prints what they counted.
 *
 *     census          (on a cluster of 3 machines or more: make run NODES=3)
 *
 * It prints a line per counter and one for the whole census:
 *
 *     census: counter 0 (1.1.1 on machine 1): 24 districts, 2400384 people; ledger has 2400384
 *     census: counter 1 (2.1.1 on machine 2): 8 districts, 799805 people; ledger has 799805
 *     census: 32 districts, 3200189 people in 3031 households; the register agrees
 *
 * Exit status 0; 1 when something failed (said); 2 for bad arguments.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "census.h"

/* A process census started: its pid and the link to it. */
struct child {
    long pid;
    long link;
};

static struct child ledger = { 0, -1 };
static struct child counters[CENSUS_COUNTERS] = { { 0, -1 }, { 0, -1 } };
static struct census_summary summaries[CENSUS_COUNTERS];
static struct census_entry census_register[CENSUS_DISTRICTS];

static int start_all(const char *name);
static int hand_out(void);
static int collect(void);
static int report(void);
static void wait_all(int status);

/* Say what failed; the exit status. */
static int failed(const char *what, long err)
{
    fprintf(stderr, "census: %s: %s (%s)\n", what, dm_error_name(err), dm_error_text(err));
    return 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: census   (on a cluster of 3 machines or more)\n");
        return 2;
    }
    if (dm_nodes() < 3) {
        fprintf(stderr, "census: needs 3 machines; the cluster has %u (make run NODES=3)\n", dm_nodes());
        return 1;
    }
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, CENSUS_NAME_FORMAT, dm_machine(), PID_SLOT(dm_self()));
    long self = dm_createlink(0, 0, 0, 0, 0);
    long err = self < 0 ? self : sb_register(name, self);
    if (err < 0)
        return failed("registering at the switchboard", err);
    int status = start_all(name);
    struct sv_call remove = { .op = SB_REMOVE, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = DM_NO_LINK };
    sv_call(SLOT_SWITCHBOARD, &remove);
    if (status == 0)
        status = hand_out();
    if (status == 0)
        status = collect();
    if (status == 0)
        status = report();
    if (ledger.link >= 0) {
        uint32_t quit = CENSUS_QUIT;
        dm_send(ledger.link, &quit, sizeof quit, DM_NO_LINK);
    }
    wait_all(status);
    return status;
}

/* Start one program on `machine` with census's name (and a counter's
 * number) as its arguments: its pid, or 0 after saying why not. */
static long start_one(const char *program, uint32_t machine, const char *name, const char *number)
{
    char *argv[] = { (char *)program, (char *)name, (char *)number, 0 };
    long pid = pm_run_on((int)machine, program, number ? 3 : 2, argv, 0);
    if (pid < 0) {
        char what[64];
        snprintf(what, sizeof what, "starting %s on machine %u", program, machine);
        failed(what, pid);
        return 0;
    }
    return pid;
}

/* Start ledger and the counters, then take each one's HELLO and the link
 * it passes: 0, or 1 after saying what failed. */
static int start_all(const char *name)
{
    ledger.pid = start_one("ledger", CENSUS_LEDGER_MACHINE, name, 0);
    if (ledger.pid == 0)
        return 1;
    for (uint32_t i = 0; i < CENSUS_COUNTERS; i++) {
        char number[8];
        snprintf(number, sizeof number, "%u", i);
        counters[i].pid = start_one("counter", census_counter_machine(i), name, number);
        if (counters[i].pid == 0)
            return 1;
    }
    for (uint32_t heard = 0; heard < 1 + CENSUS_COUNTERS; heard++) {
        struct census_hello hello;
        struct dm_msg_info info;
        long n = dm_receive(&info, &hello, sizeof hello, DM_ANY_CHANNEL);
        struct child *child = 0;
        if (n == sizeof hello && hello.kind == CENSUS_HELLO && info.link >= 0) {
            if (hello.role == CENSUS_ROLE_LEDGER && (dm_pid)ledger.pid == info.sender)
                child = &ledger;
            else if (hello.role == CENSUS_ROLE_COUNTER && hello.counter < CENSUS_COUNTERS &&
                     (dm_pid)counters[hello.counter].pid == info.sender)
                child = &counters[hello.counter];
        }
        if (child == 0 || child->link >= 0) {
            fprintf(stderr, "census: a message that is no HELLO of a process census started (%ld bytes)\n", n);
            return 1;
        }
        child->link = info.link;
    }
    return 0;
}

/* Send each counter its START with a link to ledger, then its ASSIGN with
 * its districts and a link back on its summary channel: 0, or 1 after
 * saying what failed. */
static int hand_out(void)
{
    for (uint32_t i = 0; i < CENSUS_COUNTERS; i++) {
        struct census_assign start = { .kind = CENSUS_START };
        long to_ledger = dm_duplicatelink(ledger.link);
        long err = to_ledger < 0 ? to_ledger : dm_send(counters[i].link, &start, sizeof start, to_ledger);
        if (err < 0)
            return failed("starting a counter", err);
    }
    for (uint32_t i = 0; i < CENSUS_COUNTERS; i++) {
        struct census_assign assign = { .kind = CENSUS_ASSIGN };
        for (uint32_t d = 0; d < CENSUS_DISTRICTS; d++)
            if (census_counter_of(d) == i)
                assign.district[assign.count++] = d;
        long back = dm_createlink(CENSUS_SUMMARY_CHANNEL + i, 0, 0, 0, 0);
        long err = back < 0 ? back : dm_send(counters[i].link, &assign, sizeof assign, back);
        if (err < 0)
            return failed("handing out districts", err);
    }
    return 0;
}

/* Take the counters' summaries, in the counters' order, each on its own
 * channel: 0, or 1 after saying what was wrong. */
static int collect(void)
{
    for (uint32_t i = 0; i < CENSUS_COUNTERS; i++) {
        struct census_summary summary;
        struct dm_msg_info info;
        long n = dm_receive(&info, &summary, sizeof summary, CENSUS_SUMMARY_CHANNEL + i);
        if (n != sizeof summary || summary.kind != CENSUS_SUMMARY || summary.counter != i ||
            (dm_pid)counters[i].pid != info.sender) {
            fprintf(stderr, "census: a message that is no summary of counter %u (%ld bytes)\n", i, n);
            return 1;
        }
        summaries[i] = summary;
    }
    return 0;
}

/* Ask ledger for the register, and print each counter's summary and the
 * census's: 0, or 1 when something disagrees (said). */
static int report(void)
{
    struct sv_call c = { .op = CENSUS_REPORT, .pass = DM_NO_LINK, .reply_data = census_register,
                         .reply_cap = sizeof census_register };
    long status = sv_call(ledger.link, &c);
    if (status < 0)
        return failed("asking ledger for the register", status);
    if (c.reply_len != sizeof census_register) {
        fprintf(stderr, "census: ledger's register has %u bytes, not %u\n", c.reply_len,
                (uint32_t)sizeof census_register);
        return 1;
    }
    int wrong = 0;
    uint64_t people = 0, households = 0, registered = 0;
    uint32_t districts = 0;
    for (uint32_t i = 0; i < CENSUS_COUNTERS; i++) {
        char id[24];
        const struct census_summary *s = &summaries[i];
        printf("census: counter %u (%s on machine %u): %u districts, %llu people; ledger has %llu\n", i,
               dm_pid_string((dm_pid)counters[i].pid, id), census_counter_machine(i), s->districts,
               (unsigned long long)s->people, (unsigned long long)s->recorded);
        wrong |= s->people != s->recorded;
        people += s->people;
        districts += s->districts;
    }
    for (uint32_t d = 0; d < CENSUS_DISTRICTS; d++) {
        const struct census_entry *e = &census_register[d];
        wrong |= e->district != d || e->counter != census_counter_of(d) || e->check != e->checked ||
                 e->audited == 0;
        registered += e->people;
        households += e->households;
    }
    printf("census: %u districts, %llu people in %llu households; the register %s\n", districts,
           (unsigned long long)people, (unsigned long long)households,
           wrong || registered != people ? "disagrees" : "agrees");
    return wrong || registered != people;
}

/* Wait for every process census started to end, so that census ends last;
 * after a failure, end them first. */
static void wait_all(int status)
{
    struct child *children[] = { &ledger, &counters[0], &counters[1] };
    for (uint32_t i = 0; i < sizeof children / sizeof children[0]; i++) {
        int64_t exit_status;
        if (children[i]->pid == 0)
            continue;
        if (status != 0)
            pm_kill((dm_pid)children[i]->pid);
        pm_wait((dm_pid)children[i]->pid, &exit_status);
    }
}
