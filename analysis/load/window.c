/*
 * analysis/load/window.c — the window of time that dpm reads
 * (load/window.h): its options, the times --window-of finds in the logs,
 * and the test each record passes.
 */
#define _POSIX_C_SOURCE 200809L   /* strdup, strtok_r */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "load/window.h"

static struct dpm_window window;
static int window_set;
static struct table left_out_names;     /* pid -> index into left_out_name[] */
static char (*left_out_name)[17];
static size_t nleft_out, left_out_capacity;

static int window_between(const char *command, const char *value);
static int window_of(const char *command, const char *list, char **args, int n);

/* ---- the options ---- */

/* If args[*i] is `name` or `name=VALUE`, its value (the next argument, *i
 * moving on); *missing when there is none. NULL if it is another argument. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0 || (argv[*i][n] != 0 && argv[*i][n] != '='))
        return 0;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (*i + 1 >= argc) {
        *missing = 1;
        return 0;
    }
    return argv[++*i];
}

/* Take the window options (load/window.h). */
int dpm_window_take(int argc, char **argv, int *status)
{
    const char *between = 0, *of = 0, *command = argv[0];
    int kept = 1;
    *status = 2;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *name = argv[i], *value;
        if ((value = option_value(argc, argv, &i, "--window-of", &missing)))
            of = value;
        else if (!missing && (value = option_value(argc, argv, &i, "--window", &missing)))
            between = value;
        else if (!missing)
            argv[kept++] = argv[i];
        if (missing) {
            fprintf(stderr, "dpm %s: %s needs a value (see dpm --help)\n", command, name);
            return -1;
        }
    }
    argv[kept] = 0;
    if (!between && !of)
        return kept;
    if (between && of) {
        fprintf(stderr, "dpm %s: --window and --window-of exclude one another\n", command);
        return -1;
    }
    if (strcmp(command, "generate") == 0) {
        fprintf(stderr, "dpm generate: --window and --window-of choose the records dpm reads; generate writes logs\n");
        return -1;
    }
    if (of && strcmp(command, "live") == 0) {
        fprintf(stderr, "dpm live: --window-of needs the whole log, and live follows a stream as it grows: "
                "use --window\n");
        return -1;
    }
    if ((between && window_between(command, between) < 0) || (of && window_of(command, of, argv + 1, kept - 1) < 0))
        return -1;
    snprintf(window.asked, sizeof window.asked, "%s %s", between ? "--window" : "--window-of", between ? between : of);
    window_set = 1;
    return kept;
}

/* ---- the window asked for, and each record's test ---- */

const struct dpm_window *dpm_window_get(void)
{
    return window_set ? &window : 0;
}

int dpm_window_holds(const struct dpm_window *w, const struct dpm_event *ev)
{
    uint32_t m = (ev->present & EV_MACHINE) ? ev->machine : DPM_PID_MACHINE(ev->pid);
    if (!(ev->present & EV_TIME))
        return 1;
    if (m < DPM_WINDOW_MACHINES && w->on_machine[m])
        return ev->time >= w->machine_from[m] && ev->time <= w->machine_to[m];
    return ev->time >= w->from && ev->time <= w->to;
}

void dpm_window_note_name(const struct dpm_event *createprocess)
{
    if (!(createprocess->present & EV_NAME) || !createprocess->name[0])
        return;
    uint32_t *i = table_find(&left_out_names, createprocess->pid, 0);
    if (!i) {
        left_out_name = array_grow(left_out_name, &left_out_capacity, nleft_out, sizeof *left_out_name);
        table_insert(&left_out_names, createprocess->pid, 0, (uint32_t)nleft_out);
        i = table_find(&left_out_names, createprocess->pid, 0);
        nleft_out++;
    }
    memcpy(left_out_name[*i], createprocess->name, sizeof left_out_name[*i]);
}

const char *dpm_window_name_of(uint64_t pid)
{
    uint32_t *i = table_find(&left_out_names, pid, 0);
    return i ? left_out_name[*i] : 0;
}

int dpm_window_left_out(const char *what)
{
    char id[24];
    for (size_t i = 0; i < left_out_names.capacity; i++) {
        const struct table_entry *e = &left_out_names.entries[i];
        if (e->used && (strcmp(left_out_name[e->value], what) == 0 || strcmp(dpm_pid_string(e->a, id), what) == 0))
            return 1;
    }
    return 0;
}

