/*
 * defs.h — the kernel's own types and the functions its files share.
 * The user-visible interface is demos.h; this header is kernel-only.
 */
#ifndef DEFS_H
#define DEFS_H

#include <stddef.h>
#include <stdint.h>
#include "demos.h"
#include "riscv.h"
#include "../meter/record.h"

#define NPROC        128         /* process table slots; slot 0 is the kernel */
#define NMSG         2048        /* kernel message buffers, all processes together */
#define MSG_INLINE   64          /* messages up to this size need no extra page */
#define USER_STACK_PAGES 16      /* 64 KiB stack below the guard page */
#define USER_STACK_TOP   (DM_INFO_PAGE - PAGE_SIZE)   /* one unmapped guard page */
#define USER_MEMORY_MAX  (32UL << 20)  /* a process's memory limit */
#define QUANTUM_TICKS    100000  /* 10 ms of the 10 MHz time CSR */
#define NS_PER_TICK      100
#define IDLE_WAKE_TICKS  10000000  /* 1 s: the farthest ahead the timer is ever set */
/* A kernel call's result when the caller now waits: a0 is set on wake-up. */
#define RESULT_PENDING   INT64_MIN

/* ---- links ---- */
enum link_state { LINK_EMPTY = 0, LINK_LIVE, LINK_USED };

struct link {
    uint8_t  state;       /* enum link_state */
    uint8_t  flags;       /* LINK_READ | LINK_WRITE | LINK_REPLY */
    uint8_t  reserved[2];
    uint32_t channel;
    dm_pid   dest;
    uint64_t code;
    uint64_t area_addr;   /* data area in dest's memory */
    uint64_t area_len;
    uint64_t reply_id;    /* a CALL's reply link: the id its caller waits for */
};

/* ---- messages ----
 * A message in flight, from the SEND (or the kernel's own message) that
 * makes it to the buffer or the queue of its receiver: the one shape every
 * path hands on (msg.c, net/remote.c, meter.c, kreq.c). */
struct message {
    dm_pid   sender;          /* the sending process, or a kernel */
    uint64_t code;            /* the code and the channel of the link it went over */
    uint32_t channel;
    uint32_t flags;           /* DM_MSG_FROM_KERNEL; MSG_DONATED_PAGE */
    uint32_t length;          /* bytes of data */
    uint64_t msgid;           /* the meter's message id, or 0 (meter_message_id) */
    const uint8_t *data;      /* the data where the kernel can read it; or 0, and then */
    struct proc *data_owner;  /*   length bytes at data_address in data_owner's memory */
    uint64_t data_address;
    struct link *link;        /* a link passed with it, or 0 */
    struct link *reply;       /* a CALL's reply link, or 0 */
};
/* In a message's flags, never seen by a process: data is a whole kernel
 * page the queue may keep instead of copying it (meter batches); enqueue
 * clears the bit when it took the page. */
#define MSG_DONATED_PAGE 0x80000000u

/* A message waiting in its receiver's queue, with its data and the links it
 * carries kept here (message.link and .reply point at them). */
struct queued {
    struct queued *next;
    struct message message;
    struct link link, reply;
    uint8_t inline_data[MSG_INLINE];   /* the data, when it fits; else a page */
};

/* ---- processes ---- */

/* Where a received message goes: a buffer and a struct dm_msg_info in the
 * receiver's memory, checked when the receive began. When one lies within
 * a single page its kernel address is kept too, so that delivery is a plain
 * copy (the memory of a waiting process cannot change). */
struct receive_target {
    uint64_t buf, cap, info;     /* user addresses and the buffer's size */
    uint8_t *buf_kernel;         /* buf's kernel address, or 0 */
    struct dm_msg_info *info_kernel;
    uint32_t channel;            /* RECEIVE's channel, or DM_ANY_CHANNEL */
};
/* A MOVEDATA copy with an area on another machine (remote.c): each side is
 * a process, on any machine, and an address in its memory. */
struct move {
    dm_pid   dst, src;
    uint64_t dst_address, src_address;
    uint64_t length, done;     /* bytes in all, bytes copied so far */
    uint32_t chunk;            /* bytes of the chunk under way */
};

/* What a process waits for from other machines (remote.c): the kernel of
 * `machine` (and of `machine2`, 0xff if none) must answer operation `op`.
 * `active` is set when such a wait begins and cleared by whatever ends it
 * (remote.c's wake, or the CALL's answer or E_NOREPLY in msg.c), so local
 * calls never touch it. */
