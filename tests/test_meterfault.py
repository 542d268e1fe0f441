"""Metering when a filter goes away: nothing hangs, nothing is lost
without a count, no name is held by a filter that is gone.

On 2 nodes with trace disks: a filter on machine 1 whose machine is
killed under a lossless metered ping (ping and pong go on, `filter stop`
returns at once and the name is free, the records are counted lost at
halt and, once ping is metered into another filter, in that filter's
count and in its log as `dpm stats` reads it); `filter stop` ends the
system metering and the process metering into the filter; a filter killed
by pid gives its name up, and `meter` into it is refused; a second filter
of a name that runs is refused; a machine booted again lends its trace
disk to a new filter; at a halt under metered programs, every record a
kernel made is in the log or counted lost by that kernel, also when the
filter's queue is full of batches; a log file that outgrows the file system
ends with every later record counted lost in it, and the trace disk's log
goes on."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from cluster import Cluster
from harness import ROOT, make_image

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")
DPM = os.path.join(ROOT, "build", "tools", "dpm")
workdir = tempfile.mkdtemp(prefix="dm-meterfault-")
clusters = []


def teardown():
    for c in clusters:
        c.close()
    shutil.rmtree(workdir, ignore_errors=True)


def boot(name):
    c = Cluster(2, trace_disks=os.path.join(workdir, name))
    clusters.append(c)
    c.wait_joined()
    return c, c.node(0)


def started(out, what):
    m = re.search(r"\[(\d+\.\d+\.\d+)\] %s" % what, out)
    assert m, out
    return m.group(1)


def cpu(node, pid):
    """The CPU time `ps` shows for pid (None if it is not listed)."""
    for line in node.command("ps").splitlines()[1:]:
        f = line.split()
        if len(f) >= 7 and f[0] == pid:
            return int(f[4])
    return None


def lost_line(halt_output):
    m = re.search(r"machine 0: meter: (\d+) records lost: (\d+) their filter's machine was down, "
                  r"(\d+) their filter had ended, (\d+) dropped \(lossy\), (\d+) no room, (\d+) unsent at halt\n",
                  halt_output)
    return m and tuple(int(g) for g in m.groups())


def test_a_filter_whose_machine_dies_stops_nothing_and_loses_nothing_silently():
    c, node = boot("down")
    node.command("filter start t - -")
    started(node.command("filter start @1 r - -"), "filter r")
    ping = started(node.command("meter -F r run ping 1000000 &"), "ping")
    time.sleep(2)
    c.kill(1)
    # The kernel gives machine 1 up within seconds; the metering into r stops.
    node.expect(r"machine 0: meter: p[io]ng \(\d+\.\d+\): its filter's machine is down; metering stops", timeout=20,
                since=0)
    time.sleep(1)
    first = cpu(node, ping)
    time.sleep(3)
    second = cpu(node, ping)
    assert first is not None and second is not None and second > first, (first, second)
    start = time.monotonic()
    out = node.command("filter stop r", timeout=30)
    assert time.monotonic() - start < 10, "filter stop r took %.1f s" % (time.monotonic() - start)
    assert out == "filter: r: no such filter\n", out
    out = node.command("meter -F r run hello")
    assert "run: hello: no such program, or no filter called r" in out, out
    # The stream goes on in filter t: its first batch carries the count of what r never got.
    out = node.command("meter attach -F t %s" % ping)
    assert "meter:" not in out.replace("machine 0: meter:", ""), out
    time.sleep(2)
    node.command("kill %s" % ping)
    stats = node.command("filter stats t")
    m = re.search(r"filter t: \d+ batches, (\d+) records received, \d+ kept, \d+ dropped by the rules, (\d+) lost",
                  stats)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) > 0, stats
    counted_by_t = int(m.group(2))
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)
    lost = lost_line(node.output)
    assert lost and lost[1] > 0 and lost[0] == sum(lost[1:]), node.output[-2000:]
    assert re.search(r"machine 0: meter: \d+ records, \d+ batches taken, \d+ dropped \(lossy\), [1-9]\d* orphaned",
                     node.output), node.output[-2000:]
    log = os.path.join(workdir, "t.log")
    subprocess.run([DMTRACE, "extract", os.path.join(workdir, "down", "trace0.img"), log], check=True,
                   capture_output=True)
    run = subprocess.run([DPM, "stats", log], capture_output=True, text=True)
    m = re.search(r"^(\d+) records, (\d+) lost", run.stdout, re.M)
    assert run.returncode == 0 and m, run.stdout[:500] + run.stderr
    assert int(m.group(2)) >= counted_by_t > 0, (run.stdout[:500], stats)


def test_filter_stop_ends_the_metering_into_it():
    c, node = boot("stop")
    node.command("filter start t - -")
    assert node.command("meter -F t system 0") == ""
    ping = started(node.command("meter -F t run ping 1000000 &"), "ping")
    time.sleep(1)
    out = node.command("filter stop t", timeout=60)
    assert "filter t: stopped:" in node.output, node.output[-1500:]
    assert not out.startswith("filter: t:"), out
    # Nothing is metered into t any more: neither ping nor what starts now.
    node.command("run hello")
    first = cpu(node, ping)
    time.sleep(2)
    assert cpu(node, ping) > first
    node.command("kill %s" % ping)
    out = node.command("meter -F t run hello")
    assert "run: hello: no such program, or no filter called t" in out, out
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)
    assert not lost_line(node.output), node.output[-2000:]
    assert re.search(r"machine 0: meter: \d+ records, \d+ batches taken, 0 dropped \(lossy\), 0 orphaned, "
                     r"0 lost for room", node.output), node.output[-2000:]


def test_a_killed_filter_gives_its_name_up_and_its_records_are_counted():
    c, node = boot("kill")
    u = started(node.command("filter start u - -"), "filter u")
    ping = started(node.command("meter -F u run ping 1000000 &"), "ping")
    time.sleep(1)
    out = node.command("kill %s" % u)
    assert "kill:" not in out, out
    time.sleep(1)
    out = node.command("meter -F u run hello")
    assert "run: hello: no such program, or no filter called u" in out, out
    out = node.command("meter -F u attach %s" % ping)
    assert out == "meter: %s: no filter called u\n" % ping, out
    out = node.command("filter stats u")
    assert out == "filter: u: no such filter\n", out
    # The name and the trace disk are free again.
    started(node.command("filter start u - -"), "filter u")
    node.command("kill %s" % ping)
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)
    lost = lost_line(node.output)
    assert lost and lost[2] > 0, node.output[-2000:]


def test_a_second_filter_of_a_name_that_runs_is_refused():
    c, node = boot("twice")
    started(node.command("filter start t - -"), "filter t")
    out = node.command("filter start @1 t - -")
    assert out == "filter: t: a filter named t already runs\n", out
    out = node.command("run @1 filter t - - /t.log")
    assert "filter t: a filter named t already runs" in out and "exit status 2" in out, out
    stats = node.command("filter stats t")
    assert stats.startswith("filter t: 0 batches"), stats
    # Machine 1's trace disk was never taken: a filter of another name starts there.
    started(node.command("filter start @1 v - -"), "filter v")
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)


def test_a_machine_booted_again_lends_its_trace_disk_again():
    """A filter on machine 1, whose machine is killed and booted again: a new
    filter starts on machine 1's trace disk, with the new boot's device, and
    its log holds what it was sent."""
    c, node = boot("again")
    started(node.command("filter start @1 v - -"), "filter v")
    c.kill(1)
    c.restart(1)
    c.wait_joined()
    out = node.command("filter start @1 t - -")
    started(out, "filter t")
    assert "filter t: logging to trace disk" in out, out
    assert "hello from process 1." in node.command("meter -F t run @1 hello")
    assert "filter t: stopped:" in node.command("filter stop t", timeout=60)
    log = os.path.join(workdir, "again.log")
    out = subprocess.run([DMTRACE, "extract", os.path.join(workdir, "again", "trace1.img"), log],
                         capture_output=True, text=True)
    assert out.returncode == 0 and re.search(r": \d+ blocks, [1-9]\d* records, 0 lost", out.stdout), out
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)


def test_records_made_up_to_halt_are_in_the_log_or_counted_lost():
    """halt while metered programs still run, a lossless ping on machine 0
    and a lossy one on machine 1, into a filter on machine 0: the records
    each kernel says it made are those of its machine in the log plus
    those it says it lost, the ones still on their way at halt among
    them."""
    c, node = boot("halt")
    started(node.command("filter start t - -"), "filter t")
    started(node.command("meter -F t run ping 1000000 &"), "ping")
    started(node.command("meter -F t -l run @1 ping 1000000 &"), "ping")
    time.sleep(2)
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)
    other = c.node(1)
    other.expect(r"machine 1: halted\n", timeout=60)
    log = os.path.join(workdir, "halt.log")
    subprocess.run([DMTRACE, "extract", os.path.join(workdir, "halt", "trace0.img"), log], check=True,
                   capture_output=True)
    dump = subprocess.run([DMTRACE, "dump", log], check=True, capture_output=True, text=True).stdout
    for k, text in ((0, node.output), (1, other.output)):
        made = re.search(r"machine %d: meter: (\d+) records, " % k, text)
        lost = re.search(r"machine %d: meter: (\d+) records lost: " % k, text)
        logged = len(re.findall(r"^\S+ machine=%d " % k, dump, re.M))
        assert made and logged > 0, (k, text[-1500:])
        assert int(made.group(1)) == logged + (int(lost.group(1)) if lost else 0), (
            "machine %d: %s records made, %d in the log, %s lost" % (k, made.group(1), logged,
                                                                     lost.group(1) if lost else 0))


def test_a_filter_whose_queue_is_full_at_halt_writes_out_every_record_it_took():
    """A lossless ping metered into a filter on its own machine that also
    logs into a file (slower: the filter's queue is full of batches when
    halt comes): the flush at halt waits for the filter rather than give up
    at once, and the records the kernel made are all in the trace disk's
    log and in the log file."""
    image = make_image(os.path.join(workdir, "full.img"), 16)
    c = Cluster(1, disk=image, trace_disks=os.path.join(workdir, "full"))
    clusters.append(c)
    node = c.node(0)
    started(node.command("filter start t - - /t.log"), "filter t")
    # 12,000 round trips make about 96,000 records: the log file's room on
    # this disk is about 109,000 (the next test fills it), and they take
    # about 2 s, so that ping still runs at halt.
    started(node.command("meter -F t run ping 12000 &"), "ping")
    time.sleep(0.5)
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)
    assert "all answered" not in node.output, "ping ended before halt:\n" + node.output[-1500:]
    made = int(re.search(r"machine 0: meter: (\d+) records, ", node.output).group(1))
    assert not re.search(r"machine 0: meter: \d+ records lost", node.output), node.output[-1500:]
    c.close()
    logs = {"disk": os.path.join(workdir, "full-disk.log"), "file": os.path.join(workdir, "full-file.log")}
    subprocess.run([DMTRACE, "extract", os.path.join(workdir, "full", "trace0.img"), logs["disk"]], check=True,
                   capture_output=True)
    subprocess.run([DMFS, "get", image, "/t.log", logs["file"]], check=True, capture_output=True)
    for where, log in logs.items():
        run = subprocess.run([DPM, "stats", log], capture_output=True, text=True)
        m = re.search(r"^(\d+) records, (\d+) lost", run.stdout, re.M)
        assert m and (int(m.group(1)), int(m.group(2))) == (made, 0), (where, made, run.stdout[:300], run.stderr)


def test_a_log_file_that_outgrows_the_file_system_ends_with_its_loss_counted():
    """A filter that logs into a trace disk and into a file, under a lossless
    ping that outgrows the file system: the log file ends where the file
    system has no room (the filter says so) and counts every later record
    lost, and the trace disk's log goes on with every record the kernel
    made. (The filter stopped writing both logs, and its file said nothing
    was missing.)"""
    image = make_image(os.path.join(workdir, "room.img"), 16)
    c = Cluster(1, disk=image, trace_disks=os.path.join(workdir, "room"))
    clusters.append(c)
    node = c.node(0)
    started(node.command("filter start t - - /t.log"), "filter t")
    started(node.command("meter -F t run ping 1000000 &"), "ping")
    said = node.expect(r"filter t: the file system has no room for the log file's block \d+: the log file ends at "
                       r"(\d+) records, later ones counted lost in it; the trace disk's log goes on\n", timeout=120)
    in_file = int(said.group(1))
    time.sleep(1)
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=60)
    made = int(re.search(r"machine 0: meter: (\d+) records, ", node.output).group(1))
    assert not re.search(r"machine 0: meter: \d+ records lost", node.output), node.output[-1500:]
    assert "writing the log failed" not in node.output, node.output[-1500:]
    c.close()
    logs = {"disk": os.path.join(workdir, "room-disk.log"), "file": os.path.join(workdir, "room-file.log")}
    subprocess.run([DMTRACE, "extract", os.path.join(workdir, "room", "trace0.img"), logs["disk"]], check=True,
                   capture_output=True)
    subprocess.run([DMFS, "get", image, "/t.log", logs["file"]], check=True, capture_output=True)
    counts = {}
    for where, log in logs.items():
        run = subprocess.run([DPM, "stats", log], capture_output=True, text=True)
        m = re.search(r"^(\d+) records, (\d+) lost", run.stdout, re.M)
        assert m, (where, run.stdout[:300], run.stderr)
        counts[where] = (int(m.group(1)), int(m.group(2)))
    assert counts["disk"] == (made, 0), (made, counts)
    assert counts["file"] == (in_file, made - in_file) and 0 < in_file < made, (made, counts)
