/*
 * analysis/report/tables.c — the communication statistics (models/stats.h)
 * as the HTML report's tables: the same figures `dpm stats` prints
 * (models/stats_output.c), from the same accumulators, one <table> each,
 * each in a section whose id names it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/html.h"
#include "report/sections.h"

/* A share in percent, 0 when the whole is 0. */
static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* A process's label as a table cell, escaped. */
static void label_cell(FILE *f, const struct stats_process *p)
{
    char label[64];
    fputs("<td class=\"name\">", f);
    html_text(f, dpm_label(p->name, p->pid, label, sizeof label));
    fputs("</td>", f);
}

/* A section's start: its id, heading and an explanation (plain text). */
static void section(FILE *f, const char *id, const char *heading, const char *what)
{
    fprintf(f, "<section id=\"%s\">\n<h2>%s</h2>\n<p>%s</p>\n", id, heading, what);
}

/* The processes: records, traffic, lifetime, rate, gaps (as `dpm stats`
 * prints them). */
static void processes_table(FILE *f, const struct stats *st)
{
    section(f, "processes", "Processes",
            "Machine: where its records were written, first&gt;latest if it moved. Lifetime: first to last record, "
            "on the process's machine clock, across a move by the time the move took. Rate: messages sent and "
            "received per second of it. Processes without records only received.");
    fputs("<table id=\"processes-table\">\n<tr><th>#</th><th>process</th><th>machine</th><th>records</th><th>sent</th><th>bytes</th>"
          "<th>received</th><th>bytes</th><th>lifetime (ns)</th><th>rate/s</th><th>gaps</th></tr>\n", f);
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        fprintf(f, "<tr><td>[%zu]</td>", i + 1);
        label_cell(f, p);
        char machines[32];
        fputs("<td>", f);
        html_text(f, stats_machines(st, p, machines, sizeof machines));
        fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td><td>%" PRIu64 "</td>", p->records, p->sent, p->bytes_sent, p->received, p->bytes_received);
        if (p->traced)
            fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu64 "</td></tr>\n", stats_lifetime(p),
                    stats_rate(p), p->gaps);
        else
            fputs("<td>-</td><td>-</td><td>-</td></tr>\n", f);
    }
    fputs("</table>\n</section>\n", f);
}

