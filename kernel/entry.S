/*
 * entry.S — the kernel's first instructions, and the doors between user
 * mode and the kernel.
 *
 * QEMU (-bios none) starts hart 0 at 0x80000000 in M-mode: _start gives it a
 * stack and calls machine_start (start.c), which drops to S-mode in main().
 *
 * A trap from user mode lands in trap_vector with sscratch holding the
 * current process's trap frame (struct trapframe: x0..x31, then sepc). All
 * user registers are saved there and the kernel runs on its single kernel
 * stack: the kernel never blocks in the middle of a call, so one stack is
 * enough (a process that must wait simply is not returned to).
 * user_return(frame) is the way back. The kernel keeps tp for itself (the
 * meter's count, probes.h): the user's is in the frame.
 */
    .section .text.entry
    .global _start
_start:
    csrr  t0, mhartid
    bnez  t0, park              # one hart per node
    la    sp, boot_stack_top
    mv    a0, a1                # QEMU's reset code: a1 = the device tree
    call  machine_start         # never returns
park:
    wfi
    j     park

    .section .text
    .global trap_vector
    .align 4
trap_vector:
    csrrw a0, sscratch, a0      # a0 = trap frame, sscratch = user's a0
    sd    ra, 8(a0)
    sd    sp, 16(a0)
    sd    gp, 24(a0)
    sd    tp, 32(a0)
    sd    t0, 40(a0)
    sd    t1, 48(a0)
    sd    t2, 56(a0)
    sd    s0, 64(a0)
    sd    s1, 72(a0)
    sd    a1, 88(a0)
    sd    a2, 96(a0)
    sd    a3, 104(a0)
    sd    a4, 112(a0)
    sd    a5, 120(a0)
    sd    a6, 128(a0)
    sd    a7, 136(a0)
    sd    s2, 144(a0)
    sd    s3, 152(a0)
    sd    s4, 160(a0)
    sd    s5, 168(a0)
    sd    s6, 176(a0)
    sd    s7, 184(a0)
    sd    s8, 192(a0)
    sd    s9, 200(a0)
    sd    s10, 208(a0)
    sd    s11, 216(a0)
    sd    t3, 224(a0)
    sd    t4, 232(a0)
    sd    t5, 240(a0)
    sd    t6, 248(a0)
    csrr  t0, sscratch
    sd    t0, 80(a0)            # the user's a0
    csrw  sscratch, a0          # keep the frame pointer for the next trap
    csrr  t0, sepc
    sd    t0, 256(a0)
    csrr  t0, sstatus
    andi  t0, t0, 0x100         # SPP: did the trap come from S-mode?
    bnez  t0, 1f
    la    sp, kernel_stack_top
    li    tp, 0                 # the meter's count starts at 0 (probes.h)
    j     trap_user             # never returns: it ends in user_return
1:  la    sp, panic_stack_top   # a trap inside the kernel is a kernel bug
    call  trap_kernel           # never returns

    # user_return(struct trapframe *frame): resume user mode from frame.
    # The caller has set sstatus (SPP=0, SPIE=1, FS) and satp.
    .global user_return
user_return:
    csrw  sscratch, a0
    ld    t0, 256(a0)
    csrw  sepc, t0
    ld    ra, 8(a0)
    ld    sp, 16(a0)
    ld    gp, 24(a0)
    ld    tp, 32(a0)
    ld    t0, 40(a0)
    ld    t1, 48(a0)
    ld    t2, 56(a0)
    ld    s0, 64(a0)
    ld    s1, 72(a0)
    ld    a1, 88(a0)
    ld    a2, 96(a0)
    ld    a3, 104(a0)
    ld    a4, 112(a0)
    ld    a5, 120(a0)
    ld    a6, 128(a0)
    ld    a7, 136(a0)
    ld    s2, 144(a0)
    ld    s3, 152(a0)
    ld    s4, 160(a0)
    ld    s5, 168(a0)
    ld    s6, 176(a0)
    ld    s7, 184(a0)
    ld    s8, 192(a0)
    ld    s9, 200(a0)
    ld    s10, 208(a0)
    ld    s11, 216(a0)
    ld    t3, 224(a0)
    ld    t4, 232(a0)
    ld    t5, 240(a0)
    ld    t6, 248(a0)
    ld    a0, 80(a0)
    sret

    # The stacks live outside .bss (kernel.ld), which main() clears while running on one.
    .section .stacks, "aw", @nobits
    .align 12
    .space 16384
boot_stack_top:
    .space 16384
    .global kernel_stack_top
kernel_stack_top:
    .space 8192
panic_stack_top:
