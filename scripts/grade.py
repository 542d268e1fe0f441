#!/usr/bin/env python3
"""grade.py -- grade the course's labs (docs/labs/), in the manner of xv6's
grade scripts: each test with its points, then the score.

    python3 scripts/grade.py            every lab in labs/ (make grade)
    python3 scripts/grade.py links      the lab in labs/links/ (make grade LAB=links)

prints, for each lab, a line per test and then the score:

    == Lab links (docs/labs/links.md), 2 nodes ==
    == Test links: server found == ok (10 pts)
    == Test links: a passed link carries a note back == FAIL (0/10 pts)
        linkclient lab-a note printed: linkclient: note: no such call or request
    ...
    Score: 50/60

and exits with status 0 on full marks, 1 otherwise (2 for an unknown lab).
It grades what is built: `make grade` builds first.

A lab's grader is labs/NAME/grade.py, a module with

    NODES = 2                                       the cluster the lab needs
    KERNEL = "build/labs/forwarding/kernel.elf"     the kernel it boots, if not
                                                    the system's (a lab whose
                                                    part is in the kernel)

    @test(10, "links: server found")                points, title (time_limit=S)
    def server_found(lab):
        out = lab.command("run linkclient lab-a hello")
        require("linkclient: found" in out, "linkclient printed:\\n" + out)

Its tests run in the order they are written, against one cluster of NODES
nodes booted for the lab (scripts/cluster.py, as the suites of `make test`
boot theirs: node 0 boots from the system disk in snapshot mode, so the
programs are those `make` put in /bin, and every machine has joined before
the first test). A test passes if it returns and fails if it raises; its
Failure's or AssertionError's message says why. A test that runs past its
time limit (TIME_LIMIT seconds unless it says) fails; so does one whose
cluster's node 0 stops answering, and the cluster is then booted afresh for
the next test, with lab.state emptied (a test that needs a server it did not
start itself finds it there, or starts it).

A test marked boot=False is given no cluster: it boots its own, with
lab.boot(nodes, **options) (a disk of its own, trace disks, a modelled
disk service time: scripts/cluster.py's Cluster options), ends it with
lab.halt(), or looks only at what the tests before it found. lab.scratch is
a directory of the lab's own for such files, removed when the lab is graded.
"""
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from cluster import Cluster, ClusterError  # noqa: E402  (found through the path above)
from harness import KERNEL, NodeError  # noqa: E402

LABS = os.path.join(ROOT, "labs")
DPM = os.path.join(ROOT, "build", "tools", "dpm")
TIME_LIMIT = 20            # seconds a test may take unless it says otherwise
DETAIL_LINES = 12          # lines of a failure's explanation printed


class Failure(Exception):
    """A test's verdict that the work is wrong, and why."""


class TimeLimit(Exception):
    """A test ran past its time limit."""


# A lab's grader imports this file as the module grade: run as a script, it
# is that module too, so that both name the same Failure.
sys.modules.setdefault("grade", sys.modules[__name__])


def require(condition, why):
    """Fail the test, saying why, unless condition holds."""
    if not condition:
        raise Failure(why)


def dpm(*args):
    """What `dpm ARGS` printed; fails the test if dpm failed."""
    run = subprocess.run([DPM, *args], capture_output=True, text=True)
    require(run.returncode == 0, "dpm %s failed:\n%s" % (" ".join(args), run.stdout + run.stderr))
    return run.stdout


def test(points, title, time_limit=TIME_LIMIT, boot=True):
    """Mark a lab grader's function as a test worth `points`, shown as `title`;
    boot=False: it is given no cluster (it boots its own, or needs none)."""
    def mark(function):
        function.points, function.title, function.time_limit = points, title, time_limit
        function.boot = boot
        return function
    return mark


