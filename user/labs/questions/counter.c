/*
 * counter — a counter of the census (census.h; the questions lab's
 * workload). census starts it on a machine of its choice:
 *
 *     counter NAME NUMBER     (NAME: census's name at the switchboard)
 *
 * It finds census by NAME and says HELLO, passing a link to itself; takes
 * START and the link to ledger it passes; then ASSIGN, and counts every
 * district it lists (count_district), filing a sheet with ledger for each;
 * then it CALLs ledger to close its books and sends census its summary over
 * the link ASSIGN passed. It prints nothing
 * unless something fails. Exit status 0; 1 when census or ledger cannot be
 * reached or a message is wrong; 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"
#include "census.h"

static uint32_t number;                  /* this counter's number */
static long census = -1;                 /* link to census for the summary, passed with ASSIGN */
static long ledger = -1;                 /* link to ledger, passed with START */
static struct census_summary summary = { .kind = CENSUS_SUMMARY };

static int say_hello(const char *name);
static int count_all(void);
static long count_district(uint32_t district);
static int close_books(void);

int main(int argc, char **argv)
{
    char *end;
    if (argc != 3 || (number = (uint32_t)strtoul(argv[2], &end, 10)) >= CENSUS_COUNTERS || *end) {
        fprintf(stderr, "usage: counter NAME NUMBER   (census starts it)\n");
        return 2;
    }
    summary.counter = number;
    if (say_hello(argv[1]) != 0 || count_all() != 0 || close_books() != 0)
        return 1;
    return 0;
}

/* Find census, send it HELLO with a link to this process, and take START
 * and the link to ledger: 0, or 1 after saying why not. */
static int say_hello(const char *name)
{
    long found = sb_lookup(name);
    long self = found < 0 ? found : dm_createlink(0, 0, 0, 0, 0);
    struct census_hello hello = { .kind = CENSUS_HELLO, .role = CENSUS_ROLE_COUNTER, .counter = number };
    long err = self < 0 ? self : dm_send(found, &hello, sizeof hello, self);
    if (err < 0) {
        fprintf(stderr, "counter %u: cannot reach census %s: %s\n", number, name, dm_error_text(err));
        return 1;
    }
    dm_destroylink(found);
    struct census_assign start;
    struct dm_msg_info info;
    long n = dm_receive(&info, &start, sizeof start, DM_ANY_CHANNEL);
    if (n != sizeof start || start.kind != CENSUS_START || info.link < 0) {
        fprintf(stderr, "counter %u: the first message is no START (%ld bytes)\n", number, n);
        return 1;
    }
    ledger = info.link;
    return 0;
}

/* Take ASSIGN and the link it passes, and count its districts: 0, or 1
 * after saying what was wrong. */
static int count_all(void)
{
    struct census_assign assign;
    struct dm_msg_info info;
    long n = dm_receive(&info, &assign, sizeof assign, DM_ANY_CHANNEL);
    if (n != sizeof assign || assign.kind != CENSUS_ASSIGN || assign.count > CENSUS_DISTRICTS || info.link < 0) {
        fprintf(stderr, "counter %u: a message that is no ASSIGN (%ld bytes)\n", number, n);
        return 1;
    }
    census = info.link;
    for (uint32_t i = 0; i < assign.count; i++) {
        long err = count_district(assign.district[i]);
        if (err < 0) {
            fprintf(stderr, "counter %u: filing a sheet with ledger: %s\n", number, dm_error_text(err));
            return 1;
        }
    }
    return 0;
}

/* Count one district and file its sheet with ledger: 0 or the SEND's error.
 * A function of its own (noinline), so that the analyzer names it. */
static __attribute__((noinline)) long count_district(uint32_t district)
{
    struct census_sheet sheet = { .kind = CENSUS_SHEET, .counter = number, .district = district };
    uint64_t sample;
    sheet.people = census_people(district, CENSUS_STEPS, &sheet.households);
    sheet.check = census_people(district, CENSUS_CHECK_STEPS, &sample);
    summary.districts++;
    summary.people += sheet.people;
    return dm_send(ledger, &sheet, sizeof sheet, DM_NO_LINK);
}

/* CALL ledger to close this counter's books, then send census the summary:
 * 0, or 1 after saying what failed. */
static int close_books(void)
{
    struct sv_call c = { .op = CENSUS_CLOSE, .arg = { number }, .pass = DM_NO_LINK };
    long status = sv_call(ledger, &c);
    if (status < 0) {
        fprintf(stderr, "counter %u: closing the books with ledger: %s\n", number, dm_error_text(status));
        return 1;
    }
    summary.recorded = (uint64_t)c.value;
    long err = dm_send(census, &summary, sizeof summary, DM_NO_LINK);
    if (err < 0) {
        fprintf(stderr, "counter %u: sending census the summary: %s\n", number, dm_error_text(err));
        return 1;
    }
    return 0;
}
