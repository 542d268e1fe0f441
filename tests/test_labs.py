"""The course's labs (docs/labs/) and their grader, scripts/grade.py: each
lab's starting point, as the repository holds it, gets less than full marks;
a copy of the repository with the lab's reference solution applied
(docs/labs/solutions/LAB.patch, as docs/labs/README.md says a course keeps
it) builds with `make grade LAB=LAB` and gets full marks, each test printed
in the grader's manner; the grader refuses a lab it does not know.

Each lab has a section of two tests below, built on check_starting_point and
check_solution.

A course removes the solutions before handing the repository out
(docs/labs/README.md): without the patch, the suite checks the starting
point alone.

The copy is made with `cp -a` (build/ too, its times kept, so that `make`
there builds only what the patch changes and the system disk),
without .git, in a fresh temporary directory.
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import ROOT

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


def graded(out):
    """The grader's per-test lines and its score line's two numbers."""
    score = re.search(r"^Score: (\d+)/(\d+)$", out, re.M)
    return grade_lines(out), score and (int(score.group(1)), int(score.group(2)))


def check_starting_point(lab, tests, points, says):
    """The lab's starting point, as the repository holds it, gets less than
    full marks from `scripts/grade.py LAB`: `tests` tests worth `points` in
    all, and the grader's output says `says` (what the student reads first)."""
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "grade.py"), lab], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    lines, score = graded(out)
    assert len(lines) == tests and sum(line[3] for line in lines) == points, out
    assert score and score[1] == points and score[0] < points and run.returncode == 1, out
    assert says in out, out
    return out


def check_solution(lab, tests, points, nodes, built, solved):
    """A copy of the repository with docs/labs/solutions/LAB.patch applied gets
    full marks from `make grade LAB=lab`, which builds `built` (a line make
    prints) and not everything again; `solved` is a file the patch completes
    (no TODO left in it). Returns the grader's output, or None in a course's
    copy for its students, which holds no solution."""
    patch = os.path.join("docs", "labs", "solutions", lab + ".patch")
    if not os.path.exists(os.path.join(ROOT, patch)):
        return None
    tree = copy_of_repository()
    applied = subprocess.run(["git", "apply", patch], cwd=tree, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    with open(os.path.join(tree, solved)) as f:
        assert "TODO" not in f.read(), solved
    run = subprocess.run(["make", "-s", "--no-print-directory", "grade", "LAB=" + lab], cwd=tree,
                         capture_output=True, text=True, timeout=900, env=user_environment())
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert built in out, "make grade built nothing:\n" + out[-2000:]
    assert "CC      user/lib/crt0.S" not in out, "the copy's build began again from scratch:\n" + out[-2000:]
    lines, score = graded(out)
    assert [line[1] for line in lines] == ["ok"] * tests, out
    assert re.search(r"^== Lab %s \(docs/labs/%s\.md\), %d nodes? ==$" % (lab, lab, nodes), out, re.M), out
    assert score == (points, points), out
    return out


# The links lab (docs/labs/links.md).

def test_the_starting_point_gets_less_than_full_marks():
    check_starting_point("links", TESTS, POINTS, "part 1 is not written yet")


def test_the_solution_gets_full_marks():
    out = check_solution("links", TESTS, POINTS, 2, "LD      build/user/labs/links/linkserver.elf",
                         os.path.join("user", "labs", "links", "linkserver.c"))
    if out is None:
        return
    assert "LD      build/kernel.elf" not in out, "the copy built the kernel again:\n" + out[-2000:]
    lines, _ = graded(out)
    assert lines[0][0] == "links: the client finds the server" and lines[0][3] == 10, out


# The forwarding lab (docs/labs/forwarding.md): its part is in the lab's own
# kernel, build/labs/forwarding/kernel.elf, which the solution relinks; the
# system's kernel stays as it is.

def test_the_forwarding_starting_point_gets_less_than_full_marks():
    check_starting_point("forwarding", 9, 70, "forward is not written yet (docs/labs/forwarding.md, part 1)")


def test_the_forwarding_solution_gets_full_marks():
    out = check_solution("forwarding", 9, 70, 4, "LD      build/labs/forwarding/kernel.elf",
                         os.path.join("kernel", "labs", "forwarding.c"))
    if out is None:
        return
    assert "CC      kernel/labs/forwarding.c (in kernel/net/remote.c)" in out, out[-2000:]
    assert "LD      build/kernel.elf" not in out, "the lab's solution relinked the system's kernel:\n" + out[-2000:]


def test_an_unknown_lab_is_refused():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "grade.py"), "nosuch"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    labs = sorted(e for e in os.listdir(os.path.join(ROOT, "labs")) if os.path.exists(os.path.join(ROOT, "labs", e, "grade.py")))
    assert "links" in labs and "forwarding" in labs
    assert run.returncode == 2 and "grade: no lab called nosuch (labs: %s)" % " ".join(labs) in run.stderr, run


# The timeout lab (docs/labs/timeout.md): a kernel call, so the copy builds
# the kernel and every program again (kernel/demos.h changes), not newlib.

def test_timeout_starting_point_gets_less_than_full_marks():
    check_starting_point("timeout", 11, 100, "the kernel answers E_NOSYS to call 10")


def test_timeout_solution_gets_full_marks():
    out = check_solution("timeout", 11, 100, 2, "LD      build/kernel.elf",
                         os.path.join("user", "labs", "timeout", "timedrecv.c"))
    if out is not None:
        assert "LD      build/user/labs/timeout/timedrecv.elf" in out, out[-2000:]


