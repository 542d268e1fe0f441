/*
 * live.h — `dpm live`: following a filter's live stream (meter/tracelog.h,
 * "the live stream": a log's blocks as the filter writes them, the block
 * being filled coming again each time it grows) while the cluster runs,
 * and DPM's real-time displays of it.
 *
 *   live_follow.c  reads the stream file as it grows, like `tail -f`, and
 *                  hands on each record once;
 *   live_view.c    the figures of each interval and their drawing: the
 *                  traffic matrix, per-process rates and queue lengths,
 *                  their change (phase changes), a history line;
 *   live.c         the command: options, the loop, the frames.
 */
#ifndef ANALYSIS_LIVE_H
#define ANALYSIS_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "fields.h"
#include "tracelog.h"
#include "stats.h"

/* ---- the follower (live_follow.c) ---- */

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

/* ---- the figures (live_view.c) ---- */

#define LIVE_MACHINES 256
#define LIVE_HISTORY 120           /* frames the history line remembers */

/* Which figure the history line follows. */
enum live_figure_kind { FIGURE_TOTAL_RATE, FIGURE_PROCESS_RATE, FIGURE_PROCESS_QUEUE };

/* Each process's figures at the end of the previous interval. */
struct live_before {
    uint64_t sent, received;       /* cumulative, as stats counts them */
    double send_rate, receive_rate;
};

struct live_view {
    struct stats stats;            /* cumulative, as `dpm stats` counts (never finished) */
    struct live_before *before;    /* [stats.nprocesses] */
    size_t before_capacity;
    uint64_t *pair_before;         /* [stats.npairs * 2]: messages and bytes at the previous frame */
    size_t pair_before_capacity;
    uint64_t now[LIVE_MACHINES];   /* each machine's latest TIME */
    uint64_t frame_start[LIVE_MACHINES];
    uint8_t machine_seen[LIVE_MACHINES];
    uint64_t records_before;
    /* options */
    unsigned top;                  /* pairs shown */
    double threshold;              /* % change of a rate that marks a phase change */
    enum live_figure_kind figure;
    const char *figure_process;    /* its process, by name or M.S.G pid */
    /* the history line: the figure at each frame, the last LIVE_HISTORY */
    double history[LIVE_HISTORY];
    unsigned nhistory, history_next;
    uint32_t frames;
    struct tracelog_header header; /* the current log's */
    int have_header;
};

/* Start with the options (figure: "rate", "rate:PROCESS" or
 * "queue:PROCESS"); 0, or -1 if the figure is not one of those. */
int live_view_init(struct live_view *v, unsigned top, double threshold, const char *figure);
void live_view_free(struct live_view *v);
/* The follower's sink: a new log starts everything over; a record counts. */
struct live_sink live_view_sink(struct live_view *v);
/* Draw the frame of the interval since the previous one and start the
 * next interval. `f` of the follower for the stream's own figures. */
void live_view_frame(struct live_view *v, const struct live_follower *f, FILE *out);

#endif
