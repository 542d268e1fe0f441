/*
 * analysis/models/tally.c — counts of short strings (models/tally.h):
 * linear probing in a table kept at most half full, FNV-1a hashes.
 */
#include <stdlib.h>
#include <string.h>

#include "models/tally.h"

static uint64_t hash_of(const char *s, uint32_t length)
{
    uint64_t h = 14695981039346656037ull;
    for (uint32_t i = 0; i < length; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Double the table (or make the first one), placing every entry again. */
static int grow(struct tally *t)
{
    uint32_t capacity = t->capacity ? t->capacity * 2 : 1024;
    struct tally_entry *slot = calloc(capacity, sizeof *slot);
    if (!slot || capacity < t->capacity) {
        free(slot);
        return -1;
    }
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (!t->slot[i].count)
            continue;
        uint32_t at = (uint32_t)t->slot[i].hash & (capacity - 1);
        while (slot[at].count)
            at = (at + 1) & (capacity - 1);
        slot[at] = t->slot[i];
    }
    free(t->slot);
    t->slot = slot;
    t->capacity = capacity;
    return 0;
}

/* Copy a new string into the text arena; its offset, or (size_t)-1. */
static size_t keep_text(struct tally *t, const char *s, uint32_t length)
{
    if (t->text_used + length + 1 > t->text_capacity) {
        size_t capacity = t->text_capacity ? t->text_capacity * 2 : 65536;
        while (capacity < t->text_used + length + 1)
            capacity *= 2;
        char *text = realloc(t->text, capacity);
        if (!text)
            return (size_t)-1;
        t->text = text;
        t->text_capacity = capacity;
    }
    size_t offset = t->text_used;
    memcpy(t->text + offset, s, length);
    t->text[offset + length] = 0;
    t->text_used += length + 1;
    return offset;
}

/* Count one more s (models/tally.h). */
int tally_add(struct tally *t, const char *s, uint32_t length)
{
    if ((t->used + 1) * 2 > t->capacity && grow(t) < 0)
        return -1;
    uint64_t h = hash_of(s, length);
    uint32_t at = (uint32_t)h & (t->capacity - 1);
    for (;; at = (at + 1) & (t->capacity - 1)) {
        struct tally_entry *e = &t->slot[at];
        if (!e->count)
            break;
        if (e->hash == h && e->length == length && memcmp(t->text + e->offset, s, length) == 0) {
            e->count++;
            return 0;
        }
    }
    size_t offset = keep_text(t, s, length);
    if (offset == (size_t)-1)
        return -1;
    t->slot[at] = (struct tally_entry){ h, 1, offset, length };
    t->used++;
    return 0;
}

/* The distinct strings (models/tally.h). */
struct tally_item *tally_items(const struct tally *t)
{
    struct tally_item *items = malloc((size_t)t->used * sizeof *items + 1);
    uint32_t n = 0;
    if (!items)
        return 0;
    for (uint32_t i = 0; i < t->capacity; i++)
        if (t->slot[i].count)
            items[n++] = (struct tally_item){ t->text + t->slot[i].offset, t->slot[i].length, t->slot[i].count };
    return items;
}

void tally_free(struct tally *t)
{
    free(t->slot);
    free(t->text);
    memset(t, 0, sizeof *t);
}