struct remote_wait {
    uint8_t  active;
    uint8_t  machine, machine2;
    uint8_t  sent;             /* SEND, CALL: the message has left, its links with it */
    int8_t   via_slot, pass_slot;   /* SEND, CALL: slots of the link sent over and the one passed, or -1 */
    uint8_t  via_reply;        /* the link sent over was a reply link (used up when sent) */
    uint8_t  reserved;
    uint64_t op;               /* the answer's number: CALL's reply id, or new_reply_id() */
    struct link pass;          /* the passed link while it travels */
    struct move move;
};

/* A process's metering (meter.c; docs/architecture.md, "Metering"). The meter link
 * lives here, outside the link table, where the process cannot name it. */
struct meter_state {
    uint32_t flags;            /* selection flags, METER_FLAG(type); 0: not metered */
    uint32_t count;            /* records in the batch being filled */
    uint32_t used;             /* its bytes, struct meter_batch included */
    uint8_t  lossy;            /* drop batches the filter cannot take (counted), rather than wait */
    uint8_t  reserved[3];
    uint32_t waiting;          /* batches of its in the meter outbox, not yet taken */
    uint64_t max_age_ns;       /* a batch goes when its first record is this old */
    uint64_t sequence;         /* the next record's number */
    uint64_t lost;             /* records dropped since the last batch (lossy mode) */
    uint64_t oldest;           /* machine clock of the batch's first record */
    struct link link;          /* the meter link */
    uint8_t *batch;            /* a page: struct meter_batch, then records; 0 until needed */
};
/* A process's registers in the kernel; entry.S names the fields by their
 * offsets (the assertions below keep them so). */
struct trapframe {
    uint64_t regs[32];     /* x0..x31; regs[10] is a0 */
    uint64_t sepc;
    uint64_t trap_instret; /* instret at the last trap, less the instructions before its read */
    uint64_t kernel_sp;    /* the kernel stack's top, where a trap's kernel code runs */
};
#define TF_A(tf, n) ((tf)->regs[10 + (n)])
_Static_assert(__builtin_offsetof(struct trapframe, sepc) == 256, "entry.S: sepc at 256");
_Static_assert(__builtin_offsetof(struct trapframe, trap_instret) == 264, "entry.S: trap_instret at 264");
_Static_assert(__builtin_offsetof(struct trapframe, kernel_sp) == 272, "entry.S: kernel_sp at 272");
/* trap_vector reads instret after two instructions of its own (entry.S). */
#define TRAP_INSTRUCTIONS_BEFORE_READ 2

struct proc {
    struct trapframe tf;   /* user registers while in the kernel or not running */
    uint8_t  state;        /* enum dm_proc_state */
    uint8_t  held;         /* HELD_*: may not run, whatever its state */
    uint8_t  fp_used;      /* fp_regs hold saved values */
    uint8_t  reserved;
    uint32_t generation;
    dm_pid   pid;
    char     name[24];
    uint64_t *pagetable;   /* Sv39 root */
    uint64_t heap_start, brk;
    uint64_t pages;        /* user pages owned, for the memory limit */
    struct dm_info *info;  /* kernel address of its info page */
    struct meter_state meter;  /* near the start: the probes' test needs no address arithmetic */
    struct link links[DM_NLINKS];
    struct queued *queue_head, *queue_tail;
    uint32_t queue_len;
    uint32_t sent_queued;    /* its messages waiting in queues on this machine (DM_SENT_QUEUED_MAX) */
    uint64_t wait_reply_id;  /* PS_CALLING: the reply id awaited */
    struct receive_target wait;  /* PS_RECEIVING, PS_CALLING: where the message goes */
    struct {                 /* the last user pages translated (vm.c) */
        uint64_t page;       /* user page address; 0: empty */
        uint8_t *kernel;     /* its kernel address */
        uint64_t writable;
    } recent[2];
    uint64_t proctime;       /* instructions charged to it */
    struct remote_wait remote;  /* PS_SENDING, PS_MOVING, PS_CALLING: waiting on another machine */
    uint64_t created_ns;     /* machine clock at creation (CREATEPROCESS; after a move, as old on this clock) */
    uint32_t moves;          /* times it has moved to another machine (net/migrate.c) */
    struct proc *run_next;   /* run queue */
    uint8_t  on_runq;
    uint64_t fp_regs[33];    /* f0..f31 and fcsr, saved lazily */
};
_Static_assert(__builtin_offsetof(struct proc, tf) == 0, "entry.S: a process's trap frame is the process");

