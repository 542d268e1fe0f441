/*
 * metertest — the kernel's meter probes and the process manager's metering,
 * checked record by record without a filter server: this
 * process registers a link of its own with the switchboard, has children
 * metered into it, takes the meter batches their kernels send, and
 * compares the records with what the children did. Prints one line per
 * check (`ok NAME` or `not ok NAME: why`) and `metertest: N passed, M failed`.
 *
 *     metertest [@K]        a child (on machine K) making a fixed sequence of
 *                           kernel calls: every record, field by field
 *     metertest flood N [lossy] [slow] [@K]
 *                           a child (on machine K) sending N messages to itself at full
 *                           speed: no gap in its stream, ids matching; with
 *                           `slow` this process stops taking batches for a
 *                           while (lossless: the child waits; lossy: what is
 *                           lost is counted exactly)
 *     metertest attach      a running unmetered server metered from outside,
 *                           stopped, resumed, its flags changed, metering
 *                           stopped; a metered process may not change its own
 *     metertest inherit [-n]  a metered child's child is metered too (with
 *                           -n it is not)
 *     metertest age         a batch goes when its first record is 50 ms old,
 *                           while its process still runs
 *     metertest proctime    a client making a fixed mix of kernel calls (SEND
 *                           to itself and RECEIVE, CALL, links made, copied and
 *                           destroyed, MOVEDATA) and its server, unmetered and
 *                           then metered: each one's PROCTIME is the same within
 *                           0.5 % (the meter's work is the kernel's), and so is
 *                           the client's in its records
 * Internal (the children): metertest child | flooder N | server NAME | spawn |
 *                          worker NAME ROUNDS | echo NAME
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

/* The other children. */

/* Send n messages to itself and take each back. */
static int flood(long n)
{
    static char buf[16];
    struct dm_msg_info info;
    long l = dm_createlink(3, 0, 0, 0, 0);
    for (long i = 0; i < n; i++) {
        dm_send(l, buf, sizeof buf, DM_NO_LINK);
        dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
    }
    return 0;
}

/* Serve under `name`: answer each CALL with 8 bytes (for "self", the
 * result of stopping its own metering); end at "stop". */
static int server(const char *name)
{
    static char buf[64];
    long l = dm_createlink(5, 0, 0, 0, 0);
    long copy = dm_duplicatelink(l);
    if (l < 0 || copy < 0 || sb_register(name, copy) < 0)
        return 2;
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
        if (n >= 4 && memcmp(buf, "stop", 4) == 0)
            return 0;
        int64_t answer = 0;
        if (n >= 4 && memcmp(buf, "self", 4) == 0) {
            struct pm_meter off = { 0 };
            answer = pm_meter(dm_self(), &off);
        }
        if (info.reply >= 0)
            dm_send(info.reply, &answer, sizeof answer, DM_NO_LINK);
    }
}

/* `rounds` rounds of a fixed mix of kernel calls, one with the server
 * `name` (echo); the exit status is this process's PROCTIME over them. */
static int worker(const char *name, long rounds)
{
    static char buf[64];
    struct dm_msg_info info;
    long server = sb_lookup_wait(name, 5000000000ull);
    long self = dm_createlink(3, 0, 0, 0, 0);
    long a = dm_createlink(4, 0, LINK_READ | LINK_WRITE, area, sizeof area);
    if (server < 0 || self < 0 || a < 0)
        return 1;
    uint64_t start = dm_proctime();
    for (long i = 0; i < rounds; i++) {
        dm_send(self, buf, 16, DM_NO_LINK);                    /* SEND, MESSAGEQUEUED */
        dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);    /* RECEIVECALL, RECEIVE */
        dm_call(server, "x", 1, DM_NO_LINK, buf, sizeof buf, &info);   /* SEND, RECEIVECALL, RECEIVE */
        long l = dm_createlink(6, 0, 0, 0, 0);                 /* CREATELINK */
        long d = dm_duplicatelink(l);                          /* CREATELINK */
        dm_destroylink(d);                                     /* DESTROYLINK */
        dm_destroylink(l);                                     /* DESTROYLINK */
        dm_movedata(a, 8, DM_SELF, (uint64_t)(uintptr_t)buf, 16);   /* MOVEDATA */
    }
    uint64_t spent = dm_proctime() - start;
    dm_send(server, "stop", 4, DM_NO_LINK);
    return (int)spent;
}

