#!/usr/bin/env python3
"""cluster.py -- boot a cluster of N nodes on one virtual Ethernet switch.

    python3 scripts/cluster.py [--nodes N] [--disk IMAGE] [--kernel ELF] [--logs DIR] [--faults SPEC]
                               [--place SPEC] [--trace-disks DIR] [--gdb NODES] [--gdb-dir DIR]

starts an unprivileged VDE switch (vde_switch) and N QEMU nodes plugged into
it, each booting the kernel ELF (default build/kernel.elf; a lab's kernel, such
as build/labs/forwarding/kernel.elf, for `make run LAB=forwarding`). Node 0's
console is this terminal (or the piped input and output); the
other nodes' consoles go to DIR/node1.log ... (default build/cluster/). `halt`
on node 0 ends the whole cluster, with node 0's exit status; Ctrl-C or SIGTERM
ends it with a non-zero status. A node other than 0 that exits or crashes is
reported on stderr with QEMU's last message, and so is one whose kernel has
printed nothing FIRST_LINE_TIMEOUT seconds after its QEMU started; the others
go on. No QEMU, vde_switch or wirefilter
process of the cluster outlives the launcher, however it ends, and a small
cleaner process removes the launcher's private directory in /tmp even when the
launcher is killed outright.

Every node gets the cluster's key as the boot argument net.key=KEY (32 hex
digits): its kernel seals every frame it sends with it and drops every frame
not sealed with it (kernel/net/cluster.c). The launcher makes a fresh key for
each cluster from the host's secure random source, or takes --key KEY.

Node K of N has the MAC address 52:54:00:4d:NN:KK (NN = N, KK = K, two hex
digits each): the kernel learns from it which node it is and how many there are.
Node 0 boots from IMAGE (default build/disk.img, written to) and runs the
process manager, the file system and the shell; the other nodes run only
their kernels, and node 0's `run @K PROG` runs programs there. They get the
system disk in snapshot mode too (their writes are thrown away). --place
"bm=1 dm=2" runs those file-system processes on those machines (see
parse_place).

With --trace-disks DIR every node K also gets a trace disk, DIR/traceK.img,
for the DPM filter started on it: made blank (build/tools/dmtrace blank,
64 MiB) when it is missing and kept when it is there, so that the host reads
the logs on them after the cluster has ended (dmtrace extract). It is each
node's last disk, disk 1: disk 0 is the system disk on every node (node 0's
own, the others' in snapshot mode). Each node K also gets a live trace
channel, a virtio console whose bytes go to the file DIR/liveK.bin (emptied
when the cluster starts): a filter started with `filter start -l` streams its
log there as it writes it, for `dpm live` to follow.

With --faults SPEC (e.g. "loss=10 dup=5 delay=2"; see parse_faults) every node
gets a switch of its own, joined to the central switch by a VDE wirefilter
that loses, duplicates and delays the frames going into the node:

    node K -- switch-nodeK -- wirefilter -- switch (central) -- ... other nodes

so every frame from one node to another crosses exactly one faulty wire, the
receiver's (each receiver of a broadcast loses its copy independently).

With --gdb NODES ("1", "0,2" or "all"; see parse_gdb) those nodes start
stopped at their first instruction, each waiting for GDB on its own unix
socket, DIR/nodeK.sock (--gdb-dir, default build/gdb/), which the launcher
prints; the others boot at once. Every node then gets the boot argument
net.patient=1, so that no kernel takes a machine stopped in GDB to be down
(kernel/net/remote.c, remote_init), and a node waiting for GDB is not
reported for printing nothing. `gdb-multiarch -ex 'set $node = K' -x
scripts/gdbinit` (make gdb-attach NODE=K) attaches to node K; the cluster
joins once GDB lets the nodes run (docs/testing.md, "Debugging with GDB").

As a module, for tests (every console is a pipe, driven by harness.Node):

    with Cluster(nodes=4, faults="loss=10") as cluster:
        cluster.wait_joined()     # node 0's process manager knows every machine
        cluster.node(0).command("run @2 hello")
        cluster.kill(2)
        cluster.exited()          # [(2, -9)]: nodes that ended since the last call
        cluster.restart(2)        # node 2 boots again, with a new epoch
        cluster.node(2).output    # the new boot's console
"""
import argparse
import atexit
import ctypes
import math
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import time

from harness import ROOT, KERNEL, SYSTEM_DISK, DMTRACE, Node, assert_no_unlisted_errors, disk_args, qemu_command

