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
prints it into DIR/traceK.txt, and a summary follows: for each metered
process, its name, machine and records of each type, and what the log says
was lost. (The analyzer, `dpm`, reads the .log files: issue 6.)

--collect does only the last part, for trace disks a cluster has left, e.g.
after `make run TRACE=DIR` and `halt` typed in its shell.

--meter-fs K meters the file system from boot into a filter `fstrace` on
machine K's trace disk (make run METER_FS=K). DIR defaults to a new
directory under /tmp; it is kept and named at the end. Exit status: 0, 1 if
a step failed (its error is printed), 2 for a usage error.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import Cluster, ClusterError
from harness import ROOT, NodeError

DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")


def session(nodes, meter_fs, traces, commands):
    """Boot, type the commands, halt cleanly. Returns the shell's transcript."""
    with Cluster(nodes, trace_disks=traces, meter_fs=meter_fs) as cluster:
        cluster.wait_joined()
        node = cluster.node(0)
        for command in commands:
            print("$ " + command, flush=True)
            out = node.command(command, timeout=3600)
            sys.stdout.write(out)
            sys.stdout.flush()
        print("$ halt", flush=True)
        node.type("halt\n")
        node.expect(r"machine 0: halted\n", timeout=120)


def summarize(dump):
    """The per-process summary of a `dmtrace dump` listing."""
    counts = collections.defaultdict(collections.Counter)
    names, machines = {}, {}
    tail = ""
    for line in dump.splitlines():
        words = line.split()
        fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if "pid" not in fields:
            tail = line if re.match(r"\d+ records, \d+ lost", line) else tail
            continue
        pid = fields["pid"]
        counts[pid][words[0]] += 1
        machines[pid] = fields.get("machine", "?")
        if words[0] == "CREATEPROCESS" and "nameLow" in fields:
            raw = int(fields["nameLow"], 0).to_bytes(8, "little") + int(fields.get("nameHigh", "0"), 0).to_bytes(8, "little")
            names[pid] = raw.rstrip(b"\0").decode(errors="replace")
    lines = []
    for pid in sorted(counts, key=lambda p: int(p, 0)):
        c = counts[pid]
        detail = ", ".join("%s %d" % (kind, n) for kind, n in sorted(c.items()))
        lines.append("  %-12s machine %-3s pid %s: %d records (%s)" % (names.get(pid, "?"), machines[pid], pid,
                                                                       sum(c.values()), detail))
    lines.append("  " + (tail or "no summary line"))
    return "\n".join(lines)


def collect(traces, out):
    """Extract, dump and summarize every trace disk in `traces`; returns 0 or 1."""
    images = sorted(f for f in os.listdir(traces) if re.fullmatch(r"trace\d+\.img", f))
    if not images:
        print("dpmrun: %s: no trace disk images (traceK.img)" % traces, file=sys.stderr)
        return 1
    failed = 0
    for image in images:
        base = image[:-4]
        log, text = os.path.join(out, base + ".log"), os.path.join(out, base + ".txt")
        extract = subprocess.run([DMTRACE, "extract", os.path.join(traces, image), log], capture_output=True, text=True)
        if extract.returncode != 0:
            message = (extract.stderr or extract.stdout).strip()
            if "no log yet" in message:
                print("%s: no log (no filter ran there)" % image)
                continue
            print("dpmrun: %s" % message, file=sys.stderr)
            failed = 1
            continue
        print(extract.stdout.strip())
        dump = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
        if dump.returncode != 0:
            print("dpmrun: dmtrace dump %s: %s" % (log, dump.stderr.strip()), file=sys.stderr)
            failed = 1
            continue
        with open(text, "w") as f:
            f.write(dump.stdout)
        print("%s (every record: %s)" % (log, text))
        print(summarize(dump.stdout))
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--meter-fs", type=int, metavar="K")
    parser.add_argument("--out", metavar="DIR", help="where the trace disks, logs and dumps go")
    parser.add_argument("--script", metavar="FILE", help="the commands, one a line (- for standard input)")
    parser.add_argument("--collect", metavar="TRACEDIR", help="only extract and summarize these trace disks")
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
    status = collect(out, out)
    print("dpmrun: trace disks, logs and dumps are in %s" % out)
    return status


if __name__ == "__main__":
    sys.exit(main())
