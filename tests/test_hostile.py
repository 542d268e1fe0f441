"""Hostile programs (SECURITY.md): on a cluster of two nodes,
user/tests/isotest checks, one line per guarantee, that a process cannot
read or write another's memory, forge a link, use a data area beyond its
link's rights, reach a kernel link it was not given, change its own
metering, or take the kernel's links and message buffers from the others,
and that its PROCTIME counts its own instructions, not the interrupts taken
while it ran (quiet, beside a busy process, under a stream of messages from
machine 1). Then user/tests/kfuzz makes random kernel calls from several
processes at once for a fixed seed; the kernel must answer every one with
a result or an error of demos.h, a checker beside them must keep every
message and copy intact, and afterwards ktest must still pass whole and no
fuzzer process be left: 4 fuzzers x 25,000 calls here (about 25 s), and
`make test-hostile` the long run, 4 x 250,000: a million calls."""
import os
import re
import shutil
import subprocess
import tempfile

from cluster import Cluster
from harness import ROOT, report_checks

DPM = os.path.join(ROOT, "build", "tools", "dpm")
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")

cluster = None
KFUZZ_SEED = 20261124
KFUZZ_CALLS = int(os.environ.get("KFUZZ_CALLS", "25000"))
KFUZZ_PROCS = int(os.environ.get("KFUZZ_PROCS", "4"))


def teardown():
    if cluster:
        cluster.close()


def node():
    global cluster
    if cluster is None:
        cluster = Cluster(2)
        cluster.wait_joined()
    return cluster.node(0)


def test_isotest(report):
    report_checks(report, node().command("run isotest", timeout=300), "isotest", "isotest", 26)


def test_kfuzz_then_ktest(report):
    n = node()
    out = n.command("run kfuzz %d %d %d" % (KFUZZ_SEED, KFUZZ_CALLS, KFUZZ_PROCS),
                    timeout=max(300, KFUZZ_CALLS * KFUZZ_PROCS // 1000))
    tallies = re.findall(r"^kfuzz: fuzzer \d+: (\d+) calls: (\d+) results.*; (\d+) violations$", out, re.M)
    assert len(tallies) == KFUZZ_PROCS, out[-3000:]
    assert all(int(calls) == KFUZZ_CALLS and int(violations) == 0 for calls, results, violations in tallies), out
    # Not every call may fail: the fuzzer makes links, messages and copies that work too.
    assert all(int(results) > KFUZZ_CALLS // 20 for calls, results, violations in tallies), tallies
    m = re.search(r"^kfuzz: checker: (\d+) rounds, (\d+) failed$", out, re.M)
    assert m and int(m.group(1)) > 0 and m.group(2) == "0", out[-2000:]
    assert "kfuzz: seed %d, %d fuzzers x %d calls: passed" % (KFUZZ_SEED, KFUZZ_PROCS, KFUZZ_CALLS) in out, out[-2000:]
    assert "kernel trap" not in n.output and "panic" not in n.output, n.output[-3000:]
    report_checks(report, n.command("run ktest", timeout=300), "after_kfuzz.ktest", "ktest", 100)
    assert "kfuzz" not in n.command("ps"), "a fuzzer process is left"


def dpm_stats(log):
    """`dpm stats` of a log: (records, lost as the log counts them, missing in gaps)."""
    out = subprocess.run([DPM, "stats", log], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    m = re.search(r"^(\d+) records, (\d+) lost \(as the logs count them\), (\d+) missing in sequence gaps$",
                  out.stdout, re.M)
    assert m, out.stdout[:500]
    return tuple(int(x) for x in m.groups())


def extract(traces, k, name):
    """The log on machine k's trace disk, extracted (the disk image is read while the
    cluster runs: its filter has stopped, everything written); its `dpm stats`."""
    log = os.path.join(traces, name + ".log")
    out = subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace%d.img" % k), log],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return dpm_stats(log)


def resent(netstat):
    """The frames resent, over every pair of machines (netstat's RESENT column)."""
    rows = re.findall(r"^\d+ +\d+ +(?:up|down) +(?:\d+ +){4}(\d+) ", netstat, re.M)
    assert rows, netstat
    return sum(int(r) for r in rows)


def test_no_record_vanishes_in_a_storm_behind_a_lossy_wire():
    """A metered process on machine 0 sends to itself as fast as it can
    (metertest flooder: 4 records a message, 8 more for its life) into a
    filter on machine 1, every frame into each machine crossing a wire that
    loses 10 % of them. Lossless metering: the log holds every record and
    counts none lost. Lossy metering: every record is in the log or counted
    lost by it, and the analyzer says how many; none vanishes. The
    transports' counters show the frames were resent."""
    traces = tempfile.mkdtemp(prefix="dm-storm-")
    messages = 10000
    generated = 4 * messages + 8
    try:
        with Cluster(2, faults="loss=10", trace_disks=traces) as storm:
            storm.wait_joined()
            n = storm.node(0)
            for mode, option in (("lossless", ""), ("lossy", "-l ")):
                out = n.command("filter start @1 %s - -" % mode, timeout=60)
                assert re.search(r"\[1\.\d+\.\d+\] filter %s" % mode, out), out
                out = n.command("meter -F %s %srun metertest flooder %d" % (mode, option, messages), timeout=600)
                assert "exit status" not in out, out
                n.command("filter stop %s" % mode, timeout=120)
                records, lost, missing = extract(traces, 1, mode)
                if mode == "lossless":
                    assert (records, lost, missing) == (generated, 0, 0), (records, lost, missing, generated)
                else:   # the records lost leave gaps in their numbers: the log's count includes them
                    assert records + lost == generated and missing <= lost, (records, lost, missing, generated)
            netstat = n.command("netstat", timeout=60)
            n.type("halt\n")
            n.expect(r"machine 0: halted\n", timeout=60)
        assert resent(netstat) > 0, netstat
    finally:
        shutil.rmtree(traces, ignore_errors=True)
