"""The analyzer's graph analyses (analysis/models/: history.c,
parallel.c, contention.c, delays.c, critpath.c, causality.c, tally.c;
analysis/load/elfsym.c):
tests/dpm_graph_test.c, built with the sanitizers, checks the thesis's
hand-checkable cases of parallelism in all three steps and both contention
algorithms, the longest path against a brute force on hundreds of random
traces, the arc for requests outside the trace, odd traces, the critical
path, causality strings (DPM's Fig. 2 shapes, fan-out, the cut) and the
thesis's Fig. 5.18 counts and probabilities, the delivery-time table, and
the ELF symbol reader against nm and on damaged files. It also prints the
time of parallelism and the critical path on a million records.

Then the commands over them (`dpm parallelism`, `critpath`, `causality`,
under the sanitizers' build), on logs `dpm generate` writes from the
thesis's hand cases, which also exercises the loading of a whole trace
(dpm_trace_load): their figures, --help, usage errors (status 2) and
damaged logs (status 1, the file and record named)."""
import csv
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
