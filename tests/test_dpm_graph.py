"""The analyzer's graph analyses (analysis/models/: history.c,
parallel.c, contention.c, delays.c, critpath.c, causality.c, tally.c,
arrivals.c, clocks.c, vclock.c; analysis/load/elfsym.c):
tests/dpm_graph_test.c, built with the sanitizers, checks the thesis's
hand-checkable cases of parallelism in all three steps and both contention
algorithms, the longest path against a brute force on hundreds of random
traces, the arc for requests outside the trace, odd traces, the critical
path, causality strings (DPM's Fig. 2 shapes, fan-out, the cut) and the
thesis's Fig. 5.18 counts and probabilities, the delivery-time table,
vector timestamps against reachability, clock offsets on traces of known
skew, and the ELF symbol reader against nm and on damaged files. It also
prints the time of parallelism and the critical path on a million records.

Then the commands over them (`dpm parallelism`, `critpath`, `causality`,
under the sanitizers' build), on logs `dpm generate` writes from the
thesis's hand cases, which also exercises the loading of a whole trace
(dpm_trace_load): their figures, --help, usage errors (status 2) and
damaged logs (status 1, the file and record named).

And `dpm clocks`, `dpm export --shiviz` and `dpm waitstates`: a known skew
found again within its bound, in a hand case and in random traffic; the
ShiViz log read back by the test's own parser, its clocks worked out by
hand and again from its events alone; waits split by hand, and adding up
to dpm stats's blocking time on random traffic."""
import csv
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
from harness import ROOT, tracelog_seal

DPM_GRAPH_TEST = os.path.join(ROOT, "build", "tools", "dpm_graph_test")
DPM = os.path.join(ROOT, "build", "tools", "dpm-sanitized")
BLOCK = 4096
workdir = tempfile.mkdtemp(prefix="dm-dpm-graph-")

# A hand case (thesis §5.2.3): A computes 4, sends to B, computes 6; B
# starts with a RECEIVE, then computes 6 (in thousands of instructions).
# T = 16; with no delivery time, t_max = 16 and P = 1 when they share one
# machine (step 3), t_max = 10 and P = 1.6 on two.
HAND_CASE = """\
process A machine 0 name a
process B machine %d name b
B receive
A compute 4000
A send B 10
A compute 6000
B compute %d
A exit
B exit
"""
# DPM's Fig. 2 shapes: a request from a user U to A, answered through B
# (ABA) or through B and C (ABCBA).
FIGURE_2_ABA = """\
process U machine 0 name user
process A machine 0 name a
process B machine 1 name b
A receive
B receive
U call A 10
A send B 10
A receive
B send A 10
A reply 10
"""
FIGURE_2_ABCBA = """\
process U machine 0 name user
process A machine 0 name a
process B machine 0 name b
process C machine 1 name c
A receive
B receive
C receive
U call A 10
A send B 10
A receive
B send C 10
B receive
C send B 10
B send A 10
A reply 10
"""

