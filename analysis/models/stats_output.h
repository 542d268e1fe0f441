/*
 * analysis/models/stats_output.h — the communication statistics
 * (models/stats.h) as a text report and as CSV tables: what `dpm stats`
 * prints and what `dpm stats --csv` and `dpm export --csv` write.
 */
#ifndef ANALYSIS_MODELS_STATS_OUTPUT_H
#define ANALYSIS_MODELS_STATS_OUTPUT_H

#include <stdio.h>

#include "models/stats.h"

/* The whole report, section by section (see `dpm stats --help`). */
void report_text(FILE *out, const struct stats *st, char *const *paths, int npaths);
/* The tables as CSV files in directory `dir` (made if missing); 0, or -1
 * with *e naming the file that could not be written. */
int report_csv(const char *dir, const struct stats *st, struct dpm_error *e);

#endif
