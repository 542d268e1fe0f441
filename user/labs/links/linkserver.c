/*
 * linkserver — the server of the links lab (docs/labs/links.md): serves
 * under a name at the switchboard and answers linkclient's requests
 * (links.h): a greeting, a note sent back over a link the client passes,
 * and bytes taken from and given back to the client's memory with MOVEDATA.
 *
 *   linkserver NAME      (run it in the background: run linkserver NAME &)
 *
 * It prints one line when it serves, "linkserver: serving NAME as PID", and
 * nothing more: its output would mix with the shell's.
 *
 * This is the lab's starting point: main's loop and the dispatch to one
 * function per request are written; the parts marked TODO are the lab.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "links.h"

static const char *served_name;   /* the name it serves under */

static long serve(const struct dm_msg_info *info, const struct sv_request *q, char *answer, uint32_t *answer_len,
                  int64_t *value);
static long hello(const struct dm_msg_info *info, char *answer, uint32_t *answer_len, int64_t *value);
static long note(const struct dm_msg_info *info);
static long put(const struct dm_msg_info *info, uint64_t n, int64_t *value);
static long get(const struct dm_msg_info *info, uint64_t n, int64_t *value);

int main(int argc, char **argv)
{
    if (argc != 2) {
        printf("usage: linkserver NAME\n");
        return 2;
    }
    served_name = argv[1];
    /* TODO(lab links, part 1): make a link to this process (dm_createlink)
     * and register it at the switchboard under served_name (sb_register),
     * where clients find it; if either fails, print why (dm_error_text) and
     * return 1. Then delete the two lines below. */
    printf("linkserver: part 1 is not written yet (docs/labs/links.md)\n");
    return 1;
    char id[24];
    printf("linkserver: serving %s as %s\n", served_name, dm_pid_string(dm_self(), id));

    static char message[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, message, sizeof message, DM_ANY_CHANNEL);
        if (n < 0 || info.reply < 0)
            continue;          /* not a request: nothing to answer */
        const struct sv_request *q = (const struct sv_request *)message;
        char answer[128];
        uint32_t answer_len = 0;
        int64_t value = 0;
        long status = (size_t)n < sizeof *q ? E_BADREQ : serve(&info, q, answer, &answer_len, &value);
        sv_reply(info.reply, status, value, answer, answer_len, DM_NO_LINK);
        if ((size_t)n >= sizeof *q && q->op == LINKS_QUIT)
            return 0;
    }
}

/* One request: its status, its answer's data and value. */
static long serve(const struct dm_msg_info *info, const struct sv_request *q, char *answer, uint32_t *answer_len,
                  int64_t *value)
{
    switch (q->op) {
    case LINKS_HELLO:
        return hello(info, answer, answer_len, value);
    case LINKS_NOTE:
        return note(info);
    case LINKS_PUT:
        return put(info, (uint64_t)q->arg[0], value);
    case LINKS_GET:
        return get(info, (uint64_t)q->arg[0], value);
    case LINKS_QUIT: {
        struct sv_call c = { .op = SB_REMOVE, .data = served_name, .len = (uint32_t)strlen(served_name) + 1,
                             .pass = DM_NO_LINK };
        return sv_call(SLOT_SWITCHBOARD, &c);
    }
    default:
        return E_NOSYS;
    }
}

/* Part 1: the greeting, naming the client as the kernel names it. */
static long hello(const struct dm_msg_info *info, char *answer, uint32_t *answer_len, int64_t *value)
{
    /* TODO(lab links, part 1): write the greeting links.h describes into
     * answer (at most 128 bytes), naming the client by info->sender
     * (dm_pid_string); set *answer_len to its length with its NUL, and
     * *value to this process's pid (dm_self); return 0. */
    (void)info, (void)answer, (void)answer_len, (void)value;
    return E_NOSYS;
}

/* Part 2: a note over the link the client passed, which is then destroyed. */
static long note(const struct dm_msg_info *info)
{
    /* TODO(lab links, part 2): the client passed a link to itself with the
     * request: its slot is info->link (DM_NO_LINK if none came: E_INVAL).
     * SEND the note links.h describes over it (dm_send), then destroy it
     * (dm_destroylink): a link received is this process's to drop. Return
     * 0, or the SEND's error. */
    (void)info;
    return E_NOSYS;
}

/* Part 3: the client's n bytes, taken with MOVEDATA through the link it passed. */
static long put(const struct dm_msg_info *info, uint64_t n, int64_t *value)
{
    /* TODO(lab links, part 3): the link in info->link leads to n bytes of
     * the client's memory that this process may read. Copy them into memory
     * of its own (a static array of LINKS_MAX bytes) with one MOVEDATA
     * (dm_movedata; DM_SELF names this process's memory, its offset an
     * address), destroy the link, keep how many bytes there are, and set
     * *value to their hash (dm_fnv1a). E_INVAL for n outside 1 .. LINKS_MAX. */
    (void)info, (void)n, (void)value;
    return E_NOSYS;
}

/* Part 3: n bytes of what the last PUT left, given with MOVEDATA through the link the client passed. */
static long get(const struct dm_msg_info *info, uint64_t n, int64_t *value)
{
    /* TODO(lab links, part 3): the link in info->link leads to n bytes of
     * the client's memory that this process may write: copy the first n
     * bytes the last PUT left there with one MOVEDATA, destroy the link,
     * and set *value to n. E_INVAL for n outside 1 .. what the PUT left. */
    (void)info, (void)n, (void)value;
    return E_NOSYS;
}
