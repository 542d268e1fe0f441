"""The console as a new user meets it: the prompt comes once every machine of
the cluster has joined (or after 30 s, with a message naming the missing
ones), so that `run @K` works at once; piped input is flow-controlled end to
end (no byte is lost however much is piped in); a line longer than the shell
takes is refused with a message and not run; bytes >= 0x80 (UTF-8) are kept,
and backspace erases a whole UTF-8 character; the shell quotes as a POSIX
shell does for '...', "..." and backslash, and quotes protect >, >>, &, |;
a program's line to standard error, its first included, is one write."""
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

from harness import DMTRACE, Node, run_make
from cluster import Cluster

node = None


def booted():
    global node
    if node is None:
        node = Node()
    return node


def teardown():
    if node:
        node.kill()


def feed(n, data):
    """Write `data` to node n's console from a thread of its own (the node
    stops reading its input while its own buffers are full, and the test
    must go on reading its output meanwhile); returns the thread."""
    def write():
        n.proc.stdin.write(data)
        n.proc.stdin.flush()
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


# ---- 1. the prompt once every machine has joined ----

def test_make_run_runs_on_every_machine_at_once():
    """The new user's script: the shell's first commands run on machines 2
    and 3, which must have joined by the time the prompt appears."""
    status, out = run_make("run", input=b"run @2 hello\nrun @3 hello\nhalt\n")
    assert status == 0, out
    assert "not up" not in out, out
    for k in (2, 3):
        assert re.search(r"hello from process %d\.\d+\.\d+ on machine %d\n" % (k, k), out), out


def test_a_machine_that_does_not_join_is_named_after_30_s_and_waited_for_by_run():
    """Machine 0 drops every frame from machine 2 during its first 36 s
    (net.deaf): the process manager starts the shell after 30 s, saying that
    machine 2 has not joined and that the other machines have heard of it;
    `run @2` then waits for it instead of failing, and `run @7` (no machine
    of the cluster) fails at once."""
    start = time.monotonic()
    with Cluster(4, bootargs_per_node=lambda k: "net.deaf.machine=2 net.deaf.ms=36000" if k == 0 else "",
                 boot_timeout=60) as cluster:
        n = cluster.node(0)
        waited = time.monotonic() - start
        assert 28 <= waited <= 45, "the prompt came after %.1f s" % waited
        assert re.search(r"pm: after 30 s, machine 2 has not joined \(machine 0 has not heard of it; "
                         r"machines 1, 3 have\): the shell starts without it\n", n.output), n.output
        asked = time.monotonic()
        out = n.command("run @2 hello", timeout=30)
        assert re.search(r"hello from process 2\.\d+\.\d+ on machine 2\n", out), out
        assert time.monotonic() - asked > 1, "run @2 did not have to wait"
        asked = time.monotonic()
        out = n.command("run @7 hello")
        assert out == "run: @7: the cluster has no machine 7 (its machines are 0 to 3)\n", out
        assert time.monotonic() - asked < 2


# ---- 2. no input byte lost ----

# The console's echo of what is piped in and the shell's output interleave
# at any byte; the commands below print "WORD ." (echo's one blank between
# words) and are typed as "WORD  ." (two), so that the output is told
# apart from the echo. Each output line is one write, never cut.

def test_ten_thousand_piped_lines_are_each_run_in_order():
    n = Node()
    try:
        lines = 10000
        start = time.monotonic()
        writer = feed(n, b"".join(b"echo L%d  .\n" % i for i in range(lines)) + b"echo done  .\n")
        n.expect(r"done \.\n", 50)
        elapsed = time.monotonic() - start
        writer.join(5)
        printed = [int(x) for x in re.findall(r"L(\d+) \.\n", n.output)]
        assert printed == list(range(lines)), "%d lines printed, first wrong at %s" % (
            len(printed), next((i for i, x in enumerate(printed) if x != i), len(printed)))
        print("  note: %d piped lines run in %.1f s" % (lines, elapsed))
    finally:
        n.kill()


def test_seven_hundred_appends_all_reach_the_file():
    """The new user's 700 lines of `echo L$i >> /log`: every one in /log, in order."""
    n = booted()
    lines = 700
    feed(n, b"".join(b"echo L%d >> /log\n" % i for i in range(lines)) + b"echo appended  .\n")
    n.expect(r"appended \.\n", 50)
    n.expect(r"\$ ", 10)
    out = n.command("cat /log")
    assert out == "".join("L%d\n" % i for i in range(lines)), out[-500:]


# ---- 3. long lines refused ----

