#!/usr/bin/env python3
"""fs_study.py -- the file system measured as in Miller's thesis (§5.3.1):

    python3 scripts/fs_study.py [--out DIR] [--max-users N] [--main-users N]
                                [--size KIB] [--ops N]

The file system is metered from boot (METER_FS) into a filter on a machine
of its own, its four processes placed as in the thesis: the disk interface
and the buffer manager on machine 0 (with the disk), the directory manager
and the request interpreter on machine 1; each user (`fsrand` on a file of
its own) on a machine of its own. One cluster is booted for each number of
users from 1 to N (default 7). Of the run with --main-users users (default
4, where the thesis's P peaked) it reports each process's share of CPU,
messages and bytes (Fig. 5.12), the "receives from, then sends to" counts
and the state diagram with branching probabilities (Figs. 5.18-5.19), P in
DPM's three steps as placed, with each process on its own machine and all
four on one (§5.3.1), P for each network shipped with dpm, and the truth
checks (scripts/fstruth.py); of every run, P and the request interpreter's
queue length (Fig. 5.15). Every figure but the truth checks and causality is
of the workload's window (dpm --window-of the users: from their first
request to their last answer), not of the boot before it; the truth checks
and causality read the whole trace, as the file system's counters count
from boot. P of the whole trace is given beside the window's.

It writes DIR/report.html (the figures), DIR/results.json (every number
the report shows) and DIR/usersK/ (each run's trace disks and log); DIR
defaults to build/experiments/fs-study. Exit status 0, 1 if a run failed
or a truth check did not hold."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpmread
import fsrun
import fstruth
import htmlreport
from dpmrun import DpmrunError
from harness import ROOT, NodeError
from cluster import ClusterError

THESIS_PLACE = {"bm": 0, "dm": 1, "ri": 1}      # di is on 0 with the disk
SERVERS = ["di", "bm", "dm", "ri"]
THESIS_SHARES = {"di": (30, 27, 40), "bm": (51, 33, 42), "dm": (1, 2, 0.5), "ri": (18, 38, 17)}  # Fig. 5.12
THESIS_P = {"1": 1.65, "2": 1.43, "3": 1.21, "each-own": 1.07, "all-one": 0.95}                 # §5.3.1


def progress(line):
    print("fs-study: " + line, flush=True)


def process_rows(log, window):
    """{name: dpm stats row} of the four file-system processes in the window."""
    rows = {}
    for row in dpmread.processes([log], window):
        name = row["label"].split()[0]
        if name in SERVERS and row["traced"]:
            rows[name] = row
    return rows


def study_run(run, with_details):
    """The figures of one run as a dict (results.json); with_details adds the
    shares, causality, placements and truth checks of the main run."""
    rows = process_rows(run.log, run.window)
    figures = {"steps": dpmread.parallelism([run.log], window=run.window),
               "steps_whole_trace": dpmread.parallelism([run.log]), "window": run.window,
               "ri_queue_mean": rows["ri"]["queue_time_mean"], "ri_queue_max": rows["ri"]["queue_max"],
               "users": run.users, "wall_s": run.wall}
    figures["outside_share_step1"] = figures["steps"]["1"][3] / figures["steps"]["1"][1]
    if not with_details:
        return figures
    figures["shares"] = {name: (rows[name]["cpu_pct"], rows[name]["messages_pct"], rows[name]["bytes_pct"])
                         for name in SERVERS}
    figures["networks"] = {network: dpmread.parallelism([run.log], window=run.window, network=network)
                           for network in dpmread.networks()}
    causality = dpmread.causality([run.log], SERVERS)
    figures["letters"] = {letter: name for letter, (name, _) in causality.servers.items()}
    figures["after"] = {name: {source: {dest: causality.count(name, source, dest) for dest in SERVERS}
                               for source in SERVERS + ["U"] if causality.received(name, source)}
                        for name in SERVERS}
    figures["each-own"] = dpmread.parallelism([run.log], "each-own", run.window)
    figures["all-one"] = dpmread.parallelism([run.log], "all-one", run.window)
    counts = dpmread.fsstat(run.counts)
    figures["counts"] = counts
    figures["checks"] = [(c.name, c.meaning, c.inferred, c.of_inferred, c.counted, c.of_counted, c.holds())
                         for c in fstruth.checks(causality, counts)]
    return figures


def transitions(after):
    """The state diagram's arrows: (from, to, "P%") for every branching of
    every process, as "X received from S, then sent to Y" gives the arrow
    X -> Y labelled with its probability, summed over what X received."""
    arrows = []
    for name, rows in after.items():
        total = {dest: sum(row[dest] for row in rows.values()) for dest in SERVERS}
        out_of = sum(total.values())
        for dest, n in total.items():
            if n:
                arrows.append((name, dest, "%.0f%%" % (100.0 * n / out_of)))
    return arrows


def report(results, out, args):
    """Write DIR/report.html from the results."""
    main = results["runs"][str(args.main_users)]
    page = htmlreport.Page("fs-study: the file system measured as in the thesis (§5.3.1)")
    page.text("Command: python3 scripts/fs_study.py %s. Each user: %s. Processes: di and bm on machine 0, "
              "dm and ri on machine 1; users and the filter on machines of their own. Main run: %d users."
              % (" ".join(sys.argv[1:]), results["workload"], args.main_users))
    page.heading("Shares of CPU, messages and bytes (thesis Fig. 5.12)")
    page.table(["process", "CPU %", "messages %", "bytes %", "thesis CPU %", "thesis messages %", "thesis bytes %"],
               [[n] + ["%.1f" % v for v in main["shares"][n]] + list(THESIS_SHARES[n]) for n in SERVERS])
    page.figure("Shares here (CPU, messages, bytes sent) of the four processes",
                htmlreport.bar_chart(SERVERS, {"CPU": [main["shares"][n][0] for n in SERVERS],
                                               "messages": [main["shares"][n][1] for n in SERVERS],
                                               "bytes": [main["shares"][n][2] for n in SERVERS],
                                               "thesis CPU": [THESIS_SHARES[n][0] for n in SERVERS]}, "%"))
    page.heading("Receives from, then sends to (thesis Fig. 5.18)")
    rows = []
    for name in SERVERS:
        for source, dests in main["after"][name].items():
            total = sum(dests.values())
            rows.append([name, source] + ["%d (%.1f%%)" % (dests[d], 100.0 * dests[d] / total) for d in SERVERS])
    page.table(["process", "received from", "-> di", "-> bm", "-> dm", "-> ri"], rows)
    page.figure("State diagram (thesis Fig. 5.19): the probability of each process's next send, over all it "
                "received", htmlreport.state_diagram(SERVERS, transitions(main["after"])))
    page.heading("Truth checks: inferred from the trace against counted by the file system")
    page.table(["check", "trace", "of", "counted", "of", "holds"],
               [[c[0], c[2], c[3], c[4], c[5], "exact" if c[6] else "DIFFERS"] for c in main["checks"]])
    page.heading("Parallelism in DPM's three steps (§5.3.1), in the workload's window")
    page.text("The window: dpm %s, from the users' first request to their last answer; the boot before it "
              "is left out. Each step with each request outside the trace weighted by its elapsed time (thesis "
              "Fig. 5.3B), and, after the slash, on the plain graph that leaves those requests out (Fig. 5.3A)."
              % " ".join(main["window"]))
    prow = lambda label, steps, thesis: [label] + ["%.3f / %.3f" % (steps[s][2], steps[s][5])
                                                   for s in ("1", "2", "3a", "3")] + [thesis]
    page.table(["placement", "step 1", "step 2", "step 3 (App. A)", "step 3 (elapsed)", "thesis"],
               [prow("measured (di+bm on 0, dm+ri on 1)", main["steps"], "1.65 / 1.43 / 1.21"),
                prow("each on its own machine", main["each-own"], THESIS_P["each-own"]),
                prow("all four on one machine", main["all-one"], THESIS_P["all-one"]),
                prow("measured, the whole trace from boot", main["steps_whole_trace"], "")])
    page.text("In the window, %.1f%% of the step-1 critical path is time spent outside the trace (the disk "
              "interface's requests to its kernel's disk), weighted by elapsed time (thesis Fig. 5.3B)."
              % (100 * main["outside_share_step1"]))
    page.heading("P for each network shipped with dpm (as placed, in the window)")
    page.table(["network", "step 2", "step 3 (App. A)", "step 3 (elapsed)", "step 3, plain graph"],
               [[network] + ["%.3f" % steps[s][2] for s in ("2", "3a", "3")] + ["%.3f" % steps["3"][5]]
                for network, steps in sorted(main["networks"].items())])
    users = sorted(int(u) for u in results["runs"])
    page.heading("Load: P and the request interpreter's queue against users (thesis Fig. 5.15), in each run's "
                 "window")
    page.table(["users", "P step 1", "P step 2", "P step 3", "P step 1, plain graph", "ri queue (time mean)",
                "ri queue max", "outside share"],
               [[u] + ["%.3f" % results["runs"][str(u)]["steps"][s][2] for s in ("1", "2", "3")] +
                ["%.3f" % results["runs"][str(u)]["steps"]["1"][5],
                 "%.3f" % results["runs"][str(u)]["ri_queue_mean"], "%d" % results["runs"][str(u)]["ri_queue_max"],
                 "%.1f%%" % (100 * results["runs"][str(u)]["outside_share_step1"])] for u in users])
    page.figure("P against users", htmlreport.line_chart(users, {
        "step %s" % s: [results["runs"][str(u)]["steps"][s][2] for u in users] for s in ("1", "2", "3")},
        "users", "P"))
    page.figure("The request interpreter's queue length (mean over time) against users",
                htmlreport.line_chart(users, {"ri queue": [results["runs"][str(u)]["ri_queue_mean"] for u in users]},
                                      "users", "messages queued"))
    dpm_page, why = htmlreport.dpm_report([os.path.join(out, "users%d" % args.main_users, "fstrace.log")],
                                          os.path.join(out, "dpm-report.html"), main["window"])
    if dpm_page:
        page.link("The analyzer's own report of the main run (dpm report)", "dpm-report.html")
    else:
        page.text("The analyzer's own report was not made: %s." % why)
    page.write(os.path.join(out, "report.html"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "experiments", "fs-study"))
    parser.add_argument("--max-users", type=int, default=7)
    parser.add_argument("--main-users", type=int, default=4)
    parser.add_argument("--size", type=int, default=64, help="KiB of each user's file (default 64)")
    parser.add_argument("--ops", type=int, default=300, help="operations of each user (default 300)")
    args = parser.parse_args(argv)
    if not 1 <= args.main_users <= args.max_users:
        parser.error("--main-users must be between 1 and --max-users")
    workload = fsrun.Workload(args.size, args.ops)
    results = {"workload": str(workload), "runs": {}}
    failed = 0
    for users in range(1, args.max_users + 1):
        progress("%d user%s of %s" % (users, "" if users == 1 else "s", workload))
        try:
            run = fsrun.run(os.path.join(args.out, "users%d" % users), users, THESIS_PLACE, workload, progress)
        except (DpmrunError, ClusterError, NodeError) as e:
            progress("the run failed: %s" % e)
            return 1
        figures = study_run(run, users == args.main_users)
        results["runs"][str(users)] = figures
        progress("P step 1 %.3f, step 2 %.3f, step 3 %.3f; ri queue %.3f (max %d); %.0f s" % (
            figures["steps"]["1"][2], figures["steps"]["2"][2], figures["steps"]["3"][2],
            figures["ri_queue_mean"], figures["ri_queue_max"], run.wall))
        for name, _, inferred, of_inferred, counted, of_counted, holds in figures.get("checks", []):
            progress("truth %-26s trace %d of %d, counted %d of %d: %s" % (
                name, inferred, of_inferred, counted, of_counted, "exact" if holds else "DIFFERS"))
            failed |= not holds
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    report(results, args.out, args)
    progress("report: %s" % os.path.join(args.out, "report.html"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
