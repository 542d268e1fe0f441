/*
 * unsupported.c — the POSIX calls a DEMOS/MP process cannot make. Each
 * fails at once with errno ENOSYS (a pointer-returning one returns 0):
 * a process is started by the process manager from a program in /bin
 * (pm_run, user/lib/dmlib.h), not by forking or replacing itself; it has
 * no parent to wait for, no pipes, and no signals from other processes;
 * its file descriptors are entries in user/lib/syscalls.c's table, which
 * cannot be shared. docs/programs.md lists these for program writers.
 *
 * newlib's system() calls _fork, so system(COMMAND) fails with ENOSYS too
 * (system(0) answers 0: there is no command processor); newlib's
 * signal() and raise() work within a process, and kill() of the process
 * itself ends it (_kill in syscalls.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int unsupported(void)
{
    errno = ENOSYS;
    return -1;
}

int _fork(void)
{
    return unsupported();
}

int _execve(const char *path, char *const argv[], char *const envp[])
{
    (void)path, (void)argv, (void)envp;
    return unsupported();
}

int _wait(int *status)
{
    (void)status;
    return unsupported();
}

pid_t waitpid(pid_t pid, int *status, int options)
{
    (void)pid, (void)status, (void)options;
    return unsupported();
}

FILE *popen(const char *command, const char *mode)
{
    (void)command, (void)mode;
    errno = ENOSYS;
    return 0;
}

int pclose(FILE *stream)
{
    (void)stream;
    return unsupported();
}

int pipe(int fds[2])
{
    (void)fds;
    return unsupported();
}

int dup(int fd)
{
    (void)fd;
    return unsupported();
}

int dup2(int fd, int fd2)
{
    (void)fd, (void)fd2;
    return unsupported();
}

int sigaction(int sig, const struct sigaction *action, struct sigaction *old)
{
    (void)sig, (void)action, (void)old;
    return unsupported();
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    (void)how, (void)set, (void)old;
    return unsupported();
}
