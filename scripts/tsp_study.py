#!/usr/bin/env python3
"""tsp_study.py -- the travelling salesman measured as in Miller's thesis
(§5.3.3):

    python3 scripts/tsp_study.py [--out DIR] [--cities 8,10,12] [--servers 2,4,8]
                                 [--versions sync,pipe] [--seed S]

For each number of cities N, of servers p and version (sync, pipe), a
cluster of its own (the controller on machine 0, servers on machines
1..8, the filter on machine 9) runs `tsp -v VERSION -b length -s SEED N p MACHINES`
metered twice: with one server per machine and with two per machine. Each
run has a filter of its own on machine 9's trace disk, stopped after the
run; its log is extracted from the disk on the host at once. P is then
computed with `dpm parallelism` in the workload's window (--window-of tsp:
the controller's first record to its last): the maximum (step 1, of the
one-per-machine run), and P as placed (step 3, elapsed-time simulation)
for one and two servers per machine; with the share of t_max outside the
trace (the servers' start-ups) and P on the plain graph (thesis Fig.
5.3A); and the one-per-machine run's step 3 for each network shipped with
dpm.

Writes DIR/report.html, DIR/results.json and DIR/traces/ (default DIR:
build/experiments/tsp). The shapes are findings (docs/tsp.md), not gates."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpmread
import htmlreport
from cluster import ClusterError
from dpmrun import metered_cluster, type_commands, halt, extract, DpmrunError
from harness import ROOT, NodeError

CONTROLLER, FIRST_SERVER_MACHINE, FILTER_MACHINE, NODES = 0, 1, 9, 10
WINDOW = ["--window-of", "tsp"]      # the controller's first record to its last
# Thesis §5.3.3 (4.2BSD): P as (maximum, one server per machine, two per machine).
THESIS = {(8, 4): (2.1, 0.8, 0.7), (8, 8): (2.7, 1.1, 1.0), (12, 4): (2.4, 1.3, 1.0), (12, 8): (3.6, 2.0, 1.6)}


def progress(line):
    print("tsp: " + line, flush=True)


def server_machines(servers, per_machine):
    """The MACHINES argument of tsp: `per_machine` servers on each machine from 1."""
    return ",".join(str(FIRST_SERVER_MACHINE + k // per_machine) for k in range(servers))


def metered_tsp(node, traces, name, command):
    """Run `command` metered into a new filter `name` on the filter machine,
    stop the filter, extract its log into TRACES/NAME.log; returns (the log,
    what tsp printed)."""
    outputs = type_commands(node, ["filter start @%d %s - -" % (FILTER_MACHINE, name),
                                   "meter -F %s run %s" % (name, command), "filter stop %s" % name], echo=False)
    if "optimum" not in outputs[1]:
        raise DpmrunError("%s failed: %s" % (command, outputs[1]))
    log = os.path.join(traces, name + ".log")
    if extract(os.path.join(traces, "trace%d.img" % FILTER_MACHINE), log) is None:
        raise DpmrunError("filter %s wrote no log" % name)
    return log, outputs[1]


def study(node, traces, cities, servers, version, seed, number):
    """Both runs of one configuration; its figures as a dict."""
    figures = {}
    for per_machine in (1, 2):
        name = "t%d" % (number + per_machine - 1)
        command = "tsp -v %s -b length -s %d %d %d %s" % (version, seed, cities, servers,
                                                           server_machines(servers, per_machine))
        log, out = metered_tsp(node, traces, name, command)
        steps = dpmread.parallelism([log], window=WINDOW)
        figures["max" if per_machine == 1 else "max_two"] = steps["1"][2]
        figures["one" if per_machine == 1 else "two"] = steps["3"][2]
        figures["step2_%d" % per_machine] = steps["2"][2]
        figures["T_%d" % per_machine] = steps["1"][0]
        figures["outside_%d" % per_machine] = steps["1"][3] / steps["1"][1]
        figures["plain_%d" % per_machine] = steps["3"][5]
        figures["log_%d" % per_machine] = os.path.relpath(log, traces)
        if per_machine == 1:
            figures["networks"] = {network: dpmread.parallelism([log], window=WINDOW, network=network)["3"][2]
                                   for network in dpmread.networks()}
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "experiments", "tsp"))
    parser.add_argument("--cities", default="8,10,12")
    parser.add_argument("--servers", default="2,4,8")
    parser.add_argument("--versions", default="sync,pipe")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    cities = [int(n) for n in args.cities.split(",")]
    servers = [int(p) for p in args.servers.split(",")]
    versions = args.versions.split(",")
    if any(p < 1 or p > 8 for p in servers) or any(v not in ("sync", "pipe") for v in versions):
        parser.error("servers from 1 to 8, versions sync and pipe")
    traces = os.path.join(args.out, "traces")
    os.makedirs(traces, exist_ok=True)
    results = {"seed": args.seed, "runs": []}
    start = time.monotonic()
    try:
        number = 0
        for version in versions:
            for n in cities:
                for p in servers:
                    progress("%s N=%d p=%d: booting %d nodes: controller on %d, servers from %d, filters on %d" %
                             (version, n, p, NODES, CONTROLLER, FIRST_SERVER_MACHINE, FILTER_MACHINE))
                    with metered_cluster(NODES, traces) as cluster:
                        figures = study(cluster.node(0), traces, n, p, version, args.seed, number)
                        halt(cluster.node(0), echo=False)
                    number += 2
                    figures.update(version=version, cities=n, servers=p)
                    results["runs"].append(figures)
                    progress("%s N=%d p=%d: P max %.2f, one per machine %.2f, two per machine %.2f (%.0f s)"
                             % (version, n, p, figures["max"], figures["one"], figures["two"],
                                time.monotonic() - start))
    except (DpmrunError, ClusterError, NodeError) as e:
        progress("failed: %s" % e)
        return 1
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    report(results, args)
    progress("report: %s" % os.path.join(args.out, "report.html"))
    return 0


def report(results, args):
    """Write DIR/report.html."""
    page = htmlreport.Page("tsp: the travelling salesman's parallelism (thesis §5.3.3)")
    page.text("Command: python3 scripts/tsp_study.py %s. Each run: tsp -v VERSION -b length -s %d N p MACHINES, "
              "metered, read in the window dpm %s; P max = step 1; one / two per machine = step 3 (elapsed-time "
              "simulation) as placed; outside = the share of step 1's t_max on requests outside the trace (the "
              "servers' start-ups, thesis Fig. 5.3B); plain = step 3 one per machine on the plain graph (Fig. 5.3A)."
              % (" ".join(sys.argv[1:]), results["seed"], " ".join(WINDOW)))
    rows = []
    for r in results["runs"]:
        thesis = THESIS.get((r["cities"], r["servers"]))
        rows.append([r["version"], r["cities"], r["servers"], "%.2f" % r["max"], "%.2f" % r["one"], "%.2f" % r["two"],
                     "%.2f" % r["step2_1"], "%.2f" % r["step2_2"], "%.1f%%" % (100 * r["outside_1"]),
                     "%.2f" % r["plain_1"], "%d" % r["T_1"], "%.1f / %.1f / %.1f" % thesis if thesis else "-"])
    page.table(["version", "N", "p", "P max", "P one/machine", "P two/machine", "step 2 one", "step 2 two",
                "outside", "plain one", "T (ns)", "thesis max / one / two"], rows)
    names = dpmread.networks()
    page.heading("P one server per machine (step 3, elapsed) for each network shipped with dpm")
    page.table(["version", "N", "p"] + names,
               [[r["version"], r["cities"], r["servers"]] + ["%.2f" % r["networks"][n] for n in names]
                for r in results["runs"]])
    for version in sorted({r["version"] for r in results["runs"]}):
        cities = sorted({r["cities"] for r in results["runs"]})
        series = {}
        for p in sorted({r["servers"] for r in results["runs"]}):
            for key, label in (("max", "max"), ("one", "one/machine"), ("two", "two/machine")):
                series["p=%d %s" % (p, label)] = [
                    next((r[key] for r in results["runs"] if r["version"] == version and r["cities"] == n
                          and r["servers"] == p), None) for n in cities]
        page.figure("%s: P against the number of cities" % version,
                    htmlreport.line_chart(cities, series, "cities N", "P"))
    page.write(os.path.join(args.out, "report.html"))


if __name__ == "__main__":
    sys.exit(main())
