/*
 * analysis/report/sections.h — what the files of `dpm report` share: the
 * analyses of the logs, done once, and the page's sections, each written by a
 * function of its own (commands/cmd_report.c: the command and the page;
 * report/tables.c: the statistics' tables; report/pictures.c: the
 * communication graph, the traffic matrix and the message rate;
 * report/parallelism.c: parallelism and the critical path;
 * report/causality_paths.c: causality; report/spacetime.c: the clocks and
 * the space-time diagram; report/waiting.c: why processes waited).
 */
#ifndef ANALYSIS_REPORT_SECTIONS_H
#define ANALYSIS_REPORT_SECTIONS_H

#include <stdio.h>

#include "commands/graph_options.h"
#include "load/programs.h"
#include "models/stats.h"

/* The logs read once, and what every section reads. */
struct report_input {
    char **logs;
    int nlogs;
    struct graph_input graph;      /* the trace and its history graph */
    struct clock_options clock_options;   /* --min-delay, --reference */
    struct clock_input clocks;     /* the arrivals and the clock offsets */
    struct stats stats;            /* the statistics, from the trace's events in log order */
    uint32_t *machine;             /* the placement for parallelism's steps 2 and 3 and the path */
    char placement[512];           /* how it was chosen */
    struct delay_table delays;
    struct program_symbols programs;
    const char *servers, *system;  /* --server and --system, or NULL */
};

/* report/tables.c: the statistics of `dpm stats`, table by table. */
void report_stats_tables(FILE *f, const struct report_input *r);

/* report/pictures.c */
void report_communication_graph(FILE *f, const struct stats *st);
void report_traffic_heatmap(FILE *f, const struct stats *st);
void report_message_rate(FILE *f, const struct dpm_trace *t);

/* report/parallelism.c and report/causality_paths.c: each 0, or an exit
 * status after saying why on stderr. */
int report_parallelism(FILE *f, const struct report_input *r);
int report_critical_path(FILE *f, const struct report_input *r);
int report_causality(FILE *f, const struct report_input *r);
int report_clocks(FILE *f, const struct report_input *r);
int report_spacetime(FILE *f, const struct report_input *r);
int report_waitstates(FILE *f, const struct report_input *r);

#endif
