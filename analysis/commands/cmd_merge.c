/*
 * analysis/commands/cmd_merge.c — `dpm merge`: several filters' logs into
 * one log, written with meter/'s own writer in this build's layouts, each
 * record with the fields its log kept, ordered by time within each machine.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/commands.h"
#include "load/event.h"
#include "load/table.h"
#include "tracelog.h"

static const char merge_help[] =
"NAME\n"
"    dpm merge - merge several filters' trace logs into one\n"
"\n"
"SYNOPSIS\n"
"    dpm merge -o OUT LOG...\n"
"\n"
"DESCRIPTION\n"
"    Writes OUT, one trace log holding every record of the LOGs (each with\n"
"    the fields its log kept), with meter/'s log writer in this build's\n"
"    record layouts and description, and the logs' loss counts summed.\n"
"    Then prints\n"
"        OUT: N records from K logs, L lost\n"
"\n"
"    Order: records are grouped by machine (0, 1, ...) and ordered by time\n"
"    within each machine, ties by pid and record number, then by their\n"
"    place in the inputs. Clocks of different machines are never compared\n"
"    (thesis §5.2.2), so no order across machines would mean more;\n"
"    within a machine this is the order things happened, and every\n"
"    process's records stay in the order of its own stream. A record whose\n"
"    log did not keep its time sorts at the time of the record\n"
"    before it in its log.\n"
"\n"
"    Descriptions: a log written with this build's description is copied\n"
"    field for field. A log with another description (another build's) is\n"
"    re-mapped by field name into this build's layouts, and a line on\n"
"    standard error says so; a log with a record type or field this build\n"
"    does not have, or a field wider than this build's, is refused,\n"
"    naming it. OUT is written under OUT.partial and renamed when whole.\n"
"    The records are held in memory while they are sorted (about 150\n"
"    bytes each).\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 bad input (a damaged log names the file and record), 2\n"
"    bad usage.\n"
"\n"
"EXAMPLE\n"
"    dpm merge -o all.log trace0.log trace1.log && dpm stats all.log\n";

/* Where field i of a layout of an input log goes in this build's record. */
struct target {
    uint16_t at, size;           /* in struct meter_record's bytes; size 0: nowhere */
    uint8_t bit;                 /* the field's number in this build's layout (header first) */
};

/* One record to write, with what it sorts by. */
struct merged {
    uint32_t machine;
    uint32_t input;
    uint64_t time, pid, sequence, position;
    struct meter_record record;
};

/* This build's field `name` of type `type` (0: the header): its target; 0 if there is none. */
static int build_field(uint32_t type, const char *name, struct target *t)
{
    const struct meter_layout *l = type ? meter_body_layout(type) : &meter_header_layout;
    uint32_t base = type ? (uint32_t)sizeof(struct meter_header) : 0;
    uint32_t first = type ? meter_header_layout.nfields : 0;
    for (uint32_t i = 0; l && i < l->nfields; i++) {
        if (strcmp(l->fields[i].name, name) == 0) {
            *t = (struct target){ (uint16_t)(base + l->fields[i].offset), l->fields[i].size, (uint8_t)(first + i) };
            return 1;
        }
    }
    return 0;
}

/* The targets of every layout of the input's description, by layout
 * index and field; exits naming what this build cannot hold. */
static void map_input(const char *path, const struct tracelog_reader *r, struct target map[][METER_MAX_FIELDS])
{
    const struct description *d = &r->layouts;
    const struct desc_layout *h = description_layout(d, 0);
    for (uint32_t j = 0; j < d->nlayouts; j++) {
        const struct desc_layout *l = &d->layouts[j];
        if (l->type == 0)
            continue;
        uint32_t type = meter_type_number(l->name);
        if (!type)
            dpm_fail("%s: record type %s is not in this build's layouts: cannot merge", path, l->name);
        for (uint32_t i = 0; i < h->nfields + l->nfields && i < METER_MAX_FIELDS; i++) {
            int in_header = i < h->nfields;
            const struct desc_field *f = in_header ? &h->fields[i] : &l->fields[i - h->nfields];
            if (!build_field(in_header ? 0 : type, f->name, &map[j][i]))
                dpm_fail("%s: field %s of %s is not in this build's layouts: cannot merge", path, f->name,
                         in_header ? "the header" : l->name);
            if (f->length > map[j][i].size)
                dpm_fail("%s: field %s of %s is %u bytes, wider than this build's %u: cannot merge", path, f->name,
                         in_header ? "the header" : l->name, f->length, map[j][i].size);
        }
    }
}

