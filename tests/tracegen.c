/*
 * tracegen.c — writes trace logs of known records for the dmtrace tests
 * (tests/test_dmtrace.py), with meter/'s own writer, as a filter would.
 *
 *     tracegen known LOG_ID FILE          the fixed log below
 *     tracegen random LOG_ID COUNT FILE   COUNT random records (seeded: always the same)
 *
 * The log goes into FILE from block 0 over what FILE holds, without
 * shortening it, as a filter writes over the last log of a trace disk.
 */
#define _XOPEN_SOURCE 700

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracelog.h"

static int fd;

static int write_block(void *context, uint64_t index, const uint8_t *block)
{
    (void)context;
    return pwrite(fd, block, TRACELOG_BLOCK, (off_t)(index * TRACELOG_BLOCK)) == TRACELOG_BLOCK ? 0 : -1;
}

static struct tracelog_writer writer;

/* A record of `type` with a header from these values; the body is the caller's. */
static void header(struct meter_record *r, uint32_t type, uint64_t time, uint64_t sequence)
{
    memset(r, 0, sizeof *r);
    r->header.machine = 2;
    r->header.traceType = type;
    r->header.time = time;
    r->header.procTime = time / 2;
    r->header.pc = 0x80001000 + time;
    r->header.load = 3;
    r->header.length = (uint32_t)(sizeof r->header + meter_body_layout(type)->size);
    r->header.pid = 0x0200000500300001ull;
    r->header.sequence = sequence;
}

/* Field `name` of a record of `type` as a bit of its kept-field mask. */
static uint32_t field_bit(uint32_t type, const char *name)
{
    for (uint32_t i = 0; i < meter_header_layout.nfields; i++)
        if (strcmp(meter_header_layout.fields[i].name, name) == 0)
            return 1u << i;
    const struct meter_layout *body = meter_body_layout(type);
    for (uint32_t i = 0; i < body->nfields; i++)
        if (strcmp(body->fields[i].name, name) == 0)
            return 1u << (meter_header_layout.nfields + i);
    fprintf(stderr, "tracegen: no field %s\n", name);
    exit(2);
}

static void append(const struct meter_record *r, uint32_t fields)
{
    if (tracelog_append(&writer, r, fields) != 0) {
        perror("tracegen: append");
        exit(1);
    }
}

/* The known log: four records of four types, with fields dropped from
 * two of them, a negative status, and 3 records lost on the way. The
 * expected dump is in tests/test_dmtrace.py. */
static void known(void)
{
    struct meter_record r;
    header(&r, MT_RECEIVE, 1000, 0);
    r.body.RECEIVE = (struct meter_RECEIVE){ .fromTask = 0x0200000500200001ull, .messageId = 0x2a, .code = 7,
                                             .channel = 5, .size = 64, .linkSlot = -1, .replySlot = 3 };
    append(&r, meter_all_fields(MT_RECEIVE));
    header(&r, MT_RECEIVE, 2000, 1);
    r.body.RECEIVE = (struct meter_RECEIVE){ .fromTask = 0x0200000500200001ull, .messageId = 0x2b, .code = 8,
                                             .channel = 6, .size = 100, .linkSlot = 4, .replySlot = -1 };
    append(&r, meter_all_fields(MT_RECEIVE) & ~field_bit(MT_RECEIVE, "channel") & ~field_bit(MT_RECEIVE, "time"));
    tracelog_lose(&writer, 3);
    header(&r, MT_MOVEDATA, 3000, 5);
    r.body.MOVEDATA = (struct meter_MOVEDATA){ .toTask = 0x0200000500200001ull, .fromTask = 0x0200000500300001ull,
                                               .size = 4096, .toLink = 7, .fromLink = -2 };
    append(&r, field_bit(MT_MOVEDATA, "traceType") | field_bit(MT_MOVEDATA, "sequence") |
                   field_bit(MT_MOVEDATA, "size") | field_bit(MT_MOVEDATA, "fromLink"));
    header(&r, MT_DESTROYPROCESS, 4000, 6);
    r.body.DESTROYPROCESS.status = -9;
    append(&r, meter_all_fields(MT_DESTROYPROCESS));
}

/* COUNT records of random types and contents, numbered 0, 1, ... */
static void random_records(uint64_t count)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t n = 0; n < count; n++) {
        struct meter_record r;
        uint8_t *bytes = (uint8_t *)&r;
        for (size_t i = 0; i < sizeof r; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            bytes[i] = (uint8_t)x;
        }
        uint32_t type = 1 + (uint32_t)(x % (METER_NTYPES - 1));
        r.header.traceType = type;
        r.header.length = (uint32_t)(sizeof r.header + meter_body_layout(type)->size);
        r.header.sequence = n;
        append(&r, meter_all_fields(type));
    }
}

int main(int argc, char **argv)
{
    int is_known = argc == 4 && strcmp(argv[1], "known") == 0;
    int is_random = argc == 5 && strcmp(argv[1], "random") == 0;
    if (!is_known && !is_random) {
        fprintf(stderr, "usage: tracegen known LOG_ID FILE | tracegen random LOG_ID COUNT FILE\n");
        return 2;
    }
    const char *path = argv[argc - 1];
    fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    uint32_t log_id = (uint32_t)strtoul(argv[2], 0, 0);
    if (tracelog_begin(&writer, "tracegen", 2, log_id, write_block, 0) != 0) {
        perror(path);
        return 1;
    }
    if (is_known)
        known();
    else
        random_records(strtoull(argv[3], 0, 10));
    if (tracelog_flush(&writer) != 0 || close(fd) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}
