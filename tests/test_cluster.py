"""The cluster launcher (scripts/cluster.py): N nodes on a VDE switch boot,
node 0 to the shell, from which `run @k` runs a process on every node; they
idle without using the host's CPU; a node that is killed is reported, running
a program there fails with a clear error, and the others go on; a node restarted boots with a new
epoch and the others hear of it; with faults, every node's frames cross a
wirefilter; `halt` on node 0, Ctrl-C, SIGTERM, a node 0 that cannot start and
even a launcher killed outright leave no QEMU, vde_switch or wirefilter process
of the cluster behind, nor its private directory; `make run NODES=3 FAULTS=...`
works with piped input; 10 nodes boot on this 2-core host, `run @k hello` reports
machine k for every k, and a token passed around a ring of relays on all ten
machines comes back; with trace disks every node finds its own as disk 1,
made blank once and kept after; node k of N says
`machine k of N` (its kernel reads both from its MAC address); a node that
does not boot (its QEMU exits, or its kernel stays silent) is named with the
cause; more nodes than MAX_NODES are refused, saying why. (tests/test_large.py
boots MAX_NODES.)
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from harness import Node, ROOT, SYSTEM_DISK, run_make
import cluster as cluster_module
from cluster import Cluster, ClusterError, parse_faults, wirefilter_options

LAUNCHER = os.path.join(ROOT, "scripts", "cluster.py")
def hello_on(k):
    """What `run @k hello` prints: a process of machine k, on machine k."""
    return r"hello from process %d\.\d+\.\d+ on machine %d\n" % (k, k)
START_LINE = r"cluster: (\d+) nodes?, switch at (\S+), logs in (\S+?)(?:, faults into each node: (.*))?\n"
live = []            # clusters, nodes and directories to clean up
four = None          # the 4-node cluster several tests share


def teardown():
    while live:
        thing = live.pop()
        if isinstance(thing, (Cluster, Node)):
            thing.close() if isinstance(thing, Cluster) else thing.kill()
        else:
            shutil.rmtree(thing, ignore_errors=True)


def note(text):
    """A measurement or a skipped check, in the test output."""
    print("  note    %s" % text)
    sys.stdout.flush()


def processes_with(text):
    """Pids of the processes whose command line contains `text` (a cluster's
    switch directory is on the command line of its switch and of every node)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def assert_none_left(switch_dir, timeout=5):
    """Within `timeout` seconds no process of the cluster is left."""
    deadline = time.monotonic() + timeout
    while processes_with(switch_dir):
        if time.monotonic() > deadline:
            left = [open("/proc/%d/cmdline" % p).read().replace("\0", " ") for p in processes_with(switch_dir)]
            raise AssertionError("processes of the cluster are left:\n%s" % "\n".join(left))
        time.sleep(0.05)


