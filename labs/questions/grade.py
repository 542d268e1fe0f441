"""The grader of the questions lab (docs/labs/questions.md), run by
scripts/grade.py (make grade LAB=questions) on a cluster of 3 nodes.

It boots the cluster again with a trace disk on every node (into
build/traces/lab-questions/, where it leaves the logs for the student to
read), and runs census (user/labs/questions/) twice from node 0's shell:
metered into a filter that keeps every record (full.log), and metered into
a filter with the student's rules, /labs/questions/questions.rules on the
system disk (rules.log); each log is taken off the trace disk as soon as its
filter has stopped.

Part 1, the selection, is judged on the rules themselves: `dpm dump --rules`
applies the student's file to full.log on the host (the filter's rule
engine, meter/rules.c, is the analyzer's too), and every record the
analyses read must be kept with the fields they read, and no link record
and no link code may be; rules.log must agree with that, type by type.
Part 2, the answers (user/labs/questions/answers.txt), is judged against
dpm's own answer on rules.log, each question with the command the handout
names: exactly for what the run's history fixes (names, counts, functions,
causes), within a tolerance for figures of time.
"""
import csv
import os
import re
import subprocess
import tempfile

from grade import dpm, require, test
from harness import DMTRACE, ROOT

NODES = 3
ELF_DIR = os.path.join(ROOT, "build")
RULES = os.path.join(ROOT, "user", "labs", "questions", "questions.rules")
RULES_ON_DISK = "/labs/questions/questions.rules"
ANSWERS = os.path.join(ROOT, "user", "labs", "questions", "answers.txt")
TRACES = os.path.join(ROOT, "build", "traces", "lab-questions")
CENSUS_LIMIT = 150         # seconds census may take on a loaded host
OUTSIDE_REQUESTS_SLACK = 2  # outside_requests may differ from the grader's run by this many
CENSUS_DONE = r"^census: 32 districts, \d+ people in \d+ households; the register agrees$"

HEADER = ("machine", "traceType", "time", "procTime", "pc", "pid", "sequence")
# What the analyses read: each record type, with the fields of its body.
NEEDED = {
    "SEND": ("toTask", "messageId", "channel", "size", "call", "status"),
    "MESSAGEQUEUED": ("fromTask", "messageId", "channel", "size"),
    "RECEIVECALL": ("channel", "kind", "empty"),
    "RECEIVE": ("fromTask", "messageId", "channel", "size"),
    "CREATEPROCESS": ("parent", "nameLow", "nameHigh"),
    "DESTROYPROCESS": ("status",),
}
EXCLUDED_TYPES = ("CREATELINK", "DESTROYLINK")
EXCLUDED_FIELDS = {"SEND": ("code",), "MESSAGEQUEUED": ("code",), "RECEIVE": ("code",)}
# Record types whose number does not change from run to run of census.
FIXED_COUNTS = ("SEND", "RECEIVECALL", "RECEIVE", "CREATEPROCESS", "STARTPROCESS", "DESTROYPROCESS",
                "CREATELINK", "DESTROYLINK")


def metered_census(lab, name, rules):
    """Start filter `name` on machine 0 with `rules`, run census metered into
    it, stop the filter and take its log off the trace disk: the log's path."""
    out = lab.command("filter start %s - %s" % (name, rules))
    require("filter %s: logging to trace disk" % name in out,
            "filter start %s - %s printed:\n%s" % (name, rules, out.rstrip()))
    out = lab.command("meter -F %s run census" % name, timeout=CENSUS_LIMIT)
    require(re.search(CENSUS_DONE, out, re.M), "meter -F %s run census printed:\n%s" % (name, out.rstrip()))
    out = lab.command("filter stop %s" % name, timeout=60)
    require("filter %s: stopped" % name in out, "filter stop %s printed:\n%s" % (name, out.rstrip()))
    log = os.path.join(TRACES, name + ".log")
    run = subprocess.run([DMTRACE, "extract", os.path.join(TRACES, "trace0.img"), log], capture_output=True,
                         text=True)
    require(run.returncode == 0, "dmtrace extract failed:\n" + run.stdout + run.stderr)
    return log


