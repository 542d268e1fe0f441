/*
 * link.c — link tables. Only the kernel changes them; a process names its
 * links by slot number, and a slot number means nothing outside its table.
 */
#include "defs.h"

/* The lowest free slot of p: empty, or holding a used reply link (whose
 * E_USED marker is given up); -1 if the table is full. */
int link_alloc_slot(struct proc *p)
{
    for (int i = 0; i < DM_NLINKS; i++)
        if (p->links[i].state != LINK_LIVE)
            return i;
    return -1;
}

/* Put a copy of l into a free slot of p; the slot, or E_LINKFULL. */
int link_install(struct proc *p, const struct link *l)
{
    int slot = link_alloc_slot(p);
    if (slot < 0)
        return E_LINKFULL;
    p->links[slot] = *l;
    p->links[slot].state = LINK_LIVE;
    return slot;
}

/* The live link in p's slot, or the error that naming it deserves. */
int link_get(struct proc *p, int64_t slot, struct link **out)
{
    if ((uint64_t)slot >= DM_NLINKS)   /* negative slots too */
        return E_BADSLOT;
    struct link *l = &p->links[slot];
    if (l->state == LINK_EMPTY)
        return E_EMPTYSLOT;
    if (l->state == LINK_USED)
        return E_USED;
    *out = l;
    return 0;
}

void link_clear(struct link *l)
{
    memset(l, 0, sizeof *l);
}

/* Destroy a live link: a CALL still waiting on it learns it gets no answer. */
void link_drop(struct link *l)
{
    if (l->state == LINK_LIVE && l->reply_id)
        reply_link_dropped(l);
    link_clear(l);
}

uint32_t link_count(struct proc *p)
{
    uint32_t n = 0;
    for (int i = 0; i < DM_NLINKS; i++)
        n += p->links[i].state == LINK_LIVE;
    return n;
}
