/*
 * analysis/commands/cmd_export.c — `dpm export`: a trace in formats that
 * existing viewers read: Chrome/Perfetto trace-event JSON (a timeline per
 * process, message arrows, on one time axis: models/timeline.h), Graphviz
 * DOT (the communication graph, its hot spots in red), and the statistics'
 * CSV tables (models/stats_output.c).
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "load/table.h"
#include "models/stats.h"
#include "models/stats_output.h"
#include "models/timeline.h"
#include "tracelog.h"

static const char export_help[] =
"NAME\n"
"    dpm export - a trace as Perfetto/Chrome JSON, Graphviz DOT, CSV\n"
"\n"
"SYNOPSIS\n"
"    dpm export [--perfetto OUT.json] [--dot OUT.dot] [--csv DIR] LOG...\n"
"\n"
"DESCRIPTION\n"
"    Writes each output asked for (at least one) from the LOGs, read as\n"
"    one trace.\n"
"\n"
"    --perfetto OUT.json\n"
"        The Trace Event Format that ui.perfetto.dev, chrome://tracing and\n"
"        Chrome DevTools open: a process per machine (\"machine M\") and in it\n"
"        a thread per traced process, named by its label. Each SEND and\n"
"        RECEIVE is a 1 ns slice, a receive that waited a slice \"waiting\"\n"
"        from its RECEIVECALL to its RECEIVE, every other record an instant;\n"
"        each record's fields are its args (\"time\": its machine's clock).\n"
"        A message whose SEND and RECEIVE are both in the trace is an arrow\n"
"        (a flow start and its finish, with an id of their own, 1, 2, ...);\n"
"        a message to or from a process without records has none.\n"
"        Times (ts, dur) are integer nanoseconds of guest time, written\n"
"        where the format has microseconds, so that no viewer rounds them:\n"
"        a viewer's microsecond is a guest nanosecond. The slices of a\n"
"        thread are disjoint (one that would start before the one before it\n"
"        ends, at the same nanosecond, starts at its end). Each machine's\n"
"        clock is shifted by a constant, chosen so that the most messages\n"
"        between machines arrive after they were sent (the shifts are in\n"
"        the process names and in otherData.clockShiftNs); the clocks run\n"
"        at different rates, and when some messages still arrive before\n"
"        they were sent, dpm export says how many: viewers that order a\n"
"        trace by time (Perfetto) draw no arrow for them. Events are in the\n"
"        order of time, but a flow's finish never before its start. The\n"
"        whole trace is read into memory.\n"
"    --dot OUT.dot\n"
"        The communication graph (DPM's \"who talks to whom\"): a box per\n"
"        traced process, an ellipse per process that was only sent to,\n"
"        grouped in a cluster per machine; an edge per pair that talked,\n"
"        labelled with its messages and bytes, wider the more messages it\n"
"        carried and from blue to red the more bytes (the hot spots).\n"
"        Render it with: dot -Tsvg OUT.dot > OUT.svg\n"
"    --csv DIR\n"
"        The tables of `dpm stats --csv DIR` (see dpm stats --help).\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 bad input (a damaged log names the file and record) or\n"
"    an output that cannot be written, 2 bad usage.\n"
"\n"
"EXAMPLE\n"
"    dpm export --perfetto run1.json --dot run1.dot --csv run1-tables run1.log\n";

/* A label inside a quoted string of JSON or DOT: program names come from
 * the trace, so a quote, a backslash or a control character is escaped
 * or blanked. */
static void put_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc((unsigned char)*s < ' ' ? ' ' : *s, f);
    }
}

/* ---- Perfetto / Chrome JSON ---- */

/* A trace event to write, in the order of `kind` at one time. */
enum item_kind { ITEM_WAITING, ITEM_SLICE, ITEM_FLOW_START, ITEM_FLOW_FINISH, ITEM_INSTANT };

/* One trace event of the JSON. `order` is where it goes in the file: its
 * time, but a flow's finish never before its start, for the viewers that
 * pair a flow's events in the order of the file. */
struct item {
    uint64_t order, ts, dur;   /* ns on the shared axis (models/timeline.h) */
    uint32_t event;            /* its record in the trace (a waiting slice: the RECEIVE ending it) */
    uint32_t track;            /* its process's index in the trace: tid - 1 */
    uint32_t flow;             /* a flow's id: its message's number, from 1 */
    uint32_t seq;              /* the order it was made in: the last tie-break */
    uint8_t kind;
};

struct perfetto {
    FILE *out;
    const struct dpm_trace *trace;
    struct timeline timeline;
    struct item *items;
    size_t nitems, capacity;
    uint64_t *slice_at;        /* [nevents]: where a SEND's or RECEIVE's slice starts, or NO_SLICE */
};

