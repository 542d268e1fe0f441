/*
 * syscalls.c — newlib's system calls on DEMOS/MP: the standard streams are
 * messages to the console server, files are requests to the file system's
 * request interpreter (fsclient.c), the heap grows by asking the process
 * manager, time comes from the timer server and the info page.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include "dmlib.h"
#include "fsclient.h"

int main(int argc, char **argv);
extern void __libc_init_array(void);
extern char **environ;

/* ---- file descriptors ----
 * 0 is the console's input, 1 and 2 its output, until closed. A file's
 * descriptor keeps its file link (fsclient.h) and its offset here: the
 * request interpreter is told the offset with every read and write and
 * keeps no state per client (docs/fs-design.md). Paths that do not start
 * with '/' are taken from the root: there is no working directory. */
#define MAX_FILES 32
enum fd_kind { FD_FREE, FD_CONSOLE_IN, FD_CONSOLE_OUT, FD_FILE };
struct open_file {
    enum fd_kind kind;
    long     file;      /* the file link */
    int      flags;     /* O_ACCMODE bits and O_APPEND */
    int      is_dir;
    uint64_t offset;
};
static struct open_file files[MAX_FILES] = {
    [0] = { .kind = FD_CONSOLE_IN }, [1] = { .kind = FD_CONSOLE_OUT }, [2] = { .kind = FD_CONSOLE_OUT },
};

/* Set errno for a dm_error; `state` is what E_STATE means for this call. */
static int fail(long err, int state)
{
    switch (err) {
    case E_NOTFOUND: errno = ENOENT; break;
    case E_STATE:    errno = state; break;
    case E_NOMEM:    errno = ENOSPC; break;   /* the inode table is full */
    case E_DISKFULL: errno = ENOSPC; break;
    case E_NAMETOOLONG: errno = ENAMETOOLONG; break;
    case E_FSDOWN:   errno = EIO; break;      /* one of the file system's processes is gone */
    case E_INVAL:    errno = EINVAL; break;
    case E_TOOBIG:   errno = EFBIG; break;
    case E_RIGHTS:   errno = EBADF; break;
    case E_LINKFULL: errno = EMFILE; break;
    default:         errno = EIO;
    }
    return -1;
}

static struct open_file *descriptor(int fd)
{
    if (fd < 0 || fd >= MAX_FILES || files[fd].kind == FD_FREE) {
        errno = EBADF;
        return 0;
    }
    return &files[fd];
}

/* path made absolute into full (PATH_MAX bytes); 0, or -1 with errno. */
static int absolute(const char *path, char *full, size_t cap)
{
    if (!path || !*path) {
        errno = ENOENT;
        return -1;
    }
    int n = snprintf(full, cap, "%s%s", path[0] == '/' ? "" : "/", path);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int _open(const char *path, int flags, int mode)
{
    (void)mode;   /* no owners or permissions */
    char full[1024];
    struct dm_stat st;
    if (absolute(path, full, sizeof full) < 0)
        return -1;
    int fd = 0;
    while (fd < MAX_FILES && files[fd].kind != FD_FREE)
        fd++;
    if (fd == MAX_FILES) {
        errno = EMFILE;
        return -1;
    }
    int mode_bits = flags & O_ACCMODE;
    uint32_t access = mode_bits == O_RDONLY ? FS_ACCESS_READ
                      : mode_bits == O_WRONLY ? FS_ACCESS_WRITE : FS_ACCESS_READ | FS_ACCESS_WRITE;
    const struct dm_stat fresh = { .type = FS_TYPE_FILE, .nlink = 1, .size = 0 };
    long file;
    if ((flags & O_CREAT) && (flags & O_EXCL)) {
        file = fs_create(full, FS_TYPE_FILE, access);
        st = fresh;
        if (file < 0)
            return fail(file, EEXIST);
    } else {
        file = fs_open(full, access, &st);
        if (file == E_NOTFOUND && (flags & O_CREAT)) {
            file = fs_create(full, FS_TYPE_FILE, access);
            st = fresh;
            if (file == E_STATE)   /* made by someone else meanwhile */
                file = fs_open(full, access, &st);
        }
        if (file < 0)
            return fail(file, EISDIR);   /* E_STATE: writing to a directory */
    }
    if ((flags & O_TRUNC) && mode_bits != O_RDONLY && st.size > 0) {
        long err = fs_truncate(file);
        if (err < 0) {
            fs_close(file);
            return fail(err, EIO);
        }
    }
    files[fd] = (struct open_file){ FD_FILE, file, flags & (O_ACCMODE | O_APPEND), st.type == FS_TYPE_DIR, 0 };
    return fd;
}

/* Console output: CONS_WRITE messages of at most SV_DATA_MAX bytes. */
static int console_write(const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        uint32_t chunk = n - done > SV_DATA_MAX ? SV_DATA_MAX : (uint32_t)(n - done);
        struct sv_call c = { .op = CONS_WRITE, .data = (const char *)buf + done, .len = chunk,
                             .pass = DM_NO_LINK };
        if (sv_call(SLOT_CONSOLE, &c) < 0) {
            errno = EIO;
            return done ? (int)done : -1;
        }
        done += chunk;
    }
    return (int)n;
}

