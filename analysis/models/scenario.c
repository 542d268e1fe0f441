/*
 * analysis/models/scenario.c — parsing and running `dpm generate` scenarios
 * (models/scenario.h). A scenario is parsed whole into statements first, so
 * that a mistake anywhere is found before anything is written, and `repeat`
 * blocks can run their statements again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "load/table.h"
#include "models/scenario.h"

#define MAX_WORDS 16
#define MAX_DEPTH 16             /* repeat blocks inside each other */

enum op {
    OP_MACHINE, OP_SKEW, OP_DELAY, OP_PROCESS, OP_LOSE, OP_IDLE, OP_REPEAT, OP_END,
    OP_COMPUTE, OP_SEND, OP_CALL, OP_REPLY, OP_RECEIVE, OP_ARECEIVE, OP_EXIT, OP_SKIP, OP_MOVE,
};

struct statement {
    uint32_t line;
    uint8_t op;
    char who[24], to[24];        /* the acting process; the destination or parent */
    char program[17];
    uint64_t n, m;               /* the numbers: size, count, machine, instructions ... */
    uint64_t bytes;              /* OP_MOVE: the memory that moves */
    uint64_t pid, proctime;
    int64_t status;
    uint32_t channel;
    uint8_t traced, attached;
    uint32_t end;                /* OP_REPEAT: the index of its OP_END */
};

struct parser {
    const char *path;
    uint32_t line;
    char *words[MAX_WORDS];
    int nwords;
    struct dpm_error *e;
};

/* ---- words and numbers ---- */

/* Split `line` (changed in place) into words; a '#' starts a comment. 0, or -1 if there are too many. */
static int split(struct parser *ps, char *line)
{
    ps->nwords = 0;
    for (char *c = line; *c && *c != '#';) {
        while (*c == ' ' || *c == '\t' || *c == '\r')
            *c++ = 0;
        if (!*c || *c == '#')
            break;
        if (ps->nwords == MAX_WORDS) {
            dpm_error_set(ps->e, "%s:%" PRIu32 ": too many words", ps->path, ps->line);
            return -1;
        }
        ps->words[ps->nwords++] = c;
        while (*c && *c != ' ' && *c != '\t' && *c != '\r' && *c != '#')
            c++;
        if (*c == '#')
            *c = 0;
    }
    return 0;
}

/* Word i as a number (decimal, 0x hexadecimal, or negative if `sign`); 0, or -1 with the error. */
static int number(struct parser *ps, int i, const char *what, uint64_t *out, int sign)
{
    if (i >= ps->nwords) {
        dpm_error_set(ps->e, "%s:%" PRIu32 ": expected %s", ps->path, ps->line, what);
        return -1;
    }
    const char *w = ps->words[i];
    char *end;
    errno = 0;
    *out = sign && w[0] == '-' ? (uint64_t)strtoll(w, &end, 0) : strtoull(w, &end, 0);
    if (errno || end == w || *end || (!sign && w[0] == '-')) {
        dpm_error_set(ps->e, "%s:%" PRIu32 ": expected %s, not '%s'", ps->path, ps->line, what, w);
        return -1;
    }
    return 0;
}

/* Word i as a pid M.S.G; 0, or -1 with the error. */
static int pid_word(struct parser *ps, int i, uint64_t *out)
{
    unsigned machine, slot, gen;
    char extra;
    if (i >= ps->nwords || sscanf(ps->words[i], "%u.%u.%u%c", &machine, &slot, &gen, &extra) != 3 ||
        machine > 255 || slot > 0xfff || gen > 0xfffff) {
        dpm_error_set(ps->e, "%s:%" PRIu32 ": expected a pid MACHINE.SLOT.GENERATION", ps->path, ps->line);
        return -1;
    }
    *out = (uint64_t)machine << 56 | (uint64_t)slot << 20 | gen;
    return 0;
}

static int wrong(struct parser *ps, const char *what)
{
    dpm_error_set(ps->e, "%s:%" PRIu32 ": %s", ps->path, ps->line, what);
    return -1;
}

/* ---- statements ---- */