#define NO_SLICE UINT64_MAX

static void add_item(struct perfetto *p, uint8_t kind, uint64_t order, uint64_t ts, uint64_t dur, uint32_t event,
                     uint32_t track, uint32_t flow)
{
    p->items = array_grow(p->items, &p->capacity, p->nitems, sizeof *p->items);
    p->items[p->nitems] = (struct item){ order, ts, dur, event, track, flow, (uint32_t)p->nitems, kind };
    p->nitems++;
}

/* Process `track`'s events, in the order of its stream: each SEND and
 * RECEIVE a 1 ns slice, a receive that waited a slice "waiting" from its
 * RECEIVECALL, every other record an instant. A slice starts no earlier
 * than the one before it ends, so that the slices of a track are disjoint
 * even where two records bear the same time. */
static void track_items(struct perfetto *p, uint32_t track)
{
    const struct dpm_process *process = &p->trace->processes[track];
    uint64_t end = 0, call_time = 0;
    int calling = 0;
    for (uint32_t i = 0; i < process->count; i++) {
        uint32_t e = p->trace->by_process[process->first + i];
        const struct dpm_event *ev = &p->trace->events[e];
        if (!(ev->present & EV_TIME))
            continue;
        uint64_t at = timeline_time(&p->timeline, ev), from;
        if (ev->type == MT_RECEIVECALL) {
            calling = !ev->flag;
            call_time = at;
        }
        if (ev->type == MT_RECEIVE && calling && (from = call_time > end ? call_time : end) < at) {
            add_item(p, ITEM_WAITING, from, from, at - from, e, track, 0);
            end = at;
        }
        if (ev->type == MT_RECEIVE)
            calling = 0;
        if (ev->type == MT_SEND || ev->type == MT_RECEIVE) {
            from = at > end ? at : end;
            add_item(p, ITEM_SLICE, from, from, 1, e, track, 0);
            p->slice_at[e] = from;
            end = from + 1;
        } else {
            add_item(p, ITEM_INSTANT, at, at, 0, e, track, 0);
        }
    }
}

/* The arrows: a flow per message whose SEND and RECEIVE are both in the
 * trace, from the SEND's slice to the RECEIVE's (bound to the slice that
 * encloses it), and no other. */
static void flow_items(struct perfetto *p)
{
    for (uint32_t i = 0; i < p->timeline.nmessages; i++) {
        const struct timeline_message *m = &p->timeline.message[i];
        uint64_t start = p->slice_at[m->send], finish = p->slice_at[m->receive];
        if (start == NO_SLICE || finish == NO_SLICE)
            continue;
        const struct dpm_process *from = dpm_trace_process(p->trace, p->trace->events[m->send].pid);
        const struct dpm_process *to = dpm_trace_process(p->trace, p->trace->events[m->receive].pid);
        add_item(p, ITEM_FLOW_START, start, start, 0, m->send, (uint32_t)(from - p->trace->processes), i + 1);
        add_item(p, ITEM_FLOW_FINISH, finish > start ? finish : start, finish, 0, m->receive,
                 (uint32_t)(to - p->trace->processes), i + 1);
    }
}

