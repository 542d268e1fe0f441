/* kcall.S — the kernel-call stubs, one for each entry of kernel/demos.h's
 * list DM_CALLS: a7 = the call's number, the arguments already in a0..a6,
 * the result in a0. Each is a leaf of three instructions (the benchmarks
 * count the instructions of a kernel call's round trip). */
#include "demos.h"

    .section .text
    .macro KCALL name, number
    .global \name
    .type \name, @function
\name:
    li    a7, \number
    ecall
    ret
    .size \name, . - \name
    .endm

#define DM_STUB(number, NAME, symbol, return_type, parameters, errors) KCALL symbol, number;
    DM_CALLS(DM_STUB)

    KCALL dm_badcall, 99   /* no such call: for the tests of E_NOSYS */
