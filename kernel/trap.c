/*
 * trap.c — what happens when a process enters the kernel: kernel calls,
 * interrupts (timer; UART, disks and NIC through the PLIC), faults; also
 * the clocks, the lazy switching of floating-point registers, and
 * power-off.
 *
 * The kernel runs with interrupts disabled. In user mode, S-mode interrupts
 * are always taken; when idle, the kernel waits with wfi and then looks at
 * the pending bits itself (poll_interrupts).
 */
#include "defs.h"
#include "probes.h"

#define SIFIVE_TEST   (*(volatile uint32_t *)0x100000UL)
#define GOLDFISH_RTC_LOW  (*(volatile uint32_t *)0x101000UL)
#define GOLDFISH_RTC_HIGH (*(volatile uint32_t *)0x101004UL)
#define CSR_STIMECMP 0x14d

static uint64_t wall_clock_at_boot;   /* ns since 1970 when the machine clock read 0 */
static struct proc *fp_owner;         /* whose values the FP registers hold */

uint64_t machine_clock_ns(void)
{
    return read_time() * NS_PER_TICK;
}

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
    uint64_t soonest = next_alarm_time() < remote_next_time() ? next_alarm_time() : remote_next_time();
    uint64_t metering = meter_next_time(), disk = disk_next_time();
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

static void timer_interrupt(void)
{
    request_reschedule();
    remote_tick();
    disk_tick(machine_clock_ns());
    meter_tick(machine_clock_ns());
    timer_check_alarms();   /* reprograms the timer */
}

static void external_interrupt(void)
{
    int irq;
    while ((irq = plic_claim()) != 0) {
        if (irq == 10)
            uart_interrupt();
        else if (irq >= 1 && irq <= 8) {   /* virtio-mmio transports */
            disk_interrupt(irq);
            net_interrupt(irq);
            live_interrupt(irq);
        }
        plic_complete(irq);
    }
}

/* Handle whatever interrupts are pending (after wfi in the idle loop, and
 * when one is taken in user mode); then send what the meter has sealed
 * meanwhile (probes.h, the safe point). */
void poll_interrupts(void)
{
    uint64_t pending = CSR_READ(sip);
    if (pending & SIE_STIE)
        timer_interrupt();
    if (pending & SIE_SEIE)
        external_interrupt();
    meter_safe_point();
}

/* ---- floating point: saved only when a process that used it is switched
 * away from, restored only when a process uses it again (first use traps
 * with FS=Off). ---- */

static void fp_save(uint64_t *area)
{
    __asm__ volatile(
        "fsd f0,0(%0)\n fsd f1,8(%0)\n fsd f2,16(%0)\n fsd f3,24(%0)\n"
        "fsd f4,32(%0)\n fsd f5,40(%0)\n fsd f6,48(%0)\n fsd f7,56(%0)\n"
        "fsd f8,64(%0)\n fsd f9,72(%0)\n fsd f10,80(%0)\n fsd f11,88(%0)\n"
        "fsd f12,96(%0)\n fsd f13,104(%0)\n fsd f14,112(%0)\n fsd f15,120(%0)\n"
        "fsd f16,128(%0)\n fsd f17,136(%0)\n fsd f18,144(%0)\n fsd f19,152(%0)\n"
        "fsd f20,160(%0)\n fsd f21,168(%0)\n fsd f22,176(%0)\n fsd f23,184(%0)\n"
        "fsd f24,192(%0)\n fsd f25,200(%0)\n fsd f26,208(%0)\n fsd f27,216(%0)\n"
        "fsd f28,224(%0)\n fsd f29,232(%0)\n fsd f30,240(%0)\n fsd f31,248(%0)\n"
        "frcsr t0\n sd t0,256(%0)\n" ::"r"(area) : "t0", "memory");
}

static void fp_load(const uint64_t *area)
{
    __asm__ volatile(
        "fld f0,0(%0)\n fld f1,8(%0)\n fld f2,16(%0)\n fld f3,24(%0)\n"
        "fld f4,32(%0)\n fld f5,40(%0)\n fld f6,48(%0)\n fld f7,56(%0)\n"
        "fld f8,64(%0)\n fld f9,72(%0)\n fld f10,80(%0)\n fld f11,88(%0)\n"
        "fld f12,96(%0)\n fld f13,104(%0)\n fld f14,112(%0)\n fld f15,120(%0)\n"
        "fld f16,128(%0)\n fld f17,136(%0)\n fld f18,144(%0)\n fld f19,152(%0)\n"
        "fld f20,160(%0)\n fld f21,168(%0)\n fld f22,176(%0)\n fld f23,184(%0)\n"
        "fld f24,192(%0)\n fld f25,200(%0)\n fld f26,208(%0)\n fld f27,216(%0)\n"
        "fld f28,224(%0)\n fld f29,232(%0)\n fld f30,240(%0)\n fld f31,248(%0)\n"
        "ld t0,256(%0)\n fscsr t0\n" ::"r"(area) : "t0", "memory");
}

