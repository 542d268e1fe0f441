/*
 * cat FILE... — print files.
 */
#include <stdio.h>
#include "dmlib.h"
#include "fsclient.h"

int main(int argc, char **argv)
{
    static char buf[8192];
    int status = 0;
    for (int i = 1; i < argc; i++) {
        struct dm_stat st;
        long file = fs_open(argv[i], FS_ACCESS_READ, &st);
        if (file >= 0 && st.type == FS_TYPE_DIR) {
            fs_close(file);
            file = E_INVAL;
        }
        if (file < 0) {
            fprintf(stderr, "cat: %s: %s\n", argv[i], file == E_INVAL ? "is a directory" : dm_error_text(file));
            status = 1;
            continue;
        }
        long n;
        for (uint64_t at = 0; (n = fs_read(file, at, buf, sizeof buf)) > 0; at += (uint64_t)n)
            fwrite(buf, 1, (size_t)n, stdout);
        fs_close(file);
        if (n < 0) {
            fprintf(stderr, "cat: %s: %s\n", argv[i], dm_error_text(n));
            status = 1;
        }
    }
    return status;
}
