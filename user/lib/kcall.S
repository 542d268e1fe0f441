/* kcall.S — the kernel-call stubs: a7 = call number (kernel/demos.h),
 * arguments already in a0..a6, result in a0. */
    .section .text
    .macro KCALL name, number
    .global \name
\name:
    li    a7, \number
    ecall
    ret
    .endm

    KCALL dm_createlink,    1
    KCALL dm_destroylink,   2
    KCALL dm_duplicatelink, 3
    KCALL dm_send,          4
    KCALL dm_receive,       5
    KCALL dm_areceive,      6
    KCALL dm_call,          7
    KCALL dm_movedata,      8
    KCALL dm_stoptask,      9
    KCALL dm_badcall,       99   /* no such call: for tests of E_NOSYS */
