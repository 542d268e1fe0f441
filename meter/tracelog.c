/*
 * meter/tracelog.c — the field tables made from record.h's lists, the trace
 * description written from them, and the trace-log container (tracelog.h),
 * which reads a log by the description it carries (rules.c parses it).
 */
#include "tracelog.h"

/* No library: small helpers of our own. */
/* A word that may alias anything: so that the compiler, which cannot know
 * that both ends are aligned, still moves it with one load and one store. */
typedef uint64_t __attribute__((may_alias)) word;

/* Word by word when both ends are 8-byte aligned (records are: their
 * sizes are multiples of 8), else byte by byte. */
static void copy_bytes(void *to, const void *from, size_t n)
{
    uint8_t *t = to;
    const uint8_t *f = from;
    if ((((uintptr_t)t | (uintptr_t)f) & 7) == 0)
        for (; n >= 8; n -= 8, t += 8, f += 8)
            *(word *)t = *(const word *)f;
    for (size_t i = 0; i < n; i++)
        t[i] = f[i];
}

/* Every layout is packed: its fields, in order, fill its struct with no
 * padding. So a record with every field kept is, as a log entry, exactly
 * its own bytes (tracelog_append's quick path), and the description's
 * offsets are the struct's. */
#define FIELD_BYTES(type, name, base) + sizeof(type)
_Static_assert((0 METER_HEADER_FIELDS(FIELD_BYTES)) == sizeof(struct meter_header), "header layout has padding");
_Static_assert(sizeof(struct meter_header) % 8 == 0 && sizeof(struct tracelog_entry) == 8,
               "the quick paths copy whole words");
