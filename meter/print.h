/*
 * meter/print.h — a trace record as one line of text, `TYPE field=value ...`:
 * what `dmtrace dump` and `dpm dump` both print. Host only (stdio), beside
 * tracelog.h's reader, so that the two tools print records one way.
 */
#ifndef METER_PRINT_H
#define METER_PRINT_H

#include <stdint.h>
#include <stdio.h>
#include "tracelog.h"

/* The record v read from r: its type's name, then each field of `shown`
 * (bit i: the i-th field, the header's first) in its display base: 0x
 * hexadecimal, or decimal, with a sign for the fields this build's
 * record.h declares signed (tracelog_field_signed). Ends the line. */
void tracelog_print_record(FILE *out, const struct tracelog_reader *r, const struct trace_values *v, uint32_t shown);

#endif
