/*
 * analysis/models/tally.h — counts of short strings (the causality strings
 * and their substrings, thesis §5.2.4): an open-addressing hash table over
 * one text arena, so that millions of additions make no allocation each.
 */
#ifndef ANALYSIS_MODELS_TALLY_H
#define ANALYSIS_MODELS_TALLY_H

#include <stddef.h>
#include <stdint.h>

struct tally_entry {
    uint64_t hash;
    uint64_t count;            /* 0: an empty slot */
    size_t offset;             /* the text, in tally.text */
    uint32_t length;
};

struct tally {
    struct tally_entry *slot;
    uint32_t capacity, used;   /* capacity is a power of two, or 0 */
    char *text;                /* every distinct string, each NUL-ended */
    size_t text_used, text_capacity;
};

/* One distinct string and its count. */
struct tally_item {
    const char *text;          /* valid while the tally is */
    uint32_t length;
    uint64_t count;
};

/* Count one more `s` (length bytes, none of them NUL). 0, or -1 (no memory). */
int tally_add(struct tally *t, const char *s, uint32_t length);
/* The distinct strings, unordered, in a new array of t->used items (the
 * caller frees it); NULL if no memory. */
struct tally_item *tally_items(const struct tally *t);
void tally_free(struct tally *t);

#endif
