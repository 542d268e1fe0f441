#!/usr/bin/env python3
"""fs_predict.py -- DPM's prediction of parallelism for other placements
(thesis §5.3.1, Figs. 5.16-5.17), on the file system:

    python3 scripts/fs_predict.py [--out DIR] [--repeat R] [--users N] [--size KIB] [--ops N]

Three placements of the file system's processes (the disk interface stays
on machine 0, with the disk):

    together   all four on machine 0
    thesis     di and bm on machine 0, dm and ri on machine 1 (as in the thesis)
    spread     each on a machine of its own: di 0, bm 1, dm 2, ri 3

Each is run R times (default 1) with the same users (`fsrand`, one per
machine of its own) and the file system metered from boot. Every trace is
read in the workload's window (dpm --window-of the users: from their first
request to their last answer), leaving the boot out. Its measured P is
step 3 (the elapsed-time simulation) of its own trace as it was placed;
its P predicted from another placement's trace is step 3 of that trace
with `dpm parallelism --place` putting the processes where this placement
has them. Each placement's P is also predicted from its own trace for
every network shipped with dpm (--network). With R > 1 each figure is the
median over the runs. Printed and written to DIR/report.html and
DIR/results.json: the measured P, the 3x3 table of predictions, the
prediction errors (predicted - measured) / measured, and P per network.
DIR defaults to build/experiments/fs-predict."""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpmread
import fsrun
import htmlreport
from cluster import ClusterError
from dpmrun import DpmrunError
from harness import ROOT, NodeError

PLACEMENTS = {"together": {"bm": 0, "dm": 0, "ri": 0},
              "thesis": {"bm": 0, "dm": 1, "ri": 1},
              "spread": {"bm": 1, "dm": 2, "ri": 3}}


def progress(line):
    print("fs-predict: " + line, flush=True)


def placed(name):
    """The --place of placement `name`, the disk interface included."""
    return dict(PLACEMENTS[name], di=0)


def predictions(runs):
    """{(trace's placement, placement predicted): P} over one set of runs:
    step 3 (elapsed) of each trace, in its workload's window, under each
    placement; (X, X) is X's measured P."""
    return {(source, target): dpmread.parallelism([runs[source].log], placed(target), runs[source].window)["3"][2]
            for source in runs for target in PLACEMENTS}


def on_networks(runs):
    """{(placement, network): P}: step 3 (elapsed) of each placement's own
    trace, in its window, under each network shipped with dpm."""
    return {(name, network): dpmread.parallelism([run.log], placed(name), run.window, network)["3"][2]
            for name, run in runs.items() for network in dpmread.networks()}


