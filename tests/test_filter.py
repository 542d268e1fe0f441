"""The filter server (filter/filter.c) on one node, started from the shell
with `run filter ...` and a log file (no trace disk is lent to it that way):
it refuses, with exit status 2 and one line naming the file, line and
column, a description that does not parse, a description whose layouts
disagree with the kernel's records (DPM's own sample, with 4-byte times),
rules that do not parse, a missing file, and having nowhere to write its
log; a running one registers its name, answers FILTER_STATS with zero
counts, counts what it refuses, forwards summaries to a link it is given
until told to stop, flushes and stops when asked (user/tests/
filtertest.c), and leaves a log that dmtrace reads on the host; with -n it
keeps no log and forwards. Meter batches from kernels are for the metering
suite to send."""
import os
import re
import shutil
import subprocess
import tempfile

from harness import Node, DMFS, ROOT, disk_args, make_image

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
workdir = tempfile.mkdtemp(prefix="dm-filter-")
node = None

FILES = {
    "bad.desc": "header 0. machine,0,4,10\n  traceType 4,4,10;\n",
    # DPM's sample (thesis Fig. 3.3): its header's time is 4 bytes, ours 8.
    "dpm.desc": "header 0.     machine,0,4,16\n              traceType,4,4,10\n"
                "              time,8,4,10\n              procTime,12,4,10;\n",
    "short.desc": "header 0. machine,0,4,10 traceType,4,4,10;\nSEND 1. toTask,0,8,16;\n",
    "renamed.desc": "header 0. machine,0,4,10 traceType,4,4,10 time,8,8,10 procTime,16,8,10 pc,24,8,16\n"
                    "  load,32,4,10 length,36,4,10 pid,40,8,16 sequence,48,8,10;\n"
                    "SENDMESSAGE 1. toTask,0,8,16;\n",
    "bad.rules": "traceType=SEND,\n  colour=#*;\n",
    "good.rules": "traceType=SEND, channel=#*;\n",
}


def teardown():
    if node:
        node.kill()
    shutil.rmtree(workdir, ignore_errors=True)


def booted():
    """A node whose disk is a private copy of the system disk holding FILES in /."""
    global node
    if node is None:
        specs = []
        for name, text in FILES.items():
            with open(os.path.join(workdir, name), "w") as f:
                f.write(text)
            specs.append("%s=/%s" % (os.path.join(workdir, name), name))
        image = make_image(os.path.join(workdir, "disk.img"), 32, *specs)
        node = Node(extra=disk_args(image, 0))
    return node


def refused(command, line):
    """`command` prints exactly `line` and the filter ends with status 2."""
    out = booted().command(command, timeout=30)
    assert re.fullmatch(re.escape(line) + r"\n\[0\.\d+\.\d+\] filter: exit status 2\n", out), out


def test_refuses_bad_arguments_and_files():
    refused("run filter", "usage: filter [-l] NAME DESCRIPTION RULES [LOGFILE]; filter -n NAME DESCRIPTION RULES")
    refused("run filter -n t - - /t.log", "usage: filter [-l] NAME DESCRIPTION RULES [LOGFILE]; filter -n NAME "
                                          "DESCRIPTION RULES")
    refused("run filter t /bad.desc -", "filter: /bad.desc:2:13: expected ',' after the field's name")
    refused("run filter t /nosuch.desc -", "filter: /nosuch.desc: No such file or directory")
    refused("run filter t - /bad.rules /t.log", "filter: /bad.rules:2:3: no such field in the description")
    refused("run filter t - -", "filter t: nowhere to write the log: no trace disk (slot 3), no LOGFILE and no -l")
    # The live channel is lent only to a filter the process manager started (PM_LIVE) ...
    refused("run filter -l t - - /t.log", "filter t: no live trace channel: not permitted by the link")
    # ... and only where the machine has one (the launcher gives one with its trace disks).
    out = booted().command("filter start -l t - /t.log", timeout=30)
    assert out == ("filter t: this machine has no live trace channel (the launcher gives each node one with "
                   "--trace-disks: make run TRACE=DIR)\nfilter: t: it refused to start (its message above says why)\n"), out
    refused("run filter %s - - /t.log" % ("n" * 25), "filter: %s: a name of 1 to 24 characters" % ("n" * 25))


def test_refuses_a_description_that_disagrees_with_the_kernel():
    refused("run filter t /dpm.desc -", "filter: /dpm.desc:3:15: header.time is at offset 8, 4 bytes long here, "
                                        "but at offset 8, 8 bytes long in the kernel's records")
    refused("run filter t /short.desc -", "filter: /short.desc:1:1: the header ends at byte 8 here, but the "
                                          "kernel's is 56 bytes long (body offsets count from its end)")
    refused("run filter t /renamed.desc -", "filter: /renamed.desc:3:1: type 1 is SEND in the kernel's records, "
                                            "not SENDMESSAGE")


def test_serves_counts_refusals_flushes_and_stops(report):
    n = booted()
    out = n.command("run filter t - /good.rules /t.log &")
    assert re.search(r"\[0\.\d+\.\d+\] filter\n", out), out
    n.expect(r"filter t: logging to /t\.log\n", 10, since=0)
    out = n.command("run filtertest t", timeout=60)
    checks = 0
    for line in out.splitlines():
        m = re.match(r"(ok|not ok) (\S+)(?:: (.*))?$", line)
        if m:
            checks += 1
            report("filter.filtertest." + m.group(2), m.group(1) == "ok", m.group(3) or "")
    assert checks == 15 and "filtertest: 15 passed, 0 failed" in out, out
    n.expect(r"filter t: stopped: 0 records kept, 0 lost, 2 log blocks\n", 10, since=0)


def test_keeps_no_log_with_n_and_forwards():
    """filter -n keeps no log (it needs no trace disk, file or live channel)
    and forwards what it selects (filtertest's forwarding checks pass
    against it too)."""
    n = booted()
    out = n.command("run filter -n f - - &")
    assert re.search(r"\[0\.\d+\.\d+\] filter\n", out), out
    n.expect(r"filter f: keeping no log: what it selects is only forwarded\n", 10, since=0)
    out = n.command("run filtertest -n f", timeout=60)
    assert "ok stats.no_log\n" in out and "filtertest: 15 passed, 0 failed" in out, out
    n.expect(r"filter f: stopped: 0 records selected, 0 lost, \d+ summaries forwarded\n", 10, since=0)


def test_its_log_reads_on_the_host():
    """After halt, the log file holds a log with no records that dmtrace reads."""
    global node
    n = booted()
    assert n.halt() == 0
    node = None
    log = os.path.join(workdir, "t.log")
    subprocess.run([DMFS, "get", os.path.join(workdir, "disk.img"), "/t.log", log], check=True)
    assert os.path.getsize(log) == 2 * 4096
    dump = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
    assert (dump.returncode, dump.stdout) == (0, "0 records, 0 lost\n"), dump
    with open(log, "rb") as f:
        header = f.read(64)
    assert header[:8] == b"DPMTRACE" and header[32:34] == b"t\0", header
