/*
 * filter.c — a DPM filter server (thesis ch. 3; docs/architecture.md, "Metering"):
 * it takes the meter batches that kernels send for metered processes,
 * keeps the records its selection rules select, with the fields they
 * keep, and appends them to a trace log (meter/tracelog.h).
 *
 *     filter [-l] NAME DESCRIPTION RULES [LOGFILE]
 *     filter -n NAME DESCRIPTION RULES
 *
 * -l          also stream the log live to the host, through the live trace
 *             channel of this machine (PM_LIVE; kernel/dev/virtio_console.c):
 *             every block as it is written, so a block being filled comes
 *             again each time it is rewritten (meter/tracelog.h, "the live
 *             stream").
 * -n          keep no log: what the rules select is only forwarded
 *             (FILTER_FORWARD, below); the process manager lends such a
 *             filter no trace disk.
 * NAME        the name it registers its link under at the switchboard; the
 *             process manager gives metered processes copies of that link
 *             as their meter links.
 * DESCRIPTION a trace description in DPM's format (thesis Fig. 3.3), a
 *             file of the file system, or `-` for the kernel's own
 *             (meter_describe). It must agree with the records the kernel
 *             writes: every field it names at the kernel's offset and size.
 * RULES       a file of selection rules (meter/rules.h), or `-` to keep
 *             every record whole.
 * LOGFILE     a file of the file system to write the log into.
 *
 * The log goes to the trace disk whose device link the process manager
 * put in slot 3 (PM_FILTER), from block 0, and/or to LOGFILE: the same
 * bytes, block `i` at offset i * 4096; and/or live to the host (-l). It
 * refuses to start with none of them.
 *
 * One link, registered as NAME, brings both meter batches (from kernels:
 * DM_MSG_FROM_KERNEL, which no process can forge) and requests (FILTER_*,
 * user/lib/server_protocol.h). A second link, on CHANNEL_ALARM, is lent to the
 * timer server so that a partly filled block is written within about a
 * second of its first record: a crash then loses at most that second.
 *
 * Forwarding (DPM's feedback scheduling, Miller 1988, §V.B and Fig. 4):
 * FILTER_FORWARD passes a link to a consumer (a scheduler) and an
 * interval. From then on every record the rules select is also folded
 * into a summary (meter/summary.h: messages between processes, where each
 * process wrote its latest record), and at the end of each interval the
 * summary is sent over that link (an alarm on CHANNEL_FORWARD) and a new
 * one begun. A summary the consumer's queue cannot take is counted lost;
 * when the consumer is gone, forwarding stops.
 *
 * Exit status: 0 after FILTER_STOP; 2 if it refuses to start (bad
 * arguments, a description or rules that do not parse, a description that
 * disagrees with the kernel's records, nowhere to write the log, a disk in
 * slot 3 that is not a trace disk, a name a running filter has: looked up
 * before the log is begun, so that a second filter of a name never writes
 * over a trace disk, and refused by the switchboard at registration,
 * SB_REGISTER_NEW, if two started at once). Each refusal is one line naming the
 * file, `filter: FILE:LINE:COLUMN: reason` for texts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"
#include "tracelog.h"
#include "rules.h"
#include "summary.h"
#include "server.h"

#define DEVICE_SLOT       3            /* the trace disk's device link, if any (PM_FILTER) */
#define CHANNEL_METER     0            /* the registered link: batches and requests */
#define CHANNEL_ALARM     1            /* the timer's alarms: time to write the partly filled block */
#define CHANNEL_FORWARD   2            /* the timer's alarms: time to forward the summary */
#define FORWARD_MIN_MS    10           /* FILTER_FORWARD's interval: 10 ms to a minute */
#define FORWARD_MAX_MS    60000
#define FLUSH_AFTER_NS    1000000000ull
#define TEXT_MAX          (64 * 1024)  /* a description or rules file */
#define STREAMS_BITS      10
#define STREAMS_MAX       (1u << STREAMS_BITS)
#define EXIT_REFUSED      2

static const char *name;               /* ours, at the switchboard and in the log */
static struct filter_stats stats;

/* Says why the filter will not start, and ends it. */
static void refuse(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ---- the description and the rules ---- */

static char text[TEXT_MAX];            /* the file being read */
static struct description description;
static struct ruleset rules;
static int keep_everything;            /* RULES was `-` */

/* Where the description's fields are in this build's layouts (tracelog.h's
 * field numbering, header first): the rule engine numbers the fields of a
 * record by the description, the log by the kernel's layouts. */
static uint8_t header_field[DESC_MAX_FIELDS];
static uint8_t body_field[METER_NTYPES][DESC_MAX_FIELDS];

/* A file of the file system, whole, into text[]; its length. */
static size_t read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        refuse("filter: %s: %s", path, strerror(errno));
    size_t len = fread(text, 1, sizeof text, f);
    int failed = ferror(f), too_long = len == sizeof text;
    fclose(f);
    if (failed)
        refuse("filter: %s: cannot read it", path);
    if (too_long)
        refuse("filter: %s: longer than %u bytes", path, TEXT_MAX - 1);
    text[len] = 0;
    return len;
}

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_word_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Where the description text in text[] names layout `layout` (its
 * `field`th field, or the layout itself for field -1). The parser keeps no
 * positions, so the text is walked again: a name right after the start or
 * a `;` names a layout, any other name a field of the last layout. */
