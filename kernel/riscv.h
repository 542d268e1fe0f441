/*
 * riscv.h — control and status registers, and the few instructions C cannot
 * express, as inline functions. Privileged ISA 1.12 names.
 */
#ifndef RISCV_H
#define RISCV_H

#include <stdint.h>

#define CSR_READ(name) \
    ({ uint64_t v_; __asm__ volatile("csrr %0, " #name : "=r"(v_)); v_; })
#define CSR_WRITE(name, v) __asm__ volatile("csrw " #name ", %0" ::"r"((uint64_t)(v)))
#define CSR_SET(name, v)   __asm__ volatile("csrs " #name ", %0" ::"r"((uint64_t)(v)))
#define CSR_CLEAR(name, v) __asm__ volatile("csrc " #name ", %0" ::"r"((uint64_t)(v)))

/* mstatus / sstatus fields */
#define MSTATUS_MPP_MASK (3UL << 11)
#define MSTATUS_MPP_S    (1UL << 11)
#define SSTATUS_SPP      (1UL << 8)   /* previous mode was S */
#define SSTATUS_SPIE     (1UL << 5)
#define SSTATUS_SIE      (1UL << 1)
#define SSTATUS_FS_MASK  (3UL << 13)
#define SSTATUS_FS_OFF   (0UL << 13)
#define SSTATUS_FS_CLEAN (2UL << 13)
#define SSTATUS_FS_DIRTY (3UL << 13)

/* interrupt bits in sie / sip */
#define SIE_STIE (1UL << 5)
#define SIE_SEIE (1UL << 9)

/* scause */
#define SCAUSE_INTERRUPT       (1UL << 63)
#define SCAUSE_S_TIMER         5
#define SCAUSE_S_EXTERNAL      9
#define SCAUSE_ILLEGAL_INSTR   2
#define SCAUSE_ECALL_U         8

/* Sv39 page-table entries */
#define PTE_V (1UL << 0)
#define PTE_R (1UL << 1)
#define PTE_W (1UL << 2)
#define PTE_X (1UL << 3)
#define PTE_U (1UL << 4)
#define PTE_G (1UL << 5)
#define PTE_A (1UL << 6)
#define PTE_D (1UL << 7)
#define PTE_PPN_SHIFT 10
#define PAGE_SIZE 4096UL
#define PAGE_ROUND_UP(a)   (((a) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))
#define PAGE_ROUND_DOWN(a) ((a) & ~(PAGE_SIZE - 1))
#define SATP_SV39 (8UL << 60)
#define MAKE_SATP(root) (SATP_SV39 | ((uint64_t)(root) >> 12))

static inline uint64_t read_instret(void)
{
    uint64_t v;
    __asm__ volatile("rdinstret %0" : "=r"(v));
    return v;
}

static inline uint64_t read_time(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

static inline void sfence_vma(void)
{
    __asm__ volatile("sfence.vma zero, zero" ::: "memory");
}

static inline void wait_for_interrupt(void)
{
    __asm__ volatile("wfi");
}

#endif
