/*
 * meter_test.c — meter/ on the host, under the sanitizers: the field tables
 * agree with the C structs (every byte of every record belongs to exactly
 * one field), the description lists every field at its offset, and trace
 * logs written with random records and random kept fields read back
 * exactly, across many blocks, with their loss counts; damaged and
 * truncated logs are refused or end cleanly; a log written over an older,
 * longer one ends where it ends (its log identity); a blank trace disk is
 * told apart from a log and from anything else; a log with a capacity
 * stops there and still counts its losses; a filter's summaries
 * (summary.c) count each message once, from its SEND or, when its sender is
 * not metered there, from its RECEIVE, count MOVEDATAs, keep each process's
 * latest machine, count what finds no room, and are read back as packed
 * while damaged ones are refused.
 *
 *     meter_test    prints `meter_test: N checks passed` or the failures
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tracelog.h"
#include "summary.h"

#define TEST_NAME "meter_test"
#include "host_check.h"

_Static_assert(__builtin_offsetof(struct meter_record, body) == sizeof(struct meter_header),
               "a record's body follows its header");

/* Every byte of the layout is in exactly one field, fields in order. */
static void check_layout(const struct meter_layout *l)
{
    uint32_t at = 0;
    for (uint32_t i = 0; i < l->nfields; i++) {
        CHECK(l->fields[i].offset == at);
        CHECK(l->fields[i].size == 1 || l->fields[i].size == 2 || l->fields[i].size == 4 ||
              l->fields[i].size == 8);
        CHECK(l->fields[i].offset % l->fields[i].size == 0);
        CHECK(l->fields[i].base == 10 || l->fields[i].base == 16);
        at += l->fields[i].size;
    }
    CHECK(at == l->size);
}

static void check_tables(void)
{
    check_layout(&meter_header_layout);
    CHECK(meter_header_layout.size == sizeof(struct meter_header));
    for (uint32_t t = 1; t < METER_NTYPES; t++) {
        const struct meter_layout *l = meter_body_layout(t);
        CHECK(l && l->type == t);
        if (!l)
            continue;
        check_layout(l);
        CHECK(meter_header_layout.nfields + l->nfields <= METER_MAX_FIELDS);
        CHECK(meter_type_number(l->name) == t);
    }
    CHECK(meter_body_layout(0) == 0 && meter_body_layout(METER_NTYPES) == 0);
    CHECK(meter_type_number("SEND") == MT_SEND && meter_type_number("DESTROYPROCESS") == MT_DESTROYPROCESS);
    CHECK(meter_type_number("SENDX") == 0 && meter_type_number("") == 0);
    CHECK(meter_body_layout(MT_SEND)->size == sizeof(struct meter_SEND));
    CHECK(METER_FLAG(MT_SEND) & METER_ALL_FLAGS);
    CHECK(!(METER_ALL_FLAGS & 1));
}

static void check_description(void)
{
    static char text[65536];
    long n = meter_describe(text, sizeof text);
    CHECK(n > 0 && (size_t)n == strlen(text));
    CHECK(strncmp(text, "header 0.\tmachine,0,4,10\n\ttraceType,4,4,10\n\ttime,8,8,10\n", 56) == 0);
    CHECK(strstr(text, "\nSEND 1.\ttoTask,0,8,16\n\tmessageId,8,8,16\n") != 0);
    CHECK(strstr(text, "\nDESTROYPROCESS 11.\tstatus,0,8,10;\n") != 0);
    /* Every field of every layout, at its offset, with its size and base. */
    for (uint32_t t = 0; t < METER_NTYPES; t++) {
        const struct meter_layout *l = t ? meter_body_layout(t) : &meter_header_layout;
        char line[128];
        snprintf(line, sizeof line, "%s %u.", l->name, t);
        const char *at = strstr(text, line);
        CHECK(at != 0);
        for (uint32_t i = 0; at && i < l->nfields; i++) {
            snprintf(line, sizeof line, "\t%s,%u,%u,%u", l->fields[i].name, l->fields[i].offset, l->fields[i].size,
                     l->fields[i].base);
            const char *f = strstr(at, line);
            CHECK(f != 0);
            at = f ? f : at;
        }
    }
    CHECK(meter_describe(text, 100) == -1 && strlen(text) == 99);
}

/* ---- logs ---- */

static uint8_t *image;
static uint64_t image_blocks, writes;