/* The record just read, in this build's layout: into m. */
static void convert(const struct trace_values *v, const struct target *map, struct merged *m)
{
    memset(&m->record, 0, sizeof m->record);
    uint8_t *bytes = (uint8_t *)&m->record;
    for (uint32_t i = 0; i < v->nfields; i++) {
        if (!(v->fields & (1u << i)))
            continue;
        for (uint32_t k = 0; k < map[i].size; k++)
            bytes[map[i].at + k] = (uint8_t)(v->values[i] >> (8 * k));    /* little-endian, as record.h */
        m->record.fields |= 1u << map[i].bit;
    }
    m->record.header.traceType = meter_type_number(v->body->name);
    m->record.header.length = (uint32_t)(sizeof m->record.header + meter_body_layout(m->record.header.traceType)->size);
}

/* Read every record of the input `path` onto the array; returns its loss count. */
static uint64_t read_input(const char *path, uint32_t input, struct merged **all, size_t *n, size_t *capacity)
{
    static struct target map[DESC_MAX_LAYOUTS][METER_MAX_FIELDS];
    struct dpm_error e;
    struct dpm_stream *s = dpm_stream_open(path, (uint16_t)input, &e);
    if (!s)
        dpm_fail("%s", e.text);
    const struct tracelog_reader *r = dpm_stream_reader(s);
    memset(map, 0, sizeof map);
    map_input(path, r, map);
    if (!r->compiled)
        fprintf(stderr, "dpm: %s: its description is not this build's: its fields are re-mapped by name\n", path);
    struct dpm_event ev;
    int status;
    uint64_t last_time = 0;
    while ((status = dpm_stream_next(s, &ev, &e)) == 1) {
        const struct trace_values *v = dpm_stream_values(s);
        *all = array_grow(*all, capacity, *n, sizeof **all);
        struct merged *m = &(*all)[(*n)++];
        convert(v, map[v->body - r->layouts.layouts], m);
        last_time = (ev.present & EV_TIME) ? ev.time : last_time;
        m->machine = (ev.present & EV_MACHINE) ? ev.machine : DPM_PID_MACHINE(ev.pid);
        m->input = input;
        m->time = last_time;
        m->pid = ev.pid;
        m->sequence = ev.sequence;
        m->position = ev.record;
    }
    if (status < 0)
        dpm_fail("%s", e.text);
    uint64_t lost = dpm_stream_lost(s);
    dpm_stream_close(s);
    return lost;
}

static int by_machine_time(const void *a, const void *b)
{
    const struct merged *x = a, *y = b;
    if (x->machine != y->machine)
        return x->machine < y->machine ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->sequence != y->sequence)
        return x->sequence < y->sequence ? -1 : 1;
    if (x->input != y->input)
        return x->input < y->input ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

static int out_fd;

/* meter/'s tracelog_write_fn: block `index` at its place in the output. */
static int write_block(void *context, uint64_t index, const uint8_t *block)
{
    (void)context;
    return pwrite(out_fd, block, TRACELOG_BLOCK, (off_t)(index * TRACELOG_BLOCK)) == TRACELOG_BLOCK ? 0 : -1;
}

/* Write the records (sorted) and the loss count into `path` (under a temporary name). */
static void write_output(const char *path, const struct merged *all, size_t n, uint64_t lost)
{
    char partial[4096];
    snprintf(partial, sizeof partial, "%s.partial", path);
    out_fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0)
        dpm_fail("%s: %s", partial, strerror(errno));
    static struct tracelog_writer w;
    int err = tracelog_begin(&w, "dpm merge", n ? all[0].machine : 0, 0x6d657267u ^ (uint32_t)n, write_block, 0);
    for (size_t i = 0; i < n && !err; i++)
        err = tracelog_append(&w, &all[i].record, all[i].record.fields);
    tracelog_lose(&w, lost);
    if (err || tracelog_flush(&w) != 0 || close(out_fd) != 0 || rename(partial, path) != 0) {
        int saved = errno;
        unlink(partial);
        dpm_fail("%s: %s", path, strerror(saved));
    }
}

int cmd_merge(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, merge_help))
        return DPM_OK;
    if (argc < 4 || strcmp(argv[1], "-o") != 0)
        dpm_usage("merge", "dpm merge -o OUT LOG...");
    const char *out = argv[2];
    struct dpm_error refused;
    if (dpm_output_check(out, &refused) != 0)
        dpm_fail("%s", refused.text);
    struct merged *all = 0;
    size_t n = 0, capacity = 0;
    uint64_t lost = 0;
    for (int i = 3; i < argc; i++)
        lost += read_input(argv[i], (uint32_t)(i - 3), &all, &n, &capacity);
    if (n)
        qsort(all, n, sizeof *all, by_machine_time);
    write_output(out, all, n, lost);
    printf("%s: %zu records from %d logs, %" PRIu64 " lost\n", out, n, argc - 3, lost);
    free(all);
    return DPM_OK;
}