enum held_reason {
    HELD_STOPPED = 1,          /* by the process manager (KOP_STOP) */
    HELD_METER   = 2,          /* lossless metering: its full batches wait for the filter */
    HELD_MIGRATING = 4,        /* it is being moved to another machine (net/migrate.c) */
};

/* ---- globals ---- */
extern struct proc procs[NPROC];
extern struct proc *current;        /* the running process, or 0 when idle */
extern struct proc *const kernel_proc;
extern uint32_t this_machine, node_count, boot_epoch;
extern uint64_t *kernel_pagetable;

/* boot image */
struct boot_image { const char *name; const uint8_t *start; const uint8_t *end; };
extern const struct boot_image boot_images[];

/* printf.c */
void kprintf(const char *fmt, ...);
void panic(const char *fmt, ...) __attribute__((noreturn));
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
void strlcpy_k(char *d, const char *s, size_t n);

/* dev/uart.c */
void uart_init(void);
void uart_putc_sync(int c);
void uart_interrupt(void);
uint32_t uart_queue_output(const uint8_t *p, uint32_t n);
uint32_t uart_output_space(void);
uint32_t uart_read_input(uint8_t *p, uint32_t max);
void uart_drain(void);

/* dev/plic.c */
void plic_init(void);
void plic_enable(int irq);
int plic_claim(void);
void plic_complete(int irq);

/* dev/virtio_disk.c */
int disk_init(void);
int disk_count(void);
void disk_interrupt(int irq);
int64_t disk_request(unsigned index, struct dm_kreq *q, struct link *pass, struct link *reply,
                     uint64_t *value, int *later);
void disk_tick(uint64_t now);             /* answers whose modeled service time is up */
uint64_t disk_next_time(void);
int disk_wait_by_running(void);

/* dev/virtio_console.c: the live trace channel */
int live_init(void);                              /* 1 if there is one, 0 if not */
int live_present(void);
void live_interrupt(int irq);
int64_t live_request(struct dm_kreq *q, struct link *pass, struct link *reply, int *later);

/* dev/virtio_net.c: the NIC. Frames are raw Ethernet frames without the FCS. */
struct net_counters {
    uint64_t frames_sent, bytes_sent;           /* queued for transmission */
    uint64_t frames_received, bytes_received;   /* delivered by the device */
    uint64_t rx_drops;        /* thrown away: malformed, or not for the protocol */
    uint64_t rx_others;       /* for another machine's MAC: the switch floods a frame whose
                                 destination it has not learned (a node just started) */
    uint64_t tx_full;         /* sends refused: every transmit buffer in flight */
};
extern uint8_t net_mac[6];
extern struct net_counters net_counters;
int net_init(void);                               /* 1 if there is a NIC, 0 if not */
int net_send(const void *frame, uint32_t len);    /* 0, E_BADREQ, E_QFULL */
uint8_t *net_frame_buffer(void);                  /* room to build a frame in, or 0 */
int net_send_buffer(uint8_t *frame, uint32_t len);   /* send what was built there */
void net_drain(void);                             /* before power-off */
void net_interrupt(int irq);
void net_print_counters(void);

struct netframe;   /* net/netframe.h */
/* net/cluster.c: identity, announcements and the frames' seal; owns what the NIC receives. */
void cluster_init(void);
void cluster_announce(void);
int cluster_send(const uint8_t *frame, uint32_t len);       /* seal and send a body: 0, E_QFULL, E_BADREQ */
int cluster_send_netframe(const struct netframe *f);        /* build a DATA, ACK or GONE frame in the NIC's buffer, seal, send */
void net_receive(const uint8_t *frame, uint32_t len);
void cluster_auth_counters(uint32_t m, uint32_t *forged, uint32_t *replayed);
void cluster_print_counters(void);
void cluster_tick(uint64_t now);
void cluster_notify_known(void);
uint64_t cluster_next_time(void);