/* Serve under `name`: answer each CALL with 8 bytes; at "stop", end with
 * this process's PROCTIME from its first request on as the exit status. */
static int echo(const char *name)
{
    static char buf[64];
    long l = dm_createlink(5, 0, 0, 0, 0);
    if (l < 0 || sb_register(name, l) < 0)
        return 1;
    struct dm_msg_info info;
    long n = dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
    uint64_t start = dm_proctime();
    while (n >= 0 && !(n == 4 && memcmp(buf, "stop", 4) == 0)) {
        if (info.reply >= 0)
            dm_send(info.reply, buf, 8, DM_NO_LINK);
        n = dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
    }
    return (int)(dm_proctime() - start);
}

/* Run `metertest flooder 10` and wait for it. */
static int spawn(void)
{
    char *argv[] = { "metertest", "flooder", "10", 0 };
    long pid = pm_run_on(-1, "metertest", 3, argv, 0);
    int64_t status = -1;
    return pid < 0 || pm_wait((dm_pid)pid, &status) < 0 ? 2 : (int)status;
}

/* ---- the checker: streams as the batches bring them ---- */

static char name[sizeof ((struct pm_meter *)0)->filter];   /* ours, at the switchboard */
static int bad_batches;

struct stream {
    dm_pid   pid;
    uint64_t next;               /* the sequence number expected next */
    uint64_t received, lost_said, gaps;
    int      final;
    uint64_t count[METER_NTYPES];
    uint64_t last_send_id, id_mismatches;   /* flood: SEND, MESSAGEQUEUED, RECEIVE of one message */
    uint64_t first_queued_proctime, last_movedata_proctime;   /* proctime: the worker's rounds */
};
#define NSTREAMS 8
static struct stream streams[NSTREAMS];
static int nstreams, keep;       /* keep: the records are kept in records[] too */

static union {
    struct { struct meter_header h; union meter_any_body b; } r;
    uint8_t bytes[METER_RECORD_MAX];
} records[MAX_RECORDS];
static int nrecords;

static struct stream *stream_of(dm_pid pid)
{
    for (int i = 0; i < nstreams; i++)
        if (streams[i].pid == pid)
            return &streams[i];
    if (nstreams == NSTREAMS)
        return 0;
    memset(&streams[nstreams], 0, sizeof streams[0]);
    streams[nstreams].pid = pid;
    return &streams[nstreams++];
}

static void account(struct stream *st, const struct meter_header *h)
{
    if (h->sequence > st->next)
        st->gaps += h->sequence - st->next;
    st->next = h->sequence + 1;
    st->received++;
    if (h->traceType < METER_NTYPES)
        st->count[h->traceType]++;
    if (h->traceType == MT_MESSAGEQUEUED && st->count[MT_MESSAGEQUEUED] == 1)
        st->first_queued_proctime = h->procTime;
    if (h->traceType == MT_MOVEDATA)
        st->last_movedata_proctime = h->procTime;
    const uint64_t *id = (const uint64_t *)(h + 1) + 1;   /* messageId: the second field of these bodies */
    if (h->traceType == MT_SEND)
        st->last_send_id = *id;
    else if ((h->traceType == MT_MESSAGEQUEUED || h->traceType == MT_RECEIVE) && *id != st->last_send_id)
        st->id_mismatches++;
    if (keep && nrecords < MAX_RECORDS)
        memcpy(records[nrecords++].bytes, h, h->length);
}

