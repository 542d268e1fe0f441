"""The thesis's experiments in a small configuration (fixed seeds): DPM's
inferences about the file system checked against the file system's own
counters (scripts/fstruth.py; docs/fs-study.md defines each check), P
predicted for a placement from another placement's trace against P
measured on it (docs/fs-predict.md), and the three experiment commands run
end to end, each writing its report. The full experiments are `make
experiments`."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import dpmread
import fsrun
import fstruth
import traceviewer
from harness import ROOT

workdir = tempfile.mkdtemp(prefix="dm-experiments-")
WORKLOAD = fsrun.Workload(64, 120)
THESIS = {"bm": 0, "dm": 1, "ri": 1}       # di and bm on 0, dm and ri on 1 (thesis §5.3.1)
DM_APART = {"bm": 0, "dm": 2, "ri": 1}     # the same, the directory manager on a machine of its own
runs = {}


def teardown():
    shutil.rmtree(workdir, ignore_errors=True)


def quiet(line):
    pass


def fs_run(name, place):
    """The run of placement `name`, made once."""
    if name not in runs:
        runs[name] = fsrun.run(os.path.join(workdir, name), 2, place, WORKLOAD, quiet)
    return runs[name]


def test_what_the_traces_say_of_the_file_system_is_what_it_counted():
    run = fs_run("thesis", THESIS)
    causality = dpmread.causality([run.log], ["di", "bm", "dm", "ri"])
    checks = fstruth.checks(causality, dpmread.fsstat(run.counts))
    assert len(checks) == 6
    for check in checks:
        assert check.holds(), str(check)
    by_name = {c.name: c for c in checks}
    # Enough happened for the equalities to mean something: the cache missed and hit,
    # the disk was asked for further blocks, users reached the directory manager.
    assert 200 < by_name["ri: bm requests"].counted, str(by_name["ri: bm requests"])
    assert 0 < by_name["bm: after ri, to di"].counted < by_name["bm: after ri, to di"].of_counted
    assert by_name["bm: after di, to di"].counted > fstruth.FURTHER_AT_START
    assert by_name["ri: after users, to dm"].counted >= 4      # each user's create and open, and more


def test_p_predicted_for_a_placement_from_another_ones_trace_is_within_10_percent():
    """As the experiments do, each trace in its workload's window (the users' first request to their last answer)."""
    runs = {name: fs_run(name, place) for name, place in (("thesis", THESIS), ("dm-apart", DM_APART))}
    places = {"thesis": dict(THESIS, di=0), "dm-apart": dict(DM_APART, di=0)}
    for target in runs:
        assert runs[target].window[0] == "--window-of" and len(runs[target].user_pids) == 2, runs[target].window
        measured = dpmread.parallelism([runs[target].log], window=runs[target].window)
        assert measured["1"][2] >= measured["2"][2] > 0, measured     # step 1 is an upper bound
        assert measured["1"][5] >= measured["1"][2], measured         # the plain graph's P is at least graph B's
        for source in runs:
            if source == target:
                continue
            predicted = dpmread.parallelism([runs[source].log], places[target], runs[source].window)["3"][2]
            error = (predicted - measured["3"][2]) / measured["3"][2]
            assert abs(error) <= 0.10, "P for %s: measured %.4f, predicted from %s's trace %.4f (%+.1f%%)" % (
                target, measured["3"][2], source, predicted, 100 * error)


def run_script(name, *args):
    """Run scripts/NAME.py with args; its results.json."""
    out = os.path.join(workdir, name)
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", name + ".py"), "--out", out, *args],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    with open(os.path.join(out, "report.html")) as f:
        page = f.read()
    assert page.count("<svg") >= 1 and "</html>" in page
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f), done.stdout


def test_fs_study_reports_shares_causality_parallelism_and_load():
    results, out = run_script("fs_study", "--max-users", "2", "--main-users", "2", "--ops", "40")
    assert "fs-study: 2 users of fsrand" in out and "truth bm: after ri, to di" in out, out
    main = results["runs"]["2"]
    assert abs(sum(share[0] for share in main["shares"].values()) - 100) < 0.5      # CPU shares of the four
    assert all(c[6] for c in main["checks"]), main["checks"]
    assert main["after"]["bm"]["ri"]["di"] > 0 and main["after"]["di"]["bm"]["bm"] > 0
    for users in ("1", "2"):
        steps = results["runs"][users]["steps"]
        assert steps["1"][2] >= steps["2"][2] > 0
        assert results["runs"][users]["window"][0] == "--window-of", results["runs"][users]["window"]
        # The window leaves the boot out: less of t_max is outside the trace than in the whole trace.
        whole = results["runs"][users]["steps_whole_trace"]["1"]
        assert steps["1"][3] / steps["1"][1] < whole[3] / whole[1], (steps, whole)
    assert sorted(main["networks"]) == ["gbe", "here", "infiniband", "vax"], main["networks"]
    assert results["runs"]["2"]["ri_queue_max"] >= 1


def test_tsp_study_reports_p_for_each_configuration():
    results, out = run_script("tsp_study", "--cities", "8", "--servers", "2", "--versions", "sync,pipe")
    assert [(r["version"], r["cities"], r["servers"]) for r in results["runs"]] == [("sync", 8, 2), ("pipe", 8, 2)]
    for r in results["runs"]:
        assert r["max"] > 0 and r["one"] > 0 and r["two"] > 0, r
        assert r["max"] >= r["step2_1"], r          # delivery times only lengthen the critical path
        assert 0 <= r["outside_1"] < 1 and r["plain_1"] >= r["one"], r
        # The VAX's network is far slower than this system's; InfiniBand faster.
        assert r["networks"]["vax"] < r["networks"]["here"] <= r["networks"]["infiniband"], r["networks"]


def defined_functions(*sources):
    """The names of the functions the C files define (a definition starts a line)."""
    names = set()
    for source in sources:
        with open(os.path.join(ROOT, source)) as f:
            names |= set(re.findall(r"^[a-z][\w \*]*?\b(\w+)\([^;]*$", f.read(), re.M))
    return names


def test_the_critical_path_of_tsp_is_named_by_tsps_own_functions():
    """`dpm critpath --elf-dir build` of the travelling salesman's traces
    (the study's sync and pipe runs above) charges each arc to the function
    that made the kernel call ending it: tsp's and tspserver's own
    functions, never a kernel-call stub (user/lib/kcall.S), and every PC of
    theirs is named (their ELF files are in build/). Then `dpm export` of
    the traces, loaded by a real viewer's parser (scripts/traceviewer.py),
    has an arrow for every message between the controller and its servers,
    on other machines, whose clocks are not the controller's."""
    traces = os.path.join(workdir, "tsp_study", "traces")
    with open(os.path.join(ROOT, "kernel", "demos.h")) as f:
        stubs = set(re.findall(r"^\s+X\(\d+, \w+, (dm_\w+),", f.read(), re.M)) | {"dm_badcall"}
    assert "dm_send" in stubs and "dm_stoptask" in stubs, stubs
    own = {"tsp": defined_functions("user/workloads/tsp.c", "user/workloads/tsp/search.c",
                                    "user/workloads/tsp/heldkarp.c"),
           "tspserver": defined_functions("user/workloads/tspserver.c", "user/workloads/tsp/search.c")}
    assert {"main", "take_answer", "give_piece"} <= own["tsp"] and {"main", "serve"} <= own["tspserver"], own
    for log in ("t0.log", "t2.log"):       # sync and pipe, a server on each machine
        log = os.path.join(traces, log)
        out = dpmread.run_dpm("critpath", "--elf-dir", os.path.join(ROOT, "build"), "--top", "0", log)
        rows = re.findall(r"^  (pc 0x[0-9a-f]+|\S+) +((tsp|tspserver) \d+\.\d+\.\d+) +(\d+) +[\d.]+%$",
                          out.split("functions on the path")[1], re.M)
        assert rows, out
        named = {}
        for function, process, program, held in rows:
            assert not function.startswith("pc 0x"), "%s: %s unnamed on %s\n%s" % (log, function, process, out)
            assert function not in stubs, "%s: %s, a kernel-call stub, on %s\n%s" % (log, function, process, out)
            named.setdefault(program, set()).add(function)
        for program in ("tsp", "tspserver"):
            assert named.get(program, set()) & own[program], (log, program, named, out)
        export = log[:-4] + ".json"
        run = subprocess.run([os.path.join(ROOT, "build", "tools", "dpm"), "export", "--perfetto", export, log],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        problems = traceviewer.check(log, export)
        assert not problems, "%s:\n%s" % (log, "\n".join(problems))
