"""The grader of the forwarding lab (docs/labs/forwarding.md), run by
scripts/grade.py (make grade LAB=forwarding) on clusters of 4 nodes that
boot the lab's kernel, build/labs/forwarding/kernel.elf: the system's, with
kernel/labs/forwarding.c's forward and receive_location in place of its own.

Each test boots a cluster of its own and moves processes while they talk.
Most use ping and its pong: ping, started on machine 1 (where it starts its
pong) and moved to machine 0 (or, in one test, left there), CALLs pong round
after round; ping checks every answer and pong the order of every request,
so each exchange must be done exactly once and in order. One uses nettest's
stress (SENDs, CALLs and MOVEDATA, every byte checked). What the tests hold
the forwarding and the link updates to, they read from the system: what the
machines' transports sent each other (netstat), which machines may fail
without harm, and how a wait ends. They do not read the code. The lab's
kernel says on a machine's console when a part that is not written yet is
first needed; a test that needs that part fails at once, saying so.
"""
import re
import time

from grade import require, test

NODES = 4
KERNEL = "build/labs/forwarding/kernel.elf"

PID = r"\d+\.\d+\.\d+"
PING_END = r"ping: (?:(\d+) round trips with pong (\S+), all answered|round (\d+) went wrong \((\S+)\))\n"
NOT_WRITTEN = r"machine \d+: (\w+) is not written yet \(docs/labs/forwarding\.md, part \d\)"
FORWARD, RECEIVE_LOCATION = "forward", "receive_location"


def not_written(lab, needed):
    """The lines in which a machine's kernel said that a function of
    `needed` is not written yet."""
    lines = set()
    for k in range(NODES):
        for m in re.finditer(NOT_WRITTEN, lab.printed(k)):
            if m.group(1) in needed:
                lines.add(m.group(0))
    return sorted(lines)


def wait_printed(lab, pattern, timeout, since, needed, waiting_for):
    """The match of `pattern` in what node 0 prints after `since`, waited
    for up to `timeout` seconds; the test fails at once if a kernel says a
    function of `needed` is not written yet."""
    deadline = time.monotonic() + timeout
    while True:
        missing = not_written(lab, needed)
        require(not missing, "\n".join(missing))
        try:
            return lab.expect(pattern, min(0.5, max(0.0, deadline - time.monotonic())), since)
        except Exception:
            shown = [line for line in lab.printed(0)[since:].split("\n")
                     if line.strip() and not re.match(r"(%s |PID |\$)" % PID, line)]
            require(time.monotonic() < deadline, "%s: nothing after %g s; node 0 printed last, but for ps:\n%s"
                    % (waiting_for, timeout, "\n".join(shown[-4:])))


def processes(lab):
    return {row["pid"]: row for row in lab.ps()}


def listed(lab, name, other_than=None):
    """The pid of a process called `name` (not other_than), once ps lists it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for pid, row in processes(lab).items():
            if row["name"] == name and pid != other_than:
                return pid
        time.sleep(0.1)
    require(False, "ps lists no %s 10 s after it was started" % name)


def command(lab, line):
    """A command of the shell that says nothing when it has worked (migrate,
    stop, resume, kill); the test fails if it says something, a line
    "COMMAND: ..." (what background programs and kernels print meanwhile may
    come among its output)."""
    out = lab.command(line)
    name = line.split()[0]
    said = re.findall(r"^%s: .*$" % name, out, re.M)
    require(not said, "%s printed:\n%s" % (line, "\n".join(said)))


def migrate(lab, pid, machine):
    """`migrate PID @K`; then ps lists the process on K."""
    command(lab, "migrate %s @%d" % (pid, machine))
    row = processes(lab).get(pid)
    require(row and row["node"] == machine, "after migrate %s @%d, ps lists it as %s" % (pid, machine, row))


def ping_pong(lab, rounds, pause_ms, ping_to=0):
    """A fresh cluster; ping ROUNDS rounds with a pause of PAUSE_MS between,
    started on machine 1 with its pong, and moved to machine PING_TO (None:
    it stays on 1). A dict: ping's and pong's pids, and where node 0's output
    began."""
    lab.boot()
    since = len(lab.printed(0))
    out = lab.command("run @1 ping %d %d &" % (rounds, pause_ms))
    m = re.search(r"\[(%s)\] ping" % PID, out)
    require(m, "run @1 ping %d %d & printed:\n%s" % (rounds, pause_ms, out))
    pair = {"ping": m.group(1), "pong": listed(lab, "pong"), "since": since, "rounds": rounds}
    if ping_to is not None:
        migrate(lab, pair["ping"], ping_to)
    return pair


def ping_ended(lab, pair, needed, timeout=18, waiting_for="ping's last line"):
    """The match of ping's last line: all answered, or a round gone wrong."""
    return wait_printed(lab, PING_END, timeout, pair["since"], needed, waiting_for)


