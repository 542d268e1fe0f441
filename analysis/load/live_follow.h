/*
 * analysis/load/live_follow.h — following a filter's live stream
 * (meter/tracelog.h, "the live stream": a log's blocks as the filter writes
 * them, the block being filled coming again each time it grows) while the
 * cluster runs: the stream file is read as it grows, like `tail -f`, and
 * each record is handed on once to a sink (`dpm live`: commands/cmd_live.c;
 * its displays: models/live_view.h).
 */
#ifndef ANALYSIS_LOAD_LIVE_FOLLOW_H
#define ANALYSIS_LOAD_LIVE_FOLLOW_H

#include <stdint.h>

#include "load/event.h"
#include "load/fields.h"
#include "tracelog.h"

/* What the follower calls: a new log began (its header read), and each
 * record of it not yet handed on. */
struct live_sink {
    void (*begin)(void *context, const struct tracelog_header *header);
    void (*record)(void *context, const struct dpm_event *ev);
    void *context;
};

struct live_follower {
    const char *path;
    int fd;
    uint64_t blocks_read;          /* whole blocks of the file taken so far */
    uint8_t *header;               /* the current log's header blocks */
    uint32_t header_blocks, header_have;
    int have_log;                  /* a whole header was read and opened */
    struct tracelog_reader reader; /* on `header`; its record blocks come from `block` */
    struct dpm_field_map map;
    int started;                   /* a record block of this log was seen */
    uint32_t sequence;             /* the record block being read */
    uint32_t consumed;             /* bytes of its entries already handed on */
    uint64_t records;              /* handed on, in this log (numbered from 0 in messages) */
    uint64_t lost;                 /* the log's own count, as its latest block says */
    uint64_t blocks_missing;       /* record blocks the stream skipped */
    uint32_t logs;                 /* logs begun in the stream */
    _Alignas(uint64_t) uint8_t block[TRACELOG_BLOCK];   /* read as a struct tracelog_block */
};

/* Open the stream file `path` (it may still be empty). 0, or -1 with *e set. */
int live_open(struct live_follower *l, const char *path, struct dpm_error *e);
/* Take the whole blocks written since the last call (`most` of them at
 * most; 0: all) and hand on the new records to the sink. 0, or -1 with *e
 * set ("FILE: record N: what", or "FILE: block K of the stream: what"). */
int live_poll(struct live_follower *l, const struct live_sink *sink, uint64_t most, struct dpm_error *e);
void live_close(struct live_follower *l);

#endif
