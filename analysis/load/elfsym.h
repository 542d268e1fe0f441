/*
 * analysis/load/elfsym.h — function names from an ELF file's symbol table,
 * to name the PCs of trace records (the critical path's functions). ELF64,
 * little-endian (riscv64 and x86-64 alike); only SHT_SYMTAB's STT_FUNC
 * symbols, so a stripped program has none. Every offset in the file is
 * checked before it is read: a damaged file is refused, never followed.
 */
#ifndef ANALYSIS_LOAD_ELFSYM_H
#define ANALYSIS_LOAD_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct elf_function {
    uint64_t start, size;      /* size 0 (assembly without .size): up to the next function */
    const char *name;          /* into elf_symbols.strings */
};

struct elf_symbols {
    struct elf_function *function;   /* sorted by start */
    size_t nfunctions;
    char *strings;                   /* the file's string table, copied */
};

/* Read the functions of the ELF file `path`. 0, or -1 with err saying
 * "FILE: what is wrong". */
int elfsym_load(struct elf_symbols *s, const char *path, char *err, size_t cap);
/* The function holding the address `pc`, or NULL. A return address lies
 * one past its call, past the caller's end when the call is the caller's
 * last instruction: to name the caller, look up the return address - 1
 * (models/critpath.c does). */
const struct elf_function *elfsym_lookup(const struct elf_symbols *s, uint64_t pc);
void elfsym_free(struct elf_symbols *s);

#endif
