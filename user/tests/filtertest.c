/*
 * filtertest — a running filter server (filter/filter.c) seen from a
 * process: it answers FILTER_STATS with all counts zero before any batch,
 * refuses what is not a meter batch from a kernel nor a request it knows
 * (and counts each), writes its log on FILTER_FLUSH, forwards a summary
 * each interval to the link FILTER_FORWARD passes (numbered, empty before
 * any batch) until told to stop, and on FILTER_STOP answers, leaves the
 * switchboard and ends. Batches from kernels are the metering tests' to
 * check.
 *
 *     filtertest [-n] NAME    prints `ok CHECK` / `not ok CHECK: why`, then a summary
 *
 * -n: the filter keeps no log (filter -n): it has written no log block.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "tracelog.h"
#include "summary.h"

#define CHANNEL_SUMMARIES 5

static long filter;   /* a link to the filter under test */

/* A request without data; its status, and the answer's data into stats. */
static long request(uint32_t op, struct filter_stats *stats)
{
    struct sv_call c = { .op = op, .pass = DM_NO_LINK, .reply_data = stats,
                         .reply_cap = stats ? sizeof *stats : 0 };
    return sv_call(filter, &c);
}

/* FILTER_FORWARD every `ms` over `pass`; its status. */
static long forward(int64_t ms, long pass)
{
    struct sv_call c = { .op = FILTER_FORWARD, .arg = { ms }, .pass = pass };
    return sv_call(filter, &c);
}

/* The next summary the filter forwards, into *head; its status (E_NOMSG:
 * none came within about a second). */
static long next_summary(struct meter_summary_head *head)
{
    static uint8_t message[DM_MSG_MAX] __attribute__((aligned(8)));
    for (int tries = 0; tries < 100; tries++) {
        struct dm_msg_info info;
        long n = dm_areceive(&info, message, sizeof message, CHANNEL_SUMMARIES);
        if (n == E_NOMSG) {
            timer_sleep_ns(10000000);
            continue;
        }
        const struct meter_summary_head *h;
        const struct meter_summary_pair *pairs;
        const struct meter_summary_process *processes;
        if (n < 0 || meter_summary_parse(message, (uint32_t)n, &h, &pairs, &processes) < 0)
            return n < 0 ? n : E_BADREQ;
        *head = *h;
        return 0;
    }
    return E_NOMSG;
}

/* The filter forwards a summary every 20 ms to a link of ours, numbered
 * from 0, over an interval of its clock, empty while no batch comes; it
 * refuses an interval out of range and a FORWARD without a link; told to
 * stop, it sends no more. */
static void check_forwarding(void)
{
    long err = forward(20, DM_NO_LINK);
    dm_check(err == E_INVAL, "forward.needs_a_link", "status %s", dm_error_name(err));
    err = forward(5, dm_createlink(CHANNEL_SUMMARIES, 0, 0, 0, 0));
    dm_check(err == E_INVAL, "forward.interval_in_range", "status %s", dm_error_name(err));
    err = forward(20, dm_createlink(CHANNEL_SUMMARIES, 0, 0, 0, 0));
    dm_check(err == 0, "forward.started", "status %s", dm_error_name(err));
    struct meter_summary_head first = { 0 }, second = { 0 };
    err = next_summary(&first);
    long err2 = err ? err : next_summary(&second);
    dm_check(err == 0 && err2 == 0 && first.sequence == 0 && second.sequence == 1 &&
                 first.end_ns > first.begin_ns && second.begin_ns == first.end_ns && first.records == 0 &&
                 first.npairs == 0 && first.nprocesses == 0 && first.machine == dm_machine(),
             "forward.summaries", "status %s %s, sequences %lu %lu, %u records", dm_error_name(err),
             dm_error_name(err2), (unsigned long)first.sequence, (unsigned long)second.sequence, first.records);
    err = forward(0, DM_NO_LINK);
    struct meter_summary_head late;
    while (next_summary(&late) == 0 && late.sequence < second.sequence + 10)
        ;                                   /* one may have been on its way */
    long none = next_summary(&late);
    dm_check(err == 0 && none == E_NOMSG, "forward.stopped", "status %s, then %s", dm_error_name(err),
             dm_error_name(none));
}

