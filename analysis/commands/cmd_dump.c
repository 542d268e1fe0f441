/*
 * analysis/commands/cmd_dump.c — `dpm dump`: every record of the logs, one
 * line each, in the fields' display bases, optionally selected with DPM's
 * selection rules (meter/rules.c, the engine the filter server runs).
 */
#define _XOPEN_SOURCE 700

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands/commands.h"
#include "load/event.h"
#include "load/table.h"
#include "print.h"
#include "tracelog.h"

static const char dump_help[] =
"NAME\n"
"    dpm dump - print the records of trace logs\n"
"\n"
"SYNOPSIS\n"
"    dpm dump [--rules FILE|TEXT] LOG...\n"
"\n"
"DESCRIPTION\n"
"    Prints every record of each LOG (a log file or a trace disk image) on\n"
"    a line of its own:\n"
"        TYPE field=value field=value ...\n"
"    TYPE is the name the log's description gives the record's type; then\n"
"    each field the log kept, the header's first, in description order and\n"
"    in the field's display base: hexadecimal with 0x, or decimal (with a\n"
"    sign for the fields this build's meter/record.h declares signed, when\n"
"    the log's description is this build's own). This is `dmtrace dump`'s\n"
"    format. With more than one LOG, each log's records follow a line\n"
"        # LOG\n"
"    The last line counts what was read:\n"
"        N records, L lost, G missing in sequence gaps\n"
"    (\"S of N records\" when rules select S of them): L is the logs' own\n"
"    count of records lost before they reached the log, G the records\n"
"    missing from the processes' record numbers (a stream that starts\n"
"    again from 0 is a new run, not a gap; rules of the filter that wrote\n"
"    the log may have dropped records too).\n"
"\n"
"OPTIONS\n"
"    --rules FILE|TEXT\n"
"        DPM selection rules (meter/rules.h), from the file FILE if there\n"
"        is one, else the text itself: `field op value` terms joined by ','\n"
"        and ended by ';', ops = != < > <= >=, a value a number, a trace\n"
"        type's name, * or another field's name; '#' before a value drops\n"
"        the field. Only the records some rule matches are printed, without\n"
"        the fields the first matching rule drops. A field the log did not\n"
"        keep reads as 0.\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 bad input (a damaged log names the file and record;\n"
"    rules that do not parse name line and column), 2 bad usage.\n"
"\n"
"EXAMPLES\n"
"    dpm dump run1.log\n"
"    dpm dump --rules 'traceType=SEND, channel=#*, code=#*;' run1.log\n"
"    dpm dump --rules sends.rules run1.log run2.log\n";

/* The text of --rules: the file it names if there is one, else itself;
 * *where is what to call it in messages. */
static char *rules_text(const char *arg, const char **where, size_t *len)
{
    struct stat st;
    if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode)) {
        *where = "--rules";
        *len = strlen(arg);
        return strdup(arg);
    }
    *where = arg;
    FILE *f = fopen(arg, "rb");
    char *text = malloc((size_t)st.st_size + 1);
    if (!f || !text)
        dpm_fail("%s: cannot be read", arg);
    *len = fread(text, 1, (size_t)st.st_size, f);
    if (ferror(f))
        dpm_fail("%s: cannot be read", arg);
    fclose(f);
    return text;
}

/* What dump counts over all its logs. */
struct dump_counts {
    uint64_t records, shown, lost, gaps;
    struct table process_index;        /* pid -> its entry in `sequences` */
    struct dpm_sequence *sequences;
    size_t nsequences, capacity;
};

/* The records missing before ev in its process's numbering. */
static uint64_t gap_before(struct dump_counts *c, const struct dpm_event *ev)
{
    if (!(ev->present & EV_PID))
        return 0;
    uint32_t *index = table_find(&c->process_index, ev->pid, 0);
    if (!index) {
        c->sequences = array_grow(c->sequences, &c->capacity, c->nsequences, sizeof *c->sequences);
        c->sequences[c->nsequences] = (struct dpm_sequence){ 0 };
        table_insert(&c->process_index, ev->pid, 0, (uint32_t)c->nsequences++);
        index = table_find(&c->process_index, ev->pid, 0);
    }
    return dpm_sequence_gap(&c->sequences[*index], ev);
}

/* Print the records of one log that `rules` select (all, if it is 0). */
static void dump_log(const char *path, uint16_t file, const char *rules, struct dump_counts *c)
{
    struct dpm_error e;
    struct dpm_stream *s = dpm_stream_open(path, file, &e);
    if (!s)
        dpm_fail("%s", e.text);
    const struct tracelog_reader *r = dpm_stream_reader(s);
    static struct ruleset ruleset;
    if (rules) {
        const char *where;
        size_t len;
        char *text = rules_text(rules, &where, &len);
        struct parse_error pe;
        if (rules_parse(&ruleset, &r->layouts, text, len, &pe) != 0)
            dpm_fail("%s:%u:%u: %s", where, pe.line, pe.column, pe.reason);
        free(text);
    }
    static uint8_t bytes[2 * 65536 + 16];
    struct dpm_event ev;
    int status;
    while ((status = dpm_stream_next(s, &ev, &e)) == 1) {
        const struct trace_values *v = dpm_stream_values(s);
        uint32_t shown = v->fields, kept;
        c->records++;
        c->gaps += gap_before(c, &ev);
        if (rules) {
            uint32_t len = tracelog_record_bytes(r, v, bytes, sizeof bytes);
            if (!rules_select(&ruleset, &r->layouts, bytes, len, &kept))
                continue;
            shown &= kept;
        }
        tracelog_print_record(stdout, r, v, shown);
        c->shown++;
    }
    if (status < 0)
        dpm_fail("%s", e.text);
    c->lost += dpm_stream_lost(s);
    dpm_stream_close(s);
}

int cmd_dump(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, dump_help))
        return DPM_OK;
    const char *rules = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc)
            rules = argv[++i];
        else
            dpm_usage("dump", "unknown option '%s'", argv[i]);
    }
    if (i == argc)
        dpm_usage("dump", "dpm dump [--rules FILE|TEXT] LOG...");
    struct dump_counts c = { 0 };
    for (int k = i; k < argc; k++) {
        if (argc - i > 1)
            printf("# %s\n", argv[k]);
        dump_log(argv[k], (uint16_t)(k - i), rules, &c);
    }
    if (rules)
        printf("%" PRIu64 " of ", c.shown);
    printf("%" PRIu64 " records, %" PRIu64 " lost, %" PRIu64 " missing in sequence gaps\n", c.records, c.lost,
           c.gaps);
    table_free(&c.process_index);
    free(c.sequences);
    return DPM_OK;
}
