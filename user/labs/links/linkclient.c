/*
 * linkclient — the client of the links lab (docs/labs/links.md): finds a
 * linkserver by its name at the switchboard and makes one request of it
 * (links.h), printing what came of it.
 *
 *   linkclient NAME hello          the server's greeting
 *   linkclient NAME note           a note the server sends back over a link passed to it
 *   linkclient NAME put N SEED     N bytes made from SEED (links_fill) moved to the server
 *   linkclient NAME get N          N bytes moved back from the server
 *   linkclient NAME quit           the server ends
 *
 * Each ends with status 0 when the request succeeded, else 1 (2 for a
 * usage error).
 *
 * This is the lab's starting point: main, the printing and quit are
 * written; the parts marked TODO are the lab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "links.h"

static long find(const char *name);
static int hello(const char *name, long server);
static int note(long server);
static int put(long server, uint64_t n, uint64_t seed);
static int get(long server, uint64_t n);
static int quit(const char *name, long server);

int main(int argc, char **argv)
{
    const char *step = argc >= 3 ? argv[2] : "";
    int args = strcmp(step, "put") == 0 ? 5 : strcmp(step, "get") == 0 ? 4 : 3;
    uint64_t n = argc > 3 ? strtoull(argv[3], 0, 10) : 0;
    if (argc != args || ((args > 3) && (n < 1 || n > LINKS_MAX)) ||
        (args == 3 && strcmp(step, "hello") && strcmp(step, "note") && strcmp(step, "quit"))) {
        printf("usage: linkclient NAME hello|note|quit, linkclient NAME put N SEED, linkclient NAME get N "
               "(N from 1 to %u)\n", LINKS_MAX);
        return 2;
    }
    long server = find(argv[1]);
    if (server < 0) {
        printf("linkclient: no server %s (%s)\n", argv[1], dm_error_text(server));
        return 1;
    }
    if (strcmp(step, "hello") == 0)
        return hello(argv[1], server);
    if (strcmp(step, "note") == 0)
        return note(server);
    if (strcmp(step, "put") == 0)
        return put(server, n, strtoull(argv[4], 0, 10));
    if (strcmp(step, "get") == 0)
        return get(server, n);
    return quit(argv[1], server);
}

/* Say that a part of the lab is not written yet; the exit status. Delete
 * it with the last call to it: the compiler refuses a function no one calls. */
static int not_written(const char *what, int part)
{
    printf("linkclient: %s is not written yet (docs/labs/links.md, part %d)\n", what, part);
    return 1;
}

/* Say what went wrong with a request; the exit status. */
static int failed(const char *request, long err)
{
    printf("linkclient: %s: %s\n", request, dm_error_text(err));
    return 1;
}

/* Part 1: a link to the server called `name`, from the switchboard, which
 * may wait up to LINKS_FIND_NS for the name; the slot, or an error. */
static long find(const char *name)
{
    /* TODO(lab links, part 1): ask the switchboard for `name`, waiting up
     * to LINKS_FIND_NS for it (sb_lookup_wait), and return what it gives. */
    (void)name;
    not_written("find", 1);
    return E_NOSYS;
}

/* Part 1: the server's greeting, and who it is. */
static int hello(const char *name, long server)
{
    /* TODO(lab links, part 1): CALL the server with LINKS_HELLO (sv_call,
     * as quit does), its answer's data into a buffer. The answer's value
     * says who the server is; c.replier, who answered, as the kernel knows
     * it: if they differ, say so and return 1. Else print
     *   linkclient: found NAME: process PID says "GREETING"
     * (PID: dm_pid_string of the server's pid) and return 0. */
    (void)name, (void)server;
    return not_written("hello", 1);
}

/* Part 2: pass the server a link to this process on LINKS_NOTE_CHANNEL and
 * receive the note it sends over it. */
static int note(long server)
{
    /* TODO(lab links, part 2): make a link to this process on
     * LINKS_NOTE_CHANNEL (dm_createlink), pass it with a LINKS_NOTE request
     * (sv_call's .pass), then RECEIVE the note on that channel alone
     * (dm_receive) and print
     *   linkclient: note from PID: NOTE
     * PID being the note's sender as the kernel says (info.sender). */
    (void)server;
    return not_written("note", 2);
}

/* Part 3: n bytes made from `seed` to the server, through a link to them
 * with LINK_READ that it moves them with. */
static int put(long server, uint64_t n, uint64_t seed)
{
    /* TODO(lab links, part 3): fill the first n bytes of a static buffer of
     * LINKS_MAX bytes (links_fill), make a link to them with LINK_READ (dm_createlink with an area), pass
     * it with a LINKS_PUT request of arg0 = n, and print
     *   linkclient: put N bytes (fnv1a H), the server's fnv1a S
     * H being dm_fnv1a of the bytes and S the answer's value, each as
     * %016llx; return 0 if they agree, else 1. */
    (void)server, (void)n, (void)seed;
    return not_written("put", 3);
}

/* Part 3: n bytes back from the server, through a link to the buffer with
 * LINK_WRITE that it moves them with. */
static int get(long server, uint64_t n)
{
    /* TODO(lab links, part 3): clear the first n bytes of the same buffer,
     * make a link to them with LINK_WRITE, pass it with a LINKS_GET request of arg0 = n,
     * and print
     *   linkclient: got N bytes (fnv1a H)
     * H being dm_fnv1a of the n bytes now in the buffer. */
    (void)server, (void)n;
    return not_written("get", 3);
}

/* Ask the server to end. */
static int quit(const char *name, long server)
{
    struct sv_call c = { .op = LINKS_QUIT, .pass = DM_NO_LINK };
    long status = sv_call(server, &c);
    if (status < 0)
        return failed("quit", status);
    printf("linkclient: %s has quit\n", name);
    return 0;
}