/* Take one batch over our link; returns its stream (0 if it was bad). */
static struct stream *take_batch(uint64_t *arrived)
{
    static uint8_t message[DM_MSG_MAX];
    struct dm_msg_info info;
    long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
    if (arrived)
        *arrived = dm_clock_ns();
    const struct meter_batch *b = (const struct meter_batch *)message;
    struct stream *st = 0;
    if (n < (long)sizeof *b || !(info.flags & DM_MSG_FROM_KERNEL) || b->magic != METER_BATCH_MAGIC ||
        !(st = stream_of(b->pid))) {
        bad_batches++;
        return 0;
    }
    st->lost_said += b->lost;
    st->final |= b->final;
    uint32_t at = sizeof *b;
    for (int i = 0; i < b->records; i++) {
        const struct meter_header *h = (const struct meter_header *)(message + at);
        if (at + sizeof *h > (uint32_t)n || h->length < sizeof *h || at + h->length > (uint32_t)n ||
            h->pid != b->pid) {
            bad_batches++;
            return 0;
        }
        account(st, h);
        at += h->length;
    }
    if (at != (uint32_t)n)
        bad_batches++;
    return st;
}

static void take_until_final(dm_pid pid)
{
    struct stream *st;
    while (!(st = stream_of(pid)) || !st->final)
        take_batch(0);
}

/* Register our link, as the filter the children are metered into. */
static int setup(void)
{
    snprintf(name, sizeof name, "metertest.%lu", (unsigned long)PID_SLOT(dm_self()));
    long me = dm_createlink(9, 0, 0, 0, 0);
    long copy = dm_duplicatelink(me);
    if (me < 0 || copy < 0 || filter_register(name, copy) < 0) {
        printf("metertest: cannot register %s\n", name);
        return -1;
    }
    return 0;
}

/* Run `metertest ARGS...` as a child metered into us; its pid or an error. */
static long run_metered(uint32_t flags, uint32_t options, uint32_t age_ms, int machine, int argc, char **argv)
{
    struct pm_meter m = { .flags = flags, .options = options, .max_age_ms = age_ms };
    memcpy(m.filter, name, sizeof m.filter);
    long pid = pm_meter_run(&m, machine, "metertest", argc, argv, 0);
    if (pid < 0)
        printf("metertest: cannot run %s metered: %s\n", argv[1], dm_error_name(pid));
    return pid;
}

static int at;      /* the next kept record to check */

/* The next kept record, if it is of `type` (else a failed check and 0). */
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

/* The fixed sequence: every record, field by field. Long on purpose: the
 * records are checked in the order the child makes them. */
static int basic(int machine)
{
    char *child_argv[] = { "metertest", "child", 0 };
    keep = 1;
    long pid = run_metered(METER_ALL_FLAGS, 0, 0, machine, 2, child_argv);
    if (pid < 0)
        return 2;
    dm_pid c = (dm_pid)pid, pm = 0;
    take_until_final(c);
    int64_t status = -1;
    dm_check(pm_wait(c, &status) == 0 && status == CHILD_STATUS, "child.exit.status", "%ld", (long)status);
    struct stream *st = stream_of(c);
    dm_check(nstreams == 1 && st->lost_said == 0 && st->gaps == 0 && bad_batches == 0, "one.stream.nothing.lost",
             "streams %d lost %lu bad batches %d", nstreams, (unsigned long)st->lost_said, bad_batches);

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
    printf("metertest: %d records\n", nrecords);
    return 0;
}

/* N messages at full speed: every record arrives, in order, ids matching;
 * `slow`: we take no batch for half a second meanwhile. Lossless, the
 * child waits for us; lossy, lost = generated - received, exactly. */
