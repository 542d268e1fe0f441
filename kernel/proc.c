/*
 * proc.c — the process table, process creation and ending, the run queue
 * and the scheduler.
 *
 * Slot 0 is the kernel itself: it has a link table (the reply links of
 * requests it will answer later, the link for exit notices) but never runs.
 * The kernel is not preemptible and never blocks inside a call: a process
 * that must wait is marked so and simply not returned to, and whoever wakes
 * it writes its result into its saved a0. CPU time is counted in executed
 * instructions (instret), charged at every switch (docs/architecture.md,
 * "The model").
 */
#include "defs.h"
#include "probes.h"

struct proc procs[NPROC];
__attribute__((used, externally_visible)) struct proc *current;   /* named in assembly (defs.h) */
struct proc *const kernel_proc = &procs[0];
uint32_t this_machine, node_count = 1, boot_epoch;

static struct proc *runq_head, *runq_tail;
static struct proc *handoff;    /* runs next, past the run queue (make_runnable) */
static int need_reschedule;
/* instret at the last switch or charge (defs.h; named in its assembly, so
 * kept under its name) */
__attribute__((used, externally_visible)) uint64_t last_switch_instret;
static int exit_notify_slot = -1;
/* Processes here that are not in the slot their id names (they moved here
 * from another machine, or came home to another slot): proc_lookup
 * (defs.h) looks for them only when there are any. */
uint32_t procs_displaced;
/* What a process that has ended has for an info page, so that the end of
 * its last kernel call (syscall.c, dispatch_metered) may write there; and
 * where the meter's count goes while no process is current. No one reads
 * it. */
struct dm_info unread_info;

/* What the kernel's PROCTIME is the rest of (kernel_proctime): instret
 * when the process table was set up, the idle waits since, the PROCTIME of
 * the processes that have ended here or left, and that of those that came
 * from another machine, as they came. */
static uint64_t instret_at_boot, idle_instret, gone_proctime, arrived_proctime;

void proc_init(void)
{
    instret_at_boot = read_instret();
    uint64_t counted = ((uint64_t)(user_return_end - (char *)user_return) +
                        (uint64_t)(interrupt_return_end - (char *)interrupt_return)) / 4;
    if (counted != INTERRUPT_RETURN_INSTRUCTIONS)   /* entry.S and defs.h disagree */
        panic("entry.S: interrupt_return and user_return are %lu instructions, not INTERRUPT_RETURN_INSTRUCTIONS",
              counted);
    kernel_proc->state = PS_KERNEL;
    kernel_proc->pid = PID_MAKE(this_machine, boot_epoch, 0, 0);
    strlcpy_k(kernel_proc->name, "kernel", sizeof kernel_proc->name);
    for (int i = 1; i < NPROC; i++)
        procs[i].generation = 1;
}

static void free_slot(struct proc *p);
static void charge_current(void);

/* A process here that is not in the slot its id names (net/migrate.c), in
 * whatever slot, or 0. Called only when procs_displaced says there are
 * such processes: by proc_lookup, and by msg.c for a destination not found
 * in its slot. */
struct proc *proc_lookup_displaced(dm_pid pid)
{
    for (int i = 1; i < NPROC; i++)
        if (procs[i].pid == pid && procs[i].state != PS_FREE && procs[i].state != PS_ARRIVING)
            return &procs[i];
    return 0;
}

/* Whether p is not in the slot its id names. */
static int is_displaced(struct proc *p)
{
    return PID_MACHINE(p->pid) != this_machine || &procs[PID_SLOT(p->pid)] != p;
}

/* The boot image called `name`; E_NOTFOUND if there is none. */
int boot_image_source(const char *name, struct image_source *out)
{
    for (const struct boot_image *b = boot_images; b->name; b++) {
        if (strcmp(b->name, name) == 0) {
            *out = (struct image_source){ .kernel = b->start, .size = (uint64_t)(b->end - b->start) };
            return 0;
        }
    }
    return E_NOTFOUND;
}

/* Lay out argc + envc NUL-ended strings (args, args_len bytes) at the top
 * of the stack, with the argv array (argc pointers, then 0) and the envp
 * array (envc pointers, then 0) below them; set sp, a0 = argc, a1 = argv,
 * a2 = envp. */
