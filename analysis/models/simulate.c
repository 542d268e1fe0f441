/*
 * analysis/models/simulate.c — the model of processes and messages that
 * `dpm generate` runs, writing the records their meter would write
 * (models/simulate.h).
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demos.h"
#include "models/simulate.h"

#define REPLY_SLOT 9             /* where a CALL's reply link lands in the receiver's table */

static int refuse(struct simulation *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct simulation *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    return -1;
}

/* meter/'s tracelog_write_fn: block `index` at its place in the file. */
static int write_block(void *context, uint64_t index, const uint8_t *block)
{
    struct simulation *s = context;
    return pwrite(s->fd, block, TRACELOG_BLOCK, (off_t)(index * TRACELOG_BLOCK)) == TRACELOG_BLOCK ? 0 : -1;
}

int sim_begin(struct simulation *s, const char *path, uint32_t log_id)
{
    memset(s, 0, sizeof *s);
    s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (s->fd < 0)
        return refuse(s, "%s", strerror(errno));
    if (tracelog_begin(&s->writer, "dpm generate", 0, log_id, write_block, s) != 0)
        return refuse(s, "%s", strerror(errno));
    return 0;
}

int sim_end(struct simulation *s)
{
    int flushed = tracelog_flush(&s->writer), closed = close(s->fd);
    s->fd = -1;
    if (flushed != 0 || closed != 0)
        return refuse(s, "%s", strerror(errno));
    return 0;
}

void sim_free(struct simulation *s)
{
    for (uint32_t i = 0; i < s->nprocesses; i++)
        free(s->processes[i].queue);
    free(s->processes);
    if (s->fd > 0)
        close(s->fd);
}

/* ---- records ---- */

/* Runnable processes on machine m: the header's load. */
static uint32_t load_of(const struct simulation *s, uint32_t m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nprocesses; i++)
        n += s->processes[i].machine == m && !s->processes[i].exited && s->processes[i].wait == SIM_RUNNING;
    return n;
}

/* Write a record of process p (if it is traced): the header from p and
 * its machine's clock now (read with its skew), then the body. */
static void record(struct simulation *s, struct sim_process *p, uint32_t type, const void *body, size_t size)
{
    if (!p->traced)
        return;
    struct meter_record r;
    memset(&r, 0, sizeof r);
    r.header = (struct meter_header){
        .machine = p->machine, .traceType = type, .time = s->clock[p->machine] + s->skew[p->machine],
        .procTime = p->proctime, .pc = s->pc, .load = load_of(s, p->machine),
        .length = (uint32_t)(sizeof r.header + meter_body_layout(type)->size), .pid = p->pid,
        .sequence = p->sequence++,
    };
    memcpy(&r.body, body, size);
    if (s->limit && s->records >= s->limit)
        return;
    if (tracelog_append(&s->writer, &r, meter_all_fields(type)) != 0)
        refuse(s, "writing the log: %s", strerror(errno));
    s->records++;
}

/* ---- processes ---- */

int sim_find(const struct simulation *s, const char *name)
{
    for (uint32_t i = 0; i < s->nprocesses; i++)
        if (strcmp(s->processes[i].name, name) == 0)
            return (int)i;
    return -1;
}

int sim_process(struct simulation *s, const char *name, uint32_t machine, const char *program, uint64_t pid,
                uint64_t parent, int traced, int attached, uint64_t proctime)
{
    if (sim_find(s, name) >= 0)
        return refuse(s, "%s is already a process", name);
    if (machine >= SIM_MACHINES)
        return refuse(s, "machine %u: machines are 0 to %d", machine, SIM_MACHINES - 1);
    if (s->nprocesses == s->capacity) {
        size_t n = s->capacity ? 2 * s->capacity : 16;
        struct sim_process *bigger = realloc(s->processes, n * sizeof *bigger);
        if (!bigger)
            return refuse(s, "out of memory");
        s->processes = bigger;
        s->capacity = n;
    }
    struct sim_process *p = &s->processes[s->nprocesses];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->program, sizeof p->program, "%s", program);
    p->machine = machine;
    p->pid = pid ? pid : (uint64_t)machine << 56 | (uint64_t)(16 + s->nprocesses) << 20 | 1;
    p->parent = parent;
    p->traced = traced;
    p->caller = -1;
    p->proctime = attached ? proctime : 0;
    s->nprocesses++;
    if (!attached) {
        struct meter_CREATEPROCESS b = { .parent = parent };
        memcpy(&b.nameLow, p->program, 8);
        memcpy(&b.nameHigh, p->program + 8, 8);
        record(s, p, MT_CREATEPROCESS, &b, sizeof b);
    }
    return s->error[0] ? -1 : (int)(s->nprocesses - 1);
}