DEFAULT_NODES = 4
# The largest cluster, tested (tests/test_cluster.py; docs/cluster.md, "How
# large a cluster"). The process manager holds a process-control link to every
# other machine's kernel in its link table of DM_NLINKS (64) slots, beside
# about 10 of its own: 40 machines leave it 15 for filters, trace disks and
# live channels; past about 52 it cannot take them all. (The MAC address
# convention, kernel/net/netframe.h, would allow 255.)
MAX_NODES = 40
DEFAULT_LOGS = os.path.join(ROOT, "build", "cluster")
DEFAULT_GDB_DIR = os.path.join(ROOT, "build", "gdb")   # nodeK.sock, as scripts/gdbinit expects
SWITCH = "vde_switch"
WIREFILTER = "wirefilter"             # Debian's vde-wirefilter package names it so, not vde_wirefilter
STOP_GRACE = 5                        # seconds a process has to end after SIGTERM before SIGKILL
START_TIMEOUT = 5                     # seconds a switch or wirefilter has to come up
FIRST_LINE_TIMEOUT = 15               # seconds a node's kernel has to print its first line after QEMU starts
FIRST_LINE = "DEMOS/MP kernel: machine "   # how that line begins (kernel/main.c)
QEMU_MESSAGE = re.compile(r"^qemu-system-riscv64: .*$", re.M)   # what QEMU itself says, on its stderr
SPARE_PORTS = 8                       # switch ports beyond the nodes', for host-side plugs (vde_plug)
PR_SET_PDEATHSIG = 1                  # prctl option, <linux/prctl.h>

# The faults --faults can ask for: key -> (wirefilter option, largest value, meaning).
# Each is applied on the wire into each node: `wirefilter -v CENTRAL:NODE` calls
# the direction from its first plug to its second LR, so every value is given
# to wirefilter as LR<value>.
FAULTS = {
    "loss":  ("-l", 100, "percentage of frames lost"),
    "burst": ("-L", None, "mean length of a burst of losses, in frames (Gilbert model; with loss)"),
    "dup":   ("-D", 99, "percentage of frames duplicated (a copy is duplicated again with the "
                        "same chance)"),
    "delay": ("-d", None, "extra delay of every frame, in milliseconds"),
}


class ClusterError(Exception):
    pass


KEY_DIGITS = 32                       # the cluster's key: 16 bytes, as hex (kernel/net/siphash.h)


def check_key(key):
    """`key` if it is KEY_DIGITS hex digits, as the kernel takes it; else ClusterError."""
    if not re.fullmatch(r"[0-9a-fA-F]{%d}" % KEY_DIGITS, key):
        raise ClusterError("key: %r is not %d hex digits" % (key, KEY_DIGITS))
    return key


def parse_faults(spec):
    """The faults of a FAULTS specification such as "loss=10 dup=5 delay=2" (keys
    separated by spaces or commas, each at most once, values non-negative numbers)
    as a dict {key: value}; ClusterError names what is wrong."""
    faults = {}
    for item in spec.replace(",", " ").split():
        key, equals, value = item.partition("=")
        if key not in FAULTS or not equals:
            raise ClusterError("faults: %r is not KEY=VALUE with KEY one of %s" % (item, ", ".join(FAULTS)))
        if key in faults:
            raise ClusterError("faults: %s given twice" % key)
        try:
            number = float(value)
        except ValueError:
            raise ClusterError("faults: %s=%s: not a number" % (key, value)) from None
        largest = FAULTS[key][1]
        if not math.isfinite(number) or number < 0 or (largest is not None and number > largest):
            allowed = "from 0 to %d" % largest if largest is not None else "0 or more"
            raise ClusterError("faults: %s=%s: must be a number %s" % (key, value, allowed))
        faults[key] = number
    return faults


def parse_gdb(spec, count):
    """The nodes a --gdb specification names, as a sorted list: "all", or node
    numbers below `count` separated by commas or spaces ("1", "0,2");
    ClusterError names what is wrong."""
    if spec.strip() == "all":
        return list(range(count))
    nodes = set()
    for item in spec.replace(",", " ").split():
        if not item.isdigit() or int(item) >= count:
            raise ClusterError("gdb: %r is not a node number from 0 to %d, nor all" % (item, count - 1))
        nodes.add(int(item))
    if not nodes:
        raise ClusterError("gdb: name the nodes to wait for GDB: a number, a list such as 0,2, or all")
    return sorted(nodes)


def parse_place(spec):
    """The placement of the file system's processes, "bm=1 dm=2 ri=1" (NAME=MACHINE
    items separated by spaces or commas), as [(name, machine)]: node 0's boot
    arguments place.NAME=MACHINE, which the process manager reads (servers/pm.c).
    The disk interface (di) stays on machine 0, with the disk."""
    placed = []
    for item in spec.replace(",", " ").split():
        name, equals, machine = item.partition("=")
        if name not in ("bm", "dm", "ri") or not equals or not machine.isdigit():
            raise ClusterError("place: %r is not NAME=MACHINE with NAME one of bm, dm, ri" % item)
        placed.append((name, int(machine)))
    return placed


def describe_faults(faults):
    """A dict of faults as a FAULTS specification: "loss=10 dup=5"."""
    return " ".join("%s=%g" % (key, value) for key, value in faults.items()) or "none"


def wirefilter_options(faults):
    """The wirefilter options that apply a dict of faults to the wire into a node."""
    options = []
    for key, value in faults.items():
        options += [FAULTS[key][0], "LR%g" % value]
    return options


