/*
 * fuzz_tracelog.c — libFuzzer target: reading trace logs, as the host tools
 * and the analyzer read whatever file they are given. The input is the
 * bytes of a log file (or of a live stream, for the last check):
 *   - meter's reader, the log in memory (tracelog_open,
 *     tracelog_next_values): every record's kept fields are fields of its
 *     layout, each value fits its field's length, the record laid out again
 *     (tracelog_record_bytes) stays within bounds, and the entries' bytes
 *     fit in the record blocks read; when the log's description is this
 *     build's own, tracelog_next reads the same records;
 *   - the same reader fetching block by block (tracelog_open_fetch) reads
 *     the same records;
 *   - the analyzer's reader (analysis/load/stream.c, dpm_stream_*), the input
 *     as a file: it opens the log when meter's reader does, delivers the
 *     same records, and reports damage only where meter's reader stops;
 *     the whole trace (analysis/load/trace.c, dpm_trace_load) loads exactly
 *     those records, and its processes list every event with a pid once;
 *   - the input as a live stream (tracelog_unstream): the log rebuilt from
 *     it is whole blocks within the input, opens (or has a description
 *     that does not parse) and reads as above.
 * Each check runs on the input as it is and again with every block that
 * has the record-block magic given its checksum (as a writer would), so
 * that a mutation reaches the entry checks behind the checksum.
 * The analyzer reads files by name, so the input is written to a memory
 * file (memfd) named by /proc/self/fd/N; the analyzer is not changed.
 * Run by scripts/fuzz.py (README, "Fuzzing").
 */
#define _GNU_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load/event.h"
#include "tracelog.h"

#define REQUIRE(cond) ((cond) ? (void)0 : fail(__FILE__, __LINE__, #cond))

/* Stop the run with `what`: libFuzzer saves the input as a crash. */
static void fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "fuzz_tracelog: %s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

/* The memory file the analyzer reads the input from, and its name. */
static int memory_file = -1;
static char memory_path[64];

/* Make the memory file once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    memory_file = memfd_create("fuzz_tracelog", 0);
    REQUIRE(memory_file >= 0);
    snprintf(memory_path, sizeof memory_path, "/proc/self/fd/%d", memory_file);
    return 0;
}

/* The log being read block by block: its bytes. */
struct fetched_log {
    const uint8_t *bytes;
    uint64_t size;
};

/* tracelog_fetch_fn over a fetched_log: block `index`, if it is whole. */
static const uint8_t *fetch_block(void *context, uint64_t index)
{
    const struct fetched_log *log = context;
    return (index + 1) * TRACELOG_BLOCK <= log->size ? log->bytes + index * TRACELOG_BLOCK : 0;
}

/* Record v read by r must be sound: its kept fields exist, each value
 * fits its field, and laid out again (in as many bytes as its fields
 * reach: tracelog_record_bytes clears all it is given) it is as long as its
 * fields reach. Returns the entry's bytes in the log. */
static uint32_t check_values(const struct tracelog_reader *r, const struct trace_values *v)
{
    static uint8_t laid_out[2 * 65536 + 64];
    const struct desc_layout *h = description_layout(&r->layouts, 0);
    uint32_t body_at = description_header_size(h), end = 0;
    REQUIRE(v->body != 0 && v->nfields <= METER_MAX_FIELDS);
    REQUIRE(v->nfields == 32 || (v->fields >> v->nfields) == 0);
    uint32_t bytes = sizeof(struct tracelog_entry);
    for (uint32_t i = 0; i < v->nfields; i++) {
        const struct desc_field *f = tracelog_field(r, v, i);
        uint32_t at = f->offset + (i < h->nfields ? 0 : body_at);
        end = at + f->length > end ? at + f->length : end;
        if (!(v->fields & (1u << i))) {
            REQUIRE(v->values[i] == 0);
            continue;
        }
        REQUIRE(f->length == 8 || (v->values[i] >> (8 * f->length)) == 0);
        bytes += f->length;
    }
    REQUIRE(end <= sizeof laid_out && tracelog_record_bytes(r, v, laid_out, end) == end);
    return bytes;
}

/* Whether two records read from the same log are the same. */
static int same_values(const struct trace_values *a, const struct trace_values *b)
{
    if (a->type != b->type || a->fields != b->fields || a->nfields != b->nfields)
        return 0;
    for (uint32_t i = 0; i < a->nfields; i++)
        if (a->values[i] != b->values[i])
            return 0;
    return 1;
}

/* Read log[0..size) to its end with meter's reader, in memory and block
 * by block, checking every record; returns the number of records, and the
 * reader's last status in *status (0: the end, else an error). */
