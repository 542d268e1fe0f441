#!/usr/bin/env python3
"""dpmrun.py -- a metered session from workload to trace logs, in one command.

    python3 scripts/dpmrun.py [--nodes N] [--meter-fs K] [--out DIR] COMMAND...
    python3 scripts/dpmrun.py [--nodes N] [--meter-fs K] [--out DIR] --script FILE
    python3 scripts/dpmrun.py --collect TRACEDIR [--out DIR]

The first two boot a cluster of N nodes (default 2), each with a trace disk
DIR/traceK.img, type each COMMAND (or each line of FILE; `-` is standard
input) into node 0's shell as a user would -- typically `filter start ...`
then `meter ... run ...` -- and print what the shell answers. Then they type
`halt`: the process manager has every kernel send its metered processes'
last batches and every filter it started write out its log before the
power goes (servers/pm.c, flush_metering). Last, for each trace disk with a
log: `dmtrace extract` copies the log to DIR/traceK.log, `dmtrace dump`
prints it into DIR/traceK.txt, and the analyzer's statistics (`dpm stats`:
records and losses, each process's messages, bytes and rates, who talks to
whom, sizes, queues, waiting and blocking times, CPU shares) go into
DIR/traceK.stats and are printed. `dpm` reads the .log files for the other
analyses (causality, parallelism, critpath, report: README, "The
analyzer"). Node 0 runs on a copy of the system disk, DIR/disk.img: a log
a filter wrote into the file system (`filter start NAME DESC RULES LOG`) is
taken out of it (`dmfs get`) into DIR/file-NAME.log and analyzed the same
way.

--collect does only the last part, for trace disks a cluster has left, e.g.
after `make run TRACE=DIR` and `halt` typed in its shell.

--meter-fs K meters the file system from boot into a filter `fstrace` on
machine K's trace disk (make run METER_FS=K). DIR defaults to a new
directory under /tmp; it is kept and named at the end. Exit status: 0, 1 if
a step failed (its error is printed), 2 for a usage error.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster, ClusterError
from harness import ROOT, SYSTEM_DISK, NodeError

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
DPM = os.path.join(ROOT, "build", "tools", "dpm")
DMFS = os.path.join(ROOT, "build", "tools", "dmfs")


class DpmrunError(Exception):
    pass


def metered_cluster(nodes, traces, meter_fs=None, place=None, disk_service_us=None):
    """A booted cluster whose every node K has the trace disk TRACES/traceK.img,
    node 0 running on a copy of the system disk, TRACES/disk.img (kept, so that
    logs filters wrote into the file system can be taken out of it afterwards:
    file_logs), every machine joined. meter_fs, place and disk_service_us as for Cluster. Use it
    in a `with` statement."""
    disk = os.path.join(traces, "disk.img")
    shutil.copyfile(SYSTEM_DISK, disk)
    cluster = Cluster(nodes, disk=disk, trace_disks=traces, meter_fs=meter_fs, place=place,
                      disk_service_us=disk_service_us)
    try:
        cluster.wait_joined()
    except BaseException:
        cluster.close()
        raise
    return cluster


def type_commands(node, commands, echo=True, timeout=3600):
    """Type each command into `node`'s shell; return what each printed, in a
    list. With echo, print each command and its answer as they come."""
    outputs = []
    for command in commands:
        if echo:
            print("$ " + command, flush=True)
        out = node.command(command, timeout=timeout)
        if echo:
            sys.stdout.write(out)
            sys.stdout.flush()
        outputs.append(out)
    return outputs


def halt(node, echo=True):
    """Type `halt` and wait until machine 0 has halted: every kernel's last
    meter batches and every filter's log are written out by then (servers/pm.c,
    flush_metering)."""
    if echo:
        print("$ halt", flush=True)
    node.type("halt\n")
    node.expect(r"machine 0: halted\n", timeout=120)


def session(nodes, meter_fs, traces, commands, place=None, echo=True):
    """Boot, type the commands, halt cleanly; return what each command printed."""
    with metered_cluster(nodes, traces, meter_fs, place) as cluster:
        outputs = type_commands(cluster.node(0), commands, echo)
        halt(cluster.node(0), echo)
    return outputs


def file_logs(commands):
    """The logs the session's filters wrote into the file system: (filter name,
    path) for each `filter start [-l] [@K] NAME DESCRIPTION RULES LOG`."""
    logs = []
    for command in commands:
        words = command.split()
        if words[:2] != ["filter", "start"]:
            continue
        words = [w for w in words[2:] if w != "-l" and not w.startswith("@")]
        if len(words) == 4:
            logs.append((words[0], words[3] if words[3].startswith("/") else "/" + words[3]))
    return logs


def analyze(log, base, echo=True):
    """Dump `log` into BASE.txt and run `dpm stats` on it into BASE.stats, and
    (with echo) print the statistics; returns 0 or 1."""
    dump = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
    if dump.returncode != 0:
        print("dpmrun: dmtrace dump %s: %s" % (log, dump.stderr.strip()), file=sys.stderr)
        return 1
    with open(base + ".txt", "w") as f:
        f.write(dump.stdout)
    stats = subprocess.run([DPM, "stats", log], capture_output=True, text=True)
    if stats.returncode != 0:
        print("dpmrun: dpm stats %s: %s" % (log, stats.stderr.strip()), file=sys.stderr)
        return 1
    with open(base + ".stats", "w") as f:
        f.write(stats.stdout)
    if echo:
        print("%s (every record: %s.txt; its statistics: %s.stats)" % (log, base, base))
        print(stats.stdout.rstrip())
    return 0


def collect_file_logs(disk, logs, out):
    """Take each filter's log out of the file system on `disk` (dmfs get) into
    DIR/file-NAME.log and analyze it; returns 0 or 1."""
    failed = 0
    for name, path in logs:
        base = os.path.join(out, "file-" + name)
        get = subprocess.run([DMFS, "get", disk, path, base + ".log"], capture_output=True, text=True)
        if get.returncode != 0:
            print("dpmrun: filter %s's log %s: %s" % (name, path, (get.stderr or get.stdout).strip()),
                  file=sys.stderr)
            failed = 1
            continue
        print("%s:%s -> %s.log" % (disk, path, base))
        failed |= analyze(base + ".log", base)
    return failed


def extract(image, log):
    """`dmtrace extract` the log on trace disk `image` into `log`: dmtrace's
    line when done (`IMAGE: N blocks, N records, N lost -> LOG`), None when
    the disk holds no log (no filter ran there); DpmrunError with dmtrace's
    message otherwise."""
    done = subprocess.run([DMTRACE, "extract", image, log], capture_output=True, text=True)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip()
        if "no log yet" in message:
            return None
        raise DpmrunError(message)
    return done.stdout.strip()


def collect(traces, out, echo=True):
    """Extract, dump and analyze (dpm stats) every trace disk in `traces`; returns 0 or 1."""
    images = sorted(f for f in os.listdir(traces) if re.fullmatch(r"trace\d+\.img", f))
    if not images:
        print("dpmrun: %s: no trace disk images (traceK.img)" % traces, file=sys.stderr)
        return 1
    failed = 0
    for image in images:
        base = image[:-4]
        log = os.path.join(out, base + ".log")
        try:
            line = extract(os.path.join(traces, image), log)
        except DpmrunError as e:
            print("dpmrun: %s" % e, file=sys.stderr)
            failed = 1
            continue
        if line is None:
            print("%s: no log (no filter ran there)" % image)
            continue
        if echo:
            print(line)
        failed |= analyze(log, os.path.join(out, base), echo)
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--meter-fs", type=int, metavar="K")
    parser.add_argument("--out", metavar="DIR", help="where the trace disks, logs and dumps go")
    parser.add_argument("--script", metavar="FILE", help="the commands, one a line (- for standard input)")
    parser.add_argument("--collect", metavar="TRACEDIR", help="only extract and analyze these trace disks")
    parser.add_argument("commands", nargs="*", metavar="COMMAND")
    args = parser.parse_args(argv)
    if args.collect:
        if args.commands or args.script:
            parser.error("--collect takes no commands")
        out = args.out or args.collect
        os.makedirs(out, exist_ok=True)
        return collect(args.collect, out)
    commands = list(args.commands)
    if args.script:
        with (sys.stdin if args.script == "-" else open(args.script)) as f:
            commands += [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    if not commands:
        parser.error("no commands: give them as arguments or with --script FILE")
    if any(c.strip() == "halt" for c in commands):
        parser.error("halt is typed at the end by dpmrun itself")
    out = args.out or tempfile.mkdtemp(prefix="dpmrun-")
    os.makedirs(out, exist_ok=True)
    try:
        session(args.nodes, args.meter_fs, out, commands)
    except (ClusterError, NodeError) as e:
        print("dpmrun: the session failed: %s" % e, file=sys.stderr)
        return 1
    status = collect(out, out) | collect_file_logs(os.path.join(out, "disk.img"), file_logs(commands), out)
    print("dpmrun: trace disks, logs and dumps are in %s" % out)
    return status


if __name__ == "__main__":
    sys.exit(main())
