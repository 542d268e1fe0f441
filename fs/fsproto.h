/*
 * fsproto.h — the messages of the file system's processes. Requests are
 * struct sv_request (servers/protocol.h) sent by CALL; block data moves by
 * MOVEDATA through a link to the requester's data area passed with the
 * request.
 */
#ifndef FS_PROTOCOL_H
#define FS_PROTOCOL_H

#include "fsformat.h"

/* The disk interface ("di" in the switchboard): the only process that
 * talks to the kernel's disk driver. */
enum di_op {
    DI_INFO = 1,   /* value = the disk's size in blocks */
    DI_READ,       /* arg0 = block, arg1 = offset: the passed link's area (write
                      right) receives the block at that offset */
    DI_WRITE,      /* arg0 = block, arg1 = offset: the passed link's area (read
                      right) holds the block at that offset */
    DI_STATS,      /* data = struct di_stats */
};

/* What the disk interface counts: one each per request it answered. */
struct di_stats {
    uint64_t reads;        /* DI_READ requests that read a block from the disk */
    uint64_t writes;       /* DI_WRITE requests that wrote a block to the disk */
    uint64_t errors;       /* requests answered with an error */
};

#endif
