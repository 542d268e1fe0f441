/*
 * kfuzz — random kernel calls from several processes at once:
 * bad slots, kernel and unmapped and misaligned and read-only pointers,
 * huge and boundary sizes, links passed back and forth, MOVEDATA beyond
 * bounds and against rights, reply links used twice, unknown call numbers.
 * The kernel must answer each with a result or one of demos.h's error
 * codes and never panic; a checker process running beside the fuzzers
 * must see every one of its own messages and copies intact.
 *
 *     kfuzz SEED CALLS [PROCS]    PROCS fuzzers (default 4), CALLS calls each,
 *                                 seeds SEED, SEED+1, ...; a responder; a checker
 *     kfuzz fuzz SEED CALLS NAME  one fuzzer (internal), its responder NAME
 *     kfuzz responder NAME        answers the fuzzers' CALLs (internal)
 *     kfuzz checker NAME          checks the kernel while they run (internal)
 *
 * A fuzzer checks what it can check of each answer: the value is a result
 * or one of the errors demos.h lists for that call (DM_CALLS), and E_NOSYS
 * for a number that is no call; RECEIVE and ARECEIVE never succeed into
 * memory the process may not write; and the guards around the only memory the
 * kernel may write for it (the scratch area) are intact at the end. It
 * never touches its links to the process manager and the console (slots 0
 * and 2), which the C library needs (malloc, printf), and drops its link
 * to the switchboard first: servers take requests from anyone by design,
 * and this program tests the kernel.
 *
 * Prints `kfuzz: ... passed` or what failed; exit status 0 if all passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmlib.h"
#include "workload.h"

#define SCRATCH       (64 * 1024)
#define GUARD         4096
#define CHANNEL_STOP  9           /* the checker's: the coordinator says stop */
#define CHANNEL_CHECK 7           /* the checker's own messages */
#define UNMAPPED      0x70000000UL   /* between the heap and the stack: never mapped here */

/* ---- raw kernel calls ---- */

/* Any call number with any arguments: what the stubs never pass. */
static long raw_call(long number, long a0, long a1, long a2, long a3, long a4, long a5, long a6)
{
    register long x10 __asm__("a0") = a0;
    register long x11 __asm__("a1") = a1;
    register long x12 __asm__("a2") = a2;
    register long x13 __asm__("a3") = a3;
    register long x14 __asm__("a4") = a4;
    register long x15 __asm__("a5") = a5;
    register long x16 __asm__("a6") = a6;
    register long x17 __asm__("a7") = number;
    __asm__ volatile("ecall"
                     : "+r"(x10)
                     : "r"(x11), "r"(x12), "r"(x13), "r"(x14), "r"(x15), "r"(x16), "r"(x17)
                     : "memory");
    return x10;
}

/* ---- the fuzzer's memory: scratch between two guards ---- */

static struct {
    uint8_t before[GUARD];
    uint8_t scratch[SCRATCH];
    uint8_t after[GUARD];
} memory __attribute__((aligned(4096)));

static struct prng rng;

/* A number in [0, n); 0 when n is 0. */
static uint64_t pick(uint64_t n)
{
    return n ? prng_below(&rng, n) : 0;
}

/* A length: boundaries mostly, sometimes anything. */
static uint64_t any_length(void)
{
    static const uint64_t lengths[] = { 0, 1, 7, 8, 64, 4095, 4096, 4097, 65536, DM_MOVE_MAX, DM_MOVE_MAX + 1,
                                        1ull << 40, ~0ull, ~0ull - 4095 };
    return pick(4) ? lengths[pick(sizeof lengths / sizeof lengths[0])] : prng_next(&rng);
}

/* A buffer the kernel may write: [*p, *p + *len) inside scratch (then 1),
 * or somewhere it must refuse to write (then 0): nothing, kernel memory,
 * read-only code or the info page, unmapped, past the top of user memory. */
