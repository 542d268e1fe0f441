/*
 * meter/tracelog.h — the trace-log container, and what it carries: what
 * the filter, the host tools and the analyzer share about trace records
 * beyond their C layouts (record.h): each type's fields as a table (name,
 * offset, size, display base), the trace description in DPM's format made
 * from those tables, and the trace log that holds it and the records.
 *
 * Plain C with fixed-width types and no library calls, so that it builds
 * for the guest (the filter) and the host alike.
 */
#ifndef METER_TRACELOG_H
#define METER_TRACELOG_H

#include <stddef.h>
#include <stdint.h>
#include "record.h"
#include "rules.h"

/* ---- layouts ---- */

struct meter_field {
    const char *name;
    uint16_t offset, size;      /* in the header, or from the end of the header for a body */
    uint8_t  base;              /* the default display base: 10 or 16 */
    uint8_t  is_signed;
};

struct meter_layout {
    const char *name;           /* "header", "SEND", ... */
    uint32_t type;              /* 0 for the header */
    uint32_t size;              /* bytes */
    uint32_t nfields;
    const struct meter_field *fields;
};

#define METER_MAX_FIELDS 32     /* header and body fields of one record together */

/* The header's layout, and the body layout of a trace type (0 if there is none). */
extern const struct meter_layout meter_header_layout;
const struct meter_layout *meter_body_layout(uint32_t type);
/* The trace type called `name` ("SEND"), or 0. */
uint32_t meter_type_number(const char *name);

/* Write the trace description (DPM's Fig. 3.3 format, every layout) into
 * out[0..cap) with a NUL; returns its length without the NUL, or -1 if it
 * does not fit. */
long meter_describe(char *out, size_t cap);

/* ---- one record, whole or in part ---- */

/* A record as read back: fields absent from the log (dropped by a rule's
 * `#`) are zero, and bit i of `fields` is clear for them (i counts the
 * header's fields first, then the body's). header.traceType is always
 * set: the entry says it. */
struct meter_record {
    struct meter_header header;
    union meter_any_body body;
    uint32_t fields;
};

/* Every field of a record of `type`: the header's and its body's. */
uint32_t meter_all_fields(uint32_t type);

/* ---- the trace log ----
 *
 * A log is a sequence of TRACELOG_BLOCK-byte blocks, so that it can live on
 * a block device (a filter's trace disk) as well as in a file:
 *
 *   blocks 0 .. H-1   the log header: struct tracelog_header, then the
 *                     trace description text (description_length bytes)
 *   blocks H ...      record blocks: struct tracelog_block, then `used`
 *                     bytes of entries. Blocks are numbered 0, 1, 2, ... in
 *                     `sequence` and carry the header's `log_id`; the log
 *                     ends at the first block that is not the next record
 *                     block of this log (a log is written in order, and a
 *                     block still being filled is rewritten in place).
 *
 * Each record block carries a checksum of its contents: tracelog_checksum
 * of the block's TRACELOG_BLOCK bytes with the checksum field read as 0,
 * written each time the block is written (tracelog_flush). A reader takes a block as
 * the log's next only when its magic, log_id and sequence say so and its
 * checksum matches; a block whose checksum does not match is DAMAGED
 * (TRACELOG_E_CHECKSUM, never read as records) when it has at least two
 * of those three (so a byte flipped in one of them is damage, not the
 * log's end), else it is not the log's and the log ends before it. The
 * header blocks carry no checksum: the header's fields are checked
 * against each other and the description must parse.
 *
 * The log identity matters on a trace disk, which is written again from
 * block 0 by each new filter: when the new log is shorter than an older
 * one, the older log's blocks still follow it, numbered just as the new
 * log's next blocks would be. Only their log_id tells them apart.
 *
 * A BLANK trace disk (what `dmtrace blank` makes) holds in block 0 a
 * struct tracelog_header with TRACELOG_MAGIC and description_length 0:
 * a trace disk with no log yet (tracelog_blank, tracelog_is_blank;
 * tracelog_open says TRACELOG_E_EMPTY). Every log has a description, so
 * no log looks blank.
 *
 * An entry is struct tracelog_entry, then the fields of `fields` (in layout
 * order, header first), each with its own size, packed. `lost` in a block
 * header counts the records known lost up to the end of that block (sent
 * while the filter could not take them, in lossy mode). All numbers are
 * little-endian.
 */