def test_a_line_longer_than_the_shell_takes_is_refused_and_not_run():
    n = booted()
    line = "echo " + "x" * 4995
    out = n.command(line)
    assert out == "shell: a line of 5000 bytes is too long (the limit is 1023 bytes): not run\n", out[:300]
    assert n.command("echo after") == "after\n"
    longest = "echo " + "y" * 1018
    assert n.command(longest) == "y" * 1018 + "\n"
    assert n.command(longest + "z") == \
        "shell: a line of 1024 bytes is too long (the limit is 1023 bytes): not run\n"


# ---- 4. UTF-8 kept ----

def test_utf8_is_kept_and_backspace_erases_a_whole_character():
    n = booted()
    assert n.command("echo café ünïcödé €") == "café ünïcödé €\n"
    n.type("echo café\x7fe\n")
    n.expect(r"\ncafe\n", 10)
    n.expect(r"\$ ", 10)
    n.type("echo a€\x7f\x7fb\n")
    n.expect(r"\nb\n", 10)
    n.expect(r"\$ ", 10)


# ---- 5. quoting ----

def test_quotes_and_backslashes_make_words():
    n = booted()
    assert n.command("echo \"a  b\"") == "a  b\n"
    assert n.command("echo 'a  \"b\"  c'") == "a  \"b\"  c\n"
    assert n.command(r'echo "x \"y\" \\ z \n"') == "x \"y\" \\ z \\n\n"
    assert n.command(r"echo 'no \escape\'") == "no \\escape\\\n"
    assert n.command(r"echo a\ \ b \'c\' \\") == "a  b 'c' \\\n"
    assert n.command("echo it''s \"\" x") == "its  x\n"
    assert n.command("echo ab\"cd ef\"'gh'") == "abcd efgh\n"


def test_quotes_protect_the_shells_syntax():
    n = booted()
    assert n.command("echo \"a > b\"") == "a > b\n"
    assert n.command("echo 'a >> b' '&'") == "a >> b &\n"
    assert n.command(r"echo a \> b \&") == "a > b &\n"
    assert n.command("echo 'x | y'") == "x | y\n"
    out = n.command("echo x | cat")
    assert out == "shell: | (a pipe) is not supported; quote it to mean the character itself\n", out
    assert n.command("echo a & echo b") == "shell: & may only end a command\n"


def test_quoted_words_reach_programs_and_files_whole():
    n = booted()
    assert n.command("echo x > \"/a b\"") == ""
    assert n.command(r"echo y > /a\ c") == ""
    assert n.command("echo z>'/a d'") == ""
    out = n.command("ls /")
    for name in ("a b", "a c", "a d"):
        assert name + "\n" in out, out
    assert "a\\\n" not in out, out
    assert n.command("cat \"/a b\" '/a c' /a\\ d") == "x\ny\nz\n"
    assert n.command("echo more >> '/a b'") == ""
    assert n.command("cat '/a b'") == "x\nmore\n"


def test_an_unterminated_quote_is_an_error_and_nothing_runs():
    n = booted()
    assert n.command("echo \"abc > /q1") == "shell: no closing \" in the line: not run\n"
    assert n.command("echo 'abc > /q2") == "shell: no closing ' in the line: not run\n"
    assert n.command("echo abc\\") == "shell: a \\ ends the line (nothing to escape): not run\n"
    out = n.command("ls /")
    assert "q1" not in out and "q2" not in out, out


# ---- 6. a line is one write ----

def test_a_programs_first_error_line_is_one_write_to_the_console():
    """A program's line to standard error, even its first, reaches the console
    in one write, as a line to standard output does: else other output (the
    shell's prompt, another program's lines) comes between its pieces, and a
    program on another machine pays a network round trip for each piece.
    Counted as SENDs over the console link (slot 2) in the programs' metered
    records: ls and fsseq on machine 1 each print one error line, hello one
    line to standard output."""
    traces = tempfile.mkdtemp(prefix="dm-console-")
    try:
        with Cluster(2, trace_disks=traces) as cluster:
            cluster.wait_joined()
            n = cluster.node(0)
            n.command("filter start t - -")
            printed = ""
            for command in ("ls /nodir", "fsseq /nodir/x 4", "hello"):
                printed += n.command("meter -F t -e SEND run @1 %s" % command)
            n.command("filter stop t", timeout=60)
            log = os.path.join(traces, "t.log")
            subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace0.img"), log], check=True,
                           capture_output=True)
            dump = subprocess.run([DMTRACE, "dump", log], check=True, capture_output=True, text=True).stdout
        assert "ls: /nodir: not found\n" in printed and "fsseq: /nodir/x: cannot make it" in printed, printed
        writes = {}
        for pid in re.findall(r"^SEND .* pid=(\S+) .* sendLink=2 ", dump, re.M):
            writes[pid] = writes.get(pid, 0) + 1
        assert sorted(writes.values()) == [1, 1, 1], "console writes by each program: %s\n%s" % (writes, printed)
    finally:
        shutil.rmtree(traces, ignore_errors=True)
