/*
 * tsp/search.h — the travelling-salesman problem and two ways to solve
 * it: the branch-and-bound search (search.c), shared by the controller
 * (tsp.c), which orders and skips pieces by its bound, and the servers
 * (tspserver.c), which search the pieces; and Held and Karp's dynamic
 * program (heldkarp.c), which tsp -d runs in one process as a check.
 */
#ifndef TSP_SEARCH_H
#define TSP_SEARCH_H

#include <stdint.h>
#include "protocol.h"

#define TSP_MAX_DISTANCE 1000        /* random distances are 1 to this */

/* A problem: symmetric integer distances, the bound to search with, and
 * what the search derives from the distances. */
struct tsp_problem {
    uint32_t cities;
    uint32_t bound;                                          /* enum tsp_bound */
    uint16_t distance[TSP_MAX_CITIES][TSP_MAX_CITIES];
    uint8_t  nearest[TSP_MAX_CITIES][TSP_MAX_CITIES - 1];   /* the other cities, nearest first */
    uint32_t cheapest[TSP_MAX_CITIES];                       /* a city's cheapest edge */
    uint32_t two_cheapest[TSP_MAX_CITIES];                   /* its two cheapest, added */
};

/* Distances from seed: for i < j in order, distance[i][j] = distance[j][i] =
 * 1 + prng_below(TSP_MAX_DISTANCE) from the xorshift stream seeded with seed
 * (user/lib/workload.h); then tsp_prepare. The bound is TSP_BOUND_EDGES. */
void tsp_random_problem(struct tsp_problem *p, uint32_t cities, uint64_t seed);
/* Derive nearest, cheapest and two_cheapest from cities and distance. */
void tsp_prepare(struct tsp_problem *p);

/* Whether tour a comes before tour b (shorter, or as long and
 * lexicographically smaller; protocol.h). */
int tsp_tour_better(const struct tsp_tour *a, const struct tsp_tour *b);

/* A lower bound of every tour that begins with path[0 .. depth) (path[0] = 0,
 * no city twice); the exact length when depth = cities. */
uint32_t tsp_lower_bound(const struct tsp_problem *p, const uint8_t *path, uint32_t depth);
/* Whether some tour beginning with path[0 .. depth), whose lower bound is
 * bound, could come before best: the test that prunes the search. */
int tsp_may_beat(const uint8_t *path, uint32_t depth, uint32_t bound, const struct tsp_tour *best);

/* The tour that goes from each city to the nearest one not yet visited. */
void tsp_nearest_neighbour_tour(const struct tsp_problem *p, struct tsp_tour *tour);

/* Depth-first branch and bound over the tours beginning with prefix[0 ..
 * depth): *best becomes the best of itself and them. Returns the partial
 * tours visited. The prefix must start with 0 and repeat no city. */
uint64_t tsp_search(const struct tsp_problem *p, const uint8_t *prefix, uint32_t depth, struct tsp_tour *best);

/* The best tour by Held and Karp's dynamic program (1962): O(2^n n^2)
 * time, (2^(n-1)) (n-1) words of memory (2 MiB for 16 cities). 0, or -1
 * when that memory cannot be had. */
int tsp_held_karp(const struct tsp_problem *p, struct tsp_tour *best);

#endif
