/*
 * elf.c — load a program image (a static RISC-V ELF executable) into a new
 * process's address space. The image is in the kernel (the boot image) or
 * in a data area of a process's memory (a program the process manager read
 * from the file system); it is read through image_read either way.
 */
#include "defs.h"

#define ELF_MAGIC 0x464c457fu   /* "\x7fELF" */
#define EM_RISCV 243
#define PT_LOAD 1
#define PF_X 1
#define PF_W 2
#define PF_R 4

struct elf_header {
    uint32_t magic;
    uint8_t  class, data, version, osabi, abiversion, pad[7];
    uint16_t type, machine;
    uint32_t version2;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf_program_header {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

/* len bytes at offset of the image into dst (kernel memory); E_BADREQ if
 * they are not all there. */
static int image_read(const struct image_source *image, uint64_t offset, void *dst, uint64_t len)
{
    if (offset > image->size || len > image->size - offset)
        return E_BADREQ;
    if (image->kernel) {
        memcpy(dst, image->kernel + offset, len);
        return 0;
    }
    if (image->pages) {
        for (uint64_t done = 0; done < len;) {
            uint64_t at = offset + done, n = PAGE_SIZE - at % PAGE_SIZE;
            if (n > len - done)
                n = len - done;
            memcpy((uint8_t *)dst + done, image->pages[at / PAGE_SIZE] + at % PAGE_SIZE, n);
            done += n;
        }
        return 0;
    }
    return copy_in(image->owner, dst, image->address + offset, len) ? E_BADREQ : 0;
}

/* Map and fill every PT_LOAD segment of the image into p; set its entry
 * point and heap start. Returns 0 or E_BADREQ (not a loadable image) or
 * E_NOMEM. */
int elf_load(struct proc *p, const struct image_source *image)
{
    struct elf_header header, *eh = &header;
    if (image_read(image, 0, eh, sizeof *eh) || eh->magic != ELF_MAGIC || eh->class != 2 ||
        eh->machine != EM_RISCV || eh->phentsize != sizeof(struct elf_program_header))
        return E_BADREQ;
    uint64_t top = 0;
    for (int i = 0; i < eh->phnum; i++) {
        struct elf_program_header program_header, *ph = &program_header;
        if (image_read(image, eh->phoff + i * sizeof *ph, ph, sizeof *ph))
            return E_BADREQ;
        if (ph->type != PT_LOAD || ph->memsz == 0)
            continue;
        if (ph->filesz > ph->memsz || ph->offset + ph->filesz < ph->offset ||
            ph->offset + ph->filesz > image->size || ph->vaddr < DM_USER_BASE ||
            ph->vaddr + ph->memsz > USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE ||
            ph->vaddr + ph->memsz < ph->vaddr)
            return E_BADREQ;
        uint64_t perm = PTE_R | (ph->flags & PF_W ? PTE_W : 0) | (ph->flags & PF_X ? PTE_X : 0);
        for (uint64_t va = PAGE_ROUND_DOWN(ph->vaddr); va < ph->vaddr + ph->memsz; va += PAGE_SIZE) {
            int err = vm_map_new(p, va, perm);
            if (err == E_INVAL)   /* already mapped by the segment before: user.ld
                                     page-aligns segments, so only a foreign
                                     image shares a page (and keeps its first
                                     segment's permissions) */
                err = 0;
            if (err)
                return err;
        }
        /* Copy the file bytes in through the kernel's view of the pages. */
        for (uint64_t off = 0; off < ph->filesz;) {
            uint64_t va = ph->vaddr + off;
            uint64_t n = PAGE_SIZE - (va & (PAGE_SIZE - 1));
            if (n > ph->filesz - off)
                n = ph->filesz - off;
            uint8_t *dst = vm_user_to_kernel(p->pagetable, va, 0);
            if (image_read(image, ph->offset + off, dst, n))
                return E_BADREQ;
            off += n;
        }
        if (ph->vaddr + ph->memsz > top)
            top = ph->vaddr + ph->memsz;
    }
    if (top == 0 || eh->entry < DM_USER_BASE || eh->entry >= top)
        return E_BADREQ;
    p->tf.sepc = eh->entry;
    p->heap_start = p->brk = PAGE_ROUND_UP(top);
    return 0;
}
