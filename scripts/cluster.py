#!/usr/bin/env python3
"""cluster.py -- boot a cluster of N nodes on one virtual Ethernet switch.

    python3 scripts/cluster.py [--nodes N] [--disk IMAGE] [--logs DIR]

starts an unprivileged VDE switch (vde_switch) and N QEMU nodes plugged into
it. Node 0's console is this terminal (or the piped input and output); the
other nodes' consoles go to DIR/node1.log ... (default build/cluster/). `halt`
on node 0 ends the whole cluster, with node 0's exit status; Ctrl-C or SIGTERM
ends it with a non-zero status. A node other than 0 that exits or crashes is
reported on stderr and the others go on. No QEMU or vde_switch process of the
cluster outlives the launcher, however it ends.

Node K of N has the MAC address 52:54:00:4d:NN:KK (NN = N, KK = K, two hex
digits each): the kernel learns from it which node it is and how many there are.
Node 0 boots from IMAGE (default build/disk.img, written to); the others boot
from the system disk in snapshot mode (their writes are thrown away).

As a module, for tests (every console is a pipe, driven by harness.Node):

    with Cluster(nodes=4) as cluster:
        cluster.node(2).command("run hello")
        cluster.kill(2)
        cluster.exited()          # [(2, -9)]: nodes that ended since the last call
"""
import argparse
import atexit
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import time

from harness import ROOT, KERNEL, SYSTEM_DISK, Node, disk_args, qemu_command

DEFAULT_NODES = 4
MAX_NODES = 255                       # the node count is one byte of the MAC address
DEFAULT_LOGS = os.path.join(ROOT, "build", "cluster")
SWITCH = "vde_switch"
STOP_GRACE = 5                        # seconds a node has to end after SIGTERM before SIGKILL
PR_SET_PDEATHSIG = 1                  # prctl option, <linux/prctl.h>


class ClusterError(Exception):
    pass


def node_mac(number, count):
    """The MAC address of node `number` of `count`: 52:54:00:4d:CC:NN."""
    return "52:54:00:4d:%02x:%02x" % (count, number)


def end_with_parent():
    """In a child before it runs QEMU or the switch: have the kernel send it SIGTERM
    when the launcher dies, even by SIGKILL, so that no node outlives the launcher."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def detach_and_end_with_parent():
    """As end_with_parent, and in a session of its own, so that a Ctrl-C typed in
    the terminal reaches the launcher (which then ends the node) and not the node."""
    os.setsid()
    end_with_parent()


def shown_path(path):
    """`path` relative to the current directory when it lies below it, else absolute."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def describe_status(status):
    """A subprocess return code in words: `status 1` or `signal SIGKILL`."""
    if status is not None and status < 0:
        return "signal %s" % signal.Signals(-status).name
    return "status %s" % status


