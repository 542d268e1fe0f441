/*
 * meterbench — what metering costs. This process is the filter:
 * it registers a link with the switchboard and takes the meter batches
 * (counting their records, nothing more: no rules, no log), while a client
 * runs a loop twice, unmetered and then metered into it with every event:
 *
 *   self   the client SENDs a 16-byte message to itself and RECEIVEs it
 *          (4 records a round: SEND, MESSAGEQUEUED, RECEIVECALL, RECEIVE)
 *   call   the client CALLs a server of its own with 8 bytes, which answers
 *          (8 records a round: the client's SEND, RECEIVECALL, RECEIVE; the
 *          server's RECEIVE, CREATELINK and DESTROYLINK of the reply link,
 *          SEND, RECEIVECALL; the server is the client's child and inherits
 *          its metering)
 *
 * The client measures the instructions the machine executes per round
 * (instret: every process and the kernel; exact under -icount). This
 * process measures its own instructions per record taken. From those:
 *
 *   BENCH probe_recorded_instr   the kernel's instructions per record, its
 *                                share of sending the batch included
 *                                ((metered - unmetered) / records, less this
 *                                process's share), from the self loop
 *   BENCH meter_sink_record_instr   this process's instructions per record
 *   BENCH meter_slowdown_msg_local_pct   the call loop, metered against
 *                                unmetered, the filter on the same machine
 *   BENCH meter_slowdown_msg_model_pct   what a model predicts for it:
 *                                records per round x (kernel + filter cost
 *                                per record, from the self loop) / unmetered
 *                                instructions per round
 *
 *     meterbench [ROUNDS]          default 20000
 *     meterbench client SINK ROUNDS self|call    (internal)
 *     meterbench serve NAME                      (internal)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "record.h"

/* What the client tells the sink (an ordinary message, not from a kernel). */
struct report {
    char     what[8];            /* "start" or "result" */
    uint64_t clock;              /* the machine clock then */
    uint64_t instr_per_round;    /* "result" */
};

static char buf[64];

static int serve(const char *name)
{
    long l = dm_createlink(0, 0, 0, 0, 0);
    if (l < 0 || sb_register(name, l) < 0)
        return 1;
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
        if (n <= 0 || info.reply < 0)
            return 0;
        dm_send(info.reply, buf, (uint64_t)n, DM_NO_LINK);
    }
}

static void tell(long sink, const char *what, uint64_t instr)
{
    struct report r = { .clock = dm_clock_ns(), .instr_per_round = instr };
    snprintf(r.what, sizeof r.what, "%s", what);
    while (dm_send(sink, &r, sizeof r, DM_NO_LINK) == E_QFULL)   /* its queue full of batches */
        timer_sleep_ns(1000000);
}

/* `rounds` rounds of the loop. */
static void rounds_of(int call, long target, long rounds)
{
    struct dm_msg_info info;
    for (long i = 0; i < rounds; i++) {
        if (call) {
            dm_call(target, buf, 8, DM_NO_LINK, buf, sizeof buf, &info);
        } else {
            dm_send(target, buf, 16, DM_NO_LINK);
            dm_receive(&info, buf, sizeof buf, DM_ANY_CHANNEL);
        }
    }
}

static int client(const char *sink_name, long rounds, const char *mode)
{
    long sink = filter_lookup(sink_name);
    if (sink < 0)
        return 1;
    int call = strcmp(mode, "call") == 0;
    long target, server_pid = -1;
    if (call) {
        char name[SB_NAME_MAX];
        snprintf(name, sizeof name, "meterbench-%u", PID_SLOT(dm_self()));
        char *argv[] = { "meterbench", "serve", name, 0 };
        server_pid = pm_run("meterbench", 3, argv);
        target = server_pid < 0 ? server_pid : sb_lookup_wait(name, 5000000000ull);
    } else {
        target = dm_createlink(3, 0, 0, 0, 0);
    }
    if (target < 0)
        return 1;
    rounds_of(call, target, 1000);           /* warm up: translate the code paths */
    tell(sink, "start", 0);
    uint64_t start = dm_instret();
    rounds_of(call, target, rounds);
    uint64_t instr = (dm_instret() - start) / (uint64_t)rounds;
    tell(sink, "result", instr);
    if (call) {
        dm_send(target, "", 0, DM_NO_LINK);
        int64_t status;
        pm_wait((dm_pid)server_pid, &status);
    }
    return 0;
}

/* ---- the sink ---- */

static char sink_name[SB_NAME_MAX];

struct run {
    uint64_t instr_per_round;    /* as the client measured it */
    uint64_t records;            /* in all */
    uint64_t loop_records;       /* written while the measured loop ran */
    uint64_t sink_instr;         /* this process's instructions taking the batches */
    uint64_t batches;
};

