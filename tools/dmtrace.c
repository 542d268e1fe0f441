/*
 * dmtrace.c — the host tool for DPM trace logs and trace disks: make a
 * blank trace disk image for a node, copy the log a filter wrote on one
 * into a file, and print a log record by record. The log's format is
 * meter/tracelog.h's container and nothing else; the log's own description
 * says how to read its records (meter/rules.c parses it), and selection
 * rules are DPM's, run by the same engine as the filter server's.
 * `dmtrace --help` documents the commands and exit statuses.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output_check.h"
#include "tracelog.h"
#include "print.h"
#include "rules.h"

/* Exit statuses (see EXIT STATUS in the help text). */
enum {
    STATUS_OK = 0,
    STATUS_BAD_INPUT = 1,
    STATUS_USAGE = CLI_STATUS_USAGE,   /* usage() */
};

#define DEFAULT_SIZE_MB 64
#define MAX_SIZE_MB     (1024 * 1024)   /* a TiB: far more than any trace disk */

static const char help_text[] =
"NAME\n"
"    dmtrace - make trace disks, take trace logs off them, print trace logs\n"
"\n"
"SYNOPSIS\n"
"    dmtrace blank [--force] IMAGE [SIZE_MB]\n"
"    dmtrace extract IMAGE OUT\n"
"    dmtrace unstream STREAM OUT\n"
"    dmtrace dump LOG [RULES]\n"
"    dmtrace --help\n"
"\n"
"DESCRIPTION\n"
"    A trace log is what a DPM filter server writes (meter/tracelog.h): a\n"
"    header with the filter's name, its machine, the log's identity and\n"
"    the trace description in DPM's format (thesis Fig. 3.3), then blocks\n"
"    of the records its selection rules kept, each record with the fields\n"
"    the rule kept, and the count of records known lost. A log describes\n"
"    itself: dmtrace needs nothing else to read it, whatever build wrote it.\n"
"\n"
"    Each record block carries a checksum of its contents (Fletcher's sums\n"
"    of its 64-bit words, modulo a prime; log format version 3): a block\n"
"    whose checksum does not match is damaged, reported with its number\n"
"    and never read as records. Logs of format version 2 (no checksums)\n"
"    are refused, saying their version.\n"
"\n"
"    A file dmtrace writes must not be the file it reads (also through a\n"
"    link) and, if it exists, must be a regular file: both are refused\n"
"    with status 1 before anything is written.\n"
"\n"
"    A filter writes its log on its node's trace disk, a virtio-blk disk\n"
"    of its own, from block 0; each new filter writes over the last log.\n"
"    A filter can also write the same log into a file of the file system\n"
"    (`dmfs get` copies it out).\n"
"\n"
"COMMANDS\n"
"    blank [--force] IMAGE [SIZE_MB]\n"
"        Create IMAGE, a blank trace disk of SIZE_MB MiB (default 64): its\n"
"        block 0 says \"a trace disk with no log yet\" (the log header's\n"
"        magic DPMTRACE with no description); the rest reads as zeros (the\n"
"        file is sparse). An existing IMAGE is refused unless --force is\n"
"        given. `scripts/cluster.py --trace-disks DIR` (make run TRACE=DIR)\n"
"        makes one for each node this way when it is missing.\n"
"\n"
"    extract IMAGE OUT\n"
"        Copy the log on the trace disk image IMAGE into the file OUT: its\n"
"        header blocks and its record blocks up to its end, and nothing of\n"
"        an older, longer log left after it on the disk (its blocks belong\n"
"        to another log identity). OUT is written under a temporary name,\n"
"        read back, compared and read through as a log; only then is it\n"
"        renamed to OUT and one line printed:\n"
"            IMAGE: N blocks, R records, L lost -> OUT\n"
"\n"
"    unstream STREAM OUT\n"
"        Rebuild a log from a live stream: what a filter started with -l\n"
"        sent through its machine's live trace channel, which the launcher\n"
"        puts in the file DIR/liveK.bin (make run TRACE=DIR). The stream is\n"
"        the log's blocks as the filter wrote them, a block being filled\n"
"        coming again each time it grew (meter/tracelog.h). OUT gets the last\n"
"        log the stream holds, block for block as a trace disk holds it,\n"
"        written and checked as extract does; one line is printed:\n"
"            STREAM: N blocks, R records, L lost (of K logs in the stream) -> OUT\n"
"        A stream cut short (the machine halted mid-block) gives the log up\n"
"        to its last whole block, with the warning below.\n"
"\n"
"    dump LOG [RULES]\n"
"        Print every record of LOG (a log file, or a trace disk image) on a\n"
"        line of its own:\n"
"            TYPE field=value field=value ...\n"
"        TYPE is the name its description gives the record's type; then\n"
"        each field the log kept, the header's first, in description order\n"
"        and in the field's display base: hexadecimal with 0x, or decimal\n"
"        (with a sign for the fields this build's record.h declares signed,\n"
"        when the log's description is this build's own). A last line says\n"
"            N records, M lost\n"
"        where M is the log's count of records lost before they reached the\n"
"        log. With RULES, a file of DPM selection rules (meter/rules.h:\n"
"        `field op value` terms joined by ',' and ended by ';'), only the\n"
"        records some rule matches are printed and counted, without the\n"
"        fields the first matching rule drops with '#'. In rules, a field\n"
"        the log did not keep reads as 0.\n"
"\n"
"    A log or stream whose file ends inside a block (cut short) is read up\n"
"    to its last whole block, and dump, extract and unstream say so:\n"
"        dmtrace: LOG: the log is cut short: block N has only B of its 4096 bytes\n"
"    with status 0 when records were read before it, 1 (and no OUT) when\n"
"    none could be.\n"
"\n"
"EXIT STATUS\n"
"    0  success\n"
"    1  bad input: a file that cannot be read or written, not a trace disk\n"
"       or log, a trace disk with no log yet, a damaged log, a log cut\n"
"       short before its first record, rules that do not parse, an existing\n"
"       IMAGE without --force, an output that is the input or not a\n"
"       regular file\n"
"    2  bad usage\n"
"\n"
"MESSAGES\n"
"    Each error is one line on standard error, naming the file:\n"
"        dmtrace: IMAGE: a trace disk with no log yet\n"
"        dmtrace: IMAGE: not a trace disk (no DPMTRACE header)\n"
"        dmtrace: LOG: block 12: a damaged entry\n"
"        dmtrace: LOG: block 12: damaged: its checksum does not match its contents\n"
"        dmtrace: OUT: is the input IMAGE\n"
"        dmtrace: OUT: is not a regular file\n"
"        dmtrace: RULES:2:9: no such field in the description\n"
"\n"
"EXAMPLES\n"
"    dmtrace blank build/trace/trace0.img\n"
"    dmtrace extract build/trace/trace0.img run1.log\n"
"    dmtrace dump run1.log\n"
"    echo 'traceType=SEND, channel=#*;' > sends.rules\n"
"    dmtrace dump run1.log sends.rules\n";

