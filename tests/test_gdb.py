"""GDB on a node, as `make gdb`, `make run GDB=K` and `make gdb-attach NODE=K`
(scripts/gdbinit) give it: gdb-multiarch in batch mode stops at a kernel
function during boot and at a user program's main, and the backtraces name
the callers; on a cluster of 3 whose node 1 waits for GDB, GDB on node 1
stops in its kernel and in a program run there from node 0's shell, node 1
stays in the cluster through a stop longer than a silent machine is given
otherwise, and nodes 0 and 2 boot and run as always; `make run GDB=1` and
`make gdb-attach NODE=1` do the same from the command line.

Most tests boot their nodes stopped at reset (-S) with the GDB sockets in a
fresh temporary directory, which also holds a copy of the build's ELF files
(so that QEMU and GDB see the same kernel even if build/ is rebuilt meanwhile),
laid out so that scripts/gdbinit itself, with its relative paths
build/kernel.elf, build/gdb/nodeK.sock, build/user/..., is what the test runs.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from harness import Node, ROOT
from cluster import Cluster, ClusterError, parse_gdb

GDB = "gdb-multiarch"
GDBINIT = os.path.join(ROOT, "scripts", "gdbinit")
live = []            # nodes, clusters, gdb processes, process groups and directories to clean up


class ProcessGroup:
    """The process group of a command started in a session of its own (make
    run: make, the launcher, QEMU), to be ended whole."""
    def __init__(self, pgid):
        self.pgid = pgid

    def end(self):
        try:
            os.killpg(self.pgid, signal.SIGTERM)    # the launcher ends its nodes and switch
        except ProcessLookupError:
            pass


def teardown():
    while live:
        thing = live.pop()
        if isinstance(thing, Node):
            thing.kill()
        elif isinstance(thing, Cluster):
            thing.close()
        elif isinstance(thing, ProcessGroup):
            thing.end()
        elif isinstance(thing, subprocess.Popen):
            if thing.poll() is None:
                thing.kill()
                thing.wait()
        else:
            shutil.rmtree(thing, ignore_errors=True)


def build_copy():
    """A temporary directory holding build/kernel.elf and the programs' ELF
    files of build/user and build/servers, and an empty build/gdb/."""
    tmp = tempfile.mkdtemp(prefix="dm-gdb-")
    live.append(tmp)
    os.makedirs(os.path.join(tmp, "build", "gdb"))
    shutil.copy(os.path.join(ROOT, "build", "kernel.elf"), os.path.join(tmp, "build", "kernel.elf"))
    for d in ("user", "servers"):
        shutil.copytree(os.path.join(ROOT, "build", d), os.path.join(tmp, "build", d),
                        ignore=shutil.ignore_patterns("*.o", "*.d"))
    return tmp


def start_gdb(tmp, commands, node=None):
    """Start batch gdb in `tmp` with scripts/gdbinit (on node `node`: $node is
    set first; else on node 0, gdbinit's default) and then `commands`;
    return (gdb process, path of its output)."""
    args = [GDB, "-nx", "-batch"]
    if node is not None:
        args += ["-ex", "set $node = %d" % node]
    args += ["-x", GDBINIT]
    for c in commands:
        args += ["-ex", c]
    out_path = os.path.join(tmp, "gdb.out")
    with open(out_path, "w") as out:
        gdb = subprocess.Popen(args, cwd=tmp, stdin=subprocess.DEVNULL, stdout=out,
                               stderr=subprocess.STDOUT)
    live.append(gdb)
    return gdb, out_path


def start(commands, timeout=10):
    """Boot a node waiting for GDB and start gdb on it with scripts/gdbinit and
    then `commands`; return (node, gdb process, path of gdb's output)."""
    tmp = build_copy()
    sock = os.path.join(tmp, "build", "gdb", "node0.sock")
    node = Node(extra=["-gdb", "unix:%s,server=on,wait=off" % sock, "-S"], wait_prompt=False,
                kernel=os.path.join(tmp, "build", "kernel.elf"))
    live.append(node)
    deadline = time.monotonic() + timeout
    while not os.path.exists(sock):
        assert node.proc.poll() is None, "QEMU exited: %s" % node.proc.stdout.read().decode()
        assert time.monotonic() < deadline, "QEMU made no GDB socket %s" % sock
        time.sleep(0.02)
    gdb, out_path = start_gdb(tmp, commands)
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
    return '$_streq(((struct dm_info *)0x7ffff000)->name, "%s")' % prog


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


# Longer than a silent machine is given before its peers take it to be down
# without net.patient (about 3.8 s: kernel/net/transport.h).
LONG_STOP_S = 5


def test_node_1_of_3_kernel_and_user_breakpoints():
    tmp = build_copy()
    cluster = Cluster(nodes=3, gdb=[1], gdb_dir=os.path.join(tmp, "build", "gdb"), wait_prompt=False,
                      kernel=os.path.join(tmp, "build", "kernel.elf"))
    live.append(cluster)
    cluster.wait_gdb_sockets()
    assert sorted(os.listdir(os.path.join(tmp, "build", "gdb"))) == ["node1.sock"]   # only node 1 waits
    cluster.node(2).expect(r"machine 2: waiting for the process manager", 20, since=0)
    cluster.node(0).expect(r"DEMOS/MP kernel: machine 0 of 3", 20, since=0)
    assert cluster.node(1).printed() == "", "node 1 ran before GDB let it: " + cluster.node(1).printed()
    gdb, out_path = start_gdb(tmp, ["break proc_create", "continue", "bt",
                                    "shell sleep %d" % LONG_STOP_S,
                                    "break-in hello hello.c:main", "continue", "bt", "proc-name",
                                    "proc-symbols", "detach", "node 2"], node=1)
    node0 = cluster.node(0)
    node0.expect(r"\$ ", 30, since=0)        # node 1 ran once GDB continued, and joined
    assert "has not joined" not in node0.output, node0.output
    cluster.wait_joined()
    assert re.search(r"^hello from process 0\.\d+\.\d+ on machine 0$", node0.command("run hello"), re.M)
    assert re.search(r"^hello from process 2\.\d+\.\d+ on machine 2$", node0.command("run @2 hello"), re.M)
    out = node0.command("run @1 hello", timeout=LONG_STOP_S + 30)
    assert re.search(r"^hello from process 1\.\d+\.\d+ on machine 1$", out, re.M), out
    out = finish(gdb, out_path, timeout=LONG_STOP_S + 15)
    assert re.search(r"^Breakpoint 1, proc_create \(name=0x[0-9a-f]+ .*\"hello\"", out, re.M), out
    frame(out, 0, "proc_create", "kernel/proc.c")
    assert re.search(r"^#\d+ .* at kernel/net/remote\.c:\d+$", out, re.M), \
        "the process was not created for a request from machine 0:\n" + out
    assert re.search(r"^Breakpoint 2, main \(", out, re.M), out
    frame(out, 0, "main", "user/programs/hello.c")
    frame(out, 1, "dm_start", "user/lib/syscalls.c")
    assert re.search(r"^hello$", out, re.M), "proc-name did not print hello:\n" + out
    assert out.count("symbols of build/user/programs/hello.elf") == 2, "proc-symbols loaded no hello:\n" + out
    assert "node 2: no build/gdb/node2.sock: is node 2 waiting for GDB" in out, out   # only node 1 is
    assert "(net.patient)" in node0.output and "does not answer" not in node0.printed(), node0.printed()
    assert "machine 1 of 3" in cluster.node(1).printed()
    assert re.search(r"^hello from process 1\.\d+\.\d+ on machine 1$", node0.command("run @1 hello"), re.M)
    cluster.close()            # its nodes hold the system disk, which make run's node 0 writes


def test_make_run_gdb_and_gdb_attach():
    """The command-line path: `make run NODES=2 GDB=1` says where node 1 waits
    and `make gdb-attach NODE=1`, reading GDB commands from a pipe, stops in
    hello run on node 1; then `halt` ends the cluster with status 0."""
    socket = os.path.join(ROOT, "build", "gdb", "node1.sock")
    node = Node(command=["make", "-s", "--no-print-directory", "run", "NODES=2", "GDB=1"], wait_prompt=False,
                preexec_fn=os.setsid)
    live.append(node)
    live.append(ProcessGroup(node.proc.pid))
    node.expect(r"cluster: node 1 waits for GDB on build/gdb/node1\.sock: make gdb-attach NODE=1\n", 60)
    assert os.path.exists(socket)
    gdb = subprocess.Popen(["make", "-s", "--no-print-directory", "gdb-attach", "NODE=1"], cwd=ROOT,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    live.append(gdb)
    gdb.stdin.write("set width 0\nbreak-in hello hello.c:main\ncontinue\nbt\nproc-name\ndetach\nquit\n")
    gdb.stdin.flush()
    node.expect(r"\$ ", 30)
    node.type("run @1 hello\n")
    node.expect(r"hello from process 1\.\d+\.\d+ on machine 1\n", 30)
    out, _ = gdb.communicate(timeout=15)
    assert re.search(r"^Breakpoint 1, main \(", out, re.M), out
    assert re.search(r"^\(gdb node 1\) #0\s+main \(.*\) at user/programs/hello\.c:\d+$", out, re.M), out
    assert re.search(r"^\(gdb node 1\) hello$", out, re.M), out
    assert "has not joined" not in node.output, node.output
    assert node.halt() == 0
    assert not os.path.exists(socket), "the launcher left %s behind" % socket


def test_gdb_node_list_and_its_errors():
    assert parse_gdb("all", 3) == [0, 1, 2]
    assert parse_gdb("2, 0", 3) == [0, 2]
    for bad, says in (("3", "'3' is not a node number from 0 to 2"), ("x", "'x' is not a node number"),
                      ("", "name the nodes")):
        try:
            parse_gdb(bad, 3)
            raise AssertionError("parse_gdb accepted %r" % bad)
        except ClusterError as e:
            assert says in str(e), str(e)
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "cluster.py"), "--nodes", "2", "--gdb", "2"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2 and "cluster: gdb: '2' is not a node number from 0 to 1, nor all" in run.stderr, run
