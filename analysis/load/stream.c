/*
 * analysis/load/stream.c — reading one trace log record by record in
 * bounded memory (load/event.h, "streaming"): the log is read with pread a
 * few blocks at a time, whatever its length, and each record, read by the
 * log's own description (meter/tracelog.h, tracelog_next_values), becomes a
 * struct dpm_event by its fields' names (load/fields.h).
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/event.h"
#include "load/fields.h"
#include "load/window.h"
#include "tracelog.h"

#define CHUNK_BLOCKS 32          /* blocks read at once: 128 KiB */
#define MAX_HEADER_BLOCKS 64     /* a description is far smaller (meter_describe's is 2 blocks) */

struct dpm_stream {
    int fd;
    uint16_t file;
    const char *path;
    uint8_t *header;                       /* the log's header blocks */
    struct tracelog_reader reader;
    struct dpm_field_map map;              /* the log's fields as event members */
    struct trace_values values;            /* the record delivered last */
    int events_only;                       /* dpm_stream_events_only: `values` is not kept */
    const struct dpm_window *window;       /* the records delivered are those in it (NULL: all) */
    uint64_t records;                      /* delivered so far */
    char problem[160];                     /* damage found while fetching blocks, or "" */
    int failed;
    uint64_t chunk_first, chunk_blocks;    /* the blocks in `chunk` */
    uint8_t chunk[CHUNK_BLOCKS * TRACELOG_BLOCK];
};

/* ---- blocks ---- */

/* Whether block `index`, just read into `block` (`n` bytes of it), is the
 * log's next record block but damaged: if so, says why in s->problem. */
static void check_block(struct dpm_stream *s, uint64_t index, const uint8_t *block, size_t n)
{
    const struct tracelog_block *b = (const struct tracelog_block *)block;
    uint64_t expected = index - s->reader.header->header_blocks;
    if (n >= 2 * sizeof(uint32_t) && (b->magic != TRACELOG_BLOCK_MAGIC || b->log_id != s->reader.header->log_id))
        return;                                   /* not this log's: the log ended before it */
    if (n < TRACELOG_BLOCK)                       /* too short to say whose: the file was cut */
        snprintf(s->problem, sizeof s->problem, "the log is cut short: block %" PRIu64 " has only %zu of its %d bytes",
                 index, n, TRACELOG_BLOCK);
    else if (b->sequence != expected)
        snprintf(s->problem, sizeof s->problem, "block %" PRIu64 " is numbered %" PRIu32 " where %" PRIu64
                 " was expected", index, b->sequence, expected);
    else if (b->used > TRACELOG_BLOCK - sizeof *b)
        snprintf(s->problem, sizeof s->problem, "block %" PRIu64 " says it holds %" PRIu32
                 " bytes of records, more than a block can", index, b->used);
}

/* Read the chunk of blocks that starts at `index`; 0 if there is no
 * whole block there (the end of the file, or an error, in s->problem). */
static int load_chunk(struct dpm_stream *s, uint64_t index)
{
    s->chunk_blocks = 0;
    ssize_t n;
    do
        n = pread(s->fd, s->chunk, sizeof s->chunk, (off_t)(index * TRACELOG_BLOCK));
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        snprintf(s->problem, sizeof s->problem, "block %" PRIu64 ": %s", index, strerror(errno));
        return 0;
    }
    s->chunk_first = index;
    s->chunk_blocks = (uint64_t)n / TRACELOG_BLOCK;
    if (s->chunk_blocks == 0 && n > 0)
        check_block(s, index, s->chunk, (size_t)n);
    return s->chunk_blocks > 0;
}

/* The reader's tracelog_fetch_fn: record block `index`, from the chunk
 * that holds it. A damaged block ends the log here, said at the end. */