/* ---- errors ---- */

const char cli_program[] = "dmtrace";   /* in every error message (cli.h) */

/* ---- files ---- */

/* A whole file, mapped read-only; *size its length. Trace disks are large
 * and mostly unused: mapping reads only the blocks the log has. */
static const uint8_t *map_file(const char *path, uint64_t *size)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        die(STATUS_BAD_INPUT, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        die(STATUS_BAD_INPUT, "%s: not a file", path);
    *size = (uint64_t)st.st_size;
    if (*size == 0)
        die(STATUS_BAD_INPUT, "%s: empty: not a trace disk or log", path);
    void *p = mmap(0, (size_t)*size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        die(STATUS_BAD_INPUT, "%s: %s", path, strerror(errno));
    close(fd);
    return p;
}

/* A small text file (selection rules), whole. */
static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(STATUS_BAD_INPUT, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            text = realloc(text, cap *= 2);
    }
    if (!text)
        die(STATUS_BAD_INPUT, "%s: out of memory", path);
    if (ferror(f))
        die(STATUS_BAD_INPUT, "%s: %s", path, strerror(errno));
    fclose(f);
    *len = n;
    return text;
}

/* Opens the log in `bytes`, or says why it is none and exits. */
static void open_log(struct tracelog_reader *r, const char *path, const uint8_t *bytes, uint64_t size)
{
    int err = tracelog_open(r, bytes, size);
    switch (err) {
    case 0:
        return;
    case TRACELOG_E_EMPTY:
        die(STATUS_BAD_INPUT, "%s: a trace disk with no log yet", path);
    case TRACELOG_E_SHORT:
        die(STATUS_BAD_INPUT, "%s: too short to be a trace disk or log (%" PRIu64 " bytes)", path, size);
    case TRACELOG_E_MAGIC:
        die(STATUS_BAD_INPUT, "%s: not a trace disk (no %s header)", path, TRACELOG_MAGIC);
    case TRACELOG_E_VERSION:
        die(STATUS_BAD_INPUT, "%s: a trace log of version %u; this dmtrace reads version %u", path,
            ((const struct tracelog_header *)bytes)->version, TRACELOG_VERSION);
    case TRACELOG_E_DESCRIPTION:
        die(STATUS_BAD_INPUT, "%s: its trace description does not parse: line %u, column %u: %s", path,
            r->description_error.line, r->description_error.column, r->description_error.reason);
    default:
        die(STATUS_BAD_INPUT, "%s: a damaged log header", path);
    }
}

