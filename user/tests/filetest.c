/*
 * filetest — newlib's file calls on the file system: fopen, fread, fwrite,
 * fseek, fprintf, fclose; open, read, write, lseek, close, stat, fstat,
 * unlink, rename, mkdir; and their errors. Prints `ok NAME` or
 * `not ok NAME: ...` per check and `filetest: N passed, M failed`.
 *
 *   filetest [DIR]     works in directory DIR (default /filetest), made
 *                      fresh and removed at the end
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;
static char dir[256];

static void check(int ok, const char *name, const char *detail)
{
    if (ok)
        passed++, printf("ok %s\n", name);
    else
        failed++, printf("not ok %s: %s\n", name, detail);
    fflush(stdout);
}

/* A path in the working directory (four buffers in turn). */
static const char *at(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

/* Did the last call fail with errno `want`? */
static void check_errno(int result, int want, const char *name)
{
    char detail[96];
    snprintf(detail, sizeof detail, "result %d, errno %d (%s), wanted %d (%s)", result, errno, strerror(errno),
             want, strerror(want));
    check(result == -1 && errno == want, name, detail);
}

static void stdio_calls(void)
{
    char line[128] = "";
    FILE *f = fopen(at("notes.txt"), "w");
    check(f != 0, "fopen.create", strerror(errno));
    if (!f)
        return;
    fprintf(f, "line %d of %s\n", 1, "notes");
    fprintf(f, "line %d\n", 2);
    check(fclose(f) == 0, "fclose.write", strerror(errno));

    f = fopen(at("notes.txt"), "r");
    check(f && fgets(line, sizeof line, f) && strcmp(line, "line 1 of notes\n") == 0, "fgets.first", line);
    check(f && fgets(line, sizeof line, f) && strcmp(line, "line 2\n") == 0, "fgets.second", line);
    check(f && !fgets(line, sizeof line, f) && feof(f), "fgets.eof", "more than was written");
    check(f && fseek(f, 5, SEEK_SET) == 0 && fgetc(f) == '1' && ftell(f) == 6, "fseek.set", "wrong byte");
    check(f && fseek(f, -7, SEEK_END) == 0 && fgets(line, sizeof line, f) && strcmp(line, "line 2\n") == 0,
          "fseek.end", line);
    if (f)
        fclose(f);

    f = fopen(at("notes.txt"), "a");
    fputs("line 3\n", f);
    fclose(f);
    struct stat st;
    check(stat(at("notes.txt"), &st) == 0 && st.st_size == 16 + 7 + 7 && S_ISREG(st.st_mode), "fopen.append",
          "size after appending");

    /* A megabyte through fwrite and fread, in odd-sized pieces. */
    static unsigned char out[1 << 20], in[1 << 20];
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (unsigned char)(i * 7 + (i >> 12));
    f = fopen(at("big"), "wb");
    size_t written = 0;
    while (f && written < sizeof out) {
        size_t n = sizeof out - written < 12345 ? sizeof out - written : 12345;
        written += fwrite(out + written, 1, n, f);
    }
    check(f && fclose(f) == 0 && written == sizeof out, "fwrite.megabyte", strerror(errno));
    f = fopen(at("big"), "rb");
    size_t got = f ? fread(in, 1, sizeof in, f) : 0;
    check(got == sizeof in && memcmp(in, out, sizeof in) == 0, "fread.megabyte", "data differs");
    if (f)
        fclose(f);
}

static void descriptor_calls(void)
{
    char buf[64];
    int fd = open(at("raw"), O_RDWR | O_CREAT, 0644);
    check(fd >= 3, "open.create", strerror(errno));
    check(write(fd, "hello, world", 12) == 12, "write", strerror(errno));
    check(lseek(fd, 7, SEEK_SET) == 7 && read(fd, buf, sizeof buf) == 5 && memcmp(buf, "world", 5) == 0,
          "lseek.read", "wrong bytes");
    check(read(fd, buf, sizeof buf) == 0, "read.eof", "bytes past the end");
    check(lseek(fd, -5, SEEK_CUR) == 7 && lseek(fd, 0, SEEK_END) == 12, "lseek.cur_end", "wrong offset");
    check_errno((int)lseek(fd, -13, SEEK_END), EINVAL, "lseek.negative");
    /* A hole: bytes never written read as zeros. */
    check(lseek(fd, 100000, SEEK_SET) == 100000 && write(fd, "!", 1) == 1, "write.past_end", strerror(errno));
    struct stat st;
    check(fstat(fd, &st) == 0 && st.st_size == 100001 && S_ISREG(st.st_mode), "fstat.size", "wrong size");
    memset(buf, 1, sizeof buf);
    check(lseek(fd, 50000, SEEK_SET) == 50000 && read(fd, buf, 16) == 16 && buf[0] == 0 && buf[15] == 0,
          "read.hole", "not zeros");
    check(close(fd) == 0, "close", strerror(errno));
    check_errno(close(fd), EBADF, "close.twice");
    check_errno((int)read(fd, buf, 1), EBADF, "read.closed");
    check_errno((int)write(fd, buf, 1), EBADF, "write.closed");
    check_errno((int)lseek(fd, 0, SEEK_SET), EBADF, "lseek.closed");
    check_errno(fstat(fd, &st), EBADF, "fstat.closed");
    check_errno((int)read(999, buf, 1), EBADF, "read.bad_number");
    check_errno((int)write(-1, buf, 1), EBADF, "write.negative");

    fd = open(at("raw"), O_RDONLY);
    check_errno((int)write(fd, "x", 1), EBADF, "write.read_only");
    close(fd);
    fd = open(at("raw"), O_WRONLY);
    check_errno((int)read(fd, buf, 1), EBADF, "read.write_only");
    close(fd);
    fd = open(at("raw"), O_WRONLY | O_TRUNC);
    check(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0, "open.truncate", "size not 0");
    close(fd);
    check_errno(open(at("raw"), O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST, "open.exclusive");
    check_errno(open(at("absent"), O_RDONLY), ENOENT, "open.missing");
    check_errno(open("", O_RDONLY), ENOENT, "open.empty_path");
    check_errno(open(at("raw/below"), O_RDONLY), ENOENT, "open.through_a_file");
    check_errno(open(at("a-name-longer-than-fifty-nine-bytes-is-refused-by-the-directory-manager"), O_RDONLY),
                ENAMETOOLONG, "open.long_name");
    check_errno(open(dir, O_WRONLY), EISDIR, "open.directory_for_writing");

    int fds[40], n = 0;
    while (n < 40 && (fds[n] = open(at("raw"), O_RDONLY)) >= 0)
        n++;
    check(n < 40 && errno == EMFILE, "open.too_many", "no EMFILE");
    while (n > 0)
        close(fds[--n]);
}

static void directory_calls(void)
{
    struct stat st, parent;
    check(mkdir(at("sub"), 0755) == 0 && stat(at("sub"), &st) == 0 && S_ISDIR(st.st_mode), "mkdir",
          strerror(errno));
    check_errno(mkdir(at("sub"), 0755), EEXIST, "mkdir.exists");
    FILE *f = fopen(at("sub/inner"), "w");
    fputs("inside\n", f);
    fclose(f);
    check_errno(unlink(at("sub")), ENOTEMPTY, "unlink.nonempty_directory");

    check(rename(at("notes.txt"), at("renamed.txt")) == 0, "rename.file", strerror(errno));
    check_errno(stat(at("notes.txt"), &st), ENOENT, "rename.old_name_gone");
    check(stat(at("renamed.txt"), &st) == 0 && st.st_size == 30, "rename.new_name", "wrong size");
    check(rename(at("renamed.txt"), at("big")) == 0 && stat(at("big"), &st) == 0 && st.st_size == 30 &&
              stat(at("renamed.txt"), &st) != 0,
          "rename.replaces_a_file", "not replaced");
    check_errno(rename(at("sub"), at("sub/deeper")), EINVAL, "rename.into_itself");
    check_errno(rename(at("missing"), at("other")), ENOENT, "rename.missing");
    check(mkdir(at("to"), 0755) == 0 && rename(at("sub"), at("to/sub")) == 0, "rename.directory", strerror(errno));
    check(stat(at("to/sub/.."), &st) == 0 && stat(at("to"), &parent) == 0 && st.st_ino == parent.st_ino,
          "rename.directory_parent", "its .. was not changed");
    check(stat(at("to"), &st) == 0 && st.st_nlink == 3 && stat(dir, &parent) == 0 && parent.st_nlink == 3,
          "rename.directory_links", "nlink not moved");
    f = fopen(at("to/sub/inner"), "r");
    char line[32] = "";
    check(f && fgets(line, sizeof line, f) && strcmp(line, "inside\n") == 0, "rename.directory_contents", line);
    if (f)
        fclose(f);
    check(unlink(at("to/sub/inner")) == 0 && unlink(at("to/sub")) == 0 && unlink(at("to")) == 0, "unlink.tree",
          strerror(errno));
    check_errno(unlink(at("to")), ENOENT, "unlink.missing");
}

/* Hundreds of files in one directory, and a path twenty directories deep,
 * made, found and removed through newlib. */
static void many_and_deep(void)
{
    char path[512], want[32], line[64];
    int made = 0, found = 0, removed = 0;
    mkdir(at("many"), 0755);
    for (int i = 0; i < 300; i++) {
        snprintf(path, sizeof path, "%s/many/file%03d", dir, i);
        FILE *f = fopen(path, "w");
        if (f && fprintf(f, "file %d\n", i) > 0 && fclose(f) == 0)
            made++;
    }
    for (int i = 299; i >= 0; i--) {   /* found in the other order */
        snprintf(path, sizeof path, "%s/many/file%03d", dir, i);
        snprintf(want, sizeof want, "file %d\n", i);
        FILE *f = fopen(path, "r");
        if (f && fgets(line, sizeof line, f) && strcmp(line, want) == 0)
            found++;
        if (f)
            fclose(f);
    }
    for (int i = 0; i < 300; i++) {
        snprintf(path, sizeof path, "%s/many/file%03d", dir, i);
        removed += unlink(path) == 0;
    }
    snprintf(line, sizeof line, "%d made, %d found, %d removed", made, found, removed);
    check(made == 300 && found == 300 && removed == 300 && rmdir(at("many")) == 0, "directory.300_files", line);

    int depth = 0, ok = 1;
    snprintf(path, sizeof path, "%s", dir);
    for (depth = 0; depth < 20 && ok; depth++) {
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "/d%d", depth);
        ok = mkdir(path, 0755) == 0;
    }
    size_t n = strlen(path);
    snprintf(path + n, sizeof path - n, "/leaf");
    FILE *f = ok ? fopen(path, "w") : 0;
    ok = f && fputs("at the bottom\n", f) >= 0 && fclose(f) == 0;
    struct stat st;
    check(ok && stat(path, &st) == 0 && st.st_size == 14, "path.20_deep", path);
    unlink(path);
    for (; depth > 0; depth--) {   /* remove the tree from the bottom up */
        *strrchr(path, '/') = 0;
        rmdir(path);
    }
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "/filetest");
    if (mkdir(dir, 0755) != 0) {
        printf("filetest: cannot make %s: %s\n", dir, strerror(errno));
        return 1;
    }
    stdio_calls();
    descriptor_calls();
    directory_calls();
    many_and_deep();
    check_errno(rmdir(at("big")), ENOTDIR, "rmdir.file");
    unlink(at("big"));
    unlink(at("raw"));
    check(rmdir(dir) == 0, "rmdir", strerror(errno));
    printf("filetest: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