const char *dpm_window_asked(void)
{
    return window_set ? window.asked : 0;
}

const char *dpm_window_describe(void)
{
    static char text[2048];
    char to[32] = "the end";
    size_t n = 0;
    int uniform = 1;
    if (!window_set)
        return "";
    for (uint32_t m = 0; m < DPM_WINDOW_MACHINES; m++)
        uniform &= !window.on_machine[m] || (window.machine_from[m] == window.from && window.machine_to[m] == window.to);
    if (window.to != UINT64_MAX)
        snprintf(to, sizeof to, "%" PRIu64, window.to);
    if (uniform) {
        snprintf(text, sizeof text, "TIME %" PRIu64 " to %s ns on each machine's clock (%s)", window.from, to,
                 window.asked);
        return text;
    }
    for (uint32_t m = 0; m < DPM_WINDOW_MACHINES && n < sizeof text; m++)
        if (window.on_machine[m])
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%" PRIu64 " to %" PRIu64 "%s on machine %" PRIu32,
                                  n ? ", " : "TIME ", window.machine_from[m], window.machine_to[m], n ? "" : " ns", m);
    if (n < sizeof text)
        snprintf(text + n, sizeof text - n, ", %" PRIu64 " to %s on the others (%s)", window.from, to, window.asked);
    return text;
}

/* ---- --window FROM:TO ---- */

/* A time: digits, an optional fraction, an optional unit (ns, the default;
 * us, ms, s), from text[0..n); rounded to whole ns. 0, or -1 if it is not one. */
static int parse_time(const char *text, size_t n, uint64_t *ns)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = { { "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
    uint64_t whole = 0, fraction = 0, scale = 1;
    size_t i = 0;
    if (n == 0 || text[0] < '0' || text[0] > '9')
        return -1;
    for (; i < n && text[i] >= '0' && text[i] <= '9'; i++) {
        if (whole > (UINT64_MAX - 9) / 10)
            return -1;
        whole = whole * 10 + (uint64_t)(text[i] - '0');
    }
    if (i < n && text[i] == '.') {
        for (i++; i < n && text[i] >= '0' && text[i] <= '9'; i++) {
            if (scale <= UINT64_MAX / 100) {
                fraction = fraction * 10 + (uint64_t)(text[i] - '0');
                scale *= 10;
            }
        }
    }
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strlen(units[u].name) != n - i || strncmp(text + i, units[u].name, n - i) != 0)
            continue;
        if (whole > UINT64_MAX / units[u].ns)
            return -1;
        *ns = whole * units[u].ns + (uint64_t)((long double)fraction * units[u].ns / scale + 0.5L);
        return 0;
    }
    return -1;
}

/* Set the window from FROM:TO (either may be left out). 0, or -1 after saying why. */
static int window_between(const char *command, const char *value)
{
    const char *colon = strchr(value, ':');
    if (!colon || strchr(colon + 1, ':') ||
        (colon > value && parse_time(value, (size_t)(colon - value), &window.from) < 0) ||
        (colon[1] && parse_time(colon + 1, strlen(colon + 1), &window.to) < 0)) {
        fprintf(stderr, "dpm %s: --window %s: expected FROM:TO, each a time in ns or with a unit (ns, us, ms, s), "
                "either left out for the log's start or end: 2ms:90ms\n", command, value);
        return -1;
    }
    if (colon == value)
        window.from = 0;
    if (!colon[1])
        window.to = UINT64_MAX;
    if (window.from > window.to) {
        fprintf(stderr, "dpm %s: --window %s: FROM is after TO\n", command, value);
        return -1;
    }
    return 0;
}

/* ---- --window-of NAME_OR_PID,... ---- */

/* A span of TIME on one machine's clock. */
struct span {
    uint64_t first, last;
    int seen;
};

static void widen(struct span *s, uint64_t time)
{
    if (!s->seen || time < s->first)
        s->first = time;
    if (!s->seen || time > s->last)
        s->last = time;
    s->seen = 1;
}

/* What the logs say of one process: its name, and on each machine the
 * span of its own records and of the other records naming it. */
