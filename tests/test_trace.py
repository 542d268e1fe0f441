"""The whole DPM path, as a user takes it: a cluster with trace
disks, a filter server started from the shell on node 0's trace disk,
programs run metered on machine 0 and on machine 1, `filter stats`, `halt`
(which flushes every kernel's batches and every filter before the power
goes), then on the host `dmtrace extract` and `dmtrace dump`. The log holds
exactly the records the filter said it kept, each process's stream numbered
without a gap, in the layouts meter/ defines (the log carries its own
description: dmtrace reads it by that), and a metered program prints what it
prints unmetered. The filters stream their logs live too (-l): each node's
stream, read while the cluster runs, already holds the records kept, and
rebuilt after halt (`dmtrace unstream`) it is the trace disk's log byte for
byte. On the file system's log, metered from boot, the analyzer's wait states
add up and agree with its blocking times, and its ShiViz log keeps ShiViz's
rules; on the session's log, which spans two machines, dpm clocks runs; on
tsp's log across three machines, whose clocks drift, the waits add up and
the space-time diagram runs no message backward."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import traceviewer
from cluster import Cluster
from harness import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests"))
import test_dpm_graph  # noqa: E402  (its ShiViz parser and its reader of dpm waitstates)

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
DPM = os.path.join(ROOT, "build", "tools", "dpm-sanitized")
workdir = tempfile.mkdtemp(prefix="dm-trace-")
traces = os.path.join(workdir, "traces")
cluster = None
result = {}


def teardown():
    if cluster:
        cluster.close()
    shutil.rmtree(workdir, ignore_errors=True)
    test_dpm_graph.teardown()


def session():
    """Run the session once; the tests below check what it left."""
    global cluster
    if result:
        return result
    cluster = Cluster(2, trace_disks=traces)
    cluster.wait_joined()
    node = cluster.node(0)
    result["start"] = node.command("filter start -l t - -")
    result["start_u"] = node.command("filter start -l @1 u - -")
    result["u"] = node.command("meter -F u run @1 hello")
    result["plain"] = node.command("ls /bin")
    result["metered"] = node.command("meter -F t run ls /bin")
    result["remote"] = node.command("meter -F t -e SEND,RECEIVE,CREATEPROCESS,DESTROYPROCESS run @1 hello")
    result["children"] = node.command("meter -F t run metertest spawn")   # its child inherits the metering
    result["stats"] = node.command("filter stats t")
    result["stats_u"] = node.command("filter stats u")
    time.sleep(2)   # the filters write their partly filled blocks within a second
    for k in (0, 1):
        result["live%d" % k] = unstream(k, "running")
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=30)
    result["halt"] = node.output
    cluster.close()
    cluster = None
    log = os.path.join(workdir, "t.log")
    result["extract"] = subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace0.img"), log],
                                       capture_output=True, text=True)
    result["dump"] = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
    for k in (0, 1):
        result["final%d" % k] = unstream(k, "final")
        result["disk%d" % k] = subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace%d.img" % k),
                                               os.path.join(workdir, "disk%d.log" % k)], capture_output=True, text=True)
    return result


def unstream(k, when):
    """`dmtrace unstream` of node k's live stream into WORKDIR/liveK-WHEN.log:
    (its output, the records it counted)."""
    out = os.path.join(workdir, "live%d-%s.log" % (k, when))
    run = subprocess.run([DMTRACE, "unstream", os.path.join(traces, "live%d.bin" % k), out],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    m = re.search(r": (\d+) blocks, (\d+) records, (\d+) lost \(of 1 log in the stream\) -> ", run.stdout)
    assert m, run.stdout
    return run.stdout, int(m.group(2))


def records():
    """The dump's records: (type, {field: value})."""
    out = []
    for line in session()["dump"].stdout.splitlines():
        words = line.split()
        if words and "=" in line:
            out.append((words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)))
    return out