def node_mac(number, count):
    """The MAC address of node `number` of `count`: 52:54:00:4d:CC:NN."""
    return "52:54:00:4d:%02x:%02x" % (count, number)


def end_with_parent():
    """In a child before it runs QEMU, a switch or a wirefilter: have the kernel send
    it SIGTERM when the launcher dies, even by SIGKILL, so that it does not outlive
    the launcher."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def detach_and_end_with_parent():
    """As end_with_parent, and in a session of its own, so that a Ctrl-C typed in
    the terminal reaches the launcher (which then ends the node) and not the node."""
    os.setsid()
    end_with_parent()


def start_cleaner(directory):
    """A process that removes `directory` once the launcher has ended, however it
    ended: it waits for the end of its input, a pipe only the launcher holds (the
    kernel closes it when the launcher dies, even by SIGKILL). It is in a session of
    its own and not ended with its parent, on purpose."""
    return subprocess.Popen(["sh", "-c", 'cat >/dev/null; rm -rf -- "$1"', "cluster-cleaner", directory],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop_process(proc):
    """End a switch or a wirefilter: close its input (each ends by itself at its
    end), then SIGTERM, then SIGKILL after STOP_GRACE seconds."""
    proc.stdin.close()
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def shown_path(path):
    """`path` relative to the current directory when it lies below it, else absolute."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def describe_status(status):
    """A subprocess return code in words: `status 1` or `signal SIGKILL`."""
    if status is not None and status < 0:
        return "signal %s" % signal.Signals(-status).name
    return "status %s" % status


def bad_node_count(what, nodes):
    """The complaint about a node count outside 1..MAX_NODES, with the reason for
    the maximum when it is above."""
    line = "%s must be between 1 and %d, not %d" % (what, MAX_NODES, nodes)
    if nodes > MAX_NODES:
        line += (" (the process manager keeps a link to every machine's kernel in its table of 64; "
                 "see docs/cluster.md, \"How large a cluster\")")
    return line


def qemu_said(text):
    """The last message QEMU printed of its own in `text` (a node's console
    with QEMU's stderr) as ": MESSAGE", or "" if it printed none."""
    messages = QEMU_MESSAGE.findall(text)
    return ": " + messages[-1] if messages else ""


def wait_joined(node0, count, timeout=30, machines=None, pairs=True):
    """Wait until the process manager (node 0's shell, `ps`, typed into the
    harness.Node node0) knows the kernel of every machine in `machines` (default:
    all `count`), and (with pairs) each of those kernels has heard of every other
    (`netstat` lists the pair up). Under loss the announcements between two
    machines other than 0 may come after machine 0 knows them both; a kernel
    holds what it sends to a machine it has not heard of for up to 5 s, and a
    test under loss should not spend that."""
    wanted = set(range(count) if machines is None else machines)
    deadline = time.monotonic() + timeout
    while True:
        out = node0.command("ps")
        known = {int(m) for m in re.findall(r"^(\d+)\.0\.0 +kernel ", out, re.M)}
        if wanted <= known:
            break
        if time.monotonic() > deadline:
            raise ClusterError("machines %s never joined; ps says:\n%s" % (sorted(wanted - known), out))
        time.sleep(0.2)
    pairs = {(k, m) for k in wanted for m in wanted if k != m} if pairs else set()
    while pairs:
        out = node0.command("netstat")
        up = {(int(k), int(m)) for k, m in re.findall(r"^(\d+) +(\d+) +up ", out, re.M)}
        if pairs <= up:
            return
        if time.monotonic() > deadline:
            raise ClusterError("machines that never heard of each other: %s; netstat says:\n%s"
                               % (sorted(pairs - up), out))
        time.sleep(0.2)