int _write(int fd, const void *buf, size_t n)
{
    struct open_file *f = descriptor(fd);
    if (!f)
        return -1;
    if (f->kind == FD_CONSOLE_OUT)
        return console_write(buf, n);
    if (f->kind != FD_FILE || (f->flags & O_ACCMODE) == O_RDONLY) {
        errno = EBADF;
        return -1;
    }
    if (f->flags & O_APPEND) {
        struct dm_stat st;
        long err = fs_stat(f->file, &st);
        if (err < 0)
            return fail(err, EIO);
        f->offset = st.size;
    }
    long done = fs_write(f->file, f->offset, buf, n);
    if (done < 0)
        return fail(done, EIO);
    f->offset += (uint64_t)done;
    return (int)done;
}

int _read(int fd, void *buf, size_t n)
{
    struct open_file *f = descriptor(fd);
    if (!f)
        return -1;
    if (f->kind == FD_CONSOLE_IN) {
        uint32_t max = n > SV_DATA_MAX ? SV_DATA_MAX : (uint32_t)n;
        struct sv_call c = { .op = CONS_READ, .arg = { max }, .pass = DM_NO_LINK, .reply_data = buf,
                             .reply_cap = max };
        if (sv_call(SLOT_CONSOLE, &c) < 0) {
            errno = EIO;
            return -1;
        }
        return (int)c.reply_len;
    }
    if (f->kind != FD_FILE || (f->flags & O_ACCMODE) == O_WRONLY) {
        errno = EBADF;
        return -1;
    }
    if (f->is_dir) {
        errno = EISDIR;
        return -1;
    }
    long done = fs_read(f->file, f->offset, buf, n);
    if (done < 0)
        return fail(done, EIO);
    f->offset += (uint64_t)done;
    return (int)done;
}

off_t _lseek(int fd, off_t offset, int whence)
{
    struct open_file *f = descriptor(fd);
    if (!f)
        return -1;
    if (f->kind != FD_FILE) {
        errno = ESPIPE;
        return -1;
    }
    int64_t base = 0;
    if (whence == SEEK_CUR) {
        base = (int64_t)f->offset;
    } else if (whence == SEEK_END) {
        struct dm_stat st;
        long err = fs_stat(f->file, &st);
        if (err < 0)
            return fail(err, EIO);
        base = (int64_t)st.size;
    } else if (whence != SEEK_SET) {
        errno = EINVAL;
        return -1;
    }
    if (base + offset < 0) {
        errno = EINVAL;
        return -1;
    }
    f->offset = (uint64_t)(base + offset);
    return (off_t)f->offset;
}

int _close(int fd)
{
    struct open_file *f = descriptor(fd);
    if (!f)
        return -1;
    if (f->kind == FD_FILE)
        fs_close(f->file);
    f->kind = FD_FREE;
    return 0;
}

static void stat_from(const struct dm_stat *d, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = d->inode;
    st->st_mode = (d->type == FS_TYPE_DIR ? S_IFDIR | 0755 : S_IFREG | 0644);
    st->st_nlink = d->nlink;
    st->st_size = (off_t)d->size;
    st->st_blksize = FS_BLOCK_SIZE;
    st->st_blocks = (blkcnt_t)((d->size + 511) / 512);
}

int _fstat(int fd, struct stat *st)
{
    struct open_file *f = descriptor(fd);
    if (!f)
        return -1;
    if (f->kind != FD_FILE) {
        memset(st, 0, sizeof *st);
        st->st_mode = S_IFCHR;
        return 0;
    }
    struct dm_stat d;
    long err = fs_stat(f->file, &d);
    if (err < 0)
        return fail(err, EIO);
    stat_from(&d, st);
    return 0;
}

int _stat(const char *path, struct stat *st)
{
    char full[1024];
    struct dm_stat d;
    if (absolute(path, full, sizeof full) < 0)
        return -1;
    long err = fs_lookup(full, &d);
    if (err < 0)
        return fail(err, EIO);
    stat_from(&d, st);
    return 0;
}

int _isatty(int fd)
{
    struct open_file *f = descriptor(fd);
    return f && f->kind != FD_FILE;
}

int _unlink(const char *path)
{
    char full[1024];
    if (absolute(path, full, sizeof full) < 0)
        return -1;
    long err = fs_unlink(full);
    return err < 0 ? fail(err, ENOTEMPTY) : 0;
}