static int by_order(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *type_name(uint32_t type)
{
    const struct meter_layout *l = meter_body_layout(type);
    return l ? l->name : "record";
}

/* The record's fields as args: its machine's own clock among them. */
static void put_args(FILE *f, const struct dpm_event *ev)
{
    char other[64];
    fprintf(f, ",\"args\":{\"time\":%" PRIu64 ",\"sequence\":%" PRIu64 ",\"procTime\":%" PRIu64
            ",\"pc\":\"0x%" PRIx64 "\"", ev->time, ev->sequence, ev->proctime, ev->pc);
    if (ev->present & EV_OTHER)
        fprintf(f, ",\"other\":\"%s\"", dpm_label("", ev->other, other, sizeof other));
    if (ev->present & EV_SIZE)
        fprintf(f, ",\"size\":%" PRIu64, ev->size);
    if (ev->present & EV_MESSAGE_ID)
        fprintf(f, ",\"messageId\":\"0x%" PRIx64 "\"", ev->message_id);
    fputs("}", f);
}

/* One trace event, after the names (put_names); times are integers. */
static void put_item(struct perfetto *p, const struct item *it)
{
    static const char *const phase[] = { "X", "X", "s", "f", "i" };
    const struct dpm_event *ev = &p->trace->events[it->event];
    const char *name = it->kind == ITEM_WAITING ? "waiting"
                       : it->kind == ITEM_FLOW_START || it->kind == ITEM_FLOW_FINISH ? "message"
                       : type_name(ev->type);
    fprintf(p->out, "%s{\"ph\":\"%s\",\"name\":\"%s\",\"cat\":\"dpm\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
            ",\"ts\":%" PRIu64, ",\n", phase[it->kind], name,
            p->trace->processes[it->track].machine + 1, it->track + 1, it->ts);
    if (it->kind == ITEM_WAITING || it->kind == ITEM_SLICE)
        fprintf(p->out, ",\"dur\":%" PRIu64, it->dur);
    if (it->kind == ITEM_FLOW_START || it->kind == ITEM_FLOW_FINISH)
        fprintf(p->out, ",\"id\":%" PRIu32 "%s", it->flow, it->kind == ITEM_FLOW_FINISH ? ",\"bp\":\"e\"" : "");
    if (it->kind == ITEM_INSTANT)
        fputs(",\"s\":\"t\"", p->out);
    if (it->kind == ITEM_SLICE || it->kind == ITEM_INSTANT)
        put_args(p->out, ev);
    fputs("}", p->out);
}

/* What the file says of itself: its unit of time and the clocks' shifts. */
static void put_header(struct perfetto *p)
{
    uint8_t machine_seen[TIMELINE_MACHINES] = { 0 };
    int first = 1;
    fputs("{\"otherData\":{\"generator\":\"dpm export\",\"time\":\"ts and dur are integer guest nanoseconds, "
          "written where the format has microseconds: a viewer's microsecond is a guest nanosecond\","
          "\"clockShiftNs\":{", p->out);
    for (size_t i = 0; i < p->trace->nevents; i++) {
        uint32_t m = p->trace->events[i].machine;
        if (m < TIMELINE_MACHINES && !machine_seen[m]) {
            machine_seen[m] = 1;
            fprintf(p->out, "%s\"machine %" PRIu32 "\":%" PRId64, first ? "" : ",", m, p->timeline.shift[m]);
            first = 0;
        }
    }
    fprintf(p->out, "},\"messages\":%" PRIu32 ",\"messagesBetweenMachines\":%" PRIu32
            ",\"arrivingBeforeSent\":%" PRIu32 "},\n\"traceEvents\":[", p->timeline.nmessages,
            p->timeline.between_machines, p->timeline.backward);
}

/* A process per machine ("machine M", and its clock's shift), a thread per
 * traced process, named by its label. */
static void put_names(struct perfetto *p)
{
    uint8_t named[TIMELINE_MACHINES] = { 0 };
    char label[96];
    for (size_t i = 0; i < p->trace->nprocesses; i++) {
        const struct dpm_process *process = &p->trace->processes[i];
        uint32_t m = process->machine;
        if (m < TIMELINE_MACHINES && !named[m]) {
            named[m] = 1;
            fprintf(p->out, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32
                    ",\"args\":{\"name\":\"machine %" PRIu32, i ? ",\n" : "\n", m + 1, m);
            if (p->timeline.shift[m])
                fprintf(p->out, " (clock +%" PRId64 " ns)", p->timeline.shift[m]);
            fputs("\"}}", p->out);
        }
        fprintf(p->out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%zu,\"args\":{\"name\":\"",
                m + 1, i + 1);
        put_label(p->out, dpm_process_label(p->trace, process->pid, label, sizeof label));
        fputs("\"}}", p->out);
    }
}

/* Write the JSON of the logs into `path`: the whole trace in memory, its
 * messages paired and its machines' clocks shifted (models/timeline.h),
 * then every trace event in the order of time. */
static void export_perfetto(const char *path, char *const *logs, int n)
{
    static struct perfetto p;
    static struct dpm_trace trace;
    struct dpm_error e;
    if (dpm_trace_load(&trace, (const char *const *)logs, n, &e) < 0)
        dpm_fail("%s", e.text);
    p.trace = &trace;
    timeline_build(&p.timeline, &trace);
    p.slice_at = malloc(trace.nevents * sizeof *p.slice_at + 1);
    if (!p.slice_at)
        dpm_fail("no memory for %zu events", trace.nevents);
    for (size_t i = 0; i < trace.nevents; i++)
        p.slice_at[i] = NO_SLICE;
    for (uint32_t i = 0; i < trace.nprocesses; i++)
        track_items(&p, i);
    flow_items(&p);
    qsort(p.items, p.nitems, sizeof *p.items, by_order);
    if (!(p.out = fopen(path, "w")))
        dpm_fail("%s: %s", path, strerror(errno));
    put_header(&p);
    put_names(&p);
    for (size_t i = 0; i < p.nitems; i++)
        put_item(&p, &p.items[i]);
    fputs("\n]}\n", p.out);
    if (ferror(p.out) | fclose(p.out))
        dpm_fail("%s: %s", path, strerror(errno));
    if (p.timeline.backward)
        fprintf(stderr, "dpm export: %s: %" PRIu32 " of the %" PRIu32 " messages between machines arrive before "
                "they were sent on the shifted clocks (the machines' clocks run at different rates); viewers "
                "that order a trace by time, as Perfetto does, draw no arrow for them\n", path,
                p.timeline.backward, p.timeline.between_machines);
    timeline_free(&p.timeline);
    free(p.items);
    free(p.slice_at);
    dpm_trace_free(&trace);
}

/* ---- Graphviz DOT ---- */

/* A process's node: a box for a traced one, a dashed ellipse for the others. */
static void dot_node(FILE *f, const struct stats *st, size_t i)
{
    const struct stats_process *p = &st->processes[i];
    char label[64];
    dpm_label(p->name, p->pid, label, sizeof label);
    fprintf(f, "    p%zu [label=\"", i + 1);
    put_label(f, label);
    if (p->traced)
        fprintf(f, "\\n%" PRIu64 " records\", shape=box];\n", p->records);
    else
        fputs("\\n(not traced)\", shape=ellipse, style=dashed];\n", f);
}

/* The edges, width by messages, colour by bytes (blue: few, red: the most). */
static void dot_edges(FILE *f, const struct stats *st)
{
    uint64_t most_messages = 1, most_bytes = 1;
    for (size_t i = 0; i < st->npairs; i++) {
        most_messages = st->pairs[i].messages > most_messages ? st->pairs[i].messages : most_messages;
        most_bytes = st->pairs[i].bytes > most_bytes ? st->pairs[i].bytes : most_bytes;
    }
    for (size_t i = 0; i < st->npairs; i++) {
        const struct stats_pair *c = &st->pairs[i];
        uint32_t *from = table_find(&st->process_index, c->from, 0), *to = table_find(&st->process_index, c->to, 0);
        unsigned heat = (unsigned)(255 * c->bytes / most_bytes);
        fprintf(f, "  p%u -> p%u [label=\"%" PRIu64 " msgs\\n%" PRIu64 " bytes\", penwidth=%.2f, "
                "color=\"#%02x00%02x\", fontcolor=\"#%02x00%02x\"];\n", *from + 1, *to + 1, c->messages, c->bytes,
                1.0 + 5.0 * (double)c->messages / (double)most_messages, heat, 255 - heat, heat, 255 - heat);
    }
}

/* Write the communication graph of st into `path`. */
static void export_dot(const char *path, const struct stats *st)
{
    FILE *f = fopen(path, "w");
    if (!f)
        dpm_fail("%s: %s", path, strerror(errno));
    fprintf(f, "digraph dpm {\n  label=\"who talks to whom: %" PRIu64 " messages, %" PRIu64 " bytes; %" PRIu64
            " records lost, %" PRIu64 " missing in sequence gaps\";\n  rankdir=LR;\n", st->messages, st->bytes,
            st->lost, st->gaps);
    for (size_t i = 0; i < st->nprocesses; i++) {
        uint32_t machine = DPM_PID_MACHINE(st->processes[i].pid);
        if (i == 0 || machine != DPM_PID_MACHINE(st->processes[i - 1].pid))
            fprintf(f, "%s  subgraph cluster_machine%" PRIu32 " {\n    label=\"machine %" PRIu32 "\";\n",
                    i ? "  }\n" : "", machine, machine);
        dot_node(f, st, i);
    }
    fputs(st->nprocesses ? "  }\n" : "", f);
    dot_edges(f, st);
    fputs("}\n", f);
    if (ferror(f) | fclose(f))
        dpm_fail("%s: %s", path, strerror(errno));
}

int cmd_export(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, export_help))
        return DPM_OK;
    const char *perfetto = 0, *dot = 0, *csv = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (i + 1 == argc)
            dpm_usage("export", "%s needs a file name", argv[i]);
        if (strcmp(argv[i], "--perfetto") == 0)
            perfetto = argv[++i];
        else if (strcmp(argv[i], "--dot") == 0)
            dot = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0)
            csv = argv[++i];
        else
            dpm_usage("export", "unknown option '%s'", argv[i]);
    }
    if (i == argc || (!perfetto && !dot && !csv))
        dpm_usage("export", "dpm export [--perfetto OUT.json] [--dot OUT.dot] [--csv DIR] LOG...");
    if (perfetto)
        export_perfetto(perfetto, argv + i, argc - i);
    if (dot || csv) {
        static struct stats st;
        struct dpm_error e;
        stats_init(&st);
        if (stats_read_logs(&st, argv + i, argc - i, &e) != 0 || (csv && report_csv(csv, &st, &e) != 0))
            dpm_fail("%s", e.text);
        if (dot)
            export_dot(dot, &st);
        stats_free(&st);
    }
    return DPM_OK;
}
