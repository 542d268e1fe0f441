/*
 * analysis/models/live_view.h — DPM's real-time displays of a live stream
 * (`dpm live`, commands/cmd_live.c): the figures of each interval and their
 * drawing: the traffic matrix, per-process rates and queue lengths, their
 * change (phase changes), a history line. Fed record by record by the
 * follower (load/live_follow.h).
 */
#ifndef ANALYSIS_MODELS_LIVE_VIEW_H
#define ANALYSIS_MODELS_LIVE_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "load/live_follow.h"
#include "models/stats.h"
#include "tracelog.h"

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
