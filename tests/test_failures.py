"""Nothing hangs, nothing is lost without a word, and every error names its
cause (issue 18, findings 2, 4, 9 and 12): the system's own processes
cannot be killed or stopped from the shell; a file system whose buffer
manager, directory manager and request interpreter went down with their
machine says so at every write, at `run` and at `halt`; a full process
table, disk or switchboard, a name too long, a system process or a filter
given to `meter attach`, and `meter off` of a process that is not metered
each get their own message; a background job on a machine that went down
is reported, and the machine's silence is said once; a program the shell
waits for on a machine that went down gives the prompt back."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

from cluster import Cluster
from harness import Node, ROOT, disk_args, make_image

DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
STATE_CLEAN = 1
workdir = tempfile.mkdtemp(prefix="dm-failures-")
clusters = []


def teardown():
    for c in clusters:
        c.close()
    shutil.rmtree(workdir, ignore_errors=True)


def superblock_state(image):
    with open(image, "rb") as f:
        return struct.unpack_from("<13I", f.read(64))[12]


def pids_by_name(node):
    """name -> pid of every process `ps` lists (the first of each name)."""
    pids = {}
    for line in node.command("ps").splitlines()[1:]:
        f = line.split()
        if len(f) >= 7:
            pids.setdefault(f[1], f[0])
    return pids


SYSTEM = ("pm", "switchboard", "console", "timer", "di", "bm", "dm", "ri", "shell")


def test_the_system_processes_cannot_be_killed_or_stopped_and_halt_still_works():
    image = make_image(os.path.join(workdir, "system.img"), 8)
    with Node(extra=disk_args(image)) as n:
        pids = pids_by_name(n)
        assert n.command("echo kept > /kept") == ""
        for name in SYSTEM:
            for verb in ("stop", "kill"):
                out = n.command("%s %s" % (verb, pids[name]), timeout=10)
                assert out == "%s: %s: a system process: the system cannot go on without it\n" % (
                    verb, pids[name]), (name, out)
        assert pids_by_name(n) == pids, "every system process still runs"
        assert n.command("cat /kept", timeout=10) == "kept\n"
        assert n.halt() == 0
    assert superblock_state(image) == STATE_CLEAN
    got = subprocess.run([DMFS, "get", image, "/kept"], stdout=subprocess.PIPE, check=True).stdout
    assert got == b"kept\n"


def test_a_file_system_whose_machine_went_down_says_so_at_every_write_and_at_halt():
    """bm, dm and ri on machine 1 (place), which is killed: what was synced is on
    the disk; every later file operation and `run` says the file system is
    down, and `halt` says what could not be written back."""
    image = make_image(os.path.join(workdir, "placed.img"), 8)
    c = Cluster(2, disk=image, place="bm=1,dm=1,ri=1")
    clusters.append(c)
    c.wait_joined()
    n = c.node(0)
    assert n.command("echo synced > /synced") == ""
    assert n.command("sync") == ""
    assert n.command("echo unsynced > /unsynced") == ""
    c.kill(1)
    out = without_notes(n.command("echo x > /f", timeout=60))
    assert out == "shell: /f: I/O error\n", out
    out = without_notes(n.command("run ls /", timeout=60))
    assert out == "run: ls: the file system is down\n", out
    out = without_notes(n.command("ls /", timeout=60))
    assert out == "run: ls: the file system is down\n", out
    n.type("halt\n")
    rest = n.read_to_end(timeout=60)
    assert ("pm: halt: the file system's changes since its last sync could not be written back: "
            "its buffer manager (bm) is gone: machine down or unreachable\n") in rest, rest
    got = subprocess.run([DMFS, "get", image, "/synced"], stdout=subprocess.PIPE, check=True).stdout
    assert got == b"synced\n"


def without_notes(out):
    """A command's output without the kernel's notes of other machines."""
    return re.sub(r"(?m)^machine \d+: machine \d+ [^\n]*\n", "", out)


def fill(node, command, limit, until):
    """Type `command` (with i = 0, 1, ... for its %d, if any) until what the
    node prints matches `until` (the match is returned), at most `limit`
    times. Typed, not node.command(): what a background program prints may
    come in the middle of the next line's echo."""
    since = len(node.output)
    for i in range(limit):
        node.type((command % i if "%d" in command else command) + "\n")
        node.expect(r"\$ ", timeout=30)
        time.sleep(0.2)
        node.check_kernel_lines()    # reads what has come
        m = re.compile(until).search(node.output, since)
        if m:
            return m
    raise AssertionError("%r never printed %r" % (command, until))


