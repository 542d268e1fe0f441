"""The kernel calls, from inside the OS: user/tests/ktest checks every call's
success paths and error returns; each of its checks is reported here as one
test. Then: every error code in kernel/demos.h must have been provoked, and
processes that break the rules are ended without harm to anything else.
The C library: user/tests/libctest in the OS, and the user library's
strtold on the host against glibc's binary128 (tests/strtold_test.c). Last, the harness's side of the check of each request's errors against
demos.h: a node whose kernel printed that it answered a request with an
error demos.h does not list for it fails the test that ended the node."""
import os
import re
import select
import shutil
import subprocess
import tempfile
import harness
from cluster import Cluster
from harness import Node, ROOT, disk_args, make_image

node = None


def teardown():
    if node:
        node.kill()


def error_codes_in_header():
    text = open(os.path.join(ROOT, "kernel", "demos.h")).read()
    errors = re.search(r"#define DM_ERRORS\(X\)(.*?)\n\n", text, re.S).group(1)
    return [name for name in re.findall(r"X\(\s*-?\d+,\s*(E_[A-Z]+),", errors) if name != "E_OK"]


provoked = set()


def test_ktest(report):
    global node
    node = Node()
    out = node.command("run ktest", timeout=300)
    checks = 0
    for line in out.splitlines():
        m = re.match(r"(ok|not ok) (\S+)(?:: (.*))?$", line)
        if m:
            checks += 1
            report("ktest." + m.group(2), m.group(1) == "ok", m.group(3) or "")
        m = re.match(r"provoked (E_[A-Z]+)$", line)
        if m:
            provoked.add(m.group(1))
    assert checks >= 100, "ktest ran only %d checks:\n%s" % (checks, out[-2000:])
    assert re.search(r"ktest: \d+ passed, 0 failed", out), out[-500:]


def test_a_full_disk_provokes_its_error():
    """E_DISKFULL, the one error ktest cannot provoke on the system disk it
    shares: fsseq on an 8 MB image fills it."""
    workdir = tempfile.mkdtemp(prefix="dm-kernel-")
    try:
        image = make_image(os.path.join(workdir, "full.img"), 8)
        with Node(extra=disk_args(image)) as n:
            out = n.command("run fsseq /huge 8000", timeout=120)
        m = re.search(r"fsseq: /huge: write at offset \d+: (E_[A-Z]+) ", out)
        assert m and m.group(1) == "E_DISKFULL", out
        provoked.add(m.group(1))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_device_holder_is_not_moved():
    """E_DEVICE, which a process on one machine gives only when it holds a
    device link: a filter holds its trace disk's, and its kernel refuses to
    move it (KOP_MIGRATE) before it looks where to."""
    workdir = tempfile.mkdtemp(prefix="dm-kernel-")
    try:
        with Cluster(1, trace_disks=os.path.join(workdir, "traces")) as c:
            n = c.node(0)
            pid = re.search(r"\[(\S+)\] filter t", n.command("filter start t - -", timeout=60)).group(1)
            out = n.command("migrate %s @0" % pid)
        assert out == "migrate: %s: it holds a device link: it stays with its device\n" % pid, out
        provoked.add("E_DEVICE")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_every_error_code_is_provoked():
    codes = error_codes_in_header()
    assert len(codes) >= 15, codes
    missing = [c for c in codes if c not in provoked]
    assert not missing, "no test provokes: %s" % ", ".join(missing)


def test_faulting_processes_are_ended_and_the_system_goes_on():
    for how, cause in (("null", "load page fault"), ("kernel-write", "store page fault"),
                       ("info-write", "store page fault"), ("jump-kernel", "instruction page fault"),
                       ("illegal", "illegal instruction"), ("csr", "illegal instruction"),
                       ("stack", "store page fault")):
        out = node.command("run ktest crash " + how)
        assert "killed: " + cause in out, "%s: %s" % (how, out)
        assert "ended by a fault" in out, "%s: %s" % (how, out)
    assert "hello from process" in node.command("run hello")