static int push_arguments(struct proc *p, const char *args, uint64_t args_len, int argc, int envc)
{
    uint64_t strings = (USER_STACK_TOP - args_len) & ~15UL;
    uint64_t argv = (strings - 8 * (uint64_t)(argc + 1 + envc + 1)) & ~15UL;
    uint64_t envp = argv + 8 * (uint64_t)(argc + 1);
    if (USER_STACK_TOP - argv > USER_STACK_PAGES * PAGE_SIZE / 2)
        return E_TOOBIG;
    if (copy_out(p, strings, args, args_len))
        return E_FAULT;
    uint64_t s = strings, zero = 0;
    for (int i = 0; i < argc + envc; i++) {
        uint64_t at = i < argc ? argv + 8 * i : envp + 8 * (i - argc);
        if (copy_out(p, at, &s, 8))
            return E_FAULT;
        while (s < strings + args_len && *(const char *)(args + (s - strings)))
            s++;
        s++;
    }
    if (copy_out(p, argv + 8 * argc, &zero, 8) || copy_out(p, envp + 8 * envc, &zero, 8))
        return E_FAULT;
    p->tf.regs[2] = argv;          /* sp */
    TF_A(&p->tf, 0) = (uint64_t)argc;
    TF_A(&p->tf, 1) = argv;
    TF_A(&p->tf, 2) = envp;
    return 0;
}

/* Create a stopped process called `name` running the program in `image`,
 * with argc arguments and then envc environment strings, given as
 * consecutive NUL-ended strings. Returns it, or 0 with *err set. */
struct proc *proc_create(const char *name, const struct image_source *image, const char *args, uint64_t args_len,
                         int argc, int envc, int *err)
{
    struct proc *p = 0;
    for (int i = 1; i < NPROC && !p; i++)
        if (procs[i].state == PS_FREE)
            p = &procs[i];
    if (!p || !(p->pagetable = vm_new_space())) {
        *err = p ? E_NOMEM : E_PROCFULL;
        return 0;
    }
    uint32_t generation = p->generation;
    uint64_t *pagetable = p->pagetable;
    memset(p, 0, sizeof *p);
    p->generation = generation;
    p->pagetable = pagetable;
    p->tf.kernel_sp = (uint64_t)kernel_stack_top;
    p->pid = PID_MAKE(this_machine, boot_epoch, p - procs, generation);
    strlcpy_k(p->name, name, sizeof p->name);
    p->state = PS_CREATED;
    p->created_ns = machine_clock_ns();

    *err = elf_load(p, image);
    for (int i = 1; i <= USER_STACK_PAGES && !*err; i++)
        *err = vm_map_new(p, USER_STACK_TOP - i * PAGE_SIZE, PTE_R | PTE_W);
    if (!*err)
        *err = vm_map_new(p, DM_INFO_PAGE, PTE_R);
    if (!*err)
        *err = push_arguments(p, args, args_len, argc, envc);
    if (*err) {
        vm_free_space(p->pagetable);
        p->state = PS_FREE;
        return 0;
    }
    p->info = vm_user_to_kernel(p->pagetable, DM_INFO_PAGE, 0);
    p->info->pid = p->pid;
    p->info->machine = this_machine;
    p->info->nodes = node_count;
    strlcpy_k(p->info->name, p->name, sizeof p->info->name);
    return p;
}

void set_exit_notify_slot(int slot)
{
    if (exit_notify_slot >= 0)
        link_drop(&kernel_proc->links[exit_notify_slot]);
    exit_notify_slot = slot;
}

/* End p: destroy its links and queued messages, free its memory, tell the
 * process manager. A CALL waiting on a reply link p held now fails. */
void proc_exit(struct proc *p, int64_t status)
{
    runq_remove(p);
    dm_pid pid = p->pid;
    if (p->moves || (p->held & HELD_MIGRATING))
        migrate_exit(p);
    for (int i = 0; i < DM_NLINKS; i++) {
        if (p->links[i].state == LINK_LIVE)
            probe_link_destroyed(p, i, p->links[i].dest, ML_EXIT);
        link_drop(&p->links[i]);
    }
    msg_discard_queue(p);
    if (p->meter.link.state != LINK_EMPTY)
        meter_exit(p, status);
    if (p == current) {   /* off its page tables before they are freed (the devices are mapped there too) */
        CSR_WRITE(satp, MAKE_SATP(kernel_pagetable));
        sfence_vma();
        current = 0;      /* the kernel runs for no process until the next switch */
    }
    vm_free_space(p->pagetable);
    p->pagetable = 0;
    free_slot(p);
    notify_process(DM_NOTICE_EXIT, pid, status);
}

