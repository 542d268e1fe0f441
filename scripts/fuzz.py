#!/usr/bin/env python3
"""fuzz.py -- run the fuzzers (tests/fuzz/fuzz_TARGET.c, built by make with
clang's libFuzzer and the sanitizers) for a bounded time each, one after
another, and say what each did:

    python3 scripts/fuzz.py SECONDS [TARGET ...]    TARGETs: rules tracelog fsimage netframe
    python3 scripts/fuzz.py --replay [TARGET ...]   each seed once, no fuzzing

Each target starts from its seed corpus (tests/fuzz/corpus/TARGET), copied
to build/fuzz/work/TARGET so that the repository is not changed; what the
fuzzer adds to it stays there until the next run. Per target it prints the
runs executed, runs per second, the coverage (code edges and features) and
the corpus at the end, and whether it found a crash, a sanitizer report, a
broken invariant or a timeout: that input is saved as
build/fuzz/crashes/TARGET-KIND-HASH and the exit status is 1 (2 for bad
usage or a fuzzer that could not run).

Replay it with `build/fuzz/fuzz_TARGET FILE`; a bug fixed keeps its input in
the corpus as tests/fuzz/corpus/TARGET/regression-NAME.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build", "fuzz")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
CRASHES = os.path.join(BUILD, "crashes")

# The largest input each fuzzer makes (libFuzzer's -max_len): a trace log
# of a few blocks, a few patches, a screenful of rules, a few frames.
MAX_LEN = {"rules": 8192, "tracelog": 32768, "fsimage": 2048, "netframe": 8192}
TARGETS = list(MAX_LEN)
# A single input taking longer than this is reported as a timeout.
INPUT_TIMEOUT_S = 20


def binary(target):
    return os.path.join(BUILD, "fuzz_" + target)


def build(targets):
    """Builds the fuzzers (make knows how); exits 2 if that fails."""
    r = subprocess.run(["make", "-s", "--no-print-directory"] + [os.path.relpath(binary(t), ROOT) for t in targets],
                       cwd=ROOT)
    if r.returncode != 0:
        sys.exit(2)


def last_match(pattern, text):
    found = re.findall(pattern, text, re.M)
    return found[-1] if found else None


def fuzz(target, seconds):
    """Runs one fuzzer for `seconds`; returns (ok, one line saying what it did)."""
    work = os.path.join(BUILD, "work", target)
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(os.path.join(CORPUS, target), work)
    os.makedirs(CRASHES, exist_ok=True)
    args = [binary(target), "-max_total_time=%d" % seconds, "-max_len=%d" % MAX_LEN[target],
            "-timeout=%d" % INPUT_TIMEOUT_S, "-print_final_stats=1", "-print_pcs=0",
            "-artifact_prefix=%s/%s-" % (CRASHES, target), work]
    r = subprocess.run(args, cwd=BUILD, capture_output=True, text=True, timeout=seconds + 300)
    log = r.stderr
    runs = last_match(r"^stat::number_of_executed_units:\s*(\d+)", log) or last_match(r"^Done (\d+) runs", log)
    speed = last_match(r"^stat::average_exec_per_sec:\s*(\d+)", log)
    cov = last_match(r"cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", log)
    artifact = last_match(r"Test unit written to (\S+)", log)
    line = "%-9s %9s runs %6s/s" % (target, runs or "?", speed or "?")
    if cov:
        line += "  cov %s ft %s  corpus %s inputs, %s" % cov
    if r.returncode == 0 and not artifact:
        return True, line + "  no crash"
    why = last_match(r"^(SUMMARY: .*)$", log) or last_match(r"invariant broken: (.*)$", log) or \
        "exit status %d" % r.returncode
    detail = [line + "  FOUND: " + why]
    if artifact:
        detail.append("          input saved as %s (replay: %s %s)" % (
            os.path.relpath(artifact, ROOT), os.path.relpath(binary(target), ROOT), os.path.relpath(artifact, ROOT)))
    report = [l for l in log.splitlines() if "invariant broken" in l or re.match(r"^(==\d+==ERROR|\s+#\d+ )", l)]
    detail += ["          " + l.strip() for l in report[:12]]
    return False, "\n".join(detail)


def replay(target):
    """Runs every seed of the target once; returns (ok, one line)."""
    seeds = sorted(os.path.join(CORPUS, target, f) for f in os.listdir(os.path.join(CORPUS, target)))
    r = subprocess.run([binary(target), "-runs=1", "-timeout=%d" % INPUT_TIMEOUT_S] + seeds,
                       cwd=BUILD, capture_output=True, text=True, timeout=600)
    executed = len(re.findall(r"^Executed ", r.stderr, re.M))
    if r.returncode == 0 and executed == len(seeds):
        return True, "%-9s %d seeds replayed" % (target, len(seeds))
    failing = last_match(r"^Running: (\S+)", r.stderr)
    why = last_match(r"^(SUMMARY: .*)$", r.stderr) or last_match(r"invariant broken: (.*)$", r.stderr) or \
        "exit status %d" % r.returncode
    return False, "%-9s %d of %d seeds replayed; %s: %s" % (target, executed, len(seeds),
                                                          os.path.relpath(failing or "?", ROOT), why)


def main():
    args = sys.argv[1:]
    replaying = args[:1] == ["--replay"]
    if replaying:
        args = args[1:]
    elif not args or not args[0].isdigit() or int(args[0]) < 1:
        print("usage: fuzz.py SECONDS [TARGET ...] | fuzz.py --replay [TARGET ...]; TARGETs: %s" % " ".join(TARGETS),
              file=sys.stderr)
        return 2
    seconds = 0 if replaying else int(args.pop(0))
    targets = args or TARGETS
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        print("fuzz.py: no fuzzer called %s; the fuzzers are %s" % (", ".join(unknown), " ".join(TARGETS)),
              file=sys.stderr)
        return 2
    build(targets)
    all_ok = True
    for target in targets:
        ok, line = replay(target) if replaying else fuzz(target, seconds)
        print(line)
        sys.stdout.flush()
        all_ok = all_ok and ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
