/*
 * mv SOURCE DEST — rename a file or directory (one request to the file
 * system: the directory manager's DMG_RENAME). DEST may be an existing
 * directory: SOURCE moves into it under its own last name. An existing file
 * DEST is replaced.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    static char path[1024];
    if (argc != 3) {
        fprintf(stderr, "usage: mv SOURCE DEST\n");
        return 2;
    }
    const char *source = argv[1], *dest = argv[2];
    struct stat st;
    if (stat(dest, &st) == 0 && S_ISDIR(st.st_mode)) {
        const char *base = strrchr(source, '/');
        snprintf(path, sizeof path, "%s/%s", dest, base ? base + 1 : source);
        dest = path;
    }
    if (rename(source, dest) != 0) {
        fprintf(stderr, "mv: %s to %s: %s\n", source, dest,
                errno == EINVAL ? "a directory cannot move into itself" : strerror(errno));
        return 1;
    }
    return 0;
}
