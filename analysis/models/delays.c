/*
 * analysis/models/delays.c — the delivery-time table of parallelism's step
 * 2 (thesis §5.2.3; the thesis's own is Fig. 5.11): how long a message of a
 * given size takes from SEND to RECEIVE, on one machine and between two. It
 * is measured by a ping-pong benchmark in guest time, not taken from the
 * trace, so that a placement that was never run can be predicted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/parallel.h"

/* This system's table in guest ns (one instruction per ns under -icount):
 * `make bench` runs netbench (user/bench/netbench.c) on a cluster of two
 * nodes, 10,000 CALL exchanges per size to an echo server on the same and
 * on the other machine; a message is half an exchange (the README's table,
 * measured on 2026-11-22). The remote figures
 * are dominated by QEMU and the virtual switch on the host, and vary with
 * its load (README, "Delivery time per message"); --delays FILE gives
 * another table. */
void delay_table_default(struct delay_table *d)
{
    static const struct delay_row measured[] = {
        { 1, 760, 97400 },
        { 10, 780, 82600 },
        { 100, 820, 80100 },
        { 1000, 1110, 93100 },
    };
    d->nrows = sizeof measured / sizeof measured[0];
    memcpy(d->row, measured, sizeof measured);
}

/* Read one unsigned decimal number at *at, moving past it; -1 if there is none. */
static int read_number(char **at, uint64_t *value)
{
    char *end;
    while (**at == ' ' || **at == '\t')
        (*at)++;
    if (**at < '0' || **at > '9')
        return -1;
    errno = 0;
    *value = strtoull(*at, &end, 10);
    if (errno)
        return -1;
    *at = end;
    return 0;
}

/* Parse one line into a row: 1 if it held one, 0 if blank or a comment, -1 if malformed. */
static int parse_row(char *line, struct delay_row *row)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = 0;
    line += strspn(line, " \t\r\n");
    if (!*line)
        return 0;
    if (read_number(&line, &row->size) < 0 || read_number(&line, &row->local_ns) < 0 ||
        read_number(&line, &row->remote_ns) < 0)
        return -1;
    return line[strspn(line, " \t\r\n")] ? -1 : 1;
}

/* Read a table file (models/parallel.h). Sizes must rise from line to line. */
int delay_table_read(struct delay_table *d, const char *path, char *err, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int number = 0, bad = 0;
    if (!f) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    d->nrows = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        struct delay_row row;
        int got = parse_row(line, &row);
        number++;
        bad = 1;
        if (got < 0)
            snprintf(err, cap, "%s:%d: expected `SIZE LOCAL_NS REMOTE_NS` (decimal numbers)", path, number);
        else if (got && d->nrows == DELAY_ROWS_MAX)
            snprintf(err, cap, "%s:%d: more than %d rows", path, number, DELAY_ROWS_MAX);
        else if (got && d->nrows && row.size <= d->row[d->nrows - 1].size)
            snprintf(err, cap, "%s:%d: size %" PRIu64 " does not follow %" PRIu64 ": sizes must rise", path,
                     number, row.size, d->row[d->nrows - 1].size);
        else
            bad = 0;
        if (!bad && got)
            d->row[d->nrows++] = row;
    }
    fclose(f);
    if (!bad && d->nrows == 0) {
        snprintf(err, cap, "%s: no rows (lines `SIZE LOCAL_NS REMOTE_NS`)", path);
        bad = 1;
    }
    return bad ? -1 : 0;
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
