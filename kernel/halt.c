/*
 * halt.c — the machine stops: at KOP_HALT (kreq.c, or net/remote.c when
 * another machine asked), and after a panic (printf.c).
 */
#include "defs.h"
#include "probes.h"

#define SIFIVE_TEST   (*(volatile uint32_t *)0x100000UL)

/* Print what the network did, and power off. */
void kernel_halt(int code)
{
    net_print_counters();
    cluster_print_counters();
    remote_print_counters();
    meter_print_counters();
    kprintf("machine %u: halted\n", this_machine);
    power_off(code);
}

/* Power the machine off through QEMU's sifive_test device, once the
 * frames and characters queued have gone out. */
void power_off(int code)
{
    net_drain();
    uart_drain();
    SIFIVE_TEST = code == 0 ? 0x5555 : (0x3333 | ((uint32_t)code << 16));
    for (;;)
        wait_for_interrupt();
}
