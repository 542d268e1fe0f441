/*
 * analysis/commands/cmd_clocks.c — `dpm clocks`: the machines' clocks set
 * against one another from the messages between them (models/clocks.h),
 * the messages that seem to arrive before they were sent, before and after
 * the correction, how much of the trace happens-before orders
 * (models/vclock.h), and on request every event on the corrected clock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/graph_options.h"
#include "models/vclock.h"

static const char clocks_help[] =
    "NAME\n"
    "    dpm clocks - the machines' clock offsets, backward messages, happens-before\n"
    "\n"
    "SYNOPSIS\n"
    "    dpm clocks [--min-delay NS] [--reference MACHINE] [--events] LOG...\n"
    "\n"
    "DESCRIPTION\n"
    "    Each machine stamps its records with its own clock, and clocks disagree: a message\n"
    "    may seem to arrive before it was sent. From the messages between machines (each SEND\n"
    "    matched to its RECEIVE in the program history graph, the message arriving at its\n"
    "    MESSAGEQUEUED or, if its receiver was waiting, its RECEIVE), dpm clocks estimates how\n"
    "    far each machine's clock reads ahead of the reference machine's, assuming a constant\n"
    "    offset per machine (no drift) and that a message takes at least --min-delay ns. A\n"
    "    message from a to b sent at s and arriving at r says offset(b) - offset(a) <= r - s -\n"
    "    min-delay; the messages of a pair each way bound the pair's difference on both sides,\n"
    "    and over many machines the shortest paths of these constraints give each machine's\n"
    "    interval: every offset in it is allowed by the trace, none outside it. The estimate\n"
    "    is the interval's middle, machine by machine in number order (each fixed before the\n"
    "    next, so that together they satisfy every message); its error is at most the bound,\n"
    "    the distance to the interval's farther end. A process that moved carried its state\n"
    "    from one machine to the other between its last record there and its MIGRATE record\n"
    "    (every record after a move is on its new machine's clock): each move bounds the two\n"
    "    clocks as a message does. If no constant offsets satisfy every message, dpm clocks\n"
    "    says so and gives the offsets that keep every message the least backward (the\n"
    "    slack); the intervals are then no guarantee.\n"
    "\n"
    "    Prints: each machine's offset, interval and bound, and the messages it sent to and\n"
    "    received from other machines; each pair of machines' interval from its own messages\n"
    "    (and moves); the messages whose arrival is earlier than their send, by the machines'\n"
    "    own clocks and by the corrected ones; the moves, if any; and happens-before from\n"
    "    vector timestamps: of the pairs of events (history-graph nodes) of different\n"
    "    processes, how many are ordered and how many concurrent. dpm export --shiviz writes\n"
    "    the vector timestamps.\n"
    "\n"
    "OPTIONS\n"
    "    --min-delay NS      the least time a message between machines takes (default 0)\n"
    "    --reference MACHINE the machine whose clock the others are set against (default: the\n"
    "                        lowest-numbered)\n"
    "    --events            also list every event (history-graph node) on the corrected clock,\n"
    "                        in the order no message runs backward in\n"
    "    --help              this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 done; 1 a log could not be read; 2 usage (an unknown option, a reference machine\n"
    "    with no record).\n";

struct clocks_command_line {
    struct clock_options clock;
    int events;
};

static int clocks_take(void *line, int argc, char **argv, int *i)
{
    struct clocks_command_line *l = line;
    if (strcmp(argv[*i], "--events") == 0)
        return l->events = 1;
    return clock_option(&l->clock, argv[0], argc, argv, i);
}

/* A signed offset, or "-" when unbounded, into out[32]. */
static const char *signed_ns(int64_t ns, char *out)
{
    if (ns == CLOCKS_UNBOUNDED || ns == -CLOCKS_UNBOUNDED)
        snprintf(out, 32, "%s", ns > 0 ? "+inf" : "-inf");
    else
        snprintf(out, 32, "%+" PRId64, ns);
    return out;
}

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* Each machine's offset, interval, bound and messages. */
static void print_machines(const struct clock_model *c)
{
    char low[32], high[32], offset[32], interval[80], bound[32];
    printf("  %8s %16s %36s %14s %9s %9s\n", "machine", "offset (ns)", "interval (ns)", "bound (ns)", "sent",
           "received");
    for (uint32_t m = 0; m < c->nmachines; m++) {
        const struct clock_machine *cm = &c->machine[m];
        if (m == c->reference)
            snprintf(interval, sizeof interval, "(reference)");
        else
            snprintf(interval, sizeof interval, "[%s, %s]", signed_ns(cm->low, low), signed_ns(cm->high, high));
        if (m == c->reference)
            snprintf(bound, sizeof bound, "0");
        else if (cm->bound == CLOCKS_UNBOUNDED)
            snprintf(bound, sizeof bound, "unbounded");
        else
            snprintf(bound, sizeof bound, "%" PRId64, cm->bound);
        printf("  %8" PRIu32 " %16s %36s %14s %9" PRIu64 " %9" PRIu64 "\n", cm->machine,
               m == c->reference ? "0" : signed_ns(cm->offset, offset), interval, bound, cm->sent, cm->received);
    }
}

