"""The shell on one node, driven as a user would: type, read what it prints."""
import re
import time
from harness import Node, run_make

node = None


def booted():
    global node
    if node is None:
        node = Node()
    return node


def teardown():
    if node:
        node.kill()


def ps_table(out):
    """pid -> (name, state, node, cpu, links) from `ps` output."""
    rows = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) >= 7:
            rows[f[0]] = (f[1], f[2], int(f[3]), int(f[4]), int(f[5]))
    return rows


def test_boot_to_prompt_quickly():
    start = time.monotonic()
    with Node() as n:
        elapsed = time.monotonic() - start
        assert "DEMOS/MP shell" in n.output
    assert elapsed < 2.0, "reaching the prompt took %.2f s" % elapsed


def test_hello_greets_with_pid_and_machine():
    out = booted().command("run hello")
    assert re.search(r"hello from process 0\.\d+\.\d+ on machine 0\n", out), out


def test_ps_lists_system_processes():
    rows = ps_table(booted().command("ps"))
    names = {r[0] for r in rows.values()}
    for want in ("pm", "switchboard", "console", "timer", "shell"):
        assert want in names, "%s missing from ps: %s" % (want, rows)
    assert all(r[2] == 0 for r in rows.values())
    shell = [r for r in rows.values() if r[0] == "shell"][0]
    assert shell[4] == 3, "the shell holds its three standard links: %s" % (shell,)


def test_background_process_in_ps_with_growing_cpu_then_gone():
    n = booted()
    out = n.command("run hello 3 &")
    m = re.search(r"\[(0\.\d+\.\d+)\] hello", out)
    assert m, out
    pid = m.group(1)
    since = n.seen
    greeting = n.expect(r"hello from process (\S+) on machine (\d+)\n", 10, since)
    assert greeting.group(1) == pid and greeting.group(2) == "0"
    first = ps_table(n.command("ps"))
    time.sleep(0.5)
    second = ps_table(n.command("ps"))
    assert pid in first and pid in second, "%s not in ps" % pid
    assert second[pid][3] > first[pid][3], "CPU did not grow: %s then %s" % (first[pid], second[pid])
    n.expect(r"hello %s: done\n" % re.escape(pid), 30, since)
    time.sleep(0.2)
    assert pid not in ps_table(n.command("ps")), "%s still listed after it ended" % pid


def test_kill_background_process():
    n = booted()
    out = n.command("run hello 100 &")
    pid = re.search(r"\[(\S+)\]", out).group(1)
    if "hello from process %s" % pid not in out:     # its greeting, before the next echo
        n.expect(r"hello from process %s on machine 0\n" % re.escape(pid), 30)
    assert n.command("kill " + pid) == ""
    time.sleep(0.2)
    assert pid not in ps_table(n.command("ps"))
    assert "no such process" in n.command("kill " + pid)


def test_failing_command_shows_its_status():
    n = booted()
    assert "no such program" in n.command("run nosuchprogram")
    assert "exit status 2" in n.command("run pong")     # pong without its argument


def test_echo_and_help():
    n = booted()
    assert n.command("echo one  two three") == "one two three\n"
    out = n.command("help")
    for word in ("run", "ps", "kill", "echo", "halt"):
        assert word in out


def test_ping_pong_pair():
    out = booted().command("run ping 200")
    assert "ping: 200 round trips with pong" in out and "all answered" in out, out


def test_backspace_edits_the_line():
    n = booted()
    n.type("echo abX\x7fc\n")
    n.expect(r"\nabc\n", 10)
    n.expect(r"\$ ", 10)


def test_environment_export_unset_and_per_command():
    """Every program gets HOME and PATH, what export set and unset did not
    remove, and the NAME=VALUE words before its name, for it alone."""
    n = booted()
    assert n.command("libctest env HOME PATH GREETING") == "HOME=/\nPATH=/bin\nGREETING is not set\n"
    assert n.command("export GREETING=hello OTHER=x") == ""
    assert n.command("GREETING=bye run libctest env GREETING OTHER") == "GREETING=bye\nOTHER=x\n"
    assert n.command("libctest env GREETING") == "GREETING=hello\n"
    assert n.command("unset OTHER") == ""
    assert n.command("LATER=1") == ""
    listed = n.command("export")
    for line in ("HOME=/", "PATH=/bin", "GREETING=hello", "LATER=1"):
        assert line + "\n" in listed, listed
    assert "OTHER" not in listed, listed
    assert "not NAME=VALUE" in n.command("export 9=x")
    assert n.command("libctest env DM_STDOUT GREETING > /env.txt") == ""
    assert n.command("cat /env.txt") == "DM_STDOUT=/env.txt\nGREETING=hello\n"
    assert n.command("unset GREETING LATER") == ""


def test_halt_powers_off_cleanly():
    global node
    n = booted()
    assert n.halt() == 0
    assert n.proc.poll() is not None
    node = None


def test_make_run_with_piped_input():
    """`make run` as a script uses it: commands piped in, `halt` ends it."""
    status, out = run_make("run", input=b"run hello\necho piped\nhalt\n")
    assert status == 0, out
    assert re.search(r"hello from process 0\.\d+\.\d+ on machine 0", out), out
    assert "piped" in out and "halted" in out, out