/* Who talks to whom: messages (bytes = 0) or bytes, rows senders, columns receivers. */
static void matrix_table(FILE *f, const struct stats *st, int bytes)
{
    fprintf(f, "<table class=\"matrix\" id=\"matrix-%s\">\n<caption>%s (row: sender, column: receiver)</caption>\n"
            "<tr><th></th>", bytes ? "bytes" : "messages", bytes ? "bytes" : "messages");
    for (size_t j = 0; j < st->nprocesses; j++)
        if (st->processes[j].received)
            fprintf(f, "<th>[%zu]</th>", j + 1);
    fputs("</tr>\n", f);
    for (size_t i = 0; i < st->nprocesses; i++) {
        if (!st->processes[i].sent)
            continue;
        fprintf(f, "<tr><th>[%zu]</th>", i + 1);
        for (size_t j = 0; j < st->nprocesses; j++) {
            if (!st->processes[j].received)
                continue;
            uint32_t *cell = table_find(&st->pair_index, st->processes[i].pid, st->processes[j].pid);
            if (cell)
                fprintf(f, "<td>%" PRIu64 "</td>", bytes ? st->pairs[*cell].bytes : st->pairs[*cell].messages);
            else
                fputs("<td>-</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Local against remote messages and bytes. */
static void traffic_table(FILE *f, const struct stats *st)
{
    section(f, "traffic", "Local and remote", "The machine a message was sent on against the one its receiver "
            "was on.");
    fprintf(f, "<table id=\"traffic-table\">\n<tr><th></th><th>messages</th><th>%%</th><th>bytes</th><th>%%</th></tr>\n"
            "<tr><th>local</th><td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu64 "</td><td>%.1f</td></tr>\n"
            "<tr><th>remote</th><td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu64 "</td><td>%.1f</td></tr>\n"
            "</table>\n</section>\n", st->local_messages, percent(st->local_messages, st->messages), st->local_bytes,
            percent(st->local_bytes, st->bytes), st->remote_messages, percent(st->remote_messages, st->messages),
            st->remote_bytes, percent(st->remote_bytes, st->bytes));
}

/* A distribution's section, left open: its summary row and its histogram, with a bar per bucket. */
static void distribution(FILE *f, const char *id, const char *heading, const char *what, const char *counted,
                         const struct histogram *h)
{
    section(f, id, heading, what);
    if (h->count == 0) {
        fprintf(f, "<p>No %s.</p>\n", counted);
        return;
    }
    fprintf(f, "<table id=\"%s-summary\">\n<tr><th>%s</th><th>min</th><th>mean</th><th>max</th></tr>\n<tr><td>%"
            PRIu64 "</td><td>%" PRIu64 "</td><td>%.1f</td><td>%" PRIu64 "</td></tr>\n</table>\n", id, counted, h->count,
            h->min, histogram_mean(h), h->max);
    fprintf(f, "<table class=\"histogram\" id=\"%s-histogram\">\n<tr><th>range</th><th>count</th><th>%%</th><th></th></tr>\n", id);
    for (int k = 0; k < HISTOGRAM_BUCKETS; k++) {
        if (!h->bucket[k])
            continue;
        double share = percent(h->bucket[k], h->count);
        fprintf(f, "<tr><td>%" PRIu64 "..%" PRIu64 "</td><td>%" PRIu64 "</td><td>%.1f</td>"
                "<td><span class=\"bar\" style=\"width:%.0fpx\"></span></td></tr>\n", histogram_low(k),
                histogram_high(k), h->bucket[k], share, 2 * share);
    }
    fputs("</table>\n", f);
}

/* The queue lengths of the processes that had a queue. */
static void queue_table(FILE *f, const struct stats *st)
{
    section(f, "queues", "Queue length",
            "+1 at MESSAGEQUEUED, -1 at the RECEIVE of a queued message; the mean weighted by time on the "
            "process's machine clock over its lifetime, and over its changes.");
    fputs("<table id=\"queues-table\">\n<tr><th>#</th><th>process</th><th>max</th><th>time-weighted mean</th><th>event mean</th>"
          "</tr>\n", f);
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->queue_changes)
            continue;
        fprintf(f, "<tr><td>[%zu]</td>", i + 1);
        label_cell(f, p);
        fprintf(f, "<td>%" PRIu64 "</td><td>%.3f</td><td>%.3f</td></tr>\n", p->queue_max, stats_queue_mean(p),
                p->queue_sum / (double)p->queue_changes);
    }
    fputs("</table>\n</section>\n", f);
}

/* Each traced process's CPU time and share. */
static void cpu_table(FILE *f, const struct stats *st)
{
    uint64_t total = stats_total_cpu(st);
    section(f, "cpu", "CPU time", "Instructions: last minus first PROCTIME of each traced process.");
    fprintf(f, "<p>%" PRIu64 " instructions in all.</p>\n<table id=\"cpu-table\">\n<tr><th>#</th><th>process</th><th>CPU</th>"
            "<th>%%</th><th>note</th></tr>\n", total);
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->traced)
            continue;
        fprintf(f, "<tr><td>[%zu]</td>", i + 1);
        label_cell(f, p);
        if (!p->cpu_seen)
            fputs("<td>-</td><td>-</td><td>no PROCTIME in its records</td></tr>\n", f);
        else if (!p->created_first && p->first_proctime > 0)
            fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td><td>its stream starts mid-run at PROCTIME %" PRIu64
                    "</td></tr>\n", stats_cpu(p), percent(stats_cpu(p), total), p->first_proctime);
        else
            fprintf(f, "<td>%" PRIu64 "</td><td>%.1f</td><td></td></tr>\n", stats_cpu(p),
                    percent(stats_cpu(p), total));
    }
    fputs("</table>\n</section>\n", f);
}

