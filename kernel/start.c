/*
 * start.c — M-mode set-up, then S-mode. QEMU -bios none runs the kernel in
 * M-mode; this is the only M-mode code. It delegates every trap and
 * interrupt to S-mode, opens physical memory and the counters to the lower
 * modes, enables Sstc's stimecmp (so S-mode programs its own timer), keeps
 * the device tree's address (fdt.c), and returns into main() in S-mode.
 */
#include "defs.h"

void main(void);

void machine_start(uint64_t fdt)
{
    boot_fdt = fdt;
    uint64_t mstatus = CSR_READ(mstatus);
    mstatus = (mstatus & ~MSTATUS_MPP_MASK) | MSTATUS_MPP_S;
    CSR_WRITE(mstatus, mstatus);
    CSR_WRITE(mepc, (uint64_t)main);
    CSR_WRITE(satp, 0);
    CSR_WRITE(medeleg, 0xffff);
    CSR_WRITE(mideleg, (1 << 1) | (1 << 5) | (1 << 9));   /* S software, timer, external */
    CSR_WRITE(pmpaddr0, 0x3fffffffffffffUL);                 /* all of physical memory */
    CSR_WRITE(pmpcfg0, 0xf);                                 /* TOR, read/write/execute */
    CSR_WRITE(mcounteren, 7);                                /* cycle, time, instret below M */
    __asm__ volatile("csrs 0x30a, %0" ::"r"(1UL << 63));     /* menvcfg.STCE: Sstc on */
    __asm__ volatile("mret");
}