/* process NAME machine M [name PROGRAM] [pid M.S.G] [parent NAME] [untraced] [attached PROCTIME] */
static int parse_process(struct parser *ps, struct statement *st)
{
    if (ps->nwords < 4 || strcmp(ps->words[2], "machine") != 0)
        return wrong(ps, "expected: process NAME machine M [name PROGRAM] [pid M.S.G] [parent NAME] "
                         "[untraced] [attached PROCTIME]");
    snprintf(st->who, sizeof st->who, "%s", ps->words[1]);
    st->traced = 1;
    if (number(ps, 3, "a machine number", &st->m, 0))
        return -1;
    for (int i = 4; i < ps->nwords; i++) {
        const char *w = ps->words[i];
        if (strcmp(w, "untraced") == 0)
            st->traced = 0;
        else if (strcmp(w, "name") == 0 && i + 1 < ps->nwords)
            snprintf(st->program, sizeof st->program, "%s", ps->words[++i]);
        else if (strcmp(w, "parent") == 0 && i + 1 < ps->nwords)
            snprintf(st->to, sizeof st->to, "%s", ps->words[++i]);
        else if (strcmp(w, "pid") == 0) {
            if (pid_word(ps, ++i, &st->pid))
                return -1;
        } else if (strcmp(w, "attached") == 0) {
            st->attached = 1;
            if (number(ps, ++i, "the PROCTIME it is attached at", &st->proctime, 0))
                return -1;
        } else {
            dpm_error_set(ps->e, "%s:%" PRIu32 ": unknown word '%s' in a process declaration", ps->path, ps->line, w);
            return -1;
        }
    }
    return 0;
}

/* NAME send|call TO SIZE [channel C] */
static int parse_send(struct parser *ps, struct statement *st)
{
    if (ps->nwords != 4 && !(ps->nwords == 6 && strcmp(ps->words[4], "channel") == 0))
        return wrong(ps, "expected: NAME send|call TO SIZE [channel C]");
    snprintf(st->to, sizeof st->to, "%s", ps->words[2]);
    uint64_t channel = 0;
    if (number(ps, 3, "a size in bytes", &st->n, 0) || (ps->nwords == 6 && number(ps, 5, "a channel", &channel, 0)))
        return -1;
    st->channel = (uint32_t)channel;
    return 0;
}

/* NAME move MACHINE TOOK [bytes B] */
static int parse_move(struct parser *ps, struct statement *st)
{
    if (ps->nwords != 4 && !(ps->nwords == 6 && strcmp(ps->words[4], "bytes") == 0))
        return wrong(ps, "expected: NAME move MACHINE TOOK [bytes B]");
    return number(ps, 2, "a machine number", &st->m, 0) || number(ps, 3, "a time in ns", &st->n, 0) ||
                   (ps->nwords == 6 && number(ps, 5, "a number of bytes", &st->bytes, 0))
               ? -1
               : 0;
}

/* A statement whose first word is a process's name: NAME STEP ... */
static int parse_step(struct parser *ps, struct statement *st)
{
    static const struct { const char *word; uint8_t op; int words; const char *usage; } steps[] = {
        { "compute", OP_COMPUTE, 3, "NAME compute INSTRUCTIONS" }, { "send", OP_SEND, 0, 0 },
        { "call", OP_CALL, 0, 0 },                                  { "reply", OP_REPLY, 3, "NAME reply SIZE" },
        { "receive", OP_RECEIVE, 2, "NAME receive" },               { "areceive", OP_ARECEIVE, 2, "NAME areceive" },
        { "exit", OP_EXIT, -1, "NAME exit [STATUS]" },              { "skip", OP_SKIP, 3, "NAME skip RECORDS" },
        { "move", OP_MOVE, 0, 0 },
    };
    snprintf(st->who, sizeof st->who, "%s", ps->words[0]);
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        if (ps->nwords < 2 || strcmp(ps->words[1], steps[k].word) != 0)
            continue;
        st->op = steps[k].op;
        if (steps[k].op == OP_SEND || steps[k].op == OP_CALL)
            return parse_send(ps, st);
        if (steps[k].op == OP_MOVE)
            return parse_move(ps, st);
        if (steps[k].op == OP_EXIT) {
            uint64_t status = 0;
            if (ps->nwords > 3 || (ps->nwords == 3 && number(ps, 2, "an exit status", &status, 1)))
                return ps->nwords > 3 ? wrong(ps, "expected: NAME exit [STATUS]") : -1;
            st->status = (int64_t)status;
            return 0;
        }
        if (ps->nwords != steps[k].words) {
            dpm_error_set(ps->e, "%s:%" PRIu32 ": expected: %s", ps->path, ps->line, steps[k].usage);
            return -1;
        }
        return ps->nwords == 3 ? number(ps, 2, "a number", &st->n, 0) : 0;
    }
    return wrong(ps, "expected a declaration (machine, delay, process), lose, idle, repeat, end, or a process's "
                     "step: compute, send, call, reply, receive, areceive, exit, skip, move");
}