#define TRACELOG_BLOCK   4096
#define TRACELOG_VERSION 3              /* 2: the log identity (log_id); 3: a checksum per record block */
#define TRACELOG_MAGIC   "DPMTRACE"
#define TRACELOG_BLOCK_MAGIC 0x334b4244u   /* "DBK3": version 2's blocks said "DBLK" */

struct tracelog_header {
    char     magic[8];               /* TRACELOG_MAGIC, not NUL-ended */
    uint32_t version;                /* TRACELOG_VERSION */
    uint32_t block_size;             /* TRACELOG_BLOCK */
    uint32_t header_blocks;          /* H */
    uint32_t description_length;
    uint32_t machine;                /* where the filter ran */
    uint32_t log_id;                 /* this log's identity, in each of its record blocks */
    char     filter[32];             /* its name, NUL-padded */
};

struct tracelog_block {
    uint32_t magic;                  /* TRACELOG_BLOCK_MAGIC */
    uint32_t log_id;                 /* the header's */
    uint32_t sequence;
    uint32_t used;                   /* bytes of entries after this header */
    uint32_t records;
    uint32_t checksum;               /* tracelog_block_checksum; also keeps `lost` 8-byte aligned */
    uint64_t lost;
};

/* The checksum of the n bytes at data. The bytes are read as little-endian
 * 64-bit words w (the last one padded with zero bytes), and Fletcher's two
 * running sums taken over them, modulo 2^64:
 *
 *     a = TRACELOG_CHECKSUM_SEED + n;  b = 0;
 *     for each word w, in order:  a += w;  b += a;
 *     checksum = (a + 2 * b) % TRACELOG_CHECKSUM_PRIME
 *
 * A word changed by d changes a by d and b by d times the number of words
 * from it to the end, so a + 2b by an odd multiple of d: never by 0. Two
 * words swapped change b alone, by their difference times their distance.
 * Zeros count too: a block of zeros has the checksum of the seed and its
 * length, not 0. The prime takes the result to 32 bits such that a change
 * of any one byte, or of any one aligned 16-bit piece, of a log block
 * always changes it (tests/meter_test.c tries every such change); other
 * damage (a word changed, words swapped, data zeroed, entries cut short or
 * added) goes unseen once in about 2^32. It costs a load and two additions
 * a word, and a writer folds each word of a whole record in as it copies
 * it there (tracelog_append, tracelog_append_whole), so that writing a
 * block of whole records reads none of it again. */
#define TRACELOG_CHECKSUM_SEED  0x9e3779b97f4a7c15ull
#define TRACELOG_CHECKSUM_PRIME 4294966187u
uint32_t tracelog_checksum(const uint8_t *data, size_t n);
/* A record block's checksum: tracelog_checksum of its TRACELOG_BLOCK bytes
 * (8-byte aligned) with the checksum field read as 0. */
uint32_t tracelog_block_checksum(const uint8_t *block);

struct tracelog_entry {
    uint16_t length;                 /* the entry's bytes, this header included */
    uint16_t type;
    uint32_t fields;
};

/* Where a writer puts blocks: write block `index` (0-based in the log);
 * 0, or a negative error of the caller's own. */
typedef int (*tracelog_write_fn)(void *context, uint64_t index, const uint8_t *block);

struct tracelog_writer {
    uint8_t  block[TRACELOG_BLOCK];  /* the block being filled; first, so that a writer aligned
                                        to a page has it in one page (the filter's disk area) */
    tracelog_write_fn write;
    void *context;
    uint32_t log_id;
    uint64_t capacity;               /* blocks the log may take, header included; 0: no limit */
    uint64_t next_index;             /* the block being filled */
    uint32_t sequence;
    uint64_t lost;
    uint64_t records;                /* in the whole log */
    uint64_t sum_a, sum_b;           /* the checksum's running sums over the block's entries, from 0: */
    uint32_t summed;                 /* over this many bytes of them (a multiple of 8, at most `used`) */
};

/* tracelog_append's answer when the log has reached its capacity. */
#define TRACELOG_FULL 1

/* Start a log called `log_id` (a value that an older log on the same disk
 * is unlikely to have: the filter makes it from its clock and its pid):
 * write its header blocks (with the description). capacity is 0 (no
 * limit); set w->capacity afterwards to bound the log. Returns 0, or what
 * `write` returned if it failed, or -1 if the description does not fit. */