static int zero_counts(const struct filter_stats *s)
{
    return s->batches == 0 && s->received == 0 && s->kept == 0 && s->dropped == 0 && s->lost == 0 &&
           s->streams == 0;
}

/* What a process cannot pass for: a meter batch, sent by a process. */
static void send_forged_batch(void)
{
    struct {
        struct meter_batch batch;
        struct meter_header header;
        struct meter_DESTROYPROCESS body;
    } forged = { { METER_BATCH_MAGIC, 1, 1, dm_self(), 0 },
                 { .traceType = MT_DESTROYPROCESS, .length = sizeof forged.header + sizeof forged.body,
                   .pid = dm_self() },
                 { 0 } };
    dm_send(filter, &forged, sizeof forged, DM_NO_LINK);
}

int main(int argc, char **argv)
{
    int no_log = argc == 3 && strcmp(argv[1], "-n") == 0;
    if (argc != 2 + no_log) {
        printf("usage: filtertest [-n] NAME\n");
        return 2;
    }
    const char *name = argv[1 + no_log];
    filter = filter_lookup(name);
    if (filter < 0) {
        printf("filtertest: no filter %s: %s\n", name, dm_error_name(filter));
        return 2;
    }
    struct filter_stats s;
    long err = request(FILTER_STATS, &s);
    dm_check(err == 0 && zero_counts(&s) && s.refused == 0, "stats.zero_before_any_batch",
             "status %ld, refused %lu", err, (unsigned long)s.refused);
    if (no_log)
        dm_check(s.log_blocks == 0, "stats.no_log", "%lu log blocks", (unsigned long)s.log_blocks);
    else
        dm_check(s.log_blocks >= 2, "stats.log_begun", "%lu log blocks: the header and an empty record block",
                 (unsigned long)s.log_blocks);

    send_forged_batch();                          /* no reply link: not a request either */
    uint32_t junk = 7;
    dm_send(filter, &junk, sizeof junk, DM_NO_LINK);
    err = request(99, 0);
    dm_check(err == E_BADREQ, "request.unknown_op", "status %s", dm_error_name(err));
    struct dm_msg_info info;
    struct sv_reply r = { .status = 0 };
    long n = dm_call(filter, &junk, 1, DM_NO_LINK, &r, sizeof r, &info);   /* shorter than a request */
    dm_check(n == (long)sizeof r && r.status == E_BADREQ, "request.too_short", "status %ld", (long)r.status);
    err = request(FILTER_STATS, &s);
    dm_check(err == 0 && s.refused == 4 && zero_counts(&s), "stats.refused_counted",
             "refused %lu batches %lu", (unsigned long)s.refused, (unsigned long)s.batches);

    /* Only a filter the process manager started gets a live trace channel. */
    struct sv_call live = { .op = PM_LIVE, .pass = DM_NO_LINK };
    err = sv_call(SLOT_PM, &live);
    dm_check(err == E_RIGHTS && live.reply_link < 0, "live.only_for_filters", "status %s",
             dm_error_name(err));

    check_forwarding();
    err = request(FILTER_STATS, &s);
    dm_check(err == 0 && s.summaries >= 2 && s.summaries_lost == 0 && s.kept == 0, "stats.summaries_counted",
             "%lu forwarded, %lu lost", (unsigned long)s.summaries, (unsigned long)s.summaries_lost);

    err = request(FILTER_FLUSH, 0);
    dm_check(err == 0, "flush", "status %s", dm_error_name(err));
    err = request(FILTER_STOP, 0);
    dm_check(err == 0, "stop", "status %s", dm_error_name(err));
    long again = filter_lookup(name);
    dm_check(again == E_NOTFOUND, "stop.unregistered", "lookup gave %ld", again);
    return dm_check_summary("filtertest");
}
