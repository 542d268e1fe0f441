/*
 * switchboard.c — the name server: a process registers a link under a
 * name; anyone who has a link to the switchboard can look the name up and
 * gets a copy of the link. Every process has the switchboard in slot
 * SLOT_SWITCHBOARD.
 */
#include <string.h>
#include "dmlib.h"

#define NNAMES 48

static struct { char name[SB_NAME_MAX]; long slot; } names[NNAMES];

static int find(const char *name)
{
    for (int i = 0; i < NNAMES; i++)
        if (names[i].slot > 0 && strcmp(names[i].name, name) == 0)
            return i;
    return -1;
}

static long handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len, long *pass)
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
        if (i < 0)
            for (i = 0; i < NNAMES && names[i].slot > 0; i++)
                ;
        else
            dm_destroylink(names[i].slot);
        if (i == NNAMES)
            return E_NOMEM;
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

int main(void)
{
    long self = dm_createlink(0, 0, 0, 0, 0);
    struct sv_call serve = { .op = PM_SERVE, .data = "switchboard", .len = sizeof "switchboard", .pass = self };
    sv_call(SLOT_PM, &serve);
    static uint8_t buffer[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL);
        long pass = DM_NO_LINK;
        long status = (size_t)n >= sizeof(struct sv_request)
                          ? handle(&info, (const struct sv_request *)buffer, (uint32_t)n, &pass)
                          : E_BADREQ;
        if (info.link >= 0 && !(status == 0 && ((const struct sv_request *)buffer)->op == SB_REGISTER))
            dm_destroylink(info.link);
        if (info.reply >= 0)
            sv_reply(info.reply, status, 0, 0, 0, pass);
        else if (pass >= 0)
            dm_destroylink(pass);
    }
}
