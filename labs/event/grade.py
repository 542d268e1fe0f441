"""The grader of the event lab (docs/labs/event.md), run by scripts/grade.py
(make grade LAB=event).

The lab's tests need the logs on the host, so the first of them to run
holds a metered session of its own (session): a cluster of 2 nodes with a
trace disk each (scripts/dpmrun.py, metered_cluster), node 0 on a copy of
the system disk. Into a filter t on machine 0's trace disk it meters, with
PREEMPT selected alone, `ping` (processes that block) and `spin 3 50`
(three that only compute, user/labs/event/spin.c), then `spin 2 30` with
PREEMPT not selected; into a filter u on machine 1's, whose rule keeps
PREEMPT records alone, `spin 2 30` with every event. Then `halt`, and on
the host `dmtrace extract` and `dmtrace dump`: the records as the logs hold
them, each field by the name the log's own description gives it. The
tests check the records against what the kernel must have done, and the
student's `dpm stats` against what the grader counts itself from the dump.
The lab's own cluster (NODES) is left idle.
"""
import atexit
import os
import re
import shutil
import subprocess
import tempfile

from grade import require, test
from harness import ROOT
import dpmrun

NODES = 1
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")
DPM = os.path.join(ROOT, "build", "tools", "dpm")
PID = r"\d+\.\d+\.\d+"
QUANTUM = 10000000           # instructions in a quantum under -icount (kernel/defs.h: 10 ms)
USER = (0x40000000, 0x80000000)   # kernel/demos.h: DM_USER_BASE, DM_USER_TOP
RECORDING = 1000             # instructions the kernel may count between a record's procTime and its ranFor
COMMANDS = [
    ("start_t", "filter start t - -"),
    ("rules", "echo 'traceType=PREEMPT, ranFor>=1;' > /u.rules"),
    ("start_u", "filter start @1 u - /u.rules"),
    ("ping", "meter -F t -e PREEMPT run ping 1000"),
    ("spin", "meter -F t -e PREEMPT run spin 3 50"),
    ("unselected", "meter -F t -e CREATEPROCESS,DESTROYPROCESS run spin 2 30"),
    ("all", "meter -F u run spin 2 30"),
    ("stats_u", "filter stats u"),
]
workdir = tempfile.mkdtemp(prefix="dm-lab-event-")
atexit.register(shutil.rmtree, workdir, True)
result = {}


def session():
    """Run the metered session once; what it printed and left, in `result`.
    A session that could not be run fails every test that needs it."""
    if not result:
        result["failed"] = "the metered session failed (the first test says how)"
        traces = os.path.join(workdir, "traces")
        os.mkdir(traces)
        with dpmrun.metered_cluster(2, traces) as cluster:
            node = cluster.node(0)
            for key, command in COMMANDS:
                result[key] = node.command(command, timeout=60)
            dpmrun.halt(node, echo=False)
        for k, name in ((0, "t"), (1, "u")):
            log = os.path.join(workdir, name + ".log")
            run = subprocess.run([DMTRACE, "extract", os.path.join(traces, "trace%d.img" % k), log],
                                 capture_output=True, text=True)
            result["extract_" + name] = run.stdout + run.stderr
            result[name] = log if run.returncode == 0 else None
            result["records_" + name] = records(log) if run.returncode == 0 else []
        del result["failed"]
    require("failed" not in result, result.get("failed"))
    return result


def records(log):
    """The records of a log, as `dmtrace dump` prints them: (type, {field: value})."""
    run = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
    require(run.returncode == 0, "dmtrace dump %s printed:\n%s" % (log, run.stdout[-1000:] + run.stderr))
    out = []
    for line in run.stdout.splitlines():
        words = line.split()
        if len(words) > 1 and "=" in words[1]:
            out.append((words[0], {k: int(v, 0) for k, v in (w.split("=", 1) for w in words[1:])}))
    return out


def pid_text(pid):
    """A pid as the guest shows it: machine.slot.generation (kernel/demos.h)."""
    return "%d.%d.%d" % (pid >> 56, (pid >> 20) & 0xfff, pid & 0xfffff)


