/*
 * forwarding.c — the forwarding lab's part of the kernel
 * (docs/labs/forwarding.md): what a kernel does with a request for a
 * process that has left it (forward), and with a link update that says
 * where a process has gone (receive_location). DEMOS/MP's forwarding
 * addresses and link updates (Powell and Miller, "Process Migration in
 * DEMOS/MP", §4; docs/migration.md, "Links follow the process").
 *
 * This file is not built into the system's kernel: the lab's kernel,
 * build/labs/forwarding/kernel.elf, is the system's with this file in
 * place of kernel/net/remote.c's own receive_location and forward.
 * remote.c includes it where those stand, so what remote.c has is yours to
 * use: location_lookup and location_learned (location.c, declared in
 * remote.h), send_on, remote_post, waiting_process, remote_call_waits_on,
 * MAX_HOPS, NO_MACHINE, struct rm_header and struct rm_location
 * (remote.h), and remote.c's counters.
 *
 * This is the lab's starting point: both functions are marked TODO, and
 * each says so once on its machine's console when it is first called.
 */

/* Say once on this machine's console that a part of the lab is not
 * written yet. */
static void not_written(const char *what, int part, int *said)
{
    if (!*said)
        kprintf("machine %u: %s is not written yet (docs/labs/forwarding.md, part %d)\n", this_machine, what,
                part);
    *said = 1;
}

/* Part 2: an RM_LOCATION has come from another kernel: process l->pid is on
 * machine l->machine after its l->moves'th move (moves 0: this says nothing
 * of where it is), and, if process l->h.waiter still waits for l->h.op,
 * its wait depends on l->machine now instead of on l->replaces
 * (NO_MACHINE: whatever it depended on). 1 if the message was well formed
 * (len is that of a struct rm_location), else 0. */
static int receive_location(const struct rm_location *l, uint32_t len)
{
    static int said;
    /* TODO(lab forwarding, part 2): if l->moves is not 0 and the process is
     * not here (proc_lookup), learn its location (location_learned). Then,
     * if l->h.waiter is not 0:
     *  - if the waiter is not here (proc_lookup), it has left this machine:
     *    the update follows it, as a message for it would (forward, with
     *    the waiter as the process it is for);
     *  - if it waits in a CALL that was local (its state is PS_CALLING, its
     *    p->remote is not active, its wait_reply_id is l->h.op), and
     *    l->machine is another machine of the cluster and the process l->pid
     *    is not here, its callee has moved away: its wait depends on
     *    l->machine from then on (remote_call_waits_on);
     *  - else, if it still waits on another machine for l->h.op
     *    (waiting_process) and l->machine is a machine of the cluster
     *    (below node_count), make its wait depend on l->machine: in its
     *    struct remote_wait (p->remote), set `machine` to l->machine if
     *    l->replaces is NO_MACHINE or is `machine`; else set `machine2` to
     *    it if `machine2` is l->replaces. */
    not_written("receive_location", 2, &said);
    return len == sizeof *l;
}

/* Part 1: a request (RM_SEND, RM_NOREPLY, RM_READ, RM_WRITE, RM_READ_TO),
 * or an answer following its waiter (RM_RESULT, RM_DATA; and, once part 2
 * is written, RM_LOCATION), has come for process `pid`, which is not on
 * this machine: the kernel message as it
 * arrived, `len` bytes at message_bytes, its struct rm_header first. Send
 * it on towards the process; where it arrives it is done and answered as
 * any other. 0 once sent on; E_DEAD when it cannot be (nothing is known of
 * the process at its home: it has ended; or it has been sent on MAX_HOPS
 * times); send_on's error when there is no room. */
static int forward(const uint8_t *message_bytes, uint32_t len, dm_pid pid)
{
    static int said;
    /* TODO(lab forwarding, part 1): where does it go? Where this machine's
     * table says (location_lookup: its machine, moves and kind), or, if
     * the table knows nothing, to the process's home (PID_MACHINE). It
     * cannot go to this machine, to no machine of the cluster, or on once
     * its header's `hops` has reached MAX_HOPS: count it
     * (counters.unforwarded++) and return E_DEAD. Else send it on
     * (send_on) and return what that returns.
     *
     * TODO(lab forwarding, part 2): once sent on, tell the kernel of the
     * machine that sent it (its header's answer_to) where the process is,
     * with an RM_LOCATION (remote_post; struct rm_location in remote.h):
     * the process, the machine it went to, the process's moves as the
     * table has them (0 if the entry is LOCATION_ARRIVING: it is not there
     * yet) and replaces = this machine, for the header's waiter and op.
     * Send none when there is nothing to say (moves 0 and no waiter), nor
     * for an answer (RM_RESULT, RM_DATA), whose waiter's machine knows,
     * nor for a link update (RM_LOCATION) following its waiter. */
    (void)message_bytes, (void)len, (void)pid, (void)send_on;
    not_written("forward", 1, &said);
    return E_DEAD;
}