#define PACKED_BODY(name, number) \
    _Static_assert((0 METER_##name##_FIELDS(FIELD_BYTES)) == sizeof(struct meter_##name), #name " layout has padding"); \
    _Static_assert(sizeof(struct meter_##name) % 8 == 0, #name ": the quick paths copy whole words");
METER_TYPES(PACKED_BODY)
#undef PACKED_BODY
#undef FIELD_BYTES

static void zero_bytes(void *to, size_t n)
{
    uint8_t *t = to;
    if (((uintptr_t)t & 7) == 0)
        for (; n >= 8; n -= 8, t += 8)
            *(word *)t = 0;
    for (size_t i = 0; i < n; i++)
        t[i] = 0;
}

static int same_string(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* ---- the tables ---- */

#define FIELD_ENTRY(structure, type, name, base) \
    { #name, (uint16_t)__builtin_offsetof(struct structure, name), (uint16_t)sizeof(type), base, \
      (uint8_t)_Generic((type)0, int8_t: 1, int16_t: 1, int32_t: 1, int64_t: 1, default: 0) },
#define HEADER_FIELD(type, name, base) FIELD_ENTRY(meter_header, type, name, base)

static const struct meter_field header_fields[] = { METER_HEADER_FIELDS(HEADER_FIELD) };
const struct meter_layout meter_header_layout = {
    "header", 0, sizeof(struct meter_header), sizeof header_fields / sizeof header_fields[0], header_fields,
};

#define BODY_FIELDS(name, number) \
    static const struct meter_field name##_fields[] = { METER_##name##_FIELDS(name##_FIELD) };
#define SEND_FIELD(type, name, base) FIELD_ENTRY(meter_SEND, type, name, base)
#define RECEIVECALL_FIELD(type, name, base) FIELD_ENTRY(meter_RECEIVECALL, type, name, base)
#define RECEIVE_FIELD(type, name, base) FIELD_ENTRY(meter_RECEIVE, type, name, base)
#define MESSAGEQUEUED_FIELD(type, name, base) FIELD_ENTRY(meter_MESSAGEQUEUED, type, name, base)
#define CREATELINK_FIELD(type, name, base) FIELD_ENTRY(meter_CREATELINK, type, name, base)
#define DESTROYLINK_FIELD(type, name, base) FIELD_ENTRY(meter_DESTROYLINK, type, name, base)
#define MOVEDATA_FIELD(type, name, base) FIELD_ENTRY(meter_MOVEDATA, type, name, base)
#define CREATEPROCESS_FIELD(type, name, base) FIELD_ENTRY(meter_CREATEPROCESS, type, name, base)
#define STARTPROCESS_FIELD(type, name, base) FIELD_ENTRY(meter_STARTPROCESS, type, name, base)
#define STOPPROCESS_FIELD(type, name, base) FIELD_ENTRY(meter_STOPPROCESS, type, name, base)
#define DESTROYPROCESS_FIELD(type, name, base) FIELD_ENTRY(meter_DESTROYPROCESS, type, name, base)
#define MIGRATE_FIELD(type, name, base) FIELD_ENTRY(meter_MIGRATE, type, name, base)
/* TODO(lab event, part 1): PREEMPT's fields' macro, as the others. */
METER_TYPES(BODY_FIELDS)

static const struct meter_layout body_layouts[METER_NTYPES] = {
#define BODY_LAYOUT(name, number) \
    [number] = { #name, number, sizeof(struct meter_##name), sizeof name##_fields / sizeof name##_fields[0], \
                 name##_fields },
    METER_TYPES(BODY_LAYOUT)
#undef BODY_LAYOUT
};

const struct meter_layout *meter_body_layout(uint32_t type)
{
    return type > 0 && type < METER_NTYPES ? &body_layouts[type] : 0;
}

uint32_t meter_type_number(const char *name)
{
    for (uint32_t t = 1; t < METER_NTYPES; t++)
        if (same_string(body_layouts[t].name, name))
            return t;
    return 0;
}

uint32_t meter_all_fields(uint32_t type)
{
    const struct meter_layout *body = meter_body_layout(type);
    uint32_t n = meter_header_layout.nfields + (body ? body->nfields : 0);
    return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* ---- the description ---- */

struct text {
    char *out;
    size_t cap, len;
    int overflow;
};

static void put_char(struct text *t, char c)
{
    if (t->len + 1 < t->cap)
        t->out[t->len++] = c;
    else
        t->overflow = 1;
}

static void put_string(struct text *t, const char *s)
{
    while (*s)
        put_char(t, *s++);
}

static void put_number(struct text *t, uint32_t n)
{
    char digits[10];
    int k = 0;
    do
        digits[k++] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    while (k > 0)
        put_char(t, digits[--k]);
}

/* One layout: "NAME N." then "field,offset,length,base" per line, then ";". */
static void describe_layout(struct text *t, const struct meter_layout *l)
{
    put_string(t, l->name);
    put_char(t, ' ');
    put_number(t, l->type);
    put_char(t, '.');
    for (uint32_t i = 0; i < l->nfields; i++) {
        const struct meter_field *f = &l->fields[i];
        put_string(t, i == 0 ? "\t" : "\n\t");
        put_string(t, f->name);
        put_char(t, ',');
        put_number(t, f->offset);
        put_char(t, ',');
        put_number(t, f->size);
        put_char(t, ',');
        put_number(t, f->base);
    }
    put_string(t, ";\n");
}

long meter_describe(char *out, size_t cap)
{
    struct text t = { out, cap, 0, 0 };
    describe_layout(&t, &meter_header_layout);
    for (uint32_t type = 1; type < METER_NTYPES; type++)
        describe_layout(&t, &body_layouts[type]);
    if (cap)
        out[t.len] = 0;
    return t.overflow ? -1 : (long)t.len;
}

/* ---- the trace log: writing ---- */

/* The field i of a record of `type` (header fields first): its place in
 * the whole record and its size. */
static const struct meter_field *field_of(uint32_t type, uint32_t i, uint32_t *at)
{
    if (i < meter_header_layout.nfields) {
        *at = meter_header_layout.fields[i].offset;
        return &meter_header_layout.fields[i];
    }
    const struct meter_layout *body = meter_body_layout(type);
    i -= meter_header_layout.nfields;
    if (!body || i >= body->nfields)
        return 0;
    *at = (uint32_t)sizeof(struct meter_header) + body->fields[i].offset;
    return &body->fields[i];
}

/* ---- the checksum (tracelog.h, tracelog_checksum) ---- */

static inline uint32_t checksum_of_sums(uint64_t a, uint64_t b)
{
    return (uint32_t)((a + 2 * b) % TRACELOG_CHECKSUM_PRIME);
}

uint32_t tracelog_checksum(const uint8_t *data, size_t n)
{
    uint64_t a = TRACELOG_CHECKSUM_SEED + n, b = 0;
    for (size_t at = 0; at < n; at += 8) {
        uint8_t last[8] = { 0 };
        const uint8_t *p = data + at;
        if (n - at < 8) {
            copy_bytes(last, p, n - at);
            p = last;
        }
        a += tracelog_little_endian(p, 8);
        b += a;
    }
    return checksum_of_sums(a, b);
}

/* A log block as words: blocks are 8-byte aligned (struct tracelog_block
 * has 8-byte fields), and the project's guest and hosts are little-endian,
 * so a word of the checksum is one load. The checksum field is the upper
 * half of the header's third word. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "log blocks are read as little-endian words");
_Static_assert(sizeof(struct tracelog_block) == 32 && __builtin_offsetof(struct tracelog_block, checksum) == 20,
               "four header words, the checksum field the upper half of word 2");
#define BLOCK_WORDS  (TRACELOG_BLOCK / 8)
#define HEADER_WORDS 4
#define CHECKSUM_WORD 2

/* The running sums from the seed over a block's header words, the
 * checksum field read as 0. */
static void header_sums(const uint8_t *block, uint64_t *a, uint64_t *b)
{
    const word *words = __builtin_assume_aligned(block, 8);
    uint64_t sum_a = TRACELOG_CHECKSUM_SEED + TRACELOG_BLOCK, sum_b = 0;
    sum_a += words[0];
    sum_b += sum_a;
    sum_a += words[1];
    sum_b += sum_a;
    sum_a += words[CHECKSUM_WORD] & 0xffffffffu;
    sum_b += sum_a;
    sum_a += words[3];
    sum_b += sum_a;
    *a = sum_a;
    *b = sum_b;
}

/* Four words a turn: the loop's count and branch once in 32 bytes. */
_Static_assert((BLOCK_WORDS - HEADER_WORDS) % 4 == 0, "the entries' words come in fours");
uint32_t tracelog_block_checksum(const uint8_t *block)
{
    const word *words = __builtin_assume_aligned(block, 8);
    uint64_t a, b;
    header_sums(block, &a, &b);
    for (uint32_t i = HEADER_WORDS; i < BLOCK_WORDS; i += 4) {
        a += words[i];
        b += a;
        a += words[i + 1];
        b += a;
        a += words[i + 2];
        b += a;
        a += words[i + 3];
        b += a;
    }
    return checksum_of_sums(a, b);
}

static struct tracelog_block *block_header(struct tracelog_writer *w)
{
    return (struct tracelog_block *)w->block;
}

/* A new record block: only its header is cleared here; the bytes after
 * its entries are cleared when it is written (tracelog_flush), which for a
 * full block is a few bytes rather than the whole block. */
static void block_start(struct tracelog_writer *w)
{
    zero_bytes(w->block, sizeof(struct tracelog_block));
    struct tracelog_block *b = block_header(w);
    b->magic = TRACELOG_BLOCK_MAGIC;
    b->log_id = w->log_id;
    b->sequence = w->sequence;
    b->lost = w->lost;
    w->sum_a = w->sum_b = 0;
    w->summed = 0;
}

int tracelog_begin(struct tracelog_writer *w, const char *filter, uint32_t machine, uint32_t log_id,
                   tracelog_write_fn write, void *context)
{
    static char description[8 * TRACELOG_BLOCK];
    long length = meter_describe(description, sizeof description);
    if (length < 0)
        return -1;
    w->write = write;
    w->context = context;
    w->log_id = log_id;
    w->capacity = 0;
    w->sequence = 0;
    w->lost = 0;
    w->records = 0;
    uint64_t total = sizeof(struct tracelog_header) + (uint64_t)length;
    uint32_t header_blocks = (uint32_t)((total + TRACELOG_BLOCK - 1) / TRACELOG_BLOCK);
    for (uint32_t b = 0; b < header_blocks; b++) {
        zero_bytes(w->block, TRACELOG_BLOCK);
        for (uint64_t i = 0; i < TRACELOG_BLOCK; i++) {
            uint64_t at = (uint64_t)b * TRACELOG_BLOCK + i;   /* in the header's bytes */
            if (at >= sizeof(struct tracelog_header) && at < total)
                w->block[i] = (uint8_t)description[at - sizeof(struct tracelog_header)];
        }
        if (b == 0) {
            struct tracelog_header *h = (struct tracelog_header *)w->block;
            copy_bytes(h->magic, TRACELOG_MAGIC, 8);
            h->version = TRACELOG_VERSION;
            h->block_size = TRACELOG_BLOCK;
            h->header_blocks = header_blocks;
            h->description_length = (uint32_t)length;
            h->machine = machine;
            h->log_id = log_id;
            for (int i = 0; i < (int)sizeof h->filter - 1 && filter[i]; i++)
                h->filter[i] = filter[i];
        }
        int err = write(context, b, w->block);
        if (err)
            return err;
    }
    w->next_index = header_blocks;
    block_start(w);
    return 0;
}

/* Fold the block's entry words from w->summed up to byte `upto` of its
 * entries (a multiple of 8, at least w->summed) into the writer's running
 * sums. */
static void fold_entries(struct tracelog_writer *w, uint32_t upto)
{
    const word *at = (const word *)(w->block + sizeof(struct tracelog_block) + w->summed);
    const word *end = (const word *)(w->block + sizeof(struct tracelog_block) + upto);
    uint64_t a = w->sum_a, b = w->sum_b;
    while (at < end) {
        a += *at++;
        b += a;
    }
    w->sum_a = a;
    w->sum_b = b;
    w->summed = upto;
}

/* The block's checksum, what tracelog_block_checksum(w->block) computes,
 * from the writer's sums, without reading the entries again; the bytes
 * after them are zero (tracelog_flush). A word only partly filled is
 * folded in for this checksum alone, as it fills further. The sums p, q
 * of the entries' words 4 .. k-1, from 0, continue the header's sums a, b:
 * over the words after them, all zero, a stays and b grows by a each
 * time; so the block's sums are a + p and b + 508 a + q + (512 - k) p. */
static uint32_t writer_checksum(struct tracelog_writer *w)
{
    struct tracelog_block *b = block_header(w);
    fold_entries(w, b->used & ~7u);
    uint64_t p = w->sum_a, q = w->sum_b;
    uint32_t k = (uint32_t)HEADER_WORDS + w->summed / 8;   /* the words folded, from the block's start */
    if (b->used & 7) {
        p += ((const word *)w->block)[k];
        q += p;
        k++;
    }
    uint64_t sum_a, sum_b;
    header_sums(w->block, &sum_a, &sum_b);
    sum_b += (BLOCK_WORDS - HEADER_WORDS) * sum_a + q + (BLOCK_WORDS - k) * p;
    sum_a += p;
    return checksum_of_sums(sum_a, sum_b);
}

int tracelog_flush(struct tracelog_writer *w)
{
    struct tracelog_block *b = block_header(w);
    b->lost = w->lost;
    zero_bytes(w->block + sizeof *b + b->used, TRACELOG_BLOCK - sizeof *b - b->used);   /* no stale bytes on the disk */
    b->checksum = writer_checksum(w);
    return w->write(w->context, w->next_index, w->block);
}

void tracelog_lose(struct tracelog_writer *w, uint64_t n)
{
    w->lost += n;
}

/* One word of a record from `from` to `to`, folded into the checksum's
 * running sums. */
static inline __attribute__((always_inline)) void put_word(word *to, const word *from, uint64_t *a, uint64_t *b)
{
    word v = *from;
    *to = v;
    *a += v;
    *b += *a;
}

/* A whole record's entry at `out`, the block's next free word: the entry
 * word, then the record's `length` bytes (whole words) from `from`, each
 * word folded into the running sums a and b in turn. As a filter puts
 * every record it keeps (tracelog_append_whole), the words go straight
 * through, entering at the record's length, with no loop to count. */
#define RECORD_WORDS 14
_Static_assert(METER_RECORD_MAX / 8 <= RECORD_WORDS, "put_entry takes the longest record");
static inline __attribute__((always_inline)) void put_entry(uint8_t *out, word entry, const uint8_t *from,
                                                            size_t length, uint64_t *a, uint64_t *b)
{
    put_word((word *)out, &entry, a, b);
    word *to_end = (word *)(out + sizeof entry + length);
    const word *from_end = (const word *)(from + length);
    switch (length / 8) {
    case 14: put_word(to_end - 14, from_end - 14, a, b); /* fall through */
    case 13: put_word(to_end - 13, from_end - 13, a, b); /* fall through */
    case 12: put_word(to_end - 12, from_end - 12, a, b); /* fall through */
    case 11: put_word(to_end - 11, from_end - 11, a, b); /* fall through */
    case 10: put_word(to_end - 10, from_end - 10, a, b); /* fall through */
    case 9:  put_word(to_end - 9, from_end - 9, a, b);   /* fall through */
    case 8:  put_word(to_end - 8, from_end - 8, a, b);   /* fall through */
    case 7:  put_word(to_end - 7, from_end - 7, a, b);   /* fall through */
    case 6:  put_word(to_end - 6, from_end - 6, a, b);   /* fall through */
    case 5:  put_word(to_end - 5, from_end - 5, a, b);   /* fall through */
    case 4:  put_word(to_end - 4, from_end - 4, a, b);   /* fall through */
    case 3:  put_word(to_end - 3, from_end - 3, a, b);   /* fall through */
    case 2:  put_word(to_end - 2, from_end - 2, a, b);   /* fall through */
    case 1:  put_word(to_end - 1, from_end - 1, a, b);   /* fall through */
    default: break;
    }
}

/* The block is full: it is written, and the next one started; or
 * TRACELOG_FULL when there is no room for another block. */
static int next_block(struct tracelog_writer *w)
{
    if (w->capacity && w->next_index + 1 >= w->capacity)
        return TRACELOG_FULL;
    int err = tracelog_flush(w);
    if (err)
        return err;
    w->next_index++;
    w->sequence++;
    block_start(w);
    return 0;
}

/* tracelog_append for any record: some fields dropped, or not aligned.
 * Its bytes are folded into the checksum later (fold_entries). */
static int __attribute__((noinline)) append_fields(struct tracelog_writer *w, const void *record, uint32_t fields)
{
    const struct meter_header *h = record;
    const struct meter_layout *body = meter_body_layout(h->traceType);
    if (!body || h->length != sizeof *h + body->size)
        return -1;
    uint32_t all = meter_all_fields(h->traceType);
    fields &= all;
    uint32_t len = sizeof(struct tracelog_entry), at;
    const struct meter_field *f;
    if (fields == all) {
        len += h->length;               /* the record itself: the layouts are packed */
    } else {
        for (uint32_t i = 0; (f = field_of(h->traceType, i, &at)) != 0; i++)
            len += fields & (1u << i) ? f->size : 0;
    }
    struct tracelog_block *b = block_header(w);
    if (sizeof *b + b->used + len > TRACELOG_BLOCK) {
        int err = next_block(w);
        if (err)
            return err;
    }
    uint8_t *out = w->block + sizeof *b + b->used;
    struct tracelog_entry e = { (uint16_t)len, (uint16_t)h->traceType, fields };
    copy_bytes(out, &e, sizeof e);
    if (fields == all) {
        copy_bytes(out + sizeof e, record, h->length);
    } else {
        uint32_t to = sizeof e;
        for (uint32_t i = 0; (f = field_of(h->traceType, i, &at)) != 0; i++) {
            if (fields & (1u << i)) {
                copy_bytes(out + to, (const uint8_t *)record + at, f->size);
                to += f->size;
            }
        }
    }
    b->used += len;
    b->records++;
    w->records++;
    return 0;
}

/* The quick path is the common case: a record kept whole (the layouts are
 * packed, so the entry is its own bytes), word-aligned as batches are;
 * when the block has no room for it, the next block is begun, whose start
 * is aligned. The words are folded into the checksum as they are copied.
 * Anything else takes append_fields. */
int tracelog_append(struct tracelog_writer *w, const void *record, uint32_t fields)
{
    const struct meter_header *h = record;
    uint32_t type = h->traceType;
    struct tracelog_block *b = block_header(w);
    if (type - 1u < METER_NTYPES - 1u && ((uintptr_t)record & 7) == 0) {
        const struct meter_layout *body = &body_layouts[type];
        uint32_t n = (uint32_t)(sizeof header_fields / sizeof header_fields[0]) + body->nfields;
        uint32_t all = n >= 32 ? 0xffffffffu : (1u << n) - 1;
        uint32_t len = (uint32_t)sizeof(struct tracelog_entry) + h->length;
        if ((fields & all) == all && h->length == sizeof *h + body->size) {
            if (sizeof *b + b->used + len > TRACELOG_BLOCK) {
                int err = next_block(w);
                if (err)
                    return err;
            }
            if ((b->used & 7) == 0) {
                fold_entries(w, b->used);
                uint8_t *out = w->block + sizeof *b + b->used;
                union { struct tracelog_entry e; word bits; } entry = { { (uint16_t)len, (uint16_t)type, all } };
                put_entry(out, entry.bits, record, h->length, &w->sum_a, &w->sum_b);
                b->used += len;
                w->summed = b->used;
                b->records++;
                w->records++;
                return 0;
            }
        }
    }
    return append_fields(w, record, fields);
}

/* tracelog_append for records one after another (a meter batch's), every
 * field of each kept: the quick path's copy, without a call and the
 * checks of the fields per record. Stops at the first record the quick
 * path would not take (the block full, say), which the caller then
 * appends alone. Returns how many were added; *bytes, how many bytes of
 * `records` they took. */
uint32_t tracelog_append_whole(struct tracelog_writer *w, const uint8_t *records, uint32_t n, uint32_t *bytes)
{
    /* The entry of a whole record of each type is the same word every time:
     * its length, its type and every field. 0 for a type that is none,
     * whose length no record has. */
    static word whole_entry[METER_NTYPES];
    if (!whole_entry[MT_SEND])
        for (uint32_t t = 1; t < METER_NTYPES; t++) {
            union { struct tracelog_entry e; word bits; } entry = { {
                (uint16_t)(sizeof(struct tracelog_entry) + sizeof(struct meter_header) + body_layouts[t].size),
                (uint16_t)t, meter_all_fields(t) } };
            whole_entry[t] = entry.bits;
        }
    struct tracelog_block *b = block_header(w);
    if (((uintptr_t)records & 7) != 0 || (b->used & 7) != 0) {
        *bytes = 0;
        return 0;
    }
    fold_entries(w, b->used);
    uint8_t *out = w->block + sizeof *b + b->used, *end = w->block + TRACELOG_BLOCK;
    const uint8_t *at = records;
    uint64_t sum_a = w->sum_a, sum_b = w->sum_b;
    size_t done = 0;
    for (; done < n; done++) {
        const struct meter_header *h = (const struct meter_header *)at;
        size_t type = h->traceType, length = h->length, entry_length = length + sizeof(struct tracelog_entry);
        word entry = type < METER_NTYPES ? whole_entry[type] : 0;
        if ((entry & 0xffff) != entry_length || entry_length > (size_t)(end - out))
            break;
        put_entry(out, entry, at, length, &sum_a, &sum_b);
        out += entry_length;
        at += length;
    }
    b->used = (uint32_t)(out - w->block - sizeof *b);
    b->records += (uint32_t)done;
    w->records += done;
    w->sum_a = sum_a;
    w->sum_b = sum_b;
    w->summed = b->used;
    *bytes = (uint32_t)(at - records);
    return (uint32_t)done;
}

/* A blank trace disk's block 0: the log header's magic and version, and
 * no description (every log has one). */
void tracelog_blank(uint8_t block[TRACELOG_BLOCK])
{
    zero_bytes(block, TRACELOG_BLOCK);
    struct tracelog_header *h = (struct tracelog_header *)block;
    copy_bytes(h->magic, TRACELOG_MAGIC, 8);
    h->version = TRACELOG_VERSION;
    h->block_size = TRACELOG_BLOCK;
}

/* ---- the trace log: reading ---- */

static int has_magic(const struct tracelog_header *h)
{
    for (int i = 0; i < 8; i++)
        if (h->magic[i] != TRACELOG_MAGIC[i])
            return 0;
    return 1;
}

int tracelog_is_blank(const uint8_t *block0, uint64_t size)
{
    const struct tracelog_header *h = (const struct tracelog_header *)block0;
    return size >= sizeof *h && has_magic(h) && h->description_length == 0;
}

int tracelog_open(struct tracelog_reader *r, const uint8_t *log, uint64_t size)
{
    zero_bytes(r, sizeof *r);
    if (size < TRACELOG_BLOCK)
        return TRACELOG_E_SHORT;
    const struct tracelog_header *h = (const struct tracelog_header *)log;
    if (!has_magic(h))
        return TRACELOG_E_MAGIC;
    if (h->version != TRACELOG_VERSION)
        return TRACELOG_E_VERSION;
    if (tracelog_is_blank(log, size))
        return TRACELOG_E_EMPTY;
    uint64_t total = sizeof *h + (uint64_t)h->description_length;
    if (h->block_size != TRACELOG_BLOCK || h->header_blocks == 0 ||
        h->header_blocks != (total + TRACELOG_BLOCK - 1) / TRACELOG_BLOCK ||
        (uint64_t)h->header_blocks * TRACELOG_BLOCK > size)
        return TRACELOG_E_HEADER;
    r->log = log;
    r->size = size;
    r->header = h;
    r->description = (const char *)log + sizeof *h;
    r->index = h->header_blocks;
    if (description_parse(&r->layouts, r->description, h->description_length, &r->description_error))
        return TRACELOG_E_DESCRIPTION;
    const struct desc_layout *hl = description_layout(&r->layouts, 0);
    for (uint32_t j = 0; j < r->layouts.nlayouts; j++) {
        const struct desc_layout *l = &r->layouts.layouts[j];
        uint32_t length = sizeof(struct tracelog_entry);
        for (uint32_t i = 0; i < hl->nfields + l->nfields; i++)
            length += i < hl->nfields ? hl->fields[i].length : l->fields[i - hl->nfields].length;
        r->whole_length[j] = length;
    }
    static char own[8 * TRACELOG_BLOCK];
    long n = meter_describe(own, sizeof own);
    r->compiled = n == (long)h->description_length;
    for (long i = 0; r->compiled && i < n; i++)
        r->compiled = own[i] == r->description[i];
    return 0;
}

/* Whether block `b` begins a log: its magic, version and a header-block
 * count that fits the description length it gives. */
static int is_log_header(const uint8_t *b)
{
    const struct tracelog_header *h = (const struct tracelog_header *)b;
    uint64_t total = sizeof *h + (uint64_t)h->description_length;
    return has_magic(h) && h->version == TRACELOG_VERSION && h->block_size == TRACELOG_BLOCK &&
           h->description_length > 0 && h->header_blocks == (total + TRACELOG_BLOCK - 1) / TRACELOG_BLOCK;
}

uint64_t tracelog_unstream(const uint8_t *stream, uint64_t size, uint8_t *out, uint64_t cap, uint32_t *logs)
{
    uint64_t blocks = size / TRACELOG_BLOCK, length = 0;   /* of the log being rebuilt, in blocks */
    uint32_t log_id = 0, header_blocks = 0;
    int ended = 0;   /* the log being rebuilt had a gap: the rest of its blocks are not taken */
    *logs = 0;
    for (uint64_t i = 0; i < blocks; i++) {
        const uint8_t *b = stream + i * TRACELOG_BLOCK;
        if (is_log_header(b)) {
            const struct tracelog_header *h = (const struct tracelog_header *)b;
            if (i + h->header_blocks > blocks || (uint64_t)h->header_blocks * TRACELOG_BLOCK > cap)
                break;   /* a header cut short: the stream ends with it */
            (*logs)++;
            copy_bytes(out, b, (size_t)h->header_blocks * TRACELOG_BLOCK);
            log_id = h->log_id;
            header_blocks = h->header_blocks;
            length = header_blocks;
            ended = 0;
            i += header_blocks - 1;
            continue;
        }
        const struct tracelog_block *rb = (const struct tracelog_block *)b;
        if (*logs == 0 || ended || rb->magic != TRACELOG_BLOCK_MAGIC || rb->log_id != log_id)
            continue;
        uint64_t index = header_blocks + (uint64_t)rb->sequence;
        if (index > length || (index + 1) * TRACELOG_BLOCK > cap) {
            ended = 1;   /* a gap in the numbering */
            continue;
        }
        copy_bytes(out + index * TRACELOG_BLOCK, b, TRACELOG_BLOCK);
        if (index == length)
            length++;
    }
    return *logs ? length * TRACELOG_BLOCK : 0;
}

int tracelog_open_fetch(struct tracelog_reader *r, const uint8_t *header, uint64_t size, tracelog_fetch_fn fetch,
                        void *context)
{
    int err = tracelog_open(r, header, size);
    r->fetch = fetch;
    r->fetch_context = context;
    return err;
}

/* Record block `index` of the log, its bytes, or 0 past the end of the
 * bytes (or of what `fetch` can read). */
static const struct tracelog_block *fetch_record_block(const struct tracelog_reader *r, uint64_t index)
{
    if (r->fetch)
        return (const struct tracelog_block *)r->fetch(r->fetch_context, index);
    if ((index + 1) * TRACELOG_BLOCK <= r->size)
        return (const struct tracelog_block *)(r->log + index * TRACELOG_BLOCK);
    return 0;
}

/* What block b, at record block `index`, is to the log (tracelog.h, "the
 * trace log"): 1 the log's next block, sound; 0 not the log's (the log
 * ended before it); -1 damaged. */
static int block_state(const struct tracelog_reader *r, uint64_t index, const struct tracelog_block *b)
{
    int identity = (b->magic == TRACELOG_BLOCK_MAGIC) + (b->log_id == r->header->log_id) +
                   (b->sequence == index - r->header->header_blocks);
    if (identity < 2)
        return 0;
    int sound = b->checksum == tracelog_block_checksum((const uint8_t *)b);
    if (identity == 3)
        return sound && b->used <= TRACELOG_BLOCK - sizeof *b ? 1 : -1;
    return sound ? 0 : -1;   /* a sound block of another log that happens to share two fields */
}

/* The record block being read, or 0 at the end of the log or at a damaged
 * block (then r->damaged says which). A block's checksum is computed once:
 * the block last found sound is remembered. */
static const struct tracelog_block *current_block(struct tracelog_reader *r)
{
    const struct tracelog_block *b = fetch_record_block(r, r->index);
    if (!b)
        return 0;
    if ((const uint8_t *)b == r->verified && r->index == r->verified_index)
        return b;
    int state = block_state(r, r->index, b);
    if (state < 0)
        r->damaged = r->index + 1;
    if (state <= 0)
        return 0;
    r->verified = (const uint8_t *)b;
    r->verified_index = r->index;
    return b;
}

uint64_t tracelog_blocks(const struct tracelog_reader *r)
{
    uint64_t index = r->header->header_blocks;
    const struct tracelog_block *b;
    while ((b = fetch_record_block(r, index)) != 0 && block_state(r, index, b) == 1)
        index++;
    return index;
}

/* The next entry of the log, checked: its header and bytes, or 0 at the
 * end, or an error in *status. */
static const uint8_t *next_entry(struct tracelog_reader *r, struct tracelog_entry *e, int *status)
{
    const struct tracelog_block *b;
    while ((b = current_block(r)) != 0 && r->offset >= b->used) {
        r->lost = b->lost;
        r->index++;
        r->offset = 0;
    }
    *status = 0;
    if (!b) {
        if (r->damaged)
            *status = TRACELOG_E_CHECKSUM;
        return 0;
    }
    r->lost = b->lost;
    const uint8_t *p = (const uint8_t *)(b + 1) + r->offset;
    *status = TRACELOG_E_ENTRY;
    if (b->used - r->offset < sizeof *e)
        return 0;
    copy_bytes(e, p, sizeof *e);
    if (e->length < sizeof *e || e->length > b->used - r->offset)
        return 0;
    *status = 1;
    return p;
}

/* The next entry (next_entry) with its layout in the log's description
 * (*body, 0 for an unknown type) and how many fields a record of it has,
 * the header's included. */
static const uint8_t *next_entry_of(struct tracelog_reader *r, struct tracelog_entry *e, const struct desc_layout **body,
                                    uint32_t *nfields, int *status)
{
    const uint8_t *p = next_entry(r, e, status);
    if (*status != 1)
        return 0;
    const struct desc_layout *h = description_layout(&r->layouts, 0);
    *body = e->type ? description_layout(&r->layouts, e->type) : 0;
    *nfields = h->nfields + (*body ? (*body)->nfields : 0);
    return p;
}

int tracelog_next_values(struct tracelog_reader *r, struct trace_values *out)
{
    struct tracelog_entry e;
    const struct desc_layout *body;
    uint32_t nfields;
    int status;
    const uint8_t *p = next_entry_of(r, &e, &body, &nfields, &status);
    if (!p)
        return status;
    const struct desc_layout *h = description_layout(&r->layouts, 0);
    if (!body || nfields > METER_MAX_FIELDS || (nfields < 32 && (e.fields >> nfields)))
        return TRACELOG_E_ENTRY;
    uint32_t len = sizeof e;
    for (uint32_t i = 0; i < nfields; i++) {
        out->values[i] = 0;
        if (!(e.fields & (1u << i)))
            continue;
        const struct desc_field *f = i < h->nfields ? &h->fields[i] : &body->fields[i - h->nfields];
        if (len + f->length > e.length)
            return TRACELOG_E_ENTRY;
        out->values[i] = tracelog_little_endian(p + len, f->length);
        len += f->length;
    }
    if (len != e.length)
        return TRACELOG_E_ENTRY;
    out->type = e.type;
    out->fields = e.fields;
    out->nfields = nfields;
    out->body = body;
    r->offset += e.length;
    r->records++;
    return 1;
}

int tracelog_next_whole(struct tracelog_reader *r, const struct desc_layout **body, const uint8_t **fields_at)
{
    struct tracelog_entry e;
    const struct desc_layout *b;
    uint32_t nfields;
    int status;
    const uint8_t *p = next_entry_of(r, &e, &b, &nfields, &status);
    if (!p)
        return status;
    uint32_t all = nfields >= 32 ? 0xffffffffu : (1u << nfields) - 1;
    if (!b || nfields > METER_MAX_FIELDS || e.fields != all || e.length != r->whole_length[b - r->layouts.layouts])
        return 2;
    *body = b;
    *fields_at = p + sizeof e;
    r->offset += e.length;
    r->records++;
    return 1;
}

int tracelog_next(struct tracelog_reader *r, struct meter_record *out)
{
    if (!r->compiled)
        return TRACELOG_E_LAYOUT;
    struct tracelog_entry e;
    int status;
    const uint8_t *p = next_entry(r, &e, &status);
    if (status != 1)
        return status;
    if (!meter_body_layout(e.type) || (e.fields & ~meter_all_fields(e.type)))
        return TRACELOG_E_ENTRY;
    zero_bytes(out, sizeof *out);
    uint32_t len = sizeof e, at;
    const struct meter_field *f;
    for (uint32_t i = 0; (f = field_of(e.type, i, &at)) != 0; i++) {
        if (!(e.fields & (1u << i)))
            continue;
        if (len + f->size > e.length)
            return TRACELOG_E_ENTRY;
        copy_bytes((uint8_t *)out + at, p + len, f->size);
        len += f->size;
    }
    if (len != e.length)
        return TRACELOG_E_ENTRY;
    out->fields = e.fields;
    out->header.traceType = e.type;   /* known from the entry even when the field was dropped */
    r->offset += e.length;
    r->records++;
    return 1;
}

const struct desc_field *tracelog_field(const struct tracelog_reader *r, const struct trace_values *v, uint32_t i)
{
    const struct desc_layout *h = description_layout(&r->layouts, 0);
    return i < h->nfields ? &h->fields[i] : &v->body->fields[i - h->nfields];
}

int tracelog_field_signed(const struct tracelog_reader *r, uint32_t type, uint32_t i)
{
    if (!r->compiled)
        return 0;
    if (i < meter_header_layout.nfields)
        return meter_header_layout.fields[i].is_signed;
    const struct meter_layout *body = meter_body_layout(type);
    i -= meter_header_layout.nfields;
    return body && i < body->nfields && body->fields[i].is_signed;
}

uint32_t tracelog_record_bytes(const struct tracelog_reader *r, const struct trace_values *v, uint8_t *out,
                               uint32_t cap)
{
    const struct desc_layout *h = description_layout(&r->layouts, 0);
    uint32_t body_at = description_header_size(h), len = 0;
    zero_bytes(out, cap);
    for (uint32_t i = 0; i < v->nfields; i++) {
        const struct desc_field *f = tracelog_field(r, v, i);
        uint32_t at = f->offset + (i < h->nfields ? 0 : body_at);
        if (at + f->length > cap)
            continue;   /* cannot be with cap > 2 * 65536: offsets are below 65536 */
        for (uint32_t k = 0; k < f->length; k++)
            out[at + k] = (uint8_t)(v->values[i] >> (8 * k));   /* little-endian */
        if (at + f->length > len)
            len = at + f->length;
    }
    return len;
}
