/*
 * tsp/search.c — the travelling-salesman problem and its depth-first
 * branch-and-bound search (search.h).
 *
 * The bound: the rest of a partial tour ending at city `last` goes from
 * `last` through every city not yet visited and back to city 0. Each city
 * still to visit has two edges in it, `last` and city 0 one each, so twice
 * the rest's length is at least the sum of those cities' two cheapest
 * edges plus the cheapest edges of `last` and of city 0 (every edge counted
 * at both its ends). That is TSP_BOUND_EDGES; TSP_BOUND_LENGTH takes the
 * length so far alone, the simplest bound, which leaves far more to search
 * (for N = 14, 10^5 to 10^7 partial tours against 10^4), for measurements
 * that want the servers to work longer. The search tries the nearest city first, so that good
 * tours, and with them tight bounds, come early.
 */
#include <string.h>
#include "search.h"
#include "workload.h"

void tsp_random_problem(struct tsp_problem *p, uint32_t cities, uint64_t seed)
{
    struct prng random;
    prng_seed(&random, seed);
    memset(p, 0, sizeof *p);
    p->cities = cities;
    for (uint32_t i = 0; i < cities; i++)
        for (uint32_t j = i + 1; j < cities; j++)
            p->distance[i][j] = p->distance[j][i] = (uint16_t)(1 + prng_below(&random, TSP_MAX_DISTANCE));
    tsp_prepare(p);
}

/* Whether city a is nearer to `from` than city b (the lower number on a tie). */
static int nearer(const struct tsp_problem *p, uint32_t from, uint32_t a, uint32_t b)
{
    return p->distance[from][a] < p->distance[from][b] || (p->distance[from][a] == p->distance[from][b] && a < b);
}

void tsp_prepare(struct tsp_problem *p)
{
    for (uint32_t c = 0; c < p->cities; c++) {
        uint32_t n = 0;
        for (uint32_t other = 0; other < p->cities; other++) {
            if (other == c)
                continue;
            uint32_t at = n++;                       /* insertion sort, nearest first */
            while (at > 0 && nearer(p, c, other, p->nearest[c][at - 1])) {
                p->nearest[c][at] = p->nearest[c][at - 1];
                at--;
            }
            p->nearest[c][at] = (uint8_t)other;
        }
        p->cheapest[c] = p->distance[c][p->nearest[c][0]];
        p->two_cheapest[c] = p->cheapest[c] + p->distance[c][p->nearest[c][1]];
    }
}

int tsp_tour_better(const struct tsp_tour *a, const struct tsp_tour *b)
{
    if (a->length != b->length)
        return a->length < b->length;
    return memcmp(a->city, b->city, sizeof a->city) < 0;
}

/* The bound of a partial tour, of p->bound's kind, from its length so far,
 * the sum of two_cheapest over the cities still to visit (`open`) and its
 * last city; when it has every city, its exact length. */
static uint32_t bound_of(const struct tsp_problem *p, uint32_t depth, uint32_t cost, uint32_t open, uint32_t last)
{
    if (depth == p->cities)
        return cost + p->distance[last][0];
    if (p->bound == TSP_BOUND_LENGTH)
        return cost;
    return cost + (open + p->cheapest[last] + p->cheapest[0] + 1) / 2;
}

int tsp_may_beat(const uint8_t *path, uint32_t depth, uint32_t bound, const struct tsp_tour *best)
{
    if (bound != best->length)
        return bound < best->length;
    return memcmp(path, best->city, depth) <= 0;   /* as long: only a smaller city list wins */
}

void tsp_nearest_neighbour_tour(const struct tsp_problem *p, struct tsp_tour *tour)
{
    uint32_t visited = 1, last = 0;
    memset(tour, 0, sizeof *tour);
    tour->length = 0;
    for (uint32_t depth = 1; depth < p->cities; depth++) {
        uint32_t i = 0;
        while (visited & (1u << p->nearest[last][i]))
            i++;
        uint32_t next = p->nearest[last][i];
        tour->city[depth] = (uint8_t)next;
        tour->length += p->distance[last][next];
        visited |= 1u << next;
        last = next;
    }
    tour->length += p->distance[last][0];
}

/* A search under way: the partial tour path[0 .. depth), its length, the
 * sum of two_cheapest over the cities it has not visited, and its cities
 * as bits. */
struct walk {
    const struct tsp_problem *p;
    struct tsp_tour *best;
    uint8_t path[TSP_MAX_CITIES];
    uint32_t depth, cost, open, visited;
    uint64_t nodes;
};

/* Visit the partial tour in *w (whose bound may beat the best): a whole
 * tour is a candidate; else try each next city, nearest first. */
static void extend(struct walk *w)
{
    const struct tsp_problem *p = w->p;
    uint32_t last = w->path[w->depth - 1];
    w->nodes++;
    if (w->depth == p->cities) {
        struct tsp_tour tour;
        memset(&tour, 0, sizeof tour);
        tour.length = bound_of(p, w->depth, w->cost, w->open, last);
        memcpy(tour.city, w->path, p->cities);
        if (tsp_tour_better(&tour, w->best))
            *w->best = tour;
        return;
    }
    for (uint32_t i = 0; i < p->cities - 1; i++) {
        uint32_t next = p->nearest[last][i];
        if (w->visited & (1u << next))
            continue;
        uint32_t cost = w->cost + p->distance[last][next];
        uint32_t open = w->open - p->two_cheapest[next];
        w->path[w->depth] = (uint8_t)next;
        if (!tsp_may_beat(w->path, w->depth + 1, bound_of(p, w->depth + 1, cost, open, next), w->best))
            continue;
        uint32_t cost_before = w->cost, open_before = w->open;
        w->depth++;
        w->cost = cost;
        w->open = open;
        w->visited |= 1u << next;
        extend(w);
        w->depth--;
        w->cost = cost_before;
        w->open = open_before;
        w->visited &= ~(1u << next);
    }
}

/* Start a walk at the partial tour prefix[0 .. depth). */
static void walk_start(struct walk *w, const struct tsp_problem *p, const uint8_t *prefix, uint32_t depth,
                       struct tsp_tour *best)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->best = best;
    memcpy(w->path, prefix, depth);
    w->depth = depth;
    for (uint32_t i = 0; i < depth; i++) {
        w->visited |= 1u << prefix[i];
        if (i > 0)
            w->cost += p->distance[prefix[i - 1]][prefix[i]];
    }
    for (uint32_t c = 0; c < p->cities; c++)
        if (!(w->visited & (1u << c)))
            w->open += p->two_cheapest[c];
}

/* The bound of the walk's partial tour. */
static uint32_t walk_bound(const struct walk *w)
{
    return bound_of(w->p, w->depth, w->cost, w->open, w->path[w->depth - 1]);
}

uint32_t tsp_lower_bound(const struct tsp_problem *p, const uint8_t *path, uint32_t depth)
{
    struct walk w;
    walk_start(&w, p, path, depth, 0);
    return walk_bound(&w);
}

uint64_t tsp_search(const struct tsp_problem *p, const uint8_t *prefix, uint32_t depth, struct tsp_tour *best)
{
    struct walk w;
    walk_start(&w, p, prefix, depth, best);
    if (tsp_may_beat(w.path, depth, walk_bound(&w), best))
        extend(&w);
    return w.nodes;
}
