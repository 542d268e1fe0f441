/*
 * analysis/commands/cmd_export.c — `dpm export`: a trace in formats that
 * existing viewers read: Chrome/Perfetto trace-event JSON (a timeline per
 * process, message arrows), Graphviz DOT (the communication graph, its hot
 * spots in red), and the statistics' CSV tables (models/stats_output.c).
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
"        The Trace Event Format that ui.perfetto.dev and chrome://tracing\n"
"        open: a process per machine (\"machine M\") and in it a thread per\n"
"        traced process, named by its label. Each SEND and RECEIVE is a\n"
"        1 ns slice, a receive that waited is a slice \"waiting\" from its\n"
"        RECEIVECALL to its RECEIVE, every other record an instant; each\n"
"        record's fields are its args. Each message whose SEND and RECEIVE\n"
"        are both in the trace is an arrow (a flow event pair with an id of\n"
"        its own, 1, 2, ...). Timestamps are each machine's own clock in\n"
"        microseconds (ns precision): tracks of different machines are on\n"
"        different clocks. Memory grows only with the messages whose other\n"
"        end has not been read yet.\n"
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

/* A process's thread in the JSON: its number (tid) and whether it waits
 * in a receive since `call_time`. */
struct track {
    uint32_t tid;
    int calling;
    uint64_t call_time;
};

struct perfetto {
    FILE *out;
    int first;                   /* no event written yet: no comma before the next */
    struct table track_index;    /* pid -> tracks[] */
    struct track *tracks;
    size_t ntracks, capacity;
    struct table flows;          /* message id -> the flow's id, until its other end */
    uint32_t next_flow;
    uint8_t machine_named[256];
};

/* Start one event object: the comma before it, then `{`. */
static void event_start(struct perfetto *p)
{
    fputs(p->first ? "\n{" : ",\n{", p->out);
    p->first = 0;
}

/* The track of the event's process, named (and its machine) when new. */
static struct track *track_of(struct perfetto *p, const struct dpm_event *ev)
{
    uint32_t *index = table_find(&p->track_index, ev->pid, 0);
    if (index)
        return &p->tracks[*index];
    uint32_t machine = DPM_PID_MACHINE(ev->pid);
    if (!p->machine_named[machine]) {
        p->machine_named[machine] = 1;
        event_start(p);
        fprintf(p->out, "\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32
                ",\"args\":{\"name\":\"machine %" PRIu32 "\"}}", machine + 1, machine);
    }
    p->tracks = array_grow(p->tracks, &p->capacity, p->ntracks, sizeof *p->tracks);
    p->tracks[p->ntracks] = (struct track){ (uint32_t)p->ntracks + 1, 0, 0 };
    table_insert(&p->track_index, ev->pid, 0, (uint32_t)p->ntracks);
    return &p->tracks[p->ntracks++];
}

/* The thread's name: its label (again at its CREATEPROCESS, when its name is known). */
static void name_track(struct perfetto *p, const struct dpm_event *ev, const struct track *t)
{
    char label[64];
    event_start(p);
    fprintf(p->out, "\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
            ",\"args\":{\"name\":\"", DPM_PID_MACHINE(ev->pid) + 1, t->tid);
    put_label(p->out, dpm_label(ev->type == MT_CREATEPROCESS ? ev->name : "", ev->pid, label, sizeof label));
    fputs("\"}}", p->out);
}

/* The common part of an event: phase, name, where and when. */
static void event_head(struct perfetto *p, const struct dpm_event *ev, const struct track *t, const char *phase,
                       const char *name, uint64_t time)
{
    event_start(p);
    fprintf(p->out, "\"ph\":\"%s\",\"name\":\"%s\",\"cat\":\"dpm\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
            ",\"ts\":%" PRIu64 ".%03" PRIu64, phase, name, DPM_PID_MACHINE(ev->pid) + 1, t->tid, time / 1000,
            time % 1000);
}

static const char *type_name(uint32_t type)
{
    const struct meter_layout *l = meter_body_layout(type);
    return l ? l->name : "record";
}