/* Each pair's interval from its own messages. */
static void print_pairs(const struct clock_model *c)
{
    char low[32], high[32];
    if (!c->npairs)
        return;
    printf("\npairs of machines: offset(b) - offset(a) from their own messages\n");
    printf("  %8s %8s %9s %9s %18s %18s\n", "a", "b", "a->b", "b->a", "low (ns)", "high (ns)");
    for (uint32_t i = 0; i < c->npairs; i++) {
        const struct clock_pair *p = &c->pair[i];
        printf("  %8" PRIu32 " %8" PRIu32 " %9" PRIu64 " %9" PRIu64 " %18s %18s\n", c->machine[p->a].machine,
               c->machine[p->b].machine, p->a_to_b, p->b_to_a, signed_ns(p->low, low), signed_ns(p->high, high));
    }
}

/* The nodes in display order: by display time, then topological place. */
struct listed {
    int64_t at;
    uint32_t place, node;
};

static int by_display(const void *x, const void *y)
{
    const struct listed *a = x, *b = y;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    return a->place < b->place ? -1 : a->place > b->place;
}

/* Every node on the corrected clock. 0, or 1 (no memory). */
static int print_events(const struct graph_input *in, const struct clock_model *c)
{
    const struct history *h = &in->history;
    int64_t *display = malloc((size_t)h->nnodes * sizeof *display + 1);
    struct listed *list = malloc((size_t)h->nnodes * sizeof *list + 1);
    char label[96], other[96];
    if (!display || !list) {
        free(display);
        free(list);
        fprintf(stderr, "dpm clocks: no memory for the list of %u events\n", h->nnodes);
        return EXIT_BAD_INPUT;
    }
    uint64_t moved = clocks_display_times(c, h, display);
    for (uint32_t i = 0; i < h->nnodes; i++)
        list[i] = (struct listed){ display[h->order[i]], i, h->order[i] };
    qsort(list, h->nnodes, sizeof *list, by_display);
    printf("\nevents on the corrected clock (%u; %" PRIu64 " moved later so that no message runs backward)\n",
           h->nnodes, moved);
    printf("  %16s %8s %16s  %-24s %s\n", "corrected (ns)", "machine", "TIME (ns)", "process", "event");
    for (uint32_t i = 0; i < h->nnodes; i++) {
        uint32_t v = list[i].node;
        const struct dpm_event *ev = &in->trace.events[h->event[v]];
        dpm_process_label(&in->trace, in->trace.processes[h->process[v]].pid, label, sizeof label);
        printf("  %16" PRId64 " %8" PRIu32 " %16" PRIu64 "  %-24s ", list[i].at,
               clocks_machine_of(h, h->process[v], ev), ev->time, label);
        if (h->kind[v] == HN_START || h->kind[v] == HN_END)
            printf("%s\n", h->kind[v] == HN_START ? "start" : "end");
        else if (h->kind[v] == HN_MIGRATE)
            printf("MIGRATE from machine %" PRIu32 "\n", dpm_move_of(ev, in->trace.events[h->event[v - 1]].machine).from);
        else
            printf("%s %s %s, message 0x%" PRIx64 "\n", h->kind[v] == HN_SEND ? "SEND" : "RECEIVE",
                   h->kind[v] == HN_SEND ? "to" : "from",
                   (ev->present & EV_OTHER) ? dpm_process_label(&in->trace, ev->other, other, sizeof other) : "?",
                   ev->message_id);
    }
    free(display);
    free(list);
    return EXIT_OK;
}

