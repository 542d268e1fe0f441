"""The feedback scheduler (balance/; docs/migration.md, "The scheduler"):
fed by a filter's summaries of the metered processes' messages and by
samples of the process list, it moves processes with the process manager.
Its rule on the host (tests/balance_test.c). In a cluster: a ping-pong
placed on two machines is brought together, and not moved again in the
intervals after; tsp's servers crowding one machine are spread over the
idle ones; the file system's request interpreter and buffer manager,
placed away from the disk and from their users, are brought to the disk
interface while fsseq runs, every byte right and the disk clean after
halt (and a filter that keeps no log leaves its machine's trace disk to
another); pairs that end while it decides (one ends as it is to move, or in
the interval its traffic was seen in) leave it working; it stops when told,
with its filter, and one runs at a time."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from cluster import Cluster
from harness import ROOT, fnv1a, make_image

BALANCE_TEST = os.path.join(ROOT, "build", "tools", "balance_test")
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
MOVE = r"balance: move (.*?) (\d+) -> (\d+): ([^\n]*)\n"
workdir = tempfile.mkdtemp(prefix="dm-balance-")
clusters = []


def teardown():
    for c in clusters:
        c.close()
    shutil.rmtree(workdir, ignore_errors=True)


def own(*args, **kwargs):
    c = Cluster(*args, **kwargs)
    clusters.append(c)
    c.wait_joined()
    return c


def ps_rows(node):
    """pid -> (name, state, machine it runs on) from `ps`."""
    rows = {}
    for line in node.command("ps", timeout=60).splitlines():
        f = line.split()
        if len(f) >= 8 and re.fullmatch(r"\d+\.\d+\.\d+", f[0]):
            rows[f[0]] = (f[1], f[2], int(f[3]))
    return rows


def pid_of(node, name, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid, row in ps_rows(node).items():
            if row[0] == name:
                return pid
        time.sleep(0.1)
    raise AssertionError("no %s in ps" % name)


def moves_counted(node):
    """The moves `balance` says it made, and its intervals."""
    out = node.command("balance")
    m = re.search(r"; (\d+) intervals, (\d+) moves, (\d+) refused\n", out)
    assert m, out
    return int(m.group(2)), int(m.group(1))


def expect_or_show(c, pattern, timeout, since):
    """node 0's expect; when it times out, what every node printed (after
    a Ctrl-T: each kernel's processes and what they wait for) says why."""
    n = c.node(0)
    try:
        return n.expect(pattern, timeout, since)
    except Exception:
        for k in range(c.count):
            c.node(k).type("\x14")
        time.sleep(2)
        printed = "".join("---- node %d:\n%s\n" % (k, c.node(k).output[-6000:]) for k in range(c.count))
        raise AssertionError("no %r within %d s; since then node 0 printed:\n%s\n%s" %
                             (pattern, timeout, n.output[since:][-4000:], printed))


def start(node, options):
    out = node.command("balance start " + options, timeout=60)
    assert re.search(r"balance: \S+ on machine 0 reads filter \S+ every \d+ ms; a message between machines costs "
                     r"\d+x one within a machine\n", out), out
    return out


def test_the_rule_on_the_host():
    run = subprocess.run([BALANCE_TEST], capture_output=True, text=True)
    assert run.returncode == 0 and re.match(r"balance_test: \d+ checks passed", run.stdout), run.stdout + run.stderr


