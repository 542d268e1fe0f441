/*
 * analysis/models/delays.c — the delivery-time tables of parallelism's step
 * 2 (thesis §5.2.3; the thesis's own is Fig. 5.11), one a network: how long
 * a message of a given size takes from SEND to RECEIVE, on one machine and
 * between two. A table is measured by a ping-pong benchmark or built from
 * published measurements, not taken from the trace, so that a placement or
 * a network that was never run can be predicted. The networks shipped with
 * dpm are files in analysis/networks/, compiled in (scripts/mknetworks.sh);
 * any other is read from its file. Their format is docs/analyzer.md's
 * "Networks".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/parallel.h"

/* The shipped network `here`: this system's table (its file says where it
 * came from). Its text is part of dpm, and the tests read every shipped
 * network: one that does not parse is a broken build. */
void delay_table_default(struct delay_table *d)
{
    char err[512];
    if (delay_table_network(d, "here", err, sizeof err) < 0) {
        fprintf(stderr, "dpm: the shipped network `here`: %s\n", err);
        exit(1);
    }
}

/* The network `what` (models/parallel.h): a shipped one, or a file. */
int delay_table_network(struct delay_table *d, const char *what, char *err, size_t cap)
{
    if (strchr(what, '/') || strchr(what, '.'))
        return delay_table_read(d, what, err, cap);
    for (size_t i = 0; i < shipped_network_count; i++) {
        if (strcmp(shipped_networks[i].name, what) != 0)
            continue;
        int status = delay_table_parse(d, shipped_networks[i].text, shipped_networks[i].path, err, cap);
        snprintf(d->name, sizeof d->name, "%s", what);
        return status;
    }
    int n = snprintf(err, cap, "no shipped network of that name (");
    for (size_t i = 0; i < shipped_network_count && n >= 0 && (size_t)n < cap; i++)
        n += snprintf(err + n, cap - (size_t)n, "%s%s", i ? ", " : "", shipped_networks[i].name);
    if (n >= 0 && (size_t)n < cap)
        snprintf(err + n, cap - (size_t)n, "), nor a file: a file's path holds a '/' or a '.'");
    return -2;
}

/* Read the network file `path` whole and parse it (models/parallel.h). */
int delay_table_read(struct delay_table *d, const char *path, char *err, size_t cap)
{
    FILE *f = fopen(path, "r");
    char *text = 0;
    size_t size = 0, used = 0;
    if (!f) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    for (;;) {
        if (used + 4096 + 1 > size) {
            char *bigger = realloc(text, size = 2 * size + 4096 + 1);
            if (!bigger) {
                snprintf(err, cap, "%s: out of memory", path);
                free(text);
                fclose(f);
                return -1;
            }
            text = bigger;
        }
        size_t got = fread(text + used, 1, size - used - 1, f);
        used += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f);
    fclose(f);
    text[used] = 0;
    int status = failed ? -1 : delay_table_parse(d, text, path, err, cap);
    if (failed)
        snprintf(err, cap, "%s: %s", path, strerror(errno));
    free(text);
    return status;
}

/* Field `text` (of n characters) as a whole decimal number into *value; 0,
 * or -1 if it is not one (a sign, a point, anything but digits) or too large. */
static int whole_number(const char *text, size_t n, uint64_t *value)
{
    *value = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9' || *value > (UINT64_MAX - 9) / 10)
            return -1;
        *value = *value * 10 + (uint64_t)(text[i] - '0');
    }
    return n ? 0 : -1;
}

/* Parse one line (line[0..n), no newline) into *row: 1 if it held a row, 0
 * if it held none (blank or a comment; a `# title:` is kept in d), -1 with
 * err[0..cap) saying what is wrong (the caller puts the file and line before). */
