/*
 * links.h — the protocol of the links lab (docs/labs/links.md): what a
 * linkclient asks a linkserver, and what it passes with each request.
 *
 * Every request is a CALL whose message is a struct sv_request
 * (user/lib/server_protocol.h) with op one of enum links_op, and every
 * answer a struct sv_reply sent over the CALL's reply link: sv_call and
 * sv_reply (user/lib/dmlib.h) make and take both. This file is given whole;
 * the lab is the two programs, linkserver.c and linkclient.c.
 */
#ifndef LINKS_H
#define LINKS_H

#include <stddef.h>
#include <stdint.h>

enum links_op {
    LINKS_HELLO = 1, /* Answer: value = the server's pid; data = "hello, CLIENT, from NAME"
                        (CLIENT: the caller's pid as the kernel names the sender of the
                        request, dm_pid_string; NAME: the name the server serves under) */
    LINKS_NOTE,      /* Passes a link that leads to the client, on LINKS_NOTE_CHANNEL.
                        The server SENDs "note N for CLIENT" over the passed link (N
                        counts the notes it has sent, from 1), destroys the link, and
                        then answers: status 0, or the SEND's error */
    LINKS_PUT,       /* arg0 = n, 1 .. LINKS_MAX. Passes a link whose data area is n bytes
                        of the client's memory, with LINK_READ. The server copies them into
                        its own memory with MOVEDATA and keeps them. Answer: value = their
                        FNV-1a hash (dm_fnv1a); E_INVAL for a bad n */
    LINKS_GET,       /* arg0 = n, 1 .. the bytes the last PUT left. Passes a link whose data
                        area is n bytes of the client's memory, with LINK_WRITE. The server
                        copies its first n bytes there with MOVEDATA. Answer: value = n;
                        E_INVAL for a bad n */
    LINKS_QUIT,      /* The server removes its name from the switchboard, answers, and ends */
};

/* The channel of the link a client passes with LINKS_NOTE: the note comes
 * in on it, apart from anything else. */
#define LINKS_NOTE_CHANNEL 1
/* The most bytes a PUT carries: 256 messages' worth. */
#define LINKS_MAX (1u << 20)
/* How long a client waits for the server's name at the switchboard. */
#define LINKS_FIND_NS 2000000000ull

/* The n bytes a client puts for `seed`: a xorshift64 stream, one byte of
 * each step. The grader makes the same bytes to check the hashes
 * (labs/links/grade.py, pattern). */
static inline void links_fill(uint8_t *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)(x >> 32);
    }
}

#endif
