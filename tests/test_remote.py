"""One system over several machines: from node 0's shell, processes
on other machines talk through links as if they were local. user/tests/nettest
checks SEND, CALL and its answer, link passing, MOVEDATA between areas on two
and on three machines, DESTROYLINK and the errors of a dead remote process,
with its client on machine 0 and on machine 1; programs on every machine use
the file system of machine 0; `ps` shows every machine's processes; kill,
stop and resume work across machines."""
import re
import subprocess
import time

from cluster import Cluster
from harness import DMFS, SYSTEM_DISK, report_checks

# What the system disk holds at its root, as ls lists it: /bin, and /labs
# when the labs have files there (the Makefile's LAB_FILES).
SYSTEM_ROOT = subprocess.run([DMFS, "ls", SYSTEM_DISK, "/"], capture_output=True, text=True, check=True).stdout

cluster = Cluster(3)   # closed by teardown() whatever happens
cluster.wait_joined()


def teardown():
    cluster.close()


def run_checks(report, command, prefix, timeout=180):
    """Run a test program that prints `ok NAME` / `not ok NAME: why` and a
    summary; report each check; return the output."""
    return report_checks(report, cluster.node(0).command(command, timeout=timeout), prefix, "nettest", 20)


def test_nettest_client_on_machine_0(report):
    run_checks(report, "run nettest 1 2", "nettest0")


def test_nettest_client_on_machine_1_servers_on_2_and_0(report):
    run_checks(report, "run @1 nettest 2 0", "nettest1")


def test_nettest_client_and_servers_on_one_other_machine(report):
    """Both servers on machine 2, the client on 1: a move between two areas of
    the same other machine."""
    run_checks(report, "run @1 nettest 2 2", "nettest2")


def test_programs_on_every_machine_use_the_file_system():
    n = cluster.node(0)
    for k in range(3):
        out = n.command("run @%d filetest /remote%d" % (k, k), timeout=180)
        assert re.search(r"filetest: \d+ passed, 0 failed", out), "machine %d:\n%s" % (k, out[-1500:])
    n.command("run @2 cp /bin/hello /hello2")
    assert n.command("run @1 ls /") == SYSTEM_ROOT + "hello2\n"
    n.command("run @1 rm /hello2")
    assert n.command("ls /") == SYSTEM_ROOT


def test_ps_kill_stop_resume_across_machines():
    n = cluster.node(0)
    out = n.command("run @2 hello 60 &")
    pid = re.search(r"\[(2\.\d+\.\d+)\] hello", out).group(1)
    # Its greeting may come after the prompt: wait for it, or it could fall
    # between the characters of the next command's echo.
    if "hello from process %s" % pid not in out:
        n.expect(r"hello from process %s on machine 2\n" % re.escape(pid), 30)
    ps = n.command("ps")
    assert re.search(r"^%s +hello +\w+ +2 " % re.escape(pid), ps, re.M), ps
    for k in range(3):
        assert re.search(r"^%d\.0\.0 +kernel +kernel +%d " % (k, k), ps, re.M), ps
    assert n.command("stop %s" % pid) == ""
    ps = n.command("ps")
    assert re.search(r"^%s +hello +stopped " % re.escape(pid), ps, re.M), ps
    assert n.command("resume %s" % pid) == ""
    ps = n.command("ps")
    assert re.search(r"^%s +hello +ready " % re.escape(pid), ps, re.M), ps
    assert n.command("kill %s" % pid) == ""
    deadline = time.monotonic() + 10
    while pid in n.command("ps"):
        assert time.monotonic() < deadline, "the killed process is still listed"
        time.sleep(0.2)


def test_file_system_processes_placed_on_other_machines():
    """PLACE: the buffer manager on machine 1, the directory manager on 2, the
    request interpreter on 1 (the disk interface stays with the disk, on 0);
    the file system works from every machine (filetest on one, the file
    commands on the others), and ps shows where each runs."""
    placed = Cluster(3, place="bm=1 dm=2 ri=1")
    try:
        n = placed.node(0)
        ps = n.command("ps")
        for name, machine in (("di", 0), ("bm", 1), ("dm", 2), ("ri", 1)):
            assert re.search(r"^%d\.\d+\.\d+ +%s +\w+ +%d " % (machine, name, machine), ps, re.M), ps
        out = n.command("run @2 filetest /placed", timeout=180)
        assert re.search(r"filetest: \d+ passed, 0 failed", out), out[-1500:]
        n.command("run @1 cp /bin/hello /h")
        assert n.command("run @0 ls /") == SYSTEM_ROOT + "h\n"
        assert n.command("run @2 rm /h") == ""
        assert n.command("ls /") == SYSTEM_ROOT
        assert "pm:" not in n.output, n.output
    finally:
        placed.close()


def test_a_machine_not_heard_of_yet_is_waited_for():
    """Machine 2 drops every frame from machine 1 during its first 20 s
    (net.deaf): a CALL from machine 2 to a server on machine 1 neither fails
    at once nor waits forever. It waits until machine 2 hears of machine 1,
    and is answered then, or fails with E_NODE 5 s after it was made
    (kernel/net/remote.c, UNHEARD_WAIT_NS). Each call's time on machine 2's clock says
    which: one made 5 s or more before the cut ends fails after 5 s; one made
    later is answered once machine 2 hears of machine 1, within a second
    after the cut (announcements come every second). One whose 5 s end in
    that second may go either way."""
    deaf_ms = 20000
    cut = Cluster(3, bootargs_per_node=lambda k: "net.deaf.machine=1 net.deaf.ms=%d" % deaf_ms if k == 2 else "")
    try:
        cut.wait_joined(pairs=False)
        out = cut.node(0).command("run @2 nettest reach 1", timeout=120)
        calls = [(int(at), result, int(took)) for at, result, took in
                 re.findall(r"nettest reach: call \d+ at (\d+) ms: (\S+) after (\d+) ms", out)]
        assert calls and calls[-1][1] == "answered", out
        assert calls[0][0] < deaf_ms - 1000, "the first call came after the cut ended:\n" + out
        for at, result, took in calls:
            ends = at + 5000
            if ends < deaf_ms - 300:
                assert result == "E_NODE" and 4800 <= took <= 6000, out
            elif ends > deaf_ms + 1300 and at < deaf_ms:
                assert result == "answered" and deaf_ms - at - 300 <= took <= deaf_ms + 1300 - at, out
            elif at >= deaf_ms + 1300:
                assert result == "answered" and took < 1000, out
            else:
                assert result in ("answered", "E_NODE"), out
        assert sum(took for at, result, took in calls) >= deaf_ms - calls[0][0] - 300, out
    finally:
        cut.close()