/* One line's statement into *st; 1, 0 for a line with none, -1 with the error. */
static int parse_line(struct parser *ps, char *line, struct statement *st)
{
    if (split(ps, line))
        return -1;
    if (ps->nwords == 0)
        return 0;
    memset(st, 0, sizeof *st);
    st->line = ps->line;
    const char *w = ps->words[0];
    int status;
    if (strcmp(w, "process") == 0) {
        st->op = OP_PROCESS;
        status = parse_process(ps, st);
    } else if (strcmp(w, "machine") == 0) {
        st->op = ps->nwords == 4 && strcmp(ps->words[2], "skew") == 0 ? OP_SKEW : OP_MACHINE;
        status = ps->nwords != 4 || (strcmp(ps->words[2], "clock") != 0 && strcmp(ps->words[2], "skew") != 0)
                     ? wrong(ps, "expected: machine M clock T, or machine M skew NS")
                 : number(ps, 1, "a machine number", &st->m, 0) || number(ps, 3, "a time in ns", &st->n, 0) ? -1 : 0;
    } else if (strcmp(w, "idle") == 0) {
        st->op = OP_IDLE;
        status = ps->nwords != 3 ? wrong(ps, "expected: idle MACHINE NS")
                 : number(ps, 1, "a machine number", &st->m, 0) || number(ps, 2, "a time in ns", &st->n, 0) ? -1 : 0;
    } else if (strcmp(w, "delay") == 0 || strcmp(w, "lose") == 0 || strcmp(w, "repeat") == 0) {
        st->op = w[0] == 'd' ? OP_DELAY : w[0] == 'l' ? OP_LOSE : OP_REPEAT;
        status = ps->nwords != 2 ? wrong(ps, "expected one number after it") : number(ps, 1, "a number", &st->n, 0);
    } else if (strcmp(w, "end") == 0) {
        st->op = OP_END;
        status = ps->nwords != 1 ? wrong(ps, "expected nothing after end") : 0;
    } else {
        status = parse_step(ps, st);
    }
    return status ? -1 : 1;
}

/* Parse the whole text into statements (*out, *count), matching each
 * repeat with its end; 0, or -1 with the error. */
static int parse(const char *path, const char *text, size_t len, struct statement **out, size_t *count,
                 struct dpm_error *e)
{
    struct parser ps = { .path = path, .e = e };
    size_t capacity = 0, open[MAX_DEPTH];
    int depth = 0;
    *out = 0;
    *count = 0;
    for (size_t at = 0; at < len;) {
        size_t end = at;
        while (end < len && text[end] != '\n')
            end++;
        char line[1024];
        ps.line++;
        if (end - at >= sizeof line)
            return wrong(&ps, "line too long");
        memcpy(line, text + at, end - at);
        line[end - at] = 0;
        at = end + 1;
        struct statement st;
        int status = parse_line(&ps, line, &st);
        if (status < 0)
            return -1;
        if (status == 0)
            continue;
        if (st.op == OP_REPEAT && depth == MAX_DEPTH)
            return wrong(&ps, "repeat blocks nested too deep");
        if (st.op == OP_END && depth == 0)
            return wrong(&ps, "end without repeat");
        if (st.op == OP_END)
            (*out)[open[--depth]].end = (uint32_t)*count;
        *out = array_grow(*out, &capacity, *count, sizeof **out);
        if (st.op == OP_REPEAT)
            open[depth++] = *count;
        (*out)[(*count)++] = st;
    }
    if (depth > 0) {
        ps.line = (*out)[open[depth - 1]].line;
        return wrong(&ps, "repeat without end");
    }
    return 0;
}

/* ---- running ---- */

/* The process called `name`; -1 with the error if there is none. */
static int named(struct simulation *s, const char *path, const struct statement *st, const char *name,
                 struct dpm_error *e)
{
    int p = sim_find(s, name);
    if (p < 0)
        dpm_error_set(e, "%s:%" PRIu32 ": no process %s (declare it first: process %s machine M)", path, st->line,
                      name, name);
    return p;
}