/* Run the client in `mode`, metered or not; take what comes until it and
 * (call) its server have ended. */
static int run_client(const char *mode, long rounds, int metered, struct run *out)
{
    memset(out, 0, sizeof *out);
    char count[24];
    snprintf(count, sizeof count, "%ld", rounds);
    char *argv[] = { "meterbench", "client", sink_name, count, (char *)mode, 0 };
    struct pm_meter m = { .flags = METER_ALL_FLAGS };
    memcpy(m.filter, sink_name, sizeof m.filter);
    long pid = metered ? pm_meter_run(&m, -1, "meterbench", 5, argv, 0) : pm_run("meterbench", 5, argv);
    if (pid < 0) {
        printf("meterbench: cannot run the client: %s\n", dm_error_name(pid));
        return -1;
    }
    int streams_ended = 0, streams = metered ? (strcmp(mode, "call") == 0 ? 2 : 1) : 0, result = 0;
    uint64_t from = 0, to = UINT64_MAX;
    static uint8_t message[DM_MSG_MAX];
    while (!result || streams_ended < streams) {
        struct dm_msg_info info;
        uint64_t before = dm_proctime();
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0)
            return -1;
        if (!(info.flags & DM_MSG_FROM_KERNEL)) {
            const struct report *r = (const struct report *)message;
            if (strcmp(r->what, "start") == 0)
                from = r->clock;
            else if (strcmp(r->what, "result") == 0) {
                to = r->clock;
                out->instr_per_round = r->instr_per_round;
                result = 1;
            }
            continue;
        }
        const struct meter_batch *b = (const struct meter_batch *)message;
        uint32_t at = sizeof *b;
        for (int i = 0; i < b->records; i++) {
            const struct meter_header *h = (const struct meter_header *)(message + at);
            out->loop_records += h->time >= from && h->time <= to && from;
            at += h->length;
        }
        out->records += b->records;
        out->batches++;
        streams_ended += b->final;
        out->sink_instr += dm_proctime() - before;
    }
    int64_t status;
    pm_wait((dm_pid)pid, &status);
    printf("meterbench: %s loop, %s: %llu instructions a round; %llu records in %llu batches\n", mode,
           metered ? "metered" : "unmetered", (unsigned long long)out->instr_per_round,
           (unsigned long long)out->records, (unsigned long long)out->batches);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "serve") == 0)
        return serve(argv[2]);
    if (argc == 5 && strcmp(argv[1], "client") == 0)
        return client(argv[2], atol(argv[3]), argv[4]);
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    snprintf(sink_name, sizeof sink_name, "meterbench.%u", PID_SLOT(dm_self()));
    long me = dm_createlink(9, 0, 0, 0, 0);
    if (me < 0 || filter_register(sink_name, me) < 0) {
        printf("meterbench: cannot register\n");
        return 1;
    }
    struct run self_plain, self_metered, call_plain, call_metered;
    if (run_client("self", rounds, 0, &self_plain) < 0 || run_client("self", rounds, 1, &self_metered) < 0 ||
        run_client("call", rounds, 0, &call_plain) < 0 || run_client("call", rounds, 1, &call_metered) < 0)
        return 1;
    double self_records = (double)self_metered.loop_records / rounds;
    double call_records = (double)call_metered.loop_records / rounds;
    double sink_per_record = (double)self_metered.sink_instr / self_metered.records;
    double extra = (double)self_metered.instr_per_round - (double)self_plain.instr_per_round;
    double recorded = (extra - sink_per_record * self_records) / self_records;
    double slowdown = 100.0 * ((double)call_metered.instr_per_round - call_plain.instr_per_round) /
                      call_plain.instr_per_round;
    double model = 100.0 * call_records * (recorded + sink_per_record) / call_plain.instr_per_round;
    printf("meterbench: self loop %llu -> %llu instructions a round, %.2f records a round, %llu batches\n",
           (unsigned long long)self_plain.instr_per_round, (unsigned long long)self_metered.instr_per_round,
           self_records, (unsigned long long)self_metered.batches);
    printf("meterbench: call loop %llu -> %llu instructions a round, %.2f records a round, %llu batches\n",
           (unsigned long long)call_plain.instr_per_round, (unsigned long long)call_metered.instr_per_round,
           call_records, (unsigned long long)call_metered.batches);
    printf("BENCH probe_recorded_instr %.0f instructions\n", recorded);
    printf("BENCH meter_sink_record_instr %.0f instructions\n", sink_per_record);
    printf("BENCH meter_records_per_call_rtt %.2f records\n", call_records);
    printf("BENCH meter_slowdown_msg_local_pct %.1f %%\n", slowdown);
    printf("BENCH meter_slowdown_msg_model_pct %.1f %%\n", model);
    return 0;
}