# What the tests share across the cluster's boots (lab.state is emptied at
# each): the logs, once made, or why they could not be.
made = {}


def logs(lab):
    """(full.log, rules.log): census's run metered whole, and its run metered
    by the student's rules; made once. When they could not be, the first test
    says why and the others that there is nothing to judge."""
    if "logs" not in made:
        made["logs"] = None
        lab.boot_traced(TRACES)
        full = metered_census(lab, "full", "-")
        made["logs"] = (full, metered_census(lab, "rules", RULES_ON_DISK))
    require(made["logs"] is not None, "no log of census to judge: the first test says why")
    return made["logs"]


def records(log, rules=None):
    """The records of `log` (those `rules` select, with the fields they keep)
    as (type, {field: value}), from dpm dump."""
    out = dpm("dump", *(["--rules", rules] if rules else []), log)
    kept = []
    for line in out.splitlines():
        words = line.split()
        if len(words) > 1 and words[0].isupper() and words[1].startswith("machine="):
            kept.append((words[0], dict(w.split("=", 1) for w in words[1:])))
    return kept


def count(recs, kind):
    return sum(1 for t, _ in recs if t == kind)


def selection(lab):
    """What the student's rules do to census's full trace, and to the run they
    metered: (full, chosen, metered) record lists, made once."""
    if "selection" not in made:
        full, metered = logs(lab)
        made["selection"] = (records(full), records(full, RULES), records(metered))
    return made["selection"]


def missing_needs(lab):
    """Why the log the student's rules select lacks what the analyses read,
    or None."""
    full, chosen, metered = selection(lab)
    for kind, body in NEEDED.items():
        dropped = count(full, kind) - count(chosen, kind)
        if dropped:
            return "your rules leave out %d of the %d %s records of census's trace" % (dropped, count(full, kind), kind)
        for t, fields in chosen:
            lacking = [f for f in HEADER + body if t == kind and f not in fields]
            if lacking:
                return "your rules keep %s records without their %s" % (kind, ", ".join(lacking))
    for kind in FIXED_COUNTS:
        if count(metered, kind) != count(chosen, kind):
            return ("the filter kept %d %s records of census's run, but your rules select %d of census's trace "
                    "(dpm dump --rules)" % (count(metered, kind), kind, count(chosen, kind)))
    return None


@test(10, "questions: the filter takes the rules and census runs metered by them", time_limit=400)
def rules_taken(lab):
    logs(lab)


@test(15, "questions: the log keeps every record the analyses read", time_limit=60)
def keeps_needed(lab):
    why = missing_needs(lab)
    require(why is None, why)


@test(15, "questions: the log keeps no link record and no link code", time_limit=60)
def leaves_out(lab):
    full, chosen, metered = selection(lab)
    for recs, whose in ((chosen, "your rules keep"), (metered, "the filter kept")):
        for kind in EXCLUDED_TYPES:
            require(count(recs, kind) == 0, "%s %d %s records" % (whose, count(recs, kind), kind))
        for kind, fields in EXCLUDED_FIELDS.items():
            kept = [f for t, r in recs if t == kind for f in fields if f in r]
            require(not kept, "%s %d %s records with their %s" % (whose, len(kept), kind, kept and kept[0]))


# ---- part 2: the answers ----

PID = r"\d+\.\d+\.\d+"


def process_name(label):
    """A process as the answers name it: NAME@MACHINE for dpm's `NAME M.S.G`,
    the pid for a process outside the trace (dpm shows it by pid alone)."""
    label = label.strip()
    m = re.match(r"^(\S+)\s+(\d+)\.\d+\.\d+$", label) or re.match(r"^(\S+)@(\d+)$", label)
    return "%s@%s" % (m.group(1), int(m.group(2))) if m else label


def pair_name(text):
    """`FROM -> TO`, each as process_name makes it."""
    parts = text.split("->")
    return " -> ".join(process_name(p) for p in parts) if len(parts) == 2 else text.strip()


def number(text):
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    return float(m.group(0)) if m else None