/* Exits (status 1) unless `out` may be written: not the input `in`
 * (nor a link to it), and a regular file if it exists (output_check.h). */
static void check_output(const char *out, const char *in)
{
    char why[4200];
    if (output_check(out, &in, in ? 1 : 0, why, sizeof why) != 0)
        die(STATUS_BAD_INPUT, "%s: %s", out, why);
}

/* Says so on stderr when the file at `path` (`size` bytes) ends inside
 * block `index`, where reading stopped: the log is cut short, and its
 * records up to there are all there is. Returns whether it did. */
static int say_if_cut_short(const char *path, uint64_t index, uint64_t size)
{
    if (size <= index * TRACELOG_BLOCK || size >= (index + 1) * TRACELOG_BLOCK)
        return 0;
    fflush(stdout);
    fprintf(stderr, "%s: %s: the log is cut short: block %" PRIu64 " has only %" PRIu64 " of its %d bytes\n",
            cli_program, path, index, size - index * TRACELOG_BLOCK, TRACELOG_BLOCK);
    return 1;
}

/* Exits with status 1 after a damaged block or entry, naming the block. */
static void die_damaged(const char *path, const struct tracelog_reader *r, int status)
{
    fflush(stdout);
    if (status == TRACELOG_E_CHECKSUM)
        die(STATUS_BAD_INPUT, "%s: block %" PRIu64 ": damaged: its checksum does not match its contents", path,
            r->index);
    die(STATUS_BAD_INPUT, "%s: block %" PRIu64 ": a damaged entry", path, r->index);
}

/* ---- blank ---- */

static int cmd_blank(int argc, char **argv)
{
    int force = argc > 0 && strcmp(argv[0], "--force") == 0;
    argc -= force, argv += force;
    if (argc < 1 || argc > 2)
        usage("dmtrace blank [--force] IMAGE [SIZE_MB]");
    const char *path = argv[0];
    uint64_t size_mb = DEFAULT_SIZE_MB;
    if (argc == 2) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(argv[1], &end, 10);
        if (errno || end == argv[1] || *end || n == 0 || n > MAX_SIZE_MB || argv[1][0] == '-')
            usage("SIZE_MB must be a whole number of MiB from 1 to %d, not '%s'", MAX_SIZE_MB, argv[1]);
        size_mb = n;
    }
    check_output(path, 0);
    int fd = open(path, O_WRONLY | O_CREAT | (force ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0)
        die(STATUS_BAD_INPUT, errno == EEXIST ? "%s: exists (--force replaces it)" : "%s: %s", path,
            strerror(errno));
    static uint8_t block[TRACELOG_BLOCK];
    tracelog_blank(block);
    if (pwrite(fd, block, sizeof block, 0) != (ssize_t)sizeof block ||
        ftruncate(fd, (off_t)(size_mb << 20)) < 0 || close(fd) < 0) {
        int saved = errno;
        unlink(path);
        die(STATUS_BAD_INPUT, "%s: %s", path, strerror(saved));
    }
    return STATUS_OK;
}

/* ---- extract ---- */

/* Every record of the log, read through by its description: how many;
 * exits if a block or an entry is damaged. */
static uint64_t read_through(struct tracelog_reader *r, const char *path)
{
    struct trace_values v;
    int status;
    while ((status = tracelog_next_values(r, &v)) == 1)
        ;
    if (status < 0)
        die_damaged(path, r, status);
    return r->records;
}

/* Writes `n` bytes to a new file `path`, or exits (removing it). */
static void write_file(const char *path, const uint8_t *bytes, uint64_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    uint64_t done = 0;
    while (fd >= 0 && done < n) {
        ssize_t w = write(fd, bytes + done, (size_t)(n - done));
        if (w <= 0)
            break;
        done += (uint64_t)w;
    }
    if (fd < 0 || done < n || fsync(fd) < 0 || close(fd) < 0) {
        int saved = errno;
        unlink(path);
        die(STATUS_BAD_INPUT, "%s: %s", path, strerror(saved));
    }
}

