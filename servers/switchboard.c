/*
 * switchboard.c — the name server: a process registers a link under a
 * name; anyone who has a link to the switchboard can look the name up and
 * gets a copy of the link. Every process has the switchboard in slot
 * SLOT_SWITCHBOARD. Each name remembers the process that registered it,
 * so that the process manager can have the names of a process that ended
 * forgotten (SB_FORGET), and a name can be registered only while it is
 * free (SB_REGISTER_NEW: a filter's name, which two filters cannot share).
 */
#include <string.h>
#include "dmlib.h"
#include "server.h"

#define NNAMES 48

static struct { char name[SB_NAME_MAX]; long slot; dm_pid owner; } names[NNAMES];

static int find(const char *name)
{
    for (int i = 0; i < NNAMES; i++)
        if (names[i].slot > 0 && strcmp(names[i].name, name) == 0)
            return i;
    return -1;
}

/* SB_FORGET: the names beginning with `prefix` that `pid` registered (or,
 * with `whole_machine`, any process of its machine) go; how many. */
static long forget(const char *prefix, dm_pid pid, int whole_machine)
{
    long count = 0;
    for (int i = 0; i < NNAMES; i++) {
        if (names[i].slot <= 0 || strncmp(names[i].name, prefix, strlen(prefix)) != 0 ||
            (whole_machine ? PID_MACHINE(names[i].owner) != PID_MACHINE(pid) : names[i].owner != pid))
            continue;
        dm_destroylink(names[i].slot);
        names[i].slot = 0;
        count++;
    }
    return count;
}

/* A request about `name`; its status, and the link to answer with in
 * *pass, the answer's value in *value. */
static long handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len, long *pass,
                   int64_t *value)
{
    const char *name = (const char *)(q + 1);
    uint32_t name_len = len - sizeof *q;
    if (name_len == 0 || strnlen(name, name_len) == name_len || strlen(name) >= SB_NAME_MAX)
        return E_INVAL;
    int i = find(name);
    switch (q->op) {
    case SB_REGISTER:
        if (info->link < 0)
            return E_INVAL;
        if (i >= 0 && (q->arg[0] & SB_REGISTER_NEW))
            return E_STATE;
        if (i < 0)
            for (i = 0; i < NNAMES && names[i].slot > 0; i++)
                ;
        else
            dm_destroylink(names[i].slot);
        if (i == NNAMES)
            return E_NOMEM;
        strcpy(names[i].name, name);
        names[i].slot = info->link;
        names[i].owner = info->sender;
        return 0;
    case SB_LOOKUP:
        if (i < 0)
            return E_NOTFOUND;
        *value = (int64_t)names[i].owner;
        *pass = dm_duplicatelink(names[i].slot);
        return *pass < 0 ? *pass : 0;
    case SB_FORGET:
        *value = forget(name, (dm_pid)q->arg[0], q->arg[1] != 0);
        return 0;
    case SB_REMOVE:
        if (i < 0)
            return E_NOTFOUND;
        dm_destroylink(names[i].slot);
        names[i].slot = 0;
        return 0;
    }
    return E_NOSYS;
}

/* One request, answered with a copy of the named link for SB_LOOKUP; the
 * link a successful SB_REGISTER brings is kept. */
static void serve(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                  struct server_answer *answer)
{
    answer->status = handle(info, q, len, &answer->pass, &answer->value);
    answer->link_kept = answer->status == 0 && q->op == SB_REGISTER;
}

int main(void)
{
    server_offer("switchboard", 0);
    server_run(serve);
}
