/*
 * analysis/models/causality.c — paths of causality (thesis §5.2.4;
 * models/causality.h says what is counted and the decisions taken). Over
 * the history graph: its message arcs say who received what, its process
 * order says which RECEIVE a SEND follows. The forest is kept as one parent
 * and one depth per history node; no recursion, so chains of any length are
 * safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/causality.h"

/* The forest being built, per history node (RECEIVEs by servers only). */
struct forest {
    uint32_t *parent;          /* the RECEIVE whose window sent this message, or HISTORY_NONE */
    uint32_t *depth;           /* letters from the root to here; 0: not in the forest */
    uint8_t *has_child;
    int32_t *server_of;        /* [nprocesses]: server index, or -1 */
};

char causality_letter(uint32_t i)
{
    return (char)(i < 26 ? 'A' + i : 'a' + (i - 26));
}

/* The role of a process outside the trace in node v's message: the
 * kernels (slot 0 of a machine), those named as system processes, and a
 * process this one CALLed (v is the SEND of that call, or the RECEIVE of
 * its answer: an outside arc, thesis Fig. 5.3) are system processes; any
 * other is a requestor, as the users of a server are (they are seldom
 * metered themselves). */
static uint8_t outside_role(const struct history *h, const struct causality_roles *r, uint32_t v, uint64_t pid)
{
    if (DPM_PID_SLOT(pid) == 0)
        return ROLE_SYSTEM;
    for (size_t i = 0; i < r->nsystem_pids; i++)
        if (r->system_pids[i] == (pid & ~DPM_PID_EPOCH_MASK))
            return ROLE_SYSTEM;
    if (h->kind[v] == HN_RECEIVE)
        return h->cross_kind[v] == HX_OUTSIDE ? ROLE_SYSTEM : ROLE_REQUESTOR;
    return h->cross_to[v] != HISTORY_NONE ? ROLE_SYSTEM : ROLE_REQUESTOR;
}

/* The role of the other process of node v's record (RECEIVE: its sender;
 * SEND: its receiver); one not recorded is a system process. */
static uint8_t role_of_other(const struct history *h, const struct causality_roles *r, uint32_t v)
{
    const struct dpm_event *ev = &h->trace->events[h->event[v]];
    if (!(ev->present & EV_OTHER))
        return ROLE_SYSTEM;
    uint32_t p = history_process_index(h->trace, ev->other);
    return p == HISTORY_NONE ? outside_role(h, r, v, ev->other) : r->traced[p];
}

/* Each server's windows: a SEND by a server to a server gets, as the
 * parent of its RECEIVE, the sender's last RECEIVE from a server or a
 * requestor (thesis §5.2.4: the sends after a receive, up to the next). */
static void find_parents(struct forest *f, const struct history *h, const struct causality_roles *role)
{
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        uint32_t window = HISTORY_NONE;
        if (role->traced[p] != ROLE_SERVER)
            continue;
        for (uint32_t v = h->first_node[p]; v < h->first_node[p + 1]; v++) {
            uint8_t other = role_of_other(h, role, v);
            if (h->kind[v] == HN_RECEIVE && other != ROLE_SYSTEM)
                window = v;
            else if (h->kind[v] == HN_SEND && other == ROLE_SERVER && h->cross_to[v] != HISTORY_NONE &&
                     h->cross_kind[h->cross_to[v]] == HX_MESSAGE)
                f->parent[h->cross_to[v]] = window;
        }
    }
}

/* Depths in topological order (a parent RECEIVE precedes its children in
 * the graph): a root has depth 1; a child, its parent's + 1 if its parent
 * is in the forest. A child that would pass max_length is cut. */
static void find_depths(struct causality *c, struct forest *f, const struct history *h,
                        const struct causality_roles *role)
{
    for (uint32_t i = 0; i < h->nnodes; i++) {
        uint32_t v = h->order[i], parent = f->parent[v];
        if (h->kind[v] != HN_RECEIVE || role->traced[h->process[v]] != ROLE_SERVER)
            continue;
        if (role_of_other(h, role, v) == ROLE_REQUESTOR) {
            f->depth[v] = 1;
            c->requests++;
            c->requests_to[f->server_of[h->process[v]]]++;
        } else if (parent != HISTORY_NONE && f->depth[parent] == c->max_length) {
            c->cut++;
        } else if (parent != HISTORY_NONE && f->depth[parent]) {
            f->depth[v] = f->depth[parent] + 1;
            f->has_child[parent] = 1;
        }
    }
}

/* The letters from v's ancestor n-1 levels up down to v, into s[0..n). */
static void letters_to(char *s, uint32_t n, const struct forest *f, const struct history *h, uint32_t v)
{
    for (uint32_t i = n; i-- > 0; v = f->parent[v])
        s[i] = causality_letter((uint32_t)f->server_of[h->process[v]]);
}

/* Count node v's substrings (those ending at v), and its string if it is a leaf. */
static int count_at(struct causality *c, const struct forest *f, const struct history *h, uint32_t v, char *s)
{
    uint32_t n = f->depth[v];
    letters_to(s, n, f, h, v);
    for (uint32_t length = 2; length <= n; length++)
        if (tally_add(&c->paths, s + n - length, length) < 0)
            return -1;
    if (f->has_child[v])
        return 0;
    c->nstrings++;
    return tally_add(&c->strings, s, n);
}