def number(text):
    return int(text, 0)


def test_filter_starts_on_the_trace_disk():
    r = session()
    assert re.search(r"\[0\.\d+\.\d+\] filter t", r["start"]), r["start"]
    assert "filter t: logging to trace disk" in r["halt"], r["halt"][-2000:]


def test_a_metered_program_prints_what_it_prints_unmetered():
    r = session()
    plain = re.sub(r"(?m)^filter t: .*\n", "", r["plain"])     # the filter's start line may come late
    assert plain == r["metered"], (plain, r["metered"])
    assert "metertest" in r["plain"], r["plain"]


def test_the_log_is_extracted_and_dumped():
    r = session()
    assert r["extract"].returncode == 0, r["extract"].stderr
    assert r["dump"].returncode == 0, r["dump"].stderr
    m = re.search(r"^(\d+) records, (\d+) lost$", r["dump"].stdout, re.M)
    assert m and int(m.group(1)) > 50 and int(m.group(2)) == 0, r["dump"].stdout[-500:]


def test_the_log_holds_what_the_filter_kept():
    r = session()
    m = re.search(r"filter t: (\d+) batches, (\d+) records received, (\d+) kept, (\d+) dropped by the rules, "
                  r"(\d+) lost", r["stats"])
    assert m, r["stats"]
    assert int(m.group(2)) == int(m.group(3)) and int(m.group(5)) == 0, r["stats"]
    # The stats were asked before halt flushed the rest: the log holds at least that many.
    assert len(records()) >= int(m.group(3)) > 0, (len(records()), r["stats"])


def kept(stats):
    m = re.search(r"filter \w+: \d+ batches, (\d+) records received, (\d+) kept", stats)
    assert m, stats
    return int(m.group(2))


def test_the_live_streams_hold_the_records_while_the_cluster_runs():
    r = session()
    assert "filter t: logging to trace disk (16384 blocks) and live to the host" in r["halt"], r["halt"][-2000:]
    assert r["live0"][1] >= kept(r["stats"]) > 0, (r["live0"], r["stats"])
    assert r["live1"][1] >= kept(r["stats_u"]) > 0, (r["live1"], r["stats_u"])


def test_a_live_stream_rebuilt_is_the_trace_disks_log():
    r = session()
    for k in (0, 1):
        assert r["disk%d" % k].returncode == 0, r["disk%d" % k].stderr
        with open(os.path.join(workdir, "live%d-final.log" % k), "rb") as a, \
                open(os.path.join(workdir, "disk%d.log" % k), "rb") as b:
            assert a.read() == b.read(), (k, r["final%d" % k], r["disk%d" % k].stdout)


def test_every_stream_is_numbered_without_a_gap():
    streams = {}
    for kind, f in records():
        streams.setdefault(f["pid"], []).append(number(f["sequence"]))
    assert len(streams) == 4, streams.keys()      # ls, hello, metertest spawn and its child
    for pid, seqs in streams.items():
        assert seqs == list(range(len(seqs))), (pid, seqs[:20])


def test_each_program_is_named_and_ends():
    names = {}
    ends = {}
    for kind, f in records():
        if kind == "CREATEPROCESS":
            name = number(f["nameLow"]).to_bytes(8, "little") + number(f["nameHigh"]).to_bytes(8, "little")
            names[f["pid"]] = name.rstrip(b"\0")
        if kind == "DESTROYPROCESS":
            ends[f["pid"]] = number(f["status"])
    assert sorted(names.values()) == [b"hello", b"ls", b"metertest", b"metertest"], names
    assert set(ends) == set(names), (ends, names)
    assert all(status == 0 for status in ends.values()), ends


def test_the_remote_program_is_recorded_by_its_machine_with_its_flags_only():
    hello = [f for kind, f in records() if f.get("machine") == "1"]
    kinds = {kind for kind, f in records() if f.get("machine") == "1"}
    assert hello and kinds <= {"SEND", "RECEIVE", "CREATEPROCESS", "DESTROYPROCESS"}, kinds
    assert "SEND" in kinds and "RECEIVE" in kinds, kinds


