/*
 * analysis/models/vclock.c — vector timestamps over the history graph
 * (models/vclock.h).
 */
#include <stdlib.h>
#include <string.h>

#include "models/vclock.h"

/* The vectors of SENDs walked whose other end is not: a pool of
 * nprocesses-wide slots, reused through a free list. */
struct pending {
    uint32_t *vectors;
    uint32_t *free_slots;
    uint32_t nslots, nfree, capacity;
    uint32_t *slot_of;          /* [nnodes]: a walked SEND's slot */
};

/* A slot for a vector; UINT32_MAX if memory runs out. */
static uint32_t take_slot(struct pending *q, uint32_t width)
{
    if (q->nfree)
        return q->free_slots[--q->nfree];
    if (q->nslots == q->capacity) {
        uint32_t n = q->capacity ? 2 * q->capacity : 64;
        uint32_t *vectors = realloc(q->vectors, (size_t)n * width * sizeof *vectors + 1);
        uint32_t *free_slots = realloc(q->free_slots, (size_t)n * sizeof *free_slots + 1);
        if (vectors)
            q->vectors = vectors;
        if (free_slots)
            q->free_slots = free_slots;
        if (!vectors || !free_slots)
            return UINT32_MAX;
        q->capacity = n;
    }
    return q->nslots++;
}

/* Walk the nodes with their vectors (models/vclock.h). */
int vclock_walk(const struct history *h, vclock_visit *visit, void *context)
{
    uint32_t width = h->nprocesses;
    struct pending q = { 0 };
    uint32_t *current = calloc((size_t)width * width + 1, sizeof *current);
    q.slot_of = malloc((size_t)h->nnodes * sizeof *q.slot_of + 1);
    int ok = current && q.slot_of;
    for (uint32_t i = 0; ok && i < h->nnodes; i++) {
        uint32_t v = h->order[i], p = h->process[v], from = h->cross_from[v];
        uint32_t *vector = &current[(size_t)p * width];
        if (from != HISTORY_NONE) {
            const uint32_t *sent = &q.vectors[(size_t)q.slot_of[from] * width];
            for (uint32_t k = 0; k < width; k++)
                if (sent[k] > vector[k])
                    vector[k] = sent[k];
            q.free_slots[q.nfree++] = q.slot_of[from];
        }
        vector[p]++;
        if (h->cross_to[v] != HISTORY_NONE) {
            uint32_t slot = take_slot(&q, width);
            ok = slot != UINT32_MAX;
            if (ok) {
                memcpy(&q.vectors[(size_t)slot * width], vector, width * sizeof *vector);
                q.slot_of[v] = slot;
            }
        }
        if (ok)
            visit(context, v, vector);
    }
    free(current);
    free(q.vectors);
    free(q.free_slots);
    free(q.slot_of);
    return ok ? 0 : -1;
}

/* The walk of vclock_order. */
struct order_walk {
    const struct history *h;
    struct vclock_order *o;
};

/* Count, at node v, the nodes of other processes that happen before it. */
static void count_ordered(void *context, uint32_t v, const uint32_t *vector)
{
    struct order_walk *walk = context;
    uint32_t p = walk->h->process[v];
    for (uint32_t k = 0; k < walk->h->nprocesses; k++)
        if (k != p)
            walk->o->ordered += vector[k];
}

/* How much happens-before orders (models/vclock.h). */
int vclock_order(const struct history *h, struct vclock_order *o)
{
    struct order_walk walk = { h, o };
    uint64_t same = 0;
    memset(o, 0, sizeof *o);
    o->nodes = h->nnodes;
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        uint64_t n = h->first_node[p + 1] - h->first_node[p];
        same += n * (n - (n > 0)) / 2;
    }
    o->pairs = o->nodes * (o->nodes - (o->nodes > 0)) / 2 - same;
    return vclock_walk(h, count_ordered, &walk);
}