/* p's slot is free: a new process there gets a new generation, so that no
 * link to p reaches it. What p ran here stays counted (kernel_proctime). */
static void free_slot(struct proc *p)
{
    if (is_displaced(p))
        procs_displaced--;
    gone_proctime += p->proctime;
    p->info = &unread_info;
    p->state = PS_FREE;
    p->generation = (p->generation + 1) & 0xfffff;
    if (p->generation == 0)
        p->generation = 1;
    fp_forget(p);
}

/* Tell the process manager (the KOP_NOTIFY link) of process pid:
 * DM_NOTICE_EXIT with its exit status, DM_NOTICE_MOVED with its moves. */
void notify_process(uint32_t kind, dm_pid pid, int64_t status)
{
    if (exit_notify_slot < 0)
        return;
    struct dm_notice notice = { kind, this_machine, pid, status };
    if (msg_send_from_kernel(&kernel_proc->links[exit_notify_slot], &notice, sizeof notice, 0) == E_DEAD)
        set_exit_notify_slot(-1);
}

/* ---- processes that move (net/migrate.c) ---- */

/* A slot for process pid, which is moving here: its own if pid names this
 * machine and the slot is free, else the first free one; kept
 * (PS_ARRIVING, found by no lookup) with an empty address space until it
 * has arrived (proc_arrived). 0 with *err E_PROCFULL or E_NOMEM. */
struct proc *proc_reserve(dm_pid pid, int *err)
{
    struct proc *p = 0;
    if (PID_MACHINE(pid) == this_machine && PID_SLOT(pid) < NPROC && procs[PID_SLOT(pid)].state == PS_FREE &&
        PID_SLOT(pid) != 0)
        p = &procs[PID_SLOT(pid)];
    for (int i = 1; i < NPROC && !p; i++)
        if (procs[i].state == PS_FREE)
            p = &procs[i];
    if (!p || !(p->pagetable = vm_new_space())) {
        *err = p ? E_NOMEM : E_PROCFULL;
        return 0;
    }
    uint32_t generation = p->generation;
    uint64_t *pagetable = p->pagetable;
    memset(p, 0, sizeof *p);
    p->generation = generation;
    p->pagetable = pagetable;
    p->state = PS_ARRIVING;
    return p;
}

/* The move for which p was kept did not come: its slot is free again. */
void proc_unreserve(struct proc *p)
{
    vm_free_space(p->pagetable);
    p->pagetable = 0;
    p->state = PS_FREE;
}

/* p, kept by proc_reserve and filled in by migrate.c, is process pid from
 * now on (its state is set by the caller). */
void proc_arrived(struct proc *p, dm_pid pid)
{
    p->pid = pid;
    p->tf.kernel_sp = (uint64_t)kernel_stack_top;
    arrived_proctime += p->proctime;   /* run elsewhere (kernel_proctime) */
    if (is_displaced(p))
        procs_displaced++;
}

/* p has left for another machine, taking its address space, links and
 * messages with it (migrate.c has taken them): its slot is free. */
void proc_departed(struct proc *p)
{
    runq_remove(p);
    if (p == current) {   /* off its page tables, which leave with it */
        charge_current();
        CSR_WRITE(satp, MAKE_SATP(kernel_pagetable));
        sfence_vma();
        current = 0;
    }
    memset(p->links, 0, sizeof p->links);
    p->pagetable = 0;
    p->held = 0;
    free_slot(p);
}

/* Ctrl-T on the console: every process's state and what it waits for, and
 * the transport's, printed straight to the UART (a debugging aid: it works
 * however stuck the processes are). */
void kernel_status(void)
{
    static const char *const states[] = { "free", "created", "ready", "receiving", "calling", "stopped",
                                          "kernel", "sending", "moving", "arriving" };
    kprintf("\nmachine %u of %u, epoch %u: %lu free pages\n", this_machine, node_count, boot_epoch,
            pages_free_count());
    for (int i = 0; i < NPROC; i++) {
        struct proc *p = &procs[i];
        if (p->state == PS_FREE)
            continue;
        kprintf("  [%u] %u.%u.%u %s %s%s queued %u", i, PID_MACHINE(p->pid), PID_SLOT(p->pid), PID_GEN(p->pid),
                p->name, p->state < sizeof states / sizeof states[0] ? states[p->state] : "?",
                (p->held & HELD_STOPPED)      ? " (stopped)"
                : (p->held & HELD_METER)      ? " (meter wait)"
                : (p->held & HELD_MIGRATING) ? " (moving away)"
                                              : "",
                p->queue_len);
        if (p->state == PS_CALLING)
            kprintf(" reply-id %lu", p->wait_reply_id);
        if (p->remote.active)
            kprintf(" waits on machine %u op %lu", p->remote.machine, p->remote.op);
        kprintf("\n");
    }
    remote_status();
}