static const uint8_t *fetch_block(void *context, uint64_t index)
{
    struct dpm_stream *s = context;
    if ((index < s->chunk_first || index >= s->chunk_first + s->chunk_blocks) && !load_chunk(s, index))
        return 0;
    const uint8_t *block = s->chunk + (index - s->chunk_first) * TRACELOG_BLOCK;
    check_block(s, index, block, TRACELOG_BLOCK);
    return s->problem[0] ? 0 : block;
}

/* ---- opening ---- */

/* Read `n` bytes at `offset` into buf; the count read, or -1. */
static ssize_t read_at(int fd, void *buf, size_t n, uint64_t offset)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = pread(fd, (uint8_t *)buf + done, n - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (ssize_t)done;
}

/* Read the log's header blocks into s->header; 0, or -1 with *e set. */
static int read_header(struct dpm_stream *s, struct dpm_error *e)
{
    uint8_t first[TRACELOG_BLOCK];
    ssize_t n = read_at(s->fd, first, sizeof first, 0);
    if (n < 0) {
        dpm_error_set(e, "%s: %s", s->path, strerror(errno));
        return -1;
    }
    if (n == 0) {
        dpm_error_set(e, "%s: empty: not a trace disk or log", s->path);
        return -1;
    }
    const struct tracelog_header *h = (const struct tracelog_header *)first;
    uint32_t blocks = 1;
    if (n == TRACELOG_BLOCK && memcmp(h->magic, TRACELOG_MAGIC, 8) == 0 && h->description_length != 0) {
        blocks = h->header_blocks;
        if (blocks == 0 || blocks > MAX_HEADER_BLOCKS) {
            dpm_error_set(e, "%s: a damaged log header (it says %" PRIu32 " header blocks)", s->path, blocks);
            return -1;
        }
    }
    s->header = malloc((size_t)blocks * TRACELOG_BLOCK);
    if (!s->header) {
        dpm_error_set(e, "%s: out of memory", s->path);
        return -1;
    }
    memcpy(s->header, first, (size_t)n);
    ssize_t rest = blocks > 1 ? read_at(s->fd, s->header + TRACELOG_BLOCK, (blocks - 1) * (size_t)TRACELOG_BLOCK,
                                        TRACELOG_BLOCK) : 0;
    if (rest < 0) {
        dpm_error_set(e, "%s: %s", s->path, strerror(errno));
        return -1;
    }
    if (blocks > 1 && (size_t)rest < (blocks - 1) * (size_t)TRACELOG_BLOCK) {
        dpm_error_set(e, "%s: the log header is cut short: the file ends inside its %" PRIu32 " header blocks",
                  s->path, blocks);
        return -1;
    }
    return (int)(n + rest);
}

/* Open the reader on the header; 0, or -1 with *e saying why the file is no log. */
static int open_reader(struct dpm_stream *s, uint64_t size, struct dpm_error *e)
{
    int err = tracelog_open_fetch(&s->reader, s->header, size, fetch_block, s);
    const struct tracelog_header *h = (const struct tracelog_header *)s->header;
    switch (err) {
    case 0:
        dpm_field_map_build(&s->map, &s->reader.layouts, s->reader.compiled);
        return 0;
    case TRACELOG_E_EMPTY:
        dpm_error_set(e, "%s: a trace disk with no log yet", s->path);
        break;
    case TRACELOG_E_SHORT:
        dpm_error_set(e, "%s: too short to be a trace disk or log (%" PRIu64 " bytes)", s->path, size);
        break;
    case TRACELOG_E_MAGIC:
        dpm_error_set(e, "%s: not a trace disk or log (no %s header)", s->path, TRACELOG_MAGIC);
        break;
    case TRACELOG_E_VERSION:
        dpm_error_set(e, "%s: a trace log of version %" PRIu32 "; this dpm reads version %d", s->path, h->version,
                  TRACELOG_VERSION);
        break;
    case TRACELOG_E_DESCRIPTION:
        dpm_error_set(e, "%s: its trace description does not parse: line %" PRIu32 ", column %" PRIu32 ": %s", s->path,
                  s->reader.description_error.line, s->reader.description_error.column,
                  s->reader.description_error.reason);
        break;
    default:
        dpm_error_set(e, "%s: a damaged log header", s->path);
        break;
    }
    return -1;
}