def test_system_processes_survive_ktest():
    out = node.command("ps")
    for name in ("pm", "switchboard", "console", "timer", "shell"):
        assert re.search(r"\s%s\s" % name, out), out
    assert "ktest" not in out, "a ktest helper was left running:\n" + out


def test_newlib_programs(report):
    """printf, scanf from the console, malloc, strings, clocks, sleep."""
    start = node.seen
    node.type("run libctest\n")
    node.expect(r"type a number and a word: ", 20)
    node.type("42 links\n")
    m = node.expect(r"libctest: (\d+) passed, (\d+) failed\n", 30)
    for line in node.output[start:m.start()].splitlines():
        r = re.match(r"(ok|not ok) (\S+)(?:: (.*))?$", line)
        if r:
            report("libctest." + r.group(2), r.group(1) == "ok", r.group(3) or "")
    assert int(m.group(1)) >= 11 and m.group(2) == "0", m.group(0)
    node.expect(r"\$ ", 10)


def test_strtold_against_the_hosts_binary128():
    """user/lib/strtold.c, compiled for the host (tests/strtold_test.c),
    reads thousands of hard numbers, halfway cases written out in full among
    them, to the same bits, end and errno as glibc's strtof128, in every
    rounding direction; libctest checks the same code in the OS."""
    run = subprocess.run([os.path.join(ROOT, "build", "tools", "strtold_test")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    m = re.match(r"strtold_test: (\d+) checks passed", run.stdout)
    assert m and int(m.group(1)) > 10000, run.stdout


def unlisted_error_line():
    """The line kernel/kreq.c prints for an unlisted error, for KOP_GROW
    answered E_DEAD."""
    with open(os.path.join(ROOT, "kernel", "kreq.c")) as f:
        m = re.search(r'kprintf\("(kernel: %s answered %s, [^"\\]*)\\n"', f.read())
    assert m, "kernel/kreq.c prints no line for an unlisted error"
    return m.group(1) % ("KOP_GROW", "E_DEAD")


def test_a_node_whose_kernel_answered_an_unlisted_error_fails_the_test():
    """A stand-in for a node (a shell script that prints the kernel's line
    after its prompt, where no expect() reads it) fails when it is ended, by
    kill() or by `with`, and when it still runs after the test."""
    line = unlisted_error_line()
    script = "printf 'DEMOS/MP kernel: machine 3 of 4, epoch 1\\n$ '; printf '%s\\n'; exec sleep 60" % line
    for end in ("kill", "with", "after the test"):
        node = Node(command=["sh", "-c", script])
        if line not in node.output:
            select.select([node.proc.stdout], [], [], 10)     # the line is in the pipe, unread
        try:
            if end == "kill":
                node.kill()
            elif end == "with":
                with node:
                    pass
            else:
                harness.check_live_nodes()
        except AssertionError as e:
            assert str(e) == "machine 3 printed: " + line, str(e)
        else:
            raise AssertionError("ended by %s, a node that printed %r passed" % (end, line))
        finally:
            node.kill()        # checks again, and finds nothing new
        assert node not in harness.live_nodes


def test_exit_status_of_exit_return_and_abort():
    """exit(n) (after the atexit handlers, with stdio flushed), return n from
    main and abort() give the status the shell reports."""
    out = node.command("run libctest exit 3")
    assert re.search(r"libctest: exit\(3\) libctest: atexit handler ran\n\[\S+\] libctest: exit status 3\n", out), out
    assert re.search(r"\[\S+\] libctest: exit status 4\n", node.command("run libctest return 4"))
    assert re.search(r"\[\S+\] libctest: exit status 134\n", node.command("run libctest abort"))   # 128 + SIGABRT
    assert node.command("run libctest return 0") == ""
