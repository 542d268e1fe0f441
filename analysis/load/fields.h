/*
 * analysis/load/fields.h — a trace log's records as struct dpm_event
 * (load/event.h): which field of which layout of the log's own description
 * lands in which member of the event, by the fields' names
 * (meter/record.h). Worked out once per log, when its description is known,
 * so that a record costs a table walk and no name lookup. The streaming
 * reader (load/stream.c) and the live stream's follower
 * (load/live_follow.c) both read records through it.
 */
#ifndef ANALYSIS_LOAD_FIELDS_H
#define ANALYSIS_LOAD_FIELDS_H

#include <stdint.h>

#include "load/event.h"
#include "tracelog.h"

/* Where a field of a log's layout goes in struct dpm_event: at `offset`,
 * as a number of `size` bytes (2, 4 or 8; 0 for the halves of the
 * program's name), with bit `present`; `is_signed` fields are sign-extended from
 * their length in the log. */
struct field_destination {
    uint16_t offset;
    uint8_t size, is_signed;
    uint32_t present;
};

/* For one layout of the log: the event type and, for each of a record's
 * fields (the header's, then the body's), where it goes and its length. */
struct field_layout_map {
    uint32_t type;
    uint32_t nfields;
    struct field_destination to[METER_MAX_FIELDS];
    uint8_t length[METER_MAX_FIELDS];
    uint16_t at[METER_MAX_FIELDS];     /* where each field is in an entry that keeps them all */
};

/* The maps of every layout of a description, by the layout's index in it. */
struct dpm_field_map {
    struct field_layout_map layout[DESC_MAX_LAYOUTS];
    /* The log's description is this build's own and decoding its records
     * by record.h's structs gives exactly what the name map gives (checked
     * once per log on a record of distinct bytes per field): whole records
     * then take that quicker way. */
    int compiled;
};

/* Work out the map of description d (a log's, as its reader parsed it);
 * `compiled`: the reader found d to be this build's own description. */
void dpm_field_map_build(struct dpm_field_map *m, const struct description *d, int compiled);
/* The record v, read by tracelog_next_values from a log of description d,
 * as an event (its `file` and `record` left 0 for the caller). */
void dpm_field_map_event(const struct dpm_field_map *m, const struct description *d, const struct trace_values *v,
                         struct dpm_event *ev);
/* The same for a record kept whole, straight from its fields' bytes (what
 * tracelog_next_whole gives: `body` is its layout in d), with no value
 * array in between: the analyzer's common case, made quick. */
void dpm_field_map_whole(const struct dpm_field_map *m, const struct description *d, const struct desc_layout *body,
                         const uint8_t *fields, struct dpm_event *ev);

#endif
