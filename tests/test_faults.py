"""Faults: with a wirefilter on the wire into every node losing 10%
and duplicating 5% of the frames (and delaying them 1 ms), two clients on
machines 0 and 2 exchange messages with servers on machine 1 and move data
with MOVEDATA (user/tests/nettest stress): every message arrives once, in
order for each sender, every byte intact, and the transports' own counters
show that frames were resent and duplicates dropped. A killed machine makes
calls to its processes fail with E_NODE while the others go on; rebooted, it
rejoins, and links to its former processes give E_DEAD.

The size of the workload is FAULT_MESSAGES messages and FAULT_MIB MiB per
client (defaults 2000 and 1 in `make test`; `make test-faults` runs 10000 and 4).
No seed: wirefilter draws its faults from the clock (README)."""
import os
import re
import time

from cluster import Cluster

MESSAGES = int(os.environ.get("FAULT_MESSAGES", "2000"))
MIB = int(os.environ.get("FAULT_MIB", "1"))
live = []


def teardown():
    for c in live:
        c.close()


def counters(netstat):
    """The transport counters of every machine pair in the shell's `netstat`, summed."""
    lines = netstat.splitlines()
    names = lines[0].split()
    assert names[:3] == ["FROM", "TO", "STATE"], netstat
    total = {}
    for line in lines[1:]:
        fields = line.split()
        assert fields[2] == "up", netstat
        for name, value in zip(names[3:], fields[3:]):
            total[name] = total.get(name, 0) + int(value)
    return total


def test_messages_and_movedata_survive_loss_and_duplication(report):
    cluster = Cluster(3, faults="loss=10 dup=5 delay=1", boot_timeout=90)
    live.append(cluster)
    cluster.wait_joined(timeout=60)
    n = cluster.node(0)
    start = time.monotonic()
    n.command("run @2 nettest stress 1 %d %d &" % (MESSAGES, MIB))
    # A run takes about 20 s (2,000 messages) or 90 s (10,000); a stuck one
    # must not take the whole test budget.
    limit = 120 + MESSAGES // 20
    n.command("run nettest stress 1 %d %d" % (MESSAGES, MIB), timeout=limit)
    deadline = time.monotonic() + limit        # the other client's summary too, if not in yet
    while len(re.findall(r"nettest: \d+ passed, \d+ failed\n", n.output)) < 2:
        if time.monotonic() > deadline:     # what the stuck client and the transports are doing
            raise AssertionError("one client did not finish:\n%s\n%s\n%s" % (
                n.output[-2000:], n.command("ps"), n.command("netstat")))
        try:
            n.expect(r"nettest: \d+ passed, \d+ failed\n", 1)
        except Exception:
            pass
    out = n.output
    # (a background client's line may follow a prompt: "$ ok ...")
    for m in re.finditer(r"^(?:\$ )?(ok|not ok) (\S+)(?:: (.*))?$", out, re.M):
        report("faults.%s" % m.group(2), m.group(1) == "ok", m.group(3) or "")
    assert len(re.findall(r"nettest: 3 passed, 0 failed", out)) == 2, out[-2000:]
    print("  note    2 clients x %d messages and %d MiB there and back under faults in %.0f s"
          % (MESSAGES, MIB, time.monotonic() - start))
    netstat = n.command("netstat")
    total = counters(netstat)
    print("  note    transports (netstat, all pairs): %s" % " ".join("%s=%d" % kv for kv in sorted(total.items())))
    assert total["RESENT"] > 0, netstat
    assert total["DUPS"] > 0, netstat
    assert total["FAILED"] == 0, netstat
    assert total["SENT"] >= 2 * MESSAGES, netstat
    assert n.halt(timeout=60) == 0


def hold(node, k):
    """Start `nettest hold k` in the background; wait until it is serving."""
    node.command("run nettest hold %d &" % k)
    node.expect(r"nettest hold: serving on %d\.\d+\.\d+\n" % k, 30)


def test_a_killed_machine_fails_calls_and_the_others_go_on():
    cluster = Cluster(3)
    live.append(cluster)
    cluster.wait_joined()
    n = cluster.node(0)
    hold(n, 2)
    cluster.kill(2)
    m = n.expect(r"nettest hold: call \d+ failed: (E_\w+) after (\d+) ms\n", 20)
    assert m.group(1) == "E_NODE", m.group(0)
    print("  note    calls to the killed machine failed after %s ms" % m.group(2))
    assert re.search(r"hello from process 1\.\d+\.\d+ on machine 1\n", n.command("run @1 hello"))
    # Booted again, it rejoins: the process manager runs programs there again.
    cluster.restart(2)
    n.expect(r"machine 0: machine 2 is up", 20)
    assert re.search(r"hello from process 2\.\d+\.\d+ on machine 2\n", n.command("run @2 hello"))
    # A reboot under a live link: the link's process is gone.
    hold(n, 2)
    cluster.restart(2)
    m = n.expect(r"nettest hold: call \d+ failed: (E_\w+) after (\d+) ms\n", 20)
    assert m.group(1) == "E_DEAD", m.group(0)
    cluster.close()