/* Whether process p may act now; if not, says why. */
static int can_act(struct simulation *s, struct sim_process *p, const char *what)
{
    if (p->exited)
        return refuse(s, "%s has exited: it cannot %s", p->name, what);
    if (p->wait != SIM_RUNNING)
        return refuse(s, "%s is waiting in a %s: it cannot %s", p->name,
                      p->wait == SIM_CALLING ? "call" : "receive", what);
    return 0;
}

int sim_compute(struct simulation *s, int i, uint64_t instructions)
{
    struct sim_process *p = &s->processes[i];
    if (can_act(s, p, "compute"))
        return -1;
    p->proctime += instructions;
    s->clock[p->machine] += instructions;
    return 0;
}

/* ---- messages ---- */

/* Hand message m to its receiver q, which waits for it: RECEIVE. (A
 * process waiting in a CALL waits only for its reply: other messages
 * are queued meanwhile.) */
static void hand_over(struct simulation *s, struct sim_process *q, const struct sim_message *m)
{
    struct meter_RECEIVE b = { .fromTask = s->processes[m->from].pid, .messageId = m->id, .channel = m->channel,
                               .size = (uint32_t)m->size, .linkSlot = -1, .replySlot = m->call ? REPLY_SLOT : -1 };
    q->wait = SIM_RUNNING;
    if (m->call)
        q->caller = (int)m->from;
    record(s, q, MT_RECEIVE, &b, sizeof b);
}

/* Put message m in q's queue: MESSAGEQUEUED. */
static int enqueue(struct simulation *s, struct sim_process *q, const struct sim_message *m)
{
    if (q->queue_count == q->queue_capacity) {
        uint32_t n = q->queue_capacity ? 2 * q->queue_capacity : 8;
        struct sim_message *bigger = malloc(n * sizeof *bigger);
        if (!bigger)
            return refuse(s, "out of memory");
        for (uint32_t k = 0; k < q->queue_count; k++)
            bigger[k] = q->queue[(q->queue_head + k) % q->queue_capacity];
        free(q->queue);
        q->queue = bigger;
        q->queue_head = 0;
        q->queue_capacity = n;
    }
    q->queue[(q->queue_head + q->queue_count++) % q->queue_capacity] = *m;
    struct meter_MESSAGEQUEUED b = { .fromTask = s->processes[m->from].pid, .messageId = m->id,
                                     .channel = m->channel, .size = (uint32_t)m->size,
                                     .queueLength = q->queue_count };
    record(s, q, MT_MESSAGEQUEUED, &b, sizeof b);
    return 0;
}