static void position_of(size_t len, uint32_t layout, int field, uint32_t *line, uint32_t *column)
{
    int layouts = -1, fields = -1, at_layout = 1;
    *line = *column = 1;
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (is_name_start(c)) {
            if (at_layout)
                layouts++, fields = -1;
            else
                fields++;
            if ((uint32_t)layouts == layout && fields == field)
                return;
            at_layout = 0;
        } else if (c == ';') {
            at_layout = 1;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '/') {
            while (i < len && text[i] != '\n')
                i++, (*column)++;
            continue;
        }
        /* Step over the character, or the whole word (so that 0x1f is no name "x1f"). */
        int word = is_word_char(c);
        do {
            if (text[i] == '\n')
                (*line)++, *column = 1;
            else
                (*column)++;
            i++;
        } while (word && i < len && is_word_char(text[i]));
    }
}

/* The field of this build's layout `l` called `field`, or -1. */
static int own_field(const struct meter_layout *l, const char *field)
{
    for (uint32_t i = 0; i < l->nfields; i++)
        if (strcmp(l->fields[i].name, field) == 0)
            return (int)i;
    return -1;
}

/* Refuses a description (in text[], parsed) whose layouts disagree with
 * the records the kernel writes, naming the first disagreement; fills in
 * header_field and body_field. A description may leave fields out; the
 * header's must end where the kernel's does, since body offsets count
 * from there. */
static void check_layouts(const char *path, size_t len)
{
    for (uint32_t li = 0; li < description.nlayouts; li++) {
        const struct desc_layout *d = &description.layouts[li];
        const struct meter_layout *own = d->type == 0 ? &meter_header_layout : meter_body_layout(d->type);
        uint32_t line, column;
        position_of(len, li, -1, &line, &column);
        if (!own)
            refuse("filter: %s:%u:%u: %s: the kernel writes no records of type %u", path, line, column, d->name,
                   d->type);
        if (strcmp(own->name, d->name) != 0)
            refuse("filter: %s:%u:%u: type %u is %s in the kernel's records, not %s", path, line, column, d->type,
                   own->name, d->name);
        for (uint32_t fi = 0; fi < d->nfields; fi++) {
            const struct desc_field *f = &d->fields[fi];
            int k = own_field(own, f->name);
            position_of(len, li, (int)fi, &line, &column);
            if (k < 0)
                refuse("filter: %s:%u:%u: %s has no field %s in the kernel's records", path, line, column,
                       d->name, f->name);
            if (own->fields[k].offset != f->offset || own->fields[k].size != f->length)
                refuse("filter: %s:%u:%u: %s.%s is at offset %u, %u bytes long here, but at offset %u, %u bytes "
                       "long in the kernel's records", path, line, column, d->name, f->name, f->offset, f->length,
                       own->fields[k].offset, own->fields[k].size);
            if (d->type == 0)
                header_field[fi] = (uint8_t)k;
            else
                body_field[d->type][fi] = (uint8_t)(meter_header_layout.nfields + (uint32_t)k);
        }
        position_of(len, li, -1, &line, &column);
        if (d->type == 0 && description_header_size(d) != sizeof(struct meter_header))
            refuse("filter: %s:%u:%u: the header ends at byte %u here, but the kernel's is %u bytes long "
                   "(body offsets count from its end)", path, line, column, description_header_size(d),
                   (unsigned)sizeof(struct meter_header));
    }
}

static void load_description(const char *path)
{
    size_t len;
    if (strcmp(path, "-") == 0) {
        long n = meter_describe(text, sizeof text);
        if (n < 0)
            refuse("filter: the built-in description does not fit in %u bytes", TEXT_MAX);
        len = (size_t)n;
        path = "(built-in description)";
    } else {
        len = read_text(path);
    }
    struct parse_error e;
    if (description_parse(&description, text, len, &e) != 0)
        refuse("filter: %s:%u:%u: %s", path, e.line, e.column, e.reason);
    check_layouts(path, len);
}

static void load_rules(const char *path)
{
    if (strcmp(path, "-") == 0) {
        keep_everything = 1;
        return;
    }
    size_t len = read_text(path);
    struct parse_error e;
    if (rules_parse(&rules, &description, text, len, &e) != 0)
        refuse("filter: %s:%u:%u: %s", path, e.line, e.column, e.reason);
}