class Cluster:
    """A VDE switch and `nodes` QEMU nodes on it.

    disk: node 0's disk image, written to; None boots node 0 from the system disk
    in snapshot mode, as every other node does. console: node 0's console is the
    launcher's own stdin/stdout and the other consoles go to files in `logs` (the
    command line's way); otherwise every node is a harness.Node with pipes (the
    tests' way). extra_per_node(k) gives more QEMU arguments for node k.
    wait_prompt: with pipes, wait until every node shows its shell prompt."""

    def __init__(self, nodes=DEFAULT_NODES, disk=None, logs=None, console=False, extra_per_node=None,
                 kernel=KERNEL, boot_timeout=60, wait_prompt=True):
        if not 1 <= nodes <= MAX_NODES:
            raise ClusterError("the node count must be between 1 and %d, not %d" % (MAX_NODES, nodes))
        self.count = nodes
        self.console = console
        self.procs = []               # the QEMU process of node k, k = 0..count-1
        self.nodes = []               # with pipes: the harness.Node of node k
        self.reported = set()         # nodes whose exit exited() has already returned
        self.switch = None
        self.private = tempfile.mkdtemp(prefix="demos-cluster-")
        self.switch_dir = os.path.join(self.private, "switch")
        self.logs = logs if logs else (DEFAULT_LOGS if console else self.private)
        atexit.register(self.close)
        try:
            os.makedirs(self.logs, exist_ok=True)
            try:
                self._start_switch()
                self._start_nodes(disk, extra_per_node or (lambda k: []), kernel)
            except FileNotFoundError as e:
                raise ClusterError("%s: not found (scripts/setup.sh installs it)" % e.filename) from None
            if wait_prompt and not console:
                for k, node in enumerate(self.nodes):
                    try:
                        node.expect(r"\$ ", boot_timeout)
                    except Exception as e:
                        raise ClusterError("node %d did not reach its prompt: %s" % (k, e)) from None
        except BaseException:
            self.close()
            raise

    def _start_switch(self):
        """Start vde_switch in the foreground with a pipe as its stdin: it ends by
        itself at end of input, that is when the launcher ends. Wait for its socket."""
        log_path = os.path.join(self.logs, "switch.log")
        with open(log_path, "w") as log:
            self.switch = subprocess.Popen([SWITCH, "--sock", self.switch_dir], stdin=subprocess.PIPE,
                                           stdout=subprocess.DEVNULL, stderr=log,
                                           preexec_fn=detach_and_end_with_parent)
        deadline = time.monotonic() + 5
        while not os.path.exists(os.path.join(self.switch_dir, "ctl")):
            if self.switch.poll() is not None or time.monotonic() > deadline:
                with open(log_path) as log:
                    raise ClusterError("%s did not start: %s" % (SWITCH, log.read().strip()))
            time.sleep(0.01)

    def _snapshot_disk(self, disk):
        """The image nodes 1..N-1 boot from in snapshot mode: the system disk, or a
        private copy of it when node 0 writes to the system disk itself (QEMU
        refuses to open an image another QEMU writes, and a copy taken at the start
        does not change under the other nodes' feet)."""
        if self.count > 1 and disk and os.path.exists(disk) and os.path.samefile(disk, SYSTEM_DISK):
            copy = os.path.join(self.private, "system-disk.img")
            shutil.copyfile(SYSTEM_DISK, copy)
            return copy
        return SYSTEM_DISK

    def _start_nodes(self, disk, extra_per_node, kernel):
        """Start every node's QEMU, plugged into the switch with its MAC address."""
        shared = self._snapshot_disk(disk)
        for k in range(self.count):
            if k == 0 and disk:
                drive = disk_args(disk, 0)
            else:
                drive = disk_args(shared, 0, snapshot=True)
            net = ["-netdev", "vde,id=n0,sock=%s" % self.switch_dir,
                   "-device", "virtio-net-device,netdev=n0,mac=%s" % node_mac(k, self.count)]
            command = qemu_command(kernel, extra=drive + net + list(extra_per_node(k)))
            if not self.console:
                node = Node(command=command, wait_prompt=False, preexec_fn=detach_and_end_with_parent)
                self.nodes.append(node)
                self.procs.append(node.proc)
            elif k == 0:
                self.procs.append(subprocess.Popen(command, preexec_fn=end_with_parent))
            else:
                with open(self.log_path(k), "w") as log:
                    self.procs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                                       stderr=subprocess.STDOUT,
                                                       preexec_fn=detach_and_end_with_parent))

    def log_path(self, k):
        """The file node k's console goes to (with console=True, for k >= 1)."""
        return os.path.join(self.logs, "node%d.log" % k)

    def start_line(self):
        """The line the launcher prints when the cluster is up."""
        return "cluster: %d node%s, switch at %s, logs in %s" % (
            self.count, "" if self.count == 1 else "s", self.switch_dir, shown_path(self.logs))

    def node(self, k):
        """Node k as a harness.Node (with pipes only): expect(), command(), type()."""
        return self.nodes[k]

    def pid(self, k):
        """The process id of node k's QEMU."""
        return self.procs[k].pid

    def kill(self, k):
        """Kill node k's QEMU at once (SIGKILL), as a crash would end it."""
        if self.procs[k].poll() is None:
            self.procs[k].kill()
            self.procs[k].wait()

    def exited(self):
        """[(k, status)] for every node that has ended since the last call."""
        ended = []
        for k, proc in enumerate(self.procs):
            if k not in self.reported and proc.poll() is not None:
                self.reported.add(k)
                ended.append((k, proc.returncode))
        return ended

    def exit_message(self, k, status):
        """The line reporting that node k ended with `status`."""
        where = "; see %s" % shown_path(self.log_path(k)) if self.console and k > 0 else ""
        return "cluster: node %d exited (%s)%s" % (k, describe_status(status), where)

    def wait_node0(self, report=None):
        """Wait until node 0 exits and return its status; call report(line) for
        each other node that exits meanwhile (the cluster goes on without it)."""
        watched = {}
        try:
            for k, proc in enumerate(self.procs):
                if k not in self.reported:
                    watched[os.pidfd_open(proc.pid)] = k
            while True:
                ready, _, _ = select.select(list(watched), [], [])
                for fd in ready:
                    k = watched.pop(fd)
                    os.close(fd)
                    status = self.procs[k].wait()
                    self.reported.add(k)
                    if k == 0:
                        return status
                    if report:
                        report(self.exit_message(k, status))
        finally:
            for fd in watched:
                os.close(fd)

    def close(self):
        """Stop every node (SIGTERM, SIGKILL after STOP_GRACE seconds), then the
        switch, and remove the private directory. Safe to call more than once."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for proc in self.procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for node in self.nodes:
            node.kill()               # the node has ended: this closes its pipes
        if self.switch is not None:
            self.switch.stdin.close()
            self.switch.terminate()
            try:
                self.switch.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.switch.kill()
                self.switch.wait()
        shutil.rmtree(self.private, ignore_errors=True)
        atexit.unregister(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Stop(Exception):
    """A signal (SIGTERM, SIGHUP) asked the launcher to end the cluster."""
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def raise_stop(signum, frame):
    """Signal handler: end the cluster through the normal clean-up path."""
    raise Stop(signum)


def report(line):
    """Print a line of the launcher's on stderr; on a terminal, which QEMU keeps in
    raw mode, end it with a carriage return too."""
    print(line, end="\r\n" if sys.stderr.isatty() else "\n", file=sys.stderr, flush=True)


def parse_arguments(argv):
    """The command line's options."""
    parser = argparse.ArgumentParser(
        prog="cluster.py",
        description="Boot a cluster of DEMOS/MP nodes on a VDE switch. Node 0's console is this "
                    "terminal (or piped input and output); the other consoles go to log files. "
                    "`halt` on node 0 ends the cluster with node 0's exit status; Ctrl-C or "
                    "SIGTERM ends it with a non-zero status; another node that exits is "
                    "reported and the rest go on.",
        epilog="example: printf 'run hello\\nhalt\\n' | python3 scripts/cluster.py --nodes 3")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, metavar="N",
                        help="how many nodes (1..%d; default %d)" % (MAX_NODES, DEFAULT_NODES))
    parser.add_argument("--disk", default=SYSTEM_DISK, metavar="IMAGE",
                        help="node 0's disk image, written to (default: the system disk, "
                             "build/disk.img); the other nodes boot from the system disk in "
                             "snapshot mode")
    parser.add_argument("--logs", default=DEFAULT_LOGS, metavar="DIR",
                        help="where nodeK.log (node K's console) and switch.log go "
                             "(default build/cluster)")
    parser.add_argument("--gdb", metavar="SOCKET",
                        help="start node 0 stopped, waiting for GDB on the unix socket SOCKET")
    return parser.parse_args(argv)


