/*
 * page.c — physical memory: every 4 KiB page between the end of the kernel
 * image and the end of RAM, on one free list.
 */
#include "defs.h"

#define RAM_END (0x80000000UL + (256UL << 20))   /* QEMU -m 256M */

extern char kernel_end[];
struct free_page { struct free_page *next; };
static struct free_page *free_list;
static uint64_t free_count;

void page_init(void)
{
    for (uint64_t a = PAGE_ROUND_UP((uint64_t)kernel_end); a + PAGE_SIZE <= RAM_END; a += PAGE_SIZE) {
        struct free_page *f = (struct free_page *)a;
        f->next = free_list;
        free_list = f;
        free_count++;
    }
}

/* A page whose old contents do not matter (it is about to be filled): no
 * zeroing, which would cost as much as the copy that fills it. */
void *page_alloc_dirty(void)
{
    struct free_page *f = free_list;
    if (!f)
        return 0;
    free_list = f->next;
    free_count--;
    return f;
}

/* A zeroed page, or 0 when memory is exhausted. */
void *page_alloc(void)
{
    void *p = page_alloc_dirty();
    if (p)
        memset(p, 0, PAGE_SIZE);
    return p;
}

void page_free(void *p)
{
    struct free_page *f = p;
    f->next = free_list;
    free_list = f;
    free_count++;
}

uint64_t pages_free_count(void)
{
    return free_count;
}