def went_wrong(lab, m, needed, what):
    """Fail, saying why ping's round went wrong: a part the kernels say is
    not written yet (their consoles read once more), or else the error."""
    time.sleep(0.2)
    missing = not_written(lab, needed)
    require(not missing, "\n".join(missing))
    require(False, "ping's round %s went wrong (%s) %s" % (m.group(3), m.group(4), what))


def all_answered(lab, pair, needed, what):
    """ping's every round answered, and pong's every request in order, once."""
    m = ping_ended(lab, pair, needed)
    if not m.group(1):
        went_wrong(lab, m, needed, what)
    require(int(m.group(1)) == pair["rounds"] and m.group(2) == pair["pong"], m.group(0))
    complaint = re.search(r"pong: ping \d+ came when ping \d+ was expected", lab.printed(0)[pair["since"]:])
    require(not complaint, "%s: a request came out of order, or twice, %s" % (complaint and complaint.group(0), what))


def still_running(lab, pair, needed, what):
    """ping has not stopped with a round gone wrong (so far)."""
    missing = not_written(lab, needed)
    require(not missing, "\n".join(missing))
    m = re.search(PING_END, lab.printed(0)[pair["since"]:])
    if m and not m.group(1):
        went_wrong(lab, m, needed, what)


def messages_sent(lab):
    """(from machine, to machine) -> kernel messages sent, from netstat."""
    sent = {}
    for line in lab.command("netstat").splitlines():
        f = line.split()
        if len(f) > 4 and f[0].isdigit() and f[1].isdigit() and f[2] in ("up", "down"):
            sent[(int(f[0]), int(f[1]))] = int(f[3])
    return sent


def sent_between(before, after, a, b):
    return after.get((a, b), 0) - before.get((a, b), 0)


@test(10, "forwarding: a CALL for a process that has left is sent on to it")
def sent_on(lab):
    pair = ping_pong(lab, 150, 5)
    time.sleep(0.3)
    migrate(lab, pair["pong"], 2)
    all_answered(lab, pair, (FORWARD,), "after pong left machine 1, its home, for machine 2")


@test(10, "forwarding: SENDs, CALLs and MOVEDATA under way while both sides move", time_limit=30)
def under_load(lab):
    """nettest's stress between a client started on machine 1 and its
    server on machine 2: the client moves during the messages, the server
    and the client during the MiBs moved by MOVEDATA."""
    lab.boot()
    since = len(lab.printed(0))
    out = lab.command("run @1 nettest stress 2 3000 64 &")
    m = re.search(r"\[(%s)\] nettest" % PID, out)
    require(m, "run @1 nettest stress 2 3000 64 & printed:\n" + out)
    client = m.group(1)
    server = listed(lab, "nettest", other_than=client)
    migrate(lab, client, 0)
    wait_printed(lab, r"ok stress\.calls_answered_intact\n", 20, since, (FORWARD,), "nettest's SENDs and CALLs")
    time.sleep(0.2)
    for pid, machine in ((server, 3), (client, 2), (server, 0)):
        migrate(lab, pid, machine)
        time.sleep(0.2)
    wait_printed(lab, r"nettest: (\d+) passed, (\d+) failed\n", 25, since, (FORWARD,), "nettest's MOVEDATA")
    out = lab.printed(0)[since:]
    for check in ("sends_in_order_intact", "calls_answered_intact", "movedata_intact"):
        require("ok stress.%s\n" % check in out, "nettest printed:\n" + "\n".join(
            line for line in out.split("\n") if "stress" in line))


@test(10, "forwarding: a ping-pong moved again and again, every exchange once and in order")
def moved_about(lab):
    pair = ping_pong(lab, 500, 2)
    for side, machine in (("pong", 2), ("pong", 3), ("ping", 2), ("pong", 0), ("ping", 3), ("pong", 1),
                          ("ping", 0)):
        migrate(lab, pair[side], machine)
        time.sleep(0.2)
    all_answered(lab, pair, (FORWARD,), "while ping and pong moved")