def cpu_seconds(pids):
    """CPU time used so far by the processes `pids`, user and system, in seconds."""
    ticks = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])        # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def alive(pid):
    """Whether process `pid` exists (the cluster reaps its children, so an ended
    one is gone, not a zombie)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def command_line(pid):
    """The arguments of process `pid`, as a list."""
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read().decode().split("\0")[:-1]


def assert_ended(pids, private, timeout=5):
    """Within `timeout` seconds none of `pids` runs and the directory `private` is gone."""
    deadline = time.monotonic() + timeout
    while [p for p in pids if alive(p)] or os.path.exists(private):
        if time.monotonic() > deadline:
            left = [" ".join(command_line(p)) for p in pids if alive(p)]
            raise AssertionError("left: %s%s" % ("\n".join(left), "\n" + private if os.path.exists(private) else ""))
        time.sleep(0.05)


def boot_epoch(node, k, count):
    """The boot epoch node k of `count` printed as it booted (kernel/main.c)."""
    m = re.search(r"DEMOS/MP kernel: machine %d of %d, epoch (\d+)\n" % (k, count), node.output)
    assert m, node.output
    return int(m.group(1))


def wait_for_text(path, text, timeout=30):
    """Wait until the file at `path` contains `text`."""
    deadline = time.monotonic() + timeout
    while True:
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                if text in f.read():
                    return
        assert time.monotonic() < deadline, "%s never showed %r" % (path, text)
        time.sleep(0.05)


def launcher(nodes, *options):
    """The launcher as a command, its node 0 console and its stderr on the pipes of
    a harness.Node; return (that Node, the switch directory, the log directory).
    Node 0's disk is a copy of the system disk, unless `options` name one."""
    logs = tempfile.mkdtemp(prefix="dm-cluster-logs-")
    live.append(logs)
    if "--disk" not in options:
        disk = os.path.join(logs, "disk.img")
        shutil.copyfile(SYSTEM_DISK, disk)
        options += ("--disk", disk)
    # As from a terminal: Ctrl-C reaches it. (A test run started in the background
    # by a shell has SIGINT ignored, and a child inherits that; the launcher
    # rightly keeps an ignored SIGINT ignored.)
    node = Node(command=[sys.executable, LAUNCHER, "--nodes", str(nodes), "--logs", logs, *options],
                wait_prompt=False, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    live.append(node)
    m = node.expect(START_LINE, 30, since=0)
    assert int(m.group(1)) == nodes, m.group(0)
    return node, m.group(2), logs


def four_nodes():
    """The shared 4-node cluster, booted (and its boot timed) on first use."""
    global four
    if four is None:
        start = time.monotonic()
        four = Cluster(4)
        live.append(four)
        four.wait_joined()
        note("4 nodes booted and joined in %.1f s" % (time.monotonic() - start))
    return four


def test_four_nodes_boot_and_each_runs_a_process():
    """Node 0 has the shell; `run @k hello` there makes a process on machine k,
    which says so (its output comes to node 0's console)."""
    cluster = four_nodes()
    assert "DEMOS/MP shell" in cluster.node(0).output, cluster.node(0).output
    for k in range(4):
        if k:
            assert "DEMOS/MP shell" not in cluster.node(k).output, cluster.node(k).output
        assert re.search(hello_on(k), cluster.node(0).command("run @%d hello" % k))


def test_each_node_knows_its_number():
    """Node k of 4 says `machine k of 4`: its MAC address is 52:54:00:4d:04:0k."""
    cluster = four_nodes()
    lines = [re.search(r"machine (\d+) of (\d+), epoch", cluster.node(k).output) for k in range(4)]
    assert all(lines), [cluster.node(k).output for k in range(4)]
    for k, m in enumerate(lines):
        assert (int(m.group(1)), int(m.group(2))) == (k, 4), "node %d says %r" % (k, m.group(0))


def test_idle_nodes_use_little_cpu():
    cluster = four_nodes()
    pids = [cluster.pid(k) for k in range(4)]
    time.sleep(0.5)
    before = cpu_seconds(pids)
    time.sleep(2)
    used = (cpu_seconds(pids) - before) / 2
    note("4 idle nodes use %.3f of a core together" % used)
    assert used < 0.2, "4 idle nodes use %.2f of a core" % used


def test_killed_node_is_reported_and_the_others_go_on():
    cluster = four_nodes()
    assert cluster.exited() == []
    cluster.kill(2)
    assert cluster.exited() == [(2, -signal.SIGKILL)]
    assert cluster.exit_message(2, -signal.SIGKILL) == "cluster: node 2 exited (signal SIGKILL)"
    for k in (0, 1, 3):
        assert re.search(hello_on(k), cluster.node(0).command("run @%d hello" % k))
    start = time.monotonic()
    out = cluster.node(0).command("run @2 hello", timeout=30)
    note("run @2 on the killed node failed after %.1f s" % (time.monotonic() - start))
    assert out.endswith("run: hello: that machine is not up\n"), out
    assert re.search(hello_on(3), cluster.node(0).command("run @3 hello"))
    switch_dir = cluster.switch_dir
    cluster.close()
    assert_none_left(switch_dir, timeout=0)


def test_restarted_node_boots_with_a_new_epoch_and_is_heard():
    """kill(2) then restart(2): node 2 boots again with the same MAC and a new epoch,
    node(2) is the new boot, and every other node hears of that epoch; restart(1)
    of a running node kills the old boot first."""
    cluster = Cluster(4)
    live.append(cluster)
    try:
        old = cluster.node(2)
        first = boot_epoch(old, 2, 4)
        cluster.kill(2)
        assert cluster.exited() == [(2, -signal.SIGKILL)]
        heard_from = [len(cluster.node(k).output) for k in range(4)]
        start = time.monotonic()
        node2 = cluster.restart(2)
        assert node2 is cluster.node(2) and node2 is not old
        second = boot_epoch(node2, 2, 4)
        assert second != first, "node 2 booted again with epoch %d" % first
        for k in (0, 1, 3):
            cluster.node(k).expect(r"machine %d: machine 2 is up \(epoch %d\)\n" % (k, second), 10, since=heard_from[k])
        note("node 2 restarted and heard by the 3 others in %.1f s" % (time.monotonic() - start))
        assert re.search(hello_on(2), cluster.node(0).command("run @2 hello"))
        assert cluster.exited() == []
        running = cluster.node(1)
        node1 = cluster.restart(1)
        assert running.proc.returncode == -signal.SIGKILL
        assert boot_epoch(node1, 1, 4) != boot_epoch(running, 1, 4)
        cluster.node(0).expect(r"machine 0: machine 1 is up \(epoch %d\)\n" % boot_epoch(node1, 1, 4), 10, since=0)
        assert re.search(hello_on(1), cluster.node(0).command("run @1 hello"))
        pids, private = cluster.pids(), cluster.private
        cluster.close()
        assert_ended(pids, private, timeout=0)
    finally:
        cluster.close()   # now, not at the suite's end: its nodes hold the system disk, which make run needs


def test_faults_specification():
    """FAULTS: KEY=VALUE items, by spaces or commas, each applied on the wire into the
    node (wirefilter's left-to-right direction); anything else is refused by name."""
    assert parse_faults("loss=10 dup=5 delay=2") == {"loss": 10, "dup": 5, "delay": 2}
    assert parse_faults(" loss=2.5,burst=3 ") == {"loss": 2.5, "burst": 3}
    assert parse_faults("") == {}
    assert wirefilter_options(parse_faults("loss=10 burst=3 dup=5 delay=2")) == \
        ["-l", "LR10", "-L", "LR3", "-D", "LR5", "-d", "LR2"]
    for spec, complaint in (("lose=10", "'lose=10' is not KEY=VALUE"), ("loss", "'loss' is not KEY=VALUE"),
                            ("loss=ten", "loss=ten: not a number"), ("loss=101", "from 0 to 100"),
                            ("dup=100", "from 0 to 99"), ("delay=-1", "0 or more"), ("delay=inf", "0 or more"),
                            ("loss=1 loss=2", "loss given twice")):
        try:
            parse_faults(spec)
        except ClusterError as e:
            assert complaint in str(e), "%r: %s" % (spec, e)
        else:
            raise AssertionError("%r was accepted" % spec)
    run = subprocess.run([sys.executable, LAUNCHER, "--faults", "loss=200"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    assert run.returncode == 2, run
    assert b"cluster: faults: loss=200: must be a number from 0 to 100" in run.stdout, run.stdout


def test_faults_boot_four_nodes_and_leave_nothing():
    """With loss=10 dup=5, 4 nodes boot to their prompts; node k plugs into a switch of
    its own that a wirefilter joins to the central switch; close() ends every QEMU,
    vde_switch and wirefilter process the cluster started."""
    start = time.monotonic()
    cluster = Cluster(4, faults="loss=10 dup=5")
    live.append(cluster)
    note("4 nodes with faults booted in %.1f s" % (time.monotonic() - start))
    assert "DEMOS/MP shell" in cluster.node(0).output, cluster.node(0).output
    pids = cluster.pids()
    names = [command_line(p)[0] for p in pids]
    counts = {name: names.count(name) for name in ("qemu-system-riscv64", "vde_switch", "wirefilter")}
    assert counts == {"qemu-system-riscv64": 4, "vde_switch": 5, "wirefilter": 4}, names
    central = cluster.switch_dir
    wires = sorted(command_line(p)[1:] for p in pids if command_line(p)[0] == "wirefilter")
    assert wires == [["-v", "%s:%s-node%d" % (central, central, k), "-l", "LR10", "-D", "LR5"] for k in range(4)], wires
    for k in range(4):
        assert "vde,id=n0,sock=%s-node%d" % (central, k) in command_line(cluster.pid(k)), k
    private = cluster.private
    cluster.close()
    assert_ended(pids, private, timeout=0)


def test_every_frame_crosses_a_wirefilter():
    """With loss=100 on the wire into each node, no node hears of another (without
    faults each hears of every other: the restart test above)."""
    with Cluster(3, faults="loss=100") as cluster:
        time.sleep(2.5)                               # every node has announced itself, twice or more
        cluster.node(0).command("echo read")         # reads what node 0 printed meanwhile
        for k in range(3):
            try:
                cluster.node(k).expect("is up", 0.1)
            except Exception:
                pass
            else:
                raise AssertionError(cluster.node(k).output)


def test_launcher_reports_a_crash_and_halt_ends_the_cluster():
    node0, switch_dir, logs = launcher(3)
    node0.expect(r"\$ ", 30)
    for k in (1, 2):
        wait_for_text(os.path.join(logs, "node%d.log" % k), "machine %d: machine 0 is up" % k)
    node2 = [p for p in processes_with(switch_dir)
             if b"mac=52:54:00:4d:03:02" in open("/proc/%d/cmdline" % p, "rb").read()]
    assert len(node2) == 1, node2
    os.kill(node2[0], signal.SIGKILL)
    node0.expect(r"cluster: node 2 exited \(signal SIGKILL\); see \S*node2\.log\n", 10, since=0)
    assert re.search(hello_on(1), node0.command("run @1 hello"))
    assert len(processes_with(switch_dir)) == 3, "node 0, node 1 and the switch run on"
    assert node0.halt() == 0
    assert_none_left(switch_dir)


def test_signals_end_the_cluster_and_leave_nothing():
    """SIGINT and SIGTERM end it with status 128+signal; a launcher killed outright
    (SIGKILL) takes its nodes, its switches and its wirefilters with it all the same,
    and its cleaner removes its private directory."""
    for sig, faults in ((signal.SIGINT, None), (signal.SIGTERM, "loss=10"), (signal.SIGKILL, None),
                        (signal.SIGKILL, "loss=10 dup=5")):
        node0, switch_dir, logs = launcher(2, *(("--faults", faults) if faults else ()))
        node0.expect(r"\$ ", 30)
        if faults:
            assert os.path.exists(os.path.join(logs, "node1-net.log"))
            assert len(processes_with(switch_dir)) == 2 + 3 + 2, "2 nodes, 3 switches, 2 wirefilters"
        node0.proc.send_signal(sig)
        status = node0.proc.wait(15)
        assert status == (-sig if sig == signal.SIGKILL else 128 + sig), "%s: status %s" % (sig.name, status)
        private = os.path.dirname(switch_dir)
        assert_none_left(private)                     # the cleaner's command line names it too
        assert not os.path.exists(private), "%s: %s is left" % (sig.name, private)


def test_node0_that_cannot_start_ends_the_cluster():
    bad = tempfile.mkdtemp(prefix="dm-cluster-bad-")      # a directory is no disk image
    live.append(bad)
    node0, switch_dir, _ = launcher(3, "--disk", bad)
    assert node0.proc.wait(15) != 0
    assert_none_left(switch_dir)


def test_cluster_that_fails_to_start_leaves_nothing():
    """A node that cannot boot (no such kernel), or a wirefilter that cannot start,
    makes Cluster() raise, after it has stopped the nodes, switches and wirefilters
    it started and removed its private directory."""
    # The clusters made here have a temporary directory of their own, so that
    # clusters other programs start meanwhile do not count.
    parent = tempfile.mkdtemp(prefix="demos-test-failing-")
    saved, tempfile.tempdir = tempfile.tempdir, parent
    try:
        for options, wirefilter, complaint in (
                ({"kernel": "/nonexistent/kernel.elf"}, "wirefilter", "node 0 did not reach its prompt"),
                ({"faults": "loss=10"}, "no-such-wirefilter", "no-such-wirefilter: not found")):
            cluster_module.WIREFILTER = wirefilter
            try:
                Cluster(3, boot_timeout=10, **options)
            except ClusterError as e:
                assert complaint in str(e), e
            else:
                raise AssertionError("Cluster() started with %s" % options)
            finally:
                cluster_module.WIREFILTER = "wirefilter"
            made = os.listdir(parent)
            assert made == [], "private directories left: %s" % made
            left = set(processes_with(parent)) - {os.getpid()}
            assert left == set(), "processes left: %s" % left
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(parent, ignore_errors=True)
    try:
        Cluster(0)
    except ClusterError:
        pass
    else:
        raise AssertionError("a cluster of 0 nodes")


def test_make_run_three_nodes_with_faults_and_piped_input():
    status, out = run_make("run", "NODES=3", "FAULTS=dup=5 delay=1", input=b"run hello\nhalt\n")
    assert status == 0, out
    assert re.search(hello_on(0), out), out
    m = re.search(START_LINE, out)
    assert m and m.group(1) == "3" and m.group(4) == "dup=5 delay=1", out
    assert_none_left(os.path.dirname(m.group(2)))


def test_ten_nodes_boot_on_two_cores():
    start = time.monotonic()
    with Cluster(10, boot_timeout=40) as cluster:
        cluster.wait_joined()
        elapsed = time.monotonic() - start
        note("10 nodes booted and joined in %.1f s on %d cores" % (elapsed, os.cpu_count()))
        for k in range(10):
            assert re.search(hello_on(k), cluster.node(0).command("run @%d hello" % k))
        out = cluster.node(0).command("run nettest ring 10 5", timeout=60)
        assert re.search(r"nettest ring: the token went round 10 machines 5 times and came back", out), out
        switch_dir = cluster.switch_dir
    assert elapsed < 30, "10 nodes took %.1f s to boot" % elapsed
    assert_none_left(switch_dir, timeout=0)


def test_trace_disks_are_made_blank_kept_and_found_by_the_kernels():
    """`make run TRACE=DIR` gives each node a blank trace disk DIR/traceK.img;
    a second cluster on the same DIR keeps them as they are (a log written
    on one is still there after it), and each kernel reports it as its disk 1
    (64 MiB), after the system disk."""
    directory = tempfile.mkdtemp(prefix="dm-trace-disks-")
    live.append(directory)
    dmtrace = os.path.join(ROOT, "build", "tools", "dmtrace")
    status, out = run_make("run", "NODES=2", "TRACE=" + directory, input=b"halt\n")
    assert status == 0, out
    assert re.search(r", trace disks in \S*%s\n" % re.escape(os.path.basename(directory)), out), out
    images = [os.path.join(directory, "trace%d.img" % k) for k in (0, 1)]
    for image in images:
        assert os.path.getsize(image) == 64 << 20, image
        extract = subprocess.run([dmtrace, "extract", image, image + ".log"], capture_output=True, text=True)
        assert extract.stderr == "dmtrace: %s: a trace disk with no log yet\n" % image, extract.stderr
    tracegen = os.path.join(ROOT, "build", "tools", "tracegen")
    subprocess.run([tracegen, "known", "5", images[1]], check=True)
    with Cluster(2, trace_disks=directory) as cluster:
        for k in (0, 1):
            cluster.node(k).expect(r"disk 0: \d+ blocks of 4096 bytes\ndisk 1: 16384 blocks of 4096 bytes\n",
                                   10, since=0)
        switch_dir = cluster.switch_dir
    assert_none_left(switch_dir)
    extract = subprocess.run([dmtrace, "extract", images[1], images[1] + ".log"], capture_output=True, text=True)
    assert extract.returncode == 0 and "4 records, 3 lost" in extract.stdout, extract


def test_node_that_does_not_boot_is_named_with_its_cause():
    """A node whose QEMU exits before its kernel prints a line is named with QEMU's
    status and message, and one whose kernel prints nothing in time (QEMU -S: its
    processor never starts) is named as silent: Cluster() raises, naming both; and
    wait_node0() reports a silent node as it waits."""
    odd = {1: ["-no-such-option"], 2: ["-S"]}
    try:
        Cluster(4, extra_per_node=lambda k: odd.get(k, []), first_line_timeout=3)
    except ClusterError as e:
        assert "node 1 did not boot: its QEMU exited (status 1): " \
               "qemu-system-riscv64: -no-such-option: invalid option" in str(e), e
        assert re.search(r"node 2 did not boot: its kernel printed nothing within 3 s of its QEMU's start "
                         r"\(QEMU runs, pid \d+\)", str(e)), e
        assert "node 0" not in str(e) and "node 3" not in str(e), e
    else:
        raise AssertionError("Cluster() started with nodes 1 and 2 unable to boot")
    cluster = Cluster(3, wait_prompt=False, extra_per_node=lambda k: ["-S"] if k == 2 else [], first_line_timeout=2)
    live.append(cluster)
    reports = []

    def report(line):
        reports.append(line)
        cluster.kill(0)                   # ends wait_node0
    start = time.monotonic()
    assert cluster.wait_node0(report) == -signal.SIGKILL
    assert len(reports) == 1 and re.fullmatch(
        r"cluster: node 2 did not boot: its kernel printed nothing within 2 s of its QEMU's start "
        r"\(QEMU runs, pid %d\)" % cluster.pid(2), reports[0]), reports
    assert 2 <= time.monotonic() - start < 10, time.monotonic() - start
    cluster.close()


def test_launcher_names_why_a_node_exited():
    """`make run`'s way: a node whose QEMU cannot start (its trace disk is a
    directory) is reported on stderr with QEMU's own message and its log, and the
    others go on."""
    traces = tempfile.mkdtemp(prefix="dm-trace-disks-")
    live.append(traces)
    os.mkdir(os.path.join(traces, "trace2.img"))
    logs = tempfile.mkdtemp(prefix="dm-cluster-logs-")
    live.append(logs)
    disk = os.path.join(logs, "disk.img")
    shutil.copyfile(SYSTEM_DISK, disk)
    node0 = Node(command=[sys.executable, LAUNCHER, "--nodes", "3", "--logs", logs, "--disk", disk,
                          "--trace-disks", traces], wait_prompt=False)
    live.append(node0)
    switch_dir = node0.expect(r"cluster: 3 nodes, switch at (\S+), logs in \S+, trace disks in \S+\n", 30).group(1)
    node0.expect(r"cluster: node 2 exited \(status 1\): qemu-system-riscv64: -drive file=\S*trace2\.img\S*: "
                 r"[^\n]*regular file; see \S*node2\.log\n", 15, since=0)
    wait_for_text(os.path.join(logs, "node1.log"), "machine 1: machine 0 is up")
    node0.proc.send_signal(signal.SIGTERM)
    assert node0.proc.wait(15) == 128 + signal.SIGTERM
    assert_none_left(switch_dir)


def test_more_nodes_than_the_maximum_are_refused():
    """Above MAX_NODES the launcher refuses, saying why, and starts nothing."""
    count = cluster_module.MAX_NODES + 1
    run = subprocess.run([sys.executable, LAUNCHER, "--nodes", str(count)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10, text=True)
    assert run.returncode == 2, run
    assert run.stdout == ("cluster: --nodes must be between 1 and %d, not %d (the process manager keeps a link "
                          "to every machine's kernel in its table of 64; see docs/cluster.md, \"How large a "
                          "cluster\")\n" % (count - 1, count)), run.stdout
    try:
        Cluster(count)
    except ClusterError as e:
        assert str(e).startswith("the node count must be between 1 and %d, not %d (" % (count - 1, count)), e
    else:
        raise AssertionError("a cluster of %d nodes" % count)