/* Machine `machine` is up in `epoch` (net/cluster.c): if the notice link leads
 * to a process on this machine (the process manager), give it a
 * process-control link to that machine's kernel. */
void notify_machine_up(uint32_t machine, uint32_t epoch)
{
    if (exit_notify_slot < 0 || PID_MACHINE(kernel_proc->links[exit_notify_slot].dest) != this_machine)
        return;
    struct link control = { .state = LINK_LIVE, .dest = PID_MAKE(machine, epoch, 0, 0),
                            .code = KLINK_PROCESS_CONTROL };
    struct dm_notice notice = { DM_NOTICE_MACHINE, machine, 0, 0 };
    if (msg_send_from_kernel(&kernel_proc->links[exit_notify_slot], &notice, sizeof notice, &control) == E_DEAD)
        set_exit_notify_slot(-1);
}

/* Machine `machine` is taken to be down (net/remote.c, fail_machine): the
 * process manager is told, wherever it runs, so that it can give up what
 * ran there (the names of its filters: servers/pm.c). */
void notify_machine_down(uint32_t machine)
{
    if (exit_notify_slot < 0)
        return;
    struct dm_notice notice = { DM_NOTICE_DOWN, machine, 0, 0 };
    if (msg_send_from_kernel(&kernel_proc->links[exit_notify_slot], &notice, sizeof notice, 0) == E_DEAD)
        set_exit_notify_slot(-1);
}

/* Move p's break by increment bytes; the old break, or E_NOMEM. */
int64_t proc_grow(struct proc *p, int64_t increment)
{
    uint64_t old = p->brk, new = old + increment;
    uint64_t limit = USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE - PAGE_SIZE;
    if ((increment > 0 && (new < old || new > limit)) || (increment < 0 && (new > old || new < p->heap_start)))
        return E_NOMEM;
    if (increment > 0) {
        for (uint64_t va = PAGE_ROUND_UP(old); va < new; va += PAGE_SIZE) {
            if (vm_map_new(p, va, PTE_R | PTE_W)) {
                for (uint64_t undo = PAGE_ROUND_UP(old); undo < va; undo += PAGE_SIZE)
                    vm_unmap_free(p, undo);
                return E_NOMEM;
            }
        }
    } else {
        for (uint64_t va = PAGE_ROUND_UP(new); va < PAGE_ROUND_UP(old); va += PAGE_SIZE)
            vm_unmap_free(p, va);
    }
    p->brk = new;
    return (int64_t)old;
}

/* ---- the run queue: runnable processes other than the current one ---- */

void runq_add(struct proc *p)
{
    if (p->on_runq)
        return;
    p->on_runq = 1;
    p->run_next = 0;
    if (runq_tail)
        runq_tail->run_next = p;
    else
        runq_head = p;
    runq_tail = p;
}

void runq_remove(struct proc *p)
{
    if (!p->on_runq)
        return;
    struct proc **pp = &runq_head, *prev = 0;
    while (*pp != p)
        prev = *pp, pp = &(*pp)->run_next;
    *pp = p->run_next;
    if (runq_tail == p)
        runq_tail = prev;
    p->on_runq = 0;
}

static struct proc *runq_pop(void)
{
    struct proc *p = runq_head;
    if (p) {
        runq_head = p->run_next;
        if (!runq_head)
            runq_tail = 0;
        p->on_runq = 0;
    }
    return p;
}

/* p may run again (its wait is over, or it was started or resumed). While
 * the current process is in CALL, the first process woken is the one its
 * message went to: it is handed the processor directly (schedule), past
 * the run queue, since the caller now waits for it. Should the caller be
 * made runnable again within the same kernel call (a request to the kernel
 * answered at once), the process handed to goes to the run queue after all. */
void make_runnable(struct proc *p)
{
    p->state = PS_RUNNABLE;
    if (p == current) {
        if (handoff) {
            runq_add(handoff);
            handoff = 0;
        }
        return;
    }
    if (p->held)
        return;
    if (current && current->state == PS_CALLING && !handoff)
        handoff = p;
    else
        runq_add(p);
}

