"""dpm (analysis/), the host analyzer, on logs it generates itself from
scenarios whose figures are worked out by hand below (`dpm generate`, with
meter/'s own writer): dump prints every record and selects with DPM rules;
stats gives exactly the counts, bytes, local/remote split, queue lengths,
queue waits, blocking times, CPU shares and Fig. 5.12 shares of the
scenario; merge makes one log of several that reads back record for
record; export writes JSON, DOT and CSV that parse; damaged, truncated and
foreign files are refused naming the file and record, without a crash
(everything runs under the sanitizers' build); --help documents it all."""
import csv
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

from harness import ROOT, tracelog_seal

DPM = os.path.join(ROOT, "build", "tools", "dpm-sanitized")
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
BLOCK = 4096
workdir = tempfile.mkdtemp(prefix="dm-dpm-")

# A client A and a server B on machine 0, an untraced kernel K, and a
# process C on machine 1 metered mid-run. Only compute takes time, so:
#   B's queue: messages queued at 1000, 1100, 1500 and received at 1600,
#     2000, 3000: waits 600, 900, 1500 (mean 1000); the queue is 1, 2, 3,
#     2, 1 for 100, 400, 100, 400, 1000 ns: area 3000 over B's lifetime
#     0..3750, a time-weighted mean of 0.8, max 3, event mean 9/6 = 1.5.
#   Blocking: B waits 3000..3500 for A's CALL, A waits 3500..3750 for the
#     reply: 500 and 250 (mean 375); B's first three receives were ready.
#   Messages: A->B 100+200+300+64, B->A 32, A->K 16 (local), C->K 40
#     (remote): 7 messages, 752 bytes; C's send to the exited A fails.
#   CPU: A 2000, B 1750, C 700 (from PROCTIME 5000): 4450 in all.
#   A's numbering skips 2 records; the log counts 2 lost.
KNOWN = """\
# the analyzer's hand-checked scenario
process K machine 0 pid 0.0.1 untraced
process A machine 0 name client
process B machine 0 name server
process C machine 1 name remote attached 5000
lose 2
A compute 1000
A send B 100
A skip 2
A compute 100
A send B 200
A compute 400
A send B 300
B compute 100
B receive
B compute 400
B receive
B compute 1000
B receive
B receive
A compute 500
A call B 64
B compute 250
B reply 32
A send K 16
A exit 0
B exit 0
C areceive
C compute 700
C send A 50
C send K 40
"""

# A ping on machine 0 and a pong on machine 1, whose clock reads 1,000,000
# ahead (its records' TIME), the pong moved to machine 0 and back: every
# figure of a process that moved, by hand. Messages take 100 ns between
# machines; only compute and moves take time.
#   ping calls pong (1000 -> 1100, remote) and gets its reply (1600 ->
#     1700, remote). pong waits in a receive from 1600 and moves to machine
#     0 while it waits: out of execution 2000 ns, its MIGRATE at 3600 there.
#     ping sends it 20 bytes at 4600 (local): pong's wait, on its own
#     clock across the move, is 1600 + 2000 .. 4600 = 3000 ns.
#   ping sends 30 bytes at 4900, queued at pong on machine 0; pong moves
#     to machine 1 (1000 ns), its MIGRATE at 5900 there (TIME 1,005,900),
#     and receives it: a queue wait of 1000 across the move.
#   Local: 20 + 30 bytes; remote: 10 + 10. Waits: ping 700 (its CALL),
#   pong 1100 and 3000: 4800 ns. CPU: ping 2100 on machine 0; pong 500 on
#   machine 1, 200 on machine 0, 100 on machine 1 again.
#   pong's lifetime: 0 .. 6000 on its own clock (its first machine's).
#   Parallelism: T = 2900; t_max = 2800 without contention; with it,
#   ping's 100 and pong's 200 share machine 0 at 4600: 2900. Were pong on
#   machine 1 throughout, 2800.
#   Clocks: machine 1 in [999,900, 1,000,100] by the two remote messages
#   (the moves bound it less: >= 998,000 and <= 1,001,300), 1,000,000.
MOVED = """\
machine 1 skew 1000000
delay 100
process P machine 0 name ping
process Q machine 1 name pong
Q receive
P compute 1000
P call Q 10
Q compute 500
Q reply 10
Q receive
Q move 0 2000 bytes 4096
P compute 1000
P send Q 20
P compute 100
Q compute 200
P send Q 30
Q move 1 1000 bytes 8192
Q receive
Q compute 100
Q exit
P exit
"""


