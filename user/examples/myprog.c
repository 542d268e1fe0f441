/*
 * myprog.c — a program of your own, to copy and change (docs/programs.md):
 * plain C11 with newlib. `make prog SRC=user/examples/myprog.c` puts it on
 * the system disk as /bin/myprog; after `make run`, `run myprog` runs it.
 *
 *   myprog               prints hello
 *   myprog NAME...       greets each NAME, says how long the greeting took
 *                        and ends with exit status 3 if GREETING is "bye"
 *
 * GREETING (from the environment: `GREETING=hi run myprog you`) replaces
 * "hello".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    const char *greeting = getenv("GREETING");
    if (!greeting)
        greeting = "hello";
    if (argc == 1) {
        printf("%s\n", greeting);
        return 0;
    }
    clock_t start = clock();
    for (int i = 1; i < argc; i++)
        printf("%s, %s\n", greeting, argv[i]);
    double cpu_ms = 1000.0 * (double)(clock() - start) / CLOCKS_PER_SEC;
    printf("%d greetings in %.3f ms of CPU time\n", argc - 1, cpu_ms);
    return strcmp(greeting, "bye") == 0 ? 3 : 0;
}