class Lab:
    """The cluster a lab's tests run on, and what they keep between them.

    command(line): type a command into node 0's shell; what it printed.
    expect(pattern, since=None): wait for text node 0 prints later (a background
        program's); with since, a position in printed(0), for text printed after it.
    ps(): every process as a dict: pid, name, state, node (where it runs),
        links, home (the machine that created it).
    kill(k): end node k's QEMU at once, as a machine that fails.
    printed(k): what node k's console has printed since it booted.
    state: a dict the lab's tests share, emptied when the cluster is booted again.
    boot(nodes, **options), halt(): a cluster of a test's own (boot=False), or a
        fresh one of the lab's; boot_traced(directory): the same with a blank
        trace disk on every node, in directory.
    scratch: a directory for the lab's files, removed when the lab is graded."""

    def __init__(self, nodes, kernel=KERNEL):
        self.nodes = nodes
        self.kernel = kernel
        self.cluster = None
        self.state = {}
        self.boots = 0
        self.scratch = tempfile.mkdtemp(prefix="dm-grade-")

    def boot(self, nodes=None, **options):
        """Boot the cluster afresh (the one before, if any, is ended): `nodes`
        nodes (the lab's NODES unless given), with scripts/cluster.py's Cluster
        options (disk=IMAGE, trace_disks=DIR, meter_fs=K, disk_service_us=N ...)."""
        self.close()
        self.state = {}
        self.boots += 1
        self.cluster = Cluster(nodes=nodes or self.nodes, kernel=self.kernel, **options)
        self.cluster.wait_joined()

    def boot_traced(self, directory, nodes=None):
        """boot(), with a blank trace disk on every node, in `directory`
        (emptied first)."""
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        self.boot(nodes, trace_disks=directory)

    def halt(self, timeout=30):
        """`halt` on node 0, and the cluster ended; what node 0 printed after
        the command (the process manager's and the kernels' last lines)."""
        node = self.cluster.node(0)
        node.type("halt\n")
        said = node.read_to_end(timeout)
        self.close()
        return said

    def close(self):
        """End the cluster, if one runs."""
        if self.cluster:
            cluster, self.cluster = self.cluster, None
            try:
                cluster.close()
            except AssertionError as e:    # a kernel's error outside demos.h's lists: say so, grade on
                print("grade: note: %s" % e)

    def usable(self):
        """Whether the cluster runs, every node of it."""
        return self.cluster is not None and all(p.poll() is None for p in self.cluster.procs)

    def command(self, line, timeout=20):
        return self.cluster.node(0).command(line, timeout)

    def expect(self, pattern, timeout=10, since=None):
        """The match of regex `pattern` in what node 0 prints from now on, or
        from position `since` of what it has printed."""
        return self.cluster.node(0).expect(pattern, timeout, since)

    def kill(self, k):
        self.cluster.kill(k)

    def printed(self, k):
        return self.cluster.node(k).printed()

    def ps(self):
        rows = []
        for m in re.finditer(r"^(\d+\.\d+\.\d+) +(\S+) +(\S+) +(\d+) +\d+ +(\d+) +\d+ +(\d+)$", self.command("ps"),
                             re.M):
            rows.append({"pid": m.group(1), "name": m.group(2), "state": m.group(3), "node": int(m.group(4)),
                         "links": int(m.group(5)), "home": int(m.group(6))})
        return rows


def on_alarm(signum, frame):
    raise TimeLimit()


def tests_of(module):
    """The module's tests, in the order they are written."""
    tests = [f for f in vars(module).values() if callable(f) and hasattr(f, "points")]
    return sorted(tests, key=lambda f: f.__code__.co_firstlineno)


def explain(error, lab, function):
    """Why a test failed, in a few lines."""
    if isinstance(error, TimeLimit):
        shown = lab.cluster.node(0).printed().rstrip().split("\n")[-3:] if lab.cluster else []
        return "\n".join(["ran past its time limit of %g s; node 0 printed last:" % function.time_limit] +
                         ["  " + line for line in shown])
    if isinstance(error, (Failure, AssertionError, NodeError, ClusterError)):
        text = str(error) or type(error).__name__
    else:
        text = traceback.format_exc()
    lines = text.rstrip().split("\n")
    if len(lines) > DETAIL_LINES:
        lines = lines[:DETAIL_LINES // 2] + ["..."] + lines[-DETAIL_LINES // 2:]
    return "\n".join(lines)


def run_test(lab, function):
    """Run one test within its time limit, on a usable cluster; the points earned."""
    error = None
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, function.time_limit)
    try:
        if function.boot and not lab.usable():
            lab.boot()
        function(lab)
    except Exception as e:
        error = e
        detail = explain(e, lab, function)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if error is None:
        print("== Test %s == ok (%d pts)" % (function.title, function.points))
        return function.points
    print("== Test %s == FAIL (0/%d pts)" % (function.title, function.points))
    for line in detail.split("\n"):
        print("    " + line)
    if not isinstance(error, (Failure, AssertionError)):
        lab.close()        # node 0's shell may still be busy: the next test boots afresh
    return 0


def load(name):
    """The grader module of lab `name`."""
    path = os.path.join(LABS, name, "grade.py")
    spec = importlib.util.spec_from_file_location("lab_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grade(name):
    """Grade lab `name`: (points earned, points possible)."""
    module = load(name)
    tests = tests_of(module)
    handout = "docs/labs/" + name + ".md"
    print("== Lab %s (%s), %d node%s ==" % (name, handout, module.NODES, "" if module.NODES == 1 else "s"))
    sys.stdout.flush()
    kernel = getattr(module, "KERNEL", None)
    lab = Lab(module.NODES, os.path.join(ROOT, kernel) if kernel else KERNEL)
    earned = 0
    try:
        for function in tests:
            earned += run_test(lab, function)
            sys.stdout.flush()
    finally:
        lab.close()
        shutil.rmtree(lab.scratch, ignore_errors=True)
    return earned, sum(f.points for f in tests)


def main(argv):
    labs = sorted(d for d in os.listdir(LABS) if os.path.exists(os.path.join(LABS, d, "grade.py")))
    wanted = argv or labs
    unknown = [w for w in wanted if w not in labs]
    if unknown:
        print("grade: no lab called %s (labs: %s)" % (", ".join(unknown), " ".join(labs)), file=sys.stderr)
        return 2
    start = time.monotonic()
    earned = possible = 0
    for name in wanted:
        got, out_of = grade(name)
        earned, possible = earned + got, possible + out_of
    print("Score: %d/%d" % (earned, possible))
    print("(%.1f s)" % (time.monotonic() - start))
    return 0 if earned == possible else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