class Cluster:
    """A VDE switch and `nodes` QEMU nodes on it.

    disk: node 0's disk image, written to; None boots node 0 from the system disk
    in snapshot mode, as every other node does. console: node 0's console is the
    launcher's own stdin/stdout and the other consoles go to files in `logs` (the
    command line's way); otherwise every node is a harness.Node with pipes (the
    tests' way). extra_per_node(k) gives more QEMU arguments for node k.
    wait_prompt: with pipes, wait until node 0 shows its shell prompt and every
    other node has booted (it has no shell: machine 0's process manager runs
    its processes, and starts the shell once it knows them all, or after 30 s;
    wait_joined() also waits until their kernels know each other).
    faults: None, or a FAULTS specification ("loss=10 dup=5", see parse_faults):
    each node then has a switch of its own, joined to the central switch by a
    wirefilter that applies the faults to the frames going into the node.
    trace_disks: None, or a directory: node k then gets the trace disk
    DIR/tracek.img as its last disk, made blank if it is missing (trace_disk).
    meter_fs: None, or a machine K: the boot argument meter.fs=K has the
    process manager start a filter "fstrace" on K's trace disk before the file
    system and meter the file system's processes into it from the start.
    bootargs_per_node(k): more boot arguments for node k (a string).
    key: the cluster's key, 32 hex digits (check_key), given to every node as
    net.key; None makes a fresh one (secrets.token_hex), kept in self.key for
    a restarted node.
    first_line_timeout: the seconds a node's kernel has to print its first
    line after its QEMU starts; a node that has not, or whose QEMU exits
    first, did not boot (with wait_prompt, Cluster() raises ClusterError
    naming each such node and why; wait_node0() reports it).
    gdb: node numbers that start stopped, each waiting for GDB on the unix
    socket gdb_socket(k) in gdb_dir (default: build/gdb with console, else
    the cluster's private directory); every node then boots with
    net.patient=1. A node waiting for GDB has no bound on its first line,
    and wait_prompt does not wait for it."""

    def __init__(self, nodes=DEFAULT_NODES, disk=None, logs=None, console=False, extra_per_node=None,
                 kernel=KERNEL, boot_timeout=60, wait_prompt=True, faults=None, place=None, trace_disks=None,
                 meter_fs=None, disk_service_us=None, bootargs_per_node=None, key=None,
                 first_line_timeout=FIRST_LINE_TIMEOUT, gdb=(), gdb_dir=None):
        if not 1 <= nodes <= MAX_NODES:
            raise ClusterError(bad_node_count("the node count", nodes))
        self.count = nodes
        self.key = check_key(key) if key is not None else secrets.token_hex(KEY_DIGITS // 2)
        self.console = console
        self.kernel = kernel
        self.faults = parse_faults(faults) if faults is not None else None
        self.place = parse_place(place) if place else []
        self.trace_disks = trace_disks
        self.meter_fs = meter_fs      # None, or the machine whose filter meters the file system from boot
        self.disk_service_us = disk_service_us   # None, or the modeled service time of node 0's disk
        self.bootargs_per_node = bootargs_per_node or (lambda k: "")   # more boot arguments for node k
        self.procs = []               # the QEMU process of node k, k = 0..count-1
        self.nodes = []               # with pipes: the harness.Node of node k
        self.qemu_extra = []          # node k's QEMU arguments after qemu_command's own
        self.reported = set()         # nodes whose exit exited() has already returned
        self.first_line_timeout = first_line_timeout
        self.gdb = set(gdb)           # the nodes that start waiting for GDB
        self.started = []             # when node k's QEMU started (time.monotonic())
        self.log_start = []           # with console: where node k's current boot begins in its log
        self.switches = []            # the central switch, then node k's switch (with faults)
        self.wirefilters = []         # with faults: the wirefilter into node k
        self.logs_checked = False     # with console: close() has looked at the nodes' logs
        self.private = tempfile.mkdtemp(prefix="demos-cluster-")
        self.cleaner = start_cleaner(self.private)
        self.switch_dir = os.path.join(self.private, "switch")
        self.logs = logs if logs else (DEFAULT_LOGS if console else self.private)
        self.gdb_dir = gdb_dir if gdb_dir else (DEFAULT_GDB_DIR if console else self.private)
        atexit.register(self.close)
        try:
            os.makedirs(self.logs, exist_ok=True)
            if self.gdb:
                os.makedirs(self.gdb_dir, exist_ok=True)
            try:
                with open(os.path.join(self.logs, "switch.log"), "w") as log:
                    self._start_switch(self.switch_dir, log, self.count + SPARE_PORTS)
                if self.faults is not None:
                    for k in range(self.count):
                        self._start_wire(k)
                self._start_nodes(disk, extra_per_node or (lambda k: []))
            except FileNotFoundError as e:
                raise ClusterError("%s: not found (scripts/setup.sh installs it)" % e.filename) from None
            if wait_prompt and not console:
                self._wait_booted()
                for k in range(self.count):
                    if k not in self.gdb:
                        self._wait_prompt(k, boot_timeout)
        except BaseException:
            self.close()
            raise

    def _wait_booted(self):
        """Wait until every node's kernel has printed its first line; then
        ClusterError naming each node that did not boot, and why (boot_failure)."""
        pending = set(range(self.count)) - self.gdb
        failures = []
        while pending:
            for k in sorted(pending):
                failure = self.boot_failure(k)
                if failure is not False:
                    pending.discard(k)
                    if failure:
                        failures.append(failure)
            if pending:
                time.sleep(0.05)
        if failures:
            raise ClusterError("; ".join(failures))

    def console_text(self, k):
        """What node k's current boot has printed so far, QEMU's own messages
        included: its Node's output with pipes, its log file with console
        (node 0's console is then the terminal: "")."""
        if not self.console:
            return self.nodes[k].printed()
        if k == 0:
            return ""
        with open(self.log_path(k), "rb") as log:
            log.seek(self.log_start[k])
            return log.read().decode(errors="replace")

    def boot_failure(self, k):
        """None if node k's kernel has printed its first line; the line saying
        why node k did not boot if its QEMU has exited first or the kernel has
        printed nothing within first_line_timeout seconds of QEMU's start
        (unless it waits for GDB, which may take as long as its user likes);
        False while neither is known yet. With console, node 0 (whose console
        is the terminal) counts as booted."""
        if self.console and k == 0:
            return None
        text = self.console_text(k)
        if FIRST_LINE in text:
            return None
        status = self.procs[k].poll()
        if status is not None:
            cause = "its QEMU exited (%s)%s" % (describe_status(status), qemu_said(text))
        elif k not in self.gdb and time.monotonic() > self.started[k] + self.first_line_timeout:
            cause = "its kernel printed nothing within %g s of its QEMU's start (QEMU runs, pid %d)%s" % (
                self.first_line_timeout, self.procs[k].pid, qemu_said(text))
        else:
            return False
        return "node %d did not %s: %s%s" % (k, "reach its prompt" if k == 0 else "boot", cause, self.see_log(k))

    def see_log(self, k):
        """With console, the end of a line about node k that names its log file
        ("; see build/cluster/node2.log"); else ""."""
        return "; see %s" % shown_path(self.log_path(k)) if self.console and k > 0 else ""

    def _wait_prompt(self, k, timeout):
        """Wait until node k (with pipes) is up: node 0 shows its shell prompt,
        another node says it waits for the process manager (on machine 0)."""
        ready = r"\$ " if k == 0 else r"machine %d: waiting for the process manager" % k
        try:
            self.nodes[k].expect(ready, timeout, since=0)
        except Exception as e:
            raise ClusterError("node %d did not %s: %s" % (k, "reach its prompt" if k == 0 else "boot", e)) from None

    def wait_joined(self, timeout=30, machines=None, pairs=True):
        """The module's wait_joined(), on this cluster's node 0 (with pipes)."""
        wait_joined(self.nodes[0], self.count, timeout, machines, pairs)

    def _start_switch(self, directory, log, plugs):
        """Start vde_switch with its socket in `directory` and room for `plugs`
        plugs, in the foreground with a pipe as its stdin: it ends by itself at
        end of input, that is when the launcher ends. Its messages go to the file
        `log`. Wait for its socket. (vde_switch keeps port 0 for itself and has 32
        ports unless told otherwise; a QEMU that finds every port taken waits
        for one without a word.)"""
        switch = subprocess.Popen([SWITCH, "--sock", directory, "--numports", str(plugs + 1)],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=log, preexec_fn=detach_and_end_with_parent)
        self.switches.append(switch)
        self._wait_start(switch, log.name, lambda: os.path.exists(os.path.join(directory, "ctl")))

    def _wait_start(self, proc, log_path, started):
        """Wait until started() is true; ClusterError with its log if `proc` ends
        first or START_TIMEOUT seconds pass."""
        deadline = time.monotonic() + START_TIMEOUT
        while not started():
            if proc.poll() is not None or time.monotonic() > deadline:
                with open(log_path, errors="replace") as log:
                    raise ClusterError("%s did not start: %s" % (proc.args[0], log.read().strip()))
            time.sleep(0.01)

    def node_switch_dir(self, k):
        """The socket directory node k plugs into: its own switch's with faults,
        else the central switch's."""
        return self.switch_dir + "-node%d" % k if self.faults is not None else self.switch_dir

    def _start_wire(self, k):
        """Start node k's own switch and the wirefilter that joins it to the central
        switch (left plug) and applies the faults from left to right, into the node.
        Both write to nodeK-net.log; wait until the wirefilter has both plugs in, so
        that no frame of the node's boot is lost for want of a wire."""
        log_path = os.path.join(self.logs, "node%d-net.log" % k)
        with open(log_path, "w") as log:
            self._start_switch(self.node_switch_dir(k), log, 2 + SPARE_PORTS)   # the node and the wirefilter
            command = [WIREFILTER, "-v", "%s:%s" % (self.switch_dir, self.node_switch_dir(k)),
                       *wirefilter_options(self.faults)]
            wire = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log, stderr=log,
                                    preexec_fn=detach_and_end_with_parent)
        self.wirefilters.append(wire)

        def plugged():
            with open(log_path, errors="replace") as log:
                return "starting..." in log.read()
        self._wait_start(wire, log_path, plugged)

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

    def _start_nodes(self, disk, extra_per_node):
        """Start every node's QEMU, plugged into its switch with its MAC address."""
        shared = self._snapshot_disk(disk)
        for k in range(self.count):
            if k == 0 and disk:
                drive = disk_args(disk, 0)
            else:
                drive = disk_args(shared, 0, snapshot=True)
            net = ["-netdev", "vde,id=n0,sock=%s" % self.node_switch_dir(k),
                   "-device", "virtio-net-device,netdev=n0,mac=%s" % node_mac(k, self.count)]
            self.qemu_extra.append(drive + net + list(extra_per_node(k)))
            self.procs.append(None)
            self.nodes.append(None)
            self.started.append(None)
            self.log_start.append(0)
            self._start_node(k)

    def trace_disk(self, k):
        """Node k's trace disk image (with trace_disks), made blank by dmtrace if it
        is missing; None without trace disks."""
        if self.trace_disks is None:
            return None
        path = os.path.join(self.trace_disks, "trace%d.img" % k)
        if not os.path.exists(path):
            os.makedirs(self.trace_disks, exist_ok=True)
            try:
                made = subprocess.run([DMTRACE, "blank", path], capture_output=True, text=True)
            except FileNotFoundError:
                raise ClusterError("%s: not found (make builds it)" % shown_path(DMTRACE)) from None
            if made.returncode != 0:
                raise ClusterError(made.stderr.strip())
        return path

    def live_channel(self, k, again=False):
        """Node k's live trace channel file (with trace_disks), DIR/livek.bin:
        emptied at the cluster's start, appended to by a restarted node; None
        without trace disks."""
        if self.trace_disks is None:
            return None
        path = os.path.join(self.trace_disks, "live%d.bin" % k)
        if not again:
            open(path, "wb").close()
        return path

    def _start_node(self, k, again=False):
        """Start node k's QEMU with a fresh boot epoch (qemu_command makes one).
        again: a restart, whose console log is appended to the first boot's."""
        bootargs = ["place.%s=%d" % p for p in self.place]
        if self.meter_fs is not None:
            bootargs.append("meter.fs=%d" % self.meter_fs)
        if self.disk_service_us:
            bootargs.append("disk.service_us=%d" % self.disk_service_us)
        if k != 0:
            bootargs = []
        if self.gdb:
            bootargs.append("net.patient=1")
        bootargs.append("net.key=%s" % self.key)
        bootargs.append(self.bootargs_per_node(k))
        extra = self.qemu_extra[k]
        if k in self.gdb:
            extra = extra + ["-gdb", "unix:%s,server=on,wait=off" % self.gdb_socket(k), "-S"]
        command = qemu_command(self.kernel, extra=extra, bootargs=" ".join(bootargs).strip(),
                               trace_disk=self.trace_disk(k), live=self.live_channel(k, again))
        self.started[k] = time.monotonic()
        if not self.console:
            node = Node(command=command, wait_prompt=False, preexec_fn=detach_and_end_with_parent)
            self.nodes[k] = node
            self.procs[k] = node.proc
        elif k == 0:
            self.procs[k] = subprocess.Popen(command, preexec_fn=end_with_parent)
        else:
            with open(self.log_path(k), "a" if again else "w") as log:
                self.log_start[k] = log.tell()
                self.procs[k] = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                                 stderr=subprocess.STDOUT, preexec_fn=detach_and_end_with_parent)

    def gdb_socket(self, k):
        """The unix socket on which node k waits for GDB (if it is in gdb)."""
        return os.path.join(self.gdb_dir, "node%d.sock" % k)

    def wait_gdb_sockets(self):
        """Wait until every node waiting for GDB has made its socket (QEMU makes
        it as it starts); ClusterError naming a node whose QEMU exits first or
        that has none after START_TIMEOUT seconds."""
        for k in sorted(self.gdb):
            deadline = time.monotonic() + START_TIMEOUT
            while not os.path.exists(self.gdb_socket(k)):
                if self.procs[k].poll() is not None or time.monotonic() > deadline:
                    raise ClusterError("node %d made no GDB socket %s%s" % (
                        k, shown_path(self.gdb_socket(k)), qemu_said(self.console_text(k))))
                time.sleep(0.02)

    def log_path(self, k):
        """The file node k's console goes to (with console=True, for k >= 1)."""
        return os.path.join(self.logs, "node%d.log" % k)

    def start_line(self):
        """The line the launcher prints when the cluster is up."""
        line = "cluster: %d node%s, switch at %s, logs in %s" % (
            self.count, "" if self.count == 1 else "s", self.switch_dir, shown_path(self.logs))
        if self.faults is not None:
            line += ", faults into each node: %s" % describe_faults(self.faults)
        if self.trace_disks is not None:
            line += ", trace disks in %s" % shown_path(self.trace_disks)
        return line

    def node(self, k):
        """Node k as a harness.Node (with pipes only): expect(), command(), type().
        After restart(k), the Node of the new boot."""
        return self.nodes[k]

    def pid(self, k):
        """The process id of node k's QEMU."""
        return self.procs[k].pid

    def pids(self):
        """The process ids of every process the cluster has running now: QEMU
        nodes, switches, wirefilters and the cleaner."""
        procs = self.procs + self.wirefilters + self.switches + [self.cleaner]
        return [proc.pid for proc in procs if proc is not None and proc.poll() is None]

    def kill(self, k):
        """Kill node k's QEMU at once (SIGKILL), as a crash would end it."""
        if self.procs[k].poll() is None:
            self.procs[k].kill()
            self.procs[k].wait()

    def restart(self, k, wait_prompt=True, boot_timeout=60):
        """Boot node k again, as a reset would: its QEMU is killed if it still runs,
        and a new one starts with the same MAC address and disk and a new boot
        epoch. With pipes, node(k) is then the new boot's Node, and wait_prompt
        waits for its shell prompt. An exit of the old boot that exited() has not
        returned yet is forgotten."""
        self.kill(k)
        if self.nodes[k] is not None:
            self.nodes[k].kill()      # closes the old boot's pipes
        self.reported.discard(k)
        self._start_node(k, again=True)
        if wait_prompt and not self.console:
            self._wait_prompt(k, boot_timeout)
        return self.nodes[k]

    def exited(self):
        """[(k, status)] for every node that has ended since the last call."""
        ended = []
        for k, proc in enumerate(self.procs):
            if k not in self.reported and proc.poll() is not None:
                self.reported.add(k)
                ended.append((k, proc.returncode))
        return ended

    def exit_message(self, k, status):
        """The line reporting that node k ended with `status`, and what QEMU
        itself said last, if anything (a message of its own on its stderr)."""
        return "cluster: node %d exited (%s)%s%s" % (k, describe_status(status), qemu_said(self.console_text(k)),
                                                     self.see_log(k))

    def wait_node0(self, report=None):
        """Wait until node 0 exits and return its status; call report(line) for
        each other node that exits meanwhile (the cluster goes on without it),
        and for each node that has not booted within first_line_timeout
        seconds of its start ("cluster: node 3 did not boot: ...", boot_failure)."""
        watched = {}
        unbooted = set(range(self.count)) - self.reported
        try:
            for k, proc in enumerate(self.procs):
                if k not in self.reported:
                    watched[os.pidfd_open(proc.pid)] = k
            while True:
                for k in sorted(unbooted):
                    failure = self.boot_failure(k)
                    if failure is None or (failure and self.procs[k].poll() is not None):
                        unbooted.discard(k)           # booted, or its exit is reported below
                    elif failure:
                        unbooted.discard(k)
                        if report:
                            report("cluster: " + failure)
                ready, _, _ = select.select(list(watched), [], [], 0.2 if unbooted else None)
                for fd in ready:
                    k = watched.pop(fd)
                    os.close(fd)
                    status = self.procs[k].wait()
                    self.reported.add(k)
                    unbooted.discard(k)
                    if k == 0:
                        return status
                    if report:
                        report(self.exit_message(k, status))
        finally:
            for fd in watched:
                os.close(fd)

    def close(self):
        """Stop every node (SIGTERM, SIGKILL after STOP_GRACE seconds), then the
        wirefilters and the switches, remove the private directory and end the
        cleaner. Safe to call more than once. Then an AssertionError if a
        node's kernel answered a request with an error demos.h does not list
        for it (harness.py, Node.check_kernel_lines; with console, found in
        the other nodes' logs)."""
        procs = [proc for proc in self.procs if proc is not None]
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for proc in procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        found = []
        for node in self.nodes:
            if node is not None:
                try:
                    node.kill()       # the node has ended: this closes its pipes
                except AssertionError as e:
                    found.append(str(e))
        if self.console and not self.logs_checked:
            self.logs_checked = True
            for k in range(1, len(self.procs)):
                if os.path.exists(self.log_path(k)):
                    with open(self.log_path(k), errors="replace") as log:
                        try:
                            assert_no_unlisted_errors(log.read(), "node %d" % k)
                        except AssertionError as e:
                            found.append(str(e))
        for proc in self.wirefilters + self.switches[::-1]:
            stop_process(proc)
        for k in self.gdb:
            try:
                os.unlink(self.gdb_socket(k))
            except FileNotFoundError:
                pass
        shutil.rmtree(self.private, ignore_errors=True)
        self.cleaner.stdin.close()    # it removes what rmtree could not, and ends
        self.cleaner.wait()
        atexit.unregister(self.close)
        if found:
            raise AssertionError("; ".join(found))

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
    sys.stderr.write(line + ("\r\n" if sys.stderr.isatty() else "\n"))   # one write: see main()
    sys.stderr.flush()