def export_events(*logs):
    """The trace events of `dpm export --perfetto` of the logs, and its stderr."""
    status, _, err = dpm("export", "--perfetto", path("e.json"), *logs)
    assert status == 0, err
    with open(path("e.json")) as f:
        return json.load(f)["traceEvents"], err


def test_export_follows_each_stream_and_reads_each_record_again():
    """The export keeps 16 bytes a record and reads each record's fields
    again from its log when it writes it: P's records, in two logs given
    in the other order, are laid out in the order of P's stream (a slice
    at its own record's time, not after the later run's); a merged log
    grouped by machine, far from the order of time, gives every record's
    own fields once; events are in the order of time, a flow's finish
    aside."""
    late, _ = generate("late", "machine 0 clock 900000\nprocess P machine 0 name p pid 0.40.1\n"
                               "process Q machine 0 name q pid 0.41.1\nrepeat 5\nP send Q 10\nQ receive\n"
                               "P compute 100\nend\n")
    early, _ = generate("early", "process P machine 0 name p pid 0.40.1 attached 100\n"
                                 "process Q machine 0 name q pid 0.41.1 attached 100\nrepeat 5\nP send Q 10\n"
                                 "Q receive\nP compute 100\nend\n")
    events, _ = export_events(late, early)
    sends = [e for e in events if e["name"] == "SEND"]
    assert len(sends) == 10 and all(e["ts"] == e["args"]["time"] for e in sends), sends
    dpm("generate", "--random", "3000", "--seed", "5", path("random.log"))
    status, _, err = dpm("merge", "-o", path("grouped.log"), path("random.log"))
    assert status == 0, err
    events, err = export_events(path("grouped.log"))
    assert "messages between machines arrive before" in err, err
    written = sorted((e["name"], e["args"]["time"], e["args"]["procTime"], e["args"]["sequence"])
                     for e in events if "time" in e.get("args", {}))
    _, dump, _ = dpm("dump", path("grouped.log"))
    records = sorted((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))) for m in
                     re.finditer(r"^(\S+) .*? time=(\d+) procTime=(\d+) .*? sequence=(\d+)", dump, re.M))
    assert len(records) == 3000 and written == records
    times = [e["ts"] for e in events if e["ph"] not in ("M", "f")]
    assert times == sorted(times)


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def path(name):
    return os.path.join(workdir, name)


def dpm(*args):
    """Runs the analyzer (sanitized build); (exit status, stdout, stderr)."""
    p = subprocess.run([DPM, *args], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def generate(name, scenario, *options):
    with open(path(name + ".scenario"), "w") as f:
        f.write(scenario)
    status, out, err = dpm("generate", *options, path(name + ".scenario"), path(name + ".log"))
    assert status == 0 and err == "", err
    return path(name + ".log"), out


def header_blocks(log):
    with open(log, "rb") as f:
        return struct.unpack_from("<I", f.read(24), 16)[0]


def test_help_and_usage():
    status, out, err = dpm("--help")
    assert status == 0 and err == ""
    for text in ("SYNOPSIS", "dpm dump [--rules FILE|TEXT] LOG...", "dpm stats [--csv DIR] LOG...",
                 "dpm merge -o OUT LOG...", "dpm export", "dpm generate --random N", "causality", "parallelism",
                 "critpath", "EXIT STATUS", "MESSAGES", "EXAMPLES"):
        assert text in out, text
    for command, text in (("dump", "--rules FILE|TEXT"), ("stats", "Fig. 5.12"), ("merge", "Order:"),
                          ("export", "--perfetto OUT.json"), ("generate", "SCENARIO LANGUAGE")):
        status, out, err = dpm(command, "--help")
        assert status == 0 and text in out and "EXIT STATUS" in out, (command, out)
    for args in ((), ("frob",), ("dump",), ("stats", "--bogus", "x"), ("merge", "x.log"), ("export", "x.log"),
                 ("generate", "only-one"), ("generate", "--random", "ten", "out.log")):
        status, out, err = dpm(*args)
        assert status == 2 and err.startswith("dpm: usage: ") and "--help" in err, (args, status, err)


def test_generate_writes_the_scenario():
    log, out = generate("known", KNOWN)
    assert out == "%s: 26 records, 2 lost\n" % log, out
    status, out, err = dpm("dump", log)
    lines = out.splitlines()
    assert status == 0 and len(lines) == 27, out
    assert lines[-1] == "26 records, 2 lost, 2 missing in sequence gaps"
    assert lines[0] == ("CREATEPROCESS machine=0 traceType=8 time=0 procTime=0 pc=0x1000c load=2 length=80 "
                        "pid=0x1100001 sequence=0 parent=0x0 nameLow=0x746e65696c63 nameHigh=0x0")
    sends = [l for l in lines if l.startswith("SEND ")]
    assert len(sends) == 8 and sends[-2].endswith(" call=0 status=-5"), sends
    # The same records as dmtrace, the project's other reader, prints.
    assert subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True).stdout.splitlines()[:-1] == \
        lines[:-1]
    # A repeated scenario: its declarations once, its steps every time.
    loop, out = generate("loop", "process P machine 0\nprocess Q machine 0\nrepeat 3\nP send Q 10\nQ receive\n"
                         "end\n", "--repeat", "2")
    assert out.endswith(": 26 records, 0 lost\n"), out    # 2 creates + 2 x 3 x (SEND MQ RECEIVECALL RECEIVE)


