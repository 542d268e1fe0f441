/*
 * syscalls.c — newlib's system calls on DEMOS/MP: the standard streams are
 * messages to the console server, the heap grows by asking the process
 * manager, time comes from the timer server and the info page.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include "dmlib.h"

int main(int argc, char **argv);
extern void __libc_init_array(void);

/* Where crt0 goes: run main, then end with its status. */
void dm_start(int argc, char **argv)
{
    __libc_init_array();
    exit(main(argc, argv));
}

void _exit(int status)
{
    dm_stoptask(status);
}

int _write(int fd, const void *buf, size_t n)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
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

int _read(int fd, void *buf, size_t n)
{
    if (fd != 0) {
        errno = EBADF;
        return -1;
    }
    uint32_t max = n > SV_DATA_MAX ? SV_DATA_MAX : (uint32_t)n;
    struct sv_call c = { .op = CONS_READ, .arg = { max }, .pass = DM_NO_LINK, .reply_data = buf,
                         .reply_cap = max };
    if (sv_call(SLOT_CONSOLE, &c) < 0) {
        errno = EIO;
        return -1;
    }
    return (int)c.reply_len;
}

void *_sbrk(ptrdiff_t increment)
{
    struct sv_call c = { .op = PM_SBRK, .arg = { increment }, .pass = DM_NO_LINK };
    if (sv_call(SLOT_PM, &c) < 0) {
        errno = ENOMEM;
        return (void *)-1;
    }
    return (void *)c.value;
}

int _close(int fd)
{
    if (fd >= 0 && fd <= 2)
        return 0;
    errno = EBADF;
    return -1;
}

int _fstat(int fd, struct stat *st)
{
    if (fd < 0 || fd > 2) {
        errno = EBADF;
        return -1;
    }
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    if (fd >= 0 && fd <= 2)
        return 1;
    errno = EBADF;
    return 0;
}

off_t _lseek(int fd, off_t offset, int whence)
{
    (void)fd, (void)offset, (void)whence;
    errno = ESPIPE;
    return -1;
}

int _open(const char *path, int flags, int mode)
{
    (void)path, (void)flags, (void)mode;
    errno = ENOSYS;   /* files come with the file system (issue 3) */
    return -1;
}

int _unlink(const char *path)
{
    (void)path;
    errno = ENOSYS;
    return -1;
}

int _link(const char *old, const char *new)
{
    (void)old, (void)new;
    errno = ENOSYS;
    return -1;
}

int _stat(const char *path, struct stat *st)
{
    (void)path, (void)st;
    errno = ENOSYS;
    return -1;
}

int _getpid(void)
{
    return (int)PID_SLOT(dm_self());
}

int _kill(int pid, int sig)
{
    if (pid == _getpid())
        _exit(128 + sig);
    errno = EPERM;
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
