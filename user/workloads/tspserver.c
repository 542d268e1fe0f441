/*
 * tspserver — a server of the parallel travelling salesman (tsp.c; thesis
 * §5.3.3). Started by the controller, on any machine:
 *
 *     tspserver NAME
 *
 * It registers a link to itself under NAME with the switchboard, takes the
 * distances and a link back to the controller (TSP_START), then searches
 * each piece it is sent by branch and bound (tsp/search.c) and answers with
 * the best tour it knows, until TSP_QUIT. It keeps the best tour across
 * pieces: a piece that waited in its queue (tsp -v pipe) carries a bound
 * older than the one this server may have found since. Exit status 0 after
 * TSP_QUIT; 1 when the controller cannot be reached or a message is wrong;
 * 2 for bad arguments.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "tsp/protocol.h"
#include "tsp/search.h"

static struct tsp_problem problem;
static struct tsp_tour best = { .length = TSP_NO_LENGTH };
static const char *name;

/* Take NAME off the switchboard: the controller has found this server. */
static void unregister(void)
{
    struct sv_call c = { .op = SB_REMOVE, .data = name, .len = (uint32_t)strlen(name) + 1, .pass = DM_NO_LINK };
    sv_call(SLOT_SWITCHBOARD, &c);
}

/* Wait for TSP_START: the link to the controller, or -1 after saying why
 * there is none. */
static long take_start(void)
{
    struct tsp_start start;
    struct dm_msg_info info;
    long n = dm_receive(&info, &start, sizeof start, DM_ANY_CHANNEL);
    if (n != sizeof start || start.kind != TSP_START || info.link < 0 || start.cities < 4 ||
        start.cities > TSP_MAX_CITIES || start.bound > TSP_BOUND_LENGTH) {
        fprintf(stderr, "tspserver %s: the first message is no start (%ld bytes)\n", name, n);
        return -1;
    }
    problem.cities = start.cities;
    problem.bound = start.bound;
    memcpy(problem.distance, start.distance, sizeof problem.distance);
    tsp_prepare(&problem);
    return info.link;
}

/* Whether a piece's prefix is one to search: city 0 first, no city twice. */
static int valid_piece(const struct tsp_piece *piece)
{
    uint32_t seen = 0;
    if (piece->depth < 1 || piece->depth > problem.cities || piece->prefix[0] != 0)
        return 0;
    for (uint32_t i = 0; i < piece->depth; i++) {
        if (piece->prefix[i] >= problem.cities || (seen & (1u << piece->prefix[i])))
            return 0;
        seen |= 1u << piece->prefix[i];
    }
    return 1;
}

/* Search pieces and answer each over `controller` until TSP_QUIT: the exit status. */
static int serve(long controller)
{
    for (;;) {
        struct tsp_piece piece;
        struct dm_msg_info info;
        long n = dm_receive(&info, &piece, sizeof piece, DM_ANY_CHANNEL);
        if (n >= (long)sizeof(uint32_t) && piece.kind == TSP_QUIT)
            return 0;
        if (n != sizeof piece || piece.kind != TSP_PIECE || !valid_piece(&piece)) {
            fprintf(stderr, "tspserver %s: a message that is no piece (%ld bytes)\n", name, n);
            return 1;
        }
        if (tsp_tour_better(&piece.best, &best))
            best = piece.best;
        struct tsp_answer answer = { .kind = TSP_ANSWER, .id = piece.id };
        answer.nodes = tsp_search(&problem, piece.prefix, piece.depth, &best);
        answer.best = best;
        long err = dm_send(controller, &answer, sizeof answer, DM_NO_LINK);
        if (err < 0) {
            fprintf(stderr, "tspserver %s: answering the controller: %s (%s)\n", name, dm_error_name(err),
                    dm_error_text(err));
            return 1;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tspserver NAME   (tsp starts it)\n");
        return 2;
    }
    name = argv[1];
    long self = dm_createlink(0, 0, 0, 0, 0);
    long err = self < 0 ? self : sb_register(name, self);
    if (err < 0) {
        fprintf(stderr, "tspserver: cannot register %s: %s (%s)\n", name, dm_error_name(err), dm_error_text(err));
        return 1;
    }
    long controller = take_start();
    unregister();
    return controller < 0 ? 1 : serve(controller);
}