def test_generate_refuses_bad_scenarios():
    for text, line, reason in (
            ("process A machine 0\nA receive\nA compute 5\n", 3, "A is waiting in a receive: it cannot compute"),
            ("process A machine 0\nA send B 10\n", 2, "no process B (declare it first: process B machine M)"),
            ("process A machine 0\nA fly\n", 2, "expected a declaration"),
            ("repeat 2\nprocess A machine 0\n", 1, "repeat without end"),
            ("process A machine 0\nA compute lots\n", 2, "expected a number, not 'lots'"),
            ("process A machine 0\nA move 0 10\n", 2, "A is on machine 0 already"),
            ("process A machine 0\nA exit\nA move 1 10\n", 3, "A has exited: it cannot move"),
            ("process A machine 0\nA move 1\n", 2, "expected: NAME move MACHINE TOOK [bytes B]")):
        with open(path("bad.scenario"), "w") as f:
            f.write(text)
        status, out, err = dpm("generate", path("bad.scenario"), path("bad.log"))
        assert status == 1 and err.startswith("dpm: %s:%d: %s" % (path("bad.scenario"), line, reason)), err
        assert not os.path.exists(path("bad.log"))


def test_dump_selects_with_rules():
    log, _ = generate("known", KNOWN)
    status, out, err = dpm("dump", "--rules", "traceType=SEND, size>=200, pc=#*, load=#*;", log)
    assert status == 0, err
    assert out == ("SEND machine=0 traceType=1 time=1100 procTime=1100 length=112 pid=0x1100001 sequence=4 "
                   "toTask=0x1200001 messageId=0x2 code=0 passTask=0x0 channel=0 size=200 sendLink=1 passLink=-1 "
                   "call=0 status=0\n"
                   "SEND machine=0 traceType=1 time=1500 procTime=1500 length=112 pid=0x1100001 sequence=5 "
                   "toTask=0x1200001 messageId=0x3 code=0 passTask=0x0 channel=0 size=300 sendLink=1 passLink=-1 "
                   "call=0 status=0\n"
                   "2 of 26 records, 2 lost, 2 missing in sequence gaps\n"), out
    with open(path("bad.rules"), "w") as f:
        f.write("traceType=SEND;\nsize>10, colour=3;\n")
    status, out, err = dpm("dump", "--rules", path("bad.rules"), log)
    assert status == 1 and err == "dpm: %s:2:10: no such field in the description\n" % path("bad.rules"), err


def stats_lines(log):
    status, out, err = dpm("stats", log)
    assert status == 0 and err == "", err
    return out