static int flood_test(long n, int lossy, int slow, int machine)
{
    char count[24];
    snprintf(count, sizeof count, "%ld", n);
    char *argv[] = { "metertest", "flooder", count, 0 };
    long pid = run_metered(METER_ALL_FLAGS, lossy ? PM_METER_LOSSY : 0, 0, machine, 3, argv);
    if (pid < 0)
        return 2;
    if (slow)
        timer_sleep_ns(500000000);
    take_until_final((dm_pid)pid);
    int64_t status = -1;
    dm_check(pm_wait((dm_pid)pid, &status) == 0 && status == 0, "flood.exit", "status %ld", (long)status);
    struct stream *st = stream_of((dm_pid)pid);
    uint64_t expected = 4 * (uint64_t)n + 8;   /* 4 a message; CREATEPROCESS, STARTPROCESS, CREATELINK, 4 links at exit, DESTROYPROCESS */
    dm_check(bad_batches == 0 && nstreams == 1, "flood.batches.well.formed", "bad %d streams %d", bad_batches, nstreams);
    dm_check(st->next == expected, "flood.records.generated", "%lu generated (want %lu)", (unsigned long)st->next,
             (unsigned long)expected);
    if (!lossy) {
        dm_check(st->received == expected && st->gaps == 0 && st->lost_said == 0, "flood.nothing.lost",
                 "received %lu gaps %lu lost %lu", (unsigned long)st->received, (unsigned long)st->gaps,
                 (unsigned long)st->lost_said);
        dm_check(st->count[MT_SEND] == (uint64_t)n && st->count[MT_MESSAGEQUEUED] == (uint64_t)n &&
                     st->count[MT_RECEIVECALL] == (uint64_t)n && st->count[MT_RECEIVE] == (uint64_t)n,
                 "flood.counts", "SEND %lu MESSAGEQUEUED %lu RECEIVECALL %lu RECEIVE %lu",
                 (unsigned long)st->count[MT_SEND], (unsigned long)st->count[MT_MESSAGEQUEUED],
                 (unsigned long)st->count[MT_RECEIVECALL], (unsigned long)st->count[MT_RECEIVE]);
        dm_check(st->id_mismatches == 0, "flood.message.ids.match", "%lu mismatches", (unsigned long)st->id_mismatches);
    } else {
        dm_check(st->lost_said == st->gaps && st->received + st->lost_said == expected, "flood.lost.counted.exactly",
                 "received %lu + lost %lu = %lu (generated %lu); gaps %lu", (unsigned long)st->received,
                 (unsigned long)st->lost_said, (unsigned long)(st->received + st->lost_said), (unsigned long)expected,
                 (unsigned long)st->gaps);
        dm_check(!slow || st->lost_said > 0, "flood.lossy.lost.some", "lost %lu", (unsigned long)st->lost_said);
    }
    printf("metertest: flood %ld: %lu records received, %lu lost\n", n, (unsigned long)st->received,
           (unsigned long)st->lost_said);
    return 0;
}

/* CALL the server over `link` with `what`; its 8-byte answer. */
static int64_t ask(long link, const char *what)
{
    int64_t answer = -999;
    struct dm_msg_info info;
    long n = dm_call(link, what, strlen(what), DM_NO_LINK, &answer, sizeof answer, &info);
    return n == sizeof answer ? answer : n;
}

static void check_status(long got, long want, const char *what)
{
    dm_check(got == want, what, "%s (want %s)", got ? dm_error_name(got) : "0", want ? dm_error_name(want) : "0");
}

/* Metering attached to a running server, changed, and stopped. Long on
 * purpose: one scenario, step by step. */