static int writable_buffer(uint64_t *p, uint64_t *len)
{
    static const uint64_t refused[] = { 0, 8, 0x1000, DM_USER_BASE - 64, DM_USER_BASE, DM_INFO_PAGE,
                                        DM_USER_TOP - 8, DM_USER_TOP, UNMAPPED, 0x80000000UL,
                                        0xffffffffffff0000UL, 0x8000000000000000UL };
    if (pick(3)) {
        uint64_t at = pick(SCRATCH);
        *p = (uint64_t)(uintptr_t)memory.scratch + at;
        *len = pick(SCRATCH - at + 1);
        return 1;
    }
    *p = refused[pick(sizeof refused / sizeof refused[0])] + (pick(4) == 0 ? pick(64) : 0);
    *len = any_length();
    return 0;
}

/* A place for a struct dm_msg_info: in scratch with room for it (then 1),
 * or refused memory (then 0). */
static int info_pointer(uint64_t *p)
{
    uint64_t len, end = (uint64_t)(uintptr_t)memory.scratch + SCRATCH;
    if (!writable_buffer(p, &len))
        return 0;
    if (*p + sizeof(struct dm_msg_info) > end)
        *p = end - sizeof(struct dm_msg_info);
    return 1;
}

/* A buffer the kernel only reads: anything. */
static uint64_t any_pointer(void)
{
    uint64_t p, len;
    writable_buffer(&p, &len);
    return pick(8) ? p : (uint64_t)(uintptr_t)&rng;   /* sometimes valid data outside scratch */
}

/* A slot: one of ours mostly, sometimes out of range; never the process
 * manager's or the console's, which the C library uses (malloc asks the
 * process manager for memory; printf goes to the console). */
static long any_slot(void)
{
    static const long odd[] = { -3, DM_SELF, DM_NO_LINK, DM_NLINKS, DM_NLINKS + 1, 1000, 0x7fffffffL,
                                (long)0x8000000000000000L };
    long slot;
    do {   /* links gather in the low slots: half the picks go there */
        uint64_t kind = pick(6);
        slot = kind < 3 ? (long)pick(12) : kind < 5 ? (long)pick(DM_NLINKS) : odd[pick(sizeof odd / sizeof odd[0])];
    } while (slot == SLOT_PM || slot == SLOT_CONSOLE);
    return slot;
}

static uint32_t any_channel(void)
{
    static const uint32_t channels[] = { 0, 1, CHANNEL_CHECK, DM_ANY_CHANNEL, DM_REPLY_CHANNEL };
    return pick(3) ? channels[pick(5)] : (uint32_t)prng_next(&rng);
}

/* ---- one fuzzer ---- */

static uint64_t tally[DM_NERRORS + 1];   /* [0]: results; [-e]: error e */
static int violations;

static void violation(const char *what, long call, long result)
{
    char number[32];
    const char *name = dm_call_name(call);
    if (!name) {
        snprintf(number, sizeof number, "call %ld", call);
        name = number;
    }
    if (violations++ < 10)
        printf("kfuzz: %s gave %ld (%s): %s\n", name, result, result < 0 ? dm_error_name(result) : "a result", what);
}

/* Count a result. A violation: a value that is neither a result nor an
 * error code; an error that is not in the call's list of errors (demos.h,
 * DM_CALLS); anything but E_NOSYS from a number that is no call (-1). */
static long note(long call, long result)
{
    if (result >= 0) {
        tally[0]++;
    } else if (result < -DM_NERRORS + 1) {
        violation("not a demos.h error code", call, result);
    } else {
        tally[-result]++;
        if (call == -1 && result != E_NOSYS)
            violation("a number that is no call must give E_NOSYS", call, result);
        else if (call != -1 && !dm_call_may_return(call, result))
            violation("not among the call's errors in demos.h", call, result);
    }
    return result;
}

/* One random kernel call. `self` is a link to ourselves (for a RECEIVE
 * that will not block), `responder` the responder's (CALLs go there only:
 * it always answers or drops the reply link). Long on purpose: one case
 * per kind of call, each a few lines. */