static int write_block(void *context, uint64_t index, const uint8_t *block)
{
    (void)context;
    if (index >= image_blocks) {
        uint64_t more = index + 64;
        image = realloc(image, more * TRACELOG_BLOCK);
        memset(image + image_blocks * TRACELOG_BLOCK, 0, (more - image_blocks) * TRACELOG_BLOCK);
        image_blocks = more;
    }
    memcpy(image + index * TRACELOG_BLOCK, block, TRACELOG_BLOCK);
    writes++;
    return 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A record of a random type with random contents. */
static void random_record(struct meter_record *r, uint64_t sequence)
{
    memset(r, 0, sizeof *r);
    uint32_t type = 1 + (uint32_t)(next_random() % (METER_NTYPES - 1));
    const struct meter_layout *body = meter_body_layout(type);
    uint8_t *bytes = (uint8_t *)r;
    for (uint32_t i = 0; i < sizeof(struct meter_header) + body->size; i++)
        bytes[i] = (uint8_t)next_random();
    r->header.traceType = type;
    r->header.length = (uint32_t)(sizeof(struct meter_header) + body->size);
    r->header.sequence = sequence;
}

/* What a record looks like read back with only `fields` kept. */
static void keep_only(struct meter_record *r, uint32_t fields)
{
    struct meter_record kept;
    memset(&kept, 0, sizeof kept);
    uint32_t type = r->header.traceType;
    const struct meter_layout *body = meter_body_layout(type);
    for (uint32_t i = 0; i < meter_header_layout.nfields + body->nfields; i++) {
        if (!(fields & (1u << i)))
            continue;
        const struct meter_field *f = i < meter_header_layout.nfields
                                          ? &meter_header_layout.fields[i]
                                          : &body->fields[i - meter_header_layout.nfields];
        uint32_t at = f->offset + (i < meter_header_layout.nfields ? 0 : (uint32_t)sizeof(struct meter_header));
        memcpy((uint8_t *)&kept + at, (uint8_t *)r + at, f->size);
    }
    kept.header.traceType = type;
    kept.fields = fields;
    *r = kept;
}

/* `records` random records (some fields dropped if partial_fields) written
 * to a log and read back: as records, by the log's own description, and
 * after a stale block. Long on purpose: one log, read several ways in turn. */
static void check_log_round_trip(int records, int partial_fields)
{
    free(image);
    image = 0;
    image_blocks = writes = 0;
    static struct tracelog_writer w;
    CHECK(tracelog_begin(&w, "filter-one", 3, 0x51ab, write_block, 0) == 0);
    struct meter_record *sent = calloc((size_t)records, sizeof *sent);
    uint64_t lost = 0;
    for (int i = 0; i < records; i++) {
        random_record(&sent[i], (uint64_t)i);
        uint32_t all = meter_all_fields(sent[i].header.traceType);
        uint32_t fields = partial_fields ? (uint32_t)next_random() & all : all;
        CHECK(tracelog_append(&w, &sent[i], fields) == 0);
        keep_only(&sent[i], fields);
        if (i % 97 == 0) {
            tracelog_lose(&w, 2);
            lost += 2;
        }
    }
    CHECK(tracelog_flush(&w) == 0);
    CHECK(w.records == (uint64_t)records);

    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    CHECK(strcmp(r.header->filter, "filter-one") == 0 && r.header->machine == 3 && r.header->log_id == 0x51ab);
    static char description[65536];
    long n = meter_describe(description, sizeof description);
    CHECK(n == (long)r.header->description_length && memcmp(description, r.description, (size_t)n) == 0);
    struct meter_record got;
    int i = 0, status, same = 1;
    while ((status = tracelog_next(&r, &got)) == 1) {
        if (i < records)
            same &= memcmp(&got, &sent[i], sizeof got) == 0;
        i++;
    }
    CHECK(status == 0);
    CHECK(i == records);
    CHECK(same);
    CHECK(r.lost == lost);
    CHECK(r.compiled);
    /* Read again by the log's own description: the same values. */
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    struct trace_values v;
    int by_values = 0, values_same = 1;
    while (tracelog_next_values(&r, &v) == 1) {
        if (by_values < records) {
            const struct meter_record *m = &sent[by_values];
            values_same &= v.type == m->header.traceType && v.fields == m->fields;
            const struct meter_layout *body = meter_body_layout(v.type);
            for (uint32_t f = 0; f < v.nfields; f++) {
                const struct meter_field *mf = f < meter_header_layout.nfields
                                                   ? &meter_header_layout.fields[f]
                                                   : &body->fields[f - meter_header_layout.nfields];
                uint32_t at = mf->offset + (f < meter_header_layout.nfields ? 0 : (uint32_t)sizeof(struct meter_header));
                uint64_t want = 0;
                memcpy(&want, (const uint8_t *)m + at, mf->size);
                if (f == 1)
                    want = m->fields & 2 ? want : 0;      /* traceType: zero when dropped */
                values_same &= v.values[f] == want;
            }
        }
        by_values++;
    }
    CHECK(by_values == records && values_same);
    /* The log ends at the first block that is not the next one: a block of
     * an older, longer log left behind it is not read. */
    if (image_blocks > r.index + 1) {
        struct tracelog_block stale = { .magic = TRACELOG_BLOCK_MAGIC, .log_id = 0x51ab, .sequence = 999 };
        memcpy(image + r.index * TRACELOG_BLOCK, &stale, sizeof stale);
        CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
        int again = 0;
        while (tracelog_next(&r, &got) == 1)
            again++;
        CHECK(again == records);
    }
    free(sent);
}

/* Give a record block changed by a test its checksum again, as a writer
 * would: for damage the entry checks are to find. */
static void seal(uint8_t *block)
{
    ((struct tracelog_block *)block)->checksum = tracelog_block_checksum(block);
}

/* The checksum by values computed from its definition alone
 * (scripts/harness.py's tracelog_checksum); every record block written
 * carries its checksum; a flipped bit anywhere in a record block, its
 * identity fields included, is damage (TRACELOG_E_CHECKSUM at that block,
 * none of its records read), while a sound block of another log that
 * shares two identity fields ends the log. */
static void check_checksum(void)
{
    CHECK(tracelog_checksum((const uint8_t *)"", 0) == 0xe5a861f3u);
    CHECK(tracelog_checksum((const uint8_t *)"abc", 3) == 0xb2109176u);
    CHECK(tracelog_checksum((const uint8_t *)"abc", 4) == 0xb2109179u);   /* its NUL too: the length counts */
    CHECK(tracelog_checksum((const uint8_t *)"Nobody inspects the spammish repetition", 39) == 0x4468586au);
    static uint8_t block[TRACELOG_BLOCK] __attribute__((aligned(8)));
    CHECK(tracelog_checksum(block, sizeof block) == 0x59189a25u);
    CHECK(tracelog_block_checksum(block) == 0x59189a25u);   /* a zero block: not 0, the checksum it says */
    for (int i = 0; i < TRACELOG_BLOCK; i++)
        block[i] = (uint8_t)i;
    CHECK(tracelog_checksum(block, sizeof block) == 0xe8da7432u);
    free(image);
    image = 0;
    image_blocks = 0;
    static struct tracelog_writer w;
    tracelog_begin(&w, "f", 0, 9, write_block, 0);
    struct meter_record rec;
    int added = 0;
    for (; added < 200; added++) {
        random_record(&rec, (uint64_t)added);
        tracelog_append(&w, &rec, meter_all_fields(rec.header.traceType));
    }
    tracelog_flush(&w);
    uint32_t header_blocks = ((struct tracelog_header *)image)->header_blocks;
    uint64_t size = image_blocks * TRACELOG_BLOCK;
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, size) == 0);
    uint64_t blocks = tracelog_blocks(&r);
    CHECK(blocks >= header_blocks + 3 && blocks == w.next_index + 1);
    for (uint64_t i = header_blocks; i < blocks; i++) {
        const struct tracelog_block *b = (const struct tracelog_block *)(image + i * TRACELOG_BLOCK);
        CHECK(b->checksum == tracelog_block_checksum(image + i * TRACELOG_BLOCK));
    }
    uint64_t second = header_blocks + 1;
    uint32_t first_records = ((struct tracelog_block *)(image + header_blocks * TRACELOG_BLOCK))->records;
    static const uint32_t flips[] = { 0, 5, 9, 12, 16, 20, 24, 40, 100, 2049, TRACELOG_BLOCK - 1 };
    for (size_t k = 0; k < sizeof flips / sizeof flips[0]; k++) {
        uint8_t *at = image + second * TRACELOG_BLOCK + flips[k];
        *at ^= 0x04;
        CHECK(tracelog_open(&r, image, size) == 0);
        CHECK(tracelog_blocks(&r) == second);
        int n = 0, status;
        while ((status = tracelog_next(&r, &rec)) == 1)
            n++;
        CHECK(status == TRACELOG_E_CHECKSUM && r.index == second && (uint32_t)n == first_records);
        *at ^= 0x04;
    }
    /* A block of another log numbered as this log's next: the log ends before it. */
    struct tracelog_block *b = (struct tracelog_block *)(image + second * TRACELOG_BLOCK);
    b->log_id ^= 0x100;
    seal((uint8_t *)b);
    CHECK(tracelog_open(&r, image, size) == 0);
    int n = 0, status;
    while ((status = tracelog_next(&r, &rec)) == 1)
        n++;
    CHECK(status == 0 && (uint32_t)n == first_records && tracelog_blocks(&r) == second);
    b->log_id ^= 0x100;
    seal((uint8_t *)b);
    CHECK(tracelog_open(&r, image, size) == 0);
    for (n = 0; tracelog_next(&r, &rec) == 1;)
        n++;
    CHECK(n == added);
}