def said(key, regex):
    """The match of regex in what the session's command `key` printed, or fail."""
    r = session()
    for problem in ("no such event", "no such program, or no filter", "no such type", "no such field"):
        line = next((l for l in r[key].splitlines() if problem in l), None)
        require(line is None, "`%s` printed:\n%s" % (dict(COMMANDS)[key], r[key].rstrip()))
    m = re.search(regex, r[key], re.M)
    require(m, "`%s` printed:\n%s" % (dict(COMMANDS)[key], r[key].rstrip() or "(nothing)"))
    return m


def spun(key):
    """The pids `spin` printed for the session's command `key`."""
    return said(key, r"^spin: \d+ processes \(([\d. ]+)\), \d+ million instructions each$").group(1).split()


def log_records(name):
    r = session()
    require(r[name], "the filter %s left no log: %s" % (name, r["extract_" + name].strip()))
    return r["records_" + name]


def preempts(name):
    """The PREEMPT records of log `name`, by process: {pid text: [fields, ...]}."""
    by = {}
    for kind, fields in log_records(name):
        if kind == "PREEMPT":
            by.setdefault(pid_text(fields["pid"]), []).append(fields)
    return by


def dpm_stats(*logs):
    """The rows of the Preemptions section of `dpm stats LOG...`:
    {pid text: (preempted, ran, mean)}, and the section's text."""
    run = subprocess.run([DPM, "stats"] + list(logs), capture_output=True, text=True)
    require(run.returncode == 0 and not run.stderr, "dpm stats printed:\n" + (run.stdout + run.stderr)[-2000:])
    m = re.search(r"^Preemptions.*?(?=\n\n|\Z)", run.stdout, re.M | re.S)
    require(m, "dpm stats %s printed no section that begins with a line 'Preemptions' (docs/labs/event.md, "
            "part 3); its last lines:\n%s" % (" ".join(logs), "\n".join(run.stdout.splitlines()[-4:])))
    rows = {}
    for line in m.group(0).splitlines():
        row = re.match(r"^\s+\[\d+\]\s+(?:\S+ )?(%s)\s+(\d+)\s+(\d+)\s+(\d+\.\d)$" % PID, line)
        if row:
            require(row.group(1) not in rows, "dpm stats lists %s twice:\n%s" % (row.group(1), m.group(0)))
            rows[row.group(1)] = (int(row.group(2)), int(row.group(3)), float(row.group(4)))
    return rows, m.group(0)


def stats_agree(names):
    """dpm stats of the logs `names` lists each process with PREEMPT records,
    with their count, ranFor added up and its mean, and no other."""
    want = {}
    for name in names:
        for pid, fields in preempts(name).items():
            count, ran = want.get(pid, (0, 0))
            want[pid] = (count + len(fields), ran + sum(f["ranFor"] for f in fields))
    rows, text = dpm_stats(*[session()[name] for name in names])
    for pid, (count, ran) in sorted(want.items()):
        require(pid in rows, "dpm stats lists no row for %s, which has %d PREEMPT records:\n%s" % (pid, count, text))
        got = rows[pid]
        require(got[:2] == (count, ran), "dpm stats says %s was preempted %d times and ran %d instructions; "
                "its PREEMPT records say %d and %d:\n%s" % (pid, got[0], got[1], count, ran, text))
        require(abs(got[2] - ran / count) <= 0.051, "dpm stats says %s ran %.1f instructions on average, not %.1f"
                % (pid, got[2], ran / count))
    extra = sorted(set(rows) - set(want))
    require(not extra, "dpm stats lists %s, which has no PREEMPT records:\n%s" % (", ".join(extra), text))
    require(want, "the logs hold no PREEMPT records")


@test(10, "event: PREEMPT is an event the meter knows", time_limit=120)
def known(lab):
    spun("spin")
    by = preempts("t")
    require(by, "the log of filter t holds no PREEMPT records:\n%s" % session()["extract_t"])
    fields = next(iter(by.values()))[0]
    require(fields["traceType"] == 13 and fields["length"] == 72,
            "a PREEMPT record has traceType=%d and length=%d, not 13 and 72 (its header and a body of two "
            "64-bit fields)" % (fields["traceType"], fields["length"]))
    require("nextTask" in fields and "ranFor" in fields,
            "a PREEMPT record's fields are %s: its body is not nextTask and ranFor" % ", ".join(fields))


