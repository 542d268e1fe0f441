/*
 * render — the program of the bottleneck lab (docs/labs/bottleneck.md):
 * draws a picture of the Mandelbrot set with three shades on four machines
 * (render.h says how), and prints its hash.
 *
 *     render          (on a cluster of 4 machines or more: make run NODES=4)
 *
 * It prints what each shade drew, the picture's hash, and the time the
 * drawing took on this machine's clock:
 *
 *     render: shade 0 (1.1.1 on machine 1): 16 rows
 *     render: shade 1 (2.1.1 on machine 2): 16 rows
 *     render: shade 2 (3.1.1 on machine 3): 16 rows
 *     render: 48 rows of 512 pixels, 5730340 steps, picture fnv1a a1927bec424971a8
 *     render: drawn in 412 ms on machine 0's clock
 *
 * Exit status 0; 1 when something failed (said); 2 for bad arguments.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "render.h"

/* A shade: its pid, the link to it, and the rows it drew. */
struct shade {
    long pid;
    long link;
    uint32_t rows;
};

static struct shade shades[RENDER_SHADES];
static uint64_t picture = 0xcbf29ce484222325ull;   /* FNV-1a of the rows' hashes so far */
static uint64_t steps;

static int start_all(const char *name);
static int draw(void);
static void report(uint64_t ns);
static void stop_all(int status);

/* Say what failed; the exit status. */
static int failed(const char *what, long err)
{
    fprintf(stderr, "render: %s: %s (%s)\n", what, dm_error_name(err), dm_error_text(err));
    return 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: render   (on a cluster of 4 machines or more)\n");
        return 2;
    }
    if (dm_nodes() < 1 + RENDER_SHADES) {
        fprintf(stderr, "render: needs %u machines; the cluster has %u (make run NODES=%u)\n", 1 + RENDER_SHADES,
                dm_nodes(), 1 + RENDER_SHADES);
        return 1;
    }
    char name[SB_NAME_MAX];
    snprintf(name, sizeof name, RENDER_NAME_FORMAT, dm_machine(), PID_SLOT(dm_self()));
    long self = dm_createlink(0, 0, 0, 0, 0);
    long err = self < 0 ? self : sb_register(name, self);
    if (err < 0)
        return failed("registering at the switchboard", err);
    int status = start_all(name);
    struct sv_call remove = { .op = SB_REMOVE, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = DM_NO_LINK };
    sv_call(SLOT_SWITCHBOARD, &remove);
    uint64_t ns = dm_clock_ns();
    if (status == 0)
        status = draw();
    ns = dm_clock_ns() - ns;
    if (status == 0)
        report(ns);
    stop_all(status);
    return status;
}

/* Start the shades, each with render's name and its number as arguments,
 * and take each one's HELLO and the link it passes: 0, or 1 after saying
 * what failed. */
static int start_all(const char *name)
{
    for (uint32_t i = 0; i < RENDER_SHADES; i++) {
        char number[8];
        char *argv[] = { "shade", (char *)name, number, 0 };
        snprintf(number, sizeof number, "%u", i);
        shades[i].link = -1;
        shades[i].pid = pm_run_on((int)render_shade_machine(i), "shade", 3, argv, 0);
        if (shades[i].pid < 0) {
            long err = shades[i].pid;
            shades[i].pid = 0;
            return failed("starting a shade", err);
        }
    }
    for (uint32_t heard = 0; heard < RENDER_SHADES; heard++) {
        struct render_message hello;
        struct dm_msg_info info;
        long n = dm_receive(&info, &hello, sizeof hello, DM_ANY_CHANNEL);
        if (n != sizeof hello || hello.kind != RENDER_HELLO || info.link < 0 || hello.shade >= RENDER_SHADES ||
            (dm_pid)shades[hello.shade].pid != info.sender || shades[hello.shade].link >= 0) {
            fprintf(stderr, "render: a message that is no HELLO of a shade render started (%ld bytes)\n", n);
            return 1;
        }
        shades[hello.shade].link = info.link;
    }
    return 0;
}

/* The picture's hash so far, `h`, continued over the 8 bytes of a row's
 * hash: FNV-1a of the rows' hashes in their order, as dm_fnv1a would make
 * it of them all. */
static uint64_t fnv1a_more(uint64_t h, uint64_t row_hash)
{
    for (uint32_t i = 0; i < sizeof row_hash; i++)
        h = (h ^ ((row_hash >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return h;
}

/* Draw the picture row by row: send row r to shade r mod RENDER_SHADES and
 * take its answer before the next, so that the rows' hashes come in their
 * order and the picture's hash is made as they come: 0, or 1 after saying
 * what went wrong. A function of its own (noinline), so that the analyzer
 * names it. */
static __attribute__((noinline)) int draw(void)
{
    for (uint32_t r = 0; r < RENDER_ROWS; r++) {
        struct shade *s = &shades[r % RENDER_SHADES];
        struct render_message row = { .kind = RENDER_ROW, .row = r }, done;
        long err = dm_send(s->link, &row, sizeof row, DM_NO_LINK);
        if (err < 0)
            return failed("handing out a row", err);
        struct dm_msg_info info;
        long n = dm_receive(&info, &done, sizeof done, DM_ANY_CHANNEL);
        if (n != sizeof done || done.kind != RENDER_DONE || done.row != r || (dm_pid)s->pid != info.sender) {
            fprintf(stderr, "render: a message that is no answer for row %u (%ld bytes)\n", r, n);
            return 1;
        }
        s->rows++;
        steps += done.steps;
        picture = fnv1a_more(picture, done.hash);
    }
    return 0;
}

/* What each shade drew, the picture's hash and the time drawing took. */
static void report(uint64_t ns)
{
    for (uint32_t i = 0; i < RENDER_SHADES; i++) {
        char id[24];
        printf("render: shade %u (%s on machine %u): %u rows\n", i, dm_pid_string((dm_pid)shades[i].pid, id),
               render_shade_machine(i), shades[i].rows);
    }
    printf("render: %u rows of %u pixels, %llu steps, picture fnv1a %016llx\n", RENDER_ROWS, RENDER_WIDTH,
           (unsigned long long)steps, (unsigned long long)picture);
    printf("render: drawn in %llu ms on machine 0's clock\n", (unsigned long long)(ns / 1000000));
}

/* Tell every shade to quit (after a failure, end it) and wait for each to
 * end, so that render ends last. */
static void stop_all(int status)
{
    for (uint32_t i = 0; i < RENDER_SHADES; i++) {
        struct shade *s = &shades[i];
        struct render_message quit = { .kind = RENDER_QUIT };
        int64_t exit_status;
        if (s->pid == 0)
            continue;
        if (status != 0 || s->link < 0 || dm_send(s->link, &quit, sizeof quit, DM_NO_LINK) < 0)
            pm_kill((dm_pid)s->pid);
        pm_wait((dm_pid)s->pid, &exit_status);
    }
}