/* What the checksum is for (meter/tracelog.h, tracelog_checksum). A
 * change of one byte, or of one aligned 16-bit piece, of a block: a change
 * of d at word i changes a + 2b by u = d (1 + 2 (512 - i)) modulo 2^64,
 * and the checksum stays only if u - c 2^64 is a multiple of the prime,
 * c being 0 or 1 (whether a + 2b wrapped): every such u is tried. Then on
 * real blocks: such changes at every byte, two words swapped, data zeroed,
 * the block cut short or extended (`used` and the entries with it); and
 * the writer's running sums, however the block was filled, agree with the
 * block's own checksum. */
static void check_checksum_detects(void)
{
    const uint64_t wrap = (uint64_t)(((unsigned __int128)1 << 64) % TRACELOG_CHECKSUM_PRIME);
    uint64_t unseen = 0;
    for (uint64_t words_after = 1; words_after <= TRACELOG_BLOCK / 8; words_after++)
        for (uint32_t piece = 8; piece <= 16; piece += 8)
            for (uint32_t shift = 0; shift < 64; shift += piece)
                for (uint64_t d = 1; d < (1ull << piece); d++) {
                    uint64_t u = (d << shift) * (1 + 2 * words_after);
                    uint64_t up = u % TRACELOG_CHECKSUM_PRIME, down = (0 - u) % TRACELOG_CHECKSUM_PRIME;
                    unseen += up == 0 || up == wrap || down == 0 || down == wrap;
                }
    CHECK(unseen == 0);

    static uint8_t block[TRACELOG_BLOCK] __attribute__((aligned(8)));
    uint64_t state = 0x1234;
    for (int i = 0; i < TRACELOG_BLOCK; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        block[i] = (uint8_t)(state >> 56);
    }
    struct tracelog_block *header = (struct tracelog_block *)block;
    header->checksum = 0;
    const uint32_t sound = tracelog_block_checksum(block);
    CHECK(sound == tracelog_checksum(block, TRACELOG_BLOCK));
    static const uint8_t changes[] = { 0x01, 0x80, 0xff, 0x5a };
    int missed = 0;
    for (int at = 0; at < TRACELOG_BLOCK; at++) {
        if (at >= 20 && at < 24)
            continue;   /* the checksum field itself, read as 0 */
        for (size_t k = 0; k < sizeof changes; k++) {
            block[at] ^= changes[k];
            missed += tracelog_block_checksum(block) == sound;
            block[at] ^= changes[k];
        }
    }
    CHECK(missed == 0);
    uint64_t *words = (uint64_t *)block;
    for (int i = 4; i < TRACELOG_BLOCK / 8; i += 37)
        for (int j = i + 1; j < TRACELOG_BLOCK / 8; j += 61) {
            uint64_t t = words[i];
            words[i] = words[j];
            words[j] = t;
            missed += words[i] != words[j] && tracelog_block_checksum(block) == sound;
            words[j] = words[i];
            words[i] = t;
        }
    CHECK(missed == 0);
    static uint8_t copy[TRACELOG_BLOCK] __attribute__((aligned(8)));
    memcpy(copy, block, sizeof copy);
    memset(block + 1000, 0, 800);                                   /* data zeroed */
    CHECK(tracelog_block_checksum(block) != sound);
    memset(block + 32, 0, TRACELOG_BLOCK - 32);                     /* every entry */
    CHECK(tracelog_block_checksum(block) != sound);
    memset(block, 0, sizeof block);                                 /* the whole block, its checksum too */
    CHECK(tracelog_block_checksum(block) != header->checksum);

    /* A writer's blocks: filled whole, by fields (not word-aligned), and by
     * both in turn; each block as written (tracelog_flush) and again after
     * more entries, its checksum what a reader computes. Cut short or
     * extended, a written block is damage. */
    free(image);
    image = 0;
    image_blocks = writes = 0;
    static struct tracelog_writer w;
    CHECK(tracelog_begin(&w, "sums", 0, 5, write_block, 0) == 0);
    struct meter_record rec;
    int agree = 1;
    for (int i = 0; i < 600; i++) {
        random_record(&rec, (uint64_t)i);
        uint32_t all = meter_all_fields(rec.header.traceType);
        uint32_t fields = i % 3 == 1 ? (uint32_t)next_random() & all : all;
        uint32_t bytes;
        if (i % 3 == 2 && tracelog_append_whole(&w, (const uint8_t *)&rec, 1, &bytes) == 1)
            continue;
        CHECK(tracelog_append(&w, &rec, fields) == 0);
        if (i % 7 == 0) {
            CHECK(tracelog_flush(&w) == 0);
            agree &= ((struct tracelog_block *)w.block)->checksum == tracelog_block_checksum(w.block);
        }
    }
    CHECK(agree);
    CHECK(tracelog_flush(&w) == 0);
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    uint64_t blocks = tracelog_blocks(&r);
    CHECK(blocks == w.next_index + 1 && blocks >= r.header->header_blocks + 5);
    for (uint64_t i = r.header->header_blocks; i < blocks; i++) {
        memcpy(copy, image + i * TRACELOG_BLOCK, TRACELOG_BLOCK);
        ((struct tracelog_block *)copy)->checksum = 0;
        agree &= ((struct tracelog_block *)(image + i * TRACELOG_BLOCK))->checksum ==
                 tracelog_checksum(copy, TRACELOG_BLOCK);
    }
    CHECK(agree);
    struct tracelog_block *first = (struct tracelog_block *)(image + r.header->header_blocks * TRACELOG_BLOCK);
    uint8_t *entries = (uint8_t *)(first + 1);
    uint32_t used = first->used;
    uint8_t last[8];
    memcpy(last, entries + used - 8, 8);
    first->used = used - 8;                                          /* cut short */
    memset(entries + used - 8, 0, 8);
    CHECK(tracelog_block_checksum((uint8_t *)first) != first->checksum);
    memcpy(entries + used - 8, last, 8);
    first->used = used + 8;                                          /* extended by zeros */
    CHECK(tracelog_block_checksum((uint8_t *)first) != first->checksum);
    first->used = used;
    CHECK(tracelog_block_checksum((uint8_t *)first) == first->checksum);
}

