/*
 * clock.c — the machine's clocks and its timer: the machine clock (the
 * time CSR, 10 MHz), the wall clock (QEMU's Goldfish RTC, read once at
 * boot), this boot's epoch, and the one timer interrupt (Sstc's stimecmp)
 * that every deadline of the kernel shares.
 */
#include "defs.h"
#include "probes.h"

#define GOLDFISH_RTC_LOW  (*(volatile uint32_t *)0x101000UL)
#define GOLDFISH_RTC_HIGH (*(volatile uint32_t *)0x101004UL)
#define CSR_STIMECMP 0x14d

static uint64_t wall_clock_at_boot;   /* ns since 1970 when the machine clock read 0 */

/* The machine clock: ns since the machine started (the time CSR). */
uint64_t machine_clock_ns(void)
{
    return read_time() * NS_PER_TICK;
}

/* The wall clock: ns since 1970. */
uint64_t wall_clock_ns(void)
{
    return wall_clock_at_boot + machine_clock_ns();
}

/* Read the RTC once: the wall clock, and this boot's epoch. */
void clock_init(void)
{
    uint64_t low = GOLDFISH_RTC_LOW;
    uint64_t high = GOLDFISH_RTC_HIGH;
    uint64_t rtc = (high << 32) | low;
    wall_clock_at_boot = rtc - machine_clock_ns();
    /* The epoch tells this boot of the machine from its others, so that its
     * processes get new ids (and, later, its frames are not taken for an
     * earlier boot's). The launcher gives one (`epoch=N` in the boot
     * arguments: milliseconds, 24 bits, fresh for every boot). Without it,
     * the wall clock in units of 2^24 ns (16.8 ms): QEMU's RTC starts from
     * the host's time in whole seconds, so two boots within a second can
     * read the same. */
    uint64_t epoch = 0;
    if (bootarg_number("epoch", &epoch) && (epoch & 0xffffff))
        boot_epoch = (uint32_t)epoch & 0xffffff;
    else
        boot_epoch = (uint32_t)(rtc >> 24) & 0xffffff;
}

/* Next timer interrupt (Sstc's stimecmp): the earliest alarm, and while
 * processes run, the next scheduling tick, whichever comes first, but never
 * more than IDLE_WAKE_TICKS ahead: under `-icount shift=0,sleep=on`, QEMU 7.2
 * spins a whole host core while the node waits in wfi for a timer set
 * centuries ahead (no alarm), and idles for one a second ahead. Called when
 * the tick fires, when the alarms change, and when leaving idle -- not on
 * every switch, which would cost every message. */
void timer_program(void)
{
    uint64_t now = read_time();
    uint64_t soonest = next_alarm_time(), remote = remote_next_time();
    uint64_t metering = meter_next_time(), disk = disk_next_time();
    if (remote < soonest)
        soonest = remote;
    if (metering < soonest)
        soonest = metering;
    if (disk < soonest)
        soonest = disk;
    uint64_t deadline = soonest / NS_PER_TICK;
    if (current && now + QUANTUM_TICKS < deadline)
        deadline = now + QUANTUM_TICKS;
    if (now + IDLE_WAKE_TICKS < deadline)
        deadline = now + IDLE_WAKE_TICKS;
    __asm__ volatile("csrw %0, %1" ::"i"(CSR_STIMECMP), "r"(deadline));
}
