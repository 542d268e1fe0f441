/*
 * analysis/models/shiviz_log.c — the ShiViz log of a trace
 * (models/shiviz_log.h says its format).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "models/shiviz_log.h"
#include "models/vclock.h"

#define HOST_SIZE 48

struct shiviz {
    FILE *out;
    const struct history *h;
    const struct clock_model *c;
    char (*host)[HOST_SIZE];       /* [nprocesses] */
};

/* A label as a host: its space '@', anything else outside [A-Za-z0-9_.@:-] '_'. */
static void host_name(char *out, const char *label)
{
    size_t n = 0;
    for (; *label && n + 1 < HOST_SIZE; label++) {
        char ch = *label;
        int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    strchr("_.@:-", ch);
        out[n++] = ch == ' ' ? '@' : plain ? ch : '_';
    }
    out[n] = 0;
}

/* The host of a pid, traced or not, into out[HOST_SIZE]. */
static const char *host_of(const struct shiviz *s, uint64_t pid, char *out)
{
    uint32_t p = history_process_index(s->h->trace, pid);
    char label[96];
    if (p != HISTORY_NONE)
        return s->host[p];
    host_name(out, dpm_label("", pid, label, sizeof label));
    return out;
}

static const char *type_name(uint32_t type)
{
    static const char *const names[METER_NTYPES] = {
#define TYPE_NAME(name, number) [number] = #name,
        METER_TYPES(TYPE_NAME)
#undef TYPE_NAME
    };
    return type < METER_NTYPES && names[type] ? names[type] : "record";
}

/* What node v is, without braces. */
static void event_text(const struct shiviz *s, uint32_t v)
{
    const struct history *h = s->h;
    const struct dpm_event *ev = &h->trace->events[h->event[v]];
    char other[HOST_SIZE];
    switch (h->kind[v]) {
    case HN_START:
        fprintf(s->out, "start at %s", type_name(ev->type));
        break;
    case HN_END:
        fprintf(s->out, "end at %s", type_name(ev->type));
        break;
    case HN_MIGRATE:
        fprintf(s->out, "MIGRATE from machine %" PRIu32, dpm_move_of(ev, h->trace->events[h->event[v - 1]].machine).from);
        break;
    default:
        fprintf(s->out, "%s %s %s message 0x%" PRIx64 " %" PRIu64 " bytes", h->kind[v] == HN_SEND ? "SEND" : "RECEIVE",
                h->kind[v] == HN_SEND ? "to" : "from", (ev->present & EV_OTHER) ? host_of(s, ev->other, other) : "?",
                ev->message_id, ev->size);
        break;
    }
    fprintf(s->out, "; machine %" PRIu32, clocks_machine_of(h, h->process[v], ev));
    if (ev->present & EV_TIME)
        fprintf(s->out, " time %" PRIu64 " corrected %" PRId64, ev->time, clocks_node_time(s->c, h, v));
    fputc('\n', s->out);
}

/* One line: host, vector, event. */
static void write_node(void *context, uint32_t v, const uint32_t *vector)
{
    struct shiviz *s = context;
    const char *comma = "";
    fprintf(s->out, "%s {", s->host[s->h->process[v]]);
    for (uint32_t k = 0; k < s->h->nprocesses; k++) {
        if (!vector[k])
            continue;
        fprintf(s->out, "%s\"%s\":%" PRIu32, comma, s->host[k], vector[k]);
        comma = ",";
    }
    fputs("} ", s->out);
    event_text(s, v);
}

/* The log (models/shiviz_log.h). */
int shiviz_write(FILE *f, const struct history *h, const struct clock_model *c)
{
    struct shiviz s = { f, h, c, malloc((h->nprocesses + 1) * sizeof *s.host) };
    char label[96];
    if (!s.host)
        return -1;
    for (uint32_t p = 0; p < h->nprocesses; p++)
        host_name(s.host[p], dpm_process_label(h->trace, h->trace->processes[p].pid, label, sizeof label));
    int status = vclock_walk(h, write_node, &s);
    free(s.host);
    return status;
}