static int cmd_extract(int argc, char **argv)
{
    if (argc != 2)
        usage("dmtrace extract IMAGE OUT");
    const char *image = argv[0], *out = argv[1];
    check_output(out, image);
    uint64_t size;
    const uint8_t *disk = map_file(image, &size);
    struct tracelog_reader r;
    open_log(&r, image, disk, size);
    uint64_t blocks = tracelog_blocks(&r);
    uint64_t records = read_through(&r, image);
    uint64_t lost = r.lost;
    if (say_if_cut_short(image, r.index, size) && records == 0)
        exit(STATUS_BAD_INPUT);   /* nothing could be read */

    /* Written under a temporary name, checked, then renamed: a failure
     * leaves no half-written OUT behind. */
    size_t tmp_len = strlen(out) + sizeof ".partial";
    char *tmp = malloc(tmp_len);
    if (!tmp)
        die(STATUS_BAD_INPUT, "out of memory");
    snprintf(tmp, tmp_len, "%s.partial", out);
    write_file(tmp, disk, blocks * TRACELOG_BLOCK);
    uint64_t copy_size;
    const uint8_t *copy = map_file(tmp, &copy_size);
    struct tracelog_reader again;
    if (copy_size != blocks * TRACELOG_BLOCK || memcmp(copy, disk, (size_t)copy_size) != 0 ||
        tracelog_open(&again, copy, copy_size) != 0 || tracelog_blocks(&again) != blocks ||
        read_through(&again, tmp) != records || again.lost != lost) {
        unlink(tmp);
        die(STATUS_BAD_INPUT, "%s: the copy did not read back as the log on %s", out, image);
    }
    if (rename(tmp, out) < 0) {
        int saved = errno;
        unlink(tmp);
        die(STATUS_BAD_INPUT, "%s: %s", out, strerror(saved));
    }
    printf("%s: %" PRIu64 " blocks, %" PRIu64 " records, %" PRIu64 " lost -> %s\n", image, blocks, records, lost,
           out);
    return STATUS_OK;
}

/* The last log of a live stream, rebuilt into OUT. */
static int cmd_unstream(int argc, char **argv)
{
    if (argc != 2)
        usage("dmtrace unstream STREAM OUT");
    const char *stream = argv[0], *out = argv[1];
    check_output(out, stream);
    uint64_t size;
    const uint8_t *bytes = map_file(stream, &size);
    uint8_t *log = malloc(size ? size : 1);
    if (!log)
        die(STATUS_BAD_INPUT, "out of memory");
    uint32_t logs;
    uint64_t length = tracelog_unstream(bytes, size, log, size, &logs);
    if (length == 0)
        die(STATUS_BAD_INPUT, "%s: no trace log in the stream (%" PRIu64 " bytes)", stream, size);
    struct tracelog_reader r;
    open_log(&r, stream, log, length);
    uint64_t records = read_through(&r, stream);
    if (say_if_cut_short(stream, size / TRACELOG_BLOCK, size) && records == 0)
        exit(STATUS_BAD_INPUT);   /* nothing could be read */
    write_file(out, log, length);
    printf("%s: %" PRIu64 " blocks, %" PRIu64 " records, %" PRIu64 " lost (of %u log%s in the stream) -> %s\n",
           stream, length / TRACELOG_BLOCK, records, r.lost, logs, logs == 1 ? "" : "s", out);
    free(log);
    return STATUS_OK;
}

/* ---- dump ---- */

static int cmd_dump(int argc, char **argv)
{
    if (argc < 1 || argc > 2)
        usage("dmtrace dump LOG [RULES]");
    const char *path = argv[0];
    uint64_t size;
    const uint8_t *log = map_file(path, &size);
    static struct tracelog_reader r;
    open_log(&r, path, log, size);
    static struct ruleset rules;
    if (argc == 2) {
        size_t len;
        char *text = read_text(argv[1], &len);
        struct parse_error e;
        if (rules_parse(&rules, &r.layouts, text, len, &e) != 0)
            die(STATUS_BAD_INPUT, "%s:%u:%u: %s", argv[1], e.line, e.column, e.reason);
        free(text);
    }
    static uint8_t bytes[2 * 65536 + 16];
    struct trace_values v;
    uint64_t printed = 0;
    int status;
    while ((status = tracelog_next_values(&r, &v)) == 1) {
        uint32_t shown = v.fields;
        if (argc == 2) {
            uint32_t kept;
            uint32_t len = tracelog_record_bytes(&r, &v, bytes, sizeof bytes);
            if (!rules_select(&rules, &r.layouts, bytes, len, &kept))
                continue;
            shown &= kept;
        }
        tracelog_print_record(stdout, &r, &v, shown);
        printed++;
    }
    if (status < 0)
        die_damaged(path, &r, status);
    printf("%" PRIu64 " records, %" PRIu64 " lost\n", printed, r.lost);
    if (say_if_cut_short(path, r.index, size) && r.records == 0)
        return STATUS_BAD_INPUT;   /* nothing could be read */
    return STATUS_OK;
}

int main(int argc, char **argv)
{
    static const struct cli_command commands[] = {
        { "blank", cmd_blank }, { "extract", cmd_extract }, { "unstream", cmd_unstream }, { "dump", cmd_dump },
    };
    return cli_main(argc, argv, commands, sizeof commands / sizeof commands[0], help_text, 0);
}
