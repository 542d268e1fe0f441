/*
 * analysis/load/table.h — a hash table from a pair of 64-bit keys to a
 * 32-bit value, for the analyzer's per-process and per-message tables: a
 * process by its pid (second key 0), a pair of processes, a message by its
 * receiver and its message id. Open addressing with linear probing; removal
 * shifts the entries after it back, so a table of messages in flight stays
 * as small as the number in flight however long the log is.
 */
#ifndef ANALYSIS_LOAD_TABLE_H
#define ANALYSIS_LOAD_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct table_entry {
    uint64_t a, b;           /* the key */
    uint32_t value;
    uint32_t used;
};

struct table {
    struct table_entry *entries;
    size_t capacity;         /* a power of two, or 0 before the first insertion */
    size_t count;
};

/* The value stored under (a, b), or 0 if there is none. */
uint32_t *table_find(const struct table *t, uint64_t a, uint64_t b);
/* Store `value` under (a, b), which must not be in the table; exits with
 * a message if memory runs out. */
void table_insert(struct table *t, uint64_t a, uint64_t b, uint32_t value);
/* Remove (a, b) if it is there. */
void table_remove(struct table *t, uint64_t a, uint64_t b);
void table_free(struct table *t);

/* A growing array: make room for one more element of `size` bytes at
 * index *count (capacity in *capacity); exits with a message if memory
 * runs out. Returns the (possibly moved) array. */
void *array_grow(void *array, size_t *capacity, size_t count, size_t size);

#endif
