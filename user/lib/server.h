/*
 * server.h — what the system servers (servers/, fs/, filter/) share: saying
 * they serve, answering one request (struct sv_request, user/lib/server_protocol.h)
 * as its handler says, the receive-and-answer loop of a server with one
 * kind of message, and a request to a kernel over a kernel link (struct
 * dm_kreq, kernel/demos.h). Linked into the servers only (Makefile,
 * SERVER_LIB).
 */
#ifndef SERVER_H
#define SERVER_H

#include <stdint.h>
#include "dmlib.h"

/* ---- starting ---- */

/* Register a new link to our channel `channel` under `name` at the
 * switchboard, then tell the process manager we serve (PM_READY): the
 * process manager starts the next server once we do. Returns the
 * switchboard's status. */
long server_register(const char *name, uint32_t channel);

/* A link to our channel `channel` for the process manager (PM_SERVE,
 * user/lib/server_protocol.h): for the two servers it starts before the
 * switchboard ("switchboard", "console") this is both registering and
 * PM_READY; the request interpreter ("fs") offers it its halt link before
 * it registers. */
long server_offer(const char *name, uint32_t channel);

/* ---- answering ---- */

/* How a request is answered, as its handler fills it in. server_serve
 * starts it at status 0, value 0, no data and no link. */
struct server_answer {
    int64_t status;
    int64_t value;
    const void *data;     /* len bytes of answer data; must outlive the handler (static) */
    uint32_t len;
    long pass;            /* a link to pass with the answer, or DM_NO_LINK; destroyed if no one is to be answered */
    int later;            /* the handler keeps info->reply and answers later itself */
    int link_kept;        /* the handler keeps info->link; else it is destroyed */
};

/* A server's handler of one request of len bytes (at least a struct sv_request). */
typedef void server_handler(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                            struct server_answer *answer);

/* One received message of n bytes (n >= 0) taken as a request: a message
 * shorter than a struct sv_request is answered E_BADREQ; any other goes to
 * `handle`. Then the link that came with it is destroyed unless the handler
 * kept it, and the answer is sent over the reply link (unless the handler
 * answers later). Reads nothing of `message` after the handler returns,
 * so a handler may receive other messages into the same buffer. Returns 1
 * when the message was too short to be a request, else 0.
 * Inline, so that a server's handler is compiled into its loop: a request
 * costs no more than a loop written out by hand (docs/performance.md). */
static inline __attribute__((always_inline)) int server_serve(const struct dm_msg_info *info, const void *message,
                                                              long n, server_handler *handle)
{
    struct server_answer answer = { .status = E_BADREQ, .pass = DM_NO_LINK };
    int short_request = n < (long)sizeof(struct sv_request);
    if (!short_request) {
        answer.status = 0;
        handle(info, (const struct sv_request *)message, (uint32_t)n, &answer);
    }
    if (info->link >= 0 && !answer.link_kept)
        dm_destroylink(info->link);
    if (answer.later)
        return short_request;
    if (info->reply >= 0)
        sv_reply(info->reply, answer.status, answer.value, answer.data, answer.len, answer.pass);
    else if (answer.pass >= 0)
        dm_destroylink(answer.pass);
    return short_request;
}

/* Serve requests for ever: each message received on any channel goes to
 * server_serve. A message is at most DM_MSG_MAX - 1 bytes and is followed
 * by a NUL, so that a request's string data is always ended. */
static inline __attribute__((always_inline, __noreturn__)) void server_run(server_handler *handle)
{
    /* One page (aligned to its size): the kernel copies a message into a
     * buffer that lies in one page with one memcpy. */
    static uint8_t message[DM_MSG_MAX] __attribute__((aligned(DM_MSG_MAX)));
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message - 1, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        message[n] = 0;
        server_serve(&info, message, n, handle);
    }
}

/* ---- requests to a kernel ---- */

/* A request over a kernel link (a process-control or device link): a CALL
 * with a struct dm_kreq and data; the answer is a struct dm_kreply and
 * data (kernel/demos.h, "Requests over kernel links"). */
struct kernel_request {
    uint32_t op;            /* enum dm_kop */
    dm_pid pid;             /* the target process, where the op has one */
    int64_t arg[2];
    const void *data;       /* request data, len bytes */
    uint32_t len;
    long pass;              /* a link to pass, or DM_NO_LINK */
    void *answer;           /* where the answer's data goes (0: nowhere) */
    uint32_t answer_cap;
    uint64_t value;         /* out: the answer's value (left as it was if no answer came) */
    uint32_t answer_len;    /* out: bytes of answer data the kernel sent (not cut to answer_cap) */
    long link;              /* out: a link passed with the answer, or DM_NO_LINK */
};

/* Make request k over kernel link `slot`: the answer's status, or a
 * kernel-call error (E_TOOBIG: more data than a message holds; E_BADREQ:
 * an answer shorter than a struct dm_kreply). */
long kernel_request(long slot, struct kernel_request *k);

#endif
