"""The grader of the timeout lab (docs/labs/timeout.md), run by
scripts/grade.py (make grade LAB=timeout) on a cluster of 2 nodes.

Each test runs timedrecv (user/labs/timeout/timedrecv.c) from node 0's
shell, in one of its modes, and holds what it prints to what
docs/labs/timeout.md says TIMEDRECEIVE does: what each call returned, who
sent the message it received, and when, on the machine clock, since the
call began. The times are the guest's own (under -icount the machine clock
does not run ahead of the guest when the host is loaded), and every bound
leaves room: a time-out must not end before its time, nor more than LATE
after it; a message must not be received before it was sent, nor more than
LATE after. The tests also check what the program cannot say for itself:
that a message came from the timer server as `ps` names it, that the
in-OS tests (ktest's group timedreceive) provoke the call's errors, and
that a metered TIMEDRECEIVE writes its RECEIVECALL record (a filter whose
rules keep those alone counts them).
"""
import re
import time

from grade import require, test

NODES = 2
PID = r"\d+\.\d+\.\d+"
MS = r"(\d+\.\d)"
LATE = 250.0                 # ms: how late a time-out or a message may be, at most
AT_ONCE = 20.0               # ms: what "at once" may take


def timedrecv(lab, args, machine=0):
    """What `run [@K] timedrecv ARGS` printed; a stand-in for the call that
    the kernel does not know fails the test with what it said."""
    out = lab.command("run %stimedrecv %s" % ("@%d " % machine if machine else "", args), timeout=15)
    for said in ("the kernel answers E_NOSYS", "lists no call TIMEDRECEIVE", "does not list"):
        line = next((l for l in out.splitlines() if said in l), None)
        require(line is None, "timedrecv %s printed:\n%s" % (args, out.rstrip()))
    return out


def line(out, regex, what):
    """The match of regex (one whole line, after "timedrecv: ") in out, or fail."""
    m = re.search(r"^timedrecv: %s$" % regex, out, re.M)
    require(m, "timedrecv %s printed:\n%s\nnot a line like 'timedrecv: %s'" % (what, out.rstrip() or "(nothing)",
                                                                          regex.replace("\\", "")))
    return m


def within(ms, low, high, what):
    require(low <= ms <= high, "%s after %.1f ms, not between %.0f and %.0f ms" % (what, ms, low, high))


def timer_pid(lab):
    """The timer server's pid, as ps lists it."""
    if "timer" not in lab.state:
        row = next((r for r in lab.ps() if r["name"] == "timer"), None)
        require(row, "ps lists no timer server")
        lab.state["timer"] = row["pid"]
    return lab.state["timer"]


def timed_out(lab, timeout, machine=0):
    """`timedrecv wait TIMEOUT`: E_TIMEOUT no earlier than TIMEOUT ms and
    no more than LATE after."""
    args = "wait %dms" % timeout
    out = timedrecv(lab, args, machine)
    m = line(out, r"wait %dms: (E_\w+|message .*) after %s ms" % (timeout, MS), args)
    require(m.group(1) == "E_TIMEOUT", "TIMEDRECEIVE of %d ms with no message returned %s, not E_TIMEOUT"
            % (timeout, m.group(1)))
    within(float(m.group(2)), timeout, timeout + LATE, "E_TIMEOUT for a time-out of %d ms came" % timeout)


def message_came(lab, timeout_text, delay, machine=0):
    """`timedrecv wait TIMEOUT DELAYms`: the timer server's message, about
    DELAY ms after the call began, and it alone."""
    args = "wait %s %dms" % (timeout_text, delay)
    out = timedrecv(lab, args, machine)
    m = line(out, r"wait %s: (E_\w+|message (\d+) from (%s)) after %s ms" % (re.escape(timeout_text), PID, MS), args)
    require(m.group(2), "TIMEDRECEIVE of %s returned %s after %s ms; the timer server's message was to come "
            "after %d ms" % (timeout_text, m.group(1), m.group(4), delay))
    require(m.group(3) == timer_pid(lab), "the message came from %s, not from the timer server %s"
            % (m.group(3), timer_pid(lab)))
    within(float(m.group(4)), delay - AT_ONCE, delay + LATE, "the message sent after %d ms was received" % delay)
    line(out, r"nothing more is queued", args)


