/*
 * rm PATH... — remove files and empty directories.
 */
#include <stdio.h>
#include "dmlib.h"
#include "fsclient.h"

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        long err = fs_unlink(argv[i]);
        if (err < 0) {
            fprintf(stderr, "rm: %s: %s\n", argv[i], err == E_STATE ? "directory not empty" : dm_error_text(err));
            status = 1;
        }
    }
    return status;
}