int tracelog_begin(struct tracelog_writer *w, const char *filter, uint32_t machine, uint32_t log_id,
                   tracelog_write_fn write, void *context);
/* Add a record of which only `fields` are kept (meter_all_fields for all).
 * The block is written when full (and the next started). Returns 0, a
 * write error, TRACELOG_FULL if the record would need a block beyond
 * w->capacity (it is not added; the last block stays, and a flush still
 * rewrites it with the loss count), or -1 for a record that makes no sense
 * (unknown type, a length that is not its type's). */
int tracelog_append(struct tracelog_writer *w, const void *record, uint32_t fields);
/* tracelog_append, every field kept, for `n` records one after another at
 * `records` (8-byte aligned), until one does not fit the block being
 * filled (or makes no sense). Returns how many were added, and in *bytes
 * the bytes of `records` they took; the caller appends the next alone. */
uint32_t tracelog_append_whole(struct tracelog_writer *w, const uint8_t *records, uint32_t n, uint32_t *bytes);
/* Count `n` more records lost. */
void tracelog_lose(struct tracelog_writer *w, uint64_t n);
/* Write the block being filled as it is now (it is written again as it fills). */
int tracelog_flush(struct tracelog_writer *w);

/* ---- the live stream ----
 *
 * A filter started with -l streams its log to the host as it writes it
 * (docs/architecture.md, "Where the log goes"): the stream is the log's blocks, each
 * TRACELOG_BLOCK bytes, in the order the filter writes them: its header
 * blocks, then record blocks. The record block being filled is written
 * again each time it is rewritten (within a second of a new record, and at
 * a flush), so a record block may come several times, each time with more
 * entries; the last one counts. A stream holds one log after another when
 * several filters used the channel in turn: each begins with its header.
 * Nothing else is in it: a reader needs no framing beyond the blocks'.
 *
 * tracelog_unstream rebuilds the last log of a stream as a trace disk
 * would hold it (record block i at index header_blocks + i): into
 * out[0..cap), cap >= size being always enough. Returns the log's length
 * in bytes (0 if the stream holds no log), *logs the number of logs the
 * stream began. A record block of another log, or a record block whose
 * number leaves a gap, ends the log there (nothing after it is taken). */
uint64_t tracelog_unstream(const uint8_t *stream, uint64_t size, uint8_t *out, uint64_t cap, uint32_t *logs);

/* A blank trace disk's block 0 (a trace disk with no log yet), into block. */
void tracelog_blank(uint8_t block[TRACELOG_BLOCK]);
/* Whether the `size` bytes at block0 are a blank trace disk's block 0. */
int tracelog_is_blank(const uint8_t *block0, uint64_t size);

/* Where a streaming reader gets record block `index` (0-based in the
 * log): its TRACELOG_BLOCK bytes, valid until the next call, or 0 if the
 * log has no such block (past the end of what can be read). */
typedef const uint8_t *(*tracelog_fetch_fn)(void *context, uint64_t index);

/* Reading a log. A log describes itself: the reader parses the
 * description it carries, and reads entries by it (tracelog_next_values),
 * whatever layouts the writer had; when that description is this build's
 * own (`compiled`), entries can also be read into struct meter_record
 * (tracelog_next). The log is either all in memory (tracelog_open) or
 * fetched block by block (tracelog_open_fetch), so that a host tool can
 * read a log far larger than its memory. */
struct tracelog_reader {
    const uint8_t *log;
    uint64_t size;
    const struct tracelog_header *header;
    const char *description;         /* description_length bytes, not NUL-ended */
    struct description layouts;      /* parsed from it */
    struct parse_error description_error;   /* why it did not parse (TRACELOG_E_DESCRIPTION) */
    int compiled;                    /* it is meter_describe()'s */
    uint32_t whole_length[DESC_MAX_LAYOUTS];   /* an entry of layout j (its index in `layouts`)
                                                  keeping every field: its length */
    uint64_t index;                  /* the block being read */
    const uint8_t *verified;         /* the record block at `verified_index` whose checksum matched, or 0;
                                        a fetch function that gives new contents at the same address for
                                        the same index sets it to 0 */
    uint64_t verified_index;
    uint64_t damaged;                /* 1 + the index of the record block found damaged, or 0 */
    uint32_t offset;                 /* in it, after its header */
    uint64_t lost;                   /* as the last block read says */
    uint64_t records;
    tracelog_fetch_fn fetch;         /* 0: the whole log is at `log` */
    void *fetch_context;
};

