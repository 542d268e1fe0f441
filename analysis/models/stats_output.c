/*
 * analysis/models/stats_output.c — the statistics as text and as CSV
 * (models/stats_output.h). Every report states the records lost (the logs'
 * own count) and the records missing from the processes' numbering
 * (sequence gaps).
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "load/window.h"
#include "models/stats_output.h"

#define LABEL 32

/* A share in percent, 0 when the whole is 0. */
static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The name of row i of the process table in the report: "[1]", "[2]", ... */
static const char *row_name(size_t i, char out[32])
{
    snprintf(out, 32, "[%zu]", i + 1);
    return out;
}

/* ---- text ---- */

static void text_heading(FILE *out, const struct stats *st, char *const *paths, int npaths)
{
    fputs("dpm stats:", out);
    for (int i = 0; i < npaths; i++)
        fprintf(out, " %s", paths[i]);
    fputc('\n', out);
    if (dpm_window_get())
        fprintf(out, "window: %s\n", dpm_window_describe());
    fprintf(out, "%" PRIu64 " records, %" PRIu64 " lost (as the logs count them), %" PRIu64
            " missing in sequence gaps\n", st->records, st->lost, st->gaps);
    fprintf(out, "%" PRIu64 " messages sent, %" PRIu64 " bytes (SEND records of status 0); %" PRIu64
            " sends failed at once\n", st->messages, st->bytes, st->failed_sends);
}

static void text_processes(FILE *out, const struct stats *st)
{
    fputs("\nProcesses (machine: where its records were written, first>latest if it moved; lifetime: first to\n"
          "last record, on its machine's clock, ns, across a move by the time the move took; rate: messages\n"
          "sent and received per second of that time; processes without records only received)\n", out);
    fprintf(out, "  %-5s %-*s %7s %8s %8s %10s %8s %10s %12s %10s %5s\n", "", LABEL, "process", "machine", "records",
            "sent", "bytes", "received", "bytes", "lifetime", "rate/s", "gaps");
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        char label[64], row[32], machines[32];
        row_name(i, row);
        dpm_label(p->name, p->pid, label, sizeof label);
        fprintf(out, "  %-5s %-*s %7s %8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %8" PRIu64 " %10" PRIu64, row,
                LABEL, label, stats_machines(st, p, machines, sizeof machines), p->records, p->sent, p->bytes_sent,
                p->received, p->bytes_received);
        if (p->traced)
            fprintf(out, " %12" PRIu64 " %10.1f %5" PRIu64 "\n", stats_lifetime(p), stats_rate(p), p->gaps);
        else
            fprintf(out, " %12s %10s %5s\n", "-", "-", "-");
    }
}

/* One matrix of who talks to whom: messages (bytes = 0) or bytes. */
static void text_matrix(FILE *out, const struct stats *st, int bytes)
{
    fprintf(out, "\nWho talks to whom: %s (row: sender, column: receiver)\n", bytes ? "bytes" : "messages");
    fprintf(out, "  %-5s", "");
    for (size_t j = 0; j < st->nprocesses; j++) {
        char column[32];
        if (st->processes[j].received)
            fprintf(out, " %9s", row_name(j, column));
    }
    fputc('\n', out);
    for (size_t i = 0; i < st->nprocesses; i++) {
        if (!st->processes[i].sent)
            continue;
        char row[32];
        fprintf(out, "  %-5s", row_name(i, row));
        for (size_t j = 0; j < st->nprocesses; j++) {
            if (!st->processes[j].received)
                continue;
            uint32_t *cell = table_find(&st->pair_index, st->processes[i].pid, st->processes[j].pid);
            if (cell)
                fprintf(out, " %9" PRIu64, bytes ? st->pairs[*cell].bytes : st->pairs[*cell].messages);
            else
                fprintf(out, " %9s", "-");
        }
        fputc('\n', out);
    }
}

static void text_histogram(FILE *out, const struct histogram *h)
{
    int first = HISTOGRAM_BUCKETS, last = -1;
    for (int k = 0; k < HISTOGRAM_BUCKETS; k++) {
        if (h->bucket[k]) {
            first = first < k ? first : k;
            last = k;
        }
    }
    for (int k = first; k <= last; k++) {
        char range[48];
        if (k == 0)
            snprintf(range, sizeof range, "0");
        else
            snprintf(range, sizeof range, "%" PRIu64 "..%" PRIu64, histogram_low(k), histogram_high(k));
        fprintf(out, "    %-44s %10" PRIu64 "  %5.1f%%\n", range, h->bucket[k], percent(h->bucket[k], h->count));
    }
}