@test(5, "forwarding: a request for a moved process that has ended fails with E_DEAD")
def ended(lab):
    """pong moves to machine 2 and is killed there, ping stopped meanwhile:
    ping's next CALL, wherever it is sent, must fail with E_DEAD, not go
    round for ever."""
    pair = ping_pong(lab, 100000, 20)
    time.sleep(0.3)
    migrate(lab, pair["pong"], 2)
    time.sleep(0.5)
    still_running(lab, pair, (FORWARD,), "after pong moved to machine 2")
    for line in ("stop %s" % pair["ping"], "kill %s" % pair["pong"], "resume %s" % pair["ping"]):
        command(lab, line)
        time.sleep(0.2)
    m = ping_ended(lab, pair, (FORWARD,), timeout=10,
                   waiting_for="ping's CALL to pong, which ended, neither failed nor was answered (is it sent "
                               "round and round?)")
    require(m.group(4) == "E_DEAD", "ping's CALL to pong, which ended on machine 2, ended with %s, not E_DEAD"
            % (m.group(4) or "an answer"))


@test(10, "link update: after one CALL sent on, the next go straight to the process's machine")
def straight_there(lab):
    """pong leaves machine 1 for 2; once ping has made a few rounds, the
    rest go from machine 0 to 2 without machine 1: machine 1 sends machine 2
    (and 2 sends 1) next to nothing while ping makes its last rounds."""
    pair = ping_pong(lab, 400, 5)
    time.sleep(0.3)
    migrate(lab, pair["pong"], 2)
    time.sleep(0.5)
    still_running(lab, pair, (FORWARD, RECEIVE_LOCATION), "after pong left machine 1 for machine 2")
    before = messages_sent(lab)
    all_answered(lab, pair, (FORWARD, RECEIVE_LOCATION), "after pong left machine 1 for machine 2")
    after = messages_sent(lab)
    straight = sent_between(before, after, 0, 2)
    through = {(a, b): sent_between(before, after, a, b) for a, b in ((1, 2), (2, 1), (0, 1))}
    require(straight >= 100, "machine 0 sent machine 2 only %d messages during ping's last rounds (netstat)"
            % straight)
    require(max(through.values()) <= 10,
            "during ping's last rounds, machine 0 sent machine 2 %d messages, but machine 1 (which pong left) "
            "still sent machine 2 %d, machine 2 sent machine 1 %d and machine 0 sent machine 1 %d (netstat): "
            "messages still go through machine 1" % (straight, through[(1, 2)], through[(2, 1)], through[(0, 1)]))


@test(10, "link update: a chain of moves collapses, and the machines left behind may fail")
def chain(lab):
    """pong moves from machine 1 to 2 and then 3: ping's CALLs go from 0 to
    3 and pong's answers from 3 to 0, none through 1 or 2; then machines 1
    (ping's and pong's home) and 2 are killed, and ping finishes."""
    pair = ping_pong(lab, 700, 5)
    time.sleep(0.3)
    migrate(lab, pair["pong"], 2)
    time.sleep(0.4)
    migrate(lab, pair["pong"], 3)
    time.sleep(0.4)
    still_running(lab, pair, (FORWARD, RECEIVE_LOCATION), "after pong moved from machine 1 to 2 and then 3")
    before = messages_sent(lab)
    time.sleep(0.5)
    after = messages_sent(lab)
    straight = sent_between(before, after, 0, 3)
    through = sum(sent_between(before, after, a, b) for a in range(4) for b in range(4)
                  if a != b and (a in (1, 2) or b in (1, 2)))
    require(straight >= 20, "machine 0 sent machine 3 only %d messages in 0.5 s of ping's rounds (netstat)"
            % straight)
    require(through <= 10, "in 0.5 s of ping's rounds, machine 0 sent machine 3 %d messages, and machines 1 and 2, "
            "which pong left, sent or were sent %d (netstat): messages still go through them" % (straight, through))
    lab.kill(1)
    lab.kill(2)
    all_answered(lab, pair, (FORWARD, RECEIVE_LOCATION), "after machines 1 and 2 were killed")