@test(20, "event: each process that could run on is recorded when preempted")
def recorded(lab):
    pids = spun("spin")
    by = preempts("t")
    for pid in pids:
        mine = by.get(pid, [])
        require(len(mine) >= 2, "spin %s computed 50 million instructions beside two others and has %d PREEMPT "
                "records, not 2 or more" % (pid, len(mine)))
        before = 0
        for f in mine:
            where = "%s's PREEMPT record %d" % (pid, f["sequence"])
            require(pid_text(f["nextTask"]) != pid and f["nextTask"] >> 56 == 0 and (f["nextTask"] >> 20) & 0xfff,
                    "%s names %s as the process that runs next" % (where, pid_text(f["nextTask"])))
            require(0 < f["ranFor"] <= 3 * QUANTUM, "%s has ranFor=%d: not between 1 and 3 quanta (%d)"
                    % (where, f["ranFor"], 3 * QUANTUM))
            require(f["ranFor"] <= f["procTime"] - before + RECORDING, "%s has ranFor=%d, more than the %d "
                    "instructions of PROCTIME since its record before" % (where, f["ranFor"], f["procTime"] - before))
            require(USER[0] <= f["pc"] < USER[1], "%s has pc=%#x, not in user memory: where it left user mode"
                    % (where, f["pc"]))
            before = f["procTime"]


@test(15, "event: only when preempted, only when selected")
def only_then(lab):
    spinners = set(spun("spin"))
    unselected = spun("unselected")
    said("ping", r"^ping: 1000 round trips with pong %s, all answered$" % PID)
    by = preempts("t")
    traced = {pid_text(f["pid"]) for kind, f in log_records("t") if kind == "CREATEPROCESS"}
    for pid in unselected:
        require(pid in traced, "spin %s, metered for CREATEPROCESS, has no CREATEPROCESS record" % pid)
        require(pid not in by, "spin %s, metered without PREEMPT, has %d PREEMPT records"
                % (pid, len(by.get(pid, []))))
    others = {pid: len(f) for pid, f in by.items() if pid not in spinners}
    require(sum(others.values()) <= 3, "ping and pong, which wait for each other 1000 times and run for less "
            "than a quantum, have PREEMPT records: %s" % ", ".join("%s %d" % kv for kv in sorted(others.items())))


@test(10, "event: a filter's rules select PREEMPT records by their fields")
def selected(lab):
    said("start_u", r"^filter u: logging to trace disk")
    pids = spun("all")
    m = said("stats_u", r"^filter u: \d+ batches, (\d+) records received, (\d+) kept, (\d+) dropped by the rules")
    kept, dropped = int(m.group(2)), int(m.group(3))
    logged = log_records("u")
    kinds = sorted({kind for kind, _ in logged})
    require(kinds == ["PREEMPT"], "the filter u, whose rule keeps PREEMPT records alone, logged %s" % kinds)
    require(len(logged) == kept >= 2, "the filter u kept %d records and its log holds %d: 2 or more expected"
            % (kept, len(logged)))
    require(dropped > 0, "spin 2 30, metered for every event, made no record but PREEMPT records")
    require({pid_text(f["pid"]) for _, f in logged} <= set(pids),
            "the filter u logged PREEMPT records of processes other than %s" % " ".join(pids))


@test(25, "event: dpm stats counts each process's preemptions")
def stats(lab):
    stats_agree(["t"])


@test(10, "event: dpm stats of two logs at once")
def stats_two(lab):
    stats_agree(["t", "u"])


@test(10, "event: dpm stats of a log without PREEMPT records")
def stats_none(lab):
    log = os.path.join(workdir, "generated.log")
    run = subprocess.run([DPM, "generate", "--random", "300", "--seed", "3", log], capture_output=True, text=True)
    require(run.returncode == 0, "dpm generate printed:\n" + run.stdout + run.stderr)
    rows, text = dpm_stats(log)
    require(not rows and re.search(r"^  no process was preempted", text, re.M),
            "dpm stats of a log without PREEMPT records printed:\n%s\nnot the line '  no process was preempted'"
            % text)