def test_stats_of_the_known_scenario():
    log, _ = generate("known", KNOWN)
    out = stats_lines(log)
    for line in (
            "26 records, 2 lost (as the logs count them), 2 missing in sequence gaps",
            "7 messages sent, 752 bytes (SEND records of status 0); 1 sends failed at once",
            "  local:  6 messages (85.7%), 712 bytes (94.7%)",
            "  remote: 1 messages (14.3%), 40 bytes (5.3%)",
            "  7 messages: min 16, mean 107.4, max 300",
            "  3 queued messages: min 600, mean 1000.0, max 1500",
            "  2 receives that waited: min 250, mean 375.0, max 500",
            "  3 receives found their message already queued",
            "  2 messages were received without being queued (the receiver was waiting)",
            "CPU time (instructions: last - first PROCTIME of each process; 4450 in all)"):
        assert line + "\n" in out, (line, out)
    assert re.search(r"\[2\]\s+client 0\.17\.1\s+0\s+9\s+5\s+680\s+1\s+32\s+3750\s+1600000\.0\s+2\n", out), out
    assert re.search(r"\[1\]\s+kernel 0\.0\.1\s+0\s+0\s+0\s+0\s+2\s+56\s+-", out), out
    assert re.search(r"\[3\]\s+server 0\.18\.1\s+3\s+0\.800\s+1\.500\n", out), out
    assert re.search(r"\[4\]\s+1\.19\.1\s+700\s+15\.7%\s+\(its stream starts mid-run at PROCTIME 5000", out), out
    matrix = out.split("Who talks to whom: messages")[1].split("\n\n")[0].splitlines()
    assert [l.split() for l in matrix[2:]] == [["[2]", "1", "-", "4"], ["[3]", "-", "1", "-"], ["[4]", "1", "-", "-"]]
    figure = out.split("thesis Fig. 5.12")[1]
    assert re.search(r"client 0\.17\.1\s+cpu  44\.9%  messages  71\.4%  bytes  90\.4%\n"
                     r"\s+to kernel 0\.0\.1\s+1 messages\s+16 bytes\n"
                     r"\s+to server 0\.18\.1\s+4 messages\s+664 bytes\n", figure), figure
    assert re.search(r"server 0\.18\.1\s+cpu  39\.3%  messages  14\.3%  bytes   4\.3%", figure), figure


def test_stats_csv_and_export():
    log, _ = generate("known", KNOWN)
    status, out, err = dpm("export", "--perfetto", path("k.json"), "--dot", path("k.dot"), "--csv", path("csv"), log)
    assert status == 0 and err == "", err
    with open(path("k.json")) as f:
        events = json.load(f)["traceEvents"]
    starts = [e["id"] for e in events if e["ph"] == "s"]
    ends = [e["id"] for e in events if e["ph"] == "f"]
    # A flow for each message sent and received in the trace, A's four to B and B's reply; none for
    # those to the untraced K (A's and C's), whose receipt is not in it: no start without its finish.
    assert sorted(starts) == sorted(ends) == [1, 2, 3, 4, 5], events
    assert all(isinstance(e.get(k, 0), int) for e in events for k in ("ts", "dur")), events   # integer ns
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert {"machine 0", "machine 1", "client 0.17.1", "server 0.18.1", "1.19.1"} <= names, names
    # A waits 3500..3750 and B 3000..3500 (ns); in the scenario each RECEIVECALL bears the time of
    # the record before it, whose 1 ns slice the waiting slice follows: the slices are disjoint.
    waits = sorted(e["dur"] for e in events if e["name"] == "waiting")
    assert waits == [249, 499], waits
    with open(path("k.dot")) as f:
        dot = f.read()
    assert dot.startswith("digraph dpm {") and dot.rstrip().endswith("}")
    assert 'p2 -> p3 [label="4 msgs\\n664 bytes", penwidth=6.00, color="#ff00' in dot, dot
    assert "p1 [label=\"kernel 0.0.1\\n(not traced)\"" in dot and "subgraph cluster_machine1" in dot, dot
    with open(path("csv/pairs.csv")) as f:
        pairs = list(csv.DictReader(f))
    assert [(p["from_label"], p["to_label"], p["messages"], p["bytes"], p["local"]) for p in pairs] == [
        ("client 0.17.1", "kernel 0.0.1", "1", "16", "1"), ("client 0.17.1", "server 0.18.1", "4", "664", "1"),
        ("server 0.18.1", "client 0.17.1", "1", "32", "1"), ("1.19.1", "kernel 0.0.1", "1", "40", "0")], pairs
    with open(path("csv/summary.csv")) as f:
        summary = dict(csv.reader(f))
    assert (summary["wait_min"], summary["wait_mean"], summary["wait_max"]) == ("600", "1000.000", "1500")
    assert (summary["lost"], summary["gaps"], summary["cpu_total"]) == ("2", "2", "4450"), summary
    with open(path("csv/processes.csv")) as f:
        server = [r for r in csv.DictReader(f) if r["label"] == "server 0.18.1"][0]
    assert (server["queue_max"], server["queue_time_mean"], server["cpu_pct"]) == ("3", "0.800", "39.326"), server
    status, _, _ = dpm("stats", "--csv", path("csv2"), log)
    assert status == 0 and open(path("csv2/pairs.csv")).read() == open(path("csv/pairs.csv")).read()