/* The "receives from X, then sends to Y" counts of every server, over
 * every RECEIVE in the trace (models/causality.h). */
static void count_transitions(struct causality *c, const struct forest *f, const struct history *h,
                              const struct causality_roles *role)
{
    for (uint32_t i = 0; i < c->nservers; i++) {
        uint32_t p = c->server[i], from = HISTORY_NONE;
        for (uint32_t v = h->first_node[p]; v < h->first_node[p + 1]; v++) {
            const struct dpm_event *ev = &h->trace->events[h->event[v]];
            uint8_t other = role_of_other(h, role, v);
            uint32_t q = other == ROLE_SYSTEM ? HISTORY_NONE : history_process_index(h->trace, ev->other);
            if (h->kind[v] == HN_RECEIVE && other != ROLE_SYSTEM)
                from = other == ROLE_SERVER ? (uint32_t)f->server_of[q] : c->nservers;
            else if (h->kind[v] == HN_SEND && other == ROLE_SERVER && from != HISTORY_NONE)
                c->matrix[(i * (c->nservers + 1) + from) * c->nservers + (uint32_t)f->server_of[q]]++;
        }
    }
}

static void forest_free(struct forest *f)
{
    free(f->parent);
    free(f->depth);
    free(f->has_child);
    free(f->server_of);
}

/* Letters for the servers, in process order. */
static int name_servers(struct causality *c, struct forest *f, const struct history *h,
                        const struct causality_roles *role,
                        char *err, size_t cap)
{
    for (uint32_t p = 0; p < h->nprocesses; p++) {
        f->server_of[p] = -1;
        if (role->traced[p] != ROLE_SERVER)
            continue;
        if (c->nservers == CAUSALITY_SERVERS_MAX) {
            snprintf(err, cap, "more than %d server processes (one letter each)", CAUSALITY_SERVERS_MAX);
            return -1;
        }
        f->server_of[p] = (int32_t)c->nservers;
        c->server[c->nservers++] = p;
    }
    return 0;
}

/* The whole analysis (models/causality.h). */
int causality_analyze(struct causality *c, const struct history *h, const struct causality_roles *role,
                      uint32_t max_length,
                      char *err, size_t cap)
{
    struct forest f;
    int ok = -1;
    memset(c, 0, sizeof *c);
    c->max_length = max_length ? max_length : CAUSALITY_DEFAULT_LENGTH;
    char *s = malloc((size_t)c->max_length + 1);
    f.parent = malloc((size_t)h->nnodes * sizeof *f.parent + 1);
    f.depth = calloc((size_t)h->nnodes + 1, sizeof *f.depth);
    f.has_child = calloc((size_t)h->nnodes + 1, 1);
    f.server_of = malloc((size_t)h->nprocesses * sizeof *f.server_of + 1);
    snprintf(err, cap, "no memory for the causality strings of %u nodes", h->nnodes);
    if (s && f.parent && f.depth && f.has_child && f.server_of && name_servers(c, &f, h, role, err, cap) == 0 &&
        (c->matrix = calloc((size_t)c->nservers * (c->nservers + 1) * c->nservers + 1, sizeof *c->matrix))) {
        memset(f.parent, 0xff, (size_t)h->nnodes * sizeof *f.parent);
        find_parents(&f, h, role);
        find_depths(c, &f, h, role);
        count_transitions(c, &f, h, role);
        ok = 0;
        for (uint32_t v = 0; ok == 0 && v < h->nnodes; v++)
            if (f.depth[v])
                ok = count_at(c, &f, h, v, s);
    }
    forest_free(&f);
    free(s);
    if (ok < 0)
        causality_free(c);
    return ok;
}

void causality_free(struct causality *c)
{
    tally_free(&c->strings);
    tally_free(&c->paths);
    free(c->matrix);
    c->matrix = 0;
}

uint64_t causality_count(const struct causality *c, uint32_t a, uint32_t x, uint32_t y)
{
    return c->matrix[(a * (c->nservers + 1) + x) * c->nservers + y];
}

/* The branching probability (models/causality.h). */
double causality_probability(const struct causality *c, uint32_t a, uint32_t x, uint32_t y)
{
    uint64_t all = 0;
    for (uint32_t z = 0; z < c->nservers; z++)
        all += causality_count(c, a, x, z);
    return all ? (double)causality_count(c, a, x, y) / (double)all : -1;
}

static int alphabetical(const void *a, const void *b)
{
    const struct tally_item *x = a, *y = b;
    return strcmp(x->text, y->text);
}

static int most_first(const void *a, const void *b)
{
    const struct tally_item *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return alphabetical(a, b);
}

struct tally_item *causality_by_count(const struct tally *t)
{
    struct tally_item *items = tally_items(t);
    if (items)
        qsort(items, t->used, sizeof *items, most_first);
    return items;
}

struct tally_item *causality_alphabetical(const struct tally *t)
{
    struct tally_item *items = tally_items(t);
    if (items)
        qsort(items, t->used, sizeof *items, alphabetical);
    return items;
}