static int attach_test(void)
{
    char sname[48];
    snprintf(sname, sizeof sname, "%s.srv", name);
    char *argv[] = { "metertest", "server", sname, 0 };
    long pid = pm_run_on(-1, "metertest", 3, argv, 0);
    long srv = pid < 0 ? pid : sb_lookup_wait(sname, 5000000000ull);
    if (srv < 0) {
        printf("metertest: cannot start the server: %s\n", dm_error_name(srv));
        return 2;
    }
    dm_pid c = (dm_pid)pid;
    struct pm_meter m = { .flags = METER_ALL_FLAGS };
    memcpy(m.filter, name, sizeof m.filter);
    struct pm_meter send_only = { .flags = METER_FLAG(MT_SEND) }, off = { 0 };
    check_status(pm_meter(c, &m), 0, "attach");
    check_status(ask(srv, "echo"), 0, "attach.call");
    check_status(pm_stop(c), 0, "attach.stop");
    check_status(pm_resume(c), 0, "attach.resume");
    check_status(ask(srv, "echo"), 0, "attach.call.again");
    check_status(pm_meter(c, &send_only), 0, "attach.flags");
    check_status(ask(srv, "self"), E_RIGHTS, "metered.process.may.not.change.its.metering");
    check_status(pm_meter(c, &off), 0, "attach.off");
    check_status(ask(srv, "echo"), 0, "attach.call.unmetered");
    keep = 1;
    take_until_final(c);
    /* Metered again: a new stream, numbered from 0 again, that begins with
     * CREATEPROCESS (a filter treats a stream after a final batch as new). */
    int first_session = nrecords;
    stream_of(c)->final = 0;
    check_status(pm_meter(c, &m), 0, "attach.again");
    check_status(ask(srv, "echo"), 0, "attach.again.call");
    check_status(pm_meter(c, &off), 0, "attach.again.off");
    take_until_final(c);
    dm_check(nrecords > first_session && records[first_session].r.h.sequence == 0 &&
                 records[first_session].r.h.traceType == MT_CREATEPROCESS,
             "attach.again.numbered.from.0", "%d records then; the first is type %u, number %lu",
             nrecords - first_session, nrecords > first_session ? records[first_session].r.h.traceType : 0,
             nrecords > first_session ? (unsigned long)records[first_session].r.h.sequence : 0ul);
    nrecords = first_session;          /* what follows checks the first stream */
    dm_send(srv, "stop", 4, DM_NO_LINK);
    int64_t status = -1;
    dm_check(pm_wait(c, &status) == 0 && status == 0, "attach.server.exit", "status %ld", (long)status);

    static const uint32_t want[] = {
        MT_CREATEPROCESS,
        MT_RECEIVE, MT_CREATELINK, MT_SEND, MT_DESTROYLINK, MT_RECEIVECALL,   /* a CALL answered */
        MT_STOPPROCESS, MT_STARTPROCESS,
        MT_RECEIVE, MT_CREATELINK, MT_SEND, MT_DESTROYLINK, MT_RECEIVECALL,
        MT_SEND, MT_SEND,                                                     /* flags: SEND only */
    };
    int n = sizeof want / sizeof want[0], same = nrecords == n;
    for (int i = 0; same && i < n; i++)
        same = records[i].r.h.traceType == want[i];
    char types[200] = "";
    for (int i = 0; i < nrecords && strlen(types) < sizeof types - 8; i++)
        snprintf(types + strlen(types), sizeof types - strlen(types), "%u ", records[i].r.h.traceType);
    dm_check(same, "attach.records", "types %s(want %d records)", types, n);
    if (!same)
        return 0;
    struct meter_header *h = &records[0].r.h;
    dm_check(BODY(h, CREATEPROCESS)->parent == dm_self(), "attach.createprocess.parent", "%lx",
             (unsigned long)BODY(h, CREATEPROCESS)->parent);
    struct meter_RECEIVE *r = BODY(&records[1].r.h, RECEIVE);
    struct meter_CREATELINK *cl = BODY(&records[2].r.h, CREATELINK);
    struct meter_SEND *s = BODY(&records[3].r.h, SEND);
    struct meter_DESTROYLINK *dl = BODY(&records[4].r.h, DESTROYLINK);
    dm_check(r->replySlot >= 0 && r->fromTask == dm_self() && r->size == 4 && cl->how == ML_REPLY &&
                 cl->slot == r->replySlot && cl->flags == LINK_REPLY && s->sendLink == r->replySlot && s->size == 8 &&
                 s->toTask == dm_self() && dl->how == ML_USED && dl->slot == r->replySlot,
             "attach.reply.link.comes.and.is.used", "reply slot %d how %u send link %d", r->replySlot, cl->how,
             s->sendLink);
    dm_check(BODY(&records[6].r.h, STOPPROCESS)->by == dm_self() && BODY(&records[7].r.h, STARTPROCESS)->resumed == 1,
             "attach.stop.by.and.resumed", "by %lx", (unsigned long)BODY(&records[6].r.h, STOPPROCESS)->by);
    dm_check(BODY(&records[13].r.h, SEND)->call == 1 && BODY(&records[14].r.h, SEND)->call == 0,
             "attach.only.sends.after.flags", "call %u then %u", BODY(&records[13].r.h, SEND)->call,
             BODY(&records[14].r.h, SEND)->call);
    return 0;
}

