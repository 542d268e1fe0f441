/*
 * console.c — the console server: the only process that talks to the UART
 * (over the console device link the process manager gave it, slot 3).
 * It prints what processes write, and turns typed characters into lines:
 * echo, backspace, Ctrl-U (erase the line), Ctrl-D (end of input).
 * Readers wait in order; each read gets at most one line.
 *
 * Bytes >= 0x80 are kept as typed (UTF-8); backspace erases a whole UTF-8
 * character. A line longer than the editing buffer (LINE_MAX) is handed on
 * in pieces as it is typed, and editing reaches back only into its last
 * piece; the reader sees the whole line, and judges its length itself.
 *
 * No input is lost: the kernel is asked for more (at most INPUT_CHUNK
 * bytes) only when a reader waits and every finished line has been read,
 * so `cooked` never holds more than one line's pieces and one chunk; until
 * then, what is typed waits in the kernel, then in the UART (dev/uart.c).
 */
#include <string.h>
#include "dmlib.h"
#include "server.h"

#define DEVICE_SLOT      3
#define CHANNEL_REQUEST  0
#define CHANNEL_INPUT    1
#define LINE_MAX         1024
#define INPUT_CHUNK      256
#define NREADERS         32

static char line[LINE_MAX];          /* the line being typed (its last piece) */
static uint32_t line_len;
static int line_continues;           /* pieces of the line were handed on already */
static char cooked[LINE_MAX + INPUT_CHUNK];   /* finished lines (and pieces) not yet read */
static uint32_t cooked_len;
static int eof_pending;              /* Ctrl-D on an empty line */
static struct { long reply; uint32_t max; } readers[NREADERS];
static int nreaders;
static int read_outstanding;

/* Print len bytes (as many as one request holds). */
static void device_write(const void *data, uint32_t len)
{
    if (len > DM_MSG_MAX - sizeof(struct dm_kreq))
        len = DM_MSG_MAX - sizeof(struct dm_kreq);
    struct kernel_request k = { .op = KOP_CONS_WRITE, .data = data, .len = len, .pass = DM_NO_LINK };
    kernel_request(DEVICE_SLOT, &k);
}

/* Ask the kernel for input; its answer arrives on CHANNEL_INPUT. */
static void device_request_input(void)
{
    if (read_outstanding)
        return;
    struct dm_kreq q = { .op = KOP_CONS_READ, .arg = { INPUT_CHUNK } };
    long reply = dm_createlink(CHANNEL_INPUT, 0, LINK_REPLY, 0, 0);
    if (reply >= 0 && dm_send(DEVICE_SLOT, &q, sizeof q, reply) == 0)
        read_outstanding = 1;
    else if (reply >= 0)
        dm_destroylink(reply);
}

/* Answer waiting readers from the finished lines. */
static void serve_readers(void)
{
    while (nreaders > 0 && (cooked_len > 0 || eof_pending)) {
        uint32_t n = 0;
        if (cooked_len > 0) {
            while (n < cooked_len && n < readers[0].max && cooked[n] != '\n')
                n++;
            if (n < cooked_len && n < readers[0].max)
                n++;   /* the newline */
        } else {
            eof_pending = 0;
        }
        sv_reply(readers[0].reply, 0, n, cooked, n, DM_NO_LINK);
        memmove(cooked, cooked + n, cooked_len - n);
        cooked_len -= n;
        memmove(readers, readers + 1, (size_t)(nreaders - 1) * sizeof readers[0]);
        nreaders--;
    }
}

/* Hand the line typed so far on to the readers: the whole line (with
 * its newline), or, when the editing buffer is full, its next piece.
 * Room is certain: input is asked for only when `cooked` is empty, and one
 * answer (INPUT_CHUNK bytes) finishes at most one line or one piece after
 * the pieces it continues. */
static void hand_on_line(int finished)
{
    if (finished)
        line[line_len++] = '\n';
    memcpy(cooked + cooked_len, line, line_len);
    cooked_len += line_len;
    line_len = 0;
    line_continues = !finished;
}
_Static_assert(sizeof cooked >= LINE_MAX + INPUT_CHUNK, "cooked holds a line's last piece and one chunk of input");

/* Erase the last character of the line being typed (a UTF-8 character's
 * lead byte and its continuation bytes, 10xxxxxx); returns whether there
 * was one. */
static int erase_character(void)
{
    if (line_len == 0)
        return 0;
    while (line_len > 1 && ((unsigned char)line[line_len - 1] & 0xc0) == 0x80)
        line_len--;
    line_len--;
    return 1;
}

/* Line editing on typed characters, with echo. */
static void typed(const char *p, uint32_t n)
{
    char echo[512];
    uint32_t e = 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (e + 4 > sizeof echo) {
            device_write(echo, e);
            e = 0;
        }
        if (c == '\r' || c == '\n') {
            echo[e++] = '\n';
            hand_on_line(1);
        } else if (c == 0x7f || c == '\b') {
            if (erase_character()) {
                memcpy(echo + e, "\b \b", 3);
                e += 3;
            }
        } else if (c == 0x15) {               /* Ctrl-U */
            while (erase_character()) {
                if (e + 3 > sizeof echo) {
                    device_write(echo, e);
                    e = 0;
                }
                memcpy(echo + e, "\b \b", 3);
                e += 3;
            }
        } else if (c == 0x04) {               /* Ctrl-D */
            if (line_len == 0 && !line_continues)
                eof_pending = 1;
            else
                hand_on_line(1);
        } else if (c >= ' ' || c == '\t') {   /* printable ASCII, and every byte of UTF-8 */
            if (line_len == LINE_MAX - 1)
                hand_on_line(0);
            line[line_len++] = (char)c;
            echo[e++] = (char)c;
        }
    }
    if (e)
        device_write(echo, e);
}

/* A request: CONS_WRITE is printed at once; CONS_READ waits in line for
 * a finished line (answered by serve_readers). */
static void handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                   struct server_answer *answer)
{
    if (q->op == CONS_WRITE) {
        device_write(q + 1, len - (uint32_t)sizeof *q);
        answer->value = (int64_t)len - (int64_t)sizeof *q;
    } else if (q->op == CONS_READ && info->reply >= 0 && nreaders < NREADERS && q->arg[0] > 0) {
        readers[nreaders].reply = info->reply;
        readers[nreaders].max = q->arg[0] > (int64_t)SV_DATA_MAX ? SV_DATA_MAX : (uint32_t)q->arg[0];
        nreaders++;
        answer->later = 1;
        serve_readers();
    } else {
        answer->status = q->op == CONS_READ ? E_QFULL : E_NOSYS;
    }
}

int main(void)
{
    server_offer("console", CHANNEL_REQUEST);
    static uint8_t buffer[DM_MSG_MAX];
    for (;;) {
        if (nreaders > 0 && cooked_len == 0 && !eof_pending)
            device_request_input();
        struct dm_msg_info info;
        long n = dm_receive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        if (info.channel == CHANNEL_INPUT && (info.flags & DM_MSG_FROM_KERNEL)) {
            read_outstanding = 0;
            const struct dm_kreply *r = (const struct dm_kreply *)buffer;
            if ((size_t)n > sizeof *r && r->status == 0)
                typed((const char *)(r + 1), (uint32_t)(n - sizeof *r));
            serve_readers();
            continue;
        }
        server_serve(&info, buffer, n, handle);
    }
}
