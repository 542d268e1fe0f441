"""The whole DPM path, as a user takes it (issue 5): a cluster with trace
disks, a filter server started from the shell on node 0's trace disk,
programs run metered on machine 0 and on machine 1, `filter stats`, `halt`
(which flushes every kernel's batches and every filter before the power
goes), then on the host `dmtrace extract` and `dmtrace dump`. The log holds
exactly the records the filter said it kept, each process's stream numbered
without a gap, in the layouts meter/ defines (the log carries its own
description: dmtrace reads it by that), and a metered program prints what it
prints unmetered."""
import os
import re
import shutil
import subprocess
import tempfile

from cluster import Cluster
from harness import ROOT

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
workdir = tempfile.mkdtemp(prefix="dm-trace-")
traces = os.path.join(workdir, "traces")
cluster = None
result = {}


def teardown():
    if cluster:
        cluster.close()
    shutil.rmtree(workdir, ignore_errors=True)


def session():
    """Run the session once; the tests below check what it left."""
    global cluster
    if result:
        return result
    cluster = Cluster(2, trace_disks=traces)
    cluster.wait_joined()
    node = cluster.node(0)
    result["start"] = node.command("filter start t - -")
    result["plain"] = node.command("ls /bin")
    result["metered"] = node.command("meter -F t run ls /bin")
    result["remote"] = node.command("meter -F t -e SEND,RECEIVE,CREATEPROCESS,DESTROYPROCESS run @1 hello")
    result["children"] = node.command("meter -F t run metertest spawn")   # its child inherits the metering
    result["stats"] = node.command("filter stats t")
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=30)
    result["halt"] = node.output
    cluster.close()
    cluster = None
    log = os.path.join(workdir, "t.log")
    result["extract"] = subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace0.img"), log],
                                       capture_output=True, text=True)
    result["dump"] = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
    return result


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
