/*
 * tsp — a parallel branch-and-bound travelling salesman, the distributed
 * program of the thesis's third study (Miller 1984, §5.3.3): a controller
 * (this process) and P servers that it starts on the machines it is given.
 *
 *     tsp [-v sync|pipe] [-b edges|length] [-s SEED] N P MACHINES
 *     tsp -d N [SEED]       the optimum by Held and Karp, in this process
 *
 * N cities (4 to 16), P servers (1 to 16).
 *
 * MACHINES lists where each server runs, e.g. 0,1,1,2 for P = 4. SEED (1
 * by default) gives the distances (tsp/search.h: integers 1 to 1000, from
 * the xorshift stream of user/lib/workload.h), so a seed always gives the
 * same problem, the same optimum and the same tour (tsp/protocol.h).
 *
 * The work is cut into pieces: every tour prefix of PIECE_DEPTH cities
 * (0, a, b), handed out most promising first (the lowest lower bound; then
 * the prefixes in order). With each piece goes the best tour known, first
 * the nearest-neighbour tour; a server searches the tours that begin with
 * the piece depth first, pruning by that bound, and answers with the best
 * tour it knows. A piece whose bound cannot beat the best tour by the time
 * its turn comes is skipped. The bound (tsp/search.c) is the length so far
 * and the cheapest edges left (-b edges, the default), or the length so far
 * alone (-b length), which makes far more work. Two versions:
 *   sync  each server has one piece at a time: the next goes to it when its
 *         answer has come back (the default);
 *   pipe  each server has two: while it searches one, the next waits in its
 *         queue, so it never waits for the controller (the thesis's version 3).
 *
 * Prints the optimum and its tour, the pieces and partial tours each server
 * did, and the time the search took on this machine's clock; exit status 0,
 * 1 when something failed (said), 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "workload.h"
#include "tsp/protocol.h"
#include "tsp/search.h"

#define TSP_MAX_SERVERS 16
#define PIECE_DEPTH     3             /* cities in a piece's prefix, city 0 first */
#define MAX_PIECES      ((TSP_MAX_CITIES - 1) * (TSP_MAX_CITIES - 2))
#define SERVER_WAIT_NS  10000000000ull  /* for a server to register, after it was started */

/* A server: where it runs, the link to it, and what it did. */
struct server {
    uint32_t machine;
    long pid;              /* 0 until started */
    long link;             /* to the server; -1 until found */
    uint32_t queued;       /* pieces given to it and not yet answered */
    uint32_t pieces;       /* pieces it answered */
    uint64_t nodes;        /* partial tours it visited */
};

/* A piece: the tours that begin with prefix. */
struct piece {
    uint8_t prefix[PIECE_DEPTH];
    uint32_t bound;        /* a lower bound of their lengths */
};

static struct tsp_problem problem;
static struct server servers[TSP_MAX_SERVERS];
static uint32_t server_count;
static struct piece pieces[MAX_PIECES];
static uint32_t piece_count, next_piece, skipped;
static struct tsp_tour best;         /* the best tour known */

/* Say how tsp is called; the exit status for bad arguments. */
static int usage(void)
{
    fprintf(stderr, "usage: tsp [-v sync|pipe] [-b edges|length] [-s SEED] N P MACHINES   (N 4 to %d cities,\n"
                    "           P 1 to %d servers, MACHINES where each runs, e.g. 0,1,1,2)\n"
                    "       tsp -d N [SEED]   (the optimum by Held and Karp, in this process)\n",
            TSP_MAX_CITIES, TSP_MAX_SERVERS);
    return 2;
}

/* The comma-separated machine numbers in list, one per server: 0, or -1
 * (saying so when a machine is not in the cluster). */
static int parse_machines(const char *list)
{
    char copy[128];
    if (strlen(list) >= sizeof copy)
        return -1;
    strcpy(copy, list);
    uint32_t n = 0;
    for (char *word = strtok(copy, ","); word; word = strtok(0, ",")) {
        uint64_t machine;
        if (n == server_count || workload_number(word, 0, PM_MAX_MACHINES - 1, &machine) < 0)
            return -1;
        if (machine >= dm_nodes()) {
            fprintf(stderr, "tsp: machine %llu: the cluster has machines 0 to %u\n", (unsigned long long)machine,
                    dm_nodes() - 1);
            return -1;
        }
        servers[n++].machine = (uint32_t)machine;
    }
    return n == server_count ? 0 : -1;
}

/* Print a tour: `LENGTH: 0 a b ... 0`. */
static void print_tour(const char *what, const struct tsp_tour *tour)
{
    printf("tsp: %s %u:", what, tour->length);
    for (uint32_t i = 0; i < problem.cities; i++)
        printf(" %u", tour->city[i]);
    printf(" 0\n");
}

/* Which of two pieces to hand out first: the lower bound, then the prefix. */
static int piece_order(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    if (x->bound != y->bound)
        return x->bound < y->bound ? -1 : 1;
    return memcmp(x->prefix, y->prefix, PIECE_DEPTH);
}