def test_sends_and_receives_share_message_ids():
    sent = {f["messageId"] for kind, f in records() if kind == "SEND" and f.get("status") == "0"}
    received = {f["messageId"] for kind, f in records() if kind in ("RECEIVE", "MESSAGEQUEUED")}
    # metertest spawn's child sends ten messages to itself: each is received.
    assert len(sent & received) >= 10, (len(sent), len(received))


def test_the_file_system_metered_from_boot_into_another_machines_filter():
    """meter.fs=1: the process manager starts the filter `fstrace` on machine 1's
    trace disk (lent by machine 1's kernel: KOP_DEVICE) before the file
    system, and meters the four processes from their first instruction:
    each stream begins with CREATEPROCESS and STARTPROCESS, and the first
    requests (the shell's program load) are in it."""
    global cluster
    fs_traces = os.path.join(workdir, "fs-traces")
    cluster = Cluster(2, trace_disks=fs_traces, meter_fs=1)
    cluster.wait_joined()
    node = cluster.node(0)
    out = node.command("ls /")
    assert "bin" in out, out
    stats = node.command("filter stats fstrace")
    assert re.search(r"filter fstrace: \d+ batches, \d+ records received", stats), stats
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=30)
    cluster.close()
    cluster = None
    log = os.path.join(workdir, "fs.log")
    extract = subprocess.run([DMTRACE, "extract", os.path.join(fs_traces, "trace1.img"), log],
                             capture_output=True, text=True)
    assert extract.returncode == 0, extract.stderr
    dump = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True).stdout
    streams = {}
    for line in dump.splitlines():
        words = line.split()
        fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if "pid" in fields:
            streams.setdefault(fields["pid"], []).append((words[0], fields))
    names = {}
    for pid, recs in streams.items():
        first = recs[0][1]
        name = int(first.get("nameLow", "0"), 0).to_bytes(8, "little").rstrip(b"\0")
        names[name] = recs
    assert sorted(names) == [b"bm", b"di", b"dm", b"ri"], sorted(names)
    for name, recs in names.items():
        kinds = [k for k, f in recs]
        assert kinds[:2] == ["CREATEPROCESS", "STARTPROCESS"], (name, kinds[:5])
        assert [int(f["sequence"]) for k, f in recs] == list(range(len(recs))), name
        assert "RECEIVE" in kinds and "SEND" in kinds, (name, kinds[:20])
        assert all(f["machine"] == "0" for k, f in recs), name      # metered where they run


