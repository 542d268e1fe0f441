/*
 * analysis/load/elfsym.c — an ELF64 little-endian symbol-table reader
 * (load/elfsym.h): the whole file is read into memory, and every field is
 * read byte by byte from an offset first checked to lie inside it (ELF: the
 * System V ABI's "Object Files" chapter gives the layouts used below).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/elfsym.h"

#define ELF_HEADER_SIZE   64
#define ELF_SECTION_SIZE  64     /* an Elf64_Shdr */
#define ELF_SYMBOL_SIZE   24     /* an Elf64_Sym */
#define SHT_SYMTAB        2
#define STT_FUNC          2
#define SHN_UNDEF         0
#define ELF_FILE_MAX      (1ull << 30)

/* A file in memory, and where errors go. */
struct elf_file {
    const char *path;
    const unsigned char *data;
    uint64_t size;
    char *err;
    size_t cap;
};

/* A little-endian unsigned field of `bytes` bytes at `at` (checked by the caller). */
static uint64_t field(const struct elf_file *f, uint64_t at, int bytes)
{
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; i--)
        value = value << 8 | f->data[at + (uint64_t)i];
    return value;
}

/* Whether [offset, offset + length) lies inside the file (without overflow). */
static int inside(const struct elf_file *f, uint64_t offset, uint64_t length)
{
    return offset <= f->size && length <= f->size - offset;
}

static int fail(const struct elf_file *f, const char *what)
{
    snprintf(f->err, f->cap, "%s: %s", f->path, what);
    return -1;
}

/* Read the whole file into memory. */
static int read_file(struct elf_file *f, unsigned char **data)
{
    FILE *in = fopen(f->path, "rb");
    size_t capacity = 65536, used = 0, got;
    unsigned char *buffer = malloc(capacity);
    if (!in || !buffer) {
        free(buffer);
        if (in)
            fclose(in);
        snprintf(f->err, f->cap, "%s: %s", f->path, in ? "no memory" : strerror(errno));
        return -1;
    }
    while ((got = fread(buffer + used, 1, capacity - used, in)) > 0) {
        used += got;
        if (used == capacity) {
            unsigned char *bigger = capacity < ELF_FILE_MAX ? realloc(buffer, capacity * 2) : 0;
            if (!bigger) {
                free(buffer);
                fclose(in);
                return fail(f, "too large to read");
            }
            buffer = bigger;
            capacity *= 2;
        }
    }
    int bad = ferror(in);
    fclose(in);
    if (bad) {
        free(buffer);
        return fail(f, "read error");
    }
    *data = buffer;
    f->data = buffer;
    f->size = used;
    return 0;
}

/* The section header table's place, checked: *table and *count. */
static int section_table(const struct elf_file *f, uint64_t *table, uint64_t *count)
{
    static const unsigned char magic[4] = { 0x7f, 'E', 'L', 'F' };
    if (f->size < ELF_HEADER_SIZE || memcmp(f->data, magic, 4) != 0)
        return fail(f, "not an ELF file");
    if (f->data[4] != 2 || f->data[5] != 1)
        return fail(f, "not a 64-bit little-endian ELF file");
    uint64_t offset = field(f, 0x28, 8), entry = field(f, 0x3a, 2), n = field(f, 0x3c, 2);
    if (n == 0)
        return fail(f, "no section headers");
    if (entry < ELF_SECTION_SIZE || !inside(f, offset, entry * n))
        return fail(f, "section header table outside the file (truncated or damaged)");
    *table = offset;
    *count = n;
    return 0;
}

/* A section's offset, size and link: section i of the table at `table`. */
struct elf_section {
    uint64_t type, offset, size, link, entry_size;
};

static struct elf_section section(const struct elf_file *f, uint64_t table, uint64_t i)
{
    uint64_t at = table + i * field(f, 0x3a, 2);
    return (struct elf_section){ field(f, at + 4, 4), field(f, at + 24, 8), field(f, at + 32, 8),
                                 field(f, at + 40, 4), field(f, at + 56, 8) };
}

/* The symbol table and its string table, checked to lie inside the file. */
static int find_symbols(const struct elf_file *f, struct elf_section *symbols, struct elf_section *strings)
{
    uint64_t table, count, i;
    if (section_table(f, &table, &count) < 0)
        return -1;
    for (i = 0; i < count; i++) {
        *symbols = section(f, table, i);
        if (symbols->type == SHT_SYMTAB)
            break;
    }
    if (i == count)
        return fail(f, "no symbol table (stripped?)");
    if (symbols->entry_size < ELF_SYMBOL_SIZE || !inside(f, symbols->offset, symbols->size))
        return fail(f, "symbol table outside the file (truncated or damaged)");
    if (symbols->link >= count)
        return fail(f, "symbol table names no string table");
    *strings = section(f, table, symbols->link);
    if (!inside(f, strings->offset, strings->size) || strings->size == 0)
        return fail(f, "string table outside the file (truncated or damaged)");
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct elf_function *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The defined functions of the symbol table, named from a copy of its
 * string table; a name that does not end inside that table is skipped. */
static int collect(struct elf_symbols *s, const struct elf_file *f, const struct elf_section *symbols,
                   const struct elf_section *strings)
{
    uint64_t n = symbols->size / symbols->entry_size;
    s->strings = malloc(strings->size + 1);
    s->function = malloc(n * sizeof *s->function + 1);
    if (!s->strings || !s->function)
        return fail(f, "no memory for its symbols");
    memcpy(s->strings, f->data + strings->offset, strings->size);
    s->strings[strings->size] = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t at = symbols->offset + i * symbols->entry_size;
        uint64_t name = field(f, at, 4), info = field(f, at + 4, 1), index = field(f, at + 6, 2);
        if ((info & 0xf) != STT_FUNC || index == SHN_UNDEF || name >= strings->size ||
            !memchr(s->strings + name, 0, strings->size - name))
            continue;
        s->function[s->nfunctions++] = (struct elf_function){ field(f, at + 8, 8), field(f, at + 16, 8),
                                                              s->strings + name };
    }
    qsort(s->function, s->nfunctions, sizeof *s->function, by_start);
    return 0;
}

/* Read the functions of `path` (load/elfsym.h). */
int elfsym_load(struct elf_symbols *s, const char *path, char *err, size_t cap)
{
    struct elf_file f = { path, 0, 0, err, cap };
    struct elf_section symbols, strings;
    unsigned char *data = 0;
    memset(s, 0, sizeof *s);
    int ok = read_file(&f, &data) == 0 && find_symbols(&f, &symbols, &strings) == 0 &&
             collect(s, &f, &symbols, &strings) == 0;
    free(data);
    if (!ok)
        elfsym_free(s);
    return ok ? 0 : -1;
}

/* The function holding pc: the last one starting at or before it, if pc
 * is inside it (binary search). */
const struct elf_function *elfsym_lookup(const struct elf_symbols *s, uint64_t pc)
{
    size_t low = 0, high = s->nfunctions;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (s->function[mid].start <= pc)
            low = mid + 1;
        else
            high = mid;
    }
    if (low == 0)
        return 0;
    const struct elf_function *f = &s->function[low - 1];
    return f->size == 0 || pc - f->start < f->size ? f : 0;
}

void elfsym_free(struct elf_symbols *s)
{
    free(s->function);
    free(s->strings);
    memset(s, 0, sizeof *s);
}