/* The fields of a record of `type` to keep in the log (tracelog.h's
 * numbering), from the rule engine's answer (the description's
 * numbering). A field the description does not name is kept. */
static uint32_t kept_fields(uint32_t type, uint32_t described)
{
    const struct desc_layout *h = description_layout(&description, 0);
    const struct desc_layout *body = description_layout(&description, type);
    uint32_t kept = meter_all_fields(type);
    uint32_t n = h->nfields + (body ? body->nfields : 0);
    for (uint32_t i = 0; i < n && i < 32; i++)
        if (!(described & (1u << i)))
            kept &= ~(1u << (i < h->nfields ? header_field[i] : body_field[type][i - h->nfields]));
    return kept;
}

/* ---- where the log goes ---- */

static struct {
    int present;
    uint64_t blocks;
} disk;
/* The log's writer. The block it fills is the trace disk's attached area
 * and the live channel's, so that a block goes out as it was made, and a
 * block from elsewhere (the file system's log file) is copied there. */
static struct tracelog_writer writer __attribute__((aligned(4096)));
static long live_link = -1;            /* the live channel's device link (-l), while it works */
static long log_file = -1;             /* LOGFILE's file link */

/* A request to the trace disk's driver over slot 3; its status. */
static long disk_request(uint32_t op, int64_t block, long pass, uint64_t *value)
{
    struct kernel_request k = { .op = op, .arg = { block, 0 }, .pass = pass };
    long status = kernel_request(DEVICE_SLOT, &k);
    if (value)
        *value = k.value;   /* 0 when no answer came */
    return status;
}

/* Takes the trace disk in slot 3, if there is one. Refuses a disk whose
 * block 0 is not a trace log header (blank or not): it is someone's data. */
static void open_trace_disk(void)
{
    if (disk_request(KOP_DISK_INFO, 0, DM_NO_LINK, &disk.blocks) < 0)
        return;   /* no device link in slot 3: no trace disk */
    long area = dm_createlink(0, 0, LINK_READ | LINK_WRITE, writer.block, sizeof writer.block);
    long err = area < 0 ? area : disk_request(KOP_DISK_ATTACH, 0, area, 0);
    if (err == 0)
        err = disk_request(KOP_DISK_READ, 0, DM_NO_LINK, 0);
    if (err < 0)
        refuse("filter %s: cannot read the trace disk: %s", name, dm_error_name(err));
    if (memcmp(writer.block, TRACELOG_MAGIC, 8) != 0)
        refuse("filter %s: the disk in slot 3 is not a trace disk (no %s in block 0); not writing over it "
               "(dmtrace blank makes one)", name, TRACELOG_MAGIC);
    disk.present = 1;
}

/* A request to the live channel's driver; its status. */
static long live_request(uint32_t op, int64_t arg0, int64_t arg1, long pass)
{
    struct kernel_request k = { .op = op, .arg = { arg0, arg1 }, .pass = pass };
    return kernel_request(live_link, &k);
}

/* -l: asks the process manager for this machine's live channel and
 * attaches writer.block to it. */
static void open_live_channel(void)
{
    struct sv_call c = { .op = PM_LIVE, .pass = DM_NO_LINK };
    long err = sv_call(SLOT_PM, &c);
    if (err == 0 && c.reply_link < 0)
        err = E_BADREQ;
    if (err == E_NOTFOUND)
        refuse("filter %s: this machine has no live trace channel (the launcher gives each node one with "
               "--trace-disks: make run TRACE=DIR)", name);
    if (err < 0)
        refuse("filter %s: no live trace channel: %s", name, dm_error_text(err));
    live_link = c.reply_link;
    long area = dm_createlink(0, 0, LINK_READ, writer.block, sizeof writer.block);
    err = area < 0 ? area : live_request(KOP_DISK_ATTACH, 0, 0, area);
    if (err < 0)
        refuse("filter %s: cannot use the live trace channel: %s", name, dm_error_name(err));
}

/* Opens LOGFILE for the log, emptied. */
static void open_log_file(const char *path)
{
    char full[256];
    if (snprintf(full, sizeof full, "%s%s", path[0] == '/' ? "" : "/", path) >= (int)sizeof full)
        refuse("filter: %s: the path is too long", path);
    long f = fs_create(full, FS_TYPE_FILE, FS_ACCESS_READ | FS_ACCESS_WRITE);   /* read: end_log_file */
    if (f == E_STATE) {   /* it exists: written over */
        f = fs_open(full, FS_ACCESS_READ | FS_ACCESS_WRITE, 0);
        long err = f < 0 ? f : fs_truncate(f);
        if (err < 0)
            f = err;
    }
    if (f < 0)
        refuse("filter: %s: %s", path, dm_error_text(f));
    log_file = f;
}

/* The log: written; full (records counted lost in it); failed (they are counted lost);
 * none kept (-n: the filter forwards only). */