/* Processes that could run now: the load average of the meter's records. */
__attribute__((always_inline)) inline uint32_t runnable_count(void)
{
    uint32_t n = current && current->state == PS_RUNNABLE && !current->held;
    for (struct proc *p = runq_head; p; p = p->run_next)
        n++;
    return n;
}

void request_reschedule(void)
{
    need_reschedule = 1;
}

/* Charge the instructions since the last switch to the current process. */
static void charge_current(void)
{
    uint64_t now = read_instret();
    if (current && current->state != PS_FREE)
        current->proctime += now - last_switch_instret;
    last_switch_instret = now;
}

/* The kernel's own work while a process is current (kernel_work_begin and
 * kernel_work_end, inline in defs.h): the instructions charged to it when
 * the span began, and whether one is under way. */
__attribute__((used, externally_visible)) uint64_t kernel_work_uncharged;
__attribute__((used, externally_visible)) int in_kernel_work;

/* The meter's count that is not yet taken out (defs.h, meter_count) is not
 * p's: this runs where the count is off. */
uint64_t proctime_now(struct proc *p)
{
    if (p != current)
        return p->proctime;
    if (in_kernel_work)
        return p->proctime + kernel_work_uncharged;
    return p->proctime + read_instret() - last_switch_instret - meter_count;
}

uint64_t kernel_proctime(void)
{
    uint64_t processes = gone_proctime - arrived_proctime;
    for (int i = 1; i < NPROC; i++)
        if (procs[i].state != PS_FREE && procs[i].state != PS_ARRIVING)
            processes += proctime_now(&procs[i]);
    return read_instret() - instret_at_boot - idle_instret - processes;
}

/* Leave the kernel into process p. */
static void __attribute__((noreturn)) run(struct proc *p)
{
    if (p != current) {
        struct proc *prev = current;
        charge_current();
        current = p;
        CSR_WRITE(satp, MAKE_SATP(p->pagetable));
        sfence_vma();
        p->info->proctime_base = p->proctime;
        p->info->instret_at_switch = last_switch_instret;
        if (!prev)
            timer_program();   /* leaving idle: the scheduling tick starts again */
    }
    CSR_WRITE(sstatus, sstatus_for(p));
    user_return(&p->tf);
}

/* Nothing can run: wait for an interrupt and handle it. The wait, which
 * instret also counts under -icount, is no one's (idle_instret); the
 * kernel's own work around it is the kernel's. So every instruction
 * executed is charged somewhere. Kept apart from schedule(), out of the
 * path of a switch between processes. */
static void __attribute__((noinline)) idle(void)
{
    charge_current();
    current = 0;
    CSR_WRITE(satp, MAKE_SATP(kernel_pagetable));
    sfence_vma();
    timer_program();
    uint64_t asleep = read_instret();
    if (disk_wait_by_running())
        while (!(CSR_READ(sip) & (SIE_STIE | SIE_SEIE)))
            ;
    else
        wait_for_interrupt();
    idle_instret += read_instret() - asleep;
    kernel_work_begin();      /* the interrupts' work, and the meter's pushes within it, once */
    poll_interrupts();
    kernel_work_end();
}

/* After an interrupt taken while p ran (trap.c, an interrupt's
 * kernel_work span under way): back to p if it runs on, as schedule()
 * would, the span ending on the way out (entry.S, interrupt_return), so
 * that returning is the kernel's work too; else the span ends here and the
 * scheduler picks. */
void resume_after_interrupt(struct proc *p)
{
    if (p == current && p->state == PS_RUNNABLE && !p->held && (!need_reschedule || !runq_head))
        interrupt_return(&p->tf, &p->info->instret_at_switch);
    kernel_work_end();
    schedule();
}

/* Pick what runs next and run it; idle with wfi while nothing can. */
void schedule(void)
{
    struct proc *prev = current;
    if (prev && prev->state == PS_RUNNABLE && !prev->held) {
        if (!need_reschedule || !runq_head)
            run(prev);
        /* TODO(lab event, part 2): prev is preempted here: its probe
         * (docs/labs/event.md). */
        runq_add(prev);
    }
    need_reschedule = 0;
    struct proc *next = handoff;
    if (next) {
        handoff = 0;
        if (next->state == PS_RUNNABLE && !next->held) {   /* not ended or held since it was woken */
            runq_remove(next);      /* in case it was queued since (release, in meter.c) */
            run(next);
        }
    }
    for (;;) {
        next = runq_pop();
        if (next)
            run(next);
        idle();
    }
}