# The event lab (docs/labs/event.md): a record type, so the copy builds the
# kernel, the filter, the shell, the host tools and the analyzer again
# (meter/record.h changes), not newlib.

def test_event_starting_point_gets_less_than_full_marks():
    check_starting_point("event", 7, 100, "meter: PREEMPT: no such event")


def test_event_solution_gets_full_marks():
    out = check_solution("event", 7, 100, 1, "HOSTCC  build/tools/dpm", os.path.join("kernel", "proc.c"))
    if out is not None:
        assert "LD      build/kernel.elf" in out, out[-2000:]


# The questions lab (docs/labs/questions.md): 15 tests, 100 points, on 3 nodes.

def test_questions_starting_point_gets_less_than_full_marks():
    check_starting_point("questions", 15, 100, "your rules leave out")


def test_questions_solution_gets_full_marks():
    out = check_solution("questions", 15, 100, 3, "DMFS    build/disk.img",
                         os.path.join("user", "labs", "questions", "answers.txt"))
    if out is None:
        return
    assert "LD      build/kernel.elf" not in out, "the copy built the kernel again:\n" + out[-2000:]
    assert "questions: the log keeps no link record and no link code == ok (15 pts)" in out, out


# The bottleneck lab (docs/labs/bottleneck.md): 3 tests, 50 points, on 4 nodes.

def test_bottleneck_starting_point_gets_less_than_full_marks():
    out = check_starting_point("bottleneck", 3, 50, "P = 0.911 (dpm parallelism --window-of render")
    assert "== Test bottleneck: render draws the picture == ok (10 pts)" in out, out


def test_bottleneck_solution_gets_full_marks():
    out = check_solution("bottleneck", 3, 50, 4, "LD      build/user/labs/bottleneck/render.elf",
                         os.path.join("user", "labs", "bottleneck", "render.c"))
    if out is None:
        return
    assert "LD      build/kernel.elf" not in out, "the copy built the kernel again:\n" + out[-2000:]


# The readahead lab (docs/labs/readahead.md): its starting point is fs/bm.c's
# readahead(), which reads nothing ahead; the system is otherwise whole, so
# the tests of reading right, of the disk after halt and of random reads pass,
# and those of the sequential reader's wait and of the trace fail.

READAHEAD_TESTS, READAHEAD_POINTS = 5, 75


def test_readahead_starting_point_gets_less_than_full_marks():
    out = check_starting_point("readahead", READAHEAD_TESTS, READAHEAD_POINTS,
                               "a sequential reader waits less with read-ahead on == FAIL")
    lines, score = graded(out)
    assert [line[1] for line in lines] == ["ok", "ok", "FAIL", "ok", "FAIL"] and score[0] == 35, out


def test_readahead_solution_gets_full_marks():
    check_solution("readahead", READAHEAD_TESTS, READAHEAD_POINTS, 1, "LD      build/fs/bm.elf",
                   os.path.join("fs", "bm.c"))


# The staff's tools (scripts/course.py, docs/teaching.md).

def test_a_course_publishes_the_labs_without_their_solutions():
    tmp = tempfile.mkdtemp(prefix="dm-course-")
    live.append(tmp)
    target = os.path.join(tmp, "students")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "course.py"), "publish", target],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and re.search(r"^course: %s: the students' copy, \d+ files, without "
                                             r"docs/labs/solutions/ \(one commit\)$" % re.escape(target),
                                             run.stdout, re.M), run
    assert not os.path.exists(os.path.join(target, "docs", "labs", "solutions"))
    for lab in os.listdir(os.path.join(ROOT, "labs")):
        assert os.path.exists(os.path.join(target, "labs", lab, "grade.py")), lab
    assert os.path.exists(os.path.join(target, "Makefile")) and not os.path.exists(os.path.join(target, "build"))
    log = subprocess.run(["git", "log", "--oneline"], cwd=target, capture_output=True, text=True).stdout
    assert log.count("\n") == 1 and "The course's starting point" in log, log
    again = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "course.py"), "publish", target],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "is not an empty directory" in again.stderr, again


def test_a_course_grades_many_submissions():
    """Two submissions of the links lab, the starting point and the solution:
    a line and a CSV row each, with the score and the tests failed."""
    submissions = [copy_of_repository()]
    patch = os.path.join(ROOT, "docs", "labs", "solutions", "links.patch")
    if os.path.exists(patch):
        submissions.append(copy_of_repository())
        subprocess.run(["git", "apply", patch], cwd=submissions[1], check=True)
    names = []
    for i, tree in enumerate(submissions):       # named as a course names them: by student
        names.append(("alice", "bob")[i])
        os.rename(tree, os.path.join(os.path.dirname(tree), names[-1]))
        submissions[i] = os.path.join(os.path.dirname(tree), names[-1])
    table = os.path.join(os.path.dirname(submissions[0]), "grades.csv")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "course.py"), "grade", "--lab", "links",
                          "--csv", table, *submissions], capture_output=True, text=True, timeout=1200,
                         env=user_environment())
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert re.search(r"^alice +links +\d+/60 +failed: links: the client finds the server; ", out, re.M), out
    with open(table) as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert rows["alice"]["status"] == "graded" and int(rows["alice"]["score"]) < POINTS, rows
    assert "links: the client finds the server" in rows["alice"]["failed"], rows
    with open(os.path.join(submissions[0], "grade.out")) as f:
        assert "Score: " in f.read()
    if len(submissions) > 1:
        assert re.search(r"^bob +links +60/60 ", out, re.M), out
        assert (rows["bob"]["score"], rows["bob"]["possible"], rows["bob"]["failed"]) == ("60", "60", ""), rows
        assert "course: 1 of 2 with full marks" in out, out