/* A distribution's line (count, min, mean, max) and its histogram. */
static void text_distribution(FILE *out, const char *what, const struct histogram *h)
{
    if (h->count == 0) {
        fprintf(out, "  no %s\n", what);
        return;
    }
    fprintf(out, "  %" PRIu64 " %s: min %" PRIu64 ", mean %.1f, max %" PRIu64 "\n", h->count, what, h->min,
            histogram_mean(h), h->max);
    text_histogram(out, h);
}

static void text_traffic(FILE *out, const struct stats *st)
{
    fputs("\nLocal and remote (the machine a message was sent on against the one its receiver was on)\n", out);
    fprintf(out, "  local:  %" PRIu64 " messages (%.1f%%), %" PRIu64 " bytes (%.1f%%)\n", st->local_messages,
            percent(st->local_messages, st->messages), st->local_bytes, percent(st->local_bytes, st->bytes));
    fprintf(out, "  remote: %" PRIu64 " messages (%.1f%%), %" PRIu64 " bytes (%.1f%%)\n", st->remote_messages,
            percent(st->remote_messages, st->messages), st->remote_bytes, percent(st->remote_bytes, st->bytes));
    fputs("\nMessage sizes (bytes)\n", out);
    text_distribution(out, "messages", &st->sizes);
}

static void text_queues(FILE *out, const struct stats *st)
{
    fputs("\nQueue length (+1 at MESSAGEQUEUED, -1 at the RECEIVE of a queued message; mean weighted by\n"
          "time on the process's machine clock over its lifetime, and over its changes)\n", out);
    fprintf(out, "  %-5s %-*s %8s %14s %12s\n", "", LABEL, "process", "max", "time-weighted", "event mean");
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->queue_changes)
            continue;
        char label[64], row[32];
        row_name(i, row);
        fprintf(out, "  %-5s %-*s %8" PRIu64 " %14.3f %12.3f\n", row, LABEL, dpm_label(p->name, p->pid, label,
                sizeof label), p->queue_max, stats_queue_mean(p), p->queue_sum / (double)p->queue_changes);
    }
    fputs("\nQueue waiting time (ns: RECEIVE - MESSAGEQUEUED of the same message, on the receiver's clock)\n", out);
    text_distribution(out, "queued messages", &st->waits);
    fprintf(out, "  %" PRIu64 " messages were received without being queued (the receiver was waiting)\n",
            st->unmatched_receives);
    fputs("\nReceive blocking time (ns: RECEIVE - RECEIVECALL, when the message was not already queued)\n", out);
    text_distribution(out, "receives that waited", &st->blocking);
    fprintf(out, "  %" PRIu64 " receives found their message already queued\n", st->ready_receives);
}

static void text_cpu(FILE *out, const struct stats *st)
{
    uint64_t total = stats_total_cpu(st);
    fprintf(out, "\nCPU time (instructions: last - first PROCTIME of each process; %" PRIu64 " in all)\n", total);
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->traced)
            continue;
        char label[64], row[32];
        row_name(i, row);
        dpm_label(p->name, p->pid, label, sizeof label);
        if (!p->cpu_seen) {
            fprintf(out, "  %-5s %-*s %14s  (no PROCTIME in its records)\n", row, LABEL, label, "-");
            continue;
        }
        fprintf(out, "  %-5s %-*s %14" PRIu64 " %6.1f%%", row, LABEL, label, stats_cpu(p), percent(stats_cpu(p),
                total));
        if (!p->created_first && p->first_proctime > 0)
            fprintf(out, "  (its stream starts mid-run at PROCTIME %" PRIu64 ": the CPU time before is not counted)",
                    p->first_proctime);
        fputc('\n', out);
    }
}

/* Each machine, by the records written on it. */
static void text_machines(FILE *out, const struct stats *st)
{
    fputs("\nMachines (by the records written on each: a process that moved counts where it was at each;\n"
          "cpu: its PROCTIME used there; sent: messages sent from there, local and remote; moves in and out)\n",
          out);
    fprintf(out, "  %7s %9s %10s %14s %9s %9s %8s %9s\n", "machine", "processes", "records", "cpu", "local",
            "remote", "moves in", "moves out");
    for (size_t i = 0; i < st->nmachines; i++) {
        const struct stats_machine *m = &st->machines[i];
        fprintf(out, "  %7" PRIu32 " %9" PRIu64 " %10" PRIu64 " %14" PRIu64 " %9" PRIu64 " %9" PRIu64 " %8" PRIu64
                " %9" PRIu64 "\n", m->machine, m->processes, m->records, m->cpu, m->local, m->remote, m->moves_in,
                m->moves_out);
    }
}