struct seen_process {
    uint64_t pid;
    char name[17];
    struct span own[DPM_WINDOW_MACHINES], named[DPM_WINDOW_MACHINES];
    int has_own;               /* some record of its own has TIME */
};

struct seen {
    struct table index;        /* pid -> its entry */
    struct seen_process *process;
    size_t count, capacity;
};

static struct seen_process *seen_process(struct seen *s, uint64_t pid)
{
    uint32_t *i = table_find(&s->index, pid, 0);
    if (i)
        return &s->process[*i];
    s->process = array_grow(s->process, &s->capacity, s->count, sizeof *s->process);
    memset(&s->process[s->count], 0, sizeof s->process[s->count]);
    s->process[s->count].pid = pid;
    table_insert(&s->index, pid, 0, (uint32_t)s->count);
    return &s->process[s->count++];
}

/* The machine whose clock a record's TIME is on. */
static uint32_t clock_of(const struct dpm_event *ev)
{
    return (ev->present & EV_MACHINE) ? ev->machine : DPM_PID_MACHINE(ev->pid);
}

/* Every process of the log `path` and of its records' other parties: 1;
 * 0 if the file is no log (it is passed over: the command says so). */
static int scan_log(struct seen *s, const char *path)
{
    struct dpm_error e;
    struct dpm_event ev;
    struct dpm_stream *log = dpm_stream_open(path, 0, &e);
    if (!log)
        return 0;
    dpm_stream_events_only(log);
    while (dpm_stream_next(log, &ev, &e) == 1) {
        uint32_t m = clock_of(&ev);
        int timed = (ev.present & EV_TIME) && m < DPM_WINDOW_MACHINES;
        if (ev.present & EV_PID) {
            struct seen_process *p = seen_process(s, ev.pid);
            if (timed) {
                widen(&p->own[m], ev.time);
                p->has_own = 1;
            }
            if (ev.type == MT_CREATEPROCESS && (ev.present & EV_NAME))
                memcpy(p->name, ev.name, sizeof p->name);
        }
        if ((ev.present & EV_OTHER) && timed)
            widen(&seen_process(s, ev.other)->named[m], ev.time);
    }
    dpm_stream_close(log);
    return 1;
}

/* Whether `item` names process p: its program name, its label ("ri
 * 0.8.1"), its pid as dpm prints it (M.S.G), or its pid as a number. */
static int names(const struct seen_process *p, const char *item)
{
    char label[64], id[24];
    char *end;
    unsigned long long number = strtoull(item, &end, 0);
    dpm_label(p->name, p->pid, label, sizeof label);
    return (p->name[0] && strcmp(p->name, item) == 0) || strcmp(label, item) == 0 ||
           strcmp(dpm_pid_string(p->pid, id), item) == 0 || (end != item && !*end && number == p->pid);
}

/* Widen the window by process p's spans: those of its own records if it
 * has any (it is traced), else those of the records naming it. 1 if it
 * gave any. */
static int take_spans(const struct seen_process *p)
{
    int any = 0;
    for (uint32_t m = 0; m < DPM_WINDOW_MACHINES; m++) {
        const struct span *s = p->has_own ? &p->own[m] : &p->named[m];
        if (!s->seen)
            continue;
        window.machine_from[m] = window.on_machine[m] && window.machine_from[m] < s->first ? window.machine_from[m]
                                                                                          : s->first;
        window.machine_to[m] = window.on_machine[m] && window.machine_to[m] > s->last ? window.machine_to[m] : s->last;
        window.on_machine[m] = 1;
        any = 1;
    }
    return any;
}

/* Whether record ev lies in the span of its machine (spans found so far). */
static int in_span(const struct dpm_event *ev)
{
    uint32_t m = clock_of(ev);
    return (ev->present & EV_TIME) && m < DPM_WINDOW_MACHINES && window.on_machine[m] &&
           ev->time >= window.machine_from[m] && ev->time <= window.machine_to[m];
}

/* A record that carries a message: a SEND that sent something, or a RECEIVE. */
static int carries_message(const struct dpm_event *ev)
{
    return (ev->present & EV_MESSAGE_ID) && (ev->type == MT_RECEIVE || (ev->type == MT_SEND && ev->status == 0));
}

enum { SENT_IN_SPAN = 1, RECEIVED_IN_SPAN = 2 };

