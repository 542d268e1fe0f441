/*
 * filtertest — a running filter server (filter/filter.c) seen from a
 * process: it answers FILTER_STATS with all counts zero before any batch,
 * refuses what is not a meter batch from a kernel nor a request it knows
 * (and counts each), writes its log on FILTER_FLUSH, and on FILTER_STOP
 * answers, leaves the switchboard and ends. Batches from kernels are the
 * metering tests' to check.
 *
 *     filtertest NAME    prints `ok CHECK` / `not ok CHECK: why`, then a summary
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "tracelog.h"

static long filter;   /* a link to the filter under test */

/* A request without data; its status, and the answer's data into stats. */
static long request(uint32_t op, struct filter_stats *stats)
{
    struct sv_call c = { .op = op, .pass = DM_NO_LINK, .reply_data = stats,
                         .reply_cap = stats ? sizeof *stats : 0 };
    return sv_call(filter, &c);
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
    if (argc != 2) {
        printf("usage: filtertest NAME\n");
        return 2;
    }
    filter = filter_lookup(argv[1]);
    if (filter < 0) {
        printf("filtertest: no filter %s: %s\n", argv[1], dm_error_name(filter));
        return 2;
    }
    struct filter_stats s;
    long err = request(FILTER_STATS, &s);
    dm_check(err == 0 && zero_counts(&s) && s.refused == 0, "stats.zero_before_any_batch",
             "status %ld, refused %lu", err, (unsigned long)s.refused);
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

    err = request(FILTER_FLUSH, 0);
    dm_check(err == 0, "flush", "status %s", dm_error_name(err));
    err = request(FILTER_STOP, 0);
    dm_check(err == 0, "stop", "status %s", dm_error_name(err));
    long again = filter_lookup(argv[1]);
    dm_check(again == E_NOTFOUND, "stop.unregistered", "lookup gave %ld", again);
    return dm_check_summary("filtertest");
}