def test_a_process_that_moves():
    """MOVED above: each figure of a process that moved twice, placed on the
    machine it was on at each record, worked out by hand; stats reads the
    log twice (its receivers are known only after a first reading)."""
    log, out = generate("moved", MOVED)
    assert out == "%s: 19 records, 0 lost\n" % log, out
    _, dump, _ = dpm("dump", log)
    assert ("MIGRATE machine=0 traceType=12 time=3600 procTime=500 pc=0x1002c load=1 length=88 pid=0x100000001100001 "
            "sequence=5 fromMachine=1 toMachine=0 took=2000 bytes=4096 messages=0 moves=1") in dump, dump
    out = stats_lines(log)
    assert re.search(r"\[1\]\s+ping 0\.16\.1\s+0\s+7\s+3\s+60\s+1\s+10\s+4900\s", out), out
    assert re.search(r"\[2\]\s+pong 1\.17\.1\s+1>0>1\s+12\s+1\s+10\s+3\s+60\s+6000\s", out), out
    for line in (
            "  local:  2 messages (50.0%), 50 bytes (71.4%)",
            "  remote: 2 messages (50.0%), 20 bytes (28.6%)",
            "  1 queued messages: min 1000, mean 1000.0, max 1000",
            "  3 receives that waited: min 700, mean 1600.0, max 3000"):
        assert line + "\n" in out, (line, out)
    machines = out.split("\nMachines (")[1].split("\n\n")[0].splitlines()[3:]
    assert [l.split() for l in machines] == [["0", "2", "10", "2300", "2", "1", "1", "1"],
                                             ["1", "1", "9", "600", "0", "1", "1", "1"]], machines
    moves = out.split("\nMigrations (2: MIGRATE records")[1].split("\n\n")[0].splitlines()[3:]
    assert [l.split() for l in moves] == [["pong", "1.17.1", "1", "1", "0", "3600", "2000", "4096", "0"],
                                          ["pong", "1.17.1", "2", "0", "1", "1005900", "1000", "8192", "1"]], moves
    status, _, err = dpm("stats", "--csv", path("mcsv"), log)
    assert status == 0, err
    with open(path("mcsv/pairs.csv")) as f:
        pairs = [(p["from_label"], p["messages"], p["local"], p["local_messages"]) for p in csv.DictReader(f)]
    assert pairs == [("ping 0.16.1", "3", "0", "2"), ("pong 1.17.1", "1", "0", "0")], pairs
    with open(path("mcsv/processes.csv")) as f:
        pong = [r for r in csv.DictReader(f) if r["label"] == "pong 1.17.1"][0]
    assert (pong["machine"], pong["last_machine"], pong["moves"]) == ("1", "1", "2"), pong
    with open(path("mcsv/migrations.csv")) as f:
        rows = [(r["move"], r["from"], r["to"], r["took"], r["messages"]) for r in csv.DictReader(f)]
    assert rows == [("1", "1", "0", "2000", "0"), ("2", "0", "1", "1000", "1")], rows
    with open(path("mcsv/machines.csv")) as f:
        assert [r["cpu"] for r in csv.DictReader(f)] == ["2300", "600"]
    steps = lambda *options: [r[:3] for r in csv.reader(dpm("parallelism", "--csv", *options, log)[1].splitlines()[1:])]
    zero = path("zero.delays")
    with open(zero, "w") as f:
        f.write("1 0 0\n")
    assert steps("--delays", zero) == [["1 upper bound: no delivery time, no contention", "2900", "2800"],
                                       ["2 delivery times, no contention", "2900", "2800"],
                                       ["3 contention, thesis Appendix A", "2900", "2900"],
                                       ["3 contention, elapsed-time simulation", "2900", "2900"]]
    assert [r[2] for r in steps("--delays", zero, "--place", "pong=1")] == ["2800"] * 4
    _, out, _ = dpm("parallelism", "--delays", zero, log)
    assert re.search(r"^  pong 1\.17\.1\s+1>0>1\s+1>0>1$", out, re.M), out
    _, out, _ = dpm("clocks", "--events", log)
    assert re.search(r"^\s+1\s+\+1000000\s+\[\+999900, \+1000100\]\s+100\s", out, re.M), out
    assert "moves: 2 of a process from one machine to another with TIME at both ends" in out, out
    assert re.search(r"^\s+3600\s+0\s+3600\s+pong 1\.17\.1\s+MIGRATE from machine 1$", out, re.M), out
    assert re.search(r"^\s+5900\s+1\s+1005900\s+pong 1\.17\.1\s+MIGRATE from machine 0$", out, re.M), out
    _, out, _ = dpm("waitstates", log)
    assert out.startswith("wait states: 3 waits (1 in CALLs, 2 in RECEIVEs), 4800 ns in all\n"), out
    status, _, err = dpm("export", "--perfetto", path("moved.json"), "--dot", path("moved.dot"), "--shiviz",
                         path("moved.shiviz"), log)
    assert status == 0 and err == "", err
    with open(path("moved.json")) as f:
        events = json.load(f)["traceEvents"]
    threads = sorted((e["pid"], e["args"]["name"]) for e in events if e["name"] == "thread_name")
    assert threads == [(1, "ping 0.16.1"), (1, "pong 1.17.1"), (2, "pong 1.17.1")], threads   # pid: machine + 1
    migrates = sorted((e["pid"], e["args"]["time"]) for e in events if e["name"] == "MIGRATE")
    assert migrates == [(1, 3600), (2, 1005900)], migrates
    thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    receives = sorted((e["pid"], e["args"]["time"]) for e in events
                      if e["name"] == "RECEIVE" and thread[(e["pid"], e["tid"])] == "pong 1.17.1")
    assert receives == [(1, 4600), (2, 1001100), (2, 1005900)], receives
    assert len({tid for _, tid in thread}) == 3        # a thread of its own on each machine, by number too
    with open(path("moved.dot")) as f:
        assert 'p2 [label="pong 1.17.1\\n12 records\\nran on machines 1>0>1", shape=box];' in f.read()
    with open(path("moved.shiviz")) as f:
        shiviz = f.read()
    assert "MIGRATE from machine 1; machine 0 time 3600 corrected 3600" in shiviz, shiviz
    assert "MIGRATE from machine 0; machine 1 time 1005900 corrected 5900" in shiviz, shiviz


