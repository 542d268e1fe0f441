/*
 * analysis/load/programs.c — the processes' programs as ELF symbol tables
 * (load/programs.h).
 */
#define _POSIX_C_SOURCE 200809L   /* opendir, stat */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "load/programs.h"

#define ELF_DIR_DEPTH 4           /* build/user/tests/NAME.elf is 2 below build/ */

/* NAME.elf under dir, at most `depth` levels down, into out: 0 if found. */
static int find_elf(const char *dir, const char *file, int depth, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *entry;
    int found = -1;
    if (!d)
        return -1;
    while (found < 0 && (entry = readdir(d))) {
        struct stat st;
        if (entry->d_name[0] == '.')
            continue;
        snprintf(out, cap, "%s/%s", dir, entry->d_name);
        if (stat(out, &st) < 0)
            continue;
        if (S_ISREG(st.st_mode) && strcmp(entry->d_name, file) == 0)
            found = 0;
        else if (S_ISDIR(st.st_mode) && depth > 0) {
            char sub[4096];
            snprintf(sub, sizeof sub, "%s", out);
            found = find_elf(sub, file, depth - 1, out, cap);
        }
    }
    closedir(d);
    return found;
}

/* The ELF file for programs named `name`: from --elf, or found under --elf-dir. */
static const char *elf_for(const struct program_options *o, const char *name, char *path, size_t cap)
{
    size_t n = strlen(name);
    char file[64];
    for (int i = 0; i < o->nelf; i++)
        if (strncmp(o->elf[i], name, n) == 0 && o->elf[i][n] == '=')
            return o->elf[i] + n + 1;
    snprintf(file, sizeof file, "%s.elf", name);
    return o->elf_dir && name[0] && find_elf(o->elf_dir, file, ELF_DIR_DEPTH, path, cap) == 0 ? path : 0;
}

/* Load each program once (load/programs.h). */
int programs_load(struct program_symbols *s, const struct program_options *o, const struct dpm_trace *t,
                  const char *command)
{
    char path[4096], err[512];
    s->of = calloc(t->nprocesses + 1, sizeof *s->of);
    s->loaded = calloc(t->nprocesses + 1, sizeof *s->loaded);
    s->nloaded = 0;
    if (!s->of || !s->loaded)
        return 1;
    for (size_t p = 0; p < t->nprocesses; p++) {
        for (size_t q = 0; q < p && !s->of[p]; q++)
            if (s->of[q] && strcmp(t->processes[q].name, t->processes[p].name) == 0)
                s->of[p] = s->of[q];
        const char *file = s->of[p] ? 0 : elf_for(o, t->processes[p].name, path, sizeof path);
        if (!file)
            continue;
        if (elfsym_load(&s->loaded[s->nloaded], file, err, sizeof err) < 0) {
            fprintf(stderr, "dpm %s: %s\n", command, err);
            return 1;
        }
        s->of[p] = &s->loaded[s->nloaded++];
    }
    return 0;
}

/* Free every program's symbols. */
void programs_free(struct program_symbols *s)
{
    for (uint32_t i = 0; s->loaded && i < s->nloaded; i++)
        elfsym_free(&s->loaded[i]);
    free(s->loaded);
    free(s->of);
}

/* critpath_namer over the programs' symbols (load/programs.h). */
const char *programs_name_pc(void *context, uint32_t process, uint64_t address, uint64_t *start)
{
    const struct program_symbols *s = context;
    const struct elf_function *f = s->of[process] ? elfsym_lookup(s->of[process], address) : 0;
    if (!f)
        return 0;
    *start = f->start;
    return f->name;
}