/* newlib has no mkdir or rmdir of its own for this target: here they are. */
int mkdir(const char *path, mode_t mode)
{
    (void)mode;
    char full[1024];
    if (absolute(path, full, sizeof full) < 0)
        return -1;
    long err = fs_create(full, FS_TYPE_DIR, 0);
    return err < 0 ? fail(err, EEXIST) : 0;
}

int rmdir(const char *path)
{
    char full[1024];
    struct dm_stat st;
    if (absolute(path, full, sizeof full) < 0)
        return -1;
    long err = fs_lookup(full, &st);
    if (err >= 0 && st.type != FS_TYPE_DIR) {
        errno = ENOTDIR;
        return -1;
    }
    if (err >= 0)
        err = fs_unlink(full);
    return err < 0 ? fail(err, ENOTEMPTY) : 0;
}

/* newlib's rename() calls this; defining it keeps its link-and-unlink
 * version (which needs hard links) out. */
int _rename_r(struct _reent *reent, const char *old_path, const char *new_path)
{
    (void)reent;
    char from[1024], to[1024];
    if (absolute(old_path, from, sizeof from) < 0 || absolute(new_path, to, sizeof to) < 0)
        return -1;
    long err = fs_rename(from, to);
    return err < 0 ? fail(err, ENOTEMPTY) : 0;
}

int _link(const char *old, const char *new)
{
    (void)old, (void)new;
    errno = ENOSYS;   /* the file system has no call to add a second name */
    return -1;
}

/* Standard error's buffer: stderr is line buffered, so that a line is one
 * write to the console. Unbuffered, as newlib starts it, a process's first
 * fprintf to it writes each piece of the format on its own (newlib's
 * one-write path for unbuffered streams begins with the second), perror
 * always does, and other output comes between the pieces. */
static char stderr_buffer[BUFSIZ];

/* Where crt0 goes: set up the environment, standard error's buffering and
 * the redirection of standard output the shell asked for (DM_STDOUT=PATH,
 * or DM_STDOUT_APPEND=PATH), run main, then end with its status. */
void dm_start(int argc, char **argv, char **envp)
{
    environ = envp;
    __libc_init_array();
    setvbuf(stderr, stderr_buffer, _IOLBF, sizeof stderr_buffer);
    const char *out = getenv("DM_STDOUT"), *append = getenv("DM_STDOUT_APPEND");
    if (out || append) {
        close(1);
        int flags = O_WRONLY | O_CREAT | (out ? O_TRUNC : O_APPEND);
        if (open(out ? out : append, flags, 0666) != 1) {
            fprintf(stderr, "%s: cannot write %s: %s\n", argv[0], out ? out : append, strerror(errno));
            exit(1);
        }
    }
    exit(main(argc, argv));
}

void _exit(int status)
{
    dm_stoptask(status);
}

/* Weak: the process manager, which answers PM_SBRK, has its own. */
__attribute__((weak)) void *_sbrk(ptrdiff_t increment)
{
    struct sv_call c = { .op = PM_SBRK, .arg = { increment }, .pass = DM_NO_LINK };
    if (sv_call(SLOT_PM, &c) < 0) {
        errno = ENOMEM;
        return (void *)-1;
    }
    return (void *)c.value;
}

int _getpid(void)
{
    return (int)PID_SLOT(dm_self());
}

/* A signal to the process itself (abort, raise with the default action)
 * ends it with status 128 + the signal's number; other processes cannot
 * be signalled (unsupported.c). */
int _kill(int pid, int sig)
{
    if (pid == _getpid())
        _exit(128 + sig);
    errno = ENOSYS;
    return -1;
}

int _gettimeofday(struct timeval *tv, void *tz)
{
    (void)tz;
    uint64_t wall;
    if (timer_time(&wall, 0) < 0) {
        errno = EIO;
        return -1;
    }
    tv->tv_sec = (time_t)(wall / 1000000000u);
    tv->tv_usec = (suseconds_t)(wall % 1000000000u / 1000u);
    return 0;
}

/* CPU time is PROCTIME: one instruction is one ns under -icount shift=0. */
clock_t _times(struct tms *t)
{
    clock_t cpu = (clock_t)(dm_proctime() / (1000000000u / CLOCKS_PER_SEC));
    t->tms_utime = cpu;
    t->tms_stime = 0;
    t->tms_cutime = 0;
    t->tms_cstime = 0;
    return (clock_t)(dm_clock_ns() / (1000000000u / CLOCKS_PER_SEC));
}

unsigned sleep(unsigned seconds)
{
    timer_sleep_ns((uint64_t)seconds * 1000000000u);
    return 0;
}

int usleep(useconds_t us)
{
    return timer_sleep_ns((uint64_t)us * 1000u) < 0 ? -1 : 0;
}
