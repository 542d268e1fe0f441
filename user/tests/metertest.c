/*
 * metertest — the kernel's meter probes and the process manager's metered
 * creation (issue 5), checked record by record without a filter server:
 * this process registers a link of its own with the switchboard, runs a
 * child metered into it, takes the meter batches the child's kernel sends,
 * and compares every record with what the child did. Prints one line per
 * check (`ok NAME` or `not ok NAME: why`) and `metertest: N passed, M failed`.
 *
 *     metertest [@K]     the child on machine K (default: this one)
 *     metertest child    the child (internal): a fixed sequence of kernel
 *                        calls, then exit status 7
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "record.h"

#define MAX_RECORDS 256
#define CHILD_STATUS 7

/* ---- the child: what it does is what the records must say ---- */

static char area[64];

static int child(void)
{
    static char buf[64];
    struct dm_msg_info info;
    long l = dm_createlink(3, 77, 0, 0, 0);                   /* CREATELINK how=CREATELINK */
    long d = dm_duplicatelink(l);                              /* CREATELINK how=DUPLICATE */
    dm_send(l, buf, 10, DM_NO_LINK);                           /* SEND 10, MESSAGEQUEUED 1 */
    dm_send(l, buf, 20, d);                                    /* SEND 20 passing d, MESSAGEQUEUED 2, DESTROYLINK PASSED */
    dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);        /* RECEIVECALL, RECEIVE 10 */
    dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);        /* RECEIVECALL, RECEIVE 20, CREATELINK ARRIVED */
    long arrived = info.link;
    dm_areceive(&info, buf, sizeof buf, DM_ANY_CHANNEL);       /* RECEIVECALL empty */
    dm_send(40, buf, 1, DM_NO_LINK);                           /* an empty slot: no record */
    dm_destroylink(arrived);                                   /* DESTROYLINK how=DESTROYLINK */
    int64_t status;
    pm_wait(0, &status);                                       /* a CALL: SEND call=1, RECEIVECALL kind 2, RECEIVE */
    long a = dm_createlink(4, 0, LINK_READ | LINK_WRITE, area, sizeof area);   /* CREATELINK */
    dm_movedata(a, 8, DM_SELF, (uint64_t)(uintptr_t)buf, 16); /* MOVEDATA 16 */
    (void)a;
    return CHILD_STATUS;                                       /* DESTROYLINK EXIT for each, DESTROYPROCESS */
}

/* ---- the checker ---- */

static union {
    struct { struct meter_header h; union meter_any_body b; } r;
    uint8_t bytes[METER_RECORD_MAX];
} records[MAX_RECORDS];
static int nrecords, batches, finals;
static uint64_t lost;

/* Take batches until the child's last one; keep its records in order. */
static void collect(long link_channel, dm_pid child_pid)
{
    static uint8_t message[DM_MSG_MAX];
    (void)link_channel;
    while (!finals) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0 || !(info.flags & DM_MSG_FROM_KERNEL)) {
            dm_check(0, "only.kernels.send.batches", "n=%ld flags=%x", n, info.flags);
            continue;
        }
        const struct meter_batch *b = (const struct meter_batch *)message;
        dm_check(b->magic == METER_BATCH_MAGIC && b->pid == child_pid, "batch.header", "magic %x pid %lx",
                 b->magic, (unsigned long)b->pid);
        batches++;
        finals += b->final;
        lost += b->lost;
        uint32_t at = sizeof *b;
        for (int i = 0; i < b->records && at + sizeof(struct meter_header) <= (uint32_t)n; i++) {
            const struct meter_header *h = (const struct meter_header *)(message + at);
            if (h->length < sizeof *h || at + h->length > (uint32_t)n || nrecords == MAX_RECORDS)
                break;
            memcpy(records[nrecords++].bytes, h, h->length);
            at += h->length;
        }
        dm_check(at == (uint32_t)n, "batch.length", "records end at %u of %ld", at, n);
    }
}

static int at;      /* the next record to check */