struct outgoing;
/* net/remote.c: messages, MOVEDATA and requests between kernels, over the transport. */
void remote_init(void);
int remote_reachable(dm_pid dest);
int remote_send(struct outgoing *o);
void remote_reply_dropped(const struct link *l);
int64_t remote_movedata(struct proc *p, const struct move *m);
int64_t remote_create(struct dm_kreq *q, uint32_t len, const struct link *image, struct link *reply);
void remote_frame(const struct netframe *f);
void remote_peer_up(uint32_t machine, uint32_t epoch);
void remote_tick(void);
uint64_t remote_next_time(void);
void remote_print_counters(void);
void remote_halt_later(int code);
uint32_t remote_netstat(struct dm_kpeer *out, uint32_t max);
int remote_send_batch(const struct link *via, const void *data, uint32_t len, uint64_t op);
int remote_machine_up(uint32_t machine);
void remote_status(void);

/* net/migrate.c: moving a process to another machine (KOP_MIGRATE). */
int64_t migrate_request(struct dm_kreq *q, struct link *reply, int *later);
void migrate_exit(struct proc *p);

/* page.c */
void page_init(void);
void *page_alloc(void);            /* zeroed page, or 0 */
void *page_alloc_dirty(void);      /* a page not zeroed (its user fills it at once), or 0 */
void page_free(void *p);
uint64_t pages_free_count(void);

/* vm.c */
void vm_init(void);
uint64_t *vm_new_space(void);
void vm_free_space(uint64_t *root);
int vm_map_new(struct proc *p, uint64_t va, uint64_t perm);
int vm_map_filled(struct proc *p, uint64_t va, uint64_t perm, const uint8_t *bytes);
int vm_next_mapped(uint64_t *root, uint64_t *va, uint64_t *perm, uint8_t **kernel);
void vm_unmap_free(struct proc *p, uint64_t va);
void *vm_user_to_kernel(uint64_t *root, uint64_t va, int write);
int copy_in(struct proc *p, void *dst, uint64_t uva, uint64_t len);
int copy_out(struct proc *p, uint64_t uva, const void *src, uint64_t len);
int copy_user_to_user(struct proc *dp, uint64_t dva, struct proc *sp, uint64_t sva, uint64_t len);
int user_range_ok(struct proc *p, uint64_t uva, uint64_t len, int write, void **kernel_address);

/* fdt.c */
extern uint64_t boot_fdt;
void fdt_read_bootargs(void);
int bootarg_number(const char *name, uint64_t *value);
const char *bootargs_text(void);
int bootarg_take(const char *name, char *out, size_t cap);   /* copies, then blanks the word */

/* proc.c */
void proc_init(void);
extern uint32_t procs_displaced;
struct proc *proc_lookup_displaced(dm_pid pid);
/* The live process with this id on this machine, the kernel for slot 0,
 * or 0: gone, never existed, elsewhere, or from another boot of its
 * machine. The id holds machine, epoch, slot and generation: one
 * comparison with the slot's current id finds every process that is in
 * the slot its id names. Only when some process here is not (it moved here
 * from another machine, or came home to another slot: net/migrate.c) is
 * the table searched. Inline: every message is delivered through it. */
static inline struct proc *proc_lookup(dm_pid pid)
{
    unsigned slot = PID_SLOT(pid);
    if (slot < NPROC) {
        struct proc *p = &procs[slot];
        if (p->pid == pid && p->state != PS_FREE)
            return p;
    }
    return procs_displaced ? proc_lookup_displaced(pid) : 0;
}
struct proc *proc_reserve(dm_pid pid, int *err);
void proc_unreserve(struct proc *p);
void proc_arrived(struct proc *p, dm_pid pid);
void proc_departed(struct proc *p);
void notify_process(uint32_t kind, dm_pid pid, int64_t status);
struct image_source;
int boot_image_source(const char *name, struct image_source *out);
struct proc *proc_create(const char *name, const struct image_source *image, const char *args, uint64_t args_len,
                         int argc, int envc, int *err);
