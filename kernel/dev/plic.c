/*
 * plic.c — the platform-level interrupt controller, for hart 0's S-mode
 * context (context 1 on QEMU virt).
 */
#include "defs.h"

#define PLIC_BASE       0x0c000000UL
#define PLIC_PRIORITY(irq) (*(volatile uint32_t *)(PLIC_BASE + 4 * (irq)))
#define PLIC_SENABLE    (*(volatile uint32_t *)(PLIC_BASE + 0x2080))
#define PLIC_STHRESHOLD (*(volatile uint32_t *)(PLIC_BASE + 0x201000))
#define PLIC_SCLAIM     (*(volatile uint32_t *)(PLIC_BASE + 0x201004))
#define UART_IRQ 10

void plic_init(void)
{
    PLIC_STHRESHOLD = 0;
    plic_enable(UART_IRQ);
}

/* Let interrupt source irq (1..31) reach hart 0's S-mode. */
void plic_enable(int irq)
{
    PLIC_PRIORITY(irq) = 1;
    PLIC_SENABLE |= 1u << irq;
}

int plic_claim(void)
{
    return (int)PLIC_SCLAIM;
}

void plic_complete(int irq)
{
    PLIC_SCLAIM = (uint32_t)irq;
}
