#!/usr/bin/env python3
"""course.py -- what a course's staff does with the labs (docs/teaching.md).

    python3 scripts/course.py publish DIR
        DIR becomes the students' copy of the repository: the committed tree
        (HEAD) without the labs' reference solutions (docs/labs/solutions/),
        as a new git repository with one commit. DIR must not exist, or be
        an empty directory.

    python3 scripts/course.py grade --lab LAB [--csv FILE] [--jobs N] SUBMISSION...
        grades each SUBMISSION, a directory holding a student's copy, with
        `make grade LAB=LAB` run in it, and prints a line per submission:

            alice    links    50/60   failed: links: get moves them back (MOVEDATA)

        then a summary. --csv also writes the lines as CSV (submission, lab,
        score, possible, status, the titles of the tests failed). A
        submission that does not build, or whose grader ends without a
        score, gets 0 with status `no-score` and the last lines it printed
        in DIR/grade.out, where every submission's whole output is kept.
        --jobs N grades N submissions at a time (each boots its own
        cluster: mind the machine's cores). Each submission without a
        build/newlib gets a copy of this repository's, which takes the
        longest part of a first build and which no student changes.

Exit status: 0 when every submission got full marks, 1 otherwise, 2 when
the request is wrong (an unknown lab, a DIR that is not empty, a
submission that is not a directory).
"""
import argparse
import concurrent.futures
import csv
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = "docs/labs/solutions"
GRADE_TIMEOUT = 1800        # seconds for one submission's build and grading
TEST_LINE = re.compile(r"^== Test (.+?) == (ok|FAIL) \((?:\d+/)?\d+ pts\)$", re.M)
SCORE_LINE = re.compile(r"^Score: (\d+)/(\d+)$", re.M)


class Refused(Exception):
    """The request cannot be carried out: said, with status 2."""


def labs():
    """The labs this repository grades (labs/NAME/grade.py)."""
    where = os.path.join(ROOT, "labs")
    return sorted(d for d in os.listdir(where) if os.path.exists(os.path.join(where, d, "grade.py")))


# ---- publish ----

def publish(target):
    """Write the students' copy into `target`; returns the number of files."""
    if os.path.lexists(target) and (not os.path.isdir(target) or os.listdir(target)):
        raise Refused("course: %s exists and is not an empty directory" % target)
    if subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=ROOT, capture_output=True).returncode:
        raise Refused("course: %s is not a git checkout with a commit: publish copies what is committed" % ROOT)
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                             capture_output=True, text=True).stdout
    if changed:
        print("course: note: uncommitted changes are not published:\n" +
              "".join("  " + line + "\n" for line in changed.splitlines()[:10]), end="")
    os.makedirs(target, exist_ok=True)
    with tempfile.TemporaryFile() as archive:
        subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=ROOT, stdout=archive, check=True)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            members = [m for m in tar.getmembers()
                       if m.name != SOLUTIONS and not m.name.startswith(SOLUTIONS + "/")]
            if hasattr(tarfile, "data_filter"):    # Python 3.11.4 and later
                tar.extractall(target, members=members, filter="data")
            else:
                tar.extractall(target, members=members)
    files = sum(1 for m in members if m.isfile())
    git = ["git", "-c", "user.name=course", "-c", "user.email=course@localhost", "-c", "init.defaultBranch=main"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "The course's starting point"]):
        subprocess.run(git + step, cwd=target, check=True, capture_output=True)
    return files


# ---- grade ----

def prepare(submission):
    """Give a submission this repository's newlib, if it has none built."""
    ours = os.path.join(ROOT, "build", "newlib")
    theirs = os.path.join(submission, "build", "newlib")
    if os.path.isdir(ours) and not os.path.exists(theirs):
        os.makedirs(os.path.dirname(theirs), exist_ok=True)
        shutil.copytree(ours, theirs, symlinks=True)