/* A metered process's child is metered into the same filter (not with -n). */
static int inherit_test(int no_children)
{
    char *argv[] = { "metertest", "spawn", 0 };
    long pid = run_metered(METER_ALL_FLAGS, no_children ? PM_METER_NO_CHILDREN : 0, 0, -1, 2, argv);
    if (pid < 0)
        return 2;
    take_until_final((dm_pid)pid);
    int64_t status = -1;
    dm_check(pm_wait((dm_pid)pid, &status) == 0 && status == 0, "inherit.exit", "status %ld", (long)status);
    struct stream *grandchild = nstreams == 2 ? &streams[streams[0].pid == (dm_pid)pid] : 0;
    if (no_children) {
        dm_check(nstreams == 1, "inherit.n.child.unmetered", "%d streams", nstreams);
        return 0;
    }
    dm_check(grandchild && grandchild->final && grandchild->received == 48 && grandchild->gaps == 0 &&
                 grandchild->count[MT_CREATEPROCESS] == 1,
             "inherit.child.metered", "%d streams; grandchild received %lu", nstreams,
             grandchild ? (unsigned long)grandchild->received : 0ul);
    return 0;
}

/* The echo server and a worker of `rounds` rounds with it, metered into us
 * with every event or not; their PROCTIME over the rounds (exit status). */
static int proctime_run(int metered, const char *rounds, int64_t *server_time, int64_t *worker_time)
{
    char sname[48];
    snprintf(sname, sizeof sname, "%s.echo%d", name, metered);
    char *server_argv[] = { "metertest", "echo", sname, 0 };
    char *worker_argv[] = { "metertest", "worker", sname, (char *)rounds, 0 };
    long server = metered ? run_metered(METER_ALL_FLAGS, 0, 0, -1, 3, server_argv)
                          : pm_run_on(-1, "metertest", 3, server_argv, 0);
    long worker = server < 0 ? server
                  : metered ? run_metered(METER_ALL_FLAGS, 0, 0, -1, 4, worker_argv)
                            : pm_run_on(-1, "metertest", 4, worker_argv, 0);
    if (worker < 0)
        return 2;
    if (metered) {
        take_until_final((dm_pid)worker);
        take_until_final((dm_pid)server);
    }
    if (pm_wait((dm_pid)worker, worker_time) < 0 || pm_wait((dm_pid)server, server_time) < 0)
        return 2;
    return 0;
}

/* Metering does not change a process's PROCTIME: the worker's and its
 * server's are the same metered and unmetered, within 0.5 %; and so is the
 * worker's PROCTIME in its records, from its first round's MESSAGEQUEUED
 * to its last round's MOVEDATA (all but a kernel call of the rounds). */
