/*
 * trap.c — what happens when a process enters the kernel: kernel calls,
 * interrupts (timer; UART, disks and NIC through the PLIC), faults.
 *
 * The kernel runs with interrupts disabled. In user mode, S-mode interrupts
 * are always taken; when idle, the kernel waits with wfi and then looks at
 * the pending bits itself (poll_interrupts).
 */
#include "defs.h"
#include "probes.h"

static void user_interrupt(struct proc *p) __attribute__((noreturn));
static void timer_interrupt(void);
static void external_interrupt(void);
static const char *cause_name(uint64_t cause);

/* Every trap from user mode comes here (entry.S), on the kernel stack,
 * with the trap frame of p, the current process (the frame is the
 * process's first field). It never returns (so the compiler need not save
 * registers for a return). */
__attribute__((noreturn)) void trap_user(struct proc *p)
{
    uint64_t cause = CSR_READ(scause);
    if (cause == SCAUSE_ECALL_U) {           /* the common case first */
        p->tf.sepc += 4;
        syscall_dispatch(p);
    } else if (cause & SCAUSE_INTERRUPT) {
        user_interrupt(p);
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

/* An interrupt taken while p ran in user mode: its work is the kernel's,
 * not p's, from the trap (entry.S reads instret there) to p's return to
 * user mode, or to the switch away from it. Out of line, so that the
 * kernel calls' path does not pay for the registers it needs. */
static __attribute__((noinline, noreturn)) void user_interrupt(struct proc *p)
{
    kernel_work_begin_at(p->tf.trap_instret - TRAP_INSTRUCTIONS_BEFORE_READ);
    poll_interrupts();
    resume_after_interrupt(p);
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

/* Handle whatever interrupts are pending (one taken in user mode, or after
 * wfi in the idle loop); then send what the meter has sealed meanwhile
 * (probes.h, the safe point). */
void poll_interrupts(void)
{
    uint64_t pending = CSR_READ(sip);
    if (pending & SIE_STIE)
        timer_interrupt();
    if (pending & SIE_SEIE)
        external_interrupt();
    meter_safe_point();
}

/* The timer fired: the scheduling tick and every deadline the timer was
 * set for (timer_program). */
static void timer_interrupt(void)
{
    request_reschedule();
    remote_tick();
    disk_tick(machine_clock_ns());
    meter_tick(machine_clock_ns());
    timer_check_alarms();   /* reprograms the timer */
}

/* Every device interrupt the PLIC holds, to its driver. */
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

/* scause's exception code, in words. */
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

