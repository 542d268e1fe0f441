/*
 * ls [-l] [PATH...] — list directories (default /): one name a line; with -l
 * also the type, size and inode of each.
 */
#include <stdio.h>
#include <string.h>
#include "dmlib.h"
#include "fsclient.h"

static int list(const char *path, int long_form)
{
    static struct fs_dirent entries[60];
    struct dm_stat st;
    long ino = fs_lookup(path, &st);
    if (ino < 0) {
        fprintf(stderr, "ls: %s: %s\n", path, dm_error_text(ino));
        return 1;
    }
    if (st.type != FS_TYPE_DIR) {
        if (long_form)
            printf("file %10llu %6u %s\n", (unsigned long long)st.size, st.inode, path);
        else
            printf("%s\n", path);
        return 0;
    }
    for (int64_t first = 0;;) {
        long n = fs_list(path, first, entries, sizeof entries / sizeof entries[0]);
        if (n < 0) {
            fprintf(stderr, "ls: %s: %s\n", path, dm_error_text(n));
            return 1;
        }
        if (n == 0)
            return 0;
        for (long i = 0; i < n; i++) {
            if (!long_form) {
                printf("%s\n", entries[i].name);
                continue;
            }
            char full[1024];
            snprintf(full, sizeof full, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", entries[i].name);
            struct dm_stat e;
            if (fs_lookup(full, &e) < 0)
                printf("?    %10s %6u %s\n", "?", entries[i].inode, entries[i].name);
            else
                printf("%-4s %10llu %6u %s\n", e.type == FS_TYPE_DIR ? "dir" : "file", (unsigned long long)e.size,
                       e.inode, entries[i].name);
        }
        first += n;
    }
}

int main(int argc, char **argv)
{
    int long_form = argc > 1 && strcmp(argv[1], "-l") == 0;
    int status = 0, paths = 0;
    for (int i = 1 + long_form; i < argc; i++, paths++)
        status |= list(argv[i], long_form);
    if (!paths)
        status = list("/", long_form);
    return status;
}
