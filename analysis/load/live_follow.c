/*
 * analysis/load/live_follow.c — following a live stream file as it grows
 * (load/live_follow.h).
 *
 * The file is read a whole block at a time from where the last call
 * stopped; a block cut short at the end is left for the next call, when
 * the rest of it has been written. A block that begins a log (its magic)
 * starts a new log: its header blocks are gathered and opened with meter/'s
 * reader, which parses the description. A record block is read with that
 * reader, positioned at the first entry not yet handed on: the block being
 * filled comes again each time it grows, so a block of the sequence being
 * read gives only its entries past those already taken; a later sequence
 * starts from its first entry; an earlier one is an old copy, skipped.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/live_follow.h"
#include "load/window.h"

#define MAX_HEADER_BLOCKS 64       /* as for a log file (load/stream.c) */

int live_open(struct live_follower *l, const char *path, struct dpm_error *e)
{
    memset(l, 0, sizeof *l);
    l->path = path;
    l->fd = open(path, O_RDONLY);
    if (l->fd < 0) {
        dpm_error_set(e, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Close the stream file and free the header. */
void live_close(struct live_follower *l)
{
    if (l->fd >= 0)
        close(l->fd);
    free(l->header);
    l->header = 0;
    l->fd = -1;
}

/* The reader's tracelog_fetch_fn: only the record block being read. */
static const uint8_t *current_block(void *context, uint64_t index)
{
    struct live_follower *l = context;
    return index == l->header_blocks + (uint64_t)l->sequence ? l->block : 0;
}

/* A block that begins a log: start gathering its header. 0, or -1 with *e. */
static int begin_header(struct live_follower *l, const uint8_t *block, struct dpm_error *e)
{
    const struct tracelog_header *h = (const struct tracelog_header *)block;
    if (h->header_blocks == 0 || h->header_blocks > MAX_HEADER_BLOCKS) {
        dpm_error_set(e, "%s: block %" PRIu64 " of the stream: a damaged log header (it says %" PRIu32
                      " header blocks)", l->path, l->blocks_read, h->header_blocks);
        return -1;
    }
    free(l->header);
    l->header = malloc((size_t)h->header_blocks * TRACELOG_BLOCK);
    if (!l->header) {
        dpm_error_set(e, "%s: out of memory", l->path);
        return -1;
    }
    l->header_blocks = h->header_blocks;
    l->header_have = 0;
    l->have_log = 0;
    return 0;
}

/* The header is whole: open the log it begins and tell the sink. 0, or -1 with *e. */
static int open_log(struct live_follower *l, const struct live_sink *sink, struct dpm_error *e)
{
    int err = tracelog_open_fetch(&l->reader, l->header, (uint64_t)l->header_blocks * TRACELOG_BLOCK, current_block, l);
    if (err == TRACELOG_E_DESCRIPTION) {
        dpm_error_set(e, "%s: block %" PRIu64 " of the stream: its trace description does not parse: line %" PRIu32
                      ", column %" PRIu32 ": %s", l->path, l->blocks_read, l->reader.description_error.line,
                      l->reader.description_error.column, l->reader.description_error.reason);
        return -1;
    }
    if (err != 0) {
        dpm_error_set(e, "%s: block %" PRIu64 " of the stream: a damaged log header (%s)", l->path, l->blocks_read,
                      err == TRACELOG_E_VERSION ? "another version" : "its fields disagree");
        return -1;
    }
    dpm_field_map_build(&l->map, &l->reader.layouts, l->reader.compiled);
    l->have_log = 1;
    l->started = 0;
    l->sequence = 0;
    l->consumed = 0;
    l->records = 0;
    l->lost = 0;
    l->logs++;
    sink->begin(sink->context, l->reader.header);
    return 0;
}

/* Hand on the entries of l->block past those taken. 0, or -1 with *e. */
static int read_entries(struct live_follower *l, const struct live_sink *sink, struct dpm_error *e)
{
    const struct dpm_window *window = dpm_window_get();
    struct trace_values values;
    struct dpm_event ev;
    int status;
    l->reader.index = l->header_blocks + (uint64_t)l->sequence;
    l->reader.offset = l->consumed;
    l->reader.verified = 0;              /* l->block has new contents: its checksum is checked again */
    while ((status = tracelog_next_values(&l->reader, &values)) == 1) {
        l->consumed = l->reader.offset;
        dpm_field_map_event(&l->map, &l->reader.layouts, &values, &ev);
        ev.record = l->records++;
        if (!window || dpm_window_holds(window, &ev))
            sink->record(sink->context, &ev);
    }
    l->lost = ((const struct tracelog_block *)l->block)->lost;
    if (status == TRACELOG_E_CHECKSUM) {
        dpm_error_set(e, "%s: record %" PRIu64 ": block %" PRIu64 " of the stream is damaged: its checksum does not "
                      "match its contents", l->path, l->records, l->blocks_read);
        return -1;
    }
    if (status < 0) {
        dpm_error_set(e, "%s: record %" PRIu64 ": a damaged entry in block %" PRIu64 " of the stream", l->path,
                      l->records, l->blocks_read);
        return -1;
    }
    return 0;
}

/* A record block of the stream. 0, or -1 with *e. */
static int record_block(struct live_follower *l, const uint8_t *block, const struct live_sink *sink,
                        struct dpm_error *e)
{
    const struct tracelog_block *b = (const struct tracelog_block *)block;
    if (b->magic != TRACELOG_BLOCK_MAGIC || !l->have_log) {
        dpm_error_set(e, "%s: record %" PRIu64 ": block %" PRIu64 " of the stream is %s", l->path, l->records,
                      l->blocks_read, b->magic != TRACELOG_BLOCK_MAGIC ? "neither a log header nor a record block"
                      : "a record block before any log header");
        return -1;
    }
    if (b->used > TRACELOG_BLOCK - sizeof *b) {
        dpm_error_set(e, "%s: record %" PRIu64 ": block %" PRIu64 " of the stream says it holds %" PRIu32
                      " bytes of records, more than a block can", l->path, l->records, l->blocks_read, b->used);
        return -1;
    }
    if (b->log_id != l->reader.header->log_id || (l->started && b->sequence < l->sequence))
        return 0;                        /* another log's, or an older copy */
    if (!l->started || b->sequence > l->sequence) {
        l->blocks_missing += b->sequence - (l->started ? l->sequence + 1 : 0);
        l->sequence = b->sequence;
        l->consumed = 0;
        l->started = 1;
    }
    memcpy(l->block, block, TRACELOG_BLOCK);
    return read_entries(l, sink, e);
}

/* One whole block of the stream. 0, or -1 with *e. */
static int take_block(struct live_follower *l, const uint8_t *block, const struct live_sink *sink,
                      struct dpm_error *e)
{
    if (l->header && l->header_have < l->header_blocks) {
        memcpy(l->header + (size_t)l->header_have++ * TRACELOG_BLOCK, block, TRACELOG_BLOCK);
        return l->header_have == l->header_blocks ? open_log(l, sink, e) : 0;
    }
    if (memcmp(block, TRACELOG_MAGIC, 8) == 0) {
        if (begin_header(l, block, e) < 0)
            return -1;
        return take_block(l, block, sink, e);
    }
    return record_block(l, block, sink, e);
}

/* Whether the file became shorter than what was read: the launcher empties
 * it when a new cluster starts, and the stream starts over. */
static int emptied(const struct live_follower *l)
{
    struct stat st;
    return fstat(l->fd, &st) == 0 && (uint64_t)st.st_size < l->blocks_read * TRACELOG_BLOCK;
}

/* Take the whole blocks written since the last call (load/live_follow.h). */
int live_poll(struct live_follower *l, const struct live_sink *sink, uint64_t most, struct dpm_error *e)
{
    _Alignas(uint64_t) uint8_t block[TRACELOG_BLOCK];
    if (emptied(l)) {
        free(l->header);
        l->header = 0;
        l->have_log = 0;
        l->blocks_read = 0;
    }
    for (uint64_t taken = 0; most == 0 || taken < most; taken++) {
        ssize_t n = pread(l->fd, block, sizeof block, (off_t)(l->blocks_read * TRACELOG_BLOCK));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            dpm_error_set(e, "%s: %s", l->path, strerror(errno));
            return -1;
        }
        if (n < TRACELOG_BLOCK)
            return 0;                    /* the rest is still being written */
        if (take_block(l, block, sink, e) < 0)
            return -1;
        l->blocks_read++;
    }
    return 0;
}