void proc_exit(struct proc *p, int64_t status);
int64_t proc_grow(struct proc *p, int64_t increment);
void runq_add(struct proc *p);
void runq_remove(struct proc *p);
void make_runnable(struct proc *p);
uint32_t runnable_count(void);
void schedule(void) __attribute__((noreturn));
void resume_after_interrupt(struct proc *p) __attribute__((noreturn));
void request_reschedule(void);
/* CPU time is counted in instructions (instret). The process that is
 * current is charged every instruction from last_switch_instret on; at a
 * switch its count is closed (proc.c, charge_current) and the next one's
 * opens. What is charged to no process is the kernel's (slot 0,
 * kernel_proctime), but for the machine's idle waits.
 *
 * The kernel's own work while a process is current is taken out of that
 * process's count by moving last_switch_instret past it, and with it the
 * copy in the process's info page, from which the process reads its own
 * time. Such work is: an interrupt taken while a process ran (trap.c), the
 * transport's work for a SEND or CALL to another machine (msg.c), moving
 * the bytes of a MOVEDATA (syscall.c), sending the meter's batches
 * (meter.c, meter_push), each a span from kernel_work_begin to
 * kernel_work_end; and the meter's own work, counted more cheaply (below).
 * So a process's CPU time is nearly the same wherever its partners are, and
 * whether it is metered or not; what a message to another machine costs
 * shows in its delivery time, as DPM's model has it (thesis §5.2.3). A
 * message on one machine is delivered at its sender's cost
 * (docs/performance.md says why). While a span lasts, the process's
 * PROCTIME stands still (proctime_now). Spans do not nest, and no process
 * is switched in or out within one; a probe may run within one. */
extern uint64_t last_switch_instret, kernel_work_uncharged;   /* proc.c */
extern int in_kernel_work;
extern struct dm_info unread_info;   /* proc.c: the info page of a process that has ended */

/* The meter's own instructions are the kernel's too. They are counted in
 * register tp, which the kernel has to itself (trap_vector keeps the
 * user's in the trap frame and starts the count at 0), until they are
 * taken out of the current process's count; probes.h says how. A span
 * takes out what the meter had counted before it, and drops what it
 * counts within it, which its own end takes out anyway. */
register uint64_t meter_count asm("tp");

/* The span's first instruction reads instret, and its last writes the
 * process's info page: it counts every instruction of its own. Each forms
 * its addresses after its read, so that the compiler has none of its work
 * to move outside the span (where a metered process's probe would count
 * it instead). */
static inline __attribute__((always_inline)) void kernel_work_begin(void)
{
    uint64_t now, last, at;
    __asm__ volatile("rdinstret %1\n\t"
                     "lla %3, last_switch_instret\n\t"
                     "ld %2, 0(%3)\n\t"
                     "sub %1, %1, %2\n\t"
                     "sub %1, %1, %0\n\t"   /* the current process's so far */
                     "lla %3, kernel_work_uncharged\n\t"
                     "sd %1, 0(%3)\n\t"
                     "li %0, 0\n\t"
                     "lla %3, in_kernel_work\n\t"
                     "li %2, 1\n\t"
                     "sw %2, 0(%3)"
                     : "+r"(meter_count), "=&r"(now), "=&r"(last), "=&r"(at) : : "memory");
}

/* A span that began at instret `at` (an interrupt's, at its trap), the
 * meter's count 0. */
static inline void kernel_work_begin_at(uint64_t at)
{
    kernel_work_uncharged = at - last_switch_instret;
    in_kernel_work = 1;
}

static inline __attribute__((always_inline)) void kernel_work_end(void)
{
    uint64_t now, t;
    __asm__ volatile("rdinstret %1\n\t"
                     "lla %2, kernel_work_uncharged\n\t"
                     "ld %2, 0(%2)\n\t"
                     "sub %1, %1, %2\n\t"
                     "addi %1, %1, 19\n\t"  /* these nineteen, with a process current */
                     "lla %2, last_switch_instret\n\t"
                     "sd %1, 0(%2)\n\t"
                     "li %0, 0\n\t"
                     "lla %2, in_kernel_work\n\t"
                     "sw zero, 0(%2)\n\t"
                     "lla %2, current\n\t"
                     "ld %2, 0(%2)\n\t"
                     "beqz %2, 1f\n\t"
                     "ld %2, %3(%2)\n\t"
                     "sd %1, %4(%2)\n"       /* what the process reads of its own time */
                     "1:"
                     : "+r"(meter_count), "=&r"(now), "=&r"(t)
                     : "i"(__builtin_offsetof(struct proc, info)),
                       "i"(__builtin_offsetof(struct dm_info, instret_at_switch))
                     : "memory");
}