static enum { LOG_WRITING, LOG_FULL, LOG_FAILED, LOG_NONE } log_state;   /* LOG_NONE: -n */
static long log_error;                 /* why it failed (LOG_FAILED) */
static int unwritten;                  /* the block being filled changed since it was last written */

/* The log file once the file system had no room for its next block: it
 * ends with the blocks it holds, and its last record block is written
 * again at each flush (file_end_update) with every record that came after
 * it counted lost, so that the file's log says what it is missing. The
 * trace disk's log and the live channel go on without it. */
static struct {
    int      ended;
    uint64_t last;                     /* the file's last record block: its index */
    uint64_t records;                  /* the records the file holds */
    uint8_t  block[TRACELOG_BLOCK] __attribute__((aligned(8)));   /* its last record block */
} file_end;

/* The file system had no room for the log file's block `index`, which
 * holds `block`: the file ends before it (see file_end). Returns 0, or why
 * the file cannot end so (its last record block cannot be read back; or
 * it holds no record block, where no loss count can go). */
static long end_log_file(uint64_t index, const uint8_t *block)
{
    const struct tracelog_block *cut = (const struct tracelog_block *)block;
    if (index == 0 || cut->magic != TRACELOG_BLOCK_MAGIC || cut->sequence == 0)
        return E_DISKFULL;       /* the header, or the first record block: nothing of the log's records in it */
    long n = fs_read(log_file, (index - 1) * TRACELOG_BLOCK, file_end.block, TRACELOG_BLOCK);
    if (n != TRACELOG_BLOCK)
        return n < 0 ? n : E_DISKFULL;
    file_end.ended = 1;
    file_end.last = index - 1;
    file_end.records = writer.records - cut->records;
    if (!disk.present && live_link < 0) {   /* the log file was the log's only place */
        stats.kept -= cut->records;
        stats.lost += cut->records;
        log_state = LOG_FULL;
    }
    printf("filter %s: the file system has no room for the log file's block %lu: the log file ends at %lu "
           "records, later ones counted lost in it%s\n", name, (unsigned long)index,
           (unsigned long)file_end.records, disk.present ? "; the trace disk's log goes on" : "");
    return 0;
}

/* The ended log file's last record block written again, counting lost
 * every record the log took after the file's last one. */
static long file_end_update(void)
{
    struct tracelog_block *b = (struct tracelog_block *)file_end.block;
    uint64_t lost = writer.records + writer.lost - file_end.records;
    if (b->lost == lost)
        return 0;
    b->lost = lost;
    b->checksum = tracelog_block_checksum(file_end.block);
    long n = fs_write(log_file, file_end.last * TRACELOG_BLOCK, file_end.block, TRACELOG_BLOCK);
    return n == TRACELOG_BLOCK ? 0 : n < 0 ? n : E_DISKFULL;
}

/* The trace log's writer: block `index` to the trace disk and to LOGFILE. */
static int write_block(void *context, uint64_t index, const uint8_t *block)
{
    (void)context;
    if ((disk.present || live_link >= 0) && block != writer.block)
        memcpy(writer.block, block, TRACELOG_BLOCK);
    if (disk.present) {
        long err = disk_request(KOP_DISK_WRITE, (int64_t)index, DM_NO_LINK, 0);
        if (err < 0)
            return (int)err;
    }
    if (live_link >= 0) {   /* the stream is a view: when it fails, the log goes on without it */
        long err = live_request(KOP_LIVE_WRITE, 0, TRACELOG_BLOCK, DM_NO_LINK);
        if (err < 0) {
            printf("filter %s: the live trace channel failed (%s); the log goes on without it\n", name,
                   dm_error_name(err));
            dm_destroylink(live_link);
            live_link = -1;
        }
    }
    if (log_file >= 0 && !file_end.ended) {
        long n = fs_write(log_file, index * TRACELOG_BLOCK, block, TRACELOG_BLOCK);
        if (n != TRACELOG_BLOCK) {
            long err = n == E_DISKFULL || (n >= 0 && n < TRACELOG_BLOCK) ? end_log_file(index, block) : n;
            if (err < 0)
                return (int)err;
        }
    }
    if (index + 1 > stats.log_blocks)
        stats.log_blocks = index + 1;
    return 0;
}

/* ---- the log ---- */


/* The log cannot be written any more: records are counted lost from now on. */
static void log_failed(long err)
{
    if (log_state != LOG_FAILED)
        printf("filter %s: writing the log failed (%s); records from now on are counted lost\n", name,
               dm_error_name(err));
    log_state = LOG_FAILED;
    log_error = err;
}

/* n records that will not reach the log: counted here and in the log's
 * loss count (which reaches the disk while its last block can be written). */
static void lose(uint64_t n)
{
    if (n == 0)
        return;
    stats.lost += n;
    tracelog_lose(&writer, n);
    unwritten = 1;
}