static void check_damage(void)
{
    free(image);
    image = 0;
    image_blocks = 0;
    static struct tracelog_writer w;
    tracelog_begin(&w, "f", 0, 7, write_block, 0);
    struct meter_record rec;
    for (int i = 0; i < 10; i++) {
        random_record(&rec, (uint64_t)i);
        tracelog_append(&w, &rec, meter_all_fields(rec.header.traceType));
    }
    tracelog_flush(&w);
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, 100) == TRACELOG_E_SHORT);
    image[0] ^= 1;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == TRACELOG_E_MAGIC);
    image[0] ^= 1;
    struct tracelog_header *h = (struct tracelog_header *)image;
    h->version++;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == TRACELOG_E_VERSION);
    h->version--;
    h->description_length += TRACELOG_BLOCK;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == TRACELOG_E_HEADER);
    h->description_length -= TRACELOG_BLOCK;
    CHECK(tracelog_open(&r, image, (uint64_t)h->header_blocks * TRACELOG_BLOCK) == 0);
    CHECK(tracelog_next(&r, &rec) == 0);          /* no record block in a log cut after its header */
    /* An entry whose length runs past its block, or names no type. */
    uint8_t *first = image + (uint64_t)h->header_blocks * TRACELOG_BLOCK + sizeof(struct tracelog_block);
    struct tracelog_entry e;
    memcpy(&e, first, sizeof e);
    e.length = 4000;
    memcpy(first, &e, sizeof e);
    seal(first - sizeof(struct tracelog_block));   /* the entry checks find it, not the checksum */
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    CHECK(tracelog_next(&r, &rec) == TRACELOG_E_ENTRY);
    e.length = 4000 - 4000;
    memcpy(first, &e, sizeof e);
    seal(first - sizeof(struct tracelog_block));
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    CHECK(tracelog_next(&r, &rec) == TRACELOG_E_ENTRY);
    /* A record that is not what its type says is refused by the writer. */
    random_record(&rec, 0);
    rec.header.length++;
    CHECK(tracelog_append(&w, &rec, 0xffffffffu) == -1);
    rec.header.length--;
    rec.header.traceType = METER_NTYPES;
    CHECK(tracelog_append(&w, &rec, 0xffffffffu) == -1);
}