def parse_arguments(argv):
    """The command line's options."""
    parser = argparse.ArgumentParser(
        prog="cluster.py",
        description="Boot a cluster of DEMOS/MP nodes on a VDE switch. Node 0's console is this "
                    "terminal (or piped input and output); the other consoles go to log files. "
                    "`halt` on node 0 ends the cluster with node 0's exit status; Ctrl-C or "
                    "SIGTERM ends it with a non-zero status; another node that exits, or does "
                    "not boot within %d s, is reported with its cause and the rest go on." % FIRST_LINE_TIMEOUT,
        epilog="example: printf 'run hello\\nhalt\\n' | python3 scripts/cluster.py --nodes 3")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, metavar="N",
                        help="how many nodes (1..%d; default %d)" % (MAX_NODES, DEFAULT_NODES))
    parser.add_argument("--disk", default=SYSTEM_DISK, metavar="IMAGE",
                        help="node 0's disk image, written to (default: the system disk, "
                             "build/disk.img); the other nodes boot from the system disk in "
                             "snapshot mode")
    parser.add_argument("--kernel", default=KERNEL, metavar="ELF",
                        help="the kernel every node boots (default: the system's, build/kernel.elf)")
    parser.add_argument("--logs", default=DEFAULT_LOGS, metavar="DIR",
                        help="where nodeK.log (node K's console), switch.log and, with --faults, "
                             "nodeK-net.log (node K's switch and wirefilter) go (default build/cluster)")
    parser.add_argument("--faults", metavar="SPEC",
                        help="put a VDE wirefilter on the wire into every node, applying SPEC: "
                             "KEY=VALUE items separated by spaces or commas, e.g. "
                             "'loss=10 dup=5 delay=2'; keys: " +
                             "; ".join("%s, %s" % (key, meaning) for key, (_, _, meaning) in FAULTS.items()))
    parser.add_argument("--place", metavar="SPEC",
                        help="where the file system's processes run: NAME=MACHINE items, e.g. "
                             "'bm=1 dm=2 ri=1' (the disk interface stays on machine 0, with the disk)")
    parser.add_argument("--trace-disks", metavar="DIR",
                        help="give node K the trace disk DIR/traceK.img (its disk 1), for the DPM "
                             "filter on it: made blank with build/tools/dmtrace when missing, kept "
                             "when present, so that `dmtrace extract` reads its log after the cluster "
                             "has ended")
    parser.add_argument("--meter-fs", metavar="K", type=int,
                        help="meter the file system's four processes from their first instruction into "
                             "a filter named fstrace that the process manager starts first on machine K's "
                             "trace disk (needs --trace-disks)")
    parser.add_argument("--disk-service-us", metavar="US", type=int,
                        help="answer every request to node 0's file-system disk no sooner than US "
                             "microseconds of machine time after it started (boot argument "
                             "disk.service_us): a disk whose timing does not depend on the host, "
                             "for measurements")
    parser.add_argument("--gdb", metavar="NODES",
                        help="start those nodes (a number, a list such as 0,2, or all) stopped, each "
                             "waiting for GDB on the unix socket DIR/nodeK.sock (see --gdb-dir); attach "
                             "with: gdb-multiarch -ex 'set $node = K' -x scripts/gdbinit (make gdb-attach "
                             "NODE=K). Every node then boots with net.patient=1: no machine stopped in GDB is "
                             "taken to be down")
    parser.add_argument("--gdb-dir", default=DEFAULT_GDB_DIR, metavar="DIR",
                        help="where the GDB sockets go (default build/gdb, where scripts/gdbinit looks)")
    parser.add_argument("--key", metavar="KEY",
                        help="the cluster's key, %d hex digits, which seals every frame between kernels "
                             "(default: a fresh one)" % KEY_DIGITS)
    return parser.parse_args(argv)


