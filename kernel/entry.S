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
    sd    t0, 40(a0)
    rdinstret t0                # the trap's instant, for an interrupt's kernel_work span (trap.c)
    sd    t0, 264(a0)           # (TRAP_INSTRUCTIONS_BEFORE_READ in defs.h: the two above)
    sd    ra, 8(a0)
    sd    sp, 16(a0)
    sd    gp, 24(a0)
    sd    tp, 32(a0)
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
    ld    sp, 272(a0)           # the kernel stack's top
    li    tp, 0                 # the meter's count starts at 0 (probes.h)
    j     trap_user             # trap_user(a0: the frame, which is the process); it never returns
1:  la    sp, panic_stack_top   # a trap inside the kernel is a kernel bug
    call  trap_kernel           # never returns

    .global user_return
    .option push
    .option norvc               # every instruction 4 bytes, and their addresses final:
    .option norelax             # interrupt_return counts them
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
    .global user_return_end
user_return_end:

    # interrupt_return(frame, &info->instret_at_switch): the end of an
    # interrupt's kernel_work span (defs.h, kernel_work_end) and then
    # user_return, every instruction from the read of instret to the sret
    # counted as the kernel's, so that the process is charged from its
    # next instruction on. sstatus is as the trap left it (SPP=0, SPIE=1,
    # the process's FP state): the kernel changed nothing of it meanwhile.
    .global interrupt_return
interrupt_return:
    rdinstret t0
    lla   t1, kernel_work_uncharged
    ld    t1, 0(t1)
    sub   t0, t0, t1
    addi  t0, t0, 49            # these 14, and user_return's 35 (INTERRUPT_RETURN_INSTRUCTIONS, checked at boot)
    lla   t1, last_switch_instret
    sd    t0, 0(t1)
    sd    t0, 0(a1)
    lla   t1, in_kernel_work
    sw    zero, 0(t1)
    j     user_return
    .global interrupt_return_end
interrupt_return_end:
    .option pop

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