def answers():
    """The student's answers: {key: value}, `?` left out."""
    given = {}
    with open(ANSWERS) as f:
        for line in f:
            m = re.match(r"^\s*([a-z_]+)\s*:\s*(.*?)\s*$", line)
            if m and m.group(2) not in ("", "?"):
                given[m.group(1)] = m.group(2)
    return given


def table_rows(text, title):
    """The rows of the table that follows the line starting with `title` in
    dpm's output, each split where two or more spaces stand (its heading
    line left out)."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(title)), None)
    require(start is not None, "dpm printed no %r table" % title)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("  "):
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def critpath_processes(text):
    """The traced processes on a critical path, [(label, ns, share)]."""
    rows = []
    for row in table_rows(text, "processes on the path"):
        if re.search(PID + "$", row[0]):
            rows.append((row[0], int(row[1]), float(row[2].rstrip("%"))))
    return rows


def truth(lab):
    """dpm's own answer to each question on rules.log: {key: (kind, value)},
    made once; kind says how an answer is compared (see judge)."""
    if "truth" in made:
        return made["truth"]
    why = missing_needs(lab)
    require(why is None, "the log your rules select cannot answer it: %s" % why)
    log = logs(lab)[1]
    t = {}
    with tempfile.TemporaryDirectory() as csv_dir:
        dpm("stats", "--csv", csv_dir, log)
        with open(os.path.join(csv_dir, "pairs.csv")) as f:
            pairs = list(csv.DictReader(f))
        with open(os.path.join(csv_dir, "summary.csv")) as f:
            summary = {row["name"]: row["value"] for row in csv.DictReader(f)}
    most = max(int(p["messages"]) for p in pairs)
    t["busiest_pair"] = ("one of", {pair_name("%s -> %s" % (p["from_label"], p["to_label"]))
                                    for p in pairs if int(p["messages"]) == most})
    t["busiest_pair_messages"] = ("exactly", most)
    heaviest = max(int(p["bytes"]) for p in pairs)
    t["heaviest_pair"] = ("one of", {pair_name("%s -> %s" % (p["from_label"], p["to_label"]))
                                     for p in pairs if int(p["bytes"]) == heaviest})
    t["remote_messages"] = ("exactly", int(summary["remote_messages"]))

    path = dpm("critpath", "--elf-dir", ELF_DIR, log)
    top = max(critpath_processes(path), key=lambda row: row[1])
    t["critical_process"] = ("one of", {process_name(top[0])})
    functions = table_rows(path, "functions on the path")
    t["critical_function"] = ("one of", {functions[0][0]})
    plain = critpath_processes(dpm("critpath", "--plain", log))
    t["critical_share_plain"] = ("within points", (max(plain, key=lambda row: row[1])[2], 2.0))

    outside = []           # (the process asked, ns, requests) on the path at step 1
    for row in table_rows(dpm("critpath", "--step", "1", log), "processes on the path"):
        if row[0].startswith("in requests to "):
            outside.append((row[0].split()[-1], int(row[1]), int(row[3].split()[0])))
    require(outside, "dpm critpath --step 1 found no request outside the trace on the path")
    # Times of waiting for processes outside the trace follow the host's
    # load (a busy host can make the console's answers as slow as the
    # process manager's), and with them the path: any process whose
    # requests hold at least a quarter of the most is a right answer, and
    # the count may differ from the grader's run by 2.
    most = max(r[1] for r in outside)
    t["outside_process"] = ("one of", {r[0] for r in outside if r[1] * 4 >= most})
    t["outside_requests"] = ("within points", (sum(r[2] for r in outside), OUTSIDE_REQUESTS_SLACK))

    for key, network in (("p_plain", "here"), ("p_vax", "vax")):
        out = dpm("parallelism", "--csv", "--window-of", "census", "--network", network, log)
        last = list(csv.reader(out.strip().split("\n")))[-1]      # step 3, elapsed-time simulation
        t[key] = ("within percent", (float(last[6]), 2.0))       # P on the plain graph

    waits = {}
    for row in table_rows(dpm("waitstates", "--top", "0", log), "the largest causes"):
        if len(row) >= 4 and process_name(row[0]).startswith("census@"):
            waits[(process_name(row[2]), row[1])] = waits.get((process_name(row[2]), row[1]), 0) + int(row[3])
    require(waits, "dpm waitstates found no wait of census")
    on = {}
    for (whom, cause), ns in waits.items():
        on[whom] = on.get(whom, 0) + ns
    t["census_waits_on"] = ("one of", {max(on, key=on.get)})
    ledger = {cause: ns for (whom, cause), ns in waits.items() if whom.startswith("ledger@")}
    require(ledger, "dpm waitstates found no wait of census on ledger")
    t["report_wait_cause"] = ("one of", {max(ledger, key=ledger.get)})
    t["report_wait_ms"] = ("within percent", (sum(ledger.values()) / 1e6, 10.0))
    made["truth"] = t
    return t


# How each question is asked of dpm (the handout's table says the same).
COMMANDS = {
    "busiest_pair": "dpm stats", "busiest_pair_messages": "dpm stats", "heaviest_pair": "dpm stats",
    "remote_messages": "dpm stats",
    "critical_process": "dpm critpath", "critical_function": "dpm critpath --elf-dir build",
    "critical_share_plain": "dpm critpath --plain",
    "outside_process": "dpm critpath --step 1", "outside_requests": "dpm critpath --step 1",
    "p_plain": "dpm parallelism --window-of census", "p_vax": "dpm parallelism --window-of census --network vax",
    "census_waits_on": "dpm waitstates", "report_wait_cause": "dpm waitstates", "report_wait_ms": "dpm waitstates",
}


def judge(lab, key):
    """Fail unless the answer to `key` is dpm's on rules.log."""
    given = answers().get(key)
    require(given is not None, "%s is not answered in user/labs/questions/answers.txt" % key)
    kind, want = truth(lab)[key]
    where = "what %s finds on the grader's log of census (%s)" % (
        COMMANDS[key], os.path.relpath(os.path.join(TRACES, "rules.log"), ROOT))
    if kind == "one of":
        shown = pair_name(given) if "->" in given else process_name(given)
        require(shown in want or given.strip().lower() in {w.lower() for w in want},
                "%s: %r is not %s" % (key, given, where))
        return
    value = number(given)
    require(value is not None, "%s: %r is not a number" % (key, given))
    if kind == "exactly":
        require(value == want, "%s: %r is not %s" % (key, given, where))
    elif kind == "within points":
        require(abs(value - want[0]) <= want[1], "%s: %r is not within %g points of %s" % (key, given, want[1], where))
    else:
        require(abs(value - want[0]) <= want[0] * want[1] / 100,
                "%s: %r is not within %g%% of %s" % (key, given, want[1], where))