/* The sstatus to return to user mode in `next` with: previous mode U, and
 * FP on only if next's values are in the registers (saving the owner's
 * first if they changed and next is someone else). */
uint64_t sstatus_for(struct proc *next)
{
    uint64_t s = CSR_READ(sstatus);
    if ((s & SSTATUS_FS_MASK) == SSTATUS_FS_DIRTY && fp_owner && fp_owner != next) {
        fp_save(fp_owner->fp_regs);
        fp_owner->fp_used = 1;
        s = (s & ~SSTATUS_FS_MASK) | SSTATUS_FS_CLEAN;
    }
    if (fp_owner != next)
        s &= ~SSTATUS_FS_MASK;   /* Off: its first FP instruction traps */
    else if ((s & SSTATUS_FS_MASK) == SSTATUS_FS_OFF)
        s |= SSTATUS_FS_CLEAN;   /* its values are still in the registers */
    return (s & ~SSTATUS_SPP) | SSTATUS_SPIE;
}

/* p used FP with FS=Off: give it its registers. */
static void fp_enable(struct proc *p)
{
    /* The owner's values were saved when it was switched away from
     * (sstatus_for), so the registers are free to load. */
    uint64_t s = CSR_READ(sstatus);
    CSR_WRITE(sstatus, (s & ~SSTATUS_FS_MASK) | SSTATUS_FS_CLEAN);
    static const uint64_t zeros[33];
    fp_load(p->fp_used ? p->fp_regs : zeros);
    fp_owner = p;
}

void fp_forget(struct proc *p)
{
    if (fp_owner == p)
        fp_owner = 0;
}

static const char *cause_name(uint64_t cause)
{
    static const char *names[] = {
        "instruction misaligned", "instruction access fault", "illegal instruction",
        "breakpoint", "load misaligned", "load access fault", "store misaligned",
        "store access fault", "ecall from U", "ecall from S", "?", "ecall from M",
        "instruction page fault", "load page fault", "?", "store page fault",
    };
    return cause < 16 ? names[cause] : "?";
}

/* Every trap from user mode comes here (entry.S), on the kernel stack. It
 * never returns (so the compiler need not save registers for a return). */
__attribute__((noreturn)) void trap_user(void)
{
    struct proc *p = current;
    uint64_t cause = CSR_READ(scause);
    if (cause == SCAUSE_ECALL_U) {           /* the common case first */
        p->tf.sepc += 4;
        syscall_dispatch(p);
    } else if (cause & SCAUSE_INTERRUPT) {
        kernel_work_begin();   /* its work is the kernel's, not p's */
        poll_interrupts();
        kernel_work_end();
    } else if (cause == SCAUSE_ILLEGAL_INSTR && (CSR_READ(sstatus) & SSTATUS_FS_MASK) == SSTATUS_FS_OFF) {
        fp_enable(p);
    } else {
        kprintf("process %s (%u.%u.%u) killed: %s at pc %p, address %p\n", p->name,
                PID_MACHINE(p->pid), PID_SLOT(p->pid), PID_GEN(p->pid), cause_name(cause),
                p->tf.sepc, CSR_READ(stval));
        proc_exit(p, DM_EXIT_FAULT);
    }
    schedule();
}

/* A trap while in the kernel: a kernel bug. Print it all and stop. */
void trap_kernel(struct trapframe *tf)
{
    kprintf("\nkernel trap: %s (scause %p) at pc %p, stval %p\n", cause_name(CSR_READ(scause) & 0xff),
            CSR_READ(scause), CSR_READ(sepc), CSR_READ(stval));
    for (int i = 1; i < 32; i++)
        kprintf("x%d=%p%s", i, tf->regs[i], i % 4 == 3 ? "\n" : "  ");
    kprintf("\n");
    panic("trap in kernel mode");
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
