/*
 * analysis/commands/cmd_live.c — `dpm live`: follows a filter's live stream
 * as the cluster writes it and redraws DPM's real-time displays every
 * interval (load/live_follow.h reads the stream, models/live_view.h draws).
 */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands/commands.h"
#include "load/live_follow.h"
#include "models/live_view.h"

static const char live_help[] =
"NAME\n"
"    dpm live - DPM's real-time displays of a filter's live stream\n"
"\n"
"SYNOPSIS\n"
"    dpm live [--interval SECONDS] [--figure NAME] [--top N] [--threshold PERCENT]\n"
"             [--step BLOCKS] [--once | --frames N] STREAM\n"
"\n"
"DESCRIPTION\n"
"    Follows STREAM, the file a filter started with `filter start -l` streams\n"
"    its log into (DIR/liveK.bin for machine K under `make run TRACE=DIR`),\n"
"    like tail -f: it reads each whole block as it arrives; a log header\n"
"    (its description parsed) starts a new log and everything over; a record\n"
"    block gives its records not yet seen (the block being filled comes again\n"
"    each time it grows: only its new entries count). Every interval of host\n"
"    time it draws a frame of the interval since the frame before:\n"
"      - the stream: log, filter, records (and how many arrived), records\n"
"        lost (the log's count), missing in sequence gaps, and stream\n"
"        blocks missing (a gap in the blocks' numbering);\n"
"      - the interval's length on each machine's clock (guest time: the\n"
"        records' TIME);\n"
"      - the traffic matrix of the interval: the pairs of processes that\n"
"        talked, the top N by messages, with messages and bytes;\n"
"      - per process: send and receive rates per second of guest time on\n"
"        its machine's clock, its queue length now (+1 at MESSAGEQUEUED,\n"
"        -1 at the RECEIVE of a queued message), and the change of each\n"
"        rate since the interval before (the first derivative), marked *\n"
"        when it changed by more than the threshold: a phase change;\n"
"      - a history line: a sparkline of one figure at each frame so far\n"
"        (the last 120), its value now and its largest.\n"
"    On a terminal each frame replaces the one before (the screen is\n"
"    cleared); otherwise frames follow one another, separated by a line of\n"
"    dashes. Memory holds a row per process and per pair of processes, the\n"
"    messages in flight and the history line: it does not grow with the\n"
"    stream.\n"
"\n"
"OPTIONS\n"
"    --interval SECONDS  host time between frames (default 1; 0 with --step)\n"
"    --figure NAME       the history line's figure: rate (the total send rate,\n"
"                        the default), rate:PROCESS (its sends and receives per\n"
"                        second) or queue:PROCESS (its queue length); PROCESS\n"
"                        is a program name or a pid M.S.G\n"
"    --top N             pairs shown in the traffic matrix (default 10)\n"
"    --threshold PERCENT a rate changing by more than this marks a phase\n"
"                        change (default 50; from 0 to anything is one)\n"
"    --step BLOCKS       take at most BLOCKS blocks of the stream per frame:\n"
"                        replays a saved stream an interval at a time\n"
"    --once              draw one frame of what is there, and end\n"
"    --frames N          end after N frames (default: run until killed)\n"
"\n"
"EXIT STATUS\n"
"    0 success; 1 the stream cannot be read or is damaged (the file and the\n"
"    record or block are named); 2 bad usage.\n"
"\n"
"EXAMPLE\n"
"    make run TRACE=build/traces           (then in the shell: filter start -l t - -)\n"
"    dpm live --figure queue:server build/traces/live0.bin\n";

struct live_options {
    double interval, threshold;
    const char *figure;
    unsigned long top, frames, step;
    const char *stream;
};

/* A number option's value: a non-negative number, or a usage error. */
static double number_value(const char *option, const char *value)
{
    char *end;
    double n = strtod(value, &end);
    if (end == value || *end || !(n >= 0) || n > 1e9)
        dpm_usage("live", "%s %s: expected a number", option, value);
    return n;
}

/* Read the command line into *o (exits on a usage error). */
static void live_arguments(struct live_options *o, int argc, char **argv)
{
    *o = (struct live_options){ 1, 50, "rate", 10, 0, 0, 0 };
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *name = argv[i];
        if (strcmp(name, "--once") == 0) {
            o->frames = 1;
            continue;
        }
        if (i + 1 == argc)
            dpm_usage("live", "%s needs a value, or is unknown", name);
        const char *value = argv[++i];
        if (strcmp(name, "--interval") == 0)
            o->interval = number_value(name, value);
        else if (strcmp(name, "--threshold") == 0)
            o->threshold = number_value(name, value);
        else if (strcmp(name, "--figure") == 0)
            o->figure = value;
        else if (strcmp(name, "--top") == 0)
            o->top = (unsigned long)number_value(name, value);
        else if (strcmp(name, "--frames") == 0)
            o->frames = (unsigned long)number_value(name, value);
        else if (strcmp(name, "--step") == 0)
            o->step = (unsigned long)number_value(name, value);
        else
            dpm_usage("live", "unknown option '%s'", name);
        if (o->frames == 0 && strcmp(name, "--frames") == 0)
            dpm_usage("live", "--frames 0: at least one frame");
    }
    if (i + 1 != argc)
        dpm_usage("live", "dpm live [OPTIONS] STREAM: one stream file");
    o->stream = argv[i];
}

/* Wait `seconds` of host time. */
static void wait_for(double seconds)
{
    struct timespec t = { (time_t)seconds, (long)((seconds - floor(seconds)) * 1e9) };
    while (nanosleep(&t, &t) != 0)
        ;
}

/* `dpm live` (the help text above): poll the stream, draw a frame, wait,
 * until the frames asked for are drawn. */
int cmd_live(int argc, char **argv)
{
    if (dpm_help_asked(argc, argv, live_help))
        return DPM_OK;
    struct live_options o;
    static struct live_view view;
    struct live_follower follower;
    struct dpm_error e;
    live_arguments(&o, argc, argv);
    if (live_view_init(&view, (unsigned)o.top, o.threshold, o.figure) < 0)
        dpm_usage("live", "--figure %s: expected rate, rate:PROCESS or queue:PROCESS", o.figure);
    if (live_open(&follower, o.stream, &e) < 0)
        dpm_fail("%s", e.text);
    struct live_sink sink = live_view_sink(&view);
    int terminal = isatty(fileno(stdout));
    for (unsigned long frame = 0; o.frames == 0 || frame < o.frames; frame++) {
        if (frame > 0 || o.frames != 1)
            wait_for(o.interval);
        if (live_poll(&follower, &sink, o.step, &e) < 0)
            dpm_fail("%s", e.text);
        fputs(terminal ? "\033[H\033[2J" : frame ? "----\n" : "", stdout);
        live_view_frame(&view, &follower, stdout);
        fflush(stdout);
    }
    live_close(&follower);
    live_view_free(&view);
    return DPM_OK;
}
