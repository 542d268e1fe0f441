/*
 * fdt.c — the boot arguments QEMU passes in its device tree (`-append
 * "..."` becomes /chosen/bootargs). QEMU's reset code starts the kernel with
 * a1 = the device tree's address; entry.S hands it to machine_start, which
 * keeps it in boot_fdt. The tree lies in RAM the page allocator will give
 * out, so it is read once, before page_init.
 *
 * Device-tree blob layout (Devicetree Specification, chapter 5): a header
 * of big-endian 32-bit words, then a structure block of tokens (BEGIN_NODE
 * name, PROP len nameoff value, END_NODE, NOP, END), each padded to 4 bytes,
 * and a strings block holding property names.
 */
#include "defs.h"

#define FDT_MAGIC      0xd00dfeedu
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9
#define FDT_MAX_SIZE   (1u << 20)   /* larger than QEMU's virt tree; a bound for a bad one */

uint64_t boot_fdt __attribute__((section(".data")));   /* kept apart from the .bss main() clears */
static char bootargs[256];

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Copy /chosen/bootargs out of the device tree at boot_fdt, if there is one. */
void fdt_read_bootargs(void)
{
    const uint8_t *fdt = (const uint8_t *)boot_fdt;
    if (!fdt || be32(fdt) != FDT_MAGIC || be32(fdt + 4) > FDT_MAX_SIZE)
        return;
    uint32_t size = be32(fdt + 4), structs = be32(fdt + 8), strings = be32(fdt + 12);
    const uint8_t *p = fdt + structs, *end = fdt + size;
    int depth = 0, in_chosen = 0;
    while (p + 4 <= end) {
        uint32_t token = be32(p);
        p += 4;
        if (token == FDT_BEGIN_NODE) {
            const char *name = (const char *)p;
            depth++;
            in_chosen = depth == 2 && strcmp(name, "chosen") == 0;
            p += (strlen(name) + 1 + 3) & ~3UL;
        } else if (token == FDT_END_NODE) {
            depth--;
            in_chosen = 0;
        } else if (token == FDT_PROP && p + 8 <= end) {
            uint32_t len = be32(p), name_offset = be32(p + 4);
            const char *value = (const char *)p + 8;
            if (in_chosen && strings + name_offset < size &&
                strcmp((const char *)fdt + strings + name_offset, "bootargs") == 0) {
                strlcpy_k(bootargs, value, len < sizeof bootargs ? len : sizeof bootargs);   /* len counts the NUL */
                return;
            }
            p += 8 + ((len + 3) & ~3UL);
        } else if (token != FDT_NOP) {
            return;   /* FDT_END, or a tree this reader does not understand */
        }
    }
}

/* Does word `word` of the boot arguments start with `name=` and a digit? */
static int names(const char *word, const char *name)
{
    while (*name && *word == *name)
        word++, name++;
    return !*name && word[0] == '=' && word[1] >= '0' && word[1] <= '9';
}

/* The boot arguments as QEMU gave them ("" if none). */
const char *bootargs_text(void)
{
    return bootargs;
}

/* The number after `name=` in the boot arguments; 0 and no change to
 * *value if it is not there. */
int bootarg_number(const char *name, uint64_t *value)
{
    size_t n = strlen(name);
    for (const char *p = bootargs; *p; p++) {
        if ((p == bootargs || p[-1] == ' ') && names(p, name)) {
            uint64_t v = 0;
            for (p += n + 1; *p >= '0' && *p <= '9'; p++)
                v = v * 10 + (uint64_t)(*p - '0');
            *value = v;
            return 1;
        }
    }
    return 0;
}

/* Copy the word after `name=` in the boot arguments into out[0..cap-1]
 * (cut at cap-1 bytes, NUL-terminated), and blank the whole word in the
 * boot arguments, so that no one reads it after this (the process
 * manager's arguments are taken from them: a secret such as the cluster's
 * key must not reach a process). 0 if the word is not there. */
int bootarg_take(const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (char *p = bootargs; *p; p++) {
        size_t same = 0;
        while (same < n && p[same] == name[same])
            same++;
        if ((p == bootargs || p[-1] == ' ') && same == n && p[n] == '=') {
            size_t len = 0;
            for (char *q = p + n + 1; *q && *q != ' '; q++)
                if (len + 1 < cap)
                    out[len++] = *q;
            out[len] = 0;
            while (*p && *p != ' ')
                *p++ = ' ';
            return 1;
        }
    }
    return 0;
}