static void one_call(long self, long responder)
{
    uint64_t p, len, q, qlen;
    switch (pick(11)) {
    case 0: {
        int ok = writable_buffer(&p, &len);
        uint32_t flags = pick(4) ? (uint32_t)pick(8) : (uint32_t)prng_next(&rng);
        if ((flags & LINK_WRITE) && !ok)
            flags &= ~LINK_WRITE;   /* a link that could write outside scratch is not made */
        note(DM_CREATELINK, raw_call(DM_CREATELINK, any_channel(), (long)prng_next(&rng), flags, (long)p,
                                     (long)len, 0, 0));
        break;
    }
    case 1: {
        long slot = any_slot();
        if (slot != self && slot != responder)
            note(DM_DESTROYLINK, raw_call(DM_DESTROYLINK, slot, 0, 0, 0, 0, 0, 0));
        break;
    }
    case 2:
        note(DM_DUPLICATELINK, raw_call(DM_DUPLICATELINK, any_slot(), 0, 0, 0, 0, 0, 0));
        break;
    case 3: {
        long pass = pick(3) ? DM_NO_LINK : any_slot();
        if (pass == self || pass == responder)
            pass = DM_NO_LINK;
        note(DM_SEND, raw_call(DM_SEND, pick(2) ? any_slot() : responder, (long)any_pointer(),
                               (long)any_length() % 5000, pass, 0, 0, 0));
        break;
    }
    case 4:
    case 5: {   /* ARECEIVE, or RECEIVE of a message just sent to ourselves */
        int info_ok = info_pointer(&p);
        int buf_ok = writable_buffer(&q, &qlen);
        uint32_t channel = any_channel();
        long number = DM_ARECEIVE;
        if (pick(2) && dm_send(self, "x", 1, DM_NO_LINK) == 0) {
            number = DM_RECEIVE;
            channel = pick(2) ? DM_ANY_CHANNEL : CHANNEL_CHECK;
        }
        long r = note(number, raw_call(number, (long)p, (long)q, (long)qlen, channel, 0, 0, 0));
        if (r >= 0 && (!info_ok || (!buf_ok && qlen > 0 && r > 0)))
            violation("a receive succeeded into memory it may not write", number, r);
        if (number == DM_RECEIVE && r < 0)
            dm_areceive(&(struct dm_msg_info){ 0 }, 0, 0, DM_ANY_CHANNEL);   /* take it back out */
        break;
    }
    case 6: {   /* CALL the responder */
        int info_ok = info_pointer(&p);
        int buf_ok = writable_buffer(&q, &qlen);
        long pass = pick(3) ? DM_NO_LINK : any_slot();
        if (pass == self || pass == responder)
            pass = DM_NO_LINK;
        long r = note(DM_CALL, raw_call(DM_CALL, responder, (long)any_pointer(), (long)pick(4200), pass, (long)q,
                                        (long)qlen, (long)p));
        if (r >= 0 && (!info_ok || (!buf_ok && qlen > 0 && r > 0)))
            violation("a CALL's answer went into memory it may not write", DM_CALL, r);
        break;
    }
    case 7:
    case 8: {   /* MOVEDATA: the destination in scratch, through a link, or refused memory */
        long dst = pick(3) ? any_slot() : DM_SELF, src = pick(3) ? any_slot() : DM_SELF;
        uint64_t dst_offset = pick(2) ? pick(SCRATCH) : any_length();
        if (dst == DM_SELF && !writable_buffer(&dst_offset, &len))
            len = 0;
        else
            len = pick(2) ? pick(8192) : any_length();
        if (dst == DM_SELF && len > 0 &&
            (dst_offset < (uint64_t)(uintptr_t)memory.scratch ||
             dst_offset + len > (uint64_t)(uintptr_t)memory.scratch + SCRATCH))
            len = 0;
        note(DM_MOVEDATA, raw_call(DM_MOVEDATA, dst, (long)dst_offset, src, (long)(src == DM_SELF ? any_pointer()
                                                                                        : any_length()),
                                   (long)len, 0, 0));
        break;
    }
    case 9:   /* a reply link answered twice, or a used one duplicated */
        note(DM_SEND, raw_call(DM_SEND, any_slot(), (long)memory.scratch, 8, DM_NO_LINK, 0, 0, 0));
        break;
    default: {  /* no such call */
        static const long numbers[] = { 0, DM_NCALLS, DM_NCALLS + 1, 99, -1, 0x7fffffff };
        note(-1, raw_call(numbers[pick(6)], (long)prng_next(&rng), 0, 0, 0, 0, 0, 0));
    }
    }
}

