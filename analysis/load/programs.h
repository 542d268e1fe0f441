/*
 * analysis/load/programs.h — the programs of a trace's processes, as ELF
 * symbol tables (load/elfsym.h), found by the processes' names: for naming
 * the PCs of trace records by function (the critical path's functions in
 * `dpm critpath` and `dpm report`).
 */
#ifndef ANALYSIS_LOAD_PROGRAMS_H
#define ANALYSIS_LOAD_PROGRAMS_H

#include <stdint.h>

#include "load/elfsym.h"
#include "load/event.h"

/* Where the programs are: --elf NAME=FILE (repeatable) and --elf-dir DIR. */
struct program_options {
    const char *elf_dir;       /* NAME.elf is looked for under it, up to 4 levels down */
    const char **elf;          /* NAME=FILE */
    int nelf;
};

/* The symbols of each process's program. */
struct program_symbols {
    struct elf_symbols **of;   /* [nprocesses]: NULL if unknown */
    struct elf_symbols *loaded;
    uint32_t nloaded;
};

/* Load each program of trace t's processes once (processes of one name
 * share it). 0, or 1 after printing `dpm COMMAND: why` on stderr. */
int programs_load(struct program_symbols *s, const struct program_options *o, const struct dpm_trace *t,
                  const char *command);
void programs_free(struct program_symbols *s);

/* A critpath_namer (models/critpath.h) over the symbols: context is the struct program_symbols. */
const char *programs_name_pc(void *context, uint32_t process, uint64_t address, uint64_t *start);

#endif