/* Appends a record (its `fields`, tracelog.h's numbering) to the log;
 * with no log (-n), only counts it kept. */
static void keep(const struct meter_header *h, uint32_t fields)
{
    if (log_state == LOG_NONE) {
        stats.kept++;
        return;
    }
    if (log_state != LOG_WRITING) {
        lose(1);
        return;
    }
    int err = tracelog_append(&writer, h, fields);
    if (err == 0) {
        stats.kept++;
        unwritten = 1;
        return;
    }
    if (err == TRACELOG_FULL) {
        printf("filter %s: the trace disk is full (%lu blocks); records from now on are counted lost\n", name,
               (unsigned long)disk.blocks);
        log_state = LOG_FULL;
    } else {
        log_failed(err);
    }
    lose(1);
}

/* Writes the partly filled block as it is now; 0 or why not. */
static long flush_log(void)
{
    if (log_state == LOG_NONE)
        return 0;
    if (log_state == LOG_FAILED)
        return log_error;
    if (!unwritten)
        return 0;
    long err = tracelog_flush(&writer);
    if (err == 0 && file_end.ended)
        err = file_end_update();
    if (err != 0) {
        log_failed(err);
        return err;
    }
    unwritten = 0;
    return 0;
}

/* FILTER_FLUSH and FILTER_STOP: everything kept so far on the log, and a
 * log file's blocks out of the buffer manager onto the disk. */
static long flush_everything(void)
{
    long err = flush_log();
    if (err == 0 && log_file >= 0)
        err = fs_sync();
    return err;
}

/* ---- writing the partly filled block within a second ---- */

static long timer = -1;                /* the timer server */
static int alarm_pending;

/* Asks the timer for an alarm a second from now, if the log has
 * something unwritten and none is pending. */
static void arm_flush_alarm(void)
{
    if (alarm_pending || timer < 0 || !unwritten || log_state == LOG_FAILED)
        return;
    long link = dm_createlink(CHANNEL_ALARM, 0, 0, 0, 0);
    if (link < 0)
        return;
    struct sv_call c = { .op = TIMER_ALARM, .arg = { (int64_t)FLUSH_AFTER_NS, 0 }, .pass = link };
    alarm_pending = sv_call(timer, &c) == 0;
}

/* ---- streams: one per metered process ---- */

struct stream {
    int      used, ended;              /* ended: its last batch came (final) */
    dm_pid   pid;
    uint64_t next;                     /* the sequence number expected next */
    uint64_t gaps;                     /* records missing from its numbering */
    uint64_t lost_said;                /* records its kernel said were lost (batch.lost) */
    uint64_t unexplained;              /* gaps beyond lost_said, already counted lost */
};
static struct stream streams[STREAMS_MAX];   /* open addressing, by pid */
static int warned_full, warned_gap, warned_order;

/* The stream of `pid`, new if it was not seen before; 0 if the table is full. */
static struct stream *stream_of(dm_pid pid)
{
    uint32_t i = (uint32_t)((pid * 0x9e3779b97f4a7c15ull) >> (64 - STREAMS_BITS));
    for (uint32_t probes = 0; probes < STREAMS_MAX; probes++, i = (i + 1) % STREAMS_MAX) {
        if (streams[i].used && streams[i].pid == pid)
            return &streams[i];
        if (!streams[i].used) {
            streams[i] = (struct stream){ .used = 1, .pid = pid };
            stats.streams++;
            return &streams[i];
        }
    }
    if (!warned_full)
        printf("filter %s: more than %u processes: the records of new ones are not checked for gaps\n", name,
               STREAMS_MAX);
    warned_full = 1;
    return 0;
}

/* Whether process pid's records come to this filter (it has a stream here). */
static int stream_known(dm_pid pid)
{
    uint32_t i = (uint32_t)((pid * 0x9e3779b97f4a7c15ull) >> (64 - STREAMS_BITS));
    for (uint32_t probes = 0; probes < STREAMS_MAX && streams[i].used; probes++, i = (i + 1) % STREAMS_MAX)
        if (streams[i].pid == pid)
            return 1;
    return 0;
}

/* ---- forwarding summaries (FILTER_FORWARD) ---- */

static long forward_link = -1;         /* to the consumer, while forwarding */
static uint64_t forward_interval_ns;
static uint64_t forward_sequence;      /* summaries sent to the consumer */
static int forward_alarm_pending;
static struct meter_summary summary;   /* the interval's, being filled */

/* A selected record, into the summary if one is being filled. */
static void forward_record(const struct meter_header *h)
{
    if (forward_link < 0)
        return;
    int sender_metered = 0;
    if (h->traceType == MT_RECEIVE)
        sender_metered = stream_known(((const struct meter_RECEIVE *)(h + 1))->fromTask);
    meter_summary_add(&summary, h, sender_metered);
}

