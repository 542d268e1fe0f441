/*
 * meter/summary.c — folding meter records into a summary, and packing
 * and reading one (summary.h). Plain C for the guest (the filter, the
 * scheduler) and the host (tests/meter_test.c).
 */
#include <string.h>
#include "summary.h"

void meter_summary_begin(struct meter_summary *s, uint64_t sequence, uint32_t machine, uint64_t now)
{
    memset(&s->head, 0, sizeof s->head);
    s->head.magic = METER_SUMMARY_MAGIC;
    s->head.sequence = sequence;
    s->head.machine = machine;
    s->head.begin_ns = s->head.end_ns = now;
}

/* Add `bytes` in one message from `from` to `to`. */
static void add_message(struct meter_summary *s, uint64_t from, uint64_t to, uint64_t bytes)
{
    struct meter_summary_head *h = &s->head;
    for (uint32_t i = 0; i < h->npairs; i++) {
        struct meter_summary_pair *p = &s->pairs[i];
        if (p->from == from && p->to == to) {
            p->messages++;
            p->bytes += bytes;
            return;
        }
    }
    if (h->npairs == METER_SUMMARY_PAIRS) {
        h->messages_left_out++;
        return;
    }
    s->pairs[h->npairs++] = (struct meter_summary_pair){ .from = from, .to = to, .messages = 1, .bytes = bytes };
}

/* The entry of process pid, made if it is new; 0 if there is no room. */
static struct meter_summary_process *process_entry(struct meter_summary *s, uint64_t pid)
{
    struct meter_summary_head *h = &s->head;
    for (uint32_t i = 0; i < h->nprocesses; i++)
        if (s->processes[i].pid == pid)
            return &s->processes[i];
    if (h->nprocesses == METER_SUMMARY_PROCESSES) {
        h->processes_left_out++;
        return 0;
    }
    s->processes[h->nprocesses] = (struct meter_summary_process){ .pid = pid };
    return &s->processes[h->nprocesses++];
}

void meter_summary_add(struct meter_summary *s, const struct meter_header *h, int sender_metered)
{
    const void *body = h + 1;
    s->head.records++;
    struct meter_summary_process *p = process_entry(s, h->pid);
    if (p) {
        p->machine = h->machine;
        p->records++;
        p->ended |= h->traceType == MT_DESTROYPROCESS;
    }
    if (h->traceType == MT_SEND) {
        const struct meter_SEND *b = body;
        if (b->status == 0)
            add_message(s, h->pid, b->toTask, b->size);
    } else if (h->traceType == MT_RECEIVE && !sender_metered) {
        const struct meter_RECEIVE *b = body;
        add_message(s, b->fromTask, h->pid, b->size);
    } else if (h->traceType == MT_MOVEDATA) {
        const struct meter_MOVEDATA *b = body;
        if (b->toTask != h->pid)
            add_message(s, h->pid, b->toTask, b->size);
        if (b->fromTask != h->pid && b->fromTask != b->toTask)
            add_message(s, h->pid, b->fromTask, b->size);
    }
}

uint32_t meter_summary_pack(struct meter_summary *s)
{
    const struct meter_summary_head *h = &s->head;
    uint8_t *after_pairs = (uint8_t *)&s->pairs[h->npairs];
    memmove(after_pairs, s->processes, h->nprocesses * sizeof s->processes[0]);
    return (uint32_t)(sizeof *h + h->npairs * sizeof s->pairs[0] + h->nprocesses * sizeof s->processes[0]);
}

int meter_summary_parse(const void *message, uint32_t len, const struct meter_summary_head **head,
                        const struct meter_summary_pair **pairs, const struct meter_summary_process **processes)
{
    const struct meter_summary_head *h = message;
    if (len < sizeof *h || h->magic != METER_SUMMARY_MAGIC || h->npairs > METER_SUMMARY_PAIRS ||
        h->nprocesses > METER_SUMMARY_PROCESSES ||
        len != sizeof *h + h->npairs * sizeof **pairs + h->nprocesses * sizeof **processes)
        return -1;
    *head = h;
    *pairs = (const struct meter_summary_pair *)(h + 1);
    *processes = (const struct meter_summary_process *)(*pairs + h->npairs);
    return 0;
}
