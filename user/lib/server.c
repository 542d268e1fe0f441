/*
 * server.c — the system servers' shared library (server.h): registering,
 * and requests to a kernel over a kernel link. Answering a request and the
 * server loop are inline in server.h.
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

long kernel_request(long slot, struct kernel_request *k)
{
    /* A request without data and an answer without data (a disk block's
     * read or write) go from and to the stack, in the page the kernel has
     * just translated for this process; the others through a page each
     * (aligned to its size, so that the kernel copies it with one memcpy). */
    static uint8_t out[DM_MSG_MAX] __attribute__((aligned(DM_MSG_MAX)));
    static uint8_t in[DM_MSG_MAX] __attribute__((aligned(DM_MSG_MAX)));
    struct dm_kreq small_request;
    struct dm_kreply small_answer;
    struct dm_kreq *q = k->len ? (struct dm_kreq *)out : &small_request;
    void *answer = k->answer_cap ? (void *)in : (void *)&small_answer;
    uint32_t answer_cap = k->answer_cap ? sizeof in : sizeof small_answer;
    k->link = DM_NO_LINK;
    k->answer_len = 0;
    if (k->len > sizeof out - sizeof *q)
        return E_TOOBIG;
    q->op = k->op;
    q->reserved = 0;
    q->pid = k->pid;
    q->arg[0] = k->arg[0];
    q->arg[1] = k->arg[1];
    if (k->len)
        memcpy(q + 1, k->data, k->len);
    struct dm_msg_info info;
    long n = dm_call(slot, q, sizeof *q + k->len, k->pass, answer, answer_cap, &info);
    if (n < 0)
        return n;
    k->link = info.link;
    const struct dm_kreply *r = answer;
    if ((size_t)n < sizeof *r)
        return E_BADREQ;
    k->value = r->value;
    k->answer_len = (uint32_t)(info.length - sizeof *r);
    if (k->answer_cap)
        memcpy(k->answer, r + 1, k->answer_len < k->answer_cap ? k->answer_len : k->answer_cap);
    return r->status;
}