def cpu_per_remote_message(logs, windows):
    """The CPU (T, instructions) of the four processes in the traces of
    `together` and `thesis`, and the messages among them that crossed
    machines in `thesis`, each in its window: how much CPU a message made
    remote costs is a figure the delivery-time table does not carry
    (docs/fs-predict.md)."""
    servers = ("di", "bm", "dm", "ri")
    totals = {name: sum(r["cpu"] for r in dpmread.processes([logs[name]], windows[name])
                        if r["traced"] and r["label"].split()[0] in servers)
              for name in ("together", "thesis")}
    remote = sum(int(r["messages"]) for r in dpmread.stats_table([logs["thesis"]], "pairs", windows["thesis"])
                 if not r["local"] and r["from_label"].split()[0] in servers and r["to_label"].split()[0] in servers)
    return totals, remote


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "experiments", "fs-predict"))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each placement (median of them)")
    parser.add_argument("--users", type=int, default=2)
    parser.add_argument("--size", type=int, default=64, help="KiB of each user's file (default 64)")
    parser.add_argument("--ops", type=int, default=300, help="operations of each user (default 300)")
    args = parser.parse_args(argv)
    workload = fsrun.Workload(args.size, args.ops)
    rounds, network_rounds = [], []
    for r in range(args.repeat):
        runs = {}
        for name, place in PLACEMENTS.items():
            progress("run %d of %d, placement %s, %d users of %s" % (r + 1, args.repeat, name, args.users, workload))
            try:
                run = fsrun.run(os.path.join(args.out, "run%d-%s" % (r + 1, name)), args.users, place, workload,
                                progress)
            except (DpmrunError, ClusterError, NodeError) as e:
                progress("the run failed: %s" % e)
                return 1
            runs[name] = run
        rounds.append(predictions(runs))
        network_rounds.append(on_networks(runs))
        progress("run %d: measured P %s" % (r + 1, ", ".join("%s %.3f" % (n, rounds[-1][(n, n)]) for n in PLACEMENTS)))
    table = {key: statistics.median(p[key] for p in rounds) for key in rounds[0]}
    networks = {key: statistics.median(p[key] for p in network_rounds) for key in network_rounds[0]}
    names = dpmread.networks()
    errors = {(s, t): (table[(s, t)] - table[(t, t)]) / table[(t, t)] for (s, t) in table}
    lines = ["P predicted (rows: the trace of; columns: for), step 3, median of %d run%s" %
             (args.repeat, "" if args.repeat == 1 else "s"),
             "%-12s" % "" + "".join("%12s" % t for t in PLACEMENTS)]
    lines += ["%-12s" % s + "".join("%12.3f" % table[(s, t)] for t in PLACEMENTS) for s in PLACEMENTS]
    lines += ["prediction errors (predicted - measured) / measured",
              "%-12s" % "" + "".join("%12s" % t for t in PLACEMENTS)]
    lines += ["%-12s" % s + "".join("%11.1f%%" % (100 * errors[(s, t)]) for t in PLACEMENTS) for s in PLACEMENTS]
    lines += ["P for each network shipped with dpm (rows: the placement, from its own trace), step 3",
              "%-12s" % "" + "".join("%12s" % n for n in names)]
    lines += ["%-12s" % s + "".join("%12.3f" % networks[(s, n)] for n in names) for s in PLACEMENTS]
    for line in lines:
        progress(line)
    totals, remote = cpu_per_remote_message({name: run.log for name, run in runs.items()},
                                            {name: run.window for name, run in runs.items()})
    extra = (totals["thesis"] - totals["together"]) / remote if remote else 0.0
    progress("T together %d, thesis %d: %.0f instructions more per message between machines (%d such messages)"
             % (totals["together"], totals["thesis"], extra, remote))
    results = {"workload": str(workload), "users": args.users, "repeat": args.repeat,
               "placements": PLACEMENTS, "rounds": [{"%s>%s" % k: v for k, v in p.items()} for p in rounds],
               "median": {"%s>%s" % k: v for k, v in table.items()},
               "errors": {"%s>%s" % k: v for k, v in errors.items()},
               "networks": {"%s@%s" % k: v for k, v in networks.items()},
               "network_rounds": [{"%s@%s" % k: v for k, v in p.items()} for p in network_rounds],
               "cpu_totals": totals, "remote_messages": remote, "cpu_per_remote_message": extra}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    page = htmlreport.Page("fs-predict: P predicted for other placements (thesis Figs. 5.16-5.17)")
    page.text("Command: python3 scripts/fs_predict.py %s. Users: %d, each %s. Placements: %s." % (
        " ".join(sys.argv[1:]), args.users, workload,
        "; ".join("%s: di=0 %s" % (n, " ".join("%s=%d" % i for i in sorted(p.items()))) for n, p in PLACEMENTS.items())))
    page.table(["trace of \\ P for"] + list(PLACEMENTS),
               [[s] + ["%.3f" % table[(s, t)] for t in PLACEMENTS] for s in PLACEMENTS])
    page.heading("Prediction errors, (predicted - measured) / measured")
    page.table(["trace of \\ error for"] + list(PLACEMENTS),
               [[s] + ["%.1f%%" % (100 * errors[(s, t)]) for t in PLACEMENTS] for s in PLACEMENTS])
    page.heading("P for each network shipped with dpm (step 3, elapsed; each placement from its own trace)")
    page.table(["placement \\ network"] + names,
               [[s] + ["%.3f" % networks[(s, n)] for n in names] for s in PLACEMENTS])
    page.figure("Measured P and P predicted from each other trace", htmlreport.bar_chart(
        list(PLACEMENTS), {"trace of %s" % s: [table[(s, t)] for t in PLACEMENTS] for s in PLACEMENTS}, "P"))
    page.text("CPU of the four processes (T): together %d, thesis %d instructions; the thesis placement sent %d "
              "messages between machines among them: %.0f instructions of CPU more per such message, which the "
              "delivery-time table does not carry." % (totals["together"], totals["thesis"], remote, extra))
    page.write(os.path.join(args.out, "report.html"))
    progress("report: %s" % os.path.join(args.out, "report.html"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
