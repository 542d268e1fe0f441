/*
 * cp SOURCE DEST — copy a file. DEST may be a directory: the copy goes in it
 * under SOURCE's last name. A DEST that is SOURCE itself (the same inode,
 * by whatever path) is refused: opening it for writing would empty it
 * before it is read. Uses newlib's stdio, which reaches the file system
 * through user/lib/syscalls.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    static char path[1024], buf[16384];
    if (argc != 3) {
        fprintf(stderr, "usage: cp SOURCE DEST\n");
        return 2;
    }
    const char *source = argv[1], *dest = argv[2];
    struct stat st, source_st;
    int source_known = stat(source, &source_st) == 0;
    if (source_known && S_ISDIR(source_st.st_mode)) {
        fprintf(stderr, "cp: %s: is a directory\n", source);
        return 1;
    }
    if (stat(dest, &st) == 0 && S_ISDIR(st.st_mode)) {
        const char *base = strrchr(source, '/');
        snprintf(path, sizeof path, "%s/%s", dest, base ? base + 1 : source);
        dest = path;
    }
    if (source_known && stat(dest, &st) == 0 && st.st_dev == source_st.st_dev && st.st_ino == source_st.st_ino) {
        fprintf(stderr, "cp: %s and %s are the same file\n", argv[1], argv[2]);
        return 1;
    }
    FILE *in = fopen(source, "rb");
    if (!in) {
        fprintf(stderr, "cp: %s: %s\n", source, strerror(errno));
        return 1;
    }
    FILE *out = fopen(dest, "wb");
    if (!out) {
        fprintf(stderr, "cp: %s: %s\n", dest, strerror(errno));
        fclose(in);
        return 1;
    }
    size_t n;
    int status = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (fwrite(buf, 1, n, out) != n) {
            fprintf(stderr, "cp: %s: %s\n", dest, strerror(errno));
            status = 1;
            break;
        }
    }
    if (ferror(in)) {
        fprintf(stderr, "cp: %s: %s\n", source, strerror(errno));
        status = 1;
    }
    fclose(in);
    if (fclose(out) != 0 && status == 0) {
        fprintf(stderr, "cp: %s: %s\n", dest, strerror(errno));
        status = 1;
    }
    return status;
}