/* The guards around scratch, written before and checked after. */
static int guards_intact(void)
{
    for (int i = 0; i < GUARD; i++)
        if (memory.before[i] != (uint8_t)(i * 7 + 1) || memory.after[i] != (uint8_t)(i * 13 + 5))
            return 0;
    return 1;
}

static int fuzz(uint64_t seed, uint64_t calls, const char *responder_name)
{
    prng_seed(&rng, seed);
    for (int i = 0; i < GUARD; i++) {
        memory.before[i] = (uint8_t)(i * 7 + 1);
        memory.after[i] = (uint8_t)(i * 13 + 5);
    }
    long responder = sb_lookup_wait(responder_name, 5000000000ull);
    long self = dm_createlink(CHANNEL_CHECK, 0, 0, 0, 0);
    if (responder < 0 || self < 0) {
        printf("kfuzz: fuzzer %lu: no responder %s\n", (unsigned long)seed, responder_name);
        return 1;
    }
    dm_destroylink(SLOT_SWITCHBOARD);
    for (uint64_t i = 0; i < calls; i++)
        one_call(self, responder);
    if (!guards_intact())
        violation("the kernel wrote outside the buffers it was given", 0, 0);
    printf("kfuzz: fuzzer %lu: %lu calls: %lu results", (unsigned long)seed, (unsigned long)calls,
           (unsigned long)tally[0]);
    for (int e = 1; e < DM_NERRORS; e++)
        if (tally[e])
            printf(", %s %lu", dm_error_name(-e), (unsigned long)tally[e]);
    printf("; %d violations\n", violations);
    return violations != 0;
}

/* ---- the responder: answers, or drops the reply link; passes links back ---- */

static int respond(const char *name)
{
    static uint8_t buffer[DM_MSG_MAX];
    prng_seed(&rng, 0x5eed);
    long link = dm_createlink(0, 0, 0, 0, 0);
    if (link < 0 || sb_register(name, link) < 0)
        return 1;
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        long pass = info.link;
        if (info.reply >= 0) {
            switch (pick(4)) {
            case 0:
                dm_destroylink(info.reply);   /* the caller gets E_NOREPLY */
                break;
            case 1:   /* answer with the link that came, then try the used reply link again */
                dm_send(info.reply, buffer, (uint64_t)pick((uint64_t)n + 1), pass);
                pass = DM_NO_LINK;
                dm_send(info.reply, buffer, 1, DM_NO_LINK);
                dm_destroylink(info.reply);
                break;
            default:
                dm_send(info.reply, buffer, (uint64_t)pick(DM_MSG_MAX + 1), DM_NO_LINK);
                dm_destroylink(info.reply);
            }
        }
        if (pass >= 0) {   /* a passed link's area written, if it has one and allows it: errors are expected */
            if (pick(2))
                dm_movedata(pass, pick(64), DM_SELF, (uint64_t)(uintptr_t)buffer, pick(128));
            dm_destroylink(pass);
        }
    }
}

/* ---- the checker: its own messages and copies, while the fuzzers run ---- */

static int check(const char *name)
{
    static uint8_t out[DM_MSG_MAX], in[DM_MSG_MAX], area[8192], copy[8192];
    prng_seed(&rng, 0xc4ec);
    long stop = dm_createlink(CHANNEL_STOP, 0, 0, 0, 0);
    long self = dm_createlink(CHANNEL_CHECK, 0, 0, 0, 0);
    if (stop < 0 || self < 0 || sb_register(name, stop) < 0)
        return 1;
    uint64_t rounds = 0, failures = 0;
    struct dm_msg_info info;
    while (dm_areceive(&info, in, sizeof in, CHANNEL_STOP) == E_NOMSG) {
        uint64_t n = 1 + pick(DM_MSG_MAX);
        for (uint64_t i = 0; i < n; i++)
            out[i] = (uint8_t)prng_next(&rng);
        long got = dm_send(self, out, n, DM_NO_LINK);
        if (got == 0)
            got = dm_receive(&info, in, sizeof in, CHANNEL_CHECK);
        failures += got != (long)n || memcmp(in, out, n) != 0 || info.sender != dm_self();
        uint64_t len = 1 + pick(sizeof area);
        for (uint64_t i = 0; i < len; i++)
            area[i] = (uint8_t)prng_next(&rng);
        long link = dm_createlink(0, 0, LINK_READ, area, len);
        got = link < 0 ? link : dm_movedata(DM_SELF, (uint64_t)(uintptr_t)copy, link, 0, len);
        failures += got != (long)len || memcmp(copy, area, len) != 0;
        if (link >= 0)
            dm_destroylink(link);
        rounds++;
        if (failures)
            break;
    }
    printf("kfuzz: checker: %lu rounds, %lu failed\n", (unsigned long)rounds, (unsigned long)failures);
    return failures != 0 || rounds == 0;
}

