/*
 * timer.c — the timer server: time of day, sleeping, alarms. It holds the
 * clock's device link (slot 3) and keeps every sleeper and alarm in one
 * list, asking the kernel for a wake-up at the earliest of them. An alarm
 * whose receiver's queue is full when it fires is sent again a little
 * later, until it is taken: a process busy with a flood of messages (a
 * filter) still gets its alarms.
 * Registered with the switchboard as "timer".
 */
#include <stdint.h>
#include <string.h>
#include "dmlib.h"
#include "server.h"

#define DEVICE_SLOT     3
#define CHANNEL_REQUEST 0
#define CHANNEL_TICK    1
#define NWAITING        128
#define MAX_ARMED       8
#define ALARM_RETRY_NS  10000000ull   /* an alarm whose receiver's queue is full is sent again this much later */

static struct {
    uint64_t when;        /* machine clock ns */
    long     slot;        /* reply link (sleep) or alarm link */
    int      is_alarm;
    int64_t  cookie;
    int      used;
} waiting[NWAITING];
static uint64_t armed[MAX_ARMED];   /* wake-ups asked of the kernel, not yet come */
static int narmed;

static uint64_t armed_until(void)
{
    uint64_t t = UINT64_MAX;
    for (int i = 0; i < narmed; i++)
        if (armed[i] < t)
            t = armed[i];
    return t;
}

/* A wake-up came: it is the earliest one asked. */
static void wakeup_came(void)
{
    for (int i = 0; i < narmed; i++) {
        if (armed[i] == armed_until()) {
            armed[i] = armed[--narmed];
            return;
        }
    }
}

static uint64_t earliest(void)
{
    uint64_t t = UINT64_MAX;
    for (int i = 0; i < NWAITING; i++)
        if (waiting[i].used && waiting[i].when < t)
            t = waiting[i].when;
    return t;
}

/* Make sure the kernel wakes us by the earliest deadline. */
static void arm(void)
{
    uint64_t t = earliest();
    if (t == UINT64_MAX || t >= armed_until() || narmed >= MAX_ARMED)
        return;
    struct dm_kreq q = { .op = KOP_ALARM, .arg = { (int64_t)t } };
    long reply = dm_createlink(CHANNEL_TICK, 0, LINK_REPLY, 0, 0);
    if (reply < 0)
        return;
    if (dm_send(DEVICE_SLOT, &q, sizeof q, reply) < 0) {
        dm_destroylink(reply);
        return;
    }
    armed[narmed++] = t;
}

static void fire_expired(void)
{
    uint64_t now = dm_clock_ns();
    for (int i = 0; i < NWAITING; i++) {
        if (!waiting[i].used || waiting[i].when > now)
            continue;
        if (waiting[i].is_alarm) {
            struct sv_request fired = { .op = TIMER_ALARM_FIRED, .arg = { waiting[i].cookie } };
            long err = dm_send(waiting[i].slot, &fired, sizeof fired, DM_NO_LINK);
            if (err == E_QFULL || err == E_NOMEM) {   /* no room now (a busy filter's queue): later */
                waiting[i].when = now + ALARM_RETRY_NS;
                continue;
            }
            waiting[i].used = 0;
            dm_destroylink(waiting[i].slot);
        } else {
            waiting[i].used = 0;
            sv_reply(waiting[i].slot, 0, (int64_t)now, 0, 0, DM_NO_LINK);
        }
    }
}

static long add_waiting(uint64_t when, long slot, int is_alarm, int64_t cookie)
{
    for (int i = 0; i < NWAITING; i++) {
        if (!waiting[i].used) {
            waiting[i].when = when;
            waiting[i].slot = slot;
            waiting[i].is_alarm = is_alarm;
            waiting[i].cookie = cookie;
            waiting[i].used = 1;
            return 0;
        }
    }
    return E_NOMEM;
}

/* A request: TIMER_SLEEP is answered when it is time, TIMER_ALARM keeps
 * the alarm's link until it fires. */
static void handle(const struct dm_msg_info *info, const struct sv_request *q, uint32_t len,
                   struct server_answer *answer)
{
    (void)len;
    static uint64_t machine_ns;   /* TIMER_TIME's answer data */
    uint64_t now = dm_clock_ns();
    switch (q->op) {
    case TIMER_TIME: {
        struct kernel_request k = { .op = KOP_TIME, .pass = DM_NO_LINK, .answer = &machine_ns,
                                    .answer_cap = sizeof machine_ns };
        long err = kernel_request(DEVICE_SLOT, &k);
        if (err < 0 || k.answer_len < sizeof machine_ns) {
            answer->status = err < 0 ? err : E_BADREQ;
            break;
        }
        answer->value = (int64_t)k.value;
        answer->data = &machine_ns;
        answer->len = sizeof machine_ns;
        break;
    }
    case TIMER_SLEEP:
        if (q->arg[0] < 0 || info->reply < 0) {
            answer->status = E_INVAL;
            break;
        }
        if ((answer->status = add_waiting(now + (uint64_t)q->arg[0], info->reply, 0, 0)) == 0) {
            arm();
            answer->later = 1;   /* answered when it is time */
        }
        break;
    case TIMER_ALARM:
        if (q->arg[0] < 0 || info->link < 0) {
            answer->status = E_INVAL;
            break;
        }
        answer->status = add_waiting(now + (uint64_t)q->arg[0], info->link, 1, q->arg[1]);
        if (answer->status == 0)
            arm();
        else
            dm_destroylink(info->link);
        answer->link_kept = 1;
        break;
    default:
        answer->status = E_NOSYS;
    }
}

int main(void)
{
    server_register("timer", CHANNEL_REQUEST);
    static uint8_t buffer[DM_MSG_MAX];
    for (;;) {
        struct dm_msg_info info;
        long n = dm_receive(&info, buffer, sizeof buffer, DM_ANY_CHANNEL);
        if (n < 0)
            continue;
        if (info.channel == CHANNEL_TICK && (info.flags & DM_MSG_FROM_KERNEL)) {
            wakeup_came();
            fire_expired();
        } else {
            server_serve(&info, buffer, n, handle);
        }
        arm();
    }
}
