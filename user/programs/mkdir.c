/*
 * mkdir PATH... — make directories.
 */
#include <stdio.h>
#include "dmlib.h"
#include "fsclient.h"

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        long err = fs_create(argv[i], FS_TYPE_DIR, 0);
        if (err < 0) {
            fprintf(stderr, "mkdir: %s: %s\n", argv[i], err == E_STATE ? "exists" : dm_error_text(err));
            status = 1;
        }
    }
    return status;
}