/* Start the image afresh (empty), or keep what is on it (an old log). */
static void reset_image(void)
{
    free(image);
    image = 0;
    image_blocks = writes = 0;
}

/* Write a log of `records` random records (kept whole) called `log_id` over
 * whatever the image holds; the records into sent[] if sent. Returns the
 * blocks it takes. */
static uint64_t write_log(uint32_t log_id, int records, struct meter_record *sent)
{
    static struct tracelog_writer w;
    CHECK(tracelog_begin(&w, "again", 1, log_id, write_block, 0) == 0);
    for (int i = 0; i < records; i++) {
        struct meter_record rec;
        random_record(&rec, (uint64_t)i);
        CHECK(tracelog_append(&w, &rec, meter_all_fields(rec.header.traceType)) == 0);
        if (sent)
            sent[i] = rec;
    }
    CHECK(tracelog_flush(&w) == 0);
    return w.next_index + 1;
}

/* Records of the log on the image, compared with sent[]: how many. */
static int read_back(const struct meter_record *sent, int expected, uint64_t *blocks)
{
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    struct meter_record got;
    int n = 0, same = 1, status;
    while ((status = tracelog_next(&r, &got)) == 1) {
        if (n < expected) {
            struct meter_record want = sent[n];
            want.fields = meter_all_fields(want.header.traceType);
            same &= memcmp(&got, &want, sizeof got) == 0;
        }
        n++;
    }
    CHECK(status == 0 && same);
    *blocks = tracelog_blocks(&r);
    return n;
}

/* A trace disk is written again from block 0 by each new log. A new log
 * shorter than the old one is followed by the old one's blocks, numbered
 * as its own next blocks would be: only the log identity ends it there. */
static void check_log_identity(void)
{
    static struct meter_record sent[400];
    reset_image();
    write_log(1, 5000, 0);
    uint64_t old_blocks = image_blocks, blocks;
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    uint64_t header_blocks = r.header->header_blocks;
    CHECK(tracelog_blocks(&r) > header_blocks + 50);        /* the old log is long */
    /* One block of records, then several, over the old log. */
    int sizes[] = { 20, 400 };
    for (int i = 0; i < 2; i++) {
        uint64_t written = write_log(2 + (uint32_t)i, sizes[i], sent);
        CHECK(image_blocks == old_blocks);                   /* the old log's blocks are still there */
        CHECK(read_back(sent, sizes[i], &blocks) == sizes[i]);
        CHECK(blocks == written);
        CHECK(i == 0 ? written == header_blocks + 1 : written > header_blocks + 5);
    }
    /* The same log id again: the old blocks would be taken for its own. */
    write_log(1, 5000, 0);
    write_log(1, 20, sent);
    CHECK(read_back(sent, 20, &blocks) > 20);
}

/* A blank trace disk, and logs written on one. */
static void check_blank(void)
{
    static uint8_t block[TRACELOG_BLOCK];
    tracelog_blank(block);
    struct tracelog_reader r;
    CHECK(tracelog_is_blank(block, sizeof block));
    CHECK(!tracelog_is_blank(block, 10));
    CHECK(tracelog_open(&r, block, sizeof block) == TRACELOG_E_EMPTY);
    reset_image();
    write_block(0, 0, block);
    write_block(0, 100, (const uint8_t[TRACELOG_BLOCK]){ 0 });    /* a 101-block blank disk */
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == TRACELOG_E_EMPTY);
    static struct meter_record sent[30];
    write_log(9, 30, sent);
    CHECK(!tracelog_is_blank(image, image_blocks * TRACELOG_BLOCK));
    uint64_t blocks;
    CHECK(read_back(sent, 30, &blocks) == 30);
    memset(block, 0, sizeof block);
    CHECK(!tracelog_is_blank(block, sizeof block));
    CHECK(tracelog_open(&r, block, sizeof block) == TRACELOG_E_MAGIC);
}

static uint64_t highest_written;

static int write_counted(void *context, uint64_t index, const uint8_t *block)
{
    if (index > highest_written)
        highest_written = index;
    return write_block(context, index, block);
}

/* A log with a capacity (a trace disk's size): when it is full the record
 * is refused, nothing is written past it, and the losses counted after
 * that still reach its last block. */
static void check_capacity(void)
{
    reset_image();
    highest_written = 0;
    static struct tracelog_writer w;
    CHECK(tracelog_begin(&w, "small", 0, 77, write_counted, 0) == 0);
    uint64_t capacity = w.next_index + 3;
    w.capacity = capacity;
    struct meter_record rec;
    int added = 0, status;
    for (;;) {
        random_record(&rec, (uint64_t)added);
        if ((status = tracelog_append(&w, &rec, meter_all_fields(rec.header.traceType))) != 0)
            break;
        added++;
    }
    CHECK(status == TRACELOG_FULL);
    CHECK(tracelog_append(&w, &rec, meter_all_fields(rec.header.traceType)) == TRACELOG_FULL);
    tracelog_lose(&w, 5);
    CHECK(tracelog_flush(&w) == 0);
    CHECK(highest_written == capacity - 1);
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, image, image_blocks * TRACELOG_BLOCK) == 0);
    CHECK(tracelog_blocks(&r) == capacity);
    int n = 0;
    while (tracelog_next(&r, &rec) == 1)
        n++;
    CHECK(n == added && added > 3 * 30 && r.lost == 5);
}