def main(argv=None):
    """Run the cluster from the command line; return the launcher's exit status."""
    args = parse_arguments(argv)
    if not 1 <= args.nodes <= MAX_NODES:
        print("cluster: %s" % bad_node_count("--nodes", args.nodes), file=sys.stderr)
        return 2
    if not os.path.exists(args.disk):
        print("cluster: %s: no such disk image" % args.disk, file=sys.stderr)
        return 2
    if not os.path.exists(args.kernel):
        print("cluster: %s: no such kernel (make builds it)" % args.kernel, file=sys.stderr)
        return 2
    gdb_nodes = []
    try:
        parse_faults(args.faults or "")
        parse_place(args.place or "")
        if args.key is not None:
            check_key(args.key)
        if args.gdb is not None:
            gdb_nodes = parse_gdb(args.gdb, args.nodes)
    except ClusterError as e:
        print("cluster: %s" % e, file=sys.stderr)
        return 2
    if args.meter_fs is not None and (args.trace_disks is None or not 0 <= args.meter_fs < args.nodes):
        print("cluster: --meter-fs K needs --trace-disks and a machine K below --nodes", file=sys.stderr)
        return 2
    terminal = None
    if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
        terminal = termios.tcgetattr(0)          # QEMU sets raw mode; put it back however we end
    signal.signal(signal.SIGTERM, raise_stop)
    signal.signal(signal.SIGHUP, raise_stop)
    cluster = None
    status = 1
    try:
        cluster = Cluster(args.nodes, disk=args.disk, kernel=args.kernel, logs=args.logs, console=True,
                          faults=args.faults, place=args.place, trace_disks=args.trace_disks,
                          meter_fs=args.meter_fs, disk_service_us=args.disk_service_us, gdb=gdb_nodes,
                          gdb_dir=args.gdb_dir, key=args.key)
        cluster.wait_gdb_sockets()
        # One write: node 0's QEMU shares stderr and may report an error at any moment;
        # print() writes the line and its newline separately, and QEMU's text could fall between.
        lines = [cluster.start_line()]
        for k in gdb_nodes:
            lines.append("cluster: node %d waits for GDB on %s: make gdb-attach NODE=%d" % (
                k, shown_path(cluster.gdb_socket(k)), k))
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
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
            try:
                cluster.close()
            except AssertionError as e:
                print("cluster: %s" % e, file=sys.stderr)
                status = status or 1
        if terminal:
            termios.tcsetattr(0, termios.TCSADRAIN, terminal)
    return status


if __name__ == "__main__":
    sys.exit(main())
