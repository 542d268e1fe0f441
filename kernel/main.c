/*
 * main.c — the kernel's start in S-mode: devices, memory, the process table,
 * then, on machine 0, the process manager, which starts everything else.
 */
#include "defs.h"
#include "probes.h"

extern char bss_start[], bss_end[];
extern char trap_vector[];
static struct trapframe boot_frame;   /* sscratch before any process runs */

/* Give p a link to this kernel of the given kind, in slot `slot`. */
static void give_kernel_link(struct proc *p, int slot, uint64_t kind)
{
    struct link l = { .state = LINK_LIVE, .dest = kernel_proc->pid, .code = kind };
    p->links[slot] = l;
}

void main(void)
{
    memset(bss_start, 0, (size_t)(bss_end - bss_start));
    uart_init();
    fdt_read_bootargs();   /* before page_init gives its memory out */
    clock_init();
    cluster_init();
    remote_init();
    kprintf("DEMOS/MP kernel: machine %u of %u, epoch %u\n", this_machine, node_count, boot_epoch);
    page_init();
    vm_init();
    plic_init();
    msg_init();
    meter_init();
    proc_init();
    CSR_WRITE(sscratch, (uint64_t)&boot_frame);
    CSR_WRITE(stvec, (uint64_t)trap_vector);
    CSR_WRITE(scounteren, 7);
    CSR_WRITE(sie, SIE_SEIE | SIE_STIE);
    cluster_announce();
    int disks = disk_init();
    live_init();
    if (this_machine != 0) {
        /* One process manager for the system, on machine 0: this kernel
         * waits for its requests (it learns of this machine from the
         * announcement). */
        kprintf("machine %u: waiting for the process manager on machine 0\n", this_machine);
        schedule();
    }

    /* The process manager's arguments: "pm", then each word of the boot
     * arguments (it reads its settings there, e.g. place.bm=1). */
    static char pm_args[sizeof "pm" + 256];
    int argc = 1, len = sizeof "pm";
    memcpy(pm_args, "pm", sizeof "pm");
    for (const char *p = bootargs_text(); *p; p++) {
        if (*p == ' ')
            continue;
        argc++;
        while (*p && *p != ' ' && len < (int)sizeof pm_args - 1)
            pm_args[len++] = *p++;
        pm_args[len++] = 0;
        if (!*p)
            break;
    }
    struct image_source pm_image;
    int err = boot_image_source("pm", &pm_image);
    struct proc *pm = err ? 0 : proc_create("pm", &pm_image, pm_args, (uint64_t)len, argc, 0, &err);
    if (!pm)
        panic("cannot create the process manager: error %d", err);
    give_kernel_link(pm, BOOT_SLOT_PROCESS_CONTROL, KLINK_PROCESS_CONTROL);
    give_kernel_link(pm, BOOT_SLOT_CONSOLE, KLINK_CONSOLE);
    give_kernel_link(pm, BOOT_SLOT_TIMER, KLINK_TIMER);
    for (int i = 0; i < disks; i++)
        give_kernel_link(pm, BOOT_SLOT_DISK0 + i, KLINK_DISK | (uint64_t)i << 8);
    make_runnable(pm);
    schedule();
}