/* The whole report. */
static int clocks_report(const struct graph_input *in, const struct clock_model *c, int events)
{
    struct vclock_order order;
    printf("clocks of %" PRIu32 " machines from %" PRIu64 " messages between them (reference: machine %" PRIu32
           "; a message takes at least %" PRIu64 " ns)\n", c->nmachines, c->remote,
           c->nmachines ? c->machine[c->reference].machine : 0, c->min_delay);
    if (c->slack)
        printf("no constant offsets satisfy every message (the clocks drift, or --min-delay is too large): by "
               "these, a message may arrive up to %" PRIu64 " ns sooner than the least delay allows (the slack), "
               "and their intervals are no guarantee\n", c->slack);
    else
        printf("constant offsets satisfy every message: each machine's offset lies in its interval\n");
    print_machines(c);
    print_pairs(c);
    printf("\nmessages: %" PRIu64 " matched SEND to RECEIVE, %" PRIu64 " between machines with TIME at both ends, %"
           PRIu64 " without TIME\n", c->messages, c->remote, c->untimed);
    printf("backward (arriving before they were sent): %" PRIu64 " by the machines' own clocks (%" PRIu64
           " within one machine), %" PRIu64 " corrected\n", c->backward_before, c->backward_local, c->backward_after);
    if (c->moves)
        printf("moves: %" PRIu64 " of a process from one machine to another with TIME at both ends (its last "
               "record before the move and its MIGRATE record), each a bound as a message is\n", c->moves);
    if (vclock_order(&in->history, &order) < 0) {
        fprintf(stderr, "dpm clocks: no memory for the vector timestamps\n");
        return EXIT_BAD_INPUT;
    }
    printf("happens-before (vector timestamps): %" PRIu64 " events of %" PRIu32 " processes, %" PRIu64
           " pairs of events in different processes:\n  %" PRIu64 " (%.1f%%) ordered, %" PRIu64 " (%.1f%%) "
           "concurrent\n", order.nodes, in->history.nprocesses, order.pairs, order.ordered,
           percent(order.ordered, order.pairs), order.pairs - order.ordered,
           percent(order.pairs - order.ordered, order.pairs));
    graph_print_notes(in);
    return events ? print_events(in, c) : EXIT_OK;
}

/* `dpm clocks` (the help text above). */
int cmd_clocks(int argc, char **argv)
{
    struct clocks_command_line line = { { 0, -1 }, 0 };
    struct graph_input in;
    struct clock_input c;
    int nlogs = 0, help = 0, status;
    char **logs = calloc((size_t)argc + 1, sizeof *logs);
    status = logs ? graph_arguments("clocks", argc, argv, clocks_take, &line, logs, &nlogs, &help) : EXIT_BAD_INPUT;
    if (help)
        fputs(clocks_help, stdout);
    if (status == EXIT_OK && !help && (status = graph_load(&in, "clocks", logs, nlogs)) == EXIT_OK) {
        if ((status = clock_load(&c, &in, &line.clock, "clocks")) == EXIT_OK) {
            status = clocks_report(&in, &c.clocks, line.events);
            clock_input_free(&c);
        }
        graph_input_free(&in);
    }
    free(logs);
    return status;
}
