"""The network card and a node's identity: the host unit test of the frame
parser (kernel/net/netframe.c); then three nodes on a VDE switch, booted one
after another, each of which must learn its number from its MAC address and
hear of both others (a later node by its broadcast, an earlier one by its
answer), hear of a rebooted node again in its new epoch, stay idle at ~0%
CPU, and power off cleanly, all of them, with its frames sent, when node 0's
shell says `halt`;
and nodes without a NIC, or with a MAC outside the convention, which are
machine 0 of 1."""
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from harness import Node, ROOT

NETFRAME_TEST = os.path.join(ROOT, "build", "tools", "netframe_test")
NODES = 3
KEY = secrets.token_hex(16)   # the cluster's key (net.key), as scripts/cluster.py makes one
workdir = tempfile.mkdtemp(prefix="dm-net-")
switch_pid = None
switch_sock = None
switches = 0
nodes = []


def teardown():
    for n in nodes:
        n.kill()
    stop_switch()
    shutil.rmtree(workdir, ignore_errors=True)


def mac_prefix():
    """The MAC convention's first four bytes, from kernel/net/netframe.h."""
    text = open(os.path.join(ROOT, "kernel", "net", "netframe.h")).read()
    return [int(re.search(r"#define NETFRAME_MAC_PREFIX%d (0x[0-9a-f]+)" % i, text).group(1), 16)
            for i in range(4)]


def node_mac(machine, count):
    return ":".join("%02x" % b for b in mac_prefix() + [count, machine])


def start_switch():
    """Start a VDE switch of its own (a fresh socket folder); return its socket."""
    global switch_pid, switches
    switches += 1
    sock = os.path.join(workdir, "switch%d" % switches)
    pidfile = sock + ".pid"
    subprocess.run(["vde_switch", "--daemon", "--sock", sock, "--pidfile", pidfile], check=True)
    deadline = time.monotonic() + 5
    while not (os.path.exists(pidfile) and open(pidfile).read().strip()):
        assert time.monotonic() < deadline, "vde_switch wrote no pid file"
        time.sleep(0.05)
    switch_pid = int(open(pidfile).read())
    return sock


