/*
 * server.c — the system servers' shared library (server.h): registering,
 * answering a request as its handler says, the loop of a server with one
 * kind of message, and requests to a kernel over a kernel link.
 */
#include <string.h>
#include "server.h"

long server_register(const char *name, uint32_t channel)
{
    long status = sb_register(name, dm_createlink(channel, 0, 0, 0, 0));
    pm_ready();
    return status;
}

long server_offer(const char *name, uint32_t channel)
{
    long self = dm_createlink(channel, 0, 0, 0, 0);
    struct sv_call serve = { .op = PM_SERVE, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = self };
    return sv_call(SLOT_PM, &serve);
}

void server_serve(const struct dm_msg_info *info, const void *message, long n, server_handler *handle)
{
    struct server_answer answer = { .status = E_BADREQ, .pass = DM_NO_LINK };
    if (n >= (long)sizeof(struct sv_request)) {
        answer.status = 0;
        handle(info, (const struct sv_request *)message, (uint32_t)n, &answer);
    }
    if (info->link >= 0 && !answer.link_kept)
        dm_destroylink(info->link);
    if (answer.later)
        return;
    if (info->reply >= 0)
        sv_reply(info->reply, answer.status, answer.value, answer.data, answer.len, answer.pass);
    else if (answer.pass >= 0)
        dm_destroylink(answer.pass);
}

void server_run(server_handler *handle)
{
    static uint8_t message[DM_MSG_MAX] __attribute__((aligned(8)));
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message - 1, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        message[n] = 0;
        server_serve(&info, message, n, handle);
    }
}

long kernel_request(long slot, struct kernel_request *k)
{
    static uint8_t out[DM_MSG_MAX] __attribute__((aligned(8))), in[DM_MSG_MAX] __attribute__((aligned(8)));
    struct dm_kreq *q = (struct dm_kreq *)out;
    k->link = DM_NO_LINK;
    k->answer_len = 0;
    if (k->len > sizeof out - sizeof *q)
        return E_TOOBIG;
    memset(q, 0, sizeof *q);
    q->op = k->op;
    q->pid = k->pid;
    q->arg[0] = k->arg[0];
    q->arg[1] = k->arg[1];
    if (k->len)
        memcpy(q + 1, k->data, k->len);
    struct dm_msg_info info;
    long n = dm_call(slot, out, sizeof *q + k->len, k->pass, in, sizeof in, &info);
    if (n < 0)
        return n;
    k->link = info.link;
    const struct dm_kreply *r = (const struct dm_kreply *)in;
    if ((size_t)n < sizeof *r)
        return E_BADREQ;
    k->value = r->value;
    k->answer_len = (uint32_t)(n - sizeof *r);
    if (k->answer)
        memcpy(k->answer, r + 1, k->answer_len < k->answer_cap ? k->answer_len : k->answer_cap);
    return r->status;
}