/* Every prefix (0, a, b), most promising first. */
static void make_pieces(void)
{
    piece_count = 0;
    for (uint8_t a = 1; a < problem.cities; a++)
        for (uint8_t b = 1; b < problem.cities; b++) {
            if (a == b)
                continue;
            struct piece *piece = &pieces[piece_count++];
            piece->prefix[0] = 0;
            piece->prefix[1] = a;
            piece->prefix[2] = b;
            piece->bound = tsp_lower_bound(&problem, piece->prefix, PIECE_DEPTH);
        }
    qsort(pieces, piece_count, sizeof pieces[0], piece_order);
}

/* Start every server, find it through the switchboard and send it the
 * distances with a link back here: 0, or 1 after saying what failed. */
static int start_servers(void)
{
    char names[TSP_MAX_SERVERS][SB_NAME_MAX];
    for (uint32_t i = 0; i < server_count; i++) {
        struct server *s = &servers[i];
        snprintf(names[i], SB_NAME_MAX, "tsp.%u.%u.%u", dm_machine(), PID_SLOT(dm_self()), i);
        char *argv[] = { "tspserver", names[i], 0 };
        s->link = -1;
        s->pid = pm_run_on((int)s->machine, "tspserver", 2, argv, 0);
        if (s->pid < 0) {
            fprintf(stderr, "tsp: cannot start server %u on machine %u: %s (%s)\n", i, s->machine,
                    dm_error_name(s->pid), dm_error_text(s->pid));
            s->pid = 0;
            return 1;
        }
    }
    struct tsp_start start = { .kind = TSP_START, .cities = problem.cities, .bound = problem.bound };
    memcpy(start.distance, problem.distance, sizeof start.distance);
    for (uint32_t i = 0; i < server_count; i++) {
        struct server *s = &servers[i];
        s->link = sb_lookup_wait(names[i], SERVER_WAIT_NS);
        long back = s->link < 0 ? s->link : dm_createlink(TSP_CHANNEL, i, 0, 0, 0);
        long err = back < 0 ? back : dm_send(s->link, &start, sizeof start, back);
        if (err < 0) {
            fprintf(stderr, "tsp: server %u on machine %u did not start: %s (%s)\n", i, s->machine,
                    dm_error_name(err), dm_error_text(err));
            return 1;
        }
    }
    return 0;
}

/* Give server s the next piece that could still beat the best tour,
 * skipping those that cannot: 1 if it got one, 0 if none is left, -1
 * after saying why the send failed. */
static int give_piece(struct server *s)
{
    while (next_piece < piece_count &&
           !tsp_may_beat(pieces[next_piece].prefix, PIECE_DEPTH, pieces[next_piece].bound, &best)) {
        next_piece++;
        skipped++;
    }
    if (next_piece == piece_count)
        return 0;
    struct tsp_piece message = { .kind = TSP_PIECE, .id = next_piece, .depth = PIECE_DEPTH, .best = best };
    memcpy(message.prefix, pieces[next_piece].prefix, PIECE_DEPTH);
    long err = dm_send(s->link, &message, sizeof message, DM_NO_LINK);
    if (err < 0) {
        fprintf(stderr, "tsp: sending a piece to the server on machine %u: %s (%s)\n", s->machine,
                dm_error_name(err), dm_error_text(err));
        return -1;
    }
    next_piece++;
    s->queued++;
    return 1;
}

/* Wait for one answer and take its tour and counts: the server it came
 * from, or 0 after saying what was wrong with it. */
static struct server *take_answer(void)
{
    struct tsp_answer answer;
    struct dm_msg_info info;
    long n = dm_receive(&info, &answer, sizeof answer, TSP_CHANNEL);
    if (n != sizeof answer || answer.kind != TSP_ANSWER || info.code >= server_count ||
        servers[info.code].queued == 0) {
        fprintf(stderr, "tsp: a message that is no answer (%ld bytes, code %llu)\n", n,
                (unsigned long long)info.code);
        return 0;
    }
    struct server *s = &servers[info.code];
    s->queued--;
    s->pieces++;
    s->nodes += answer.nodes;
    if (tsp_tour_better(&answer.best, &best))
        best = answer.best;
    return s;
}

/* Hand out every piece, `window` at a time per server, and take every
 * answer: 0, or 1 after saying what failed. */
static int search(uint32_t window)
{
    uint32_t queued = 0;
    for (uint32_t round = 0; round < window; round++)
        for (uint32_t i = 0; i < server_count; i++) {
            int given = give_piece(&servers[i]);
            if (given < 0)
                return 1;
            queued += (uint32_t)given;
        }
    while (queued > 0) {
        struct server *s = take_answer();
        if (s == 0)
            return 1;
        queued--;
        int given = give_piece(s);
        if (given < 0)
            return 1;
        queued += (uint32_t)given;
    }
    return 0;
}

