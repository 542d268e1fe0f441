/*
 * analysis/models/scenario.h — the scenario language of `dpm generate`: a
 * script of processes and their steps, run by the model of
 * models/simulate.h into a trace log whose statistics can be worked out by
 * hand. `dpm generate --help` documents the language.
 */
#ifndef ANALYSIS_MODELS_SCENARIO_H
#define ANALYSIS_MODELS_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "load/event.h"
#include "models/simulate.h"

/* Run the scenario text[0..len) (from the file `path`, named in
 * messages) `repeat` times (its declarations only the first time) in s;
 * 0, or -1 with *e set ("PATH:LINE: what is wrong"). */
int scenario_run(struct simulation *s, const char *path, const char *text, size_t len, uint64_t repeat,
                 struct dpm_error *e);

#endif
