#!/usr/bin/env python3
"""balance_study.py -- what the feedback scheduler buys (docs/migration.md,
"What it buys"): two workloads started badly placed on purpose, each run
three ways on a cluster of 4 nodes with trace disks:

    bad        placed badly, no scheduler
    balanced   placed badly, with `balance start -F FILTER` running
    by hand    placed well by hand (where the scheduler takes them)

    tsp  `tsp -b length 15 4 MACHINES`, the controller on machine 0 with
         filter t (logging every record of the controller and its servers):
         bad 1,1,1,1 (every server on machine 1); by hand 0,1,2,3.
    fs   the file system metered from boot into filter fstrace on machine 0
         (METER_FS=0), with `fsseq /s 256 40` and `fsrand /r 256 6000` metered
         into it: bad PLACE="ri=1 bm=2" and the users on machine 3 (the
         directory manager and the disk interface on 0); by hand everything
         on machine 0.

    python3 scripts/balance_study.py [--out DIR] [--only tsp|fs] [--interval MS]

Completion: the host's seconds from typing the workload's command to its
last line (the programs' own ns are their machine's clock, which is another
machine's once they have moved). P: `dpm parallelism` in the workload's
window (--window-of tsp, or fsseq,fsrand): step 1 (no delivery time, no
contention) and step 3 (elapsed-time simulation, as placed). For the
balanced run also before, during and after the moves: windows on machine
0's clock (--window FROM:TO) from the workload's window's start there to
the first move the scheduler decided, from it to the last, and from the
last to the end; the scheduler runs on machine 0 and says when it decided
each move on that clock (`balance`). A window reads every machine's
records by machine 0's numbers, so the clock offsets `dpm clocks
--reference 0` estimates are kept beside (results.json).

Writes DIR/results.json and DIR/traces/ (default DIR: build/experiments/balance)
and prints a table. Findings, not gates."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpmread
from dpmrun import DMTRACE, DpmrunError, extract, halt, metered_cluster, type_commands
from harness import ROOT

NODES = 4
TSP = "tsp -b length 15 4 %s"
FS_USERS = ("fsseq /s 256 40", "fsrand /r 256 6000")


def progress(line):
    print("balance_study: " + line, flush=True)


def timed_background(node, commands, done_pattern, count, timeout=1800):
    """Type each command (each ends with &), then wait for `count` lines
    matching done_pattern; the seconds from the first command to the last
    line, and those lines."""
    since = len(node.output)
    start = time.monotonic()
    type_commands(node, commands, echo=False)
    lines = []
    at = since
    for _ in range(count):
        m = node.expect(done_pattern, timeout, at)
        lines.append(m.group(0).strip())
        at = m.end()
    return time.monotonic() - start, lines, node.output[since:at]


def migrations(log):
    """The MIGRATE records of a log: [(machine, time, pid)], in the log's order."""
    dump = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True, check=True).stdout
    moves = []
    for line in dump.splitlines():
        if line.startswith("MIGRATE "):
            f = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            moves.append((int(f["machine"]), int(f["time"]), f["pid"]))
    return moves


def offsets(log):
    """Each machine's clock offset against machine 0's, as `dpm clocks
    --reference 0` estimates it: {machine: ns}."""
    out = dpmread.run_dpm("clocks", "--reference", "0", log)
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s+(\d+)\s+([+-]?\d+)\s", line)
        if m and not found.get(int(m.group(1))):
            found.setdefault(int(m.group(1)), int(m.group(2)))
        if line.startswith("pairs of machines"):
            break
    return found


def span(log, window):
    """The window's bounds on machine 0's clock, as dpm states them."""
    out = dpmread.run_dpm("parallelism", *window, log)
    m = re.search(r"window: TIME (\d+) to (\d+) ns on machine 0", out)
    if not m:
        m = re.search(r"window: TIME (\d+) to (\d+) ns", out)
    return int(m.group(1)), int(m.group(2))


def figures(log, window):
    steps = dpmread.parallelism([log], window=window)
    return {"P1": steps["1"][2], "P3": steps["3"][2], "T": steps["1"][0], "tmax3": steps["3"][1]}


def decided(status):
    """The times, on the scheduler's machine's clock, of the moves `balance`
    lists as decided: [ns]."""
    return sorted(int(float(t) * 1e9) for t in re.findall(r"(?m)^  (\d+\.\d+) s: ", status))