def environment():
    """This environment without what an enclosing make would pass down."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LAB")}


def grade_one(submission, lab):
    """Grade one submission: a dict of what came of it."""
    name = os.path.basename(os.path.normpath(submission))
    prepare(submission)
    start = time.monotonic()
    try:
        run = subprocess.run(["make", "-s", "--no-print-directory", "grade", "LAB=" + lab], cwd=submission,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                             timeout=GRADE_TIMEOUT, env=environment())
        out = run.stdout
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        out += "\ncourse: grading ran past %d s\n" % GRADE_TIMEOUT
    with open(os.path.join(submission, "grade.out"), "w") as f:
        f.write(out)
    score = SCORE_LINE.search(out)
    failed = [title for title, verdict in TEST_LINE.findall(out) if verdict == "FAIL"]
    return {
        "submission": name, "lab": lab,
        "score": int(score.group(1)) if score else 0,
        "possible": int(score.group(2)) if score else None,
        "status": "graded" if score else "no-score",
        "failed": failed,
        "tail": [] if score else out.rstrip().splitlines()[-5:],
        "seconds": time.monotonic() - start,
    }


def show(result, width):
    possible = result["possible"] if result["possible"] is not None else "?"
    line = "%-*s %-10s %3d/%-4s" % (width, result["submission"], result["lab"], result["score"], possible)
    if result["status"] == "no-score":
        line += "  no score: " + " | ".join(result["tail"][-2:])
    elif result["failed"]:
        line += "  failed: " + "; ".join(result["failed"])
    print(line + "  (%.0f s)" % result["seconds"])
    sys.stdout.flush()


def grade(args):
    if args.lab not in labs():
        raise Refused("course: no lab called %s (labs: %s)" % (args.lab, " ".join(labs())))
    for s in args.submissions:
        if not os.path.isfile(os.path.join(s, "Makefile")):
            raise Refused("course: %s is not a copy of the repository (no Makefile in it)" % s)
    width = max(len(os.path.basename(os.path.normpath(s))) for s in args.submissions)
    print("course: grading %d submission%s of lab %s, %d at a time" % (
        len(args.submissions), "" if len(args.submissions) == 1 else "s", args.lab, args.jobs))
    sys.stdout.flush()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(grade_one, s, args.lab) for s in args.submissions]
        for future in concurrent.futures.as_completed(futures):
            results.append(future.result())
            show(results[-1], width)
    results.sort(key=lambda r: r["submission"])
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["submission", "lab", "score", "possible", "status", "failed"])
            for r in results:
                w.writerow([r["submission"], r["lab"], r["score"], r["possible"] or "", r["status"],
                            "; ".join(r["failed"])])
    full = [r for r in results if r["possible"] is not None and r["score"] == r["possible"]]
    unscored = [r for r in results if r["status"] == "no-score"]
    print("course: %d of %d with full marks%s%s" % (
        len(full), len(results), ", %d without a score (see their grade.out)" % len(unscored) if unscored else "",
        "; written to %s" % args.csv if args.csv else ""))
    return 0 if len(full) == len(results) else 1


def main(argv):
    parser = argparse.ArgumentParser(prog="course.py", description="Publish the labs to students, and grade "
                                     "their submissions (docs/teaching.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("publish", help="write the students' copy: the committed tree without the solutions")
    p.add_argument("dir")
    g = sub.add_parser("grade", help="grade many submissions of one lab")
    g.add_argument("--lab", required=True)
    g.add_argument("--csv", help="also write the results to this CSV file")
    g.add_argument("--jobs", "-j", type=int, default=1, help="submissions graded at a time (default 1)")
    g.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    args = parser.parse_args(argv)
    try:
        if args.command == "publish":
            files = publish(args.dir)
            print("course: %s: the students' copy, %d files, without %s/ (one commit)" % (args.dir, files, SOLUTIONS))
            return 0
        if args.jobs < 1:
            raise Refused("course: --jobs takes a number of at least 1")
        return grade(args)
    except Refused as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
