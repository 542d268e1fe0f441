/*
 * vm.c — Sv39 address spaces.
 *
 * Every address space shares the kernel's two gigapages: the devices
 * (0..1 GiB) and RAM (2..3 GiB, identity-mapped), neither user-accessible.
 * The user part is the gigabyte [DM_USER_BASE, DM_USER_TOP) = root entry 1,
 * with its own second- and third-level tables per process. So a trap needs
 * no change of page table, and the kernel reaches any physical page at its
 * own address.
 *
 * The kernel never dereferences a user pointer: copy_in/copy_out walk the
 * process's page table, check that each page is user memory with the
 * needed access, and copy through the identity mapping. A bad pointer is an
 * E_FAULT for the caller, never a kernel fault.
 */
#include "defs.h"

uint64_t *kernel_pagetable;

#define VPN(va, level) (((va) >> (12 + 9 * (level))) & 0x1ff)
#define PTE_TO_PA(pte) (((pte) >> PTE_PPN_SHIFT) << 12)
#define PA_TO_PTE(pa)  (((uint64_t)(pa) >> 12) << PTE_PPN_SHIFT)

static void map_kernel_gigapages(uint64_t *root)
{
    root[0] = PA_TO_PTE(0x00000000UL) | PTE_V | PTE_R | PTE_W | PTE_G | PTE_A | PTE_D;
    root[2] = PA_TO_PTE(0x80000000UL) | PTE_V | PTE_R | PTE_W | PTE_X | PTE_G | PTE_A | PTE_D;
}

void vm_init(void)
{
    kernel_pagetable = page_alloc();
    map_kernel_gigapages(kernel_pagetable);
    CSR_WRITE(satp, MAKE_SATP(kernel_pagetable));
    sfence_vma();
}

/* A new address space with no user pages; 0 when out of memory. */
uint64_t *vm_new_space(void)
{
    uint64_t *root = page_alloc();
    if (!root)
        return 0;
    map_kernel_gigapages(root);
    return root;
}

/* The leaf entry for user address va, creating the tables on the way when
 * create is set; 0 if va is not a user address or memory ran out. */
static uint64_t *walk_user(uint64_t *root, uint64_t va, int create)
{
    if (va < DM_USER_BASE || va >= DM_USER_TOP)
        return 0;
    uint64_t *table = root;
    for (int level = 2; level > 0; level--) {
        uint64_t *pte = &table[VPN(va, level)];
        if (!(*pte & PTE_V)) {
            if (!create)
                return 0;
            uint64_t *next = page_alloc();
            if (!next)
                return 0;
            *pte = PA_TO_PTE(next) | PTE_V;
        }
        table = (uint64_t *)PTE_TO_PA(*pte);
    }
    return &table[VPN(va, 0)];
}

/* Give p a fresh zeroed page at va with permissions perm (PTE_R/W/X).
 * Returns 0, E_NOMEM (no memory or over the process's limit) or E_INVAL. */
int vm_map_new(struct proc *p, uint64_t va, uint64_t perm)
{
    if (p->pages * PAGE_SIZE >= USER_MEMORY_MAX)
        return E_NOMEM;
    uint64_t *pte = walk_user(p->pagetable, va, 1);
    if (!pte)
        return E_NOMEM;
    if (*pte & PTE_V)
        return E_INVAL;
    void *page = page_alloc();
    if (!page)
        return E_NOMEM;
    *pte = PA_TO_PTE(page) | perm | PTE_U | PTE_V | PTE_A | PTE_D;
    p->pages++;
    return 0;
}

/* Give p a page at va with permissions perm, holding the PAGE_SIZE bytes
 * at `bytes` (a process moving here: net/migrate.c). vm_map_new's errors. */
int vm_map_filled(struct proc *p, uint64_t va, uint64_t perm, const uint8_t *bytes)
{
    int err = vm_map_new(p, va, perm);
    if (err)
        return err;
    memcpy((void *)PTE_TO_PA(*walk_user(p->pagetable, va, 0)), bytes, PAGE_SIZE);
    return 0;
}

/* The first user page mapped in root at or after *va: 1 with its address
 * in *va, its permissions (PTE_R, PTE_W, PTE_X) in *perm and where the
 * kernel sees it in *kernel; 0 if there is none (net/migrate.c, sending a
 * process's memory). */
int vm_next_mapped(uint64_t *root, uint64_t *va, uint64_t *perm, uint8_t **kernel)
{
    uint64_t l1e = root[1];
    if (!(l1e & PTE_V) || *va < DM_USER_BASE)
        return 0;
    uint64_t *l1 = (uint64_t *)PTE_TO_PA(l1e);
    for (uint64_t at = PAGE_ROUND_DOWN(*va); at < DM_USER_TOP;) {
        uint64_t l0e = l1[VPN(at, 1)];
        if (!(l0e & PTE_V)) {
            at = (at | ((1UL << 21) - 1)) + 1;   /* the next 2 MiB */
            continue;
        }
        uint64_t entry = ((uint64_t *)PTE_TO_PA(l0e))[VPN(at, 0)];
        if (entry & PTE_V) {
            *va = at;
            *perm = entry & (PTE_R | PTE_W | PTE_X);
            *kernel = (uint8_t *)PTE_TO_PA(entry);
            return 1;
        }
        at += PAGE_SIZE;
    }
    return 0;
}

