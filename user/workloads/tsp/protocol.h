/*
 * tsp/protocol.h — the messages between the travelling-salesman controller (tsp.c)
 * and its servers (tspserver.c), and the tour they agree on.
 *
 * A tour starts at city 0. Tours are ordered by length and, between tours
 * of the same length, by their city lists compared lexicographically: the
 * best tour is then unique, so every run with one seed prints the same
 * tour, whichever server finds it first (a tour and its reverse have the
 * same length; the one with the smaller second city wins).
 *
 * The conversation (thesis §5.3.3): the controller starts each server and
 * finds it through the switchboard; it SENDs it a TSP_START with the
 * distances and passes with it a link back to the controller whose code is
 * the server's number. Then TSP_PIECEs go to the server, each with the best
 * tour known, and for each a TSP_ANSWER comes back over that link, in the
 * order of the pieces; a TSP_QUIT ends the server.
 */
#ifndef TSP_PROTOCOL_H
#define TSP_PROTOCOL_H

#include <stdint.h>

#define TSP_MAX_CITIES 16
#define TSP_NO_LENGTH  UINT32_MAX      /* struct tsp_tour.length: no tour */
#define TSP_CHANNEL    1               /* the channel of the link to the controller */

struct tsp_tour {
    uint32_t length;                   /* TSP_NO_LENGTH: no tour */
    uint8_t  city[TSP_MAX_CITIES];     /* city[0] = 0, then the others in order */
};

/* The lower bound that prunes the search (tsp/search.c). */
enum tsp_bound {
    TSP_BOUND_EDGES = 0,               /* the length so far and the cheapest edges left: little search */
    TSP_BOUND_LENGTH,                  /* the length so far alone: much more search */
};

enum tsp_kind {
    TSP_START = 1,
    TSP_PIECE,
    TSP_ANSWER,
    TSP_QUIT,
};

/* Controller to server, first: the distances, with a link to the controller. */
struct tsp_start {
    uint32_t kind;                     /* TSP_START */
    uint32_t cities;                   /* 4 to TSP_MAX_CITIES */
    uint32_t bound;                    /* enum tsp_bound */
    uint16_t distance[TSP_MAX_CITIES][TSP_MAX_CITIES];
};

/* Controller to server: search every tour that begins with prefix. */
struct tsp_piece {
    uint32_t kind;                     /* TSP_PIECE */
    uint32_t id;                       /* the controller's number for it */
    uint32_t depth;                    /* cities in prefix, prefix[0] = 0 */
    uint8_t  prefix[TSP_MAX_CITIES];
    struct tsp_tour best;              /* the best tour the controller knows */
};

/* Server to controller: what a piece gave. */
struct tsp_answer {
    uint32_t kind;                     /* TSP_ANSWER */
    uint32_t id;                       /* the piece's */
    uint64_t nodes;                    /* partial tours the search visited */
    struct tsp_tour best;              /* the best tour the server knows now (it may be the
                                          piece's own bound, or found in an earlier piece) */
};

/* The message that just says what it is: TSP_QUIT. */
struct tsp_quit {
    uint32_t kind;
};

#endif
