#!/usr/bin/env python3
"""dpmbench.py -- the host analyzer's speed: `dpm generate --random` writes
a log of a million records of random traffic, then `dpm stats` reads it
three times, and `dpm parallelism` followed by `dpm critpath` (the whole
trace in memory, its history graph, DPM's four steps, the critical path)
run on it three times, and so do `dpm clocks` (the clock offsets, the
backward messages, the vector timestamps' count of ordered pairs),
`dpm waitstates` (every wait split into its causes) and `dpm export
--perfetto`; the best runs give

    BENCH dpm_stats_records_per_s <records per second of host wall-clock time> records/s
    BENCH dpm_parallelism_critpath_1M_s <seconds for both, of host wall-clock time> s
    BENCH dpm_clocks_1M_s <seconds, of host wall-clock time> s
    BENCH dpm_waitstates_1M_s <seconds, of host wall-clock time> s
    BENCH dpm_export_s <seconds of host wall-clock time> s
    BENCH dpm_export_mb <the export's peak resident memory, in 10^6 bytes> MB

(each of clocks and waitstates loads the whole log and builds its history
graph, about 0.3 s of it).

(host time: the analyzer runs on the host, not in a guest). The log is
read from the page cache after the first run, so this measures the
analyzer, not the disk; the export writes its JSON into the page cache
too. The peak resident memory is the export process's own (its rusage,
from os.wait4), the most of its three runs. With another number of
records than a million, the export's names carry it (dpm_export_N_s).

    python3 scripts/dpmbench.py [RECORDS]     on its own (default 1000000)
    python3 scripts/bench.py dpmstats         with the other benchmarks
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPM = os.path.join(ROOT, "build", "tools", "dpm")


def best_of_3(*commands):
    """The shortest host wall-clock time, of three runs, of the commands one after the other."""
    best = None
    for _ in range(3):
        start = time.monotonic()
        for command in commands:
            subprocess.run([DPM, *command], check=True, stdout=subprocess.DEVNULL)
        took = time.monotonic() - start
        best = took if best is None else min(best, took)
    return best


def export_runs(log, out):
    """`dpm export --perfetto out log` three times: the shortest host
    wall-clock time, and the most peak resident memory (bytes) of a run."""
    best, peak = None, 0
    for _ in range(3):
        start = time.monotonic()
        child = subprocess.Popen([DPM, "export", "--perfetto", out, log], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        took = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise subprocess.CalledProcessError(child.returncode, child.args)
        best = took if best is None else min(best, took)
        peak = max(peak, usage.ru_maxrss * 1024)   # Linux counts ru_maxrss in KiB
    return best, peak


def run(records=1000000):
    """The benchmark's output: comment lines and the BENCH lines."""
    workdir = tempfile.mkdtemp(prefix="dm-dpmbench-")
    try:
        log = os.path.join(workdir, "random.log")
        subprocess.run([DPM, "generate", "--random", str(records), "--seed", "1", log], check=True,
                       stdout=subprocess.DEVNULL)
        stats = best_of_3(("stats", log))
        graph = best_of_3(("parallelism", log), ("critpath", log))
        clocks = best_of_3(("clocks", log))
        waits = best_of_3(("waitstates", log))
        size = "1M" if records == 1000000 else str(records)
        json_path = os.path.join(workdir, "random.json")
        export, peak = export_runs(log, json_path)
        export_name = "dpm_export" if records == 1000000 else "dpm_export_%d" % records
        return ("dpm stats of %d records (%.1f MB): best of 3 runs %.3f s\n"
                "BENCH dpm_stats_records_per_s %.0f records/s\n"
                "dpm parallelism then dpm critpath of the same records: best of 3 runs %.3f s\n"
                "BENCH dpm_parallelism_critpath_%s_s %.2f s\n"
                "dpm clocks of the same records: best of 3 runs %.3f s\n"
                "BENCH dpm_clocks_%s_s %.2f s\n"
                "dpm waitstates of the same records: best of 3 runs %.3f s\n"
                "BENCH dpm_waitstates_%s_s %.2f s\n"
                "dpm export --perfetto of the same records (%.1f MB of JSON): best of 3 runs %.3f s, "
                "at most %.1f MB resident\n"
                "BENCH %s_s %.2f s\n"
                "BENCH %s_mb %.1f MB\n"
                % (records, os.path.getsize(log) / 1e6, stats, records / stats, graph, size, graph, clocks, size,
                   clocks, waits, size, waits, os.path.getsize(json_path) / 1e6, export, peak / 1e6,
                   export_name, export, export_name, peak / 1e6))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if not os.path.exists(DPM):
        sys.exit("dpmbench: %s is missing: make build/tools/dpm" % DPM)
    sys.stdout.write(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000000))