@test(10, "timeout: a time-out of 0 does not wait")
def zero(lab):
    out = timedrecv(lab, "wait 0")
    m = line(out, r"wait 0: (E_\w+|message .*) after %s ms" % MS, "wait 0")
    require(m.group(1) == "E_TIMEOUT", "TIMEDRECEIVE of 0 ns with nothing queued returned %s, not E_TIMEOUT"
            % m.group(1))
    within(float(m.group(2)), 0, AT_ONCE, "E_TIMEOUT came")


@test(5, "timeout: a queued message is received at once")
def queued(lab):
    for timeout in ("0", "1s"):
        out = timedrecv(lab, "queued " + timeout)
        m = line(out, r"queued %s: (E_\w+|message (\d+) from (%s)) after %s ms" % (timeout, PID, MS),
                 "queued " + timeout)
        require(m.group(2) == "0", "TIMEDRECEIVE of %s with a message queued returned %s" % (timeout, m.group(1)))
        within(float(m.group(4)), 0, AT_ONCE, "the queued message was received")
        line(out, r"nothing more is queued", "queued " + timeout)


@test(15, "timeout: a message before the deadline is delivered")
def before_deadline(lab):
    message_came(lab, "2s", 100)
    message_came(lab, "1s", 300)


@test(15, "timeout: the deadline passes: E_TIMEOUT near it")
def deadline(lab):
    timed_out(lab, 300)
    out = timedrecv(lab, "several 900ms 300ms 600ms")
    for timeout in (300, 600, 900):
        m = line(out, r"wait %dms: (E_\w+|message .*) after %s ms" % (timeout, MS), "several 900ms 300ms 600ms")
        require(m.group(1) == "E_TIMEOUT", "of three processes waiting at once, the one waiting %d ms got %s"
                % (timeout, m.group(1)))
        within(float(m.group(2)), timeout, timeout + LATE,
               "of three processes waiting at once, the one waiting %d ms got E_TIMEOUT" % timeout)


@test(10, "timeout: a message just after the time-out is not lost")
def late_message(lab):
    out = timedrecv(lab, "wait 200ms 400ms")
    m = line(out, r"wait 200ms: (E_\w+|message .*) after %s ms" % MS, "wait 200ms 400ms")
    require(m.group(1) == "E_TIMEOUT", "TIMEDRECEIVE of 200 ms, its message due at 400 ms, returned %s"
            % m.group(1))
    within(float(m.group(2)), 200, 200 + LATE, "E_TIMEOUT came")
    m = line(out, r"late: (E_\w+|message (\d+) from (%s)) after %s ms" % (PID, MS), "wait 200ms 400ms")
    require(m.group(2) == "1" and m.group(3) == timer_pid(lab),
            "the RECEIVE after the time-out got %s, not the timer server's message" % m.group(1))
    within(float(m.group(4)), 400 - AT_ONCE, 400 + LATE, "the late message was received")
    line(out, r"nothing more is queued", "wait 200ms 400ms")


@test(10, "timeout: a wait ended by a message leaves no deadline behind")
def no_stale_deadline(lab):
    out = timedrecv(lab, "stale")
    m = line(out, r"wait 300ms: (E_\w+|message (\d+) from %s) after %s ms" % (PID, MS), "stale")
    require(m.group(2) == "1", "TIMEDRECEIVE of 300 ms, a message due at 50 ms, returned %s" % m.group(1))
    within(float(m.group(3)), 50 - AT_ONCE, 50 + LATE, "the message due at 50 ms was received")
    m = line(out, r"then RECEIVE: (E_\w+|message (\d+) from %s) after %s ms" % (PID, MS), "stale")
    require(m.group(2) == "2", "the RECEIVE after it returned %s after %s ms: the TIMEDRECEIVE's deadline "
            "(300 ms) ended a wait that was not its own" % (m.group(1), m.group(3)))
    within(float(m.group(3)), 600 - AT_ONCE, 600 + LATE, "the RECEIVE's message, due at 600 ms, was received")