/* Thesis Fig. 5.12: per traced process its shares, then its traffic by destination. */
static void figure_table(FILE *f, const struct stats *st)
{
    uint64_t total = stats_total_cpu(st);
    size_t next_pair = 0;
    char to[64];
    section(f, "shares", "Shares and destinations (thesis Fig. 5.12)",
            "Per traced process: its % of all CPU time, of the messages sent and of the bytes sent; then its "
            "messages and bytes by destination.");
    fputs("<table id=\"shares-table\">\n<tr><th>process</th><th>CPU %</th><th>messages %</th><th>bytes %</th><th>to</th>"
          "<th>messages</th><th>bytes</th></tr>\n", f);
    for (size_t i = 0; i < st->nprocesses; i++) {
        const struct stats_process *p = &st->processes[i];
        if (!p->traced)
            continue;
        fputs("<tr class=\"share\">", f);
        label_cell(f, p);
        fprintf(f, "<td>%.1f</td><td>%.1f</td><td>%.1f</td><td></td><td></td><td></td></tr>\n",
                percent(stats_cpu(p), total), percent(p->sent, st->messages), percent(p->bytes_sent, st->bytes));
        while (next_pair < st->npairs && st->pairs[next_pair].from < p->pid)
            next_pair++;
        for (; next_pair < st->npairs && st->pairs[next_pair].from == p->pid; next_pair++) {
            const struct stats_pair *c = &st->pairs[next_pair];
            fputs("<tr class=\"destination\"><td></td><td></td><td></td><td></td><td class=\"name\">", f);
            html_text(f, stats_label(st, c->to, to, sizeof to));
            fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n", c->messages, c->bytes);
        }
    }
    fputs("</table>\n</section>\n", f);
}

/* Each machine by the records written on it, and each move. */
static void machines_table(FILE *f, const struct stats *st)
{
    char label[64];
    section(f, "machines", "Machines", "By the records written on each: a process that moved counts where it was "
            "at each. CPU: the PROCTIME used there. Messages sent from there, local and remote; moves in and out.");
    fputs("<table id=\"machines-table\">\n<tr><th>machine</th><th>processes</th><th>records</th><th>CPU</th>"
          "<th>local</th><th>remote</th><th>moves in</th><th>moves out</th></tr>\n", f);
    for (size_t i = 0; i < st->nmachines; i++) {
        const struct stats_machine *m = &st->machines[i];
        fprintf(f, "<tr><td>%" PRIu32 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n", m->machine, m->processes,
                m->records, m->cpu, m->local, m->remote, m->moves_in, m->moves_out);
    }
    fputs("</table>\n", f);
    if (st->nmoves) {
        fputs("<table id=\"migrations-table\">\n<tr><th>process</th><th>move</th><th>from</th><th>to</th>"
              "<th>time (ns)</th><th>took (ns)</th><th>bytes</th><th>messages</th></tr>\n", f);
        for (size_t i = 0; i < st->nmoves; i++) {
            const struct dpm_move *m = &st->moves[i];
            fputs("<tr><td class=\"name\">", f);
            html_text(f, stats_label(st, m->pid, label, sizeof label));
            fprintf(f, "</td><td>%" PRIu32 "</td><td>%" PRIu32 "</td><td>%" PRIu32 "</td><td>%" PRIu64 "</td><td>%"
                    PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu32 "</td></tr>\n", m->moves, m->from, m->to, m->time,
                    m->took, m->bytes, m->messages);
        }
        fputs("</table>\n<p>Migrations: MIGRATE records. Time: when the process ran again, on the clock of the "
              "machine it reached; took: ns out of execution, from the request to that moment.</p>\n", f);
    }
    fputs("</section>\n", f);
}

/* Every table of `dpm stats`, in its order (report/sections.h). */
void report_stats_tables(FILE *f, const struct report_input *r)
{
    const struct stats *st = &r->stats;
    processes_table(f, st);
    section(f, "matrix", "Who talks to whom", "Messages and bytes of SEND records of status 0, with the heat map "
            "of the messages: the darker a cell, the more messages.");
    report_traffic_heatmap(f, st);
    matrix_table(f, st, 0);
    matrix_table(f, st, 1);
    fputs("</section>\n", f);
    traffic_table(f, st);
    distribution(f, "sizes", "Message sizes", "Bytes per message sent.", "messages", &st->sizes);
    fputs("</section>\n", f);
    queue_table(f, st);
    distribution(f, "waits", "Queue waiting time", "ns: RECEIVE minus MESSAGEQUEUED of the same message, on the "
                 "receiver's clock.", "queued messages", &st->waits);
    fprintf(f, "<p>%" PRIu64 " messages were received without being queued (the receiver was waiting).</p>\n"
            "</section>\n", st->unmatched_receives);
    distribution(f, "blocking", "Receive blocking time", "ns: RECEIVE minus RECEIVECALL, when the message was not "
                 "already queued.", "receives that waited", &st->blocking);
    fprintf(f, "<p>%" PRIu64 " receives found their message already queued.</p>\n</section>\n", st->ready_receives);
    cpu_table(f, st);
    figure_table(f, st);
    machines_table(f, st);
}