/* A log written by another build, with DPM's own sample layouts (4-byte
 * fields, a type SENDMESSAGE): read by its description alone. */
static void check_foreign_log(void)
{
    static const char description[] =
        "header 0. machine,0,4,16 traceType,4,4,10 time,8,4,10 procTime,12,4,10;\n"
        "SENDMESSAGE 1. fromTask,0,4,16 toTask,4,4,16 channel,8,4,10 code,12,4,10;\n";
    static uint8_t log[3 * TRACELOG_BLOCK];
    memset(log, 0, sizeof log);
    struct tracelog_header h = { "DPMTRACE", TRACELOG_VERSION, TRACELOG_BLOCK, 1,
                                 (uint32_t)(sizeof description - 1), 5, 42, "old" };
    memcpy(log, &h, sizeof h);
    memcpy(log + sizeof h, description, sizeof description - 1);
    struct tracelog_block b = { .magic = TRACELOG_BLOCK_MAGIC, .log_id = 42, .records = 2, .lost = 7 };
    uint8_t *p = log + TRACELOG_BLOCK + sizeof b;
    /* Entry 1: every field; entry 2: without channel and time. */
    uint32_t all[8] = { 5, 1, 1000, 2000, 0x11, 0x22, 3, 4 };
    struct tracelog_entry e1 = { (uint16_t)(sizeof e1 + sizeof all), 1, 0xff };
    memcpy(p, &e1, sizeof e1);
    memcpy(p + sizeof e1, all, sizeof all);
    p += e1.length;
    uint32_t some[6] = { 5, 1, 2000, 0x11, 0x22, 4 };
    struct tracelog_entry e2 = { (uint16_t)(sizeof e2 + sizeof some), 1, 0xff & ~(1u << 2) & ~(1u << 6) };
    memcpy(p, &e2, sizeof e2);
    memcpy(p + sizeof e2, some, sizeof some);
    b.used = e1.length + e2.length;
    memcpy(log + TRACELOG_BLOCK, &b, sizeof b);
    seal(log + TRACELOG_BLOCK);
    struct tracelog_reader r;
    CHECK(tracelog_open(&r, log, sizeof log) == 0);
    CHECK(!r.compiled);
    struct trace_values v;
    CHECK(tracelog_next_values(&r, &v) == 1 && v.type == 1 && v.nfields == 8 && v.fields == 0xff);
    CHECK(v.values[0] == 5 && v.values[2] == 1000 && v.values[5] == 0x22 && v.values[7] == 4);
    CHECK(v.body && strcmp(v.body->name, "SENDMESSAGE") == 0);
    CHECK(tracelog_next_values(&r, &v) == 1 && v.values[2] == 0 && v.values[3] == 2000 && v.values[6] == 0 &&
          v.values[7] == 4);
    CHECK(tracelog_next_values(&r, &v) == 0 && r.lost == 7 && r.records == 2);
    struct meter_record m;
    CHECK(tracelog_open(&r, log, sizeof log) == 0 && tracelog_next(&r, &m) == TRACELOG_E_LAYOUT);
    /* A description that does not parse: refused, saying where. */
    log[sizeof h + 8] = ';';                      /* "header 0; ..." */
    CHECK(tracelog_open(&r, log, sizeof log) == TRACELOG_E_DESCRIPTION);
    CHECK(r.description_error.line == 1 && r.description_error.column > 1);
}

/* ---- the live stream ---- */

static uint8_t *stream;
static uint64_t stream_size;

/* The filter's writer with -l: each block to the image (the trace disk)
 * and, as it is written, to the end of the stream. */
static int write_and_stream(void *context, uint64_t index, const uint8_t *block)
{
    stream = realloc(stream, stream_size + TRACELOG_BLOCK);
    memcpy(stream + stream_size, block, TRACELOG_BLOCK);
    stream_size += TRACELOG_BLOCK;
    return write_block(context, index, block);
}

/* A log of `records` records, flushed every `flush_every` (a filter's
 * partly filled block rewritten each second), onto the image and the
 * stream; its length in blocks. */
static uint64_t stream_log(uint32_t log_id, int records, int flush_every)
{
    static struct tracelog_writer w;
    CHECK(tracelog_begin(&w, "live", 2, log_id, write_and_stream, 0) == 0);
    for (int i = 0; i < records; i++) {
        struct meter_record rec;
        random_record(&rec, (uint64_t)i);
        CHECK(tracelog_append(&w, &rec, meter_all_fields(rec.header.traceType)) == 0);
        if ((i + 1) % flush_every == 0)
            CHECK(tracelog_flush(&w) == 0);
    }
    CHECK(tracelog_flush(&w) == 0);
    return w.next_index + 1;
}

/* tracelog_unstream rebuilds the trace disk's log from the stream, block
 * for block: the last version of each block; the last of several logs; a
 * stream cut mid-block up to its last whole block; nothing from a stream
 * with no whole header. */