static int proctime_test(void)
{
    int64_t server[2], worker[2];
    if (proctime_run(0, "2000", &server[0], &worker[0]) || proctime_run(1, "2000", &server[1], &worker[1]))
        return 2;

    dm_check(bad_batches == 0 && nstreams == 2 && streams[0].gaps == 0 && streams[1].gaps == 0 &&
                 streams[0].received + streams[1].received > 2000 * 15,
             "proctime.metered.records", "%d streams, %lu and %lu records", nstreams,
             (unsigned long)streams[0].received, (unsigned long)streams[1].received);
    dm_check(worker[0] > 1000000 && 200 * labs(worker[1] - worker[0]) <= worker[0], "proctime.worker.same",
             "%ld metered against %ld unmetered", (long)worker[1], (long)worker[0]);
    dm_check(server[0] > 1000000 && 200 * labs(server[1] - server[0]) <= server[0], "proctime.server.same",
             "%ld metered against %ld unmetered", (long)server[1], (long)server[0]);
    const struct stream *w = streams[0].count[MT_MOVEDATA] ? &streams[0] : &streams[1];
    int64_t in_records = (int64_t)(w->last_movedata_proctime - w->first_queued_proctime);
    printf("metertest: proctime: worker %ld unmetered, %ld metered, %ld in its records; server %ld, %ld\n",
           (long)worker[0], (long)worker[1], (long)in_records, (long)server[0], (long)server[1]);
    dm_check(200 * labs(in_records - worker[0]) <= worker[0], "proctime.records.same",
             "%ld in the records against %ld unmetered", (long)in_records, (long)worker[0]);
    return 0;
}

/* A batch goes when its first record is 50 ms old, its process running on. */
static int age_test(void)
{
    char sname[48];
    snprintf(sname, sizeof sname, "%s.age", name);
    char *argv[] = { "metertest", "server", sname, 0 };
    long pid = run_metered(METER_ALL_FLAGS, 0, 50, -1, 3, argv);
    if (pid < 0)
        return 2;
    keep = 1;
    uint64_t arrived = 0;
    struct stream *st = take_batch(&arrived);
    uint64_t first = nrecords ? records[0].r.h.time : 0, age = arrived - first;
    dm_check(st && !st->final && nrecords >= 3 && age >= 50000000ull && age < 1000000000ull,
             "age.batch.goes.when.50.ms.old", "%d records, final %d, first record %lu ns before", nrecords,
             st ? st->final : -1, (unsigned long)age);
    long srv = sb_lookup_wait(sname, 5000000000ull);
    dm_send(srv, "stop", 4, DM_NO_LINK);
    take_until_final((dm_pid)pid);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc >= 2 ? argv[1] : "";
    if (strcmp(mode, "child") == 0)
        return child();
    if (strcmp(mode, "flooder") == 0 && argc == 3)
        return flood(atol(argv[2]));
    if (strcmp(mode, "server") == 0 && argc == 3)
        return server(argv[2]);
    if (strcmp(mode, "spawn") == 0)
        return spawn();
    if (strcmp(mode, "worker") == 0 && argc == 4)
        return worker(argv[2], atol(argv[3]));
    if (strcmp(mode, "echo") == 0 && argc == 3)
        return echo(argv[2]);
    if (setup() < 0)
        return 2;
    int err;
    if (strcmp(mode, "flood") == 0 && argc >= 3) {
        int lossy = 0, slow = 0, machine = -1;
        for (int i = 3; i < argc; i++) {
            lossy |= strcmp(argv[i], "lossy") == 0;
            slow |= strcmp(argv[i], "slow") == 0;
            if (argv[i][0] == '@')
                machine = atoi(argv[i] + 1);
        }
        err = flood_test(atol(argv[2]), lossy, slow, machine);
    } else if (strcmp(mode, "attach") == 0) {
        err = attach_test();
    } else if (strcmp(mode, "inherit") == 0) {
        err = inherit_test(argc >= 3 && strcmp(argv[2], "-n") == 0);
    } else if (strcmp(mode, "age") == 0) {
        err = age_test();
    } else if (strcmp(mode, "proctime") == 0) {
        err = proctime_test();
    } else {
        err = basic(mode[0] == '@' ? atoi(mode + 1) : -1);
    }
    return err ? err : dm_check_summary("metertest");
}
