/*
 * fpu.c — the floating-point registers, switched lazily: saved only when a
 * process that used them is switched away from, restored only when a
 * process uses them again (its first FP instruction traps with FS=Off).
 */
#include "defs.h"

static struct proc *fp_owner;         /* whose values the FP registers hold */

static void fp_save(uint64_t *area);
static void fp_load(const uint64_t *area);

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

/* p used FP with FS=Off (an illegal-instruction trap, trap.c): give it
 * its registers. */
void fp_enable(struct proc *p)
{
    /* The owner's values were saved when it was switched away from
     * (sstatus_for), so the registers are free to load. */
    uint64_t s = CSR_READ(sstatus);
    CSR_WRITE(sstatus, (s & ~SSTATUS_FS_MASK) | SSTATUS_FS_CLEAN);
    static const uint64_t zeros[33];
    fp_load(p->fp_used ? p->fp_regs : zeros);
    fp_owner = p;
}

/* p exits (proc_exit): the values in the registers are no one's. */
void fp_forget(struct proc *p)
{
    if (fp_owner == p)
        fp_owner = 0;
}

/* p leaves for another machine (net/migrate.c): its values, if the
 * registers hold them changed, go to fp_regs, which move with it. The
 * registers hold p's values only if no one has used them since p, so the
 * state sstatus shows is p's. */
void fp_take(struct proc *p)
{
    if (fp_owner != p)
        return;
    if ((CSR_READ(sstatus) & SSTATUS_FS_MASK) == SSTATUS_FS_DIRTY) {
        fp_save(p->fp_regs);
        p->fp_used = 1;
    }
    fp_owner = 0;
}

/* Save f0..f31 and fcsr into area (33 words). */
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

/* Load f0..f31 and fcsr from area (33 words). */
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