/* The record as a slice or an instant, with its fields as args. */
static void record_event(struct perfetto *p, const struct dpm_event *ev, const struct track *t)
{
    char other[64];
    int slice = ev->type == MT_SEND || ev->type == MT_RECEIVE;
    event_head(p, ev, t, slice ? "X" : "i", type_name(ev->type), ev->time);
    fputs(slice ? ",\"dur\":0.001" : ",\"s\":\"t\"", p->out);
    fprintf(p->out, ",\"args\":{\"sequence\":%" PRIu64 ",\"procTime\":%" PRIu64 ",\"pc\":\"0x%" PRIx64 "\"",
            ev->sequence, ev->proctime, ev->pc);
    if (ev->present & EV_OTHER)
        fprintf(p->out, ",\"other\":\"%s\"", dpm_label("", ev->other, other, sizeof other));
    if (ev->present & EV_SIZE)
        fprintf(p->out, ",\"size\":%" PRIu64, ev->size);
    if (ev->present & EV_MESSAGE_ID)
        fprintf(p->out, ",\"messageId\":\"0x%" PRIx64 "\"", ev->message_id);
    fputs("}}", p->out);
}

/* The flow id of message `id`, the same at both of its ends. */
static uint32_t flow_of(struct perfetto *p, uint64_t id)
{
    uint32_t *flow = table_find(&p->flows, id, 0);
    if (flow) {
        uint32_t value = *flow;
        table_remove(&p->flows, id, 0);
        return value;
    }
    table_insert(&p->flows, id, 0, ++p->next_flow);
    return p->next_flow;
}

/* One event: its track, its waiting slice, itself, its flow's end. */
static void perfetto_event(struct perfetto *p, const struct dpm_event *ev)
{
    if (!(ev->present & EV_PID) || !(ev->present & EV_TIME))
        return;
    int new_track = !table_find(&p->track_index, ev->pid, 0);
    struct track *t = track_of(p, ev);
    if (new_track || ev->type == MT_CREATEPROCESS)
        name_track(p, ev, t);
    if (ev->type == MT_RECEIVECALL) {
        t->calling = !ev->flag;
        t->call_time = ev->time;
    }
    if (ev->type == MT_RECEIVE && t->calling && ev->time > t->call_time) {
        event_head(p, ev, t, "X", "waiting", t->call_time);
        fprintf(p->out, ",\"dur\":%" PRIu64 ".%03" PRIu64 "}", (ev->time - t->call_time) / 1000,
                (ev->time - t->call_time) % 1000);
    }
    if (ev->type == MT_RECEIVE)
        t->calling = 0;
    record_event(p, ev, t);
    if ((ev->type == MT_SEND || ev->type == MT_RECEIVE) && (ev->present & EV_MESSAGE_ID) &&
        !(ev->type == MT_SEND && ev->status != 0)) {
        event_head(p, ev, t, ev->type == MT_SEND ? "s" : "f", "message", ev->time);
        fprintf(p->out, ",\"id\":%" PRIu32 "%s}", flow_of(p, ev->message_id), ev->type == MT_SEND ? "" : ",\"bp\":\"e\"");
    }
}

/* Write the JSON of the logs into `path`. */
static void export_perfetto(const char *path, char *const *logs, int n)
{
    static struct perfetto p;
    p.out = fopen(path, "w");
    if (!p.out)
        dpm_fail("%s: %s", path, strerror(errno));
    p.first = 1;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", p.out);
    for (int i = 0; i < n; i++) {
        struct dpm_error e;
        struct dpm_stream *s = dpm_stream_open(logs[i], (uint16_t)i, &e);
        if (!s)
            dpm_fail("%s", e.text);
        dpm_stream_events_only(s);
        struct dpm_event ev;
        int status;
        while ((status = dpm_stream_next(s, &ev, &e)) == 1)
            perfetto_event(&p, &ev);
        if (status < 0)
            dpm_fail("%s", e.text);
        dpm_stream_close(s);
    }
    fputs("\n]}\n", p.out);
    if (ferror(p.out) | fclose(p.out))
        dpm_fail("%s: %s", path, strerror(errno));
    table_free(&p.track_index);
    table_free(&p.flows);
    free(p.tracks);
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
    const char *outputs[] = { perfetto, dot };
    for (size_t k = 0; k < sizeof outputs / sizeof outputs[0]; k++) {
        struct dpm_error e;
        if (outputs[k] && dpm_output_check(outputs[k], &e) != 0)
            dpm_fail("%s", e.text);
    }
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