/* Each move (MIGRATE record), in the order read. */
static void text_moves(FILE *out, const struct stats *st)
{
    if (!st->nmoves)
        return;
    fprintf(out, "\nMigrations (%zu: MIGRATE records; time: when the process ran again, on the clock of the machine\n"
            "it reached; took: ns out of execution, from the request to that moment)\n", st->nmoves);
    fprintf(out, "  %-*s %5s %5s %5s %16s %14s %12s %8s\n", LABEL, "process", "move", "from", "to", "time",
            "took", "bytes", "messages");
    for (size_t i = 0; i < st->nmoves; i++) {
        const struct dpm_move *m = &st->moves[i];
        char label[64];
        fprintf(out, "  %-*s %5" PRIu32 " %5" PRIu32 " %5" PRIu32 " %16" PRIu64 " %14" PRIu64 " %12" PRIu64
                " %8" PRIu32 "\n", LABEL, stats_label(st, m->pid, label, sizeof label), m->moves, m->from, m->to,
                m->time, m->took, m->bytes, m->messages);
    }
}

/* Thesis Fig. 5.12: per traced process, its shares and its traffic by destination. */
static void text_figure(FILE *out, const struct stats *st)
{
    uint64_t total = stats_total_cpu(st);
    fputs("\nShares and destinations (thesis Fig. 5.12: % of all CPU time, of messages sent, of bytes sent)\n", out);
    size_t next_pair = 0;
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->traced)
            continue;
        char label[64], to[64];
        fprintf(out, "  %-*s cpu %5.1f%%  messages %5.1f%%  bytes %5.1f%%\n", LABEL,
                dpm_label(p->name, p->pid, label, sizeof label), percent(stats_cpu(p), total),
                percent(p->sent, st->messages), percent(p->bytes_sent, st->bytes));
        while (next_pair < st->npairs && st->pairs[next_pair].from < p->pid)
            next_pair++;
        for (; next_pair < st->npairs && st->pairs[next_pair].from == p->pid; next_pair++) {
            const struct stats_pair *c = &st->pairs[next_pair];
            fprintf(out, "      to %-*s %8" PRIu64 " messages %10" PRIu64 " bytes\n", LABEL,
                    stats_label(st, c->to, to, sizeof to), c->messages, c->bytes);
        }
    }
}

void report_text(FILE *out, const struct stats *st, char *const *paths, int npaths)
{
    text_heading(out, st, paths, npaths);
    text_processes(out, st);
    text_matrix(out, st, 0);
    text_matrix(out, st, 1);
    text_traffic(out, st);
    text_queues(out, st);
    text_cpu(out, st);
    text_figure(out, st);
    text_machines(out, st);
    text_moves(out, st);
    /* TODO(lab event, part 3): the section of preemptions
     * (docs/labs/event.md). */
}

/* ---- CSV ---- */

/* A text field, quoted when it must be (RFC 4180). */
static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_summary(FILE *f, const struct stats *st)
{
    fputs("name,value\n", f);
    const struct { const char *name; uint64_t value; } rows[] = {
        { "records", st->records }, { "lost", st->lost }, { "gaps", st->gaps },
        { "messages", st->messages }, { "bytes", st->bytes }, { "failed_sends", st->failed_sends },
        { "local_messages", st->local_messages }, { "local_bytes", st->local_bytes },
        { "remote_messages", st->remote_messages }, { "remote_bytes", st->remote_bytes },
        { "queued_messages", st->waits.count }, { "wait_min", st->waits.min }, { "wait_max", st->waits.max },
        { "unqueued_receives", st->unmatched_receives }, { "waited_receives", st->waited_receives },
        { "blocking_min", st->blocking.min }, { "blocking_max", st->blocking.max },
        { "ready_receives", st->ready_receives }, { "cpu_total", stats_total_cpu(st) },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "%s,%" PRIu64 "\n", rows[i].name, rows[i].value);
    fprintf(f, "size_mean,%.3f\nwait_mean,%.3f\nblocking_mean,%.3f\n", histogram_mean(&st->sizes),
            histogram_mean(&st->waits), histogram_mean(&st->blocking));
}