# A long stretch outside the trace, then the workload (the thesis's hand
# case). A server A (machine 0) first CALLs K, a process outside the trace
# (a disk's kernel), which takes 1,000,000 ns; after 500 more of CPU, A
# serves one request of an untraced user U: it computes 4000, sends to B
# (machine 1), computes 6000, and answers U; B receives and computes 6000.
# Pids: A 0.16.1, B 1.17.1, K 0.18.1, U 0.19.1. By hand, with messages
# taking no time (every step alike: A and B are on machines of their own):
#   T = A's 1000 + 500 + 4000 + 6000 + B's 6000 = 17500.
#   With the arc for the request outside (thesis Fig. 5.3B): t_max = 1000
#     + 1,000,000 + 500 + 4000 + 6000 = 1,011,500, P = 0.0173; the outside
#     arc is 1,000,000 of it, 98.9 %, all of it in the request to K.
#   The plain graph (Fig. 5.3A): t_max = 1000 + 500 + 4000 + 6000 = 11500
#     (B's 6000 ends with A's), P = 17500 / 11500 = 1.522.
#   The workload's window, U's first record to its last (A's RECEIVE of
#     U's request at 1,001,500, A's answer at 1,011,500 on machine 0's
#     clock; B's RECEIVE at 1,005,500 and its exit at 1,011,500 on machine
#     1's): A's CPU in it 4000 + 6000, B's 6000: T = 16000, t_max = 10000,
#     P = 1.6 (the thesis's hand case), nothing outside the trace.
WINDOW_OF_U = "TIME 1001500 to 1011500 ns on machine 0, 1005500 to 1011500 on machine 1, 1001500 to 1011500 on the others (--window-of 0.19.1)"
OUTSIDE_PREFIX = """\
process A machine 0 name a
process B machine 1 name b
process K machine 0 name disk untraced
process U machine 0 name user untraced
K receive
B receive
A compute 1000
A call K 8
K compute 1000000
K reply 8
A compute 500
A receive
U call A 16
A compute 4000
A send B 10
A compute 6000
B compute 6000
A reply 16
A exit
B exit
"""


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def dpm(*args):
    """Runs the analyzer (sanitized build); (exit status, stdout, stderr)."""
    p = subprocess.run([DPM, *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def generate(name, scenario):
    path = os.path.join(workdir, name)
    with open(path + ".scenario", "w") as f:
        f.write(scenario)
    status, _, err = dpm("generate", path + ".scenario", path + ".log")
    assert status == 0, err
    return path + ".log"


def zero_delays():
    """A delivery-time table in which every message takes no time."""
    path = os.path.join(workdir, "zero.delays")
    with open(path, "w") as f:
        f.write("# size local remote\n0 0 0\n")
    return path


def test_graph_analyses(report):
    run = subprocess.run([DPM_GRAPH_TEST], capture_output=True, text=True, timeout=300)
    for line in run.stdout.splitlines():
        if "records:" in line:
            print("          " + line)
    failed = re.findall(r"^dpm_graph_test: (\S+:\d+): failed: (.*)$", run.stderr, re.M)
    for where, what in failed:
        report("dpm_graph.check " + where, False, what)
    m = re.search(r"dpm_graph_test: (\d+) checks passed", run.stdout)
    assert run.returncode == 0 and m, run.stdout + run.stderr[-3000:]
    assert int(m.group(1)) > 10000, run.stdout


def csv_steps(out):
    """`dpm parallelism --csv`'s rows as {step number ("3a": Appendix A):
    (T, t_max, P, outside_ns, t_max_plain, P_plain)}."""
    lines = out.splitlines()
    assert lines[0] == "step,T,t_max,P,outside_ns,t_max_plain,P_plain", lines[0]
    return {r[0].split(" ")[0] + ("a" if "Appendix" in r[0] else ""):
            (int(r[1]), int(r[2]), float(r[3]), int(r[4]), int(r[5]), float(r[6]))
            for r in csv.reader(lines[1:])}


def steps(out):
    """`dpm parallelism --csv`'s lines as {step number: (T, t_max, P)}."""
    return {step: row[:3] for step, row in csv_steps(out).items()}


def test_parallelism_of_the_hand_case():
    delays = zero_delays()
    one, two = generate("one", HAND_CASE % (0, 6000)), generate("two", HAND_CASE % (1, 6000))
    status, out, err = dpm("parallelism", "--csv", "--delays", delays, one)
    assert status == 0 and err == "", err
    assert steps(out) == {"1": (16000, 10000, 1.6), "2": (16000, 10000, 1.6), "3a": (16000, 16000, 1.0),
                          "3": (16000, 16000, 1.0)}, out
    status, out, _ = dpm("parallelism", "--csv", "--delays", delays, two)
    assert status == 0 and set(steps(out).values()) == {(16000, 10000, 1.6)}, out
    # Predicted: the two-machine run put on one machine, and the one-machine run spread out.
    status, out, _ = dpm("parallelism", "--csv", "--all-one", "--delays", delays, two)
    assert status == 0 and steps(out)["3"] == (16000, 16000, 1.0), out
    status, out, _ = dpm("parallelism", "--csv", "--place", "b=1", "--delays", delays, one)
    assert status == 0 and steps(out)["3"] == (16000, 10000, 1.6), out
    # The table: the trace as loaded, the placement, the delivery times, the steps.
    status, out, _ = dpm("parallelism", "--delays", delays, one)
    assert out.startswith("parallelism of 7 records, 2 processes, 1 message arcs, 0 requests outside the trace")
    assert re.search(r"  a 0\.16\.1\s+0\s+0\n  b 0\.17\.1\s+0\s+0\n", out), out
    assert re.search(r"3 contention, elapsed-time simulation\s+16000\s+16000\s+1\.000\s+0\.0%\n", out), out
    assert "no request went outside the trace: the plain history graph (thesis Fig. 5.3A) gives the same" in out
    # With this system's delivery times (the default network, `here`) a remote message of 10 bytes
    # takes what analysis/networks/here.tsv says.
    remote = network_rows("here")[10][1]
    status, out, _ = dpm("parallelism", "--csv", two)
    assert steps(out)["2"] == (16000, 10000 + remote, round(16000 / (10000 + remote), 4)), out


def network_rows(name):
    """The shipped network NAME (analysis/networks/NAME.tsv) as {size: (local, remote)}."""
    rows = {}
    with open(os.path.join(ROOT, "analysis", "networks", name + ".tsv")) as f:
        for line in f:
            fields = line.split("#")[0].split()
            if fields:
                rows[int(fields[0])] = (int(fields[1]), int(fields[2]))
    return rows


def test_outside_prefix_is_said_and_the_window_gives_the_workload():
    """A long request outside the trace before the workload (OUTSIDE_PREFIX,
    worked out by hand there): every P and critical path says how much of
    t_max is outside and for whom, warns above 50 %, reports the plain graph
    (Fig. 5.3A) beside the one with elapsed-time arcs (Fig. 5.3B), and a
    window gives the workload's P alone."""
    log, delays = generate("prefix", OUTSIDE_PREFIX), zero_delays()
    status, out, err = dpm("parallelism", "--csv", "--delays", delays, log)
    assert status == 0 and err == "", err
    every = csv_steps(out)
    assert set(every) == {"1", "2", "3", "3a"}, every
    for step, row in every.items():
        assert row == (17500, 1011500, 0.0173, 1000000, 11500, 1.5217), (step, row)
    status, out, _ = dpm("parallelism", "--delays", delays, log)
    assert re.search(r"1 upper bound: no delivery time, no contention\s+17500\s+1011500\s+0\.017\s+98\.9%\n",
                     out), out
    assert "on the plain history graph: requests outside the trace left out (thesis Fig. 5.3A)" in out, out
    assert re.search(r"\n1 upper bound: no delivery time, no contention\s+17500\s+11500\s+1\.522\n", out), out
    assert re.search(r"step 1: 1000000 ns in 1 requests: 0\.18\.1 98\.9%", out), out
    warning = out[out.index("warning: "):]
    assert warning.startswith("warning: 98.9% of t_max (step 1) is time spent waiting for requests outside the "
                              "trace"), warning
    assert "0.18.1" in warning and "--window-of 0.19.1" in warning and "P = 1.522" in warning, warning
    status, out, err = dpm("critpath", "--step", "1", log)
    assert status == 0 and err == "", err
    assert "t_max = 1011500 ns over" in out and "P = 0.017" in out, out
    assert re.search(r"\(outside the trace\)\s+1000000\s+98\.9%\n\s+in requests to 0\.18\.1\s+1000000\s+98\.9%"
                     r"\s+1 requests\n", out), out
    assert "plain history graph (thesis Fig. 5.3A, requests outside the trace left out): t_max = 11500 ns, " \
           "P = 1.522" in out, out
    assert "warning: 98.9% of t_max (step 1)" in out and "--window-of 0.19.1" in out, out
    # The workload's window: by the user's pid, and by its times (the same, in ns and with units).
    for window in (("--window-of", "0.19.1"), ("--window", "1001500:1011500"), ("--window=1.0015ms:1.0115ms",)):
        status, out, err = dpm("parallelism", *window, "--csv", "--delays", delays, log)
        assert status == 0 and err == "", (window, err)
        assert set(csv_steps(out).values()) == {(16000, 10000, 1.6, 0, 10000, 1.6)}, (window, out)
        status, out, err = dpm("parallelism", *window, "--delays", delays, log)
        assert "window: TIME 1001500 to 1011500 ns " in out and "warning" not in out, out
    # --window-of gives each machine a span: machine 0 the records naming U, machine 1 B's records from its
    # RECEIVE of A's message, sent in machine 0's span, on (load/window.h).
    status, out, err = dpm("parallelism", "--window-of", "0.19.1", "--delays", delays, log)
    assert "window: %s\n" % WINDOW_OF_U in out, out
    status, out, _ = dpm("critpath", "--window-of", "0.19.1", "--step", "1", log)
    assert "t_max = 10000 ns over" in out and "P = 1.600" in out and "warning" not in out, out
    # Machine 1's clock 5 ms ahead of machine 0's, as clocks drift apart under -icount: B's records are at
    # 5,000,000 ns and after, outside machine 0's span; the message from A gives machine 1 a span of its own
    # (B's RECEIVE to its exit), so the window still holds the workload: P = 1.6.
    skewed = generate("skewed", "machine 1 clock 5000000\n" + OUTSIDE_PREFIX)
    status, out, err = dpm("parallelism", "--window-of", "0.19.1", "--csv", "--delays", delays, skewed)
    assert status == 0 and csv_steps(out)["1"] == (16000, 10000, 1.6, 0, 10000, 1.6), (out, err)
    # The window leaves the records before it out without counting them as missing.
    status, out, _ = dpm("stats", "--window-of", "0.19.1", log)
    assert status == 0 and "7 records, 0 lost (as the logs count them), 0 missing in sequence gaps" in out, out
    assert "window: %s\n" % WINDOW_OF_U in out, out
    # Processes created before the window keep their names (a, b), and can be placed by them.
    assert "a 0.16.1" in out and "b 1.17.1" in out, out
    status, out, _ = dpm("parallelism", "--window-of", "0.19.1", "--place", "b=0", "--csv", "--delays", delays, log)
    assert status == 0 and csv_steps(out)["3"][:3] == (16000, 16000, 1.0), out


def test_window_usage_errors():
    log = generate("prefix", OUTSIDE_PREFIX)
    # A process known by its CREATEPROCESS, but with no record in the window, is not placed: said, not refused.
    status, out, err = dpm("parallelism", "--window", "2000000:", "--place", "a=1", "--csv", log)
    assert status == 0 and err == "dpm parallelism: --place: `a` has no record in the window: nothing to place\n", err
    for args, said in ((("parallelism", "--window", "5:3", log), "--window 5:3: FROM is after TO"),
                       (("parallelism", "--window", "abc", log), "--window abc: expected FROM:TO"),
                       (("parallelism", "--window", "5ks:6", log), "--window 5ks:6: expected FROM:TO"),
                       (("parallelism", log, "--window"), "--window needs a value"),
                       (("parallelism", "--window-of", "nobody", log),
                        "--window-of nobody: no record of or naming such a process"),
                       (("parallelism", "--window", "1:2", "--window-of", "a", log),
                        "--window and --window-of exclude one another"),
                       (("generate", "--window", "1:2", log, log), "generate writes logs")):
        status, out, err = dpm(*args)
        assert status == 2 and said in err and out == "", (args, status, err)


def test_networks():
    """The shipped delivery tables by name, a table file, and bad files named with their line."""
    log = generate("two", HAND_CASE % (1, 6000))
    vax, here = network_rows("vax"), network_rows("here")
    assert vax[10] == (4300000, 13000000) and vax[1000] == (12800000, 35000000), vax
    status, out, err = dpm("parallelism", "--csv", "--network", "vax", log)
    assert status == 0 and err == "" and steps(out)["2"][1] == 10000 + 13000000, (out, err)
    status, out, _ = dpm("parallelism", "--network", "infiniband", log)
    assert "delivery times (guest ns): network infiniband (analysis/networks/infiniband.tsv)" in out, out
    status, out, _ = dpm("parallelism", "--csv", log)
    assert steps(out)["2"][1] == 10000 + here[10][1], out
    table = os.path.join(workdir, "mine.tsv")
    with open(table, "w") as f:
        f.write("# title: mine\n10\t5\t700\n")
    status, out, _ = dpm("parallelism", "--csv", "--network", table, log)
    assert status == 0 and steps(out)["2"][1] == 10700, out
    for text, said in (("10 5\n", ":1: 2 fields; expected 3: SIZE LOCAL_NS REMOTE_NS"),
                       ("# a table\n10 5 x7\n", ":2: REMOTE_NS `x7` is not a whole number of ns"),
                       ("10 5 7\n10 6 8\n", ":2: size 10 does not follow 10: sizes must rise"),
                       ("-1 5 7\n", ":1: SIZE `-1` is not a whole number of bytes"),
                       ("10 5 7 9\n", ":1: 4 fields; expected 3: SIZE LOCAL_NS REMOTE_NS"),
                       ("# nothing\n", ": no rows (lines `SIZE LOCAL_NS REMOTE_NS`)")):
        with open(table, "w") as f:
            f.write(text)
        status, out, err = dpm("parallelism", "--network", table, log)
        assert status == 1 and err == "dpm parallelism: %s%s\n" % (table, said) and out == "", (text, err)
    status, _, err = dpm("parallelism", "--network", "nosuch", log)
    assert status == 2 and "--network nosuch: no shipped network of that name (gbe, here, infiniband, vax)" in err, err
    status, _, err = dpm("parallelism", "--network", "/nonexistent/x.tsv", log)
    assert status == 1 and "/nonexistent/x.tsv: No such file or directory" in err, err


def test_critpath_of_the_hand_case():
    delays = zero_delays()
    log = generate("path", HAND_CASE % (1, 7000))     # B's 7000 after A's 4000 make the path: 11000
    status, out, err = dpm("critpath", "--delays", delays, log)
    assert status == 0 and err == "", err
    assert "t_max = 11000 ns over 3 arcs; T = 17000 ns; P = 1.545\n" in out, out
    assert re.search(r"  a 0\.16\.1\s+4000\s+36\.4%\s+1\n  b 1\.17\.1\s+7000\s+63\.6%\s+1\n", out), out
    order = out.split("the path in order (2 segments)\n")[1].split("\n\n")[0].splitlines()
    assert [l.split()[:3] for l in order] == [["1", "a", "0.16.1"], ["then", "a", "message"], ["2", "b", "1.17.1"]]
    status, out, _ = dpm("critpath", "--step", "3", "--all-one", "--delays", delays, log)
    assert status == 0 and "t_max = 17000 ns" in out and "under step 3 contention, elapsed-time" in out, out
    status, out, _ = dpm("critpath", "--step", "1", "--top", "1", log)
    assert "t_max = 11000 ns" in out and "... 1 more (--top 0 lists them)" in out, out


def test_causality_of_dpm_figure_2():
    status, out, err = dpm("causality", "--server", "a,b", generate("aba", FIGURE_2_ABA))
    assert status == 0 and err == "", err
    assert "through 2 servers: A = a 0.17.1, B = b 1.18.1\n1 requests from requestors, 1 strings\n" in out, out
    assert "strings, most frequent first (1 distinct)\n           1  ABA\n" in out, out
    log = generate("abcba", FIGURE_2_ABCBA)
    status, out, err = dpm("causality", "--server", "a,b,c", "--dot", os.path.join(workdir, "abcba.dot"), log)
    assert status == 0 and "           1  ABCBA\n" in out, out
    paths = out.split("alphabetically (10)\n")[1].split("\n\n")[0].split()
    assert paths[1::2] == ["AB", "ABC", "ABCB", "ABCBA", "BA", "BC", "BCB", "BCBA", "CB", "CBA"], paths
    # B received from A, then sent to C; from C, then to A: each with probability 1.
    table = out.split("  B  b 0.18.1\n")[1]
    assert re.match(r"\s+from.*\n\s+A\s+0\s+0\.0%\s+0\s+0\.0%\s+1 100\.0%\n\s+C\s+1 100\.0%", table), table
    dot = open(os.path.join(workdir, "abcba.dot")).read()
    assert 'B -> C [label="after A: 100.0% (1)"]' in dot and 'U -> A [label="1 requests"]' in dot, dot
    # With the user a system process, there is no requestor: no string.
    status, out, _ = dpm("causality", "--server", "a,b,c", "--system", "user", log)
    assert status == 0 and "0 requests from requestors, 0 strings" in out, out


def test_help_and_usage_of_the_graph_commands():
    log = generate("aba", FIGURE_2_ABA)
    for command in ("parallelism", "critpath", "causality"):
        status, out, err = dpm(command, "--help")
        assert status == 0 and err == "" and all(w in out for w in ("NAME", "SYNOPSIS", "OPTIONS", "EXIT STATUS"))
    for args, said in ((("parallelism",), "no trace log named"),
                       (("parallelism", "--bogus", log), "unknown option --bogus"),
                       (("parallelism", "--place", "nobody=1", log), "--place: no traced process is named `nobody`"),
                       (("parallelism", "--place", "a", log), "expected NAME_OR_PID=MACHINE"),
                       (("parallelism", "--all-one", "--each-own", log), "exclude one another"),
                       (("critpath", "--step", "9", log), "--step 9: expected 1, 2, 3 or 3a"),
                       (("critpath", "--top", "x", log), "--top x: expected a number"),
                       (("critpath", "--elf", "a", log), "--elf a: expected NAME=FILE"),
                       (("causality", log), "--server names the server processes"),
                       (("causality", "--server"), "--server needs a value"),
                       (("causality", "--server", "nobody", log), "--server: no traced process is named `nobody`"),
                       (("causality", "--server", "a", "--max-length", "0", log), "expected a number from 1")):
        status, out, err = dpm(*args)
        assert status == 2 and said in err and out == "", (args, status, err)


def test_damaged_logs_are_named():
    """A damaged entry, a log cut short, a file that is no log: each
    command says which file and which record, and exits 1."""
    log = generate("aba", FIGURE_2_ABA)
    data = bytearray(open(log, "rb").read())
    h = struct.unpack_from("<I", data, 16)[0]
    at = h * BLOCK + 32
    for _ in range(5):
        at += struct.unpack_from("<H", data, at)[0]
    struct.pack_into("<H", data, at, 4000)                 # record 5's length made absurd
    tracelog_seal(data, h)                                 # found by the entry checks, not the checksum
    bad = os.path.join(workdir, "bad.log")
    open(bad, "wb").write(data)
    cut = os.path.join(workdir, "cut.log")
    open(cut, "wb").write(open(log, "rb").read()[:h * BLOCK + 1000])
    notlog = os.path.join(workdir, "notlog.log")
    open(notlog, "wb").write(bytes(BLOCK))
    for command in (("parallelism",), ("critpath",), ("causality", "--server", "a")):
        for path, said in ((bad, "record 5: a damaged entry in block %d" % h),
                           (cut, "record 0: the log is cut short: block %d has only 1000 of its 4096 bytes" % h),
                           (notlog, "not a trace disk or log (no DPMTRACE header)"),
                           (os.path.join(workdir, "missing.log"), "No such file or directory")):
            status, out, err = dpm(*command, path)
            assert status == 1 and err == "dpm %s: %s: %s\n" % (command[0], path, said), (command, err)


# ---- clocks, happens-before and ShiViz (dpm clocks, dpm export --shiviz) ----

# A client on machine 0 calls a server on machine 1, whose clock reads
# 1,000,000 ns ahead; a message between them takes 100 ns (of the model's
# time). The server waits from 0; the client computes 500 and calls at 500;
# the request arrives at 600 (TIME 1,000,600 on machine 1); the server
# computes 1000 and replies at 1600 (TIME 1,001,600), which arrives at 1700.
# By the messages: offset(1) <= 1,000,600 - 500 = 1,000,100 and offset(1) >=
# 1,001,600 - 1700 = 999,900: the interval [999,900, 1,000,100], the
# estimate its middle, 1,000,000, within 100 of the truth. The reply seems
# to arrive 999,900 ns before it was sent; corrected, it does not.
# Its waits, on the corrected clock:
#   the server waits 0..600 (600): late sender 500 (the client sent at
#     500), delivery 100;
#   the client waits 500..1700 (1200): the request in flight 100, queued 0
#     (the server was waiting), the server's work 600..1600 = 1000, the
#     reply in flight 100: delivery 200, server's work 1000.
SKEWED_CALL = """\
machine 1 skew 1000000
delay 100
process C machine 0 name client
process S machine 1 name server
S receive
C compute 500
C call S 10
S compute 1000
S reply 10
"""


def clock_rows(out):
    """`dpm clocks`'s machine rows: {machine: (offset, low, high, bound)}."""
    rows = {}
    for m in re.finditer(r"^\s+(\d+)\s+([+-]?\d+)\s+(\(reference\)|\[(\S+), (\S+)\])\s+(\S+)\s+\d+\s+\d+$", out, re.M):
        low = high = 0
        if m.group(4):
            low, high = (float(x) if "inf" in x else int(x) for x in (m.group(4), m.group(5)))
        bound = float("inf") if m.group(6) == "unbounded" else int(m.group(6))
        rows[int(m.group(1))] = (int(m.group(2)), low, high, bound)
    return rows


def test_clocks_of_a_skewed_call():
    log = generate("skewed", SKEWED_CALL)
    status, out, err = dpm("clocks", log)
    assert status == 0 and err == "", err
    assert "constant offsets satisfy every message" in out, out
    assert clock_rows(out) == {0: (0, 0, 0, 0), 1: (1000000, 999900, 1000100, 100)}, out
    assert re.search(r"^\s+0\s+1\s+1\s+1\s+\+999900\s+\+1000100$", out, re.M), out      # the pair's own bound
    assert "backward (arriving before they were sent): 1 by the machines' own clocks (0 within one machine), " \
           "0 corrected\n" in out, out
    # 8 events: each process's start, a SEND and a RECEIVE, its end. Of the 16 pairs across the two, 4
    # are concurrent: the client's start and its SEND with the server's start, the server's end with the
    # client's RECEIVE and its end.
    assert "8 events of 2 processes, 16 pairs of events in different processes:\n  12 (75.0%) ordered, " \
           "4 (25.0%) concurrent\n" in out, out
    # Against machine 1, machine 0 reads a million behind; with a least delay of 100, the interval is one point.
    status, out, _ = dpm("clocks", "--reference", "1", log)
    assert clock_rows(out)[0] == (-1000000, -1000100, -999900, 100), out
    status, out, _ = dpm("clocks", "--min-delay", "100", log)
    assert clock_rows(out)[1] == (1000000, 1000000, 1000000, 0), out
    # One more ns is too much: no constant offsets satisfy both messages; 1 ns of slack does.
    status, out, _ = dpm("clocks", "--min-delay", "101", log)
    assert status == 0 and "no constant offsets satisfy every message" in out and \
        "by these, a message may arrive up to 1 ns sooner than the least delay allows (the slack)" in out, out
    # The events on the corrected clock, in an order no message runs backward in.
    status, out, _ = dpm("clocks", "--events", log)
    events = out.split("events on the corrected clock (8; 0 moved later")[1].splitlines()[2:]
    times = [int(line.split()[0]) for line in events]
    assert times == sorted(times) and times[-1] == 1700, events
    assert [l.split()[5:7] for l in events if "SEND" in l or "RECEIVE" in l] == [
        ["SEND", "to"], ["RECEIVE", "from"], ["SEND", "to"], ["RECEIVE", "from"]], events


def test_clocks_find_a_known_skew_in_random_traffic():
    """Random traffic among three machines, whose clocks read 7 ms and 2.5 ms
    ahead of machine 0's: the offsets are found within their bounds (here,
    with messages that take no time, exactly), and no message is backward
    once corrected, though thousands are before."""
    log = os.path.join(workdir, "skewed-random.log")
    status, _, err = dpm("generate", "--random", "20000", "--seed", "5", "--skew", "1=7000000,2=2500000", log)
    assert status == 0, err
    status, out, err = dpm("clocks", log)
    assert status == 0 and err == "", err
    rows = clock_rows(out)
    for machine, truth in ((1, 7000000), (2, 2500000)):
        offset, low, high, bound = rows[machine]
        assert low <= truth <= high and abs(offset - truth) <= bound, (machine, rows[machine])
    m = re.search(r"backward \(arriving before they were sent\): (\d+) by the machines' own clocks \(0 within one "
                  r"machine\), 0 corrected", out)
    assert m and int(m.group(1)) > 1000, out
    status, out, err = dpm("generate", "--skew", "1=5,x", log)
    assert status == 2 and "--skew 1=5,x: expected MACHINE=NS" in out + err, err


def test_happens_before_by_hand():
    """DPM's Fig. 2 shape ABCBA, as ShiViz reads it: the log parsed by the
    test's own parser (the regular expression the help documents, JSON
    clocks), ShiViz's rules checked (each host's own component 1, 2, 3, ...;
    every component a host of the log), the clocks worked out by hand:
      user: start {u1}, SEND {u2}, RECEIVE of the answer {u3 a5 b5 c3}, end {u4 a5 b5 c3};
      a: start {a1}, RECEIVE {u2 a2}, SEND to b {u2 a3}, RECEIVE from b {u2 a4 b5 c3},
         SEND the answer {u2 a5 b5 c3}, end {u2 a6 b5 c3};
      b: start {b1}, RECEIVE {u2 a3 b2}, SEND to c {u2 a3 b3}, RECEIVE from c
         {u2 a3 b4 c3}, SEND to a {u2 a3 b5 c3}, end {u2 a3 b6 c3};
      c: start {c1}, RECEIVE {u2 a3 b3 c2}, SEND {u2 a3 b3 c3}, end {u2 a3 b3 c4}."""
    log = generate("abcba", FIGURE_2_ABCBA)
    out_log = os.path.join(workdir, "abcba.shiviz")
    status, _, err = dpm("export", "--shiviz", out_log, log)
    assert status == 0 and err == "", err
    events = shiviz_parse(open(out_log).read())
    u, a, b, c = "user@0.16.1", "a@0.17.1", "b@0.18.1", "c@1.19.1"
    by_host = {}
    for host, clock, _ in events:
        by_host.setdefault(host, []).append(clock)
    assert by_host == {
        u: [{u: 1}, {u: 2}, {u: 3, a: 5, b: 5, c: 3}, {u: 4, a: 5, b: 5, c: 3}],
        a: [{a: 1}, {u: 2, a: 2}, {u: 2, a: 3}, {u: 2, a: 4, b: 5, c: 3}, {u: 2, a: 5, b: 5, c: 3},
            {u: 2, a: 6, b: 5, c: 3}],
        b: [{b: 1}, {u: 2, a: 3, b: 2}, {u: 2, a: 3, b: 3}, {u: 2, a: 3, b: 4, c: 3}, {u: 2, a: 3, b: 5, c: 3},
            {u: 2, a: 3, b: 6, c: 3}],
        c: [{c: 1}, {u: 2, a: 3, b: 3, c: 2}, {u: 2, a: 3, b: 3, c: 3}, {u: 2, a: 3, b: 3, c: 4}]}, by_host
    assert recomputed_clocks(events) == [clock for _, clock, _ in events]
    assert "SEND to b@0.18.1 message 0x2 10 bytes; machine 0 time 0 corrected 0" in [e for _, _, e in events]


# The regular expression `dpm export --help` tells users to give ShiViz, in Python's spelling.
SHIVIZ_REGEX = r"(?<host>\S+) (?<clock>\{[^}]*\}) (?<event>.*)"


def shiviz_parse(text):
    """A ShiViz log as (host, clock, event) per line, by the documented
    regular expression, every line matched, ShiViz's rules checked."""
    line_re = re.compile(SHIVIZ_REGEX.replace("(?<", "(?P<"))
    events, counts = [], {}
    for line in text.splitlines():
        m = line_re.fullmatch(line)
        assert m, line
        clock = json.loads(m.group("clock"))
        host = m.group("host")
        counts[host] = counts.get(host, 0) + 1
        assert clock[host] == counts[host], (line, counts[host])        # own component 1, 2, 3, ...
        assert all(v >= 1 for v in clock.values()), line
        events.append((host, clock, m.group("event")))
    for host, clock, event in events:
        assert all(h in counts and v <= counts[h] for h, v in clock.items()), (host, clock, counts)
    return events


def recomputed_clocks(events):
    """The vector clocks worked out again from the events alone, in file
    order: each event is its host's previous clock, merged at a RECEIVE with
    the clock of the SEND of the same message id (sends and receives of one
    id paired in order), with its own component one more."""
    last, sent, clocks = {}, {}, []
    for host, _, event in events:
        clock = dict(last.get(host, {}))
        m = re.match(r"(SEND|RECEIVE) (?:to|from) \S+ message (0x[0-9a-f]+) ", event)
        if m and m.group(1) == "RECEIVE" and sent.get(m.group(2)):
            for h, v in sent[m.group(2)].pop(0).items():
                clock[h] = max(clock.get(h, 0), v)
        clock[host] = clock.get(host, 0) + 1
        if m and m.group(1) == "SEND":
            sent.setdefault(m.group(2), []).append(dict(clock))
        last[host] = clock
        clocks.append(clock)
    return clocks


def test_shiviz_log_of_random_traffic():
    """20,000 records of random traffic: every line read by the documented
    expression, ShiViz's rules hold, and every clock is what the events
    alone give (a RECEIVE is written after its SEND: a topological order)."""
    log = os.path.join(workdir, "random.log")
    status, _, err = dpm("generate", "--random", "20000", "--seed", "9", log)
    assert status == 0, err
    out_log = os.path.join(workdir, "random.shiviz")
    status, out, err = dpm("export", "--shiviz", out_log, log)
    assert status == 0 and out == "" and err == "", err
    events = shiviz_parse(open(out_log).read())
    assert len(events) > 10000
    assert recomputed_clocks(events) == [clock for _, clock, _ in events]
    status, out, _ = dpm("export", "--help")
    assert status == 0 and "            " + SHIVIZ_REGEX + "\n" in out, out


# ---- wait states (dpm waitstates) ----

# Two clients call a server that asks a disk server, all on one machine.
# Only compute takes time (the machine's one clock):
#   srv and disk wait from 0. c1 computes 100 and calls srv: srv receives at
#     100 (its wait 0..100: late sender c1, 100).
#   c2 computes 50 and calls srv at 150: srv is busy, the request is queued.
#   srv computes 200 and calls disk at 350: disk receives at once (its wait
#     0..350: late sender srv, 350).
#   disk computes 300, replies at 650: srv's CALL waited 350..650, all of it
#     disk's work (300).
#   srv computes 100, replies to c1 at 750: c1 waited 100..750, all srv's work
#     (650, the 300 of disk included).
#   srv receives c2's request at 750 (queued before: no wait), computes 50,
#     replies at 800: c2 waited 150..800: queued 150..750 (600), srv's work 50.
# 5 waits, 2050 ns: late sender 450, delivery 0, queued 600, server's work 1000.
TWO_CLIENTS = """\
process C1 machine 0 name c1
process C2 machine 0 name c2
process S machine 0 name srv
process D machine 0 name disk
S receive
D receive
C1 compute 100
C1 call S 10
C2 compute 50
C2 call S 10
S compute 200
S call D 10
D compute 300
D reply 10
S compute 100
S reply 10
S receive
S compute 50
S reply 10
"""
# A kernel outside the trace answers a user's CALL after 400 and then sends to
# a viewer that has waited since 0: 400 and 500, both outside the trace.
OUTSIDE = """\
process K machine 0 pid 0.0.1 untraced
process U machine 0 name user
process V machine 0 name viewer
V receive
U compute 100
U call K 10
K receive
K compute 400
K reply 10
K send V 10
"""


def waitstates(log, *options):
    """`dpm waitstates --top 0`: (total, {cause: ns}, [(waiter, cause, charged, ns, waits)], {process: ns}, out)."""
    status, out, err = dpm("waitstates", "--top", "0", *options, log)
    assert status == 0 and err == "", err
    total = int(re.search(r"^wait states: \d+ waits .*, (\d+) ns in all$", out, re.M).group(1))
    causes = dict((k, int(v)) for k, v in re.findall(r"^  (late sender|delivery|queued|server's work|outside the "
                                                     r"trace)\s+(\d+)\s+[\d.]+%$", out, re.M))
    label = r"(?:\S+ )?\d+\.\d+\.\d+|\(unknown\)"          # "ri 0.8.1", "0.1.1", "(unknown)"
    pairs = [(w, c, r, int(t), int(n)) for w, c, r, t, n in re.findall(
        r"^  (%s)\s+(late sender|delivery|queued|server's work|outside the trace)\s+(%s)\s+(\d+)\s+[\d.]+%%\s+"
        r"(\d+)$" % (label, label), out.split("the largest causes")[1].split("functions charged")[0], re.M)]
    by_process = dict((p, int(t)) for p, t in re.findall(r"^  (%s)\s+(\d+)\s+[\d.]+%%$" % label,
                                                          out.split("waiting time by process")[1], re.M))
    return total, causes, pairs, by_process, out


def test_waitstates_by_hand():
    total, causes, pairs, by_process, out = waitstates(generate("two-clients", TWO_CLIENTS))
    assert "5 waits (3 in CALLs, 2 in RECEIVEs), 2050 ns in all" in out, out
    assert causes == {"late sender": 450, "delivery": 0, "queued": 600, "server's work": 1000,
                      "outside the trace": 0}, out
    assert pairs == [("c1 0.16.1", "server's work", "srv 0.18.1", 650, 1),
                     ("c2 0.17.1", "queued", "srv 0.18.1", 600, 1),
                     ("disk 0.19.1", "late sender", "srv 0.18.1", 350, 1),
                     ("srv 0.18.1", "server's work", "disk 0.19.1", 300, 1),
                     ("srv 0.18.1", "late sender", "c1 0.16.1", 100, 1),
                     ("c2 0.17.1", "server's work", "srv 0.18.1", 50, 1)], pairs
    assert by_process == {"c1 0.16.1": 650, "c2 0.17.1": 650, "srv 0.18.1": 400, "disk 0.19.1": 350}, by_process
    # The functions: a scenario's records carry the PC 0x10000 + 4 x its line: srv's first reply (line 16)
    # held c1 for 650; srv's call of disk (line 12) was disk's late sender.
    assert re.search(r"^  pc 0x10040\s+srv 0\.18\.1\s+server's work\s+650 ", out, re.M), out
    assert re.search(r"^  pc 0x10030\s+srv 0\.18\.1\s+late sender\s+350 ", out, re.M), out
    # Across machines, on the corrected clock (SKEWED_CALL above): 1800 ns.
    total, causes, pairs, _, out = waitstates(generate("skewed", SKEWED_CALL))
    assert total == 1800 and causes["late sender"] == 500 and causes["delivery"] == 300, out
    assert causes["server's work"] == 1000 and causes["queued"] == 0, out
    assert ("client 0.16.1", "server's work", "server 1.17.1", 1000, 1) in pairs, pairs
    assert ("client 0.16.1", "delivery", "server 1.17.1", 200, 1) in pairs, pairs
    assert ("server 1.17.1", "late sender", "client 0.16.1", 500, 1) in pairs, pairs
    # A server outside the trace: the whole of each wait, charged to it.
    total, causes, pairs, _, out = waitstates(generate("outside", OUTSIDE))
    assert total == 900 and causes["outside the trace"] == 900, out
    assert pairs == [("viewer 0.18.1", "outside the trace", "kernel 0.0.1", 500, 1),
                     ("user 0.17.1", "outside the trace", "kernel 0.0.1", 400, 1)], pairs


def test_waitstates_add_up_on_random_traffic():
    """On random traffic over three skewed machines, the causes add up to the
    total, and so do the rows and the processes; the total is dpm stats's
    receive blocking time, wait for wait."""
    log = os.path.join(workdir, "skewed-random.log")
    status, _, err = dpm("generate", "--random", "20000", "--seed", "11", "--skew", "1=3000000,2=40000", log)
    assert status == 0, err
    total, causes, pairs, by_process, out = waitstates(log)
    assert sum(causes.values()) == total == sum(p[3] for p in pairs) == sum(by_process.values()), out
    assert all(causes[k] > 0 for k in ("late sender", "delivery", "queued", "server's work")), causes
    csv_dir = os.path.join(workdir, "random-csv")
    status, _, err = dpm("stats", "--csv", csv_dir, log)
    summary = dict(line.split(",", 1) for line in open(os.path.join(csv_dir, "summary.csv")).read().splitlines()[1:])
    waited = int(summary["waited_receives"])
    assert re.search(r"^wait states: %d waits" % waited, out, re.M), out
    assert abs(total - waited * float(summary["blocking_mean"])) <= 0.001 * waited + 1, (total, summary)


def test_usage_of_clocks_and_waitstates():
    log = generate("skewed", SKEWED_CALL)
    for command in ("clocks", "waitstates"):
        status, out, err = dpm(command, "--help")
        assert status == 0 and err == "" and all(w in out for w in ("NAME", "SYNOPSIS", "OPTIONS", "EXIT STATUS"))
    for args, said in ((("clocks",), "no trace log named"),
                       (("clocks", "--bogus", log), "unknown option --bogus"),
                       (("clocks", "--min-delay", "soon", log), "--min-delay soon: expected a time in ns"),
                       (("clocks", "--reference"), "--reference needs a value"),
                       (("waitstates", "--top", "x", log), "--top x: expected a number"),
                       (("waitstates", "--elf", "a", log), "--elf a: expected NAME=FILE")):
        status, out, err = dpm(*args)
        assert status == 2 and said in err and out == "", (args, status, err)
    status, out, err = dpm("clocks", "--reference", "7", log)
    assert status == 2 and "--reference 7: no SEND, RECEIVE or first or last record" in err, err
    status, out, err = dpm("waitstates", os.path.join(workdir, "missing.log"))
    assert status == 1 and "No such file or directory" in err, err
