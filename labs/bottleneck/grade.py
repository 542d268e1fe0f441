"""The grader of the bottleneck lab (docs/labs/bottleneck.md), run by
scripts/grade.py (make grade LAB=bottleneck) on a cluster of 4 nodes.

It boots the cluster again with a trace disk on every node (into
build/traces/lab-bottleneck/, where it leaves the log for the student to
read) and runs render (user/labs/bottleneck/) from node 0's shell, metered
with its shades into a filter that keeps every record; the log is taken
off the trace disk as soon as the filter has stopped. Then:

- the picture must be render.h's: every row drawn, by shades, and the
  picture's hash and step count those the starting point prints (its
  output is right, only slow);
- P and t_max, at step 3 (elapsed-time simulation) on the plain history
  graph in render's window (dpm parallelism --window-of render), must pass
  the thresholds. Both are made of instructions and of the network table's
  delivery times, not of the host's time: the start-ups of the shades
  (requests to the process manager, outside the trace, whose time follows
  the host's load) are left out, and the graph's figures are the same in
  every run of a program whose history does not depend on timing.

The thresholds were set from measurements (docs/labs/bottleneck.md, "How it
is graded"): the starting point gives P = 0.911 and t_max = 89.4 ms in every
run, the reference solution P = 2.833 and t_max = 28.8 ms.
"""
import csv
import os
import re
import subprocess

from grade import dpm, require, test
from harness import DMTRACE, ROOT

NODES = 4
TRACES = os.path.join(ROOT, "build", "traces", "lab-bottleneck")
RENDER_LIMIT = 150         # seconds render may take on a loaded host
ROWS, WIDTH = 48, 512
PICTURE = "a1927bec424971a8"      # what the starting point draws: render.h's picture
STEPS = 5730340
P_AT_LEAST = 1.5
T_MAX_AT_MOST_MS = 60.0

# What the tests share across the cluster's boots (lab.state is emptied at
# each): the run's output and log, once made.
made = {}


def metered_render(lab):
    """(what render printed, its log): render run metered, with its shades,
    into a filter that keeps every record; made once. When it could not be,
    the first test says why and the others that there is nothing to judge."""
    if "run" not in made:
        made["run"] = None
        lab.boot_traced(TRACES)
        out = lab.command("filter start b - -")
        require("filter b: logging to trace disk" in out, "filter start b - - printed:\n" + out.rstrip())
        printed = lab.command("meter -F b run render", timeout=RENDER_LIMIT)
        out = lab.command("filter stop b", timeout=60)
        require("filter b: stopped" in out, "filter stop b printed:\n" + out.rstrip())
        log = os.path.join(TRACES, "render.log")
        run = subprocess.run([DMTRACE, "extract", os.path.join(TRACES, "trace0.img"), log], capture_output=True,
                             text=True)
        require(run.returncode == 0, "dmtrace extract failed:\n" + run.stdout + run.stderr)
        made["run"] = (printed, log)
    require(made["run"] is not None, "no run of render to judge: the first test says why")
    return made["run"]


def plain_step3(lab):
    """(P, t_max in ms) at step 3, elapsed-time simulation, on the plain
    history graph in render's window; the log must be whole."""
    printed, log = metered_render(lab)
    stats = dpm("stats", log)
    m = re.search(r"^(\d+) records, (\d+) lost \(as the logs count them\), (\d+) missing in sequence gaps$", stats,
                  re.M)
    require(m and m.group(2) == "0" and m.group(3) == "0",
            "the log of render's run is not whole: %s" % (m.group(0) if m else stats[:300]))
    out = dpm("parallelism", "--csv", "--window-of", "render", log)
    last = list(csv.reader(out.strip().split("\n")))[-1]
    require(last[0] == "3 contention, elapsed-time simulation", "dpm parallelism --csv printed:\n" + out)
    return float(last[6]), float(last[5]) / 1e6


@test(10, "bottleneck: render draws the picture", time_limit=400)
def picture(lab):
    printed, log = metered_render(lab)
    m = re.search(r"^render: (\d+) rows of (\d+) pixels, (\d+) steps, picture fnv1a ([0-9a-f]{16})$", printed, re.M)
    require(m, "render printed:\n" + printed.rstrip())
    require((int(m.group(1)), int(m.group(2))) == (ROWS, WIDTH),
            "render drew %s rows of %s pixels, not %d of %d" % (m.group(1), m.group(2), ROWS, WIDTH))
    require(int(m.group(3)) == STEPS and m.group(4) == PICTURE,
            "render's picture has %s steps and the hash %s, not %d and %s: the picture is not render.h's"
            % (m.group(3), m.group(4), STEPS, PICTURE))
    rows = [int(n) for n in re.findall(r"^render: shade \d+ \(\S+ on machine \d+\): (\d+) rows$", printed, re.M)]
    require(rows and sum(rows) == ROWS, "the shades drew %s rows, not %d:\n%s" % (sum(rows), ROWS, printed.rstrip()))
    names = set(re.findall(r"nameLow=(0x[0-9a-f]+)", subprocess.run([DMTRACE, "dump", log], capture_output=True,
                                                                     text=True).stdout))
    require(len(names) >= 2, "the log names %d program: render's shades were not metered with it" % len(names))


@test(20, "bottleneck: P at least %g (step 3, plain graph)" % P_AT_LEAST)
def parallelism(lab):
    p, t_max = plain_step3(lab)
    require(p >= P_AT_LEAST, "P = %.3f (dpm parallelism --window-of render: step 3, elapsed-time simulation, on "
                             "the plain history graph), less than %g" % (p, P_AT_LEAST))


@test(20, "bottleneck: t_max at most %g ms (step 3, plain graph)" % T_MAX_AT_MOST_MS)
def completion(lab):
    p, t_max = plain_step3(lab)
    require(t_max <= T_MAX_AT_MOST_MS, "t_max = %.1f ms (dpm parallelism --window-of render: step 3, elapsed-time "
                                       "simulation, on the plain history graph), more than %g ms"
                                       % (t_max, T_MAX_AT_MOST_MS))
