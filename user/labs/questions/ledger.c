/*
 * ledger — the census's register (census.h; the questions lab's workload).
 * census starts it:
 *
 *     ledger NAME     (NAME: census's name at the switchboard)
 *
 * It finds census by NAME and says HELLO, passing a link to itself; then
 * serves until QUIT: checks each SHEET a counter files (check_sheet: it
 * counts the district's first CENSUS_CHECK_STEPS again) and keeps it in the
 * register; answers a counter's CLOSE with the people it has for that
 * counter, and census's REPORT with the register, which it audits first
 * (audit: it counts the first CENSUS_AUDIT_STEPS of every district again). It prints nothing unless
 * something fails. Exit status 0 after QUIT; 1 when census cannot be
 * reached or a message is wrong; 2 for bad arguments.
 */
#include <stdio.h>
#include "dmlib.h"
#include "census.h"

static struct census_entry census_register[CENSUS_DISTRICTS];
static uint64_t people_of[CENSUS_COUNTERS];

static int say_hello(const char *name);
static int serve(void);
static void check_sheet(const struct census_sheet *sheet);
static void audit(void);

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ledger NAME   (census starts it)\n");
        return 2;
    }
    if (say_hello(argv[1]) != 0)
        return 1;
    return serve();
}

/* Find census and send it HELLO with a link to this process: 0, or 1
 * after saying why not. */
static int say_hello(const char *name)
{
    long found = sb_lookup(name);
    long self = found < 0 ? found : dm_createlink(0, 0, 0, 0, 0);
    struct census_hello hello = { .kind = CENSUS_HELLO, .role = CENSUS_ROLE_LEDGER };
    long err = self < 0 ? self : dm_send(found, &hello, sizeof hello, self);
    if (err < 0) {
        fprintf(stderr, "ledger: cannot reach census %s: %s\n", name, dm_error_text(err));
        return 1;
    }
    dm_destroylink(found);
    return 0;
}

/* Take sheets and answer requests until QUIT: the exit status. */
static int serve(void)
{
    for (;;) {
        union {
            uint32_t kind;
            struct census_sheet sheet;
            struct sv_request request;
        } message;
        struct dm_msg_info info;
        long n = dm_receive(&info, &message, sizeof message, DM_ANY_CHANNEL);
        if (n >= (long)sizeof(uint32_t) && info.reply < 0 && message.kind == CENSUS_QUIT)
            return 0;
        if (n == sizeof message.sheet && info.reply < 0 && message.kind == CENSUS_SHEET &&
            message.sheet.district < CENSUS_DISTRICTS && message.sheet.counter < CENSUS_COUNTERS) {
            check_sheet(&message.sheet);
            continue;
        }
        if (n >= (long)sizeof message.request && info.reply >= 0) {
            const struct sv_request *q = &message.request;
            if (q->op == CENSUS_CLOSE && q->arg[0] >= 0 && q->arg[0] < CENSUS_COUNTERS) {
                sv_reply(info.reply, 0, (int64_t)people_of[q->arg[0]], 0, 0, DM_NO_LINK);
                continue;
            }
            if (q->op == CENSUS_REPORT) {
                audit();
                sv_reply(info.reply, 0, 0, census_register, sizeof census_register, DM_NO_LINK);
                continue;
            }
        }
        fprintf(stderr, "ledger: a message that is no sheet, request or quit (%ld bytes)\n", n);
        return 1;
    }
}

/* Check a sheet (count the district's first CENSUS_CHECK_STEPS again, as
 * the counter did for its check) and keep it in the register. A function
 * of its own (noinline), so that the analyzer names it. */
static __attribute__((noinline)) void check_sheet(const struct census_sheet *sheet)
{
    struct census_entry *e = &census_register[sheet->district];
    uint64_t sample;
    e->district = sheet->district;
    e->counter = sheet->counter;
    e->people = sheet->people;
    e->households = sheet->households;
    e->check = sheet->check;
    e->checked = census_people(sheet->district, CENSUS_CHECK_STEPS, &sample);
    people_of[sheet->counter] += sheet->people;
}

/* Audit the register before it goes to census: count the first
 * CENSUS_AUDIT_STEPS of every district again. A function of its own
 * (noinline), so that the analyzer names it. */
static __attribute__((noinline)) void audit(void)
{
    for (uint32_t d = 0; d < CENSUS_DISTRICTS; d++) {
        uint64_t households;
        census_register[d].audited = census_people(d, CENSUS_AUDIT_STEPS, &households);
    }
}
