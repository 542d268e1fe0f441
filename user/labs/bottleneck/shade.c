/*
 * shade — a shade of render (render.h; the bottleneck lab's program).
 * render starts it:
 *
 *     shade NAME NUMBER     (NAME: render's name at the switchboard)
 *
 * It makes the palette, finds render by NAME and says HELLO, passing a link
 * to itself; then draws each ROW it is sent (draw_row) and answers render
 * with a DONE, until QUIT. It prints nothing unless something fails. Exit
 * status 0 after QUIT; 1 when render cannot be reached or a message is
 * wrong; 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include "dmlib.h"
#include "render.h"

static uint32_t number;                  /* this shade's number */
static long render = -1;                 /* link to render, found at the switchboard */
static uint32_t palette[PALETTE_SIZE];

static int say_hello(const char *name);
static int serve(void);
static void draw_row(uint32_t row, struct render_message *done);

int main(int argc, char **argv)
{
    char *end;
    if (argc != 3 || (number = (uint32_t)strtoul(argv[2], &end, 10)) >= RENDER_SHADES || *end) {
        fprintf(stderr, "usage: shade NAME NUMBER   (render starts it)\n");
        return 2;
    }
    palette_make(palette);
    if (say_hello(argv[1]) != 0)
        return 1;
    return serve();
}

/* Find render and send it HELLO with a link to this process: 0, or 1 after
 * saying why not. */
static int say_hello(const char *name)
{
    render = sb_lookup(name);
    long self = render < 0 ? render : dm_createlink(0, 0, 0, 0, 0);
    struct render_message hello = { .kind = RENDER_HELLO, .shade = number };
    long err = self < 0 ? self : dm_send(render, &hello, sizeof hello, self);
    if (err < 0) {
        fprintf(stderr, "shade %u: cannot reach render %s: %s\n", number, name, dm_error_text(err));
        return 1;
    }
    return 0;
}

/* Draw each row render sends, and answer it, until QUIT: the exit status.
 * A function of its own (noinline), so that the analyzer names it. */
static __attribute__((noinline)) int serve(void)
{
    for (;;) {
        struct render_message message;
        struct dm_msg_info info;
        long n = dm_receive(&info, &message, sizeof message, DM_ANY_CHANNEL);
        if (n == sizeof message && message.kind == RENDER_QUIT)
            return 0;
        if (n != sizeof message || message.kind != RENDER_ROW || message.row >= RENDER_ROWS) {
            fprintf(stderr, "shade %u: a message that is no row (%ld bytes)\n", number, n);
            return 1;
        }
        struct render_message done = { .kind = RENDER_DONE, .shade = number, .row = message.row };
        draw_row(message.row, &done);
        long err = dm_send(render, &done, sizeof done, DM_NO_LINK);
        if (err < 0) {
            fprintf(stderr, "shade %u: answering render: %s\n", number, dm_error_text(err));
            return 1;
        }
    }
}

/* Draw a row: its step counts, their colours, and the colours' hash, into
 * *done. A function of its own (noinline), so that the analyzer names it. */
static __attribute__((noinline)) void draw_row(uint32_t row, struct render_message *done)
{
    uint16_t steps[RENDER_WIDTH];
    uint32_t colours[RENDER_WIDTH];
    done->steps = render_row(row, steps);
    for (uint32_t p = 0; p < RENDER_WIDTH; p++)
        colours[p] = palette_colour(palette, steps[p]);
    done->hash = dm_fnv1a(colours, sizeof colours);
}