def test_merge_round_trip():
    first, _ = generate("known", KNOWN)
    second, _ = generate("other", "process P machine 2 name p pid 2.40.1\nprocess Q machine 0 name q pid 0.41.1\n"
                                  "lose 3\n"
                                  "P send Q 10\nQ compute 5\nQ receive\n")
    status, out, err = dpm("merge", "-o", path("merged.log"), first, second)
    assert status == 0 and err == "" and out == "%s: 32 records from 2 logs, 5 lost\n" % path("merged.log"), (out, err)
    _, merged, _ = dpm("dump", path("merged.log"))
    _, one, _ = dpm("dump", first)
    _, two, _ = dpm("dump", second)
    assert sorted(merged.splitlines()[:-1]) == sorted(one.splitlines()[:-1] + two.splitlines()[:-1])
    assert merged.splitlines()[-1] == "32 records, 5 lost, 2 missing in sequence gaps"
    machines = [int(re.match(r"\S+ machine=(\d+) \S+ time=(\d+)", l).group(1)) for l in merged.splitlines()[:-1]]
    assert machines == sorted(machines), "grouped by machine"
    both = stats_lines(path("merged.log")).split("\n", 1)[1]
    status, separate, _ = dpm("stats", first, second)
    assert both == separate.split("\n", 1)[1]


# A sends B two messages, at 1000 and 2500 (machine 0's clock); B waits
# for each. Its records: A's and B's CREATEPROCESS and B's RECEIVECALL at
# 0; A's SEND and B's RECEIVE at 1000; B's RECEIVECALL at 1500; A's SEND,
# B's RECEIVE and both DESTROYPROCESS at 2500. The window 1200:2500 holds
# the last five: one message of 20 bytes.
TWO_MESSAGES = """\
process A machine 0 name a
process B machine 0 name b
B receive
A compute 1000
A send B 10
B compute 500
B receive
A compute 1000
A send B 20
A exit
B exit
"""


def test_every_command_honours_the_window():
    log, _ = generate("two", TWO_MESSAGES)
    status, out, err = dpm("dump", "--window", "1200:2500", log)
    assert status == 0 and err == "" and out.splitlines()[-1] == "5 records, 0 lost, 0 missing in sequence gaps", out
    times = [int(re.search(r" time=(\d+)", l).group(1)) for l in out.splitlines()[:-1]]
    assert times == [1500, 2500, 2500, 2500, 2500], times
    status, out, _ = dpm("stats", "--window=1200:2500", log)
    assert "1 messages sent, 20 bytes" in out and "window: TIME 1200 to 2500 ns" in out, out
    status, out, err = dpm("merge", "--window", "1200:", "-o", path("cut.log"), log)
    assert status == 0 and out == "%s: 5 records from 1 logs, 0 lost\n" % path("cut.log"), (out, err)
    status, out, _ = dpm("dump", "--window", "1200:2500", path("cut.log"))
    assert out.splitlines()[-1] == "5 records, 0 lost, 0 missing in sequence gaps", out
    status, out, err = dpm("export", "--window", ":1200", "--perfetto", path("w.json"), "--csv", path("wcsv"), log)
    assert status == 0 and err == "", err
    with open(path("w.json")) as f:
        events = json.load(f)["traceEvents"]
    assert len([e for e in events if e["ph"] == "s"]) == 1, events
    with open(path("wcsv/pairs.csv")) as f:
        assert [(p["messages"], p["bytes"]) for p in csv.DictReader(f)] == [("1", "10")]


