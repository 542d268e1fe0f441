/*
 * pong — the other half of the ping-pong pair: registers a link to itself
 * under the name it is given and answers "ping N" with "pong N" until it
 * receives "quit". It says so if a ping comes out of order, or twice.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: pong NAME\n");
        return 2;
    }
    long self = dm_createlink(0, 0, 0, 0, 0);
    long err = sb_register(argv[1], self);
    if (err < 0) {
        printf("pong: cannot register %s: %s\n", argv[1], dm_error_text(err));
        return 1;
    }
    long expected = 0;
    for (;;) {
        char in[64], out[64];
        struct dm_msg_info info;
        long n = dm_receive(&info, in, sizeof in - 1, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        in[n] = 0;
        if (strcmp(in, "quit") == 0)
            break;
        long round;
        if (info.reply >= 0 && sscanf(in, "ping %ld", &round) == 1) {
            if (round != expected)
                printf("pong: ping %ld came when ping %ld was expected\n", round, expected);
            expected = round + 1;
            int len = snprintf(out, sizeof out, "pong %ld", round);
            dm_send(info.reply, out, (uint64_t)len + 1, DM_NO_LINK);
        }
    }
    struct sv_call c = { .op = SB_REMOVE, .data = argv[1], .len = (uint32_t)strlen(argv[1]) + 1,
                         .pass = DM_NO_LINK };
    sv_call(SLOT_SWITCHBOARD, &c);
    return 0;
}