def test_a_ping_pong_placed_apart_is_brought_together_and_not_moved_again():
    """ping on machine 1, its pong moved by hand to 2: the scheduler moves
    one to the other, saying how many messages a second they exchange
    and what a message between machines costs; for two intervals after
    (and its residence) it moves nothing. Then pairs that end as it
    decides: a ping-pong placed apart and ending within about a second,
    again and again; the scheduler goes on, and brings together the last,
    long one."""
    c = own(3)
    n = c.node(0)
    start(n, "-i 500 -r 1500")
    since = len(n.output)
    n.command("meter -F balance run @1 ping 400000 &")
    ping, pong = pid_of(n, "ping"), pid_of(n, "pong")
    assert n.command("migrate %s @2" % pong) == ""
    m = n.expect(MOVE, 20, since)
    assert re.fullmatch(r"\d+\.\d+\.\d+ \((ping|pong)\)", m.group(1)), m.group(0)
    assert (m.group(2), m.group(3)) in (("1", "2"), ("2", "1")), m.group(0)
    assert re.match(r"[\d,]+ messages/s with \d+\.\d+\.\d+ \((ping|pong)\) on machine %s, a message between machines "
                    r"costs \d+x one within a machine \(saves about \d+ ms a second\)" % m.group(3), m.group(4)), \
        m.group(0)
    rows = ps_rows(n)
    assert rows[ping][2] == rows[pong][2] == int(m.group(3)), rows
    moved, intervals = moves_counted(n)
    time.sleep(2.5)                         # the residence, and more than two intervals
    again, later = moves_counted(n)
    assert later >= intervals + 2 and again == moved, (moved, intervals, again, later)
    assert len(re.findall(MOVE, n.output[since:])) == 1, n.output[since:]
    rows = ps_rows(n)
    assert rows[ping][2] == rows[pong][2], rows
    assert n.command("kill %s" % ping) == "" and n.command("kill %s" % pong) == ""

    # Pairs that end as it decides: each placed apart, each over in a few
    # seconds, one after the other.
    for rounds in (3000, 6000, 4000, 5000):
        at = len(n.output)
        n.command("meter -F balance run @1 ping %d &" % rounds)
        n.command("migrate %s @2" % pid_of(n, "pong", timeout=10))
        expect_or_show(c, r"ping: %d round trips with pong \S+, all answered\n" % rounds, 60, at)
        time.sleep(0.3)
    said = n.output[since:]
    for line in re.findall(r"(?m)^balance: [^\n]*$", said):
        assert re.match(r"balance: (move |\S+ \((ping|pong)\) ended before it could move$|\S+ \((ping|pong)\) stays on "
                        r"machine \d: it did not come to rest)", line), line
    since = len(n.output)
    n.command("meter -F balance run @2 ping 400000 &")
    ping, pong = pid_of(n, "ping"), pid_of(n, "pong")
    n.command("migrate %s @1" % ping)
    n.expect(MOVE, 20, since)
    rows = ps_rows(n)
    assert rows[ping][2] == rows[pong][2], rows
    n.command("kill %s" % ping)
    n.command("kill %s" % pong)


def test_servers_crowding_one_machine_are_spread_over_the_idle_ones():
    """tsp's four servers all on machine 1 of four: the scheduler moves
    three of them, one to each other machine, saying what the machines'
    processes want of their CPUs; the answer is tsp's optimum."""
    c = own(4)
    n = c.node(0)
    start(n, "-i 500 -r 3000")
    since = len(n.output)
    out = n.command("meter -F balance run tsp -b length 14 4 1,1,1,1", timeout=120)
    assert "tsp: optimum" in out, out
    moves = re.findall(MOVE, n.output[since:])
    servers = [mv for mv in moves if "(tspserver)" in mv[0]]
    assert len(servers) >= 3, n.output[since:]
    assert sorted(mv[2] for mv in servers[:3]) == ["0", "2", "3"], servers
    for who, source, dest, why in servers[:3]:
        assert source == "1", servers
        assert re.match(r"machine 1's processes want \d\.\d of its CPU, machine %s's \d\.\d; it wants \d\.\d\d" % dest,
                        why), why
    assert n.command("balance stop", timeout=60) != ""