def dpm(*args):
    run = subprocess.run([DPM, *args], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    assert run.returncode == 0 and run.stderr == "", (args, run.stderr)
    return run.stdout


def test_the_analyses_of_real_traces_add_up():
    """The file system's log of the test above (ri, dm, bm, di from boot):
    every wait is split, the causes, the rows and the processes each add up
    to the total, which is dpm stats's blocking time; the servers' CALLs
    show their work. Its ShiViz log is read back by test_dpm_graph's parser,
    each clock recomputed from the events. The session's log spans machines
    0 and 1: dpm clocks leaves no message backward that constant offsets
    can set right."""
    log = os.path.join(workdir, "fs.log")
    assert os.path.exists(log), "the file system's log (made by the test above) is missing"
    total, causes, pairs, by_process, out = test_dpm_graph.waitstates(log)
    assert total > 0 and sum(causes.values()) == total == sum(p[3] for p in pairs) == sum(by_process.values()), out
    assert causes["server's work"] > 0 and "note: " not in out.split("waiting time by process")[1], out
    csv_dir = os.path.join(workdir, "fs-csv")
    dpm("stats", "--csv", csv_dir, log)
    with open(os.path.join(csv_dir, "summary.csv")) as f:
        summary = dict(line.split(",", 1) for line in f.read().splitlines()[1:])
    waited = int(summary["waited_receives"])
    assert re.search(r"^wait states: %d waits" % waited, out, re.M), (summary, out[:300])
    assert abs(total - waited * float(summary["blocking_mean"])) <= 0.001 * waited + 1, (total, summary)
    shiviz = os.path.join(workdir, "fs.shiviz")
    dpm("export", "--shiviz", shiviz, log)
    with open(shiviz) as f:
        events = test_dpm_graph.shiviz_parse(f.read())
    assert len(events) > 100 and test_dpm_graph.recomputed_clocks(events) == [c for _, c, _ in events]
    out = dpm("clocks", os.path.join(workdir, "t.log"))
    assert re.search(r"^clocks of 2 machines from \d+ messages between them", out, re.M), out
    m = re.search(r"backward \(arriving before they were sent\): \d+ by the machines' own clocks \((\d+) within "
                  r"one machine\), (\d+) corrected", out)
    assert m and m.group(1) == "0", out
    assert m.group(2) == "0" or "no constant offsets satisfy every message" in out, out


def test_the_analyses_of_a_trace_across_machines():
    """tsp's controller on machine 0 and its servers on machines 1 and 2,
    metered into a filter on machine 2: the machines' guest clocks run at
    their own, varying rates (idle time is skipped under -icount), so
    messages arrive before they were sent by them, and constant offsets may
    not explain every message (then dpm clocks says so, with the slack).
    Whatever the clocks, the waits add up, the ShiViz log keeps ShiViz's
    rules, and the report's space-time diagram has no arrow backward."""
    traces_here = os.path.join(workdir, "tsp-traces")
    with Cluster(3, trace_disks=traces_here) as c:
        c.wait_joined()
        node = c.node(0)
        node.command("filter start @2 x - -")
        out = node.command("meter -F x run tsp -v sync -b length -s 1 8 2 1,2", timeout=120)
        assert "optimum" in out, out
        node.command("filter stop x")
        node.type("halt\n")
        node.expect(r"machine 0: halted\n", timeout=30)
    log = os.path.join(workdir, "tsp.log")
    extract = subprocess.run([DMTRACE, "extract", os.path.join(traces_here, "trace2.img"), log],
                             capture_output=True, text=True)
    assert extract.returncode == 0, extract.stderr
    out = dpm("clocks", log)
    m = re.search(r"^clocks of 3 machines from (\d+) messages between them", out, re.M)
    assert m and int(m.group(1)) > 10, out
    slack = re.search(r"a message may arrive up to (\d+) ns sooner than the least delay allows", out)
    after = int(re.search(r"by the machines' own clocks \(0 within one machine\), (\d+) corrected", out).group(1))
    assert after == 0 if not slack else int(slack.group(1)) > 0, out
    total, causes, pairs, by_process, out = test_dpm_graph.waitstates(log)
    assert total > 0 and sum(causes.values()) == total == sum(p[3] for p in pairs) == sum(by_process.values()), out
    assert causes["late sender"] > 0, out
    shiviz = os.path.join(workdir, "tsp.shiviz")
    dpm("export", "--shiviz", shiviz, log)
    with open(shiviz) as f:
        events = test_dpm_graph.shiviz_parse(f.read())
    assert test_dpm_graph.recomputed_clocks(events) == [c for _, c, _ in events]
    page = os.path.join(workdir, "tsp.html")
    dpm("report", "-o", page, log)
    with open(page) as f:
        arrows = re.findall(r'<line class="message[^"]*" x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)"', f.read())
    assert len(arrows) > 10 and all(float(x2) >= float(x1) for x1, x2 in arrows), arrows[:10]


def test_the_export_is_what_a_trace_viewer_shows():
    """`dpm export --perfetto` of the session's log (programs on both
    machines, talking to processes that are not metered) and of the file
    system's (its four servers, and the shell and the process manager, not
    metered), loaded by a real viewer's own parser (scripts/traceviewer.py:
    Chrome DevTools' trace engine, which the first run installs from npm
    into build/viewer): a thread per process, on it a slice per SEND and
    RECEIVE and per wait, none starting inside another and ending after it,
    and an arrow for each message whose SEND and RECEIVE are both in the
    log, between their slices; no other flow event, and integer times."""
    for name in ("t", "fs"):
        log, out = os.path.join(workdir, name + ".log"), os.path.join(workdir, name + ".json")
        assert os.path.exists(log), "%s: no log (the test that makes it failed)" % log
        dpm("export", "--perfetto", out, log)
        problems = traceviewer.check(log, out)
        assert not problems, "%s:\n%s" % (log, "\n".join(problems))


def test_a_batch_copied_into_a_waiting_filter_gives_its_page_back():
    """A metered `hello`'s one batch goes to the filter while it waits in
    RECEIVE, copied into its buffer: the batch's page must go back to the
    kernel (it leaked, a page each)."""
    with Cluster(1, trace_disks=os.path.join(workdir, "pages")) as c:
        c.wait_joined()
        node = c.node(0)
        node.command("filter start t - -")

        def free_pages():
            node.type("\x14")   # Ctrl-T: the kernel's report, with its free pages
            return int(node.expect(r"machine 0 of \d+, epoch \d+: (\d+) free pages\n", 10).group(1))
        node.command("meter -F t run hello")   # the batch pages the meter keeps for reuse
        before = free_pages()
        for _ in range(20):
            node.command("meter -F t run hello")
        after = free_pages()
        assert after >= before - 2, "20 metered runs left %d pages fewer" % (before - after)


def test_dpmrun_takes_a_workload_to_summarized_logs_in_one_command():
    out_dir = os.path.join(workdir, "dpmrun")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "dpmrun.py"), "--out", out_dir,
                          "filter start t - - /t.log", "meter -F t run hello", "meter -F t run @1 hello"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert re.search(r"\$ meter -F t run hello\nhello from process 0\.", run.stdout), run.stdout[-2000:]
    assert re.search(r"trace0\.img: \d+ blocks, \d+ records, 0 lost ->", run.stdout), run.stdout[-2000:]
    assert "trace1.img: no log (no filter ran there)" in run.stdout, run.stdout[-2000:]
    # The analyzer's statistics: hello on machine 0 and on machine 1, each named by its
    # CREATEPROCESS and sending its 3 messages.
    trace0 = run.stdout.split("dpm stats: ")[1]
    rows = re.findall(r"^  \[\d+\]   (hello )?(\d)\.\d+\.\d+ +(\d) +(\d+) +(\d+) ", trace0, re.M)
    senders = sorted((name, machine) for name, machine, at, records, sent in rows if int(sent) == 3)
    assert senders == [("hello ", "0"), ("hello ", "1")], run.stdout[-3000:]
    assert re.search(r"^\d+ records, 0 lost", run.stdout, re.M), run.stdout[-3000:]
    for name in ("trace0.log", "trace0.txt", "trace0.stats", "file-t.log", "file-t.txt", "file-t.stats"):
        assert os.path.exists(os.path.join(out_dir, name)), name
    # The same log, written to the trace disk and into the file system (taken out with dmfs get).
    counts = re.findall(r"^dpm stats: \S+/(trace0|file-t)\.log\n(\d+) records, 0 lost", run.stdout, re.M)
    assert len(counts) == 2 and counts[0][1] == counts[1][1], counts
    again = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "dpmrun.py"), "--collect", out_dir],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "hello" in again.stdout, again.stdout + again.stderr
    usage = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "dpmrun.py")], capture_output=True, text=True)
    assert usage.returncode == 2 and "no commands" in usage.stderr, usage.stderr