def damaged(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def test_damaged_and_foreign_files_are_refused():
    log, _ = generate("known", KNOWN)
    with open(log, "rb") as f:
        data = bytearray(f.read())
    h = header_blocks(log)
    # The fourth entry's length made absurd: records 0..2 are read, record 3 is damaged.
    at = h * BLOCK + 32
    for _ in range(3):
        at += struct.unpack_from("<H", data, at)[0]
    bad = bytearray(data)
    struct.pack_into("<H", bad, at, 4000)
    tracelog_seal(bad, h)                          # the entry checks find it, not the block's checksum
    bad_log = damaged("entry.log", bad)
    for command in (("dump",), ("stats",), ("export", "--perfetto", path("x.json")), ("merge", "-o", path("x.log"))):
        status, out, err = dpm(*command, bad_log)
        assert status == 1 and err == "dpm: %s: record 3: a damaged entry in block %d\n" % (bad_log, h), (command, err)
    assert not os.path.exists(path("x.log")) and not os.path.exists(path("x.log.partial"))
    # A log cut inside its second record block.
    big, _ = generate("big", "process P machine 0\nprocess Q machine 0\nrepeat 200\nP send Q 10\nQ receive\nend\n")
    with open(big, "rb") as f:
        data = f.read()
    first_block_records = struct.unpack_from("<I", data, h * BLOCK + 16)[0]
    cut = damaged("cut.log", data[:(h + 1) * BLOCK + 1000])
    status, out, err = dpm("stats", cut)
    assert status == 1 and err == ("dpm: %s: record %d: the log is cut short: block %d has only 1000 of its 4096 "
                                   "bytes\n" % (cut, first_block_records, h + 1)), err
    # A block of this log numbered out of order.
    swapped = bytearray(data)
    struct.pack_into("<I", swapped, (h + 1) * BLOCK + 8, 7)
    status, _, err = dpm("dump", damaged("order.log", swapped))
    assert status == 1 and err.endswith(": record %d: block %d is numbered 7 where 1 was expected\n" %
                                        (first_block_records, h + 1)), err
    # Files that are no log.
    zeros = damaged("zeros.img", bytes(BLOCK * 4))
    short = damaged("short.log", b"DPMTRACE")
    header = bytearray(data[:BLOCK])
    struct.pack_into("<I", header, 16, 9999)
    long_header = bytearray(data[:BLOCK])          # says its description needs a second block
    struct.pack_into("<II", long_header, 16, 2, 5000)
    for name, want in ((zeros, "not a trace disk or log (no DPMTRACE header)"),
                       (short, "too short to be a trace disk or log (8 bytes)"),
                       (damaged("empty.log", b""), "empty: not a trace disk or log"),
                       (damaged("hdr.log", bytes(header)), "a damaged log header (it says 9999 header blocks)"),
                       (damaged("cuthdr.log", long_header), "the log header is cut short: the file ends inside its "
                                                             "2 header blocks"),
                       (path("missing.log"), "No such file or directory"),
                       (workdir, "a directory, not a trace disk or log")):
        status, out, err = dpm("stats", name)
        assert status == 1 and err == "dpm: %s: %s\n" % (name, want), (name, err)
    blank = path("blank.img")
    assert subprocess.run([DMTRACE, "blank", blank, "1"]).returncode == 0
    status, _, err = dpm("dump", blank)
    assert status == 1 and err == "dpm: %s: a trace disk with no log yet\n" % blank, err


def test_a_trace_disk_with_an_older_log_behind():
    """A trace disk holds the newest log first and an older, longer one's
    blocks after it: dpm reads only the newest, as dmtrace extract does."""
    image = path("disk.img")
    assert subprocess.run([DMTRACE, "blank", image, "2"]).returncode == 0
    big, _ = generate("old", "process P machine 0\nprocess Q machine 0\nrepeat 300\nP send Q 10\nQ receive\nend\n")
    small, _ = generate("known", KNOWN)
    with open(image, "r+b") as disk:
        disk.write(open(big, "rb").read())
        disk.seek(0)
        disk.write(open(small, "rb").read())
    got, want = dpm("dump", image), dpm("dump", small)
    assert got[0] == 0 and got[1] == want[1], (got[1][-300:], want[1][-300:])


def test_random_traffic_is_plausible_and_repeatable():
    status, out, _ = dpm("generate", "--random", "20000", "--seed", "3", path("r1.log"))
    assert status == 0 and out == "%s: 20000 records, 0 lost\n" % path("r1.log")
    dpm("generate", "--random", "20000", "--seed", "3", path("r2.log"))
    assert open(path("r1.log"), "rb").read() == open(path("r2.log"), "rb").read()
    out = stats_lines(path("r1.log"))
    assert "20000 records, 0 lost (as the logs count them), 0 missing in sequence gaps" in out
    assert re.search(r"  remote: [1-9]\d* messages", out) and re.search(r"\d+ queued messages: min", out), out
    assert "kernel 0.0.1" in out and re.search(r"\d+ receives that waited", out), out


def test_an_output_that_is_an_input_or_not_a_regular_file_is_refused():
    """Issue 18, finding 6: `dpm report -o run.log run.log` replaced the log
    with HTML, and `dpm merge -o /dev/full` replaced the device node. An
    output that is one of the inputs (also through a link) or not a regular
    file is refused, and nothing is written."""
    log, _ = generate("selfout", KNOWN)
    before = open(log, "rb").read()
    link = path("selfout-link.log")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(log, link)
    scenario = path("selfout.scenario")
    for command, out in ((("report", "-o", log, log), log), (("report", "-o", link, log), link),
                         (("merge", "-o", log, log), log), (("merge", "-o", link, log), link),
                         (("export", "--perfetto", log, log), log), (("export", "--dot", log, log), log),
                         (("causality", "--server", "a,b", "--dot", log, log), log)):
        status, _, err = dpm(*command)
        assert status == 1 and err.endswith("%s: is the input %s\n" % (out, log)), (command, status, err)
    status, _, err = dpm("generate", scenario, scenario)
    assert status == 1 and err.endswith("%s: is the input %s\n" % (scenario, scenario)), err
    assert open(log, "rb").read() == before, "the log is untouched"
    for device in ("/dev/null", "/dev/full"):
        for command in (("merge", "-o", device, log), ("report", "-o", device, log),
                        ("generate", "--random", "10", device)):
            status, _, err = dpm(*command)
            assert status == 1 and err.endswith("%s: is not a regular file\n" % device), (command, status, err)
        assert os.path.exists(device) and not os.path.isfile(device), "the device is still a device"
    assert not os.path.exists(log + ".partial")


def test_generate_random_has_an_upper_bound():
    """Issue 18, finding 12: `dpm generate --random N` wrote 8.7 GB in 30 s.
    N above the documented bound is a usage error, and nothing is written."""
    status, out, _ = dpm("generate", "--help")
    assert "N is at most 10000000" in out, out
    status, _, err = dpm("generate", "--random", "10000001", path("huge.log"))
    assert status == 2 and "--random N must be from 1 to 10000000, not 10000001" in err, (status, err)
    assert not os.path.exists(path("huge.log"))


def test_a_flipped_byte_in_a_record_block_is_detected():
    """Issue 18, finding 10: each record block carries a checksum of its
    contents; a flipped byte is reported with the file and the block, and
    nothing of that block is read as data."""
    big, _ = generate("flip", "process P machine 0\nprocess Q machine 0\nrepeat 200\nP send Q 10\nQ receive\nend\n")
    data = bytearray(open(big, "rb").read())
    h = header_blocks(big)
    first_block_records = struct.unpack_from("<I", data, h * BLOCK + 16)[0]
    data[(h + 1) * BLOCK + 32 + 8 + 24] ^= 0x01        # a record's pc in the second record block
    bad = damaged("flip-bad.log", data)
    for command in (("dump",), ("stats",), ("merge", "-o", path("flip-merged.log"))):
        status, out, err = dpm(*command, bad)
        assert status == 1 and err == ("dpm: %s: record %d: block %d is damaged: its checksum does not match its "
                                       "contents\n" % (bad, first_block_records, h + 1)), (command, err)
    assert not os.path.exists(path("flip-merged.log"))
