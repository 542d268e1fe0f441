"""traceviewer.py -- `dpm export --perfetto`'s JSON as a real trace viewer
reads it, checked against the trace it came from, for the tests.

The viewer is Chrome DevTools' Performance panel, whose trace engine is on
npm as @paulirish/trace_engine (the panel's own parser, published to run in
Node; tests/viewer/package.json pins it and package-lock.json everything it
brings). The first check installs it with `npm ci` into build/viewer/ and
keeps it there; it installs again only when tests/viewer/package-lock.json
changes. npm fetches it from its registry (registry.npmjs.org unless npm is
configured otherwise): without the network the check fails, saying so. Node
runs the engine (tests/viewer/load_with_devtools.mjs), and what it built --
each thread and its slices, the slices its flame chart holds, the flows it
paired -- is compared with the trace's own records, read by `dmtrace dump`:

  - a thread per traced process with a slice, named by its label, and on it a slice per
    SEND and per RECEIVE record and a "waiting" slice per receive that
    waited (from its RECEIVECALL, or from the end of the slice before);
  - every slice in the flame chart: no slice starts inside another and
    ends after it;
  - a flow per message whose SEND (status 0) and RECEIVE are both in the
    trace, and no other: the SEND's slice on the sender's thread to the
    RECEIVE's slice on the receiver's, the same message id in both;
  - in the file itself: every flow start has exactly one finish, and every
    time is an integer.

    problems = traceviewer.check(log, json_path)   # [] when all hold"""
import filecmp
import json
import os
import shutil
import subprocess
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "tests", "viewer")
VIEWER = os.path.join(ROOT, "build", "viewer")
DMTRACE = os.path.join(ROOT, "build", "tools", "dmtrace")


class ViewerError(Exception):
    pass