/* ---- the coordinator ---- */

/* Run `kfuzz ARGS...` as a new process; its pid, or 0 after saying why. */
static dm_pid start(int argc, char **argv)
{
    long pid = pm_run("kfuzz", argc, argv);
    if (pid < 0) {
        printf("kfuzz: cannot start kfuzz %s: %s\n", argv[1], dm_error_name(pid));
        return 0;
    }
    return (dm_pid)pid;
}

static int coordinate(uint64_t seed, uint64_t calls, uint64_t procs)
{
    char responder[32], checker[32], seed_text[24], calls_text[24];
    snprintf(responder, sizeof responder, "kfuzz.r.%lu", (unsigned long)seed);
    snprintf(checker, sizeof checker, "kfuzz.c.%lu", (unsigned long)seed);
    dm_pid r = start(3, (char *[]){ "kfuzz", "responder", responder, 0 });
    dm_pid c = start(3, (char *[]){ "kfuzz", "checker", checker, 0 });
    long stop = c ? sb_lookup_wait(checker, 5000000000ull) : -1;
    if (!r || !c || stop < 0)
        return 1;
    dm_pid fuzzers[64];
    snprintf(calls_text, sizeof calls_text, "%lu", (unsigned long)calls);
    for (uint64_t i = 0; i < procs; i++) {
        snprintf(seed_text, sizeof seed_text, "%lu", (unsigned long)(seed + i));
        fuzzers[i] = start(5, (char *[]){ "kfuzz", "fuzz", seed_text, calls_text, responder, 0 });
    }
    int failed = 0;
    for (uint64_t i = 0; i < procs; i++) {
        int64_t status = -1;
        if (!fuzzers[i] || pm_wait(fuzzers[i], &status) < 0 || status != 0) {
            printf("kfuzz: fuzzer %lu ended with status %lld\n", (unsigned long)(seed + i), (long long)status);
            failed = 1;
        }
    }
    int64_t status = -1;
    dm_send(stop, "stop", 4, DM_NO_LINK);
    if (pm_wait(c, &status) < 0 || status != 0) {
        printf("kfuzz: the checker failed (status %lld)\n", (long long)status);
        failed = 1;
    }
    pm_kill(r);
    pm_wait(r, &status);
    printf("kfuzz: seed %lu, %lu fuzzers x %lu calls: %s\n", (unsigned long)seed, (unsigned long)procs,
           (unsigned long)calls, failed ? "FAILED" : "passed");
    return failed;
}

static int usage(void)
{
    printf("usage: kfuzz SEED CALLS [PROCS]\n");
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t seed, calls, procs = 4;
    if (argc == 5 && strcmp(argv[1], "fuzz") == 0 && workload_number(argv[2], 0, UINT64_MAX, &seed) == 0 &&
        workload_number(argv[3], 0, UINT64_MAX, &calls) == 0)
        return fuzz(seed, calls, argv[4]);
    if (argc == 3 && strcmp(argv[1], "responder") == 0)
        return respond(argv[2]);
    if (argc == 3 && strcmp(argv[1], "checker") == 0)
        return check(argv[2]);
    if ((argc != 3 && argc != 4) || workload_number(argv[1], 0, UINT64_MAX, &seed) < 0 ||
        workload_number(argv[2], 0, UINT64_MAX, &calls) < 0 ||
        (argc == 4 && workload_number(argv[3], 1, 64, &procs) < 0))
        return usage();
    return coordinate(seed, calls, procs);
}
