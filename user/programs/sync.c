/*
 * sync — write every changed block in the buffer manager's cache to the disk.
 */
#include <stdio.h>
#include "dmlib.h"
#include "fs_protocol.h"

int main(void)
{
    long bm = sb_lookup("bm");
    if (bm < 0) {
        printf("sync: no file system\n");
        return 1;
    }
    struct sv_call c = { .op = BM_SYNC, .pass = DM_NO_LINK };
    long err = sv_call(bm, &c);
    if (err < 0) {
        printf("sync: %s\n", dm_error_text(err));
        return 1;
    }
    return 0;
}