def install():
    """The viewer's engine in build/viewer/, installed by `npm ci` unless the
    lock file there is tests/viewer's."""
    lock = os.path.join(VIEWER, "package-lock.json")
    engine = os.path.join(VIEWER, "node_modules", "@paulirish", "trace_engine", "package.json")
    if os.path.exists(engine) and os.path.exists(lock) and \
            filecmp.cmp(lock, os.path.join(PACKAGE, "package-lock.json"), shallow=False):
        return
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            raise ViewerError("%s is not installed (scripts/setup.sh installs Node.js and npm)" % tool)
    os.makedirs(VIEWER, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(os.path.join(PACKAGE, name), os.path.join(VIEWER, name))
    done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=VIEWER,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not os.path.exists(engine):
        os.remove(lock)   # installed again next time
        raise ViewerError("npm could not install the viewer's engine (@paulirish/trace_engine) into %s: is the "
                          "npm registry reachable? npm said:\n%s" % (VIEWER, (done.stdout + done.stderr)[-2000:]))


def load(json_path):
    """What the viewer built from the file (tests/viewer/load_with_devtools.mjs)."""
    install()
    done = subprocess.run(["node", os.path.join(PACKAGE, "load_with_devtools.mjs"), VIEWER, json_path],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise ViewerError("the viewer's engine failed on %s:\n%s" % (json_path, done.stderr[-3000:]))
    return json.loads(done.stdout)


def records(log):
    """The log's records, by `dmtrace dump`: [(type, {field: value})]."""
    done = subprocess.run([DMTRACE, "dump", log], capture_output=True, text=True)
    if done.returncode != 0:
        raise ViewerError("dmtrace dump %s: %s" % (log, done.stderr))
    out = []
    for line in done.stdout.splitlines():
        words = line.split()
        if words and "=" in line:
            out.append((words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)))
    return out


def label(pid, name):
    """A process's label as dpm writes it: "name M.S.G", or "M.S.G"."""
    text = "%d.%d.%d" % (pid >> 56, (pid >> 20) & 0xfff, pid & 0xfffff)
    return "%s %s" % (name, text) if name else text


def expected(log, shifts=None):
    """What the export of `log` must show: ({label: Counter of slice names},
    {message id: (sender label, receiver label)}). `shifts` {machine: ns},
    the export's clockShiftNs, put each record on the export's axis: a
    process that moved has records on several machines' clocks."""
    shifts = shifts or {}
    streams, names = defaultdict(list), {}
    for kind, f in records(log):
        pid = int(f["pid"], 0)
        streams[pid].append((kind, f))
        if kind == "CREATEPROCESS":
            raw = int(f.get("nameLow", "0"), 0).to_bytes(8, "little") + int(f.get("nameHigh", "0"), 0).to_bytes(8, "little")
            names[pid] = raw.split(b"\0")[0].decode("ascii", "replace")
    slices, sends, receives = {}, {}, {}
    for pid, recs in streams.items():
        counts, calling, call_time, last_end = Counter(), False, 0, None
        for kind, f in sorted(recs, key=lambda r: int(r[1]["sequence"])):
            time = int(f["time"]) + shifts.get(int(f["machine"]), 0)
            if kind == "RECEIVECALL":
                calling, call_time = f.get("empty", "0") == "0", time
            if kind == "RECEIVE" and calling:
                if max(call_time, last_end or 0) < time:
                    counts["waiting"] += 1
                    last_end = time
                calling = False
            if kind in ("SEND", "RECEIVE"):
                counts[kind] += 1
                last_end = max(time, last_end or 0) + 1
            if kind == "SEND" and f.get("status", "0") == "0":
                sends[int(f["messageId"], 0)] = pid
            if kind == "RECEIVE":
                receives[int(f["messageId"], 0)] = pid
        slices[label(pid, names.get(pid, ""))] = counts
    flows = {m: (label(sends[m], names.get(sends[m], "")), label(receives[m], names.get(receives[m], "")))
             for m in sends.keys() & receives.keys()}
    return slices, flows


def file_problems(json_path):
    """What is wrong in the file itself: flows not paired one to one, times not integers."""
    with open(json_path) as f:
        events = json.load(f)["traceEvents"]
    problems = []
    starts = Counter(e["id"] for e in events if e["ph"] == "s")
    finishes = Counter(e["id"] for e in events if e["ph"] == "f")
    dangling = sum((starts - finishes).values()) + sum((finishes - starts).values())
    if dangling or any(n != 1 for n in starts.values()):
        problems.append("%d flow events without their other end (%d starts, %d finishes)" %
                        (dangling, sum(starts.values()), sum(finishes.values())))
    inexact = [e for e in events if any(k in e and not isinstance(e[k], int) for k in ("ts", "dur"))]
    if inexact:
        problems.append("%d events with times that are not integers, e.g. %s" % (len(inexact), inexact[0]))
    return problems


def nesting_problems(slices):
    """Slices [(name, ts, dur, id)] of one thread that start inside another and end after it."""
    stack, bad = [], []
    for s in sorted(slices, key=lambda s: (s[1], -s[2])):
        while stack and stack[-1][1] + stack[-1][2] <= s[1]:
            stack.pop()
        if stack and s[1] + s[2] > stack[-1][1] + stack[-1][2]:
            bad.append((stack[-1], s))
        stack.append(s)
    return bad


def check(log, json_path):
    """What is wrong with json_path as the viewer reads it, against `log`: [] if nothing."""
    problems = file_problems(json_path)
    with open(json_path) as f:
        shifts = {int(name.split()[1]): ns for name, ns in json.load(f)["otherData"]["clockShiftNs"].items()}
    want_slices, want_flows = expected(log, shifts)
    seen = load(json_path)
    threads = defaultdict(list)      # a process that moved has a thread on each machine it was on
    for t in seen["threads"]:
        threads[t["name"]].append(t)
    with_slices = {name for name, counts in want_slices.items() if counts}   # the viewer makes threads of slices
    if set(threads) != with_slices:
        problems.append("threads %s, the trace's processes with slices %s" % (sorted(threads), sorted(with_slices)))
    for name, want in sorted(want_slices.items()):
        for thread in threads.get(name, []):
            if thread["tree"] != len(thread["slices"]):
                problems.append("%s: %d of %d slices left out of the flame chart" %
                                (name, len(thread["slices"]) - thread["tree"], len(thread["slices"])))
            bad = nesting_problems(thread["slices"])
            if bad:
                problems.append("%s: %d slices start inside another and end after it, e.g. %s" %
                                (name, len(bad), bad[0]))
        got = Counter(s[0] for thread in threads.get(name, []) for s in thread["slices"])
        if name in threads and got != want:
            problems.append("%s: slices %s, the trace's %s" % (name, dict(got), dict(want)))
    names = {(t["pid"], t["tid"]): t["name"] for t in seen["threads"]}
    paired = {}
    for flow in seen["flows"]:
        kinds = sorted((e[3], names.get((e[0], e[1])), int(e[4], 0) if e[4] else None) for e in flow)
        if len(flow) != 2 or [k[0] for k in kinds] != ["RECEIVE", "SEND"] or kinds[0][2] != kinds[1][2]:
            problems.append("a flow that is not one message's SEND and RECEIVE: %s" % flow)
            continue
        paired[kinds[0][2]] = (kinds[1][1], kinds[0][1])
    if paired != want_flows:
        wrong = {m for m in paired.keys() & want_flows.keys() if paired[m] != want_flows[m]}
        problems.append("%d flows, of the trace's %d messages sent and received in it: %d missing, %d extra, "
                        "%d between the wrong threads" % (len(paired), len(want_flows), len(want_flows.keys() - paired.keys()),
                                                          len(paired.keys() - want_flows.keys()), len(wrong)))
    return problems