def phases(log, window, times):
    """P before, during and after the moves decided at `times`, in windows
    on machine 0's clock."""
    if not times:
        return None
    moves = migrations(log)
    off = offsets(log)
    begin, end = span(log, window)
    result = {"moves": len(moves), "offsets": off, "migrate_records": moves,
              "first_move_s": (times[0] - begin) / 1e9,
              "last_move_s": (times[-1] - begin) / 1e9, "window_s": (end - begin) / 1e9}
    for name, low, high in (("before", begin, times[0]), ("during", times[0], times[-1]), ("after", times[-1], end)):
        if high - low < 100000000:       # under 0.1 s: no phase to speak of
            result[name] = None
            continue
        result[name] = figures(log, ["--window", "%d:%d" % (low, high)])
    return result


def run_tsp(out, condition, interval):
    traces = os.path.join(out, "traces", "tsp-" + condition)
    os.makedirs(traces, exist_ok=True)
    machines = "0,1,2,3" if condition == "by hand" else "1,1,1,1"
    with metered_cluster(NODES, traces) as cluster:
        node = cluster.node(0)
        type_commands(node, ["filter start t - -"], echo=False)
        if condition == "balanced":
            type_commands(node, ["balance start -F t -i %d" % interval], echo=False)
        seconds, lines, said = timed_background(node, ["meter -F t run %s &" % (TSP % machines)],
                                                r"tsp: \w+: \d+ pieces searched[^\n]*ns\n", 1)
        status = ""
        if condition == "balanced":
            status, _ = type_commands(node, ["balance", "balance stop"], echo=False)
        halt(node, echo=False)
    log = os.path.join(traces, "t.log")
    extract(os.path.join(traces, "trace0.img"), log)
    return log, seconds, said, status


def run_fs(out, condition, interval):
    traces = os.path.join(out, "traces", "fs-" + condition)
    os.makedirs(traces, exist_ok=True)
    place = None if condition == "by hand" else "ri=1 bm=2"
    where = "" if condition == "by hand" else "@3 "
    with metered_cluster(NODES, traces, meter_fs=0, place=place) as cluster:
        node = cluster.node(0)
        if condition == "balanced":
            type_commands(node, ["balance start -F fstrace -i %d" % interval], echo=False)
        seconds, lines, said = timed_background(
            node, ["meter -F fstrace run %s%s &" % (where, user) for user in FS_USERS],
            r"(fsseq|fsrand) /\w: ok [^\n]*\n", 2)
        status = ""
        if condition == "balanced":
            status, _ = type_commands(node, ["balance", "balance stop"], echo=False)
        halt(node, echo=False)
    log = os.path.join(traces, "fstrace.log")
    extract(os.path.join(traces, "trace0.img"), log)
    return log, seconds, said, status


WORKLOADS = {"tsp": (run_tsp, ["--window-of", "tsp"]), "fs": (run_fs, ["--window-of", "fsseq,fsrand"])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "experiments", "balance"))
    parser.add_argument("--only", choices=sorted(WORKLOADS))
    parser.add_argument("--interval", type=int, default=1000, help="the scheduler's interval, ms (1000)")
    args = parser.parse_args(argv)
    results = []
    for workload, (run, window) in WORKLOADS.items():
        if args.only and workload != args.only:
            continue
        for condition in ("bad", "balanced", "by hand"):
            progress("%s, %s: booting %d nodes" % (workload, condition, NODES))
            try:
                log, seconds, said, status = run(args.out, condition, args.interval)
            except DpmrunError as e:
                progress("%s, %s failed: %s" % (workload, condition, e))
                return 1
            row = {"workload": workload, "condition": condition, "seconds": seconds, "log": log,
                   "whole": figures(log, window),
                   "moves_said": re.findall(r"balance: move [^\n]*", said),
                   "own_ns": [int(ns) for ns in re.findall(r"(?:search |ns=)(\d+)", said)]}
            if condition == "balanced":
                row["status"] = status
                row["phases"] = phases(log, window, decided(status))
            results.append(row)
            progress("%s, %s: %.1f s, P step 1 %.2f, step 3 %.2f" % (workload, condition, seconds,
                                                                     row["whole"]["P1"], row["whole"]["P3"]))
            for line in row["moves_said"]:
                progress("  " + line)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("| workload | placement | completion (host s) | P step 1 | P step 3 | before | during | after |")
    print("|---|---|---:|---:|---:|---|---|---|")
    for r in results:
        ph = r.get("phases") or {}
        cells = []
        for name in ("before", "during", "after"):
            p = ph.get(name)
            cells.append("%.2f / %.2f" % (p["P1"], p["P3"]) if p and p["T"] else "")
        print("| %s | %s | %.1f | %.2f | %.2f | %s |" % (r["workload"], r["condition"], r["seconds"], r["whole"]["P1"],
                                                       r["whole"]["P3"], " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
