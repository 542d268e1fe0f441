"""The course's labs (docs/labs/) and their grader, scripts/grade.py: the
links lab's starting point, as the repository holds it, gets less than full
marks; a copy of the repository with the reference solution applied
(docs/labs/solutions/links.patch, as docs/labs/README.md says a course
keeps it) builds with `make grade LAB=links` and gets full marks, each test
printed in the grader's manner; the grader refuses a lab it does not know.

A course removes the solutions before handing the repository out
(docs/labs/README.md): without the patch, the suite checks the starting
point alone.

The copy is made with `cp -a` (build/ too, its times kept, so that `make`
there builds only the two programs the patch changes and the system disk),
without .git, in a fresh temporary directory.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import ROOT

PATCH = os.path.join("docs", "labs", "solutions", "links.patch")
TESTS = 7                  # the links lab's tests (labs/links/grade.py)
POINTS = 60
# What a copy needs of build/: the rest is scratch (logs, sockets, fuzzers' work).
BUILD_SKIPPED = ("cluster", "gdb", "fuzz", "experiments", "first", "traces", "prog")
live = []                  # temporary directories


def teardown():
    while live:
        shutil.rmtree(live.pop(), ignore_errors=True)


def user_environment():
    """This environment without what an enclosing make (make test) or a user's
    LAB would pass to the copy's make."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LAB")}


def grade_lines(out):
    """The grader's per-test lines: [(title, verdict, points earned, points)]."""
    lines = []
    for m in re.finditer(r"^== Test (.+?) == (ok|FAIL) \((?:(\d+)/)?(\d+) pts\)$", out, re.M):
        earned = int(m.group(4)) if m.group(2) == "ok" else int(m.group(3))
        lines.append((m.group(1), m.group(2), earned, int(m.group(4))))
    return lines


def copy_of_repository():
    """A copy of the repository's working tree in a temporary directory."""
    tmp = tempfile.mkdtemp(prefix="dm-labs-")
    live.append(tmp)
    tree = os.path.join(tmp, "tree")
    os.mkdir(tree)
    entries = [e for e in os.listdir(ROOT) if e not in (".git", "build")]
    subprocess.run(["cp", "-a", *[os.path.join(ROOT, e) for e in entries], tree], check=True)
    os.mkdir(os.path.join(tree, "build"))
    build = os.path.join(ROOT, "build")
    products = [os.path.join(build, e) for e in os.listdir(build) if e not in BUILD_SKIPPED]
    subprocess.run(["cp", "-a", *products, os.path.join(tree, "build")], check=True)
    return tree


def test_the_starting_point_gets_less_than_full_marks():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "grade.py"), "links"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    lines = grade_lines(out)
    assert len(lines) == TESTS and sum(line[3] for line in lines) == POINTS, out
    score = re.search(r"^Score: (\d+)/%d$" % POINTS, out, re.M)
    assert score and int(score.group(1)) < POINTS and run.returncode == 1, out
    assert "part 1 is not written yet" in out, out


def test_the_solution_gets_full_marks():
    if not os.path.exists(os.path.join(ROOT, PATCH)):
        return                 # a course's copy for its students: no solution to check
    tree = copy_of_repository()
    applied = subprocess.run(["git", "apply", PATCH], cwd=tree, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    with open(os.path.join(tree, "user", "labs", "links", "linkserver.c")) as f:
        assert "TODO" not in f.read()
    run = subprocess.run(["make", "-s", "--no-print-directory", "grade", "LAB=links"], cwd=tree,
                         capture_output=True, text=True, timeout=600, env=user_environment())
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "LD      build/user/labs/links/linkserver.elf" in out, "make grade built nothing:\n" + out[-2000:]
    assert "LD      build/kernel.elf" not in out and "CC      user/lib/crt0.S" not in out, \
        "the copy's build began again from scratch:\n" + out[-2000:]
    lines = grade_lines(out)
    assert [line[1] for line in lines] == ["ok"] * TESTS, out
    assert lines[0][0] == "links: the client finds the server" and lines[0][3] == 10, out
    assert re.search(r"^== Lab links \(docs/labs/links\.md\), 2 nodes ==$", out, re.M), out
    assert re.search(r"^Score: %d/%d$" % (POINTS, POINTS), out, re.M), out


def test_an_unknown_lab_is_refused():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "grade.py"), "nosuch"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "grade: no lab called nosuch (labs: links)" in run.stderr, run