/* One hop of spans_by_messages over the logs args[0..n): the messages sent
 * or received in a span, then the spans they give the machines without
 * one. Returns how many machines got one. */
static int one_hop(char **args, int n)
{
    struct table messages = { 0 }, active = { 0 };
    struct span derived[DPM_WINDOW_MACHINES] = { 0 };
    struct dpm_error e;
    struct dpm_event ev;
    int got = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            struct dpm_stream *log = args[i][0] == '-' ? 0 : dpm_stream_open(args[i], 0, &e);
            i += args[i][0] == '-' && strcmp(args[i], "-o") == 0;
            if (!log)
                continue;
            dpm_stream_events_only(log);
            while (dpm_stream_next(log, &ev, &e) == 1) {
                uint32_t m = clock_of(&ev), *flags = carries_message(&ev) ? table_find(&messages, ev.message_id, 0) : 0;
                if (pass == 0 && carries_message(&ev) && in_span(&ev)) {
                    uint32_t flag = ev.type == MT_SEND ? SENT_IN_SPAN : RECEIVED_IN_SPAN;
                    if (flags)
                        *flags |= flag;
                    else
                        table_insert(&messages, ev.message_id, 0, flag);
                }
                if (pass == 0 || !(ev.present & EV_TIME) || !(ev.present & EV_PID) || m >= DPM_WINDOW_MACHINES ||
                    window.on_machine[m])
                    continue;
                int tied = flags && (*flags & (ev.type == MT_SEND ? RECEIVED_IN_SPAN : SENT_IN_SPAN));
                uint32_t *on = table_find(&active, ev.pid, 0);
                if (tied || (on && *on && ev.type != MT_RECEIVE))
                    widen(&derived[m], ev.time);
                if (tied && !on)
                    table_insert(&active, ev.pid, 0, 1);
                else if (on)
                    *on = tied || ev.type != MT_RECEIVE;
            }
            dpm_stream_close(log);
        }
    }
    for (uint32_t m = 0; m < DPM_WINDOW_MACHINES; m++)
        if (derived[m].seen) {
            window.machine_from[m] = derived[m].first;
            window.machine_to[m] = derived[m].last;
            window.on_machine[m] = 1;
            got++;
        }
    table_free(&messages);
    table_free(&active);
    return got;
}

/* Spans for the machines that have none, from the messages their records
 * exchanged with spans: on such a machine, from its first record that
 * received a message sent in a span, or sent one received in a span, to
 * its last; and after each of them, its process's records until it next
 * receives something else (the work a message into the window set off).
 * Hop by hop, as far as the messages go. */
static void spans_by_messages(char **args, int n)
{
    while (one_hop(args, n) > 0)
        ;
}

/* Set the window from the spans of the processes `list` names in the logs
 * among args[0..n) (load/window.h). 0, or -1 after saying why. */
static int window_of(const char *command, const char *list, char **args, int n)
{
    struct seen s = { 0 };
    int found = 1, logs = 0;
    for (int i = 0; i < n; i++) {
        if (args[i][0] == '-') {
            i += strcmp(args[i], "-o") == 0;
            continue;
        }
        logs += scan_log(&s, args[i]);
    }
    char *copy = strdup(list), *save = 0;
    for (char *item = copy ? strtok_r(copy, ",", &save) : 0; found && item; item = strtok_r(0, ",", &save)) {
        int named = 0;
        for (size_t p = 0; p < s.count; p++)
            if (names(&s.process[p], item))
                named |= take_spans(&s.process[p]);
        if (!named) {
            fprintf(stderr, "dpm %s: --window-of %s: no record of or naming such a process in the %d log%s read "
                    "(a name from CREATEPROCESS, a pid as M.S.G, or a number)\n", command, item, logs,
                    logs == 1 ? "" : "s");
            found = 0;
        }
    }
    free(copy);
    free(s.process);
    table_free(&s.index);
    if (found)
        spans_by_messages(args, n);
    for (uint32_t m = 0, first = 1; found && m < DPM_WINDOW_MACHINES; m++) {
        if (!window.on_machine[m])
            continue;
        window.from = first || window.machine_from[m] < window.from ? window.machine_from[m] : window.from;
        window.to = first || window.machine_to[m] > window.to ? window.machine_to[m] : window.to;
        first = 0;
    }
    return found ? 0 : -1;
}