def test_the_file_systems_processes_are_brought_to_the_disk_and_their_users():
    """The request interpreter on machine 1, the buffer manager on 2, the
    users on 3, the disk interface on 0 with the disk; the file system is
    metered from boot into the filter fstrace, which the scheduler reads,
    and so are the users. It brings them to the disk interface, which it
    cannot move (it says so, once), while fsseq and fsrand run: each
    checks every byte, the disk is clean after halt."""
    image = make_image(os.path.join(workdir, "fs.img"), 32)
    c = own(4, disk=image, place="ri=1 bm=2", trace_disks=os.path.join(workdir, "fstraces"), meter_fs=0)
    n = c.node(0)
    # A filter that keeps no log is lent no trace disk: another filter there still gets it.
    out = n.command("filter start -n @1 nolog - -", timeout=60)
    assert "filter nolog: keeping no log: what it selects is only forwarded\n" in out, out
    out = n.command("filter start @1 logs - -", timeout=60)
    assert "filter logs: logging to trace disk" in out, out
    for name in ("nolog", "logs"):
        n.command("filter stop %s" % name, timeout=60)
    start(n, "-F fstrace -i 500 -r 2000")
    since = len(n.output)
    n.command("meter -F fstrace run @3 fsseq /s 256 30 &")
    n.command("meter -F fstrace run @3 fsrand /r 256 4000 &")
    done, at = {}, since
    for _ in range(2):
        m = n.expect(r"(fsseq|fsrand) (/\w): (\S+)[^\n]*\n", 300, at)
        done[m.group(2)] = m.group(0)
        at = m.end()
    assert all(": ok " in line for line in done.values()), done
    said = n.output[since:at]
    assert len(re.findall(r"balance: \S+ \(di\) stays on machine 0: it holds a device link; not tried again\n",
                          said)) <= 1, said
    rows = ps_rows(n)
    where = {row[0]: row[2] for row in rows.values()}
    assert where["ri"] == where["bm"] == where["di"] == 0, (rows, said)
    moved = " ".join(mv[0] for mv in re.findall(MOVE, said))
    assert "(ri)" in moved and "(bm)" in moved, said
    fnv = re.search(r"fnv=([0-9a-f]+)", done["/r"]).group(1)
    n.command("balance stop", timeout=60)
    n.type("halt\n")
    n.expect(r"machine 0: halted\n", timeout=60)
    c.close()
    check = subprocess.run([DMFS, "check", image], capture_output=True, text=True)
    assert check.returncode == 0 and ": clean:" in check.stdout, check.stdout + check.stderr
    got = subprocess.run([DMFS, "get", image, "/r"], check=True, capture_output=True).stdout
    assert fnv1a(got) == fnv


def test_it_stops_when_told_with_its_filter_and_one_runs_at_a_time():
    c = own(2)
    n = c.node(0)
    assert n.command("balance") == "balance: no scheduler runs\n"
    start(n, "-i 300")
    out = n.command("balance start")
    assert re.fullmatch(r"balance: a scheduler runs already \((\S+)\)\n\[\S+\] balance: exit status 1\n", out), out
    scheduler = re.search(r"\((\S+)\)", out).group(1)
    out = n.command("balance")
    assert out.startswith("balance %s on machine 0: filter balance, every 300 ms; " % scheduler), out
    assert "a move must save 2% of a second; a process it moved stays at least 5000 ms where it went\n" in out, out
    assert out.endswith("moves decided (the last 8, at this machine's clock): none\n"), out
    out = n.command("balance stop", timeout=60)
    assert re.fullmatch(r"filter balance: stopped: \d+ records selected, 0 lost, \d+ summaries forwarded\n"
                        r"balance: stopped after \d+ intervals: 0 moves\n", out), out
    rows = ps_rows(n)
    assert scheduler not in rows and "filter" not in [row[0] for row in rows.values()], rows
    assert n.command("filter stats balance") == "filter: balance: no such filter\n"
    out = n.command("balance stop")
    assert out == "balance: no scheduler runs\n[%s] balance: exit status 1\n" % re.search(
        r"\[(\S+)\] balance", out).group(1), out
    out = n.command("balance start -F nosuch")
    assert out.startswith("balance: no filter called nosuch\n"), out
    out = n.command("balance start -i 5")
    assert out.startswith("balance: -i 5: a number from 100 to 60000\n"), out
    start(n, "")                            # and again, after the stop
    n.command("balance stop", timeout=60)
