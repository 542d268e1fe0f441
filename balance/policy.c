/*
 * balance/policy.c — the feedback scheduler's rule (policy.h): price each
 * move of a process, or of a group that talks on one machine, by the time
 * it saves a second, and take the best worth the threshold.
 */
#include <string.h>
#include "policy.h"

#define NS_PER_S 1e9

/* The time a machine's processes wait for its CPU each second, in ns,
 * when they want `demand` of it. */
static double waiting_ns(double demand)
{
    return demand > 1.0 ? (demand - 1.0) * NS_PER_S : 0.0;
}

double policy_demand(const struct policy_model *m, uint32_t machine)
{
    double d = 0;
    for (int i = 0; i < m->nprocesses; i++)
        if (m->processes[i].machine == machine)
            d += m->processes[i].demand;
    return d;
}

/* Whether process i may move now: movable, and never moved or moved at
 * least the residence ago. */
static int settled(const struct policy_model *m, const struct policy_params *params, int i)
{
    const struct policy_process *p = &m->processes[i];
    return p->movable && (p->settled_ns == 0 || params->now_ns >= p->settled_ns + params->residence_ns);
}

static int in_group(const int *group, int n, int i)
{
    for (int k = 0; k < n; k++)
        if (group[k] == i)
            return 1;
    return 0;
}

/* The group of process `first`: it, and the processes that may move on its
 * machine that exchange at least params->group_rate messages a second with
 * one of the group, found breadth first. Its size. */
static int group_of(const struct policy_model *m, const struct policy_params *params, int first, int *group)
{
    int n = 0;
    group[n++] = first;
    uint32_t machine = m->processes[first].machine;
    for (int at = 0; at < n; at++) {
        for (int k = 0; k < m->npairs; k++) {
            const struct policy_pair *pr = &m->pairs[k];
            int other = pr->a == group[at] ? pr->b : pr->b == group[at] ? pr->a : -1;
            if (other < 0 || pr->rate < params->group_rate || in_group(group, n, other) ||
                m->processes[other].machine != machine || !settled(m, params, other) || n == POLICY_GROUP)
                continue;
            group[n++] = other;
        }
    }
    return n;
}

/* What moving `group` (of n processes, all on one machine) to machine `to`
 * saves, into *move. */
static void price(const struct policy_model *m, const struct policy_params *params, const int *group, int n,
                  uint32_t to, struct policy_move *move)
{
    uint32_t from = m->processes[group[0]].machine;
    memset(move, 0, sizeof *move);
    memcpy(move->members, group, (size_t)n * sizeof group[0]);
    move->nmembers = n;
    move->from = from;
    move->to = to;
    move->partner = -1;
    double best_partner = 0;
    for (int k = 0; k < m->npairs; k++) {
        const struct policy_pair *pr = &m->pairs[k];
        int a_in = in_group(group, n, pr->a), b_in = in_group(group, n, pr->b);
        if (a_in == b_in)
            continue;                           /* within the group, or outside it: unchanged */
        int other = a_in ? pr->b : pr->a;
        uint32_t there = m->processes[other].machine;
        double made_local = (there == to) - (there == from);
        move->messages += pr->rate * made_local;
        if (there == to && pr->rate > best_partner) {
            best_partner = pr->rate;
            move->partner = other;
        }
    }
    move->partner_rate = best_partner;
    move->message_gain_ns = move->messages * params->remote_ns;
    for (int i = 0; i < n; i++)
        move->demand_moved += m->processes[group[i]].demand;
    move->demand_from = policy_demand(m, from);
    move->demand_to = policy_demand(m, to);
    move->cpu_gain_ns = waiting_ns(move->demand_from) + waiting_ns(move->demand_to) -
                        waiting_ns(move->demand_from - move->demand_moved) -
                        waiting_ns(move->demand_to + move->demand_moved);
    move->gain_ns = move->message_gain_ns + move->cpu_gain_ns;
}

/* The best move there is now (worth at least the threshold): 1 with *best, or 0. */
static int best_move(const struct policy_model *m, const struct policy_params *params, struct policy_move *best)
{
    int found = 0;
    for (int i = 0; i < m->nprocesses; i++) {
        if (!settled(m, params, i))
            continue;
        int group[POLICY_GROUP];
        int sizes[2] = { 1, group_of(m, params, i, group) };   /* alone, and with its group */
        for (int g = 0; g < 2; g++) {
            if (g == 1 && sizes[1] == 1)
                break;
            for (uint32_t to = 0; to < m->machines && to < POLICY_MACHINES; to++) {
                if (!m->up[to] || to == m->processes[i].machine)
                    continue;
                struct policy_move candidate;
                price(m, params, group, sizes[g], to, &candidate);
                if (candidate.gain_ns >= params->threshold_ns && (!found || candidate.gain_ns > best->gain_ns)) {
                    *best = candidate;
                    found = 1;
                }
            }
        }
    }
    return found;
}

int policy_decide(struct policy_model *m, const struct policy_params *params, struct policy_move *moves, int max)
{
    int n = 0;
    if (max > params->max_moves)
        max = params->max_moves;
    while (n < max && best_move(m, params, &moves[n])) {
        for (int k = 0; k < moves[n].nmembers; k++) {
            struct policy_process *p = &m->processes[moves[n].members[k]];
            p->machine = moves[n].to;
            p->settled_ns = params->now_ns;
        }
        n++;
    }
    return n;
}