static uint64_t read_log(const uint8_t *log, uint64_t size, int *status)
{
    static struct tracelog_reader memory, fetched, compiled;
    struct trace_values v, w;
    struct meter_record record;
    struct fetched_log source = { log, size };

    *status = tracelog_open(&memory, log, size);
    REQUIRE(tracelog_open_fetch(&fetched, log, size, fetch_block, &source) == *status);
    REQUIRE(tracelog_open(&compiled, log, size) == *status);
    if (*status != 0)
        return 0;
    uint64_t header_blocks = memory.header->header_blocks, blocks = tracelog_blocks(&memory);
    REQUIRE(blocks >= header_blocks && blocks * TRACELOG_BLOCK <= size && tracelog_blocks(&fetched) == blocks);

    uint64_t records = 0, entry_bytes = 0;
    for (;;) {
        int got = tracelog_next_values(&memory, &v);
        REQUIRE(tracelog_next_values(&fetched, &w) == got);
        if (memory.compiled) {
            int same = tracelog_next(&compiled, &record);
            REQUIRE(same == got);
            REQUIRE(got != 1 || (record.fields == v.fields && record.header.traceType == v.type));
        }
        if (got != 1) {
            *status = got;
            break;
        }
        REQUIRE(same_values(&v, &w));
        entry_bytes += check_values(&memory, &v);
        records++;
    }
    REQUIRE(memory.records == records && memory.lost == fetched.lost);
    REQUIRE(memory.index <= blocks);
    REQUIRE(entry_bytes <= (memory.index + 1 - header_blocks) * (TRACELOG_BLOCK - sizeof(struct tracelog_block)));
    return records;
}

/* The analyzer's reader on the input as a file, record by record beside
 * meter's reader in memory, then the whole trace loaded. */
static void read_as_analyzer(const uint8_t *data, size_t size)
{
    static struct tracelog_reader memory;
    struct trace_values v;
    struct dpm_event ev;
    struct dpm_error e;

    REQUIRE(ftruncate(memory_file, 0) == 0);
    REQUIRE(pwrite(memory_file, data, size, 0) == (ssize_t)size);
    int opened = tracelog_open(&memory, data, size);
    struct dpm_stream *s = dpm_stream_open(memory_path, 0, &e);
    REQUIRE((s != 0) == (opened == 0 && memory.header->header_blocks <= 64));
    if (!s)
        return;
    uint64_t records = 0;
    int got, analyzer;
    do {
        got = tracelog_next_values(&memory, &v);
        analyzer = dpm_stream_next(s, &ev, &e);
        if (got == 1) {
            REQUIRE(analyzer == 1 && same_values(&v, dpm_stream_values(s)) && ev.record == records);
            records++;
        } else if (got == 0) {
            REQUIRE(analyzer == 0 || analyzer == -1);   /* -1: a damaged block where meter's reader ends */
        } else {
            REQUIRE(analyzer == -1);
        }
    } while (got == 1);
    dpm_stream_close(s);

    struct dpm_trace t;
    const char *paths[] = { memory_path };
    int loaded = dpm_trace_load(&t, paths, 1, &e);
    REQUIRE((loaded == 0) == (analyzer == 0));
    if (loaded != 0)
        return;
    REQUIRE(t.nevents == records && t.lost == memory.lost);
    size_t with_pid = 0, listed = 0;
    for (size_t i = 0; i < t.nevents; i++)
        with_pid += (t.events[i].present & EV_PID) != 0;
    for (size_t i = 0; i < t.nprocesses; i++) {
        const struct dpm_process *p = &t.processes[i];
        REQUIRE(i == 0 || t.processes[i - 1].pid < p->pid);
        REQUIRE(p->first == listed);
        for (uint32_t k = 0; k < p->count; k++)
            REQUIRE(t.by_process[p->first + k] < t.nevents && t.events[t.by_process[p->first + k]].pid == p->pid);
        listed += p->count;
    }
    REQUIRE(listed == with_pid);
    dpm_trace_free(&t);
}

/* A copy of the input in which every whole block after the first that
 * begins with the record-block magic has its checksum (meter/tracelog.h). */
static uint8_t *sealed_copy(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    REQUIRE(copy != 0);
    memcpy(copy, data, size);
    for (size_t at = TRACELOG_BLOCK; at + TRACELOG_BLOCK <= size; at += TRACELOG_BLOCK) {
        struct tracelog_block b;
        memcpy(&b, copy + at, sizeof b);
        if (b.magic != TRACELOG_BLOCK_MAGIC)
            continue;
        b.checksum = tracelog_block_checksum(copy + at);
        memcpy(copy + at, &b, sizeof b);
    }
    return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int status;
    read_log(data, size, &status);
    read_as_analyzer(data, size);
    uint8_t *sealed = sealed_copy(data, size);
    read_log(sealed, size, &status);
    read_as_analyzer(sealed, size);
    free(sealed);

    uint8_t *rebuilt = malloc(size ? size : 1);
    uint32_t logs;
    REQUIRE(rebuilt != 0);
    uint64_t length = tracelog_unstream(data, size, rebuilt, size, &logs);
    REQUIRE(length <= size && length % TRACELOG_BLOCK == 0 && (logs > 0 || length == 0));
    if (length > 0) {
        read_log(rebuilt, length, &status);
        REQUIRE(status != TRACELOG_E_SHORT && status != TRACELOG_E_MAGIC && status != TRACELOG_E_VERSION &&
                status != TRACELOG_E_HEADER && status != TRACELOG_E_EMPTY);
    }
    free(rebuilt);
    return 0;
}
