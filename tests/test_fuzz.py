"""The host fuzzers (tests/fuzz/, clang's libFuzzer with the address and
undefined-behaviour sanitizers; README, "Fuzzing"): every seed of every
corpus replayed through its fuzzer (quick, always the same: the seeds include
the inputs that once found a bug), then a short run of each fuzzer from its
corpus, reported with its runs, speed and coverage. A crash, a sanitizer
report, a broken invariant or a timeout fails the test and leaves the input
in build/fuzz/crashes/. `make fuzz` runs each for 10 minutes."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "scripts", "fuzz.py")
TARGETS = ("rules", "tracelog", "fsimage", "netframe")
SHORT_RUN_S = 12      # per fuzzer: the four stay under a minute


def fuzz(*args):
    """Runs scripts/fuzz.py; (exit status, its lines)."""
    r = subprocess.run([sys.executable, FUZZ, *args], cwd=ROOT, capture_output=True, text=True, timeout=900)
    return r.returncode, (r.stdout + r.stderr).splitlines()


def test_every_seed_replays(report):
    status, lines = fuzz("--replay")
    for target in TARGETS:
        line = next((l for l in lines if l.startswith(target + " ")), "")
        report("fuzz.replay_" + target, " seeds replayed" in line and " of " not in line, line or "\n".join(lines))
    assert status == 0, "\n".join(lines)


def test_each_fuzzer_runs_briefly_without_finding_anything(report):
    status, lines = fuzz(str(SHORT_RUN_S))
    for target in TARGETS:
        line = next((l for l in lines if l.startswith(target + " ")), "")
        report("fuzz.run_" + target + ": " + " ".join(line.split()[1:]), line.endswith("no crash"),
               "\n".join(lines))
    assert status == 0, "\n".join(lines)