/* Asks the timer for the alarm that ends the summary's interval. */
static void arm_forward_alarm(void)
{
    if (forward_alarm_pending || timer < 0 || forward_link < 0)
        return;
    long link = dm_createlink(CHANNEL_FORWARD, 0, 0, 0, 0);
    if (link < 0)
        return;
    struct sv_call c = { .op = TIMER_ALARM, .arg = { (int64_t)forward_interval_ns, 0 }, .pass = link };
    forward_alarm_pending = sv_call(timer, &c) == 0;
}

/* Forwarding ends (the consumer asked, or is gone). */
static void forward_stop(void)
{
    if (forward_link >= 0)
        dm_destroylink(forward_link);
    forward_link = -1;
}

/* The interval is over: the summary goes to the consumer, a new one begins.
 * A consumer whose queue is full loses it (counted); one that is gone ends
 * the forwarding. */
static void forward_summary(void)
{
    if (forward_link < 0)
        return;
    uint64_t now = dm_clock_ns();
    summary.head.end_ns = now;
    uint32_t len = meter_summary_pack(&summary);
    long err = dm_send(forward_link, &summary, len, DM_NO_LINK);
    if (err == 0)
        stats.summaries++;
    else if (err == E_QFULL || err == E_NOMEM)
        stats.summaries_lost++;
    else {
        printf("filter %s: its summaries' consumer is gone (%s): forwarding stops\n", name, dm_error_name(err));
        forward_stop();
        return;
    }
    meter_summary_begin(&summary, ++forward_sequence, dm_machine(), now);
}

/* FILTER_FORWARD: summaries every arg0 ms over the link passed (which the
 * filter keeps); arg0 0 (and no link) stops forwarding. */
static long forward_start(const struct dm_msg_info *info, const struct sv_request *q,
                          struct server_answer *answer)
{
    int64_t ms = q->arg[0];
    if (ms == 0 && info->link < 0) {
        forward_stop();
        return 0;
    }
    if (ms < FORWARD_MIN_MS || ms > FORWARD_MAX_MS || info->link < 0)
        return E_INVAL;
    if (timer < 0)
        return E_STATE;                  /* no timer: no intervals */
    forward_stop();
    forward_link = info->link;
    answer->link_kept = 1;
    forward_interval_ns = (uint64_t)ms * 1000000u;
    forward_sequence = 0;
    meter_summary_begin(&summary, 0, dm_machine(), dm_clock_ns());
    arm_forward_alarm();
    return 0;
}

/* Gaps in a stream's numbering that its kernel's loss counts do not
 * explain are records lost too: counted once, with a warning. */
static void count_unexplained(struct stream *st)
{
    uint64_t beyond = st->gaps > st->lost_said ? st->gaps - st->lost_said : 0;
    if (beyond <= st->unexplained)
        return;
    if (!warned_gap) {
        char id[24];
        printf("filter %s: process %s's records have gaps its kernel did not count as lost; counted lost\n", name,
               dm_pid_string(st->pid, id));
        warned_gap = 1;
    }
    lose(beyond - st->unexplained);
    st->unexplained = beyond;
}

/* ---- meter batches ---- */

/* Whether a batch of n bytes is what a kernel sends (record.h): the
 * magic, at most METER_BATCH_RECORDS records filling it exactly, each of a
 * known type and as long as that type's records, of the batch's process,
 * numbered in increasing order. *last: the last record's number. */
static int batch_is_sound(const uint8_t *message, uint32_t n, uint64_t *last)
{
    static size_t record_length[METER_NTYPES];     /* by type; for 0, no type, a length no record has */
    if (!record_length[MT_SEND]) {
        record_length[0] = SIZE_MAX;
        for (uint32_t t = 1; t < METER_NTYPES; t++)
            record_length[t] = sizeof(struct meter_header) + meter_body_layout(t)->size;
    }
    const struct meter_batch *b = (const struct meter_batch *)message;
    if (n < sizeof *b || b->magic != METER_BATCH_MAGIC || b->records > METER_BATCH_RECORDS)
        return 0;
    const uint8_t *at = message + sizeof *b, *end = message + n;
    uint64_t previous = 0;
    for (uint32_t i = 0; i < b->records; i++) {
        const struct meter_header *h = (const struct meter_header *)at;
        if ((size_t)(end - at) < sizeof *h)
            return 0;
        size_t type = h->traceType;
        if (type >= METER_NTYPES)
            return 0;
        size_t length = record_length[type];
        if (h->length != length || (size_t)(end - at) < length || h->pid != b->pid ||
            (i > 0 && h->sequence <= previous))
            return 0;
        previous = h->sequence;
        at += length;
    }
    *last = previous;
    return at == end;
}

/* One record: the rules decide whether it is kept, and which fields, and
 * whether it is forwarded (without rules, take_batch forwards every record). */