def test_every_error_names_its_cause():
    image = make_image(os.path.join(workdir, "small.img"), 8)
    c = Cluster(1, disk=image, trace_disks=os.path.join(workdir, "traces"))
    clusters.append(c)
    n = c.node(0)
    pids = pids_by_name(n)
    # A name longer than the file system's 59 bytes.
    long_name = "/" + "a" * 60
    out = n.command("mkdir %s" % long_name)
    assert re.fullmatch(r"mkdir: %s: name too long\n\[\S+\] mkdir: exit status 1\n" % long_name, out), out
    assert n.command("echo x > %s" % long_name) == "shell: %s: File or path name too long\n" % long_name
    assert n.command("mkdir /" + "a" * 59) == ""
    # A filter name longer than a filter's 24 characters.
    name31 = "f" * 31
    assert n.command("filter start %s - -" % name31) == (
        "filter: %s: name too long (a filter's name has at most 24 characters)\n" % name31)
    assert n.command("meter -F %s run hello" % name31) == (
        "meter: %s: name too long (a filter's name has at most 24 characters)\n" % name31)
    # meter attach, flags and off: a system process, a filter, a process not metered, no such filter.
    out = n.command("meter attach %s" % pids["bm"])
    assert out == "meter: %s: a system process or a filter: not metered on request\n" % pids["bm"], out
    out = n.command("filter start t - -", timeout=60)
    filter_pid = re.search(r"\[(\S+)\] filter t", out).group(1)
    out = n.command("meter attach -F t %s" % filter_pid)
    assert out == "meter: %s: a system process or a filter: not metered on request\n" % filter_pid, out
    hello = re.search(r"\[(\S+)\] hello", n.command("run hello 100 &")).group(1)
    if "hello from process %s" % hello not in n.output:   # its greeting, before the next echo
        n.expect(r"hello from process %s on machine 0\n" % re.escape(hello), 30)
    assert n.command("meter off %s" % hello) == "meter: %s: not metered\n" % hello
    assert n.command("meter flags %s SEND" % hello) == "meter: %s: not metered\n" % hello
    assert n.command("meter attach -F nosuch %s" % hello) == "meter: %s: no filter called nosuch\n" % hello
    # A full disk.
    out = n.command("run fsseq /huge 8000", timeout=120)
    assert "fsseq: /huge: write at offset" in out and "E_DISKFULL (disk full)" in out, out
    out = n.command("mkdir /d", timeout=60)
    assert out.startswith("mkdir: /d: disk full\n"), out
    # A full switchboard: pongs register names until it has no room.
    m = fill(n, "run pong name%d &", 60, r"pong: cannot register name\d+: [^\n]*\n")
    assert m.group(0).endswith(": name table full\n"), m.group(0)
    # A full process table: more pongs, each taking name0 over (the switchboard
    # replaces a name's link) and waiting.
    m = fill(n, "run pong name0 &", 130, r"run: pong: [^\n]*\n")
    assert m.group(0) == "run: pong: process table full\n", m.group(0)


def test_a_background_job_on_a_machine_that_went_down_is_reported_and_its_silence_said_once():
    c = Cluster(2)
    clusters.append(c)
    c.wait_joined()
    n = c.node(0)
    out = n.command("run @1 hello 100 &")
    job = re.search(r"\[(1\.\d+\.\d+)\] hello", out).group(1)
    since = len(n.output)
    c.kill(1)
    deadline = time.monotonic() + 60
    notice = "[%s] hello: machine 1 went down\n" % job
    while notice not in n.output[since:] and time.monotonic() < deadline:
        n.command("echo waiting", timeout=60)
        time.sleep(0.5)
    assert notice in n.output[since:], n.output[since:]
    n.command("ps", timeout=60)
    assert n.output[since:].count(notice) == 1, n.output[since:]
    said = n.output[since:].count("machine 0: machine 1 does not answer: taken to be down\n")
    assert said == 1, n.output[since:]


def test_a_foreground_program_on_a_machine_that_goes_down_gives_the_prompt_back():
    """The shell waits for `run @1 hello 100`; machine 1 is killed. No exit
    notice can come from it, and no message goes there: the process
    manager asks the machine of a process someone waits for, once a
    second, whether it is up, so that its kernel notices the silence. The
    shell says the machine went down and gives the prompt back, the
    process is gone from ps, and run @1 says the machine is not up."""
    c = Cluster(2)
    clusters.append(c)
    c.wait_joined()
    n = c.node(0)
    n.type("run @1 hello 100\n")
    m = n.expect(r"hello from process (1\.\d+\.\d+) on machine 1\n", timeout=30)
    job = m.group(1)
    c.kill(1)
    killed = time.monotonic()
    n.expect(r"\[%s\] hello: machine 1 went down\n" % re.escape(job), timeout=30)
    n.expect(r"\$ ", timeout=10)
    assert time.monotonic() - killed < 15, "the prompt came back after %.1f s" % (time.monotonic() - killed)
    assert job not in n.command("ps", timeout=60)
    out = without_notes(n.command("run @1 hello", timeout=60))
    assert out == "run: hello: that machine is not up\n", out
