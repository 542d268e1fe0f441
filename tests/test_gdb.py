"""GDB on a node, as `make gdb` + `gdb-multiarch -x scripts/gdbinit` give it:
gdb-multiarch in batch mode stops at a kernel function during boot and at a
user program's main, and the backtraces name the callers.

Each test boots its own node stopped at reset (-S) with its GDB socket in a
fresh temporary directory, which also holds a copy of the build's ELF files
(so that QEMU and GDB see the same kernel even if build/ is rebuilt meanwhile),
laid out so that scripts/gdbinit itself, with its relative paths
build/kernel.elf, build/gdb.sock, build/user/..., is what the test runs.
"""
import os
import re
import shutil
import subprocess
import tempfile
import time
from harness import Node, ROOT

GDB = "gdb-multiarch"
GDBINIT = os.path.join(ROOT, "scripts", "gdbinit")
live = []            # nodes, gdb processes and directories to clean up


def teardown():
    while live:
        thing = live.pop()
        if isinstance(thing, Node):
            thing.kill()
        elif isinstance(thing, subprocess.Popen):
            if thing.poll() is None:
                thing.kill()
                thing.wait()
        else:
            shutil.rmtree(thing, ignore_errors=True)


def start(commands, timeout=10):
    """Boot a node waiting for GDB and start gdb on it with scripts/gdbinit and
    then `commands`; return (node, gdb process, path of gdb's output)."""
    tmp = tempfile.mkdtemp(prefix="dm-gdb-")
    live.append(tmp)
    os.mkdir(os.path.join(tmp, "build"))
    kernel = os.path.join(tmp, "build", "kernel.elf")
    shutil.copy(os.path.join(ROOT, "build", "kernel.elf"), kernel)
    for d in ("user", "servers"):
        shutil.copytree(os.path.join(ROOT, "build", d), os.path.join(tmp, "build", d),
                        ignore=shutil.ignore_patterns("*.o", "*.d"))
    sock = os.path.join(tmp, "build", "gdb.sock")
    node = Node(extra=["-gdb", "unix:%s,server=on,wait=off" % sock, "-S"], wait_prompt=False,
                kernel=kernel)
    live.append(node)
    deadline = time.monotonic() + timeout
    while not os.path.exists(sock):
        assert node.proc.poll() is None, "QEMU exited: %s" % node.proc.stdout.read().decode()
        assert time.monotonic() < deadline, "QEMU made no GDB socket %s" % sock
        time.sleep(0.02)
    args = [GDB, "-nx", "-batch", "-x", GDBINIT]
    for c in commands:
        args += ["-ex", c]
    out_path = os.path.join(tmp, "gdb.out")
    with open(out_path, "w") as out:
        gdb = subprocess.Popen(args, cwd=tmp, stdin=subprocess.DEVNULL, stdout=out,
                               stderr=subprocess.STDOUT)
    live.append(gdb)
    return node, gdb, out_path


def finish(gdb, out_path, timeout=15):
    """Wait for batch gdb to end; return what it printed."""
    try:
        gdb.wait(timeout)
    except subprocess.TimeoutExpired:
        gdb.kill()
        gdb.wait()
        raise AssertionError("gdb did not finish in %ss; it printed:\n%s" %
                             (timeout, open(out_path).read()))
    with open(out_path) as f:
        return f.read()


def frame(out, n, function, source):
    """The backtrace line `#n ... function (...) at source:LINE`, or fail."""
    m = re.search(r"^#%d\s+(0x[0-9a-f]+ in )?%s \(.*\) at %s:\d+$" %
                  (n, re.escape(function), re.escape(source)), out, re.M)
    assert m, "no frame #%d %s at %s in gdb's output:\n%s" % (n, function, source, out)
    return m.group(0)


def name_is(prog):
    """A GDB condition: the current process's info page names `prog`."""
    name = "((struct dm_info *)0x7ffff000)->name"
    return " && ".join(["%s[%d] == '%s'" % (name, i, c) for i, c in enumerate(prog)] +
                       ["%s[%d] == 0" % (name, len(prog))])


def test_kernel_breakpoint_during_boot():
    node, gdb, out_path = start(["break proc_create", "continue", "bt", "detach"])
    out = finish(gdb, out_path)
    assert re.search(r"^Breakpoint 1, proc_create \(", out, re.M), out
    frame(out, 0, "proc_create", "kernel/proc.c")
    frame(out, 1, "main", "kernel/main.c")
    node.expect(r"\$ ", 10)            # detached, the node boots on to the shell
    node.kill()


def test_user_breakpoint_in_hello_main():
    # pm's symbols first: user-symbols must replace them (both are at 0x40000000).
    node, gdb, out_path = start(["server-symbols pm", "user-symbols hello",
                                 "break hello.c:main if " + name_is("hello"),
                                 "continue", "bt", "proc-name", "detach"])
    node.expect(r"\$ ", 15)            # gdb continued; the shell is up
    node.type("run hello\n")
    out = finish(gdb, out_path)
    assert re.search(r"^Breakpoint 1, main \(", out, re.M), out
    frame(out, 0, "main", "user/programs/hello.c")
    frame(out, 1, "dm_start", "user/lib/syscalls.c")
    assert re.search(r"^hello$", out, re.M), "proc-name did not print hello:\n" + out
    node.expect(r"hello from process \S+ on machine 0\n", 10)   # runs on after detach
    node.kill()
