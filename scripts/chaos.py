#!/usr/bin/env python3
"""chaos.py -- a seeded fault campaign: random commands, crashes and
reboots against a booted cluster, with the system's invariants checked
after every step.

    python3 scripts/chaos.py --seed N [--steps K] [--nodes N] [--faults SPEC]
        one run of K steps (default 150) and a final halt. The seed decides
        the cluster (1 to 4 nodes, faults on the wires or none) unless
        --nodes and --faults say, and every step's choice.
    python3 scripts/chaos.py [--minutes M] [--runs R] [--first-seed S]
        a campaign: runs of seeds S, S+1, ... until R runs are done or M
        minutes have passed (default 15), a progress line per run.

`make test-chaos` runs the campaign and `make test-chaos SEED=N STEPS=K`
one run (NODES=N and FAULTS=SPEC as for `make run`, FAULTS=none for none).

A run boots a cluster on a fresh 8 MiB disk with a trace disk per node
(build/chaos/seed-N/), then each step, drawn from its own random numbers
(seed and step number: a step's choices do not depend on the steps before
it), does one of: a file command (echo > and >>, cat, cp, mv, rm, mkdir,
ls -l, sync, fsseq into a small or large file, in the foreground, the
background or on another machine, a write that fills the disk); a program
(hello, ping, ps, netstat, fsstat; in the foreground and the background,
`run @K`); kill, stop or resume of a random process, the system's own
included; metering (filter start, stop and stats, meter run, attach, off,
flags and system, lossless and lossy); a bad command or garbage; a kill or
a reboot of a node other than 0; a halt and a boot from the same disk; a
crash of the whole cluster (node 0's QEMU killed) and a boot from the same
disk; a node killed under a program the shell waits for. After each
step it checks the invariants (docs/testing.md, "The chaos campaign"):

  bound     every command returns to the prompt within its bound
  console   node 0's console answers (`echo` of a mark comes back)
  crash     no kernel panic or trap, no process ended by a fault, no kernel
            answer with an error demos.h does not list, no node's QEMU
            gone that was not killed
  files     every file and directory the driver knows for certain (made,
            written and, across a crash, synced) reads back intact: `cat`
            and `ls -l` in the system, `dmfs get` of every file after a halt
  fsck      `dmfs check` finds the disk clean after every halt
  halt      `halt` ends every node with status 0 within its bound
  rejoin    a rebooted node joins again
  metering  every log a filter left reads whole and counts each gap in
            its streams as lost; unless a filter ended without writing
            out what it had taken (killed, or its machine gone), the
            records each kernel made (its `halt` line) are exactly those
            of its boot in the logs plus those it counted lost
  leftover  no QEMU, vde_switch or wirefilter of the run is left after it

A broken invariant ends the run: it prints the seed, the step, the line
that replays it and every command typed with what it printed, and keeps
build/chaos/seed-N/ (the disk, the trace disks and the consoles).
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cluster import Cluster, ClusterError, wait_joined  # noqa: E402
from harness import ROOT, DMFS, DMTRACE, NodeError, UNLISTED_ERROR, make_image  # noqa: E402

DPM = os.path.join(ROOT, "build", "tools", "dpm")
CHAOS_DIR = os.path.join(ROOT, "build", "chaos")
DEFAULT_STEPS = 150
DISK_MB = 8                     # 2048 blocks, about 650 of them free around /bin: quick to fill

# Seconds a command has to return to the prompt. Generous: the host has two
# cores shared with other work, a machine that stopped answering is given up
# after about 4 s, and a wire that loses frames slows everything.
BOUND = 90
BOUND_FILL = 240                # a write that fills the disk
BOUND_HALT = 120
BOUND_BOOT = 120

# The cluster a seed gets, unless --nodes and --faults say.
NODE_CHOICES = (1, 2, 3, 4)
FAULT_CHOICES = (None, None, "loss=5", "loss=10 dup=5", "loss=5 dup=2 delay=1", "loss=15 burst=2")

# The file system's names the steps use: few, so that commands meet.
FILES = ("/f0", "/f1", "/f2", "/f3", "/d0/f0", "/d0/f1", "/d1/f0", "/d0/e0/f0")
DIRS = ("/d0", "/d1", "/d0/e0", "/d2")
FILLS = ("/fill0", "/fill1")
PATHS = FILES + DIRS + FILLS
FILTER_NAMES = ("t", "u", "v")
SYSTEM = ("kernel", "pm", "switchboard", "console", "timer", "di", "bm", "dm", "ri", "shell")
EVENTS = ("SEND", "RECEIVE", "RECEIVECALL", "MESSAGEQUEUED", "CREATELINK", "DESTROYLINK", "MOVEDATA")

# Lines that any command's output may hold besides its own: the kernels'
# and the process manager's notes, the shell's notes of background jobs and
# what the background programs the steps start print.
NOISE = re.compile(r"^(?:machine \d+: .*|pm: .*|\[\d+\.\d+\.\d+\] .*|hello .*|fsseq[ :].*|ping: .*|pong[ :].*"
                   r"|filter \S+: .*)$")
SPACE_ERRORS = ("No space left on device", "disk full", "E_DISKFULL")
# What a kernel prints when it panics or traps, and when a process faults
# (kernel/printf.c, kernel/trap.c).
CRASH_LINES = re.compile(r"kernel panic on machine \d+: [^\n]*|kernel trap: [^\n]*|"
                         r"process \S+ \(\d+\.\d+\.\d+\) killed: [^\n]*")
DIR = "dir"


class Broken(Exception):
    """An invariant did not hold: which, and what was seen."""
    def __init__(self, invariant, detail):
        super().__init__("%s: %s" % (invariant, detail))
        self.invariant = invariant
        self.detail = detail


def xorshift_bytes(seed, n):
    """fsseq's bytes for `seed` (user/lib/workload.h: xorshift64 from
    seed ^ WORKLOAD_SEED_MIX, each number's 8 bytes least significant
    first), n of them."""
    mask = (1 << 64) - 1
    x = (seed ^ 0x9e3779b97f4a7c15) & mask or 1
    out = bytearray()
    while len(out) < n:
        x ^= (x << 13) & mask
        x ^= x >> 7
        x ^= (x << 17) & mask
        out += x.to_bytes(8, "little")
    return bytes(out[:n])


def parent(path):
    return path.rsplit("/", 1)[0] or "/"


def under(path, top):
    """True if path is top or lies below it."""
    return path == top or top == "/" or path.startswith(top + "/")


class FileModel:
    """What the driver knows of the file system outside /bin: entries it
    knows for certain (path -> the file's bytes, or DIR), paths whose state
    it does not know (a failed write, a background writer, a crash: any
    file or directory may be there, or none, at and below them), and the
    paths changed since the last sync (after a crash, those are not
    known)."""

    def __init__(self):
        self.entries = {}
        self.unknown = set()
        self.dirty = set()
        self.busy = set()        # paths a background program may still write: never known

    def is_busy(self, path):
        return any(under(path, b) or under(b, path) for b in self.busy)

    def unsure(self, path):
        """True if path is not known for certain: at or below an unknown path."""
        return path not in self.entries and any(under(path, u) for u in self.unknown)

    def kind(self, path):
        """'file', 'dir', 'none' (known not to exist) or 'unknown'."""
        if path == "/":
            return "dir"
        if path in self.entries:
            return "dir" if self.entries[path] == DIR else "file"
        if self.unsure(path):
            return "unknown"
        up = self.kind(parent(path))
        return "unknown" if up == "unknown" else "none"

    def children(self, path):
        """The names of the entries known to be in directory path."""
        return {p[len(path.rstrip("/")) + 1:] for p in self.entries if p != path and parent(p) == path}

    def may_hold_unknown(self, path):
        """True if directory path may hold entries the model does not know."""
        return any(under(path, u) or parent(u) == path for u in self.unknown)

    def _drop(self, path):
        for p in [p for p in self.entries if under(p, path)]:
            del self.entries[p]
        for u in [u for u in self.unknown if under(u, path)]:
            self.unknown.discard(u)

    def forget(self, path):
        """Path's state (and everything below it) is no longer known."""
        self._drop(path)
        self.unknown.add(path)
        self.dirty.add(path)

    def set_file(self, path, data):
        if self.is_busy(path):
            return self.forget(path)
        self._drop(path)
        self.entries[path] = data
        self.dirty.add(path)

    def mkdir(self, path):
        if self.is_busy(path):
            return self.forget(path)
        self._drop(path)
        self.entries[path] = DIR
        self.dirty.add(path)

    def remove(self, path):
        if self.is_busy(path):
            return self.forget(path)
        self._drop(path)
        self.dirty.add(path)

    def rename(self, source, dest):
        """mv source dest, which worked: what was known of source moves to dest."""
        if self.kind(source) == "unknown" or self.is_busy(source) or self.is_busy(dest):
            self.remove(source)
            self.forget(dest)
            return
        moved = {dest + p[len(source):]: v for p, v in self.entries.items() if under(p, source)}
        unknown = {dest + u[len(source):] for u in self.unknown if under(u, source)}
        self._drop(source)
        self._drop(dest)
        self.entries.update(moved)
        self.unknown |= unknown
        self.dirty |= {source, dest}

    def crash(self):
        """The power went off: what changed since the last sync may be
        anything, and the check at the next start may put what it finds
        unattached in /lost+found."""
        for path in list(self.dirty) + ["/lost+found"]:
            self.forget(path)
        self.dirty.clear()

    def check_and_adopt(self, tree):
        """After a halt, tree (path -> bytes or DIR, from the disk image)
        must hold every entry known for certain as it is known, and nothing
        else outside the unknown paths; then the model is the tree. Broken
        names what differs."""
        for path, value in sorted(self.entries.items()):
            if path not in tree:
                raise Broken("files", "%s (a %s the model holds for certain) is not on the disk"
                             % (path, "directory" if value == DIR else "file of %d bytes" % len(value)))
            if value != tree[path]:
                raise Broken("files", "%s differs on the disk: %s" % (path, describe_difference(value, tree[path])))
        for path in sorted(tree):
            if path not in self.entries and not self.unsure(path):
                raise Broken("files", "%s is on the disk, but the model says it was never made or was removed"
                             % path)
        self.entries = dict(tree)
        self.unknown.clear()
        self.dirty.clear()


def describe_difference(want, got):
    if want == DIR or got == DIR:
        return "expected a %s, found a %s" % ("directory" if want == DIR else "file",
                                               "directory" if got == DIR else "file")
    if len(want) != len(got):
        return "expected %d bytes, found %d" % (len(want), len(got))
    first = next(i for i in range(len(want)) if want[i] != got[i])
    return "%d bytes as expected, but they differ from byte %d on (block %d)" % (len(want), first, first // 4096)


def read_tree(image):
    """The entries of the image outside /bin: path -> bytes or DIR (dmfs ls -R -l, dmfs get)."""
    out = subprocess.run([DMFS, "ls", "-R", "-l", image], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise Broken("fsck", "dmfs ls -R %s failed: %s" % (image, out.stderr.strip()))
    tree = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^(file|dir) +\d+ +\d+ +\d+ (/.*)$", line)
        if not m or under(m.group(2), "/bin"):
            continue
        path = m.group(2)
        if m.group(1) == "dir":
            tree[path] = DIR
        else:
            got = subprocess.run([DMFS, "get", image, path], capture_output=True, timeout=60)
            if got.returncode != 0:
                raise Broken("files", "dmfs get %s %s failed: %s" % (image, path, got.stderr.decode().strip()))
            tree[path] = got.stdout
    return tree


def without_echo(text, line):
    """What a command printed (text, from the moment it was typed to the next
    prompt) without the console's echo of the line typed: the echo comes
    first, and other processes' lines may come before it and between any
    two of its characters (they are kept)."""
    lines = "(?:[^\n]*\n)*?"
    m = re.match("(%s)" % lines + "".join(re.escape(c) + "(%s)" % lines for c in line + "\n"), text)
    if not m:
        return text.split("\n", 1)[1] if "\n" in text else ""
    return "".join(m.groups()) + text[m.end():]


def strip_noise(text):
    """A command's output without the lines that other things print meanwhile."""
    return "".join(line + "\n" for line in text.split("\n")[:-1] if not NOISE.match(line))


class Meter:
    """What the driver knows of the filters and the records of one boot."""

    def __init__(self):
        self.running = {}        # filter name -> (machine, pid)
        self.pending = {}        # machine -> name of the ended filter whose log is on its trace disk
        self.stopped = {}        # filter name -> (kept, lost), from its "stopped" line
        self.logs = []           # (machine, name, {(machine, epoch): records}) of every log read in this boot
        self.logfiles = {}       # running filter's name -> (the file it also logs to, its machine, where
        #                          node 0's console was when it started)
        self.finished_logfiles = {}   # the same, for filters stopped cleanly
        self.disk_records = {}   # (machine, filter name) -> records in its last log read from its trace disk
        self.exact = True        # no filter ended without writing out what it had taken

    def ended_cleanly(self, name):
        """Filter name stopped (filter stop, or halt): its log file, if it has one, is whole."""
        if name in self.logfiles:
            self.finished_logfiles[name] = self.logfiles.pop(name)

    def inexact(self):
        self.exact = False


class Run:
    """One run: a seed, its steps, the cluster and the models."""

    def __init__(self, seed, steps=DEFAULT_STEPS, nodes=None, faults=None, out=print, keep=False):
        config = random.Random("%d/cluster" % seed)
        self.seed = seed
        self.steps = steps
        chosen_nodes, chosen_faults = config.choice(NODE_CHOICES), config.choice(FAULT_CHOICES)
        self.count = nodes if nodes is not None else chosen_nodes
        self.nodes_given, self.faults_given = nodes is not None, faults is not None
        if faults is None:
            faults = chosen_faults
        self.faults = None if faults in (None, "", "none") or self.count == 1 else faults
        self.out = out
        self.keep = keep
        self.dir = os.path.join(CHAOS_DIR, "seed-%d" % seed)
        self.image = os.path.join(self.dir, "disk.img")
        self.traces = os.path.join(self.dir, "traces")
        self.history = []        # (step, what, output)
        self.step_number = 0
        self.cluster = None
        self.up = set()
        self.files = FileModel()
        self.meter = None
        self.boots = self.halts = self.crashes = self.node_kills = 0
        self.checked = {"cat": 0, "ls": 0, "files after halt": 0, "logs": 0, "exact metering": 0}
        self.verbose = False
        self.seen_pids = set()   # every host process of every cluster of the run
        self.privates = []       # every cluster's private directory
        self.scanned = {}        # node -> how much of its output the crash check has read

    # ---- the run ----

    def replay_line(self):
        line = "make test-chaos SEED=%d STEPS=%d" % (self.seed, max(self.step_number, 1))
        if self.nodes_given:
            line += " NODES=%d" % self.count
        if self.faults_given:
            line += " FAULTS=%s" % ("'%s'" % self.faults if self.faults else "none")
        return line

    def describe(self):
        return "seed %d, %d node%s, %s" % (self.seed, self.count, "" if self.count == 1 else "s",
                                           "faults %s" % self.faults if self.faults else "no faults")

    def execute(self):
        """The whole run; returns a summary line, or raises Broken."""
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        make_image(self.image, DISK_MB)
        try:
            self.boot()
            for self.step_number in range(1, self.steps + 1):
                self.step(random.Random("%d/%d" % (self.seed, self.step_number)))
                self.after_step()
            self.step_number = self.steps + 1
            self.record("(the run's last halt)", "")
            self.halt()
        finally:
            self.shut_down()
        self.check_leftovers()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        return "%d steps, %d boots, %d halts, %d crashes, %d node kills; checked: %s" % (
            self.steps, self.boots, self.halts, self.crashes, self.node_kills,
            ", ".join("%s %d" % item for item in self.checked.items()))

    def save_consoles(self):
        """Every node's console of this boot, as build/chaos/seed-N/bootB-nodeK.txt."""
        if not self.cluster:
            return
        for k in range(self.count):
            node = self.cluster.node(k)
            if node is not None:
                with open(os.path.join(self.dir, "boot%d-node%d.txt" % (self.boots, k)), "w") as f:
                    f.write(node.printed())

    def shut_down(self):
        if self.cluster:
            self.save_consoles()
            try:
                self.cluster.close()
            except AssertionError as e:
                raise Broken("crash", str(e))
            finally:
                self.cluster = None

    def report(self, error):
        """The text that says what broke, how to replay it, and what was typed."""
        lines = ["chaos: %s: step %s: invariant %s broken" % (
            self.describe(), self.step_number if self.step_number <= self.steps else "%d (the last halt)"
            % self.step_number, error.invariant),
            "chaos: %s" % error.detail,
            "chaos: replay: %s" % self.replay_line(),
            "chaos: its disk, trace disks and consoles: %s" % os.path.relpath(self.dir, ROOT),
            "chaos: the commands, by step:"]
        for step, what, output in self.history:
            lines.append("  %4d  %s" % (step, what))
            shown = output if len(output) < 1200 else output[:500] + "\n[...]\n" + output[-500:]
            lines += ["          " + line for line in shown.rstrip("\n").split("\n") if line]
        return "\n".join(lines)

    def record(self, what, output):
        self.history.append((self.step_number, what, output))
        if self.verbose:
            self.out("  %4d  %s" % (self.step_number, what))

    # ---- the cluster ----

    def boot(self):
        self.boots += 1
        self.meter = Meter()
        try:
            self.cluster = Cluster(self.count, disk=self.image, trace_disks=self.traces, faults=self.faults,
                                   boot_timeout=BOUND_BOOT, logs=os.path.join(self.dir, "boot%d" % self.boots))
            self.cluster.wait_joined(timeout=BOUND_BOOT)
        except (ClusterError, NodeError) as e:
            raise Broken("bound", "the cluster did not boot and join within %d s: %s" % (BOUND_BOOT, e))
        self.privates.append(self.cluster.private)
        self.seen_pids |= set(self.cluster.pids())
        self.up = set(range(self.count))
        self.scanned = {}
        self.files.busy.clear()
        self.record("(boot %d)" % self.boots, "")

    def node0(self):
        return self.cluster.node(0)

    def command(self, line, bound=BOUND, record=True, meanwhile=None):
        """Type line into node 0's shell; the output up to the next prompt.
        Broken if the prompt does not come within bound seconds. meanwhile():
        done once the line is typed, before waiting for the prompt."""
        node = self.node0()
        text = node.printed()
        # From the start of the line being printed (a background program's,
        # read in part), but after the last prompt.
        start = max(text.rfind("\n") + 1, text.rfind("$ ") + 2 if "$ " in text else 0)
        node.type(line + "\n")
        began = time.monotonic()
        if meanwhile:
            meanwhile()
        try:
            m = node.expect(r"\$ ", bound, since=start)
        except NodeError as e:
            if record:
                self.record(line, node.output[start:])
            raise Broken("bound" if node.proc.poll() is None else "console",
                         "%r did not return to the prompt within %d s%s" % (line, bound, self.snapshot(e)))
        output = without_echo(node.output[start:m.start()], line)
        if record:
            self.record(line + "   (%.1f s)" % (time.monotonic() - began), output)
        return output

    def snapshot(self, error):
        """What every live node's kernel says of its processes (Ctrl-T), for a hang's report."""
        parts = []
        for k in sorted(self.up):
            node = self.cluster.node(k)
            if node.proc.poll() is not None:
                continue
            since = len(node.printed())
            try:
                node.type("\x14")
                time.sleep(2)
                parts.append("node %d's kernel (Ctrl-T):\n%s" % (k, node.printed()[since:].strip()))
            except OSError:
                pass
        return "; %s\n%s" % (str(error).split("\n")[0], "\n".join(parts))

    def after_step(self):
        """The invariants checked after every step."""
        self.check_crashes()
        out = self.command("echo chaos-%d" % self.step_number, record=False)
        if strip_noise(out) != "chaos-%d\n" % self.step_number:
            raise Broken("console", "echo chaos-%d printed %r" % (self.step_number, out))

    def check_crashes(self):
        for k in range(self.count):
            node = self.cluster.node(k)
            if k in self.up and node.proc.poll() is not None:
                raise Broken("crash", "node %d's QEMU ended (status %s) though no step ended it; it printed:\n%s"
                             % (k, node.proc.returncode, node.output[-2000:]))
            text = node.printed()
            new = text[self.scanned.get((k, id(node)), 0):]
            self.scanned[(k, id(node))] = len(text)
            found = CRASH_LINES.findall(new) + UNLISTED_ERROR.findall(new)
            if found:
                raise Broken("crash", "node %d printed: %s" % (k, "; ".join(found)))

    def halt(self):
        """halt node 0, check every node ends, then the disk, the files, the logs."""
        cluster = self.cluster
        node = self.node0()
        start = len(node.printed())
        node.type("halt\n")
        try:
            node.read_to_end(BOUND_HALT)
        except NodeError as e:
            self.record("halt", node.output[start:])
            raise Broken("halt", "node 0 did not end within %d s of halt%s" % (BOUND_HALT, self.snapshot(e)))
        self.record("halt", node.output[start:])
        self.halt_output = node.output[start:]
        status = node.proc.wait()
        if status != 0 or "machine 0: halted" not in node.output[start:]:
            raise Broken("halt", "node 0 ended with status %s after halt" % status)
        outputs = {0: node.output}
        for k in sorted(self.up - {0}):
            other = cluster.node(k)
            try:
                other.read_to_end(BOUND_HALT)
            except NodeError:
                raise Broken("halt", "node %d did not end within %d s of node 0's halt" % (k, BOUND_HALT))
            if other.proc.wait() != 0 or "machine %d: halted" % k not in other.output:
                raise Broken("halt", "node %d ended with status %s after halt" % (k, other.proc.returncode))
            outputs[k] = other.output
        self.check_crashes_in(outputs)
        self.shut_down()
        self.halts += 1
        self.check_leftovers()
        check = subprocess.run([DMFS, "check", self.image], capture_output=True, text=True, timeout=60)
        if check.returncode != 0 or ": clean:" not in check.stdout:
            raise Broken("fsck", "dmfs check after halt: %s%s" % (check.stdout.strip(), check.stderr.strip()))
        self.checked["files after halt"] += len(self.files.entries)
        tree = read_tree(self.image)
        self.files.check_and_adopt(tree)
        self.check_metering(outputs, tree)

    def check_crashes_in(self, outputs):
        for k, text in outputs.items():
            found = CRASH_LINES.findall(text) + UNLISTED_ERROR.findall(text)
            if found:
                raise Broken("crash", "node %d printed: %s" % (k, "; ".join(found)))

    def check_leftovers(self):
        """No host process of the run's clusters is left: none of the pids
        seen, and no process whose command line names the run's folder or a
        cluster's private folder. A few seconds' grace for them to go."""
        deadline = time.monotonic() + 10
        while True:
            left = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit() or int(pid) == os.getpid():
                    continue
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
                    with open("/proc/%s/stat" % pid) as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                except OSError:
                    continue
                if state == "Z":
                    continue
                if int(pid) in self.seen_pids or self.dir in cmdline or any(p in cmdline for p in self.privates):
                    left.append("%s %s" % (pid, cmdline.strip()[:200]))
            if not left:
                return
            if time.monotonic() > deadline:
                raise Broken("leftover", "host processes of the run still there: %s" % "; ".join(left))
            time.sleep(0.2)

    # ---- the steps ----

    def step(self, rng):
        kinds = [(self.file_step, 36), (self.program_step, 12), (self.process_step, 9), (self.meter_step, 18),
                 (self.garbage_step, 10), (self.sync_step, 5), (self.halt_step, 2), (self.crash_step, 1)]
        if self.count > 1:
            kinds.append((self.node_step, 5))
        functions, weights = zip(*kinds)
        rng.choices(functions, weights)[0](rng)

    def words(self, rng):
        return " ".join("x%d" % rng.randrange(100000) for _ in range(rng.randint(1, 8)))

    def machine(self, rng):
        """A machine for `@K`: mostly one that is up, sometimes any of the cluster."""
        if rng.random() < 0.8:
            return rng.choice(sorted(self.up))
        return rng.randrange(self.count)

    def at(self, rng, chance=0.4):
        return "@%d " % self.machine(rng) if self.count > 1 and rng.random() < chance else ""

    # -- files --

    def file_step(self, rng):
        choice = rng.choices(["write", "append", "cat", "cp", "mv", "rm", "mkdir", "ls", "fsseq", "fsseq_bg",
                              "fill", "free"], [14, 8, 10, 8, 7, 8, 7, 8, 8, 3, 2, 3])[0]
        getattr(self, "file_" + choice)(rng)

    def pick(self, rng):
        return rng.choice(PATHS)

    def failed(self, output):
        return strip_noise(output) != ""

    def space_error(self, output):
        return any(s in output for s in SPACE_ERRORS)

    def expect_outcome(self, line, output, should_work, should_fail):
        """The answer agrees with what the model knows for certain: a command
        that must work printed nothing of its own, one that must fail said why."""
        failed = self.failed(output)
        if should_work and failed and not self.space_error(output):
            raise Broken("files", "%r failed, though the model says it must work: %r" % (line, output))
        if should_fail and not failed:
            raise Broken("files", "%r worked, though the model says it must fail" % line)

    def file_write(self, rng, append=False):
        path = rng.choice(FILES) if rng.random() < 0.85 else self.pick(rng)
        text = (self.words(rng) + "\n").encode()
        line = "echo %s %s %s" % (text.decode().strip(), ">>" if append else ">", path)
        output = self.command(line)
        up, here = self.files.kind(parent(path)), self.files.kind(path)
        self.expect_outcome(line, output, up == "dir" and here in ("file", "none"),
                            up in ("none", "file") or here == "dir")
        if not self.failed(output):
            if append and here == "file":
                self.files.set_file(path, self.files.entries[path] + text)
            elif append and here == "unknown":
                self.files.forget(path)
            else:
                self.files.set_file(path, text)
        elif here != "dir":
            self.files.forget(path) if self.space_error(output) or "I/O" in output else None

    def file_append(self, rng):
        self.file_write(rng, append=True)

    def file_cat(self, rng):
        known = [p for p, v in self.files.entries.items() if v != DIR and len(v) < 2048 and v.isascii()]
        path = rng.choice(known) if known and rng.random() < 0.8 else self.pick(rng)
        kind = self.files.kind(path)
        if kind == "unknown" or kind == "file" and not (self.files.entries[path].isascii() and
                                                        len(self.files.entries[path]) < 2048):
            return      # a large file's bytes on the console: one of them could pass for the prompt
        output = self.command("cat %s" % path)
        if kind == "file":
            data = self.files.entries[path]
            if strip_noise(output) != data.decode():
                raise Broken("files", "cat %s printed %r; the model holds %r" % (path, output, data.decode()))
            self.checked["cat"] += 1
        elif kind == "none" and not self.failed(output):
            raise Broken("files", "cat %s worked, though the model says there is no %s" % (path, path))

    def file_cp(self, rng):
        source, dest = self.pick(rng), self.pick(rng)
        line = "cp %s %s" % (source, dest)
        output = self.command(line)
        target = dest + "/" + source.rsplit("/", 1)[1] if self.files.kind(dest) == "dir" else dest
        skind = self.files.kind(source)
        self.expect_outcome(line, output, False, skind in ("none", "dir") or self.files.kind(parent(target)) == "none")
        if not self.failed(output):
            if self.files.kind(dest) == "unknown":
                self.files.forget(dest)
            elif skind == "file":
                self.files.set_file(target, self.files.entries[source])
            else:
                self.files.forget(target)
        elif self.space_error(output) or "I/O" in output:
            self.files.forget(target)

    def file_mv(self, rng):
        source, dest = self.pick(rng), self.pick(rng)
        line = "mv %s %s" % (source, dest)
        output = self.command(line)
        dkind = self.files.kind(dest)
        target = dest + "/" + source.rsplit("/", 1)[1] if dkind == "dir" else dest
        self.expect_outcome(line, output, False, self.files.kind(source) == "none")
        if not self.failed(output):
            if dkind == "unknown":
                self.files.forget(source)
                self.files.forget(dest)
            else:
                self.files.rename(source, target)
        elif not any(e in output for e in ("No such file", "Not a directory", "Is a directory", "not empty",
                                           "Invalid argument", "exists", "File exists")):
            self.files.forget(source)
            self.files.forget(target)

    def file_rm(self, rng):
        path = self.pick(rng)
        line = "rm %s" % path
        output = self.command(line)
        kind = self.files.kind(path)
        empty = kind == "dir" and not self.files.children(path) and not self.files.may_hold_unknown(path)
        full = kind == "dir" and bool(self.files.children(path))
        self.expect_outcome(line, output, kind == "file" or empty, kind == "none" or full)
        if not self.failed(output):
            self.files.remove(path)
        elif kind == "unknown" and not ("not found" in output or "not empty" in output):
            self.files.forget(path)

    def file_mkdir(self, rng):
        path = rng.choice(DIRS) if rng.random() < 0.8 else self.pick(rng)
        line = "mkdir %s" % path
        output = self.command(line)
        kind, up = self.files.kind(path), self.files.kind(parent(path))
        self.expect_outcome(line, output, kind == "none" and up == "dir", kind in ("file", "dir") or
                            up in ("none", "file"))
        if not self.failed(output):
            self.files.mkdir(path)
        elif self.space_error(output) or "I/O" in output:
            self.files.forget(path)

    def file_ls(self, rng):
        dirs = ["/"] + [p for p, v in self.files.entries.items() if v == DIR]
        path = rng.choice(dirs) if rng.random() < 0.8 else self.pick(rng)
        output = self.command("ls -l %s" % path)
        kind = self.files.kind(path)
        if kind == "none" and not self.failed(output):
            raise Broken("files", "ls %s worked, though the model says there is no %s" % (path, path))
        if kind != "dir":
            return
        listed = {}
        for line in strip_noise(output).splitlines():
            m = re.match(r"^(file|dir) +(\d+) +\d+ (.+)$", line)
            if not m:
                raise Broken("files", "ls -l %s printed %r" % (path, output))
            listed[m.group(3)] = (m.group(1), int(m.group(2)))
        if path == "/":
            listed.pop("bin", None)
        for name in self.files.children(path):
            full = (path.rstrip("/") + "/" + name)
            value = self.files.entries[full]
            want = ("dir", None) if value == DIR else ("file", len(value))
            got = listed.get(name)
            if got is None or got[0] != want[0] or (want[1] is not None and got[1] != want[1]):
                raise Broken("files", "ls -l %s: %s is %s; the model holds a %s" % (
                    path, name, "missing" if got is None else "a %s of %d bytes" % got, want[0] if want[0] == "dir"
                    else "file of %d bytes" % want[1]))
        for name in listed:
            full = path.rstrip("/") + "/" + name
            if full not in self.files.entries and not self.files.unsure(full):
                raise Broken("files", "ls -l %s lists %s, which the model says was never made or was removed"
                             % (path, name))
        self.checked["ls"] += 1

    def fsseq_line(self, rng, path, kib, background=False):
        rounds, seed = rng.randint(1, 2), rng.randrange(1000)
        return ("run %sfsseq %s %d %d %d%s" % (self.at(rng), path, kib, rounds, seed, " &" if background else ""),
                rounds, seed)

    def file_fsseq(self, rng):
        path = rng.choice(FILES) if rng.random() < 0.85 else self.pick(rng)
        kib = rng.choice((4, 16, 64, 200, 512))
        line, rounds, seed = self.fsseq_line(rng, path, kib)
        output = self.command(line)
        if re.search(r"^fsseq %s: ok size=%d " % (re.escape(path), kib * 1024), output, re.M):
            self.files.set_file(path, xorshift_bytes(seed * 65536 + rounds - 1, kib * 1024))
        elif self.files.kind(path) != "dir":
            self.files.forget(path)

    def file_fsseq_bg(self, rng):
        path = rng.choice(FILES + FILLS)
        line, _, _ = self.fsseq_line(rng, path, rng.choice((64, 256, 1024)), background=True)
        self.command(line)
        if self.files.kind(path) != "dir":
            self.files.forget(path)
            self.files.busy.add(path)

    def file_fill(self, rng):
        path = rng.choice(FILLS)
        line = "run %sfsseq %s 4000" % (self.at(rng, 0.2), path)
        kind = self.files.kind(path)
        output = self.command(line, BOUND_FILL)
        if kind != "dir":
            self.files.forget(path)
        if kind in ("file", "none") and "fsseq %s: ok" % path not in output and not self.space_error(output) \
                and "is not up" not in output and "does not answer" not in output and "went down" not in output:
            raise Broken("files", "%r neither filled the disk nor worked: %r" % (line, output))

    def file_free(self, rng):
        paths = [p for p in FILLS + FILES if self.files.kind(p) != "none"]
        if not paths:
            return
        line = "rm %s" % " ".join(rng.sample(paths, min(len(paths), rng.randint(1, 3))))
        output = self.command(line)
        for path in line.split()[1:]:
            if "rm: %s:" % path not in output:
                self.files.remove(path)
            elif self.files.kind(path) == "unknown":
                self.files.forget(path)

    def sync_step(self, rng):
        output = self.command("sync")
        if self.failed(output):
            raise Broken("files", "sync failed: %r" % output)
        self.files.dirty.clear()

    # -- programs --

    def program_step(self, rng):
        choice = rng.choices(["hello", "hello_bg", "ping", "ping_bg", "ps", "netstat", "fsstat"],
                             [5, 4, 3, 2, 3, 2, 1])[0]
        if choice == "hello":
            self.command("run %shello" % self.at(rng))
        elif choice == "hello_bg":
            self.command("run %shello %d &" % (self.at(rng), rng.randint(1, 4)))
        elif choice == "ping":
            self.command("run %sping %d" % (self.at(rng), rng.choice((5, 50, 200))))
        elif choice == "ping_bg":
            self.command("run %sping %d &" % (self.at(rng), rng.choice((100, 2000, 1000000))))
        else:
            self.command(choice)

    def processes(self):
        """[(pid, name)] of every process ps lists."""
        found = []
        for line in self.command("ps").splitlines():
            f = line.split()
            if len(f) >= 7 and re.fullmatch(r"\d+\.\d+\.\d+", f[0]):
                found.append((f[0], f[1]))
        return found

    def process_step(self, rng):
        verb = rng.choices(["kill", "stop", "resume"], [6, 2, 2])[0]
        procs = self.processes()
        ours = [p for p in procs if p[1] not in SYSTEM and (p[1] != "filter" or rng.random() < 0.15)]
        pool = ours if ours and rng.random() < 0.7 else procs
        pid, name = pool[int(rng.random() * len(pool))] if pool else ("0.1.1", "pm")
        filters = {p for _, p in self.meter.running.values()}
        if verb == "stop" and pid in filters:
            verb = "kill"     # a filter stopped holds every lossless metered process: what the user asked for
        line = "%s %s" % (verb, pid)
        output = self.command(line)
        if verb != "resume" and name in SYSTEM and name != "kernel" and "a system process" not in output and \
                "no such process" not in output and "does not answer" not in output:
            raise Broken("crash", "%r (%s) was not refused: %r" % (line, name, output))
        if verb == "kill" and pid in filters and not self.failed(output):
            self.filter_gone([n for n, (_, p) in self.meter.running.items() if p == pid][0])

    # -- metering --

    def filter_gone(self, name):
        machine, _ = self.meter.running.pop(name)
        self.meter.pending[machine] = name
        self.meter.logfiles.pop(name, None)
        self.meter.inexact()

    def meter_step(self, rng):
        choice = rng.choices(["start", "stop", "stats", "run", "attach", "off", "flags", "system"],
                             [6, 4, 2, 8, 3, 1, 1, 2])[0]
        running = sorted(self.meter.running)
        if not running and rng.random() < 0.7:
            choice = "start"
        idle = [n for n in FILTER_NAMES if n not in running]
        likely = idle if choice == "start" else running
        name = rng.choice(likely) if likely and rng.random() < 0.8 else rng.choice(FILTER_NAMES)
        if choice == "start":
            machine = self.machine(rng)
            live = "-l " if rng.random() < 0.2 else ""
            if machine in self.meter.pending and machine in self.up:
                self.collect(machine)
            logfile = "/%s.log" % name if rng.random() < 0.25 else ""
            output = self.command("filter start %s@%d %s - -%s" % (live, machine, name, " " + logfile if logfile
                                                                    else ""))
            if logfile:
                self.files.forget(logfile)
                self.files.busy.add(logfile)
            m = re.search(r"^\[(\d+\.\d+\.\d+)\] filter %s$" % name, output, re.M)
            if m:
                self.meter.running[name] = (machine, m.group(1))
                self.meter.finished_logfiles.pop(name, None)
                if logfile:
                    self.meter.logfiles[name] = (logfile, machine, len(self.node0().output))
        elif choice == "stop":
            running = name in self.meter.running
            output = self.command("filter stop %s" % name)
            if running:
                machine, _ = self.meter.running.pop(name)
                m = re.search(r"filter %s: stopped: (\d+) records kept, (\d+) lost" % name, output)
                if m:
                    self.meter.stopped[name] = (int(m.group(1)), int(m.group(2)))
                self.meter.pending[machine] = name
                self.meter.ended_cleanly(name)
                if machine in self.up and "stopped" in output:
                    self.collect(machine)
        elif choice == "stats":
            self.command("filter stats %s" % name)
        elif choice == "run":
            options = ""
            if rng.random() < 0.3:
                options += "-l "
            if rng.random() < 0.2:
                options += "-e %s " % ",".join(rng.sample(EVENTS, rng.randint(1, 3)))
            if rng.random() < 0.2:
                options += "-n "
            if rng.random() < 0.2:
                options += "-a %d " % rng.choice((1, 10, 500))
            program = rng.choice(("hello", "ping %d" % rng.choice((10, 100, 500)), "ls /", "hello 2 &",
                                  "ping 100000 &"))
            line = "meter -F %s %srun %s%s" % (name, options, self.at(rng), program)
            if line.endswith("&"):
                self.command(line)
            else:
                self.command(line)
        elif choice in ("attach", "off", "flags"):
            procs = self.processes()
            jobs = [p for p in procs if p[1] not in SYSTEM and p[1] != "filter"]
            pool = jobs if jobs and rng.random() < 0.8 else procs
            pid = pool[int(rng.random() * len(pool))][0] if pool else "0.1.1"
            if choice == "attach":
                self.command("meter attach -F %s %s%s" % (name, "-l " if rng.random() < 0.3 else "", pid))
            elif choice == "off":
                self.command("meter off %s" % pid)
            else:
                self.command("meter flags %s %s" % (pid, ",".join(rng.sample(EVENTS, rng.randint(1, 3)))))
        else:
            machines = "all" if rng.random() < 0.3 else ",".join(str(k) for k in sorted(
                rng.sample(range(self.count), rng.randint(1, self.count))))
            events = "-e none " if rng.random() < 0.4 else ""
            self.command("meter -F %s %ssystem %s" % (name, events, machines))

    def collect(self, machine):
        """Read the log the ended filter left on machine's trace disk: it
        must read whole, and count every gap in its streams as lost."""
        name = self.meter.pending.pop(machine)
        image = os.path.join(self.traces, "trace%d.img" % machine)
        log = os.path.join(self.dir, "log-%d-%d-%s.log" % (self.boots, len(self.meter.logs), name))
        out = subprocess.run([DMTRACE, "extract", image, log], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            if "no log" in out.stderr + out.stdout:
                return
            raise Broken("metering", "dmtrace extract %s (filter %s): %s" % (image, name, out.stderr.strip()))
        stats = subprocess.run([DPM, "stats", log], capture_output=True, text=True, timeout=120)
        m = re.search(r"^(\d+) records, (\d+) lost \(as the logs count them\), (\d+) missing in sequence gaps$",
                      stats.stdout, re.M)
        if stats.returncode != 0 or not m:
            raise Broken("metering", "dpm stats %s (filter %s on machine %d): %s%s" % (
                log, name, machine, stats.stdout[:500], stats.stderr.strip()))
        records, lost, gaps = (int(g) for g in m.groups())
        if gaps > lost:
            raise Broken("metering", "filter %s's log (machine %d) is missing %d records in sequence gaps but "
                         "counts only %d lost" % (name, machine, gaps, lost))
        kept = self.meter.stopped.pop(name, None)
        if kept is not None and kept[0] != records:
            raise Broken("metering", "filter %s said it kept %d records; its log holds %d" % (name, kept[0], records))
        dump = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True, timeout=300)
        counts = {}
        for k, pid in re.findall(r"^\S+ machine=(\d+) .* pid=0x([0-9a-f]+) ", dump.stdout, re.M):
            key = (int(k), (int(pid, 16) >> 32) & 0xffffff)
            counts[key] = counts.get(key, 0) + 1
        if dump.returncode != 0 or sum(counts.values()) != records:
            raise Broken("metering", "dmtrace dump %s (filter %s) read %d records of %d: %s" % (
                log, name, sum(counts.values()), records, dump.stderr.strip()))
        self.meter.logs.append((machine, name, counts))
        self.meter.disk_records[(machine, name)] = records
        self.checked["logs"] += 1

    def check_metering(self, outputs, tree):
        """After a halt: every log read, and each kernel's records accounted
        for: those it made (its halt line) are those of its boot in the logs
        (by the machine and boot epoch of their process) plus those it
        counted lost. Not when a filter ended without writing out what it
        had taken (killed, or its machine gone)."""
        for name, (machine, _) in list(self.meter.running.items()):
            self.meter.pending[machine] = name
            self.meter.ended_cleanly(name)
        self.meter.running.clear()
        for line in re.findall(r"filter (\S+): stopped: (\d+) records kept, (\d+) lost", self.halt_output):
            self.meter.stopped[line[0]] = (int(line[1]), int(line[2]))
        for machine in sorted(self.meter.pending):
            self.collect(machine)
        for name, (path, machine, since) in sorted(self.meter.finished_logfiles.items()):
            # A filter whose log could not be written said so and counts its
            # records lost from then on; one whose log file found the file
            # system full said where the file ends.
            failed = "filter %s: writing the log failed" % name in outputs[0][since:]
            ended = re.search(r"filter %s: the file system has no room for the log file's block \d+: the log file "
                              r"ends at (\d+) records" % re.escape(name), outputs[0][since:])
            if (machine, name) in self.meter.disk_records and isinstance(tree.get(path), bytes) and not failed:
                self.check_log_file(name, path, tree[path], self.meter.disk_records[(machine, name)],
                                    int(ended.group(1)) if ended else None)
        if not self.meter.exact:
            return
        for k, text in sorted(outputs.items()):
            epoch = int(re.search(r"DEMOS/MP kernel: machine %d of \d+, epoch (\d+)" % k, text).group(1))
            made = sum(int(m) for m in re.findall(r"machine %d: meter: (\d+) records, \d+ batches taken" % k, text))
            lost = sum(int(m) for m in re.findall(r"machine %d: meter: (\d+) records lost:" % k, text))
            logged = sum(log[2].get((k, epoch & 0xffffff), 0) for log in self.meter.logs)
            if made:
                self.checked["exact metering"] += 1
            if made != logged + lost:
                raise Broken("metering", "machine %d's kernel made %d records and counted %d lost, but the logs "
                             "hold %d of its boot (%s)" % (k, made, lost, logged, ", ".join(
                                 "%s from machine %d: %d" % (n, m, sum(c.values())) for m, n, c in self.meter.logs)
                                 or "no log"))

    def check_log_file(self, name, path, data, records, ended_at=None):
        """A filter's log file in the file system holds the same records as
        its trace disk's log; or, if the file system had no room for it
        (ended_at), the records up to where the filter said it ends, and
        every later one counted lost."""
        log = os.path.join(self.dir, "file-%d-%s.log" % (self.boots, name))
        with open(log, "wb") as f:
            f.write(data)
        stats = subprocess.run([DPM, "stats", log], capture_output=True, text=True, timeout=120)
        m = re.search(r"^(\d+) records, (\d+) lost", stats.stdout, re.M)
        held = m and int(m.group(1))
        if stats.returncode != 0 or not m or held != (records if ended_at is None else ended_at) or \
                (ended_at is not None and held + int(m.group(2)) < records):
            raise Broken("metering", "filter %s's log file %s holds %s records (%s lost), its trace disk's log %d%s: "
                         "%s" % (name, path, m.group(1) if m else "no", m.group(2) if m else "?", records,
                                 "" if ended_at is None else "; the filter said it ends at %d" % ended_at,
                                 stats.stderr.strip()[:300]))
        self.checked["logs"] += 1

    # -- bad commands --

    def garbage_step(self, rng):
        choice = rng.random()
        if choice < 0.35:
            alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ./-@_'\"\\|=*?"
            line = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        elif choice < 0.4:
            line = "echo " + "y" * rng.randint(1000, 1100)
        else:
            line = rng.choice([
                "run", "run @", "run @x hello", "run @99 hello", "run @-1 hello", "run /nothing", "run /d0",
                "kill", "kill 1.2", "kill 0.0.0", "kill 255.255.255", "stop 9.9.9", "resume 0.1.1", "stop",
                "meter", "meter -F", "meter -e BOGUS run hello", "meter -a -5 run hello", "meter run",
                "meter attach", "meter attach 0.1.1", "meter off x", "meter flags 0.2.1 NOTHING",
                "meter -F nosuch run hello", "meter system 7", "meter -F t system x",
                "filter", "filter start", "filter start x", "filter start abcdefghijklmnopqrstuvwxyz0 - -",
                "filter start t /nothing -", "filter start t - /nothing", "filter stats", "filter stop nosuch",
                "filter bogus t", "filter start @9 t - -",
                "export =x", "unset", "fsseq", "fsseq /x abc", "fsseq /x 99999999", "cp", "cp /a", "mv /a",
                "cat /nothing", "ls /nothing", "mkdir /", "rm /", "rm /bin", "mkdir /" + "n" * 60,
                "echo > ", "echo a > /f0 > /f1", "echo a &&", "echo a & b", "ls | cat", "echo 'open",
                "echo \"open", "echo a\\", "hello &", "ping x", "ping -5", "cat /bin", "cp /bin /f9",
                "mv / /f9",
            ])
        output = self.command(line)
        for pid, name in re.findall(r"^\[(\d+\.\d+\.\d+)\] filter (\S+)$", output, re.M):
            self.meter.running[name] = (0, pid)

    # -- nodes --

    def node_step(self, rng):
        down = sorted(set(range(1, self.count)) - self.up)
        if down and (rng.random() < 0.6 or len(self.up) == 1):
            k = rng.choice(down)
            self.record("(node %d booted again)" % k, "")
            try:
                self.cluster.restart(k, boot_timeout=BOUND_BOOT)
            except (ClusterError, NodeError) as e:
                raise Broken("rejoin", "node %d did not boot again: %s" % (k, e))
            self.seen_pids |= set(self.cluster.pids())
            self.up.add(k)
            try:
                wait_joined(self.node0(), self.count, timeout=BOUND_BOOT, machines=[0, k], pairs=False)
            except (ClusterError, NodeError) as e:
                raise Broken("rejoin", "node %d booted again but did not join within %d s: %s" % (k, BOUND_BOOT, e))
        else:
            k = rng.choice(sorted(self.up - {0}))
            if rng.random() < 0.3:
                # Under a program of its own that node 0's shell waits for:
                # the shell must come back, and say so.
                delay = rng.uniform(0.2, 2.0)
                self.command("run @%d hello 30" % k, meanwhile=lambda: (time.sleep(delay), self.cluster.kill(k)))
                self.record("(node %d killed %.1f s after the line above was typed)" % (k, delay), "")
            else:
                self.record("(node %d killed)" % k, "")
                self.cluster.kill(k)
            self.node_kills += 1
            self.up.discard(k)
            for name, (machine, _) in list(self.meter.running.items()):
                if machine == k:
                    self.filter_gone(name)

    def halt_step(self, rng):
        self.halt()
        self.boot()

    def crash_step(self, rng):
        """The power goes off on every node at once, and the cluster boots
        again from the same disk: what was synced must be there."""
        self.record("(the whole cluster killed: a power failure)", "")
        self.crashes += 1
        self.shut_down()
        self.check_leftovers()
        for name, (machine, _) in list(self.meter.running.items()):
            self.filter_gone(name)
        for machine in sorted(self.meter.pending):
            self.collect(machine)
        self.files.crash()
        self.boot()


def campaign(first_seed, runs, minutes, steps, nodes, faults, out=print):
    """Runs of seeds first_seed, first_seed + 1, ... until `runs` are done or
    `minutes` have passed; a line per run. Returns the number that broke."""
    began = time.monotonic()
    broken = done = 0
    seed = first_seed
    while (runs is None or done < runs) and (minutes is None or time.monotonic() - began < minutes * 60):
        run = Run(seed, steps, nodes, faults, out=out)
        start = time.monotonic()
        try:
            summary = run.execute()
            out("chaos: run %d: %s: %s: ok (%.0f s)" % (done + 1, run.describe(), summary, time.monotonic() - start))
        except Broken as e:
            broken += 1
            out(run.report(e))
            out("chaos: run %d: %s: BROKEN at step %d: %s (%.0f s)" % (
                done + 1, run.describe(), run.step_number, e.invariant, time.monotonic() - start))
        sys.stdout.flush()
        done += 1
        seed += 1
    out("chaos: %d runs, %d broken, %.0f s" % (done, broken, time.monotonic() - began))
    return broken


def main(argv=None):
    parser = argparse.ArgumentParser(prog="chaos.py", description=__doc__.split("\n\n")[0].split("--")[1].strip(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--seed", type=int, help="one run of this seed")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="steps a run (default %d)" % DEFAULT_STEPS)
    parser.add_argument("--nodes", type=int, choices=range(1, 5), metavar="N",
                        help="the cluster's nodes, 1 to 4 (default: the seed's choice)")
    parser.add_argument("--faults", metavar="SPEC",
                        help="faults on the wires, as make run's FAULTS, or none (default: the seed's choice)")
    parser.add_argument("--first-seed", type=int, default=1, help="the campaign's first seed (default 1)")
    parser.add_argument("--runs", type=int, help="the campaign's number of runs")
    parser.add_argument("--minutes", type=float, help="the campaign's time (default 15 when --runs is not given)")
    parser.add_argument("--keep", action="store_true", help="keep build/chaos/seed-N/ of runs that pass")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each command as it is typed")
    args = parser.parse_args(argv)
    if args.seed is not None:
        run = Run(args.seed, args.steps, args.nodes, args.faults, keep=args.keep)
        run.verbose = args.verbose
        print("chaos: %s, %d steps" % (run.describe(), args.steps))
        start = time.monotonic()
        try:
            summary = run.execute()
        except Broken as e:
            print(run.report(e))
            return 1
        print("chaos: %s: %s: ok (%.0f s)" % (run.describe(), summary, time.monotonic() - start))
        return 0
    minutes = args.minutes if args.minutes is not None or args.runs is not None else 15
    return 1 if campaign(args.first_seed, args.runs, minutes, args.steps, args.nodes, args.faults) else 0


if __name__ == "__main__":
    sys.exit(main())