/* A record read by the log's own description: the value of each field of
 * the header's layout and then of the body's (in description order),
 * zero-extended; bit i of `fields` says whether field i was kept. */
struct trace_values {
    uint32_t type;
    uint32_t fields;
    uint32_t nfields;
    const struct desc_layout *body;  /* the body's layout in the reader's description */
    uint64_t values[METER_MAX_FIELDS];
};

enum tracelog_error {
    TRACELOG_E_SHORT = -1,           /* shorter than its header */
    TRACELOG_E_MAGIC = -2,           /* not a trace log */
    TRACELOG_E_VERSION = -3,
    TRACELOG_E_HEADER = -4,          /* a header field out of range */
    TRACELOG_E_ENTRY = -5,           /* a damaged entry */
    TRACELOG_E_DESCRIPTION = -6,     /* its description does not parse (see description_error) */
    TRACELOG_E_LAYOUT = -7,          /* tracelog_next on a log of other layouts than this build's */
    TRACELOG_E_EMPTY = -8,           /* a blank trace disk: no log yet */
    TRACELOG_E_CHECKSUM = -9,        /* record block `index` is damaged: its checksum does not match */
};

/* Check the header; 0 or an enum tracelog_error. */
int tracelog_open(struct tracelog_reader *r, const uint8_t *log, uint64_t size);
/* The same for a log read block by block: `header` holds its first
 * `size` bytes, at least its header blocks (the first block's
 * header_blocks says how many), and stays valid while the log is read;
 * record blocks come from `fetch`. */
int tracelog_open_fetch(struct tracelog_reader *r, const uint8_t *header, uint64_t size, tracelog_fetch_fn fetch,
                        void *context);
/* The log's length in blocks: its header blocks and its record blocks up
 * to its end (what is left of older logs after it is not counted). */
uint64_t tracelog_blocks(const struct tracelog_reader *r);
/* The next record: 1, 0 at the end of the log, or an enum tracelog_error
 * (TRACELOG_E_CHECKSUM: block r->index is damaged, and nothing of it was
 * read). */
int tracelog_next_values(struct tracelog_reader *r, struct trace_values *out);
/* The next record when its entry keeps every field of its layout (a
 * filter keeps records whole unless a rule drops fields): 1 with *body its
 * layout in r->layouts and *fields_at its fields' bytes, each as long as
 * the description says, packed in layout order, the header's first; and
 * the reader past it. 2 when the entry keeps fewer fields: nothing is
 * read, and tracelog_next_values reads it. 0 at the end, or an enum
 * tracelog_error. For readers that decode whole records by a plan of
 * their own (the analyzer's: analysis/load/fields.c), without a value
 * array per record. */
int tracelog_next_whole(struct tracelog_reader *r, const struct desc_layout **body, const uint8_t **fields_at);

/* The little-endian number of `length` bytes (1, 2, 4 or 8) at p: how a
 * log's fields are read. Spelt out byte by byte so that the compiler can
 * make each one a single load. */
static inline uint64_t tracelog_little_endian(const uint8_t *p, uint32_t length)
{
    switch (length) {
    case 8:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
               (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    case 4:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
    case 2:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    default:
        return p[0];
    }
}
/* The same into this build's struct (TRACELOG_E_LAYOUT unless `compiled`). */
int tracelog_next(struct tracelog_reader *r, struct meter_record *out);
/* A record read by tracelog_next_values laid out again as its description
 * places its fields (the header, then the body after the header's end),
 * with the fields the log did not keep as 0: what the rule engine
 * (rules_select) reads. Into out[0..cap); returns the record's length. */
/* Field i of a record read by tracelog_next_values (the header's fields
 * first, then its body's), as the log's description gives it. */
const struct desc_field *tracelog_field(const struct tracelog_reader *r, const struct trace_values *v, uint32_t i);
/* Whether field i of a record of `type` is signed: known only when the
 * log's description is this build's own, whose field tables say so. */
int tracelog_field_signed(const struct tracelog_reader *r, uint32_t type, uint32_t i);
uint32_t tracelog_record_bytes(const struct tracelog_reader *r, const struct trace_values *v, uint8_t *out,
                               uint32_t cap);

#endif