static void select_record(const struct meter_header *h)
{
    uint32_t described;
    if (keep_everything) {
        keep(h, meter_all_fields(h->traceType));
    } else if (rules_select(&rules, &description, (const uint8_t *)h, h->length, &described)) {
        keep(h, kept_fields(h->traceType, described));
        forward_record(h);
    } else {
        stats.dropped++;
    }
}

static void take_batch(const uint8_t *message, uint32_t n)
{
    const struct meter_batch *b = (const struct meter_batch *)message;
    const struct meter_header *first = (const struct meter_header *)(b + 1);
    uint64_t last;
    if (!batch_is_sound(message, n, &last)) {
        stats.refused++;
        return;
    }
    struct stream *st = stream_of(b->pid);
    if (st && st->ended)   /* metered again after its stream ended: numbered from 0 again */
        *st = (struct stream){ .used = 1, .pid = st->pid };
    if (st && b->records > 0 && first->sequence < st->next) {
        if (!warned_order)
            printf("filter %s: a batch out of order (a record numbered again); refused\n", name);
        warned_order = 1;
        stats.refused++;
        return;
    }
    stats.batches++;
    stats.received += b->records;
    lose(b->lost);
    if (st && b->records > 0) {   /* numbers in increasing order: what is missing is the span less the records */
        st->gaps += last + 1 - st->next - b->records;
        st->next = last + 1;
    }
    const uint8_t *at = (const uint8_t *)first;
    for (uint32_t i = 0; keep_everything && forward_link >= 0 && i < b->records; i++) {
        const struct meter_header *h = (const struct meter_header *)at;
        forward_record(h);
        at += h->length;
    }
    at = (const uint8_t *)first;
    for (uint32_t i = 0; i < b->records;) {
        uint32_t bytes, whole = 0;
        if (keep_everything && log_state == LOG_WRITING)   /* no rules: as many as fit, in one go */
            whole = tracelog_append_whole(&writer, at, b->records - i, &bytes);
        if (whole) {
            stats.kept += whole;
            unwritten = 1;
            i += whole;
            at += bytes;
            continue;
        }
        const struct meter_header *h = (const struct meter_header *)at;
        select_record(h);                 /* by the rules; or the one that starts a new block */
        i++;
        at += h->length;
    }
    if (st) {
        st->lost_said += b->lost;
        count_unexplained(st);
        st->ended = b->final;
    }
}

/* ---- requests ---- */

static uint8_t message[DM_MSG_MAX] __attribute__((aligned(8)));
static int stopping;
static void dispatch(const struct dm_msg_info *info, long n);

static void stop(long reply) __attribute__((noreturn));

static void unregister(void)
{
    filter_unregister(name);
}

/* FILTER_STOP: takes the batches already queued, writes everything out,
 * leaves the switchboard, answers and ends. */
static void stop(long reply)
{
    stopping = 1;
    for (int i = 0; i < DM_QUEUE_MAX; i++) {   /* what was queued; not batches that keep coming */
        struct dm_msg_info info;
        long n = dm_areceive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0)
            break;
        dispatch(&info, n);
    }
    long status = flush_everything();
    unregister();
    if (log_state == LOG_NONE)
        printf("filter %s: stopped: %lu records selected, %lu lost, %lu summaries forwarded\n", name,
               (unsigned long)stats.kept, (unsigned long)stats.lost, (unsigned long)stats.summaries);
    else
        printf("filter %s: stopped: %lu records kept, %lu lost, %lu log blocks\n", name, (unsigned long)stats.kept,
               (unsigned long)stats.lost, (unsigned long)stats.log_blocks);
    sv_reply(reply, status, 0, 0, 0, DM_NO_LINK);
    exit(0);
}

/* A request from a process (server_serve): FILTER_STATS, FILTER_FLUSH,
 * FILTER_STOP; any other is refused and counted. */
static void handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                   struct server_answer *answer)
{
    (void)len;
    switch (q->op) {
    case FILTER_STATS:
        answer->data = &stats;
        answer->len = sizeof stats;
        return;
    case FILTER_FLUSH:
        answer->status = flush_everything();
        return;
    case FILTER_FORWARD:
        answer->status = forward_start(info, q, answer);
        return;
    case FILTER_STOP:
        if (!stopping && info->reply >= 0)
            stop(info->reply);
        return;   /* another stop, come while stopping */
    }
    stats.refused++;
    answer->status = E_BADREQ;
}

/* A message from a process: a request, or refused and counted when no one
 * is to be answered or it is too short to be one. Only FILTER_FORWARD
 * keeps the link that came with it (server_serve destroys the others). */
static void answer(const struct dm_msg_info *info, uint32_t n)
{
    if (info->reply < 0) {
        if (info->link >= 0)
            dm_destroylink(info->link);
        stats.refused++;
        return;
    }
    if (server_serve(info, message, n, handle))
        stats.refused++;
}