static int parse_line(struct delay_table *d, const char *line, size_t n, struct delay_row *row, char *err, size_t cap)
{
    static const char *const names[] = { "SIZE", "LOCAL_NS", "REMOTE_NS" };
    static const char *const units[] = { "bytes", "ns", "ns" };
    const char *field[3] = { 0 }, *hash = memchr(line, '#', n);
    size_t length[3] = { 0 }, fields = 0;
    if (hash && n - (size_t)(hash - line) > 8 && strncmp(hash, "# title:", 8) == 0 && hash == line) {
        size_t skip = 8 + strspn(hash + 8, " \t");
        snprintf(d->title, sizeof d->title, "%.*s", (int)(n - skip), line + skip);
    }
    if (hash)
        n = (size_t)(hash - line);
    for (size_t i = 0; i < n;) {
        if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            i++;
        if (fields < 3) {
            field[fields] = line + start;
            length[fields] = i - start;
        }
        fields++;
    }
    if (fields == 0)
        return 0;
    if (fields != 3) {
        snprintf(err, cap, "%zu field%s; expected 3: SIZE LOCAL_NS REMOTE_NS", fields, fields == 1 ? "" : "s");
        return -1;
    }
    uint64_t *value[3] = { &row->size, &row->local_ns, &row->remote_ns };
    for (int k = 0; k < 3; k++) {
        if (whole_number(field[k], length[k], value[k]) < 0) {
            snprintf(err, cap, "%s `%.*s` is not a whole number of %s", names[k], (int)length[k], field[k], units[k]);
            return -1;
        }
    }
    return 1;
}

/* Parse a network file's text (models/parallel.h). Sizes must rise from row to row. */
int delay_table_parse(struct delay_table *d, const char *text, const char *origin, char *err, size_t cap)
{
    char why[256];
    int number = 0;
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", origin);
    snprintf(d->path, sizeof d->path, "%s", origin);
    for (const char *line = text; *line;) {
        const char *newline = strchr(line, '\n');
        size_t n = newline ? (size_t)(newline - line) : strlen(line);
        struct delay_row row;
        int got = parse_line(d, line, n, &row, why, sizeof why);
        number++;
        if (got > 0 && d->nrows == DELAY_ROWS_MAX)
            snprintf(why, sizeof why, "more than %d rows", DELAY_ROWS_MAX);
        else if (got > 0 && d->nrows && row.size <= d->row[d->nrows - 1].size)
            snprintf(why, sizeof why, "size %" PRIu64 " does not follow %" PRIu64 ": sizes must rise", row.size,
                     d->row[d->nrows - 1].size);
        else if (got >= 0)
            why[0] = 0;
        if (got < 0 || why[0]) {
            snprintf(err, cap, "%s:%d: %s", origin, number, why);
            return -1;
        }
        if (got > 0)
            d->row[d->nrows++] = row;
        line += n + (newline != 0);
    }
    if (d->nrows == 0) {
        snprintf(err, cap, "%s: no rows (lines `SIZE LOCAL_NS REMOTE_NS`)", origin);
        return -1;
    }
    return 0;
}

/* Delivery time of `size` bytes (models/parallel.h): linear interpolation
 * between the two rows around it; below the first row or above the last,
 * that row's time (no extrapolation: a line through two measurements
 * says nothing reliable about sizes never measured). */
uint64_t delay_of(const struct delay_table *d, uint64_t size, int remote)
{
    const struct delay_row *r = d->row;
    size_t i = 0;
    if (d->nrows == 0)
        return 0;
    if (size <= r[0].size)
        return remote ? r[0].remote_ns : r[0].local_ns;
    while (i + 1 < d->nrows && r[i + 1].size < size)
        i++;
    if (i + 1 == d->nrows)
        return remote ? r[i].remote_ns : r[i].local_ns;
    double a = (double)(remote ? r[i].remote_ns : r[i].local_ns);
    double b = (double)(remote ? r[i + 1].remote_ns : r[i + 1].local_ns);
    double f = (double)(size - r[i].size) / (double)(r[i + 1].size - r[i].size);
    return (uint64_t)(a + (b - a) * f + 0.5);
}