/* Remove and free the page at va, if mapped. */
void vm_unmap_free(struct proc *p, uint64_t va)
{
    uint64_t *pte = walk_user(p->pagetable, va, 0);
    if (pte && (*pte & PTE_V)) {
        page_free((void *)PTE_TO_PA(*pte));
        *pte = 0;
        p->pages--;
        /* Forget every kernel view of p's pages: the page may be reused. */
        memset(p->recent, 0, sizeof p->recent);
        p->wait.buf_kernel = 0;
        p->wait.info_kernel = 0;
        sfence_vma();
    }
}

/* Free every user page and table of an address space, then its root. */
void vm_free_space(uint64_t *root)
{
    uint64_t l1e = root[1];
    if (l1e & PTE_V) {
        uint64_t *l1 = (uint64_t *)PTE_TO_PA(l1e);
        for (int i = 0; i < 512; i++) {
            if (!(l1[i] & PTE_V))
                continue;
            uint64_t *l0 = (uint64_t *)PTE_TO_PA(l1[i]);
            for (int j = 0; j < 512; j++)
                if (l0[j] & PTE_V)
                    page_free((void *)PTE_TO_PA(l0[j]));
            page_free(l0);
        }
        page_free(l1);
    }
    page_free(root);
}

/* The kernel address of user address va if it is mapped user memory that
 * allows the access (write or read); otherwise 0. This is on the path of
 * every message, so it walks the two levels below the root directly: the
 * user gigabyte is always root entry 1. */
void *vm_user_to_kernel(uint64_t *root, uint64_t va, int write)
{
    if (va - DM_USER_BASE >= DM_USER_TOP - DM_USER_BASE)
        return 0;
    uint64_t entry = root[1];
    if (!(entry & PTE_V))
        return 0;
    entry = ((uint64_t *)PTE_TO_PA(entry))[VPN(va, 1)];
    if (!(entry & PTE_V))
        return 0;
    entry = ((uint64_t *)PTE_TO_PA(entry))[VPN(va, 0)];
    uint64_t need = PTE_V | PTE_U | (write ? PTE_W : PTE_R);
    if ((entry & need) != need)
        return 0;
    return (void *)(PTE_TO_PA(entry) | (va & (PAGE_SIZE - 1)));
}

/* Translate a range within one user page, remembering the last two pages
 * translated: processes send from and receive into the same few buffers. */
static uint8_t *translate_in_page(struct proc *p, uint64_t uva, int write)
{
    uint64_t page = PAGE_ROUND_DOWN(uva);
    if (p->recent[0].page == page && (!write || p->recent[0].writable))
        return p->recent[0].kernel + (uva - page);
    if (p->recent[1].page == page && (!write || p->recent[1].writable))
        return p->recent[1].kernel + (uva - page);
    uint8_t *k = vm_user_to_kernel(p->pagetable, uva, write);
    if (k) {
        p->recent[1] = p->recent[0];
        p->recent[0].page = page;
        p->recent[0].kernel = k - (uva - page);
        p->recent[0].writable = write || vm_user_to_kernel(p->pagetable, uva, 1) != 0;
    }
    return k;
}

/* Is [uva, uva+len) user memory of p with the access wanted? When it is
 * and lies within one page, *kernel_address (if asked for) is where the
 * kernel sees it; otherwise 0. */
int user_range_ok(struct proc *p, uint64_t uva, uint64_t len, int write, void **kernel_address)
{
    if (len != 0 && PAGE_ROUND_DOWN(uva) == PAGE_ROUND_DOWN(uva + len - 1) && uva + len > uva) {
        uint8_t *k = translate_in_page(p, uva, write);
        if (kernel_address)
            *kernel_address = k;
        return k != 0;
    }
    if (kernel_address)
        *kernel_address = 0;
    if (len == 0)
        return 1;
    if (uva + len < uva)
        return 0;
    for (uint64_t va = PAGE_ROUND_DOWN(uva); va < uva + len; va += PAGE_SIZE)
        if (!vm_user_to_kernel(p->pagetable, va, write))
            return 0;
    return 1;
}

int copy_in(struct proc *p, void *dst, uint64_t uva, uint64_t len)
{
    uint8_t *d = dst;
    while (len) {
        uint8_t *s = vm_user_to_kernel(p->pagetable, uva, 0);
        if (!s)
            return E_FAULT;
        uint64_t n = PAGE_SIZE - (uva & (PAGE_SIZE - 1));
        if (n > len)
            n = len;
        memcpy(d, s, n);
        d += n, uva += n, len -= n;
    }
    return 0;
}

int copy_out(struct proc *p, uint64_t uva, const void *src, uint64_t len)
{
    const uint8_t *s = src;
    while (len) {
        uint8_t *d = vm_user_to_kernel(p->pagetable, uva, 1);
        if (!d)
            return E_FAULT;
        uint64_t n = PAGE_SIZE - (uva & (PAGE_SIZE - 1));
        if (n > len)
            n = len;
        memcpy(d, s, n);
        s += n, uva += n, len -= n;
    }
    return 0;
}

/* Copy between two processes' memories (or within one), page by page. */
int copy_user_to_user(struct proc *dp, uint64_t dva, struct proc *sp, uint64_t sva, uint64_t len)
{
    while (len) {
        uint8_t *s = vm_user_to_kernel(sp->pagetable, sva, 0);
        uint8_t *d = vm_user_to_kernel(dp->pagetable, dva, 1);
        if (!s || !d)
            return E_FAULT;
        uint64_t n = PAGE_SIZE - (sva & (PAGE_SIZE - 1));
        uint64_t m = PAGE_SIZE - (dva & (PAGE_SIZE - 1));
        if (m < n)
            n = m;
        if (n > len)
            n = len;
        memcpy(d, s, n);
        dva += n, sva += n, len -= n;
    }
    return 0;
}