struct dpm_stream *dpm_stream_open(const char *path, uint16_t file, struct dpm_error *e)
{
    struct dpm_stream *s = calloc(1, sizeof *s);
    if (!s) {
        dpm_error_set(e, "%s: out of memory", path);
        return 0;
    }
    s->path = path;
    s->file = file;
    s->window = dpm_window_get();
    s->fd = open(path, O_RDONLY);
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) < 0) {
        dpm_error_set(e, "%s: %s", path, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        dpm_error_set(e, "%s: a directory, not a trace disk or log", path);
    } else {
        int size = read_header(s, e);
        if (size >= 0 && open_reader(s, (uint64_t)size, e) == 0)
            return s;
    }
    dpm_stream_close(s);
    return 0;
}

/* ---- reading ---- */

static int next_record(struct dpm_stream *s, struct dpm_event *ev, struct dpm_error *e);

int dpm_stream_next(struct dpm_stream *s, struct dpm_event *ev, struct dpm_error *e)
{
    int status;
    while ((status = next_record(s, ev, e)) == 1 && s->window && !dpm_window_holds(s->window, ev))
        if (ev->type == MT_CREATEPROCESS)
            dpm_window_note_name(ev);
    return status;
}

/* The log's next record, in the window or not. */
static int next_record(struct dpm_stream *s, struct dpm_event *ev, struct dpm_error *e)
{
    if (s->failed) {
        dpm_error_set(e, "%s: record %" PRIu64 ": the log cannot be read past here", s->path, s->records);
        return -1;
    }
    int status = 2;
    if (s->events_only) {
        const struct desc_layout *body;
        const uint8_t *fields;
        status = tracelog_next_whole(&s->reader, &body, &fields);
        if (status == 1)
            dpm_field_map_whole(&s->map, &s->reader.layouts, body, fields, ev);
    }
    if (status == 2 && (status = tracelog_next_values(&s->reader, &s->values)) == 1)
        dpm_field_map_event(&s->map, &s->reader.layouts, &s->values, ev);
    if (status == 1) {
        ev->file = s->file;
        ev->record = s->records;
        s->records++;
        return 1;
    }
    if (status == 0 && !s->problem[0])
        return 0;
    s->failed = 1;
    if (status == 0)
        dpm_error_set(e, "%s: record %" PRIu64 ": %s", s->path, s->records, s->problem);
    else if (status == TRACELOG_E_CHECKSUM)
        dpm_error_set(e, "%s: record %" PRIu64 ": block %" PRIu64 " is damaged: its checksum does not match its "
                      "contents", s->path, s->records, s->reader.index);
    else
        dpm_error_set(e, "%s: record %" PRIu64 ": a damaged entry in block %" PRIu64, s->path, s->records,
                  s->reader.index);
    return -1;
}

void dpm_stream_events_only(struct dpm_stream *s)
{
    s->events_only = 1;
}

uint64_t dpm_stream_lost(const struct dpm_stream *s)
{
    return s->reader.lost;
}

uint64_t dpm_stream_block(const struct dpm_stream *s)
{
    return s->reader.index;
}

void dpm_stream_seek(struct dpm_stream *s, uint64_t block, uint64_t record)
{
    s->reader.index = block;
    s->reader.offset = 0;
    s->reader.records = record;
    s->records = record;
}

const struct tracelog_reader *dpm_stream_reader(const struct dpm_stream *s)
{
    return &s->reader;
}

const struct trace_values *dpm_stream_values(const struct dpm_stream *s)
{
    return &s->values;
}

void dpm_stream_close(struct dpm_stream *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->header);
    free(s);
}