/* One message of any kind. */
static void dispatch(const struct dm_msg_info *info, long n)
{
    if (info->link >= 0 && (info->flags & DM_MSG_FROM_KERNEL || info->channel != CHANNEL_METER))
        dm_destroylink(info->link);   /* a link comes only with a request, FILTER_FORWARD's */
    if (info->flags & DM_MSG_FROM_KERNEL) {
        if (info->reply >= 0)
            dm_destroylink(info->reply);   /* a batch is not answered: the link must not pile up */
        if (info->flags & DM_MSG_TRUNCATED)
            stats.refused++;
        else
            take_batch(message, (uint32_t)n);
    } else if (info->channel == CHANNEL_ALARM) {
        alarm_pending = 0;
        flush_log();
    } else if (info->channel == CHANNEL_FORWARD) {
        forward_alarm_pending = 0;
        forward_summary();
    } else {
        answer(info, (uint32_t)n);
    }
}

/* ---- start ---- */

static void refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    exit(EXIT_REFUSED);
}

/* The log's identity: from the clock and our pid, so that the next log
 * written on this disk is all but sure to have another. */
static uint32_t new_log_id(void)
{
    uint64_t x = dm_clock_ns() ^ dm_self() * 0x9e3779b97f4a7c15ull;
    uint32_t id = (uint32_t)(x ^ (x >> 32));
    return id ? id : 1;
}

static void start_log(const char *log_path, int live)
{
    open_trace_disk();
    if (log_path)
        open_log_file(log_path);
    if (live)
        open_live_channel();
    if (!disk.present && log_file < 0 && live_link < 0)
        refuse("filter %s: nowhere to write the log: no trace disk (slot 3), no LOGFILE and no -l", name);
    int err = tracelog_begin(&writer, name, dm_machine(), new_log_id(), write_block, 0);
    if (err != 0)
        refuse("filter %s: cannot write the log's header: %s", name, err < 0 ? dm_error_name(err) : "?");
    if (disk.present) {
        if (writer.next_index >= disk.blocks)
            refuse("filter %s: the trace disk (%lu blocks) is too small for a log", name,
                   (unsigned long)disk.blocks);
        writer.capacity = disk.blocks;
    }
    unwritten = 1;   /* the first record block, empty: the log is readable from the start */
    flush_log();
}

int main(int argc, char **argv)
{
    int live = argc > 1 && strcmp(argv[1], "-l") == 0;
    int no_log = !live && argc > 1 && strcmp(argv[1], "-n") == 0;
    argc -= live + no_log;
    argv += live + no_log;
    if (argc < 4 || argc > 5 || (no_log && argc != 4))
        refuse("usage: filter [-l] NAME DESCRIPTION RULES [LOGFILE]; filter -n NAME DESCRIPTION RULES");
    name = argv[1];
    if (strlen(name) == 0 || strlen(name) > FILTER_NAME_MAX ||
        strlen(name) >= sizeof ((struct tracelog_header *)0)->filter)
        refuse("filter: %s: a name of 1 to %u characters", name, (unsigned)FILTER_NAME_MAX);
    load_description(argv[2]);
    load_rules(argv[3]);
    long running = filter_lookup(name);
    if (running >= 0)      /* before the log: its trace disk and its name are another filter's */
        refuse("filter %s: a filter named %s already runs", name, name);
    if (no_log)
        log_state = LOG_NONE;
    else
        start_log(argc == 5 ? argv[4] : 0, live);
    timer = sb_lookup("timer");
    if (timer < 0)
        printf("filter %s: no timer: the partly filled block is written only on FILTER_FLUSH, and nothing is "
               "forwarded\n", name);
    long link = dm_createlink(CHANNEL_METER, 0, 0, 0, 0);
    long err = link < 0 ? link : filter_register(name, link);
    if (err == E_STATE)
        refuse("filter %s: a filter named %s already runs", name, name);
    if (err < 0)
        refuse("filter %s: cannot register with the switchboard: %s", name, dm_error_name(err));
    char where[160];
    int at = 0;
    if (disk.present)
        at += snprintf(where + at, sizeof where - (size_t)at, "trace disk (%lu blocks)", (unsigned long)disk.blocks);
    if (log_file >= 0)
        at += snprintf(where + at, sizeof where - (size_t)at, "%s%s", at ? " and " : "", argv[4]);
    if (live_link >= 0)
        snprintf(where + at, sizeof where - (size_t)at, "%slive to the host", at ? " and " : "");
    if (no_log)
        printf("filter %s: keeping no log: what it selects is only forwarded\n", name);
    else
        printf("filter %s: logging to %s\n", name, where);
    pm_ready();     /* serving: a process manager that started it at boot starts what it meters */
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        dispatch(&info, n);
        arm_flush_alarm();
        arm_forward_alarm();
    }
}
