/* crt0.S — a process's first instructions. The kernel has set sp, and
 * a0 = argc, a1 = argv, a2 = envp (kernel/proc.c, push_arguments). */
    .section .text.entry
    .global _start
_start:
    .option push
    .option norelax
    la    gp, __global_pointer$
    .option pop
    call  dm_start           # never returns
1:  j     1b