int sim_send(struct simulation *s, int i, int to, uint64_t size, uint32_t channel, int call)
{
    struct sim_process *p = &s->processes[i], *q = &s->processes[to];
    if (can_act(s, p, call ? "call" : "send"))
        return -1;
    if (size > 4096)
        return refuse(s, "%s: a message holds at most 4096 bytes", p->name);
    struct sim_message m = { .id = METER_MESSAGE_ID(p->machine, 0, ++s->message_counter[p->machine]),
                             .from = (uint32_t)i, .channel = channel, .size = size, .call = call };
    struct meter_SEND b = { .toTask = q->pid, .messageId = m.id, .channel = channel, .size = (uint32_t)size,
                            .sendLink = 1, .passLink = -1, .call = (uint32_t)call, .status = q->exited ? E_DEAD : 0 };
    record(s, p, MT_SEND, &b, sizeof b);
    if (!q->exited) {
        if (q->machine != p->machine && s->clock[q->machine] < s->clock[p->machine] + s->delay)
            s->clock[q->machine] = s->clock[p->machine] + s->delay;
        m.time = s->clock[q->machine];
        int awaited = q->wait == SIM_RECEIVING || (q->wait == SIM_CALLING && q->callee == i && !call);
        if (awaited)
            hand_over(s, q, &m);
        else if (enqueue(s, q, &m))
            return -1;
    }
    if (call) {
        struct meter_RECEIVECALL rc = { .channel = 0xffffffffu, .kind = 2, .empty = (uint32_t)q->exited };
        record(s, p, MT_RECEIVECALL, &rc, sizeof rc);
        p->wait = q->exited ? SIM_RUNNING : SIM_CALLING;   /* a CALL's receive half takes only the reply */
        p->callee = to;
    }
    return s->error[0] ? -1 : 0;
}

int sim_reply(struct simulation *s, int i, uint64_t size)
{
    struct sim_process *p = &s->processes[i];
    if (p->caller < 0)
        return refuse(s, "%s has received no CALL to reply to", p->name);
    int to = p->caller;
    p->caller = -1;
    return sim_send(s, i, to, size, 0, 0);
}

int sim_receive(struct simulation *s, int i, int nonblocking)
{
    struct sim_process *p = &s->processes[i];
    if (can_act(s, p, "receive"))
        return -1;
    int empty = nonblocking && p->queue_count == 0;
    struct meter_RECEIVECALL b = { .channel = 0xffffffffu, .kind = (uint32_t)nonblocking, .empty = (uint32_t)empty };
    record(s, p, MT_RECEIVECALL, &b, sizeof b);
    if (p->queue_count) {
        struct sim_message m = p->queue[p->queue_head];
        p->queue_head = (p->queue_head + 1) % p->queue_capacity;
        p->queue_count--;
        hand_over(s, p, &m);
    } else if (!nonblocking) {
        p->wait = SIM_RECEIVING;
    }
    return s->error[0] ? -1 : 0;
}

int sim_exit(struct simulation *s, int i, int64_t status)
{
    struct sim_process *p = &s->processes[i];
    if (can_act(s, p, "exit"))
        return -1;
    struct meter_DESTROYPROCESS b = { .status = status };
    record(s, p, MT_DESTROYPROCESS, &b, sizeof b);
    p->exited = 1;
    return s->error[0] ? -1 : 0;
}

int sim_move(struct simulation *s, int i, uint32_t machine, uint64_t took, uint64_t bytes)
{
    struct sim_process *p = &s->processes[i];
    if (p->exited)
        return refuse(s, "%s has exited: it cannot move", p->name);
    if (machine >= SIM_MACHINES)
        return refuse(s, "machine %u: machines are 0 to %d", machine, SIM_MACHINES - 1);
    if (machine == p->machine)
        return refuse(s, "%s is on machine %u already", p->name, machine);
    uint32_t from = p->machine;
    if (s->clock[machine] < s->clock[from] + took)
        s->clock[machine] = s->clock[from] + took;
    p->machine = machine;
    struct meter_MIGRATE b = { .fromMachine = from, .toMachine = machine, .took = took, .bytes = bytes,
                               .messages = p->queue_count, .moves = ++p->moves };
    record(s, p, MT_MIGRATE, &b, sizeof b);
    return s->error[0] ? -1 : 0;
}

int sim_skip(struct simulation *s, int i, uint64_t n)
{
    s->processes[i].sequence += n;
    return 0;
}

void sim_lose(struct simulation *s, uint64_t n)
{
    tracelog_lose(&s->writer, n);
}

void sim_idle(struct simulation *s, uint32_t machine, uint64_t n)
{
    s->clock[machine % SIM_MACHINES] += n;
}