/* A declaration: a machine's clock or skew, the delay, a process. Only on the first pass. */
static int declare(struct simulation *s, const struct statement *st, const char *path, struct dpm_error *e)
{
    if (st->op == OP_DELAY) {
        s->delay = st->n;
        return 0;
    }
    if (st->m >= SIM_MACHINES) {
        dpm_error_set(e, "%s:%" PRIu32 ": machines are numbered 0 to %d", path, st->line, SIM_MACHINES - 1);
        return -1;
    }
    if (st->op == OP_MACHINE) {
        s->clock[st->m] = st->n;
        return 0;
    }
    if (st->op == OP_SKEW) {
        s->skew[st->m] = st->n;
        return 0;
    }
    int parent = st->to[0] ? named(s, path, st, st->to, e) : -1;
    if (st->to[0] && parent < 0)
        return -1;
    return sim_process(s, st->who, (uint32_t)st->m, st->program, st->pid, parent >= 0 ? s->processes[parent].pid : 0,
                       st->traced, st->attached, st->proctime) < 0 ? -1 : 0;
}

/* A process's step. */
static int step(struct simulation *s, const struct statement *st, const char *path, struct dpm_error *e)
{
    int p = named(s, path, st, st->who, e);
    if (p < 0)
        return -1;
    switch (st->op) {
    case OP_COMPUTE:
        return sim_compute(s, p, st->n);
    case OP_SEND:
    case OP_CALL: {
        int to = named(s, path, st, st->to, e);
        return to < 0 ? -2 : sim_send(s, p, to, st->n, st->channel, st->op == OP_CALL);
    }
    case OP_REPLY:
        return sim_reply(s, p, st->n);
    case OP_RECEIVE:
    case OP_ARECEIVE:
        return sim_receive(s, p, st->op == OP_ARECEIVE);
    case OP_EXIT:
        return sim_exit(s, p, st->status);
    case OP_MOVE:
        return sim_move(s, p, (uint32_t)st->m, st->n, st->bytes);
    default:
        return sim_skip(s, p, st->n);
    }
}

/* Run one statement (a declaration only on the first pass); 0, or -1 with the error. */
static int execute(struct simulation *s, const struct statement *st, int first, const char *path, struct dpm_error *e)
{
    int status;
    s->pc = 0x10000 + 4 * (uint64_t)st->line;       /* a pc per line: dumps show where a record came from */
    switch (st->op) {
    case OP_MACHINE:
    case OP_SKEW:
    case OP_DELAY:
    case OP_PROCESS:
        status = first ? declare(s, st, path, e) : 0;
        break;
    case OP_LOSE:
        sim_lose(s, st->n);
        return 0;
    case OP_IDLE:
        sim_idle(s, (uint32_t)st->m, st->n);
        return 0;
    default:
        status = step(s, st, path, e);
        break;
    }
    if (status == -1 && s->error[0])
        dpm_error_set(e, "%s:%" PRIu32 ": %s", path, st->line, s->error);
    return status ? -1 : 0;
}

/* One pass over the statements, running repeat blocks their number of times. */
static int run_pass(struct simulation *s, const struct statement *sts, size_t count, int first, const char *path,
                    struct dpm_error *e)
{
    struct { size_t start; uint64_t left; } blocks[MAX_DEPTH];
    int depth = 0;
    for (size_t at = 0; at < count;) {
        const struct statement *st = &sts[at];
        if (st->op == OP_REPEAT && st->n == 0) {
            at = st->end + 1;
        } else if (st->op == OP_REPEAT) {
            blocks[depth].start = at;
            blocks[depth++].left = st->n;
            at++;
        } else if (st->op == OP_END) {
            if (--blocks[depth - 1].left > 0)
                at = blocks[depth - 1].start + 1;
            else
                depth--, at++;
        } else {
            if (execute(s, st, first, path, e))
                return -1;
            at++;
        }
    }
    return 0;
}

int scenario_run(struct simulation *s, const char *path, const char *text, size_t len, uint64_t repeat,
                 struct dpm_error *e)
{
    struct statement *sts;
    size_t count;
    int status = parse(path, text, len, &sts, &count, e);
    for (uint64_t pass = 0; status == 0 && pass < repeat; pass++)
        status = run_pass(s, sts, count, pass == 0, path, e);
    free(sts);
    return status;
}