@test(5, "link update: a CALL sent on waits on the process's new machine, and fails with E_NODE when it does")
def wait_follows(lab):
    """pong moves from machine 1 to 2 while ping is stopped, and is stopped
    there: ping's next CALL goes to machine 1, which sends it on to 2, where
    it waits. Machine 2 is killed: the CALL must end with E_NODE (about 4 s
    after, when machine 0 takes 2 to be down), not wait for ever on
    machine 1."""
    pair = ping_pong(lab, 100000, 10)
    time.sleep(0.3)
    still_running(lab, pair, (), "before pong moved")
    for line in ("stop %s" % pair["ping"], "migrate %s @2" % pair["pong"], "stop %s" % pair["pong"],
                 "resume %s" % pair["ping"]):
        command(lab, line)
        time.sleep(0.1)
    time.sleep(0.3)
    row = processes(lab).get(pair["ping"])
    require(row and row["state"] == "calling", "ping should wait in its CALL to the stopped pong: ps says %s" % row)
    lab.kill(2)
    m = ping_ended(lab, pair, (FORWARD, RECEIVE_LOCATION), timeout=12,
                   waiting_for="ping's CALL still waits after machine 2 was killed (its wait still depends on "
                               "machine 1, which sent it on?)")
    require(m.group(4) == "E_NODE", "ping's CALL to pong, lost with machine 2, ended with %s, not E_NODE"
            % (m.group(4) or "an answer"))


def queued_call_ends_with_e_node(lab, pair, duty):
    """pong is stopped, so that ping's CALL waits in its queue, and moves to
    machine 2; machine 2 is killed. ping's CALL must still wait after the
    move, and end with E_NODE once machine 2 is taken to be down (about 4 s
    after), not wait for ever. `duty`: what a kernel has not done if the
    CALL still waits, and the line of receive_location's TODO that says it."""
    time.sleep(0.3)
    still_running(lab, pair, (), "before pong was stopped")
    command(lab, "stop %s" % pair["pong"])
    time.sleep(0.3)
    row = processes(lab).get(pair["ping"])
    require(row and row["state"] == "calling", "ping should wait in its CALL to the stopped pong: ps says %s" % row)
    migrate(lab, pair["pong"], 2)
    time.sleep(0.5)
    still_running(lab, pair, (FORWARD, RECEIVE_LOCATION), "when pong, stopped, moved to machine 2")
    row = processes(lab).get(pair["ping"])
    require(row and row["state"] == "calling",
            "ping's CALL should still wait, at pong on machine 2 now: ps says %s" % row)
    lab.kill(2)
    m = ping_ended(lab, pair, (FORWARD, RECEIVE_LOCATION), timeout=12,
                   waiting_for="ping's CALL, taken by pong to machine 2, should end with E_NODE once machine 2 "
                               "was killed, but still waits (%s)" % duty)
    require(m.group(4) == "E_NODE", "ping's CALL to pong, lost with machine 2, ended with %s, not E_NODE"
            % (m.group(4) or "an answer"))


@test(5, "link update: a local CALL queued at a process that moves waits on its new machine, and fails with "
         "E_NODE when it does")
def local_call_follows(lab):
    """ping stays on machine 1 with pong, so that its CALLs are local: they
    wait on no machine. pong moves to 2 with ping's CALL in its queue, and
    machine 2's kernel tells machine 1 that the CALL's answer will come from
    2 (an RM_LOCATION for ping); machine 1 must make ping's CALL wait on
    machine 2, so that machine 2's failure ends it."""
    pair = ping_pong(lab, 100000, 10, ping_to=None)
    queued_call_ends_with_e_node(lab, pair, "machine 2's link update came to machine 1, where ping waits in a "
                                 "local CALL: its wait must then depend on machine 2; receive_location's TODO, "
                                 "\"if it waits in a CALL that was local\": remote_call_waits_on")


@test(5, "link update: the news follows a caller that has moved, and its CALL fails with E_NODE when the "
         "callee's machine does")
def news_follows_caller(lab):
    """ping has moved from machine 1, its home, to 0, and CALLs pong on 1.
    pong moves to 2 with ping's CALL in its queue; machine 2's kernel knows
    nothing of ping and tells ping's home, machine 1, that the CALL's answer
    will come from 2. Machine 1 must send the update on to ping on machine
    0, whose wait must then depend on machine 2, so that machine 2's
    failure ends it."""
    pair = ping_pong(lab, 100000, 10)
    queued_call_ends_with_e_node(lab, pair, "machine 2's link update came to machine 1, ping's home, which ping "
                                 "had left: it must follow ping to machine 0; receive_location's TODO, \"if the "
                                 "waiter is not here\": forward")