def stop_switch():
    global switch_pid
    if switch_pid is None:
        return
    try:
        os.kill(switch_pid, signal.SIGTERM)
        for _ in range(100):
            os.kill(switch_pid, 0)          # raises once it is gone
            time.sleep(0.05)
        os.kill(switch_pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    switch_pid = None


def nic_args(sock, mac):
    return ["-netdev", "vde,id=n0,sock=%s" % sock, "-device", "virtio-net-device,netdev=n0,mac=%s" % mac]


def cpu_seconds(pid):
    """User plus system CPU time a process has used so far."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_frame_parser_on_the_host():
    subprocess.run(["make", "-s", "--no-print-directory", "build/tools/netframe_test"], cwd=ROOT, check=True)
    run = subprocess.run([NETFRAME_TEST], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.match(r"netframe_test: \d+ checks passed", run.stdout), run.stdout


def boot(k):
    """Node k, booted: until its kernel has announced itself and found its disk
    (node 0's shell comes only once every machine has joined); another
    node has no shell (the process manager on machine 0 runs its processes):
    until it says it waits for it."""
    n = Node(extra=nic_args(switch_sock, node_mac(k, NODES)), wait_prompt=False, bootargs="net.key=" + KEY)
    if k:
        n.expect(r"machine %d: waiting for the process manager on machine 0\n" % k, 20)
    else:
        n.expect(r"disk 0: ", 20)
    return n


def test_nodes_learn_their_number_from_their_mac():
    global switch_sock
    switch_sock = start_switch()
    for k in range(NODES):      # one after another: each is up before the next starts
        nodes.append(boot(k))
    nodes[0].expect(r"\$ ", 20)
    for k, n in enumerate(nodes):
        assert "DEMOS/MP kernel: machine %d of %d," % (k, NODES) in n.output, n.output[:300]
        assert "net: %s\n" % node_mac(k, NODES) in n.output, n.output[:300]


def test_every_node_hears_of_every_other():
    for k, n in enumerate(nodes):
        for j in range(NODES):
            if j != k:
                n.expect(r"machine %d: machine %d is up \(epoch \d+\)\n" % (k, j), timeout=10, since=0)
    for k, n in enumerate(nodes):
        lines = re.findall(r"machine %d: machine (\d+) is up" % k, n.output)
        assert sorted(map(int, lines)) == [j for j in range(NODES) if j != k], n.output


def halt(n, machine):
    """Halt node n (machine `machine`); return QEMU's exit status and what it printed."""
    n.type("halt\n")
    n.expect(r"machine %d: halted\n" % machine, timeout=20)
    return n.proc.wait(20), n.output


def counters(sent, received):
    return r"net: sent %d frames \(%d bytes\), received %d \(%d bytes\), dropped 0, refused 0\n" % (
        sent, 60 * sent, received, 60 * received)


def test_a_rebooted_node_is_heard_of_again_in_its_new_epoch():
    old_epoch = re.search(r"machine 1 of 3, epoch (\d+)", nodes[1].output).group(1)
    nodes[1].kill()
    # Restarted at once: its new epoch comes from its boot arguments
    # (harness.fresh_epoch), not from the RTC, which repeats within a second.
    nodes[1] = boot(1)
    new_epoch = re.search(r"machine 1 of 3, epoch (\d+)", nodes[1].output).group(1)
    assert new_epoch != old_epoch
    for k in (0, 2):
        nodes[k].expect(r"machine %d: machine 1 is up \(epoch %s\)\n" % (k, new_epoch), timeout=10, since=0)
    for j in (0, 2):
        nodes[1].expect(r"machine 1: machine %d is up" % j, timeout=10, since=0)


def test_idle_nodes_use_no_cpu():
    before = [cpu_seconds(n.proc.pid) for n in nodes]
    time.sleep(2)
    used = [cpu_seconds(n.proc.pid) - b for n, b in zip(nodes, before)]
    assert all(u < 0.2 for u in used), "CPU seconds in 2 s of idling: %s" % used


def test_halt_sends_everything_and_exits_zero():
    """`halt` on node 0: the process manager powers every machine off; each
    node prints its network counters (no frame dropped or refused) and the
    transport's, and exits with status 0."""
    status, output = halt(nodes[0], 0)
    assert status == 0, "node 0 exited with %s:\n%s" % (status, output[-500:])
    for k, n in enumerate(nodes):
        if k:
            n.expect(r"machine %d: halted\n" % k, timeout=20)
        assert n.proc.wait(20) == 0, "node %d: %s" % (k, n.output[-500:])
        m = re.search(r"net: sent (\d+) frames \((\d+) bytes\), received (\d+) \((\d+) bytes\), "
                      r"dropped 0, refused 0\n", n.output)
        assert m and int(m.group(1)) >= 1 and int(m.group(3)) >= 2, n.output[-500:]
    # The halt requests went to machines 1 and 2 over the transport.
    assert re.search(r"transport 0->1: sent [1-9]", nodes[0].output), nodes[0].output[-800:]
    pid = switch_pid
    stop_switch()
    assert all(n.proc.poll() is not None for n in nodes)
    try:
        os.kill(pid, 0)
        assert False, "vde_switch %d still runs" % pid
    except ProcessLookupError:
        pass


def test_a_node_without_a_nic_is_machine_0_of_1():
    with Node() as n:
        assert "DEMOS/MP kernel: machine 0 of 1," in n.output and "net:" not in n.output, n.output[:300]
        assert n.halt() == 0


def test_a_node_with_another_mac_is_machine_0_of_1():
    sock = start_switch()
    with Node(extra=nic_args(sock, "52:54:00:12:34:56")) as n:
        assert "DEMOS/MP kernel: machine 0 of 1," in n.output, n.output[:300]
        assert "net: 52:54:00:12:34:56 (not a cluster address: no announcement)" in n.output, n.output[:300]
        status, output = halt(n, 0)
        assert status == 0 and re.search(counters(0, 0), output), output[-300:]
    stop_switch()


def test_the_epoch_comes_from_the_boot_arguments_or_else_the_clock():
    """`-append epoch=N` sets the boot epoch (kernel/fdt.c reads QEMU's device
    tree); without boot arguments the kernel takes it from the RTC."""
    from harness import qemu_command, disk_args, SYSTEM_DISK
    disk = disk_args(SYSTEM_DISK, 0, snapshot=True)
    cmd = qemu_command(extra=disk)
    at = cmd.index("-append")
    for args, want in (("console=x epoch=4242 other=1", r"epoch 4242\n"), ("", r"epoch \d+\n")):
        line = list(cmd)
        if args:
            line[at + 1] = args
        else:
            del line[at:at + 2]
        with Node(command=line) as n:
            assert re.search(r"DEMOS/MP kernel: machine 0 of 1, " + want, n.output), n.output[:300]
            assert n.halt() == 0