@test(5, "questions: the pair with the most messages")
def busiest_pair(lab):
    judge(lab, "busiest_pair")
    judge(lab, "busiest_pair_messages")


@test(5, "questions: the pair with the most bytes")
def heaviest_pair(lab):
    judge(lab, "heaviest_pair")


@test(5, "questions: the messages between machines")
def remote_messages(lab):
    judge(lab, "remote_messages")


@test(5, "questions: the process that holds the critical path")
def critical_process(lab):
    judge(lab, "critical_process")


@test(5, "questions: the function that holds it")
def critical_function(lab):
    judge(lab, "critical_function")


@test(5, "questions: its share of the path on the plain graph")
def critical_share_plain(lab):
    judge(lab, "critical_share_plain")


@test(5, "questions: whom the requests outside the trace go to")
def outside_process(lab):
    judge(lab, "outside_process")


@test(5, "questions: how many lie on the path")
def outside_requests(lab):
    judge(lab, "outside_requests")


@test(5, "questions: P in census's window, on the plain graph")
def p_plain(lab):
    judge(lab, "p_plain")


@test(5, "questions: P on the VAXes' network")
def p_vax(lab):
    judge(lab, "p_vax")


@test(5, "questions: whom census waits on the longest")
def census_waits_on(lab):
    judge(lab, "census_waits_on")


@test(5, "questions: why census waits on ledger, and how long")
def report_wait(lab):
    judge(lab, "report_wait_cause")
    judge(lab, "report_wait_ms")
