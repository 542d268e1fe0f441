/*
 * analysis/models/shiviz_log.h — a trace as a log that ShiViz
 * (https://bestchai.bitbucket.io/shiviz/; Beschastnikh et al., "Debugging
 * distributed systems", CACM 59(8), 2016) draws as a space-time diagram
 * from vector timestamps alone (models/vclock.h).
 *
 * One line per node of the history graph, in a topological order:
 *     HOST {"HOST":N,"OTHER":M,...} EVENT
 * HOST is the process's label with its space made '@' ("ri@0.8.1") and any
 * character but letters, digits and _ . @ : - made '_'; the clock holds the
 * node's vector timestamp, its components that are not 0, each named by its
 * process's HOST; EVENT says what the node is (start, SEND to, RECEIVE
 * from, end), its message id, its machine and TIME and its corrected time
 * (models/clocks.h), and never holds a brace. ShiViz's rules hold: each
 * host's own component counts its events from 1 in steps of 1, and every
 * component names a host of the log. The regular expression to give
 * ShiViz, SHIVIZ_REGEX, reads it (and no delimiter).
 */
#ifndef ANALYSIS_MODELS_SHIVIZ_LOG_H
#define ANALYSIS_MODELS_SHIVIZ_LOG_H

#include <stdio.h>

#include "models/clocks.h"
#include "models/history.h"

#define SHIVIZ_REGEX "(?<host>\\S+) (?<clock>\\{[^}]*\\}) (?<event>.*)"

/* Write the log of h into f. 0, or -1 (no memory; write errors are f's). */
int shiviz_write(FILE *f, const struct history *h, const struct clock_model *c);

#endif
