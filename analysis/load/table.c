/*
 * analysis/load/table.c — the analyzer's hash table and growing arrays
 * (load/table.h).
 */
#include "load/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mixes the two keys into a well-spread hash (the finaliser of
 * MurmurHash3): pids and message ids differ mostly in a few bits. */
static uint64_t hash(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* Out of memory: the analyzer cannot go on. */
static void out_of_memory(void)
{
    fputs("dpm: out of memory\n", stderr);
    exit(1);
}

uint32_t *table_find(const struct table *t, uint64_t a, uint64_t b)
{
    if (t->capacity == 0)
        return 0;
    size_t mask = t->capacity - 1;
    for (size_t i = hash(a, b) & mask;; i = (i + 1) & mask) {
        struct table_entry *e = &t->entries[i];
        if (!e->used)
            return 0;
        if (e->a == a && e->b == b)
            return &e->value;
    }
}

/* Put an entry known to be new into a table with room for it. */
static void place(struct table *t, uint64_t a, uint64_t b, uint32_t value)
{
    size_t mask = t->capacity - 1, i = hash(a, b) & mask;
    while (t->entries[i].used)
        i = (i + 1) & mask;
    t->entries[i] = (struct table_entry){ a, b, value, 1 };
    t->count++;
}

/* Double the table (from 64 entries at first), placing every entry again. */
static void grow(struct table *t)
{
    struct table old = *t;
    t->capacity = old.capacity ? 2 * old.capacity : 64;
    t->entries = calloc(t->capacity, sizeof *t->entries);
    if (!t->entries)
        out_of_memory();
    t->count = 0;
    for (size_t i = 0; i < old.capacity; i++)
        if (old.entries[i].used)
            place(t, old.entries[i].a, old.entries[i].b, old.entries[i].value);
    free(old.entries);
}

void table_insert(struct table *t, uint64_t a, uint64_t b, uint32_t value)
{
    if (2 * (t->count + 1) > t->capacity)     /* at most half full: probes stay short */
        grow(t);
    place(t, a, b, value);
}

void table_remove(struct table *t, uint64_t a, uint64_t b)
{
    uint32_t *value = table_find(t, a, b);
    if (!value)
        return;
    size_t mask = t->capacity - 1;
    size_t hole = (size_t)((struct table_entry *)((char *)value - offsetof(struct table_entry, value)) - t->entries);
    t->entries[hole].used = 0;
    t->count--;
    /* Entries after the hole that could sit in it (their home is not
     * between the hole and them) move back, so no search stops early. */
    for (size_t i = (hole + 1) & mask; t->entries[i].used; i = (i + 1) & mask) {
        size_t home = hash(t->entries[i].a, t->entries[i].b) & mask;
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            t->entries[hole] = t->entries[i];
            t->entries[i].used = 0;
            hole = i;
        }
    }
}

void table_free(struct table *t)
{
    free(t->entries);
    *t = (struct table){ 0 };
}

void *array_grow(void *array, size_t *capacity, size_t count, size_t size)
{
    if (count < *capacity)
        return array;
    size_t n = *capacity ? 2 * *capacity : 16;
    void *bigger = realloc(array, n * size);
    if (!bigger)
        out_of_memory();
    *capacity = n;
    return bigger;
}