static void check_unstream(void)
{
    reset_image();
    stream_size = 0;
    uint64_t blocks = stream_log(7, 3000, 7);
    CHECK(stream_size > blocks * TRACELOG_BLOCK);     /* blocks came more than once */
    uint8_t *out = malloc(stream_size);
    uint32_t logs;
    uint64_t n = tracelog_unstream(stream, stream_size, out, stream_size, &logs);
    CHECK(logs == 1 && n == blocks * TRACELOG_BLOCK && memcmp(out, image, n) == 0);

    /* Cut in the middle of its last block: that block is left out. */
    uint64_t cut = stream_size - TRACELOG_BLOCK / 2;
    n = tracelog_unstream(stream, cut, out, stream_size, &logs);
    CHECK(logs == 1 && n > 0 && n <= blocks * TRACELOG_BLOCK && memcmp(out, image, n - TRACELOG_BLOCK) == 0);

    /* A second, shorter log on the same channel: it alone is rebuilt. */
    reset_image();
    uint64_t first_size = stream_size;
    blocks = stream_log(8, 40, 5);
    free(out);
    out = malloc(stream_size);
    n = tracelog_unstream(stream, stream_size, out, stream_size, &logs);
    CHECK(logs == 2 && n == blocks * TRACELOG_BLOCK && memcmp(out, image, n) == 0);
    CHECK(((struct tracelog_header *)out)->log_id == 8);

    /* Nothing but the first log's record blocks (its header cut off), or
     * less than a block: no log. */
    n = tracelog_unstream(stream + TRACELOG_BLOCK, first_size - TRACELOG_BLOCK, out, stream_size, &logs);
    CHECK(n == 0 && logs == 0);
    n = tracelog_unstream(stream, TRACELOG_BLOCK - 1, out, stream_size, &logs);
    CHECK(n == 0 && logs == 0);
    free(out);
    free(stream);
    stream = 0;
    stream_size = 0;
}

/* tracelog_append_whole over batches (records packed one after another,
 * as a kernel sends them) writes the very blocks that tracelog_append,
 * record by record, writes: it stops where a record does not fit the
 * block, and the caller's tracelog_append of that one starts the next. It
 * stops too at a record of no type, or of a wrong length, and at
 * misaligned input, adding nothing then. */
static void check_append_whole(void)
{
    enum { RECORDS = 3000 };
    static uint8_t packed[RECORDS * sizeof(struct meter_record)] __attribute__((aligned(8)));
    uint32_t offset[RECORDS + 1];
    offset[0] = 0;
    for (int i = 0; i < RECORDS; i++) {
        struct meter_record r;
        random_record(&r, (uint64_t)i);
        memcpy(packed + offset[i], &r, r.header.length);
        offset[i + 1] = offset[i] + r.header.length;
    }
    static uint8_t *one_by_one;
    static struct tracelog_writer w;
    for (int way = 0; way < 2; way++) {
        free(image);
        image = 0;
        image_blocks = writes = 0;
        CHECK(tracelog_begin(&w, "whole", 1, 0x77, write_block, 0) == 0);
        int i = 0, calls = 0;
        while (i < RECORDS) {
            uint32_t bytes = 0, n = 0;
            if (way == 1) {
                uint32_t batch = (uint32_t)(RECORDS - i < 45 ? RECORDS - i : 45);
                n = tracelog_append_whole(&w, packed + offset[i], batch, &bytes);
                CHECK(bytes == offset[i + n] - offset[i]);
                calls++;
            }
            if (n == 0) {
                CHECK(tracelog_append(&w, packed + offset[i], meter_all_fields(((struct meter_header *)(packed + offset[i]))->traceType)) == 0);
                n = 1;
            }
            i += (int)n;
        }
        CHECK(tracelog_flush(&w) == 0);
        CHECK(w.records == RECORDS);
        if (way == 0) {
            one_by_one = malloc(image_blocks * TRACELOG_BLOCK);
            memcpy(one_by_one, image, image_blocks * TRACELOG_BLOCK);
        } else {
            CHECK(memcmp(one_by_one, image, image_blocks * TRACELOG_BLOCK) == 0);
            CHECK(calls > RECORDS / 45);      /* most went in whole batches */
        }
    }
    free(one_by_one);
    /* What it will not take: nothing is added. */
    uint32_t bytes = 1, before = ((struct tracelog_block *)w.block)->used;
    struct meter_record bad;
    random_record(&bad, 0);
    memcpy(packed, &bad, bad.header.length);
    ((struct meter_header *)packed)->traceType = METER_NTYPES;
    CHECK(tracelog_append_whole(&w, packed, 1, &bytes) == 0 && bytes == 0);
    ((struct meter_header *)packed)->traceType = bad.header.traceType;
    ((struct meter_header *)packed)->length = bad.header.length + 8;
    CHECK(tracelog_append_whole(&w, packed, 1, &bytes) == 0 && bytes == 0);
    ((struct meter_header *)packed)->length = bad.header.length;
    CHECK(tracelog_append_whole(&w, packed + 4, 1, &bytes) == 0 && bytes == 0);
    CHECK(((struct tracelog_block *)w.block)->used == before);
    CHECK(tracelog_append_whole(&w, packed, 1, &bytes) == 1 && bytes == bad.header.length);
}

/* A record of `type` in process pid's stream, written on `machine`, with
 * the body's fields set by the caller. */
static struct meter_record summary_record(uint32_t type, uint64_t pid, uint32_t machine)
{
    struct meter_record r;
    memset(&r, 0, sizeof r);
    r.header.traceType = type;
    r.header.pid = pid;
    r.header.machine = machine;
    r.header.length = (uint32_t)(sizeof r.header + meter_body_layout(type)->size);
    return r;
}

