/*
 * shell.c — the command interpreter on the console.
 *
 *   run PROG ARGS [&]   run a program (in the background with &)
 *   PROG ARGS [&]       the same, for a program that is not a command
 *   ps                  every process: id, name, state, machine, CPU, links
 *   kill PID            end a process (PID as ps shows it: machine.slot.gen)
 *   stop PID, resume PID
 *   echo WORDS          print the words
 *   help                this list
 *   halt                power the system off
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"

#define MAX_ARGS 32

static const char *state_name(uint32_t s)
{
    static const char *names[] = { "free", "created", "ready", "receiving", "calling", "stopped", "kernel" };
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static void cmd_ps(void)
{
    static struct dm_kproc entries[DM_MSG_MAX / sizeof(struct dm_kproc)];
    char id[24];
    printf("%-10s %-14s %-10s %4s %14s %5s %8s\n", "PID", "NAME", "STATE", "NODE", "CPU(instr)", "LINKS",
           "MEM(KiB)");
    int64_t next = 0;
    for (;;) {
        struct sv_call c = { .op = PM_PS, .arg = { next }, .pass = DM_NO_LINK, .reply_data = entries,
                             .reply_cap = sizeof entries };
        long err = sv_call(SLOT_PM, &c);
        if (err < 0) {
            printf("ps: %s\n", dm_error_text(err));
            return;
        }
        for (int64_t i = 0; i < c.value; i++) {
            struct dm_kproc *e = &entries[i];
            printf("%-10s %-14s %-10s %4u %14llu %5u %8llu\n", dm_pid_string(e->pid, id), e->name,
                   state_name(e->state), PID_MACHINE(e->pid), (unsigned long long)e->proctime, e->links,
                   (unsigned long long)(e->memory / 1024));
        }
        if (c.value == 0 || c.reply_len < sizeof entries)
            return;
        next = PID_SLOT(entries[c.value - 1].pid) + 1;
    }
}

/* How a process ended, in words. */
static void report_status(const char *name, dm_pid pid, int64_t status)
{
    char id[24];
    if (status == DM_EXIT_KILLED)
        printf("[%s] %s: killed\n", dm_pid_string(pid, id), name);
    else if (status == DM_EXIT_FAULT)
        printf("[%s] %s: ended by a fault\n", dm_pid_string(pid, id), name);
    else if (status != 0)
        printf("[%s] %s: exit status %lld\n", dm_pid_string(pid, id), name, (long long)status);
}

static void cmd_run(int argc, char **argv, int background)
{
    char id[24];
    if (argc < 1) {
        printf("run: which program?\n");
        return;
    }
    long pid = pm_run(argv[0], argc, argv);
    if (pid < 0) {
        printf("run: %s: %s\n", argv[0], pid == E_NOTFOUND ? "no such program" : dm_error_text(pid));
        return;
    }
    if (background) {
        printf("[%s] %s\n", dm_pid_string((dm_pid)pid, id), argv[0]);
        return;
    }
    int64_t status;
    long err = pm_wait((dm_pid)pid, &status);
    if (err < 0)
        printf("run: waiting for %s: %s\n", argv[0], dm_error_text(err));
    else
        report_status(argv[0], (dm_pid)pid, status);
}

static void cmd_signal(const char *what, int argc, char **argv, long (*action)(dm_pid))
{
    dm_pid pid;
    if (argc != 2 || dm_pid_parse(argv[1], &pid) < 0) {
        printf("%s: usage: %s PID (as ps shows it, e.g. 0.7.1)\n", what, what);
        return;
    }
    long err = action(pid);
    if (err < 0)
        printf("%s: %s: %s\n", what, argv[1], err == E_NOTFOUND ? "no such process" : dm_error_text(err));
}

static void cmd_help(void)
{
    printf("run PROG ARGS [&]  run a program (background with &); 'PROG ARGS' works too\n"
           "ps                 list processes\n"
           "kill PID           end a process; stop PID, resume PID suspend and continue it\n"
           "echo WORDS         print the words\n"
           "help               this list\n"
           "halt               power the system off\n");
}

/* Split line into words; returns their count. */
static int split(char *line, char **argv)
{
    int argc = 0;
    for (char *p = strtok(line, " \t\n"); p && argc < MAX_ARGS; p = strtok(0, " \t\n"))
        argv[argc++] = p;
    return argc;
}

int main(void)
{
    static char line[1024];
    char *argv[MAX_ARGS + 1];
    printf("DEMOS/MP shell. Type help for the commands.\n");
    for (;;) {
        printf("$ ");
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin)) {
            printf("shell: end of input\n");
            return 0;
        }
        int argc = split(line, argv);
        if (argc == 0)
            continue;
        int background = 0;
        if (strcmp(argv[argc - 1], "&") == 0) {
            background = 1;
            argc--;
        }
        argv[argc] = 0;
        if (argc == 0)
            continue;
        const char *cmd = argv[0];
        if (strcmp(cmd, "help") == 0)
            cmd_help();
        else if (strcmp(cmd, "echo") == 0) {
            for (int i = 1; i < argc; i++)
                printf("%s%s", argv[i], i + 1 < argc ? " " : "");
            printf("\n");
        } else if (strcmp(cmd, "ps") == 0)
            cmd_ps();
        else if (strcmp(cmd, "kill") == 0)
            cmd_signal("kill", argc, argv, pm_kill);
        else if (strcmp(cmd, "stop") == 0)
            cmd_signal("stop", argc, argv, pm_stop);
        else if (strcmp(cmd, "resume") == 0)
            cmd_signal("resume", argc, argv, pm_resume);
        else if (strcmp(cmd, "halt") == 0) {
            fflush(stdout);
            long err = pm_halt(0);
            printf("halt: %s\n", dm_error_text(err));
        } else if (strcmp(cmd, "run") == 0)
            cmd_run(argc - 1, argv + 1, background);
        else
            cmd_run(argc, argv, background);
    }
}