static void csv_processes(FILE *f, const struct stats *st)
{
    uint64_t total = stats_total_cpu(st);
    fputs("row,pid,label,machine,traced,records,gaps,sent,bytes_sent,received,bytes_received,first_time,last_time,"
          "rate_per_s,cpu,cpu_pct,messages_pct,bytes_pct,cpu_from_mid_run,queue_max,queue_time_mean,"
          "queue_event_mean,last_machine,moves\n", f);
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        char label[64], id[24];
        fprintf(f, "%zu,%s,", i + 1, dpm_pid_string(p->pid, id));
        csv_text(f, dpm_label(p->name, p->pid, label, sizeof label));
        fprintf(f, ",%" PRIu32 ",%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64 ",%.3f,%.3f,%.3f,%d,%" PRIu64 ",%.3f,%.3f,%" PRIu32 ",%" PRIu32
                "\n",
                p->machine, p->traced, p->records, p->gaps, p->sent, p->bytes_sent, p->received,
                p->bytes_received, p->first_time, p->last_time, stats_rate(p), stats_cpu(p),
                percent(stats_cpu(p), total), percent(p->sent, st->messages), percent(p->bytes_sent, st->bytes),
                p->cpu_seen && !p->created_first && p->first_proctime > 0, p->queue_max, stats_queue_mean(p),
                p->queue_changes ? p->queue_sum / (double)p->queue_changes : 0.0, p->last_machine, p->moves);
    }
}

static void csv_pairs(FILE *f, const struct stats *st)
{
    fputs("from,from_label,to,to_label,messages,bytes,local,local_messages\n", f);
    for (size_t i = 0; i < st->npairs; i++) {
        const struct stats_pair *c = &st->pairs[i];
        char label[64], id[24];
        fprintf(f, "%s,", dpm_pid_string(c->from, id));
        csv_text(f, stats_label(st, c->from, label, sizeof label));
        fprintf(f, ",%s,", dpm_pid_string(c->to, id));
        csv_text(f, stats_label(st, c->to, label, sizeof label));
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 "\n", c->messages, c->bytes,
                c->local_messages == c->messages, c->local_messages);
    }
}

static void csv_histogram(FILE *f, const struct histogram *h)
{
    fputs("low,high,count\n", f);
    for (int k = 0; k < HISTOGRAM_BUCKETS; k++)
        if (h->bucket[k])
            fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", histogram_low(k), histogram_high(k), h->bucket[k]);
}

/* Write one table into dir/name with `write`; 0, or -1 with *e set. */
static int csv_file(const char *dir, const char *name, const struct stats *st, const struct histogram *h,
                    void (*write)(FILE *, const struct stats *), struct dpm_error *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dpm_output_check(path, e) != 0)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f) {
        dpm_error_set(e, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (write)
        write(f, st);
    else
        csv_histogram(f, h);
    if (ferror(f) | fclose(f)) {
        dpm_error_set(e, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void csv_machines(FILE *f, const struct stats *st)
{
    fputs("machine,processes,records,cpu,local,remote,moves_in,moves_out\n", f);
    for (size_t i = 0; i < st->nmachines; i++) {
        const struct stats_machine *m = &st->machines[i];
        fprintf(f, "%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                m->machine, m->processes, m->records, m->cpu, m->local, m->remote, m->moves_in, m->moves_out);
    }
}

static void csv_moves(FILE *f, const struct stats *st)
{
    fputs("pid,label,move,from,to,time,took,bytes,messages\n", f);
    for (size_t i = 0; i < st->nmoves; i++) {
        const struct dpm_move *m = &st->moves[i];
        char label[64], id[24];
        fprintf(f, "%s,", dpm_pid_string(m->pid, id));
        csv_text(f, stats_label(st, m->pid, label, sizeof label));
        fprintf(f, ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 "\n", m->moves,
                m->from, m->to, m->time, m->took, m->bytes, m->messages);
    }
}

int report_csv(const char *dir, const struct stats *st, struct dpm_error *e)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        dpm_error_set(e, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (csv_file(dir, "summary.csv", st, 0, csv_summary, e) || csv_file(dir, "processes.csv", st, 0, csv_processes, e) ||
        csv_file(dir, "pairs.csv", st, 0, csv_pairs, e) || csv_file(dir, "machines.csv", st, 0, csv_machines, e) ||
        csv_file(dir, "migrations.csv", st, 0, csv_moves, e) || csv_file(dir, "sizes.csv", st, &st->sizes, 0, e) ||
        csv_file(dir, "waits.csv", st, &st->waits, 0, e) || csv_file(dir, "blocking.csv", st, &st->blocking, 0, e))
        return -1;
    return 0;
}
