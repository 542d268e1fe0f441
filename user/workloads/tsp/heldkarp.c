/*
 * tsp/heldkarp.c — the exact travelling-salesman optimum by Held and
 * Karp's dynamic program, to check the parallel search against (tsp -d).
 *
 * shortest[S][j], for a set S of cities other than 0 and a city j in S, is
 * the length of the shortest path that leaves city 0, visits exactly the
 * cities of S and ends at j. Sets grow one city at a time, so every subset
 * of S is done before S. The best tour is then the best shortest[all][j]
 * plus the way back from j. Because the distances are symmetric, the path
 * from a city j through the cities of S back to 0 is shortest[S][j] too:
 * that lets the tour be rebuilt from city 0 forward, taking at each step the
 * smallest city that still leads to an optimal tour, which gives the
 * lexicographically smallest optimal tour (the one protocol.h calls best).
 */
#include <stdlib.h>
#include <string.h>
#include "search.h"

/* shortest[S][j] in a flat array: S as bits (city c is bit c - 1), j - 1. */
static uint32_t *entry(uint32_t *shortest, const struct tsp_problem *p, uint32_t set, uint32_t city)
{
    return &shortest[(size_t)set * (p->cities - 1) + city - 1];
}

/* Fill shortest[S][j] for every S and j in S. */
static void fill(uint32_t *shortest, const struct tsp_problem *p)
{
    uint32_t others = p->cities - 1, sets = 1u << others;
    for (uint32_t set = 1; set < sets; set++)
        for (uint32_t j = 1; j <= others; j++) {
            uint32_t bit = 1u << (j - 1), before = set & ~bit, best = UINT32_MAX;
            if (!(set & bit))
                continue;
            if (before == 0)
                best = p->distance[0][j];
            for (uint32_t k = 1; k <= others; k++)
                if (before & (1u << (k - 1))) {
                    uint32_t via = *entry(shortest, p, before, k) + p->distance[k][j];
                    if (via < best)
                        best = via;
                }
            *entry(shortest, p, set, j) = best;
        }
}

/* The best tour from the filled table: the length, then the cities. */
static void rebuild(uint32_t *shortest, const struct tsp_problem *p, struct tsp_tour *best)
{
    uint32_t all = (1u << (p->cities - 1)) - 1, length = UINT32_MAX;
    for (uint32_t j = 1; j < p->cities; j++) {
        uint32_t tour = *entry(shortest, p, all, j) + p->distance[j][0];
        if (tour < length)
            length = tour;
    }
    memset(best, 0, sizeof *best);
    best->length = length;
    uint32_t left = all, last = 0, rest = length;      /* rest: the length still to go */
    for (uint32_t depth = 1; depth < p->cities; depth++) {
        uint32_t next = 1;
        while (!(left & (1u << (next - 1))) || p->distance[last][next] + *entry(shortest, p, left, next) != rest)
            next++;
        best->city[depth] = (uint8_t)next;
        rest -= p->distance[last][next];
        left &= ~(1u << (next - 1));
        last = next;
    }
}

int tsp_held_karp(const struct tsp_problem *p, struct tsp_tour *best)
{
    uint32_t *shortest = malloc(((size_t)1 << (p->cities - 1)) * (p->cities - 1) * sizeof *shortest);
    if (shortest == 0)
        return -1;
    fill(shortest, p);
    rebuild(shortest, p, best);
    free(shortest);
    return 0;
}