/* End every server started: told to quit and waited for when `politely`,
 * else killed. */
static void stop_servers(int politely)
{
    struct tsp_quit quit = { TSP_QUIT };
    for (uint32_t i = 0; i < server_count; i++) {
        struct server *s = &servers[i];
        if (s->pid == 0)
            continue;
        if (!politely || s->link < 0 || dm_send(s->link, &quit, sizeof quit, DM_NO_LINK) < 0)
            pm_kill((dm_pid)s->pid);
        int64_t status;
        pm_wait((dm_pid)s->pid, &status);
    }
}

/* What the search found and what each server did. */
static void report(const char *version, uint64_t start_ns, uint64_t search_ns)
{
    print_tour("optimum", &best);
    for (uint32_t i = 0; i < server_count; i++) {
        char id[24];
        printf("tsp: server %u (%s on machine %u): %u pieces, %llu partial tours\n", i,
               dm_pid_string((dm_pid)servers[i].pid, id), servers[i].machine, servers[i].pieces,
               (unsigned long long)servers[i].nodes);
    }
    printf("tsp: %s: %u pieces searched, %u skipped; servers started in %llu ns, search %llu ns\n", version,
           piece_count - skipped, skipped, (unsigned long long)start_ns, (unsigned long long)search_ns);
}

/* tsp -d N [SEED]: the optimum by Held and Karp. */
static int exact(int argc, char **argv)
{
    uint64_t cities, seed = 1;
    if (argc < 3 || argc > 4 || workload_number(argv[2], 4, TSP_MAX_CITIES, &cities) < 0 ||
        (argc > 3 && workload_number(argv[3], 0, UINT32_MAX, &seed) < 0))
        return usage();
    tsp_random_problem(&problem, (uint32_t)cities, seed);
    uint64_t ns = dm_clock_ns();
    if (tsp_held_karp(&problem, &best) < 0) {
        fprintf(stderr, "tsp: no memory for Held and Karp's table\n");
        return 1;
    }
    ns = dm_clock_ns() - ns;
    printf("tsp: %llu cities, seed %llu, Held and Karp in one process\n", (unsigned long long)cities,
           (unsigned long long)seed);
    print_tour("optimum", &best);
    printf("tsp: %llu ns\n", (unsigned long long)ns);
    return 0;
}

/* The options (-v, -b, -s) at the start of argv: the index of the first
 * argument after them, or -1 if one is wrong. */
static int parse_options(int argc, char **argv, const char **version, uint32_t *bound, uint64_t *seed)
{
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        const char *option = argv[i], *value = argv[i + 1];
        if (strcmp(option, "-v") == 0 && (strcmp(value, "sync") == 0 || strcmp(value, "pipe") == 0))
            *version = value;
        else if (strcmp(option, "-b") == 0 && strcmp(value, "edges") == 0)
            *bound = TSP_BOUND_EDGES;
        else if (strcmp(option, "-b") == 0 && strcmp(value, "length") == 0)
            *bound = TSP_BOUND_LENGTH;
        else if (strcmp(option, "-s") != 0 || workload_number(value, 0, UINT32_MAX, seed) < 0)
            return -1;
    }
    return i;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-d") == 0)
        return exact(argc, argv);
    uint64_t seed = 1, cities, count;
    const char *version = "sync";
    uint32_t bound = TSP_BOUND_EDGES;
    int i = parse_options(argc, argv, &version, &bound, &seed);
    if (i < 0 || argc - i != 3 || workload_number(argv[i], 4, TSP_MAX_CITIES, &cities) < 0 ||
        workload_number(argv[i + 1], 1, TSP_MAX_SERVERS, &count) < 0)
        return usage();
    server_count = (uint32_t)count;
    if (parse_machines(argv[i + 2]) < 0)
        return usage();
    tsp_random_problem(&problem, (uint32_t)cities, seed);
    problem.bound = bound;
    tsp_nearest_neighbour_tour(&problem, &best);
    make_pieces();
    printf("tsp: %llu cities, seed %llu, %s, bound %s, %u servers on machines %s, %u pieces of %d cities\n",
           (unsigned long long)cities, (unsigned long long)seed, version,
           bound == TSP_BOUND_LENGTH ? "length" : "edges", server_count, argv[i + 2], piece_count, PIECE_DEPTH);
    print_tour("nearest-neighbour tour", &best);
    uint64_t start_ns = dm_clock_ns();
    if (start_servers() != 0) {
        stop_servers(0);
        return 1;
    }
    uint64_t search_ns = dm_clock_ns();
    start_ns = search_ns - start_ns;
    if (search(strcmp(version, "pipe") == 0 ? 2 : 1) != 0) {
        stop_servers(0);
        return 1;
    }
    search_ns = dm_clock_ns() - search_ns;
    stop_servers(1);
    report(version, start_ns, search_ns);
    return 0;
}
