/*
 * switchboard.c — the name server: a process registers a link under a
 * name; anyone who has a link to the switchboard can look the name up and
 * gets a copy of the link. Every process has the switchboard in slot
 * SLOT_SWITCHBOARD.
 */
#include <string.h>
#include "dmlib.h"
#include "server.h"

#define NNAMES 48

static struct { char name[SB_NAME_MAX]; long slot; } names[NNAMES];

static int find(const char *name)
{
    for (int i = 0; i < NNAMES; i++)
        if (names[i].slot > 0 && strcmp(names[i].name, name) == 0)
            return i;
    return -1;
}

/* A request about `name`; its status, and the link to answer with in *pass. */
static long handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len, long *pass)
{
    const char *name = (const char *)(q + 1);
    uint32_t name_len = len - sizeof *q;
    if (name_len == 0 || strnlen(name, name_len) == name_len)
        return E_INVAL;
    if (strlen(name) >= SB_NAME_MAX)
        return E_NAMETOOLONG;
    int i = find(name);
    switch (q->op) {
    case SB_REGISTER:
        if (info->link < 0)
            return E_INVAL;
        if (i < 0)
            for (i = 0; i < NNAMES && names[i].slot > 0; i++)
                ;
        else
            dm_destroylink(names[i].slot);
        if (i == NNAMES)
            return E_NAMESFULL;
        strcpy(names[i].name, name);
        names[i].slot = info->link;
        return 0;
    case SB_LOOKUP:
        if (i < 0)
            return E_NOTFOUND;
        *pass = dm_duplicatelink(names[i].slot);
        return *pass < 0 ? *pass : 0;
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
    answer->status = handle(info, q, len, &answer->pass);
    answer->link_kept = answer->status == 0 && q->op == SB_REGISTER;
}

int main(void)
{
    server_offer("switchboard", 0);
    server_run(serve);
}
