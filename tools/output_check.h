/*
 * output_check.h — whether a host tool may write a file: what dmfs,
 * dmtrace and dpm ask before they create or replace an output, so that
 * none of them writes over one of its own inputs or replaces a device.
 */
#ifndef OUTPUT_CHECK_H
#define OUTPUT_CHECK_H

#include <stddef.h>

/* Whether `out` may be written by a tool that reads the files `inputs`
 * (n of them; a null entry is skipped): 0 if it does not exist yet or is a
 * regular file other than every input; else -1 with the reason in
 * why[0..cap): "is the input IN" when it is the same file as input IN
 * (the same device and inode, so also through a symbolic or hard link),
 * "is not a regular file" for a directory, a device, a FIFO or a socket.
 * The caller prints `TOOL: OUT: ` and the reason. */
int output_check(const char *out, const char *const *inputs, size_t n, char *why, size_t cap);

#endif
