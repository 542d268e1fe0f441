/*
 * page.c — physical memory: every 4 KiB page between the end of the kernel
 * image and the end of RAM.
 *
 * Pages never used yet are given out in address order from `untouched`;
 * pages freed go on a free list and are given out again first. No page is
 * written before it is given out, so the host (QEMU) backs only the memory
 * a node has used: an idle node of a large cluster costs the host a few
 * megabytes, not its whole RAM (docs/cluster.md, "How large a cluster").
 */
#include "defs.h"

#define RAM_END (0x80000000UL + (256UL << 20))   /* QEMU -m 256M */

extern char kernel_end[];
struct free_page { struct free_page *next; };
static struct free_page *free_list;   /* pages given out before and freed since */
static uint64_t untouched;            /* the first page never given out; RAM_END when none is left */
static uint64_t free_count;

/* Every page after the kernel image is free. Called once at boot. */
void page_init(void)
{
    untouched = PAGE_ROUND_UP((uint64_t)kernel_end);
    free_count = (RAM_END - untouched) / PAGE_SIZE;
}

/* A page whose old contents do not matter (it is about to be filled): no
 * zeroing, which would cost as much as the copy that fills it; 0 when
 * memory is exhausted. */
void *page_alloc_dirty(void)
{
    void *p;
    if (free_list) {
        p = free_list;
        free_list = free_list->next;
    } else if (untouched + PAGE_SIZE <= RAM_END) {
        p = (void *)untouched;
        untouched += PAGE_SIZE;
    } else {
        return 0;
    }
    free_count--;
    return p;
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
