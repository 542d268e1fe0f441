/*
 * census.h — the workload of the questions lab (docs/labs/questions.md):
 * a census of CENSUS_DISTRICTS districts, taken by three programs on three
 * machines, whose messages follow a fixed plan, so that every run makes
 * the same history (only its timing differs).
 *
 *   census (machine 0) starts ledger on machine 0 and a counter on machine 1
 *          and on machine 2, hands the districts out, collects the counters'
 *          summaries and asks ledger for the register;
 *   counter counts each district it is given (count_district) and files a
 *          sheet with ledger for each;
 *   ledger  checks each sheet (check_sheet), keeps the register, answers a
 *          counter's CLOSE, and audits the register (audit) before it
 *          answers census's REPORT with it.
 *
 * The conversation. census registers a link to itself at the switchboard
 * under its name (CENSUS_NAME_FORMAT), then starts the three with that name
 * as their argument; each finds census there and SENDs it a HELLO, passing a
 * link to itself. census SENDs each counter a START, passing a copy of its
 * link to ledger, then an ASSIGN with the counter's districts, passing a link
 * back to census on the counter's own channel (CENSUS_SUMMARY_CHANNEL + its
 * number). A counter SENDs ledger a SHEET per
 * district, then CALLs it with CLOSE (the answer: the people ledger has for
 * it), then SENDs census its SUMMARY over that link. census takes the
 * summaries in the counters' order, CALLs ledger with REPORT (the answer:
 * the register, CENSUS_DISTRICTS entries), SENDs it QUIT, and waits for the
 * three to end (pm_wait), so that it ends last. Nothing waits
 * on a timer and nothing is retried, so each process sends and receives the
 * same messages in every run.
 */
#ifndef CENSUS_H
#define CENSUS_H

#include <stdint.h>

#define CENSUS_DISTRICTS   32
#define CENSUS_STEPS       1600000u   /* xorshift steps of a district's count: about 18 M instructions */
#define CENSUS_CHECK_STEPS 100000u    /* of a sheet's check: about 1 M */
#define CENSUS_AUDIT_STEPS 35000u     /* of the audit of one district of the register: about 0.4 M */
#define CENSUS_SUMMARY_CHANNEL 1      /* the counters' summaries come on channels 1 and 2 */
#define CENSUS_NAME_FORMAT "census.%u.%u"   /* machine and slot of census's pid */

/* Where each process runs, and which counter counts district d: the
 * counter on machine 2 every fourth district, the one on machine 1 the
 * rest. */
#define CENSUS_LEDGER_MACHINE 0
#define CENSUS_COUNTERS      2
static inline uint32_t census_counter_machine(uint32_t counter)
{
    return counter + 1;
}
static inline uint32_t census_counter_of(uint32_t district)
{
    return district % 4 == 3 ? 1 : 0;
}

enum census_kind {
    CENSUS_HELLO = 1,    /* child -> census, passing a link to the child: role, counter number */
    CENSUS_START,        /* census -> counter, passing a link to ledger */
    CENSUS_ASSIGN,       /* census -> counter: its districts; passes a link for the summary */
    CENSUS_SHEET,        /* counter -> ledger: one district counted */
    CENSUS_CLOSE,        /* counter -> ledger, a CALL: answer: the people ledger has for it */
    CENSUS_SUMMARY,      /* counter -> census: what it counted */
    CENSUS_REPORT,       /* census -> ledger, a CALL: answer: the register */
    CENSUS_QUIT,         /* census -> ledger */
};

enum census_role { CENSUS_ROLE_LEDGER = 1, CENSUS_ROLE_COUNTER };

struct census_hello {
    uint32_t kind;       /* CENSUS_HELLO */
    uint32_t role;       /* enum census_role */
    uint32_t counter;    /* a counter's number */
    uint32_t reserved;
};

struct census_assign {
    uint32_t kind;       /* CENSUS_START, CENSUS_ASSIGN */
    uint32_t count;      /* districts in district[] */
    uint32_t district[CENSUS_DISTRICTS];
};

struct census_sheet {
    uint32_t kind;       /* CENSUS_SHEET, CENSUS_CLOSE */
    uint32_t counter;
    uint32_t district;
    uint32_t reserved;
    uint64_t people;
    uint64_t households;
    uint64_t check;      /* the counter's own checksum of the count */
};

struct census_summary {
    uint32_t kind;       /* CENSUS_SUMMARY */
    uint32_t counter;
    uint32_t districts;
    uint32_t reserved;
    uint64_t people;
    uint64_t recorded;   /* what ledger said it has for this counter */
};

/* One district of the register ledger keeps and sends census. */
struct census_entry {
    uint32_t district;
    uint32_t counter;
    uint64_t people;
    uint64_t households;
    uint64_t check;
    uint64_t checked;    /* ledger's check of the sheet */
    uint64_t audited;    /* the audit's count of the district's first CENSUS_AUDIT_STEPS */
    uint64_t reserved[2];
};

/* The census itself: xorshift64 (shifts 13, 7, 17) from the district's
 * seed, a person for each step whose number falls in the lowest sixteenth,
 * a household for each 1024th step that does. The same numbers in any
 * run. */
static inline uint64_t census_people(uint32_t district, uint32_t steps, uint64_t *households)
{
    uint64_t x = (district + 1) * 0x9e3779b97f4a7c15ull, people = 0;
    *households = 0;
    for (uint32_t i = 0; i < steps; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if ((x >> 60) == 0) {
            people++;
            if ((i & 1023) == 0)
                (*households)++;
        }
    }
    return people;
}

#endif