/* p's PROCTIME now: instructions charged to it, the running ones included. */
uint64_t proctime_now(struct proc *p);
/* The kernel's PROCTIME (slot 0): every instruction executed since boot that
 * was charged to no process, but the idle waits. */
uint64_t kernel_proctime(void);
void set_exit_notify_slot(int slot);
void notify_machine_up(uint32_t machine, uint32_t epoch);
void notify_machine_down(uint32_t machine);
void kernel_status(void);

/* elf.c */
/* A program image: in kernel memory (kernel != 0), or `size` bytes at
 * `address` in process owner's memory. */
struct image_source {
    const uint8_t *kernel;
    uint8_t *const *pages;     /* or in these kernel pages, one after the other */
    struct proc   *owner;
    uint64_t       address, size;
};
int elf_load(struct proc *p, const struct image_source *image);

/* link.c */
int link_alloc_slot(struct proc *p);
int link_install(struct proc *p, const struct link *l);
int link_get(struct proc *p, int64_t slot, struct link **out);
void link_drop(struct link *l);
void link_clear(struct link *l);
uint32_t link_count(struct proc *p);

/* msg.c */
/* A message being sent: the message, the link it goes over, and who sends
 * it (a process, kernel_proc, or 0 for a request from another machine). */
struct outgoing {
    struct proc *from;
    const struct link *via;
    struct message message;
};
#define SEND_PENDING 1           /* msg_send: the sender now waits for another machine */
void msg_init(void);
int msg_send(struct outgoing *o);
int msg_send_from_kernel(const struct link *via, const void *data, uint32_t length, struct link *pass);
int msg_deliver(struct proc *r, struct message *m, uint64_t reply_id);
int set_receive_target(struct proc *p, uint64_t info, uint64_t buf, uint64_t cap, uint32_t channel);
int64_t msg_receive(struct proc *p, uint32_t channel, int block);
int msg_queue_has(struct proc *p, uint32_t channel);
void msg_discard_queue(struct proc *p);
int msg_queue_moved(struct queued **head, struct queued **tail, const struct message *m);
void msg_queued_free(struct queued *q);
void msg_queued_drop(struct queued *q);
void reply_link_dropped(const struct link *l);
uint64_t new_reply_id(void);

/* kreq.c: the requests over kernel links, and their answers */
int kreq_handle(struct outgoing *o);   /* o->sender 0: a request from another machine */
void kernel_reply_slot(int slot, uint32_t op, int64_t status, uint64_t value, const void *data, uint32_t len);
int kernel_keep_reply(struct link *reply);
uint8_t *kernel_answer_data(void);

/* console_service.c: KLINK_CONSOLE */
int64_t console_request(struct dm_kreq *q, uint32_t len, struct link *reply, uint64_t *value,
                        uint32_t *answer_len, int *later);
void console_input_ready(void);
void console_output_ready(void);

/* timer_service.c: KLINK_TIMER */
int64_t timer_request(struct dm_kreq *q, struct link *reply, uint64_t *value, uint32_t *answer_len, int *later);
void timer_check_alarms(void);
uint64_t next_alarm_time(void);

/* halt.c */
void kernel_halt(int code) __attribute__((noreturn));
void power_off(int code) __attribute__((noreturn));

/* syscall.c */
void syscall_dispatch(struct proc *p);

/* trap.c */
void poll_interrupts(void);

/* clock.c */
uint64_t machine_clock_ns(void);
uint64_t wall_clock_ns(void);
void clock_init(void);
void timer_program(void);

/* fpu.c */
uint64_t sstatus_for(struct proc *next);
void fp_enable(struct proc *p);
void fp_forget(struct proc *p);
void fp_take(struct proc *p);

/* entry.S */
void user_return(struct trapframe *tf) __attribute__((noreturn));
/* Back to user mode from an interrupt's kernel_work span (proc.c,
 * resume_after_interrupt), ending the span on the way; instret_at_switch:
 * where the process reads the instret its time counts from. */
void interrupt_return(struct trapframe *tf, uint64_t *instret_at_switch) __attribute__((noreturn));
/* The instructions of interrupt_return and user_return, which entry.S
 * counts in the span (4 bytes each there: trap.c checks the count at boot). */
#define INTERRUPT_RETURN_INSTRUCTIONS 49
extern char user_return_end[], interrupt_return_end[], kernel_stack_top[];

#endif
