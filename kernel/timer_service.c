/*
 * timer_service.c — the clock for the timer server: requests over its
 * kernel link (KLINK_TIMER, dispatched by kreq.c) for the time and for
 * alarms. An alarm's answer goes over the reply link the kernel keeps
 * until the machine clock reaches the alarm's time; the timer interrupt
 * (trap.c) checks, and the timer is set for the earliest (clock.c,
 * timer_program).
 */
#include "defs.h"

#define NALARMS 16
static struct { uint64_t when; int slot; int active; } alarms[NALARMS];
/* The earliest alarm, recomputed whenever the set of alarms changes. */
static uint64_t earliest_alarm = UINT64_MAX;

static void alarms_changed(void);

/* A timer request: KOP_TIME, KOP_ALARM. *later is set when the answer will
 * come later. */
int64_t timer_request(struct dm_kreq *q, struct link *reply, uint64_t *value, uint32_t *answer_len, int *later)
{
    if (q->op == KOP_TIME) {
        uint64_t machine_now = machine_clock_ns();
        *value = wall_clock_ns();
        memcpy(kernel_answer_data(), &machine_now, 8);
        *answer_len = 8;
        return 0;
    }
    if (q->op == KOP_ALARM) {
        if (!reply)
            return E_BADREQ;
        if ((uint64_t)q->arg[0] <= machine_clock_ns()) {
            *value = machine_clock_ns();
            return 0;
        }
        for (int i = 0; i < NALARMS; i++) {
            if (!alarms[i].active) {
                int slot = kernel_keep_reply(reply);
                if (slot < 0)
                    return E_LINKFULL;
                alarms[i].active = 1;
                alarms[i].slot = slot;
                alarms[i].when = (uint64_t)q->arg[0];
                alarms_changed();
                *later = 1;
                return 0;
            }
        }
        return E_NOMEM;
    }
    return E_NOSYS;
}

/* The timer fired (trap.c): answer every alarm whose time has come, and
 * set the timer again. */
void timer_check_alarms(void)
{
    uint64_t now = machine_clock_ns();
    for (int i = 0; i < NALARMS; i++) {
        if (alarms[i].active && alarms[i].when <= now) {
            alarms[i].active = 0;
            kernel_reply_slot(alarms[i].slot, KOP_ALARM, 0, now, 0, 0);
        }
    }
    alarms_changed();
}

/* The earliest alarm's time (machine-clock ns), or UINT64_MAX. */
uint64_t next_alarm_time(void)
{
    return earliest_alarm;
}

/* Recompute the earliest alarm, and set the timer for it. */
static void alarms_changed(void)
{
    earliest_alarm = UINT64_MAX;
    for (int i = 0; i < NALARMS; i++)
        if (alarms[i].active && alarms[i].when < earliest_alarm)
            earliest_alarm = alarms[i].when;
    timer_program();
}
