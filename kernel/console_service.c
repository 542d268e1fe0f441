/*
 * console_service.c — the console UART for the console server: requests
 * over its kernel link (KLINK_CONSOLE, dispatched by kreq.c) to write bytes
 * and to read what was typed.
 *
 * A write that does not fit into the UART's output queue, and a read when
 * nothing was typed, are answered later: the kernel keeps the request's
 * reply link (one write and one read at a time) and answers when the UART's
 * interrupt says there is room or input (dev/uart.c).
 */
#include "defs.h"

static int console_read_slot = -1;     /* the reply link of a waiting read */
static uint32_t console_read_max;
static int console_write_slot = -1;    /* the reply link of a write not yet queued */
static uint8_t console_pending[DM_MSG_MAX];
static uint32_t console_pending_len, console_pending_done;

static void console_push_pending(void);

/* A console request: KOP_CONS_WRITE, KOP_CONS_READ. *later is set when the
 * answer will come later. */
int64_t console_request(struct dm_kreq *q, uint32_t len, struct link *reply, uint64_t *value,
                        uint32_t *answer_len, int *later)
{
    if (q->op == KOP_CONS_WRITE) {
        uint32_t n = len - sizeof *q;
        const uint8_t *data = (const uint8_t *)(q + 1);
        uint32_t taken = uart_queue_output(data, n);
        *value = n;
        if (taken == n)
            return 0;
        if (console_write_slot >= 0 || !reply)
            return E_STATE;
        memcpy(console_pending, data, n);
        console_pending_len = n;
        console_pending_done = taken;
        if ((console_write_slot = kernel_keep_reply(reply)) < 0)
            return E_LINKFULL;
        *later = 1;
        return 0;
    }
    if (q->op == KOP_CONS_READ) {
        if (q->arg[0] <= 0 || !reply)
            return E_BADREQ;
        uint32_t max = q->arg[0] > DM_MSG_MAX - 16 ? DM_MSG_MAX - 16 : (uint32_t)q->arg[0];
        uint32_t n = uart_read_input(kernel_answer_data(), max);
        if (n) {
            *value = n;
            *answer_len = n;
            return 0;
        }
        if (console_read_slot >= 0)
            return E_STATE;
        if ((console_read_slot = kernel_keep_reply(reply)) < 0)
            return E_LINKFULL;
        console_read_max = max;
        *later = 1;
        return 0;
    }
    return E_NOSYS;
}

/* Bytes were typed (the UART's interrupt): answer the waiting read. */
void console_input_ready(void)
{
    if (console_read_slot < 0)
        return;
    uint8_t *data = kernel_answer_data();
    uint32_t n = uart_read_input(data, console_read_max);
    if (n) {
        int slot = console_read_slot;
        console_read_slot = -1;
        kernel_reply_slot(slot, KOP_CONS_READ, 0, n, data, n);
    }
}

/* The UART's output queue has room (its interrupt): go on with the
 * waiting write. */
void console_output_ready(void)
{
    if (console_write_slot >= 0)
        console_push_pending();
}

/* Queue as much pending output as fits; answer the writer when all did. */
static void console_push_pending(void)
{
    console_pending_done += uart_queue_output(console_pending + console_pending_done,
                                              console_pending_len - console_pending_done);
    if (console_pending_done == console_pending_len && console_write_slot >= 0) {
        int slot = console_write_slot;
        console_write_slot = -1;
        kernel_reply_slot(slot, KOP_CONS_WRITE, 0, console_pending_len, 0, 0);
    }
}