static const struct meter_summary_pair *pair_of(const struct meter_summary_pair *pairs, uint32_t n, uint64_t from,
                                                uint64_t to)
{
    for (uint32_t i = 0; i < n; i++)
        if (pairs[i].from == from && pairs[i].to == to)
            return &pairs[i];
    return 0;
}

static void check_summary(void)
{
    static struct meter_summary s;
    meter_summary_begin(&s, 7, 2, 1000);
    struct meter_record r = summary_record(MT_SEND, 0x11, 1);
    r.body.SEND.toTask = 0x22;
    r.body.SEND.size = 100;
    meter_summary_add(&s, &r.header, 0);
    meter_summary_add(&s, &r.header, 0);
    r.body.SEND.status = -5;                          /* a SEND that failed moved nothing */
    meter_summary_add(&s, &r.header, 0);
    r = summary_record(MT_RECEIVE, 0x22, 0);
    r.body.RECEIVE.fromTask = 0x11;
    r.body.RECEIVE.size = 100;
    meter_summary_add(&s, &r.header, 1);              /* its SEND counted it */
    r.body.RECEIVE.fromTask = 0x33;
    r.body.RECEIVE.size = 8;
    meter_summary_add(&s, &r.header, 0);              /* 0x33 is not metered there: counted here */
    r = summary_record(MT_MOVEDATA, 0x22, 0);
    r.body.MOVEDATA.fromTask = 0x22;
    r.body.MOVEDATA.toTask = 0x44;
    r.body.MOVEDATA.size = 4096;
    meter_summary_add(&s, &r.header, 0);
    r.body.MOVEDATA.fromTask = 0x55;                  /* between two others: one with each */
    meter_summary_add(&s, &r.header, 0);
    r = summary_record(MT_MIGRATE, 0x11, 3);          /* 0x11 moved to machine 3 */
    meter_summary_add(&s, &r.header, 0);
    r = summary_record(MT_DESTROYPROCESS, 0x44, 0);
    meter_summary_add(&s, &r.header, 0);
    s.head.end_ns = 2000;
    uint32_t len = meter_summary_pack(&s);
    static uint8_t message[4096];
    CHECK(len <= sizeof message);
    memcpy(message, &s, len);
    const struct meter_summary_head *h;
    const struct meter_summary_pair *pairs;
    const struct meter_summary_process *processes;
    CHECK(meter_summary_parse(message, len, &h, &pairs, &processes) == 0);
    CHECK(h->sequence == 7 && h->machine == 2 && h->begin_ns == 1000 && h->end_ns == 2000 && h->records == 9);
    CHECK(h->npairs == 4 && h->nprocesses == 3 && h->messages_left_out == 0);
    const struct meter_summary_pair *p = pair_of(pairs, h->npairs, 0x11, 0x22);
    CHECK(p && p->messages == 2 && p->bytes == 200);
    p = pair_of(pairs, h->npairs, 0x33, 0x22);
    CHECK(p && p->messages == 1 && p->bytes == 8);
    p = pair_of(pairs, h->npairs, 0x22, 0x44);
    CHECK(p && p->messages == 2 && p->bytes == 8192);
    p = pair_of(pairs, h->npairs, 0x22, 0x55);
    CHECK(p && p->messages == 1 && p->bytes == 4096);
    CHECK(pair_of(pairs, h->npairs, 0x22, 0x11) == 0);
    CHECK(processes[0].pid == 0x11 && processes[0].machine == 3 && processes[0].records == 4 && !processes[0].ended);
    CHECK(processes[1].pid == 0x22 && processes[1].machine == 0 && processes[1].records == 4);
    CHECK(processes[2].pid == 0x44 && processes[2].ended == 1);
    CHECK(meter_summary_parse(message, len - 1, &h, &pairs, &processes) == -1);
    message[0] ^= 1;
    CHECK(meter_summary_parse(message, len, &h, &pairs, &processes) == -1);

    meter_summary_begin(&s, 0, 0, 0);                  /* more pairs and processes than fit */
    for (uint64_t i = 0; i < METER_SUMMARY_PAIRS + 3; i++) {
        r = summary_record(MT_SEND, 0x100 + i, 0);
        r.body.SEND.toTask = 0x22;
        meter_summary_add(&s, &r.header, 0);
    }
    CHECK(s.head.npairs == METER_SUMMARY_PAIRS && s.head.messages_left_out == 3);
    CHECK(s.head.nprocesses == METER_SUMMARY_PROCESSES &&
          s.head.processes_left_out == METER_SUMMARY_PAIRS + 3 - METER_SUMMARY_PROCESSES);
    len = meter_summary_pack(&s);
    CHECK(len == sizeof(struct meter_summary) && len <= 4096);
    CHECK(meter_summary_parse(&s, len, &h, &pairs, &processes) == 0 && processes[0].pid == 0x100);
}

int main(void)
{
    check_tables();
    check_description();
    check_log_round_trip(1, 0);
    check_log_round_trip(5000, 0);
    check_log_round_trip(5000, 1);
    check_damage();
    check_checksum();
    check_checksum_detects();
    check_log_identity();
    check_blank();
    check_capacity();
    check_foreign_log();
    check_unstream();
    check_append_whole();
    check_summary();
    if (failures) {
        printf("meter_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("meter_test: %d checks passed\n", checks);
    return 0;
}