/* The next record, if it is of `type` (else a failed check and 0). */
static struct meter_header *expect(uint32_t type, const char *what)
{
    if (at >= nrecords) {
        dm_check(0, what, "no more records (%d)", nrecords);
        return 0;
    }
    struct meter_header *h = &records[at].r.h;
    if (h->traceType != type) {
        dm_check(0, what, "record %d is type %u, not %u", at, h->traceType, type);
        return 0;
    }
    at++;
    return h;
}
#define BODY(h, T) ((struct meter_##T *)((h) + 1))

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "child") == 0)
        return child();
    int machine = argc >= 2 && argv[1][0] == '@' ? atoi(argv[1] + 1) : -1;
    char name[sizeof ((struct pm_meter *)0)->filter];
    snprintf(name, sizeof name, "metertest.%lu", (unsigned long)PID_SLOT(dm_self()));
    long me = dm_createlink(9, 0, 0, 0, 0);
    long copy = dm_duplicatelink(me);
    if (me < 0 || copy < 0 || sb_register(name, copy) < 0) {
        printf("metertest: cannot register %s\n", name);
        return 2;
    }
    struct pm_meter m = { .flags = METER_ALL_FLAGS };
    memcpy(m.filter, name, sizeof m.filter);
    char *child_argv[] = { "metertest", "child", 0 };
    long pid = pm_meter_run(&m, machine, "metertest", 2, child_argv, 0);
    if (pid < 0) {
        printf("metertest: cannot run the child metered: %s\n", dm_error_name(pid));
        return 2;
    }
    dm_pid c = (dm_pid)pid, pm = 0;
    collect(9, c);
    int64_t status = -1;
    dm_check(pm_wait(c, &status) == 0 && status == CHILD_STATUS, "child.exit.status", "%ld", (long)status);
    dm_check(finals == 1 && lost == 0, "one.final.batch.nothing.lost", "finals %d lost %lu", finals,
             (unsigned long)lost);

    /* Every record: the child's stream, numbered 0.. without a gap, its
     * machine's, in time order (CREATEPROCESS is stamped at creation). */
    int numbered = 1, ordered = 1, mine = 1;
    for (int i = 0; i < nrecords; i++) {
        struct meter_header *h = &records[i].r.h;
        numbered &= h->sequence == (uint64_t)i;
        mine &= h->pid == c && h->machine == PID_MACHINE(c);
        ordered &= i == 0 || h->time >= records[i - 1].r.h.time;
    }
    dm_check(numbered, "records.numbered.without.gap", "%d records", nrecords);
    dm_check(mine, "records.are.the.childs", "%d records", nrecords);
    dm_check(ordered, "records.in.time.order", "%d records", nrecords);

    struct meter_header *h;
    if ((h = expect(MT_CREATEPROCESS, "createprocess")))
        dm_check(BODY(h, CREATEPROCESS)->parent == dm_self() && memcmp(&BODY(h, CREATEPROCESS)->nameLow, "metertest", 10) == 0,
                 "createprocess", "parent %lx", (unsigned long)BODY(h, CREATEPROCESS)->parent);
    if ((h = expect(MT_STARTPROCESS, "startprocess")))
        dm_check(BODY(h, STARTPROCESS)->resumed == 0, "startprocess", "resumed %u", BODY(h, STARTPROCESS)->resumed);
    int32_t l = -1, d = -1;
    if ((h = expect(MT_CREATELINK, "createlink"))) {
        struct meter_CREATELINK *b = BODY(h, CREATELINK);
        l = b->slot;
        dm_check(b->how == ML_CREATELINK && b->toTask == c && b->channel == 3 && b->code == 77, "createlink",
                 "how %u channel %u code %lu", b->how, b->channel, (unsigned long)b->code);
    }
    if ((h = expect(MT_CREATELINK, "duplicatelink"))) {
        d = BODY(h, CREATELINK)->slot;
        dm_check(BODY(h, CREATELINK)->how == ML_DUPLICATE && d != l, "duplicatelink", "how %u", BODY(h, CREATELINK)->how);
    }
    uint64_t id[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        uint32_t size = k ? 20 : 10;
        if ((h = expect(MT_SEND, k ? "send.passing" : "send"))) {
            struct meter_SEND *b = BODY(h, SEND);
            id[k] = b->messageId;
            dm_check(b->toTask == c && b->size == size && b->sendLink == l && b->passLink == (k ? d : -1) &&
                         b->call == 0 && b->status == 0 && b->channel == 3 && b->code == 77 && b->messageId &&
                         b->passTask == (k ? c : 0) && h->pc != 0,
                     k ? "send.passing" : "send", "size %u link %d pass %d id %lx", b->size, b->sendLink,
                     b->passLink, (unsigned long)b->messageId);
        }
        if ((h = expect(MT_MESSAGEQUEUED, "messagequeued"))) {
            struct meter_MESSAGEQUEUED *b = BODY(h, MESSAGEQUEUED);
            dm_check(b->messageId == id[k] && b->size == size && b->queueLength == (uint32_t)k + 1 && b->fromTask == c,
                     "messagequeued", "id %lx length %u", (unsigned long)b->messageId, b->queueLength);
        }
    }
    if ((h = expect(MT_DESTROYLINK, "passed.link.leaves")))
        dm_check(BODY(h, DESTROYLINK)->slot == d && BODY(h, DESTROYLINK)->how == ML_PASSED, "passed.link.leaves",
                 "slot %d how %u", BODY(h, DESTROYLINK)->slot, BODY(h, DESTROYLINK)->how);
    int32_t arrived = -1;
    for (int k = 0; k < 2; k++) {
        if ((h = expect(MT_RECEIVECALL, "receivecall")))
            dm_check(BODY(h, RECEIVECALL)->kind == 0 && BODY(h, RECEIVECALL)->channel == DM_ANY_CHANNEL &&
                         !BODY(h, RECEIVECALL)->empty, "receivecall", "kind %u", BODY(h, RECEIVECALL)->kind);
        if ((h = expect(MT_RECEIVE, "receive"))) {
            struct meter_RECEIVE *b = BODY(h, RECEIVE);
            arrived = b->linkSlot;
            dm_check(b->messageId == id[k] && b->size == (k ? 20u : 10u) && b->fromTask == c &&
                         (k ? b->linkSlot >= 0 : b->linkSlot == -1) && b->replySlot == -1,
                     "receive.matches.send", "id %lx size %u link %d", (unsigned long)b->messageId, b->size,
                     b->linkSlot);
        }
    }
    if ((h = expect(MT_CREATELINK, "link.arrives")))
        dm_check(BODY(h, CREATELINK)->how == ML_ARRIVED && BODY(h, CREATELINK)->slot == arrived, "link.arrives",
                 "how %u slot %d", BODY(h, CREATELINK)->how, BODY(h, CREATELINK)->slot);
    if ((h = expect(MT_RECEIVECALL, "areceive.empty")))
        dm_check(BODY(h, RECEIVECALL)->kind == 1 && BODY(h, RECEIVECALL)->empty == 1, "areceive.empty", "kind %u empty %u",
                 BODY(h, RECEIVECALL)->kind, BODY(h, RECEIVECALL)->empty);
    if ((h = expect(MT_DESTROYLINK, "destroylink")))
        dm_check(BODY(h, DESTROYLINK)->how == ML_DESTROYLINK && BODY(h, DESTROYLINK)->slot == arrived, "destroylink",
                 "how %u", BODY(h, DESTROYLINK)->how);
    if ((h = expect(MT_SEND, "call.send"))) {
        struct meter_SEND *b = BODY(h, SEND);
        pm = b->toTask;
        dm_check(b->call == 1 && b->sendLink == SLOT_PM && b->status == 0 && PID_SLOT(pm) != 0, "call.send",
                 "call %u link %d", b->call, b->sendLink);
        id[0] = b->messageId;
    }
    if ((h = expect(MT_RECEIVECALL, "call.receivecall")))
        dm_check(BODY(h, RECEIVECALL)->kind == 2 && BODY(h, RECEIVECALL)->channel == DM_REPLY_CHANNEL,
                 "call.receivecall", "kind %u", BODY(h, RECEIVECALL)->kind);
    if ((h = expect(MT_RECEIVE, "call.answer")))
        dm_check(BODY(h, RECEIVE)->fromTask == pm && BODY(h, RECEIVE)->channel == DM_REPLY_CHANNEL &&
                     BODY(h, RECEIVE)->messageId != id[0] && BODY(h, RECEIVE)->messageId != 0,
                 "call.answer", "from %lx", (unsigned long)BODY(h, RECEIVE)->fromTask);
    int32_t a = -1;
    if ((h = expect(MT_CREATELINK, "area.link"))) {
        a = BODY(h, CREATELINK)->slot;
        dm_check(BODY(h, CREATELINK)->flags == (LINK_READ | LINK_WRITE), "area.link", "flags %x",
                 BODY(h, CREATELINK)->flags);
    }
    if ((h = expect(MT_MOVEDATA, "movedata")))
        dm_check(BODY(h, MOVEDATA)->size == 16 && BODY(h, MOVEDATA)->toLink == a && BODY(h, MOVEDATA)->fromLink == DM_SELF &&
                     BODY(h, MOVEDATA)->toTask == c && BODY(h, MOVEDATA)->fromTask == c,
                 "movedata", "size %lu to %d from %d", (unsigned long)BODY(h, MOVEDATA)->size,
                 BODY(h, MOVEDATA)->toLink, BODY(h, MOVEDATA)->fromLink);
    /* At exit: its live links (PM, switchboard, console, l, a), each once. */
    int exits = 0;
    while (at < nrecords && records[at].r.h.traceType == MT_DESTROYLINK) {
        struct meter_DESTROYLINK *b = BODY(&records[at].r.h, DESTROYLINK);
        exits += b->how == ML_EXIT;
        at++;
    }
    dm_check(exits == 5, "links.dropped.at.exit", "%d DESTROYLINK records at exit (want 5)", exits);
    if ((h = expect(MT_DESTROYPROCESS, "destroyprocess")))
        dm_check(BODY(h, DESTROYPROCESS)->status == CHILD_STATUS, "destroyprocess", "status %ld",
                 (long)BODY(h, DESTROYPROCESS)->status);
    dm_check(at == nrecords, "no.other.records", "%d of %d records checked", at, nrecords);
    printf("metertest: %d records in %d batches\n", nrecords, batches);
    return dm_check_summary("metertest");
}
