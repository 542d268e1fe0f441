"""Process migration (DEMOS/MP; docs/migration.md): `migrate PID @K` moves a
running process to machine K, where it goes on with its id, links, queued
messages and metering. One side of a long ping-pong, and then the other, is
moved in mid-stream again and again, and every exchange is done exactly once
(ping checks every answer, pong every request's order); a process goes round
three machines and home with its memory and registers intact (stopped,
moved and resumed on the way); a CALL it
waits in (a sleep at the timer server) is answered where it has gone; SENDs,
CALLs and MOVEDATAs under way on both sides of nettest's stress finish; the
file system's buffer manager, directory manager and request interpreter
move while fsseq and fsrand run on three machines, every operation right
and the disk clean after halt; the other system processes and device
holders are refused, each with its reason; moves over a wire that
loses and duplicates frames; a destination killed during a move (the process
stays, or is reported lost, never both), and one that never answers (the
process stays); a source killed after a move (the process lives on); and the metering of a moving process (one stream, numbered
on, with a MIGRATE record for each move), which dpm places on each machine it ran on."""
import os
import re
import shutil
import subprocess
import tempfile
import time

import traceviewer
from cluster import Cluster
from harness import ROOT, fnv1a, make_image

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
DPM = os.path.join(ROOT, "build", "tools", "dpm")
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
workdir = tempfile.mkdtemp(prefix="dm-migrate-")
shared = None
clusters = []


def teardown():
    for c in clusters:
        c.close()
    shutil.rmtree(workdir, ignore_errors=True)


def three():
    """The 3-node cluster the plain tests share."""
    global shared
    if shared is None:
        shared = Cluster(3)
        clusters.append(shared)
        shared.wait_joined()
    return shared


def own(*args, **kwargs):
    """A cluster of a test's own (closed at teardown, or by the test)."""
    c = Cluster(*args, **kwargs)
    clusters.append(c)
    c.wait_joined()
    return c


def ps_rows(node):
    """pid -> (name, state, machine it runs on, machine that created it) from `ps`."""
    rows = {}
    for line in node.command("ps", timeout=60).splitlines():
        f = line.split()
        if len(f) >= 8 and re.fullmatch(r"\d+\.\d+\.\d+", f[0]):    # not a kernel's note
            rows[f[0]] = (f[1], f[2], int(f[3]), int(f[7]))
    return rows