def main(argv=None):
    """Run the cluster from the command line; return the launcher's exit status."""
    args = parse_arguments(argv)
    if not 1 <= args.nodes <= MAX_NODES:
        print("cluster: --nodes must be between 1 and %d" % MAX_NODES, file=sys.stderr)
        return 2
    if not os.path.exists(args.disk):
        print("cluster: %s: no such disk image" % args.disk, file=sys.stderr)
        return 2
    gdb = ["-gdb", "unix:%s,server=on,wait=off" % args.gdb, "-S"] if args.gdb else []
    terminal = None
    if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
        terminal = termios.tcgetattr(0)          # QEMU sets raw mode; put it back however we end
    signal.signal(signal.SIGTERM, raise_stop)
    signal.signal(signal.SIGHUP, raise_stop)
    cluster = None
    status = 1
    try:
        cluster = Cluster(args.nodes, disk=args.disk, logs=args.logs, console=True,
                          extra_per_node=lambda k: gdb if k == 0 else [])
        print(cluster.start_line(), file=sys.stderr, flush=True)
        node0 = cluster.wait_node0(report=report)
        status = node0 if node0 >= 0 else 128 - node0
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT
    except Stop as stop:
        status = 128 + stop.signum
    except ClusterError as e:
        print("cluster: %s" % e, file=sys.stderr)
        status = 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)     # a second Ctrl-C must not cut the clean-up short
        if cluster:
            cluster.close()
        if terminal:
            termios.tcsetattr(0, termios.TCSADRAIN, terminal)
    return status


if __name__ == "__main__":
    sys.exit(main())