@test(10, "timeout: bad arguments fail at once (E_INVAL, E_FAULT)")
def bad_arguments(lab):
    for timeout in ("-1", "-9223372036854775808"):
        out = timedrecv(lab, "wait " + timeout)
        m = line(out, r"wait %s: (E_\w+|message .*) after %s ms" % (timeout, MS), "wait " + timeout)
        require(m.group(1) == "E_INVAL", "a time-out of %s gave %s, not E_INVAL" % (timeout, m.group(1)))
        within(float(m.group(2)), 0, AT_ONCE, "E_INVAL came")
    out = timedrecv(lab, "fault")
    for what in ("info at 0", "info on the read-only info page", "buffer unmapped"):
        m = line(out, r"%s: (E_\w+) after %s ms" % (what, MS), "fault")
        require(m.group(1) == "E_FAULT", "%s gave %s, not E_FAULT" % (what, m.group(1)))
        within(float(m.group(2)), 0, AT_ONCE, "%s: E_FAULT came" % what)


@test(10, "timeout: a huge time-out waits for the message")
def huge(lab):
    message_came(lab, "9223372036854775807", 200)
    message_came(lab, "4611686018427387904", 200)


@test(5, "timeout: on another machine")
def other_machine(lab):
    message_came(lab, "2s", 100, machine=1)
    timed_out(lab, 300, machine=1)


@test(5, "timeout: ktest's group timedreceive provokes the call's errors")
def ktest_group(lab):
    out = lab.command("run ktest timedreceive", timeout=15)
    summary = re.search(r"^ktest: (\d+) passed, (\d+) failed$", out, re.M)
    require(summary and summary.group(2) == "0", "ktest timedreceive printed:\n" + out.rstrip())
    checks = re.findall(r"^ok timedreceive\.\w+$", out, re.M)
    require(len(checks) >= 3, "ktest timedreceive ran %d checks named timedreceive.*, not 3 or more:\n%s"
            % (len(checks), out.rstrip()))
    provoked = set(re.findall(r"^provoked (E_\w+)\nok timedreceive\.", out, re.M))
    missing = {"E_TIMEOUT", "E_INVAL", "E_FAULT"} - provoked
    require(not missing, "no check named timedreceive.* provoked %s:\n%s" % (", ".join(sorted(missing)),
                                                                             out.rstrip()))


def kept_records(lab, name, want):
    """The records the filter `name` kept, once it has kept `want` (or 5 s passed)."""
    deadline = time.monotonic() + 5
    while True:
        out = lab.command("filter stats " + name)
        m = re.search(r"^filter %s: \d+ batches, (\d+) records received, (\d+) kept" % name, out, re.M)
        require(m, "filter stats printed:\n" + out)
        if int(m.group(2)) >= want or time.monotonic() > deadline:
            return int(m.group(2))
        time.sleep(0.2)


def metered_filter(lab, name, rule):
    """A filter `name` whose rules keep the records `rule` selects, logging
    to /NAME.log (the shell writes its rules to /NAME.rules)."""
    out = lab.command("echo '%s' > /%s.rules" % (rule, name))
    require(out.strip() == "", "echo printed:\n" + out)
    out = lab.command("filter start %s - /%s.rules /%s.log" % (name, name, name))
    require("filter %s: logging to /%s.log" % (name, name) in out, "filter start printed:\n" + out)


@test(5, "timeout: a metered TIMEDRECEIVE writes RECEIVECALL (kind 3) and RECEIVE")
def metered(lab):
    metered_filter(lab, "tr", "traceType=RECEIVECALL, kind=3;")
    metered_filter(lab, "rv", "traceType=RECEIVE, channel=5;")
    for args in ("queued 0", "wait 100ms", "wait 1s 50ms"):
        out = lab.command("meter -F tr -e RECEIVECALL run timedrecv " + args)
        require("timedrecv: " in out, "meter run timedrecv %s printed:\n%s" % (args, out))
    for args in ("queued 0", "wait 1s 50ms"):
        out = lab.command("meter -F rv -e RECEIVE run timedrecv " + args)
        require("timedrecv: " in out, "meter run timedrecv %s printed:\n%s" % (args, out))
    kept = kept_records(lab, "tr", 3)
    require(kept == 3, "3 TIMEDRECEIVEs, metered, wrote %d RECEIVECALL records of kind 3, not 3" % kept)
    kept = kept_records(lab, "rv", 2)
    require(kept == 2, "2 messages received by TIMEDRECEIVE, metered, made %d RECEIVE records on its channel "
            "(5), not 2" % kept)