def wait_listed(node, name, timeout=30):
    """The pid of the first process called `name` that ps lists, once it does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid, row in ps_rows(node).items():
            if row[0] == name:
                return pid
        time.sleep(0.2)
    raise AssertionError("no %s in ps" % name)


def migrate(node, pid, machine, timeout=60):
    """`migrate PID @K`, which says nothing when it has worked; then ps
    lists the process on K, created where its pid says."""
    out = node.command("migrate %s @%d" % (pid, machine), timeout=timeout)
    assert out == "", out
    rows = ps_rows(node)
    assert pid in rows and rows[pid][2] == machine and rows[pid][3] == int(pid.split(".")[0]), (pid, rows)


def ping_pong_moved_about(node, moves, rounds=1500, pause_ms=2):
    """ping on machine 1 with its pong, `rounds` rounds with a pause; each of
    `moves` ("ping" or "pong", machine) moves one side in mid-stream; then
    every exchange must have been done once: ping saw every answer, pong
    every request in order, once."""
    since = len(node.output)
    out = node.command("run @1 ping %d %d &" % (rounds, pause_ms))
    ping = re.search(r"\[(1\.\d+\.\d+)\] ping", out).group(1)
    pids = {"ping": ping, "pong": wait_listed(node, "pong")}
    for side, machine in moves:
        migrate(node, pids[side], machine)
        time.sleep(0.3)
    m = node.expect(r"ping: (\d+) round trips with pong (\S+), all answered\n", 180, since)
    assert int(m.group(1)) == rounds and m.group(2) == pids["pong"], m.group(0)
    assert "pong: ping" not in node.output[since:], node.output[since:][-2000:]
    assert "went wrong" not in node.output[since:], node.output[since:][-2000:]
    return pids


def test_one_side_of_a_ping_pong_moved_in_mid_stream_every_exchange_done_once():
    n = three().node(0)
    ping_pong_moved_about(n, [("pong", 2), ("pong", 0), ("ping", 2), ("pong", 2), ("ping", 0), ("pong", 1),
                              ("ping", 1)])


def test_a_process_goes_round_three_machines_and_home_with_its_memory_and_registers():
    """migtest keeps 4 MiB and a floating-point sum: A (1) -> B (2) -> C (0)
    -> A; ps says where it runs and that machine 1 created it; stop and
    resume reach it where it is."""
    n = three().node(0)
    since = len(n.output)
    out = n.command("run @1 migtest 400 10 4096 &")
    pid = re.search(r"\[(1\.\d+\.\d+)\] migtest", out).group(1)
    time.sleep(0.5)
    for machine in (2, 0, 1):
        migrate(n, pid, machine)
        time.sleep(0.3)
        if machine == 0:      # away from home: the requests about it go where it is
            assert n.command("stop %s" % pid) == ""
            assert ps_rows(n)[pid][1] == "stopped"
            migrate(n, pid, 2)
            assert ps_rows(n)[pid][1] == "stopped", "it stays stopped where it went"
            migrate(n, pid, 0)
            assert n.command("resume %s" % pid) == ""
    m = n.expect(r"migtest %s: (\d+) rounds on machines ([\d ]+), memory and registers intact\n" % re.escape(pid),
                 120, since)
    assert m.group(1) == "400" and m.group(2) == "1 2 0 1", m.group(0)   # stopped, it ran nowhere else


def test_a_call_waiting_in_a_server_is_answered_where_its_caller_went():
    """migtest sleeps 2 s a round: a CALL to the timer server (machine 0),
    which answers it after the pause. Moved during the sleep, it gets the
    answer on machine 2, and again back on 1."""
    n = three().node(0)
    since = len(n.output)
    out = n.command("run @1 migtest 3 2000 16 &")
    pid = re.search(r"\[(1\.\d+\.\d+)\] migtest", out).group(1)
    time.sleep(0.5)
    assert ps_rows(n)[pid][1] == "calling"
    migrate(n, pid, 2)
    time.sleep(2)
    assert ps_rows(n)[pid][1] == "calling"
    migrate(n, pid, 1)
    m = n.expect(r"migtest %s: 3 rounds on machines ([\d ]+), memory and registers intact\n" % re.escape(pid),
                 30, since)
    assert m.group(1) == "1 2 1", m.group(0)


def test_sends_calls_and_movedata_under_way_on_either_side_finish():
    """nettest stress between a client on machine 1 and its server on 2:
    SENDs whose order and bytes the server checks, CALLs whose answers the
    client checks, then MiBs moved there and back by MOVEDATA and checked.
    The client moves in the middle of the messages, the server in the
    middle of the moves, to the client's machine (the pieces on their way
    are done there, and their answers too), and each again: everything
    arrives once, intact."""
    n = three().node(0)
    since = len(n.output)
    out = n.command("run @1 nettest stress 2 6000 64 &")
    client = re.search(r"\[(1\.\d+\.\d+)\] nettest", out).group(1)
    server = []
    deadline = time.monotonic() + 30
    while not server and time.monotonic() < deadline:
        server = [pid for pid, row in ps_rows(n).items() if row[0] == "nettest" and pid != client]
    server = server[0]
    migrate(n, client, 0)
    # Its next lines come once the messages are done; the moves take long after.
    n.expect(r"ok stress\.calls_answered_intact\n", 120, since)
    time.sleep(0.3)
    migrate(n, server, 0)
    migrate(n, client, 2)     # at once: on one machine, the moves go fast
    time.sleep(0.3)
    migrate(n, server, 1)
    m = n.expect(r"nettest: (\d+) passed, (\d+) failed\n", 180, since)
    assert m.group(2) == "0", n.output[since:][-2000:]
    for check in ("sends_in_order_intact", "calls_answered_intact", "movedata_intact"):
        assert "ok stress.%s\n" % check in n.output[since:], n.output[since:][-2000:]


def test_system_processes_and_device_holders_stay_where_they_are():
    """The system's processes that hold a link to a kernel (the process
    manager's process-control links, the console's UART, the timer's clock,
    the disk interface's disk) stay with it; the switchboard and the shell
    stay too; a filter with its trace disk stays; and the usual refusals."""
    c = own(2, trace_disks=os.path.join(workdir, "refusals"))
    n = c.node(0)
    rows = ps_rows(n)
    for name in ("pm", "console", "timer", "di"):
        pid = [p for p, row in rows.items() if row[0] == name][0]
        out = n.command("migrate %s @1" % pid)
        assert out == "migrate: %s: it holds a device link: it stays with its device\n" % pid, (name, out)
    for name in ("switchboard", "shell"):
        pid = [p for p, row in rows.items() if row[0] == name][0]
        out = n.command("migrate %s @1" % pid)
        assert out == "migrate: %s: a system process: it stays where it is\n" % pid, (name, out)
    assert all(row[2] == 0 for row in ps_rows(n).values() if row[3] == 0), "none of them moved"
    out = n.command("filter start @1 u - -", timeout=60)
    filter_pid = re.search(r"\[(1\.\d+\.\d+)\] filter u", out).group(1)
    out = n.command("migrate %s @0" % filter_pid)
    assert out == "migrate: %s: it holds a device link: it stays with its device\n" % filter_pid, out
    assert ps_rows(n)[filter_pid][2] == 1
    out = n.command("run @1 hello 30 &")
    hello = re.search(r"\[(1\.\d+\.\d+)\] hello", out).group(1)
    if "hello from process %s" % hello not in out:     # its greeting, before the next echo
        n.expect(r"hello from process %s on machine 1\n" % re.escape(hello), 30)
    for command, said in (("migrate %s @1" % hello, "migrate: %s: it runs there already\n" % hello),
                          ("migrate %s @5" % hello,
                           "migrate: @5: the cluster has no machine 5 (its machines are 0 to 1)\n"),
                          ("migrate 1.99.1 @0", "migrate: 1.99.1: no such process\n"),
                          ("migrate %s" % hello, "migrate: usage: migrate PID @K (PID as ps shows it, e.g. 1.7.1)\n"),
                          ):
        out = n.command(command)
        assert out == said, (command, out)
    migrate(n, hello, 0)       # a moved process is ended where it is
    assert n.command("kill %s" % hello) == ""
    time.sleep(0.2)
    assert hello not in ps_rows(n)


def test_the_file_systems_processes_move_while_their_users_run():
    """The buffer manager goes round three machines and home, and the
    directory manager and the request interpreter away and back, while
    fsseq runs on machines 1 and 0 and fsrand on 2: every operation is
    right (each checks every byte it reads back), the file holds what
    fsrand says. Then the buffer manager moves away again, a file is
    written, and halt has it write its changed blocks back from there:
    `dmfs check` finds the disk clean, the files as written."""
    image = make_image(os.path.join(workdir, "fsmoved.img"), 32)
    c = own(3, disk=image)
    n = c.node(0)
    rows = ps_rows(n)
    fs = {name: [p for p, row in rows.items() if row[0] == name][0] for name in ("bm", "dm", "ri")}
    since = len(n.output)
    n.command("run @1 fsseq /s 512 30 &")
    n.command("run @2 fsrand /r 512 4000 &")
    n.command("run fsseq /t 256 30 &")
    time.sleep(1)
    for machine in (1, 2, 0, 1, 0):
        migrate(n, fs["bm"], machine)
        time.sleep(0.5)
    migrate(n, fs["dm"], 2)
    migrate(n, fs["ri"], 1)
    time.sleep(1)
    migrate(n, fs["dm"], 0)
    migrate(n, fs["ri"], 0)
    done = {}
    for _ in range(3):
        m = n.expect(r"(fsseq|fsrand) (/\w): (\S+)[^\n]*\n", 300, since)
        done[m.group(2)] = m.group(0)
        since = m.end()
    assert sorted(done) == ["/r", "/s", "/t"], done
    assert all(": ok " in line for line in done.values()), done
    fnv = re.search(r"fnv=([0-9a-f]+)", done["/r"]).group(1)
    migrate(n, fs["bm"], 2)
    assert n.command("echo written with bm away > /away") == ""
    n.type("halt\n")
    n.expect(r"machine 0: halted\n", timeout=60)
    c.close()
    check = subprocess.run([DMFS, "check", image], capture_output=True, text=True)
    assert check.returncode == 0 and ": clean:" in check.stdout, check.stdout + check.stderr
    got = subprocess.run([DMFS, "get", image, "/r"], check=True, capture_output=True).stdout
    assert fnv1a(got) == fnv, (fnv1a(got), fnv)
    got = subprocess.run([DMFS, "get", image, "/away"], check=True, capture_output=True).stdout
    assert got == b"written with bm away\n", got


def test_moves_over_a_wire_that_loses_and_duplicates_frames():
    c = own(3, faults="loss=10 dup=5")
    n = c.node(0)
    ping_pong_moved_about(n, [("pong", 2), ("ping", 0), ("pong", 1), ("ping", 1)], rounds=600)
    since = len(n.output)
    out = n.command("run @1 migtest 200 10 2048 &")
    pid = re.search(r"\[(1\.\d+\.\d+)\] migtest", out).group(1)
    time.sleep(0.5)
    for machine in (2, 0, 1):
        migrate(n, pid, machine, timeout=120)
    m = n.expect(r"migtest %s: 200 rounds on machines ([\d ]+), memory and registers intact\n" % re.escape(pid),
                 180, since)
    assert m.group(1) == "1 2 0 1", m.group(0)


def test_a_destination_killed_during_the_move_leaves_the_process_in_one_place_or_none():
    """migtest with 16 MiB moves from 1 to 2, and machine 2 is killed as the
    move begins: either the move had not begun and the process runs on at 1,
    or it had left and is lost (ended with DM_EXIT_LOST); never both, never
    listed twice."""
    c = own(3)
    n = c.node(0)
    since = len(n.output)
    out = n.command("run @1 migtest 300 10 16384 &", timeout=60)
    pid = re.search(r"\[(1\.\d+\.\d+)\] migtest", out).group(1)
    time.sleep(1)
    n.type("migrate %s @2\n" % pid)
    time.sleep(0.05)
    c.kill(2)
    m = n.expect(r"(?s)migrate %s @2\n(.*?)\$ " % re.escape(pid), 60, since)
    said = re.sub(r"(?m)^machine \d+: [^\n]*\n", "", m.group(1))
    assert said in ("", "migrate: %s: that machine is not up, or went down during the move\n" % pid), said
    listed = [line for line in n.command("ps", timeout=60).splitlines() if line.startswith(pid + " ")]
    assert len(listed) <= 1, listed
    console1 = c.node(1).printed()
    lost = "process %s (migtest) is lost: machine 2, to which it was moving, went down" % pid in console1
    if listed:
        assert not lost and listed[0].split()[3] == "1", (listed, console1[-1000:])
        m = n.expect(r"migtest %s: 300 rounds on machines ([\d ]+), memory and registers intact\n" %
                     re.escape(pid), 120, since)
        assert m.group(1) == "1", m.group(0)
    else:
        assert lost, console1[-2000:]
        assert n.command("kill %s" % pid) == "kill: %s: no such process\n" % pid


def test_a_destination_that_does_not_answer_the_request_leaves_the_process_where_it_was():
    """Machine 2 hears nothing from machine 1 (net.deaf): the request to take
    migtest reaches it, and no answer comes; machine 1 takes 2 to be down,
    and migtest runs on where it was, to the end. Then machine 2 is killed."""
    c = Cluster(3, bootargs_per_node=lambda k: "net.deaf.machine=1 net.deaf.ms=600000" if k == 2 else "")
    clusters.append(c)
    c.wait_joined(pairs=False)
    n = c.node(0)
    since = len(n.output)
    out = n.command("run @1 migtest 300 20 1024 &")
    pid = re.search(r"\[(1\.\d+\.\d+)\] migtest", out).group(1)
    time.sleep(0.5)
    out = re.sub(r"(?m)^machine \d+: [^\n]*\n", "", n.command("migrate %s @2" % pid, timeout=60))
    assert out == "migrate: %s: that machine is not up, or went down during the move\n" % pid, out
    c.kill(2)
    rows = ps_rows(n)
    assert rows[pid][2] == 1, rows
    m = n.expect(r"migtest %s: 300 rounds on machines ([\d ]+), memory and registers intact\n" % re.escape(pid),
                 120, since)
    assert m.group(1) == "1", m.group(0)


def test_a_source_killed_after_the_move_leaves_the_process_running():
    """ping and pong, created on machine 1, move to 0 and 2; once they have
    talked a while (each kernel has learned where the other is), machine 1
    -- where both were created and ran -- is killed: they go on to the end."""
    c = own(3)
    n = c.node(0)
    since = len(n.output)
    out = n.command("run @1 ping 1500 2 &")
    ping = re.search(r"\[(1\.\d+\.\d+)\] ping", out).group(1)
    pong = wait_listed(n, "pong")
    migrate(n, pong, 2)
    migrate(n, ping, 0)
    time.sleep(1.5)
    c.kill(1)
    m = n.expect(r"ping: (\d+) round trips with pong (\S+), all answered\n", 180, since)
    assert m.group(1) == "1500" and m.group(2) == pong, m.group(0)
    assert "pong: ping" not in n.output[since:], n.output[since:][-2000:]


def call_queued_at_pong_ends_with_e_node(ping_moves_to=None):
    """ping (machine 1) CALLs pong, which is stopped there, so that the CALL
    waits in pong's queue; pong moves to machine 2 and machine 2 is killed:
    ping's CALL must end with E_NODE once machine 2 is taken to be down
    (about 4 s), not wait for ever. With ping_moves_to, ping has first moved
    away from its home to that machine, and the update that its wait depends
    on machine 2 must follow it there from its home."""
    c = own(3)
    n = c.node(0)
    since = len(n.output)
    out = n.command("run @1 ping 100000 10 &")
    ping = re.search(r"\[(1\.\d+\.\d+)\] ping", out).group(1)
    pong = wait_listed(n, "pong")
    if ping_moves_to is not None:
        migrate(n, ping, ping_moves_to)
    time.sleep(0.3)
    assert n.command("stop %s" % pong) == ""
    time.sleep(0.3)
    assert ps_rows(n)[ping][1] == "calling", ps_rows(n)
    migrate(n, pong, 2)
    time.sleep(0.5)
    assert ps_rows(n)[ping][1] == "calling", "ping's CALL waits at pong, on machine 2 now"
    c.kill(2)
    m = n.expect(r"ping: round \d+ went wrong \((\S+)\)\n", 15, since)
    assert m.group(1) == "E_NODE", m.group(0)
    deadline = time.monotonic() + 10              # and it ends: nothing hangs
    while ping in ps_rows(n):
        assert time.monotonic() < deadline, ps_rows(n)
        time.sleep(0.2)


def test_a_call_queued_at_a_process_that_moves_ends_with_e_node_when_its_new_machine_fails():
    """The caller was on the process's machine before the move: its CALL
    was local, and becomes a wait on the machine the process moved to."""
    call_queued_at_pong_ends_with_e_node()


def test_a_moved_callers_wait_follows_the_process_it_calls_and_ends_with_e_node():
    """The caller has moved away from its home (to machine 0): the news that
    its wait depends on machine 2 goes to its home, and follows it."""
    call_queued_at_pong_ends_with_e_node(ping_moves_to=0)


def test_a_moved_process_stays_metered_into_the_same_filter():
    """ping metered into a filter on machine 0 (and pong with it, its child):
    each moves, pong twice. Each stream is one, numbered on without a gap or
    a loss, and holds a MIGRATE record for each move, written on the machine
    it arrived at, saying from where, to where, the move's number and how long
    it was out of execution."""
    traces = os.path.join(workdir, "metered")
    c = own(3, trace_disks=traces)
    n = c.node(0)
    n.command("filter start t - -", timeout=60)
    since = len(n.output)
    out = n.command("meter -F t run @1 ping 300 5 &")
    ping = re.search(r"\[(1\.\d+\.\d+)\] ping", out).group(1)
    pong = wait_listed(n, "pong")
    migrate(n, pong, 2)
    time.sleep(0.3)
    migrate(n, ping, 0)
    time.sleep(0.3)
    migrate(n, pong, 1)
    n.expect(r"ping: 300 round trips with pong \S+, all answered\n", 120, since)
    stats = n.command("filter stats t")
    assert re.search(r" 0 lost,", stats), stats
    n.type("halt\n")
    n.expect(r"machine 0: halted\n", timeout=60)
    c.close()
    log = os.path.join(workdir, "metered.log")
    subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace0.img"), log], check=True, capture_output=True)
    dump = subprocess.run([DMTRACE, "dump", log], check=True, capture_output=True, text=True).stdout
    assert re.search(r"^\d+ records, 0 lost$", dump, re.M), dump[-500:]
    streams, moves = {}, {}
    for line in dump.splitlines():
        words = line.split()
        if not words or "=" not in line:
            continue
        f = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        pid = shown(int(f["pid"], 0))
        streams.setdefault(pid, []).append(int(f["sequence"]))
        if words[0] == "MIGRATE":
            moves.setdefault(pid, []).append((int(f["machine"]), int(f["fromMachine"]), int(f["toMachine"]),
                                              int(f["moves"]), int(f["took"])))
    assert sorted(streams) == sorted((ping, pong)), streams.keys()
    for pid, seqs in streams.items():
        assert seqs == list(range(len(seqs))), (pid, seqs[:20])
    assert [m[:4] for m in moves[pong]] == [(2, 1, 2, 1), (1, 2, 1, 2)], moves
    assert [m[:4] for m in moves[ping]] == [(0, 1, 0, 1)], moves
    assert all(0 < m[4] < 10 ** 9 for ms in moves.values() for m in ms), moves
    analyzed_where_it_ran(log, dump, ping, pong, moves)


def dpm(*args):
    done = subprocess.run([DPM, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", (args, done.stderr)
    return done.stdout


def analyzed_where_it_ran(log, dump, ping, pong, moves):
    """dpm on the metered ping-pong's log: each process on the machines it
    ran on in turn (ping 1>0, pong 1>2>1), each move listed with where it
    went and what it took; each machine's records as the records say; each
    message local or remote as its SEND's machine and its arrival's (its
    MESSAGEQUEUED's, or its RECEIVE's when the receiver waited) say; the
    placement, the events on the corrected clocks, the report's migrations
    and its space-time diagram's arrows for the moves, and the Perfetto
    export, as a real viewer's parser loads it (scripts/traceviewer.py), with
    a thread for each process on each machine and an arrow per message."""
    records = []
    for line in dump.splitlines():
        words = line.split()
        if words and "=" in line:
            records.append((words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)))
    out = dpm("stats", log)
    for pid, machines in ((ping, "1>0"), (pong, "1>2>1")):
        assert re.search(r"^\s+\[\d+\]\s+\S+ %s\s+%s\s" % (re.escape(pid), re.escape(machines)), out, re.M), out
    listed = re.findall(r"^  \S+ (\d+\.\d+\.\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+(\d+)\s+\d+\s+\d+$",
                        out.split("\nMigrations (3:")[1], re.M)
    want = sorted((pid, str(m[3]), str(m[1]), str(m[2]), str(m[4])) for pid, ms in moves.items() for m in ms)
    assert sorted(listed) == want, (listed, want)
    per_machine = {}
    for _, f in records:
        per_machine[f["machine"]] = per_machine.get(f["machine"], 0) + 1
    table = out.split("\nMachines (")[1].split("\n\n")[0].splitlines()[3:]
    assert {r.split()[0]: int(r.split()[2]) for r in table} == per_machine, (table, per_machine)
    arrived = {}
    for kind, f in records:
        if kind == "MESSAGEQUEUED" or (kind == "RECEIVE" and f["messageId"] not in arrived):
            arrived.setdefault(f["messageId"], f["machine"])
    def receiver_machine(f):       # where the message arrived; for a receiver outside the trace, its home
        return arrived.get(f["messageId"], str(int(f["toTask"], 0) >> 56))
    sends = [f for kind, f in records if kind == "SEND" and f["status"] == "0"]
    local = [f for f in sends if f["machine"] == receiver_machine(f)]
    between = [f for f in sends if f["messageId"] in arrived and f not in local]
    assert len(between) > 100 and len(local) > 100, (len(between), len(local))   # before and after the moves
    assert re.search(r"^  local:  %d messages \(.*\), %d bytes \(" % (len(local), sum(int(f["size"]) for f in local)),
                     out, re.M), out
    placement = dpm("parallelism", log)
    for pid, machines in ((ping, "1>0"), (pong, "1>2>1")):
        assert re.search(r"^  \S+ %s\s+%s\s+%s$" % (re.escape(pid), re.escape(machines), re.escape(machines)),
                         placement, re.M), placement
    events = dpm("clocks", "--events", log)
    migrates = re.findall(r"^\s+-?\d+\s+(\d+)\s+\d+\s+\S+ (\S+)\s+MIGRATE from machine (\d+)$", events, re.M)
    assert sorted(migrates) == sorted((str(m[0]), pid, str(m[1])) for pid, ms in moves.items() for m in ms), migrates
    assert "moves: 3 of a process from one machine to another" in events, events
    page = os.path.join(workdir, "metered.html")
    dpm("report", "-o", page, log)
    with open(page) as f:
        html = f.read()
    assert len(re.findall(r"<tr><td class=\"name\">\S+ \d+\.\d+\.\d+</td><td>\d</td>",
                          html.split('id="migrations-table"')[1].split("</table>")[0])) == 3
    drawn = re.findall(r"(\d+\.\d+\.\d+) moved from machine (\d+) to machine (\d+) \(move (\d+)\)", html)
    made = {(pid, str(m[1]), str(m[2]), str(m[3])) for pid, ms in moves.items() for m in ms}
    assert drawn and set(drawn) <= made, (drawn, made)   # those within the diagram's first 200 messages
    export = os.path.join(workdir, "metered.json")
    done = subprocess.run([DPM, "export", "--perfetto", export, log], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr       # it may say that the clocks drift
    assert traceviewer.check(log, export) == []
    threads = sorted((t["pid"] - 1, t["name"].split()[-1]) for t in traceviewer.load(export)["threads"])
    assert threads == sorted([(1, ping), (0, ping), (1, pong), (2, pong)]), threads   # pid: machine + 1


def shown(pid):
    """A pid as a record carries it, as ps shows it: machine.slot.generation."""
    return "%d.%d.%d" % (pid >> 56, (pid >> 20) & 0xfff, pid & 0xfffff)
